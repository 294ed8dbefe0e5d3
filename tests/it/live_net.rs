//! Network sources against `rawpv serve`: WebSocket and SSE end with the same session as opening
//! the file; a killed and restarted server loses and doubles nothing; a wrong token is an auth
//! error (and `rawpv print URL` exits 2); keepalive: a server that goes silent is dropped after the
//! read timeout and resumed, while pings, pongs and heartbeat comments keep an idle stream open.
//! All on 127.0.0.1 with ephemeral ports.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use pretty_assertions::assert_eq;
use rawpv::import::Loaded;
use rawpv::serve::{Recording, ServeConfig, serve};
use rawpv::session::Session;
use rawpv::source::{
    NetConfig, SourceError, SourceKind, SourceMsg, SourceState, Token, load_input, load_input_with,
    spawn_source_with,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(20);

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/live_paced_36.ndjson")
}

async fn file_loaded() -> Loaded {
    load_input(&SourceKind::File(fixture())).await.unwrap()
}

/// Starts an in-process server; returns its address and a stop token.
async fn start(speed: f64, token: Option<&str>) -> (String, CancellationToken) {
    let (rec, warnings) = Recording::from_loaded(&file_loaded().await, 16 << 20);
    assert!(warnings.is_empty(), "{warnings:?}");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let stop = CancellationToken::new();
    let cfg = ServeConfig {
        speed,
        token: token.and_then(Token::new),
        max_clients: 8,
        ..ServeConfig::default()
    };
    tokio::spawn(serve(listener, rec, cfg, stop.clone()));
    (addr, stop)
}

fn net(token: Option<&str>) -> NetConfig {
    NetConfig {
        token: token.and_then(Token::new),
        backoff_initial: Duration::from_millis(50),
        backoff_max: Duration::from_millis(200),
        ..NetConfig::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ws_and_sse_end_with_the_same_session_as_the_file() {
    let expected = Session::from_decoded(file_loaded().await.items);
    assert_eq!(expected.invocations.len(), 8);
    let (addr, stop) = start(20.0, Some("tok")).await;
    for url in [
        format!("ws://{addr}/ws"),
        format!("http://{addr}/events"),
        format!("http://{addr}/sse"),
    ] {
        let loaded = tokio::time::timeout(
            WAIT,
            load_input_with(&SourceKind::Url(url.clone()), &net(Some("tok"))),
        )
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{url}: {e}"));
        let got = Session::from_decoded(loaded.items);
        assert_eq!(got.invocations, expected.invocations, "{url}");
        assert_eq!(got, expected, "{url}");
    }
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_query_skips_what_was_seen() {
    let (addr, stop) = start(50.0, None).await;
    let loaded = load_input_with(
        &SourceKind::Url(format!("ws://{addr}/ws?after=30")),
        &net(None),
    )
    .await
    .unwrap();
    // Frames 31..=36 only, numbered from the `after` in the URL.
    let lines: Vec<u64> = loaded
        .items
        .iter()
        .map(|d| match d {
            rawpv::import::Decoded::Frame(f) => f.origin.line,
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(lines, (31..=36).collect::<Vec<u64>>());
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_token_is_an_auth_error_without_retry() {
    let (addr, stop) = start(50.0, Some("right")).await;
    for url in [format!("ws://{addr}/ws"), format!("http://{addr}/events")] {
        for token in [Some("wrong"), None] {
            let r = tokio::time::timeout(
                WAIT,
                load_input_with(&SourceKind::Url(url.clone()), &net(token)),
            )
            .await
            .unwrap();
            assert!(
                matches!(&r, Err(SourceError::Auth { reason, .. }) if reason.contains("401")),
                "{url}: {r:?}"
            );
        }
    }

    // End to end: `rawpv print URL --token-file F` exits 2 with a clear message; the right
    // token prints the feed.
    let dir = tempfile::tempdir().unwrap();
    let wrong = dir.path().join("wrong");
    std::fs::write(&wrong, "wrong\n").unwrap();
    let right = dir.path().join("right");
    std::fs::write(&right, "right\n").unwrap();
    let url = format!("http://{addr}/events");
    let out = tokio::task::spawn_blocking({
        let (url, wrong) = (url.clone(), wrong.clone());
        move || {
            assert_cmd::Command::cargo_bin("rawpv")
                .unwrap()
                .env_remove("RAWP_TOKEN")
                .args(["print", &url, "--token-file"])
                .arg(&wrong)
                .timeout(WAIT)
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("authentication failed") && err.contains("401"),
        "{err}"
    );
    assert!(!err.contains("wrong\n") && !err.contains("Bearer"), "{err}");
    let out = tokio::task::spawn_blocking(move || {
        assert_cmd::Command::cargo_bin("rawpv")
            .unwrap()
            .env_remove("RAWP_TOKEN")
            .args(["print", &format!("ws://{addr}/ws"), "--token-file"])
            .arg(&right)
            .timeout(WAIT)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).lines().count() >= 9);
    stop.cancel();
}

/// `rawpv serve` as a child process; returns it and its bound address (read from stderr).
fn spawn_server(listen: &str, speed: &str) -> (Child, String) {
    spawn_server_with(listen, speed, &[])
}

/// [`spawn_server`] with more `rawpv serve` arguments.
fn spawn_server_with(listen: &str, speed: &str, extra: &[&str]) -> (Child, String) {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rawpv"))
        .args(["serve"])
        .arg(fixture())
        .args(["--listen", listen, "--speed", speed])
        .args(extra)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    // Warnings (skipped frames) come first; the address line says " on ".
    while reader.read_line(&mut line).unwrap() > 0 && line.starts_with("rawpv: warning:") {
        line.clear();
    }
    // Keep reading stderr so a chatty server never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    let addr = line
        .split(" on ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    (child, addr)
}

async fn kill_and_restart(scheme_path: &str) {
    let expected = Session::from_decoded(file_loaded().await.items);
    kill_and_restart_with(scheme_path, &[], &expected).await;
}

/// A source on a `rawpv serve EXTRA` child that is killed and restarted after 10 items ends
/// with `expected`.
async fn kill_and_restart_with(scheme_path: &str, extra: &[&str], expected: &Session) {
    // 36 frames 25 ms apart at speed 0.5: ~1.8 s of playback.
    let (mut child, addr) = spawn_server_with("127.0.0.1:0", "0.5", extra);
    let url = format!("{}{addr}{}", scheme_path.split('|').next().unwrap(), {
        scheme_path.split('|').nth(1).unwrap()
    });
    let (tx, mut rx) = mpsc::channel(64);
    let cancel = CancellationToken::new();
    spawn_source_with(SourceKind::Url(url.clone()), net(None), tx, cancel.clone());
    let mut items = Vec::new();
    let mut states = Vec::new();
    let mut restarted = None;
    loop {
        let msg = tokio::time::timeout(WAIT, rx.recv())
            .await
            .expect("no message in time")
            .expect("source vanished");
        match msg {
            SourceMsg::Batch(b) => items.extend(b),
            SourceMsg::State(s) => states.push(s),
            SourceMsg::Format(_) | SourceMsg::Input(_) => {}
            SourceMsg::Eof => break,
            SourceMsg::Failed(e) => panic!("{url}: {e}"),
        }
        if restarted.is_none() && items.len() >= 10 {
            child.kill().unwrap();
            child.wait().unwrap();
            let (c, a) = spawn_server_with(&addr, "0.5", extra);
            assert_eq!(a, addr);
            restarted = Some(c);
        }
    }
    assert!(
        states
            .iter()
            .any(|s| matches!(s, SourceState::Reconnecting { attempt: 1, .. })),
        "{url}: {states:?}"
    );
    let got = Session::from_decoded(items);
    assert_eq!(got.invocations, expected.invocations, "{url}");
    assert_eq!(&got, expected, "{url}");
    if let Some(mut c) = restarted {
        let _ = c.kill();
        let _ = c.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ws_survives_a_server_restart_without_loss_or_doubles() {
    kill_and_restart("ws://|/ws").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_survives_a_server_restart_without_loss_or_doubles() {
    kill_and_restart("http://|/events").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ws_resumes_exactly_when_the_server_skipped_frames() {
    // Issue 14.5: with frames skipped by --max-frame-bytes, `?after=N` was short by the number
    // skipped and the resumed stream doubled frames. What an unbroken SSE read of the same
    // server gives is the reference (SSE's ids were always the server's index).
    let cap = ["--max-frame-bytes", "250"];
    let (mut child, addr) = spawn_server_with("127.0.0.1:0", "50", &cap);
    let reference = load_input_with(
        &SourceKind::Url(format!("http://{addr}/events")),
        &net(None),
    )
    .await
    .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let frames = reference.items.len();
    assert!(
        frames > 10 && frames < 36,
        "some frames are skipped: {frames}"
    );
    let expected = Session::from_decoded(reference.items);
    kill_and_restart_with("ws://|/ws", &cap, &expected).await;
}

/// A server that completes every handshake and drops the connection before any frame (SSE:
/// after one event that is not a frame).
async fn accept_and_drop_server(ws: bool) -> String {
    let (addr, _) = test_server(move |_, mut tcp, _| async move {
        if ws {
            let conn = tokio_tungstenite::accept_async(tcp).await;
            drop(conn);
        } else {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut buf = [0u8; 4096];
            let _ = tcp.read(&mut buf).await;
            let _ = tcp
                .write_all(
                    // One event that is not a frame, then the drop: it moved the resume
                    // position, which reset the attempt count (second attack of issue 14).
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\ndata: not a frame\n\n",
                )
                .await;
        }
    })
    .await;
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_accepts_and_drops_is_given_up_on() {
    // Issue 14.6: the attempt counter reset on every connection, so one-shot commands said
    // "retry 1 of 6" forever. Only a connection that delivered frames resets it now.
    for ws in [true, false] {
        let addr = accept_and_drop_server(ws).await;
        let url = if ws {
            format!("ws://{addr}/ws")
        } else {
            format!("http://{addr}/events")
        };
        let cfg = NetConfig {
            max_attempts: Some(2),
            ..net(None)
        };
        let r = tokio::time::timeout(WAIT, load_input_with(&SourceKind::Url(url.clone()), &cfg))
            .await
            .unwrap_or_else(|_| panic!("{url}: never gave up"));
        assert!(
            matches!(&r, Err(SourceError::Other(m)) if m.contains("gave up after 3 failed attempts in a row (2 retries)")),
            "{url}: {r:?}"
        );
    }
}

/// An HTTP server answers the first request `429` with `Retry-After: 1`, the next with one
/// frame and `event: end`: the client waits the second it was asked for (issue 14.16).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_is_honoured_on_429() {
    let (addr, _) = test_server(|conn, mut tcp, _| async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut buf = [0u8; 4096];
        let _ = tcp.read(&mut buf).await;
        let reply = if conn == 0 {
            "HTTP/1.1 429 Too Many Requests\r\nretry-after: 1\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_owned()
        } else {
            let body = format!("id: 1\ndata: {}\n\nevent: end\ndata:\n\n", frame(1));
            format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
        };
        let _ = tcp.write_all(reply.as_bytes()).await;
    })
    .await;
    let start = std::time::Instant::now();
    let (seqs, reasons) = run_source(format!("http://{addr}/events"), net(None)).await;
    assert_eq!(seqs, [1]);
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(
        reasons[0].contains("429") && reasons[0].contains("asked to wait 1.0s"),
        "{reasons:?}"
    );
    // The backoff of these tests is 50 ms; the server asked for a second.
    assert!(
        start.elapsed() >= Duration::from_millis(950),
        "{:?}",
        start.elapsed()
    );
}

/// `openssl s_server` on a loopback port with a fresh self-signed certificate; `None` when the
/// `openssl` tool is missing (CI installs it, `.ci/run`).
fn self_signed_tls_server() -> Option<(Child, u16, tempfile::TempDir)> {
    let dir = tempfile::tempdir().unwrap();
    let (key, cert) = (dir.path().join("k.pem"), dir.path().join("c.pem"));
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args(["-nodes", "-days", "1", "-subj", "/CN=localhost", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?;
    assert!(made.success(), "openssl req failed");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new("openssl")
        .args(["s_server", "-quiet", "-www", "-accept"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("-cert")
        .arg(&cert)
        .arg("-key")
        .arg(&key)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + WAIT;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "s_server never listened"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Some((child, port, dir))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_certificate_is_final_and_says_why() {
    // Issue 14.16: a certificate failure printed only "error sending request for url" and was
    // retried six times as if transient.
    let Some((mut server, port, _dir)) = self_signed_tls_server() else {
        assert!(std::env::var_os("CI").is_none(), "CI must have openssl");
        eprintln!("skipped: no openssl to run a TLS server");
        return;
    };
    for url in [
        format!("https://localhost:{port}/events"),
        format!("wss://localhost:{port}/ws"),
    ] {
        let cfg = NetConfig {
            max_attempts: Some(5),
            ..net(None)
        };
        let r = tokio::time::timeout(WAIT, load_input_with(&SourceKind::Url(url.clone()), &cfg))
            .await
            .unwrap();
        let Err(SourceError::Other(m)) = &r else {
            panic!("{url}: {r:?}");
        };
        assert!(
            m.contains("the TLS certificate was refused") && m.contains("invalid peer certificate"),
            "{url}: {m}"
        );
        assert!(!m.contains("gave up"), "{url}: retried: {m}");
    }
    let _ = server.kill();
    let _ = server.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_over_the_caps_are_findings_or_skipped_never_a_crash() {
    use rawpv::import::Decoded;
    use rawpv::protocol::ParseErrorKind;
    let loaded = file_loaded().await;
    let sizes: Vec<usize> = std::fs::read_to_string(fixture())
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, l)| {
            // As served: with the frame's index in `metadata.stream_index`.
            let mut v = rawpv::protocol::parse_line(1, l).unwrap().to_json();
            let meta = v
                .as_object_mut()
                .unwrap()
                .entry("metadata")
                .or_insert_with(|| serde_json::json!({}));
            meta.as_object_mut()
                .unwrap()
                .insert("stream_index".into(), serde_json::json!(i + 1));
            v.to_string().len()
        })
        .collect();
    let cap = 200;
    let over: Vec<u64> = (1..)
        .zip(&sizes)
        .filter(|(_, s)| **s > cap)
        .map(|(i, _)| i)
        .collect();
    assert!(!over.is_empty() && over.len() < sizes.len());

    // Client cap: each big frame is a TooLong malformed item at its position; the rest arrive.
    let (addr, stop) = start(50.0, None).await;
    for url in [format!("ws://{addr}/ws"), format!("http://{addr}/events")] {
        let cfg = NetConfig {
            max_frame_bytes: cap,
            ..net(None)
        };
        let got = load_input_with(&SourceKind::Url(url.clone()), &cfg)
            .await
            .unwrap();
        let mut too_long = Vec::new();
        let mut frames = 0;
        for d in &got.items {
            match d {
                Decoded::Malformed(e) if matches!(e.kind, ParseErrorKind::TooLong(_)) => {
                    too_long.push(e.line);
                }
                Decoded::Frame(_) => frames += 1,
                other => panic!("{url}: unexpected {other:?}"),
            }
        }
        assert_eq!(too_long, over, "{url}");
        assert_eq!(frames + too_long.len(), sizes.len(), "{url}");
    }
    stop.cancel();

    // Server cap: big frames are skipped with a warning; the others keep their ids.
    let (rec, warnings) = Recording::from_loaded(&loaded, cap);
    assert_eq!(warnings.len(), over.len());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    let cfg = ServeConfig {
        speed: 50.0,
        token: None,
        max_clients: 2,
        ..ServeConfig::default()
    };
    tokio::spawn(serve(listener, rec, cfg, stop.clone()));
    let expected: Vec<u64> = (1..=sizes.len() as u64)
        .filter(|i| !over.contains(i))
        .collect();
    // Both transports number frames by the server's index (issue 14.5: a WebSocket client
    // counted received messages, so its resume position was short by the skipped frames).
    for url in [format!("http://{addr}/sse"), format!("ws://{addr}/ws")] {
        let got = load_input_with(&SourceKind::Url(url.clone()), &net(None))
            .await
            .unwrap();
        let lines: Vec<u64> = got
            .items
            .iter()
            .map(|d| match d {
                Decoded::Frame(f) => {
                    assert!(
                        !f.envelope.metadata.contains_key("stream_index"),
                        "{url}: the index stays on the wire"
                    );
                    f.origin.line
                }
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(lines, expected, "{url}");
    }
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_limit_unknown_paths_and_upgrade_on_any_path() {
    let (rec, _) = Recording::from_loaded(&file_loaded().await, 16 << 20);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    let cfg = ServeConfig {
        speed: 0.05, // slow: the first stream stays open
        token: None,
        max_clients: 1,
        ..ServeConfig::default()
    };
    tokio::spawn(serve(listener, rec, cfg, stop.clone()));
    let http = reqwest::Client::new();
    let first = http
        .get(format!("http://{addr}/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(first.status().as_u16(), 200);
    assert!(
        first.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let second = http.get(format!("http://{addr}/sse")).send().await.unwrap();
    assert_eq!(second.status().as_u16(), 503);
    drop(first);
    let missing = http
        .get(format!("http://{addr}/nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    // Once the first client is gone its slot frees; WebSocket works on any path.
    let mut ok = false;
    for _ in 0..50 {
        if let Ok((mut ws, _)) =
            tokio_tungstenite::connect_async(format!("ws://{addr}/any/path")).await
        {
            use futures::StreamExt;
            let msg = tokio::time::timeout(WAIT, ws.next()).await.unwrap();
            ok = matches!(msg, Some(Ok(m)) if m.is_text());
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(ok);
    stop.cancel();
}

#[test]
fn serve_warns_on_a_non_loopback_address() {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rawpv"))
        .arg("serve")
        .arg(fixture())
        .args(["--listen", "0.0.0.0:0"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        first.contains("not loopback") && first.contains("--token-file"),
        "{first}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_against_a_plain_server_fails_cleanly_after_bounded_retries() {
    let (addr, stop) = start(50.0, None).await;
    for url in [format!("wss://{addr}/ws"), format!("https://{addr}/events")] {
        let cfg = NetConfig {
            max_attempts: Some(2),
            ..net(None)
        };
        let r = tokio::time::timeout(WAIT, load_input_with(&SourceKind::Url(url.clone()), &cfg))
            .await
            .unwrap();
        assert!(
            matches!(&r, Err(SourceError::Other(m)) if m.contains("gave up after 3 failed attempts in a row (2 retries)")),
            "{url}: {r:?}"
        );
    }
    stop.cancel();
}

// ---------------------------------------------------------------------------------------------
// Keepalive: read timeout, client pings, server heartbeats.

/// Short keepalive settings for the tests: pings every 50 ms, 300 ms read timeout.
fn keepalive(ping: Option<Duration>) -> NetConfig {
    NetConfig {
        ping_interval: ping,
        read_timeout: Some(Duration::from_millis(300)),
        backoff_initial: Duration::from_millis(20),
        backoff_max: Duration::from_millis(50),
        ..NetConfig::default()
    }
}

/// Longer than the read timeout: a stream idle this long must survive only through keepalive.
const IDLE: Duration = Duration::from_millis(700);

fn frame(seq: u64) -> String {
    format!(r#"{{"type":"x-test","seq":{seq},"payload":{{"n":{seq}}}}}"#)
}

/// Runs a source on `url` to its end; returns the frames' `seq`s and the reconnect reasons.
async fn run_source(url: String, cfg: NetConfig) -> (Vec<u64>, Vec<String>) {
    let (tx, mut rx) = mpsc::channel(64);
    let cancel = CancellationToken::new();
    spawn_source_with(SourceKind::Url(url.clone()), cfg, tx, cancel.clone());
    let (mut seqs, mut reasons) = (Vec::new(), Vec::new());
    let until = tokio::time::Instant::now() + WAIT;
    loop {
        let msg = tokio::time::timeout_at(until, rx.recv())
            .await
            .unwrap_or_else(|_| panic!("{url}: no end in time; {seqs:?} {reasons:?}"))
            .expect("source vanished");
        match msg {
            SourceMsg::Batch(b) => {
                for d in b {
                    match d {
                        rawpv::import::Decoded::Frame(f) => seqs.push(f.envelope.seq.unwrap()),
                        other => panic!("{url}: unexpected {other:?}"),
                    }
                }
            }
            SourceMsg::State(SourceState::Reconnecting { reason, .. }) => reasons.push(reason),
            SourceMsg::State(_) | SourceMsg::Format(_) | SourceMsg::Input(_) => {}
            SourceMsg::Eof => break,
            SourceMsg::Failed(e) => panic!("{url}: {e}"),
        }
    }
    cancel.cancel();
    (seqs, reasons)
}

/// What a test server's connections record (request URIs, `Last-Event-ID` headers).
type Seen = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

/// A test server on 127.0.0.1: every accepted connection runs `serve(conn, tcp, seen)` on its own
/// task (`conn` counts from 0). Returns the address and what the connections recorded.
async fn test_server<F, Fut>(serve: F) -> (String, Seen)
where
    F: Fn(usize, tokio::net::TcpStream, Seen) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let seen = Seen::default();
    let recorded = seen.clone();
    tokio::spawn(async move {
        for conn in 0.. {
            let (tcp, _) = listener.accept().await.unwrap();
            tokio::spawn(serve(conn, tcp, seen.clone()));
        }
    });
    (addr, recorded)
}

/// A source run against a "goes silent" server ([`ws_goes_silent_server`],
/// [`sse_goes_silent_server`]) got every frame once and was dropped once, for the read timeout.
fn assert_resumed_once_after_silence(seqs: &[u64], reasons: &[String]) {
    assert_eq!(seqs, [1, 2, 3, 4, 5], "nothing lost or doubled");
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(reasons[0].contains("read timeout"), "{reasons:?}");
}

/// A WebSocket server: the first connection sends frames 1–2, stays idle for [`IDLE`] while
/// reading (so the client's pings are answered), sends frame 3 and then goes silent (no reads,
/// no writes, socket held open). Later connections send the frames after their `?after=N` up to
/// 5 and close normally. Returns the address and the request URIs seen.
#[allow(clippy::result_large_err)] // the handshake callback's error type is tungstenite's
async fn ws_goes_silent_server() -> (String, Seen) {
    use futures::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
    use tokio_tungstenite::tungstenite::protocol::CloseFrame;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
    test_server(|conn, tcp, seen| async move {
        let uri = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let u = uri.clone();
        let cb = move |req: &Request, resp: Response| {
            let s = req.uri().to_string();
            seen.lock().unwrap().push(s.clone());
            *u.lock().unwrap() = s;
            Ok(resp)
        };
        let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(tcp, cb).await else {
            return;
        };
        if conn == 0 {
            for seq in 1..=2 {
                let _ = ws.send(Message::text(frame(seq))).await;
            }
            // Idle but alive: reading answers the client's pings with pongs.
            let _ = tokio::time::timeout(IDLE, async { while ws.next().await.is_some() {} }).await;
            let _ = ws.send(Message::text(frame(3))).await;
            // Silent: hold the socket, never read or write again.
            tokio::time::sleep(Duration::from_mins(1)).await;
            return;
        }
        let uri = uri.lock().unwrap().clone();
        let after: u64 = uri
            .split("after=")
            .nth(1)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        for seq in after + 1..=5 {
            let _ = ws.send(Message::text(frame(seq))).await;
        }
        let close = CloseFrame {
            code: CloseCode::Normal,
            reason: "done".into(),
        };
        let _ = ws.send(Message::Close(Some(close))).await;
        while ws.next().await.is_some() {}
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ws_pings_keep_an_idle_server_and_a_silent_one_is_resumed() {
    let (addr, uris) = ws_goes_silent_server().await;
    let (seqs, reasons) = run_source(
        format!("ws://{addr}/ws"),
        keepalive(Some(Duration::from_millis(50))),
    )
    .await;
    // Exactly one drop: the idle stretch (pongs answered) did not count, the silence did.
    assert_resumed_once_after_silence(&seqs, &reasons);
    let uris = uris.lock().unwrap().clone();
    assert_eq!(uris, vec!["/ws".to_owned(), "/ws?after=3".to_owned()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ws_without_pings_an_idle_server_trips_the_read_timeout() {
    // The same server, but the client sends no pings: the idle stretch looks like silence, so
    // the client resumes after frame 2 (and the first connection's frame 3 is never read).
    let (addr, uris) = ws_goes_silent_server().await;
    let (seqs, reasons) = run_source(format!("ws://{addr}/ws"), keepalive(None)).await;
    assert_resumed_once_after_silence(&seqs, &reasons);
    let uris = uris.lock().unwrap().clone();
    assert_eq!(uris, vec!["/ws".to_owned(), "/ws?after=2".to_owned()]);
}

/// An SSE server on raw TCP: the first connection sends events 1–2, then only `:` heartbeat
/// comments for [`IDLE`], then event 3, then goes silent (socket held open). Later connections
/// send the events after their `Last-Event-ID` up to 5 and `event: end`. Returns the address and
/// the `Last-Event-ID` headers seen (`-`: none).
async fn sse_goes_silent_server() -> (String, Seen) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    test_server(|conn, tcp, seen| async move {
        let mut tcp = tokio::io::BufReader::new(tcp);
        let mut last_id = String::from("-");
        loop {
            let mut line = String::new();
            if tcp.read_line(&mut line).await.unwrap_or(0) == 0 {
                return;
            }
            if line.trim().is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':')
                && k.eq_ignore_ascii_case("last-event-id")
            {
                last_id = v.trim().to_owned();
            }
        }
        seen.lock().unwrap().push(last_id.clone());
        let mut tcp = tcp.into_inner();
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                            connection: close\r\n\r\n";
        let _ = tcp.write_all(head.as_bytes()).await;
        let event = |seq: u64| format!("id: {seq}\ndata: {}\n\n", frame(seq));
        if conn == 0 {
            for seq in 1..=2 {
                let _ = tcp.write_all(event(seq).as_bytes()).await;
            }
            let until = tokio::time::Instant::now() + IDLE;
            while tokio::time::Instant::now() < until {
                tokio::time::sleep(Duration::from_millis(50)).await;
                let _ = tcp.write_all(b": heartbeat\n\n").await;
            }
            let _ = tcp.write_all(event(3).as_bytes()).await;
            tokio::time::sleep(Duration::from_mins(1)).await;
            return;
        }
        let after: u64 = last_id.parse().unwrap_or(0);
        for seq in after + 1..=5 {
            let _ = tcp.write_all(event(seq).as_bytes()).await;
        }
        let _ = tcp.write_all(b"event: end\ndata:\n\n").await;
        let _ = tcp.shutdown().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_heartbeats_keep_an_idle_stream_and_a_silent_one_is_resumed() {
    let (addr, ids) = sse_goes_silent_server().await;
    let (seqs, reasons) = run_source(format!("http://{addr}/events"), keepalive(None)).await;
    assert_resumed_once_after_silence(&seqs, &reasons);
    assert_eq!(
        ids.lock().unwrap().clone(),
        vec!["-".to_owned(), "3".to_owned()]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_accepts_and_never_answers_is_retried() {
    // Accepts TCP, never writes: the WebSocket handshake / SSE response head times out.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((tcp, _)) = listener.accept().await {
            held.push(tcp);
        }
    });
    for url in [format!("ws://{addr}/ws"), format!("http://{addr}/events")] {
        let cfg = NetConfig {
            connect_timeout: Duration::from_millis(200),
            max_attempts: Some(2),
            ..keepalive(Some(Duration::from_millis(50)))
        };
        let r = tokio::time::timeout(WAIT, load_input_with(&SourceKind::Url(url.clone()), &cfg))
            .await
            .unwrap();
        assert!(
            matches!(&r, Err(SourceError::Other(m)) if m.contains("gave up after 3 failed attempts in a row (2 retries)")),
            "{url}: {r:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_heartbeats_keep_an_idle_recording_open() {
    // Three frames 1 s apart (twice the read timeout at speed 1.4); the client sends no pings,
    // so only the server's WebSocket Pings / SSE comments keep the stream open.
    let text = (0..3)
        .map(|i| {
            format!(
                r#"{{"type":"x-test","seq":{},"timestamp":"2026-11-29T10:00:0{i}.000Z","payload":{{}}}}"#,
                i + 1
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let loaded = rawpv::import::load_bytes(text.as_bytes());
    let (rec, warnings) = Recording::from_loaded(&loaded, 1 << 20);
    assert!(warnings.is_empty() && rec.len() == 3, "{warnings:?}");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    let cfg = ServeConfig {
        speed: 1.4,
        heartbeat: Duration::from_millis(50),
        ..ServeConfig::default()
    };
    tokio::spawn(serve(listener, rec, cfg, stop.clone()));
    let (ws, sse) = tokio::join!(
        run_source(format!("ws://{addr}/ws"), keepalive(None)),
        run_source(format!("http://{addr}/events"), keepalive(None)),
    );
    for (name, (seqs, reasons)) in [("ws", ws), ("sse", sse)] {
        assert_eq!(seqs, vec![1, 2, 3], "{name}");
        assert!(reasons.is_empty(), "{name}: {reasons:?}");
    }
    stop.cancel();
}

/// `rawpv ARGS` run to its end off the async runtime; returns its output.
async fn run_rawpv(args: Vec<String>) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        assert_cmd::Command::cargo_bin("rawpv")
            .unwrap()
            .env_remove("RAWP_TOKEN")
            .args(&args)
            .timeout(WAIT)
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keepalive_flags_reach_the_connection_end_to_end() {
    // `--ping-interval 50ms --read-timeout 300ms`: pings keep the idle stretch open, the silence
    // after frame 3 is dropped and resumed after 3 (the defaults, 15 s / 60 s, would wait 60 s).
    let (addr, uris) = ws_goes_silent_server().await;
    let args = |ping: &str| {
        vec![
            "print".to_owned(),
            format!("ws://{addr}/ws"),
            format!("--ping-interval={ping}"),
            "--read-timeout=300ms".to_owned(),
        ]
    };
    let out = run_rawpv(args("50ms")).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        uris.lock().unwrap().clone(),
        vec!["/ws".to_owned(), "/ws?after=3".to_owned()]
    );
    // `--ping-interval off`: the idle stretch itself trips the read timeout.
    let (addr2, uris2) = ws_goes_silent_server().await;
    let mut a = args("off");
    a[1] = format!("ws://{addr2}/ws");
    let out = run_rawpv(a).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        uris2.lock().unwrap().clone(),
        vec!["/ws".to_owned(), "/ws?after=2".to_owned()]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_answers_a_bad_resume_value_with_400() {
    let (mut child, addr) = spawn_server("127.0.0.1:0", "1");
    for (path, header) in [
        ("/events?after=abc", None),
        ("/sse?after=-1", None),
        ("/events", Some("abc")),
    ] {
        let client = reqwest::Client::new();
        let mut req = client.get(format!("http://{addr}{path}"));
        if let Some(h) = header {
            req = req.header("Last-Event-ID", h);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 400, "{path}");
        let body = resp.text().await.unwrap();
        assert!(
            body.ends_with("must be a frame count (a whole number, 0 or more), not \"abc\"\n")
                || body.contains("not \"-1\""),
            "{path}: {body}"
        );
        assert_eq!(body.lines().count(), 1, "{body}");
    }
    // The WebSocket handshake too.
    let r = tokio_tungstenite::connect_async(format!("ws://{addr}/ws?after=abc")).await;
    assert!(
        matches!(&r, Err(tokio_tungstenite::tungstenite::Error::Http(resp)) if resp.status() == 400),
        "{r:?}"
    );
    child.kill().unwrap();
    let _ = child.wait();
}

/// Sends raw `request` to `addr`; returns the status line of the answer ("" when closed).
async fn raw_status(addr: &str, request: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 512];
    let n = tokio::time::timeout(WAIT, tcp.read(&mut buf))
        .await
        .unwrap()
        .unwrap_or(0);
    String::from_utf8_lossy(&buf[..n])
        .lines()
        .next()
        .unwrap_or("")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_token_foreign_origins_and_hosts_are_refused() {
    // Issue 14.4: any web page could open ws://127.0.0.1:7878/ws and read the stream, and DNS
    // rebinding reached /events.
    let (addr, stop) = start(50.0, None).await;
    let port = addr.rsplit(':').next().unwrap();
    let req = |host: &str, origin: Option<&str>| {
        let origin = origin
            .map(|o| format!("Origin: {o}\r\n"))
            .unwrap_or_default();
        format!("GET /events HTTP/1.1\r\nHost: {host}\r\n{origin}Connection: close\r\n\r\n")
    };
    assert_eq!(
        raw_status(&addr, &req(&format!("rebind.evil.example:{port}"), None)).await,
        "HTTP/1.1 403 Forbidden"
    );
    assert_eq!(
        raw_status(&addr, &req(&addr, Some("https://evil.example"))).await,
        "HTTP/1.1 403 Forbidden"
    );
    assert_eq!(
        raw_status(
            &addr,
            &req(&addr, Some(&format!("http://localhost:{port}")))
        )
        .await,
        "HTTP/1.1 200 OK"
    );
    // A browser's WebSocket from a foreign page carries its Origin: refused at the handshake.
    let mut ws_req =
        tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(format!(
            "ws://{addr}/ws"
        ))
        .unwrap();
    ws_req
        .headers_mut()
        .insert("origin", "https://evil.example".parse().unwrap());
    match tokio_tungstenite::connect_async(ws_req).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(r)) => assert_eq!(r.status(), 403),
        other => panic!("a foreign origin was let in: {:?}", other.map(|_| ())),
    }
    // rawpv's own client (no Origin, Host = the address) still reads the stream.
    let got = load_input_with(&SourceKind::Url(format!("ws://{addr}/ws")), &net(None))
        .await
        .unwrap();
    assert_eq!(got.items.len(), 36);
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_open_requests_do_not_lock_real_clients_out() {
    // Issue 14.14: 1,100 requests that never finished their headers used every descriptor.
    let (addr, stop) = start(50.0, None).await;
    let mut held = Vec::new();
    for _ in 0..600 {
        use tokio::io::AsyncWriteExt;
        let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
        tcp.write_all(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .await
            .unwrap();
        held.push(tcp);
    }
    let got = tokio::time::timeout(
        WAIT,
        load_input_with(
            &SourceKind::Url(format!("http://{addr}/events")),
            &net(None),
        ),
    )
    .await
    .expect("a real client got nothing")
    .unwrap();
    assert_eq!(got.items.len(), 36);
    // The oldest of the half-open ones were closed to make room.
    let mut buf = [0u8; 16];
    let closed = tokio::time::timeout(
        Duration::from_secs(2),
        tokio::io::AsyncReadExt::read(&mut held[0], &mut buf),
    )
    .await
    .expect("the oldest half-open request is still open");
    assert!(matches!(closed, Ok(0) | Err(_)), "{closed:?}");
    drop(held);
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_off_the_first_origin_is_not_followed_with_the_token() {
    // Second attack of issue 14: master → 302 → evil → 307 → evil: reqwest stripped the token
    // on the first hop but sent it again on the evil host's same-origin hop.
    let (evil, evil_seen) = test_server(|_, mut tcp, seen| async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut buf = vec![0u8; 4096];
        let n = tcp.read(&mut buf).await.unwrap_or(0);
        seen.lock()
            .unwrap()
            .push(String::from_utf8_lossy(&buf[..n]).into_owned());
        let _ = tcp
            .write_all(
                b"HTTP/1.1 307 Temporary Redirect\r\nlocation: /again\r\ncontent-length: 0\r\n\r\n",
            )
            .await;
    })
    .await;
    let (master, _) = test_server(move |_, mut tcp, _| {
        let evil = evil.clone();
        async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut buf = vec![0u8; 4096];
            let _ = tcp.read(&mut buf).await;
            let reply = format!(
                "HTTP/1.1 302 Found\r\nlocation: http://{evil}/steal\r\ncontent-length: 0\r\n\r\n"
            );
            let _ = tcp.write_all(reply.as_bytes()).await;
        }
    })
    .await;
    let r = tokio::time::timeout(
        WAIT,
        load_input_with(
            &SourceKind::Url(format!("http://{master}/events")),
            &net(Some("SuperSecretTok3n")),
        ),
    )
    .await
    .unwrap();
    assert!(
        matches!(&r, Err(SourceError::Other(m)) if m.contains("redirected to another origin")),
        "{r:?}"
    );
    let seen = evil_seen.lock().unwrap();
    assert!(
        seen.iter().all(|req| !req.contains("SuperSecretTok3n")),
        "{seen:?}"
    );
    assert!(seen.is_empty(), "the other origin was contacted: {seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_but_an_upgrade_closes_its_connection() {
    // Second attack of issue 14: 1,100 connections that each got a 404 and then sat idle
    // (keep-alive) held every connection slot; real clients got nothing.
    let (addr, stop) = start(50.0, None).await;
    for req in [
        "GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "GET /events?after=x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "GET /events HTTP/1.1\r\nHost: evil.example\r\n\r\n",
        "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    ] {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
        tcp.write_all(req.as_bytes()).await.unwrap();
        let mut all = Vec::new();
        tokio::time::timeout(WAIT, tcp.read_to_end(&mut all))
            .await
            .unwrap_or_else(|_| panic!("{req:?}: the connection stayed open"))
            .unwrap();
        let text = String::from_utf8_lossy(&all);
        assert!(
            text.to_ascii_lowercase().contains("connection: close"),
            "{req:?}: {text}"
        );
    }
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_stop_reading_lose_their_stream_slot() {
    // Second attack of issue 14: clients that connected and never read held all stream slots
    // (503 for everyone else) for as long as they stayed.
    let big = "x".repeat(4096);
    let mut text = String::new();
    for i in 0..3000 {
        let _ = std::fmt::Write::write_fmt(
            &mut text,
            format_args!(
                "{{\"type\":\"x-test\",\"seq\":{i},\"payload\":{{\"n\":{i},\"pad\":\"{big}\"}}}}\n"
            ),
        );
    }
    let (rec, _) = Recording::from_loaded(&rawpv::import::load_bytes(text.as_bytes()), 16 << 20);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let stop = CancellationToken::new();
    let cfg = ServeConfig {
        max_clients: 2,
        write_timeout: Duration::from_millis(300),
        ..ServeConfig::default()
    };
    tokio::spawn(serve(listener, rec, cfg, stop.clone()));
    let mut stalled = Vec::new();
    for path in ["/events", "/events"] {
        use tokio::io::AsyncWriteExt;
        let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        tcp.write_all(req.as_bytes()).await.unwrap();
        stalled.push(tcp);
    }
    // While they stall, the slots are full; once their writes time out, a reader gets in.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let status = raw_status(
            &addr,
            "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        )
        .await;
        if status == "HTTP/1.1 200 OK" {
            break;
        }
        assert_eq!(status, "HTTP/1.1 503 Service Unavailable");
        assert!(
            tokio::time::Instant::now() < deadline,
            "the slots were never freed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(stalled);
    stop.cancel();
}
