//! `rawpv -` / a pipe on stdin: frames are decoded and sent as they arrive (line by line, never
//! `read_to_end`); EOF ends the source.
//!
//! Who calls it: `crate::source::spawn_source_with` for `SourceKind::Stdin` (with
//! `tokio::io::stdin()`), and tests/benches with any `AsyncRead`.
//! Invariants: after each read the complete lines are decoded and sent before the next read, so
//! a slow writer's frames show immediately; a fast writer is slowed by the bounded channel.

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::mpsc;

use super::lines::{LineDecoder, MAX_LINE_BYTES};
use super::{SourceError, SourceMsg, SourceState, send_decoded};

/// Read buffer size, in bytes.
const READ_CHUNK: usize = 256 * 1024;

/// Streams `input` until EOF, then sends `Eof` (or `Failed` on a read error).
pub async fn run(mut input: impl AsyncRead + Unpin, tx: &mpsc::Sender<SourceMsg>) {
    if tx.send(SourceMsg::State(SourceState::Live)).await.is_err() {
        return;
    }
    let mut dec = LineDecoder::new(MAX_LINE_BYTES);
    let mut buf = vec![0u8; READ_CHUNK];
    let mut items = Vec::new();
    loop {
        match input.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => {
                dec.feed_bytes(&buf[..n], &mut items);
                dec.flush(&mut items);
                if !send_decoded(tx, &mut dec, &mut items).await {
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                let err = SourceError::Io {
                    path: "stdin".into(),
                    reason: e.to_string(),
                };
                let _ = tx.send(SourceMsg::Failed(err)).await;
                return;
            }
        }
    }
    dec.finish(&mut items);
    if send_decoded(tx, &mut dec, &mut items).await {
        let _ = tx.send(SourceMsg::State(SourceState::Ended)).await;
        let _ = tx.send(SourceMsg::Eof).await;
    }
}
