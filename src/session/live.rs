//! The live state of a session (issue 21 item 3): what the agent is doing now — running (and
//! which call), waiting for you, stuck, looping, idle or ended — and the clock its ages are
//! measured against. One model: the status bar says it, the feed marks the call it names, the
//! app rings the bell and notifies from it, and the sessions list (issue 24) is meant to show it
//! per session.
//!
//! Who calls it: the app (`app/update.rs`) feeds [`Tracker::observe`] with every applied frame,
//! tells it the wall clock with [`Tracker::saw_clock`] and asks [`Tracker::state`] when it
//! draws and on every tick; [`Tracker::rebuild`] after the session changed wholesale; tests.
//!
//! Rules, in order ([`Tracker::state`]):
//! 1. **ended**: the input ended (a saved file read to its end, stdin closed).
//! 2. **idle** since the newest frame, when the source is live but the frames are a recording:
//!    no frame ever came stamped within [`Thresholds::recent`] of the wall clock (an old
//!    transcript followed with `-f`). Its age is measured by the wall clock ("idle 293d"),
//!    every other age against the newest frame (a pending call is not "pending 293d").
//! 3. **waiting for you**: an `agent.interaction.request` (SPEC 3.6, `type: PERMISSION` or
//!    another), or a Claude Code `PermissionRequest` hook naming an open call, without an answer
//!    yet (a frame of the call it names, or, for one naming no call, any call or message; a new
//!    prompt or turn end answers all); else an open `AskUserQuestion` / `ExitPlanMode` call.
//! 4. **looping**: the last [`Thresholds::loop_after`] finished calls failed with the same tool
//!    and input, and no call with another tool or input started since.
//! 5. **stuck**: an open call (none of whose subagent calls is open) running longer than its
//!    tool's threshold: the configured one ([`Thresholds::stuck_tools`]), else, with at least
//!    [`MIN_SAMPLES`] finished calls of that tool in the session, [`STUCK_FACTOR`] × their 90th
//!    percentile but at least [`Thresholds::stuck_min`], else [`Thresholds::stuck_after`].
//! 6. **running** the newest open call.
//! 7. **idle** after a turn end, or when nothing was written for [`Thresholds::idle_after`].
//! 8. **running** with no call (the agent is thinking or writing).
//!
//! Invariants: `observe` is O(open calls + open waits) a frame and `state` O(open calls): no
//! pass over the session on the draw path. The tracker holds call ids, and the rows of the
//! waits' requests: after a compaction or a restart the app rebuilds it ([`Tracker::rebuild`]). Pure: no clock is
//! read here, the caller passes it.
//!
//! Known limits: Claude Code's transcript does not record a permission prompt (only a hook,
//! when one is configured, does): a call waiting for one reads as running, then stuck. Several
//! sessions in one input (SPEC §6) share one tracker: the sessions list (`ui::sessions`) shows its
//! state on the session whose call it names, and the others' states from their own counts and
//! last activity (running N, idle, ended), never waiting/stuck/looping.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::time::Duration;

use serde_json::Value;

use super::{Applied, CallStatus, Invocation, Item, MessageKind, Session};
use crate::protocol::{Frame, Timestamp};

/// Finished calls of a tool needed before its stuck threshold is derived from them.
pub const MIN_SAMPLES: u32 = 3;
/// A derived stuck threshold is this many times the tool's 90th-percentile duration.
pub const STUCK_FACTOR: u64 = 5;
/// Open calls tracked at most (the newest are kept).
const MAX_OPEN: usize = 4096;
/// Open waits tracked at most (the newest are kept).
const MAX_WAITS: usize = 256;

/// The thresholds of the live state (config `[live]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thresholds {
    /// Frames stamped within this of the wall clock make the input live (else it is a
    /// recording: rule 2); a session file changed within this is "being written now".
    pub recent: Duration,
    /// Nothing written this long and no call open: idle.
    pub idle_after: Duration,
    /// Stuck threshold of a tool with fewer than [`MIN_SAMPLES`] finished calls.
    pub stuck_after: Duration,
    /// Least derived stuck threshold.
    pub stuck_min: Duration,
    /// Configured stuck thresholds by tool name (over the derived ones).
    pub stuck_tools: BTreeMap<String, Duration>,
    /// Failures in a row of the same tool and input that make a loop.
    pub loop_after: u32,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            recent: Duration::from_mins(10),
            idle_after: Duration::from_mins(1),
            stuck_after: Duration::from_mins(10),
            stuck_min: Duration::from_mins(1),
            stuck_tools: BTreeMap::new(),
            loop_after: 3,
        }
    }
}

/// What the agent waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitKind {
    /// A permission prompt (`agent.interaction.request` `type: PERMISSION`, a permission hook).
    Permission,
    /// A question (`AskUserQuestion`, an interaction of a question type).
    Question,
    /// A plan to approve (`ExitPlanMode`).
    Plan,
    /// Another interaction request.
    Interaction,
}

impl WaitKind {
    /// `permission`, `an answer`, `plan approval`, `input`.
    pub fn words(self) -> &'static str {
        match self {
            Self::Permission => "permission",
            Self::Question => "an answer",
            Self::Plan => "plan approval",
            Self::Interaction => "input",
        }
    }
}

/// The state (see the module doc for the rules). Calls are indices into
/// `Session::invocations` at the time of the question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// A call runs (`Some`), or the agent thinks or writes (`None`).
    Running {
        call: Option<usize>,
    },
    Waiting {
        kind: WaitKind,
        call: Option<usize>,
        /// The row of the request that asked (an `agent.interaction.request`, a hook), if any.
        event: Option<usize>,
    },
    Stuck {
        call: usize,
        threshold_ms: u64,
    },
    Looping {
        call: usize,
        times: u32,
    },
    Idle,
    Ended,
}

/// What needs the person: the kinds that ring and notify (config `[notify]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attention {
    Waiting,
    Stuck,
    Looping,
    /// A turn ended (off by default).
    TurnEnd,
}

/// The live state at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Live {
    pub state: State,
    /// When the state began (a call's request, a wait's frame, the newest frame …).
    pub since: Option<Timestamp>,
    /// The clock ages are measured against: the wall clock when the input is live, else the
    /// newest frame (epoch ms).
    pub clock: Option<Timestamp>,
    /// The wall clock, when known (live sources); an idle recording's age is measured by it.
    pub wall: Option<Timestamp>,
    /// The idle state comes from a turn end (what [`Attention::TurnEnd`] rings for).
    pub turn_ended: bool,
}

impl Live {
    /// The state's age in ms (never negative); `None` without the times.
    pub fn age_ms(&self) -> Option<i64> {
        let now = match self.state {
            State::Idle => self.wall.or(self.clock),
            _ => self.clock,
        }?;
        Some((now.0 - self.since?.0).max(0))
    }

    /// One word: `running`, `waiting`, `stuck`, `looping`, `idle`, `ended`.
    pub fn word(&self) -> &'static str {
        match self.state {
            State::Running { .. } => "running",
            State::Waiting { .. } => "waiting",
            State::Stuck { .. } => "stuck",
            State::Looping { .. } => "looping",
            State::Idle => "idle",
            State::Ended => "ended",
        }
    }

    /// The call the state is about, if any (an index into `Session::invocations`).
    pub fn call(&self) -> Option<usize> {
        match self.state {
            State::Running { call } | State::Waiting { call, .. } => call,
            State::Stuck { call, .. } | State::Looping { call, .. } => Some(call),
            State::Idle | State::Ended => None,
        }
    }

    /// Whether the state needs the person, and as which kind.
    pub fn attention(&self) -> Option<Attention> {
        match self.state {
            State::Waiting { .. } => Some(Attention::Waiting),
            State::Stuck { .. } => Some(Attention::Stuck),
            State::Looping { .. } => Some(Attention::Looping),
            State::Idle if self.turn_ended => Some(Attention::TurnEnd),
            State::Running { .. } | State::Idle | State::Ended => None,
        }
    }

    /// The state in words, raw (the caller makes it visible): `running Bash 12.0s`,
    /// `waiting for you: permission for Deploy 40s`, `stuck: Bash 12m03s (over 1m00s)`,
    /// `looping: Bash failed 3× in a row`, `idle 3m10s`, `ended`, `working`.
    pub fn describe(&self, session: &Session) -> String {
        let tool = |k: Option<usize>| {
            k.and_then(|k| session.invocations.get(k))
                .map(|inv| inv.tool_name.clone())
        };
        let age = self
            .age_ms()
            .map(|ms| crate::fmt::duration_ms(ms as f64))
            .unwrap_or_default();
        let with_age = |s: String| {
            if age.is_empty() {
                s
            } else {
                format!("{s} {age}")
            }
        };
        match self.state {
            State::Running { call: Some(k) } => {
                with_age(format!("running {}", tool(Some(k)).unwrap_or_default()))
            }
            State::Running { call: None } => with_age("working".to_owned()),
            State::Waiting { kind, call, event } => {
                let asked = event.and_then(|i| match session.items.get(i) {
                    Some(Item::Event(f)) => f
                        .payload_json()
                        .get("tool_name")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    _ => None,
                });
                let what = match (kind, tool(call).or(asked)) {
                    (WaitKind::Permission, Some(t)) => format!("permission for {t}"),
                    (k, _) => k.words().to_owned(),
                };
                with_age(format!("waiting for you: {what}"))
            }
            State::Stuck { call, threshold_ms } => format!(
                "stuck: {} {age} (over {})",
                tool(Some(call)).unwrap_or_default(),
                crate::fmt::duration_ms(threshold_ms as f64)
            ),
            State::Looping { call, times } => format!(
                "looping: {} failed {times}× in a row",
                tool(Some(call)).unwrap_or_default()
            ),
            State::Idle => with_age("idle".to_owned()),
            State::Ended => "ended".to_owned(),
        }
    }
}

/// Finished durations of one tool, in buckets of a quarter power of two (ms): a percentile in
/// O(buckets), 4 bytes a bucket, whatever the number of calls.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hist {
    counts: [u32; Self::BUCKETS],
    n: u32,
}

impl Default for Hist {
    fn default() -> Self {
        Self {
            counts: [0; Self::BUCKETS],
            n: 0,
        }
    }
}

impl Hist {
    /// Buckets up to 2^(96/4) ms ≈ 4.6 hours; longer durations go in the last one.
    const BUCKETS: usize = 97;

    fn bucket(ms: f64) -> usize {
        let b = (4.0 * (ms.max(0.0) + 1.0).log2()).floor();
        (b as usize).min(Self::BUCKETS - 1)
    }

    fn add(&mut self, ms: f64) {
        self.counts[Self::bucket(ms)] += 1;
        self.n += 1;
    }

    /// The upper bound (ms) of the bucket holding the `p`-th percentile (0–100).
    fn percentile(&self, p: u32) -> u64 {
        let want = (u64::from(self.n) * u64::from(p)).div_ceil(100).max(1);
        let mut seen = 0u64;
        for (b, c) in self.counts.iter().enumerate() {
            seen += u64::from(*c);
            if seen >= want {
                return (2f64.powf((b + 1) as f64 / 4.0) - 1.0).ceil() as u64;
            }
        }
        0
    }
}

/// A wait for the person.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Wait {
    kind: WaitKind,
    /// The row of the frame that asked (an index into `Session::items`).
    item: usize,
    /// The call it is about (its `invocation_id`), if it names one.
    call: Option<String>,
    at: Option<Timestamp>,
}

/// Failures in a row with one key.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Run {
    key: u64,
    times: u32,
    /// The run's last call's `invocation_id` and when it ended.
    last: String,
    at: Option<Timestamp>,
}

/// What the live state needs, kept as frames are applied ([`Tracker::observe`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tracker {
    /// `invocation_id`s of the open calls, in request order.
    open: Vec<String>,
    waits: Vec<Wait>,
    tools: HashMap<String, Hist>,
    run: Option<Run>,
    /// Key (tool and input) of the newest call requested.
    last_key: Option<u64>,
    /// A turn ended after the last call or message (its time; `Timestamp(0)` without one).
    turn_ended: Option<Timestamp>,
    /// A frame stamped within `recent` of the wall clock was seen: the input is live.
    live_seen: bool,
}

/// The key of a call for the loop rule: its tool and its input (the summary when the input
/// stays in the file).
fn call_key(inv: &Invocation) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    inv.tool_name.hash(&mut h);
    if inv.input.is_null() {
        inv.summary.hash(&mut h);
    } else {
        hash_value(&inv.input, &mut h);
    }
    h.finish()
}

/// Hashes a JSON value without serialising it.
fn hash_value(v: &Value, h: &mut impl Hasher) {
    match v {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        Value::Number(n) => (2u8, n.to_string()).hash(h),
        Value::String(s) => (3u8, s).hash(h),
        Value::Array(a) => {
            (4u8, a.len()).hash(h);
            for x in a {
                hash_value(x, h);
            }
        }
        Value::Object(m) => {
            (5u8, m.len()).hash(h);
            for (k, x) in m {
                k.hash(h);
                hash_value(x, h);
            }
        }
    }
}

/// The wait an open call of this tool is (a question, a plan), if any.
fn waiting_tool(name: &str) -> Option<WaitKind> {
    match name {
        "AskUserQuestion" => Some(WaitKind::Question),
        "ExitPlanMode" | "exit_plan_mode" => Some(WaitKind::Plan),
        _ => None,
    }
}

impl Tracker {
    /// A tracker that has seen nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// A tracker for a session folded without one (after a compaction, or in tests): its rows
    /// in order. Durations and the loop rule see the calls as they were; waits are kept for
    /// calls still open and for the last row's request (the rows do not say what came after
    /// a call's request).
    pub fn rebuild(session: &Session) -> Self {
        let mut t = Self::new();
        for (i, item) in session.items.iter().enumerate() {
            let applied = match item {
                Item::Invocation(k) => Applied {
                    item: Some(i),
                    invocation: Some(*k),
                    new_item: true,
                },
                Item::Message(_) | Item::Event(_) => Applied {
                    item: Some(i),
                    invocation: None,
                    new_item: true,
                },
            };
            if let Some(k) = applied.invocation
                && let Some(inv) = session.invocations.get(k)
                && !inv.status.is_open()
            {
                // Seen open first, so its end is counted as it would have been live.
                t.open.push(inv.invocation_id.clone());
                t.last_key = Some(call_key(inv));
            }
            t.observe(session, applied);
        }
        // A call's row sits where it was requested, so a wait asked after the request was not
        // seen answered: keep the waits for calls still open, and one asked by the last row.
        let last = session.items.len().saturating_sub(1);
        let open = t.open.clone();
        t.waits.retain(|w| match &w.call {
            Some(c) if open.contains(c) => true,
            Some(_) | None => w.item == last,
        });
        t
    }

    /// Whether a frame was ever stamped near the wall clock (the input is live, not a
    /// recording).
    pub fn live_seen(&self) -> bool {
        self.live_seen
    }

    /// Marks the input live (a tracker rebuilt for a session that was live already).
    pub fn assume_live(&mut self) {
        self.live_seen = true;
    }

    /// The wall clock now: once the newest frame is within `recent` of it, the input is live
    /// for good (ages by the wall clock from then on).
    pub fn saw_clock(&mut self, session: &Session, wall: Timestamp, recent: Duration) {
        if let Some(newest) = session.last_timestamp
            && wall.0 - newest.0 <= recent.as_millis() as i64
        {
            self.live_seen = true;
        }
    }

    /// Takes in one applied frame (after `Session::apply`).
    pub fn observe(&mut self, session: &Session, applied: Applied) {
        if let Some(k) = applied.invocation {
            if let Some(inv) = session.invocations.get(k) {
                self.observe_call(inv);
            }
            return;
        }
        let Some(i) = applied.item else {
            return;
        };
        match session.items.get(i) {
            Some(Item::Message(m)) => {
                self.turn_ended = None;
                if m.kind == MessageKind::Prompt {
                    // The person spoke: every wait is answered, a loop is over.
                    self.waits.clear();
                    self.run = None;
                    self.last_key = None;
                } else {
                    self.drop_waits_without_open_call();
                }
            }
            Some(Item::Event(f)) => self.observe_event(f, i),
            Some(Item::Invocation(_)) | None => {}
        }
    }

    fn drop_waits_without_open_call(&mut self) {
        let open = &self.open;
        self.waits
            .retain(|w| w.call.as_ref().is_some_and(|c| open.contains(c)));
    }

    fn observe_call(&mut self, inv: &Invocation) {
        let id = inv.invocation_id.as_str();
        // A frame of a call answers what was asked about it, and what named no call.
        self.waits
            .retain(|w| w.call.as_deref().is_some_and(|c| c != id));
        self.turn_ended = None;
        if inv.status.is_open() {
            if !self.open.iter().any(|o| o == id) {
                if self.open.len() >= MAX_OPEN {
                    self.open.remove(0);
                }
                self.open.push(id.to_owned());
                self.last_key = Some(call_key(inv));
            }
            return;
        }
        let Some(pos) = self.open.iter().position(|o| o == id) else {
            return;
        };
        self.open.remove(pos);
        if inv.status != CallStatus::Cancelled
            && let Some(ms) = inv.duration_ms()
        {
            self.tools.entry(inv.tool_name.clone()).or_default().add(ms);
        }
        if inv.status.is_failure() {
            let key = call_key(inv);
            if let Some(r) = self.run.as_mut().filter(|r| r.key == key) {
                r.times += 1;
                id.clone_into(&mut r.last);
                r.at = inv.ended_at;
            } else {
                self.run = Some(Run {
                    key,
                    times: 1,
                    last: id.to_owned(),
                    at: inv.ended_at,
                });
            }
        } else {
            self.run = None;
        }
    }

    fn observe_event(&mut self, f: &Frame, item: usize) {
        match f.frame_type.as_str() {
            "agent.interaction.request" => {
                let p = f.payload_json();
                let ty = p
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_ascii_lowercase();
                let kind = if ty.contains("permission") || ty.contains("approval") {
                    WaitKind::Permission
                } else if ty.contains("question") {
                    WaitKind::Question
                } else if ty.contains("plan") {
                    WaitKind::Plan
                } else {
                    WaitKind::Interaction
                };
                let call = p
                    .get("invocation_id")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                self.push_wait(Wait {
                    kind,
                    item,
                    call,
                    at: f.envelope.timestamp,
                });
            }
            "x-claude-code.hook" => {
                let p = f.payload_json();
                let event = p.get("hook_event").and_then(Value::as_str);
                let call = p.get("invocation_id").and_then(Value::as_str);
                if event == Some("PermissionRequest")
                    && let Some(c) = call
                    && self.open.iter().any(|o| o == c)
                {
                    self.push_wait(Wait {
                        kind: WaitKind::Permission,
                        item,
                        call: Some(c.to_owned()),
                        at: f.envelope.timestamp,
                    });
                }
            }
            "session.turn.end" => {
                self.drop_waits_without_open_call();
                self.turn_ended = Some(f.envelope.timestamp.unwrap_or(Timestamp(0)));
            }
            _ => {}
        }
    }

    fn push_wait(&mut self, w: Wait) {
        if self.waits.len() >= MAX_WAITS {
            self.waits.remove(0);
        }
        self.waits.push(w);
    }

    /// The stuck threshold of `tool` in ms (rule 5).
    pub fn stuck_threshold_ms(&self, tool: &str, th: &Thresholds) -> u64 {
        if let Some(d) = th.stuck_tools.get(tool) {
            return d.as_millis() as u64;
        }
        match self.tools.get(tool) {
            Some(h) if h.n >= MIN_SAMPLES => {
                (STUCK_FACTOR * h.percentile(90)).max(th.stuck_min.as_millis() as u64)
            }
            _ => th.stuck_after.as_millis() as u64,
        }
    }

    /// The state now. `wall` is the wall clock of a live source (`None` for a saved file, or
    /// before the first tick): see the module doc for the rules.
    pub fn state(&self, session: &Session, wall: Option<Timestamp>, th: &Thresholds) -> Live {
        let newest = session.last_timestamp;
        let clock = if self.live_seen {
            wall.or(newest)
        } else {
            newest
        };
        let live = |state: State, since: Option<Timestamp>| Live {
            state,
            since,
            clock,
            wall,
            turn_ended: false,
        };
        if session.ended {
            return live(State::Ended, newest);
        }
        if !self.live_seen && wall.is_some() {
            return live(State::Idle, newest);
        }
        if let Some(w) = self.waits.last() {
            let call = w
                .call
                .as_deref()
                .and_then(|id| session.invocation_index(id));
            return live(
                State::Waiting {
                    kind: w.kind,
                    call,
                    event: Some(w.item),
                },
                w.at.or(newest),
            );
        }
        let open: Vec<(usize, &Invocation)> = self
            .open
            .iter()
            .filter_map(|id| session.invocation_index(id))
            .filter_map(|k| session.invocations.get(k).map(|inv| (k, &**inv)))
            .filter(|(_, inv)| inv.status.is_open())
            .collect();
        if let Some((k, inv)) = open
            .iter()
            .rev()
            .find(|(_, inv)| waiting_tool(&inv.tool_name).is_some())
            && let Some(kind) = waiting_tool(&inv.tool_name)
        {
            return live(
                State::Waiting {
                    kind,
                    call: Some(*k),
                    event: None,
                },
                inv.requested_at,
            );
        }
        if let Some(r) = &self.run
            && r.times >= th.loop_after.max(1)
            && self.last_key == Some(r.key)
            && let Some(k) = session.invocation_index(&r.last)
        {
            return live(
                State::Looping {
                    call: k,
                    times: r.times,
                },
                r.at.or(newest),
            );
        }
        let mut stuck: Option<(usize, u64, i64, Option<Timestamp>)> = None;
        for (k, inv) in &open {
            let busy_child = inv.children.iter().any(|c| {
                session
                    .invocations
                    .get(*c)
                    .is_some_and(|ch| ch.status.is_open())
            });
            let (Some(now), Some(req)) = (clock, inv.requested_at) else {
                continue;
            };
            if busy_child {
                continue;
            }
            let t = self.stuck_threshold_ms(&inv.tool_name, th);
            let over = (now.0 - req.0) - t as i64;
            if over > 0 && stuck.is_none_or(|(_, _, o, _)| over > o) {
                stuck = Some((*k, t, over, inv.requested_at));
            }
        }
        if let Some((call, threshold_ms, _, since)) = stuck {
            return live(State::Stuck { call, threshold_ms }, since);
        }
        if let Some((k, inv)) = open.last() {
            return live(State::Running { call: Some(*k) }, inv.requested_at);
        }
        if let Some(t) = self.turn_ended {
            let mut l = live(State::Idle, (t.0 > 0).then_some(t).or(newest));
            l.turn_ended = true;
            return l;
        }
        match (clock, newest) {
            (Some(c), Some(n)) if c.0 - n.0 >= th.idle_after.as_millis() as i64 => {
                live(State::Idle, newest)
            }
            (_, None) => live(State::Idle, None),
            _ => live(State::Running { call: None }, newest),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{Decoded, load_bytes};

    fn at(s: u32) -> String {
        format!("2026-11-29T10:{:02}:{:02}.000Z", s / 60, s % 60)
    }

    fn ts(s: u32) -> Timestamp {
        Timestamp(
            chrono::DateTime::parse_from_rfc3339(&at(s))
                .map(|d| d.timestamp_millis())
                .unwrap_or_default(),
        )
    }

    fn req(s: u32, id: &str, tool: &str, cmd: &str) -> String {
        format!(
            r#"{{"type":"tool.invoke.request","timestamp":"{}","payload":{{"invocation_id":"{id}","tool_name":"{tool}","input":{{"command":"{cmd}"}}}}}}"#,
            at(s)
        )
    }

    fn res(s: u32, id: &str, tool: &str, status: &str) -> String {
        format!(
            r#"{{"type":"tool.invoke.result","timestamp":"{}","payload":{{"invocation_id":"{id}","tool_name":"{tool}","status":"{status}","output":"x","output_type":"text"}}}}"#,
            at(s)
        )
    }

    /// Folds `lines` frame by frame through a tracker, as the app does.
    fn fold(lines: &[String]) -> (Session, Tracker) {
        let mut s = Session::new();
        let mut t = Tracker::new();
        for d in load_bytes(lines.join("\n").as_bytes()).items {
            if let Decoded::Frame(_) = &d {
                let a = s.apply(d);
                t.observe(&s, a);
            }
        }
        (s, t)
    }

    fn state_at(lines: &[String], wall: u32) -> (Session, Live) {
        let (s, mut t) = fold(lines);
        t.saw_clock(&s, ts(wall), Thresholds::default().recent);
        let l = t.state(&s, Some(ts(wall)), &Thresholds::default());
        (s, l)
    }

    #[test]
    fn running_then_idle_then_turn_end() {
        let lines = vec![req(0, "a", "Bash", "ls")];
        let (s, l) = state_at(&lines, 5);
        assert_eq!(l.state, State::Running { call: Some(0) });
        assert_eq!(l.age_ms(), Some(5000));
        assert_eq!(l.describe(&s), "running Bash 5.0s");
        let mut lines = lines;
        lines.push(res(1, "a", "Bash", "success"));
        let (_, l) = state_at(&lines, 30);
        assert_eq!(l.state, State::Running { call: None });
        let (s, l) = state_at(&lines, 200);
        assert_eq!(l.state, State::Idle);
        assert_eq!(l.describe(&s), "idle 3m19s");
        lines.push(format!(
            r#"{{"type":"session.turn.end","timestamp":"{}","payload":{{"stop_reason":"end_turn"}}}}"#,
            at(2)
        ));
        let (_, l) = state_at(&lines, 3);
        assert_eq!((l.state, l.turn_ended), (State::Idle, true));
        assert_eq!(l.attention(), Some(Attention::TurnEnd));
    }

    #[test]
    fn a_permission_request_waits_until_its_call_runs() {
        let ask = format!(
            r#"{{"type":"agent.interaction.request","timestamp":"{}","payload":{{"type":"PERMISSION","invocation_id":"d","tool_name":"Deploy","message":"Allow?"}}}}"#,
            at(1)
        );
        let mut lines = vec![req(0, "d", "Deploy", "prod"), ask];
        let (s, l) = state_at(&lines, 41);
        assert_eq!(
            l.state,
            State::Waiting {
                kind: WaitKind::Permission,
                call: Some(0),
                event: Some(1)
            }
        );
        assert_eq!(
            l.describe(&s),
            "waiting for you: permission for Deploy 40.0s"
        );
        assert_eq!(l.attention(), Some(Attention::Waiting));
        lines.push(res(42, "d", "Deploy", "success"));
        let (_, l) = state_at(&lines, 43);
        assert_eq!(l.state, State::Running { call: None });
    }

    #[test]
    fn an_open_question_waits() {
        let lines = vec![req(0, "q", "AskUserQuestion", "which?")];
        let (_, l) = state_at(&lines, 2);
        assert_eq!(
            l.state,
            State::Waiting {
                kind: WaitKind::Question,
                call: Some(0),
                event: None
            }
        );
    }

    #[test]
    fn a_permission_asked_before_its_call_names_the_tool_it_asked_for() {
        let ask = format!(
            r#"{{"type":"agent.interaction.request","timestamp":"{}","payload":{{"type":"PERMISSION","invocation_id":"d","tool_name":"Deploy"}}}}"#,
            at(1)
        );
        let (s, l) = state_at(&[ask], 3);
        assert_eq!(
            l.describe(&s),
            "waiting for you: permission for Deploy 2.0s"
        );
    }

    #[test]
    fn the_same_failing_call_three_times_is_a_loop() {
        let mut lines = Vec::new();
        for (i, id) in ["a", "b", "c"].iter().enumerate() {
            let s = i as u32 * 2;
            lines.push(req(s, id, "Bash", "npm test"));
            lines.push(res(s + 1, id, "Bash", "error"));
        }
        let (s, l) = state_at(&lines, 7);
        assert_eq!(l.state, State::Looping { call: 2, times: 3 });
        assert_eq!(l.describe(&s), "looping: Bash failed 3× in a row");
        // A fourth try of the same call is still the loop; another command is not.
        lines.push(req(8, "d", "Bash", "npm test"));
        assert_eq!(
            state_at(&lines, 9).1.state,
            State::Looping { call: 2, times: 3 }
        );
        lines.push(req(9, "e", "Bash", "cat package.json"));
        assert_eq!(
            state_at(&lines, 10).1.state,
            State::Running { call: Some(4) }
        );
        // Two failures and a different one: no loop.
        let mut lines = Vec::new();
        for (i, (id, cmd)) in [("a", "x"), ("b", "x"), ("c", "y")].iter().enumerate() {
            let s = i as u32 * 2;
            lines.push(req(s, id, "Bash", cmd));
            lines.push(res(s + 1, id, "Bash", "error"));
        }
        assert_eq!(state_at(&lines, 7).1.state, State::Running { call: None });
    }

    #[test]
    fn a_call_far_past_its_tools_durations_is_stuck() {
        let mut lines = Vec::new();
        for (i, id) in ["a", "b", "c"].iter().enumerate() {
            let s = i as u32 * 3;
            lines.push(req(s, id, "Bash", &format!("step {i}")));
            lines.push(res(s + 2, id, "Bash", "success"));
        }
        lines.push(req(10, "z", "Bash", "sleep 1000"));
        let (s, mut t) = fold(&lines);
        let th = Thresholds::default();
        // 2 s calls: 5 × p90 is under the 60 s floor.
        assert_eq!(t.stuck_threshold_ms("Bash", &th), 60_000);
        assert_eq!(t.stuck_threshold_ms("Read", &th), 600_000);
        t.saw_clock(&s, ts(60), th.recent);
        assert_eq!(
            t.state(&s, Some(ts(60)), &th).state,
            State::Running { call: Some(3) }
        );
        let l = t.state(&s, Some(ts(71)), &th);
        assert_eq!(
            l.state,
            State::Stuck {
                call: 3,
                threshold_ms: 60_000
            }
        );
        assert_eq!(l.describe(&s), "stuck: Bash 1m01s (over 1m00s)");
        let mut th = th;
        th.stuck_tools
            .insert("Bash".into(), Duration::from_hours(1));
        assert_eq!(
            t.state(&s, Some(ts(71)), &th).state,
            State::Running { call: Some(3) }
        );
    }

    #[test]
    fn an_old_recording_followed_is_idle_by_the_wall_and_ages_by_its_last_frame() {
        let lines = vec![req(0, "a", "Bash", "ls"), req(5, "b", "Read", "x")];
        let (s, mut t) = fold(&lines);
        let th = Thresholds::default();
        let wall = Timestamp(ts(5).0 + 293 * 86_400_000);
        t.saw_clock(&s, wall, th.recent);
        assert!(!t.live_seen());
        let l = t.state(&s, Some(wall), &th);
        assert_eq!(l.state, State::Idle);
        assert_eq!(l.describe(&s), "idle 293d");
        // Ages against the recording: its newest frame.
        assert_eq!(l.clock, Some(ts(5)));
    }

    #[test]
    fn rebuild_equals_observing() {
        let mut lines = Vec::new();
        for (i, id) in ["a", "b", "c"].iter().enumerate() {
            let s = i as u32 * 2;
            lines.push(req(s, id, "Bash", "npm test"));
            lines.push(res(s + 1, id, "Bash", "error"));
        }
        lines.push(req(8, "d", "Bash", "npm test"));
        let (s, t) = fold(&lines);
        assert_eq!(Tracker::rebuild(&s), t);
    }

    #[test]
    fn percentiles_bound_the_durations() {
        let mut h = Hist::default();
        for ms in [100.0, 200.0, 300.0, 400.0, 5000.0] {
            h.add(ms);
        }
        let p = h.percentile(90);
        assert!((5000..=6000).contains(&p), "{p}");
        assert!((100..=120).contains(&h.percentile(10)));
    }
}
