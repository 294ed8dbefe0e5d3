//! Keymap: key chord → [`Action`], each binding with a description (STYLE 4.9).
//!
//! Who uses it: [`crate::app::App::update`] looks keys up; the status bar hints and the `?` help
//! popup are generated from [`Keymap::bindings`], so they can never disagree with the keys.
//! Invariants: a chord maps to at most one action; `Char` keys are matched without `SHIFT`
//! (the character already carries the case), so `N` is `Char('N')`.

use std::collections::HashMap;
use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::action::Action;

/// One key with its modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyChord {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl KeyChord {
    pub const fn new(code: KeyCode, mods: KeyModifiers) -> Self {
        Self { code, mods }
    }

    /// A plain key.
    pub const fn key(code: KeyCode) -> Self {
        Self::new(code, KeyModifiers::NONE)
    }

    /// A character key (case is part of the character).
    pub const fn ch(c: char) -> Self {
        Self::key(KeyCode::Char(c))
    }

    /// Ctrl + a character.
    pub const fn ctrl(c: char) -> Self {
        Self::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    /// The chord of a key event, normalised (`SHIFT` dropped from characters).
    pub fn from_event(ev: &KeyEvent) -> Self {
        let mut mods =
            ev.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        if matches!(ev.code, KeyCode::Char(_) | KeyCode::BackTab) {
            mods.remove(KeyModifiers::SHIFT);
        }
        Self::new(ev.code, mods)
    }
}

impl fmt::Display for KeyChord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mods.contains(KeyModifiers::CONTROL) {
            f.write_str("C-")?;
        }
        if self.mods.contains(KeyModifiers::ALT) {
            f.write_str("M-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("Space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::PageUp => f.write_str("PgUp"),
            KeyCode::PageDown => f.write_str("PgDn"),
            KeyCode::Home => f.write_str("Home"),
            KeyCode::End => f.write_str("End"),
            KeyCode::Enter => f.write_str("Enter"),
            KeyCode::Esc => f.write_str("Esc"),
            KeyCode::Tab => f.write_str("Tab"),
            KeyCode::BackTab => f.write_str("S-Tab"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// One binding: its keys, its action, and what the help says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub keys: Vec<KeyChord>,
    pub action: Action,
    /// One line for the help popup.
    pub desc: &'static str,
    /// Short label for the status bar hints; `None` keeps the binding out of the hints.
    pub hint: Option<&'static str>,
}

impl Binding {
    /// The keys as shown to the user: `j/↓`.
    pub fn keys_label(&self) -> String {
        if let Action::Seek(_) = self.action {
            return "0-9".into();
        }
        self.keys
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("/")
    }
}

/// All bindings of the normal mode, in help order.
#[derive(Debug, Clone)]
pub struct Keymap {
    bindings: Vec<Binding>,
    index: HashMap<KeyChord, usize>,
}

impl Default for Keymap {
    fn default() -> Self {
        use KeyCode as K;
        let c = KeyChord::ch;
        let k = KeyChord::key;
        let b = |keys: Vec<KeyChord>, action, desc, hint| Binding {
            keys,
            action,
            desc,
            hint,
        };
        Self::new(vec![
            b(
                vec![c('?')],
                Action::ToggleHelp,
                "show or hide this help",
                Some("help"),
            ),
            b(
                vec![c('q'), KeyChord::ctrl('c')],
                Action::Quit,
                "quit",
                Some("quit"),
            ),
            b(
                vec![c('j'), k(K::Down)],
                Action::MoveDown,
                "next row / scroll down",
                None,
            ),
            b(
                vec![c('k'), k(K::Up)],
                Action::MoveUp,
                "previous row / scroll up",
                None,
            ),
            b(
                vec![k(K::PageDown), KeyChord::ctrl('d')],
                Action::PageDown,
                "page down",
                None,
            ),
            b(
                vec![k(K::PageUp), KeyChord::ctrl('u')],
                Action::PageUp,
                "page up",
                None,
            ),
            b(
                vec![c('g'), k(K::Home)],
                Action::Top,
                "first row / top",
                None,
            ),
            b(
                vec![c('G'), k(K::End)],
                Action::Bottom,
                "last row / bottom (follow)",
                None,
            ),
            b(
                vec![k(K::Tab), k(K::BackTab)],
                Action::FocusNext,
                "switch pane",
                Some("pane"),
            ),
            b(
                vec![k(K::Enter)],
                Action::Open,
                "open the row / expand output",
                None,
            ),
            b(
                vec![c('o')],
                Action::ToggleExpand,
                "expand or fold long output",
                None,
            ),
            b(
                vec![c('F')],
                Action::Follow,
                "follow the running stream's tail",
                None,
            ),
            b(
                vec![c('z')],
                Action::ToggleZoom,
                "zoom the detail pane",
                Some("zoom"),
            ),
            b(vec![c('w')], Action::ToggleWrap, "wrap long lines", None),
            b(
                vec![c('s')],
                Action::ToggleSideBySide,
                "diffs side by side",
                None,
            ),
            b(
                vec![c('{')],
                Action::FeedNarrower,
                "narrower feed (more room for the detail)",
                None,
            ),
            b(
                vec![c('}')],
                Action::FeedWider,
                "wider feed (longer summaries)",
                None,
            ),
            b(
                vec![c('/')],
                Action::StartSearch,
                "search (regex, smart case)",
                Some("search"),
            ),
            b(vec![c('n')], Action::SearchNext, "next match", None),
            b(vec![c('N')], Action::SearchPrev, "previous match", None),
            b(vec![c('e')], Action::NextError, "next error", Some("error")),
            b(vec![c('E')], Action::PrevError, "previous error", None),
            b(
                vec![c('p')],
                Action::NextPrompt,
                "next prompt",
                Some("prompt"),
            ),
            b(vec![c('P')], Action::PrevPrompt, "previous prompt", None),
            b(
                vec![c('C')],
                Action::NextCompaction,
                "next compaction (the summary in the detail)",
                None,
            ),
            b(
                vec![c('x')],
                Action::ToggleFold,
                "fold or unfold the turn (prompt and its rows)",
                Some("fold"),
            ),
            b(
                vec![c('h'), k(K::Left)],
                Action::FoldTurn,
                "fold the turn (wrap off: scroll left)",
                None,
            ),
            b(
                vec![c('l'), k(K::Right)],
                Action::UnfoldTurn,
                "unfold the turn (wrap off: scroll right)",
                None,
            ),
            b(vec![c('M')], Action::FoldAll, "fold every turn", None),
            b(vec![c('R')], Action::UnfoldAll, "unfold every turn", None),
            b(
                vec![c('f')],
                Action::StartFilter,
                "filter: tool:NAME status:STATUS session:ID text",
                Some("filter"),
            ),
            b(
                vec![c('.')],
                Action::ToggleQuiet,
                "show or hide quiet rows (usage, progress)",
                None,
            ),
            b(
                vec![c('c')],
                Action::ShowCatalog,
                "tool catalog panel",
                Some("catalog"),
            ),
            b(
                vec![c('!')],
                Action::ShowProblems,
                "problems panel",
                Some("problems"),
            ),
            b(
                vec![c('d')],
                Action::ShowFiles,
                "files panel: what changed (y/Y copy the file's / all patches)",
                None,
            ),
            b(
                vec![c('a')],
                Action::ShowAudit,
                "audit panel: shell, network, outside writes, permissions",
                None,
            ),
            b(
                vec![c('L')],
                Action::ShowSessions,
                "sessions list: states, calls, tokens; Enter shows one",
                None,
            ),
            b(
                vec![c('t')],
                Action::AuditKind,
                "audit panel: list the next kind of entry",
                None,
            ),
            b(
                vec![c('i')],
                Action::SaveImages,
                "save the row's images to files",
                None,
            ),
            b(
                vec![c('I')],
                Action::OpenImage,
                "open the row's image in the system viewer",
                None,
            ),
            b(
                vec![c('v')],
                Action::ViewImage,
                "show the row's image in the detail pane (v again: the next)",
                None,
            ),
            b(
                vec![c('W')],
                Action::WritePatch,
                "files panel: write the whole patch to a file",
                None,
            ),
            b(
                vec![k(K::Esc)],
                Action::Cancel,
                "close popup / clear search, filter",
                None,
            ),
            b(
                vec![KeyChord::ctrl('z')],
                Action::Suspend,
                "suspend (fg resumes)",
                None,
            ),
            b(
                vec![c(' ')],
                Action::TogglePlay,
                "replay: play / pause",
                None,
            ),
            b(
                vec![c('+'), c('=')],
                Action::SpeedUp,
                "replay: faster (×2)",
                None,
            ),
            b(vec![c('-')], Action::SpeedDown, "replay: slower (÷2)", None),
            b(
                vec![c('>')],
                Action::StepForward,
                "replay: one frame forward (else as →)",
                None,
            ),
            b(
                vec![c('<')],
                Action::StepBack,
                "replay: one frame back (else as ←)",
                None,
            ),
            b(vec![c(']')], Action::NextTurn, "replay: next turn", None),
            b(
                vec![c('[')],
                Action::PrevTurn,
                "replay: previous turn",
                None,
            ),
            b(
                ('0'..='9').map(c).collect(),
                Action::Seek(0),
                "replay: seek to 0–90%",
                None,
            ),
            b(
                vec![c('y')],
                Action::CopyInput,
                "copy the call's input",
                None,
            ),
            b(
                vec![c('Y')],
                Action::CopyOutput,
                "copy the call's output",
                None,
            ),
            b(
                vec![c('r')],
                Action::CopyRaw,
                "copy the row's raw frame JSON",
                None,
            ),
            b(
                vec![c('S')],
                Action::ToggleRedactCopies,
                "copies: redact secrets (on / off)",
                None,
            ),
            b(
                vec![c('X')],
                Action::ExportPage,
                "export the session as an HTML page (secrets redacted)",
                None,
            ),
        ])
    }
}

impl Keymap {
    /// Builds a keymap; a chord bound twice keeps its first binding.
    pub fn new(bindings: Vec<Binding>) -> Self {
        let mut index = HashMap::new();
        for (i, b) in bindings.iter().enumerate() {
            for k in &b.keys {
                index.entry(*k).or_insert(i);
            }
        }
        Self { bindings, index }
    }

    /// Replaces the keys of `action`'s binding (config overrides); the chords are taken away
    /// from any other binding that had them. An unbound action or no keys changes nothing.
    pub fn rebind(&mut self, action: Action, keys: &[KeyChord]) {
        if keys.is_empty() || !self.bindings.iter().any(|b| b.action == action) {
            return;
        }
        let mut bindings = std::mem::take(&mut self.bindings);
        for b in &mut bindings {
            if b.action == action {
                b.keys = keys.to_vec();
            } else {
                b.keys.retain(|k| !keys.contains(k));
            }
        }
        *self = Self::new(bindings);
    }

    /// The action bound to a key event, if any.
    pub fn action(&self, ev: &KeyEvent) -> Option<Action> {
        let chord = KeyChord::from_event(ev);
        self.index.get(&chord).map(|&i| {
            let a = self.bindings[i].action;
            // A digit bound to `Seek` carries its value: `3` seeks to 30%.
            if let (Action::Seek(_), KeyCode::Char(d)) = (a, chord.code) {
                Action::Seek(d.to_digit(10).map_or(0, |d| d as u8 * 10))
            } else {
                a
            }
        })
    }

    /// Every binding, in help order.
    pub fn bindings(&self) -> &[Binding] {
        &self.bindings
    }

    /// `(keys, label)` pairs for the status bar.
    pub fn hints(&self) -> impl Iterator<Item = (String, &'static str)> + '_ {
        self.bindings.iter().filter_map(|b| {
            b.hint.map(|h| {
                (
                    b.keys.first().map(ToString::to_string).unwrap_or_default(),
                    h,
                )
            })
        })
    }

    /// The first key bound to `action`, for messages such as "press o to expand".
    pub fn key_for(&self, action: Action) -> Option<KeyChord> {
        self.bindings
            .iter()
            .find(|b| b.action == action)
            .and_then(|b| b.keys.first().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shift_is_part_of_the_character() {
        let km = Keymap::default();
        let ev = KeyEvent::new(KeyCode::Char('N'), KeyModifiers::SHIFT);
        assert_eq!(km.action(&ev), Some(Action::SearchPrev));
        let ev = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(km.action(&ev), Some(Action::Quit));
        let ev = KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT);
        assert_eq!(km.action(&ev), Some(Action::FocusNext));
    }

    #[test]
    fn no_chord_is_bound_twice() {
        let km = Keymap::default();
        let mut seen = std::collections::HashSet::new();
        for b in km.bindings() {
            for k in &b.keys {
                assert!(seen.insert(*k), "{k} is bound twice");
            }
        }
    }

    #[test]
    fn digits_seek_by_tenths() {
        let km = Keymap::default();
        let ev = KeyEvent::new(KeyCode::Char('3'), KeyModifiers::NONE);
        assert_eq!(km.action(&ev), Some(Action::Seek(30)));
        let ev = KeyEvent::new(KeyCode::Char('0'), KeyModifiers::NONE);
        assert_eq!(km.action(&ev), Some(Action::Seek(0)));
        let ev = KeyEvent::new(KeyCode::Char('+'), KeyModifiers::SHIFT);
        assert_eq!(km.action(&ev), Some(Action::SpeedUp));
    }

    #[test]
    fn every_action_has_a_description() {
        let km = Keymap::default();
        assert!(
            km.bindings()
                .iter()
                .all(|b| !b.desc.is_empty() && !b.keys.is_empty())
        );
    }
}
