//! `rawpv FILE`: a saved file read in the background, batch by batch, so the first screen never
//! waits for the whole file (issue 8).
//!
//! Who calls it: `crate::source::spawn_source_with` for `SourceKind::File` (the viewer), and the
//! one-shot commands through [`fold_path`] (`print`, `check`, `stats`) and [`read_path`]
//! (`convert`).
//!
//! How: the file is read in [`READ_CHUNK`] pieces; complete lines are decoded straight from the
//! read buffer (no per-line copy when the line is valid UTF-8) and handed on in batches of at most
//! [`BATCH`] items, with [`FileEvent::Progress`] (bytes read of the file's size) in between. The
//! read buffer is reused; only an incomplete last line is carried over to the next read. RAWP
//! NDJSON lines are decoded on two threads once the first batch is out (each read's complete
//! lines cut in two at a newline; the halves' items joined in order), and, for a session that
//! keeps outputs in the file ([`ReadOptions::defer_outputs`]), result outputs are validated but
//! not built.
//!
//! A Claude Code transcript streams like the rest, through the one Claude Code decoder
//! (`claude_code::ClaudeCodeDecoder::for_file`, which orders records by their `parentUuid` graph
//! as they arrive and reads the session's subagent files); its frames carry their record's byte
//! span, so a session backed by the file re-reads inputs and outputs from the record
//! (`Session::reparse`). A JSON array of frames is decoded whole, then handed on in batches.
//!
//! Invariants: decoding is exactly `crate::import::load_bytes`'s (same line numbers, same `\r`
//! handling, invalid UTF-8 replaced with U+FFFD line by line), so the viewer, the commands and
//! the tests see the same session; a line longer than [`MAX_FILE_LINE`] bytes becomes a
//! `too-long` malformed item (a finding) and reading goes on; memory held by the reader is one
//! read buffer plus the longest line.

use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::import::{self, Decoded, Decoder, Format, rawp};
use crate::protocol::{ByteSpan, ParseError, ParseErrorKind, ParseOptions};
use crate::session::Session;

use super::BATCH;

/// Bytes read per `read` call.
pub const READ_CHUNK: usize = 4 * 1024 * 1024;
/// Longest line a file may have, in bytes (256 MiB); longer ones are a `too-long` finding.
pub const MAX_FILE_LINE: usize = 256 * 1024 * 1024;
/// Minimum time between two [`FileEvent::Progress`] events.
pub const PROGRESS_EVERY: Duration = Duration::from_millis(50);
/// Complete lines of a read decoded on two threads when at least this many bytes (RAWP NDJSON).
const PARALLEL_FROM: usize = 64 * 1024;
/// Bytes looked at for format detection (as `import::load_path` does).
const DETECT_HEAD: usize = 64 * 1024;

/// What the reader hands on, in this order: `Format` once, then `Batch`es with `Progress` in
/// between, then (after the last batch) one `Progress` with `bytes == total`.
#[derive(Debug)]
pub enum FileEvent {
    Format(Format),
    Batch(Vec<Decoded>),
    /// `bytes` of the file read so far, of `total` (the size when opened; a file that grows while
    /// it is read reports `bytes > total`).
    Progress {
        bytes: u64,
        total: u64,
    },
}

/// How [`read_path_with`] decodes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// The batches are folded into a [`Session`] whose `backing` is this file, which keeps
    /// result outputs in the file: they are validated but not built (`ParseOptions::skip_output`;
    /// the frame carries a stand-in of the output's shape for the checks). For a Claude Code
    /// transcript, its frames carry their record's span instead (the session re-reads calls
    /// from the record). Never for `convert`, which writes the frames out.
    pub defer_outputs: bool,
}

/// Reads and decodes `path`, calling `sink` with every event. `sink` returns `false` to stop
/// early (the viewer quit). Returns the detected format. Frames are complete (no output
/// skipped): `read_path_with` with the default [`ReadOptions`].
///
/// # Errors
/// The I/O error of opening or reading the file.
pub fn read_path(path: &Path, sink: impl FnMut(FileEvent) -> bool) -> std::io::Result<Format> {
    read_path_with(path, ReadOptions::default(), sink)
}

/// [`read_path`] with options.
///
/// # Errors
/// The I/O error of opening or reading the file.
pub fn read_path_with(
    path: &Path,
    opts: ReadOptions,
    mut sink: impl FnMut(FileEvent) -> bool,
) -> std::io::Result<Format> {
    let mut file = std::fs::File::open(path)?;
    let total = file.metadata()?.len();
    let mut buf = vec![
        0u8;
        READ_CHUNK
            .min(usize::try_from(total).unwrap_or(READ_CHUNK))
            .max(DETECT_HEAD)
    ];
    // Fill the head for detection (a short read is not the end of the file).
    let mut filled = 0;
    while filled < DETECT_HEAD.min(buf.len()) {
        let n = read_some(&mut file, &mut buf[filled..])?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    let format = import::detect(&buf[..filled.min(DETECT_HEAD)]);
    if !sink(FileEvent::Format(format)) {
        return Ok(format);
    }
    if format == Format::RawpJsonArray {
        drop(buf);
        let loaded = import::load_path(path)?;
        let mut items = loaded.items.into_iter();
        loop {
            let batch: Vec<Decoded> = items.by_ref().take(BATCH).collect();
            if batch.is_empty() || !sink(FileEvent::Batch(batch)) {
                break;
            }
        }
        sink(FileEvent::Progress {
            bytes: total,
            total,
        });
        return Ok(format);
    }
    let head = Head {
        buf,
        filled,
        total,
        format,
    };
    stream_lines(&mut file, path, head, opts, &mut sink)?;
    Ok(format)
}

/// The first bytes of a file, read for format detection.
struct Head {
    buf: Vec<u8>,
    filled: usize,
    total: u64,
    format: Format,
}

/// Streams the lines of `file` (whose first `head.filled` bytes are in `head.buf`) through the
/// line decoder of `head.format`, then one `Progress` with every byte. Returns `false` when
/// `sink` said stop.
fn stream_lines(
    file: &mut std::fs::File,
    path: &Path,
    head: Head,
    opts: ReadOptions,
    sink: &mut impl FnMut(FileEvent) -> bool,
) -> std::io::Result<bool> {
    let Head {
        mut buf,
        mut filled,
        total,
        format,
    } = head;
    let spans = format == Format::RawpNdjson;
    let dec: Box<dyn Decoder> = if format == Format::ClaudeCode {
        Box::new(import::claude_code::ClaudeCodeDecoder::for_file(path))
    } else {
        import::decoder_for(format)
    };
    let mut reader = Lines::new(dec, spans, opts.defer_outputs);
    let mut read = filled as u64;
    let mut last_progress = Instant::now();
    loop {
        if !reader.feed(&buf[..filled], sink) {
            return Ok(false);
        }
        if last_progress.elapsed() >= PROGRESS_EVERY {
            last_progress = Instant::now();
            if !sink(FileEvent::Progress { bytes: read, total }) {
                return Ok(false);
            }
        }
        filled = read_some(file, &mut buf)?;
        if filled == 0 {
            break;
        }
        read += filled as u64;
    }
    reader.finish(sink);
    Ok(sink(FileEvent::Progress { bytes: read, total }))
}

/// Reads, decodes and folds `path` into a finished [`Session`]: the reader runs on its own thread
/// and the fold on the caller's, so decoding and folding overlap (two cores), and no decoded item
/// outlives its batch. Returns the session and the detected format.
///
/// # Errors
/// The I/O error of opening or reading the file.
pub fn fold_path(path: &Path) -> std::io::Result<(Session, Format)> {
    fold_path_into(path, Session::new())
}

/// [`fold_path`] into a given empty session (e.g. one with `Session::findings_only` set, for
/// `rawpv check`).
pub fn fold_path_into(path: &Path, session: Session) -> std::io::Result<(Session, Format)> {
    fold_path_each(path, session, |_| Ok(()))
}

/// [`fold_path_into`] that calls `each` after every folded batch and once more after
/// `Session::finish` (`Session::ended` tells which), so a command can write and drop what can no
/// longer change (`rawpv print`'s rows, issue 17).
///
/// # Errors
/// The I/O error of opening or reading the file, or the first error `each` returns (the reader
/// then stops).
pub fn fold_path_each(
    path: &Path,
    session: Session,
    each: impl FnMut(&mut Session) -> std::io::Result<()>,
) -> std::io::Result<(Session, Format)> {
    fold_path_each_queued(path, session, 8, each)
}

/// [`fold_path_each`] with at most `queue` decoded batches waiting for the fold (8 there): a
/// consumer slower than the reader (`rawpv export`, which renders every call) holds that many
/// 4 MiB batches' frames (several MB each), so it asks for fewer.
///
/// # Errors
/// As [`fold_path_each`].
pub fn fold_path_each_queued(
    path: &Path,
    session: Session,
    queue: usize,
    mut each: impl FnMut(&mut Session) -> std::io::Result<()>,
) -> std::io::Result<(Session, Format)> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<FileEvent>(queue.max(1));
    let path = path.to_owned();
    let path_for_session = path.clone();
    let reader = std::thread::spawn(move || {
        let opts = ReadOptions {
            defer_outputs: true,
        };
        read_path_with(&path, opts, |ev| match ev {
            FileEvent::Batch(_) | FileEvent::Format(_) => tx.send(ev).is_ok(),
            FileEvent::Progress { .. } => true,
        })
    });
    let mut session = session;
    session.backing = Some(std::sync::Arc::from(path_for_session.as_path()));
    for ev in rx {
        match ev {
            FileEvent::Format(f) => session.reparse = import::reparse_for(f),
            FileEvent::Batch(batch) => {
                for d in batch {
                    session.apply(d);
                }
                // Dropping `rx` on an error stops the reader at its next send.
                each(&mut session)?;
            }
            FileEvent::Progress { .. } => {}
        }
    }
    let format = reader
        .join()
        .map_err(|_| std::io::Error::other("the file reader thread panicked"))??;
    session.finish();
    each(&mut session)?;
    Ok((session, format))
}

/// A saved file decoded as it grows, as [`read_path_with`] with [`ReadOptions::defer_outputs`]
/// decodes it (the same line splitter, decoder, spans and line numbers), one appended piece at a
/// time: the library's append path (`crate::library::index::Tail`), which folds what it is
/// given into a file-backed [`Session`] and asks [`Growing::peek_finish`] what the end of the
/// file would add now, without ending the decoder.
///
/// Invariant: feeding a file's bytes in any pieces, then [`Growing::take_partial`] and
/// [`Growing::peek_finish`] of that partial line, gives the items `read_path_with` gives for the
/// whole file (`tests/it/library_append.rs` holds the indexes equal for every corpus session).
pub struct Growing {
    lines: Lines,
}

impl Growing {
    /// A decoder for `path`, whose format is `format`; `None` for a JSON array (decoded whole,
    /// never line by line).
    pub fn new(path: &Path, format: Format) -> Option<Self> {
        if format == Format::RawpJsonArray {
            return None;
        }
        let spans = format == Format::RawpNdjson;
        let dec: Box<dyn Decoder> = if format == Format::ClaudeCode {
            Box::new(import::claude_code::ClaudeCodeDecoder::for_file(path))
        } else {
            import::decoder_for(format)
        };
        Some(Self {
            lines: Lines::new(dec, spans, true),
        })
    }

    /// Decodes the complete lines of `data` (the bytes after those fed so far) into `out`; an
    /// incomplete last line waits for the next piece (or [`Growing::take_partial`]).
    pub fn feed(&mut self, data: &[u8], out: &mut Vec<Decoded>) {
        self.lines.feed(data, &mut |ev| {
            if let FileEvent::Batch(b) = ev {
                out.extend(b);
            }
            true
        });
        out.append(&mut self.lines.out);
    }

    /// Bytes of the complete lines decoded so far: where the next piece starts once the
    /// incomplete last line was taken back.
    pub fn offset(&self) -> u64 {
        self.lines.next_offset
    }

    /// Complete lines decoded so far.
    pub fn lines(&self) -> u64 {
        self.lines.line
    }

    /// Takes back the incomplete last line kept by [`Growing::feed`] (it is fed again, whole,
    /// with the next piece read from [`Growing::offset`]); `None` while a line too long to keep
    /// is being skipped (the caller reads the file whole instead).
    pub fn take_partial(&mut self) -> Option<Vec<u8>> {
        if self.lines.overlong.is_some() {
            return None;
        }
        Some(std::mem::take(&mut self.lines.carry))
    }

    /// What the end of the file would add now, were `partial` its last bytes (an unterminated
    /// line, or empty): the items `read_path_with` gives after the last complete line. The
    /// decoder is forked ([`Decoder::fork`]), so this one goes on; `None` when it cannot be.
    pub fn peek_finish(&self, partial: &[u8]) -> Option<Vec<Decoded>> {
        let mut lines = Lines {
            dec: self.lines.dec.fork()?,
            spans: self.lines.spans,
            skip_outputs: self.lines.skip_outputs,
            defer: self.lines.defer,
            sent: self.lines.sent,
            next_offset: self.lines.next_offset,
            line: self.lines.line,
            carry: partial.to_vec(),
            overlong: None,
            out: Vec::new(),
        };
        let mut out = Vec::new();
        lines.finish(&mut |ev| {
            if let FileEvent::Batch(b) = ev {
                out.extend(b);
            }
            true
        });
        Some(out)
    }
}

/// `read` that retries on `Interrupted`.
fn read_some(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match file.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            r => return r,
        }
    }
}

/// One RAWP NDJSON line (`raw` without its `\n`, at most [`MAX_FILE_LINE`] bytes) as
/// `crate::import::rawp` decodes it, its frame spanning `raw` at `offset` (`\r` included).
fn decode_rawp_line(raw: &[u8], line: u64, offset: u64, skip: bool, out: &mut Vec<Decoded>) {
    let span = ByteSpan::of(offset, raw);
    let text = import::line_text(raw.strip_suffix(b"\r").unwrap_or(raw), line, out);
    let first = out.len();
    rawp::decode_line(line, &text, &ParseOptions { skip_output: skip }, out);
    for d in &mut out[first..] {
        if let Decoded::Frame(f) = d {
            f.origin.span = Some(span);
        }
    }
}

/// [`decode_rawp_line`] for each line of `lines` (every one ending in `\n`), the line before
/// the first being number `at.0`, ending at byte `at.1`.
fn decode_rawp_lines(lines: &[u8], at: (u64, u64), skip: bool, out: &mut Vec<Decoded>) {
    let (mut line, mut offset) = at;
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', lines) {
        line += 1;
        decode_rawp_line(&lines[start..end], line, offset, skip, out);
        offset += (end - start) as u64 + 1;
        start = end + 1;
    }
}

/// Line splitter + decoder over read buffers.
struct Lines {
    dec: Box<dyn Decoder>,
    /// Record each frame's line span (`Origin::span`): RAWP NDJSON only, where a line is a frame.
    spans: bool,
    /// Skip building result outputs ([`ReadOptions::defer_outputs`]; RAWP NDJSON only).
    skip_outputs: bool,
    /// Hand other decoders each line's span ([`ReadOptions::defer_outputs`]: Claude Code
    /// frames then carry their record's span, and leave out what is read back from it).
    defer: bool,
    /// Whether a batch was handed on (decoding goes to two threads after the first).
    sent: bool,
    /// Byte offset where the next line starts.
    next_offset: u64,
    /// Number of the last complete line.
    line: u64,
    /// An incomplete line carried over from the previous buffer.
    carry: Vec<u8>,
    /// Length so far of a line over [`MAX_FILE_LINE`] (its bytes are skipped).
    overlong: Option<usize>,
    out: Vec<Decoded>,
}

impl Lines {
    /// A splitter at the start of a file: `spans` for RAWP NDJSON (a line is a frame), `defer`
    /// for a session backed by the file ([`ReadOptions::defer_outputs`]).
    fn new(dec: Box<dyn Decoder>, spans: bool, defer: bool) -> Self {
        Self {
            dec,
            spans,
            skip_outputs: spans && defer,
            defer,
            sent: false,
            next_offset: 0,
            line: 0,
            carry: Vec::new(),
            overlong: None,
            out: Vec::with_capacity(BATCH),
        }
    }

    /// Decodes the complete lines of `data`; keeps the incomplete tail. `false`: sink said stop.
    ///
    /// RAWP NDJSON lines are decoded on two threads once the first batch is out (so the first
    /// screen comes as early as with one): the complete lines are cut in two at a newline, and
    /// the second half is decoded on a scoped thread with its own line numbers and offsets.
    fn feed(&mut self, mut data: &[u8], sink: &mut impl FnMut(FileEvent) -> bool) -> bool {
        // The end of a line carried over from the previous read (or being skipped as too long).
        if self.overlong.is_some() || !self.carry.is_empty() {
            let Some(i) = memchr::memchr(b'\n', data) else {
                self.push_partial(data);
                return true;
            };
            self.push_partial(&data[..i]);
            data = &data[i + 1..];
            let carry = std::mem::take(&mut self.carry);
            self.end_line(&carry);
            self.carry = carry;
            self.carry.clear();
            if !self.send_full_batches(sink) {
                return false;
            }
        }
        let complete = memchr::memrchr(b'\n', data).map_or(0, |i| i + 1);
        let (mut lines, tail) = data.split_at(complete);
        // One thread until the first batch is out, and for other formats (stateful decoders).
        while !(self.sent && self.spans && lines.len() >= PARALLEL_FROM) {
            let Some(i) = memchr::memchr(b'\n', lines) else {
                break;
            };
            self.end_line(&lines[..i]);
            lines = &lines[i + 1..];
            if !self.send_full_batches(sink) {
                return false;
            }
        }
        if !lines.is_empty() {
            self.decode_on_two_threads(lines);
            if !self.send_full_batches(sink) {
                return false;
            }
        }
        self.push_partial(tail);
        true
    }

    /// Decodes `lines` (complete RAWP NDJSON lines, each ending in `\n`) on this thread and one
    /// more, in order, as [`Lines::end_line`] would one by one.
    fn decode_on_two_threads(&mut self, lines: &[u8]) {
        let mid = lines.len() / 2;
        let cut = memchr::memchr(b'\n', &lines[mid..]).map_or(lines.len(), |i| mid + i + 1);
        let (first, second) = lines.split_at(cut);
        let first_lines = memchr::memchr_iter(b'\n', first).count() as u64;
        let (line, offset, skip) = (self.line, self.next_offset, self.skip_outputs);
        let second_at = (line + first_lines, offset + first.len() as u64);
        let mut out2 = Vec::with_capacity(BATCH);
        let joined = std::thread::scope(|s| {
            let other = s.spawn(|| decode_rawp_lines(second, second_at, skip, &mut out2));
            decode_rawp_lines(first, (line, offset), skip, &mut self.out);
            other.join().is_ok()
        });
        if !joined {
            // Not expected (decoding does not panic); decode that half again here.
            out2.clear();
            decode_rawp_lines(second, second_at, skip, &mut out2);
        }
        self.out.append(&mut out2);
        self.line = line + memchr::memchr_iter(b'\n', lines).count() as u64;
        self.next_offset = offset + lines.len() as u64;
    }

    /// Hands on every full batch of decoded items ([`BATCH`] each); the rest waits for more.
    /// `false`: sink said stop.
    fn send_full_batches(&mut self, sink: &mut impl FnMut(FileEvent) -> bool) -> bool {
        if self.out.len() < BATCH {
            return true;
        }
        self.sent = true;
        if self.out.len() < 2 * BATCH {
            // The common case of one batch: hand on the whole buffer (as before two threads).
            return sink(FileEvent::Batch(std::mem::take(&mut self.out)));
        }
        let mut items = std::mem::take(&mut self.out).into_iter();
        loop {
            let batch: Vec<Decoded> = items.by_ref().take(BATCH).collect();
            if batch.len() < BATCH {
                self.out = batch;
                return true;
            }
            if !sink(FileEvent::Batch(batch)) {
                return false;
            }
        }
    }

    fn push_partial(&mut self, seg: &[u8]) {
        if let Some(n) = self.overlong.as_mut() {
            *n += seg.len();
        } else if self.carry.len() + seg.len() > MAX_FILE_LINE {
            self.overlong = Some(self.carry.len() + seg.len());
            self.carry = Vec::new();
        } else {
            self.carry.extend_from_slice(seg);
        }
    }

    /// One complete line (without its `\n`).
    fn end_line(&mut self, raw: &[u8]) {
        self.line += 1;
        let mut offset = self.next_offset;
        let len = self.overlong.unwrap_or(raw.len()) as u64;
        self.next_offset += len + 1;
        // The span starts after a byte order mark, so the line reads back as it was decoded.
        let bom = raw.len() - import::without_bom(self.line, raw).len();
        let raw = &raw[bom..];
        offset += bom as u64;
        if let Some(n) = self.overlong.take() {
            let head = String::from_utf8_lossy(&raw[..raw.len().min(200)]).into_owned();
            self.out.push(Decoded::Malformed(ParseError::new(
                self.line,
                ParseErrorKind::TooLong(n),
                &head,
            )));
            return;
        }
        if self.spans {
            decode_rawp_line(raw, self.line, offset, self.skip_outputs, &mut self.out);
        } else {
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            let text = import::line_text(raw, self.line, &mut self.out);
            if self.defer {
                // The session reads inputs and outputs back from the line (Claude Code).
                self.dec
                    .line_span(self.line, ByteSpan::of(offset, raw), &text, &mut self.out);
            } else {
                self.dec.line(self.line, &text, &mut self.out);
            }
        }
    }

    /// End of file: an unterminated last line counts (as in `load_bytes`); pending records out.
    fn finish(&mut self, sink: &mut impl FnMut(FileEvent) -> bool) {
        // `load_bytes` splits on '\n', so a file ending in '\n' has an empty last line, which
        // the decoders ignore; feeding it keeps the two paths identical.
        let carry = std::mem::take(&mut self.carry);
        self.end_line(&carry);
        self.dec.finish(&mut self.out);
        let rest = std::mem::take(&mut self.out);
        if !rest.is_empty() {
            sink(FileEvent::Batch(rest));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn collect(bytes: &[u8]) -> (Format, Vec<Decoded>, Vec<(u64, u64)>) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        let mut items = Vec::new();
        let mut progress = Vec::new();
        let format = read_path(f.path(), |ev| {
            match ev {
                FileEvent::Batch(b) => items.extend(b),
                FileEvent::Progress { bytes, total } => progress.push((bytes, total)),
                FileEvent::Format(_) => {}
            }
            true
        })
        .unwrap();
        (format, items, progress)
    }

    #[test]
    fn streamed_file_decodes_exactly_like_load_bytes() {
        let cases: &[&[u8]] = &[
            b"",
            b"\n\n",
            b"{\"type\":\"agent.text.done\",\"payload\":{\"text\":\"a\"}}\n",
            b"{\"type\":\"agent.text.done\",\"payload\":{\"text\":\"a\"}}\r\nnot json\n{\"type\":\"x-y\"}",
            b"{\"type\":\"agent.text.done\",\"payload\":{\"text\":\"\xff\xfe\"}}\n",
            crate::source::DEMO.as_bytes(),
        ];
        for bytes in cases {
            let (format, mut items, progress) = collect(bytes);
            let want = import::load_bytes(bytes);
            assert_eq!(format, want.format);
            // Spans point at each frame's own line.
            for d in &mut items {
                if let Decoded::Frame(f) = d {
                    let span = f.origin.span.take().unwrap();
                    let line = &bytes[span.offset as usize..span.end() as usize];
                    let again =
                        crate::protocol::parse_line(f.origin.line, &String::from_utf8_lossy(line))
                            .unwrap();
                    assert_eq!(**f, again);
                }
            }
            assert_eq!(items, want.items, "{}", String::from_utf8_lossy(bytes));
            let total = bytes.len() as u64;
            assert_eq!(progress.last(), Some(&(total, total)));
        }
    }

    #[test]
    fn lines_split_across_reads_are_joined() {
        // Feed a recording one byte at a time through the splitter.
        let bytes = crate::source::DEMO.as_bytes();
        let mut lines = Lines {
            dec: import::decoder_for(Format::RawpNdjson),
            spans: false,
            skip_outputs: false,
            defer: false,
            sent: false,
            next_offset: 0,
            line: 0,
            carry: Vec::new(),
            overlong: None,
            out: Vec::new(),
        };
        let mut items = Vec::new();
        let mut sink = |ev: FileEvent| {
            if let FileEvent::Batch(b) = ev {
                items.extend(b);
            }
            true
        };
        for b in bytes.chunks(7) {
            assert!(lines.feed(b, &mut sink));
        }
        lines.finish(&mut sink);
        assert_eq!(items, import::load_bytes(bytes).items);
    }

    #[test]
    fn fold_path_equals_folding_the_whole_file() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(crate::source::DEMO.as_bytes()).unwrap();
        let (mut session, format) = fold_path(f.path()).unwrap();
        let want = Session::from_decoded(import::load_bytes(crate::source::DEMO.as_bytes()).items);
        assert_eq!(format, Format::RawpNdjson);
        // Inputs and outputs were left in the file; reading them back gives what was there.
        let deferred = session
            .invocations
            .iter()
            .filter(|inv| inv.output_span.is_some() && inv.input_span.is_some())
            .count();
        assert!(deferred > 0, "the demo has outputs, all deferred");
        let back: Vec<_> = session
            .invocations
            .iter()
            .map(|inv| Box::new(session.with_input_output(inv).into_owned()))
            .collect();
        session.invocations = back;
        session.backing = None;
        for it in &mut session.items {
            if let crate::session::Item::Event(f) = it {
                f.origin.span = None;
            }
        }
        assert_eq!(session, want);
    }

    #[test]
    fn deferred_outputs_are_skipped_only_when_asked() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(crate::source::DEMO.as_bytes()).unwrap();
        let skipped = |opts: ReadOptions| {
            let mut n = 0;
            read_path_with(f.path(), opts, |ev| {
                if let FileEvent::Batch(b) = ev {
                    for d in b {
                        if let Decoded::Frame(fr) = d
                            && fr.origin.output_skipped
                        {
                            assert!(fr.origin.span.is_some());
                            n += 1;
                        }
                    }
                }
                true
            })
            .unwrap();
            n
        };
        assert_eq!(skipped(ReadOptions::default()), 0);
        assert!(
            skipped(ReadOptions {
                defer_outputs: true,
            }) > 0
        );
    }

    #[test]
    fn a_missing_file_is_an_io_error() {
        let e = read_path(Path::new("/nonexistent/rawpv/x.ndjson"), |_| true).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    }
}
