//! `text` renderer: plain text, control characters neutralised.
//!
//! Who calls it: `renderer_for` for `text` and, for now, every other `output_type`.
//! Invariant: no byte of the input reaches a `Line` as a control character.

use ratatui::text::{Line, Span};
use serde_json::Value;

use super::{Block, RenderCtx, Rendered, Renderer};

/// Plain text renderer.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextRenderer;

impl Renderer for TextRenderer {
    fn render(&self, block: &Block<'_>, cx: &RenderCtx<'_>) -> Rendered {
        let text = match block.output {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => serde_json::to_string_pretty(other).unwrap_or_default(),
        };
        build_plain_lines(&text, cx)
    }
}

/// Splits text into lines, replacing control characters with visible pictures, within limits.
pub fn build_plain_lines(text: &str, cx: &RenderCtx<'_>) -> Rendered {
    let mut lines = Vec::new();
    let mut truncated = false;
    for (i, l) in text.lines().enumerate() {
        if i >= cx.limits.max_lines {
            truncated = true;
            let rest = text.lines().count() - i;
            lines.push(Line::from(Span::styled(
                format!("… {rest} more lines"),
                cx.theme.dim,
            )));
            break;
        }
        lines.push(Line::from(Span::styled(visible(l), cx.theme.text)));
    }
    Rendered { lines, truncated }
}

/// Replaces control characters (C0 except tab, DEL, C1) with Unicode control pictures / U+FFFD,
/// and expands tabs to spaces (8-column stops).
pub fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut col = 0usize;
    for c in s.chars() {
        match c {
            '\t' => {
                let n = 8 - col % 8;
                out.extend(std::iter::repeat_n(' ', n));
                col += n;
            }
            '\u{0}'..='\u{1f}' => {
                out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{FFFD}'));
                col += 1;
            }
            '\u{7f}' => {
                out.push('\u{2421}');
                col += 1;
            }
            '\u{80}'..='\u{9f}' => {
                out.push('\u{FFFD}');
                col += 1;
            }
            c => {
                out.push(c);
                col += 1;
            }
        }
    }
    out
}
