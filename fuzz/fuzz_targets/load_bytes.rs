//! Fuzz target: a whole input → format detection + `import::load_bytes` (RAWP NDJSON, JSON
//! arrays, Claude Code, Anthropic) → `Session` → `print` feed and `print --detail` output.
//! Checks: no panic, counts consistent, printed output holds only our SGR.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rawpv::cmd::print::{write_detail, write_feed};
use rawpv::import::load_bytes;
use rawpv::session::Session;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let loaded = load_bytes(data);
    let s = Session::from_decoded(loaded.items);
    let open = s.invocations.iter().filter(|i| i.status.is_open()).count() as u64;
    assert_eq!(s.counts.running, open);
    assert_eq!(s.counts.invocations, s.invocations.len() as u64);
    let mut out = Vec::new();
    let _ = write_feed(&mut out, &s);
    let _ = write_detail(&mut out, &s, 80, true);
    common::assert_only_sgr(&String::from_utf8_lossy(&out));
});
