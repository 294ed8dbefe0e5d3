//! The app loop (STYLE 4.4, 4.7): terminal input first, then signals, draws (at most one per
//! [`MIN_FRAME`], coalesced by [`FrameScheduler`]), render results, source batches
//! ([`BATCHES_PER_TURN`] per turn, [`APPLY_PER_TURN`] items at most) and timers.
//!
//! Who calls it: [`super::run`] with the real terminal, the replay player and the browser;
//! benches and tests with a `BackendScreen` and their own input stream. Invariants: only this
//! loop owns the terminal; render jobs run on `spawn_blocking` and report back by channel.

use std::time::Duration;

use crossterm::event::{Event, EventStream};
use futures::StreamExt;
use ratatui::layout::Rect;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::{APPLY_PER_TURN, App, BATCHES_PER_TURN, MIN_FRAME, Msg, Screen, TICK};
use crate::detail::RenderDone;
use crate::protocol::Timestamp;
use crate::source::SourceMsg;
use crate::tui::Tui;

/// Coalesces draw requests: draws when dirty, at most once per `min` (STYLE 4.7).
#[derive(Debug, Clone)]
pub struct FrameScheduler {
    min: Duration,
    last: Option<Instant>,
    dirty: bool,
    urgent: bool,
}

impl FrameScheduler {
    pub fn new(min: Duration) -> Self {
        Self {
            min,
            last: None,
            dirty: true,
            urgent: false,
        }
    }

    /// Something changed: draw at the next allowed instant.
    pub fn request(&mut self) {
        self.dirty = true;
    }

    /// The user did something: draw at once, without waiting out the minimum interval (input
    /// comes at human rates; only source-driven draws need coalescing).
    pub fn request_now(&mut self) {
        self.dirty = true;
        self.urgent = true;
    }

    /// When to draw next: `None` when nothing changed.
    pub fn deadline(&self) -> Option<Instant> {
        if !self.dirty {
            return None;
        }
        if self.urgent {
            return Some(Instant::now());
        }
        Some(self.last.map_or_else(Instant::now, |l| l + self.min))
    }

    /// A frame was drawn at `now`.
    pub fn drew(&mut self, now: Instant) {
        self.last = Some(now);
        self.dirty = false;
        self.urgent = false;
    }
}

pub(crate) async fn event_loop(
    app: &mut App,
    tui: &mut Tui,
    rx: mpsc::Receiver<SourceMsg>,
) -> color_eyre::Result<()> {
    // Boxed: the loop's state is large (clippy::large_futures for every caller otherwise).
    Box::pin(run_loop(app, tui, EventStream::new(), rx)).await
}

/// The app loop (STYLE 4.4): terminal input first, then signals, draws (at most one per
/// [`MIN_FRAME`]), render results, source batches ([`BATCHES_PER_TURN`] per turn) and timers;
/// returns when the app quits, `events` ends or a signal arrives. [`run`] calls it with the real
/// terminal and crossterm's event stream; benches and tests with a [`BackendScreen`] and their
/// own input stream.
///
/// # Errors
/// Input or screen I/O failed.
pub async fn run_loop<S, E>(
    app: &mut App,
    screen: &mut S,
    mut events: E,
    mut rx: mpsc::Receiver<SourceMsg>,
) -> color_eyre::Result<()>
where
    S: Screen,
    E: futures::Stream<Item = std::io::Result<Event>> + Unpin,
{
    let (render_tx, mut render_rx) = mpsc::channel::<RenderDone>(16);
    // One export runs at a time (`App::export_page`).
    let (export_tx, mut export_rx) = mpsc::channel::<super::Exported>(1);
    // `v`'s decodes (`App::view_image`); a newer one supersedes an older one on arrival.
    let (image_tx, mut image_rx) = mpsc::channel::<super::ImageDecoded>(4);
    let mut sched = FrameScheduler::new(MIN_FRAME);
    let mut batch = Vec::with_capacity(BATCHES_PER_TURN);
    // Received but not yet applied (a turn applies at most APPLY_PER_TURN items).
    let mut pending = std::collections::VecDeque::new();
    let mut source_open = true;
    let mut signals = crate::signals::Signals::new()?;
    let mut next_tick = Instant::now() + TICK;
    while !app.quit {
        let draw_at = sched.deadline();
        let ticking = app.animating();
        let replay_at = app.replay_deadline();
        tokio::select! {
            biased;
            ev = events.next() => match ev {
                Some(Ok(ev)) => {
                    if app.update(Msg::Term(ev)) {
                        sched.request_now();
                    }
                }
                Some(Err(e)) => return Err(e.into()),
                None => break,
            },
            sig = signals.recv() => match sig {
                crate::signals::Sig::Fatal(_) => break,
                crate::signals::Sig::Stop => {
                    screen.suspend()?;
                    sched.request_now();
                }
                crate::signals::Sig::Cont => {
                    screen.resume()?;
                    sched.request_now();
                }
            },
            // A frame that is due is drawn before more input is applied: checked here, not
            // only by its timer, which a loop that always has a batch ready never lets fire (a
            // firehose of 1,000 interleaved sessions drew 1-2 frames a second).
            () = std::future::ready(()), if draw_at.is_some_and(|d| d <= Instant::now()) => {
                draw_frame(app, screen, &render_tx, &mut sched)?;
            }
            () = sleep_until_opt(draw_at), if draw_at.is_some() => {
                draw_frame(app, screen, &render_tx, &mut sched)?;
            }
            () = std::future::ready(()), if app.scanning() && draw_at.is_none_or(|d| d > Instant::now()) => {
                // A bounded step of a search or filter; input, signals and due frames first.
                if app.update(Msg::Work) {
                    sched.request();
                }
            }
            Some(done) = render_rx.recv() => {
                if app.update(Msg::Rendered(done)) {
                    sched.request();
                }
            }
            Some(done) = export_rx.recv() => {
                if app.update(Msg::Exported(done)) {
                    sched.request();
                }
            }
            Some(done) = image_rx.recv() => {
                if app.update(Msg::ImageDecoded(done)) {
                    sched.request();
                }
            }
            () = std::future::ready(()), if !pending.is_empty() => {
                apply_some(app, &mut pending, APPLY_PER_TURN);
                sched.request();
            }
            n = rx.recv_many(&mut batch, BATCHES_PER_TURN), if source_open && pending.is_empty() => {
                if n == 0 {
                    source_open = false;
                }
                pending.extend(batch.drain(..));
                apply_some(app, &mut pending, APPLY_PER_TURN);
                sched.request();
            }
            () = sleep_until_opt(replay_at), if replay_at.is_some() => {
                if app.update(Msg::ReplayTick(Instant::now())) {
                    sched.request();
                }
            }
            () = tokio::time::sleep_until(next_tick), if ticking => {
                next_tick = Instant::now() + TICK;
                let now = Timestamp(chrono::Utc::now().timestamp_millis());
                if app.update(Msg::Tick(now)) {
                    sched.request();
                }
            }
        }
        if let Some(job) = app.take_export_job() {
            let tx = export_tx.clone();
            tokio::task::spawn_blocking(move || {
                let _ = tx.blocking_send(job.run());
            });
        }
        if let Some(job) = app.take_image_job() {
            let tx = image_tx.clone();
            tokio::task::spawn_blocking(move || {
                let _ = tx.blocking_send(job.run());
            });
        }
        if let Some(seq) = app.clipboard_out.take() {
            screen.write_raw(&seq)?;
        }
        if let Some(seq) = app.take_attention_out() {
            screen.write_raw(&seq)?;
        }
        if app.suspend_requested {
            app.suspend_requested = false;
            screen.suspend()?;
            sched.request();
        }
    }
    Ok(())
}

/// Draws one frame: prepares the app for the screen's size, starts the detail's render job if
/// one is due, draws, and tells the scheduler.
fn draw_frame<S: Screen>(
    app: &mut App,
    screen: &mut S,
    render_tx: &mpsc::Sender<RenderDone>,
    sched: &mut FrameScheduler,
) -> color_eyre::Result<()> {
    let size = screen.size()?;
    app.prepare(Rect::new(0, 0, size.width, size.height));
    if let Some(job) = app.detail.take_job() {
        let tx = render_tx.clone();
        tokio::task::spawn_blocking(move || {
            let _ = tx.blocking_send(job.run());
        });
    }
    screen.draw(|f| app.draw(f))?;
    screen.drew(app);
    sched.drew(Instant::now());
    Ok(())
}

/// Applies queued source messages in order until `budget` decoded items were applied; a batch
/// that does not fit is split and its rest stays first in the queue.
pub(super) fn apply_some(
    app: &mut App,
    pending: &mut std::collections::VecDeque<SourceMsg>,
    budget: usize,
) {
    let mut left = budget.max(1);
    while left > 0
        && let Some(m) = pending.pop_front()
    {
        let m = match m {
            SourceMsg::Batch(mut items) if items.len() > left => {
                let rest = items.split_off(left);
                pending.push_front(SourceMsg::Batch(rest));
                SourceMsg::Batch(items)
            }
            other => other,
        };
        if let SourceMsg::Batch(items) = &m {
            left -= items.len().min(left);
        }
        app.update(Msg::Source(m));
    }
}

async fn sleep_until_opt(at: Option<Instant>) {
    if let Some(at) = at {
        tokio::time::sleep_until(at).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn frames_are_coalesced_to_the_minimum_interval() {
        let mut s = FrameScheduler::new(MIN_FRAME);
        let t0 = Instant::now();
        assert_eq!(s.deadline(), Some(t0), "first frame is due at once");
        s.drew(t0);
        assert_eq!(s.deadline(), None, "idle: no deadline, no timer");
        tokio::time::advance(Duration::from_millis(3)).await;
        s.request();
        s.request();
        assert_eq!(s.deadline(), Some(t0 + MIN_FRAME), "waits out the interval");
        tokio::time::sleep_until(s.deadline().unwrap_or(t0)).await;
        assert_eq!(Instant::now() - t0, MIN_FRAME);
        s.drew(Instant::now());
        tokio::time::advance(Duration::from_millis(100)).await;
        s.request();
        assert!(
            s.deadline().is_some_and(|d| d <= Instant::now()),
            "late request draws at once"
        );
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn input_draws_at_once_without_waiting_out_the_interval() {
        let mut s = FrameScheduler::new(MIN_FRAME);
        let t0 = Instant::now();
        s.drew(t0);
        s.request();
        assert_eq!(
            s.deadline(),
            Some(t0 + MIN_FRAME),
            "source changes are coalesced"
        );
        s.request_now();
        assert_eq!(s.deadline(), Some(t0), "a key is drawn at once");
        s.drew(t0);
        s.request();
        assert_eq!(
            s.deadline(),
            Some(t0 + MIN_FRAME),
            "urgency ends with the draw"
        );
    }
}
