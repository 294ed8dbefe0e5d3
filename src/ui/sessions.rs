//! Sessions list (issue 24 item 1): every session of the view, one row each, most recent
//! activity first, under an "all sessions" row: its tag (the feed's tag column, same colour),
//! agent, state, calls, errors, tokens and last activity. Enter on a row filters the feed to
//! that session (`session:NAME`, so search, the other filters and the replay player follow
//! it); on "all" it clears that filter.
//!
//! Who calls it: `crate::ui::draw` when the sessions tab is shown (`L`, and by default when the
//! input holds more than one session); the app prepares it ([`SessionsState::prepare`]) and
//! asks [`SessionsState::selected_filter`] what Enter applies.
//!
//! The list is one component: [`ListRow`] is plain data and [`SessionsView`] draws any rows,
//! so the session browser can list its files with it (their states and figures are the same
//! words). The rows of a view's sessions come from [`rows_of`].
//!
//! State words ([`state_of`]): `input failed` for a session whose input could not be read or
//! stopped with an error (its finding says why; the other inputs go on); the live state's words (`session::live`: running, waiting for
//! you, stuck, looping) for the session whose call the live state names; else `running N` with
//! open calls, `ended` when the input ended, `idle 3m10s` since the session's newest frame
//! (measured by the wall clock on a live input), `idle` without times.
//!
//! Invariants: rows are built at most once per session revision (and once a second while
//! live), O(sessions log sessions); drawing is O(rows shown); untrusted text (ids, agents) goes
//! through `render::text::visible`.

use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::protocol::Timestamp;
use crate::render::text::visible;
use crate::session::Session;
use crate::session::live::Live;
use crate::theme::Theme;

/// One row of the list: plain data, drawable by [`SessionsView`] for any list of sessions.
#[derive(Debug, Clone, PartialEq)]
pub struct ListRow {
    /// The session (index in `Session::sessions`); `None` for the "all sessions" row.
    pub sid: Option<u32>,
    /// The tag as the feed shows it (`ui::feed::session_tag`) and its style.
    pub tag: String,
    pub tag_style: Style,
    /// The whole session name (its `session_id`, or its input's label), raw.
    pub name: String,
    /// Agent or client, raw; empty when unknown.
    pub agent: String,
    /// State in words ([`state_of`]) and its style.
    pub state: String,
    pub state_style: Style,
    pub calls: u64,
    pub errors: u64,
    /// Input + output + cache-read tokens.
    pub tokens: u64,
    /// Rows dropped by the live row cap (said after the state).
    pub dropped: u64,
    /// Newest frame time (shown as the feed's clock, `HH:MM:SS`, or `MM-DD HH:MM` when the
    /// rows are of several days).
    pub last: Option<Timestamp>,
}

/// View state of the list: plain data (part of `ViewState`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionsState {
    /// Selected row (0: "all sessions").
    pub selected: usize,
    pub offset: usize,
    /// The selected row's session (`Some(None)`: "all"), so the selection stays on it when the
    /// rows are sorted again by activity; `None` until a row was chosen.
    pub chosen: Option<Option<u32>>,
}

/// What the list keeps between frames (owned by the app; safe to drop).
#[derive(Debug, Clone, Default)]
pub struct SessionsCache {
    rows: Vec<ListRow>,
    built: Option<(u64, Instant)>,
}

impl SessionsCache {
    /// The rows as last built.
    pub fn rows(&self) -> &[ListRow] {
        &self.rows
    }
}

const REBUILD_EVERY: Duration = Duration::from_secs(1);

/// The state of session `sid` in words and its style (module doc).
pub fn state_of(
    session: &Session,
    sid: u32,
    live: Option<&Live>,
    now: Option<Timestamp>,
    theme: &Theme,
) -> (String, Style) {
    let owns = |l: &&Live| {
        l.call()
            .and_then(|k| session.invocations.get(k))
            .is_some_and(|inv| inv.session == sid)
    };
    if let Some(l) = live.filter(owns).filter(|l| l.attention().is_some()) {
        return (visible(&l.describe(session)), theme.finding_warning);
    }
    let e = session.sessions.get(sid);
    if e.failed {
        return ("input failed".to_owned(), theme.status_failed);
    }
    if e.counts.running > 0 && !session.ended {
        let words = if e.counts.running == 1 {
            live.filter(owns)
                .map_or_else(|| "running".to_owned(), |l| visible(&l.describe(session)))
        } else {
            format!("running {}", e.counts.running)
        };
        return (words, theme.status_running);
    }
    if session.ended {
        return ("ended".to_owned(), theme.dim);
    }
    match (now, e.last_at) {
        (Some(n), Some(l)) if n.0 >= l.0 => (
            format!("idle {}", crate::fmt::duration_ms((n.0 - l.0) as f64)),
            theme.dim,
        ),
        _ => ("idle".to_owned(), theme.dim),
    }
}

/// The list's rows for `session`: "all sessions" first, then each session, newest activity
/// first (no time: last; ties in order of appearance).
pub fn rows_of(
    session: &Session,
    live: Option<&Live>,
    now: Option<Timestamp>,
    theme: &Theme,
) -> Vec<ListRow> {
    let s = &session.sessions;
    let tokens = |t: &crate::session::query::Tokens| t.input + t.output + t.cache_read;
    let mut rows: Vec<ListRow> = s
        .iter()
        .map(|(sid, e)| {
            let (tag, tag_style) = crate::ui::feed::session_tag(session, sid, theme);
            let (state, state_style) = state_of(session, sid, live, now, theme);
            ListRow {
                sid: Some(sid),
                tag,
                tag_style,
                // A failed input says why where its name goes (its finding's message).
                name: if e.failed {
                    session
                        .findings
                        .iter()
                        .find(|f| {
                            f.session == Some(sid) && f.code == crate::source::merge::INPUT_FAILED
                        })
                        .map_or_else(|| s.name(sid).to_owned(), |f| f.message.clone())
                } else {
                    s.name(sid).to_owned()
                },
                agent: e.agent.as_deref().unwrap_or("").to_owned(),
                state,
                state_style,
                calls: e.counts.invocations,
                errors: e.counts.failed,
                tokens: tokens(&e.tokens),
                dropped: e.dropped,
                last: e.last_at,
            }
        })
        .collect();
    rows.sort_by(|a, b| b.last.cmp(&a.last).then(a.sid.cmp(&b.sid)));
    let all = ListRow {
        sid: None,
        tag: "all".to_owned(),
        tag_style: theme.title,
        name: format!("{} sessions", s.len()),
        agent: String::new(),
        state: if session.ended { "ended" } else { "" }.to_owned(),
        state_style: theme.dim,
        calls: rows.iter().map(|r| r.calls).sum(),
        errors: rows.iter().map(|r| r.errors).sum(),
        tokens: rows.iter().map(|r| r.tokens).sum(),
        dropped: rows.iter().map(|r| r.dropped).sum(),
        last: rows.iter().filter_map(|r| r.last).max(),
    };
    rows.insert(0, all);
    for r in &mut rows {
        if r.dropped > 0 {
            let d = format!("{} dropped", crate::ui::status_bar::short_count(r.dropped));
            r.state = if r.state.is_empty() {
                d
            } else {
                format!("{} · {d}", r.state)
            };
        }
    }
    rows
}

impl SessionsState {
    /// Builds the rows when the session changed (at most once a second while it changes) and
    /// keeps the selection in view of `area` (the list's inner area).
    pub fn prepare(
        &mut self,
        cache: &mut SessionsCache,
        session: &Session,
        live: Option<&Live>,
        now: Option<Timestamp>,
        theme: &Theme,
        area: Rect,
    ) {
        let stale = match cache.built {
            None => true,
            Some((rev, at)) => {
                rev != session.revision && (at.elapsed() >= REBUILD_EVERY || session.ended)
            }
        };
        if stale
            || now.is_some()
                && cache
                    .built
                    .is_some_and(|(_, at)| at.elapsed() >= REBUILD_EVERY)
        {
            cache.rows = rows_of(session, live, now, theme);
            cache.built = Some((session.revision, Instant::now()));
            if let Some(k) = self
                .chosen
                .and_then(|sid| cache.rows.iter().position(|r| r.sid == sid))
            {
                self.selected = k;
            }
        }
        self.selected = self.selected.min(cache.rows.len().saturating_sub(1));
        let shown = usize::from(area.height.saturating_sub(1)).max(1);
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + shown {
            self.offset = self.selected + 1 - shown;
        }
    }

    /// Moves the selection by `delta` rows (clamped).
    pub fn select_by(&mut self, cache: &SessionsCache, delta: isize) {
        let last = cache.rows.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(delta).min(last);
        self.chosen = cache.rows.get(self.selected).map(|r| r.sid);
    }

    /// What Enter applies to the feed's filter: `Some(Some(name))` filters to the selected
    /// session, `Some(None)` clears the session filter ("all"), `None` when there is no row.
    pub fn selected_filter(&self, cache: &SessionsCache) -> Option<Option<String>> {
        let row = cache.rows.get(self.selected)?;
        Some(row.sid.map(|_| row.name.clone()))
    }

    /// The row under screen row `row` of `area` (a click).
    pub fn index_at(&self, cache: &SessionsCache, area: Rect, row: u16) -> Option<usize> {
        let k = usize::from(row.checked_sub(area.y + 1)?) + self.offset;
        (k < cache.rows.len()).then_some(k)
    }
}

/// Draws a list of [`ListRow`]s.
pub struct SessionsView<'a> {
    theme: &'a Theme,
}

/// Columns: the tag, then by priority as the width allows.
const TAG: usize = crate::ui::feed::TAG_W;
const NUM: usize = 7;
const LAST: usize = 11;

impl<'a> SessionsView<'a> {
    pub fn new(theme: &'a Theme) -> Self {
        Self { theme }
    }

    /// Draws the header and the rows of `cache` from `state.offset` into `area` (the caller
    /// draws the border). Narrow: tag and state only; then calls, errors, tokens, the last
    /// activity, the agent, and the whole name as the width allows.
    pub fn render_with(
        &self,
        area: Rect,
        buf: &mut Buffer,
        state: &SessionsState,
        cache: &SessionsCache,
    ) {
        if area.height == 0 || area.width == 0 {
            return;
        }
        // Times of one day as the feed's clock; of several days with the date (UTC, as the feed).
        let day = |ts: Timestamp| ts.0.div_euclid(86_400_000);
        let mut days = cache.rows.iter().filter_map(|r| r.last.map(day));
        let dated = days.next().is_some_and(|d| days.any(|e| e != d));
        let when = |ts: Timestamp| {
            if dated {
                chrono::DateTime::from_timestamp_millis(ts.0)
                    .map_or_else(|| "—".to_owned(), |d| d.format("%m-%d %H:%M").to_string())
            } else {
                ts.clock()
            }
        };
        let last_w = if dated { LAST } else { 8 };
        let w = usize::from(area.width);
        let state_w = 22.min(w.saturating_sub(TAG + 1));
        let mut left = w.saturating_sub(TAG + 1 + state_w);
        let mut take = |n: usize| {
            if left >= n {
                left -= n;
                true
            } else {
                false
            }
        };
        let (calls, errors, tokens, last, agent) = (
            take(NUM),
            take(NUM),
            take(NUM + 1),
            take(last_w + 1),
            take(13),
        );
        let name_w = left.saturating_sub(1);
        let t = self.theme;
        let cell = |text: &str, width: usize, right: bool| {
            if right {
                crate::fmt::fit_right(text, width)
            } else {
                crate::fmt::fit(text, width)
            }
        };
        let line = |r: Option<&ListRow>| -> Line<'static> {
            let (tag, tag_style, st, st_style) = match r {
                Some(r) => (visible(&r.tag), r.tag_style, r.state.clone(), r.state_style),
                None => ("session".into(), t.title, "state".into(), t.title),
            };
            let head = r.is_none();
            let num = |n: u64| crate::ui::status_bar::short_count(n);
            let mut spans = vec![
                Span::styled(cell(&tag, TAG, false), tag_style),
                Span::raw(" "),
                Span::styled(cell(&st, state_w, false), st_style),
            ];
            let mut push = |on: bool, text: String, width: usize, style: Style| {
                if on {
                    spans.push(Span::styled(cell(&text, width, true), style));
                }
            };
            let style = if head { t.title } else { t.text };
            push(
                calls,
                r.map_or_else(|| "calls".into(), |r| num(r.calls)),
                NUM,
                style,
            );
            push(
                errors,
                r.map_or_else(|| "errors".into(), |r| num(r.errors)),
                NUM,
                if r.is_some_and(|r| r.errors > 0) {
                    t.status_failed
                } else {
                    style
                },
            );
            push(
                tokens,
                r.map_or_else(|| "tokens".into(), |r| num(r.tokens)),
                NUM + 1,
                style,
            );
            push(
                last,
                r.map_or_else(
                    || "last".into(),
                    |r| r.last.map_or_else(|| "—".into(), when),
                ),
                last_w + 1,
                if head { t.title } else { t.dim },
            );
            if agent {
                spans.push(Span::raw(" "));
                spans.push(Span::styled(
                    cell(
                        &r.map_or_else(|| "agent".into(), |r| visible(&r.agent)),
                        12,
                        false,
                    ),
                    if head { t.title } else { t.dim },
                ));
            }
            if name_w > 4 {
                spans.push(Span::raw(" "));
                spans.push(Span::styled(
                    cell(
                        &r.map_or_else(|| "name".into(), |r| visible(&r.name)),
                        name_w,
                        false,
                    ),
                    if head { t.title } else { t.dim },
                ));
            }
            Line::from(spans)
        };
        buf.set_line(area.x, area.y, &line(None), area.width);
        let shown = usize::from(area.height - 1);
        for (k, r) in cache.rows.iter().enumerate().skip(state.offset).take(shown) {
            let y = area.y + 1 + (k - state.offset) as u16;
            let mut l = line(Some(r));
            if k == state.selected {
                l = l.patch_style(t.selected);
            }
            buf.set_line(area.x, y, &l, area.width);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::load_bytes;

    fn frames(lines: &[(&str, i64)]) -> Vec<crate::import::Decoded> {
        let text: Vec<String> = lines
            .iter()
            .map(|(sid, ts)| {
                format!(
                    r#"{{"type":"agent.message","session_id":"{sid}","timestamp":{ts},"payload":{{"text":"x"}}}}"#
                )
            })
            .collect();
        load_bytes(text.join("\n").as_bytes()).items
    }

    /// Newest activity first under "all"; a chosen session stays selected when the rows are
    /// sorted again, and Enter's filter names it.
    #[test]
    fn the_selection_follows_its_session_when_the_rows_reorder() {
        let theme = Theme::dark();
        let area = Rect::new(0, 0, 80, 10);
        let mut s = Session::new();
        for d in frames(&[("aaa", 1_000), ("bbb", 2_000)]) {
            s.apply(d);
        }
        s.finish();
        let (mut st, mut cache) = (SessionsState::default(), SessionsCache::default());
        st.prepare(&mut cache, &s, None, None, &theme, area);
        let order: Vec<&str> = cache.rows().iter().map(|r| r.name.as_str()).collect();
        assert_eq!(order, ["2 sessions", "bbb", "aaa"]);
        st.select_by(&cache, 2);
        assert_eq!(st.selected_filter(&cache), Some(Some("aaa".to_owned())));
        // aaa becomes the newest: it moves up, and stays selected.
        for d in frames(&[("aaa", 3_000)]) {
            s.apply(d);
        }
        st.prepare(&mut cache, &s, None, None, &theme, area);
        let order: Vec<&str> = cache.rows().iter().map(|r| r.name.as_str()).collect();
        assert_eq!(order, ["2 sessions", "aaa", "bbb"]);
        assert_eq!(st.selected, 1);
        assert_eq!(st.selected_filter(&cache), Some(Some("aaa".to_owned())));
        st.select_by(&cache, -5);
        assert_eq!(st.selected_filter(&cache), Some(None));
    }
}
