//! Claude Code files in the viewer (issue 8): the file source streams a transcript in file order
//! first (so the first screen does not wait for the whole file), then decodes it exactly (parent
//! graph order, subagent files) and, when that differs, replaces the session
//! (`SourceMsg::Replace`).
//!
//! Pins: the first batches come before the exact decode; the session after a replace equals
//! `Session::from_decoded(import::load_path(..))` for every corpus transcript and fixture (and
//! `fold_path`, used by print/check/stats, is unchanged); the screen before and after a replace,
//! with the selected call kept. Corpus files are skipped (with a message) when
//! `../shared/corpus` is absent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;

use std::path::{Path, PathBuf};

use insta::assert_snapshot;
use rawpv::app::{App, Msg};
use rawpv::import::{self, Decoded, Format};
use rawpv::session::{Item, Session};
use rawpv::source::file::{self, FileEvent, ReadOptions};
use rawpv::source::{self, SourceKind, SourceMsg, SourceState};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::support::headless;
use headless::{draw, status_rows};

const VIEWER: ReadOptions = ReadOptions {
    defer_outputs: true,
    stream_claude_code: true,
};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// A transcript of `n` prompt / tool call / result turns, each record the child of the one
/// before; the tool results come before their calls' records in the file (as resumed sessions
/// write them), so the parent-graph order differs from file order.
fn synthetic_transcript(n: usize) -> String {
    let mut out = String::new();
    let mut parent = "null".to_owned();
    for i in 0..n {
        let (u, a, r) = (
            format!("u{i:07}-0000-4000-8000-000000000000"),
            format!("a{i:07}-0000-4000-8000-000000000000"),
            format!("r{i:07}-0000-4000-8000-000000000000"),
        );
        let ts = format!("2026-01-01T10:{:02}:{:02}.000Z", (i / 60) % 60, i % 60);
        let _ = writeln!(
            out,
            r#"{{"parentUuid":{parent},"isSidechain":false,"type":"user","message":{{"role":"user","content":"prompt {i}"}},"uuid":"{u}","timestamp":"{ts}","sessionId":"s"}}"#
        );
        let result = format!(
            r#"{{"parentUuid":"{a}","isSidechain":false,"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{i}","content":"out {i}"}}]}},"uuid":"{r}","timestamp":"{ts}","sessionId":"s"}}"#
        );
        let call = format!(
            r#"{{"parentUuid":"{u}","isSidechain":false,"type":"assistant","message":{{"id":"msg_{i}","role":"assistant","content":[{{"type":"tool_use","id":"toolu_{i}","name":"Bash","input":{{"command":"echo {i}"}}}}]}},"uuid":"{a}","timestamp":"{ts}","sessionId":"s"}}"#
        );
        // Every third turn is written result first.
        if i % 3 == 0 {
            let _ = write!(out, "{result}\n{call}\n");
        } else {
            let _ = write!(out, "{call}\n{result}\n");
        }
        parent = format!("\"{r}\"");
    }
    out
}

/// What the viewer's file source hands on for `path`: the items streamed in file order, and
/// the exact items when they differ.
fn viewer_events(path: &Path) -> (Vec<Vec<Decoded>>, bool, Option<Vec<Decoded>>) {
    let (mut batches, mut ordering, mut exact) = (Vec::new(), false, None);
    file::read_path_with(path, VIEWER, |ev| {
        match ev {
            FileEvent::Batch(b) => {
                assert!(!ordering, "every batch comes before the exact decode");
                batches.push(b);
            }
            FileEvent::Ordering => ordering = true,
            FileEvent::Exact(items) => exact = Some(items),
            FileEvent::Format(_) | FileEvent::Progress { .. } => {}
        }
        true
    })
    .unwrap();
    (batches, ordering, exact)
}

/// An app set up as `app::run` sets up a saved file.
fn file_app(path: &Path) -> App {
    let mut app = App::new(path.display().to_string(), false);
    app.session_mut().backing = Some(std::sync::Arc::from(path));
    app.session_mut().max_items = Some(0);
    app
}

/// The session the commands see: `import::load_path`, folded.
fn whole(path: &Path) -> Session {
    Session::from_decoded(import::load_path(path).unwrap().items)
}

/// `s` without the settings the viewer adds (its backing file, no row cap).
fn plain(mut s: Session) -> Session {
    s.backing = None;
    s.max_items = None;
    s
}

#[tokio::test]
async fn first_batches_come_before_the_exact_decode_through_the_file_source() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    std::fs::write(&path, synthetic_transcript(1200)).unwrap();
    let (tx, mut rx) = mpsc::channel(source::CHANNEL_CAPACITY);
    let _task = source::spawn_source(SourceKind::File(path.clone()), tx, CancellationToken::new());
    let mut msgs = Vec::new();
    while let Some(m) = rx.recv().await {
        let end = matches!(m, SourceMsg::Eof | SourceMsg::Failed(_));
        msgs.push(m);
        if end {
            break;
        }
    }
    assert_eq!(msgs.first(), Some(&SourceMsg::Format(Format::ClaudeCode)));
    let ordering = msgs
        .iter()
        .position(|m| *m == SourceMsg::State(SourceState::Ordering))
        .expect("the exact order is computed after the stream");
    let batches_before = msgs[..ordering]
        .iter()
        .filter(|m| matches!(m, SourceMsg::Batch(_)))
        .count();
    assert!(batches_before >= 3, "streamed in batches: {batches_before}");
    // The streamed rows were in file order; the exact session (graph order) replaces them.
    let replaced = msgs[ordering..]
        .iter()
        .filter_map(|m| match m {
            SourceMsg::Replace(s) => Some(s),
            _ => None,
        })
        .collect::<Vec<_>>();
    assert_eq!(replaced.len(), 1, "one replace");
    assert_eq!(**replaced[0], whole(&path));
    assert_eq!(msgs.last(), Some(&SourceMsg::Eof));
    // Through the app: the session after the replace is the whole-file one.
    let mut app = file_app(&path);
    for m in msgs {
        app.update(Msg::Source(m));
    }
    assert_eq!(plain(app.session().clone()), whole(&path));
}

/// Every corpus transcript and Claude Code fixture: the viewer ends with the session the
/// commands build, and `fold_path` (print, check, stats) still builds exactly that.
#[test]
fn viewer_session_equals_the_whole_file_decode_for_every_transcript() {
    let mut paths = vec![
        fixture("cc_graph_order_resumed.jsonl"),
        fixture("cc_subagents_layout/11111111-2222-4333-8444-555555555555.jsonl"),
    ];
    let corpus = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/claude-code"
    ));
    if !crate::support::corpus::skipped(corpus) {
        let mut found: Vec<PathBuf> = std::fs::read_dir(corpus)
            .unwrap()
            .flatten()
            .map(|d| d.path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        found.push(
            corpus.join("cc-v2.0.55-deep-manifest/a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl"),
        );
        found.sort();
        paths.extend(found);
    }
    let mut replaced = 0;
    for path in &paths {
        let want = whole(path);
        let (batches, ordering, exact) = viewer_events(path);
        assert!(ordering, "{}", path.display());
        let mut app = file_app(path);
        app.update(Msg::Source(SourceMsg::Format(Format::ClaudeCode)));
        for b in batches {
            app.update(Msg::Source(SourceMsg::Batch(b)));
        }
        app.update(Msg::Source(SourceMsg::State(SourceState::Ordering)));
        if let Some(items) = exact {
            replaced += 1;
            let s = Session::from_decoded(items);
            app.update(Msg::Source(SourceMsg::Replace(Box::new(s))));
        }
        app.update(Msg::Source(SourceMsg::Eof));
        assert!(
            app.session().backing.is_some(),
            "the viewer's settings stay"
        );
        assert_eq!(plain(app.session().clone()), want, "{}", path.display());
        let (folded, format) = file::fold_path(path).unwrap();
        assert_eq!(format, Format::ClaudeCode);
        assert_eq!(plain(folded), want, "fold_path: {}", path.display());
    }
    assert!(
        replaced > 0,
        "file order differs from graph order somewhere"
    );
}

/// The subagent fixture: its subagent's rows are not streamed (they live in another file) and
/// come in before the Agent call's result, so the replace renumbers the main agent's answer.
#[test]
fn screen_before_and_after_replace_keeps_the_selected_row() {
    let path = fixture("cc_subagents_layout/11111111-2222-4333-8444-555555555555.jsonl");
    let (batches, _, exact) = viewer_events(&path);
    let mut app = file_app(&path);
    app.update(Msg::Source(SourceMsg::Format(Format::ClaudeCode)));
    app.update(Msg::Source(SourceMsg::State(SourceState::Reading {
        bytes: 1,
        total: 1,
    })));
    for b in batches {
        app.update(Msg::Source(SourceMsg::Batch(b)));
    }
    app.update(Msg::Source(SourceMsg::State(SourceState::Ordering)));
    // Select the main agent's last message ("It is src/main.rs."), after the Agent call.
    let last = (0..app.session().items.len())
        .rev()
        .find(|&i| matches!(&app.session().items[i], Item::Message(m) if m.text.contains("It is src/main.rs")))
        .expect("the answer was streamed");
    app.select(app.view().row_of(last).expect("the answer is a row"));
    let selected_text = |app: &App| {
        let i = app.view().selected_item(app.session())?;
        match &app.session().items[i] {
            Item::Message(m) => Some(m.text.clone()),
            Item::Invocation(_) | Item::Event(_) => None,
        }
    };
    let before_text = selected_text(&app).expect("a message is selected");
    let before = draw(&mut app, 100, 30);
    assert!(status_rows(&before).contains("loading 100% · ordering"));
    assert_snapshot!("cc_stream_before_replace", before.backend());

    let exact = exact.expect("the subagent file changes the session");
    app.update(Msg::Source(SourceMsg::Replace(Box::new(
        Session::from_decoded(exact),
    ))));
    app.update(Msg::Source(SourceMsg::Eof));
    assert_eq!(selected_text(&app), Some(before_text));
    assert!(
        app.view().selected_item(app.session()) > Some(last),
        "the subagent's rows came in before it: the selection followed it"
    );
    let after = draw(&mut app, 100, 30);
    assert!(!status_rows(&after).contains("ordering"));
    assert_snapshot!("cc_stream_after_replace", after.backend());
    assert_eq!(plain(app.session().clone()), whole(&path));
}

/// A folded turn stays folded across the replace (found again by its prompt's record), and
/// every row index is one of the new session's items.
#[test]
fn folded_turn_stays_folded_after_replace() {
    let path = fixture("cc_subagents_layout/11111111-2222-4333-8444-555555555555.jsonl");
    let (batches, _, exact) = viewer_events(&path);
    let mut app = file_app(&path);
    for b in batches {
        app.update(Msg::Source(SourceMsg::Batch(b)));
    }
    let prompt = (0..app.session().items.len())
        .find(
            |&i| matches!(&app.session().items[i], Item::Message(m) if m.text == "Explore the repo"),
        )
        .expect("the prompt was streamed");
    assert!(app.fold_turn(prompt));
    app.update(Msg::Source(SourceMsg::Replace(Box::new(
        Session::from_decoded(exact.expect("the subagent file changes the session")),
    ))));
    app.update(Msg::Source(SourceMsg::Eof));
    let folded: Vec<usize> = app.view().folds.folded.keys().copied().collect();
    assert_eq!(folded.len(), 1);
    assert!(
        matches!(&app.session().items[folded[0]], Item::Message(m) if m.text == "Explore the repo")
    );
    let rows = app.view().rows.clone().expect("a fold hides rows");
    assert!(rows.windows(2).all(|w| w[0] < w[1]));
    assert!(rows.iter().all(|&i| i < app.session().items.len()));
    assert!(app.view().feed.selected < rows.len());
    let screen = draw(&mut app, 100, 30);
    assert!(status_rows(&screen).contains("ended"));
}
