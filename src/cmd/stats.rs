//! `rawpv stats INPUT`: counts per tool, status and `output_type`, call durations and token
//! totals (`session.usage` rows). Called by `main`; output is plain aligned text, one fact a
//! line, untrusted names passed through `render::text::visible`.

use std::collections::BTreeMap;

use crate::cli::InputArgs;
use crate::session::Session;

/// Runs the command; returns the exit code.
pub async fn run(input: &InputArgs) -> i32 {
    let (session, format) = match super::load_session(input).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let mut per_tool: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let mut per_status: BTreeMap<&str, u64> = BTreeMap::new();
    let mut per_output: BTreeMap<&str, u64> = BTreeMap::new();
    let mut durations: Vec<f64> = Vec::new();
    for inv in &session.invocations {
        let e = per_tool.entry(inv.tool_name.as_str()).or_default();
        e.0 += 1;
        if inv.status.is_failure() {
            e.1 += 1;
        }
        *per_status.entry(inv.status.label()).or_default() += 1;
        if let Some(r) = &inv.result {
            let t = r.output_type.as_ref().map_or("(none)", |t| t.as_str());
            *per_output.entry(t).or_default() += 1;
        }
        if !inv.status.is_open() {
            durations.extend(inv.duration_ms().filter(|d| d.is_finite() && *d >= 0.0));
        }
    }
    durations.sort_by(f64::total_cmp);
    let tokens = tokens(&session);
    let r = super::with_stdout(|out| {
        writeln!(out, "format       {}", format.as_str())?;
        writeln!(out, "frames       {}", session.counts.frames)?;
        writeln!(out, "invocations  {}", session.counts.invocations)?;
        writeln!(out, "failed       {}", session.counts.failed)?;
        writeln!(out, "findings     {}", session.findings.len())?;
        writeln!(out, "status       {}", joined(&per_status))?;
        writeln!(out, "output_type  {}", joined(&per_output))?;
        if let Some(&max) = durations.last() {
            let total: f64 = durations.iter().sum();
            let median = durations[durations.len() / 2];
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
        let (points, branches) = forks(&session);
        if points > 0 {
            writeln!(
                out,
                "forks        {} · {branches} branches (tokens above count every branch)",
                crate::fmt::plural(points, "fork point"),
            )?;
        }
        for (tool, (n, err)) in per_tool {
            let tool = crate::render::text::visible(tool);
            let calls = format!("call{}", crate::fmt::plural_s(n));
            writeln!(out, "  {tool:<20} {n:>6} {calls:<5} {err:>5} failed")?;
        }
        Ok(())
    });
    super::exit_code(r, 0)
}

/// Claude Code fork points (their `x-claude-code.fork` rows, by parent) and their branches in
/// all (issue 16).
fn forks(session: &Session) -> (u64, u64) {
    let mut by_parent: BTreeMap<String, u64> = BTreeMap::new();
    for it in &session.items {
        if let crate::session::Item::Event(f) = it
            && crate::session::query::is_fork_row(f)
        {
            let p = f.payload_json();
            let parent = p["parentUuid"].as_str().unwrap_or("").to_owned();
            let n = p["branches"].as_u64().unwrap_or(2);
            let e = by_parent.entry(parent).or_default();
            *e = (*e).max(n);
        }
    }
    (by_parent.len() as u64, by_parent.values().sum())
}

/// Token totals of every `session.usage` row.
fn tokens(session: &Session) -> crate::session::query::Tokens {
    let mut t = crate::session::query::Tokens::default();
    for i in 0..session.items.len() {
        t.add(session, i);
    }
    t
}

/// `ok 105 · error 3` (names made visible; `—` when empty).
fn joined(counts: &BTreeMap<&str, u64>) -> String {
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
