//! The sessions of the project rawpv runs in (issue 21 item 1): `rawpv` inside a project
//! directory opens the session being written there now, `rawpv --latest` its newest session.
//!
//! Who calls it: `main.rs` (`--latest`) and the browser entry (`crate::app::run_browse`).
//! Pure apart from reading directories: roots, the directory and the time are parameters.
//!
//! Where it looks, for the directory and then each parent up to (not including) the home
//! directory and `/`, stopping at the first that has sessions:
//! * Claude Code (a root named `projects`): `<root>/<dir with every character but ASCII
//!   letters and digits as '-'>/`, the files whose records name that `cwd` (or none);
//! * Codex (a root named `sessions`): today's and yesterday's `YYYY/MM/DD` folders (local
//!   date), the rollouts whose `session_meta` names that `cwd`;
//! * any other root (the config's `browser.dirs`): its sessions naming that `cwd`.
//!
//! Gemini sessions are one JSON document each, read only when complete: they are not
//! followed live, so they are not looked for.
//!
//! Invariants: only the files of the candidate folders are peeked (`crate::browse::scan`),
//! never the whole library; "newest" is by modification time.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::browse::{self, SessionEntry};

/// Claude Code's folder name for a project directory: every character but ASCII letters and
/// digits becomes `-` (`/home/me/my.app` → `-home-me-my-app`).
pub fn claude_dir_name(dir: &Path) -> String {
    dir.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The sessions of `dir` exactly (not its parents) under `roots`, newest (by modification
/// time) first. `today` is the local date, for Codex's dated folders.
pub fn sessions_of(roots: &[PathBuf], dir: &Path, today: chrono::NaiveDate) -> Vec<SessionEntry> {
    let want = dir.to_string_lossy().trim_end_matches('/').to_owned();
    let names = |e: &SessionEntry| e.project.trim_end_matches('/') == want;
    let mut out = Vec::new();
    for root in roots {
        let name = root.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "projects" {
            let folder = root.join(claude_dir_name(dir));
            // A record naming another directory means a name collision (`my-app`, `my.app`).
            out.extend(
                browse::scan(std::slice::from_ref(&folder))
                    .into_iter()
                    .filter(|e| names(e) || !e.project.starts_with('/')),
            );
        } else if name == "sessions" && !root.join("projects").exists() {
            let days = [today, today.pred_opt().unwrap_or(today)];
            let folders: Vec<PathBuf> = days
                .iter()
                .map(|d| root.join(d.format("%Y/%m/%d").to_string()))
                .collect();
            out.extend(browse::scan(&folders).into_iter().filter(names));
        } else if !is_gemini(root) {
            out.extend(
                browse::scan(std::slice::from_ref(root))
                    .into_iter()
                    .filter(names),
            );
        }
    }
    out.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
    out.dedup_by(|a, b| a.path == b.path);
    out
}

/// The sessions of `dir`, else of its nearest parent that has any (never `home` itself unless
/// `dir` is `home`, never `/`), newest first.
pub fn project_sessions(
    roots: &[PathBuf],
    dir: &Path,
    home: Option<&Path>,
    today: chrono::NaiveDate,
) -> Vec<SessionEntry> {
    for (i, d) in dir.ancestors().enumerate() {
        if d.parent().is_none() || (i > 0 && Some(d) == home) {
            break;
        }
        let found = sessions_of(roots, d, today);
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

/// Whether `entry`'s file changed within `recent` of `now`: it is being written now.
pub fn being_written(entry: &SessionEntry, now: SystemTime, recent: Duration) -> bool {
    modified_within(entry.modified, now, recent)
}

/// Whether `path` changed within `recent` of `now` (a missing file: no).
pub fn file_being_written(path: &Path, now: SystemTime, recent: Duration) -> bool {
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    modified_within(modified, now, recent)
}

fn modified_within(modified: Option<SystemTime>, now: SystemTime, recent: Duration) -> bool {
    modified.is_some_and(|m| match now.duration_since(m) {
        Ok(age) => age <= recent,
        // Changed "after" now: a clock step; it is being written.
        Err(_) => true,
    })
}

/// Gemini's `~/.gemini/tmp`.
fn is_gemini(root: &Path) -> bool {
    root.file_name().is_some_and(|n| n == "tmp")
        && root
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == ".gemini")
}

/// The places [`project_sessions`] looks in, said when nothing is found: `~/.claude/projects/
/// -home-me-app`, `~/.codex/sessions/2026/12/02`, …
pub fn looked_in(roots: &[PathBuf], dir: &Path, today: chrono::NaiveDate) -> Vec<String> {
    roots
        .iter()
        .filter_map(|root| {
            let name = root.file_name().and_then(|n| n.to_str()).unwrap_or("");
            match name {
                "projects" => Some(root.join(claude_dir_name(dir)).display().to_string()),
                "sessions" => Some(
                    root.join(today.format("%Y/%m/%d").to_string())
                        .display()
                        .to_string(),
                ),
                _ if is_gemini(root) => None,
                _ => Some(root.display().to_string()),
            }
        })
        .collect()
}

/// This process's directory, home directory and local date.
pub fn here() -> Option<(PathBuf, Option<PathBuf>, chrono::NaiveDate)> {
    let dir = std::env::current_dir().ok()?;
    let home = directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf());
    Some((dir, home, chrono::Local::now().date_naive()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cc_record(cwd: &str) -> String {
        format!(
            r#"{{"type":"user","cwd":"{cwd}","sessionId":"s","uuid":"u1","parentUuid":null,"timestamp":"2026-12-02T10:00:00.000Z","message":{{"role":"user","content":"hello"}}}}"#
        ) + "\n"
    }

    #[test]
    fn finds_the_claude_code_and_codex_sessions_of_a_directory_and_its_parents() {
        let home = tempfile::tempdir().unwrap();
        let projects = home.path().join(".claude/projects");
        let sessions = home.path().join(".codex/sessions");
        let dir = home.path().join("work/my.app");
        let cc = projects.join(claude_dir_name(&dir));
        std::fs::create_dir_all(&cc).unwrap();
        let cwd = dir.to_string_lossy().into_owned();
        std::fs::write(cc.join("a.jsonl"), cc_record(&cwd)).unwrap();
        // Another project whose folder name collides: its records say so.
        std::fs::write(cc.join("other.jsonl"), cc_record("/elsewhere/my-app")).unwrap();
        let today = chrono::NaiveDate::from_ymd_opt(2026, 12, 2).unwrap();
        let day = sessions.join("2026/12/01");
        std::fs::create_dir_all(&day).unwrap();
        let meta = format!(
            r#"{{"timestamp":"2026-12-01T10:00:00.000Z","type":"session_meta","payload":{{"id":"x","cwd":"{cwd}"}}}}"#
        );
        std::fs::write(day.join("rollout-1.jsonl"), meta + "\n").unwrap();
        let roots = browse::roots_from(Some(home.path()), None, &[]);
        let mut found: Vec<String> = sessions_of(&roots, &dir, today)
            .iter()
            .map(|e| e.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        found.sort();
        assert_eq!(found, ["a.jsonl", "rollout-1.jsonl"]);
        // From a subdirectory, the project's sessions; from elsewhere in home, none.
        let sub = dir.join("src/lib");
        assert_eq!(
            project_sessions(&roots, &sub, Some(home.path()), today).len(),
            2
        );
        assert!(
            project_sessions(&roots, &home.path().join("work"), Some(home.path()), today)
                .is_empty()
        );
        let e = &sessions_of(&roots, &dir, today)[0];
        let now = SystemTime::now();
        assert!(being_written(e, now, Duration::from_mins(1)));
        assert!(!being_written(
            e,
            now + Duration::from_hours(1),
            Duration::from_mins(1)
        ));
    }
}
