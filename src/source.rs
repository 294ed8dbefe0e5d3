//! Inputs: each source turns bytes into [`Decoded`] items on a bounded channel (STYLE 4.4).
//!
//! Who calls it: the app loop (`crate::app`) spawns one source with [`spawn_source`]; the one-shot
//! commands use [`load_input`]. Sources report; they never mutate session state.
//! Invariants: the channel is bounded ([`CHANNEL_CAPACITY`] batches) so a fast source waits for
//! the app (backpressure) instead of growing memory; a source ends with exactly one `Eof` or
//! `Failed` (a followed file never ends by itself: only cancellation stops it).
//!
//! Sources (one tokio task each):
//! * `File`: [`file`]: read in the background and sent batch by batch as it is decoded, with
//!   [`SourceState::Reading`] progress, so the first screen comes after the first batch. A Claude
//!   Code transcript streams the same way, ordered and placed as it is read (issue 16).
//! * `Demo`: decoded at once ([`load_input`]), sent in batches.
//! * `Follow` (`-f`): [`follow`]: read what exists, then poll for new complete lines; truncation
//!   and rotation are reported with [`SourceState::Restarted`].
//! * `Stdin` (`-`): [`stdin`]: streamed line by line as it arrives; EOF ends it.
//! * `Url`: [`net`]: WebSocket (`ws://`, `wss://`) or SSE (`http://`, `https://`) with Bearer
//!   auth, resume and capped exponential backoff; see `net` for the close/reconnect rules.

pub mod file;
pub mod follow;
pub mod lines;
pub mod merge;
pub mod net;
pub mod sse;
pub mod stdin;
pub mod ws;

use std::path::PathBuf;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::import::{self, Decoded, Format};

/// Capacity of the source → app channel, in batches.
pub const CHANNEL_CAPACITY: usize = 64;
/// Items per batch sent by a source.
pub const BATCH: usize = 1024;

/// Where frames come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceKind {
    /// A saved file, read once.
    File(PathBuf),
    /// A growing file, followed (`-f`).
    Follow(PathBuf),
    /// Standard input (`-`).
    Stdin,
    /// A master's live stream: `ws://`, `wss://` (WebSocket) or `http://`, `https://` (SSE).
    Url(String),
    /// The embedded demo session.
    Demo,
}

impl SourceKind {
    /// Parses a command-line input: `-` is stdin, a URL scheme is a network source, else a path.
    pub fn from_arg(arg: &str, follow: bool) -> Self {
        if arg == "-" {
            Self::Stdin
        } else if ["ws://", "wss://", "http://", "https://"]
            .iter()
            .any(|p| arg.starts_with(p))
        {
            Self::Url(arg.to_owned())
        } else if follow {
            Self::Follow(PathBuf::from(arg))
        } else {
            Self::File(PathBuf::from(arg))
        }
    }

    /// Short label for the status bar.
    pub fn label(&self) -> String {
        match self {
            Self::File(p) | Self::Follow(p) => p.display().to_string(),
            Self::Stdin => "stdin".to_owned(),
            Self::Url(u) => u.clone(),
            Self::Demo => "demo".to_owned(),
        }
    }
}

/// Connection / reading state shown in the status bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceState {
    Loading,
    /// A saved file is being read: `bytes` of `total` (its size when opened).
    Reading {
        bytes: u64,
        total: u64,
    },
    /// Reading live input (following a file, stdin, connected).
    Live,
    Connecting {
        attempt: u32,
    },
    Reconnecting {
        attempt: u32,
        reason: String,
    },
    /// Input ended normally.
    Ended,
    /// A followed file was truncated or replaced (rotated); reading restarted at its start.
    Restarted {
        reason: String,
    },
}

/// A source could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    #[error("cannot read {path}: {reason}")]
    Io { path: String, reason: String },
    #[error("authentication failed for {url}: {reason}")]
    Auth { url: String, reason: String },
    #[error("{0}")]
    Other(String),
}

pub use net::{NetConfig, Token};

/// A message from a source to the app.
#[derive(Debug, Clone, PartialEq)]
pub enum SourceMsg {
    Batch(Vec<Decoded>),
    /// The detected input format (sent once, first).
    Format(Format),
    State(SourceState),
    /// The batches after this come from input `n` (the index of its argument), until the next
    /// `Input`: sent only when there are several inputs (`merge`); none means input 0.
    Input(u16),
    Eof,
    Failed(SourceError),
}

/// The embedded demo session (`assets/demo.ndjson`).
pub const DEMO: &str = include_str!("../assets/demo.ndjson");

/// Spawns the task that reads `kind` and sends [`SourceMsg`]s to `tx` until the input ends or
/// `cancel` fires. Network sources use [`NetConfig::from_env`] (token from `RAWP_TOKEN`); use
/// [`spawn_source_with`] to pass a `--token-file`.
pub fn spawn_source(
    kind: SourceKind,
    tx: mpsc::Sender<SourceMsg>,
    cancel: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    spawn_source_with(kind, NetConfig::from_env(), tx, cancel)
}

/// [`spawn_source`] with explicit network settings (token, frame cap, backoff).
pub fn spawn_source_with(
    kind: SourceKind,
    net: NetConfig,
    tx: mpsc::Sender<SourceMsg>,
    cancel: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let shown = match &kind {
        SourceKind::Url(u) => crate::log::redact_url(u),
        other => other.label(),
    };
    tracing::info!(source = %shown, "source opened");
    tokio::spawn(async move {
        let run = async {
            match kind {
                SourceKind::File(p) => send_file(p, tx.clone()).await,
                SourceKind::Demo => send_loaded(&kind, &tx).await,
                SourceKind::Follow(p) => follow::run(p, follow::POLL_INTERVAL, &tx).await,
                SourceKind::Stdin => stdin::run(tokio::io::stdin(), &tx).await,
                SourceKind::Url(u) => net::run(&u, &net, &tx).await,
            }
        };
        tokio::select! {
            () = cancel.cancelled() => tracing::debug!(source = %shown, "source cancelled"),
            () = run => tracing::debug!(source = %shown, "source task ended"),
        }
    })
}

/// Streams a saved file ([`file::read_path_with`] on a blocking thread) into `tx`. Outputs the
/// session defers are not built: the app's session has this file as `backing`. When the app
/// drops the receiver (back to the browser, quit), the reader stops at its next batch.
async fn send_file(path: PathBuf, tx: mpsc::Sender<SourceMsg>) {
    let shown = crate::render::text::visible(&path.display().to_string());
    let tx2 = tx.clone();
    let read = tokio::task::spawn_blocking(move || {
        let opts = file::ReadOptions {
            defer_outputs: true,
        };
        file::read_path_with(&path, opts, |ev| {
            let msg = match ev {
                file::FileEvent::Format(f) => SourceMsg::Format(f),
                file::FileEvent::Batch(b) => SourceMsg::Batch(b),
                file::FileEvent::Progress { bytes, total } => {
                    SourceMsg::State(SourceState::Reading { bytes, total })
                }
            };
            tx2.blocking_send(msg).is_ok()
        })
    })
    .await;
    let end = match read {
        Ok(Ok(_)) => SourceMsg::Eof,
        Ok(Err(e)) => SourceMsg::Failed(SourceError::Io {
            path: shown,
            reason: e.to_string(),
        }),
        Err(e) => SourceMsg::Failed(SourceError::Other(e.to_string())),
    };
    let _ = tx.send(end).await;
}

async fn send_loaded(kind: &SourceKind, tx: &mpsc::Sender<SourceMsg>) {
    match load_input(kind).await {
        Ok(loaded) => {
            let _ = tx.send(SourceMsg::Format(loaded.format)).await;
            let mut items = loaded.items;
            if send_items(tx, &mut items).await {
                let _ = tx.send(SourceMsg::Eof).await;
            }
        }
        Err(e) => {
            let _ = tx.send(SourceMsg::Failed(e)).await;
        }
    }
}

/// Sends `items` (drained) in batches of at most [`BATCH`]; waits while the channel is full
/// (backpressure). Returns `false` when the receiver is gone.
pub(crate) async fn send_items(tx: &mpsc::Sender<SourceMsg>, items: &mut Vec<Decoded>) -> bool {
    while !items.is_empty() {
        let batch: Vec<Decoded> = if items.len() > BATCH {
            let rest = items.split_off(BATCH);
            std::mem::replace(items, rest)
        } else {
            std::mem::take(items)
        };
        if tx.send(SourceMsg::Batch(batch)).await.is_err() {
            return false;
        }
    }
    true
}

/// Sends the detected format (if newly known), then the decoded items. `false`: receiver gone.
pub(crate) async fn send_decoded(
    tx: &mpsc::Sender<SourceMsg>,
    dec: &mut lines::LineDecoder,
    items: &mut Vec<Decoded>,
) -> bool {
    if let Some(f) = dec.take_detected()
        && tx.send(SourceMsg::Format(f)).await.is_err()
    {
        return false;
    }
    send_items(tx, items).await
}

/// Reads a whole input at once (for `print`, `convert`, `check`, `stats` and replay). A URL is
/// read until the server closes normally (token from `RAWP_TOKEN`; see [`load_input_with`]).
///
/// # Errors
/// [`SourceError::Io`] when the file cannot be read; for URLs, [`SourceError::Auth`] on HTTP
/// 401/403 and [`SourceError::Other`] when the stream cannot be (re)connected.
pub async fn load_input(kind: &SourceKind) -> Result<import::Loaded, SourceError> {
    load_input_with(kind, &NetConfig::from_env()).await
}

/// [`load_input`] with explicit network settings.
///
/// # Errors
/// As [`load_input`].
pub async fn load_input_with(
    kind: &SourceKind,
    net: &NetConfig,
) -> Result<import::Loaded, SourceError> {
    match kind {
        SourceKind::File(p) | SourceKind::Follow(p) => {
            let p = p.clone();
            let path = crate::render::text::visible(&p.display().to_string());
            tokio::task::spawn_blocking(move || import::load_path(&p))
                .await
                .map_err(|e| SourceError::Other(e.to_string()))?
                .map_err(|e| SourceError::Io {
                    path,
                    reason: e.to_string(),
                })
        }
        SourceKind::Demo => Ok(import::load_bytes(DEMO.as_bytes())),
        SourceKind::Stdin => read_capped(tokio::io::stdin())
            .await
            .map_err(|e| SourceError::Io {
                path: "stdin".into(),
                reason: e.to_string(),
            }),
        SourceKind::Url(u) => net::collect(u, net).await,
    }
}

/// Reads a whole input for the one-shot commands (their decoders see it whole), except that a
/// line longer than [`lines::MAX_LINE_BYTES`] is not kept, as in the live sources: it becomes a
/// `TooLong` malformed item at its line number and an empty line in the text, so the lines
/// after it keep their numbers. `read_to_end` held a 600 MB line twice (1.14 GB, issue 14.13).
///
/// # Errors
/// Reading failed.
pub async fn read_capped(
    mut input: impl tokio::io::AsyncRead + Unpin,
) -> std::io::Result<import::Loaded> {
    use tokio::io::AsyncReadExt;
    let max = lines::MAX_LINE_BYTES;
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 256 * 1024];
    let mut line = 1u64;
    let mut line_start = 0usize;
    // Bytes of the current line when it is over the cap (its bytes are not kept).
    let mut skipping: Option<usize> = None;
    let mut too_long = Vec::new();
    loop {
        let n = match input.read(&mut chunk).await {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let mut rest = &chunk[..n];
        while !rest.is_empty() {
            let here = buf.len() - line_start;
            if let Some(i) = memchr::memchr(b'\n', rest) {
                let (part, tail) = rest.split_at(i + 1);
                match skipping.take() {
                    Some(k) => too_long.push((line, k + i)),
                    None if here + i > max => {
                        too_long.push((line, here + i));
                        buf.truncate(line_start);
                    }
                    None => buf.extend_from_slice(&part[..i]),
                }
                buf.push(b'\n');
                line += 1;
                line_start = buf.len();
                rest = tail;
            } else {
                match skipping.as_mut() {
                    Some(k) => *k += rest.len(),
                    None if here + rest.len() > max => {
                        skipping = Some(here + rest.len());
                        buf.truncate(line_start);
                    }
                    None => buf.extend_from_slice(rest),
                }
                rest = &[];
            }
        }
    }
    if let Some(k) = skipping {
        too_long.push((line, k));
    }
    let mut loaded = import::load_bytes(&buf);
    for (line, size) in too_long {
        loaded
            .items
            .push(Decoded::Malformed(crate::protocol::ParseError::new(
                line,
                crate::protocol::ParseErrorKind::TooLong(size),
                "(a line over the 16 MiB cap; not read)",
            )));
    }
    Ok(loaded)
}
