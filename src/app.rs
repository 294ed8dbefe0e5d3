//! The interactive viewer: owns the session, the view state, the render cache and the terminal;
//! runs the event loop (STYLE 4.4, 4.7).
//!
//! Who calls it: `main.rs` through [`run`]; tests build an [`App`] headless with
//! [`App::headless`], drive it with [`App::update`] and draw it into a `TestBackend` after
//! [`App::prepare`].
//!
//! Invariants:
//! * One terminal owner: only the loop in [`run`] reads input and draws. The source task and
//!   render jobs send messages; they never touch the app.
//! * Draw on change: `update` returns whether anything visible changed; the [`FrameScheduler`]
//!   draws at most once per [`MIN_FRAME`]; the only timer is the elapsed-time tick, armed only
//!   while a call runs on a live source.
//! * Heavy detail renders run on `spawn_blocking`, tagged with a generation; a result is used
//!   only if it is for the selected item. Plain text stands in meanwhile.
//! * A `SourceMsg::Replace` (a saved Claude Code file, exactly ordered after it was streamed)
//!   swaps the whole session: every index held into the old one is mapped or dropped
//!   (`App::rebase_view`, the one path for restarts, compactions and replacements), and renders
//!   started before it are ignored.

use std::io::IsTerminal;
use std::time::Duration;

use crossterm::event::{
    Event, EventStream, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEventKind,
};
use futures::StreamExt;
use ratatui::layout::Rect;
use ratatui::text::Line;
use regex::Regex;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

mod browser;
mod copy;
mod player;
mod scan;
mod screen;

pub use crate::ui::SourceStatus;
pub use crate::ui::status_bar::MatchStatus;
pub use scan::SCAN_BUDGET;
pub use screen::{BackendScreen, CountingSink, Screen};

use crate::action::Action;
use crate::cli::OpenArgs;
use crate::detail::{DetailKey, DetailOpts, Pipeline, RenderDone, RenderJob};
use crate::import::{Decoded, Format};
use crate::keymap::Keymap;
use crate::protocol::Timestamp;
use crate::query::{Filter, compile_search};
use crate::session::{Applied, Session};
use crate::source::{
    CHANNEL_CAPACITY, NetConfig, SourceKind, SourceMsg, SourceState, spawn_source_with,
};
use crate::theme::Theme;
use crate::tui::Tui;
use crate::ui::{self, Areas};
use crate::view::{self, Mode, Pane, Tab, ViewState};

/// Shortest time between two draws (STYLE 4.7: 16 ms).
pub const MIN_FRAME: Duration = Duration::from_millis(16);
/// Period of the elapsed-time tick while a call runs on a live source.
pub const TICK: Duration = Duration::from_millis(250);
/// Source batches taken from the channel at once.
pub const BATCHES_PER_TURN: usize = 4;
/// Most decoded items applied per loop turn: a longer batch is split and the rest applied on the
/// next turns, so a key waits for at most this many items (a few ms) before it is handled.
pub const APPLY_PER_TURN: usize = 256;
/// Rows a mouse wheel notch moves.
const WHEEL_ROWS: usize = 3;

/// A message into the app.
#[derive(Debug)]
pub enum Msg {
    /// Terminal input (keys, mouse, resize).
    Term(Event),
    /// A user intent (tests, mouse, keymap).
    Action(Action),
    Source(SourceMsg),
    Rendered(RenderDone),
    /// Wall clock (epoch ms) for running calls' elapsed time.
    Tick(Timestamp),
    /// Replay timer: apply what is due at this instant (replay mode only).
    ReplayTick(Instant),
    /// Run the next bounded step of a search or filter scan (`app/scan.rs`).
    Work,
}

/// Coalesces draw requests: draws when dirty, at most once per `min` (STYLE 4.7).
#[derive(Debug, Clone)]
pub struct FrameScheduler {
    min: Duration,
    last: Option<Instant>,
    dirty: bool,
    urgent: bool,
}

impl FrameScheduler {
    pub fn new(min: Duration) -> Self {
        Self {
            min,
            last: None,
            dirty: true,
            urgent: false,
        }
    }

    /// Something changed: draw at the next allowed instant.
    pub fn request(&mut self) {
        self.dirty = true;
    }

    /// The user did something: draw at once, without waiting out the minimum interval (input
    /// comes at human rates; only source-driven draws need coalescing).
    pub fn request_now(&mut self) {
        self.dirty = true;
        self.urgent = true;
    }

    /// When to draw next: `None` when nothing changed.
    pub fn deadline(&self) -> Option<Instant> {
        if !self.dirty {
            return None;
        }
        if self.urgent {
            return Some(Instant::now());
        }
        Some(self.last.map_or_else(Instant::now, |l| l + self.min))
    }

    /// A frame was drawn at `now`.
    pub fn drew(&mut self, now: Instant) {
        self.last = Some(now);
        self.dirty = false;
        self.urgent = false;
    }
}

/// The viewer's state.
#[derive(Debug)]
pub struct App {
    pub session: Session,
    pub view: ViewState,
    pub theme: Theme,
    pub keymap: Keymap,
    pub source_label: String,
    pub source_status: SourceStatus,
    /// While a saved file is read: (bytes read, file size), for the status bar's percentage.
    pub load_progress: Option<(u64, u64)>,
    pub format: Option<Format>,
    /// A standing hint for the status bar (e.g. "showing the demo").
    pub hint: Option<String>,
    /// The compiled search (case-insensitive unless the query has an upper-case letter).
    pub search_re: Option<Regex>,
    /// The detail pane's pipeline: shown lines, their key and stage, render jobs.
    pub detail: Pipeline,
    /// The catalog and problems panels' caches (the view keeps only their selections).
    pub panels: ui::Panels,
    pub areas: Areas,
    /// Wall clock from the last tick; `None` in tests (no elapsed times drawn).
    pub now: Option<Timestamp>,
    pub quit: bool,
    /// Ctrl-Z was pressed; the loop suspends and clears this.
    pub suspend_requested: bool,
    /// The source is live (stdin, follow, network): select new rows as they arrive.
    pub live: bool,
    /// A search just selected a row: scroll its detail to the first matching line once the
    /// detail is rendered (cleared by the next action).
    pub(crate) scroll_to_match: bool,
    /// The replay player (`rawpv --replay FILE`); `None` shows the whole session at once.
    pub replay: Option<crate::replay::Replay>,
    /// The instant the replay state is drawn at (set by replay ticks and actions).
    pub clock: Instant,
    /// An OSC 52 sequence for the loop to write to the terminal (copy).
    pub clipboard_out: Option<String>,
    /// Opened from the session browser: Esc with nothing to close goes back to the list.
    pub from_browser: bool,
    /// Render limits of the detail pane (config `limits.*`).
    pub limits: crate::render::Limits,
    /// A search or filter scan running in bounded steps (`app/scan.rs`).
    scan: Option<scan::Scan>,
    /// The count of the committed search's matches (`app/scan.rs`).
    count: Option<scan::Count>,
    /// Longest step of a scan ([`SCAN_BUDGET`]; tests set zero: 16 items a step).
    pub scan_budget: Duration,
    /// A saved Claude Code file was read; its exact order is being computed (status bar).
    pub ordering: bool,
}

impl App {
    /// An app waiting for a source.
    pub fn new(source_label: impl Into<String>, live: bool) -> Self {
        let mut view = ViewState::default();
        view.feed.follow = live;
        Self {
            session: Session::new(),
            view,
            theme: if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
                Theme::mono()
            } else {
                Theme::dark()
            },
            keymap: Keymap::default(),
            source_label: source_label.into(),
            source_status: SourceStatus::Loading,
            load_progress: None,
            format: None,
            hint: None,
            search_re: None,
            detail: Pipeline::default(),
            panels: ui::Panels::default(),
            areas: Areas::default(),
            now: None,
            quit: false,
            suspend_requested: false,
            live,
            scroll_to_match: false,
            replay: None,
            clock: Instant::now(),
            clipboard_out: None,
            from_browser: false,
            limits: crate::render::Limits::default(),
            count: None,
            scan: None,
            scan_budget: scan::SCAN_BUDGET,
            ordering: false,
        }
    }

    /// A finished app over decoded items, without a terminal (tests, benches). Dark theme.
    pub fn headless(items: Vec<Decoded>, source_label: &str) -> Self {
        let mut app = Self::new(source_label, false);
        app.theme = Theme::dark();
        app.update(Msg::Source(SourceMsg::Batch(items)));
        app.update(Msg::Source(SourceMsg::Eof));
        app
    }

    /// The session shown.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The session, to change its settings (`max_items`, `backing`) before a source starts.
    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    /// The view state.
    pub fn view(&self) -> &ViewState {
        &self.view
    }

    /// The view state, to set it up in tests (prefer actions).
    pub fn view_mut(&mut self) -> &mut ViewState {
        &mut self.view
    }

    /// The detail pane's current lines (wrapped as drawn).
    pub fn detail_lines(&self) -> &[Line<'static>] {
        self.detail.lines()
    }

    /// The detail pane's pipeline (stage, key; read-only).
    pub fn detail(&self) -> &Pipeline {
        &self.detail
    }

    /// The render job waiting to be spawned, if any.
    pub fn queued_job(&self) -> Option<&RenderJob> {
        self.detail.queued()
    }

    /// Takes the render jobs waiting to be spawned (the loop spawns them; tests run or hold
    /// them). At most one: the newest queued.
    pub fn take_jobs(&mut self) -> Vec<RenderJob> {
        self.detail.take_job().into_iter().collect()
    }

    /// What the widgets draw from this frame (after [`App::prepare`]).
    pub fn draw_ctx(&self) -> ui::DrawCtx<'_> {
        ui::DrawCtx {
            shown: self.view.shown,
            session: &self.session,
            view: &self.view,
            panels: &self.panels,
            theme: &self.theme,
            keymap: &self.keymap,
            search: self.search_re.as_ref(),
            detail: self.detail.lines(),
            areas: self.areas,
            source: ui::SourceInfo {
                label: &self.source_label,
                status: &self.source_status,
                load_progress: self.load_progress,
                format: self.format,
                hint: self.hint.as_deref(),
                ordering: self.ordering,
            },
            matches: self.match_status(),
            now: self.now,
            replay: self.replay.as_ref().map(|r| (r, r.state(self.clock))),
        }
    }

    /// Draws the screen laid out by the last [`App::prepare`].
    pub fn draw(&self, frame: &mut ratatui::Frame<'_>) {
        ui::draw(frame, &self.draw_ctx());
    }

    /// Where each part of the screen went in the last [`App::prepare`] (mouse hit tests).
    pub fn areas(&self) -> Areas {
        self.areas
    }

    /// Whether the elapsed-time tick should run.
    pub fn animating(&self) -> bool {
        self.live && !self.session.ended && self.session.counts.running > 0
    }

    /// Applies one message; returns whether a redraw is needed.
    pub fn update(&mut self, msg: Msg) -> bool {
        match msg {
            Msg::Term(ev) => self.on_term(&ev),
            Msg::Action(a) => {
                self.apply_action(a);
                true
            }
            Msg::Source(m) => {
                self.on_source(m);
                true
            }
            Msg::Rendered(done) => self.on_rendered(done),
            Msg::ReplayTick(now) => self.replay_tick(now),
            Msg::Tick(now) => {
                self.now = Some(now);
                self.animating()
            }
            Msg::Work => self.work(self.scan_budget),
        }
    }

    fn on_term(&mut self, ev: &Event) -> bool {
        match ev {
            Event::Key(k) if k.kind == KeyEventKind::Press => {
                self.on_key(k);
                true
            }
            Event::Mouse(m) => {
                let (col, row) = (m.column, m.row);
                match m.kind {
                    MouseEventKind::ScrollDown => self.wheel(col, row, true),
                    MouseEventKind::ScrollUp => self.wheel(col, row, false),
                    MouseEventKind::Down(MouseButton::Left) => self.click(col, row),
                    _ => return false,
                }
                true
            }
            Event::Resize(..) | Event::FocusGained => true,
            Event::Key(_) | Event::FocusLost | Event::Paste(_) => false,
        }
    }

    fn on_key(&mut self, k: &KeyEvent) {
        self.view.message = None;
        if self.view.help {
            if let Some(a @ (Action::ToggleHelp | Action::Cancel | Action::Quit)) =
                self.keymap.action(k)
            {
                if a == Action::Quit && k.modifiers.contains(KeyModifiers::CONTROL) {
                    self.quit = true;
                }
                self.view.help = false;
            }
            return;
        }
        match self.view.mode {
            Mode::Normal => {
                if let Some(a) = self.keymap.action(k) {
                    self.apply_action(a);
                }
            }
            Mode::Search | Mode::Filter => self.on_input_key(k),
        }
    }

    fn on_input_key(&mut self, k: &KeyEvent) {
        match k.code {
            KeyCode::Esc => self.end_input(false),
            KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                self.end_input(false);
            }
            KeyCode::Enter => self.end_input(true),
            KeyCode::Backspace => {
                self.view.input.pop();
                self.preview_input();
            }
            KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) => {
                self.view.input.push(c);
                self.preview_input();
            }
            _ => {}
        }
    }

    /// Types text into the search / filter prompt (tests).
    pub fn type_text(&mut self, s: &str) {
        for c in s.chars() {
            self.on_key(&KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
    }

    /// Sends one key (tests).
    pub fn press(&mut self, code: KeyCode) -> bool {
        self.update(Msg::Term(Event::Key(KeyEvent::new(
            code,
            KeyModifiers::NONE,
        ))))
    }

    fn preview_input(&mut self) {
        if self.view.mode == Mode::Search {
            // Highlight as you type; the prompt row says why a regex does not compile (yet).
            let q = &self.view.input;
            (self.search_re, self.view.input_problem) = match compile_search(q) {
                Ok(re) => (re, None),
                Err(e) => {
                    let insensitive = !q.chars().any(char::is_uppercase);
                    (None, Some(crate::query::regex_problem(q, insensitive, &e)))
                }
            };
        }
    }

    fn end_input(&mut self, commit: bool) {
        let mode = std::mem::take(&mut self.view.mode);
        let input = std::mem::take(&mut self.view.input);
        self.view.input_problem = None;
        match mode {
            Mode::Normal => {}
            Mode::Search => {
                if commit {
                    self.set_search(&input);
                    if self.search_re.is_some() && !self.current_matches() {
                        self.search_step(true);
                    }
                } else {
                    // Back to the committed search.
                    let q = self.view.search.clone().unwrap_or_default();
                    self.search_re = compile_search(&q).ok().flatten();
                }
            }
            Mode::Filter => {
                if commit {
                    self.set_filter(Filter::parse(&input));
                }
            }
        }
    }

    /// Sets (or with empty text clears) the search; a bad regex leaves a message.
    pub fn set_search(&mut self, query: &str) {
        match compile_search(query) {
            Ok(re) => {
                self.search_re = re;
                self.view.search = (!query.is_empty()).then(|| query.to_owned());
                self.restart_count();
            }
            Err(e) => {
                let insensitive = !query.chars().any(char::is_uppercase);
                let why = crate::query::regex_problem(query, insensitive, &e);
                self.view.message = Some(format!("bad regex: {why}"));
                // The committed search stays (typing replaced its highlighting).
                let q = self.view.search.clone().unwrap_or_default();
                self.search_re = compile_search(&q).ok().flatten();
            }
        }
    }

    /// Sets or clears the filter, rebuilding the visible rows; keeps the selected item selected
    /// when it stays visible.
    pub fn set_filter(&mut self, filter: Option<Filter>) {
        if let Some(problem) = filter.as_ref().and_then(Filter::problem) {
            self.view.message = Some(problem);
        }
        self.view.filter = filter;
        self.rebuild_rows();
    }

    /// Recomputes the visible rows (after the filter or quiet-row setting changed, or the
    /// session was rebuilt); keeps the selected item selected when it stays visible. O(items) in
    /// bounded steps (`app/scan.rs`): small sessions finish at once.
    fn rebuild_rows(&mut self) {
        self.start_filter_scan();
    }

    fn current_matches(&self) -> bool {
        match (&self.search_re, self.view.selected_item(&self.session)) {
            (Some(re), Some(i)) => crate::session::query::item_matches(&self.session, i, re),
            _ => false,
        }
    }

    fn on_source(&mut self, m: SourceMsg) {
        match m {
            SourceMsg::Batch(items) => {
                if self.source_status == SourceStatus::Loading && self.live {
                    self.source_status = SourceStatus::Live;
                }
                if matches!(self.source_status, SourceStatus::Reconnecting(_)) {
                    self.source_status = SourceStatus::Live;
                }
                for d in items {
                    let applied = self.session.apply(d);
                    self.reconcile(applied);
                }
                self.compact_session();
            }
            SourceMsg::Format(f) => self.format = Some(f),
            SourceMsg::State(s) => {
                self.source_status = match s {
                    SourceState::Loading => SourceStatus::Loading,
                    SourceState::Reading { bytes, total } => {
                        self.load_progress = Some((bytes, total));
                        SourceStatus::Loading
                    }
                    SourceState::Ordering => {
                        self.ordering = true;
                        SourceStatus::Loading
                    }
                    SourceState::Live | SourceState::Connecting { .. } => SourceStatus::Live,
                    SourceState::Reconnecting { attempt, .. } => {
                        SourceStatus::Reconnecting(attempt)
                    }
                    SourceState::Ended => SourceStatus::Ended,
                    SourceState::Restarted { reason } => {
                        // The source re-sends from the start: fold it again from scratch.
                        self.rebase_view(Rebase::Restarted { reason });
                        SourceStatus::Live
                    }
                };
            }
            SourceMsg::Replace(session) => {
                self.ordering = false;
                self.rebase_view(Rebase::Replaced(session));
            }
            SourceMsg::Eof => {
                self.ordering = false;
                self.load_progress = None;
                self.session.finish();
                self.source_status = SourceStatus::Ended;
            }
            SourceMsg::Failed(e) => {
                self.ordering = false;
                self.session.finish();
                self.source_status = SourceStatus::Failed(e.to_string());
            }
        }
    }

    /// Memory bound on endless streams: drops the oldest finished rows past
    /// `Session::item_cap` (the status bar shows the dropped count) and rebases the view.
    fn compact_session(&mut self) {
        let selected = self.view.selected_item(&self.session);
        if let Some(c) = self.session.compact_if_needed() {
            self.rebase_view(Rebase::Compacted { c, selected });
        }
    }

    /// The one path for a session that changed wholesale under the view ([`Rebase`]): every
    /// item index held for the old session is mapped or dropped, and every cache and render
    /// derived from it goes. In all three cases: the render generation is bumped so results of
    /// renders started before are ignored, the detail cache and the panels' caches (catalog,
    /// problems) start afresh keeping their selections, the search count restarts and the
    /// detail resets. Then, by case:
    /// * `Restarted`: a new empty session; rows, folds, token totals and quiet count from zero.
    /// * `Compacted`: rows and folds remapped (`ViewState::remap`), the scan adjusted, the
    ///   selection kept (the last row when following).
    /// * `Replaced`: the selected row is kept by invocation id (else by kind, line and record;
    ///   else the row number is clamped), folded turns by their prompt's row; the filter, quiet
    ///   rows, turns and token totals are recomputed at once. The session's `backing` and
    ///   `max_items` settings stay.
    fn rebase_view(&mut self, why: Rebase) {
        self.detail.invalidate();
        self.panels = ui::Panels::default();
        match why {
            Rebase::Restarted { reason } => {
                self.session = Session::new();
                self.scan = None;
                self.view.progress = None;
                self.view.rows = self.view.filter.as_ref().map(|_| Vec::new());
                self.view.filtered.clone_from(&self.view.rows);
                self.view.folds = view::Folds::default();
                self.view.tokens = view::Tokens::default();
                self.view.quiet = 0;
                self.view.feed.selected = 0;
                self.view.feed.offset = 0;
                self.view.message = Some(format!("input restarted: {reason}"));
                self.restart_count();
            }
            Rebase::Compacted { c, selected } => {
                self.view.remap(&c, self.session.items.len());
                self.scan_after_compaction(&c);
                let new_sel = selected
                    .and_then(|i| c.item(i))
                    .and_then(|i| self.view.row_of(i));
                let last = self.row_count().saturating_sub(1);
                self.view.feed.selected = if self.view.feed.follow {
                    last
                } else {
                    new_sel.unwrap_or(0).min(last)
                };
                self.view.feed.offset = 0;
            }
            Rebase::Replaced(new) => self.replace_session(*new),
        }
        self.reset_detail();
    }

    /// [`Rebase::Replaced`]: swaps in the exact session and maps the view's item indices.
    fn replace_session(&mut self, mut new: Session) {
        let old_row = self.view.feed.selected;
        let selected = self
            .view
            .selected_item(&self.session)
            .and_then(|i| RowKey::of(&self.session, i));
        let folded: Vec<RowKey> = self
            .view
            .folds
            .folded
            .keys()
            .filter_map(|&p| RowKey::of(&self.session, p))
            .collect();
        new.backing.clone_from(&self.session.backing);
        new.max_items = self.session.max_items;
        let old = std::mem::replace(&mut self.session, new);
        // Freeing a big session takes a while: not on the app's thread.
        std::thread::spawn(move || drop(old));
        let keys: Vec<&RowKey> = selected.iter().chain(&folded).collect();
        let found = RowKey::find_all(&self.session, &keys);
        self.scan = None;
        self.view.progress = None;
        self.view.rows = None;
        self.view.filtered = None;
        self.view.folds = view::Folds::default();
        self.view.tokens = view::Tokens::default();
        self.view.quiet = 0;
        let n = self.session.items.len();
        // With every item a row, row == item until the filter scan maps it.
        self.view.feed.selected = match (&selected, found.first().copied().flatten()) {
            (Some(_), Some(i)) => i,
            _ => old_row.min(n.saturating_sub(1)),
        };
        self.count = None;
        self.start_filter_scan();
        self.finish_filter_scan();
        let sel = self.view.selected_item(&self.session);
        let skip = usize::from(selected.is_some());
        for p in found.iter().skip(skip).copied().flatten() {
            self.view.fold(&self.session, p);
        }
        if let Some(i) = sel {
            let row = match &self.view.rows {
                Some(r) => r.partition_point(|&x| x < i),
                None => i,
            };
            self.view.feed.selected = row.min(self.row_count().saturating_sub(1));
        }
        self.restart_count();
    }

    /// Updates the view for one change of the session (by key, no rescans).
    fn reconcile(&mut self, applied: Applied) {
        let Some(item) = applied.item else {
            return;
        };
        self.count_item_changed(item);
        if let Some(pos) = self.view.admit(&self.session, item, applied.new_item)
            && pos <= self.view.feed.selected
            && self.row_count() > 1
            && !applied.new_item
        {
            self.view.feed.selected += 1;
        }
        if applied.new_item && self.view.feed.follow {
            let last = self.view.row_count(&self.session).saturating_sub(1);
            if self.view.feed.selected != last {
                self.view.feed.selected = last;
                self.reset_detail();
            }
        }
    }

    fn on_rendered(&mut self, done: RenderDone) -> bool {
        let selected = self.view.selected_item(&self.session);
        self.detail.on_done(done, selected)
    }

    fn row_count(&self) -> usize {
        self.view.row_count(&self.session)
    }

    /// Selects visible row `row` (clamped).
    pub fn select(&mut self, row: usize) {
        let count = self.row_count();
        let row = row.min(count.saturating_sub(1));
        self.view.feed.follow = count > 0 && row + 1 == count && self.live;
        if row != self.view.feed.selected {
            self.view.feed.selected = row;
            self.reset_detail();
        }
    }

    fn reset_detail(&mut self) {
        self.view.detail.scroll = 0;
        self.view.detail.expanded = false;
        // A running call's stream is followed by default.
        self.view.detail.follow_tail =
            self.view
                .selected_item(&self.session)
                .and_then(|i| match self.session.items.get(i) {
                    Some(crate::session::Item::Invocation(k)) => {
                        Some(self.session.invocations[*k].status.is_open())
                    }
                    Some(crate::session::Item::Message(_) | crate::session::Item::Event(_))
                    | None => None,
                })
                .unwrap_or(false)
                && !self.session.ended;
    }

    fn scroll_detail(&mut self, down: bool, n: usize) {
        let d = &mut self.view.detail;
        if down {
            let max = self
                .detail
                .lines()
                .len()
                .saturating_sub(usize::from(d.height));
            d.scroll = (d.scroll + n).min(max);
        } else {
            d.scroll = d.scroll.saturating_sub(n);
            d.follow_tail = false;
        }
    }

    fn scroll_panel(&mut self, down: bool, n: usize) {
        if down {
            self.view.panel_scroll += n;
        } else {
            self.view.panel_scroll = self.view.panel_scroll.saturating_sub(n);
        }
        // The catalog's details scroll (clamped by `CatalogState::prepare`).
        let c = &mut self.view.catalog;
        c.scroll = if down {
            c.scroll.saturating_add(n)
        } else {
            c.scroll.saturating_sub(n)
        };
    }

    /// Enter on the problems panel: select the feed row of the selected finding (clearing a
    /// filter that hides it) and show its detail.
    fn open_finding(&mut self) {
        let Some(item) = self
            .view
            .problems
            .selected_finding(&self.session)
            .and_then(|f| crate::ui::problems::feed_item_for(&self.session, f))
        else {
            self.view.message = Some("this finding has no row in the feed".into());
            return;
        };
        if self.view.row_of(item).is_none() {
            self.set_filter(None);
        }
        if let Some(row) = self.view.row_of(item) {
            self.select(row);
        }
        self.view.tab = Tab::Detail;
        self.view.focus = Pane::Feed;
    }

    /// Enter on the catalog panel: filter the feed to the selected tool's calls, or clear that
    /// filter when it is already set.
    fn toggle_tool_filter(&mut self) {
        let Some(name) = self
            .view
            .catalog
            .selected_tool(&self.session)
            .map(str::to_owned)
        else {
            return;
        };
        let raw = format!("tool:{name}");
        if self.view.filter.as_ref().is_some_and(|f| f.raw == raw) {
            self.set_filter(None);
            self.view.message = Some("filter cleared".into());
        } else {
            self.set_filter(Filter::parse(&raw));
            self.view.message = Some(format!("feed: {name} calls only (Enter again: all)"));
        }
    }

    fn move_focused(&mut self, down: bool, n: usize) {
        match (self.view.focus, self.view.tab) {
            (Pane::Feed, _) => {
                let sel = self.view.feed.selected;
                self.select(if down { sel + n } else { sel.saturating_sub(n) });
            }
            (Pane::Detail, Tab::Detail) => self.scroll_detail(down, n),
            // One row moves the tool selection; a page scrolls the tool's details.
            (Pane::Detail, Tab::Catalog) if n == 1 => {
                if down {
                    self.view.catalog.select_next(&self.session);
                } else {
                    self.view.catalog.select_prev();
                }
            }
            (Pane::Detail, Tab::Catalog) => self.scroll_panel(down, n),
            (Pane::Detail, Tab::Problems) => {
                let d = n as isize;
                self.view
                    .problems
                    .select_by(&self.session, if down { d } else { -d });
            }
        }
    }

    fn wheel(&mut self, col: u16, row: u16, down: bool) {
        if Areas::hit(self.areas.feed, col, row) {
            let sel = self.view.feed.selected;
            self.select(if down {
                sel + WHEEL_ROWS
            } else {
                sel.saturating_sub(WHEEL_ROWS)
            });
        } else if Areas::hit(self.areas.detail, col, row) {
            match self.view.tab {
                Tab::Detail => self.scroll_detail(down, WHEEL_ROWS),
                Tab::Catalog => self.scroll_panel(down, WHEEL_ROWS),
                Tab::Problems => self.move_focused(down, WHEEL_ROWS),
            }
        }
    }

    fn click(&mut self, col: u16, row: u16) {
        let inner = Areas::inner(self.areas.feed);
        if Areas::hit(inner, col, row) {
            self.view.focus = Pane::Feed;
            let r = self.view.feed.offset + usize::from(row - inner.y);
            if r < self.row_count() {
                self.select(r);
                // A click on a prompt row's fold marker (`▾`/`▸`) folds or unfolds its turn.
                let on_marker = usize::from(col - inner.x) == crate::ui::feed::FOLD_MARKER_COL;
                if on_marker
                    && self
                        .view
                        .item_at(r)
                        .is_some_and(|i| crate::session::query::is_turn_start(&self.session, i))
                {
                    self.fold_selected(None);
                }
            }
        } else if Areas::hit(self.areas.detail, col, row) {
            self.view.focus = Pane::Detail;
            let inner = Areas::inner(self.areas.detail);
            match self.view.tab {
                Tab::Detail => {}
                Tab::Catalog => {
                    if let Some(i) = self.view.catalog.index_at(&self.session, inner, row) {
                        self.view.catalog.selected = i;
                        self.view.catalog.scroll = 0;
                    }
                }
                Tab::Problems => {
                    if let Some(i) = self.view.problems.index_at(&self.session, inner, row) {
                        self.view.problems.selected = i;
                    }
                }
            }
        }
    }

    /// Selects the next (or previous) row after the selection for which `pred` holds, looking
    /// inside folded turns too (the turn of a hit unfolds). With `wrap`, continues from the
    /// other end. Returns whether one was found.
    fn jump(&mut self, forward: bool, wrap: bool, pred: impl Fn(&Session, usize) -> bool) -> bool {
        let count = self.view.filtered_count(&self.session);
        let Some(sel) = self.view.selected_item(&self.session) else {
            return false;
        };
        let (after, before) = match self.view.filtered_pos(sel) {
            Ok(k) => (k + 1, k),
            Err(k) => (k, k),
        };
        let order: Box<dyn Iterator<Item = usize>> = match (forward, wrap) {
            (true, false) => Box::new(after..count),
            (true, true) => Box::new((after..count).chain(0..after.min(count))),
            (false, false) => Box::new((0..before).rev()),
            (false, true) => Box::new((0..before).rev().chain((before..count).rev())),
        };
        for k in order {
            if let Some(i) = self.view.filtered_at(k)
                && pred(&self.session, i)
            {
                self.view.focus = Pane::Feed;
                self.reveal(i);
                return true;
            }
        }
        false
    }

    /// Selects item `item`, unfolding its turn when it is folded away.
    fn reveal(&mut self, item: usize) {
        if self.view.folds.hidden(item)
            && let Some(p) = self.view.folds.turn_of(item)
        {
            self.view.unfold(&self.session, p);
        }
        self.select_item(item);
    }

    /// Selects the row of `item` (nearest row when it is not one), resetting the detail when
    /// the selected item changes.
    fn select_item(&mut self, item: usize) {
        let prev = self.view.selected_item(&self.session);
        let row = match &self.view.rows {
            Some(r) => r.partition_point(|&x| x < item),
            None => item,
        };
        self.select(row);
        if self.view.selected_item(&self.session) != prev {
            self.reset_detail();
        }
    }

    /// Folds (`Some(true)`), unfolds (`Some(false)`) or toggles (`None`) the selected row's turn.
    fn fold_selected(&mut self, want: Option<bool>) {
        let Some(item) = self.view.selected_item(&self.session) else {
            return;
        };
        let Some(p) = self.view.folds.turn_of(item) else {
            self.view.message =
                Some("no turn here: rows before the first prompt do not fold".into());
            return;
        };
        let folded = self.view.folds.folded.contains_key(&p);
        match want.unwrap_or(!folded) {
            true if !folded => {
                self.view.fold(&self.session, p);
            }
            false if folded => {
                self.view.unfold(&self.session, p);
            }
            true | false => {}
        }
        self.select_item(p);
    }

    fn search_step(&mut self, forward: bool) {
        let Some(re) = self.search_re.clone() else {
            self.view.message = Some("no search: press / to search".into());
            return;
        };
        self.start_search(re, forward);
    }

    /// Applies a user intent.
    pub fn apply_action(&mut self, a: Action) {
        self.cancel_search_scan();
        self.scroll_to_match = false;
        match a {
            Action::Quit => self.quit = true,
            Action::Suspend => self.suspend_requested = true,
            Action::MoveDown => self.move_focused(true, 1),
            Action::MoveUp => self.move_focused(false, 1),
            Action::PageDown | Action::PageUp => {
                let h = match self.view.focus {
                    Pane::Feed => self.view.feed.height,
                    Pane::Detail => self.view.detail.height,
                };
                self.move_focused(a == Action::PageDown, usize::from(h.max(2) - 1));
            }
            Action::Top => match (self.view.focus, self.view.tab) {
                (Pane::Feed, _) => self.select(0),
                (Pane::Detail, Tab::Detail) => {
                    self.view.detail.scroll = 0;
                    self.view.detail.follow_tail = false;
                }
                (Pane::Detail, Tab::Catalog | Tab::Problems) => {
                    self.view.panel_scroll = 0;
                    self.view.catalog.selected = 0;
                    self.view.catalog.scroll = 0;
                    self.view.problems.selected = 0;
                }
            },
            Action::Bottom => match (self.view.focus, self.view.tab) {
                (Pane::Feed, _) => {
                    self.select(usize::MAX);
                    self.view.feed.follow = true;
                }
                (Pane::Detail, Tab::Detail) => self.follow_tail(),
                (Pane::Detail, Tab::Catalog | Tab::Problems) => {
                    self.view.panel_scroll = usize::MAX / 2;
                    self.view.catalog.selected = usize::MAX / 2;
                    self.view.problems.selected = usize::MAX / 2;
                }
            },
            Action::FocusNext => {
                self.view.focus = match self.view.focus {
                    Pane::Feed => Pane::Detail,
                    Pane::Detail => Pane::Feed,
                };
                // The feed cannot be focused while hidden.
                if self.view.focus == Pane::Feed {
                    self.view.zoom = false;
                }
            }
            Action::Open => match (self.view.focus, self.view.tab) {
                (Pane::Feed, _) => self.view.focus = Pane::Detail,
                (Pane::Detail, Tab::Detail) => {
                    self.view.detail.expanded = !self.view.detail.expanded;
                }
                (Pane::Detail, Tab::Catalog) => self.toggle_tool_filter(),
                (Pane::Detail, Tab::Problems) => self.open_finding(),
            },
            Action::ToggleExpand => self.view.detail.expanded = !self.view.detail.expanded,
            Action::Follow => self.follow_tail(),
            Action::ToggleQuiet => {
                self.view.show_quiet = !self.view.show_quiet;
                self.rebuild_rows();
            }
            Action::ToggleZoom => {
                self.view.zoom = !self.view.zoom;
                if self.view.zoom {
                    self.view.focus = Pane::Detail;
                }
            }
            Action::ToggleWrap => self.view.detail.wrap = !self.view.detail.wrap,
            Action::ToggleSideBySide => {
                self.view.detail.side_by_side = !self.view.detail.side_by_side;
                // On a narrow detail nothing changes on screen: say why.
                let width = Areas::inner(self.areas.detail).width;
                if self.view.detail.side_by_side && width < crate::render::SIDE_BY_SIDE_MIN_WIDTH {
                    self.view.message = Some(format!(
                        "diffs show side by side when the detail is {} columns wide or more \
                         (it has {width}; z zooms it)",
                        crate::render::SIDE_BY_SIDE_MIN_WIDTH
                    ));
                }
            }
            Action::StartSearch => {
                self.view.mode = Mode::Search;
                self.view.input.clear();
            }
            Action::SearchNext => self.search_step(true),
            Action::SearchPrev => self.search_step(false),
            Action::NextError | Action::PrevError => {
                if !self.jump(
                    a == Action::NextError,
                    false,
                    crate::session::query::is_error,
                ) {
                    self.view.message = Some("no more errors".into());
                }
            }
            Action::NextPrompt | Action::PrevPrompt => {
                if !self.jump(
                    a == Action::NextPrompt,
                    false,
                    crate::session::query::is_prompt,
                ) {
                    self.view.message = Some("no more prompts".into());
                }
            }
            Action::ToggleFold => self.fold_selected(None),
            Action::FoldTurn => self.fold_selected(Some(true)),
            Action::UnfoldTurn => self.fold_selected(Some(false)),
            Action::FoldAll => {
                let sel = self.view.selected_item(&self.session);
                let n = self.view.fold_all(&self.session);
                if n == 0 && self.view.folds.prompts.is_empty() {
                    self.view.message = Some("no turns to fold: no prompts".into());
                }
                if let Some(i) = sel {
                    let keep = self
                        .view
                        .folds
                        .turn_of(i)
                        .filter(|_| self.view.folds.hidden(i));
                    self.select_item(keep.unwrap_or(i));
                }
            }
            Action::UnfoldAll => {
                let sel = self.view.selected_item(&self.session);
                self.view.unfold_all();
                if let Some(i) = sel {
                    self.select_item(i);
                }
            }
            Action::StartFilter => {
                self.view.mode = Mode::Filter;
                self.view.input = self
                    .view
                    .filter
                    .as_ref()
                    .map(|f| f.raw.clone())
                    .unwrap_or_default();
            }
            Action::ShowCatalog => self.toggle_tab(Tab::Catalog),
            Action::ShowProblems => self.toggle_tab(Tab::Problems),
            Action::ToggleHelp => self.view.help = !self.view.help,
            Action::TogglePlay
            | Action::SpeedUp
            | Action::SpeedDown
            | Action::StepForward
            | Action::StepBack
            | Action::NextTurn
            | Action::PrevTurn
            | Action::Seek(_) => self.replay_action(a),
            Action::CopyInput => self.copy(crate::clipboard::CopyWhat::Input),
            Action::CopyOutput => self.copy(crate::clipboard::CopyWhat::Output),
            Action::CopyRaw => self.copy(crate::clipboard::CopyWhat::Raw),
            Action::Cancel => {
                if self.view.help {
                    self.view.help = false;
                } else if self.view.search.is_some() {
                    self.view.search = None;
                    self.search_re = None;
                    self.count = None;
                } else if self.view.filter.is_some() {
                    self.set_filter(None);
                } else if self.view.tab != Tab::Detail {
                    self.view.tab = Tab::Detail;
                } else if self.from_browser {
                    self.quit = true;
                }
            }
        }
    }

    fn follow_tail(&mut self) {
        self.view.detail.follow_tail = true;
        self.view.detail.scroll = self
            .detail
            .lines()
            .len()
            .saturating_sub(usize::from(self.view.detail.height));
    }

    fn toggle_tab(&mut self, tab: Tab) {
        self.view.panel_scroll = 0;
        self.view.tab = if self.view.tab == tab {
            Tab::Detail
        } else {
            tab
        };
    }

    /// Lays the screen out for `area` and brings view state and caches up to date: clamps the
    /// selection, scrolls it into view, and (re)builds the detail lines if their key changed
    /// (inline when light, else as a queued [`RenderJob`] with plain text meanwhile).
    pub fn prepare(&mut self, area: Rect) {
        self.areas = Areas::compute(area, self.view.zoom, self.replay.is_some());
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
        if !self.view.folds.stale.is_empty() {
            let (start, end) = (f.offset, (f.offset + h).min(count));
            let visible: Vec<usize> = (start..end).filter_map(|r| self.view.item_at(r)).collect();
            self.view.refresh_fold_summaries(&self.session, &visible);
        }
        self.view.panel_scroll = self
            .view
            .panel_scroll
            .min(self.panel_len().saturating_sub(1));
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
    fn scroll_detail_to_match(&mut self) {
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

    fn panel_len(&self) -> usize {
        match self.view.tab {
            Tab::Detail => 0,
            Tab::Catalog => self.session.catalog().map_or(0, |c| c.tools.len()),
            Tab::Problems => self.session.findings.len(),
        }
    }

    /// Runs queued render jobs inline (tests; the loop spawns them instead).
    pub fn run_jobs_inline(&mut self) {
        while let Some(job) = self.detail.take_job() {
            let done = job.run();
            self.update(Msg::Rendered(done));
        }
    }
}

/// `rawpv` with no input on a terminal: the session browser (see `app/browser.rs`).
///
/// # Errors
/// The terminal could not be set up or written.
pub async fn run_browse(open: &OpenArgs) -> color_eyre::Result<i32> {
    if !std::io::stdout().is_terminal() {
        eprintln!("rawpv: the browser needs a terminal; use `rawpv print INPUT` for plain output");
        return Ok(2);
    }
    let Some(config) = player::load_config(open) else {
        return Ok(2);
    };
    browser::run_browser(&config).await
}

/// Why the viewer cannot open `kind` at all, said before the screen is taken (like `print`):
/// a saved file that is missing or a directory, or `-` while stdin is the terminal (the
/// reader would eat the keys). `None` when it can try; a followed file may appear later.
fn unopenable(kind: &SourceKind) -> Option<String> {
    match kind {
        SourceKind::File(p) => match std::fs::metadata(p) {
            Err(e) => Some(format!("cannot read {}: {e}", p.display())),
            Ok(m) if m.is_dir() => Some(format!("cannot read {}: it is a directory", p.display())),
            Ok(_) => None,
        },
        SourceKind::Stdin if std::io::stdin().is_terminal() => Some(
            "`-` reads a session from stdin, but stdin is the terminal: pipe one in \
             (`producer | rawpv -`) or name a file"
                .into(),
        ),
        SourceKind::Stdin | SourceKind::Follow(_) | SourceKind::Url(_) | SourceKind::Demo => None,
    }
}

/// Runs the TUI on `kind`; returns the exit code.
///
/// # Errors
/// The terminal could not be set up or written.
pub async fn run(kind: SourceKind, open: &OpenArgs) -> color_eyre::Result<i32> {
    if let Some(e) = unopenable(&kind) {
        eprintln!("rawpv: {e}");
        return Ok(2);
    }
    if !std::io::stdout().is_terminal() {
        eprintln!("rawpv: the viewer needs a terminal; use `rawpv print INPUT` for plain output");
        return Ok(2);
    }
    let live = matches!(
        kind,
        SourceKind::Follow(_) | SourceKind::Stdin | SourceKind::Url(_)
    );
    let Some(config) = player::load_config(open) else {
        return Ok(2);
    };
    if open.replay {
        return player::run_replay(kind, open, &config).await;
    }
    let mut app = App::new(kind.label(), live);
    app.configure(&config);
    if let SourceKind::File(p) = &kind {
        // Big outputs stay in the file and are read back when shown (RAWP NDJSON files).
        app.session.backing = Some(std::sync::Arc::from(p.as_path()));
    }
    if !live {
        // A saved file is finite: every row stays. The row cap is for endless live streams.
        app.session.max_items = Some(0);
    }
    if kind == SourceKind::Demo && open.input.is_none() {
        app.hint = Some("demo session: `rawpv FILE` opens a session file".into());
    }
    // Token from --token-file / RAWP_TOKEN; its warnings go to stderr before the TUI starts.
    let net = match NetConfig::resolve(open.net.token_file.as_deref()) {
        Ok(mut n) => {
            open.net.apply(&mut n);
            n
        }
        Err(e) => {
            eprintln!("rawpv: {e}");
            return Ok(2);
        }
    };
    for w in &net.warnings {
        eprintln!("rawpv: warning: {w}");
    }
    let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
    let cancel = CancellationToken::new();
    let source = spawn_source_with(kind, net, tx, cancel.clone());
    let mut tui = Tui::init()?;
    let result = event_loop(&mut app, &mut tui, rx).await;
    cancel.cancel();
    drop(tui);
    let _ = tokio::time::timeout(Duration::from_secs(1), source).await;
    result.map(|()| 0)
}

pub(crate) async fn event_loop(
    app: &mut App,
    tui: &mut Tui,
    rx: mpsc::Receiver<SourceMsg>,
) -> color_eyre::Result<()> {
    // Boxed: the loop's state is large (clippy::large_futures for every caller otherwise).
    Box::pin(run_loop(app, tui, EventStream::new(), rx)).await
}

/// The app loop (STYLE 4.4): terminal input first, then signals, draws (at most one per
/// [`MIN_FRAME`]), render results, source batches ([`BATCHES_PER_TURN`] per turn) and timers;
/// returns when the app quits, `events` ends or a signal arrives. [`run`] calls it with the real
/// terminal and crossterm's event stream; benches and tests with a [`BackendScreen`] and their
/// own input stream.
///
/// # Errors
/// Input or screen I/O failed.
pub async fn run_loop<S, E>(
    app: &mut App,
    screen: &mut S,
    mut events: E,
    mut rx: mpsc::Receiver<SourceMsg>,
) -> color_eyre::Result<()>
where
    S: Screen,
    E: futures::Stream<Item = std::io::Result<Event>> + Unpin,
{
    let (render_tx, mut render_rx) = mpsc::channel::<RenderDone>(16);
    let mut sched = FrameScheduler::new(MIN_FRAME);
    let mut batch = Vec::with_capacity(BATCHES_PER_TURN);
    // Received but not yet applied (a turn applies at most APPLY_PER_TURN items).
    let mut pending = std::collections::VecDeque::new();
    let mut source_open = true;
    let mut signals = crate::signals::Signals::new()?;
    let mut next_tick = Instant::now() + TICK;
    while !app.quit {
        let draw_at = sched.deadline();
        let ticking = app.animating();
        let replay_at = app.replay_deadline();
        tokio::select! {
            biased;
            ev = events.next() => match ev {
                Some(Ok(ev)) => {
                    if app.update(Msg::Term(ev)) {
                        sched.request_now();
                    }
                }
                Some(Err(e)) => return Err(e.into()),
                None => break,
            },
            sig = signals.recv() => match sig {
                crate::signals::Sig::Fatal(_) => break,
                crate::signals::Sig::Stop => {
                    screen.suspend()?;
                    sched.request_now();
                }
                crate::signals::Sig::Cont => {
                    screen.resume()?;
                    sched.request_now();
                }
            },
            () = sleep_until_opt(draw_at), if draw_at.is_some() => {
                let size = screen.size()?;
                app.prepare(Rect::new(0, 0, size.width, size.height));
                if let Some(job) = app.detail.take_job() {
                    let tx = render_tx.clone();
                    tokio::task::spawn_blocking(move || {
                        let _ = tx.blocking_send(job.run());
                    });
                }
                screen.draw(|f| app.draw(f))?;
                screen.drew(app);
                sched.drew(Instant::now());
            }
            () = std::future::ready(()), if app.scanning() && draw_at.is_none_or(|d| d > Instant::now()) => {
                // A bounded step of a search or filter; input, signals and due frames first.
                if app.update(Msg::Work) {
                    sched.request();
                }
            }
            Some(done) = render_rx.recv() => {
                if app.update(Msg::Rendered(done)) {
                    sched.request();
                }
            }
            () = std::future::ready(()), if !pending.is_empty() => {
                apply_some(app, &mut pending, APPLY_PER_TURN);
                sched.request();
            }
            n = rx.recv_many(&mut batch, BATCHES_PER_TURN), if source_open && pending.is_empty() => {
                if n == 0 {
                    source_open = false;
                }
                pending.extend(batch.drain(..));
                apply_some(app, &mut pending, APPLY_PER_TURN);
                sched.request();
            }
            () = sleep_until_opt(replay_at), if replay_at.is_some() => {
                if app.update(Msg::ReplayTick(Instant::now())) {
                    sched.request();
                }
            }
            () = tokio::time::sleep_until(next_tick), if ticking => {
                next_tick = Instant::now() + TICK;
                let now = Timestamp(chrono::Utc::now().timestamp_millis());
                if app.update(Msg::Tick(now)) {
                    sched.request();
                }
            }
        }
        if let Some(seq) = app.clipboard_out.take() {
            screen.write_raw(&seq)?;
        }
        if app.suspend_requested {
            app.suspend_requested = false;
            screen.suspend()?;
            sched.request();
        }
    }
    Ok(())
}

/// Applies queued source messages in order until `budget` decoded items were applied; a batch
/// that does not fit is split and its rest stays first in the queue.
fn apply_some(app: &mut App, pending: &mut std::collections::VecDeque<SourceMsg>, budget: usize) {
    let mut left = budget.max(1);
    while left > 0
        && let Some(m) = pending.pop_front()
    {
        let m = match m {
            SourceMsg::Batch(mut items) if items.len() > left => {
                let rest = items.split_off(left);
                pending.push_front(SourceMsg::Batch(rest));
                SourceMsg::Batch(items)
            }
            other => other,
        };
        if let SourceMsg::Batch(items) = &m {
            left -= items.len().min(left);
        }
        app.update(Msg::Source(m));
    }
}

async fn sleep_until_opt(at: Option<Instant>) {
    if let Some(at) = at {
        tokio::time::sleep_until(at).await;
    }
}

/// Why the session under the view changed wholesale ([`App::rebase_view`]).
#[derive(Debug)]
enum Rebase {
    /// The source re-sends from the start (a followed file was truncated or replaced).
    Restarted { reason: String },
    /// The oldest rows were dropped (`Session::compact_if_needed`); `selected` is the item that
    /// was selected before.
    Compacted {
        c: crate::session::Compaction,
        selected: Option<usize>,
    },
    /// The exact session takes the streamed one's place (`SourceMsg::Replace`).
    Replaced(Box<Session>),
}

/// What identifies a feed row across two decodes of the same input (`App::replace_session`):
/// an invocation by its id; a message by its kind, line and record (`metadata.claude_code`
/// `file` and `uuid`: a subagent file's lines restart at 1); another row likewise by its frame
/// type.
#[derive(Debug, Clone, PartialEq)]
enum RowKey {
    Invocation(String),
    Message(crate::session::MessageKind, u64, Option<(String, String)>),
    Event(crate::protocol::FrameType, u64, Option<(String, String)>),
}

/// A Claude Code frame's record: (`file`, `uuid`) from `metadata.claude_code`.
fn record_of(meta: &serde_json::Map<String, serde_json::Value>) -> Option<(&str, &str)> {
    let cc = meta.get("claude_code")?;
    let s = |k: &str| cc.get(k).and_then(serde_json::Value::as_str);
    (s("uuid").is_some() || s("file").is_some())
        .then(|| (s("file").unwrap_or(""), s("uuid").unwrap_or("")))
}

impl RowKey {
    fn of(session: &Session, item: usize) -> Option<Self> {
        let owned = |r: Option<(&str, &str)>| r.map(|(f, u)| (f.to_owned(), u.to_owned()));
        Some(match session.items.get(item)? {
            crate::session::Item::Invocation(k) => {
                Self::Invocation(session.invocations.get(*k)?.invocation_id.clone())
            }
            crate::session::Item::Message(m) => {
                Self::Message(m.kind, m.line, owned(record_of(&m.metadata)))
            }
            crate::session::Item::Event(f) => Self::Event(
                f.frame_type.clone(),
                f.origin.line,
                owned(record_of(&f.envelope.metadata)),
            ),
        })
    }

    /// Whether item `i` of `session` is this row. No allocation.
    fn is(&self, session: &Session, i: usize) -> bool {
        let same = |want: &Option<(String, String)>, have: Option<(&str, &str)>| match (want, have)
        {
            (Some((f, u)), Some((hf, hu))) => f == hf && u == hu,
            (None, None) => true,
            (Some(_), None) | (None, Some(_)) => false,
        };
        match (self, session.items.get(i)) {
            (Self::Invocation(id), Some(crate::session::Item::Invocation(k))) => session
                .invocations
                .get(*k)
                .is_some_and(|inv| inv.invocation_id == *id),
            (Self::Message(kind, line, rec), Some(crate::session::Item::Message(m))) => {
                m.kind == *kind && m.line == *line && same(rec, record_of(&m.metadata))
            }
            (Self::Event(ty, line, rec), Some(crate::session::Item::Event(f))) => {
                f.frame_type == *ty
                    && f.origin.line == *line
                    && same(rec, record_of(&f.envelope.metadata))
            }
            (
                Self::Invocation(_) | Self::Message(..) | Self::Event(..),
                Some(
                    crate::session::Item::Invocation(_)
                    | crate::session::Item::Message(_)
                    | crate::session::Item::Event(_),
                )
                | None,
            ) => false,
        }
    }

    /// The first item of `session` each key names (`None`: gone). One pass over the items.
    fn find_all(session: &Session, keys: &[&Self]) -> Vec<Option<usize>> {
        let mut found = vec![None; keys.len()];
        if keys.is_empty() {
            return found;
        }
        for i in 0..session.items.len() {
            for (slot, want) in found.iter_mut().zip(keys) {
                if slot.is_none() && want.is(session, i) {
                    *slot = Some(i);
                }
            }
            if found.iter().all(Option::is_some) {
                break;
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn frames_are_coalesced_to_the_minimum_interval() {
        let mut s = FrameScheduler::new(MIN_FRAME);
        let t0 = Instant::now();
        assert_eq!(s.deadline(), Some(t0), "first frame is due at once");
        s.drew(t0);
        assert_eq!(s.deadline(), None, "idle: no deadline, no timer");
        tokio::time::advance(Duration::from_millis(3)).await;
        s.request();
        s.request();
        assert_eq!(s.deadline(), Some(t0 + MIN_FRAME), "waits out the interval");
        tokio::time::sleep_until(s.deadline().unwrap_or(t0)).await;
        assert_eq!(Instant::now() - t0, MIN_FRAME);
        s.drew(Instant::now());
        tokio::time::advance(Duration::from_millis(100)).await;
        s.request();
        assert!(
            s.deadline().is_some_and(|d| d <= Instant::now()),
            "late request draws at once"
        );
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn input_draws_at_once_without_waiting_out_the_interval() {
        let mut s = FrameScheduler::new(MIN_FRAME);
        let t0 = Instant::now();
        s.drew(t0);
        s.request();
        assert_eq!(
            s.deadline(),
            Some(t0 + MIN_FRAME),
            "source changes are coalesced"
        );
        s.request_now();
        assert_eq!(s.deadline(), Some(t0), "a key is drawn at once");
        s.drew(t0);
        s.request();
        assert_eq!(
            s.deadline(),
            Some(t0 + MIN_FRAME),
            "urgency ends with the draw"
        );
    }
}
