//! Questions the viewer asks of a session's items: is it quiet, an error, a prompt, the start
//! of a turn; its searchable text, and whether a regex matches it.
//!
//! Who calls it: the view (`view.rs`: rows, folds), the search and filter scans (`app/scan.rs`,
//! `query.rs`), the feed widget and `print`. Invariants: pure reads of the session; a deferred
//! input or output is read back from the file (search is a user action, not the draw path).

use regex::Regex;

use super::{Item, MessageKind, Session};
use crate::protocol::FrameType;

/// The searchable text of a feed item: tool name, input and output JSON, stream text, the
/// call's hook runs (name, command, output, stderr: each at most
/// [`super::hooks::MAX_HOOK_SEARCH`] bytes, 64 KiB), message text, event payload. Built on
/// demand (search and filter are user actions, not the draw path).
pub fn haystack(session: &Session, i: usize) -> String {
    let mut s = own_text(session, i);
    if let Some(Item::Invocation(k)) = session.items.get(i) {
        for run in session.hooks.of(&session.invocations[*k].invocation_id) {
            for t in run.search_texts() {
                s.push('\n');
                s.push_str(t);
            }
        }
    }
    s
}

/// [`haystack`] without a call's hooks: the text of the item's own records (a call's request,
/// result and stream), what the library index reads back from those records' lines.
pub fn own_text(session: &Session, i: usize) -> String {
    match session.items.get(i) {
        None => String::new(),
        Some(Item::Invocation(k)) => {
            let inv = &session.invocations[*k];
            let mut s = inv.tool_name.clone();
            s.push('\n');
            s.push_str(&json_text(&session.input(inv)));
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

/// Whether `re` matches the searchable text of item `i` (the parts [`haystack`] joins: tool
/// name, input and output strings and keys, stream text, the call's hook runs' texts as
/// [`haystack`] bounds them, message text, event type and payload), each part on its own and
/// without building the joined text: search and filter scans stay allocation-free for all but
/// multi-chunk streams. A match cannot span two parts.
pub fn item_matches(session: &Session, i: usize, re: &Regex) -> bool {
    own_matches(session, i, re)
        || matches!(session.items.get(i), Some(Item::Invocation(k))
            if session.hooks.of(&session.invocations[*k].invocation_id)
                .any(|run| run.search_texts().iter().any(|t| re.is_match(t))))
}

/// [`item_matches`] on [`own_text`]'s parts (a call's hooks left out): what the library index
/// finds.
pub fn own_matches(session: &Session, i: usize, re: &Regex) -> bool {
    match session.items.get(i) {
        None => false,
        Some(Item::Invocation(k)) => {
            let inv = &session.invocations[*k];
            re.is_match(&inv.tool_name)
                || json_matches(&session.input(inv), re)
                // A deferred output is read back from the file (one read per such call).
                || session.output(inv).is_some_and(|o| json_matches(&o, re))
                || match inv.stream.len() {
                    0 => false,
                    1 => inv.stream.chunks().any(|one| re.is_match(&one.text)),
                    _ => re.is_match(&inv.stream.text(None)),
                }
        }
        Some(Item::Message(m)) => re.is_match(&m.text),
        Some(Item::Event(f)) => {
            re.is_match(f.frame_type.as_str())
                || match &f.body {
                    crate::protocol::Body::Generic(m) => {
                        m.iter().any(|(k, v)| re.is_match(k) || json_matches(v, re))
                    }
                    crate::protocol::Body::Request(_)
                    | crate::protocol::Body::Stream(_)
                    | crate::protocol::Body::Result(_)
                    | crate::protocol::Body::Catalog(_) => json_matches(&f.payload_json(), re),
                }
        }
    }
}

fn json_matches(v: &serde_json::Value, re: &Regex) -> bool {
    use serde_json::Value;
    match v {
        Value::String(s) => re.is_match(s),
        Value::Array(a) => a.iter().any(|x| json_matches(x, re)),
        Value::Object(o) => o.iter().any(|(k, x)| re.is_match(k) || json_matches(x, re)),
        Value::Null => false,
        Value::Bool(_) | Value::Number(_) => re.is_match(&v.to_string()),
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

/// Whether item `i` is a quiet row: token usage, progress ticks, file-history snapshots, rows
/// an importer marked `metadata.rawpv_quiet` (a Claude Code hook run shown in its call's detail,
/// context Claude Code attached), a
/// derived catalog published again with one more tool (`metadata.rawpv_derived_update`, Claude
/// Code transcripts) and finished messages without text, hidden by default (the feed title
/// counts them; `.` shows them).
pub fn is_quiet(session: &Session, i: usize) -> bool {
    match session.items.get(i) {
        Some(Item::Event(f)) => {
            let t = f.frame_type.as_str();
            f.frame_type == FrameType::SessionUsage
                || t.ends_with(".progress")
                || t.ends_with(".file-history-snapshot")
                || f.envelope.metadata.get("rawpv_quiet") == Some(&serde_json::Value::Bool(true))
                || (f.frame_type == FrameType::ToolCatalogPublish
                    && f.envelope.metadata.get("rawpv_derived_update")
                        == Some(&serde_json::Value::Bool(true)))
        }
        // An agent message with no text (the turn only called tools).
        Some(Item::Message(m)) => m.done && !m.redacted && m.text.trim().is_empty(),
        Some(Item::Invocation(_)) | None => false,
    }
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

/// Whether `e`/`E` stop at item `i`: a failed call or error ([`is_error`]), or a call a hook
/// of which failed (its row says `hook failed · `; the call itself may have succeeded, so it is
/// not counted among a turn's errors). One hash probe more than [`is_error`].
pub fn is_error_stop(session: &Session, i: usize) -> bool {
    is_error(session, i)
        || matches!(session.items.get(i), Some(Item::Invocation(k))
            if session.hooks.failed(&session.invocations[*k].invocation_id) > 0)
}

/// Whether item `i` starts a turn: a prompt of the main agent (a subagent's prompt, inside a
/// Task call, belongs to the turn that spawned it), or a fork row (a Claude Code branch).
pub fn is_turn_start(session: &Session, i: usize) -> bool {
    match session.items.get(i) {
        Some(Item::Message(m)) => m.kind == MessageKind::Prompt && m.delegation_chain.is_empty(),
        // A fork row starts a branch: the earlier branch's turn ends before it (issue 16).
        Some(Item::Event(f)) => is_fork_row(f),
        Some(Item::Invocation(_)) | None => false,
    }
}

/// Whether `f` is a Claude Code fork point's row (`x-claude-code.fork`, branch 2's frame; see
/// `super::forks`).
pub fn is_fork_row(f: &crate::protocol::Frame) -> bool {
    super::forks::is_fork_row(f)
}

/// Whether item `i` is a compaction row (`session.compacted`, `control.session.compact`; for
/// `C`).
pub fn is_compaction(session: &Session, i: usize) -> bool {
    matches!(session.items.get(i), Some(Item::Event(f)) if matches!(
        f.frame_type,
        FrameType::SessionCompacted | FrameType::ControlSessionCompact
    ))
}

/// Whether `f` is an image placeholder row (`x-<agent>.image`; its bytes stay in the file).
pub fn is_image_row(f: &crate::protocol::Frame) -> bool {
    f.frame_type
        .as_str()
        .rsplit_once('.')
        .is_some_and(|(p, k)| p.starts_with("x-") && k == "image")
}

/// Whether item `i` is a user prompt (for `p`/`P`).
pub fn is_prompt(session: &Session, i: usize) -> bool {
    matches!(session.items.get(i), Some(Item::Message(m)) if m.kind == MessageKind::Prompt)
}

/// Token totals of the `session.usage` rows seen (cumulative: rows dropped by compaction stay
/// counted), for the status bar while usage rows are hidden; a `scope: "session_total"` row is a
/// restatement of the others and is not added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    /// Usage rows counted.
    pub rows: u64,
    /// Their cost (`crate::usage::price::table`; rows of models without a price are counted
    /// in `unpriced_tokens`, never at 0).
    pub cost: crate::usage::price::Cost,
}

impl Tokens {
    /// Adds item `i` when it is a usage row. O(1).
    pub fn add(&mut self, session: &Session, i: usize) {
        if let Some(Item::Event(f)) = session.items.get(i) {
            self.add_frame(f);
        }
    }

    /// Adds frame `f` when it is a `session.usage` frame (an event row's frame; `rawpv stats`
    /// counts them as they are folded, `crate::session::tally`).
    pub fn add_frame(&mut self, f: &crate::protocol::Frame) {
        if f.frame_type != FrameType::SessionUsage {
            return;
        }
        let owned;
        let p = match &f.body {
            crate::protocol::Body::Generic(m) => m,
            crate::protocol::Body::Request(_)
            | crate::protocol::Body::Stream(_)
            | crate::protocol::Body::Result(_)
            | crate::protocol::Body::Catalog(_) => {
                owned = match f.payload_json() {
                    serde_json::Value::Object(m) => m,
                    _ => return,
                };
                &owned
            }
        };
        // A run's total (`scope: "session_total"`, stream-json's `result`) restates what its
        // messages' rows already counted: shown on its row, never added (attack 5: stream-json
        // tokens were doubled).
        if p.get("scope").and_then(serde_json::Value::as_str) == Some("session_total") {
            return;
        }
        let n = |k: &str| p.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
        // Saturating: two usage rows of 2^63 tokens wrapped to `0 in · 0 out` (issue 14.15).
        self.input = self
            .input
            .saturating_add(n("input_tokens"))
            .saturating_add(n("cache_creation_input_tokens"));
        self.output = self.output.saturating_add(n("output_tokens"));
        self.cache_read = self.cache_read.saturating_add(n("cache_read_input_tokens"));
        self.rows += 1;
        let t = crate::usage::price::Tokens::of_payload(p);
        let model = p.get("model").and_then(serde_json::Value::as_str);
        self.cost.add(&crate::usage::price::table().cost(model, &t));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In a file-backed session inputs and outputs stay in the file: search reads them back.
    #[test]
    fn search_reads_deferred_inputs_and_outputs() {
        let path = std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/check_clean.ndjson"
        ));
        let (s, _) = crate::source::file::fold_path(path).expect("fixture");
        let inv = s
            .invocations
            .iter()
            .find(|i| i.tool_name == "Bash")
            .expect("Bash");
        assert!(inv.input_span.is_some() && inv.input.is_null());
        let re = |p: &str| Regex::new(p).expect("regex");
        assert!(item_matches(&s, inv.item, &re("^ls$")));
        assert!(haystack(&s, inv.item).contains("command: ls\n"));
        let out = s.output(inv).expect("output").into_owned();
        let word = out
            .as_str()
            .and_then(|o| o.split_whitespace().next())
            .expect("text");
        assert!(item_matches(&s, inv.item, &re(&regex::escape(word))));
        assert!(!item_matches(&s, inv.item, &re("no such text anywhere")));
    }
}
