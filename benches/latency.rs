//! Live latency (issue 21 item 5): how soon a record written to a followed file, to stdin (a
//! pipe), or sent over WebSocket or SSE is on screen. The real sources (`source::follow`,
//! `source::stdin`, `source::net` against a loopback server written here) feed the real app
//! loop (`rawpv::app::run_loop`, live, following), which draws every frame into a
//! `CrosstermBackend` over a byte sink; a writer sends one new call every `--every` ms and
//! notes when; the screen's `drew` hook notes, for every call the draw showed first, the time
//! from its write to the end of that draw.
//!
//! Prints per source: records, p50 / p90 / p99 / max in ms, and the load average before and
//! after; the followed file twice, at `follow::POLL_INTERVAL` and at the 150 ms it polled at
//! before (the baseline, in the same run). Target: p99 under 100 ms (BENCHMARKS.md "Live
//! latency").
//!
//! Usage: `cargo bench --bench latency` (options after `--`: `--records N` per source, default
//! 500; `--every MS`, default 20; `--only file|stdin|ws|sse`).

// A bench that cannot set up (a temporary file, a loopback port) has nothing to measure.
#![allow(clippy::expect_used)]

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::SinkExt;
use ratatui::Frame;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Size;
use rawpv::app::{App, BackendScreen, CountingSink, Screen, run_loop};
use rawpv::source::{
    CHANNEL_CAPACITY, NetConfig, SourceKind, SourceMsg, follow, spawn_source_with,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The allocator `rawpv` uses (`src/main.rs`), so the loop's timings are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// When each record was written, and the latencies measured so far.
#[derive(Default)]
struct Probe {
    sent: Vec<Instant>,
    /// Calls already drawn.
    shown: usize,
    latencies: Vec<Duration>,
}

struct MeasureScreen {
    inner: BackendScreen<CrosstermBackend<CountingSink>>,
    probe: Arc<Mutex<Probe>>,
    /// The loop's input: dropped (the loop ends) once every record was drawn.
    stop: Option<futures::channel::mpsc::UnboundedSender<std::io::Result<crossterm::event::Event>>>,
    records: usize,
}

impl Screen for MeasureScreen {
    fn size(&self) -> std::io::Result<Size> {
        self.inner.size()
    }

    fn draw(&mut self, f: impl FnOnce(&mut Frame<'_>)) -> std::io::Result<()> {
        self.inner.draw(f)
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
        let calls = app.session().invocations.len();
        for k in p.shown..calls {
            if let Some(t) = p.sent.get(k).copied() {
                p.latencies.push(now - t);
            }
        }
        p.shown = p.shown.max(calls);
        if p.shown >= self.records {
            self.stop = None;
        }
    }
}

/// Record `k`: a new call (one feed row).
fn record(k: usize) -> String {
    format!(
        r#"{{"type":"tool.invoke.request","seq":{k},"payload":{{"invocation_id":"00000000-0000-4000-8000-{k:012}","tool_name":"Bash","input":{{"command":"step {k}"}}}}}}"#
    ) + "\n"
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Via {
    File,
    Stdin,
    Ws,
    Sse,
}

impl Via {
    fn name(self) -> &'static str {
        match self {
            Self::File => "followed file (-f)",
            Self::Stdin => "stdin (a pipe)",
            Self::Ws => "WebSocket (loopback)",
            Self::Sse => "SSE (loopback)",
        }
    }
}

/// Hands the records to `out`, one every `every`, noting each one's time in the probe as it
/// goes (the task at the other end writes it at once).
async fn write_records(
    probe: &Mutex<Probe>,
    records: usize,
    every: Duration,
    out: mpsc::Sender<String>,
) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    for k in 0..records {
        tick.tick().await;
        probe
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .sent
            .push(Instant::now());
        if out.send(record(k)).await.is_err() {
            return;
        }
    }
}

/// A loopback server: WebSocket (`ws`) or SSE; sends what `rx` gives, one frame each.
async fn serve(listener: tokio::net::TcpListener, ws: bool, mut rx: mpsc::Receiver<String>) {
    let Ok((mut stream, _)) = listener.accept().await else {
        return;
    };
    let _ = stream.set_nodelay(true);
    if ws {
        let Ok(mut ws) = tokio_tungstenite::accept_async(stream).await else {
            return;
        };
        while let Some(line) = rx.recv().await {
            let text = line.trim_end().to_owned();
            if ws
                .send(tokio_tungstenite::tungstenite::Message::text(text))
                .await
                .is_err()
            {
                return;
            }
        }
        return;
    }
    // SSE: read the request head, answer, then one event a record.
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let answer = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
    if stream.write_all(answer.as_bytes()).await.is_err() {
        return;
    }
    let mut id = 0u64;
    while let Some(line) = rx.recv().await {
        id += 1;
        let ev = format!("id: {id}\ndata: {}\n\n", line.trim_end());
        if stream.write_all(ev.as_bytes()).await.is_err() || stream.flush().await.is_err() {
            return;
        }
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(
        |_| "?".into(),
        |s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
    )
}

async fn measure(via: Via, records: usize, every: Duration, poll: Duration) -> Vec<Duration> {
    let probe = Arc::new(Mutex::new(Probe::default()));
    let (tx, rx) = mpsc::channel::<SourceMsg>(CHANNEL_CAPACITY);
    let cancel = CancellationToken::new();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("session.ndjson");
    // What the writer hands over goes out through the source's own medium at once.
    let (ltx, mut lrx) = mpsc::channel::<String>(records.max(1));
    let settle = match via {
        Via::File => {
            std::fs::write(&path, "").expect("write");
            // What `spawn_source_with` runs for `SourceKind::Follow`, at the poll asked for.
            let p = path.clone();
            tokio::spawn(async move { rawpv::source::follow::run(p, poll, &tx).await });
            tokio::spawn(async move {
                let Ok(mut f) = tokio::fs::OpenOptions::new().append(true).open(&path).await else {
                    return;
                };
                while let Some(line) = lrx.recv().await {
                    if f.write_all(line.as_bytes()).await.is_err() || f.flush().await.is_err() {
                        return;
                    }
                }
            });
            // The follower reads the empty file and goes live first.
            Duration::from_millis(200)
        }
        Via::Stdin => {
            let (theirs, mut ours) = tokio::io::duplex(1 << 20);
            tokio::spawn(async move { rawpv::source::stdin::run(theirs, &tx).await });
            tokio::spawn(async move {
                while let Some(line) = lrx.recv().await {
                    if ours.write_all(line.as_bytes()).await.is_err() || ours.flush().await.is_err()
                    {
                        return;
                    }
                }
            });
            Duration::from_millis(200)
        }
        Via::Ws | Via::Sse => {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            let addr = listener.local_addr().expect("addr");
            tokio::spawn(serve(listener, via == Via::Ws, lrx));
            let url = if via == Via::Ws {
                format!("ws://{addr}/ws")
            } else {
                format!("http://{addr}/events")
            };
            spawn_source_with(
                SourceKind::Url(url),
                NetConfig::default(),
                tx,
                cancel.clone(),
            );
            Duration::from_millis(300)
        }
    };
    let p = Arc::clone(&probe);
    let writer = tokio::spawn(async move {
        tokio::time::sleep(settle).await;
        write_records(&p, records, every, ltx).await;
    });
    let mut app = App::new(via.name(), true);
    app.set_theme(rawpv::theme::Theme::dark());
    let (stop, events) = futures::channel::mpsc::unbounded();
    let mut screen = MeasureScreen {
        inner: BackendScreen::new(CrosstermBackend::new(CountingSink::default()), 200, 50)
            .expect("screen"),
        probe: Arc::clone(&probe),
        stop: Some(stop),
        records,
    };
    let deadline = every * records as u32 + Duration::from_secs(30);
    let run = run_loop(&mut app, &mut screen, events, rx);
    if tokio::time::timeout(deadline, run).await.is_err() {
        eprintln!(
            "latency: {}: not every record was drawn in time",
            via.name()
        );
    }
    cancel.cancel();
    writer.abort();
    let mut p = probe.lock().unwrap_or_else(PoisonError::into_inner);
    std::mem::take(&mut p.latencies)
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)].as_secs_f64() * 1000.0
}

fn main() {
    let mut records = 500usize;
    let mut every = 20u64;
    let mut only: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--records" => records = args.next().and_then(|v| v.parse().ok()).unwrap_or(records),
            "--every" => every = args.next().and_then(|v| v.parse().ok()).unwrap_or(every),
            "--only" => only = args.next(),
            // `cargo bench` passes `--bench`.
            _ => {}
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "live latency: a new call every {every} ms, {records} per source, write → end of the draw showing it"
    );
    println!(
        "{:<28} {:>5} {:>8} {:>8} {:>8} {:>8}   load before → after",
        "source", "n", "p50 ms", "p90 ms", "p99 ms", "max ms"
    );
    // The baseline, measured in the same run: the follower's poll before issue 21 (150 ms).
    let runs = [
        (Via::File, follow::POLL_INTERVAL, ""),
        (
            Via::File,
            Duration::from_millis(150),
            " 150 ms poll (before)",
        ),
        (Via::Stdin, follow::POLL_INTERVAL, ""),
        (Via::Ws, follow::POLL_INTERVAL, ""),
        (Via::Sse, follow::POLL_INTERVAL, ""),
    ];
    for (via, poll, note) in runs {
        if let Some(o) = &only
            && !format!("{via:?}").eq_ignore_ascii_case(o)
        {
            continue;
        }
        let before = loadavg();
        let mut v = rt.block_on(measure(via, records, Duration::from_millis(every), poll));
        v.sort();
        let name = if note.is_empty() {
            via.name().to_owned()
        } else {
            format!("file{note}")
        };
        println!(
            "{:<28} {:>5} {:>8.1} {:>8.1} {:>8.1} {:>8.1}   {before} → {}",
            name,
            v.len(),
            pct(&v, 0.5),
            pct(&v, 0.9),
            pct(&v, 0.99),
            pct(&v, 1.0),
            loadavg()
        );
    }
}
