//! One Claude Code record (transcript line or stream-json message) → RAWP frames (SPEC 4).
//!
//! Who calls it: the transcript adapter (`super::claude_code`, after it has ordered the records
//! and placed subagent runs) and the stream-json adapter (`super::stream_json`, line by line).
//!
//! Mapping (per record `type`):
//! * `assistant`: `text` → `agent.text.done`, `thinking` → `agent.thinking.done` (`redacted` when
//!   there is no text), `tool_use` → `tool.invoke.request`; at the last record of an API message
//!   (`message.id`): one `session.usage`, and `session.turn.end` when `stop_reason` ends the turn.
//! * `user`: `tool_result` → `tool.invoke.result`; typed text and slash commands (`/name args`,
//!   with `command: {name, args}`) → `control.prompt.request`; injected / meta / command output
//!   / interrupt text → `x-claude-code.<kind>`; compact summaries.
//! * `system`: `compact_boundary` → `session.compacted`; a 1.0.x hook record (no `subtype`, a
//!   `toolUseID`) → `x-claude-code.hook`; `local_command` → as user text; others →
//!   `x-claude-code.system` (`turn_duration` quiet).
//! * `attachment` (2.1.x, `super::cc_records`): hook runs → `x-claude-code.hook` (with
//!   `invocation_id` and `metadata.rawpv_quiet` when `toolUseID` names a call), a
//!   `queued_command` prompt → `control.prompt.request` (`queued: true`), the others →
//!   `x-claude-code.attachment` (context quiet; unknown types visible and counted).
//! * State records (`mode`, `last-prompt`, `ai-title`, …, `cc_records::META_RECORDS`) →
//!   `x-claude-code.<type>`, quiet but for titles, without a finding.
//! * `summary`, `queue-operation`, `file-history-snapshot`, `progress` → `x-claude-code.<type>`;
//!   anything else → `x-claude-code.<type>`, counted and reported once per type (info).
//!
//! Invariants: every frame gets a `seq` (1-based, in emission order) and a `timestamp` (the
//! record's, else the latest one seen); Claude Code ids go to `metadata.claude_code`; nothing is
//! dropped; never panics.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::Decoded;
use super::cc_output::{
    INTERRUPTED_MARKER, is_rejection, reports_failure, result_text, tool_output,
};
use super::cc_records;
use crate::finding::{Finding, Level, code};
use crate::protocol::{
    Body, Delegation, Frame, FrameType, ResultStatus, StreamType, Timestamp, ToolInvokeRequest,
    ToolInvokeResult, ToolInvokeStream,
};

/// Record fields that describe the record rather than its content: kept in
/// `metadata.claude_code` (ids) or dropped from `x-` payloads (repeated context).
const CONTEXT_KEYS: &[&str] = &[
    "type",
    "parentUuid",
    "logicalParentUuid",
    "isSidechain",
    "userType",
    "cwd",
    "sessionId",
    "session_id",
    "version",
    "gitBranch",
    "uuid",
    "timestamp",
    "slug",
    "isMeta",
    "agentId",
    "requestId",
    "entrypoint",
];

/// Ids copied into `metadata.claude_code`.
const ID_KEYS: &[&str] = &[
    "uuid",
    "parentUuid",
    "logicalParentUuid",
    "isSidechain",
    "isMeta",
    "agentId",
    "requestId",
    "isCompactSummary",
    "parent_tool_use_id",
    // The permission mode a prompt was typed in (`rawpv audit` lists its changes).
    "permissionMode",
];

/// Metadata key marking a frame whose row is quiet (hidden by default; `crate::session::query::
/// is_quiet` reads it): a hook run tied to its call, context Claude Code attached.
pub const QUIET: &str = "rawpv_quiet";

/// Where a record sits: its line, its agent, its file.
#[derive(Debug, Clone, Copy)]
pub struct RecCtx<'a> {
    /// 1-based line in its file.
    pub line: u64,
    /// `metadata.delegation_chain` for the record's frames (empty for the main agent).
    pub chain: &'a [Delegation],
    /// File name when the record came from a file other than the one opened (subagent files).
    pub file: Option<&'a str>,
    /// This record is the last one of its API message (`message.id`): emit usage / turn end.
    pub last_of_message: bool,
    /// The record is read again from its file when shown (its frames carry its span): the
    /// `toolUseResult` is not copied into the result's metadata.
    pub in_file: bool,
}

#[derive(Debug, Clone)]
struct Use {
    name: String,
    ts: Option<Timestamp>,
    line: u64,
    /// Kept only where the result shape needs it (Task description, Read path).
    input: Option<Value>,
    answered: bool,
    /// Next `sequence` for progress chunks.
    chunks: u64,
    /// Lines the last progress chunk drew (the next one draws over them).
    progress_rows: usize,
    /// The record's `sessionId`: a hook ties to the call only within the same session.
    session: Option<Box<str>>,
}

/// Lines of a `bash_progress` record's output tail drawn in its chunk (the emulator's cursor-up
/// reaches `render::ansi::EDIT_WINDOW` lines back).
const PROGRESS_TAIL_LINES: usize = 40;

/// The record → frame mapper; keeps the state pairing needs (tool uses seen, timestamps).
#[derive(Debug, Clone)]
pub struct Mapper {
    seq: u64,
    last_ts: Option<Timestamp>,
    uses: HashMap<String, Use>,
    /// Tool use ids in request order (for the end-of-input "never answered" findings).
    order: Vec<String>,
    unknown: BTreeMap<String, (u64, u64)>,
    /// The previous record was a `compact_boundary` (its summary follows).
    after_boundary: bool,
    /// `tool_use` / `tool_result` blocks repeating one already mapped (copies under new uuids).
    repeated: u64,
    /// Frame type prefix for extension frames, e.g. `x-claude-code`.
    prefix: &'static str,
    /// The session id and `cwd` last put in a frame's `metadata.claude_code.cwd`: a record's
    /// `cwd` goes there on a session's first frame and when it changes, not on every frame.
    cwd: Option<(Option<String>, String)>,
    /// 1.0.x hook runs started ("Running …" records) by (tool use id, hook name): when.
    hook_starts: HashMap<(String, String), Timestamp>,
}

impl Default for Mapper {
    fn default() -> Self {
        Self::new()
    }
}

impl Mapper {
    pub fn new() -> Self {
        Self {
            seq: 0,
            last_ts: None,
            uses: HashMap::new(),
            order: Vec::new(),
            unknown: BTreeMap::new(),
            after_boundary: false,
            repeated: 0,
            prefix: "x-claude-code",
            cwd: None,
            hook_starts: HashMap::new(),
        }
    }

    /// Seeds the timestamp given to frames of records that have none (before the first one).
    pub fn seed_timestamp(&mut self, ts: Option<Timestamp>) {
        if self.last_ts.is_none() {
            self.last_ts = ts;
        }
    }

    /// The latest timestamp seen.
    pub fn last_timestamp(&self) -> Option<Timestamp> {
        self.last_ts
    }

    /// The tool name of tool use `id`, when seen.
    pub fn tool_name(&self, id: &str) -> Option<&str> {
        self.uses.get(id).map(|u| u.name.as_str())
    }

    /// Number of tool uses seen so far.
    pub fn uses_seen(&self) -> usize {
        self.order.len()
    }

    /// Builds a frame with the envelope filled in (seq, timestamp, session, metadata).
    pub fn frame(
        &mut self,
        frame_type: FrameType,
        body: Body,
        rec: Option<&Value>,
        ctx: &RecCtx<'_>,
        ts: Option<Timestamp>,
    ) -> Frame {
        self.seq += 1;
        let mut f = Frame::new(frame_type, body);
        f.origin.line = ctx.line;
        f.envelope.seq = Some(self.seq);
        f.envelope.timestamp = ts.or(self.last_ts);
        if let Some(r) = rec {
            // One pass over the record's keys (ten lookups by hash were a tenth of `check`);
            // the ids go in `ID_KEYS` order, whatever the record's.
            let mut ids: [Option<&Value>; ID_KEYS.len()] = [None; ID_KEYS.len()];
            let (mut sid, mut sid_snake, mut cwd, mut msg_id) = (None, None, None, None);
            let mut has_sid = false;
            for (k, v) in r.as_object().into_iter().flatten() {
                match k.as_str() {
                    "sessionId" => (sid, has_sid) = (v.as_str(), true),
                    "session_id" => sid_snake = v.as_str(),
                    "cwd" => cwd = v.as_str(),
                    "message" => msg_id = v.get("id"),
                    _ => {}
                }
                if let Some(i) = ID_KEYS.iter().position(|id| *id == k)
                    && !v.is_null()
                {
                    ids[i] = Some(v);
                }
            }
            // `session_of`: `sessionId` when it is there (whatever its type), else `session_id`.
            let sid = if has_sid { sid } else { sid_snake };
            f.envelope.session_id = sid.map(str::to_owned);
            let mut cc = Map::new();
            for (k, v) in ID_KEYS.iter().zip(ids) {
                if let Some(v) = v {
                    cc.insert((*k).to_owned(), v.clone());
                }
            }
            if let Some(id) = msg_id {
                cc.insert("messageId".into(), id.clone());
            }
            if let Some(file) = ctx.file {
                cc.insert("file".into(), Value::String(file.to_owned()));
            }
            if let Some(cwd) = cwd {
                let key = (f.envelope.session_id.clone(), cwd.to_owned());
                if self.cwd.as_ref() != Some(&key) {
                    cc.insert("cwd".into(), Value::String(key.1.clone()));
                    self.cwd = Some(key);
                }
            }
            if !cc.is_empty() {
                f.envelope
                    .metadata
                    .insert("claude_code".into(), Value::Object(cc));
            }
        }
        if !ctx.chain.is_empty() {
            f.envelope.metadata.insert(
                "delegation_chain".into(),
                serde_json::to_value(ctx.chain).unwrap_or(Value::Null),
            );
        }
        f
    }

    fn push(
        &mut self,
        out: &mut Vec<Decoded>,
        frame_type: FrameType,
        payload: Map<String, Value>,
        rec: &Value,
        ctx: &RecCtx<'_>,
        ts: Option<Timestamp>,
    ) {
        let f = self.frame(frame_type, Body::Generic(payload), Some(rec), ctx, ts);
        out.push(Decoded::frame(f));
    }

    fn push_ext(
        &mut self,
        out: &mut Vec<Decoded>,
        kind: &str,
        payload: Map<String, Value>,
        rec: &Value,
        ctx: &RecCtx<'_>,
        ts: Option<Timestamp>,
    ) {
        let t = FrameType::from_wire(&format!("{}.{kind}", self.prefix));
        self.push(out, t, payload, rec, ctx, ts);
    }

    /// Keeps `rec` as an `x-claude-code.<kind>` frame (its content fields as the payload).
    pub fn ext(&mut self, rec: &Value, kind: &str, ctx: &RecCtx<'_>, out: &mut Vec<Decoded>) {
        let ts = rec.get("timestamp").and_then(Timestamp::from_json);
        self.push_ext(out, kind, rest(rec), rec, ctx, ts);
    }

    /// Maps one record.
    pub fn record(&mut self, rec: &Value, ctx: &RecCtx<'_>, out: &mut Vec<Decoded>) {
        let ts = rec.get("timestamp").and_then(Timestamp::from_json);
        if let Some(t) = ts {
            self.last_ts = Some(t);
        }
        let after_boundary = std::mem::take(&mut self.after_boundary);
        let rtype = rec.get("type").and_then(Value::as_str).unwrap_or("");
        match rtype {
            "assistant" => self.assistant(rec, ctx, ts, out),
            "user" => self.user(rec, ctx, ts, after_boundary, out),
            "system" if rec.get("subtype").and_then(Value::as_str) == Some("compact_boundary") => {
                let meta = rec
                    .get("compactMetadata")
                    .or_else(|| rec.get("compact_metadata"));
                let mut p = Map::new();
                p.insert(
                    "trigger".into(),
                    meta.and_then(|m| m.get("trigger"))
                        .cloned()
                        .unwrap_or_else(|| json!("auto")),
                );
                if let Some(t) =
                    meta.and_then(|m| m.get("preTokens").or_else(|| m.get("pre_tokens")))
                {
                    p.insert("pre_tokens".into(), t.clone());
                }
                if let Some(c) = rec.get("content") {
                    p.insert("content".into(), c.clone());
                }
                self.push(out, FrameType::SessionCompacted, p, rec, ctx, ts);
                self.after_boundary = true;
            }
            "progress" if self.progress_chunk(rec, ctx, ts, out) => {}
            "progress"
                if let Some(p) = rec.get("data").and_then(|d| {
                    cc_records::hook_progress(d, rec.get("parentToolUseID").and_then(Value::as_str))
                }) =>
            {
                self.hook(p, rec, ctx, ts, out);
            }
            "attachment" => self.attachment(rec, ctx, ts, out),
            "system" if self.system(rec, ctx, ts, out) => {}
            "system" | "summary" | "queue-operation" | "file-history-snapshot" | "progress" => {
                let quiet = rtype == "system"
                    && matches!(
                        rec.get("subtype").and_then(Value::as_str),
                        Some("turn_duration")
                    );
                self.push_quiet(out, rtype, rest(rec), rec, ctx, ts, quiet);
            }
            t if cc_records::META_RECORDS.contains(&t) => {
                let quiet = !cc_records::TITLE_RECORDS.contains(&t);
                self.push_quiet(out, t, rest(rec), rec, ctx, ts, quiet);
            }
            other => {
                let kind = clean_kind(other);
                let e = self.unknown.entry(kind.clone()).or_insert((0, ctx.line));
                e.0 += 1;
                self.push_ext(out, &kind, rest(rec), rec, ctx, ts);
            }
        }
    }

    /// A `system` record that is a hook run (1.0.x: no `subtype`, a `toolUseID`, the hook's
    /// text in `content`) or a slash command (`subtype: local_command`). Returns false for the
    /// others (kept as `x-claude-code.system` rows).
    fn system(
        &mut self,
        rec: &Value,
        ctx: &RecCtx<'_>,
        ts: Option<Timestamp>,
        out: &mut Vec<Decoded>,
    ) -> bool {
        let content = rec.get("content").and_then(Value::as_str);
        match rec.get("subtype").and_then(Value::as_str) {
            None => {
                let id = rec.get("toolUseID").and_then(Value::as_str);
                let Some(mut p) = content.and_then(|c| cc_records::system_hook(c, id)) else {
                    return false;
                };
                for k in ["content", "level"] {
                    if let Some(v) = rec.get(k) {
                        p.insert(k.into(), v.clone());
                    }
                }
                self.hook(p, rec, ctx, ts, out);
                true
            }
            Some("local_command") => {
                let Some(c) = content else {
                    return false;
                };
                self.user_text(c, false, rec, ctx, ts, out);
                true
            }
            Some(_) => false,
        }
    }

    /// Emits a hook run (`x-claude-code.hook`, payload in `super::cc_records`' module docs),
    /// with `invocation_id` when its `tool_use_id` names a call of this input.
    fn hook(
        &mut self,
        mut p: Map<String, Value>,
        rec: &Value,
        ctx: &RecCtx<'_>,
        ts: Option<Timestamp>,
        out: &mut Vec<Decoded>,
    ) {
        let started = p.get("outcome").and_then(Value::as_str) == Some("start");
        // 1.0.x writes a "Running …" record, then the result: the time between is the run's.
        let key = (
            p.get("tool_use_id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            p.get("hook_name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        );
        if started {
            if let Some(t) = ts {
                self.hook_starts.insert(key, t);
            }
        } else if let Some(a) = self.hook_starts.remove(&key)
            && let Some(z) = ts
            && z.0 >= a.0
            && !p.contains_key("duration_ms")
        {
            p.insert("duration_ms".into(), json!((z.0 - a.0) as f64));
        }
        // A 2.1.x `hook_progress` says only that a hook ran: quiet, like the progress rows.
        let mut quiet = started
            || p.get("outcome").and_then(Value::as_str) == Some(crate::session::hooks::PROGRESS);
        // Tied by (session, id): a hook of another session naming this session's call stays
        // its own visible row (attack 9 #5).
        if let Some(id) = p.get("tool_use_id").and_then(Value::as_str)
            && self
                .uses
                .get(id)
                .is_some_and(|u| u.session.as_deref() == session_of(rec))
        {
            let id = id.to_owned();
            p.insert("invocation_id".into(), Value::String(id));
            quiet = true;
        }
        self.push_quiet(out, "hook", p, rec, ctx, ts, quiet);
    }

    /// [`Self::push_ext`], marked `metadata.rawpv_quiet` when `quiet` (a row hidden by default:
    /// a hook run shown in its call's detail, context Claude Code attached).
    #[allow(clippy::too_many_arguments)]
    fn push_quiet(
        &mut self,
        out: &mut Vec<Decoded>,
        kind: &str,
        payload: Map<String, Value>,
        rec: &Value,
        ctx: &RecCtx<'_>,
        ts: Option<Timestamp>,
        quiet: bool,
    ) {
        let t = FrameType::from_wire(&format!("{}.{kind}", self.prefix));
        let mut f = self.frame(t, Body::Generic(payload), Some(rec), ctx, ts);
        if quiet {
            f.envelope.metadata.insert(QUIET.into(), Value::Bool(true));
        }
        out.push(Decoded::frame(f));
    }

    /// An `attachment` record (2.1.x): a hook run, a prompt typed while the agent worked, a
    /// catalog change (published by the transcript adapter; the row says what changed), context
    /// (a quiet row), or a type not known here (a visible row, counted once per type).
    fn attachment(
        &mut self,
        rec: &Value,
        ctx: &RecCtx<'_>,
        ts: Option<Timestamp>,
        out: &mut Vec<Decoded>,
    ) {
        let att = rec.get("attachment").unwrap_or(&Value::Null);
        let t = att.get("type").and_then(Value::as_str).unwrap_or("");
        match cc_records::attachment(att) {
            cc_records::Attachment::Hook(mut p) => {
                p.insert("attachment".into(), att.clone());
                self.hook(p, rec, ctx, ts, out);
            }
            cc_records::Attachment::Prompt(text) => {
                let p = obj([
                    ("text", json!(text)),
                    ("input_type", json!("text")),
                    ("queued", json!(true)),
                ]);
                self.push(out, FrameType::ControlPromptRequest, p, rec, ctx, ts);
            }
            cc_records::Attachment::CatalogDelta { .. } => {
                // A deferred-tools change is the catalog row's (published by the adapter); MCP
                // servers' instructions change what the model is told: a visible row.
                let quiet = t == "deferred_tools_delta";
                self.push_quiet(out, "attachment", rest(rec), rec, ctx, ts, quiet);
            }
            cc_records::Attachment::Context => {
                self.push_quiet(out, "attachment", rest(rec), rec, ctx, ts, true);
            }
            cc_records::Attachment::Unknown => {
                let kind = format!("attachment {}", clean_kind(t));
                let e = self.unknown.entry(kind).or_insert((0, ctx.line));
                e.0 += 1;
                self.push_ext(out, "attachment", rest(rec), rec, ctx, ts);
            }
        }
    }

    /// A `bash_progress` record of a call still running → a `tool.invoke.stream` chunk of type
    /// `progress`: the output tail Claude Code shows (its last [`PROGRESS_TAIL_LINES`] lines),
    /// then `"12s · 210 lines\n"`, drawn over the previous chunk's lines (the tail is also kept
    /// as `output`).
    /// Returns false when the record is not one (it is then kept as an `x-` frame).
    fn progress_chunk(
        &mut self,
        rec: &Value,
        ctx: &RecCtx<'_>,
        ts: Option<Timestamp>,
        out: &mut Vec<Decoded>,
    ) -> bool {
        let Some(data) = rec.get("data") else {
            return false;
        };
        if data.get("type").and_then(Value::as_str) != Some("bash_progress") {
            return false;
        }
        let Some(id) = rec.get("parentToolUseID").and_then(Value::as_str) else {
            return false;
        };
        let Some(u) = self.uses.get_mut(id).filter(|u| !u.answered) else {
            return false;
        };
        let sequence = u.chunks;
        u.chunks += 1;
        let name = u.name.clone();
        let num = |k: &str| data.get(k).and_then(Value::as_f64).unwrap_or(0.0);
        // The output's tail Claude Code shows is a snapshot, not a delta: each chunk draws over
        // the lines the previous one drew (cursor up, erase below), so the stream, through the
        // terminal emulator, shows the latest tail and progress line (issue 21 item 2).
        let mut chunk = String::new();
        if u.progress_rows > 0 {
            let _ = write!(chunk, "\x1b[{}A\r\x1b[J", u.progress_rows);
        }
        let drawn = chunk.len();
        if let Some(tail) = data.get("output").and_then(Value::as_str) {
            let lines: Vec<&str> = tail.lines().collect();
            for l in &lines[lines.len().saturating_sub(PROGRESS_TAIL_LINES)..] {
                chunk.push_str(l);
                chunk.push('\n');
            }
        }
        let _ = writeln!(
            chunk,
            "{}s · {} lines",
            num("elapsedTimeSeconds"),
            num("totalLines")
        );
        u.progress_rows = chunk[drawn..].matches('\n').count();
        let mut extra = Map::new();
        if let Some(o) = data.get("output") {
            extra.insert("output".into(), o.clone());
        }
        let stream = ToolInvokeStream {
            invocation_id: Some(id.to_owned()),
            tool_name: Some(name),
            stream_type: Some(StreamType::Progress),
            chunk: Some(chunk),
            sequence: Some(sequence),
            extra,
        };
        let f = self.frame(
            FrameType::ToolInvokeStream,
            Body::Stream(stream),
            Some(rec),
            ctx,
            ts,
        );
        out.push(Decoded::frame(f));
        true
    }

    fn assistant(
        &mut self,
        rec: &Value,
        ctx: &RecCtx<'_>,
        ts: Option<Timestamp>,
        out: &mut Vec<Decoded>,
    ) {
        let msg = rec.get("message").unwrap_or(&Value::Null);
        match msg.get("content") {
            Some(Value::String(s)) => {
                let p = obj([("text", json!(s))]);
                self.push(out, FrameType::AgentTextDone, p, rec, ctx, ts);
            }
            Some(Value::Array(blocks)) => {
                for b in blocks {
                    self.assistant_block(b, rec, ctx, ts, out);
                }
            }
            _ => {}
        }
        if ctx.last_of_message {
            self.message_end(rec, msg, ctx, ts, out);
        }
    }

    /// `session.usage` for one API message, and `session.turn.end` when its `stop_reason` ends
    /// the turn (anything but `tool_use`).
    pub fn message_end(
        &mut self,
        rec: &Value,
        msg: &Value,
        ctx: &RecCtx<'_>,
        ts: Option<Timestamp>,
        out: &mut Vec<Decoded>,
    ) {
        if let Some(Value::Object(u)) = msg.get("usage") {
            let mut p = u.clone();
            for k in ["model", "id"] {
                if let Some(v) = msg.get(k) {
                    let key = if k == "id" { "message_id" } else { k };
                    p.insert(key.into(), v.clone());
                }
            }
            self.push(out, FrameType::SessionUsage, p, rec, ctx, ts);
        }
        if let Some(sr) = msg.get("stop_reason").and_then(Value::as_str)
            && sr != "tool_use"
        {
            let p = obj([("stop_reason", json!(sr))]);
            self.push(out, FrameType::SessionTurnEnd, p, rec, ctx, ts);
        }
    }

    fn assistant_block(
        &mut self,
        b: &Value,
        rec: &Value,
        ctx: &RecCtx<'_>,
        ts: Option<Timestamp>,
        out: &mut Vec<Decoded>,
    ) {
        match b.get("type").and_then(Value::as_str).unwrap_or("") {
            "text" => {
                let text = b.get("text").and_then(Value::as_str).unwrap_or("");
                // Whitespace-only blocks ("\n\n" before a tool call) carry nothing to show.
                if !text.trim().is_empty() {
                    let p = obj([("text", json!(text))]);
                    self.push(out, FrameType::AgentTextDone, p, rec, ctx, ts);
                }
            }
            "thinking" => {
                let text = b.get("thinking").and_then(Value::as_str).unwrap_or("");
                let mut p = obj([("text", json!(text))]);
                if text.is_empty() {
                    p.insert("redacted".into(), Value::Bool(true));
                }
                self.push(out, FrameType::AgentThinkingDone, p, rec, ctx, ts);
            }
            "redacted_thinking" => {
                let p = obj([("text", json!("")), ("redacted", json!(true))]);
                self.push(out, FrameType::AgentThinkingDone, p, rec, ctx, ts);
            }
            "tool_use" => self.tool_use(b, rec, ctx, ts, out),
            _ => {
                let p = obj([("block", b.clone())]);
                self.push_ext(out, "block", p, rec, ctx, ts);
            }
        }
    }

    fn tool_use(
        &mut self,
        b: &Value,
        rec: &Value,
        ctx: &RecCtx<'_>,
        ts: Option<Timestamp>,
        out: &mut Vec<Decoded>,
    ) {
        let id = b.get("id").and_then(Value::as_str).unwrap_or("").to_owned();
        let name = b
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let input = b.get("input").cloned().unwrap_or(Value::Null);
        let keep = matches!(name.as_str(), "Task" | "Agent" | "Read" | "NotebookRead");
        if self.uses.contains_key(&id) {
            // A copy (resumed session, progress echo) under another record uuid.
            self.repeated += 1;
            return;
        }
        self.order.push(id.clone());
        self.uses.insert(
            id.clone(),
            Use {
                name: name.clone(),
                ts: ts.or(self.last_ts),
                line: ctx.line,
                input: keep.then(|| input.clone()),
                answered: false,
                chunks: 0,
                progress_rows: 0,
                session: session_of(rec).map(Box::from),
            },
        );
        let req = ToolInvokeRequest {
            invocation_id: Some(id),
            tool_name: Some(name),
            input: Some(input),
            ..Default::default()
        };
        let f = self.frame(
            FrameType::ToolInvokeRequest,
            Body::Request(req),
            Some(rec),
            ctx,
            ts,
        );
        out.push(Decoded::frame(f));
    }

    fn user(
        &mut self,
        rec: &Value,
        ctx: &RecCtx<'_>,
        ts: Option<Timestamp>,
        after_boundary: bool,
        out: &mut Vec<Decoded>,
    ) {
        let msg = rec.get("message").unwrap_or(&Value::Null);
        let is_meta = rec.get("isMeta").and_then(Value::as_bool) == Some(true);
        if rec.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
            let text = result_text(msg.get("content"));
            if after_boundary {
                let p = obj([("text", json!(text))]);
                self.push_ext(out, "compact-summary", p, rec, ctx, ts);
            } else {
                let p = obj([("summary", json!(text))]);
                self.push(out, FrameType::SessionCompacted, p, rec, ctx, ts);
            }
            return;
        }
        match msg.get("content") {
            Some(Value::String(s)) => self.user_text(s, is_meta, rec, ctx, ts, out),
            Some(Value::Array(blocks)) => {
                let results = blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                    .count();
                // A pasted image belongs to the prompt it came with: Claude Code writes the
                // image blocks first, the typed text after; the image rows follow the record's
                // other rows (issue 20), in their own order.
                let is_image = |b: &&Value| b.get("type").and_then(Value::as_str) == Some("image");
                let others = blocks.iter().filter(|b| !is_image(b));
                for b in others.chain(blocks.iter().filter(is_image)) {
                    match b.get("type").and_then(Value::as_str).unwrap_or("") {
                        "text" => {
                            let t = b.get("text").and_then(Value::as_str).unwrap_or("");
                            self.user_text(t, is_meta, rec, ctx, ts, out);
                        }
                        "tool_result" => {
                            let tur = if results == 1 {
                                rec.get("toolUseResult")
                                    .or_else(|| rec.get("tool_use_result"))
                            } else {
                                None
                            };
                            self.tool_result(b, tur, rec, ctx, ts, out);
                        }
                        "image" => {
                            // A placeholder: media type, size, pixel size (from the header);
                            // the bytes stay in the file (the viewer's `i`/`I` read them).
                            let src = b.get("source");
                            let mut p = Map::new();
                            if let Some(mt) = src.and_then(|s| s.get("media_type")) {
                                p.insert("media_type".into(), mt.clone());
                            }
                            if let Some(m) = super::image_meta::block_meta(b) {
                                p.insert("size".into(), json!(m.bytes));
                                if let (Some(w), Some(h)) = (m.width, m.height) {
                                    p.insert("width".into(), json!(w));
                                    p.insert("height".into(), json!(h));
                                }
                            }
                            self.push_ext(out, "image", p, rec, ctx, ts);
                        }
                        _ => {
                            let p = obj([("block", b.clone())]);
                            self.push_ext(out, "block", p, rec, ctx, ts);
                        }
                    }
                }
            }
            _ => self.push_ext(out, "user", rest(rec), rec, ctx, ts),
        }
    }

    fn user_text(
        &mut self,
        text: &str,
        is_meta: bool,
        rec: &Value,
        ctx: &RecCtx<'_>,
        ts: Option<Timestamp>,
        out: &mut Vec<Decoded>,
    ) {
        if !is_meta && let Some((name, args)) = cc_records::slash_command(text) {
            // A slash command is what the user typed: a prompt row `/name args` (issue 20); the
            // text it expands to follows in its own (meta) record, folded under it.
            let typed = if args.is_empty() {
                name.clone()
            } else {
                format!("{name} {args}")
            };
            let mut p = obj([
                ("text", json!(typed)),
                ("input_type", json!("text")),
                ("command", json!({"name": name, "args": args})),
            ]);
            if let Some(m) = cc_records::tag(text, "command-message").map(str::trim)
                && !m.is_empty()
            {
                p.insert("command_message".into(), json!(m));
            }
            self.push(out, FrameType::ControlPromptRequest, p, rec, ctx, ts);
            return;
        }
        match user_text_kind(text, is_meta) {
            None => {
                let p = obj([("text", json!(text)), ("input_type", json!("text"))]);
                self.push(out, FrameType::ControlPromptRequest, p, rec, ctx, ts);
            }
            Some(kind) => {
                let p = obj([("text", json!(text))]);
                self.push_ext(out, kind, p, rec, ctx, ts);
            }
        }
    }

    fn tool_result(
        &mut self,
        b: &Value,
        tur: Option<&Value>,
        rec: &Value,
        ctx: &RecCtx<'_>,
        ts: Option<Timestamp>,
        out: &mut Vec<Decoded>,
    ) {
        let id = b
            .get("tool_use_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let is_error = b.get("is_error").and_then(Value::as_bool) == Some(true);
        let text = result_text(b.get("content"));
        if self.uses.get(&id).is_some_and(|u| u.answered) {
            self.repeated += 1;
            return;
        }
        let (name, started, input) = if let Some(u) = self.uses.get_mut(&id) {
            u.answered = true;
            (u.name.clone(), u.ts, u.input.clone())
        } else {
            let msg = format!(
                "tool_result for tool_use_id {id:?}, which no tool_use in this input requested"
            );
            out.push(Decoded::Finding(
                Finding::new(
                    Level::Warning,
                    code::TOOL_RESULT_WITHOUT_USE,
                    "SPEC 5",
                    ctx.line,
                    msg,
                )
                .for_invocation(id.clone()),
            ));
            (String::new(), None, None)
        };
        let interrupted = tur
            .and_then(|t| t.get("interrupted"))
            .and_then(Value::as_bool)
            == Some(true);
        let status = if is_error {
            if is_rejection(&text) {
                ResultStatus::Cancelled
            } else {
                ResultStatus::Error
            }
        } else if interrupted {
            ResultStatus::Cancelled
        } else if reports_failure(&name, tur) {
            ResultStatus::Error
        } else {
            ResultStatus::Success
        };
        let (output, output_type) = tool_output(&name, &text, tur, input.as_ref(), is_error);
        let end = ts.or(self.last_ts);
        let duration_ms = match (started, end) {
            (Some(a), Some(z)) if z.0 >= a.0 => Some((z.0 - a.0) as f64),
            _ => None,
        };
        let res = ToolInvokeResult {
            invocation_id: Some(id),
            tool_name: Some(name),
            status: Some(status),
            output: Some(output),
            output_type: Some(output_type),
            duration_ms,
            ..Default::default()
        };
        let mut f = self.frame(
            FrameType::ToolInvokeResult,
            Body::Result(res),
            Some(rec),
            ctx,
            ts,
        );
        if let Some(t) = tur.filter(|_| !ctx.in_file)
            && let Some(Value::Object(cc)) = f.envelope.metadata.get_mut("claude_code")
        {
            cc.insert("toolUseResult".into(), t.clone());
        }
        out.push(Decoded::frame(f));
    }

    /// End of input: a finding for every tool use never answered (SPEC 5) and one info finding
    /// per record type the adapter did not understand.
    pub fn finish(&mut self, out: &mut Vec<Decoded>) {
        for id in &self.order {
            if let Some(u) = self.uses.get(id)
                && !u.answered
            {
                let msg = format!(
                    "{} call {id:?} has no tool_result in this input (cut off, or still running)",
                    u.name
                );
                out.push(Decoded::Finding(
                    Finding::new(
                        Level::Warning,
                        code::TOOL_USE_WITHOUT_RESULT,
                        "SPEC 5",
                        u.line,
                        msg,
                    )
                    .for_invocation(id.clone()),
                ));
            }
        }
        if self.repeated > 0 {
            let msg = format!(
                "{} tool_use/tool_result block(s) repeated an earlier one with the same id; the first is shown",
                self.repeated
            );
            out.push(info(code::DUPLICATE_RECORD, 0, msg));
        }
        for (kind, (n, line)) in std::mem::take(&mut self.unknown) {
            let msg = format!("{n} record(s) of type {kind:?} not understood; kept as raw rows");
            out.push(info(code::UNRECOGNISED_RECORD, line, msg));
        }
    }
}

/// An info finding of the transcript adapter (SPEC 4) at `line` (0: the whole input).
pub(super) fn info(code: &'static str, line: u64, msg: String) -> Decoded {
    Decoded::Finding(Finding::new(Level::Info, code, "SPEC 4", line, msg))
}

/// A record's `sessionId` (or `session_id`).
fn session_of(rec: &Value) -> Option<&str> {
    rec.get("sessionId")
        .or_else(|| rec.get("session_id"))
        .and_then(Value::as_str)
}

/// Starts of user text that is a command's output. (A slash command itself is the whole
/// command-tag envelope, `cc_records::slash_command`; a text that only starts with
/// `<command-name>` and goes on with typed words is a typed prompt, as written.)
const COMMAND: &[&str] = &[
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "Caveat: The messages below were generated by the user while running local commands",
];
/// Starts of user text that Claude Code injected (not typed by the user).
const INJECTED: &[&str] = &[
    "<system-reminder>",
    "<task-notification>",
    "<ide_selection>",
    "<ide_opened_file>",
    "<user-prompt-submit-hook>",
    "<user_prompt_submit_hook>",
];

/// How a user text block is shown: `None` for a typed prompt, else the `x-claude-code.<kind>`.
pub fn user_text_kind(text: &str, is_meta: bool) -> Option<&'static str> {
    let t = text.trim_start();
    if t.starts_with(INTERRUPTED_MARKER) {
        return Some("interrupt");
    }
    if is_meta {
        return Some("meta");
    }
    if COMMAND.iter().any(|p| t.starts_with(p)) {
        Some("command")
    } else if INJECTED.iter().any(|p| t.starts_with(p)) {
        Some("injected")
    } else {
        None
    }
}

/// The record without its context fields (the payload of an `x-` frame).
/// A record minus its context keys: the payload of its `x-claude-code.<type>` event (also read
/// again from the line by `super::claude_code::reparse_event`).
pub(crate) fn rest(rec: &Value) -> Map<String, Value> {
    match rec {
        Value::Object(o) => o
            .iter()
            .filter(|(k, _)| !CONTEXT_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        other => obj([("value", other.clone())]),
    }
}

/// A record or attachment type as a frame kind: ASCII letters, digits, `-`, `_`, `.`, at most
/// 40 (`unknown` when empty).
fn clean_kind(t: &str) -> String {
    let k: String = t
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(40)
        .collect();
    if k.is_empty() {
        "unknown".to_owned()
    } else {
        k
    }
}

fn obj<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}
