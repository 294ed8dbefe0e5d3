//! The indexer: brings the library's store up to date with the session files on disk.
//!
//! Who calls it: `rawpv search` and `rawpv sessions` (once, before answering: [`update`]), the
//! browser's indexing thread (`super::live`, an [`Indexer`] run again whenever the watcher sees
//! a change).
//!
//! What a file gives ([`read`]): the file is folded by the same decoders and reducer as the
//! viewer (outputs kept in memory while it is indexed, so each is parsed once), then one
//! [`SessionRow`] (issue 27 item 3), one [`CallRow`] per call and one [`Doc`] per prompt, agent
//! text, thinking block and call ([`doc_text`]: the text the viewer's search reads, outputs
//! read back from the file).
//!
//! Invariants:
//! * A file is read again only when its [`Stamp`] (device, inode, size, mtime; with its
//!   subagent files', [`Indexer::stamps_of`]) changed. An
//!   [`Indexer`] that keeps tails (the browser's) reads a file modified in the last
//!   [`TAIL_RECENT`] through the append path (`super::append`): from where it was indexed, its
//!   changed rows written alone ([`Store::put_delta`]); a file it cannot follow, and every file
//!   of a one-shot [`update`], is read whole and its rows replaced in one transaction (with
//!   other files' in a batch: at most [`BATCH_BYTES`] of files or [`BATCH_TIME`] apart). Both
//!   ways give the same rows (`tests/it/library_append.rs`).
//! * Files the store knows that no longer exist are removed, words and all, and the store
//!   purged ([`Store::purge`]): their text is not left in the index's bytes.
//! * Decoding runs on worker threads (all cores but the writer's), writing on the caller's;
//!   files are read newest first, so the sessions a user looks at first are there first.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::store::{CallRow, Doc, SessionRow, Stamp, Store};
use crate::session::{Item, MessageKind, Session};

/// File bytes written to the index in one transaction at most (a cold index's batches).
pub const BATCH_BYTES: u64 = 32 << 20;
/// A batch is written at least this often, so rows appear while a cold index runs.
pub const BATCH_TIME: std::time::Duration = std::time::Duration::from_millis(250);

/// How far an update got (for the status bar and the benchmark).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// Files to read in this update and read so far.
    pub files: usize,
    pub files_done: usize,
    /// Their bytes, and the bytes read so far.
    pub bytes: u64,
    pub bytes_done: u64,
    /// Files removed because they no longer exist.
    pub removed: usize,
}

/// The text of item `i` that is indexed and searched: a message's text; a call's tool name,
/// input and output strings (and keys) and stream text (`crate::session::query::own_text`: the
/// viewer's `/` text without the call's hooks, which are on other lines than the call's
/// records). `None` for other rows (usage, events).
pub fn doc_text(session: &Session, i: usize) -> Option<String> {
    match session.items.get(i)? {
        Item::Message(m) if !m.text.is_empty() => Some(m.text.clone()),
        Item::Invocation(_) => Some(crate::session::query::own_text(session, i)),
        Item::Message(_) | Item::Event(_) => None,
    }
}

/// [`super::store::Doc::recipe`] of item `i`, the `ordinal`-th document of its kind on its
/// line: a message made by one frame; a call whose request, result and stream chunks (at most
/// 64; RAWP files only, `streams`: a Claude Code progress record finds its call through the
/// records between) are on known lines. `None` otherwise (the search then reads the whole
/// file).
fn recipe(session: &Session, i: usize, ordinal: u32, streams: bool) -> Option<String> {
    let mut extra: Vec<u64> = Vec::new();
    match session.items.get(i)? {
        Item::Message(m) => {
            if m.line == 0 || m.last_line != m.line {
                return None;
            }
        }
        Item::Invocation(k) => {
            let inv = &session.invocations[*k];
            if inv.request_line == 0
                || inv.stream.len() > 64
                || (!streams && !inv.stream.is_empty())
            {
                return None;
            }
            extra.extend(inv.result_line);
            extra.extend(inv.stream.chunks().map(|c| c.line));
            if extra.contains(&0) {
                return None;
            }
            extra.sort_unstable();
            extra.dedup();
            extra.retain(|&l| l != inv.request_line);
        }
        Item::Event(_) => return None,
    }
    let mut r = ordinal.to_string();
    for (n, l) in extra.iter().enumerate() {
        r.push(if n == 0 { ':' } else { ',' });
        r.push_str(&l.to_string());
    }
    Some(r)
}

/// The kind of document item `i` is (`prompt`, `text`, `thinking`, `call`).
pub fn doc_kind(session: &Session, i: usize) -> Option<&'static str> {
    match session.items.get(i)? {
        Item::Message(m) => Some(match m.kind {
            MessageKind::Prompt => "prompt",
            MessageKind::AgentText => "text",
            MessageKind::Thinking => "thinking",
        }),
        Item::Invocation(_) => Some("call"),
        Item::Event(_) => None,
    }
}

/// The agent label of a format.
fn agent_of(format: crate::import::Format) -> &'static str {
    let f = format.as_str();
    if f.starts_with("claude") || f == "stream-json" {
        "claude"
    } else if f.starts_with("codex") {
        "codex"
    } else if f.starts_with("gemini") {
        "gemini"
    } else {
        ""
    }
}

/// One line of a title (whitespace runs as one space), at most 200 characters.
fn one_line(s: &str) -> Option<String> {
    let line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    (!line.is_empty()).then(|| line.chars().take(crate::browse::PROMPT_CHARS).collect())
}

/// The agent version and git branch named in the first records (Claude Code `version` /
/// `gitBranch`, Codex `session_meta.payload.cli_version` / `git.branch`).
pub(super) fn version_and_branch(path: &Path) -> (Option<String>, Option<String>) {
    use std::io::Read;
    let mut buf = Vec::new();
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.take(64 * 1024).read_to_end(&mut buf);
    }
    let text = String::from_utf8_lossy(&buf);
    let (mut version, mut branch) = (None, None);
    let s = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        version = version
            .or_else(|| s(v.get("version")))
            .or_else(|| s(v.pointer("/payload/cli_version")));
        branch = branch
            .or_else(|| s(v.get("gitBranch")))
            .or_else(|| s(v.pointer("/payload/git/branch")));
        if version.is_some() && branch.is_some() {
            break;
        }
    }
    (version, branch)
}

/// Folds `path` with every input and output in memory (no backing file): the indexer reads
/// each call's text once, instead of reading each output back from the file as a viewer's
/// session does (`source::file::fold_path`). The same decoders and reducer, so the same text
/// (`tests/it/skip_outputs.rs` holds the two ways equal). Memory: the session's outputs, for
/// as long as one file is indexed.
fn fold_whole(path: &Path) -> std::io::Result<(Session, crate::import::Format)> {
    use crate::source::file::{FileEvent, ReadOptions, read_path_with};
    let (tx, rx) = std::sync::mpsc::sync_channel::<FileEvent>(8);
    let owned = path.to_path_buf();
    let reader = std::thread::spawn(move || {
        read_path_with(
            &owned,
            ReadOptions {
                defer_outputs: false,
            },
            |ev| match ev {
                FileEvent::Batch(_) | FileEvent::Format(_) => tx.send(ev).is_ok(),
                FileEvent::Progress { .. } => true,
            },
        )
    });
    let mut session = Session::new();
    for ev in rx {
        match ev {
            FileEvent::Format(f) => session.reparse = crate::import::reparse_for(f),
            FileEvent::Batch(batch) => {
                for d in batch {
                    session.apply(d);
                }
            }
            FileEvent::Progress { .. } => {}
        }
    }
    let format = reader
        .join()
        .map_err(|_| std::io::Error::other("the file reader thread panicked"))??;
    session.finish();
    Ok((session, format))
}

/// The row a file gets before (or instead of) its fold: its path, stamp and directory project.
pub(super) fn base_row(path: &Path, project: &str, stamp: Stamp) -> SessionRow {
    SessionRow {
        path: path.to_path_buf(),
        stamp,
        project: project.to_owned(),
        ..SessionRow::default()
    }
}

/// What the library keeps of one file (module docs); `project` is the directory's project,
/// used when the session names no `cwd`. An unreadable file gives a row with its `error`.
pub fn read(path: &Path, project: &str) -> (SessionRow, Vec<CallRow>, Vec<Doc>) {
    let stamp = Indexer::once()
        .stamps_of(&vec![(path.to_path_buf(), String::new())])
        .pop()
        .flatten();
    read_stamped(path, project, stamp.unwrap_or_default())
}

/// [`read`] of a file whose stamp ([`Indexer::stamps_of`]) was taken before.
fn read_stamped(path: &Path, project: &str, stamp: Stamp) -> (SessionRow, Vec<CallRow>, Vec<Doc>) {
    let mut row = base_row(path, project, stamp);
    let shown = crate::render::text::visible(&path.display().to_string());
    if let Some(e) = crate::import::not_a_session(path, &shown) {
        row.error = Some(e);
        return (row, Vec::new(), Vec::new());
    }
    let (s, format) = match fold_whole(path) {
        Ok(x) => x,
        Err(e) => {
            row.error = Some(format!("cannot read {shown}: {e}"));
            return (row, Vec::new(), Vec::new());
        }
    };
    let row = summarize(row, &s, format, version_and_branch(path), &[]);
    let by_line = recipes_by_line(path, format, row.session_id.as_deref());
    let mut ordinals = Ordinals::default();
    let (mut calls, mut docs) = (Vec::new(), Vec::new());
    for i in 0..s.items.len() {
        let ordinal = ordinals.next(&s, i);
        let (call, doc) = item_rows(&s, i, ordinal, by_line, format);
        calls.extend(call);
        docs.extend(doc);
    }
    (row, calls, docs)
}

/// Whether documents of a file can be read back from their own lines (`Doc::recipe`): a format
/// of one record a line, and no subagent files (their records' lines are another file's).
pub(super) fn recipes_by_line(
    path: &Path,
    format: crate::import::Format,
    session_id: Option<&str>,
) -> bool {
    super::search::by_line(format)
        && (format != crate::import::Format::ClaudeCode
            || crate::import::cc_files::subagent_files(path, session_id).is_empty())
}

/// The k-th document of its kind on its line, item by item in order (empty messages count:
/// the search's decode of the same lines makes them too). Items are only ever appended to a
/// session, so an item's ordinal never changes as its file grows.
#[derive(Debug, Clone, Default)]
pub(super) struct Ordinals {
    counts: HashMap<(&'static str, u64), u32>,
}

impl Ordinals {
    /// Item `i`'s ordinal (`None` for rows that are no document); call once per item, in order.
    pub(super) fn next(&mut self, s: &Session, i: usize) -> Option<u32> {
        let kind = doc_kind(s, i)?;
        let line = match &s.items[i] {
            Item::Message(m) => m.line,
            Item::Invocation(k) => s.invocations[*k].request_line,
            Item::Event(_) => return None,
        };
        let n = self.counts.entry((kind, line)).or_default();
        *n += 1;
        Some(*n - 1)
    }
}

/// Item `i`'s call row (a call) and document (a prompt, text, thinking block or call), with
/// its `ordinal` ([`Ordinals`]); `by_line`: [`recipes_by_line`].
pub(super) fn item_rows(
    s: &Session,
    i: usize,
    ordinal: Option<u32>,
    by_line: bool,
    format: crate::import::Format,
) -> (Option<CallRow>, Option<Doc>) {
    let Some(item) = s.items.get(i) else {
        return (None, None);
    };
    let call = match item {
        Item::Invocation(k) => {
            let inv = &s.invocations[*k];
            Some(CallRow {
                item: i as u32,
                line: inv.request_line,
                tool: inv.tool_name.clone(),
                status: inv.status.word(true).to_owned(),
                summary: inv.summary.to_string(),
                started: inv.requested_at.map(|t| t.0),
                ended: inv.ended_at.map(|t| t.0),
            })
        }
        Item::Message(_) | Item::Event(_) => None,
    };
    let (Some(kind), Some(text)) = (doc_kind(s, i), doc_text(s, i)) else {
        return (call, None);
    };
    let recipe = ordinal
        .filter(|_| by_line)
        .and_then(|k| recipe(s, i, k, format == crate::import::Format::RawpNdjson));
    let (line, ts, tool) = match item {
        Item::Message(m) => (m.line, m.timestamp, String::new()),
        Item::Invocation(k) => {
            let inv = &s.invocations[*k];
            (
                inv.request_line,
                inv.requested_at.or(inv.ended_at),
                inv.tool_name.clone(),
            )
        }
        Item::Event(_) => return (call, None),
    };
    let doc = Doc {
        item: i as u32,
        line,
        kind,
        tool,
        ts: ts.map(|t| t.0),
        // Composed, as queries are (`search::composed`, attack 11 #4).
        text: match super::search::composed(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(c) => c,
        },
        recipe,
    };
    (call, Some(doc))
}

/// The session row of the folded session `s` (issue 27 item 3): `row` as [`base_row`] made it,
/// filled from every item, then from `extra` (event frames the end of the file would add, as
/// rows after the last item: the append path's [`crate::source::file::Growing::peek_finish`]).
/// `vb`: [`version_and_branch`] of the file.
pub(super) fn summarize(
    mut row: SessionRow,
    s: &Session,
    format: crate::import::Format,
    vb: (Option<String>, Option<String>),
    extra: &[&crate::protocol::Frame],
) -> SessionRow {
    format.as_str().clone_into(&mut row.format);
    agent_of(format).clone_into(&mut row.agent);
    if let Some((_, e)) = s.sessions.iter().next() {
        row.session_id = e.id.as_deref().map(str::to_owned);
        if let Some(cwd) = &e.cwd {
            row.project = String::from(&**cwd);
        }
    }
    row.compactions = s.sessions.iter().map(|(_, e)| e.compactions).sum();
    (row.agent_version, row.git_branch) = vb;

    let mut first: Option<i64> = None;
    let mut last: Option<i64> = None;
    let mut seen = |t: Option<crate::protocol::Timestamp>| {
        if let Some(t) = t {
            first = Some(first.map_or(t.0, |f| f.min(t.0)));
            last = Some(last.map_or(t.0, |l| l.max(t.0)));
        }
    };
    let mut title: Option<String> = None;
    let mut first_prompt: Option<String> = None;
    let mut usage = Vec::new();
    let mut tools: HashMap<&str, u64> = HashMap::new();
    let mut agents: HashSet<&str> = HashSet::new();
    let mut event = |f: &crate::protocol::Frame,
                     seen: &mut dyn FnMut(Option<crate::protocol::Timestamp>)| {
        seen(f.envelope.timestamp);
        if let Some(u) = crate::usage::facts::usage_fact(f) {
            usage.push(u);
        }
        let t = f.frame_type.as_str();
        if matches!(
            t,
            "x-claude-code.summary" | "x-claude-code.custom-title" | "x-claude-code.ai-title"
        ) {
            let p = f.payload_json();
            let found = ["customTitle", "aiTitle", "title", "summary"]
                .iter()
                .find_map(|k| p.get(*k).and_then(Value::as_str).and_then(one_line));
            if found.is_some() {
                title = found;
            }
        }
    };
    for item in &s.items {
        match item {
            Item::Event(f) => event(f, &mut seen),
            Item::Message(m) => {
                seen(m.timestamp);
                if m.kind == MessageKind::Prompt && first_prompt.is_none() {
                    first_prompt = one_line(&m.text);
                }
                if let Some(d) = m.delegation_chain.last() {
                    agents.insert(&d.agent_id);
                }
            }
            Item::Invocation(k) => {
                let inv = &s.invocations[*k];
                seen(inv.requested_at);
                seen(inv.ended_at);
                *tools.entry(inv.tool_name.as_str()).or_default() += 1;
                if let Some(d) = inv.delegation_chain.last() {
                    agents.insert(&d.agent_id);
                }
                row.calls += 1;
                row.errors += u64::from(inv.status.is_failure());
                row.cancelled +=
                    u64::from(matches!(inv.status, crate::session::CallStatus::Cancelled));
            }
        }
    }
    for f in extra {
        event(f, &mut seen);
    }
    row.first_ts = first;
    row.last_ts = last;
    row.title = title.or(first_prompt).unwrap_or_default();
    let mut tools: Vec<(&str, u64)> = tools.into_iter().collect();
    tools.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    row.tools = tools.into_iter().map(|(t, _)| t.to_owned()).collect();
    row.subagents = agents.iter().filter(|a| !a.is_empty()).count() as u64;
    let models: std::collections::BTreeSet<String> = usage
        .iter()
        .filter_map(|u| u.model.as_deref())
        .filter(|m| !m.starts_with('<'))
        .map(str::to_owned)
        .collect();
    row.models = models.into_iter().collect();
    // Tokens deduplicated as `rawpv stats` does (ccusage's rule).
    let facts = [crate::usage::facts::FileFacts {
        path: row.path.clone(),
        usage,
        ..Default::default()
    }];
    let (kept, _) = crate::usage::report::dedupe(&facts);
    // Saturating: a hostile file's counts near u64::MAX must not wrap (or panic in a debug
    // build, as a fixture of absurd usage did).
    for (_, u) in kept {
        row.tokens_in = row.tokens_in.saturating_add(u.tokens.input);
        row.tokens_out = row.tokens_out.saturating_add(u.tokens.output);
        row.tokens_cache_read = row.tokens_cache_read.saturating_add(u.tokens.cache_read);
        row.tokens_cache_write = row.tokens_cache_write.saturating_add(u.tokens.cache_write);
    }
    row
}

/// The session files of the library: under `roots` (the browser's layouts) and the files
/// named, with the project their directory names.
pub fn list(paths: &[PathBuf]) -> crate::usage::report::Inputs {
    crate::usage::report::list(paths)
}

/// Updates `store` for `inputs` once (module docs), every changed file read whole:
/// [`Indexer::update`] of an [`Indexer::once`].
///
/// # Errors
/// The store's first write error.
pub fn update(
    store: &mut dyn Store,
    inputs: &crate::usage::report::Inputs,
    progress: impl FnMut(&Progress) -> bool,
) -> Result<Progress, String> {
    Indexer::once().update(store, inputs, progress)
}

/// The session of a 2.0.x subagent file: the `sessionId` in its first 2 KiB (Claude Code writes
/// it among a record's first keys), else what `cc_files::first_session_id` finds (it parses the
/// complete lines of 64 KiB). Every update of `rawpv search` looks at every such file, so the
/// cheap look first: 2,000 of them took 120 ms with the parse alone (debug build).
fn agent_session(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = Vec::with_capacity(2048);
    std::fs::File::open(path)
        .ok()?
        .take(2048)
        .read_to_end(&mut head)
        .ok()?;
    let line = head.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let found = ["\"sessionId\":\"", "\"sessionId\": \""]
        .iter()
        .find_map(|key| {
            let at = memchr::memmem::find(line, key.as_bytes())? + key.len();
            let end = memchr::memchr(b'"', &line[at..])?;
            let id = std::str::from_utf8(&line[at..at + end]).ok()?;
            (!id.is_empty() && !id.contains('\\')).then(|| id.to_owned())
        });
    found.or_else(|| crate::import::cc_files::first_session_id(path))
}

/// Now, ns since the epoch (as [`Stamp::mtime_ns`]).
fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// Files read through the append path at most at once (each holds its session in memory).
pub const TAILS: usize = 8;
/// … and at most this many bytes of them.
pub const TAIL_BYTES: u64 = 256 << 20;
/// A file modified within this long is read through the append path when it changes (a
/// session being written now).
pub const TAIL_RECENT: std::time::Duration = std::time::Duration::from_mins(15);

/// The indexer of one process: [`update`]s that remember, for the files written to recently,
/// where they were indexed up to (`super::append::Tail`), so that an append is read and
/// written alone. A tail goes once its file was not written to for [`Indexer::recent`] (its
/// session leaves memory), or past [`TAILS`] / [`TAIL_BYTES`] (the least recently used first).
pub struct Indexer {
    tails: super::append::Tails,
    /// At most this many tails ([`TAILS`]; 0: every changed file is read whole).
    pub max_tails: usize,
    /// … and at most this many bytes of their files ([`TAIL_BYTES`]).
    pub max_tail_bytes: u64,
    /// Files modified within this long get a tail ([`TAIL_RECENT`]).
    pub recent: std::time::Duration,
    /// The `sessionId` of each 2.0.x subagent file (`agent-*.jsonl` beside the transcripts), by
    /// device and inode: read once (its first records do not change as it grows).
    agent_sessions: HashMap<(u64, u64), Option<String>>,
}

impl Default for Indexer {
    fn default() -> Self {
        Self::new()
    }
}

impl Indexer {
    /// An indexer that keeps tails (the browser's indexing thread).
    pub fn new() -> Self {
        Self {
            tails: super::append::Tails::default(),
            max_tails: TAILS,
            max_tail_bytes: TAIL_BYTES,
            recent: TAIL_RECENT,
            agent_sessions: HashMap::new(),
        }
    }

    /// An indexer that reads every changed file whole (one update, then the process ends).
    pub fn once() -> Self {
        Self {
            max_tails: 0,
            ..Self::new()
        }
    }

    /// How many files it follows now.
    pub fn tails(&self) -> usize {
        self.tails.len()
    }

    /// Forgets every tail (the store was replaced by another file: what they wrote is not in
    /// it).
    pub fn forget(&mut self) {
        self.tails.clear();
    }

    /// The stamp of each input as the index keeps it: the file's own ([`Stamp::of`]; `None`: it
    /// cannot be read), and for a Claude Code transcript its subagent files' folded in (their
    /// sizes added, the latest modification time): the session's text is theirs too, so an
    /// append to a subagent file changes its session's stamp and the session is read again
    /// (it was not: attack of session 14). The subagent files are those the decoder reads
    /// (`crate::import::cc_files::subagent_files`): `<dir>/<stem>/subagents/agent-*.jsonl`,
    /// and `<dir>/agent-*.jsonl` whose records carry the transcript's session id (its stem), one
    /// directory listing per directory.
    pub fn stamps_of(&mut self, inputs: &crate::usage::report::Inputs) -> Vec<Option<Stamp>> {
        let agent = |p: &Path| {
            p.extension().is_some_and(|x| x == "jsonl")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("agent-"))
                && std::fs::metadata(p).is_ok_and(|m| m.is_file())
        };
        // Directory → session id → its 2.0.x subagent files' stamps.
        let mut beside: HashMap<PathBuf, HashMap<String, Vec<Stamp>>> = HashMap::new();
        let mut out = Vec::with_capacity(inputs.len());
        for (path, _) in inputs {
            let Some(own) = Stamp::of(path) else {
                out.push(None);
                continue;
            };
            let (Some(dir), Some(stem)) = (path.parent(), path.file_stem()) else {
                out.push(Some(own));
                continue;
            };
            if path.extension().is_none_or(|x| x != "jsonl") || agent(path) {
                out.push(Some(own));
                continue;
            }
            let mut subs: Vec<Stamp> = std::fs::read_dir(dir.join(stem).join("subagents"))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| agent(p))
                .filter_map(|p| Stamp::of(&p))
                .collect();
            let sessions = &mut self.agent_sessions;
            let by_session = beside.entry(dir.to_path_buf()).or_insert_with(|| {
                let mut m: HashMap<String, Vec<Stamp>> = HashMap::new();
                for p in std::fs::read_dir(dir)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| agent(p))
                {
                    let Some(st) = Stamp::of(&p) else { continue };
                    let sid = sessions
                        .entry((st.dev, st.ino))
                        .or_insert_with(|| agent_session(&p));
                    if let Some(sid) = sid {
                        m.entry(sid.clone()).or_default().push(st);
                    }
                }
                m
            });
            if let Some(v) = by_session.get(&*stem.to_string_lossy()) {
                subs.extend(v.iter().copied());
            }
            let mut s = own;
            for sub in subs {
                s.size = s.size.saturating_add(sub.size);
                s.mtime_ns = s.mtime_ns.max(sub.mtime_ns);
            }
            out.push(Some(s));
        }
        out
    }

    /// Whether a file of `stamp` may get a tail now.
    fn recent(&self, stamp: &Stamp) -> bool {
        let now = now_ns();
        self.max_tails > 0
            && stamp.size <= self.max_tail_bytes
            && now.saturating_sub(stamp.mtime_ns) <= self.recent.as_nanos() as i64
    }

    /// Updates `store` for `inputs` (module docs); `progress` is called after each file and
    /// may return `false` to stop (what was written stays). Returns the last progress.
    ///
    /// # Errors
    /// The store's first write error.
    pub fn update(
        &mut self,
        store: &mut dyn Store,
        inputs: &crate::usage::report::Inputs,
        mut progress: impl FnMut(&Progress) -> bool,
    ) -> Result<Progress, String> {
        type Read = (super::store::Indexed, Option<Box<super::append::Tail>>);
        let known: BTreeMap<PathBuf, Stamp> = store.stamps()?.into_iter().collect();
        let mut p = Progress::default();
        let listed: HashSet<&Path> = inputs.iter().map(|(p, _)| p.as_path()).collect();
        for path in known.keys() {
            if !listed.contains(path.as_path()) && !path.exists() {
                store.remove(path)?;
                self.tails.take(path);
                p.removed += 1;
            }
        }
        let mut todo: Vec<(PathBuf, String, Stamp)> = Vec::new();
        let stamps = self.stamps_of(inputs);
        for ((path, project), stamp) in inputs.iter().zip(stamps) {
            match stamp {
                None => {
                    self.tails.take(path);
                    if known.contains_key(path) {
                        store.remove(path)?;
                        p.removed += 1;
                    }
                }
                Some(s) if known.get(path) == Some(&s) => {}
                Some(s) => todo.push((path.clone(), project.clone(), s)),
            }
        }
        if p.removed > 0 {
            store.purge()?;
        }
        // A session no longer written to lets its tail go (its session leaves memory; it is
        // read whole, and gets a tail again, should it grow again).
        let (recent, now) = (self.recent, now_ns());
        self.tails
            .retain(|s| now.saturating_sub(s.mtime_ns) <= recent.as_nanos() as i64);
        todo.sort_by(|a, b| b.2.mtime_ns.cmp(&a.2.mtime_ns).then(a.0.cmp(&b.0)));
        p.files = todo.len();
        p.bytes = todo.iter().map(|t| t.2.size).sum();
        // Appends first, on this thread: each is a small read and one small transaction.
        let mut whole = Vec::with_capacity(todo.len());
        for (path, project, stamp) in todo {
            let Some(mut tail) = self.tails.take(&path) else {
                whole.push((path, project, stamp));
                continue;
            };
            let was = tail.stamp;
            let Some(delta) = tail.extend(&path, stamp) else {
                whole.push((path, project, stamp));
                continue;
            };
            if !store.put_delta(was, &delta)? {
                // Another process indexed the file meanwhile: read it whole.
                whole.push((path, project, stamp));
                continue;
            }
            tail.written_as(stamp);
            self.tails
                .put(&path, tail, self.max_tails, self.max_tail_bytes);
            p.files_done += 1;
            p.bytes_done += stamp.size;
            if !progress(&p) {
                return Ok(p);
            }
        }
        if whole.is_empty() {
            progress(&p);
            return Ok(p);
        }
        // The newest recent files get a tail (read through the append path from the start).
        let mut tails_left = self.max_tails;
        let todo: Vec<(PathBuf, String, Stamp, bool)> = whole
            .into_iter()
            .map(|(path, project, stamp)| {
                let tail = tails_left > 0 && self.recent(&stamp);
                tails_left -= usize::from(tail);
                (path, project, stamp, tail)
            })
            .collect();
        let workers = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .clamp(1, 8)
            .min(todo.len());
        let next = std::sync::atomic::AtomicUsize::new(0);
        let stop = std::sync::atomic::AtomicBool::new(false);
        let (tx, rx) = std::sync::mpsc::sync_channel::<Read>(workers * 2);
        let (max_tails, max_bytes) = (self.max_tails, self.max_tail_bytes);
        let tails = &mut self.tails;
        std::thread::scope(|scope| -> Result<(), String> {
            for _ in 0..workers {
                let tx = tx.clone();
                let (todo, next, stop) = (&todo, &next, &stop);
                scope.spawn(move || {
                    loop {
                        if stop.load(std::sync::atomic::Ordering::Relaxed) {
                            break;
                        }
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((path, project, stamp, tail)) = todo.get(k) else {
                            break;
                        };
                        let one = if *tail {
                            use super::append::{Built, Tail};
                            match Tail::build(path, project, *stamp) {
                                Built::Followed(t, indexed) => (indexed, Some(t)),
                                Built::Whole(indexed) => (indexed, None),
                                Built::Unsupported => (read_stamped(path, project, *stamp), None),
                            }
                        } else {
                            (read_stamped(path, project, *stamp), None)
                        };
                        if tx.send(one).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            let mut result = Ok(());
            let mut batch: Vec<super::store::Indexed> = Vec::new();
            let mut batch_tails: Vec<Box<super::append::Tail>> = Vec::new();
            let mut batch_bytes = 0u64;
            let mut since = std::time::Instant::now();
            let mut rx = rx.into_iter().peekable();
            while let Some((one, tail)) = rx.next() {
                if result.is_err() {
                    continue;
                }
                batch_bytes += one.0.stamp.size;
                batch.push(one);
                batch_tails.extend(tail);
                // Written in batches (one transaction, FTS5 flushes its postings once), at
                // least every BATCH_TIME so rows appear as they are read.
                let last = rx.peek().is_none();
                if !last && batch_bytes < BATCH_BYTES && since.elapsed() < BATCH_TIME {
                    continue;
                }
                if let Err(e) = store.put_many(&batch) {
                    stop.store(true, std::sync::atomic::Ordering::Relaxed);
                    result = Err(e);
                    continue;
                }
                for t in batch_tails.drain(..) {
                    let path = t.path().to_path_buf();
                    tails.put(&path, t, max_tails, max_bytes);
                }
                p.files_done += batch.len();
                p.bytes_done += batch_bytes;
                batch.clear();
                batch_bytes = 0;
                since = std::time::Instant::now();
                if !progress(&p) {
                    stop.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            }
            result
        })?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A subagent file's session: from its first line's head, with or without a space after
    /// the colon, else (the key past 2 KiB) from the parse of its complete lines.
    #[test]
    fn agent_session_reads_the_head_then_the_lines() {
        let tmp = tempfile::tempdir().unwrap();
        let cases = [
            (
                "{\"parentUuid\":null,\"sessionId\":\"s-1\",\"x\":1}\n",
                Some("s-1"),
            ),
            (
                "{\"parentUuid\": null, \"sessionId\": \"s-2\"}\n",
                Some("s-2"),
            ),
            (
                &*format!(
                    "{{\"pad\":\"{}\",\"sessionId\":\"s-3\"}}\n",
                    "p".repeat(3000)
                ),
                Some("s-3"),
            ),
            ("{\"type\":\"user\"}\n", None),
        ];
        for (k, (text, want)) in cases.iter().enumerate() {
            let p = tmp.path().join(format!("agent-{k}.jsonl"));
            std::fs::write(&p, text).unwrap();
            assert_eq!(agent_session(&p).as_deref(), *want, "{text:.60}");
        }
    }
}
