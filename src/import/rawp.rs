//! RAWP NDJSON and JSON-array input (SPEC 2): the identity mapping.
//!
//! Who calls it: `crate::import` for files, stdin and network messages.
//! Invariants: blank lines are skipped; a bad line is a `Decoded::Malformed` with its line number;
//! reading always goes on.

use serde_json::Value;

use super::{Decoded, Decoder};
use crate::protocol::{
    ParseError, ParseErrorKind, ParseOptions, frame_from_value, parse_line_with,
};

/// Stateless RAWP NDJSON decoder.
#[derive(Debug, Default)]
pub struct RawpDecoder;

impl Decoder for RawpDecoder {
    fn line(&mut self, line: u64, text: &str, out: &mut Vec<Decoded>) {
        decode_line(line, text, &ParseOptions::default(), out);
    }

    fn finish(&mut self, _out: &mut Vec<Decoded>) {}

    fn fork(&self) -> Option<Box<dyn Decoder>> {
        Some(Box::new(Self))
    }
}

/// One RAWP NDJSON line (`RawpDecoder::line` with parse options; the file reader skips deferred
/// outputs with it). A blank line gives nothing.
pub fn decode_line(line: u64, text: &str, opts: &ParseOptions, out: &mut Vec<Decoded>) {
    if text.trim().is_empty() {
        return;
    }
    out.push(match parse_line_with(line, text, opts) {
        Ok(f) => Decoded::frame(f),
        Err(e) => Decoded::Malformed(e),
    });
}

/// Decodes a JSON array of frames. Element `i` gets "line" `i + 1`.
pub fn decode_array(bytes: &[u8], out: &mut Vec<Decoded>) {
    let text = String::from_utf8_lossy(bytes);
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Array(items)) => {
            for (i, v) in items.into_iter().enumerate() {
                let line = i as u64 + 1;
                match frame_from_value(line, v.clone()) {
                    Ok(f) => out.push(Decoded::frame(f)),
                    Err(kind) => out.push(Decoded::Malformed(ParseError::new(
                        line,
                        kind,
                        &v.to_string(),
                    ))),
                }
            }
        }
        Ok(_) => out.push(Decoded::Malformed(ParseError::new(
            1,
            ParseErrorKind::NotObject,
            &text,
        ))),
        Err(e) => out.push(Decoded::Malformed(ParseError::new(
            e.line() as u64,
            ParseErrorKind::Json(e.to_string()),
            &text,
        ))),
    }
}
