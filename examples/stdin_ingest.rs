//! Measures live ingest: RAWP NDJSON on stdin → `source::stdin` (line splitting, detection,
//! decoding, bounded channel with backpressure) → `Session::apply` (with the live app's
//! compaction), the same path as `rawpv -`. Prints frames/second to stderr.
//!
//! Usage (figures in the live report were taken this way):
//! `cargo run --release --example gen -- --frames 200000 > /tmp/200k.ndjson`
//! `cargo run --release --example stdin_ingest < /tmp/200k.ndjson`

use std::time::Instant;

use rawpv::import::Decoded;
use rawpv::session::Session;
use rawpv::source::{CHANNEL_CAPACITY, SourceMsg, stdin};
use tokio::sync::mpsc;

/// The allocator `rawpv` uses (`src/main.rs`), so the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (tx, mut rx) = mpsc::channel(CHANNEL_CAPACITY);
    let start = Instant::now();
    let source = tokio::spawn(async move { stdin::run(tokio::io::stdin(), &tx).await });
    let mut session = Session::new();
    let (mut frames, mut malformed, mut batches) = (0u64, 0u64, 0u64);
    let mut buf = Vec::new();
    let mut first_batch = None;
    while rx.recv_many(&mut buf, 4).await > 0 {
        for msg in buf.drain(..) {
            match msg {
                SourceMsg::Batch(items) => {
                    batches += 1;
                    first_batch.get_or_insert_with(|| start.elapsed());
                    for d in items {
                        match &d {
                            Decoded::Frame(_) => frames += 1,
                            Decoded::Malformed(_) => malformed += 1,
                            Decoded::Finding(_) => {}
                        }
                        session.apply(d);
                    }
                }
                SourceMsg::Failed(e) => eprintln!("source failed: {e}"),
                SourceMsg::Format(_)
                | SourceMsg::State(_)
                | SourceMsg::Input(_)
                | SourceMsg::Eof => {}
            }
        }
        session.compact_if_needed();
    }
    session.finish();
    let secs = start.elapsed().as_secs_f64();
    let _ = source.await;
    eprintln!(
        "{frames} frames ({malformed} malformed) in {batches} batches, {secs:.3} s: {:.0} frames/s; \
         first batch after {:.1} ms; session: {} rows ({} dropped), {} invocations",
        frames as f64 / secs,
        first_batch.map_or(0.0, |d| d.as_secs_f64() * 1000.0),
        session.items.len(),
        session.dropped_items,
        session.invocations.len(),
    );
}
