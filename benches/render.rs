//! Render benchmarks (criterion): a 10,000-line unified diff, through the viewer (`app_*`: select
//! the call → first drawn frame with a `TestBackend`; the background jobs; scrolling) and through
//! the renderer alone (plain, highlighted); plus the one-time syntax-set load.
//!
//! Run: `cargo bench --bench render` (release profile), or `cargo bench --profile dev --bench
//! render` to reuse the dev build (rawpv at opt-level 0, ratatui/syntect/similar at 3).
//!
//! Measured 2026-11-30, release, 2 shared cores at load ~7–11 (BENCHMARKS.md, "Rendering"):
//! select → first frame 4.7 ms; background: highlighted first screens +125 ms, every row plain
//! +43 ms, every row highlighted +5.0 s; scroll frame 1.0 ms.

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use rawpv::action::Action;
use rawpv::app::{App, Msg};
use rawpv::import;
use rawpv::protocol::OutputType;
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
}

/// A RAWP recording: a small Bash call, then one whose result is the 10,000-line diff.
fn recording(diff: &str) -> Vec<u8> {
    let out = serde_json::to_string(diff).unwrap_or_default();
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"{{"type":"tool.invoke.request","payload":{{"invocation_id":"a","tool_name":"Bash","input":{{"command":"ls"}}}}}}"#
    );
    let _ = writeln!(
        s,
        r#"{{"type":"tool.invoke.result","payload":{{"invocation_id":"a","status":"success","output":"x\n","output_type":"text"}}}}"#
    );
    let _ = writeln!(
        s,
        r#"{{"type":"tool.invoke.request","payload":{{"invocation_id":"d","tool_name":"Bash","input":{{"command":"git diff"}}}}}}"#
    );
    let _ = writeln!(
        s,
        r#"{{"type":"tool.invoke.result","payload":{{"invocation_id":"d","status":"success","output":{out},"output_type":"diff"}}}}"#
    );
    s.into_bytes()
}

const AREA: Rect = Rect::new(0, 0, 200, 60);

/// Whether the drawn screen shows rendered diff rows (gutter numbers, not raw diff text).
fn shows_diff(term: &Terminal<TestBackend>) -> bool {
    let buf = term.backend().buffer();
    let text: String = buf
        .content()
        .iter()
        .map(ratatui::buffer::Cell::symbol)
        .collect();
    text.contains("10 10 │ ")
}

fn frame(app: &mut App, term: &mut Terminal<TestBackend>) {
    app.prepare(AREA);
    let _ = term.draw(|f| app.draw(f));
}

/// Draws and runs render jobs until none is left (the loop would spawn them).
fn settle(app: &mut App, term: &mut Terminal<TestBackend>) {
    for _ in 0..10 {
        frame(app, term);
        if app.queued_job().is_none() {
            return;
        }
        app.run_jobs_inline();
    }
}

/// The app with the small call selected and drawn once (syntect warmed by an earlier run).
fn app_on_first_row(rec: &[u8]) -> (App, Terminal<TestBackend>) {
    let items = import::load_bytes(rec).items;
    let mut app = App::headless(items, "bench");
    let mut term = Terminal::new(TestBackend::new(AREA.width, AREA.height)).unwrap_or_else(|e| {
        panic!("backend: {e}");
    });
    app.update(Msg::Action(Action::Top));
    frame(&mut app, &mut term);
    (app, term)
}

/// What the user experiences in the viewer: select the diff's row, draw. The first frame must
/// already show rendered diff rows; the rest renders in the background (jobs, run inline here
/// only after the measured frame).
fn bench_app(c: &mut Criterion, diff: &str) {
    let rec = recording(diff);
    let (mut app, mut term) = app_on_first_row(&rec);
    app.update(Msg::Action(Action::MoveDown));
    frame(&mut app, &mut term);
    eprintln!("first frame shows the diff: {}", shows_diff(&term));
    settle(&mut app, &mut term);
    eprintln!("after background render: {}", shows_diff(&term));

    c.bench_function("app_diff_10k_select_to_first_frame", |b| {
        b.iter_batched(
            || app_on_first_row(&rec),
            |(mut app, mut term)| {
                app.update(Msg::Action(Action::MoveDown));
                frame(&mut app, &mut term);
                (app, term)
            },
            BatchSize::PerIteration,
        );
    });
    // Background step 1: the shown screens highlighted (what replaces the plain first frame).
    c.bench_function("app_diff_10k_first_highlighted_frame", |b| {
        b.iter_batched(
            || {
                let (mut app, mut term) = app_on_first_row(&rec);
                app.update(Msg::Action(Action::MoveDown));
                frame(&mut app, &mut term);
                (app, term)
            },
            |(mut app, mut term)| {
                app.run_jobs_inline();
                frame(&mut app, &mut term);
                (app, term)
            },
            BatchSize::PerIteration,
        );
    });
    // Background step 2: the whole diff plain, the highlighted screens kept (every row, exact
    // counts: from here scrolling is a slice).
    c.bench_function("app_diff_10k_full_plain", |b| {
        b.iter_batched(
            || {
                let (mut app, mut term) = app_on_first_row(&rec);
                app.update(Msg::Action(Action::MoveDown));
                frame(&mut app, &mut term);
                app.run_jobs_inline();
                frame(&mut app, &mut term);
                (app, term)
            },
            |(mut app, mut term)| {
                app.run_jobs_inline();
                frame(&mut app, &mut term);
                (app, term)
            },
            BatchSize::PerIteration,
        );
    });
    // Background step 3: the whole diff highlighted.
    c.bench_function("app_diff_10k_full_highlighted", |b| {
        b.iter_batched(
            || {
                let (mut app, mut term) = app_on_first_row(&rec);
                app.update(Msg::Action(Action::MoveDown));
                frame(&mut app, &mut term);
                app.run_jobs_inline();
                frame(&mut app, &mut term);
                app.run_jobs_inline();
                frame(&mut app, &mut term);
                (app, term)
            },
            |(mut app, mut term)| {
                app.run_jobs_inline();
                frame(&mut app, &mut term);
                (app, term)
            },
            BatchSize::PerIteration,
        );
    });
    // Scrolling the expanded diff *before* the background render lands (jobs never run): the
    // quick rendering grows by doubling, so most frames are a slice and a few re-render.
    {
        let (mut app, mut term) = app_on_first_row(&rec);
        app.update(Msg::Action(Action::MoveDown));
        app.update(Msg::Action(Action::FocusNext));
        app.update(Msg::Action(Action::ToggleExpand));
        frame(&mut app, &mut term);
        drop(app.take_jobs());
        let mut times = Vec::new();
        for _ in 0..200 {
            app.update(Msg::Action(Action::PageDown));
            let t = std::time::Instant::now();
            frame(&mut app, &mut term);
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            drop(app.take_jobs());
        }
        let mut sorted = times.clone();
        sorted.sort_by(f64::total_cmp);
        let pct = |p: f64| sorted[((sorted.len() - 1) as f64 * p) as usize];
        let slow = times.iter().filter(|&&t| t > 5.0).count();
        eprintln!(
            "scroll while rendering (200 PageDown frames, expanded, to row {}): p50 {:.2} ms, \
             p90 {:.2} ms, max {:.2} ms, {slow} frames over 5 ms",
            app.view().detail.scroll,
            pct(0.5),
            pct(0.9),
            pct(1.0)
        );
    }
    // Scrolling the fully rendered, expanded diff: one page per frame.
    let (mut app, mut term) = app_on_first_row(&rec);
    app.update(Msg::Action(Action::MoveDown));
    app.update(Msg::Action(Action::FocusNext));
    app.update(Msg::Action(Action::ToggleExpand));
    settle(&mut app, &mut term);
    eprintln!("expanded rows: {}", app.detail_lines().len());
    let mut k = 0usize;
    c.bench_function("app_diff_10k_scroll_frame", |b| {
        b.iter(|| {
            k += 1;
            let a = if k.is_multiple_of(400) {
                Action::Top
            } else {
                Action::PageDown
            };
            app.update(Msg::Action(a));
            frame(&mut app, &mut term);
        });
    });
}

fn bench_app_all(c: &mut Criterion) {
    let diff = big_diff();
    bench_app(c, &diff);
    // One-time cost of the first highlighted block (lazy, on a render worker).
    c.bench_function("syntax_set_load_two_face", |b| {
        b.iter(two_face::syntax::extra_newlines);
    });
    c.bench_function("syntax_set_load_syntect_defaults", |b| {
        b.iter(syntect::parsing::SyntaxSet::load_defaults_newlines);
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench_app_all, bench
}
criterion_main!(benches);
