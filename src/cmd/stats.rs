//! `rawpv stats INPUT`: counts per tool, status and `output_type`, call durations and token
//! totals (`session.usage` rows). Called by `main`; output is plain aligned text, one fact a
//! line, untrusted names passed through `render::text::visible`.

use std::collections::BTreeMap;

use crate::cli::InputArgs;

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
        Ok(())
    });
    super::exit_code(r, 0)
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
