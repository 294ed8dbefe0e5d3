//! `rawpv serve`: plays a recording as a live stream, over WebSocket and SSE, for testing Edge
//! Node clients (rawpv itself included) without a master.
//!
//! Who calls it: `crate::cmd::serve` (the command) and tests (in-process, on an ephemeral port).
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
//! * Resume: `?after=N` or `Last-Event-ID: N` starts with frame `N + 1`; a value that is not a
//!   whole number is answered with HTTP 400 and a one-line reason.
//! * Auth: with a token configured, `Authorization: Bearer <token>` is required (401 otherwise).
//! * Pacing: frame *i* goes out `(ts_i − ts_{i−1}) / speed` after frame *i − 1*, each gap capped
//!   at [`MAX_IDLE`]; frames without a timestamp (or going back in time) go out at once.
//! * Heartbeat: while a stream waits between frames, a WebSocket Ping (the server also reads, so
//!   client Pings are answered) or an SSE `:` comment goes out every `heartbeat`, so an idle
//!   recording does not trip a client's read timeout.
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
//! Invariants: the served data never contains the token; each connection plays independently.

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
use crate::protocol::Frame;
use crate::source::Token;

mod gate;

/// Longest pause between two frames, after the speed factor.
pub const MAX_IDLE: Duration = Duration::from_secs(2);
/// Default [`ServeConfig::heartbeat`]: 15 s (a quarter of the client's default read timeout,
/// `crate::source::net::READ_TIMEOUT`).
pub const HEARTBEAT: Duration = Duration::from_secs(15);

/// One frame ready to send.
#[derive(Debug, Clone)]
struct Served {
    json: Option<Arc<str>>,
    /// Timestamp in epoch ms.
    ts: Option<i64>,
}

/// The frames of a recording, serialised once.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    frames: Vec<Served>,
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
                    let idx = frames.len() + 1;
                    frames.push(served(f, idx, max_frame_bytes, &mut warnings));
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

    /// Number of frames (including skipped ones).
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }
}

fn served(f: &Frame, idx: usize, cap: usize, warnings: &mut Vec<String>) -> Served {
    let mut v = f.to_json();
    if let Some(obj) = v.as_object_mut() {
        let meta = obj
            .entry("metadata")
            .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
        if let Some(m) = meta.as_object_mut() {
            m.insert(
                crate::source::net::STREAM_INDEX.into(),
                serde_json::Value::from(idx),
            );
        }
    }
    let json = v.to_string();
    let ts = f.envelope.timestamp.map(|t| t.0);
    if json.len() > cap {
        warnings.push(format!(
            "frame {idx} (line {}) is {} bytes, over --max-frame-bytes {cap}; skipped",
            f.origin.line,
            json.len()
        ));
        return Served { json: None, ts };
    }
    Served {
        json: Some(Arc::from(json)),
        ts,
    }
}

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Playback speed factor (> 0).
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
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            speed: 1.0,
            token: None,
            max_clients: 64,
            heartbeat: HEARTBEAT,
            write_timeout: gate::WRITE_TIMEOUT,
        }
    }
}

#[derive(Debug)]
struct Shared {
    rec: Recording,
    cfg: ServeConfig,
    clients: Arc<Semaphore>,
    /// The address the server listens on (a `Host` naming it is ours).
    local: std::net::SocketAddr,
}

/// Serves `rec` on `listener` until `shutdown` fires.
///
/// # Errors
/// The accept loop's I/O error.
pub async fn serve(
    listener: tokio::net::TcpListener,
    rec: Recording,
    cfg: ServeConfig,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let local = listener.local_addr()?;
    let write_timeout = cfg.write_timeout;
    let shared = Arc::new(Shared {
        clients: Arc::new(Semaphore::new(cfg.max_clients.max(1))),
        rec,
        cfg,
        local,
    });
    let app = Router::new()
        .fallback(handle)
        .layer(axum::middleware::map_response(one_response_per_connection))
        .with_state(shared);
    axum::serve(gate::Gated::new(listener, write_timeout)?, app)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
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
    let Ok(permit) = s.clients.clone().try_acquire_owned() else {
        return (StatusCode::SERVICE_UNAVAILABLE, "too many clients\n").into_response();
    };
    let after = match resume_after(parts.uri.query(), &parts.headers) {
        Ok(a) => a,
        Err(why) => return (StatusCode::BAD_REQUEST, format!("{why}\n")).into_response(),
    };
    if is_upgrade {
        match WebSocketUpgrade::from_request_parts(&mut parts, &s).await {
            Ok(ws) => ws.on_upgrade(move |socket| play_ws(socket, s, after, permit)),
            Err(rej) => rej.into_response(),
        }
    } else {
        play_sse(s, after, permit).into_response()
    }
}

/// The delay before frame `i`; `prev` is the previous sent frame's timestamp (updated).
fn due_in(s: &Shared, prev: &mut Option<i64>, i: usize) -> Duration {
    let ts = s.rec.frames[i].ts;
    let d = gap(*prev, ts, s.cfg.speed);
    if ts.is_some() {
        *prev = ts;
    }
    d
}

/// Sleeps until frame `i` is due (SSE: axum's keep-alive sends the heartbeat comments).
async fn pace(s: &Shared, prev: &mut Option<i64>, i: usize) {
    let d = due_in(s, prev, i);
    if !d.is_zero() {
        tokio::time::sleep(d).await;
    }
}

/// Waits `d` on a WebSocket: sends a Ping every heartbeat and reads meanwhile (so the client's
/// Pings are answered). Returns `false` when the client is gone.
async fn idle_ws(socket: &mut WebSocket, d: Duration, beat: &mut tokio::time::Interval) -> bool {
    let until = tokio::time::Instant::now() + d;
    loop {
        tokio::select! {
            () = tokio::time::sleep_until(until) => return true,
            _ = beat.tick() => {
                if socket.send(Message::Ping(axum::body::Bytes::new())).await.is_err() {
                    return false;
                }
            }
            m = socket.recv() => match m {
                Some(Ok(Message::Close(_)) | Err(_)) | None => return false,
                Some(Ok(_)) => {}
            },
        }
    }
}

async fn play_ws(
    mut socket: WebSocket,
    s: Arc<Shared>,
    after: usize,
    _permit: OwnedSemaphorePermit,
) {
    let hb = s.cfg.heartbeat.max(Duration::from_millis(1));
    let mut beat = tokio::time::interval_at(tokio::time::Instant::now() + hb, hb);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut prev = None;
    for i in after..s.rec.frames.len() {
        let d = due_in(&s, &mut prev, i);
        if !d.is_zero() && !idle_ws(&mut socket, d, &mut beat).await {
            return;
        }
        let Some(json) = &s.rec.frames[i].json else {
            continue;
        };
        if socket
            .send(Message::Text(json.as_ref().into()))
            .await
            .is_err()
        {
            return;
        }
    }
    let close = CloseFrame {
        code: close_code::NORMAL,
        reason: "end of recording".into(),
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
    after: usize,
    permit: OwnedSemaphorePermit,
) -> Sse<impl futures::Stream<Item = Result<Event, std::convert::Infallible>>> {
    struct St {
        s: Arc<Shared>,
        i: usize,
        prev: Option<i64>,
        done: bool,
        _permit: OwnedSemaphorePermit,
    }
    let heartbeat = s.cfg.heartbeat;
    let st = St {
        s,
        i: after,
        prev: None,
        done: false,
        _permit: permit,
    };
    let stream = futures::stream::unfold(st, |mut st| async move {
        if st.done {
            return None;
        }
        while st.i < st.s.rec.frames.len() {
            let i = st.i;
            st.i += 1;
            pace(&st.s, &mut st.prev, i).await;
            if let Some(json) = &st.s.rec.frames[i].json {
                let ev = Event::default().id((i + 1).to_string()).data(json.as_ref());
                return Some((Ok(ev), st));
            }
        }
        st.done = true;
        Some((Ok(Event::default().event("end").data("")), st))
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
