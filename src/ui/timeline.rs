//! The replay timeline bar: one row with play state, speed, time, a bar with the cursor and
//! markers for turns and errors, and the frame count.
//!
//! Who calls it: [`crate::ui::draw`], only in replay mode (`rawpv --replay FILE`), into the row
//! [`crate::ui::Areas::compute`] reserved (`Areas::timeline`). Pure: reads the [`Replay`] state at
//! the app's clock.
//! Layout: `▶ 2×  00:12/01:30 ━━━━●──┃──x── 42/120`; a cell covers an equal slice of the
//! compressed timeline (or of the frames when the session has no timestamps); an error marker
//! wins over a turn marker in the same cell; the cursor wins over both.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::replay::{MarkKind, Replay, ReplayState};
use crate::theme::Theme;

/// `mm:ss`, or `h:mm:ss` from an hour.
pub fn clock(ms: u64) -> String {
    let s = ms / 1000;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{:02}:{:02}", s / 60, s % 60)
    }
}

/// Speed as shown: `0.25×`, `1×`, `64×`.
pub fn speed_label(speed: f64) -> String {
    if speed.fract() == 0.0 {
        format!("{speed:.0}×")
    } else {
        format!("{speed}×")
    }
}

/// Builds the bar's line for `width` columns.
pub fn build_timeline_line(
    replay: &Replay,
    st: &ReplayState,
    theme: &Theme,
    width: u16,
) -> Line<'static> {
    let state = if st.playing { "▶ " } else { "⏸ " };
    let head = format!(
        "{state}{:<6}{}/{} ",
        speed_label(st.speed),
        clock(st.pos_ms),
        clock(st.total_ms)
    );
    let tail = format!(" {}/{}", st.cursor, st.len);
    let used = crate::fmt::width(&head) + crate::fmt::width(&tail);
    let bar_w = usize::from(width).saturating_sub(used);
    let mut spans = vec![Span::styled(head, theme.title)];
    if bar_w >= 3 {
        spans.extend(bar_spans(replay, st, theme, bar_w));
    }
    spans.push(Span::styled(tail, theme.dim));
    Line::from(spans)
}

/// Where on `[0, 1]` item `i` sits.
fn frac_of_item(replay: &Replay, st: &ReplayState, i: usize) -> f64 {
    if st.total_ms > 0 {
        replay.due(i).map_or(1.0, |d| d.as_millis() as f64) / st.total_ms as f64
    } else if st.len > 0 {
        i as f64 / st.len as f64
    } else {
        0.0
    }
}

fn bar_spans(replay: &Replay, st: &ReplayState, theme: &Theme, w: usize) -> Vec<Span<'static>> {
    let cell = |f: f64| ((f * w as f64) as usize).min(w - 1);
    let mut marks: Vec<Option<MarkKind>> = vec![None; w];
    for &(i, kind) in replay.marks() {
        let c = cell(frac_of_item(replay, st, i));
        marks[c] = match (marks[c], kind) {
            (Some(MarkKind::Error), _) | (_, MarkKind::Error) => Some(MarkKind::Error),
            (Some(MarkKind::Turn) | None, MarkKind::Turn) => Some(MarkKind::Turn),
        };
    }
    let cursor_frac = if st.total_ms > 0 {
        st.pos_ms as f64 / st.total_ms as f64
    } else if st.len > 0 {
        st.cursor as f64 / st.len as f64
    } else {
        0.0
    };
    let cur = cell(cursor_frac);
    (0..w)
        .map(|c| {
            if c == cur {
                return Span::styled("●", theme.hint);
            }
            let played = c < cur;
            match marks[c] {
                Some(MarkKind::Error) => Span::styled("x", theme.status_failed),
                Some(MarkKind::Turn) => Span::styled("┃", theme.prompt),
                None if played => Span::styled("━", theme.hint),
                None => Span::styled("─", theme.dim),
            }
        })
        .collect()
}

/// Draws the bar into `area` (its first row).
pub fn render_timeline(
    area: Rect,
    buf: &mut Buffer,
    replay: &Replay,
    st: &ReplayState,
    theme: &Theme,
) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    build_timeline_line(replay, st, theme, area.width).render(area, buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_and_speed_labels() {
        assert_eq!(clock(0), "00:00");
        assert_eq!(clock(61_500), "01:01");
        assert_eq!(clock(3_726_000), "1:02:06");
        assert_eq!(speed_label(1.0), "1×");
        assert_eq!(speed_label(0.25), "0.25×");
        assert_eq!(speed_label(64.0), "64×");
    }
}
