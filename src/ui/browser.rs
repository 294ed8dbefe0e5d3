//! The session browser widget: a filter line, then one row per session, the selected row
//! highlighted; an empty list says how to start. From the library index (issue 27): last
//! activity, a live mark (`●`), agent, project (the session's `cwd`), calls, errors, tokens
//! (from 100 columns), cost and title, and a status line (indexing progress, keys); `/` lists
//! full-text hits instead (time, project, tool, the snippet with its matches highlighted).
//! Without the index: start time, agent, project, size (from 100 columns), cost, first prompt.
//!
//! This list is the one session-list component: the hub view's sessions list (issue 24) draws
//! the same [`Browser`] state with [`render_browser`].
//!
//! Who calls it: the browser screen (`rawpv` with no input on a terminal) and tests on
//! `TestBackend`. Pure: draws [`Browser`] state; only the visible rows are built. Untrusted text
//! (prompts, paths) goes through `render::text::visible` / `render::ansi::visible_plain` (escapes
//! dropped, never obeyed) so it cannot reach the terminal as control sequences.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget};

use crate::browse::Browser;
use crate::theme::Theme;

/// What the empty list says.
pub const EMPTY_HINT: &[&str] = &[
    "No sessions found under ~/.claude/projects, ~/.codex/sessions or ~/.gemini/tmp",
    "(or the config's browser.dirs).",
    "Open a file with `rawpv FILE`, pipe frames with `producer | rawpv`,",
    "or try the built-in demo: `rawpv demo`.",
];

fn when_label(ms: Option<i64>) -> String {
    ms.and_then(chrono::DateTime::from_timestamp_millis)
        .map_or_else(
            || "—".repeat(16),
            |t| t.format("%Y-%m-%d %H:%M").to_string(),
        )
}

/// Draws the browser into `area`; `state.offset` is adjusted by the caller's `prepare`, here the
/// selection is only scrolled into view for this draw.
pub fn render_browser(area: Rect, buf: &mut Buffer, state: &Browser, theme: &Theme) {
    let title = format!(" Sessions {}/{} ", state.visible.len(), state.entries.len());
    let block = Block::bordered()
        .border_style(theme.border(true))
        .title(Span::styled(title, theme.title));
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.height == 0 {
        return;
    }
    let indexed = state.entries.iter().any(|e| e.facts.is_some()) || state.status.is_some();
    let top = match &state.search {
        Some(sv) => Line::from(vec![
            Span::styled("search: ", theme.hint),
            Span::raw(crate::render::text::visible(&sv.query)),
            Span::styled(if sv.editing { "▏" } else { "" }, theme.dim),
            Span::styled(
                if sv.editing {
                    String::new()
                } else if sv.pending.is_some() {
                    "  searching…".to_owned()
                } else {
                    format!(
                        "  {}",
                        sv.message
                            .clone()
                            .unwrap_or_else(|| crate::fmt::plural(sv.hits.len(), "hit"))
                    )
                },
                theme.dim,
            ),
        ]),
        None => Line::from(vec![
            Span::styled("filter: ", theme.hint),
            Span::raw(crate::render::text::visible(&state.filter)),
            Span::styled("▏", theme.dim),
        ]),
    };
    top.render(Rect::new(inner.x, inner.y, inner.width, 1), buf);
    // The status line: indexing progress and the keys (index mode).
    let status_h = u16::from((indexed || state.notice.is_some()) && inner.height > 2);
    if status_h == 1 {
        let keys = if state.search.is_some() {
            "Enter open at the match · Esc back"
        } else {
            "/ search all sessions · Enter open · Esc quit"
        };
        let text = [state.notice.as_deref(), state.status.as_deref(), Some(keys)]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" · ");
        Line::styled(
            crate::fmt::truncate(&text, usize::from(inner.width)),
            theme.dim,
        )
        .render(
            Rect::new(inner.x, inner.y + inner.height - 1, inner.width, 1),
            buf,
        );
    }
    let list = Rect::new(
        inner.x,
        inner.y + 1,
        inner.width,
        inner.height.saturating_sub(1 + status_h),
    );
    if let Some(sv) = &state.search {
        render_hits(list, buf, state, sv, theme);
        return;
    }
    if state.entries.is_empty() {
        let lines: Vec<Line<'static>> = EMPTY_HINT
            .iter()
            .map(|l| Line::styled(*l, theme.dim))
            .collect();
        Paragraph::new(lines).render(list, buf);
        return;
    }
    let w = usize::from(list.width);
    // The project column: as wide as the widest project, from 8 columns up to a third of the
    // row (at least 24); a wider one keeps its tail. From the index, below 100 columns: a
    // short date, a narrower project, no tokens; no cost column while none is known.
    let project_w = state.project_cols.clamp(8, (w / 3).max(24));
    let narrow = w < 100;
    let cols = Columns {
        when_w: if narrow { 11 } else { 16 },
        project_w: if narrow {
            state.project_cols.clamp(8, (w / 5).max(16))
        } else {
            project_w
        },
        tokens: !narrow,
        cost: !(state.costs_done && state.costs.is_empty()),
    };
    // The column names over the rows, when there is room for a row under them.
    let by_index = state.entries.iter().any(|e| e.facts.is_some());
    let list = if list.height >= 3 {
        let head = if by_index {
            cols.index_head()
        } else {
            file_head(project_w, !narrow)
        };
        Line::styled(crate::fmt::truncate(&head, w), theme.hint)
            .render(Rect::new(list.x, list.y, list.width, 1), buf);
        Rect::new(list.x, list.y + 1, list.width, list.height - 1)
    } else {
        list
    };
    let h = usize::from(list.height);
    if h == 0 {
        return;
    }
    let offset = if state.selected < state.offset {
        state.selected
    } else if state.selected >= state.offset + h {
        state.selected + 1 - h
    } else {
        state.offset
    };
    for (row, &i) in state.visible.iter().skip(offset).take(h).enumerate() {
        let Some(e) = state.entries.get(i) else {
            continue;
        };
        let project = crate::fmt::fit_path(&state.project(e), project_w);
        let prompt =
            crate::render::ansi::visible_plain(e.first_prompt.as_deref().unwrap_or("(no prompt)"));
        // The session's cost: `…` until it is known, blank without usage rows.
        let cost = match state.costs.get(&e.path) {
            Some(c) => c.label(),
            None if state.costs_done => String::new(),
            None => "…".to_owned(),
        };
        if e.facts.is_some() || by_index {
            // The index's columns. A session the index does not hold yet (a cold index is
            // under way) shows its start time and `…` for what indexing will tell (it was drawn
            // in the file list's columns, out of line with the rows around it).
            let facts = e.facts.as_deref();
            let when = facts
                .and_then(|f| f.last_ts)
                .or_else(|| e.started.map(|t| t.0));
            let when = if narrow {
                when.and_then(chrono::DateTime::from_timestamp_millis)
                    .map_or_else(|| "—".repeat(11), |t| t.format("%m-%d %H:%M").to_string())
            } else {
                when_label(when)
            };
            let project = crate::fmt::fit_path(&state.project(e), cols.project_w);
            let cost = if cols.cost {
                format!(" {:>8}", crate::fmt::fit_right(&cost, 8))
            } else {
                String::new()
            };
            let mark = if facts.is_some() && state.is_live(e) {
                "●"
            } else {
                " "
            };
            // Below 100 columns the tokens give way to the title (calls, errors, cost stay).
            let tokens = if cols.tokens {
                let n = facts.map_or_else(String::new, |f| {
                    let sum = [f.tokens_out, f.tokens_cache_read, f.tokens_cache_write]
                        .into_iter()
                        .fold(f.tokens_in, u64::saturating_add);
                    crate::ui::status_bar::short_count(sum)
                });
                format!(" {n:>7}")
            } else {
                String::new()
            };
            let (calls, arrow, errors) = match facts {
                Some(f) if f.errors > 0 => (f.calls.to_string(), "↳", format!("{:>3}✗", f.errors)),
                Some(f) => (f.calls.to_string(), "↳", "    ".to_owned()),
                None => ("…".to_owned(), " ", "    ".to_owned()),
            };
            let head = format!(
                "{when} {mark} {:<6} {project} {calls:>4}{arrow}{errors}{tokens}{cost}  ",
                e.agent.label(),
            );
            session_row(
                buf,
                list,
                row,
                head,
                &prompt,
                offset + row == state.selected,
                theme,
            );
            continue;
        }
        // Below 100 columns the size gives way to the prompt (the cost stays).
        let size = if narrow {
            String::new()
        } else {
            format!(" {:>9}", crate::fmt::bytes(e.size))
        };
        let head = format!(
            "{}  {:<6} {}{size} {:>9}  ",
            when_label(e.started.map(|t| t.0)),
            e.agent.label(),
            project,
            crate::fmt::fit_right(&cost, 9),
        );
        session_row(
            buf,
            list,
            row,
            head,
            &prompt,
            offset + row == state.selected,
            theme,
        );
    }
}

/// The widths of the session rows drawn from the index (`render_browser`).
struct Columns {
    when_w: usize,
    project_w: usize,
    tokens: bool,
    cost: bool,
}

impl Columns {
    /// The names over the index's rows, each as wide as its column: `when mark agent project
    /// calls↳ errors✗ tokens cost  title`.
    fn index_head(&self) -> String {
        let tokens = if self.tokens {
            format!(" {:>7}", "tokens")
        } else {
            String::new()
        };
        let cost = if self.cost {
            format!(" {:>8}", "cost")
        } else {
            String::new()
        };
        format!(
            "{:<ww$}   {:<6} {:<pw$} {:>5}{:>4}{tokens}{cost}  title",
            if self.when_w >= 13 {
                "last activity"
            } else {
                "last active"
            },
            "agent",
            "project",
            "calls",
            "err",
            ww = self.when_w,
            pw = self.project_w,
        )
    }
}

/// The names over the rows of a file scan (no index): `started agent project size cost
/// first prompt`.
fn file_head(project_w: usize, size: bool) -> String {
    let size = if size {
        format!(" {:>9}", "size")
    } else {
        String::new()
    };
    format!(
        "{:<16}  {:<6} {:<project_w$}{size} {:>9}  first prompt",
        "started", "agent", "project", "cost"
    )
}

/// One session row at `row` of `list`: the dim `head` (time, agent, project, figures) and the
/// title cut to the rest of the width; the whole row in the selection style when `selected`.
fn session_row(
    buf: &mut Buffer,
    list: Rect,
    row: usize,
    head: String,
    title: &str,
    selected: bool,
    theme: &Theme,
) {
    let rest = usize::from(list.width).saturating_sub(crate::fmt::width(&head));
    let mut line = Line::from(vec![
        Span::styled(head, theme.dim),
        Span::raw(crate::fmt::truncate(title, rest)),
    ]);
    if selected {
        line = line.style(theme.selected);
    }
    let area = Rect::new(list.x, list.y + row as u16, list.width, 1);
    buf.set_style(area, line.style);
    line.render(area, buf);
}

/// The hits of the browser's full-text search, one line each: time, project, tool (or the
/// message's kind) and the snippet with its matches in the search style.
fn render_hits(
    list: Rect,
    buf: &mut Buffer,
    state: &Browser,
    sv: &crate::browse::SearchView,
    theme: &Theme,
) {
    let h = usize::from(list.height);
    if h == 0 {
        return;
    }
    let offset = sv.selected.saturating_sub(h - 1);
    let w = usize::from(list.width);
    let project_w = state.project_cols.clamp(8, (w / 4).max(16));
    let projects: std::collections::HashMap<&std::path::Path, &crate::browse::SessionEntry> = state
        .entries
        .iter()
        .map(|e| (e.path.as_path(), e))
        .collect();
    for (row, hit) in sv.hits.iter().enumerate().skip(offset).take(h) {
        let project = projects
            .get(hit.path.as_path())
            .map_or_else(|| hit.path.display().to_string(), |e| state.project(e));
        let what = if hit.tool.is_empty() {
            &hit.kind
        } else {
            &hit.tool
        };
        let head = format!(
            "{}  {}  {}  ",
            when_label(hit.ts),
            crate::fmt::fit_path(&project, project_w),
            crate::fmt::fit(&crate::render::ansi::visible_plain(what), 10),
        );
        let mut rest = w.saturating_sub(crate::fmt::width(&head));
        let mut spans = vec![Span::styled(head, theme.dim)];
        // The snippet is already one visible line (`library::search::snippet`); in a narrow
        // row it starts closer to its first match, so the match stays in sight.
        let (snippet, marks) = closer(&hit.snippet, &hit.marks, rest / 4);
        let mut at = 0;
        let mut pieces: Vec<(&str, bool)> = Vec::new();
        for &(a, b) in &marks {
            if a < at || b > snippet.len() {
                continue;
            }
            pieces.push((&snippet[at..a], false));
            pieces.push((&snippet[a..b], true));
            at = b;
        }
        pieces.push((&snippet[at..], false));
        for (text, mark) in pieces {
            if rest == 0 {
                break;
            }
            let t = crate::fmt::truncate(text, rest);
            rest = rest.saturating_sub(crate::fmt::width(&t));
            spans.push(if mark {
                Span::styled(t, theme.search_match)
            } else {
                Span::raw(t)
            });
        }
        let mut line = Line::from(spans);
        if row == sv.selected {
            line = line.style(theme.selected);
        }
        let y = list.y + (row - offset) as u16;
        buf.set_style(Rect::new(list.x, y, list.width, 1), line.style);
        line.render(Rect::new(list.x, y, list.width, 1), buf);
    }
}

/// `snippet` cut to start at most `before` characters before its first mark (an ellipsis in
/// front when cut), the marks moved with it.
fn closer(snippet: &str, marks: &[(usize, usize)], before: usize) -> (String, Vec<(usize, usize)>) {
    let Some(&(first, _)) = marks.first() else {
        return (snippet.to_owned(), marks.to_vec());
    };
    let head = snippet.get(..first).unwrap_or("");
    let n = head.chars().count();
    if n <= before.max(1) {
        return (snippet.to_owned(), marks.to_vec());
    }
    let cut = head
        .char_indices()
        .nth(n - before.max(1) + 1)
        .map_or(first, |(i, _)| i);
    let out = format!("…{}", &snippet[cut..]);
    let shift = |x: usize| x - cut + '…'.len_utf8();
    let moved = marks
        .iter()
        .filter(|m| m.0 >= cut)
        .map(|&(a, b)| (shift(a), shift(b)))
        .collect();
    (out, moved)
}
