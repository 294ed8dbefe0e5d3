//! Messages into the app and their handlers: source batches folded into the session and the
//! view reconciled row by row, source state changes, render results, and the one path that
//! rebases the view when the session changes wholesale ([`App::rebase_view`]).
//!
//! Who calls it: [`App::update`] (`app.rs`). Invariants: a batch changes the view by key, never
//! by rescanning; restart and compaction both go through `rebase_view`, which drops
//! every cache and render derived from the old session.

use super::{App, SourceStatus};
use crate::detail::RenderDone;
use crate::session::{Applied, Session};
use crate::source::{SourceMsg, SourceState};
use crate::ui::{self};
use crate::view::{self};

/// Why the session under the view changed wholesale ([`App::rebase_view`]).
#[derive(Debug)]
pub(super) enum Rebase {
    /// The source re-sends from the start (a followed file was truncated or replaced).
    Restarted { reason: String },
    /// The oldest rows were dropped (`Session::compact_if_needed`); `selected` is the item that
    /// was selected before.
    Compacted {
        c: crate::session::Compaction,
        selected: Option<usize>,
    },
}

impl App {
    pub(super) fn on_source(&mut self, m: SourceMsg) {
        match m {
            SourceMsg::Batch(items) => {
                tracing::trace!(items = items.len(), "source batch");
                if self.source_status == SourceStatus::Loading && self.live {
                    self.source_status = SourceStatus::Live;
                }
                if matches!(self.source_status, SourceStatus::Reconnecting(_)) {
                    self.source_status = SourceStatus::Live;
                }
                for d in items {
                    let applied = self.session.apply(d);
                    self.tracker.observe(&self.session, applied);
                    self.reconcile(applied);
                }
                if let Some(now) = self.now {
                    self.tracker
                        .saw_clock(&self.session, now, self.thresholds.recent);
                }
                self.compact_session();
                self.try_open_at(false);
                // More than one session: the sessions list shows, once, unless another panel
                // is open (issue 24); the keys stay in the feed.
                if self.session.sessions.is_multi()
                    && !self.view.sessions_shown
                    && self.view.tab == crate::view::Tab::Detail
                {
                    self.view.sessions_shown = true;
                    self.view.tab = crate::view::Tab::Sessions;
                }
            }
            SourceMsg::Format(f) => {
                tracing::info!(format = ?f, "input format detected");
                self.format = Some(f);
                self.session.reparse = crate::import::reparse_for(f);
                self.session.defer_events = true;
            }
            SourceMsg::State(s) => {
                if matches!(s, SourceState::Reading { .. }) {
                    tracing::trace!(state = ?s, "source state");
                } else {
                    tracing::info!(state = ?s, "source state");
                }
                self.source_status = match s {
                    SourceState::Loading => SourceStatus::Loading,
                    SourceState::Reading { bytes, total } => {
                        self.load_progress = Some((bytes, total));
                        SourceStatus::Loading
                    }
                    SourceState::Live => {
                        self.caught_up = true;
                        SourceStatus::Live
                    }
                    SourceState::Connecting { .. } => SourceStatus::Live,
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
            SourceMsg::Input(n) => self.session.input = n,
            SourceMsg::Eof => {
                tracing::info!(
                    items = self.session.items.len(),
                    calls = self.session.invocations.len(),
                    findings = self.session.findings.len(),
                    "source ended"
                );
                self.load_progress = None;
                self.session.finish();
                self.source_status = SourceStatus::Ended;
                self.try_open_at(true);
            }
            SourceMsg::Failed(e) => {
                tracing::warn!(error = %e, "source failed");
                self.session.finish();
                self.source_status = SourceStatus::Failed(e.to_string());
            }
        }
    }

    /// Memory bound on endless streams: drops the oldest finished rows past
    /// `Session::item_cap` (the status bar shows the dropped count) and rebases the view.
    pub(super) fn compact_session(&mut self) {
        let selected = self.view.selected_item(&self.session);
        if let Some(c) = self.session.compact_if_needed() {
            self.rebase_view(Rebase::Compacted { c, selected });
        }
    }

    /// The one path for a session that changed wholesale under the view ([`Rebase`]): every
    /// item index held for the old session is mapped or dropped, and every cache and render
    /// derived from it goes. In both cases: the render generation is bumped so results of
    /// renders started before are ignored, the detail cache and the panels' caches (catalog,
    /// problems) start afresh keeping their selections, the search count restarts and the
    /// detail resets. Then, by case:
    /// * `Restarted`: a new empty session; rows, folds, token totals and quiet count from zero.
    /// * `Compacted`: rows and folds remapped (`ViewState::remap`), the scan adjusted, the
    ///   selection kept (the last row when following).
    pub(super) fn rebase_view(&mut self, why: Rebase) {
        match &why {
            Rebase::Restarted { reason } => {
                tracing::info!(%reason, "view rebased: input restarted");
            }
            Rebase::Compacted { c, .. } => {
                tracing::debug!(
                    dropped = c.removed_items,
                    "view rebased: oldest rows dropped"
                );
            }
        }
        self.detail.invalidate();
        self.panels = ui::Panels::default();
        match why {
            Rebase::Restarted { reason } => {
                self.session = Session::new();
                self.tracker = crate::session::live::Tracker::new();
                self.live_memo.set(None);
                self.last_alert = None;
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
                // The waits' rows moved (the calls are held by id).
                let live_seen = self.tracker.live_seen();
                self.tracker = crate::session::live::Tracker::rebuild(&self.session);
                self.live_memo.set(None);
                if live_seen {
                    self.tracker.assume_live();
                }
                self.view.remap(&c, &self.session);
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
        }
        self.reset_detail();
    }

    /// Updates the view for one change of the session (by key, no rescans).
    pub(super) fn reconcile(&mut self, applied: Applied) {
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

    /// Rings for the live state when it enters a kind that needs the person (`session::live`,
    /// config `[notify]`): once per state, only on a live input that has caught up (no bell for
    /// what a followed file held before it was opened, nor for a recording).
    pub(super) fn attend(&mut self) {
        if !self.live || !self.caught_up || !self.tracker.live_seen() {
            return;
        }
        let Some(live) = self.live_state() else {
            return;
        };
        let Some(kind) = live.attention() else {
            self.last_alert = None;
            return;
        };
        if self.last_alert.as_ref() == Some(&live.state) {
            return;
        }
        self.last_alert = Some(live.state);
        if !self.notify.wants(kind) {
            return;
        }
        let words = live.describe(&self.session);
        tracing::info!(state = %words, "attention");
        // A file by its name (the path is on the status bar), a URL or stdin as labelled.
        let label = &self.source_label;
        let name = if label.contains("://") {
            None
        } else {
            std::path::Path::new(label)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        };
        let title = format!(
            "rawpv: {}",
            crate::fmt::truncate_keep_tail(name.as_deref().unwrap_or(label), 60)
        );
        let seq = self.notify.sequence(&title, &words);
        self.attention_out.push_str(&seq);
    }

    pub(super) fn on_rendered(&mut self, done: RenderDone) -> bool {
        let selected = self.view.selected_item(&self.session);
        self.detail.on_done(done, selected)
    }
}
