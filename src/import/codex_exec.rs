//! `codex exec --json` stdout → RAWP frames (AGENT-FORMATS.md §2), line by line: saved files and
//! live from stdin alike.
//!
//! Who calls it: `crate::import` (`decoder_for(Format::CodexExec)`).
//!
//! Mapping:
//! * `thread.started {thread_id}` → `x-codex.thread_started`; the thread id (the rollout's uuid)
//!   becomes every frame's `session_id`. `turn.started` → `x-codex.turn_started`.
//! * Items, paired `item.started` → `item.completed` by their `id`: `command_execution` → a
//!   `shell` call (`{command}` → `{stdout, exit_code}`; `failed` or a non-zero exit → `error`,
//!   `declined` → `cancelled`; output growing in `item.updated` → stream chunks);
//!   `file_change` → an `apply_patch` call whose output lists the files as diff headers (the
//!   stream holds no diff text; `failed` → `error`); `mcp_tool_call` → a call `server.tool`,
//!   `status: failed` → `error` even when `error` is null (the text is then in
//!   `result.content[].text`); `web_search` → a `web_search` call; `todo_list` → an
//!   `update_plan` call (a checklist). An item completed without a start is requested then.
//!   `reasoning` → `agent.thinking.done`, `agent_message` → `agent.text.done`, `error` →
//!   `session.error`; other item types → `x-codex.item` rows, counted (info).
//! * `turn.completed {usage}` → `session.usage` (cached input split out) and `session.turn.end`
//!   (`end_turn`); `turn.failed` and `error` → `session.error` (the turn ends with `error`;
//!   `turn.failed` cancels the calls still open). Each `thread.started` begins a run (appended
//!   runs: item ids restart at `item_0`), with its own call ids and derived catalog.
//!
//! Invariants: one line at a time; never panics; bad lines are `Decoded::Malformed`.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::codex_emit::{Emitter, content_text, decode_line, obj, openai_usage, str_of};
use super::{Decoded, Decoder};
use crate::protocol::{FrameType, ResultStatus, StreamType};

/// Decodes `codex exec --json` lines (see the module docs).
#[derive(Debug)]
pub struct CodexExecDecoder {
    em: Emitter,
    /// Bytes of a running command's `aggregated_output` already sent as chunks.
    sent: HashMap<String, usize>,
    /// `thread.started` records seen (each starts a run, whose item ids restart at `item_0`).
    runs: u64,
}

impl Default for CodexExecDecoder {
    fn default() -> Self {
        Self::new()
    }
}

/// The call an item is: `(tool name, input)`, `None` for items that are not calls.
fn call_of(item: &Value) -> Option<(String, Value)> {
    let ty = str_of(item, "type")?;
    let v = match ty {
        "command_execution" => (
            "shell".to_owned(),
            Value::Object(obj([("command", item.get("command").cloned()?)])),
        ),
        "file_change" => (
            "apply_patch".to_owned(),
            Value::Object(obj([(
                "changes",
                item.get("changes").cloned().unwrap_or(Value::Null),
            )])),
        ),
        "mcp_tool_call" => (
            format!(
                "{}.{}",
                str_of(item, "server").unwrap_or("mcp"),
                str_of(item, "tool").unwrap_or("?")
            ),
            item.get("arguments").cloned().unwrap_or(Value::Null),
        ),
        "web_search" => (
            "web_search".to_owned(),
            Value::Object(obj([(
                "query",
                item.get("query").cloned().unwrap_or(Value::Null),
            )])),
        ),
        "todo_list" => ("update_plan".to_owned(), json!({ "plan": plan_of(item) })),
        _ => return None,
    };
    Some(v)
}

/// A `todo_list` item's `items [{text, completed}]` as plan steps `{step, status}`.
fn plan_of(item: &Value) -> Value {
    let steps: Vec<Value> = item
        .get("items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| {
            let done = t.get("completed").and_then(Value::as_bool) == Some(true);
            json!({
                "step": t.get("text").cloned().unwrap_or(Value::Null),
                "status": if done { "completed" } else { "pending" },
            })
        })
        .collect();
    Value::Array(steps)
}

/// `file_change.changes [{path, kind}]` as diff file headers (no hunks: the stream has no text).
fn changes_headers(item: &Value) -> String {
    let mut s = String::from("(codex exec --json reports which files changed, not their text)\n");
    for c in item
        .get("changes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let p = str_of(c, "path").unwrap_or("?");
        match str_of(c, "kind") {
            Some("add") => {
                let _ = write!(s, "--- /dev/null\n+++ b/{p}\n");
            }
            Some("delete") => {
                let _ = write!(s, "--- a/{p}\n+++ /dev/null\n");
            }
            _ => {
                let _ = write!(s, "--- a/{p}\n+++ b/{p}\n");
            }
        }
    }
    s
}

impl CodexExecDecoder {
    pub fn new() -> Self {
        let mut em = Emitter::new("x-codex", "Codex", ("codex", "exec-json"));
        em.fields = ("id", "type");
        Self {
            em,
            sent: HashMap::new(),
            runs: 0,
        }
    }

    fn item(&mut self, ev: &str, item: &Value, line: u64, out: &mut Vec<Decoded>) {
        let id = str_of(item, "id").unwrap_or("").to_owned();
        let ty = str_of(item, "type").unwrap_or("");
        if let Some((name, input)) = call_of(item) {
            if !self.em.is_open(&id) {
                // (An item id used again in this run is another call: the emitter numbers it.)
                self.em
                    .request(out, &id, &name, input, Map::new(), line, None);
                self.sent.remove(&id);
            }
            match ev {
                "item.completed" => self.completed(&id, ty, item, line, out),
                "item.updated" if ty == "command_execution" => {
                    let text = str_of(item, "aggregated_output").unwrap_or("");
                    let sent = self.sent.entry(id.clone()).or_insert(0);
                    if text.len() > *sent && text.is_char_boundary(*sent) {
                        let new = text[*sent..].to_owned();
                        *sent = text.len();
                        self.em
                            .chunk(out, &id, StreamType::Stdout, &new, line, None);
                    }
                }
                _ => {}
            }
            return;
        }
        if ev != "item.completed" {
            // Text items are shown once, complete.
            return;
        }
        let text = str_of(item, "text").unwrap_or("");
        match ty {
            "reasoning" => {
                let p = obj([("text", json!(text))]);
                self.em
                    .push(out, FrameType::AgentThinkingDone, p, line, None);
            }
            "agent_message" => {
                let p = obj([("text", json!(text))]);
                self.em.push(out, FrameType::AgentTextDone, p, line, None);
            }
            "error" => {
                let p = obj([(
                    "message",
                    item.get("message").cloned().unwrap_or(Value::Null),
                )]);
                self.em.push(out, FrameType::SessionError, p, line, None);
            }
            other => {
                let p = item.as_object().cloned().unwrap_or_default();
                self.em
                    .unknown(out, &format!("item.{other}"), p, line, None);
            }
        }
    }

    fn completed(&mut self, id: &str, ty: &str, item: &Value, line: u64, out: &mut Vec<Decoded>) {
        let status = str_of(item, "status").unwrap_or("completed");
        let none = Map::new();
        match ty {
            "command_execution" => {
                let code = item.get("exit_code").and_then(Value::as_i64);
                let st = match (status, code) {
                    ("declined", _) => ResultStatus::Cancelled,
                    ("failed", _) => ResultStatus::Error,
                    (_, Some(c)) if c != 0 => ResultStatus::Error,
                    _ => ResultStatus::Success,
                };
                let mut o = obj([(
                    "stdout",
                    item.get("aggregated_output")
                        .cloned()
                        .unwrap_or_else(|| json!("")),
                )]);
                if let Some(c) = code {
                    o.insert("exit_code".into(), json!(c));
                }
                self.sent.remove(id);
                self.em
                    .result(out, id, st, Value::Object(o), None, none, line, None);
            }
            "file_change" => {
                let (st, output) = if status == "failed" {
                    (ResultStatus::Error, json!("the patch failed to apply"))
                } else if status == "declined" {
                    (ResultStatus::Cancelled, json!("the patch was declined"))
                } else {
                    (ResultStatus::Success, json!(changes_headers(item)))
                };
                self.em.result(out, id, st, output, None, none, line, None);
            }
            "mcp_tool_call" => {
                let err = item.get("error").filter(|e| !e.is_null());
                let (st, output) = if status == "failed" || err.is_some() {
                    let msg = err
                        .and_then(|e| e.get("message").and_then(Value::as_str).map(str::to_owned))
                        .or_else(|| err.and_then(Value::as_str).map(str::to_owned))
                        .unwrap_or_else(|| {
                            content_text(item.get("result").and_then(|r| r.get("content")))
                        });
                    (ResultStatus::Error, json!(msg))
                } else {
                    let r = item.get("result").cloned().unwrap_or(Value::Null);
                    (ResultStatus::Success, r)
                };
                self.em.result(out, id, st, output, None, none, line, None);
            }
            "todo_list" => {
                let output = json!({ "plan": plan_of(item) });
                self.em.result(
                    out,
                    id,
                    ResultStatus::Success,
                    output,
                    None,
                    none,
                    line,
                    None,
                );
            }
            _ => {
                let st = if status == "failed" {
                    ResultStatus::Error
                } else {
                    ResultStatus::Success
                };
                let query = item.get("query").cloned().unwrap_or(Value::Null);
                let output = json!({ "query": query.clone(), "title": query });
                self.em.result(out, id, st, output, None, none, line, None);
            }
        }
    }

    fn record(&mut self, v: &Value, line: u64, out: &mut Vec<Decoded>) {
        let ty = str_of(v, "type").unwrap_or("");
        let rest = || {
            let mut m = v.as_object().cloned().unwrap_or_default();
            m.remove("type");
            m
        };
        match ty {
            "thread.started" => {
                let id = str_of(v, "thread_id").map(str::to_owned);
                self.runs += 1;
                if self.runs > 1 {
                    // Another run appended (`codex exec --json … >> runs.jsonl`).
                    let id = id.or_else(|| self.em.session_id.clone());
                    self.em.begin_session(out, id);
                    self.sent.clear();
                } else if id.is_some() {
                    self.em.session_id = id;
                }
                self.em.ext(out, "thread_started", rest(), line, None);
            }
            "turn.started" => self.em.ext(out, "turn_started", rest(), line, None),
            "item.started" | "item.updated" | "item.completed" => {
                let item = v.get("item").cloned().unwrap_or(Value::Null);
                self.item(ty, &item, line, out);
            }
            "turn.completed" => {
                if let Some(Value::Object(u)) = v.get("usage") {
                    let p = openai_usage(u);
                    self.em.push(out, FrameType::SessionUsage, p, line, None);
                }
                let p = obj([("stop_reason", json!("end_turn"))]);
                self.em.push(out, FrameType::SessionTurnEnd, p, line, None);
            }
            "turn.failed" | "error" => {
                let msg = v
                    .pointer("/error/message")
                    .or_else(|| v.get("message"))
                    .cloned()
                    .unwrap_or(Value::Null);
                let p = obj([("message", msg)]);
                self.em.push(out, FrameType::SessionError, p, line, None);
                if ty == "turn.failed" {
                    let why = "the turn failed before this call returned";
                    self.em.cancel_open(out, why, line, None);
                    let p = obj([("stop_reason", json!("error"))]);
                    self.em.push(out, FrameType::SessionTurnEnd, p, line, None);
                }
            }
            other => self.em.unknown(out, other, rest(), line, None),
        }
    }
}

impl Decoder for CodexExecDecoder {
    fn line(&mut self, line: u64, text: &str, out: &mut Vec<Decoded>) {
        decode_line(line, text, out, |v, out| self.record(v, line, out));
    }

    fn finish(&mut self, out: &mut Vec<Decoded>) {
        self.em.finish(out);
    }
}
