//! The non-interactive commands: `print`, `convert`, `check`, `stats`, `serve`.
//!
//! Who calls it: `main.rs`. Each returns the process exit code (0 ok, 1 findings/failures where
//! the command says so, 2 usage or runtime error; ripgrep's convention). Output goes to stdout;
//! a closed pipe (`BrokenPipe`) counts as success.

pub mod check;
pub mod convert;
pub mod print;
pub mod serve;
pub mod stats;

use std::io::{self, Write};

use crate::cli::InputArgs;
use crate::import::Format;
use crate::session::Session;
use crate::source::{SourceKind, load_input};

/// Loads an input fully into a finished [`Session`].
///
/// # Errors
/// The source error, already phrased for the user.
pub async fn load_session(input: &InputArgs) -> Result<(Session, Format), String> {
    let kind = if input.input == "demo" && !std::path::Path::new("demo").exists() {
        SourceKind::Demo
    } else {
        SourceKind::from_arg(&input.input, false)
    };
    let loaded = load_input(&kind).await.map_err(|e| e.to_string())?;
    let format = loaded.format;
    Ok((Session::from_decoded(loaded.items), format))
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
