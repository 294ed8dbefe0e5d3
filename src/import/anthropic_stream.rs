//! Anthropic Messages API streams → RAWP frames, live: a plain SSE capture (`event:` / `data:`
//! lines, Format `anthropic-sse`) and vercel/ai's one-JSON-event-per-line recording
//! (`*.chunks.txt`, Format `anthropic-events`).
//!
//! Who calls it: `crate::import` (`decoder_for`) for files, stdin and followed files, line by
//! line; `crate::import::anthropic` folds the SSE body of a recorded response with [`EventFold`].
//!
//! Stream events (Anthropic "Streaming Messages"): `message_start {message}`,
//! `content_block_start {index, content_block}`, `content_block_delta {index, delta}` with
//! `text_delta`, `input_json_delta` (`partial_json` pieces joined before parsing),
//! `thinking_delta`, `signature_delta`, `citations_delta`; `content_block_stop {index}`,
//! `message_delta {delta: {stop_reason, …}, usage}`, `message_stop`, `ping`, `error {error}`.
//! SSE (WHATWG "server-sent events"): `data:` lines of one event are joined with `\n`, a blank
//! line dispatches it, `:` lines are comments, `event:` / `id:` / `retry:` are ignored (the JSON
//! carries its own `type`).
//!
//! Frames are emitted as each block completes (`content_block_stop`): a text block →
//! `agent.text.done`, a `tool_use` / `server_tool_use` / `mcp_tool_use` → `tool.invoke.request`,
//! a `*_tool_result` → `tool.invoke.result`; at `message_stop`, `session.usage` and
//! `session.turn.end` (SPEC 5 mapping, through `anthropic::Mapper`). A stream holds only
//! responses, so a client tool's result is never in it: a `tool_use` followed by a next response
//! is reported as an `info` finding (the result was sent in a request that is not recorded).
//! An `error` event is a `session.error` frame with an `api-error` finding (warning for
//! `overloaded_error` and other transient errors, else error).
//! Invariants: never panics; a line that is not JSON is a `Decoded::Malformed` with its line.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::anthropic::{Mapper, Msg};
use super::{Decoded, Decoder};
use crate::finding::{Finding, Level, code};
use crate::protocol::{ParseError, ParseErrorKind};

/// The stream event types that decide the format of a line (`ping` and `error` do not).
pub const EVENT_TYPES: [&str; 6] = [
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
];

/// Whether `v` is one Messages API stream event that decides the format.
pub fn is_stream_event(v: &Value) -> bool {
    v.get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| EVENT_TYPES.contains(&t))
        && v.get("payload").is_none()
}

/// What one event did to the message being folded.
#[derive(Debug, Clone, PartialEq)]
pub enum Folded {
    /// `message_start`: the message so far (no content).
    Started,
    /// `content_block_stop`: block `index` is complete.
    Block(usize),
    /// `message_stop`: the message is complete.
    Stopped,
    /// An `error` event (e.g. `overloaded_error` mid-stream).
    Error,
    /// Anything else (deltas, pings, `message_delta`).
    Nothing,
}

/// Folds stream events into one message: its fields, blocks and usage.
#[derive(Debug, Default)]
pub struct EventFold {
    /// The message (without `content`), from `message_start` and `message_delta`.
    pub msg: Map<String, Value>,
    /// Content blocks by index (`Null` where none started).
    pub blocks: Vec<Value>,
    partial: HashMap<usize, String>,
    /// A `message_start` was seen and no `message_stop` yet.
    pub open: bool,
}

impl EventFold {
    /// Applies one event. `line` is where it was read (for findings).
    pub fn event(&mut self, ev: &Value, line: u64, out: &mut Vec<Decoded>) -> Folded {
        let idx = ev
            .get("index")
            .and_then(Value::as_u64)
            .map_or(0, |i| usize::try_from(i).unwrap_or(usize::MAX));
        match ev.get("type").and_then(Value::as_str).unwrap_or("") {
            "message_start" => {
                self.msg = match ev.get("message") {
                    Some(Value::Object(m)) => m.clone(),
                    _ => Map::new(),
                };
                self.msg.remove("content");
                self.msg.entry("role").or_insert_with(|| json!("assistant"));
                self.blocks.clear();
                self.partial.clear();
                self.open = true;
                Folded::Started
            }
            "content_block_start" => {
                // Indices are small in practice; a huge one is not a reason to allocate.
                if idx > 4096 {
                    bad_event(out, line, "content_block_start index above 4096", ev);
                    return Folded::Nothing;
                }
                if self.blocks.len() <= idx {
                    self.blocks.resize(idx + 1, Value::Null);
                }
                self.blocks[idx] = ev.get("content_block").cloned().unwrap_or(Value::Null);
                Folded::Nothing
            }
            "content_block_delta" => {
                self.delta(idx, ev.get("delta"));
                Folded::Nothing
            }
            "content_block_stop" => {
                if let Some(json) = self.partial.remove(&idx)
                    && let Some(Value::Object(b)) = self.blocks.get_mut(idx)
                {
                    let input = if json.trim().is_empty() {
                        json!({})
                    } else {
                        serde_json::from_str(&json).unwrap_or_else(|e| {
                            out.push(Decoded::Malformed(ParseError::new(
                                line,
                                ParseErrorKind::Json(format!("streamed tool input: {e}")),
                                &json,
                            )));
                            Value::String(json.clone())
                        })
                    };
                    b.insert("input".into(), input);
                }
                if self.blocks.get(idx).is_some_and(Value::is_object) {
                    Folded::Block(idx)
                } else {
                    Folded::Nothing
                }
            }
            "message_delta" => {
                if let Some(Value::Object(d)) = ev.get("delta") {
                    for (k, v) in d {
                        self.msg.insert(k.clone(), v.clone());
                    }
                }
                if let Some(Value::Object(u)) = ev.get("usage") {
                    let usage = self
                        .msg
                        .entry("usage")
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(cur) = usage {
                        for (k, v) in u {
                            cur.insert(k.clone(), v.clone());
                        }
                    }
                }
                Folded::Nothing
            }
            "message_stop" => {
                self.open = false;
                Folded::Stopped
            }
            "error" => Folded::Error,
            _ => Folded::Nothing,
        }
    }

    fn delta(&mut self, idx: usize, d: Option<&Value>) {
        let Some(d) = d else { return };
        let Some(Value::Object(b)) = self.blocks.get_mut(idx) else {
            return;
        };
        let append = |b: &mut Map<String, Value>, k: &str, piece: &str| {
            let cur = b.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            b.insert(k.to_owned(), Value::String(cur + piece));
        };
        let piece = |k: &str| d.get(k).and_then(Value::as_str).unwrap_or("");
        match d.get("type").and_then(Value::as_str).unwrap_or("") {
            "text_delta" => append(b, "text", piece("text")),
            "thinking_delta" => append(b, "thinking", piece("thinking")),
            "signature_delta" => append(b, "signature", piece("signature")),
            "input_json_delta" => {
                self.partial
                    .entry(idx)
                    .or_default()
                    .push_str(piece("partial_json"));
            }
            "citations_delta" => {
                if let Some(c) = d.get("citation") {
                    let list = b.entry("citations").or_insert_with(|| json!([]));
                    if !list.is_array() {
                        *list = json!([]);
                    }
                    if let Value::Array(a) = list {
                        a.push(c.clone());
                    }
                }
            }
            _ => {}
        }
    }

    /// The message folded so far, with its blocks as `content`.
    pub fn message(&self) -> Value {
        let mut m = self.msg.clone();
        m.insert(
            "content".into(),
            Value::Array(
                self.blocks
                    .iter()
                    .filter(|b| !b.is_null())
                    .cloned()
                    .collect(),
            ),
        );
        m.entry("role").or_insert_with(|| json!("assistant"));
        Value::Object(m)
    }
}

fn bad_event(out: &mut Vec<Decoded>, line: u64, why: &str, ev: &Value) {
    out.push(Decoded::Malformed(ParseError::new(
        line,
        ParseErrorKind::Json(why.to_owned()),
        &ev.to_string(),
    )));
}

/// Folds a whole SSE body (a recorded response) into its final message.
pub fn sse_message(s: &str, line: u64, out: &mut Vec<Decoded>) -> Value {
    let mut fold = EventFold::default();
    let mut sse = SseLines::default();
    let mut events = Vec::new();
    for l in s.lines() {
        sse.line(l, line, &mut events, out);
    }
    sse.end(line, &mut events, out);
    for (ev, at) in events {
        if fold.event(&ev, at, out) == Folded::Error {
            let m = format!("stream error: {}", super::anthropic::compact(&ev));
            out.push(Decoded::Finding(Finding::new(
                Level::Error,
                code::API_ERROR,
                "SPEC 5",
                at,
                m,
            )));
        }
    }
    fold.message()
}

/// SSE line framing: collects `data:` lines and yields one JSON event per dispatch.
#[derive(Debug, Default)]
pub struct SseLines {
    data: String,
    /// Line of the first `data:` line of the pending event.
    first: u64,
}

impl SseLines {
    /// Feeds one line (without its newline); a complete event goes to `events`.
    pub fn line(
        &mut self,
        text: &str,
        line: u64,
        events: &mut Vec<(Value, u64)>,
        out: &mut Vec<Decoded>,
    ) {
        let text = text.strip_suffix('\r').unwrap_or(text);
        if text.trim().is_empty() {
            self.dispatch(events, out);
        } else if let Some(d) = text.strip_prefix("data:") {
            if self.data.is_empty() {
                self.first = line;
            } else {
                self.data.push('\n');
            }
            // Cap one event at 16 MiB: a stream without blank lines must not grow forever.
            if self.data.len() < 16 << 20 {
                self.data.push_str(d.strip_prefix(' ').unwrap_or(d));
            }
        } else if text.starts_with(':')
            || ["event:", "id:", "retry:", "event", "id", "retry"]
                .iter()
                .any(|k| text.starts_with(k))
        {
            // Comments and fields the JSON makes redundant.
        } else {
            out.push(Decoded::Malformed(ParseError::new(
                line,
                ParseErrorKind::Json(
                    "not an SSE field line (event:, data:, id:, retry:, :)".into(),
                ),
                text,
            )));
        }
    }

    /// The input ended: dispatch what is pending.
    pub fn end(&mut self, _line: u64, events: &mut Vec<(Value, u64)>, out: &mut Vec<Decoded>) {
        self.dispatch(events, out);
    }

    fn dispatch(&mut self, events: &mut Vec<(Value, u64)>, out: &mut Vec<Decoded>) {
        let data = std::mem::take(&mut self.data);
        let data = data.trim();
        if data.is_empty() || data == "[DONE]" {
            return;
        }
        match serde_json::from_str::<Value>(data) {
            Ok(v @ Value::Object(_)) => events.push((v, self.first)),
            Ok(_) => out.push(Decoded::Malformed(ParseError::new(
                self.first,
                ParseErrorKind::NotObject,
                data,
            ))),
            Err(e) => out.push(Decoded::Malformed(ParseError::new(
                self.first,
                ParseErrorKind::Json(format!("SSE data: {e}")),
                data,
            ))),
        }
    }
}

/// How the stream's events are framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `event:` / `data:` lines, blank-line separated.
    Sse,
    /// One JSON event per line (vercel/ai `*.chunks.txt`).
    Lines,
}

/// A live decoder for a stream of Messages API events (SSE or one JSON event per line).
pub struct StreamDecoder {
    framing: Framing,
    sse: SseLines,
    fold: EventFold,
    mapper: Mapper,
    /// The current message, for frame metadata (id, role) and its line.
    cur: Option<Msg>,
    /// Blocks of the current message already emitted.
    emitted: Vec<bool>,
    /// Messages seen (a later one means earlier client calls were answered off the record).
    messages: usize,
}

impl StreamDecoder {
    pub fn new(framing: Framing) -> Self {
        Self {
            framing,
            sse: SseLines::default(),
            fold: EventFold::default(),
            mapper: Mapper::streaming(),
            cur: None,
            emitted: Vec::new(),
            messages: 0,
        }
    }

    fn event(&mut self, ev: &Value, line: u64, out: &mut Vec<Decoded>) {
        match self.fold.event(ev, line, out) {
            Folded::Started => {
                if self.cur.is_some() {
                    // A new message before the previous one stopped.
                    self.end_message(line, out, true);
                }
                self.messages += 1;
                let m = Msg::new(Value::Object(self.fold.msg.clone()), line);
                self.mapper.begin_response(&m, self.messages > 1, out);
                self.cur = Some(m);
                self.emitted.clear();
            }
            Folded::Block(i) => {
                if self.cur.is_none() {
                    // Blocks without a message_start: a stream cut at its head.
                    self.messages += 1;
                    let m = Msg::new(json!({"role": "assistant"}), line);
                    self.mapper.begin_response(&m, self.messages > 1, out);
                    self.cur = Some(m);
                }
                if self.emitted.len() <= i {
                    self.emitted.resize(i + 1, false);
                }
                if !self.emitted[i]
                    && let (Some(m), Some(b)) = (self.cur.as_mut(), self.fold.blocks.get(i))
                {
                    self.emitted[i] = true;
                    m.line = line;
                    let b = b.clone();
                    let m = m.clone();
                    self.mapper.response_block(&b, &m, out);
                }
            }
            Folded::Stopped => self.end_message(line, out, false),
            Folded::Error => {
                let err = ev.get("error").unwrap_or(ev);
                let field = |k: &str| err.get(k).and_then(Value::as_str).unwrap_or("");
                let mut p = Map::new();
                let code = if field("type").is_empty() {
                    "api_error"
                } else {
                    field("type")
                };
                p.insert("error_code".into(), json!(code));
                p.insert("message".into(), json!(field("message")));
                p.insert("severity".into(), json!("error"));
                p.insert("in_stream".into(), json!(true));
                self.mapper.api_error(&p, &Msg::new(Value::Null, line), out);
            }
            Folded::Nothing => {}
        }
    }

    /// Emits the message's remaining blocks, usage and turn end.
    fn end_message(&mut self, line: u64, out: &mut Vec<Decoded>, cut: bool) {
        let Some(mut m) = self.cur.take() else {
            return;
        };
        m.line = line;
        let full = self.fold.message();
        for (i, b) in self.fold.blocks.iter().enumerate() {
            if b.is_object() && !self.emitted.get(i).copied().unwrap_or(false) {
                let mut mm = m.clone();
                mm.v = full.clone();
                self.mapper.response_block(b, &mm, out);
            }
        }
        if cut {
            out.push(Decoded::Finding(Finding::new(
                Level::Warning,
                code::UNREADABLE_INPUT,
                "SPEC 5",
                line,
                "the streamed message ends without message_stop",
            )));
        }
        m.v = full;
        self.mapper.response_end(&m, out);
        self.emitted.clear();
    }
}

impl Decoder for StreamDecoder {
    fn line(&mut self, line: u64, text: &str, out: &mut Vec<Decoded>) {
        match self.framing {
            Framing::Sse => {
                let mut events = Vec::new();
                self.sse.line(text, line, &mut events, out);
                for (ev, at) in events {
                    self.event(&ev, at, out);
                }
            }
            Framing::Lines => {
                let t = text.trim();
                if t.is_empty() {
                    return;
                }
                if let Some(v) = super::anthropic::object_line(line, t, out) {
                    self.event(&v, line, out);
                }
            }
        }
    }

    fn finish(&mut self, out: &mut Vec<Decoded>) {
        let mut events = Vec::new();
        self.sse.end(0, &mut events, out);
        for (ev, at) in events {
            self.event(&ev, at, out);
        }
        if self.cur.is_some() {
            let line = self.cur.as_ref().map_or(0, |m| m.line);
            self.end_message(line, out, true);
        }
        self.mapper.end(out);
    }
}

/// Decodes a whole stream held in memory (tests and the fuzz target).
pub fn decode_bytes(bytes: &[u8], framing: Framing) -> Vec<Decoded> {
    let mut out = Vec::new();
    let mut dec = StreamDecoder::new(framing);
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let text = super::line_text(raw, i as u64 + 1, &mut out);
        dec.line(i as u64 + 1, &text, &mut out);
    }
    dec.finish(&mut out);
    out
}
