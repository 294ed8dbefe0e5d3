//! The accept side of `rawpv serve`: a listener that hands a connection to the HTTP server only
//! once its request head has arrived, and bounds how many connections are open at once.
//!
//! Who uses it: [`super::serve`]. 1,100 half-open requests (a request line and never the end of
//! the headers) used every file descriptor and real clients got nothing (issue 14.14).
//!
//! Invariants: a write waits at most [`WRITE_TIMEOUT`] on a client that does not read; a
//! connection waits at most [`HEAD_TIMEOUT`] for the blank line that ends its
//! request head, within [`MAX_HEAD_BYTES`], or it is closed; at most [`MAX_WAITING`]
//! connections wait at once (a new one closes the one that has waited longest, so clients that
//! send their request at once always get in) and at most [`MAX_OPEN`] are open at once (past it
//! a new connection is closed at once, so the accept backlog never fills); the accept loop never
//! waits on a client.

use std::future::Future as _;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

/// Longest wait for a request head after the connection opened.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest request head read (a longer one without its blank line is closed).
pub const MAX_HEAD_BYTES: usize = 16 * 1024;
/// Connections waiting for their request head at once.
pub const MAX_WAITING: usize = 256;
/// Connections open at once (streams, keep-alive and waiting ones together).
pub const MAX_OPEN: usize = 1024;
/// Longest a write may wait on a client that does not read; then the connection fails (a
/// client that stopped reading held a stream slot for good; second attack of issue 14).
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(20);

/// A TCP connection that holds its place among the [`MAX_OPEN`] until it is dropped; a write
/// (or flush) that makes no progress for its write timeout ([`WRITE_TIMEOUT`] by default)
/// fails with `TimedOut`.
pub struct Conn {
    stream: TcpStream,
    _open: OwnedSemaphorePermit,
    /// Running while a write is pending.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
    write_timeout: Duration,
}

impl Conn {
    /// `Pending` from the socket: starts or polls the stall timer; an error once it fires.
    fn pending<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(self.write_timeout)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client stopped reading",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.stream).poll_write(cx, buf) {
            Poll::Pending => self.pending(cx),
            ready @ Poll::Ready(_) => {
                self.stalled = None;
                ready
            }
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.stream).poll_flush(cx) {
            Poll::Pending => self.pending(cx),
            ready @ Poll::Ready(_) => {
                self.stalled = None;
                ready
            }
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// The gated listener (an `axum::serve::Listener`).
pub struct Gated {
    ready: mpsc::Receiver<(Conn, SocketAddr)>,
    local: SocketAddr,
}

impl Gated {
    /// Starts accepting on `listener` in a task of its own; writes to a connection fail after
    /// `write_timeout` without progress.
    ///
    /// # Errors
    /// The listener's address cannot be read.
    pub fn new(listener: TcpListener, write_timeout: Duration) -> io::Result<Self> {
        let local = listener.local_addr()?;
        let (tx, ready) = mpsc::channel(64);
        let open = Arc::new(Semaphore::new(MAX_OPEN));
        // Connections waiting for their head, oldest first; a cancelled token is done.
        let mut waiting: std::collections::VecDeque<CancellationToken> =
            std::collections::VecDeque::new();
        tokio::spawn(async move {
            loop {
                let (stream, addr) = match listener.accept().await {
                    Ok(c) => c,
                    Err(e) => {
                        // Out of descriptors and the like: wait a little, as axum does.
                        tracing::warn!(error = %e, "serve: accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                if tx.is_closed() {
                    return;
                }
                let Ok(slot) = open.clone().try_acquire_owned() else {
                    tracing::warn!(%addr, "serve: too many connections; closed");
                    continue;
                };
                waiting.retain(|t| !t.is_cancelled());
                if waiting.len() >= MAX_WAITING
                    && let Some(oldest) = waiting.pop_front()
                {
                    oldest.cancel();
                }
                let done = CancellationToken::new();
                waiting.push_back(done.clone());
                let tx = tx.clone();
                tokio::spawn(async move {
                    let head = tokio::select! {
                        h = tokio::time::timeout(HEAD_TIMEOUT, head_arrived(&stream)) => h,
                        () = done.cancelled() => Ok(false),
                    };
                    done.cancel();
                    if matches!(head, Ok(true)) {
                        let conn = Conn {
                            stream,
                            _open: slot,
                            stalled: None,
                            write_timeout,
                        };
                        let _ = tx.send((conn, addr)).await;
                    } else {
                        tracing::debug!(%addr, "serve: no request head in time; closed");
                    }
                });
            }
        });
        Ok(Self { ready, local })
    }
}

/// Waits until the bytes received hold a whole request head (`\r\n\r\n`) without reading
/// them; `false` when the peer closes or the head would exceed [`MAX_HEAD_BYTES`].
async fn head_arrived(stream: &TcpStream) -> bool {
    let mut buf = vec![0u8; MAX_HEAD_BYTES];
    let mut seen = 0;
    loop {
        if stream.readable().await.is_err() {
            return false;
        }
        let n = match stream.peek(&mut buf).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => n,
        };
        // Not an HTTP request at all (a TLS ClientHello starts with 0x16): close at once, so
        // a client that dialled the wrong scheme hears about it without waiting.
        if !buf[0].is_ascii_uppercase() {
            return false;
        }
        if memchr::memmem::find(&buf[..n], b"\r\n\r\n").is_some() {
            return true;
        }
        if n >= MAX_HEAD_BYTES {
            return false;
        }
        if n == seen {
            // Readable because of bytes already peeked: wait for more without spinning.
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        seen = n;
    }
}

impl axum::serve::Listener for Gated {
    type Io = Conn;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(c) => c,
            // The accept task ended (its listener failed for good): never accept again.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local)
    }
}
