//! Model prices and the cost of one API response's usage (issue 28 item 2).
//!
//! Who calls it: `rawpv stats` (`super::report`), the viewer's prompt rows and status bar
//! (`crate::view::summarize_turn`, `crate::ui::status_bar`) and the browser, through
//! [`table`]. The table ships with the binary (`config/prices.toml`, dated) and the config's
//! `[prices."model"]` tables override or add models ([`install`], called once at start-up).
//!
//! Invariants: a cost is whole nano-dollars (10⁻⁹ USD) per usage row, so sums are exact and a
//! session's cost is the sum of its turns' to the nano-dollar; a model that is not in the table
//! has no price ([`Cost::unpriced_tokens`] counts what it could not price), never 0; the rule
//! is ccusage's (`calculate_cost_from_tokens`): each kind of token times its price, one-hour cache
//! writes at their own price, the part of one row's count above 200,000 at the long-context
//! price when the model has one.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::{Map, Value};

/// The embedded table.
pub const BUILTIN: &str = include_str!("../../config/prices.toml");

/// Tokens above this many in one row take the `*_above_200k` price (ccusage's threshold).
const TIER: u64 = 200_000;

/// One model's prices in USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// A 5-minute cache write (default 1.25 × `input`).
    pub cache_write: Option<f64>,
    /// A one-hour cache write (default 2 × `input`).
    pub cache_write_1h: Option<f64>,
    /// A cache hit (default 0.1 × `input`).
    pub cache_read: Option<f64>,
    pub input_above_200k: Option<f64>,
    pub output_above_200k: Option<f64>,
    pub cache_write_above_200k: Option<f64>,
    pub cache_read_above_200k: Option<f64>,
}

impl Price {
    /// Whether every price is finite and at least 0.
    fn valid(&self) -> bool {
        [
            Some(self.input),
            Some(self.output),
            self.cache_write,
            self.cache_write_1h,
            self.cache_read,
            self.input_above_200k,
            self.output_above_200k,
            self.cache_write_above_200k,
            self.cache_read_above_200k,
        ]
        .into_iter()
        .flatten()
        .all(|p| p.is_finite() && p >= 0.0)
    }

    /// The cost of `u` in nano-dollars.
    pub fn cost_nanos(&self, u: &Tokens) -> u64 {
        let cw = self.cache_write.unwrap_or(self.input * 1.25);
        let cw1h = self.cache_write_1h.unwrap_or(self.input * 2.0);
        let cr = self.cache_read.unwrap_or(self.input * 0.1);
        let usd = tiered(u.input, self.input, self.input_above_200k)
            + tiered(u.output, self.output, self.output_above_200k)
            + tiered(u.cache_write_5m(), cw, self.cache_write_above_200k)
            + tiered(
                u.cache_write_1h,
                cw1h,
                self.input_above_200k.map(|p| p * 2.0),
            )
            + tiered(u.cache_read, cr, self.cache_read_above_200k);
        // Prices are per million tokens: a token at $1/M is 1,000 nano-dollars.
        (usd * 1_000.0).round().max(0.0) as u64
    }
}

/// `tokens` × `base` (per million), the part above [`TIER`] at `above` when there is one.
fn tiered(tokens: u64, base: f64, above: Option<f64>) -> f64 {
    match above {
        Some(a) if tokens > TIER => TIER as f64 * base + (tokens - TIER) as f64 * a,
        _ => tokens as f64 * base,
    }
}

/// The token counts of one usage row (a `session.usage` payload, SPEC 3.9, in Anthropic's
/// terms; the Codex and Gemini importers map theirs to these names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, Deserialize)]
pub struct Tokens {
    /// `input_tokens`: input not read from nor written to the cache.
    pub input: u64,
    /// `output_tokens` (thinking / reasoning included).
    pub output: u64,
    /// `cache_creation_input_tokens`: all cache writes.
    pub cache_write: u64,
    /// The one-hour part of `cache_write` (`cache_creation.ephemeral_1h_input_tokens`).
    pub cache_write_1h: u64,
    /// `cache_read_input_tokens`.
    pub cache_read: u64,
}

impl Tokens {
    /// The counts of a `session.usage` payload (missing or non-integer counts are 0).
    pub fn of_payload(p: &Map<String, Value>) -> Self {
        let n = |k: &str| p.get(k).and_then(Value::as_u64).unwrap_or(0);
        let cache_write = n("cache_creation_input_tokens");
        let one_hour = p
            .get("cache_creation")
            .and_then(|c| c.get("ephemeral_1h_input_tokens"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
            .min(cache_write);
        Self {
            input: n("input_tokens"),
            output: n("output_tokens"),
            cache_write,
            cache_write_1h: one_hour,
            cache_read: n("cache_read_input_tokens"),
        }
    }

    /// The 5-minute part of the cache writes.
    pub fn cache_write_5m(&self) -> u64 {
        self.cache_write - self.cache_write_1h.min(self.cache_write)
    }

    /// All four kinds.
    pub fn total(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.cache_write)
            .saturating_add(self.cache_read)
    }

    /// Adds `o` (saturating).
    pub fn add(&mut self, o: &Self) {
        self.input = self.input.saturating_add(o.input);
        self.output = self.output.saturating_add(o.output);
        self.cache_write = self.cache_write.saturating_add(o.cache_write);
        self.cache_write_1h = self.cache_write_1h.saturating_add(o.cache_write_1h);
        self.cache_read = self.cache_read.saturating_add(o.cache_read);
    }
}

/// A sum of costs: what was priced, and the tokens of the rows no price covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cost {
    /// Priced rows' cost in nano-dollars.
    pub nanos: u64,
    /// Tokens of rows whose model has no price (or no model): not in `nanos`.
    pub unpriced_tokens: u64,
    /// Rows counted (priced or not).
    pub rows: u64,
}

impl Cost {
    /// Adds `o`.
    pub fn add(&mut self, o: &Self) {
        self.nanos = self.nanos.saturating_add(o.nanos);
        self.unpriced_tokens = self.unpriced_tokens.saturating_add(o.unpriced_tokens);
        self.rows = self.rows.saturating_add(o.rows);
    }

    /// The priced part in dollars.
    pub fn usd(&self) -> f64 {
        self.nanos as f64 / 1e9
    }

    /// `$1.23`, `$0.0042`; `$1.23+?` when some tokens had no price; `no price` when none did;
    /// empty when there was nothing to price.
    pub fn label(&self) -> String {
        if self.unpriced_tokens > 0 && self.nanos == 0 {
            return "no price".into();
        }
        if self.rows == 0 {
            return String::new();
        }
        let mut s = usd_label(self.usd());
        if self.unpriced_tokens > 0 {
            s.push_str("+?");
        }
        s
    }
}

/// `$12.35`, `$0.42`, `$0.0042` (at least two significant digits below a cent), `$0`.
pub fn usd_label(usd: f64) -> String {
    if usd.abs() < 1e-12 {
        "$0".into()
    } else if usd >= 0.01 {
        format!("${usd:.2}")
    } else {
        format!("${usd:.4}")
    }
}

/// The price table: the embedded one with the config's overrides.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The day the embedded prices were taken (`as_of`).
    pub as_of: String,
    /// Normalized model name ([`normalize`]) → price.
    models: BTreeMap<String, Price>,
    /// Models the config overrode or added (as written).
    pub overridden: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    as_of: String,
    #[allow(dead_code)]
    source: String,
    models: BTreeMap<String, Price>,
}

impl Table {
    /// The embedded table.
    ///
    /// # Panics
    /// Never in a released build: `config/prices.toml` is parsed by a unit test.
    pub fn builtin() -> Self {
        #[allow(clippy::expect_used)]
        let f: File = toml::from_str(BUILTIN).expect("config/prices.toml parses");
        Self {
            as_of: f.as_of,
            models: f
                .models
                .into_iter()
                .map(|(k, v)| (normalize(&k), v))
                .collect(),
            overridden: Vec::new(),
        }
    }

    /// This table with `overrides` (model → price) replacing or adding models.
    ///
    /// # Errors
    /// A price that is negative or not finite: `prices."model"` and why.
    pub fn with_overrides(mut self, overrides: &BTreeMap<String, Price>) -> Result<Self, String> {
        for (model, p) in overrides {
            if !p.valid() {
                return Err(format!(
                    "prices.\"{model}\": every price must be a number of dollars per million \
                     tokens, 0 or more"
                ));
            }
            self.models.insert(normalize(model), *p);
            self.overridden.push(model.clone());
        }
        Ok(self)
    }

    /// The price of `model` (see `config/prices.toml` for how names match).
    pub fn find(&self, model: &str) -> Option<&Price> {
        let n = normalize(model);
        if let Some(p) = self.models.get(&n) {
            return Some(p);
        }
        let base = strip_date(&n);
        self.models.get(base).or_else(|| {
            self.models
                .get(base.strip_suffix("-latest").unwrap_or(base))
        })
    }

    /// The cost of one usage row of `model` (`None`: no model).
    pub fn cost(&self, model: Option<&str>, t: &Tokens) -> Cost {
        match model.and_then(|m| self.find(m)) {
            Some(p) => Cost {
                nanos: p.cost_nanos(t),
                unpriced_tokens: 0,
                rows: 1,
            },
            None => Cost {
                nanos: 0,
                unpriced_tokens: t.total(),
                rows: 1,
            },
        }
    }

    /// How many models it prices.
    pub fn len(&self) -> usize {
        self.models.len()
    }

    /// Whether it prices nothing.
    pub fn is_empty(&self) -> bool {
        self.models.is_empty()
    }
}

/// Lower case, no provider prefix (`anthropic/`, `openai/`, `google/`, `models/`,
/// `us.anthropic.`, `anthropic.`), no `-v1:0` or `@…` suffix, dots as dashes.
pub fn normalize(model: &str) -> String {
    let mut m = model.trim().to_ascii_lowercase();
    if let Some((_, tail)) = m.rsplit_once('/') {
        m = tail.to_owned();
    }
    for p in [
        "us.anthropic.",
        "eu.anthropic.",
        "apac.anthropic.",
        "anthropic.",
    ] {
        if let Some(t) = m.strip_prefix(p) {
            m = t.to_owned();
        }
    }
    if let Some((head, _)) = m.split_once('@') {
        m = head.to_owned();
    }
    if let Some((head, _)) = m.split_once(':') {
        m = head.to_owned();
    }
    if let Some(h) = m.strip_suffix("-v1").or_else(|| m.strip_suffix("-v2")) {
        m = h.to_owned();
    }
    m.replace('.', "-")
}

/// `name` without a trailing `-YYYYMMDD` or `-YYYY-MM-DD`.
fn strip_date(name: &str) -> &str {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some((head, d)) = name.rsplit_once('-')
        && d.len() == 8
        && digits(d)
    {
        return head;
    }
    // -YYYY-MM-DD: three dash-separated groups of 4, 2 and 2 digits.
    let parts: Vec<&str> = name.rsplitn(4, '-').collect();
    if let [dd, mm, yyyy, head] = parts.as_slice()
        && dd.len() == 2
        && mm.len() == 2
        && yyyy.len() == 4
        && [dd, mm, yyyy].iter().all(|s| digits(s))
    {
        return head;
    }
    name
}

static TABLE: OnceLock<Table> = OnceLock::new();

/// Installs the table with the config's overrides (once, at start-up; later calls are ignored).
///
/// # Errors
/// As [`Table::with_overrides`].
pub fn install(overrides: &BTreeMap<String, Price>) -> Result<(), String> {
    let t = Table::builtin().with_overrides(overrides)?;
    let _ = TABLE.set(t);
    Ok(())
}

/// The table in use: the installed one, else the embedded one.
pub fn table() -> &'static Table {
    TABLE.get_or_init(Table::builtin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_table_parses_and_names_match() {
        let t = Table::builtin();
        assert!(t.len() > 30);
        for (name, want) in [
            ("claude-sonnet-4-5-20250929", Some(3.0)),
            ("claude-opus-4-6", Some(5.0)),
            ("anthropic/claude-haiku-4-5", Some(1.0)),
            ("us.anthropic.claude-opus-4-1-20250805-v1:0", Some(15.0)),
            ("gpt-5-1-codex-2025-11-13", Some(1.25)),
            ("gpt-5.1-codex", Some(1.25)),
            ("gpt-5-codex", Some(1.25)),
            ("models/gemini-2.5-pro", Some(1.25)),
            ("gemini-3-pro", Some(2.0)),
            ("claude-opus-4-7", None),
            ("auto-gemini-2.5", None),
            ("", None),
        ] {
            assert_eq!(t.find(name).map(|p| p.input), want, "{name}");
        }
    }

    /// ccusage's rule on one row of claude-sonnet-4 (279 in, 2,201 out, 83,966 cache writes,
    /// 164,952 cache reads: all below the 200k tier → $0.3982101).
    #[test]
    fn cost_is_ccusages() {
        let t = Table::builtin();
        let u = Tokens {
            input: 279,
            output: 2201,
            cache_write: 83966,
            cache_write_1h: 0,
            cache_read: 164_952,
        };
        let c = t.cost(Some("claude-sonnet-4-20250514"), &u);
        assert_eq!(c.nanos, 398_210_100);
        assert_eq!(c.label(), "$0.40");
        let one_hour = Tokens {
            cache_write: 1000,
            cache_write_1h: 1000,
            ..Tokens::default()
        };
        // One-hour writes at 2 × input ($1/M for haiku-4-5): 1,000 × $2/M.
        assert_eq!(t.cost(Some("claude-haiku-4-5"), &one_hour).nanos, 2_000_000);
        // Above 200k in one row: the long-context price for the rest.
        let long = Tokens {
            input: 300_000,
            ..Tokens::default()
        };
        assert_eq!(
            t.cost(Some("claude-sonnet-4-5"), &long).nanos,
            (200_000.0 * 3.0 * 1000.0 + 100_000.0 * 6.0 * 1000.0) as u64
        );
    }

    #[test]
    fn a_model_without_a_price_says_so() {
        let t = Table::builtin();
        let u = Tokens {
            input: 10,
            output: 5,
            ..Tokens::default()
        };
        let c = t.cost(Some("mystery-model"), &u);
        assert_eq!(
            c,
            Cost {
                nanos: 0,
                unpriced_tokens: 15,
                rows: 1
            }
        );
        assert_eq!(c.label(), "no price");
        let mut sum = t.cost(Some("claude-opus-4-5"), &u);
        sum.add(&c);
        assert_eq!(sum.label(), "$0.0002+?");
        assert_eq!(Cost::default().label(), "");
    }

    #[test]
    fn overrides_replace_and_add_and_bad_ones_are_refused() {
        let p = Price {
            input: 1.0,
            output: 2.0,
            cache_write: None,
            cache_write_1h: None,
            cache_read: None,
            input_above_200k: None,
            output_above_200k: None,
            cache_write_above_200k: None,
            cache_read_above_200k: None,
        };
        let mut o = BTreeMap::new();
        o.insert("my-local-model".to_owned(), p);
        o.insert("claude-opus-4-6".to_owned(), p);
        let t = Table::builtin().with_overrides(&o).unwrap();
        assert_eq!(t.find("my-local-model").map(|p| p.output), Some(2.0));
        assert_eq!(
            t.find("claude-opus-4-6-20260205").map(|p| p.input),
            Some(1.0)
        );
        let mut bad = BTreeMap::new();
        bad.insert("x".to_owned(), Price { input: -1.0, ..p });
        let e = Table::builtin().with_overrides(&bad).unwrap_err();
        assert!(e.starts_with("prices.\"x\""), "{e}");
    }

    #[test]
    fn payload_counts_split_the_one_hour_writes() {
        let p = serde_json::json!({"input_tokens": 2, "output_tokens": 3,
            "cache_creation_input_tokens": 2398, "cache_read_input_tokens": 15584,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 2398}});
        let t = Tokens::of_payload(p.as_object().unwrap());
        assert_eq!(
            t,
            Tokens {
                input: 2,
                output: 3,
                cache_write: 2398,
                cache_write_1h: 2398,
                cache_read: 15584
            }
        );
        assert_eq!(t.cache_write_5m(), 0);
    }
}
