//! `print --detail` and the viewer's detail pane give the same lines: for every call of every
//! corpus file (and a running call's stream with terminal redraws), at the same width, with
//! every block expanded. Both go through `rawpv::detail::build`; this keeps it that way.

use std::path::Path;

use ratatui::layout::Rect;
use rawpv::app::App;
use rawpv::render::{Limits, lines_to_string};
use rawpv::session::{Item, Session};
use rawpv::theme::Theme;

use crate::support::corpus;

/// Columns of the detail's text (the viewer's pane is two wider: its borders).
const WIDTH: u16 = 100;

/// The viewer's detail lines for every call of `session`, each selected, expanded and rendered
/// to its final stage in a zoomed pane `WIDTH` columns wide inside.
fn tui_details(session: Session) -> Vec<(String, String)> {
    let mut app = App::new("corpus", false);
    *app.session_mut() = session;
    app.view_mut().zoom = true;
    let area = Rect::new(0, 0, WIDTH + 2, 40);
    let calls: Vec<(usize, String)> = app
        .session()
        .invocations
        .iter()
        .map(|inv| (inv.item, inv.invocation_id.clone()))
        .collect();
    let mut out = Vec::new();
    for (item, id) in calls {
        let Some(row) = app.view().row_of(item) else {
            panic!("call {id} is not a row");
        };
        app.select(row);
        app.view_mut().detail.expanded = true;
        for _ in 0..10 {
            app.prepare(area);
            if app.queued_job().is_none() {
                break;
            }
            app.run_jobs_inline();
        }
        out.push((id, lines_to_string(app.detail_lines())));
    }
    out
}

/// What `print --detail --width WIDTH --color never` writes for each call.
fn print_details(session: &Session) -> Vec<(String, String)> {
    session
        .invocations
        .iter()
        .map(|inv| {
            let lines = rawpv::cmd::print::detail_lines(
                session,
                inv.item,
                WIDTH,
                &Theme::mono(),
                Limits::default(),
            );
            (inv.invocation_id.clone(), lines_to_string(&lines))
        })
        .collect()
}

fn assert_same(path: &Path) -> usize {
    let Ok((session, _)) = rawpv::source::file::fold_path(path) else {
        return 0;
    };
    let Ok((again, _)) = rawpv::source::file::fold_path(path) else {
        panic!("{} read once, not twice", path.display());
    };
    let printed = print_details(&session);
    let shown = tui_details(again);
    assert_eq!(printed.len(), shown.len());
    for ((id, p), (_, t)) in printed.iter().zip(&shown) {
        pretty_assertions::assert_eq!(p, t, "{} call {id}", path.display());
    }
    printed.len()
}

#[test]
fn print_detail_is_the_detail_pane_for_every_corpus_call() {
    let Some(files) = corpus::files("") else {
        return;
    };
    let mut calls = 0;
    for f in files {
        calls += assert_same(&f);
    }
    assert!(calls > 100, "{calls} calls compared");
}

#[test]
fn a_running_calls_stream_is_the_same_in_both_and_redraws_are_interpreted() {
    // A `docker pull`-style redraw: three layer lines, then cursor-up, erase, rewrite, back down;
    // one chunk arrives out of order. No result: the call is still running.
    let chunks = [
        "layer1: Waiting\nlayer2: Waiting\nlayer3: Waiting\n",
        "\u{1b}[3A\u{1b}[2K\rlayer1: Pull complete\u{1b}[3B",
        "\u{1b}[2A\u{1b}[2K\rlayer2: Downloading 40%\u{1b}[2B",
        "\u{1b}[2A\u{1b}[2K\rlayer2: Pull complete\u{1b}[2B",
        "\rStatus: Downloaded newer image\n",
    ];
    let mut text = String::from(
        r#"{"type":"tool.invoke.request","payload":{"invocation_id":"7b6f0c4e-8d2a-4c1e-9f3b-2a5d6e7f8091","tool_name":"Bash","input":{"command":"docker pull alpine"}}}"#,
    );
    text.push('\n');
    for (seq, c) in chunks.iter().enumerate().rev() {
        let frame = serde_json::json!({
            "type": "tool.invoke.stream",
            "payload": {
                "invocation_id": "7b6f0c4e-8d2a-4c1e-9f3b-2a5d6e7f8091",
                "tool_name": "Bash",
                "stream_type": "stdout",
                "chunk": c,
                "sequence": seq,
            }
        });
        text.push_str(&frame.to_string());
        text.push('\n');
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("running.ndjson");
    std::fs::write(&path, text).expect("write");
    assert_eq!(assert_same(&path), 1);
    let (session, _) = rawpv::source::file::fold_path(&path).expect("fold");
    let Some(Item::Invocation(_)) = session.items.first() else {
        panic!("one call");
    };
    let (_, shown) = tui_details(session).remove(0);
    assert!(!shown.contains('␛'), "{shown}");
    assert!(
        shown.contains("layer1: Pull complete\nlayer2: Pull complete\nlayer3: Waiting\nStatus: Downloaded newer image"),
        "{shown}"
    );
}
