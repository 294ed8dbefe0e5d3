//! Anthropic Messages API conversations → RAWP frames (SPEC 5).
//!
//! Who calls it: `crate::import` (`decoder_for(Format::Anthropic)`); the whole input is buffered
//! and mapped at the end (a conversation is one document).
//!
//! Accepted inputs: a request body (`messages`, `tools`), a response body (`content` +
//! `stop_reason`), a list of messages, JSONL of messages / bodies, recorded
//! `[{request, response}]` pairs (Anthropic SDK tests), and VCR YAML cassettes
//! (`interactions:`, pydantic-ai) whose response is a raw SSE stream. Requests repeat the
//! history: messages already seen (same position, same role and content as the conversation so
//! far) are not repeated; a request that does not continue the conversation starts a new one.
//!
//! Mapping: `tool_use` / `server_tool_use` / `mcp_tool_use` → `tool.invoke.request`
//! (`mcp_tool_use` is named `mcp__<server>__<tool>`; a `caller` that is a server tool makes the
//! call a child of that server tool via `metadata.delegation_chain`); `tool_result`,
//! `mcp_tool_result` and `*_tool_result` → `tool.invoke.result` (`status` `error` when `is_error`
//! or the content is a `*_error`); text → `agent.text.done` or `control.prompt.request`;
//! thinking → `agent.thinking.done`; per response: `session.usage`, and `session.turn.end`
//! unless `stop_reason` is `tool_use`. The request's `tools` become a `tool.catalog.publish`
//! (else one derived from the calls, metadata `rawpv_derived: true`).
//!
//! Pairing findings (SPEC 5): a `tool_use` not answered in the next message
//! (`tool-use-without-result`), a `tool_result` with no `tool_use` (`tool-result-without-use`) or
//! not right after it (`tool-result-not-next`), text before a `tool_result`
//! (`text-before-tool-result`). Invariants: never panics; unreadable input is a
//! `Decoded::Malformed` with the parser's message.
//!
//! Size (about 870 lines): three input shapes (Messages request/response JSON, SDK
//! logs with retries, SSE streams) folded into one frame sequence with one set of pairing
//! findings; splitting by shape would duplicate the pairing state.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::cc_output::result_text;
use super::{Decoded, Decoder};
use crate::finding::{Finding, Level, code};
use crate::protocol::rules::{expected_output_type, known_category};
use crate::protocol::{
    Body, CatalogPublish, CatalogTool, Delegation, Frame, FrameType, ParseError, ParseErrorKind,
    ResultStatus, ToolInvokeRequest, ToolInvokeResult,
};

/// Buffers the whole input and maps it at the end.
#[derive(Debug, Default)]
pub struct AnthropicDecoder {
    text: String,
}

impl AnthropicDecoder {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Decoder for AnthropicDecoder {
    fn line(&mut self, _line: u64, text: &str, _out: &mut Vec<Decoded>) {
        self.text.push_str(text);
        self.text.push('\n');
    }

    fn finish(&mut self, out: &mut Vec<Decoded>) {
        let text = std::mem::take(&mut self.text);
        decode_text(&text, out);
    }
}

/// One message of the conversation, with where it came from.
#[derive(Debug, Clone)]
struct Msg {
    v: Value,
    /// 1-based position: pair / line / element number in the input.
    line: u64,
}

#[derive(Debug, Default)]
struct Conv {
    msgs: Vec<Msg>,
    /// Index in `msgs` where the current conversation starts.
    start: usize,
    /// Tool lists of requests, each with the line where it appeared (published when it changes).
    catalogs: Vec<(Value, u64, usize)>,
}

impl Conv {
    fn same(a: &Value, b: &Value) -> bool {
        a.get("role") == b.get("role") && a.get("content") == b.get("content")
    }

    /// A request body: its tools, then the messages not seen yet.
    fn request(&mut self, body: &Value, line: u64) {
        if let Some(tools) = body.get("tools").filter(|t| t.is_array()) {
            let changed = self.catalogs.last().is_none_or(|(t, _, _)| t != tools);
            if changed {
                self.catalogs.push((tools.clone(), line, self.msgs.len()));
            }
        }
        let Some(msgs) = body.get("messages").and_then(Value::as_array) else {
            return;
        };
        let seen = self.msgs.len() - self.start;
        let continues = seen > 0
            && msgs.len() >= seen
            && msgs
                .first()
                .is_some_and(|m| Self::same(m, &self.msgs[self.start].v));
        let skip = if continues {
            seen
        } else {
            self.start = self.msgs.len();
            0
        };
        for m in msgs.iter().skip(skip) {
            self.msgs.push(Msg { v: m.clone(), line });
        }
    }

    /// A response body (an assistant message).
    fn response(&mut self, body: &Value, line: u64) {
        let mut v = body.clone();
        if let Value::Object(o) = &mut v {
            o.entry("role").or_insert_with(|| json!("assistant"));
        }
        self.msgs.push(Msg { v, line });
    }

    fn value(&mut self, v: &Value, line: u64, out: &mut Vec<Decoded>) {
        match v {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.value(item, i as u64 + 1, out);
                }
            }
            Value::Object(o) if o.contains_key("interactions") => {
                if let Some(Value::Array(items)) = o.get("interactions") {
                    for (i, item) in items.iter().enumerate() {
                        self.value(item, i as u64 + 1, out);
                    }
                }
            }
            Value::Object(o) if o.contains_key("request") || o.contains_key("response") => {
                if let Some(body) = o.get("request").and_then(|r| body_of(r, line, out)) {
                    self.request(&body, line);
                }
                if let Some(body) = o.get("response").and_then(|r| body_of(r, line, out)) {
                    if body.get("type").and_then(Value::as_str) == Some("error") {
                        let msg = format!("recorded API error: {}", compact(&body));
                        out.push(Decoded::Finding(Finding::new(
                            Level::Warning,
                            code::UNREADABLE_INPUT,
                            "SPEC 5",
                            line,
                            msg,
                        )));
                    } else {
                        self.response(&body, line);
                    }
                }
            }
            Value::Object(o) if o.contains_key("messages") => self.request(v, line),
            Value::Object(o) if o.contains_key("role") || o.contains_key("content") => {
                self.response(v, line);
            }
            other => {
                let msg = format!("not an Anthropic message or body: {}", compact(other));
                out.push(Decoded::Finding(Finding::new(
                    Level::Warning,
                    code::UNRECOGNISED_RECORD,
                    "SPEC 5",
                    line,
                    msg,
                )));
            }
        }
    }
}

/// A short one-line rendering of a value for messages.
fn compact(v: &Value) -> String {
    let s = v.to_string();
    let mut n = s.len().min(160);
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    s[..n].to_owned()
}

/// The JSON body of a recorded request or response: `body` / `parsed_body` as JSON, a JSON
/// string, `{string: …}` (VCR), or an SSE stream (rebuilt into a message).
fn body_of(recorded: &Value, line: u64, out: &mut Vec<Decoded>) -> Option<Value> {
    let body = recorded
        .get("parsed_body")
        .or_else(|| recorded.get("body"))?;
    let body = match body {
        Value::Object(o) if o.len() == 1 && o.contains_key("string") => o.get("string")?,
        other => other,
    };
    match body {
        Value::String(text) => {
            let head = text.trim_start();
            if head.starts_with("event:") || head.starts_with("data:") {
                Some(sse_message(text, line, out))
            } else if head.is_empty() {
                None
            } else {
                match serde_json::from_str(text) {
                    Ok(v) => Some(v),
                    Err(err) => {
                        out.push(Decoded::Malformed(ParseError::new(
                            line,
                            ParseErrorKind::Json(format!("recorded body: {err}")),
                            text,
                        )));
                        None
                    }
                }
            }
        }
        Value::Null => None,
        other => Some(other.clone()),
    }
}

/// Rebuilds the final message from a Messages API SSE stream (`message_start`,
/// `content_block_*`, `message_delta`). `input_json_delta` pieces are joined before parsing.
fn sse_message(s: &str, line: u64, out: &mut Vec<Decoded>) -> Value {
    let mut msg = Map::new();
    let mut blocks: Vec<Value> = Vec::new();
    let mut partial: HashMap<usize, String> = HashMap::new();
    for data in s
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .filter(|d| !d.is_empty())
    {
        let Ok(ev) = serde_json::from_str::<Value>(data) else {
            out.push(Decoded::Malformed(ParseError::new(
                line,
                ParseErrorKind::Json("SSE data is not JSON".into()),
                data,
            )));
            continue;
        };
        let idx = ev.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
        match ev.get("type").and_then(Value::as_str).unwrap_or("") {
            "message_start" => {
                if let Some(Value::Object(m)) = ev.get("message") {
                    msg.clone_from(m);
                }
            }
            "content_block_start" => {
                if blocks.len() <= idx {
                    blocks.resize(idx + 1, Value::Null);
                }
                blocks[idx] = ev.get("content_block").cloned().unwrap_or(Value::Null);
            }
            "content_block_delta" => {
                let Some(d) = ev.get("delta") else { continue };
                let Some(Value::Object(b)) = blocks.get_mut(idx) else {
                    continue;
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
                        partial
                            .entry(idx)
                            .or_default()
                            .push_str(piece("partial_json"));
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(json) = partial.remove(&idx)
                    && let Some(Value::Object(b)) = blocks.get_mut(idx)
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
            }
            "message_delta" => {
                if let Some(Value::Object(d)) = ev.get("delta") {
                    for (k, v) in d {
                        msg.insert(k.clone(), v.clone());
                    }
                }
                if let Some(Value::Object(u)) = ev.get("usage") {
                    let usage = msg
                        .entry("usage")
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(cur) = usage {
                        for (k, v) in u {
                            cur.insert(k.clone(), v.clone());
                        }
                    }
                }
            }
            "error" => {
                let m = format!("stream error: {}", compact(&ev));
                out.push(Decoded::Finding(Finding::new(
                    Level::Error,
                    code::UNREADABLE_INPUT,
                    "SPEC 5",
                    line,
                    m,
                )));
            }
            _ => {}
        }
    }
    msg.insert(
        "content".into(),
        Value::Array(blocks.into_iter().filter(|b| !b.is_null()).collect()),
    );
    msg.entry("role").or_insert_with(|| json!("assistant"));
    Value::Object(msg)
}

/// What the YAML reader's refusal means, in words: its alias limit is a "billion laughs" bomb.
fn yaml_reason(e: &serde_yaml_ng::Error) -> String {
    let msg = e.to_string();
    if msg.contains("repetition limit exceeded") {
        format!("{msg} (its aliases expand without bound: a \"billion laughs\" YAML bomb)")
    } else {
        msg
    }
}

/// Parses the whole input (JSON document, JSONL, or YAML cassette) and maps it.
pub fn decode_text(text: &str, out: &mut Vec<Decoded>) {
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    let mut conv = Conv::default();
    if trimmed.starts_with("interactions:") || trimmed.starts_with("---") {
        match serde_yaml_ng::from_str::<Value>(trimmed) {
            Ok(v) => conv.value(&v, 1, out),
            Err(e) => {
                let line = e.location().map_or(1, |l| l.line() as u64);
                out.push(Decoded::Malformed(ParseError::new(
                    line,
                    ParseErrorKind::Yaml(yaml_reason(&e)),
                    trimmed,
                )));
                return;
            }
        }
    } else if let Ok(v) = serde_json::from_str::<Value>(trimmed) {
        conv.value(&v, 1, out);
    } else {
        for (i, l) in text.lines().enumerate() {
            if l.trim().is_empty() {
                continue;
            }
            let line = i as u64 + 1;
            match serde_json::from_str::<Value>(l) {
                Ok(v @ Value::Object(_)) => conv.value(&v, line, out),
                Ok(_) => out.push(Decoded::Malformed(ParseError::new(
                    line,
                    ParseErrorKind::NotObject,
                    l,
                ))),
                Err(e) => out.push(Decoded::Malformed(ParseError::new(
                    line,
                    ParseErrorKind::Json(e.to_string()),
                    l,
                ))),
            }
        }
    }
    Mapper::default().map(&conv, out);
}

#[derive(Debug)]
struct UseInfo {
    name: String,
    line: u64,
    answered: bool,
    server: bool,
}

#[derive(Debug, Default)]
struct Mapper {
    seq: u64,
    uses: HashMap<String, UseInfo>,
    order: Vec<String>,
    /// Client tool uses of the previous assistant message (must be answered next).
    prev: Vec<String>,
}

impl Mapper {
    fn frame(&mut self, t: FrameType, body: Body, m: &Msg, chain: &[Delegation]) -> Frame {
        self.seq += 1;
        let mut f = Frame::new(t, body);
        f.origin.line = m.line;
        f.envelope.seq = Some(self.seq);
        let mut a = Map::new();
        if let Some(id) = m.v.get("id") {
            a.insert("message_id".into(), id.clone());
        }
        if let Some(r) = m.v.get("role") {
            a.insert("role".into(), r.clone());
        }
        if !a.is_empty() {
            f.envelope
                .metadata
                .insert("anthropic".into(), Value::Object(a));
        }
        if !chain.is_empty() {
            f.envelope.metadata.insert(
                "delegation_chain".into(),
                serde_json::to_value(chain).unwrap_or(Value::Null),
            );
        }
        f
    }

    fn generic(
        &mut self,
        out: &mut Vec<Decoded>,
        t: FrameType,
        payload: Map<String, Value>,
        m: &Msg,
    ) {
        let f = self.frame(t, Body::Generic(payload), m, &[]);
        out.push(Decoded::frame(f));
    }

    fn finding(out: &mut Vec<Decoded>, c: &'static str, line: u64, id: &str, msg: String) {
        let f = Finding::new(Level::Warning, c, "SPEC 5", line, msg);
        out.push(Decoded::Finding(if id.is_empty() {
            f
        } else {
            f.for_invocation(id)
        }));
    }

    fn map(mut self, conv: &Conv, out: &mut Vec<Decoded>) {
        if conv.catalogs.is_empty() {
            self.derived(conv, out);
        }
        for (k, m) in conv.msgs.iter().enumerate() {
            self.publish_at(conv, k, out);
            let role = m.v.get("role").and_then(Value::as_str).unwrap_or("");
            if role == "assistant" {
                self.close_prev(
                    out,
                    "the next message is not a user message with its result",
                );
                self.assistant(m, out);
            } else {
                self.user(m, out);
            }
        }
        self.publish_at(conv, conv.msgs.len(), out);
        self.close_prev(out, "the conversation ends without its result");
        for id in &self.order {
            if let Some(u) = self.uses.get(id)
                && u.server
                && !u.answered
            {
                let msg = format!("server tool {} call {id:?} has no result", u.name);
                Self::finding(out, code::TOOL_USE_WITHOUT_RESULT, u.line, id, msg);
            }
        }
    }

    /// A catalog derived from the calls, for conversations whose requests list no tools.
    fn derived(&mut self, conv: &Conv, out: &mut Vec<Decoded>) {
        let tools = derived_tools(conv);
        if tools.is_empty() {
            return;
        }
        let body = Body::Catalog(CatalogPublish {
            tools,
            diagnostics: Vec::new(),
            extra: Map::new(),
        });
        // Points at the first message (line 0 would read as "unknown").
        let m = Msg {
            v: Value::Null,
            line: conv.msgs.first().map_or(1, |m| m.line),
        };
        let mut f = self.frame(FrameType::ToolCatalogPublish, body, &m, &[]);
        f.envelope
            .metadata
            .insert("rawpv_derived".into(), Value::Bool(true));
        out.push(Decoded::frame(f));
    }

    /// Publishes the request tool lists that became current before message `k`.
    fn publish_at(&mut self, conv: &Conv, k: usize, out: &mut Vec<Decoded>) {
        for (tools, line, _) in conv.catalogs.iter().filter(|(_, _, at)| *at == k) {
            let mut tools: Vec<CatalogTool> = tools
                .as_array()
                .into_iter()
                .flatten()
                .map(catalog_tool)
                .collect();
            // Server tools run inside the API and may be enabled without a `tools` entry.
            for t in derived_tools(conv) {
                if t.extra.contains_key("server") && !tools.iter().any(|x| x.name == t.name) {
                    tools.push(t);
                }
            }
            let body = Body::Catalog(CatalogPublish {
                tools,
                diagnostics: Vec::new(),
                extra: Map::new(),
            });
            let m = Msg {
                v: Value::Null,
                line: *line,
            };
            let f = self.frame(FrameType::ToolCatalogPublish, body, &m, &[]);
            out.push(Decoded::frame(f));
        }
    }

    fn close_prev(&mut self, out: &mut Vec<Decoded>, why: &str) {
        for id in std::mem::take(&mut self.prev) {
            if let Some(u) = self.uses.get(&id)
                && !u.answered
            {
                let msg = format!("{} call {id:?} is not answered: {why}", u.name);
                Self::finding(out, code::TOOL_USE_WITHOUT_RESULT, u.line, &id, msg);
            }
        }
    }

    fn assistant(&mut self, m: &Msg, out: &mut Vec<Decoded>) {
        match m.v.get("content") {
            Some(Value::String(s)) => {
                let p = obj([("text", json!(s))]);
                self.generic(out, FrameType::AgentTextDone, p, m);
            }
            Some(Value::Array(blocks)) => {
                for b in blocks {
                    self.assistant_block(b, m, out);
                }
            }
            _ => {}
        }
        if let Some(Value::Object(u)) = m.v.get("usage") {
            let mut p = u.clone();
            if let Some(model) = m.v.get("model") {
                p.insert("model".into(), model.clone());
            }
            if let Some(id) = m.v.get("id") {
                p.insert("message_id".into(), id.clone());
            }
            self.generic(out, FrameType::SessionUsage, p, m);
        }
        if let Some(sr) = m.v.get("stop_reason").and_then(Value::as_str)
            && sr != "tool_use"
        {
            let p = obj([("stop_reason", json!(sr))]);
            self.generic(out, FrameType::SessionTurnEnd, p, m);
        }
    }

    fn assistant_block(&mut self, b: &Value, m: &Msg, out: &mut Vec<Decoded>) {
        let ty = b.get("type").and_then(Value::as_str).unwrap_or("");
        match ty {
            "text" => {
                let text = b.get("text").and_then(Value::as_str).unwrap_or("");
                // Whitespace-only blocks carry nothing to show.
                if !text.trim().is_empty() {
                    let p = obj([("text", json!(text))]);
                    self.generic(out, FrameType::AgentTextDone, p, m);
                }
            }
            "thinking" => {
                let text = b.get("thinking").and_then(Value::as_str).unwrap_or("");
                let mut p = obj([("text", json!(text))]);
                if text.is_empty() {
                    p.insert("redacted".into(), json!(true));
                }
                self.generic(out, FrameType::AgentThinkingDone, p, m);
            }
            "redacted_thinking" => {
                let p = obj([("text", json!("")), ("redacted", json!(true))]);
                self.generic(out, FrameType::AgentThinkingDone, p, m);
            }
            "tool_use" | "server_tool_use" | "mcp_tool_use" => self.tool_use(b, ty, m, out),
            t if t.ends_with("_tool_result") => self.tool_result(b, m, out),
            _ => {
                let p = obj([("block", b.clone())]);
                self.generic(out, FrameType::from_wire("x-anthropic.block"), p, m);
            }
        }
    }

    fn tool_use(&mut self, b: &Value, ty: &str, m: &Msg, out: &mut Vec<Decoded>) {
        let id = b.get("id").and_then(Value::as_str).unwrap_or("").to_owned();
        let mut name = b
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if ty == "mcp_tool_use"
            && let Some(server) = b.get("server_name").and_then(Value::as_str)
        {
            name = format!("mcp__{server}__{name}");
        }
        let server = ty == "server_tool_use";
        // A client tool called from inside a server tool (programmatic tool calling).
        let mut chain = Vec::new();
        if let Some(caller) = b.get("caller")
            && let Some(tool_id) = caller.get("tool_id").and_then(Value::as_str)
        {
            chain.push(Delegation {
                agent_id: caller
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("server_tool")
                    .to_owned(),
                invocation_id: tool_id.to_owned(),
            });
        }
        let mut extra = Map::new();
        for k in ["caller", "server_name"] {
            if let Some(v) = b.get(k) {
                extra.insert(k.to_owned(), v.clone());
            }
        }
        if ty != "tool_use" {
            extra.insert("block_type".into(), json!(ty));
        }
        let req = ToolInvokeRequest {
            invocation_id: Some(id.clone()),
            tool_name: Some(name.clone()),
            input: Some(b.get("input").cloned().unwrap_or(json!({}))),
            extra,
            ..Default::default()
        };
        let f = self.frame(FrameType::ToolInvokeRequest, Body::Request(req), m, &chain);
        out.push(Decoded::frame(f));
        if !self.uses.contains_key(&id) {
            self.order.push(id.clone());
        }
        self.uses.insert(
            id.clone(),
            UseInfo {
                name,
                line: m.line,
                answered: false,
                server,
            },
        );
        if !server {
            self.prev.push(id);
        }
    }

    fn user(&mut self, m: &Msg, out: &mut Vec<Decoded>) {
        let blocks: Vec<Value> = match m.v.get("content") {
            Some(Value::String(s)) => vec![json!({"type": "text", "text": s})],
            Some(Value::Array(b)) => b.clone(),
            _ => Vec::new(),
        };
        let last_result = blocks
            .iter()
            .rposition(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"));
        let prev: HashSet<String> = self.prev.iter().cloned().collect();
        for (i, b) in blocks.iter().enumerate() {
            match b.get("type").and_then(Value::as_str).unwrap_or("") {
                "text" => {
                    if last_result.is_some_and(|r| i < r) {
                        let msg = "text placed before the tool_result blocks of this message (results must come first)".to_owned();
                        Self::finding(out, code::TEXT_BEFORE_TOOL_RESULT, m.line, "", msg);
                    }
                    let p = obj([
                        ("text", b.get("text").cloned().unwrap_or_else(|| json!(""))),
                        ("input_type", json!("text")),
                    ]);
                    self.generic(out, FrameType::ControlPromptRequest, p, m);
                }
                "tool_result" => {
                    let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
                    if !prev.contains(id) {
                        let (c, msg) = if self.uses.contains_key(id) {
                            (
                                code::TOOL_RESULT_NOT_NEXT,
                                format!(
                                    "tool_result for {id:?} does not directly follow its tool_use"
                                ),
                            )
                        } else {
                            (
                                code::TOOL_RESULT_WITHOUT_USE,
                                format!("tool_result for {id:?}, which no tool_use requested"),
                            )
                        };
                        Self::finding(out, c, m.line, id, msg);
                    }
                    self.tool_result(b, m, out);
                }
                _ => {
                    let p = obj([("block", b.clone())]);
                    self.generic(out, FrameType::from_wire("x-anthropic.block"), p, m);
                }
            }
        }
        self.close_prev(out, "the next user message has no tool_result for it");
    }

    fn tool_result(&mut self, b: &Value, m: &Msg, out: &mut Vec<Decoded>) {
        let id = b
            .get("tool_use_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let name = self.uses.get_mut(&id).map_or_else(String::new, |u| {
            u.answered = true;
            u.name.clone()
        });
        let content = b.get("content");
        let content_error = content
            .and_then(|c| c.get("type"))
            .and_then(Value::as_str)
            .is_some_and(|t| t.ends_with("_error"));
        let is_error = b.get("is_error").and_then(Value::as_bool) == Some(true) || content_error;
        let output = result_output(content);
        let (output_type, _) = expected_output_type(&name, None, Some(&output));
        let mut extra = Map::new();
        if let Some(t) = b
            .get("type")
            .and_then(Value::as_str)
            .filter(|t| *t != "tool_result")
        {
            extra.insert("block_type".into(), json!(t));
        }
        let res = ToolInvokeResult {
            invocation_id: Some(id),
            tool_name: Some(name),
            status: Some(if is_error {
                ResultStatus::Error
            } else {
                ResultStatus::Success
            }),
            output: Some(output),
            output_type: Some(output_type),
            extra,
            ..Default::default()
        };
        let f = self.frame(FrameType::ToolInvokeResult, Body::Result(res), m, &[]);
        out.push(Decoded::frame(f));
    }
}

/// A result's output: text content as one string; web search results as `{results: [{title,
/// url}]}`; other block lists kept as JSON; an `*_error` content as its error code.
fn result_output(content: Option<&Value>) -> Value {
    match content {
        None | Some(Value::Null) => Value::String(String::new()),
        Some(Value::String(s)) => Value::String(s.clone()),
        Some(Value::Array(blocks)) => {
            let all_text = blocks
                .iter()
                .all(|b| b.get("type").and_then(Value::as_str) == Some("text"));
            if all_text {
                return Value::String(result_text(content));
            }
            let all_search = blocks
                .iter()
                .all(|b| b.get("type").and_then(Value::as_str) == Some("web_search_result"));
            if all_search {
                let results = blocks
                    .iter()
                    .map(|b| {
                        let mut r = Map::new();
                        for k in ["title", "url", "page_age"] {
                            if let Some(v) = b.get(k) {
                                r.insert(k.to_owned(), v.clone());
                            }
                        }
                        Value::Object(r)
                    })
                    .collect();
                return json!({ "results": Value::Array(results) });
            }
            Value::Array(blocks.clone())
        }
        Some(Value::Object(o)) => match o.get("error_code") {
            Some(code) => json!(format!("error: {}", code.as_str().unwrap_or("unknown"))),
            None => Value::Object(o.clone()),
        },
        Some(other) => other.clone(),
    }
}

/// A catalog entry from a request `tools[]` item (client tool, or typed server tool).
fn catalog_tool(t: &Value) -> CatalogTool {
    let name = t
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let mut extra = Map::new();
    if let Some(ty) = t.get("type") {
        extra.insert("type".into(), ty.clone());
    }
    CatalogTool {
        category: known_category(&name),
        description: Some(
            t.get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        ),
        input_schema: t.get("input_schema").cloned(),
        name,
        extra,
        ..Default::default()
    }
}

/// Tools named by the calls of the conversation, in order of first use.
fn derived_tools(conv: &Conv) -> Vec<CatalogTool> {
    let mut seen = HashSet::new();
    let mut tools = Vec::new();
    for m in &conv.msgs {
        for b in
            m.v.get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        {
            let ty = b.get("type").and_then(Value::as_str).unwrap_or("");
            if !matches!(ty, "tool_use" | "server_tool_use" | "mcp_tool_use") {
                continue;
            }
            let mut name = b
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            if ty == "mcp_tool_use"
                && let Some(s) = b.get("server_name").and_then(Value::as_str)
            {
                name = format!("mcp__{s}__{name}");
            }
            if seen.insert(name.clone()) {
                let mut extra = Map::new();
                if ty == "server_tool_use" {
                    extra.insert("server".into(), json!(true));
                }
                tools.push(CatalogTool {
                    category: known_category(&name),
                    description: Some(
                        "used in this conversation (catalog derived by rawpv)".into(),
                    ),
                    name,
                    extra,
                    ..Default::default()
                });
            }
        }
    }
    tools
}

fn obj<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}
