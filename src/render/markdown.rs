//! `markdown` renderer (first version: plain text / JSON tree fallback).

use super::{Block, RenderCtx, Rendered, Renderer};

/// Renderer for this `output_type`.
#[derive(Debug, Clone, Copy, Default)]
pub struct WebRenderer;

impl Renderer for WebRenderer {
    fn render(&self, block: &Block<'_>, cx: &RenderCtx<'_>) -> Rendered {
        super::text::TextRenderer.render(block, cx)
    }
}

/// Markdown → lines (first version: plain text).
pub fn build_markdown_lines(text: &str, cx: &RenderCtx<'_>) -> Rendered {
    super::text::build_plain_lines(text, cx)
}
