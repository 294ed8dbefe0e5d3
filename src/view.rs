//! View state: selection, scroll, focus, filter, search (STYLE 4.5). Plain data.
//!
//! Who uses it: [`crate::app::App`] mutates it in `update`; [`crate::ui`] reads it while drawing.
//! Invariants: everything here is `Debug + Clone + PartialEq` so tests assert whole states;
//! compiled regexes live in the app, only their source text lives here. Selection is a *row*
//! index into the visible rows ([`ViewState::rows`] when a filter is active, else the session's
//! items one to one); rows only ever refer to existing items.

use crate::protocol::FrameType;
use crate::session::{CallStatus, Item, MessageKind, Session};

/// A focusable pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pane {
    #[default]
    Feed,
    Detail,
}

/// What the right-hand pane shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tab {
    #[default]
    Detail,
    Catalog,
    Problems,
}

/// Input mode: where keys go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Normal,
    /// Typing a search regex after `/`.
    Search,
    /// Typing a filter after `f`.
    Filter,
}

/// The feed list's state.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FeedState {
    /// Selected visible row.
    pub selected: usize,
    /// First visible row drawn.
    pub offset: usize,
    /// Rows that fit, from the last layout.
    pub height: u16,
    /// Keep the last row selected as rows arrive (live sources, `G`).
    pub follow: bool,
}

/// The detail pane's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetailState {
    /// First drawn line (of the wrapped lines).
    pub scroll: usize,
    /// Keep the view pinned to the bottom while output grows (pager behaviour).
    pub follow_tail: bool,
    /// Lines that fit, from the last layout.
    pub height: u16,
    pub wrap: bool,
    pub side_by_side: bool,
    /// Show folded (long) output in full.
    pub expanded: bool,
}

impl Default for DetailState {
    fn default() -> Self {
        Self {
            scroll: 0,
            follow_tail: false,
            height: 0,
            wrap: true,
            side_by_side: false,
            expanded: false,
        }
    }
}

/// A parsed feed filter: `tool:NAME status:STATUS free text` (all parts optional, all must hold).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Filter {
    /// As typed.
    pub raw: String,
    /// Tool name, case-insensitive substring.
    pub tool: Option<String>,
    /// Status: `running`, `ok`, `error` (error, timeout, other), `cancelled`, `findings`.
    pub status: Option<String>,
    /// Text that must occur (case-insensitive) in the row's searchable text.
    pub text: Option<String>,
}

impl Filter {
    /// Parses the filter syntax; empty input gives `None`.
    pub fn parse(raw: &str) -> Option<Self> {
        let raw = raw.trim();
        if raw.is_empty() {
            return None;
        }
        let mut f = Self {
            raw: raw.to_owned(),
            ..Self::default()
        };
        let mut words = Vec::new();
        for w in raw.split_whitespace() {
            if let Some(t) = w.strip_prefix("tool:") {
                f.tool = Some(t.to_lowercase());
            } else if let Some(s) = w.strip_prefix("status:") {
                f.status = Some(s.to_lowercase());
            } else {
                words.push(w);
            }
        }
        if !words.is_empty() {
            f.text = Some(words.join(" ").to_lowercase());
        }
        Some(f)
    }

    /// Whether feed item `i` passes. Non-invocation rows pass only a text-only filter.
    pub fn matches(&self, session: &Session, i: usize) -> bool {
        let Some(item) = session.items.get(i) else {
            return false;
        };
        if self.tool.is_some() || self.status.is_some() {
            let Item::Invocation(k) = item else {
                return false;
            };
            let inv = &session.invocations[*k];
            if let Some(t) = &self.tool
                && !inv.tool_name.to_lowercase().contains(t.as_str())
            {
                return false;
            }
            if let Some(s) = &self.status
                && !status_matches(&inv.status, inv.findings, s)
            {
                return false;
            }
        }
        if let Some(t) = &self.text {
            return haystack(session, i).to_lowercase().contains(t.as_str());
        }
        true
    }
}

fn status_matches(status: &CallStatus, findings: u32, want: &str) -> bool {
    match want {
        "running" | "open" => status.is_open(),
        "error" | "failed" | "fail" => status.is_failure(),
        "findings" | "finding" | "problem" | "problems" => findings > 0,
        other => status.label().eq_ignore_ascii_case(other),
    }
}

/// The searchable text of a feed item: tool name, input and output JSON, stream text, message
/// text, event payload. Built on demand (search and filter are user actions, not the draw path).
pub fn haystack(session: &Session, i: usize) -> String {
    match session.items.get(i) {
        None => String::new(),
        Some(Item::Invocation(k)) => {
            let inv = &session.invocations[*k];
            let mut s = inv.tool_name.clone();
            s.push('\n');
            s.push_str(&json_text(&inv.input));
            if let Some(out) = session.output(inv) {
                s.push('\n');
                s.push_str(&json_text(&out));
            }
            s.push('\n');
            s.push_str(&inv.stream.text(None));
            s
        }
        Some(Item::Message(m)) => m.text.clone(),
        Some(Item::Event(f)) => {
            let mut s = f.frame_type.as_str().to_owned();
            s.push('\n');
            s.push_str(&json_text(&f.payload_json()));
            s
        }
    }
}

/// Strings as themselves (so a regex matches their real text, not escaped JSON), other values
/// as JSON with every string unescaped on its own line.
fn json_text(v: &serde_json::Value) -> String {
    use serde_json::Value;
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => {
                for (k, x) in o {
                    out.push_str(k);
                    out.push_str(": ");
                    walk(x, out);
                }
            }
            Value::Null => {}
            Value::Bool(_) | Value::Number(_) => {
                out.push_str(&v.to_string());
                out.push('\n');
            }
        }
    }
    let mut out = String::new();
    walk(v, &mut out);
    out
}

/// Whether item `i` is a quiet row: token usage, progress ticks, file-history snapshots and
/// finished messages without text, hidden by default (the feed title counts them; `.` shows them).
pub fn is_quiet(session: &Session, i: usize) -> bool {
    match session.items.get(i) {
        Some(Item::Event(f)) => {
            let t = f.frame_type.as_str();
            f.frame_type == FrameType::SessionUsage
                || t.ends_with(".progress")
                || t.ends_with(".file-history-snapshot")
        }
        // An agent message with no text (the turn only called tools).
        Some(Item::Message(m)) => m.done && !m.redacted && m.text.trim().is_empty(),
        Some(Item::Invocation(_)) | None => false,
    }
}

/// Whether item `i` is a visible row, given the filter and whether quiet rows show.
pub fn shows(filter: Option<&Filter>, show_quiet: bool, session: &Session, i: usize) -> bool {
    (show_quiet || !is_quiet(session, i)) && filter.is_none_or(|f| f.matches(session, i))
}

/// Whether item `i` is a failed call (for `e`/`E`).
pub fn is_error(session: &Session, i: usize) -> bool {
    match session.items.get(i) {
        Some(Item::Invocation(k)) => session.invocations[*k].status.is_failure(),
        Some(Item::Event(f)) => matches!(
            f.frame_type,
            FrameType::AgentError | FrameType::SessionError
        ),
        Some(Item::Message(_)) | None => false,
    }
}

/// Whether item `i` is a user prompt (for `p`/`P`).
pub fn is_prompt(session: &Session, i: usize) -> bool {
    matches!(session.items.get(i), Some(Item::Message(m)) if m.kind == MessageKind::Prompt)
}

/// Everything the user controls about the view.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ViewState {
    pub focus: Pane,
    pub tab: Tab,
    pub mode: Mode,
    pub help: bool,
    /// The detail pane takes the whole screen.
    pub zoom: bool,
    pub feed: FeedState,
    pub detail: DetailState,
    /// Scroll of the catalog / problems panel.
    pub panel_scroll: usize,
    /// Catalog panel: selected tool, detail scroll (`crate::ui::catalog`).
    pub catalog: crate::ui::catalog::CatalogState,
    /// Problems panel: selected finding (`crate::ui::problems`).
    pub problems: crate::ui::problems::ProblemsState,
    /// The active filter.
    pub filter: Option<Filter>,
    /// Show quiet rows (see [`is_quiet`]).
    pub show_quiet: bool,
    /// Quiet items in the session (shown in the feed title while hidden).
    pub quiet: usize,
    /// Item indices of the visible rows (ascending) while a filter is active or quiet rows are
    /// hidden; `None`: every item is a row.
    pub rows: Option<Vec<usize>>,
    /// The committed search regex source.
    pub search: Option<String>,
    /// The text being typed in search / filter mode.
    pub input: String,
    /// A one-off message for the status bar ("no more errors", a regex error).
    pub message: Option<String>,
}

impl ViewState {
    /// Number of visible rows.
    pub fn row_count(&self, session: &Session) -> usize {
        self.rows.as_ref().map_or(session.items.len(), Vec::len)
    }

    /// The item index of visible row `row`.
    pub fn item_at(&self, row: usize) -> Option<usize> {
        match &self.rows {
            Some(r) => r.get(row).copied(),
            None => Some(row),
        }
    }

    /// The visible row showing item `item`, if it is visible.
    pub fn row_of(&self, item: usize) -> Option<usize> {
        match &self.rows {
            Some(r) => r.binary_search(&item).ok(),
            None => Some(item),
        }
    }

    /// The selected item index, if any row exists.
    pub fn selected_item(&self, session: &Session) -> Option<usize> {
        if self.row_count(session) == 0 {
            return None;
        }
        self.item_at(self.feed.selected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_syntax() {
        assert_eq!(Filter::parse("  "), None);
        let f = Filter::parse("tool:Bash status:error cargo test").unwrap_or_default();
        assert_eq!(f.tool.as_deref(), Some("bash"));
        assert_eq!(f.status.as_deref(), Some("error"));
        assert_eq!(f.text.as_deref(), Some("cargo test"));
    }
}
