//! Issue 19: every rule of RULES.md (A01–A51 of RAWP-DPS §5, B01–B21 of the Anthropic tool-use
//! guide) against its conforming and violating fixtures, `tests/fixtures/rules/`.
//!
//! The table `tests/fixtures/rules/TABLE.md` says per file what `rawpv check --format json` must
//! give: `none` (no error, no warning), `none + info CODE` (and that info), or `SEVERITY CODE`
//! (exactly one finding, of that severity and code, with its SPEC section). Rows that do not hold
//! yet are listed in [`KNOWN`] with what rawpv gives instead; the test fails when a row outside
//! the list breaks and when a listed row starts to hold (so the list stays true).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/rules");

/// Rows of TABLE.md that do not hold today: (file, why: the seed audit's verdict and what rawpv
/// gives). Fix the rule, then remove its row here.
const KNOWN: &[(&str, &str)] = &[];

/// What one row expects (the `expected` column of TABLE.md).
#[derive(Debug)]
enum Expect {
    /// No error or warning; with `Some(code)`, also an info `code`.
    Clean(Option<String>),
    /// Exactly one finding of this severity and code.
    One(String, String),
}

fn table() -> Vec<(String, String, Expect)> {
    let text = std::fs::read_to_string(format!("{DIR}/TABLE.md")).unwrap();
    let mut rows = Vec::new();
    for line in text.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (rule, file, expected) = (cells[1], cells[2], cells[3]);
        if rule == "rule" || rule.starts_with("---") {
            continue;
        }
        let words: Vec<&str> = expected.split_whitespace().collect();
        let expect = match words.as_slice() {
            ["none"] => Expect::Clean(None),
            ["none", "+", "info", code] => Expect::Clean(Some((*code).to_owned())),
            [sev, code] => Expect::One((*sev).to_owned(), (*code).to_owned()),
            _ => panic!("TABLE.md: cannot read expected {expected:?} of {file}"),
        };
        rows.push((rule.to_owned(), file.to_owned(), expect));
    }
    rows
}

/// `None` when the row holds, else what rawpv gave.
fn judge(file: &str, expect: &Expect) -> Option<String> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rawpv"))
        .args(["check", "--format", "json", file])
        .current_dir(DIR)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{file}: no JSON report ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let findings = report["findings"].as_array().unwrap();
    let got = findings
        .iter()
        .map(|f| {
            format!(
                "{}[{}]",
                f["level"].as_str().unwrap(),
                f["code"].as_str().unwrap()
            )
        })
        .collect::<Vec<_>>();
    let loud = findings
        .iter()
        .any(|f| matches!(f["level"].as_str(), Some("error" | "warning")));
    let holds = match expect {
        Expect::Clean(None) => !loud,
        Expect::Clean(Some(code)) => {
            !loud
                && findings
                    .iter()
                    .any(|f| f["level"] == "info" && f["code"] == code.as_str())
        }
        Expect::One(sev, code) => {
            findings.len() == 1
                && findings[0]["level"] == sev.as_str()
                && findings[0]["code"] == code.as_str()
                && findings[0]["spec"].as_str().is_some_and(|s| !s.is_empty())
        }
    };
    (!holds).then(|| {
        format!(
            "got {}",
            if got.is_empty() {
                "none".to_owned()
            } else {
                got.join(", ")
            }
        )
    })
}

#[test]
fn every_rule_fixture_gives_its_expected_finding() {
    let rows = table();
    assert_eq!(rows.len(), 253, "TABLE.md rows");
    let files: std::collections::BTreeSet<String> = std::fs::read_dir(DIR)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| {
            let ext = std::path::Path::new(n).extension().and_then(|x| x.to_str());
            matches!(ext, Some("ndjson" | "json" | "jsonl"))
        })
        .filter(|n| n != "meta.json")
        .collect();
    let listed: std::collections::BTreeSet<String> = rows.iter().map(|r| r.1.clone()).collect();
    assert_eq!(files, listed, "every fixture has one row");
    let known: BTreeMap<&str, &str> = KNOWN.iter().copied().collect();
    let (mut broken, mut fixed) = (Vec::new(), Vec::new());
    let mut holding: BTreeMap<&str, bool> = BTreeMap::new();
    for (rule, file, expect) in &rows {
        let wrong = judge(file, expect);
        *holding.entry(rule.as_str()).or_insert(true) &= wrong.is_none();
        match (wrong, known.contains_key(file.as_str())) {
            (Some(got), false) => broken.push(format!("{rule} {file}: expected {expect:?}, {got}")),
            (None, true) => fixed.push(format!("{rule} {file} holds now: remove it from KNOWN")),
            _ => {}
        }
    }
    assert!(
        known.keys().all(|k| listed.contains(*k)),
        "KNOWN names a file not in TABLE.md"
    );
    let held = holding
        .iter()
        .filter(|(r, ok)| **ok && **r != "own")
        .count();
    eprintln!(
        "{held} of {} rules hold on every fixture",
        holding.len() - 1
    );
    assert!(
        broken.is_empty() && fixed.is_empty(),
        "{broken:#?}\n{fixed:#?}"
    );
}
