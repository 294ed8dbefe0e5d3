//! `web_content` renderer and the markdown renderer it (and `agent_result`) uses.
//!
//! Who calls it: `renderer_for(WebContent)`; [`build_markdown_lines`] from `misc` (agent results).
//!
//! Markdown goes through `pulldown-cmark` (`CommonMark` + tables, strikethrough, task lists) into
//! our own lines: headings bold with their `#`s, emphasis, inline code, lists with bullets or
//! numbers, block quotes with a `│` bar, fenced code highlighted by its info string
//! ([`super::code::build_code_lines`]), tables as `│`-separated rows, links underlined with a
//! `[n]` marker and listed at the end (`[n] url`), images as `[image: alt]`. We do not use
//! `tui-markdown`: it returns ratatui `Text` whose spans we would have to re-sanitise, and has
//! no link list or highlight limits; one renderer here keeps the control-character invariant.
//!
//! Shapes for `web_content`: a markdown string; or `{url?, title?, content? | result?, code?,
//! code_text?, results?}` where `results` holds `{title, url}` objects, objects with a `content`
//! list of those (Claude Code `WebSearch`), or strings (markdown).

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

use super::{Block, Out, RenderCtx, Rendered, Renderer, field, str_field};

/// `web_content` renderer (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct WebRenderer;

impl Renderer for WebRenderer {
    fn render(&self, block: &Block<'_>, cx: &RenderCtx<'_>) -> Rendered {
        let v = block.output;
        let theme = cx.theme;
        match v {
            Value::String(s) => return build_markdown_lines(s, cx),
            Value::Object(_) => {}
            Value::Null => return Rendered::default(),
            other => return super::json::build_json_lines(other, cx),
        }
        let mut out = Out::new(cx);
        let mut known = false;
        if let Some(t) = str_field(v, &["title"]) {
            known = true;
            out.push(super::text::plain_line(t, theme.title, theme));
        }
        let url = str_field(v, &["url"]).or_else(|| str_field(block.input, &["url"]));
        if let Some(u) = url {
            let mut spans = super::text::plain_spans(u, theme.hint, theme);
            let code = field(v, &["code", "status"]).and_then(Value::as_u64);
            if let Some(c) = code {
                let text = str_field(v, &["code_text", "codeText"]).unwrap_or("");
                spans.push(Span::styled(format!("  {c} {text}"), theme.dim));
            }
            out.push(Line::from(spans));
        }
        let query = str_field(v, &["query"]).or_else(|| str_field(block.input, &["query"]));
        if let Some(q) = query.filter(|q| Some(*q) != str_field(v, &["title"])) {
            let mut spans = vec![Span::styled("search: ", theme.dim)];
            spans.extend(super::text::plain_spans(q, theme.text, theme));
            out.push(Line::from(spans));
        }
        let mut truncated = false;
        if let Some(c) = str_field(v, &["content", "result", "text"]) {
            known = true;
            out.push(Line::default());
            let md = build_markdown_lines(c, cx);
            truncated |= md.truncated;
            out.extend(md.lines);
        }
        if let Some(Value::Array(results)) = field(v, &["results"]) {
            known = true;
            out.push(Line::default());
            for r in results {
                result_item(&mut out, r, cx);
            }
        }
        if !known && url.is_none() {
            return super::json::build_json_lines(v, cx);
        }
        let mut r = out.finish(theme);
        r.truncated |= truncated;
        r
    }
}

/// One search result: `{title, url}`, `{content: [{title, url}]}`, or markdown text.
fn result_item(out: &mut Out, r: &Value, cx: &RenderCtx<'_>) {
    let theme = cx.theme;
    match r {
        Value::String(s) => {
            out.push(Line::default());
            out.extend(build_markdown_lines(s, cx).lines);
        }
        Value::Object(_) => {
            if let Some(Value::Array(inner)) = field(r, &["content"]) {
                for i in inner {
                    result_item(out, i, cx);
                }
                return;
            }
            let title = str_field(r, &["title"]).unwrap_or("(untitled)");
            let mut spans = vec![Span::styled("• ", theme.dim)];
            spans.extend(super::text::plain_spans(title, theme.text, theme));
            out.push(Line::from(spans));
            if let Some(u) = str_field(r, &["url"]) {
                let mut spans = vec![Span::raw("  ")];
                spans.extend(super::text::plain_spans(u, theme.hint, theme));
                out.push(Line::from(spans));
            }
        }
        other => out.extend(super::json::build_json_lines(other, cx).lines),
    }
}

/// Markdown text → lines (see the module docs).
pub fn build_markdown_lines(text: &str, cx: &RenderCtx<'_>) -> Rendered {
    let (text, cut) = super::text::cut(text, cx.limits.max_bytes);
    let mut md = Md {
        cx,
        out: Out::new(cx),
        cur: Vec::new(),
        styles: vec![cx.theme.text],
        prefix: Vec::new(),
        lists: Vec::new(),
        links: Vec::new(),
        code: None,
        pending_blank: false,
        first_prefix: None,
    };
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for ev in Parser::new_ext(text, opts) {
        if md.out.full() {
            md.out.skip(1);
            break;
        }
        md.event(ev);
    }
    md.flush();
    let theme = cx.theme;
    if !md.links.is_empty() {
        md.out.push(Line::default());
        let links = std::mem::take(&mut md.links);
        for (i, l) in links.iter().enumerate() {
            let mut spans = vec![Span::styled(format!("[{}] ", i + 1), theme.dim)];
            spans.extend(super::text::plain_spans(l, theme.hint, theme));
            md.out.push(Line::from(spans));
        }
    }
    let mut r = md.out.finish(theme);
    if cut {
        r.lines.push(Line::from(Span::styled(
            format!("… cut at {} bytes", cx.limits.max_bytes),
            theme.dim,
        )));
        r.truncated = true;
    }
    r
}

/// Markdown line builder.
struct Md<'c, 't> {
    cx: &'c RenderCtx<'t>,
    out: Out,
    cur: Vec<Span<'static>>,
    styles: Vec<Style>,
    /// Per-line prefixes of enclosing blocks (quote bars, list indents).
    prefix: Vec<String>,
    /// Open lists: `Some(next number)` for ordered ones.
    lists: Vec<Option<u64>>,
    links: Vec<String>,
    /// Inside a fenced/indented code block: (language, text so far).
    code: Option<(String, String)>,
    pending_blank: bool,
    /// A list item's marker, used instead of the indent on its first line.
    first_prefix: Option<String>,
}

impl Md<'_, '_> {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, f: impl FnOnce(Style) -> Style) {
        let s = f(self.style());
        self.styles.push(s);
    }

    fn text(&mut self, s: &str) {
        let st = self.style();
        let spans = super::text::plain_spans(s, st, self.cx.theme);
        self.cur.extend(spans);
    }

    fn prefix_spans(&mut self) -> Vec<Span<'static>> {
        let theme = self.cx.theme;
        let mut p: String = self.prefix.concat();
        if let Some(first) = self.first_prefix.take() {
            // Replace the innermost indent by the marker.
            let inner = self.prefix.last().map_or(0, String::len);
            p.truncate(p.len() - inner);
            p.push_str(&first);
        }
        if p.is_empty() {
            Vec::new()
        } else {
            vec![Span::styled(p, theme.dim)]
        }
    }

    fn blank_if_pending(&mut self) {
        if self.pending_blank {
            self.pending_blank = false;
            if !self.out.lines.is_empty() {
                let p = self.prefix.concat();
                let p = p.trim_end().to_owned();
                self.out
                    .push(Line::from(Span::styled(p, self.cx.theme.dim)));
            }
        }
    }

    fn flush(&mut self) {
        if self.cur.is_empty() {
            return;
        }
        self.blank_if_pending();
        let mut spans = self.prefix_spans();
        spans.append(&mut self.cur);
        self.out.push(Line::from(spans));
    }

    fn end_block(&mut self) {
        self.flush();
        self.pending_blank = true;
    }

    fn event(&mut self, ev: Event<'_>) {
        let theme = self.cx.theme;
        if let Some((_, buf)) = self.code.as_mut() {
            match ev {
                Event::Text(t) => {
                    buf.push_str(&t);
                    return;
                }
                Event::End(TagEnd::CodeBlock) => {}
                _ => return,
            }
        }
        match ev {
            Event::Start(tag) => match tag {
                Tag::Paragraph | Tag::Table(_) | Tag::TableHead | Tag::TableRow => self.flush(),
                Tag::Heading { level, .. } => {
                    self.flush();
                    let n = match level {
                        HeadingLevel::H1 => 1,
                        HeadingLevel::H2 => 2,
                        HeadingLevel::H3 => 3,
                        HeadingLevel::H4 => 4,
                        HeadingLevel::H5 => 5,
                        HeadingLevel::H6 => 6,
                    };
                    self.push_style(|_| theme.title);
                    self.text(&format!("{} ", "#".repeat(n)));
                }
                Tag::BlockQuote(_) => {
                    self.flush();
                    self.blank_if_pending();
                    self.prefix.push("│ ".to_owned());
                }
                Tag::CodeBlock(kind) => {
                    self.flush();
                    let lang = match kind {
                        CodeBlockKind::Fenced(l) => {
                            l.split_whitespace().next().unwrap_or("").to_owned()
                        }
                        CodeBlockKind::Indented => String::new(),
                    };
                    self.code = Some((lang, String::new()));
                }
                Tag::List(start) => {
                    self.flush();
                    self.lists.push(start);
                }
                Tag::Item => {
                    self.flush();
                    let marker = match self.lists.last_mut() {
                        Some(Some(n)) => {
                            *n += 1;
                            format!("{}. ", *n - 1)
                        }
                        _ => "• ".to_owned(),
                    };
                    self.prefix.push(" ".repeat(marker.chars().count()));
                    self.first_prefix = Some(marker);
                }
                Tag::Emphasis => self.push_style(|s| s.add_modifier(Modifier::ITALIC)),
                Tag::Strong => self.push_style(|s| s.add_modifier(Modifier::BOLD)),
                Tag::Strikethrough => self.push_style(|s| s.add_modifier(Modifier::CROSSED_OUT)),
                Tag::Link { dest_url, .. } => {
                    self.links.push(dest_url.to_string());
                    self.push_style(|s| s.add_modifier(Modifier::UNDERLINED));
                }
                Tag::Image { dest_url, .. } => {
                    self.links.push(dest_url.to_string());
                    self.push_style(|_| theme.dim);
                    self.text("[image: ");
                }
                Tag::TableCell => {
                    if !self.cur.is_empty() {
                        self.cur.push(Span::styled(" │ ", theme.dim));
                    }
                }
                Tag::HtmlBlock
                | Tag::FootnoteDefinition(_)
                | Tag::DefinitionList
                | Tag::DefinitionListTitle
                | Tag::DefinitionListDefinition
                | Tag::Superscript
                | Tag::Subscript
                | Tag::MetadataBlock(_) => {}
            },
            Event::End(tag) => match tag {
                TagEnd::Paragraph | TagEnd::Table => self.end_block(),
                TagEnd::Heading(_) => {
                    self.styles.pop();
                    self.end_block();
                }
                TagEnd::BlockQuote(_) => {
                    self.flush();
                    self.prefix.pop();
                    self.pending_blank = true;
                }
                TagEnd::CodeBlock => {
                    if let Some((lang, buf)) = self.code.take() {
                        self.blank_if_pending();
                        let lang = (!lang.is_empty()).then_some(lang.as_str());
                        let code =
                            super::code::build_code_lines(&buf, lang, None, 1, false, self.cx);
                        for l in code.lines {
                            let mut spans = self.prefix_spans();
                            spans.push(Span::styled("  ", theme.dim));
                            spans.extend(l.spans);
                            self.out.push(Line::from(spans));
                        }
                        self.pending_blank = true;
                    }
                }
                TagEnd::List(_) => {
                    self.flush();
                    self.lists.pop();
                    self.pending_blank = true;
                }
                TagEnd::Item => {
                    self.flush();
                    self.prefix.pop();
                    self.first_prefix = None;
                    self.pending_blank = false;
                }
                TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                    self.styles.pop();
                }
                TagEnd::Link => {
                    self.styles.pop();
                    let n = self.links.len();
                    self.cur.push(Span::styled(format!("[{n}]"), theme.dim));
                }
                TagEnd::Image => {
                    let n = self.links.len();
                    self.text(&format!("][{n}]"));
                    self.styles.pop();
                }
                TagEnd::TableHead => {
                    for s in &mut self.cur {
                        s.style = s.style.add_modifier(Modifier::BOLD);
                    }
                    self.flush();
                }
                TagEnd::TableRow => self.flush(),
                TagEnd::TableCell
                | TagEnd::HtmlBlock
                | TagEnd::FootnoteDefinition
                | TagEnd::DefinitionList
                | TagEnd::DefinitionListTitle
                | TagEnd::DefinitionListDefinition
                | TagEnd::Superscript
                | TagEnd::Subscript
                | TagEnd::MetadataBlock(_) => {}
            },
            Event::Text(t) => self.text(&t),
            Event::Code(c) => {
                let st = theme.json_string;
                self.cur.extend(super::text::plain_spans(&c, st, theme));
            }
            Event::InlineMath(m) | Event::DisplayMath(m) => self.text(&m),
            Event::Html(h) | Event::InlineHtml(h) => {
                for (i, l) in h.lines().enumerate() {
                    if i > 0 {
                        self.flush();
                    }
                    self.cur
                        .extend(super::text::plain_spans(l, theme.dim, theme));
                }
            }
            Event::FootnoteReference(f) => self.text(&format!("[^{f}]")),
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.flush();
                self.blank_if_pending();
                self.out
                    .push(Line::from(Span::styled("─".repeat(20), theme.dim)));
                self.pending_blank = true;
            }
            Event::TaskListMarker(done) => {
                self.text(if done { "[x] " } else { "[ ] " });
            }
        }
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
    fn markdown_basics_and_links() {
        let t = Theme::dark();
        let mut cx = RenderCtx::new(80, &t);
        cx.highlight = false;
        let md = "# Title\n\nSome *em* and [a link](http://x.y).\n\n- one\n- two\n  more\n\n1. first\n\n> quoted\n\n```rust\nfn a() {}\n```\n";
        let s = lines_to_string(&build_markdown_lines(md, &cx).lines);
        assert_eq!(
            s,
            "# Title\n\nSome em and a link[1].\n\n• one\n• two more\n\n1. first\n\n│ quoted\n\n  fn a() {}\n\n[1] http://x.y\n"
        );
    }

    #[test]
    fn web_object_header() {
        let t = Theme::dark();
        let cx = RenderCtx::new(80, &t);
        let v = json!({"url": "https://e.com", "code": 200, "codeText": "OK", "result": "Hello"});
        let s = lines_to_string(
            &render_output(&OutputType::WebContent, &v, "WebFetch", &Value::Null, &cx).lines,
        );
        assert_eq!(s, "https://e.com  200 OK\n\nHello\n");
    }
}
