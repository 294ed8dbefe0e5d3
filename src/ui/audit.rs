//! Audit panel (issue 23 item 5): the session's shell commands, network access, writes outside
//! the working directory, permission-mode changes and approvals (`review::audit`), one row
//! each, filtered by kind.
//!
//! Who calls it: `crate::ui::draw` when the audit tab is shown (`a`); the app prepares it
//! ([`AuditState::prepare`]), cycles the kind filter (`t`, [`AuditState::cycle_kind`]) and asks
//! [`AuditState::selected_item`] where Enter jumps.
//!
//! Layout inside `area` (the caller draws the border): a summary line (the filter, and the
//! count per kind), then one row per entry: time, kinds, tool, status, what (the command's
//! first line, the URL or query, the path), notes; the selected entry's whole text under a rule
//! when the panel has room.
//!
//! Invariants: the list is built once the files panel's model is in (it gives the writes
//! outside the cwd; built in steps, `ui::files`), and again when the session has more calls
//! (at most once a second while live); only visible rows are built; untrusted text goes
//! through `render::text::visible`.

use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::render::text::visible;
use crate::review::audit::{Entry, Kind, audit};
use crate::review::files::Files;
use crate::session::Session;
use crate::theme::Theme;

/// View state of the audit panel: plain data (part of `ViewState`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AuditState {
    /// Selected row among the listed entries (clamped when prepared).
    pub selected: usize,
    pub offset: usize,
    /// Only entries of this kind (`None`: all).
    pub kind: Option<Kind>,
}

/// What the panel keeps between frames (owned by the app; safe to drop).
#[derive(Debug, Clone, Default)]
pub struct AuditCache {
    entries: Vec<Entry>,
    built: Option<(usize, Instant)>,
    /// The files model it needs (writes outside the cwd) is still being read.
    waiting: bool,
    /// Indices of the entries the filter lists, and the filter they are for (`listed_ok`).
    listed: Vec<usize>,
    listed_kind: Option<Kind>,
    listed_ok: bool,
}

const REBUILD_EVERY: Duration = Duration::from_secs(1);

/// Rows under the list for the selected entry's whole text.
fn footer_rows(area: Rect) -> u16 {
    if area.height >= 12 { 5 } else { 0 }
}

fn list_rows(area: Rect) -> usize {
    usize::from(area.height.saturating_sub(1 + footer_rows(area)))
}

impl AuditState {
    /// Brings the cache up to date (module docs) and keeps the selection in view.
    /// `files`: the files panel's model (`None` while it is being read: the panel says so).
    pub fn prepare(
        &mut self,
        cache: &mut AuditCache,
        files: Option<&Files>,
        session: &Session,
        area: Rect,
    ) {
        let stale = match cache.built {
            None => true,
            Some((n, at)) => n != session.invocations.len() && at.elapsed() >= REBUILD_EVERY,
        };
        cache.waiting = files.is_none();
        if let (true, Some(files)) = (stale, files) {
            cache.entries = audit(session, files);
            cache.built = Some((session.invocations.len(), Instant::now()));
            cache.listed_ok = false;
        }
        if !cache.listed_ok || cache.listed_kind != self.kind {
            cache.listed = (0..cache.entries.len())
                .filter(|&i| self.kind.is_none_or(|k| cache.entries[i].is(k)))
                .collect();
            cache.listed_kind = self.kind;
            cache.listed_ok = true;
        }
        let n = cache.listed.len();
        self.selected = self.selected.min(n.saturating_sub(1));
        let h = list_rows(area).max(1);
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + h {
            self.offset = self.selected + 1 - h;
        }
    }

    /// The next kind filter: all → shell → network → outside → permission → approval → all.
    pub fn cycle_kind(&mut self) {
        self.kind = match self.kind {
            None => Some(Kind::ALL[0]),
            Some(k) => Kind::ALL
                .iter()
                .position(|x| *x == k)
                .and_then(|i| Kind::ALL.get(i + 1).copied()),
        };
        self.selected = 0;
        self.offset = 0;
    }

    pub fn select_by(&mut self, cache: &AuditCache, delta: isize) {
        let last = cache.listed.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(delta).min(last);
    }

    fn selected_entry<'c>(&self, cache: &'c AuditCache) -> Option<&'c Entry> {
        cache
            .listed
            .get(self.selected)
            .and_then(|&i| cache.entries.get(i))
    }

    /// The feed row of the selected entry.
    pub fn selected_item(&self, cache: &AuditCache) -> Option<usize> {
        self.selected_entry(cache).map(|e| e.item)
    }

    /// The entry on screen row `row` of a panel drawn in `area` (mouse clicks).
    pub fn index_at(&self, cache: &AuditCache, area: Rect, row: u16) -> Option<usize> {
        let k = usize::from(row.checked_sub(area.y.checked_add(1)?)?);
        (k < list_rows(area) && self.offset + k < cache.listed.len()).then_some(self.offset + k)
    }
}

/// The audit panel.
#[derive(Debug, Clone, Copy)]
pub struct AuditView<'a> {
    theme: &'a Theme,
}

impl<'a> AuditView<'a> {
    pub fn new(theme: &'a Theme) -> Self {
        Self { theme }
    }

    fn row(self, e: &Entry, selected: bool) -> Line<'static> {
        let t = self.theme;
        let base = if selected { t.selected } else { t.text };
        let pick = |s| if selected { base } else { s };
        let kinds: Vec<&str> = e.kinds.iter().map(|k| k.as_str()).collect();
        let status = match e.status.as_str() {
            "ok" => t.status_ok,
            "error" | "timeout" => t.status_failed,
            "cancelled" => t.status_cancelled,
            _ => t.dim,
        };
        let mut spans = vec![
            Span::styled(if selected { "▶" } else { " " }, base),
            Span::styled(
                format!(
                    "{} ",
                    e.at.map_or_else(|| "--:--:--".to_owned(), crate::protocol::Timestamp::clock)
                ),
                pick(t.dim),
            ),
            Span::styled(crate::fmt::fit(&kinds.join(","), 13), pick(t.title)),
            Span::raw(" "),
            Span::styled(crate::fmt::fit(&visible(&e.tool), 10), base),
            Span::raw(" "),
            Span::styled(crate::fmt::fit(&visible(&e.status), 9), pick(status)),
            Span::raw(" "),
            Span::styled(visible(e.what.lines().next().unwrap_or("")), base),
        ];
        if !e.notes.is_empty() {
            spans.push(Span::styled(
                format!("  [{}]", visible(&e.notes.join("; "))),
                pick(t.dim),
            ));
        }
        Line::from(spans)
    }

    /// Draws the panel into `area` (module docs).
    pub fn render_with(
        &self,
        area: Rect,
        buf: &mut Buffer,
        state: &AuditState,
        cache: &AuditCache,
    ) {
        if area.height == 0 || area.width == 0 {
            return;
        }
        let t = self.theme;
        let counts: Vec<String> = Kind::ALL
            .iter()
            .map(|k| {
                let n = cache.entries.iter().filter(|e| e.is(*k)).count();
                format!("{} {n}", k.as_str())
            })
            .collect();
        let filter = match state.kind {
            None => format!("all {}", cache.entries.len()),
            Some(k) => format!(
                "only {} ({} of {})",
                k.as_str(),
                cache.listed.len(),
                cache.entries.len()
            ),
        };
        let summary = if cache.waiting && cache.built.is_none() {
            "reading the session's files…".to_owned()
        } else {
            format!("{filter} · {} · t: kind", counts.join(" · "))
        };
        buf.set_line(
            area.x,
            area.y,
            &Line::from(Span::styled(summary, t.title)),
            area.width,
        );
        if cache.listed.is_empty() {
            let why = if cache.entries.is_empty() {
                "no shell command, network access, outside write, permission change or approval in this session"
            } else {
                "no entry of this kind (t: the next kind)"
            };
            if area.height > 1 {
                buf.set_line(
                    area.x,
                    area.y + 1,
                    &Line::from(Span::styled(why, t.dim)),
                    area.width,
                );
            }
            return;
        }
        let h = list_rows(area);
        for (k, &i) in cache.listed.iter().skip(state.offset).take(h).enumerate() {
            let y = area.y + 1 + k as u16;
            let selected = state.offset + k == state.selected;
            if selected {
                buf.set_style(Rect::new(area.x, y, area.width, 1), t.selected);
            }
            if let Some(e) = cache.entries.get(i) {
                buf.set_line(area.x, y, &self.row(e, selected), area.width);
            }
        }
        let f = footer_rows(area);
        if f == 0 {
            return;
        }
        let y = area.y + area.height - f;
        let rule: String = std::iter::repeat_n('─', usize::from(area.width)).collect();
        buf.set_line(
            area.x,
            y,
            &Line::from(Span::styled(rule, t.border)),
            area.width,
        );
        if let Some(e) = state.selected_entry(cache) {
            let mut text = format!("L{} {}: {}", e.line, e.tool, e.what);
            if !e.notes.is_empty() {
                text.push('\n');
                text.push_str(&e.notes.join("; "));
            }
            let lines: Vec<Line<'static>> = text
                .lines()
                .map(|l| Line::from(Span::styled(visible(l), t.text)))
                .collect();
            let wrapped = crate::render::wrap::wrap_lines(&lines, area.width);
            for (k, l) in wrapped.iter().take(usize::from(f - 1)).enumerate() {
                buf.set_line(area.x, y + 1 + k as u16, l, area.width);
            }
        }
    }
}
