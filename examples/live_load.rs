//! Measures the viewer under live load: RAWP NDJSON pushed through stdin into the real app loop
//! (`rawpv::app::run_loop`, the same loop, source task and bounded channel as `rawpv -`) while
//! every frame is drawn into a `CrosstermBackend` writing to a byte sink (the whole draw cost,
//! escape sequences included, without a terminal), and key presses are injected meanwhile.
//!
//! Prints to stderr: frames applied per second while the source is running, draws per second,
//! draw time, and for each injected key the time from injection to the end of the first draw
//! that shows it (p50 / p99 / max), plus the part of it spent before the loop took the key.
//!
//! A key counts as shown by the first draw that starts after the loop took it from the input
//! stream: the loop applies a key (`App::update`) as soon as it takes it, before doing anything
//! else, so every later draw reflects it.
//!
//! Usage (figures in BENCHMARKS.md "Live ingest while drawing" were taken this way):
//! `cargo build --release --example gen --example live_load`
//! `target/release/examples/gen --frames 200000 --seed 1 > /tmp/g200k.ndjson`
//! `target/release/examples/live_load < /tmp/g200k.ndjson`
//! Options: `--every MS` mean gap between keys (default 20; each gap is uniform in
//! `[MS/2, 3·MS/2)`, deterministic), `--size WxH` screen size (default 200x50).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use futures::StreamExt;
use ratatui::Frame;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Size;
use rawpv::app::{App, BackendScreen, CountingSink, Screen, SourceStatus, run_loop};
use rawpv::source::{CHANNEL_CAPACITY, NetConfig, SourceKind, spawn_source_with};
use rawpv::theme::Theme;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The allocator `rawpv` uses (`src/main.rs`), so the loop's timings are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The keys injected, in a cycle: moves (leaving follow mode), a search typed and committed,
/// next match, clearing it, and back to the tail (follow).
const KEYS: &[(KeyCode, &str)] = &[
    (KeyCode::Char('k'), "k"),
    (KeyCode::Char('k'), "k"),
    (KeyCode::Char('j'), "j"),
    (KeyCode::Char('/'), "/"),
    (KeyCode::Char('r'), "type"),
    (KeyCode::Char('e'), "type"),
    (KeyCode::Char('a'), "type"),
    (KeyCode::Char('d'), "type"),
    (KeyCode::Enter, "Enter (search)"),
    (KeyCode::Char('n'), "n"),
    (KeyCode::Esc, "Esc"),
    (KeyCode::Char('G'), "G"),
];

#[derive(Default)]
struct Probe {
    /// Keys taken by the loop and not drawn yet: (index in `KEYS`, injected at, taken at).
    pending: Vec<(usize, Instant, Instant)>,
    /// Per key: (index in `KEYS`, injection → end of draw, injection → taken by the loop).
    keys: Vec<(usize, Duration, Duration)>,
    /// Per draw: (end, draw time, frames applied so far).
    draws: Vec<(Instant, Duration, u64)>,
    /// Frames applied when the source ended, and when.
    ended: Option<(Instant, u64)>,
    bytes: u64,
}

struct MeasureScreen {
    inner: BackendScreen<CrosstermBackend<CountingSink>>,
    sink: CountingSink,
    probe: Arc<Mutex<Probe>>,
    done: Arc<AtomicBool>,
    last_draw: Duration,
}

impl Screen for MeasureScreen {
    fn size(&self) -> std::io::Result<Size> {
        self.inner.size()
    }

    fn draw(&mut self, f: impl FnOnce(&mut Frame<'_>)) -> std::io::Result<()> {
        let t = Instant::now();
        let r = self.inner.draw(f);
        self.last_draw = t.elapsed();
        r
    }

    fn write_raw(&mut self, seq: &str) -> std::io::Result<()> {
        self.inner.write_raw(seq)
    }

    fn suspend(&mut self) -> std::io::Result<()> {
        self.inner.suspend()
    }

    fn drew(&mut self, app: &App) {
        let now = Instant::now();
        let mut p = self.probe.lock().unwrap_or_else(PoisonError::into_inner);
        let frames = app.session().counts.frames;
        p.draws.push((now, self.last_draw, frames));
        for (k, injected, taken) in std::mem::take(&mut p.pending) {
            p.keys.push((k, now - injected, taken - injected));
        }
        p.bytes = self.sink.bytes();
        let ended = matches!(
            app.source_status(),
            SourceStatus::Ended | SourceStatus::Failed(_)
        );
        if ended && p.ended.is_none() {
            p.ended = Some((now, frames));
            self.done.store(true, Ordering::SeqCst);
        }
    }
}

struct Opts {
    every_ms: u64,
    width: u16,
    height: u16,
}

fn parse_args() -> Result<Opts, String> {
    let mut o = Opts {
        every_ms: 20,
        width: 200,
        height: 50,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v = args.next().ok_or_else(|| format!("{a} needs a value"))?;
        match a.as_str() {
            "--every" => o.every_ms = v.parse().map_err(|e| format!("--every: {e}"))?,
            "--size" => {
                let (w, h) = v.split_once('x').ok_or("--size WxH")?;
                o.width = w.parse().map_err(|e| format!("--size: {e}"))?;
                o.height = h.parse().map_err(|e| format!("--size: {e}"))?;
            }
            _ => return Err(format!("unknown option {a}")),
        }
    }
    Ok(o)
}

/// This thread's (ns on a CPU, ns waiting on the run queue) from `/proc/thread-self/schedstat`.
fn schedstat() -> Option<(u64, u64)> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut it = s.split_whitespace().map(|v| v.parse::<u64>().ok());
    Some((it.next()??, it.next()??))
}

/// `SplitMix64` for deterministic key gaps.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)].as_secs_f64() * 1000.0
}

fn summary(label: &str, mut v: Vec<Duration>) -> String {
    v.sort();
    format!(
        "{label}: n {} p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        v.len(),
        pct(&v, 0.5),
        pct(&v, 0.9),
        pct(&v, 0.99),
        pct(&v, 1.0)
    )
}

fn main() {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("live_load: {e}");
            std::process::exit(2);
        }
    };
    if std::io::stdin().is_terminal() {
        eprintln!("live_load: pipe a recording into stdin (see the module docs)");
        std::process::exit(2);
    }
    // The same runtime as `rawpv`: multi-threaded, the app loop on the main thread.
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("live_load: {e}");
            std::process::exit(2);
        }
    };
    let sched0 = schedstat();
    let probe = Arc::new(Mutex::new(Probe::default()));
    let done = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let result = rt.block_on(async {
        let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
        let cancel = CancellationToken::new();
        let source = spawn_source_with(SourceKind::Stdin, NetConfig::default(), tx, cancel.clone());
        let mut app = App::new("stdin", true);
        app.set_theme(Theme::dark());
        let (key_tx, key_rx) = futures::channel::mpsc::unbounded::<(usize, Instant)>();
        let events = key_rx.map({
            let probe = probe.clone();
            move |(k, injected)| {
                let taken = Instant::now();
                probe
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .pending
                    .push((k, injected, taken));
                Ok(Event::Key(KeyEvent::new(KEYS[k].0, KeyModifiers::NONE)))
            }
        });
        let injector = tokio::spawn({
            let done = done.clone();
            let every = opts.every_ms.max(1);
            async move {
                let mut rng = 1u64;
                let mut i = 0usize;
                while !done.load(Ordering::SeqCst) {
                    let gap = every / 2 + next(&mut rng) % every;
                    tokio::time::sleep(Duration::from_millis(gap)).await;
                    if done.load(Ordering::SeqCst) {
                        break;
                    }
                    if key_tx
                        .unbounded_send((i % KEYS.len(), Instant::now()))
                        .is_err()
                    {
                        break;
                    }
                    i += 1;
                }
                // Dropping the sender ends the input stream: the loop returns.
            }
        });
        let sink = CountingSink::default();
        let backend = CrosstermBackend::new(sink.clone());
        let inner = match BackendScreen::new(backend, opts.width, opts.height) {
            Ok(s) => s,
            Err(e) => return Err(e.to_string()),
        };
        let mut screen = MeasureScreen {
            inner,
            sink,
            probe: probe.clone(),
            done: done.clone(),
            last_draw: Duration::ZERO,
        };
        let r = run_loop(&mut app, &mut screen, events, rx).await;
        cancel.cancel();
        let _ = injector.await;
        let _ = source.await;
        r.map_err(|e| e.to_string())
    });
    let sched1 = schedstat();
    if let Err(e) = result {
        eprintln!("live_load: {e}");
        std::process::exit(1);
    }
    let p = probe.lock().unwrap_or_else(PoisonError::into_inner);
    let Some((end, frames)) = p.ended else {
        eprintln!("live_load: the source did not end");
        std::process::exit(1);
    };
    let secs = (end - start).as_secs_f64();
    let in_load: Vec<_> = p.draws.iter().filter(|d| d.0 <= end).collect();
    eprintln!(
        "{frames} frames applied in {secs:.2} s while drawing: {:.0} frames/s",
        frames as f64 / secs
    );
    eprintln!(
        "{} draws during the load: {:.1} draws/s; {:.1} KB written per draw",
        in_load.len(),
        in_load.len() as f64 / secs,
        p.bytes as f64 / 1024.0 / p.draws.len().max(1) as f64
    );
    eprintln!(
        "{}",
        summary("draw time", in_load.iter().map(|d| d.1).collect())
    );
    eprintln!(
        "{}",
        summary(
            "key → frame",
            p.keys.iter().map(|k| k.1).collect::<Vec<_>>()
        )
    );
    eprintln!(
        "{}",
        summary(
            "key → taken by the loop",
            p.keys.iter().map(|k| k.2).collect::<Vec<_>>()
        )
    );
    let mut labels: Vec<&str> = KEYS.iter().map(|k| k.1).collect();
    labels.dedup();
    labels.sort_unstable();
    labels.dedup();
    for l in labels {
        let v: Vec<Duration> = p
            .keys
            .iter()
            .filter(|k| KEYS[k.0].1 == l)
            .map(|k| k.1)
            .collect();
        eprintln!("  {}", summary(&format!("key → frame [{l}]"), v));
    }
    if let (Some(a), Some(b)) = (sched0, sched1) {
        eprintln!(
            "app loop thread: {:.2} s on a CPU, {:.2} s runnable but waiting for a CPU (machine load)",
            (b.0 - a.0) as f64 / 1e9,
            (b.1 - a.1) as f64 / 1e9
        );
    }
    let within = p
        .keys
        .iter()
        .filter(|k| k.1 <= Duration::from_millis(16))
        .count();
    eprintln!(
        "keys shown within 16 ms: {within} of {} ({:.1} %)",
        p.keys.len(),
        100.0 * within as f64 / p.keys.len().max(1) as f64
    );
}
