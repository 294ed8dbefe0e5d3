//! The sessions of one input (SPEC §6, issue 18): a master relays many agent sessions at once and
//! their frames interleave, each tagged with its `session_id`. Every frame belongs to a session;
//! each session has its own catalog and publish history, invocations (ids are looked up within
//! their session), turns, token totals, compactions and end-of-session checks.
//!
//! Who uses it: the reducer (`super::Session::apply_frame` resolves each frame's session before
//! checking and folding it), the checks (`super::check`: the catalog in force in the frame's own
//! session), `check` / `stats` / `print` (per-session reports when there is more than one), and
//! the TUI (status bar, catalog and problems panels follow the selected row's session).
//!
//! Model: a table of sessions; index 0 is the input's default session. A frame without a
//! `session_id` (or with an invalid one: not a string, or empty; a finding says so) belongs to
//! the default session, but a stream chunk or result naming none goes to the session whose open
//! call it answers when that call is not the default session's (`Session::apply_frame`). The
//! default session takes the first `session_id` the input names, so an
//! input whose frames all name one session, or name it on some frames only (a Claude Code
//! transcript: its derived catalog and summaries name none), is one session, as before. Each
//! other `session_id` opens a session of its own, in order of first appearance. UUIDs compare
//! case-insensitively (RFC 4122): the session keeps the spelling it was first named with.
//!
//! Invariants: never empty (entry 0 exists); an index handed out stays valid; a single-session
//! input costs nothing per row: the row → session map (`item_session`, 4 bytes a row) is kept
//! only once a second session appears (every earlier row is then in session 0).

use std::collections::HashMap;

use super::Counts;
use super::query::Tokens;

/// Most columns of a session id in text reports and messages (a UUID's 36).
pub const NAME_MAX: usize = 36;

/// The key of a session id: a UUID in lower case (RFC 4122: UUIDs compare case-insensitively,
/// so `6F1C…` and `6f1c…` are one session), any other id as it is. Allocates only for a UUID
/// with upper-case letters.
fn key(id: &str) -> std::borrow::Cow<'_, str> {
    if id.bytes().any(|b| b.is_ascii_uppercase()) && uuid::Uuid::try_parse(id).is_ok() {
        std::borrow::Cow::Owned(id.to_ascii_lowercase())
    } else {
        std::borrow::Cow::Borrowed(id)
    }
}

/// What is kept per session: its id, counters and the indices of its catalog publishes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionEntry {
    /// The `session_id` (raw, untrusted); `None` for a default session no frame has named.
    pub id: Option<Box<str>>,
    /// Frames, calls and their outcomes in this session (as `Session::counts`).
    pub counts: Counts,
    /// Token totals of this session's `session.usage` frames.
    pub tokens: Tokens,
    /// Turns: prompts of the session's main agent (a subagent's prompt is inside its Task call).
    pub turns: u64,
    /// `session.compacted` / `control.session.compact` frames.
    pub compactions: u64,
    /// Findings attributed to this session.
    pub findings: u64,
    /// Indices into `Session::publishes` of this session's catalog publishes, in order; the
    /// last one is the session's current catalog.
    pub publishes: Vec<u32>,
    /// Source line of the session's first frame.
    pub first_line: u64,
    /// The session's working directory: the first one a frame names ([`frame_cwd`]); paths
    /// inside it are shown relative to it (`crate::fmt::relative_to`).
    pub cwd: Option<Box<str>>,
    /// A later frame named another working directory: paths are then shown as written.
    pub cwd_changed: bool,
}

/// The working directory a frame names: `metadata.cwd`, else the importer's own map's `cwd`
/// (`metadata.claude_code.cwd`, `metadata.codex.cwd`; the importers put it on a session's first
/// frame and when it changes, not on every frame). Absolute paths only.
pub fn frame_cwd(frame: &crate::protocol::Frame) -> Option<&str> {
    let m = &frame.envelope.metadata;
    let cwd = m.get("cwd").or_else(|| {
        ["claude_code", "codex"]
            .iter()
            .find_map(|k| m.get(*k).and_then(|v| v.get("cwd")))
    })?;
    cwd.as_str().filter(|c| c.starts_with('/') && c.len() > 1)
}

/// The sessions of an input and which session each feed row belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sessions {
    entries: Vec<SessionEntry>,
    by_id: HashMap<Box<str>, u32>,
    /// Session of each feed row, parallel to `Session::items`; empty while there is one session.
    item_session: Vec<u32>,
    /// The session [`Sessions::resolve`] found last: compared before hashing (the frames of a
    /// single-session input all name it; hashing the id cost 5% of `check`'s instructions).
    last: u32,
}

impl Default for Sessions {
    fn default() -> Self {
        Self {
            entries: vec![SessionEntry::default()],
            by_id: HashMap::new(),
            item_session: Vec::new(),
            last: 0,
        }
    }
}

impl Sessions {
    /// Number of sessions (at least 1).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Always false (the default session exists); for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// More than one session: reports name the session of what they list.
    pub fn is_multi(&self) -> bool {
        self.entries.len() > 1
    }

    /// Session `sid` (the default session when out of range).
    pub fn get(&self, sid: u32) -> &SessionEntry {
        self.entries.get(sid as usize).unwrap_or(&self.entries[0])
    }

    pub(super) fn get_mut(&mut self, sid: u32) -> &mut SessionEntry {
        let i = if (sid as usize) < self.entries.len() {
            sid as usize
        } else {
            0
        };
        &mut self.entries[i]
    }

    /// The sessions in order of first appearance, with their index.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (u32, &SessionEntry)> {
        self.entries.iter().enumerate().map(|(i, e)| (i as u32, e))
    }

    /// The session named `id`, if any frame named it (a UUID in any letter case).
    pub fn find(&self, id: &str) -> Option<u32> {
        self.by_id.get(&*key(id)).copied()
    }

    /// The session of a frame naming `id` (`None`: the default session), opening it on first
    /// sight; `items` is the number of feed rows so far (for the row → session map). O(1).
    pub(super) fn resolve(&mut self, id: Option<&str>, items: usize, line: u64) -> u32 {
        let Some(id) = id else {
            return 0;
        };
        if self.get(self.last).id.as_deref() == Some(id) {
            return self.last;
        }
        let key = key(id);
        if let Some(&sid) = self.by_id.get(&*key) {
            self.last = sid;
            return sid;
        }
        let sid = if self.entries[0].id.is_none() {
            0
        } else {
            if self.entries.len() == 1 {
                self.item_session = vec![0; items];
            }
            self.entries.push(SessionEntry {
                first_line: line,
                ..SessionEntry::default()
            });
            u32::try_from(self.entries.len() - 1).unwrap_or(u32::MAX)
        };
        self.entries[sid as usize].id = Some(id.into());
        self.by_id.insert(key.into(), sid);
        self.last = sid;
        sid
    }

    /// Records the session of a new feed row (pushed at index `item`).
    pub(super) fn push_item(&mut self, item: usize, sid: u32) {
        if self.entries.len() > 1 {
            self.item_session.resize(item, 0);
            self.item_session.push(sid);
        }
    }

    /// The session of feed row `item`. O(1).
    pub fn of_item(&self, item: usize) -> u32 {
        self.item_session.get(item).copied().unwrap_or(0)
    }

    /// Keeps the rows whose `keep` is true (`Session::compact_if_needed`).
    pub(super) fn retain_items(&mut self, keep: &[bool]) {
        if self.item_session.is_empty() {
            return;
        }
        let mut k = keep.iter();
        self.item_session
            .retain(|_| k.next().copied().unwrap_or(true));
    }

    /// The session's name for reports: its `session_id`, or `(default)` when none was named.
    /// Raw, untrusted text: pass it through `render::text::visible` before printing.
    pub fn name(&self, sid: u32) -> &str {
        self.get(sid).id.as_deref().unwrap_or("(default)")
    }

    /// [`Self::name`] cut to [`NAME_MAX`] columns with an ellipsis, for text reports and messages
    /// (attack 6: a 200 KB id was printed on every row). Raw, untrusted text, as `name`.
    pub fn short_name(&self, sid: u32) -> std::borrow::Cow<'_, str> {
        let name = self.name(sid);
        if crate::fmt::width(name) <= NAME_MAX {
            std::borrow::Cow::Borrowed(name)
        } else {
            std::borrow::Cow::Owned(crate::fmt::truncate(name, NAME_MAX))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default session takes the first id; frames naming none stay in it; a second id opens
    /// a session and the row map starts then.
    #[test]
    fn the_default_session_takes_the_first_id() {
        let mut s = Sessions::default();
        assert_eq!(s.resolve(None, 0, 1), 0);
        s.push_item(0, 0);
        assert_eq!(s.resolve(Some("a"), 1, 2), 0);
        s.push_item(1, 0);
        assert!(!s.is_multi());
        assert_eq!(s.resolve(Some("b"), 2, 3), 1);
        s.push_item(2, 1);
        assert_eq!(s.resolve(None, 3, 4), 0);
        s.push_item(3, 0);
        assert_eq!((s.of_item(0), s.of_item(2), s.of_item(3)), (0, 1, 0));
        assert_eq!((s.name(0), s.name(1), s.find("b")), ("a", "b", Some(1)));
        s.retain_items(&[false, true, true, false]);
        assert_eq!((s.of_item(0), s.of_item(1)), (0, 1));
        // A UUID in upper case is the same session (attack 6 #8); other ids keep their case.
        let u = "6f1c2b1e-8a4d-4c55-9e1a-0b7a3c2d4e5f";
        assert_eq!(s.resolve(Some(u), 4, 5), 2);
        assert_eq!(s.resolve(Some(&u.to_ascii_uppercase()), 5, 6), 2);
        assert_eq!(s.find(&u.to_ascii_uppercase()), Some(2));
        assert_eq!(s.name(2), u);
        assert_eq!(s.resolve(Some("B"), 6, 7), 3);
    }
}
