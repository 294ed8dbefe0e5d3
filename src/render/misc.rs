//! Small renderers: `empty`, `binary_ref` (metadata only, never bytes) and `agent_result`
//! (description, the final text as markdown, totals).
//!
//! Who calls it: `renderer_for`. Shapes: `empty` anything; `binary_ref` an object of metadata
//! (`name`, `media_type`, `size`, `uri`, camelCase spellings too); `agent_result` a string, or
//! `{content|result|text, description?, total_duration_ms?, total_tokens?, …}`; anything else
//! falls back to the JSON tree.

use ratatui::text::{Line, Span};
use serde_json::Value;

use super::{Block, Out, RenderCtx, Rendered, Renderer, field, str_field};

/// `empty`: a dim "(empty)" line, or the value as JSON when it is not actually empty.
#[derive(Debug, Clone, Copy, Default)]
pub struct EmptyRenderer;

impl Renderer for EmptyRenderer {
    fn render(&self, block: &Block<'_>, cx: &RenderCtx<'_>) -> Rendered {
        match block.output {
            Value::Null => dim_line("(empty)", cx),
            Value::String(s) if s.trim().is_empty() => dim_line("(empty)", cx),
            other => super::json::JsonRenderer.render(
                &Block {
                    output: other,
                    ..*block
                },
                cx,
            ),
        }
    }
}

fn dim_line(s: &str, cx: &RenderCtx<'_>) -> Rendered {
    Rendered {
        lines: vec![Line::from(Span::styled(s.to_owned(), cx.theme.dim))],
        truncated: false,
    }
}

/// `binary_ref`: name, media type, size and URI, never content.
#[derive(Debug, Clone, Copy, Default)]
pub struct BinaryRenderer;

impl Renderer for BinaryRenderer {
    fn render(&self, block: &Block<'_>, cx: &RenderCtx<'_>) -> Rendered {
        let v = block.output;
        if !v.is_object() {
            return dim_line("(binary content not shown)", cx);
        }
        let theme = cx.theme;
        let mut out = Out::new(cx);
        let row = |label: &str, value: String| {
            let mut spans = vec![Span::styled(format!("{label:<11}"), theme.dim)];
            spans.extend(super::text::plain_spans(&value, theme.text, theme));
            Line::from(spans)
        };
        let title = match str_field(v, &["kind"]) {
            Some("document") => "document",
            Some("image") => "image",
            _ => "binary content",
        };
        out.push(Line::from(Span::styled(title, theme.title)));
        if let Some(n) = str_field(v, &["name", "filename", "file_path", "filePath"]) {
            out.push(row("name", n.to_owned()));
        }
        if let Some(m) = str_field(v, &["media_type", "mediaType", "mime_type", "mimeType"]) {
            out.push(row("media type", m.to_owned()));
        }
        if let Some(s) = field(v, &["size", "size_bytes", "bytes"]).and_then(Value::as_u64) {
            out.push(row("size", format!("{} ({s} bytes)", crate::fmt::bytes(s))));
        }
        if let Some(u) = str_field(v, &["uri", "url"]) {
            // A `data:` URI would be the bytes themselves: show only its header.
            let shown = match u.split_once(',') {
                Some((head, data)) if u.starts_with("data:") => {
                    format!("{head},… ({} chars)", data.len())
                }
                _ => u.to_owned(),
            };
            out.push(row("uri", shown));
        }
        out.finish(theme)
    }
}

/// `agent_result`: the sub-agent's description, final text (markdown) and totals.
#[derive(Debug, Clone, Copy, Default)]
pub struct AgentRenderer;

impl Renderer for AgentRenderer {
    fn render(&self, block: &Block<'_>, cx: &RenderCtx<'_>) -> Rendered {
        let v = block.output;
        let theme = cx.theme;
        let text = match v {
            Value::String(s) => s.clone(),
            Value::Object(_) => match field(v, &["content", "result", "text"]) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(parts)) => parts
                    .iter()
                    .filter_map(|p| match p {
                        Value::String(s) => Some(s.as_str()),
                        p => str_field(p, &["text"]),
                    })
                    .collect::<Vec<_>>()
                    .join("\n\n"),
                _ => return super::json::build_json_lines(v, cx),
            },
            other => return super::json::build_json_lines(other, cx),
        };
        let mut out = Out::new(cx);
        let desc =
            str_field(v, &["description"]).or_else(|| str_field(block.input, &["description"]));
        if let Some(d) = desc {
            let mut spans = vec![Span::styled("agent: ", theme.dim)];
            spans.extend(super::text::plain_spans(d, theme.title, theme));
            out.push(Line::from(spans));
            out.push(Line::default());
        }
        let md = super::markdown::build_markdown_lines(&text, cx);
        let mut truncated = md.truncated;
        out.extend(md.lines);
        let mut totals = Vec::new();
        if let Some(ms) =
            field(v, &["total_duration_ms", "totalDurationMs"]).and_then(Value::as_f64)
        {
            totals.push(format!("{:.1} s", ms / 1000.0));
        }
        if let Some(t) = field(v, &["total_tokens", "totalTokens"]).and_then(Value::as_u64) {
            totals.push(format!("{t} tokens"));
        }
        if let Some(n) =
            field(v, &["total_tool_use_count", "totalToolUseCount"]).and_then(Value::as_u64)
        {
            totals.push(format!("{n} tool uses"));
        }
        if !totals.is_empty() {
            out.push(Line::default());
            out.push(Line::from(Span::styled(totals.join(" · "), theme.dim)));
        }
        let mut r = out.finish(theme);
        truncated |= r.truncated;
        r.truncated = truncated;
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::OutputType;
    use crate::render::{lines_to_string, render_output};
    use crate::theme::Theme;
    use serde_json::json;

    #[test]
    fn binary_never_shows_bytes() {
        let t = Theme::dark();
        let cx = RenderCtx::new(80, &t);
        let v = json!({"name": "a.png", "media_type": "image/png", "size": 2048,
                       "uri": "data:image/png;base64,AAAAAAAA"});
        let r = render_output(&OutputType::BinaryRef, &v, "Read", &Value::Null, &cx);
        assert_eq!(
            lines_to_string(&r.lines),
            "binary content\nname       a.png\nmedia type image/png\nsize       2.0 KiB (2048 bytes)\nuri        data:image/png;base64,… (8 chars)\n"
        );
    }

    #[test]
    fn agent_totals() {
        let t = Theme::dark();
        let cx = RenderCtx::new(80, &t);
        let v = json!({"content": [{"type": "text", "text": "Done."}],
                       "totalDurationMs": 1500, "totalTokens": 10, "totalToolUseCount": 2});
        let input = json!({"description": "Find files"});
        let r = render_output(&OutputType::AgentResult, &v, "Task", &input, &cx);
        let s = lines_to_string(&r.lines);
        assert!(s.starts_with("agent: Find files\n\nDone.\n"), "{s}");
        assert!(s.ends_with("1.5 s · 10 tokens · 2 tool uses\n"), "{s}");
    }
}
