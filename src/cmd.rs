//! The non-interactive commands: `print`, `convert`, `check`, `stats`, `patch`, `audit`, `export`,
//! `serve`, `search`, `sessions`.
//!
//! Who calls it: `main.rs`. Each returns the process exit code (0 ok, 1 findings/failures where
//! the command says so, 2 usage or runtime error; ripgrep's convention). Output goes to stdout;
//! a closed pipe (`BrokenPipe`) counts as success.

pub mod audit;
pub mod check;
pub mod convert;
pub mod export;
pub mod patch;
pub mod print;
pub mod search;
pub mod serve;
pub mod stats;

use std::io::{self, Write};

use crate::cli::{InputArgs, NetArgs};
use crate::import::Format;
use crate::session::Session;
use crate::source::{NetConfig, SourceKind, load_input_with};

/// Loads an input fully into a finished [`Session`]. A file is streamed
/// ([`crate::source::file::fold_path`]); other inputs are read whole first.
///
/// # Errors
/// The source error, already phrased for the user.
pub async fn load_session(input: &InputArgs) -> Result<(Session, Format), String> {
    load_session_with(input, Session::new()).await
}

/// [`load_session`] for a command that exits 2 on bad input: the error goes to stderr as
/// `rawpv: …` and `None` comes back (the caller returns its exit code 2).
pub async fn load_session_or_say(input: &InputArgs) -> Option<(Session, Format)> {
    match load_session(input).await {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!("rawpv: {e}");
            None
        }
    }
}

/// [`load_session`] for a command that reads only the findings (`check`): a file is folded
/// with `Session::findings_only`, which keeps neither events, messages nor finished results.
///
/// # Errors
/// As [`load_session`].
pub async fn load_findings(input: &InputArgs) -> Result<(Session, Format), String> {
    let mut session = Session::new();
    session.findings_only = true;
    load_session_with(input, session).await
}

/// [`load_findings`] that also keeps `rawpv stats`' counters (`Session::tally`, counted as the
/// input folds): the session keeps no result records, events or messages.
///
/// # Errors
/// As [`load_session`].
pub async fn load_tally(input: &InputArgs) -> Result<(Session, Format), String> {
    let mut session = Session::new();
    session.findings_only = true;
    let mut tally = Box::<crate::session::tally::Tally>::default();
    tally.keep = Some(crate::session::tally::Keep(stats_keeps));
    session.tally = Some(tally);
    load_session_with(input, session).await
}

/// The calls `rawpv stats` keeps for its files section: file tools, shell and subagent calls.
fn stats_keeps(tool: &str) -> bool {
    crate::review::files::wants(tool)
        || crate::review::edits::is_shell(tool)
        || crate::review::edits::is_subagent(tool)
}

/// Folds `input` into `session` (empty, its fold mode set) and finishes it.
async fn load_session_with(
    input: &InputArgs,
    mut session: Session,
) -> Result<(Session, Format), String> {
    let kind = source_kind(input);
    if let SourceKind::File(p) = &kind {
        let shown = crate::render::text::visible(&p.display().to_string());
        if let Some(e) = crate::import::not_a_session(p, &shown) {
            return Err(e);
        }
        // Streamed: decode and fold overlap, and no decoded item outlives its batch.
        let p = p.clone();
        return tokio::task::spawn_blocking(move || {
            crate::source::file::fold_path_into(&p, session)
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("cannot read {shown}: {e}"));
    }
    let net = net_config(&input.net)?;
    let loaded = load_input_with(&kind, &net)
        .await
        .map_err(|e| e.to_string())?;
    let format = loaded.format;
    for d in loaded.items {
        session.apply(d);
    }
    session.finish();
    Ok((session, format))
}

/// What `input` names: `demo` is the built-in demo unless a file of that name exists.
pub fn source_kind(input: &InputArgs) -> SourceKind {
    if input.input == "demo" && !std::path::Path::new("demo").exists() {
        SourceKind::Demo
    } else {
        SourceKind::from_arg(&input.input, false)
    }
}

/// Network settings from `--token-file` / `RAWP_TOKEN`, `--ping-interval` and `--read-timeout`;
/// warnings (a token file readable by others) go to stderr here, before any output.
///
/// # Errors
/// The token file cannot be read, phrased for the user.
pub fn net_config(net: &NetArgs) -> Result<NetConfig, String> {
    let mut cfg = NetConfig::resolve(net.token_file.as_deref()).map_err(|e| e.to_string())?;
    net.apply(&mut cfg);
    for w in &cfg.warnings {
        eprintln!("rawpv: warning: {w}");
    }
    Ok(cfg)
}

/// Writes `f` to a locked, buffered stdout; `BrokenPipe` is success.
///
/// # Errors
/// Any other I/O error.
pub fn with_stdout(f: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match f(&mut out).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Maps an I/O result to an exit code, reporting errors on stderr.
pub fn exit_code(r: io::Result<()>, ok: i32) -> i32 {
    match r {
        Ok(()) => ok,
        Err(e) => {
            eprintln!("rawpv: {e}");
            2
        }
    }
}
