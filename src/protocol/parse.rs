//! JSON → [`Frame`]: the one lenient parsing layer for RAWP frames (SPEC 2).
//!
//! Who calls it: `crate::import` (RAWP NDJSON / JSON array input), the live sources, and the
//! session when it reads a line back from its file.
//!
//! One parser (issue 17; it replaced a hand-written fast reader and a reference one kept in
//! agreement by a test): the envelope rules here, the payloads as typed, borrowed serde structs
//! (`parse/wire.rs`) whose every field is read leniently. A line is read in one pass; the few
//! the pass leaves (invalid JSON, repeated keys, a non-object payload, …) are read as a `Value`
//! and go through the same envelope rules and structs ([`frame_from_value`]).
//!
//! Invariants: never panics; a line that is not a JSON object with a string `type` is a
//! [`ParseError`] carrying its line number and a short excerpt; everything else becomes a frame
//! (unknown types and fields are kept). A payload field of the wrong JSON type never costs the
//! frame: it is read as absent and listed in [`Frame::field_errors`] (its path, what SPEC 3
//! asks, what the line holds), which the reducer reports (`wrong-field-type`). Which of the two
//! readings read a line never shows in its frame (`tests/it/parse_oracle.rs`).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::model::{Body, Envelope, FieldError, Frame, FrameType, Origin, Timestamp};

mod wire;

use wire::PayloadSeed;

/// How many characters of a bad line a [`ParseError`] keeps.
pub const EXCERPT_CHARS: usize = 120;

/// Why a line could not become a frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseErrorKind {
    #[error("not valid JSON: {0}")]
    Json(String),
    #[error("not a JSON object")]
    NotObject,
    #[error("no string \"type\" field")]
    MissingType,
    #[error("line too long ({0} bytes)")]
    TooLong(usize),
    /// A YAML cassette (Anthropic API recordings) the YAML reader refused, e.g. an alias
    /// expansion bomb ("repetition limit exceeded"); it used to read "not valid JSON".
    #[error("not a readable YAML cassette: {0}")]
    Yaml(String),
}

/// A line that could not be read as a frame (a `malformed-line` finding).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {kind} — {excerpt}")]
pub struct ParseError {
    /// 1-based line number.
    pub line: u64,
    pub kind: ParseErrorKind,
    /// The first [`EXCERPT_CHARS`] characters of the line, control characters made visible.
    pub excerpt: String,
}

impl ParseError {
    /// Builds an error with an excerpt of `text`.
    pub fn new(line: u64, kind: ParseErrorKind, text: &str) -> Self {
        Self {
            line,
            kind,
            excerpt: excerpt(text),
        }
    }
}

/// The first [`EXCERPT_CHARS`] characters of `text`, with control and invisible format characters
/// (bidi overrides, zero-width) replaced by `�` so an excerpt can never drive or reorder a terminal.
pub fn excerpt(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(EXCERPT_CHARS)
        .map(|c| {
            if c.is_control() || crate::finding::is_invisible_format(c) {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect();
    if text.chars().nth(EXCERPT_CHARS).is_some() {
        out.push('…');
    }
    out
}

/// How [`parse_line_with`] reads a line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParseOptions {
    /// Do not build a `tool.invoke.result`'s `output`: validate it, keep a stand-in of its shape
    /// ([`crate::protocol::OutputShape::stand_in`]) and set `Origin::output_skipped`. Only for a
    /// reader whose session defers outputs to the file (`crate::source::file` into a session
    /// with a backing file): the session then reads the real output back from the line's span.
    /// `convert` never skips.
    pub skip_output: bool,
}

/// Parses one line of RAWP NDJSON. `line` is 1-based.
///
/// # Errors
/// [`ParseErrorKind::Json`] for invalid JSON, `NotObject` / `MissingType` for JSON that is not a
/// frame. A payload field of the wrong type is not an error: see [`parse_line_with`].
pub fn parse_line(line: u64, text: &str) -> Result<Frame, ParseError> {
    parse_line_with(line, text, &ParseOptions::default())
}

/// [`parse_line`] with options. The line is read in one pass with the typed, borrowed payload
/// structs of `parse/wire.rs` (no intermediate JSON tree). Each payload field of the wrong JSON
/// type is read as absent and listed in [`Frame::field_errors`] (SPEC 2 leniency; the reducer
/// makes one `wrong-field-type` finding of each). When that pass fails (bad JSON, a repeated key,
/// a payload that is not an object, `type` not a string, …) the line is read as a
/// `serde_json::Value` and goes through [`frame_from_value`]'s same rules and structs, so the
/// result does not depend on which pass read it, and an error is `serde_json`'s.
///
/// # Errors
/// As [`parse_line`].
pub fn parse_line_with(line: u64, text: &str, opts: &ParseOptions) -> Result<Frame, ParseError> {
    if let Some(f) = one_pass(line, text, opts.skip_output) {
        return Ok(f);
    }
    let value = serde_json::from_str::<Value>(text)
        .map_err(|e| ParseError::new(line, ParseErrorKind::Json(e.to_string()), text))?;
    frame_from_value_with(line, value, opts.skip_output)
        .map_err(|kind| ParseError::new(line, kind, text))
}

/// The one pass of [`parse_line_with`] alone: `None` where the line is read as a `Value` instead.
/// For the tests and benches that check the one pass reads every well-formed line.
#[doc(hidden)]
pub fn parse_line_one_pass(line: u64, text: &str, opts: &ParseOptions) -> Option<Frame> {
    one_pass(line, text, opts.skip_output)
}

/// Builds a frame from an already-parsed JSON value (one element of a JSON array, one WebSocket
/// message, …), with the rules of [`parse_line`].
///
/// # Errors
/// `NotObject` or `MissingType` when the value is not a frame.
pub fn frame_from_value(line: u64, value: Value) -> Result<Frame, ParseErrorKind> {
    frame_from_value_with(line, value, false)
}

fn frame_from_value_with(line: u64, value: Value, skip: bool) -> Result<Frame, ParseErrorKind> {
    let Value::Object(obj) = value else {
        return Err(ParseErrorKind::NotObject);
    };
    let mut top = Entries(obj.into_iter().map(|(k, v)| (Cow::Owned(k), v)).collect());
    let frame_type = match top.swap_remove("type") {
        Some(Value::String(s)) => FrameType::from_wire(&s),
        _ => return Err(ParseErrorKind::MissingType),
    };
    let payload = match top.swap_remove("payload") {
        Some(Value::Object(m)) => m,
        Some(Value::Null) | None => Map::new(),
        Some(other) => {
            let mut m = Map::new();
            m.insert("value".into(), other);
            m
        }
    };
    let metadata = top.metadata();
    let mut field_errors = Vec::new();
    let (body, skipped) = if is_typed(&frame_type) {
        let seed = PayloadSeed {
            frame_type: &frame_type,
            skip_output: skip,
        };
        if let Ok(read) = seed.deserialize(Value::Object(payload)) {
            read.into_body(&mut field_errors)
        } else {
            // Not reached: every field of the structs accepts any JSON value.
            field_errors.push(FieldError {
                field: "payload".into(),
                expected: "an object",
                found: "an object that could not be read",
                required: true,
            });
            (Body::Generic(Map::new()), false)
        }
    } else {
        (Body::Generic(payload), false)
    };
    Ok(Frame {
        frame_type,
        body,
        envelope: top.envelope(metadata),
        origin: Origin {
            line,
            span: None,
            output_skipped: skipped,
        },
        field_errors,
    })
}

/// Whether a frame type has a typed payload (the others are `Body::Generic`).
fn is_typed(t: &FrameType) -> bool {
    matches!(
        t,
        FrameType::ToolInvokeRequest
            | FrameType::ToolInvokeStream
            | FrameType::ToolInvokeResult
            | FrameType::ToolCatalogPublish
    )
}

/// A payload as read by [`PayloadSeed`], before its conversion to the model.
enum Read<'de> {
    Request(wire::Request<'de>),
    Stream(wire::Stream<'de>),
    Result(wire::ResultBody<'de, Value>),
    /// A result whose output was not built ([`ParseOptions::skip_output`]).
    Skipped(wire::ResultBody<'de, wire::Skipped>),
    Catalog(wire::Catalog<'de>),
    /// Any other type's payload.
    Value(Value),
}

impl Read<'_> {
    /// Whether an object the structs read holds [`RAW_VALUE_TOKEN`] as an unknown field.
    fn holds_token(&self) -> bool {
        match self {
            Read::Request(r) => r.holds_token(),
            Read::Stream(s) => s.holds_token(),
            Read::Result(r) => r.holds_token(),
            Read::Skipped(r) => r.holds_token(),
            Read::Catalog(c) => c.holds_token(),
            Read::Value(_) => false,
        }
    }

    /// The body, and whether a result's output was skipped.
    fn into_body(self, errors: &mut Vec<FieldError>) -> (Body, bool) {
        match self {
            Read::Request(r) => (Body::Request(r.into_model(errors)), false),
            Read::Stream(s) => (Body::Stream(s.into_model(errors)), false),
            Read::Result(r) => (Body::Result(r.into_model(errors)), false),
            Read::Skipped(r) => {
                let r = r.into_model(errors);
                let skipped = r.output.is_some();
                (Body::Result(r), skipped)
            }
            Read::Catalog(c) => (Body::Catalog(c.into_model(errors)), false),
            Read::Value(v) => (
                Body::Generic(match v {
                    Value::Object(m) => m,
                    Value::Null => Map::new(),
                    other => {
                        let mut m = Map::new();
                        m.insert("value".into(), other);
                        m
                    }
                }),
                false,
            ),
        }
    }
}

/// The key `serde_json` (feature `raw_value`, enabled in our dependency tree) treats specially
/// when it is the first key of an object read as a `Value`. Nested values are `Value`s in both
/// readings; where the one pass reads an object itself (the frame, a typed payload, a catalog
/// entry) and meets the key, it leaves the line to the `Value` reading.
pub(super) const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// A payload read on its own (when `type` came after it) gets one more level of `serde_json`'s
/// recursion limit (128) than inside the line: one this deep is left to the `Value` reading.
const DEEP_PAYLOAD: usize = 120;

/// The one-pass reading of [`parse_line_with`]; `None` where the `Value` reading decides.
fn one_pass(line: u64, text: &str, skip_output: bool) -> Option<Frame> {
    let mut de = serde_json::Deserializer::from_str(text);
    let top = de.deserialize_map(TopVisitor { skip_output }).ok()?;
    de.end().ok()?;
    let Top {
        mut entries,
        frame_type,
        payload,
    } = top;
    let frame_type = frame_type?;
    entries.swap_remove("type");
    let read = match payload {
        None => None,
        Some(Payload::Read(r)) => Some(r),
        Some(Payload::Raw(raw)) => {
            if nesting(raw.get()) >= DEEP_PAYLOAD {
                return None;
            }
            let mut de = serde_json::Deserializer::from_str(raw.get());
            let seed = PayloadSeed {
                frame_type: &frame_type,
                skip_output,
            };
            let r = seed.deserialize(&mut de).ok()?;
            de.end().ok()?;
            Some(r)
        }
    };
    if read.as_ref().is_some_and(Read::holds_token) {
        return None;
    }
    if read.is_some() {
        entries.swap_remove("payload");
    }
    let metadata = entries.metadata();
    let mut field_errors = Vec::new();
    // No payload: the body of an empty one (a typed frame's defaults).
    let read = match read {
        Some(r) => r,
        None => PayloadSeed {
            frame_type: &frame_type,
            skip_output,
        }
        .deserialize(Value::Object(Map::new()))
        .ok()?,
    };
    let (body, skipped) = read.into_body(&mut field_errors);
    Some(Frame {
        frame_type,
        body,
        envelope: entries.envelope(metadata),
        origin: Origin {
            line,
            span: None,
            output_skipped: skipped,
        },
        field_errors,
    })
}

/// The top-level object, in key order. `type` and `payload` hold placeholders in `entries`
/// (their values are in the other fields) so that the envelope's removals see the line's order.
struct Top<'de> {
    entries: Entries<'de>,
    frame_type: Option<FrameType>,
    payload: Option<Payload<'de>>,
}

/// The `payload` value: read typed when `type` came first, else kept as raw text.
// One per line, on the stack: boxing `Read` would cost an allocation per frame.
#[allow(clippy::large_enum_variant)]
enum Payload<'de> {
    Raw(&'de RawValue),
    Read(Read<'de>),
}

struct TopVisitor {
    skip_output: bool,
}

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a frame object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut top = Top {
            entries: Entries(Vec::with_capacity(8)),
            frame_type: None,
            payload: None,
        };
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if top.entries.0.is_empty() && key == RAW_VALUE_TOKEN {
                return Err(de::Error::custom("raw value token"));
            }
            // A repeated key: the `Value` reading keeps the last value at the first position.
            if top.entries.position(&key).is_some() {
                return Err(de::Error::custom("repeated key"));
            }
            match key.as_ref() {
                "type" => {
                    let t = map.next_value::<Cow<'de, str>>()?;
                    top.frame_type = Some(FrameType::from_wire(&t));
                    top.entries.0.push((key, Value::Null));
                }
                "payload" => {
                    let p = match &top.frame_type {
                        Some(t) => Payload::Read(map.next_value_seed(PayloadSeed {
                            frame_type: t,
                            skip_output: self.skip_output,
                        })?),
                        None => Payload::Raw(map.next_value::<&'de RawValue>()?),
                    };
                    top.payload = Some(p);
                    top.entries.0.push((key, Value::Null));
                }
                _ => {
                    let v = map.next_value::<Value>()?;
                    top.entries.0.push((key, v));
                }
            }
        }
        Ok(top)
    }
}

/// Deepest bracket nesting of a JSON text (strings skipped).
fn nesting(json: &str) -> usize {
    let (mut depth, mut max, mut in_str, mut escaped) = (0usize, 0usize, false, false);
    for &b in json.as_bytes() {
        if in_str {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_str = false;
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' | b'[' => {
                depth += 1;
                max = max.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// The top-level entries of a frame in key order, removed from as `serde_json::Map::remove`
/// does under `preserve_order` (a swap-remove), so the fields left in `Envelope::extra` keep the
/// order they always had.
struct Entries<'de>(Vec<(Cow<'de, str>, Value)>);

impl Entries<'_> {
    fn position(&self, key: &str) -> Option<usize> {
        self.0.iter().position(|(k, _)| k == key)
    }

    fn swap_remove(&mut self, key: &str) -> Option<Value> {
        let i = self.position(key)?;
        Some(self.0.swap_remove(i).1)
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.position(key).map(|i| &self.0[i].1)
    }

    /// `metadata` when it is an object (`null` or absent: empty); any other value stays an
    /// unknown field, moved to the end.
    fn metadata(&mut self) -> Map<String, Value> {
        match self.swap_remove("metadata") {
            Some(Value::Object(m)) => m,
            Some(Value::Null) | None => Map::new(),
            Some(other) => {
                self.0.push((Cow::Borrowed("metadata"), other));
                Map::new()
            }
        }
    }

    /// The first of `keys` holding a string, at the top level (removed) or in `metadata`.
    fn take_str(&mut self, meta: &Map<String, Value>, keys: &[&str]) -> Option<String> {
        for k in keys {
            if let Some(Value::String(_)) = self.get(k) {
                return match self.swap_remove(k) {
                    Some(Value::String(s)) => Some(s),
                    _ => None,
                };
            }
            if let Some(Value::String(s)) = meta.get(*k) {
                return Some(s.clone());
            }
        }
        None
    }

    /// The first of `keys` that `read` accepts, at the top level (removed) or in `metadata`.
    fn take_first<T>(
        &mut self,
        meta: &Map<String, Value>,
        keys: &[&str],
        read: impl Fn(&Value) -> Option<T>,
    ) -> Option<T> {
        for k in keys {
            if let Some(t) = self.get(k).and_then(&read) {
                self.swap_remove(k);
                return Some(t);
            }
            if let Some(t) = meta.get(*k).and_then(&read) {
                return Some(t);
            }
        }
        None
    }

    /// The envelope (SPEC 2, [ours]): top level before `metadata`, the first matching key;
    /// values that do not fit stay in `extra`.
    fn envelope(mut self, metadata: Map<String, Value>) -> Envelope {
        let id = self.take_str(&metadata, &["id", "frame_id"]);
        let session_id = self.take_str(&metadata, &["session_id"]);
        let seq = self.take_first(&metadata, &["seq", "sequence"], Value::as_u64);
        let timestamp = self.take_first(&metadata, &["timestamp", "ts"], Timestamp::from_json);
        let mut extra = Map::new();
        for (k, v) in self.0 {
            extra.insert(k.into_owned(), v);
        }
        Envelope {
            id,
            session_id,
            seq,
            timestamp,
            metadata,
            extra,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::model::{ResultStatus, StreamType};

    #[test]
    fn parses_request_with_envelope_in_metadata() {
        let f = parse_line(
            3,
            r#"{"type":"tool.invoke.request","payload":{"invocation_id":"a","tool_name":"Bash","input":{"command":"ls"},"x":1},"metadata":{"seq":7,"timestamp":"2025-01-01T00:00:01Z"}}"#,
        )
        .unwrap();
        assert_eq!(f.origin.line, 3);
        assert_eq!(f.envelope.seq, Some(7));
        assert_eq!(f.envelope.timestamp, Some(Timestamp(1_735_689_601_000)));
        let Body::Request(r) = &f.body else {
            panic!("not a request: {f:?}")
        };
        assert_eq!(r.tool_name.as_deref(), Some("Bash"));
        assert_eq!(r.extra.get("x"), Some(&Value::from(1)));
    }

    #[test]
    fn unknown_enum_values_are_kept() {
        let f = parse_line(
            1,
            r#"{"type":"tool.invoke.stream","payload":{"invocation_id":"a","tool_name":"Bash","stream_type":"stdnet","chunk":"x","sequence":0}}"#,
        )
        .unwrap();
        let Body::Stream(s) = &f.body else { panic!() };
        assert_eq!(s.stream_type, Some(StreamType::Unknown("stdnet".into())));
        let f = parse_line(
            1,
            r#"{"type":"tool.invoke.result","payload":{"status":"success"}}"#,
        )
        .unwrap();
        let Body::Result(r) = &f.body else { panic!() };
        assert_eq!(r.status, Some(ResultStatus::Success));
        assert_eq!(r.output, None);
    }

    #[test]
    fn a_field_of_the_wrong_type_is_absent_and_listed() {
        let text = r#"{"type":"tool.invoke.request","payload":{"invocation_id":5,"tool_name":"Bash","input":{}}}"#;
        let f = parse_line(1, text).unwrap();
        let Body::Request(r) = &f.body else {
            panic!("not a request: {f:?}")
        };
        assert_eq!(r.invocation_id, None);
        assert_eq!(r.tool_name.as_deref(), Some("Bash"));
        assert_eq!(
            f.field_errors,
            [FieldError {
                field: "invocation_id".into(),
                expected: "a string",
                found: "a number",
                required: true,
            }]
        );
        // The `Value` reading (a repeated key sends the line there) gives the same frame.
        let v: Value = serde_json::from_str(text).unwrap();
        assert_eq!(frame_from_value(1, v).unwrap(), f);
        let repeated = r#"{"type":"tool.invoke.request","payload":{"invocation_id":5,"tool_name":"x","tool_name":"Bash","input":{}}}"#;
        assert_eq!(parse_line(1, repeated).unwrap(), f);
    }

    #[test]
    fn bad_lines_carry_line_and_excerpt() {
        let e = parse_line(9, "{not json\u{1b}[31m").unwrap_err();
        assert_eq!(e.line, 9);
        assert!(matches!(e.kind, ParseErrorKind::Json(_)));
        assert!(!e.excerpt.contains('\u{1b}'));
        assert_eq!(
            parse_line(2, "[1]").unwrap_err().kind,
            ParseErrorKind::NotObject
        );
        assert_eq!(
            parse_line(2, r#"{"payload":{}}"#).unwrap_err().kind,
            ParseErrorKind::MissingType
        );
    }

    #[test]
    fn round_trips_unknown_type_and_fields() {
        let f = parse_line(1, r#"{"type":"x.y","payload":{"a":1},"extra":true}"#).unwrap();
        assert_eq!(f.frame_type, FrameType::Unknown("x.y".into()));
        let v = f.to_json();
        assert_eq!(v["type"], "x.y");
        assert_eq!(v["payload"]["a"], 1);
        assert_eq!(v["extra"], true);
    }
}
