//! Untrusted text through the review outputs (issue 23, the bar): a transcript whose edited
//! path, file content and shell command carry ESC sequences, a BEL, a C1 CSI and a bidi
//! override. `rawpv patch` piped keeps the content bytes exact (git must see them) but quotes
//! the path as git does and keeps every `#` header line free of controls; `rawpv audit`,
//! `rawpv stats` and the files and audit panels show no control character at all; a malformed
//! structured patch or a missing `originalFile` never panics and is said.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use assert_cmd::Command;
use rawpv::action::Action;
use rawpv::app::App;
use serde_json::json;

use crate::support::headless::{act, draw, screen_text};

const EVIL: &str = "src/e\u{1b}]52;c;SGVsbG8=\u{7}v\u{202e}il.rs";

fn transcript() -> tempfile::NamedTempFile {
    use std::io::Write;
    let cwd = "/w/p";
    let mut recs = Vec::new();
    let mut n = 0;
    let mut rec = |kind: &str, message: serde_json::Value, tur: Option<serde_json::Value>| {
        n += 1;
        let mut r = json!({"parentUuid": null, "cwd": cwd, "sessionId": "s-1", "version": "2.1.39",
            "type": kind, "uuid": format!("u{n}"), "timestamp": format!("2026-01-01T00:00:{n:02}.000Z"),
            "message": message});
        if n > 1 {
            r["parentUuid"] = json!(format!("u{}", n - 1));
        }
        if let Some(t) = tur {
            r["toolUseResult"] = t;
        }
        recs.push(r);
    };
    let mut call = |id: &str, name: &str, input: serde_json::Value, tur: serde_json::Value| {
        rec(
            "assistant",
            json!({"role": "assistant", "id": format!("m{id}"),
            "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]}),
            None,
        );
        rec(
            "user",
            json!({"role": "user", "content": [{"type": "tool_result",
            "tool_use_id": id, "content": "ok"}]}),
            Some(tur),
        );
    };
    let path = format!("{cwd}/{EVIL}");
    let before = "a\n\u{1b}[2Jb\n";
    call(
        "t1",
        "Edit",
        json!({"file_path": path}),
        json!({"filePath": path,
        "originalFile": before, "oldString": "a", "newString": "A\u{9b}31m",
        "structuredPatch": [{"oldStart": 1, "oldLines": 2, "newStart": 1, "newLines": 2,
            "lines": ["-a", "+A\u{9b}31m", " \u{1b}[2Jb"]}]}),
    );
    call(
        "t2",
        "Bash",
        json!({"command": "echo \u{1b}[31mred > \u{1b}]0;title\u{7}.txt"}),
        json!({"stdout": "", "stderr": ""}),
    );
    // A structured patch that does not apply and no old/new strings: no after, said.
    call(
        "t3",
        "Edit",
        json!({"file_path": format!("{cwd}/b.rs")}),
        json!({"filePath": format!("{cwd}/b.rs"),
        "originalFile": "x\n", "structuredPatch": [{"oldStart": 9, "oldLines": 1, "lines": ["-nope"]}]}),
    );
    // An Edit without originalFile (an old version): the start is unknown, said.
    call(
        "t4",
        "Edit",
        json!({"file_path": format!("{cwd}/c.rs"), "old_string": "p", "new_string": "q"}),
        json!({"filePath": format!("{cwd}/c.rs"), "oldString": "p", "newString": "q"}),
    );
    let mut f = tempfile::NamedTempFile::new().unwrap();
    for r in &recs {
        writeln!(f, "{r}").unwrap();
    }
    f.flush().unwrap();
    f
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::cargo_bin("rawpv")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn controls(s: &str) -> Vec<char> {
    s.chars()
        .filter(|c| (c.is_control() && *c != '\n') || rawpv::render::ansi::is_invisible_format(*c))
        .collect()
}

#[test]
fn hostile_paths_commands_and_contents() {
    let f = transcript();
    let p = f.path().to_str().unwrap();
    let (code, patch, err) = run(&["patch", p]);
    assert_eq!(code, Some(0), "{err}");
    for l in patch.lines().filter(|l| {
        l.starts_with('#') || l.starts_with("diff ") || l.starts_with("---") || l.starts_with("+++")
    }) {
        // Headers: no raw control (the path is C-quoted: `\033`, `\a`-free octal; the bidi
        // override is not a control but is kept inside the quotes only).
        assert!(!l.contains('\u{1b}') && !l.contains('\u{7}'), "{l:?}");
    }
    assert!(
        patch.contains("diff --git \"a/src/e\\033]52;c;SGVsbG8=\\007v\u{202e}il.rs\""),
        "{patch}"
    );
    // The content is exact: git needs the bytes.
    assert!(patch.contains("\n+A\u{9b}31m\n \u{1b}[2Jb\n"), "{patch}");
    // The two files whose net change is not in the record are named, and why.
    assert!(
        patch.contains("#   b.rs: the file after this Edit is not in the record"),
        "{patch}"
    );
    assert!(
        patch.contains("#   c.rs: the file before this Edit is not in the record"),
        "{patch}"
    );
    let (code, audit, _) = run(&["audit", p]);
    assert_eq!(code, Some(0));
    assert_eq!(controls(&audit), Vec::<char>::new(), "{audit}");
    let (code, stats, _) = run(&["stats", p]);
    assert_eq!(code, Some(0));
    assert_eq!(controls(&stats), Vec::<char>::new(), "{stats}");
    let loaded = rawpv::import::load_path(f.path()).unwrap();
    for tab in [Action::ShowFiles, Action::ShowAudit] {
        let mut app = App::headless(loaded.items.clone(), "hostile");
        draw(&mut app, 160, 45);
        act(&mut app, &[tab]);
        let screen = screen_text(&draw(&mut app, 160, 45));
        assert_eq!(controls(&screen), Vec::<char>::new(), "{screen}");
    }
}

/// fuzz/review's first crash (2026-12-02): a structured-patch line starting with a multi-byte
/// character was sliced at byte 1. Every command on it ends without a panic (its mutated lines
/// also leave an Edit without a result, so the patch names the file and exits 1).
#[test]
fn a_hunk_line_with_a_multibyte_tag_is_no_hunk_line() {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/review/fuzz_crash_multibyte_hunk.jsonl"
    );
    for cmd in ["patch", "audit", "stats"] {
        let (code, _, err) = run(&[cmd, p]);
        assert!(matches!(code, Some(0 | 1)), "{cmd}: {code:?} {err}");
    }
    let (_, _, err) = run(&["patch", p]);
    assert!(
        err.contains("src/lib.rs: the Edit at line 4 has no result"),
        "{err}"
    );
}

/// A minimal Claude Code transcript of the given `(tool_use, toolUseResult)` pairs (`None`: the
/// call has no result line), in cwd `/w/p`.
fn cc(calls: &[(serde_json::Value, Option<serde_json::Value>)]) -> tempfile::NamedTempFile {
    use std::io::Write;
    let mut f = tempfile::NamedTempFile::new().unwrap();
    let mut n = 0;
    let mut line = |kind: &str, message: serde_json::Value, tur: Option<&serde_json::Value>| {
        n += 1;
        let mut r = json!({"parentUuid": if n > 1 { json!(format!("u{}", n - 1)) } else { json!(null) },
            "cwd": "/w/p", "sessionId": "s-2", "version": "2.1.39", "type": kind,
            "uuid": format!("u{n}"), "timestamp": format!("2026-01-01T00:01:{n:02}.000Z"), "message": message});
        if let Some(t) = tur {
            r["toolUseResult"] = t.clone();
        }
        writeln!(f, "{r}").unwrap();
    };
    for (k, (use_, tur)) in calls.iter().enumerate() {
        let id = format!("t{k}");
        let mut b = use_.clone();
        b["type"] = json!("tool_use");
        b["id"] = json!(id);
        line(
            "assistant",
            json!({"role": "assistant", "id": format!("m{k}"), "content": [b]}),
            None,
        );
        if let Some(t) = tur {
            line(
                "user",
                json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "ok"}]}),
                Some(t),
            );
        }
    }
    f.flush().unwrap();
    f
}

/// attack 8 #12: an Edit whose result is not in the record (cut off, malformed) may have changed
/// the file; the patch must not present the earlier edits as the whole change.
#[test]
fn an_edit_without_a_result_makes_its_file_unknown() {
    let edit = |old: &str, new: &str| {
        json!({"name": "Edit", "input": {"file_path": "/w/p/m.txt",
        "old_string": old, "new_string": new}})
    };
    let f = cc(&[
        (
            edit("1", "one"),
            Some(json!({"filePath": "/w/p/m.txt", "originalFile": "1\n2\n",
            "oldString": "1", "newString": "one"})),
        ),
        (edit("2", "two"), None),
    ]);
    let (code, out, err) = run(&["patch", f.path().to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (Some(1), ""));
    assert!(
        err.contains("m.txt: the Edit at line 3 has no result in the record"),
        "{err}"
    );
}

/// attack 8 #13: a copy is cleaned of controls, so a patch holding a CR or an ESC is not put on
/// the clipboard changed; the message points at the key that writes it exactly.
#[test]
fn a_patch_with_control_characters_is_not_copied_changed() {
    use crossterm::event::KeyCode;
    let f = cc(&[(
        json!({"name": "Write", "input": {"file_path": "/w/p/c.txt", "content": "a\r\nb\r\n"}}),
        Some(json!({"type": "create", "filePath": "/w/p/c.txt", "content": "a\r\nb\r\n"})),
    )]);
    let loaded = rawpv::import::load_path(f.path()).unwrap();
    let mut app = App::headless(loaded.items, "crlf");
    draw(&mut app, 160, 45);
    act(&mut app, &[Action::ShowFiles]);
    draw(&mut app, 160, 45);
    app.press(KeyCode::Char('Y'));
    assert_eq!(app.take_clipboard_out(), None);
    assert_eq!(
        app.view().message.as_deref(),
        Some(
            "this patch holds control characters (CR, ESC…) a copy would drop: W writes it exactly to a file"
        )
    );
}

/// attack 8 #18: the agent `cd`s and the records carry the new cwd; the files did not move, so
/// paths stay relative to the first working directory and the header says it changed.
#[test]
fn a_changed_working_directory_keeps_the_first_as_the_base() {
    use std::io::Write;
    let f = cc(&[(
        json!({"name": "Write", "input": {"file_path": "/w/p/a.txt", "content": "a\n"}}),
        Some(json!({"type": "create", "filePath": "/w/p/a.txt", "content": "a\n"})),
    )]);
    // One more record in another directory.
    let mut text = std::fs::read_to_string(f.path()).unwrap();
    let more = json!({"parentUuid": "u2", "cwd": "/w/p/web", "sessionId": "s-2", "version": "2.1.39",
        "type": "user", "uuid": "u3", "timestamp": "2026-01-01T00:02:00.000Z",
        "message": {"role": "user", "content": "next"}});
    text.push_str(&more.to_string());
    text.push('\n');
    let mut g = tempfile::NamedTempFile::new().unwrap();
    g.write_all(text.as_bytes()).unwrap();
    let (code, out, err) = run(&["patch", g.path().to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("# the working directory changed during the session: paths are relative to the first one"), "{out}");
    assert!(
        out.contains("diff --git a/a.txt b/a.txt\nnew file mode 100644\n"),
        "{out}"
    );
}

fn review_fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/review/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// attack 8 #26: a Codex `apply_patch` runs in its `workdir`, so its relative paths are relative
/// to it: inside the cwd a deeper patch path, outside it an outside write (audit) that no patch
/// can hold. #25: in an input of two sessions, each call's relative paths are its session's.
#[test]
fn codex_workdirs_and_other_sessions_resolve_their_own_paths() {
    let (code, out, _) = run(&["patch", &review_fixture("codex_workdir.jsonl")]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("diff --git a/web/sub.txt b/web/sub.txt\n"),
        "{out}"
    );
    let p = review_fixture("codex_workdir_outside.jsonl");
    let (code, out, err) = run(&["patch", &p]);
    assert_eq!((code, out.as_str()), (Some(1), ""));
    assert!(
        err.contains("/etc/cron.d/evil: outside the working directory /proj"),
        "{err}"
    );
    let (_, audit, _) = run(&["audit", &p]);
    assert!(
        audit.starts_with(
            "L2      16:40:00 outside            apply_patch  ok        /etc/cron.d/evil\n"
        ),
        "{audit}"
    );
    let (code, out, _) = run(&["patch", &review_fixture("codex_two_sessions.jsonl")]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("#   /other/b.txt: outside the working directory /proj\n"),
        "{out}"
    );
    assert!(!out.contains("diff --git a/b.txt"), "{out}");
}

/// attack 8 #33: an Edit of an empty old string on an empty file that a Read saw is an edit of
/// that (existing) file, not a creation; #34: a session whose only changes were made through the
/// shell says which command may have made them.
#[test]
fn empty_file_edits_and_shell_only_changes() {
    let f = cc(&[
        (
            json!({"name": "Read", "input": {"file_path": "/w/p/e.txt"}}),
            Some(json!({"type": "text", "file": {"filePath": "/w/p/e.txt", "content": ""}})),
        ),
        (
            json!({"name": "Edit", "input": {"file_path": "/w/p/e.txt", "old_string": "", "new_string": "hello\n"}}),
            Some(
                json!({"filePath": "/w/p/e.txt", "originalFile": "", "oldString": "", "newString": "hello\n"}),
            ),
        ),
    ]);
    let (code, out, _) = run(&["patch", f.path().to_str().unwrap()]);
    assert_eq!(code, Some(0));
    assert!(
        out.ends_with(
            "diff --git a/e.txt b/e.txt\n--- a/e.txt\n+++ b/e.txt\n@@ -0,0 +1 @@\n+hello\n"
        ),
        "{out}"
    );
    let g = cc(&[(
        json!({"name": "Bash", "input": {"command": "sed -i s/a/b/ x.toml"}}),
        Some(json!({"stdout": "", "stderr": ""})),
    )]);
    let (code, _, err) = run(&["patch", g.path().to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(
        err.ends_with("no recorded edit changed a file, but 1 command may have (not recordable as a patch), the first: line 1 Bash: sed -i s/a/b/ x.toml\n"),
        "{err}"
    );
}

/// attack 8 #28: a whole-file Read is what the first edit must find; a `sed -i` between them is
/// an outside change like one between two edits, and the patch says where it starts.
#[test]
fn a_change_between_a_whole_read_and_the_first_edit_is_marked() {
    let f = cc(&[
        (
            json!({"name": "Read", "input": {"file_path": "/w/p/a.txt"}}),
            Some(
                json!({"type": "text", "file": {"filePath": "/w/p/a.txt", "content": "x = 1\n",
                "startLine": 1, "numLines": 1, "totalLines": 1}}),
            ),
        ),
        (
            json!({"name": "Bash", "input": {"command": "sed -i s/1/100/ a.txt"}}),
            Some(json!({"stdout": "", "stderr": ""})),
        ),
        (
            json!({"name": "Edit", "input": {"file_path": "/w/p/a.txt", "old_string": "100", "new_string": "2"}}),
            Some(
                json!({"filePath": "/w/p/a.txt", "originalFile": "x = 100\n", "oldString": "100", "newString": "2"}),
            ),
        ),
    ]);
    let (code, out, _) = run(&["patch", f.path().to_str().unwrap()]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains(
            "#   a.txt: after line 1, before line 5; ran between: Bash: sed -i s/1/100/ a.txt\n"
        ),
        "{out}"
    );
}
