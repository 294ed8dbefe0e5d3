//! The live state (issue 21 items 2–4) on the app model fed by the real follower (`rawpv -f`'s
//! source task on a copy of each fixture), with the clock given by ticks as the loop gives it:
//! a session waiting for permission, one with a stuck call and one looping each say so on
//! the status bar and in the feed, and leave the bell and OSC 9 bytes for the terminal, once;
//! an old recording followed is idle by the clock while its ages stay those of its last frame;
//! a running call's stream shows a `docker pull` redraw in its final state, and a Claude Code
//! call's `bash_progress` tail its latest one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use insta::assert_snapshot;
use rawpv::app::{App, Msg};
use rawpv::notify::Notify;
use rawpv::protocol::Timestamp;
use rawpv::source::{CHANNEL_CAPACITY, NetConfig, SourceKind, SourceMsg, SourceState};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::support::headless::{draw, screen_text, status_rows};

const WAIT: Duration = Duration::from_secs(20);

/// A live app following a copy of `tests/fixtures/NAME` with the real follower, fed until the
/// source caught up (it says `Live` after reading what the file holds).
async fn follow(name: &str) -> (App, tempfile::TempDir, CancellationToken) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
        &path,
    )
    .unwrap();
    let mut app = App::new(name, true);
    app.set_theme(rawpv::theme::Theme::dark());
    app.set_notify(Notify::default());
    let (tx, mut rx) = mpsc::channel(CHANNEL_CAPACITY);
    let cancel = CancellationToken::new();
    rawpv::source::spawn_source_with(
        SourceKind::Follow(path),
        NetConfig::default(),
        tx,
        cancel.clone(),
    );
    loop {
        let m = tokio::time::timeout(WAIT, rx.recv())
            .await
            .expect("the follower said nothing")
            .expect("the follower ended");
        let live = m == SourceMsg::State(SourceState::Live);
        app.update(Msg::Source(m));
        if live {
            break;
        }
    }
    (app, dir, cancel)
}

/// The session's newest frame plus `ms`.
fn after_last(app: &App, ms: i64) -> Timestamp {
    Timestamp(app.session().last_timestamp.unwrap().0 + ms)
}

/// Ticks at `at`; returns what the app left for the terminal.
fn tick(app: &mut App, at: Timestamp) -> Option<String> {
    app.update(Msg::Tick(at));
    app.take_attention_out()
}

/// Ticks `ms` after the newest frame.
fn tick_after(app: &mut App, ms: i64) -> Option<String> {
    let at = after_last(app, ms);
    tick(app, at)
}

fn osc9(title: &str, body: &str) -> String {
    format!("\x07\x1b]9;rawpv: {title}: {body}\x1b\\")
}

#[tokio::test]
async fn waiting_for_permission_says_so_and_rings_once() {
    let name = "live_waiting_permission.ndjson";
    let (mut app, _dir, cancel) = follow(name).await;
    // Nothing rings while the clock is unknown (no tick yet): it may be a recording.
    assert_eq!(app.take_attention_out(), None);
    let words = "waiting for you: permission for Deploy 2.0s";
    assert_eq!(tick_after(&mut app, 2000), Some(osc9(name, words)));
    assert_eq!(app.live_state().unwrap().describe(app.session()), words);
    assert_eq!(tick_after(&mut app, 3000), None, "once per state");
    let term = draw(&mut app, 100, 30);
    assert!(status_rows(&term).contains("live · waiting for you: permission for Deploy 3.0s"));
    assert_snapshot!("live_waiting_permission", term.backend());
    cancel.cancel();
}

#[tokio::test]
async fn a_kind_turned_off_says_its_state_and_rings_nothing() {
    let name = "live_waiting_permission.ndjson";
    let (mut app, _dir, cancel) = follow(name).await;
    let config = rawpv::config::load_str(
        "[notify]\nwaiting = false\ndesktop = \"osc777\"\n",
        Path::new("config.toml"),
    )
    .unwrap()
    .config;
    assert!(!config.notify.waiting && config.notify.stuck);
    assert_eq!(config.notify.desktop, rawpv::notify::Desktop::Osc777);
    app.set_notify(Notify {
        waiting: config.notify.waiting,
        ..Notify::default()
    });
    assert_eq!(tick_after(&mut app, 2000), None);
    assert_eq!(
        app.live_state().unwrap().describe(app.session()),
        "waiting for you: permission for Deploy 2.0s"
    );
    cancel.cancel();
}

#[tokio::test]
async fn a_call_far_past_its_tools_durations_is_stuck() {
    let name = "live_stuck_call.ndjson";
    let (mut app, _dir, cancel) = follow(name).await;
    // Three 2-second builds: a fourth is stuck after 60 s (5 × their p90 is under the floor).
    let words = "stuck: Bash 4m33s (over 1m00s)";
    assert_eq!(tick_after(&mut app, 2000), Some(osc9(name, words)));
    let term = draw(&mut app, 100, 30);
    let screen = screen_text(&term);
    assert!(screen.contains("npm run build -w app"), "{screen}");
    assert!(screen.contains("stuck"), "{screen}");
    assert_snapshot!("live_stuck_call", term.backend());
    cancel.cancel();
}

#[tokio::test]
async fn the_same_failing_call_again_and_again_is_a_loop() {
    let name = "live_loop.ndjson";
    let (mut app, _dir, cancel) = follow(name).await;
    let words = "looping: Bash failed 3× in a row";
    assert_eq!(tick_after(&mut app, 2000), Some(osc9(name, words)));
    let term = draw(&mut app, 100, 30);
    assert!(status_rows(&term).contains(words));
    assert_snapshot!("live_loop", term.backend());
    // A new prompt ends it: the person spoke.
    cancel.cancel();
}

#[tokio::test]
async fn ages_of_a_recording_followed_are_relative_to_its_last_frame() {
    let name = "live_stuck_call.ndjson";
    let (mut app, _dir, cancel) = follow(name).await;
    // Followed 293 days after it was written: idle by the clock, and nothing rings.
    assert_eq!(tick_after(&mut app, 293 * 86_400_000), None);
    let live = app.live_state().unwrap();
    assert_eq!(live.describe(app.session()), "idle 293d");
    let term = draw(&mut app, 100, 30);
    let screen = screen_text(&term);
    // The running call's age is the recording's: request at 10:00:11, last frame 10:04:42.
    assert!(screen.contains("running  4m31s"), "{screen}");
    assert_eq!(
        screen.matches("293d").count(),
        1,
        "only the idle age: {screen}"
    );
    assert_snapshot!("live_recording_ages", term.backend());
    cancel.cancel();
}

#[tokio::test]
async fn a_running_calls_stream_shows_a_progress_redraw_in_its_final_state() {
    let name = "live_progress_stream.ndjson";
    let (mut app, _dir, cancel) = follow(name).await;
    tick_after(&mut app, 1000);
    // Following: the newest row (the running call) is selected and its detail shown.
    let term = draw(&mut app, 100, 30);
    let screen = screen_text(&term);
    assert!(screen.contains("Stream (live)"), "{screen}");
    assert!(screen.contains("9986a736f7d3: Pull complete"), "{screen}");
    assert!(!screen.contains("Downloading"), "{screen}");
    assert!(!screen.contains('␛'), "{screen}");
    assert_snapshot!("live_progress_stream", term.backend());
    cancel.cancel();
}

/// A Claude Code `bash_progress` record carries a snapshot of the output's tail, not a delta:
/// the running call's stream shows the latest tail and progress line, as the terminal would.
#[test]
fn a_claude_code_bash_progress_tail_shows_its_latest_state() {
    use serde_json::json;
    let rec = |n: u32, kind: &str, extra: serde_json::Value| {
        let mut r = json!({
            "parentUuid": if n == 1 { serde_json::Value::Null } else { json!(format!("u{}", n - 1)) },
            "isSidechain": false, "userType": "external", "cwd": "/w", "sessionId": "s",
            "version": "2.1.39", "type": kind, "uuid": format!("u{n}"),
            "timestamp": format!("2026-12-02T10:00:0{n}.000Z"),
        });
        for (k, v) in extra.as_object().unwrap() {
            r[k] = v.clone();
        }
        r.to_string()
    };
    let progress = |n: u32, secs: u32, output: &str| {
        rec(
            n,
            "progress",
            json!({"parentToolUseID": "toolu_1", "toolUseID": "bash-progress-1",
                   "data": {"type": "bash_progress", "output": output, "fullOutput": output,
                            "elapsedTimeSeconds": secs, "totalLines": secs * 10}}),
        )
    };
    let lines = [
        rec(
            1,
            "user",
            json!({"message": {"role": "user", "content": "build it"}}),
        ),
        rec(
            2,
            "assistant",
            json!({"message": {"model": "m", "id": "msg_1", "type": "message", "role": "assistant",
                   "stop_reason": null, "content": [{"type": "tool_use", "id": "toolu_1",
                   "name": "Bash", "input": {"command": "mix compile"}}]}}),
        ),
        progress(3, 2, "==> fine\nCompiling 1 file (.ex)\nGenerated fine app"),
        progress(
            4,
            3,
            "Generated fine app\n==> bunt\nCompiling 2 files (.ex)",
        ),
    ];
    let s = rawpv::session::Session::from_decoded(
        rawpv::import::load_bytes(lines.join("\n").as_bytes()).items,
    );
    let inv = s.invocation("toolu_1").unwrap();
    let theme = rawpv::theme::Theme::dark();
    let (shown, _) = rawpv::detail::stream::build_stream_lines(&inv.stream, &theme, 100);
    let text: Vec<String> = shown.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        [
            "Generated fine app",
            "==> bunt",
            "Compiling 2 files (.ex)",
            "3s · 30 lines"
        ]
    );
}
