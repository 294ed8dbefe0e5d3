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

/// The lines under the key list: what Enter does in each pane, and the mouse.
pub const HELP_FOOTER: &[&str] = &[
    "Enter: in the feed opens the row; in the catalog (c) filters by the tool;",
    "in problems (!) jumps to the finding's row; in files (d) and audit (a) to",
    "the call. Esc or the panel's key hands keys back.",
    "mouse: wheel scrolls the pane under it; click selects a row (▸/▾: folds)",
];

/// Where the help popup goes on a screen `area` and how it scrolls: a pure function of the
/// keymap and the area, so the keys (`j`/`k`, `G`) clamp the scroll to what the draw shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HelpLayout {
    pub popup: Rect,
    /// Key lines per column (all of them in one column).
    pub per_col: usize,
    /// Columns of the widest key line.
    pub col_w: u16,
    /// Rows of the scrolled list: a column's key lines, a blank line and the footer.
    pub rows_total: usize,
    /// Rows the popup shows of it.
    pub inner_h: usize,
}

impl HelpLayout {
    pub fn of(keymap: &crate::keymap::Keymap, area: Rect) -> Self {
        let bindings = keymap.bindings();
        let key_w = bindings
            .iter()
            .map(|b| crate::fmt::width(&b.keys_label()))
            .max()
            .unwrap_or(0);
        let n = bindings.len();
        let col_w = bindings
            .iter()
            .map(|b| key_w + 2 + crate::fmt::width(b.desc))
            .max()
            .unwrap_or(20) as u16;
        let footer_w = HELP_FOOTER
            .iter()
            .map(|l| crate::fmt::width(l))
            .max()
            .unwrap_or(0) as u16;
        let foot_h = HELP_FOOTER.len() as u16 + 1;
        // Rows: borders (2), keys, a blank line and the footer.
        let one_h = n as u16 + foot_h + 2;
        let two_w = (col_w * 2 + 5).max(footer_w + 4);
        let two_h = n.div_ceil(2) as u16 + foot_h + 2;
        let two = one_h > area.height && two_w <= area.width && two_h <= area.height;
        let (per_col, want_w, want_h) = if two {
            (n.div_ceil(2), two_w, two_h)
        } else {
            (n, (col_w + 4).max(footer_w + 4), one_h)
        };
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
        Self {
            popup,
            per_col,
            col_w,
            rows_total: per_col + usize::from(foot_h),
            inner_h: usize::from(popup.height.saturating_sub(2)),
        }
    }

    /// The largest useful scroll: the last rows just shown.
    pub fn scroll_limit(&self) -> usize {
        self.rows_total.saturating_sub(self.inner_h)
    }
}

/// Draws the popup centred over `area`: in two columns when one does not fit the height and
/// two fit the width, else in one column that scrolls (`view.help_scroll`; j/k, PgDn/PgUp) and
/// says how much is above and below in its border. Fits any size from 80x24 up.
pub fn render_help(area: Rect, buf: &mut Buffer, ctx: &DrawCtx<'_>) {
    let keys = build_help_lines(ctx);
    let HelpLayout {
        popup,
        per_col,
        col_w,
        rows_total,
        inner_h,
    } = HelpLayout::of(ctx.keymap, area);
    Clear.render(popup, buf);
    // One column: keys, a blank line and the footer as one list, scrolled.
    let lines: Vec<(u16, Line<'static>)> = keys
        .into_iter()
        .enumerate()
        .map(|(k, line)| ((k / per_col) as u16, line))
        .collect();
    let scroll = ctx.view.help_scroll.min(rows_total.saturating_sub(inner_h));
    let below = rows_total.saturating_sub(scroll + inner_h);
    let mut block = ratatui::widgets::Block::bordered()
        .border_style(ctx.theme.border_focused)
        .title(" Keys (? or Esc closes) ");
    if scroll > 0 || below > 0 {
        block = block.title_bottom(Line::from(format!(
            " {scroll} above · {below} below (j/k scroll) "
        )));
    }
    let inner = block.inner(popup);
    block.render(popup, buf);
    let y_of = |row: usize| -> Option<u16> {
        let r = row.checked_sub(scroll)?;
        (r < usize::from(inner.height)).then(|| inner.y + r as u16)
    };
    for (k, (col, line)) in lines.iter().enumerate() {
        let Some(y) = y_of(k % per_col) else {
            continue;
        };
        let x = inner.x + 1 + col * (col_w + 2);
        let max = (inner.x + inner.width).saturating_sub(x);
        buf.set_line(x, y, line, max);
    }
    for (i, text) in HELP_FOOTER.iter().enumerate() {
        if let Some(y) = y_of(per_col + 1 + i) {
            let footer = Span::styled(*text, ctx.theme.dim);
            buf.set_span(inner.x + 1, y, &footer, inner.width.saturating_sub(1));
        }
    }
}
