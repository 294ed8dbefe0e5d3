//! `rawpv -f`: a followed file shows appended lines live, waits for a half-written line's
//! newline, and restarts on truncation and rotation (reported as `SourceState::Restarted`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::time::Duration;

use rawpv::import::Decoded;
use rawpv::source::{SourceMsg, SourceState, follow};
use tokio::sync::mpsc;

const POLL: Duration = Duration::from_millis(20);
const WAIT: Duration = Duration::from_secs(10);

fn req(id: &str) -> String {
    format!(
        r#"{{"type":"tool.invoke.request","payload":{{"invocation_id":"{id}","tool_name":"Bash"}}}}"#
    )
}

/// Receives until a batch arrives; returns its (line, invocation id) pairs, collecting any
/// state messages seen on the way into `states`.
async fn next_frames(
    rx: &mut mpsc::Receiver<SourceMsg>,
    states: &mut Vec<SourceState>,
) -> Vec<(u64, String)> {
    loop {
        let msg = tokio::time::timeout(WAIT, rx.recv())
            .await
            .expect("no message in time")
            .expect("source ended");
        match msg {
            SourceMsg::Batch(b) => {
                return b
                    .into_iter()
                    .map(|d| match d {
                        Decoded::Frame(f) => {
                            (f.origin.line, f.invocation_id().unwrap_or("").to_owned())
                        }
                        other => panic!("unexpected {other:?}"),
                    })
                    .collect();
            }
            SourceMsg::State(s) => states.push(s),
            SourceMsg::Format(_) | SourceMsg::Input(_) => {}
            SourceMsg::Eof | SourceMsg::Failed(_) => panic!("source ended: {msg:?}"),
        }
    }
}

fn append(path: &std::path::Path, text: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

fn pairs(v: &[(u64, &str)]) -> Vec<(u64, String)> {
    v.iter().map(|(l, s)| (*l, (*s).to_owned())).collect()
}

#[tokio::test]
async fn follow_appends_half_lines_truncation_and_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    std::fs::write(&path, format!("{}\n{}\n", req("a"), req("b"))).unwrap();
    let (tx, mut rx) = mpsc::channel(64);
    let p = path.clone();
    let task = tokio::spawn(async move { follow::run(p, POLL, &tx).await });
    let mut states = Vec::new();

    // What exists is read first.
    assert_eq!(
        next_frames(&mut rx, &mut states).await,
        pairs(&[(1, "a"), (2, "b")])
    );

    // An appended line appears live.
    append(&path, &format!("{}\n", req("c")));
    assert_eq!(next_frames(&mut rx, &mut states).await, pairs(&[(3, "c")]));
    assert!(states.contains(&SourceState::Live));

    // A half-written line waits for its newline.
    let line = req("d");
    let (head, tail) = line.split_at(25);
    append(&path, head);
    tokio::time::sleep(POLL * 5).await;
    assert!(rx.try_recv().is_err(), "a half line must not be decoded");
    append(&path, &format!("{tail}\n"));
    assert_eq!(next_frames(&mut rx, &mut states).await, pairs(&[(4, "d")]));

    // Truncation: reported, then reading restarts at the start (line numbers too).
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(0).unwrap();
    drop(f);
    tokio::time::sleep(POLL * 5).await;
    append(&path, &format!("{}\n", req("e")));
    assert_eq!(next_frames(&mut rx, &mut states).await, pairs(&[(1, "e")]));
    assert!(
        states.iter().any(
            |s| matches!(s, SourceState::Restarted { reason } if reason.contains("truncated"))
        ),
        "{states:?}"
    );

    // Rotation: a last line written to the old file still counts, then the new file is read.
    append(&path, &format!("{}\n", req("f")));
    std::fs::rename(&path, dir.path().join("session.jsonl.1")).unwrap();
    std::fs::write(&path, format!("{}\n{}\n", req("g"), req("h"))).unwrap();
    let mut got = Vec::new();
    while got.len() < 3 {
        got.extend(next_frames(&mut rx, &mut states).await);
    }
    assert_eq!(got, pairs(&[(2, "f"), (1, "g"), (2, "h")]));
    assert!(
        states
            .iter()
            .any(|s| matches!(s, SourceState::Restarted { reason } if reason.contains("rotated"))),
        "{states:?}"
    );

    // Dropping the receiver ends the source.
    drop(rx);
    tokio::time::timeout(WAIT, task).await.unwrap().unwrap();
}

#[tokio::test]
async fn follow_a_missing_file_fails_with_its_path() {
    let (tx, mut rx) = mpsc::channel(4);
    follow::run("/nonexistent/rawpv/x.jsonl".into(), POLL, &tx).await;
    let msg = rx.recv().await.unwrap();
    assert!(
        matches!(&msg, SourceMsg::Failed(e) if e.to_string().contains("/nonexistent/rawpv/x.jsonl")),
        "{msg:?}"
    );
}

/// Receives until the invocation ids of the frames seen so far (in order, each once) include
/// every one of `want`; returns them.
async fn ids_until(rx: &mut mpsc::Receiver<SourceMsg>, want: &[&str]) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    while !want.iter().all(|w| ids.iter().any(|i| i == w)) {
        let msg = tokio::time::timeout(WAIT, rx.recv())
            .await
            .unwrap_or_else(|_| panic!("{want:?} not all seen in time; seen {ids:?}"))
            .expect("source ended");
        if let SourceMsg::Batch(b) = msg {
            for d in b {
                if let Decoded::Frame(f) = d
                    && let Some(id) = f.invocation_id()
                    && !ids.iter().any(|i| i == id)
                {
                    ids.push(id.to_owned());
                }
            }
        }
    }
    ids
}

const CC_FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// A followed Claude Code transcript merges a subagent file written while it was followed (2.1.x
/// layout: `<session>/subagents/agent-*.jsonl`), under its Task, as a saved file does (attack
/// 5: `-f` showed 1 call, `print` 3).
#[tokio::test]
async fn a_followed_transcript_merges_the_subagent_file_written_after_it_started() {
    let src = std::path::Path::new(CC_FIXTURES).join("cc_follow_subagent");
    let name = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
    let main = std::fs::read_to_string(src.join(format!("{name}.jsonl"))).unwrap();
    let lines: Vec<&str> = main.lines().collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{name}.jsonl"));
    // The prompt and the Task call; no subagent file yet.
    std::fs::write(&path, format!("{}\n{}\n", lines[0], lines[1])).unwrap();
    let (tx, mut rx) = mpsc::channel(64);
    let p = path.clone();
    let task = tokio::spawn(async move { follow::run(p, POLL, &tx).await });
    assert_eq!(ids_until(&mut rx, &["toolu_T"]).await, ["toolu_T"]);
    // The subagent runs, then the Task's result comes.
    let sub = dir.path().join(name).join("subagents");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::copy(
        src.join(name).join("subagents/agent-abc123.jsonl"),
        sub.join("agent-abc123.jsonl"),
    )
    .unwrap();
    append(&path, &format!("{}\n", lines[2]));
    // The subagent's calls, then the Task's result.
    assert_eq!(
        ids_until(&mut rx, &["toolu_S1", "toolu_S2", "toolu_T"]).await,
        ["toolu_S1", "toolu_S2", "toolu_T"]
    );
    task.abort();
}

/// A line broken before its `uuid` (Claude Code writes it after `message`) no longer hides the
/// rest of a followed session: records waiting for a parent go out when the file is read to
/// its end (attack 5: only the first call showed until 256 more records came).
#[tokio::test]
async fn a_followed_transcript_shows_the_records_after_a_broken_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.jsonl");
    std::fs::copy(
        std::path::Path::new(CC_FIXTURES).join("cc_broken_mid.jsonl"),
        &path,
    )
    .unwrap();
    let (tx, mut rx) = mpsc::channel(64);
    let p = path.clone();
    let task = tokio::spawn(async move { follow::run(p, POLL, &tx).await });
    // toolu_B's request is the broken line: its result still shows, and so does call C.
    assert_eq!(
        ids_until(&mut rx, &["toolu_A", "toolu_B", "toolu_C"]).await,
        ["toolu_A", "toolu_B", "toolu_C"]
    );
    task.abort();
}
