//! SPEC 2 leniency, field by field (issue 17): a payload field of the wrong JSON type gives one
//! `wrong-field-type` finding naming the field, its line and what was expected, and the frame is
//! kept with the field absent, so the session is the one the same file gives without that field.
//!
//! The base recording (`tests/fixtures/lenient_base.ndjson`) has every field of every typed frame
//! type: a catalog (two tools, one unavailable, a diagnostic), a request streamed and answered,
//! a request for the unavailable tool. Each test puts a value of the wrong type in one field.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use rawpv::finding::{Finding, Level, code};
use rawpv::import::load_bytes;
use rawpv::session::Session;
use serde_json::{Value, json};

const BASE: &str = include_str!("../fixtures/lenient_base.ndjson");

/// The base recording with the payload field at `path` (`a`, `a[1]`, `a[1].b`) of line `line`
/// set to `value`, or removed when `value` is `None`.
fn edited(line: usize, path: &str, value: Option<&Value>) -> String {
    let mut out = String::new();
    for (i, l) in BASE.lines().enumerate() {
        if i + 1 != line {
            out.push_str(l);
            out.push('\n');
            continue;
        }
        let mut v: Value = serde_json::from_str(l).unwrap();
        let payload = v["payload"].as_object_mut().unwrap();
        let (head, field) = path.split_once('.').unwrap_or((path, ""));
        let (key, index) = match head.split_once('[') {
            Some((k, i)) => (k, Some(i.trim_end_matches(']').parse::<usize>().unwrap())),
            None => (head, None),
        };
        let slot: &mut serde_json::Map<String, Value> = match index {
            None => payload,
            Some(i) if field.is_empty() => {
                let arr = payload[key].as_array_mut().unwrap();
                match value {
                    Some(v) => arr[i] = v.clone(),
                    None => {
                        arr.remove(i);
                    }
                }
                out.push_str(&v.to_string());
                out.push('\n');
                continue;
            }
            Some(i) => payload[key][i].as_object_mut().unwrap(),
        };
        let name = if field.is_empty() { key } else { field };
        match value {
            Some(x) => {
                assert!(
                    slot.contains_key(name),
                    "the base has {path} on line {line}"
                );
                slot.insert(name.into(), x.clone());
            }
            None => {
                slot.shift_remove(name);
            }
        }
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out
}

fn session(text: &str) -> Session {
    Session::from_decoded(load_bytes(text.as_bytes()).items)
}

fn sorted(mut f: Vec<Finding>) -> Vec<Finding> {
    f.sort_by(|a, b| (a.line, a.code, &a.message).cmp(&(b.line, b.code, &b.message)));
    f
}

/// What the session holds, for "nothing else was lost": every row, call and publish.
fn contents(s: &Session) -> String {
    let calls: Vec<String> = s
        .invocations
        .iter()
        .map(|i| {
            format!(
                "{} {} {:?} {:?} {:?} {:?} input={} result={:?} chunks={:?} lines={}/{:?} chain={:?} parent={:?} children={:?}",
                i.invocation_id,
                i.tool_name,
                i.tool_version,
                i.parallel_group_id,
                i.status,
                (i.requested_at, i.ended_at),
                s.input(i),
                i.result,
                i.stream,
                i.request_line,
                i.result_line,
                i.delegation_chain,
                i.parent,
                i.children,
            )
        })
        .collect();
    let catalog = s.catalog().map(|c| format!("{c:?}"));
    format!(
        "items={} publishes={} calls={calls:#?} catalog={catalog:?}",
        s.items.len(),
        s.publishes.len()
    )
}

/// Puts `wrong` at `path` on `line`: one finding more than the file without the field, exactly
/// `want`, and the same session.
fn one_finding(line: usize, path: &str, wrong: &Value, want: Finding) {
    let absent = session(&edited(line, path, None));
    let got = session(&edited(line, path, Some(wrong)));
    let mut expected = absent.findings.clone();
    // The field absent is a missing-field finding when it is required; its wrong type says it.
    let leaf = path.rsplit('.').next().unwrap();
    expected.retain(|f| {
        !(f.code == rawpv::check::code::MISSING_FIELD
            && f.line == line as u64
            && f.message.contains(&format!("`{leaf}`")))
    });
    expected.push(want);
    assert_eq!(sorted(got.findings.clone()), sorted(expected), "{path}");
    assert_eq!(contents(&got), contents(&absent), "{path}");
}

fn finding(level: Level, spec: &'static str, line: u64, msg: &str, id: Option<&str>) -> Finding {
    // A frame's finding is its session's (the default one here).
    let f = Finding::new(level, code::WRONG_FIELD_TYPE, spec, line, msg.to_owned()).in_session(0);
    match id {
        Some(id) => f.for_invocation(id),
        None => f,
    }
}

const ID1: &str = "00000000-0000-4000-8000-000000000001";

/// One test per field: `name: line, path, wrong value, level, spec, message`.
macro_rules! wrong_field {
    ($($name:ident: $line:expr, $path:expr, $wrong:expr, $level:ident, $spec:expr, $id:expr, $msg:expr;)+) => {$(
        #[test]
        fn $name() {
            one_finding($line, $path, &$wrong, finding(Level::$level, $spec, $line, $msg, $id));
        }
    )+};
}

wrong_field! {
    request_invocation_id: 2, "invocation_id", json!(1), Error, "SPEC 3.1", None,
        "tool.invoke.request field `invocation_id` is a number, expected a string; read as absent";
    request_tool_name: 2, "tool_name", json!(["Bash"]), Error, "SPEC 3.1", Some(ID1),
        "tool.invoke.request field `tool_name` is an array, expected a string; read as absent";
    request_tool_version: 2, "tool_version", json!(1), Warning, "SPEC 3.1", Some(ID1),
        "tool.invoke.request field `tool_version` is a number, expected a string; read as absent";
    request_parallel_group_id: 2, "parallel_group_id", json!(7), Warning, "SPEC 3.1", Some(ID1),
        "tool.invoke.request field `parallel_group_id` is a number, expected a string; read as absent";
    stream_invocation_id: 3, "invocation_id", json!({"id": 1}), Error, "SPEC 3.3", None,
        "tool.invoke.stream field `invocation_id` is an object, expected a string; read as absent";
    stream_tool_name: 3, "tool_name", json!(false), Error, "SPEC 3.3", Some(ID1),
        "tool.invoke.stream field `tool_name` is a boolean, expected a string; read as absent";
    stream_stream_type: 3, "stream_type", json!(1), Error, "SPEC 3.3", Some(ID1),
        "tool.invoke.stream field `stream_type` is a number, expected a string; read as absent";
    stream_chunk: 3, "chunk", json!(["a"]), Error, "SPEC 3.3", Some(ID1),
        "tool.invoke.stream field `chunk` is an array, expected a string; read as absent";
    stream_sequence: 3, "sequence", json!("0"), Error, "SPEC 3.3", Some(ID1),
        "tool.invoke.stream field `sequence` is a string, expected a non-negative integer; read as absent";
    result_invocation_id: 4, "invocation_id", json!(5), Error, "SPEC 3.2", None,
        "tool.invoke.result field `invocation_id` is a number, expected a string; read as absent";
    result_tool_name: 4, "tool_name", json!(5), Error, "SPEC 3.2", Some(ID1),
        "tool.invoke.result field `tool_name` is a number, expected a string; read as absent";
    result_status: 4, "status", json!(true), Error, "SPEC 3.2", Some(ID1),
        "tool.invoke.result field `status` is a boolean, expected a string; read as absent";
    result_output_type: 4, "output_type", json!({}), Error, "SPEC 3.2", Some(ID1),
        "tool.invoke.result field `output_type` is an object, expected a string; read as absent";
    result_duration_ms: 4, "duration_ms", json!("12"), Warning, "SPEC 3.2", Some(ID1),
        "tool.invoke.result field `duration_ms` is a string, expected a number; read as absent";
    result_truncated: 4, "truncated", json!("false"), Warning, "SPEC 3.2", Some(ID1),
        "tool.invoke.result field `truncated` is a string, expected a boolean; read as absent";
    catalog_tools: 1, "tools", json!({"Bash": {}}), Error, "SPEC 3.5", None,
        "tool.catalog.publish field `tools` is an object, expected an array; read as absent";
    catalog_diagnostics: 1, "diagnostics", json!("none"), Warning, "SPEC 3.5", None,
        "tool.catalog.publish field `diagnostics` is a string, expected an array; read as absent";
    catalog_tool_entry: 1, "tools[0]", json!("Bash"), Error, "SPEC 3.5", None,
        "tool.catalog.publish field `tools[0]` is a string, expected an object; read as absent";
    catalog_tool_name: 1, "tools[0].name", json!(1), Error, "SPEC 3.5", None,
        "tool.catalog.publish field `tools[0].name` is a number, expected a string; read as absent";
    catalog_tool_version: 1, "tools[0].version", json!(1), Warning, "SPEC 3.5", None,
        "tool.catalog.publish field `tools[0].version` is a number, expected a string; read as absent";
    catalog_tool_description: 1, "tools[1].description", json!(["Ship"]), Error, "SPEC 3.5", None,
        "tool.catalog.publish field `tools[1].description` is an array, expected a string; read as absent";
    catalog_tool_output_type: 1, "tools[0].output_type", json!(3), Warning, "SPEC 3.5", None,
        "tool.catalog.publish field `tools[0].output_type` is a number, expected a string; read as absent";
    catalog_tool_requires_approval: 1, "tools[0].requires_approval", json!("no"), Warning, "SPEC 3.5", None,
        "tool.catalog.publish field `tools[0].requires_approval` is a string, expected a boolean; read as absent";
    catalog_tool_category: 1, "tools[0].category", json!(2), Warning, "SPEC 3.5", None,
        "tool.catalog.publish field `tools[0].category` is a number, expected a string; read as absent";
    catalog_tool_status: 1, "tools[1].status", json!(0), Warning, "SPEC 3.5", None,
        "tool.catalog.publish field `tools[1].status` is a number, expected a string; read as absent";
    catalog_tool_status_description: 1, "tools[1].status_description", json!(false), Warning, "SPEC 3.5", None,
        "tool.catalog.publish field `tools[1].status_description` is a boolean, expected a string; read as absent";
    catalog_diagnostic_entry: 1, "diagnostics[0]", json!(4), Warning, "SPEC 3.5", None,
        "tool.catalog.publish field `diagnostics[0]` is a number, expected an object; read as absent";
    catalog_diagnostic_severity: 1, "diagnostics[0].severity", json!(1), Error, "SPEC 3.5", None,
        "tool.catalog.publish field `diagnostics[0].severity` is a number, expected a string; read as absent";
    catalog_diagnostic_tool_name: 1, "diagnostics[0].tool_name", json!(1), Warning, "SPEC 3.5", None,
        "tool.catalog.publish field `diagnostics[0].tool_name` is a number, expected a string; read as absent";
    catalog_diagnostic_code: 1, "diagnostics[0].code", json!(404), Error, "SPEC 3.5", None,
        "tool.catalog.publish field `diagnostics[0].code` is a number, expected a string; read as absent";
    catalog_diagnostic_message: 1, "diagnostics[0].message", json!({"text": "bash 5"}), Error, "SPEC 3.5", None,
        "tool.catalog.publish field `diagnostics[0].message` is an object, expected a string; read as absent";
}

#[test]
fn the_base_recording_has_only_its_deliberate_finding() {
    let s = session(BASE);
    let codes: Vec<&str> = s.findings.iter().map(|f| f.code).collect();
    assert_eq!(codes, ["tool-unavailable"]);
}

/// The cases: one optional field of the wrong type used to throw the frame away and
/// every later check went wrong.
#[test]
fn a_wrong_catalog_tool_version_keeps_the_catalog() {
    let s = session(&edited(1, "tools[0].version", Some(&json!(1))));
    let catalog = s.catalog().expect("the catalog is kept");
    assert_eq!(
        catalog
            .tools
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        ["Bash", "Deploy"]
    );
    // The request for the unavailable tool is still reported.
    assert!(
        s.findings
            .iter()
            .any(|f| f.code == "tool-unavailable" && f.line == 5),
        "{:?}",
        s.findings
    );
}

#[test]
fn a_string_duration_or_truncated_keeps_the_result() {
    for (path, v) in [("duration_ms", json!("12")), ("truncated", json!("yes"))] {
        let s = session(&edited(4, path, Some(&v)));
        let codes: Vec<&str> = s.findings.iter().map(|f| f.code).collect();
        assert_eq!(codes, ["wrong-field-type", "tool-unavailable"], "{path}");
        assert!(!s.invocations[0].status.is_open(), "{path}: answered");
    }
}

#[test]
fn a_number_tool_version_or_group_keeps_the_request() {
    for path in ["tool_version", "parallel_group_id"] {
        let s = session(&edited(2, path, Some(&json!(3))));
        let codes: Vec<&str> = s.findings.iter().map(|f| f.code).collect();
        assert_eq!(codes, ["wrong-field-type", "tool-unavailable"], "{path}");
        assert_eq!(s.invocations.len(), 2, "{path}");
    }
}

/// In the viewer (80×24 and 200×60): the catalog row is marked, the feed and the catalog panel
/// agree on two tools, and the problems panel names the field and its line.
#[test]
fn the_viewer_shows_the_finding_and_keeps_the_catalog() {
    use crate::support::headless::{act, draw, screen_text};
    use rawpv::action::Action;
    use rawpv::app::App;
    let text = edited(1, "tools[0].version", Some(&json!(1)));
    for (w, h) in [(80, 24), (200, 60)] {
        let mut app = App::headless(load_bytes(text.as_bytes()).items, "wrong.ndjson");
        let feed = screen_text(&draw(&mut app, w, h));
        assert!(
            feed.contains("!catalog  2 tools published"),
            "{w}x{h}: {feed}"
        );
        act(&mut app, &[Action::ShowCatalog]);
        let catalog = screen_text(&draw(&mut app, w, h));
        assert!(catalog.contains("publish 1"), "{w}x{h}: {catalog}");
        assert!(catalog.contains("2 tools"), "{w}x{h}: {catalog}");
        assert!(catalog.contains("Deploy"), "{w}x{h}: {catalog}");
        act(&mut app, &[Action::ShowProblems]);
        let problems = screen_text(&draw(&mut app, w, h));
        assert!(problems.contains("wrong-field-type"), "{w}x{h}: {problems}");
        assert!(problems.contains("L1"), "{w}x{h}: {problems}");
    }
}
