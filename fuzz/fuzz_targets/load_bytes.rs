//! Fuzz target: a whole input → format detection + `import::load_bytes` (RAWP NDJSON, JSON
//! arrays, Claude Code, Anthropic) → `Session` → `print` feed and `print --detail` output.
//! Checks: no panic, counts consistent (the input's and its sessions', issue 18), printed output
//! holds only our SGR.
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
    // Sessions (SPEC §6): their counts add up to the input's; every call is found in its own
    // session under its id (the first one when an id was requested twice there).
    let sum = |f: fn(&rawpv::session::Counts) -> u64| -> u64 {
        s.sessions.iter().map(|(_, e)| f(&e.counts)).sum()
    };
    assert_eq!(sum(|c| c.frames), s.counts.frames);
    assert_eq!(sum(|c| c.invocations), s.counts.invocations);
    assert_eq!(sum(|c| c.running), s.counts.running);
    for inv in &s.invocations {
        assert!((inv.session as usize) < s.sessions.len());
        assert_eq!(s.sessions.of_item(inv.item), inv.session);
        let found = s.invocation_in(inv.session, &inv.invocation_id).expect("in its session");
        assert_eq!(found.invocation_id, inv.invocation_id);
    }
    let mut out = Vec::new();
    let _ = write_feed(&mut out, &s, true);
    let _ = write_detail(&mut out, &s, 80, true);
    common::assert_only_sgr(&String::from_utf8_lossy(&out));
});
