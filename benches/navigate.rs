//! Navigation benchmark (issue 6: "on the largest corpus transcript, search, filter and jump each
//! answer within one frame"; one frame = 16 ms).
//!
//! Each action runs end to end the way a key press does: `App::update` with the action (and the
//! typed text for `/` and `f`), then `App::prepare` and one `ui::draw` into a 160×48
//! `TestBackend`. Heavy detail renders queued by `prepare` run off the frame in the app
//! (`spawn_blocking`), so here they run after the timed part. Resets between iterations (back
//! to the top, clearing the search or filter) are not timed.
//!
//! Sessions: the largest corpus transcript (`cc-v2.1.39-compaction-A-excerpt.jsonl`, 2 MB,
//! skipped when `../shared/corpus` is absent), loaded with `import::load_bytes` into
//! `App::headless` as the viewer does; then a recording generated in memory by `examples/gen.rs`
//! (`RAWPV_NAV_FRAMES` frames, default 4,000,000 ≈ 1M invocations; 0 skips it).
//!
//! Besides criterion's mean (of the first frame), the bench prints, over 20 individually timed
//! runs of each action, the median and max wall and on-CPU time to the first frame after the
//! key (on-CPU time from `/proc/thread-self/schedstat`, so the figure does not depend on the
//! other processes of a loaded machine), and the median wall time until a bounded search or
//! filter scan (`app/scan.rs`) is done, drawing a frame per step as the event loop does.
//!
//! Run: `cargo bench --bench navigate`; figures go to `BENCHMARKS.md` ("Navigation").

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use rawpv::action::Action;
use rawpv::app::{App, Msg};
use rawpv::import;

#[path = "../examples/gen.rs"]
#[allow(dead_code, clippy::all, clippy::pedantic)]
mod generator;

/// Individually timed runs of each action.
const RUNS: usize = 20;

const WIDTH: u16 = 160;
const HEIGHT: u16 = 48;

/// The largest file of the shared corpus.
const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/claude-code/cc-v2.1.39-compaction-A-excerpt.jsonl"
);

fn frames() -> u64 {
    std::env::var("RAWPV_NAV_FRAMES")
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(4_000_000)
}

/// On-CPU time of this thread in ns (Linux `/proc/thread-self/schedstat`); 0 elsewhere.
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// One measured navigation: `reset` (untimed) puts the app in its starting state, `run` is the
/// key press (timed together with `prepare` and the draw).
struct Nav {
    name: &'static str,
    reset: fn(&mut App),
    run: fn(&mut App),
}

fn frame(app: &mut App, term: &mut Terminal<TestBackend>) {
    app.prepare(Rect::new(0, 0, WIDTH, HEIGHT));
    let _ = term.draw(|f| rawpv::ui::draw(f, app));
}

fn act(app: &mut App, a: Action) {
    app.update(Msg::Action(a));
}

fn top(app: &mut App) {
    for _ in 0..3 {
        act(app, Action::Cancel);
    }
    act(app, Action::UnfoldAll);
    app.view.focus = rawpv::view::Pane::Feed;
    app.select(0);
}

/// The search typed: a word of the last turns of the corpus file, so the scan crosses most of
/// the session before its first match.
const QUERY: &str = "slice_builder";

fn navs() -> Vec<Nav> {
    vec![
        Nav {
            name: "search_typed_enter",
            reset: top,
            run: |app| {
                act(app, Action::StartSearch);
                app.type_text(QUERY);
                app.press(crossterm::event::KeyCode::Enter);
            },
        },
        Nav {
            name: "search_no_match",
            reset: top,
            run: |app| {
                act(app, Action::StartSearch);
                app.type_text("zq-no-such-text-xj");
                app.press(crossterm::event::KeyCode::Enter);
            },
        },
        Nav {
            name: "search_next",
            reset: |app| {
                if app.view.search.is_none() {
                    app.set_search(QUERY);
                }
            },
            run: |app| act(app, Action::SearchNext),
        },
        Nav {
            name: "filter_tool_status",
            reset: top,
            run: |app| {
                act(app, Action::StartFilter);
                app.type_text("tool:bash status:error");
                app.press(crossterm::event::KeyCode::Enter);
            },
        },
        Nav {
            name: "filter_text",
            reset: top,
            run: |app| {
                act(app, Action::StartFilter);
                app.type_text("error");
                app.press(crossterm::event::KeyCode::Enter);
            },
        },
        Nav {
            name: "next_error",
            reset: |app| {
                if app.view.message.is_some() {
                    app.select(0);
                }
            },
            run: |app| act(app, Action::NextError),
        },
        Nav {
            name: "next_prompt",
            reset: |app| {
                if app.view.message.is_some() {
                    app.select(0);
                }
            },
            run: |app| act(app, Action::NextPrompt),
        },
        Nav {
            name: "fold_toggle",
            reset: |_| {},
            run: |app| act(app, Action::ToggleFold),
        },
        Nav {
            name: "fold_all",
            reset: top,
            run: |app| act(app, Action::FoldAll),
        },
    ]
}

/// One timed run: the key press and its first frame (wall, on-CPU), and until a bounded scan
/// it started is done (wall; equal to the first when no scan was left pending).
struct Timing {
    wall: Duration,
    cpu: Duration,
    done: Duration,
}

/// Times `nav` once.
fn once(app: &mut App, term: &mut Terminal<TestBackend>, nav: &Nav) -> Timing {
    (nav.reset)(app);
    app.finish_scans();
    frame(app, term);
    app.run_jobs_inline();
    let (t, c) = (Instant::now(), cpu_ns());
    (nav.run)(app);
    frame(app, term);
    let (wall, cpu) = (
        t.elapsed(),
        Duration::from_nanos(cpu_ns().saturating_sub(c)),
    );
    // The rest of a bounded scan, a frame per step as the event loop does it.
    while app.scanning() {
        app.update(Msg::Work);
        frame(app, term);
    }
    let done = t.elapsed();
    app.run_jobs_inline();
    Timing { wall, cpu, done }
}

fn report(label: &str, app: &mut App, term: &mut Terminal<TestBackend>) {
    eprintln!(
        "navigate {label}: {} rows, {} invocations, {} prompts",
        app.session.items.len(),
        app.session.invocations.len(),
        app.view.folds.prompts.len()
    );
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    for nav in navs() {
        let runs: Vec<Timing> = (0..RUNS).map(|_| once(app, term, &nav)).collect();
        let sorted = |f: fn(&Timing) -> Duration| {
            let mut v: Vec<Duration> = runs.iter().map(f).collect();
            v.sort();
            v
        };
        let (wall, cpu, done) = (sorted(|t| t.wall), sorted(|t| t.cpu), sorted(|t| t.done));
        eprintln!(
            "navigate {label} {:<20} first frame: wall median {:>8.3} ms max {:>8.3} ms, cpu median {:>8.3} ms max {:>8.3} ms | done: median {:>9.3} ms | selected item {:?}",
            nav.name,
            ms(wall[RUNS / 2]),
            ms(wall[RUNS - 1]),
            ms(cpu[RUNS / 2]),
            ms(cpu[RUNS - 1]),
            ms(done[RUNS / 2]),
            app.view.selected_item(&app.session),
        );
    }
}

fn bench_app(c: &mut Criterion, label: &str, mut app: App) {
    let Ok(mut term) = Terminal::new(TestBackend::new(WIDTH, HEIGHT));
    report(label, &mut app, &mut term);
    let mut g = c.benchmark_group(format!("navigate_{label}"));
    g.sample_size(10);
    for nav in navs() {
        g.bench_function(nav.name, |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| once(&mut app, &mut term, &nav).wall)
                    .sum()
            });
        });
    }
    g.finish();
}

fn bench_corpus(c: &mut Criterion) {
    let Ok(bytes) = std::fs::read(CORPUS) else {
        eprintln!("navigate: {CORPUS} absent, corpus bench skipped");
        return;
    };
    let t = Instant::now();
    let app = App::headless(import::load_bytes(&bytes).items, "corpus");
    eprintln!(
        "navigate corpus: loaded in {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    bench_app(c, "corpus", app);
}

fn bench_generated(c: &mut Criterion) {
    let n = frames();
    if n == 0 {
        return;
    }
    let t = Instant::now();
    let mut buf = Vec::new();
    if let Err(e) = generator::generate(&mut buf, n, 1) {
        eprintln!("navigate: generate failed: {e}");
        return;
    }
    let app = App::headless(import::load_bytes(&buf).items, "generated");
    drop(buf);
    eprintln!(
        "navigate generated: {n} frames generated and loaded in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    bench_app(c, "generated", app);
}

criterion_group!(benches, bench_corpus, bench_generated);
criterion_main!(benches);
