//! `rawpv serve`: recordings as a live stream over WebSocket and SSE, for testing Edge Node
//! clients (rawpv itself included) without a master, and as a relay of files still being
//! written (`--follow`: a Claude Code transcript being written becomes a live RAWP stream).
//!
//! Who calls it: `crate::cmd::serve` (the command) and tests (in-process, on an ephemeral port).
//! What is served is a [`Stream`] (`serve/stream.rs`): a finished recording ([`Recording`], one
//! file or several merged by `serve/inputs.rs`), or a live stream the command pushes frames to.
//!
//! Wire (the same rules `crate::source::net` reads; \[ours\]):
//! * `GET /ws` (or any path with `Upgrade: websocket`): one RAWP JSON frame ([`Frame::to_json`])
//!   per text message, its 1-based index in the stream in `metadata.stream_index`
//!   (`source::net::STREAM_INDEX`, the same number as SSE's `id:`); after the last frame a close frame with
//!   code 1000. Clients resume from the last index received, so frames skipped by
//!   `max_frame_bytes` never shift the position (counting received messages doubled frames on
//!   resume, issue 14.5); the client removes the key again.
//! * `GET /events` or `/sse`: `text/event-stream`; each frame is an event with `id:` = its 1-based
//!   frame index and `data:` = the frame's JSON; after the last frame `event: end`, then the
//!   response ends.
//! * Indexes are given once, when a frame enters the stream, and never change (a live stream is
//!   append-only): the same index is the same frame for every client and every reconnect.
//! * Resume: `?after=N` or `Last-Event-ID: N` starts with frame `N + 1` (on a live stream, a
//!   client past the end waits for it); a value that is not a whole number is answered with
//!   HTTP 400 and a one-line reason. A live stream keeps only its newest frames
//!   (`--retain-bytes`): a connection without `after` (or `after=0`) starts with the oldest kept,
//!   and a resume from before it is answered HTTP 410 with the oldest index kept; a client that
//!   falls so far behind that its next frame is dropped is closed abnormally (WebSocket 1008, an
//!   SSE response without `event: end`), so it reconnects and is told.
//! * Auth: with a token configured, `Authorization: Bearer <token>` is required (401 otherwise).
//! * Pacing: a finished recording: frame *i* goes out `(ts_i − ts_{i−1}) / speed` after frame
//!   *i − 1*, each gap capped at [`MAX_IDLE`]; frames without a timestamp (or going back in
//!   time) go out at once. A live stream is not paced: the frames it holds when a client
//!   connects go out at once, then each as it arrives.
//! * Heartbeat: while a stream waits between frames (or at the live end), a WebSocket Ping (the
//!   server also reads, so client Pings are answered) or an SSE `:` comment goes out every
//!   `heartbeat`, so an idle recording does not trip a client's read timeout.
//! * Ending ([`serve_stream`]): when shutdown is asked for, new streams are refused (HTTP 503),
//!   a finished recording's clients are closed normally at once (before its end), and a live
//!   stream's clients are sent every frame it holds (the command ends it after the files' last
//!   read) and closed normally; the server waits up to `shutdown_grace` for them.
//! * At most `max_clients` streams at once (503 past it); frames over `max_frame_bytes` are
//!   skipped (they keep their index, so ids never shift).
//! * Connections: a request head must arrive within 10 s, a write to a client that stopped
//!   reading fails after 20 s, the open connections are capped (`serve/gate.rs`), and every
//!   answer but a WebSocket upgrade closes its connection (no idle keep-alive).
//! * Without a token, a request must name this server in `Host` (a loopback name or address, or
//!   the listen address) and, when it has an `Origin`, come from a loopback origin: otherwise
//!   any web page in the user's browser could open `ws://127.0.0.1:7878/ws` and read the stream,
//!   and DNS rebinding could reach `/events` (issue 14.4). Refused with HTTP 403.
//!
//! Invariants: the served data never contains the token; each connection has its own cursor
//! (position, pacing) over the one shared stream.
//!
//! [`Frame::to_json`]: crate::protocol::Frame::to_json

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::extract::{FromRequestParts, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::import::{Decoded, Loaded};
use crate::source::Token;

mod gate;
pub mod inputs;
pub mod stream;

pub use stream::Stream;
use stream::{Read, Served};

/// Longest pause between two frames, after the speed factor.
pub const MAX_IDLE: Duration = Duration::from_secs(2);
/// Default [`ServeConfig::heartbeat`]: 15 s (a quarter of the client's default read timeout,
/// `crate::source::net::READ_TIMEOUT`).
pub const HEARTBEAT: Duration = Duration::from_secs(15);
/// Default [`ServeConfig::shutdown_grace`]: how long a stopping server waits for its clients
/// to take the rest of the stream.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The frames of a finished recording (one file, or several merged), serialised once.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    frames: Vec<Served>,
}

/// One input of [`Recording::merged`].
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// How warnings name it (the path as given).
    pub label: &'a str,
    /// The session of its frames that name none ([`inputs::input_session_id`]).
    pub session: &'a str,
    pub loaded: &'a Loaded,
}

impl Recording {
    /// Builds a recording from decoded input. Returns it with warnings for the user (malformed
    /// lines not served, frames over `max_frame_bytes` skipped).
    pub fn from_loaded(loaded: &Loaded, max_frame_bytes: usize) -> (Self, Vec<String>) {
        let mut frames = Vec::new();
        let mut warnings = Vec::new();
        let mut malformed = 0u64;
        for d in &loaded.items {
            match d {
                Decoded::Frame(f) => {
                    let (s, w) = stream::served(f, frames.len() + 1, max_frame_bytes);
                    frames.push(s);
                    warnings.extend(w);
                }
                Decoded::Malformed(_) => malformed += 1,
                Decoded::Finding(_) => {}
            }
        }
        if malformed > 0 {
            warnings.push(format!(
                "{malformed} malformed line(s) in the recording are not served"
            ));
        }
        (Self { frames }, warnings)
    }

    /// Several recordings as one stream, merged by timestamp; each frame naming no session gets
    /// its input's (see [`inputs`] for both rules).
    pub fn merged(inputs: &[Input<'_>], max_frame_bytes: usize) -> (Self, Vec<String>) {
        let mut warnings = Vec::new();
        let mut per_input: Vec<Vec<crate::protocol::Frame>> = Vec::with_capacity(inputs.len());
        for input in inputs {
            let mut sessions = inputs::Sessions::new(input.session.to_owned());
            let mut frames = Vec::new();
            let mut malformed = 0u64;
            for d in &input.loaded.items {
                match d {
                    Decoded::Frame(f) => sessions.frame((**f).clone(), &mut frames),
                    Decoded::Malformed(_) => malformed += 1,
                    Decoded::Finding(_) => {}
                }
            }
            sessions.batch_end(&mut frames);
            if malformed > 0 {
                warnings.push(format!(
                    "{malformed} malformed line(s) in {} are not served",
                    crate::render::text::visible(input.label)
                ));
            }
            per_input.push(frames);
        }
        let keys: Vec<Vec<Option<i64>>> = per_input
            .iter()
            .map(|fs| {
                fs.iter()
                    .map(|f| f.envelope.timestamp.map(|t| t.0))
                    .collect()
            })
            .collect();
        let mut frames = Vec::new();
        for (i, pos) in inputs::interleave(&keys) {
            let (s, w) = stream::served(&per_input[i][pos], frames.len() + 1, max_frame_bytes);
            frames.push(s);
            warnings.extend(w);
        }
        (Self { frames }, warnings)
    }

    /// Number of frames (including skipped ones).
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The recording as a finished, paced [`Stream`].
    pub fn into_stream(self) -> Stream {
        Stream::finished(self.frames)
    }
}

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Playback speed factor (> 0) of a finished recording (a live stream is not paced).
    pub speed: f64,
    pub token: Option<Token>,
    pub max_clients: usize,
    /// While a stream is idle between frames, a WebSocket Ping or an SSE `:` comment goes out
    /// this often, so clients' read timeouts do not fire on a quiet recording. Default
    /// [`HEARTBEAT`].
    pub heartbeat: Duration,
    /// A write that makes no progress this long (the client stopped reading) fails and frees
    /// the connection and its stream slot. Default [`gate::WRITE_TIMEOUT`] (20 s).
    pub write_timeout: Duration,
    /// Once shutdown is asked for, how long the server waits for its clients to take the rest
    /// of a live stream and the close; then it returns anyway. Default [`SHUTDOWN_GRACE`].
    pub shutdown_grace: Duration,
    /// Say on stderr when a client stream starts and ends (`rawpv serve` does; tests and
    /// embedders need not).
    pub log_clients: bool,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            speed: 1.0,
            token: None,
            max_clients: 64,
            heartbeat: HEARTBEAT,
            write_timeout: gate::WRITE_TIMEOUT,
            shutdown_grace: SHUTDOWN_GRACE,
            log_clients: false,
        }
    }
}

#[derive(Debug)]
struct Shared {
    stream: Stream,
    cfg: ServeConfig,
    clients: Arc<Semaphore>,
    /// The address the server listens on (a `Host` naming it is ours).
    local: std::net::SocketAddr,
    /// Shutdown was asked for: streams end (see [`serve_stream`]).
    stopping: CancellationToken,
    /// Client streams started (numbers them in the log).
    started: std::sync::atomic::AtomicU64,
}

/// Serves the finished recording `rec` on `listener` until `shutdown` fires (see
/// [`serve_stream`]).
///
/// # Errors
/// The accept loop's I/O error.
pub async fn serve(
    listener: tokio::net::TcpListener,
    rec: Recording,
    cfg: ServeConfig,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    serve_stream(listener, rec.into_stream(), cfg, shutdown).await
}

/// Serves `stream` on `listener` until `shutdown` fires. Then no new stream starts (HTTP 503);
/// a client of a finished recording is closed normally at once; a client of a live stream is
/// sent every frame the stream holds and then closed normally (end the stream with
/// [`Stream::end`] before firing `shutdown`, once the last frames are pushed). Returns when
/// every client is done, or after `shutdown_grace`.
///
/// # Errors
/// The accept loop's I/O error.
pub async fn serve_stream(
    listener: tokio::net::TcpListener,
    stream: Stream,
    cfg: ServeConfig,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let local = listener.local_addr()?;
    let write_timeout = cfg.write_timeout;
    let grace = cfg.shutdown_grace;
    let slots = cfg.max_clients.max(1);
    let shared = Arc::new(Shared {
        clients: Arc::new(Semaphore::new(slots)),
        stream,
        cfg,
        local,
        stopping: CancellationToken::new(),
        started: std::sync::atomic::AtomicU64::new(0),
    });
    let app = Router::new()
        .fallback(handle)
        .layer(axum::middleware::map_response(one_response_per_connection))
        .with_state(shared.clone());
    let stop_accepting = CancellationToken::new();
    let server = axum::serve(gate::Gated::new(listener, write_timeout)?, app)
        .with_graceful_shutdown(stop_accepting.clone().cancelled_owned());
    let mut server = std::pin::pin!(std::future::IntoFuture::into_future(server));
    tokio::select! {
        r = &mut server => return r,
        () = shutdown.cancelled() => {}
    }
    shared.stopping.cancel();
    // Every stream slot back: every client has had the rest and its close.
    let all = u32::try_from(slots).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(grace, shared.clients.acquire_many(all)).await;
    stop_accepting.cancel();
    // An SSE response still being written finishes here; a client that does not read is not
    // waited for.
    let _ = tokio::time::timeout(Duration::from_secs(1), server).await;
    Ok(())
}

/// Every answer but a WebSocket upgrade closes its connection (`Connection: close`): idle
/// keep-alive connections after a 404 filled every connection slot and locked real clients out
/// (second attack of issue 14); a client makes one request per connection (a stream, or an
/// error it reads and reconnects after).
async fn one_response_per_connection(mut res: Response) -> Response {
    if res.status() != StatusCode::SWITCHING_PROTOCOLS {
        res.headers_mut().insert(
            header::CONNECTION,
            axum::http::HeaderValue::from_static("close"),
        );
    }
    res
}

/// The delay before a frame stamped `ts` when the previous one was stamped `prev`.
pub fn gap(prev: Option<i64>, ts: Option<i64>, speed: f64) -> Duration {
    match (prev, ts) {
        (Some(a), Some(b)) if b > a => {
            let secs = (b - a) as f64 / 1000.0 / speed;
            Duration::try_from_secs_f64(secs).map_or(MAX_IDLE, |d| d.min(MAX_IDLE))
        }
        _ => Duration::ZERO,
    }
}

/// `?after=N`, else `Last-Event-ID: N`, else 0.
///
/// # Errors
/// A one-line reason (for an HTTP 400) when the value given is not a frame count (a whole
/// number, 0 or more): a typo must not silently replay from the start.
fn resume_after(query: Option<&str>, headers: &HeaderMap) -> Result<usize, String> {
    let count = |what: &str, v: &str| {
        v.trim().parse::<usize>().map_err(|_| {
            format!(
                "{what} must be a frame count (a whole number, 0 or more), not {:?}",
                crate::render::text::visible(&crate::fmt::truncate(v, 40))
            )
        })
    };
    if let Some(v) = query.and_then(|q| {
        q.split('&')
            .map(|kv| kv.split_once('=').unwrap_or((kv, "")))
            .find(|(k, _)| *k == "after")
            .map(|(_, v)| v)
    }) {
        return count("?after", v);
    }
    match headers.get("last-event-id") {
        None => Ok(0),
        Some(v) => match v.to_str() {
            Ok(v) => count("Last-Event-ID", v),
            Err(_) => Err("Last-Event-ID must be a frame count (a whole number, 0 or more)".into()),
        },
    }
}

fn authorized(token: Option<&Token>, headers: &HeaderMap) -> bool {
    let Some(token) = token else {
        return true;
    };
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .is_some_and(|(_, t)| token.matches(t.trim()))
}

/// Whether `host` (a `Host` header or an origin's authority, port included or not) names a
/// loopback address, `localhost`, or the address the server listens on.
fn is_own_host(host: &str, local: std::net::SocketAddr) -> bool {
    let name = match host.rsplit_once(':') {
        // `[::1]:7878`, `127.0.0.1:7878`, `localhost:7878`; a bare IPv6 literal has no brackets.
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) && !h.ends_with(':') => h,
        _ => host,
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    if name.eq_ignore_ascii_case("localhost") || name.to_ascii_lowercase().ends_with(".localhost") {
        return true;
    }
    name.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback() || (ip == local.ip() && !ip.is_unspecified()))
}

/// Without a token: refuses a foreign `Origin` and a `Host` that does not name this server
/// (see the module rules). `None` when the request may go on.
fn foreign(headers: &HeaderMap, local: std::net::SocketAddr) -> Option<&'static str> {
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    if !host.is_some_and(|h| is_own_host(h, local)) {
        return Some(
            "the Host header does not name this server (a loopback name or the listen address)",
        );
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let own = origin
            .to_str()
            .ok()
            .and_then(|o| o.split_once("://"))
            .is_some_and(|(_, authority)| is_own_host(authority, local));
        if !own {
            return Some("requests from a web page on another origin are refused without a token");
        }
    }
    None
}

async fn handle(State(s): State<Arc<Shared>>, req: Request) -> Response {
    let (mut parts, _body) = req.into_parts();
    if s.cfg.token.is_none()
        && let Some(why) = foreign(&parts.headers, s.local)
    {
        return (StatusCode::FORBIDDEN, format!("{why}\n")).into_response();
    }
    if !authorized(s.cfg.token.as_ref(), &parts.headers) {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "a valid Bearer token is required\n",
        )
            .into_response();
    }
    let path = parts.uri.path().to_owned();
    let is_upgrade = parts
        .headers
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let is_sse = path == "/events" || path == "/sse";
    if !is_upgrade && !is_sse {
        return (
            StatusCode::NOT_FOUND,
            "rawpv serve: use /ws (WebSocket) or /events (SSE)\n",
        )
            .into_response();
    }
    if s.stopping.is_cancelled() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "rawpv serve is shutting down\n",
        )
            .into_response();
    }
    let Ok(permit) = s.clients.clone().try_acquire_owned() else {
        return (StatusCode::SERVICE_UNAVAILABLE, "too many clients\n").into_response();
    };
    let after = match resume_after(parts.uri.query(), &parts.headers) {
        Ok(a) => a,
        Err(why) => return (StatusCode::BAD_REQUEST, format!("{why}\n")).into_response(),
    };
    let start = match s.stream.start(after) {
        Ok(i) => i,
        Err(oldest) => return gone(after, oldest).into_response(),
    };
    let mut cursor = Cursor::new(&s, start);
    if s.cfg.log_clients {
        let n = s.started.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        eprintln!(
            "rawpv: client {n} connected ({}, from frame {})",
            if is_upgrade { "WebSocket" } else { "SSE" },
            start + 1
        );
        cursor.log = Some(n);
    }
    if is_upgrade {
        match WebSocketUpgrade::from_request_parts(&mut parts, &s).await {
            Ok(ws) => ws.on_upgrade(move |socket| play_ws(socket, s, cursor, permit)),
            Err(rej) => rej.into_response(),
        }
    } else {
        play_sse(s, cursor, permit).into_response()
    }
}

/// HTTP 410 for a resume from before the retained window.
fn gone(after: usize, oldest: usize) -> (StatusCode, String) {
    (
        StatusCode::GONE,
        format!(
            "frames {}..={oldest} are no longer kept (--retain-bytes); the oldest kept is frame \
             {}: reconnect without ?after to start there\n",
            after + 1,
            oldest + 1
        ),
    )
}

/// What a connection sends next.
#[derive(Debug)]
enum Step {
    /// A frame: its 1-based index and JSON.
    Frame(usize, Arc<str>),
    /// Every frame was sent (or the server is stopping): close normally.
    End,
    /// The next frame was dropped from the retained window while the client was slow: close
    /// abnormally (the client reconnects and is told, HTTP 410).
    Gone,
}

/// A connection's position in the stream and its pacing.
#[derive(Debug)]
struct Cursor {
    /// 0-based index of the next frame to look at.
    next: usize,
    /// A frame picked and the instant it is due (paced recordings).
    pending: Option<(usize, Arc<str>, Option<tokio::time::Instant>)>,
    /// The timestamp of the last paced frame.
    prev_ts: Option<i64>,
    grew: tokio::sync::watch::Receiver<()>,
    /// The client's number when streams are logged (its end is said when the cursor drops).
    log: Option<u64>,
    /// 1-based index of the last frame handed out (0: none).
    sent: usize,
}

impl Drop for Cursor {
    fn drop(&mut self) {
        if let Some(n) = self.log {
            eprintln!("rawpv: client {n} done after frame {}", self.sent);
        }
    }
}

impl Cursor {
    fn new(s: &Shared, start: usize) -> Self {
        Self {
            next: start,
            pending: None,
            prev_ts: None,
            grew: s.stream.subscribe(),
            log: None,
            sent: 0,
        }
    }

    /// The next step; waits while a paced frame is not due or a live stream has nothing new.
    /// Cancel-safe: a frame picked stays picked until it is returned.
    async fn step(&mut self, s: &Shared) -> Step {
        let paced = s.stream.is_paced();
        loop {
            if let Some((_, _, due)) = &self.pending {
                if let Some(due) = *due {
                    tokio::select! {
                        () = tokio::time::sleep_until(due) => {}
                        () = s.stopping.cancelled() => return Step::End,
                    }
                }
                if let Some((idx, json, _)) = self.pending.take() {
                    self.sent = idx;
                    return Step::Frame(idx, json);
                }
            }
            if paced && s.stopping.is_cancelled() {
                return Step::End;
            }
            // Marked seen before looking, so a push after the look wakes the wait below.
            self.grew.borrow_and_update();
            match s.stream.read(self.next) {
                Read::Frame(f) => {
                    self.next += 1;
                    let due = if paced {
                        let d = gap(self.prev_ts, f.ts, s.cfg.speed);
                        if f.ts.is_some() {
                            self.prev_ts = f.ts;
                        }
                        (!d.is_zero()).then(|| tokio::time::Instant::now() + d)
                    } else {
                        None
                    };
                    if let Some(json) = f.json {
                        self.pending = Some((self.next, json, due));
                    } else if let Some(due) = due {
                        // A skipped frame still takes its time in the pacing.
                        tokio::select! {
                            () = tokio::time::sleep_until(due) => {}
                            () = s.stopping.cancelled() => return Step::End,
                        }
                    }
                }
                Read::End => return Step::End,
                Read::Gone => return Step::Gone,
                Read::Wait => {
                    if s.stopping.is_cancelled() {
                        return Step::End;
                    }
                    tokio::select! {
                        r = self.grew.changed() => {
                            if r.is_err() {
                                return Step::End;
                            }
                        }
                        () = s.stopping.cancelled() => {}
                    }
                }
            }
        }
    }
}

async fn play_ws(
    mut socket: WebSocket,
    s: Arc<Shared>,
    mut cursor: Cursor,
    _permit: OwnedSemaphorePermit,
) {
    let hb = s.cfg.heartbeat.max(Duration::from_millis(1));
    let mut beat = tokio::time::interval_at(tokio::time::Instant::now() + hb, hb);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let close = loop {
        // The heartbeat and the client's messages are served while the stream waits.
        let step = tokio::select! {
            st = cursor.step(&s) => st,
            _ = beat.tick() => {
                if socket.send(Message::Ping(axum::body::Bytes::new())).await.is_err() {
                    return;
                }
                continue;
            }
            m = socket.recv() => match m {
                Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                Some(Ok(_)) => continue,
            },
        };
        match step {
            Step::Frame(_, json) => {
                if socket
                    .send(Message::Text(json.as_ref().into()))
                    .await
                    .is_err()
                {
                    return;
                }
                beat.reset();
            }
            Step::End => {
                let reason = if s.stopping.is_cancelled() && !s.stream.is_paced() {
                    "server stopped"
                } else if s.stopping.is_cancelled() {
                    "server stopped before the end of the recording"
                } else {
                    "end of recording"
                };
                break CloseFrame {
                    code: close_code::NORMAL,
                    reason: reason.into(),
                };
            }
            Step::Gone => {
                break CloseFrame {
                    code: close_code::POLICY,
                    reason: "fell behind the frames kept (--retain-bytes)".into(),
                };
            }
        }
    };
    if socket.send(Message::Close(Some(close))).await.is_err() {
        return;
    }
    // Wait briefly for the client's close reply.
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while let Some(Ok(m)) = socket.recv().await {
            if matches!(m, Message::Close(_)) {
                break;
            }
        }
    })
    .await;
}

fn play_sse(
    s: Arc<Shared>,
    cursor: Cursor,
    permit: OwnedSemaphorePermit,
) -> Sse<impl futures::Stream<Item = Result<Event, std::convert::Infallible>>> {
    struct St {
        s: Arc<Shared>,
        cursor: Cursor,
        done: bool,
        _permit: OwnedSemaphorePermit,
    }
    let heartbeat = s.cfg.heartbeat;
    let st = St {
        s,
        cursor,
        done: false,
        _permit: permit,
    };
    let stream = futures::stream::unfold(st, |mut st| async move {
        if st.done {
            return None;
        }
        match st.cursor.step(&st.s).await {
            Step::Frame(idx, json) => {
                let ev = Event::default().id(idx.to_string()).data(json.as_ref());
                Some((Ok(ev), st))
            }
            Step::End => {
                st.done = true;
                Some((Ok(Event::default().event("end").data("")), st))
            }
            // Ends without `event: end`: the client reconnects and is told (HTTP 410).
            Step::Gone => None,
        }
    });
    let beat = KeepAlive::new().interval(heartbeat.max(Duration::from_millis(1)));
    Sse::new(stream).keep_alive(beat)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_and_the_listen_address_are_own_hosts() {
        let local: std::net::SocketAddr = "127.0.0.1:7878".parse().unwrap();
        for own in [
            "127.0.0.1:7878",
            "localhost:7878",
            "localhost",
            "[::1]:7878",
            "127.0.0.2",
        ] {
            assert!(is_own_host(own, local), "{own}");
        }
        for foreign in [
            "evil.example",
            "evil.example:7878",
            "10.0.0.1:7878",
            "127.0.0.1.evil.example",
        ] {
            assert!(!is_own_host(foreign, local), "{foreign}");
        }
        let lan: std::net::SocketAddr = "192.168.1.5:7878".parse().unwrap();
        assert!(is_own_host("192.168.1.5:7878", lan));
        let any: std::net::SocketAddr = "0.0.0.0:7878".parse().unwrap();
        assert!(!is_own_host("0.0.0.0:7878", any));
    }

    #[test]
    fn foreign_origins_and_hosts_are_refused() {
        let local: std::net::SocketAddr = "127.0.0.1:7878".parse().unwrap();
        let h = |pairs: &[(&'static str, &'static str)]| {
            let mut h = HeaderMap::new();
            for (k, v) in pairs {
                h.insert(*k, v.parse().unwrap());
            }
            h
        };
        assert_eq!(foreign(&h(&[("host", "127.0.0.1:7878")]), local), None);
        assert_eq!(
            foreign(
                &h(&[
                    ("host", "127.0.0.1:7878"),
                    ("origin", "http://localhost:3000")
                ]),
                local
            ),
            None
        );
        assert!(
            foreign(
                &h(&[
                    ("host", "127.0.0.1:7878"),
                    ("origin", "https://evil.example")
                ]),
                local
            )
            .is_some()
        );
        assert!(foreign(&h(&[("host", "127.0.0.1:7878"), ("origin", "null")]), local).is_some());
        assert!(foreign(&h(&[("host", "rebind.evil.example:7878")]), local).is_some());
        assert!(foreign(&h(&[]), local).is_some());
    }

    #[test]
    fn gaps_follow_timestamps_speed_and_the_idle_cap() {
        assert_eq!(gap(Some(0), Some(500), 1.0), Duration::from_millis(500));
        assert_eq!(gap(Some(0), Some(500), 2.0), Duration::from_millis(250));
        assert_eq!(gap(Some(0), Some(3_600_000), 1.0), MAX_IDLE);
        assert_eq!(gap(None, Some(5), 1.0), Duration::ZERO);
        assert_eq!(gap(Some(9), Some(5), 1.0), Duration::ZERO);
        assert_eq!(gap(Some(9), None, 1.0), Duration::ZERO);
    }

    #[test]
    fn bearer_scheme_is_case_insensitive_and_the_token_exact() {
        let t = Token::new("abc");
        let h = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::AUTHORIZATION, v.parse().unwrap());
            h
        };
        assert!(authorized(t.as_ref(), &h("Bearer abc")));
        assert!(authorized(t.as_ref(), &h("bearer abc")));
        assert!(!authorized(t.as_ref(), &h("Bearer abcd")));
        assert!(!authorized(t.as_ref(), &h("Basic abc")));
        assert!(!authorized(t.as_ref(), &HeaderMap::new()));
        assert!(authorized(None, &HeaderMap::new()));
    }

    #[test]
    fn resume_from_query_or_header() {
        let mut h = HeaderMap::new();
        assert_eq!(resume_after(Some("x=1&after=7"), &h), Ok(7));
        assert_eq!(resume_after(Some("x=1"), &h), Ok(0));
        h.insert("last-event-id", "4".parse().unwrap());
        assert_eq!(resume_after(None, &h), Ok(4));
        assert_eq!(resume_after(Some("after=9"), &h), Ok(9));
        // A bad value is refused (HTTP 400), never read as 0.
        assert_eq!(
            resume_after(Some("after=abc"), &h),
            Err(r#"?after must be a frame count (a whole number, 0 or more), not "abc""#.into())
        );
        assert!(resume_after(Some("after=-1"), &h).is_err());
        assert!(resume_after(Some("after"), &h).is_err());
        h.insert("last-event-id", "x".parse().unwrap());
        assert!(
            resume_after(None, &h)
                .unwrap_err()
                .starts_with("Last-Event-ID must be")
        );
    }
}
