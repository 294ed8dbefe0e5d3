//! `rawpv stats INPUT`: counts per tool, status and `output_type`, call durations, token
//! totals (`session.usage` rows) and their cost (`cost` line: `crate::usage::price`, with the
//! models that have no price named). Called by `main`; output is plain aligned text, one fact a
//! line, untrusted names passed through `render::text::visible`.
//!
//! Over a directory, several files or `--all`, or with `--by`, `--since`, `--until` or `--json`,
//! it is the usage report of `crate::usage::report` instead (issue 28). The config is read for
//! its `[prices]` and `browser.dirs` (exit 2 on a bad one).
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

use crate::cli::{InputArgs, StatsArgs};
use crate::session::Session;
use crate::usage::report;

/// Runs the command; returns the exit code (0; 2 on bad input, config or I/O).
pub async fn run(args: &StatsArgs) -> i32 {
    let config = match crate::config::load(args.config.as_deref()) {
        Ok(l) => {
            for w in &l.warnings {
                eprintln!("rawpv: warning: {w}");
            }
            l.config
        }
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    if let Err(e) = crate::usage::price::install(&config.prices) {
        eprintln!("rawpv: {e}");
        return 2;
    }
    if args.is_report() {
        return run_report(args, &config);
    }
    let Some(first) = args.inputs.first() else {
        eprintln!("rawpv: stats needs an input, or --all");
        return 2;
    };
    let input = InputArgs {
        input: first.clone(),
        more: Vec::new(),
        net: args.net.clone(),
    };
    run_one(&input).await
}

/// The report over many sessions (`crate::usage::report`).
fn run_report(args: &StatsArgs, config: &crate::config::Config) -> i32 {
    if let (Some(s), Some(u)) = (args.since, args.until)
        && s > u
    {
        eprintln!("rawpv: --since {s} is after --until {u}");
        return 2;
    }
    let mut paths: Vec<std::path::PathBuf> = Vec::new();
    for i in &args.inputs {
        let p = std::path::PathBuf::from(i);
        if i == "-" || i.contains("://") {
            eprintln!("rawpv: a report reads session files and directories, not {i}");
            return 2;
        }
        if !p.exists() {
            let shown = crate::render::text::visible(i);
            eprintln!("rawpv: cannot read {shown}: no such file or directory");
            return 2;
        }
        paths.push(p);
    }
    if args.all {
        let roots = report::library_roots(&config.browser.dirs);
        if roots.is_empty() && paths.is_empty() {
            eprintln!(
                "rawpv: no session directory found (~/.claude/projects, ~/.config/claude/projects, \
                 CLAUDE_CONFIG_DIR, ~/.codex/sessions, ~/.gemini/tmp, browser.dirs)"
            );
            return 2;
        }
        paths.extend(roots);
    }
    let inputs = report::list(&paths);
    let files = report::collect(&inputs, crate::usage::cache::default_dir(), args.no_cache);
    let o = report::Options {
        by: args.by.unwrap_or_default(),
        since: args.since,
        until: args.until,
        json: args.json,
        no_cache: args.no_cache,
    };
    let table = crate::usage::price::table();
    let mut r = report::build(&files, &o, table);
    let out = if o.json {
        let mut s =
            serde_json::to_string_pretty(&report::to_json(&mut r, &o, table)).unwrap_or_default();
        s.push('\n');
        s
    } else {
        report::to_text(&mut r, table)
    };
    let res = super::with_stdout(|w| w.write_all(out.as_bytes()));
    super::exit_code(res, 0)
}

/// The one-session summary (module docs).
async fn run_one(input: &InputArgs) -> i32 {
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
            let mut cost = format!(
                "{} (prices as of {})",
                crate::usage::price::usd_label(tally.tokens.cost.usd()),
                crate::usage::price::table().as_of
            );
            for (m, n) in &tally.unpriced {
                let _ = write!(
                    cost,
                    " · no price for {} ({n} tokens)",
                    crate::render::text::visible(m)
                );
            }
            writeln!(out, "cost         {cost}")?;
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
