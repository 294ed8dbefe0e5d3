//! The session browser screen: `rawpv` with no input on a terminal lists the sessions under
//! `~/.claude/projects` (and the config's `browser.dirs`); typing filters (fuzzy), Up/Down move,
//! Enter opens the session in the viewer, and Esc (or q) in the viewer comes back to the list.
//! Esc on an empty filter, or Ctrl-C, leaves. A session whose file changed within
//! `live.recent` is being written: it is followed (`-f`), so what the agent appends shows;
//! `rawpv` in a project with such a session opens it first (issue 21).
//!
//! Each row's cost comes from a thread of its own (`crate::usage::report::costs`, through the
//! usage cache), row by row as the sessions are read.
//!
//! With the library index (issue 27; not with `--no-index` or `library.index = false`): the
//! rows are the index's, drawn at once from what is already indexed; an indexing thread
//! (`crate::library::live::Live`) reads what is new or changed and then watches the session
//! directories, and the rows are read again as it reports (at most every [`RELOAD_EVERY`]), its
//! progress in the status line. `/` types a full-text search, Enter runs it on a thread of its
//! own (`crate::library::searcher`; "searching…" meanwhile, typing or Esc supersedes it) and
//! lists the hits; Enter on a hit opens the session at that row with the words highlighted; Esc
//! goes back.
//!
//! Who calls it: [`crate::app::run_browse`] (from `main.rs`). Invariants: one terminal owner; the
//! list's input stream is dropped while the viewer runs (the viewer reads its own); a fatal
//! signal, in the list or in a viewer opened from it, ends the process (exit 128+N), and so does
//! the end of terminal input.

use std::time::Duration;

use crossterm::event::{Event, EventStream, KeyCode, KeyEventKind, KeyModifiers};
use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{App, event_loop};
use crate::browse::{self, Browser};
use crate::config::Config;
use crate::signals::{Sig, Signals};
use crate::source::{CHANNEL_CAPACITY, NetConfig, SourceKind, spawn_source_with};
use crate::tui::Tui;

/// Runs the browser until the user leaves; returns the exit code.
///
/// # Errors
/// The terminal could not be set up or written.
pub(super) async fn run_browser(
    config: &Config,
    no_index: bool,
    first: Option<std::path::PathBuf>,
) -> color_eyre::Result<i32> {
    let opened = (config.library.index && !no_index).then(|| Library::open(config));
    let notice = match &opened {
        Some(Ok((_, notes))) if !notes.is_empty() => Some(notes.join("; ")),
        Some(Err(e)) => Some(e.clone()),
        _ => None,
    };
    let mut lib = opened.and_then(Result::ok).map(|(l, _)| l);
    // The full-text search's thread, with its own connection to the index.
    let mut searcher = lib
        .as_ref()
        .map(|l| crate::library::searcher::Searcher::start(l.db.clone()));
    // A cold index (nothing in it yet): the files as a scan lists them, until indexed.
    let mut pending: Vec<browse::SessionEntry> = Vec::new();
    let mut browser = match &lib {
        Some(l) => {
            let rows = l.rows();
            if rows.is_empty() {
                pending = browse::scan(&crate::library::roots(&config.browser.dirs));
            }
            let mut b = Browser::from_library(Vec::new());
            b.replace_rows(rows, &pending);
            b.status = Some("indexing…".into());
            b
        }
        None => Browser::scan(&browse::default_roots(&config.browser.dirs)),
    };
    browser.notice = notice.map(|n| crate::render::text::visible(&n));
    browser.now_ms = now_ms();
    // Each session's cost, off the UI thread: cached ones at once, the others as they are read
    // (again once the index has listed more sessions than were costed).
    let mut cost_rx = spawn_costs(&browser);
    let mut costed = browser.entries.len();
    let theme = config.theme(crate::config::no_color_env());
    let mut tui = Tui::init()?;
    let mut events = EventStream::new();
    // Polled here too: once the viewer has registered handlers, a signal nobody polls is lost.
    let mut signals = Signals::new()?;
    let mut last_reload = std::time::Instant::now();
    // `rawpv` in a project whose session is being written now (issue 21): that session first,
    // live; Esc or q shows the list.
    if let Some(path) = first {
        drop(events);
        open_in_viewer(SourceKind::Follow(path), config, &mut tui, None).await?;
        if crate::signals::fatal().is_some() {
            return Ok(0);
        }
        tui.clear_screen()?;
        events = EventStream::new();
    }
    loop {
        browser.now_ms = now_ms();
        tui.draw(|f| {
            let area = f.area();
            crate::ui::browser::render_browser(area, f.buffer_mut(), &browser, &theme);
        })?;
        let ev = tokio::select! {
            biased;
            ev = events.next() => ev,
            cost = cost_rx.recv(), if !browser.costs_done => {
                match cost {
                    Some((p, c)) => {
                        browser.costs.insert(p, c);
                        // Draw once a batch has arrived, not once per session.
                        while let Ok((p, c)) = cost_rx.try_recv() {
                            browser.costs.insert(p, c);
                        }
                    }
                    None => browser.costs_done = true,
                }
                continue;
            }
            upd = async {
                match lib.as_mut() {
                    Some(l) => l.live.rx.recv().await,
                    None => std::future::pending().await,
                }
            } => {
                let Some(l) = lib.as_mut() else { continue };
                let mut reload = false;
                let mut upd = upd;
                while let Some(u) = upd {
                    reload |= on_update(&mut browser, u);
                    upd = l.live.rx.try_recv().ok();
                }
                let idle = browser.status.is_none();
                if idle {
                    // Everything listed is in the index now.
                    pending.clear();
                }
                if reload && (idle || last_reload.elapsed() >= RELOAD_EVERY) {
                    browser.replace_rows(l.rows(), &pending);
                    last_reload = std::time::Instant::now();
                }
                if idle && browser.entries.len() > costed {
                    costed = browser.entries.len();
                    browser.costs_done = false;
                    cost_rx = spawn_costs(&browser);
                }
                continue;
            }
            found = async {
                match searcher.as_mut() {
                    Some(s) => s.rx.recv().await,
                    None => std::future::pending().await,
                }
            } => {
                // The search thread ended (it never does before the browser): nothing to take.
                let Some(found) = found else { continue };
                if let Some(sv) = browser.search.as_mut() {
                    sv.deliver(found);
                }
                continue;
            }
            sig = signals.recv() => {
                match sig {
                    Sig::Fatal(_) => break,
                    Sig::Stop => tui.suspend()?,
                    Sig::Cont => tui.resume()?,
                }
                continue;
            }
        };
        // The terminal went away (EOF) or cannot be read: leave, restoring what can be.
        let Some(ev) = ev else {
            break;
        };
        let Event::Key(k) = ev? else {
            continue;
        };
        if k.kind != KeyEventKind::Press {
            continue;
        }
        browser.notice = None;
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        if let (Some(_), Some(s)) = (browser.search.as_ref(), searcher.as_ref()) {
            match browser.search_key(k.code, ctrl, s, Some(MAX_HITS)) {
                browse::SearchStep::Stay => {}
                browse::SearchStep::Quit => break,
                browse::SearchStep::Open(hit) => {
                    let highlight = browser
                        .search
                        .as_ref()
                        .map(|sv| highlight_of(&sv.query))
                        .unwrap_or_default();
                    drop(events);
                    let at = Some((hit.item as usize, highlight));
                    open_in_viewer(SourceKind::File(hit.path), config, &mut tui, at).await?;
                    if crate::signals::fatal().is_some() {
                        break;
                    }
                    tui.clear_screen()?;
                    events = EventStream::new();
                }
            }
            continue;
        }
        match k.code {
            KeyCode::Char('/') if lib.is_some() => {
                browser.search = Some(browse::SearchView {
                    editing: true,
                    ..browse::SearchView::default()
                });
            }
            KeyCode::Char('c') if ctrl => break,
            KeyCode::Esc if browser.filter.is_empty() => break,
            KeyCode::Esc => browser.set_filter(""),
            KeyCode::Up => browser.move_by(-1),
            KeyCode::Down => browser.move_by(1),
            KeyCode::PageUp => browser.move_by(-10),
            KeyCode::PageDown => browser.move_by(10),
            KeyCode::Backspace => {
                let mut f = browser.filter.clone();
                f.pop();
                browser.set_filter(&f);
            }
            KeyCode::Enter => {
                let Some(path) = browser.selected_entry().map(|e| e.path.clone()) else {
                    continue;
                };
                drop(events);
                // A session still being written is followed, as `-f` does (issue 21).
                let kind = if crate::project::file_being_written(
                    &path,
                    std::time::SystemTime::now(),
                    config.live.recent,
                ) {
                    SourceKind::Follow(path)
                } else {
                    SourceKind::File(path)
                };
                open_in_viewer(kind, config, &mut tui, None).await?;
                if crate::signals::fatal().is_some() {
                    // The viewer quit on a fatal signal: the browser ends with it.
                    break;
                }
                tui.clear_screen()?;
                events = EventStream::new();
            }
            KeyCode::Char(c) if !ctrl => {
                let mut f = browser.filter.clone();
                f.push(c);
                browser.set_filter(&f);
            }
            _ => {}
        }
    }
    Ok(0)
}

async fn open_in_viewer(
    kind: SourceKind,
    config: &Config,
    tui: &mut Tui,
    at: Option<(usize, String)>,
) -> color_eyre::Result<()> {
    let live = matches!(kind, SourceKind::Follow(_));
    let mut app = App::new(kind.label(), live);
    app.configure(config);
    app.from_browser = true;
    if let Some((item, query)) = at {
        app.set_open_at(item, &query);
    }
    if let SourceKind::File(p) = &kind {
        // As `rawpv FILE`: big outputs stay in the file (the file source skips building them).
        app.session.backing = Some(std::sync::Arc::from(p.as_path()));
    }
    let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
    let cancel = CancellationToken::new();
    let source = spawn_source_with(kind, NetConfig::default(), tx, cancel.clone());
    let result = event_loop(&mut app, tui, rx).await;
    cancel.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(1), source).await;
    result
}

/// Rows are read again from the index at most this often while it indexes.
pub const RELOAD_EVERY: Duration = Duration::from_millis(250);

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// The index (a reading connection) and its indexing thread.
struct Library {
    store: crate::library::SqliteStore,
    live: crate::library::live::Live,
    /// The index file (the search thread opens its own connection).
    db: std::path::PathBuf,
}

impl Library {
    /// Opens the index and starts indexing the library's directories, with what to tell the
    /// user about the index file (moved aside and rebuilt); `Err` (the plain list, and why)
    /// when it cannot be opened.
    fn open(config: &Config) -> Result<(Self, Vec<String>), String> {
        let db = crate::library::store::default_path()
            .ok_or("no cache directory for the library index: the plain list")?;
        let opened = crate::library::SqliteStore::open(&db)?;
        let paths = crate::library::roots(&config.browser.dirs);
        let live = crate::library::live::Live::start(db.clone(), paths, crate::library::live::POLL);
        Ok((
            Self {
                store: opened.store,
                live,
                db,
            },
            opened.notes,
        ))
    }

    /// The index's session rows now (none on an error).
    fn rows(&self) -> Vec<crate::library::SessionRow> {
        use crate::library::Store;
        self.store
            .sessions(&crate::library::Filter::default())
            .unwrap_or_default()
    }
}

/// Hits listed at most by the browser's search.
pub const MAX_HITS: usize = 500;

/// Applies an indexing report to the browser; returns whether the rows changed.
fn on_update(b: &mut Browser, u: crate::library::live::Update) -> bool {
    use crate::library::live::Update;
    match u {
        Update::Progress(p) => {
            b.status = Some(format!(
                "indexing {}/{} files · {}%",
                p.files_done,
                p.files,
                (p.bytes_done * 100).checked_div(p.bytes).unwrap_or(100)
            ));
            true
        }
        Update::Idle(p) => {
            b.status = None;
            p.files_done > 0 || p.removed > 0
        }
        Update::Note(n) | Update::Failed(n) => {
            b.notice = Some(crate::render::text::visible(&n));
            false
        }
    }
}

/// The viewer's search (a regex) that highlights the words of a full-text query.
pub fn highlight_of(query: &str) -> String {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| regex::escape(&w.to_lowercase()))
        .collect();
    words.join("|")
}

/// Starts reading the cost of every entry of `b` on a thread of its own.
fn spawn_costs(
    b: &Browser,
) -> mpsc::UnboundedReceiver<(std::path::PathBuf, crate::usage::price::Cost)> {
    let (cost_tx, cost_rx) = mpsc::unbounded_channel();
    let inputs: crate::usage::report::Inputs = b
        .entries
        .iter()
        .map(|e| (e.path.clone(), e.project.clone()))
        .collect();
    std::thread::spawn(move || {
        crate::usage::report::costs(
            &inputs,
            crate::usage::cache::default_dir(),
            crate::usage::price::table(),
            |p, c| cost_tx.send((p, c)).is_ok(),
        );
    });
    cost_rx
}
