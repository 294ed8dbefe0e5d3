//! Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`) → RAWP frames
//! (SPEC 4; corpus README "Format quirks"): the one decoder, for saved files, followed files,
//! stdin and stream-json alike (issue 16).
//!
//! Who calls it: `crate::import` (`decoder_for(Format::ClaudeCode)`, `load_bytes`, `load_path`),
//! `crate::source::file` (saved files, with byte spans and the file's path, so it also reads the
//! session's subagent files) and `super::stream_json` (one record at a time).
//!
//! How, record by record as the lines arrive (nothing waits for the end of the input):
//! 1. A compact key is kept per record (a 64-bit hash of its `uuid`, its chain); the record
//!    itself is mapped to frames at once ([`super::cc_map::Mapper`]) and dropped. Frames of a
//!    saved file carry the record's byte span (`Origin::span`), so a file-backed session keeps
//!    neither inputs nor outputs: [`reparse`] reads them again from the record when shown.
//! 2. `parentUuid` order, incrementally: a record whose parent has not been seen yet waits for it
//!    (at most [`MAX_WAITING`] records wait; past that, and at the end, the oldest goes as a
//!    root; the first record never waits, nor the children of a line too broken to parse whose
//!    text still shows its `uuid`). Records repeating a `uuid` already mapped (resumed sessions, progress copies) are
//!    skipped and counted (an info finding); records carrying another `sessionId` than the file's
//!    (a resumed session's replay of its predecessor) are marked `claude_code.replayed` and
//!    counted, and their frames belong to the file's session (`session_id` = the file's, the
//!    record's own in `claude_code.replayed_from`): a transcript, its subagent files and what it
//!    replays are one session (SPEC §6, issue 18). Only one input is read at a time, so a
//!    replayed record is never counted twice; reading the predecessor's file together with it
//!    (issue 24) would drop the replays by their `uuid`.
//! 3. Subagents, in all three layouts: inline `isSidechain` records and `agent_progress` copies
//!    are mapped as they arrive, under the Task/Agent call that started them (progress link,
//!    else the Task prompt equal to the run's first prompt); subagent files (found beside a saved
//!    file when its first record arrives) are indexed as byte spans and placed just before the
//!    record holding their Task's `tool_result` (linked by prompt or `toolUseResult.agentId`);
//!    a subagent file whose first record's parent is a main-file record (a compaction subagent)
//!    is placed right after that record. Every subagent frame has
//!    `metadata.delegation_chain` = parent chain + `{agent_id, invocation_id: <Task id>}`.
//! 4. Forks: a record with two or more children that continue the conversation (not progress,
//!    not the parallel-tool results of one message) is a fork point. Each further branch
//!    (2, 3, …) starts with a `x-claude-code.fork` frame of facts that stay true as the stream
//!    goes on (`{parentUuid, parent_line, first_line, branch, line}`; branch 2's is the fork
//!    point's one row, later ones quiet marks), and a main-agent record whose parent was mapped
//!    before the latest mark gets a quiet `{resume: true, parent_line, line}` mark (the
//!    conversation went back to an earlier branch). Readers count branches and find the main
//!    line from these marks (`crate::session::forks`). The end of input reports each fork point
//!    as an info finding (`fork`) naming its main line, the branch leading to the session's
//!    last record. See [`ForkTracker`].
//! 5. A derived `tool.catalog.publish` (metadata `rawpv_derived: true`) goes out before the
//!    first call of each new tool name; usage / turn end of an API message go out when the next
//!    user or assistant record of the same agent arrives (or at the end).
//!
//! Size (about 1,250 lines): ordering, placement, forks and usage timing share one state (the
//! compact keys, the runs, the pending usage) updated record by record, so they stay together;
//! the mapping of a record to frames is `cc_map.rs`, tool outputs `cc_output.rs`, the session's
//! other files `cc_files.rs`.
//!
//! Invariants: O(records) apart from hashing; memory is the compact keys plus the records that
//! wait (bounded) and the subagent files' spans; never panics; bad lines are
//! `Decoded::Malformed` with their line number; nothing is dropped silently (duplicates and
//! replays are counted in info findings).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::cc_files::{read_at_most_its_size, subagent_files};
use super::cc_map::{Mapper, RecCtx, info};
use super::{Decoded, Decoder, at};
use crate::finding::code;
use crate::protocol::rules::known_category;
use crate::protocol::{
    Body, ByteSpan, CatalogPublish, CatalogTool, Delegation, FrameType, ParseError, ParseErrorKind,
    Timestamp,
};

/// Records that may wait for a parent not seen yet; past it the oldest is mapped as a root.
pub const MAX_WAITING: usize = 256;
/// At most this many frames wait for a first timestamp; past it they go out without one.
const MAX_HELD: usize = 256;
/// Subagents nested deeper than this are placed at the end, flat (a planted chain of Tasks).
const MAX_NESTING: usize = 32;

/// The compact key of a `uuid` (0 is "none").
fn key(s: &str) -> u64 {
    let mut h = DefaultHasher::new();
    s.hash(&mut h);
    h.finish().max(1)
}

fn str_of<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

fn blocks(v: &Value) -> &[Value] {
    at(v, &["message", "content"])
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Ids of the `tool_use` (`want = "tool_use"`, field `id`) or `tool_result` blocks of `v`.
fn block_ids<'a>(v: &'a Value, want: &'static str) -> impl Iterator<Item = &'a str> + use<'a> {
    let k = if want == "tool_use" {
        "id"
    } else {
        "tool_use_id"
    };
    blocks(v)
        .iter()
        .filter(move |b| str_of(b, "type") == Some(want))
        .filter_map(move |b| str_of(b, k))
}

/// The first user text of a record (a subagent run's prompt).
fn user_text(v: &Value) -> Option<&str> {
    if str_of(v, "type") != Some("user") {
        return None;
    }
    match at(v, &["message", "content"]) {
        Some(Value::String(s)) => Some(s),
        Some(Value::Array(b)) => b
            .iter()
            .find(|b| str_of(b, "type") == Some("text"))
            .and_then(|b| str_of(b, "text")),
        _ => None,
    }
}

/// A record as it arrives, unwrapped: an `agent_progress` record carries a subagent message
/// (`data.message`), a stream-json message names its Task (`parent_tool_use_id`).
struct Unwrapped<'a> {
    rec: &'a Value,
    sidechain: bool,
    agent: Option<&'a str>,
    link: Option<&'a str>,
}

fn unwrap(v: &Value) -> Unwrapped<'_> {
    let mut u = Unwrapped {
        rec: v,
        sidechain: v.get("isSidechain").and_then(Value::as_bool) == Some(true),
        agent: str_of(v, "agentId"),
        link: str_of(v, "parent_tool_use_id"),
    };
    if u.link.is_some() {
        u.sidechain = true;
        u.agent = u.link;
    }
    if str_of(v, "type") == Some("progress")
        && let Some(data) = v.get("data")
        && str_of(data, "type") == Some("agent_progress")
        && let Some(msg) = data.get("message").filter(|m| m.is_object())
    {
        u = Unwrapped {
            rec: msg,
            sidechain: true,
            agent: str_of(data, "agentId"),
            link: str_of(v, "parentToolUseID"),
        };
    }
    u
}

/// Where a record of the opened input is: whether it may wait for its parent (not in
/// stream-json), its 1-based line and its byte span in a saved file.
#[derive(Debug, Clone, Copy)]
struct At {
    may_wait: bool,
    line: u64,
    span: Option<ByteSpan>,
}

/// Where a record that waits is.
#[derive(Debug, Clone)]
enum Src {
    /// The parsed record (a main-file record waiting for its parent; at most [`MAX_WAITING`]
    /// wait, so keeping the tree rather than the text, to be parsed again, costs a bounded
    /// amount: parsing each of them twice was 16 % of `check` on a transcript of excerpts).
    Value(Box<Value>),
    /// A byte span of a subagent file (`file` indexes `ClaudeCodeDecoder::files`).
    Span { offset: u64, len: u64 },
}

/// A record not mapped yet: its compact key and where its text is.
#[derive(Debug, Clone)]
struct Held {
    src: Src,
    file: usize,
    line: u64,
    uuid: u64,
    parent: u64,
    /// Its byte span in the opened file (frames carry it).
    span: Option<ByteSpan>,
}

/// What waits to be mapped after the record being mapped.
#[derive(Debug, Clone)]
enum Work {
    After(u64),
    Place(Held),
}

/// A subagent run.
#[derive(Debug, Clone)]
struct Group {
    agent_id: String,
    /// Index into `chains` once its first record is mapped (or its place is decided).
    chain: Option<usize>,
    /// The Task/Agent `tool_use` id that started it.
    link: Option<String>,
    /// First user text, while it is not linked.
    prompt: Option<String>,
    /// Parent of its first record outside the run (a compaction subagent's place).
    anchor: u64,
    /// Records of a subagent file, not mapped yet (in file order).
    held: Vec<Held>,
}

/// The usage of an API message, held until the next record of its agent.
#[derive(Debug, Clone)]
struct PendingUsage {
    rec: Value,
    line: u64,
    file: usize,
    span: Option<ByteSpan>,
}

/// Children of each record that continue the conversation, for fork points (see module docs).
#[derive(Debug, Clone, Default)]
struct ForkTracker {
    /// Parent uuid → (branches seen, line of the parent, message id of the parent, line of the
    /// first branch's first record, uuid of that record).
    children: HashMap<u64, (u32, u64, u64, u64, u64)>,
    /// Uuid → (line, message id key) of mapped user/assistant records (possible fork points).
    records: HashMap<u64, (u64, u64)>,
    /// Fork points: parent line → branches, for the end-of-input findings.
    forks: BTreeMap<u64, u32>,
    /// First record of each branch → (its fork point's line, branch number from 1).
    heads: HashMap<u64, (u64, u32)>,
    /// Main-agent records: uuid → (parent uuid, line), to find the main line at the end.
    up: HashMap<u64, (u64, u64)>,
    /// The segment (count of fork marks so far) each main-agent record was mapped in, for the
    /// records mapped after the first fork (absent: 0).
    seg_of: HashMap<u64, u32>,
    seg: u32,
    /// The latest main-agent record (the session's last record, at the end).
    last_main: u64,
}

/// The one Claude Code decoder (see the module docs).
#[derive(Debug, Clone)]
pub struct ClaudeCodeDecoder {
    pub(crate) mapper: Mapper,
    /// Publish derived catalogs (off when a real catalog was published, e.g. stream-json init).
    pub(crate) derive_catalog: bool,
    /// Hold frames for a first timestamp (off for stream-json, which has none).
    pub(crate) hold_for_timestamp: bool,
    /// Tool names used so far, in order of first use (and as a set).
    tools: Vec<String>,
    tool_set: HashSet<String>,
    held_frames: Vec<Decoded>,
    /// The opened file, for its subagent files (saved files only).
    path: Option<PathBuf>,
    looked_for_subagents: bool,
    /// The file is followed (`-f`): subagent files written after the first record are looked
    /// for again when a Task result names an agent not seen yet.
    follow: bool,
    /// The session id that found the 2.0.x subagent files; the subagent files indexed so far.
    session_id: Option<String>,
    indexed: HashSet<PathBuf>,
    /// Findings about subagent files (a line not read, a file not read), given out with the
    /// next items: their records would otherwise be lost silently (attack 5).
    file_findings: Vec<Decoded>,
    /// File names and open handles; index 0 is the opened input.
    files: Vec<(String, Option<Arc<std::fs::File>>)>,
    /// The opened file's session (its name), for resumed-session replays.
    file_session: Option<String>,
    /// Uuids mapped (or skipped as duplicates), with the chain of their record.
    placed: HashMap<u64, usize>,
    chains: Vec<Vec<Delegation>>,
    /// Chain of the record that issued each `tool_use`.
    use_chain: HashMap<String, usize>,
    /// Parent uuid → records waiting for it; `waiting_lines`: line → parent, oldest first.
    waiting: HashMap<u64, Vec<Held>>,
    waiting_lines: BTreeMap<u64, u64>,
    groups: Vec<Group>,
    by_agent: HashMap<String, usize>,
    uuid_group: HashMap<u64, usize>,
    /// Task/Agent calls not linked to a run yet: (id, prompt).
    tasks: Vec<(String, Option<String>)>,
    /// Task id → runs with held records to map before its `tool_result`.
    by_task: HashMap<String, Vec<usize>>,
    /// Task id → the runs linked to it (their usage goes out before its result).
    linked: HashMap<String, Vec<usize>>,
    /// Main-file uuid → runs to map right after it (compaction subagents).
    anchored: HashMap<u64, Vec<usize>>,
    /// Chain → the usage of its latest API message; message ids whose usage went out.
    pending: HashMap<usize, PendingUsage>,
    usage_done: HashSet<u64>,
    forks: ForkTracker,
    /// Records to map once the one being mapped is done ([`ClaudeCodeDecoder::after`]).
    work: Vec<Work>,
    draining: bool,
    dups: u64,
    replayed: u64,
    nesting: usize,
}

impl Default for ClaudeCodeDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl ClaudeCodeDecoder {
    pub fn new() -> Self {
        Self {
            mapper: Mapper::new(),
            derive_catalog: true,
            hold_for_timestamp: true,
            tools: Vec::new(),
            tool_set: HashSet::new(),
            held_frames: Vec::new(),
            path: None,
            looked_for_subagents: false,
            follow: false,
            session_id: None,
            indexed: HashSet::new(),
            file_findings: Vec::new(),
            files: vec![(String::new(), None)],
            file_session: None,
            placed: HashMap::new(),
            chains: vec![Vec::new()],
            use_chain: HashMap::new(),
            waiting: HashMap::new(),
            waiting_lines: BTreeMap::new(),
            groups: Vec::new(),
            by_agent: HashMap::new(),
            uuid_group: HashMap::new(),
            tasks: Vec::new(),
            by_task: HashMap::new(),
            linked: HashMap::new(),
            anchored: HashMap::new(),
            pending: HashMap::new(),
            usage_done: HashSet::new(),
            forks: ForkTracker::default(),
            work: Vec::new(),
            draining: false,
            dups: 0,
            replayed: 0,
            nesting: 0,
        }
    }

    /// A decoder for the saved file at `path`: its subagent files are read (as spans) when its
    /// first record arrives, and records carrying another session's id than the file's name are
    /// marked as replayed.
    pub fn for_file(path: &Path) -> Self {
        let mut d = Self::new();
        d.path = Some(path.to_owned());
        d.file_session = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| s.len() == 36 && s.bytes().filter(|&b| b == b'-').count() == 4);
        d
    }

    /// [`ClaudeCodeDecoder::for_file`] for a file that is still being written (`-f`): a Task
    /// result naming an agent whose file was not there yet looks for subagent files again.
    pub fn for_followed_file(path: &Path) -> Self {
        Self {
            follow: true,
            ..Self::for_file(path)
        }
    }

    /// Feeds one line of the opened file, `span` its bytes there (frames carry it).
    pub fn line_at(
        &mut self,
        line: u64,
        span: Option<ByteSpan>,
        text: &str,
        out: &mut Vec<Decoded>,
    ) {
        if text.trim().is_empty() {
            if !self.file_findings.is_empty() {
                out.append(&mut self.file_findings);
            }
            return;
        }
        match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::Object(_)) => self.record_at(line, span, v, out),
            Ok(_) => self
                .file_findings_then(out)
                .push(Decoded::Malformed(ParseError::new(
                    line,
                    ParseErrorKind::NotObject,
                    text,
                ))),
            Err(e) => {
                self.file_findings_then(out)
                    .push(Decoded::Malformed(ParseError::new(
                        line,
                        ParseErrorKind::Json(e.to_string()),
                        text,
                    )));
                // Its children must not wait for it: take its uuid from the text if it shows.
                if let Some(u) = uuid_in(text) {
                    self.placed.entry(key(u)).or_insert(0);
                    self.after(key(u), out);
                }
            }
        }
    }

    /// The file's findings (read when its first record arrived) go out first.
    fn file_findings_then<'o>(&mut self, out: &'o mut Vec<Decoded>) -> &'o mut Vec<Decoded> {
        if !self.file_findings.is_empty() {
            out.append(&mut self.file_findings);
        }
        out
    }

    /// A line of the opened file that parsed as the JSON object `v`.
    fn record_at(&mut self, line: u64, span: Option<ByteSpan>, v: Value, out: &mut Vec<Decoded>) {
        self.file_findings_then(out);
        // At the first record naming its session (a 2.0.x agent file beside it is
        // recognised by that id; `summary` and snapshot records come first and name none).
        if !self.looked_for_subagents && str_of(&v, "sessionId").is_some() {
            self.looked_for_subagents = true;
            self.session_id = str_of(&v, "sessionId").map(str::to_owned);
            self.read_subagent_files(str_of(&v, "sessionId"));
        }
        let at = At {
            may_wait: true,
            line,
            span,
        };
        self.arrive(std::borrow::Cow::Owned(v), at, out);
    }

    /// Maps one parsed record (`line` 1-based) of a stream (stream-json): no span, no waiting.
    pub fn record(&mut self, v: &Value, line: u64, out: &mut Vec<Decoded>) {
        let at = At {
            may_wait: false,
            line,
            span: None,
        };
        self.arrive(std::borrow::Cow::Borrowed(v), at, out);
    }

    /// A record of the opened input arrives. Until a record with a timestamp arrives, frames are
    /// held back so they can be given that first timestamp.
    fn arrive(&mut self, v: std::borrow::Cow<'_, Value>, at: At, out: &mut Vec<Decoded>) {
        if !self.hold_for_timestamp || self.mapper.last_timestamp().is_some() {
            return self.arrive_now(v, at, out);
        }
        let mut held = std::mem::take(&mut self.held_frames);
        self.arrive_now(v, at, &mut held);
        match self.mapper.last_timestamp() {
            Some(ts) => {
                for d in &mut held {
                    if let Decoded::Frame(f) = d {
                        f.envelope.timestamp.get_or_insert(ts);
                    }
                }
                out.append(&mut held);
            }
            None if held.len() > MAX_HELD => {
                self.hold_for_timestamp = false;
                out.append(&mut held);
            }
            None => self.held_frames = held,
        }
    }

    fn arrive_now(&mut self, v: std::borrow::Cow<'_, Value>, at: At, out: &mut Vec<Decoded>) {
        let At {
            may_wait,
            line,
            span,
        } = at;
        let u = unwrap(&v);
        let uuid = str_of(u.rec, "uuid").map_or(0, key);
        if !std::ptr::eq(u.rec, v.as_ref())
            && let Some(w) = str_of(&v, "uuid").map(key)
            && !self.placed.contains_key(&w)
        {
            // The progress record wrapping a subagent message: later records may name it.
            self.placed.insert(w, 0);
            self.after(w, out);
        }
        if uuid != 0 && self.placed.contains_key(&uuid) {
            self.dups += 1;
            return;
        }
        if u.sidechain {
            let g = self.group_for(u.rec, u.agent, u.link, uuid);
            let new = self.groups[g].chain.is_none();
            let chain = self.start_group(g);
            if new && let Some(parent) = self.parent_chain(g) {
                // The spawning agent's message ends before the run's first record.
                self.flush(parent, out);
            }
            self.place(u.rec, line, 0, span, chain, out);
            return;
        }
        let parent = str_of(u.rec, "parentUuid").map_or(0, key);
        // A record waits for a parent not seen yet, except the first one (an excerpt or a
        // resumed session begins with a dangling parent); stream-json never waits.
        if parent != 0 && may_wait && !self.placed.is_empty() && !self.placed.contains_key(&parent)
        {
            self.waiting.entry(parent).or_default().push(Held {
                src: Src::Value(Box::new(v.into_owned())),
                file: 0,
                line,
                uuid,
                parent,
                span,
            });
            self.waiting_lines.insert(line, parent);
            if self.waiting_lines.len() > MAX_WAITING {
                self.release_oldest(out);
            }
            return;
        }
        self.place(u.rec, line, 0, span, 0, out);
    }

    /// The oldest waiting record goes as a root (its parent is not in this input, or far on).
    fn release_oldest(&mut self, out: &mut Vec<Decoded>) {
        let Some((&line, &parent)) = self.waiting_lines.iter().next() else {
            return;
        };
        self.waiting_lines.remove(&line);
        let Some(list) = self.waiting.get_mut(&parent) else {
            return;
        };
        let Some(pos) = list.iter().position(|h| h.line == line) else {
            return;
        };
        let h = list.remove(pos);
        if list.is_empty() {
            self.waiting.remove(&parent);
        }
        self.place_held(&h, 0, out);
    }

    /// The run a sidechain record belongs to (created on its first record).
    fn group_for(
        &mut self,
        rec: &Value,
        agent: Option<&str>,
        link: Option<&str>,
        uuid: u64,
    ) -> usize {
        let existing = match agent {
            Some(a) => self.by_agent.get(a).copied(),
            None => str_of(rec, "parentUuid").and_then(|p| self.uuid_group.get(&key(p)).copied()),
        };
        let g = existing.unwrap_or_else(|| {
            let agent_id = agent.map_or_else(
                || {
                    let u = str_of(rec, "uuid").unwrap_or("");
                    format!("sidechain-{}", u.get(..8).unwrap_or(u))
                },
                str::to_owned,
            );
            self.groups.push(Group {
                agent_id: agent_id.clone(),
                chain: None,
                link: None,
                prompt: user_text(rec).map(str::to_owned),
                anchor: 0,
                held: Vec::new(),
            });
            let g = self.groups.len() - 1;
            self.by_agent.insert(agent_id, g);
            g
        });
        if uuid != 0 {
            self.uuid_group.insert(uuid, g);
        }
        if self.groups[g].link.is_none()
            && let Some(l) = link
        {
            self.link(g, l.to_owned());
        }
        g
    }

    /// Links run `g` to Task call `id` (its held records, if any, go before the call's result).
    fn link(&mut self, g: usize, id: String) {
        self.tasks.retain(|(t, _)| *t != id);
        self.linked.entry(id.clone()).or_default().push(g);
        if !self.groups[g].held.is_empty() {
            self.by_task.entry(id.clone()).or_default().push(g);
        }
        self.groups[g].prompt = None;
        self.groups[g].link = Some(id);
    }

    /// The chain of run `g`, decided on first use: linked by then, else by the prompt of an
    /// earlier Task call.
    fn start_group(&mut self, g: usize) -> usize {
        if let Some(c) = self.groups[g].chain {
            return c;
        }
        if self.groups[g].link.is_none()
            && let Some(p) = self.groups[g].prompt.clone()
            && let Some(i) = self
                .tasks
                .iter()
                .position(|(_, tp)| tp.as_deref().is_some_and(|tp| tp.trim() == p.trim()))
        {
            let id = self.tasks[i].0.clone();
            self.link(g, id);
        }
        let link = self.groups[g].link.clone();
        let parent = link
            .as_deref()
            .and_then(|l| self.use_chain.get(l))
            .copied()
            .unwrap_or(0);
        let mut chain = self.chains[parent].clone();
        chain.push(Delegation {
            agent_id: self.groups[g].agent_id.clone(),
            invocation_id: link.unwrap_or_default(),
        });
        self.chains.push(chain);
        let c = self.chains.len() - 1;
        self.groups[g].chain = Some(c);
        c
    }

    /// Maps the held records of run `g` (a subagent file), in `parentUuid` order.
    fn place_group(&mut self, g: usize, out: &mut Vec<Decoded>) {
        let held = std::mem::take(&mut self.groups[g].held);
        if held.is_empty() {
            return;
        }
        let chain = self.start_group(g);
        if self.nesting >= MAX_NESTING {
            // Put back: mapped at the end, flat.
            self.groups[g].held = held;
            return;
        }
        // The spawning agent's message ends before the run (its usage first), and the run's
        // last message ends with it.
        if let Some(parent) = self.parent_chain(g) {
            self.flush(parent, out);
        }
        self.nesting += 1;
        for k in graph_order(&held) {
            self.place_held(&held[k], chain, out);
        }
        self.nesting -= 1;
        self.flush(chain, out);
    }

    /// The chain of the agent that started run `g` (the main agent when not linked).
    fn parent_chain(&self, g: usize) -> Option<usize> {
        let c = self.groups[g].chain?;
        let depth = self.chains[c].len().checked_sub(1)?;
        let link = self.groups[g].link.as_deref();
        Some(
            link.and_then(|l| self.use_chain.get(l))
                .copied()
                .unwrap_or(0),
        )
        .filter(|&p| self.chains[p].len() == depth)
    }

    /// Maps a held record on `chain` (a subagent file's is read and parsed again). A subagent file that changed since it
    /// was indexed (the record no longer parses) is a malformed line, not a lost one.
    fn place_held(&mut self, held: &Held, chain: usize, out: &mut Vec<Decoded>) {
        let changed = |why: String| {
            Decoded::Malformed(ParseError::new(held.line, ParseErrorKind::Json(why), ""))
        };
        let parsed;
        let record = match &held.src {
            Src::Value(v) => &**v,
            Src::Span { offset, len } => {
                let text = match self.read_span(held.file, *offset, *len) {
                    Ok(t) => t,
                    Err(e) => {
                        let name = &self.files[held.file].0;
                        out.push(changed(format!("{name} changed while it was read: {e}")));
                        return;
                    }
                };
                let Ok(v) = serde_json::from_str::<Value>(&text) else {
                    let name = &self.files[held.file].0;
                    out.push(changed(format!("{name} changed while it was read")));
                    return;
                };
                parsed = v;
                &parsed
            }
        };
        let inner = unwrap(record);
        if held.uuid != 0 && self.placed.contains_key(&held.uuid) {
            self.dups += 1;
            return;
        }
        let chain = if inner.sidechain && held.file == 0 {
            let g = self.group_for(inner.rec, inner.agent, inner.link, held.uuid);
            self.start_group(g)
        } else {
            chain
        };
        self.place(inner.rec, held.line, held.file, held.span, chain, out);
    }

    fn read_span(&self, file: usize, offset: u64, len: u64) -> std::io::Result<String> {
        let f = self.files[file]
            .1
            .as_ref()
            .ok_or_else(|| std::io::Error::other("not open"))?;
        let mut buf = vec![0u8; usize::try_from(len).map_err(std::io::Error::other)?];
        super::cc_files::read_exact_at(f, &mut buf, offset)?;
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }

    /// Maps one record on `chain`, with what comes before it (subagent runs of the Task results
    /// it holds, the usage of its agent's previous message) and after it (records waiting for it,
    /// runs anchored at it).
    fn place(
        &mut self,
        rec: &Value,
        line: u64,
        file: usize,
        span: Option<ByteSpan>,
        chain: usize,
        out: &mut Vec<Decoded>,
    ) {
        let uuid = str_of(rec, "uuid").map_or(0, key);
        if uuid != 0 {
            if self.placed.contains_key(&uuid) {
                self.dups += 1;
                return;
            }
            self.placed.insert(uuid, chain);
        }
        let rtype = str_of(rec, "type");
        // A followed file: the subagent of this Task result may have written its file after the
        // first record (attack 5: `-f` never showed a subagent's calls).
        if self.follow
            && let Some(a) = at(rec, &["toolUseResult", "agentId"]).and_then(Value::as_str)
            && !self.by_agent.contains_key(a)
        {
            let sid = self.session_id.clone();
            self.read_subagent_files(sid.as_deref());
        }
        // Subagent runs of the Task calls this record answers.
        for id in block_ids(rec, "tool_result") {
            if let Some(a) = at(rec, &["toolUseResult", "agentId"]).and_then(Value::as_str)
                && let Some(&g) = self.by_agent.get(a)
                && self.groups[g].link.is_none()
            {
                self.link(g, id.to_owned());
            }
            for g in self.by_task.remove(id).unwrap_or_default() {
                self.place_group(g, out);
            }
            // The run is over: its last message's usage and turn end go before the result.
            for g in self.linked.remove(id).unwrap_or_default() {
                if let Some(c) = self.groups[g].chain {
                    self.flush(c, out);
                }
            }
        }
        // Usage of the agent's previous API message.
        let msg_id = at(rec, &["message", "id"]).and_then(Value::as_str).map(key);
        // (Not at a tool result: in 2.1.x a message's later records, with its final usage, come
        // after the results of its first calls.)
        let starts_other = match rtype {
            Some("assistant") => self
                .pending
                .get(&chain)
                .is_some_and(|p| rec_msg_key(&p.rec) != msg_id),
            Some("user") => block_ids(rec, "tool_result").next().is_none(),
            _ => false,
        };
        if starts_other {
            self.flush(chain, out);
        }
        if self.derive_catalog {
            self.publish_new_tools(rec, line, out);
            self.publish_delta(rec, line, out);
        }
        for id in block_ids(rec, "tool_use") {
            self.use_chain.insert(id.to_owned(), chain);
        }
        let fork = self.forks.child(rec, uuid, line, msg_id);
        if let Some(at) = fork {
            self.fork_row(rec, line, chain, Some(at), out);
        }
        if chain == 0 && self.forks.main_record(rec, uuid, line, fork.is_some()) {
            self.fork_row(rec, line, chain, None, out);
        }
        let first = out.len();
        let fname = (file != 0).then(|| self.files[file].0.clone());
        let ctx = RecCtx {
            line,
            chain: &self.chains[chain],
            file: fname.as_deref(),
            last_of_message: false,
            in_file: span.is_some(),
        };
        self.mapper.record(rec, &ctx, out);
        self.missing_subagents(rec, line, out);
        let replayed = self
            .file_session
            .as_deref()
            .zip(str_of(rec, "sessionId"))
            .is_some_and(|(f, s)| f != s);
        if replayed {
            self.replayed += 1;
        }
        for d in &mut out[first..] {
            if let Decoded::Frame(f) = d {
                f.origin.span = span;
                if replayed {
                    // The file is one session (SPEC §6, issue 18): a replayed record belongs to
                    // the resumed session that repeats it; the session it came from is kept.
                    let from =
                        std::mem::replace(&mut f.envelope.session_id, self.file_session.clone());
                    if let Some(Value::Object(cc)) = f.envelope.metadata.get_mut("claude_code") {
                        cc.insert("replayed".into(), Value::Bool(true));
                        if let Some(from) = from {
                            cc.insert("replayed_from".into(), Value::String(from));
                        }
                    }
                }
            }
        }
        // Task calls: runs of subagent files whose prompt is this call's.
        for b in blocks(rec) {
            if str_of(b, "type") == Some("tool_use")
                && matches!(str_of(b, "name"), Some("Task" | "Agent"))
                && let Some(id) = str_of(b, "id")
            {
                let prompt = at(b, &["input", "prompt"]).and_then(Value::as_str);
                let g = self.groups.iter().position(|g| {
                    g.link.is_none()
                        && !g.held.is_empty()
                        && g.prompt
                            .as_deref()
                            .zip(prompt)
                            .is_some_and(|(a, b)| a.trim() == b.trim())
                });
                match g {
                    Some(g) => self.link(g, id.to_owned()),
                    None => self.tasks.push((id.to_owned(), prompt.map(str::to_owned))),
                }
            }
        }
        if rtype == Some("assistant")
            && let Some(m) = msg_id
            && !self.usage_done.contains(&m)
        {
            self.pending.insert(
                chain,
                PendingUsage {
                    rec: usage_record(rec),
                    line,
                    file,
                    span,
                },
            );
        }
        if uuid != 0 {
            self.after(uuid, out);
        }
    }

    /// Maps what waited for record `uuid`: the runs anchored at it, then its children (depth
    /// first, in file order; iterative, so a long chain of waiting records cannot overflow the
    /// stack).
    fn after(&mut self, uuid: u64, out: &mut Vec<Decoded>) {
        if self.draining {
            self.work.push(Work::After(uuid));
            return;
        }
        self.draining = true;
        self.work.push(Work::After(uuid));
        while let Some(w) = self.work.pop() {
            match w {
                Work::After(u) => {
                    for g in self.anchored.remove(&u).unwrap_or_default() {
                        if self.groups[g].link.is_none() && self.groups[g].chain.is_none() {
                            self.place_group(g, out);
                        }
                    }
                    if let Some(children) = self.waiting.remove(&u) {
                        for h in children.into_iter().rev() {
                            self.waiting_lines.remove(&h.line);
                            self.work.push(Work::Place(h));
                        }
                    }
                }
                Work::Place(h) => self.place_held(&h, 0, out),
            }
        }
        self.draining = false;
    }

    fn publish_new_tools(&mut self, rec: &Value, line: u64, out: &mut Vec<Decoded>) {
        let mut new = false;
        for b in blocks(rec) {
            if str_of(b, "type") == Some("tool_use")
                && let Some(n) = str_of(b, "name")
                && self.tool_set.insert(n.to_owned())
            {
                if self.tools.len() < super::MAX_DERIVED_TOOLS {
                    self.tools.push(n.to_owned());
                    new = true;
                } else if self.tool_set.len() == super::MAX_DERIVED_TOOLS + 1 {
                    out.push(Decoded::Finding(super::derived_catalog_full(n, line)));
                }
            }
        }
        if new {
            let f = self.catalog_frame(line);
            out.push(Decoded::frame(f));
        }
    }

    /// A successful Task/Agent result whose subagent ran in no record of this input (no file
    /// beside the transcript, no inline sidechain, no progress copy) → an info finding on the
    /// call (issue 20: 5 of 6 subagent files absent in one 2.1.114 session, and nothing said so).
    fn missing_subagents(&mut self, rec: &Value, line: u64, out: &mut Vec<Decoded>) {
        for b in blocks(rec) {
            if str_of(b, "type") != Some("tool_result")
                || b.get("is_error").and_then(Value::as_bool) == Some(true)
            {
                continue;
            }
            let Some(id) = str_of(b, "tool_use_id") else {
                continue;
            };
            if !matches!(self.mapper.tool_name(id), Some("Task" | "Agent")) {
                continue;
            }
            let ran = self
                .chains
                .iter()
                .any(|c| c.last().is_some_and(|d| d.invocation_id == id));
            if ran {
                continue;
            }
            let agent = at(rec, &["toolUseResult", "agentId"]).and_then(Value::as_str);
            let msg = match agent {
                Some(a) => format!(
                    "the subagent transcript of this call (agent {a:?}: its agent-<id>.jsonl beside the session or in its subagents/ directory) is not in this input; only its result is shown"
                ),
                None => "the subagent's own records of this call are not in this input; only its result is shown".to_owned(),
            };
            out.push(Decoded::Finding(
                crate::finding::Finding::new(
                    crate::finding::Level::Info,
                    code::SUBAGENT_MISSING,
                    "SPEC 4",
                    line,
                    msg,
                )
                .for_invocation(id.to_owned()),
            ));
        }
    }

    /// A `deferred_tools_delta` attachment (2.1.x: tools made available or withdrawn during
    /// the session) → the derived catalog published again with the tools added and removed
    /// (SPEC 3.5: each publish is the whole catalog), its metadata `rawpv_catalog_delta:
    /// {added, removed}` saying what changed (a visible row).
    fn publish_delta(&mut self, rec: &Value, line: u64, out: &mut Vec<Decoded>) {
        if str_of(rec, "type") != Some("attachment")
            || at(rec, &["attachment", "type"]).and_then(Value::as_str)
                != Some("deferred_tools_delta")
        {
            return;
        }
        let super::cc_records::Attachment::CatalogDelta { added, removed } =
            super::cc_records::attachment(&rec["attachment"])
        else {
            return;
        };
        let mut did_add = Vec::new();
        for n in added {
            if self.tool_set.contains(&n) {
                continue;
            }
            if self.tools.len() < super::MAX_DERIVED_TOOLS {
                self.tool_set.insert(n.clone());
                self.tools.push(n.clone());
                did_add.push(n);
            } else {
                out.push(Decoded::Finding(super::derived_catalog_full(&n, line)));
                break;
            }
        }
        let did_remove: Vec<String> = removed
            .into_iter()
            .filter(|n| self.tool_set.remove(n))
            .collect();
        if did_add.is_empty() && did_remove.is_empty() {
            return;
        }
        self.tools.retain(|t| !did_remove.contains(t));
        let mut f = self.catalog_frame(line);
        f.envelope.metadata.remove("rawpv_derived_update");
        f.envelope.metadata.insert(
            "rawpv_catalog_delta".into(),
            json!({"added": did_add, "removed": did_remove}),
        );
        f.envelope.timestamp = rec
            .get("timestamp")
            .and_then(Timestamp::from_json)
            .or(f.envelope.timestamp);
        out.push(Decoded::frame(f));
    }

    /// An `x-claude-code.fork` frame (SPEC 4; ARCHITECTURE "Forks"), facts that stay true as
    /// the stream goes on (no running count: readers count the frames of a fork point).
    /// `Some((branch, parent_line, first_line))`: branch `branch` (2, 3, …) of the fork point at
    /// `parent_line` starts at this record — `{parentUuid, parent_line, first_line, branch,
    /// line}`, `first_line` the first line of branch 1 (branch 2's frame is the fork point's
    /// row; later ones are quiet marks). `None`: the conversation goes on from a record mapped
    /// before the latest mark (back on an earlier branch) — `{resume: true, parent_line,
    /// line}`, a quiet mark.
    fn fork_row(
        &mut self,
        rec: &Value,
        line: u64,
        chain: usize,
        at: Option<(u32, u64, u64)>,
        out: &mut Vec<Decoded>,
    ) {
        let mut p = Map::new();
        let parent = str_of(rec, "parentUuid");
        if let Some((branch, parent_line, first_line)) = at {
            if let Some(parent) = parent {
                p.insert("parentUuid".into(), json!(parent));
            }
            p.insert("parent_line".into(), json!(parent_line));
            p.insert("first_line".into(), json!(first_line));
            p.insert("branch".into(), json!(branch));
        } else {
            p.insert("resume".into(), json!(true));
            let pl = parent.map_or(0, |u| self.forks.line_of(key(u)));
            p.insert("parent_line".into(), json!(pl));
        }
        p.insert("line".into(), json!(line));
        let ctx = RecCtx {
            line,
            chain: &self.chains[chain],
            file: None,
            last_of_message: false,
            in_file: false,
        };
        let ts = rec.get("timestamp").and_then(Timestamp::from_json);
        let t = FrameType::from_wire("x-claude-code.fork");
        let f = self.mapper.frame(t, Body::Generic(p), None, &ctx, ts);
        out.push(Decoded::frame(f));
    }

    fn flush(&mut self, chain: usize, out: &mut Vec<Decoded>) {
        if let Some(p) = self.pending.remove(&chain) {
            if let Some(m) = rec_msg_key(&p.rec) {
                self.usage_done.insert(m);
            }
            let fname = (p.file != 0).then(|| self.files[p.file].0.clone());
            let ctx = RecCtx {
                line: p.line,
                chain: &self.chains[chain],
                file: fname.as_deref(),
                last_of_message: true,
                in_file: false,
            };
            let ts = p.rec.get("timestamp").and_then(Timestamp::from_json);
            let msg = p.rec.get("message").cloned().unwrap_or(Value::Null);
            let first = out.len();
            self.mapper.message_end(&p.rec, &msg, &ctx, ts, out);
            for d in &mut out[first..] {
                if let Decoded::Frame(f) = d {
                    f.origin.span = p.span;
                }
            }
        }
    }

    fn catalog_frame(&mut self, line: u64) -> crate::protocol::Frame {
        let tools = self
            .tools
            .iter()
            .map(|name| CatalogTool {
                name: name.clone(),
                description: Some("used in this transcript (catalog derived by rawpv)".into()),
                category: known_category(name),
                ..Default::default()
            })
            .collect();
        let ctx = RecCtx {
            line,
            chain: &[],
            file: None,
            last_of_message: false,
            in_file: false,
        };
        let body = Body::Catalog(CatalogPublish {
            tools,
            diagnostics: Vec::new(),
            extra: Map::new(),
        });
        let mut f = self
            .mapper
            .frame(FrameType::ToolCatalogPublish, body, None, &ctx, None);
        f.envelope
            .metadata
            .insert("rawpv_derived".into(), Value::Bool(true));
        if self.tools.len() > 1 {
            // The same catalog with one more tool: a quiet row.
            f.envelope
                .metadata
                .insert("rawpv_derived_update".into(), Value::Bool(true));
        }
        f
    }

    /// Emits the usage / turn end of every API message still pending (and frames held for a
    /// timestamp).
    pub fn finish_messages(&mut self, out: &mut Vec<Decoded>) {
        out.append(&mut self.held_frames);
        let mut keys: Vec<usize> = self.pending.keys().copied().collect();
        keys.sort_unstable();
        for k in keys {
            self.flush(k, out);
        }
    }

    /// Keeps a record as an `x-claude-code.<kind>` frame, unmapped.
    pub fn record_ext(&mut self, v: &Value, kind: &str, line: u64, out: &mut Vec<Decoded>) {
        let ctx = RecCtx {
            line,
            chain: &[],
            file: None,
            last_of_message: false,
            in_file: false,
        };
        self.mapper.ext(v, kind, &ctx, out);
    }

    /// End of input: records still waiting (as roots, in file order), runs never placed, pending
    /// usage, then the findings (pairing, forks, duplicates, replays).
    pub fn finish(&mut self, out: &mut Vec<Decoded>) {
        if !self.looked_for_subagents {
            self.looked_for_subagents = true;
            self.read_subagent_files(None);
        }
        out.append(&mut self.file_findings);
        let mut held = std::mem::take(&mut self.held_frames);
        let target: &mut Vec<Decoded> =
            if self.hold_for_timestamp && self.mapper.last_timestamp().is_none() {
                &mut held
            } else {
                out.append(&mut held);
                out
            };
        while !self.waiting_lines.is_empty() {
            self.release_oldest(target);
        }
        // Runs never placed (no Task result in this input), each at top level; a run nested too
        // deep is put back by `place_group` and comes round here again.
        while let Some(g) = self.groups.iter().position(|g| !g.held.is_empty()) {
            self.nesting = 0;
            self.place_group(g, target);
        }
        if !held.is_empty() {
            let ts = self.mapper.last_timestamp();
            for d in &mut held {
                if let (Decoded::Frame(f), Some(ts)) = (&mut *d, ts) {
                    f.envelope.timestamp.get_or_insert(ts);
                }
            }
            out.append(&mut held);
        }
        self.finish_messages(out);
        self.mapper.finish(out);
        let main = self.forks.main_lines();
        for (&line, &branches) in &self.forks.forks {
            let which = match main.get(&line) {
                Some(&(k, from)) => format!(
                    "the main line is branch {k} (from line {from}), the one that leads to the session's last record"
                ),
                // A fork inside a subagent: its branches end in the subagent's run, not at
                // the session's last record, so no branch of it is the session's main line.
                None => "no branch of it leads to the session's last record (a fork inside a subagent run, or one whose branches all ended)".to_owned(),
            };
            let msg = format!(
                "fork point: the conversation branches here into {branches} branches (a rewind or a retried prompt); {which}"
            );
            out.push(info(code::FORK, line, msg));
        }
        if self.dups > 0 {
            let msg = format!(
                "{} record(s) repeated an earlier uuid (resumed session or subagent progress copy); the first copy is shown",
                self.dups
            );
            out.push(info(code::DUPLICATE_RECORD, 0, msg));
        }
        if self.replayed > 0 {
            let msg = format!(
                "{} record(s) belong to an earlier session (a resumed session replays its predecessor); marked claude_code.replayed",
                self.replayed
            );
            out.push(info(code::DUPLICATE_RECORD, 0, msg));
        }
    }

    /// Indexes the session's subagent files (beside a saved file): each record's compact key
    /// and byte span, grouped into runs; nothing is mapped yet.
    fn read_subagent_files(&mut self, session_id: Option<&str>) {
        let Some(path) = self.path.clone() else {
            return;
        };
        for p in subagent_files(&path, session_id) {
            if !self.indexed.insert(p.clone()) {
                continue;
            }
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let opened = read_at_most_its_size(&p).and_then(|b| Ok((b, std::fs::File::open(&p)?)));
            let (bytes, f) = match opened {
                Ok(x) => x,
                Err(e) => {
                    let msg =
                        format!("subagent file {name} not read ({e}); its calls are not shown");
                    self.file_warning(msg);
                    continue;
                }
            };
            self.files.push((name, Some(Arc::new(f))));
            self.index_file(self.files.len() - 1, &bytes);
        }
    }

    /// A warning about a subagent file (no line of the opened input: line 0).
    fn file_warning(&mut self, msg: String) {
        self.file_findings
            .push(Decoded::Finding(crate::finding::Finding::new(
                crate::finding::Level::Warning,
                code::MALFORMED_LINE,
                "SPEC 4",
                0,
                msg,
            )));
    }

    /// Groups the records of subagent file `file` (its `bytes`) into runs of held spans.
    fn index_file(&mut self, file: usize, bytes: &[u8]) {
        let mut offset = 0u64;
        let mut new_groups = Vec::new();
        for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
            let mut at = offset;
            offset += raw.len() as u64 + 1;
            // A byte order mark is not part of the first record (its span starts after it).
            let kept = super::without_bom(i as u64 + 1, raw);
            at += (raw.len() - kept.len()) as u64;
            let raw = kept;
            let v = match serde_json::from_slice::<Value>(raw) {
                Ok(v) if v.is_object() => v,
                _ if raw.trim_ascii().is_empty() => continue,
                other => {
                    let why = match other {
                        Ok(_) => "not a JSON object".to_owned(),
                        Err(e) => format!("not valid JSON: {e}"),
                    };
                    let name = &self.files[file].0;
                    let msg = format!(
                        "subagent file {name} line {}: {why}; the line is not shown",
                        i + 1
                    );
                    self.file_warning(msg);
                    continue;
                }
            };
            let uuid = str_of(&v, "uuid").map_or(0, key);
            let parent = str_of(&v, "parentUuid").map_or(0, key);
            let agent = str_of(&v, "agentId");
            let existing = match agent {
                Some(a) => self.by_agent.get(a).copied(),
                None => self.uuid_group.get(&parent).copied(),
            };
            let g = existing.unwrap_or_else(|| {
                let agent_id = agent.map_or_else(|| format!("agent-file-{file}"), str::to_owned);
                self.groups.push(Group {
                    agent_id: agent_id.clone(),
                    chain: None,
                    link: None,
                    prompt: None,
                    anchor: parent,
                    held: Vec::new(),
                });
                let g = self.groups.len() - 1;
                self.by_agent.insert(agent_id, g);
                new_groups.push(g);
                g
            });
            if uuid != 0 {
                self.uuid_group.insert(uuid, g);
            }
            let grp = &mut self.groups[g];
            if grp.prompt.is_none() && grp.link.is_none() {
                grp.prompt = user_text(&v).map(str::to_owned);
            }
            grp.held.push(Held {
                src: Src::Span {
                    offset: at,
                    len: raw.len() as u64,
                },
                file,
                line: i as u64 + 1,
                uuid,
                parent,
                span: None,
            });
        }
        for g in new_groups {
            let a = self.groups[g].anchor;
            // A parent inside the run is no anchor; one in the main file is (compaction).
            if a != 0 && self.uuid_group.get(&a) != Some(&g) {
                self.anchored.entry(a).or_default().push(g);
            } else {
                self.groups[g].anchor = 0;
            }
        }
    }
}

impl ForkTracker {
    /// Records `rec` as a child of its parent; returns `(branch, parent line, first line of
    /// branch 1)` when `rec` starts a new branch of a fork point (a second, third… child that
    /// continues the conversation).
    fn child(
        &mut self,
        rec: &Value,
        uuid: u64,
        line: u64,
        msg: Option<u64>,
    ) -> Option<(u32, u64, u64)> {
        let rtype = str_of(rec, "type");
        if !matches!(rtype, Some("user" | "assistant")) {
            return None;
        }
        if uuid != 0 {
            self.records.insert(uuid, (line, msg.unwrap_or(0)));
        }
        let parent = key(str_of(rec, "parentUuid")?);
        let &(pline, pmsg) = self.records.get(&parent)?;
        // The results of a message's parallel calls, and its later split records, are one turn.
        let results_only = rtype == Some("user")
            && !blocks(rec).is_empty()
            && blocks(rec)
                .iter()
                .all(|b| str_of(b, "type") == Some("tool_result"));
        if results_only || (msg.is_some() && msg == Some(pmsg)) {
            return None;
        }
        let e = self
            .children
            .entry(parent)
            .or_insert((0, pline, pmsg, line, uuid));
        e.0 += 1;
        if e.0 < 2 {
            return None;
        }
        let (k, first_line, first) = (e.0, e.3, e.4);
        if k == 2 && first != 0 {
            self.heads.insert(first, (pline, 1));
        }
        if uuid != 0 {
            self.heads.insert(uuid, (pline, k));
        }
        self.forks.insert(pline, k);
        Some((k, pline, first_line))
    }

    /// Notes main-agent record `rec`, after [`Self::child`] (`forked`: it started a branch).
    /// Returns whether a resume mark goes before it: a fork point exists, and its parent was
    /// mapped before the latest mark (so it may be on another branch than the latest record).
    fn main_record(&mut self, rec: &Value, uuid: u64, line: u64, forked: bool) -> bool {
        let parent = str_of(rec, "parentUuid").map_or(0, key);
        if forked {
            self.seg += 1;
        }
        let resume = !forked
            && !self.forks.is_empty()
            && parent != 0
            && matches!(str_of(rec, "type"), Some("user" | "assistant" | "system"))
            && self.up.contains_key(&parent)
            && self.seg_of.get(&parent).copied().unwrap_or(0) < self.seg;
        if resume {
            self.seg += 1;
        }
        if uuid != 0 {
            self.up.insert(uuid, (parent, line));
            if self.seg > 0 {
                self.seg_of.insert(uuid, self.seg);
            }
            self.last_main = uuid;
        }
        resume
    }

    /// The line of main-agent record `uuid` (0 when unknown).
    fn line_of(&self, uuid: u64) -> u64 {
        self.up.get(&uuid).map_or(0, |&(_, l)| l)
    }

    /// Fork point line → (branch number, its first line) of the branch that leads to the
    /// latest main-agent record. O(depth of that record), once at the end.
    fn main_lines(&self) -> HashMap<u64, (u32, u64)> {
        let mut main = HashMap::new();
        let mut u = self.last_main;
        let mut steps = 0usize;
        while u != 0 && steps <= self.up.len() {
            let Some(&(parent, line)) = self.up.get(&u) else {
                break;
            };
            if let Some(&(fork, k)) = self.heads.get(&u) {
                main.entry(fork).or_insert((k, line));
            }
            u = parent;
            steps += 1;
        }
        main
    }
}

/// The `uuid` a broken record's text shows (the first `"uuid":"…"`; `parentUuid` and the like
/// are other keys), if any.
fn uuid_in(text: &str) -> Option<&str> {
    let mut rest = text;
    while let Some(i) = rest.find("\"uuid\"") {
        let after = rest[i + 6..].trim_start();
        if let Some(v) = after.strip_prefix(':') {
            let v = v.trim_start().strip_prefix('"')?;
            return v
                .split('"')
                .next()
                .filter(|u| !u.is_empty() && u.len() <= 64);
        }
        rest = &rest[i + 6..];
    }
    None
}

/// The message id key of a (usage) record.
fn rec_msg_key(rec: &Value) -> Option<u64> {
    at(rec, &["message", "id"]).and_then(Value::as_str).map(key)
}

/// What the usage of an API message needs from its record (small).
fn usage_record(rec: &Value) -> Value {
    let m = rec.get("message").unwrap_or(&Value::Null);
    let mut small = Map::new();
    for k in ["type", "timestamp", "sessionId", "session_id", "uuid"] {
        if let Some(x) = rec.get(k) {
            small.insert(k.to_owned(), x.clone());
        }
    }
    let mut sm = Map::new();
    for k in ["id", "model", "usage", "stop_reason"] {
        if let Some(x) = m.get(k) {
            sm.insert(k.to_owned(), x.clone());
        }
    }
    small.insert("message".into(), Value::Object(sm));
    Value::Object(small)
}

/// `parentUuid` order of held records: a record comes after its parent when the parent is among
/// them; otherwise in their order. Linear time.
fn graph_order(held: &[Held]) -> Vec<usize> {
    let mut pos: HashMap<u64, usize> = HashMap::with_capacity(held.len());
    for (k, h) in held.iter().enumerate() {
        if h.uuid != 0 {
            pos.entry(h.uuid).or_insert(k);
        }
    }
    let mut done = vec![false; held.len()];
    let mut waiting: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut order = Vec::with_capacity(held.len());
    for (k, h) in held.iter().enumerate() {
        let parent = pos.get(&h.parent).copied().filter(|&p| p != k);
        if let Some(p) = parent
            && !done[p]
        {
            waiting.entry(p).or_default().push(k);
            continue;
        }
        let mut stack = vec![k];
        while let Some(k) = stack.pop() {
            if done[k] {
                continue;
            }
            done[k] = true;
            order.push(k);
            if let Some(children) = waiting.remove(&k) {
                stack.extend(children.into_iter().rev());
            }
        }
    }
    // Cycles never become ready: keep them, in file order.
    order.extend((0..held.len()).filter(|&k| !done[k]));
    order
}

impl Decoder for ClaudeCodeDecoder {
    fn line(&mut self, line: u64, text: &str, out: &mut Vec<Decoded>) {
        self.line_at(line, None, text, out);
    }

    fn line_span(&mut self, line: u64, span: ByteSpan, text: &str, out: &mut Vec<Decoded>) {
        self.line_at(line, Some(span), text, out);
    }

    fn finish(&mut self, out: &mut Vec<Decoded>) {
        Self::finish(self, out);
    }

    fn fork(&self) -> Option<Box<dyn Decoder>> {
        Some(Box::new(self.clone()))
    }

    /// Records waiting for a parent go out as roots, as at the end of input: a followed
    /// transcript with a line broken before its `uuid` hid the rest of the session until 256
    /// more records came (attack 5). A parent written later then finds its child placed.
    fn caught_up(&mut self, out: &mut Vec<Decoded>) {
        if self.waiting_lines.is_empty() {
            return;
        }
        let mut held = std::mem::take(&mut self.held_frames);
        let holding = self.hold_for_timestamp && self.mapper.last_timestamp().is_none();
        while !self.waiting_lines.is_empty() {
            self.release_oldest(if holding { &mut held } else { out });
        }
        if holding {
            self.held_frames = held;
        } else {
            out.append(&mut held);
        }
    }
}

/// Reads the payload of an `x-claude-code.<type>` event again from its record (`text`, the line
/// its `Origin::span` points at): the record minus its context keys, as `cc_map` built it.
/// `None`: the line is no record of that type (the file changed). For `Session::reparse`'s
/// event part (`Session::defer_events`).
pub fn reparse_event(text: &str, frame_type: &str) -> Option<Value> {
    let v: Value = serde_json::from_str(text).ok()?;
    let kind = frame_type.strip_prefix("x-claude-code.")?;
    (str_of(&v, "type") == Some(kind)).then(|| Value::Object(super::cc_map::rest(&v)))
}

/// Reads a call's input or output again from its record (`text`, the line a frame's
/// `Origin::span` points at), as the decoder built it: the `tool_use` block `id`'s input, or the
/// `tool_result` block for `id` mapped by `cc_output::tool_output` (`input` gives the call's
/// input, needed for Task and Read results). `None`: the record holds no such block (the file
/// changed). For `Session::reparse`.
pub fn reparse(
    text: &str,
    id: &str,
    tool: &str,
    part: crate::session::Part,
    input: &dyn Fn() -> Value,
) -> Option<Value> {
    let v: Value = serde_json::from_str(text).ok()?;
    let rec = unwrap(&v).rec;
    let want = match part {
        crate::session::Part::Input => "tool_use",
        crate::session::Part::Output => "tool_result",
    };
    let k = if want == "tool_use" {
        "id"
    } else {
        "tool_use_id"
    };
    let all = blocks(rec);
    let b = all
        .iter()
        // A block without an id was mapped under the id "" (`cc_map`).
        .find(|b| str_of(b, "type") == Some(want) && str_of(b, k).unwrap_or("") == id)?;
    match part {
        crate::session::Part::Input => Some(b.get("input").cloned().unwrap_or(Value::Null)),
        crate::session::Part::Output => {
            let results = all
                .iter()
                .filter(|b| str_of(b, "type") == Some("tool_result"))
                .count();
            let tur = (results == 1)
                .then(|| {
                    rec.get("toolUseResult")
                        .or_else(|| rec.get("tool_use_result"))
                })
                .flatten();
            let is_error = b.get("is_error").and_then(Value::as_bool) == Some(true);
            let text = super::cc_output::result_text(b.get("content"));
            let keep = matches!(tool, "Task" | "Agent" | "Read" | "NotebookRead");
            let input = keep.then(input);
            Some(super::cc_output::tool_output(tool, &text, tur, input.as_ref(), is_error).0)
        }
    }
}

/// Decodes a transcript file (its bytes) plus the subagent files found beside it: what the
/// file source gives, without byte spans.
pub fn load_session(path: &Path, bytes: &[u8]) -> Vec<Decoded> {
    let mut dec = ClaudeCodeDecoder::for_file(path);
    let mut out = Vec::new();
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let text = super::line_text(raw, i as u64 + 1, &mut out);
        dec.line(i as u64 + 1, &text, &mut out);
    }
    dec.finish(&mut out);
    out
}
