//! The files and audit panels (issue 23 items 1–5, Done when): screen snapshots at 80x24 and
//! 160x45 on the compaction excerpt (its outside change marked, the net diff drawn) and the
//! fixture (a file whose starting content is unknown is not in it; the panel lists writers);
//! Enter jumps to the call in the feed; `y` / `Y` copy the file's / every file's patch, equal to
//! `rawpv patch --file`'s and `rawpv patch`'s sections; `t` filters the audit by kind.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine;
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use rawpv::action::Action;
use rawpv::app::App;
use rawpv::import;
use rawpv::session::Item;

use crate::support::corpus;
use crate::support::headless::{act, draw, screen_text, status_rows};

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 45)];

fn excerpt() -> Option<App> {
    let dir = corpus::dir("claude-code")?;
    let loaded = import::load_path(&dir.join("cc-v2.1.39-compaction-A-excerpt.jsonl")).ok()?;
    Some(App::headless(
        loaded.items,
        "cc-v2.1.39-compaction-A-excerpt.jsonl",
    ))
}

fn fixture() -> App {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/review_changes.jsonl"
    );
    let loaded = import::load_path(std::path::Path::new(p)).unwrap();
    App::headless(loaded.items, "review_changes.jsonl")
}

/// The invocation of feed row `item`.
fn call_at(app: &App, item: usize) -> (String, u64) {
    let s = app.session();
    match &s.items[item] {
        Item::Invocation(k) => (
            s.invocations[*k].tool_name.clone(),
            s.invocations[*k].request_line,
        ),
        other => panic!("not a call: {other:?}"),
    }
}

#[test]
fn files_panel_at_two_sizes_marks_the_outside_change() {
    for (w, h) in SIZES {
        let Some(mut app) = excerpt() else {
            return;
        };
        draw(&mut app, w, h);
        act(&mut app, &[Action::ShowFiles]);
        let term = draw(&mut app, w, h);
        let screen = screen_text(&term);
        assert!(
            screen.contains("11 files ·")
                && screen.contains("lib/spotter_web/live/session_live.ex"),
            "{w}x{h}: {screen}"
        );
        assert!(status_rows(&term).contains("go to its call"), "{w}x{h}");
        assert_snapshot!(format!("files_{w}x{h}"), term.backend());
        // Down to the first file's third touch: the edit at line 30, changed outside before it.
        act(
            &mut app,
            &[Action::MoveDown, Action::MoveDown, Action::MoveDown],
        );
        let term = draw(&mut app, w, h);
        let screen = screen_text(&term);
        assert!(screen.contains("! "), "{w}x{h}: {screen}");
        assert_snapshot!(format!("files_outside_{w}x{h}"), term.backend());
        // Enter: the feed selects that Edit call.
        act(&mut app, &[Action::Open]);
        let item = app.view().selected_item(app.session()).unwrap();
        assert_eq!(call_at(&app, item), ("Edit".to_owned(), 30), "{w}x{h}");
        assert_eq!(app.view().tab, rawpv::view::Tab::Detail);
    }
}

#[test]
fn the_selected_outside_change_says_first_what_ran_between() {
    let Some(mut app) = excerpt() else {
        return;
    };
    draw(&mut app, 160, 45);
    act(
        &mut app,
        &[
            Action::ShowFiles,
            Action::MoveDown,
            Action::MoveDown,
            Action::MoveDown,
        ],
    );
    // The lower part starts with the explanation (lead's note: at 80 columns the row's note is
    // cut), without scrolling: the hook that formats the file is named.
    let screen = screen_text(&draw(&mut app, 160, 45));
    assert!(
        screen.contains("something else changed it") && screen.contains("post-edit.sh"),
        "{screen}"
    );
    // One row up (an edit without an outside change): the net diff comes first again.
    act(&mut app, &[Action::MoveUp]);
    let screen = screen_text(&draw(&mut app, 160, 45));
    assert!(!screen.contains("post-edit.sh"), "{screen}");
}

fn clipboard(app: &mut App) -> String {
    let seq = app.take_clipboard_out().expect("an OSC 52 sequence");
    let b64 = seq
        .strip_prefix("\x1b]52;c;")
        .and_then(|s| s.strip_suffix('\x07'))
        .expect("OSC 52 framing");
    String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap(),
    )
    .unwrap()
}

/// The patch sections (from the first `diff --git`) of a patch text.
fn sections(p: &str) -> &str {
    &p[p.find("diff --git").unwrap_or(p.len())..]
}

#[test]
fn y_and_capital_y_copy_the_patch_rawpv_patch_writes() {
    let mut app = fixture();
    draw(&mut app, 160, 45);
    act(&mut app, &[Action::ShowFiles]);
    let term = draw(&mut app, 160, 45);
    assert_snapshot!("files_fixture_160x45", term.backend());
    app.press(KeyCode::Char('y'));
    let one = clipboard(&mut app);
    assert_eq!(
        sections(&one),
        "diff --git a/src/lib.rs b/src/lib.rs\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n fn one() {}\n-fn two() {}\n-fn three() {}\n+fn TWO() { 2 }\n+fn three() { 3 }\n"
    );
    assert!(
        app.view()
            .message
            .as_deref()
            .is_some_and(|m| m.starts_with("copied the file's patch (")),
        "{:?}",
        app.view().message
    );
    app.press(KeyCode::Char('Y'));
    let all = clipboard(&mut app);
    let cli = assert_cmd::Command::cargo_bin("rawpv")
        .unwrap()
        .args([
            "patch",
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/review_changes.jsonl"
            ),
        ])
        .output()
        .unwrap();
    assert_eq!(
        sections(&all),
        sections(&String::from_utf8(cli.stdout).unwrap())
    );
    assert!(
        all.contains("#   /tmp/elsewhere.txt: outside the working directory"),
        "{all}"
    );
}

#[test]
fn audit_panel_at_two_sizes_and_its_kind_filter() {
    for (w, h) in SIZES {
        let mut app = fixture();
        draw(&mut app, w, h);
        act(&mut app, &[Action::ShowAudit]);
        let term = draw(&mut app, w, h);
        assert_snapshot!(format!("audit_{w}x{h}"), term.backend());
        // network only: WebFetch, WebSearch and the curl command.
        act(&mut app, &[Action::AuditKind, Action::AuditKind]);
        let term = draw(&mut app, w, h);
        let screen = screen_text(&term);
        assert!(
            screen.contains("only network (3 of 7)"),
            "{w}x{h}: {screen}"
        );
        act(&mut app, &[Action::Bottom, Action::Open]);
        let item = app.view().selected_item(app.session()).unwrap();
        assert_eq!(call_at(&app, item), ("Bash".to_owned(), 22), "{w}x{h}");
    }
}

/// Changed files come first in the panel: in cc-v1.0.43 two files are only read, and the first
/// of them is touched before the one file the session changes; the first (selected) row is the
/// changed one, and Enter from it opens its first `MultiEdit` (line 34).
#[test]
fn changed_files_are_listed_before_files_only_read() {
    let Some(dir) = corpus::dir("claude-code") else {
        return;
    };
    let loaded = import::load_path(&dir.join("cc-v1.0.43-image-hooks-multiedit.jsonl")).unwrap();
    let mut app = App::headless(loaded.items, "cc-v1.0.43-image-hooks-multiedit.jsonl");
    draw(&mut app, 160, 45);
    act(&mut app, &[Action::ShowFiles]);
    let screen = screen_text(&draw(&mut app, 160, 45));
    let at = |s: &str| screen.find(s).unwrap_or_else(|| panic!("{s}: {screen}"));
    assert!(at("M +13 −5") < at("R read"), "{screen}");
    act(&mut app, &[Action::MoveDown, Action::Open]);
    let item = app.view().selected_item(app.session()).unwrap();
    assert_eq!(call_at(&app, item), ("MultiEdit".to_owned(), 34));
}
