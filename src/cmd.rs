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

/// Folds `input` into `session` (empty, its fold mode set) and finishes it. Several inputs (or
/// a directory) are merged by time ([`load_merged`]).
async fn load_session_with(
    input: &InputArgs,
    session: Session,
) -> Result<(Session, Format), String> {
    let args = input.expanded()?;
    // Boxed: a session is large, and every command's future would hold it (clippy's
    // large_futures).
    if args.len() > 1 {
        return Box::pin(load_merged(&args, &input.net, session)).await;
    }
    let one = InputArgs {
        input: args.into_iter().next().unwrap_or_default(),
        more: Vec::new(),
        net: input.net.clone(),
    };
    Box::pin(load_one(&one, session)).await
}

/// Folds several inputs into `session`, merged by time (`source::merge`), each session named
/// within its input; an input that cannot be read is said on stderr and is an `input-failed`
/// finding in the session (the others are read on: [`failed_inputs`] tells the caller).
///
/// # Errors
/// The token file cannot be read.
async fn load_merged(
    args: &[String],
    net: &NetArgs,
    mut session: Session,
) -> Result<(Session, Format), String> {
    let kinds: Vec<SourceKind> = args.iter().map(|a| kind_of(a)).collect();
    let net = net_config(net)?;
    let (format, runs, failed) = crate::source::merge::load_all(&kinds, &net).await;
    for (i, e) in &failed {
        eprintln!(
            "rawpv: {}: {e} (the other inputs are read on)",
            crate::render::text::visible(&args[*i])
        );
    }
    session
        .sessions
        .set_inputs(crate::source::merge::labels(&kinds));
    for r in runs {
        session.input = r.input;
        for d in r.items {
            session.apply(d);
        }
    }
    session.finish();
    Ok((session, format))
}

/// How many inputs of `session` could not be read (`input-failed` findings): the commands exit
/// 2 when one could not, after writing what the others hold.
pub fn failed_inputs(session: &Session) -> usize {
    session
        .findings
        .iter()
        .filter(|f| {
            f.code == crate::source::merge::INPUT_FAILED && f.level == crate::finding::Level::Error
        })
        .count()
}

impl InputArgs {
    /// The one input named, directories expanded (`Ok(None)`: several).
    ///
    /// # Errors
    /// As [`Self::expanded`].
    pub fn single(&self) -> Result<Option<Self>, String> {
        let v = self.expanded()?;
        Ok((v.len() == 1).then(|| Self {
            input: v.into_iter().next().unwrap_or_default(),
            more: Vec::new(),
            net: self.net.clone(),
        }))
    }

    /// Refuses MORE for a command that reads one session (`patch`, `audit`): `Err` says so.
    ///
    /// # Errors
    /// Several inputs were named.
    pub fn one_only(&self, command: &str) -> Result<Self, String> {
        self.single()?.ok_or_else(|| {
            format!("{command} reads one session; name one input (a directory is several)")
        })
    }

    /// INPUT and MORE with directories expanded (`source::merge::expand_dirs`).
    ///
    /// # Errors
    /// A directory holds no session file, or more than `merge::MAX_INPUTS` inputs.
    pub fn expanded(&self) -> Result<Vec<String>, String> {
        let all: Vec<String> = std::iter::once(&self.input)
            .chain(&self.more)
            .cloned()
            .collect();
        let v = crate::source::merge::expand_dirs(&all)?;
        if v.len() > crate::source::merge::MAX_INPUTS {
            return Err(format!(
                "{} inputs; at most {} at once",
                v.len(),
                crate::source::merge::MAX_INPUTS
            ));
        }
        Ok(v)
    }
}

/// Folds one input into `session` and finishes it.
async fn load_one(input: &InputArgs, mut session: Session) -> Result<(Session, Format), String> {
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
    kind_of(&input.input)
}

/// What one argument names: `demo` is the built-in demo unless a file of that name exists.
pub fn kind_of(arg: &str) -> SourceKind {
    if arg == "demo" && !std::path::Path::new("demo").exists() {
        SourceKind::Demo
    } else {
        SourceKind::from_arg(arg, false)
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
