//! Process signals while rawpv owns the terminal: which ones end it, which suspend it, and the
//! exit code a fatal one leaves.
//!
//! Who uses it: the viewer's loop ([`crate::app::run_loop`]) and the session browser
//! (`app/browser.rs`), each polling its own [`Signals`]; `main.rs` reads [`fatal`] for the exit
//! code. Registering a handler replaces the signal's default action for the rest of the process
//! (tokio never restores it), so every screen that runs while one is registered must poll a
//! [`Signals`] — the browser did not, and after a viewer had run it ignored SIGTERM, SIGHUP and
//! SIGINT (issue 14.2).
//!
//! Invariants: a fatal signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2) is recorded
//! once in [`fatal`] before it is reported, so a caller that returns early still exits `128+N`;
//! SIGTSTP from outside (`kill -TSTP`, a job-control stop) is reported as [`Sig::Stop`] so the
//! terminal is restored before the process stops; SIGCONT as [`Sig::Cont`] so the screen is set
//! up and drawn again. Nothing here touches the terminal.

use std::sync::atomic::{AtomicI32, Ordering};

/// The first fatal signal received (0: none).
static FATAL: AtomicI32 = AtomicI32::new(0);

/// The number of the first fatal signal received, if any: the process should exit `128 + n`
/// (the shell's convention for "killed by signal n").
pub fn fatal() -> Option<i32> {
    match FATAL.load(Ordering::SeqCst) {
        0 => None,
        n => Some(n),
    }
}

/// Records that the terminal went away (its pty closed), as a hangup: the process exits 129
/// whichever it noticed first, the SIGHUP or an error reading or writing the terminal (which
/// used to exit 2 or, worse, abort). A fatal signal already recorded is kept.
pub fn terminal_lost() {
    #[cfg(unix)]
    let _ = FATAL.compare_exchange(
        0,
        signal_hook::consts::SIGHUP,
        Ordering::SeqCst,
        Ordering::SeqCst,
    );
}

/// What a signal asks of the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sig {
    /// Quit now, restoring the terminal; the signal's number (exit `128 + n`).
    Fatal(i32),
    /// Restore the terminal, stop, and set it up again when continued (SIGTSTP).
    Stop,
    /// Continued after a stop rawpv did not see coming (SIGSTOP): set up and redraw (SIGCONT).
    Cont,
}

/// The signals of a terminal screen as one stream.
pub struct Signals {
    #[cfg(unix)]
    sigs: Vec<(Sig, tokio::signal::unix::Signal)>,
}

impl Signals {
    /// Registers the handlers (idempotent across instances: each gets every later signal).
    ///
    /// # Errors
    /// The runtime could not register a handler (no signal driver).
    pub fn new() -> std::io::Result<Self> {
        #[cfg(unix)]
        {
            use signal_hook::consts as c;
            use tokio::signal::unix::{SignalKind, signal};
            let fatal = [
                c::SIGINT,
                c::SIGTERM,
                c::SIGHUP,
                c::SIGQUIT,
                c::SIGUSR1,
                c::SIGUSR2,
            ];
            let mut sigs = Vec::with_capacity(fatal.len() + 2);
            for n in fatal {
                sigs.push((Sig::Fatal(n), signal(SignalKind::from_raw(n))?));
            }
            sigs.push((Sig::Stop, signal(SignalKind::from_raw(c::SIGTSTP))?));
            sigs.push((Sig::Cont, signal(SignalKind::from_raw(c::SIGCONT))?));
            Ok(Self { sigs })
        }
        #[cfg(not(unix))]
        Ok(Self {})
    }

    /// The next signal. A fatal one is recorded for [`fatal`] first.
    pub async fn recv(&mut self) -> Sig {
        #[cfg(unix)]
        {
            let next = futures::future::select_all(
                self.sigs
                    .iter_mut()
                    .map(|(sig, s)| Box::pin(async move { s.recv().await.map(|()| *sig) })),
            );
            let (got, _, _) = next.await;
            match got {
                Some(sig) => {
                    if let Sig::Fatal(n) = sig {
                        let _ = FATAL.compare_exchange(0, n, Ordering::SeqCst, Ordering::SeqCst);
                    }
                    sig
                }
                // The signal driver is gone (runtime shutting down): as good as a hangup.
                None => std::future::pending().await,
            }
        }
        #[cfg(not(unix))]
        std::future::pending().await
    }
}
