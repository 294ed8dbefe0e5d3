//! The lenient parse layer (`protocol::parse`) against the reader it replaced, kept here as the
//! oracle: the old reference reading of a line (`serde_json::from_str::<Value>`, the envelope
//! rules, then the strict typed payload, or the payload kept generic with a shape error when one
//! field did not fit), line by line.
//!
//! * A line the old reader read typed gives the same frame, key order included, with no field
//!   errors; a line it refused gives the same error.
//! * A line whose payload the old reader kept generic (a field of the wrong type) now gives the
//!   typed frame of the same line *without* those fields (which the old reader also reads
//!   typed), plus one field error naming each.
//! * Every well-formed line of the fixtures, the corpus and the generator is read by the one
//!   pass (`parse_line_one_pass`), not the `Value` reading.
//!
//! Lines: every `tests/fixtures/*.ndjson` line; every frame of every corpus file (imported, then
//! written back with `Frame::to_json`), skipped when `../shared/corpus` is absent; generated
//! recordings (`examples/gen.rs`); and variants of those lines: `type` after `payload`, shuffled
//! keys, envelope fields in `metadata` or of the wrong type, payload fields of the wrong type,
//! `null` and non-object payloads and metadata, repeated keys, escaped keys, bad JSON, and values
//! `serde_json` rejects only when it builds them (lone surrogates, numbers out of range).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use rawpv::import::{self, Decoded};
use rawpv::protocol::{
    Body, CatalogPublish, Envelope, Frame, FrameType, Origin, OutputShape, ParseError,
    ParseErrorKind, ParseOptions, Timestamp, ToolInvokeRequest, ToolInvokeResult, ToolInvokeStream,
    parse_line, parse_line_one_pass, parse_line_with,
};
use serde_json::{Map, Value, json};

use crate::generator;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus");
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// The old reader (`protocol/parse.rs` before issue 17), as it was: the frame, and whether its
/// typed payload did not fit (then the body is `Body::Generic`).
mod old {
    use super::*;

    pub fn reference(line: u64, text: &str) -> Result<(Frame, bool), ParseError> {
        let v = serde_json::from_str::<Value>(text)
            .map_err(|e| ParseError::new(line, ParseErrorKind::Json(e.to_string()), text))?;
        from_value(line, v).map_err(|kind| ParseError::new(line, kind, text))
    }

    fn from_value(line: u64, value: Value) -> Result<(Frame, bool), ParseErrorKind> {
        let Value::Object(mut obj) = value else {
            return Err(ParseErrorKind::NotObject);
        };
        let frame_type = match obj.remove("type") {
            Some(Value::String(s)) => FrameType::from_wire(&s),
            _ => return Err(ParseErrorKind::MissingType),
        };
        let payload = match obj.remove("payload") {
            Some(Value::Object(m)) => m,
            Some(Value::Null) | None => Map::new(),
            Some(other) => {
                let mut m = Map::new();
                m.insert("value".into(), other);
                m
            }
        };
        let metadata = match obj.remove("metadata") {
            Some(Value::Object(m)) => m,
            Some(Value::Null) | None => Map::new(),
            Some(other) => {
                obj.insert("metadata".into(), other);
                Map::new()
            }
        };
        let envelope = envelope_from(obj, metadata);
        let (body, shape_error) = body_from(&frame_type, payload);
        let frame = Frame {
            frame_type,
            body,
            envelope,
            origin: Origin::at(line),
            field_errors: Vec::new(),
        };
        Ok((frame, shape_error))
    }

    fn take_str(
        obj: &mut Map<String, Value>,
        meta: &Map<String, Value>,
        keys: &[&str],
    ) -> Option<String> {
        for k in keys {
            if let Some(Value::String(s)) = obj.get(*k) {
                let s = s.clone();
                obj.remove(*k);
                return Some(s);
            }
            if let Some(Value::String(s)) = meta.get(*k) {
                return Some(s.clone());
            }
        }
        None
    }

    fn envelope_from(mut obj: Map<String, Value>, metadata: Map<String, Value>) -> Envelope {
        let id = take_str(&mut obj, &metadata, &["id", "frame_id"]);
        let session_id = take_str(&mut obj, &metadata, &["session_id"]);
        let mut seq = None;
        for k in ["seq", "sequence"] {
            if let Some(n) = obj.get(k).and_then(Value::as_u64) {
                seq = Some(n);
                obj.remove(k);
                break;
            }
            if let Some(n) = metadata.get(k).and_then(Value::as_u64) {
                seq = Some(n);
                break;
            }
        }
        let mut timestamp = None;
        for k in ["timestamp", "ts"] {
            if let Some(t) = obj.get(k).and_then(Timestamp::from_json) {
                timestamp = Some(t);
                obj.remove(k);
                break;
            }
            if let Some(t) = metadata.get(k).and_then(Timestamp::from_json) {
                timestamp = Some(t);
                break;
            }
        }
        Envelope {
            id,
            session_id,
            seq,
            timestamp,
            metadata,
            extra: obj,
        }
    }

    fn body_from(frame_type: &FrameType, payload: Map<String, Value>) -> (Body, bool) {
        fn typed<T: serde::de::DeserializeOwned>(
            payload: Map<String, Value>,
            wrap: fn(T) -> Body,
        ) -> (Body, bool) {
            match serde_json::from_value::<T>(Value::Object(payload.clone())) {
                Ok(t) => (wrap(t), false),
                Err(_) => (Body::Generic(payload), true),
            }
        }
        match frame_type {
            FrameType::ToolInvokeRequest => typed::<ToolInvokeRequest>(payload, Body::Request),
            FrameType::ToolInvokeStream => typed::<ToolInvokeStream>(payload, Body::Stream),
            FrameType::ToolInvokeResult => typed::<ToolInvokeResult>(payload, Body::Result),
            FrameType::ToolCatalogPublish => typed::<CatalogPublish>(payload, Body::Catalog),
            _ => (Body::Generic(payload), false),
        }
    }
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

/// The frame as the skipping reader should give it: a result's present output replaced by the
/// stand-in of its shape.
fn skipped(mut f: Frame) -> Frame {
    if let Body::Result(r) = &mut f.body
        && let Some(out) = r.output.as_mut()
    {
        *out = OutputShape::of(out).stand_in();
        f.origin.output_skipped = true;
    }
    f
}

fn same(what: &str, got: &Frame, want: &Frame) {
    assert_eq!(got, want, "{what}");
    assert_eq!(fingerprint(got), fingerprint(want), "key order: {what}");
}

/// `text` with the payload fields at `paths` removed (`a`, `a[2]`, `a[2].b`), last first.
fn without(text: &str, paths: &[String]) -> String {
    let mut v: Value = serde_json::from_str(text).unwrap();
    for path in paths.iter().rev() {
        let payload = v.get_mut("payload").expect("a payload");
        let (head, rest) = path.split_once('.').unwrap_or((path, ""));
        let (key, index) = match head.split_once('[') {
            Some((k, i)) => (k, Some(i.trim_end_matches(']').parse::<usize>().unwrap())),
            None => (head, None),
        };
        let obj = payload.as_object_mut().unwrap();
        match (index, rest) {
            (None, _) => {
                obj.shift_remove(key);
            }
            (Some(i), "") => {
                obj[key].as_array_mut().unwrap().remove(i);
            }
            (Some(i), field) => {
                obj[key][i].as_object_mut().unwrap().shift_remove(field);
            }
        }
    }
    v.to_string()
}

/// The new reading of `text` (plain, or skipping outputs) against the old one.
fn check_with(line: u64, text: &str, skip_output: bool) -> bool {
    let opts = ParseOptions { skip_output };
    let got = parse_line_with(line, text, &opts);
    let fix = |f: Frame| if skip_output { skipped(f) } else { f };
    match (old::reference(line, text), got) {
        (Err(want), got) => assert_eq!(got, Err(want), "{text}"),
        (Ok((want, false)), Ok(got)) => same(text, &got, &fix(want)),
        (Ok((old_generic, true)), Ok(got)) => {
            // The old reader kept the payload generic; the new one reads it typed without the
            // fields of the wrong type, exactly as both read the line without them.
            assert!(!got.field_errors.is_empty(), "no field error: {text}");
            assert!(!matches!(got.body, Body::Generic(_)), "generic: {text}");
            assert_eq!(got.frame_type, old_generic.frame_type, "{text}");
            let paths: Vec<String> = got.field_errors.iter().map(|e| e.field.clone()).collect();
            let stripped = without(text, &paths);
            let (want, generic) = old::reference(line, &stripped).unwrap();
            assert!(!generic, "still generic without {paths:?}: {stripped}");
            let mut got = got;
            got.field_errors.clear();
            same(&format!("{text} without {paths:?}"), &got, &fix(want));
        }
        (Ok(_), Err(e)) => panic!("refused ({e}): {text}"),
    }
    parse_line(line, text).is_ok()
}

/// [`check_with`] both ways. Returns whether the line was a frame.
fn check(line: u64, text: &str) -> bool {
    check_with(line, text, true);
    check_with(line, text, false)
}

/// [`check`], and the one pass read the line itself: true of every well-formed frame line of
/// the fixtures, the corpus and the generator.
fn check_fast(line: u64, text: &str) {
    assert!(check(line, text), "not a frame: {text}");
    for skip_output in [false, true] {
        let opts = ParseOptions { skip_output };
        assert!(
            parse_line_one_pass(line, text, &opts).is_some(),
            "left to the Value reading: {text}"
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
