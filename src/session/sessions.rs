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
//! Several inputs (issue 24: `rawpv A B …`): each session belongs to one input
//! ([`SessionEntry::input`], the index of its argument; the caller sets the input of the items it
//! folds, `Session::input`). Ids are looked up within their input, so two files naming the same id
//! are two sessions, and each input has its own default session (input 0's is entry 0), which
//! takes the first id its input names, as above; an input's default session that no frame names is
//! called by the input's label ([`Sessions::set_inputs`], e.g. `b.ndjson`).
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
    /// The input the session's frames come from: the index of its command-line argument (0 when
    /// there is one input).
    pub input: u16,
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
    /// The newest frame timestamp of the session (its last activity; the sessions list sorts by
    /// it).
    pub last_at: Option<crate::protocol::Timestamp>,
    /// The agent or client that wrote the session, where a frame says ([`frame_agent`]).
    pub agent: Option<Box<str>>,
    /// Rows of this session dropped by the live row cap (`Session::compact_if_needed`).
    pub dropped: u64,
    /// Its input could not be read, or stopped with an error (an `input-failed` error finding,
    /// `source::merge`).
    pub failed: bool,
}

/// The agent or client a frame names: `metadata.agent` or `metadata.client` (a string, or an
/// object's `name`), else the importer that made it (Claude Code, Codex, Gemini, Anthropic API).
/// Raw, untrusted text.
pub fn frame_agent(frame: &crate::protocol::Frame) -> Option<&str> {
    let m = &frame.envelope.metadata;
    let named = ["agent", "client"].iter().find_map(|k| {
        let v = m.get(*k)?;
        v.as_str()
            .or_else(|| v.get("name").and_then(serde_json::Value::as_str))
            .filter(|s| !s.is_empty())
    });
    named.or_else(|| {
        [
            ("claude_code", "Claude Code"),
            ("codex", "Codex"),
            ("gemini", "Gemini"),
            ("anthropic", "Anthropic API"),
        ]
        .iter()
        .find(|(k, _)| m.contains_key(*k))
        .map(|(_, name)| *name)
    })
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
    /// Per input (index = `SessionEntry::input`): session ids → session.
    by_id: Vec<HashMap<Box<str>, u32>>,
    /// Per input: its default session (for frames naming none), once it has one; input 0's is
    /// entry 0.
    defaults: Vec<Option<u32>>,
    /// The inputs' labels (file names as given), when there is more than one input.
    labels: Vec<Box<str>>,
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
            by_id: vec![HashMap::new()],
            defaults: vec![Some(0)],
            labels: Vec::new(),
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

    /// The session named `id`, if any frame named it (a UUID in any letter case); with several
    /// inputs naming it, the first input's.
    pub fn find(&self, id: &str) -> Option<u32> {
        let key = key(id);
        self.by_id.iter().find_map(|m| m.get(&*key).copied())
    }

    /// The session of a frame of `input` naming `id` (`None`: the input's default session),
    /// opening it on first sight; `items` is the number of feed rows so far (for the row →
    /// session map). O(1).
    pub(super) fn resolve(&mut self, id: Option<&str>, input: u16, items: usize, line: u64) -> u32 {
        let Some(id) = id else {
            return self.default_of(input, items, line);
        };
        let last = self.get(self.last);
        if last.input == input && last.id.as_deref() == Some(id) {
            return self.last;
        }
        let key = key(id);
        let i = usize::from(input);
        if let Some(&sid) = self.by_id.get(i).and_then(|m| m.get(&*key)) {
            self.last = sid;
            return sid;
        }
        let home = self.default_of(input, items, line);
        let sid = if self.entries[home as usize].id.is_none() {
            home
        } else {
            self.open(input, items, line)
        };
        self.entries[sid as usize].id = Some(id.into());
        self.by_id[i].insert(key.into(), sid);
        self.last = sid;
        sid
    }

    /// The default session of `input` (for its frames naming no session), opened on its first
    /// frame. O(1).
    pub(super) fn default_of(&mut self, input: u16, items: usize, line: u64) -> u32 {
        let i = usize::from(input);
        if let Some(Some(sid)) = self.defaults.get(i) {
            return *sid;
        }
        let sid = self.open(input, items, line);
        self.defaults[i] = Some(sid);
        sid
    }

    /// The sessions of `input`, by index.
    pub fn of_input(&self, input: u16) -> impl Iterator<Item = u32> + '_ {
        self.iter()
            .filter(move |(_, e)| e.input == input)
            .map(|(k, _)| k)
    }

    /// A new session of `input`, named by no id yet.
    fn open(&mut self, input: u16, items: usize, line: u64) -> u32 {
        if self.entries.len() == 1 {
            self.item_session = vec![0; items];
        }
        let i = usize::from(input);
        if self.by_id.len() <= i {
            self.by_id.resize_with(i + 1, HashMap::new);
            self.defaults.resize(i + 1, None);
        }
        self.entries.push(SessionEntry {
            first_line: line,
            input,
            ..SessionEntry::default()
        });
        u32::try_from(self.entries.len() - 1).unwrap_or(u32::MAX)
    }

    /// Names the inputs (issue 24: `rawpv A B …`), in argument order: a session no frame named
    /// is called by its input's label. With fewer than two labels nothing changes.
    pub fn set_inputs(&mut self, labels: Vec<Box<str>>) {
        self.labels = if labels.len() > 1 { labels } else { Vec::new() };
    }

    /// The label of `input` when there are several inputs (`None` with one).
    pub fn input_label(&self, input: u16) -> Option<&str> {
        self.labels.get(usize::from(input)).map(|l| &**l)
    }

    /// Number of inputs named with [`Self::set_inputs`] (0 with one input).
    pub fn inputs(&self) -> usize {
        self.labels.len()
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

    /// The session's name for reports: its `session_id`; when none was named, its input's label
    /// with several inputs, else `(default)`. Raw, untrusted text: pass it through
    /// `render::text::visible` before printing.
    pub fn name(&self, sid: u32) -> &str {
        let e = self.get(sid);
        e.id.as_deref()
            .or_else(|| self.input_label(e.input))
            .unwrap_or("(default)")
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
        assert_eq!(s.resolve(None, 0, 0, 1), 0);
        s.push_item(0, 0);
        assert_eq!(s.resolve(Some("a"), 0, 1, 2), 0);
        s.push_item(1, 0);
        assert!(!s.is_multi());
        assert_eq!(s.resolve(Some("b"), 0, 2, 3), 1);
        s.push_item(2, 1);
        assert_eq!(s.resolve(None, 0, 3, 4), 0);
        s.push_item(3, 0);
        assert_eq!((s.of_item(0), s.of_item(2), s.of_item(3)), (0, 1, 0));
        assert_eq!((s.name(0), s.name(1), s.find("b")), ("a", "b", Some(1)));
        s.retain_items(&[false, true, true, false]);
        assert_eq!((s.of_item(0), s.of_item(1)), (0, 1));
        // A UUID in upper case is the same session (attack 6 #8); other ids keep their case.
        let u = "6f1c2b1e-8a4d-4c55-9e1a-0b7a3c2d4e5f";
        assert_eq!(s.resolve(Some(u), 0, 4, 5), 2);
        assert_eq!(s.resolve(Some(&u.to_ascii_uppercase()), 0, 5, 6), 2);
        assert_eq!(s.find(&u.to_ascii_uppercase()), Some(2));
        assert_eq!(s.name(2), u);
        assert_eq!(s.resolve(Some("B"), 0, 6, 7), 3);
    }

    /// Several inputs: each has its own default session and its own ids (the same id in two
    /// files is two sessions); an unnamed default session is called by its input's label.
    #[test]
    fn each_input_has_its_own_sessions() {
        let mut s = Sessions::default();
        s.set_inputs(vec!["a.ndjson".into(), "b.ndjson".into()]);
        assert_eq!(s.resolve(None, 0, 0, 1), 0);
        s.push_item(0, 0);
        // b's first frame opens b's default session; its frames naming none stay there.
        assert_eq!(s.resolve(None, 1, 1, 1), 1);
        s.push_item(1, 1);
        assert_eq!(s.resolve(Some("x"), 0, 2, 2), 0);
        // The same id in b is b's own: its default session takes it.
        assert_eq!(s.resolve(Some("x"), 1, 3, 2), 1);
        assert_eq!(s.resolve(Some("y"), 1, 4, 3), 2);
        assert_eq!(s.resolve(None, 1, 5, 4), 1);
        assert_eq!((s.of_item(0), s.of_item(1)), (0, 1));
        assert_eq!((s.get(1).input, s.get(2).input), (1, 1));
        assert_eq!(s.of_input(1).collect::<Vec<_>>(), vec![1, 2]);
        let mut t = Sessions::default();
        t.set_inputs(vec!["a.ndjson".into(), "b.ndjson".into()]);
        t.resolve(None, 1, 0, 1);
        assert_eq!((t.name(0), t.name(1)), ("a.ndjson", "b.ndjson"));
    }
}
