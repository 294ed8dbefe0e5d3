//! One fixture per finding code (`tests/fixtures/check_*.ndjson`): each holds lines that must be
//! reported and lines that must not; the test pins exactly which lines get the code, at what level.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use rawpv::check::code;
use rawpv::finding::{Level, code as fcode};
use rawpv::import::load_bytes;
use rawpv::session::Session;

fn session(name: &str) -> Session {
    let path = format!(
        "{}/tests/fixtures/check_{name}.ndjson",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Session::from_decoded(load_bytes(&bytes).items)
}

/// (line, level) of every finding with `code`, in line order.
fn hits(s: &Session, code: &str) -> Vec<(u64, Level)> {
    let mut v: Vec<(u64, Level)> = s
        .findings
        .iter()
        .filter(|f| f.code == code)
        .map(|f| (f.line, f.level))
        .collect();
    v.sort_by_key(|h| h.0);
    v
}

use Level::{Error as E, Info as I, Warning as W};

#[test]
fn missing_field() {
    let s = session("missing_field");
    assert_eq!(hits(&s, code::MISSING_FIELD), [(2, E), (3, E), (3, E)]);
    let msgs: Vec<&str> = s.findings.iter().map(|f| f.message.as_str()).collect();
    assert!(msgs.iter().any(|m| m.contains("`tool_name`")), "{msgs:?}");
    assert!(msgs.iter().any(|m| m.contains("`output_type`")), "{msgs:?}");
}

#[test]
fn unknown_enum_value() {
    let s = session("unknown_enum_value");
    assert_eq!(
        hits(&s, code::UNKNOWN_ENUM_VALUE),
        [(3, E), (4, E), (7, W), (7, W), (7, W), (7, E)]
    );
}

#[test]
fn input_not_object() {
    assert_eq!(
        hits(&session("input_not_object"), code::INPUT_NOT_OBJECT),
        [(1, E)]
    );
}

#[test]
fn tool_not_in_catalog() {
    assert_eq!(
        hits(&session("tool_not_in_catalog"), code::TOOL_NOT_IN_CATALOG),
        [(3, E)]
    );
    // A catalog an importer derived counts too, but only as a warning.
    assert_eq!(
        hits(
            &session("tool_not_in_catalog_derived"),
            code::TOOL_NOT_IN_CATALOG
        ),
        [(2, W)]
    );
}

#[test]
fn tool_unavailable_follows_the_latest_publish() {
    let s = session("tool_unavailable");
    assert_eq!(hits(&s, code::TOOL_UNAVAILABLE), [(2, E)]);
    assert_eq!(s.publishes.len(), 2);
}

#[test]
fn tool_fatal_diagnostic() {
    assert_eq!(
        hits(
            &session("tool_fatal_diagnostic"),
            code::TOOL_FATAL_DIAGNOSTIC
        ),
        [(2, E)]
    );
}

#[test]
fn tool_degraded() {
    assert_eq!(
        hits(&session("tool_degraded"), code::TOOL_DEGRADED),
        [(2, I)]
    );
}

#[test]
fn invocation_id_not_uuid_v4_skips_imported_frames() {
    assert_eq!(
        hits(
            &session("invocation_id_not_uuid_v4"),
            code::INVOCATION_ID_NOT_UUID_V4
        ),
        [(1, W), (2, W)]
    );
}

#[test]
fn stream_sequence_duplicate() {
    assert_eq!(
        hits(
            &session("stream_sequence_duplicate"),
            code::STREAM_SEQUENCE_DUPLICATE
        ),
        [(4, E)]
    );
}

/// A chunk after its call's result (line 5) is an error; the one before it (line 3) is not.
#[test]
fn stream_after_result() {
    let s = session("stream_after_result");
    assert_eq!(hits(&s, code::STREAM_AFTER_RESULT), [(5, E)]);
    assert_eq!(s.findings.len(), 1, "{:?}", s.findings);
}

/// A08 (RAWP-DPS 5.2.1): a tool whose entry requires approval is called after an
/// `agent.interaction.request` approving it. Line 2 names call 1's id: that call only (line 3
/// clean, line 5 a warning); line 7 names Bash and no id: Bash for the rest of the session
/// (lines 8 and 10 clean); Read needs none (line 12); the unavailable Purge is blocked (line 14:
/// its own finding only, its approval is moot); a prompt naming neither (line 16) approves
/// nothing (line 17).
#[test]
fn approval_request_missing() {
    let s = session("approval_request_missing");
    let all: Vec<(u64, Level, &str)> = s
        .findings
        .iter()
        .map(|f| (f.line, f.level, f.code))
        .collect();
    assert_eq!(
        all,
        [
            (5, W, code::APPROVAL_REQUEST_MISSING),
            (14, I, code::BLOCKED_REQUEST_ANSWERED),
            (17, W, code::APPROVAL_REQUEST_MISSING),
        ]
    );
    let f = &s.findings[0];
    assert_eq!(f.spec, "SPEC 3.1");
    assert_eq!(
        f.invocation_id.as_deref(),
        Some("3f2b8c1e-5a7d-4e9b-8c2a-000000000002")
    );
    assert!(f.message.contains("Deploy"), "{}", f.message);
}

/// An `error` diagnostic on Read (allowed, the user should be warned): an info on the Read
/// call; the `fatal` one on Bash blocks it (an error).
#[test]
fn tool_error_diagnostic() {
    let s = session("tool_fatal_diagnostic");
    assert_eq!(hits(&s, code::TOOL_ERROR_DIAGNOSTIC), [(3, I)]);
    assert_eq!(hits(&s, code::TOOL_FATAL_DIAGNOSTIC), [(2, E)]);
}

#[test]
fn stream_sequence_gap() {
    let s = session("stream_sequence_gap");
    assert_eq!(hits(&s, code::STREAM_SEQUENCE_GAP), [(4, E), (9, W)]);
    let open = s
        .findings
        .iter()
        .find(|f| f.code == code::STREAM_SEQUENCE_GAP && f.line == 9)
        .unwrap();
    assert!(open.message.contains("0–1"), "{}", open.message);
}

#[test]
fn tool_name_mismatch() {
    assert_eq!(
        hits(&session("tool_name_mismatch"), code::TOOL_NAME_MISMATCH),
        [(2, E), (3, E)]
    );
}

#[test]
fn output_type_mismatch() {
    // Declared by the catalog or the category default: an error either way (the whole SPEC 3.4
    // order is a MUST); accepted variants → nothing.
    assert_eq!(
        hits(&session("output_type_mismatch"), code::OUTPUT_TYPE_MISMATCH),
        [(5, E), (6, E)]
    );
}

#[test]
fn request_never_answered() {
    let s = session("request_never_answered");
    assert_eq!(hits(&s, code::REQUEST_NEVER_ANSWERED), [(1, W)]);
    assert_eq!(
        s.findings[0].invocation_id.as_deref(),
        Some("00000000-0000-4000-8000-000000000001")
    );
}

#[test]
fn status_description_missing() {
    assert_eq!(
        hits(
            &session("status_description_missing"),
            code::STATUS_DESCRIPTION_MISSING
        ),
        [(1, W)]
    );
}

#[test]
fn duplicate_catalog_tool() {
    assert_eq!(
        hits(
            &session("duplicate_catalog_tool"),
            code::DUPLICATE_CATALOG_TOOL
        ),
        [(1, W)]
    );
}

#[test]
fn pairing_rules_of_the_reducer() {
    let s = session("pairing");
    assert_eq!(hits(&s, fcode::RESULT_WITHOUT_REQUEST), [(1, E)]);
    assert_eq!(hits(&s, fcode::STREAM_WITHOUT_REQUEST), [(2, E)]);
    assert_eq!(hits(&s, fcode::DUPLICATE_INVOCATION_ID), [(4, E)]);
}

#[test]
fn clean_session_has_no_findings() {
    assert_eq!(session("clean").findings, []);
}

#[test]
fn every_checker_code_has_a_fixture() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    let mut seen = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(stem) = name
            .strip_prefix("check_")
            .and_then(|n| n.strip_suffix(".ndjson"))
        {
            for f in session(stem).findings {
                seen.insert(f.code);
            }
        }
    }
    for c in code::ALL {
        assert!(seen.contains(c), "no fixture reports {c}");
    }
}

/// A call whose input does not follow its tool's `input_schema` is a warning when it
/// succeeded (line 4: `timeout` is not an integer), not when the tool answered it with an
/// error (line 6: the guide's invalid call the model retries), and a valid one is clean.
#[test]
fn input_schema_is_checked_when_the_call_succeeds() {
    let s = session("input_schema_mismatch");
    assert_eq!(
        hits(&s, code::INPUT_SCHEMA_MISMATCH),
        vec![(4, Level::Warning)]
    );
    let f = s
        .findings
        .iter()
        .find(|f| f.code == code::INPUT_SCHEMA_MISMATCH)
        .unwrap();
    assert_eq!(
        f.message,
        "Bash input does not follow its input_schema at /timeout, and the call succeeded: \"soon\" is not of type \"integer\""
    );
    assert_eq!(s.findings.len(), 1, "{:?}", s.findings);
}

#[test]
fn request_findings_count_on_their_invocation() {
    let s = session("tool_fatal_diagnostic");
    let bash = s
        .invocation("00000000-0000-4000-8000-000000000001")
        .unwrap();
    assert_eq!(bash.findings, 1);
    // Read's own finding: the info of its `error` diagnostic.
    let read = s
        .invocation("00000000-0000-4000-8000-000000000002")
        .unwrap();
    assert_eq!(read.findings, 1);
}

#[test]
fn unanswered_use_reported_by_an_importer_is_not_reported_twice() {
    use rawpv::finding::Finding;
    use rawpv::import::Decoded;
    let mut items = load_bytes(
        br#"{"type":"tool.invoke.request","payload":{"invocation_id":"toolu_1","tool_name":"Bash","input":{}},"metadata":{"claude_code":{}}}
{"type":"tool.invoke.request","payload":{"invocation_id":"toolu_2","tool_name":"Bash","input":{}},"metadata":{"claude_code":{}}}"#,
    )
    .items;
    items.push(Decoded::Finding(
        Finding::new(
            Level::Warning,
            fcode::TOOL_USE_WITHOUT_RESULT,
            "SPEC 5",
            1,
            "cut off",
        )
        .for_invocation("toolu_1"),
    ));
    let s = Session::from_decoded(items);
    assert_eq!(hits(&s, fcode::TOOL_USE_WITHOUT_RESULT), [(1, W)]);
    assert_eq!(hits(&s, code::REQUEST_NEVER_ANSWERED), [(2, W)]);
}

#[test]
fn blocked_request_answered() {
    // A blocked call answered by `session.error` is an info, not an error nor never-answered
    // (lines 2, 7); one that runs after its `session.error` keeps its error (line 4).
    let s = session("blocked_request_answered");
    assert_eq!(hits(&s, code::BLOCKED_REQUEST_ANSWERED), [(2, I), (7, I)]);
    assert_eq!(hits(&s, code::TOOL_UNAVAILABLE), [(4, E)]);
    assert_eq!(hits(&s, code::TOOL_NOT_IN_CATALOG), []);
    assert_eq!(hits(&s, code::REQUEST_NEVER_ANSWERED), []);
    assert_eq!(s.findings.len(), 3);
}
