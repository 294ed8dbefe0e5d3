//! `file_content` renderer: file text with real line numbers, syntax-highlighted when allowed.
//!
//! Who calls it: `renderer_for(FileContent)`; [`build_code_lines`] is also used for Write inputs,
//! Bash commands and markdown code blocks.
//!
//! Shapes: a string, possibly numbered by Claude Code's Read (`     N→text`, or `cat -n` style
//! `     N\ttext` when every line has it): the numbers are stripped and become the gutter; or
//! `{file_path, content, start_line?, num_lines?, total_lines?}` (camelCase too, and Claude Code's
//! `{type:"text", file:{…}}` wrapper). The syntax comes from the path's extension or file name,
//! else the first line ([`super::highlight::find_syntax`]). Highlighting limits are in
//! [`super::highlight`]; over them, or with `cx.highlight` off, the plain rendering is used.

use ratatui::text::{Line, Span};
use serde_json::Value;

use super::highlight::{find_syntax, highlight_block, plain_code_spans};
use super::{Block, Out, RenderCtx, Rendered, Renderer, field, str_field};

/// `file_content` renderer (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct CodeRenderer;

impl Renderer for CodeRenderer {
    fn render(&self, block: &Block<'_>, cx: &RenderCtx<'_>) -> Rendered {
        let v = block.output;
        let file = field(v, &["file"]).filter(|f| f.is_object()).unwrap_or(v);
        let (content, start, total) = match file {
            Value::String(s) => (s.as_str(), None, None),
            Value::Object(_) => match str_field(file, &["content", "text"]) {
                Some(c) => (
                    c,
                    field(file, &["start_line", "startLine"]).and_then(Value::as_u64),
                    field(file, &["total_lines", "totalLines"]).and_then(Value::as_u64),
                ),
                None => return super::json::build_json_lines(v, cx),
            },
            Value::Null => return Rendered::default(),
            other => return super::json::build_json_lines(other, cx),
        };
        let path = super::file_path(file, block.input);
        let mut out = Out::new(cx);
        if let Some(p) = path {
            let extra = match total {
                Some(t) => format!("  ({t} lines)"),
                None => String::new(),
            };
            out.push(super::input::path_line(p, &extra, cx));
        }
        let (text, first) = match strip_numbers(content) {
            Some((stripped, n)) => (stripped, Some(n)),
            None => (content.to_owned(), None),
        };
        let start = first.or(start).unwrap_or(1);
        let body = build_code_lines(&text, None, path, start, true, cx);
        let truncated = body.truncated;
        out.extend(body.lines);
        let mut r = out.finish(cx.theme);
        r.truncated |= truncated;
        r
    }
}

/// Strips Read's `     N→` (or, when every line has it, `cat -n`'s `     N\t`) prefixes; returns
/// the text and the first line number, or `None` when the text is not numbered.
pub fn strip_numbers(s: &str) -> Option<(String, u64)> {
    let mut first = None;
    let mut out = String::with_capacity(s.len());
    let mut numbered = 0usize;
    let mut other = 0usize;
    for (i, line) in s.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let trimmed = line.trim_start_matches(' ');
        let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
        let rest = &trimmed[digits..];
        let body = if digits > 0 {
            rest.strip_prefix('→')
                .or_else(|| rest.strip_prefix('\t').filter(|_| line.starts_with(' ')))
        } else {
            None
        };
        if let Some(b) = body {
            if first.is_none() {
                first = trimmed[..digits].parse::<u64>().ok();
            }
            numbered += 1;
            out.push_str(b);
        } else {
            if !line.is_empty() {
                other += 1;
            }
            out.push_str(line);
        }
    }
    // Numbered when the numbered lines dominate (Claude Code appends a `<system-reminder>` block).
    (numbered > 0 && numbered >= other * 4).then_some((out, first?))
}

/// Code as lines: a `{n:>w} │ ` gutter when `numbers` (first line is `start`), highlighted when
/// `cx.highlight` and within limits (syntax from `lang`, `path`, or the first line).
pub fn build_code_lines(
    text: &str,
    lang: Option<&str>,
    path: Option<&str>,
    start: u64,
    numbers: bool,
    cx: &RenderCtx<'_>,
) -> Rendered {
    let theme = cx.theme;
    let (text, cut) = super::text::cut(text, cx.limits.max_bytes);
    let count = text.lines().count();
    let last = start + count.saturating_sub(1) as u64;
    let w = last.to_string().len();
    let highlighted = if cx.highlight && theme.colour {
        let first_line = text.lines().next().unwrap_or("");
        find_syntax(lang, path, first_line).and_then(|s| highlight_block(text, s, theme))
    } else {
        None
    };
    let mut out = Out::new(cx);
    for (i, line) in text.lines().enumerate() {
        if out.full() {
            out.skip(count - i);
            break;
        }
        let mut spans = if numbers {
            vec![Span::styled(
                format!("{:>w$} │ ", start + i as u64),
                theme.diff_gutter,
            )]
        } else {
            Vec::new()
        };
        match highlighted.as_ref().and_then(|h| h.get(i)) {
            Some(h) => spans.extend(h.iter().cloned()),
            None => spans.extend(plain_code_spans(line, theme)),
        }
        out.push(Line::from(spans));
    }
    if cut {
        out.push(Line::from(Span::styled(
            format!("… cut at {} bytes", cx.limits.max_bytes),
            theme.dim,
        )));
    }
    let mut r = out.finish(theme);
    r.truncated |= cut;
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::OutputType;
    use crate::render::{lines_to_string, render_output};
    use crate::theme::Theme;
    use serde_json::json;

    #[test]
    fn strips_read_numbers() {
        let (t, n) = strip_numbers("    12→fn a() {\n    13→}\n").unwrap();
        assert_eq!((t.as_str(), n), ("fn a() {\n}\n", 12));
        assert!(strip_numbers("plain\ntext").is_none());
        assert!(strip_numbers("12 apples\n3→x").is_none());
    }

    #[test]
    fn numbered_string_and_object() {
        let t = Theme::dark();
        let mut cx = RenderCtx::new(80, &t);
        cx.highlight = false;
        let r = render_output(
            &OutputType::FileContent,
            &json!("     9→a\n    10→b"),
            "Read",
            &json!({"file_path": "x.txt"}),
            &cx,
        );
        assert_eq!(lines_to_string(&r.lines), "x.txt\n 9 │ a\n10 │ b\n");
        let v = json!({"type": "text", "file": {"filePath": "m.py", "content": "x = 1\n", "startLine": 5, "totalLines": 9}});
        let r = render_output(&OutputType::FileContent, &v, "Read", &Value::Null, &cx);
        assert_eq!(lines_to_string(&r.lines), "m.py  (9 lines)\n5 │ x = 1\n");
    }
}
