//! Claude Code files in the viewer and the commands (issues 8 and 16): one decoder streams a
//! transcript, ordered by its `parentUuid` graph as it is read, with its subagent files; no
//! second decode, no replacement of the session.
//!
//! Pins: the first batches come while the file is read and nothing follows them but `Eof`; the
//! viewer's session equals the one `fold_path` (print, check, stats) builds for every corpus
//! transcript and fixture; inputs and outputs left in the file read back exactly as the
//! in-memory decode built them; records written before their parent are put after it. Corpus
//! files are skipped (with a message) when `../shared/corpus` is absent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;

use std::path::{Path, PathBuf};

use rawpv::app::{App, Msg};
use rawpv::import::{self, Decoded, Format};
use rawpv::session::{Item, Session};
use rawpv::source::file::{self, FileEvent, ReadOptions};
use rawpv::source::{self, SourceKind, SourceMsg};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const VIEWER: ReadOptions = ReadOptions {
    defer_outputs: true,
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

/// What the viewer's file source hands on for `path`: its batches.
fn viewer_batches(path: &Path) -> Vec<Vec<Decoded>> {
    let mut batches = Vec::new();
    file::read_path_with(path, VIEWER, |ev| {
        if let FileEvent::Batch(b) = ev {
            batches.push(b);
        }
        true
    })
    .unwrap();
    batches
}

/// An app set up as `app::run` sets up a saved file.
fn file_app(path: &Path) -> App {
    let mut app = App::new(path.display().to_string(), false);
    app.session_mut().backing = Some(std::sync::Arc::from(path));
    app.session_mut().max_items = Some(0);
    app
}

/// The session the commands see (`fold_path`), with the viewer's row cap setting.
fn commands(path: &Path) -> Session {
    let (mut s, format) = file::fold_path(path).unwrap();
    assert_eq!(format, Format::ClaudeCode);
    s.max_items = Some(0);
    s
}

/// [`commands`] as the viewer folds: event payloads left in the file (`Session::defer_events`).
fn viewer_like(path: &Path) -> Session {
    let mut s = Session::new();
    s.defer_events = true;
    let (mut s, format) = file::fold_path_into(path, s).unwrap();
    assert_eq!(format, Format::ClaudeCode);
    s.max_items = Some(0);
    s
}

fn transcripts() -> Vec<PathBuf> {
    let mut paths = vec![
        fixture("cc_graph_order_resumed.jsonl"),
        fixture("cc_subagents_layout/11111111-2222-4333-8444-555555555555.jsonl"),
        fixture("cc_compaction_subagent/22222222-3333-4444-8555-666666666666.jsonl"),
        fixture("cc_fork_rewind.jsonl"),
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
    paths
}

#[tokio::test]
async fn first_batches_come_while_the_file_is_read_and_nothing_replaces_them() {
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
    let batches = msgs
        .iter()
        .filter(|m| matches!(m, SourceMsg::Batch(_)))
        .count();
    assert!(batches >= 3, "streamed in batches: {batches}");
    assert_eq!(msgs.last(), Some(&SourceMsg::Eof));
    let mut app = file_app(&path);
    for m in msgs {
        app.update(Msg::Source(m));
    }
    assert_eq!(*app.session(), viewer_like(&path));
}

/// Every corpus transcript and Claude Code fixture: the viewer ends with the session the
/// commands build when they too leave event payloads in the file (`viewer_like`).
#[test]
fn viewer_session_equals_the_commands_session_for_every_transcript() {
    for path in &transcripts() {
        let want = viewer_like(path);
        let mut app = file_app(path);
        app.update(Msg::Source(SourceMsg::Format(Format::ClaudeCode)));
        for b in viewer_batches(path) {
            app.update(Msg::Source(SourceMsg::Batch(b)));
        }
        app.update(Msg::Source(SourceMsg::Eof));
        assert_eq!(*app.session(), want, "{}", path.display());
    }
}

/// Inputs and outputs are left in the file (spans), and read back from the record as the
/// in-memory decode (`import::load_path`, no spans) built them, for every call.
#[test]
fn calls_left_in_the_file_read_back_as_decoded() {
    let mut deferred = 0;
    for path in &transcripts() {
        let backed = commands(path);
        let memory = Session::from_decoded(import::load_path(path).unwrap().items);
        assert_eq!(
            backed.invocations.len(),
            memory.invocations.len(),
            "{}",
            path.display()
        );
        for (b, m) in backed.invocations.iter().zip(&memory.invocations) {
            assert_eq!(b.invocation_id, m.invocation_id);
            deferred += usize::from(b.input_span.is_some()) + usize::from(b.output_span.is_some());
            let back = backed.with_input_output(b);
            assert_eq!(
                back.input,
                m.input,
                "{} {}",
                path.display(),
                m.invocation_id
            );
            assert_eq!(
                back.result.as_ref().and_then(|r| r.output.clone()),
                m.result.as_ref().and_then(|r| r.output.clone()),
                "{} {}",
                path.display(),
                m.invocation_id
            );
        }
    }
    assert!(
        deferred > 100,
        "inputs and outputs were left in the files: {deferred}"
    );
}

/// A result written before its call's record comes after it: the rows are in graph order.
#[test]
fn records_written_before_their_parent_come_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(&path, synthetic_transcript(9)).unwrap();
    let s = commands(&path);
    for inv in &s.invocations {
        assert!(
            inv.result_line.unwrap() != inv.request_line,
            "{}",
            inv.invocation_id
        );
    }
    let results_first: Vec<_> = s
        .invocations
        .iter()
        .filter(|inv| inv.result_line.unwrap() < inv.request_line)
        .map(|inv| inv.invocation_id.as_str())
        .collect();
    assert_eq!(results_first, ["toolu_0", "toolu_3", "toolu_6"]);
    for inv in &s.invocations {
        assert_eq!(
            inv.status,
            rawpv::session::CallStatus::Succeeded,
            "{}",
            inv.invocation_id
        );
    }
    let prompts: Vec<usize> = (0..s.items.len())
        .filter(|&i| matches!(&s.items[i], Item::Message(_)))
        .collect();
    assert_eq!(prompts.len(), 9);
}

/// Found by the `claude_code` fuzz target: a `tool_result` without a `tool_use_id` is mapped
/// under the id "", and its output still reads back from the file.
#[test]
fn a_result_without_an_id_reads_back_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let lines = [
        r#"{"parentUuid":null,"type":"assistant","uuid":"u1","sessionId":"s","timestamp":"2026-01-01T10:00:00.000Z","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","name":"Bash","input":{"command":"ls"}}]}}"#,
        r#"{"parentUuid":"u1","type":"user","uuid":"u2","sessionId":"s","timestamp":"2026-01-01T10:00:01.000Z","message":{"role":"user","content":[{"type":"tool_result","content":"a.rs"}]}}"#,
    ];
    std::fs::write(&path, lines.join("\n")).unwrap();
    let s = commands(&path);
    let inv = s.invocation("").unwrap();
    assert!(inv.input_span.is_some() && inv.output_span.is_some());
    assert_eq!(
        s.input(inv).into_owned(),
        serde_json::json!({"command": "ls"})
    );
    assert_eq!(
        s.output(inv).map(std::borrow::Cow::into_owned),
        Some(serde_json::json!("a.rs"))
    );
}

/// A load can be cancelled (back to the browser mid-load: the app drops the channel, the sink
/// says stop): the reader returns at once, with nothing decoded after the batch it was handed
/// and no second decode left running (there is none).
#[test]
fn a_transcript_load_stops_at_the_first_batch_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    std::fs::write(&path, synthetic_transcript(3000)).unwrap();
    let (mut batches, mut progress_after) = (0, 0);
    file::read_path_with(&path, VIEWER, |ev| match ev {
        FileEvent::Batch(_) => {
            batches += 1;
            false
        }
        FileEvent::Progress { .. } if batches > 0 => {
            progress_after += 1;
            true
        }
        FileEvent::Format(_) | FileEvent::Progress { .. } => true,
    })
    .unwrap();
    assert_eq!((batches, progress_after), (1, 0));
}

/// A broken record does not hold back the records that name it as their parent: the next one is
/// mapped as it arrives (not after `MAX_WAITING` more), and the broken line is a finding with
/// its line number.
#[test]
fn the_child_of_a_broken_record_is_mapped_as_it_arrives() {
    let lines = [
        r#"{"parentUuid":null,"type":"user","uuid":"u1","sessionId":"s","timestamp":"2026-01-01T10:00:00.000Z","message":{"role":"user","content":"first"}}"#,
        r#"{"parentUuid":"u1","type":"user","uuid":"u2","sessionId":"s","timestamp":"2026-01-01T10:00:01.000Z","message":{"role":"user","content":"sec"#,
        r#"{"parentUuid":"u2","type":"user","uuid":"u3","sessionId":"s","timestamp":"2026-01-01T10:00:02.000Z","message":{"role":"user","content":"third"}}"#,
    ];
    let mut dec = import::decoder_for(Format::ClaudeCode);
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        dec.line(i as u64 + 1, l, &mut out);
    }
    let kinds: Vec<String> = out
        .iter()
        .map(|d| match d {
            Decoded::Frame(f) => f.frame_type.as_str().to_owned(),
            Decoded::Malformed(e) => format!("malformed line {}", e.line),
            Decoded::Finding(f) => format!("finding {}", f.code),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "control.prompt.request",
            "malformed line 2",
            "control.prompt.request"
        ]
    );
}
