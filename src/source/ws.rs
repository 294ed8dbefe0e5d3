//! WebSocket client connection for [`super::net`] (tokio-tungstenite): one JSON frame per
//! message; see `net` for the framing, resume, close and size-cap rules.
//!
//! Who calls it: `net::run`, once per (re)connect.
//!
//! Keepalive: while connected, a Ping goes out every `NetConfig::ping_interval`; a wait for the
//! server (message, Ping or Pong) longer than `NetConfig::read_timeout` ends the connection as an
//! abnormal drop. Pings from the server are answered by tungstenite on the next read.

use futures::{FutureExt, SinkExt, StreamExt};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message, error::CapacityError};

use super::lines::LineDecoder;
use super::net::{
    NetConfig, Outcome, Resume, read_deadline, silent, sleep_until_opt, status_outcome,
};
use super::{SourceError, SourceMsg, SourceState, send_decoded};
use crate::import::Decoded;
use crate::protocol::{ParseError, ParseErrorKind};

/// The URL to connect to: `url` with `after=<position>` set when resuming.
fn resume_url(url: &str, resume: &Resume) -> Result<reqwest::Url, SourceError> {
    let mut u = reqwest::Url::parse(url)
        .map_err(|e| SourceError::Other(format!("{url}: not a valid URL: {e}")))?;
    if resume.pos > 0 {
        let kept: Vec<(String, String)> = u
            .query_pairs()
            .filter(|(k, _)| k != "after")
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        u.query_pairs_mut()
            .clear()
            .extend_pairs(kept)
            .append_pair("after", &resume.pos.to_string());
    }
    Ok(u)
}

/// One WebSocket connection: connect, read until it ends, say how.
pub(crate) async fn connection(
    url: &str,
    cfg: &NetConfig,
    resume: &mut Resume,
    dec: &mut LineDecoder,
    tx: &mpsc::Sender<SourceMsg>,
) -> Outcome {
    let u = match resume_url(url, resume) {
        Ok(u) => u,
        Err(e) => return Outcome::Fatal(e),
    };
    let mut req = match u.as_str().into_client_request() {
        Ok(r) => r,
        Err(e) => return Outcome::Fatal(SourceError::Other(format!("{url}: {e}"))),
    };
    if let Some(t) = &cfg.token {
        match HeaderValue::from_str(&format!("Bearer {}", t.expose())) {
            Ok(mut v) => {
                v.set_sensitive(true);
                req.headers_mut().insert("authorization", v);
            }
            Err(_) => {
                return Outcome::Fatal(SourceError::Other(
                    "the token contains characters not allowed in an HTTP header".into(),
                ));
            }
        }
    }
    if let Some(id) = resume.resume_id()
        && let Ok(v) = HeaderValue::from_str(&id)
    {
        req.headers_mut().insert("last-event-id", v);
    }
    let config = WebSocketConfig::default()
        .max_message_size(Some(cfg.max_frame_bytes))
        .max_frame_size(Some(cfg.max_frame_bytes));
    let connect = tokio_tungstenite::connect_async_with_config(req, Some(config), true);
    let mut ws = match tokio::time::timeout(cfg.connect_timeout, connect).await {
        Err(_) => return Outcome::dropped("connection timed out"),
        Ok(Err(WsError::Http(resp))) => {
            let wait = resp
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok());
            return status_outcome(url, resp.status().as_u16(), wait);
        }
        Ok(Err(WsError::Url(e))) => {
            return Outcome::Fatal(SourceError::Other(format!("{url}: {e}")));
        }
        Ok(Err(e)) => return super::net::connect_failed(url, &e),
        Ok(Ok((ws, _resp))) => ws,
    };
    if tx.send(SourceMsg::State(SourceState::Live)).await.is_err() {
        return Outcome::ReceiverGone;
    }
    let mut items: Vec<Decoded> = Vec::new();
    let mut ping = cfg.ping_interval.filter(|p| !p.is_zero()).map(|p| {
        let mut t = tokio::time::interval_at(tokio::time::Instant::now() + p, p);
        t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        t
    });
    loop {
        // Only time spent waiting on the server counts against the read timeout.
        let deadline = read_deadline(cfg);
        let first = loop {
            tokio::select! {
                biased;
                m = ws.next() => break m,
                () = sleep_until_opt(deadline) => return silent(cfg),
                () = tick_opt(ping.as_mut()) => {
                    let send = ws.send(Message::Ping(tokio_tungstenite::tungstenite::Bytes::new()));
                    match tokio::time::timeout_at(deadline.unwrap_or_else(far_future), send).await {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => return dropped(&format!("connection lost: {e}")),
                        Err(_) => return silent(cfg),
                    }
                }
            }
        };
        let Some(first) = first else {
            return dropped("the connection ended without a close frame");
        };
        let mut next = Some(first);
        let mut end = None;
        // Take what is already there (up to a batch) before sending.
        while let Some(msg) = next.take() {
            match msg {
                Ok(Message::Text(t)) => {
                    let pos = resume.pos + 1;
                    resume.message(pos, t.as_str(), dec, &mut items);
                }
                Ok(Message::Binary(b)) => {
                    let pos = resume.pos + 1;
                    resume.message(pos, &String::from_utf8_lossy(&b), dec, &mut items);
                }
                Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_)) => {}
                Ok(Message::Close(cf)) => {
                    end = Some(match cf {
                        Some(cf) if cf.code == CloseCode::Normal => Outcome::Closed,
                        Some(cf) => dropped(&format!(
                            "the server closed with code {} {:?}",
                            u16::from(cf.code),
                            cf.reason.as_str()
                        )),
                        None => dropped("the server closed without a status code"),
                    });
                }
                Err(WsError::Capacity(CapacityError::MessageTooLong { size, max_size })) => {
                    // Skip it: a finding here, and the resume position moves past it. A
                    // frame the server sent counts as delivered (the retry count starts over).
                    resume.pos += 1;
                    resume.frames += 1;
                    items.push(Decoded::Malformed(ParseError::new(
                        resume.pos,
                        ParseErrorKind::TooLong(size),
                        &format!("(message over the {max_size}-byte cap; not read)"),
                    )));
                    end = Some(dropped("a frame was over the size cap; resuming after it"));
                }
                Err(e) => end = Some(dropped(&format!("connection lost: {e}"))),
            }
            if end.is_some() || items.len() >= super::BATCH {
                break;
            }
            next = ws.next().now_or_never().flatten();
        }
        dec.flush(&mut items);
        if !send_decoded(tx, dec, &mut items).await {
            return Outcome::ReceiverGone;
        }
        if let Some(o) = end {
            if matches!(o, Outcome::Closed) {
                let _ = ws.close(None).await;
            }
            return o;
        }
    }
}

/// The next tick of the ping timer; pending forever without one.
async fn tick_opt(t: Option<&mut tokio::time::Interval>) {
    match t {
        Some(t) => {
            t.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// An instant no wait reaches (for a send without a read timeout).
fn far_future() -> tokio::time::Instant {
    tokio::time::Instant::now() + std::time::Duration::from_hours(24 * 365)
}

fn dropped(reason: &str) -> Outcome {
    Outcome::dropped(reason)
}
