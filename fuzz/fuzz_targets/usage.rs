//! Fuzz target: usage and cost (issue 28). Arbitrary bytes as a session (`import::load_bytes`,
//! any format) → every usage row's facts and cost; the turns' figures (`view::summarize_turn`)
//! plus the rows before the first prompt must equal the session's (`session::query::Tokens`),
//! to the nano-dollar; the report over its facts (`usage::report::build`, every grouping) must
//! not panic and its JSON must hold as many rows as groups. The same bytes as a usage cache file
//! (`usage::cache::Cache::parse`) and as a config with prices (`config::load_str`): no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rawpv::session::Session;
use rawpv::session::query::{Tokens, is_turn_start};
use rawpv::usage::report::{self, By, Options};

fuzz_target!(|data: &[u8]| {
    let loaded = rawpv::import::load_bytes(data);
    let s = Session::from_decoded(loaded.items);
    let n = s.items.len();
    let prompts: Vec<usize> = (0..n).filter(|&i| is_turn_start(&s, i)).collect();
    let mut sum = Tokens::default();
    for i in 0..prompts.first().copied().unwrap_or(n) {
        sum.add(&s, i);
    }
    for (k, &p) in prompts.iter().enumerate() {
        let end = prompts.get(k + 1).copied().unwrap_or(n);
        let t = rawpv::view::summarize_turn(&s, p, end).tokens;
        sum.input = sum.input.saturating_add(t.input);
        sum.output = sum.output.saturating_add(t.output);
        sum.cache_read = sum.cache_read.saturating_add(t.cache_read);
        sum.rows += t.rows;
        sum.cost.add(&t.cost);
    }
    let mut all = Tokens::default();
    let mut facts = rawpv::usage::facts::FileFacts::default();
    for i in 0..n {
        all.add(&s, i);
        if let Some(rawpv::session::Item::Event(f)) = s.items.get(i)
            && let Some(u) = rawpv::usage::facts::usage_fact(f)
        {
            facts.usage.push(u);
        }
    }
    assert_eq!(sum, all);
    let table = rawpv::usage::price::table();
    for by in [By::Day, By::Week, By::Month, By::Project, By::Session, By::Tool, By::Model] {
        let o = Options {
            by,
            ..Options::default()
        };
        let mut r = report::build(std::slice::from_ref(&facts), &o, table);
        let groups = r.rows.len();
        let j = report::to_json(&mut r, &o, table);
        assert_eq!(j["rows"].as_array().map(Vec::len), Some(groups));
        let _ = report::to_text(&mut r, table);
    }
    let _ = rawpv::usage::cache::Cache::parse(data);
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = rawpv::config::load_str(text, std::path::Path::new("fuzz.toml"));
    }
});
