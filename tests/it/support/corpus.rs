//! The shared corpus (`../shared/corpus`) for the tests that read it: its directory, or `None`
//! after printing a visible "skipped" line when it is absent. Under CI (`CI=true`, which CI
//! sets and where the corpus is present) an absent corpus fails the test loudly instead, so a
//! broken checkout cannot pass by skipping.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `../shared/corpus`, next to the repository.
pub const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus");

/// `CORPUS/sub` when it exists; else panics under CI, or says "skipped" and returns `None`.
pub fn dir(sub: &str) -> Option<PathBuf> {
    let p = Path::new(CORPUS).join(sub);
    (!skipped(&p)).then_some(p)
}

/// Whether a corpus path is missing, so the test should skip: says "skipped" (on stdout, which
/// `cargo test` shows for the test, and stderr) and returns `true`; under CI (`CI=true`) a
/// missing corpus is a failure instead. `false` when the path exists.
pub fn skipped(p: &Path) -> bool {
    if p.exists() {
        return false;
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(
        !ci,
        "the corpus is missing at {} (CI=true: corpus tests must run)",
        p.display()
    );
    eprintln!("skipped: the corpus is missing at {}", p.display());
    println!("skipped: the corpus is missing at {}", p.display());
    true
}

/// Every file under `CORPUS/sub` (recursively), sorted.
pub fn files(sub: &str) -> Option<Vec<PathBuf>> {
    let root = dir(sub)?;
    let mut out = Vec::new();
    let mut dirs = vec![root];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    Some(out)
}

/// Every corpus session: the files of `claude-code`, `codex`, `gemini`, `anthropic-api`,
/// `diffs` and `terminal`; `None` when the corpus is missing (skipped).
pub fn all_sessions() -> Option<Vec<PathBuf>> {
    let mut out = Vec::new();
    for sub in [
        "claude-code",
        "codex",
        "gemini",
        "anthropic-api",
        "diffs",
        "terminal",
    ] {
        out.extend(files(sub)?);
    }
    Some(out)
}
