//! The library kept up to date while rawpv runs: a thread that indexes what changed, then
//! waits for the file system to say something changed (the `notify` crate: inotify, `FSEvents`,
//! …) or for the polling interval to pass (the fallback when watching fails, and a safety net:
//! a stat of every file is cheap), and indexes again.
//!
//! Who calls it: the session browser (`crate::app::browser`), which reads the session rows
//! from its own connection when told something changed; tests drive it with a real watcher.
//!
//! Invariants: the thread has its own connection (SQLite WAL: readers are never blocked by it);
//! it never touches the terminal; dropping [`Live`] stops it at its next file or wake-up; an
//! index file replaced under it (moved aside by another rawpv, deleted) is opened again before
//! the next update, so it never writes a file nobody reads.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::index::{self, Progress};
use super::store::SqliteStore;

/// How long after a file-system event more events are awaited before indexing (a writer
/// appends in several writes).
pub const SETTLE: Duration = Duration::from_millis(50);
/// How often the files are looked at without an event.
pub const POLL: Duration = Duration::from_secs(2);

/// What the indexing thread reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Update {
    /// A file was indexed (or removed): the rows changed.
    Progress(Progress),
    /// Everything listed is indexed; waiting for changes.
    Idle(Progress),
    /// Something to tell the user (an index moved aside, watching unavailable).
    Note(String),
    /// The index cannot be used (the thread stopped).
    Failed(String),
}

/// The running indexer (module docs).
pub struct Live {
    pub rx: UnboundedReceiver<Update>,
    stop: Arc<AtomicBool>,
    wake: std::sync::mpsc::Sender<()>,
}

impl Drop for Live {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.wake.send(());
    }
}

impl Live {
    /// Starts indexing `paths` (roots and files, as `index::list` takes them) into the index
    /// at `db`, looking again every `poll` and whenever a watched root changes.
    pub fn start(db: PathBuf, paths: Vec<PathBuf>, poll: Duration) -> Self {
        let (tx, rx) = unbounded_channel();
        let (wake, woken) = std::sync::mpsc::channel::<()>();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let w = wake.clone();
        std::thread::spawn(move || run(&db, &paths, poll, &tx, &woken, &w, &s));
        Self { rx, stop, wake }
    }

    /// Asks for an update now (e.g. after the user opened and closed a session).
    pub fn poke(&self) {
        let _ = self.wake.send(());
    }
}

fn run(
    db: &std::path::Path,
    paths: &[PathBuf],
    poll: Duration,
    tx: &UnboundedSender<Update>,
    woken: &std::sync::mpsc::Receiver<()>,
    wake: &std::sync::mpsc::Sender<()>,
    stop: &AtomicBool,
) {
    let open = || match SqliteStore::open(db) {
        Ok(o) => {
            for n in o.notes {
                let _ = tx.send(Update::Note(n));
            }
            Some((o.store, file_id(db)))
        }
        Err(e) => {
            let _ = tx.send(Update::Failed(e));
            None
        }
    };
    let Some((mut store, mut id)) = open() else {
        return;
    };
    // Files written to now are read from where they were indexed (`index::Indexer`).
    let mut indexer = index::Indexer::new();
    // The watcher wakes this thread; without one, the poll does.
    let waker = wake.clone();
    let watcher = notify::recommended_watcher(move |ev: notify::Result<notify::Event>| {
        if ev.is_ok_and(|e| !e.kind.is_access()) {
            let _ = waker.send(());
        }
    });
    let _watcher = match watcher {
        Ok(mut w) => {
            use notify::Watcher;
            for p in paths.iter().filter(|p| p.exists()) {
                if let Err(e) = w.watch(p, notify::RecursiveMode::Recursive) {
                    let _ = tx.send(Update::Note(format!(
                        "cannot watch {} ({e}): looking every {}s",
                        p.display(),
                        poll.as_secs()
                    )));
                }
            }
            Some(w)
        }
        Err(e) => {
            let _ = tx.send(Update::Note(format!(
                "cannot watch the session directories ({e}): looking every {}s",
                poll.as_secs()
            )));
            None
        }
    };
    loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        // Another rawpv found the index damaged and moved it aside (or a user deleted it):
        // this connection would go on writing a file nobody reads, so it opens the new one.
        if file_id(db) != id {
            let _ = tx.send(Update::Note(format!(
                "the library index {} was replaced by another process: opened again",
                db.display()
            )));
            let Some((s, i)) = open() else {
                return;
            };
            (store, id) = (s, i);
            indexer.forget();
        }
        let inputs = index::list(paths);
        let result = indexer.update(&mut store, &inputs, |p| {
            let _ = tx.send(Update::Progress(*p));
            !stop.load(Ordering::Relaxed)
        });
        match result {
            Ok(p) => {
                if p.files_done > 0 || p.removed > 0 {
                    store.checkpoint();
                }
                let _ = tx.send(Update::Idle(p));
            }
            // Another rawpv is writing the index (its own cold index): what is written so far
            // is there; this thread tries again at the next change or poll (attack 11 #3).
            Err(e) if super::store::is_busy(&e) => {
                let _ = tx.send(Update::Note(format!("{e}: trying again")));
            }
            Err(e) => {
                let _ = tx.send(Update::Failed(e));
                return;
            }
        }
        // Wait for a change (or the poll), then let a burst of events settle.
        if woken.recv_timeout(poll).is_ok() {
            std::thread::sleep(SETTLE);
            while woken.try_recv().is_ok() {}
        }
    }
}

/// The index file's identity (device and inode), to see it replaced; `None` where there is
/// none to read (then it is never seen replaced).
fn file_id(db: &std::path::Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(db).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = db;
        Some((0, 0))
    }
}
