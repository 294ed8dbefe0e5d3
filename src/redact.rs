//! Secret redaction (issue 26 item 3): known secret shapes in text become `[REDACTED: kind]`.
//!
//! Who calls it: `rawpv export` (on by default, `--no-redact`), `rawpv print --redact`, and the
//! viewer's redacting copy (`crate::app`). The rules are gitleaks' default rule set
//! (`src/redact/gitleaks.toml`, gitleaks v8.30.1, 2026-07-22, MIT: `src/redact/gitleaks-LICENSE`),
//! embedded as published and read with `toml` at first use, plus [`EXTRA_RULES`] of our own for
//! shapes it leaves to context or lacks: a bare `Authorization: Bearer …` header outside a curl
//! command, AI providers' keys (xAI, Groq, `OpenRouter`, `sk-<32 hex>`, Google OAuth `ya29.`),
//! Discord webhooks, a URL's password (`postgres://u:PASS@`), the values of secret-named
//! variables in env/.env text (`DB_PASSWORD=…`, `XAI_API_KEY=…`) and JSON (`"password": "…"`).
//! `kind` is the rule's id (`openai-api-key`, `aws-access-token`, `github-pat`,
//! `generic-api-key`, `authorization-bearer`, `url-password`, `env-password`, …).
//!
//! One change to gitleaks' regexes: most end a secret with `(?:[\x60'"\s;]|\\[nr]|$)`
//! (written for source files), which keeps a key before `&`, `:`, `/`, `)` or `,` (a query
//! string, `curl -u key:`, a path, a call). Those rules end it at any byte that cannot continue
//! a token instead ([`END_ANY`]); the generic rule adds only `&` ([`END_GENERIC`]).
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

/// gitleaks' end of a secret in most of its rules: a quote, a space, `;`, an escaped newline or
/// the end (its rules were written for source files). In a session a key also stands before
/// `&`, `:`, `/`, `)`, `,` (a query string, `curl -u key:`, a path, a call); see [`END_ANY`].
const GITLEAKS_END: &str = r#"(?:[\x60'"\s;]|\\[nr]|$)"#;

/// The end of a secret for every rule but the generic one: any byte that cannot continue a
/// token (letters, digits, `_`, `-`, and base64's `+`, `=`), or the end. `/` and `.` end a key
/// too (a path, a sentence); a hash, a UUID or a base64 blob still never matches a rule, whose
/// prefix (`sk-`, `AIza`, `ghp_`, a vendor's name) it lacks (test `hashes_uuids_base64_are_left_alone`).
const END_ANY: &str = r"(?:[^0-9A-Za-z_+=-]|$)";

/// The end of a secret for `generic-api-key` (a `key = value` shape with no prefix): gitleaks'
/// ends, and `&` (a query string). Not `,` `)` `/`: `f(api_key=settings.openai_key, …)` and
/// `token=dir/file` are code and paths far more often than secrets.
const END_GENERIC: &str = r#"(?:[\x60'"\s;&]|\\[nr]|$)"#;

/// Rules of our own, in gitleaks' form: (id, regex with the secret in its first non-empty
/// group, keywords, entropy). AI providers' keys (issue 26, attack 10 #27), a password in a
/// URL, and the values of secret-named variables in env/.env text (#14).
pub const EXTRA_RULES: &[(&str, &str, &[&str], f64)] = &[
    // An HTTP Authorization header or a Bearer credential anywhere (gitleaks finds it only in a
    // curl command line): `Authorization: Bearer eyJ…`, `"Authorization": "Bearer sk-…"`.
    (
        "authorization-bearer",
        r"(?i)\bbearer[ \t]+([A-Za-z0-9._~+/=-]{16,})",
        &["bearer"],
        3.0,
    ),
    // Anthropic and OpenAI project keys cut short or of a newer length (a path keeps their
    // first 100 characters): gitleaks' rules want the whole key (`…AA`, `T3BlbkFJ`).
    (
        "anthropic-api-key",
        r"\b(sk-ant-[a-z]{3,8}[0-9]{2}-[0-9A-Za-z_-]{32,})",
        &["sk-ant-"],
        3.0,
    ),
    (
        "openai-api-key",
        r"\b(sk-(?:proj|svcacct|admin)-[0-9A-Za-z_-]{40,})",
        &["sk-proj-", "sk-svcacct-", "sk-admin-"],
        3.0,
    ),
    // xAI: `xai-` and 80 letters and digits.
    (
        "xai-api-key",
        r"\b(xai-[0-9A-Za-z]{50,100})(?:[^0-9A-Za-z_+=-]|$)",
        &["xai-"],
        3.0,
    ),
    // Groq: `gsk_` and 52 letters and digits.
    (
        "groq-api-key",
        r"\b(gsk_[0-9A-Za-z]{52})(?:[^0-9A-Za-z_+=-]|$)",
        &["gsk_"],
        3.0,
    ),
    // OpenRouter: `sk-or-v1-` and 64 hex digits.
    (
        "openrouter-api-key",
        r"\b(sk-or-v1-[0-9a-f]{64})(?:[^0-9A-Za-z_+=-]|$)",
        &["sk-or-"],
        3.0,
    ),
    // `sk-` and 32 hex digits (DeepSeek, Moonshot-style keys; OpenAI's carry `T3BlbkFJ`).
    (
        "sk-hex-api-key",
        r"\b(sk-[0-9a-f]{32})(?:[^0-9A-Za-z_+=-]|$)",
        &["sk-"],
        3.0,
    ),
    // A Google OAuth 2.0 access token.
    (
        "google-oauth-access-token",
        r"\b(ya29\.[0-9A-Za-z_-]{30,})",
        &["ya29."],
        3.0,
    ),
    // A Discord webhook: its id and token (the host and path stay).
    (
        "discord-webhook-url",
        r"(?i)discord(?:app)?\.com/api/webhooks/([0-9]{17,20}/[0-9A-Za-z_-]{60,80})",
        &["discord"],
        3.0,
    ),
    // The password of a URL's user info: `postgres://app:PASS@db:5432`, `redis://:PASS@cache`
    // (not `${VAR}`, `<password>` or `****`).
    (
        "url-password",
        r#"(?i)\b[a-z][a-z0-9+.-]{1,30}://[^\s:/@'"\x60<>]*:([^\s@/'"\x60<>\\${*][^\s@/'"\x60<>\\]{0,200})@[0-9a-z\[]"#,
        &["://"],
        0.0,
    ),
    // The value of a password- or secret-named variable in env/.env/shell text, whatever its
    // punctuation: `DB_PASSWORD=Xk9#mQ2v`, `export JWT_SECRET="…"` (upper-case names, `=`).
    (
        ENV_PASSWORD,
        r#"\b(?:[A-Z0-9]+_)*(?:PASSWORD|PASSWD|PASS|PASSPHRASE|SECRET)=(?:"([^"\n$][^"\n]*)"|'([^'\n$][^'\n]*)'|([^\s'"\x60\\${<*][^\s'"\x60\\]*))"#,
        &["pass", "secret"],
        0.0,
    ),
    // The value of a token- or key-named variable: `XAI_API_KEY=…`, `GITHUB_TOKEN=…` (entropy
    // like a generated key; not a path: `GOOGLE_APPLICATION_CREDENTIALS=/etc/…`).
    (
        ENV_TOKEN,
        r#"\b(?:[A-Z0-9]+_)*(?:TOKEN|API_KEY|APIKEY|ACCESS_KEY|SECRET_KEY|PRIVATE_KEY|AUTH_KEY|SIGNING_KEY|ENCRYPTION_KEY|MASTER_KEY|CREDENTIALS?)=(?:"([^"\n$/~.][^"\n]*)"|'([^'\n$/~.][^'\n]*)'|([^\s'"\x60\\${<*/~.][^\s'"\x60\\]*))"#,
        &["token", "key", "credential"],
        3.0,
    ),
    // A secret-named string member of JSON: `"password": "…"`, `"client_secret": "…"`.
    (
        JSON_SECRET,
        r#"(?i)"(?:[a-z0-9]+[_-])*(?:password|passwd|passphrase|secret|token|api_?key|access_?key|private_?key)"\s*:\s*"([^"\\${<*][^"\\]*)""#,
        &["pass", "secret", "token", "key"],
        1.5,
    ),
];

/// Ids of our rules that find a secret by its name alone; where a rule of a known shape finds
/// the same secret, its kind is said instead (as for [`GENERIC`]).
const ENV_PASSWORD: &str = "env-password";
const ENV_TOKEN: &str = "env-token";
const JSON_SECRET: &str = "json-secret";

/// Values a secret-named variable holds that are no secret (`REQUIRE_PASSWORD=true`).
const NOT_A_VALUE: &str =
    r"(?i)^(?:true|false|yes|no|on|off|null|none|nil|undefined|[0-9]{1,4}|x+|\.+)$";

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
                allowlists: if rank(id) == 2 {
                    vec![AllowSpec {
                        regexes: vec![NOT_A_VALUE.to_owned()],
                        ..AllowSpec::default()
                    }]
                } else {
                    Vec::new()
                },
            });
        }
        let mut rules = Vec::new();
        let mut words: Vec<String> = Vec::new();
        let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
        let mut always = Vec::new();
        for spec in specs {
            // Path-only rules (file names such as `.pem`) have no regex: nothing to find in text.
            let Some(source) = spec.regex else { continue };
            let end = if spec.id == GENERIC {
                END_GENERIC
            } else {
                END_ANY
            };
            let source = source.replace(GITLEAKS_END, end);
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
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
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
    /// Markers counted in what was written ([`Redactor::tally`]), by rule id; once set, what
    /// [`Redactor::total`] and [`Redactor::summary`] say.
    written: Option<BTreeMap<String, u64>>,
}

impl Redactor {
    pub fn new() -> Self {
        Self::default()
    }

    /// Secrets redacted in all: the markers tallied in what was written when
    /// [`Redactor::tally`] was called, else the replacements made.
    pub fn total(&self) -> u64 {
        self.reported().values().sum()
    }

    fn reported(&self) -> &BTreeMap<String, u64> {
        self.written.as_ref().unwrap_or(&self.counts)
    }

    /// Counts the `[REDACTED: kind]` markers in `written`, text as it was written out
    /// (Markdown's backslash escapes allowed: `\[REDACTED\: openai\-api\-key\]`), and from
    /// then on reports those (attack 10 #4): a secret redacted in text the output leaves out
    /// (a summary it does not show) or cuts off is not counted, one written twice is counted
    /// twice. A marker that was in the session's own text is counted too: it is in the file.
    pub fn tally(&mut self, written: &str) {
        static MARKER: OnceLock<Option<Regex>> = OnceLock::new();
        let written_counts = self.written.get_or_insert_with(BTreeMap::new);
        // Most text holds no marker: a substring search is many times faster than the regex.
        if !written.contains("REDACTED") {
            return;
        }
        let Some(re) = MARKER
            .get_or_init(|| compile(r"\\?\[REDACTED\\?: ((?:\\?[a-z0-9-])+)\\?\]"))
            .as_ref()
        else {
            return;
        };
        for caps in re.captures_iter(written.as_bytes()) {
            let Some(kind) = caps.get(1) else { continue };
            let kind: String = String::from_utf8_lossy(kind.as_bytes()).replace('\\', "");
            *written_counts.entry(kind).or_default() += 1;
        }
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

    /// A copy of event frame `f` whose payload and metadata strings are redacted, to make its
    /// words from (`crate::export`): redaction comes before a rewrite such as `stop_hook_summary`
    /// → "stop hook summary", which would hide a secret from the rules (attack 10 #24). Typed
    /// bodies (requests, streams, results, catalogs) stay as they are.
    pub fn frame(&mut self, f: &crate::protocol::Frame) -> crate::protocol::Frame {
        let mut f = f.clone();
        if let crate::protocol::Body::Generic(m) = &mut f.body {
            m.values_mut().for_each(|v| self.value(v));
        }
        f.envelope.metadata.values_mut().for_each(|v| self.value(v));
        f
    }

    /// Redacts a string in place.
    pub fn string(&mut self, s: &mut String) {
        if let Cow::Owned(r) = self.text(s) {
            *s = r;
        }
    }

    /// Adds what `other` redacted (several sessions in one export): from then on the sum of
    /// both passes' reports ([`Redactor::total`]).
    pub fn absorb(&mut self, other: &Self) {
        let mut sum = self.reported().clone();
        for (k, c) in other.reported() {
            *sum.entry(k.clone()).or_default() += c;
        }
        for (k, c) in &other.counts {
            *self.counts.entry(k.clone()).or_default() += c;
        }
        self.written = Some(sum);
    }

    /// One line saying what was redacted: `redacted 3 secrets: 2 github-pat, 1 openai-api-key`,
    /// or `no secret found to redact`.
    pub fn summary(&self) -> String {
        let n = self.total();
        if n == 0 {
            return "no secret found to redact".to_owned();
        }
        let kinds: Vec<String> = self
            .reported()
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
    found.sort_unstable_by_key(|&(s, e, k)| (s, std::cmp::Reverse(e), rank(k), k));
    let mut merged: Vec<(usize, usize, &'static str)> = Vec::with_capacity(found.len());
    for f in found {
        match merged.last_mut() {
            Some(last) if f.0 < last.1 => {
                if rank(f.2) < rank(last.2) {
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

/// Which kind is said where rules find the same secret: a known shape (0) over gitleaks'
/// generic rule (1) over ours that go by a name alone (2).
fn rank(id: &str) -> u8 {
    match id {
        GENERIC => 1,
        ENV_PASSWORD | ENV_TOKEN | JSON_SECRET => 2,
        _ => 0,
    }
}

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

    /// `n` characters of `alphabet`, deterministic (a fixed LCG), for fake keys.
    fn fake(seed: u64, n: usize, alphabet: &str) -> String {
        let a = alphabet.as_bytes();
        let mut x = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                char::from(a[((x >> 33) % a.len() as u64) as usize])
            })
            .collect()
    }

    const AN: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const HEX: &str = "0123456789abcdef";

    /// `text` redacted, with every `secret` gone and the kinds said, in order.
    fn redacts(text: &str, secrets: &[&str], kinds: &[&str]) -> String {
        let mut r = Redactor::new();
        let out = r.text(text).into_owned();
        let mut t = r.clone();
        t.tally(&out);
        assert_eq!(t.summary(), r.summary(), "{out}");
        for s in secrets {
            assert!(!out.contains(s), "{s} left in:\n{out}");
        }
        let said: Vec<&str> = out
            .match_indices("[REDACTED: ")
            .map(|(i, _)| {
                let rest = &out[i + 11..];
                &rest[..rest.find(']').unwrap_or(rest.len())]
            })
            .collect();
        assert_eq!(said, kinds, "{out}");
        assert_eq!(r.total(), kinds.len() as u64, "{out}");
        out
    }

    // Attack 10 #3: keys before `&`, `:`, `/`, `)`, `,`, `.` (gitleaks ends them at quotes and
    // spaces only).
    #[test]
    fn keys_in_urls_paths_and_calls() {
        let google = "AIza".to_owned() + &fake(1, 35, AN);
        let stripe = "sk_live_".to_owned() + &fake(2, 24, AN);
        let openai = "sk-".to_owned() + &fake(3, 20, AN) + "T3BlbkFJ" + &fake(4, 20, AN);
        let anthropic = "sk-ant-api03-".to_owned() + &fake(5, 93, AN) + "AA";
        let cut = &anthropic[..100];
        let proj = "sk-proj-".to_owned() + &fake(12, 92, AN);
        let text = format!(
            "cat /home/u/{cut}/notes.txt {proj}\n\
             curl 'https://maps.googleapis.com/maps/api/geocode/json?address=x&key={google}&lang=en'\n\
             curl https://api.stripe.com/v1/charges -u {stripe}:\n\
             curl 'https://proxy.example.com/v1/chat?key={openai}&model=gpt-4o'\n\
             python -c \"print(call({openai}))\"\n\
             keys = [{openai},{openai}]\n\
             cp notes.md /tmp/{anthropic}/notes.md\n\
             the key is {google}.\n"
        );
        let out = redacts(
            &text,
            &[&google, &stripe, &openai, cut, &proj],
            &[
                "anthropic-api-key",
                "openai-api-key",
                "gcp-api-key",
                "stripe-access-token",
                "openai-api-key",
                "openai-api-key",
                "openai-api-key",
                "openai-api-key",
                "anthropic-api-key",
                "gcp-api-key",
            ],
        );
        assert!(
            out.contains("&key=[REDACTED: gcp-api-key]&lang=en'"),
            "{out}"
        );
        assert!(
            out.contains("-u [REDACTED: stripe-access-token]:\n"),
            "{out}"
        );
        assert!(
            out.contains("/tmp/[REDACTED: anthropic-api-key]/notes.md"),
            "{out}"
        );
    }

    // Attack 10 #14: a URL's password, and secret-named variables whatever their punctuation.
    #[test]
    fn dotenv_and_url_passwords() {
        let text = "# production\n\
             DATABASE_URL=postgres://app:Qm9vQ2xhc3NpY1Bhc3M@db.prod.internal:5432/app\n\
             REDIS_URL=redis://:p4ssW0rdR3dis2024x@cache.internal:6379/0\n\
             \x20    4\tDB_PASSWORD=Xk9#mQ2vLp8zR4tW\n\
             export SMTP_PASS='hunter2 with spaces'\n\
             PASSWORD=correcthorsebatterystaple\n\
             psql postgres://admin:Xk9#mQ2vLp8zR4tW@db.internal:5432/prod\n\
             {\"db\": {\"password\": \"s3cr3t-Passw0rd!\"}}\n";
        let out = redacts(
            text,
            &[
                "Qm9vQ2xhc3NpY1Bhc3M",
                "p4ssW0rdR3dis2024x",
                "Xk9#mQ2vLp8zR4tW",
                "hunter2",
                "correcthorse",
                "s3cr3t-Passw0rd!",
            ],
            &[
                "url-password",
                "url-password",
                "env-password",
                "env-password",
                "env-password",
                "url-password",
                "json-secret",
            ],
        );
        assert!(
            out.contains("postgres://app:[REDACTED: url-password]@db.prod.internal:5432/app"),
            "{out}"
        );
        assert!(
            out.contains("redis://:[REDACTED: url-password]@cache"),
            "{out}"
        );
        assert!(
            out.contains("SMTP_PASS='[REDACTED: env-password]'"),
            "{out}"
        );
    }

    // Attack 10 #27: AI providers' keys gitleaks has no rule for, alone, in a reply and as
    // `*_API_KEY=` in `env` output.
    #[test]
    fn ai_provider_keys() {
        let xai = "xai-".to_owned() + &fake(6, 80, AN);
        let groq = "gsk_".to_owned() + &fake(7, 52, AN);
        let openrouter = "sk-or-v1-".to_owned() + &fake(8, 64, HEX);
        let deepseek = "sk-".to_owned() + &fake(9, 32, HEX);
        let ya29 = "ya29.".to_owned() + &fake(10, 100, AN);
        let discord = fake(11, 68, AN);
        let text = format!(
            "{xai} {groq} {openrouter} {deepseek} {ya29}\n\
             https://discord.com/api/webhooks/123456789012345678/{discord}\n\
             I set your Groq key {groq} and used {xai} for xAI.\n\
             XAI_API_KEY={xai}\nGROQ_API_KEY={groq}\n"
        );
        let out = redacts(
            &text,
            &[&xai, &groq, &openrouter, &deepseek, &ya29, &discord],
            &[
                "xai-api-key",
                "groq-api-key",
                "openrouter-api-key",
                "sk-hex-api-key",
                "google-oauth-access-token",
                "discord-webhook-url",
                "groq-api-key",
                "xai-api-key",
                "xai-api-key",
                "groq-api-key",
            ],
        );
        assert!(
            out.contains("XAI_API_KEY=[REDACTED: xai-api-key]\n"),
            "{out}"
        );
        assert!(
            out.contains("discord.com/api/webhooks/[REDACTED: discord-webhook-url]\n"),
            "{out}"
        );
    }

    // The wider ends must not turn hashes, UUIDs, base64, paths and code into secrets.
    #[test]
    fn hashes_uuids_base64_are_left_alone() {
        let b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut texts: Vec<String> = Vec::new();
        for seed in 0..40 {
            let sha = fake(seed, 64, HEX);
            let git = fake(seed + 100, 40, HEX);
            let u = fake(seed + 200, 32, HEX);
            let uuid = format!(
                "{}-{}-{}-{}-{}",
                &u[..8],
                &u[8..12],
                &u[12..16],
                &u[16..20],
                &u[20..]
            );
            let blob = fake(seed + 300, 400, b64);
            let url = fake(seed + 400, 43, &(AN.to_owned() + "_-"));
            for sep in ["/", ",", ")", "&", ":", ".", " ", "\n"] {
                texts.push(format!(
                    "sha256:{sha}{sep} commit {git}{sep} id {uuid}{sep} /blob/{blob}{sep} ?v={url}{sep}"
                ));
            }
            texts.push(format!("https://cdn.example.com/{sha}/{uuid}/{git}.tar.gz"));
            texts.push(format!("data:image/png;base64,{blob}=="));
        }
        for t in [
            "PWD=/home/u/proj\nOLDPWD=/home/u\n",
            "GOOGLE_APPLICATION_CREDENTIALS=/etc/gcloud/creds.json\n",
            "CLAUDE_CODE_MAX_OUTPUT_TOKENS=32000 MAX_TOKENS=4096 REQUIRE_PASSWORD=true\n",
            "DB_PASSWORD=${DB_PASSWORD}\nexport API_TOKEN=\"$(cat /run/secrets/token)\"\n",
            "client = OpenAI(api_key=settings.openai_api_key, timeout=30)\n",
            "password = request.form['password']\nif not token: raise\n",
            "psql postgres://user:${PGPASS}@localhost/db; ssh://git@github.com:22/acme/app.git\n",
            "curl http://[::1]:8080/health http://localhost:3000/api?token=&x=1\n",
            "{\"password\": \"\", \"token\": null, \"secret\": \"<your secret>\"}\n",
            "see src/redact/gitleaks.toml, tests/fixtures/export/keys.jsonl and the key/value docs\n",
        ] {
            texts.push(t.to_owned());
        }
        let mut r = Redactor::new();
        for t in &texts {
            let out = r.text(t);
            assert!(matches!(out, Cow::Borrowed(_)), "{t}\n→ {out}");
        }
        assert_eq!(r.total(), 0);
    }

    // Attack 10 #4: the count is of the markers written, escaped or not, not of the
    // replacements made.
    #[test]
    fn tally_counts_the_markers_written() {
        let mut r = Redactor::new();
        let t = "ghp_R7x2Kq9Lm4Np8Tv3Wy6Zb1Cd5Fg0Hj2Kl7Mn";
        let a = r.text(t).into_owned();
        let _unwritten = r.text(t);
        assert_eq!(r.total(), 2);
        r.tally(&format!(
            "{a}\n> {a} twice\n\\[REDACTED\\: github\\-pat\\] in Markdown's inline escapes\n\
             [REDACTED: github-p"
        ));
        assert_eq!(r.total(), 3, "{:?}", r.summary());
        assert_eq!(r.summary(), "redacted 3 secrets: 3 github-pat");
        let mut none = Redactor::new();
        none.tally("nothing here");
        assert_eq!(none.summary(), "no secret found to redact");
    }
}
