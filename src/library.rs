//! The session library (issue 27): every session file on the machine indexed in one SQLite
//! database (`store`), kept up to date from the files (`index`) and searched word by word, each
//! hit verified against the decoded text (`search`).
//!
//! Who calls it: `rawpv search` and `rawpv sessions` (`crate::cmd::search`), the session browser
//! (`crate::app::browser`). Where the files come from: [`roots`] (Claude Code's, Codex's and
//! Gemini's directories, `CLAUDE_CONFIG_DIR`, the config's `browser.dirs`) and the paths named on
//! the command line.
//!
//! Invariants: the index is a cache of the files: it can be deleted at any time (rebuilt on the
//! next run), it is never the only place anything is kept, and what it says is checked against
//! the files before it is shown (search hits are verified; a session row whose file went is
//! removed at the next update). `--no-index` and the config's `library.index = false` leave it
//! alone entirely (then `search` reads every file).

pub mod append;
pub mod index;
pub mod live;
pub mod search;
pub mod searcher;
pub mod store;

use std::path::PathBuf;

pub use store::{Filter, SessionRow, SqliteStore, Store};

/// The session directories of the library: `~/.claude/projects`, `~/.config/claude/projects`,
/// each `CLAUDE_CONFIG_DIR` entry's `projects`, Codex's and Gemini's session directories and
/// `extra` (the config's `browser.dirs`), those that exist, each once.
pub fn roots(extra: &[PathBuf]) -> Vec<PathBuf> {
    crate::usage::report::library_roots(extra)
}

/// Opens the index at its default place ([`store::default_path`]), saying on stderr what was
/// moved aside.
///
/// # Errors
/// No cache directory, or it cannot be written.
pub fn open_default() -> Result<SqliteStore, String> {
    let path = store::default_path().ok_or("no cache directory for the library index")?;
    let opened = SqliteStore::open(&path)?;
    for n in &opened.notes {
        eprintln!("rawpv: {n}");
    }
    Ok(opened.store)
}

/// A `--since` value: a duration back from now (`7d`, `12h`, `30m`) or a local date
/// (`2026-11-02`), as epoch ms.
///
/// # Errors
/// Neither form.
pub fn parse_since(s: &str) -> Result<i64, String> {
    let s = s.trim();
    if let Ok(d) = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        let t = d
            .and_hms_opt(0, 0, 0)
            .and_then(|t| t.and_local_timezone(chrono::Local).earliest())
            .ok_or_else(|| format!("no such local time: {s}"))?;
        return Ok(t.timestamp_millis());
    }
    let d = humantime::parse_duration(s)
        .map_err(|_| format!("not a duration or date: {s:?} (use 7d, 12h or YYYY-MM-DD)"))?;
    let now = chrono::Utc::now().timestamp_millis();
    Ok(now - i64::try_from(d.as_millis()).unwrap_or(i64::MAX).min(now))
}
