//! Top-level layout and drawing: `draw(frame, &App)` places the feed, the right-hand pane
//! (detail, catalog or problems), the status bar and popups (STYLE 4.2, 4.6).
//!
//! Who calls it: [`crate::app::run`] inside `Tui::draw`, and the screen tests on `TestBackend`.
//! Invariants: drawing is a pure function of the app (no I/O, no state changes); every widget
//! builds only what is visible (the feed's visible rows, the detail's visible lines), so nothing
//! on the draw path is proportional to the session's size. [`App::prepare`] must have run for the
//! current size first (it computes [`Areas`] and scroll offsets).
//!
//! [`App::prepare`]: crate::app::App::prepare

pub mod browser;
pub mod catalog;
pub mod detail;
pub mod feed;
pub mod help;
pub mod problems;
pub mod status_bar;
pub mod timeline;

use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Position, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use regex::Regex;

use crate::app::App;

/// Rows taken by the status bar.
pub const STATUS_HEIGHT: u16 = 2;
/// At this width and above the detail pane sits right of the feed; below, under it.
pub const SIDE_BY_SIDE_MIN_WIDTH: u16 = 100;

/// Columns the feed keeps in the side-by-side layout before the detail pane grows.
pub const FEED_MIN_WIDTH: u16 = 56;

/// Where each part goes for a terminal size. Pane areas include their borders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Areas {
    pub feed: Rect,
    pub detail: Rect,
    pub status: Rect,
}

impl Areas {
    /// The layout for a terminal area; with `zoom` the detail pane takes the feed's room too.
    pub fn compute(area: Rect, zoom: bool) -> Self {
        let [main, status] =
            Layout::vertical([Constraint::Min(3), Constraint::Length(STATUS_HEIGHT)]).areas(area);
        if zoom {
            return Self {
                feed: Rect::new(main.x, main.y, 0, 0),
                detail: main,
                status,
            };
        }
        let dir = if main.width >= SIDE_BY_SIDE_MIN_WIDTH {
            Direction::Horizontal
        } else {
            Direction::Vertical
        };
        // The detail pane is what people read: it gets the larger share, once the feed has room
        // for its columns (time, tool, summary, status, duration: FEED_MIN_WIDTH).
        let feed_size = if dir == Direction::Horizontal {
            (main.width * 42 / 100)
                .max(FEED_MIN_WIDTH)
                .min(main.width.saturating_sub(40))
        } else {
            main.height * 2 / 5
        };
        let parts = Layout::default()
            .direction(dir)
            .constraints([Constraint::Length(feed_size), Constraint::Min(0)])
            .split(main);
        Self {
            feed: parts[0],
            detail: parts[1],
            status,
        }
    }

    /// Inner area of a bordered pane.
    pub fn inner(r: Rect) -> Rect {
        Rect {
            x: r.x.saturating_add(1),
            y: r.y.saturating_add(1),
            width: r.width.saturating_sub(2),
            height: r.height.saturating_sub(2),
        }
    }

    /// Whether a cell lies in an area.
    pub fn hit(r: Rect, col: u16, row: u16) -> bool {
        r.contains(Position::new(col, row))
    }
}

/// Draws the whole screen.
pub fn draw(frame: &mut Frame<'_>, app: &App) {
    let areas = app.areas;
    let buf = frame.buffer_mut();
    feed::render_feed(areas.feed, buf, app);
    match app.view.tab {
        crate::view::Tab::Detail => detail::render_detail(areas.detail, buf, app),
        crate::view::Tab::Catalog => {
            let block = pane_block(app, " Catalog ", crate::view::Pane::Detail);
            let inner = block.inner(areas.detail);
            ratatui::widgets::Widget::render(block, areas.detail, buf);
            catalog::CatalogView::new(&app.session, &app.theme).render_with(
                inner,
                buf,
                &app.view.catalog,
            );
        }
        crate::view::Tab::Problems => {
            let block = pane_block(app, " Problems ", crate::view::Pane::Detail);
            let inner = block.inner(areas.detail);
            ratatui::widgets::Widget::render(block, areas.detail, buf);
            problems::ProblemsView::new(&app.session, &app.theme).render_with(
                inner,
                buf,
                &app.view.problems,
            );
        }
    }
    status_bar::render_status(areas.status, buf, app);
    app.render_timeline(buf);
    if app.view.help {
        help::render_help(frame.area(), frame.buffer_mut(), app);
    }
}

/// A bordered block whose border shows focus.
pub fn pane_block<'a>(
    app: &App,
    title: impl Into<Line<'a>>,
    pane: crate::view::Pane,
) -> ratatui::widgets::Block<'a> {
    let focused = app.view.focus == pane && !app.view.help;
    ratatui::widgets::Block::bordered()
        .border_style(app.theme.border(focused))
        .title(title)
}

/// Re-styles the parts of `line` that `re` matches with `style` (patched over the span's own).
/// Work is bounded by the line's length; called only for drawn lines.
pub fn highlight_matches(line: Line<'static>, re: &Regex, style: Style) -> Line<'static> {
    let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
    let ranges: Vec<(usize, usize)> = re
        .find_iter(&text)
        .filter(|m| !m.is_empty())
        .map(|m| (m.start(), m.end()))
        .collect();
    if ranges.is_empty() {
        return line;
    }
    let mut spans = Vec::with_capacity(line.spans.len() + ranges.len() * 2);
    let mut pos = 0usize; // byte offset of the current span in `text`
    for span in line.spans {
        let s = span.content.as_ref();
        let (start, end) = (pos, pos + s.len());
        let mut cut = start;
        for &(a, b) in &ranges {
            if b <= cut || a >= end {
                continue;
            }
            let a = a.max(cut);
            let b = b.min(end);
            if a > cut {
                spans.push(Span::styled(
                    s[cut - start..a - start].to_owned(),
                    span.style,
                ));
            }
            spans.push(Span::styled(
                s[a - start..b - start].to_owned(),
                span.style.patch(style),
            ));
            cut = b;
        }
        if cut < end {
            spans.push(Span::styled(s[cut - start..].to_owned(), span.style));
        }
        pos = end;
    }
    Line {
        spans,
        style: line.style,
        alignment: line.alignment,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlight_splits_spans() {
        let re = Regex::new("lo w").unwrap();
        let line = Line::from(vec![Span::raw("hello"), Span::raw(" world")]);
        let out = highlight_matches(line, &re, Style::new().bold());
        let parts: Vec<&str> = out.spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(parts, ["hel", "lo", " w", "orld"]);
    }
}
