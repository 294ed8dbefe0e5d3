//! The frames `rawpv serve` sends: a finished recording, or a live stream that grows while it is
//! served (`--follow`), shared by every client connection.
//!
//! Who uses it: `crate::serve` (each connection reads it through a `Cursor`) and
//! `crate::cmd::serve` (builds it; for `--follow`, pushes frames as they are decoded and ends it
//! at shutdown).
//!
//! Invariants:
//! * **Indexes**: a frame's index (1-based, sent as `metadata.stream_index` and SSE `id:`) is
//!   given once, when it is pushed, in push order, and never changes: the stream is
//!   append-only. Resuming after N always continues with frame N + 1, including frames pushed
//!   while the client was away.
//! * **Retention**: a live stream keeps the JSON of its most recent frames up to `retain_bytes`
//!   (each frame counted as its JSON plus [`FRAME_OVERHEAD`]); older frames are dropped, oldest
//!   first (the newest frame is always kept). A fresh connection (no `after`, or `after=0`)
//!   starts with the oldest retained frame; a resume from before the retained window is
//!   `Read::Gone` (HTTP 410 at connect; a client streaming that falls behind it is closed
//!   abnormally, so it reconnects and is told). A finished recording keeps every frame.
//! * **End**: once [`Stream::end`] is called nothing more is pushed; a client that has sent
//!   every frame then closes normally.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::watch;

use crate::protocol::Frame;

/// What one retained frame is counted as besides its JSON (the entry, the `Arc` header, the
/// index bookkeeping), in bytes.
pub const FRAME_OVERHEAD: usize = 64;

/// One frame ready to send.
#[derive(Debug, Clone)]
pub(crate) struct Served {
    /// `None`: over `max_frame_bytes`; skipped, but it keeps its index.
    pub json: Option<Arc<str>>,
    /// Timestamp in epoch ms.
    pub ts: Option<i64>,
}

impl Served {
    fn cost(&self) -> usize {
        self.json.as_ref().map_or(0, |j| j.len()) + FRAME_OVERHEAD
    }
}

/// Serialises `f` with its 1-based stream index in `metadata.stream_index`; a frame over `cap`
/// bytes is skipped (a warning is returned) and keeps its index.
pub(crate) fn served(f: &Frame, idx: usize, cap: usize) -> (Served, Option<String>) {
    let mut v = f.to_json();
    if let Some(obj) = v.as_object_mut() {
        let meta = obj
            .entry("metadata")
            .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
        if let Some(m) = meta.as_object_mut() {
            m.insert(
                crate::source::net::STREAM_INDEX.into(),
                serde_json::Value::from(idx),
            );
        }
    }
    let json = v.to_string();
    let ts = f.envelope.timestamp.map(|t| t.0);
    if json.len() > cap {
        let warning = format!(
            "frame {idx} (line {}) is {} bytes, over --max-frame-bytes {cap}; skipped",
            f.origin.line,
            json.len()
        );
        return (Served { json: None, ts }, Some(warning));
    }
    (
        Served {
            json: Some(Arc::from(json)),
            ts,
        },
        None,
    )
}

#[derive(Debug)]
struct Window {
    frames: VecDeque<Served>,
    /// 0-based index of `frames[0]` (the frames before it were dropped past the cap).
    first: usize,
    bytes: usize,
    cap: usize,
    ended: bool,
}

#[derive(Debug)]
struct Inner {
    window: Mutex<Window>,
    /// Told on every push and at the end.
    grew: watch::Sender<()>,
    /// A finished recording, played with pacing; `false`: a live stream, sent as it arrives.
    paced: bool,
}

/// The frames a server sends (cheap to clone: every clone is the same stream).
#[derive(Debug, Clone)]
pub struct Stream(Arc<Inner>);

/// What a cursor finds at its position.
#[derive(Debug)]
pub(crate) enum Read {
    /// The frame at the position (0-based index).
    Frame(Served),
    /// Not pushed yet.
    Wait,
    /// The stream ended before the position.
    End,
    /// The frame was dropped from the retained window.
    Gone,
}

impl Stream {
    fn with(frames: Vec<Served>, cap: usize, ended: bool, paced: bool) -> Self {
        let bytes = frames.iter().map(Served::cost).sum();
        Self(Arc::new(Inner {
            window: Mutex::new(Window {
                frames: frames.into(),
                first: 0,
                bytes,
                cap,
                ended,
            }),
            grew: watch::channel(()).0,
            paced,
        }))
    }

    /// A finished recording (every frame kept, played with pacing).
    pub(crate) fn finished(frames: Vec<Served>) -> Self {
        Self::with(frames, usize::MAX, true, true)
    }

    /// An empty live stream that keeps about `retain_bytes` of its newest frames.
    pub fn live(retain_bytes: usize) -> Self {
        Self::with(Vec::new(), retain_bytes.max(1), false, false)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Window> {
        self.0.window.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether clients are paced by the frames' timestamps (a finished recording).
    pub fn is_paced(&self) -> bool {
        self.0.paced
    }

    /// Appends `f` with the next index (returned, 1-based), serialised once; a frame over
    /// `max_frame_bytes` keeps its index but is not sent (the warning says so). Nothing is
    /// appended after [`Stream::end`] (`None`).
    pub fn push(&self, f: &Frame, max_frame_bytes: usize) -> Option<(usize, Option<String>)> {
        let mut w = self.lock();
        if w.ended {
            return None;
        }
        let idx = w.first + w.frames.len() + 1;
        let (s, warning) = served(f, idx, max_frame_bytes);
        w.bytes += s.cost();
        w.frames.push_back(s);
        while w.bytes > w.cap && w.frames.len() > 1 {
            if let Some(old) = w.frames.pop_front() {
                w.bytes -= old.cost();
                w.first += 1;
            }
        }
        drop(w);
        self.0.grew.send_replace(());
        Some((idx, warning))
    }

    /// Ends the stream: clients send what is left and close normally.
    pub fn end(&self) {
        self.lock().ended = true;
        self.0.grew.send_replace(());
    }

    /// Frames pushed so far (retained or not).
    pub fn len(&self) -> usize {
        let w = self.lock();
        w.first + w.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The 0-based index of the oldest retained frame, and the bytes retained.
    pub fn retained(&self) -> (usize, usize) {
        let w = self.lock();
        (w.first, w.bytes)
    }

    /// The frame at 0-based index `i`.
    pub(crate) fn read(&self, i: usize) -> Read {
        let w = self.lock();
        if i < w.first {
            return Read::Gone;
        }
        match w.frames.get(i - w.first) {
            Some(s) => Read::Frame(s.clone()),
            None if w.ended => Read::End,
            None => Read::Wait,
        }
    }

    /// Where a connection that asked to resume after `after` frames starts (0-based), or the
    /// oldest retained index when those frames are gone. `after == 0` is a fresh connection: it
    /// starts with the oldest retained frame.
    pub(crate) fn start(&self, after: usize) -> Result<usize, usize> {
        let first = self.lock().first;
        if after == 0 {
            Ok(first)
        } else if after < first {
            Err(first)
        } else {
            Ok(after)
        }
    }

    /// A receiver told of every push (and the end).
    pub(crate) fn subscribe(&self) -> watch::Receiver<()> {
        self.0.grew.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(n: u64) -> Frame {
        let line = format!(
            r#"{{"type":"tool.invoke.request","payload":{{"invocation_id":"c{n}","tool_name":"Bash"}}}}"#
        );
        crate::protocol::parse_line(n, &line).unwrap()
    }

    fn index_of(r: &Read) -> Option<u64> {
        match r {
            Read::Frame(s) => {
                let v: serde_json::Value = serde_json::from_str(s.json.as_deref()?).ok()?;
                v["metadata"]["stream_index"].as_u64()
            }
            _ => None,
        }
    }

    #[test]
    fn indexes_are_given_once_and_the_window_drops_the_oldest() {
        let s = Stream::live(1);
        for n in 1..=3 {
            assert_eq!(s.push(&frame(n), 1 << 20).map(|p| p.0), Some(n as usize));
        }
        // A 1-byte cap keeps the newest frame only.
        assert_eq!(s.len(), 3);
        assert_eq!(s.retained().0, 2);
        assert!(matches!(s.read(0), Read::Gone));
        assert_eq!(index_of(&s.read(2)), Some(3));
        assert!(matches!(s.read(3), Read::Wait));
        assert_eq!(s.start(0), Ok(2));
        assert_eq!(s.start(1), Err(2));
        assert_eq!(s.start(2), Ok(2));
        s.end();
        assert!(matches!(s.read(3), Read::End));
        assert!(s.push(&frame(4), 1 << 20).is_none());
    }

    #[test]
    fn an_ample_window_keeps_everything_and_skipped_frames_keep_their_index() {
        let s = Stream::live(1 << 20);
        let (i, w) = s.push(&frame(1), 10).unwrap();
        assert_eq!(i, 1);
        assert!(w.is_some_and(|w| w.contains("over --max-frame-bytes 10")));
        s.push(&frame(2), 1 << 20).unwrap();
        assert!(matches!(s.read(0), Read::Frame(Served { json: None, .. })));
        assert_eq!(index_of(&s.read(1)), Some(2));
        assert_eq!(s.retained().0, 0);
    }
}
