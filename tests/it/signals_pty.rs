//! Signals and terminal loss end to end on a real pseudo-terminal (issue 14.2 and 14.12): the
//! binary runs in a pty (`portable-pty`, the child in its own session with the pty as its
//! controlling terminal), the test reads everything it writes and sends it signals with
//! `kill`. After a viewer opened from the session browser had quit, the browser ignored
//! SIGTERM, SIGHUP and SIGINT and spun on a closed terminal; an outside SIGTSTP left the
//! alternate screen on and SIGCONT did not redraw.
//!
//! Each case checks that rawpv exits within a second with 128+N and that its last words to the
//! terminal undo what it set up: the alternate screen left, mouse reporting off, the cursor
//! shown.
//!
//! The same pty plays the terminal for `theme = "auto"` (issue 22.9): the test answers rawpv's
//! OSC 10 / OSC 11 / DA1 questions as a terminal with a white background would, and the viewer
//! must say it took the light theme; an explicit `--theme` must ask nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

const ENTER_ALT: &str = "\x1b[?1049h";
const LEAVE_ALT: &str = "\x1b[?1049l";
const MOUSE_OFF: &str = "\x1b[?1000l";
const CURSOR_ON: &str = "\x1b[?25h";

struct Term {
    child: Box<dyn Child + Send + Sync>,
    master: Option<Box<dyn MasterPty + Send>>,
    writer: Option<Box<dyn Write + Send>>,
    out: Arc<Mutex<Vec<u8>>>,
    /// Tells the reader thread to drop its end of the pty after its next read.
    stop_reading: Arc<std::sync::atomic::AtomicBool>,
    _home: tempfile::TempDir,
}

impl Term {
    /// `rawpv ARGS` in an 80x24 pty, HOME holding one Claude Code session.
    fn spawn(args: &[&str]) -> Self {
        let home = crate::support::fake_claude_home();
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: 24,
                cols: 80,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(assert_cmd::cargo::cargo_bin!("rawpv"));
        cmd.args(args);
        cmd.cwd(home.path());
        cmd.env("HOME", home.path());
        cmd.env("TERM", "xterm-256color");
        cmd.env_remove("RAWPV_CONFIG");
        cmd.env_remove("RAWP_TOKEN");
        cmd.env_remove("NO_COLOR");
        let child = pty.slave.spawn_command(cmd).unwrap();
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().unwrap();
        let out = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&out);
        let stop_reading = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop = Arc::clone(&stop_reading);
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || stop.load(std::sync::atomic::Ordering::SeqCst) {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let writer = pty.master.take_writer().unwrap();
        Self {
            child,
            master: Some(pty.master),
            writer: Some(writer),
            out,
            stop_reading,
            _home: home,
        }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.out.lock().unwrap()).into_owned()
    }

    /// Waits until the output after byte `from` contains `needle`; returns where it ends.
    fn wait_for(&self, from: usize, needle: &str, what: &str) -> usize {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let t = self.out.lock().unwrap().clone();
            let hay = String::from_utf8_lossy(t.get(from..).unwrap_or_default()).into_owned();
            if let Some(at) = hay.find(needle) {
                return from + at + needle.len();
            }
            assert!(
                Instant::now() < deadline,
                "{what}: no {needle:?} after byte {from}: {:?}",
                String::from_utf8_lossy(&t[from.min(t.len()).saturating_sub(2000)..])
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn len(&self) -> usize {
        self.out.lock().unwrap().len()
    }

    fn send(&mut self, bytes: &[u8]) {
        let w = self.writer.as_mut().unwrap();
        w.write_all(bytes).unwrap();
        w.flush().unwrap();
    }

    fn pid(&self) -> u32 {
        self.child.process_id().unwrap()
    }

    fn kill(&self, sig: &str) {
        let ok = std::process::Command::new("kill")
            .args([&format!("-{sig}"), &self.pid().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill -{sig}");
    }

    /// The exit code, waiting at most `limit`.
    fn exit_within(&mut self, limit: Duration) -> Option<u32> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status.exit_code());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }

    /// The output after the last time the alternate screen was entered restores every mode
    /// (waiting a little: the reader thread may still be copying the last bytes).
    fn assert_restored(&self, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let t = self.text();
            let tail = &t[t
                .rfind(ENTER_ALT)
                .expect("never entered the alternate screen")..];
            let missing: Vec<&str> = [
                (LEAVE_ALT, "alternate screen left"),
                (MOUSE_OFF, "mouse reporting off"),
                (CURSOR_ON, "cursor shown"),
            ]
            .into_iter()
            .filter(|(seq, _)| !tail.contains(seq))
            .map(|(_, name)| name)
            .collect();
            if missing.is_empty() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: not restored ({missing:?}): {tail:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// The browser → viewer → browser flow: Enter opens the session, `q` comes back.
fn browser_after_viewer() -> Term {
    let mut t = Term::spawn(&[]);
    let at = t.wait_for(0, "Sessions", "browser");
    t.send(b"\r");
    // The viewer draws its feed pane.
    let at = t.wait_for(at, "Feed ", "viewer");
    t.send(b"q");
    t.wait_for(at, "Sessions", "browser again");
    // Let the browser settle on its input before the signal.
    std::thread::sleep(Duration::from_millis(200));
    t
}

/// Sends `sig`; the process must exit with `code` within a second, the terminal restored.
fn assert_signal_ends(mut t: Term, sig: &str, code: u32) {
    t.kill(sig);
    assert_eq!(
        t.exit_within(Duration::from_secs(1)),
        Some(code),
        "SIG{sig}: {:?}",
        t.text()
    );
    t.assert_restored(&format!("SIG{sig}"));
}

#[test]
fn the_browser_after_a_viewer_quits_on_term_hup_and_int() {
    for (sig, code) in [("TERM", 143), ("HUP", 129), ("INT", 130)] {
        assert_signal_ends(browser_after_viewer(), sig, code);
    }
}

#[test]
fn the_browser_after_a_viewer_quits_when_its_terminal_closes() {
    let mut t = browser_after_viewer();
    // Every master end must go: the reader thread drops its own after the redraw of one more
    // key (Down, which changes nothing in a one-session list).
    t.stop_reading
        .store(true, std::sync::atomic::Ordering::SeqCst);
    t.send(b"\x1b[B");
    std::thread::sleep(Duration::from_millis(300));
    drop(t.writer.take());
    drop(t.master.take());
    // 129: the hangup, handled. It used to spin; then, with the hangup handled, ratatui's drop
    // reported the cursor it could not show with `eprintln!` on the dead terminal, which
    // panicked into an abort.
    assert_eq!(
        t.exit_within(Duration::from_secs(1)),
        Some(129),
        "rawpv still runs after its terminal closed, or did not exit cleanly"
    );
}

#[test]
fn the_viewer_quits_on_quit_and_user_signals() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/tui_session.jsonl"
    );
    for (sig, code) in [("QUIT", 131), ("USR1", 138), ("USR2", 140), ("TERM", 143)] {
        let t = Term::spawn(&[file]);
        t.wait_for(0, "Feed ", "viewer");
        assert_signal_ends(t, sig, code);
    }
}

#[test]
fn an_outside_stop_restores_the_terminal_and_continue_redraws() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/tui_session.jsonl"
    );
    let mut t = Term::spawn(&[file]);
    t.wait_for(0, "Feed ", "viewer");
    let at = t.len();
    t.kill("TSTP");
    // Restored before it stops.
    let at = t.wait_for(at, LEAVE_ALT, "SIGTSTP leaves the alternate screen");
    t.wait_for(at - LEAVE_ALT.len(), CURSOR_ON, "SIGTSTP shows the cursor");
    let stat = || std::fs::read_to_string(format!("/proc/{}/stat", t.pid())).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !stat().contains(") T ") {
        assert!(Instant::now() < deadline, "not stopped: {}", stat());
        std::thread::sleep(Duration::from_millis(20));
    }
    t.kill("CONT");
    let at = t.wait_for(at, ENTER_ALT, "SIGCONT re-enters the alternate screen");
    t.wait_for(at, "Feed ", "SIGCONT redraws");
    // A stop rawpv cannot see (SIGSTOP): SIGCONT still sets the screen up and redraws.
    let at = t.len();
    t.kill("STOP");
    std::thread::sleep(Duration::from_millis(200));
    t.kill("CONT");
    let at = t.wait_for(at, ENTER_ALT, "SIGCONT after SIGSTOP");
    t.wait_for(at, "Feed ", "SIGCONT after SIGSTOP redraws");
    t.send(b"q");
    assert_eq!(t.exit_within(Duration::from_secs(5)), Some(0));
    t.assert_restored("q");
}

const ASK_BG: &str = "\x1b]11;?";

/// `theme = "auto"`: rawpv asks for the colours before it takes the screen; answered as a
/// white terminal with black text, it picks the light theme and says so in the status bar.
#[test]
fn auto_theme_asks_the_terminal_and_takes_light_on_a_white_background() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/tui_session.jsonl"
    );
    let mut t = Term::spawn(&[file]);
    let at = t.wait_for(0, ASK_BG, "the background question");
    let before = &t.text()[..at];
    assert!(
        !before.contains(ENTER_ALT),
        "asked after taking the screen: {before:?}"
    );
    // Foreground, background, then the DA1 answer that ends the exchange.
    t.send(b"\x1b]10;rgb:0000/0000/0000\x1b\\\x1b]11;rgb:ffff/ffff/ffff\x1b\\\x1b[?62;22c");
    t.wait_for(
        at,
        "light theme: the terminal's background is #ffffff",
        "the status bar's note",
    );
    t.send(b"q");
    assert_eq!(
        t.exit_within(Duration::from_secs(5)),
        Some(0),
        "{:?}",
        t.text()
    );
}

/// A terminal that only answers DA1 (it does not know OSC 11): the dark theme, at once (no
/// wait for the timeout), and no note.
#[test]
fn auto_theme_without_an_answer_stays_dark_and_quiet() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/tui_session.jsonl"
    );
    let mut t = Term::spawn(&[file]);
    let at = t.wait_for(0, ASK_BG, "the background question");
    t.send(b"\x1b[?62;22c");
    let at = t.wait_for(at, "Feed ", "viewer");
    std::thread::sleep(Duration::from_millis(300));
    assert!(!t.text()[at..].contains("light theme"), "{:?}", t.text());
    t.send(b"q");
    assert_eq!(t.exit_within(Duration::from_secs(5)), Some(0));
}

/// `--theme dark` (like `theme = "dark"` in the config) asks the terminal nothing.
#[test]
fn an_explicit_theme_asks_nothing() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/tui_session.jsonl"
    );
    for theme in ["dark", "light"] {
        let mut t = Term::spawn(&["--theme", theme, file]);
        t.wait_for(0, "Feed ", "viewer");
        assert!(
            !t.text().contains(ASK_BG),
            "--theme {theme}: {:?}",
            t.text()
        );
        t.send(b"q");
        assert_eq!(t.exit_within(Duration::from_secs(5)), Some(0));
    }
}
