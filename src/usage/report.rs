//! `rawpv stats` over many sessions: usage grouped by day, week, month, project, session, tool
//! or model, with cost (issue 28 item 1), as text or JSON (`schemas/stats-report.v1.json`).
//!
//! Who calls it: `crate::cmd::stats` when the inputs are a directory, several files, `--all`, or
//! any of `--by`, `--since`, `--until`, `--json`.
//!
//! How: every session file is read once into facts (`super::facts`; unchanged files come from
//! `super::cache`), then:
//! 1. usage rows are deduplicated across files as ccusage does: one row per (message id,
//!    request id), the larger token total kept, a main-agent copy preferred to a subagent's; a
//!    subagent (sidechain) row repeating a parent's message id under another request id is the
//!    parent's copy. Files go in order of their first timestamp (ccusage's order), so a resumed
//!    session's replay of its predecessor counts once. Rows without a message id all count.
//! 2. each row and call goes to its group: its local day (the `TZ` variable's zone, else the
//!    system's; ccusage's default), the week starting on Monday (its date, as ccusage 20), the month, the
//!    session's `cwd` (else the directory's project), the session id (else the file name), the
//!    tool (calls only: a call's tokens are its API message's, shared with the other calls that
//!    message asked for, so they are not split), or the model.
//! 3. `--since` / `--until` (inclusive local dates) keep the rows and calls of those days.
//!
//! Figures per group: sessions, calls, failed calls and their share, median and 95th-percentile
//! call durations (nearest rank over the finished calls), tokens (input, output, cache writes,
//! cache reads, total) and cost (`super::price`; the tokens of models without a price are
//! listed, never priced at 0).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use chrono::{Datelike, NaiveDate, TimeZone};
use serde_json::{Value, json};

use super::cache::Cache;
use super::facts::{FileFacts, UsageFact};
use super::price::{Cost, Table, Tokens};

/// How rows are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum By {
    #[default]
    Day,
    Week,
    Month,
    Project,
    Session,
    Tool,
    Model,
}

impl By {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Day => "day",
            Self::Week => "week",
            Self::Month => "month",
            Self::Project => "project",
            Self::Session => "session",
            Self::Tool => "tool",
            Self::Model => "model",
        }
    }
}

/// What to report.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub by: By,
    pub since: Option<NaiveDate>,
    pub until: Option<NaiveDate>,
    pub json: bool,
    /// Read every file again (no cache read or written).
    pub no_cache: bool,
}

/// The files to read: `(path, project name from the directory)`.
pub type Inputs = Vec<(PathBuf, String)>;

/// The library's roots (`rawpv stats --all`): the browser's (`~/.claude/projects`, Codex,
/// Gemini, the config's `browser.dirs`), each `CLAUDE_CONFIG_DIR` entry's `projects` (a comma
/// list, as Claude Code and ccusage read it) and `~/.config/claude/projects`; missing ones are
/// skipped, each root once.
pub fn library_roots(extra: &[PathBuf]) -> Vec<PathBuf> {
    let mut roots = crate::browse::default_roots(extra);
    if let Some(v) = std::env::var_os("CLAUDE_CONFIG_DIR") {
        for d in v
            .to_string_lossy()
            .split(',')
            .filter(|d| !d.trim().is_empty())
        {
            roots.push(PathBuf::from(d.trim()).join("projects"));
        }
    }
    if let Some(b) = directories::BaseDirs::new() {
        roots.push(b.home_dir().join(".config").join("claude").join("projects"));
    }
    let mut seen = BTreeSet::new();
    roots.retain(|r| {
        r.is_dir() && seen.insert(std::fs::canonicalize(r).unwrap_or_else(|_| r.clone()))
    });
    roots
}

/// The session files under `roots` and the files named (a directory is a root).
pub fn list(paths: &[PathBuf]) -> Inputs {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    let mut push = |p: PathBuf, project: String, out: &mut Inputs| {
        if seen.insert(p.clone()) {
            out.push((p, project));
        }
    };
    for p in paths {
        if p.is_dir() {
            for e in crate::browse::scan(std::slice::from_ref(p)) {
                push(e.path, e.project, &mut out);
            }
        } else {
            let project = p
                .parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            push(p.clone(), project, &mut out);
        }
    }
    out
}

/// Reads every input's facts (from the cache when unchanged), in parallel on the machine's
/// cores; updates the cache unless `no_cache`.
pub fn collect(inputs: &Inputs, cache_dir: Option<PathBuf>, no_cache: bool) -> Vec<FileFacts> {
    let cache = Cache::open(if no_cache { None } else { cache_dir });
    let mut out: Vec<Option<FileFacts>> = vec![None; inputs.len()];
    let mut todo = Vec::new();
    for (i, (p, project)) in inputs.iter().enumerate() {
        match super::cache::stamp(p).and_then(|s| cache.get(p, s).map(|f| (s, f))) {
            Some((_, f)) => out[i] = Some(f.clone()),
            None => todo.push((i, p.clone(), project.clone())),
        }
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(todo.len())
        .max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let read: Vec<(usize, FileFacts)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((i, p, project)) = todo.get(k) else {
                            break;
                        };
                        let mut f = super::facts::read_file(p, project);
                        if let Some((size, mtime)) = super::cache::stamp(p) {
                            (f.size, f.mtime_ns) = (size, mtime);
                        }
                        mine.push((*i, f));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let mut cache = cache;
    for (i, f) in read {
        if f.error.is_none() {
            cache.put(f.clone());
        }
        out[i] = Some(f);
    }
    if !no_cache && let Err(e) = cache.save() {
        eprintln!("rawpv: warning: usage cache: {e}");
    }
    out.into_iter().flatten().collect()
}

/// Each input's cost (its usage rows', deduplicated within the file only), sent as known:
/// the cached files first, then the others as they are read (one at a time, so the viewer's
/// UI thread keeps a core); the cache is updated at the end. For the browser, on a thread of
/// its own; stops early when `send` returns false (the receiver is gone).
pub fn costs(
    inputs: &Inputs,
    cache_dir: Option<PathBuf>,
    table: &Table,
    mut send: impl FnMut(PathBuf, Cost) -> bool,
) {
    let mut cache = Cache::open(cache_dir);
    let cost_of = |f: &FileFacts| {
        let mut c = Cost::default();
        for (_, u) in dedupe(std::slice::from_ref(f)).0 {
            c.add(&table.cost(u.model.as_deref(), &u.tokens));
        }
        c
    };
    let mut todo = Vec::new();
    for (p, project) in inputs {
        match super::cache::stamp(p).and_then(|s| cache.get(p, s)) {
            Some(f) => {
                if !send(p.clone(), cost_of(f)) {
                    return;
                }
            }
            None => todo.push((p, project)),
        }
    }
    for (p, project) in todo {
        let mut f = super::facts::read_file(p, project);
        if let Some((size, mtime)) = super::cache::stamp(p) {
            (f.size, f.mtime_ns) = (size, mtime);
        }
        let c = cost_of(&f);
        if f.error.is_none() {
            cache.put(f);
        }
        if !send(p.clone(), c) {
            break;
        }
    }
    let _ = cache.save();
}

/// The local date of epoch ms `ms` (the `TZ` zone, else the system's).
pub fn local_date(ms: i64) -> Option<NaiveDate> {
    chrono::Local
        .timestamp_millis_opt(ms)
        .single()
        .map(|d| d.date_naive())
}

/// The group key of a time for a dated grouping.
fn date_key(by: By, ms: Option<i64>) -> String {
    let Some(d) = ms.and_then(local_date) else {
        return "(no time)".into();
    };
    match by {
        By::Week => {
            let start = d - chrono::Days::new(u64::from(d.weekday().num_days_from_monday()));
            start.format("%Y-%m-%d").to_string()
        }
        By::Month => d.format("%Y-%m").to_string(),
        _ => d.format("%Y-%m-%d").to_string(),
    }
}

/// One group's figures.
#[derive(Debug, Clone, Default)]
pub struct Group {
    pub sessions: BTreeSet<usize>,
    pub calls: u64,
    pub errors: u64,
    durations: Vec<f64>,
    pub tokens: Tokens,
    pub cost: Cost,
    /// Model (`(none)` without one) → its tokens and cost.
    pub models: BTreeMap<String, (Tokens, Cost)>,
}

impl Group {
    fn add_usage(&mut self, file: usize, u: &UsageFact, table: &Table) {
        self.sessions.insert(file);
        self.tokens.add(&u.tokens);
        let c = table.cost(u.model.as_deref(), &u.tokens);
        self.cost.add(&c);
        let m = self
            .models
            .entry(u.model.as_deref().unwrap_or("(none)").to_owned())
            .or_default();
        m.0.add(&u.tokens);
        m.1.add(&c);
    }

    /// (median, p95) of the finished calls' durations in ms, nearest rank.
    pub fn percentiles(&mut self) -> Option<(f64, f64)> {
        if self.durations.is_empty() {
            return None;
        }
        self.durations.sort_by(f64::total_cmp);
        let n = self.durations.len();
        let rank = |q: f64| ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
        Some((self.durations[rank(0.5)], self.durations[rank(0.95)]))
    }
}

/// The report: groups by key (in key order), the total, and what was read.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub by: By,
    pub rows: BTreeMap<String, Group>,
    pub total: Group,
    pub files: usize,
    /// `(path, why)` of the files that could not be read.
    pub unreadable: Vec<(PathBuf, String)>,
    /// Usage rows dropped as copies of others.
    pub duplicates: u64,
    /// Whether tokens are reported (not by tool).
    pub tokens: bool,
}

/// Whether a candidate row replaces the kept one (ccusage's rule: a main-agent copy over a
/// subagent's, then the larger token total).
fn replaces(new: &UsageFact, old: &UsageFact) -> bool {
    if new.sidechain != old.sidechain {
        return old.sidechain;
    }
    new.tokens.total() > old.tokens.total()
}

/// The usage rows to count: `(file index, row)` after deduplication (module docs, step 1).
pub fn dedupe(files: &[FileFacts]) -> (Vec<(usize, &UsageFact)>, u64) {
    let first = |f: &FileFacts| {
        f.usage
            .iter()
            .filter_map(|u| u.ts)
            .chain(f.calls.iter().filter_map(|c| c.ts))
            .min()
    };
    let mut order: Vec<usize> = (0..files.len()).collect();
    // Files without a time last (ccusage's order), then by path for a stable order.
    order.sort_by_key(|&i| (first(&files[i]).is_none(), first(&files[i]), &files[i].path));
    let mut kept: Vec<(usize, &UsageFact)> = Vec::new();
    let mut exact: HashMap<(&str, Option<&str>), usize> = HashMap::new();
    let mut by_message: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut dropped = 0u64;
    for i in order {
        for u in &files[i].usage {
            let Some(msg) = u.message_id.as_deref() else {
                kept.push((i, u));
                continue;
            };
            let key = (msg, u.request_id.as_deref());
            let found = exact.get(&key).copied().or_else(|| {
                by_message.get(msg).and_then(|v| {
                    v.iter()
                        .copied()
                        .find(|&k| u.sidechain || kept[k].1.sidechain)
                })
            });
            if let Some(k) = found {
                dropped += 1;
                if replaces(u, kept[k].1) {
                    kept[k] = (i, u);
                    exact.insert(key, k);
                }
            } else {
                let k = kept.len();
                kept.push((i, u));
                exact.insert(key, k);
                by_message.entry(msg).or_default().push(k);
            }
        }
    }
    (kept, dropped)
}

/// Builds the report of `files` (module docs).
pub fn build(files: &[FileFacts], o: &Options, table: &Table) -> Report {
    let mut r = Report {
        by: o.by,
        files: files.len(),
        tokens: o.by != By::Tool,
        ..Report::default()
    };
    for f in files {
        if let Some(e) = &f.error {
            r.unreadable.push((f.path.clone(), e.clone()));
        }
    }
    let in_range = |ms: Option<i64>| {
        if o.since.is_none() && o.until.is_none() {
            return true;
        }
        ms.and_then(local_date)
            .is_some_and(|d| o.since.is_none_or(|s| d >= s) && o.until.is_none_or(|u| d <= u))
    };
    let session_key = |i: usize| {
        let f = &files[i];
        f.session_id.clone().unwrap_or_else(|| {
            f.path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
    };
    let (usage, dropped) = dedupe(files);
    r.duplicates = dropped;
    for (i, u) in usage {
        if !in_range(u.ts) {
            continue;
        }
        let key = match o.by {
            By::Tool => None,
            By::Project => Some(files[i].project.clone()),
            By::Session => Some(session_key(i)),
            By::Model => Some(u.model.as_deref().unwrap_or("(none)").to_owned()),
            by => Some(date_key(by, u.ts)),
        };
        if let Some(k) = key {
            r.rows.entry(k).or_default().add_usage(i, u, table);
            r.total.add_usage(i, u, table);
        }
    }
    for (i, f) in files.iter().enumerate() {
        for c in &f.calls {
            if !in_range(c.ts) {
                continue;
            }
            let key = match o.by {
                By::Tool => crate::render::text::visible(&c.tool),
                By::Project => f.project.clone(),
                By::Session => session_key(i),
                By::Model => c.model.as_deref().unwrap_or("(none)").to_owned(),
                by => date_key(by, c.ts),
            };
            for g in [r.rows.entry(key).or_default(), &mut r.total] {
                g.sessions.insert(i);
                g.calls += 1;
                g.errors += u64::from(c.failed);
                if let Some(d) = c.duration_ms {
                    g.durations.push(d);
                }
            }
        }
    }
    r
}

fn tokens_json(t: &Tokens) -> Value {
    json!({
        "input": t.input,
        "output": t.output,
        "cache_write": t.cache_write,
        "cache_read": t.cache_read,
        "total": t.total(),
    })
}

fn cost_json(c: &Cost) -> Value {
    if c.rows == 0 || (c.nanos == 0 && c.unpriced_tokens > 0) {
        Value::Null
    } else {
        json!(c.usd())
    }
}

fn group_json(key: &str, g: &mut Group, tokens: bool) -> Value {
    let durations = g
        .percentiles()
        .map_or(Value::Null, |(m, p)| json!({"median": m, "p95": p}));
    let unpriced: Vec<Value> = g
        .models
        .iter()
        .filter(|(_, (_, c))| c.unpriced_tokens > 0)
        .map(|(m, (_, c))| json!({"model": m, "tokens": c.unpriced_tokens}))
        .collect();
    let models: Vec<Value> = g
        .models
        .iter()
        .map(|(m, (t, c))| json!({"model": m, "tokens": tokens_json(t), "cost_usd": cost_json(c)}))
        .collect();
    let error_rate = if g.calls == 0 {
        Value::Null
    } else {
        json!(g.errors as f64 / g.calls as f64)
    };
    let (t, cost) = if tokens {
        (tokens_json(&g.tokens), cost_json(&g.cost))
    } else {
        (Value::Null, Value::Null)
    };
    json!({
        "key": key,
        "sessions": g.sessions.len(),
        "calls": g.calls,
        "errors": g.errors,
        "error_rate": error_rate,
        "duration_ms": durations,
        "tokens": t,
        "cost_usd": cost,
        "unpriced": unpriced,
        "models": models,
    })
}

/// The zone days are counted in: the `TZ` variable, else `local`.
fn zone() -> String {
    std::env::var("TZ")
        .ok()
        .filter(|z| !z.is_empty())
        .unwrap_or_else(|| "local".into())
}

/// The JSON document (`schemas/stats-report.v1.json`).
pub fn to_json(r: &mut Report, o: &Options, table: &Table) -> Value {
    let tokens = r.tokens;
    let rows: Vec<Value> = r
        .rows
        .iter_mut()
        .map(|(k, g)| group_json(k, g, tokens))
        .collect();
    let date =
        |d: Option<NaiveDate>| d.map_or(Value::Null, |d| json!(d.format("%Y-%m-%d").to_string()));
    let unreadable: Vec<Value> = r
        .unreadable
        .iter()
        .map(|(p, e)| json!({"path": p.display().to_string(), "error": e}))
        .collect();
    json!({
        "schema": "rawpv-stats-report/1",
        "by": r.by.as_str(),
        "timezone": zone(),
        "since": date(o.since),
        "until": date(o.until),
        "prices": {"as_of": table.as_of, "overridden": table.overridden},
        "inputs": {
            "files": r.files,
            "unreadable": unreadable,
            "duplicate_usage_rows": r.duplicates,
        },
        "rows": rows,
        "total": group_json("total", &mut r.total, tokens),
    })
}

/// `1.2k`, `3.4M`, `512`.
pub fn short(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1}M", n as f64 / 1e6),
        _ => format!("{:.1}G", n as f64 / 1e9),
    }
}

fn ms(d: f64) -> String {
    crate::fmt::duration_ms(d)
}

/// The text table: a header line, one row per group, the total, then what had no price.
#[allow(clippy::many_single_char_names)]
pub fn to_text(r: &mut Report, table: &Table) -> String {
    let mut out = String::new();
    let unreadable = if r.unreadable.is_empty() {
        String::new()
    } else {
        format!(" ({} unreadable)", r.unreadable.len())
    };
    let _ = writeln!(
        out,
        "{} read{unreadable} · {} · prices as of {} · days in {}",
        crate::fmt::plural(r.files as u64, "file"),
        crate::fmt::plural(r.total.sessions.len() as u64, "session"),
        table.as_of,
        zone()
    );
    let key_w = r
        .rows
        .keys()
        .map(|k| crate::fmt::width(k))
        .max()
        .unwrap_or(0)
        .clamp(5, 40);
    let head = format!(
        "{:<key_w$} {:>8} {:>6} {:>6} {:>5} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>10}",
        r.by.as_str(),
        "sessions",
        "calls",
        "failed",
        "fail%",
        "median",
        "p95",
        "input",
        "output",
        "cache w",
        "cache r",
        "total",
        "cost"
    );
    let _ = writeln!(out, "{head}");
    let tokens = r.tokens;
    let line = |out: &mut String, key: &str, g: &mut Group| {
        let key = crate::fmt::fit(key, key_w);
        let rate = if g.calls == 0 {
            "—".to_owned()
        } else {
            format!("{:.0}%", 100.0 * g.errors as f64 / g.calls as f64)
        };
        let (med, p95) = g
            .percentiles()
            .map_or_else(|| ("—".to_owned(), "—".to_owned()), |(m, p)| (ms(m), ms(p)));
        let t = &g.tokens;
        let (i, o, w, c, tot, cost) = if tokens {
            let cost = g.cost.label();
            (
                short(t.input),
                short(t.output),
                short(t.cache_write),
                short(t.cache_read),
                short(t.total()),
                if cost.is_empty() { "—".into() } else { cost },
            )
        } else {
            let d = || "—".to_owned();
            (d(), d(), d(), d(), d(), d())
        };
        let _ = writeln!(
            out,
            "{key} {:>8} {:>6} {:>6} {rate:>5} {med:>7} {p95:>7} {i:>7} {o:>7} {w:>7} {c:>7} {tot:>7} {cost:>10}",
            g.sessions.len(),
            g.calls,
            g.errors,
        );
    };
    for (k, g) in &mut r.rows {
        line(&mut out, &crate::render::text::visible(k), g);
    }
    line(&mut out, "total", &mut r.total);
    let unpriced: Vec<String> = r
        .total
        .models
        .iter()
        .filter(|(_, (_, c))| c.unpriced_tokens > 0)
        .map(|(m, (_, c))| {
            format!(
                "{} ({} tokens)",
                crate::render::text::visible(m),
                short(c.unpriced_tokens)
            )
        })
        .collect();
    if !unpriced.is_empty() {
        let _ = writeln!(out, "no price (not in the cost): {}", unpriced.join(", "));
    }
    if tokens && r.duplicates > 0 {
        let _ = writeln!(
            out,
            "{} dropped as copies of others (same message and request id)",
            crate::fmt::plural(r.duplicates, "usage row")
        );
    }
    for (p, e) in &r.unreadable {
        let _ = writeln!(
            out,
            "unreadable: {}: {}",
            crate::render::text::visible(&p.display().to_string()),
            crate::render::text::visible(e)
        );
    }
    out
}
