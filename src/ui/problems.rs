//! Problems panel (placeholder until the check helper's widget lands; theirs wins on merge).
//!
//! Who calls it: [`crate::ui::draw`] when the problems tab is shown (`!`). Interface the viewer
//! relies on: `render_problems(area, buf, &Session, &Theme, scroll)`; draws inside `area` (no
//! border) and only the visible lines.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::finding::Level;
use crate::session::Session;
use crate::theme::Theme;

/// Draws the findings, one per line.
pub fn render_problems(
    area: Rect,
    buf: &mut Buffer,
    session: &Session,
    theme: &Theme,
    scroll: usize,
) {
    if session.findings.is_empty() {
        buf.set_span(
            area.x,
            area.y,
            &Span::styled("no findings", theme.dim),
            area.width,
        );
        return;
    }
    for (k, f) in session
        .findings
        .iter()
        .skip(scroll)
        .take(usize::from(area.height))
        .enumerate()
    {
        let style = match f.level {
            Level::Error => theme.finding_error,
            Level::Warning => theme.finding_warning,
            Level::Info => theme.finding_info,
        };
        let line = Line::from(vec![
            Span::styled(format!("{:<7} ", f.level.as_str()), style),
            Span::styled(format!("line {:<5} ", f.line), theme.dim),
            Span::raw(format!("{} {} ({})", f.code, f.message, f.spec)),
        ]);
        buf.set_line(area.x, area.y + k as u16, &line, area.width);
    }
}
