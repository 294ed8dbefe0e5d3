//! Search and filter parsing: the `/` search's smart-case regex and the `f` filter syntax
//! (`tool:NAME status:STATUS session:ID free text`), with one-line reasons for what does not
//! parse.
//!
//! Who calls it: the app (typing, committing, scans) and tests. The parsed [`Filter`] is plain
//! data kept in `ViewState`; matching rows reads the session through `session::query`.
//! Invariants: compiling is bounded (`size_limit`); a filter's text is a literal, never a regex.

use regex::{Regex, RegexBuilder};

use crate::session::query::{haystack, is_quiet, item_matches};
use crate::session::{CallStatus, Item, Session};

/// Compiles a search query: smart case (case-insensitive unless it has an upper-case letter).
/// Empty gives `Ok(None)`.
///
/// # Errors
/// The regex does not compile (message from the `regex` crate).
pub fn compile_search(q: &str) -> Result<Option<Regex>, regex::Error> {
    if q.is_empty() {
        return Ok(None);
    }
    let insensitive = !q.chars().any(char::is_uppercase);
    RegexBuilder::new(q)
        .case_insensitive(insensitive)
        .size_limit(1 << 20)
        .build()
        .map(Some)
}

/// A parsed feed filter: `tool:NAME status:STATUS session:ID free text` (all parts optional;
/// the kinds must all hold; several `tool:`, `status:` or `session:` words are alternatives, so
/// `tool:Bash tool:Read` keeps both tools).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Filter {
    /// As typed.
    pub raw: String,
    /// Tool names, case-insensitive substrings (any of them).
    pub tools: Vec<String>,
    /// Statuses (any of them): `running`, `ok`, `error` (error, timeout, other), `timeout`,
    /// `cancelled`, `findings`.
    pub statuses: Vec<String>,
    /// Sessions (any of them, SPEC §6, issue 24): the start of a session's name (its
    /// `session_id`, or its input's label), case-insensitive; every row of the session passes,
    /// its prompts and messages too.
    pub sessions: Vec<String>,
    /// Text that must occur (case-insensitive) in the row's searchable text.
    pub text: Option<String>,
    /// `text` compiled (a case-insensitive literal).
    pub text_re: Option<TextPattern>,
}

/// A compiled filter text; equal when the sources are.
#[derive(Debug, Clone)]
pub struct TextPattern(pub Regex);

impl PartialEq for TextPattern {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

impl Eq for TextPattern {}

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
        let mut it = raw.split_whitespace();
        while let Some(w) = it.next() {
            if let Some(t) = w.strip_prefix("tool:") {
                f.tools.push(t.to_lowercase());
            } else if let Some(t) = w.strip_prefix("session:").filter(|t| !t.is_empty()) {
                f.sessions.push(t.to_lowercase());
            } else if let Some(s) = w.strip_prefix("status:") {
                // `status:"no result"`: a quoted status runs to the word that closes the quote.
                let mut s = s.to_owned();
                if s.starts_with('"') && !(s.len() > 1 && s.ends_with('"')) {
                    for more in it.by_ref() {
                        s.push(' ');
                        s.push_str(more);
                        if more.ends_with('"') {
                            break;
                        }
                    }
                }
                f.statuses.push(status_word(&s));
            } else {
                words.push(w);
            }
        }
        if !words.is_empty() {
            let text = words.join(" ").to_lowercase();
            f.text_re = RegexBuilder::new(&regex::escape(&text))
                .case_insensitive(true)
                .build()
                .ok()
                .map(TextPattern);
            f.text = Some(text);
        }
        Some(f)
    }

    /// What is wrong with the filter as typed, for the status bar: an unknown `status:` value
    /// (it would silently match nothing).
    pub fn problem(&self) -> Option<String> {
        let unknown: Vec<&str> = self
            .statuses
            .iter()
            .filter(|s| {
                !STATUS_WORDS.contains(&s.as_str()) && !STATUS_ALIASES.contains(&s.as_str())
            })
            .map(String::as_str)
            .collect();
        (!unknown.is_empty()).then(|| {
            format!(
                "unknown status {}: use {}",
                unknown.join(", "),
                STATUS_WORDS
                    .iter()
                    .map(|w| if w.contains(' ') {
                        format!("\"{w}\"")
                    } else {
                        (*w).to_owned()
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }

    /// Whether feed item `i` passes. Non-invocation rows pass only a text-only filter.
    pub fn matches(&self, session: &Session, i: usize) -> bool {
        let Some(item) = session.items.get(i) else {
            return false;
        };
        if !self.sessions.is_empty() {
            let name = session
                .sessions
                .name(session.sessions.of_item(i))
                .to_lowercase();
            if !self.sessions.iter().any(|s| name.starts_with(s.as_str())) {
                return false;
            }
        }
        if !self.tools.is_empty() || !self.statuses.is_empty() {
            let Item::Invocation(k) = item else {
                return false;
            };
            let inv = &session.invocations[*k];
            if !self.tools.is_empty() {
                let name = inv.tool_name.to_lowercase();
                if !self.tools.iter().any(|t| name.contains(t.as_str())) {
                    return false;
                }
            }
            if !self.statuses.is_empty()
                && !self
                    .statuses
                    .iter()
                    .any(|s| status_matches(&inv.status, inv.findings, s))
            {
                return false;
            }
        }
        match (&self.text_re, &self.text) {
            (Some(re), _) => item_matches(session, i, &re.0),
            (None, Some(t)) => haystack(session, i).to_lowercase().contains(t.as_str()),
            (None, None) => true,
        }
    }
}

/// The `status:` words a filter offers: the words the feed, detail, `print` and `stats` show
/// (`CallStatus::word`), plus `findings`. `no result` is typed `status:"no result"` (or
/// `status:no_result`, `status:noresult`).
const STATUS_WORDS: &[&str] = &[
    "pending",
    "running",
    "no result",
    "ok",
    "error",
    "timeout",
    "cancelled",
    "findings",
];

/// Older or looser words still accepted (not offered): `open` (= running), `requested`
/// (= pending), `streaming`, `failed`/`fail` (= error), `finding`/`problem(s)`.
const STATUS_ALIASES: &[&str] = &[
    "open",
    "requested",
    "streaming",
    "failed",
    "fail",
    "finding",
    "problem",
    "problems",
];

/// A typed `status:` value in the form [`status_matches`] reads: lower case, quotes dropped,
/// `_`/`-` as a space, `noresult` as `no result`.
fn status_word(typed: &str) -> String {
    let s = typed
        .trim_matches('"')
        .to_lowercase()
        .replace(['_', '-'], " ");
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s == "noresult" {
        "no result".into()
    } else {
        s
    }
}

fn status_matches(status: &CallStatus, findings: u32, want: &str) -> bool {
    match want {
        // Every call still without a result: `running`/`pending` while the input goes on, `no
        // result` once it ended.
        "running" | "open" | "no result" => status.is_open(),
        "pending" | "requested" => *status == CallStatus::Requested,
        "streaming" => *status == CallStatus::Streaming,
        "error" | "failed" | "fail" => status.is_failure(),
        "findings" | "finding" | "problem" | "problems" => findings > 0,
        other => status.label().eq_ignore_ascii_case(other),
    }
}

/// A one-line reason for a search regex that does not compile, e.g. `unclosed group at 4`
/// (1-based column of the offending character). The `regex` crate's own message spans several
/// lines (the pattern, a caret line, the error); this one fits the status bar. `insensitive`
/// must match how it was compiled (see [`compile_search`]).
pub fn regex_problem(q: &str, insensitive: bool, err: &regex::Error) -> String {
    match err {
        regex::Error::CompiledTooBig(limit) => format!(
            "too big once compiled (over {} KiB): make it more specific",
            limit / 1024
        ),
        regex::Error::Syntax(full) => {
            let parsed = regex_syntax::ParserBuilder::new()
                .case_insensitive(insensitive)
                .build()
                .parse(q);
            let (kind, span) = match &parsed {
                Err(regex_syntax::Error::Parse(e)) => (e.kind().to_string(), *e.span()),
                Err(regex_syntax::Error::Translate(e)) => (e.kind().to_string(), *e.span()),
                // The `regex` crate's last line names the error.
                _ => {
                    let last = full.lines().rev().find(|l| !l.trim().is_empty());
                    let last = last.unwrap_or(full).trim();
                    return last.strip_prefix("error: ").unwrap_or(last).to_owned();
                }
            };
            format!("{kind} at {}", span.start.column)
        }
        other => other
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned(),
    }
}

/// Whether item `i` is a visible row, given the filter and whether quiet rows show.
pub fn shows(filter: Option<&Filter>, show_quiet: bool, session: &Session, i: usize) -> bool {
    (show_quiet || !is_quiet(session, i)) && filter.is_none_or(|f| f.matches(session, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `session:` keeps every row of the sessions whose name starts with the word (any case),
    /// prompts and messages included; with `tool:` both must hold.
    #[test]
    fn session_words_keep_their_sessions_rows() {
        let text = [
            r#"{"type":"control.prompt.request","session_id":"aaaa-1","payload":{"text":"p"}}"#,
            r#"{"type":"tool.invoke.request","session_id":"bbbb-2","payload":{"invocation_id":"i","tool_name":"Bash","input":{}}}"#,
            r#"{"type":"tool.invoke.request","session_id":"aaaa-1","payload":{"invocation_id":"j","tool_name":"Read","input":{}}}"#,
        ]
        .join("\n");
        let session = Session::from_decoded(crate::import::load_bytes(text.as_bytes()).items);
        let rows = |f: &str| -> Vec<usize> {
            let f = Filter::parse(f).unwrap();
            (0..session.items.len())
                .filter(|&i| f.matches(&session, i))
                .collect()
        };
        assert_eq!(rows("session:AAAA"), vec![0, 2]);
        assert_eq!(rows("session:bbbb-2"), vec![1]);
        assert_eq!(rows("session:aaaa tool:Bash"), Vec::<usize>::new());
        assert_eq!(rows("session:bbbb session:aaaa tool:read"), vec![2]);
    }

    #[test]
    fn smart_case() {
        let re = compile_search("foo").unwrap().unwrap();
        assert!(re.is_match("FOO"));
        let re = compile_search("Foo").unwrap().unwrap();
        assert!(!re.is_match("foo"));
        assert!(compile_search("(").is_err());
        assert!(compile_search("").unwrap().is_none());
    }

    #[test]
    fn filter_syntax() {
        assert_eq!(Filter::parse("  "), None);
        let f = Filter::parse("tool:Bash status:error cargo test").unwrap_or_default();
        assert_eq!(f.tools, ["bash"]);
        assert_eq!(f.statuses, ["error"]);
        assert_eq!(f.text.as_deref(), Some("cargo test"));
        assert_eq!(f.problem(), None);
        // Several tools (or statuses) are alternatives; an unknown status is named.
        let f = Filter::parse("tool:Bash tool:Read status:bogus").unwrap_or_default();
        assert_eq!(f.tools, ["bash", "read"]);
        assert_eq!(
            f.problem().as_deref(),
            Some(
                r#"unknown status bogus: use pending, running, "no result", ok, error, timeout, cancelled, findings"#
            )
        );
        // The feed's words are accepted as shown (attack 9 #4), quoted or joined; old words
        // stay aliases.
        for typed in [
            r#"status:"no result" cargo"#,
            "status:no_result cargo",
            "status:noresult cargo",
            "status:No-Result cargo",
        ] {
            let f = Filter::parse(typed).unwrap_or_default();
            assert_eq!(
                (f.statuses.clone(), f.text.clone(), f.problem()),
                (vec!["no result".to_owned()], Some("cargo".to_owned()), None),
                "{typed}"
            );
        }
        let f = Filter::parse("status:requested status:streaming status:open").unwrap_or_default();
        assert_eq!(f.problem(), None);
    }

    #[test]
    fn several_tools_keep_each_of_them() {
        let items = crate::import::load_bytes(crate::source::DEMO.as_bytes()).items;
        let session = Session::from_decoded(items);
        let count = |raw: &str| {
            let f = Filter::parse(raw).unwrap_or_default();
            (0..session.items.len())
                .filter(|&i| f.matches(&session, i))
                .count()
        };
        let (bash, read) = (count("tool:Bash"), count("tool:Read"));
        assert!(bash > 0 && read > 0);
        assert_eq!(count("tool:Bash tool:Read"), bash + read);
        assert_eq!(count("status:bogus"), 0);
    }
}

#[cfg(test)]
mod regex_problem_tests {
    use super::regex_problem;

    fn why(q: &str) -> String {
        let insensitive = !q.chars().any(char::is_uppercase);
        match super::compile_search(q) {
            Ok(_) => "compiles".into(),
            Err(e) => regex_problem(q, insensitive, &e),
        }
    }

    #[test]
    fn bad_regexes_get_one_line_with_the_column() {
        for q in [
            "foo(",
            "a)b",
            "*x",
            "[abc",
            r"\p{Nope}",
            "x{2,1}",
            r"\q",
            "(?<n>a)(?<n>b)",
        ] {
            let w = why(q);
            assert!(!w.contains('\n'), "{q}: {w}");
            eprintln!("{q:?} -> {w}");
        }
        assert_eq!(why("foo("), "unclosed group at 4");
        assert_eq!(why("(a|b"), "unclosed group at 1");
        assert_eq!(why("ok"), "compiles");
        // Columns count characters, not bytes.
        assert_eq!(why("é€("), "unclosed group at 3");
        assert_eq!(
            why(&"a{1000}".repeat(20)),
            "too big once compiled (over 1024 KiB): make it more specific"
        );
    }
}
