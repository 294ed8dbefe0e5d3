//! Full-text search over the library: a pattern's words find candidate documents in the
//! index, and every candidate is verified against the decoded text of its session file, so
//! what is listed is exactly what the text holds.
//!
//! Pattern (issue 27 item 5; `rawpv search --help` and the README say the same): words
//! separated by spaces, all required (AND); a word matches a whole token of the text (letters
//! and digits; case is ignored), `word*` any token starting with `word`, `"two words"` the
//! words in that order with only spaces or punctuation between. A word holding punctuation
//! (`foo.rs`, `--force`) matches those characters exactly between its tokens. A `--regex`
//! narrows the hits further (Rust `regex` syntax, matched on each document's text); with no
//! words every document is a candidate (then every file is read).
//!
//! Who calls it: `rawpv search` (`crate::cmd::search`) and the browser's `/`.
//!
//! Invariants: the index only narrows (a document whose words are all in the index is a
//! candidate; the verification decides); snippets are cut from the text read back from the
//! file, on one line, controls shown as pictures, never obeyed; match ranges are byte ranges
//! of the snippet.

use std::collections::BTreeMap;
use std::path::PathBuf;

use regex::Regex;

use super::store::{Candidate, Filter, SessionRow, Store};

/// A token's characters, as FTS5's `unicode61` tokenizer reads them: letters, numbers and
/// private-use characters.
const TOKEN: &str = r"[\p{L}\p{N}\p{Co}]";

/// A parsed pattern.
#[derive(Debug, Clone)]
pub struct Query {
    /// What the user typed.
    pub pattern: String,
    /// The index's tokens (all required; `tok*` a prefix).
    tokens: Vec<String>,
    /// Each term's verification regex (all must match).
    checks: Vec<Regex>,
    /// `--regex`.
    regex: Option<Regex>,
}

fn is_token_char(c: char) -> bool {
    c.is_alphanumeric() || ('\u{E000}'..='\u{F8FF}').contains(&c)
}

/// The tokens of `s` (runs of token characters), as typed: FTS5 folds the case of a query's
/// tokens as it folded the text's, and Rust's lower-casing would not agree with it (`İ`
/// lower-cases to `i` and a combining dot, which FTS5 reads as a separator; attack 11 #4).
fn tokens_of(s: &str) -> Vec<String> {
    s.split(|c: char| !is_token_char(c))
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `s` in Unicode's composed form (NFC), borrowed when it already is (all ASCII text, most
/// other text). The index's words and every text searched are composed first, so `é` typed
/// as one character finds an `e` followed by a combining accent, and back (attack 11 #4).
pub fn composed(s: &str) -> std::borrow::Cow<'_, str> {
    use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};
    if s.is_ascii() || is_nfc_quick(s.chars()) == IsNormalized::Yes {
        std::borrow::Cow::Borrowed(s)
    } else {
        std::borrow::Cow::Owned(s.nfc().collect())
    }
}

impl Query {
    /// Parses `pattern` (module docs) and an optional `--regex`.
    ///
    /// # Errors
    /// An unclosed quote, a pattern with neither a word nor a regex, a bad regex.
    pub fn parse(pattern: &str, regex: Option<&str>) -> Result<Self, String> {
        let typed = pattern;
        let pattern = &*composed(pattern);
        let mut terms: Vec<(String, bool, bool)> = Vec::new(); // (text, phrase, prefix)
        let mut rest = pattern.trim();
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix('"') {
                let Some(end) = r.find('"') else {
                    return Err(format!("unclosed quote in {pattern:?}"));
                };
                let (phrase, after) = (&r[..end], &r[end + 1..]);
                let prefix = after.starts_with('*');
                terms.push((phrase.to_owned(), true, prefix));
                rest = after.trim_start_matches('*').trim_start();
            } else {
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                let w = &rest[..end];
                let prefix = w.ends_with('*') && w.len() > 1;
                terms.push((w.trim_end_matches('*').to_owned(), false, prefix));
                rest = rest[end..].trim_start();
            }
        }
        let regex = regex
            .map(|r| Regex::new(r).map_err(|e| format!("bad --regex: {e}")))
            .transpose()?;
        let mut tokens = Vec::new();
        let mut checks = Vec::new();
        for (text, phrase, prefix) in terms {
            let toks = tokens_of(&text);
            if toks.is_empty() {
                continue;
            }
            let n = toks.len();
            for (k, t) in toks.iter().enumerate() {
                tokens.push(if prefix && k + 1 == n {
                    format!("{t}*")
                } else {
                    t.clone()
                });
            }
            // The verification: the term's own characters between its tokens for a word
            // (`foo.rs`), any separators for a phrase; whole tokens, but for a prefix's last.
            let body = if phrase {
                toks.iter()
                    .map(|t| regex::escape(t))
                    .collect::<Vec<_>>()
                    .join(&format!("(?:[^{}]|_)+", &TOKEN[1..TOKEN.len() - 1]))
            } else {
                let lead = text.trim_start_matches(|c: char| !is_token_char(c));
                let core = lead.trim_end_matches(|c: char| !is_token_char(c));
                regex::escape(core)
            };
            let end = if prefix {
                String::new()
            } else {
                format!("(?:$|[^{}])", &TOKEN[1..TOKEN.len() - 1])
            };
            let re = format!("(?i)(?:^|[^{}]){body}{end}", &TOKEN[1..TOKEN.len() - 1]);
            checks.push(Regex::new(&re).map_err(|e| format!("cannot search for {text:?}: {e}"))?);
        }
        if tokens.is_empty() && regex.is_none() {
            return Err("nothing to search for: give a word or --regex".into());
        }
        Ok(Self {
            pattern: typed.to_owned(),
            tokens,
            checks,
            regex,
        })
    }

    /// Whether `text` holds every term (and matches the regex). `text` is composed
    /// ([`composed`]) by the caller.
    pub fn matches(&self, text: &str) -> bool {
        self.checks.iter().all(|c| c.is_match(text))
            && self.regex.as_ref().is_none_or(|r| r.is_match(text))
    }

    /// The byte ranges of `text` the terms and the regex match (for highlighting), sorted.
    pub fn ranges(&self, text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for c in &self.checks {
            for m in c.find_iter(text) {
                // The boundary characters the check matched around the term are not marked.
                let s = &text[m.start()..m.end()];
                let lead = s.len() - s.trim_start_matches(|c: char| !is_token_char(c)).len();
                let tail = s.len() - s.trim_end_matches(|c: char| !is_token_char(c)).len();
                if m.start() + lead < m.end() - tail {
                    out.push((m.start() + lead, m.end() - tail));
                }
            }
        }
        if let Some(r) = &self.regex {
            out.extend(
                r.find_iter(text)
                    .filter(|m| !m.is_empty())
                    .map(|m| (m.start(), m.end())),
            );
        }
        out.sort_unstable();
        out
    }
}

/// One verified hit.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Hit {
    pub path: PathBuf,
    /// The document's row in the decoded session (`Session::items`).
    pub item: u32,
    /// Its source line (1-based).
    pub line: u64,
    /// `prompt`, `text`, `thinking` or `call`.
    pub kind: String,
    /// The call's tool (empty for messages).
    pub tool: String,
    /// Epoch ms.
    pub ts: Option<i64>,
    /// One line of the text around the first match.
    pub snippet: String,
    /// Byte ranges of `snippet` that matched.
    pub marks: Vec<(usize, usize)>,
}

/// Characters of context kept before the first match in a snippet.
pub const BEFORE: usize = 40;
/// Characters of a snippet in all.
pub const SNIPPET_CHARS: usize = 160;

/// The snippet of `text` around its first match `ranges[0]`: whitespace runs as one space,
/// controls and invisible characters as pictures (`crate::render::ansi::visible_plain`'s
/// rule, one character each), with the matches inside it as byte ranges.
pub fn snippet(text: &str, ranges: &[(usize, usize)]) -> (String, Vec<(usize, usize)>) {
    let first = ranges.first().map_or(0, |r| r.0);
    // Start BEFORE characters before the match.
    let start = text[..first]
        .char_indices()
        .rev()
        .nth(BEFORE.saturating_sub(1))
        .map_or(0, |(i, _)| i);
    let mut out = String::new();
    let mut marks = Vec::new();
    let mut open: Option<usize> = None;
    let mut chars = 0usize;
    let mut last_space = true;
    let mut r = ranges.iter().peekable();
    if start > 0 {
        out.push('…');
    }
    for (i, c) in text[start..].char_indices() {
        let at = start + i;
        while r.peek().is_some_and(|x| x.1 <= at) {
            r.next();
        }
        let inside = r.peek().is_some_and(|x| x.0 <= at && at < x.1);
        match (inside, open) {
            (true, None) => open = Some(out.len()),
            (false, Some(s)) => {
                marks.push((s, out.len()));
                open = None;
            }
            _ => {}
        }
        if chars >= SNIPPET_CHARS {
            break;
        }
        if c.is_whitespace() {
            if !last_space {
                out.push(' ');
                chars += 1;
            }
            last_space = true;
            continue;
        }
        last_space = false;
        chars += 1;
        if c.is_control() {
            out.push(
                char::from_u32(0x2400 + c as u32)
                    .filter(|_| (c as u32) < 0x20)
                    .unwrap_or('\u{FFFD}'),
            );
        } else if crate::finding::is_invisible_format(c) {
            out.push('\u{FFFD}');
        } else {
            out.push(c);
        }
    }
    if let Some(s) = open {
        marks.push((s, out.len()));
    }
    let cut = text.len() > start && chars >= SNIPPET_CHARS;
    if cut {
        out.push('…');
    }
    marks.retain(|m| m.0 < m.1);
    (out, marks)
}

/// Searches: the index's candidates for `q` under `filter` (every document when `q` has no
/// words), each verified against its session file read again; at most `limit` hits, newest
/// session first, in file order within a session. Candidates whose file changed or went are
/// dropped (the index is updated before a search).
///
/// # Errors
/// The store's error.
pub fn search(
    store: &dyn Store,
    q: &Query,
    filter: &Filter,
    limit: Option<usize>,
) -> Result<Vec<Hit>, String> {
    search_until(store, q, filter, limit, &|| false)
}

/// [`search`], given up once `stop` says so (asked before each candidate is taken): the hits
/// verified until then (a search superseded by a newer one, `crate::library::searcher`).
///
/// # Errors
/// The store's error.
pub fn search_until(
    store: &dyn Store,
    q: &Query,
    filter: &Filter,
    limit: Option<usize>,
    stop: &dyn Fn() -> bool,
) -> Result<Vec<Hit>, String> {
    // The candidates come sorted by session, then file order, so one file's are consecutive:
    // each file's are verified when the next file's begin, and the rows stop being read once
    // `limit` hits are verified.
    let mut hits: Vec<Hit> = Vec::new();
    let mut group: Vec<Candidate> = Vec::new();
    let full = |hits: &Vec<Hit>| limit.is_some_and(|l| hits.len() >= l);
    let mut each = |c: Candidate| {
        if stop() {
            group.clear();
            return false;
        }
        if group.first().is_some_and(|g| g.path != c.path) {
            let need = limit.map(|l| l - hits.len());
            hits.extend(verify_some(&group, q, need));
            group.clear();
            if full(&hits) {
                return false;
            }
        }
        group.push(c);
        true
    };
    if q.tokens.is_empty() {
        store.each_doc(filter, &mut each)?;
    } else {
        store.each_candidate(&q.tokens, filter, &mut each)?;
    }
    if !group.is_empty() && !full(&hits) {
        let need = limit.map(|l| l - hits.len());
        hits.extend(verify_some(&group, q, need));
    }
    if let Some(l) = limit {
        hits.truncate(l);
    }
    Ok(hits)
}

/// The hits among `cands` (one file's documents, in file order), at least `need` of them when
/// there are (all when `None`): verified a slice at a time, so a word in every call of a big
/// file reads back only the calls a screen of hits needs.
fn verify_some(cands: &[Candidate], q: &Query, need: Option<usize>) -> Vec<Hit> {
    let Some(first) = cands.first() else {
        return Vec::new();
    };
    let Some(need) = need else {
        return verify(&first.path, cands, q);
    };
    let mut out = Vec::new();
    let mut at = 0;
    while at < cands.len() && out.len() < need {
        let n = (need - out.len()).max(16);
        let slice = &cands[at..(at + n).min(cands.len())];
        at += slice.len();
        if slice.iter().any(|c| c.recipe.is_none()) {
            // The whole file is folded anyway: all its candidates at once.
            out.extend(verify(&first.path, &cands[at - slice.len()..], q));
            break;
        }
        out.extend(verify(&first.path, slice, q));
    }
    out
}

/// Whether a file of `format` holds one record a line that its decoder reads on its own (so
/// a document can be read back from its lines: [`texts_by_line`]).
pub fn by_line(format: crate::import::Format) -> bool {
    use crate::import::Format as F;
    matches!(
        format,
        F::RawpNdjson
            | F::ClaudeCode
            | F::ClaudeStreamJson
            | F::CodexRollout
            | F::CodexExec
            | F::GeminiStreamJson
    )
}

/// A document to read back from its lines: its `line`, `kind` and recipe
/// ([`super::store::Doc::recipe`]).
#[derive(Debug, Clone, Copy)]
pub struct ByLine<'a> {
    pub line: u64,
    pub kind: &'a str,
    pub recipe: &'a str,
}

/// The texts of `docs` of the file at `path` ([`super::index::doc_text`], composed), read from
/// their own lines only: those lines, in file order and with their own numbers, go through the
/// format's decoder and the reducer, and each document is the `ordinal`-th of its kind on its
/// line there. `None` when the file cannot be read, is not of a [`by_line`] format, a recipe
/// does not parse, or a document is not found (the file changed): the caller folds the whole
/// file. The library's oracle test holds these texts equal to the whole file's for every
/// corpus session.
pub fn texts_by_line(path: &std::path::Path, docs: &[ByLine<'_>]) -> Option<Vec<Option<String>>> {
    use std::collections::{BTreeSet, HashMap};
    let mut wanted: Vec<(u64, &str, u32)> = Vec::with_capacity(docs.len());
    let mut lines: BTreeSet<u64> = BTreeSet::new();
    for d in docs {
        let (ordinal, extra) = d.recipe.split_once(':').unwrap_or((d.recipe, ""));
        wanted.push((d.line, d.kind, ordinal.parse().ok()?));
        lines.insert(d.line);
        for l in extra.split(',').filter(|l| !l.is_empty()) {
            lines.insert(l.parse().ok()?);
        }
    }
    let last = *lines.last()?;
    let bytes = std::fs::read(path).ok()?;
    let format = crate::import::detect(&bytes[..bytes.len().min(64 * 1024)]);
    if !by_line(format) {
        return None;
    }
    let mut dec = crate::import::decoder_for(format);
    let mut items = Vec::new();
    let mut n = 0u64;
    for raw in bytes.split(|&b| b == b'\n') {
        n += 1;
        if n > last {
            break;
        }
        if !lines.contains(&n) {
            continue;
        }
        let raw = crate::import::without_bom(n, raw.strip_suffix(b"\r").unwrap_or(raw));
        let text = crate::import::line_text(raw, n, &mut items);
        dec.line(n, &text, &mut items);
    }
    dec.finish(&mut items);
    let s = crate::session::Session::from_decoded(items);
    let mut at: HashMap<(&str, u64, u32), usize> = HashMap::new();
    let mut count: HashMap<(&str, u64), u32> = HashMap::new();
    for (i, item) in s.items.iter().enumerate() {
        let Some(kind) = super::index::doc_kind(&s, i) else {
            continue;
        };
        let line = match item {
            crate::session::Item::Message(m) => m.line,
            crate::session::Item::Invocation(k) => s.invocations[*k].request_line,
            crate::session::Item::Event(_) => continue,
        };
        let k = count.entry((kind, line)).or_default();
        at.insert((kind, line, *k), i);
        *k += 1;
    }
    wanted
        .iter()
        .map(|&(line, kind, ordinal)| {
            let i = *at.get(&(kind, line, ordinal))?;
            Some(super::index::doc_text(&s, i).map(|t| composed(&t).into_owned()))
        })
        .collect()
}

/// The hits among `cands` (documents of `path`): each candidate's text read back from its own
/// lines when every candidate has a recipe ([`texts_by_line`]), else from the whole file
/// folded again, and checked.
pub fn verify(path: &std::path::Path, cands: &[Candidate], q: &Query) -> Vec<Hit> {
    let by_line: Option<Vec<ByLine<'_>>> = cands
        .iter()
        .map(|c| {
            Some(ByLine {
                line: c.line,
                kind: &c.kind,
                recipe: c.recipe.as_deref()?,
            })
        })
        .collect();
    let texts = if let Some(t) = by_line.and_then(|d| texts_by_line(path, &d)) {
        t
    } else {
        let Ok((s, _)) = crate::source::file::fold_path(path) else {
            return Vec::new();
        };
        cands
            .iter()
            .map(|c| super::index::doc_text(&s, c.item as usize).map(|t| composed(&t).into_owned()))
            .collect()
    };
    let mut out = Vec::new();
    for (c, text) in cands.iter().zip(texts) {
        let Some(text) = text else {
            continue;
        };
        if !q.matches(&text) {
            continue;
        }
        let (snippet, marks) = snippet(&text, &q.ranges(&text));
        out.push(Hit {
            path: path.to_path_buf(),
            item: c.item,
            line: c.line,
            kind: c.kind.clone(),
            tool: c.tool.clone(),
            ts: c.ts,
            snippet,
            marks,
        });
    }
    out
}

/// The sessions of the hits, by path (for headings).
pub fn sessions_of(
    store: &dyn Store,
    filter: &Filter,
) -> Result<BTreeMap<PathBuf, SessionRow>, String> {
    Ok(store
        .sessions(filter)?
        .into_iter()
        .map(|r| (r.path.clone(), r))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_prefixes_and_phrases() {
        let q = Query::parse("xterm", None).unwrap();
        assert!(q.matches("run XTERM now"));
        assert!(q.matches("(xterm)"));
        assert!(
            q.matches("foo_xterm"),
            "an underscore separates tokens, as in FTS5"
        );
        assert!(!q.matches("xterms"));
        let q = Query::parse("xter*", None).unwrap();
        assert!(q.matches("xterms"));
        assert!(!q.matches("axterm"));
        let q = Query::parse("\"cargo test\" fail", None).unwrap();
        assert!(q.matches("ran cargo  test: fail"));
        assert!(!q.matches("test cargo fail"));
        assert!(!q.matches("cargo test"));
        let q = Query::parse("main.rs", None).unwrap();
        assert!(q.matches("src/main.rs:3"));
        assert!(!q.matches("main rs"));
        assert_eq!(q.tokens, vec!["main".to_owned(), "rs".to_owned()]);
        assert!(Query::parse("\"open", None).is_err());
        assert!(Query::parse("  ", None).is_err());
        let q = Query::parse("", Some("x[0-9]+")).unwrap();
        assert!(q.matches("ax12") && !q.matches("ax"));
    }

    #[test]
    fn a_snippet_is_one_visible_line_with_its_marks() {
        let text = format!(
            "{}\n\nfind the \u{1b}[31m needle here{}",
            "a ".repeat(50),
            " b".repeat(100)
        );
        let q = Query::parse("needle", None).unwrap();
        let (s, marks) = snippet(&text, &q.ranges(&text));
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        assert!(!s.contains('\u{1b}') && s.contains('\u{241b}'), "{s}");
        assert_eq!(marks.len(), 1);
        assert_eq!(&s[marks[0].0..marks[0].1], "needle");
    }
}
