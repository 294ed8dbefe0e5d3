//! `rawpv print INPUT`: the feed as text on stdout (plain when stdout is not a terminal).

use std::io::Write;

use crate::cli::{ColorChoice, InputArgs};
use crate::session::{Item, MessageKind, Session};

/// Runs the command; returns the exit code.
pub async fn run(
    input: &InputArgs,
    _detail: bool,
    _color: ColorChoice,
    _width: Option<u16>,
) -> i32 {
    let session = match super::load_session(input).await {
        Ok((s, _)) => s,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let r = super::with_stdout(|out| write_feed(out, &session));
    super::exit_code(r, 0)
}

/// Writes one line per feed item.
pub fn write_feed(out: &mut dyn Write, session: &Session) -> std::io::Result<()> {
    for item in &session.items {
        match item {
            Item::Invocation(i) => {
                let inv = &session.invocations[*i];
                // Names and ids are untrusted text too (issue 9).
                writeln!(
                    out,
                    "{:<10} {:<9} {}",
                    crate::render::text::visible(&inv.tool_name),
                    crate::render::text::visible(inv.status.label()),
                    crate::render::text::visible(&inv.invocation_id)
                )?;
            }
            Item::Message(m) => {
                let kind = match m.kind {
                    MessageKind::Prompt => "prompt",
                    MessageKind::AgentText => "agent",
                    MessageKind::Thinking => "thinking",
                };
                let first = m.text.lines().next().unwrap_or("");
                writeln!(out, "{kind:<10} {}", crate::render::text::visible(first))?;
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
