//! `rawpv check` end to end (`assert_cmd` on the binary): exit codes, text and JSON shapes, the
//! embedded demo, and every corpus file (skipped when `../shared/corpus` is absent).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

fn rawpv() -> Command {
    Command::cargo_bin("rawpv").unwrap()
}

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn json_report(args: &[&str]) -> (i32, Value) {
    let out = rawpv()
        .arg("check")
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    (code, v)
}

fn codes_at(v: &Value, level: &str) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["level"] == level)
        .map(|f| f["code"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn clean_file_exits_0_with_a_summary() {
    let path = fixture("check_clean.ndjson");
    let out = rawpv().args(["check", &path]).assert().code(0);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert_eq!(stdout, format!("{path}: 0 errors, 0 warnings, 0 infos\n"));
}

#[test]
fn errors_exit_1_in_compiler_format() {
    let path = fixture("check_tool_unavailable.ndjson");
    let out = rawpv().args(["check", &path]).assert().code(1);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let first = stdout.lines().next().unwrap();
    assert_eq!(
        first,
        format!(
            "{path}:2: error[tool-unavailable] request for WebFetch, which the catalog marks unavailable (no network) (SPEC 3.5)"
        )
    );
    assert!(
        stdout.ends_with(": 1 error, 0 warnings, 0 infos\n"),
        "{stdout}"
    );
}

#[test]
fn warnings_only_exit_0() {
    rawpv()
        .args(["check", &fixture("check_request_never_answered.ndjson")])
        .assert()
        .code(0);
}

#[test]
fn unreadable_input_exits_2() {
    rawpv()
        .args(["check", "/nonexistent/rawpv/session.ndjson"])
        .assert()
        .code(2);
}

#[test]
fn json_schema_is_stable() {
    let (code, v) = json_report(&[&fixture("check_output_type_mismatch.ndjson")]);
    assert_eq!(code, 1);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["schema", "file", "findings", "summary"]);
    assert_eq!(v["schema"], "rawpv-check-report/1");
    assert_eq!(
        v["summary"],
        serde_json::json!({"error": 2, "warning": 0, "info": 0, "total": 2})
    );
    let f = &v["findings"][0];
    let keys: Vec<&str> = f.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["level", "code", "message", "line", "spec", "invocation_id"]
    );
    assert_eq!(f["line"], 5);
    assert_eq!(f["spec"], "SPEC 3.4");
}

#[test]
fn demo_has_its_deliberate_problems_only() {
    let (code, v) = json_report(&["demo"]);
    assert_eq!(code, 1);
    let mut errors = codes_at(&v, "error");
    errors.sort();
    assert_eq!(
        errors,
        [
            "output-type-mismatch",
            "output-type-mismatch",
            "tool-fatal-diagnostic",
            "tool-unavailable"
        ]
    );
    assert!(codes_at(&v, "warning").is_empty());
    assert_eq!(codes_at(&v, "info"), ["tool-degraded"; 3]);
}

/// Error codes an importer would cause by producing frames that break the spec. The converted
/// corpus must have none of them; other errors (e.g. a result whose request was cut off) are in
/// the input itself.
const ADAPTER_ERRORS: &[&str] = &[
    "missing-field",
    "unknown-enum-value",
    "tool-name-mismatch",
    "output-type-mismatch",
    "stream-sequence-duplicate",
    "stream-sequence-gap",
    "invocation-id-not-uuid-v4",
    "duplicate-result",
    "invalid-payload",
    "tool-not-in-catalog",
];

#[test]
fn corpus_files_check_without_adapter_errors() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus");
    if crate::support::corpus::skipped(Path::new(root)) {
        return;
    }
    let mut files = Vec::new();
    for dir in ["claude-code", "anthropic-api"] {
        let mut stack = vec![Path::new(root).join(dir)];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    files.push(p);
                }
            }
        }
    }
    files.sort();
    assert!(!files.is_empty());
    for f in files {
        let path = f.display().to_string();
        let (code, v) = json_report(&[&path]);
        let errors = codes_at(&v, "error");
        assert_eq!(code, i32::from(!errors.is_empty()), "{path}: exit code");
        assert_eq!(
            v["summary"]["error"].as_u64().unwrap() as usize,
            errors.len(),
            "{path}"
        );
        let bad: Vec<&String> = errors
            .iter()
            .filter(|c| ADAPTER_ERRORS.contains(&c.as_str()))
            .collect();
        assert!(bad.is_empty(), "{path}: adapter-caused errors {bad:?}");
    }
}
