//! Secret redaction (issue 26 item 3): known secret shapes in text become `[REDACTED: kind]`.
//!
//! Who calls it: `rawpv export` (on by default, `--no-redact`), `rawpv print --redact`, and the
//! viewer's redacting copy (`crate::app`). The rules are gitleaks' default rule set
//! (`src/redact/gitleaks.toml`, gitleaks v8.30.1, 2026-07-22, MIT: `src/redact/gitleaks-LICENSE`),
//! embedded as published and read with `toml` at first use, plus [`EXTRA_RULES`] of our own for
//! shapes it leaves to context (a bare `Authorization: Bearer …` header outside a curl command).
//! `kind` is the rule's id (`openai-api-key`, `aws-access-token`, `github-pat`,
//! `generic-api-key`, `authorization-bearer`, …).
//!
//! How a rule is applied, as gitleaks does: an Aho-Corasick pass over the text (ASCII case
//! insensitive) finds which rules' `keywords` occur; only those rules' regexes run (compiled on
//! first use, byte regexes without Unicode classes: gitleaks' Go `regexp` has ASCII `\w`, `\s`,
//! `\b`). The secret is the rule's `secretGroup`, else the first non-empty capture group, else
//! the whole match; it is kept when its Shannon entropy is below the rule's `entropy`, or when a
//! rule or global allowlist (`regexes` against the secret, the match or the line as
//! `regexTarget` says; `stopwords` contained in the secret) lets it be. Allowlists that only
//! name paths or commits do not apply (a session's text has neither). Only the secret's bytes
//! are replaced (the `key=` before it stays), widened to whole UTF-8 characters.
//!
//! Invariants: never panics on any text; a rule that does not compile is skipped (the test
//! `every_rule_compiles` holds all of them to compiling); the output never holds a secret a
//! rule found, and the counts say how many replacements of each kind were made.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;
use serde_json::Value;

/// gitleaks' default rules, as published (MIT; see the module doc).
const GITLEAKS_TOML: &str = include_str!("redact/gitleaks.toml");

/// Rules of our own, in gitleaks' form: (id, regex with the secret in group 1, keywords, entropy).
pub const EXTRA_RULES: &[(&str, &str, &[&str], f64)] = &[
    // An HTTP Authorization header or a Bearer credential anywhere (gitleaks finds it only in a
    // curl command line): `Authorization: Bearer eyJ…`, `"Authorization": "Bearer sk-…"`.
    (
        "authorization-bearer",
        r"(?i)\bbearer[ \t]+([A-Za-z0-9._~+/=-]{16,})",
        &["bearer"],
        3.0,
    ),
];

#[derive(Debug, Deserialize)]
struct Config {
    #[serde(default)]
    allowlist: Option<AllowSpec>,
    #[serde(default)]
    rules: Vec<RuleSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RuleSpec {
    id: String,
    #[serde(default)]
    regex: Option<String>,
    #[serde(default)]
    entropy: Option<f64>,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    secret_group: Option<usize>,
    #[serde(default)]
    allowlists: Vec<AllowSpec>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AllowSpec {
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default)]
    regex_target: Option<String>,
    #[serde(default)]
    condition: Option<String>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    commits: Vec<String>,
}

/// What an allowlist regex is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Secret,
    Match,
    Line,
}

#[derive(Debug)]
struct Allow {
    regexes: Vec<Regex>,
    stopwords: Vec<String>,
    target: Target,
}

impl Allow {
    /// `None` when the allowlist cannot apply to text alone (paths or commits only, or an AND
    /// condition that needs them).
    fn from_spec(spec: &AllowSpec) -> Option<Self> {
        let needs_context = !spec.paths.is_empty() || !spec.commits.is_empty();
        let and = spec
            .condition
            .as_deref()
            .is_some_and(|c| c.eq_ignore_ascii_case("and"));
        if (and && needs_context) || (spec.regexes.is_empty() && spec.stopwords.is_empty()) {
            return None;
        }
        let target = match spec.regex_target.as_deref() {
            Some("match") => Target::Match,
            Some("line") => Target::Line,
            _ => Target::Secret,
        };
        Some(Self {
            regexes: spec.regexes.iter().filter_map(|r| compile(r)).collect(),
            stopwords: spec.stopwords.iter().map(|s| s.to_lowercase()).collect(),
            target,
        })
    }

    fn allows(&self, secret: &[u8], whole: &[u8], line: &[u8]) -> bool {
        let t = match self.target {
            Target::Secret => secret,
            Target::Match => whole,
            Target::Line => line,
        };
        if self.regexes.iter().any(|r| r.is_match(t)) {
            return true;
        }
        if self.stopwords.is_empty() {
            return false;
        }
        let lower = String::from_utf8_lossy(secret).to_lowercase();
        self.stopwords.iter().any(|w| lower.contains(w.as_str()))
    }
}

#[derive(Debug)]
struct Rule {
    id: String,
    source: String,
    regex: OnceLock<Option<Regex>>,
    entropy: Option<f64>,
    secret_group: Option<usize>,
    allows: Vec<Allow>,
}

impl Rule {
    fn regex(&self) -> Option<&Regex> {
        self.regex.get_or_init(|| compile(&self.source)).as_ref()
    }
}

/// The compiled rule set.
#[derive(Debug)]
struct RuleSet {
    rules: Vec<Rule>,
    /// Keyword automaton; `keyword_rule[k]` lists the rules keyword `k` triggers.
    keywords: Option<AhoCorasick>,
    keyword_rules: Vec<Vec<usize>>,
    /// Rules without keywords: always run.
    always: Vec<usize>,
    global: Vec<Allow>,
}

fn compile(src: &str) -> Option<Regex> {
    match RegexBuilder::new(src)
        .unicode(false)
        .size_limit(64 << 20)
        .dfa_size_limit(16 << 20)
        .build()
    {
        Ok(r) => Some(r),
        Err(e) => {
            tracing::warn!("redaction rule does not compile: {e}");
            None
        }
    }
}

fn rules() -> &'static RuleSet {
    static RULES: OnceLock<RuleSet> = OnceLock::new();
    RULES.get_or_init(|| {
        let config: Config = toml::from_str(GITLEAKS_TOML).unwrap_or_else(|e| {
            tracing::warn!("the embedded gitleaks rules do not parse: {e}");
            Config {
                allowlist: None,
                rules: Vec::new(),
            }
        });
        let mut specs = config.rules;
        for (id, re, kw, entropy) in EXTRA_RULES {
            specs.push(RuleSpec {
                id: (*id).to_owned(),
                regex: Some((*re).to_owned()),
                entropy: Some(*entropy),
                keywords: kw.iter().map(|k| (*k).to_owned()).collect(),
                secret_group: None,
                allowlists: Vec::new(),
            });
        }
        let mut rules = Vec::new();
        let mut words: Vec<String> = Vec::new();
        let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
        let mut always = Vec::new();
        for spec in specs {
            // Path-only rules (file names such as `.pem`) have no regex: nothing to find in text.
            let Some(source) = spec.regex else { continue };
            let idx = rules.len();
            if spec.keywords.is_empty() {
                always.push(idx);
            }
            for k in &spec.keywords {
                let k = k.to_lowercase();
                if let Some(p) = words.iter().position(|w| *w == k) {
                    keyword_rules[p].push(idx);
                } else {
                    words.push(k);
                    keyword_rules.push(vec![idx]);
                }
            }
            rules.push(Rule {
                id: spec.id,
                source,
                regex: OnceLock::new(),
                entropy: spec.entropy,
                secret_group: spec.secret_group,
                allows: spec
                    .allowlists
                    .iter()
                    .filter_map(Allow::from_spec)
                    .collect(),
            });
        }
        let keywords = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&words)
            .ok();
        let global = config
            .allowlist
            .as_ref()
            .and_then(Allow::from_spec)
            .into_iter()
            .collect();
        RuleSet {
            rules,
            keywords,
            keyword_rules,
            always,
            global,
        }
    })
}

/// Shannon entropy of `s` in bits per byte (gitleaks' `entropy` threshold).
pub fn entropy(s: &[u8]) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in s {
        counts[usize::from(b)] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// A redaction pass: replaces secrets and counts them by kind. One per export or copy; the
/// rules are shared (built once per process).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Redactor {
    /// Replacements made, by rule id.
    pub counts: BTreeMap<String, u64>,
}

impl Redactor {
    pub fn new() -> Self {
        Self::default()
    }

    /// Replacements made in all.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// `text` with every secret a rule finds replaced by `[REDACTED: kind]`; borrowed when
    /// there was none.
    pub fn text<'a>(&mut self, text: &'a str) -> Cow<'a, str> {
        let found = find(text);
        if found.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end, kind) in found {
            out.push_str(&text[at..start]);
            out.push_str("[REDACTED: ");
            out.push_str(kind);
            out.push(']');
            *self.counts.entry(kind.to_owned()).or_default() += 1;
            at = end;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }

    /// Redacts every string inside `v` (object keys stay: a key names, it does not hold).
    pub fn value(&mut self, v: &mut Value) {
        match v {
            Value::String(s) => {
                if let Cow::Owned(r) = self.text(s) {
                    *s = r;
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| self.value(x)),
            Value::Object(m) => m.values_mut().for_each(|x| self.value(x)),
            _ => {}
        }
    }

    /// Redacts a string in place.
    pub fn string(&mut self, s: &mut String) {
        if let Cow::Owned(r) = self.text(s) {
            *s = r;
        }
    }

    /// One line saying what was redacted: `redacted 3 secrets: 2 github-pat, 1 openai-api-key`,
    /// or `no secret found to redact`.
    pub fn summary(&self) -> String {
        let n = self.total();
        if n == 0 {
            return "no secret found to redact".to_owned();
        }
        let kinds: Vec<String> = self
            .counts
            .iter()
            .map(|(k, c)| format!("{c} {k}"))
            .collect();
        format!(
            "redacted {n} secret{}: {}",
            crate::fmt::plural_s(n as usize),
            kinds.join(", ")
        )
    }
}

/// The secrets in `text` as sorted, non-overlapping byte ranges (on char boundaries) with
/// their rule id.
fn find(text: &str) -> Vec<(usize, usize, &'static str)> {
    let rules = rules();
    let bytes = text.as_bytes();
    let mut wanted: Vec<usize> = rules.always.clone();
    if let Some(ac) = &rules.keywords {
        let mut seen = vec![false; rules.keyword_rules.len()];
        for m in ac.find_overlapping_iter(bytes) {
            let k = m.pattern().as_usize();
            if !seen[k] {
                seen[k] = true;
                wanted.extend_from_slice(&rules.keyword_rules[k]);
            }
        }
    }
    if wanted.is_empty() {
        return Vec::new();
    }
    wanted.sort_unstable();
    wanted.dedup();
    let mut found: Vec<(usize, usize, &'static str)> = Vec::new();
    for idx in wanted {
        let rule = &rules.rules[idx];
        let Some(re) = rule.regex() else { continue };
        for caps in re.captures_iter(bytes) {
            let Some(whole) = caps.get(0) else { continue };
            let secret = match rule.secret_group {
                Some(g) if g > 0 => caps.get(g),
                _ => (1..caps.len())
                    .filter_map(|g| caps.get(g))
                    .find(|m| !m.is_empty()),
            }
            .unwrap_or(whole);
            if secret.is_empty() {
                continue;
            }
            let s = secret.as_bytes();
            if rule.entropy.is_some_and(|e| entropy(s) < e) {
                continue;
            }
            let line_start = bytes[..whole.start()]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            let line_end = bytes[whole.end()..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |p| whole.end() + p);
            let line = &bytes[line_start..line_end];
            if rule
                .allows
                .iter()
                .chain(&rules.global)
                .any(|a| a.allows(s, whole.as_bytes(), line))
            {
                continue;
            }
            let (mut start, mut end) = (secret.start(), secret.end());
            while !text.is_char_boundary(start) {
                start -= 1;
            }
            while !text.is_char_boundary(end) {
                end += 1;
            }
            // The rules live as long as the process; their ids are leaked once each.
            found.push((start, end, rule_id(idx)));
        }
    }
    // Where a specific rule and the generic one find the same secret, the specific kind is
    // said (`openai-api-key`, not `generic-api-key`).
    found.sort_unstable_by_key(|&(s, e, k)| (s, std::cmp::Reverse(e), k == GENERIC));
    let mut merged: Vec<(usize, usize, &'static str)> = Vec::with_capacity(found.len());
    for f in found {
        match merged.last_mut() {
            Some(last) if f.0 < last.1 => {
                if last.2 == GENERIC && f.2 != GENERIC {
                    last.2 = f.2;
                }
                last.1 = last.1.max(f.1);
            }
            _ => merged.push(f),
        }
    }
    merged
}

/// gitleaks' catch-all rule (`key = value` shapes of high entropy).
const GENERIC: &str = "generic-api-key";

/// Rule `idx`'s id with a `'static` lifetime (the rule set is a process-wide static).
fn rule_id(idx: usize) -> &'static str {
    rules().rules[idx].id.as_str()
}

/// Number of rules loaded (gitleaks' with a regex, and ours).
pub fn rule_count() -> usize {
    rules().rules.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_compiles() {
        let r = rules();
        assert!(r.rules.len() > 200, "{} rules", r.rules.len());
        let bad: Vec<&str> = r
            .rules
            .iter()
            .filter(|x| x.regex().is_none())
            .map(|x| x.id.as_str())
            .collect();
        assert!(bad.is_empty(), "rules that do not compile: {bad:?}");
    }

    #[test]
    fn redacts_the_four_kinds_and_counts_them() {
        let openai = "sk-proj-".to_owned()
            + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0hIj3kLm6nOp9qRs2tQ7"
            + "T3BlbkFJ"
            + "Uv5wXy8zAb1dEf4hIj7kLm0nOp3qRs6tUv9wXy2zAb5dEf8hIj1kLm4nW3";
        let text = format!(
            "OPENAI_API_KEY={openai}\n\
             aws_access_key_id = AKIAZ7QRSTUVWX2345AB\n\
             aws_secret_access_key = 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\n\
             token ghp_R7x2Kq9Lm4Np8Tv3Wy6Zb1Cd5Fg0Hj2Kl7Mn\n\
             Authorization: Bearer eyJhbGciOi.J9x2Kq7Lm4Np8Rt3\n"
        );
        let mut r = Redactor::new();
        let out = r.text(&text).into_owned();
        for secret in [
            openai.as_str(),
            "AKIAZ7QRSTUVWX2345AB",
            "9xKq2Lm7Np4Rt8Vw1Yz3Bc6Df0Gh5Jk2Mn9Pq4St",
            "ghp_R7x2Kq9Lm4Np8Tv3Wy6Zb1Cd5Fg0Hj2Kl7Mn",
            "eyJhbGciOi.J9x2Kq7Lm4Np8Rt3",
        ] {
            assert!(!out.contains(secret), "{secret} left in:\n{out}");
        }
        assert!(out.contains("[REDACTED: openai-api-key]"), "{out}");
        assert!(out.contains("[REDACTED: aws-access-token]"), "{out}");
        assert!(out.contains("[REDACTED: github-pat]"), "{out}");
        assert!(out.contains("aws_secret_access_key = [REDACTED: "), "{out}");
        assert!(out.contains("Authorization: Bearer [REDACTED: "), "{out}");
        assert_eq!(r.total(), 5, "{:?}", r.counts);
    }

    #[test]
    fn plain_text_is_left_alone() {
        let mut r = Redactor::new();
        for t in [
            "",
            "cargo test --locked",
            "the token budget is 4096 and the key is the config",
            "Bearer tokens are described in RFC 6750",
            "héllo wörld ✓ — no secrets here",
        ] {
            assert!(matches!(r.text(t), Cow::Borrowed(_)), "{t}");
        }
        assert_eq!(r.total(), 0);
        assert_eq!(r.summary(), "no secret found to redact");
    }

    #[test]
    fn values_are_redacted_inside() {
        let mut r = Redactor::new();
        let mut v = serde_json::json!({
            "command": "git push https://x:ghp_R7x2Kq9Lm4Np8Tv3Wy6Zb1Cd5Fg0Hj2Kl7Mn@github.com/a/b",
            "n": 3,
            "list": ["ok"]
        });
        r.value(&mut v);
        let s = v.to_string();
        assert!(!s.contains("ghp_R7x2"), "{s}");
        assert!(r.summary().starts_with("redacted "), "{}", r.summary());
    }
}
