//! Finished calls of a one-shot fold, reduced to what `check` and `stats` still read (issue 17
//! item 3): [`FoldedCalls`].
//!
//! Who uses it: the reducer (`super::Session`, only with `Session::findings_only` set: `rawpv
//! check` and `rawpv stats`). When a call's result is folded there, its record leaves
//! `Session::invocations` (the slot is reclaimed by the next compaction of the list) and only a
//! [`FoldedCall`] stays, keyed by 96 bits of two hashes of (session, `invocation_id`). What a later frame
//! can still ask of a finished call is: does it exist (a second request or result, a chunk or a
//! result naming it, the session an unnamed frame belongs to), its tool name (a late chunk naming
//! another tool), and which `sequence`s its stream kept and on which line (a late duplicate chunk),
//! with the stream's caps applied as [`super::ChunkBuffer`] applies them.
//!
//! Invariants: a key is in the map once its call is finished and not in the id index any more;
//! tool names are interned (one copy per distinct name); a stream's sequences are sorted. Memory:
//! a 16-byte map entry a finished call (18–37 bytes with the table's slack), plus ~60 bytes and
//! 16 a kept sequenced chunk for a call that streamed, against ~1 KB a call before. A call is
//! known by two independent `SipHash`es of (session, id), 96 bits in all, under keys drawn at
//! random once per process (`std::hash::RandomState`), so a producer cannot compute colliding ids
//! offline: two different ids are taken for one only when both collide by chance (about 2^-96 a
//! pair), which is the one approximation here. No output depends on the keys (the maps are only
//! looked up, never iterated).

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, RandomState};
use std::sync::OnceLock;

use super::chunks::{ChunkBuffer, MAX_STREAM_BYTES, MAX_STREAM_CHUNKS};

/// The key of a finished call: a 64-bit hash of (session, id) and a 32-bit check of another.
type FoldedKey = (u64, u32);

/// The key of (session `sid`, id `id`).
fn key(sid: u32, id: &str) -> FoldedKey {
    static KEYS: OnceLock<(RandomState, RandomState)> = OnceLock::new();
    let (ka, kb) = KEYS.get_or_init(|| (RandomState::new(), RandomState::new()));
    let a = ka.hash_one((sid, id));
    let b = kb.hash_one((id, sid));
    (a, b as u32)
}

/// By a key that is already a hash (`super::PreHashed`, the id index's hasher).
type ByHash<V> = HashMap<u64, V, BuildHasherDefault<super::PreHashed>>;

/// What is left of a finished call's stream: the kept chunks' count and bytes (for the caps)
/// and the sequenced ones' `(sequence, line)`, sorted by sequence.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FoldedStream {
    chunks: usize,
    bytes: usize,
    sequences: Vec<(u64, u64)>,
}

impl FoldedStream {
    fn of(b: &ChunkBuffer) -> Self {
        let mut sequences: Vec<(u64, u64)> = b
            .chunks()
            .filter_map(|c| Some((c.sequence?, c.line)))
            .collect();
        sequences.shrink_to_fit();
        Self {
            chunks: b.len(),
            bytes: b.bytes(),
            sequences,
        }
    }

    /// The line of the kept chunk with this `sequence` (as `ChunkBuffer::get`).
    pub fn line_of(&self, sequence: u64) -> Option<u64> {
        self.sequences
            .binary_search_by_key(&sequence, |s| s.0)
            .ok()
            .map(|i| self.sequences[i].1)
    }

    /// A chunk arriving after the result: kept or not by `ChunkBuffer::insert`'s rules.
    fn insert(&mut self, sequence: Option<u64>, len: usize, line: u64) {
        let at = sequence.map(|s| self.sequences.binary_search_by_key(&s, |x| x.0));
        if matches!(at, Some(Ok(_))) {
            return; // a duplicate
        }
        if self.bytes + len > MAX_STREAM_BYTES || self.chunks >= MAX_STREAM_CHUNKS {
            return;
        }
        self.chunks += 1;
        self.bytes += len;
        if let (Some(seq), Some(Err(i))) = (sequence, at) {
            self.sequences.insert(i, (seq, line));
        }
    }
}

/// A finished call in the map: the check half of its key and its tool name (an index into
/// [`FoldedCalls`]' names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FoldedCall {
    check: u32,
    name: u32,
}

/// The finished calls of a `findings_only` fold.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FoldedCalls {
    /// By the 64-bit half of the key; a call whose half is taken by another goes to `overflow`.
    calls: ByHash<FoldedCall>,
    overflow: HashMap<FoldedKey, u32>,
    /// The streams of the calls that had chunks.
    streams: HashMap<FoldedKey, FoldedStream>,
    names: Vec<Box<str>>,
    name_index: HashMap<Box<str>, u32>,
}

impl FoldedCalls {
    /// Records the finished call `id` of session `sid`.
    pub fn insert(&mut self, sid: u32, id: &str, tool_name: &str, stream: &ChunkBuffer) {
        self.insert_at(key(sid, id), tool_name, stream);
    }

    fn insert_at(&mut self, k: FoldedKey, tool_name: &str, stream: &ChunkBuffer) {
        let name = if let Some(&n) = self.name_index.get(tool_name) {
            n
        } else {
            let n = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
            self.names.push(tool_name.into());
            self.name_index.insert(tool_name.into(), n);
            n
        };
        match self.calls.get(&k.0) {
            Some(c) if c.check != k.1 => {
                self.overflow.insert(k, name);
            }
            _ => {
                self.calls.insert(k.0, FoldedCall { check: k.1, name });
            }
        }
        if !stream.is_empty() {
            self.streams.insert(k, FoldedStream::of(stream));
        }
    }

    /// The tool name index of the finished call with key `k`.
    fn name_of(&self, k: FoldedKey) -> Option<u32> {
        match self.calls.get(&k.0) {
            Some(c) if c.check == k.1 => Some(c.name),
            Some(_) => self.overflow.get(&k).copied(),
            None => None,
        }
    }

    /// The finished call `id` of session `sid`: its tool name and stream.
    pub fn get(&self, sid: u32, id: &str) -> Option<(&str, Option<&FoldedStream>)> {
        let k = key(sid, id);
        let name = self.name_of(k)?;
        let name = self.names.get(name as usize).map_or("", |n| &**n);
        Some((name, self.streams.get(&k)))
    }

    /// Whether session `sid` has a finished call `id`.
    pub fn contains(&self, sid: u32, id: &str) -> bool {
        self.name_of(key(sid, id)).is_some()
    }

    /// A stream chunk for the finished call `id` of session `sid` (which exists).
    pub fn chunk(&mut self, sid: u32, id: &str, sequence: Option<u64>, len: usize, line: u64) {
        let k = key(sid, id);
        if self.name_of(k).is_some() {
            let s = self.streams.entry(k).or_default();
            s.insert(sequence, len, line);
        }
    }

    /// Number of finished calls kept.
    pub fn len(&self) -> usize {
        self.calls.len() + self.overflow.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::StreamType;
    use crate::session::Chunk;

    fn chunk(sequence: Option<u64>, text: &str, line: u64) -> Chunk {
        Chunk {
            sequence,
            stream_type: StreamType::Stdout,
            text: text.into(),
            line,
        }
    }

    /// A finished call keeps its name, its sequences' lines, and later chunks by the buffer's
    /// rules: a new sequence is kept, a repeated one is not; ids and sessions stay apart.
    #[test]
    fn a_finished_call_answers_what_the_checks_ask() {
        let mut b = ChunkBuffer::default();
        b.insert(chunk(Some(2), "bb", 7));
        b.insert(chunk(None, "x", 8));
        b.insert(chunk(Some(0), "a", 5));
        let mut f = FoldedCalls::default();
        f.insert(0, "call-1", "Bash", &b);
        f.insert(1, "call-1", "Read", &ChunkBuffer::default());
        let (name, stream) = f.get(0, "call-1").expect("kept");
        assert_eq!(name, "Bash");
        let stream = stream.expect("had chunks");
        assert_eq!(
            (stream.line_of(0), stream.line_of(1), stream.line_of(2)),
            (Some(5), None, Some(7))
        );
        assert_eq!(
            *stream,
            FoldedStream {
                chunks: 3,
                bytes: 4,
                sequences: vec![(0, 5), (2, 7)],
            }
        );
        assert_eq!(
            f.get(1, "call-1").map(|g| (g.0, g.1.is_none())),
            Some(("Read", true))
        );
        assert!(!f.contains(0, "call-2") && !f.contains(2, "call-1"));
        f.chunk(0, "call-1", Some(1), 3, 9);
        f.chunk(0, "call-1", Some(2), 3, 10);
        let (_, stream) = f.get(0, "call-1").expect("kept");
        assert_eq!(
            stream.map(|s| s.sequences.clone()),
            Some(vec![(0, 5), (1, 9), (2, 7)])
        );
        f.chunk(1, "call-1", Some(4), 1, 11);
        assert_eq!(
            f.get(1, "call-1")
                .and_then(|g| g.1)
                .and_then(|s| s.line_of(4)),
            Some(11)
        );
        assert_eq!(f.names.len(), 2);
        assert_eq!(f.len(), 2);
    }

    /// Two calls whose 64-bit halves collide are told apart by the check half.
    #[test]
    fn colliding_halves_are_kept_apart() {
        let mut f = FoldedCalls::default();
        let none = ChunkBuffer::default();
        f.insert_at((7, 10), "Read", &none);
        f.insert_at((7, 20), "Bash", &none);
        f.insert_at((8, 20), "Bash", &none);
        assert_eq!(
            [(7, 10), (7, 20), (8, 20), (7, 30), (9, 10)].map(|k| f.name_of(k)),
            [Some(0), Some(1), Some(1), None, None]
        );
        assert_eq!((f.len(), f.overflow.len(), f.names.len()), (3, 1, 2));
    }

    /// Past the stream's caps a late chunk is not kept, as `ChunkBuffer::insert` would drop it.
    #[test]
    fn late_chunks_past_the_caps_are_not_kept() {
        let mut s = FoldedStream {
            chunks: 1,
            bytes: MAX_STREAM_BYTES,
            sequences: vec![(0, 1)],
        };
        s.insert(Some(1), 1, 2);
        assert_eq!(s.line_of(1), None);
        s.insert(Some(1), 0, 3);
        assert_eq!(s.line_of(1), Some(3));
    }
}
