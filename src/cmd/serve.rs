//! `rawpv serve FILE`: plays a recording as a live WebSocket and SSE stream (see `crate::serve`
//! for the wire rules). Warnings and the listening address go to stderr; runs until Ctrl-C.

use std::net::SocketAddr;
use std::path::PathBuf;

use tokio_util::sync::CancellationToken;

use crate::serve::{Recording, ServeConfig, serve};
use crate::source::{SourceKind, load_input, net::read_token_file};

/// The command's options (from `cli::Command::Serve`).
#[derive(Debug, Clone)]
pub struct Options {
    pub file: PathBuf,
    pub listen: String,
    pub speed: f64,
    pub token_file: Option<PathBuf>,
    pub max_frame_bytes: usize,
    pub max_clients: usize,
}

/// Runs the command; returns the exit code (2 on bad options, when the file holds no frame to
/// serve, or when the address is taken).
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
    let loaded = match load_input(&SourceKind::File(opts.file.clone())).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let (rec, w) = Recording::from_loaded(&loaded, opts.max_frame_bytes);
    warnings.extend(w);
    for w in &warnings {
        eprintln!("rawpv: warning: {w}");
    }
    if rec.is_empty() {
        // Clients would connect and get nothing but an end: say so instead of serving it.
        eprintln!(
            "rawpv: {} has no frame to serve (not a session recording?)",
            crate::render::text::visible(&opts.file.display().to_string())
        );
        return 2;
    }
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("rawpv: cannot listen on {addr}: {e}");
            return 2;
        }
    };
    let bound = listener.local_addr().unwrap_or(addr);
    eprintln!(
        "rawpv: serving {} frames from {} on {bound} (WebSocket ws://{bound}/ws, SSE http://{bound}/events)",
        rec.len(),
        crate::render::text::visible(&opts.file.display().to_string())
    );
    let cfg = ServeConfig {
        speed: opts.speed,
        token,
        max_clients: opts.max_clients,
        ..ServeConfig::default()
    };
    // Ctrl-C ends at once (open streams are dropped), not after the streams finish.
    tokio::select! {
        r = serve(listener, rec, cfg, CancellationToken::new()) => match r {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("rawpv: serve: {e}");
                2
            }
        },
        _ = tokio::signal::ctrl_c() => 0,
    }
}
