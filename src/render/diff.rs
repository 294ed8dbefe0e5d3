//! `diff` renderer (first version: plain text / JSON tree fallback).

use super::{Block, RenderCtx, Rendered, Renderer};

/// Renderer for this `output_type`.
#[derive(Debug, Clone, Copy, Default)]
pub struct DiffRenderer;

impl Renderer for DiffRenderer {
    fn render(&self, block: &Block<'_>, cx: &RenderCtx<'_>) -> Rendered {
        super::text::TextRenderer.render(block, cx)
    }
}

/// Structured edit → diff lines (first version: JSON tree).
pub fn build_edit_lines(
    input: &serde_json::Value,
    _output: Option<&serde_json::Value>,
    cx: &RenderCtx<'_>,
) -> Rendered {
    super::json::build_json_lines(input, cx)
}
