//! The library while rawpv runs (issue 27 item 2): the indexing thread with the real file
//! watcher (`notify`; its polling interval set to 30 s, so only the watcher can make the
//! deadline) updates a session's row within a second of an append, and a deleted session
//! leaves the rows and the search; the browser's rows and hit list from the index, as
//! snapshots at 80x24 and 200x60.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rawpv::library::live::{Live, Update};
use rawpv::library::{Filter, SqliteStore, Store, search};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/tui_session.jsonl"
);

/// Waits (at most `within`) for `done` to hold, draining the thread's reports; returns how
/// long it took.
fn wait(live: &mut Live, within: Duration, mut done: impl FnMut() -> bool) -> Option<Duration> {
    let t0 = Instant::now();
    while t0.elapsed() < within {
        while let Ok(u) = live.rx.try_recv() {
            assert!(!matches!(u, Update::Failed(_)), "{u:?}");
        }
        if done() {
            return Some(t0.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

fn rows(db: &Path) -> Vec<rawpv::library::SessionRow> {
    SqliteStore::open(db)
        .unwrap()
        .store
        .sessions(&Filter::default())
        .unwrap()
}

fn found(db: &Path, word: &str) -> Vec<PathBuf> {
    let store = SqliteStore::open(db).unwrap().store;
    let q = search::Query::parse(word, None).unwrap();
    search::search(&store, &q, &Filter::default(), None)
        .unwrap()
        .into_iter()
        .map(|h| h.path)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

#[test]
fn an_append_updates_the_row_within_a_second_and_a_deletion_leaves_search() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("projects");
    let dir = root.join("-home-me-p");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.jsonl");
    std::fs::copy(FIXTURE, &file).unwrap();
    let db = tmp.path().join("cache/library.sqlite");
    let mut live = Live::start(db.clone(), vec![root], Duration::from_secs(30));
    assert!(
        wait(&mut live, Duration::from_secs(20), || rows(&db).len() == 1).is_some(),
        "the first index"
    );
    let before = rows(&db).remove(0);
    assert!(found(&db, "zebrafish").is_empty());
    // Append a prompt and a call, as an agent writing its session does.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    std::io::Write::write_all(
        &mut f,
        concat!(
            r#"{"type": "control.prompt.request", "timestamp": "2026-11-29T11:00:00.000Z", "payload": {"input_type": "text", "text": "now find the zebrafish"}}"#,
            "\n",
            r#"{"type": "tool.invoke.request", "timestamp": "2026-11-29T11:00:01.000Z", "payload": {"invocation_id": "z1", "tool_name": "Grep", "input": {"pattern": "zebrafish"}}}"#,
            "\n",
        )
        .as_bytes(),
    )
    .unwrap();
    drop(f);
    let took = wait(&mut live, Duration::from_secs(5), || {
        rows(&db)
            .first()
            .is_some_and(|r| r.calls == before.calls + 1)
    });
    let took = took.expect("the row never changed");
    assert!(
        took < Duration::from_secs(1),
        "the row changed after {took:?}"
    );
    let after = rows(&db).remove(0);
    assert_eq!(after.last_ts, Some(1_795_950_001_000));
    assert_eq!(found(&db, "zebrafish"), vec![file.clone()]);
    // Deleted: out of the rows and the search.
    std::fs::remove_file(&file).unwrap();
    let took = wait(&mut live, Duration::from_secs(5), || rows(&db).is_empty());
    assert!(took.is_some_and(|t| t < Duration::from_secs(1)), "{took:?}");
    assert!(found(&db, "zebrafish").is_empty());
    assert!(found(&db, "parser").is_empty());
}

/// Another rawpv moved the index aside (it found it damaged) while this one's indexing thread
/// had it open: the thread opens the new file and fills it, instead of writing on into the
/// moved one while the browser reads an empty index.
#[test]
fn an_index_moved_aside_under_the_thread_is_opened_again_and_filled() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("projects");
    let dir = root.join("-home-me-p");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(FIXTURE, dir.join("s.jsonl")).unwrap();
    let db = tmp.path().join("cache/library.sqlite");
    let mut live = Live::start(db.clone(), vec![root], Duration::from_secs(30));
    let idle = |live: &mut Live| {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(20) {
            match live.rx.try_recv() {
                Ok(Update::Idle(_)) => return true,
                Ok(Update::Failed(e)) => panic!("{e}"),
                Ok(_) => {}
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
        false
    };
    assert!(idle(&mut live), "the first index");
    assert_eq!(rows(&db).len(), 1);
    let moved = tmp.path().join("cache/library.sqlite.bad-1");
    std::fs::rename(&db, &moved).unwrap();
    for ext in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(tmp.path().join(format!("cache/library.sqlite{ext}")));
    }
    live.poke();
    let mut notes = Vec::new();
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(20) {
        match live.rx.try_recv() {
            Ok(Update::Idle(_)) if db.exists() => break,
            Ok(Update::Note(n)) => notes.push(n),
            Ok(Update::Failed(e)) => panic!("{e}"),
            Ok(_) => {}
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    assert_eq!(rows(&db).len(), 1, "{notes:?}");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("replaced by another process"),
        "{notes:?}"
    );
}

fn draw(b: &rawpv::browse::Browser, w: u16, h: u16) -> Terminal<TestBackend> {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| {
        let area = f.area();
        rawpv::ui::browser::render_browser(area, f.buffer_mut(), b, &rawpv::theme::Theme::dark());
    })
    .unwrap();
    term
}

/// The corpus's Claude Code sessions indexed; the browser from the index, and its hits for
/// `xterm`.
#[test]
fn the_browser_on_the_index_and_its_hit_list() {
    let Some(files) = crate::support::corpus::files("claude-code") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("projects");
    for f in files.iter().filter(|f| {
        f.extension().is_some_and(|e| e == "jsonl")
            && !f
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("agent-")
    }) {
        let d = root.join(f.parent().unwrap().file_name().unwrap());
        std::fs::create_dir_all(&d).unwrap();
        std::fs::copy(f, d.join(f.file_name().unwrap())).unwrap();
    }
    let mut store = SqliteStore::open(&tmp.path().join("library.sqlite"))
        .unwrap()
        .store;
    let inputs = rawpv::library::index::list(std::slice::from_ref(&root));
    rawpv::library::index::update(&mut store, &inputs, |_| true).unwrap();
    let rows = store.sessions(&Filter::default()).unwrap();
    // Every row's project is its session's own cwd.
    for r in &rows {
        let (s, _) = rawpv::source::file::fold_path(&r.path).unwrap();
        let cwd = s
            .sessions
            .iter()
            .next()
            .and_then(|(_, e)| e.cwd.clone())
            .unwrap();
        assert_eq!(r.project, &*cwd, "{}", r.path.display());
    }
    let mut b = rawpv::browse::Browser::from_library(rows.clone()).with_home(None);
    b.costs_done = true;
    b.move_by(1);
    assert_snapshot!("library_browser_80x24", draw(&b, 80, 24).backend());
    assert_snapshot!("library_browser_200x60", draw(&b, 200, 60).backend());
    b.status = Some("indexing 3/12 files · 25%".into());
    assert_snapshot!("library_browser_indexing_80x24", draw(&b, 80, 24).backend());
    // Sessions the index does not hold yet (a cold index under way) are drawn in its columns,
    // in line with the rows around them (they were in the file list's: attack of session 14).
    let scanned = rawpv::browse::scan(std::slice::from_ref(&root));
    let mut pending = b.clone();
    pending.replace_rows(rows[2..].to_vec(), &scanned);
    assert_snapshot!(
        "library_browser_pending_80x24",
        draw(&pending, 80, 24).backend()
    );
    assert_snapshot!(
        "library_browser_pending_200x60",
        draw(&pending, 200, 60).backend()
    );
    b.status = None;
    let q = search::Query::parse("xterm", None).unwrap();
    let hits = search::search(&store, &q, &Filter::default(), None).unwrap();
    assert!(!hits.is_empty());
    b.search = Some(rawpv::browse::SearchView {
        query: "xterm".into(),
        hits,
        selected: 1,
        ..Default::default()
    });
    assert_snapshot!("library_hits_80x24", draw(&b, 80, 24).backend());
    assert_snapshot!("library_hits_200x60", draw(&b, 200, 60).backend());
    // The matches are drawn in the search style.
    let term = draw(&b, 200, 60);
    let buf = term.backend().buffer();
    let marked = (0..200u16)
        .filter(|&x| buf[(x, 2)].style().bg == rawpv::theme::Theme::dark().search_match.bg)
        .count();
    assert!(marked >= "xterm".len(), "{marked} cells marked");
}

/// Waits (at most 10 s) for the search thread's next outcome.
fn next_found(s: &mut rawpv::library::searcher::Searcher) -> rawpv::library::searcher::Found {
    let t0 = Instant::now();
    loop {
        if let Ok(f) = s.rx.try_recv() {
            return f;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "no search outcome");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Types `text` into the browser's search line.
fn type_in(b: &mut rawpv::browse::Browser, s: &rawpv::library::searcher::Searcher, text: &str) {
    use crossterm::event::KeyCode;
    for c in text.chars() {
        let step = b.search_key(KeyCode::Char(c), false, s, Some(50));
        assert_eq!(step, rawpv::browse::SearchStep::Stay);
    }
}

/// The browser's full-text search runs on the search thread (issue 27 item 4): Enter shows
/// "searching…" at once, the hits arrive on the channel; a query superseded by a newer one
/// (typing again, Enter) has its hits dropped even when they arrive after the newer one began;
/// typing supersedes a running search and Esc cancels it.
#[test]
fn the_browsers_search_runs_off_the_ui_task_and_drops_superseded_hits() {
    use crossterm::event::KeyCode;
    use rawpv::browse::SearchStep;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("projects").join("-home-me-proj");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(FIXTURE, dir.join("s.jsonl")).unwrap();
    let db = tmp.path().join("library.sqlite");
    let mut store = SqliteStore::open(&db).unwrap().store;
    let inputs = rawpv::library::index::list(&[tmp.path().join("projects")]);
    rawpv::library::index::update(&mut store, &inputs, |_| true).unwrap();
    let mut searcher = rawpv::library::searcher::Searcher::start(db.clone());
    let mut b = rawpv::browse::Browser::from_library(store.sessions(&Filter::default()).unwrap())
        .with_home(None);
    b.costs_done = true;
    b.search = Some(rawpv::browse::SearchView {
        editing: true,
        ..Default::default()
    });

    // The first query: "searching…" until its outcome is taken.
    type_in(&mut b, &searcher, "panicked");
    assert_eq!(
        b.search_key(KeyCode::Enter, false, &searcher, Some(50)),
        SearchStep::Stay
    );
    let sv = b.search.as_ref().unwrap();
    assert!(sv.pending.is_some() && sv.hits.is_empty() && !sv.editing);
    assert_snapshot!("library_searching_80x24", draw(&b, 80, 24).backend());
    let stale = next_found(&mut searcher);
    assert!(
        stale.result.as_ref().is_ok_and(|h| !h.is_empty()),
        "{stale:?}"
    );

    // A newer query before the first one's hits were taken: they arrive late and are dropped.
    type_in(&mut b, &searcher, "/");
    for _ in 0.."panicked".len() {
        b.search_key(KeyCode::Backspace, false, &searcher, Some(50));
    }
    type_in(&mut b, &searcher, "parser");
    b.search_key(KeyCode::Enter, false, &searcher, Some(50));
    let sv = b.search.as_mut().unwrap();
    assert_eq!(sv.query, "parser");
    assert!(!sv.deliver(stale), "a superseded query's hits were taken");
    assert!(sv.hits.is_empty() && sv.pending.is_some());
    let found = next_found(&mut searcher);
    assert!(sv.deliver(found));
    assert!(sv.pending.is_none() && sv.message.is_none());
    assert!(!sv.hits.is_empty());
    for h in &sv.hits {
        assert!(h.snippet.to_lowercase().contains("parser"), "{h:?}");
    }
    // Enter on a hit opens it.
    assert!(matches!(
        b.search_key(KeyCode::Enter, false, &searcher, Some(50)),
        SearchStep::Open(h) if h.path == dir.join("s.jsonl")
    ));

    // Typing while a search runs supersedes it: its hits are not taken.
    type_in(&mut b, &searcher, "/");
    b.search_key(KeyCode::Enter, false, &searcher, Some(50));
    let running = b.search.as_ref().unwrap().pending.unwrap();
    type_in(&mut b, &searcher, "/x");
    let sv = b.search.as_mut().unwrap();
    assert_eq!(sv.pending, None);
    assert!(!sv.deliver(rawpv::library::searcher::Found {
        id: running,
        result: Ok(Vec::new()),
    }));
    // A bad query says so.
    sv.query = "\"unclosed".into();
    b.search_key(KeyCode::Enter, false, &searcher, Some(50));
    let id = b.search.as_ref().unwrap().pending.unwrap();
    let f = loop {
        let f = next_found(&mut searcher);
        if f.id == id {
            break f;
        }
    };
    let sv = b.search.as_mut().unwrap();
    assert!(sv.deliver(f));
    assert!(
        sv.message.as_ref().unwrap().contains("unclosed quote"),
        "{sv:?}"
    );
    // Esc while a search runs closes the search.
    type_in(&mut b, &searcher, "/");
    b.search_key(KeyCode::Enter, false, &searcher, Some(50));
    assert_eq!(
        b.search_key(KeyCode::Esc, false, &searcher, Some(50)),
        SearchStep::Stay
    );
    assert!(b.search.is_none());
    // The search thread goes on answering after a cancel.
    let id = searcher.submit("tests", Some(5));
    let f = loop {
        let f = next_found(&mut searcher);
        if f.id == id {
            break f;
        }
    };
    assert!(f.result.is_ok_and(|h| !h.is_empty() && h.len() <= 5));
}
