//! SGR (Select Graphic Rendition, ECMA-48 `CSI … m`) ↔ ratatui [`Style`].
//!
//! Who calls it: [`super::ansi`] (SGR parameters from untrusted text → `Style`) and
//! [`lines_to_ansi`] (our own `Line`s → SGR for `print --detail`).
//! Invariants: parsing only ever yields colours and modifiers (no other terminal state);
//! [`lines_to_ansi`] emits nothing but `ESC [ … m` around span contents, which the renderers have
//! already made free of control characters.

use std::fmt::Write as _;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

/// The 16 basic colours in SGR order (30–37, then 90–97).
const BASIC: [Color; 16] = [
    Color::Black,
    Color::Red,
    Color::Green,
    Color::Yellow,
    Color::Blue,
    Color::Magenta,
    Color::Cyan,
    Color::Gray,
    Color::DarkGray,
    Color::LightRed,
    Color::LightGreen,
    Color::LightYellow,
    Color::LightBlue,
    Color::LightMagenta,
    Color::LightCyan,
    Color::White,
];

/// Applies one SGR parameter list to `style`. Each item is a parameter with its `:` sub-parameters
/// (as `vte::Params` yields them). Unknown parameters are ignored; an empty list means reset.
pub fn apply_sgr(mut style: Style, params: &[&[u16]]) -> Style {
    if params.is_empty() {
        return Style::default();
    }
    let mut i = 0;
    while i < params.len() {
        let p = params[i];
        let code = p.first().copied().unwrap_or(0);
        match code {
            0 => style = Style::default(),
            1 => style = style.add_modifier(Modifier::BOLD),
            2 => style = style.add_modifier(Modifier::DIM),
            3 => style = style.add_modifier(Modifier::ITALIC),
            4 | 21 => style = style.add_modifier(Modifier::UNDERLINED),
            5 => style = style.add_modifier(Modifier::SLOW_BLINK),
            6 => style = style.add_modifier(Modifier::RAPID_BLINK),
            7 => style = style.add_modifier(Modifier::REVERSED),
            8 => style = style.add_modifier(Modifier::HIDDEN),
            9 => style = style.add_modifier(Modifier::CROSSED_OUT),
            22 => style = style.remove_modifier(Modifier::BOLD | Modifier::DIM),
            23 => style = style.remove_modifier(Modifier::ITALIC),
            24 => style = style.remove_modifier(Modifier::UNDERLINED),
            25 => style = style.remove_modifier(Modifier::SLOW_BLINK | Modifier::RAPID_BLINK),
            27 => style = style.remove_modifier(Modifier::REVERSED),
            28 => style = style.remove_modifier(Modifier::HIDDEN),
            29 => style = style.remove_modifier(Modifier::CROSSED_OUT),
            30..=37 => style.fg = Some(BASIC[usize::from(code - 30)]),
            39 => style.fg = Some(Color::Reset),
            40..=47 => style.bg = Some(BASIC[usize::from(code - 40)]),
            49 => style.bg = Some(Color::Reset),
            90..=97 => style.fg = Some(BASIC[usize::from(code - 90 + 8)]),
            100..=107 => style.bg = Some(BASIC[usize::from(code - 100 + 8)]),
            38 | 48 | 58 => {
                // Extended colour: either `38:5:n` / `38:2::r:g:b` (sub-parameters) or
                // `38;5;n` / `38;2;r;g;b` (following parameters).
                let (colour, used) = if p.len() > 1 {
                    (extended(&p[1..]), 0)
                } else {
                    let rest: Vec<u16> = params[i + 1..]
                        .iter()
                        .map(|q| q.first().copied().unwrap_or(0))
                        .take(4)
                        .collect();
                    let used = match rest.first() {
                        Some(5) => 2,
                        Some(2) => 4,
                        _ => 0,
                    };
                    (extended(&rest), used.min(rest.len()))
                };
                i += used;
                if let Some(c) = colour {
                    match code {
                        38 => style.fg = Some(c),
                        48 => style.bg = Some(c),
                        _ => style.underline_color = Some(c),
                    }
                }
            }
            59 => style.underline_color = None,
            _ => {}
        }
        i += 1;
    }
    style
}

/// `5;n` or `2;r;g;b` (also `2;space;r;g;b` from the colon form with a colour-space id).
fn extended(p: &[u16]) -> Option<Color> {
    let byte = |v: u16| u8::try_from(v).unwrap_or(u8::MAX);
    match p {
        [5, n, ..] => Some(Color::Indexed(byte(*n))),
        [2, _, r, g, b] | [2, r, g, b] => Some(Color::Rgb(byte(*r), byte(*g), byte(*b))),
        _ => None,
    }
}

/// SGR parameters for a colour (`fg` selects 3x/9x/38 vs 4x/10x/48).
fn colour_code(out: &mut String, c: Color, fg: bool) {
    let (base, bright, ext) = if fg { (30, 90, 38) } else { (40, 100, 48) };
    let idx = BASIC.iter().position(|b| *b == c);
    let _ = match (c, idx) {
        (Color::Reset, _) => write!(out, ";{}", base + 9),
        (_, Some(i)) if i < 8 => write!(out, ";{}", base + i),
        (_, Some(i)) => write!(out, ";{}", bright + i - 8),
        (Color::Indexed(n), _) => write!(out, ";{ext};5;{n}"),
        (Color::Rgb(r, g, b), _) => write!(out, ";{ext};2;{r};{g};{b}"),
        _ => Ok(()),
    };
}

/// `ESC[0;…m` for a style (always starting from a reset, so spans never inherit).
pub fn style_to_sgr(style: Style) -> String {
    let mut s = String::from("\x1b[0");
    let m = style.add_modifier;
    for (flag, code) in [
        (Modifier::BOLD, 1),
        (Modifier::DIM, 2),
        (Modifier::ITALIC, 3),
        (Modifier::UNDERLINED, 4),
        (Modifier::SLOW_BLINK, 5),
        (Modifier::RAPID_BLINK, 6),
        (Modifier::REVERSED, 7),
        (Modifier::HIDDEN, 8),
        (Modifier::CROSSED_OUT, 9),
    ] {
        if m.contains(flag) {
            let _ = write!(s, ";{code}");
        }
    }
    if let Some(c) = style.fg {
        colour_code(&mut s, c, true);
    }
    if let Some(c) = style.bg {
        colour_code(&mut s, c, false);
    }
    s.push('m');
    s
}

/// Our `Line`s as text with SGR styling, one `\n` per line; lines end with a reset when styled.
/// Span contents are written verbatim (renderers guarantee they hold no control characters).
pub fn lines_to_ansi(lines: &[Line<'_>]) -> String {
    let mut out = String::new();
    for line in lines {
        let mut styled = false;
        for span in &line.spans {
            let st = line.style.patch(span.style);
            if st == Style::default() {
                if styled {
                    out.push_str("\x1b[0m");
                    styled = false;
                }
            } else {
                out.push_str(&style_to_sgr(st));
                styled = true;
            }
            out.push_str(&span.content);
        }
        if styled {
            out.push_str("\x1b[0m");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_16_256_and_truecolour() {
        let s = apply_sgr(Style::default(), &[&[1], &[31]]);
        assert_eq!(s, Style::new().red().bold());
        let s = apply_sgr(
            Style::default(),
            &[&[38], &[5], &[208], &[48], &[2], &[1], &[2], &[3]],
        );
        assert_eq!(s.fg, Some(Color::Indexed(208)));
        assert_eq!(s.bg, Some(Color::Rgb(1, 2, 3)));
        let s = apply_sgr(Style::default(), &[&[38, 2, 0, 10, 20, 30]]);
        assert_eq!(s.fg, Some(Color::Rgb(10, 20, 30)));
        assert_eq!(apply_sgr(s, &[]), Style::default());
        assert!(
            !apply_sgr(Style::new().bold(), &[&[22]])
                .add_modifier
                .contains(Modifier::BOLD)
        );
    }

    #[test]
    fn round_trips_through_sgr() {
        let st = Style::new()
            .fg(Color::Rgb(1, 2, 3))
            .bg(Color::Green)
            .italic();
        assert_eq!(style_to_sgr(st), "\x1b[0;3;38;2;1;2;3;42m");
        let params: Vec<Vec<u16>> = style_to_sgr(st)[2..]
            .trim_end_matches('m')
            .split(';')
            .map(|p| vec![p.parse().unwrap()])
            .collect();
        let refs: Vec<&[u16]> = params.iter().map(Vec::as_slice).collect();
        assert_eq!(apply_sgr(Style::default(), &refs), st);
    }
}
