//! Keys, prompts and the mouse → actions: the search and filter prompts (typing, preview,
//! commit), the keymap in normal mode, mouse wheel and clicks through the last layout.
//!
//! Who calls it: [`App::update`] for `Msg::Term`; tests through [`App::press`] and
//! [`App::type_text`]. Invariants: a key is handled once; hit tests use the areas of the last
//! `prepare` (`ui::Areas::compute`), the same the widgets were drawn into.

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEventKind,
};

use super::pane::{Focused, Verb};
use super::{App, Msg, WHEEL_ROWS};
use crate::action::Action;
use crate::query::{Filter, compile_search};
use crate::ui::Areas;
use crate::view::{Mode, Pane, Tab};

/// Most rows `n` / `N` look at for the next file of a patch (a patch's rows are all files but
/// its header, so the next one is near).
const FILE_STEP_MAX: usize = 1000;

impl App {
    pub(super) fn on_term(&mut self, ev: &Event) -> bool {
        match ev {
            Event::Key(k) if k.kind == KeyEventKind::Press => {
                self.on_key(k);
                true
            }
            Event::Mouse(m) => {
                self.placed = true;
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

    pub(super) fn on_key(&mut self, k: &KeyEvent) {
        self.view.message = None;
        self.placed = true;
        if self.view.help {
            // The scroll the draw can show on this screen: `G` then `k` moves at once.
            let max =
                crate::ui::help::HelpLayout::of(&self.keymap, self.screen_area()).scroll_limit();
            let page = usize::from(self.view.feed.height.max(2));
            let s = &mut self.view.help_scroll;
            match self.keymap.action(k) {
                Some(a @ (Action::ToggleHelp | Action::Cancel | Action::Quit)) => {
                    if a == Action::Quit && k.modifiers.contains(KeyModifiers::CONTROL) {
                        self.quit = true;
                    }
                    self.view.help = false;
                }
                Some(Action::MoveDown) => *s = (*s + 1).min(max),
                Some(Action::MoveUp) => *s = s.saturating_sub(1),
                Some(Action::PageDown) => *s = (*s + page).min(max),
                Some(Action::PageUp) => *s = s.saturating_sub(page),
                Some(Action::Top) => *s = 0,
                Some(Action::Bottom) => *s = max,
                _ => {}
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

    pub(super) fn on_input_key(&mut self, k: &KeyEvent) {
        match k.code {
            KeyCode::Esc => self.end_input(false),
            KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                self.end_input(false);
            }
            KeyCode::Enter => self.end_input(true),
            _ => {
                if crate::app::prompt::edit(&mut self.view, k) {
                    self.preview_input();
                }
            }
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

    pub(super) fn preview_input(&mut self) {
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

    pub(super) fn end_input(&mut self, commit: bool) {
        let mode = std::mem::take(&mut self.view.mode);
        let input = std::mem::take(&mut self.view.input);
        self.view.input_problem = None;
        self.view.input_cursor = 0;
        self.view.input_selected = false;
        self.view.history.pos = None;
        if commit && !input.is_empty() {
            let h = match mode {
                Mode::Filter => &mut self.view.history.filter,
                Mode::Search | Mode::Normal => &mut self.view.history.search,
            };
            if h.last() != Some(&input) {
                h.push(input.clone());
            }
        }
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
    pub(super) fn rebuild_rows(&mut self) {
        self.start_filter_scan();
    }

    pub(super) fn current_matches(&self) -> bool {
        match (&self.search_re, self.view.selected_item(&self.session)) {
            (Some(re), Some(i)) => crate::session::query::item_matches(&self.session, i, re),
            _ => false,
        }
    }

    pub(super) fn search_step(&mut self, forward: bool) {
        let Some(re) = self.search_re.clone() else {
            if !self.file_step(forward) {
                self.view.message = Some("no search: press / to search".into());
            }
            return;
        };
        self.start_search(re, forward);
    }

    /// `n` / `N` without a search in a patch opened as a session (`crate::import::patch`): the
    /// next / previous file's row. `false` when the session is not a patch. Looks at most
    /// [`FILE_STEP_MAX`] rows.
    fn file_step(&mut self, forward: bool) -> bool {
        let is_file = |app: &Self, r: usize| {
            app.view.item_at(r).is_some_and(|i| {
                matches!(app.session.items.get(i), Some(crate::session::Item::Invocation(k))
                    if app.session.invocations[*k].tool_name == "diff")
            })
        };
        if self
            .session
            .invocations
            .first()
            .is_none_or(|i| i.tool_name != "diff")
        {
            return false;
        }
        let count = self.row_count();
        let cur = self.view.feed.selected;
        let found = if forward {
            (cur + 1..count.min(cur + 1 + FILE_STEP_MAX)).find(|&r| is_file(self, r))
        } else {
            (cur.saturating_sub(FILE_STEP_MAX)..cur)
                .rev()
                .find(|&r| is_file(self, r))
        };
        let Some(r) = found else {
            let end = if forward { "last" } else { "first" };
            self.view.message = Some(format!("no more files: this is the {end} file"));
            return true;
        };
        self.view.feed.selected = r;
        self.view.message = None;
        true
    }

    /// A wheel notch over a pane moves that pane (focused or not) by [`WHEEL_ROWS`].
    pub(super) fn wheel(&mut self, col: u16, row: u16, down: bool) {
        let pane = if Areas::hit(self.areas.feed, col, row) {
            Focused::Feed
        } else if Areas::hit(self.areas.detail, col, row) {
            Focused::of_tab(self.view.tab)
        } else {
            return;
        };
        self.on_pane(
            pane,
            Verb::Move {
                down,
                n: WHEEL_ROWS,
            },
        );
    }

    pub(super) fn click(&mut self, col: u16, row: u16) {
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
                Tab::Files => {
                    if let Some(i) = self.view.files.index_at(&self.panels.files, inner, row) {
                        let d = i as isize - self.view.files.selected as isize;
                        self.view.files.select_by(&self.panels.files, d);
                    }
                }
                Tab::Audit => {
                    if let Some(i) = self.view.audit.index_at(&self.panels.audit, inner, row) {
                        self.view.audit.selected = i;
                    }
                }
                Tab::Sessions => {
                    if let Some(i) =
                        (self.view.sessions).index_at(&self.panels.sessions, inner, row)
                    {
                        let d = i as isize - self.view.sessions.selected as isize;
                        self.view.sessions.select_by(&self.panels.sessions, d);
                    }
                }
            }
        }
    }
}
