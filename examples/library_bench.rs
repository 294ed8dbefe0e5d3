//! The session library's speed figures (issue 27, BENCHMARKS.md "Session library").
//!
//! Usage (release build; generated files under /tmp, deleted by the caller):
//! * `library_bench index HOME DB`: a cold index of HOME's library directories into DB (which
//!   must not exist): MB/s of session files, files, seconds, the index's size and its share of
//!   the corpus.
//! * `library_bench fold HOME`: the baseline in the same run: every file folded by the same
//!   decoders on the same threads, nothing indexed (what `rawpv stats --no-cache` reads), MB/s.
//! * `library_bench read HOME`: as `fold`, plus what the indexer makes of each file (rows and
//!   documents, `library::index::read`), nothing written: the indexer's reading side alone.
//! * `library_bench append FILE [whole]`: one append to a session file as the browser's
//!   indexing thread indexes it: FILE but its last 7 lines indexed, then each line appended and
//!   the update timed (median); `whole` reads the changed file whole (the path before the
//!   append path), else through the append path (`index::Indexer`).
//! * `library_bench warm HOME DB`: the warm start with nothing changed: the update (a stat of
//!   every file) and, separately, the browser's first screen (open the index, read the rows,
//!   build the list, draw 200x60), each the median of 5 runs.
//! * `library_bench rows N DB`: writes N synthetic session rows (no files) into DB, then times
//!   the browser's first screen over them, the median of 5 runs.
//! * `library_bench search DB WORD [MAX]`: a word search over DB's index, verified against the
//!   files: the index's candidates, then the hits (at most MAX, the browser's screen of hits),
//!   median of 5.
//!
//! Who uses it: BENCHMARKS.md's commands. Invariant: it measures the library's own code paths
//! (`library::index::update`, `SqliteStore::sessions`, `Browser::from_library`,
//! `ui::browser::render_browser`, `library::search::search`), nothing reimplemented.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rawpv::library::{Filter, SessionRow, SqliteStore, Store, index, search};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn roots(home: &Path) -> Vec<PathBuf> {
    vec![
        home.join(".claude/projects"),
        home.join(".codex/sessions"),
        home.join(".gemini/tmp"),
    ]
    .into_iter()
    .filter(|p| p.is_dir())
    .collect()
}

fn first_screen(db: &Path) -> (Duration, usize) {
    let t0 = Instant::now();
    let store = SqliteStore::open(db).unwrap().store;
    let rows = store.sessions(&Filter::default()).unwrap();
    let n = rows.len();
    let b = rawpv::browse::Browser::from_library(rows);
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(200, 60)).unwrap();
    term.draw(|f| {
        let area = f.area();
        rawpv::ui::browser::render_browser(area, f.buffer_mut(), &b, &rawpv::theme::Theme::dark());
    })
    .unwrap();
    (t0.elapsed(), n)
}

/// `append FILE [whole]`: FILE's lines but the last 7 written to a new session file and
/// indexed into a new index (the first update, timed apart), then the 7 lines appended one at a
/// time, each followed by the update the browser's indexing thread runs (timed: the append's
/// whole cost on that thread, stat to commit). `whole`: through `index::update`, which reads a
/// changed file whole (the path every changed file took before the append path); else through
/// one `index::Indexer` (the browser's), which reads only the appended line.
fn append(file: &Path, mode: Option<&str>) {
    let bytes = std::fs::read(file).unwrap();
    let mut ends: Vec<usize> = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    ends.truncate(ends.len().saturating_sub(1));
    let tail: Vec<usize> = ends[ends.len() - 7..].to_vec();
    let tmp = tempfile::tempdir_in("/tmp").unwrap();
    let dir = tmp.path().join(".claude/projects/-p");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.jsonl");
    std::fs::write(&path, &bytes[..tail[0]]).unwrap();
    let db = tmp.path().join("library.sqlite");
    let mut store = SqliteStore::open(&db).unwrap().store;
    let inputs = vec![(path.clone(), "/p".to_owned())];
    let whole = mode == Some("whole");
    let mut indexer = if whole {
        index::Indexer::once()
    } else {
        index::Indexer::new()
    };
    let t0 = Instant::now();
    indexer.update(&mut store, &inputs, |_| true).unwrap();
    let first = t0.elapsed();
    let mut times = Vec::new();
    let mut at = tail[0];
    for &to in tail[1..].iter().chain([bytes.len()].iter()) {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut f, &bytes[at..to]).unwrap();
        drop(f);
        at = to;
        let t0 = Instant::now();
        let p = indexer.update(&mut store, &inputs, |_| true).unwrap();
        times.push(t0.elapsed());
        assert_eq!(p.files_done, 1);
    }
    let ms: Vec<String> = times
        .iter()
        .map(|d| format!("{:.1}", d.as_secs_f64() * 1e3))
        .collect();
    println!(
        "{}: first index {:.0} ms; one append ({} lines of {:.1} MB), each: {} ms; median {:.1} ms; tails kept {}",
        if whole { "whole file" } else { "append path" },
        first.as_secs_f64() * 1e3,
        times.len(),
        bytes.len() as f64 / 1e6,
        ms.join(", "),
        median(times).as_secs_f64() * 1e3,
        indexer.tails()
    );
}

fn main() {
    rawpv::no_transparent_huge_pages();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("index") => {
            let (home, db) = (Path::new(&args[1]), Path::new(&args[2]));
            assert!(
                !db.exists(),
                "{} exists: a cold index needs a new file",
                db.display()
            );
            let inputs = index::list(&roots(home));
            let t0 = Instant::now();
            let mut store = SqliteStore::open(db).unwrap().store;
            let p = index::update(&mut store, &inputs, |_| true).unwrap();
            store.checkpoint();
            let secs = t0.elapsed().as_secs_f64();
            let size = store.disk_size();
            println!(
                "cold index: {} files, {:.1} MB in {secs:.2} s = {:.1} MB/s; index {:.1} MB = {:.1}% of the corpus",
                p.files_done,
                p.bytes_done as f64 / 1e6,
                p.bytes_done as f64 / 1e6 / secs,
                size as f64 / 1e6,
                size as f64 * 100.0 / p.bytes_done.max(1) as f64
            );
        }
        Some(mode @ ("fold" | "read")) => {
            let read_too = mode == "read";
            let home = Path::new(&args[1]);
            let inputs = index::list(&roots(home));
            let next = std::sync::atomic::AtomicUsize::new(0);
            let bytes = std::sync::atomic::AtomicU64::new(0);
            let t0 = Instant::now();
            let threads = std::thread::available_parallelism().map_or(1, usize::from);
            std::thread::scope(|s| {
                for _ in 0..threads {
                    s.spawn(|| {
                        loop {
                            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some((p, _)) = inputs.get(k) else { break };
                            if read_too {
                                let (_, _, docs) = index::read(p, "");
                                assert!(!docs.is_empty());
                            } else {
                                let (session, _) = rawpv::source::file::fold_path(p).unwrap();
                                assert!(!session.items.is_empty());
                            }
                            let n = std::fs::metadata(p).unwrap().len();
                            bytes.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
                        }
                    });
                }
            });
            let secs = t0.elapsed().as_secs_f64();
            let b = bytes.into_inner() as f64 / 1e6;
            println!(
                "{mode} only: {} files, {b:.1} MB in {secs:.2} s = {:.1} MB/s",
                inputs.len(),
                b / secs
            );
        }
        Some("append") => append(Path::new(&args[1]), args.get(2).map(String::as_str)),
        Some("warm") => {
            let (home, db) = (Path::new(&args[1]), Path::new(&args[2]));
            let mut updates = Vec::new();
            let mut screens = Vec::new();
            let mut rows = 0;
            for _ in 0..5 {
                let t0 = Instant::now();
                let inputs = index::list(&roots(home));
                let mut store = SqliteStore::open(db).unwrap().store;
                let p = index::update(&mut store, &inputs, |_| true).unwrap();
                assert_eq!(p.files, 0, "something changed");
                updates.push(t0.elapsed());
                let (d, n) = first_screen(db);
                screens.push(d);
                rows = n;
            }
            println!(
                "warm: update with nothing changed {:.1} ms; first screen ({rows} sessions) {:.1} ms (medians of 5)",
                median(updates).as_secs_f64() * 1e3,
                median(screens).as_secs_f64() * 1e3
            );
        }
        Some("rows") => {
            let n: usize = args[1].parse().unwrap();
            let db = Path::new(&args[2]);
            let mut store = SqliteStore::open(db).unwrap().store;
            for k in 0..n {
                let row = SessionRow {
                    path: PathBuf::from(format!(
                        "/home/me/.claude/projects/-home-me-p{}/{k:08}.jsonl",
                        k % 40
                    )),
                    format: "claude-code".into(),
                    agent: "claude".into(),
                    project: format!("/home/me/src/project-{}", k % 40),
                    title: format!("session {k}: fix the parser and run the tests again"),
                    first_ts: Some(1_780_000_000_000 + k as i64 * 60_000),
                    last_ts: Some(1_780_000_000_000 + k as i64 * 60_000 + 3_600_000),
                    calls: (k % 300) as u64,
                    errors: (k % 7) as u64,
                    tools: vec!["Bash".into(), "Read".into(), "Edit".into()],
                    models: vec!["claude-opus-4-6".into()],
                    tokens_in: 1000,
                    tokens_out: 20_000,
                    ..SessionRow::default()
                };
                store.put(&row, &[], &[]).unwrap();
            }
            store.checkpoint();
            let mut screens = Vec::new();
            let mut rows = 0;
            for _ in 0..5 {
                let (d, r) = first_screen(db);
                screens.push(d);
                rows = r;
            }
            println!(
                "first screen over {rows} sessions: {:.1} ms (median of 5)",
                median(screens).as_secs_f64() * 1e3
            );
        }
        Some("search") => {
            let db = Path::new(&args[1]);
            let word = &args[2];
            let max = args.get(3).map(|m| m.parse::<usize>().unwrap());
            let store = SqliteStore::open(db).unwrap().store;
            let q = search::Query::parse(word, None).unwrap();
            let mut cands = Vec::new();
            let mut alls = Vec::new();
            let (mut nc, mut nh) = (0, 0);
            for _ in 0..5 {
                let t0 = Instant::now();
                nc = store
                    .candidates(&[word.to_lowercase()], &Filter::default())
                    .unwrap()
                    .len();
                cands.push(t0.elapsed());
                let t0 = Instant::now();
                nh = search::search(&store, &q, &Filter::default(), max)
                    .unwrap()
                    .len();
                alls.push(t0.elapsed());
            }
            println!(
                "search {word:?}: {nc} candidates from the index in {:.1} ms; {nh} verified hits{} in {:.1} ms (medians of 5)",
                median(cands).as_secs_f64() * 1e3,
                max.map(|m| format!(" (at most {m})")).unwrap_or_default(),
                median(alls).as_secs_f64() * 1e3
            );
        }
        _ => {
            eprintln!(
                "usage: library_bench index HOME DB | warm HOME DB | rows N DB | search DB WORD [MAX]"
            );
            std::process::exit(2);
        }
    }
}
