//! Fuzz target: the one Claude Code decoder (issue 16). The bytes as a transcript's lines, fed
//! with their byte spans (as a saved file is) → frames → `Session`; then every call's input and
//! output read back from its span with `claude_code::reparse`, as a file-backed session does.
//! Checks: no panic; every span lies inside the input; a call's input read back equals the
//! decoded one; the output of a call whose result came from the input reads back; counts
//! consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rawpv::import::claude_code::{ClaudeCodeDecoder, reparse};
use rawpv::import::{Decoded, Decoder};
use rawpv::protocol::{Body, ByteSpan};
use rawpv::session::{Part, Session};

fuzz_target!(|data: &[u8]| {
    let mut dec = ClaudeCodeDecoder::new();
    let mut items = Vec::new();
    let mut offset = 0u64;
    for (i, raw) in data.split(|&b| b == b'\n').enumerate() {
        let span = ByteSpan::of(offset, raw);
        offset += raw.len() as u64 + 1;
        let text = String::from_utf8_lossy(raw.strip_suffix(b"\r").unwrap_or(raw));
        dec.line_span(i as u64 + 1, span, &text, &mut items);
    }
    dec.finish(&mut items);
    let text_at = |s: ByteSpan| {
        let (a, b) = (s.offset as usize, s.end() as usize);
        assert!(b <= data.len(), "span {s:?} past the end ({})", data.len());
        String::from_utf8_lossy(&data[a..b]).into_owned()
    };
    for d in &items {
        let Decoded::Frame(f) = d else { continue };
        let Some(span) = f.origin.span else { continue };
        let text = text_at(span);
        match &f.body {
            Body::Request(r) => {
                let id = r.invocation_id.as_deref().unwrap_or("");
                let tool = r.tool_name.as_deref().unwrap_or("");
                let back = reparse(&text, id, tool, Part::Input, &|| serde_json::Value::Null);
                assert_eq!(back.as_ref(), r.input.as_ref(), "input of {id:?}");
            }
            Body::Result(r) => {
                let id = r.invocation_id.as_deref().unwrap_or("");
                let tool = r.tool_name.as_deref().unwrap_or("");
                let back = reparse(&text, id, tool, Part::Output, &|| serde_json::Value::Null);
                assert!(back.is_some(), "output of {id:?} not found again");
            }
            _ => {}
        }
    }
    let s = Session::from_decoded(items);
    let open = s.invocations.iter().filter(|i| i.status.is_open()).count() as u64;
    assert_eq!(s.counts.running, open);
    assert_eq!(s.counts.invocations, s.invocations.len() as u64);
});
