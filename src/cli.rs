//! The command line (clap derive), kept raw; `main.rs` dispatches on it.
//!
//! Who calls it: `main.rs`. Every flag has its `--help` text here as a doc comment.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::replay::{MAX_SPEED, MIN_SPEED};
use crate::source::NetConfig;

/// rawpv: a terminal viewer for AI-agent sessions (RAWP frames, Claude Code transcripts,
/// Anthropic Messages API conversations).
#[derive(Debug, Parser)]
#[command(name = "rawpv", version, about, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Write a log file at this level (see `--help`).
    #[arg(
        long,
        global = true,
        env = "RAWPV_LOG",
        value_name = "LEVEL",
        help = "Write a log file at this level (error, warn, info, debug, trace; off)",
        long_help = "Write a log file at this level (error, warn, info, debug, trace; off): \
                     rawpv.log in the platform state directory, $XDG_STATE_HOME/rawpv or \
                     ~/.local/state/rawpv on Linux, ~/Library/Caches/rawpv on macOS, \
                     %LOCALAPPDATA%\\rawpv\\cache on Windows. Appended; tokens are never logged."
    )]
    pub log_level: Option<String>,
    #[command(flatten)]
    pub open: OpenArgs,
}

/// Options of the interactive viewer (`rawpv [INPUT]`).
#[derive(Debug, Clone, Args, Default)]
pub struct OpenArgs {
    /// A session file, a directory (every session file under it, merged), `-` for stdin, or a
    /// master's stream URL (ws://, wss://, http://, https://). Without it, rawpv lists the
    /// sessions under ~/.claude/projects.
    pub input: Option<String>,
    /// More inputs, as INPUT, all in one view: saved files merged by time, live ones by
    /// arrival; each row tagged with its session.
    #[arg(value_name = "MORE", requires = "input")]
    pub more: Vec<String>,
    /// Follow a growing file: new frames appear as they are written.
    #[arg(short = 'f', long)]
    pub follow: bool,
    /// Open the newest session of the project in the current directory (or its nearest parent
    /// with sessions; Claude Code and Codex), following it as -f does.
    #[arg(long, conflicts_with = "input")]
    pub latest: bool,
    #[command(flatten)]
    pub net: NetArgs,
    /// Play the session back at its recorded pace: opens playing from the start (Space pauses,
    /// +/- speed, </> step, [/] turns, 0-9 seek); without it the whole session shows at once.
    #[arg(long)]
    pub replay: bool,
    /// Replay speed factor (0.25 to 64).
    #[arg(long, default_value_t = 1.0, value_parser = replay_speed)]
    pub speed: f64,
    /// Compress idle gaps in replay to at most this many seconds.
    #[arg(long, default_value_t = 2.0, value_parser = seconds)]
    pub max_idle: f64,
    /// Config file (default: the platform config directory's rawpv/config.toml).
    #[arg(long, env = "RAWPV_CONFIG")]
    pub config: Option<PathBuf>,
    /// The browser without the library index: list the session files as they are (no search
    /// across sessions, no per-session summaries); the index is neither read nor written.
    #[arg(long)]
    pub no_index: bool,
    /// Colours, over the config's `theme`: auto (ask the terminal for its background, the
    /// default), dark, light, 16 (basic ANSI colours) or mono.
    #[arg(long, value_name = "NAME")]
    pub theme: Option<crate::config::ThemeName>,
}

/// Options for network inputs.
#[derive(Debug, Clone, Args, Default)]
pub struct NetArgs {
    /// File holding the Bearer token for a master's stream (else the `RAWP_TOKEN` variable).
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// URL inputs over WebSocket: send a Ping this often while connected, e.g. `15s`, `500ms`,
    /// `1m` (a bare number is seconds; `off` or 0 sends none) [default: 15s].
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub ping_interval: Option<Duration>,
    /// URL inputs: a connection that hears nothing from the server this long (no frame, Pong or
    /// heartbeat) is dropped and resumed, e.g. `60s`, `2m` (`off` or 0 waits forever)
    /// [default: 60s]. Keep it well above --ping-interval.
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub read_timeout: Option<Duration>,
}

impl NetArgs {
    /// Puts `--ping-interval` / `--read-timeout` into `cfg` (zero: off); warns (into
    /// `cfg.warnings`) when both are given and the read timeout would expire before the next
    /// ping (with one of them only, the server's own heartbeats may well keep the stream open).
    pub fn apply(&self, cfg: &mut NetConfig) {
        if let Some(d) = self.ping_interval {
            cfg.ping_interval = (!d.is_zero()).then_some(d);
        }
        if let Some(d) = self.read_timeout {
            cfg.read_timeout = (!d.is_zero()).then_some(d);
        }
        if let (Some(p), Some(r)) = (self.ping_interval, self.read_timeout)
            && !p.is_zero()
            && !r.is_zero()
            && r <= p
        {
            cfg.warnings.push(format!(
                "--read-timeout {} is not above --ping-interval {}: a WebSocket stream that is \
                 idle may be dropped and resumed unless the server sends heartbeats",
                humantime::format_duration(r),
                humantime::format_duration(p)
            ));
        }
    }
}

/// When to colour non-interactive output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ColorChoice {
    /// Colour only when stdout is a terminal and `NO_COLOR` is unset.
    #[default]
    Auto,
    Always,
    Never,
}

/// Output format of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum CheckFormat {
    /// One `file:line: level[code] message (spec)` line per finding, then a summary.
    #[default]
    Text,
    /// The versioned JSON report (`schemas/check-report.v1.json`).
    Json,
    /// SARIF 2.1.0 (GitHub code scanning and other static-analysis viewers).
    Sarif,
    /// JUnit XML (CI test reports): one test case per finding.
    Junit,
}

/// The inputs of the one-shot commands: one, or several (issue 24).
#[derive(Debug, Clone, Args)]
pub struct InputArgs {
    /// A session file, a directory (every session file under it), `-` for stdin, or a stream
    /// URL.
    pub input: String,
    /// More inputs, as INPUT: saved files are merged by time and each row is tagged with its
    /// session (`check` reports on each input in turn).
    #[arg(value_name = "MORE")]
    pub more: Vec<String>,
    #[command(flatten)]
    pub net: NetArgs,
}

/// `rawpv stats`'s inputs and report options.
#[derive(Debug, Clone, Args)]
pub struct StatsArgs {
    /// Session files or directories (a directory lists its sessions as the browser does:
    /// `<project>/<session>.jsonl`, Codex's `YYYY/MM/DD`, Gemini's `tmp/<hash>/chats`), `-` for
    /// stdin, or a stream URL (one input only).
    #[arg(required_unless_present = "all")]
    pub inputs: Vec<String>,
    /// Every session of the library: ~/.claude/projects, ~/.config/claude/projects, each
    /// `CLAUDE_CONFIG_DIR` entry's projects, Codex's and Gemini's sessions and the config's
    /// browser.dirs.
    #[arg(long)]
    pub all: bool,
    /// Group the report by local day (the TZ variable's zone, else the system's), week
    /// (starting Monday, as ccusage), month, project (the session's cwd), session, tool (calls only) or
    /// model.
    #[arg(long, value_enum)]
    pub by: Option<crate::usage::report::By>,
    /// Only usage and calls on or after this local date (YYYY-MM-DD or YYYYMMDD).
    #[arg(long, value_parser = date)]
    pub since: Option<chrono::NaiveDate>,
    /// Only usage and calls on or before this local date (YYYY-MM-DD or YYYYMMDD).
    #[arg(long, value_parser = date)]
    pub until: Option<chrono::NaiveDate>,
    /// The report as JSON (schemas/stats-report.v1.json).
    #[arg(long)]
    pub json: bool,
    /// Read every session file again: neither read nor write the usage cache (usage-v1.json
    /// in the platform cache directory, ~/.cache/rawpv on Linux).
    #[arg(long)]
    pub no_cache: bool,
    /// Config file (prices overrides, browser.dirs; default: the platform config directory's
    /// rawpv/config.toml).
    #[arg(long, env = "RAWPV_CONFIG")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub net: NetArgs,
}

impl StatsArgs {
    /// Whether this is a report over many sessions (else the one-session summary).
    pub fn is_report(&self) -> bool {
        self.all
            || self.inputs.len() > 1
            || self.by.is_some()
            || self.since.is_some()
            || self.until.is_some()
            || self.json
            || self
                .inputs
                .first()
                .is_some_and(|i| std::path::Path::new(i).is_dir())
    }
}

/// `rawpv search --help`'s description: the pattern's semantics (issue 27 item 5).
const SEARCH_ABOUT: &str = "Search every session's prompts, replies, thinking and tool inputs \
and outputs, ripgrep-style: one line per hit (session file, source line, time, tool, snippet).

PATTERN is words, all required (AND): a word matches a whole word of the text, case ignored \
(words are runs of letters and digits, as SQLite FTS5 reads them: `_`, `.` and `-` separate \
them); word* matches any word starting so; \"two words\" matches them in that order with only \
spaces or punctuation between; a word holding punctuation (main.rs) matches it as written. \
The index finds candidates and each one is checked against the session's decoded text, read \
again from its file, so what is listed is exactly what the text holds. --regex narrows the \
hits to those whose text the regular expression matches (Rust regex syntax; exact); with \
--regex and no words, every session is read.

Sessions: ~/.claude/projects, ~/.config/claude/projects, each CLAUDE_CONFIG_DIR entry's \
projects, ~/.codex/sessions ($CODEX_HOME), ~/.gemini/tmp, the config's browser.dirs and the \
--dir directories. The index (library.sqlite in the platform cache directory, ~/.cache/rawpv \
on Linux) is brought up to date first: only new or changed files are read.

Exit status: 0 a hit, 1 none, 2 an error.";

/// `rawpv search`'s arguments.
#[derive(Debug, Clone, Args)]
pub struct SearchArgs {
    /// Words to find (see above); may be empty with --regex.
    #[arg(default_value = "")]
    pub pattern: String,
    /// Only sessions whose project (its working directory) contains this text.
    #[arg(long)]
    pub project: Option<String>,
    /// Only sessions active since this long ago (7d, 12h, 30m) or this local date (YYYY-MM-DD).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only calls of this tool (case ignored).
    #[arg(long)]
    pub tool: Option<String>,
    /// Only hits whose text this regular expression matches.
    #[arg(long, value_name = "REGEX")]
    pub regex: Option<String>,
    /// The hits as JSON (schemas/search.v1.json).
    #[arg(long)]
    pub json: bool,
    /// At most this many hits.
    #[arg(long, value_name = "N")]
    pub max: Option<usize>,
    /// More session directories (or files) to search, besides the library's.
    #[arg(long = "dir", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Use no index: read every session file (slow, exact; the index is neither read nor
    /// written).
    #[arg(long)]
    pub no_index: bool,
    /// When to colour the matches.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Config file (browser.dirs, library.index).
    #[arg(long, env = "RAWPV_CONFIG")]
    pub config: Option<PathBuf>,
}

/// `rawpv sessions`' arguments.
#[derive(Debug, Clone, Args)]
pub struct SessionsArgs {
    /// Only sessions whose project (its working directory) contains this text.
    #[arg(long)]
    pub project: Option<String>,
    /// Only sessions active since this long ago (7d, 12h, 30m) or this local date (YYYY-MM-DD).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// The list as JSON (schemas/sessions.v1.json).
    #[arg(long)]
    pub json: bool,
    /// More session directories (or files), besides the library's.
    #[arg(long = "dir", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Config file (browser.dirs, library.index).
    #[arg(long, env = "RAWPV_CONFIG")]
    pub config: Option<PathBuf>,
}

/// A date: `2026-02-12` or `20260212`.
fn date(s: &str) -> Result<chrono::NaiveDate, String> {
    let s = s.trim();
    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .or_else(|_| chrono::NaiveDate::parse_from_str(s, "%Y%m%d"))
        .map_err(|_| "not a date: use YYYY-MM-DD or YYYYMMDD".to_owned())
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Open the embedded demo session.
    Demo,
    /// Print the feed (or, with --detail, every invocation's detail) to stdout.
    Print {
        #[command(flatten)]
        input: InputArgs,
        /// Write every invocation's detail, drawn by the viewer's renderers.
        #[arg(long)]
        detail: bool,
        /// Also list the quiet rows the viewer hides until `.` (token usage, progress ticks,
        /// file-history snapshots, hook runs shown in their call's detail, attached context).
        #[arg(long)]
        all: bool,
        /// When to use colour.
        #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
        color: ColorChoice,
        /// Width in columns for wrapped output (default: the terminal's, else 100).
        #[arg(long)]
        width: Option<u16>,
        /// Config file for render limits and the syntect theme (default: the platform config
        /// directory's rawpv/config.toml).
        #[arg(long, env = "RAWPV_CONFIG")]
        config: Option<PathBuf>,
        /// Replace known secret shapes with `[REDACTED: kind]` (gitleaks' rules, as `rawpv
        /// export` does); how many of which kind goes to stderr at the end.
        #[arg(long)]
        redact: bool,
    },
    /// Write the session as RAWP NDJSON to stdout, one frame per line.
    Convert {
        #[command(flatten)]
        input: InputArgs,
    },
    /// Check conformance; exit 0 when no error-level finding, 1 when there is one, 2 on bad input.
    Check {
        #[command(flatten)]
        input: InputArgs,
        /// Output format.
        #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
        format: CheckFormat,
    },
    /// Summarise the session: counts per tool, status and `output_type`, durations, tokens,
    /// cost; over a directory, several files or `--all`: usage grouped by day, week, month,
    /// project, session, tool or model (`--by`), as ccusage reports it.
    Stats(StatsArgs),
    /// Search every session's prompts, replies, thinking and tool inputs and outputs (the
    /// library index); exit 0 when something is found, 1 when nothing is, 2 on error.
    #[command(long_about = SEARCH_ABOUT)]
    Search(SearchArgs),
    /// List the library's sessions, last activity first (the library index).
    Sessions(SessionsArgs),
    /// Write the net change of the session's files as a git-style patch (`git apply` it from the
    /// session's working directory); exit 1 when none can be made.
    Patch {
        #[command(flatten)]
        input: InputArgs,
        /// Only this file (as the session names it, or relative to its working directory);
        /// repeatable.
        #[arg(long = "file", value_name = "PATH")]
        files: Vec<String>,
    },
    /// List what the session did that a reviewer should see: shell commands, network access,
    /// writes outside the working directory, permission-mode changes and approvals.
    Audit {
        #[command(flatten)]
        input: InputArgs,
        /// One JSON object per entry and line instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write the session as a self-contained HTML page or as Markdown, to share it; secrets
    /// are redacted unless --no-redact.
    Export {
        /// With MORE session files, Markdown holds each session in turn, one document (files
        /// only); an HTML page holds all their sessions, merged by time.
        #[command(flatten)]
        input: InputArgs,
        /// The file to write (`-` for stdout); its extension (.html, .md) sets the format
        /// unless --format does.
        #[arg(short = 'o', long, value_name = "FILE")]
        output: String,
        /// Output format (default: from the file's extension).
        #[arg(long, value_enum)]
        format: Option<crate::export::Format>,
        /// Markdown: prompts and replies only; plus one line per call; everything.
        #[arg(long, value_enum, default_value_t = crate::export::Depth::Full)]
        depth: crate::export::Depth,
        /// Keep secrets as recorded (by default known secret shapes become `[REDACTED: kind]`).
        #[arg(long)]
        no_redact: bool,
        /// Markdown: lines of one input or output kept before a note says how much was cut
        /// (0 keeps everything).
        #[arg(long, default_value_t = 200, value_name = "N")]
        max_lines: usize,
    },
    /// Serve recordings as one live WebSocket and SSE stream (loopback by default): a finished
    /// recording is played by its timestamps; with --follow, files still being written are
    /// relayed as they grow. Several files are merged into one stream (by timestamp; with
    /// --follow, in arrival order), each frame tagged with its session. Ctrl-C (or SIGTERM)
    /// closes every client stream normally.
    #[command(
        after_help = "Clients: ws://ADDR/ws or http://ADDR/events; resume with ?after=N or \
                      Last-Event-ID: N (N = the last metadata.stream_index / SSE id received)."
    )]
    Serve {
        /// The recordings to serve (one or more; merged into one stream).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Follow the files as they are written (like `tail -F`): frames go out as they are
        /// decoded, with no pacing; the stream lasts until the server stops.
        #[arg(short = 'f', long)]
        follow: bool,
        /// With --follow: the most frame bytes kept for clients that connect or resume later
        /// (1 or more); past it the oldest frames are dropped, a new client starts at the oldest
        /// kept and a resume from before it is refused (HTTP 410).
        #[arg(
            long,
            default_value_t = 256 * 1024 * 1024,
            value_parser = at_least_one,
            requires = "follow"
        )]
        retain_bytes: usize,
        /// Address to listen on (loopback by default).
        #[arg(long, default_value = "127.0.0.1:7878")]
        listen: String,
        /// Playback speed factor (above 0; 2 plays twice as fast); not with --follow, which
        /// sends frames as they arrive.
        #[arg(long, default_value_t = 1.0, value_parser = serve_speed, conflicts_with = "follow")]
        speed: f64,
        /// Require this Bearer token (file contents).
        #[arg(long)]
        token_file: Option<PathBuf>,
        /// Largest frame sent or accepted, in bytes (1 or more).
        #[arg(long, default_value_t = 16 * 1024 * 1024, value_parser = at_least_one)]
        max_frame_bytes: usize,
        /// Most concurrent clients (1 or more).
        #[arg(long, default_value_t = 16, value_parser = at_least_one)]
        max_clients: usize,
    },
}

/// `--max-idle`: a number of seconds, 0 or more (`inf` keeps every gap); NaN and negatives are
/// refused (NaN used to play the whole replay at once).
fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v >= 0.0 => Ok(v),
        Ok(_) => Err("must be a number of seconds, 0 or more".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// `--speed` of the viewer's replay: a number from [`MIN_SPEED`] to [`MAX_SPEED`]; NaN, infinities,
/// zero and negatives are refused (NaN used to play at 1× silently).
fn replay_speed(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (MIN_SPEED..=MAX_SPEED).contains(&v) => Ok(v),
        Ok(_) => Err(format!("must be a number from {MIN_SPEED} to {MAX_SPEED}")),
        Err(e) => Err(e.to_string()),
    }
}

/// `serve --speed`: a finite number above 0.
fn serve_speed(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        Ok(_) => Err("must be a finite number above 0".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// A count of 1 or more.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be 1 or more".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Longest accepted duration: a day (longer ones are typos, and a deadline that far out could
/// overflow the clock).
const MAX_DURATION: Duration = Duration::from_hours(24);

/// A human duration: `15s`, `500ms`, `1m 30s` (humantime syntax), a bare number of seconds
/// (`2.5`), or `off` (zero). At most a day.
fn duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let d = if s.eq_ignore_ascii_case("off") {
        Duration::ZERO
    } else if let Ok(secs) = s.parse::<f64>() {
        if !(secs.is_finite() && secs >= 0.0) {
            return Err("must be a duration like 15s or 500ms, or off".into());
        }
        // Too big for a `Duration` is also more than a day.
        Duration::try_from_secs_f64(secs)
            .map_err(|_| "must be at most a day (24h), or off".to_owned())?
    } else {
        // humantime's own messages ("expected number at 0") do not help here.
        humantime::parse_duration(s)
            .map_err(|_| "not a duration: use one like 15s, 500ms or 1m, or off".to_owned())?
    };
    if d > MAX_DURATION {
        return Err("must be at most a day (24h), or off".into());
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration("15s"), Ok(Duration::from_secs(15)));
        assert_eq!(duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("1m 30s"), Ok(Duration::from_secs(90)));
        assert_eq!(duration("2.5"), Ok(Duration::from_millis(2500)));
        assert_eq!(duration("off"), Ok(Duration::ZERO));
        assert_eq!(duration("0"), Ok(Duration::ZERO));
        assert_eq!(
            duration("99999999999999999999"),
            Err("must be at most a day (24h), or off".to_owned())
        );
        for bad in ["nan", "-1", "inf", "abc", "15 parsecs", "25h", "1000years"] {
            assert!(duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn speeds_and_counts() {
        assert_eq!(replay_speed("2"), Ok(2.0));
        for bad in ["nan", "inf", "-inf", "-1", "0", "0.1", "100", "x"] {
            assert!(replay_speed(bad).is_err(), "{bad}");
        }
        assert_eq!(serve_speed("100"), Ok(100.0));
        for bad in ["nan", "inf", "-1", "0"] {
            assert!(serve_speed(bad).is_err(), "{bad}");
        }
        assert_eq!(at_least_one("3"), Ok(3));
        assert!(at_least_one("0").is_err());
    }

    #[test]
    fn net_flags_reach_the_config() {
        let mut cfg = NetConfig::default();
        NetArgs {
            token_file: None,
            ping_interval: Some(Duration::ZERO),
            read_timeout: Some(Duration::from_millis(300)),
        }
        .apply(&mut cfg);
        assert_eq!(cfg.ping_interval, None);
        assert_eq!(cfg.read_timeout, Some(Duration::from_millis(300)));
        assert!(cfg.warnings.is_empty());
        let mut cfg = NetConfig::default();
        NetArgs {
            read_timeout: Some(Duration::from_secs(10)),
            ..NetArgs::default()
        }
        .apply(&mut cfg);
        assert_eq!(cfg.ping_interval, Some(crate::source::net::PING_INTERVAL));
        assert!(
            cfg.warnings.is_empty(),
            "the default ping is no contradiction"
        );
        NetArgs {
            ping_interval: Some(Duration::from_secs(20)),
            read_timeout: Some(Duration::from_secs(10)),
            ..NetArgs::default()
        }
        .apply(&mut cfg);
        assert!(
            cfg.warnings[0].contains("--read-timeout 10s is not above --ping-interval 20s"),
            "{:?}",
            cfg.warnings
        );
    }
}
