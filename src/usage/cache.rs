//! The usage cache: each session file's facts (`super::facts::FileFacts`) kept between runs, so
//! a report over unchanged files reads no transcript (issue 28 item 4, "fast because of the
//! library's index": until the library's index exists, this file is that index for usage).
//!
//! Who calls it: `super::report::collect`. Where: `usage-v1.json` in the platform cache
//! directory (`$XDG_CACHE_HOME/rawpv`, `~/.cache/rawpv` on Linux), mode 0600: it holds paths,
//! model names, ids and counts, never a session's text. A file is taken from the cache only when
//! its size and modification time are those recorded; a session whose subagent files grew
//! while the main file did not is re-read only when its `subagents/` directory changed too.
//!
//! Invariants: a missing, unreadable or foreign cache is a cold start (never an error); the
//! cache is written whole to a temporary file and renamed, so a killed run leaves the old one;
//! files that no longer exist leave it when it is written (their facts must not outlive them).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::facts::FileFacts;

/// The cache file's name (the version is the format's).
pub const FILE: &str = "usage-v1.json";
const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct OnDisk {
    version: u32,
    files: Vec<FileFacts>,
}

/// The facts of the files read before.
#[derive(Debug, Default)]
pub struct Cache {
    path: Option<PathBuf>,
    files: HashMap<PathBuf, FileFacts>,
    /// Something was added or replaced.
    dirty: bool,
}

/// The platform cache directory's rawpv directory.
pub fn default_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "rawpv").map(|d| d.cache_dir().to_path_buf())
}

/// The key of `path`: its size and modification time, plus its `subagents/` directory's when
/// it has one (Claude Code 2.1: `<session>/subagents/agent-*.jsonl`).
pub fn stamp(path: &Path) -> Option<(u64, i128)> {
    let (size, mtime) = super::facts::stamp(path)?;
    let sub = path.with_extension("").join("subagents");
    let extra = std::fs::read_dir(&sub)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| super::facts::stamp(&e.path()))
        .fold((0u64, 0i128), |(s, m), (s2, m2)| (s + s2, m.max(m2)));
    Some((size + extra.0, mtime.max(extra.1)))
}

impl Cache {
    /// Opens the cache in `dir` (`None`: no cache, every file is read).
    pub fn open(dir: Option<PathBuf>) -> Self {
        let Some(dir) = dir else {
            return Self::default();
        };
        let path = dir.join(FILE);
        let files = std::fs::read(&path)
            .map(|b| Self::parse(&b).files)
            .unwrap_or_default();
        Self {
            path: Some(path),
            files,
            dirty: false,
        }
    }

    /// A cache from a file's bytes (not tied to a file: [`Self::save`] writes nothing); a
    /// foreign or broken one is empty.
    pub fn parse(bytes: &[u8]) -> Self {
        let files = serde_json::from_slice::<OnDisk>(bytes)
            .ok()
            .filter(|d| d.version == VERSION)
            .map(|d| d.files.into_iter().map(|f| (f.path.clone(), f)).collect())
            .unwrap_or_default();
        Self {
            path: None,
            files,
            dirty: false,
        }
    }

    /// How many files it holds.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The facts of `path` when it is unchanged since they were taken.
    pub fn get(&self, path: &Path, stamp: (u64, i128)) -> Option<&FileFacts> {
        self.files
            .get(path)
            .filter(|f| (f.size, f.mtime_ns) == stamp && f.error.is_none())
    }

    /// Records `facts` (keyed by their path and stamp).
    pub fn put(&mut self, facts: FileFacts) {
        self.dirty = true;
        self.files.insert(facts.path.clone(), facts);
    }

    /// Writes the cache when something changed, without the files that no longer exist (their
    /// facts must not outlive them).
    ///
    /// # Errors
    /// The directory or file cannot be written (the report is still right; say it and go on).
    pub fn save(mut self) -> Result<(), String> {
        let Some(path) = self.path.take() else {
            return Ok(());
        };
        let before = self.files.len();
        self.files.retain(|p, _| p.exists());
        if !self.dirty && self.files.len() == before {
            return Ok(());
        }
        let dir = path.parent().unwrap_or_else(|| Path::new("."));
        let fail = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", path.display());
        std::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
        let mut files: Vec<FileFacts> = self.files.into_values().collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let body = serde_json::to_vec(&OnDisk {
            version: VERSION,
            files,
        })
        .map_err(|e| fail(&e))?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| fail(&e))?;
        // NamedTempFile is created 0600 on Unix.
        std::io::Write::write_all(&mut tmp, &body).map_err(|e| fail(&e))?;
        tmp.persist(&path).map_err(|e| fail(&e.error))?;
        Ok(())
    }
}
