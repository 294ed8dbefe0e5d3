//! Attention through the terminal (issue 21 item 4): the bell and a desktop notification,
//! OSC 9 (`iTerm2`, `WezTerm`, kitty, Ghostty, Windows Terminal) or OSC 777 (foot, urxvt,
//! `WezTerm`, Ghostty), passed through tmux when rawpv runs inside it.
//!
//! Who calls it: the app (`app/update.rs`) when the live state (`crate::session::live`)
//! enters a kind that needs the person; the loop writes the bytes through the terminal it owns.
//! Pure: [`Notify::from_env`] is the only place that reads the environment.
//!
//! Invariants: no text of the session reaches the terminal as a control: the title and body
//! keep printable characters only (C0, DEL, C1 and the invisible format characters are
//! dropped; `;` becomes `,` in OSC 777, whose fields it separates), at most
//! [`MAX_TEXT`] characters. Inside tmux the OSC is wrapped in tmux's DCS passthrough (every ESC
//! doubled; it shows only with `set -g allow-passthrough on`, tmux 3.3+); the bell is sent
//! bare, since tmux turns it into its own bell or alert.

use crate::session::live::Attention;

/// Characters kept of a notification's title or body.
pub const MAX_TEXT: usize = 200;

/// Which desktop notification sequence to send (config `notify.desktop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Desktop {
    /// OSC 777 on foot and urxvt (`TERM`), else OSC 9.
    #[default]
    Auto,
    Osc9,
    Osc777,
    /// No desktop notification (the bell may still ring).
    Off,
}

/// What rings and notifies, resolved for one terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notify {
    pub waiting: bool,
    pub stuck: bool,
    pub looping: bool,
    pub turn_end: bool,
    /// Ring the bell (BEL).
    pub bell: bool,
    /// The desktop sequence, resolved: never `Auto`.
    pub desktop: Desktop,
    /// Wrap the OSC for tmux.
    pub tmux: bool,
}

impl Default for Notify {
    fn default() -> Self {
        Self {
            waiting: true,
            stuck: true,
            looping: true,
            turn_end: false,
            bell: true,
            desktop: Desktop::Osc9,
            tmux: false,
        }
    }
}

impl Notify {
    /// Resolves `desktop` and tmux for the terminal described by `TERM` and `TMUX` (a set
    /// `TMUX` means inside tmux; `TERM` then names tmux, so the outer terminal is unknown and
    /// `auto` takes OSC 9).
    #[must_use]
    pub fn resolve(mut self, desktop: Desktop, term: Option<&str>, tmux: bool) -> Self {
        self.tmux = tmux;
        self.desktop = match desktop {
            Desktop::Auto => {
                let t = term.unwrap_or("");
                if !tmux && (t.starts_with("foot") || t.starts_with("rxvt")) {
                    Desktop::Osc777
                } else {
                    Desktop::Osc9
                }
            }
            d => d,
        };
        self
    }

    /// [`Notify::resolve`] with this process's `TERM` and `TMUX`.
    #[must_use]
    pub fn from_env(self, desktop: Desktop) -> Self {
        let term = std::env::var("TERM").ok();
        let tmux = std::env::var_os("TMUX").is_some_and(|v| !v.is_empty());
        self.resolve(desktop, term.as_deref(), tmux)
    }

    /// Whether `kind` rings and notifies.
    pub fn wants(&self, kind: Attention) -> bool {
        match kind {
            Attention::Waiting => self.waiting,
            Attention::Stuck => self.stuck,
            Attention::Looping => self.looping,
            Attention::TurnEnd => self.turn_end,
        }
    }

    /// The bytes to write: the bell, then the notification (`title`, `body` are untrusted).
    /// Empty when both are off.
    pub fn sequence(&self, title: &str, body: &str) -> String {
        let mut out = String::new();
        if self.bell {
            out.push('\x07');
        }
        let osc = match self.desktop {
            Desktop::Osc9 => format!(
                "\x1b]9;{}: {}\x1b\\",
                clean(title, false),
                clean(body, false)
            ),
            Desktop::Osc777 => format!(
                "\x1b]777;notify;{};{}\x1b\\",
                clean(title, true),
                clean(body, true)
            ),
            Desktop::Off | Desktop::Auto => String::new(),
        };
        if self.tmux && !osc.is_empty() {
            out.push_str("\x1bPtmux;");
            out.push_str(&osc.replace('\x1b', "\x1b\x1b"));
            out.push_str("\x1b\\");
        } else {
            out.push_str(&osc);
        }
        out
    }
}

/// `text` with printable characters only, at most [`MAX_TEXT`]; `;` → `,` when `fields`.
fn clean(text: &str, fields: bool) -> String {
    text.chars()
        .map(|c| if c == '\n' || c == '\t' { ' ' } else { c })
        .filter(|&c| !c.is_control() && !crate::finding::is_invisible_format(c))
        .map(|c| if fields && c == ';' { ',' } else { c })
        .take(MAX_TEXT)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bell_and_osc9_by_default_and_osc777_on_foot() {
        let n = Notify::default().resolve(Desktop::Auto, Some("xterm-256color"), false);
        assert_eq!(
            n.sequence("rawpv", "waiting for you"),
            "\x07\x1b]9;rawpv: waiting for you\x1b\\"
        );
        let n = Notify::default().resolve(Desktop::Auto, Some("foot"), false);
        assert_eq!(
            n.sequence("rawpv; x", "stuck: a;b"),
            "\x07\x1b]777;notify;rawpv, x;stuck: a,b\x1b\\"
        );
    }

    #[test]
    fn tmux_wraps_the_osc_and_not_the_bell() {
        let n = Notify::default().resolve(Desktop::Auto, Some("tmux-256color"), true);
        assert_eq!(
            n.sequence("rawpv", "looping"),
            "\x07\x1bPtmux;\x1b\x1b]9;rawpv: looping\x1b\x1b\\\x1b\\"
        );
    }

    #[test]
    fn untrusted_text_loses_its_controls_and_length() {
        let n = Notify {
            bell: false,
            ..Notify::default()
        };
        let body = format!("a\x1b]52;c;eA==\x07b\u{202e}c\u{9b}{}", "x".repeat(500));
        let s = n.sequence("t", &body);
        assert_eq!(s.matches('\x1b').count(), 2, "{s:?}");
        assert!(!s.contains('\x07'));
        assert!(s.starts_with("\x1b]9;t: a]52;c;eA==bcxxx"), "{s:?}");
        assert_eq!(
            s.chars().count(),
            "\x1b]9;t: ".chars().count() + MAX_TEXT + 2
        );
        let off = Notify {
            bell: false,
            desktop: Desktop::Off,
            ..Notify::default()
        };
        assert_eq!(off.sequence("t", "b"), "");
    }
}
