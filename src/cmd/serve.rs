//! `rawpv serve FILE`: plays a recording as a live WebSocket and SSE stream (not built yet).

/// Runs the command; returns the exit code.
#[allow(clippy::unused_async)]
pub async fn run() -> i32 {
    eprintln!("rawpv: serve is not built yet");
    2
}
