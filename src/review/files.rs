//! The files model (issue 23 items 1, 2, 4): every path the session read, created, edited,
//! moved or deleted, per file the calls that touched it, lines added and removed, first and last
//! touch, its state, the places where its content changed outside the recorded edits, and the
//! shell commands that may have written files without an edit in the record.
//!
//! Who calls it: `rawpv patch` and `rawpv stats` (`crate::cmd`), the files panel of the viewer
//! (`crate::ui::files`, built off the app task), and tests.
//!
//! Memory (item 6): [`Files::build`] reads each file tool call's record once (a Claude Code
//! `originalFile` is in the record's line, read back through its byte span) and keeps, per
//! touch, only counts and two fingerprints (length and a 64-bit hash) of the file before and
//! after the call: no file content is held. [`Files::net`] reads the first and last touching
//! calls again when a net change is asked for, so at most one file's two sides are in memory.
//!
//! Outside changes: when a call's "before" differs from what the previous change of the same
//! file left (their fingerprints), something not recorded as an edit changed the file between
//! them; the shell and subagent calls in between are kept as the suspects.
//!
//! Invariants: never panics on any session; paths are kept as the calls wrote them and shown
//! relative to the session's `cwd` only when inside it (lexically, no `..` left); untrusted text
//! is raw here, callers make it visible.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;

use super::edits::{self, Fact, Op};
use super::writers;
use crate::protocol::{ByteSpan, Timestamp};
use crate::session::{CallStatus, Deferred, Invocation, Session};

/// Where a call's input, output and record are read from: a [`Session`] on its own thread, or
/// its [`Deferred`] reader on another.
pub trait Records {
    fn input<'a>(&self, inv: &'a Invocation) -> Cow<'a, Value>;
    fn output<'a>(&self, inv: &'a Invocation) -> Option<Cow<'a, Value>>;
    fn line_text(&self, span: ByteSpan) -> Option<String>;
}

impl Records for Session {
    fn input<'a>(&self, inv: &'a Invocation) -> Cow<'a, Value> {
        Self::input(self, inv)
    }
    fn output<'a>(&self, inv: &'a Invocation) -> Option<Cow<'a, Value>> {
        Self::output(self, inv)
    }
    fn line_text(&self, span: ByteSpan) -> Option<String> {
        Self::line_text(self, span).ok()
    }
}

impl Records for Deferred {
    fn input<'a>(&self, inv: &'a Invocation) -> Cow<'a, Value> {
        Self::input(self, inv)
    }
    fn output<'a>(&self, inv: &'a Invocation) -> Option<Cow<'a, Value>> {
        Self::output(self, inv)
    }
    fn line_text(&self, span: ByteSpan) -> Option<String> {
        Self::line_text(self, span).ok()
    }
}

/// A file's content, reduced: its length and a 64-bit hash (equal contents, equal prints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Print(u64, u64);

impl Print {
    pub fn of(text: &str) -> Self {
        let mut h = DefaultHasher::new();
        text.hash(&mut h);
        Self(text.len() as u64, h.finish())
    }
}

/// One call's touch of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touch {
    /// The call: its index among the calls given to [`Files::build`] (`Session::invocations`).
    pub call: usize,
    /// Its feed row (`Invocation::item`).
    pub item: usize,
    /// Its source line (the request's).
    pub line: u64,
    pub tool: String,
    pub op: Op,
    /// When the call was made (its request's timestamp, else its result's).
    pub at: Option<Timestamp>,
    pub added: u32,
    pub removed: u32,
    /// Made by a subagent (a delegated call).
    pub subagent: bool,
    /// The file before and after the call, when the record holds them.
    pub before: Option<Print>,
    pub after: Option<Print>,
    /// The content before this call is not what the previous change left.
    pub outside: Option<Outside>,
}

/// A change of a file between two of its recorded changes that no recorded edit made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outside {
    /// The previous change's call (whose result differs from this call's "before").
    pub after_call: usize,
    /// What ran between the two and may have done it, in order: shell and subagent calls, and
    /// hooks (a Claude Code `PostToolUse` hook that formats the file it was given).
    pub between: Vec<Suspect>,
}

/// Something that ran between two recorded changes of a file and may have changed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suspect {
    /// Its feed row.
    pub item: usize,
    /// Its source line.
    pub line: u64,
    /// The call (as [`Touch::call`]), for a call; `None` for a hook.
    pub call: Option<usize>,
    /// What it is, raw: `Bash: mix format`, `hook PostToolUse:Edit: scripts/post-edit.sh`.
    pub what: String,
}

/// What became of a file in the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Only read.
    Read,
    /// Did not exist before; exists after.
    Created,
    Modified,
    Deleted,
    /// Moved to the path given.
    Moved(String),
    /// Created and deleted again.
    Transient,
}

impl State {
    pub fn label(&self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Created => "created",
            Self::Modified => "modified",
            Self::Deleted => "deleted",
            Self::Moved(_) => "moved",
            Self::Transient => "created and deleted",
        }
    }

    /// One letter for narrow columns: `R`, `A`, `M`, `D`, `→`, `~`.
    pub fn letter(&self) -> char {
        match self {
            Self::Read => 'R',
            Self::Created => 'A',
            Self::Modified => 'M',
            Self::Deleted => 'D',
            Self::Moved(_) => '>',
            Self::Transient => '~',
        }
    }
}

/// One file of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    /// The path, absolute when the session's `cwd` (or the call) makes it so, normalised.
    pub path: String,
    /// The path relative to the session's `cwd` when inside it, else [`Self::path`].
    pub shown: String,
    /// Inside the session's working directory (a patch path can be made).
    pub inside: bool,
    pub touches: Vec<Touch>,
    pub state: State,
    /// Lines added and removed: the net change's when it can be made, else the sum of the
    /// recorded changes'.
    pub added: u32,
    pub removed: u32,
    /// Why the net change cannot be made (`None`: it can, or the file was only read).
    pub no_net: Option<String>,
    /// Recorded changes whose "before" differs from what the previous change left.
    pub outside: usize,
}

impl FileEntry {
    /// Whether any call changed the file.
    pub fn changed(&self) -> bool {
        self.touches.iter().any(|t| t.op.changes())
    }

    /// The first and last touch's times.
    pub fn first(&self) -> Option<Timestamp> {
        self.touches.iter().find_map(|t| t.at)
    }

    pub fn last(&self) -> Option<Timestamp> {
        self.touches.iter().rev().find_map(|t| t.at)
    }
}

/// A shell call (or a subagent with no recorded calls) that may have written files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Writer {
    pub call: usize,
    pub item: usize,
    pub line: u64,
    pub tool: String,
    /// The command as written (raw; for a subagent, its description).
    pub command: String,
    /// Why ([`writers::writes`]).
    pub why: Vec<String>,
    pub at: Option<Timestamp>,
    pub status: CallStatus,
}

/// The files model of a session (module docs).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Files {
    /// Files in order of first touch.
    pub files: Vec<FileEntry>,
    /// Shell commands that may have written files, in order.
    pub writers: Vec<Writer>,
    /// The session's working directory, when it names one.
    pub cwd: Option<String>,
    /// The session's working directory changed (paths stay relative to the first one).
    pub cwd_changed: bool,
    /// Each session's working directory when the input holds several ([`Builder`]).
    pub session_cwds: Vec<Option<String>>,
    /// Changes made on an abandoned branch of a forked conversation (attack 8 #45): not in the
    /// model, since the session ended on another branch.
    pub abandoned: Vec<Abandoned>,
}

/// A change of a file made on a branch of a fork point (a rewind or a retried prompt,
/// `crate::session::forks`) that is not the branch the session ended on: left out of the
/// files model and of the patch, and named in its header (Claude Code's rewind may or may
/// not have restored the file: the record does not say).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Abandoned {
    /// The path as [`FileEntry::shown`] would show it.
    pub shown: String,
    pub tool: String,
    /// The call's source line.
    pub line: u64,
    /// Its feed row.
    pub item: usize,
    /// Its branch (1-based) and the fork point's parent line.
    pub branch: u32,
    pub fork_line: u64,
    /// The branch the session ended on (0: none of this fork point's).
    pub main: u32,
}

/// Both sides of a file's net change: `None` where the file does not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Net {
    pub before: Option<String>,
    pub after: Option<String>,
}

/// The raw `toolUseResult` of a Claude Code call: the result frame's metadata when the decoder
/// kept it there (stdin, stream-json, a RAWP conversion), else the record read back from the
/// result's line (a saved transcript). `None` for other formats, or when the record has
/// several results (the field is then not this call's alone).
pub fn tool_use_result(rec: &dyn Records, inv: &Invocation) -> Option<Value> {
    let meta = |m: &serde_json::Map<String, Value>| {
        m.get("claude_code")
            .and_then(|c| c.get("toolUseResult"))
            .cloned()
    };
    if let Some(v) = inv.result_envelope.as_ref().and_then(|e| meta(&e.metadata)) {
        return Some(v);
    }
    let text = rec.line_text(inv.output_span?)?;
    let v: Value = serde_json::from_str(&text).ok()?;
    if let Some(m) = v.get("metadata").and_then(Value::as_object) {
        // A RAWP frame (a converted transcript).
        return meta(m);
    }
    let rec = &v;
    let results = crate::import::at(rec, &["message", "content"])
        .and_then(Value::as_array)
        .map_or(0, |b| {
            b.iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                .count()
        });
    if results != 1 {
        return None;
    }
    rec.get("toolUseResult")
        .or_else(|| rec.get("tool_use_result"))
        .cloned()
}

/// What call `inv` did to files ([`edits::facts`]); nothing for a call that did not succeed.
pub fn call_facts(rec: &dyn Records, inv: &Invocation) -> Vec<Fact> {
    if inv.status != CallStatus::Succeeded {
        return Vec::new();
    }
    if !wants(&inv.tool_name) {
        return Vec::new();
    }
    let input = rec.input(inv);
    let output = rec.output(inv);
    let tur = matches!(
        inv.tool_name.as_str(),
        "Edit" | "MultiEdit" | "Write" | "NotebookEdit"
    )
    .then(|| tool_use_result(rec, inv))
    .flatten();
    edits::facts(&inv.tool_name, &input, output.as_deref(), tur.as_ref())
}

/// Tools [`edits::facts`] knows (so other calls are never read back): what `rawpv stats` keeps
/// (`session::tally::Keep`).
pub fn wants(tool: &str) -> bool {
    matches!(
        tool,
        "Read"
            | "NotebookRead"
            | "read_file"
            | "read_many_files"
            | "Edit"
            | "MultiEdit"
            | "NotebookEdit"
            | "Write"
            | "write_file"
            | "replace"
            | "edit"
            | "apply_patch"
    ) || tool.starts_with("str_replace")
        || tool.starts_with("text_editor")
}

/// `path` made absolute against `cwd` (when relative) and normalised lexically (`.` dropped,
/// `..` taken back where it can be).
pub fn normalise(path: &str, cwd: Option<&str>) -> String {
    let joined = match cwd {
        Some(c) if !path.starts_with('/') => format!("{}/{path}", c.trim_end_matches('/')),
        _ => path.to_owned(),
    };
    let abs = joined.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in joined.split('/') {
        match seg {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    let body = parts.join("/");
    if abs { format!("/{body}") } else { body }
}

/// The directory a call's relative paths are relative to when it is not the session's `cwd`: a
/// Codex `apply_patch`'s `workdir` (Codex resolves the patch there: attack 8 #26), else the
/// call's own session's working directory in an input of several (`session_cwds`).
fn base_dir(
    rec: &dyn Records,
    inv: &Invocation,
    cwd: Option<&str>,
    session_cwds: &[Option<String>],
) -> Option<String> {
    if inv.tool_name == "apply_patch"
        && let Some(w) = rec
            .input(inv)
            .get("workdir")
            .and_then(Value::as_str)
            .filter(|w| w.starts_with('/'))
    {
        return Some(w.to_owned());
    }
    session_cwds
        .get(inv.session as usize)
        .cloned()
        .flatten()
        .filter(|c| Some(c.as_str()) != cwd)
}

/// `path` relative to `cwd` when inside it.
fn relative(path: &str, cwd: Option<&str>) -> Option<String> {
    let cwd = cwd?.trim_end_matches('/');
    let rest = path.strip_prefix(cwd)?.strip_prefix('/')?;
    (!rest.is_empty() && !rest.split('/').any(|s| s == "..")).then(|| rest.to_owned())
}

/// Why the record does not give a side, for a call of `tool`.
fn unknown_why(tool: &str, before: bool) -> String {
    let side = if before { "before" } else { "after" };
    match tool {
        "Edit" | "MultiEdit" if before => format!(
            "the file before this {tool} is not in the record (no originalFile: older Claude Code versions did not keep it)"
        ),
        "Edit" | "MultiEdit" => format!(
            "the file after this {tool} is not in the record (its structured patch and replacement do not apply to its originalFile)"
        ),
        "NotebookEdit" => "a NotebookEdit records the cell, not the notebook".to_owned(),
        "apply_patch" => {
            format!("a Codex patch holds only the changed lines, not the file {side} it")
        }
        "replace" | "edit" => {
            format!("a Gemini {tool} holds only the replaced text, not the file {side} it")
        }
        "Write" | "write_file" => format!("the file {side} this {tool} is not in the record"),
        _ => format!("the file {side} this {tool} call is not in the record"),
    }
}

/// A files model being built, one call at a time: [`Files::build`] runs it to its end; the
/// viewer steps it within a time budget ([`Builder::step_session`]) so a big session never
/// holds up a key.
#[derive(Debug, Clone, Default)]
pub struct Builder {
    files: Vec<FileEntry>,
    by_path: HashMap<String, usize>,
    writers: Vec<Writer>,
    /// Per file: the print after its last change, and that change's call and row.
    left: HashMap<usize, (Option<Print>, usize, usize)>,
    cwd: Option<String>,
    cwd_changed: bool,
    /// Each session's working directory (an input of several sessions, SPEC §6): a call's
    /// relative paths are its own session's (attack 8 #25). Empty: every call's is `cwd`.
    session_cwds: Vec<Option<String>>,
    /// The session's fork points ([`Builder::for_session`]): calls on a branch other than the
    /// one the session ended on are left out ([`Abandoned`]).
    forks: crate::session::forks::ForkTable,
    abandoned: Vec<Abandoned>,
    /// Calls added so far (the session's index of the next one, for [`Builder::step_session`]).
    pub done: usize,
}

impl Builder {
    pub fn new(cwd: Option<&str>, cwd_changed: bool) -> Self {
        Self {
            cwd: cwd.map(str::to_owned),
            cwd_changed,
            ..Self::default()
        }
    }

    /// A builder for `session` (its first session's `cwd`).
    pub fn for_session(session: &Session) -> Self {
        let (cwd, changed) = session
            .sessions
            .iter()
            .next()
            .map_or((None, false), |(_, e)| (e.cwd.as_deref(), e.cwd_changed));
        let mut b = Self::new(cwd, changed);
        if session.sessions.is_multi() {
            b.session_cwds = session
                .sessions
                .iter()
                .map(|(_, e)| e.cwd.as_deref().map(str::to_owned))
                .collect();
        }
        b.forks = crate::session::forks::ForkTable::build(session);
        b
    }

    /// Adds `session`'s calls from [`Self::done`] on until `budget` is spent (checked after each
    /// call); `true` when every call is in.
    pub fn step_session(&mut self, session: &Session, budget: std::time::Duration) -> bool {
        let started = std::time::Instant::now();
        let between = |a: usize, b: usize| suspects(session, a, b);
        while let Some(inv) = session.invocations.get(self.done) {
            self.add(session, self.done, inv, &between);
            self.done += 1;
            if started.elapsed() >= budget {
                break;
            }
        }
        self.done >= session.invocations.len()
    }

    /// Adds call `idx`.
    pub fn add(
        &mut self,
        rec: &dyn Records,
        idx: usize,
        inv: &Invocation,
        between: &dyn Fn(usize, usize) -> Vec<Suspect>,
    ) {
        let tool = inv.tool_name.as_str();
        if edits::is_shell(tool) || edits::is_subagent(tool) {
            self.add_runner(rec, idx, inv);
            return;
        }
        let cwd = self.cwd.as_deref();
        // Relative to the first working directory even when it changed later (the patch header
        // says so): the files did not move (attack 8 #18).
        let shown_cwd = cwd;
        // A file-changing call with no result may have changed its files (attack 8 #12).
        let facts = if inv.status.is_open() {
            edits::input_paths(tool, &rec.input(inv))
                .into_iter()
                .map(|p| Fact {
                    path: p,
                    op: Op::Unanswered,
                    before: None,
                    after: None,
                    added: 0,
                    removed: 0,
                })
                .collect()
        } else {
            call_facts(rec, inv)
        };
        // A call on an abandoned branch of a fork point: not the session's net change.
        if let Some(fp) = self.forks.points.iter().find(|fp| fp.hides(inv.item)) {
            for fact in facts.iter().filter(|f| f.op.changes()) {
                let base = base_dir(rec, inv, cwd, &self.session_cwds);
                let path = normalise(&fact.path, base.as_deref().or(cwd));
                self.abandoned.push(Abandoned {
                    shown: relative(&path, shown_cwd).unwrap_or(path),
                    tool: tool.to_owned(),
                    line: inv.request_line,
                    item: inv.item,
                    branch: fp.branch_of(inv.item),
                    fork_line: fp.parent_line,
                    main: fp.main(),
                });
            }
            return;
        }
        for fact in facts {
            let base = base_dir(rec, inv, cwd, &self.session_cwds);
            let path = normalise(&fact.path, base.as_deref().or(cwd));
            let files = &mut self.files;
            let k = *self.by_path.entry(path.clone()).or_insert_with(|| {
                // A relative path in a session that names no directory is relative to
                // wherever the agent ran: a patch path as it is.
                let rel = relative(&path, shown_cwd).or_else(|| {
                    (cwd.is_none() && !path.starts_with('/') && !path.split('/').any(|s| s == ".."))
                        .then(|| path.clone())
                });
                files.push(FileEntry {
                    inside: rel.is_some(),
                    shown: rel.unwrap_or_else(|| path.clone()),
                    path,
                    touches: Vec::new(),
                    state: State::Read,
                    added: 0,
                    removed: 0,
                    no_net: None,
                    outside: 0,
                });
                files.len() - 1
            });
            let mut fact = fact;
            // A file an earlier call touched existed: an Edit "creating" it (empty old string,
            // empty original) edited an empty file (attack 8 #33).
            if fact.op == Op::Create && tool != "Write" && !self.files[k].touches.is_empty() {
                fact.op = Op::Edit;
            }
            let before = fact.before.as_deref().map(Print::of);
            let after = fact.after.as_deref().map(Print::of);
            let mut outside = None;
            if fact.op.changes() {
                if let (Some((Some(was), prev, row)), Some(b)) = (self.left.get(&k), before)
                    && *was != b
                {
                    outside = Some(Outside {
                        after_call: *prev,
                        between: between(*row, inv.item),
                    });
                }
                self.left.insert(k, (after, idx, inv.item));
            } else if after.is_some() && !self.left.contains_key(&k) {
                // A whole-file Read before any change: what the first change must find.
                self.left.insert(k, (after, idx, inv.item));
            }
            self.files[k].touches.push(Touch {
                call: idx,
                item: inv.item,
                line: inv.request_line,
                tool: tool.to_owned(),
                op: fact.op,
                at: inv.requested_at.or(inv.ended_at),
                added: fact.added,
                removed: fact.removed,
                subagent: !inv.delegation_chain.is_empty(),
                before,
                after,
                outside,
            });
        }
    }

    /// A shell or subagent call: a writer when it may have written files.
    fn add_runner(&mut self, rec: &dyn Records, idx: usize, inv: &Invocation) {
        let tool = inv.tool_name.as_str();
        let input = rec.input(inv);
        let (command, why) = if edits::is_shell(tool) {
            let c = edits::shell_command(&input).unwrap_or_default();
            let w = writers::writes(&c);
            (c, w)
        } else if inv.children.is_empty() && inv.delegation_chain.is_empty() {
            let d = ["description", "prompt", "task"]
                .iter()
                .find_map(|k| input.get(*k).and_then(Value::as_str))
                .map_or_else(|| inv.summary.to_string(), str::to_owned);
            (
                d,
                vec!["a subagent whose calls are not in this input".to_owned()],
            )
        } else {
            (String::new(), Vec::new())
        };
        if !why.is_empty() {
            self.writers.push(Writer {
                call: idx,
                item: inv.item,
                line: inv.request_line,
                tool: tool.to_owned(),
                command,
                why,
                at: inv.requested_at.or(inv.ended_at),
                status: inv.status.clone(),
            });
        }
    }

    /// The model of the calls added.
    pub fn finish(self) -> Files {
        let mut files = self.files;
        for f in &mut files {
            f.finish();
        }
        Files {
            files,
            writers: self.writers,
            cwd: self.cwd,
            cwd_changed: self.cwd_changed,
            session_cwds: self.session_cwds,
            abandoned: self.abandoned,
        }
    }
}

impl Files {
    /// Builds the model from `calls` (index, call) in session order, for a session whose working
    /// directory is `cwd` (`cwd_changed`: it changed; paths are then shown as written).
    /// `between(a, b)` lists what ran between feed rows `a` and `b` (exclusive) that may have
    /// changed a file: asked only where an outside change is found.
    pub fn build<'a>(
        rec: &dyn Records,
        calls: impl IntoIterator<Item = (usize, &'a Invocation)>,
        cwd: Option<&str>,
        cwd_changed: bool,
        between: &dyn Fn(usize, usize) -> Vec<Suspect>,
    ) -> Self {
        let mut b = Builder::new(cwd, cwd_changed);
        for (idx, inv) in calls {
            b.add(rec, idx, inv, between);
        }
        b.finish()
    }

    /// The model of every call of `session` (its first session's `cwd`).
    pub fn of_session(session: &Session) -> Self {
        let mut b = Builder::for_session(session);
        b.step_session(session, std::time::Duration::MAX);
        b.finish()
    }

    /// Files some call changed.
    pub fn changed(&self) -> impl Iterator<Item = &FileEntry> {
        self.files.iter().filter(|f| f.changed())
    }

    /// Both sides of `file`'s net change, reading its first and last change's records again
    /// (`call` gives a touch's call). Errors: why it cannot be made (as [`FileEntry::no_net`],
    /// or the record could not be read back).
    pub fn net<'a>(
        &self,
        rec: &dyn Records,
        call: &dyn Fn(usize) -> Option<&'a Invocation>,
        file: &FileEntry,
    ) -> Result<Net, String> {
        if let Some(why) = &file.no_net {
            return Err(why.clone());
        }
        let changes: Vec<&Touch> = file.touches.iter().filter(|t| t.op.changes()).collect();
        let (Some(first), Some(last)) = (changes.first(), changes.last()) else {
            return Err("no call changed it".into());
        };
        let fact = |t: &Touch| -> Result<Fact, String> {
            let inv = call(t.call).ok_or("its call is no longer in the session")?;
            call_facts(rec, inv)
                .into_iter()
                .find(|f| {
                    let base = base_dir(rec, inv, self.cwd.as_deref(), &self.session_cwds);
                    normalise(&f.path, base.as_deref().or(self.cwd.as_deref())) == file.path
                })
                .ok_or_else(|| {
                    format!(
                        "the record of {} (line {}) could not be read again",
                        t.tool, t.line
                    )
                })
        };
        let mut a = fact(first)?;
        // A record holding U+FFFD is not the file's bytes (a non-UTF-8 file, or a line read
        // lossily): no patch could match it (attack 8 #14).
        let lossy = |t: &Option<String>| t.as_deref().is_some_and(|t| t.contains('\u{fffd}'));
        if lossy(&a.before) || lossy(&a.after) {
            return Err(
                "its record holds U+FFFD replacement characters: the file's bytes are not in it"
                    .into(),
            );
        }
        // The touch's op, not the record's: a "creation" of a file touched before is an edit.
        let before = match first.op {
            Op::Create => None,
            _ => Some(
                a.before
                    .take()
                    .ok_or_else(|| unknown_why(&first.tool, true))?,
            ),
        };
        let z = if std::ptr::eq(*first, *last) {
            a
        } else {
            fact(last)?
        };
        if lossy(&z.after) {
            return Err(
                "its record holds U+FFFD replacement characters: the file's bytes are not in it"
                    .into(),
            );
        }
        let after = match z.op {
            Op::Delete => None,
            _ => Some(z.after.ok_or_else(|| unknown_why(&last.tool, false))?),
        };
        Ok(Net { before, after })
    }
}

/// What ran between feed rows `a` and `b` of `session` (exclusive) that may have changed a
/// file: shell and subagent calls, and Claude Code hooks (`x-claude-code.hook` rows with a
/// command, but a `PreToolUse` hook or Claude Code's own `callback`; 1.0 `system` rows that
/// name a `PostToolUse` hook).
pub fn suspects(session: &Session, a: usize, b: usize) -> Vec<Suspect> {
    let mut out = Vec::new();
    let Some(rows) = session
        .items
        .get(a.saturating_add(1)..b.min(session.items.len()))
    else {
        return out;
    };
    for (k, it) in rows.iter().enumerate() {
        let item = a + 1 + k;
        match it {
            crate::session::Item::Invocation(i) => {
                let Some(inv) = session.invocations.get(*i) else {
                    continue;
                };
                let tool = inv.tool_name.as_str();
                let what = if edits::is_shell(tool) {
                    let c = edits::shell_command(&session.input(inv)).unwrap_or_default();
                    format!("{tool}: {}", c.lines().next().unwrap_or(""))
                } else if edits::is_subagent(tool) {
                    format!("{tool}: {}", inv.summary)
                } else {
                    continue;
                };
                out.push(Suspect {
                    item,
                    line: inv.request_line,
                    call: Some(*i),
                    what,
                });
            }
            crate::session::Item::Event(frame) => {
                let kind = frame.frame_type.as_str();
                if kind != "x-claude-code.hook" && kind != "x-claude-code.system" {
                    continue;
                }
                let payload = session.event_payload(frame);
                let text = |k: &str| payload.get(k).and_then(Value::as_str).unwrap_or("");
                // A PreToolUse hook ran before the earlier change was made, `callback` is
                // Claude Code's own, and a 1.0.x "Running …" row is the start of a run.
                let what = if kind == "x-claude-code.hook" {
                    if text("hook_event") == "PreToolUse"
                        || text("command") == "callback"
                        || text("command").is_empty()
                        || text("outcome") == "start"
                    {
                        continue;
                    }
                    format!("hook {}: {}", text("hook_name"), text("command"))
                } else if kind == "x-claude-code.system" && text("content").contains("PostToolUse")
                {
                    let c = crate::render::ansi::strip_sgr(text("content"));
                    format!("hook: {}", c.lines().next().unwrap_or(""))
                } else {
                    continue;
                };
                out.push(Suspect {
                    item,
                    line: frame.origin.line,
                    call: None,
                    what,
                });
            }
            crate::session::Item::Message(_) => {}
        }
    }
    out
}

impl FileEntry {
    /// State, counts and whether a net change can be made, from the touches.
    fn finish(&mut self) {
        let changes: Vec<&Touch> = self.touches.iter().filter(|t| t.op.changes()).collect();
        self.outside = changes.iter().filter(|t| t.outside.is_some()).count();
        let (Some(first), Some(last)) = (changes.first(), changes.last()) else {
            self.state = State::Read;
            return;
        };
        let created = first.op == Op::Create;
        // What an undo put back is not in the record (attack 8 #44).
        if let Some(u) = changes.iter().rev().find(|t| t.op == Op::Undo) {
            self.no_net = Some(format!(
                "the {} undo_edit at line {} put back an earlier content of the file, which the record does not hold",
                u.tool, u.line
            ));
            self.state = State::Modified;
            self.added = changes.iter().map(|t| t.added).sum();
            self.removed = changes.iter().map(|t| t.removed).sum();
            return;
        }
        if let Some(u) = changes.iter().find(|t| t.op == Op::Unanswered) {
            self.no_net = Some(format!(
                "the {} at line {} has no result in the record (cut off, still running, or its line is malformed): what it did to the file is unknown",
                u.tool, u.line
            ));
            self.state = State::Modified;
            self.added = changes.iter().map(|t| t.added).sum();
            self.removed = changes.iter().map(|t| t.removed).sum();
            return;
        }
        self.state = match (&last.op, created) {
            (Op::Delete, true) => State::Transient,
            (Op::Delete, false) => State::Deleted,
            (Op::Move(to), _) => State::Moved(to.clone()),
            (_, true) => State::Created,
            (_, false) => State::Modified,
        };
        self.no_net = if !created && first.before.is_none() {
            Some(unknown_why(&first.tool, true))
        } else if last.op != Op::Delete && last.after.is_none() {
            Some(unknown_why(&last.tool, false))
        } else if matches!(last.op, Op::Move(_)) {
            Some("a move with its content is not in the record".into())
        } else {
            None
        };
        self.added = changes.iter().map(|t| t.added).sum();
        self.removed = changes.iter().map(|t| t.removed).sum();
    }

    /// Sets the counts from the net change's two sides.
    pub fn count_net(&mut self, net: &Net) {
        let (a, r) = edits::line_counts(
            net.before.as_deref().unwrap_or(""),
            net.after.as_deref().unwrap_or(""),
        );
        self.added = a;
        self.removed = r;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn paths_normalise_and_relate_to_the_cwd() {
        assert_eq!(normalise("src/./a/../b.rs", Some("/p/")), "/p/src/b.rs");
        assert_eq!(normalise("/x//y/./z", None), "/x/y/z");
        assert_eq!(
            relative("/p/src/b.rs", Some("/p")).as_deref(),
            Some("src/b.rs")
        );
        assert_eq!(relative("/p2/b.rs", Some("/p")), None);
        assert_eq!(relative("/p", Some("/p")), None);
    }
}
