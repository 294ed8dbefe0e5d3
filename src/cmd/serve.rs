//! `rawpv serve FILE…`: recordings as one live WebSocket and SSE stream (see `crate::serve` for
//! the wire rules). Warnings and the listening address go to stderr; runs until Ctrl-C
//! (SIGINT) or SIGTERM, which close every client stream normally (exit 0).
//!
//! Who calls it: `main.rs` for `Command::Serve`.
//!
//! * Finished recordings (no `--follow`): each file is loaded whole; several are merged by
//!   timestamp into one recording (`crate::serve::Recording::merged`), then played paced by the
//!   timestamps. A file (or all of them) holding no frame is refused (exit 2).
//! * `--follow`: each file is followed (`crate::source::follow::run_until`, the reader of
//!   `rawpv -f`) and its frames are pushed to one live `crate::serve::Stream` as they are decoded,
//!   in arrival order, no pacing. A truncated or replaced file is read again from its start and
//!   its frames are pushed as new frames (new indexes; the old ones stay as served), with a
//!   warning. A file that fails (an I/O error) is reported and the others go on; when all have
//!   failed the stream ends and the command exits 1. On a stop signal each file is read to its
//!   end once more and its decoder finished, then the stream ends, so every record written
//!   before the signal reaches the clients that are connected.
//! * Sessions: with several files, a frame naming no session gets its input's
//!   (`crate::serve::inputs`); a single file's frames are served as they are.
//!
//! Invariants: the same file given twice is refused (its frames would be served twice); the
//! token never reaches stderr or the stream.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::import::Decoded;
use crate::serve::inputs::{Sessions, input_session_id};
use crate::serve::{Input, Recording, ServeConfig, Stream, serve_stream};
use crate::source::{SourceKind, SourceMsg, SourceState, follow, load_input, net::read_token_file};

/// Malformed lines of a followed file named one by one on stderr; past it they are counted.
const MALFORMED_SHOWN: u64 = 10;
/// Longest wait, after a stop signal, for the followed files' last read.
const LAST_READ: Duration = Duration::from_secs(5);

/// The command's options (from `cli::Command::Serve`).
#[derive(Debug, Clone)]
pub struct Options {
    pub files: Vec<PathBuf>,
    pub follow: bool,
    pub retain_bytes: usize,
    pub listen: String,
    pub speed: f64,
    pub token_file: Option<PathBuf>,
    pub max_frame_bytes: usize,
    pub max_clients: usize,
}

fn shown(p: &std::path::Path) -> String {
    crate::render::text::visible(&p.display().to_string())
}

/// Runs the command; returns the exit code (2 on bad options, when a file cannot be read or
/// (without `--follow`) holds no frame to serve, or when the address is taken; 1 when every
/// followed file failed).
pub async fn run(opts: Options) -> i32 {
    if !(opts.speed.is_finite() && opts.speed > 0.0) {
        eprintln!(
            "rawpv: --speed must be a number above 0 (got {})",
            opts.speed
        );
        return 2;
    }
    let addr: SocketAddr = match opts.listen.parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!(
                "rawpv: --listen {:?} is not an address like 127.0.0.1:7878: {e}",
                opts.listen
            );
            return 2;
        }
    };
    if opts.files.is_empty() {
        eprintln!("rawpv: serve needs a file to serve");
        return 2;
    }
    let mut seen = std::collections::HashMap::new();
    for f in &opts.files {
        let canon = std::fs::canonicalize(f).unwrap_or_else(|_| f.clone());
        if let Some(first) = seen.insert(canon, f) {
            eprintln!(
                "rawpv: {} and {} are the same file (its frames would be served twice)",
                shown(first),
                shown(f)
            );
            return 2;
        }
    }
    if !addr.ip().is_loopback() {
        eprintln!(
            "rawpv: warning: listening on {addr}, which is not loopback: other machines can connect{}",
            if opts.token_file.is_some() {
                ""
            } else {
                " without a token (use --token-file)"
            }
        );
    }
    let mut warnings = Vec::new();
    let token = match &opts.token_file {
        Some(p) => match read_token_file(p, &mut warnings) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("rawpv: {e}");
                return 2;
            }
        },
        None => None,
    };
    for w in warnings.drain(..) {
        eprintln!("rawpv: warning: {w}");
    }
    let cfg = ServeConfig {
        speed: opts.speed,
        token,
        max_clients: opts.max_clients,
        log_clients: true,
        ..ServeConfig::default()
    };
    if opts.follow {
        run_follow(&opts, addr, cfg).await
    } else {
        run_finished(&opts, addr, cfg).await
    }
}

async fn bind(addr: SocketAddr) -> Option<tokio::net::TcpListener> {
    match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => Some(l),
        Err(e) => {
            eprintln!("rawpv: cannot listen on {addr}: {e}");
            None
        }
    }
}

/// The files, as stderr names them: `a.jsonl` or `2 files (a.jsonl, b.jsonl)`.
fn files_label(files: &[PathBuf]) -> String {
    let names: Vec<String> = files.iter().map(|p| shown(p)).collect();
    match names.as_slice() {
        [one] => one.clone(),
        many => format!("{} files ({})", many.len(), many.join(", ")),
    }
}

fn urls(bound: SocketAddr) -> String {
    format!("WebSocket ws://{bound}/ws, SSE http://{bound}/events")
}

/// SIGINT or SIGTERM; its name.
async fn stop_signal() -> &'static str {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "SIGINT",
        () = term => "SIGTERM",
    }
}

/// Serves until a stop signal; then the clients are closed normally.
async fn serve_until_signal(
    listener: tokio::net::TcpListener,
    stream: Stream,
    cfg: ServeConfig,
) -> i32 {
    let shutdown = CancellationToken::new();
    let mut server = tokio::spawn(serve_stream(
        listener,
        stream.clone(),
        cfg,
        shutdown.clone(),
    ));
    tokio::select! {
        r = &mut server => return served(r),
        sig = stop_signal() => eprintln!("rawpv: {sig}: closing the client streams"),
    }
    stream.end();
    shutdown.cancel();
    served(server.await)
}

fn served(r: Result<std::io::Result<()>, tokio::task::JoinError>) -> i32 {
    match r {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            eprintln!("rawpv: serve: {e}");
            2
        }
        Err(e) => {
            eprintln!("rawpv: serve: {e}");
            2
        }
    }
}

async fn run_finished(opts: &Options, addr: SocketAddr, cfg: ServeConfig) -> i32 {
    let mut loaded = Vec::with_capacity(opts.files.len());
    for f in &opts.files {
        match load_input(&SourceKind::File(f.clone())).await {
            Ok(l) => loaded.push(l),
            Err(e) => {
                eprintln!("rawpv: {e}");
                return 2;
            }
        }
    }
    let (rec, warnings) = if let [one] = loaded.as_slice() {
        Recording::from_loaded(one, opts.max_frame_bytes)
    } else {
        let labels: Vec<String> = opts.files.iter().map(|p| p.display().to_string()).collect();
        let sessions: Vec<String> = opts.files.iter().map(|p| input_session_id(p)).collect();
        let inputs: Vec<Input<'_>> = loaded
            .iter()
            .enumerate()
            .map(|(i, l)| Input {
                label: &labels[i],
                session: &sessions[i],
                loaded: l,
            })
            .collect();
        Recording::merged(&inputs, opts.max_frame_bytes)
    };
    if loaded.len() > 1 {
        for (f, l) in opts.files.iter().zip(&loaded) {
            if !l.items.iter().any(|d| matches!(d, Decoded::Frame(_))) {
                eprintln!(
                    "rawpv: warning: {} has no frame to serve (not a session recording?)",
                    shown(f)
                );
            }
        }
    }
    drop(loaded);
    for w in &warnings {
        eprintln!("rawpv: warning: {w}");
    }
    if rec.is_empty() {
        // Clients would connect and get nothing but an end: say so instead of serving it.
        eprintln!(
            "rawpv: {} {} no frame to serve (not a session recording?)",
            files_label(&opts.files),
            if opts.files.len() == 1 { "has" } else { "have" }
        );
        return 2;
    }
    let Some(listener) = bind(addr).await else {
        return 2;
    };
    let bound = listener.local_addr().unwrap_or(addr);
    eprintln!(
        "rawpv: serving {} frames from {} on {bound} ({})",
        rec.len(),
        files_label(&opts.files),
        urls(bound)
    );
    serve_until_signal(listener, rec.into_stream(), cfg).await
}

async fn run_follow(opts: &Options, addr: SocketAddr, cfg: ServeConfig) -> i32 {
    // A missing or unreadable file is refused now, not reported after the server started.
    for f in &opts.files {
        if let Err(e) = std::fs::File::open(f) {
            eprintln!("rawpv: cannot read {}: {e}", shown(f));
            return 2;
        }
    }
    let Some(listener) = bind(addr).await else {
        return 2;
    };
    let bound = listener.local_addr().unwrap_or(addr);
    eprintln!(
        "rawpv: following {} on {bound} ({})",
        files_label(&opts.files),
        urls(bound)
    );
    let stream = Stream::live(opts.retain_bytes);
    let stop = CancellationToken::new();
    let several = opts.files.len() > 1;
    let (failed_tx, mut failed_rx) = mpsc::channel::<()>(opts.files.len());
    let mut relays = Vec::new();
    for f in &opts.files {
        let (tx, rx) = mpsc::channel(crate::source::CHANNEL_CAPACITY);
        let (path, stop) = (f.clone(), stop.clone());
        tokio::spawn(async move {
            follow::run_until(path, follow::POLL_INTERVAL, &tx, &stop).await;
        });
        let sessions = several.then(|| Sessions::new(input_session_id(f)));
        let (stream, label, failed_tx) = (stream.clone(), shown(f), failed_tx.clone());
        let max = opts.max_frame_bytes;
        relays.push(tokio::spawn(async move {
            let ok = relay(rx, stream, label, sessions, max).await;
            if !ok {
                let _ = failed_tx.send(()).await;
            }
        }));
    }
    drop(failed_tx);
    let inputs = opts.files.len();
    let all_failed = async move {
        let mut n = 0;
        while failed_rx.recv().await.is_some() {
            n += 1;
            if n == inputs {
                return;
            }
        }
        std::future::pending::<()>().await;
    };
    let shutdown = CancellationToken::new();
    let mut server = tokio::spawn(serve_stream(
        listener,
        stream.clone(),
        cfg,
        shutdown.clone(),
    ));
    let mut code = 0;
    tokio::select! {
        r = &mut server => return served(r),
        sig = stop_signal() => eprintln!("rawpv: {sig}: reading the files to their end, then closing the client streams"),
        () = all_failed => {
            eprintln!("rawpv: every followed file failed; closing the client streams");
            code = 1;
        }
    }
    stop.cancel();
    let last = futures::future::join_all(relays);
    if tokio::time::timeout(LAST_READ, last).await.is_err() {
        eprintln!(
            "rawpv: warning: the last read of the files took over {} s; closing anyway",
            LAST_READ.as_secs()
        );
    }
    stream.end();
    eprintln!("rawpv: served {} frames", stream.len());
    shutdown.cancel();
    match served(server.await) {
        0 => code,
        c => c,
    }
}

/// Pushes the frames of one followed file to `stream` as they arrive; `false` when the file
/// failed (said on stderr).
async fn relay(
    mut rx: mpsc::Receiver<SourceMsg>,
    stream: Stream,
    label: String,
    mut sessions: Option<Sessions>,
    max_frame_bytes: usize,
) -> bool {
    let mut malformed = 0u64;
    let mut ready = Vec::new();
    let ok = loop {
        let Some(msg) = rx.recv().await else {
            break true;
        };
        match msg {
            SourceMsg::Batch(items) => {
                for d in items {
                    match d {
                        Decoded::Frame(f) => match &mut sessions {
                            Some(s) => s.frame(*f, &mut ready),
                            None => ready.push(*f),
                        },
                        Decoded::Malformed(e) => {
                            malformed += 1;
                            if malformed <= MALFORMED_SHOWN {
                                eprintln!("rawpv: warning: {label}: not served: {e}");
                            } else if malformed == MALFORMED_SHOWN + 1 {
                                eprintln!(
                                    "rawpv: warning: {label}: more malformed lines; counted only"
                                );
                            }
                        }
                        Decoded::Finding(_) => {}
                    }
                }
                if let Some(s) = &mut sessions {
                    s.batch_end(&mut ready);
                }
                for f in ready.drain(..) {
                    if let Some((_, Some(w))) = stream.push(&f, max_frame_bytes) {
                        eprintln!("rawpv: warning: {label}: {w}");
                    }
                }
            }
            SourceMsg::State(SourceState::Restarted { reason }) => {
                eprintln!(
                    "rawpv: warning: {label}: {reason}; its frames are served again from its \
                     start, as new frames after frame {}",
                    stream.len()
                );
            }
            SourceMsg::State(_) | SourceMsg::Format(_) | SourceMsg::Input(_) => {}
            SourceMsg::Eof => break true,
            SourceMsg::Failed(e) => {
                eprintln!("rawpv: {label}: {e}; no longer followed");
                break false;
            }
        }
    };
    if malformed > 0 {
        eprintln!("rawpv: {label}: {malformed} malformed line(s) were not served");
    }
    ok
}
