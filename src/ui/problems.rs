//! Problems panel: the session's findings (reducer, checker, importers) as a selectable list.
//!
//! Who calls it: `crate::ui::draw` when the problems tab is shown (`!`); the app asks
//! [`feed_item_for`] where Enter on a finding jumps to. [`ProblemsView`] borrows the session;
//! [`ProblemsState`] holds the selection, the scroll offset and a level-count cache.
//!
//! Layout inside `area` (the caller draws the border): a summary line (`3 errors · 1 warning ·
//! 2 infos`), then one row per finding: level badge (coloured by the theme), `L<line>`, code,
//! message. Findings are listed in arrival order (what a live session appends to).
//!
//! Sessions (SPEC §6, issue 18): with more than one session in the input the panel lists the
//! findings of the selected feed row's session and those that belong to none (a malformed line),
//! `ProblemsState::session` (set by the app before each draw); the summary line names the
//! session. The list is kept in the cache and grows with the findings (no rescan per draw).
//!
//! Invariants: only the visible rows are built; counts are recomputed only when the number of
//! findings changed. Messages are sanitised when findings are made (`crate::finding`) and again
//! through [`visible`] here.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::StatefulWidget;

use crate::finding::{Finding, Level};
use crate::render::text::visible;
use crate::session::{Item, Session};
use crate::theme::Theme;

/// Findings per level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LevelCounts {
    pub error: usize,
    pub warning: usize,
    pub info: usize,
}

impl LevelCounts {
    /// Counts `findings` per level (O(findings)).
    pub fn of(findings: &[Finding]) -> Self {
        let mut c = Self::default();
        for f in findings {
            match f.level {
                Level::Error => c.error += 1,
                Level::Warning => c.warning += 1,
                Level::Info => c.info += 1,
            }
        }
        c
    }
}

/// View state of the problems panel: plain data (part of `ViewState`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProblemsState {
    /// Row of the listed findings (an index into `Session::findings` when every finding is
    /// listed; clamped when drawn).
    pub selected: usize,
    /// First visible row.
    pub offset: usize,
    /// `Some(sid)`: list only the findings of session `sid` and those of none (an input of
    /// several sessions; set by the app before each draw). `None`: every finding.
    pub session: Option<u32>,
    /// Columns the rows are scrolled sideways while wrap is off (`←`/`→`, `<`/`>`); the marker
    /// column stays.
    pub hscroll: usize,
}

/// Whether finding `f` is listed for `session` (see [`ProblemsState::session`]).
fn listed(f: &Finding, session: Option<u32>) -> bool {
    match (session, f.session) {
        (None, _) | (_, None) => true,
        (Some(a), Some(b)) => a == b,
    }
}

/// The findings listed for one session: their indices into `Session::findings`, extended as
/// findings arrive.
#[derive(Debug, Clone, Default)]
struct Listed {
    session: u32,
    /// Findings looked at so far.
    scanned: usize,
    indices: Vec<usize>,
    counts: LevelCounts,
}

/// What the problems panel computes from the session and keeps between frames (owned by the
/// app; safe to drop at any time).
#[derive(Debug, Clone, Default)]
pub struct ProblemsCache {
    /// Level counts and the number of findings they were computed for.
    counts: Option<(usize, LevelCounts)>,
    /// The listed findings when a session is chosen.
    listed: Option<Listed>,
}

/// Rows of the panel's list: every finding, or those of one session.
#[derive(Debug, Clone, Copy)]
enum Rows<'a> {
    All(&'a [Finding]),
    Of(&'a [Finding], &'a [usize]),
}

impl<'a> Rows<'a> {
    fn len(self) -> usize {
        match self {
            Self::All(f) => f.len(),
            Self::Of(_, ix) => ix.len(),
        }
    }

    fn get(self, k: usize) -> Option<&'a Finding> {
        match self {
            Self::All(f) => f.get(k),
            Self::Of(f, ix) => ix.get(k).and_then(|&i| f.get(i)),
        }
    }
}

/// Rows under the panel's summary line given to the selected finding in full (a rule and up to
/// four wrapped lines): five when the panel has 12 rows or more, else what the `n` listed
/// findings leave (two at least, or none: a short panel with a long list shows the list).
fn footer_rows(area: Rect, n: usize) -> u16 {
    if area.height >= 12 {
        return 5;
    }
    let spare = usize::from(area.height.saturating_sub(1)).saturating_sub(n);
    if spare >= 2 { spare.min(5) as u16 } else { 0 }
}

/// Rows of the findings list: the panel minus its summary line and the footer.
fn list_rows(area: Rect, n: usize) -> usize {
    usize::from(area.height.saturating_sub(1 + footer_rows(area, n)))
}

impl ProblemsState {
    /// Number of listed findings. O(findings) when a session is chosen (a key press, not a draw).
    fn count(&self, session: &Session) -> usize {
        match self.session {
            None => session.findings.len(),
            Some(_) => (session.findings.iter())
                .filter(|f| listed(f, self.session))
                .count(),
        }
    }

    pub fn select_next(&mut self, session: &Session) {
        if self.selected + 1 < self.count(session) {
            self.selected += 1;
        }
    }

    pub fn select_prev(&mut self) {
        self.selected = self.selected.saturating_sub(1);
    }

    /// Moves the selection by `delta` rows (a page), clamped to the list.
    pub fn select_by(&mut self, session: &Session, delta: isize) {
        let last = self.count(session).saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(delta).min(last);
    }

    /// The finding index shown on screen row `row` of a panel drawn in `area` (for mouse
    /// clicks); the summary line is not a finding.
    pub fn index_at(&self, session: &Session, area: Rect, row: u16) -> Option<usize> {
        let k = usize::from(row.checked_sub(area.y.checked_add(1)?)?);
        let i = self.offset + k;
        let n = self.count(session);
        // The footer's rows (the selected finding in full) are not findings.
        (k < list_rows(area, n) && i < n).then_some(i)
    }

    /// Display columns of the widest listed row (what sideways scrolling stops at). O(findings):
    /// a key press, not a draw.
    pub fn widest(&self, session: &Session) -> usize {
        let theme = Theme::mono();
        (session.findings.iter())
            .filter(|f| listed(f, self.session))
            .map(|f| finding_row(f, false, &theme).width())
            .max()
            .unwrap_or(0)
    }

    /// The selected finding, if any.
    pub fn selected_finding<'s>(&self, session: &'s Session) -> Option<&'s Finding> {
        let n = self.count(session);
        let at = self.selected.min(n.saturating_sub(1));
        (session.findings.iter())
            .filter(|f| listed(f, self.session))
            .nth(at)
    }
}

impl ProblemsCache {
    /// Brings the list of session `sid`'s findings up to date (new findings only).
    fn list(&mut self, session: &Session, sid: u32) {
        let l = self.listed.get_or_insert_with(Listed::default);
        if l.session != sid || l.scanned > session.findings.len() {
            *l = Listed {
                session: sid,
                ..Listed::default()
            };
        }
        for (i, f) in session.findings.iter().enumerate().skip(l.scanned) {
            if listed(f, Some(sid)) {
                l.indices.push(i);
                match f.level {
                    Level::Error => l.counts.error += 1,
                    Level::Warning => l.counts.warning += 1,
                    Level::Info => l.counts.info += 1,
                }
            }
        }
        l.scanned = session.findings.len();
    }

    /// The rows and level counts for `state`, when the cache holds them.
    fn rows<'a>(
        &'a self,
        session: &'a Session,
        state: &ProblemsState,
    ) -> Option<(Rows<'a>, LevelCounts)> {
        let n = session.findings.len();
        match (state.session, &self.listed, self.counts) {
            (None, _, Some((k, c))) if k == n => Some((Rows::All(&session.findings), c)),
            (Some(sid), Some(l), _) if l.session == sid && l.scanned == n => {
                Some((Rows::Of(&session.findings, &l.indices), l.counts))
            }
            _ => None,
        }
    }

    /// Level counts, cached by the number of findings (findings are only ever appended).
    pub fn counts(&mut self, session: &Session) -> LevelCounts {
        let n = session.findings.len();
        match self.counts {
            Some((k, c)) if k == n => c,
            _ => {
                let c = LevelCounts::of(&session.findings);
                self.counts = Some((n, c));
                c
            }
        }
    }
}

/// The feed row (index into `Session::items`) a finding is about: its invocation's row when it
/// names one, else the row whose frame is on the finding's line, else the last row before that
/// line. `None` when the finding has no place in the feed (line 0, nothing before it).
/// O(items) when going by line; called on a key press, not per draw.
pub fn feed_item_for(session: &Session, finding: &Finding) -> Option<usize> {
    if let Some(inv) = finding
        .invocation_id
        .as_deref()
        .and_then(|id| match finding.session {
            Some(sid) => session.invocation_in(sid, id),
            None => session.invocation(id),
        })
    {
        return Some(inv.item);
    }
    if finding.line == 0 {
        return None;
    }
    let mut before = None;
    for (i, item) in session.items.iter().enumerate() {
        let line = match item {
            Item::Invocation(k) => session.invocations.get(*k).map_or(0, |v| v.request_line),
            Item::Message(m) => m.line,
            Item::Event(f) => f.origin.line,
        };
        if line == finding.line {
            return Some(i);
        }
        if line != 0 && line < finding.line {
            before = Some(i);
        }
    }
    before
}

/// Style of a finding level.
pub fn level_style(theme: &Theme, level: Level) -> Style {
    match level {
        Level::Error => theme.finding_error,
        Level::Warning => theme.finding_warning,
        Level::Info => theme.finding_info,
    }
}

/// The problems panel over a session.
#[derive(Debug, Clone, Copy)]
pub struct ProblemsView<'a> {
    session: &'a Session,
    theme: &'a Theme,
}

impl<'a> ProblemsView<'a> {
    pub fn new(session: &'a Session, theme: &'a Theme) -> Self {
        Self { session, theme }
    }
}

fn finding_row(f: &Finding, selected: bool, theme: &Theme) -> Line<'static> {
    let base = if selected { theme.selected } else { theme.text };
    let badge = if selected {
        base
    } else {
        level_style(theme, f.level)
    };
    let line = if f.line == 0 {
        "     -".to_owned()
    } else {
        format!("L{:<5}", f.line)
    };
    let code_style = if selected { base } else { theme.title };
    let message = visible(&f.message).replace('\u{240a}', " ");
    Line::from(vec![
        Span::styled(if selected { "▶" } else { " " }, base),
        Span::styled(format!("{:<7} ", f.level.as_str()), badge),
        Span::styled(format!("{line} "), if selected { base } else { theme.dim }),
        Span::styled(format!("{} ", f.code), code_style),
        Span::styled(message, base),
        Span::styled(
            format!(" ({})", f.spec),
            if selected { base } else { theme.dim },
        ),
    ])
}

/// `row` scrolled `n` columns sideways, its first span (the selection marker) kept in place.
pub(super) fn scrolled(row: Line<'static>, n: usize) -> Line<'static> {
    if n == 0 || row.spans.is_empty() {
        return row;
    }
    let style = row.style;
    let mut spans = row.spans;
    let marker = spans.remove(0);
    let rest = super::detail::skip_columns(Line::from(spans), n);
    let mut out = vec![marker];
    out.extend(rest.spans);
    Line::from(out).style(style)
}

impl ProblemsState {
    /// Brings the state up to date for drawing into `area`: clamps the selection, keeps it
    /// visible, refreshes the level counts. Called by the app before each draw (and by the
    /// `StatefulWidget` impl).
    pub fn prepare(&mut self, cache: &mut ProblemsCache, session: &Session, area: Rect) {
        let n = match self.session {
            None => {
                cache.counts(session);
                session.findings.len()
            }
            Some(sid) => {
                cache.list(session, sid);
                cache.listed.as_ref().map_or(0, |l| l.indices.len())
            }
        };
        self.selected = self.selected.min(n.saturating_sub(1));
        let rows = list_rows(area, n);
        if rows > 0 {
            if self.selected < self.offset {
                self.offset = self.selected;
            } else if self.selected >= self.offset + rows {
                self.offset = self.selected + 1 - rows;
            }
        }
        self.offset = self.offset.min(n.saturating_sub(rows));
    }
}

impl ProblemsView<'_> {
    /// Draws the panel for a state already [`ProblemsState::prepare`]d for this area. Pure: the
    /// state is only read.
    pub fn render_with(
        self,
        area: Rect,
        buf: &mut Buffer,
        state: &ProblemsState,
        cache: &ProblemsCache,
    ) {
        if area.is_empty() {
            return;
        }
        let theme = self.theme;
        // A cache not prepared for this state (a direct render): filled here.
        let mut fresh = ProblemsCache::default();
        let rows = cache.rows(self.session, state);
        if rows.is_none() {
            match state.session {
                None => {
                    fresh.counts(self.session);
                }
                Some(sid) => fresh.list(self.session, sid),
            }
        }
        let Some((findings, c)) = rows.or_else(|| fresh.rows(self.session, state)) else {
            return;
        };
        // Several sessions: whose findings these are.
        let whose = state.session.map_or_else(String::new, |sid| {
            format!(" in {}", super::session_label(self.session, sid))
        });
        if findings.len() == 0 {
            buf.set_line(
                area.x,
                area.y,
                &Line::from(Span::styled(format!("no findings{whose}"), theme.dim)),
                area.width,
            );
            return;
        }
        let summary = Line::from(vec![
            Span::styled(crate::fmt::plural(c.error, "error"), theme.finding_error),
            Span::styled(" · ", theme.dim),
            Span::styled(
                crate::fmt::plural(c.warning, "warning"),
                theme.finding_warning,
            ),
            Span::styled(" · ", theme.dim),
            Span::styled(crate::fmt::plural(c.info, "info"), theme.finding_info),
            Span::styled(whose, theme.dim),
            Span::styled("   Enter: go to the frame", theme.dim),
        ]);
        buf.set_line(area.x, area.y, &summary, area.width);
        let rows = list_rows(area, findings.len());
        let selected = state.selected.min(findings.len() - 1);
        let end = (state.offset + rows).min(findings.len());
        for k in state.offset..end {
            let Some(f) = findings.get(k) else { break };
            let y = area.y + 1 + (k - state.offset) as u16;
            let row = scrolled(finding_row(f, k == selected, theme), state.hscroll);
            buf.set_line(area.x, y, &row, area.width);
        }
        // The selected finding in full, wrapped, below the list (rows cut long messages).
        let footer = footer_rows(area, findings.len());
        if footer > 0 {
            let top = area.y + area.height - footer;
            let rule = "─".repeat(usize::from(area.width));
            buf.set_line(area.x, top, &Line::styled(rule, theme.dim), area.width);
            let Some(f) = findings.get(selected) else {
                return;
            };
            let text = Line::from(vec![
                Span::styled(format!("{} ", f.code), level_style(theme, f.level)),
                Span::raw(visible(&f.message).replace('\u{240a}', " ")),
                Span::styled(format!(" ({})", f.spec), theme.dim),
            ]);
            let wrapped = crate::render::wrap::wrap_line(&text, area.width);
            let last = usize::from(footer - 1);
            for (i, l) in wrapped.iter().take(last).enumerate() {
                buf.set_line(area.x, top + 1 + i as u16, l, area.width);
            }
            if wrapped.len() > last {
                let y = area.y + area.height - 1;
                let x = area.x + area.width.saturating_sub(1);
                buf.set_string(x, y, "…", theme.dim);
            }
        }
    }
}

impl StatefulWidget for ProblemsView<'_> {
    type State = ProblemsState;

    fn render(self, area: Rect, buf: &mut Buffer, state: &mut ProblemsState) {
        let mut cache = ProblemsCache::default();
        state.prepare(&mut cache, self.session, area);
        self.render_with(area, buf, state, &cache);
    }
}
