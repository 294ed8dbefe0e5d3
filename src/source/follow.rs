//! `rawpv -f FILE`: follow a growing file (like `tail -F`).
//!
//! Who calls it: `crate::source::spawn_source_with` for [`SourceKind::Follow`], and `rawpv serve
//! --follow` (`crate::cmd::serve`, through [`run_until`]).
//!
//! Behaviour: reads what exists, then polls every [`POLL_INTERVAL`] (no busy loop, no inotify
//! dependency): new bytes are read from the open handle; only complete lines are decoded (a
//! half-written last line waits for its newline). Each poll also `stat`s the path:
//!
//! | seen                                   | action                                                   |
//! |----------------------------------------|----------------------------------------------------------|
//! | handle's size < read offset            | truncated: drop the partial line, restart at offset 0    |
//! | path's inode/device differ from handle | rotated: drain the old handle, finish its decoder, reopen |
//! | path missing                           | keep the old handle, wait for the file to come back       |
//!
//! Both restarts send [`SourceState::Restarted`] and a fresh format detection; line numbers
//! restart at 1 (they are the new file's lines). Known limits: a truncation followed by regrowth
//! past the old offset within one poll interval cannot be seen (same as `tail -F`); a JSON-array
//! file cannot be decoded before it ends, so following one shows nothing until it is replaced.
//!
//! Ending: [`run`] never ends by itself. [`run_until`] (`rawpv serve --follow`) ends when its
//! `stop` token fires: it reads the file once more to its end, finishes the decoder (an
//! unterminated last line counts as a line, pending records are emitted, as at the end of a saved
//! file), and sends `Eof`, so everything written before the stop is delivered.
//!
//! [`SourceKind::Follow`]: crate::source::SourceKind::Follow

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncSeekExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::lines::{LineDecoder, MAX_LINE_BYTES};
use super::{SourceError, SourceMsg, SourceState, send_decoded};

/// How often a followed file is checked for new bytes, truncation and rotation: short enough
/// that a written record is on screen within 100 ms at p99 (issue 21 item 5, BENCHMARKS.md
/// "Live latency"); a poll is three cheap system calls (a read at the end, two `stat`s).
pub const POLL_INTERVAL: Duration = Duration::from_millis(30);
/// Read buffer size, in bytes.
const READ_CHUNK: usize = 256 * 1024;

struct Open {
    file: tokio::fs::File,
    id: (u64, u64),
    offset: u64,
}

async fn open(path: &PathBuf) -> std::io::Result<Open> {
    let file = tokio::fs::File::open(path).await?;
    let meta = file.metadata().await?;
    Ok(Open {
        file,
        id: (meta.dev(), meta.ino()),
        offset: 0,
    })
}

/// Reads everything currently in the file into the decoder; sends the items.
/// Returns `false` when the receiver is gone.
async fn drain(
    o: &mut Open,
    dec: &mut LineDecoder,
    buf: &mut [u8],
    tx: &mpsc::Sender<SourceMsg>,
) -> std::io::Result<bool> {
    let mut items = Vec::new();
    loop {
        let n = o.file.read(buf).await?;
        if n == 0 {
            break;
        }
        o.offset += n as u64;
        dec.feed_bytes(&buf[..n], &mut items);
        if items.len() >= super::BATCH && !send_decoded(tx, dec, &mut items).await {
            return Ok(false);
        }
    }
    dec.caught_up(&mut items);
    Ok(send_decoded(tx, dec, &mut items).await)
}

/// Reads what is left of `o`, finishes the decoder and sends its last items (a stop, a
/// rotation). `false` when following ends: the receiver is gone, or the read failed (sent as
/// `Failed`).
async fn drain_and_finish(
    o: &mut Open,
    dec: &mut LineDecoder,
    buf: &mut [u8],
    tx: &mpsc::Sender<SourceMsg>,
    io_err: &impl Fn(std::io::Error) -> SourceError,
) -> bool {
    match drain(o, dec, buf, tx).await {
        Ok(true) => {}
        Ok(false) => return false,
        Err(e) => {
            let _ = tx.send(SourceMsg::Failed(io_err(e))).await;
            return false;
        }
    }
    let mut items = Vec::new();
    dec.finish(&mut items);
    send_decoded(tx, dec, &mut items).await
}

/// Follows `path` until the receiver is dropped (or the task is cancelled). `poll` is the
/// check interval ([`POLL_INTERVAL`] in the app; tests may pass less).
pub async fn run(path: PathBuf, poll: Duration, tx: &mpsc::Sender<SourceMsg>) {
    run_until(path, poll, tx, &CancellationToken::new()).await;
}

/// [`run`] until `stop` fires: then the file is read to its end once more, the decoder finished,
/// and `Eof` sent (see the module docs).
pub async fn run_until(
    path: PathBuf,
    poll: Duration,
    tx: &mpsc::Sender<SourceMsg>,
    stop: &CancellationToken,
) {
    let shown = path.display().to_string();
    let io_err = |e: std::io::Error| SourceError::Io {
        path: shown.clone(),
        reason: e.to_string(),
    };
    let mut cur = match open(&path).await {
        Ok(o) => o,
        Err(e) => {
            let _ = tx.send(SourceMsg::Failed(io_err(e))).await;
            return;
        }
    };
    let _ = tx.send(SourceMsg::State(SourceState::Loading)).await;
    let mut dec = LineDecoder::for_file(MAX_LINE_BYTES, &path);
    let mut buf = vec![0u8; READ_CHUNK];
    let mut live = false;
    loop {
        match drain(&mut cur, &mut dec, &mut buf, tx).await {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                let _ = tx.send(SourceMsg::Failed(io_err(e))).await;
                return;
            }
        }
        if !live {
            live = true;
            if tx.send(SourceMsg::State(SourceState::Live)).await.is_err() {
                return;
            }
        }
        tokio::select! {
            () = tokio::time::sleep(poll) => {}
            () = stop.cancelled() => {
                // Last read: what was written before the stop, then the end of the input.
                if drain_and_finish(&mut cur, &mut dec, &mut buf, tx, &io_err).await {
                    let _ = tx.send(SourceMsg::Eof).await;
                }
                return;
            }
        }
        if tx.is_closed() {
            return;
        }
        // Truncated in place?
        let size = match cur.file.metadata().await {
            Ok(m) => m.len(),
            Err(e) => {
                let _ = tx.send(SourceMsg::Failed(io_err(e))).await;
                return;
            }
        };
        if size < cur.offset {
            dec.discard_partial();
            let mut items = Vec::new();
            dec.finish(&mut items);
            if !send_decoded(tx, &mut dec, &mut items).await {
                return;
            }
            let reason = format!("file truncated ({} → {size} bytes)", cur.offset);
            if tx
                .send(SourceMsg::State(SourceState::Restarted { reason }))
                .await
                .is_err()
            {
                return;
            }
            if let Err(e) = cur.file.seek(std::io::SeekFrom::Start(0)).await {
                let _ = tx.send(SourceMsg::Failed(io_err(e))).await;
                return;
            }
            cur.offset = 0;
            dec = LineDecoder::for_file(MAX_LINE_BYTES, &path);
            continue;
        }
        // Replaced (rotated)? A missing path means "being rotated": keep the old handle.
        let Ok(meta) = tokio::fs::metadata(&path).await else {
            continue;
        };
        if (meta.dev(), meta.ino()) == cur.id {
            continue;
        }
        let Ok(next) = open(&path).await else {
            continue;
        };
        // Lines written to the old file before the switch still count.
        if !drain_and_finish(&mut cur, &mut dec, &mut buf, tx, &io_err).await {
            return;
        }
        let reason = "file replaced (rotated); reading the new file".to_owned();
        if tx
            .send(SourceMsg::State(SourceState::Restarted { reason }))
            .await
            .is_err()
        {
            return;
        }
        cur = next;
        dec = LineDecoder::for_file(MAX_LINE_BYTES, &path);
    }
}
