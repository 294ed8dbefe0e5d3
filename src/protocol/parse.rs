//! JSON → [`Frame`]: the one lenient parsing layer for RAWP frames (SPEC 2).
//!
//! Who calls it: `crate::import` (RAWP NDJSON / JSON array input) and the live sources.
//! Invariants: never panics; a line that is not a JSON object with a string `type` is a
//! [`ParseError`] carrying its line number and a short excerpt; everything else becomes a frame
//! (unknown types and fields are kept).

use serde_json::{Map, Value};

use super::model::{Body, Envelope, Frame, FrameType, Origin, Timestamp};

mod fast;

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
/// frame.
pub fn parse_line(line: u64, text: &str) -> Result<Frame, ParseError> {
    parse_line_with(line, text, &ParseOptions::default())
}

/// [`parse_line`] with options. The line is read in one pass without an intermediate JSON tree
/// (`parse/fast.rs`); whatever that pass cannot decide exactly as [`parse_line_value`] does
/// (bad JSON, a payload of the wrong shape, repeated top-level keys, …) is read again by
/// [`parse_line_value`], so the result is always the reference's (with `skip_output`: but for
/// the output, see [`ParseOptions`]).
///
/// # Errors
/// As [`parse_line`].
pub fn parse_line_with(line: u64, text: &str, opts: &ParseOptions) -> Result<Frame, ParseError> {
    match fast::frame(line, text, opts.skip_output) {
        Some(f) => Ok(f),
        None => parse_line_value(line, text),
    }
}

/// The one-pass reading alone: `None` where [`parse_line_with`] falls back to
/// [`parse_line_value`]. For tests and benches that check the fast path is taken.
#[doc(hidden)]
pub fn parse_line_fast(line: u64, text: &str, opts: &ParseOptions) -> Option<Frame> {
    fast::frame(line, text, opts.skip_output)
}

/// The reference reading of a line: a `serde_json::Value` tree first, then [`frame_from_value`]'s
/// rules. Slower than [`parse_line`] (which gives the same results); kept as its fallback and as
/// the yardstick its tests compare against.
///
/// # Errors
/// As [`parse_line`].
pub fn parse_line_value(line: u64, text: &str) -> Result<Frame, ParseError> {
    let json = || {
        serde_json::from_str::<Value>(text)
            .map_err(|e| ParseError::new(line, ParseErrorKind::Json(e.to_string()), text))
    };
    let (frame_type, payload, envelope) =
        split(json()?).map_err(|kind| ParseError::new(line, kind, text))?;
    // The payload moves into its typed shape without a copy; when that read fails (rare), the
    // line is parsed again so the payload can be kept generic beside the error.
    match typed_body(&frame_type, payload) {
        Some(body) => Ok(Frame {
            frame_type,
            body,
            envelope,
            origin: Origin::at(line),
            shape_error: None,
        }),
        None => frame_from_value(line, json()?).map_err(|kind| ParseError::new(line, kind, text)),
    }
}

/// Builds a frame from an already-parsed JSON value (one element of a JSON array, one WebSocket
/// message, …).
///
/// # Errors
/// `NotObject` or `MissingType` when the value is not a frame.
pub fn frame_from_value(line: u64, value: Value) -> Result<Frame, ParseErrorKind> {
    let (frame_type, payload, envelope) = split(value)?;
    let (body, shape_error) = body_from(&frame_type, payload);
    Ok(Frame {
        frame_type,
        body,
        envelope,
        origin: Origin::at(line),
        shape_error,
    })
}

/// A frame object → its type, payload and envelope.
fn split(value: Value) -> Result<(FrameType, Map<String, Value>, Envelope), ParseErrorKind> {
    let Value::Object(mut obj) = value else {
        return Err(ParseErrorKind::NotObject);
    };
    let frame_type = match obj.remove("type") {
        Some(Value::String(s)) => FrameType::from_wire(&s),
        Some(other) => {
            obj.insert("type".into(), other);
            return Err(ParseErrorKind::MissingType);
        }
        None => return Err(ParseErrorKind::MissingType),
    };
    let payload = match obj.remove("payload") {
        Some(Value::Object(m)) => m,
        Some(Value::Null) | None => Map::new(),
        Some(other) => {
            let mut m = Map::new();
            m.insert("value".into(), other);
            m
        }
    };
    let metadata = match obj.remove("metadata") {
        Some(Value::Object(m)) => m,
        Some(Value::Null) | None => Map::new(),
        Some(other) => {
            obj.insert("metadata".into(), other);
            Map::new()
        }
    };
    let envelope = envelope_from(obj, metadata);
    Ok((frame_type, payload, envelope))
}

fn take_str(
    obj: &mut Map<String, Value>,
    meta: &Map<String, Value>,
    keys: &[&str],
) -> Option<String> {
    for k in keys {
        if let Some(Value::String(s)) = obj.get(*k) {
            let s = s.clone();
            obj.remove(*k);
            return Some(s);
        }
        if let Some(Value::String(s)) = meta.get(*k) {
            return Some(s.clone());
        }
    }
    None
}

fn envelope_from(mut obj: Map<String, Value>, metadata: Map<String, Value>) -> Envelope {
    let id = take_str(&mut obj, &metadata, &["id", "frame_id"]);
    let session_id = take_str(&mut obj, &metadata, &["session_id"]);
    let mut seq = None;
    for k in ["seq", "sequence"] {
        if let Some(n) = obj.get(k).and_then(Value::as_u64) {
            seq = Some(n);
            obj.remove(k);
            break;
        }
        if let Some(n) = metadata.get(k).and_then(Value::as_u64) {
            seq = Some(n);
            break;
        }
    }
    let mut timestamp = None;
    for k in ["timestamp", "ts"] {
        if let Some(t) = obj.get(k).and_then(Timestamp::from_json) {
            timestamp = Some(t);
            obj.remove(k);
            break;
        }
        if let Some(t) = metadata.get(k).and_then(Timestamp::from_json) {
            timestamp = Some(t);
            break;
        }
    }
    Envelope {
        id,
        session_id,
        seq,
        timestamp,
        metadata,
        extra: obj,
    }
}

/// The typed body without copying the payload; `None` when a typed read fails (the payload is
/// consumed: the caller re-reads it with [`body_from`]).
fn typed_body(frame_type: &FrameType, payload: Map<String, Value>) -> Option<Body> {
    fn typed<T: serde::de::DeserializeOwned>(
        payload: Map<String, Value>,
        wrap: fn(T) -> Body,
    ) -> Option<Body> {
        serde_json::from_value::<T>(Value::Object(payload))
            .ok()
            .map(wrap)
    }
    match frame_type {
        FrameType::ToolInvokeRequest => typed(payload, Body::Request),
        FrameType::ToolInvokeStream => typed(payload, Body::Stream),
        FrameType::ToolInvokeResult => typed(payload, Body::Result),
        FrameType::ToolCatalogPublish => typed(payload, Body::Catalog),
        // Every other type (and any added later) is decided by `body_from`, which is exhaustive.
        other => Some(body_from(other, payload).0),
    }
}

/// A payload map → its body for `frame_type`, with the typed read's error (and the payload kept
/// generic) when it does not fit.
pub fn body_from(frame_type: &FrameType, payload: Map<String, Value>) -> (Body, Option<String>) {
    fn typed<T: serde::de::DeserializeOwned>(
        payload: Map<String, Value>,
        wrap: fn(T) -> Body,
    ) -> (Body, Option<String>) {
        // Cloning keeps the generic payload available when the typed read fails; the common
        // (successful) path pays one clone of the payload.
        match serde_json::from_value::<T>(Value::Object(payload.clone())) {
            Ok(t) => (wrap(t), None),
            Err(e) => (Body::Generic(payload), Some(e.to_string())),
        }
    }
    match frame_type {
        FrameType::ToolInvokeRequest => typed(payload, Body::Request),
        FrameType::ToolInvokeStream => typed(payload, Body::Stream),
        FrameType::ToolInvokeResult => typed(payload, Body::Result),
        FrameType::ToolCatalogPublish => typed(payload, Body::Catalog),
        FrameType::AgentTextDelta
        | FrameType::AgentTextDone
        | FrameType::AgentThinkingDelta
        | FrameType::AgentThinkingDone
        | FrameType::AgentInteractionRequest
        | FrameType::AgentError
        | FrameType::AgentFileTransfer
        | FrameType::AgentStateChanged
        | FrameType::SessionTurnEnd
        | FrameType::SessionCompacted
        | FrameType::SessionUsage
        | FrameType::SessionError
        | FrameType::ControlPromptRequest
        | FrameType::ControlSessionCompact
        | FrameType::ControlModeSwitch
        | FrameType::Unknown(_) => (Body::Generic(payload), None),
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
    fn shape_mismatch_is_kept_generic() {
        let f = parse_line(
            1,
            r#"{"type":"tool.invoke.request","payload":{"invocation_id":5}}"#,
        )
        .unwrap();
        let Body::Generic(payload) = &f.body else {
            panic!("not generic: {f:?}")
        };
        assert_eq!(payload.get("invocation_id"), Some(&Value::from(5)));
        assert!(f.shape_error.is_some());
        // The fast path (no payload copy) and the value path agree, in both outcomes.
        for text in [
            r#"{"type":"tool.invoke.request","payload":{"invocation_id":5}}"#,
            r#"{"type":"tool.invoke.result","payload":{"invocation_id":"a","status":"success","output":{"k":[1,"x"]}}}"#,
        ] {
            let v: Value = serde_json::from_str(text).unwrap();
            assert_eq!(
                parse_line(2, text).unwrap(),
                frame_from_value(2, v).unwrap()
            );
        }
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
