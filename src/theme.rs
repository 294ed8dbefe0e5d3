//! Theme: semantic style roles (STYLE 4.9), shared by renderers and widgets.
//!
//! Who uses it: `crate::render` (diff colours, dim text), `crate::detail` (headers) and `crate::ui`
//! (borders, badges).
//! Invariant: no code outside this file hard-codes colours; `NO_COLOR` (or `--color never`) gives
//! [`Theme::mono`], which uses modifiers only.
//!
//! [`probe_background`] asks the terminal for its background colour (OSC 11, through
//! `terminal-colorsaurus`, within [`PROBE_TIMEOUT`]) so `theme = "auto"` can pick the dark or
//! the light palette (issue 22.9). Only the viewer's entry points call it, while the screen is
//! still theirs alone (before raw mode and the key reader start), and only when stdout is a
//! terminal; `print`, the tests and every explicit theme never ask.

use std::time::{Duration, Instant};

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
            diff_add_emph: s.bg(Color::Rgb(0x1d, 0x4a, 0x2b)),
            diff_del_emph: s.bg(Color::Rgb(0x5c, 0x1f, 0x27)),
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
            diff_del_emph: s.bg(Color::Rgb(0xff, 0xca, 0xc8)),
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

    /// Patches the diff styles of the config's `[diff]` table over this palette (issue 22.8):
    /// `plus` / `minus` over the changed lines' backgrounds, `plus-emph` / `minus-emph` over
    /// the changed words'. `None` keeps the palette's own.
    #[must_use]
    pub fn with_diff_styles(mut self, d: &DiffStyles) -> Self {
        let over = |base: Style, s: Option<Style>| s.map_or(base, |s| base.patch(s));
        self.diff_add_line = over(self.diff_add_line, d.plus);
        self.diff_del_line = over(self.diff_del_line, d.minus);
        self.diff_add_emph = over(self.diff_add_emph, d.plus_emph);
        self.diff_del_emph = over(self.diff_del_emph, d.minus_emph);
        if *d != DiffStyles::default() {
            // Render caches are keyed by the theme's id: a patched palette is another theme.
            self.id |= 0x80;
        }
        self
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

/// Diff styles from the config (`[diff]`: `plus`, `minus`, `plus-emph`, `minus-emph`), parsed
/// from git's colour syntax (`"bold #2e6b40"`: the first colour is the text's, the second the
/// background's; `normal` leaves one as it is). See [`Theme::with_diff_styles`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DiffStyles {
    pub plus: Option<Style>,
    pub minus: Option<Style>,
    pub plus_emph: Option<Style>,
    pub minus_emph: Option<Style>,
}

/// Parses one style in git's colour syntax (`"ul green"`, `"normal #ffc1c0"`, `"bold 22"`).
///
/// # Errors
/// A word that is neither a colour nor an attribute, or a third colour (anstyle-git's message).
pub fn parse_style(text: &str) -> Result<Style, String> {
    let s = anstyle_git::parse(text).map_err(|e| e.to_string())?;
    Ok(Style::from(s))
}

/// How long [`probe_background`] waits for the terminal's answer. Terminals that do not know
/// OSC 11 are told apart at once (they answer the DA1 query sent after it); this bounds only a
/// slow link (SSH), and keeps the first screen within its 150 ms (BENCHMARKS.md).
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(100);

/// What asking the terminal for its colours gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// `Some(true)`: a light background (darker text on it); `Some(false)`: dark; `None`: no
    /// answer (see `error`).
    pub light: Option<bool>,
    /// The background colour, 8 bits per channel, when the terminal said it.
    pub background: Option<(u8, u8, u8)>,
    /// How long the question took.
    pub took: Duration,
    /// Why there is no answer (unsupported terminal, timeout, I/O error).
    pub error: Option<String>,
}

impl Probe {
    /// `#rrggbb` of the background, when known.
    pub fn background_hex(&self) -> Option<String> {
        self.background
            .map(|(r, g, b)| format!("#{r:02x}{g:02x}{b:02x}"))
    }
}

/// Asks the terminal for its foreground and background colours (OSC 10 and 11, then DA1, by
/// `terminal-colorsaurus`, which reads the answer from the controlling terminal in raw mode and
/// restores it), waiting at most `timeout`. Call it only while nothing else reads the terminal
/// (before `crate::tui::Tui::init`), and only when stdout is a terminal.
pub fn probe_background(timeout: Duration) -> Probe {
    let start = Instant::now();
    let mut options = terminal_colorsaurus::QueryOptions::default();
    options.timeout = timeout;
    match terminal_colorsaurus::color_palette(options) {
        Ok(p) => Probe {
            light: Some(p.theme_mode() == terminal_colorsaurus::ThemeMode::Light),
            background: Some(p.background.scale_to_8bit()),
            took: start.elapsed(),
            error: None,
        },
        Err(e) => Probe {
            light: None,
            background: None,
            took: start.elapsed(),
            error: Some(e.to_string()),
        },
    }
}
