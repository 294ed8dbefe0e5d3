//! The real binary on a pseudo-terminal (`portable-pty`), with what it drew read back as a
//! screen: the bytes go through a small VT parser (`vte`, the parser rawpv's own emulator uses)
//! that keeps a grid of cells under cursor moves, so a test asks for text on screen rather than
//! for bytes that a redraw may have split. Also keeps every byte, for sequences (bell, OSC).
//!
//! Not every test uses every helper, hence `dead_code` is allowed.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

/// A running `rawpv` on a pty of a given size.
pub struct Pty {
    child: Box<dyn Child + Send + Sync>,
    _master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    out: Arc<Mutex<Vec<u8>>>,
    cols: u16,
    rows: u16,
}

impl Pty {
    /// `rawpv ARGS` in a `cols`×`rows` pty, in `cwd`, with `HOME` = `home`; no config, token,
    /// `NO_COLOR`, `TMUX` or log from the caller's environment.
    pub fn spawn(args: &[&str], cwd: &Path, home: &Path, cols: u16, rows: u16) -> Self {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(assert_cmd::cargo::cargo_bin!("rawpv"));
        cmd.args(args);
        cmd.cwd(cwd);
        cmd.env("HOME", home);
        cmd.env("TERM", "xterm-256color");
        cmd.env("XDG_CONFIG_HOME", home.join(".config"));
        cmd.env("XDG_CACHE_HOME", home.join(".cache"));
        for v in [
            "RAWPV_CONFIG",
            "RAWP_TOKEN",
            "NO_COLOR",
            "TMUX",
            "RAWPV_LOG",
            "CODEX_HOME",
        ] {
            cmd.env_remove(v);
        }
        let child = pty.slave.spawn_command(cmd).unwrap();
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().unwrap();
        let out = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&out);
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let writer = pty.master.take_writer().unwrap();
        Self {
            child,
            _master: pty.master,
            writer,
            out,
            cols,
            rows,
        }
    }

    /// Every byte written so far.
    pub fn bytes(&self) -> Vec<u8> {
        self.out.lock().unwrap().clone()
    }

    /// The screen as drawn so far, one string a row.
    pub fn screen(&self) -> Vec<String> {
        let mut g = Grid::new(self.cols, self.rows);
        let mut p = vte::Parser::new();
        p.advance(&mut g, &self.bytes());
        g.rows()
    }

    /// Waits (at most `limit`) until a row of the screen contains `needle`; returns the time
    /// it took. Panics with the screen when it does not come.
    pub fn wait_screen(&self, needle: &str, limit: Duration) -> Duration {
        let t0 = Instant::now();
        loop {
            if self.screen().iter().any(|r| r.contains(needle)) {
                return t0.elapsed();
            }
            assert!(
                t0.elapsed() < limit,
                "no {needle:?} on screen within {limit:?}:\n{}",
                self.screen().join("\n")
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits (at most `limit`) until the bytes contain `needle`.
    pub fn wait_bytes(&self, needle: &[u8], limit: Duration) {
        let t0 = Instant::now();
        loop {
            let b = self.bytes();
            if b.windows(needle.len()).any(|w| w == needle) {
                return;
            }
            assert!(
                t0.elapsed() < limit,
                "no {:?} in the output within {limit:?}: …{:?}",
                String::from_utf8_lossy(needle),
                String::from_utf8_lossy(&b[b.len().saturating_sub(600)..])
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
        self.writer.flush().unwrap();
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A grid of cells under the sequences ratatui's crossterm backend writes: printing, CR, LF,
/// BS, cursor position (`CSI row;col H`), cursor moves, erase in display and in line. Wide
/// characters take one cell (the tests look for ASCII text).
struct Grid {
    cells: Vec<Vec<char>>,
    x: usize,
    y: usize,
}

impl Grid {
    fn new(cols: u16, rows: u16) -> Self {
        Self {
            cells: vec![vec![' '; usize::from(cols)]; usize::from(rows)],
            x: 0,
            y: 0,
        }
    }

    fn rows(&self) -> Vec<String> {
        self.cells
            .iter()
            .map(|r| r.iter().collect::<String>().trim_end().to_owned())
            .collect()
    }

    fn clear_row(&mut self, y: usize, from: usize) {
        if let Some(r) = self.cells.get_mut(y) {
            for c in r.iter_mut().skip(from) {
                *c = ' ';
            }
        }
    }
}

impl vte::Perform for Grid {
    fn print(&mut self, c: char) {
        if let Some(cell) = self.cells.get_mut(self.y).and_then(|r| r.get_mut(self.x)) {
            *cell = c;
        }
        self.x += 1;
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            b'\r' => self.x = 0,
            b'\n' => self.y = (self.y + 1).min(self.cells.len().saturating_sub(1)),
            8 => self.x = self.x.saturating_sub(1),
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &vte::Params, _: &[u8], _: bool, action: char) {
        let nums: Vec<usize> = params
            .iter()
            .map(|p| usize::from(p.first().copied().unwrap_or(0)))
            .collect();
        let n = |i: usize| nums.get(i).copied().filter(|&v| v > 0).unwrap_or(1);
        match action {
            'H' | 'f' => {
                self.y = n(0) - 1;
                self.x = n(1) - 1;
            }
            'A' => self.y = self.y.saturating_sub(n(0)),
            'B' => self.y += n(0),
            'C' => self.x += n(0),
            'D' => self.x = self.x.saturating_sub(n(0)),
            'G' => self.x = n(0) - 1,
            'J' => {
                if nums.first().copied().unwrap_or(0) == 2 {
                    for y in 0..self.cells.len() {
                        self.clear_row(y, 0);
                    }
                } else {
                    self.clear_row(self.y, self.x);
                    for y in self.y + 1..self.cells.len() {
                        self.clear_row(y, 0);
                    }
                }
            }
            'K' => self.clear_row(self.y, self.x),
            _ => {}
        }
    }
}
