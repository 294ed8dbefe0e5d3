//! Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`) → RAWP frames
//! (SPEC 4; corpus README "Format quirks").
//!
//! Who calls it: `crate::import` (`decoder_for(Format::ClaudeCode)` for streams, and
//! [`load_session`] for files, which also reads the session's subagent files).
//!
//! How: records are buffered and mapped when the input ends, because their order and grouping is
//! only known then:
//! 1. `agent_progress` records are unwrapped: their embedded subagent message becomes a record of
//!    that subagent (linked to the Task call by `parentToolUseID`);
//! 2. records are deduplicated by `uuid` (resumed sessions repeat records; progress records
//!    repeat subagent messages): the first copy wins;
//! 3. subagent (sidechain) records are grouped per agent (`agentId`, else the `parentUuid` chain
//!    of a `parentUuid: null` run) and linked to the Task/Agent call that started them
//!    (progress link, `toolUseResult.agentId`, else the Task prompt equal to the run's first
//!    prompt);
//! 4. each run of records is put in `parentUuid` order (a record after its parent; file order
//!    otherwise; dangling parents are roots); a subagent run is placed just before the record
//!    holding its Task's `tool_result`, with `metadata.delegation_chain` = parent chain +
//!    `{agent_id, invocation_id: <Task tool_use id>}`;
//! 5. one derived `tool.catalog.publish` (metadata `rawpv_derived: true`) lists the tools used,
//!    first; then every record goes through [`super::cc_map::Mapper`].
//!
//! Invariants: O(records) apart from hashing; never panics; bad lines are `Decoded::Malformed`;
//! nothing is dropped silently (duplicates are counted in an info finding).
//!
//! Size (about 950 lines): the whole-file decode (the `parentUuid` graph, subagent
//! files, resumed sessions, duplicate records) and the live streaming decoder share the record
//! reading and ordering rules, kept side by side so the two cannot drift apart; the mapping of a
//! record to frames is `cc_map.rs`, the tool outputs `cc_output.rs`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::cc_map::{Mapper, RecCtx};
use super::{Decoded, Decoder};
use crate::finding::{Finding, Level, code};
use crate::protocol::rules::known_category;
use crate::protocol::{
    Body, CatalogPublish, CatalogTool, Delegation, FrameType, ParseError, ParseErrorKind, Timestamp,
};

/// One JSONL record and where it came from.
#[derive(Debug)]
struct Rec {
    /// Index into `ClaudeCodeDecoder::files` (0 = the opened file).
    file: usize,
    line: u64,
    v: Value,
}

/// Buffers a transcript (and its subagent files) and maps it at the end.
#[derive(Debug)]
pub struct ClaudeCodeDecoder {
    /// File names; index 0 is the opened input (no name needed).
    files: Vec<String>,
    recs: Vec<Rec>,
    malformed: Vec<Decoded>,
}

impl Default for ClaudeCodeDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl ClaudeCodeDecoder {
    pub fn new() -> Self {
        Self {
            files: vec![String::new()],
            recs: Vec::new(),
            malformed: Vec::new(),
        }
    }

    fn push_line(&mut self, file: usize, line: u64, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::Object(_)) => self.recs.push(Rec { file, line, v }),
            Ok(_) => self.malformed.push(Decoded::Malformed(ParseError::new(
                line,
                ParseErrorKind::NotObject,
                text,
            ))),
            Err(e) => {
                let msg = if file == 0 {
                    e.to_string()
                } else {
                    format!("{} (in {})", e, self.files[file])
                };
                self.malformed.push(Decoded::Malformed(ParseError::new(
                    line,
                    ParseErrorKind::Json(msg),
                    text,
                )));
            }
        }
    }

    /// Adds another file of the same session (a subagent transcript); `name` is shown in the
    /// records' `metadata.claude_code.file`.
    pub fn add_file(&mut self, name: &str, bytes: &[u8]) {
        self.files.push(name.to_owned());
        let file = self.files.len() - 1;
        for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            self.push_line(file, i as u64 + 1, &String::from_utf8_lossy(raw));
        }
    }
}

impl Decoder for ClaudeCodeDecoder {
    fn line(&mut self, line: u64, text: &str, _out: &mut Vec<Decoded>) {
        self.push_line(0, line, text);
    }

    fn finish(&mut self, out: &mut Vec<Decoded>) {
        out.append(&mut self.malformed);
        let recs = std::mem::take(&mut self.recs);
        convert(&recs, &self.files, out);
    }
}

/// A record to map: a file record, or a subagent message embedded in a progress record.
#[derive(Debug, Clone, Copy)]
struct Entry<'a> {
    v: &'a Value,
    line: u64,
    file: usize,
    sidechain: bool,
    /// `agentId` of the record, or of the progress record that embedded it.
    agent: Option<&'a str>,
    /// The Task/Agent `tool_use` id a progress record links this message to.
    link: Option<&'a str>,
}

impl<'a> Entry<'a> {
    fn str(&self, k: &str) -> Option<&'a str> {
        self.v.get(k).and_then(Value::as_str)
    }

    fn blocks(&self) -> &'a [Value] {
        self.v
            .pointer("/message/content")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// Ids of the `tool_use` (`want = "tool_use"`, field `id`) or `tool_result` blocks.
    fn block_ids(&self, want: &'static str) -> impl Iterator<Item = &'a str> + use<'a> {
        let key = if want == "tool_use" {
            "id"
        } else {
            "tool_use_id"
        };
        self.blocks()
            .iter()
            .filter(move |b| b.get("type").and_then(Value::as_str) == Some(want))
            .filter_map(move |b| b.get(key).and_then(Value::as_str))
    }

    /// The first user text of the record (a subagent run's prompt).
    fn user_text(&self) -> Option<&'a str> {
        if self.str("type") != Some("user") {
            return None;
        }
        match self.v.pointer("/message/content") {
            Some(Value::String(s)) => Some(s),
            Some(Value::Array(b)) => b
                .iter()
                .find(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .and_then(|b| b.get("text"))
                .and_then(Value::as_str),
            _ => None,
        }
    }
}

/// A subagent run.
#[derive(Debug)]
struct Group<'a> {
    agent_id: String,
    entries: Vec<usize>,
    link: Option<&'a str>,
    prompt: Option<&'a str>,
}

/// Unwraps progress records and deduplicates by `uuid`. Returns the entries and the number of
/// duplicates skipped.
fn entries(recs: &[Rec]) -> (Vec<Entry<'_>>, usize) {
    let mut out = Vec::with_capacity(recs.len());
    let mut seen: HashSet<&str> = HashSet::with_capacity(recs.len());
    let mut dups = 0;
    for r in recs {
        let v = &r.v;
        let mut e = Entry {
            v,
            line: r.line,
            file: r.file,
            sidechain: v.get("isSidechain").and_then(Value::as_bool) == Some(true),
            agent: v.get("agentId").and_then(Value::as_str),
            link: None,
        };
        if v.get("type").and_then(Value::as_str) == Some("progress")
            && let Some(data) = v.get("data")
            && data.get("type").and_then(Value::as_str) == Some("agent_progress")
            && let Some(msg) = data.get("message").filter(|m| m.is_object())
        {
            e = Entry {
                v: msg,
                line: r.line,
                file: r.file,
                sidechain: true,
                agent: data.get("agentId").and_then(Value::as_str),
                link: v.get("parentToolUseID").and_then(Value::as_str),
            };
        }
        if let Some(u) = e.str("uuid")
            && !seen.insert(u)
        {
            dups += 1;
            continue;
        }
        out.push(e);
    }
    (out, dups)
}

/// `parentUuid` order of `idx` (indices into `es`): a record comes after its parent when the
/// parent is in the same run; otherwise file order. Linear time.
fn graph_order(es: &[Entry<'_>], idx: &[usize]) -> Vec<usize> {
    let mut pos: HashMap<&str, usize> = HashMap::with_capacity(idx.len());
    for (k, &i) in idx.iter().enumerate() {
        if let Some(u) = es[i].str("uuid") {
            pos.entry(u).or_insert(k);
        }
    }
    let mut done = vec![false; idx.len()];
    let mut waiting: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut order = Vec::with_capacity(idx.len());
    for (k, &i) in idx.iter().enumerate() {
        let parent = es[i]
            .str("parentUuid")
            .and_then(|p| pos.get(p))
            .copied()
            .filter(|&p| p != k);
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
            order.push(idx[k]);
            if let Some(children) = waiting.remove(&k) {
                stack.extend(children.into_iter().rev());
            }
        }
    }
    // Cycles never become ready: keep them, in file order.
    for (k, &i) in idx.iter().enumerate() {
        if !done[k] {
            order.push(i);
        }
    }
    order
}

struct Placer<'a, 'e> {
    es: &'e [Entry<'a>],
    groups: Vec<Group<'a>>,
    by_task: HashMap<&'a str, Vec<usize>>,
    placed: Vec<bool>,
    chains: Vec<Vec<Delegation>>,
    /// Chain index of the record that issued each `tool_use`.
    use_chain: HashMap<&'a str, usize>,
    ordered: Vec<(usize, usize)>,
}

impl Placer<'_, '_> {
    fn place(&mut self, i: usize, chain: usize) {
        let e = self.es[i];
        for id in e.block_ids("tool_result") {
            let gs = self.by_task.get(id).cloned().unwrap_or_default();
            for g in gs {
                self.place_group(g);
            }
        }
        self.ordered.push((i, chain));
        for id in e.block_ids("tool_use") {
            self.use_chain.insert(id, chain);
        }
    }

    fn place_group(&mut self, g: usize) {
        if self.placed[g] {
            return;
        }
        self.placed[g] = true;
        let link = self.groups[g].link;
        let parent = link
            .and_then(|l| self.use_chain.get(l))
            .copied()
            .unwrap_or(0);
        let mut chain = self.chains[parent].clone();
        chain.push(Delegation {
            agent_id: self.groups[g].agent_id.clone(),
            invocation_id: link.unwrap_or("").to_owned(),
        });
        self.chains.push(chain);
        let c = self.chains.len() - 1;
        let order = graph_order(self.es, &self.groups[g].entries);
        for i in order {
            self.place(i, c);
        }
    }
}

/// Maps buffered records to frames (see the module docs for the steps).
fn convert(recs: &[Rec], files: &[String], out: &mut Vec<Decoded>) {
    let (es, dups) = entries(recs);

    // 3. Groups.
    let mut main = Vec::new();
    let mut groups: Vec<Group<'_>> = Vec::new();
    let mut by_agent: HashMap<&str, usize> = HashMap::new();
    let mut by_uuid: HashMap<&str, usize> = HashMap::new();
    for (i, e) in es.iter().enumerate() {
        if !e.sidechain {
            main.push(i);
            continue;
        }
        let existing = match e.agent {
            Some(a) => by_agent.get(a).copied(),
            None => e.str("parentUuid").and_then(|p| by_uuid.get(p)).copied(),
        };
        let g = existing.unwrap_or_else(|| {
            let agent_id = e.agent.map_or_else(
                || {
                    let u = e.str("uuid").unwrap_or("");
                    format!("sidechain-{}", u.get(..8).unwrap_or(u))
                },
                str::to_owned,
            );
            groups.push(Group {
                agent_id,
                entries: Vec::new(),
                link: None,
                prompt: None,
            });
            if let Some(a) = e.agent {
                by_agent.insert(a, groups.len() - 1);
            }
            groups.len() - 1
        });
        if let Some(u) = e.str("uuid") {
            by_uuid.insert(u, g);
        }
        let grp = &mut groups[g];
        grp.entries.push(i);
        if grp.link.is_none() {
            grp.link = e.link;
        }
        if grp.prompt.is_none() {
            grp.prompt = e.user_text();
        }
    }

    // Links: progress link, then toolUseResult.agentId, then the Task prompt.
    let mut tasks: Vec<(&str, Option<&str>)> = Vec::new();
    let mut agent_task: HashMap<&str, &str> = HashMap::new();
    for e in &es {
        for b in e.blocks() {
            if b.get("type").and_then(Value::as_str) == Some("tool_use")
                && matches!(
                    b.get("name").and_then(Value::as_str),
                    Some("Task" | "Agent")
                )
                && let Some(id) = b.get("id").and_then(Value::as_str)
            {
                let prompt = b.pointer("/input/prompt").and_then(Value::as_str);
                tasks.push((id, prompt));
            }
        }
        if let Some(a) =
            e.v.pointer("/toolUseResult/agentId")
                .and_then(Value::as_str)
            && let Some(id) = e.block_ids("tool_result").next()
        {
            agent_task.insert(a, id);
        }
    }
    let mut linked: HashSet<&str> = groups.iter().filter_map(|g| g.link).collect();
    for g in &mut groups {
        if g.link.is_none() {
            g.link = agent_task
                .get(g.agent_id.as_str())
                .copied()
                .filter(|t| !linked.contains(t));
        }
        if g.link.is_none()
            && let Some(p) = g.prompt
        {
            g.link = tasks
                .iter()
                .find(|(id, tp)| !linked.contains(id) && tp.is_some_and(|tp| tp.trim() == p.trim()))
                .map(|(id, _)| *id);
        }
        if let Some(l) = g.link {
            linked.insert(l);
        }
    }
    let mut by_task: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, g) in groups.iter().enumerate() {
        if let Some(l) = g.link {
            by_task.entry(l).or_default().push(k);
        }
    }

    // 4. Placement.
    let n_groups = groups.len();
    let mut placer = Placer {
        es: &es,
        groups,
        by_task,
        placed: vec![false; n_groups],
        chains: vec![Vec::new()],
        use_chain: HashMap::new(),
        ordered: Vec::with_capacity(es.len()),
    };
    for i in graph_order(&es, &main) {
        placer.place(i, 0);
    }
    for g in 0..n_groups {
        placer.place_group(g);
    }
    let Placer {
        ordered, chains, ..
    } = placer;

    // Last record of each API message (usage is repeated on every record of a message).
    let mut last: HashMap<&str, usize> = HashMap::new();
    for (k, &(i, _)) in ordered.iter().enumerate() {
        if es[i].str("type") == Some("assistant")
            && let Some(id) = es[i].v.pointer("/message/id").and_then(Value::as_str)
        {
            last.insert(id, k);
        }
    }

    // 5. Frames.
    let mut mapper = Mapper::new();
    let first_ts = ordered
        .iter()
        .find_map(|&(i, _)| es[i].v.get("timestamp").and_then(Timestamp::from_json));
    mapper.seed_timestamp(first_ts);
    out.push(Decoded::frame(derived_catalog(&mut mapper, &es, &ordered)));
    for (k, &(i, c)) in ordered.iter().enumerate() {
        let e = &es[i];
        let file = (e.file != 0).then(|| files[e.file].as_str());
        let last_of_message =
            e.v.pointer("/message/id")
                .and_then(Value::as_str)
                .is_none_or(|id| last.get(id) == Some(&k));
        let ctx = RecCtx {
            line: e.line,
            chain: &chains[c],
            file,
            last_of_message,
        };
        mapper.record(e.v, &ctx, out);
    }
    mapper.finish(out);
    if dups > 0 {
        let msg = format!(
            "{dups} record(s) repeated an earlier uuid (resumed session or subagent progress copy); the first copy is shown"
        );
        out.push(Decoded::Finding(Finding::new(
            Level::Info,
            code::DUPLICATE_RECORD,
            "SPEC 4",
            0,
            msg,
        )));
    }
}

/// The derived catalog: every tool name used, in order of first use, with its known category.
fn derived_catalog(
    mapper: &mut Mapper,
    es: &[Entry<'_>],
    ordered: &[(usize, usize)],
) -> crate::protocol::Frame {
    let mut seen = HashSet::new();
    let mut tools = Vec::new();
    // The catalog points at the record of the first call (line 0 would read as "unknown").
    let mut first_line = None;
    for &(i, _) in ordered {
        for b in es[i].blocks() {
            if b.get("type").and_then(Value::as_str) == Some("tool_use")
                && let Some(name) = b.get("name").and_then(Value::as_str)
                && seen.insert(name)
            {
                first_line.get_or_insert(es[i].line);
                tools.push(CatalogTool {
                    name: name.to_owned(),
                    description: Some("used in this transcript (catalog derived by rawpv)".into()),
                    category: known_category(name),
                    ..Default::default()
                });
            }
        }
    }
    let ctx = RecCtx {
        line: first_line.unwrap_or(1),
        chain: &[],
        file: None,
        last_of_message: false,
    };
    let body = Body::Catalog(CatalogPublish {
        tools,
        diagnostics: Vec::new(),
        extra: Map::new(),
    });
    let mut f = mapper.frame(FrameType::ToolCatalogPublish, body, None, &ctx, None);
    f.envelope
        .metadata
        .insert("rawpv_derived".into(), Value::Bool(true));
    f
}

/// The subagent files of the session at `path`: `<dir>/<session>/subagents/agent-*.jsonl`
/// (2.1.x) and `<dir>/agent-*.jsonl` whose records carry this session's `sessionId` (2.0.x).
/// Regular files only; sorted by name; missing directories are not an error.
pub fn subagent_files(path: &Path, session_id: Option<&str>) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Some(dir) = path.parent() else {
        return found;
    };
    // Regular files only (a symlink to one is fine): a planted `agent-x.jsonl` that is a FIFO
    // hung the loader, and one linked to /dev/zero grew it to 7.5 GB (second attack of issue
    // 14).
    let is_agent = |p: &Path| {
        p.extension().is_some_and(|x| x == "jsonl")
            && p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("agent-"))
            && std::fs::metadata(p).is_ok_and(|m| m.is_file())
    };
    if path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("agent-"))
    {
        return found;
    }
    if let Some(stem) = path.file_stem() {
        let sub = dir.join(stem).join("subagents");
        if let Ok(rd) = std::fs::read_dir(&sub) {
            found.extend(rd.flatten().map(|d| d.path()).filter(|p| is_agent(p)));
        }
    }
    if let Some(sid) = session_id
        && let Ok(rd) = std::fs::read_dir(dir)
    {
        for p in rd.flatten().map(|d| d.path()).filter(|p| is_agent(p)) {
            if first_session_id(&p).as_deref() == Some(sid) {
                found.push(p);
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Largest subagent file read (256 MiB; real ones are a few MB).
pub const MAX_SUBAGENT_BYTES: u64 = 256 * 1024 * 1024;

/// A subagent file's bytes, at most as many as its size says (and at most
/// [`MAX_SUBAGENT_BYTES`]): a `/proc` file is a "regular
/// file" of size 0 with gigabytes to read (`/proc/self/pagemap` behind a planted
/// `agent-*.jsonl` took 3.2 GB; second attack of issue 14). Reads nothing from such a file.
fn read_at_most_its_size(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    if len > MAX_SUBAGENT_BYTES {
        // A planted 8 GB sparse file took 16.8 GB (third attack): bigger than any real one.
        return Err(std::io::Error::other(format!(
            "{} is {len} bytes, over the {MAX_SUBAGENT_BYTES}-byte subagent file cap",
            path.display()
        )));
    }
    let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0).min(1 << 30));
    f.take(len).read_to_end(&mut buf)?;
    Ok(buf)
}

/// The `sessionId` of the first record of a JSONL file that has one (reads at most 64 KiB).
fn first_session_id(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut buf = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(64 * 1024)
        .read_to_end(&mut buf)
        .ok()?;
    session_id_of(&buf)
}

/// The first `sessionId` found in the complete lines of `bytes`.
pub fn session_id_of(bytes: &[u8]) -> Option<String> {
    bytes.split(|&b| b == b'\n').find_map(|l| {
        serde_json::from_slice::<Value>(l)
            .ok()?
            .get("sessionId")?
            .as_str()
            .map(str::to_owned)
    })
}

/// Decodes a transcript file (its bytes, given up once parsed) plus the subagent files found
/// beside it.
pub fn load_session(path: &Path, bytes: Vec<u8>) -> Vec<Decoded> {
    let mut dec = ClaudeCodeDecoder::new();
    let mut out = Vec::new();
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        dec.push_line(0, i as u64 + 1, &String::from_utf8_lossy(raw));
    }
    let sid = session_id_of(&bytes[..bytes.len().min(256 * 1024)]);
    // The records are parsed: the file's text is not needed while they are mapped.
    drop(bytes);
    for p in subagent_files(path, sid.as_deref()) {
        if let Ok(b) = read_at_most_its_size(&p) {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            dec.add_file(&name, &b);
        }
    }
    dec.finish(&mut out);
    out
}

/// Live (line-by-line) Claude Code transcript decoding, for followed files and stdin: frames
/// are emitted as records arrive, so the full-file steps are simplified:
/// * file order (no `parentUuid` reordering); duplicates by `uuid` are still skipped;
/// * a subagent run is linked when its first record arrives (progress link, else the prompt of
///   an earlier Task/Agent call), and its frames follow in arrival order;
/// * usage / turn end of an API message are emitted when that agent's next message (or prompt)
///   starts, or at the end;
/// * the derived catalog is published again whenever a new tool name appears.
#[derive(Debug, Default)]
pub struct ClaudeCodeStream {
    pub(crate) mapper: Mapper,
    seen: HashSet<String>,
    tools: Vec<String>,
    /// Publish derived catalogs (off when a real catalog was published, e.g. stream-json init).
    pub(crate) derive_catalog: bool,
    /// Agent key → its delegation chain.
    groups: HashMap<String, Vec<Delegation>>,
    /// Sidechain record uuid → agent key (runs without `agentId`).
    uuid_group: HashMap<String, String>,
    /// Task/Agent calls not yet linked to a run: (id, prompt).
    tasks: Vec<(String, Option<String>)>,
    /// Chain of the record that issued each `tool_use`.
    use_chain: HashMap<String, Vec<Delegation>>,
    /// Agent key → the latest record of its current API message (usage not yet emitted).
    pending: HashMap<String, (Value, u64, Vec<Delegation>)>,
    /// Frames held until the first timestamp is known (records such as `summary` have none).
    held: Vec<Decoded>,
    /// Hold frames for a timestamp (off for stream-json, which has none).
    pub(crate) hold_for_timestamp: bool,
}

/// At most this many frames wait for a first timestamp; past it they go out without one.
const MAX_HELD: usize = 256;

impl ClaudeCodeStream {
    pub fn new() -> Self {
        Self {
            mapper: Mapper::new(),
            derive_catalog: true,
            hold_for_timestamp: true,
            ..Self::default()
        }
    }

    /// Maps one parsed record (`line` 1-based); a stream-json `parent_tool_use_id` names the
    /// Task call a subagent message belongs to. Until a record with a timestamp arrives, frames
    /// are held back so they can be given that first timestamp.
    pub fn record(&mut self, v: &Value, line: u64, out: &mut Vec<Decoded>) {
        if !self.hold_for_timestamp || self.mapper.last_timestamp().is_some() {
            return self.map_record(v, line, out);
        }
        let mut held = std::mem::take(&mut self.held);
        self.map_record(v, line, &mut held);
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
            None => self.held = held,
        }
    }

    fn map_record(&mut self, v: &Value, line: u64, out: &mut Vec<Decoded>) {
        let mut rec = v;
        let mut sidechain = v.get("isSidechain").and_then(Value::as_bool) == Some(true);
        let mut agent = v.get("agentId").and_then(Value::as_str);
        let mut task_link = v.get("parent_tool_use_id").and_then(Value::as_str);
        if task_link.is_some() {
            sidechain = true;
            agent = task_link;
        }
        if v.get("type").and_then(Value::as_str) == Some("progress")
            && let Some(data) = v.get("data")
            && data.get("type").and_then(Value::as_str) == Some("agent_progress")
            && let Some(msg) = data.get("message").filter(|m| m.is_object())
        {
            rec = msg;
            sidechain = true;
            agent = data.get("agentId").and_then(Value::as_str);
            task_link = v.get("parentToolUseID").and_then(Value::as_str);
        }
        let uuid = rec.get("uuid").and_then(Value::as_str);
        if let Some(u) = uuid
            && !self.seen.insert(u.to_owned())
        {
            return;
        }
        let key = if sidechain {
            self.group_key(rec, agent, task_link, uuid)
        } else {
            String::new()
        };
        let chain = self.groups.get(&key).cloned().unwrap_or_default();
        let e = Entry {
            v: rec,
            line,
            file: 0,
            sidechain,
            agent,
            link: task_link,
        };
        // New tools → a fresh derived catalog before the request.
        if self.derive_catalog {
            let mut new = false;
            for b in e.blocks() {
                if b.get("type").and_then(Value::as_str) == Some("tool_use")
                    && let Some(n) = b.get("name").and_then(Value::as_str)
                    && !self.tools.iter().any(|t| t == n)
                {
                    self.tools.push(n.to_owned());
                    new = true;
                }
            }
            if new {
                let f = self.catalog_frame(line);
                out.push(Decoded::frame(f));
            }
        }
        // Usage of the agent's previous API message.
        let rtype = e.str("type");
        let msg_id = rec.pointer("/message/id").and_then(Value::as_str);
        let starts_other = match rtype {
            Some("assistant") => self.pending.get(&key).is_some_and(|(p, _, _)| {
                p.pointer("/message/id").and_then(Value::as_str) != msg_id
            }),
            Some("user") => e.block_ids("tool_result").next().is_none(),
            _ => false,
        };
        if starts_other {
            self.flush(&key, out);
        }
        for b in e.blocks() {
            if b.get("type").and_then(Value::as_str) == Some("tool_use")
                && let Some(id) = b.get("id").and_then(Value::as_str)
            {
                self.use_chain.insert(id.to_owned(), chain.clone());
                if matches!(
                    b.get("name").and_then(Value::as_str),
                    Some("Task" | "Agent")
                ) {
                    let prompt = b.pointer("/input/prompt").and_then(Value::as_str);
                    self.tasks.push((id.to_owned(), prompt.map(str::to_owned)));
                }
            }
        }
        let ctx = RecCtx {
            line,
            chain: &chain,
            file: None,
            last_of_message: false,
        };
        self.mapper.record(rec, &ctx, out);
        if rtype == Some("assistant") && msg_id.is_some() {
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
            self.pending
                .insert(key, (Value::Object(small), line, chain));
        }
    }

    fn group_key(
        &mut self,
        rec: &Value,
        agent: Option<&str>,
        link: Option<&str>,
        uuid: Option<&str>,
    ) -> String {
        let key = match agent {
            Some(a) => a.to_owned(),
            None => rec
                .get("parentUuid")
                .and_then(Value::as_str)
                .and_then(|p| self.uuid_group.get(p).cloned())
                .unwrap_or_else(|| {
                    let u = uuid.unwrap_or("");
                    format!("sidechain-{}", u.get(..8).unwrap_or(u))
                }),
        };
        if let Some(u) = uuid {
            self.uuid_group.insert(u.to_owned(), key.clone());
        }
        if !self.groups.contains_key(&key) {
            let prompt = Entry {
                v: rec,
                line: 0,
                file: 0,
                sidechain: true,
                agent: None,
                link: None,
            }
            .user_text();
            let pos = match link {
                Some(l) => self.tasks.iter().position(|(id, _)| id == l),
                None => prompt.and_then(|p| {
                    self.tasks
                        .iter()
                        .position(|(_, tp)| tp.as_deref().is_some_and(|tp| tp.trim() == p.trim()))
                }),
            };
            let task = match pos {
                Some(i) => Some(self.tasks.remove(i).0),
                None => link.map(str::to_owned),
            };
            let mut chain = task
                .as_ref()
                .and_then(|t| self.use_chain.get(t).cloned())
                .unwrap_or_default();
            chain.push(Delegation {
                agent_id: key.clone(),
                invocation_id: task.unwrap_or_default(),
            });
            self.groups.insert(key.clone(), chain);
        }
        key
    }

    fn flush(&mut self, key: &str, out: &mut Vec<Decoded>) {
        if let Some((rec, line, chain)) = self.pending.remove(key) {
            let ctx = RecCtx {
                line,
                chain: &chain,
                file: None,
                last_of_message: true,
            };
            let ts = rec.get("timestamp").and_then(Timestamp::from_json);
            let msg = rec.get("message").cloned().unwrap_or(Value::Null);
            self.mapper.message_end(&rec, &msg, &ctx, ts, out);
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
        f
    }

    /// Emits the usage / turn end of every API message still pending (and frames held for a
    /// timestamp).
    pub fn finish_messages(&mut self, out: &mut Vec<Decoded>) {
        out.append(&mut self.held);
        let mut keys: Vec<String> = self.pending.keys().cloned().collect();
        keys.sort();
        for k in keys {
            self.flush(&k, out);
        }
    }

    /// Keeps a record as an `x-claude-code.<kind>` frame, unmapped.
    pub fn record_ext(&mut self, v: &Value, kind: &str, line: u64, out: &mut Vec<Decoded>) {
        let ctx = RecCtx {
            line,
            chain: &[],
            file: None,
            last_of_message: false,
        };
        self.mapper.ext(v, kind, &ctx, out);
    }

    /// End of input: pending usage, then the pairing findings.
    pub fn finish(&mut self, out: &mut Vec<Decoded>) {
        self.finish_messages(out);
        self.mapper.finish(out);
    }
}

impl Decoder for ClaudeCodeStream {
    fn line(&mut self, line: u64, text: &str, out: &mut Vec<Decoded>) {
        if text.trim().is_empty() {
            return;
        }
        match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::Object(_)) => self.record(&v, line, out),
            Ok(_) => out.push(Decoded::Malformed(ParseError::new(
                line,
                ParseErrorKind::NotObject,
                text,
            ))),
            Err(e) => out.push(Decoded::Malformed(ParseError::new(
                line,
                ParseErrorKind::Json(e.to_string()),
                text,
            ))),
        }
    }

    fn finish(&mut self, out: &mut Vec<Decoded>) {
        Self::finish(self, out);
    }
}
