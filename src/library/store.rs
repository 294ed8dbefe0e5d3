//! The library's storage: one SQLite file (through `rusqlite`, SQLite built in with FTS5) behind
//! the narrow [`Store`] interface, so a shared archive (e.g. PostgreSQL, ARCHITECTURE.md) could
//! sit behind the same calls.
//!
//! Who calls it: `super::index` (writes, one file's session at a time), `super::search` (word
//! candidates), `rawpv sessions` and the browser (the session rows).
//!
//! Where: `library.sqlite` in the platform cache directory (`~/.cache/rawpv` on Linux), mode
//! 0600 (it holds the words of every session). Schema: `PRAGMA user_version` is
//! [`SCHEMA_VERSION`] and `PRAGMA application_id` is [`APPLICATION_ID`]; an older version is
//! migrated in place ([`migrate`]), a foreign file is moved aside, and a newer one is left as it
//! is for the rawpv that made it (open fails and says so). WAL journal and a busy timeout of
//! [`BUSY_TIMEOUT`]: several rawpv processes index and read the same file; an index already at
//! this schema opens without the write lock, so a reader never waits for another's indexing.
//!
//! Invariants:
//! * One file's rows (its file, session, calls, documents and their words) are written in one
//!   transaction ([`Store::put`]), replacing what was there: a killed process leaves either the
//!   old rows or the new ones, and two processes indexing the same file leave one copy. An
//!   append ([`Store::put_delta`]) replaces the row and the calls and documents of the items it
//!   names, in one transaction, and only over the rows written for the stamp it started from.
//! * The words of a document are kept only as the full-text index's postings (an FTS5
//!   contentless table with `detail=none`): the text itself is read back from the session file
//!   when a hit is shown (`super::search`). Removing a file ([`Store::remove`]) deletes its
//!   postings (`contentless_delete`), and [`Store::purge`] after the update makes them and its
//!   rows unrecoverable from the file's bytes (segments merged, `secure_delete`, WAL emptied).
//! * A damaged, truncated or foreign file is never an error: [`SqliteStore::open`] moves it aside
//!   (`library.sqlite.bad-<epoch s>`) and starts a new one, saying so in [`Opened::notes`]. A
//!   file merely locked by another process past the busy timeout is sound: it is never moved
//!   aside; open fails with a message that says it is in use (attack 11 #2). Only evidence
//!   that holds whatever another connection is doing counts as damage: SQLite's "not a
//!   database" or "corrupt", a foreign `application_id`, or a file shorter than its header
//!   says while no other connection has it open (no `-shm`: a checkpoint writes the header
//!   before the pages after it). Any other error (I/O, a `-shm` being made or removed by
//!   another process's open or close) is tried again, then reported, and the file is left.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};

/// The schema this build writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i32 = 3;
/// `PRAGMA application_id`: "RWPV". A database without it (and not empty) is foreign.
pub const APPLICATION_ID: i32 = 0x5257_5056;
/// How long a writer waits for another process's transaction.
pub const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// How often an open that failed for a reason other than damage or a lock is tried again
/// (50 ms apart).
const OTHER_TRIES: usize = 4;
/// How often an open that was refused at once as "in use" is tried again (50 ms apart).
const QUICK_BUSY_TRIES: usize = 40;
/// The index file's name.
pub const FILE: &str = "library.sqlite";

/// A session file's identity when it was indexed: a file is read again when any of these
/// changed (a shrink or another inode: from the start).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stamp {
    pub dev: u64,
    pub ino: u64,
    /// Bytes.
    pub size: u64,
    /// Modification time, ns since the epoch.
    pub mtime_ns: i64,
}

impl Stamp {
    /// The stamp of `path` now (`None`: it cannot be read).
    pub fn of(path: &Path) -> Option<Self> {
        let m = std::fs::metadata(path).ok()?;
        let mtime_ns = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i64);
        #[cfg(unix)]
        let (dev, ino) = {
            use std::os::unix::fs::MetadataExt;
            (m.dev(), m.ino())
        };
        #[cfg(not(unix))]
        let (dev, ino) = (0, 0);
        Some(Self {
            dev,
            ino,
            size: m.len(),
            mtime_ns,
        })
    }
}

/// What the library keeps of one session file (issue 27 item 3, per session).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct SessionRow {
    pub path: PathBuf,
    #[serde(skip)]
    pub stamp: Stamp,
    /// The decoder's format name (`claude-code`, `rawp-ndjson`, …).
    pub format: String,
    /// `claude`, `codex`, `gemini` or empty.
    pub agent: String,
    pub session_id: Option<String>,
    /// The session's own `cwd`, else the project its directory names.
    pub project: String,
    /// The last summary / custom-title / ai-title record, else the first prompt (one line).
    pub title: String,
    /// Epoch ms of the first and last timestamped record.
    pub first_ts: Option<i64>,
    pub last_ts: Option<i64>,
    pub calls: u64,
    pub errors: u64,
    pub cancelled: u64,
    /// Tools used, most used first.
    pub tools: Vec<String>,
    pub models: Vec<String>,
    /// Tokens of the session's usage rows, deduplicated as `rawpv stats` does.
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub tokens_cache_read: u64,
    pub tokens_cache_write: u64,
    pub subagents: u64,
    pub compactions: u64,
    pub agent_version: Option<String>,
    pub git_branch: Option<String>,
    /// Why the file could not be read (then it has no calls or documents).
    pub error: Option<String>,
}

/// One call (issue 27 item 3, per call).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CallRow {
    /// The call's row in the decoded session (`Session::items`).
    pub item: u32,
    /// Its request's source line (1-based).
    pub line: u64,
    pub tool: String,
    /// `ok`, `error`, `cancelled`, … (`CallStatus::word`).
    pub status: String,
    pub summary: String,
    /// Epoch ms.
    pub started: Option<i64>,
    pub ended: Option<i64>,
}

/// One searchable document: a prompt, agent text, thinking block or call (its tool, input,
/// output and stream text).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Doc {
    pub item: u32,
    pub line: u64,
    /// `prompt`, `text`, `thinking` or `call`.
    pub kind: &'static str,
    /// The call's tool (empty for messages).
    pub tool: String,
    /// Epoch ms.
    pub ts: Option<i64>,
    /// The words to index (not kept: read back from the file when shown).
    pub text: String,
    /// How the search reads this document's text back from its own lines instead of the whole
    /// file (`super::search::texts_by_line`): `ORDINAL` or `ORDINAL:LINE,LINE…`, the k-th
    /// document of its kind on `line` and the other lines its text comes from; `None`: only
    /// the whole file gives it back (schema 2).
    pub recipe: Option<String>,
}

/// A document whose words matched: where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub path: PathBuf,
    pub item: u32,
    pub line: u64,
    pub kind: String,
    pub tool: String,
    pub ts: Option<i64>,
    /// [`Doc::recipe`] (`None` also for documents indexed by schema 1).
    pub recipe: Option<String>,
}

/// What an append to a file changes in the store (`super::append`): the new row, and the
/// items whose call rows and documents are replaced by `calls` and `docs` (an item listed and
/// in neither loses its rows).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Delta {
    pub row: SessionRow,
    pub items: Vec<u32>,
    pub calls: Vec<CallRow>,
    pub docs: Vec<Doc>,
}

/// What one file gives the index: its session row, calls and documents.
pub type Indexed = (SessionRow, Vec<CallRow>, Vec<Doc>);

/// Which sessions a listing or search keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Case-insensitive substring of the project.
    pub project: Option<String>,
    /// Last activity at or after this epoch ms.
    pub since_ms: Option<i64>,
    /// Calls of this tool only (search).
    pub tool: Option<String>,
}

/// The storage interface (module docs). Errors are messages for the user.
pub trait Store {
    /// Every indexed file with its stamp and indexed size.
    fn stamps(&self) -> Result<Vec<(PathBuf, Stamp)>, String>;
    /// Replaces everything kept of `row.path` by `row`, `calls` and `docs`, in one transaction.
    fn put(&mut self, row: &SessionRow, calls: &[CallRow], docs: &[Doc]) -> Result<(), String> {
        self.put_many(&[(row.clone(), calls.to_vec(), docs.to_vec())])
    }
    /// [`Store::put`] of several files in one transaction (a cold index writes in batches).
    fn put_many(&mut self, files: &[Indexed]) -> Result<(), String>;
    /// Brings the rows of `delta.row.path`, written for stamp `was`, to `delta`, in one
    /// transaction. `Ok(false)`: the store does not hold that file at `was` (another process
    /// indexed it meanwhile, or this is another store), and nothing was written: the caller
    /// writes the file whole. A store already holding the file at the delta's own stamp (the
    /// other process wrote the same bytes' rows) is left as it is: `Ok(true)`.
    fn put_delta(&mut self, was: Stamp, delta: &Delta) -> Result<bool, String>;
    /// Forgets `path` (its session, calls and words).
    fn remove(&mut self, path: &Path) -> Result<(), String>;
    /// Makes what [`Store::remove`] forgot unrecoverable from the store's own bytes (a deleted
    /// session's text must not outlive it, issue 27 item 1; attack 11 #1). The indexer calls
    /// it after an update that removed files.
    fn purge(&mut self) -> Result<(), String>;
    /// The sessions `filter` keeps, last activity first.
    fn sessions(&self, filter: &Filter) -> Result<Vec<SessionRow>, String>;
    /// The documents holding every token of `tokens` (a token ending in `*` is a prefix),
    /// of the sessions `filter` keeps, newest session first, in file order.
    fn candidates(&self, tokens: &[String], filter: &Filter) -> Result<Vec<Candidate>, String> {
        let mut out = Vec::new();
        self.each_candidate(tokens, filter, &mut |c| {
            out.push(c);
            true
        })?;
        Ok(out)
    }
    /// [`Store::candidates`] one at a time, in the same order, until `each` returns `false`
    /// (a search that has its screen of hits reads no further rows).
    fn each_candidate(
        &self,
        tokens: &[String],
        filter: &Filter,
        each: &mut dyn FnMut(Candidate) -> bool,
    ) -> Result<(), String>;
    /// Every document of the sessions `filter` keeps (a search without words), one at a time
    /// as [`Store::each_candidate`].
    fn each_doc(
        &self,
        filter: &Filter,
        each: &mut dyn FnMut(Candidate) -> bool,
    ) -> Result<(), String>;
}

/// The SQLite store.
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
}

/// An opened store and what to tell the user about it (a file moved aside).
pub struct Opened {
    pub store: SqliteStore,
    pub notes: Vec<String>,
}

fn err(e: &rusqlite::Error) -> String {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
            format!("library index: {BUSY} ({e})")
        }
        _ => format!("library index: {e}"),
    }
}

/// Part of a [`Store`] error's text when another process held the index's write lock past
/// [`BUSY_TIMEOUT`] (see [`is_busy`]).
pub const BUSY: &str = "written by another rawpv at this moment";

/// Whether a [`Store`] (or `super::index::update`) error is only another process's lock: the
/// index is sound and holds what was written so far, so a reader answers from it and an
/// indexer tries again later (attack 11 #3).
pub fn is_busy(error: &str) -> bool {
    error.contains(BUSY)
}

/// The default index file: `library.sqlite` in the platform cache directory.
pub fn default_path() -> Option<PathBuf> {
    crate::usage::cache::default_dir().map(|d| d.join(FILE))
}

const SCHEMA: &str = "
CREATE TABLE files(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  dev INTEGER NOT NULL, ino INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL
);
CREATE TABLE sessions(
  file_id INTEGER PRIMARY KEY,
  format TEXT NOT NULL, agent TEXT NOT NULL, session_id TEXT, project TEXT NOT NULL,
  title TEXT NOT NULL, first_ts INTEGER, last_ts INTEGER,
  calls INTEGER NOT NULL, errors INTEGER NOT NULL, cancelled INTEGER NOT NULL,
  tools TEXT NOT NULL, models TEXT NOT NULL,
  tokens_in INTEGER NOT NULL, tokens_out INTEGER NOT NULL,
  tokens_cache_read INTEGER NOT NULL, tokens_cache_write INTEGER NOT NULL,
  subagents INTEGER NOT NULL, compactions INTEGER NOT NULL,
  agent_version TEXT, git_branch TEXT, error TEXT
);
CREATE INDEX sessions_last ON sessions(last_ts);
CREATE TABLE calls(
  file_id INTEGER NOT NULL, item INTEGER NOT NULL, line INTEGER NOT NULL,
  tool TEXT NOT NULL, status TEXT NOT NULL, summary TEXT NOT NULL,
  started INTEGER, ended INTEGER,
  PRIMARY KEY(file_id, item)
) WITHOUT ROWID;
CREATE TABLE docs(
  id INTEGER PRIMARY KEY,
  file_id INTEGER NOT NULL, item INTEGER NOT NULL, line INTEGER NOT NULL,
  kind TEXT NOT NULL, tool TEXT NOT NULL, ts INTEGER, recipe TEXT
);
CREATE INDEX docs_item ON docs(file_id, item);
CREATE VIRTUAL TABLE words USING fts5(
  text, content='', contentless_delete=1, detail=none,
  tokenize='unicode61 remove_diacritics 0'
);
";

/// Brings a database at `from` (0: empty) to [`SCHEMA_VERSION`]. Each step is one
/// transaction; a version this build does not know is refused (`try_open` has said so first).
fn migrate(conn: &mut Connection, from: i32) -> Result<(), String> {
    if from > SCHEMA_VERSION {
        return Err(format!(
            "schema version {from} is newer than this rawpv's {SCHEMA_VERSION}"
        ));
    }
    if from == 0 {
        let tx = conn.transaction().map_err(|e| err(&e))?;
        tx.execute_batch(SCHEMA).map_err(|e| err(&e))?;
        // Postings buffered in memory before a segment is written (1 MiB by default): fewer,
        // larger segments for a cold index of many files.
        tx.execute_batch("INSERT INTO words(words, rank) VALUES ('hashsize', 33554432);")
            .map_err(|e| err(&e))?;
        tx.execute_batch(&format!(
            "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION};"
        ))
        .map_err(|e| err(&e))?;
        tx.commit().map_err(|e| err(&e))?;
        return Ok(());
    }
    // Schema 2: a document's recipe (`Doc::recipe`); a schema-1 document has none, so the
    // search reads its whole file, as schema 1 did, until the file is indexed again.
    if from <= 1 {
        let tx = conn.transaction().map_err(|e| err(&e))?;
        tx.execute_batch("ALTER TABLE docs ADD COLUMN recipe TEXT; PRAGMA user_version = 2;")
            .map_err(|e| err(&e))?;
        tx.commit().map_err(|e| err(&e))?;
    }
    // Schema 3: documents found by file and item (an append replaces a few of a file's
    // documents, `Store::put_delta`); the index by file alone is its prefix.
    if from <= 2 {
        let tx = conn.transaction().map_err(|e| err(&e))?;
        tx.execute_batch(
            "CREATE INDEX IF NOT EXISTS docs_item ON docs(file_id, item); \
             DROP INDEX IF EXISTS docs_file; PRAGMA user_version = 3;",
        )
        .map_err(|e| err(&e))?;
        tx.commit().map_err(|e| err(&e))?;
    }
    // Later versions: `if from <= 3 { ALTER …; user_version = 4 }`, and so on.
    Ok(())
}

/// Whether the file at `path` is shorter than its header says (a cut copy, a full disk) or is
/// no SQLite file at all ([`damage`]).
#[cfg(test)]
fn truncated(path: &Path) -> bool {
    damage(path).is_some()
}

/// Why the file at `path` cannot be an index: shorter than its header says (a cut copy, a
/// full disk: "the file is truncated"), or no SQLite header ("not an SQLite database").
///
/// Never while another connection may be writing it (its `-shm` exists, or a `-wal` holds
/// frames): a checkpoint writes page 1, with the new page count, before the pages after it,
/// and empties the WAL last, so a look in between sees a short file and an empty WAL.
fn damage(path: &Path) -> Option<&'static str> {
    damage_bool(path).map(|short| {
        if short {
            "the file is truncated"
        } else {
            "not an SQLite database"
        }
    })
}

/// [`damage`]: `Some(true)` truncated, `Some(false)` not SQLite.
fn damage_bool(path: &Path) -> Option<bool> {
    let side = |ext: &str| {
        let mut s = path.as_os_str().to_owned();
        s.push(ext);
        PathBuf::from(s)
    };
    let wal_len = || std::fs::metadata(side("-wal")).map_or(0, |m| m.len());
    if side("-shm").exists() || wal_len() > 0 {
        return None;
    }
    let mut bytes = Vec::with_capacity(100);
    let Ok(f) = std::fs::File::open(path) else {
        return None;
    };
    if std::io::Read::read_to_end(&mut std::io::Read::take(f, 100), &mut bytes).is_err() {
        return None;
    }
    let len = std::fs::metadata(path).map_or(0, |m| m.len());
    if bytes.len() < 100 {
        let sqlite = b"SQLite format 3\0";
        let head = &bytes[..bytes.len().min(16)];
        return (!bytes.is_empty()).then(|| sqlite.starts_with(head));
    }
    if &bytes[..16] != b"SQLite format 3\0" {
        return Some(false);
    }
    let page = match u16::from_be_bytes([bytes[16], bytes[17]]) {
        1 => 65536,
        p => u64::from(p),
    };
    let pages = u64::from(u32::from_be_bytes([
        bytes[28], bytes[29], bytes[30], bytes[31],
    ]));
    // The header's page count is valid only when it was written with the change counter.
    let valid = bytes[24..28] == bytes[92..96];
    (valid && len < pages * page && !side("-shm").exists() && wal_len() == 0).then_some(true)
}

/// Why an index file could not be opened, which decides what [`SqliteStore::open`] does.
#[derive(Debug)]
enum Refusal {
    /// Damaged, truncated or foreign: moved aside and rebuilt.
    Bad(String),
    /// Locked by another process past the busy timeout (`SQLITE_BUSY` / `SQLITE_LOCKED`): left.
    InUse(String),
    /// A schema newer than this binary's: left for the rawpv that made it.
    Newer(String),
    /// Any other error (I/O, permissions, a `-shm` another process is making or removing):
    /// tried again, then reported; the file is left.
    Other(String),
}

impl Refusal {
    /// A SQLite error sorted: busy and locked are "in use", "not a database" and "corrupt"
    /// are damage, the rest is [`Refusal::Other`].
    fn of(e: &rusqlite::Error) -> Self {
        use rusqlite::ErrorCode as C;
        match e.sqlite_error_code() {
            Some(C::DatabaseBusy | C::DatabaseLocked) => Self::InUse(e.to_string()),
            Some(C::NotADatabase | C::DatabaseCorrupt) => Self::Bad(e.to_string()),
            _ => Self::Other(e.to_string()),
        }
    }

    fn text(&self) -> &str {
        match self {
            Self::Bad(s) | Self::InUse(s) | Self::Newer(s) | Self::Other(s) => s,
        }
    }
}

impl SqliteStore {
    /// Opens (creating) the index at `path` (module docs: a bad file is moved aside).
    ///
    /// # Errors
    /// The directory or a new file cannot be created or opened.
    pub fn open(path: &Path) -> Result<Opened, String> {
        let mut notes = Vec::new();
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        // Tried again: an error other than damage (a `-shm` another open is making), and "in
        // use" that came at once, without the busy timeout's wait (SQLite answers a change of
        // journal mode, or a lock it cannot wait for without a deadlock, at once): two
        // processes opening a new index together.
        let (mut others, mut quick) = (0, 0);
        let tried = loop {
            let t0 = std::time::Instant::now();
            let tried = Self::try_open(path);
            let again = match &tried {
                Err(Refusal::Other(_)) => {
                    others += 1;
                    others <= OTHER_TRIES
                }
                Err(Refusal::InUse(_)) if t0.elapsed() < BUSY_TIMEOUT / 2 => {
                    quick += 1;
                    quick <= QUICK_BUSY_TRIES
                }
                _ => false,
            };
            if !again {
                break tried;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        match tried {
            Ok(s) => return Ok(Opened { store: s, notes }),
            Err(Refusal::Other(why)) => {
                return Err(format!(
                    "the library index {} cannot be opened ({why}); it is left as it is: try again, or use --no-index",
                    path.display()
                ));
            }
            // Held by another process (attack 11 #2) or made by a newer rawpv (#10): the file is
            // sound, so it is left as it is and this run says why it cannot use it.
            Err(Refusal::InUse(why)) => {
                return Err(format!(
                    "the library index {} is in use by another process ({why}); try again, or use --no-index",
                    path.display()
                ));
            }
            Err(Refusal::Newer(why)) => {
                return Err(format!(
                    "the library index {} was made by a newer rawpv ({why}); it is left as it is: use --no-index, or the newer rawpv",
                    path.display()
                ));
            }
            Err(Refusal::Bad(why)) => {
                let aside = aside_name(path);
                let moved = std::fs::rename(path, &aside);
                for ext in ["-wal", "-shm"] {
                    let mut side = path.as_os_str().to_owned();
                    side.push(ext);
                    let _ = std::fs::remove_file(PathBuf::from(side));
                }
                let failed = moved.is_err();
                // What happened first: the browser's status line keeps only the start of it.
                notes.push(match moved {
                    Ok(()) => format!(
                        "library index rebuilt: the old one could not be used ({why}) and was moved to {}",
                        aside.display()
                    ),
                    Err(e) => format!(
                        "library index rebuilt: the old one could not be used ({why}) nor moved aside ({e}): {}",
                        path.display()
                    ),
                });
                if failed {
                    let _ = std::fs::remove_file(path);
                }
            }
        }
        let store =
            Self::try_open(path).map_err(|e| format!("{}: {}", path.display(), e.text()))?;
        Ok(Opened { store, notes })
    }

    /// A store in memory (`--no-index`: the files are read into it and it goes at exit).
    ///
    /// # Errors
    /// SQLite could not start.
    pub fn memory() -> Result<Self, String> {
        let mut conn = Connection::open_in_memory().map_err(|e| err(&e))?;
        migrate(&mut conn, 0)?;
        Ok(Self {
            conn,
            path: PathBuf::new(),
        })
    }

    fn try_open(path: &Path) -> Result<Self, Refusal> {
        if let Some(why) = damage(path) {
            return Err(Refusal::Bad(why.into()));
        }
        create_private(path).map_err(Refusal::Other)?;
        let mut conn = Connection::open(path).map_err(|e| Refusal::of(&e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| Refusal::of(&e))?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| Refusal::of(&e))?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(|e| Refusal::of(&e))?;
        // Deleted rows and freed pages are overwritten with zeros (a removed session's words
        // and call summaries do not stay in the file's free space; `Store::purge`).
        conn.pragma_update(None, "secure_delete", "ON")
            .map_err(|e| Refusal::of(&e))?;
        // One statement, so one snapshot: read one at a time, another process's first
        // transaction (schema and application_id together) could come between the reads, and
        // a new index looked foreign (tables, but no application_id) and was moved aside under
        // its writer.
        let (app, version, tables): (i32, i32, i64) = conn
            .query_row(
                "SELECT (SELECT application_id FROM pragma_application_id()), \
                 (SELECT user_version FROM pragma_user_version()), \
                 (SELECT count(*) FROM sqlite_master)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(|e| Refusal::of(&e))?;
        if app != APPLICATION_ID && tables > 0 {
            return Err(Refusal::Bad("not a rawpv library index".into()));
        }
        if version > SCHEMA_VERSION && app == APPLICATION_ID {
            return Err(Refusal::Newer(format!(
                "schema version {version}, this rawpv's is {SCHEMA_VERSION}"
            )));
        }
        // An index already at this schema needs no write lock to open: a reader never waits for
        // another process's indexing (WAL readers do not block on a writer; attack 11 #3).
        if (app == APPLICATION_ID && version < SCHEMA_VERSION) || tables == 0 {
            // Another process may be creating it at this moment: take the write lock first.
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(|e| Refusal::of(&e))?;
            let version_now: i32 = tx
                .pragma_query_value(None, "user_version", |r| r.get(0))
                .map_err(|e| Refusal::of(&e))?;
            tx.commit().map_err(|e| Refusal::of(&e))?;
            migrate(&mut conn, version_now).map_err(Refusal::Other)?;
        }
        // Every table must be readable (a damaged page says so here, not in the middle of use).
        conn.query_row("SELECT count(*) FROM files", [], |r| r.get::<_, i64>(0))
            .map_err(|e| Refusal::of(&e))?;
        Ok(Self {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// The call rows kept of `path`, by item (for tests and tools: nothing in rawpv reads them
    /// back yet).
    ///
    /// # Errors
    /// The store cannot be read.
    pub fn calls_of(&self, path: &Path) -> Result<Vec<CallRow>, String> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT c.item, c.line, c.tool, c.status, c.summary, c.started, c.ended \
                 FROM calls c JOIN files f ON f.id = c.file_id WHERE f.path = ?1 ORDER BY c.item",
            )
            .map_err(|e| err(&e))?;
        let rows = st
            .query_map([path_text(path)], |r| {
                Ok(CallRow {
                    item: r.get(0)?,
                    line: r.get::<_, i64>(1)? as u64,
                    tool: r.get(2)?,
                    status: r.get(3)?,
                    summary: r.get(4)?,
                    started: r.get(5)?,
                    ended: r.get(6)?,
                })
            })
            .map_err(|e| err(&e))?;
        rows.collect::<Result<_, _>>().map_err(|e| err(&e))
    }

    /// Where the index is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The index's size on disk (main file and WAL), bytes.
    pub fn disk_size(&self) -> u64 {
        let mut wal = self.path.as_os_str().to_owned();
        wal.push("-wal");
        std::fs::metadata(&self.path).map_or(0, |m| m.len())
            + std::fs::metadata(PathBuf::from(wal)).map_or(0, |m| m.len())
    }

    /// Folds the WAL into the main file (after a big index run).
    pub fn checkpoint(&self) {
        let _ = self.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
    }

    fn file_id(&self, path: &Path) -> Result<Option<i64>, String> {
        self.conn
            .query_row(
                "SELECT id FROM files WHERE path = ?1",
                [path_text(path)],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| err(&e))
    }
}

fn aside_name(path: &Path) -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut s = path.as_os_str().to_owned();
    s.push(format!(".bad-{secs}"));
    PathBuf::from(s)
}

/// Creates `path` with mode 0600 when it does not exist (SQLite would use 0644); an existing
/// file's mode is set to 0600.
fn create_private(path: &Path) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| e.to_string())?;
        let _ = f.set_permissions(std::fs::Permissions::from_mode(0o600));
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Paths are kept as text (lossy for non-UTF-8 names, which are then skipped by the indexer).
fn path_text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn list(v: &[String]) -> String {
    v.join("\n")
}

fn unlist(s: &str) -> Vec<String> {
    s.split('\n')
        .filter(|x| !x.is_empty())
        .map(str::to_owned)
        .collect()
}

/// An FTS5 query over `tokens`: each one quoted (so no word is read as an operator), a
/// trailing `*` kept outside the quotes (a prefix), all of them required.
pub fn fts_query(tokens: &[String]) -> String {
    tokens
        .iter()
        .map(|t| match t.strip_suffix('*') {
            Some(p) => format!("\"{}\"*", p.replace('"', "\"\"")),
            None => format!("\"{}\"", t.replace('"', "\"\"")),
        })
        .collect::<Vec<_>>()
        .join(" AND ")
}

const SESSION_COLS: &str = "f.path, f.dev, f.ino, f.size, f.mtime_ns, s.format, s.agent, \
     s.session_id, s.project, s.title, s.first_ts, s.last_ts, s.calls, s.errors, s.cancelled, \
     s.tools, s.models, s.tokens_in, s.tokens_out, s.tokens_cache_read, s.tokens_cache_write, \
     s.subagents, s.compactions, s.agent_version, s.git_branch, s.error";

fn session_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRow> {
    let u = |i: usize| r.get::<_, i64>(i).map(|v| v as u64);
    Ok(SessionRow {
        path: PathBuf::from(r.get::<_, String>(0)?),
        stamp: Stamp {
            dev: u(1)?,
            ino: u(2)?,
            size: u(3)?,
            mtime_ns: r.get(4)?,
        },
        format: r.get(5)?,
        agent: r.get(6)?,
        session_id: r.get(7)?,
        project: r.get(8)?,
        title: r.get(9)?,
        first_ts: r.get(10)?,
        last_ts: r.get(11)?,
        calls: u(12)?,
        errors: u(13)?,
        cancelled: u(14)?,
        tools: unlist(&r.get::<_, String>(15)?),
        models: unlist(&r.get::<_, String>(16)?),
        tokens_in: u(17)?,
        tokens_out: u(18)?,
        tokens_cache_read: u(19)?,
        tokens_cache_write: u(20)?,
        subagents: u(21)?,
        compactions: u(22)?,
        agent_version: r.get(23)?,
        git_branch: r.get(24)?,
        error: r.get(25)?,
    })
}

/// The `WHERE` conditions of `filter` over `sessions s` (and `docs d` when `docs`), with
/// their values.
fn filter_sql(filter: &Filter, docs: bool) -> (String, Vec<rusqlite::types::Value>) {
    use rusqlite::types::Value as V;
    let mut cond = Vec::new();
    let mut vals = Vec::new();
    if let Some(p) = &filter.project {
        cond.push("instr(lower(s.project), lower(?)) > 0".to_owned());
        vals.push(V::Text(p.clone()));
    }
    if let Some(t) = filter.since_ms {
        cond.push("coalesce(s.last_ts, 0) >= ?".to_owned());
        vals.push(V::Integer(t));
    }
    if docs && let Some(t) = &filter.tool {
        cond.push("d.kind = 'call' AND lower(d.tool) = lower(?)".to_owned());
        vals.push(V::Text(t.clone()));
    }
    let sql = if cond.is_empty() {
        String::new()
    } else {
        format!(" AND {}", cond.join(" AND "))
    };
    (sql, vals)
}

fn candidate(r: &rusqlite::Row<'_>) -> rusqlite::Result<Candidate> {
    Ok(Candidate {
        path: PathBuf::from(r.get::<_, String>(0)?),
        item: r.get(1)?,
        line: r.get::<_, i64>(2)? as u64,
        kind: r.get(3)?,
        tool: r.get(4)?,
        ts: r.get(5)?,
        recipe: r.get(6)?,
    })
}

impl Store for SqliteStore {
    fn stamps(&self) -> Result<Vec<(PathBuf, Stamp)>, String> {
        let mut st = self
            .conn
            .prepare_cached("SELECT path, dev, ino, size, mtime_ns FROM files")
            .map_err(|e| err(&e))?;
        let rows = st
            .query_map([], |r| {
                Ok((
                    PathBuf::from(r.get::<_, String>(0)?),
                    Stamp {
                        dev: r.get::<_, i64>(1)? as u64,
                        ino: r.get::<_, i64>(2)? as u64,
                        size: r.get::<_, i64>(3)? as u64,
                        mtime_ns: r.get(4)?,
                    },
                ))
            })
            .map_err(|e| err(&e))?;
        rows.collect::<Result<_, _>>().map_err(|e| err(&e))
    }

    fn put_many(&mut self, files: &[Indexed]) -> Result<(), String> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| err(&e))?;
        for (row, calls, docs) in files {
            put_one(&tx, row, calls, docs).map_err(|e| err(&e))?;
        }
        tx.commit().map_err(|e| err(&e))
    }

    /// FTS5 keeps a removed document's postings (a tombstone marks them) until its segments
    /// are merged: `optimize` merges them all, so they go; deleted rows' cells and freed pages
    /// are zeroed as they are freed (`secure_delete`, set at open); the WAL, which holds the
    /// old page images, is folded back and emptied.
    fn purge(&mut self) -> Result<(), String> {
        self.conn
            .execute_batch("INSERT INTO words(words) VALUES ('optimize');")
            .map_err(|e| err(&e))?;
        self.conn
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
            .map_err(|e| err(&e))
    }

    fn put_delta(&mut self, was: Stamp, delta: &Delta) -> Result<bool, String> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| err(&e))?;
        let done = put_delta(&tx, was, delta).map_err(|e| err(&e))?;
        tx.commit().map_err(|e| err(&e))?;
        Ok(done)
    }

    fn remove(&mut self, path: &Path) -> Result<(), String> {
        let Some(id) = self.file_id(path)? else {
            return Ok(());
        };
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| err(&e))?;
        delete_file(&tx, id).map_err(|e| err(&e))?;
        tx.commit().map_err(|e| err(&e))
    }

    fn sessions(&self, filter: &Filter) -> Result<Vec<SessionRow>, String> {
        let (cond, vals) = filter_sql(filter, false);
        let sql = format!(
            "SELECT {SESSION_COLS} FROM sessions s JOIN files f ON f.id = s.file_id \
             WHERE 1 {cond} ORDER BY coalesce(s.last_ts, 0) DESC, f.path"
        );
        let mut st = self.conn.prepare_cached(&sql).map_err(|e| err(&e))?;
        let rows = st
            .query_map(rusqlite::params_from_iter(vals), session_row)
            .map_err(|e| err(&e))?;
        rows.collect::<Result<_, _>>().map_err(|e| err(&e))
    }

    fn each_candidate(
        &self,
        tokens: &[String],
        filter: &Filter,
        each: &mut dyn FnMut(Candidate) -> bool,
    ) -> Result<(), String> {
        let query = fts_query(tokens);
        // A word in many documents (`the`): sorting all of them by session before the first
        // is handed out is most of the time, so they are read a session at a time instead.
        let many: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM (SELECT rowid FROM words WHERE words MATCH ?1 LIMIT ?2)",
                params![query, MANY],
                |r| r.get(0),
            )
            .map_err(|e| err(&e))?;
        if many >= MANY {
            return self.each_candidate_by_session(&query, filter, each);
        }
        self.each_candidate_sorted(&query, filter, each)
    }

    fn each_doc(
        &self,
        filter: &Filter,
        each: &mut dyn FnMut(Candidate) -> bool,
    ) -> Result<(), String> {
        let (cond, vals) = filter_sql(filter, true);
        let sql = format!(
            "SELECT f.path, d.item, d.line, d.kind, d.tool, d.ts, d.recipe \
             FROM docs d JOIN sessions s ON s.file_id = d.file_id JOIN files f ON f.id = d.file_id \
             WHERE 1 {cond} ORDER BY coalesce(s.last_ts, 0) DESC, f.path, d.item"
        );
        self.each_row(&sql, vals, each)
    }
}

/// Candidates past which a search reads them a session at a time
/// (`SqliteStore::each_candidate_by_session`).
const MANY: i64 = 20_000;

impl SqliteStore {
    /// [`Store::each_candidate`] for an FTS5 `query` that few documents match: all of them
    /// joined with their sessions and sorted.
    fn each_candidate_sorted(
        &self,
        query: &str,
        filter: &Filter,
        each: &mut dyn FnMut(Candidate) -> bool,
    ) -> Result<(), String> {
        let (cond, mut vals) = filter_sql(filter, true);
        vals.insert(0, rusqlite::types::Value::Text(query.to_owned()));
        let sql = format!(
            "SELECT f.path, d.item, d.line, d.kind, d.tool, d.ts, d.recipe \
             FROM words w JOIN docs d ON d.id = w.rowid \
             JOIN sessions s ON s.file_id = d.file_id JOIN files f ON f.id = d.file_id \
             WHERE words MATCH ? {cond} \
             ORDER BY coalesce(s.last_ts, 0) DESC, f.path, d.item"
        );
        self.each_row(&sql, vals, each)
    }

    /// [`Store::each_candidate`] for an FTS5 `query` that many documents match: the matching
    /// rowids alone (no join, no sort), then the sessions in order, each with the matches
    /// among its own documents, read from `docs` by the range of their rowids and the file
    /// (a file written whole has one range of its own; one brought up to date by appends,
    /// `Store::put_delta`, has later documents above other files' and is read by its id).
    fn each_candidate_by_session(
        &self,
        query: &str,
        filter: &Filter,
        each: &mut dyn FnMut(Candidate) -> bool,
    ) -> Result<(), String> {
        let mut ids: Vec<i64> = {
            let mut st = self
                .conn
                .prepare_cached("SELECT rowid FROM words WHERE words MATCH ?1")
                .map_err(|e| err(&e))?;
            st.query_map([query], |r| r.get(0))
                .map_err(|e| err(&e))?
                .collect::<Result<_, _>>()
                .map_err(|e| err(&e))?
        };
        ids.sort_unstable();
        let (cond, vals) = filter_sql(filter, false);
        let mut files = self
            .conn
            .prepare_cached(&format!(
                "SELECT f.id, (SELECT min(id) FROM docs WHERE file_id = f.id), \
                 (SELECT max(id) FROM docs WHERE file_id = f.id) \
                 FROM files f JOIN sessions s ON s.file_id = f.id WHERE 1 {cond} \
                 ORDER BY coalesce(s.last_ts, 0) DESC, f.path"
            ))
            .map_err(|e| err(&e))?;
        let ranges: Vec<(i64, Option<i64>, Option<i64>)> = files
            .query_map(rusqlite::params_from_iter(vals), |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .map_err(|e| err(&e))?
            .collect::<Result<_, _>>()
            .map_err(|e| err(&e))?;
        let tool = if filter.tool.is_some() {
            " AND d.kind = 'call' AND lower(d.tool) = lower(?4)"
        } else {
            ""
        };
        let mut st = self
            .conn
            .prepare_cached(&format!(
                "SELECT f.path, d.item, d.line, d.kind, d.tool, d.ts, d.recipe, d.id \
                 FROM docs d JOIN files f ON f.id = d.file_id \
                 WHERE d.id BETWEEN ?1 AND ?2 AND d.file_id = ?3{tool} ORDER BY d.item"
            ))
            .map_err(|e| err(&e))?;
        for (file, lo, hi) in ranges {
            let (Some(lo), Some(hi)) = (lo, hi) else {
                continue;
            };
            let from = ids.partition_point(|&i| i < lo);
            if ids.get(from).is_none_or(|&i| i > hi) {
                continue;
            }
            let mut vals = vec![
                rusqlite::types::Value::Integer(lo),
                rusqlite::types::Value::Integer(hi),
                rusqlite::types::Value::Integer(file),
            ];
            if let Some(t) = &filter.tool {
                vals.push(rusqlite::types::Value::Text(t.clone()));
            }
            let mut rows = st
                .query(rusqlite::params_from_iter(vals))
                .map_err(|e| err(&e))?;
            while let Some(r) = rows.next().map_err(|e| err(&e))? {
                let id: i64 = r.get(7).map_err(|e| err(&e))?;
                if ids[from..].binary_search(&id).is_err() {
                    continue;
                }
                if !each(candidate(r).map_err(|e| err(&e))?) {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Runs `sql` (selecting [`candidate`]'s columns) and hands each row to `each` until it
    /// returns `false`.
    fn each_row(
        &self,
        sql: &str,
        vals: Vec<rusqlite::types::Value>,
        each: &mut dyn FnMut(Candidate) -> bool,
    ) -> Result<(), String> {
        let mut st = self.conn.prepare_cached(sql).map_err(|e| err(&e))?;
        let mut rows = st
            .query(rusqlite::params_from_iter(vals))
            .map_err(|e| err(&e))?;
        while let Some(r) = rows.next().map_err(|e| err(&e))? {
            if !each(candidate(r).map_err(|e| err(&e))?) {
                break;
            }
        }
        Ok(())
    }
}

/// Writes one file's rows inside the caller's transaction, replacing its old ones.
fn put_one(
    tx: &rusqlite::Transaction<'_>,
    row: &SessionRow,
    calls: &[CallRow],
    docs: &[Doc],
) -> rusqlite::Result<()> {
    let path = path_text(&row.path);
    let old: Option<i64> = tx
        .query_row("SELECT id FROM files WHERE path = ?1", [&path], |r| {
            r.get(0)
        })
        .optional()?;
    if let Some(id) = old {
        delete_file(tx, id)?;
    }
    let s = row.stamp;
    tx.execute(
        "INSERT INTO files(path, dev, ino, size, mtime_ns) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![path, s.dev as i64, s.ino as i64, s.size as i64, s.mtime_ns],
    )?;
    let id = tx.last_insert_rowid();
    insert_session(tx, id, row)?;
    insert_calls_and_docs(tx, id, calls, docs)
}

/// The `sessions` row of file `id`.
fn insert_session(
    tx: &rusqlite::Transaction<'_>,
    id: i64,
    row: &SessionRow,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO sessions VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, \
             ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)",
        params![
            id,
            row.format,
            row.agent,
            row.session_id,
            row.project,
            row.title,
            row.first_ts,
            row.last_ts,
            row.calls as i64,
            row.errors as i64,
            row.cancelled as i64,
            list(&row.tools),
            list(&row.models),
            row.tokens_in as i64,
            row.tokens_out as i64,
            row.tokens_cache_read as i64,
            row.tokens_cache_write as i64,
            row.subagents as i64,
            row.compactions as i64,
            row.agent_version,
            row.git_branch,
            row.error,
        ],
    )?;
    Ok(())
}

/// Call rows, documents and their words of file `id`.
fn insert_calls_and_docs(
    tx: &rusqlite::Transaction<'_>,
    id: i64,
    calls: &[CallRow],
    docs: &[Doc],
) -> rusqlite::Result<()> {
    let mut st = tx.prepare_cached("INSERT INTO calls VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")?;
    for c in calls {
        st.execute(params![
            id,
            c.item,
            c.line as i64,
            c.tool,
            c.status,
            c.summary,
            c.started,
            c.ended
        ])?;
    }
    let mut doc = tx.prepare_cached(
        "INSERT INTO docs(file_id, item, line, kind, tool, ts, recipe) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    let mut words = tx.prepare_cached("INSERT INTO words(rowid, text) VALUES (?1, ?2)")?;
    for d in docs {
        doc.execute(params![
            id,
            d.item,
            d.line as i64,
            d.kind,
            d.tool,
            d.ts,
            d.recipe
        ])?;
        let rowid = tx.last_insert_rowid();
        words.execute(params![rowid, d.text])?;
    }
    Ok(())
}

/// [`Store::put_delta`] inside the caller's transaction.
fn put_delta(tx: &rusqlite::Transaction<'_>, was: Stamp, delta: &Delta) -> rusqlite::Result<bool> {
    let row = &delta.row;
    let held: Option<(i64, Stamp)> = tx
        .query_row(
            "SELECT id, dev, ino, size, mtime_ns FROM files WHERE path = ?1",
            [path_text(&row.path)],
            |r| {
                Ok((
                    r.get(0)?,
                    Stamp {
                        dev: r.get::<_, i64>(1)? as u64,
                        ino: r.get::<_, i64>(2)? as u64,
                        size: r.get::<_, i64>(3)? as u64,
                        mtime_ns: r.get(4)?,
                    },
                ))
            },
        )
        .optional()?;
    let id = match held {
        Some((_, s)) if s == row.stamp => return Ok(true),
        Some((id, s)) if s == was => id,
        _ => return Ok(false),
    };
    let s = row.stamp;
    tx.execute(
        "UPDATE files SET dev = ?2, ino = ?3, size = ?4, mtime_ns = ?5 WHERE id = ?1",
        params![id, s.dev as i64, s.ino as i64, s.size as i64, s.mtime_ns],
    )?;
    tx.execute("DELETE FROM sessions WHERE file_id = ?1", [id])?;
    insert_session(tx, id, row)?;
    {
        let mut words = tx.prepare_cached(
            "DELETE FROM words WHERE rowid IN (SELECT id FROM docs WHERE file_id = ?1 AND item = ?2)",
        )?;
        let mut docs = tx.prepare_cached("DELETE FROM docs WHERE file_id = ?1 AND item = ?2")?;
        let mut calls = tx.prepare_cached("DELETE FROM calls WHERE file_id = ?1 AND item = ?2")?;
        for &item in &delta.items {
            words.execute(params![id, item])?;
            docs.execute(params![id, item])?;
            calls.execute(params![id, item])?;
        }
    }
    insert_calls_and_docs(tx, id, &delta.calls, &delta.docs).map(|()| true)
}

/// Deletes file `id`'s rows and postings (inside the caller's transaction).
fn delete_file(tx: &rusqlite::Transaction<'_>, id: i64) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM words WHERE rowid IN (SELECT id FROM docs WHERE file_id = ?1)",
        [id],
    )?;
    tx.execute("DELETE FROM docs WHERE file_id = ?1", [id])?;
    tx.execute("DELETE FROM calls WHERE file_id = ?1", [id])?;
    tx.execute("DELETE FROM sessions WHERE file_id = ?1", [id])?;
    tx.execute("DELETE FROM files WHERE id = ?1", [id])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(path: &str, last: i64) -> SessionRow {
        SessionRow {
            path: PathBuf::from(path),
            project: "/src/p".into(),
            title: "t".into(),
            last_ts: Some(last),
            tools: vec!["Bash".into(), "Read".into()],
            ..SessionRow::default()
        }
    }

    fn doc(item: u32, text: &str) -> Doc {
        Doc {
            item,
            line: u64::from(item) + 1,
            kind: "call",
            tool: "Bash".into(),
            ts: None,
            text: text.into(),
            recipe: None,
        }
    }

    #[test]
    fn put_replaces_and_remove_forgets_the_words() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("x/library.sqlite");
        let mut s = SqliteStore::open(&p).unwrap().store;
        s.put(&row("/a", 2), &[], &[doc(0, "alpha beta"), doc(3, "gamma")])
            .unwrap();
        s.put(&row("/b", 1), &[], &[doc(1, "alpha")]).unwrap();
        let f = Filter::default();
        let hits = |s: &SqliteStore, w: &str| -> Vec<(String, u32)> {
            s.candidates(&[w.to_owned()], &f)
                .unwrap()
                .into_iter()
                .map(|c| (c.path.display().to_string(), c.item))
                .collect()
        };
        assert_eq!(hits(&s, "alpha"), vec![("/a".into(), 0), ("/b".into(), 1)]);
        assert_eq!(hits(&s, "gam*"), vec![("/a".into(), 3)]);
        // Put again: the old words go.
        s.put(&row("/a", 2), &[], &[doc(0, "delta")]).unwrap();
        assert_eq!(hits(&s, "alpha"), vec![("/b".into(), 1)]);
        s.remove(Path::new("/b")).unwrap();
        assert!(hits(&s, "alpha").is_empty());
        let got = s.sessions(&f).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].tools, vec!["Bash".to_owned(), "Read".to_owned()]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
    }

    #[test]
    fn a_foreign_file_is_moved_aside() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("library.sqlite");
        std::fs::write(
            &p,
            "not a database at all, but long enough to have a header ".repeat(4),
        )
        .unwrap();
        let o = SqliteStore::open(&p).unwrap();
        assert_eq!(o.notes.len(), 1, "{:?}", o.notes);
        assert!(
            o.notes[0].starts_with("library index rebuilt: the old one could not be used (not an SQLite database) and was moved to "),
            "{:?}",
            o.notes
        );
        assert!(o.store.sessions(&Filter::default()).unwrap().is_empty());
    }

    /// The session browser and the indexing thread share one index (the library's `Live`):
    /// opens while the other connection writes and folds its WAL back (`checkpoint`) never take
    /// the file for damage. A checkpoint writes page 1 (the header with the new page count)
    /// before the pages after it and empties the WAL last, so a look at the file between the
    /// two saw "shorter than its header says" with an empty WAL, and moved the index aside
    /// under the writer (CI, session 10: the writer went on in the moved file, the reader saw
    /// an empty new one).
    #[test]
    fn opens_during_writes_and_checkpoints_never_move_the_index_aside() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("library.sqlite");
        let stop = std::sync::atomic::AtomicBool::new(false);
        // The writer's own store, made before the readers start (their race at creation is
        // `simultaneous_first_opens_all_succeed`'s).
        let mut s = SqliteStore::open(&p).unwrap().store;
        std::thread::scope(|sc| {
            let writer = sc.spawn(|| {
                let text = "alpha beta gamma ".repeat(2000);
                let mut n = 0u32;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) && n < 2000 {
                    let docs: Vec<Doc> = (0..20).map(|i| doc(i, &text)).collect();
                    s.put(&row(&format!("/s{n}"), i64::from(n)), &[], &docs)
                        .unwrap();
                    s.checkpoint();
                    n += 1;
                }
                n
            });
            let mut opens = 0;
            let t0 = std::time::Instant::now();
            while t0.elapsed() < std::time::Duration::from_secs(2) {
                // A writer checkpointing in a tight loop may keep a reader out past its tries
                // (CI under load): "in use", and the file left alone, is a right answer too.
                match SqliteStore::open(&p) {
                    Ok(o) => assert_eq!(o.notes, Vec::<String>::new(), "after {opens} opens"),
                    Err(e) => assert!(e.contains("in use by another process"), "{e}"),
                }
                opens += 1;
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            assert!(writer.join().unwrap() > 0);
        });
        let aside: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".bad-"))
            .collect();
        assert_eq!(aside, Vec::<String>::new());
    }

    /// A file shorter than its header says is damage only while nobody else has it open: with
    /// a `-shm` beside it, or frames in its `-wal`, another connection may be in the middle of
    /// a checkpoint. And only "not a database" or "corrupt" from SQLite is damage.
    #[test]
    fn a_short_file_is_truncated_only_when_nobody_has_it_open() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("library.sqlite");
        let mut s = SqliteStore::open(&p).unwrap().store;
        let docs: Vec<Doc> = (0..50).map(|i| doc(i, &"alpha ".repeat(500))).collect();
        s.put(&row("/a", 1), &[], &docs).unwrap();
        drop(s);
        let side = |ext: &str| tmp.path().join(format!("library.sqlite{ext}"));
        assert!(!side("-shm").exists() && !side("-wal").exists());
        assert!(!truncated(&p));
        let len = std::fs::metadata(&p).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(len / 2)
            .unwrap();
        assert!(truncated(&p));
        std::fs::write(side("-shm"), b"").unwrap();
        assert!(!truncated(&p));
        std::fs::remove_file(side("-shm")).unwrap();
        std::fs::write(side("-wal"), [0u8; 32]).unwrap();
        assert!(!truncated(&p));
        std::fs::write(side("-wal"), b"").unwrap();
        assert!(truncated(&p));
        let sqlite = |code| rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None);
        let kinds: Vec<&str> = [
            rusqlite::ffi::SQLITE_BUSY,
            rusqlite::ffi::SQLITE_LOCKED,
            rusqlite::ffi::SQLITE_NOTADB,
            rusqlite::ffi::SQLITE_CORRUPT,
            rusqlite::ffi::SQLITE_IOERR,
            rusqlite::ffi::SQLITE_IOERR_SHMOPEN,
            rusqlite::ffi::SQLITE_CANTOPEN,
            rusqlite::ffi::SQLITE_PROTOCOL,
        ]
        .into_iter()
        .map(|c| match Refusal::of(&sqlite(c)) {
            Refusal::InUse(_) => "in use",
            Refusal::Bad(_) => "bad",
            Refusal::Newer(_) => "newer",
            Refusal::Other(_) => "other",
        })
        .collect();
        assert_eq!(
            kinds,
            [
                "in use", "in use", "bad", "bad", "other", "other", "other", "other"
            ]
        );
    }

    /// An index of schema 1 (documents without recipes) is migrated in place: its rows stay,
    /// its documents have no recipe (the search reads their whole files), new ones have one.
    #[test]
    fn a_schema_1_index_is_migrated_and_keeps_its_rows() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("library.sqlite");
        let mut s = SqliteStore::open(&path).unwrap().store;
        s.put(&row("/a", 1), &[], &[doc(0, "alpha")]).unwrap();
        drop(s);
        let mut s = migrated(
            &path,
            "ALTER TABLE docs DROP COLUMN recipe; DROP INDEX docs_item; \
             CREATE INDEX docs_file ON docs(file_id); PRAGMA user_version = 1;",
        );
        let mut d = doc(1, "alpha");
        d.recipe = Some("0:7".into());
        s.put(&row("/b", 2), &[], &[d]).unwrap();
        let got: Vec<(String, Option<String>)> = s
            .candidates(&["alpha".into()], &Filter::default())
            .unwrap()
            .into_iter()
            .map(|c| (c.path.display().to_string(), c.recipe))
            .collect();
        assert_eq!(
            got,
            vec![("/b".into(), Some("0:7".into())), ("/a".into(), None)]
        );
    }

    /// The index at `path` made older by `sql`, then opened again: it is migrated in place to
    /// [`SCHEMA_VERSION`] without a note (not moved aside).
    fn migrated(path: &Path, sql: &str) -> SqliteStore {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(sql).unwrap();
        drop(conn);
        let o = SqliteStore::open(path).unwrap();
        assert_eq!(o.notes, Vec::<String>::new());
        let version: i32 = o
            .store
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        o.store
    }

    /// The index names of `docs`.
    fn doc_indexes(s: &SqliteStore) -> Vec<String> {
        let mut st = s
            .conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'docs'")
            .unwrap();
        let mut v: Vec<String> = st
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        v.sort();
        v
    }

    /// An index of schema 2 (documents found by file only) is migrated in place to schema 3:
    /// its rows and words stay, documents are found by file and item, and an append's delta
    /// (`Store::put_delta`) replaces one item's document.
    #[test]
    fn a_schema_2_index_is_migrated_in_place() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("library.sqlite");
        let mut s = SqliteStore::open(&path).unwrap().store;
        s.put(&row("/a", 1), &[], &[doc(0, "alpha"), doc(1, "beta")])
            .unwrap();
        drop(s);
        let mut s = migrated(
            &path,
            "DROP INDEX docs_item; CREATE INDEX docs_file ON docs(file_id); \
             PRAGMA user_version = 2;",
        );
        assert_eq!(doc_indexes(&s), ["docs_item"]);
        let f = Filter::default();
        let items = |s: &SqliteStore, w: &str| -> Vec<u32> {
            s.candidates(&[w.to_owned()], &f)
                .unwrap()
                .into_iter()
                .map(|c| c.item)
                .collect()
        };
        assert_eq!((items(&s, "alpha"), items(&s, "beta")), (vec![0], vec![1]));
        let mut r = row("/a", 2);
        r.stamp.size = 9;
        let delta = Delta {
            row: r.clone(),
            items: vec![1, 2],
            calls: Vec::new(),
            docs: vec![doc(1, "gamma"), doc(2, "beta")],
        };
        // Not over the rows of another stamp.
        assert!(!s.put_delta(r.stamp, &delta).unwrap());
        assert!(s.put_delta(Stamp::default(), &delta).unwrap());
        assert_eq!(items(&s, "alpha"), vec![0]);
        assert_eq!(items(&s, "beta"), vec![2]);
        assert_eq!(items(&s, "gamma"), vec![1]);
        assert_eq!(s.sessions(&f).unwrap(), vec![r]);
        // Already at the delta's stamp (another process wrote it): left as it is.
        assert!(s.put_delta(Stamp::default(), &delta).unwrap());
        assert_eq!(items(&s, "beta"), vec![2]);
    }

    /// The two ways of reading candidates (all matches sorted; a session at a time by rowid
    /// range, for words in many documents) hand out the same candidates in the same order,
    /// under every filter, also after files were indexed again and removed (rowids reused).
    #[test]
    fn candidates_by_session_equal_the_sorted_ones() {
        let mut s = SqliteStore::memory().unwrap();
        let call = |item: u32, tool: &str, text: &str| Doc {
            tool: tool.into(),
            ..doc(item, text)
        };
        for round in 0..2 {
            for n in 0..6i64 {
                let mut r = row(&format!("/s{n}"), 10 - (n % 3) + round);
                r.project = format!("/src/p{}", n % 2);
                let docs: Vec<Doc> = (0..5u32)
                    .map(|i| {
                        let word = if (i + n as u32).is_multiple_of(2) {
                            "alpha"
                        } else {
                            "beta"
                        };
                        call(i, if i.is_multiple_of(2) { "Bash" } else { "Read" }, word)
                    })
                    .collect();
                s.put(&r, &[], &docs).unwrap();
            }
            s.remove(Path::new("/s2")).unwrap();
        }
        let filters = [
            Filter::default(),
            Filter {
                tool: Some("bash".into()),
                ..Filter::default()
            },
            Filter {
                project: Some("p1".into()),
                since_ms: Some(10),
                ..Filter::default()
            },
        ];
        for f in &filters {
            for w in ["alpha", "beta", "alp*"] {
                let q = fts_query(&[w.to_owned()]);
                let mut sorted = Vec::new();
                s.each_candidate_sorted(&q, f, &mut |c| {
                    sorted.push(c);
                    true
                })
                .unwrap();
                let mut by_session = Vec::new();
                s.each_candidate_by_session(&q, f, &mut |c| {
                    by_session.push(c);
                    true
                })
                .unwrap();
                assert!(!sorted.is_empty(), "{w} {f:?}");
                assert_eq!(by_session, sorted, "{w} {f:?}");
            }
        }
    }

    /// Several processes (here threads) opening a new index at the same moment all get it:
    /// SQLite refuses some of them at once, without its busy wait, while another sets the
    /// journal mode or creates the schema, and those are tried again.
    #[test]
    fn simultaneous_first_opens_all_succeed() {
        for round in 0..20 {
            let tmp = tempfile::tempdir().unwrap();
            let p = tmp.path().join("library.sqlite");
            let start = std::sync::Barrier::new(6);
            std::thread::scope(|sc| {
                let opens: Vec<_> = (0..6)
                    .map(|_| {
                        sc.spawn(|| {
                            start.wait();
                            SqliteStore::open(&p).map(|o| o.notes)
                        })
                    })
                    .collect();
                for o in opens {
                    assert_eq!(o.join().unwrap(), Ok(Vec::new()), "round {round}");
                }
            });
        }
    }

    #[test]
    fn quotes_make_operators_words() {
        assert_eq!(
            fts_query(&["OR".into(), "ab\"c*".into()]),
            "\"OR\" AND \"ab\"\"c\"*"
        );
    }
}
