//! Session browser model: the sessions found under root directories (by default
//! `~/.claude/projects` plus the config's `browser.dirs`), newest first, with a fuzzy filter.
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

/// One session file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionEntry {
    pub path: PathBuf,
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
}

impl SessionEntry {
    /// Sort key: start time (else mtime) in epoch ms.
    fn when(&self) -> i64 {
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
        format!(
            "{} {}",
            self.project,
            self.first_prompt.as_deref().unwrap_or("")
        )
    }
}

/// `~/.claude/projects` (when the home directory is known) followed by `extra`.
pub fn default_roots(extra: &[PathBuf]) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = directories::BaseDirs::new()
        .map(|b| b.home_dir().join(".claude").join("projects"))
        .into_iter()
        .collect();
    roots.extend(extra.iter().cloned());
    roots
}

/// Lists `*.jsonl` / `*.ndjson` / `*.json` files directly in each root and in its
/// subdirectories (one level: Claude Code's `projects/<project>/<session>.jsonl`), newest first.
pub fn scan(roots: &[PathBuf]) -> Vec<SessionEntry> {
    let mut out = Vec::new();
    for root in roots {
        let Ok(rd) = std::fs::read_dir(root) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                let project = project_name(&p);
                if let Ok(inner) = std::fs::read_dir(&p) {
                    for f in inner.flatten() {
                        if is_session_file(&f.path()) {
                            out.push(entry(&f.path(), &project));
                        }
                    }
                }
            } else if is_session_file(&p) {
                out.push(entry(&p, &project_name(root)));
            }
        }
    }
    out.sort_by(|a, b| b.when().cmp(&a.when()).then_with(|| a.path.cmp(&b.path)));
    out
}

/// A session file to list. Claude Code's subagent transcripts (`agent-*.jsonl` beside their
/// session, the 2.0-era layout) are not sessions of their own: opening the parent session brings
/// them in (`crate::import::claude_code`).
fn is_session_file(p: &Path) -> bool {
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
    let (first_prompt, started) = peek(path);
    SessionEntry {
        path: path.to_path_buf(),
        project: project.to_owned(),
        first_prompt,
        started,
        size: meta.as_ref().map_or(0, std::fs::Metadata::len),
        modified: meta.and_then(|m| m.modified().ok()),
    }
}

/// Reads the first [`PEEK_BYTES`] of a file: the first timestamp and the first user prompt
/// (Claude Code `user` records with text content, or RAWP `control.prompt.request`).
pub fn peek(path: &Path) -> (Option<String>, Option<Timestamp>) {
    let mut buf = Vec::with_capacity(PEEK_BYTES);
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.take(PEEK_BYTES as u64).read_to_end(&mut buf);
    }
    let text = String::from_utf8_lossy(&buf);
    let mut started = None;
    let mut prompt = None;
    // The last line may be cut by the byte limit: it simply fails to parse.
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if started.is_none() {
            started = v
                .get("timestamp")
                .or_else(|| v.get("ts"))
                .and_then(Timestamp::from_json);
        }
        if prompt.is_none() {
            prompt = prompt_of(&v);
        }
        if started.is_some() && prompt.is_some() {
            break;
        }
    }
    (prompt, started)
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
    } else if v.get("type").and_then(Value::as_str) == Some("control.prompt.request") {
        let p = v.get("payload")?;
        p.get("text")
            .or_else(|| p.get("prompt"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    } else {
        None
    }?;
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
}

impl Browser {
    /// A browser over `roots` (see [`scan`]).
    pub fn scan(roots: &[PathBuf]) -> Self {
        Self::new(scan(roots))
    }

    pub fn new(entries: Vec<SessionEntry>) -> Self {
        let visible = (0..entries.len()).collect();
        Self {
            entries,
            visible,
            ..Self::default()
        }
    }

    /// Sets the filter and recomputes the visible rows (best match first; ties keep newest
    /// first); the selection goes back to the top.
    pub fn set_filter(&mut self, filter: &str) {
        filter.clone_into(&mut self.filter);
        let mut scored: Vec<(i64, usize)> = self
            .entries
            .iter()
            .enumerate()
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

    #[test]
    fn fuzzy_filter_ranks_and_hides() {
        assert!(fuzzy_score("fxp", "Fix the parser").is_some());
        assert!(fuzzy_score("pxf", "Fix the parser").is_none());
        assert!(fuzzy_score("par", "parser").unwrap() > fuzzy_score("par", "p a r").unwrap());
        let e = |p: &str, q: &str| SessionEntry {
            path: PathBuf::from(p),
            project: p.into(),
            first_prompt: Some(q.into()),
            started: None,
            size: 0,
            modified: None,
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
