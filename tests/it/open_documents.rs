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
