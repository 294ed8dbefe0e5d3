//! The sessions the export tests write (issue 26): every corpus session file and every RAWP
//! fixture, each with its call count from the library's own fold (the oracle a page or a
//! document is held to).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use rawpv::session::Session;

/// Corpus sessions (`../shared/corpus/{claude-code,codex,gemini,anthropic-api,diffs,terminal}`)
/// and `tests/fixtures/*.ndjson` and `tests/fixtures/export/*.ndjson` (RAWP; the export
/// fixtures live apart so the oracle of `oracle_outputs` does not list them), sorted; `None` when the corpus is missing (skipped).
pub fn sessions() -> Option<Vec<PathBuf>> {
    let mut out = super::corpus::all_sessions()?;
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    let mut rawp: Vec<PathBuf> = [fixtures.to_owned(), format!("{fixtures}/export")]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ndjson"))
        .collect();
    rawp.sort();
    out.extend(rawp);
    Some(out)
}

/// The finished session of `path`, as `rawpv export` folds it.
pub fn load(path: &Path) -> Session {
    rawpv::source::file::fold_path(path).unwrap().0
}
