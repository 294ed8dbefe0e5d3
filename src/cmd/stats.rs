//! `rawpv stats INPUT`: counts per tool, status and `output_type`, call durations and token
//! totals (`session.usage` rows). Called by `main`; output is plain aligned text, one fact a
//! line, untrusted names passed through `render::text::visible`.
//!
//! Sessions (SPEC §6, issue 18): the lines above the tool table are the input's totals. When the
//! input holds more than one session, a `sessions N` line and a table follow them: one row per
//! session in order of first appearance (its `session_id`; frames, calls, failed calls,
//! findings, turns, tokens in and out), a `(no session)` row for the findings that belong to none
//! (malformed lines) when there are any, then a `total` row. Ids wider than 36 columns are cut
//! with an ellipsis. A single-session input prints no such table.

use std::collections::BTreeMap;

use crate::cli::InputArgs;
use crate::session::Session;

/// Runs the command; returns the exit code.
pub async fn run(input: &InputArgs) -> i32 {
    // Folded with `Session::tally`: calls are counted as their results arrive and events
    // before they are dropped, so no result record, event or message is kept (issue 17).
    let (mut session, format) = match super::load_tally(input).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let mut tally = session.tally.take().map(|t| *t).unwrap_or_default();
    for inv in session.invocations.iter().filter(|i| i.status.is_open()) {
        tally.call(inv);
    }
    let tokens = &tally.tokens;
    let r = super::with_stdout(|out| {
        writeln!(out, "format       {}", format.as_str())?;
        writeln!(out, "frames       {}", session.counts.frames)?;
        writeln!(out, "invocations  {}", session.counts.invocations)?;
        writeln!(out, "failed       {}", session.counts.failed)?;
        writeln!(out, "findings     {}", session.findings.len())?;
        writeln!(out, "status       {}", joined(&tally.per_status))?;
        writeln!(out, "output_type  {}", joined(&tally.per_output))?;
        if let Some(max) = tally.max_duration() {
            // Summed in ascending order, as the sorted list was.
            let total: f64 = tally.durations().sum();
            let median = tally
                .durations()
                .nth((tally.duration_count() / 2) as usize)
                .unwrap_or(max);
            writeln!(
                out,
                "duration     total {} · median {} · max {}",
                ms_label(total),
                ms_label(median),
                ms_label(max)
            )?;
        }
        if tokens.rows > 0 {
            writeln!(
                out,
                "tokens       {} in · {} out · {} cached",
                tokens.input, tokens.output, tokens.cache_read
            )?;
        }
        let (points, branches) = tally.forks();
        if points > 0 {
            writeln!(
                out,
                "forks        {} · {branches} branches (tokens above count every branch)",
                crate::fmt::plural(points, "fork point"),
            )?;
        }
        for (tool, (n, err)) in &tally.per_tool {
            let tool = crate::render::text::visible(tool);
            let calls = format!("call{}", crate::fmt::plural_s(*n));
            writeln!(out, "  {tool:<20} {n:>6} {calls:<5} {err:>5} failed")?;
        }
        if session.sessions.is_multi() {
            write_sessions(out, &session)?;
        }
        Ok(())
    });
    super::exit_code(r, 0)
}

/// Widest session id column (longer ids are cut with an ellipsis).
const SESSION_COLUMN: usize = crate::session::sessions::NAME_MAX;

/// The per-session table (module docs).
fn write_sessions(out: &mut dyn std::io::Write, session: &Session) -> std::io::Result<()> {
    let sessions = &session.sessions;
    let names: Vec<String> = sessions
        .iter()
        .map(|(k, _)| crate::render::text::visible(&sessions.short_name(k)))
        .collect();
    let w = names
        .iter()
        .map(|n| crate::fmt::width(n))
        .max()
        .unwrap_or(0)
        .clamp(7, SESSION_COLUMN);
    writeln!(out, "sessions     {}", sessions.len())?;
    let row = |out: &mut dyn std::io::Write, name: &str, v: [u64; 7]| {
        let name = crate::fmt::fit(name, w);
        let [frames, calls, failed, findings, turns, tin, tout] = v;
        writeln!(
            out,
            "  {name} {frames:>8} {calls:>7} {failed:>6} {findings:>8} {turns:>6} {tin:>10} {tout:>10}"
        )
    };
    writeln!(
        out,
        "  {} {:>8} {:>7} {:>6} {:>8} {:>6} {:>10} {:>10}",
        crate::fmt::fit("session", w),
        "frames",
        "calls",
        "failed",
        "findings",
        "turns",
        "tokens in",
        "out"
    )?;
    let mut total = [0u64; 7];
    for ((_, e), name) in sessions.iter().zip(&names) {
        let v = [
            e.counts.frames,
            e.counts.invocations,
            e.counts.failed,
            e.findings,
            e.turns,
            e.tokens.input,
            e.tokens.output,
        ];
        for (t, x) in total.iter_mut().zip(v) {
            *t = t.saturating_add(x);
        }
        row(out, name, v)?;
    }
    // Findings that belong to no session (malformed lines, an importer's about the input): a
    // row of their own, so the column adds up to the total.
    let none = (session.findings.len() as u64).saturating_sub(total[3]);
    if none > 0 {
        row(out, "(no session)", [0, 0, 0, none, 0, 0, 0])?;
    }
    total[3] = session.findings.len() as u64;
    row(out, "total", total)
}

/// `ok 105 · error 3` (names made visible; `—` when empty).
fn joined(counts: &BTreeMap<String, u64>) -> String {
    if counts.is_empty() {
        return "—".into();
    }
    counts
        .iter()
        .map(|(k, n)| format!("{} {n}", crate::render::text::visible(k)))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// `850 ms`, `12.3 s`.
fn ms_label(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.1} s", ms / 1000.0)
    }
}
