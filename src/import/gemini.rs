//! Gemini CLI sessions → RAWP frames (AGENT-FORMATS.md §3–4): saved sessions
//! (`~/.gemini/tmp/<projectHash>/chats/session-<date>-<id8>.json`, one JSON document) and the
//! headless `gemini -p … -o stream-json` output (JSONL, read live from stdin as well).
//!
//! Who calls it: `crate::import` (`decoder_for(Format::GeminiSession | GeminiStreamJson)`).
//!
//! Saved session ([`GeminiSessionDecoder`], a whole-document decoder: its lines are buffered up
//! to [`MAX_DOCUMENT_BYTES`], past which the document is a `too-long` malformed item, and read at
//! the end, its fields as raw spans of the text, one message parsed and mapped at a time, not one
//! tree of the whole document): `{sessionId, projectHash, startTime, lastUpdated}` →
//! `x-gemini.session` (the
//! `sessionId` on every frame); each message in order, at the line where its `id` appears:
//! `user` → `control.prompt.request`; `gemini` → its `thoughts` (`agent.thinking.done`, subject
//! in bold then the description), its `content` (`agent.text.done`), its `toolCalls` (each a
//! request and, in the same entry, its result: [`call_result`]) and its `tokens`
//! (`session.usage`, cached input split out); a gemini message with no calls ends the turn;
//! `info` / `warning` → `x-gemini.<type>`, `error` → `session.error`; other types →
//! `x-gemini.<type>`, counted (info).
//!
//! Stream ([`GeminiStreamDecoder`], line by line): `init` → `x-gemini.init` (its `session_id` on
//! every frame; each `init` begins a run with its own call ids and derived catalog); `message` user → prompt, assistant `delta` → `agent.text.delta` (the message is
//! closed by `agent.text.done` with the joined text at the next other line); `tool_use` →
//! request; `tool_result` → result by `tool_id`; `result` → `session.usage` of its `stats` and
//! `session.turn.end`; `error` → `session.error`.
//!
//! Results ([`call_result`]): `success` / `error` / `cancelled`; a shell command whose output
//! trailer says `Exit Code: N` with N ≠ 0 (the last such line: [`shell_exit`]), or a `Signal:`
//! (killed, `Exit Code: (none)`), is an `error` (Gemini reports it as success; the reported
//! status is kept as `reported_status`); `read_file` → `{file_path, content}`; `write_file` →
//! Write's `{file_path, content, type}` (or the `resultDisplay.fileDiff` when given); `replace`
//! → Edit's `{file_path, old_string, new_string}` (a diff); `write_todos` → `{todos, message}`
//! (a checklist); `delegate_to_agent` → an agent result `{content, description}`.
//!
//! Invariants: never panics; a document that is not a session is one malformed item, with the
//! JSON error's line; nothing is dropped silently.

use std::collections::HashMap;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::codex_emit::{Emitter, content_text, decode_line, obj, str_of};
use super::{Decoded, Decoder};
use crate::finding::{Finding, Level, code};
use crate::protocol::{FrameType, ParseError, ParseErrorKind, ResultStatus, Timestamp};

/// Largest saved session read, in bytes (256 MiB, the longest line a file may have; real ones
/// are well under 1 MB).
pub const MAX_DOCUMENT_BYTES: usize = 256 * 1024 * 1024;

/// What the trailer of a Gemini shell output text reports: `(exit code, signal)` from its last
/// `Exit Code:` line and the `Signal:` line after it (`(none)` or `0` → `None`). Only the last
/// `Exit Code:` line counts: the command's own output, earlier in the text, may hold one.
pub fn shell_exit(text: &str) -> (Option<i64>, Option<i64>) {
    let field = |l: &str, k: &str| l.trim().strip_prefix(k).map(|v| v.trim().parse().ok());
    let lines: Vec<&str> = text.lines().collect();
    let Some(at) = lines
        .iter()
        .rposition(|l| l.trim().starts_with("Exit Code:"))
    else {
        return (None, None);
    };
    let code = field(lines[at], "Exit Code:").flatten();
    let signal = lines[at + 1..]
        .iter()
        .find_map(|l| field(l, "Signal:"))
        .flatten()
        .filter(|&s| s != 0);
    (code, signal)
}

fn status_of(s: Option<&str>) -> ResultStatus {
    match s {
        Some("success") | None => ResultStatus::Success,
        Some("cancelled" | "canceled") => ResultStatus::Cancelled,
        // `error`, and a status Gemini does not write (reported by [`status_field`]).
        Some(_) => ResultStatus::Error,
    }
}

/// A call's reported `status` field of record `v`, and a warning naming the line and field
/// when it is not `success`, `error` or `cancelled` (attack 6 #10: such a status became an
/// invalid RAWP status): the call is then an `error` with the value kept as `reported_status`.
fn status_field<'a>(v: &'a Value, line: u64, out: &mut Vec<Decoded>) -> Option<&'a str> {
    let s = v.get("status").filter(|s| !s.is_null())?;
    let known = matches!(
        s.as_str(),
        Some("success" | "error" | "cancelled" | "canceled")
    );
    if !known {
        let msg = format!(
            "a Gemini call with `status` {}: not success, error or cancelled; read as error",
            s.to_string().chars().take(60).collect::<String>()
        );
        out.push(Decoded::Finding(Finding::new(
            Level::Warning,
            code::WRONG_FIELD_TYPE,
            "AGENT-FORMATS.md §3",
            line,
            msg,
        )));
    }
    Some(s.as_str().unwrap_or("invalid"))
}

/// The path argument of a file tool (`absolute_path` in 2025-10, `file_path` later, `path`).
fn path_arg(args: &Value) -> Option<&str> {
    ["file_path", "absolute_path", "path", "dir_path"]
        .iter()
        .find_map(|k| str_of(args, k))
}

/// A call's result: `(status, output, extra)` from its `name`, `args`, reported status, output
/// text and error text, and the saved session's `resultDisplay` (see the module docs).
pub fn call_result(
    name: &str,
    args: &Value,
    reported: Option<&str>,
    output: Option<&str>,
    error: Option<&str>,
    display: Option<&Value>,
) -> (ResultStatus, Value, Map<String, Value>) {
    let mut extra = Map::new();
    let mut status = status_of(reported);
    if let Some(e) = error.filter(|_| status == ResultStatus::Success) {
        // An error response under a success status: still a failure.
        status = ResultStatus::Error;
        extra.insert(
            "reported_status".into(),
            json!(reported.unwrap_or("success")),
        );
        return (status, json!(e), extra);
    }
    if let Some(r) = reported.filter(|_| status == ResultStatus::Error)
        && r != "error"
    {
        extra.insert("reported_status".into(), json!(r));
    }
    if status != ResultStatus::Success {
        let text = error
            .or(output)
            .or_else(|| display.and_then(Value::as_str))
            .unwrap_or("")
            .to_owned();
        return (status, json!(text), extra);
    }
    let text = output
        .or_else(|| display.and_then(Value::as_str))
        .unwrap_or("");
    let file_diff = display
        .and_then(|d| d.get("fileDiff"))
        .and_then(Value::as_str);
    let out = match name {
        "run_shell_command" => {
            let (code, signal) = shell_exit(text);
            if code.is_some_and(|c| c != 0) || signal.is_some() {
                status = ResultStatus::Error;
                extra.insert(
                    "reported_status".into(),
                    json!(reported.unwrap_or("success")),
                );
            }
            let mut o = obj([("stdout", json!(text))]);
            if let Some(c) = code {
                o.insert("exit_code".into(), json!(c));
            }
            if let Some(s) = signal {
                o.insert("signal".into(), json!(s));
            }
            Value::Object(o)
        }
        "read_file" => {
            let mut o = Map::new();
            if let Some(p) = path_arg(args) {
                o.insert("file_path".into(), json!(p));
            }
            o.insert("content".into(), json!(text));
            Value::Object(o)
        }
        "write_file" | "replace" | "edit" if file_diff.is_some() => {
            json!(file_diff.unwrap_or_default())
        }
        "write_file" => {
            let mut o = Map::new();
            if let Some(p) = path_arg(args) {
                o.insert("file_path".into(), json!(p));
            }
            o.insert(
                "content".into(),
                args.get("content").cloned().unwrap_or_else(|| json!("")),
            );
            let ty = if text.contains("overwrote") {
                "update"
            } else {
                "create"
            };
            o.insert("type".into(), json!(ty));
            Value::Object(o)
        }
        "replace" | "edit"
            if str_of(args, "old_string").is_some() && str_of(args, "new_string").is_some() =>
        {
            let mut o = Map::new();
            if let Some(p) = path_arg(args) {
                o.insert("file_path".into(), json!(p));
            }
            for k in ["old_string", "new_string"] {
                o.insert(k.into(), args.get(k).cloned().unwrap_or(Value::Null));
            }
            Value::Object(o)
        }
        "write_todos" => json!({
            "todos": args.get("todos").cloned().unwrap_or(Value::Null),
            "message": text,
        }),
        "delegate_to_agent" => {
            let mut o = obj([("content", json!(text))]);
            let d = str_of(args, "agent_name")
                .or_else(|| str_of(args, "objective"))
                .map(|s| s.lines().next().unwrap_or("").trim().to_owned());
            if let Some(d) = d {
                o.insert("description".into(), json!(d));
            }
            Value::Object(o)
        }
        _ => json!(text),
    };
    (status, out, extra)
}

/// `tokens {input, output, cached, thoughts, tool, total}` as a `session.usage` payload:
/// `output_tokens` counts the thoughts too (Gemini's `total` is input + output + thoughts +
/// tool, and thoughts are billed as output), as Codex's `output_tokens` counts its reasoning
/// tokens, so the two agents' "out" compare (attack 6 #11); `thoughts_tokens` keeps the part.
fn gemini_usage(t: &Map<String, Value>, model: Option<&Value>) -> Map<String, Value> {
    let n = |k: &str| t.get(k).and_then(Value::as_u64).unwrap_or(0);
    let mut p = Map::new();
    p.insert(
        "input_tokens".into(),
        n("input").saturating_sub(n("cached")).into(),
    );
    p.insert("cache_read_input_tokens".into(), n("cached").into());
    p.insert(
        "output_tokens".into(),
        (n("output").saturating_add(n("thoughts"))).into(),
    );
    for (from, to) in [
        ("thoughts", "thoughts_tokens"),
        ("tool", "tool_tokens"),
        ("total", "total_tokens"),
    ] {
        if let Some(v) = t.get(from) {
            p.insert(to.into(), v.clone());
        }
    }
    if let Some(m) = model {
        p.insert("model".into(), m.clone());
    }
    p
}

/// A Gemini CLI saved session, read whole (see the module docs).
#[derive(Debug)]
pub struct GeminiSessionDecoder {
    text: String,
    /// Byte offset of each line's start in `text`.
    starts: Vec<usize>,
    too_long: Option<u64>,
}

impl Default for GeminiSessionDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl GeminiSessionDecoder {
    pub fn new() -> Self {
        Self {
            text: String::new(),
            starts: Vec::new(),
            too_long: None,
        }
    }

    /// The 1-based line holding byte `at`.
    fn line_at(&self, at: usize) -> u64 {
        self.starts.partition_point(|&s| s <= at) as u64
    }
}

impl Decoder for GeminiSessionDecoder {
    fn line(&mut self, line: u64, text: &str, _out: &mut Vec<Decoded>) {
        if self.too_long.is_some() {
            return;
        }
        if self.text.len() + text.len() + 1 > MAX_DOCUMENT_BYTES {
            self.too_long = Some(line);
            self.text = String::new();
            self.starts = Vec::new();
            return;
        }
        self.starts.push(self.text.len());
        self.text.push_str(text);
        self.text.push('\n');
    }

    fn finish(&mut self, out: &mut Vec<Decoded>) {
        if let Some(line) = self.too_long {
            let e = ParseError::new(line, ParseErrorKind::TooLong(MAX_DOCUMENT_BYTES), "");
            out.push(Decoded::Malformed(e));
            return;
        }
        let text = std::mem::take(&mut self.text);
        if text.trim().is_empty() {
            return;
        }
        // The document's fields as raw JSON spans of `text` (one pass that checks the syntax),
        // then each message parsed and mapped on its own: a tree of the whole document cost
        // about 9× its size (attack 6 #6).
        let top = match serde_json::from_str::<Top<'_>>(&text) {
            Ok(Top(Some(fields))) => fields,
            Ok(Top(None)) => {
                let e = ParseError::new(1, ParseErrorKind::NotObject, &text);
                out.push(Decoded::Malformed(e));
                return;
            }
            Err(e) => {
                let pe =
                    ParseError::new(e.line() as u64, ParseErrorKind::Json(e.to_string()), &text);
                out.push(Decoded::Malformed(pe));
                return;
            }
        };
        let mut head = Map::new();
        let mut messages = None;
        for (k, raw) in top {
            if k == "messages" {
                messages = Some(raw);
            } else {
                let v = serde_json::from_str::<Value>(raw.get()).unwrap_or(Value::Null);
                head.insert(k, v);
            }
        }
        let mut em = Emitter::new("x-gemini", "Gemini", ("gemini", "session"));
        em.fields = ("id", "name");
        em.session_id = head
            .get("sessionId")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let start = head.get("startTime").and_then(Timestamp::from_json);
        em.saw_timestamp(start);
        em.ext(out, "session", head, 1, start);
        let list = messages.and_then(|m| serde_json::from_str::<Vec<&RawValue>>(m.get()).ok());
        match (&list, messages) {
            (Some(_), _) => {}
            (None, other) => {
                let kind = other.and_then(|m| serde_json::from_str::<Value>(m.get()).ok());
                let what = kind
                    .as_ref()
                    .map_or("missing", crate::session::check::json_kind);
                let msg = format!("`messages` is {what}, not an array of messages: none read");
                out.push(Decoded::Finding(Finding::new(
                    Level::Warning,
                    code::UNREADABLE_INPUT,
                    "AGENT-FORMATS.md §3",
                    1,
                    msg,
                )));
            }
        }
        for raw in list.into_iter().flatten() {
            let src = raw.get();
            // Where the message starts in `text` (a span of it).
            let start = (src.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
            let Ok(m) = serde_json::from_str::<Value>(src) else {
                continue; // (checked whole above)
            };
            // The line of the message: where its id appears in it.
            let at = str_of(&m, "id")
                .and_then(|id| src.find(&format!("\"{id}\"")))
                .unwrap_or(0);
            message(&mut em, &m, self.line_at(start + at), out);
        }
        em.finish(out);
    }
}

/// A JSON document's top-level fields in order as raw spans of the text (`None`: not an
/// object).
struct Top<'a>(Option<Vec<(String, &'a RawValue)>>);

impl<'de> serde::Deserialize<'de> for Top<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Top<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Top<'de>, A::Error> {
                let mut fields = Vec::new();
                while let Some(kv) = a.next_entry::<String, &'de RawValue>()? {
                    fields.push(kv);
                }
                Ok(Top(Some(fields)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Top<'de>, A::Error> {
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Top(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Top<'de>, E> {
                Ok(Top(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Top<'de>, E> {
                Ok(Top(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Top<'de>, E> {
                Ok(Top(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Top<'de>, E> {
                Ok(Top(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Top<'de>, E> {
                Ok(Top(None))
            }
            fn visit_unit<E>(self) -> Result<Top<'de>, E> {
                Ok(Top(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// One saved-session message → frames.
fn message(em: &mut Emitter, m: &Value, line: u64, out: &mut Vec<Decoded>) {
    let ts = m.get("timestamp").and_then(Timestamp::from_json);
    em.saw_timestamp(ts);
    let content = content_text(m.get("content"));
    match str_of(m, "type").unwrap_or("") {
        "user" => {
            let p = obj([("text", json!(content)), ("input_type", json!("text"))]);
            em.push(out, FrameType::ControlPromptRequest, p, line, ts);
        }
        "gemini" | "model" => {
            for t in m
                .get("thoughts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let subject = str_of(t, "subject").unwrap_or("");
                let desc = str_of(t, "description").unwrap_or("");
                let text = if subject.is_empty() {
                    desc.to_owned()
                } else {
                    format!("**{subject}**\n\n{desc}")
                };
                let tts = t.get("timestamp").and_then(Timestamp::from_json).or(ts);
                em.push(
                    out,
                    FrameType::AgentThinkingDone,
                    obj([("text", json!(text))]),
                    line,
                    tts,
                );
            }
            if !content.trim().is_empty() {
                let mut p = obj([("text", json!(content))]);
                if let Some(model) = m.get("model") {
                    p.insert("model".into(), model.clone());
                }
                em.push(out, FrameType::AgentTextDone, p, line, ts);
            }
            let calls = m.get("toolCalls").and_then(Value::as_array);
            for c in calls.into_iter().flatten() {
                saved_call(em, c, line, ts, out);
            }
            if let Some(Value::Object(t)) = m.get("tokens") {
                let p = gemini_usage(t, m.get("model"));
                em.push(out, FrameType::SessionUsage, p, line, ts);
            }
            if calls.is_none_or(Vec::is_empty) {
                let p = obj([("stop_reason", json!("end_turn"))]);
                em.push(out, FrameType::SessionTurnEnd, p, line, ts);
            }
        }
        "error" => {
            let p = obj([("message", json!(content))]);
            em.push(out, FrameType::SessionError, p, line, ts);
        }
        "info" | "warning" => {
            let ty = str_of(m, "type").unwrap_or("info").to_owned();
            em.ext(out, &ty, obj([("text", json!(content))]), line, ts);
        }
        other => {
            let p = m.as_object().cloned().unwrap_or_default();
            em.unknown(out, other, p, line, ts);
        }
    }
}

/// One `toolCalls` entry: its request and its result.
fn saved_call(
    em: &mut Emitter,
    c: &Value,
    line: u64,
    ts: Option<Timestamp>,
    out: &mut Vec<Decoded>,
) {
    let id = str_of(c, "id").unwrap_or("").to_owned();
    let name = str_of(c, "name").unwrap_or("").to_owned();
    let args = c.get("args").cloned().unwrap_or(Value::Null);
    let mut extra = Map::new();
    if let Some(d) = c.get("displayName") {
        extra.insert("display_name".into(), d.clone());
    }
    em.request(out, &id, &name, args.clone(), extra, line, ts);
    if id.is_empty() || name.is_empty() {
        return; // kept as a row, with its finding; no result to pair
    }
    // The response parts: `output` / `error` of the `functionResponse` with this id (else the
    // first one).
    let parts = c.get("result").and_then(Value::as_array);
    let resp = parts
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("functionResponse"))
        .find(|r| str_of(r, "id").is_none_or(|i| i == id))
        .and_then(|r| r.get("response"));
    let output = resp.and_then(|r| str_of(r, "output"));
    let error = resp.and_then(|r| str_of(r, "error"));
    let reported = status_field(c, line, out);
    let (status, out_v, extra) = call_result(
        &name,
        &args,
        reported,
        output,
        error,
        c.get("resultDisplay").filter(|d| !d.is_null()),
    );
    let rts = c.get("timestamp").and_then(Timestamp::from_json).or(ts);
    em.result(out, &id, status, out_v, None, extra, line, rts);
}

/// `gemini -o stream-json` lines (see the module docs).
#[derive(Debug)]
pub struct GeminiStreamDecoder {
    em: Emitter,
    /// The assistant text of the open message (deltas so far).
    text: Option<(String, u64)>,
    model: Option<Value>,
    /// Arguments of the calls still open (their results are shaped from them).
    args: HashMap<String, Value>,
    /// `init` records seen (each starts a run).
    runs: u64,
}

impl Default for GeminiStreamDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl GeminiStreamDecoder {
    pub fn new() -> Self {
        let mut em = Emitter::new("x-gemini", "Gemini", ("gemini", "stream-json"));
        em.fields = ("tool_id", "tool_name");
        Self {
            em,
            text: None,
            model: None,
            args: HashMap::new(),
            runs: 0,
        }
    }

    /// Closes the open assistant message.
    fn flush(&mut self, out: &mut Vec<Decoded>) {
        if let Some((text, line)) = self.text.take() {
            let mut p = obj([("text", json!(text))]);
            if let Some(m) = &self.model {
                p.insert("model".into(), m.clone());
            }
            self.em.push(out, FrameType::AgentTextDone, p, line, None);
        }
    }

    fn record(&mut self, v: &Value, line: u64, out: &mut Vec<Decoded>) {
        let ts = v.get("timestamp").and_then(Timestamp::from_json);
        self.em.saw_timestamp(ts);
        let ty = str_of(v, "type").unwrap_or("");
        let is_delta = ty == "message" && str_of(v, "role") == Some("assistant");
        if !is_delta {
            self.flush(out);
        }
        let rest = || {
            let mut m = v.as_object().cloned().unwrap_or_default();
            m.remove("type");
            m.remove("timestamp");
            m
        };
        match ty {
            "init" => {
                let id = str_of(v, "session_id").map(str::to_owned);
                self.runs += 1;
                if self.runs > 1 {
                    // Another run appended: its `tool_id`s and catalog are its own.
                    let id = id.or_else(|| self.em.session_id.clone());
                    self.em.begin_session(out, id);
                    self.args.clear();
                } else if id.is_some() {
                    self.em.session_id = id;
                }
                self.model = v.get("model").cloned();
                self.em.ext(out, "init", rest(), line, ts);
            }
            "message" if is_delta => {
                let chunk = content_text(v.get("content"));
                let p = obj([("delta", json!(chunk))]);
                self.em.push(out, FrameType::AgentTextDelta, p, line, ts);
                let delta = v.get("delta").and_then(Value::as_bool) == Some(true);
                match &mut self.text {
                    Some((t, _)) if delta => t.push_str(&chunk),
                    _ => self.text = Some((chunk, line)),
                }
            }
            "message" => {
                let text = content_text(v.get("content"));
                let p = obj([("text", json!(text)), ("input_type", json!("text"))]);
                self.em
                    .push(out, FrameType::ControlPromptRequest, p, line, ts);
            }
            "tool_use" => {
                let id = str_of(v, "tool_id").unwrap_or("").to_owned();
                let name = str_of(v, "tool_name").unwrap_or("").to_owned();
                let args = v.get("parameters").cloned().unwrap_or(Value::Null);
                self.args.insert(id.clone(), args.clone());
                self.em.request(out, &id, &name, args, Map::new(), line, ts);
            }
            "tool_result" => {
                let id = str_of(v, "tool_id").unwrap_or("").to_owned();
                let name = self.em.name_of(&id).unwrap_or("").to_owned();
                let args = self.args.remove(&id).unwrap_or(Value::Null);
                let error = v
                    .get("error")
                    .and_then(|e| str_of(e, "message").or_else(|| e.as_str()));
                let reported = status_field(v, line, out);
                let (status, output, extra) =
                    call_result(&name, &args, reported, str_of(v, "output"), error, None);
                self.em
                    .result(out, &id, status, output, None, extra, line, ts);
            }
            "result" => {
                if let Some(Value::Object(s)) = v.get("stats") {
                    let n = |k: &str| s.get(k).and_then(Value::as_u64).unwrap_or(0);
                    let mut p = Map::new();
                    p.insert(
                        "input_tokens".into(),
                        n("input_tokens").saturating_sub(n("cached")).into(),
                    );
                    p.insert("cache_read_input_tokens".into(), n("cached").into());
                    p.insert("output_tokens".into(), n("output_tokens").into());
                    for (k, x) in s {
                        if !matches!(k.as_str(), "input_tokens" | "output_tokens" | "cached") {
                            p.insert(k.clone(), x.clone());
                        }
                    }
                    self.em.push(out, FrameType::SessionUsage, p, line, ts);
                }
                let ok = str_of(v, "status").is_none_or(|s| s == "success");
                let mut p = obj([("stop_reason", json!(if ok { "end_turn" } else { "error" }))]);
                if let Some(s) = v.get("status") {
                    p.insert("status".into(), s.clone());
                }
                if let Some(e) = v.get("error") {
                    p.insert("error".into(), e.clone());
                }
                self.em.push(out, FrameType::SessionTurnEnd, p, line, ts);
            }
            "error" => self.em.push(out, FrameType::SessionError, rest(), line, ts),
            other => self.em.unknown(out, other, rest(), line, ts),
        }
    }
}

impl Decoder for GeminiStreamDecoder {
    fn line(&mut self, line: u64, text: &str, out: &mut Vec<Decoded>) {
        decode_line(line, text, out, |v, out| self.record(v, line, out));
    }

    fn finish(&mut self, out: &mut Vec<Decoded>) {
        self.flush(out);
        self.em.finish(out);
    }
}
