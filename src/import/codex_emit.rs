//! The frame-building state shared by the Codex CLI and Gemini CLI decoders (`super::codex`,
//! `super::codex_exec`, `super::gemini`): envelopes, call pairing, the derived catalog and the
//! end-of-input findings.
//!
//! Who calls it: those decoders, one [`Emitter`] per input.
//!
//! What it keeps: the frame counter (`seq`, 1-based in emission order), the latest timestamp
//! (frames of records without one get it), the session id (put on every frame, so the
//! per-session model sees Codex and Gemini sessions), the open calls (invocation id → name,
//! start time, line), the raw call ids of the current session (each raw id's open calls,
//! oldest first) and the tool names used so far. The first call of a tool name not seen yet in
//! the session is preceded by a derived `tool.catalog.publish` (metadata `rawpv_derived: true`,
//! as the Claude Code decoder derives its catalog) listing every tool used so far in the session
//! with its category and declared `output_type` ([`tool_kind`]), so the SPEC 3.4 rule and the
//! catalog panel work; a result's `output_type` is the one that rule gives for the catalog
//! entry. The catalog lists at most [`MAX_DERIVED_TOOLS`] tools (SPEC 3.5 publishes are whole
//! catalogs, so their total size grows with the square of the tool count).
//!
//! Ids: a decoder names calls by their raw ids; the emitter gives each call its invocation id:
//! the raw id, `<raw>#N` for the N-th different call reusing it (a warning), `<raw>@R` in a run
//! whose session id an earlier run had (a resumed exec thread). [`Emitter::begin_session`]
//! starts afresh (ids, catalog) at each new session or run; [`same_call`] maps an invocation id
//! back to its raw id.
//!
//! Invariants: never panics; a result whose call was never requested is still emitted (the
//! reducer reports it) with a `tool-result-without-use` finding; calls never answered are
//! reported at the end of their session, record kinds not understood once at the end
//! ([`Emitter::finish`]); memory is linear in the input.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use serde_json::{Map, Value, json};

use super::Decoded;
use crate::finding::{Finding, Level, code};
use crate::protocol::rules::expected_output_type;
use crate::protocol::{
    Body, CatalogPublish, CatalogTool, Category, Frame, FrameType, OutputType, ResultStatus,
    StreamType, Timestamp, ToolInvokeRequest, ToolInvokeResult, ToolInvokeStream,
};

/// The category of a Codex or Gemini tool and, where the category's SPEC 3.4 default does not
/// fit the tool, its declared `output_type`; `(None, None)` for tools not known here (their
/// results are `text` by the fallback rule).
///
/// Codex: `shell`, `exec_command`, `write_stdin`, `local_shell` → shell (`text`); `apply_patch`
/// → filesystem (`diff`); `update_plan` → task management (`structured`, a checklist);
/// `web_search` → web; MCP tools (`server.tool`, `mcp__…`) → mcp. Gemini: `read_file`,
/// `read_many_files` → filesystem, declared `file_content`; `list_directory` → filesystem,
/// declared `text` (a listing sentence, not paths); `write_file`, `replace` → filesystem
/// (`diff`); `glob`, `search_file_content` → search; `run_shell_command` → shell;
/// `google_web_search`, `web_fetch` → web (`web_content`); `write_todos` → task management;
/// `delegate_to_agent` → agent (`agent_result`); `save_memory` → custom.
pub fn tool_kind(name: &str) -> (Option<Category>, Option<OutputType>) {
    use Category as C;
    let c = match name {
        "read_file" | "read_many_files" => {
            return (Some(C::Filesystem), Some(OutputType::FileContent));
        }
        "list_directory" => return (Some(C::Filesystem), Some(OutputType::Text)),
        // A patch file's files and a terminal capture (`super::patch`).
        "diff" => return (Some(C::Filesystem), Some(OutputType::Diff)),
        "terminal" => return (Some(C::Shell), Some(OutputType::Text)),
        "shell" | "exec_command" | "write_stdin" | "local_shell" | "run_shell_command" => C::Shell,
        "apply_patch" | "write_file" | "replace" | "edit" => C::Filesystem,
        "glob" | "search_file_content" | "grep" => C::Search,
        "update_plan" | "write_todos" => C::TaskManagement,
        "web_search" | "google_web_search" | "web_fetch" => C::Web,
        "delegate_to_agent" => C::Agent,
        "save_memory" => C::Custom,
        n if n.starts_with("mcp__") || n.contains('.') || n.contains('/') => C::Mcp,
        _ => return (None, None),
    };
    (Some(c), None)
}

/// The cap of the derived catalog, shared with the Claude Code importer.
pub use super::MAX_DERIVED_TOOLS;

/// One open call.
#[derive(Debug)]
struct Call {
    /// The raw call id it was requested with.
    raw: String,
    name: String,
    ts: Option<Timestamp>,
    line: u64,
    chunks: u64,
    /// Its key in `Emitter::open`.
    key: u64,
}

/// What one raw call id (`call_id`, `tool_id`, `item_N`) of the current session has named.
#[derive(Debug, Default)]
struct RawId {
    /// Invocation ids of its calls still open, oldest first.
    open: VecDeque<String>,
    /// Calls made with it so far (the `n`-th gets invocation id `<raw>#n` from 2 on).
    used: u32,
    /// Hash of the latest call's tool name and input (an identical repeat is a repeated record).
    sig: u64,
    /// Line of the latest call.
    line: u64,
}

/// The shared frame-building state (see the module docs).
#[derive(Debug)]
pub struct Emitter {
    seq: u64,
    last_ts: Option<Timestamp>,
    /// `session_id` of every frame (the Codex / Gemini session or thread id).
    pub session_id: Option<String>,
    /// Extension frame prefix: `x-codex` or `x-gemini`.
    prefix: &'static str,
    /// What the derived catalog says the tools are ("used in this Codex session").
    agent: &'static str,
    /// `metadata.<key>` of every frame (`codex`, `gemini`): `{format}`, which also marks the
    /// frame as imported for the checks.
    meta: (&'static str, &'static str),
    /// Open calls by invocation id.
    calls: HashMap<String, Call>,
    /// Open calls in request order (key → invocation id).
    open: BTreeMap<u64, String>,
    next_key: u64,
    /// Raw call ids of the current session.
    raw: HashMap<String, RawId>,
    /// Tools of the current session's derived catalog, in order of first use.
    tools: Vec<String>,
    tool_set: HashSet<String>,
    unknown: BTreeMap<String, (u64, u64)>,
    /// Results repeating one already emitted (same id).
    repeated: u64,
    /// The record fields holding a call's id and tool name (`call_id`, `name`), for findings.
    pub fields: (&'static str, &'static str),
    /// Session ids begun so far, and the suffix (`@N`, the run's number) of this session's
    /// invocation ids when its id was begun before (a resumed exec thread, a run appended twice),
    /// so the ids stay unique within the session.
    sessions: HashSet<String>,
    runs: u64,
    scope: String,
}

/// Whether invocation id `inv` was made from raw call id `raw`: `raw` itself, or `raw` with the
/// emitter's suffixes (`@run`, `#n`).
pub fn same_call(raw: &str, inv: &str) -> bool {
    let Some(mut rest) = inv.strip_prefix(raw) else {
        return false;
    };
    for mark in ['@', '#'] {
        if let Some(r) = rest.strip_prefix(mark) {
            let digits = r.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                return false;
            }
            rest = &r[digits..];
        }
    }
    rest.is_empty()
}

fn sig_of(name: &str, input: &Value) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut h = DefaultHasher::new();
    name.hash(&mut h);
    input.to_string().hash(&mut h);
    h.finish()
}

impl Emitter {
    /// A new emitter for `x-<prefix>` frames of `agent` ("Codex", "Gemini"); every frame gets
    /// `metadata.<meta.0> = {format: <meta.1>}`.
    pub fn new(
        prefix: &'static str,
        agent: &'static str,
        meta: (&'static str, &'static str),
    ) -> Self {
        Self {
            meta,
            seq: 0,
            last_ts: None,
            session_id: None,
            prefix,
            agent,
            calls: HashMap::new(),
            open: BTreeMap::new(),
            next_key: 0,
            raw: HashMap::new(),
            tools: Vec::new(),
            tool_set: HashSet::new(),
            unknown: BTreeMap::new(),
            repeated: 0,
            fields: ("call_id", "name"),
            sessions: HashSet::new(),
            runs: 1,
            scope: String::new(),
        }
    }

    /// A new session (a `session_meta` with another id, an exec run's `thread.started`, a
    /// stream-json `init`): the previous one's open calls are reported (never answered), and
    /// call ids and the derived catalog start afresh, since each run numbers its calls from the
    /// start (`item_0`) and each session has its own catalog (attack 6 #2, #9).
    pub fn begin_session(&mut self, out: &mut Vec<Decoded>, id: Option<String>) {
        self.report_open(out);
        self.calls.clear();
        self.open.clear();
        self.raw.clear();
        self.tools.clear();
        self.tool_set.clear();
        if let Some(old) = self.session_id.take() {
            self.sessions.insert(old);
        }
        self.runs += 1;
        self.scope = match &id {
            Some(i) if self.sessions.contains(i) => format!("@{}", self.runs),
            _ => String::new(),
        };
        self.session_id = id;
    }

    /// Notes a record's timestamp (frames of later records without one get it).
    pub fn saw_timestamp(&mut self, ts: Option<Timestamp>) {
        if ts.is_some() {
            self.last_ts = ts;
        }
    }

    /// The latest timestamp seen.
    pub fn last_timestamp(&self) -> Option<Timestamp> {
        self.last_ts
    }

    /// A frame with its envelope filled in: `seq`, timestamp (`ts`, else the latest), session.
    pub fn frame(&mut self, ty: FrameType, body: Body, line: u64, ts: Option<Timestamp>) -> Frame {
        self.seq += 1;
        let mut f = Frame::new(ty, body);
        f.origin.line = line;
        f.envelope.seq = Some(self.seq);
        f.envelope.timestamp = ts.or(self.last_ts);
        f.envelope.session_id.clone_from(&self.session_id);
        let mut m = Map::new();
        m.insert("format".into(), Value::String(self.meta.1.to_owned()));
        f.envelope
            .metadata
            .insert(self.meta.0.to_owned(), Value::Object(m));
        f
    }

    /// Emits a generic frame of type `ty`.
    pub fn push(
        &mut self,
        out: &mut Vec<Decoded>,
        ty: FrameType,
        payload: Map<String, Value>,
        line: u64,
        ts: Option<Timestamp>,
    ) {
        let f = self.frame(ty, Body::Generic(payload), line, ts);
        out.push(Decoded::frame(f));
    }

    /// Emits an `x-<prefix>.<kind>` frame.
    pub fn ext(
        &mut self,
        out: &mut Vec<Decoded>,
        kind: &str,
        payload: Map<String, Value>,
        line: u64,
        ts: Option<Timestamp>,
    ) {
        let t = FrameType::from_wire(&format!("{}.{kind}", self.prefix));
        self.push(out, t, payload, line, ts);
    }

    /// Keeps a record of a kind the decoder does not understand as an `x-<prefix>.<kind>` row
    /// and counts it (one info finding per kind at the end).
    pub fn unknown(
        &mut self,
        out: &mut Vec<Decoded>,
        kind: &str,
        payload: Map<String, Value>,
        line: u64,
        ts: Option<Timestamp>,
    ) {
        let kind: String = if kind.is_empty() {
            "unknown".to_owned()
        } else {
            kind.chars()
                .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                .take(40)
                .collect()
        };
        let e = self.unknown.entry(kind.clone()).or_insert((0, line));
        e.0 += 1;
        self.ext(out, &kind, payload, line, ts);
    }

    /// Whether a call with raw id `id` is open in this session.
    pub fn is_open(&self, id: &str) -> bool {
        self.raw.get(id).is_some_and(|r| !r.open.is_empty())
    }

    /// Whether a call with raw id `id` was requested in this session (answered or not).
    pub fn is_known(&self, id: &str) -> bool {
        self.raw.contains_key(id)
    }

    /// The invocation id of the oldest open call with raw id `id`.
    pub fn invocation_of(&self, id: &str) -> Option<&str> {
        self.raw.get(id)?.open.front().map(String::as_str)
    }

    /// The tool name of the oldest open call with raw id `id`.
    pub fn name_of(&self, id: &str) -> Option<&str> {
        self.calls
            .get(self.invocation_of(id)?)
            .map(|c| c.name.as_str())
    }

    /// Emits a `tool.invoke.request` (after a derived catalog when `name` is new in this
    /// session) and returns its invocation id. A raw id already used in this session: the same
    /// tool and input again is a repeated record (counted, `None`); another call gets the
    /// invocation id `<id>#N` and a `duplicate-invocation-id` warning, so both calls (and their
    /// failures) are shown (attack 6 #3).
    #[allow(clippy::too_many_arguments)]
    pub fn request(
        &mut self,
        out: &mut Vec<Decoded>,
        id: &str,
        name: &str,
        input: Value,
        extra: Map<String, Value>,
        line: u64,
        ts: Option<Timestamp>,
    ) -> Option<String> {
        if id.is_empty() || name.is_empty() {
            let field = if id.is_empty() {
                self.fields.0
            } else {
                self.fields.1
            };
            let mut p = obj([("tool_name", json!(name)), ("input", input)]);
            p.insert(self.fields.0.to_owned(), json!(id));
            self.bad_record(out, "call", field, p, line, ts);
            return None;
        }
        let sig = sig_of(name, &input);
        let r = self.raw.entry(id.to_owned()).or_default();
        if r.used > 0 && r.sig == sig {
            self.repeated += 1;
            return None;
        }
        r.used += 1;
        let inv = if r.used == 1 {
            format!("{id}{}", self.scope)
        } else {
            format!("{id}{}#{}", self.scope, r.used)
        };
        if r.used > 1 {
            let msg = format!(
                "call id {id:?} was used by an earlier call (line {}); this {name} call is shown as {inv:?}",
                r.line
            );
            out.push(Decoded::Finding(
                Finding::new(
                    Level::Warning,
                    code::DUPLICATE_INVOCATION_ID,
                    "SPEC 3.7",
                    line,
                    msg,
                )
                .for_invocation(inv.clone()),
            ));
        }
        r.sig = sig;
        r.line = line;
        r.open.push_back(inv.clone());
        if self.tool_set.insert(name.to_owned()) {
            if self.tools.len() < MAX_DERIVED_TOOLS {
                self.tools.push(name.to_owned());
                let f = self.catalog_frame(line, ts);
                out.push(Decoded::frame(f));
            } else if self.tool_set.len() == MAX_DERIVED_TOOLS + 1 {
                out.push(Decoded::Finding(super::derived_catalog_full(name, line)));
            }
        }
        let key = self.next_key;
        self.next_key += 1;
        self.open.insert(key, inv.clone());
        self.calls.insert(
            inv.clone(),
            Call {
                raw: id.to_owned(),
                name: name.to_owned(),
                ts: ts.or(self.last_ts),
                line,
                chunks: 0,
                key,
            },
        );
        let req = ToolInvokeRequest {
            invocation_id: Some(inv.clone()),
            tool_name: Some(name.to_owned()),
            input: Some(input),
            extra,
            ..Default::default()
        };
        let f = self.frame(FrameType::ToolInvokeRequest, Body::Request(req), line, ts);
        out.push(Decoded::frame(f));
        Some(inv)
    }

    /// Emits a `tool.invoke.stream` chunk of the open call with raw id `id` (ignored when none
    /// is open).
    pub fn chunk(
        &mut self,
        out: &mut Vec<Decoded>,
        id: &str,
        stream_type: StreamType,
        text: &str,
        line: u64,
        ts: Option<Timestamp>,
    ) {
        let Some(inv) = self.invocation_of(id).map(str::to_owned) else {
            return;
        };
        let Some(c) = self.calls.get_mut(&inv) else {
            return;
        };
        let sequence = c.chunks;
        c.chunks += 1;
        let s = ToolInvokeStream {
            invocation_id: Some(inv),
            tool_name: Some(c.name.clone()),
            stream_type: Some(stream_type),
            chunk: Some(text.to_owned()),
            sequence: Some(sequence),
            extra: Map::new(),
        };
        let f = self.frame(FrameType::ToolInvokeStream, Body::Stream(s), line, ts);
        out.push(Decoded::frame(f));
    }

    /// Emits the `tool.invoke.result` of the oldest open call with raw id `id` and returns its
    /// invocation id: its `output_type` is the SPEC 3.4 rule's for the derived catalog entry
    /// (`text` for a failed call's text), its duration the time since the request unless
    /// `duration_ms` is given. A result for an id whose calls are all answered is counted and
    /// not emitted (`None`).
    #[allow(clippy::too_many_arguments)]
    pub fn result(
        &mut self,
        out: &mut Vec<Decoded>,
        id: &str,
        status: ResultStatus,
        output: Value,
        duration_ms: Option<f64>,
        extra: Map<String, Value>,
        line: u64,
        ts: Option<Timestamp>,
    ) -> Option<String> {
        if id.is_empty() {
            let p = obj([("status", json!(status)), ("output", output)]);
            self.bad_record(out, "result", self.fields.0, p, line, ts);
            return None;
        }
        let (inv, name, started) = if let Some(r) = self.raw.get_mut(id) {
            let Some(inv) = r.open.pop_front() else {
                self.repeated += 1;
                return None;
            };
            let c = self.calls.remove(&inv);
            if let Some(c) = &c {
                self.open.remove(&c.key);
            }
            let (name, ts) = c.map(|c| (c.name, c.ts)).unwrap_or_default();
            (inv, name, ts)
        } else {
            {
                let msg = format!("a result for call {id:?}, which no call in this input made");
                out.push(Decoded::Finding(
                    Finding::new(
                        Level::Warning,
                        code::TOOL_RESULT_WITHOUT_USE,
                        "SPEC 5",
                        line,
                        msg,
                    )
                    .for_invocation(format!("{id}{}", self.scope)),
                ));
                (format!("{id}{}", self.scope), String::new(), None)
            }
        };
        let end = ts.or(self.last_ts);
        let duration_ms = duration_ms.or(match (started, end) {
            (Some(a), Some(z)) if z.0 >= a.0 => Some((z.0 - a.0) as f64),
            _ => None,
        });
        let output_type = if status != ResultStatus::Success && output.is_string() {
            OutputType::Text
        } else {
            let entry = catalog_tool(&name, self.agent);
            expected_output_type(&name, Some(&entry), Some(&output)).0
        };
        let res = ToolInvokeResult {
            invocation_id: Some(inv.clone()),
            tool_name: Some(name),
            status: Some(status),
            output: Some(output),
            output_type: Some(output_type),
            duration_ms,
            extra,
            ..Default::default()
        };
        let f = self.frame(FrameType::ToolInvokeResult, Body::Result(res), line, ts);
        out.push(Decoded::frame(f));
        Some(inv)
    }

    /// Ends every open call of this session as `cancelled` at `line` / `ts` (an interrupted or
    /// failed turn, attack 6 #5): its duration runs to the interruption.
    pub fn cancel_open(
        &mut self,
        out: &mut Vec<Decoded>,
        why: &str,
        line: u64,
        ts: Option<Timestamp>,
    ) {
        let open: Vec<String> = std::mem::take(&mut self.open).into_values().collect();
        for inv in open {
            let Some(raw) = self.calls.get(&inv).map(|c| c.raw.clone()) else {
                continue;
            };
            let why = Value::String(why.to_owned());
            let none = Map::new();
            self.result(
                out,
                &raw,
                ResultStatus::Cancelled,
                why,
                None,
                none,
                line,
                ts,
            );
        }
    }

    /// The derived catalog of every tool used so far.
    fn catalog_frame(&mut self, line: u64, ts: Option<Timestamp>) -> Frame {
        let tools = self
            .tools
            .iter()
            .map(|n| catalog_tool(n, self.agent))
            .collect();
        let body = Body::Catalog(CatalogPublish {
            tools,
            diagnostics: Vec::new(),
            extra: Map::new(),
        });
        let mut f = self.frame(FrameType::ToolCatalogPublish, body, line, ts);
        f.envelope
            .metadata
            .insert("rawpv_derived".into(), Value::Bool(true));
        if self.tools.len() > 1 {
            f.envelope
                .metadata
                .insert("rawpv_derived_update".into(), Value::Bool(true));
        }
        f
    }

    /// A call or result record without a usable string `field` (missing, empty, or another JSON
    /// type, attack 6 #10): a warning naming the line and field, and the record kept as an
    /// `x-<prefix>.<kind>` row, so no invalid RAWP frame is built from it.
    fn bad_record(
        &mut self,
        out: &mut Vec<Decoded>,
        kind: &str,
        field: &str,
        payload: Map<String, Value>,
        line: u64,
        ts: Option<Timestamp>,
    ) {
        let msg = format!(
            "a {} {kind} record without a string `{field}` (missing, empty or another JSON type): kept as an {}.{kind} row",
            self.agent, self.prefix
        );
        out.push(Decoded::Finding(Finding::new(
            Level::Warning,
            code::WRONG_FIELD_TYPE,
            "AGENT-FORMATS.md",
            line,
            msg,
        )));
        self.ext(out, kind, payload, line, ts);
    }

    /// A finding for every open call of this session (never answered, SPEC 5).
    fn report_open(&mut self, out: &mut Vec<Decoded>) {
        for inv in self.open.values() {
            if let Some(c) = self.calls.get(inv) {
                let msg = format!(
                    "{} call {inv:?} has no result in this input (cut off, or still running)",
                    c.name
                );
                out.push(Decoded::Finding(
                    Finding::new(
                        Level::Warning,
                        code::TOOL_USE_WITHOUT_RESULT,
                        "SPEC 5",
                        c.line,
                        msg,
                    )
                    .for_invocation(inv.clone()),
                ));
            }
        }
    }

    /// End of input: a finding for every call never answered (SPEC 5), one for repeated
    /// records, one info finding per record kind not understood.
    pub fn finish(&mut self, out: &mut Vec<Decoded>) {
        self.report_open(out);
        if self.repeated > 0 {
            let msg = format!(
                "{} call or result record(s) repeated an earlier one with the same id; the first is shown",
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

/// The derived catalog entry of tool `name`.
fn catalog_tool(name: &str, agent: &str) -> CatalogTool {
    let (category, output_type) = tool_kind(name);
    CatalogTool {
        name: name.to_owned(),
        description: Some(format!(
            "used in this {agent} session (catalog derived by rawpv)"
        )),
        category,
        output_type,
        ..Default::default()
    }
}

/// An info finding (SPEC 4) at `line` (0: the whole input).
pub fn info(code: &'static str, line: u64, msg: String) -> Decoded {
    Decoded::Finding(Finding::new(Level::Info, code, "SPEC 4", line, msg))
}

/// `{k: v, …}` from pairs.
pub fn obj<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// A string field of `v`.
pub fn str_of<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

/// The text of a message `content`: a string, or its parts' `text` joined by newlines (Codex
/// `input_text` / `output_text`, Gemini parts, MCP `content[]`); other values give "".
pub fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// [`Decoder::line`](super::Decoder::line) of the JSON-lines decoders: a blank line is
/// skipped, an object goes to `record`, anything else is a malformed item.
pub fn decode_line(
    line: u64,
    text: &str,
    out: &mut Vec<Decoded>,
    record: impl FnOnce(&Value, &mut Vec<Decoded>),
) {
    match parse_object(line, text) {
        None => {}
        Some(Ok(v)) => record(&v, out),
        Some(Err(d)) => out.push(d),
    }
}

/// A JSON line as an object, or the malformed item for it (`None` for a blank line).
pub fn parse_object(line: u64, text: &str) -> Option<Result<Value, Decoded>> {
    use crate::protocol::{ParseError, ParseErrorKind};
    if text.trim().is_empty() {
        return None;
    }
    Some(match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(Decoded::Malformed(ParseError::new(
            line,
            ParseErrorKind::NotObject,
            text,
        ))),
        Err(e) => Err(Decoded::Malformed(ParseError::new(
            line,
            ParseErrorKind::Json(e.to_string()),
            text,
        ))),
    })
}

/// OpenAI-style usage (`input_tokens` counting the cached ones) as a `session.usage` payload in
/// the reducer's terms: `input_tokens` without the cached part, `cache_read_input_tokens` the
/// cached part, `output_tokens`; the other counts are kept under their own names.
pub fn openai_usage(u: &Map<String, Value>) -> Map<String, Value> {
    let n = |k: &str| u.get(k).and_then(Value::as_u64);
    let cached = n("cached_input_tokens")
        .or_else(|| n("cached"))
        .unwrap_or(0);
    let mut p = Map::new();
    if let Some(i) = n("input_tokens") {
        p.insert("input_tokens".into(), i.saturating_sub(cached).into());
    }
    p.insert("cache_read_input_tokens".into(), cached.into());
    if let Some(o) = n("output_tokens") {
        p.insert("output_tokens".into(), o.into());
    }
    for (k, v) in u {
        if !matches!(
            k.as_str(),
            "input_tokens" | "cached_input_tokens" | "output_tokens"
        ) {
            p.insert(k.clone(), v.clone());
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn usage_splits_cached_input() {
        let u = json!({"input_tokens": 100, "cached_input_tokens": 30, "output_tokens": 5,
            "reasoning_output_tokens": 2});
        let p = openai_usage(u.as_object().unwrap());
        assert_eq!(
            Value::Object(p),
            json!({"input_tokens": 70, "cache_read_input_tokens": 30, "output_tokens": 5,
                "reasoning_output_tokens": 2})
        );
    }

    #[test]
    fn kinds() {
        assert_eq!(tool_kind("apply_patch"), (Some(Category::Filesystem), None));
        assert_eq!(
            tool_kind("read_file"),
            (Some(Category::Filesystem), Some(OutputType::FileContent))
        );
        assert_eq!(tool_kind("frobnicate"), (None, None));
    }
}
