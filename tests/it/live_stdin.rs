//! stdin (`rawpv -`): frames are sent as they arrive, before the writer finishes; EOF ends the
//! source; and the binary reads a pipe.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use assert_cmd::Command;
use rawpv::import::Decoded;
use rawpv::source::{SourceMsg, stdin};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

const WAIT: Duration = Duration::from_secs(10);

fn req(id: &str) -> String {
    format!(
        r#"{{"type":"tool.invoke.request","payload":{{"invocation_id":"{id}","tool_name":"Bash"}}}}"#
    )
}

async fn next_batch(rx: &mut mpsc::Receiver<SourceMsg>) -> Vec<String> {
    loop {
        match tokio::time::timeout(WAIT, rx.recv())
            .await
            .unwrap()
            .unwrap()
        {
            SourceMsg::Batch(b) => {
                return b
                    .into_iter()
                    .filter_map(|d| match d {
                        Decoded::Frame(f) => f.invocation_id().map(str::to_owned),
                        Decoded::Malformed(_) | Decoded::Finding(_) => None,
                    })
                    .collect();
            }
            SourceMsg::Format(_) | SourceMsg::State(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[tokio::test]
async fn frames_arrive_before_eof_and_eof_ends_the_source() {
    let (mut w, r) = tokio::io::duplex(1024);
    let (tx, mut rx) = mpsc::channel(8);
    let task = tokio::spawn(async move { stdin::run(r, &tx).await });
    w.write_all(format!("{}\n", req("a")).as_bytes())
        .await
        .unwrap();
    assert_eq!(next_batch(&mut rx).await, vec!["a"]);
    // A half line is held until its newline (or EOF).
    w.write_all(format!("{}\n{}", req("b"), req("c")).as_bytes())
        .await
        .unwrap();
    assert_eq!(next_batch(&mut rx).await, vec!["b"]);
    drop(w);
    assert_eq!(next_batch(&mut rx).await, vec!["c"]);
    let mut saw_eof = false;
    while let Some(m) = tokio::time::timeout(WAIT, rx.recv()).await.unwrap() {
        saw_eof |= m == SourceMsg::Eof;
    }
    assert!(saw_eof);
    task.await.unwrap();
}

#[test]
fn print_reads_a_pipe() {
    let input = format!("{}\n{}\n", req("a"), req("b"));
    let out = Command::cargo_bin("rawpv")
        .unwrap()
        .args(["print", "-"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
}
