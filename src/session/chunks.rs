//! A call's stream chunks (`tool.invoke.stream`, SPEC 3.3), kept in `sequence` order with the
//! per-call caps: [`ChunkBuffer`].
//!
//! Who uses it: the reducer (`super::Session::apply_frame` inserts each chunk into its call's
//! buffer), the checks (`super::check`: a chunk's `sequence` already kept, the gaps at the end),
//! the detail's stream section and `print --detail`.
//!
//! Invariants: chunks are ordered by their key ([`ChunkKey`]); at most [`MAX_STREAM_BYTES`] bytes
//! and [`MAX_STREAM_CHUNKS`] chunks are kept per call, the rest counted; a `sequence` is kept
//! once (later copies are counted as duplicates). Moved out of `session.rs` when sessions made
//! that file grow (issue 18).

use crate::protocol::StreamType;

/// Per-invocation cap on kept stream bytes; past it chunks are counted, not kept.
pub const MAX_STREAM_BYTES: usize = 8 * 1024 * 1024;

/// One `tool.invoke.stream` chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// `sequence` as sent (None when absent: appended in arrival order).
    pub sequence: Option<u64>,
    pub stream_type: StreamType,
    pub text: String,
    /// Source line of the frame.
    pub line: u64,
}

/// What inserting a chunk did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkInsert {
    Appended,
    /// Arrived late and was slotted in before later chunks.
    SlottedIn,
    /// Same `sequence` as a kept chunk: dropped.
    Duplicate,
    /// Over [`MAX_STREAM_BYTES`] or [`MAX_STREAM_CHUNKS`]: counted, not kept.
    OverCap,
}

/// Per-invocation cap on kept stream chunks (empty ones too); past it chunks are counted, not
/// kept. 100k chunks of a few bytes each already outgrow any screen.
pub const MAX_STREAM_CHUNKS: usize = 100_000;

/// Where a chunk sorts in its stream: sequenced chunks by `sequence`; a chunk without one right
/// after the highest sequence received before it, in arrival order among such chunks. Sequenced
/// keys are `(Some(sequence), 0)`, unsequenced ones `(Some(highest), n)` with `n ≥ 1` (`(None, n)`
/// before any sequenced chunk), so a late chunk lands before every later sequenced one and
/// after the unsequenced ones that arrived between (as a list searched from its end would).
/// Every `u64` sequence has its own key (`u64::MAX - 1` and `u64::MAX` are two chunks).
type ChunkKey = (Option<u64>, u64);

/// A stream's chunks kept in `sequence` order (SPEC 3.3: frames may arrive out of order), in an
/// ordered map: a chunk arriving out of order costs O(log n), not a shift of the list (100k
/// chunks in descending order took 26 s in a vector, issue 14.7).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChunkBuffer {
    chunks: std::collections::BTreeMap<ChunkKey, Chunk>,
    bytes: usize,
    /// Highest `sequence` kept so far (`None`: none).
    top: Option<u64>,
    /// Unsequenced chunks received so far (their tie-breaker).
    unsequenced: u64,
    /// Chunks dropped because their `sequence` was already kept.
    pub duplicates: u64,
    /// Bytes not kept because of [`MAX_STREAM_BYTES`] or [`MAX_STREAM_CHUNKS`].
    pub dropped_bytes: u64,
    /// Chunks not kept because of [`MAX_STREAM_BYTES`] or [`MAX_STREAM_CHUNKS`].
    pub dropped_chunks: u64,
}

impl ChunkBuffer {
    /// Inserts a chunk in `sequence` order.
    pub fn insert(&mut self, chunk: Chunk) -> ChunkInsert {
        let key = match chunk.sequence {
            Some(seq) => (Some(seq), 0),
            None => (self.top, self.unsequenced + 1),
        };
        if chunk.sequence.is_some() && self.chunks.contains_key(&key) {
            self.duplicates += 1;
            return ChunkInsert::Duplicate;
        }
        if self.bytes + chunk.text.len() > MAX_STREAM_BYTES
            || self.chunks.len() >= MAX_STREAM_CHUNKS
        {
            self.dropped_bytes += chunk.text.len() as u64;
            self.dropped_chunks += 1;
            return ChunkInsert::OverCap;
        }
        if chunk.sequence.is_none() {
            self.unsequenced += 1;
        }
        let late = key.0 < self.top;
        self.top = self.top.max(key.0);
        self.bytes += chunk.text.len();
        self.chunks.insert(key, chunk);
        if late {
            ChunkInsert::SlottedIn
        } else {
            ChunkInsert::Appended
        }
    }

    /// Drops the kept chunks' text (for `Session::findings_only`); `bytes` still counts it, so
    /// later chunks are kept or dropped as before.
    pub fn forget_text(&mut self) {
        for c in self.chunks.values_mut() {
            c.text = String::new();
        }
    }

    /// The kept chunks in order.
    pub fn chunks(&self) -> impl DoubleEndedIterator<Item = &Chunk> + ExactSizeIterator {
        self.chunks.values()
    }

    /// The kept chunk with this `sequence`, if any (O(log n)).
    pub fn get(&self, sequence: u64) -> Option<&Chunk> {
        self.chunks.get(&(Some(sequence), 0))
    }

    /// Number of kept chunks.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    /// Total kept bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Missing `sequence` ranges `[from, to]` (inclusive) between 0 and the highest kept one.
    pub fn gaps(&self) -> Vec<(u64, u64)> {
        let mut gaps = Vec::new();
        let mut next = 0u64;
        for s in self.chunks.values().filter_map(|c| c.sequence) {
            if s > next {
                gaps.push((next, s - 1));
            }
            next = next.max(s.saturating_add(1));
        }
        gaps
    }

    /// The concatenated text of the chunks of the given stream types (all when `None`).
    pub fn text(&self, only: Option<&StreamType>) -> String {
        let mut s = String::with_capacity(self.bytes);
        for c in self.chunks.values() {
            if only.is_none_or(|t| *t == c.stream_type) {
                s.push_str(&c.text);
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(sequence: Option<u64>, text: &str) -> Chunk {
        Chunk {
            sequence,
            stream_type: StreamType::Stdout,
            text: text.to_owned(),
            line: 1,
        }
    }

    /// Issue 14.7: 100k chunks in descending `sequence` took 26 s in release (a shift of the
    /// list and a scan of it per chunk; this debug-build test did not finish in minutes); in an
    /// ordered map they take as long as in order (`benches/ingest.rs` measures).
    #[test]
    fn out_of_order_chunks_are_ordered_without_a_shift_per_chunk() {
        let mut b = ChunkBuffer::default();
        let n = 100_000u64;
        for s in (0..n).rev() {
            assert_eq!(
                b.insert(chunk(Some(s), "x")),
                if s + 1 == n {
                    ChunkInsert::Appended
                } else {
                    ChunkInsert::SlottedIn
                }
            );
        }
        assert_eq!(b.len(), 100_000);
        assert!(b.chunks().map(|c| c.sequence).eq((0..n).map(Some)));
        assert!(b.gaps().is_empty());
        assert_eq!(b.insert(chunk(Some(7), "dup")), ChunkInsert::Duplicate);
        assert_eq!(b.get(7).map(|c| c.text.as_str()), Some("x"));
    }

    /// Empty chunks count toward the per-call cap; past it they are counted, not kept.
    #[test]
    fn the_chunk_count_is_capped_empty_chunks_included() {
        let mut b = ChunkBuffer::default();
        for _ in 0..MAX_STREAM_CHUNKS {
            assert_eq!(b.insert(chunk(None, "")), ChunkInsert::Appended);
        }
        assert_eq!(b.insert(chunk(None, "")), ChunkInsert::OverCap);
        assert_eq!(b.insert(chunk(Some(3), "late")), ChunkInsert::OverCap);
        assert_eq!(
            (b.len(), b.dropped_chunks, b.dropped_bytes),
            (MAX_STREAM_CHUNKS, 2, 4)
        );
    }

    /// Chunks without a sequence stay where they arrived among the sequenced ones.
    #[test]
    fn unsequenced_chunks_keep_their_place() {
        let mut b = ChunkBuffer::default();
        b.insert(chunk(None, "a"));
        b.insert(chunk(Some(0), "b"));
        b.insert(chunk(Some(2), "d"));
        b.insert(chunk(None, "e"));
        b.insert(chunk(Some(1), "c"));
        b.insert(chunk(Some(3), "f"));
        assert_eq!(b.text(None), "abcdef");
    }
}
