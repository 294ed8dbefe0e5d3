//! Anthropic Messages API conversations → RAWP frames (SPEC 5).
//!
//! Who calls it: `crate::import` (`decoder_for(Format::Anthropic)`); the whole input is buffered
//! and mapped at the end (a conversation is one document). The streamed formats (a plain SSE
//! capture, one JSON event per line) are `super::anthropic_stream`, which shares [`Mapper`].
//!
//! Accepted inputs: a request body (`messages`, `tools`), a response body (`content` +
//! `stop_reason`), a list of messages, JSONL of messages / bodies, recorded
//! `[{request, response}]` pairs (Anthropic SDK tests: `response.status_code`), VCR YAML
//! cassettes (`interactions:`, pydantic-ai: `response.status.code`) whose response may be a raw
//! SSE stream, and vercel/ai's `{steps: [{step, body}], final}` (responses only).
//!
//! Merging: requests repeat the history. Every repeated message is compared with the
//! conversation the previous request saw (role and, block by block, type, text, ids; fields a
//! client drops when it echoes a response, such as `caller` or `citations`, do not count); the
//! messages from the first difference on are new, and they follow the last common message. So a
//! request `[user, user(tool_result)]` after `[user] → assistant(tool_use)` adds the
//! `tool_result` after the first user message, where it is an orphan (an error-level finding;
//! the API answers such a request with 400), instead of being dropped.
//!
//! Recorded HTTP errors (status ≥ 400, or a body `{type: "error"}`) become `session.error`
//! frames on the request they answer (`error_code`, `http_status`, `message`, `request_id`),
//! with an `api-error` finding: `error` level for a 4xx other than 408 / 409 / 429, else
//! `warning`. A request that repeats the previous request's messages after an error is a retry:
//! its `attempt` counts up and `retry_of_line` names the first attempt; the error frame names the
//! line of the retry (`retried_on_line`).
//!
//! Mapping: `tool_use` / `server_tool_use` / `mcp_tool_use` → `tool.invoke.request`
//! (`mcp_tool_use` is named `mcp__<server>__<tool>`; a `caller` that is a server tool makes the
//! call a child of that server tool via `metadata.delegation_chain`); `tool_result`,
//! `mcp_tool_result` and `*_tool_result` → `tool.invoke.result` (`status` `error` when `is_error`
//! or the content is a `*_error`); text → `agent.text.done` (its `citations` kept, and shown as
//! `[n]` footnotes under the text) or `control.prompt.request`; thinking →
//! `agent.thinking.done`; per response: `session.usage`, and `session.turn.end` unless
//! `stop_reason` is `tool_use`. The request's `tools` become a `tool.catalog.publish` (else one
//! derived from the calls, metadata `rawpv_derived: true`); a tool's `type`
//! (`text_editor_20250728`, `bash_20250124`, `web_search_20250305`, …) gives its category.
//!
//! Result outputs: text blocks → one string; `document` blocks by their source and media type
//! (text → the text, a PDF or other URL / base64 document → a `binary_ref`); images →
//! `binary_ref`; web search results → `{results: [{title, url}]}`; code execution results →
//! `{stdout, stderr, exit_code}`; the text editor (`str_replace_based_edit_tool`, server
//! `text_editor_code_execution`): `view` → `file_content`, `create` → a Write-style diff,
//! `str_replace` / `insert` → an Edit-style diff or its structured patch.
//!
//! Pairing findings (SPEC 5; error level where the API answers 400): a `tool_use` not answered
//! in the next message (`tool-use-without-result`; a warning when the input just ends, info when
//! the recording keeps only responses), a `tool_result` with no `tool_use`
//! (`tool-result-without-use`) or not right after it (`tool-result-not-next`), text before a
//! `tool_result` (`text-before-tool-result`), a `tool_result` in an assistant message
//! (`tool-result-in-assistant`, B06; it still answers a call with no other answer), a user
//! message holding more than `tool_result` blocks while a server tool of the turn has no result
//! (`text-with-unresolved-server-tool`, B14), a server tool's result in a user message
//! (`server-tool-result-in-user-message`, B16). One finding per problem: a use without an `id`
//! is not also unanswered (its request's `missing-field`), and the result in its reply that names
//! no use is its answer; a result naming no use, in a reply that leaves exactly one use of the
//! turn unanswered, is taken as that use's (B07: `tool-result-without-use` only); a use answered
//! late is reported by its result (`tool-result-not-next`, B12), unless the next user message
//! answered another use of the turn (then the use is `tool-use-without-result`, B20, and its late
//! result is not reported again); a server tool whose turn went on without its result is an
//! info at the end (B14 allows it). Block fields: a `tool_use` without `input` is an
//! error `missing-field` (the call is read with `{}`, B04); an `is_error` that is not a boolean
//! a warning `wrong-field-type` (read as false, B09). Invariants: never panics; unreadable input
//! is a `Decoded::Malformed` with the parser's message.
//!
//! Size (about 1,700 lines; tests from the end): the input shapes (Messages request/response
//! JSON, SDK logs with retries, step lists, recorded streams) fold into one frame sequence with
//! one set of pairing findings and one merge of repeated messages; splitting by shape would
//! duplicate that state. Parsing event streams is apart (`anthropic_stream.rs`).

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::anthropic_stream::sse_message;
use super::cc_output::result_text;
use super::{Decoded, Decoder};
use crate::finding::{Finding, Level, code};
use crate::protocol::rules::{expected_output_type, known_category};
use crate::protocol::{
    Body, CatalogPublish, CatalogTool, Category, Delegation, Frame, FrameType, OutputType,
    ParseError, ParseErrorKind, ResultStatus, ToolInvokeRequest, ToolInvokeResult,
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

/// What a conversation entry is.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// A Messages API message (`role`, `content`).
    Message,
    /// A recorded HTTP error answering the request on this entry's line (`session.error` body).
    ApiError(Map<String, Value>),
}

/// One message of the conversation, with where it came from.
#[derive(Debug, Clone)]
pub struct Msg {
    pub(crate) v: Value,
    /// 1-based line in the input where its request / response / message starts.
    pub(crate) line: u64,
    /// The message before it in its own request (`None`: it starts a conversation).
    prev: Option<usize>,
    /// Responses only: an unrecorded user turn (with the client's results) comes before it.
    gap: bool,
    kind: Kind,
}

impl Msg {
    /// A message read at `line`, with no known predecessor.
    pub(crate) fn new(v: Value, line: u64) -> Self {
        Self {
            v,
            line,
            prev: None,
            gap: false,
            kind: Kind::Message,
        }
    }
}

/// The last request seen, for merging and for linking retries.
#[derive(Debug, Clone)]
struct LastRequest {
    line: u64,
    messages: Option<Value>,
    /// Its response was an error (the entry index of the `ApiError`).
    error: Option<usize>,
    attempt: u64,
    first_line: u64,
}

#[derive(Debug, Default)]
struct Conv {
    msgs: Vec<Msg>,
    /// Entries (indices in `msgs`) of the conversation the last request and response saw.
    path: Vec<usize>,
    /// Tool lists of requests, each with the line where it appeared and the index of the
    /// first message it applies to (published when it changes).
    catalogs: Vec<(Value, u64, usize)>,
    last: Option<LastRequest>,
}

/// What a content block is, for comparing a repeated message with the one it repeats.
fn block_key(b: &Value) -> Value {
    let ty = b.get("type").and_then(Value::as_str).unwrap_or("");
    let keep: &[&str] = match ty {
        "text" => &["text"],
        "thinking" => &["thinking"],
        "redacted_thinking" => &["data"],
        "tool_use" | "server_tool_use" | "mcp_tool_use" => &["id", "name"],
        "tool_result" => &["tool_use_id", "content", "is_error"],
        t if t.ends_with("_tool_result") => &["tool_use_id"],
        "image" | "document" => &["source"],
        _ => {
            let mut o = b.as_object().cloned().unwrap_or_default();
            for k in ["cache_control", "citations", "caller"] {
                o.remove(k);
            }
            return Value::Object(o);
        }
    };
    let mut o = Map::new();
    o.insert("type".into(), json!(ty));
    for k in keep {
        if let Some(v) = b.get(*k) {
            o.insert((*k).to_owned(), normalise_content(v));
        }
    }
    // `is_error: false` and an absent `is_error` say the same.
    if o.get("is_error") == Some(&Value::Bool(false)) {
        o.remove("is_error");
    }
    Value::Object(o)
}

/// A string content and a list of one text block say the same.
fn normalise_content(v: &Value) -> Value {
    match v {
        Value::String(s) => json!([{"type": "text", "text": s.trim_end()}]),
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|b| match b.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        json!({"type": "text", "text": b.get("text").and_then(Value::as_str).unwrap_or("").trim_end()})
                    }
                    _ => block_key(b),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Whether two messages are the same turn (see [`block_key`]).
fn same_message(a: &Value, b: &Value) -> bool {
    a.get("role") == b.get("role")
        && a.get("content").map(normalise_content) == b.get("content").map(normalise_content)
}

impl Conv {
    /// A request body: its tools, then the messages not seen yet.
    fn request(&mut self, body: &Value, line: u64) {
        if let Some(tools) = body.get("tools").filter(|t| t.is_array()) {
            let changed = self.catalogs.last().is_none_or(|(t, _, _)| t != tools);
            if changed {
                self.catalogs.push((tools.clone(), line, self.msgs.len()));
            }
        }
        let messages = body.get("messages").cloned();
        // A retry: the same messages again right after an error.
        let (attempt, first_line) = match &self.last {
            Some(l) if l.error.is_some() && l.messages == messages && messages.is_some() => {
                if let Some(Kind::ApiError(p)) = l.error.map(|i| &mut self.msgs[i].kind) {
                    p.insert("retried_on_line".into(), json!(line));
                }
                (l.attempt + 1, l.first_line)
            }
            _ => (1, line),
        };
        self.last = Some(LastRequest {
            line,
            messages: messages.clone(),
            error: None,
            attempt,
            first_line,
        });
        let Some(Value::Array(msgs)) = messages else {
            return;
        };
        let common = msgs
            .iter()
            .zip(&self.path)
            .take_while(|(m, k)| {
                self.msgs[**k].kind == Kind::Message && same_message(m, &self.msgs[**k].v)
            })
            .count();
        self.path.truncate(common);
        for m in msgs.iter().skip(common) {
            let prev = self.path.last().copied();
            self.path.push(self.msgs.len());
            self.msgs.push(Msg {
                v: m.clone(),
                line,
                prev,
                gap: false,
                kind: Kind::Message,
            });
        }
    }

    /// A recorded response: an assistant message, or an API error for the last request.
    fn response(&mut self, body: &Value, status: Option<u64>, line: u64, gap: bool) {
        let is_error = status.is_some_and(|s| s >= 400)
            || body.get("type").and_then(Value::as_str) == Some("error");
        if is_error {
            self.api_error(body, status, line);
            return;
        }
        let mut v = body.clone();
        if let Value::Object(o) = &mut v {
            o.entry("role").or_insert_with(|| json!("assistant"));
        }
        // vercel/ai steps repeat the last response as `final`.
        if let Some(&k) = self.path.last()
            && v.get("id").is_some()
            && self.msgs[k].v.get("id") == v.get("id")
        {
            return;
        }
        let prev = self.path.last().copied();
        self.path.push(self.msgs.len());
        self.msgs.push(Msg {
            v,
            line,
            prev,
            gap,
            kind: Kind::Message,
        });
    }

    fn api_error(&mut self, body: &Value, status: Option<u64>, line: u64) {
        let err = body.get("error").unwrap_or(body);
        let mut p = Map::new();
        let code = err
            .get("type")
            .and_then(Value::as_str)
            .filter(|t| *t != "error")
            .map_or_else(
                || status.map_or_else(|| "api_error".to_owned(), |s| format!("http_{s}")),
                str::to_owned,
            );
        p.insert("error_code".into(), json!(code));
        let message = err
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| compact(body), str::to_owned);
        p.insert("message".into(), json!(message));
        p.insert("severity".into(), json!("error"));
        if let Some(s) = status {
            p.insert("http_status".into(), json!(s));
        }
        if let Some(id) = body.get("request_id") {
            p.insert("request_id".into(), id.clone());
        }
        let (req_line, attempt, first) = self
            .last
            .as_ref()
            .map_or((line, 1, line), |l| (l.line, l.attempt, l.first_line));
        p.insert("request_line".into(), json!(req_line));
        p.insert("attempt".into(), json!(attempt));
        if attempt > 1 {
            p.insert("retry_of_line".into(), json!(first));
        }
        let idx = self.msgs.len();
        if let Some(l) = self.last.as_mut() {
            l.error = Some(idx);
        }
        self.msgs.push(Msg {
            v: Value::Null,
            line,
            prev: self.path.last().copied(),
            gap: false,
            kind: Kind::ApiError(p),
        });
    }

    fn value(&mut self, v: &Value, lines: &[u64], line: u64, out: &mut Vec<Decoded>) {
        let at = |i: usize| lines.get(i).copied().unwrap_or(i as u64 + 1);
        match v {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.value(item, &[], at(i), out);
                }
            }
            Value::Object(o) if o.contains_key("interactions") => {
                if let Some(Value::Array(items)) = o.get("interactions") {
                    for (i, item) in items.iter().enumerate() {
                        self.value(item, &[], at(i), out);
                    }
                }
            }
            Value::Object(o) if o.get("steps").is_some_and(Value::is_array) => {
                // vercel/ai: the responses of each step; the requests are not recorded.
                let steps = o
                    .get("steps")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten();
                for (i, s) in steps.enumerate() {
                    match s.get("body").or_else(|| s.get("response")) {
                        Some(b @ Value::Object(_)) => self.response(b, None, at(i), i > 0),
                        _ => unrecognised(out, at(i), s),
                    }
                }
                if let Some(f @ Value::Object(_)) = o.get("final") {
                    let n = o.get("steps").and_then(Value::as_array).map_or(0, Vec::len);
                    self.response(f, None, at(n), n > 0);
                }
            }
            Value::Object(o) if o.contains_key("request") || o.contains_key("response") => {
                if let Some(body) = o.get("request").and_then(|r| body_of(r, line, out)) {
                    self.request(&body, line);
                }
                if let Some(r) = o.get("response") {
                    let status = status_of(r);
                    match body_of(r, line, out) {
                        Some(body) => self.response(&body, status, line, false),
                        None if status.is_some_and(|s| s >= 400) => {
                            self.api_error(&json!({}), status, line);
                        }
                        None => {}
                    }
                }
            }
            Value::Object(o) if o.contains_key("messages") => self.request(v, line),
            Value::Object(o) if o.contains_key("role") || o.contains_key("content") => {
                self.response(v, None, line, false);
            }
            other => unrecognised(out, line, other),
        }
    }
}

fn unrecognised(out: &mut Vec<Decoded>, line: u64, v: &Value) {
    let msg = format!("not an Anthropic message or body: {}", compact(v));
    out.push(Decoded::Finding(Finding::new(
        Level::Warning,
        code::UNRECOGNISED_RECORD,
        "SPEC 5",
        line,
        msg,
    )));
}

/// The HTTP status of a recorded response: `status_code` (SDK snapshots), `status.code` (VCR).
fn status_of(r: &Value) -> Option<u64> {
    r.get("status_code")
        .or_else(|| r.get("status").and_then(|s| s.get("code")))
        .or_else(|| r.get("status").filter(|s| s.is_u64()))
        .and_then(Value::as_u64)
}

/// A short one-line rendering of a value for messages.
pub(crate) fn compact(v: &Value) -> String {
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

/// 1-based lines where the elements of the document's top-level array start (or, for an object,
/// of its `steps` array), found by a small scan of the JSON text. Empty when there is none.
fn element_lines(text: &str) -> Vec<u64> {
    let mut lines = Vec::new();
    let mut line = 1u64;
    let mut depth = 0usize;
    let mut in_str = false;
    let mut esc = false;
    // Depth of the array whose elements are wanted; the last key read at depth 1.
    let mut target: Option<usize> = None;
    let mut key = String::new();
    let mut reading_key = false;
    let mut expect_elem = false;
    let mut top_is_object = false;
    for c in text.chars() {
        if c == '\n' {
            line += 1;
        }
        if in_str {
            if esc {
                esc = false;
            } else if c == '\\' {
                esc = true;
            } else if c == '"' {
                in_str = false;
                reading_key = false;
            } else if reading_key && key.len() < 16 {
                key.push(c);
            }
            continue;
        }
        if c.is_whitespace() {
            continue;
        }
        if expect_elem && Some(depth) == target && c != ']' {
            lines.push(line);
            expect_elem = false;
        }
        match c {
            '"' => {
                in_str = true;
                if depth == 1 && top_is_object {
                    key.clear();
                    reading_key = true;
                }
            }
            '[' | '{' => {
                if depth == 0 {
                    top_is_object = c == '{';
                    if c == '[' {
                        target = Some(1);
                    }
                } else if depth == 1 && top_is_object && c == '[' && key == "steps" {
                    target = Some(2);
                }
                depth += 1;
                if Some(depth) == target && c == '[' {
                    expect_elem = true;
                }
            }
            ']' | '}' => {
                if Some(depth) == target && c == ']' {
                    return lines;
                }
                depth = depth.saturating_sub(1);
            }
            ',' if Some(depth) == target => expect_elem = true,
            _ => {}
        }
    }
    lines
}

/// 1-based lines of a YAML cassette's `interactions:` items (`- ` at the start of a line).
fn yaml_item_lines(text: &str) -> Vec<u64> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("- "))
        .map(|(i, _)| i as u64 + 1)
        .collect()
}

/// Deepest nesting a YAML cassette may have (`[`/`{`, or `- ` opened on one line). The YAML
/// reader's time grows with the square of it before its own recursion limit answers (100,000
/// levels in 200 KB took 22 s; second attack of issue 14); recorded API bodies nest a few levels.
pub const MAX_YAML_FLOW_DEPTH: usize = 128;

/// The line at which `text`'s collections first nest deeper than `limit`, if they do: flow
/// collections (`[`, `{`; brackets inside quoted scalars and comments do not count) or block
/// sequences or explicit keys opened on one line (`- - - …`, `? ? …`: 4M of them took 1.8 GB).
/// Linear.
fn flow_nesting_over(text: &str, limit: usize) -> Option<u64> {
    for (i, l) in text.lines().enumerate() {
        let (mut rest, mut n) = (l.trim_start(), 0);
        // `- ` (sequence entry) and `? ` (explicit key; third attack) both open a level.
        while let Some(r) = rest.strip_prefix(['-', '?']) {
            if !(r.is_empty() || r.starts_with([' ', '\t'])) {
                break;
            }
            n += 1;
            if n > limit {
                return Some(i as u64 + 1);
            }
            rest = r.trim_start();
        }
    }
    let (mut depth, mut line) = (0usize, 1u64);
    let mut quote: Option<u8> = None;
    let mut comment = false;
    let mut prev = b'\n';
    for &b in text.as_bytes() {
        match (quote, b) {
            // Quoted scalars may span lines: the quote state is kept.
            (_, b'\n') => {
                line += 1;
                comment = false;
            }
            _ if comment => {}
            // `\"` inside a double-quoted scalar does not end it.
            (Some(b'"'), b'"') if prev == b'\\' => {}
            (Some(q), c) if c == q => quote = None,
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'#') if prev == b' ' || prev == b'\t' || prev == b'\n' => comment = true,
            (None, b'[' | b'{') => {
                depth += 1;
                if depth > limit {
                    return Some(line);
                }
            }
            (None, b']' | b'}') => depth = depth.saturating_sub(1),
            // Inside a quoted scalar, or any other byte.
            _ => {}
        }
        prev = b;
    }
    None
}

/// One JSONL line as a JSON object; anything else is a malformed-line item at `line` in `out`
/// (not JSON, or JSON that is not an object). Shared by the recording and stream readers.
pub(crate) fn object_line(line: u64, text: &str, out: &mut Vec<Decoded>) -> Option<Value> {
    let kind = match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => return Some(v),
        Ok(_) => ParseErrorKind::NotObject,
        Err(e) => ParseErrorKind::Json(e.to_string()),
    };
    out.push(Decoded::Malformed(ParseError::new(line, kind, text)));
    None
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
    // Lines skipped by the trim, so element lines count from the file's first line.
    let skipped = text[..text.len() - trimmed.len()]
        .bytes()
        .filter(|&b| b == b'\n')
        .count() as u64;
    let mut conv = Conv::default();
    if trimmed.starts_with("interactions:") || trimmed.starts_with("---") {
        if let Some(line) = flow_nesting_over(trimmed, MAX_YAML_FLOW_DEPTH) {
            out.push(Decoded::Malformed(ParseError::new(
                line,
                ParseErrorKind::Yaml(format!(
                    "collections nested deeper than {MAX_YAML_FLOW_DEPTH} levels; not read"
                )),
                trimmed,
            )));
            return;
        }
        match serde_yaml_ng::from_str::<Value>(trimmed) {
            Ok(v) => {
                let lines: Vec<u64> = yaml_item_lines(trimmed)
                    .into_iter()
                    .map(|l| l + skipped)
                    .collect();
                conv.value(&v, &lines, 1 + skipped, out);
            }
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
        let lines: Vec<u64> = element_lines(trimmed)
            .into_iter()
            .map(|l| l + skipped)
            .collect();
        conv.value(&v, &lines, 1 + skipped, out);
    } else {
        for (i, l) in text.lines().enumerate() {
            if l.trim().is_empty() {
                continue;
            }
            let line = i as u64 + 1;
            if let Some(v) = object_line(line, l, out) {
                conv.value(&v, &[], line, out);
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
    /// Reported as unanswered already (or its problem reported otherwise: no second finding).
    reported: bool,
    /// A server tool whose turn went on (a user message followed) without its result (B14).
    continued: bool,
    input: Value,
    /// A server tool this call was made from (`caller.tool_id`).
    caller: Option<String>,
    /// The computer or browser toolset this call is a member of (`toolset_name`, or inferred),
    /// and the `toolset_name` its result must echo (the call's own, as written, when it has one).
    toolset: Option<(String, String)>,
}

/// Maps messages to frames and checks the SPEC 5 pairing rules. Used whole
/// ([`decode_text`]) and incrementally by the stream decoder (`begin_response`,
/// `response_block`, `response_end`, `end`).
#[derive(Debug, Default)]
pub struct Mapper {
    seq: u64,
    uses: HashMap<String, UseInfo>,
    order: Vec<String>,
    /// Client tool uses of each assistant message (by entry index), in order.
    pending: HashMap<usize, Vec<String>>,
    /// Client tool uses of the last response (streaming: entries have no index).
    last_uses: Vec<String>,
    /// Categories from the request tools' `type` (name → category).
    categories: HashMap<String, Category>,
    /// Responses only (a stream, vercel steps): results are never in the input.
    responses_only: bool,
    /// The current request tool list's (name, `type`) pairs (for toolset members, SPEC 5).
    declared: Vec<(String, String)>,
    /// Server tool uses of each assistant message (by entry index), and of the last response.
    server_pending: HashMap<usize, Vec<String>>,
    last_server: Vec<String>,
    /// Every `tool_use_id` some `tool_result` block of the conversation names (whatever its
    /// place): a use answered late or in the wrong message is reported by its result's finding
    /// (`tool-result-not-next`, `tool-result-in-assistant`), not also as unanswered.
    result_ids: HashSet<String>,
}

impl Mapper {
    /// A mapper for a stream of responses.
    pub(crate) fn streaming() -> Self {
        Self {
            responses_only: true,
            ..Self::default()
        }
    }

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

    fn finding(
        out: &mut Vec<Decoded>,
        level: Level,
        c: &'static str,
        line: u64,
        id: &str,
        msg: String,
    ) {
        let f = Finding::new(level, c, "SPEC 5", line, msg);
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
        for m in &conv.msgs {
            let blocks = m.v.get("content").and_then(Value::as_array);
            for b in blocks.into_iter().flatten() {
                if b.get("type").and_then(Value::as_str) == Some("tool_result")
                    && let Some(id) = b.get("tool_use_id").and_then(Value::as_str)
                {
                    self.result_ids.insert(id.to_owned());
                }
            }
        }
        let mut answered_from: HashSet<usize> = HashSet::new();
        for (k, m) in conv.msgs.iter().enumerate() {
            self.publish_at(conv, k, out);
            if let Kind::ApiError(p) = &m.kind {
                self.api_error(p, m, out);
                continue;
            }
            let prev = m.prev;
            let role = m.v.get("role").and_then(Value::as_str).unwrap_or("");
            if role == "assistant" {
                if let Some(p) = prev
                    && answered_from.insert(p)
                {
                    let why = if m.gap {
                        Why::NotRecorded
                    } else {
                        Why::NotUserNext
                    };
                    self.close(p, out, why);
                }
                self.assistant(m, out);
                self.pending.insert(k, std::mem::take(&mut self.last_uses));
                self.server_pending
                    .insert(k, std::mem::take(&mut self.last_server));
            } else {
                let expected: Vec<String> = prev
                    .and_then(|p| self.pending.get(&p).cloned())
                    .unwrap_or_default();
                let servers: Vec<String> = prev
                    .and_then(|p| self.server_pending.get(&p).cloned())
                    .unwrap_or_default();
                self.user(m, &expected, &servers, out);
                if let Some(p) = prev
                    && answered_from.insert(p)
                {
                    self.close(p, out, Why::NoResultNext);
                }
            }
        }
        self.publish_at(conv, conv.msgs.len(), out);
        let mut leaves: Vec<usize> = self.pending.keys().copied().collect();
        leaves.sort_unstable();
        for k in leaves {
            if !answered_from.contains(&k) {
                self.close(k, out, Why::Ends);
            }
        }
        self.end(out);
    }

    /// Reports the client uses of entry `k` that are still unanswered.
    fn close(&mut self, k: usize, out: &mut Vec<Decoded>, why: Why) {
        let ids = self.pending.get(&k).cloned().unwrap_or_default();
        self.close_ids(&ids, out, why);
    }

    /// One finding per problem: a use without an id cannot be answered (its request's
    /// `missing-field` says so); a use whose result comes later, or in an assistant message, is
    /// reported by that result's finding, unless the next user message answered another call
    /// of the same turn (then that message is what is incomplete, B20, and the late result is
    /// not reported again).
    fn close_ids(&mut self, ids: &[String], out: &mut Vec<Decoded>, why: Why) {
        let some_answered = ids
            .iter()
            .any(|i| self.uses.get(i).is_some_and(|u| u.answered));
        for id in ids {
            let late = matches!(why, Why::NotUserNext | Why::NoResultNext)
                && self.result_ids.contains(id)
                && !some_answered;
            let Some(u) = self.uses.get_mut(id) else {
                continue;
            };
            if u.answered || u.reported || late {
                continue;
            }
            u.reported = true;
            if id.is_empty() {
                continue;
            }
            let (level, text) = match why {
                Why::NotUserNext => (
                    Level::Error,
                    "the next message is not a user message with its result (the API answers 400)",
                ),
                Why::NoResultNext => (
                    Level::Error,
                    "the next user message has no tool_result for it (the API answers 400)",
                ),
                Why::Ends => (Level::Warning, "the input ends without its result"),
                Why::NotRecorded => (
                    Level::Info,
                    "its result is not recorded: the input keeps only the responses, and the \
                     next response shows that the client answered it",
                ),
            };
            let msg = format!("{} call {id:?} is not answered: {text}", u.name);
            let line = u.line;
            Self::finding(out, level, code::TOOL_USE_WITHOUT_RESULT, line, id, msg);
        }
    }

    /// End of input: server tools without a result.
    pub(crate) fn end(&mut self, out: &mut Vec<Decoded>) {
        if self.responses_only {
            let ids = std::mem::take(&mut self.last_uses);
            self.close_ids(&ids, out, Why::Ends);
        }
        for id in &self.order {
            let Some(u) = self.uses.get(id) else { continue };
            if !u.server || u.answered || u.reported {
                continue;
            }
            let inner = self
                .uses
                .values()
                .filter(|c| c.caller.as_deref() == Some(id.as_str()))
                .count();
            let (level, msg) = if inner == 0 && u.continued {
                (
                    Level::Info,
                    format!(
                        "server tool {} call {id:?} has no result in the input; the \
                         conversation went on without it (allowed while a server tool runs, \
                         SPEC 5)",
                        u.name
                    ),
                )
            } else if inner > 0 {
                (
                    Level::Info,
                    format!(
                        "server tool {} call {id:?} is still running when the input ends \
                         ({inner} client call{} made from inside it); no result yet",
                        u.name,
                        if inner == 1 { "" } else { "s" }
                    ),
                )
            } else {
                (
                    Level::Warning,
                    format!("server tool {} call {id:?} has no result", u.name),
                )
            };
            Self::finding(out, level, code::TOOL_USE_WITHOUT_RESULT, u.line, id, msg);
        }
    }

    /// Streaming: a new response starts; the previous response's client calls were answered
    /// off the record when `after_previous`.
    pub(crate) fn begin_response(
        &mut self,
        _m: &Msg,
        after_previous: bool,
        out: &mut Vec<Decoded>,
    ) {
        let ids = std::mem::take(&mut self.last_uses);
        if after_previous {
            self.close_ids(&ids, out, Why::NotRecorded);
        }
    }

    /// Streaming: one complete content block of the current response.
    pub(crate) fn response_block(&mut self, b: &Value, m: &Msg, out: &mut Vec<Decoded>) {
        self.assistant_block(b, m, out);
    }

    /// Streaming: the response is complete (usage, turn end).
    pub(crate) fn response_end(&mut self, m: &Msg, out: &mut Vec<Decoded>) {
        self.assistant_tail(m, out);
    }

    /// A recorded HTTP error or a stream `error` event (`in_stream`): a finding and a
    /// `session.error` frame.
    pub(crate) fn api_error(&mut self, p: &Map<String, Value>, m: &Msg, out: &mut Vec<Decoded>) {
        let status = p.get("http_status").and_then(Value::as_u64);
        let code_s = p.get("error_code").and_then(Value::as_str).unwrap_or("");
        let transient = status
            .is_none_or(|s| !(400..500).contains(&s) || [408, 409, 429].contains(&s))
            && !matches!(
                code_s,
                "invalid_request_error"
                    | "authentication_error"
                    | "permission_error"
                    | "not_found_error"
            );
        let level = if transient {
            Level::Warning
        } else {
            Level::Error
        };
        let attempt = p.get("attempt").and_then(Value::as_u64).unwrap_or(1);
        let mut how = format!("attempt {attempt}");
        if attempt > 1 {
            let first = p.get("retry_of_line").and_then(Value::as_u64).unwrap_or(0);
            let _ = write!(how, ", a retry of line {first}");
        }
        match p.get("retried_on_line").and_then(Value::as_u64) {
            Some(r) => {
                let _ = write!(how, "; retried on line {r}");
            }
            None => how.push_str("; not retried"),
        }
        let mut text = p
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if text.len() > 240 {
            let mut n = 240;
            while !text.is_char_boundary(n) {
                n -= 1;
            }
            text.truncate(n);
            text.push('…');
        }
        let msg = if p.get("in_stream") == Some(&Value::Bool(true)) {
            format!("the stream reported {code_s}: {text}")
        } else {
            format!(
                "the API answered {}{} to the request on line {} ({how}): {text}",
                status.map_or_else(String::new, |s| format!("HTTP {s} ")),
                code_s,
                p.get("request_line")
                    .and_then(Value::as_u64)
                    .unwrap_or(m.line),
            )
        };
        Self::finding(out, level, code::API_ERROR, m.line, "", msg);
        self.generic(out, FrameType::SessionError, p.clone(), m);
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
        let m = Msg::new(Value::Null, conv.msgs.first().map_or(1, |m| m.line));
        let mut f = self.frame(FrameType::ToolCatalogPublish, body, &m, &[]);
        f.envelope
            .metadata
            .insert("rawpv_derived".into(), Value::Bool(true));
        out.push(Decoded::frame(f));
    }

    /// SPEC 5 (B04): a client tool of a request's `tools` (no `type`, or `custom`) declares an
    /// `input_schema`, an object; a missing one is a missing-field warning, another type a
    /// wrong-field-type warning (the entry is kept without it: its calls are not validated).
    fn check_schemas(tools: &Value, line: u64, out: &mut Vec<Decoded>) {
        for t in tools.as_array().into_iter().flatten() {
            if t.get("type").is_some_and(|ty| ty != "custom") {
                continue;
            }
            let name = t.get("name").and_then(Value::as_str).unwrap_or("(unnamed)");
            let name = crate::render::text::visible(name);
            let (c, msg) = match t.get("input_schema") {
                Some(Value::Object(_)) => continue,
                None => (
                    crate::session::check::code::MISSING_FIELD,
                    format!(
                        "tool {name} of the request's tools has no input_schema (the API \
                         requires one)"
                    ),
                ),
                Some(other) => (
                    code::WRONG_FIELD_TYPE,
                    format!(
                        "tool {name}'s input_schema is {}, not an object; its calls are not \
                         checked against it",
                        crate::check::json_kind(other)
                    ),
                ),
            };
            Self::finding(out, Level::Warning, c, line, "", msg);
        }
    }

    /// Publishes the request tool lists that became current before message `k`.
    fn publish_at(&mut self, conv: &Conv, k: usize, out: &mut Vec<Decoded>) {
        for (tools, line, _) in conv.catalogs.iter().filter(|(_, _, at)| *at == k) {
            Self::check_schemas(tools, *line, out);
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
            self.declared.clear();
            for t in &tools {
                if let Some(c) = &t.category {
                    self.categories.insert(t.name.clone(), c.clone());
                }
                let ty = t.extra.get("type").and_then(Value::as_str).unwrap_or("");
                self.declared.push((t.name.clone(), ty.to_owned()));
            }
            let body = Body::Catalog(CatalogPublish {
                tools,
                diagnostics: Vec::new(),
                extra: Map::new(),
            });
            let m = Msg::new(Value::Null, *line);
            let f = self.frame(FrameType::ToolCatalogPublish, body, &m, &[]);
            out.push(Decoded::frame(f));
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
        self.assistant_tail(m, out);
    }

    fn assistant_tail(&mut self, m: &Msg, out: &mut Vec<Decoded>) {
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
        // B01: `stop_reason: tool_use` and the response's tool_use blocks go together.
        if let Some(sr) = m.v.get("stop_reason").and_then(Value::as_str) {
            let uses =
                m.v.get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                    .count();
            let (c, msg) = match sr {
                "tool_use" if uses == 0 => (
                    code::STOP_REASON_WITHOUT_TOOL_USE,
                    "response has stop_reason tool_use but no tool_use block".to_owned(),
                ),
                "end_turn" | "stop_sequence" if uses > 0 => (
                    code::TOOL_USE_WITHOUT_STOP_REASON,
                    format!(
                        "response holds {} but its stop_reason is {sr}, not tool_use",
                        crate::fmt::plural(uses, "tool_use block")
                    ),
                ),
                _ => ("", String::new()),
            };
            if !c.is_empty() {
                Self::finding(out, Level::Warning, c, m.line, "", msg);
            }
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
                let citations = b
                    .get("citations")
                    .and_then(Value::as_array)
                    .filter(|c| !c.is_empty());
                // Whitespace-only blocks carry nothing to show.
                if !text.trim().is_empty() || citations.is_some() {
                    let mut p = obj([("text", json!(text))]);
                    if let Some(c) = citations {
                        p.insert("text".into(), json!(with_footnotes(text, c)));
                        p.insert("citations".into(), Value::Array(c.clone()));
                    }
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
            "tool_result" => {
                // B06: the reply is a user message. The result still answers its call when
                // it has no other answer; else it is kept as a block.
                let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
                let msg = format!(
                    "tool_result for {id:?} inside an assistant message: results are sent in a \
                     user message (the API answers 400)"
                );
                Self::finding(
                    out,
                    Level::Error,
                    code::TOOL_RESULT_IN_ASSISTANT,
                    m.line,
                    id,
                    msg,
                );
                if self.uses.get(id).is_some_and(|u| !u.answered) {
                    self.tool_result(b, m, None, out);
                } else {
                    let p = obj([("block", b.clone())]);
                    self.generic(out, FrameType::from_wire("x-anthropic.block"), p, m);
                }
            }
            t if t.ends_with("_tool_result") => self.tool_result(b, m, None, out),
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
        let server = ty != "tool_use";
        // A client tool called from inside a server tool (programmatic tool calling).
        let mut chain = Vec::new();
        let mut caller = None;
        if let Some(c) = b.get("caller")
            && let Some(tool_id) = c.get("tool_id").and_then(Value::as_str)
        {
            caller = Some(tool_id.to_owned());
            chain.push(Delegation {
                agent_id: c
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
        let toolset = self.toolset_of(b, &name, &id, m, out);
        if let Some(t) = &toolset {
            extra.insert("toolset_name".into(), json!(t));
        }
        // Required by the Messages API (B04): an absent input stays absent, so the request's
        // check says so (missing-field) and nothing validates a stand-in against the schema.
        let given = b.get("input").cloned();
        let input = given.clone().unwrap_or_else(|| json!({}));
        let req = ToolInvokeRequest {
            invocation_id: Some(id.clone()),
            tool_name: Some(name.clone()),
            input: given,
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
                reported: false,
                input,
                caller,
                continued: false,
                toolset: toolset.map(|t| {
                    let echo = b
                        .get("toolset_name")
                        .and_then(Value::as_str)
                        .map_or_else(|| t.clone(), str::to_owned);
                    (t, echo)
                }),
            },
        );
        if server {
            self.last_server.push(id);
        } else {
            self.last_uses.push(id);
        }
    }

    /// A user message after the assistant message whose client uses are `expected` and whose
    /// server uses are `servers`.
    fn user(&mut self, m: &Msg, expected: &[String], servers: &[String], out: &mut Vec<Decoded>) {
        let blocks: Vec<Value> = match m.v.get("content") {
            Some(Value::String(s)) => vec![json!({"type": "text", "text": s})],
            Some(Value::Array(b)) => b.clone(),
            _ => Vec::new(),
        };
        let ty_of = |b: &Value| {
            b.get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let id_of = |b: &Value| {
            (b.get("tool_use_id").and_then(Value::as_str))
                .unwrap_or("")
                .to_owned()
        };
        let here: HashSet<String> = blocks.iter().map(id_of).collect();
        // B14: while a server tool of the turn has no result, only tool_result blocks.
        let unresolved: Vec<String> = (servers.iter())
            .filter(|id| !here.contains(*id) && self.uses.get(*id).is_some_and(|u| !u.answered))
            .cloned()
            .collect();
        let other = blocks
            .iter()
            .map(ty_of)
            .find(|t| t != "tool_result" && !t.ends_with("_tool_result"));
        if let (Some(first), Some(t)) = (unresolved.first(), other) {
            let name = self.uses.get(first).map_or("", |u| u.name.as_str());
            let msg = format!(
                "user message holds {} besides its tool_result blocks while server tool {name} \
                 call {first:?} has no result yet: it must hold only tool_result blocks (the \
                 API answers 400)",
                if t == "text" {
                    "text".to_owned()
                } else {
                    format!("a {} block", crate::render::text::visible(&t))
                }
            );
            Self::finding(
                out,
                Level::Error,
                code::TEXT_WITH_UNRESOLVED_SERVER_TOOL,
                m.line,
                first,
                msg,
            );
            for id in &unresolved {
                if let Some(u) = self.uses.get_mut(id) {
                    u.reported = true;
                }
            }
        }
        for id in &unresolved {
            if let Some(u) = self.uses.get_mut(id) {
                u.continued = true;
            }
        }
        // A result naming no tool_use, in the reply to a turn: the answer of that turn's use
        // without an id (its request's missing-field is the finding), or of its only use left
        // unanswered (B07: a wrong id; the result's tool-result-without-use is the finding).
        let orphans: Vec<String> = (blocks.iter())
            .filter(|b| ty_of(b) == "tool_result")
            .map(id_of)
            .filter(|id| !self.uses.contains_key(id))
            .collect();
        let left: Vec<&String> = (expected.iter())
            .filter(|e| {
                !e.is_empty()
                    && !here.contains(*e)
                    && !self.result_ids.contains(*e)
                    && self.uses.get(*e).is_some_and(|u| !u.answered)
            })
            .collect();
        let idless =
            expected.iter().any(String::is_empty) && self.uses.get("").is_some_and(|u| !u.answered);
        let stand_in: Option<String> = match (orphans.as_slice(), left.as_slice()) {
            ([_], _) if idless => Some(String::new()),
            ([_], [one]) => Some((*one).clone()),
            _ => None,
        };
        let last_result = blocks
            .iter()
            .rposition(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"));
        for (i, b) in blocks.iter().enumerate() {
            let ty = b.get("type").and_then(Value::as_str).unwrap_or("");
            // B13: every other block (text, image, document, …) comes after all the results.
            if ty != "tool_result" && last_result.is_some_and(|r| i < r) {
                let what = if ty == "text" {
                    "text".to_owned()
                } else {
                    let a = if ty.starts_with(['a', 'e', 'i', 'o', 'u']) {
                        "an"
                    } else {
                        "a"
                    };
                    format!("{a} {} block", crate::render::text::visible(ty))
                };
                let msg = format!(
                    "{what} placed before the tool_result blocks of this message (results \
                     must come first; the API answers 400)"
                );
                Self::finding(
                    out,
                    Level::Error,
                    code::TEXT_BEFORE_TOOL_RESULT,
                    m.line,
                    "",
                    msg,
                );
            }
            match ty {
                "text" => {
                    let p = obj([
                        ("text", b.get("text").cloned().unwrap_or_else(|| json!(""))),
                        ("input_type", json!("text")),
                    ]);
                    self.generic(out, FrameType::ControlPromptRequest, p, m);
                }
                "tool_result" => {
                    let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
                    let unknown = !self.uses.contains_key(id);
                    let stand = stand_in.as_deref().filter(|_| unknown);
                    if !expected.iter().any(|e| e == id) {
                        let found = match self.uses.get(id) {
                            Some(u) if u.server => Some((
                                code::SERVER_TOOL_RESULT_IN_USER_MESSAGE,
                                format!(
                                    "tool_result for server tool {} call {id:?} in a user \
                                     message: server tools run inside the API and their results \
                                     sit in the assistant message",
                                    u.name
                                ),
                            )),
                            // Reported as unanswered already (B20): one finding.
                            Some(u) if u.reported => None,
                            Some(u) => Some((
                                code::TOOL_RESULT_NOT_NEXT,
                                format!(
                                    "tool_result for {id:?} does not directly follow its \
                                     tool_use (the {} call on line {}): an orphaned result, \
                                     which the API answers with 400",
                                    u.name, u.line
                                ),
                            )),
                            // The answer of the turn's use without an id.
                            None if stand == Some("") => None,
                            None => Some((
                                code::TOOL_RESULT_WITHOUT_USE,
                                match stand.and_then(|s| self.uses.get(s)) {
                                    Some(u) => format!(
                                        "tool_result for {id:?}, which no tool_use requested (the \
                                         API answers 400); taken as the answer of the {} call \
                                         {:?}, the one of the turn left without a result",
                                        u.name,
                                        stand.unwrap_or_default()
                                    ),
                                    None => format!(
                                        "tool_result for {id:?}, which no tool_use requested (the \
                                         API answers 400)"
                                    ),
                                },
                            )),
                        };
                        if let Some((c, msg)) = found {
                            Self::finding(out, Level::Error, c, m.line, id, msg);
                        }
                    }
                    self.tool_result(b, m, stand, out);
                }
                t if t.ends_with("_tool_result") => {
                    let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
                    let msg = format!(
                        "{} for {id:?} in a user message: server tools run inside the API and \
                         their results sit in the assistant message",
                        crate::render::text::visible(t)
                    );
                    Self::finding(
                        out,
                        Level::Error,
                        code::SERVER_TOOL_RESULT_IN_USER_MESSAGE,
                        m.line,
                        id,
                        msg,
                    );
                    self.tool_result(b, m, None, out);
                }
                _ => {
                    let p = obj([("block", b.clone())]);
                    self.generic(out, FrameType::from_wire("x-anthropic.block"), p, m);
                }
            }
        }
    }

    /// The toolsets the current request tool list declares (items typed `computer_*` or
    /// `browser_*`), by name.
    fn toolsets(&self) -> Vec<String> {
        self.declared
            .iter()
            .filter(|(_, ty)| ty.starts_with("computer_") || ty.starts_with("browser_"))
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// The toolset of `tool_use` block `b` naming `name` (SPEC 5, B05): its `toolset_name`
    /// (`computer` or `browser`; another value is an unknown-enum-value error, and the call is
    /// read as a member of the one declared toolset, if one is), or, for a name that no request
    /// declares while one toolset is declared, that toolset with a warning that the field is
    /// missing.
    fn toolset_of(
        &self,
        b: &Value,
        name: &str,
        id: &str,
        m: &Msg,
        out: &mut Vec<Decoded>,
    ) -> Option<String> {
        match b.get("toolset_name") {
            Some(Value::String(t)) if t == "computer" || t == "browser" => Some(t.clone()),
            Some(other) => {
                let msg = format!(
                    "tool_use {id:?} ({name}) has toolset_name {}, not \"computer\" or \"browser\"",
                    crate::render::text::visible(&other.to_string())
                );
                let sets = self.toolsets();
                let single = (sets.len() == 1).then(|| sets[0].clone());
                let msg = match &single {
                    Some(t) => format!("{msg}: read as a member of the {t} toolset"),
                    None => msg,
                };
                Self::finding(
                    out,
                    Level::Error,
                    crate::session::check::code::UNKNOWN_ENUM_VALUE,
                    m.line,
                    id,
                    msg,
                );
                single
            }
            None => {
                let declared = self.declared.iter().any(|(n, _)| n == name);
                let sets = self.toolsets();
                if declared || sets.len() != 1 {
                    return None;
                }
                let msg = format!(
                    "tool_use {id:?} names {name}, which no request declares, without \
                     toolset_name: read as a member of the {} toolset (members carry \
                     toolset_name)",
                    sets[0]
                );
                Self::finding(
                    out,
                    Level::Warning,
                    code::TOOLSET_NAME_MISSING,
                    m.line,
                    id,
                    msg,
                );
                sets.into_iter().next()
            }
        }
    }

    /// SPEC 5 (B10, B11) for a member's result `b`: it echoes the call's `toolset_name`, and
    /// holds only `text` and `image` blocks (a browser result also one `browser_state`).
    fn toolset_result(
        b: &Value,
        id: &str,
        (toolset, echo): &(String, String),
        m: &Msg,
        out: &mut Vec<Decoded>,
    ) {
        let (toolset, echo) = (toolset.as_str(), echo.as_str());
        let echoed = b.get("toolset_name").and_then(Value::as_str);
        if echoed != Some(echo) {
            let msg = match echoed {
                None => format!(
                    "tool_result for {id:?} (a {toolset} member) does not echo toolset_name \
                     {:?}: the API rejects it",
                    crate::render::text::visible(echo)
                ),
                Some(t) => format!(
                    "tool_result for {id:?} (a {toolset} member) has toolset_name {:?}, not \
                     {:?}: the API rejects it",
                    crate::render::text::visible(t),
                    crate::render::text::visible(echo)
                ),
            };
            Self::finding(
                out,
                Level::Error,
                code::TOOLSET_NAME_NOT_ECHOED,
                m.line,
                id,
                msg,
            );
        }
        let blocks = b.get("content").and_then(Value::as_array);
        let mut states = 0;
        let mut bad: Vec<String> = Vec::new();
        for t in blocks
            .into_iter()
            .flatten()
            .map(|x| x.get("type").and_then(Value::as_str).unwrap_or("?"))
        {
            match t {
                "text" | "image" => {}
                "browser_state" if toolset == "browser" => states += 1,
                other => bad.push(crate::render::text::visible(other)),
            }
        }
        if states > 1 {
            bad.push(format!("{states} browser_state blocks (one at most)"));
        }
        if !bad.is_empty() {
            let allowed = if toolset == "browser" {
                "text, image and one browser_state"
            } else {
                "text and image"
            };
            let msg = format!(
                "tool_result for {id:?} (a {toolset} member) holds {}: member results may \
                 hold only {allowed} blocks",
                bad.join(", ")
            );
            Self::finding(
                out,
                Level::Error,
                code::TOOLSET_RESULT_BLOCK_NOT_ALLOWED,
                m.line,
                id,
                msg,
            );
        }
    }

    /// SPEC 5 for a client `tool_result` `b`: its `content` is absent, a string, or a list of
    /// `text`, `image`, `document` and `search_result` blocks (B08, an error otherwise); an
    /// `is_error: true` result has a message (B17, a warning without one).
    fn result_content(b: &Value, id: &str, m: &Msg, out: &mut Vec<Decoded>) {
        let content = b.get("content");
        let bad = match content {
            None | Some(Value::String(_)) => None,
            Some(Value::Array(blocks)) => {
                let odd: Vec<String> = blocks
                    .iter()
                    .map(|x| x.get("type").and_then(Value::as_str).unwrap_or("?"))
                    .filter(|t| !matches!(*t, "text" | "image" | "document" | "search_result"))
                    .map(crate::render::text::visible)
                    .collect();
                (!odd.is_empty()).then(|| format!("{} blocks", odd.join(", ")))
            }
            Some(other) => Some(crate::check::json_kind(other).to_owned()),
        };
        if let Some(what) = bad {
            let msg = format!(
                "tool_result for {id:?} has content holding {what}: a string or a list of text, \
                 image, document and search_result blocks is expected"
            );
            Self::finding(
                out,
                Level::Error,
                code::INVALID_TOOL_RESULT_CONTENT,
                m.line,
                id,
                msg,
            );
        }
        let empty = match content {
            None => true,
            Some(Value::String(s)) => s.trim().is_empty(),
            Some(Value::Array(a)) => a.is_empty(),
            Some(_) => false,
        };
        if empty && b.get("is_error") == Some(&Value::Bool(true)) {
            let msg = format!(
                "tool_result for {id:?} is an error (is_error: true) without content: the \
                 model gets no message saying what went wrong"
            );
            Self::finding(
                out,
                Level::Warning,
                code::ERROR_RESULT_WITHOUT_MESSAGE,
                m.line,
                id,
                msg,
            );
        }
    }

    /// Maps a result block; `stand_in`: the use it answers when its own id names none (its
    /// name and input are that use's, and that use is answered).
    fn tool_result(&mut self, b: &Value, m: &Msg, stand_in: Option<&str>, out: &mut Vec<Decoded>) {
        let id = b
            .get("tool_use_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if let Some(t) = self.uses.get(&id).and_then(|u| u.toolset.clone()) {
            Self::toolset_result(b, &id, &t, m, out);
        } else if b.get("type").and_then(Value::as_str) == Some("tool_result") {
            Self::result_content(b, &id, m, out);
        }
        let (name, input) = self.uses.get_mut(stand_in.unwrap_or(&id)).map_or_else(
            || (String::new(), Value::Null),
            |u| {
                u.answered = true;
                (u.name.clone(), u.input.clone())
            },
        );
        let content = b.get("content");
        let content_error = content
            .and_then(|c| c.get("type"))
            .and_then(Value::as_str)
            .is_some_and(|t| t.ends_with("_error"));
        if let Some(v) = b.get("is_error").filter(|v| !v.is_boolean()) {
            // B09: a boolean; anything else is read as `false`, and said so.
            let msg = format!(
                "tool_result is_error is {}, not a boolean; read as false",
                crate::check::json_kind(v)
            );
            Self::finding(
                out,
                Level::Warning,
                code::WRONG_FIELD_TYPE,
                m.line,
                &id,
                msg,
            );
        }
        let is_error = b.get("is_error").and_then(Value::as_bool) == Some(true) || content_error;
        let category = self
            .categories
            .get(&name)
            .cloned()
            .or_else(|| known_category(&name));
        let entry = CatalogTool {
            name: name.clone(),
            category,
            ..Default::default()
        };
        let (output, shaped) = if is_error {
            (result_output(content), None)
        } else {
            shape_output(&name, &entry, &input, content)
        };
        let output_type =
            shaped.unwrap_or_else(|| expected_output_type(&name, Some(&entry), Some(&output)).0);
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

/// Why a call is reported unanswered.
#[derive(Debug, Clone, Copy)]
enum Why {
    NotUserNext,
    NoResultNext,
    Ends,
    NotRecorded,
}

/// `text` with `[n]` markers for its citations and a footnote list under it (each distinct URL
/// or document once, in order of first citation).
fn with_footnotes(text: &str, citations: &[Value]) -> String {
    let mut notes: Vec<String> = Vec::new();
    let mut marks = String::new();
    for c in citations {
        let title = c.get("title").and_then(Value::as_str).unwrap_or("");
        let place = c
            .get("url")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| {
                c.get("document_title")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .or_else(|| c.get("document_index").map(|i| format!("document {i}")))
            .unwrap_or_default();
        let note = match (title.is_empty(), place.is_empty()) {
            (false, false) => format!("{title} <{place}>"),
            (true, false) => place,
            (false, true) => title.to_owned(),
            (true, true) => compact(c),
        };
        let n = notes.iter().position(|x| *x == note).unwrap_or_else(|| {
            notes.push(note);
            notes.len() - 1
        }) + 1;
        let mark = format!("[{n}]");
        if !marks.contains(&mark) {
            marks.push_str(&mark);
        }
    }
    let mut s = text.trim_end().to_owned();
    s.push_str(&marks);
    s.push('\n');
    for (i, n) in notes.iter().enumerate() {
        let _ = write!(s, "\n[{}] {n}", i + 1);
    }
    s
}

/// A tool's category from a request `tools[]` entry's `type` (Anthropic-defined tools), else
/// from its name.
fn category_of(name: &str, ty: Option<&str>) -> Option<Category> {
    let by_type = ty.and_then(|t| {
        let c = if t.starts_with("text_editor_") || t.starts_with("memory_") {
            Category::Filesystem
        } else if t.starts_with("bash_") || t.starts_with("code_execution_") {
            Category::Shell
        } else if t.starts_with("web_search_") || t.starts_with("web_fetch_") {
            Category::Web
        } else if t.starts_with("tool_search_") {
            Category::Search
        } else if t.starts_with("computer_") {
            Category::Custom
        } else {
            return None;
        };
        Some(c)
    });
    by_type.or_else(|| known_category(name)).or(match name {
        "str_replace_based_edit_tool" | "str_replace_editor" | "text_editor_code_execution" => {
            Some(Category::Filesystem)
        }
        "bash" | "bash_code_execution" | "code_execution" => Some(Category::Shell),
        _ => None,
    })
}

/// Shapes a successful result for the renderers; `Some(type)` when the shape decides the
/// `output_type` (else SPEC 3.4 decides from the category and output).
fn shape_output(
    name: &str,
    entry: &CatalogTool,
    input: &Value,
    content: Option<&Value>,
) -> (Value, Option<OutputType>) {
    let path = input
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let command = input.get("command").and_then(Value::as_str).unwrap_or("");
    let is_editor = entry.category == Some(Category::Filesystem)
        && (name.contains("edit")
            || name.contains("text_editor")
            || input.get("command").is_some());
    let ty = content
        .and_then(|c| c.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("");
    // Server text editor results (code execution).
    match ty {
        "text_editor_code_execution_view_result" => {
            let c = content.cloned().unwrap_or(Value::Null);
            let mut m = Map::new();
            m.insert("file_path".into(), json!(path));
            for (from, to) in [
                ("content", "content"),
                ("startLine", "start_line"),
                ("numLines", "num_lines"),
                ("totalLines", "total_lines"),
            ] {
                if let Some(v) = c.get(from) {
                    m.insert(to.into(), v.clone());
                }
            }
            return (Value::Object(m), Some(OutputType::FileContent));
        }
        "text_editor_code_execution_create_result" => {
            let update = content
                .and_then(|c| c.get("is_file_update"))
                .and_then(Value::as_bool)
                == Some(true);
            let text = input.get("file_text").cloned().unwrap_or_else(|| json!(""));
            let kind = if update { "update" } else { "create" };
            let v = json!({"file_path": path, "content": text, "type": kind});
            return (v, Some(OutputType::Diff));
        }
        "text_editor_code_execution_str_replace_result" => {
            let c = content.cloned().unwrap_or(Value::Null);
            if let Some(lines) = c.get("lines").filter(|l| l.is_array()) {
                let hunk = json!({
                    "old_start": c.get("oldStart").cloned().unwrap_or_else(|| json!(1)),
                    "old_lines": c.get("oldLines").cloned().unwrap_or_else(|| json!(0)),
                    "new_start": c.get("newStart").cloned().unwrap_or_else(|| json!(1)),
                    "new_lines": c.get("newLines").cloned().unwrap_or_else(|| json!(0)),
                    "lines": lines,
                });
                let v = json!({"file_path": path, "structured_patch": [hunk]});
                return (v, Some(OutputType::Diff));
            }
            let v = json!({"file_path": path, "old_string": input.get("old_str").cloned().unwrap_or_else(|| json!("")), "new_string": input.get("new_str").cloned().unwrap_or_else(|| json!(""))});
            return (v, Some(OutputType::Diff));
        }
        "code_execution_result" | "bash_code_execution_result" => {
            let c = content.cloned().unwrap_or(Value::Null);
            let mut m = Map::new();
            for (from, to) in [
                ("stdout", "stdout"),
                ("stderr", "stderr"),
                ("return_code", "exit_code"),
            ] {
                if let Some(v) = c.get(from) {
                    m.insert(to.into(), v.clone());
                }
            }
            return (Value::Object(m), Some(OutputType::Text));
        }
        _ => {}
    }
    // The client text editor: the result is the client's message; the input says what changed.
    if is_editor && !path.is_empty() {
        let text = result_text(content);
        match command {
            "view" => {
                let mut v = json!({"file_path": path, "content": text});
                if let Some((start, body)) = unnumbered(&text) {
                    v["content"] = json!(body);
                    v["start_line"] = json!(start);
                }
                return (v, Some(OutputType::FileContent));
            }
            "create" => {
                let body = input.get("file_text").cloned().unwrap_or_else(|| json!(""));
                let v =
                    json!({"file_path": path, "content": body, "type": "create", "message": text});
                return (v, Some(OutputType::Diff));
            }
            "str_replace" => {
                let v = json!({
                    "file_path": path,
                    "old_string": input.get("old_str").cloned().unwrap_or_else(|| json!("")),
                    "new_string": input.get("new_str").cloned().unwrap_or_else(|| json!("")),
                    "message": text,
                });
                return (v, Some(OutputType::Diff));
            }
            "insert" => {
                let v = json!({
                    "file_path": path,
                    "old_string": "",
                    "new_string": input.get("insert_text").or_else(|| input.get("new_str")).cloned().unwrap_or_else(|| json!("")),
                    "message": text,
                });
                return (v, Some(OutputType::Diff));
            }
            _ => {}
        }
    }
    (result_output(content), None)
}

/// A `view` result numbered `N: text` on every line (the text editor's form): the first number
/// and the text without the numbers; `None` when a line is not numbered that way.
fn unnumbered(text: &str) -> Option<(u64, String)> {
    let mut start = None;
    let mut body = Vec::new();
    for l in text.lines() {
        let t = l.trim_start();
        let digits = t.bytes().take_while(u8::is_ascii_digit).count();
        let rest = t[digits..]
            .strip_prefix(": ")
            .or_else(|| t[digits..].strip_prefix(':'))?;
        if digits == 0 {
            return None;
        }
        start.get_or_insert_with(|| t[..digits].parse::<u64>().unwrap_or(1));
        body.push(rest);
    }
    Some((start?, body.join("\n")))
}

/// A `document` or `image` block as an output: a text document as its text, anything else as a
/// media reference `{kind, name, media_type, uri?, size?}` (the text renderer shows it by its
/// media type; `output_type` stays what SPEC 3.4 gives).
fn document_output(b: &Value) -> Option<Value> {
    let ty = b.get("type").and_then(Value::as_str)?;
    if ty != "document" && ty != "image" {
        return None;
    }
    let src = b.get("source").cloned().unwrap_or(Value::Null);
    let src_ty = src.get("type").and_then(Value::as_str).unwrap_or("");
    let url = src.get("url").and_then(Value::as_str);
    let mut media = src
        .get("media_type")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if media.is_none()
        && let Some(u) = url
    {
        let lower = u.to_ascii_lowercase();
        let ext = lower.rsplit('.').next().unwrap_or("");
        media = match ext {
            "pdf" => Some("application/pdf".into()),
            "png" => Some("image/png".into()),
            "jpg" | "jpeg" => Some("image/jpeg".into()),
            "gif" => Some("image/gif".into()),
            "webp" => Some("image/webp".into()),
            "txt" => Some("text/plain".into()),
            _ => None,
        };
    }
    if src_ty == "text" || (src_ty == "content" && ty == "document") {
        let text = match src.get("data") {
            Some(Value::String(s)) => s.clone(),
            _ => result_text(src.get("content")),
        };
        return Some(Value::String(text));
    }
    let mut m = Map::new();
    m.insert("kind".into(), json!(ty));
    let name = b
        .get("title")
        .and_then(Value::as_str)
        .or(url)
        .or_else(|| src.get("file_id").and_then(Value::as_str))
        .unwrap_or(ty);
    m.insert("name".into(), json!(name));
    m.insert(
        "media_type".into(),
        json!(media.unwrap_or_else(|| format!("{ty} ({src_ty})"))),
    );
    if let Some(u) = url {
        m.insert("uri".into(), json!(u));
    }
    if let Some(Value::String(d)) = src.get("data") {
        m.insert("size".into(), json!(d.len() / 4 * 3));
    }
    if let Some(c) = b.get("context").and_then(Value::as_str) {
        m.insert("context".into(), json!(c));
    }
    Some(Value::Object(m))
}

/// A result's output: text content as one string; a lone document or image by its media type
/// ([`document_output`]); mixed blocks as text with a line per document, image or search
/// result; web search results as `{results: [{title, url}]}`; an `*_error` content as its
/// error code.
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
            if blocks.len() == 1
                && let Some(v) = document_output(&blocks[0])
            {
                return v;
            }
            let known = blocks.iter().all(|b| {
                matches!(
                    b.get("type").and_then(Value::as_str),
                    Some("text" | "document" | "image" | "search_result")
                )
            });
            if !known {
                return Value::Array(blocks.clone());
            }
            let parts: Vec<String> = blocks
                .iter()
                .map(|b| match b.get("type").and_then(Value::as_str) {
                    Some("text") => b
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    Some("search_result") => format!(
                        "[search result: {} <{}>]\n{}",
                        b.get("title").and_then(Value::as_str).unwrap_or(""),
                        b.get("source").and_then(Value::as_str).unwrap_or(""),
                        result_text(b.get("content"))
                    ),
                    _ => match document_output(b) {
                        Some(Value::String(s)) => s,
                        Some(Value::Object(o)) => format!(
                            "[{}: {} {}]",
                            b.get("type").and_then(Value::as_str).unwrap_or(""),
                            o.get("media_type").and_then(Value::as_str).unwrap_or(""),
                            o.get("uri")
                                .or_else(|| o.get("name"))
                                .and_then(Value::as_str)
                                .unwrap_or("")
                        ),
                        _ => String::new(),
                    },
                })
                .collect();
            Value::String(parts.join("\n"))
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
        category: category_of(&name, t.get("type").and_then(Value::as_str)),
        description: Some(
            t.get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        ),
        input_schema: t.get("input_schema").filter(|s| s.is_object()).cloned(),
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
                    category: category_of(&name, None),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_lines_of_arrays_and_steps() {
        let arr = "[\n  {\"a\": [1, 2]},\n  {\"b\": \"x]\"}\n]";
        assert_eq!(element_lines(arr), vec![2, 3]);
        let steps = "{\n \"steps\": [\n  {\"step\": 1},\n\n  {\"step\": 2}\n ],\n \"final\": {}\n}";
        assert_eq!(element_lines(steps), vec![3, 5]);
        assert!(element_lines("{\"x\": [1]}").is_empty());
    }

    #[test]
    fn repeated_messages_compare_by_meaning() {
        let resp = json!({"role": "assistant", "content": [
            {"type": "text", "text": "hi"},
            {"type": "tool_use", "id": "t1", "name": "f", "input": {}, "caller": {"type": "direct"}}]});
        let echoed = json!({"role": "assistant", "content": [
            {"text": "hi", "type": "text"},
            {"id": "t1", "name": "f", "input": {}, "type": "tool_use"}]});
        assert!(same_message(&resp, &echoed));
        let other =
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]});
        assert!(!same_message(&resp, &other));
        assert!(same_message(
            &json!({"role": "user", "content": "q"}),
            &json!({"role": "user", "content": [{"type": "text", "text": "q"}]})
        ));
    }

    #[test]
    fn footnotes_number_each_source_once() {
        let c = vec![
            json!({"type": "web_search_result_location", "url": "https://a", "title": "A"}),
            json!({"type": "web_search_result_location", "url": "https://a", "title": "A"}),
            json!({"type": "web_search_result_location", "url": "https://b", "title": "B"}),
        ];
        assert_eq!(
            with_footnotes("text", &c),
            "text[1][2]\n\n[1] A <https://a>\n[2] B <https://b>"
        );
    }
}
