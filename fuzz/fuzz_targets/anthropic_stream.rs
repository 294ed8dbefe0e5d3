//! Fuzz target: Messages API streams and step recordings (issue 25): the bytes as an SSE
//! capture and as one JSON event per line (`import::anthropic_stream::decode_bytes`), and as an
//! Anthropic document (`import::anthropic::decode_text`, vercel `{steps, final}` included) →
//! `Session` → `print --detail`. Checks: no panic, counts consistent, only SGR in the output.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rawpv::cmd::print::write_detail;
use rawpv::import::anthropic::decode_text;
use rawpv::import::anthropic_stream::{Framing, decode_bytes};
use rawpv::session::Session;

#[path = "common.rs"]
mod common;

fn check(items: Vec<rawpv::import::Decoded>) {
    let s = Session::from_decoded(items);
    let open = s.invocations.iter().filter(|i| i.status.is_open()).count() as u64;
    assert_eq!(s.counts.running, open);
    assert_eq!(s.counts.invocations, s.invocations.len() as u64);
    let mut out = Vec::new();
    let _ = write_detail(&mut out, &s, 80, true);
    common::assert_only_sgr(&String::from_utf8_lossy(&out));
}

fuzz_target!(|data: &[u8]| {
    check(decode_bytes(data, Framing::Sse));
    check(decode_bytes(data, Framing::Lines));
    let mut items = Vec::new();
    decode_text(&String::from_utf8_lossy(data), &mut items);
    check(items);
});
