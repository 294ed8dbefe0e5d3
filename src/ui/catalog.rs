//! Tool catalog panel (placeholder until the check helper's widget lands; theirs wins on merge).
//!
//! Who calls it: [`crate::ui::draw`] when the catalog tab is shown (`c`). Interface the viewer
//! relies on: `render_catalog(area, buf, &Session, &Theme, scroll)`; draws inside `area` (no
//! border) and only the visible lines.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::render::text::visible;
use crate::session::Session;
use crate::theme::Theme;

/// Draws the latest published catalog: one line per tool.
pub fn render_catalog(
    area: Rect,
    buf: &mut Buffer,
    session: &Session,
    theme: &Theme,
    scroll: usize,
) {
    let Some(cat) = session.catalog() else {
        buf.set_span(
            area.x,
            area.y,
            &Span::styled("no tool.catalog.publish received", theme.dim),
            area.width,
        );
        return;
    };
    for (k, t) in cat
        .tools
        .iter()
        .skip(scroll)
        .take(usize::from(area.height))
        .enumerate()
    {
        let line = Line::from(vec![
            Span::styled(format!("{:<16}", visible(&t.name)), theme.title),
            Span::styled(t.effective_status().as_str().to_owned(), theme.dim),
            Span::raw(" "),
            Span::raw(visible(t.description.as_deref().unwrap_or(""))),
        ]);
        buf.set_line(area.x, area.y + k as u16, &line, area.width);
    }
}
