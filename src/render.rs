//! Per-`output_type` renderers: data → `Vec<Line<'static>>` (STYLE 4.6).
//!
//! Who calls it: the detail pipeline (`crate::detail`, for the viewer and `print --detail`), tests and
//! benches. Entry points: [`render_output`] for a result's `output` and [`render_input`] for a
//! request's `input`; [`renderer_for`] picks the renderer for one `output_type`.
//!
//! Invariants: renderers are pure (same inputs, same lines), do no I/O, take no locks, and do
//! bounded work ([`Limits`]). Untrusted text never reaches a `Line` with control characters in it
//! (see [`text::visible`] and [`ansi`]): the only styles in the output come from
//! [`crate::theme::Theme`], from SGR sequences in `text` outputs, or from syntect. An unknown
//! `output_type`, or a known one with an unexpected shape, renders (as a JSON tree or plain text),
//! never errors. The shapes each renderer accepts are listed in its module doc (`Shapes:`).
//!
//! Syntax highlighting is the only expensive step: with [`RenderCtx::highlight`] off the same
//! renderers give a cheap plain rendering, so the app can draw that at once and run the
//! highlighted rendering on `spawn_blocking`.

pub mod ansi;
pub mod cards;
pub mod code;
pub mod diff;
pub mod highlight;
pub mod input;
pub mod json;
pub mod markdown;
pub mod misc;
pub mod sgr;
pub mod text;
pub mod tree;
pub mod wrap;

use std::collections::HashSet;

use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::protocol::OutputType;
use crate::theme::Theme;

pub use input::{render_input, render_input_beside};

/// Guardrails on render work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Lines rendered per block before a "… N more lines" marker. 20,000 rows is far beyond a
    /// screenful but keeps a block's lines under a few MB.
    pub max_lines: usize,
    /// Bytes of one block rendered at all; the rest is cut with a marker (8 MiB: bigger than any
    /// single value seen in the corpus, whose largest line is 1 MB).
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
    /// Width of the target area in columns (renderers use it for layout choices such as
    /// side-by-side diffs and rules; wrapping is done afterwards by [`wrap::wrap_lines`]).
    pub width: u16,
    pub theme: &'a Theme,
    pub limits: Limits,
    /// Run syntect (see [`highlight`] for its limits). Off: the cheap plain rendering.
    pub highlight: bool,
    /// The caller wraps long lines at `width`. Renderers mostly leave wrapping to
    /// [`wrap::wrap_lines`]; the diff renderer lays out its own continuation rows (aligned after
    /// the gutter) when this is set, so its rows already fit.
    pub wrap: bool,
    /// Show diffs as two columns when `width >= SIDE_BY_SIDE_MIN_WIDTH`.
    pub side_by_side: bool,
    /// `file_list` as a flat list instead of a tree.
    pub flat_list: bool,
    /// JSON tree: nodes shown expanded down to this depth (0 = only the root line).
    pub expand_depth: usize,
    /// JSON tree: paths (as produced by [`json::child_path`], root `$`) whose expansion is
    /// toggled relative to the `expand_depth` default.
    pub toggled: Option<&'a HashSet<String>>,
}

/// Smallest width (columns) at which a side-by-side diff is drawn.
pub const SIDE_BY_SIDE_MIN_WIDTH: u16 = 140;

impl<'a> RenderCtx<'a> {
    /// Defaults: highlighting on, wrap on, unified diffs, tree lists, JSON expanded 3 levels.
    pub fn new(width: u16, theme: &'a Theme) -> Self {
        Self {
            width,
            theme,
            limits: Limits::default(),
            highlight: true,
            wrap: true,
            side_by_side: false,
            flat_list: false,
            expand_depth: 3,
            toggled: None,
        }
    }

    /// Bits of the flags that change the output, for cache keys.
    pub fn flags(&self) -> u8 {
        u8::from(self.highlight)
            | u8::from(self.wrap) << 1
            | u8::from(self.side_by_side) << 2
            | u8::from(self.flat_list) << 3
            | (self.expand_depth.min(15) as u8) << 4
    }
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

/// The renderer for an `output_type`; unknown types get the JSON tree (strings as text).
pub fn renderer_for(output_type: &OutputType) -> &'static dyn Renderer {
    match output_type {
        OutputType::Text => &text::TextRenderer,
        OutputType::FileContent => &code::CodeRenderer,
        OutputType::Diff => &diff::DiffRenderer,
        OutputType::FileList => &tree::TreeRenderer,
        OutputType::Structured | OutputType::Unknown(_) => &json::JsonRenderer,
        OutputType::WebContent => &markdown::WebRenderer,
        OutputType::Empty => &misc::EmptyRenderer,
        OutputType::BinaryRef => &misc::BinaryRenderer,
        OutputType::AgentResult => &misc::AgentRenderer,
    }
}

/// Renders a result's `output` (SPEC 3.2/3.4) with the renderer for `output_type`; `tool_name`
/// and the request's `input` give context (a path for highlighting, old/new strings, …).
pub fn render_output(
    output_type: &OutputType,
    output: &Value,
    tool_name: &str,
    input: &Value,
    cx: &RenderCtx<'_>,
) -> Rendered {
    // Claude Code's interactive and task tools draw as cards, whatever their `output_type`.
    if let Some(r) = cards::output_card(tool_name, output, cx) {
        return r;
    }
    let block = Block {
        output,
        output_type,
        tool_name,
        input,
    };
    renderer_for(output_type).render(&block, cx)
}

/// Line builder that stops keeping lines at `Limits::max_lines` and counts the rest.
#[derive(Debug)]
pub(crate) struct Out {
    pub lines: Vec<Line<'static>>,
    max: usize,
    dropped: usize,
}

impl Out {
    pub fn new(cx: &RenderCtx<'_>) -> Self {
        Self {
            lines: Vec::new(),
            max: cx.limits.max_lines,
            dropped: 0,
        }
    }

    pub fn push(&mut self, line: Line<'static>) {
        if self.lines.len() < self.max {
            self.lines.push(line);
        } else {
            self.dropped += 1;
        }
    }

    /// No more lines will be kept; callers may count the rest with [`Out::skip`].
    pub fn full(&self) -> bool {
        self.lines.len() >= self.max
    }

    /// Lines that can still be kept.
    pub fn room(&self) -> usize {
        self.max.saturating_sub(self.lines.len())
    }

    /// Counts `n` lines that were not built.
    pub fn skip(&mut self, n: usize) {
        self.dropped += n;
    }

    pub fn extend(&mut self, lines: impl IntoIterator<Item = Line<'static>>) {
        for l in lines {
            self.push(l);
        }
    }

    pub fn finish(self, theme: &Theme) -> Rendered {
        let Self {
            mut lines, dropped, ..
        } = self;
        let truncated = dropped > 0;
        if truncated {
            lines.push(more_lines(dropped, theme));
        }
        Rendered { lines, truncated }
    }
}

/// The "… N more lines" marker.
pub fn more_lines(n: usize, theme: &Theme) -> Line<'static> {
    let s = crate::fmt::plural_s(n);
    Line::from(Span::styled(format!("… {n} more line{s}"), theme.dim))
}

/// Plain text of lines (spans concatenated, one `\n` per line); for tests and plain output.
pub fn lines_to_string(lines: &[Line<'_>]) -> String {
    let mut s = String::new();
    for l in lines {
        for sp in &l.spans {
            s.push_str(&sp.content);
        }
        s.push('\n');
    }
    s
}

/// Looks up the first present key among spellings (`file_path`, `filePath`).
pub(crate) fn field<'v>(v: &'v Value, keys: &[&str]) -> Option<&'v Value> {
    let obj = v.as_object()?;
    keys.iter()
        .find_map(|k| obj.get(*k))
        .filter(|v| !v.is_null())
}

/// [`field`] as a string.
pub(crate) fn str_field<'v>(v: &'v Value, keys: &[&str]) -> Option<&'v str> {
    field(v, keys).and_then(Value::as_str)
}

/// Path of the file an output or input is about, if any.
pub(crate) fn file_path<'v>(output: &'v Value, input: &'v Value) -> Option<&'v str> {
    const KEYS: &[&str] = &["file_path", "filePath", "path", "notebook_path"];
    str_field(output, KEYS)
        .or_else(|| field(output, &["file"]).and_then(|f| str_field(f, KEYS)))
        .or_else(|| str_field(input, KEYS))
}
