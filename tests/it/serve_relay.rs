//! `rawpv serve` as a relay (issue 24.3), with real processes on loopback: a Claude Code
//! transcript appended by another process while `serve --follow` relays it reaches a `rawpv
//! convert ws://…` client whole (every call once, in order, the same output as `rawpv convert` of
//! the finished file), and the client exits 0 when the server is stopped with SIGINT; a client
//! that drops mid-stream and resumes with `?after=N` gets exactly the rest, including frames
//! written while it was away (over SSE, closed with `event: end`); two recordings are served as
//! one stream in timestamp order with a session per input, and several followed files each keep
//! their order and session; a truncated followed file is served again as new frames; SIGTERM
//! closes a paced stream normally; a resume from before the retained window is refused with HTTP
//! 410, and a client that falls behind it is closed with 1008 and told so when it resumes; a
//! relay killed and restarted mid-stream gives the same frames the same indexes, so its client
//! resumes without loss or doubles.
//!
//! Waits are on conditions (a log line, a process exit) with generous deadlines, never sleeps
//! standing in for them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::support::corpus;

/// Deadline of every wait (a loaded 2-core machine builds and tests at once).
const WAIT: Duration = Duration::from_secs(90);
/// The transcript relayed: 1 MB, 76 tool calls (152 request and result frames), 390 frames.
const TRANSCRIPT: &str = "cc-v2.0.37-planmode-askuser-bashoutput.jsonl";

fn rawpv() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rawpv"));
    c.env_remove("RAWP_TOKEN");
    c
}

/// A `rawpv serve` child on an ephemeral loopback port, its stderr collected line by line.
struct Server {
    child: Child,
    addr: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start(args: &[&OsStr]) -> Self {
        Self::start_on("127.0.0.1:0", args)
    }

    /// [`Server::start`] on `listen`.
    fn start_on(listen: &str, args: &[&OsStr]) -> Self {
        let mut child = rawpv()
            .arg("serve")
            .args(args)
            .args(["--listen", listen])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let reader = BufReader::new(child.stderr.take().unwrap());
        let lines = log.clone();
        std::thread::spawn(move || {
            for line in reader.lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        });
        let mut s = Self {
            child,
            addr: String::new(),
            log,
        };
        let line = s.wait_log(|l| l.contains(" on 127.0.0.1:"), "the listening address");
        line.split(" on ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .unwrap()
            .clone_into(&mut s.addr);
        s
    }

    /// Waits for a stderr line matching `pred`; returns it.
    fn wait_log(&self, pred: impl Fn(&str) -> bool, what: &str) -> String {
        let until = Instant::now() + WAIT;
        loop {
            if let Some(l) = self.log.lock().unwrap().iter().find(|l| pred(l)) {
                return l.clone();
            }
            assert!(
                Instant::now() < until,
                "no {what} on the server's stderr: {:?}",
                self.log.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{sig}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
    }

    /// Waits for the server to exit; its status and stderr.
    fn wait(&mut self) -> (ExitStatus, Vec<String>) {
        let status = wait_child(&mut self.child, "the server");
        // The reader thread ends with the pipe; give it the last lines.
        let until = Instant::now() + WAIT;
        while Arc::strong_count(&self.log) > 1 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        (status, self.log.lock().unwrap().clone())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_child(child: &mut Child, what: &str) -> ExitStatus {
    let until = Instant::now() + WAIT;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if Instant::now() > until {
            let _ = child.kill();
            panic!("{what} did not exit within {WAIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `rawpv convert URL` writing to `out`.
fn client(url: &str, out: &Path) -> Child {
    rawpv()
        .args(["convert", url])
        .stdout(std::fs::File::create(out).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for a client; its exit status and stderr.
fn finish_client(mut c: Child) -> (ExitStatus, String) {
    let status = wait_child(&mut c, "the client");
    let mut err = String::new();
    std::io::Read::read_to_string(&mut c.stderr.take().unwrap(), &mut err).unwrap();
    (status, err)
}

/// `rawpv convert FILE` of a finished file.
fn convert_file(path: &Path) -> String {
    let out = rawpv().arg("convert").arg(path).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The tool events of a Claude Code transcript, read from its records (not through rawpv):
/// `(frame type, tool_use id)` in line order.
fn transcript_calls(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        let Some(blocks) = r["message"]["content"].as_array() else {
            continue;
        };
        for b in blocks {
            match b["type"].as_str() {
                Some("tool_use") => out.push((
                    "tool.invoke.request".to_owned(),
                    b["id"].as_str().unwrap().to_owned(),
                )),
                Some("tool_result") => out.push((
                    "tool.invoke.result".to_owned(),
                    b["tool_use_id"].as_str().unwrap().to_owned(),
                )),
                _ => {}
            }
        }
    }
    out
}

/// The tool events of RAWP NDJSON: `(type, invocation_id)` in order.
fn served_calls(ndjson: &str) -> Vec<(String, String)> {
    ndjson
        .lines()
        .filter_map(|l| {
            let f: Value = serde_json::from_str(l).unwrap();
            let t = f["type"].as_str()?;
            t.starts_with("tool.invoke.").then(|| {
                (
                    t.to_owned(),
                    f["payload"]["invocation_id"].as_str().unwrap().to_owned(),
                )
            })
        })
        .filter(|(t, _)| t != "tool.invoke.stream")
        .collect()
}

/// Every call once: one request, then one result.
fn assert_each_call_once_in_order(calls: &[(String, String)]) {
    let mut state = std::collections::HashMap::new();
    for (t, id) in calls {
        let s = state.entry(id.clone()).or_insert(0);
        match (t.as_str(), *s) {
            ("tool.invoke.request", 0) => *s = 1,
            ("tool.invoke.result", 1) => *s = 2,
            _ => panic!("{t} of {id} in state {s}"),
        }
    }
    assert!(state.values().all(|s| *s == 2), "{state:?}");
}

/// The transcript in `n` pieces cut at byte offsets (most of them mid-line).
fn pieces(text: &[u8], n: usize) -> Vec<&[u8]> {
    let cuts: Vec<usize> = (0..=n).map(|k| text.len() * k / n).collect();
    cuts.windows(2).map(|w| &text[w[0]..w[1]]).collect()
}

/// A second process appends `chunks` to `file`, pausing between them.
fn append_in_a_process(file: &Path, chunks: &[PathBuf]) -> Child {
    Command::new("sh")
        .arg("-c")
        .arg(r#"f="$1"; shift; for c in "$@"; do cat "$c" >> "$f"; sleep 0.15; done"#)
        .arg("sh")
        .arg(file)
        .args(chunks)
        .spawn()
        .unwrap()
}

fn write_chunks(dir: &Path, parts: &[&[u8]]) -> Vec<PathBuf> {
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let path = dir.join(format!("chunk{i:02}"));
            std::fs::write(&path, p).unwrap();
            path
        })
        .collect()
}

#[test]
fn follow_relays_an_appended_transcript_to_a_convert_client_exactly() {
    let Some(cc) = corpus::dir("claude-code") else {
        return;
    };
    let source = std::fs::read(cc.join(TRANSCRIPT)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.jsonl");
    let parts = pieces(&source, 9);
    // Writes that end mid-line: the server must wait for the rest of the line.
    assert!(
        parts[..parts.len() - 1]
            .iter()
            .filter(|p| p.last() != Some(&b'\n'))
            .count()
            >= 6
    );
    // The first piece is there before the server starts (the backlog a client gets at once).
    std::fs::write(&live, parts[0]).unwrap();
    let chunks = write_chunks(dir.path(), &parts[1..]);

    let mut server = Server::start(&[OsStr::new("--follow"), live.as_os_str()]);
    let out = dir.path().join("client.ndjson");
    let c = client(&format!("ws://{}/ws", server.addr), &out);
    server.wait_log(
        |l| l.contains("client 1 connected (WebSocket, from frame 1)"),
        "client",
    );
    let mut writer = append_in_a_process(&live, &chunks);
    assert!(wait_child(&mut writer, "the writer").success());
    server.signal("INT");
    let (status, err) = finish_client(c);
    assert!(status.success(), "client: {status:?} {err}");
    let (status, log) = server.wait();
    assert!(status.success(), "server: {status:?} {log:?}");
    assert_eq!(std::fs::read(&live).unwrap(), source);

    let got = std::fs::read_to_string(&out).unwrap();
    let want = convert_file(&live);
    // Every call, in the transcript's order, each request once and then its result once.
    let calls = served_calls(&got);
    assert_eq!(
        calls,
        transcript_calls(std::str::from_utf8(&source).unwrap())
    );
    assert_eq!(calls.len(), 152);
    assert_each_call_once_in_order(&calls);
    // And everything else: the same output as converting the finished file.
    assert_eq!(got.lines().count(), 390);
    assert_eq!(got, want);
    assert!(
        log.iter().any(|l| l == "rawpv: served 390 frames"),
        "{log:?}"
    );
}

/// Frames the resume test's first client takes before it drops.
const N: usize = 40;

/// A frame as `rawpv convert` writes it, without the server's `metadata.stream_index`.
fn frame_value(line: &str) -> Value {
    let mut f = rawpv::protocol::parse_line(1, line).unwrap();
    f.envelope.metadata.remove("stream_index");
    f.to_json()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_drops_mid_stream_resumes_after_n_without_loss_or_doubles() {
    use futures::StreamExt;
    let Some(cc) = corpus::dir("claude-code") else {
        return;
    };
    let source = std::fs::read(cc.join(TRANSCRIPT)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.jsonl");
    let parts = pieces(&source, 3);
    std::fs::write(&live, parts[0]).unwrap();
    let chunks = write_chunks(dir.path(), &parts[1..]);
    let mut server = Server::start(&[OsStr::new("--follow"), live.as_os_str()]);

    // A raw WebSocket client takes the first N frames and drops the connection.
    let (mut ws, _) = tokio::time::timeout(
        WAIT,
        tokio_tungstenite::connect_async(format!("ws://{}/ws", server.addr)),
    )
    .await
    .unwrap()
    .unwrap();
    let mut first = Vec::new();
    let mut indexes = Vec::new();
    while first.len() < N {
        let m = tokio::time::timeout(WAIT, ws.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if let tokio_tungstenite::tungstenite::Message::Text(t) = m {
            let v: Value = serde_json::from_str(t.as_str()).unwrap();
            indexes.push(v["metadata"]["stream_index"].as_u64().unwrap());
            first.push(frame_value(t.as_str()));
        }
    }
    drop(ws);
    assert_eq!(indexes, (1..=N as u64).collect::<Vec<_>>());

    // The rest is written while it is away.
    let mut writer = append_in_a_process(&live, &chunks);
    assert!(tokio::task::block_in_place(|| wait_child(&mut writer, "the writer")).success());
    // It comes back over SSE, after frame N; the server is stopped once it is streaming.
    let out = dir.path().join("rest.ndjson");
    let c = client(&format!("http://{}/events?after={N}", server.addr), &out);
    tokio::task::block_in_place(|| {
        server.wait_log(
            |l| l.contains("connected (SSE, from frame 41)"),
            "the resumed client",
        );
        server.signal("INT");
    });
    let (status, err) = tokio::task::block_in_place(|| finish_client(c));
    assert!(status.success(), "client: {status:?} {err}");
    let (status, log) = tokio::task::block_in_place(|| server.wait());
    assert!(status.success(), "server: {status:?} {log:?}");

    let rest = std::fs::read_to_string(&out).unwrap();
    let mut got = first;
    got.extend(rest.lines().map(frame_value));
    let want: Vec<Value> = convert_file(&live).lines().map(frame_value).collect();
    assert_eq!(got.len(), want.len());
    assert_eq!(got, want);
}

/// `a.ndjson` names its session from its second frame; `b.ndjson` names none, has a tie with
/// `a` and a timestamp going back in time.
const A: &str = r#"{"type":"tool.catalog.publish","payload":{"tools":[{"name":"Bash"}]}}
{"type":"tool.invoke.request","session_id":"5f0c7d2e-3b1a-4c8e-9d6f-2a4b6c8e0f11","timestamp":"2026-01-01T10:00:00.000Z","payload":{"invocation_id":"a1","tool_name":"Bash","input":{"command":"ls"}}}
{"type":"tool.invoke.result","session_id":"5f0c7d2e-3b1a-4c8e-9d6f-2a4b6c8e0f11","timestamp":"2026-01-01T10:00:02.000Z","payload":{"invocation_id":"a1","status":"success","output":"x"}}
{"type":"agent.text.delta","payload":{"delta":"after a1"}}
{"type":"tool.invoke.request","session_id":"5f0c7d2e-3b1a-4c8e-9d6f-2a4b6c8e0f11","timestamp":"2026-01-01T10:00:05.000Z","payload":{"invocation_id":"a2","tool_name":"Bash","input":{"command":"pwd"}}}
"#;
const B: &str = r#"{"type":"tool.invoke.request","timestamp":"2026-01-01T10:00:01.000Z","payload":{"invocation_id":"b1","tool_name":"Read","input":{"path":"x"}}}
{"type":"tool.invoke.result","timestamp":"2026-01-01T10:00:02.000Z","payload":{"invocation_id":"b1","status":"success","output":"y"}}
{"type":"agent.text.delta","timestamp":"2026-01-01T09:59:00.000Z","payload":{"delta":"clock went back"}}
{"type":"tool.invoke.request","timestamp":"2026-01-01T10:00:06.000Z","payload":{"invocation_id":"b2","tool_name":"Read","input":{"path":"z"}}}
"#;

#[test]
fn two_recordings_are_one_stream_in_timestamp_order_with_a_session_each() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.ndjson"), dir.path().join("b.ndjson"));
    std::fs::write(&a, A).unwrap();
    std::fs::write(&b, B).unwrap();
    let sa = "5f0c7d2e-3b1a-4c8e-9d6f-2a4b6c8e0f11";
    let sb = rawpv::serve::inputs::input_session_id(&b);
    assert_ne!(sb, sa);
    // (input, line, the session it is served in): the whole expected order.
    let order = [
        (&a, 1, sa),  // no timestamp, before a's first: first; a's session (the first it names)
        (&a, 2, sa),  // 10:00:00
        (&b, 1, &sb), // 10:00:01
        (&a, 3, sa),  // 10:00:02, tie with b's: the first input first
        (&a, 4, sa),  // no timestamp: right after its predecessor
        (&b, 2, &sb), // 10:00:02
        (&b, 3, &sb), // 09:59: back in time, stays after its predecessor
        (&a, 5, sa),  // 10:00:05
        (&b, 4, &sb), // 10:00:06
    ];
    let want: Vec<Value> = order
        .iter()
        .map(|(file, line, session)| {
            let text = if *file == &a { A } else { B };
            let mut f =
                rawpv::protocol::parse_line(*line, text.lines().nth(*line as usize - 1).unwrap())
                    .unwrap();
            f.envelope.session_id = Some((*session).to_owned());
            f.to_json()
        })
        .collect();

    let mut server = Server::start(&[
        a.as_os_str(),
        b.as_os_str(),
        OsStr::new("--speed"),
        OsStr::new("1000"),
    ]);
    assert!(
        server
            .log
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("serving 9 frames from 2 files")),
        "{:?}",
        server.log.lock().unwrap()
    );
    for url in [
        format!("ws://{}/ws", server.addr),
        format!("http://{}/events", server.addr),
    ] {
        let out = dir.path().join("out.ndjson");
        let (status, err) = finish_client(client(&url, &out));
        assert!(status.success(), "{url}: {status:?} {err}");
        let got: Vec<Value> = std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(got, want, "{url}");
    }
    server.signal("TERM");
    let (status, log) = server.wait();
    assert!(status.success(), "{status:?} {log:?}");
}

#[test]
fn sigterm_closes_a_paced_stream_normally() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.ndjson");
    // Ten calls a minute apart: 18 s of playback (each gap capped at 2 s).
    let text: String = (0..10)
        .map(|m| {
            format!(
                r#"{{"type":"tool.invoke.request","timestamp":"2026-01-01T10:{m:02}:00.000Z","payload":{{"invocation_id":"c{m}","tool_name":"Bash"}}}}"#
            ) + "\n"
        })
        .collect();
    std::fs::write(&a, text).unwrap();
    let mut server = Server::start(&[a.as_os_str()]);
    let out = dir.path().join("out.ndjson");
    let c = client(&format!("ws://{}/ws", server.addr), &out);
    server.wait_log(|l| l.contains("client 1 connected"), "client");
    server.signal("TERM");
    let (status, err) = finish_client(c);
    assert!(status.success(), "{status:?} {err}");
    let (status, log) = server.wait();
    assert!(status.success(), "{status:?} {log:?}");
    assert!(
        log.iter()
            .any(|l| l == "rawpv: SIGTERM: closing the client streams"),
        "{log:?}"
    );
    // What the client got is the recording's start, closed normally before its end.
    let got = std::fs::read_to_string(&out).unwrap();
    let all = convert_file(&a);
    assert!(all.starts_with(&got), "{got}");
    assert!(got.lines().count() < 10, "{got}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_from_before_the_retained_window_is_refused() {
    use rawpv::serve::{ServeConfig, Stream, serve_stream};
    use rawpv::source::{NetConfig, SourceKind, load_input_with};
    let stream = Stream::live(1000);
    for n in 1..=50u64 {
        let line = format!(
            r#"{{"type":"tool.invoke.request","payload":{{"invocation_id":"c{n}","tool_name":"Bash"}}}}"#
        );
        stream.push(&rawpv::protocol::parse_line(n, &line).unwrap(), 1 << 20);
    }
    let (oldest, bytes) = stream.retained();
    assert!(oldest > 30 && bytes <= 1000, "{oldest} {bytes}");
    stream.end();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    tokio::spawn(serve_stream(
        listener,
        stream,
        ServeConfig::default(),
        stop.clone(),
    ));
    let net = NetConfig {
        max_attempts: Some(1),
        ..NetConfig::default()
    };
    for url in [
        format!("ws://{addr}/ws?after=3"),
        format!("http://{addr}/events?after=3"),
    ] {
        let r = tokio::time::timeout(WAIT, load_input_with(&SourceKind::Url(url.clone()), &net))
            .await
            .unwrap();
        let e = r.unwrap_err().to_string();
        assert!(e.contains("410 Gone"), "{url}: {e}");
    }
    // A fresh client starts with the oldest frame kept; a resume inside the window is exact.
    for (url, from) in [
        (format!("ws://{addr}/ws"), oldest + 1),
        (
            format!("http://{addr}/events?after={}", oldest + 2),
            oldest + 3,
        ),
    ] {
        let loaded =
            tokio::time::timeout(WAIT, load_input_with(&SourceKind::Url(url.clone()), &net))
                .await
                .unwrap()
                .unwrap();
        let ids: Vec<String> = loaded
            .items
            .iter()
            .map(|d| match d {
                rawpv::import::Decoded::Frame(f) => f.invocation_id().unwrap().to_owned(),
                other => panic!("{other:?}"),
            })
            .collect();
        let want: Vec<String> = (from..=50).map(|n| format!("c{n}")).collect();
        assert_eq!(ids, want, "{url}");
    }
    stop.cancel();
}

/// A RAWP request frame, `session` when given.
fn request(id: &str, session: Option<&str>) -> String {
    let sid = session.map_or(String::new(), |s| format!(r#","session_id":"{s}""#));
    format!(
        r#"{{"type":"tool.invoke.request"{sid},"payload":{{"invocation_id":"{id}","tool_name":"Bash","input":{{"command":"echo {id}"}}}}}}"#
    ) + "\n"
}

#[test]
fn several_followed_files_keep_their_own_order_and_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.ndjson"), dir.path().join("b.ndjson"));
    let sa = "0b9f4c3e-8d2a-4f6b-a1c7-5e3d9b2f7a60";
    let a_lines: Vec<String> = (1..=30)
        .map(|n| request(&format!("a{n}"), Some(sa)))
        .collect();
    let b_lines: Vec<String> = (1..=30).map(|n| request(&format!("b{n}"), None)).collect();
    std::fs::write(&a, &a_lines[0]).unwrap();
    std::fs::write(&b, "").unwrap();
    let mut server = Server::start(&[OsStr::new("-f"), a.as_os_str(), b.as_os_str()]);
    let out = dir.path().join("out.ndjson");
    let convert = client(&format!("ws://{}/ws", server.addr), &out);
    server.wait_log(|l| l.contains("client 1 connected"), "client");
    // Alternating appends to both files, in pieces of three lines.
    let mut chunks = Vec::new();
    let (mut targets, mut piece) = (Vec::new(), 0);
    for n in 0..10 {
        for (file, lines, from) in [(&a, &a_lines, 1), (&b, &b_lines, 0)] {
            let part: String = lines[(from + 3 * n).min(30)..(from + 3 * n + 3).min(30)].concat();
            let path = dir.path().join(format!("c{piece:03}"));
            piece += 1;
            std::fs::write(&path, part).unwrap();
            chunks.push(path);
            targets.push(file.clone());
        }
    }
    let script = r#"while [ $# -gt 0 ]; do cat "$2" >> "$1"; shift 2; sleep 0.05; done"#;
    let mut writer = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg("sh")
        .args(
            targets
                .iter()
                .zip(&chunks)
                .flat_map(|(t, c)| [t.as_os_str(), c.as_os_str()]),
        )
        .spawn()
        .unwrap();
    assert!(wait_child(&mut writer, "the writer").success());
    server.signal("INT");
    let (status, err) = finish_client(convert);
    assert!(status.success(), "{status:?} {err}");
    let (status, log) = server.wait();
    assert!(status.success(), "{status:?} {log:?}");

    let got: Vec<Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got.len(), 60);
    // Each file's frames, whole and in its order, in its own session; b names none, so its
    // frames carry the id derived from its path.
    let sb = rawpv::serve::inputs::input_session_id(&b);
    for (lines, session) in [(&a_lines, sa), (&b_lines, sb.as_str())] {
        let mine: Vec<&Value> = got.iter().filter(|f| f["session_id"] == session).collect();
        let want: Vec<Value> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let mut f = rawpv::protocol::parse_line(i as u64 + 1, l.trim_end()).unwrap();
                f.envelope.session_id = Some(session.to_owned());
                f.to_json()
            })
            .collect();
        assert_eq!(mine, want.iter().collect::<Vec<_>>());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_followed_file_is_served_again_as_new_frames() {
    use futures::StreamExt;
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.ndjson");
    let old: String = (1..=3).map(|n| request(&format!("old{n}"), None)).collect();
    std::fs::write(&live, &old).unwrap();
    let mut server = Server::start(&[OsStr::new("--follow"), live.as_os_str()]);
    let out = dir.path().join("out.ndjson");
    let c = client(&format!("ws://{}/ws", server.addr), &out);
    // A second client sees the three frames served before the file is cut.
    let (mut ws, _) = tokio::time::timeout(
        WAIT,
        tokio_tungstenite::connect_async(format!("ws://{}/ws", server.addr)),
    )
    .await
    .unwrap()
    .unwrap();
    let mut seen = Vec::new();
    let mut next_index = async |seen: &mut Vec<(u64, String)>| loop {
        let m = tokio::time::timeout(WAIT, ws.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if let tokio_tungstenite::tungstenite::Message::Text(t) = m {
            let v: Value = serde_json::from_str(t.as_str()).unwrap();
            seen.push((
                v["metadata"]["stream_index"].as_u64().unwrap(),
                v["payload"]["invocation_id"].as_str().unwrap().to_owned(),
            ));
            return;
        }
    };
    for _ in 0..3 {
        next_index(&mut seen).await;
    }
    // Both clients are streaming before the file is cut.
    tokio::task::block_in_place(|| {
        server.wait_log(|l| l.contains("client 2 connected"), "the second client");
    });
    // Cut to nothing and written again, shorter than before.
    std::fs::write(&live, request("new1", None) + &request("new2", None)).unwrap();
    for _ in 0..2 {
        next_index(&mut seen).await;
    }
    let ids = |names: &[&str]| -> Vec<(u64, String)> {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| (i as u64 + 1, (*n).to_owned()))
            .collect()
    };
    let all = ["old1", "old2", "old3", "new1", "new2"];
    // New indexes after the old ones: nothing served is taken back or renumbered.
    assert_eq!(seen, ids(&all));
    tokio::task::block_in_place(|| {
        server.wait_log(|l| l.contains("file truncated"), "the truncation warning");
        server.signal("INT");
    });
    let (status, err) = tokio::task::block_in_place(|| finish_client(c));
    assert!(status.success(), "{status:?} {err}");
    let (status, log) = tokio::task::block_in_place(|| server.wait());
    assert!(status.success(), "{status:?} {log:?}");
    let got: Vec<String> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["payload"]["invocation_id"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(got, all);
    assert!(
        log.iter().any(|l| l.contains("file truncated")
            && l.contains("served again from its start, as new frames after frame 3")),
        "{log:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_falls_behind_the_window_is_closed_and_told_on_resume() {
    use futures::StreamExt;
    use rawpv::serve::{ServeConfig, Stream, serve_stream};
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
    // A window of about 1 MiB; 64 KiB frames.
    let stream = Stream::live(1 << 20);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    tokio::spawn(serve_stream(
        listener,
        stream.clone(),
        ServeConfig::default(),
        stop.clone(),
    ));
    let (mut ws, _) = tokio::time::timeout(
        WAIT,
        tokio_tungstenite::connect_async(format!("ws://{addr}/ws")),
    )
    .await
    .unwrap()
    .unwrap();
    let big = "x".repeat(64 << 10);
    let frame = |n: u64| {
        let line =
            format!(r#"{{"type":"agent.text.delta","payload":{{"delta":"{big}","n":{n}}}}}"#);
        rawpv::protocol::parse_line(n, &line).unwrap()
    };
    let index = |m: &Message| -> Option<u64> {
        let Message::Text(t) = m else { return None };
        let v: Value = serde_json::from_str(t.as_str()).unwrap();
        v["metadata"]["stream_index"].as_u64()
    };
    // Frame 1 reaches the client, so its stream has started.
    stream.push(&frame(1), 1 << 20);
    let mut got = Vec::new();
    while got.is_empty() {
        let m = tokio::time::timeout(WAIT, ws.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        got.extend(index(&m));
    }
    // Then it reads nothing while 1,999 more (125 MiB, far over any socket buffer) go in.
    for n in 2..=2000u64 {
        stream.push(&frame(n), 1 << 20);
    }
    let close = loop {
        match tokio::time::timeout(WAIT, ws.next()).await.unwrap() {
            Some(Ok(Message::Close(c))) => break c,
            Some(Ok(m)) => got.extend(index(&m)),
            other => panic!("{other:?}"),
        }
    };
    // What it got is the stream's start without a gap, then an abnormal close that says why.
    let close = close.unwrap();
    assert_eq!(close.code, CloseCode::Policy, "{close:?}");
    assert!(close.reason.contains("--retain-bytes"), "{close:?}");
    assert!(got.len() < 2000, "{}", got.len());
    assert_eq!(got, (1..=got.len() as u64).collect::<Vec<_>>());
    // Resuming from there is refused: those frames are gone.
    let url = format!("ws://{addr}/ws?after={}", got.len());
    let err = tokio_tungstenite::connect_async(url).await.unwrap_err();
    assert!(
        matches!(&err, tokio_tungstenite::tungstenite::Error::Http(r) if r.status() == 410),
        "{err:?}"
    );
    stop.cancel();
}

#[test]
fn a_relay_killed_and_restarted_mid_stream_loses_and_doubles_nothing() {
    let Some(cc) = corpus::dir("claude-code") else {
        return;
    };
    let source = std::fs::read(cc.join(TRANSCRIPT)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.jsonl");
    let parts = pieces(&source, 2);
    std::fs::write(&live, parts[0]).unwrap();
    let args = [OsStr::new("--follow"), live.as_os_str()];
    let mut first = Server::start(&args);
    let addr = first.addr.clone();
    let out = dir.path().join("client.ndjson");
    let c = client(&format!("ws://{addr}/ws"), &out);
    first.wait_log(|l| l.contains("client 1 connected"), "client");
    // Killed (no close frame): the client reconnects with ?after= the last index it got.
    first.child.kill().unwrap();
    wait_child(&mut first.child, "the killed server");
    std::fs::write(dir.path().join("rest"), parts[1]).unwrap();
    let mut writer = append_in_a_process(&live, &[dir.path().join("rest")]);
    assert!(wait_child(&mut writer, "the writer").success());
    // The new relay decodes the file from its start: the same frames get the same indexes.
    let mut second = Server::start_on(&addr, &args);
    // Usually from the middle of the stream (the first half went out at once); from frame 1 if
    // the kill came first, which the assertions below hold for too.
    // (Measured: from frame 181, after the 180 frames of the first half.)
    second.wait_log(
        |l| l.contains("client 1 connected (WebSocket, from frame "),
        "resume",
    );
    second.signal("INT");
    let (status, err) = finish_client(c);
    assert!(status.success(), "client: {status:?} {err}");
    assert!(err.contains("retry 1 of 6"), "{err}");
    let (status, log) = second.wait();
    assert!(status.success(), "server: {status:?} {log:?}");
    let got = std::fs::read_to_string(&out).unwrap();
    assert_each_call_once_in_order(&served_calls(&got));
    assert_eq!(got, convert_file(&live));
}
