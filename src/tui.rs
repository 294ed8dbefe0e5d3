//! Terminal guard: raw mode, alternate screen, mouse capture, and undoing each of them
//! (STYLE 4.8).
//!
//! Who uses it: [`crate::app::run`], the only owner of the terminal. Invariants: [`restore`] is
//! idempotent and is reached on quit (`Drop`), on error (`Drop` while unwinding the `?`), on panic
//! (the hook installed by [`Tui::init`] restores first, then runs the previous hook so the message
//! is readable) and on every fatal signal of `crate::signals` (the screen's loop quits, which
//! drops the guard; `main.rs` then exits 128+N).
//! Every draw is wrapped in synchronized output so fast streams do not tear.

use std::io::{self, Stdout, Write};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::terminal::{
    BeginSynchronizedUpdate, EndSynchronizedUpdate, EnterAlternateScreen, LeaveAlternateScreen,
    disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute, queue};
use ratatui::backend::CrosstermBackend;
use ratatui::{Frame, Terminal};

/// Whether the terminal is currently in TUI mode (raw, alternate screen, mouse).
static ACTIVE: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// The terminal in TUI mode. Dropping it restores the terminal.
pub struct Tui {
    pub terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl Tui {
    /// Enters TUI mode and installs the panic hook (once per process).
    ///
    /// # Errors
    /// The terminal refused a mode (then whatever was enabled is undone).
    pub fn init() -> io::Result<Self> {
        HOOK.call_once(|| {
            let prev = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                let _ = restore();
                prev(info);
            }));
        });
        enter()?;
        match Terminal::new(CrosstermBackend::new(io::stdout())) {
            Ok(terminal) => Ok(Self { terminal }),
            Err(e) => {
                let _ = restore();
                Err(e)
            }
        }
    }

    /// Draws one frame inside synchronized output.
    ///
    /// # Errors
    /// Writing to the terminal failed.
    pub fn draw(&mut self, f: impl FnOnce(&mut Frame<'_>)) -> io::Result<()> {
        queue!(self.terminal.backend_mut(), BeginSynchronizedUpdate)?;
        let r = self.terminal.draw(f).map(|_| ());
        queue!(self.terminal.backend_mut(), EndSynchronizedUpdate)?;
        self.terminal.backend_mut().flush()?;
        r
    }

    /// Ctrl-Z or an outside SIGTSTP: restores the terminal, stops the process, and on `fg`
    /// re-enters TUI mode and clears so the next draw repaints everything. It stops with SIGSTOP:
    /// SIGTSTP has a handler while the screen runs (`crate::signals`), so raising it would not
    /// stop anything.
    ///
    /// # Errors
    /// Re-entering TUI mode failed.
    pub fn suspend(&mut self) -> io::Result<()> {
        restore()?;
        #[cfg(unix)]
        {
            let _ = signal_hook::low_level::raise(signal_hook::consts::SIGSTOP);
        }
        self.resume()
    }

    /// Re-enters TUI mode (raw, alternate screen, mouse; the shell may have reset them while
    /// the process was stopped) and clears so the next draw repaints everything (SIGCONT).
    ///
    /// # Errors
    /// Re-entering TUI mode failed.
    pub fn resume(&mut self) -> io::Result<()> {
        enter()?;
        self.clear_screen()
    }

    /// Clears the screen and makes the next draw repaint everything. Unlike ratatui 0.30's
    /// `Terminal::clear`, it does not ask the terminal for the cursor position: that reply can
    /// be lost to an event reader just dropped (returning from the viewer to the session
    /// browser failed with "The cursor position could not be read within a normal duration").
    ///
    /// # Errors
    /// The size could not be read or the terminal written.
    pub fn clear_screen(&mut self) -> io::Result<()> {
        let size = self.terminal.size()?;
        self.terminal
            .resize(ratatui::layout::Rect::new(0, 0, size.width, size.height))
    }

    /// Current size of the terminal in cells.
    ///
    /// # Errors
    /// The size could not be read.
    pub fn size(&self) -> io::Result<ratatui::layout::Size> {
        self.terminal.size()
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        if restore().is_err() {
            // Exit as for a hangup (129), whether the SIGHUP or an I/O error came first.
            crate::signals::terminal_lost();
            // The terminal is gone (its pty closed: EIO). ratatui's own drop then reports the
            // cursor it cannot show with `eprintln!`, which panics on the dead stderr and
            // aborted the process (SIGABRT instead of a clean exit): point stdout and stderr at
            // /dev/null first, so every later write succeeds and goes nowhere.
            detach_from_terminal();
        }
    }
}

/// Points stdout and stderr at `/dev/null` (Unix; elsewhere nothing).
fn detach_from_terminal() {
    #[cfg(unix)]
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        let _ = rustix::stdio::dup2_stdout(&null);
        let _ = rustix::stdio::dup2_stderr(&null);
    }
}

fn enter() -> io::Result<()> {
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    execute!(
        io::stdout(),
        EnterAlternateScreen,
        EnableMouseCapture,
        cursor::Hide
    )
    .inspect_err(|_| {
        let _ = restore();
    })
}

/// Leaves TUI mode: each mode undone separately, so one failure does not skip the others.
/// Does nothing when the terminal is not in TUI mode.
///
/// # Errors
/// The first failure, after trying every step.
pub fn restore() -> io::Result<()> {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return Ok(());
    }
    let mut out = io::stdout();
    let steps = [
        execute!(out, EndSynchronizedUpdate),
        execute!(out, DisableMouseCapture),
        execute!(out, LeaveAlternateScreen),
        execute!(out, cursor::Show),
        disable_raw_mode(),
    ];
    steps
        .into_iter()
        .collect::<io::Result<Vec<()>>>()
        .map(|_| ())
}
