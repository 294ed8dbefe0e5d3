//! The command line (clap derive), kept raw; `main.rs` dispatches on it.
//!
//! Who calls it: `main.rs`. Every flag has its `--help` text here as a doc comment.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// rawpv: a terminal viewer for AI-agent sessions (RAWP frames, Claude Code transcripts,
/// Anthropic Messages API conversations).
#[derive(Debug, Parser)]
#[command(name = "rawpv", version, about, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub open: OpenArgs,
}

/// Options of the interactive viewer (`rawpv [INPUT]`).
#[derive(Debug, Clone, Args, Default)]
pub struct OpenArgs {
    /// A session file, `-` for stdin, or a master's stream URL (ws://, wss://, http://, https://).
    /// Without it, rawpv lists the sessions under ~/.claude/projects.
    pub input: Option<String>,
    /// Follow a growing file: new frames appear as they are written.
    #[arg(short = 'f', long)]
    pub follow: bool,
    #[command(flatten)]
    pub net: NetArgs,
    /// Play the session back at its recorded pace: opens playing from the start (Space pauses,
    /// +/- speed, </> step, [/] turns, 0-9 seek); without it the whole session shows at once.
    #[arg(long)]
    pub replay: bool,
    /// Replay speed factor (0.25 to 64).
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Compress idle gaps in replay to at most this many seconds.
    #[arg(long, default_value_t = 2.0, value_parser = seconds)]
    pub max_idle: f64,
    /// Config file (default: the platform config directory's rawpv/config.toml).
    #[arg(long, env = "RAWPV_CONFIG")]
    pub config: Option<PathBuf>,
    /// Write a log file at this level (error, warn, info, debug, trace).
    #[arg(long, env = "RAWPV_LOG")]
    pub log_level: Option<String>,
}

/// Options for network inputs.
#[derive(Debug, Clone, Args, Default)]
pub struct NetArgs {
    /// File holding the Bearer token for a master's stream (else the `RAWP_TOKEN` variable).
    #[arg(long)]
    pub token_file: Option<PathBuf>,
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
    #[default]
    Text,
    Json,
}

/// An input for the one-shot commands.
#[derive(Debug, Clone, Args)]
pub struct InputArgs {
    /// A session file, `-` for stdin, or a stream URL.
    pub input: String,
    #[command(flatten)]
    pub net: NetArgs,
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
    /// Summarise the session: counts per tool, status and `output_type`, durations, tokens.
    Stats {
        #[command(flatten)]
        input: InputArgs,
    },
    /// Play a recording as a live WebSocket and SSE stream on loopback.
    Serve {
        /// The recording to play.
        file: PathBuf,
        /// Address to listen on (loopback by default).
        #[arg(long, default_value = "127.0.0.1:7878")]
        listen: String,
        /// Playback speed factor.
        #[arg(long, default_value_t = 1.0)]
        speed: f64,
        /// Require this Bearer token (file contents).
        #[arg(long)]
        token_file: Option<PathBuf>,
        /// Largest frame sent or accepted, in bytes.
        #[arg(long, default_value_t = 16 * 1024 * 1024)]
        max_frame_bytes: usize,
        /// Most concurrent clients.
        #[arg(long, default_value_t = 16)]
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
