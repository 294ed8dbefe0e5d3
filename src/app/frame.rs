//! What a frame shows: [`App::prepare`] lays the screen out and brings the view and caches up to
//! date (selection in view, fold summaries, panel caches, the detail pipeline); [`App::draw_ctx`]
//! lends the widgets what they draw from.
//!
//! Who calls it: the loop before each draw; tests and benches after driving the app.
//! Invariants: nothing here is proportional to the session's size; heavy detail renders are
//! queued as jobs (`crate::detail`), never run here.

use ratatui::layout::Rect;

use super::{App, Msg};
use crate::detail::{DetailKey, DetailOpts};
use crate::ui::{self, Areas};
use crate::view::Tab;

/// Fewest header rows that make the first screen start at the first prompt (one catalog row
/// above the prompt stays on screen).
const HEADER_ROWS_MIN: usize = 3;
/// Most rows looked at, once, for the first prompt behind a session's header rows.
const HEADER_ROWS_MAX: usize = 1000;

impl App {
    /// The first screen shows the conversation: when a session opens with [`HEADER_ROWS_MIN`]
    /// or more rows that are only header records (catalog, summaries, metadata events) before
    /// its first prompt, the feed
    /// starts at that prompt (a patch or terminal capture opened as a session selects its first
    /// file) (the rows above stay a scroll away). Done once, not while following
    /// a live tail, and never after the user moved; at most [`HEADER_ROWS_MAX`] rows looked at.
    fn place_first_screen(&mut self) {
        if self.placed || self.view.feed.follow {
            return;
        }
        let count = self.row_count();
        for r in 0..count.min(HEADER_ROWS_MAX) {
            let Some(item) = self.view.item_at(r) else {
                break;
            };
            match self.session.items.get(item) {
                Some(crate::session::Item::Event(_)) => continue,
                // A patch or a terminal capture (`crate::import::patch`): its first file shows.
                Some(crate::session::Item::Invocation(k))
                    if matches!(
                        self.session.invocations[*k].tool_name.as_str(),
                        "diff" | "terminal"
                    ) =>
                {
                    self.view.feed.selected = r;
                }
                Some(crate::session::Item::Message(m))
                    if m.kind == crate::session::MessageKind::Prompt && r >= HEADER_ROWS_MIN =>
                {
                    self.view.feed.selected = r;
                    self.view.feed.offset = r;
                }
                _ => {}
            }
            self.placed = true;
            return;
        }
        // Only header rows so far: a file still loading may bring the prompt next.
        if count >= HEADER_ROWS_MAX || self.source_status != crate::ui::SourceStatus::Loading {
            self.placed = count > 0;
        }
    }
}

/// Columns of summary the feed keeps beside the detail pane even past its share: a file name and
/// its directory (`…/services/waiting_summary.ex`).
const FEED_SUMMARY_NEED: usize = 28;

impl App {
    /// The feed/detail split for the feed rows `start..end` (their columns' widths).
    fn feed_split(&self, start: usize, end: usize) -> crate::ui::Split {
        let cols = crate::ui::feed::Cols::of_rows(
            &self.session,
            (start..end).filter_map(|r| self.view.item_at(r)),
        );
        crate::ui::Split {
            want: u16::try_from(cols.row_width() + 2 + 4).unwrap_or(u16::MAX),
            need: u16::try_from(cols.fixed_width() + 2 + 4 + cols.summary.min(FEED_SUMMARY_NEED))
                .unwrap_or(u16::MAX),
            share: self.view.feed_share(),
        }
    }

    /// Lays the screen out for `area` and brings view state and caches up to date: clamps the
    /// selection, scrolls it into view, and (re)builds the detail lines if their key changed
    /// (inline when light, else as a queued [`RenderJob`] with plain text meanwhile).
    pub fn prepare(&mut self, area: Rect) {
        self.place_first_screen();
        // The feed is as wide as the rows in view need (up to its share): from the rows drawn
        // last time, so the work is the screen's height, not the session's size.
        let rows = if self.view.feed.height == 0 {
            area.height
        } else {
            self.view.feed.height
        };
        let start = self.view.feed.offset;
        let end = (start + usize::from(rows)).min(self.row_count());
        let split = self.feed_split(start, end);
        self.areas = Areas::compute(area, self.view.zoom, self.replay.is_some(), split);
        let feed_h = Areas::inner(self.areas.feed).height;
        let detail_inner = Areas::inner(self.areas.detail);
        self.view.feed.height = feed_h;
        self.view.detail.height = detail_inner.height;
        let count = self.row_count();
        let h = usize::from(feed_h.max(1));
        let f = &mut self.view.feed;
        f.selected = f.selected.min(count.saturating_sub(1));
        if f.selected < f.offset {
            f.offset = f.selected;
        } else if f.selected >= f.offset + h {
            f.offset = f.selected + 1 - h;
        }
        f.offset = f.offset.min(count.saturating_sub(h));
        // The width from the rows this frame draws (the first guess used last frame's rows,
        // so the split moved one frame late, after a jump): the heights do not depend on it.
        let (start, end) = (f.offset, (f.offset + h).min(count));
        let split2 = self.feed_split(start, end);
        if split2 != split {
            self.areas = Areas::compute(area, self.view.zoom, self.replay.is_some(), split2);
        }
        let detail_inner = Areas::inner(self.areas.detail);
        self.view.detail.height = detail_inner.height;
        self.fit_image(detail_inner);
        let f = &mut self.view.feed;
        let (start, end) = (f.offset, (f.offset + h).min(count));
        let visible: Vec<usize> = (start..end).filter_map(|r| self.view.item_at(r)).collect();
        if !self.view.folds.stale.is_empty() {
            self.view.refresh_fold_summaries(&self.session, &visible);
        }
        // The prompt rows in view show their turn's figures (issue 28 item 3).
        self.view.refresh_turn_figures(&self.session, &visible);
        self.view.panel_scroll = self
            .view
            .panel_scroll
            .min(self.panel_len().saturating_sub(1));
        // The panels follow the selected row's session (SPEC §6).
        let followed = self.view.followed_session(&self.session);
        self.view.catalog.session = followed.unwrap_or(0);
        self.view.problems.session = followed;
        match self.view.tab {
            Tab::Detail => {}
            Tab::Catalog => self.view.catalog.prepare(
                &mut self.panels.catalog,
                &self.session,
                &self.theme,
                detail_inner,
            ),
            Tab::Problems => {
                self.view
                    .problems
                    .prepare(&mut self.panels.problems, &self.session, detail_inner);
            }
            Tab::Files => self.view.files.prepare(
                &mut self.panels.files,
                &self.session,
                &self.theme,
                detail_inner,
                (
                    self.view.detail.side_by_side,
                    self.view.detail.wrap,
                    self.limits,
                ),
            ),
            Tab::Sessions => {
                let live = self.live_state();
                let now = self.now.filter(|_| self.live);
                self.view.sessions.prepare(
                    &mut self.panels.sessions,
                    &self.session,
                    live.as_ref(),
                    now,
                    &self.theme,
                    detail_inner,
                );
            }
            Tab::Audit => {
                self.panels.files.refresh(&self.session);
                let files = self.panels.files.model();
                self.view
                    .audit
                    .prepare(&mut self.panels.audit, files, &self.session, detail_inner);
            }
        }
        if self.view.tab == Tab::Detail
            && let Some(item) = self.view.selected_item(&self.session)
        {
            let opts = DetailOpts {
                width: detail_inner.width.max(1),
                expanded: self.view.detail.expanded,
                side_by_side: self.view.detail.side_by_side,
                wrap: self.view.detail.wrap,
                limits: self.limits,
            };
            let key = DetailKey::of(&self.session, item, opts, &self.theme);
            // Live: every render runs off the app task. Rows arrive faster than highlighting
            // keeps up, and even a small detail can stall for 100+ ms the first time a syntax is
            // used, which would hold up keys (measured: examples/live_load.rs, BENCHMARKS.md).
            let view = (
                self.view.detail.scroll,
                usize::from(self.view.detail.height),
            );
            self.detail
                .refresh(&self.session, key, &self.theme, self.live, view);
            if self.scroll_to_match && self.detail.whole_key() == Some(key) {
                self.scroll_to_match = false;
                self.scroll_detail_to_match();
            }
        }
        let d = &mut self.view.detail;
        let max = self
            .detail
            .lines()
            .len()
            .saturating_sub(usize::from(d.height));
        if d.follow_tail {
            d.scroll = max;
        }
        d.scroll = d.scroll.min(max);
    }

    /// Scrolls the detail so its first line matching the search shows (with two lines of
    /// context above), when that line is below the first screen; the row a search selected
    /// may match deep in its output.
    pub(super) fn scroll_detail_to_match(&mut self) {
        let Some(re) = &self.search_re else {
            return;
        };
        let hit = self.detail.lines().iter().position(|l| {
            let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
            re.is_match(&text)
        });
        let d = &mut self.view.detail;
        match hit {
            Some(k) if k >= usize::from(d.height) => {
                d.scroll = k.saturating_sub(2);
                d.follow_tail = false;
            }
            // The hit may be past the part a folded output shows: expand it and look again
            // once it is rendered (at most once: an expanded detail is not expanded again).
            None if !d.expanded => {
                d.expanded = true;
                self.scroll_to_match = true;
            }
            Some(_) | None => {}
        }
    }

    /// Runs queued render, export and image jobs inline (tests; the loop spawns them instead).
    pub fn run_jobs_inline(&mut self) {
        while let Some(job) = self.detail.take_job() {
            let done = job.run();
            self.update(Msg::Rendered(done));
        }
        if let Some(job) = self.take_export_job() {
            let done = job.run();
            self.update(Msg::Exported(done));
        }
        if let Some(job) = self.take_image_job() {
            let done = job.run();
            self.update(Msg::ImageDecoded(done));
        }
    }

    /// What the widgets draw from this frame (after [`App::prepare`]).
    pub fn draw_ctx(&self) -> ui::DrawCtx<'_> {
        let live = self.live_state();
        ui::DrawCtx {
            shown: self.view.shown,
            session: &self.session,
            view: &self.view,
            panels: &self.panels,
            theme: &self.theme,
            keymap: &self.keymap,
            search: self.search_re.as_ref(),
            detail: self.detail.lines(),
            image: self.image_view.as_ref(),
            areas: self.areas,
            source: ui::SourceInfo {
                label: &self.source_label,
                status: &self.source_status,
                load_progress: self.load_progress,
                format: self.format,
                hint: self.hint.as_deref(),
            },
            matches: self.match_status(),
            // Ages against the live state's clock: the wall clock when the input is live, its
            // newest frame when it is a recording (issue 21).
            now: live.as_ref().map_or(self.now, |l| l.clock),
            live,
            replay: self.replay.as_ref().map(|r| (r, r.state(self.clock))),
        }
    }

    /// Draws the screen laid out by the last [`App::prepare`].
    pub fn draw(&self, frame: &mut ratatui::Frame<'_>) {
        ui::draw(frame, &self.draw_ctx());
    }
}
