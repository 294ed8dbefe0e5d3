//! Shared by the render tests: every record of the corpus Claude Code transcripts, in file order.
//! Returns `None` (after saying so) when `../shared/corpus` is absent, so callers skip.

use std::path::Path;

use serde_json::Value;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/claude-code");

/// Every JSON record of `claude-code/*.jsonl`, files in name order; unparsable lines skipped.
pub fn records() -> Option<Vec<Value>> {
    let dir = Path::new(CORPUS);
    if super::corpus::skipped(dir) {
        return None;
    }
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).ok()?;
        out.extend(
            text.lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok()),
        );
    }
    Some(out)
}
