//! The live stream view of a call: its `tool.invoke.stream` chunks as lines (SPEC 3.3).
//!
//! Who calls it: [`crate::ui::detail`] while a call runs (or when its result carries no output).
//! Invariants: chunks are drawn in `sequence` order (the [`ChunkBuffer`] keeps them sorted);
//! `stderr` is styled apart from `stdout`, `progress` is dim; a missing `sequence` range shows a
//! `⋯ chunks N–M missing` marker where it belongs; text goes through `visible` (no control
//! sequences reach the terminal). Chunk boundaries are not line boundaries: a line may be built
//! from several chunks, each keeping its own style.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::protocol::StreamType;
use crate::render::text::visible;
use crate::session::ChunkBuffer;
use crate::theme::Theme;

/// Builds the stream's lines, at most `max_lines` (the *last* ones: a live tail matters most);
/// returns the lines and how many earlier lines were left out.
pub fn build_stream_lines(
    stream: &ChunkBuffer,
    theme: &Theme,
    max_lines: usize,
) -> (Vec<Line<'static>>, usize) {
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut cur: Vec<Span<'static>> = Vec::new();
    let mut next_seq = 0u64;
    for c in stream.chunks() {
        if let Some(s) = c.sequence {
            if s > next_seq {
                if !cur.is_empty() {
                    lines.push(Line::from(std::mem::take(&mut cur)));
                }
                let label = if s - 1 == next_seq {
                    format!("⋯ chunk {next_seq} missing")
                } else {
                    format!("⋯ chunks {next_seq}–{} missing", s - 1)
                };
                lines.push(Line::from(Span::styled(label, theme.finding_warning)));
            }
            next_seq = next_seq.max(s + 1);
        }
        let style = match &c.stream_type {
            StreamType::Stdout | StreamType::Unknown(_) => theme.text,
            StreamType::Stderr => theme.finding_error,
            StreamType::Progress => theme.dim,
        };
        push_text(&mut lines, &mut cur, &c.text, style);
    }
    if !cur.is_empty() {
        lines.push(Line::from(cur));
    }
    if stream.duplicates > 0 {
        lines.push(Line::from(Span::styled(
            format!("⋯ {} duplicate chunks dropped", stream.duplicates),
            theme.finding_warning,
        )));
    }
    if stream.dropped_bytes > 0 {
        lines.push(Line::from(Span::styled(
            format!(
                "⋯ {} bytes over the stream cap not kept",
                stream.dropped_bytes
            ),
            theme.finding_warning,
        )));
    }
    let skipped = lines.len().saturating_sub(max_lines);
    if skipped > 0 {
        lines.drain(..skipped);
    }
    (lines, skipped)
}

fn push_text(
    lines: &mut Vec<Line<'static>>,
    cur: &mut Vec<Span<'static>>,
    text: &str,
    style: Style,
) {
    let mut parts = text.split('\n').peekable();
    while let Some(p) = parts.next() {
        let p = p.strip_suffix('\r').unwrap_or(p);
        if !p.is_empty() {
            cur.push(Span::styled(visible(p), style));
        }
        if parts.peek().is_some() {
            lines.push(Line::from(std::mem::take(cur)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Chunk;

    fn chunk(seq: u64, t: StreamType, text: &str) -> Chunk {
        Chunk {
            sequence: Some(seq),
            stream_type: t,
            text: text.into(),
            line: 0,
        }
    }

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn order_gaps_and_partial_lines() {
        let mut b = ChunkBuffer::default();
        b.insert(chunk(3, StreamType::Stderr, "warn\n"));
        b.insert(chunk(0, StreamType::Stdout, "hel"));
        b.insert(chunk(1, StreamType::Stdout, "lo\nwor"));
        let theme = Theme::dark();
        let (lines, skipped) = build_stream_lines(&b, &theme, 100);
        assert_eq!(skipped, 0);
        assert_eq!(texts(&lines), ["hello", "wor", "⋯ chunk 2 missing", "warn"]);
        assert_eq!(lines[3].spans[0].style, theme.finding_error);
        let (tail, skipped) = build_stream_lines(&b, &theme, 2);
        assert_eq!(skipped, 2);
        assert_eq!(texts(&tail), ["⋯ chunk 2 missing", "warn"]);
    }
}
