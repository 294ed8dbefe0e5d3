//! `rawpv FILE` / `rawpv -` refusals end to end (`assert_cmd` on the binary): what the viewer
//! cannot open is said on stderr with exit 2 before the screen is taken, like `rawpv print`
//! (it used to open an empty "no frames yet" viewer, or, for `-` on a terminal, race the
//! terminal's keys with the stdin reader so `q` did not quit); a one-shot command on a
//! refused stream says it is retrying instead of sitting silent for ~15 s.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use assert_cmd::Command;

fn rawpv() -> Command {
    Command::cargo_bin("rawpv").unwrap()
}

#[test]
fn a_missing_file_or_a_directory_is_refused_before_the_screen() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("missing.jsonl");
    let out = rawpv()
        .arg(&missing)
        .timeout(Duration::from_secs(10))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("rawpv: cannot read ") && err.contains("missing.jsonl"),
        "{err}"
    );

    let out = rawpv()
        .arg(tmp.path())
        .timeout(Duration::from_secs(10))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    // A directory is its session files (issue 24); an empty one is said.
    assert!(err.contains("holds no session file"), "{err}");
}

#[test]
fn dash_on_a_terminal_stdin_is_refused() {
    // `script` (util-linux) gives the viewer a pseudo-terminal as stdin and stdout.
    let Ok(script) = which("script") else {
        eprintln!("skipped: no `script` to make a terminal");
        return;
    };
    let bin = assert_cmd::cargo::cargo_bin("rawpv");
    let out = Command::new(script)
        .args(["-qec", &format!("{} -", bin.display()), "/dev/null"])
        .timeout(Duration::from_secs(10))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("stdin is the terminal"),
        "{:?} {text}",
        out.status
    );
    assert_eq!(out.status.code(), Some(2));
}

fn which(name: &str) -> Result<std::path::PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or(())
}

#[test]
fn a_one_shot_command_says_it_is_retrying_a_refused_stream() {
    // Port 1 on loopback refuses at once; the retries take ~15 s in all, so only the first
    // seconds are watched: the first retry must already be on stderr.
    let out = rawpv()
        .args(["stats", "ws://127.0.0.1:1/ws"])
        .timeout(Duration::from_secs(2))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ws://127.0.0.1:1/ws: cannot connect") && err.contains("retry 1 of 6"),
        "{err}"
    );
}

#[test]
fn the_browser_comes_back_after_the_viewer_quits() {
    // Under `script` the pseudo-terminal never answers a cursor-position query: returning
    // from the viewer to the session browser used to ask one (ratatui's `Terminal::clear`) and
    // fail with exit 2 ("The cursor position could not be read within a normal duration").
    let Ok(script) = which("script") else {
        eprintln!("skipped: no `script` to make a terminal");
        return;
    };
    let home = crate::support::fake_claude_home();
    let bin = assert_cmd::cargo::cargo_bin("rawpv");
    let mut child = std::process::Command::new(script)
        .args(["-qec", &bin.display().to_string(), "/dev/null"])
        .env("HOME", home.path())
        .env_remove("RAWPV_CONFIG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Enter opens the session, q quits the viewer, Esc (empty filter) leaves the browser.
    for key in [&b"\r"[..], b"q", b"\x1b"] {
        std::thread::sleep(Duration::from_millis(1500));
        std::io::Write::write_all(&mut stdin, key).unwrap();
        std::io::Write::flush(&mut stdin).unwrap();
    }
    // Bounded: under load a key can land before the screen that expects it; `q` (quit, in the
    // browser and the viewer alike) is sent again until the child exits, and after 30 s it is
    // killed and the test fails instead of hanging the suite.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut exited = false;
    while std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1500));
        if child.try_wait().unwrap().is_some() {
            exited = true;
            break;
        }
        let _ = std::io::Write::write_all(&mut stdin, b"q");
        let _ = std::io::Write::flush(&mut stdin);
    }
    if !exited {
        let _ = child.kill();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(exited, "rawpv did not quit within 30 s: {text}");
    assert!(!text.contains("cursor position"), "{text}");
    assert_eq!(out.status.code(), Some(0), "{text}");
}

#[test]
fn max_idle_refuses_nan_and_negatives() {
    // NaN used to become 0: the whole replay played at once under a broken timeline.
    for bad in ["nan", "-1"] {
        let out = rawpv()
            .args(["--replay", &format!("--max-idle={bad}"), "x.jsonl"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--max-idle"), "{bad}: {err}");
    }
}

/// Runs `rawpv ARGS`; returns the exit code and stderr.
fn refused(args: &[&str]) -> (Option<i32>, String) {
    let out = rawpv()
        .args(args)
        .timeout(Duration::from_secs(10))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn speed_refuses_nan_infinities_zero_negatives_and_out_of_range() {
    // NaN used to play at 1× silently.
    for bad in ["nan", "inf", "-inf", "0", "-2", "100"] {
        let (code, err) = refused(&["--replay", &format!("--speed={bad}"), "x.jsonl"]);
        assert_eq!(code, Some(2), "{bad}: {err}");
        assert!(
            err.contains(&format!("invalid value '{bad}' for '--speed <SPEED>'"))
                && err.contains("must be a number from 0.25 to 64"),
            "{bad}: {err}"
        );
    }
    let (code, err) = refused(&["serve", "x.jsonl", "--speed", "nan"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("must be a finite number above 0"), "{err}");
}

#[test]
fn serve_refuses_zero_clients_zero_frame_bytes_and_a_file_without_frames() {
    let (code, err) = refused(&["serve", "x.jsonl", "--max-clients", "0"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("'--max-clients <MAX_CLIENTS>'") && err.contains("must be 1 or more"),
        "{err}"
    );
    let (code, err) = refused(&["serve", "x.jsonl", "--max-frame-bytes=0"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("must be 1 or more"), "{err}");
    // A file that is no session (here: plain text) used to be served as an empty stream.
    let tmp = tempfile::tempdir().unwrap();
    let notes = tmp.path().join("notes.txt");
    std::fs::write(&notes, "just some notes\nand more\n").unwrap();
    let (code, err) = refused(&[
        "serve",
        &notes.display().to_string(),
        "--listen=127.0.0.1:0",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("notes.txt has no frame to serve (not a session recording?)"),
        "{err}"
    );
}

#[test]
fn keepalive_durations_are_checked() {
    for (flag, bad) in [
        ("--ping-interval", "fast"),
        ("--read-timeout", "-1"),
        ("--read-timeout", "nan"),
        ("--ping-interval", "3d"),
    ] {
        let (code, err) = refused(&["print", "ws://127.0.0.1:9/ws", &format!("{flag}={bad}")]);
        assert_eq!(code, Some(2), "{flag} {bad}: {err}");
        assert!(err.contains(flag), "{flag} {bad}: {err}");
    }
    // Documented in --help.
    let out = rawpv().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("--ping-interval <DURATION>") && help.contains("--read-timeout <DURATION>"),
        "{help}"
    );
}
