//! rawpv: a terminal viewer for AI-agent sessions.
//!
//! Module map (dependency direction points down; see ARCHITECTURE.md):
//!
//! * `main.rs` → [`cli`] (raw flags) → [`app`] (interactive) or [`cmd`] (one-shot commands)
//! * [`app`] owns the [`session::Session`], the [`view`] state, the [`detail`] pipeline, the
//!   panels' caches and the terminal; [`source`] tasks feed it; [`ui`] widgets draw from the
//!   `ui::DrawCtx` it lends them (they never import the app)
//! * [`detail`]: the detail pane's pipeline and its builder, shared with `print --detail`
//! * [`view`]: plain view state; [`query`]: search and filter parsing
//! * [`import`] turns input formats into RAWP frames ([`protocol`]) for [`session`] to fold
//!   (every frame into one of the input's sessions, SPEC §6: `session::sessions`)
//! * [`check`] (inside [`session`]) and [`finding`]: conformance findings, used by the reducer
//!   and `rawpv check`
//! * [`export`]: a session as a self-contained HTML page or Markdown; [`redact`]: secrets
//!   replaced by `[REDACTED: kind]` (gitleaks' rules) for export, `print --redact` and copies
//! * [`render`]: pure per-`output_type` renderers (no ratatui widgets, no tokio)
//! * [`replay`]: the replay player, a timeline cursor over a loaded session (pure)
//! * [`config`]: the user's TOML settings merged over embedded defaults
//! * [`theme`]: semantic styles shared by renderers and widgets
//! * [`fmt`]: plurals, durations, byte sizes and fitting text to columns, for every output
//! * [`library`]: the session library's index (SQLite, FTS5), its updates and full-text search
//! * [`log`]: the opt-in log file (`--log-level`, `RAWPV_LOG`)
//! * [`project`]: the sessions of the project rawpv runs in (`rawpv` alone, `--latest`)
//! * [`notify`]: the bell and OSC 9 / OSC 777 notifications the live state
//!   (`session::live`) rings
//!
//! `protocol` and `session` never import ratatui.

pub mod action;
pub mod app;
pub mod browse;
/// The conformance checker, re-exported: it lives beside the reducer (`session::check`).
pub use session::check;
pub mod cli;
pub mod clipboard;
pub mod cmd;
pub mod config;
pub mod detail;
pub mod export;
pub mod finding;
pub mod fmt;
pub mod import;
pub mod keymap;
pub mod library;
pub mod log;
pub mod notify;
pub mod project;
pub mod protocol;
pub mod query;
pub mod redact;
pub mod render;
pub mod replay;
pub mod review;
pub mod serve;
pub mod session;
pub mod signals;
pub mod source;
pub mod theme;
pub mod tui;
pub mod ui;
pub mod usage;
pub mod view;

/// Turns transparent huge pages off for this process (Linux `prctl(PR_SET_THP_DISABLE)`; a
/// no-op elsewhere or when refused). Called first by `main` and the benches' `open_file`.
///
/// Why (issue 16, BENCHMARKS.md "Claude Code transcripts"): on a system with THP `always`,
/// mimalloc's arenas are faulted in 2 MiB at a time, so a heap that touches a little of many
/// regions is charged whole huge pages: `rawpv check` on the 100 MB transcript was 71 MB resident
/// with them and 39 MB without, and the kernel spent ~20 % of its time zeroing those pages.
pub fn no_transparent_huge_pages() {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let _ = rustix::thread::disable_transparent_huge_pages(true);
    }
}
