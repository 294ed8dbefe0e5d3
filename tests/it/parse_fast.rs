//! The one-pass `parse_line` (and `parse_line_with` skipping outputs) against the reference
//! reading of a line (`serde_json::from_str::<Value>` then `frame_from_value`), line by line.
//!
//! Lines: every `tests/fixtures/*.ndjson` line; every frame of every corpus file (imported, then
//! written back with `Frame::to_json`), skipped when `../shared/corpus` is absent; generated
//! recordings (`examples/gen.rs`); and variants of those lines: `type` after `payload`, shuffled
//! keys, envelope fields in `metadata` or of the wrong type, payload fields of the wrong type
//! (shape errors), `null` and non-object payloads and metadata, repeated keys, escaped keys, bad
//! JSON, and values `serde_json` rejects only when it builds them (lone surrogates, numbers out of
//! range).
//!
//! "Same" is `Frame` equality plus key order (maps compare without it): the frame written back
//! with `to_json`, the payload, `extra` and `metadata` keys, byte for byte.

use std::path::Path;

use rawpv::import::{self, Decoded};
use rawpv::protocol::{
    Body, Frame, OutputShape, ParseError, ParseErrorKind, ParseOptions, frame_from_value,
    parse_line, parse_line_fast, parse_line_with,
};
use serde_json::{Map, Value, json};

use crate::generator;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus");
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// The reference path.
fn reference(line: u64, text: &str) -> Result<Frame, ParseError> {
    let v = serde_json::from_str::<Value>(text)
        .map_err(|e| ParseError::new(line, ParseErrorKind::Json(e.to_string()), text))?;
    frame_from_value(line, v).map_err(|kind| ParseError::new(line, kind, text))
}

/// Everything about a frame, key order included.
fn fingerprint(f: &Frame) -> (String, String, Vec<String>, Vec<String>) {
    let keys = |m: &Map<String, Value>| m.keys().cloned().collect::<Vec<_>>();
    (
        f.to_json().to_string(),
        f.payload_json().to_string(),
        keys(&f.envelope.extra),
        keys(&f.envelope.metadata),
    )
}

/// The reference frame as the skipping reader should give it: a result's present output replaced
/// by the stand-in of its shape.
fn skipped(mut f: Frame) -> Frame {
    if let Body::Result(r) = &mut f.body
        && let Some(out) = r.output.as_mut()
    {
        *out = OutputShape::of(out).stand_in();
        f.origin.output_skipped = true;
    }
    f
}

fn same_result(what: &str, got: &Result<Frame, ParseError>, want: &Result<Frame, ParseError>) {
    match (got, want) {
        (Ok(g), Ok(w)) => {
            assert_eq!(g, w, "{what}");
            assert_eq!(fingerprint(g), fingerprint(w), "key order: {what}");
        }
        (g, w) => assert_eq!(g, w, "{what}"),
    }
}

/// [`check`], and the one-pass reader took the line itself (no fallback): true of every
/// well-formed frame line of the fixtures, the corpus and the generator.
fn check_fast(line: u64, text: &str) {
    assert!(check(line, text), "not a frame: {text}");
    for skip_output in [false, true] {
        let opts = ParseOptions { skip_output };
        assert!(
            parse_line_fast(line, text, &opts).is_some(),
            "fell back to the reference: {text}"
        );
    }
    let skipped = parse_line_with(line, text, &ParseOptions { skip_output: true });
    if let Ok(Frame {
        body: Body::Result(r),
        ..
    }) = &parse_line(line, text)
    {
        let f = skipped.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f.origin.output_skipped, r.output.is_some(), "{text}");
    }
}

/// Checks one line both ways (plain and skipping outputs). Returns whether it was a frame.
fn check(line: u64, text: &str) -> bool {
    let want = reference(line, text);
    same_result(text, &parse_line(line, text), &want);
    // Skipping: the output is a stand-in of the same shape, or (when the line was left to the
    // reference path: repeated keys, …) the real one; never anything else.
    let skip = ParseOptions { skip_output: true };
    let got = parse_line_with(line, text, &skip);
    let is_skipped = got.as_ref().is_ok_and(|f| f.origin.output_skipped);
    let want_skipped = if is_skipped {
        want.clone().map(skipped)
    } else {
        want.clone()
    };
    same_result(&format!("skipping: {text}"), &got, &want_skipped);
    want.is_ok()
}

/// Variants of a frame line that exercise every rule of the envelope and payload readers.
fn variants(text: &str) -> Vec<String> {
    let mut out = vec![text.to_owned(), format!("  {text} "), format!("{text}x")];
    let half = (0..=text.len() / 2)
        .rev()
        .find(|&i| text.is_char_boundary(i));
    out.push(text[..half.unwrap_or(0)].to_owned());
    let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(text) else {
        return out;
    };
    if !(text.starts_with('{') && text.ends_with('}')) {
        return out;
    }
    let write = |m: &Map<String, Value>| Value::Object(m.clone()).to_string();
    // Key orders: `type` last (payload read raw first), reversed, rotated.
    let mut last = obj.clone();
    if let Some(t) = last.shift_remove("type") {
        last.insert("type".into(), t);
    }
    out.push(write(&last));
    let entries: Vec<(String, Value)> = obj.clone().into_iter().collect();
    out.push(write(&entries.iter().rev().cloned().collect()));
    for r in 1..entries.len() {
        let mut rot = entries.clone();
        rot.rotate_left(r);
        out.push(write(&rot.into_iter().collect()));
    }
    // Envelope fields moved into metadata, duplicated there, or of the wrong type.
    let mut meta = obj.clone();
    let mut m = Map::new();
    for k in ["seq", "timestamp", "session_id", "id"] {
        if let Some(v) = meta.shift_remove(k) {
            m.insert(k.into(), v);
        }
    }
    m.insert("frame_id".into(), json!("f-1"));
    m.insert("ts".into(), json!(1_700_000_000_000_i64));
    m.insert("sequence".into(), json!(9));
    meta.insert("metadata".into(), Value::Object(m.clone()));
    out.push(write(&meta));
    let mut wrong = obj.clone();
    wrong.insert("seq".into(), json!("3"));
    wrong.insert("id".into(), json!(5));
    wrong.insert("timestamp".into(), json!("not a time"));
    wrong.insert("ts".into(), json!(12.5));
    wrong.insert("sequence".into(), json!(-1));
    wrong.insert("session_id".into(), Value::Null);
    wrong.insert("frame_id".into(), json!("fid"));
    wrong.insert("zz".into(), json!({"a": [1, 2.5, -3, "x"]}));
    out.push(write(&wrong));
    m.insert("seq".into(), json!(4));
    m.insert("id".into(), json!("meta-id"));
    wrong.insert("metadata".into(), Value::Object(m));
    out.push(write(&wrong));
    for v in [Value::Null, json!(5), json!("m"), json!([1])] {
        let mut o = obj.clone();
        o.insert("metadata".into(), v.clone());
        out.push(write(&o));
        let mut o = obj.clone();
        o.insert("payload".into(), v);
        out.push(write(&o));
    }
    let mut o = obj.clone();
    o.shift_remove("payload");
    out.push(write(&o));
    let mut o = obj.clone();
    o.shift_remove("type");
    out.push(write(&o));
    let mut o = obj.clone();
    o.insert("type".into(), json!(7));
    out.push(write(&o));
    // Payload fields of the wrong type, one at a time (shape errors), and odd but valid ones.
    if let Some(Value::Object(p)) = obj.get("payload") {
        let fields: [(&str, &[Value]); 14] = [
            ("invocation_id", &[json!(5), Value::Null, json!("")]),
            ("tool_name", &[json!(["x"]), Value::Null]),
            ("tool_version", &[json!(1)]),
            ("input", &[Value::Null, json!(5), json!({"k": {"n": null}})]),
            ("parallel_group_id", &[json!(true)]),
            ("stream_type", &[json!(1), json!("stdnet"), Value::Null]),
            ("chunk", &[json!(1), json!("")]),
            (
                "sequence",
                &[json!(-1), json!(1.5), json!("3"), json!(u64::MAX)],
            ),
            ("status", &[json!(3), json!("weird"), Value::Null]),
            (
                "output",
                &[
                    Value::Null,
                    json!(""),
                    json!("x"),
                    json!([]),
                    json!(["a", "b"]),
                    json!(["a", 1]),
                    json!({}),
                    json!({"a": 1}),
                    json!(0),
                    json!(false),
                ],
            ),
            ("output_type", &[json!({}), json!("nope")]),
            (
                "duration_ms",
                &[json!("1"), json!(-3), json!(2.25), json!(7)],
            ),
            ("truncated", &[json!("no"), json!(1)]),
            (
                "tools",
                &[json!(5), json!([{"name": 1}]), json!([{"name": "A"}])],
            ),
        ];
        for (k, vals) in fields {
            for v in vals {
                let mut p2 = p.clone();
                p2.insert(k.into(), v.clone());
                let mut o = obj.clone();
                o.insert("payload".into(), Value::Object(p2.clone()));
                out.push(write(&o));
                // The same with `type` after the payload.
                if let Some(t) = o.shift_remove("type") {
                    o.insert("type".into(), t);
                }
                out.push(write(&o));
            }
        }
        let mut p2 = p.clone();
        p2.insert("unknown_field".into(), json!({"deep": [[{"x": 1}]]}));
        p2.insert("another".into(), json!(-0.0));
        let mut o = obj.clone();
        o.insert("payload".into(), Value::Object(p2));
        out.push(write(&o));
    }
    // Repeated keys (the last value wins at the first key's place), escaped keys, raw-value
    // token, values serde_json rejects only when building them.
    let inner = &text[1..];
    for prefix in [
        r#""seq":"dup","#,
        r#""payload":{},"#,
        r#""type":"x.y","#,
        r#""metadata":{"id":"m"},"#,
        r#""zz":1,"zz":2,"#,
        r#""typ\u0065":"agent.text.done","#,
        r#""$serde_json::private::RawValue":"{}","#,
    ] {
        out.push(format!("{{{prefix}{inner}"));
    }
    let body = &text[..text.len() - 1];
    for suffix in [
        r#","type":"agent.error""#,
        r#","payload":null"#,
        r#","seq":8"#,
        r#","zz":1,"zz":{"a":2}"#,
    ] {
        out.push(format!("{body}{suffix}}}"));
    }
    if text.contains(r#""payload":{"#) {
        for p in [
            r#""invocation_id":7,"#,
            r#""output":1,"#,
            r#""output":"\ud800","#,
            r#""output":1e400,"#,
            r#""output":{"$serde_json::private::RawValue":"[1]"},"#,
            r#""output":[{"k":"\udc00"}],"#,
            r#""output":["a","b\n",{}],"#,
            r#""k":1,"k":2,"#,
            r#""input":"\ud83e\udd80","#,
            r#""$serde_json::private::RawValue":"1","#,
            r#""chunk":"a","chunk":"b","#,
            r#""tool_n\u0061me":"Esc","#,
        ] {
            out.push(text.replacen(r#""payload":{"#, &format!(r#""payload":{{{p}"#), 1));
        }
    }
    out
}

fn lines_of(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn fixtures_parse_like_the_reference() {
    let mut n = 0;
    for entry in std::fs::read_dir(FIXTURES).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "ndjson") {
            for (i, l) in lines_of(&std::fs::read(&path).unwrap()).iter().enumerate() {
                for v in variants(l) {
                    check(i as u64 + 1, &v);
                    n += 1;
                }
            }
        }
    }
    assert!(n > 1_000, "{n} lines");
}

#[test]
fn corpus_frames_parse_like_the_reference() {
    let root = Path::new(CORPUS);
    if crate::support::corpus::skipped(root) {
        return;
    }
    let mut files = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p
                .extension()
                .is_some_and(|e| e == "jsonl" || e == "json" || e == "ndjson")
            {
                files.push(p);
            }
        }
    }
    let mut frames = 0;
    for path in files {
        let Ok(loaded) = import::load_path(&path) else {
            continue;
        };
        for d in loaded.items {
            if let Decoded::Frame(f) = d {
                let text = f.to_json().to_string();
                check_fast(f.origin.line, &text);
                frames += 1;
                // Variants of every 50th frame keep the test quick.
                if frames % 50 == 0 {
                    for v in variants(&text) {
                        check(1, &v);
                    }
                }
            }
        }
    }
    assert!(frames > 100, "{frames} corpus frames");
}

#[test]
fn generated_lines_parse_like_the_reference() {
    for seed in [1, 2] {
        let mut buf = Vec::new();
        generator::generate(&mut buf, 1_500, seed).unwrap();
        let lines = lines_of(&buf);
        assert_eq!(lines.len(), 1_500);
        for (i, l) in lines.iter().enumerate() {
            check_fast(i as u64 + 1, l);
            if i % 40 == 0 {
                for v in variants(l) {
                    check(i as u64 + 1, &v);
                }
            }
        }
    }
}

#[test]
fn odd_lines_parse_like_the_reference() {
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let mut lines: Vec<String> = [
        "", " ", "null", "5", "\"x\"", "[1]", "{}", "{\"type\":5}", "{\"type\":null}",
        "{\"type\":\"a\"}", "{\"type\":\"a\"", "{\"type\":\"a\"}}", "{\"type\":\"a\",}",
        "{\"type\":\"tool.invoke.result\",\"payload\":{\"output\":\"\\ud800\"}}",
        "{\"payload\":{\"output\":\"\\ud800\"},\"type\":\"tool.invoke.result\"}",
        "{\"payload\":{\"output\":1e999},\"type\":\"tool.invoke.result\"}",
        "{\"type\":\"tool.invoke.result\",\"payload\":{\"output\":1e999}}",
        "{\"type\":\"tool.invoke.result\",\"payload\":{\"output\":\"a\u{7}\"}}",
        "{\"type\":\"tool.invoke.result\",\"payload\":{\"output\":\"a\\q\"}}",
        "{\"type\":\"tool.catalog.publish\",\"payload\":{\"tools\":[{\"name\":\"A\",\"output_type\":\"text\",\"x\":1}],\"diagnostics\":[{\"severity\":\"info\"}]}}",
        "{\"payload\":{\"tools\":[{\"name\":\"A\"}]},\"type\":\"tool.catalog.publish\"}",
        "{\"type\":\"tool.catalog.publish\",\"payload\":{\"tools\":[{\"name\":5}]}}",
        "{\"type\":\"tool.invoke.request\",\"payload\":{\"invocation_id\":\"a\",\"invocation_id\":5}}",
        "{\"type\":\"tool.invoke.request\",\"payload\":{\"invocation_id\":5,\"invocation_id\":\"a\"}}",
        "{\"type\":\"agent.text.delta\",\"payload\":{\"text\":\"a\",\"text\":\"b\"}}",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    // Around serde_json's recursion limit (128), with `type` before and after the payload.
    for n in [100, 118, 119, 120, 121, 124, 125, 126, 127, 128, 129, 200] {
        for t in [
            "tool.invoke.result",
            "agent.text.delta",
            "tool.invoke.request",
        ] {
            let d = deep(n);
            lines.push(format!(
                "{{\"type\":\"{t}\",\"payload\":{{\"output\":{d},\"input\":{d},\"x\":{d}}}}}"
            ));
            lines.push(format!(
                "{{\"payload\":{{\"output\":{d},\"input\":{d},\"x\":{d}}},\"type\":\"{t}\"}}"
            ));
            lines.push(format!("{{\"payload\":{d},\"type\":\"{t}\"}}"));
            lines.push(format!("{{\"type\":\"{t}\",\"z\":{d}}}"));
        }
    }
    for (i, l) in lines.iter().enumerate() {
        check(i as u64 + 1, l);
    }
}
