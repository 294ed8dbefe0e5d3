//! The biggest corpus transcript (2 MB, 1044 records) loads and folds well under a second in a
//! debug build. Its own test binary, so the other tests do not run beside it; the best of three
//! runs is taken to ignore a busy machine. Skips when `../shared/corpus` is absent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use rawpv::import;
use rawpv::session::Session;

#[test]
fn biggest_transcript_loads_fast() {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/claude-code/cc-v2.1.39-compaction-A-excerpt.jsonl"
    ));
    if !path.exists() {
        eprintln!("skipping: {} is absent", path.display());
        return;
    }
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let started = Instant::now();
        let loaded = import::load_path(path).unwrap();
        let session = Session::from_decoded(loaded.items);
        best = best.min(started.elapsed());
        assert_eq!(session.counts.invocations, 110);
    }
    eprintln!("2 MB transcript, load + fold: best of 3 = {best:?}");
    assert!(best < Duration::from_secs(1), "took {best:?}");
}
