//! `rawpv check --format sarif|junit|json` for CI (issue 25): on every corpus file and on the
//! fixtures, the SARIF output validates against the official SARIF 2.1.0 JSON schema (OASIS,
//! vendored in `tests/fixtures/sarif-schema-2.1.0.json`), the JUnit XML parses and has the
//! testsuites / testsuite / testcase / failure structure with counts equal to the findings, and
//! the JSON report validates against the repository's `schemas/check-report.v1.json`. All three
//! agree with each other and with the exit code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::corpus;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn rawpv() -> Command {
    Command::cargo_bin("rawpv").unwrap()
}

fn check(path: &str, format: &str) -> (i32, Vec<u8>) {
    let out = rawpv()
        .args(["check", path, "--format", format])
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), out.stdout)
}

fn schema(rel: &str) -> jsonschema::Validator {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    jsonschema::validator_for(&v).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn assert_valid(v: &jsonschema::Validator, doc: &Value, what: &str) {
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}");
}

/// Every input the formats are tried on: the corpus (all of it) and the check fixtures.
fn inputs() -> Vec<PathBuf> {
    let mut files = corpus::files("").unwrap_or_default();
    files.retain(|p| p.extension().is_none_or(|e| e != "md"));
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for e in std::fs::read_dir(fixtures).unwrap().flatten() {
        let p = e.path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_file() && (name.starts_with("check_") || name.starts_with("anthropic_")) {
            files.push(p);
        }
    }
    files.sort();
    files
}

/// What the JUnit document says: (tests attribute, failures attribute, testcases, failures).
fn junit_counts(xml: &str, what: &str) -> (usize, usize, usize, usize) {
    let doc = roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("{what}: {e}\n{xml}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites", "{what}");
    let suites: Vec<_> = root
        .children()
        .filter(roxmltree::Node::is_element)
        .collect();
    assert_eq!(suites.len(), 1, "{what}");
    let suite = suites[0];
    assert_eq!(suite.tag_name().name(), "testsuite", "{what}");
    assert!(suite.attribute("name").is_some(), "{what}");
    let attr = |n: roxmltree::Node, k: &str| -> usize {
        n.attribute(k)
            .unwrap_or_else(|| panic!("{what}: no {k}"))
            .parse()
            .unwrap()
    };
    assert_eq!(attr(root, "tests"), attr(suite, "tests"), "{what}");
    assert_eq!(attr(root, "failures"), attr(suite, "failures"), "{what}");
    let cases: Vec<_> = suite
        .children()
        .filter(roxmltree::Node::is_element)
        .collect();
    for c in &cases {
        assert_eq!(c.tag_name().name(), "testcase", "{what}");
        assert!(c.attribute("name").is_some() && c.attribute("classname").is_some());
        for child in c.children().filter(roxmltree::Node::is_element) {
            assert!(
                matches!(child.tag_name().name(), "failure" | "system-out"),
                "{what}: {:?}",
                child.tag_name()
            );
        }
    }
    let failures = suite
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .count();
    (
        attr(suite, "tests"),
        attr(suite, "failures"),
        cases.len(),
        failures,
    )
}

#[test]
fn sarif_junit_and_json_on_every_input() {
    let sarif = schema("tests/fixtures/sarif-schema-2.1.0.json");
    let report = schema("schemas/check-report.v1.json");
    // The validators do reject: a driver without its required name, a level SARIF lacks, a
    // report of another version.
    let bad_sarif = serde_json::json!({"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]});
    assert!(!sarif.is_valid(&bad_sarif));
    let bad_level = serde_json::json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
        "results": [{"message": {"text": "m"}, "level": "fatal"}]}]});
    assert!(!sarif.is_valid(&bad_level));
    let bad_report = serde_json::json!({"schema": "rawpv-check-report/2", "file": "f", "findings": [],
        "summary": {"error": 0, "warning": 0, "info": 0, "total": 0}});
    assert!(!report.is_valid(&bad_report));
    let files = inputs();
    assert!(files.len() > 20, "{files:?}");
    for f in &files {
        let path = f.display().to_string();
        let (code_json, out) = check(&path, "json");
        let json: Value = serde_json::from_slice(&out).unwrap();
        assert_valid(&report, &json, &format!("{path} (json)"));
        assert_eq!(json["schema"], "rawpv-check-report/1");
        let findings = json["findings"].as_array().unwrap();
        let errors = json["summary"]["error"].as_u64().unwrap() as usize;
        let warnings = json["summary"]["warning"].as_u64().unwrap() as usize;
        assert_eq!(code_json, i32::from(errors > 0), "{path}");

        let (code_sarif, out) = check(&path, "sarif");
        assert_eq!(code_sarif, code_json, "{path}");
        let log: Value = serde_json::from_slice(&out).unwrap();
        assert_valid(&sarif, &log, &format!("{path} (sarif)"));
        assert_eq!(log["version"], "2.1.0");
        let results = log["runs"][0]["results"].as_array().unwrap();
        assert_eq!(results.len(), findings.len(), "{path}");
        let rules = log["runs"][0]["tool"]["driver"]["rules"]
            .as_array()
            .unwrap();
        for (r, f) in results.iter().zip(findings) {
            assert_eq!(r["ruleId"], f["code"]);
            let i = r["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(rules[i]["id"], f["code"]);
            let level = match f["level"].as_str().unwrap() {
                "info" => "note",
                other => other,
            };
            assert_eq!(r["level"], level);
            let line = f["line"].as_u64().unwrap();
            let region = &r["locations"][0]["physicalLocation"]["region"];
            if line > 0 {
                assert_eq!(region["startLine"], line, "{path}");
            } else {
                assert!(region.is_null());
            }
        }

        let (code_junit, out) = check(&path, "junit");
        assert_eq!(code_junit, code_json, "{path}");
        let xml = String::from_utf8(out).unwrap();
        let (tests, failures, cases, failure_elems) = junit_counts(&xml, &path);
        assert_eq!(cases, findings.len().max(1), "{path}: testcases");
        assert_eq!(tests, cases, "{path}");
        assert_eq!(failures, errors + warnings, "{path}: failures");
        assert_eq!(failure_elems, failures, "{path}");
    }
}

#[test]
fn sarif_names_the_orphaned_result_on_its_line() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/anthropic_orphaned_result.json")
        .display()
        .to_string();
    let (code, out) = check(&path, "sarif");
    assert_eq!(code, 1);
    let log: Value = serde_json::from_slice(&out).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    let orphan = results
        .iter()
        .find(|r| r["ruleId"] == "tool-result-not-next")
        .unwrap();
    assert_eq!(orphan["level"], "error");
    assert_eq!(
        orphan["locations"][0]["physicalLocation"]["region"]["startLine"],
        33
    );
    assert_eq!(orphan["properties"]["invocation_id"], "toolu_orphan");
}

#[test]
fn junit_escapes_what_xml_cannot_hold() {
    let mut out = Vec::new();
    let f = rawpv::finding::Finding::new(
        rawpv::finding::Level::Error,
        "malformed-line",
        "SPEC 2",
        3,
        "a <b> & \"c\" \u{1b}[31m ' \u{7}",
    );
    rawpv::cmd::check::write_junit(
        &mut out,
        "a&b <c>.ndjson",
        &[f],
        &rawpv::session::Sessions::default(),
    )
    .unwrap();
    let xml = String::from_utf8(out).unwrap();
    let (_, failures, cases, _) = junit_counts(&xml, "escape");
    assert_eq!((failures, cases), (1, 1));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let failure = doc
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .unwrap();
    assert!(failure.text().unwrap().contains("a <b> & \"c\""));
}
