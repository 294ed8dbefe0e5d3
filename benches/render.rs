//! Render benchmarks (criterion): a 10,000-line unified diff rendered from scratch (plain and
//! highlighted), wrapped into the cache, and a screenful sliced from the cache.
//!
//! Run: `cargo bench --bench render` (release profile), or `cargo bench --profile dev --bench
//! render` to reuse the dev build (rawpv at opt-level 0, ratatui/syntect/similar at 3).
//!
//! Measured 2026-11-30, dev profile, 2 cores shared with ~6 other builds (load average ~19), so
//! these are pessimistic: first render plain 336 ms; first render highlighted 5.3 s (syntect on
//! ~5,700 context/added lines: this is why highlighting runs off the draw path); wrapping into
//! the cache 144 ms; slicing a 50-row screenful from the cache 1.7 µs.

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use rawpv::protocol::OutputType;
use rawpv::render::cache::{BlockKind, CacheKey, CachedLines, RenderCache};
use rawpv::render::{RenderCtx, render_output};
use rawpv::theme::Theme;
use serde_json::Value;

/// A git diff of 10,000 lines: 100 files × 1 hunk of 100 lines (context, paired edits, adds).
fn big_diff() -> String {
    let mut s = String::new();
    for f in 0..100 {
        let _ = writeln!(s, "diff --git a/src/mod{f}.rs b/src/mod{f}.rs");
        let _ = writeln!(s, "index 1111111..2222222 100644");
        let _ = writeln!(s, "--- a/src/mod{f}.rs");
        let _ = writeln!(s, "+++ b/src/mod{f}.rs");
        let _ = writeln!(s, "@@ -10,57 +10,76 @@ fn module_{f}() {{");
        for i in 0..76 {
            match i % 4 {
                0 | 1 => {
                    let _ = writeln!(s, "     let value_{i} = compute({i}, \"context line\");");
                }
                2 => {
                    let _ = writeln!(s, "-    let total_{i} = old_function(value_{i}, {i});");
                }
                _ => {
                    let _ = writeln!(s, "+    let total_{i} = new_function(value_{i}, {i} + 1);");
                }
            }
        }
        for i in 0..19 {
            let _ = writeln!(s, "+    // added comment line {i} in module {f}");
        }
    }
    s
}

fn bench(c: &mut Criterion) {
    let diff = Value::String(big_diff());
    let lines = diff.as_str().map_or(0, |s| s.lines().count());
    eprintln!("diff: {lines} lines");
    let theme = Theme::dark();
    let mut plain = RenderCtx::new(120, &theme);
    plain.highlight = false;
    let highlighted = RenderCtx::new(120, &theme);

    c.bench_function("diff_10k_first_render_plain", |b| {
        b.iter(|| {
            render_output(
                &OutputType::Diff,
                black_box(&diff),
                "",
                &Value::Null,
                &plain,
            )
        });
    });
    c.bench_function("diff_10k_first_render_highlighted", |b| {
        b.iter(|| {
            render_output(
                &OutputType::Diff,
                black_box(&diff),
                "",
                &Value::Null,
                &highlighted,
            )
        });
    });
    let rendered = render_output(&OutputType::Diff, &diff, "", &Value::Null, &plain);
    c.bench_function("diff_10k_wrap_into_cache", |b| {
        b.iter(|| CachedLines::new(black_box(rendered.clone()), 120, true));
    });
    let mut cache = RenderCache::new(16);
    let key = CacheKey::new(0, BlockKind::Output, 1, &plain);
    let entry = cache.get_or_render(key, true, || rendered.clone());
    eprintln!("rows after wrap at 120: {}", entry.height());
    c.bench_function("diff_10k_cached_slice_screenful", |b| {
        let mut scroll = 0usize;
        b.iter(|| {
            let e = cache
                .get_best(black_box(&key))
                .unwrap_or_else(|| std::sync::Arc::clone(&entry));
            scroll = (scroll + 37) % e.height().max(1);
            let rows = e.slice(scroll, 50);
            black_box(rows.len())
        });
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
