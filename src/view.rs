//! View state: which session is shown, selection, scroll, focus, filter, search, folds
//! (STYLE 4.5). Plain data.
//!
//! Who uses it: the app mutates it in `update`; the widgets (`crate::ui`) read it while
//! drawing, through their `DrawCtx`. Invariants: everything here is `Debug + Clone + PartialEq`
//! so tests assert whole states; no caches (the panels' caches are the app's, `ui::Panels`) and
//! no regex compilation here (the search regex is the app's; the filter is parsed by
//! `crate::query`); session queries (quiet, error, prompt, turn start, search text) live beside
//! the session (`session::query`). Selection is a *row*
//! index into the visible rows ([`ViewState::rows`] when a filter is active, else the session's
//! items one to one); rows only ever refer to existing items.
//!
//! Turns and folding: a *turn* is a prompt row and every item after it up to the next prompt
//! ([`Folds`]). Two row lists are kept: [`ViewState::filtered`] (what the filter and the quiet
//! setting let through) and [`ViewState::rows`] (that, minus the rows of folded turns, plus the
//! prompt row of every folded turn even when the filter hides it, so it can be unfolded). Both
//! are sorted item indices; folding and unfolding splice one turn's range (O(turn) plus a
//! memmove), never rescan the session; jumps walk `filtered` so they see inside folded turns.

use std::collections::{BTreeMap, BTreeSet};

use crate::protocol::Timestamp;
use crate::query::{Filter, shows};
pub use crate::session::query::Tokens;
use crate::session::query::{is_error, is_quiet, is_turn_start};
use crate::session::{Item, Session};

/// Which session(s) the view shows. One today: the app folds one session. When a master relays
/// many (a later issue), this names one of them, or all of them interleaved; widgets get it in
/// their `DrawCtx` already, so that change does not reopen each of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Shown {
    /// The one session the app holds.
    #[default]
    Only,
}

/// A focusable pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pane {
    #[default]
    Feed,
    Detail,
}

/// What the right-hand pane shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tab {
    #[default]
    Detail,
    Catalog,
    Problems,
    /// What the session changed (`crate::ui::files`).
    Files,
    /// What the session did that a reviewer should see (`crate::ui::audit`).
    Audit,
    /// The sessions of the view (`crate::ui::sessions`, issue 24).
    Sessions,
}

/// Input mode: where keys go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Normal,
    /// Typing a search regex after `/`.
    Search,
    /// Typing a filter after `f`.
    Filter,
}

/// The feed list's state.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FeedState {
    /// Selected visible row.
    pub selected: usize,
    /// First visible row drawn.
    pub offset: usize,
    /// Rows that fit, from the last layout.
    pub height: u16,
    /// Keep the last row selected as rows arrive (live sources, `G`).
    pub follow: bool,
}

/// The detail pane's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetailState {
    /// First drawn line (of the wrapped lines).
    pub scroll: usize,
    /// Keep the view pinned to the bottom while output grows (pager behaviour).
    pub follow_tail: bool,
    /// Lines that fit, from the last layout.
    pub height: u16,
    pub wrap: bool,
    pub side_by_side: bool,
    /// Show folded (long) output in full.
    pub expanded: bool,
    /// Columns scrolled sideways while `wrap` is off (`←`/`→`, `h`/`l` in the detail pane).
    pub hscroll: usize,
}

impl Default for DetailState {
    fn default() -> Self {
        Self {
            scroll: 0,
            follow_tail: false,
            height: 0,
            wrap: true,
            side_by_side: false,
            expanded: false,
            hscroll: 0,
        }
    }
}

/// What a folded turn's prompt row says about the hidden rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TurnSummary {
    /// Items of the turn after the prompt (hidden while folded; quiet ones included).
    pub items: usize,
    /// Tool calls in the turn.
    pub calls: usize,
    /// Failed calls and error events in the turn.
    pub errors: usize,
    /// From the prompt's timestamp to the latest time seen in the turn (ms); `None` without
    /// timestamps.
    pub duration_ms: Option<i64>,
    /// The turn's usage rows (its subagents' included) and their cost, counted as the status
    /// bar counts the session's ([`Tokens::add`]), so the turns add up to the session.
    pub tokens: Tokens,
}

/// Turns and which of them are folded.
#[derive(Debug, Clone, Default)]
pub struct Folds {
    /// Item index of every prompt, ascending (appended as prompts arrive, remapped on compaction).
    pub prompts: Vec<usize>,
    /// Folded turns: prompt item → summary of the turn (computed when folded, refreshed when
    /// stale).
    pub folded: BTreeMap<usize, TurnSummary>,
    /// Folded turns whose summary is out of date (rows arrived or changed, fold all,
    /// compaction); refreshed by [`ViewState::refresh_fold_summaries`] when in view.
    pub stale: BTreeSet<usize>,
    /// Every turn in view, open or folded: prompt item → its figures (duration, calls,
    /// tokens, cost) for the prompt row. Computed when the row comes into view
    /// ([`ViewState::refresh_turn_figures`]), dropped when a row of the turn arrives or
    /// changes.
    pub figures: BTreeMap<usize, TurnSummary>,
    /// With several sessions: each session's prompts, ascending (`by_session[sid]`), so a row's
    /// turn is found in O(log) whatever the number of sessions interleaved. Valid while
    /// `indexed == prompts.len()` ([`Folds::reindex`]; kept up by [`Folds::on_new_item`]).
    pub by_session: Vec<Vec<usize>>,
    pub indexed: usize,
}

/// Equal when the turns and folds are: `figures` is a cache of what the rows in view show.
impl PartialEq for Folds {
    fn eq(&self, other: &Self) -> bool {
        self.prompts == other.prompts && self.folded == other.folded && self.stale == other.stale
    }
}

impl Eq for Folds {}

impl Folds {
    /// The prompt whose turn holds `item` (the prompt itself included); `None` before the first
    /// prompt. A turn is its own session's (SPEC §6, issue 24): with several sessions
    /// interleaved, the nearest earlier prompt of the item's session. O(log prompts), plus the
    /// other sessions' prompts in between when there are several.
    pub fn turn_of(&self, session: &Session, item: usize) -> Option<usize> {
        let k = self.prompts.partition_point(|&p| p <= item);
        if !session.sessions.is_multi() {
            return k.checked_sub(1).map(|k| self.prompts[k]);
        }
        let sid = session.sessions.of_item(item);
        if let Some(own) = self.own_prompts(sid) {
            let j = own.partition_point(|&p| p <= item);
            return j.checked_sub(1).map(|j| own[j]);
        }
        self.prompts[..k]
            .iter()
            .rev()
            .find(|&&p| session.sessions.of_item(p) == sid)
            .copied()
    }

    /// Session `sid`'s prompts when the index is up to date.
    fn own_prompts(&self, sid: u32) -> Option<&[usize]> {
        (self.indexed == self.prompts.len() && !self.by_session.is_empty()).then(|| {
            self.by_session
                .get(sid as usize)
                .map_or(&[][..], Vec::as_slice)
        })
    }

    /// Rebuilds the per-session prompt index after `prompts` changed wholesale (a scan, a
    /// compaction). O(prompts); nothing with one session.
    pub fn reindex(&mut self, session: &Session) {
        self.by_session.clear();
        self.indexed = 0;
        if !session.sessions.is_multi() {
            return;
        }
        for &p in &self.prompts {
            let sid = session.sessions.of_item(p) as usize;
            if self.by_session.len() <= sid {
                self.by_session.resize_with(sid + 1, Vec::new);
            }
            self.by_session[sid].push(p);
        }
        self.indexed = self.prompts.len();
    }

    /// One past the last item of the turn of prompt `p`: the next prompt of its session, or
    /// the number of items. With several sessions, rows of other sessions before that are not
    /// the turn's ([`in_turn`]).
    pub fn turn_end(&self, session: &Session, p: usize) -> usize {
        let n_items = session.items.len();
        let k = self.prompts.partition_point(|&x| x <= p);
        if !session.sessions.is_multi() {
            return self.prompts.get(k).copied().unwrap_or(n_items);
        }
        let sid = session.sessions.of_item(p);
        if let Some(own) = self.own_prompts(sid) {
            let j = own.partition_point(|&x| x <= p);
            return own.get(j).copied().unwrap_or(n_items);
        }
        self.prompts[k..]
            .iter()
            .find(|&&x| session.sessions.of_item(x) == sid)
            .copied()
            .unwrap_or(n_items)
    }

    /// Whether `item` is hidden inside a folded turn (a folded prompt itself is not).
    pub fn hidden(&self, session: &Session, item: usize) -> bool {
        self.turn_of(session, item)
            .is_some_and(|p| p < item && self.folded.contains_key(&p))
    }

    /// Records a new item (prompts join the turn list).
    pub fn on_new_item(&mut self, session: &Session, item: usize) {
        if is_turn_start(session, item) {
            let pos = self.prompts.partition_point(|&p| p < item);
            if self.prompts.get(pos) != Some(&item) {
                let fresh = self.indexed == self.prompts.len();
                self.prompts.insert(pos, item);
                if !session.sessions.is_multi() {
                    return;
                }
                if !fresh || self.by_session.is_empty() {
                    // The second session just appeared, or the prompts changed: index them all.
                    self.reindex(session);
                    return;
                }
                let sid = session.sessions.of_item(item) as usize;
                if self.by_session.len() <= sid {
                    self.by_session.resize_with(sid + 1, Vec::new);
                }
                let own = &mut self.by_session[sid];
                let at = own.partition_point(|&p| p < item);
                own.insert(at, item);
                self.indexed += 1;
            }
        }
    }
}

/// Whether item `i`, between prompt `p` and its turn's end, is of the turn: always with one
/// session; with several, when it is of `p`'s session.
pub fn in_turn(session: &Session, p: usize, i: usize) -> bool {
    !session.sessions.is_multi() || session.sessions.of_item(i) == session.sessions.of_item(p)
}

/// The summary of the turn of prompt `p` ending before item `end` (its session's rows only,
/// [`in_turn`]). O(turn).
pub fn summarize_turn(session: &Session, p: usize, end: usize) -> TurnSummary {
    let start_ts = item_time(session, p);
    let mut s = TurnSummary::default();
    let mut last = start_ts;
    for i in p + 1..end.min(session.items.len()) {
        if !in_turn(session, p, i) {
            continue;
        }
        s.items += 1;
        if let Some(Item::Invocation(_)) = session.items.get(i) {
            s.calls += 1;
        }
        if is_error(session, i) {
            s.errors += 1;
        }
        s.tokens.add(session, i);
        if let Some(t) = item_end_time(session, i) {
            last = Some(last.map_or(t, |l| l.max(t)));
        }
    }
    s.duration_ms = match (start_ts, last) {
        (Some(a), Some(b)) if b.0 >= a.0 => Some(b.0 - a.0),
        _ => None,
    };
    s
}

fn item_time(session: &Session, i: usize) -> Option<Timestamp> {
    match session.items.get(i)? {
        Item::Invocation(k) => session.invocations[*k].requested_at,
        Item::Message(m) => m.timestamp,
        Item::Event(f) => f.envelope.timestamp,
    }
}

/// The latest time an item carries (a call's result time when it has one).
fn item_end_time(session: &Session, i: usize) -> Option<Timestamp> {
    match session.items.get(i)? {
        Item::Invocation(k) => {
            let inv = &session.invocations[*k];
            inv.ended_at.or(inv.requested_at)
        }
        Item::Message(m) => m.timestamp,
        Item::Event(f) => f.envelope.timestamp,
    }
}

/// What the search and filter prompts remember: each mode's committed texts, oldest first, and
/// where Up / Down are in them while a prompt is open (`None`: at the text being typed).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PromptHistory {
    pub search: Vec<String>,
    pub filter: Vec<String>,
    pub pos: Option<usize>,
}

/// Everything the user controls about the view.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ViewState {
    /// Which session(s) are shown.
    pub shown: Shown,
    pub focus: Pane,
    pub tab: Tab,
    pub mode: Mode,
    pub help: bool,
    /// The detail pane takes the whole screen.
    pub zoom: bool,
    pub feed: FeedState,
    pub detail: DetailState,
    /// Scroll of the catalog / problems panel.
    pub panel_scroll: usize,
    /// Catalog panel: selected tool, detail scroll (`crate::ui::catalog`).
    pub catalog: crate::ui::catalog::CatalogState,
    /// Problems panel: selected finding (`crate::ui::problems`).
    pub problems: crate::ui::problems::ProblemsState,
    /// Files panel: selected row, diff scroll (`crate::ui::files`).
    pub files: crate::ui::files::FilesState,
    /// Audit panel: selected entry, kind filter (`crate::ui::audit`).
    pub audit: crate::ui::audit::AuditState,
    /// Sessions list: selected row (`crate::ui::sessions`).
    pub sessions: crate::ui::sessions::SessionsState,
    /// The sessions list was shown by itself once (when a second session appeared).
    pub sessions_shown: bool,
    /// The active filter.
    pub filter: Option<Filter>,
    /// Show quiet rows (see [`is_quiet`]).
    pub show_quiet: bool,
    /// Quiet items in the session (shown in the feed title while hidden).
    pub quiet: usize,
    /// Item indices of the visible rows (ascending) while a filter is active, quiet rows are
    /// hidden or a turn is folded; `None`: every item is a row.
    pub rows: Option<Vec<usize>>,
    /// Item indices that pass the filter and the quiet setting, folds ignored (ascending);
    /// `None`: every item. Equal to `rows` while nothing is folded.
    pub filtered: Option<Vec<usize>>,
    /// Turns and folded turns.
    pub folds: Folds,
    /// Claude Code fork points: their branches, main lines and folds (a folded fork point
    /// hides the branches other than its main line; see `crate::session::forks`).
    pub forks: crate::session::forks::ForkTable,
    /// Token totals (status bar).
    pub tokens: Tokens,
    /// The committed search regex source.
    pub search: Option<String>,
    /// The text being typed in search / filter mode.
    pub input: String,
    /// Why the search regex being typed does not compile (yet), for the prompt row.
    pub input_problem: Option<String>,
    /// A one-off message for the status bar ("no more errors", a regex error).
    pub message: Option<String>,
    /// How far a running search or filter scan got ("filtering… 40%").
    pub progress: Option<String>,
    /// Most of the width the feed takes side by side, in percent (`crate::ui::Split::share`);
    /// 0: the config's or the default (see [`ViewState::feed_share`]).
    pub feed_share: u16,
    /// The prompt's cursor, a byte offset into `input` at a character boundary.
    pub input_cursor: usize,
    /// The prompt's text is selected (the filter prompt reopens so): typing replaces it.
    pub input_selected: bool,
    /// Committed searches and filters, oldest first (Up / Down in the prompt).
    pub history: PromptHistory,
    /// Rows the help popup is scrolled by (`crate::ui::help`).
    pub help_scroll: usize,
}

impl ViewState {
    /// The feed's share of the width in percent ([`ViewState::feed_share`], its default filled).
    pub fn feed_share(&self) -> u16 {
        if self.feed_share == 0 {
            crate::ui::Split::DEFAULT_SHARE
        } else {
            self.feed_share
        }
    }

    /// Number of visible rows.
    pub fn row_count(&self, session: &Session) -> usize {
        self.rows.as_ref().map_or(session.items.len(), Vec::len)
    }

    /// The item index of visible row `row`.
    pub fn item_at(&self, row: usize) -> Option<usize> {
        match &self.rows {
            Some(r) => r.get(row).copied(),
            None => Some(row),
        }
    }

    /// The visible row showing item `item`, if it is visible.
    pub fn row_of(&self, item: usize) -> Option<usize> {
        match &self.rows {
            Some(r) => r.binary_search(&item).ok(),
            None => Some(item),
        }
    }

    /// The session the status bar and the catalog and problems panels follow (SPEC §6): the
    /// selected row's (the default session's when no row is selected), when the input holds more
    /// than one session; `None` for a single-session input. O(1).
    pub fn followed_session(&self, session: &Session) -> Option<u32> {
        let s = &session.sessions;
        s.is_multi()
            .then(|| self.selected_item(session).map_or(0, |i| s.of_item(i)))
    }

    /// The selected item index, if any row exists.
    pub fn selected_item(&self, session: &Session) -> Option<usize> {
        if self.row_count(session) == 0 {
            return None;
        }
        self.item_at(self.feed.selected)
    }

    /// Number of items that pass the filter and the quiet setting (folds ignored).
    pub fn filtered_count(&self, session: &Session) -> usize {
        self.filtered.as_ref().map_or(session.items.len(), Vec::len)
    }

    /// The item at position `k` of the filtered list.
    pub fn filtered_at(&self, k: usize) -> Option<usize> {
        match &self.filtered {
            Some(f) => f.get(k).copied(),
            None => Some(k),
        }
    }

    /// Where `item` is in the filtered list: `Ok(k)` when there, else `Err(k)`, the position it
    /// would take. O(log n).
    pub fn filtered_pos(&self, item: usize) -> Result<usize, usize> {
        match &self.filtered {
            Some(f) => f.binary_search(&item),
            None => Ok(item),
        }
    }

    /// Recomputes [`Self::rows`] from [`Self::filtered`] and the folds: O(filtered + folded),
    /// O(prompts) when every turn is folded; user actions only (filter changes, fold all,
    /// compaction).
    pub fn derive_rows(&mut self, session: &Session) {
        let n_items = session.items.len();
        self.derive_turn_rows(session);
        if !self.forks.points.is_empty() {
            let rows = self.rows.take();
            let forks = &self.forks;
            let keep = |&i: &usize| !forks.hidden(i);
            self.rows = Some(match rows {
                Some(r) => r.into_iter().filter(keep).collect(),
                None => (0..n_items).filter(keep).collect(),
            });
        }
    }

    /// [`Self::derive_rows`] without the fork folds.
    fn derive_turn_rows(&mut self, session: &Session) {
        let n_items = session.items.len();
        if self.folds.folded.is_empty() {
            self.rows = self.filtered.clone();
            return;
        }
        if session.sessions.is_multi() {
            // Several sessions: a folded turn's rows are interleaved with other sessions' rows,
            // so each row is asked. O(filtered × sessions' prompts between), user actions only.
            let items: Box<dyn Iterator<Item = usize> + '_> = match &self.filtered {
                Some(f) => Box::new(f.iter().copied()),
                None => Box::new(0..n_items),
            };
            let mut out: Vec<usize> = items.filter(|&i| !self.folds.hidden(session, i)).collect();
            // A folded prompt stays even when the filter hides it.
            out.extend(self.folds.folded.keys().copied().filter(|&p| p < n_items));
            out.sort_unstable();
            out.dedup();
            self.rows = Some(out);
            return;
        }
        if self.folds.folded.len() == self.folds.prompts.len() {
            // Everything folded: the rows before the first turn, then every prompt. O(prompts).
            let first = self.folds.prompts.first().copied().unwrap_or(n_items);
            let mut out: Vec<usize> = match &self.filtered {
                Some(f) => f[..f.partition_point(|&x| x < first)].to_vec(),
                None => (0..first).collect(),
            };
            out.extend(self.folds.prompts.iter().copied().filter(|&p| p < n_items));
            self.rows = Some(out);
            return;
        }
        let items: Box<dyn Iterator<Item = usize> + '_> = match &self.filtered {
            Some(f) => Box::new(f.iter().copied()),
            None => Box::new(0..n_items),
        };
        let mut out = Vec::with_capacity(self.filtered.as_ref().map_or(n_items, Vec::len));
        let mut prompts = self.folds.folded.keys().copied().peekable();
        // The turn being hidden: items in (p, end).
        let mut hide: Option<(usize, usize)> = None;
        for i in items {
            while let Some(&p) = prompts.peek()
                && p <= i
            {
                out.push(p);
                hide = Some((p, self.folds.turn_end(session, p)));
                prompts.next();
            }
            if out.last() == Some(&i) || hide.is_some_and(|(p, e)| i > p && i < e) {
                continue;
            }
            out.push(i);
        }
        out.extend(prompts.filter(|&p| p < n_items));
        self.rows = Some(out);
    }

    /// Folds the turn of prompt `p`: its rows leave [`Self::rows`], the prompt row stays (even
    /// when the filter hides it). Returns `false` when `p` is no prompt or already folded.
    /// O(turn) for the summary plus one splice.
    pub fn fold(&mut self, session: &Session, p: usize) -> bool {
        if !is_turn_start(session, p) || self.folds.folded.contains_key(&p) {
            return false;
        }
        let n = session.items.len();
        let end = self.folds.turn_end(session, p);
        self.folds.folded.insert(p, summarize_turn(session, p, end));
        self.folds.stale.remove(&p);
        if session.sessions.is_multi() {
            self.derive_rows(session);
            return true;
        }
        let rows = self.rows.get_or_insert_with(|| (0..n).collect());
        let lo = rows.partition_point(|&r| r <= p);
        let hi = rows.partition_point(|&r| r < end);
        rows.drain(lo..hi);
        if let Err(pos) = rows.binary_search(&p) {
            rows.insert(pos, p);
        }
        true
    }

    /// Unfolds the turn of prompt `p`: the turn's filtered rows come back. Returns `false` when
    /// it was not folded. O(turn) plus one splice.
    pub fn unfold(&mut self, session: &Session, p: usize) -> bool {
        if self.folds.folded.remove(&p).is_none() {
            return false;
        }
        self.folds.stale.remove(&p);
        let n = session.items.len();
        if self.folds.folded.is_empty()
            || !self.forks.points.is_empty()
            || session.sessions.is_multi()
        {
            self.derive_rows(session);
            return true;
        }
        let end = self.folds.turn_end(session, p);
        let add: Vec<usize> = match &self.filtered {
            Some(f) => f[f.partition_point(|&x| x <= p)..f.partition_point(|&x| x < end)].to_vec(),
            None => (p + 1..end).collect(),
        };
        let p_shown = self.filtered_pos(p).is_ok();
        let rows = self.rows.get_or_insert_with(|| (0..n).collect());
        let lo = rows.partition_point(|&r| r <= p);
        rows.splice(lo..lo, add);
        if !p_shown && let Ok(pos) = rows.binary_search(&p) {
            rows.remove(pos);
        }
        true
    }

    /// Folds every turn (O(rows + prompts)); returns how many were newly folded. Their
    /// summaries are computed when their rows come into view
    /// ([`Self::refresh_fold_summaries`]), not here.
    pub fn fold_all(&mut self, session: &Session) -> usize {
        let mut count = 0;
        for &p in &self.folds.prompts {
            if let std::collections::btree_map::Entry::Vacant(e) = self.folds.folded.entry(p) {
                e.insert(TurnSummary::default());
                self.folds.stale.insert(p);
                count += 1;
            }
        }
        self.derive_rows(session);
        count
    }

    /// Unfolds every turn; returns how many were folded.
    pub fn unfold_all(&mut self, session: &Session) -> usize {
        let count = self.folds.folded.len();
        self.folds.folded.clear();
        self.folds.stale.clear();
        self.derive_rows(session);
        count
    }

    /// Folds (`Some(true)`), unfolds (`Some(false)`) or toggles (`None`) fork point `k`
    /// (an index into [`Self::forks`]): its branches other than the main line leave the rows.
    /// O(rows). Returns whether it is folded now.
    pub fn fold_fork(&mut self, k: usize, want: Option<bool>, session: &Session) -> bool {
        let Some(fp) = self.forks.points.get_mut(k) else {
            return false;
        };
        fp.folded = want.unwrap_or(!fp.folded);
        let folded = fp.folded;
        self.derive_rows(session);
        folded
    }

    /// Rows the fold of fork point `fp` hides (filtered rows in its other branches).
    pub fn fork_hidden_rows(&self, fp: &crate::session::forks::ForkPoint, n_items: usize) -> usize {
        let at = |i: usize| match self.filtered_pos(i) {
            Ok(k) | Err(k) => k,
        };
        fp.hidden_ranges(n_items)
            .iter()
            .map(|&(s, e)| at(e) - at(s))
            .sum()
    }

    /// Computes the figures of the turns whose prompt rows are among `items` (the rows in view)
    /// and have none: O(those turns' rows), once per frame, never for turns out of view.
    pub fn refresh_turn_figures(&mut self, session: &Session, items: &[usize]) {
        for &p in items {
            if self.folds.figures.contains_key(&p) || !is_turn_start(session, p) {
                continue;
            }
            let end = self.folds.turn_end(session, p);
            self.folds
                .figures
                .insert(p, summarize_turn(session, p, end));
        }
    }

    /// Recomputes the summaries of the stale folded turns among `items` (the rows in view):
    /// O(those turns' rows), once per frame, never for turns out of view.
    pub fn refresh_fold_summaries(&mut self, session: &Session, items: &[usize]) {
        for &p in items {
            if !self.folds.stale.remove(&p) {
                continue;
            }
            let end = self.folds.turn_end(session, p);
            if let Some(s) = self.folds.folded.get_mut(&p) {
                *s = summarize_turn(session, p, end);
            }
        }
    }

    /// Brings the row lists up to date for `item`, just added (`new_item`) or changed: counts
    /// quiet rows, records prompts, inserts the item into [`Self::filtered`] and [`Self::rows`]
    /// when it shows, marks its folded turn's summary stale. Returns the position at which a
    /// row was inserted into `rows` (for keeping the selection). O(log n) plus one filter check.
    pub fn admit(&mut self, session: &Session, item: usize, new_item: bool) -> Option<usize> {
        let pos = self.admit_row(session, item, new_item);
        if new_item && self.forks.on_item(session, item) {
            // A fork mark: the main lines and so the folded branches may have changed.
            self.derive_rows(session);
            return None;
        }
        pos
    }

    fn admit_row(&mut self, session: &Session, item: usize, new_item: bool) -> Option<usize> {
        if new_item {
            self.folds.on_new_item(session, item);
            self.tokens.add(session, item);
            if is_quiet(session, item) {
                self.quiet += 1;
                if !self.show_quiet && self.filtered.is_none() {
                    // First hidden row: every earlier item was a row.
                    self.filtered = Some((0..item).collect());
                    if self.rows.is_none() {
                        self.rows = Some((0..item).collect());
                    }
                }
            }
        }
        if let Some(p) = self.folds.turn_of(session, item) {
            self.folds.figures.remove(&p);
        }
        let folded_in = self
            .folds
            .turn_of(session, item)
            .filter(|&p| p < item && self.folds.folded.contains_key(&p));
        if let Some(p) = folded_in {
            self.folds.stale.insert(p);
        }
        // Membership first (O(log n)); the filter match only for rows not shown yet.
        if let Some(f) = &mut self.filtered {
            match f.binary_search(&item) {
                Ok(_) => {}
                Err(pos) => {
                    if !shows(self.filter.as_ref(), self.show_quiet, session, item) {
                        return None;
                    }
                    f.insert(pos, item);
                }
            }
        }
        if folded_in.is_some() {
            return None;
        }
        let rows = self.rows.as_mut()?;
        let pos = rows.binary_search(&item).err()?;
        rows.insert(pos, item);
        Some(pos)
    }

    /// Follows a session compaction: remaps every stored item index and drops removed ones,
    /// then derives the rows again.
    pub fn remap(&mut self, c: &crate::session::Compaction, session: &Session) {
        let map = |v: &mut Vec<usize>| *v = v.iter().filter_map(|&r| c.item(r)).collect();
        if let Some(f) = &mut self.filtered {
            map(f);
        }
        map(&mut self.folds.prompts);
        self.folds.folded = std::mem::take(&mut self.folds.folded)
            .into_iter()
            .filter_map(|(p, s)| c.item(p).map(|q| (q, s)))
            .collect();
        // Removed rows change the summaries.
        self.folds.stale = self.folds.folded.keys().copied().collect();
        self.folds.figures.clear();
        self.forks.remap(|i| c.item(i));
        self.folds.reindex(session);
        self.derive_rows(session);
    }
}
