//! Fuzz target: the Codex CLI and Gemini CLI decoders (issue 29), one binary for all four: the
//! bytes as a Codex rollout, as `codex exec --json`, as Gemini stream-json (each fed line by line,
//! as a file or stdin is) and as a Gemini saved session (one document) → `Session` →
//! `print --detail`. Checks: no panic; frames numbered `seq` 1, 2, … in emission order; every
//! result's call was requested before it or a finding says it was not; counts consistent; only
//! SGR in the printed output.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use rawpv::cmd::print::write_detail;
use rawpv::import::codex::CodexDecoder;
use rawpv::import::codex_exec::CodexExecDecoder;
use rawpv::import::gemini::{GeminiSessionDecoder, GeminiStreamDecoder};
use rawpv::import::{Decoded, Decoder};
use rawpv::protocol::Body;
use rawpv::session::Session;

#[path = "common.rs"]
mod common;

fn run(mut dec: Box<dyn Decoder>, data: &[u8]) {
    let mut items = Vec::new();
    for (i, raw) in data.split(|&b| b == b'\n').enumerate() {
        let text = String::from_utf8_lossy(raw.strip_suffix(b"\r").unwrap_or(raw));
        dec.line(i as u64 + 1, &text, &mut items);
    }
    dec.finish(&mut items);
    let mut seq = 0;
    let mut requested = HashSet::new();
    let mut orphans = HashSet::new();
    for d in &items {
        match d {
            Decoded::Frame(f) => {
                seq += 1;
                assert_eq!(f.envelope.seq, Some(seq), "frames numbered in order");
                match &f.body {
                    Body::Request(r) => {
                        requested.insert(r.invocation_id.clone().unwrap_or_default());
                    }
                    Body::Result(r) => {
                        let id = r.invocation_id.clone().unwrap_or_default();
                        assert!(
                            requested.contains(&id) || orphans.contains(&id),
                            "result {id:?} of no call, without a finding"
                        );
                    }
                    _ => {}
                }
            }
            Decoded::Finding(f) => {
                if let Some(id) = &f.invocation_id {
                    orphans.insert(id.clone());
                }
            }
            Decoded::Malformed(_) => {}
        }
    }
    let s = Session::from_decoded(items);
    let open = s.invocations.iter().filter(|i| i.status.is_open()).count() as u64;
    assert_eq!(s.counts.running, open);
    assert_eq!(s.counts.invocations, s.invocations.len() as u64);
    let mut out = Vec::new();
    let _ = write_detail(&mut out, &s, 80, true);
    common::assert_only_sgr(&String::from_utf8_lossy(&out));
}

fuzz_target!(|data: &[u8]| {
    run(Box::new(CodexDecoder::new()), data);
    run(Box::new(CodexExecDecoder::new()), data);
    run(Box::new(GeminiStreamDecoder::new()), data);
    run(Box::new(GeminiSessionDecoder::new()), data);
});
