//! Replay player: a timeline cursor over a fully loaded session (STYLE 4.4 "Replay as a
//! timeline cursor").
//!
//! Who calls it: [`crate::app`] with `rawpv --replay FILE` (the app owns the terminal, the timer
//! and the [`Session`]); the timeline widget (`crate::ui::timeline`) reads it. Pure: no
//! terminal, no I/O, no timers; the caller passes `now` (a tokio `Instant`, so tests run on
//! paused time) and applies the returned [`Move`] to its session.
//!
//! Model:
//! * `cursor` = how many decoded items are applied (0 ..= len);
//! * `pos` = the playback position on the *compressed* timeline (see [`due_times`]);
//! * while playing, `pos` advances by wall time × `speed` from an anchor instant; every item whose
//!   due time is ≤ `pos` gets applied (a [`Move::Forward`]);
//! * going back (step back, seek) means "rebuild the session from the nearest checkpoint and
//!   re-apply up to N" ([`Replay::rebuild`]); checkpoints are taken every
//!   [`Replay::checkpoint_every`] items on the way, lazily.
//!
//! Invariants: `cursor <= len`; `speed` in [`MIN_SPEED`, `MAX_SPEED`]; reaching the end while
//! playing pauses; a [`Move`] always leaves `cursor` where it says.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::time::Instant;

use crate::import::Decoded;
use crate::protocol::{Body, FrameType, ResultStatus};
use crate::session::Session;

/// Slowest replay speed (× recorded pace).
pub const MIN_SPEED: f64 = 0.25;
/// Fastest replay speed (× recorded pace).
pub const MAX_SPEED: f64 = 64.0;
/// Smallest checkpoint interval in items: below this, re-applying from the start is cheap
/// (the reducer folds ~1 M small frames/s in debug-free builds).
pub const CHECKPOINT_MIN: usize = 1024;
/// At most this many checkpoints (each a full session clone), so memory stays within a small
/// multiple of the session.
pub const MAX_CHECKPOINTS: usize = 8;

/// What the caller must do to its session after a replay operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    /// Nothing changed.
    None,
    /// Apply `items()[from..to]` to the current session (in order).
    Forward { from: usize, to: usize },
    /// Replace the session with [`Replay::rebuild`]`(to)`.
    Back { to: usize },
}

/// A marker on the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkKind {
    /// A user prompt or a `session.turn.end`.
    Turn,
    /// A failed result, `agent.error`, `session.error` or a malformed line.
    Error,
}

/// The observable state, for whole-state asserts and the timeline widget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplayState {
    /// Items applied.
    pub cursor: usize,
    /// Total items.
    pub len: usize,
    /// Position on the compressed timeline, ms.
    pub pos_ms: u64,
    /// Length of the compressed timeline, ms.
    pub total_ms: u64,
    pub speed: f64,
    pub playing: bool,
}

/// The replay player.
#[derive(Debug)]
pub struct Replay {
    items: Vec<Decoded>,
    due: Vec<Duration>,
    /// Cursor positions that start a turn (after the prompt / turn end is applied), ascending.
    turns: Vec<usize>,
    marks: Vec<(usize, MarkKind)>,
    cursor: usize,
    pos: Duration,
    speed: f64,
    /// `Some(t)`: playing, and `pos` was the position at instant `t`.
    anchor: Option<Instant>,
    checkpoint_every: usize,
    checkpoints: BTreeMap<usize, Session>,
}

/// Due time of each item on the compressed timeline: the first timestamped item is at 0; each
/// later timestamped item is due `min(gap, max_idle)` after the previous timestamped one (a
/// backwards timestamp counts as gap 0); items without a timestamp (malformed lines, findings,
/// frames with no `timestamp`) are due together with the item before them, i.e. immediately.
pub fn due_times(items: &[Decoded], max_idle: Duration) -> Vec<Duration> {
    let mut out = Vec::with_capacity(items.len());
    let mut at = Duration::ZERO;
    let mut last_ts: Option<i64> = None;
    for d in items {
        if let Some(ts) = timestamp_ms(d) {
            if let Some(prev) = last_ts {
                let gap = Duration::from_millis(u64::try_from(ts - prev).unwrap_or(0));
                at += gap.min(max_idle);
            }
            last_ts = Some(last_ts.map_or(ts, |p| p.max(ts)));
        }
        out.push(at);
    }
    out
}

fn timestamp_ms(d: &Decoded) -> Option<i64> {
    match d {
        Decoded::Frame(f) => f.envelope.timestamp.map(|t| t.0),
        Decoded::Malformed(_) | Decoded::Finding(_) => None,
    }
}

fn mark_of(d: &Decoded) -> Option<MarkKind> {
    match d {
        Decoded::Frame(f) => {
            let ty = &f.frame_type;
            let failed = matches!(&f.body, Body::Result(r)
                if matches!(r.status, Some(ResultStatus::Error | ResultStatus::Timeout)));
            if matches!(
                ty,
                FrameType::ControlPromptRequest | FrameType::SessionTurnEnd
            ) {
                Some(MarkKind::Turn)
            } else if failed || matches!(ty, FrameType::AgentError | FrameType::SessionError) {
                Some(MarkKind::Error)
            } else {
                None
            }
        }
        Decoded::Malformed(_) => Some(MarkKind::Error),
        Decoded::Finding(_) => None,
    }
}

impl Replay {
    /// A player over `items`, paused at 0, at `speed` (clamped), with idle gaps compressed to
    /// `max_idle`.
    pub fn new(items: Vec<Decoded>, speed: f64, max_idle: Duration) -> Self {
        let due = due_times(&items, max_idle);
        let marks: Vec<(usize, MarkKind)> = items
            .iter()
            .enumerate()
            .filter_map(|(i, d)| mark_of(d).map(|m| (i, m)))
            .collect();
        let turns = turn_starts(&items);
        let checkpoint_every = CHECKPOINT_MIN.max(items.len().div_ceil(MAX_CHECKPOINTS));
        Self {
            items,
            due,
            turns,
            marks,
            cursor: 0,
            pos: Duration::ZERO,
            speed: clamp_speed(speed),
            anchor: None,
            checkpoint_every,
            checkpoints: BTreeMap::new(),
        }
    }

    /// The loaded items.
    pub fn items(&self) -> &[Decoded] {
        &self.items
    }

    /// Items applied so far.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn is_playing(&self) -> bool {
        self.anchor.is_some()
    }

    pub fn speed(&self) -> f64 {
        self.speed
    }

    /// Checkpoint interval in items.
    pub fn checkpoint_every(&self) -> usize {
        self.checkpoint_every
    }

    /// Length of the compressed timeline.
    pub fn total(&self) -> Duration {
        self.due.last().copied().unwrap_or_default()
    }

    /// Timeline markers `(item index, kind)`, ascending.
    pub fn marks(&self) -> &[(usize, MarkKind)] {
        &self.marks
    }

    /// Due time of item `i` on the compressed timeline.
    pub fn due(&self, i: usize) -> Option<Duration> {
        self.due.get(i).copied()
    }

    /// The playback position at `now`.
    pub fn position(&self, now: Instant) -> Duration {
        match self.anchor {
            Some(a) => (self.pos + now.saturating_duration_since(a).mul_f64(self.speed))
                .min(self.total().max(self.pos)),
            None => self.pos,
        }
    }

    /// Everything observable, at `now`.
    pub fn state(&self, now: Instant) -> ReplayState {
        ReplayState {
            cursor: self.cursor,
            len: self.items.len(),
            pos_ms: self.position(now).as_millis() as u64,
            total_ms: self.total().as_millis() as u64,
            speed: self.speed,
            playing: self.is_playing(),
        }
    }

    /// When the next item falls due while playing; `None` when paused or at the end (then the
    /// caller runs no timer).
    pub fn next_due(&self) -> Option<Instant> {
        let anchor = self.anchor?;
        let due = *self.due.get(self.cursor)?;
        let ahead = due.saturating_sub(self.pos);
        Some(anchor + ahead.div_f64(self.speed))
    }

    /// Applies what is due at `now` (nothing when paused). Reaching the end pauses.
    pub fn tick(&mut self, now: Instant) -> Move {
        if self.anchor.is_none() {
            return Move::None;
        }
        let p = self.position(now);
        let to = self.due.partition_point(|&d| d <= p).max(self.cursor);
        let from = self.cursor;
        self.cursor = to;
        if to == self.items.len() {
            self.pos = p;
            self.anchor = None;
        }
        forward(from, to)
    }

    /// Space: play or pause. Playing from the end starts over from 0.
    pub fn toggle_play(&mut self, now: Instant) -> Move {
        if self.anchor.is_some() {
            self.pos = self.position(now);
            self.anchor = None;
            return Move::None;
        }
        let mv = if self.cursor == self.items.len() && !self.items.is_empty() {
            self.seek_to(0, Duration::ZERO)
        } else {
            Move::None
        };
        self.anchor = Some(now);
        mv
    }

    /// Starts playing (no-op when playing).
    pub fn play(&mut self, now: Instant) -> Move {
        if self.anchor.is_some() {
            return Move::None;
        }
        self.toggle_play(now)
    }

    /// `+` / `-`: doubles or halves the speed (clamped), keeping the position.
    pub fn change_speed(&mut self, now: Instant, faster: bool) {
        self.rebase(now);
        self.speed = clamp_speed(if faster {
            self.speed * 2.0
        } else {
            self.speed / 2.0
        });
    }

    /// `.` / `,`: one item forward or back; pauses.
    pub fn step(&mut self, now: Instant, forward: bool) -> Move {
        self.pause(now);
        let to = if forward {
            (self.cursor + 1).min(self.items.len())
        } else {
            self.cursor.saturating_sub(1)
        };
        self.seek_frame(now, to)
    }

    /// Pauses (no-op when paused).
    pub fn pause(&mut self, now: Instant) {
        if self.anchor.is_some() {
            self.pos = self.position(now);
            self.anchor = None;
        }
    }

    /// Moves the cursor to `n` items applied (clamped); the position becomes the due time of the
    /// last applied item. Keeps playing if playing.
    pub fn seek_frame(&mut self, now: Instant, n: usize) -> Move {
        let n = n.min(self.items.len());
        let pos = if n == 0 {
            Duration::ZERO
        } else {
            self.due[n - 1]
        };
        self.rebase(now);
        self.seek_to(n, pos)
    }

    /// Digits: seek to `percent` of the compressed timeline (0 = the very start, nothing shown).
    pub fn seek_percent(&mut self, now: Instant, percent: u8) -> Move {
        if percent == 0 {
            self.rebase(now);
            return self.seek_to(0, Duration::ZERO);
        }
        let t = self.total().mul_f64(f64::from(percent.min(100)) / 100.0);
        let n = self.due.partition_point(|&d| d <= t);
        self.rebase(now);
        self.seek_to(n, t)
    }

    /// `]` / `[`: the next or previous turn start (prompt or turn end applied). Returns
    /// `Move::None` when there is none that way.
    pub fn seek_turn(&mut self, now: Instant, forward: bool) -> Move {
        let target = if forward {
            self.turns.iter().copied().find(|&t| t > self.cursor)
        } else {
            self.turns.iter().copied().rev().find(|&t| t < self.cursor)
        };
        match target {
            Some(t) => self.seek_frame(now, t),
            None => Move::None,
        }
    }

    fn rebase(&mut self, now: Instant) {
        if self.anchor.is_some() {
            self.pos = self.position(now);
            self.anchor = Some(now);
        }
    }

    fn seek_to(&mut self, n: usize, pos: Duration) -> Move {
        let from = self.cursor;
        self.cursor = n;
        self.pos = pos;
        if n >= from {
            forward(from, n)
        } else {
            Move::Back { to: n }
        }
    }

    /// The session after the first `n` items (finished when `n` is the whole session): starts
    /// from the nearest checkpoint at or below `n` and records new checkpoints on the way.
    pub fn rebuild(&mut self, n: usize) -> Session {
        let n = n.min(self.items.len());
        let (mut at, mut session) = match self.checkpoints.range(..=n).next_back() {
            Some((&k, s)) => (k, s.clone()),
            None => (0, Session::new()),
        };
        while at < n {
            session.apply(self.items[at].clone());
            at += 1;
            if at % self.checkpoint_every == 0 && !self.checkpoints.contains_key(&at) {
                self.checkpoints.insert(at, session.clone());
            }
        }
        if n == self.items.len() {
            session.finish();
        }
        session
    }

    /// Checkpoints held (item counts), for tests.
    pub fn checkpoints(&self) -> Vec<usize> {
        self.checkpoints.keys().copied().collect()
    }
}

fn forward(from: usize, to: usize) -> Move {
    if to > from {
        Move::Forward { from, to }
    } else {
        Move::None
    }
}

fn clamp_speed(s: f64) -> f64 {
    if s.is_finite() {
        s.clamp(MIN_SPEED, MAX_SPEED)
    } else {
        1.0
    }
}

/// Cursor positions where a turn starts: just after each prompt, and just after each
/// `session.turn.end` that is not directly followed by a prompt.
fn turn_starts(items: &[Decoded]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for (i, d) in items.iter().enumerate() {
        let Decoded::Frame(f) = d else { continue };
        if f.frame_type == FrameType::ControlPromptRequest {
            // A turn end right before this prompt is the same boundary.
            if out.last() == Some(&i) {
                out.pop();
            }
            out.push(i + 1);
        } else if f.frame_type == FrameType::SessionTurnEnd {
            out.push(i + 1);
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // speeds are exact powers of two
mod tests {
    use super::*;
    use crate::protocol::{Frame, Timestamp};
    use serde_json::{Map, json};

    fn frame(ty: FrameType, ts: Option<i64>) -> Decoded {
        let mut payload = Map::new();
        payload.insert("text".into(), json!("x"));
        let mut f = Frame::new(ty, Body::Generic(payload));
        f.envelope.timestamp = ts.map(Timestamp);
        Decoded::frame(f)
    }

    fn text(ts: Option<i64>) -> Decoded {
        frame(FrameType::AgentTextDone, ts)
    }

    const IDLE: Duration = Duration::from_secs(2);

    #[test]
    fn due_times_compress_idle_and_keep_untimed_items_immediate() {
        let items = vec![
            text(Some(10_000)),
            text(None),
            text(Some(10_500)),
            text(Some(70_500)), // a minute idle → 2 s
            text(Some(60_000)), // backwards → 0
            text(Some(71_000)),
        ];
        let due: Vec<u64> = due_times(&items, IDLE)
            .iter()
            .map(|d| d.as_millis() as u64)
            .collect();
        assert_eq!(due, vec![0, 0, 500, 2500, 2500, 3000]);
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn plays_at_the_recorded_pace_and_pauses_at_the_end() {
        let items = vec![text(Some(0)), text(Some(1000)), text(Some(3000))];
        let mut r = Replay::new(items, 1.0, IDLE);
        let t0 = Instant::now();
        assert_eq!(
            r.state(t0),
            ReplayState {
                cursor: 0,
                len: 3,
                pos_ms: 0,
                total_ms: 3000,
                speed: 1.0,
                playing: false
            }
        );
        assert_eq!(r.next_due(), None, "paused: no timer");
        assert_eq!(r.tick(t0), Move::None);
        assert_eq!(r.toggle_play(t0), Move::None);
        assert_eq!(r.next_due(), Some(t0), "first item due at once");
        assert_eq!(r.tick(Instant::now()), Move::Forward { from: 0, to: 1 });
        assert_eq!(r.next_due(), Some(t0 + Duration::from_secs(1)));
        tokio::time::advance(Duration::from_millis(999)).await;
        assert_eq!(r.tick(Instant::now()), Move::None);
        tokio::time::advance(Duration::from_millis(1)).await;
        assert_eq!(r.tick(Instant::now()), Move::Forward { from: 1, to: 2 });
        // The 2 s gap is within max-idle: due at 3 s.
        assert_eq!(r.next_due(), Some(t0 + Duration::from_secs(3)));
        tokio::time::sleep_until(r.next_due().unwrap()).await;
        assert_eq!(r.tick(Instant::now()), Move::Forward { from: 2, to: 3 });
        assert_eq!(
            r.state(Instant::now()),
            ReplayState {
                cursor: 3,
                len: 3,
                pos_ms: 3000,
                total_ms: 3000,
                speed: 1.0,
                playing: false
            },
            "the end pauses"
        );
        assert_eq!(r.next_due(), None);
        // Space at the end starts over.
        assert_eq!(r.toggle_play(Instant::now()), Move::Back { to: 0 });
        assert!(r.is_playing());
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn speed_scales_wall_time_and_is_clamped() {
        let items = vec![text(Some(0)), text(Some(1000)), text(Some(2000))];
        let mut r = Replay::new(items, 1.0, IDLE);
        let t0 = Instant::now();
        r.play(t0);
        assert_eq!(r.tick(t0), Move::Forward { from: 0, to: 1 });
        r.change_speed(t0, true);
        r.change_speed(t0, true);
        assert_eq!(r.speed(), 4.0);
        assert_eq!(r.next_due(), Some(t0 + Duration::from_millis(250)));
        tokio::time::advance(Duration::from_millis(250)).await;
        assert_eq!(r.tick(Instant::now()), Move::Forward { from: 1, to: 2 });
        // Halving mid-way keeps the position (rebased at the change).
        tokio::time::advance(Duration::from_millis(100)).await; // pos 1.4 s
        r.change_speed(Instant::now(), false); // 2×
        assert_eq!(r.state(Instant::now()).pos_ms, 1400);
        assert_eq!(
            r.next_due(),
            Some(Instant::now() + Duration::from_millis(300))
        );
        for _ in 0..20 {
            r.change_speed(Instant::now(), true);
        }
        assert_eq!(r.speed(), MAX_SPEED);
        for _ in 0..20 {
            r.change_speed(Instant::now(), false);
        }
        assert_eq!(r.speed(), MIN_SPEED);
        assert_eq!(Replay::new(vec![], f64::NAN, IDLE).speed(), 1.0);
        assert_eq!(Replay::new(vec![], 1000.0, IDLE).speed(), MAX_SPEED);
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn idle_gaps_are_compressed_to_max_idle() {
        // An hour of silence between two frames plays as 2 s.
        let items = vec![text(Some(0)), text(Some(3_600_000)), text(None)];
        let mut r = Replay::new(items, 1.0, IDLE);
        let t0 = Instant::now();
        r.play(t0);
        assert_eq!(r.tick(t0), Move::Forward { from: 0, to: 1 });
        tokio::time::advance(Duration::from_millis(1999)).await;
        assert_eq!(r.tick(Instant::now()), Move::None);
        tokio::time::advance(Duration::from_millis(1)).await;
        // The untimed item after it comes at the same instant.
        assert_eq!(r.tick(Instant::now()), Move::Forward { from: 1, to: 3 });
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn step_and_seek_by_turn_and_percent() {
        let items = vec![
            frame(FrameType::ControlPromptRequest, Some(0)), // 0
            text(Some(1000)),                                // 1
            frame(FrameType::SessionTurnEnd, Some(2000)),    // 2
            frame(FrameType::ControlPromptRequest, Some(3000)), // 3
            text(Some(4000)),                                // 4
            frame(FrameType::AgentError, Some(5000)),        // 5
        ];
        let mut r = Replay::new(items, 1.0, Duration::from_secs(10));
        let now = Instant::now();
        assert_eq!(r.turns, vec![1, 4]);
        assert_eq!(
            r.marks(),
            &[
                (0, MarkKind::Turn),
                (2, MarkKind::Turn),
                (3, MarkKind::Turn),
                (5, MarkKind::Error)
            ]
        );
        assert_eq!(r.seek_turn(now, true), Move::Forward { from: 0, to: 1 });
        assert_eq!(r.seek_turn(now, true), Move::Forward { from: 1, to: 4 });
        assert_eq!(r.seek_turn(now, true), Move::None, "no turn after the last");
        assert_eq!(r.seek_turn(now, false), Move::Back { to: 1 });
        assert_eq!(r.step(now, true), Move::Forward { from: 1, to: 2 });
        assert_eq!(r.state(now).pos_ms, 1000);
        assert_eq!(r.step(now, false), Move::Back { to: 1 });
        assert_eq!(r.step(now, false), Move::Back { to: 0 });
        assert_eq!(r.step(now, false), Move::None, "nothing before 0");
        assert_eq!(r.seek_percent(now, 50), Move::Forward { from: 0, to: 3 });
        assert_eq!(r.state(now).pos_ms, 2500);
        assert_eq!(r.seek_percent(now, 0), Move::Back { to: 0 });
        assert_eq!(r.seek_percent(now, 100), Move::Forward { from: 0, to: 6 });
        // Stepping pauses a playing replay.
        r.seek_percent(now, 0);
        r.play(now);
        r.step(now, true);
        assert!(!r.is_playing());
    }

    #[test]
    fn rebuild_matches_a_straight_fold_and_keeps_checkpoints() {
        let n = CHECKPOINT_MIN * 2 + 10;
        let items: Vec<Decoded> = (0..n)
            .map(|i| {
                if i % 7 == 0 {
                    frame(FrameType::ControlPromptRequest, Some(i as i64))
                } else {
                    text(Some(i as i64))
                }
            })
            .collect();
        let mut r = Replay::new(items.clone(), 1.0, IDLE);
        let target = CHECKPOINT_MIN * 2 + 3;
        let mut straight = Session::new();
        for d in &items[..target] {
            straight.apply(d.clone());
        }
        assert_eq!(r.rebuild(target), straight);
        assert_eq!(r.checkpoints(), vec![CHECKPOINT_MIN, CHECKPOINT_MIN * 2]);
        // From a checkpoint: the same result.
        assert_eq!(r.rebuild(target), straight);
        let mut all = Session::from_decoded(items.clone());
        all.finish();
        assert_eq!(r.rebuild(n), all, "the whole session is finished");
    }
}
