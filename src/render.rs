//! Per-`output_type` renderers: data → `Vec<Line<'static>>` (STYLE 4.6).
//!
//! Who calls it: the detail pane (through the render cache), `print --detail`, tests and benches.
//! Invariants: renderers are pure (same inputs, same lines), do no I/O, take no locks, and do
//! bounded work ([`Limits`]). Untrusted text never reaches a `Line` with control characters in it
//! (see `render::text`). An unknown `output_type` renders, never errors.

pub mod text;

use ratatui::text::Line;
use serde_json::Value;

use crate::protocol::OutputType;
use crate::theme::Theme;

/// Guardrails on render work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Lines rendered per block before a "… N more lines" marker.
    pub max_lines: usize,
    /// Bytes of one block rendered at all; the rest is cut with a marker.
    pub max_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_lines: 20_000,
            max_bytes: 8 * 1024 * 1024,
        }
    }
}

/// Everything a renderer may depend on besides the data.
#[derive(Debug, Clone, Copy)]
pub struct RenderCtx<'a> {
    /// Width of the target area in columns.
    pub width: u16,
    pub theme: &'a Theme,
    pub limits: Limits,
}

/// A renderer's output.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rendered {
    pub lines: Vec<Line<'static>>,
    /// Something was cut by [`Limits`].
    pub truncated: bool,
}

/// What a renderer is given: the result's output and the context of the call.
#[derive(Debug, Clone, Copy)]
pub struct Block<'a> {
    pub output: &'a Value,
    pub output_type: &'a OutputType,
    pub tool_name: &'a str,
    /// The request's input (a path for `file_content`, old/new strings for `diff`, …).
    pub input: &'a Value,
}

/// One renderer per `output_type`.
pub trait Renderer: Sync {
    /// Pure: same inputs, same lines. No I/O, no locks, bounded work.
    fn render(&self, block: &Block<'_>, cx: &RenderCtx<'_>) -> Rendered;
}

/// The renderer for an `output_type`; unknown types fall back to text / JSON.
pub fn renderer_for(output_type: &OutputType) -> &'static dyn Renderer {
    match output_type {
        OutputType::Text
        | OutputType::Structured
        | OutputType::FileContent
        | OutputType::FileList
        | OutputType::Diff
        | OutputType::WebContent
        | OutputType::Empty
        | OutputType::BinaryRef
        | OutputType::AgentResult
        | OutputType::Unknown(_) => &text::TextRenderer,
    }
}
