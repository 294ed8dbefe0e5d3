//! Watching a running agent with the real binary on a pty (issue 21): `rawpv` in a project
//! directory whose Claude Code session is being written opens it live, and a call appended to
//! it is on screen within a second; so is one appended to a session opened from the browser;
//! `rawpv --latest` follows the project's newest session; a followed session that starts
//! waiting for permission rings the bell and sends OSC 9 (the bytes read from the pty).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::pty::Pty;

const SESSION: &str = "11111111-2222-4333-8444-555555555555";
/// How soon an appended call must be on screen.
const WITHIN: Duration = Duration::from_secs(1);
/// How long the first screen may take (a loaded machine).
const START: Duration = Duration::from_secs(20);

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn record(kind: &str, uuid: u32, cwd: &str, message: &Value) -> String {
    let parent = if uuid == 1 {
        Value::Null
    } else {
        json!(format!("00000000-0000-4000-8000-{:012}", uuid - 1))
    };
    let mut r = json!({
        "parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": cwd,
        "sessionId": SESSION, "version": "2.1.17", "gitBranch": "", "type": kind,
        "uuid": format!("00000000-0000-4000-8000-{uuid:012}"), "timestamp": now(),
        "message": message,
    });
    if kind == "assistant" {
        r["requestId"] = json!(format!("req_{uuid}"));
    }
    format!("{r}\n")
}

fn prompt(uuid: u32, cwd: &str, text: &str) -> String {
    record("user", uuid, cwd, &json!({"role": "user", "content": text}))
}

/// A Bash call and its result: records `uuid` and `uuid + 1`.
fn bash(uuid: u32, cwd: &str, command: &str) -> String {
    let id = format!("toolu_{uuid}");
    let call = record(
        "assistant",
        uuid,
        cwd,
        &json!({"model": "claude-x", "id": format!("msg_{uuid}"), "type": "message",
               "role": "assistant", "stop_reason": null,
               "content": [{"type": "tool_use", "id": id, "name": "Bash",
                            "input": {"command": command}}]}),
    );
    let result = record(
        "user",
        uuid + 1,
        cwd,
        &json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
                                             "content": "ok", "is_error": false}]}),
    );
    call + &result
}

fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// A HOME with a Claude Code session of `project` (its folder named as Claude Code names it),
/// holding a prompt and one call; returns the session file.
fn claude_session(home: &Path, project: &Path, first: &str) -> PathBuf {
    let folder = home
        .join(".claude/projects")
        .join(rawpv::project::claude_dir_name(project));
    std::fs::create_dir_all(&folder).unwrap();
    let cwd = project.to_string_lossy();
    let path = folder.join(format!("{SESSION}.jsonl"));
    std::fs::write(
        &path,
        prompt(1, &cwd, "build the thing") + &bash(2, &cwd, first),
    )
    .unwrap();
    path
}

#[test]
fn rawpv_in_a_project_opens_its_growing_session_live_and_shows_an_appended_call_within_a_second() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("work/app");
    std::fs::create_dir_all(project.join("src")).unwrap();
    let session = claude_session(home.path(), &project, "echo first-call");
    // From a subdirectory of the project: its nearest parent with sessions.
    let t = Pty::spawn(&[], &project.join("src"), home.path(), 100, 30);
    t.wait_screen("echo first-call", START);
    t.wait_screen(" live ", START);
    append(
        &session,
        &bash(4, &project.to_string_lossy(), "echo appended-call"),
    );
    let took = t.wait_screen("echo appended-call", WITHIN);
    eprintln!("appended call on screen after {took:?}");
}

#[test]
fn a_session_opened_from_the_browser_follows_and_shows_an_appended_call_within_a_second() {
    let home = tempfile::tempdir().unwrap();
    // A project elsewhere: `rawpv` in HOME lists it (nothing of HOME's own is being written).
    let project = Path::new("/srv/elsewhere/app");
    let session = claude_session(home.path(), project, "echo first-call");
    let mut t = Pty::spawn(&[], home.path(), home.path(), 100, 30);
    t.wait_screen("build the thing", START);
    t.send(b"\r");
    t.wait_screen("echo first-call", START);
    append(
        &session,
        &bash(4, &project.to_string_lossy(), "echo appended-call"),
    );
    let took = t.wait_screen("echo appended-call", WITHIN);
    eprintln!("appended call on screen after {took:?}");
}

#[test]
fn latest_follows_the_projects_newest_session() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("app");
    std::fs::create_dir_all(&project).unwrap();
    let newest = claude_session(home.path(), &project, "echo newest");
    let cwd = project.to_string_lossy();
    let older = newest.with_file_name("older.jsonl");
    std::fs::write(
        &older,
        prompt(1, &cwd, "an older one") + &bash(2, &cwd, "echo older"),
    )
    .unwrap();
    // Both were written long ago: `rawpv` alone would list them; --latest opens the newest.
    let day = std::time::SystemTime::now() - Duration::from_hours(24);
    for (p, t) in [(&older, day - Duration::from_mins(1)), (&newest, day)] {
        std::fs::File::options()
            .append(true)
            .open(p)
            .unwrap()
            .set_modified(t)
            .unwrap();
    }
    let t = Pty::spawn(&["--latest"], &project, home.path(), 100, 30);
    t.wait_screen("echo newest", START);
    append(&newest, &bash(4, &cwd, "echo appended-call"));
    t.wait_screen("echo appended-call", WITHIN);

    // Nowhere to look: a clear message, exit 2.
    let empty = tempfile::tempdir().unwrap();
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("rawpv"))
        .arg("--latest")
        .current_dir(empty.path())
        .env("HOME", empty.path())
        .env_remove("CODEX_HOME")
        .env_remove("RAWPV_CONFIG")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--latest: no session of"), "{err}");
    assert!(err.contains(".claude/projects/"), "{err}");
}

/// `tests/fixtures/NAME` with every timestamp moved so that its last frame is now.
fn fixture_now(name: &str, to: &Path) {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .unwrap();
    let stamp = |v: &Value| {
        chrono::DateTime::parse_from_rfc3339(v["timestamp"].as_str().unwrap())
            .unwrap()
            .timestamp_millis()
    };
    let frames: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let shift = chrono::Utc::now().timestamp_millis() - stamp(frames.last().unwrap());
    let mut out = String::new();
    for mut f in frames {
        let t = chrono::DateTime::from_timestamp_millis(stamp(&f) + shift).unwrap();
        f["timestamp"] = json!(t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
        out.push_str(&f.to_string());
        out.push('\n');
    }
    std::fs::write(to, out).unwrap();
}

#[test]
fn waiting_for_permission_rings_the_bell_and_notifies_through_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("live_waiting_permission.ndjson");
    fixture_now("live_waiting_permission.ndjson", &path);
    let t = Pty::spawn(
        &["-f", &path.to_string_lossy()],
        home.path(),
        home.path(),
        120,
        30,
    );
    t.wait_screen("waiting for you: permission for Deploy", START);
    t.wait_bytes(
        b"\x07\x1b]9;rawpv: live_waiting_permission.ndjson: waiting for you: permission for Deploy",
        START,
    );
    // Once: the state does not ring again while it lasts.
    std::thread::sleep(Duration::from_millis(600));
    let b = t.bytes();
    let rung = b.windows(5).filter(|w| *w == b"\x07\x1b]9;").count();
    assert_eq!(rung, 1, "one bell and notification for one state");
}
