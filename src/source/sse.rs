//! Server-Sent Events client connection for [`super::net`] (reqwest streaming body; the SSE
//! line format is parsed here with size caps). See `net` for the resume, end and cap rules.
//!
//! Who calls it: `net::run`, once per (re)connect.
//!
//! Keepalive: the response head must arrive within `NetConfig::connect_timeout`; then a wait for
//! the next bytes longer than `NetConfig::read_timeout` (heartbeat comments count as bytes) ends
//! the connection as an abnormal drop.
//!
//! Parsing follows the WHATWG `EventSource` rules: lines end with `\n`, `\r\n` or `\r`; `:` starts
//! a comment; `data:` lines are joined with `\n`; `id:` (without NUL) sets the last event id,
//! which persists across events; a blank line dispatches; an event without data is not
//! dispatched. `retry:` is ignored (rawpv uses its own backoff). \[ours\] An `id:` longer than
//! [`MAX_ID_BYTES`] is ignored like one holding NUL (the previous id stays).

use futures::StreamExt;
use tokio::sync::mpsc;

/// Longest SSE `id:` kept (1 KiB); a longer one is ignored.
pub const MAX_ID_BYTES: usize = 1024;

use super::lines::LineDecoder;
use super::net::{
    NetConfig, Outcome, Resume, read_deadline, silent, sleep_until_opt, status_outcome,
};
use super::{SourceError, SourceMsg, SourceState, send_decoded};
use crate::import::Decoded;
use crate::protocol::{ParseError, ParseErrorKind};

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// `event:` name (`message` when absent).
    pub event: String,
    /// The last event id in effect.
    pub id: Option<String>,
    /// Joined `data:` lines (empty when over the cap).
    pub data: String,
    /// Size of the data when it went over the cap (then `data` is empty).
    pub over_cap: Option<usize>,
}

/// Incremental SSE parser with a byte cap on one line and on one event's data.
#[derive(Debug)]
pub struct SseParser {
    cap: usize,
    line: Vec<u8>,
    line_over: bool,
    /// Previous chunk ended with `\r`: a leading `\n` belongs to it.
    after_cr: bool,
    data: String,
    data_size: usize,
    event: String,
    last_id: Option<String>,
}

impl SseParser {
    /// A parser for events of at most `cap` bytes of data.
    pub fn new(cap: usize) -> Self {
        Self {
            cap,
            line: Vec::new(),
            line_over: false,
            after_cr: false,
            data: String::new(),
            data_size: 0,
            event: String::new(),
            last_id: None,
        }
    }

    /// Feeds bytes; dispatched events are appended to `out`.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<SseEvent>) {
        if self.after_cr {
            self.after_cr = false;
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
        }
        while !bytes.is_empty() {
            let Some(i) = memchr::memchr2(b'\n', b'\r', bytes) else {
                self.push(bytes);
                return;
            };
            self.push(&bytes[..i]);
            if bytes[i] == b'\r' {
                if i + 1 == bytes.len() {
                    self.after_cr = true;
                } else if bytes[i + 1] == b'\n' {
                    bytes = &bytes[1..];
                }
            }
            bytes = &bytes[i + 1..];
            self.end_line(out);
        }
    }

    fn push(&mut self, seg: &[u8]) {
        if self.line_over || self.line.len() + seg.len() > self.cap.saturating_add(16) {
            self.line_over = true;
            self.data_size += seg.len();
            self.line.clear();
        } else {
            self.line.extend_from_slice(seg);
        }
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        let line = std::mem::take(&mut self.line);
        if std::mem::take(&mut self.line_over) {
            // Only `data:` lines can be that long in practice: count it against the event.
            self.data_size = self.data_size.max(self.cap + 1);
            self.data.clear();
            return;
        }
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        let text = String::from_utf8_lossy(&line);
        if text.starts_with(':') {
            return;
        }
        let (field, value) = match text.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (&*text, ""),
        };
        match field {
            "data" => {
                self.data_size += value.len() + 1;
                if self.data_size > self.cap {
                    self.data.clear();
                } else {
                    self.data.push_str(value);
                    self.data.push('\n');
                }
            }
            "event" => value.clone_into(&mut self.event),
            // Capped: an 8 MB id was cloned into every later event and sent back as
            // `Last-Event-ID` (2 GB RSS for 20k events, issue 14.8). A longer one is ignored.
            "id" if !value.contains('\0') && value.len() <= MAX_ID_BYTES => {
                self.last_id = Some(value.to_owned());
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let size = std::mem::take(&mut self.data_size);
        let mut data = std::mem::take(&mut self.data);
        let event = std::mem::take(&mut self.event);
        // An event without data is not dispatched (`EventSource`), except `end` (\[ours\]).
        if size == 0 && event != "end" {
            return;
        }
        if data.ends_with('\n') {
            data.pop();
        }
        let over = size > self.cap;
        out.push(SseEvent {
            event: if event.is_empty() {
                "message".to_owned()
            } else {
                event
            },
            id: self.last_id.clone(),
            data: if over { String::new() } else { data },
            over_cap: over.then_some(size.saturating_sub(1)),
        });
    }
}

/// The HTTP client for SSE sources (the read timeout is applied per connection, from
/// [`NetConfig::read_timeout`]).
///
/// # Errors
/// The TLS backend could not be set up.
pub(crate) fn client(cfg: &NetConfig) -> Result<reqwest::Client, SourceError> {
    reqwest::Client::builder()
        .connect_timeout(cfg.connect_timeout)
        // Redirects are followed only within the first URL's origin (at most 5): reqwest
        // compares each hop with the one before it, so a master → evil → evil chain sent the
        // Bearer token to the evil host on its second hop (second attack of issue 14). No
        // Referer either (it named the master).
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            let same = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if attempt.previous().len() > 5 {
                attempt.error("more than 5 redirects")
            } else if same {
                attempt.follow()
            } else {
                attempt.stop()
            }
        }))
        .referer(false)
        .build()
        .map_err(|e| SourceError::Other(format!("cannot set up HTTP: {e}")))
}

/// One SSE connection: request, read events until it ends, say how.
pub(crate) async fn connection(
    client: &reqwest::Client,
    url: &str,
    cfg: &NetConfig,
    resume: &mut Resume,
    dec: &mut LineDecoder,
    tx: &mpsc::Sender<SourceMsg>,
) -> Outcome {
    let mut req = client
        .get(url)
        .header("accept", "text/event-stream")
        .header("cache-control", "no-cache");
    if let Some(t) = &cfg.token {
        match reqwest::header::HeaderValue::from_str(&format!("Bearer {}", t.expose())) {
            Ok(mut v) => {
                v.set_sensitive(true);
                req = req.header("authorization", v);
            }
            Err(_) => {
                return Outcome::Fatal(SourceError::Other(
                    "the token contains characters not allowed in an HTTP header".into(),
                ));
            }
        }
    }
    if let Some(id) = resume.resume_id() {
        req = req.header("last-event-id", id);
    }
    // A server that accepts and never answers is a failed set-up, like a WebSocket handshake.
    let resp = match tokio::time::timeout(cfg.connect_timeout, req.send()).await {
        Err(_) => return Outcome::dropped("no response in time"),
        Ok(Ok(r)) => r,
        Ok(Err(e)) if e.is_builder() => {
            return Outcome::Fatal(SourceError::Other(format!("{url}: {e}")));
        }
        Ok(Err(e)) => return super::net::connect_failed(url, &e),
    };
    let status = resp.status().as_u16();
    if status == 204 {
        return Outcome::Closed;
    }
    if resp.status().is_redirection() {
        let to = resp
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(|l| crate::render::text::visible(&crate::log::redact_url(l)))
            .unwrap_or_default();
        return Outcome::Fatal(SourceError::Other(format!(
            "{url}: the server redirected to another origin ({to}); rawpv does not follow a \
             redirect off the first URL's origin, where the token would go"
        )));
    }
    if !resp.status().is_success() {
        let wait = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok());
        return status_outcome(url, status, wait);
    }
    let ctype = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if !ctype.starts_with("text/event-stream") {
        return Outcome::Fatal(SourceError::Other(format!(
            "{url}: the server answered {ctype:?}, not text/event-stream"
        )));
    }
    if tx.send(SourceMsg::State(SourceState::Live)).await.is_err() {
        return Outcome::ReceiverGone;
    }
    let mut parser = SseParser::new(cfg.max_frame_bytes);
    parser.last_id.clone_from(&resume.last_id);
    let mut body = resp.bytes_stream();
    let mut events = Vec::new();
    let mut items: Vec<Decoded> = Vec::new();
    loop {
        // Any bytes reset the timer, `:` heartbeat comments included; only time spent waiting
        // on the server counts.
        let next = tokio::select! {
            n = body.next() => n,
            () = sleep_until_opt(read_deadline(cfg)) => return silent(cfg),
        };
        let chunk = match next {
            None => return Outcome::dropped("the stream ended without `event: end`"),
            Some(Err(e)) => {
                return Outcome::dropped(format!(
                    "connection lost: {}",
                    super::net::cause_chain(&e)
                ));
            }
            Some(Ok(c)) => c,
        };
        parser.feed(&chunk, &mut events);
        let mut ended = false;
        for ev in events.drain(..) {
            match ev.event.as_str() {
                "end" => {
                    ended = true;
                    break;
                }
                "message" => {}
                _ => continue,
            }
            let numeric = ev.id.as_deref().and_then(|i| i.trim().parse::<u64>().ok());
            if resume.resumed && numeric.is_some_and(|n| n <= resume.floor) {
                resume.duplicates += 1;
                continue;
            }
            resume.last_id.clone_from(&ev.id);
            let pos = numeric.unwrap_or(resume.pos + 1);
            match ev.over_cap {
                Some(size) => {
                    resume.pos = resume.pos.max(pos);
                    items.push(Decoded::Malformed(ParseError::new(
                        pos,
                        ParseErrorKind::TooLong(size),
                        "(SSE event over the size cap; not read)",
                    )));
                }
                None => resume.message(pos, &ev.data, dec, &mut items),
            }
        }
        dec.flush(&mut items);
        if !send_decoded(tx, dec, &mut items).await {
            return Outcome::ReceiverGone;
        }
        if ended {
            return Outcome::Closed;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&[u8]], cap: usize) -> Vec<SseEvent> {
        let mut p = SseParser::new(cap);
        let mut out = Vec::new();
        for c in chunks {
            p.feed(c, &mut out);
        }
        out
    }

    #[test]
    fn multi_line_data_ids_and_line_endings() {
        let ev = parse(
            &[
                b": hi\r\nid: 7\r",
                b"\ndata: {\"a\":\r\ndata:1}\n\nevent: end\ndata:\n\n",
            ],
            1024,
        );
        assert_eq!(
            ev,
            vec![
                SseEvent {
                    event: "message".into(),
                    id: Some("7".into()),
                    data: "{\"a\":\n1}".into(),
                    over_cap: None
                },
                SseEvent {
                    event: "end".into(),
                    id: Some("7".into()),
                    data: String::new(),
                    over_cap: None
                },
            ]
        );
    }

    #[test]
    fn an_id_over_a_kibibyte_is_ignored() {
        let long = "9".repeat(8 * 1024);
        let text = format!("id: 7\ndata: a\n\nid: {long}\ndata: b\n\n");
        let ev = parse(&[text.as_bytes()], 64 * 1024);
        assert_eq!(ev.len(), 2);
        assert!(ev.iter().all(|e| e.id.as_deref() == Some("7")), "{ev:?}");
    }

    #[test]
    fn event_over_the_cap_is_flagged_not_kept() {
        let big = format!("data: {}\n\ndata: ok\n\n", "x".repeat(100));
        let ev = parse(&[big.as_bytes()], 32);
        assert_eq!(ev.len(), 2);
        assert!(ev[0].over_cap.is_some() && ev[0].data.is_empty());
        assert_eq!(ev[1].data, "ok");
    }
}
