//! The log file: `--log-level LEVEL` (or `RAWPV_LOG=LEVEL`) writes `rawpv.log` in the platform
//! state directory (Linux: `$XDG_STATE_HOME/rawpv`, else `~/.local/state/rawpv`), or where a
//! platform has none its cache directory (macOS: `~/Library/Caches/rawpv`; Windows:
//! `%LOCALAPPDATA%\rawpv\cache`). Without the flag nothing is logged and no file is made.
//!
//! Who calls it: `main.rs` once, before dispatching; everything else logs through `tracing`
//! macros: the sources (open, state changes, end, failure), the network client (connects,
//! drops, reconnects), the reducer's findings and the detail pipeline's render jobs.
//! Invariants: the terminal never gets a log line (the TUI owns it): logs go to the file only,
//! appended, without colour, in a file only its user can read (0600, in a 0700 directory). No
//! token is ever logged: URLs are logged through [`redact_url`], headers never, and other
//! crates log at most at `info` (at `trace` tungstenite logged the handshake request with its
//! `Authorization: Bearer` header, found by the second attack of issue 14).

use std::path::PathBuf;

use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// The log file's name inside [`log_dir`].
pub const FILE_NAME: &str = "rawpv.log";

/// Where the log file goes: the platform state directory, else its cache directory.
pub fn log_dir() -> Option<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "rawpv")?;
    Some(
        dirs.state_dir()
            .unwrap_or_else(|| dirs.cache_dir())
            .to_path_buf(),
    )
}

/// The log file's path ([`log_dir`] / [`FILE_NAME`]).
pub fn log_path() -> Option<PathBuf> {
    log_dir().map(|d| d.join(FILE_NAME))
}

/// Keeps the log writer's thread; logs are flushed when it is dropped (before exiting).
#[derive(Debug)]
pub struct Guard {
    _worker: tracing_appender::non_blocking::WorkerGuard,
}

/// Starts logging at `level` (`error`, `warn`, `info`, `debug`, `trace`, or `off`) into the log
/// file. Returns the guard to hold until exit and the file's path; `Ok(None)` for `off`.
///
/// # Errors
/// An unknown level, no platform directory, or a directory that cannot be made.
pub fn init(level: &str) -> Result<Option<(Guard, PathBuf)>, String> {
    let filter: LevelFilter = level.trim().parse().map_err(|_| {
        format!("--log-level {level:?}: use error, warn, info, debug, trace or off")
    })?;
    if filter == LevelFilter::OFF {
        return Ok(None);
    }
    let dir = log_dir().ok_or("no home directory to put the log file in")?;
    private_file(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    let appender = tracing_appender::rolling::never(&dir, FILE_NAME);
    let (writer, guard) = tracing_appender::non_blocking(appender);
    // rawpv's own events at the level asked for; other crates' at most at `info`.
    let targets = tracing_subscriber::filter::Targets::new()
        .with_target("rawpv", filter)
        .with_default(filter.min(LevelFilter::INFO));
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(writer)
                .with_ansi(false)
                .with_target(true),
        )
        .with(targets)
        .try_init()
        .map_err(|e| format!("cannot start logging: {e}"))?;
    Ok(Some((Guard { _worker: guard }, dir.join(FILE_NAME))))
}

/// Makes `dir` (0700 on Unix) and the log file in it (0600, also when it existed before).
fn private_file(dir: &std::path::Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)?;
    let mut o = std::fs::OpenOptions::new();
    o.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    let f = o.open(dir.join(FILE_NAME))?;
    #[cfg(unix)]
    f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    drop(f);
    Ok(())
}

/// `url` without what may carry a secret: user info, query and fragment (`wss://h/p?token=…`
/// logs as `wss://h/p?…`).
pub fn redact_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
    let (path, cut) = match rest.find(['?', '#']) {
        Some(i) => (&rest[..i], true),
        None => (rest, false),
    };
    let sep = if scheme.is_empty() { "" } else { "://" };
    format!("{scheme}{sep}{path}{}", if cut { "?…" } else { "" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_what_may_be_secret() {
        assert_eq!(
            redact_url("wss://user:pw@master:8080/s/1?token=abc#x"),
            "wss://master:8080/s/1?…"
        );
        assert_eq!(redact_url("http://h/events"), "http://h/events");
        assert_eq!(redact_url("h/p?k=v"), "h/p?…");
    }

    #[test]
    fn levels_parse_or_say_which_exist() {
        assert!(init("loud").is_err_and(|e| e.contains("use error, warn")));
        assert!(matches!(init("off"), Ok(None)));
    }
}
