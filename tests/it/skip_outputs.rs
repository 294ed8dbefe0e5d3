//! Folding a file while skipping the outputs the session defers (`fold_path`, the viewer's file
//! source) gives the session that folding complete frames gives: same findings (the checks read
//! a stand-in of each skipped output's shape), same invocations, same outputs read back; results
//! the session keeps in memory after all (unknown id, second result) get their real output back.
#![allow(clippy::unwrap_used)]

use std::io::Write;

use rawpv::import::Decoded;
use rawpv::session::{Item, Session};
use rawpv::source::file::{FileEvent, fold_path, read_path};
use serde_json::json;

use crate::generator;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// Folds complete frames (`read_path`, nothing skipped) into a session backed by the same file.
fn fold_complete(path: &std::path::Path) -> Session {
    let mut items: Vec<Decoded> = Vec::new();
    read_path(path, |ev| {
        if let FileEvent::Batch(b) = ev {
            items.extend(b);
        }
        true
    })
    .unwrap();
    let mut s = Session::new();
    s.backing = Some(std::sync::Arc::from(path));
    for d in items {
        s.apply(d);
    }
    s.finish();
    s
}

fn same_session(bytes: &[u8]) -> Session {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(bytes).unwrap();
    let (skipping, _) = fold_path(f.path()).unwrap();
    let complete = fold_complete(f.path());
    assert_eq!(skipping.findings, complete.findings);
    assert_eq!(skipping.counts, complete.counts);
    assert_eq!(skipping, complete);
    for inv in &skipping.invocations {
        assert_eq!(skipping.output(inv), complete.output(inv));
    }
    skipping
}

#[test]
fn generated_recording_folds_the_same_when_outputs_are_skipped() {
    let mut buf = Vec::new();
    generator::generate(&mut buf, 3_000, 1).unwrap();
    let s = same_session(&buf);
    assert!(
        s.invocations
            .iter()
            .filter(|i| i.output_span.is_some())
            .count()
            > 100,
        "the recording has deferred outputs"
    );
}

#[test]
fn fixtures_fold_the_same_when_outputs_are_skipped() {
    for entry in std::fs::read_dir(FIXTURES).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "ndjson") {
            same_session(&std::fs::read(&path).unwrap());
        }
    }
}

#[test]
fn results_kept_in_memory_get_their_real_output_back() {
    let big = "x".repeat(2_000);
    let line = |v: serde_json::Value| format!("{v}\n");
    let result = |id: &str, output: serde_json::Value, ot: &str| {
        line(json!({"type": "tool.invoke.result", "payload": {
            "invocation_id": id, "tool_name": "Bash", "status": "success",
            "output": output, "output_type": ot}}))
    };
    let mut text = String::new();
    text += &line(json!({"type": "tool.invoke.request", "payload": {
        "invocation_id": "a", "tool_name": "Bash", "input": {"command": "ls"}}}));
    text += &result("a", json!(big), "text");
    // A second result, a result for an unknown id, empty and list-shaped outputs, an output
    // type the shape decides (Glob: a list of paths), a line the fast reader leaves to the
    // reference one (a repeated key).
    text += &result("a", json!({"stdout": big, "stderr": ""}), "text");
    text += &result("nope", json!([big.clone(), "b"]), "file_list");
    text += &line(json!({"type": "tool.invoke.request", "payload": {
        "invocation_id": "g", "tool_name": "Glob", "input": {}}}));
    text += &result("g", json!([big.clone(), "b"]), "text");
    text += &line(json!({"type": "tool.invoke.request", "payload": {
        "invocation_id": "e", "tool_name": "Write", "input": {"pad": big.clone()}}}));
    text += &result("e", json!(""), "diff");
    text += &line(json!({"type": "tool.invoke.request", "payload": {
        "invocation_id": "d", "tool_name": "Bash", "input": {}}}));
    let dup = result("d", json!({"k": big.clone()}), "structured");
    text += &dup.replacen("{\"type\"", "{\"seq\":1,\"seq\":2,\"type\"", 1);
    let s = same_session(text.as_bytes());
    let events: Vec<_> = s
        .items
        .iter()
        .filter_map(|it| match it {
            Item::Event(f) => Some(f),
            _ => None,
        })
        .collect();
    assert_eq!(
        events.len(),
        2,
        "the second result and the unknown id's are events"
    );
    for f in events {
        assert!(!f.origin.output_skipped);
        let rawpv::protocol::Body::Result(r) = &f.body else {
            panic!("not a result: {f:?}")
        };
        let out = r.output.as_ref().unwrap().to_string();
        assert!(out.contains(&big), "real output back: {out:.80}");
    }
    assert!(!s.findings.is_empty());
}
