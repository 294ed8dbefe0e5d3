//! `tree` renderer (first version: plain text / JSON tree fallback).

use super::{Block, RenderCtx, Rendered, Renderer};

/// Renderer for this `output_type`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TreeRenderer;

impl Renderer for TreeRenderer {
    fn render(&self, block: &Block<'_>, cx: &RenderCtx<'_>) -> Rendered {
        super::text::TextRenderer.render(block, cx)
    }
}
