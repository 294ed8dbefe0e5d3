//! Where a folded session's memory goes, part by part (issue 8: "resident memory under a quarter
//! of the file's size once indexed"; BENCHMARKS.md "What bounds").
//!
//! Folds a file as the viewer and the commands do (`source::file::fold_path`: file-backed, so
//! inputs and outputs stay in the file), then empties one part of the session at a time under a
//! counting allocator and prints how many live heap bytes each part held, per frame. Inline sizes
//! of the records are printed too. Heap only: the process's resident memory adds the allocator's
//! own overhead (`examples/open_file.rs` reports that).
//!
//! With `--fold` (what `rawpv check` and `stats` fold: `Session::findings_only` and a tally) it
//! prints instead the live heap after every folded batch (the highest and the last) and once
//! the session is finished, to see whether the one-shot commands' memory grows with the file.
//!
//! Usage: `cargo run --release --example session_memory -- [--fold] /tmp/g200k.ndjson`

use std::alloc::System;
use std::mem::size_of;

use rawpv::session::{Invocation, Item, Session};
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Live heap bytes now (reallocations are already counted in both totals).
fn live() -> usize {
    let s = GLOBAL.stats();
    s.bytes_allocated.saturating_sub(s.bytes_deallocated)
}

/// `--fold`: the live heap of a `findings_only` fold with a tally, after each batch.
fn fold(path: &str) {
    let mut s = Session::new();
    s.findings_only = true;
    s.tally = Some(Box::default());
    let (mut peak, mut batches) = (0usize, 0u64);
    let each = |_: &mut Session| {
        peak = peak.max(live());
        batches += 1;
        Ok(())
    };
    let (mut s, _) = match rawpv::source::file::fold_path_each(std::path::Path::new(path), s, each)
    {
        Ok(x) => x,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    println!(
        "{path}: {} frames, {} calls; live heap: highest after a batch {} KB ({batches} batches), finished {} KB; {} calls kept, {} findings",
        s.counts.frames,
        s.counts.invocations,
        peak >> 10,
        live() >> 10,
        s.invocations.len(),
        s.findings.len()
    );
    let part = |name: &str, s: &mut Session, clear: &dyn Fn(&mut Session)| {
        let before = live();
        clear(s);
        println!("  {name:<34} {:>9} KB", before.saturating_sub(live()) >> 10);
    };
    part("tally", &mut s, &|s| s.tally = None);
    part("findings", &mut s, &|s| s.findings = Vec::new());
    part("the rest (calls, index, sessions)", &mut s, &|s| {
        *s = Session::new();
    });
    println!("  left {} KB", live() >> 10);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, path] = args.as_slice()
        && flag == "--fold"
    {
        return fold(path);
    }
    let Some(path) = args.first() else {
        eprintln!("usage: session_memory [--fold] FILE");
        std::process::exit(2);
    };
    let (mut s, _) = match rawpv::source::file::fold_path(std::path::Path::new(&path)) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let frames = usize::try_from(s.counts.frames).unwrap_or(1).max(1);
    let total = live();
    println!(
        "{path}: {frames} frames, {} rows, {} invocations, {} findings",
        s.items.len(),
        s.invocations.len(),
        s.findings.len()
    );
    println!(
        "live heap {} MB = {} bytes a frame; inline: Invocation {} B, Item {} B, Frame {} B",
        total >> 20,
        total / frames,
        size_of::<Invocation>(),
        size_of::<Item>(),
        size_of::<rawpv::protocol::Frame>()
    );
    let part = |name: &str, s: &mut Session, clear: &dyn Fn(&mut Session)| {
        let before = live();
        clear(s);
        let freed = before.saturating_sub(live());
        println!(
            "  {name:<34} {:>9} KB {:>5} bytes a frame",
            freed >> 10,
            freed / frames
        );
    };
    part("result metadata (boxed)", &mut s, &|s| {
        for i in &mut s.invocations {
            i.result = None;
        }
    });
    part("stream chunks", &mut s, &|s| {
        for i in &mut s.invocations {
            i.stream = rawpv::session::ChunkBuffer::default();
        }
    });
    part("inputs, summaries, envelopes", &mut s, &|s| {
        for i in &mut s.invocations {
            i.input = serde_json::Value::Null;
            i.summary = "".into();
            i.request_envelope = None;
            i.result_envelope = None;
            i.delegation_chain = Vec::new();
            i.children = Vec::new();
        }
    });
    part("messages", &mut s, &|s| {
        for it in &mut s.items {
            if matches!(it, Item::Message(_)) {
                *it = Item::Invocation(0);
            }
        }
    });
    part("events", &mut s, &|s| {
        for it in &mut s.items {
            if matches!(it, Item::Event(_)) {
                *it = Item::Invocation(0);
            }
        }
    });
    part("publishes, findings", &mut s, &|s| {
        s.publishes = Vec::new();
        s.findings = Vec::new();
    });
    part("feed rows", &mut s, &|s| {
        s.items = Vec::new();
    });
    part("invocation records, ids, index", &mut s, &|s| {
        *s = Session::new();
    });
    println!("  left {} KB", live() >> 10);
}
