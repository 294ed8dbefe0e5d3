//! Session browser model: the sessions found under root directories (by default
//! `~/.claude/projects`, Codex CLI's `~/.codex/sessions` (`$CODEX_HOME/sessions` when set), Gemini
//! CLI's `~/.gemini/tmp`, plus the config's `browser.dirs`), newest first, with a fuzzy filter;
//! each entry says which agent wrote it ([`Agent`]).
//!
//! Layouts: Claude Code `projects/<project>/<session>.jsonl` and other roots: files in the root
//! and one level below; Codex `sessions/YYYY/MM/DD/rollout-*.jsonl` (a root named `sessions`:
//! three levels below, project = the session's `cwd`); Gemini `tmp/<projectHash>/chats/*.json`
//! (a root named `tmp` under `.gemini`: project = the hash's first 8 characters).
//!
//! Who calls it: the browser widget (`crate::ui::browser`) and the app when `rawpv` runs with no
//! input on a terminal. Pure apart from reading the directories: roots are parameters, so tests
//! use a tempdir. Invariants: only the first [`PEEK_BYTES`] of each file are read (hundreds of
//! multi-MB transcripts must list fast); unreadable files and directories are skipped, never an
//! error; `visible` holds indexes into `entries`, best match first when filtering, else newest
//! first.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use crate::protocol::Timestamp;

/// Bytes read from the start of each file for its first prompt and start time.
pub const PEEK_BYTES: usize = 16 * 1024;
/// Characters kept of a first prompt.
pub const PROMPT_CHARS: usize = 200;

/// Which agent wrote a session file (from its first records).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Agent {
    ClaudeCode,
    Codex,
    Gemini,
    /// RAWP or any other format.
    #[default]
    Other,
}

impl Agent {
    /// A short label for the browser row (`claude`, `codex`, `gemini`, empty for others).
    pub fn label(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Other => "",
        }
    }
}

/// One session file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionEntry {
    pub path: PathBuf,
    /// The agent that wrote it.
    pub agent: Agent,
    /// The project: the directory under the root (`-home-me-proj` shown as `/home/me/proj`).
    pub project: String,
    /// The first user prompt, one line, at most [`PROMPT_CHARS`].
    pub first_prompt: Option<String>,
    /// The first record's timestamp.
    pub started: Option<Timestamp>,
    /// File size in bytes.
    pub size: u64,
    /// Modification time, for ordering when there is no timestamp.
    pub modified: Option<SystemTime>,
    /// What the library index knows of it (issue 27), when the list comes from the index.
    pub facts: Option<Box<crate::library::SessionRow>>,
}

impl SessionEntry {
    /// Sort key: the last activity the index knows, else the start time (else mtime), epoch ms.
    fn when(&self) -> i64 {
        if let Some(t) = self.facts.as_ref().and_then(|f| f.last_ts) {
            return t;
        }
        self.started.map_or_else(
            || {
                self.modified
                    .and_then(|m| m.duration_since(SystemTime::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_millis() as i64)
            },
            |t| t.0,
        )
    }

    /// What the filter matches against.
    pub fn haystack(&self) -> String {
        // The agent last: its letters must not make other queries match.
        format!(
            "{} {} {}",
            self.project,
            self.first_prompt.as_deref().unwrap_or(""),
            self.agent.label()
        )
    }
}

/// `~/.claude/projects`, the Codex sessions directory and Gemini's `~/.gemini/tmp` (when the
/// home directory is known; `$CODEX_HOME/sessions` when `CODEX_HOME` is set), followed by `extra`.
pub fn default_roots(extra: &[PathBuf]) -> Vec<PathBuf> {
    let home = directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf());
    let codex_home = std::env::var_os("CODEX_HOME").map(PathBuf::from);
    roots_from(home.as_deref(), codex_home.as_deref(), extra)
}

/// [`default_roots`] for a given home directory and `CODEX_HOME`.
pub fn roots_from(
    home: Option<&Path>,
    codex_home: Option<&Path>,
    extra: &[PathBuf],
) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Some(h) = home {
        roots.push(h.join(".claude").join("projects"));
    }
    match (codex_home, home) {
        (Some(c), _) => roots.push(c.join("sessions")),
        (None, Some(h)) => roots.push(h.join(".codex").join("sessions")),
        (None, None) => {}
    }
    if let Some(h) = home {
        roots.push(h.join(".gemini").join("tmp"));
    }
    roots.extend(extra.iter().cloned());
    roots
}

/// How a root's sessions are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// Files in the root and one level below (Claude Code projects, other directories).
    Flat,
    /// Codex: `YYYY/MM/DD/rollout-*.jsonl`.
    Codex,
    /// Gemini: `<projectHash>/chats/*.json`.
    Gemini,
}

fn layout_of(root: &Path) -> Layout {
    let name = |p: &Path| p.file_name().and_then(|n| n.to_str()).map(str::to_owned);
    match name(root).as_deref() {
        Some("sessions") if !root.join("projects").exists() => Layout::Codex,
        Some("tmp") if root.parent().and_then(name).as_deref() == Some(".gemini") => Layout::Gemini,
        _ => Layout::Flat,
    }
}

/// Subdirectories of `dir`, sorted.
fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

/// Session files directly in `dir`.
fn files_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| is_session_file(p))
        .collect()
}

/// Lists the session files of each root (see the module docs for the layouts), newest first.
pub fn scan(roots: &[PathBuf]) -> Vec<SessionEntry> {
    let mut out = Vec::new();
    for root in roots {
        match layout_of(root) {
            Layout::Codex => {
                let mut dirs = vec![(root.clone(), 0)];
                while let Some((d, depth)) = dirs.pop() {
                    if depth < 3 {
                        dirs.extend(subdirs(&d).into_iter().map(|s| (s, depth + 1)));
                    }
                    for f in files_in(&d) {
                        out.push(entry(&f, "codex"));
                    }
                }
            }
            Layout::Gemini => {
                for project in subdirs(root) {
                    let name = project_name(&project);
                    let short: String = name.chars().take(8).collect();
                    for f in files_in(&project.join("chats")) {
                        out.push(entry(&f, &short));
                    }
                }
            }
            Layout::Flat => {
                let Ok(rd) = std::fs::read_dir(root) else {
                    continue;
                };
                for e in rd.flatten() {
                    let p = e.path();
                    if p.is_dir() {
                        let project = project_name(&p);
                        for f in files_in(&p) {
                            out.push(entry(&f, &project));
                        }
                    } else if is_session_file(&p) {
                        out.push(entry(&p, &project_name(root)));
                    }
                }
            }
        }
    }
    out.sort_by(|a, b| b.when().cmp(&a.when()).then_with(|| a.path.cmp(&b.path)));
    out
}

/// A session file to list. Claude Code's subagent transcripts (`agent-*.jsonl` beside their
/// session, the 2.0-era layout) are not sessions of their own: opening the parent session brings
/// them in (`crate::import::claude_code`).
pub(crate) fn is_session_file(p: &Path) -> bool {
    let ext = p.extension().and_then(|e| e.to_str());
    let subagent = ext == Some("jsonl")
        && p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("agent-"));
    p.is_file() && !subagent && ext.is_some_and(|e| matches!(e, "jsonl" | "ndjson" | "json"))
}

fn project_name(dir: &Path) -> String {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.starts_with('-') {
        name.replace('-', "/")
    } else {
        name
    }
}

fn entry(path: &Path, project: &str) -> SessionEntry {
    let meta = std::fs::metadata(path).ok();
    let p = peek_entry(path);
    SessionEntry {
        path: path.to_path_buf(),
        agent: p.agent,
        project: p.project.unwrap_or_else(|| project.to_owned()),
        first_prompt: p.prompt,
        started: p.started,
        size: meta.as_ref().map_or(0, std::fs::Metadata::len),
        modified: meta.and_then(|m| m.modified().ok()),
        facts: None,
    }
}

/// The browser filter's last `since:` word (its value, when not empty) and the other words.
fn split_since(filter: &str) -> (Option<&str>, String) {
    let mut since = None;
    let mut words = Vec::new();
    for w in filter.split_whitespace() {
        match w.strip_prefix("since:") {
            Some(v) if !v.is_empty() => since = Some(v),
            // `since:` being typed: no bound yet, and not a word to match.
            Some(_) => {}
            None => words.push(w),
        }
    }
    (since, words.join(" "))
}

/// A session row of the library index as a browser entry.
pub fn entry_of(row: crate::library::SessionRow) -> SessionEntry {
    let agent = match row.agent.as_str() {
        "claude" => Agent::ClaudeCode,
        "codex" => Agent::Codex,
        "gemini" => Agent::Gemini,
        _ => Agent::Other,
    };
    let modified = u64::try_from(row.stamp.mtime_ns)
        .ok()
        .map(|ns| SystemTime::UNIX_EPOCH + std::time::Duration::from_nanos(ns));
    SessionEntry {
        path: row.path.clone(),
        agent,
        project: row.project.clone(),
        first_prompt: (!row.title.is_empty()).then(|| row.title.clone()),
        started: row.first_ts.map(Timestamp),
        size: row.stamp.size,
        modified,
        facts: Some(Box::new(row)),
    }
}

/// A session is shown live when its file changed within this long.
pub const LIVE_WITHIN_MS: i64 = 60_000;

/// What the first bytes of a session file say.
#[derive(Debug, Default)]
struct Peeked {
    prompt: Option<String>,
    started: Option<Timestamp>,
    agent: Agent,
    /// A project named by the file itself (a Codex session's `cwd`).
    project: Option<String>,
}

/// Reads the first [`PEEK_BYTES`] of a file: the first timestamp and the first user prompt
/// (Claude Code `user` records with text content, Codex `user_message` events or user messages,
/// RAWP `control.prompt.request`; a Gemini saved session's `startTime` and first user message).
pub fn peek(path: &Path) -> (Option<String>, Option<Timestamp>) {
    let p = peek_entry(path);
    (p.prompt, p.started)
}

/// Bytes read of a Gemini saved session (one JSON document, read whole when it fits).
const GEMINI_PEEK_BYTES: usize = 1024 * 1024;

fn peek_entry(path: &Path) -> Peeked {
    let mut buf = Vec::with_capacity(PEEK_BYTES);
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.take(PEEK_BYTES as u64).read_to_end(&mut buf);
    }
    let text = String::from_utf8_lossy(&buf);
    if text.trim_start().starts_with('{') && text.contains("\"projectHash\"") {
        return peek_gemini(path, &text);
    }
    let mut out = Peeked::default();
    // The last line may be cut by the byte limit: it simply fails to parse.
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if out.started.is_none() {
            out.started = v
                .get("timestamp")
                .or_else(|| v.get("ts"))
                .and_then(Timestamp::from_json);
        }
        match v.get("type").and_then(Value::as_str) {
            Some("session_meta") => {
                out.agent = Agent::Codex;
                out.project = v
                    .pointer("/payload/cwd")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
            Some("user" | "assistant" | "summary") if out.agent == Agent::Other => {
                out.agent = Agent::ClaudeCode;
            }
            _ => {}
        }
        // Claude Code records carry the session's `cwd`: the project exactly (its directory
        // name turned every `/` into `-`, so `my-app` came back as `my/app`).
        if out.agent == Agent::ClaudeCode
            && out.project.is_none()
            && let Some(cwd) = v.get("cwd").and_then(Value::as_str)
        {
            out.project = Some(cwd.to_owned());
        }
        if out.prompt.is_none() {
            out.prompt = prompt_of(&v);
        }
        let project_known = out.project.is_some() || out.agent != Agent::ClaudeCode;
        if out.started.is_some()
            && out.prompt.is_some()
            && out.agent != Agent::Other
            && project_known
        {
            break;
        }
    }
    out
}

/// A Gemini saved session: `startTime` and the first `user` message.
fn peek_gemini(path: &Path, head: &str) -> Peeked {
    let mut out = Peeked {
        agent: Agent::Gemini,
        ..Peeked::default()
    };
    let mut buf = Vec::new();
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.take(GEMINI_PEEK_BYTES as u64).read_to_end(&mut buf);
    }
    match serde_json::from_slice::<Value>(&buf) {
        Ok(doc) => {
            out.started = doc.get("startTime").and_then(Timestamp::from_json);
            out.prompt = doc
                .get("messages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|m| m.get("type").and_then(Value::as_str) == Some("user"))
                .find_map(|m| m.get("content").and_then(Value::as_str).and_then(one_line));
        }
        Err(_) => {
            // Larger than the peek: the start time from its line.
            out.started = head
                .lines()
                .find_map(|l| l.trim().strip_prefix("\"startTime\":"))
                .and_then(|v| {
                    Timestamp::parse_str(v.trim().trim_end_matches(',').trim_matches('"'))
                });
        }
    }
    out
}

/// `text` on one line, at most [`PROMPT_CHARS`]; `None` when blank.
fn one_line(text: &str) -> Option<String> {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!line.is_empty()).then(|| line.chars().take(PROMPT_CHARS).collect())
}

/// The boilerplate Claude Code writes (as an `isMeta` user record) before local command output.
const CAVEAT: &str =
    "Caveat: The messages below were generated by the user while running local commands";

fn prompt_of(v: &Value) -> Option<String> {
    let text = if v.get("type").and_then(Value::as_str) == Some("user") {
        let content = v.get("message")?.get("content")?;
        match content {
            Value::String(s) => Some(s.clone()),
            // The first text part that is not a wrapper: an `<ide_selection>` part may come
            // before the typed prompt (Claude Code 2.0).
            Value::Array(parts) => parts.iter().find_map(|p| {
                (p.get("type").and_then(Value::as_str) == Some("text"))
                    .then(|| p.get("text").and_then(Value::as_str))
                    .flatten()
                    .filter(|t| !t.trim_start().starts_with('<'))
                    .map(str::to_owned)
            }),
            _ => None,
        }
    } else if v.get("type").and_then(Value::as_str) == Some("event_msg") {
        // Codex: the typed prompt (`user_message`); its mirror as a response item is skipped.
        let p = v.get("payload")?;
        (p.get("type").and_then(Value::as_str) == Some("user_message"))
            .then(|| p.get("message").and_then(Value::as_str))
            .flatten()
            .map(str::to_owned)
    } else if v.get("type").and_then(Value::as_str) == Some("control.prompt.request") {
        let p = v.get("payload")?;
        p.get("text")
            .or_else(|| p.get("prompt"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    } else {
        None
    }?;
    // Codex's IDE extension writes the editor context first, then the request.
    let text = match text.split_once("## My request for Codex:") {
        Some((_, request)) => request.to_owned(),
        None => text,
    };
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    // Claude Code's command wrappers and caveats are not prompts (a skill's or command's
    // expansion, also `isMeta`, is kept: it says what the session was asked).
    if line.is_empty() || line.starts_with('<') || line.starts_with(CAVEAT) {
        return None;
    }
    Some(line.chars().take(PROMPT_CHARS).collect())
}

/// Subsequence match, case-insensitive: `None` when `query`'s characters do not all appear in
/// order; otherwise a score (higher is better: consecutive runs and early matches count).
pub fn fuzzy_score(query: &str, text: &str) -> Option<i64> {
    let mut score = 0i64;
    let mut chars = text.chars().flat_map(char::to_lowercase).enumerate();
    let mut last: Option<usize> = None;
    for q in query.chars().flat_map(char::to_lowercase) {
        if q.is_whitespace() {
            continue;
        }
        let (i, _) = chars.find(|&(_, c)| c == q)?;
        score += match last {
            Some(l) if i == l + 1 => 8,
            _ => 1,
        };
        if i == 0 {
            score += 4;
        }
        last = Some(i);
    }
    Some(score * 1000 - last.map_or(0, |l| l as i64).min(999))
}

/// The browser's state: entries, the filter text, visible rows and the selection.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Browser {
    pub entries: Vec<SessionEntry>,
    pub filter: String,
    /// Indexes into `entries`.
    pub visible: Vec<usize>,
    pub selected: usize,
    pub offset: usize,
    /// The user's home directory, shown as `~` at the start of a project ([`Browser::project`]).
    pub home: Option<String>,
    /// Display columns of the widest project as shown (the list's project column is as wide,
    /// up to a third of the row).
    pub project_cols: usize,
    /// Each session's cost, by path, as it becomes known (`crate::usage::report::costs`, off
    /// the UI thread; issue 28 item 3).
    pub costs: std::collections::HashMap<PathBuf, crate::usage::price::Cost>,
    /// Whether every cost is known.
    pub costs_done: bool,
    /// The library's indexing progress for the status line (`None`: nothing to say).
    pub status: Option<String>,
    /// What the user is told about the index until the next key (it was moved aside and
    /// rebuilt, it cannot be opened or watched): first on the status line. Progress replaces
    /// `status` as indexing goes, so such a note there was gone at once (attack of session 14).
    pub notice: Option<String>,
    /// "Now" in epoch ms, for the live mark (a file changed within [`LIVE_WITHIN_MS`]).
    pub now_ms: i64,
    /// The full-text search (`/`): its query and hits, while shown.
    pub search: Option<SearchView>,
}

/// The browser's full-text search (issue 27 item 4): the query being typed or run, and its
/// hits (`crate::library::search::Hit`) listed instead of the sessions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SearchView {
    pub query: String,
    /// The query line has the keyboard (Enter runs it).
    pub editing: bool,
    pub hits: Vec<crate::library::search::Hit>,
    pub selected: usize,
    /// What the last run said (`no match`, a bad pattern), if anything.
    pub message: Option<String>,
    /// The id of the query running now (`crate::library::searcher`): "searching…" is shown,
    /// and only that query's hits are taken.
    pub pending: Option<u64>,
}

/// What a key in the search view asks of the browser's loop ([`Browser::search_key`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchStep {
    /// Handled here (or ignored).
    Stay,
    /// Ctrl-C: leave rawpv.
    Quit,
    /// Enter on a hit: open its session there.
    Open(crate::library::search::Hit),
}

impl SearchView {
    /// The selected hit.
    pub fn selected_hit(&self) -> Option<&crate::library::search::Hit> {
        self.hits.get(self.selected)
    }

    /// Moves the selection by `delta` hits (clamped).
    pub fn move_by(&mut self, delta: isize) {
        let max = self.hits.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(delta).min(max);
    }

    /// Takes a search's outcome if it is the query running now; returns whether it was (a
    /// superseded query's hits are dropped).
    pub fn deliver(&mut self, found: crate::library::searcher::Found) -> bool {
        if self.pending != Some(found.id) {
            return false;
        }
        self.pending = None;
        self.selected = 0;
        match found.result {
            Ok(h) if h.is_empty() => self.message = Some("no match".into()),
            Ok(h) => self.hits = h,
            Err(e) => self.message = Some(e),
        }
        true
    }
}

impl Browser {
    /// A browser over `roots` (see [`scan`]), projects under the user's home shown from `~`.
    pub fn scan(roots: &[PathBuf]) -> Self {
        let home =
            directories::BaseDirs::new().and_then(|b| b.home_dir().to_str().map(str::to_owned));
        Self::new(scan(roots)).with_home(home)
    }

    pub fn new(entries: Vec<SessionEntry>) -> Self {
        let visible = (0..entries.len()).collect();
        let mut b = Self {
            entries,
            visible,
            ..Self::default()
        };
        b.measure();
        b
    }

    /// Handles a key while the full-text search is shown (`code`, with Ctrl when `ctrl`):
    /// typing edits the query (and supersedes a search running), Enter runs it on `searcher`
    /// (at most `limit` hits; "searching…" until its hits arrive, [`SearchView::deliver`]),
    /// Esc closes the search (cancelling it); with the hits listed, `/` edits the query again,
    /// arrows move, Enter opens the selected hit. Does nothing without a search shown.
    pub fn search_key(
        &mut self,
        code: crossterm::event::KeyCode,
        ctrl: bool,
        searcher: &crate::library::searcher::Searcher,
        limit: Option<usize>,
    ) -> SearchStep {
        use crossterm::event::KeyCode;
        let Some(sv) = self.search.as_mut() else {
            return SearchStep::Stay;
        };
        if ctrl && code == KeyCode::Char('c') {
            return SearchStep::Quit;
        }
        if code == KeyCode::Esc {
            if sv.pending.is_some() {
                searcher.cancel();
            }
            self.search = None;
            return SearchStep::Stay;
        }
        let edited = if sv.editing {
            match code {
                KeyCode::Enter => {
                    sv.editing = false;
                    sv.selected = 0;
                    sv.hits.clear();
                    sv.message = None;
                    sv.pending = Some(searcher.submit(&sv.query, limit));
                    false
                }
                KeyCode::Backspace => sv.query.pop().is_some(),
                KeyCode::Char(c) if !ctrl => {
                    sv.query.push(c);
                    true
                }
                _ => false,
            }
        } else {
            match code {
                KeyCode::Char('/') => sv.editing = true,
                KeyCode::Up => sv.move_by(-1),
                KeyCode::Down => sv.move_by(1),
                KeyCode::PageUp => sv.move_by(-10),
                KeyCode::PageDown => sv.move_by(10),
                KeyCode::Enter => {
                    if let Some(hit) = sv.selected_hit() {
                        return SearchStep::Open(hit.clone());
                    }
                }
                _ => {}
            }
            false
        };
        // A new query in the making: the one running answers an old question.
        if edited && sv.pending.take().is_some() {
            searcher.cancel();
        }
        SearchStep::Stay
    }

    /// A browser over the library index's rows (last activity first).
    pub fn from_library(rows: Vec<crate::library::SessionRow>) -> Self {
        let home =
            directories::BaseDirs::new().and_then(|b| b.home_dir().to_str().map(str::to_owned));
        Self::new(rows.into_iter().map(entry_of).collect()).with_home(home)
    }

    /// Replaces the entries by the index's rows now, plus the `pending` entries (a file scan's)
    /// the index does not hold yet, newest first; keeps the filter and the selected session (by
    /// path) when it is still listed.
    pub fn replace_rows(
        &mut self,
        rows: Vec<crate::library::SessionRow>,
        pending: &[SessionEntry],
    ) {
        let selected = self.selected_entry().map(|e| e.path.clone());
        let mut entries: Vec<SessionEntry> = rows.into_iter().map(entry_of).collect();
        if !pending.is_empty() {
            let known: std::collections::HashSet<&Path> =
                entries.iter().map(|e| e.path.as_path()).collect();
            let extra: Vec<SessionEntry> = pending
                .iter()
                .filter(|e| !known.contains(e.path.as_path()))
                .cloned()
                .collect();
            entries.extend(extra);
            entries.sort_by(|a, b| b.when().cmp(&a.when()).then_with(|| a.path.cmp(&b.path)));
        }
        self.entries = entries;
        self.measure();
        let filter = self.filter.clone();
        self.set_filter(&filter);
        if let Some(p) = selected
            && let Some(k) = self
                .visible
                .iter()
                .position(|&i| self.entries.get(i).is_some_and(|e| e.path == p))
        {
            self.selected = k;
        }
    }

    /// Whether entry `e` is live: its file changed within [`LIVE_WITHIN_MS`] of `now_ms`.
    pub fn is_live(&self, e: &SessionEntry) -> bool {
        e.facts.as_ref().is_some_and(|f| {
            let mtime_ms = f.stamp.mtime_ns / 1_000_000;
            self.now_ms > 0 && (self.now_ms - mtime_ms).abs() <= LIVE_WITHIN_MS
        })
    }

    /// Shows projects under `home` from `~` (`None`: as they are).
    #[must_use]
    pub fn with_home(mut self, home: Option<String>) -> Self {
        self.home = home
            .filter(|h| h.len() > 1)
            .map(|h| h.trim_end_matches('/').to_owned());
        self.measure();
        self
    }

    fn measure(&mut self) {
        self.project_cols = (self.entries.iter())
            .map(|e| crate::fmt::width(&self.project(e)))
            .max()
            .unwrap_or(0);
    }

    /// Entry `e`'s project as the list shows it: made visible (escapes shown, never obeyed),
    /// the home directory as `~` (`/home/me/work/api` → `~/work/api`); the list elides its
    /// middle when the column is narrower (`crate::fmt::elide_path`), so its last directories,
    /// which tell projects apart, stay.
    pub fn project(&self, e: &SessionEntry) -> String {
        let shown = crate::render::text::visible(&e.project);
        match self.home.as_deref() {
            Some(h) if shown == h => "~".to_owned(),
            Some(h) => match shown.strip_prefix(h).filter(|r| r.starts_with('/')) {
                Some(rest) => format!("~{rest}"),
                None => shown,
            },
            None => shown,
        }
    }

    /// Sets the filter and recomputes the visible rows (best match first; ties keep newest
    /// first); the selection goes back to the top. A word `since:7d` (or `since:12h`,
    /// `since:YYYY-MM-DD`, as `rawpv sessions --since`) keeps the sessions active since then
    /// (their last activity as the index knows it, else their start, else the file's time);
    /// the other words are matched fuzzily. A `since:` value that is neither is said in
    /// [`Browser::notice`] and filters nothing.
    pub fn set_filter(&mut self, filter: &str) {
        filter.clone_into(&mut self.filter);
        let (since, words) = split_since(filter);
        let bound = match since.map(crate::library::parse_since) {
            Some(Ok(t)) => Some(t),
            Some(Err(why)) => {
                self.notice = Some(format!("since: {}", crate::render::text::visible(&why)));
                None
            }
            None => None,
        };
        let filter = words.as_str();
        let mut scored: Vec<(i64, usize)> = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| bound.is_none_or(|t| e.when() >= t))
            .filter_map(|(i, e)| fuzzy_score(filter, &e.haystack()).map(|s| (s, i)))
            .collect();
        if !filter.trim().is_empty() {
            scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        }
        self.visible = scored.into_iter().map(|(_, i)| i).collect();
        self.selected = 0;
        self.offset = 0;
    }

    /// Moves the selection by `delta` rows (clamped).
    pub fn move_by(&mut self, delta: isize) {
        let max = self.visible.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(delta).min(max);
    }

    /// The selected session.
    pub fn selected_entry(&self) -> Option<&SessionEntry> {
        self.visible
            .get(self.selected)
            .and_then(|&i| self.entries.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, body: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(name), body).unwrap();
    }

    #[test]
    fn scans_projects_newest_first_with_first_prompts() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("projects");
        write(
            &root.join("-home-me-alpha"),
            "a.jsonl",
            concat!(
                r#"{"type":"summary","summary":"x"}"#,
                "\n",
                r#"{"type":"user","timestamp":"2026-11-01T10:00:00Z","message":{"role":"user","content":"<command-name>/clear</command-name>"}}"#,
                "\n",
                r#"{"type":"user","timestamp":"2026-11-01T10:00:01Z","message":{"role":"user","content":[{"type":"text","text":"Fix the\nparser"}]}}"#,
                "\n",
            ),
        );
        write(
            &root.join("-home-me-beta"),
            "b.jsonl",
            concat!(
                r#"{"type":"user","timestamp":"2026-11-02T09:00:00Z","message":{"role":"user","content":"Add a README"}}"#,
                "\n",
            ),
        );
        write(
            &root.join("-home-me-gamma"),
            "g.jsonl",
            concat!(
                r#"{"type":"user","isMeta":true,"timestamp":"2026-10-02T00:00:00Z","message":{"role":"user","content":"Caveat: The messages below were generated by the user while running local commands. DO NOT respond."}}"#,
                "\n",
                r#"{"type":"user","timestamp":"2026-10-02T00:00:01Z","message":{"role":"user","content":[{"type":"text","text":"<ide_selection>x</ide_selection>"},{"type":"text","text":"Install as a library"}]}}"#,
                "\n",
            ),
        );
        write(&root.join("-home-me-beta"), "notes.txt", "not a session");
        // A subagent transcript beside its session is opened with it, not listed.
        write(
            &root.join("-home-me-beta"),
            "agent-3f2a9c.jsonl",
            concat!(
                r#"{"type":"user","isSidechain":true,"timestamp":"2026-11-03T09:00:00Z","message":{"role":"user","content":"subtask"}}"#,
                "\n",
            ),
        );
        let extra = tmp.path().join("rawp");
        write(
            &extra,
            "s.ndjson",
            concat!(
                r#"{"type":"control.prompt.request","timestamp":"2026-10-01T00:00:00Z","payload":{"text":"hello rawp"}}"#,
                "\n",
            ),
        );
        let b = Browser::scan(&[root, extra, tmp.path().join("missing")]);
        let got: Vec<(&str, Option<&str>, Option<i64>)> = b
            .entries
            .iter()
            .map(|e| {
                (
                    e.project.as_str(),
                    e.first_prompt.as_deref(),
                    e.started.map(|t| t.0),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "/home/me/beta",
                    Some("Add a README"),
                    Some(1_793_610_000_000)
                ),
                (
                    "/home/me/alpha",
                    Some("Fix the parser"),
                    Some(1_793_527_200_000)
                ),
                (
                    "/home/me/gamma",
                    Some("Install as a library"),
                    Some(1_790_899_200_000)
                ),
                ("rawp", Some("hello rawp"), Some(1_790_812_800_000)),
            ]
        );
    }

    /// Codex (`$CODEX_HOME/sessions/YYYY/MM/DD`) and Gemini (`~/.gemini/tmp/<hash>/chats`)
    /// sessions are found in their places, with their agent, project and first prompt.
    #[test]
    fn finds_codex_and_gemini_sessions() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let codex_home = tmp.path().join("codex-home");
        write(
            &codex_home.join("sessions/2026/04/02"),
            "rollout-2026-04-02T10-00-00-019d4a1e.jsonl",
            concat!(
                r#"{"timestamp":"2026-04-02T10:00:00.000Z","type":"session_meta","payload":{"id":"019d4a1e","cwd":"/home/me/proj","originator":"codex-tui","cli_version":"0.125.0"}}"#,
                "\n",
                r#"{"timestamp":"2026-04-02T10:00:00.100Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>x</environment_context>"}]}}"#,
                "\n",
                r##"{"timestamp":"2026-04-02T10:00:00.200Z","type":"event_msg","payload":{"type":"user_message","message":"# Context from my IDE setup:\n\n## My request for Codex:\nrun the tests"}}"##,
                "\n",
            ),
        );
        write(
            &home.join(".gemini/tmp").join("a".repeat(64)).join("chats"),
            "session-2026-02-01T08-00-7c1d2e3f.json",
            "{\n  \"sessionId\": \"7c1d2e3f\",\n  \"projectHash\": \"aaaa\",\n  \"startTime\": \"2026-02-01T08:00:00.000Z\",\n  \"messages\": [\n    {\"id\": \"1\", \"type\": \"user\", \"content\": \"rename foo\"}\n  ]\n}\n",
        );
        let roots = roots_from(Some(&home), Some(&codex_home), &[]);
        assert_eq!(
            roots,
            vec![
                home.join(".claude/projects"),
                codex_home.join("sessions"),
                home.join(".gemini/tmp")
            ]
        );
        let b = Browser::scan(&roots);
        let got: Vec<(Agent, &str, Option<&str>, Option<i64>)> = b
            .entries
            .iter()
            .map(|e| {
                (
                    e.agent,
                    e.project.as_str(),
                    e.first_prompt.as_deref(),
                    e.started.map(|t| t.0),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    Agent::Codex,
                    "/home/me/proj",
                    Some("run the tests"),
                    Some(1_775_124_000_000)
                ),
                (
                    Agent::Gemini,
                    "aaaaaaaa",
                    Some("rename foo"),
                    Some(1_769_932_800_000)
                ),
            ]
        );
        // Without CODEX_HOME, `~/.codex/sessions`.
        assert_eq!(
            roots_from(Some(&home), None, &[])[1],
            home.join(".codex/sessions")
        );
    }

    #[test]
    fn a_since_word_keeps_the_sessions_active_since_then() {
        let now = chrono::Utc::now().timestamp_millis();
        let day = 86_400_000;
        let e = |p: &str, q: &str, days_ago: i64| SessionEntry {
            path: PathBuf::from(p),
            agent: Agent::Other,
            project: p.into(),
            first_prompt: Some(q.into()),
            started: Some(Timestamp(now - days_ago * day)),
            size: 0,
            modified: None,
            facts: None,
        };
        let mut b = Browser::new(vec![
            e("a", "parser fix", 2),
            e("b", "parser docs", 10),
            e("c", "write docs", 1),
        ]);
        b.set_filter("since:7d");
        assert_eq!(b.visible, vec![0, 2]);
        b.set_filter("parser since:7d");
        assert_eq!(b.visible, vec![0]);
        b.set_filter("since:30d parser");
        assert_eq!(b.visible, vec![0, 1]);
        // Being typed: no bound yet, nothing hidden for it.
        b.set_filter("docs since:");
        assert_eq!(b.visible, vec![2, 1]);
        assert_eq!(b.notice, None);
        b.set_filter("since:soon");
        assert_eq!(b.visible, vec![0, 1, 2]);
        assert!(
            b.notice
                .as_deref()
                .is_some_and(|n| n.starts_with("since: not a duration or date")),
            "{:?}",
            b.notice
        );
        assert_eq!(b.filter, "since:soon");
    }

    #[test]
    fn fuzzy_filter_ranks_and_hides() {
        assert!(fuzzy_score("fxp", "Fix the parser").is_some());
        assert!(fuzzy_score("pxf", "Fix the parser").is_none());
        assert!(fuzzy_score("par", "parser").unwrap() > fuzzy_score("par", "p a r").unwrap());
        let e = |p: &str, q: &str| SessionEntry {
            path: PathBuf::from(p),
            agent: Agent::Other,
            project: p.into(),
            first_prompt: Some(q.into()),
            started: None,
            size: 0,
            modified: None,
            facts: None,
        };
        let mut b = Browser::new(vec![
            e("a", "write docs"),
            e("b", "parser fix"),
            e("c", "p-a-r"),
        ]);
        b.set_filter("parser");
        assert_eq!(b.visible, vec![1]);
        b.set_filter("par");
        assert_eq!(b.visible, vec![1, 2]);
        b.set_filter("");
        assert_eq!(b.visible, vec![0, 1, 2]);
        b.move_by(5);
        assert_eq!(b.selected, 2);
        b.move_by(-9);
        assert_eq!(b.selected_entry().map(|e| e.project.as_str()), Some("a"));
    }
}
