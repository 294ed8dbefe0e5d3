//! The `?` help popup, generated from the keymap's descriptions (STYLE 4.9).
//!
//! Who calls it: [`crate::ui::draw`] when `view.help` is set. Invariant: every binding of the
//! keymap appears, in keymap order; nothing here names a key by hand.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};

use super::DrawCtx;

/// Builds the help lines: `keys  description`, keys padded to one column.
pub fn build_help_lines(ctx: &DrawCtx<'_>) -> Vec<Line<'static>> {
    let bindings = ctx.keymap.bindings();
    let key_w = bindings
        .iter()
        .map(|b| crate::fmt::width(&b.keys_label()))
        .max()
        .unwrap_or(0);
    let lines: Vec<Line<'static>> = bindings
        .iter()
        .map(|b| {
            Line::from(vec![
                Span::styled(crate::fmt::fit(&b.keys_label(), key_w + 2), ctx.theme.hint),
                Span::raw(b.desc),
            ])
        })
        .collect();
    lines
}

/// The line under the key list.
pub const HELP_FOOTER: &str =
    "mouse: wheel scrolls the pane under the pointer, click selects a row (on ▸/▾: folds)";

/// Draws the popup centred over `area`; in two columns when one does not fit the height.
pub fn render_help(area: Rect, buf: &mut Buffer, ctx: &DrawCtx<'_>) {
    let lines = build_help_lines(ctx);
    let col_w = lines.iter().map(Line::width).max().unwrap_or(20) as u16;
    // Rows: borders (2), keys, a blank line and the footer (2).
    let two = lines.len() as u16 + 4 > area.height;
    let per_col = if two {
        lines.len().div_ceil(2)
    } else {
        lines.len()
    };
    let want_w =
        if two { col_w * 2 + 5 } else { col_w + 4 }.max(crate::fmt::width(HELP_FOOTER) as u16 + 4);
    let want_h = per_col as u16 + 4;
    let [_, mid, _] = Layout::vertical([
        Constraint::Fill(1),
        Constraint::Length(want_h.min(area.height)),
        Constraint::Fill(1),
    ])
    .areas(area);
    let [_, popup, _] = Layout::horizontal([
        Constraint::Fill(1),
        Constraint::Length(want_w.min(area.width)),
        Constraint::Fill(1),
    ])
    .areas(mid);
    Clear.render(popup, buf);
    let block = ratatui::widgets::Block::bordered()
        .border_style(ctx.theme.border_focused)
        .title(" Keys (? or Esc closes) ");
    let inner = block.inner(popup);
    block.render(popup, buf);
    let rows = usize::from(inner.height);
    for (k, line) in lines.iter().enumerate() {
        let (col, row) = (k / per_col, k % per_col);
        if row >= rows {
            continue;
        }
        let x = inner.x + 1 + col as u16 * (col_w + 2);
        let max = (inner.x + inner.width).saturating_sub(x);
        buf.set_line(x, inner.y + row as u16, line, max);
    }
    if rows > per_col + 1 {
        let footer = Span::styled(HELP_FOOTER, ctx.theme.dim);
        buf.set_span(
            inner.x + 1,
            inner.y + per_col as u16 + 1,
            &footer,
            inner.width.saturating_sub(1),
        );
    }
}
