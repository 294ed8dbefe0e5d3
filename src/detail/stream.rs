//! A call's stream section: its `tool.invoke.stream` chunks as lines (SPEC 3.3).
//!
//! Who calls it: [`super::build`] for the Stream section of a call (live while it runs, folded
//! under its output after), so the viewer and `print --detail` show the same lines.
//! Invariants: chunks are drawn in `sequence` order (the [`ChunkBuffer`] keeps them sorted)
//! through the same terminal emulator as `text` results ([`crate::render::ansi::Terminal`]), so
//! a `docker pull` redraw shows its final lines, never `␛[1A␛[2K␍…`; `stderr` is styled apart
//! from `stdout`, `progress` is dim; a missing `sequence` range shows a `⋯ chunks N–M missing`
//! marker where it belongs; no control sequence reaches the terminal. Chunk boundaries are not
//! line boundaries: a line may be built from several chunks, each keeping its own style.

use crate::protocol::StreamType;
use crate::render::ansi::Terminal;
use crate::session::ChunkBuffer;
use crate::theme::Theme;
use ratatui::text::Line;

/// Builds the stream's lines, at most `max_lines` (the *last* ones: a live tail matters most);
/// returns the lines and how many earlier lines were left out.
pub fn build_stream_lines(
    stream: &ChunkBuffer,
    theme: &Theme,
    max_lines: usize,
) -> (Vec<Line<'static>>, usize) {
    // Every line is kept while the screen is built (the stream is capped in bytes), then only
    // the tail.
    let mut term = Terminal::new(theme, usize::MAX);
    let mut next_seq = 0u64;
    for c in stream.chunks() {
        if let Some(s) = c.sequence {
            if s > next_seq {
                let label = if s - 1 == next_seq {
                    format!("⋯ chunk {next_seq} missing")
                } else {
                    format!("⋯ chunks {next_seq}–{} missing", s - 1)
                };
                term.marker(&label, theme.finding_warning);
            }
            next_seq = next_seq.max(s.saturating_add(1));
        }
        let style = match &c.stream_type {
            StreamType::Stdout | StreamType::Unknown(_) => theme.text,
            StreamType::Stderr => theme.finding_error,
            StreamType::Progress => theme.dim,
        };
        term.feed(&c.text, style);
    }
    if stream.duplicates > 0 {
        term.marker(
            &format!("⋯ {} duplicate chunks dropped", stream.duplicates),
            theme.finding_warning,
        );
    }
    if stream.dropped_chunks > 0 {
        term.marker(
            &format!(
                "⋯ {} chunks ({} bytes) over the stream cap not kept",
                stream.dropped_chunks, stream.dropped_bytes
            ),
            theme.finding_warning,
        );
    }
    let (mut lines, _) = term.finish();
    let skipped = lines.len().saturating_sub(max_lines);
    if skipped > 0 {
        lines.drain(..skipped);
    }
    (lines, skipped)
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
        // A redraw in a later chunk edits the lines an earlier one wrote (docker pull).
        let mut b = ChunkBuffer::default();
        b.insert(chunk(
            0,
            StreamType::Stdout,
            "layer 1: Waiting\nlayer 2: Waiting\n",
        ));
        b.insert(chunk(
            1,
            StreamType::Stdout,
            "\x1b[2A\x1b[2K\rlayer 1: Done\x1b[2B",
        ));
        let (lines, _) = build_stream_lines(&b, &theme, 100);
        assert_eq!(texts(&lines), ["layer 1: Done", "layer 2: Waiting"]);
    }
}
