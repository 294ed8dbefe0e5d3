//! Wrapping rendered lines at a column width (unicode-width aware), so the detail pane can slice
//! `lines[scroll..scroll + height]` without asking ratatui to wrap.
//!
//! Who calls it: [`super::cache`] when filling an entry, `print --detail`.
//! Invariants: wrapping only splits spans (styles kept, text unchanged and in order); every output
//! line is at most `width` columns wide unless a single character is wider than `width`;
//! zero-width characters stay with the character before them. `width == 0` is treated as 1.

use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// Width of a line in columns.
pub fn line_width(line: &Line<'_>) -> usize {
    line.spans
        .iter()
        .map(|s| unicode_width::UnicodeWidthStr::width(s.content.as_ref()))
        .sum()
}

/// Rows a line takes when wrapped at `width` (at least 1).
pub fn line_height(line: &Line<'_>, width: u16) -> usize {
    let w = usize::from(width.max(1));
    let lw = line_width(line);
    if lw <= w {
        1
    } else {
        wrap_line(line, width).len()
    }
}

/// Splits one line into rows of at most `width` columns.
pub fn wrap_line(line: &Line<'_>, width: u16) -> Vec<Line<'static>> {
    let w = usize::from(width.max(1));
    if line_width(line) <= w {
        return vec![to_owned_line(line)];
    }
    let mut rows: Vec<Line<'static>> = Vec::new();
    let mut row: Vec<Span<'static>> = Vec::new();
    let mut col = 0usize;
    for span in &line.spans {
        let style = line.style.patch(span.style);
        let mut run = String::new();
        for c in span.content.chars() {
            let cw = c.width().unwrap_or(0);
            if cw > 0 && col + cw > w && col > 0 {
                if !run.is_empty() {
                    row.push(Span::styled(std::mem::take(&mut run), style));
                }
                rows.push(Line::from(std::mem::take(&mut row)));
                col = 0;
            }
            run.push(c);
            col += cw;
        }
        if !run.is_empty() {
            row.push(Span::styled(run, style));
        }
    }
    if !row.is_empty() || rows.is_empty() {
        rows.push(Line::from(row));
    }
    rows
}

/// Wraps every line at `width`.
pub fn wrap_lines(lines: &[Line<'_>], width: u16) -> Vec<Line<'static>> {
    let mut out = Vec::with_capacity(lines.len());
    for l in lines {
        out.extend(wrap_line(l, width));
    }
    out
}

/// Total rows of `lines` wrapped at `width`, without building them.
pub fn wrapped_height(lines: &[Line<'_>], width: u16) -> usize {
    lines.iter().map(|l| line_height(l, width)).sum()
}

fn to_owned_line(line: &Line<'_>) -> Line<'static> {
    Line::from(
        line.spans
            .iter()
            .map(|s| Span::styled(s.content.to_string(), line.style.patch(s.style)))
            .collect::<Vec<_>>(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Stylize;

    #[test]
    fn splits_at_width_keeping_styles() {
        let l = Line::from(vec!["abc".red(), "defg".into()]);
        let rows = wrap_line(&l, 3);
        let texts: Vec<String> = rows
            .iter()
            .map(|r| r.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert_eq!(texts, ["abc", "def", "g"]);
        assert_eq!(rows[0].spans[0].style, ratatui::style::Style::new().red());
        assert_eq!(wrapped_height(&[l], 3), 3);
    }

    #[test]
    fn wide_chars_do_not_split() {
        let l = Line::from("a漢字b");
        let rows = wrap_line(&l, 4);
        assert_eq!(rows.len(), 2);
        assert_eq!(line_width(&rows[0]), 3);
        assert_eq!(wrap_line(&Line::from(""), 5).len(), 1);
    }
}
