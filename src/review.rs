//! Reviewing a session (issue 23): what the agent changed (the files model, the net change as a
//! patch) and what it did that a reviewer must know about (the audit list).
//!
//! Who calls it: `rawpv patch`, `rawpv audit` and `rawpv stats` (`crate::cmd`), the viewer's
//! files and audit panels (`crate::ui::files`, `crate::ui::audit`), tests.
//!
//! * [`edits`]: one call's effect on files ([`edits::Fact`]), from its input, output and record.
//! * [`files`]: the per-file model built from every call, outside changes, unrecorded writers.
//! * [`patch`]: the net change as a git-style unified diff.
//! * [`writers`]: shell commands that may write files (a guess from the command line).
//! * [`audit`]: shell commands, network access, writes outside the working directory,
//!   permission changes and approvals.
//!
//! Layering: reads the session model (`crate::session`) and the renderers' diff parser; never
//! the view, the widgets or the app.

pub mod audit;
pub mod edits;
pub mod files;
pub mod patch;
pub mod writers;
