//! The app loop's output seam: a [`Screen`] is what [`super::run_loop`] measures, draws on, writes
//! copy sequences to and suspends.
//!
//! Who uses it: [`super::run`] (and the replay player and browser) through [`Tui`], the real
//! terminal; benches and tests through [`BackendScreen`], any ratatui backend at a fixed size
//! (e.g. `CrosstermBackend` over a byte sink, so the whole draw cost including escape sequences
//! is paid without a terminal, or `TestBackend` to read the screen back).
//!
//! Invariants: the loop calls [`Screen::drew`] after every draw with the app as it was drawn;
//! the default does nothing, so the real terminal path is unchanged by the hook.

use std::io::{self, Write};

use ratatui::backend::Backend;
use ratatui::layout::{Rect, Size};
use ratatui::{Frame, Terminal, TerminalOptions, Viewport};

use super::{App, copy};
use crate::tui::Tui;

/// Where the loop draws.
pub trait Screen {
    /// Current size in cells.
    ///
    /// # Errors
    /// The size could not be read (terminal I/O).
    fn size(&self) -> io::Result<Size>;

    /// Draws one frame.
    ///
    /// # Errors
    /// Writing failed (terminal I/O).
    fn draw(&mut self, f: impl FnOnce(&mut Frame<'_>)) -> io::Result<()>;

    /// Writes a raw control sequence (an OSC 52 copy) and flushes.
    ///
    /// # Errors
    /// Writing failed (terminal I/O).
    fn write_raw(&mut self, seq: &str) -> io::Result<()>;

    /// Ctrl-Z: hands the terminal back until the process is resumed.
    ///
    /// # Errors
    /// Re-entering TUI mode failed.
    fn suspend(&mut self) -> io::Result<()>;

    /// SIGCONT after a stop rawpv did not see (SIGSTOP): sets the terminal up again and makes
    /// the next draw repaint everything. The default does nothing.
    ///
    /// # Errors
    /// Re-entering TUI mode failed.
    fn resume(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Called right after each draw with the app as drawn (benches timestamp draws here).
    fn drew(&mut self, _app: &App) {}
}

impl Screen for Tui {
    fn size(&self) -> io::Result<Size> {
        Self::size(self)
    }

    fn draw(&mut self, f: impl FnOnce(&mut Frame<'_>)) -> io::Result<()> {
        Self::draw(self, f)
    }

    fn write_raw(&mut self, seq: &str) -> io::Result<()> {
        copy::write_osc52(self, seq)
    }

    fn suspend(&mut self) -> io::Result<()> {
        Self::suspend(self)
    }

    fn resume(&mut self) -> io::Result<()> {
        Self::resume(self)
    }
}

/// A screen over any ratatui backend with a fixed size (no terminal needed). `write_raw` (copy)
/// and `suspend` do nothing.
pub struct BackendScreen<B: Backend> {
    pub terminal: Terminal<B>,
    size: Size,
}

impl<B: Backend> std::fmt::Debug for BackendScreen<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackendScreen")
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl<B: Backend> BackendScreen<B>
where
    B::Error: Send + Sync + 'static,
{
    /// A `width` × `height` screen on `backend` (a fixed viewport: the backend's own size is
    /// never asked, so a byte sink works).
    ///
    /// # Errors
    /// The backend refused the set-up.
    pub fn new(backend: B, width: u16, height: u16) -> io::Result<Self> {
        let area = Rect::new(0, 0, width, height);
        let terminal = Terminal::with_options(
            backend,
            TerminalOptions {
                viewport: Viewport::Fixed(area),
            },
        )
        .map_err(io::Error::other)?;
        Ok(Self {
            terminal,
            size: area.as_size(),
        })
    }
}

impl<B: Backend> Screen for BackendScreen<B>
where
    B::Error: Send + Sync + 'static,
{
    fn size(&self) -> io::Result<Size> {
        Ok(self.size)
    }

    fn draw(&mut self, f: impl FnOnce(&mut Frame<'_>)) -> io::Result<()> {
        self.terminal
            .draw(f)
            .map(|_| ())
            .map_err(io::Error::other)?;
        self.terminal
            .backend_mut()
            .flush()
            .map_err(io::Error::other)
    }

    fn write_raw(&mut self, _seq: &str) -> io::Result<()> {
        Ok(())
    }

    fn suspend(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A byte sink that counts what the draws wrote (for `CrosstermBackend<CountingSink>`); clones
/// share the count, so keep one to read it.
#[derive(Debug, Default, Clone)]
pub struct CountingSink {
    bytes: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl CountingSink {
    /// Bytes written so far (through any clone).
    pub fn bytes(&self) -> u64 {
        self.bytes.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Write for CountingSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes
            .fetch_add(buf.len() as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
