//! Fuzz target: the Codex CLI and Gemini CLI decoders (issue 29), one binary for all four: the
//! bytes as a Codex rollout, as `codex exec --json`, as Gemini stream-json (each fed line by line,
//! as a file or stdin is) and as a Gemini saved session (one document) → `Session` →
//! `print --detail`; the rollout decoder also fed each line with its byte span (as a saved file
//! is), every spanned request's input and result's output read back with `codex::reparse`.
//! Checks: no panic; frames numbered `seq` 1, 2, … in emission order; every result's call was
//! requested before it or a finding says it was not; a span lies inside the input and reads back
//! what the decoder built; counts consistent; only SGR in the printed output.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use rawpv::cmd::print::write_detail;
use rawpv::import::codex::{CodexDecoder, reparse};
use rawpv::import::codex_exec::CodexExecDecoder;
use rawpv::import::gemini::{GeminiSessionDecoder, GeminiStreamDecoder};
use rawpv::import::{Decoded, Decoder};
use rawpv::protocol::{Body, ByteSpan};
use rawpv::session::{Part, Session};

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

/// The rollout decoder fed lines with their spans; spanned frames read back from their line.
fn spans(data: &[u8]) {
    let mut dec = CodexDecoder::new();
    let mut items = Vec::new();
    let mut offset = 0u64;
    for (i, raw) in data.split(|&b| b == b'\n').enumerate() {
        let span = ByteSpan::of(offset, raw);
        offset += raw.len() as u64 + 1;
        let text = String::from_utf8_lossy(raw.strip_suffix(b"\r").unwrap_or(raw));
        dec.line_span(i as u64 + 1, span, &text, &mut items);
    }
    dec.finish(&mut items);
    for d in &items {
        let Decoded::Frame(f) = d else { continue };
        let Some(s) = f.origin.span else { continue };
        let (a, b) = (s.offset as usize, s.end() as usize);
        assert!(b <= data.len(), "span {s:?} past the end ({})", data.len());
        let text = String::from_utf8_lossy(&data[a..b]);
        let text = text.strip_suffix('\r').unwrap_or(&text);
        let none = || serde_json::Value::Null;
        match &f.body {
            Body::Request(r) => {
                let id = r.invocation_id.as_deref().unwrap_or("");
                let tool = r.tool_name.as_deref().unwrap_or("");
                let back = reparse(text, id, tool, Part::Input, &none);
                assert_eq!(back.as_ref(), r.input.as_ref(), "input of {id:?}");
            }
            Body::Result(r) => {
                let id = r.invocation_id.as_deref().unwrap_or("");
                let tool = r.tool_name.as_deref().unwrap_or("");
                let back = reparse(text, id, tool, Part::Output, &none);
                assert_eq!(back.as_ref(), r.output.as_ref(), "output of {id:?}");
            }
            _ => panic!("a span on a {} frame", f.frame_type.as_str()),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    spans(data);
    run(Box::new(CodexDecoder::new()), data);
    run(Box::new(CodexExecDecoder::new()), data);
    run(Box::new(GeminiStreamDecoder::new()), data);
    run(Box::new(GeminiSessionDecoder::new()), data);
});
