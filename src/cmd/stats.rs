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
//!
//! Files (issue 23): when a call changed a file, a `files` line (changed files, lines
//! added and removed, files only read, outside changes, shell commands that may have written
//! files) and one row per changed file: its state letter (`A` created, `M` modified, `D`
//! deleted, `>` moved, `~` created and deleted), its path relative to the cwd, its net line
//! counts (the recorded edits' sum where the net change is not in the record) and notes. The
//! tally keeps the file tools', shell and subagent calls for it (`session::tally::Keep`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::cli::InputArgs;
use crate::session::Session;

/// Runs the command; returns the exit code.
pub async fn run(input: &InputArgs) -> i32 {
    // Folded with `Session::tally`: calls are counted as their results arrive and events
    // before they are dropped, so no result record, event or message is kept (issue 17).
    let (mut session, format) = match Box::pin(super::load_tally(input)).await {
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
        write_files(out, &session, &tally.kept)?;
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

/// Widest path column of the files section (longer paths keep their end).
const PATH_COLUMN: usize = 48;

/// The files section (issue 23 item 1): changed files with their net (else summed) line counts,
/// from the file tools' calls the tally kept; nothing when no call touched a file.
fn write_files(
    out: &mut dyn std::io::Write,
    session: &Session,
    kept: &[crate::session::Invocation],
) -> std::io::Result<()> {
    use crate::review::files::Files;
    let (cwd, changed) = session
        .sessions
        .iter()
        .next()
        .map_or((None, false), |(_, e)| (e.cwd.as_deref(), e.cwd_changed));
    let mut files = Files::build(session, kept.iter().enumerate(), cwd, changed, &|_, _| {
        Vec::new()
    });
    if files.changed().next().is_none() {
        return Ok(());
    }
    let call = |i: usize| kept.get(i);
    let nets: Vec<_> = files
        .files
        .iter()
        .map(|f| {
            (f.changed() && f.no_net.is_none())
                .then(|| files.net(session, &call, f).ok())
                .flatten()
        })
        .collect();
    for (f, n) in files.files.iter_mut().zip(&nets) {
        if let Some(n) = n {
            f.count_net(n);
        }
    }
    let changed: Vec<_> = files.changed().collect();
    let (added, removed): (u64, u64) = changed.iter().fold((0, 0), |(a, r), f| {
        (a + u64::from(f.added), r + u64::from(f.removed))
    });
    let mut head = format!(
        "{} changed · +{added} −{removed} · {} only read",
        crate::fmt::plural(changed.len() as u64, "file"),
        files.files.len() - changed.len()
    );
    let outside: usize = changed.iter().map(|f| f.outside).sum();
    if outside > 0 {
        let _ = write!(head, " · {outside} changed outside the recorded edits");
    }
    if !files.writers.is_empty() {
        let n = crate::fmt::plural(files.writers.len() as u64, "shell command");
        let _ = write!(head, " · {n} may have written files");
    }
    writeln!(out, "files        {head}")?;
    for f in &changed {
        let path = crate::fmt::fit_path(&crate::render::text::visible(&f.shown), PATH_COLUMN);
        let n = f.touches.iter().filter(|t| t.op.changes()).count();
        let mut notes = vec![crate::fmt::plural(n as u64, "change")];
        if f.no_net.is_some() {
            notes.push("no net change in the record (edits summed)".into());
        }
        if f.outside > 0 {
            notes.push(format!("{} outside", f.outside));
        }
        if !f.inside && files.cwd.is_some() {
            notes.push("outside the cwd".into());
        }
        let counts = format!("+{} −{}", f.added, f.removed);
        writeln!(
            out,
            "  {} {path} {counts:>13}  {}",
            f.state.letter(),
            notes.join(" · ")
        )?;
    }
    Ok(())
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
