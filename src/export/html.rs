//! The HTML page of a session (issue 26 item 2): being built; `rawpv export` says so.

use std::io::Write;

use super::{Options, Report};
use crate::session::Session;

/// Writes `session` as one self-contained page.
///
/// # Errors
/// Always, for now: the HTML writer is not built yet.
pub fn write(_out: &mut dyn Write, _session: &Session, _opts: &Options) -> std::io::Result<Report> {
    Err(std::io::Error::other(
        "the HTML export is not built yet: use a .md file or --format markdown",
    ))
}
