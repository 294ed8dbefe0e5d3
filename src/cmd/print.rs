//! `rawpv print INPUT [--detail] [--color auto|always|never] [--width N]`: the feed as text on
//! stdout, or with `--detail` every invocation's header, input and output drawn by the viewer's
//! renderers (`crate::render`).
//!
//! Colour: `always` writes our styles as SGR ([`crate::render::sgr::lines_to_ansi`]); `auto` does
//! so only when stdout is a terminal and `NO_COLOR` is unset; otherwise plain text. Either way the
//! untrusted content has been neutralised by the renderers: the only escape sequences written
//! are our own SGR. Lines are wrapped at `--width` (default: the terminal's, else 100 columns).

use std::io::{IsTerminal, Write};

use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::cli::{ColorChoice, InputArgs};
use crate::protocol::OutputType;
use crate::render::{RenderCtx, lines_to_string, render_input_beside, render_output, sgr, wrap};
use crate::session::{Invocation, Item, MessageKind, Session};
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
            Item::Message(_) if crate::view::is_quiet(session, idx) => {}
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
            Item::Event(f) => writeln!(
                out,
                "{:<10}",
                crate::render::text::visible(f.frame_type.as_str())
            )?,
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
    let mut cx = RenderCtx::new(width, &theme);
    cx.highlight = colour;
    cx.limits = limits;
    for inv in &session.invocations {
        // A deferred output is read back from the file for this call only.
        let lines = build_invocation_lines(&session.with_input_output(inv), &cx);
        let wrapped = wrap::wrap_lines(&lines, width);
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

/// One invocation's detail: header, input, then the output (or streamed text while open).
pub fn build_invocation_lines(inv: &Invocation, cx: &RenderCtx<'_>) -> Vec<Line<'static>> {
    let theme = cx.theme;
    let status_style = if inv.status.is_failure() {
        theme.status_failed
    } else if inv.status.is_open() {
        theme.status_running
    } else {
        theme.status_ok
    };
    let mut header = vec![
        Span::styled("━━ ", theme.border),
        Span::styled(crate::render::text::visible(&inv.tool_name), theme.title),
        Span::raw("  "),
        Span::styled(inv.status.label().to_owned(), status_style),
        Span::raw("  "),
        Span::styled(crate::render::text::visible(&inv.invocation_id), theme.dim),
    ];
    if let Some(ms) = inv.duration_ms() {
        header.push(Span::styled(format!("  {ms:.0} ms"), theme.dim));
    }
    let mut lines = vec![Line::from(header)];
    lines.push(crate::render::text::rule("input", theme.hint, cx));
    let output_type = inv
        .result
        .as_ref()
        .and_then(|r| r.output_type.clone())
        .unwrap_or(OutputType::Text);
    let shown_output = inv
        .result
        .as_ref()
        .and_then(|r| r.output.as_ref())
        .map(|o| (&output_type, o));
    lines.extend(render_input_beside(&inv.tool_name, &inv.input, shown_output, cx).lines);
    match inv.result.as_ref().and_then(|r| r.output.as_ref()) {
        Some(output) => {
            lines.push(crate::render::text::rule(
                &format!("output ({output_type})"),
                theme.hint,
                cx,
            ));
            lines.extend(render_output(&output_type, output, &inv.tool_name, &inv.input, cx).lines);
        }
        None if !inv.stream.is_empty() => {
            lines.push(crate::render::text::rule("stream", theme.hint, cx));
            let text = inv.stream.text(None);
            lines.extend(
                render_output(
                    &OutputType::Text,
                    &Value::String(text),
                    &inv.tool_name,
                    &inv.input,
                    cx,
                )
                .lines,
            );
        }
        None => {}
    }
    lines
}
