//! Ingest benchmarks (issue 8): parse throughput (lines → frames: `parse_line`, the file reader's
//! `parse_line_with` skipping outputs, the `Value` reading it falls back to), reducer throughput (frames/s
//! through `Session::apply`, target ≥ 100,000/s), and loading a 2 MB Claude Code transcript to a
//! `Session` (skipped when `../shared/corpus` is absent).
//!
//! Input: a deterministic recording made in memory by `examples/gen.rs` (included as a module), so
//! the bench needs no file. Run: `cargo bench --bench ingest`; figures go to `BENCHMARKS.md`.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use rawpv::import::{self, Decoded};
use rawpv::protocol::{ParseOptions, frame_from_value, parse_line, parse_line_with};
use rawpv::session::Session;

#[path = "../examples/gen.rs"]
#[allow(dead_code, clippy::all, clippy::pedantic)]
mod generator;

/// Frames in the in-memory recording.
const FRAMES: u64 = 20_000;

/// The 2 MB Claude Code transcript of the shared corpus.
const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/claude-code/cc-v2.1.39-compaction-A-excerpt.jsonl"
);

/// On-CPU time of this thread in ns (Linux `/proc/thread-self/schedstat`), so that figures do not
/// depend on how loaded the machine is; `None` elsewhere.
pub fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Prints frames per CPU-second of parsing and of folding (best of 3 rounds): the load-independent
/// figures quoted in `BENCHMARKS.md`.
fn cpu_time_report() {
    let bytes = recording();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    let frames = lines.len() as f64;
    let (mut parse, mut fold) = (f64::MAX, f64::MAX);
    for _ in 0..3 {
        let (Some(t0), items) = (cpu_ns(), import::load_bytes(&bytes).items) else {
            eprintln!("cpu time: /proc/thread-self/schedstat unavailable");
            return;
        };
        let t1 = cpu_ns().unwrap_or(t0);
        let mut s = Session::new();
        for d in items {
            black_box(s.apply(d));
        }
        s.finish();
        let t2 = cpu_ns().unwrap_or(t1);
        black_box(&s);
        parse = parse.min((t1 - t0) as f64 / 1e9);
        fold = fold.min((t2 - t1) as f64 / 1e9);
    }
    eprintln!(
        "cpu time, {frames} frames ({:.1} MB): load_bytes {:.3} s = {:.0} frames/s, {:.1} MB/s; \
         Session::apply {:.3} s = {:.0} frames/s",
        bytes.len() as f64 / 1e6,
        parse,
        frames / parse,
        bytes.len() as f64 / 1e6 / parse,
        fold,
        frames / fold
    );
    if let Ok(corpus) = std::fs::read(CORPUS) {
        let t0 = cpu_ns().unwrap_or(0);
        black_box(Session::from_decoded(import::load_bytes(&corpus).items));
        let t1 = cpu_ns().unwrap_or(t0);
        eprintln!(
            "cpu time, 2 MB Claude Code transcript to Session: {:.1} ms",
            (t1 - t0) as f64 / 1e6
        );
    }
}

fn recording() -> Vec<u8> {
    let mut buf = Vec::new();
    generator::generate(&mut buf, FRAMES, 1).unwrap_or_else(|e| panic!("generate: {e}"));
    buf
}

fn bench_parse(c: &mut Criterion) {
    cpu_time_report();
    let bytes = recording();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    let mut g = c.benchmark_group("parse");
    g.sample_size(10);
    g.throughput(Throughput::Elements(lines.len() as u64));
    g.bench_function("parse_line_20k_frames", |b| {
        b.iter(|| {
            for (i, l) in lines.iter().enumerate() {
                let _ = black_box(parse_line(i as u64 + 1, l));
            }
        });
    });
    // What the file reader does for a session backed by the file: result outputs not built.
    let skip = ParseOptions { skip_output: true };
    g.bench_function("parse_line_skip_output_20k_frames", |b| {
        b.iter(|| {
            for (i, l) in lines.iter().enumerate() {
                let _ = black_box(parse_line_with(i as u64 + 1, l, &skip));
            }
        });
    });
    // The `Value` reading (a JSON tree first, then the same typed structs): what `parse_line`
    // falls back to for lines its one pass leaves (repeated keys, bad JSON, …).
    g.bench_function("value_reading_20k_frames", |b| {
        b.iter(|| {
            for (i, l) in lines.iter().enumerate() {
                let v = serde_json::from_str::<serde_json::Value>(l).ok();
                let _ = black_box(v.map(|v| frame_from_value(i as u64 + 1, v)));
            }
        });
    });
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("load_bytes_20k_frames", |b| {
        b.iter(|| black_box(import::load_bytes(&bytes)));
    });
    g.finish();
}

fn bench_reduce(c: &mut Criterion) {
    let items = import::load_bytes(&recording()).items;
    let frames = items
        .iter()
        .filter(|d| matches!(d, Decoded::Frame(_)))
        .count();
    let mut g = c.benchmark_group("reduce");
    g.sample_size(10);
    g.throughput(Throughput::Elements(frames as u64));
    g.bench_function("apply_20k_frames", |b| {
        b.iter_batched(
            || items.clone(),
            |items| {
                let mut s = Session::new();
                for d in items {
                    black_box(s.apply(d));
                }
                s.finish();
                s
            },
            BatchSize::LargeInput,
        );
    });
    g.finish();
}

fn bench_corpus(c: &mut Criterion) {
    let Ok(bytes) = std::fs::read(CORPUS) else {
        eprintln!("skipping corpus bench: {CORPUS} is absent");
        return;
    };
    let mut g = c.benchmark_group("corpus");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("claude_code_2mb_to_session", |b| {
        b.iter(|| black_box(Session::from_decoded(import::load_bytes(&bytes).items)));
    });
    g.finish();
}

/// Stream chunks in and out of `sequence` order (issue 14.7: descending order was quadratic,
/// 26 s for 100k chunks; the ratio of the two is the figure to watch).
fn bench_chunks(c: &mut Criterion) {
    use rawpv::protocol::StreamType;
    use rawpv::session::{Chunk, ChunkBuffer};
    let chunk = |s: u64| Chunk {
        sequence: Some(s),
        stream_type: StreamType::Stdout,
        text: "x".into(),
        line: s,
    };
    let n = 100_000u64;
    let mut g = c.benchmark_group("chunks");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n));
    for (name, descending) in [("in_order_100k", false), ("descending_100k", true)] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut buf = ChunkBuffer::default();
                for i in 0..n {
                    let s = if descending { n - 1 - i } else { i };
                    black_box(buf.insert(chunk(s)));
                }
                buf
            });
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    bench_parse,
    bench_reduce,
    bench_corpus,
    bench_chunks
);
criterion_main!(benches);
