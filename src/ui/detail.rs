//! The detail pane widget: draws the lines the detail pipeline (`crate::detail`) built for the
//! selected row, with the tab titles and the scroll position.
//!
//! Who calls it: [`crate::ui::draw`]. Invariants: only `lines[scroll..scroll + height]` is handed
//! to the buffer; search matches are re-styled on the drawn lines only.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::DrawCtx;
use super::pane_block;
use crate::view::{Pane, Tab};

/// Draws the bordered detail pane from the app's cached lines.
pub fn render_detail(area: Rect, buf: &mut Buffer, ctx: &DrawCtx<'_>) {
    let lines = ctx.detail;
    let total = lines.len();
    let scroll = ctx.view.detail.scroll;
    let mut title = vec![Span::raw(" "), tab_span("Detail", ctx, Tab::Detail)];
    title.push(Span::styled(" │ ", ctx.theme.border));
    title.push(tab_span("Catalog c", ctx, Tab::Catalog));
    title.push(Span::styled(" │ ", ctx.theme.border));
    title.push(tab_span("Problems !", ctx, Tab::Problems));
    if ctx.session.sessions.is_multi() {
        title.push(Span::styled(" │ ", ctx.theme.border));
        title.push(tab_span("Sessions L", ctx, Tab::Sessions));
    }
    title.push(Span::raw(" "));
    let mut block = pane_block(ctx, Line::from(title), Pane::Detail);
    let h = usize::from(ctx.view.detail.height);
    if total > h {
        let mut pos = format!(" {}–{}/{total} ", scroll + 1, (scroll + h).min(total));
        if ctx.view.detail.follow_tail {
            pos.push_str("follow ");
        }
        block = block.title_bottom(Line::from(Span::styled(pos, ctx.theme.dim)).right_aligned());
    }
    let inner = block.inner(area);
    block.render(area, buf);
    if ctx.view.selected_item(ctx.session).is_none() {
        buf.set_span(
            inner.x,
            inner.y,
            &Span::styled("nothing selected", ctx.theme.dim),
            inner.width,
        );
        return;
    }
    let end = (scroll + usize::from(inner.height)).min(total);
    for (k, line) in lines
        .get(scroll.min(end)..end)
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let line = match ctx.search {
            Some(re) => super::highlight_matches(line.clone(), re, ctx.theme.search_match),
            None => line.clone(),
        };
        // Wrap off: the columns scrolled sideways are skipped (issue 22 item 6).
        let line = if ctx.view.detail.wrap || ctx.view.detail.hscroll == 0 {
            line
        } else {
            skip_columns(line, ctx.view.detail.hscroll)
        };
        let y = inner.y + k as u16;
        // A line with a background (an added / removed diff row) is tinted across the pane.
        if line.style.bg.is_some() {
            buf.set_style(Rect::new(inner.x, y, inner.width, 1), line.style);
        }
        buf.set_line(inner.x, y, &line, inner.width);
    }
}

/// `line` without its first `n` display columns (a wide character cut in two becomes a space).
/// Also the sideways scroll of the problems and catalog panels.
pub fn skip_columns(line: Line<'static>, n: usize) -> Line<'static> {
    use unicode_width::UnicodeWidthChar;
    let style = line.style;
    let mut left = n;
    let mut spans = Vec::with_capacity(line.spans.len());
    for span in line.spans {
        if left == 0 {
            spans.push(span);
            continue;
        }
        let mut kept = String::new();
        for c in span.content.chars() {
            let w = c.width().unwrap_or(0);
            if left == 0 {
                kept.push(c);
            } else if w > left {
                kept.push_str(&" ".repeat(w - left));
                left = 0;
            } else {
                left -= w;
            }
        }
        if !kept.is_empty() {
            spans.push(Span::styled(kept, span.style));
        }
    }
    Line::from(spans).style(style)
}

fn tab_span(label: &'static str, ctx: &DrawCtx<'_>, tab: Tab) -> Span<'static> {
    if ctx.view.tab == tab {
        Span::styled(label, ctx.theme.title)
    } else {
        Span::styled(label, ctx.theme.dim)
    }
}
