//! The `?` help popup, generated from the keymap's descriptions (STYLE 4.9).
//!
//! Who calls it: [`crate::ui::draw`] when `view.help` is set. Invariant: every binding of the
//! keymap appears, in keymap order; nothing here names a key by hand.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};

use crate::app::App;

/// Builds the help lines: `keys  description`, keys padded to one column.
pub fn build_help_lines(app: &App) -> Vec<Line<'static>> {
    let bindings = app.keymap.bindings();
    let key_w = bindings
        .iter()
        .map(|b| super::width_of(&b.keys_label()))
        .max()
        .unwrap_or(0);
    let mut lines: Vec<Line<'static>> = bindings
        .iter()
        .map(|b| {
            Line::from(vec![
                Span::styled(super::fit(&b.keys_label(), key_w + 2), app.theme.hint),
                Span::raw(b.desc),
            ])
        })
        .collect();
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        "mouse: wheel scrolls the pane under the pointer, click selects a row",
        app.theme.dim,
    )));
    lines
}

/// Draws the popup centred over `area`.
pub fn render_help(area: Rect, buf: &mut Buffer, app: &App) {
    let lines = build_help_lines(app);
    let want_w = lines.iter().map(Line::width).max().unwrap_or(20) as u16 + 4;
    let want_h = lines.len() as u16 + 2;
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
        .border_style(app.theme.border_focused)
        .title(" Keys (? or Esc closes) ");
    let inner = block.inner(popup);
    block.render(popup, buf);
    for (k, line) in lines.iter().take(usize::from(inner.height)).enumerate() {
        buf.set_line(
            inner.x + 1,
            inner.y + k as u16,
            line,
            inner.width.saturating_sub(1),
        );
    }
}
