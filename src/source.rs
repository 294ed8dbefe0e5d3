//! Inputs: each source turns bytes into [`Decoded`] items on a bounded channel (STYLE 4.4).
//!
//! Who calls it: the app loop (`crate::app`) spawns one source with [`spawn_source`]; the one-shot
//! commands use [`load_input`]. Sources report; they never mutate session state.
//! Invariants: the channel is bounded ([`CHANNEL_CAPACITY`] batches) so a fast source waits for
//! the app (backpressure) instead of growing memory; a source ends with exactly one `Eof` or
//! `Failed`.

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

/// A message from a source to the app.
#[derive(Debug, Clone, PartialEq)]
pub enum SourceMsg {
    Batch(Vec<Decoded>),
    /// The detected input format (sent once, first).
    Format(Format),
    State(SourceState),
    Eof,
    Failed(SourceError),
}

/// The embedded demo session (`assets/demo.ndjson`).
pub const DEMO: &str = include_str!("../assets/demo.ndjson");

/// Spawns the task that reads `kind` and sends [`SourceMsg`]s to `tx` until the input ends or
/// `cancel` fires.
pub fn spawn_source(
    kind: SourceKind,
    tx: mpsc::Sender<SourceMsg>,
    cancel: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let run = async {
            match load_input(&kind).await {
                Ok(loaded) => {
                    let _ = tx.send(SourceMsg::Format(loaded.format)).await;
                    let mut items = loaded.items.into_iter().peekable();
                    while items.peek().is_some() {
                        let batch: Vec<Decoded> = items.by_ref().take(BATCH).collect();
                        if tx.send(SourceMsg::Batch(batch)).await.is_err() {
                            return;
                        }
                    }
                    let _ = tx.send(SourceMsg::Eof).await;
                }
                Err(e) => {
                    let _ = tx.send(SourceMsg::Failed(e)).await;
                }
            }
        };
        tokio::select! {
            () = cancel.cancelled() => {}
            () = run => {}
        }
    })
}

/// Reads a whole input at once (for `print`, `convert`, `check`, `stats` and replay).
///
/// # Errors
/// [`SourceError::Io`] when the file cannot be read.
pub async fn load_input(kind: &SourceKind) -> Result<import::Loaded, SourceError> {
    match kind {
        SourceKind::File(p) | SourceKind::Follow(p) => {
            let p = p.clone();
            let path = p.display().to_string();
            tokio::task::spawn_blocking(move || import::load_path(&p))
                .await
                .map_err(|e| SourceError::Other(e.to_string()))?
                .map_err(|e| SourceError::Io {
                    path,
                    reason: e.to_string(),
                })
        }
        SourceKind::Demo => Ok(import::load_bytes(DEMO.as_bytes())),
        SourceKind::Stdin => {
            use tokio::io::AsyncReadExt;
            let mut buf = Vec::new();
            tokio::io::stdin()
                .read_to_end(&mut buf)
                .await
                .map_err(|e| SourceError::Io {
                    path: "stdin".into(),
                    reason: e.to_string(),
                })?;
            Ok(import::load_bytes(&buf))
        }
        SourceKind::Url(u) => Err(SourceError::Other(format!(
            "network sources are not built yet: {u}"
        ))),
    }
}
