//! Opening a file as the viewer does, timed (issue 8: "first screen of any file in under 150 ms";
//! "full index of a 1 GB recording in under 2 s"; "resident memory under a quarter of the
//! file's size once indexed").
//!
//! Runs the real file source (`source::spawn_source`, `SourceKind::File`: the background reader
//! with its batches and progress) into an `App` and draws every 16 ms into a 160×48
//! `TestBackend`, like the app loop (batches are applied as they come; a draw happens when one is
//! due). Prints: time to the first drawn frame that shows rows, time until the whole file is
//! folded, the number of draws and their slowest time, and the process's peak and final resident
//! memory (from `/proc/self/status`).
//!
//! With `--interact` (issue 16: "opens, searches and scrolls with no stall over 50 ms on the
//! app task while it loads"): once the first screen is drawn, a search (`/cargo`, Enter) is
//! started, every pending scan step runs after each source message, and a move down and a page
//! down are pressed after every tenth; each of these updates is timed, and the slowest is printed
//! beside the slowest source message applied.
//!
//! With `--probe` (issue 22.9: "the probe fits within the 150 ms first-screen budget"): as
//! `rawpv FILE` does with `theme = "auto"`, the terminal is asked for its background colour
//! (`theme::probe_background`, OSC 11) after the source task started and before the first
//! draw, and the config's theme is resolved from the answer; the first screen's time includes
//! it, and the probe's own time and answer are printed. Run it in a terminal that answers (in
//! tmux, a `window-style` with a background: `tmux set -g window-style 'bg=#fdf6e3'`).
//!
//! Usage: `cargo run --release --example open_file -- /tmp/g1m.ndjson [--interact] [--probe]`

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use rawpv::action::Action;
use rawpv::app::{App, Msg};
use rawpv::source::{self, SourceKind, SourceMsg};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The allocator `rawpv` uses (`src/main.rs`), so memory and time are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `VmHWM` (peak) and `VmRSS` (current) in MB, from `/proc/self/status`.
fn rss_mb() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
            / 1024
    };
    (field("VmHWM:"), field("VmRSS:"))
}

#[tokio::main]
async fn main() {
    rawpv::no_transparent_huge_pages();
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: open_file FILE");
        std::process::exit(2);
    };
    let interact = std::env::args().any(|a| a == "--interact");
    let probe = std::env::args().any(|a| a == "--probe");
    let size = std::fs::metadata(&path).map_or(0, |m| m.len());
    let start = Instant::now();
    let kind = SourceKind::File(path.clone().into());
    // As `app::run` sets up a saved file: outputs read back from it, no row cap.
    let mut app = App::new(kind.label(), false);
    app.session_mut().backing = Some(std::sync::Arc::from(std::path::Path::new(&path)));
    app.session_mut().max_items = Some(0);
    let (tx, mut rx) = mpsc::channel(source::CHANNEL_CAPACITY);
    let cancel = CancellationToken::new();
    let _task = source::spawn_source(kind, tx, cancel.clone());
    let mut asked = None;
    if probe {
        let mut config = rawpv::config::Config::default();
        let _ = config.pick_theme(false, || {
            let p = rawpv::theme::probe_background(rawpv::theme::PROBE_TIMEOUT);
            asked = Some(p.clone());
            p
        });
        app.configure(&config);
    }
    let mut term = Terminal::new(TestBackend::new(160, 48)).expect("test backend");
    let area = Rect::new(0, 0, 160, 48);
    let mut first_screen = None;
    let mut next_draw = Instant::now();
    let (mut draws, mut slowest) = (0u32, Duration::ZERO);
    let mut draw = |app: &mut App| {
        let t = Instant::now();
        app.prepare(area);
        app.run_jobs_inline();
        term.draw(|f| app.draw(f)).expect("draw");
        slowest = slowest.max(t.elapsed());
        draws += 1;
    };
    let mut slowest_update = Duration::ZERO;
    // `--interact`: the slowest search key, scan step or move while loading.
    let (mut slowest_input, mut inputs, mut messages, mut searched) =
        (Duration::ZERO, 0u32, 0u64, false);
    let key = |code: KeyCode| {
        Msg::Term(crossterm::event::Event::Key(KeyEvent::new(
            code,
            KeyModifiers::NONE,
        )))
    };
    while let Some(m) = rx.recv().await {
        let end = matches!(m, SourceMsg::Eof | SourceMsg::Failed(_));
        if let SourceMsg::Failed(e) = &m {
            eprintln!("failed: {e}");
        }
        let t = Instant::now();
        app.update(Msg::Source(m));
        slowest_update = slowest_update.max(t.elapsed());
        if interact && first_screen.is_some() {
            let mut timed = |app: &mut App, msg: Msg| {
                let t = Instant::now();
                app.update(msg);
                slowest_input = slowest_input.max(t.elapsed());
                inputs += 1;
            };
            if !searched {
                searched = true;
                timed(&mut app, Msg::Action(Action::StartSearch));
                for c in "cargo".chars() {
                    timed(&mut app, key(KeyCode::Char(c)));
                }
                timed(&mut app, key(KeyCode::Enter));
            }
            if app.scanning() {
                timed(&mut app, Msg::Work);
            }
            messages += 1;
            if messages % 10 == 0 {
                timed(&mut app, Msg::Action(Action::MoveDown));
                timed(&mut app, Msg::Action(Action::PageDown));
            }
        }
        if Instant::now() >= next_draw || end {
            draw(&mut app);
            next_draw = Instant::now() + Duration::from_millis(16);
            if first_screen.is_none() && !app.session().items.is_empty() {
                first_screen = Some(start.elapsed());
            }
        }
        if end {
            break;
        }
    }
    let indexed = start.elapsed();
    let (peak, now) = rss_mb();
    let mb = size as f64 / 1e6;
    println!("file            {path} ({mb:.0} MB)");
    println!(
        "first screen    {:.1} ms",
        first_screen.map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
    );
    if let Some(p) = &asked {
        println!(
            "theme probe     {:.1} ms: {}",
            p.took.as_secs_f64() * 1e3,
            match (p.light, p.background_hex()) {
                (Some(l), Some(bg)) => format!("{} ({bg})", if l { "light" } else { "dark" }),
                _ => format!("no answer ({})", p.error.as_deref().unwrap_or("?")),
            }
        );
    }
    println!(
        "fully indexed   {:.2} s ({:.0} MB/s), {} frames, {} invocations, {} rows",
        indexed.as_secs_f64(),
        mb / indexed.as_secs_f64(),
        app.session().counts.frames,
        app.session().counts.invocations,
        app.session().items.len()
    );
    println!(
        "draws           {draws}, slowest {:.1} ms; slowest source message applied {:.1} ms",
        slowest.as_secs_f64() * 1e3,
        slowest_update.as_secs_f64() * 1e3
    );
    if interact {
        println!(
            "while loading   {inputs} search keys, scan steps and moves; slowest {:.1} ms",
            slowest_input.as_secs_f64() * 1e3
        );
    }
    println!(
        "memory          peak {peak} MB ({:.2}x the file), now {now} MB ({:.2}x)",
        peak as f64 / mb,
        now as f64 / mb
    );
    cancel.cancel();
}
