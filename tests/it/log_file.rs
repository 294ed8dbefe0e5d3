//! `--log-level` / `RAWPV_LOG` write `rawpv.log` in the platform state directory
//! (`$XDG_STATE_HOME/rawpv` on Linux), end to end through the binary.

use std::process::Command;

fn rawpv(state: &std::path::Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin!("rawpv"));
    c.env("XDG_STATE_HOME", state)
        .env("HOME", state)
        .env_remove("RAWPV_LOG")
        .env_remove("RAWP_TOKEN");
    c
}

#[cfg(target_os = "linux")]
#[test]
fn log_level_debug_demo_writes_the_log_file() {
    let dir = tempfile::tempdir().unwrap();
    // No terminal here: the viewer refuses (exit 2), but the log is started first.
    let out = rawpv(dir.path())
        .args(["--log-level", "debug", "demo"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let path = dir.path().join("rawpv").join("rawpv.log");
    let log = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("no log at {}: {e}", path.display()));
    assert!(log.contains("rawpv started"), "{log}");
    assert!(log.contains(&path.display().to_string()), "{log}");
    assert!(log.contains("rawpv exits code=2"), "{log}");
    // `demo` is the demo (not a file named demo): the viewer refused for want of a terminal.
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("needs a terminal"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[cfg(target_os = "linux")]
#[test]
fn rawpv_log_variable_logs_the_reducers_findings() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/check_clean.ndjson"
    );
    let out = rawpv(dir.path())
        .env("RAWPV_LOG", "debug")
        .args(["print", "demo"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let log = std::fs::read_to_string(dir.path().join("rawpv/rawpv.log")).unwrap();
    // (A global flag before the subcommand: clap takes `print` for the input; the flag goes
    // after it, or in RAWPV_LOG.)
    assert!(log.contains("finding code="), "{log}");
    // A level that does not exist is refused before anything runs.
    let out = rawpv(dir.path())
        .args(["print", "--log-level", "loud", fixture])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("use error, warn, info, debug"));
}

#[test]
fn without_the_flag_no_log_file_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let out = rawpv(dir.path()).args(["print", "demo"]).output().unwrap();
    assert!(out.status.success());
    assert!(!dir.path().join("rawpv").exists());
}

#[cfg(target_os = "linux")]
#[test]
fn a_trace_log_holds_no_token_and_only_its_user_can_read_it() {
    // The second attack of issue 14: at `trace` tungstenite logged the handshake request with
    // its `Authorization: Bearer` header, into a 0644 file.
    use std::io::{Read, Write};
    use std::os::unix::fs::PermissionsExt;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming().take(4) {
            let Ok(mut c) = conn else { continue };
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            let _ = c.write_all(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n");
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let out = rawpv(dir.path())
        .env("RAWP_TOKEN", "SuperSecretTok3n")
        .args(["print", &format!("ws://{addr}/ws"), "--log-level", "trace"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let path = dir.path().join("rawpv/rawpv.log");
    let log = std::fs::read_to_string(&path).unwrap();
    assert!(log.contains("rawpv started"), "{log}");
    assert!(!log.contains("SuperSecretTok3n"), "{log}");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&dir.path().join("rawpv")), 0o700);
}
