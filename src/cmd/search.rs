//! `rawpv search PATTERN` and `rawpv sessions`: the session library from the command line
//! (issue 27 item 5), in ripgrep's manner.
//!
//! Who calls it: `main.rs`. Both first bring the index up to date (`crate::library::index`:
//! only new or changed files are read; files that went leave it), then answer from it;
//! `--no-index` (or the config's `library.index = false`) indexes into memory instead, so every
//! file is read and nothing is written.
//!
//! Output: `search` prints one line per hit, `PATH:LINE  TIME  TOOL  SNIPPET` (the tool column
//! is the document's kind for messages: `prompt`, `text`, `thinking`), matches in bold red when
//! colour is on; `--json` the document of `schemas/search.v1.json`. Exit 0 when something was
//! found, 1 when nothing was, 2 on an error (a bad pattern, an index that cannot be written; one
//! another rawpv is writing is read as it is, with a warning).
//! `sessions` prints one line per session, last activity first (`--json`:
//! `schemas/sessions.v1.json`). Untrusted text goes through `render::text::visible`.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::cli::{ColorChoice, SearchArgs, SessionsArgs};
use crate::library::{self, Filter, SqliteStore, Store, index, search};

/// The store to answer from, up to date for the library's files and `dirs`.
fn ready(
    dirs: &[PathBuf],
    config: Option<&std::path::Path>,
    no_index: bool,
) -> Result<SqliteStore, String> {
    let config = crate::config::load(config).map_err(|e| e.to_string())?;
    for w in &config.warnings {
        eprintln!("rawpv: warning: {w}");
    }
    let config = config.config;
    for d in dirs {
        if !d.exists() {
            let shown = crate::render::text::visible(&d.display().to_string());
            return Err(format!("cannot read {shown}: no such file or directory"));
        }
    }
    let mut paths = library::roots(&config.browser.dirs);
    paths.extend(dirs.iter().cloned());
    let inputs = index::list(&paths);
    let mut store = if no_index || !config.library.index {
        SqliteStore::memory()?
    } else {
        library::open_default()?
    };
    // Another rawpv writing the index past the busy timeout (a cold index of a big library):
    // the answer comes from what the index holds, and says so (attack 11 #3).
    if let Err(e) = index::update(&mut store, &inputs, |_| true) {
        if !library::store::is_busy(&e) {
            return Err(e);
        }
        eprintln!(
            "rawpv: warning: {e}; answering from what the index holds so far (newer or changed sessions may be missing)"
        );
    }
    Ok(store)
}

fn filter(
    project: Option<&String>,
    since: Option<&String>,
    tool: Option<&String>,
) -> Result<Filter, String> {
    Ok(Filter {
        project: project.cloned(),
        since_ms: since.map(|s| library::parse_since(s)).transpose()?,
        tool: tool.cloned(),
    })
}

/// Local `YYYY-MM-DD HH:MM` of epoch ms.
fn local(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms).map_or_else(String::new, |t| {
        t.with_timezone(&chrono::Local)
            .format("%Y-%m-%d %H:%M")
            .to_string()
    })
}

fn rfc3339(ms: Option<i64>) -> Value {
    ms.map_or(Value::Null, |m| {
        Value::String(crate::protocol::Timestamp(m).to_rfc3339())
    })
}

fn color_on(c: ColorChoice) -> bool {
    match c {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::IsTerminal::is_terminal(&std::io::stdout())
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// `s` with `marks` (byte ranges) in bold red.
fn paint(s: &str, marks: &[(usize, usize)], color: bool) -> String {
    if !color {
        return s.to_owned();
    }
    let mut out = String::new();
    let mut at = 0;
    for &(a, b) in marks {
        if a < at || b > s.len() {
            continue;
        }
        out.push_str(&s[at..a]);
        out.push_str("\x1b[1;31m");
        out.push_str(&s[a..b]);
        out.push_str("\x1b[0m");
        at = b;
    }
    out.push_str(&s[at..]);
    out
}

/// Runs `rawpv search`; returns the exit code.
pub fn run(args: &SearchArgs) -> i32 {
    let q = match search::Query::parse(&args.pattern, args.regex.as_deref()) {
        Ok(q) => q,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let f = match filter(
        args.project.as_ref(),
        args.since.as_ref(),
        args.tool.as_ref(),
    ) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let store = match ready(&args.dirs, args.config.as_deref(), args.no_index) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let (hits, sessions) = match search::search(&store, &q, &f, args.max)
        .and_then(|h| Ok((h, search::sessions_of(&store, &Filter::default())?)))
    {
        Ok(x) => x,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let code = i32::from(hits.is_empty());
    let out = if args.json {
        let hits: Vec<Value> = hits
            .iter()
            .map(|h| {
                let s = sessions.get(&h.path);
                json!({
                    "path": h.path.to_string_lossy(),
                    "session_id": s.and_then(|s| s.session_id.clone()),
                    "project": s.map(|s| s.project.clone()),
                    "title": s.map(|s| s.title.clone()),
                    "item": h.item,
                    "line": h.line,
                    "kind": h.kind,
                    "tool": (!h.tool.is_empty()).then(|| h.tool.clone()),
                    "time": rfc3339(h.ts),
                    "snippet": h.snippet,
                    "matches": h.marks.iter().map(|m| [m.0, m.1]).collect::<Vec<_>>(),
                })
            })
            .collect();
        let doc = json!({
            "version": 1,
            "pattern": args.pattern,
            "regex": args.regex,
            "hits": hits,
        });
        serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
    } else {
        let color = color_on(args.color);
        let mut out = String::new();
        for h in &hits {
            let path = crate::render::text::visible(&h.path.display().to_string());
            let what = if h.tool.is_empty() {
                h.kind.as_str()
            } else {
                h.tool.as_str()
            };
            let what = crate::render::text::visible(what);
            let time = h.ts.map(local).unwrap_or_default();
            let (p, l) = if color {
                (
                    format!("\x1b[35m{path}\x1b[0m"),
                    format!("\x1b[32m{}\x1b[0m", h.line),
                )
            } else {
                (path, h.line.to_string())
            };
            let _ = writeln!(
                out,
                "{p}:{l}  {time:16}  {what:12}  {}",
                paint(&h.snippet, &h.marks, color)
            );
        }
        out
    };
    let res = super::with_stdout(|w| w.write_all(out.as_bytes()));
    super::exit_code(res, code)
}

/// One session as `rawpv sessions --json` lists it.
pub fn session_json(s: &library::SessionRow) -> Value {
    json!({
        "path": s.path.to_string_lossy(),
        "format": s.format,
        "agent": s.agent,
        "session_id": s.session_id,
        "project": s.project,
        "title": s.title,
        "first_activity": rfc3339(s.first_ts),
        "last_activity": rfc3339(s.last_ts),
        "calls": s.calls,
        "errors": s.errors,
        "cancelled": s.cancelled,
        "tools": s.tools,
        "models": s.models,
        "tokens": {
            "input": s.tokens_in,
            "output": s.tokens_out,
            "cache_read": s.tokens_cache_read,
            "cache_write": s.tokens_cache_write,
        },
        "subagents": s.subagents,
        "compactions": s.compactions,
        "agent_version": s.agent_version,
        "git_branch": s.git_branch,
        "size": s.stamp.size,
        "error": s.error,
    })
}

/// Runs `rawpv sessions`; returns the exit code (0; 2 on an error).
pub fn sessions(args: &SessionsArgs) -> i32 {
    let f = match filter(args.project.as_ref(), args.since.as_ref(), None) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let rows = match ready(&args.dirs, args.config.as_deref(), false).and_then(|s| s.sessions(&f)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let out = if args.json {
        let doc = json!({
            "version": 1,
            "sessions": rows.iter().map(session_json).collect::<Vec<_>>(),
        });
        serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
    } else {
        let mut out = String::new();
        for s in &rows {
            let tokens = s.tokens_in + s.tokens_out + s.tokens_cache_read + s.tokens_cache_write;
            let _ = writeln!(
                out,
                "{:16}  {}  {} calls  {} errors  {} tokens  {}  {}",
                s.last_ts.map(local).unwrap_or_default(),
                crate::render::text::visible(&s.project),
                s.calls,
                s.errors,
                crate::ui::status_bar::short_count(tokens),
                crate::render::text::visible(&s.title),
                crate::render::text::visible(&s.path.display().to_string()),
            );
        }
        out
    };
    let res = super::with_stdout(|w| w.write_all(out.as_bytes()));
    super::exit_code(res, 0)
}
