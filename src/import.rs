//! Input formats → RAWP frames: format detection and the decoders.
//!
//! Who calls it: the sources (`crate::source`) for files, stdin and network streams, and the
//! one-shot commands (`print`, `convert`, `check`, `stats`) through [`load_path`].
//!
//! A [`Decoder`] is fed one line (or one message) at a time and appends [`Decoded`] items; it may
//! keep state across lines (the Claude Code adapter pairs `tool_use` with `tool_result`) and emit
//! the rest in [`Decoder::finish`]. Invariants: decoders never panic and never drop input silently:
//! what they cannot map becomes a `Decoded::Malformed` or a `Decoded::Finding`, and the record is
//! kept visible as a generic frame where it has content.

pub mod rawp;

use std::path::Path;

use crate::finding::Finding;
use crate::protocol::{Frame, ParseError};

/// One output of a decoder.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    Frame(Box<Frame>),
    /// A line that could not be read at all (a `malformed-line` finding).
    Malformed(ParseError),
    /// A problem the importer found (pairing rules, unrecognised records, …).
    Finding(Finding),
}

impl Decoded {
    pub fn frame(f: Frame) -> Self {
        Self::Frame(Box::new(f))
    }
}

/// A recognised input format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// RAWP NDJSON: one frame per line (SPEC 2).
    RawpNdjson,
    /// A JSON array of RAWP frames (SPEC 2).
    RawpJsonArray,
    /// Claude Code session transcript JSONL (`~/.claude/projects/*/*.jsonl`).
    ClaudeCode,
    /// Claude Code headless `--output-format stream-json` records.
    ClaudeStreamJson,
    /// Anthropic Messages API conversations (request/response bodies, message lists, cassettes).
    Anthropic,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RawpNdjson => "rawp-ndjson",
            Self::RawpJsonArray => "rawp-json-array",
            Self::ClaudeCode => "claude-code",
            Self::ClaudeStreamJson => "claude-stream-json",
            Self::Anthropic => "anthropic",
        }
    }
}

/// Guesses the format from the first bytes of the input (up to a few KiB is enough).
/// Defaults to RAWP NDJSON.
pub fn detect(head: &[u8]) -> Format {
    let text = String::from_utf8_lossy(head);
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        return Format::RawpJsonArray;
    }
    Format::RawpNdjson
}

/// Turns lines of one format into frames.
pub trait Decoder: Send {
    /// Feeds one line (without its newline). `line` is 1-based.
    fn line(&mut self, line: u64, text: &str, out: &mut Vec<Decoded>);
    /// The input ended; emit whatever is pending.
    fn finish(&mut self, out: &mut Vec<Decoded>);
}

/// A decoder for `format`.
pub fn decoder_for(format: Format) -> Box<dyn Decoder> {
    match format {
        Format::RawpNdjson
        | Format::RawpJsonArray
        | Format::ClaudeCode
        | Format::ClaudeStreamJson
        | Format::Anthropic => Box::new(rawp::RawpDecoder),
    }
}

/// A whole input, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub format: Format,
    pub items: Vec<Decoded>,
}

/// Decodes a whole in-memory input. Invalid UTF-8 is replaced (U+FFFD) line by line.
pub fn load_bytes(bytes: &[u8]) -> Loaded {
    let format = detect(&bytes[..bytes.len().min(64 * 1024)]);
    let mut items = Vec::new();
    if format == Format::RawpJsonArray {
        rawp::decode_array(bytes, &mut items);
        return Loaded { format, items };
    }
    let mut dec = decoder_for(format);
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let text = String::from_utf8_lossy(raw);
        dec.line(i as u64 + 1, &text, &mut items);
    }
    dec.finish(&mut items);
    Loaded { format, items }
}

/// Reads and decodes a file.
///
/// # Errors
/// The I/O error of reading the file.
pub fn load_path(path: &Path) -> std::io::Result<Loaded> {
    let bytes = std::fs::read(path)?;
    Ok(load_bytes(&bytes))
}
