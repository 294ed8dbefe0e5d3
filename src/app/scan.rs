//! Bounded scans over the whole session: search (`/`, `n`, `N`), the feed rows of a filter
//! (`f`, `.`) and the count of a search's matches (`match 3/17` in the status bar), run in steps
//! of at most [`SCAN_BUDGET`] (4 ms) so that a key press answers within one frame however big the
//! session is (issue 6).
//!
//! The files panel's model is built the same way (`ui::files::FilesCache::step`, issue 23).
//!
//! Who calls it: [`App::apply_action`] and `App::end_input` start scans; the event loop calls
//! [`App::update`] with [`super::Msg::Work`] while [`App::scanning`] holds (input and source
//! batches go first; a frame is drawn between steps); tests call [`App::finish_scans`].
//!
//! Invariants:
//! * A scan's first step runs at once, so small sessions answer synchronously (the headless
//!   tests never see a pending scan).
//! * Search visits the filtered rows (folds ignored: a hit inside a folded turn unfolds it) from
//!   the selection on, stops at the first match, and is cancelled by any other action. Once the
//!   match count of the same search is complete, `n` / `N` take the next hit from it at once.
//! * A filter scan keeps the old rows on screen until it is done, then swaps all its results in
//!   at once (rows, quiet count, turns, token totals), so the view never shows a half-built
//!   list. Its end is the session's length at each step, so rows that arrive meanwhile are
//!   included; a compaction restarts it. `view.progress` says how far a scan got.
//! * The match count ([`Count`]) runs only when no search or filter scan waits, is not cancelled
//!   by actions, and visits the filtered rows in item order, so the rank of the selected row is
//!   known as soon as the count passed it. It starts over when the search, the filtered rows
//!   (filter, quiet rows) or the session (restart) change, and follows a compaction's new
//!   numbering; rows that arrive are counted as they come, and a row that changes after it was
//!   counted is checked again.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use regex::Regex;

use super::App;
use crate::ui::status_bar::MatchStatus;
use crate::view::Tokens;

/// Longest step of a scan: a quarter of a 16 ms frame, so the step, the draw and the detail
/// render of a new selection fit in one frame even when the machine is busy.
pub const SCAN_BUDGET: Duration = Duration::from_millis(4);
/// Budget of the match count's first step, run inside the key press that set the search.
const FIRST_COUNT_STEP: Duration = Duration::from_millis(1);
/// Items visited between two clock reads (a deferred output is read back from its file, so one
/// item can take a while).
const CLOCK_EVERY: usize = 16;

/// A scan in progress.
#[derive(Debug)]
pub enum Scan {
    /// Looking for the next (or previous) match of `re` among the filtered rows.
    Search {
        re: Regex,
        forward: bool,
        /// Filtered-row position the scan starts from (see [`search_pos`]).
        from: usize,
        /// Filtered rows when it started.
        count: usize,
        /// Positions visited so far.
        done: usize,
        /// Positions to visit in all.
        total: usize,
    },
    /// Building the filtered rows from item `next` on.
    Filter {
        next: usize,
        out: Vec<usize>,
        quiet: usize,
        prompts: Vec<usize>,
        tokens: Tokens,
    },
}

/// The count of the committed search's matches among the filtered rows (folds ignored, as for
/// search), built in bounded steps.
#[derive(Debug)]
pub struct Count {
    re: Regex,
    /// Item indices of the matching rows counted so far, ascending.
    hits: Vec<usize>,
    /// Every filtered item below this index was counted.
    upto: usize,
    /// Items below `upto` that changed since they were counted (live sources).
    recheck: BTreeSet<usize>,
    /// The count reached the end once: what is left are rows that arrived or changed since,
    /// counted within a step, so the status bar does not flicker "scanning" on a live stream.
    caught_up: bool,
}

impl Count {
    fn new(re: Regex) -> Self {
        Self {
            re,
            hits: Vec::new(),
            upto: 0,
            recheck: BTreeSet::new(),
            caught_up: false,
        }
    }
}

/// The filtered-row position visited at step `j` of a search from `from` (see [`Scan::Search`]):
/// forward `from, from+1, …` wrapping at `count`; backward `from-1, from-2, …` wrapping.
fn search_pos(forward: bool, from: usize, count: usize, j: usize) -> usize {
    if forward {
        (from + j) % count
    } else {
        (from + count - 1 - j % count) % count
    }
}

impl App {
    /// Whether a scan (search, filter or match count) is waiting for its next step.
    pub fn scanning(&self) -> bool {
        self.scan.is_some() || self.counting() || self.panels.files.pending()
    }

    /// Whether a search or filter scan (not the match count) is waiting for its next step: the
    /// answer to the key is not complete yet.
    pub fn scan_pending(&self) -> bool {
        self.scan.is_some()
    }

    /// Whether a search for the next or previous match is waiting for its next step.
    pub fn searching(&self) -> bool {
        matches!(self.scan, Some(Scan::Search { .. }))
    }

    /// Whether the match count has rows left to visit.
    fn counting(&self) -> bool {
        self.count.as_ref().is_some_and(|c| {
            !c.recheck.is_empty()
                || self.count_pos(c.upto) < self.view.filtered_count(&self.session)
        })
    }

    /// The filtered-row position of the first filtered item at or after `item`. O(log n).
    fn count_pos(&self, item: usize) -> usize {
        match self.view.filtered_pos(item) {
            Ok(k) | Err(k) => k,
        }
    }

    /// Runs every pending scan to its end (tests, benches).
    pub fn finish_scans(&mut self) {
        while self.scanning() {
            self.work(Duration::MAX);
        }
    }

    /// The matches of the committed search for the status bar: the selected row's rank, the
    /// count so far and, while counting, how far it got. `None` without a search. O(log n).
    pub fn match_status(&self) -> Option<MatchStatus> {
        let c = self.count.as_ref()?;
        let sel = self.view.selected_item(&self.session);
        let at = sel.and_then(|i| {
            (i < c.upto && !c.recheck.contains(&i))
                .then(|| c.hits.binary_search(&i).ok())
                .flatten()
        });
        let scanning = (!c.caught_up && self.counting()).then(|| {
            let n = self.view.filtered_count(&self.session).max(1);
            (self.count_pos(c.upto) * 100 / n).min(99)
        });
        Some(MatchStatus {
            at: at.map(|k| k + 1),
            total: c.hits.len(),
            scanning,
        })
    }

    /// Starts counting the committed search's matches over (or stops without a search). A
    /// first short step ([`FIRST_COUNT_STEP`]) runs at once, so a small session shows its count
    /// with the key's own frame without the key paying a second full scan step (the search's).
    pub(super) fn restart_count(&mut self) {
        self.count = match (&self.search_re, &self.view.search) {
            (Some(re), Some(_)) => Some(Count::new(re.clone())),
            _ => None,
        };
        if self.scan.is_none() {
            self.count_step(self.scan_budget.min(FIRST_COUNT_STEP));
        }
    }

    /// Item `item` was added or changed: counted again when the count already passed it.
    pub(super) fn count_item_changed(&mut self, item: usize) {
        if let Some(c) = &mut self.count
            && item < c.upto
        {
            c.recheck.insert(item);
        }
    }

    /// One bounded step of the match count; returns whether it moved.
    fn count_step(&mut self, budget: Duration) -> bool {
        let Some(mut c) = self.count.take() else {
            return false;
        };
        let started = Instant::now();
        let mut steps = 0usize;
        loop {
            if let Some(i) = c.recheck.pop_first() {
                let hit = i < self.session.items.len()
                    && self.view.filtered_pos(i).is_ok()
                    && crate::session::query::item_matches(&self.session, i, &c.re);
                match (c.hits.binary_search(&i), hit) {
                    (Ok(p), false) => {
                        c.hits.remove(p);
                    }
                    (Err(p), true) => c.hits.insert(p, i),
                    (Ok(_), true) | (Err(_), false) => {}
                }
            } else {
                let k = self.count_pos(c.upto);
                if k >= self.view.filtered_count(&self.session) {
                    c.caught_up = true;
                    break;
                }
                let Some(i) = self.view.filtered_at(k) else {
                    break;
                };
                if crate::session::query::item_matches(&self.session, i, &c.re) {
                    c.hits.push(i);
                }
                c.upto = i + 1;
            }
            steps += 1;
            if steps.is_multiple_of(CLOCK_EVERY) && started.elapsed() >= budget {
                break;
            }
        }
        self.count = Some(c);
        steps > 0
    }

    /// Starts a search for the next (`forward`) or previous match after the selection, wrapping
    /// around; the first step runs at once.
    pub(super) fn start_search(&mut self, re: Regex, forward: bool) {
        if self.search_from_count(&re, forward) {
            return;
        }
        let count = self.view.filtered_count(&self.session);
        let Some(sel) = self.view.selected_item(&self.session) else {
            self.view.message = Some(format!("no match for /{}", re.as_str()));
            return;
        };
        if count == 0 {
            self.view.message = Some(format!("no match for /{}", re.as_str()));
            return;
        }
        let (after, before) = match self.view.filtered_pos(sel) {
            Ok(k) => (k + 1, k),
            Err(k) => (k, k),
        };
        let from = if forward { after % count } else { before };
        self.scan = Some(Scan::Search {
            re,
            forward,
            from,
            count,
            done: 0,
            total: count,
        });
        self.work(self.scan_budget);
    }

    /// `n` / `N` once the match count of the same search is complete: the next (previous) match
    /// is a binary search in its hits, wrapping around, instead of a scan (O(log n) at any
    /// session size). Returns `false` when the count cannot answer (other regex, still counting).
    fn search_from_count(&mut self, re: &Regex, forward: bool) -> bool {
        let Some(c) = &self.count else {
            return false;
        };
        if c.re.as_str() != re.as_str() || !c.caught_up || self.counting() {
            return false;
        }
        let sel = self.view.selected_item(&self.session);
        let target = match (sel, forward) {
            (None, _) => None,
            (Some(s), true) => c
                .hits
                .get(c.hits.partition_point(|&h| h <= s))
                .or_else(|| c.hits.first()),
            (Some(s), false) => c
                .hits
                .get(c.hits.partition_point(|&h| h < s).wrapping_sub(1))
                .or_else(|| c.hits.last()),
        };
        match target.copied() {
            Some(i) => {
                self.view.focus = crate::view::Pane::Feed;
                self.reveal(i);
                self.scroll_to_match = true;
            }
            None => self.view.message = Some(format!("no match for /{}", re.as_str())),
        }
        true
    }

    /// Starts rebuilding the filtered rows for the current filter and quiet setting; the old
    /// rows stay until it is done. The first step runs at once.
    pub(super) fn start_filter_scan(&mut self) {
        // A replay seeking back shrinks the session under the view: drop what no longer exists.
        let n = self.session.items.len();
        for list in [&mut self.view.filtered, &mut self.view.rows]
            .into_iter()
            .flatten()
        {
            let keep = list.partition_point(|&x| x < n);
            list.truncate(keep);
        }
        self.view.folds.prompts.retain(|&p| p < n);
        self.view.folds.reindex(&self.session);
        self.view.folds.folded.retain(|&p, _| p < n);
        self.scan = Some(Scan::Filter {
            next: 0,
            out: Vec::new(),
            quiet: 0,
            prompts: Vec::new(),
            tokens: Tokens::default(),
        });
        self.work(self.scan_budget);
    }

    /// A compaction renumbered the items: a filter scan starts over, a search stops, the match
    /// count follows the new numbering (removed rows leave it).
    pub(super) fn scan_after_compaction(&mut self, c: &crate::session::Compaction) {
        if let Some(count) = &mut self.count {
            // Compaction keeps the order of the rows it keeps, so the lists stay sorted. O(upto).
            count.hits = count.hits.iter().filter_map(|&i| c.item(i)).collect();
            count.recheck = count.recheck.iter().filter_map(|&i| c.item(i)).collect();
            count.upto = (0..count.upto).filter(|&i| c.item(i).is_some()).count();
        }
        match self.scan {
            Some(Scan::Filter { .. }) => self.start_filter_scan(),
            Some(Scan::Search { .. }) => {
                self.scan = None;
                self.view.progress = None;
                self.view.message = Some("search stopped: the oldest rows were dropped".into());
            }
            None => {}
        }
    }

    /// A user action arrived: a pending search gives way (its result would move the selection
    /// under the user); a filter scan goes on.
    pub(super) fn cancel_search_scan(&mut self) {
        if matches!(self.scan, Some(Scan::Search { .. })) {
            self.scan = None;
            self.view.progress = None;
        }
    }

    /// Runs the pending scan for at most `budget`; returns whether anything visible changed.
    pub(super) fn work(&mut self, budget: Duration) -> bool {
        // The files panel's model (`ui::files`), one bounded step.
        if self.panels.files.pending() {
            self.panels
                .files
                .step(&self.session, budget.min(SCAN_BUDGET));
            return true;
        }
        let started = Instant::now();
        let over = |k: usize| k.is_multiple_of(CLOCK_EVERY) && started.elapsed() >= budget;
        match self.scan.take() {
            None => self.count_step(budget),
            Some(Scan::Search {
                re,
                forward,
                from,
                count,
                mut done,
                total,
            }) => {
                let mut steps = 0usize;
                while done < total {
                    let k = search_pos(forward, from, count, done);
                    done += 1;
                    if let Some(i) = self.view.filtered_at(k)
                        && crate::session::query::item_matches(&self.session, i, &re)
                    {
                        self.view.progress = None;
                        self.view.focus = crate::view::Pane::Feed;
                        self.reveal(i);
                        self.scroll_to_match = true;
                        return true;
                    }
                    steps += 1;
                    if over(steps) {
                        self.view.progress = Some(format!(
                            "searching /{}… {}%",
                            re.as_str(),
                            done * 100 / total.max(1)
                        ));
                        self.scan = Some(Scan::Search {
                            re,
                            forward,
                            from,
                            count,
                            done,
                            total,
                        });
                        return true;
                    }
                }
                self.view.progress = None;
                self.view.message = Some(format!("no match for /{}", re.as_str()));
                true
            }
            Some(Scan::Filter {
                mut next,
                mut out,
                mut quiet,
                mut prompts,
                mut tokens,
            }) => {
                let (filter, show_quiet) = (self.view.filter.clone(), self.view.show_quiet);
                let mut steps = 0usize;
                while next < self.session.items.len() {
                    let i = next;
                    next += 1;
                    let q = crate::session::query::is_quiet(&self.session, i);
                    quiet += usize::from(q);
                    if crate::session::query::is_turn_start(&self.session, i) {
                        prompts.push(i);
                    }
                    tokens.add(&self.session, i);
                    if (show_quiet || !q)
                        && filter.as_ref().is_none_or(|f| f.matches(&self.session, i))
                    {
                        out.push(i);
                    }
                    steps += 1;
                    if over(steps) {
                        let n = self.session.items.len();
                        self.view.progress = Some(format!("filtering… {}%", next * 100 / n.max(1)));
                        self.scan = Some(Scan::Filter {
                            next,
                            out,
                            quiet,
                            prompts,
                            tokens,
                        });
                        return true;
                    }
                }
                self.view.progress = None;
                self.finish_filter(out, quiet, prompts, tokens);
                true
            }
        }
    }

    /// Swaps a finished filter scan's results in; keeps the selected item selected when it
    /// stays visible (else the nearest row after it).
    fn finish_filter(
        &mut self,
        out: Vec<usize>,
        quiet: usize,
        prompts: Vec<usize>,
        tokens: Tokens,
    ) {
        let selected_item = self.view.selected_item(&self.session);
        self.view.quiet = quiet;
        self.view.tokens = tokens;
        let folds = &mut self.view.folds;
        folds.prompts = prompts;
        folds.reindex(&self.session);
        let ps = &folds.prompts;
        folds.folded.retain(|p, _| ps.binary_search(p).is_ok());
        folds.stale = folds.folded.keys().copied().collect();
        let needed = self.view.filter.is_some() || (!self.view.show_quiet && quiet > 0);
        self.view.filtered = needed.then_some(out);
        self.view.derive_rows(&self.session);
        let row = selected_item.map_or(0, |i| match &self.view.rows {
            Some(r) => r.partition_point(|&x| x < i),
            None => i,
        });
        self.view.feed.selected = row.min(self.view.row_count(&self.session).saturating_sub(1));
        self.reset_detail();
        // Other rows pass the filter: count them.
        self.restart_count();
    }
}

#[cfg(test)]
mod tests {
    use super::search_pos;

    #[test]
    fn search_order_wraps_both_ways() {
        let fwd: Vec<usize> = (0..5).map(|j| search_pos(true, 3, 5, j)).collect();
        assert_eq!(fwd, vec![3, 4, 0, 1, 2]);
        let back: Vec<usize> = (0..5).map(|j| search_pos(false, 3, 5, j)).collect();
        assert_eq!(back, vec![2, 1, 0, 4, 3]);
        let back0: Vec<usize> = (0..3).map(|j| search_pos(false, 0, 3, j)).collect();
        assert_eq!(back0, vec![2, 1, 0]);
    }
}
