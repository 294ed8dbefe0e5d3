//! The fast path of [`super::parse_line_with`]: one RAWP NDJSON line → [`Frame`] in a single pass
//! over the text, with no intermediate `serde_json::Value` for the frame or a typed payload.
//!
//! Who calls it: `super::parse_line_with` only. It returns `None` whenever its result could differ
//! from the reference path (`from_str::<Value>` then `super::frame_from_value`): invalid JSON, a
//! payload field of the wrong type, a non-object typed payload, a repeated top-level key, serde
//! JSON's private raw-value key, a payload nested near the recursion limit. The caller then runs
//! the reference path, which gives the error or the `shape_error` exactly as before.
//!
//! Invariants (pinned by `tests/it/parse_fast.rs` against the reference path, line by line):
//! * Same frame: the top-level keys fill the envelope with the reference's rules (top level
//!   before `metadata`, first matching key, non-matching values left in `extra`) and `extra` keeps
//!   the reference's key order, which `serde_json::Map::remove` (a swap-remove under
//!   `preserve_order`) perturbs in a fixed way that is replayed here.
//! * Payload fields are typed as they are read (borrowed keys, no copies); unknown ones go to
//!   `extra` as `Value`s built exactly as the reference builds them. A repeated payload key keeps
//!   the last value and the first position, like `Map::insert`.
//! * Nested values (`input`, `output`, `metadata`, unknown fields, generic payloads) are
//!   `Value`s deserialized by `serde_json` itself, so they equal the reference's.
//! * With `skip_output`, a result's `output` is fully validated (strings unescaped, numbers
//!   parsed, like a real parse) but not built: the frame holds [`OutputShape::stand_in`] and
//!   `Origin::output_skipped` is set.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::super::model::{
    Body, Envelope, Frame, FrameType, Origin, OutputShape, OutputType, ResultStatus, StreamType,
    Timestamp, ToolInvokeRequest, ToolInvokeResult, ToolInvokeStream,
};
use super::body_from;

/// The key `serde_json` (feature `raw_value`, enabled in our dependency tree) treats specially
/// when it is the first key of an object read as a `Value`; the fast path leaves such objects to
/// the reference path.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// A payload that nests this deep (or deeper) is left to the reference path: read on its own
/// (when `type` came after it) it would get one more level of `serde_json`'s recursion limit
/// (128) than inside the line.
const DEEP_PAYLOAD: usize = 120;

/// Parses `text` as one frame, or `None` when the reference path must decide (see module doc).
pub(super) fn frame(line: u64, text: &str, skip_output: bool) -> Option<Frame> {
    let mut de = serde_json::Deserializer::from_str(text);
    let top = de.deserialize_map(TopVisitor { skip_output }).ok()?;
    de.end().ok()?;
    top.into_frame(line, skip_output)
}

/// A string, borrowed from the line when it has no escapes.
struct CowStr<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for CowStr<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(CowStrVisitor).map(CowStr)
    }
}

struct CowStrVisitor;

impl<'de> Visitor<'de> for CowStrVisitor {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// Reads the next key of `map`; an error for `serde_json`'s raw-value token as the first key.
fn next_key<'de, A: MapAccess<'de>>(
    map: &mut A,
    first: &mut bool,
) -> Result<Option<Cow<'de, str>>, A::Error> {
    let key = map.next_key::<CowStr<'de>>()?.map(|k| k.0);
    if std::mem::take(first) && key.as_deref() == Some(RAW_VALUE_TOKEN) {
        return Err(de::Error::custom("raw value token"));
    }
    Ok(key)
}

/// The top-level object, in key order. `type` and `payload` hold placeholders here (their values
/// are in the other fields) so the reference's swap-removes can be replayed on the same order.
struct Top<'de> {
    entries: Vec<(Cow<'de, str>, Value)>,
    frame_type: Option<FrameType>,
    payload: Option<Payload<'de>>,
}

/// The `payload` value: read typed when `type` came first, else kept as raw text.
// One per line, on the stack: boxing `Read` would cost an allocation per frame.
#[allow(clippy::large_enum_variant)]
enum Payload<'de> {
    Raw(&'de RawValue),
    Read(Read),
}

/// A payload read with its frame type known.
enum Read {
    Request(ToolInvokeRequest),
    Stream(ToolInvokeStream),
    Result(ToolInvokeResult, bool),
    /// Any other type: the payload as the reference reads it (`body_from` decides the body).
    Value(Value),
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
            entries: Vec::with_capacity(8),
            frame_type: None,
            payload: None,
        };
        let mut first = true;
        while let Some(key) = next_key(&mut map, &mut first)? {
            // A repeated key: the reference keeps the last value at the first position; rare
            // enough to leave to it.
            if top.entries.iter().any(|(k, _)| *k == key) {
                return Err(de::Error::custom("repeated key"));
            }
            match key.as_ref() {
                "type" => {
                    let t = map.next_value::<CowStr<'de>>()?;
                    top.frame_type = Some(FrameType::from_wire(&t.0));
                    top.entries.push((key, Value::Null));
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
                    top.entries.push((key, Value::Null));
                }
                _ => {
                    let v = map.next_value::<Value>()?;
                    top.entries.push((key, v));
                }
            }
        }
        Ok(top)
    }
}

impl Top<'_> {
    /// Replays the reference's `split` + `envelope_from` on the key order read.
    fn into_frame(mut self, line: u64, skip_output: bool) -> Option<Frame> {
        let frame_type = self.frame_type.take()?;
        self.swap_remove("type")?;
        let read = match self.payload.take() {
            None => None,
            Some(Payload::Read(r)) => Some(r),
            Some(Payload::Raw(raw)) => {
                if nesting(raw.get()) >= DEEP_PAYLOAD {
                    return None;
                }
                let mut de = serde_json::Deserializer::from_str(raw.get());
                let r = PayloadSeed {
                    frame_type: &frame_type,
                    skip_output,
                }
                .deserialize(&mut de)
                .ok()?;
                de.end().ok()?;
                Some(r)
            }
        };
        if read.is_some() {
            self.swap_remove("payload")?;
        }
        let metadata = match self.swap_remove("metadata") {
            Some(Value::Object(m)) => m,
            Some(Value::Null) | None => Map::new(),
            Some(other) => {
                self.entries.push((Cow::Borrowed("metadata"), other));
                Map::new()
            }
        };
        let (body, shape_error, skipped) = match read {
            Some(Read::Request(r)) => (Body::Request(r), None, false),
            Some(Read::Stream(s)) => (Body::Stream(s), None, false),
            Some(Read::Result(r, skipped)) => (Body::Result(r), None, skipped),
            Some(Read::Value(v)) => {
                let payload = match v {
                    Value::Object(m) => m,
                    Value::Null => Map::new(),
                    other => {
                        let mut m = Map::new();
                        m.insert("value".into(), other);
                        m
                    }
                };
                let (body, e) = body_from(&frame_type, payload);
                (body, e, false)
            }
            None => {
                let (body, e) = body_from(&frame_type, Map::new());
                (body, e, false)
            }
        };
        let envelope = self.envelope(metadata);
        Some(Frame {
            frame_type,
            body,
            envelope,
            origin: Origin {
                line,
                span: None,
                output_skipped: skipped,
            },
            shape_error,
        })
    }

    fn position(&self, key: &str) -> Option<usize> {
        self.entries.iter().position(|(k, _)| k == key)
    }

    /// `IndexMap::swap_remove`: the last entry takes the removed one's place.
    fn swap_remove(&mut self, key: &str) -> Option<Value> {
        let i = self.position(key)?;
        Some(self.entries.swap_remove(i).1)
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.position(key).map(|i| &self.entries[i].1)
    }

    /// The reference's `take_str`.
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

    /// The reference's `envelope_from`.
    fn envelope(mut self, metadata: Map<String, Value>) -> Envelope {
        let id = self.take_str(&metadata, &["id", "frame_id"]);
        let session_id = self.take_str(&metadata, &["session_id"]);
        let mut seq = None;
        for k in ["seq", "sequence"] {
            if let Some(n) = self.get(k).and_then(Value::as_u64) {
                seq = Some(n);
                self.swap_remove(k);
                break;
            }
            if let Some(n) = metadata.get(k).and_then(Value::as_u64) {
                seq = Some(n);
                break;
            }
        }
        let mut timestamp = None;
        for k in ["timestamp", "ts"] {
            if let Some(t) = self.get(k).and_then(Timestamp::from_json) {
                timestamp = Some(t);
                self.swap_remove(k);
                break;
            }
            if let Some(t) = metadata.get(k).and_then(Timestamp::from_json) {
                timestamp = Some(t);
                break;
            }
        }
        let mut extra = Map::new();
        for (k, v) in self.entries {
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

/// Reads a payload for a known frame type.
struct PayloadSeed<'a> {
    frame_type: &'a FrameType,
    skip_output: bool,
}

impl<'de> DeserializeSeed<'de> for PayloadSeed<'_> {
    type Value = Read;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Read, D::Error> {
        match self.frame_type {
            FrameType::ToolInvokeRequest => d.deserialize_any(RequestVisitor).map(Read::Request),
            FrameType::ToolInvokeStream => d.deserialize_any(StreamVisitor).map(Read::Stream),
            FrameType::ToolInvokeResult => d
                .deserialize_any(ResultVisitor {
                    skip_output: self.skip_output,
                })
                .map(|(r, skipped)| Read::Result(r, skipped)),
            FrameType::ToolCatalogPublish
            | FrameType::AgentTextDelta
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
            | FrameType::Unknown(_) => de::Deserialize::deserialize(d).map(Read::Value),
        }
    }
}

/// An optional wire enum read from a borrowed string (`null` → `None`).
fn wire<'de, A: MapAccess<'de>, T>(
    map: &mut A,
    from: fn(&str) -> T,
) -> Result<Option<T>, A::Error> {
    Ok(map.next_value::<Option<CowStr<'de>>>()?.map(|s| from(&s.0)))
}

/// Declares the `expecting` and `null` (→ the default payload, as the reference reads `null`)
/// parts of a typed payload visitor.
macro_rules! payload_common {
    ($name:literal) => {
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str($name)
        }

        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    };
}

struct RequestVisitor;

impl<'de> Visitor<'de> for RequestVisitor {
    type Value = ToolInvokeRequest;

    payload_common!("a tool.invoke.request payload");

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut r = ToolInvokeRequest::default();
        let mut first = true;
        while let Some(key) = next_key(&mut map, &mut first)? {
            match key.as_ref() {
                "invocation_id" => r.invocation_id = map.next_value()?,
                "tool_name" => r.tool_name = map.next_value()?,
                "tool_version" => r.tool_version = map.next_value()?,
                "input" => r.input = map.next_value()?,
                "parallel_group_id" => r.parallel_group_id = map.next_value()?,
                _ => {
                    let v = map.next_value::<Value>()?;
                    r.extra.insert(key.into_owned(), v);
                }
            }
        }
        Ok(r)
    }
}

struct StreamVisitor;

impl<'de> Visitor<'de> for StreamVisitor {
    type Value = ToolInvokeStream;

    payload_common!("a tool.invoke.stream payload");

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut s = ToolInvokeStream::default();
        let mut first = true;
        while let Some(key) = next_key(&mut map, &mut first)? {
            match key.as_ref() {
                "invocation_id" => s.invocation_id = map.next_value()?,
                "tool_name" => s.tool_name = map.next_value()?,
                "stream_type" => s.stream_type = wire(&mut map, StreamType::from_wire)?,
                "chunk" => s.chunk = map.next_value()?,
                "sequence" => s.sequence = map.next_value()?,
                _ => {
                    let v = map.next_value::<Value>()?;
                    s.extra.insert(key.into_owned(), v);
                }
            }
        }
        Ok(s)
    }
}

struct ResultVisitor {
    skip_output: bool,
}

impl<'de> Visitor<'de> for ResultVisitor {
    /// The payload, and whether its output was skipped.
    type Value = (ToolInvokeResult, bool);

    payload_common!("a tool.invoke.result payload");

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut r = ToolInvokeResult::default();
        let mut skipped = false;
        let mut first = true;
        while let Some(key) = next_key(&mut map, &mut first)? {
            match key.as_ref() {
                "invocation_id" => r.invocation_id = map.next_value()?,
                "tool_name" => r.tool_name = map.next_value()?,
                "status" => r.status = wire(&mut map, ResultStatus::from_wire)?,
                "output" if self.skip_output => {
                    r.output = Some(map.next_value_seed(ShapeSeed)?.stand_in());
                    skipped = true;
                }
                // Present, even `null`: `Some` (the model's `present`).
                "output" => r.output = Some(map.next_value::<Value>()?),
                "output_type" => r.output_type = wire(&mut map, OutputType::from_wire)?,
                "duration_ms" => r.duration_ms = map.next_value()?,
                "truncated" => r.truncated = map.next_value()?,
                _ => {
                    let v = map.next_value::<Value>()?;
                    r.extra.insert(key.into_owned(), v);
                }
            }
        }
        Ok((r, skipped))
    }
}

/// Validates a value without building it and says its [`OutputShape`].
struct ShapeSeed;

impl<'de> DeserializeSeed<'de> for ShapeSeed {
    type Value = OutputShape;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<OutputShape, D::Error> {
        d.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = OutputShape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<OutputShape, E> {
        Ok(OutputShape::Null)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<OutputShape, E> {
        Ok(OutputShape::Bool)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<OutputShape, E> {
        Ok(OutputShape::Number)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<OutputShape, E> {
        Ok(OutputShape::Number)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<OutputShape, E> {
        Ok(OutputShape::Number)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<OutputShape, E> {
        Ok(OutputShape::String {
            empty: v.is_empty(),
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<OutputShape, A::Error> {
        let (mut empty, mut all_strings) = (true, true);
        while let Some(is_str) = seq.next_element_seed(Skip)? {
            empty = false;
            all_strings &= is_str;
        }
        Ok(OutputShape::Array { empty, all_strings })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<OutputShape, A::Error> {
        let empty = skip_map(map)?;
        Ok(OutputShape::Object { empty })
    }
}

/// Skips any value (validated as a real parse would: strings unescaped, numbers parsed); says
/// whether it was a string.
struct Skip;

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(SkipVisitor)
    }
}

struct SkipVisitor;

impl<'de> Visitor<'de> for SkipVisitor {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<bool, E> {
        Ok(true)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(false)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<bool, A::Error> {
        skip_map(map)?;
        Ok(false)
    }
}

/// Skips a map's entries (keys validated like values); returns whether it was empty. An error
/// for `serde_json`'s raw-value token as the first key (the reference would re-parse its value).
fn skip_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<bool, A::Error> {
    let mut empty = true;
    while let Some(is_token) = map.next_key_seed(KeyIsToken)? {
        if empty && is_token {
            return Err(de::Error::custom("raw value token"));
        }
        empty = false;
        map.next_value_seed(Skip)?;
    }
    Ok(empty)
}

/// Reads a key without keeping it: whether it is [`RAW_VALUE_TOKEN`].
struct KeyIsToken;

impl<'de> DeserializeSeed<'de> for KeyIsToken {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for KeyIsToken {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        Ok(v == RAW_VALUE_TOKEN)
    }
}
