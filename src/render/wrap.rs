//! Wrapping rendered lines at a column width (unicode-width aware), so the detail pane can slice
//! `lines[scroll..scroll + height]` without asking ratatui to wrap.
//!
//! Who calls it: [`super::cache`] when filling an entry, `print --detail`.
//! Invariants: wrapping only splits spans (styles kept, text unchanged and in order); rows
//! break after the last space that fits (word wrap), else at the width; every output line is at
//! most `width` columns wide unless a single character is wider than `width`;
//! zero-width characters stay with the character before them. `width == 0` is treated as 1.

use ratatui::style::Style;
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
    // One cell per char: (char, style, columns). Rows break after the last space that fits
    // (word wrap); a word longer than the row is cut at the width (hard wrap).
    let cells: Vec<(char, Style, usize)> = line
        .spans
        .iter()
        .flat_map(|s| {
            let style = line.style.patch(s.style);
            s.content
                .chars()
                .map(move |c| (c, style, c.width().unwrap_or(0)))
        })
        .collect();
    let mut rows = Vec::new();
    let (mut start, mut col, mut i) = (0usize, 0usize, 0usize);
    let mut brk: Option<usize> = None;
    while i < cells.len() {
        let (c, _, cw) = cells[i];
        if cw > 0 && col + cw > w && i > start {
            let end = brk.filter(|&b| b > start).unwrap_or(i);
            rows.push(build_row(&cells[start..end]));
            start = end;
            col = cells[start..i].iter().map(|x| x.2).sum();
            brk = cells[start..i]
                .iter()
                .rposition(|x| x.0 == ' ')
                .map(|k| start + k + 1);
            continue;
        }
        col += cw;
        if c == ' ' {
            brk = Some(i + 1);
        }
        i += 1;
    }
    rows.push(build_row(&cells[start..]));
    rows
}

/// Groups consecutive cells of one style into spans.
fn build_row(cells: &[(char, Style, usize)]) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut run = String::new();
    let mut style = cells.first().map(|c| c.1).unwrap_or_default();
    for &(c, st, _) in cells {
        if st != style && !run.is_empty() {
            spans.push(Span::styled(std::mem::take(&mut run), style));
        }
        style = st;
        run.push(c);
    }
    if !run.is_empty() {
        spans.push(Span::styled(run, style));
    }
    Line::from(spans)
}

/// [`wrap_line`] at `width` columns (saturating), each row keeping the line's own style too:
/// how the detail pipeline wraps, for the viewer and `print --detail` alike.
pub fn wrap_line_styled(line: &Line<'static>, width: usize) -> Vec<Line<'static>> {
    let width = u16::try_from(width).unwrap_or(u16::MAX);
    wrap_line(line, width)
        .into_iter()
        .map(|row| row.style(line.style))
        .collect()
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
    // The line's own style stays too: a pane tints the rest of the row with its background
    // (an added or removed diff line, `crate::ui::detail`).
    .style(line.style)
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
    fn breaks_after_the_last_space_that_fits() {
        let l = Line::from(vec!["the quick ".into(), "brown".red(), " fox".into()]);
        let texts: Vec<String> = wrap_line(&l, 12)
            .iter()
            .map(|r| r.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert_eq!(texts, ["the quick ", "brown fox"]);
        // A word longer than the row is cut at the width.
        let texts: Vec<String> = wrap_line(&Line::from("a abcdefgh"), 4)
            .iter()
            .map(|r| r.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert_eq!(texts, ["a ", "abcd", "efgh"]);
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
