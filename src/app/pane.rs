//! What an action means: the pane-dependent keys (move, top, bottom, open) resolved in one
//! `match` on the focused pane ([`Focused`]), selection, folding, jumps and the detail's scroll.
//!
//! Who calls it: [`App::apply_action`] (keymap, mouse, tests). Invariants: the selection is a
//! visible row (clamped); changing the selected item resets the detail's scroll and expansion.

use super::App;
use crate::action::Action;
use crate::query::Filter;
use crate::session::Session;
use crate::ui::Areas;
use crate::view::{Mode, Pane, Tab};

/// A pane the pane-dependent keys act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Focused {
    Feed,
    /// The right-hand pane showing the selected row's detail.
    Detail,
    Catalog,
    Problems,
    Files,
    Audit,
    Sessions,
}

impl Focused {
    /// The right-hand pane showing `tab`.
    pub(super) fn of_tab(tab: Tab) -> Self {
        match tab {
            Tab::Detail => Self::Detail,
            Tab::Catalog => Self::Catalog,
            Tab::Problems => Self::Problems,
            Tab::Files => Self::Files,
            Tab::Audit => Self::Audit,
            Tab::Sessions => Self::Sessions,
        }
    }
}

/// What a pane-dependent key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verb {
    /// `j`/`k`, page keys, the wheel: `n` rows.
    Move { down: bool, n: usize },
    /// `g`.
    Top,
    /// `G`.
    Bottom,
    /// Enter.
    Open,
}

/// Columns one ←/→ scrolls the detail sideways.
const HSCROLL_STEP: usize = 8;

impl App {
    /// Applies a user intent.
    pub fn apply_action(&mut self, a: Action) {
        self.placed = true;
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
            Action::Top => self.on_pane(self.focused(), Verb::Top),
            Action::Bottom => self.on_pane(self.focused(), Verb::Bottom),
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
            Action::Open => self.on_pane(self.focused(), Verb::Open),
            Action::ToggleExpand => {
                self.view.detail.expanded = !self.view.detail.expanded;
                self.view.message = Some(
                    if self.view.detail.expanded {
                        "long output shown in full"
                    } else {
                        "long output folded"
                    }
                    .to_owned(),
                );
            }
            Action::Follow => {
                self.follow_tail();
                let running = self.view.selected_item(&self.session).and_then(|i| {
                    match self.session.items.get(i) {
                        Some(crate::session::Item::Invocation(k)) => {
                            Some(self.session.invocations[*k].status.is_open())
                        }
                        _ => None,
                    }
                });
                self.view.message = Some(match running {
                    Some(true) if !self.session.ended => {
                        "following the running call's output".to_owned()
                    }
                    Some(_) => "at the end of the output (the call has finished: nothing more \
                                will come)"
                        .to_owned(),
                    None => "follow: the selected row is not a call with output".to_owned(),
                });
            }
            Action::ToggleQuiet => {
                self.view.show_quiet = !self.view.show_quiet;
                self.rebuild_rows();
                let n = self.view.quiet;
                self.view.message = Some(match (n, self.view.show_quiet) {
                    (0, _) => "no quiet rows (usage, progress) in this session".to_owned(),
                    (n, true) => format!("{} shown", crate::fmt::plural(n, "quiet row")),
                    (n, false) => format!("{} hidden", crate::fmt::plural(n, "quiet row")),
                });
            }
            Action::ToggleZoom => {
                self.view.zoom = !self.view.zoom;
                if self.view.zoom {
                    self.view.focus = Pane::Detail;
                }
            }
            Action::ToggleWrap => {
                self.view.detail.wrap = !self.view.detail.wrap;
                self.view.detail.hscroll = 0;
                self.view.problems.hscroll = 0;
                self.view.catalog.hscroll = 0;
                let width = usize::from(Areas::inner(self.areas.detail).width);
                let wide = self.detail.lines().iter().any(|l| l.width() > width);
                // The lines at hand were built for the old setting: wrapped ones say nothing
                // of the widths, so turning wrap off only says what it does.
                self.view.message = Some(match (self.view.detail.wrap, wide) {
                    (true, true) => "wrap on: long lines of the detail wrap".to_owned(),
                    (true, false) => {
                        format!("wrap on: no line of this detail is wider than its {width} columns")
                    }
                    (false, _) => "wrap off: long lines are cut; in the detail, the problems and \
                                   the catalog ←/→ (or </>) scroll sideways"
                        .to_owned(),
                });
            }
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
            Action::FeedNarrower | Action::FeedWider => self.resize_feed(a == Action::FeedWider),
            Action::StartSearch => {
                self.view.mode = Mode::Search;
                self.view.input.clear();
                self.view.input_cursor = 0;
                self.view.input_selected = false;
                self.view.history.pos = None;
            }
            Action::SearchNext => self.search_step(true),
            Action::SearchPrev => self.search_step(false),
            Action::NextError | Action::PrevError => {
                if !self.jump(
                    a == Action::NextError,
                    false,
                    crate::session::query::is_error_stop,
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
            Action::NextCompaction => {
                if !self.jump(true, true, crate::session::query::is_compaction) {
                    self.view.message = Some("no compaction in this session".into());
                }
            }
            Action::ToggleFold => self.fold_selected(None),
            // In the detail, the problems or the catalog with wrap off, ←/→ (h/l) scroll
            // sideways (issue 22 item 6); in the feed they fold and unfold the turn.
            Action::FoldTurn | Action::UnfoldTurn if self.sideways().is_some() => {
                self.hscroll(a == Action::UnfoldTurn);
            }
            // A panel with the keys and wrap on: its rows are cut, not the feed's turn to fold.
            Action::FoldTurn | Action::UnfoldTurn
                if self.view.focus == Pane::Detail
                    && matches!(self.view.tab, Tab::Problems | Tab::Catalog) =>
            {
                self.view.message =
                    Some("wrap is on: w turns it off, then ←/→ scroll long rows sideways".into());
            }
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
                        .turn_of(&self.session, i)
                        .filter(|_| self.view.folds.hidden(&self.session, i));
                    self.select_item(keep.unwrap_or(i));
                }
            }
            Action::UnfoldAll => {
                let sel = self.view.selected_item(&self.session);
                self.view.unfold_all(&self.session);
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
                // The old filter, selected: typing replaces it, Right or Home edits it.
                self.view.input_cursor = self.view.input.len();
                self.view.input_selected = !self.view.input.is_empty();
                self.view.history.pos = None;
            }
            Action::ShowCatalog => self.toggle_tab(Tab::Catalog),
            Action::ShowProblems => self.toggle_tab(Tab::Problems),
            Action::ShowFiles => self.toggle_tab(Tab::Files),
            Action::ShowAudit => self.toggle_tab(Tab::Audit),
            Action::ShowSessions => self.toggle_tab(Tab::Sessions),
            Action::AuditKind => {
                if self.view.tab == Tab::Audit {
                    self.view.audit.cycle_kind();
                } else {
                    self.view.message =
                        Some("t lists the next kind of entry in the audit panel (a)".into());
                }
            }
            Action::WritePatch => self.write_patch(),
            Action::SaveImages => self.save_images(false),
            Action::OpenImage => self.save_images(true),
            Action::ViewImage => self.view_image(),
            Action::ToggleHelp => {
                self.view.help = !self.view.help;
                self.view.help_scroll = 0;
            }
            // `<`/`>` step a replay; elsewhere they are free, and scroll sideways as ←/→ do.
            Action::StepForward | Action::StepBack
                if self.replay.is_none() && self.sideways().is_some() =>
            {
                self.hscroll(a == Action::StepForward);
            }
            Action::TogglePlay
            | Action::SpeedUp
            | Action::SpeedDown
            | Action::StepForward
            | Action::StepBack
            | Action::NextTurn
            | Action::PrevTurn
            | Action::Seek(_) => self.replay_action(a),
            Action::CopyInput | Action::CopyOutput if self.focused() == Focused::Files => {
                self.copy_patch(a == Action::CopyOutput);
            }
            Action::CopyInput => self.copy(crate::clipboard::CopyWhat::Input),
            Action::CopyOutput => self.copy(crate::clipboard::CopyWhat::Output),
            Action::CopyRaw => self.copy(crate::clipboard::CopyWhat::Raw),
            Action::ToggleRedactCopies => {
                self.redact_copies = !self.redact_copies;
                self.view.message = Some(
                    if self.redact_copies {
                        "copies redact secrets ([REDACTED: kind])"
                    } else {
                        "copies are as recorded (secrets not redacted)"
                    }
                    .into(),
                );
            }
            Action::ExportPage => self.export_page(),
            Action::Cancel => {
                if self.view.help {
                    self.view.help = false;
                } else if self.image_view.is_some() {
                    self.image_view = None;
                } else if self.view.search.is_some() {
                    self.view.search = None;
                    self.search_re = None;
                    self.count = None;
                } else if self.view.filter.is_some() {
                    self.set_filter(None);
                } else if self.view.tab != Tab::Detail {
                    self.view.tab = Tab::Detail;
                    self.view.focus = Pane::Feed;
                } else if self.from_browser {
                    self.quit = true;
                }
            }
        }
    }

    /// Moves in the focused pane by `n` rows.
    pub(super) fn move_focused(&mut self, down: bool, n: usize) {
        self.on_pane(self.focused(), Verb::Move { down, n });
    }

    /// The pane the pane-dependent keys act on: the feed, or what the right-hand pane shows.
    pub(super) fn focused(&self) -> Focused {
        match self.view.focus {
            Pane::Feed => Focused::Feed,
            Pane::Detail => Focused::of_tab(self.view.tab),
        }
    }

    /// What a pane-dependent key means in `pane`: the one place that says it.
    pub(super) fn on_pane(&mut self, pane: Focused, verb: Verb) {
        match pane {
            Focused::Feed => match verb {
                Verb::Move { down, n } => {
                    let sel = self.view.feed.selected;
                    self.select(if down { sel + n } else { sel.saturating_sub(n) });
                }
                Verb::Top => self.select(0),
                Verb::Bottom => {
                    self.select(usize::MAX);
                    self.view.feed.follow = true;
                }
                Verb::Open => self.view.focus = Pane::Detail,
            },
            Focused::Detail => match verb {
                Verb::Move { down, n } => self.scroll_detail(down, n),
                Verb::Top => {
                    self.view.detail.scroll = 0;
                    self.view.detail.follow_tail = false;
                }
                Verb::Bottom => self.follow_tail(),
                Verb::Open => self.view.detail.expanded = !self.view.detail.expanded,
            },
            Focused::Catalog => match verb {
                // One row moves the tool selection; a page (or a wheel notch) scrolls the tool's
                // details.
                Verb::Move { down, n: 1 } => {
                    if down {
                        self.view.catalog.select_next(&self.session);
                    } else {
                        self.view.catalog.select_prev();
                    }
                }
                Verb::Move { down, n } => self.scroll_panel(down, n),
                Verb::Top => self.panel_top(),
                Verb::Bottom => self.panel_bottom(),
                Verb::Open => self.toggle_tool_filter(),
            },
            Focused::Problems => match verb {
                Verb::Move { down, n } => {
                    let d = n as isize;
                    self.view
                        .problems
                        .select_by(&self.session, if down { d } else { -d });
                }
                Verb::Top => self.panel_top(),
                Verb::Bottom => self.panel_bottom(),
                Verb::Open => self.open_finding(),
            },
            Focused::Files => match verb {
                // One row moves the selection; a page (or a wheel notch) scrolls the diff.
                Verb::Move { down, n: 1 } => {
                    let files = &self.panels.files;
                    self.view.files.select_by(files, if down { 1 } else { -1 });
                }
                Verb::Move { down, n } => {
                    let s = &mut self.view.files.scroll;
                    *s = if down {
                        s.saturating_add(n)
                    } else {
                        s.saturating_sub(n)
                    };
                }
                Verb::Top => self
                    .view
                    .files
                    .select_by(&self.panels.files, isize::MIN / 2),
                Verb::Bottom => self
                    .view
                    .files
                    .select_by(&self.panels.files, isize::MAX / 2),
                Verb::Open => {
                    let item = self.view.files.selected_item(&self.panels.files);
                    self.jump_to_item(item, "this row has no call in the feed");
                }
            },
            Focused::Sessions => match verb {
                Verb::Move { down, n } => {
                    let d = n as isize;
                    self.view
                        .sessions
                        .select_by(&self.panels.sessions, if down { d } else { -d });
                }
                Verb::Top => (self.view.sessions).select_by(&self.panels.sessions, isize::MIN / 2),
                Verb::Bottom => {
                    (self.view.sessions).select_by(&self.panels.sessions, isize::MAX / 2);
                }
                Verb::Open => self.show_session(),
            },
            Focused::Audit => match verb {
                Verb::Move { down, n } => {
                    let d = n as isize;
                    self.view
                        .audit
                        .select_by(&self.panels.audit, if down { d } else { -d });
                }
                Verb::Top => self
                    .view
                    .audit
                    .select_by(&self.panels.audit, isize::MIN / 2),
                Verb::Bottom => self
                    .view
                    .audit
                    .select_by(&self.panels.audit, isize::MAX / 2),
                Verb::Open => {
                    let item = self.view.audit.selected_item(&self.panels.audit);
                    self.jump_to_item(item, "nothing to jump to");
                }
            },
        }
    }

    /// Enter on the sessions list: the feed shows the selected session only (its `session:`
    /// filter word replaces any other in the filter; the rest of the filter stays), or every
    /// session again on the "all" row.
    fn show_session(&mut self) {
        let Some(want) = self.view.sessions.selected_filter(&self.panels.sessions) else {
            return;
        };
        let kept: Vec<String> = self
            .view
            .filter
            .as_ref()
            .map(|f| {
                f.raw
                    .split_whitespace()
                    .filter(|w| !w.starts_with("session:"))
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let mut words = kept;
        let shown = match &want {
            Some(name) if !name.chars().any(char::is_whitespace) => {
                words.insert(0, format!("session:{name}"));
                format!("session {}", crate::render::text::visible(name))
            }
            Some(name) => {
                // A name with spaces cannot be a filter word: its first word narrows it.
                let first = name.split_whitespace().next().unwrap_or("");
                words.insert(0, format!("session:{first}"));
                format!("sessions starting {}", crate::render::text::visible(first))
            }
            None => "every session".to_owned(),
        };
        let text = words.join(" ");
        self.set_filter(crate::query::Filter::parse(&text));
        self.view.message = Some(format!("feed: {shown}"));
    }

    /// Enter on the files or audit panel: selects feed row `item` (clearing a filter that hides
    /// it, unfolding its turn) and shows its detail; `none` is said when there is no row.
    fn jump_to_item(&mut self, item: Option<usize>, none: &str) {
        let Some(item) = item.filter(|&i| i < self.session.items.len()) else {
            self.view.message = Some(none.to_owned());
            return;
        };
        if self.view.filtered_pos(item).is_err() {
            self.set_filter(None);
        }
        self.reveal(item);
        self.view.tab = Tab::Detail;
        self.view.focus = Pane::Feed;
    }

    fn panel_top(&mut self) {
        self.view.panel_scroll = 0;
        self.view.catalog.selected = 0;
        self.view.catalog.scroll = 0;
        self.view.problems.selected = 0;
    }

    fn panel_bottom(&mut self) {
        self.view.panel_scroll = usize::MAX / 2;
        self.view.catalog.selected = usize::MAX / 2;
        self.view.problems.selected = usize::MAX / 2;
    }

    pub(super) fn scroll_detail(&mut self, down: bool, n: usize) {
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

    pub(super) fn scroll_panel(&mut self, down: bool, n: usize) {
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
    pub(super) fn open_finding(&mut self) {
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
    pub(super) fn toggle_tool_filter(&mut self) {
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

    /// Selects the next (or previous) row after the selection for which `pred` holds, looking
    /// inside folded turns too (the turn of a hit unfolds). With `wrap`, continues from the
    /// other end. Returns whether one was found.
    pub(super) fn jump(
        &mut self,
        forward: bool,
        wrap: bool,
        pred: impl Fn(&Session, usize) -> bool,
    ) -> bool {
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
    pub(super) fn reveal(&mut self, item: usize) {
        if let Some(k) = self.view.forks.hiding(item) {
            self.view.fold_fork(k, Some(false), &self.session);
        }
        if self.view.folds.hidden(&self.session, item)
            && let Some(p) = self.view.folds.turn_of(&self.session, item)
        {
            self.view.unfold(&self.session, p);
        }
        self.select_item(item);
    }

    /// Selects the row of `item` (nearest row when it is not one), resetting the detail when
    /// the selected item changes.
    pub(super) fn select_item(&mut self, item: usize) {
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

    /// What ←/→ (and `<`/`>` outside a replay) scroll sideways: the right-hand pane when it has
    /// the keys, shows the detail, the problems or the catalog, and does not wrap.
    fn sideways(&self) -> Option<Tab> {
        (self.view.focus == Pane::Detail
            && !self.view.detail.wrap
            && matches!(self.view.tab, Tab::Detail | Tab::Problems | Tab::Catalog))
        .then_some(self.view.tab)
    }

    /// Scrolls the right-hand pane ([`App::sideways`]) [`HSCROLL_STEP`] columns right (`right`)
    /// or left, at most to where its widest line's end shows; says where it is.
    fn hscroll(&mut self, right: bool) {
        let width = usize::from(Areas::inner(self.areas.detail).width);
        let (what, widest) = match self.view.tab {
            Tab::Problems => ("finding", self.view.problems.widest(&self.session)),
            Tab::Catalog => (
                "line of the catalog",
                (self.view.catalog).widest(&self.session, &self.theme, width as u16),
            ),
            Tab::Detail | Tab::Files | Tab::Audit | Tab::Sessions => (
                "line of this detail",
                (self.detail.lines().iter())
                    .map(ratatui::text::Line::width)
                    .max()
                    .unwrap_or(0),
            ),
        };
        let max = widest.saturating_sub(width);
        let pos = match self.view.tab {
            Tab::Problems => &mut self.view.problems.hscroll,
            Tab::Catalog => &mut self.view.catalog.hscroll,
            Tab::Detail | Tab::Files | Tab::Audit | Tab::Sessions => &mut self.view.detail.hscroll,
        };
        *pos = if right {
            (*pos + HSCROLL_STEP).min(max)
        } else {
            pos.saturating_sub(HSCROLL_STEP)
        };
        let at = *pos;
        self.view.message = Some(if max == 0 {
            format!("no {what} is wider than its {width} columns")
        } else {
            format!(
                "columns {}–{} of {widest} (←/→ scroll)",
                at + 1,
                (at + width).min(widest)
            )
        });
    }

    /// Folds (`Some(true)`), unfolds (`Some(false)`) or toggles (`None`) the selected row's turn.
    pub(super) fn fold_selected(&mut self, want: Option<bool>) {
        let Some(item) = self.view.selected_item(&self.session) else {
            return;
        };
        // A fork point's row folds its other branches (issue 16).
        if let Some(k) = self.view.forks.points.iter().position(|fp| fp.row == item) {
            // It also starts a turn: folded from a row after it, that turn hid the main line,
            // which the fork fold alone could never bring back. Unfolding gives it back first.
            if want != Some(true) && self.view.folds.folded.contains_key(&item) {
                self.view.unfold(&self.session, item);
                if want.is_none() {
                    self.select_item(item);
                    return;
                }
            }
            self.view.fold_fork(k, want, &self.session);
            self.select_item(item);
            return;
        }
        let Some(p) = self.view.folds.turn_of(&self.session, item) else {
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

    pub(super) fn follow_tail(&mut self) {
        self.view.detail.follow_tail = true;
        self.view.detail.scroll = self
            .detail
            .lines()
            .len()
            .saturating_sub(usize::from(self.view.detail.height));
    }

    pub(super) fn toggle_tab(&mut self, tab: Tab) {
        self.view.panel_scroll = 0;
        // An opened panel takes the keys (j/k move in it, Enter acts on its row); its own key
        // again, or Esc, gives them back to the feed.
        (self.view.tab, self.view.focus) = if self.view.tab == tab {
            (Tab::Detail, Pane::Feed)
        } else {
            (tab, Pane::Detail)
        };
        // The files model (the audit reads it too) builds in steps from here on.
        if matches!(self.view.tab, Tab::Files | Tab::Audit)
            && self.panels.files.model().is_none()
            && !self.panels.files.pending()
        {
            self.panels.files.start(&self.session);
        }
    }

    /// `{` / `}`: the feed's share of the width steps by 5 percent; the status bar says the new
    /// share, or why nothing changed (a stacked layout, a limit).
    fn resize_feed(&mut self, wider: bool) {
        use crate::ui::Split;
        let old = self.view.feed_share();
        let new = if wider {
            (old + 5).min(Split::MAX_SHARE)
        } else {
            old.saturating_sub(5).max(Split::MIN_SHARE)
        };
        self.view.feed_share = new;
        let side_by_side = self.areas.feed.width > 0 && self.areas.feed.y == self.areas.detail.y;
        self.view.message = Some(if !side_by_side {
            format!(
                "the feed takes up to {new}% of the width when the screen is {} columns wide or \
                 more (the panes are stacked now)",
                crate::ui::SIDE_BY_SIDE_MIN_WIDTH
            )
        } else if new == old {
            let edge = if wider { "most" } else { "least" };
            format!("the feed already takes the {edge} it can: {new}% of the width")
        } else {
            format!("the feed takes up to {new}% of the width")
        });
    }

    /// Selects visible row `row` (clamped).
    pub fn select(&mut self, row: usize) {
        self.placed = true;
        let count = self.row_count();
        let row = row.min(count.saturating_sub(1));
        self.view.feed.follow = count > 0 && row + 1 == count && self.live;
        if row != self.view.feed.selected {
            self.view.feed.selected = row;
            self.reset_detail();
        }
    }

    pub(super) fn reset_detail(&mut self) {
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

    pub(super) fn row_count(&self) -> usize {
        self.view.row_count(&self.session)
    }

    pub(super) fn panel_len(&self) -> usize {
        match self.view.tab {
            // The files and audit panels scroll by their own state.
            Tab::Detail | Tab::Files | Tab::Audit | Tab::Sessions => 0,
            Tab::Catalog => (self.session)
                .catalog_of(self.view.catalog.session)
                .map_or(0, |c| c.tools.len()),
            Tab::Problems => self.session.findings.len(),
        }
    }
}
