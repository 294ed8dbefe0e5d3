//! Top-level layout and drawing: [`draw`] places the feed, the right-hand pane (detail, catalog
//! or problems), the status bar, the replay timeline and popups (STYLE 4.2, 4.6).
//!
//! Who calls it: the app (`App::draw`, in the loop and the screen tests), which lends every
//! widget a [`DrawCtx`]: borrowed data, one frame long. Nothing here imports the app; the layout
//! ([`Areas::compute`]) is a pure function the app also uses for mouse hit tests.
//! Invariants: drawing is a pure function of the context (no I/O, no state changes); every
//! widget builds only what is visible (the feed's visible rows, the detail's visible lines), so
//! nothing on the draw path is proportional to the session's size. The app must have laid the
//! screen out for the current size first (`App::prepare`: areas, scroll offsets, panel caches).

pub mod audit;
pub mod browser;
pub mod catalog;
pub mod detail;
pub mod feed;
pub mod files;
pub mod help;
pub mod problems;
pub mod sessions;
pub mod status_bar;
pub mod timeline;

use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Position, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use regex::Regex;

use crate::import::Format;
use crate::keymap::Keymap;
use crate::protocol::Timestamp;
use crate::replay::{Replay, ReplayState};
use crate::session::Session;
use crate::theme::Theme;
use crate::view::{Shown, ViewState};

/// What one frame draws from, lent by the app: the shown session(s), the view, the panel
/// caches, the detail lines and the status bar's facts.
#[derive(Debug, Clone, Copy)]
pub struct DrawCtx<'a> {
    /// Which session(s) are shown (`ViewState::shown`); `session` is the one drawn.
    pub shown: Shown,
    pub session: &'a Session,
    pub view: &'a ViewState,
    pub panels: &'a Panels,
    pub theme: &'a Theme,
    pub keymap: &'a Keymap,
    /// The search (or the one being typed), compiled.
    pub search: Option<&'a Regex>,
    /// The detail pipeline's lines for the selected row (`crate::detail`).
    pub detail: &'a [Line<'static>],
    /// `v`: the selected row's image, drawn in the detail pane instead of its lines.
    pub image: Option<&'a crate::app::ImageView>,
    pub areas: Areas,
    pub source: SourceInfo<'a>,
    /// The search's match count, for the status bar.
    pub matches: Option<status_bar::MatchStatus>,
    /// The clock running calls' ages are measured against (epoch ms): the wall clock from the
    /// last tick on a live input, the newest frame's time on a recording followed live;
    /// `None`: no elapsed times drawn.
    pub now: Option<Timestamp>,
    /// The live state (`crate::session::live`) of a live source: the status bar says it, the
    /// feed marks the call it names.
    pub live: Option<crate::session::live::Live>,
    /// The replay player and its state at the app's clock (`rawpv --replay`).
    pub replay: Option<(&'a Replay, ReplayState)>,
}

/// The source, as the status bar tells it.
#[derive(Debug, Clone, Copy)]
pub struct SourceInfo<'a> {
    pub label: &'a str,
    pub status: &'a SourceStatus,
    /// While a saved file is read: (bytes read, file size).
    pub load_progress: Option<(u64, u64)>,
    pub format: Option<Format>,
    /// A standing hint ("demo session: …").
    pub hint: Option<&'a str>,
}

/// What the panels compute from the session and keep between frames; owned by the app, safe to
/// drop at any time.
#[derive(Debug, Clone, Default)]
pub struct Panels {
    pub catalog: catalog::CatalogCache,
    pub problems: problems::ProblemsCache,
    pub files: files::FilesCache,
    pub audit: audit::AuditCache,
    pub sessions: sessions::SessionsCache,
}

/// Reading state of the source, for the status bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceStatus {
    Loading,
    Live,
    /// A network source lost its connection and is retrying (attempt 1, 2, …).
    Reconnecting(u32),
    Ended,
    Failed(String),
}

/// Rows taken by the status bar.
pub const STATUS_HEIGHT: u16 = 2;
/// At this width and above the detail pane sits right of the feed; below, under it.
pub const SIDE_BY_SIDE_MIN_WIDTH: u16 = 100;

/// Columns the feed keeps in the side-by-side layout before the detail pane grows.
pub const FEED_MIN_WIDTH: u16 = 56;

/// Columns the detail pane keeps in the side-by-side layout, whatever the feed's share.
pub const DETAIL_MIN_WIDTH: u16 = 40;

/// How the screen is shared between the feed and the detail pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// Columns the feed's rows in view need to show whole, borders included
    /// (`feed::Cols::row_width` + 2); 0: unknown (the feed takes its share).
    pub want: u16,
    /// Columns below which the feed's rows lose what they must show (the tool names and
    /// statuses in view and a file name's worth of summary, borders included); the feed takes
    /// them past its share while the detail keeps [`DETAIL_MIN_WIDTH`].
    pub need: u16,
    /// Most of the width the feed takes side by side, in percent (the config's `feed_width`,
    /// changed with `{` / `}`), [`Split::MIN_SHARE`]..=[`Split::MAX_SHARE`].
    pub share: u16,
}

impl Split {
    pub const MIN_SHARE: u16 = 20;
    pub const MAX_SHARE: u16 = 80;
    pub const DEFAULT_SHARE: u16 = 50;
}

impl Default for Split {
    fn default() -> Self {
        Self {
            want: 0,
            need: 0,
            share: Self::DEFAULT_SHARE,
        }
    }
}

/// Where each part goes for a terminal size. Pane areas include their borders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Areas {
    /// The replay timeline bar (zero rows outside replay mode).
    pub timeline: Rect,
    pub feed: Rect,
    pub detail: Rect,
    pub status: Rect,
}

impl Areas {
    /// The layout for a terminal area; with `zoom` the detail pane takes the feed's room too;
    /// with `timeline` (replay mode) the first row is the timeline bar when there is room.
    /// Side by side, the feed is as wide as its rows want, at least [`FEED_MIN_WIDTH`] and at
    /// most `split.share` percent, the detail keeping [`DETAIL_MIN_WIDTH`]; stacked (narrow
    /// terminals), the feed gets three fifths of the height, so an 80x24 screen shows a page of
    /// the conversation.
    pub fn compute(area: Rect, zoom: bool, timeline: bool, split: Split) -> Self {
        let (timeline, area) = if timeline && area.height >= 4 {
            (
                Rect::new(area.x, area.y, area.width, 1),
                Rect::new(area.x, area.y + 1, area.width, area.height - 1),
            )
        } else {
            (Rect::new(area.x, area.y, area.width, 0), area)
        };
        let [main, status] =
            Layout::vertical([Constraint::Min(3), Constraint::Length(STATUS_HEIGHT)]).areas(area);
        if zoom {
            return Self {
                timeline,
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
        // The detail pane is what people read: the feed takes what its rows need, up to its
        // share, once it has room for its columns (time, tool, summary, status, duration).
        let feed_size = if dir == Direction::Horizontal {
            let share = split.share.clamp(Split::MIN_SHARE, Split::MAX_SHARE);
            let cap = (u32::from(main.width) * u32::from(share) / 100) as u16;
            let want = if split.want == 0 { cap } else { split.want };
            want.min(cap)
                .max(FEED_MIN_WIDTH)
                .max(split.need)
                .min(main.width.saturating_sub(DETAIL_MIN_WIDTH))
        } else {
            main.height * 3 / 5
        };
        let parts = Layout::default()
            .direction(dir)
            .constraints([Constraint::Length(feed_size), Constraint::Min(0)])
            .split(main);
        Self {
            timeline,
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

/// Most columns of a session id in the viewer (a UUID's first block and an ellipsis).
pub const SESSION_ID_MAX: usize = 9;

/// `session 6f1c2b1e…`: how the status bar and the panels name session `sid` (SPEC §6), its id
/// made visible and cut to [`SESSION_ID_MAX`] columns.
pub fn session_label(session: &Session, sid: u32) -> String {
    let name = crate::render::text::visible(session.sessions.name(sid));
    format!("session {}", crate::fmt::truncate(&name, SESSION_ID_MAX))
}

/// Draws the whole screen.
pub fn draw(frame: &mut Frame<'_>, ctx: &DrawCtx<'_>) {
    let areas = ctx.areas;
    let buf = frame.buffer_mut();
    feed::render_feed(areas.feed, buf, ctx);
    match ctx.view.tab {
        crate::view::Tab::Detail if let Some(img) = ctx.image => {
            let block = pane_block(ctx, img.title(), crate::view::Pane::Detail);
            ratatui::widgets::Widget::render(block, areas.detail, buf);
            if let Some((at, p)) = img.drawn() {
                ratatui::widgets::Widget::render(ratatui_image::Image::new(p), at, buf);
            }
        }
        crate::view::Tab::Detail => detail::render_detail(areas.detail, buf, ctx),
        crate::view::Tab::Catalog => {
            let block = pane_block(ctx, " Catalog ", crate::view::Pane::Detail);
            let inner = block.inner(areas.detail);
            ratatui::widgets::Widget::render(block, areas.detail, buf);
            catalog::CatalogView::new(ctx.session, ctx.theme).render_with(
                inner,
                buf,
                &ctx.view.catalog,
                &ctx.panels.catalog,
            );
        }
        crate::view::Tab::Problems => {
            let block = pane_block(ctx, " Problems ", crate::view::Pane::Detail);
            let inner = block.inner(areas.detail);
            ratatui::widgets::Widget::render(block, areas.detail, buf);
            problems::ProblemsView::new(ctx.session, ctx.theme).render_with(
                inner,
                buf,
                &ctx.view.problems,
                &ctx.panels.problems,
            );
        }
        crate::view::Tab::Files => {
            let block = pane_block(ctx, " Files (what changed) ", crate::view::Pane::Detail);
            let inner = block.inner(areas.detail);
            ratatui::widgets::Widget::render(block, areas.detail, buf);
            files::FilesView::new(ctx.theme).render_with(
                inner,
                buf,
                &ctx.view.files,
                &ctx.panels.files,
            );
        }
        crate::view::Tab::Sessions => {
            let block = pane_block(ctx, " Sessions L ", crate::view::Pane::Detail);
            let inner = block.inner(areas.detail);
            ratatui::widgets::Widget::render(block, areas.detail, buf);
            sessions::SessionsView::new(ctx.theme).render_with(
                inner,
                buf,
                &ctx.view.sessions,
                &ctx.panels.sessions,
            );
        }
        crate::view::Tab::Audit => {
            let block = pane_block(ctx, " Audit ", crate::view::Pane::Detail);
            let inner = block.inner(areas.detail);
            ratatui::widgets::Widget::render(block, areas.detail, buf);
            audit::AuditView::new(ctx.theme).render_with(
                inner,
                buf,
                &ctx.view.audit,
                &ctx.panels.audit,
            );
        }
    }
    status_bar::render_status(areas.status, buf, ctx);
    if let Some((r, st)) = &ctx.replay {
        timeline::render_timeline(areas.timeline, buf, r, st, ctx.theme);
    }
    if ctx.view.help {
        help::render_help(frame.area(), frame.buffer_mut(), ctx);
    }
}

/// A bordered block whose border shows focus.
pub fn pane_block<'a>(
    ctx: &DrawCtx<'_>,
    title: impl Into<Line<'a>>,
    pane: crate::view::Pane,
) -> ratatui::widgets::Block<'a> {
    let focused = ctx.view.focus == pane && !ctx.view.help;
    ratatui::widgets::Block::bordered()
        .border_style(ctx.theme.border(focused))
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
