//! The library's append path (issue 27 item 2): a session file that grows is read only from
//! where it was last indexed, and its index rows are brought up to date by what changed.
//!
//! Who calls it: `super::index::Indexer` (the browser's indexing thread, `super::live`), for
//! files that changed recently; `rawpv search` / `rawpv sessions` index once and read changed
//! files whole.
//!
//! What a [`Tail`] keeps, in the indexing process's memory, per file: the decoder as it stood
//! after the last complete line ([`crate::source::file::Growing`]), the file-backed session it
//! folded (inputs and outputs stay in the file), the byte offset of that line's end, a check of
//! the bytes before it (a hash of the first [`HEAD_CHECK`] bytes and of the last indexed line),
//! and what it last wrote per item (each call's and document's hash). An append is decoded and
//! folded into that session; the end of the file is peeked at with a fork of the decoder
//! ([`crate::import::Decoder::fork`]: the usage and turn end of the last API message, which a
//! Claude Code transcript gives out only with the next record or at the end); then the session
//! row is summarised again from the session (cheap: no text), and only the calls and documents
//! of new items, of calls whose record changed (`Invocation::rev`: a `tool_use` indexed earlier
//! whose `tool_result` came now) and of messages still open are made again, and written if they
//! differ ([`super::store::Store::put_delta`]).
//!
//! Formats: Claude Code JSONL and RAWP NDJSON (their decoders fork). Every other format, and a
//! Claude Code session with subagent files (read beside the transcript when its first record is
//! decoded, so an appended one would be missed), is folded whole each time it changes, as are
//! files past [`super::index::Indexer`]'s limits.
//!
//! Invariants:
//! * The rows written after any sequence of appends are exactly those a whole fold of the file
//!   gives (`tests/it/library_append.rs`: every corpus Claude Code and RAWP session split at
//!   several lines).
//! * A file is read from scratch (the tail dropped) when it shrank below the offset, its device
//!   or inode changed, the checked bytes before the offset changed, its format as detected
//!   changed, it grew subagent files, a line too long to keep is being skipped, or the end of
//!   the file would add more than event rows (records waiting for a parent, a partial line that
//!   parses): [`Tail::extend`] says `None`.
//! * Items are only appended to a session (never removed or reordered: the tail's session is
//!   never compacted), so a document's item number, ordinal and recipe stay valid.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::{Read, Seek};
use std::path::Path;

use super::index::{Ordinals, item_rows, recipes_by_line, summarize, version_and_branch};
use super::store::{CallRow, Delta, Doc, Indexed, SessionRow, Stamp};
use crate::import::{Decoded, Format};
use crate::protocol::{Frame, FrameType};
use crate::session::{Item, Session};
use crate::source::file::Growing;

/// Bytes at the start of a file whose hash is checked before an append is read.
pub const HEAD_CHECK: u64 = 4096;
/// At most this many bytes of the last indexed line are hashed (its end).
const LAST_CHECK: u64 = 4096;
/// Bytes read per `read` when an append is read.
const READ_CHUNK: usize = 1 << 20;
/// The head format detection reads (as `crate::source::file` and `crate::import::load_path`
/// do): detected again while the file is shorter.
const DETECT_HEAD: u64 = 64 * 1024;
/// The head `version_and_branch` reads (`super::index`): looked at again while the file is
/// shorter.
const VB_HEAD: u64 = 64 * 1024;

/// One file's state for the append path (module docs).
pub struct Tail {
    grow: Growing,
    session: Session,
    format: Format,
    project: String,
    /// The stamp of the rows last written.
    pub stamp: Stamp,
    head_hash: u64,
    /// Where the last indexed line's checked bytes start, and their hash.
    last_from: u64,
    last_hash: u64,
    /// The agent version and git branch, once the file is past their head.
    vb: Option<(Option<String>, Option<String>)>,
    by_line: bool,
    ordinals: Ordinals,
    /// Per item: its ordinal ([`Ordinals`]).
    ordinal: Vec<Option<u32>>,
    /// Per item: its state when last written ([`state`]).
    seen: Vec<u64>,
    /// Per item: the hash of the call row and document last written (0: none).
    written: Vec<u64>,
}

/// What [`Tail::build`] made of a file.
pub enum Built {
    /// Followed: the tail, and the file's rows now.
    Followed(Box<Tail>, Indexed),
    /// Not to be followed (module docs); the rows of its whole fold, already done.
    Whole(Indexed),
    /// A format the append path does not read (or not a session): `super::index::read` it.
    Unsupported,
}

/// Whether the append path can read files of `format`.
pub fn supported(format: Format) -> bool {
    matches!(format, Format::ClaudeCode | Format::RawpNdjson)
}

fn hash_bytes(b: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    b.hash(&mut h);
    h.finish()
}

/// `len` bytes of `f` at `at` (fewer at its end).
fn read_at(f: &mut std::fs::File, at: u64, len: u64) -> std::io::Result<Vec<u8>> {
    f.seek(std::io::SeekFrom::Start(at))?;
    let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    f.take(len).read_to_end(&mut buf)?;
    Ok(buf)
}

/// An item's state as far as its rows go: a call's revision (every change of an invocation
/// bumps it), a message's whether it is still open (an open one may grow: always made again),
/// 0 for other rows.
fn state(s: &Session, i: usize) -> u64 {
    match &s.items[i] {
        Item::Invocation(k) => s.invocations[*k].rev.wrapping_add(1),
        Item::Message(m) if !m.done => u64::MAX,
        Item::Message(_) | Item::Event(_) => 0,
    }
}

fn rows_hash(call: Option<&CallRow>, doc: Option<&Doc>) -> u64 {
    if call.is_none() && doc.is_none() {
        return 0;
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    if let Some(c) = call {
        (
            c.item, c.line, &c.tool, &c.status, &c.summary, c.started, c.ended,
        )
            .hash(&mut h);
    }
    if let Some(d) = doc {
        (d.item, d.line, d.kind, &d.tool, d.ts, &d.text, &d.recipe).hash(&mut h);
    }
    h.finish().max(1)
}

/// The frames of `peek` when every item is one the index may take as an event row after the
/// last item (a usage or turn-end frame, a finding, a malformed line): else `None`.
fn peek_events(peek: &[Decoded]) -> Option<Vec<&Frame>> {
    let mut frames = Vec::new();
    for d in peek {
        match d {
            Decoded::Frame(f) => {
                if !matches!(
                    f.frame_type,
                    FrameType::SessionUsage | FrameType::SessionTurnEnd
                ) {
                    return None;
                }
                frames.push(&**f);
            }
            Decoded::Malformed(_) | Decoded::Finding(_) => {}
        }
    }
    Some(frames)
}

impl Tail {
    /// Reads `path` (of stamp `stamp`, in the directory of `project`) from its start into a
    /// new tail, with what the index keeps of it now ([`Built`]).
    pub fn build(path: &Path, project: &str, stamp: Stamp) -> Built {
        let Ok(mut f) = std::fs::File::open(path) else {
            return Built::Unsupported;
        };
        let Ok(head) = read_at(&mut f, 0, DETECT_HEAD) else {
            return Built::Unsupported;
        };
        let format = crate::import::detect(&head);
        let grow = match Growing::new(path, format) {
            Some(g) if supported(format) => g,
            _ => return Built::Unsupported,
        };
        let mut session = Session::new();
        session.backing = Some(std::sync::Arc::from(path));
        session.reparse = crate::import::reparse_for(format);
        let mut tail = Self {
            grow,
            session,
            format,
            project: project.to_owned(),
            stamp,
            head_hash: 0,
            last_from: 0,
            last_hash: 0,
            vb: None,
            by_line: false,
            ordinals: Ordinals::default(),
            ordinal: Vec::new(),
            seen: Vec::new(),
            written: Vec::new(),
        };
        let Ok(partial) = f
            .seek(std::io::SeekFrom::Start(0))
            .and_then(|_| tail.read_on(&mut f))
        else {
            return Built::Unsupported;
        };
        let sid = tail.session_id();
        if format == Format::ClaudeCode
            && !crate::import::cc_files::subagent_files(path, sid.as_deref()).is_empty()
        {
            return Built::Whole(tail.finish_whole(path, partial.as_deref()));
        }
        let Some(partial) = partial else {
            return Built::Whole(tail.finish_whole(path, None));
        };
        let Some(peek) = tail.grow.peek_finish(&partial) else {
            return Built::Whole(tail.finish_whole(path, Some(&partial)));
        };
        let Some(row) = tail.row(path, &peek) else {
            return Built::Whole(tail.finish_whole(path, Some(&partial)));
        };
        tail.by_line = recipes_by_line(path, format, row.session_id.as_deref());
        let delta = tail.changed(row);
        if tail.remember(path, &mut f).is_err() {
            return Built::Unsupported;
        }
        Built::Followed(Box::new(tail), (delta.row, delta.calls, delta.docs))
    }

    /// Reads what `path` (now of stamp `now`) added since the rows were last written, folds it,
    /// and says what changed in the rows; `None`: the file must be read from scratch (module
    /// docs), and this tail is of no more use.
    pub fn extend(&mut self, path: &Path, now: Stamp) -> Option<Delta> {
        let offset = self.grow.offset();
        if (now.dev, now.ino) != (self.stamp.dev, self.stamp.ino) || now.size < offset {
            return None;
        }
        let mut f = std::fs::File::open(path).ok()?;
        let head = read_at(&mut f, 0, HEAD_CHECK.min(offset)).ok()?;
        if hash_bytes(&head) != self.head_hash {
            return None;
        }
        let last = read_at(&mut f, self.last_from, offset - self.last_from).ok()?;
        if hash_bytes(&last) != self.last_hash {
            return None;
        }
        if offset < DETECT_HEAD {
            let head = read_at(&mut f, 0, DETECT_HEAD).ok()?;
            if crate::import::detect(&head) != self.format {
                return None;
            }
        }
        f.seek(std::io::SeekFrom::Start(offset)).ok()?;
        let partial = self.read_on(&mut f).ok()??;
        if self.format == Format::ClaudeCode
            && !crate::import::cc_files::subagent_files(path, self.session_id().as_deref())
                .is_empty()
        {
            return None;
        }
        let peek = self.grow.peek_finish(&partial)?;
        let mut row = self.row(path, &peek)?;
        row.stamp = now;
        let delta = self.changed(row);
        self.remember(path, &mut f).ok()?;
        Some(delta)
    }

    /// The rows of [`Tail::extend`]'s delta were written: they are of `stamp` now.
    pub fn written_as(&mut self, stamp: Stamp) {
        self.stamp = stamp;
    }

    /// The file.
    pub fn path(&self) -> &Path {
        self.session
            .backing
            .as_deref()
            .unwrap_or_else(|| Path::new(""))
    }

    fn session_id(&self) -> Option<String> {
        self.session
            .sessions
            .iter()
            .next()
            .and_then(|(_, e)| e.id.as_deref().map(str::to_owned))
    }

    /// Feeds the rest of `f` (from where it stands) to the decoder and folds it; returns the
    /// incomplete last line, given back by the decoder so that it is read again next time
    /// (`None`: a line too long to keep is being skipped).
    fn read_on(&mut self, f: &mut std::fs::File) -> std::io::Result<Option<Vec<u8>>> {
        let mut buf = vec![0u8; READ_CHUNK];
        let mut out = Vec::new();
        loop {
            let n = match f.read(&mut buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                r => r?,
            };
            if n == 0 {
                break;
            }
            self.grow.feed(&buf[..n], &mut out);
            for d in out.drain(..) {
                self.session.apply(d);
            }
        }
        Ok(self.grow.take_partial())
    }

    /// The session row now, with `peek` (what the end of the file would add) as event rows
    /// after the last item; `None` when `peek` holds more than that.
    fn row(&mut self, path: &Path, peek: &[Decoded]) -> Option<SessionRow> {
        let extra = peek_events(peek)?;
        if !extra.is_empty() {
            // Peeked frames that would name the session or its `cwd` first: not worth a case.
            let (_, first) = self.session.sessions.iter().next()?;
            if first.cwd.is_none()
                && extra
                    .iter()
                    .any(|f| crate::session::sessions::frame_cwd(f).is_some())
            {
                return None;
            }
        }
        let vb = match &self.vb {
            Some(vb) => vb.clone(),
            None => version_and_branch(path),
        };
        let row = super::index::base_row(path, &self.project, self.stamp);
        Some(summarize(row, &self.session, self.format, vb, &extra))
    }

    /// The calls and documents that differ from those last written, with `row`.
    fn changed(&mut self, row: SessionRow) -> Delta {
        let s = &self.session;
        let mut delta = Delta {
            row,
            ..Delta::default()
        };
        let n = s.items.len();
        for i in 0..n {
            if i >= self.ordinal.len() {
                self.ordinal.push(self.ordinals.next(s, i));
                self.seen.push(0);
                self.written.push(0);
            } else {
                let now = state(s, i);
                if now == self.seen[i] && now != u64::MAX {
                    continue;
                }
            }
            self.seen[i] = state(s, i);
            if matches!(s.items[i], Item::Event(_)) {
                continue;
            }
            let (call, doc) = item_rows(s, i, self.ordinal[i], self.by_line, self.format);
            let h = rows_hash(call.as_ref(), doc.as_ref());
            if h == self.written[i] {
                continue;
            }
            self.written[i] = h;
            delta.items.push(i as u32);
            delta.calls.extend(call);
            delta.docs.extend(doc);
        }
        delta
    }

    /// Notes the checked bytes before the offset (read from `f`) and the head's fields.
    fn remember(&mut self, path: &Path, f: &mut std::fs::File) -> std::io::Result<()> {
        let offset = self.grow.offset();
        self.head_hash = hash_bytes(&read_at(f, 0, HEAD_CHECK.min(offset))?);
        // The last complete line: back from the offset to the newline before it.
        let from = offset.saturating_sub(LAST_CHECK);
        let bytes = read_at(f, from, offset - from)?;
        let start = bytes[..bytes.len().saturating_sub(1)]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        self.last_from = from + start as u64;
        self.last_hash = hash_bytes(&bytes[start..]);
        if self.vb.is_none() && offset >= VB_HEAD {
            self.vb = Some(version_and_branch(path));
        }
        Ok(())
    }

    /// The file cannot be followed: ends the decoder and the session for real and gives what a
    /// whole fold gives.
    fn finish_whole(mut self, path: &Path, partial: Option<&[u8]>) -> Indexed {
        let Some(partial) = partial else {
            return super::index::read(path, &self.project);
        };
        let Some(peek) = self.grow.peek_finish(partial) else {
            return super::index::read(path, &self.project);
        };
        for d in peek {
            self.session.apply(d);
        }
        self.session.finish();
        let row = super::index::base_row(path, &self.project, self.stamp);
        let row = summarize(
            row,
            &self.session,
            self.format,
            version_and_branch(path),
            &[],
        );
        let by_line = recipes_by_line(path, self.format, row.session_id.as_deref());
        let mut ordinals = Ordinals::default();
        let (mut calls, mut docs) = (Vec::new(), Vec::new());
        for i in 0..self.session.items.len() {
            let o = ordinals.next(&self.session, i);
            let (c, d) = item_rows(&self.session, i, o, by_line, self.format);
            calls.extend(c);
            docs.extend(d);
        }
        (row, calls, docs)
    }
}

/// Tails by file, for the files most recently indexed through them (at most a count and a
/// total size: each holds its file's session).
#[derive(Default)]
pub struct Tails {
    by_path: HashMap<std::path::PathBuf, (u64, Box<Tail>)>,
    clock: u64,
}

impl Tails {
    /// The tail of `path`, taken out (put it back with [`Tails::put`]).
    pub fn take(&mut self, path: &Path) -> Option<Box<Tail>> {
        self.by_path.remove(path).map(|(_, t)| t)
    }

    /// Keeps `tail` for `path`, dropping the least recently used ones past `max` tails or
    /// `max_bytes` of their files.
    pub fn put(&mut self, path: &Path, tail: Box<Tail>, max: usize, max_bytes: u64) {
        self.clock += 1;
        self.by_path.insert(path.to_path_buf(), (self.clock, tail));
        loop {
            let bytes: u64 = self.by_path.values().map(|(_, t)| t.stamp.size).sum();
            if self.by_path.len() <= max && bytes <= max_bytes {
                break;
            }
            let Some(oldest) = self
                .by_path
                .iter()
                .min_by_key(|(_, (used, _))| *used)
                .map(|(p, _)| p.clone())
            else {
                break;
            };
            self.by_path.remove(&oldest);
        }
    }

    /// Whether `path` has a tail.
    pub fn has(&self, path: &Path) -> bool {
        self.by_path.contains_key(path)
    }

    /// Keeps only the tails whose stamp `keep` accepts (the others' sessions leave memory).
    pub fn retain(&mut self, mut keep: impl FnMut(&Stamp) -> bool) {
        self.by_path.retain(|_, (_, t)| keep(&t.stamp));
    }

    /// Forgets every tail (the store was replaced: nothing they wrote is there).
    pub fn clear(&mut self) {
        self.by_path.clear();
    }

    /// How many tails are kept.
    pub fn len(&self) -> usize {
        self.by_path.len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.by_path.is_empty()
    }
}
