//! The session browser's full-text search off the UI task (issue 27 item 4): a thread with its
//! own connection to the index runs one query at a time and sends its hits back on a channel
//! the browser's loop polls.
//!
//! Who calls it: the session browser (`crate::app::browser`, through
//! [`crate::browse::Browser::search_key`]); tests drive it the same way.
//!
//! Invariants: every query gets an id, increasing; a newer query (or [`Searcher::cancel`])
//! supersedes the older ones: a query still waiting is skipped, one running is given up at its
//! next candidate (`search::search_until`), and its hits are not sent. The receiver checks the
//! id too ([`crate::browse::SearchView::deliver`]), so hits that were already on their way when
//! a newer query began never replace the newer query's. The thread's connection is its own
//! (SQLite WAL: the indexing thread's writes never block it); it is opened at the first query
//! and again after an error. Dropping the [`Searcher`] stops the thread.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::search::{self, Hit, Query};
use super::store::{Filter, SqliteStore};

/// A query's outcome: its hits (none: an empty list) or what went wrong (a bad pattern, the
/// index unreadable).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The id [`Searcher::submit`] returned for the query.
    pub id: u64,
    pub result: Result<Vec<Hit>, String>,
}

struct Job {
    id: u64,
    query: String,
    limit: Option<usize>,
}

/// The search thread (module docs).
pub struct Searcher {
    /// The outcomes, newest query's last; superseded queries send none.
    pub rx: UnboundedReceiver<Found>,
    jobs: std::sync::mpsc::Sender<Job>,
    /// The newest id handed out: a query with another id is superseded.
    latest: Arc<AtomicU64>,
}

impl Drop for Searcher {
    fn drop(&mut self) {
        // Whatever runs gives up; the thread ends when it next waits for a job.
        self.latest.store(u64::MAX, Ordering::Relaxed);
    }
}

impl Searcher {
    /// Starts the thread searching the index at `db`.
    pub fn start(db: PathBuf) -> Self {
        let (tx, rx) = unbounded_channel();
        let (jobs, queue) = std::sync::mpsc::channel::<Job>();
        let latest = Arc::new(AtomicU64::new(0));
        let l = latest.clone();
        std::thread::spawn(move || run(&db, &queue, &tx, &l));
        Self { rx, jobs, latest }
    }

    /// Runs `query` (words and a pattern, as `rawpv search` takes them; at most `limit` hits),
    /// superseding every earlier one; returns its id, which its [`Found`] carries.
    pub fn submit(&self, query: &str, limit: Option<usize>) -> u64 {
        let id = self
            .latest
            .fetch_add(1, Ordering::Relaxed)
            .saturating_add(1);
        let _ = self.jobs.send(Job {
            id,
            query: query.to_owned(),
            limit,
        });
        id
    }

    /// Supersedes every query submitted so far (none of them sends its hits).
    pub fn cancel(&self) {
        self.latest.fetch_add(1, Ordering::Relaxed);
    }
}

fn run(
    db: &std::path::Path,
    queue: &std::sync::mpsc::Receiver<Job>,
    tx: &UnboundedSender<Found>,
    latest: &AtomicU64,
) {
    let mut store: Option<SqliteStore> = None;
    while let Ok(mut job) = queue.recv() {
        // Only the newest of the queries waiting matters.
        while let Ok(next) = queue.try_recv() {
            job = next;
        }
        let current = || latest.load(Ordering::Relaxed) == job.id;
        if !current() {
            continue;
        }
        let result = match Query::parse(&job.query, None) {
            Err(e) => Err(e),
            Ok(q) => {
                let opened = match store.take() {
                    Some(s) => Ok(s),
                    None => SqliteStore::open(db).map(|o| o.store),
                };
                opened.and_then(|s| {
                    let r =
                        search::search_until(&s, &q, &Filter::default(), job.limit, &|| !current());
                    // After an error it is opened again (the file may have been replaced).
                    if r.is_ok() {
                        store = Some(s);
                    }
                    r
                })
            }
        };
        if current() && tx.send(Found { id: job.id, result }).is_err() {
            return;
        }
    }
}
