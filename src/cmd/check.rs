//! `rawpv check INPUT [--format text|json|sarif|junit]`: conformance findings, like a compiler,
//! or in the formats CI systems read.
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
//! added), described by the versioned JSON schema `schemas/check-report.v1.json` (its version is
//! the `schema` field, [`REPORT_SCHEMA`]):
//!
//! ```json
//! {
//!   "schema": "rawpv-check-report/1",
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
//! omitted when the finding is about no invocation.
//!
//! Sessions (SPEC §6, issue 18): when the input holds more than one session, each finding that
//! belongs to one names it: ` [session ID]` at the end of a text line (and of a JUnit case's
//! text; an id wider than 36 columns cut with an ellipsis), `session_id` in a JSON finding and in
//! a SARIF result's `properties` (whole). A single-session
//! input's report is unchanged. Invocation ids are per session, so `(session_id,
//! invocation_id)` names a call. Codes: `crate::finding::code` and
//! `crate::session::check::code`.
//!
//! SARIF (`--format sarif`): a SARIF 2.1.0 log (OASIS) with one run; `tool.driver` is rawpv with
//! one rule per code found (`id` = the code, `properties.spec`); each finding is a result with
//! `ruleId`, `level` (`error`, `warning`, or `note` for info), `message.text` and a location
//! `{physicalLocation: {artifactLocation: {uri: INPUT}, region: {startLine: line}}}` (no region
//! when the line is unknown); `properties` carries `spec` and `invocation_id`. GitHub code
//! scanning reads it (`upload-sarif`).
//!
//! JUnit XML (`--format junit`): `<testsuites>` holding one `<testsuite name=INPUT>`; each
//! finding is a `<testcase name="LINE: code" classname="rawpv.check.CODE">`; error- and
//! warning-level findings carry a `<failure type=LEVEL message=…>` (info ones pass, their message
//! in `<system-out>`); `tests` and `failures` count them. A file without findings is one passing
//! `<testcase name="conformance">`. The exit code is the same as for the other formats.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write};

use serde::Serialize;
use serde_json::json;

use crate::cli::{CheckFormat, InputArgs};
use crate::finding::{Finding, Level};
use crate::session::Sessions;

/// The `session_id` a report names for `f`: its session's, when the input has more than one
/// session (SPEC §6) and the finding belongs to one; `None` otherwise (a single-session input's
/// report is as it was). Raw text: made visible by the text writers.
pub fn session_of<'a>(f: &Finding, sessions: &'a Sessions) -> Option<&'a str> {
    f.session
        .filter(|_| sessions.is_multi())
        .map(|k| sessions.name(k))
}

/// [`session_of`] cut to `session::sessions::NAME_MAX` columns, for the text and JUnit reports.
fn short_session_of<'a>(f: &Finding, sessions: &'a Sessions) -> Option<Cow<'a, str>> {
    f.session
        .filter(|_| sessions.is_multi())
        .map(|k| sessions.short_name(k))
}

/// One finding of the JSON report: the finding's fields, then its session's id when named.
#[derive(Debug, Serialize)]
pub struct Row<'a> {
    #[serde(flatten)]
    pub finding: &'a Finding,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<&'a str>,
}

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

/// The `schema` field of the JSON report: the version of `schemas/check-report.v1.json`.
pub const REPORT_SCHEMA: &str = "rawpv-check-report/1";

/// The `--format json` document.
#[derive(Debug, Serialize)]
pub struct Report<'a> {
    pub schema: &'static str,
    pub file: &'a str,
    pub findings: Vec<Row<'a>>,
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
pub fn write_text(
    out: &mut dyn Write,
    file: &str,
    findings: &[Finding],
    sessions: &Sessions,
) -> io::Result<()> {
    // A file name is untrusted text too: a title-setting escape in it reached stdout.
    let file = crate::render::text::visible(file);
    for f in ordered(findings) {
        let session = short_session_of(f, sessions).map_or_else(String::new, |s| {
            format!(" [session {}]", crate::render::text::visible(&s))
        });
        writeln!(
            out,
            "{file}:{}: {}[{}] {} ({}){session}",
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
pub fn write_json(
    out: &mut dyn Write,
    file: &str,
    findings: &[Finding],
    sessions: &Sessions,
) -> io::Result<()> {
    write_report(out, file, findings, sessions, false)
}

/// The JSON report, pretty or on one line (`check A B …` writes one line per input: JSON Lines).
fn write_report(
    out: &mut dyn Write,
    file: &str,
    findings: &[Finding],
    sessions: &Sessions,
    compact: bool,
) -> io::Result<()> {
    let rows = ordered(findings).into_iter().map(|finding| Row {
        finding,
        session_id: session_of(finding, sessions),
    });
    let report = Report {
        schema: REPORT_SCHEMA,
        file,
        findings: rows.collect(),
        summary: Summary::of(findings),
    };
    if compact {
        serde_json::to_writer(&mut *out, &report)?;
    } else {
        serde_json::to_writer_pretty(&mut *out, &report)?;
    }
    writeln!(out)
}

/// A path as a SARIF `uri` (a relative or absolute URI reference): characters outside the
/// unreserved and path sets are percent-encoded.
fn sarif_uri(file: &str) -> String {
    let mut out = String::with_capacity(file.len());
    for b in file.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char);
            }
            _ => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    if out.is_empty() { "stdin".into() } else { out }
}

/// The SARIF 2.1.0 log (see the module docs).
pub fn sarif_log(file: &str, findings: &[Finding], sessions: &Sessions) -> serde_json::Value {
    let ordered = ordered(findings);
    let mut rules: Vec<(&'static str, &'static str)> = Vec::new();
    for f in &ordered {
        if !rules.iter().any(|(c, _)| *c == f.code) {
            rules.push((f.code, f.spec));
        }
    }
    let uri = if file == "-" {
        "stdin".to_owned()
    } else {
        sarif_uri(file)
    };
    let results: Vec<serde_json::Value> = ordered
        .iter()
        .map(|f| {
            let level = match f.level {
                Level::Error => "error",
                Level::Warning => "warning",
                Level::Info => "note",
            };
            let mut loc = json!({"artifactLocation": {"uri": uri, "index": 0}});
            if f.line > 0 {
                loc["region"] = json!({"startLine": f.line});
            }
            let mut props = json!({"spec": f.spec});
            if let Some(id) = &f.invocation_id {
                props["invocation_id"] = json!(id);
            }
            if let Some(s) = session_of(f, sessions) {
                props["session_id"] = json!(s);
            }
            json!({
                "ruleId": f.code,
                "ruleIndex": rules.iter().position(|(c, _)| *c == f.code).unwrap_or(0),
                "level": level,
                "message": {"text": f.message},
                "locations": [{"physicalLocation": loc}],
                "properties": props,
            })
        })
        .collect();
    let rules: Vec<serde_json::Value> = rules
        .iter()
        .map(|(c, spec)| {
            json!({
                "id": c,
                "name": c,
                "shortDescription": {"text": format!("rawpv conformance rule {c} ({spec})")},
                "properties": {"spec": spec},
            })
        })
        .collect();
    json!({
        "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "rawpv",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "artifacts": [{"location": {"uri": uri}}],
            "results": results,
            "columnKind": "unicodeCodePoints",
        }],
    })
}

/// Writes the SARIF report (one pretty-printed object and a newline).
///
/// # Errors
/// I/O or serialisation errors.
pub fn write_sarif(
    out: &mut dyn Write,
    file: &str,
    findings: &[Finding],
    sessions: &Sessions,
) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &sarif_log(file, findings, sessions))?;
    writeln!(out)
}

/// `s` escaped for an XML attribute or text; characters XML 1.0 cannot hold become U+FFFD.
fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Writes the JUnit XML report (see the module docs).
///
/// # Errors
/// I/O errors of `out`.
pub fn write_junit(
    out: &mut dyn Write,
    file: &str,
    findings: &[Finding],
    sessions: &Sessions,
) -> io::Result<()> {
    write_junit_all(out, &[(file, findings, sessions)])
}

/// The JUnit report of several inputs: one `<testsuite>` each, in order (`check A B …`).
fn write_junit_all(
    out: &mut dyn Write,
    inputs: &[(&str, &[Finding], &Sessions)],
) -> io::Result<()> {
    let counts = |findings: &[Finding]| {
        let failures = findings.iter().filter(|f| f.level != Level::Info).count();
        (findings.len().max(1), failures)
    };
    let (tests, failures) = inputs
        .iter()
        .map(|(_, f, _)| counts(f))
        .fold((0, 0), |(t, f), (a, b)| (t + a, f + b));
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<testsuites name="rawpv check" tests="{tests}" failures="{failures}" errors="0">"#
    )?;
    for (file, findings, sessions) in inputs {
        write_junit_suite(out, file, findings, sessions)?;
    }
    writeln!(out, "</testsuites>")
}

fn write_junit_suite(
    out: &mut dyn Write,
    file: &str,
    findings: &[Finding],
    sessions: &Sessions,
) -> io::Result<()> {
    let ordered = ordered(findings);
    let failures = ordered.iter().filter(|f| f.level != Level::Info).count();
    let tests = ordered.len().max(1);
    let name = xml_escape(file);
    writeln!(
        out,
        r#"  <testsuite name="{name}" tests="{tests}" failures="{failures}" errors="0" skipped="0">"#
    )?;
    if ordered.is_empty() {
        writeln!(
            out,
            r#"    <testcase name="conformance" classname="rawpv.check" file="{name}"/>"#
        )?;
    }
    for f in ordered {
        let case = xml_escape(&format!("{}: {}", f.line, f.code));
        let class = xml_escape(&format!("rawpv.check.{}", f.code));
        let session =
            short_session_of(f, sessions).map_or_else(String::new, |s| format!(" [session {s}]"));
        let text = xml_escape(&format!(
            "{name}:{}: {}[{}] {} ({}){session}",
            f.line,
            f.level.as_str(),
            f.code,
            f.message,
            f.spec
        ));
        let line = if f.line > 0 {
            format!(r#" line="{}""#, f.line)
        } else {
            String::new()
        };
        writeln!(
            out,
            r#"    <testcase name="{case}" classname="{class}" file="{name}"{line}>"#
        )?;
        if f.level == Level::Info {
            writeln!(out, "      <system-out>{text}</system-out>")?;
        } else {
            let first = xml_escape(f.message.lines().next().unwrap_or(""));
            writeln!(
                out,
                r#"      <failure type="{}" message="{first}">{text}</failure>"#,
                f.level.as_str()
            )?;
        }
        writeln!(out, "    </testcase>")?;
    }
    writeln!(out, "  </testsuite>")
}

/// Runs the command; returns the exit code. Several inputs (or a directory) are checked each
/// on its own, in order, as a compiler checks several files (see the module doc): one report
/// per input, and exit 2 when one could not be read (the others are still checked).
pub async fn run(input: &InputArgs, format: CheckFormat) -> i32 {
    let args = match input.expanded() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    if let [one] = args.as_slice() {
        let one = InputArgs {
            input: one.clone(),
            more: Vec::new(),
            net: input.net.clone(),
        };
        return run_one(&one, format).await;
    }
    let mut checked = Vec::with_capacity(args.len());
    let mut unreadable = 0;
    for a in &args {
        let one = InputArgs {
            input: a.clone(),
            more: Vec::new(),
            net: input.net.clone(),
        };
        match super::load_findings(&one).await {
            Ok((s, _)) => checked.push((a.as_str(), s)),
            Err(e) => {
                eprintln!("rawpv: {e} (the other inputs are checked)");
                unreadable += 1;
            }
        }
    }
    let errors = checked
        .iter()
        .any(|(_, s)| s.findings.iter().any(|f| f.level == Level::Error));
    let r = super::with_stdout(|out| write_several(out, format, &checked, args.len(), unreadable));
    let ok = if unreadable > 0 { 2 } else { i32::from(errors) };
    super::exit_code(r, ok)
}

/// The reports of several inputs in `format`: text, each input's lines and summary then a total
/// line; JSON, one report per line (JSON Lines, each as `schemas/check-report.v1.json`); SARIF,
/// one log with a run per input; JUnit, one `<testsuite>` per input.
fn write_several(
    out: &mut dyn Write,
    format: CheckFormat,
    checked: &[(&str, crate::session::Session)],
    inputs: usize,
    unreadable: usize,
) -> io::Result<()> {
    match format {
        CheckFormat::Text => {
            let mut total = Summary::of(&[]);
            for (file, s) in checked {
                write_text(out, file, &s.findings, &s.sessions)?;
                let one = Summary::of(&s.findings);
                total.error += one.error;
                total.warning += one.warning;
                total.info += one.info;
                total.total += one.total;
            }
            let unread = if unreadable > 0 {
                format!(" ({unreadable} could not be read)")
            } else {
                String::new()
            };
            writeln!(
                out,
                "{}{unread}: {}, {}, {}",
                crate::fmt::plural(inputs as u64, "input"),
                crate::fmt::plural(total.error, "error"),
                crate::fmt::plural(total.warning, "warning"),
                crate::fmt::plural(total.info, "info")
            )
        }
        CheckFormat::Json => checked
            .iter()
            .try_for_each(|(file, s)| write_report(out, file, &s.findings, &s.sessions, true)),
        CheckFormat::Sarif => {
            let mut logs = checked
                .iter()
                .map(|(file, s)| sarif_log(file, &s.findings, &s.sessions));
            let mut log = logs
                .next()
                .unwrap_or_else(|| sarif_log("", &[], &Sessions::default()));
            let more: Vec<serde_json::Value> = logs
                .filter_map(|mut l| {
                    l.get_mut("runs")
                        .and_then(|r| r.as_array_mut())
                        .map(std::mem::take)
                })
                .flatten()
                .collect();
            if let Some(runs) = log.get_mut("runs").and_then(|r| r.as_array_mut()) {
                runs.extend(more);
            }
            serde_json::to_writer_pretty(&mut *out, &log)?;
            writeln!(out)
        }
        CheckFormat::Junit => {
            let all: Vec<(&str, &[Finding], &Sessions)> = checked
                .iter()
                .map(|(f, s)| (*f, s.findings.as_slice(), &s.sessions))
                .collect();
            write_junit_all(out, &all)
        }
    }
}

/// One input's report.
async fn run_one(input: &InputArgs, format: CheckFormat) -> i32 {
    let session = match super::load_findings(input).await {
        Ok((s, _)) => s,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let errors = session.findings.iter().any(|f| f.level == Level::Error);
    let r = super::with_stdout(|out| match format {
        CheckFormat::Json => write_json(out, &input.input, &session.findings, &session.sessions),
        CheckFormat::Text => write_text(out, &input.input, &session.findings, &session.sessions),
        CheckFormat::Sarif => write_sarif(out, &input.input, &session.findings, &session.sessions),
        CheckFormat::Junit => write_junit(out, &input.input, &session.findings, &session.sessions),
    });
    super::exit_code(r, i32::from(errors))
}
