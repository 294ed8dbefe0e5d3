//! The interactive viewer (not built yet): owns the session, view state and the terminal.

use crate::cli::OpenArgs;
use crate::source::SourceKind;

/// Runs the TUI on `kind`; returns the exit code.
#[allow(clippy::unused_async)]
pub async fn run(kind: SourceKind, _open: &OpenArgs) -> color_eyre::Result<i32> {
    eprintln!("rawpv: the TUI is not built yet ({})", kind.label());
    Ok(2)
}
