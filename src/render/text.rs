//! `text` renderer: terminal output with SGR colours kept and every other control neutralised.
//!
//! Who calls it: `renderer_for(Text)`, the other renderers for plain fallbacks, `print`.
//! Accepts a string (may hold ANSI) or `{stdout, stderr, interrupted?, exit_code?}` (Claude Code
//! Bash; `exitCode` too): stdout first, then a marked stderr section; or a document / image
//! reference `{kind: "document"|"image", media_type, name?, uri?, size?}` (shown as the
//! `binary_ref` renderer shows it, titled by its kind). Any other shape is shown as a JSON tree. Invariant: no byte of the input reaches a `Line` as a control character.

use ratatui::text::{Line, Span};
use serde_json::Value;

use super::{Block, Out, RenderCtx, Rendered, Renderer, field};
use crate::theme::Theme;

/// Text renderer (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct TextRenderer;

impl Renderer for TextRenderer {
    fn render(&self, block: &Block<'_>, cx: &RenderCtx<'_>) -> Rendered {
        match block.output {
            Value::String(s) => build_ansi_lines(s, cx),
            Value::Null => Rendered::default(),
            v @ Value::Object(_) if is_shell_output(v) => build_shell_lines(v, cx),
            v @ Value::Object(_) if is_media_ref(v) => {
                super::misc::BinaryRenderer.render(block, cx)
            }
            other => super::json::build_json_lines(other, cx),
        }
    }
}

/// Whether `v` looks like `{stdout, stderr, …}`.
/// A reference to a document or image (`{kind: "document"|"image", media_type, name?, uri?,
/// size?}`, an Anthropic `document` block as the importer gives it): shown by its media type.
fn is_media_ref(v: &Value) -> bool {
    matches!(
        field(v, &["kind"]).and_then(Value::as_str),
        Some("document" | "image")
    ) && field(v, &["media_type"]).is_some_and(Value::is_string)
}

fn is_shell_output(v: &Value) -> bool {
    field(v, &["stdout"]).is_some() || field(v, &["stderr"]).is_some()
}

/// Cuts `s` to at most `max` bytes at a char boundary ([`crate::fmt::cut_bytes`]).
pub(crate) fn cut(s: &str, max: usize) -> (&str, bool) {
    crate::fmt::cut_bytes(s, max)
}

/// Terminal text → lines (ANSI interpreted by [`super::ansi`]), within limits.
pub fn build_ansi_lines(text: &str, cx: &RenderCtx<'_>) -> Rendered {
    let (text, cut_bytes) = cut(text, cx.limits.max_bytes);
    let (mut lines, dropped) = super::ansi::ansi_to_lines(text, cx.theme, cx.limits.max_lines);
    if dropped > 0 {
        lines.push(super::more_lines(dropped, cx.theme));
    }
    if cut_bytes {
        lines.push(Line::from(Span::styled(
            format!("… cut at {} bytes", cx.limits.max_bytes),
            cx.theme.dim,
        )));
    }
    Rendered {
        lines,
        truncated: dropped > 0 || cut_bytes,
    }
}

/// `{stdout, stderr, interrupted?, exit_code?}`: stdout, then stderr under a marked rule.
fn build_shell_lines(v: &Value, cx: &RenderCtx<'_>) -> Rendered {
    let stdout = field(v, &["stdout"]).and_then(Value::as_str).unwrap_or("");
    let stderr = field(v, &["stderr"]).and_then(Value::as_str).unwrap_or("");
    let mut out = Out::new(cx);
    let mut truncated = false;
    // A background shell's poll (`BashOutput`): which command, its status and exit code first.
    let command = field(v, &["command"]).and_then(Value::as_str);
    let status = field(v, &["status"]).and_then(Value::as_str);
    if command.is_some() || status.is_some() {
        let mut spans = Vec::new();
        if let Some(c) = command {
            spans.push(Span::styled("$ ", cx.theme.prompt));
            spans.push(Span::raw(visible(&super::ansi::strip_sgr(
                c.lines().next().unwrap_or(""),
            ))));
            if c.lines().nth(1).is_some() {
                spans.push(Span::styled(" …", cx.theme.dim));
            }
        }
        if let Some(st) = status {
            let style = match st {
                "completed" => cx.theme.status_ok,
                "running" => cx.theme.status_running,
                _ => cx.theme.status_failed,
            };
            spans.push(Span::styled("  status ", cx.theme.dim));
            spans.push(Span::styled(visible(st), style));
        }
        if let Some(c) = field(v, &["exit_code", "exitCode"]).and_then(Value::as_i64) {
            spans.push(Span::styled(format!("  exit {c}"), cx.theme.dim));
        }
        out.push(Line::from(spans));
    }
    let a = build_ansi_lines(stdout, cx);
    truncated |= a.truncated;
    out.extend(a.lines);
    if !stderr.is_empty() {
        out.push(rule("stderr", cx.theme.status_failed, cx));
        let b = build_ansi_lines(stderr, cx);
        truncated |= b.truncated;
        for mut l in b.lines {
            l.spans.insert(0, Span::styled("▌", cx.theme.status_failed));
            out.push(l);
        }
    }
    let code = field(v, &["exit_code", "exitCode", "returncode"]).and_then(Value::as_i64);
    let interrupted = field(v, &["interrupted"]).and_then(Value::as_bool) == Some(true);
    if interrupted || code.is_some_and(|c| c != 0) {
        let mut msg = String::new();
        if let Some(c) = code {
            msg = format!("exit code {c}");
        }
        if interrupted {
            if !msg.is_empty() {
                msg.push_str(", ");
            }
            msg.push_str("interrupted");
        }
        out.push(Line::from(Span::styled(msg, cx.theme.status_failed)));
    }
    if stdout.is_empty() && stderr.is_empty() && out.lines.is_empty() {
        out.push(Line::from(Span::styled("(no output)", cx.theme.dim)));
    }
    let mut r = out.finish(cx.theme);
    r.truncated |= truncated;
    r
}

/// A `── label ──…` rule across `cx.width` columns (at most 40 columns of dashes).
pub(crate) fn rule(label: &str, style: ratatui::style::Style, cx: &RenderCtx<'_>) -> Line<'static> {
    let label = visible(label);
    let used = unicode_width::UnicodeWidthStr::width(label.as_str()) + 4;
    let rest = usize::from(cx.width).saturating_sub(used).min(40);
    Line::from(Span::styled(
        format!("── {label} {}", "─".repeat(rest)),
        style,
    ))
}

/// Splits text into lines, replacing control characters with visible pictures, within limits.
pub fn build_plain_lines(text: &str, cx: &RenderCtx<'_>) -> Rendered {
    let mut out = Out::new(cx);
    for l in text.lines() {
        if out.full() {
            out.skip(1);
            continue;
        }
        out.push(plain_line(l, cx.theme.text, cx.theme));
    }
    out.finish(cx.theme)
}

/// One line of untrusted text as a `Line`: control characters and invisible format characters
/// become visible pictures in `theme.control_char`, tabs become spaces. Lines longer than
/// [`super::ansi::MAX_LINE_CELLS`] chars are cut with a marker.
pub fn plain_line(s: &str, style: ratatui::style::Style, theme: &Theme) -> Line<'static> {
    Line::from(plain_spans(s, style, theme))
}

/// [`plain_line`] as spans (for lines with a gutter in front).
pub fn plain_spans(s: &str, style: ratatui::style::Style, theme: &Theme) -> Vec<Span<'static>> {
    let max = super::ansi::MAX_LINE_CELLS;
    let clean = !s
        .chars()
        .any(|c| c.is_control() || super::ansi::is_invisible_format(c));
    if clean && s.len() <= max {
        return vec![Span::styled(s.to_owned(), style)];
    }
    let mut spans = Vec::new();
    let mut run = String::new();
    let mut col = 0usize;
    let mut count = 0usize;
    for c in s.chars() {
        count += 1;
        if count > max {
            break;
        }
        if c == '\t' {
            let n = 8 - col % 8;
            run.extend(std::iter::repeat_n(' ', n));
            col += n;
        } else if c.is_control() || super::ansi::is_invisible_format(c) {
            if !run.is_empty() {
                spans.push(Span::styled(std::mem::take(&mut run), style));
            }
            spans.push(Span::styled(
                super::ansi::control_picture(c),
                theme.control_char,
            ));
            col += 1;
        } else {
            run.push(c);
            col += 1;
        }
    }
    if !run.is_empty() {
        spans.push(Span::styled(run, style));
    }
    let total = s.chars().count();
    if total > max {
        spans.push(Span::styled(
            format!(" … {} more chars", total - max),
            theme.dim,
        ));
    }
    spans
}

/// Replaces control characters (C0 except tab, DEL, C1) with Unicode control pictures / U+FFFD,
/// and expands tabs to spaces (8-column stops). For one-line labels outside a `Line`.
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
            c if super::ansi::is_invisible_format(c) => {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::OutputType;
    use crate::render::{lines_to_string, render_output};
    use serde_json::json;

    #[test]
    fn stdout_and_stderr_both_shown() {
        let t = Theme::dark();
        let cx = RenderCtx::new(40, &t);
        let v = json!({"stdout": "out\n", "stderr": "bad\n", "interrupted": false, "exitCode": 2});
        let r = render_output(&OutputType::Text, &v, "Bash", &Value::Null, &cx);
        assert_eq!(
            lines_to_string(&r.lines),
            "out\n── stderr ──────────────────────────────\n▌bad\nexit code 2\n"
        );
    }

    #[test]
    fn plain_line_neutralises() {
        let t = Theme::dark();
        let l = plain_line("a\x1b[31mb\u{202e}", t.text, &t);
        assert_eq!(
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>(),
            "a\u{241b}[31mb<U+202E>"
        );
    }
}
