//! Bytes or messages → [`Decoded`] items for live sources: line splitting with a per-line cap,
//! format detection from the first line(s), and the decoder from `crate::import::decoder_for`
//! (a followed Claude Code transcript's knows its path, for its subagent files).
//!
//! Who calls it: the live sources (`follow`, `stdin`, `net`). One [`LineDecoder`] per input (a
//! followed file gets a fresh one after truncation or rotation).
//!
//! Invariants: memory per pending line is bounded by `max_line` bytes (a longer line becomes a
//! `TooLong` malformed item, never a crash); lines are fed to the decoder in order with 1-based
//! numbers; until the format is known, complete lines are held (at most [`DETECT_LINES`] non-blank
//! lines or [`DETECT_BYTES`] bytes) and detection is forced by [`LineDecoder::flush`], which a
//! source calls whenever it is about to wait for more input, so frames never wait for detection.
//! A JSON array (`[` first) cannot be decoded line by line: it is collected until the input ends.

use crate::import::{self, Decoded, Decoder, Format};
use crate::protocol::{ParseError, ParseErrorKind};

/// Detection waits for at most this many non-blank lines.
pub const DETECT_LINES: usize = 8;
/// Detection waits for at most this many bytes of lines.
pub const DETECT_BYTES: usize = 64 * 1024;
/// Default cap on one line / message, in bytes (16 MiB).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

enum State {
    /// Format not known yet: complete lines held back.
    Detecting {
        lines: Vec<(u64, String)>,
        bytes: usize,
        non_blank: usize,
    },
    Lines(Box<dyn Decoder>),
    /// A JSON array: every line collected, decoded at the end.
    Array(Vec<u8>),
}

/// Turns a byte stream (or whole messages) into decoded items. See the module docs.
pub struct LineDecoder {
    max_line: usize,
    partial: Vec<u8>,
    /// Length of the current line when it went over `max_line` (its bytes are being discarded).
    overlong: Option<usize>,
    line_no: u64,
    state: State,
    detected: Option<Format>,
    /// The followed file, for the decoders that read files beside it (Claude Code's subagent
    /// files).
    path: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for LineDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineDecoder")
            .field("line_no", &self.line_no)
            .field("partial_bytes", &self.partial.len())
            .finish_non_exhaustive()
    }
}

impl LineDecoder {
    /// A decoder whose lines may be at most `max_line` bytes.
    pub fn new(max_line: usize) -> Self {
        Self {
            max_line: max_line.max(1),
            partial: Vec::new(),
            overlong: None,
            line_no: 0,
            state: State::Detecting {
                lines: Vec::new(),
                bytes: 0,
                non_blank: 0,
            },
            detected: None,
            path: None,
        }
    }

    /// [`LineDecoder::new`] for the followed file at `path`: a Claude Code transcript's decoder
    /// also reads its subagent files, as a saved file's does.
    pub fn for_file(max_line: usize, path: &std::path::Path) -> Self {
        Self {
            path: Some(path.to_owned()),
            ..Self::new(max_line)
        }
    }

    /// The input has nothing more for now (a followed file at its end): detection is forced
    /// ([`LineDecoder::flush`]) and the decoder gives what waits for later lines
    /// ([`Decoder::caught_up`]), so nothing already written stays unseen while the writer is idle.
    pub fn caught_up(&mut self, out: &mut Vec<Decoded>) {
        self.flush(out);
        if let State::Lines(dec) = &mut self.state {
            dec.caught_up(out);
        }
    }

    /// The format, once detected; returned once (the caller sends `SourceMsg::Format`).
    pub fn take_detected(&mut self) -> Option<Format> {
        self.detected.take()
    }

    /// Bytes of an incomplete last line waiting for its newline.
    pub fn pending_bytes(&self) -> usize {
        self.partial.len() + self.overlong.unwrap_or(0)
    }

    /// Number of the last complete line.
    pub fn line_no(&self) -> u64 {
        self.line_no
    }

    /// Feeds raw bytes; complete lines are decoded into `out`, an incomplete last line waits.
    pub fn feed_bytes(&mut self, mut data: &[u8], out: &mut Vec<Decoded>) {
        while !data.is_empty() {
            let (seg, rest, complete) = match memchr::memchr(b'\n', data) {
                Some(i) => (&data[..i], &data[i + 1..], true),
                None => (data, &data[..0], false),
            };
            data = rest;
            if let Some(n) = self.overlong.as_mut() {
                *n += seg.len();
            } else if self.partial.len() + seg.len() > self.max_line {
                self.overlong = Some(self.partial.len() + seg.len());
                self.partial = Vec::new();
            } else {
                self.partial.extend_from_slice(seg);
            }
            if complete {
                self.end_line(out);
            }
        }
    }

    /// Ends the current line (newline seen, or end of input).
    fn end_line(&mut self, out: &mut Vec<Decoded>) {
        self.line_no += 1;
        let line = self.line_no;
        if let Some(n) = self.overlong.take() {
            let head = String::from_utf8_lossy(&self.partial).into_owned();
            self.partial.clear();
            out.push(Decoded::Malformed(ParseError::new(
                line,
                ParseErrorKind::TooLong(n),
                &head,
            )));
            return;
        }
        let raw = std::mem::take(&mut self.partial);
        let raw = import::without_bom(line, raw.strip_suffix(b"\r").unwrap_or(&raw));
        let text = import::line_text(raw, line, out).into_owned();
        self.feed_line_at(line, text, out);
    }

    /// Feeds one whole message (a WebSocket text message, an SSE event's data) as line `line`.
    /// Messages over the cap become a `TooLong` malformed item.
    pub fn feed_message(&mut self, line: u64, text: &str, out: &mut Vec<Decoded>) {
        self.line_no = self.line_no.max(line);
        if text.len() > self.max_line {
            let head: String = text.chars().take(200).collect();
            out.push(Decoded::Malformed(ParseError::new(
                line,
                ParseErrorKind::TooLong(text.len()),
                &head,
            )));
            return;
        }
        self.feed_line_at(line, text.to_owned(), out);
    }

    fn feed_line_at(&mut self, line: u64, text: String, out: &mut Vec<Decoded>) {
        match &mut self.state {
            State::Detecting {
                lines,
                bytes,
                non_blank,
            } => {
                *bytes += text.len();
                if !text.trim().is_empty() {
                    *non_blank += 1;
                }
                lines.push((line, text));
                if *non_blank >= DETECT_LINES || *bytes >= DETECT_BYTES {
                    self.detect(out);
                }
            }
            State::Lines(dec) => dec.line(line, &text, out),
            State::Array(buf) => {
                buf.extend_from_slice(text.as_bytes());
                buf.push(b'\n');
            }
        }
    }

    /// Forces format detection with the lines held so far (when there is a non-blank one).
    /// Call it whenever the source is about to wait for input.
    pub fn flush(&mut self, out: &mut Vec<Decoded>) {
        if let State::Detecting { non_blank, .. } = &self.state
            && *non_blank > 0
        {
            self.detect(out);
        }
    }

    fn detect(&mut self, out: &mut Vec<Decoded>) {
        let State::Detecting { lines, .. } = &mut self.state else {
            return;
        };
        let lines = std::mem::take(lines);
        let mut head = Vec::new();
        for (_, l) in &lines {
            head.extend_from_slice(l.as_bytes());
            head.push(b'\n');
        }
        let format = import::detect(&head);
        self.detected = Some(format);
        if format == Format::RawpJsonArray {
            self.state = State::Array(head);
            return;
        }
        let mut dec: Box<dyn Decoder> = match (&self.path, format) {
            (Some(p), Format::ClaudeCode) => {
                Box::new(import::claude_code::ClaudeCodeDecoder::for_followed_file(p))
            }
            _ => import::decoder_for(format),
        };
        for (n, l) in lines {
            dec.line(n, &l, out);
        }
        self.state = State::Lines(dec);
    }

    /// The input ended: an unterminated last line counts as a line; pending records are emitted.
    pub fn finish(&mut self, out: &mut Vec<Decoded>) {
        if !self.partial.is_empty() || self.overlong.is_some() {
            self.end_line(out);
        }
        self.flush(out);
        match &mut self.state {
            State::Detecting { .. } => {}
            State::Lines(dec) => dec.finish(out),
            State::Array(buf) => {
                let buf = std::mem::take(buf);
                import::rawp::decode_array(&buf, out);
            }
        }
    }

    /// Drops an incomplete last line (the file it came from was truncated).
    pub fn discard_partial(&mut self) {
        self.partial.clear();
        self.overlong = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(items: &[Decoded]) -> Vec<u64> {
        items
            .iter()
            .filter_map(|d| match d {
                Decoded::Frame(f) => Some(f.origin.line),
                Decoded::Malformed(_) | Decoded::Finding(_) => None,
            })
            .collect()
    }

    const F: &str = r#"{"type":"agent.text.delta","payload":{"delta":"x"}}"#;

    #[test]
    fn half_line_waits_for_its_newline() {
        let mut d = LineDecoder::new(MAX_LINE_BYTES);
        let mut out = Vec::new();
        let (a, b) = F.split_at(10);
        d.feed_bytes(format!("{F}\n{a}").as_bytes(), &mut out);
        d.flush(&mut out);
        assert_eq!(d.take_detected(), Some(Format::RawpNdjson));
        assert_eq!(frames(&out), vec![1]);
        d.feed_bytes(format!("{b}\r\n").as_bytes(), &mut out);
        assert_eq!(frames(&out), vec![1, 2]);
        assert_eq!(d.pending_bytes(), 0);
    }

    #[test]
    fn overlong_line_is_malformed_and_reading_goes_on() {
        let mut d = LineDecoder::new(64);
        let mut out = Vec::new();
        let long = "x".repeat(100);
        d.feed_bytes(format!("{long}\n{F}\n").as_bytes(), &mut out);
        d.flush(&mut out);
        assert!(matches!(
            &out[0],
            Decoded::Malformed(ParseError {
                line: 1,
                kind: ParseErrorKind::TooLong(100),
                ..
            })
        ));
        // The second line is 52 bytes: under the cap.
        assert_eq!(frames(&out), vec![2]);
    }

    #[test]
    fn json_array_is_collected_until_the_end() {
        let mut d = LineDecoder::new(MAX_LINE_BYTES);
        let mut out = Vec::new();
        d.feed_bytes(format!("[\n{F},\n{F}\n]").as_bytes(), &mut out);
        d.flush(&mut out);
        assert!(out.is_empty());
        d.finish(&mut out);
        assert_eq!(frames(&out).len(), 2);
    }
}
