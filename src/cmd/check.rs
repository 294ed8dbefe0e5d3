//! `rawpv check INPUT [--format text|json]`: conformance findings, like a compiler.
//!
//! Who calls it: `main.rs`. The findings are the session's (reducer + `crate::check` + importers),
//! so they are exactly what the problems panel shows.
//!
//! Exit codes: 0 when no finding is at error level, 1 when one is, 2 when the input could not be
//! read (or stdout failed).
//!
//! Text format (stdout), one finding per line ordered by line, then a summary line:
//!
//! ```text
//! session.ndjson:12: error[tool-unavailable] request for WebFetch, which … (SPEC 3.5)
//! session.ndjson: 1 error, 2 warnings, 0 infos
//! ```
//!
//! JSON format (`--format json`), one object; field names are stable API (never renamed, only
//! added):
//!
//! ```json
//! {
//!   "file": "session.ndjson",
//!   "findings": [
//!     {"level": "error", "code": "tool-unavailable", "message": "…", "line": 12,
//!      "spec": "SPEC 3.5", "invocation_id": "…"}
//!   ],
//!   "summary": {"error": 1, "warning": 2, "info": 0, "total": 3}
//! }
//! ```
//!
//! `level` is `info` | `warning` | `error`; `line` is 1-based (0 when unknown); `invocation_id` is
//! omitted when the finding is about no invocation. Codes: `crate::finding::code` and
//! `crate::check::code`.

use std::io::{self, Write};

use serde::Serialize;

use crate::cli::{CheckFormat, InputArgs};
use crate::finding::{Finding, Level};

/// Counts per level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Summary {
    pub error: usize,
    pub warning: usize,
    pub info: usize,
    pub total: usize,
}

impl Summary {
    /// Counts `findings` per level.
    pub fn of(findings: &[Finding]) -> Self {
        let mut s = Self::default();
        for f in findings {
            match f.level {
                Level::Error => s.error += 1,
                Level::Warning => s.warning += 1,
                Level::Info => s.info += 1,
            }
            s.total += 1;
        }
        s
    }
}

/// The `--format json` document.
#[derive(Debug, Serialize)]
pub struct Report<'a> {
    pub file: &'a str,
    pub findings: Vec<&'a Finding>,
    pub summary: Summary,
}

/// Findings ordered by line (stable: same-line findings keep their order).
pub fn ordered(findings: &[Finding]) -> Vec<&Finding> {
    let mut v: Vec<&Finding> = findings.iter().collect();
    v.sort_by_key(|f| f.line);
    v
}

/// Writes the text report.
///
/// # Errors
/// I/O errors of `out`.
pub fn write_text(out: &mut dyn Write, file: &str, findings: &[Finding]) -> io::Result<()> {
    // A file name is untrusted text too: a title-setting escape in it reached stdout.
    let file = crate::render::text::visible(file);
    for f in ordered(findings) {
        writeln!(
            out,
            "{file}:{}: {}[{}] {} ({})",
            f.line,
            f.level.as_str(),
            f.code,
            crate::render::text::visible(&f.message),
            f.spec
        )?;
    }
    let s = Summary::of(findings);
    writeln!(
        out,
        "{file}: {}, {}, {}",
        crate::fmt::plural(s.error, "error"),
        crate::fmt::plural(s.warning, "warning"),
        crate::fmt::plural(s.info, "info")
    )
}

/// Writes the JSON report (one pretty-printed object and a newline).
///
/// # Errors
/// I/O or serialisation errors.
pub fn write_json(out: &mut dyn Write, file: &str, findings: &[Finding]) -> io::Result<()> {
    let report = Report {
        file,
        findings: ordered(findings),
        summary: Summary::of(findings),
    };
    serde_json::to_writer_pretty(&mut *out, &report)?;
    writeln!(out)
}

/// Runs the command; returns the exit code.
pub async fn run(input: &InputArgs, format: CheckFormat) -> i32 {
    let session = match super::load_session(input).await {
        Ok((s, _)) => s,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let errors = session.findings.iter().any(|f| f.level == Level::Error);
    let r = super::with_stdout(|out| match format {
        CheckFormat::Json => write_json(out, &input.input, &session.findings),
        CheckFormat::Text => write_text(out, &input.input, &session.findings),
    });
    super::exit_code(r, i32::from(errors))
}
