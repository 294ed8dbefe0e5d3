//! Network sources against `rawpv serve`: WebSocket and SSE end with the same session as opening
//! the file; a killed and restarted server loses and doubles nothing; a wrong token is an auth
//! error (and `rawpv print URL` exits 2). All on 127.0.0.1 with ephemeral ports.

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
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rawpv"))
        .args(["serve"])
        .arg(fixture())
        .args(["--listen", listen, "--speed", speed])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
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
    // 36 frames 25 ms apart at speed 0.5: ~1.8 s of playback.
    let (mut child, addr) = spawn_server("127.0.0.1:0", "0.5");
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
            SourceMsg::Format(_) => {}
            SourceMsg::Eof => break,
            SourceMsg::Failed(e) => panic!("{url}: {e}"),
        }
        if restarted.is_none() && items.len() >= 10 {
            child.kill().unwrap();
            child.wait().unwrap();
            let (c, a) = spawn_server(&addr, "0.5");
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
    assert_eq!(got, expected, "{url}");
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
async fn frames_over_the_caps_are_findings_or_skipped_never_a_crash() {
    use rawpv::import::Decoded;
    use rawpv::protocol::ParseErrorKind;
    let loaded = file_loaded().await;
    let sizes: Vec<usize> = std::fs::read_to_string(fixture())
        .unwrap()
        .lines()
        .map(|l| {
            rawpv::protocol::parse_line(1, l)
                .unwrap()
                .to_json()
                .to_string()
                .len()
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
    };
    tokio::spawn(serve(listener, rec, cfg, stop.clone()));
    let got = load_input_with(&SourceKind::Url(format!("http://{addr}/sse")), &net(None))
        .await
        .unwrap();
    let lines: Vec<u64> = got
        .items
        .iter()
        .map(|d| match d {
            Decoded::Frame(f) => f.origin.line,
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    let expected: Vec<u64> = (1..=sizes.len() as u64)
        .filter(|i| !over.contains(i))
        .collect();
    assert_eq!(lines, expected);
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
            matches!(&r, Err(SourceError::Other(m)) if m.contains("gave up after 2")),
            "{url}: {r:?}"
        );
    }
    stop.cancel();
}
