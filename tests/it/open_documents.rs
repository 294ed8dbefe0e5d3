//! Issue 22 item 10: files that are not agent sessions. A unified diff (a corpus `.diff`, `git
//! show` of a real commit made here) opens as one `diff` row per file with the Edit renderer in
//! the detail, `n` steps between files, and `rawpv print` prints the diff; a terminal capture
//! opens as text; a binary or plain-text file is refused with what it looks like (exit 2).

use std::path::Path;
use std::process::Command as Proc;

use assert_cmd::Command;
use rawpv::action::Action;
use rawpv::app::App;
use rawpv::import::{self, Format};
use rawpv::session::Item;

use crate::support::corpus;
use crate::support::headless::{act, draw, screen_text, status_rows};

#[allow(clippy::unwrap_used)]
fn rawpv() -> Command {
    Command::cargo_bin("rawpv").unwrap()
}

/// A temp git repository with two commits; returns the `git show` output of the second.
#[allow(clippy::unwrap_used, clippy::expect_used)]
fn git_show(dir: &Path) -> Vec<u8> {
    let git = |args: &[&str]| {
        let out = Proc::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        out.stdout
    };
    git(&["init", "-q"]);
    git(&["config", "user.email", "a@example.com"]);
    git(&["config", "user.name", "A"]);
    std::fs::write(
        dir.join("main.rs"),
        "fn main() {\n    println!(\"hello\");\n}\n",
    )
    .unwrap();
    git(&["add", "."]);
    git(&["commit", "-qm", "first"]);
    std::fs::write(
        dir.join("main.rs"),
        "fn main() {\n    println!(\"hello, world\");\n    let x = 1;\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("notes.txt"), "new\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "-qm", "second change"]);
    git(&["show", "--no-color"])
}

#[test]
fn git_show_of_a_real_commit_opens_in_the_diff_view() {
    let tmp = tempfile::tempdir().unwrap();
    let show = git_show(tmp.path());
    let path = tmp.path().join("show.diff");
    std::fs::write(&path, &show).unwrap();
    let loaded = import::load_path(&path).unwrap();
    assert_eq!(loaded.format, Format::UnifiedDiff);
    let mut app = App::headless(loaded.items, "show.diff");
    // Rows: the commit header, the derived catalog, one row per file.
    let rows: Vec<String> = app
        .session()
        .invocations
        .iter()
        .map(|i| format!("{} {}", i.tool_name, i.summary))
        .collect();
    assert_eq!(rows, ["diff M main.rs", "diff A notes.txt"]);
    assert!(
        matches!(app.session().items[0], Item::Event(ref f) if f.frame_type.as_str() == "x-diff.header")
    );
    assert!(
        app.session().findings.is_empty(),
        "{:?}",
        app.session().findings
    );
    let term = draw(&mut app, 120, 35);
    let screen = screen_text(&term);
    // The first file is selected and drawn by the diff renderer: file header, hunk, gutter.
    assert!(screen.contains("▌main.rs  +2 -1"), "{screen}");
    assert!(screen.contains("@@ -1,3 +1,4 @@"), "{screen}");
    assert!(
        screen.contains("2   │-    println!(\"hello\");"),
        "{screen}"
    );
    assert!(
        screen.contains("  2 │+    println!(\"hello, world\");"),
        "{screen}"
    );
    // `n` goes to the next file, and says when there is none.
    act(&mut app, &[Action::SearchNext]);
    let term = draw(&mut app, 120, 35);
    assert!(screen_text(&term).contains("▌notes.txt  +1 -0  (new file)"));
    act(&mut app, &[Action::SearchNext]);
    let term = draw(&mut app, 120, 35);
    assert!(status_rows(&term).contains("no more files: this is the last file"));
    act(&mut app, &[Action::SearchPrev]);
    let term = draw(&mut app, 120, 35);
    assert!(screen_text(&term).contains("▌main.rs  +2 -1"));
    // Side by side with the same renderer.
    act(&mut app, &[Action::ToggleSideBySide]);
    let term = draw(&mut app, 200, 40);
    let screen = screen_text(&term);
    assert!(
        screen.contains("│-    println!(\"hello\");")
            && screen.contains("│+    println!(\"hello, world\");"),
        "{screen}"
    );

    // `rawpv print` prints the diff (the commit header, then each file as the detail draws it),
    // and `git show | rawpv print -` the same.
    let out = rawpv()
        .args(["print", "--width", "100"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("commit "), "{text}");
    assert!(text.contains("    second change\n"), "{text}");
    assert!(text.contains("▌main.rs  +2 -1\n@@ -1,3 +1,4 @@\n1 1 │ fn main() {\n2   │-    println!(\"hello\");\n  2 │+    println!(\"hello, world\");\n  3 │+    let x = 1;\n3 4 │ }\n"), "{text}");
    assert!(text.contains("▌notes.txt  +1 -0  (new file)"), "{text}");
    let piped = rawpv()
        .args(["print", "--width", "100", "-"])
        .write_stdin(show)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(piped.stdout).unwrap(), text);
}

#[test]
fn print_of_a_corpus_diff_prints_every_file() {
    let Some(dir) = corpus::dir("diffs") else {
        return;
    };
    let path = dir.join("unidiff-sample4-crlf-no-newline.diff");
    let out = rawpv()
        .args(["print", "--width", "80", "--color", "never"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    for want in [
        "▌added_file  +4 -0  (new file)",
        "  2 │+holá mundo!",
        "▌modified_file  +3 -1",
        "3   │-This should be updated.",
        "▌removed_file  +0 -3  (deleted)",
    ] {
        assert!(text.contains(want), "{want:?} missing from\n{text}");
    }
    // Every corpus diff opens as a patch, one row per file, and nothing is a finding.
    for f in corpus::files("diffs").unwrap() {
        let loaded = import::load_path(&f).unwrap();
        assert_eq!(loaded.format, Format::UnifiedDiff, "{f:?}");
        let app = App::headless(loaded.items, "x.diff");
        assert!(!app.session().invocations.is_empty(), "{f:?}");
        assert!(
            app.session().findings.is_empty(),
            "{f:?}: {:?}",
            app.session().findings
        );
    }
}

#[test]
fn a_terminal_capture_opens_as_text_through_the_emulator() {
    let Some(dir) = corpus::dir("terminal") else {
        return;
    };
    let loaded = import::load_path(&dir.join("bk-curl-progress.raw")).unwrap();
    assert_eq!(loaded.format, Format::TerminalCapture);
    let mut app = App::headless(loaded.items, "curl.raw");
    let term = draw(&mut app, 120, 35);
    let screen = screen_text(&term);
    assert!(screen.contains("terminal capture, 4 lines"), "{screen}");
    // The progress redraws (bare CRs) end in their final state; no escape reaches the screen.
    assert!(screen.contains("curl -o /tmp/file.txt"), "{screen}");
    assert!(!screen.contains('\u{1b}'));
    let out = rawpv()
        .args(["print", "--color", "never"])
        .arg(dir.join("bk-rustfmt.raw"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("Diff in /home/user/Code/arret/compiler/hir/loader.rs at line 1:\n- use std::collections::HashMap;\n"), "{text}");
}

#[test]
fn a_file_that_is_not_a_session_is_refused_with_what_it_looks_like() {
    let tmp = tempfile::tempdir().unwrap();
    let png = tmp.path().join("shot.png");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01").unwrap();
    let gz = tmp.path().join("s.jsonl.gz");
    std::fs::write(&gz, b"\x1f\x8b\x08\0\0\0\0\0\0\x03\xcb\x48").unwrap();
    let txt = tmp.path().join("notes.txt");
    std::fs::write(&txt, "hello\nworld\n").unwrap();
    for (file, says) in [
        (&png, "is not a session: it looks like a PNG image."),
        (
            &gz,
            "is not a session: it looks like gzip-compressed data. rawpv reads agent sessions (RAWP, Claude Code, Codex CLI, Gemini CLI, Anthropic API JSON), unified diffs and terminal captures; decompress it first: gzip -dc ",
        ),
        (
            &txt,
            "is not a session: it looks like plain text (2 lines, none a JSON record).",
        ),
    ] {
        for cmd in ["print", "check", "stats", "convert"] {
            let out = rawpv().arg(cmd).arg(file).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{cmd} {file:?}");
            assert!(out.stdout.is_empty(), "{cmd} {file:?}");
            let err = String::from_utf8(out.stderr).unwrap();
            assert!(err.starts_with("rawpv: "), "{err}");
            assert!(err.contains(says), "{cmd} {file:?}: {err}");
        }
    }
    // The viewer refuses it the same way before taking the screen.
    let out = rawpv().arg(&png).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("it looks like a PNG image")
    );
    // From stdin: print says the input is not a session and exits 2.
    let out = rawpv()
        .args(["print", "-"])
        .write_stdin(std::fs::read(&png).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("the input is not a session")
    );
}

/// Runs `git ARGS` in `dir` (a throwaway HOME, no system config); its stdout.
#[allow(clippy::unwrap_used, clippy::expect_used)]
fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Proc::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    out.stdout
}

/// The rows (`tool summary`) a loaded input gives, and its findings.
fn rows_of(loaded: import::Loaded) -> (Vec<String>, usize) {
    let app = App::headless(loaded.items, "x");
    let rows = (app.session().invocations.iter())
        .map(|i| format!("{} {}", i.tool_name, i.summary))
        .collect();
    (rows, app.session().findings.len())
}

/// Attack 7 #16: binary data one of whose lines starts with `{` is binary data all the same.
#[test]
fn binary_data_with_a_line_like_json_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("blob.dat");
    let mut bytes = b"\x00\x01\x02\xfe\xff garbage\n{\"type\":\"x.y\"}\n".to_vec();
    bytes.extend((0..200u8).map(|b| b.wrapping_mul(37)));
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(import::detect_path(&path), Some(Format::NotSession));
    let out = rawpv().arg("print").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("blob.dat is not a session: it looks like binary data."),
        "{err}"
    );
    let out = rawpv().arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Attack 7 #2: `git show` of a merge commit whose conflict was resolved by hand prints a
/// combined diff (`diff --cc`, `@@@` hunks): a diff, one row for the file, not plain text.
#[test]
fn a_merge_commits_combined_diff_opens_as_a_diff() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    git(d, &["init", "-q", "-b", "main"]);
    git(d, &["config", "user.email", "a@example.com"]);
    git(d, &["config", "user.name", "A"]);
    std::fs::write(d.join("f.txt"), "a\nb\nc\n").unwrap();
    git(d, &["add", "."]);
    git(d, &["commit", "-qm", "base"]);
    git(d, &["checkout", "-qb", "side"]);
    std::fs::write(d.join("f.txt"), "a\nside\nc\n").unwrap();
    git(d, &["commit", "-qam", "side"]);
    git(d, &["checkout", "-q", "main"]);
    std::fs::write(d.join("f.txt"), "a\nmain\nc\n").unwrap();
    git(d, &["commit", "-qam", "main"]);
    let _ = Proc::new("git")
        .args(["merge", "-q", "side"])
        .current_dir(d)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", d)
        .output();
    std::fs::write(d.join("f.txt"), "a\nboth\nc\n").unwrap();
    git(d, &["commit", "-qam", "merge"]);
    let show = git(d, &["show", "--no-color"]);
    let text = String::from_utf8_lossy(&show);
    assert!(
        text.contains("diff --cc f.txt") && text.contains("@@@ "),
        "{text}"
    );
    let path = d.join("merge.diff");
    std::fs::write(&path, &show).unwrap();
    let loaded = import::load_path(&path).unwrap();
    assert_eq!(loaded.format, Format::UnifiedDiff);
    assert_eq!(rows_of(loaded), (vec!["diff M f.txt".to_owned()], 0));
    let out = rawpv()
        .args(["print", "--color", "never"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let printed = String::from_utf8(out.stdout).unwrap();
    for want in ["    merge\n", "f.txt", "- main", "++both"] {
        assert!(printed.contains(want), "{want:?} missing from\n{printed}");
    }
}

/// Attack 7 #3: `git diff --color` is a diff with colours, not a terminal capture: its files
/// are rows, and no escape sequence is left in what the detail draws.
#[test]
fn a_coloured_git_diff_opens_as_a_diff() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    git(d, &["init", "-q"]);
    git(d, &["config", "user.email", "a@example.com"]);
    git(d, &["config", "user.name", "A"]);
    std::fs::write(d.join("a.rs"), "fn a() {}\n").unwrap();
    std::fs::write(d.join("b.txt"), "old\n").unwrap();
    git(d, &["add", "."]);
    git(d, &["commit", "-qm", "one"]);
    std::fs::write(d.join("a.rs"), "fn a() { 1 }\n").unwrap();
    std::fs::write(d.join("b.txt"), "new\n").unwrap();
    let diff = git(d, &["diff", "--color=always"]);
    assert!(diff.contains(&0x1b), "git coloured nothing");
    let path = d.join("c.diff");
    std::fs::write(&path, &diff).unwrap();
    let loaded = import::load_path(&path).unwrap();
    assert_eq!(loaded.format, Format::UnifiedDiff);
    assert_eq!(
        rows_of(import::load_path(&path).unwrap()),
        (vec!["diff M a.rs".to_owned(), "diff M b.txt".to_owned()], 0)
    );
    let mut app = App::headless(loaded.items, "c.diff");
    let term = draw(&mut app, 120, 35);
    let screen = screen_text(&term);
    assert!(screen.contains("▌a.rs  +1 -1"), "{screen}");
    assert!(screen.contains("│+fn a() { 1 }"), "{screen}");
    assert!(
        !screen.contains('␛') && !screen.contains('\u{1b}'),
        "{screen}"
    );
    // Piped as `git diff --color | rawpv print -`: the same.
    let out = rawpv()
        .args(["print", "--color", "never", "-"])
        .write_stdin(diff)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let printed = String::from_utf8(out.stdout).unwrap();
    assert!(
        printed.contains("▌b.txt  +1 -1\n@@ -1,1 +1,1 @@\n1   │-old\n  1 │+new\n"),
        "{printed}"
    );
}

/// Attack 7 #21: `diff -ruN` says `Binary files a/x and b/x differ` with no header of its own;
/// that line is a file of its own, not the end of the file before it.
#[test]
fn diff_r_binary_files_are_rows_of_their_own() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for (dir, t, png) in [("a", "one\ntwo\n", 1u8), ("b", "one\n2\n", 2)] {
        std::fs::create_dir(d.join(dir)).unwrap();
        std::fs::write(d.join(dir).join("t.txt"), t).unwrap();
        std::fs::write(d.join(dir).join("u.png"), [0x89, b'P', b'N', b'G', 0, png]).unwrap();
    }
    std::fs::write(d.join("b/z.txt"), "new\n").unwrap();
    let out = Proc::new("diff")
        .args(["-ruN", "a", "b"])
        .current_dir(d)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(
        text.contains("\nBinary files a/u.png and b/u.png differ\n"),
        "{text}"
    );
    let path = d.join("r.diff");
    std::fs::write(&path, &out.stdout).unwrap();
    assert_eq!(
        rows_of(import::load_path(&path).unwrap()),
        (
            vec![
                "diff M t.txt".to_owned(),
                "diff M u.png".to_owned(),
                "diff A z.txt".to_owned()
            ],
            0
        )
    );
    let out = rawpv()
        .args(["print", "--color", "never"])
        .arg(&path)
        .output()
        .unwrap();
    let printed = String::from_utf8(out.stdout).unwrap();
    // Each file under its own header: u.png is binary, z.txt new (`diff -N` dates it 1970).
    let t = printed.find("▌t.txt").unwrap();
    let u = printed
        .find("▌u.png  (binary)")
        .unwrap_or_else(|| panic!("{printed}"));
    assert!(!printed[t..u].contains("Binary files"), "{printed}");
    assert!(
        printed[u..].contains("▌z.txt  +1 -0  (new file)"),
        "{printed}"
    );
}

/// Attack 7 #4: a patch of file headers without hunks (a mode change's `---`/`+++` pair, a cut
/// patch) is a diff, not the `---` of a YAML document.
#[test]
fn a_diff_of_headers_without_hunks_is_a_diff() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("h.patch");
    std::fs::write(
        &path,
        "--- a/x.txt\n+++ b/x.txt\n--- a/y.txt\n+++ b/y.txt\n",
    )
    .unwrap();
    let loaded = import::load_path(&path).unwrap();
    assert_eq!(loaded.format, Format::UnifiedDiff);
    assert_eq!(
        rows_of(loaded),
        (
            vec!["diff M x.txt".to_owned(), "diff M y.txt".to_owned()],
            0
        )
    );
    // A YAML cassette still reads as one.
    std::fs::write(&path, "---\ninteractions:\n- request: {}\n").unwrap();
    assert_eq!(import::detect_path(&path), Some(Format::Anthropic));
}
