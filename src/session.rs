//! The session model: a fold over frames (STYLE 4.1, 4.5).
//!
//! Who calls it: the app loop (live and replay alike), `print`, `convert`, `check`, `stats`, and
//! tests. [`Session::apply`] folds one [`Decoded`] item and returns what changed ([`Applied`]), so
//! views and caches invalidate by key and nothing rescans the session per frame.
//!
//! Invariants:
//! * `items` is the feed in arrival order; every frame ends up either in an invocation or as an
//!   item of its own. Nothing is dropped silently: a frame that cannot be attached (a result for
//!   an unknown id) is kept as an [`Item::Event`] and gets a finding.
//! * One invocation per `invocation_id`; a duplicate request becomes its own event row plus a
//!   finding. At most one result is applied per invocation.
//! * Every mutation of an invocation bumps its `rev` and the session's `revision`.
//! * Every frame belongs to a session (SPEC §6, `sessions.rs`): its `session_id`, else the
//!   input's default session. Invocation ids are looked up within the frame's session (the same
//!   id in two sessions is two calls), a message's deltas continue a message of its own session,
//!   each session keeps its own catalog (`sessions::SessionEntry::publishes`), counters, turns
//!   and tokens, and every finding made while a frame is folded is that frame's session's.
//! * No ratatui, no tokio. The only I/O is [`Session::input`] / [`Session::output`] reading a
//!   deferred input or output back from [`Session::backing`] (one positional read of the
//!   request's or result's line, on a file opened once).
//! * A file-backed session keeps neither inputs nor outputs (`Invocation::input_span`,
//!   `output_span`); every reader goes through `Session::input` / `output` /
//!   `with_input_output`, and the feed reads only `Invocation::summary`.
//!
//! Invocation status transitions (SPEC 3.1–3.3):
//!
//! | from                    | frame                | to                                   |
//! |-------------------------|----------------------|--------------------------------------|
//! | (none)                  | request              | `Requested`                          |
//! | `Requested`/`Streaming` | stream               | `Streaming`                          |
//! | `Requested`/`Streaming` | result               | `Succeeded`/`Failed`/`TimedOut`/`Cancelled`/`Other` |
//! | finished                | result               | unchanged, `duplicate-result` finding |
//! | open at end of session  | (`Session::finish`)  | shown as "no result"                 |
//!
//! Size (about 1,700 lines; tests from the end): the model types and the reducer that keeps their
//! indexes consistent stay in one file on purpose. Every mutation of `items`, `invocations`, the
//! id index, the findings index and the open messages happens here, so the invariants above can
//! be read and checked in one place. The checks (`check.rs`), the session queries (`query.rs`),
//! the feed summaries (`summary.rs`), the sessions table (`sessions.rs`) and the stream chunk
//! buffer (`chunks.rs`) are apart; the next to go when it grows is the backing-file reader.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

pub mod check;
pub mod chunks;
pub mod folded;
pub mod forks;
pub mod hooks;
pub mod live;
pub mod query;
pub mod sessions;
pub mod summary;
pub mod tally;

pub use chunks::{Chunk, ChunkBuffer, ChunkInsert, MAX_STREAM_BYTES, MAX_STREAM_CHUNKS};
pub use sessions::{SessionEntry, Sessions};

use crate::finding::{Finding, Level, Quoted, code};
use crate::import::Decoded;
use crate::protocol::{
    Body, ByteSpan, CatalogPublish, Delegation, Envelope, Frame, FrameType, ResultStatus,
    StreamType, Timestamp, ToolInvokeResult,
};

/// Lifecycle of one invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallStatus {
    Requested,
    Streaming,
    Succeeded,
    Failed,
    TimedOut,
    Cancelled,
    /// A result `status` outside the spec's enum.
    Other(String),
}

impl CallStatus {
    /// Still waiting for a result.
    pub fn is_open(&self) -> bool {
        matches!(self, Self::Requested | Self::Streaming)
    }

    /// Ended badly (error, timeout, or a status outside the spec).
    pub fn is_failure(&self) -> bool {
        matches!(self, Self::Failed | Self::TimedOut | Self::Other(_))
    }

    /// The status in the words every output uses (the feed's badge, the detail, `print`,
    /// `stats`; issue 20): `pending`, `running`, `ok`, `error`, `timeout`, `cancelled`, a
    /// producer's own status; an open call of an input that `ended` is `no result`.
    pub fn word(&self, ended: bool) -> &str {
        match self {
            Self::Requested | Self::Streaming if ended => "no result",
            Self::Requested => "pending",
            Self::Streaming => "running",
            Self::Succeeded => "ok",
            Self::Failed => "error",
            Self::TimedOut => "timeout",
            Self::Cancelled => "cancelled",
            Self::Other(s) => s,
        }
    }

    /// [`Self::word`] of a call still open in an input that goes on.
    pub fn label(&self) -> &str {
        self.word(false)
    }

    fn from_result(s: Option<&ResultStatus>) -> Self {
        match s {
            Some(ResultStatus::Success) => Self::Succeeded,
            Some(ResultStatus::Error) => Self::Failed,
            Some(ResultStatus::Timeout) => Self::TimedOut,
            Some(ResultStatus::Cancelled) => Self::Cancelled,
            Some(ResultStatus::Unknown(u)) => Self::Other(u.clone()),
            None => Self::Other("missing status".into()),
        }
    }
}

/// One tool call: request, stream chunks, result (SPEC 3.1–3.3), keyed by `invocation_id`.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    pub invocation_id: String,
    pub tool_name: String,
    pub tool_version: Option<String>,
    /// The request `input` (`Value::Null` when absent, and while deferred: see `input_span`).
    /// Read it with [`Session::input`].
    pub input: Value,
    /// Set when the input was not kept in memory (a file-backed session): the byte span of the
    /// request frame's line in `Session::backing`.
    pub input_span: Option<ByteSpan>,
    /// One-line summary of the input for the feed (`summary::input_summary`, raw text), made when
    /// the request is folded so a row never needs the input.
    pub summary: Box<str>,
    pub parallel_group_id: Option<String>,
    pub status: CallStatus,
    /// The result payload (boxed: an open call pays 8 bytes for it). Its `output` is `None`
    /// while deferred (see `output_span`).
    pub result: Option<Box<ToolInvokeResult>>,
    /// Set when the result's output was not kept in memory (a big output in a file-backed
    /// session): the byte span of the result frame's line in `Session::backing`. Read the output
    /// with [`Session::output`].
    pub output_span: Option<ByteSpan>,
    pub stream: ChunkBuffer,
    pub requested_at: Option<Timestamp>,
    pub ended_at: Option<Timestamp>,
    /// Envelope of the request frame, kept only when it carries something the invocation does
    /// not keep elsewhere (an `id`, metadata other than `delegation_chain`, unknown fields; see
    /// [`kept_envelope`]): `session_id`, `seq` and the timestamp of a plain envelope are not kept
    /// (about 500 bytes an invocation, issue 8).
    pub request_envelope: Option<Box<Envelope>>,
    /// Envelope of the result frame, kept by the same rule.
    pub result_envelope: Option<Box<Envelope>>,
    /// Source line of the request / result frame.
    pub request_line: u64,
    pub result_line: Option<u64>,
    /// `metadata.delegation_chain` of the request (root first); empty for the root agent.
    pub delegation_chain: Vec<Delegation>,
    /// Index (in `Session::invocations`) of the invocation that spawned this one's agent.
    pub parent: Option<usize>,
    /// Invocations whose delegation chain ends at this one.
    pub children: Vec<usize>,
    /// Index of this invocation's row in `Session::items`.
    pub item: usize,
    /// Number of findings about this invocation.
    pub findings: u32,
    /// Index of the call's session in `Session::sessions` (SPEC §6).
    pub session: u32,
    /// Publishes of the input folded when the result arrived (when the request did, while
    /// open): the call's catalog is its session's last publish among them
    /// ([`Session::publish_in_force`]).
    pub catalog_at: u32,
    /// Bumped on every mutation.
    pub rev: u64,
}

impl Invocation {
    /// Run time in ms: the result's `duration_ms`, else result time minus request time.
    pub fn duration_ms(&self) -> Option<f64> {
        if let Some(d) = self.result.as_ref().and_then(|r| r.duration_ms) {
            return Some(d);
        }
        match (self.requested_at, self.ended_at) {
            (Some(a), Some(b)) if b.0 >= a.0 => Some((b.0 - a.0) as f64),
            _ => None,
        }
    }
}

/// Kind of a text message in the feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// `control.prompt.request`: what the user asked.
    Prompt,
    /// `agent.text.delta` / `.done`.
    AgentText,
    /// `agent.thinking.delta` / `.done`.
    Thinking,
}

/// A prompt, an agent reply or a thinking block, accumulated from its deltas.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub kind: MessageKind,
    pub text: String,
    /// `.done` seen (prompts are always done).
    pub done: bool,
    /// `redacted: true`: never show the text as the original (SPEC 3.6).
    pub redacted: bool,
    pub timestamp: Option<Timestamp>,
    pub line: u64,
    /// The line of the latest frame that continued it (a delta, the `.done`); `line` while it
    /// is one frame's text (the library's search reads such a message back from its line
    /// alone, `crate::library::search`).
    pub last_line: u64,
    pub delegation_chain: Vec<Delegation>,
    /// The frame's envelope metadata (importers put e.g. `isMeta`, `uuid` here).
    pub metadata: Map<String, Value>,
}

/// One row of the feed.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// Index into `Session::invocations`.
    Invocation(usize),
    /// Boxed so a row costs 16 bytes whatever its kind.
    Message(Box<Message>),
    /// Any other frame, shown generically (turn ends, compaction, usage, errors, unknown types,
    /// and tool frames that could not be attached to an invocation).
    Event(Box<Frame>),
}

/// One `tool.catalog.publish`, as received.
#[derive(Debug, Clone, PartialEq)]
pub struct Publish {
    pub catalog: CatalogPublish,
    pub timestamp: Option<Timestamp>,
    pub line: u64,
    /// Index of the publish frame's row in `Session::items`.
    pub item: usize,
    /// Synthesised by an importer (metadata `rawpv_derived: true`), not sent by the agent.
    pub derived: bool,
    /// Index of the publishing session in `Session::sessions`.
    pub session: u32,
    /// Tool name → index in `catalog.tools` (the first entry when a name is listed twice), so
    /// per-request catalog lookups (`crate::check`) are O(1).
    pub tool_index: HashMap<String, usize>,
}

impl Publish {
    /// The catalog entry named `name` (the first one when listed twice).
    pub fn tool(&self, name: &str) -> Option<&crate::protocol::CatalogTool> {
        self.tool_index
            .get(name)
            .and_then(|&i| self.catalog.tools.get(i))
    }
}

/// Counters for the status bar and `stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub frames: u64,
    pub malformed: u64,
    pub invocations: u64,
    pub running: u64,
    pub failed: u64,
    pub cancelled: u64,
}

/// What one `apply` changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Applied {
    /// The feed row that was added or changed.
    pub item: Option<usize>,
    /// The invocation that was added or changed.
    pub invocation: Option<usize>,
    /// Whether `item` is a new row.
    pub new_item: bool,
}

/// What a frame is, for the blocked-call bookkeeping of `Session::apply_frame`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Stream,
    Result,
    SessionError,
    Other,
}

/// A string field of a generic frame's payload (`session.error`'s `invocation_id`, ...).
fn generic_str(frame: &Frame, key: &str) -> Option<String> {
    let Body::Generic(p) = &frame.body else {
        return None;
    };
    p.get(key)?
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// The folded session.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Session {
    pub items: Vec<Item>,
    /// Boxed: growing the list moves pointers, not ~470-byte records (a 350k-call session
    /// otherwise copied 160 MB on the app task when the vector doubled, a 100 ms+ stall).
    pub invocations: Vec<Box<Invocation>>,
    index: IdIndex,
    /// Every catalog publish in order, of every session; a session's last one is its current
    /// catalog (SPEC 3.5, §6: [`Session::publish_of`]).
    pub publishes: Vec<Publish>,
    /// The sessions of the input (SPEC §6) and which session each row belongs to.
    pub sessions: Sessions,
    /// The session of the frame being folded (findings pushed meanwhile are its).
    folding: Option<u32>,
    /// The input the items being folded come from (issue 24: `rawpv A B …`): the index of its
    /// command-line argument, set by the caller before [`Session::apply`]; 0 with one input.
    /// Frames are looked up in that input's sessions and findings carry it
    /// ([`Finding::input`]), so a line number is read in the right file.
    pub input: u16,
    /// Append only, through [`Session::push_finding`] (which indexes them).
    pub findings: Vec<Finding>,
    /// Indices into `findings` by `invocation_id`, and by line for findings naming no invocation
    /// (line 0 is not indexed), for [`Session::findings_of`].
    finding_ids: HashMap<String, Vec<usize>>,
    /// Keyed by [`line_key`] (input and line).
    finding_lines: HashMap<u64, Vec<usize>>,
    /// Hook runs by the call they ran around (`hooks.rs`, issue 20).
    pub hooks: hooks::Hooks,
    pub counts: Counts,
    /// Bumped on every change.
    pub revision: u64,
    /// Set by [`Session::finish`]: the source ended; open invocations have "no result".
    pub ended: bool,
    /// Timestamp of the latest frame that had one.
    pub last_timestamp: Option<Timestamp>,
    /// Feed rows of messages still receiving deltas (few; closed ones are removed).
    open_messages: Vec<usize>,
    /// Cap on kept feed rows for endless streams (`None`: [`MAX_ITEMS`]; `Some(0)`: no cap).
    /// Enforced only by [`Session::compact_if_needed`], which the live app calls.
    pub max_items: Option<usize>,
    /// Feed rows dropped by compaction so far (shown to the user).
    pub dropped_items: u64,
    /// The file this session is read from, when its frames carry byte spans (RAWP NDJSON files,
    /// `crate::source::file`). Then result outputs are not kept in memory but read again from
    /// the file when shown ([`Session::output`]), so memory does not grow with output sizes
    /// (issue 8). Even small outputs are left there: one kept as a `Value` tree costs ~10× its
    /// JSON text, and reading one line back costs one positional read and a parse.
    pub backing: Option<Arc<Path>>,
    /// How a deferred input or output is read again from its line of `backing`: `None` for RAWP
    /// frames (the line is a frame), else the decoder's own re-parse (Claude Code records,
    /// `crate::import::claude_code::reparse`; issue 16).
    pub reparse: Option<Reparse>,
    /// `backing`, opened once.
    open_file: OpenFile,
    /// Only the findings are read once folded (`rawpv check`, issue 17): events, messages and
    /// feed rows are not kept, a finished call leaves `invocations` for [`folded::FoldedCalls`]
    /// (its id's hash, tool name and stream sequences: what a later frame's checks read, through
    /// [`Session::call_in`]), and a session's superseded catalog is emptied. The checks read only
    /// the frame at hand, the current catalogs and those facts, so the findings are the same
    /// (`tests/it/oracle_outputs.rs` compares `check`'s outputs, `tests/it/check_fold.rs` the
    /// findings of both folds).
    pub findings_only: bool,
    /// `rawpv stats`' counters, kept as the session folds when set (with `findings_only`):
    /// each call is counted when its result is folded, each event frame before it is dropped
    /// ([`tally::Tally`]); the calls still open at the end are the caller's to add.
    pub tally: Option<Box<tally::Tally>>,
    /// Keep the payloads of deferrable events (Claude Code progress, system, … rows of a
    /// file-backed session, with an [`EventReparseFn`]) in the file: only the feed row's summary
    /// stays in memory, the payload is read back when shown ([`Session::event_payload`]). Set
    /// by the viewer.
    pub defer_events: bool,
    /// With `findings_only`: the finished calls, reduced to what the checks still read
    /// ([`folded::FoldedCalls`]); their records left `invocations` (issue 17 item 3).
    folded: folded::FoldedCalls,
    /// Slots of `invocations` whose call was folded away and not yet compacted out.
    stale: usize,
    /// Open calls of a blocked tool (not in the catalog, `unavailable`, under a `fatal`
    /// diagnostic) that a `session.error` naming their `invocation_id` answered: by (session,
    /// id), the findings made an info `blocked-request-answered` and what they were (index in
    /// `findings`, level, code, message), restored if the call runs after all (a stream or a
    /// result arrives). Such a call is not `request-never-answered`.
    pub(crate) blocked: std::collections::HashMap<(u32, Box<str>), Vec<BlockedFinding>>,
    /// Catalog entries' `input_schema`s compiled when a request first needs one, and requests
    /// whose input broke theirs, waiting for their result (`check::SchemaCache`).
    pub(crate) schemas: check::SchemaCache,
    /// Results whose `invocation_id` no call of their session has, that came while the
    /// session had exactly one open call of their tool ([`Self::open_by_tool`]): by (session,
    /// the result's `tool_name`), the line of the last one. Probably that call's answer under a
    /// wrong or missing id: the result's own finding says so, and the call is not reported
    /// `request-never-answered` as well (`check::end_findings`; one finding per problem).
    pub(crate) orphans: HashMap<(u32, Box<str>), u64>,
    /// Sessions whose requests (not an importer's) came before any `tool.catalog.publish` of
    /// theirs: the first such request's line and how many (RAWP-DPS 5.4.1: the catalog is
    /// published right after the session starts). Removed at the session's first publish
    /// (`catalog-not-first`); left at the end, `catalog-missing` (`check`).
    pub(crate) uncatalogued: HashMap<u32, (u64, u64)>,
    /// What each session's `agent.interaction.request` frames approved so far (RAWP-DPS
    /// 5.2.1: a tool needing approval is preceded by one), read by the `approval-request-missing`
    /// check (`check::approval_missing`).
    pub(crate) approvals: HashMap<u32, Approvals>,
    /// Open calls by (session, tool name) (entries at 0 are removed).
    open_by_tool: HashMap<(u32, Box<str>), u32>,
    /// Ids requested again while in use (`duplicate-invocation-id`), by (session, id): how
    /// many of those requests have not had their result yet. A second result for such an id is
    /// that request's answer, not also a `duplicate-result`.
    reused_ids: HashMap<(u32, Box<str>), u32>,
}

/// What a session's `agent.interaction.request` frames approved (`Session::approvals`). rawpv
/// sees the prompt, not the user's answer (the answer's frame is not public, SPEC 3.6), so a
/// prompt counts as the approval it asks for: one naming an `invocation_id` approves that one
/// call; one naming only a `tool_name` approves that tool for the rest of the session (a
/// prompt offering `allow_always` is the usual case; the answer may have been `allow` only, and
/// rawpv cannot tell: it takes the lenient reading, no false warning). One naming neither
/// approves nothing.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Approvals {
    /// Tools approved for the rest of the session.
    pub(crate) tools: std::collections::HashSet<Box<str>>,
    /// Calls approved one by one, by `invocation_id`, until their request comes.
    pub(crate) calls: std::collections::HashSet<Box<str>>,
}

/// A finding of a blocked call answered by `session.error`, as it was before (see
/// `Session::blocked`): (index in `findings`, level, code, message).
pub(crate) type BlockedFinding = (usize, Level, &'static str, String);

/// A call looked up by its id ([`Session::call_in`]): its whole record, or what is left of it
/// once finished in a `findings_only` fold.
#[derive(Debug, Clone, Copy)]
pub enum CallRef<'a> {
    Kept(&'a Invocation),
    Folded {
        tool_name: &'a str,
        stream: Option<&'a folded::FoldedStream>,
    },
}

impl CallRef<'_> {
    /// The request's `tool_name`.
    pub fn tool_name(&self) -> &str {
        match self {
            Self::Kept(inv) => &inv.tool_name,
            Self::Folded { tool_name, .. } => tool_name,
        }
    }

    /// The source line of the kept stream chunk with this `sequence`, if any.
    pub fn chunk_line(&self, sequence: u64) -> Option<u64> {
        match self {
            Self::Kept(inv) => inv.stream.get(sequence).map(|c| c.line),
            Self::Folded { stream, .. } => stream.and_then(|s| s.line_of(sequence)),
        }
    }
}

/// Which part of a call [`Reparse`] reads again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Input,
    Output,
}

/// Reads a call's input or output again from the text of its line: `(text, invocation id, tool
/// name, part, the call's input (asked for only by outputs that need it)) → the value`, `None`
/// when the line holds no such call (the file changed).
pub type ReparseFn = fn(&str, &str, &str, Part, &dyn Fn() -> Value) -> Option<Value>;

/// Reads an event's payload again from the text of its line: `(text, frame type) → payload`,
/// `None` when the line holds no such record (the file changed). Claude Code:
/// `crate::import::claude_code::reparse_event`.
pub type EventReparseFn = fn(&str, &str) -> Option<Value>;

/// A [`ReparseFn`] and, when the format's events can be read again, an [`EventReparseFn`];
/// compared by address.
#[derive(Clone, Copy)]
pub struct Reparse(pub ReparseFn, pub Option<EventReparseFn>);

impl PartialEq for Reparse {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::fn_addr_eq(self.0, other.0)
            && match (self.1, other.1) {
                (Some(a), Some(b)) => std::ptr::fn_addr_eq(a, b),
                (None, None) => true,
                _ => false,
            }
    }
}

/// Metadata key of a deferred event's payload stand-in: the payload is
/// `{DEFERRED_EVENT: <the feed row's summary>}` and the real one is read back from the frame's
/// span ([`Session::event_payload`]).
pub const DEFERRED_EVENT: &str = "rawpv_deferred_summary";

/// Claude Code event types whose payload is the record minus its context keys, so it can be
/// read back from the line alone (issue 16: 30,600 of the 100 MB transcript's 40,602 rows).
fn deferrable_event(t: &str) -> bool {
    matches!(
        t,
        "x-claude-code.progress"
            | "x-claude-code.system"
            | "x-claude-code.summary"
            | "x-claude-code.queue-operation"
            | "x-claude-code.file-history-snapshot"
    )
}

impl std::fmt::Debug for Reparse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reparse")
    }
}

/// Why [`OpenFile::read_span`] refused bytes that are not the ones read at load.
const CHANGED: &str = "the bytes at the call's place differ from those read";

/// The backing file, opened once and shared (clones of a session open their own), read with
/// positional reads so concurrent readers (render jobs, scans) never race on a cursor.
#[derive(Default)]
struct OpenFile(std::sync::Mutex<Option<(Arc<Path>, Arc<std::fs::File>)>>);

impl Clone for OpenFile {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl PartialEq for OpenFile {
    /// A cache: never part of a session's value.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for OpenFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OpenFile")
    }
}

impl OpenFile {
    /// Reads `span` of the file at `path` as text (invalid UTF-8 replaced), opening it on first
    /// use (or when `path` changed).
    fn read_span(&self, path: &Arc<Path>, span: ByteSpan) -> std::io::Result<String> {
        let file = {
            let mut slot = self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match slot.as_ref() {
                Some((p, f)) if Arc::ptr_eq(p, path) || **p == **path => Arc::clone(f),
                _ => {
                    let f = Arc::new(std::fs::File::open(path)?);
                    *slot = Some((Arc::clone(path), Arc::clone(&f)));
                    f
                }
            }
        };
        let mut buf = vec![0u8; span.len as usize];
        read_exact_at(&file, &mut buf, span.offset).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                std::io::Error::new(e.kind(), "the file is shorter than when it was read")
            } else {
                e
            }
        })?;
        // Other bytes at the same place: the file was replaced or rewritten (attack 5 showed
        // another call's command under this call's row).
        if !span.holds(&buf) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                CHANGED,
            ));
        }
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }
}

/// Reads deferred inputs and outputs back from a session's backing file, owned: made by
/// [`Session::deferred`] for a render job, which reads on its own thread.
#[derive(Debug, Clone, Default)]
pub struct Deferred {
    path: Option<Arc<Path>>,
    reparse: Option<Reparse>,
    file: OpenFile,
}

impl Deferred {
    /// [`Session::event_payload`], read on the caller's thread.
    pub fn event_payload(&self, f: &Frame) -> Value {
        self.reader().event_payload(f)
    }

    /// [`Session::with_input_output`], read on the caller's thread.
    pub fn with_input_output<'a>(&self, inv: &'a Invocation) -> Cow<'a, Invocation> {
        self.reader().with_input_output(inv)
    }

    /// [`Session::input`], read on the caller's thread.
    pub fn input<'a>(&self, inv: &'a Invocation) -> Cow<'a, Value> {
        self.reader().input(inv)
    }

    /// [`Session::output`], read on the caller's thread.
    pub fn output<'a>(&self, inv: &'a Invocation) -> Option<Cow<'a, Value>> {
        self.reader().output(inv)
    }

    /// The text of the line at `span` of the backing file, as it was read at load (the record
    /// itself, not the frame an importer made of it: `crate::review` reads a Claude Code
    /// `toolUseResult` there). Errors: no backing file, the file cannot be read, or its bytes
    /// there changed (CRC-32 of the span).
    pub fn line_text(&self, span: ByteSpan) -> std::io::Result<String> {
        self.reader().line_text(span)
    }

    fn reader(&self) -> Reader<'_> {
        Reader {
            path: self.path.as_ref(),
            reparse: self.reparse,
            file: &self.file,
        }
    }
}

/// The backing file and its open handle, borrowed: what reading a deferred part needs.
struct Reader<'s> {
    path: Option<&'s Arc<Path>>,
    reparse: Option<Reparse>,
    file: &'s OpenFile,
}

impl Reader<'_> {
    /// [`Deferred::line_text`].
    fn line_text(&self, span: ByteSpan) -> std::io::Result<String> {
        let Some(path) = self.path else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no file to read it from",
            ));
        };
        self.file.read_span(path, span)
    }

    /// The payload of event `f`: its own, or read back from its span when deferred
    /// ([`Session::defer_events`]); a string saying so when the file cannot give it back.
    fn event_payload(&self, f: &Frame) -> Value {
        let Body::Generic(m) = &f.body else {
            return f.payload_json();
        };
        if !m.contains_key(DEFERRED_EVENT) {
            return Value::Object(m.clone());
        }
        let unavailable = |why: String| Value::String(format!("(payload not available: {why})"));
        let (Some(path), Some(span), Some(Reparse(_, Some(again)))) =
            (self.path, f.origin.span, self.reparse)
        else {
            return unavailable("no file to read it from".into());
        };
        match self.file.read_span(path, span) {
            Err(e) => unavailable(format!("cannot read {}: {e}", path.display())),
            Ok(text) => again(&text, f.frame_type.as_str()).unwrap_or_else(|| {
                unavailable(format!("{} changed since it was read", path.display()))
            }),
        }
    }

    /// The result output of `inv`: borrowed when in memory, read again from
    /// [`Session::backing`] when deferred (`inv.output_span`). `None`: no result, or a result
    /// without an `output` field. When the file can no longer give the frame back (changed,
    /// truncated, removed), the output is a string saying so.
    fn output<'a>(&self, inv: &'a Invocation) -> Option<Cow<'a, Value>> {
        if let Some(v) = inv.result.as_ref().and_then(|r| r.output.as_ref()) {
            return Some(Cow::Borrowed(v));
        }
        let span = inv.output_span?;
        let v = self.read_back(inv, span, Part::Output, |body| match body {
            Body::Result(r) if r.invocation_id.as_deref() == Some(inv.invocation_id.as_str()) => {
                Some(r.output.unwrap_or(Value::Null))
            }
            _ => None,
        });
        Some(Cow::Owned(v))
    }

    /// The request input of `inv`: borrowed when in memory, read again from
    /// [`Session::backing`] when deferred (`inv.input_span`); `Value::Null` when absent. When the
    /// file can no longer give the frame back, a string saying so.
    fn input<'a>(&self, inv: &'a Invocation) -> Cow<'a, Value> {
        let Some(span) = inv.input_span else {
            return Cow::Borrowed(&inv.input);
        };
        Cow::Owned(self.read_back(inv, span, Part::Input, |body| match body {
            Body::Request(r) if r.invocation_id.as_deref() == Some(inv.invocation_id.as_str()) => {
                Some(r.input.unwrap_or(Value::Null))
            }
            _ => None,
        }))
    }

    /// Reads the line at `span` of the backing file again and takes `part` of the call in it: a
    /// RAWP frame's body through `take` (`None`: not the frame that was read, so the file
    /// changed), or the session's [`Reparse`]. Failures become a visible "(… not available:
    /// why)" string, never an error.
    fn read_back(
        &self,
        inv: &Invocation,
        span: ByteSpan,
        part: Part,
        take: impl FnOnce(Body) -> Option<Value>,
    ) -> Value {
        let (what, line) = match part {
            Part::Input => ("input", inv.request_line),
            Part::Output => ("output", inv.result_line.unwrap_or(0)),
        };
        let unavailable = |why: String| Value::String(format!("({what} not available: {why})"));
        let Some(path) = self.path else {
            return unavailable("no file to read it from".into());
        };
        let changed = || unavailable(format!("{} changed since it was read", path.display()));
        match self.file.read_span(path, span) {
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => changed(),
            Err(e) => unavailable(format!("cannot read {}: {e}", path.display())),
            Ok(text) => match self.reparse {
                Some(Reparse(f, _)) => {
                    let input = || match inv.input_span {
                        Some(_) if part == Part::Output => self.input(inv).into_owned(),
                        _ => inv.input.clone(),
                    };
                    f(&text, &inv.invocation_id, &inv.tool_name, part, &input)
                        .unwrap_or_else(changed)
                }
                None => crate::protocol::parse_line(line, &text)
                    .ok()
                    .and_then(|f| take(f.body))
                    .unwrap_or_else(changed),
            },
        }
    }

    /// `inv` with its input and output in place: borrowed when both are in memory, else a copy
    /// with the deferred ones read back ([`Session::input`], [`Session::output`]). For
    /// renderers that take an [`Invocation`].
    fn with_input_output<'a>(&self, inv: &'a Invocation) -> Cow<'a, Invocation> {
        if inv.output_span.is_none() && inv.input_span.is_none() {
            return Cow::Borrowed(inv);
        }
        let mut owned = inv.clone();
        if inv.input_span.is_some() {
            owned.input = self.input(inv).into_owned();
            owned.input_span = None;
        }
        if inv.output_span.is_some() {
            let out = self.output(inv).map(Cow::into_owned);
            if let Some(r) = owned.result.as_mut() {
                r.output = out;
            }
            owned.output_span = None;
        }
        Cow::Owned(owned)
    }
}

#[cfg(unix)]
fn read_exact_at(f: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, offset)
}

#[cfg(not(unix))]
fn read_exact_at(mut f: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(buf)
}

/// Default cap on kept feed rows (about 200k rows; a row costs from ~100 bytes to the size of
/// its output). Past it the oldest finished rows are dropped (see [`Session::compact_if_needed`]).
pub const MAX_ITEMS: usize = 200_000;

/// (session, `invocation_id`) → index into [`Session::invocations`], keyed by a 64-bit hash of
/// the pair so that growing the table never reads the id strings again: a `HashMap<String, usize>` rehash
/// chased one heap pointer per call (229k calls: a 130 ms stall on the app task while a file
/// loads). The id lives once, in its invocation; a lookup compares it (and the session) there,
/// and a pair whose hash collides with another's goes to `overflow` (keyed by the pair). The
/// same id in two sessions is two calls (SPEC §6).
#[derive(Debug, Clone, Default, PartialEq)]
struct IdIndex {
    by_hash: HashMap<u64, usize, std::hash::BuildHasherDefault<PreHashed>>,
    overflow: HashMap<(u32, String), usize>,
}

impl IdIndex {
    /// `SipHash` with fixed keys of the id (the same for every session, so equal sessions compare
    /// equal), the session mixed in after: hashing the pair cost a `write` a lookup more, and the
    /// default session's hashes stay those of the id alone. Colliding pairs go to `overflow`.
    fn hash(sid: u32, id: &str) -> u64 {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        let h = BuildHasherDefault::<DefaultHasher>::default().hash_one(id);
        h ^ u64::from(sid).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    fn get(&self, sid: u32, id: &str, invocations: &[Box<Invocation>]) -> Option<usize> {
        let is = |inv: &Invocation| inv.session == sid && inv.invocation_id == id;
        match self.by_hash.get(&Self::hash(sid, id)) {
            Some(&i) if invocations.get(i).is_some_and(|inv| is(inv)) => Some(i),
            Some(_) if !self.overflow.is_empty() => {
                self.overflow.get(&(sid, id.to_owned())).copied()
            }
            Some(_) | None => None,
        }
    }

    /// Adds `id` of session `sid` (not yet in the index) at `idx`.
    fn insert(&mut self, sid: u32, id: &str, idx: usize, invocations: &[Box<Invocation>]) {
        let h = Self::hash(sid, id);
        match self.by_hash.get(&h) {
            Some(&i)
                if invocations
                    .get(i)
                    .is_some_and(|inv| inv.session != sid || inv.invocation_id != id) =>
            {
                self.overflow.insert((sid, id.to_owned()), idx);
            }
            _ => {
                self.by_hash.insert(h, idx);
            }
        }
    }
}

impl IdIndex {
    /// Removes `id` of session `sid`, indexed at `idx`; a colliding pair in `overflow` takes
    /// its hash slot (O(overflow), which is empty but for 64-bit collisions).
    fn remove(&mut self, sid: u32, id: &str, idx: usize) {
        let h = Self::hash(sid, id);
        if self.by_hash.get(&h) != Some(&idx) {
            self.overflow.remove(&(sid, id.to_owned()));
            return;
        }
        self.by_hash.remove(&h);
        let promoted = (self.overflow.iter())
            .find(|((s, i), _)| Self::hash(*s, i) == h)
            .map(|(k, &v)| (k.clone(), v));
        if let Some((k, v)) = promoted {
            self.overflow.remove(&k);
            self.by_hash.insert(h, v);
        }
    }
}

/// A `Hasher` for keys that are already hashes (the `u64`s of [`IdIndex`] and of
/// [`folded::FoldedCalls`]).
#[derive(Debug, Default, Clone, Copy)]
struct PreHashed(u64);

impl std::hash::Hasher for PreHashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used; fold anything else in so the hasher stays correct.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// What [`Session::compact_if_needed`] removed: old → new index maps for feed rows and
/// invocations (`None`: removed). Views remap their selections and filtered rows through it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compaction {
    items: Vec<Option<usize>>,
    invocations: Vec<Option<usize>>,
    /// Number of feed rows removed.
    pub removed_items: usize,
}

impl Compaction {
    /// The new index of old feed row `old` (`None` when it was removed or out of range).
    pub fn item(&self, old: usize) -> Option<usize> {
        self.items.get(old).copied().flatten()
    }

    /// The new index of old invocation `old` (`None` when it was removed or out of range).
    pub fn invocation(&self, old: usize) -> Option<usize> {
        self.invocations.get(old).copied().flatten()
    }
}

impl Session {
    pub fn new() -> Self {
        Self::default()
    }

    /// Folds a whole sequence of decoded items and finishes the session.
    pub fn from_decoded(items: impl IntoIterator<Item = Decoded>) -> Self {
        let mut s = Self::new();
        for d in items {
            s.apply(d);
        }
        s.finish();
        s
    }

    /// The result output of `inv`: borrowed when in memory, read again from
    /// [`Session::backing`] when deferred (`inv.output_span`). `None`: no result, or a result
    /// without an `output` field. When the file can no longer give the frame back (changed,
    /// truncated, removed), the output is a string saying so.
    pub fn output<'a>(&self, inv: &'a Invocation) -> Option<Cow<'a, Value>> {
        self.reader().output(inv)
    }

    /// The request input of `inv`: borrowed when in memory, read again from
    /// [`Session::backing`] when deferred (`inv.input_span`); `Value::Null` when absent. When the
    /// file can no longer give the frame back, a string saying so.
    pub fn input<'a>(&self, inv: &'a Invocation) -> Cow<'a, Value> {
        self.reader().input(inv)
    }

    /// `inv` with its input and output in place: borrowed when both are in memory, else a copy
    /// with the deferred ones read back ([`Session::input`], [`Session::output`]). For
    /// renderers that take an [`Invocation`].
    pub fn with_input_output<'a>(&self, inv: &'a Invocation) -> Cow<'a, Invocation> {
        self.reader().with_input_output(inv)
    }

    /// A reader of this session's deferred inputs and outputs that can be moved to another
    /// thread (a render job reads them back there, off the app task). It opens the file itself.
    pub fn deferred(&self) -> Deferred {
        Deferred {
            path: self.backing.clone(),
            reparse: self.reparse,
            file: OpenFile::default(),
        }
    }

    /// The payload of event `f` of this session: in memory, or read back from the file when
    /// deferred ([`Self::defer_events`]; one positional read and a parse).
    pub fn event_payload(&self, f: &Frame) -> Value {
        self.reader().event_payload(f)
    }

    /// The text of the line at `span` of [`Self::backing`] as read at load: see
    /// [`Deferred::line_text`].
    pub fn line_text(&self, span: ByteSpan) -> std::io::Result<String> {
        self.reader().line_text(span)
    }

    fn reader(&self) -> Reader<'_> {
        Reader {
            path: self.backing.as_ref(),
            reparse: self.reparse,
            file: &self.open_file,
        }
    }

    /// Bytes of `inv`'s deferred input and output (their frames' line lengths); 0 when both are
    /// in memory. For "is this render heavy" decisions.
    pub fn deferred_bytes(inv: &Invocation) -> usize {
        [inv.input_span, inv.output_span]
            .into_iter()
            .flatten()
            .map(|s| usize::try_from(s.len).unwrap_or(usize::MAX))
            .fold(0, usize::saturating_add)
    }

    /// Session `sid`'s current catalog (its latest publish), if any (SPEC 3.5, §6).
    pub fn catalog_of(&self, sid: u32) -> Option<&CatalogPublish> {
        self.publish_of(sid).map(|p| &p.catalog)
    }

    /// The default session's current catalog (SPEC 3.5): for a single-session input, the
    /// current catalog. Per session: [`Self::catalog_of`].
    pub fn catalog(&self) -> Option<&CatalogPublish> {
        self.catalog_of(0)
    }

    /// Session `sid`'s latest publish, if any. O(1).
    pub fn publish_of(&self, sid: u32) -> Option<&Publish> {
        let last = self.sessions.get(sid).publishes.last()?;
        self.publishes.get(*last as usize)
    }

    /// The publish in force in session `sid` once the input's first `upto` publishes were
    /// folded: the session's last publish among them. O(log publishes of the session).
    pub fn publish_in_force(&self, sid: u32, upto: usize) -> Option<&Publish> {
        let own = &self.sessions.get(sid).publishes;
        let n = own.partition_point(|&p| (p as usize) < upto);
        own[..n]
            .last()
            .and_then(|&p| self.publishes.get(p as usize))
    }

    /// The catalog entry for `tool` in the catalog in force in session `sid` once the input's
    /// first `upto` publishes were folded (the first entry when listed twice): what the SPEC 3.4
    /// rule reads. The one lookup both `check` (as a result is folded: `upto` = the publishes so
    /// far) and the detail header (through [`Self::catalog_entry_of`]) use.
    pub fn catalog_entry_at(
        &self,
        sid: u32,
        upto: usize,
        tool: &str,
    ) -> Option<&crate::protocol::CatalogTool> {
        self.publish_in_force(sid, upto).and_then(|p| p.tool(tool))
    }

    /// The catalog entry of `inv`'s tool in the catalog in force in its session when its result
    /// arrived (when its request did, while open; [`Invocation::catalog_at`]).
    pub fn catalog_entry_of(&self, inv: &Invocation) -> Option<&crate::protocol::CatalogTool> {
        self.catalog_entry_at(inv.session, inv.catalog_at as usize, &inv.tool_name)
    }

    /// The invocation with this id in session `sid` (SPEC §6: ids are per session). O(1).
    pub fn invocation_in(&self, sid: u32, id: &str) -> Option<&Invocation> {
        self.index
            .get(sid, id, &self.invocations)
            .map(|i| &*self.invocations[i])
    }

    /// The call with this id in session `sid`, kept or folded away ([`Self::findings_only`]).
    pub fn call_in(&self, sid: u32, id: &str) -> Option<CallRef<'_>> {
        if let Some(inv) = self.invocation_in(sid, id) {
            return Some(CallRef::Kept(inv));
        }
        let (tool_name, stream) = self.folded.get(sid, id)?;
        Some(CallRef::Folded { tool_name, stream })
    }

    /// Whether session `sid` has a call with this id, kept or folded away.
    fn has_call(&self, sid: u32, id: &str) -> bool {
        self.index.get(sid, id, &self.invocations).is_some() || self.folded.contains(sid, id)
    }

    /// Moves the finished call at `idx` out of the model into [`Self::folded`] (a
    /// `findings_only` fold): its slot is dropped by the next compaction of `invocations`, which
    /// runs once more than half of the list is such slots (amortised O(1) a call; the list keeps
    /// its order, which the end-of-input findings and `stats`' open calls follow).
    fn fold_away(&mut self, idx: usize) {
        let inv = &self.invocations[idx];
        self.folded
            .insert(inv.session, &inv.invocation_id, &inv.tool_name, &inv.stream);
        self.index.remove(inv.session, &inv.invocation_id, idx);
        let inv = &mut self.invocations[idx];
        inv.stream = ChunkBuffer::default();
        inv.delegation_chain = Vec::new();
        inv.result = None;
        inv.result_envelope = None;
        inv.request_envelope = None;
        inv.summary = Box::default();
        self.stale += 1;
        if self.stale >= 1024 && self.stale * 2 > self.invocations.len() {
            // Every finished call of a `findings_only` fold is folded away.
            self.invocations.retain(|inv| inv.status.is_open());
            self.invocations.shrink_to(self.invocations.len() * 2);
            self.index = IdIndex::default();
            for (i, inv) in self.invocations.iter().enumerate() {
                self.index
                    .insert(inv.session, &inv.invocation_id, i, &self.invocations);
            }
            self.stale = 0;
        }
    }

    /// The invocation with this id: in the default session, else the first session that has
    /// one (O(sessions)). Within a known session use [`Self::invocation_in`].
    pub fn invocation(&self, id: &str) -> Option<&Invocation> {
        self.invocation_index(id).map(|i| &*self.invocations[i])
    }

    /// Index of the invocation with this id (as [`Self::invocation`]).
    pub fn invocation_index(&self, id: &str) -> Option<usize> {
        (0..self.sessions.len() as u32).find_map(|sid| self.index.get(sid, id, &self.invocations))
    }

    /// Records a finding, counting it on its invocation and its session (the finding's own
    /// session when it names one, else the session of the frame being folded).
    pub fn push_finding(&mut self, mut f: Finding) {
        tracing::debug!(
            code = f.code,
            level = f.level.as_str(),
            line = f.line,
            invocation = f.invocation_id.as_deref().unwrap_or(""),
            "finding"
        );
        if f.session.is_none() {
            // The session of the frame being folded, when it is of the input being read; with
            // several inputs a line's finding is otherwise its input's (an input that could not
            // be read then shows as a session with its error).
            f.session = self
                .folding
                .filter(|s| self.sessions.get(*s).input == self.input)
                .or_else(|| {
                    (self.sessions.inputs() > 0).then(|| {
                        self.sessions
                            .default_of(self.input, self.items.len(), f.line)
                    })
                });
        }
        f.input = match f.session {
            Some(sid) => self.sessions.get(sid).input,
            None => self.input,
        };
        if let Some(sid) = f.session {
            let e = self.sessions.get_mut(sid);
            e.findings += 1;
            if f.code == crate::source::merge::INPUT_FAILED && f.level == Level::Error {
                e.failed = true;
            }
        }
        let sid = f.session.unwrap_or(0);
        if let Some(i) = f
            .invocation_id
            .as_deref()
            .and_then(|id| self.index.get(sid, id, &self.invocations))
        {
            self.invocations[i].findings += 1;
            self.invocations[i].rev += 1;
        }
        let k = self.findings.len();
        match (&f.invocation_id, f.line) {
            (Some(id), _) => self.finding_ids.entry(id.clone()).or_default().push(k),
            (None, 0) => {}
            (None, line) => self
                .finding_lines
                .entry(line_key(f.input, line))
                .or_default()
                .push(k),
        }
        self.findings.push(f);
        self.revision += 1;
    }

    /// Whether a finding naming no invocation is about line `line` of input `input` (line 0:
    /// never). O(1).
    pub fn has_findings_at_line(&self, input: u16, line: u64) -> bool {
        line != 0 && self.finding_lines.contains_key(&line_key(input, line))
    }

    /// The findings about `inv`, in order: those naming its `invocation_id`, and those naming no
    /// invocation on the line of its request or result. At most `limit`. Looked up through an
    /// index, not a scan (the detail pane asks on every selection; issue 8).
    pub fn findings_of(&self, inv: &Invocation, limit: usize) -> Vec<&Finding> {
        let own = |k: &usize| {
            self.findings
                .get(*k)
                .is_some_and(|f| f.session.is_none_or(|s| s == inv.session))
        };
        let input = self.sessions.get(inv.session).input;
        let at_line = |l: u64| self.finding_lines.get(&line_key(input, l));
        let mut at: Vec<usize> = self
            .finding_ids
            .get(&inv.invocation_id)
            .into_iter()
            .flatten()
            .copied()
            .filter(own)
            .chain(
                at_line(inv.request_line)
                    .into_iter()
                    .chain(inv.result_line.and_then(at_line))
                    .flatten()
                    .copied(),
            )
            .collect();
        at.sort_unstable();
        at.dedup();
        at.into_iter()
            .take(limit)
            .filter_map(|k| self.findings.get(k))
            .collect()
    }

    /// Folds one decoded item (a frame, a malformed line, or an importer's finding).
    pub fn apply(&mut self, d: Decoded) -> Applied {
        match d {
            Decoded::Frame(f) => self.apply_frame(*f),
            Decoded::Malformed(e) => {
                self.counts.malformed += 1;
                let line = e.line;
                self.push_finding(Finding::new(
                    Level::Error,
                    code::MALFORMED_LINE,
                    "SPEC 2",
                    line,
                    e.to_string(),
                ));
                Applied::default()
            }
            Decoded::Finding(f) => {
                self.push_finding(f);
                Applied::default()
            }
        }
    }

    /// Marks the end of the source: open invocations now read as "no result", and end-of-session
    /// checks run.
    pub fn finish(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        self.revision += 1;
        for f in check::end_findings(self) {
            self.push_finding(f);
        }
        self.findings.shrink_to_fit();
    }

    /// Cap on kept feed rows in effect (0: none).
    pub fn item_cap(&self) -> usize {
        self.max_items.unwrap_or(MAX_ITEMS)
    }

    /// Memory bound for endless streams: when there are more feed rows than [`Self::item_cap`],
    /// drops the oldest *finished* rows (with several sessions, those of the least recently
    /// active sessions first, each session's oldest first; `SessionEntry::dropped` counts them) (finished invocations, done messages, events other than
    /// catalog publishes) down to 90% of the cap, so the O(rows) pass is amortised, and returns
    /// the index maps. Open invocations, open messages and catalog publishes are always kept.
    ///
    /// Invariants kept: every index (`Item::Invocation`, `Invocation::item`, `parent`,
    /// `children`, `Publish::item`, the id index, open messages) is remapped; a parent that was
    /// dropped becomes `None`. Counters (`counts`) stay cumulative; findings are kept. A later
    /// frame for a dropped invocation is treated like one for an unknown id (a finding).
    pub fn compact_if_needed(&mut self) -> Option<Compaction> {
        let cap = self.item_cap();
        if cap == 0 || self.items.len() <= cap {
            return None;
        }
        let target = cap - cap / 10;
        let mut to_remove = self.items.len() - target;
        let n = self.items.len();
        let pinned = self.pinned_rows(n);
        let mut keep = vec![true; n];
        let droppable = |i: usize, it: &Item| match it {
            Item::Invocation(k) => !self.invocations[*k].status.is_open(),
            Item::Message(_) | Item::Event(_) => !pinned[i],
        };
        if self.sessions.is_multi() {
            // Several sessions (issue 24): the least recently active sessions give their oldest
            // finished rows first, so the sessions at work keep their history.
            let mut rows: Vec<Vec<usize>> = vec![Vec::new(); self.sessions.len()];
            for (i, it) in self.items.iter().enumerate() {
                if droppable(i, it) {
                    rows[self.sessions.of_item(i) as usize].push(i);
                }
            }
            let mut order: Vec<u32> = (0..self.sessions.len() as u32).collect();
            order.sort_by_key(|&sid| {
                let e = self.sessions.get(sid);
                (e.counts.running > 0, e.last_at)
            });
            for sid in order {
                for &i in &rows[sid as usize] {
                    if to_remove == 0 {
                        break;
                    }
                    keep[i] = false;
                    to_remove -= 1;
                    self.sessions.get_mut(sid).dropped += 1;
                }
            }
            return self.retain_rows(&keep);
        }
        for (i, it) in self.items.iter().enumerate() {
            if to_remove == 0 {
                break;
            }
            if droppable(i, it) {
                keep[i] = false;
                to_remove -= 1;
            }
        }
        self.retain_rows(&keep)
    }

    /// Drops the finished rows before row `upto` that `rawpv print` has written (finished calls,
    /// done messages, events other than catalog publishes), as [`Self::compact_if_needed`] does,
    /// except that a dropped call is kept in [`folded::FoldedCalls`] (its id, tool name and
    /// stream sequences), so later frames naming it fold as they would with it kept: a chunk is
    /// attached (no row), a second request or result is an event row of its own, and the
    /// findings are the same. Returns the new index of row `upto`.
    pub fn drop_written(&mut self, upto: usize) -> usize {
        self.drop_written_except(upto, |_| false).0
    }

    /// [`Self::drop_written`] that also keeps the rows before `upto` for which `keep` is true
    /// (`rawpv export`: rows not written yet, such as a subagent's calls inside a call still
    /// open), and returns the index maps with the new index of row `upto`.
    pub fn drop_written_except(
        &mut self,
        upto: usize,
        keep_row: impl Fn(usize) -> bool,
    ) -> (usize, Option<Compaction>) {
        let upto = upto.min(self.items.len());
        let mut keep = vec![true; self.items.len()];
        let pinned = self.pinned_rows(upto);
        for (i, it) in self.items[..upto].iter().enumerate() {
            keep[i] = match it {
                _ if keep_row(i) => true,
                Item::Invocation(k) => {
                    let inv = &self.invocations[*k];
                    if inv.status.is_open() {
                        true
                    } else {
                        self.folded.insert(
                            inv.session,
                            &inv.invocation_id,
                            &inv.tool_name,
                            &inv.stream,
                        );
                        false
                    }
                }
                Item::Message(_) | Item::Event(_) => pinned[i],
            };
        }
        let at = keep[..upto].iter().filter(|k| **k).count();
        (at, self.retain_rows(&keep))
    }

    /// Which of the first `n` rows a compaction keeps whatever they hold: catalog publishes and
    /// open messages.
    fn pinned_rows(&self, n: usize) -> Vec<bool> {
        let mut pinned = vec![false; n];
        for i in (self.publishes.iter().map(|p| p.item)).chain(self.open_messages.iter().copied()) {
            if let Some(x) = pinned.get_mut(i) {
                *x = true;
            }
        }
        pinned
    }

    /// Keeps the rows whose `keep` is true and the calls of kept rows, remapping every index
    /// (see [`Self::compact_if_needed`]).
    fn retain_rows(&mut self, keep: &[bool]) -> Option<Compaction> {
        let mut item_map = vec![None; self.items.len()];
        let mut next = 0;
        for (i, k) in keep.iter().enumerate() {
            if *k {
                item_map[i] = Some(next);
                next += 1;
            }
        }
        let removed_items = self.items.len() - next;
        if removed_items == 0 {
            return None;
        }
        let mut inv_map = vec![None; self.invocations.len()];
        let mut next_inv = 0;
        for (k, inv) in self.invocations.iter().enumerate() {
            if item_map[inv.item].is_some() {
                inv_map[k] = Some(next_inv);
                next_inv += 1;
            }
        }
        let old_items = std::mem::take(&mut self.items);
        self.items = old_items
            .into_iter()
            .zip(keep)
            .filter(|(_, k)| **k)
            .map(|(it, _)| match it {
                Item::Invocation(k) => Item::Invocation(inv_map[k].unwrap_or(0)),
                other => other,
            })
            .collect();
        let old_invs = std::mem::take(&mut self.invocations);
        self.invocations = old_invs
            .into_iter()
            .enumerate()
            .filter(|(k, _)| inv_map[*k].is_some())
            .map(|(_, mut inv)| {
                inv.item = item_map[inv.item].unwrap_or(0);
                inv.parent = inv.parent.and_then(|p| inv_map[p]);
                inv.children = inv.children.iter().filter_map(|&c| inv_map[c]).collect();
                inv
            })
            .collect();
        self.index = IdIndex::default();
        for (i, inv) in self.invocations.iter().enumerate() {
            self.index
                .insert(inv.session, &inv.invocation_id, i, &self.invocations);
        }
        self.sessions.retain_items(keep);
        for p in &mut self.publishes {
            p.item = item_map[p.item].unwrap_or(0);
        }
        for m in &mut self.open_messages {
            *m = item_map[*m].unwrap_or(0);
        }
        self.dropped_items += removed_items as u64;
        self.revision += 1;
        Some(Compaction {
            items: item_map,
            invocations: inv_map,
            removed_items,
        })
    }

    fn push_item(&mut self, item: Item) -> usize {
        let at = self.items.len();
        self.sessions.push_item(at, self.folding.unwrap_or(0));
        self.items.push(item);
        at
    }

    /// The session of a frame that names none: the default session, except for a stream chunk or
    /// result whose call is not the default session's but is open in another one (attack 6: an
    /// unnamed result went to the default session, not to the one whose call it answers).
    /// O(sessions), and only for such frames of an input of several sessions.
    fn unnamed_session(&mut self, frame: &Frame) -> u32 {
        let home = self
            .sessions
            .default_of(self.input, self.items.len(), frame.origin.line);
        let id = match &frame.body {
            Body::Stream(s) => s.invocation_id.as_deref(),
            Body::Result(r) => r.invocation_id.as_deref(),
            Body::Request(_) | Body::Catalog(_) | Body::Generic(_) => None,
        };
        let Some(id) = id.filter(|_| self.sessions.is_multi()) else {
            return home;
        };
        if self.has_call(home, id) {
            return home;
        }
        // Only the sessions of the frame's own input: another file's call of the same id is
        // another call.
        let input = self.input;
        self.sessions
            .of_input(input)
            .find(|&sid| {
                sid != home
                    && self
                        .index
                        .get(sid, id, &self.invocations)
                        .is_some_and(|i| self.invocations[i].status.is_open())
            })
            .unwrap_or(home)
    }

    /// For a frame of session `sid` naming a call it does not have: `" in this session; session
    /// ID has a call with this id"` when another session has one (invocation ids are per
    /// session, SPEC §6), else nothing. O(sessions), on that error path only.
    fn elsewhere(&self, sid: u32, id: &str) -> String {
        if !self.sessions.is_multi() {
            return String::new();
        }
        (0..self.sessions.len() as u32)
            .filter(|&k| k != sid)
            .find(|&k| self.has_call(k, id))
            .map_or_else(String::new, |k| {
                let name = self.sessions.short_name(k);
                format!(" in this session; session {name} has a call with this id")
            })
    }

    /// The session of the frame being folded (the default one outside a frame).
    fn sid(&self) -> u32 {
        self.folding.unwrap_or(0)
    }

    /// Applies `f` to the input's counters and to those of the frame's session.
    fn tick(&mut self, f: impl Fn(&mut Counts)) {
        f(&mut self.counts);
        let sid = self.sid();
        f(&mut self.sessions.get_mut(sid).counts);
    }

    fn push_event(&mut self, mut frame: Frame) -> Applied {
        if self.findings_only {
            if let Some(t) = &mut self.tally {
                t.event(&frame);
            }
            return Applied::default();
        }
        shrink_envelope(&mut frame.envelope);
        if let Some(id) = self.hooks.add(&frame)
            && let Some(k) = self.index.get(self.sid(), &id, &self.invocations)
        {
            // The call's detail lists its hooks, its row says when one failed.
            self.invocations[k].rev += 1;
        }
        let defer = self.defer_events
            && self.backing.is_some()
            && self.reparse.is_some_and(|r| r.1.is_some())
            && frame.origin.span.is_some()
            && deferrable_event(frame.frame_type.as_str());
        if let Body::Generic(payload) = &mut frame.body {
            if defer {
                let s = summary::event_text(&Value::Object(std::mem::take(payload)));
                payload.insert(DEFERRED_EVENT.into(), Value::String(s));
            }
            shrink_map(payload);
        }
        let item = self.push_item(Item::Event(Box::new(frame)));
        Applied {
            item: Some(item),
            invocation: None,
            new_item: true,
        }
    }

    /// A message frame's `redacted` (SPEC 3.6): absent or `false` → not redacted; any value but
    /// a boolean is a `wrong-field-type` warning and reads as redacted, so a doubt never shows
    /// the text as the original (attack 5: `"redacted": "true"` printed the secret).
    fn redacted_field(&mut self, frame: &Frame) -> bool {
        let Body::Generic(payload) = &frame.body else {
            return false;
        };
        match payload.get("redacted") {
            None | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(other) => {
                let msg = format!(
                    "{} field `redacted` is {}, expected a boolean; read as redacted",
                    frame.frame_type,
                    check::json_kind(other)
                );
                self.push_finding(Finding::new(
                    Level::Warning,
                    code::WRONG_FIELD_TYPE,
                    "SPEC 3.6",
                    frame.origin.line,
                    msg,
                ));
                true
            }
        }
    }

    /// Folds one frame.
    pub fn apply_frame(&mut self, frame: Frame) -> Applied {
        self.revision += 1;
        if let Some(ts) = frame.envelope.timestamp {
            self.last_timestamp = Some(self.last_timestamp.map_or(ts, |l| l.max(ts)));
        }
        let line = frame.origin.line;
        // The frame's session (SPEC §6); an empty `session_id` is the default session's (the
        // checker says so).
        let named = frame
            .envelope
            .session_id
            .as_deref()
            .filter(|s| !s.is_empty());
        let sid = match named {
            Some(_) => self
                .sessions
                .resolve(named, self.input, self.items.len(), line),
            None => self.unnamed_session(&frame),
        };
        self.folding = Some(sid);
        self.tick(|c| c.frames += 1);
        let e = self.sessions.get_mut(sid);
        if e.counts.frames == 1 {
            e.first_line = line;
        }
        e.tokens.add_frame(&frame);
        if let Some(ts) = frame.envelope.timestamp {
            e.last_at = Some(e.last_at.map_or(ts, |l| l.max(ts)));
        }
        if e.agent.is_none()
            && let Some(a) = sessions::frame_agent(&frame)
        {
            e.agent = Some(a.into());
        }
        if let Some(c) = sessions::frame_cwd(&frame) {
            match e.cwd.as_deref() {
                None => e.cwd = Some(c.into()),
                Some(first) if first.trim_end_matches('/') != c.trim_end_matches('/') => {
                    e.cwd_changed = true;
                }
                Some(_) => {}
            }
        }
        match frame.frame_type {
            FrameType::SessionCompacted | FrameType::ControlSessionCompact => e.compactions += 1,
            FrameType::ControlPromptRequest if frame.envelope.delegation_chain().is_empty() => {
                e.turns += 1;
            }
            _ => {}
        }
        // Checked against the session *before* the frame; pushed after it is folded, so findings
        // about a new request count on its invocation.
        let checked = check::frame_findings(self, &frame, sid);
        // `x-` types are extension frames (importers use them for records with no RAWP type).
        if let FrameType::Unknown(t) = &frame.frame_type
            && !t.starts_with("x-")
        {
            // SPEC 2: shown as a generic row, never dropped, and not a violation (the seed's
            // list of frame types is open: "names confirmed, bodies mostly not public"): a note.
            let msg = format!("unknown frame type {}; shown as a generic row", Quoted(t));
            self.push_finding(Finding::new(
                Level::Info,
                code::UNKNOWN_FRAME_TYPE,
                "SPEC 2",
                line,
                msg,
            ));
        }
        // Fields of the wrong type first (what the frame is), then the checker's findings.
        let mut findings = Vec::with_capacity(frame.field_errors.len() + checked.len());
        for e in &frame.field_errors {
            let level = if e.required {
                Level::Error
            } else {
                Level::Warning
            };
            let msg = format!("{} field {e}", frame.frame_type);
            let mut f = Finding::new(
                level,
                code::WRONG_FIELD_TYPE,
                field_spec(&frame.frame_type),
                line,
                msg,
            );
            if let Some(id) = frame.invocation_id().filter(|id| !id.is_empty()) {
                f = f.for_invocation(id);
            }
            findings.push(f);
        }
        findings.extend(checked);
        let frame_kind = match (&frame.body, &frame.frame_type) {
            (Body::Stream(_), _) => Kind::Stream,
            (Body::Result(_), _) => Kind::Result,
            (_, FrameType::SessionError) => Kind::SessionError,
            _ => Kind::Other,
        };
        let frame_id = match frame_kind {
            Kind::Other => None,
            Kind::Stream | Kind::Result => frame.invocation_id().map(str::to_owned),
            Kind::SessionError => generic_str(&frame, "invocation_id"),
        };
        let frame_error_code = (frame_kind == Kind::SessionError)
            .then(|| generic_str(&frame, "error_code"))
            .flatten();
        match &frame.body {
            Body::Request(_) if self.publish_of(sid).is_none() && !check::is_imported(&frame) => {
                self.uncatalogued.entry(sid).or_insert((line, 0)).1 += 1;
            }
            Body::Catalog(_) => {
                self.uncatalogued.remove(&sid);
            }
            Body::Generic(_) if frame.frame_type == FrameType::AgentInteractionRequest => {
                let a = self.approvals.entry(sid).or_default();
                if let Some(id) = generic_str(&frame, "invocation_id") {
                    a.calls.insert(id.into());
                } else if let Some(tool) = generic_str(&frame, "tool_name") {
                    a.tools.insert(tool.into());
                }
            }
            _ => {}
        }
        // Checked above: a one-call approval is used up by its request.
        if let Body::Request(r) = &frame.body
            && let Some(id) = r.invocation_id.as_deref()
            && let Some(a) = self.approvals.get_mut(&sid)
        {
            a.calls.remove(id);
        }
        let applied = match frame.body {
            Body::Request(_) => self.apply_request(frame),
            Body::Stream(_) => self.apply_stream(frame),
            Body::Result(_) => self.apply_result(frame),
            Body::Catalog(_) => self.apply_catalog(frame),
            Body::Generic(_) => self.apply_generic(frame),
        };
        for f in findings {
            self.push_finding(f);
        }
        if !self.blocked.is_empty() && matches!(frame_kind, Kind::Stream | Kind::Result) {
            self.unblock(sid, frame_id.as_deref().unwrap_or_default());
        }
        if frame_kind == Kind::SessionError
            && let Some(id) = frame_id
        {
            self.answer_blocked(sid, &id, frame_error_code.as_deref().unwrap_or(""));
        }
        self.folding = None;
        applied
    }

    /// A `session.error` naming the open call `id` of a blocked tool: the master did its job
    /// (issue 19 item 4, RAWP-DPS 5.4): the call's blocking findings become one info each.
    fn answer_blocked(&mut self, sid: u32, id: &str, error_code: &str) {
        use check::code as c;
        let Some(i) = self.index.get(sid, id, &self.invocations) else {
            return;
        };
        let inv = &self.invocations[i];
        if !inv.status.is_open() || !inv.stream.is_empty() {
            return;
        }
        let from = inv.request_line;
        let mut was = Vec::new();
        for (k, f) in self.findings.iter_mut().enumerate().rev() {
            if f.line < from {
                break;
            }
            let blocking = [
                c::TOOL_NOT_IN_CATALOG,
                c::TOOL_UNAVAILABLE,
                c::TOOL_FATAL_DIAGNOSTIC,
            ];
            if f.session == Some(sid)
                && f.invocation_id.as_deref() == Some(id)
                && f.level == Level::Error
                && blocking.contains(&f.code)
            {
                let msg = format!(
                    "{} (answered by session.error {}: the master blocked the call)",
                    f.message,
                    Quoted(error_code)
                );
                was.push((k, f.level, f.code, std::mem::replace(&mut f.message, msg)));
                f.level = Level::Info;
                f.code = c::BLOCKED_REQUEST_ANSWERED;
            }
        }
        if !was.is_empty() {
            self.blocked.insert((sid, id.into()), was);
        }
    }

    /// The blocked call `id` ran after all (a stream chunk or a result): its findings are what
    /// they were before its `session.error`.
    fn unblock(&mut self, sid: u32, id: &str) {
        let Some(was) = self.blocked.remove(&(sid, Box::from(id))) else {
            return;
        };
        for (k, level, code, message) in was {
            if let Some(f) = self.findings.get_mut(k) {
                (f.level, f.code, f.message) = (level, code, message);
            }
        }
    }

    fn apply_request(&mut self, frame: Frame) -> Applied {
        let Body::Request(req) = &frame.body else {
            return self.push_event(frame);
        };
        let id = req.invocation_id.clone().unwrap_or_default();
        let sid = self.sid();
        // Two requests without a usable id are two `missing-field`s, not one id used twice.
        if !id.is_empty() && self.has_call(sid, &id) {
            let msg = format!("invocation_id {} was already requested", Quoted(&id));
            let f = Finding::new(
                Level::Error,
                code::DUPLICATE_INVOCATION_ID,
                "SPEC 3.7",
                frame.origin.line,
                msg,
            )
            .for_invocation(id.clone());
            self.push_finding(f);
            *self.reused_ids.entry((sid, id.into())).or_default() += 1;
            return self.push_event(frame);
        }
        let Body::Request(req) = frame.body else {
            return Applied::default();
        };
        let chain = frame.envelope.delegation_chain();
        // A `findings_only` fold keeps no feed rows and no call tree (nothing reads them, and
        // finished calls leave the list).
        let parent = chain
            .last()
            .filter(|_| !self.findings_only)
            .and_then(|d| self.index.get(sid, &d.invocation_id, &self.invocations));
        let idx = self.invocations.len();
        let item = if self.findings_only {
            usize::MAX
        } else {
            self.push_item(Item::Invocation(idx))
        };
        let tool_name = req.tool_name.unwrap_or_default();
        *(self.open_by_tool)
            .entry((sid, tool_name.as_str().into()))
            .or_default() += 1;
        let input = req.input.unwrap_or(Value::Null);
        let summary = summary::input_summary(&tool_name, &input).into_boxed_str();
        // A file-backed session leaves the input in the file, like outputs (issue 8).
        let input_span = frame.origin.span.filter(|_| self.backing.is_some());
        let input = if input_span.is_some() {
            Value::Null
        } else {
            input
        };
        self.invocations.push(Box::new(Invocation {
            invocation_id: id.clone(),
            tool_name,
            tool_version: req.tool_version,
            input,
            input_span,
            summary,
            parallel_group_id: req.parallel_group_id,
            status: CallStatus::Requested,
            result: None,
            output_span: None,
            stream: ChunkBuffer::default(),
            requested_at: frame.envelope.timestamp,
            ended_at: None,
            request_line: frame.origin.line,
            result_line: None,
            delegation_chain: chain,
            parent,
            children: Vec::new(),
            item,
            findings: 0,
            session: sid,
            catalog_at: u32::try_from(self.publishes.len()).unwrap_or(u32::MAX),
            rev: 1,
            request_envelope: kept_envelope(frame.envelope),
            result_envelope: None,
        }));
        if let Some(p) = parent {
            self.invocations[p].children.push(idx);
            self.invocations[p].rev += 1;
        }
        self.index.insert(sid, &id, idx, &self.invocations);
        self.tick(|c| {
            c.invocations += 1;
            c.running += 1;
        });
        Applied {
            item: (item != usize::MAX).then_some(item),
            invocation: Some(idx),
            new_item: item != usize::MAX,
        }
    }

    fn apply_stream(&mut self, frame: Frame) -> Applied {
        let Body::Stream(s) = &frame.body else {
            return self.push_event(frame);
        };
        let id = s.invocation_id.clone().unwrap_or_default();
        let Some(idx) = self.index.get(self.sid(), &id, &self.invocations) else {
            if self.folded.contains(self.sid(), &id) {
                let len = s.chunk.as_ref().map_or(0, String::len);
                let (sid, seq) = (self.sid(), s.sequence);
                self.folded.chunk(sid, &id, seq, len, frame.origin.line);
                return Applied::default();
            }
            if id.is_empty() {
                // No usable id: the checker's `missing-field` (or `wrong-field-type`) says so;
                // that it matches no request follows from it.
                return self.push_event(frame);
            }
            let msg = format!(
                "stream chunk for invocation_id {}, which was never requested{}",
                Quoted(&id),
                self.elsewhere(self.sid(), &id)
            );
            let f = Finding::new(
                Level::Error,
                code::STREAM_WITHOUT_REQUEST,
                "SPEC 3.7",
                frame.origin.line,
                msg,
            );
            self.push_finding(f);
            return self.push_event(frame);
        };
        let line = frame.origin.line;
        let Body::Stream(s) = frame.body else {
            return Applied::default();
        };
        let inv = &mut self.invocations[idx];
        inv.stream.insert(Chunk {
            sequence: s.sequence,
            stream_type: s.stream_type.unwrap_or(StreamType::Stdout),
            text: s.chunk.unwrap_or_default(),
            line,
        });
        if inv.status == CallStatus::Requested {
            inv.status = CallStatus::Streaming;
        }
        inv.rev += 1;
        Applied {
            item: Some(inv.item),
            invocation: Some(idx),
            new_item: false,
        }
    }

    fn apply_result(&mut self, frame: Frame) -> Applied {
        let Body::Result(r) = &frame.body else {
            return self.push_event(frame);
        };
        let id = r.invocation_id.clone().unwrap_or_default();
        let tool = r.tool_name.clone().unwrap_or_default();
        let sid = self.sid();
        let line = frame.origin.line;
        let deferred = frame.origin.span.filter(|_| self.backing.is_some());
        // The reader skipped building the output, expecting it deferred; where it is kept after
        // all (an unknown id, a second result), it is read back from the file.
        let kept = deferred.is_some()
            && (self.index.get(sid, &id, &self.invocations))
                .is_some_and(|i| self.invocations[i].status.is_open());
        let mut frame = frame;
        if frame.origin.output_skipped && !kept {
            self.reload_output(&mut frame);
        }
        let idx = self.index.get(sid, &id, &self.invocations);
        if idx.is_none() && self.folded.contains(sid, &id) {
            return self.second_result(frame, id);
        }
        let Some(idx) = idx.or_else(|| self.orphan_result(sid, &id, &tool, line)) else {
            return self.push_event(frame);
        };
        if !self.invocations[idx].status.is_open() {
            return self.second_result(frame, id);
        }
        let Body::Result(r) = frame.body else {
            return Applied::default();
        };
        let status = CallStatus::from_result(r.status.as_ref());
        let (failure, cancelled) = (status.is_failure(), status == CallStatus::Cancelled);
        self.tick(|c| {
            c.running = c.running.saturating_sub(1);
            c.failed += u64::from(failure);
            c.cancelled += u64::from(cancelled);
        });
        let key = (sid, Box::from(self.invocations[idx].tool_name.as_str()));
        if let Some(n) = self.open_by_tool.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                self.open_by_tool.remove(&key);
            }
        }
        if let Some(id) = r.invocation_id.as_deref() {
            self.not_in_catalog_handled(
                sid,
                id,
                &r,
                frame.envelope.metadata.contains_key("anthropic"),
            );
        }
        let catalog_at = u32::try_from(self.publishes.len()).unwrap_or(u32::MAX);
        let inv = &mut self.invocations[idx];
        inv.catalog_at = catalog_at;
        inv.status = status;
        inv.result = Some(Box::new(r));
        if let (Some(span), Some(r)) = (deferred, inv.result.as_mut())
            && r.output.take().is_some()
        {
            inv.output_span = Some(span);
        }
        inv.ended_at = frame.envelope.timestamp;
        inv.result_envelope = kept_envelope(frame.envelope);
        inv.result_line = Some(line);
        if let Some(t) = &mut self.tally {
            t.call(inv);
        }
        inv.rev += 1;
        let item = inv.item;
        if self.findings_only {
            // The checks read of a finished call only its id, name and stream sequences.
            self.fold_away(idx);
            return Applied::default();
        }
        Applied {
            item: Some(item),
            invocation: Some(idx),
            new_item: false,
        }
    }

    /// A result whose `invocation_id` (`id`, empty when absent) no call of session `sid` has
    /// (SPEC 3.7), of tool `tool`: the call it answers, if any, and one finding per problem.
    ///
    /// - An open call of the same tool without a usable id (its request's `missing-field` says
    ///   so) is the one this result answers: it is folded into that call, with no finding.
    /// - A result without a usable id: its own `missing-field` (or `wrong-field-type`) is the
    ///   finding; no `result-without-request`.
    /// - Otherwise `result-without-request`, unless the importer that built the frame already
    ///   reported the same result (`tool-result-without-use`, on its line).
    ///
    /// When the session has exactly one open call, the result is probably its answer: that is
    /// noted in [`Self::orphans`], so the call is not also `request-never-answered` (the
    /// message does not say so: the call may still get its own result).
    fn orphan_result(&mut self, sid: u32, id: &str, tool: &str, line: u64) -> Option<usize> {
        if !id.is_empty() && !tool.is_empty() {
            let idless = (self.index.get(sid, "", &self.invocations)).filter(|&i| {
                let inv = &self.invocations[i];
                inv.status.is_open() && inv.tool_name == tool
            });
            if idless.is_some() {
                return idless;
            }
        }
        let only = !tool.is_empty()
            && (self.open_by_tool.get(&(sid, Box::from(tool)))).is_some_and(|&n| n == 1);
        if only {
            self.orphans.insert((sid, tool.into()), line);
        }
        let reported = || {
            (self.findings.iter().rev().take(64))
                .take_while(|f| f.line == line && f.input == self.input)
                .any(|f| {
                    f.code == code::TOOL_RESULT_WITHOUT_USE
                        && f.invocation_id.as_deref() == Some(id)
                })
        };
        if id.is_empty() || reported() {
            return None;
        }
        let msg = format!(
            "result for invocation_id {}, which was never requested{}",
            Quoted(id),
            self.elsewhere(sid, id)
        );
        let f = Finding::new(
            Level::Error,
            code::RESULT_WITHOUT_REQUEST,
            "SPEC 3.7",
            line,
            msg,
        );
        self.push_finding(f);
        None
    }

    /// Tool-use guide (SPEC 5, B19): a call of a tool its request's `tools` does not define,
    /// answered with an error result (`is_error`: the client handled it), is what the guide
    /// asks for; its `tool-not-in-catalog` error (SPEC 3.7) becomes an info saying so. Only for
    /// Anthropic conversations (`anthropic`): a RAWP master blocks such a call with
    /// `session.error` instead (`blocked-request-answered`).
    fn not_in_catalog_handled(
        &mut self,
        sid: u32,
        id: &str,
        r: &crate::protocol::ToolInvokeResult,
        anthropic: bool,
    ) {
        if !anthropic || r.status != Some(ResultStatus::Error) {
            return;
        }
        let Some(at) = self.finding_ids.get(id) else {
            return;
        };
        for &k in at {
            if let Some(f) = self.findings.get_mut(k)
                && f.session == Some(sid)
                && f.code == check::code::TOOL_NOT_IN_CATALOG
                && f.level == Level::Error
            {
                f.level = Level::Info;
                f.message.push_str(
                    "; answered with an error result, as the tool-use guide asks (the client \
                     handled it)",
                );
            }
        }
    }

    /// A result for a call that already has one: a `duplicate-result` finding, the frame kept
    /// as an event; not when the id was requested again (`Self::reused_ids`): then it answers
    /// that request, whose `duplicate-invocation-id` is the finding.
    fn second_result(&mut self, frame: Frame, id: String) -> Applied {
        let key = (self.sid(), Box::from(id.as_str()));
        if let Some(n) = self.reused_ids.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                self.reused_ids.remove(&key);
            }
            return self.push_event(frame);
        }
        let msg = format!(
            "second result for invocation_id {}; the first one is kept",
            Quoted(&id)
        );
        let line = frame.origin.line;
        let f = Finding::new(Level::Error, code::DUPLICATE_RESULT, "SPEC 3.7", line, msg)
            .for_invocation(id);
        self.push_finding(f);
        self.push_event(frame)
    }

    /// Puts back the real output of a result whose output the file reader skipped
    /// (`Origin::output_skipped`), read again from [`Session::backing`]; a string saying so when
    /// the file no longer gives it.
    fn reload_output(&self, frame: &mut Frame) {
        frame.origin.output_skipped = false;
        let Body::Result(r) = &mut frame.body else {
            return;
        };
        let again = match (&self.backing, frame.origin.span) {
            (Some(path), Some(span)) => self.open_file.read_span(path, span).ok(),
            _ => None,
        };
        let again = again.and_then(|t| crate::protocol::parse_line(frame.origin.line, &t).ok());
        r.output = match again.map(|f| f.body) {
            Some(Body::Result(a)) if a.invocation_id == r.invocation_id => a.output,
            _ => Some(Value::String(
                "(output not available: the file changed since it was read)".into(),
            )),
        };
    }

    fn apply_catalog(&mut self, frame: Frame) -> Applied {
        let derived = frame
            .envelope
            .metadata
            .get("rawpv_derived")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let (timestamp, line) = (frame.envelope.timestamp, frame.origin.line);
        let Body::Catalog(catalog) = &frame.body else {
            return self.push_event(frame);
        };
        let catalog = catalog.clone();
        let applied = self.push_event(frame);
        let mut tool_index = HashMap::with_capacity(catalog.tools.len());
        for (i, t) in catalog.tools.iter().enumerate() {
            tool_index.entry(t.name.clone()).or_insert(i);
        }
        let sid = self.sid();
        if self.findings_only
            && let Some(&last) = self.sessions.get(sid).publishes.last()
            && let Some(p) = self.publishes.get_mut(last as usize)
        {
            // The checks read only a session's current catalog (`check::At::publish`, and the
            // `output_type` rule as a result folds); a superseded one keeps its place, empty.
            p.catalog = CatalogPublish::default();
            p.tool_index = HashMap::new();
        }
        let at = u32::try_from(self.publishes.len()).unwrap_or(u32::MAX);
        self.sessions.get_mut(sid).publishes.push(at);
        self.publishes.push(Publish {
            catalog,
            timestamp,
            line,
            item: applied.item.unwrap_or(0),
            derived,
            session: sid,
            tool_index,
        });
        applied
    }

    fn apply_generic(&mut self, frame: Frame) -> Applied {
        let kind = match frame.frame_type {
            FrameType::ControlPromptRequest => Some((MessageKind::Prompt, true)),
            FrameType::AgentTextDelta => Some((MessageKind::AgentText, false)),
            FrameType::AgentTextDone => Some((MessageKind::AgentText, true)),
            FrameType::AgentThinkingDelta => Some((MessageKind::Thinking, false)),
            FrameType::AgentThinkingDone => Some((MessageKind::Thinking, true)),
            _ => None,
        };
        let Some((kind, done)) = kind else {
            return self.push_event(frame);
        };
        let redacted = self.redacted_field(&frame);
        if self.findings_only {
            return Applied::default();
        }
        let Body::Generic(payload) = &frame.body else {
            return self.push_event(frame);
        };
        let text = message_text(payload);
        let chain = frame.envelope.delegation_chain();
        // Deltas and the closing `.done` continue the latest open message of the same kind and agent.
        if kind != MessageKind::Prompt {
            let sid = self.sid();
            let open = self.open_messages.iter().rposition(|&i| {
                self.sessions.of_item(i) == sid
                    && matches!(&self.items[i], Item::Message(m) if m.kind == kind && m.delegation_chain == chain)
            });
            if let Some(k) = open {
                let pos = self.open_messages[k];
                if let Item::Message(m) = &mut self.items[pos] {
                    if done && !text.is_empty() && payload.get("text").is_some() {
                        // `.done` carrying the full text replaces the accumulated deltas.
                        m.text = text;
                    } else {
                        m.text.push_str(&text);
                    }
                    m.done = done;
                    m.redacted |= redacted;
                    m.last_line = m.last_line.max(frame.origin.line);
                    if done {
                        // Deltas grew the text by doubling; a closed message keeps its length.
                        m.text.shrink_to_fit();
                    }
                }
                if done {
                    self.open_messages.remove(k);
                }
                return Applied {
                    item: Some(pos),
                    invocation: None,
                    new_item: false,
                };
            }
        }
        let mut metadata = frame.envelope.metadata;
        shrink_map(&mut metadata);
        let item = self.push_item(Item::Message(Box::new(Message {
            kind,
            text,
            done,
            redacted,
            timestamp: frame.envelope.timestamp,
            line: frame.origin.line,
            last_line: frame.origin.line,
            delegation_chain: chain,
            metadata,
        })));
        if !done {
            self.open_messages.push(item);
        }
        Applied {
            item: Some(item),
            invocation: None,
            new_item: true,
        }
    }
}

/// The SPEC section whose table a frame type's payload fields come from.
fn field_spec(t: &FrameType) -> &'static str {
    match t {
        FrameType::ToolInvokeRequest => "SPEC 3.1",
        FrameType::ToolInvokeResult => "SPEC 3.2",
        FrameType::ToolInvokeStream => "SPEC 3.3",
        FrameType::ToolCatalogPublish => "SPEC 3.5",
        _ => "SPEC 3",
    }
}

/// Gives back the spare capacity of an envelope's maps (a parsed frame's top-level map keeps the
/// room of the keys moved out of it: about 1 KB a frame).
fn shrink_envelope(e: &mut Envelope) {
    shrink_map(&mut e.metadata);
    shrink_map(&mut e.extra);
}

/// Reallocates `m` at its length (`serde_json::Map` has no `shrink_to_fit`); an empty map
/// holds no allocation.
fn shrink_map(m: &mut Map<String, Value>) {
    *m = std::mem::take(m).into_iter().collect();
}

/// `e`, boxed, when it carries something an invocation does not keep elsewhere: an `id`,
/// metadata other than `delegation_chain`, or unknown fields. `None` for a plain envelope.
fn kept_envelope(mut e: Envelope) -> Option<Box<Envelope>> {
    let plain =
        e.id.is_none() && e.extra.is_empty() && e.metadata.keys().all(|k| k == "delegation_chain");
    if plain {
        return None;
    }
    shrink_envelope(&mut e);
    Some(Box::new(e))
}

/// The text of a prompt / text / thinking payload: `delta`, `text`, `content`, `prompt` or
/// `thinking`, whichever is a string (SPEC 3.6 bodies are not public; \[ours\]).
pub fn message_text(payload: &Map<String, Value>) -> String {
    for k in ["delta", "text", "content", "prompt", "thinking"] {
        if let Some(Value::String(s)) = payload.get(k) {
            return s.clone();
        }
    }
    String::new()
}

/// The key of a line in `Session::finding_lines`: the line (1-based) with its input's index in
/// the top 16 bits (no file reaches 2^48 lines).
fn line_key(input: u16, line: u64) -> u64 {
    line | (u64::from(input) << 48)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inv(id: &str) -> Box<Invocation> {
        let mut s = Session::new();
        let frame = crate::protocol::parse_line(
            1,
            &format!(
                r#"{{"type":"tool.invoke.request","payload":{{"invocation_id":"{id}","tool_name":"T","input":{{}}}}}}"#
            ),
        )
        .expect("frame");
        s.apply_frame(frame);
        s.invocations.remove(0)
    }

    /// Ids whose hashes collide are told apart by the id kept in the invocation.
    #[test]
    fn id_index_keeps_colliding_ids_apart() {
        let invs = vec![inv("a"), inv("b")];
        let mut index = IdIndex::default();
        index.insert(0, "a", 0, &invs);
        // Make "b" collide with "a": its hash slot already points at "a".
        index.by_hash.insert(IdIndex::hash(0, "b"), 0);
        index.insert(0, "b", 1, &invs);
        assert_eq!(index.get(0, "a", &invs), Some(0));
        assert_eq!(index.get(0, "b", &invs), Some(1));
        assert_eq!(index.get(0, "c", &invs), None);
        assert_eq!(index.get(1, "a", &invs), None);
        assert_eq!(index.overflow.len(), 1);
    }
}
