//! The session browser widget: a filter line, then one row per session (start time, agent,
//! project, size (from 100 columns), cost, first prompt), the selected row highlighted; an empty list says how to start.
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
    let filter = Line::from(vec![
        Span::styled("filter: ", theme.hint),
        Span::raw(crate::render::text::visible(&state.filter)),
        Span::styled("▏", theme.dim),
    ]);
    filter.render(Rect::new(inner.x, inner.y, inner.width, 1), buf);
    let list = Rect::new(
        inner.x,
        inner.y + 1,
        inner.width,
        inner.height.saturating_sub(1),
    );
    if state.entries.is_empty() {
        let lines: Vec<Line<'static>> = EMPTY_HINT
            .iter()
            .map(|l| Line::styled(*l, theme.dim))
            .collect();
        Paragraph::new(lines).render(list, buf);
        return;
    }
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
    let w = usize::from(list.width);
    // The project column: as wide as the widest project, from 8 columns up to a third of the
    // row (at least 24); a wider one keeps its tail.
    let project_w = state.project_cols.clamp(8, (w / 3).max(24));
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
        // Below 100 columns the size gives way to the prompt (the cost stays).
        let size = if w >= 100 {
            format!(" {:>9}", crate::fmt::bytes(e.size))
        } else {
            String::new()
        };
        let head = format!(
            "{}  {:<6} {}{size} {:>9}  ",
            when_label(e.started.map(|t| t.0)),
            e.agent.label(),
            project,
            crate::fmt::fit_right(&cost, 9),
        );
        let rest = w.saturating_sub(crate::fmt::width(&head));
        let mut line = Line::from(vec![
            Span::styled(head, theme.dim),
            Span::raw(crate::fmt::truncate(&prompt, rest)),
        ]);
        if offset + row == state.selected {
            line = line.style(theme.selected);
        }
        let y = list.y + row as u16;
        buf.set_style(Rect::new(list.x, y, list.width, 1), line.style);
        line.render(Rect::new(list.x, y, list.width, 1), buf);
    }
}
