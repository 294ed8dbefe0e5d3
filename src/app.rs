//! The interactive viewer: owns the session, the view state, the detail pipeline, the panels'
//! caches and the terminal; runs the event loop (STYLE 4.4, 4.7). This file holds the state and
//! `update`'s dispatch; by responsibility: `update.rs` (messages → handlers, the rebase of the
//! view), `input.rs` (keys, prompts, mouse), `pane.rs` (what an action means, one `match` per
//! pane), `frame.rs` (layout, caches, the draw context), `event_loop.rs`, `entry.rs` (`run`,
//! `run_browse`), `scan.rs` (bounded search and filter scans), `player.rs` (replay), `copy.rs`,
//! `browser.rs`.
//!
//! Who calls it: `main.rs` through [`run`]; tests build an [`App`] headless with
//! [`App::headless`], drive it with [`App::update`] and draw it into a `TestBackend` after
//! [`App::prepare`] with [`App::draw`]. Its fields are private to this module: tests use methods.
//!
//! Invariants:
//! * One terminal owner: only the loop in [`run`] reads input and draws. The source task and
//!   render jobs send messages; they never touch the app.
//! * Draw on change: `update` returns whether anything visible changed; the [`FrameScheduler`]
//!   draws at most once per [`MIN_FRAME`]; the only timer is the clock tick, armed while a live
//!   source goes on (it redraws while a call runs or when the live state's words change).
//! * Attention (issue 21): the live state (`session::live`) is asked after every source batch
//!   and tick; entering waiting, stuck or looping leaves bell and notification bytes
//!   (`crate::notify`) that the loop writes through the terminal, once per state.
//! * Heavy detail renders run on `spawn_blocking`, tagged with a generation; a result is used
//!   only if it is for the selected item. Plain text stands in meanwhile.
//! * When the session changes wholesale (a followed file restarted, the oldest rows compacted
//!   away), every index held into the old one is mapped or dropped (`App::rebase_view`, the one
//!   path for both), and renders started before it are ignored.

use std::time::Duration;

use crossterm::event::Event;
use ratatui::text::Line;
use regex::Regex;
use tokio::time::Instant;

mod browser;
mod copy;
mod entry;
mod event_loop;
mod frame;
mod images;
mod input;
mod pane;
mod player;
pub mod prompt;
mod scan;
mod screen;
mod update;

pub use crate::ui::SourceStatus;
pub use crate::ui::status_bar::MatchStatus;
pub use copy::{ExportJob, Exported, ExportedPage};
pub use entry::{run, run_browse, run_latest, run_many};
pub(crate) use event_loop::event_loop;
pub use event_loop::{FrameScheduler, run_loop};
pub use images::{
    ImageDecoded, ImageJob, ImageView, KEPT_IMAGE_SIDE, MAX_IMAGE_ALLOC, MAX_IMAGE_SIDE,
};
pub use scan::SCAN_BUDGET;
pub use screen::{BackendScreen, CountingSink, Screen};

use crate::action::Action;
use crate::detail::{Pipeline, RenderDone, RenderJob};
use crate::import::{Decoded, Format};
use crate::keymap::Keymap;
use crate::protocol::Timestamp;
use crate::session::Session;
use crate::source::SourceMsg;
use crate::theme::Theme;
use crate::ui::{self, Areas};
use crate::view::ViewState;

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
    /// An export job's outcome (`X`, [`ExportJob`]).
    Exported(Exported),
    /// `v`'s decoded image ([`ImageJob`]).
    ImageDecoded(ImageDecoded),
}

/// What `App::live_state` remembers: the session revision, the clock and whether live frames
/// were seen, and the state computed for them.
type LiveMemo = (u64, Option<Timestamp>, bool, crate::session::live::Live);

/// The viewer's state. Fields are private to the app module: tests and benches use methods.
#[derive(Debug)]
pub struct App {
    session: Session,
    view: ViewState,
    theme: Theme,
    keymap: Keymap,
    source_label: String,
    source_status: SourceStatus,
    /// The first screen has been placed (`App::prepare` skips header-only rows to the first
    /// prompt once), or the user moved first.
    placed: bool,
    /// While a saved file is read: (bytes read, file size), for the status bar's percentage.
    load_progress: Option<(u64, u64)>,
    format: Option<Format>,
    /// A standing hint for the status bar (e.g. "showing the demo").
    hint: Option<String>,
    /// The compiled search (case-insensitive unless the query has an upper-case letter).
    search_re: Option<Regex>,
    /// The detail pane's pipeline: shown lines, their key and stage, render jobs.
    detail: Pipeline,
    /// The catalog and problems panels' caches (the view keeps only their selections).
    panels: ui::Panels,
    areas: Areas,
    /// Wall clock from the last tick; `None` in tests (no elapsed times drawn).
    now: Option<Timestamp>,
    /// The live state last computed and what it was computed for (session revision, clock,
    /// whether live frames were seen): `Tracker::state` is O(open calls), and a draw, the bell
    /// check and the sessions list each ask (1,000 interleaved sessions: 30 % of the loop).
    live_memo: std::cell::Cell<Option<LiveMemo>>,
    quit: bool,
    /// Ctrl-Z was pressed; the loop suspends and clears this.
    suspend_requested: bool,
    /// The source is live (stdin, follow, network): select new rows as they arrive.
    live: bool,
    /// A search just selected a row: scroll its detail to the first matching line once the
    /// detail is rendered (cleared by the next action).
    scroll_to_match: bool,
    /// The replay player (`rawpv --replay FILE`); `None` shows the whole session at once.
    replay: Option<crate::replay::Replay>,
    /// The instant the replay state is drawn at (set by replay ticks and actions).
    clock: Instant,
    /// An OSC 52 sequence for the loop to write to the terminal (copy).
    clipboard_out: Option<String>,
    /// `v`: the image shown in the detail pane (`app/images.rs`).
    image_view: Option<images::ImageView>,
    /// `v`: the decode for the loop to run on `spawn_blocking`.
    image_job: Option<images::ImageJob>,
    /// `X`: the page to build, for the loop to run on `spawn_blocking`.
    export_job: Option<ExportJob>,
    /// An export runs (its job was taken and its outcome has not arrived).
    exporting: bool,
    /// `S`: what `y` / `Y` / `r` copy goes through `crate::redact` first.
    redact_copies: bool,
    /// Opened from the session browser: Esc with nothing to close goes back to the list.
    from_browser: bool,
    /// A row to select once it has arrived, and the search to highlight in it (the browser's
    /// full-text hit opened with Enter: `App::set_open_at`).
    open_at: Option<(usize, String)>,
    /// Render limits of the detail pane (config `limits.*`).
    limits: crate::render::Limits,
    /// A search or filter scan running in bounded steps (`app/scan.rs`).
    scan: Option<scan::Scan>,
    /// The count of the committed search's matches (`app/scan.rs`).
    count: Option<scan::Count>,
    /// Longest step of a scan ([`SCAN_BUDGET`]; tests set zero: 16 items a step).
    scan_budget: Duration,
    /// The live state's bookkeeping (`session::live`), fed every applied frame.
    tracker: crate::session::live::Tracker,
    /// Its thresholds (config `[live]`).
    thresholds: crate::session::live::Thresholds,
    /// What rings and notifies (config `[notify]`, resolved for the terminal).
    notify: crate::notify::Notify,
    /// Bell and notification bytes for the loop to write to the terminal.
    attention_out: String,
    /// The state last rung for (a state rings once, when it is entered).
    last_alert: Option<crate::session::live::State>,
    /// The live state's words as last drawn (a tick redraws when they change).
    live_words: String,
    /// The source said it is live (a followed file: after reading what existed).
    caught_up: bool,
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
            placed: false,
            load_progress: None,
            format: None,
            hint: None,
            search_re: None,
            detail: Pipeline::default(),
            panels: ui::Panels::default(),
            areas: Areas::default(),
            now: None,
            live_memo: std::cell::Cell::new(None),
            quit: false,
            suspend_requested: false,
            live,
            scroll_to_match: false,
            replay: None,
            clock: Instant::now(),
            clipboard_out: None,
            image_view: None,
            image_job: None,
            export_job: None,
            exporting: false,
            redact_copies: false,
            from_browser: false,
            open_at: None,
            limits: crate::render::Limits::default(),
            count: None,
            scan: None,
            scan_budget: scan::SCAN_BUDGET,
            tracker: crate::session::live::Tracker::new(),
            thresholds: crate::session::live::Thresholds::default(),
            notify: crate::notify::Notify::default(),
            attention_out: String::new(),
            last_alert: None,
            live_words: String::new(),
            caught_up: false,
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

    /// [`Self::headless`] over several inputs (issue 24): `runs` as `source::merge` yields
    /// them, `labels` the inputs' (`merge::labels`).
    pub fn headless_inputs(runs: Vec<crate::source::merge::Run>, labels: Vec<Box<str>>) -> Self {
        let mut app = Self::new(format!("{} inputs", labels.len()), false);
        app.theme = Theme::dark();
        app.session.sessions.set_inputs(labels);
        for r in runs {
            app.update(Msg::Source(SourceMsg::Input(r.input)));
            app.update(Msg::Source(SourceMsg::Batch(r.items)));
        }
        app.update(Msg::Source(SourceMsg::Eof));
        app
    }

    /// The sessions list's rows as last drawn (`ui::sessions`; tests).
    pub fn sessions_rows(&self) -> &[crate::ui::sessions::ListRow] {
        self.panels.sessions.rows()
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

    /// Folds the turn of prompt row `prompt` (an item index); `false` when it is no prompt or
    /// already folded.
    pub fn fold_turn(&mut self, prompt: usize) -> bool {
        self.view.fold(&self.session, prompt)
    }

    /// The theme drawn with.
    pub fn theme(&self) -> &Theme {
        &self.theme
    }

    /// Draws with `theme` from now on.
    pub fn set_theme(&mut self, theme: Theme) {
        self.theme = theme;
    }

    /// The key bindings.
    pub fn keymap(&self) -> &Keymap {
        &self.keymap
    }

    /// Replaces the key bindings (the config's `keys` table).
    pub fn set_keymap(&mut self, keymap: Keymap) {
        self.keymap = keymap;
    }

    /// The compiled search, if one is set (or being typed).
    pub fn search_regex(&self) -> Option<&Regex> {
        self.search_re.as_ref()
    }

    /// The source's reading state (status bar).
    pub fn source_status(&self) -> &SourceStatus {
        &self.source_status
    }

    /// The user asked to quit.
    pub fn quitting(&self) -> bool {
        self.quit
    }

    /// Opened from the session browser: Esc with nothing to close goes back to the list.
    pub fn set_from_browser(&mut self, yes: bool) {
        self.from_browser = yes;
    }

    /// Selects row `item` as soon as the source has delivered it (at once when it has) and
    /// sets the search `query` (a regex) so its matches are highlighted in the feed and the
    /// detail: how the browser opens a full-text hit.
    pub fn set_open_at(&mut self, item: usize, query: &str) {
        self.open_at = Some((item, query.to_owned()));
        self.try_open_at(false);
    }

    /// [`Self::set_open_at`]'s row, when it is there (or the source `ended`: the last row).
    pub(crate) fn try_open_at(&mut self, ended: bool) {
        let Some((item, _)) = &self.open_at else {
            return;
        };
        let n = self.session.items.len();
        if *item >= n && !ended {
            return;
        }
        let Some((item, query)) = self.open_at.take() else {
            return;
        };
        self.set_search(&query);
        if n > 0 {
            self.reveal(item.min(n - 1));
        }
    }

    /// Takes the OSC 52 sequence a copy left for the loop to write, if any.
    pub fn take_clipboard_out(&mut self) -> Option<String> {
        self.clipboard_out.take()
    }

    /// Longest step of a search or filter scan ([`SCAN_BUDGET`]; zero: 16 items a step).
    pub fn set_scan_budget(&mut self, budget: Duration) {
        self.scan_budget = budget;
    }

    /// The replay player (`rawpv --replay`), if any.
    pub fn replay(&self) -> Option<&crate::replay::Replay> {
        self.replay.as_ref()
    }

    /// Where each part of the screen went in the last [`App::prepare`] (mouse hit tests).
    pub fn areas(&self) -> Areas {
        self.areas
    }

    /// The whole screen the last frame was laid out on (the help popup is placed over it).
    pub fn screen_area(&self) -> ratatui::layout::Rect {
        let a = self.areas;
        a.timeline.union(a.feed).union(a.detail).union(a.status)
    }

    /// Whether the clock tick should run: on a live source until it ends (elapsed times, the
    /// live state's ages, idle and stuck calls).
    pub fn animating(&self) -> bool {
        self.live && !self.session.ended
    }

    /// The live state now (`session::live`): `None` unless the source is live (stdin, a
    /// followed file, a stream).
    pub fn live_state(&self) -> Option<crate::session::live::Live> {
        self.live.then(|| {
            let key = (self.session.revision, self.now, self.tracker.live_seen());
            match self.live_memo.get() {
                Some((rev, now, seen, live)) if (rev, now, seen) == key => live,
                _ => {
                    let live = self
                        .tracker
                        .state(&self.session, self.now, &self.thresholds);
                    self.live_memo.set(Some((key.0, key.1, key.2, live)));
                    live
                }
            }
        })
    }

    /// The live state's thresholds (config `[live]`).
    pub fn set_thresholds(&mut self, t: crate::session::live::Thresholds) {
        self.thresholds = t;
        self.live_memo.set(None);
    }

    /// What rings and notifies (config `[notify]`, resolved for the terminal).
    pub fn set_notify(&mut self, n: crate::notify::Notify) {
        self.notify = n;
    }

    /// Takes the bell and notification bytes the live state left for the loop to write.
    pub fn take_attention_out(&mut self) -> Option<String> {
        (!self.attention_out.is_empty()).then(|| std::mem::take(&mut self.attention_out))
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
                self.attend();
                true
            }
            Msg::Rendered(done) => self.on_rendered(done),
            Msg::ReplayTick(now) => self.replay_tick(now),
            Msg::Tick(now) => {
                self.now = Some(now);
                self.tracker
                    .saw_clock(&self.session, now, self.thresholds.recent);
                self.attend();
                // Redrawn while a call runs (its elapsed time) or when the state's words change.
                let words = self
                    .live_state()
                    .map(|l| l.describe(&self.session))
                    .unwrap_or_default();
                let changed = words != self.live_words;
                self.live_words = words;
                self.animating() && (self.session.counts.running > 0 || changed)
            }
            Msg::Work => self.work(self.scan_budget),
            Msg::Exported(done) => {
                self.on_exported(done);
                true
            }
            Msg::ImageDecoded(done) => self.on_image_decoded(done),
        }
    }
}
