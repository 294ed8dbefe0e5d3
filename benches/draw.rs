//! Draw benchmark (issue 8): one full-frame draw of the viewer on ratatui's `TestBackend` with
//! 1,000,000 invocations in the feed (target: < 8 ms p99).
//!
//! Each step moves the selection (alternating page and line moves, so the detail pane changes
//! and the feed window scrolls), then runs `App::prepare` (layout + detail render of the selected
//! call) and `App::draw`. Besides criterion's mean, the bench prints p50/p99/max of 1,000
//! individually timed steps, which is what the target speaks of.
//!
//! Run: `cargo bench --bench draw` (`RAWPV_DRAW_CALLS=N` to change the feed size).

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use rawpv::action::Action;
use rawpv::app::{App, Msg};
use rawpv::import::Decoded;

#[path = "support/calls.rs"]
mod calls;
use calls::cpu_ns;

const WIDTH: u16 = 200;
const HEIGHT: u16 = 60;

fn calls() -> usize {
    std::env::var("RAWPV_DRAW_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}

/// `n` finished invocations of six tools (built as frames directly: this bench is about
/// drawing, not parsing).
fn items(n: usize) -> Vec<Decoded> {
    calls::finished_calls(
        n,
        &calls::Shape {
            tools: &["Bash", "Read", "Edit", "Grep", "Glob", "WebFetch"],
            prompt_every: None,
            file_path: Some("src/lib.rs"),
        },
    )
}

fn step(app: &mut App, term: &mut Terminal<TestBackend>, k: usize) {
    let a = match k % 4 {
        0 => Action::PageDown,
        1 | 2 => Action::MoveDown,
        _ => Action::MoveUp,
    };
    app.update(Msg::Action(a));
    app.prepare(Rect::new(0, 0, WIDTH, HEIGHT));
    app.run_jobs_inline();
    let _ = term.draw(|f| app.draw(f));
}

fn bench_draw(c: &mut Criterion) {
    let n = calls();
    let started = Instant::now();
    let mut app = App::headless(items(n), "bench");
    eprintln!(
        "draw bench: {n} invocations ingested in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    let Ok(mut term) = Terminal::new(TestBackend::new(WIDTH, HEIGHT));
    // Start in the middle of the feed, then time 1,000 single steps for the percentiles.
    app.select(n / 2);
    step(&mut app, &mut term, 0);
    let (mut wall, mut cpu): (Vec<f64>, Vec<f64>) = (0..1_000)
        .map(|k| {
            let one = Instant::now();
            let c = cpu_ns();
            step(&mut app, &mut term, k);
            (
                one.elapsed().as_secs_f64() * 1e3,
                cpu_ns().saturating_sub(c) as f64 / 1e6,
            )
        })
        .unzip();
    for (what, ms) in [("wall", &mut wall), ("cpu", &mut cpu)] {
        ms.sort_by(f64::total_cmp);
        let pct = |p: f64| ms[((ms.len() as f64 - 1.0) * p) as usize];
        eprintln!(
            "draw bench ({what}): {WIDTH}x{HEIGHT}, {n} invocations: p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
            pct(0.50),
            pct(0.99),
            pct(1.0)
        );
    }

    let mut g = c.benchmark_group("draw");
    g.sample_size(50);
    let mut k = 0;
    g.bench_function("full_frame_1m_invocations", |b| {
        b.iter(|| {
            k += 1;
            step(&mut app, &mut term, k);
            black_box(term.backend().buffer().area);
        });
    });
    g.finish();
}

criterion_group!(benches, bench_draw);
criterion_main!(benches);
