//! Network sources: a master's live stream over WebSocket ([`super::ws`]) or SSE ([`super::sse`]),
//! as an Edge Node (SPEC 1: every request carries `Authorization: Bearer <token>`).
//!
//! Who calls it: `crate::source::spawn_source_with` (interactive, retries forever) and
//! `crate::source::load_input_with` (one-shot commands, through [`collect`]).
//!
//! Rules (\[ours\]; the Edge API's wire details are not public):
//! * **Framing**: WebSocket: one JSON frame per text (or binary) message. SSE: one frame per
//!   event's `data` (multi-line data joined with `\n`); events named other than `message` are
//!   ignored, except `end`.
//! * **Position**: every frame has a 1-based position: the SSE `id:` when it is a number, else
//!   the previous position + 1; on WebSocket, the `after` we asked for + messages received. The
//!   position is the frame's line number in findings.
//! * **Normal end**: WebSocket close frame with code 1000; SSE `event: end`, or HTTP 204 on
//!   (re)connect (the `EventSource` rule). Then the source ends with `Eof`.
//! * **Abnormal drop**: anything else (connection error, EOF without `event: end`, close code ≠
//!   1000, HTTP 5xx/408/429): reconnect after `backoff_initial · 2^(attempt−1)` capped at
//!   `backoff_max`, reporting [`SourceState::Reconnecting`]; resume with `Last-Event-ID: <last
//!   id>` (SSE and WS) and `?after=<position>` (WS). Frames already seen are dropped: SSE ids at or
//!   below the position reached before the reconnect, and frames whose envelope `seq` was seen in
//!   their session (`seq` counts per session: a master relays many).
//! * **Auth**: HTTP 401/403 (also on the WebSocket handshake) → [`SourceError::Auth`], no retry.
//!   Other 4xx → [`SourceError::Other`], no retry.
//! * **Keepalive**: a connected WebSocket client sends a Ping every `ping_interval`; both
//!   transports treat `read_timeout` without anything from the server (WebSocket: any message,
//!   Ping or Pong; SSE: any bytes, `:` heartbeat comments included) as an abnormal drop, so a
//!   silently dead connection (NAT drop, hung server) is noticed and resumed.
//! * **Size cap**: a frame over `max_frame_bytes` becomes a `TooLong` malformed item (finding),
//!   never a crash; the WebSocket connection is then resumed past it.
//!
//! Invariants: the token is held in [`Token`], whose `Debug`/`Display` never show it; it is only
//! written into the `Authorization` header (marked sensitive).

use std::collections::{HashSet, VecDeque};
use std::path::Path;
use std::time::Duration;

use tokio::sync::mpsc;

use super::lines::{LineDecoder, MAX_LINE_BYTES};
use super::{SourceError, SourceMsg, SourceState, send_decoded};
use crate::import::{Decoded, Format, Loaded};

/// Environment variable holding the Bearer token when no `--token-file` is given.
pub const TOKEN_ENV: &str = "RAWP_TOKEN";
/// The `metadata` key in which `rawpv serve` (and a relay) numbers each frame it sends over a
/// WebSocket, 1-based, as SSE's `id:` does; the client resumes from it and removes it.
pub const STREAM_INDEX: &str = "stream_index";

/// Failed attempts in a row after which the one-shot commands give up.
pub const ONE_SHOT_ATTEMPTS: u32 = 6;
/// Default [`NetConfig::ping_interval`]: 15 s.
pub const PING_INTERVAL: Duration = Duration::from_secs(15);
/// Default [`NetConfig::read_timeout`]: 60 s (four missed pings; SSE servers commonly send a
/// heartbeat comment every 15–30 s; `rawpv serve` every [`crate::serve::HEARTBEAT`]).
pub const READ_TIMEOUT: Duration = Duration::from_mins(1);
/// How many envelope `seq` values are remembered for de-duplication after a reconnect.
const SEQ_WINDOW: usize = 200_000;

/// A Bearer token. `Debug` and `Display` print `<redacted>`; only [`Token::expose`] gives the
/// secret, for the `Authorization` header.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// A token from text (surrounding whitespace and newlines removed); `None` when empty.
    pub fn new(text: &str) -> Option<Self> {
        let t = text.trim();
        (!t.is_empty()).then(|| Self(t.to_owned()))
    }

    /// The secret itself. Never print it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Constant-time comparison with a presented token.
    pub fn matches(&self, presented: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), presented.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl std::fmt::Display for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Reads a token file. Warnings (e.g. group/other-readable file) are pushed to `warnings`.
///
/// # Errors
/// [`SourceError::Io`] when the file cannot be read; [`SourceError::Other`] when it is empty.
pub fn read_token_file(path: &Path, warnings: &mut Vec<String>) -> Result<Token, SourceError> {
    use std::os::unix::fs::PermissionsExt;
    let shown = path.display().to_string();
    let io = |e: std::io::Error| SourceError::Io {
        path: shown.clone(),
        reason: e.to_string(),
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    let mode = meta.permissions().mode();
    if mode & 0o077 != 0 {
        warnings.push(format!(
            "token file {shown} is readable by group/others (mode {:o}); run `chmod 600 {shown}`",
            mode & 0o777
        ));
    }
    let text = std::fs::read_to_string(path).map_err(io)?;
    Token::new(&text).ok_or_else(|| SourceError::Other(format!("token file {shown} is empty")))
}

/// Settings of network sources.
#[derive(Debug, Clone)]
pub struct NetConfig {
    pub token: Option<Token>,
    /// Largest accepted frame, in bytes (default 16 MiB).
    pub max_frame_bytes: usize,
    /// First reconnect delay.
    pub backoff_initial: Duration,
    /// Reconnect delay cap.
    pub backoff_max: Duration,
    /// Give up after this many failed attempts in a row (`None`: never, the interactive default).
    pub max_attempts: Option<u32>,
    /// Limit for TCP/TLS/HTTP connection set-up (WebSocket handshake, SSE response head).
    pub connect_timeout: Duration,
    /// WebSocket: the client sends a Ping this often while connected (`None`: never). Default
    /// [`PING_INTERVAL`]. A live server answers with a Pong, which resets `read_timeout`.
    pub ping_interval: Option<Duration>,
    /// Longest wait for anything from the server once connected: a message, Ping or Pong
    /// (WebSocket), or any bytes, `:` heartbeat comments included (SSE). Past it the connection
    /// is an abnormal drop: reconnect with backoff and resume (`None`: wait forever). Default
    /// [`READ_TIMEOUT`]. Only time spent waiting on the server counts, not time spent waiting
    /// for the app to take frames. Keep it well above `ping_interval` and the server's
    /// heartbeat period.
    pub read_timeout: Option<Duration>,
    /// Things to tell the user on stderr before the TUI starts (never contains the token).
    pub warnings: Vec<String>,
}

impl Default for NetConfig {
    fn default() -> Self {
        Self {
            token: None,
            max_frame_bytes: MAX_LINE_BYTES,
            backoff_initial: Duration::from_millis(250),
            backoff_max: Duration::from_secs(15),
            max_attempts: None,
            connect_timeout: Duration::from_secs(10),
            ping_interval: Some(PING_INTERVAL),
            read_timeout: Some(READ_TIMEOUT),
            warnings: Vec::new(),
        }
    }
}

impl NetConfig {
    /// Defaults, with the token from `RAWP_TOKEN` when set.
    pub fn from_env() -> Self {
        Self {
            token: std::env::var(TOKEN_ENV).ok().and_then(|t| Token::new(&t)),
            ..Self::default()
        }
    }

    /// Defaults with the token from `token_file` when given, else from `RAWP_TOKEN`.
    ///
    /// # Errors
    /// The token file cannot be read or is empty.
    pub fn resolve(token_file: Option<&Path>) -> Result<Self, SourceError> {
        let mut cfg = Self::from_env();
        if let Some(p) = token_file {
            cfg.token = Some(read_token_file(p, &mut cfg.warnings)?);
        }
        Ok(cfg)
    }

    /// The delay before reconnect attempt `attempt` (1-based).
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1).min(20));
        self.backoff_initial
            .saturating_mul(factor)
            .min(self.backoff_max)
    }
}

/// How one connection ended.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// Normal end (see the module rules).
    Closed,
    /// Abnormal drop; `retry_after` is the wait the server asked for (HTTP `Retry-After` on a
    /// 429 or 503), else the backoff applies. Whether the connection delivered frames is
    /// measured by [`run`] (the resume position moved), not said here.
    Dropped {
        reason: String,
        retry_after: Option<Duration>,
    },
    /// Do not retry.
    Fatal(SourceError),
    /// The app is gone.
    ReceiverGone,
}

/// What a resumed connection needs, kept across reconnects.
#[derive(Debug, Default)]
pub(crate) struct Resume {
    /// Position of the last frame received (0: none yet).
    pub pos: u64,
    /// The last SSE `id:` seen (sent back as `Last-Event-ID`).
    pub last_id: Option<String>,
    /// Position reached before the latest reconnect; numeric ids at or below it are duplicates.
    pub floor: u64,
    /// At least one reconnect happened.
    pub resumed: bool,
    /// `(session, seq)` of the frames seen (the session id hashed): `seq` counts per session
    /// (SPEC §6), so in a master's stream two sessions' frames share numbers; a set keyed by
    /// `seq` alone dropped another session's frames after a reconnect as "already seen".
    seqs: HashSet<(u64, u64)>,
    /// The same keys, oldest first (the window forgets the oldest).
    seq_order: VecDeque<(u64, u64)>,
    /// Frames dropped as already seen.
    pub duplicates: u64,
    /// Frames delivered (decoded and not already seen), over all connections.
    pub frames: u64,
}

/// A frame's session for the `seq` de-duplication: its `session_id` hashed (a UUID in any case
/// alike, as `crate::session::sessions` compares them), 0 without one.
fn session_key(id: Option<&str>) -> u64 {
    use std::hash::{Hash, Hasher};
    id.map_or(0, |id| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        if uuid::Uuid::try_parse(id).is_ok() {
            id.to_ascii_lowercase().hash(&mut h);
        } else {
            id.hash(&mut h);
        }
        h.finish() | 1
    })
}

impl Resume {
    /// Decodes one message at position `pos` into `out`, dropping frames already seen.
    pub fn message(&mut self, pos: u64, text: &str, dec: &mut LineDecoder, out: &mut Vec<Decoded>) {
        self.pos = self.pos.max(pos);
        let start = out.len();
        dec.feed_message(pos, text, out);
        // Network messages are whole frames: detect on the first one, so every frame passes the
        // de-duplication below.
        dec.flush(out);
        let mut i = start;
        while i < out.len() {
            // `rawpv serve` numbers its frames (`metadata.stream_index`): the position is the
            // server's, so frames it skipped do not shift a resume.
            if let Decoded::Frame(f) = &mut out[i]
                && let Some(idx) = f
                    .envelope
                    .metadata
                    .remove(STREAM_INDEX)
                    .and_then(|v| v.as_u64())
            {
                f.origin.line = idx;
                self.pos = self.pos.max(idx);
            }
            let key = match &out[i] {
                Decoded::Frame(f) => f
                    .envelope
                    .seq
                    .map(|seq| (session_key(f.envelope.session_id.as_deref()), seq)),
                Decoded::Malformed(_) | Decoded::Finding(_) => None,
            };
            if let Some(key) = key {
                if self.resumed && self.seqs.contains(&key) {
                    out.remove(i);
                    self.duplicates += 1;
                    continue;
                }
                if self.seqs.insert(key) {
                    self.seq_order.push_back(key);
                }
                if self.seq_order.len() > SEQ_WINDOW
                    && let Some(old) = self.seq_order.pop_front()
                {
                    self.seqs.remove(&old);
                }
            }
            if matches!(out[i], Decoded::Frame(_)) {
                self.frames += 1;
            }
            i += 1;
        }
    }

    /// The value for `Last-Event-ID` / `?after=`, if anything was received.
    pub fn resume_id(&self) -> Option<String> {
        self.last_id
            .clone()
            .or_else(|| (self.pos > 0).then(|| self.pos.to_string()))
    }
}

/// When the current wait for the server gives up: `read_timeout` from now (`None`: never).
pub(crate) fn read_deadline(cfg: &NetConfig) -> Option<tokio::time::Instant> {
    cfg.read_timeout.map(|t| tokio::time::Instant::now() + t)
}

/// Sleeps until `at`; pending forever when `at` is `None`.
pub(crate) async fn sleep_until_opt(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The abnormal drop for a server silent past `read_timeout`.
pub(crate) fn silent(cfg: &NetConfig) -> Outcome {
    let secs = cfg.read_timeout.unwrap_or_default().as_secs_f64();
    Outcome::dropped(format!(
        "nothing from the server for {secs} s (read timeout)"
    ))
}

/// True for `ws://` / `wss://` URLs.
pub fn is_websocket(url: &str) -> bool {
    let l = url.to_ascii_lowercase();
    l.starts_with("ws://") || l.starts_with("wss://")
}

/// Reads `url` until a normal end, a fatal error, or the receiver going away; reconnects on
/// abnormal drops (see the module rules).
pub async fn run(url: &str, cfg: &NetConfig, tx: &mpsc::Sender<SourceMsg>) {
    let mut resume = Resume::default();
    let mut dec = LineDecoder::new(cfg.max_frame_bytes);
    let client = if is_websocket(url) {
        // A URL that already says `?after=N` starts counting positions at N.
        resume.pos = reqwest::Url::parse(url)
            .ok()
            .and_then(|u| {
                u.query_pairs()
                    .find(|(k, _)| k == "after")
                    .and_then(|(_, v)| v.parse::<u64>().ok())
            })
            .unwrap_or(0);
        None
    } else {
        match super::sse::client(cfg) {
            Ok(c) => Some(c),
            Err(e) => {
                let _ = tx.send(SourceMsg::Failed(e)).await;
                return;
            }
        }
    };
    let mut attempt = 0u32;
    let shown = crate::log::redact_url(url);
    tracing::info!(
        url = %shown,
        transport = if client.is_none() { "websocket" } else { "sse" },
        ping = ?cfg.ping_interval,
        read_timeout = ?cfg.read_timeout,
        "connecting"
    );
    if tx
        .send(SourceMsg::State(SourceState::Connecting { attempt: 1 }))
        .await
        .is_err()
    {
        return;
    }
    loop {
        let before = resume.frames;
        let outcome = match &client {
            None => super::ws::connection(url, cfg, &mut resume, &mut dec, tx).await,
            Some(c) => super::sse::connection(c, url, cfg, &mut resume, &mut dec, tx).await,
        };
        match outcome {
            Outcome::Closed => {
                tracing::info!(url = %shown, frames = resume.pos, "stream ended by the server");
                let mut items = Vec::new();
                dec.finish(&mut items);
                if send_decoded(tx, &mut dec, &mut items).await {
                    let _ = tx.send(SourceMsg::State(SourceState::Ended)).await;
                    let _ = tx.send(SourceMsg::Eof).await;
                }
                return;
            }
            Outcome::ReceiverGone => return,
            Outcome::Fatal(e) => {
                tracing::warn!(url = %shown, error = %e, "stream failed; not retrying");
                let _ = tx.send(SourceMsg::Failed(e)).await;
                return;
            }
            Outcome::Dropped {
                reason,
                retry_after,
            } => {
                // Only a connection that delivered frames resets the count: a server that
                // accepts and drops at once was retried forever by the one-shot commands,
                // "retry 1 of 6" each time (issue 14.6); so was one that sent a line that is
                // not a frame before each drop (the resume position moved; second attack).
                if resume.frames > before {
                    attempt = 0;
                }
                attempt += 1;
                tracing::info!(
                    url = %shown,
                    attempt,
                    frames = resume.pos,
                    %reason,
                    "stream dropped; reconnecting"
                );
                if cfg.max_attempts.is_some_and(|m| attempt > m) {
                    let msg = format!(
                        "{url}: gave up after {attempt} failed attempts in a row ({} retries): {reason}",
                        attempt - 1
                    );
                    let _ = tx.send(SourceMsg::Failed(SourceError::Other(msg))).await;
                    return;
                }
                let st = SourceState::Reconnecting { attempt, reason };
                if tx.send(SourceMsg::State(st)).await.is_err() {
                    return;
                }
                let wait = retry_after.unwrap_or_else(|| cfg.backoff(attempt));
                tracing::debug!(url = %shown, ?wait, resume_after = resume.pos, "waiting to reconnect");
                tokio::time::sleep(wait).await;
                resume.resumed = true;
                resume.floor = resume.pos;
            }
        }
    }
}

/// Reads `url` to its normal end and returns everything decoded (for the one-shot commands).
/// Retries abnormal drops at most [`ONE_SHOT_ATTEMPTS`] times in a row unless `cfg` says.
///
/// # Errors
/// [`SourceError::Auth`] on 401/403; [`SourceError::Other`] when the stream cannot be read.
pub async fn collect(url: &str, cfg: &NetConfig) -> Result<Loaded, SourceError> {
    let mut cfg = cfg.clone();
    cfg.max_attempts = cfg.max_attempts.or(Some(ONE_SHOT_ATTEMPTS));
    let retries = cfg.max_attempts.unwrap_or(ONE_SHOT_ATTEMPTS);
    let (tx, mut rx) = mpsc::channel(super::CHANNEL_CAPACITY);
    let producer = async move {
        run(url, &cfg, &tx).await;
    };
    let consumer = async {
        let mut format = None;
        let mut items = Vec::new();
        while let Some(msg) = rx.recv().await {
            match msg {
                SourceMsg::Batch(b) => items.extend(b),
                SourceMsg::Format(f) => {
                    format.get_or_insert(f);
                }
                // Retries take up to ~15 s in all: say so on stderr rather than sit silent.
                SourceMsg::State(SourceState::Reconnecting { attempt, reason }) => {
                    eprintln!(
                        "rawpv: {}: {}; retry {attempt} of {retries}",
                        crate::render::text::visible(url),
                        crate::render::text::visible(&reason)
                    );
                }
                SourceMsg::State(_) | SourceMsg::Input(_) => {}
                SourceMsg::Eof => {
                    return Ok(Loaded {
                        format: format.unwrap_or(Format::RawpNdjson),
                        items,
                    });
                }
                SourceMsg::Failed(e) => return Err(e),
            }
        }
        Err(SourceError::Other(format!(
            "{url}: the stream ended unexpectedly"
        )))
    };
    let ((), res) = tokio::join!(producer, consumer);
    res
}

/// A user-facing reason for an HTTP status (`401 Unauthorized`).
pub(crate) fn status_text(code: u16) -> String {
    let reason = http_reason(code);
    if reason.is_empty() {
        code.to_string()
    } else {
        format!("{code} {reason}")
    }
}

fn http_reason(code: u16) -> &'static str {
    match code {
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        410 => "Gone",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// Longest `Retry-After` wait honoured (a server asking for more is retried after this).
pub const MAX_RETRY_AFTER: Duration = Duration::from_mins(5);

/// `Retry-After` as a wait: delay-seconds, or an HTTP date (RFC 9110 10.2.3), at most
/// [`MAX_RETRY_AFTER`]. `None` when absent or unreadable.
pub(crate) fn retry_after(value: Option<&str>) -> Option<Duration> {
    let v = value?.trim();
    let wait = if let Ok(secs) = v.parse::<u64>() {
        Duration::from_secs(secs)
    } else {
        let at = chrono::DateTime::parse_from_rfc2822(v).ok()?;
        (at.with_timezone(&chrono::Utc) - chrono::Utc::now())
            .to_std()
            .unwrap_or_default()
    };
    Some(wait.min(MAX_RETRY_AFTER))
}

impl Outcome {
    /// An abnormal drop, retried after the backoff.
    pub(crate) fn dropped(reason: impl Into<String>) -> Self {
        Self::Dropped {
            reason: reason.into(),
            retry_after: None,
        }
    }
}

/// A connect that failed below HTTP (DNS, TCP, TLS, the WebSocket handshake): the whole cause
/// chain in the reason (`… : invalid peer certificate: UnknownIssuer`); a certificate that
/// does not verify is final (retrying cannot fix it), anything else is retried.
pub(crate) fn connect_failed(url: &str, e: &(dyn std::error::Error + 'static)) -> Outcome {
    let chain = cause_chain(e);
    if chain.to_ascii_lowercase().contains("certificate") {
        return Outcome::Fatal(SourceError::Other(format!(
            "{url}: the TLS certificate was refused: {chain}"
        )));
    }
    Outcome::dropped(format!("cannot connect: {chain}"))
}

/// `e` and its sources joined with `: `, each said once (reqwest repeats its inner message).
pub(crate) fn cause_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur = Some(e);
    while let Some(err) = cur {
        let text = err.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        cur = err.source();
    }
    crate::render::text::visible(&parts.join(": "))
}

/// Classifies an HTTP error status of a (re)connect; `retry_after` is the response's
/// `Retry-After` header, honoured on 429 and 503.
pub(crate) fn status_outcome(url: &str, code: u16, retry_after_header: Option<&str>) -> Outcome {
    let text = status_text(code);
    match code {
        401 | 403 => Outcome::Fatal(SourceError::Auth {
            url: url.to_owned(),
            reason: format!("the server answered {text}; check --token-file or {TOKEN_ENV}"),
        }),
        429 | 503 if retry_after(retry_after_header).is_some() => {
            let wait = retry_after(retry_after_header);
            Outcome::Dropped {
                reason: format!(
                    "the server answered {text} and asked to wait {}",
                    crate::fmt::duration_ms(wait.unwrap_or_default().as_secs_f64() * 1000.0)
                ),
                retry_after: wait,
            }
        }
        408 | 429 | 500..=599 => Outcome::dropped(format!("the server answered {text}")),
        _ => Outcome::Fatal(SourceError::Other(format!(
            "{url}: the server answered {text}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_is_never_printed() {
        let t = Token::new("  s3cret\n").unwrap();
        assert_eq!(t.expose(), "s3cret");
        assert_eq!(format!("{t} {t:?}"), "<redacted> Token(<redacted>)");
        let cfg = NetConfig {
            token: Some(t.clone()),
            ..NetConfig::default()
        };
        assert!(!format!("{cfg:?}").contains("s3cret"));
        assert!(t.matches("s3cret"));
        assert!(!t.matches("s3creT"));
        assert!(!t.matches("s3cre"));
    }

    #[test]
    fn frames_seen_before_a_reconnect_are_dropped_by_seq() {
        let f = |seq: u64| format!(r#"{{"type":"x-test","seq":{seq},"payload":{{}}}}"#);
        let mut r = Resume::default();
        let mut dec = LineDecoder::new(1024);
        let mut out = Vec::new();
        r.message(1, &f(1), &mut dec, &mut out);
        r.message(2, &f(2), &mut dec, &mut out);
        assert_eq!(out.len(), 2);
        // A server that ignores the resume position replays from the start.
        r.resumed = true;
        r.message(1, &f(1), &mut dec, &mut out);
        r.message(2, &f(2), &mut dec, &mut out);
        r.message(3, &f(3), &mut dec, &mut out);
        assert_eq!(out.len(), 3);
        assert_eq!(r.duplicates, 2);
        assert_eq!(r.pos, 3);
    }

    #[test]
    fn after_a_reconnect_another_sessions_frame_with_a_seen_seq_is_kept() {
        let f = |s: &str, seq: u64| {
            format!(r#"{{"type":"x-test","session_id":"{s}","seq":{seq},"payload":{{}}}}"#)
        };
        let mut r = Resume::default();
        let mut dec = LineDecoder::new(1024);
        let mut out = Vec::new();
        let (a, b) = (
            "0b9f4c3e-8d2a-4f6b-a1c7-5e3d9b2f7a60",
            "5f0c7d2e-3b1a-4c8e-9d6f-2a4b6c8e0f11",
        );
        r.message(1, &f(a, 1), &mut dec, &mut out);
        r.message(2, &f(a, 2), &mut dec, &mut out);
        r.resumed = true;
        // A master's stream: session b numbers its frames from 1 too.
        r.message(3, &f(b, 1), &mut dec, &mut out);
        r.message(4, &f(a, 2), &mut dec, &mut out);
        // The same UUID in upper case is the same session.
        r.message(5, &f(&b.to_ascii_uppercase(), 1), &mut dec, &mut out);
        let got: Vec<(Option<&str>, Option<u64>)> = out
            .iter()
            .map(|d| match d {
                Decoded::Frame(f) => (f.envelope.session_id.as_deref(), f.envelope.seq),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            got,
            vec![(Some(a), Some(1)), (Some(a), Some(2)), (Some(b), Some(1))]
        );
        assert_eq!(r.duplicates, 2);
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let cfg = NetConfig::default();
        assert_eq!(cfg.backoff(1), Duration::from_millis(250));
        assert_eq!(cfg.backoff(3), Duration::from_secs(1));
        assert_eq!(cfg.backoff(40), Duration::from_secs(15));
    }

    #[test]
    fn group_readable_token_file_warns() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("tok");
        std::fs::write(&p, "abc\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        let mut w = Vec::new();
        assert_eq!(read_token_file(&p, &mut w).unwrap().expose(), "abc");
        assert_eq!(w.len(), 1);
        assert!(!w[0].contains("abc\n") && w[0].contains("chmod 600"));
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        let mut w = Vec::new();
        read_token_file(&p, &mut w).unwrap();
        assert!(w.is_empty());
    }
}
