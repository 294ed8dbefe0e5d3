//! Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`) → RAWP frames
//! (AGENT-FORMATS.md §1): every envelope version (0.40 `codex_vscode`, 0.77 `codex_exec`, 0.125
//! `codex-tui`) and the pre-envelope format of mid-2025, line by line, for saved files, followed
//! files and stdin alike.
//!
//! Who calls it: `crate::import` (`decoder_for(Format::CodexRollout)`).
//!
//! Lines: `{timestamp, type, payload}` envelopes; before the envelope existed, a bare header
//! `{id, timestamp, instructions, git}`, `{record_type: "state"}` markers and bare response items
//! (`{type: "message" | "function_call" | …}`, read as `response_item` payloads).
//!
//! Mapping:
//! * `session_meta` (or the bare header) → `x-codex.session_meta`; its `id` becomes every
//!   frame's `session_id`. `turn_context` → `x-codex.turn_context` when its settings (model, cwd,
//!   approval, sandbox, effort) differ from the previous one (repeats are counted, info).
//! * Messages: user text → `control.prompt.request` (environment context, AGENTS.md and other
//!   injected text → `x-codex.injected`; developer / system → `x-codex.developer`); assistant
//!   text → `agent.text.done`; `reasoning` summaries → `agent.thinking.done` (encrypted only →
//!   `redacted`). The same fact written twice (`user_message`, `agent_message`,
//!   `agent_reasoning` events mirroring the response items, in either order) is shown once.
//! * Calls, paired by `call_id` ([`super::codex_emit::Emitter`]): `function_call` (`shell`,
//!   `exec_command`, `write_stdin`, `update_plan`, MCP and others), `custom_tool_call`
//!   (freeform `apply_patch`), `local_shell_call`, `web_search_call` (paired with its
//!   `web_search_end` by query), `mcp_tool_call_begin`/`_end`. A `shell` call whose script is
//!   an `apply_patch` heredoc is the call `apply_patch` (input `{patch, workdir, argv}`).
//! * Results: the `shell` output's JSON form `{output, metadata{exit_code, duration_seconds}}`
//!   → `{stdout, exit_code}`, non-zero exit → `error`; its plain-text form (the call never ran):
//!   "patch rejected by user" → `cancelled`, else `error`. `exec_command` / `write_stdin` text
//!   ("Process exited with code N" / "Process running with session ID N", then "Output:"): a
//!   running process's output becomes a stream chunk of its call and the `write_stdin` polls of
//!   that process are tied to it (`polls_invocation_id` on the poll's request and in its
//!   `metadata.codex`, which the detail shows; their output chunks on the polled call); `exec_command_end` (authoritative: `exit_code`, `status`,
//!   `duration`) or a poll seeing the exit ends the call. `apply_patch` → a unified diff
//!   (`patch_apply_end.changes[*].unified_diff` when present, else the patch converted by
//!   [`super::codex_patch`]), `success: false` → `error`. `update_plan` → `{plan,
//!   explanation, message}` (a checklist). Failed MCP calls (`Err`, or `isError`) → `error`.
//! * Turns: `task_complete` → `session.turn.end` (`end_turn`); `turn_aborted` →
//!   `session.turn.end` with its reason (`interrupted`), after a `cancelled` result (at the
//!   abort) for every call still open; calls written after the abort (0.40 writes the
//!   interrupted call's items then) still open at the next prompt are cancelled there.
//! * Sessions: a `session_meta` with another id starts a new session (appended rollouts): its
//!   call ids, derived catalog, settings and token totals are its own.
//! * `token_count` → `session.usage` of `last_token_usage` (cached input split out), deduplicated
//!   on the cumulative `total_token_usage` (a repeat is counted, not shown); one with only
//!   `rate_limits` → `x-codex.rate_limits`. `compacted` / `context_compacted` →
//!   `session.compacted` (one row: the event following a `compacted` record mirrors it); `error` / `stream_error` → `session.error`.
//! * `ghost_snapshot`, `task_started`, `turn_diff`, `record_type: state` → `x-codex.<kind>`; any
//!   other record → `x-codex.<kind>`, counted and reported once per kind (info).
//!
//! Spans: in a saved file, a call's request and a `shell` / `local_shell` result (the big
//! outputs) carry their line's byte span, so a file-backed session keeps neither; [`reparse`]
//! reads them back from the line. Other results are made from more than one line (a patch's
//! diff, a process's polls, a plan's arguments) and stay in memory.
//!
//! Invariants: one line at a time, nothing waits for the end of input except the findings; a
//! running process's collected output is capped at [`MAX_PROCESS_OUTPUT`]; never panics; bad
//! lines are `Decoded::Malformed` with their line number.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::{Map, Value, json};

use super::codex_emit::{
    Emitter, content_text, decode_line, info, obj, openai_usage, same_call, str_of,
};
use super::codex_patch::{patch_files, patch_in_argv, to_unified};
use super::{Decoded, Decoder};
use crate::finding::code;
use crate::protocol::{Body, FrameType, ResultStatus, StreamType, Timestamp};

/// Output of a running process kept for its final result, in bytes (the rest is in the chunks).
pub const MAX_PROCESS_OUTPUT: usize = 1024 * 1024;
/// The output of a call cancelled by an interrupted turn.
const INTERRUPTED: &str = "the turn was interrupted before this call returned";
/// Texts remembered to recognise the second copy of a mirrored fact.
const MIRROR_WINDOW: usize = 64;

/// Envelope `type`s of a rollout line.
pub const ENVELOPE_TYPES: &[&str] = &[
    "session_meta",
    "turn_context",
    "response_item",
    "event_msg",
    "compacted",
];

/// What a call is, for reading its result.
#[derive(Debug, Clone)]
enum Kind {
    /// `shell` / `local_shell`: output JSON `{output, metadata}` or plain text.
    Shell,
    /// `apply_patch` (heredoc or freeform), with its patch text.
    Patch(String),
    /// `exec_command`: text with a process header.
    Exec,
    /// `write_stdin` polling the process of call `target` (when known).
    Poll(Option<String>),
    /// `update_plan`, with its arguments.
    Plan(Value),
    /// Anything else.
    Other,
}

/// Facts that can be written twice (an event mirroring a response item).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Fact {
    Prompt,
    Text,
    Thinking,
    Search,
}

/// Decodes a Codex rollout, one line at a time (see the module docs).
#[derive(Debug)]
pub struct CodexDecoder {
    em: Emitter,
    /// Kind of each call, by invocation id (a repeated raw id names another call).
    kinds: HashMap<String, Kind>,
    /// Process id ("session ID N") → the call that started it.
    processes: HashMap<String, String>,
    /// Output collected per running call (for its final result).
    collected: HashMap<String, String>,
    mirror: VecDeque<(Fact, u64)>,
    mirrored: u64,
    /// The previous `turn_context` settings, and how many repeats were not shown.
    context: Option<Value>,
    context_repeats: u64,
    /// The previous cumulative token usage, and how many repeats were not shown.
    last_total: Option<Value>,
    usage_repeats: u64,
    model: Option<String>,
    /// A turn was aborted (at this line and time): its open calls were cancelled then, and calls
    /// written after the abort still open at the next prompt are cancelled there.
    aborted: Option<(u64, Option<Timestamp>)>,
    /// A `compacted` record was shown and its `context_compacted` event has not come yet.
    compacted: bool,
    /// Web searches without a call id, numbered.
    searches: u64,
    /// The frame of the line being decoded that can be read back from it alone
    /// ([`reparse`]): `(true, id)` the result of `shell` call `id`, `(false, id)` the request.
    readable: Option<(bool, String)>,
}

impl Default for CodexDecoder {
    fn default() -> Self {
        Self::new()
    }
}

fn hash(s: &str) -> u64 {
    let mut h = DefaultHasher::new();
    s.trim().hash(&mut h);
    h.finish()
}

/// User text Codex injected (not typed): environment context, AGENTS.md, instructions.
fn is_injected(text: &str) -> bool {
    let t = text.trim_start();
    [
        "<environment_context>",
        "<user_instructions>",
        "# AGENTS.md instructions",
        "<INSTRUCTIONS>",
        "<turn_aborted>",
    ]
    .iter()
    .any(|p| t.starts_with(p))
}

/// The exit code and body of an `exec_command` / `write_stdin` output text: `(exit code, process
/// id still running, body after "Output:")`.
fn exec_text(text: &str) -> (Option<i64>, Option<String>, String) {
    let mut code = None;
    let mut running = None;
    let mut body = None;
    let mut rest = text;
    while !rest.is_empty() {
        let (l, r) = rest.split_once('\n').unwrap_or((rest, ""));
        rest = r;
        let l = l.trim_end_matches('\r');
        if let Some(n) = l.strip_prefix("Process exited with code ") {
            code = n.trim().parse().ok();
        } else if let Some(n) = l.strip_prefix("Process running with session ID ") {
            running = Some(n.trim().to_owned());
        } else if l == "Output:" {
            body = Some(rest.to_owned());
            break;
        }
    }
    (code, running, body.unwrap_or_else(|| text.to_owned()))
}

/// The `{output, metadata: {exit_code, duration_seconds}}` JSON form of a result, if it is one.
fn json_output(text: &str) -> Option<(String, Option<i64>, Option<f64>)> {
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let v: Value = serde_json::from_str(text).ok()?;
    let out = v.get("output")?.as_str()?.to_owned();
    let meta = v.get("metadata");
    // (An exit code written as a string, "1", is still a failure.)
    let code = meta.and_then(|m| m.get("exit_code")).and_then(|c| {
        c.as_i64()
            .or_else(|| c.as_str().and_then(|s| s.trim().parse().ok()))
    });
    let secs = meta
        .and_then(|m| m.get("duration_seconds"))
        .and_then(Value::as_f64);
    Some((out, code, secs))
}

/// A result `output` field as text plus its `success` flag when it is an object
/// (`{content, success}`, newer Codex) or content items.
fn output_text(v: Option<&Value>) -> (String, Option<bool>) {
    match v {
        Some(Value::String(s)) => (s.clone(), None),
        Some(Value::Object(o)) => {
            let text = match o.get("content") {
                Some(Value::String(s)) => s.clone(),
                Some(c @ Value::Array(_)) => content_text(Some(c)),
                _ => Value::Object(o.clone()).to_string(),
            };
            (text, o.get("success").and_then(Value::as_bool))
        }
        Some(a @ Value::Array(_)) => (content_text(Some(a)), None),
        Some(other) => (other.to_string(), None),
        None => (String::new(), None),
    }
}

/// Status of a plain-text (never ran) shell or patch output.
fn plain_status(text: &str) -> ResultStatus {
    let t = text.to_ascii_lowercase();
    if t.contains("rejected by user") || t.contains("aborted by user") {
        ResultStatus::Cancelled
    } else {
        ResultStatus::Error
    }
}

fn status_of_exit(code: Option<i64>) -> ResultStatus {
    match code {
        Some(0) | None => ResultStatus::Success,
        Some(_) => ResultStatus::Error,
    }
}

impl CodexDecoder {
    pub fn new() -> Self {
        Self {
            em: Emitter::new("x-codex", "Codex", ("codex", "rollout")),
            kinds: HashMap::new(),
            processes: HashMap::new(),
            collected: HashMap::new(),
            mirror: VecDeque::new(),
            mirrored: 0,
            context: None,
            context_repeats: 0,
            last_total: None,
            usage_repeats: 0,
            model: None,
            aborted: None,
            compacted: false,
            searches: 0,
            readable: None,
        }
    }

    /// Whether `text` of `fact` is the second copy of one already shown (and forgets it then);
    /// else remembers it.
    fn seen_twice(&mut self, fact: Fact, text: &str) -> bool {
        let key = (fact, hash(text));
        if let Some(i) = self.mirror.iter().position(|k| *k == key) {
            self.mirror.remove(i);
            self.mirrored += 1;
            return true;
        }
        if self.mirror.len() == MIRROR_WINDOW {
            self.mirror.pop_front();
        }
        self.mirror.push_back(key);
        false
    }

    fn record(&mut self, v: &Value, line: u64, out: &mut Vec<Decoded>) {
        let ts = v.get("timestamp").and_then(Timestamp::from_json);
        self.em.saw_timestamp(ts);
        let ty = str_of(v, "type");
        match (ty, v.get("payload")) {
            (Some(t), Some(p)) if ENVELOPE_TYPES.contains(&t) => match t {
                "session_meta" => self.session_meta(p, line, ts, out),
                "turn_context" => self.turn_context(p, line, ts, out),
                "response_item" => self.item(p, line, ts, out),
                "event_msg" => self.event(p, line, ts, out),
                _ => self.compacted(p, line, ts, out),
            },
            (Some(t), Some(p)) => {
                let pl = p
                    .as_object()
                    .cloned()
                    .unwrap_or_else(|| obj([("value", p.clone())]));
                self.em.unknown(out, t, pl, line, ts);
            }
            (None, _) if str_of(v, "record_type").is_some() => {
                let kind = str_of(v, "record_type").unwrap_or("state");
                let p = v.as_object().cloned().unwrap_or_default();
                self.em.ext(out, kind, p, line, ts);
            }
            (None, _) if v.get("id").is_some() => self.session_meta(v, line, ts, out),
            (Some(_), None) => self.item(v, line, ts, out),
            (None, _) => {
                let p = v.as_object().cloned().unwrap_or_default();
                self.em.unknown(out, "", p, line, ts);
            }
        }
    }

    fn session_meta(
        &mut self,
        p: &Value,
        line: u64,
        ts: Option<Timestamp>,
        out: &mut Vec<Decoded>,
    ) {
        if let Some(id) = str_of(p, "id") {
            match &self.em.session_id {
                Some(cur) if cur != id => {
                    // Another rollout appended: its calls, catalog and totals are its own.
                    self.em.begin_session(out, Some(id.to_owned()));
                    self.kinds.clear();
                    self.processes.clear();
                    self.collected.clear();
                    self.context = None;
                    self.last_total = None;
                    self.aborted = None;
                }
                Some(_) => {}
                None => self.em.session_id = Some(id.to_owned()),
            }
        }
        let cwd = str_of(p, "cwd").map(str::to_owned);
        let p = p.as_object().cloned().unwrap_or_default();
        self.em.ext(out, "session_meta", p, line, ts);
        // The session's working directory, where the viewer finds it (`Session`'s `cwd`).
        if let (Some(cwd), Some(Decoded::Frame(f))) = (cwd, out.last_mut())
            && let Some(Value::Object(m)) = f.envelope.metadata.get_mut("codex")
        {
            m.insert("cwd".into(), Value::String(cwd));
        }
    }

    fn turn_context(
        &mut self,
        p: &Value,
        line: u64,
        ts: Option<Timestamp>,
        out: &mut Vec<Decoded>,
    ) {
        if let Some(m) = str_of(p, "model") {
            self.model = Some(m.to_owned());
        }
        let settings = json!([
            p.get("model"),
            p.get("cwd"),
            p.get("approval_policy"),
            p.get("sandbox_policy"),
            p.get("effort"),
            p.get("turn_id"),
        ]);
        if self.context.as_ref() == Some(&settings) {
            self.context_repeats += 1;
            return;
        }
        self.context = Some(settings);
        let p = p.as_object().cloned().unwrap_or_default();
        self.em.ext(out, "turn_context", p, line, ts);
    }

    fn compacted(&mut self, p: &Value, line: u64, ts: Option<Timestamp>, out: &mut Vec<Decoded>) {
        let mut c = Map::new();
        c.insert("trigger".into(), json!("auto"));
        if let Some(m) = p.get("message") {
            c.insert("summary".into(), m.clone());
        }
        if let Some(Value::Array(h)) = p.get("replacement_history") {
            c.insert("replacement_items".into(), json!(h.len()));
        }
        self.em.push(out, FrameType::SessionCompacted, c, line, ts);
        self.compacted = true;
    }

    fn prompt(&mut self, text: &str, line: u64, ts: Option<Timestamp>, out: &mut Vec<Decoded>) {
        if self.seen_twice(Fact::Prompt, text) {
            return;
        }
        if is_injected(text) {
            self.em
                .ext(out, "injected", obj([("text", json!(text))]), line, ts);
            return;
        }
        if let Some((at, when)) = self.aborted.take() {
            // Calls written after the abort and never answered (0.40 writes the interrupted
            // call's items after `turn_aborted`).
            self.em.cancel_open(out, INTERRUPTED, at, when);
        }
        let p = obj([("text", json!(text)), ("input_type", json!("text"))]);
        self.em
            .push(out, FrameType::ControlPromptRequest, p, line, ts);
    }

    fn agent_text(&mut self, text: &str, line: u64, ts: Option<Timestamp>, out: &mut Vec<Decoded>) {
        if text.trim().is_empty() || self.seen_twice(Fact::Text, text) {
            return;
        }
        let mut p = obj([("text", json!(text))]);
        if let Some(m) = &self.model {
            p.insert("model".into(), json!(m));
        }
        self.em.push(out, FrameType::AgentTextDone, p, line, ts);
    }

    fn thinking(&mut self, text: &str, line: u64, ts: Option<Timestamp>, out: &mut Vec<Decoded>) {
        if self.seen_twice(Fact::Thinking, text) {
            return;
        }
        let p = obj([("text", json!(text))]);
        self.em.push(out, FrameType::AgentThinkingDone, p, line, ts);
    }

    fn item(&mut self, p: &Value, line: u64, ts: Option<Timestamp>, out: &mut Vec<Decoded>) {
        let ty = str_of(p, "type").unwrap_or("");
        match ty {
            "message" => {
                let text = content_text(p.get("content"));
                match str_of(p, "role") {
                    Some("user") => self.prompt(&text, line, ts, out),
                    Some("assistant") => self.agent_text(&text, line, ts, out),
                    _ => {
                        let mut m = obj([("text", json!(text))]);
                        if let Some(r) = p.get("role") {
                            m.insert("role".into(), r.clone());
                        }
                        self.em.ext(out, "developer", m, line, ts);
                    }
                }
            }
            "reasoning" => {
                let parts: Vec<&str> = p
                    .get("summary")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s.get("text").and_then(Value::as_str))
                    .collect();
                let content = content_text(p.get("content"));
                if parts.is_empty() && content.is_empty() {
                    let mut m = obj([("text", json!("")), ("redacted", json!(true))]);
                    if p.get("encrypted_content").is_some() {
                        m.insert("encrypted".into(), json!(true));
                    }
                    self.em.push(out, FrameType::AgentThinkingDone, m, line, ts);
                }
                for part in parts {
                    self.thinking(part, line, ts, out);
                }
                if !content.is_empty() {
                    self.thinking(&content, line, ts, out);
                }
            }
            "function_call" | "custom_tool_call" | "local_shell_call" => {
                self.call(p, line, ts, out);
            }
            "web_search_call" => {
                let query = p
                    .pointer("/action/query")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                if self.seen_twice(Fact::Search, &query) {
                    return;
                }
                self.searches += 1;
                let id = str_of(p, "id")
                    .map_or_else(|| format!("web_search-{}", self.searches), str::to_owned);
                let failed = str_of(p, "status") == Some("failed");
                self.web_search(&id, p.get("action"), failed, line, ts, out);
            }
            "function_call_output" | "custom_tool_call_output" => self.output(p, line, ts, out),
            "ghost_snapshot" | "compaction" | "compaction_summary" => {
                if ty == "ghost_snapshot" {
                    let mut m = p.as_object().cloned().unwrap_or_default();
                    m.remove("type");
                    self.em.ext(out, ty, m, line, ts);
                } else {
                    let mut c = obj([("trigger", json!("auto"))]);
                    if let Some(e) = p.get("encrypted_content") {
                        c.insert("encrypted".into(), json!(e.is_string()));
                    }
                    self.em.push(out, FrameType::SessionCompacted, c, line, ts);
                }
            }
            other => {
                let m = p.as_object().cloned().unwrap_or_default();
                self.em.unknown(out, other, m, line, ts);
            }
        }
    }

    fn web_search(
        &mut self,
        id: &str,
        action: Option<&Value>,
        failed: bool,
        line: u64,
        ts: Option<Timestamp>,
        out: &mut Vec<Decoded>,
    ) {
        let action = action.cloned().unwrap_or(Value::Null);
        let query = action.get("query").cloned().unwrap_or(Value::Null);
        let input = obj([("query", query.clone())]);
        self.em.request(
            out,
            id,
            "web_search",
            Value::Object(input),
            Map::new(),
            line,
            ts,
        );
        let (status, output) = if failed {
            (ResultStatus::Error, json!("the web search failed"))
        } else {
            let mut o = obj([("query", query.clone()), ("title", query)]);
            if let Some(q) = action.get("queries") {
                o.insert("results".into(), q.clone());
            }
            (ResultStatus::Success, Value::Object(o))
        };
        self.em
            .result(out, id, status, output, None, Map::new(), line, ts);
    }

    fn call(&mut self, p: &Value, line: u64, ts: Option<Timestamp>, out: &mut Vec<Decoded>) {
        let Some((id, name, mut kind, input)) = call_of(p) else {
            return;
        };
        let mut extra = Map::new();
        if let Kind::Poll(_) = kind {
            let pid = input.get("session_id").map(|s| match s {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            let target = pid
                .as_ref()
                .and_then(|pid| self.processes.get(pid).cloned());
            if let (Some(pid), None) = (&pid, &target) {
                // (attack 6 #13: shown "ok" with no word that nothing started the process.)
                let msg = format!(
                    "write_stdin call {id:?} polls process {pid}, which no exec_command call in this session started"
                );
                out.push(info(code::UNRECOGNISED_RECORD, line, msg));
            }
            if let Some(t) = target.as_deref().and_then(|t| self.em.invocation_of(t)) {
                extra.insert("polls_invocation_id".into(), json!(t));
            }
            kind = Kind::Poll(target);
        }
        let first = out.len();
        let polls = extra.get("polls_invocation_id").cloned();
        if let Some(inv) = self.em.request(out, &id, &name, input, extra, line, ts) {
            // (A repeated record keeps its first call's kind.)
            self.kinds.insert(inv.clone(), kind);
            self.readable = Some((false, inv));
        }
        // The tie also goes to the request's metadata, which the session keeps (the detail
        // shows it).
        if let Some(t) = polls {
            for d in &mut out[first..] {
                if let Decoded::Frame(f) = d
                    && matches!(f.body, Body::Request(_))
                    && let Some(Value::Object(c)) = f.envelope.metadata.get_mut("codex")
                {
                    c.insert("polls_invocation_id".into(), t.clone());
                }
            }
        }
    }

    fn output(&mut self, p: &Value, line: u64, ts: Option<Timestamp>, out: &mut Vec<Decoded>) {
        let id = str_of(p, "call_id").unwrap_or("").to_owned();
        let (text, success) = output_text(p.get("output"));
        if self.em.is_known(&id) && !self.em.is_open(&id) {
            // Already ended by its `exec_command_end` / `patch_apply_end` event.
            self.mirrored += 1;
            return;
        }
        let kind = self
            .em
            .invocation_of(&id)
            .and_then(|inv| self.kinds.remove(inv))
            .unwrap_or(Kind::Other);
        let none = Map::new();
        match kind {
            Kind::Shell => {
                let (status, output, dur) = shell_result(&text);
                let inv = self
                    .em
                    .result(out, &id, status, output, dur, none, line, ts);
                self.readable = inv.map(|inv| (true, inv));
            }
            Kind::Patch(patch) => {
                let (status, body, dur) = match json_output(&text) {
                    Some((o, code, secs)) => (status_of_exit(code), o, secs.map(|s| s * 1000.0)),
                    None if success == Some(false) => (ResultStatus::Error, text, None),
                    None if text.starts_with("Success") || success == Some(true) => {
                        (ResultStatus::Success, text, None)
                    }
                    None => (plain_status(&text), text, None),
                };
                let output = if status == ResultStatus::Success {
                    json!(format!("{}\n{}", body.trim_end(), to_unified(&patch)))
                } else {
                    json!(body)
                };
                self.em
                    .result(out, &id, status, output, dur, none, line, ts);
            }
            Kind::Exec | Kind::Poll(_) => self.exec_output(&id, &kind, &text, line, ts, out),
            Kind::Plan(args) => {
                let mut o = Map::new();
                o.insert(
                    "plan".into(),
                    args.get("plan").cloned().unwrap_or(Value::Null),
                );
                if let Some(e) = args.get("explanation") {
                    o.insert("explanation".into(), e.clone());
                }
                o.insert("message".into(), json!(text));
                let status = if success == Some(false) {
                    ResultStatus::Error
                } else {
                    ResultStatus::Success
                };
                let output = if status == ResultStatus::Success {
                    Value::Object(o)
                } else {
                    json!(text)
                };
                self.em
                    .result(out, &id, status, output, None, none, line, ts);
            }
            Kind::Other => {
                let status = if success == Some(false) {
                    ResultStatus::Error
                } else {
                    ResultStatus::Success
                };
                self.em
                    .result(out, &id, status, json!(text), None, none, line, ts);
            }
        }
    }

    /// The text output of an `exec_command` or `write_stdin` call.
    fn exec_output(
        &mut self,
        id: &str,
        kind: &Kind,
        text: &str,
        line: u64,
        ts: Option<Timestamp>,
        out: &mut Vec<Decoded>,
    ) {
        let (code, running, body) = exec_text(text);
        // The call whose process this output belongs to.
        let owner = match kind {
            Kind::Poll(Some(t)) => Some(t.clone()),
            Kind::Poll(None) => None,
            _ => Some(id.to_owned()),
        };
        if let Kind::Poll(_) = kind {
            let status = ResultStatus::Success;
            self.em
                .result(out, id, status, json!(body), None, Map::new(), line, ts);
        }
        let Some(owner) = owner.filter(|o| self.em.is_open(o)) else {
            return;
        };
        if let Some(pid) = running {
            self.processes.insert(pid, owner.clone());
        }
        if code.is_none() {
            // Still running: the output so far is a chunk of the call.
            if !body.is_empty() {
                self.em
                    .chunk(out, &owner, StreamType::Stdout, &body, line, ts);
                let c = self.collected.entry(owner).or_default();
                if c.len() + body.len() <= MAX_PROCESS_OUTPUT {
                    c.push_str(&body);
                }
            }
            return;
        }
        let mut all = self.collected.remove(&owner).unwrap_or_default();
        all.push_str(&body);
        let output = shell_output(&all, code);
        self.em.result(
            out,
            &owner,
            status_of_exit(code),
            output,
            None,
            Map::new(),
            line,
            ts,
        );
    }

    fn event(&mut self, p: &Value, line: u64, ts: Option<Timestamp>, out: &mut Vec<Decoded>) {
        let ty = str_of(p, "type").unwrap_or("");
        let rest = || {
            let mut m = p.as_object().cloned().unwrap_or_default();
            m.remove("type");
            m
        };
        match ty {
            "user_message" => {
                let text = str_of(p, "message").unwrap_or("").to_owned();
                self.prompt(&text, line, ts, out);
            }
            "agent_message" => {
                let text = str_of(p, "message").unwrap_or("").to_owned();
                self.agent_text(&text, line, ts, out);
            }
            "agent_reasoning" | "agent_reasoning_raw_content" => {
                let text = str_of(p, "text").unwrap_or("").to_owned();
                self.thinking(&text, line, ts, out);
            }
            "token_count" => self.token_count(p, line, ts, out),
            "task_started" => self.em.ext(out, ty, rest(), line, ts),
            "task_complete" => {
                let mut e = obj([("stop_reason", json!("end_turn"))]);
                if let Some(t) = p.get("turn_id") {
                    e.insert("turn_id".into(), t.clone());
                }
                self.em.push(out, FrameType::SessionTurnEnd, e, line, ts);
            }
            "turn_aborted" => {
                let reason = str_of(p, "reason").unwrap_or("interrupted");
                let mut e = obj([("stop_reason", json!(reason))]);
                if let Some(t) = p.get("turn_id") {
                    e.insert("turn_id".into(), t.clone());
                }
                self.em.cancel_open(out, INTERRUPTED, line, ts);
                self.em.push(out, FrameType::SessionTurnEnd, e, line, ts);
                self.aborted = Some((line, ts.or_else(|| self.em.last_timestamp())));
            }
            "exec_command_begin" | "patch_apply_begin" | "web_search_begin"
                if str_of(p, "call_id").is_some_and(|id| self.em.is_known(id)) =>
            {
                // The call's request, written again as an event.
                self.mirrored += 1;
            }
            "exec_command_end" => self.exec_end(p, line, ts, out),
            "patch_apply_end" => self.patch_end(p, line, ts, out),
            "web_search_end" => {
                let query = p
                    .pointer("/action/query")
                    .or_else(|| p.get("query"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                if self.seen_twice(Fact::Search, &query) {
                    return;
                }
                let id = str_of(p, "call_id").unwrap_or("web_search").to_owned();
                let action = p
                    .get("action")
                    .cloned()
                    .unwrap_or_else(|| json!({ "query": query }));
                self.web_search(&id, Some(&action), false, line, ts, out);
            }
            "mcp_tool_call_begin" => {
                let id = str_of(p, "call_id").unwrap_or("").to_owned();
                if self.em.is_known(&id) {
                    self.mirrored += 1;
                    return;
                }
                let inv = p.get("invocation").unwrap_or(&Value::Null);
                let name = mcp_name(inv);
                let input = inv.get("arguments").cloned().unwrap_or(Value::Null);
                self.em
                    .request(out, &id, &name, input, Map::new(), line, ts);
            }
            "mcp_tool_call_end" => self.mcp_end(p, line, ts, out),
            "context_compacted" if std::mem::take(&mut self.compacted) => {
                // The event of the `compacted` record just shown: one compaction, one row.
                self.mirrored += 1;
            }
            "context_compacted" => {
                let c = obj([("trigger", json!("auto"))]);
                self.em.push(out, FrameType::SessionCompacted, c, line, ts);
            }
            "error" | "stream_error" => {
                let mut e = rest();
                e.remove("type");
                e.insert("kind".into(), json!(ty));
                self.em.push(out, FrameType::SessionError, e, line, ts);
            }
            "turn_diff" | "exec_command_begin" | "patch_apply_begin" | "web_search_begin" => {
                self.em.ext(out, ty, rest(), line, ts);
            }
            other => self.em.unknown(out, other, rest(), line, ts),
        }
    }

    fn token_count(&mut self, p: &Value, line: u64, ts: Option<Timestamp>, out: &mut Vec<Decoded>) {
        let info = p.get("info").filter(|i| !i.is_null());
        let Some(info) = info else {
            let limits = p.get("rate_limits").cloned().unwrap_or(Value::Null);
            self.em
                .ext(out, "rate_limits", obj([("rate_limits", limits)]), line, ts);
            return;
        };
        let total = info.get("total_token_usage").cloned();
        if total.is_some() && total == self.last_total {
            self.usage_repeats += 1;
            return;
        }
        self.last_total.clone_from(&total);
        let last = info
            .get("last_token_usage")
            .or(total.as_ref())
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut u = openai_usage(&last);
        if let Some(m) = &self.model {
            u.insert("model".into(), json!(m));
        }
        if let Some(w) = info.get("model_context_window") {
            u.insert("model_context_window".into(), w.clone());
        }
        if let Some(t) = total {
            u.insert("session_total".into(), t);
        }
        self.em.push(out, FrameType::SessionUsage, u, line, ts);
    }

    fn exec_end(&mut self, p: &Value, line: u64, ts: Option<Timestamp>, out: &mut Vec<Decoded>) {
        let id = str_of(p, "call_id").unwrap_or("").to_owned();
        if !self.em.is_open(&id) {
            if self.em.is_known(&id) {
                self.mirrored += 1;
            } else {
                // A command the user ran (`!cmd`), with no call of the model.
                let m = p.as_object().cloned().unwrap_or_default();
                self.em.ext(out, "exec_command_end", m, line, ts);
            }
            return;
        }
        let code = p.get("exit_code").and_then(Value::as_i64);
        let failed = str_of(p, "status") == Some("failed");
        let status = if failed {
            ResultStatus::Error
        } else {
            status_of_exit(code)
        };
        let text = str_of(p, "aggregated_output")
            .or_else(|| str_of(p, "stdout"))
            .unwrap_or("");
        let mut o = Map::new();
        o.insert("stdout".into(), json!(text));
        if let Some(e) = str_of(p, "stderr").filter(|e| !e.is_empty() && text.is_empty()) {
            o.insert("stderr".into(), json!(e));
        }
        if let Some(c) = code {
            o.insert("exit_code".into(), json!(c));
        }
        let dur = p.get("duration").and_then(|d| {
            let s = d.get("secs").and_then(Value::as_f64)?;
            let n = d.get("nanos").and_then(Value::as_f64).unwrap_or(0.0);
            Some(s * 1000.0 + n / 1e6)
        });
        let mut extra = Map::new();
        for k in ["parsed_cmd", "process_id", "source"] {
            if let Some(x) = p.get(k) {
                extra.insert(k.to_owned(), x.clone());
            }
        }
        self.collected.remove(&id);
        self.em
            .result(out, &id, status, Value::Object(o), dur, extra, line, ts);
    }

    fn patch_end(&mut self, p: &Value, line: u64, ts: Option<Timestamp>, out: &mut Vec<Decoded>) {
        let id = str_of(p, "call_id").unwrap_or("").to_owned();
        if !self.em.is_open(&id) {
            if self.em.is_known(&id) {
                self.mirrored += 1;
            } else {
                let m = p.as_object().cloned().unwrap_or_default();
                self.em.ext(out, "patch_apply_end", m, line, ts);
            }
            return;
        }
        let ok = p.get("success").and_then(Value::as_bool) != Some(false);
        let stdout = str_of(p, "stdout").unwrap_or("");
        let output = if ok {
            let diff = changes_diff(p.get("changes"));
            let diff = if diff.is_empty() {
                match self
                    .em
                    .invocation_of(&id)
                    .and_then(|i| self.kinds.remove(i))
                {
                    Some(Kind::Patch(pt)) => to_unified(&pt),
                    _ => String::new(),
                }
            } else {
                diff
            };
            json!(format!("{}\n{diff}", stdout.trim_end()))
        } else {
            let e = str_of(p, "stderr")
                .filter(|e| !e.is_empty())
                .unwrap_or(stdout);
            json!(e)
        };
        let status = if ok {
            ResultStatus::Success
        } else {
            ResultStatus::Error
        };
        self.em
            .result(out, &id, status, output, None, Map::new(), line, ts);
    }

    fn mcp_end(&mut self, p: &Value, line: u64, ts: Option<Timestamp>, out: &mut Vec<Decoded>) {
        let id = str_of(p, "call_id").unwrap_or("").to_owned();
        if !self.em.is_open(&id) {
            if self.em.is_known(&id) {
                self.mirrored += 1;
                return;
            }
            // An end without its begin: request it from the end's invocation.
            let inv = p.get("invocation").unwrap_or(&Value::Null);
            let input = inv.get("arguments").cloned().unwrap_or(Value::Null);
            self.em
                .request(out, &id, &mcp_name(inv), input, Map::new(), line, ts);
        }
        let result = p.get("result").unwrap_or(&Value::Null);
        let (status, output) = if let Some(e) = result.get("Err") {
            let t = e.as_str().map_or_else(|| e.to_string(), str::to_owned);
            (ResultStatus::Error, json!(t))
        } else {
            let ok = result.get("Ok").unwrap_or(result);
            let is_error = ok
                .get("isError")
                .or_else(|| ok.get("is_error"))
                .and_then(Value::as_bool)
                == Some(true);
            let text = content_text(ok.get("content"));
            if is_error {
                (ResultStatus::Error, json!(text))
            } else {
                (ResultStatus::Success, ok.clone())
            }
        };
        let dur = p.get("duration").and_then(|d| {
            let s = d.get("secs").and_then(Value::as_f64)?;
            let n = d.get("nanos").and_then(Value::as_f64).unwrap_or(0.0);
            Some(s * 1000.0 + n / 1e6)
        });
        self.em
            .result(out, &id, status, output, dur, Map::new(), line, ts);
    }
}

/// A call response item (`function_call`, `custom_tool_call`, `local_shell_call`) as `(call id,
/// tool name, kind, input)`: what the request shows, from the item alone (a `write_stdin`'s
/// polled call is looked up by the caller). A `shell` call whose script is an `apply_patch`
/// heredoc is the call `apply_patch`.
fn call_of(p: &Value) -> Option<(String, String, Kind, Value)> {
    let argv_of = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    };
    let id = str_of(p, "call_id").unwrap_or("").to_owned();
    let name = str_of(p, "name").unwrap_or("").to_owned();
    match str_of(p, "type")? {
        "custom_tool_call" => {
            let input = p.get("input").cloned().unwrap_or(Value::Null);
            if name == "apply_patch" {
                let patch = input.as_str().unwrap_or("").to_owned();
                let i = obj([("patch", json!(patch))]);
                Some((id, name, Kind::Patch(patch), Value::Object(i)))
            } else {
                Some((
                    id,
                    name,
                    Kind::Other,
                    Value::Object(obj([("input", input)])),
                ))
            }
        }
        "local_shell_call" => {
            let id = str_of(p, "call_id")
                .or_else(|| str_of(p, "id"))
                .unwrap_or("");
            let argv = argv_of(p.pointer("/action/command"));
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            let mut input = Map::new();
            input.insert("command".into(), json!(script_of(&argv)));
            input.insert("argv".into(), json!(argv));
            if let Some(Value::Object(a)) = p.get("action") {
                for (k, v) in a {
                    if k != "command" && k != "type" {
                        input.insert(k.clone(), v.clone());
                    }
                }
            }
            let name = "local_shell".to_owned();
            Some((id.to_owned(), name, Kind::Shell, Value::Object(input)))
        }
        "function_call" => {
            let args = match p.get("arguments") {
                Some(Value::String(s)) => serde_json::from_str::<Value>(s)
                    .unwrap_or_else(|_| Value::Object(obj([("arguments", json!(s))]))),
                Some(other) => other.clone(),
                None => Value::Object(Map::new()),
            };
            let v = match name.as_str() {
                "shell" | "container.exec" => {
                    let owned = argv_of(args.get("command"));
                    let words: Vec<&str> = owned.iter().map(String::as_str).collect();
                    let mut input = Map::new();
                    let patch = patch_in_argv(&words);
                    match &patch {
                        Some(pt) => input.insert("patch".into(), json!(pt)),
                        None => input.insert("command".into(), json!(script_of(&words))),
                    };
                    input.insert("argv".into(), json!(words));
                    if let Value::Object(a) = &args {
                        for (k, v) in a {
                            if k != "command" {
                                input.insert(k.clone(), v.clone());
                            }
                        }
                    }
                    match patch {
                        Some(pt) => (
                            "apply_patch".to_owned(),
                            Kind::Patch(pt),
                            Value::Object(input),
                        ),
                        None => (name, Kind::Shell, Value::Object(input)),
                    }
                }
                "apply_patch" => {
                    let pt = str_of(&args, "input")
                        .or_else(|| str_of(&args, "patch"))
                        .unwrap_or("")
                        .to_owned();
                    let input = obj([("patch", json!(pt))]);
                    (name, Kind::Patch(pt), Value::Object(input))
                }
                "exec_command" => (name, Kind::Exec, args),
                "write_stdin" => (name, Kind::Poll(None), args),
                "update_plan" => (name, Kind::Plan(args.clone()), args),
                _ => (name, Kind::Other, args),
            };
            Some((id, v.0, v.1, v.2))
        }
        _ => None,
    }
}

/// The result of a `shell` / `local_shell` call from its `function_call_output` item alone:
/// `(status, output, duration_ms)` (see the module docs).
fn shell_result(text: &str) -> (ResultStatus, Value, Option<f64>) {
    match json_output(text) {
        Some((o, code, secs)) => (
            status_of_exit(code),
            shell_output(&o, code),
            secs.map(|s| s * 1000.0),
        ),
        None => (plain_status(text), json!(text), None),
    }
}

/// The response item of a rollout line: the envelope's payload, or the bare item of the
/// pre-envelope format.
fn item_of(v: &Value) -> Option<&Value> {
    match (str_of(v, "type"), v.get("payload")) {
        (Some("response_item"), Some(p)) => Some(p),
        (Some(_), None) => Some(v),
        _ => None,
    }
}

/// Reads a call's input or output again from its rollout line (`text`, the line a frame's
/// `Origin::span` points at), as the decoder built it: the call item `id`'s input, or the
/// `function_call_output` (or `custom_tool_call_output`) of a `shell` / `local_shell` call (the
/// only results whose frames carry
/// a span: the others are made from more than one line). `None`: the line holds no such item
/// (the file changed). For `Session::reparse`.
pub fn reparse(
    text: &str,
    id: &str,
    tool: &str,
    part: crate::session::Part,
    input: &dyn Fn() -> Value,
) -> Option<Value> {
    let _ = input;
    let v: Value = serde_json::from_str(text).ok()?;
    let p = item_of(&v)?;
    match part {
        crate::session::Part::Input => {
            let (cid, _, _, input) = call_of(p)?;
            same_call(&cid, id).then_some(input)
        }
        crate::session::Part::Output => {
            // Both output items are read the same way by the decoder (`output`).
            let ok = matches!(
                str_of(p, "type"),
                Some("function_call_output" | "custom_tool_call_output")
            ) && same_call(str_of(p, "call_id").unwrap_or(""), id)
                && matches!(tool, "shell" | "local_shell");
            ok.then(|| shell_result(&output_text(p.get("output")).0).1)
        }
    }
}

/// `server.tool` of an MCP invocation `{server, tool}`.
pub fn mcp_name(inv: &Value) -> String {
    format!(
        "{}.{}",
        str_of(inv, "server").unwrap_or("mcp"),
        str_of(inv, "tool").unwrap_or("?")
    )
}

/// The script of `["bash", "-lc", script]`, else the argv joined by spaces.
pub fn script_of(argv: &[&str]) -> String {
    match argv {
        [sh, flag, script] if flag.starts_with('-') && flag.ends_with('c') && !sh.is_empty() => {
            (*script).to_owned()
        }
        _ => argv.join(" "),
    }
}

/// A shell result: `{stdout, exit_code}` (the text renderer's shape).
fn shell_output(text: &str, code: Option<i64>) -> Value {
    let mut o = obj([("stdout", json!(text))]);
    if let Some(c) = code {
        o.insert("exit_code".into(), json!(c));
    }
    Value::Object(o)
}

/// `patch_apply_end.changes` (`{path: {type, unified_diff, move_path, content}}`) as one
/// unified diff with file headers.
fn changes_diff(changes: Option<&Value>) -> String {
    let Some(Value::Object(ch)) = changes else {
        return String::new();
    };
    let mut s = String::new();
    for (path, c) in ch {
        let kind = str_of(c, "type").unwrap_or("update");
        let to = str_of(c, "move_path").unwrap_or(path);
        match kind {
            "add" => {
                let _ = write!(s, "--- /dev/null\n+++ b/{path}\n");
                let content = str_of(c, "content").unwrap_or("");
                let n = content.lines().count();
                let _ = writeln!(s, "@@ -0,0 +1,{n} @@");
                for l in content.lines() {
                    s.push('+');
                    s.push_str(l);
                    s.push('\n');
                }
            }
            "delete" => {
                let _ = write!(s, "--- a/{path}\n+++ /dev/null\n");
                let content = str_of(c, "content").unwrap_or("");
                let n = content.lines().count();
                if n > 0 {
                    let _ = writeln!(s, "@@ -1,{n} +0,0 @@");
                }
                for l in content.lines() {
                    s.push('-');
                    s.push_str(l);
                    s.push('\n');
                }
            }
            _ => {
                let d = str_of(c, "unified_diff").unwrap_or("");
                if !d.starts_with("--- ") {
                    let _ = write!(s, "--- a/{path}\n+++ b/{to}\n");
                }
                s.push_str(d);
                if !d.ends_with('\n') {
                    s.push('\n');
                }
            }
        }
    }
    s
}

/// The files of a patch as `A path, M path` (a one-line summary).
pub fn patch_summary(patch: &str) -> String {
    patch_files(patch)
        .iter()
        .map(|(k, p)| format!("{k} {p}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Decoder for CodexDecoder {
    fn line(&mut self, line: u64, text: &str, out: &mut Vec<Decoded>) {
        decode_line(line, text, out, |v, out| self.record(v, line, out));
    }

    /// A saved file's line: a call's request, and a `shell` call's result, carry the line's span
    /// (the session reads their input and output back with [`reparse`] when shown).
    fn line_span(
        &mut self,
        line: u64,
        span: crate::protocol::ByteSpan,
        text: &str,
        out: &mut Vec<Decoded>,
    ) {
        let first = out.len();
        self.readable = None;
        self.line(line, text, out);
        let Some((result, id)) = self.readable.take() else {
            return;
        };
        for d in &mut out[first..] {
            if let Decoded::Frame(f) = d {
                let this = match &f.body {
                    Body::Request(r) if !result => r.invocation_id.as_deref() == Some(&id),
                    Body::Result(r) if result => r.invocation_id.as_deref() == Some(&id),
                    _ => false,
                };
                if this {
                    f.origin.span = Some(span);
                }
            }
        }
    }

    fn finish(&mut self, out: &mut Vec<Decoded>) {
        self.em.finish(out);
        if self.mirrored > 0 {
            let msg = format!(
                "{} record(s) repeat a fact already shown (events mirroring response items: prompts, messages, reasoning, call ends); shown once",
                self.mirrored
            );
            out.push(info(code::DUPLICATE_RECORD, 0, msg));
        }
        if self.context_repeats > 0 || self.usage_repeats > 0 {
            let msg = format!(
                "{} turn_context record(s) repeating the previous settings and {} token_count record(s) repeating the previous totals are not shown",
                self.context_repeats, self.usage_repeats
            );
            out.push(info(code::DUPLICATE_RECORD, 0, msg));
        }
    }
}
