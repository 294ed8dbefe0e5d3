//! Theme: semantic style roles (STYLE 4.9), shared by renderers and widgets.
//!
//! Who uses it: `crate::render` (diff colours, dim text), `crate::detail` (headers) and `crate::ui`
//! (borders, badges).
//! Invariant: no code outside this file hard-codes colours; `NO_COLOR` (or `--color never`) gives
//! [`Theme::mono`], which uses modifiers only.

use ratatui::style::{Color, Modifier, Style};

use crate::session::CallStatus;

/// Semantic roles. `Copy` so render jobs can take one by value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Stable id, part of render-cache keys.
    pub id: u8,
    pub text: Style,
    pub dim: Style,
    pub hint: Style,
    pub title: Style,
    pub selected: Style,
    pub border: Style,
    pub border_focused: Style,
    pub status_ok: Style,
    pub status_running: Style,
    pub status_failed: Style,
    pub status_cancelled: Style,
    pub finding_error: Style,
    pub finding_warning: Style,
    pub finding_info: Style,
    pub diff_add: Style,
    pub diff_del: Style,
    pub diff_add_emph: Style,
    pub diff_del_emph: Style,
    /// Background of an added / removed line, across the pane (the sign keeps `diff_add` /
    /// `diff_del`); `diff_*_emph` is patched over a changed word's own style (its syntax or
    /// `+`/`-` colour kept): a stronger tint of this background, or reverse video in `mono`.
    pub diff_add_line: Style,
    pub diff_del_line: Style,
    pub diff_hunk: Style,
    pub diff_gutter: Style,
    pub diff_file: Style,
    pub json_key: Style,
    pub json_string: Style,
    pub json_number: Style,
    pub json_literal: Style,
    pub prompt: Style,
    pub agent: Style,
    pub thinking: Style,
    pub search_match: Style,
    pub control_char: Style,
    /// Whether syntax highlighting (colour) is used at all.
    pub colour: bool,
}

impl Default for Theme {
    fn default() -> Self {
        Self::dark()
    }
}

impl Theme {
    /// The badge text and style for a call status (the feed's status column, the detail's
    /// header). After the source ended, an open call reads "no result".
    pub fn call_badge<'a>(&self, status: &'a CallStatus, ended: bool) -> (&'a str, Style) {
        let style = match status {
            CallStatus::Requested | CallStatus::Streaming if ended => self.status_failed,
            CallStatus::Requested | CallStatus::Streaming => self.status_running,
            CallStatus::Succeeded => self.status_ok,
            CallStatus::Cancelled => self.status_cancelled,
            CallStatus::Failed | CallStatus::TimedOut | CallStatus::Other(_) => self.status_failed,
        };
        (Self::badge_text(status, ended), style)
    }

    /// The badge's words alone (`ok`, `no result`, a producer's own status): what the feed
    /// sizes its status column by (`crate::ui::feed::Cols`).
    pub fn badge_text(status: &CallStatus, ended: bool) -> &str {
        status.word(ended)
    }

    /// The default palette: ANSI colours (codex `styles.md`), works on dark and light terminals.
    pub fn dark() -> Self {
        let s = Style::new();
        Self {
            id: 0,
            text: s,
            dim: s.add_modifier(Modifier::DIM),
            hint: s.fg(Color::Cyan),
            title: s.add_modifier(Modifier::BOLD),
            selected: s
                .bg(Color::Blue)
                .fg(Color::White)
                .add_modifier(Modifier::BOLD),
            border: s.fg(Color::DarkGray),
            border_focused: s.fg(Color::Cyan),
            status_ok: s.fg(Color::Green),
            status_running: s.fg(Color::Yellow),
            status_failed: s.fg(Color::Red).add_modifier(Modifier::BOLD),
            status_cancelled: s.fg(Color::Magenta),
            finding_error: s.fg(Color::Red),
            finding_warning: s.fg(Color::Yellow),
            finding_info: s.fg(Color::Blue),
            diff_add: s.fg(Color::Green),
            diff_del: s.fg(Color::Red),
            // Emphasis: a stronger tint of the line's background, the text keeping its colour.
            diff_add_emph: s.bg(Color::Rgb(0x2e, 0x6b, 0x40)),
            diff_del_emph: s.bg(Color::Rgb(0x82, 0x30, 0x3a)),
            diff_add_line: s.bg(Color::Rgb(0x1f, 0x36, 0x27)),
            diff_del_line: s.bg(Color::Rgb(0x3d, 0x20, 0x24)),
            diff_hunk: s.fg(Color::Cyan).add_modifier(Modifier::DIM),
            diff_gutter: s.add_modifier(Modifier::DIM),
            diff_file: s.fg(Color::Yellow).add_modifier(Modifier::BOLD),
            json_key: s.fg(Color::Blue),
            json_string: s.fg(Color::Green),
            json_number: s.fg(Color::Magenta),
            json_literal: s.fg(Color::Yellow),
            prompt: s.fg(Color::Cyan).add_modifier(Modifier::BOLD),
            agent: s,
            thinking: s.add_modifier(Modifier::DIM | Modifier::ITALIC),
            search_match: s.bg(Color::Yellow).fg(Color::Black),
            control_char: s.fg(Color::Magenta).add_modifier(Modifier::REVERSED),
            colour: true,
        }
    }

    /// For light terminal backgrounds: the dark palette with darker accents and light
    /// backgrounds for selection, emphasis and matches (ANSI colours only).
    pub fn light() -> Self {
        let s = Style::new();
        Self {
            id: 2,
            hint: s.fg(Color::Blue),
            selected: s
                .bg(Color::LightBlue)
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD),
            border: s.fg(Color::Gray),
            border_focused: s.fg(Color::Blue),
            status_running: s.fg(Color::Magenta),
            status_cancelled: s.fg(Color::DarkGray),
            finding_warning: s.fg(Color::Magenta),
            diff_add_emph: s.bg(Color::Rgb(0xab, 0xf2, 0xbc)),
            diff_del_emph: s.bg(Color::Rgb(0xff, 0xc1, 0xc0)),
            diff_add_line: s.bg(Color::Rgb(0xe6, 0xff, 0xec)),
            diff_del_line: s.bg(Color::Rgb(0xff, 0xeb, 0xe9)),
            diff_hunk: s.fg(Color::Blue),
            diff_file: s.fg(Color::Magenta).add_modifier(Modifier::BOLD),
            json_literal: s.fg(Color::Magenta),
            json_number: s.fg(Color::Red),
            prompt: s.fg(Color::Blue).add_modifier(Modifier::BOLD),
            search_match: s.bg(Color::LightYellow).fg(Color::Black),
            ..Self::dark()
        }
    }

    /// The 16 basic ANSI colours (`theme = "16"`): the dark palette without RGB backgrounds:
    /// changed lines keep their green / red signs on the terminal's background, changed words
    /// are bold and underlined in their own colour.
    pub fn ansi16() -> Self {
        let s = Style::new();
        let emph = s.add_modifier(Modifier::BOLD | Modifier::UNDERLINED);
        Self {
            id: 3,
            diff_add_emph: emph,
            diff_del_emph: emph,
            diff_add_line: s,
            diff_del_line: s,
            ..Self::dark()
        }
    }

    /// Monochrome: modifiers only (for `NO_COLOR` and `--color never`).
    pub fn mono() -> Self {
        let s = Style::new();
        let b = s.add_modifier(Modifier::BOLD);
        let d = s.add_modifier(Modifier::DIM);
        let r = s.add_modifier(Modifier::REVERSED);
        Self {
            id: 1,
            text: s,
            dim: d,
            hint: s,
            title: b,
            selected: r,
            border: s,
            border_focused: b,
            status_ok: s,
            status_running: s,
            status_failed: b,
            status_cancelled: d,
            finding_error: b,
            finding_warning: s,
            finding_info: d,
            diff_add: s,
            diff_del: s,
            diff_add_emph: r,
            diff_del_emph: r,
            diff_add_line: s,
            diff_del_line: s,
            diff_hunk: d,
            diff_gutter: d,
            diff_file: b,
            json_key: b,
            json_string: s,
            json_number: s,
            json_literal: s,
            prompt: b,
            agent: s,
            thinking: d,
            search_match: r,
            control_char: r,
            colour: false,
        }
    }

    /// Border style for a pane.
    pub fn border(&self, focused: bool) -> Style {
        if focused {
            self.border_focused
        } else {
            self.border
        }
    }
}
