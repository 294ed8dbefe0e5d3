//! Every frame belongs to a session (issue 18, SPEC §6): per-session catalogs, invocation ids,
//! messages, turns and tokens, on the fixtures `check_sessions_*.ndjson`,
//! `check_invalid_session_id.ndjson` and `check_session_id_not_uuid_v4.ndjson`, and on the
//! corpus (a transcript and its subagent files are one session).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use rawpv::check::code;
use rawpv::finding::{Level, code as fcode};
use rawpv::import::load_bytes;
use rawpv::session::{CallStatus, Item, Session};

const A: &str = "6f1c2b1e-8a4d-4c55-9e1a-0b7a3c2d4e5f";
const B: &str = "0b7a3c2d-4e5f-4c55-9e1a-6f1c2b1e8a4d";
const ID: &str = "00000000-0000-4000-8000-000000000001";

fn fixture(name: &str) -> Session {
    let path = format!(
        "{}/tests/fixtures/{name}.ndjson",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Session::from_decoded(load_bytes(&bytes).items)
}

/// (line, code, session name) of every finding, in line order.
fn findings(s: &Session) -> Vec<(u64, &'static str, Option<&str>)> {
    let mut v: Vec<_> = s
        .findings
        .iter()
        .map(|f| (f.line, f.code, f.session.map(|k| s.sessions.name(k))))
        .collect();
    v.sort_by_key(|f| f.0);
    v
}

/// The issue's example: A publishes Bash, B publishes Read, then a Bash call in A. No finding:
/// B's publish does not replace A's catalog, and the same `invocation_id` in both sessions is two
/// calls, each paired with its own result.
#[test]
fn two_sessions_each_with_its_own_catalog_give_no_finding() {
    let s = fixture("check_sessions_two");
    assert_eq!(s.findings, []);
    assert_eq!(s.sessions.len(), 2);
    let names: Vec<&str> = s.sessions.iter().map(|(k, _)| s.sessions.name(k)).collect();
    assert_eq!(names, [A, B]);
    let tools = |k: u32| -> Vec<&str> {
        let c = s.catalog_of(k).unwrap();
        c.tools.iter().map(|t| t.name.as_str()).collect()
    };
    assert_eq!((tools(0), tools(1)), (vec!["Bash"], vec!["Read"]));
    let calls: Vec<(u32, &str, &str, &CallStatus, Option<u64>)> = s
        .invocations
        .iter()
        .map(|i| {
            let id = i.invocation_id.as_str();
            (
                i.session,
                id,
                i.tool_name.as_str(),
                &i.status,
                i.result_line,
            )
        })
        .collect();
    let ok = &CallStatus::Succeeded;
    assert_eq!(
        calls,
        [(0, ID, "Bash", ok, Some(10)), (1, ID, "Read", ok, Some(9))]
    );
    assert_eq!(s.invocation_in(1, ID).unwrap().tool_name, "Read");
    // Interleaved deltas continue their own session's message.
    let texts: Vec<(u32, &str)> = (0..s.items.len())
        .filter_map(|i| match &s.items[i] {
            Item::Message(m) => Some((s.sessions.of_item(i), m.text.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        texts,
        [
            (0, "list the files"),
            (1, "show the readme"),
            (0, "Listing done."),
            (1, "Reading done.")
        ]
    );
    let a = s.sessions.get(0);
    let b = s.sessions.get(1);
    assert_eq!(
        (
            a.counts.frames,
            a.counts.invocations,
            a.turns,
            a.tokens.input,
            a.tokens.output
        ),
        (7, 1, 1, 100, 20)
    );
    assert_eq!(
        (
            b.counts.frames,
            b.counts.invocations,
            b.turns,
            b.tokens.input,
            b.tokens.output
        ),
        (7, 1, 1, 300, 40)
    );
    assert_eq!((a.first_line, b.first_line), (1, 2));
}

/// A call that breaks its own session's catalog still gets its finding, named by its session;
/// so does a request left open at the end.
#[test]
fn a_call_outside_its_own_sessions_catalog_is_a_finding() {
    let s = fixture("check_sessions_own_catalog");
    assert_eq!(
        findings(&s),
        [
            (3, code::TOOL_NOT_IN_CATALOG, Some(A)),
            (5, code::TOOL_NOT_IN_CATALOG, Some(B)),
            (5, code::REQUEST_NEVER_ANSWERED, Some(B)),
        ]
    );
    let f = &s.findings[0];
    assert_eq!(
        (f.level, f.message.as_str()),
        (
            Level::Error,
            "request for Read, which is not in the current catalog"
        )
    );
    // The result's output_type was checked against A's catalog, which has no Read: the
    // category rule (file_content) applies, and the result says file_content.
    assert_eq!(s.invocation_in(0, ID).unwrap().catalog_at, 2);
}

/// A `session_id` that is not a string, or empty, is a finding; the frame is still folded, in
/// the default session (here the first one named).
#[test]
fn an_invalid_session_id_is_a_finding_and_the_frame_is_kept() {
    let s = fixture("check_invalid_session_id");
    assert_eq!(
        findings(&s),
        [
            (2, code::INVALID_SESSION_ID, Some(A)),
            (3, code::INVALID_SESSION_ID, Some(A)),
        ]
    );
    assert_eq!(s.sessions.len(), 1);
    let inv = s.invocation(ID).unwrap();
    assert_eq!((inv.session, &inv.status), (0, &CallStatus::Succeeded));
    assert!(s.findings[0].message.contains("is a number, not a string"));
    assert!(s.findings[1].message.contains("is empty"));
}

/// Once per session, at its first frame (the fixture's second frame names it too).
#[test]
fn a_session_id_that_is_not_a_uuid_v4_is_a_warning() {
    let s = fixture("check_session_id_not_uuid_v4");
    assert_eq!(
        findings(&s),
        [(1, code::SESSION_ID_NOT_UUID_V4, Some("session-1"))]
    );
    assert_eq!(s.findings[0].level, Level::Warning);
}

/// A single-session input is one session whether or not its frames name it: every Claude Code
/// transcript of the corpus (its derived catalog and summaries name no session) is one
/// session, its subagent files included, and no finding is about an invalid session id.
#[test]
fn each_corpus_transcript_is_one_session_subagents_included() {
    let Some(files) = crate::support::corpus::files("claude-code") else {
        return;
    };
    let mut seen = 0;
    for path in files {
        let Ok((s, _)) = rawpv::source::file::fold_path(&path) else {
            continue;
        };
        let name = path.display();
        assert_eq!(s.sessions.len(), 1, "{name}");
        assert!(s.sessions.get(0).id.is_some(), "{name}");
        assert!(
            s.invocations.iter().all(|i| i.session == 0),
            "{name}: a call outside the session"
        );
        assert!(
            !s.findings.iter().any(|f| f.code == code::INVALID_SESSION_ID
                || f.code == code::SESSION_ID_NOT_UUID_V4
                || f.code == fcode::MALFORMED_LINE),
            "{name}"
        );
        seen += 1;
    }
    assert!(seen >= 9, "{seen} transcripts");
}

/// Runs the binary: (exit code, stdout).
fn rawpv(args: &[&str]) -> (i32, String) {
    let out = assert_cmd::Command::cargo_bin("rawpv")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    (code, String::from_utf8(out.stdout).unwrap())
}

fn path(name: &str) -> String {
    format!(
        "{}/tests/fixtures/{name}.ndjson",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// `check` names the session of each finding when the input holds more than one, in every
/// format; `stats` prints one row per session and the totals.
#[test]
fn check_and_stats_report_per_session() {
    let p = path("check_sessions_own_catalog");
    let (code, text) = rawpv(&["check", &p]);
    assert_eq!(code, 1);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            format!(
                "{p}:3: error[tool-not-in-catalog] request for Read, which is not in the current catalog (SPEC 3.7) [session {A}]"
            ),
            format!(
                "{p}:5: error[tool-not-in-catalog] request for Bash, which is not in the current catalog (SPEC 3.7) [session {B}]"
            ),
            format!(
                "{p}:5: warning[request-never-answered] Bash request \"00000000-0000-4000-8000-000000000002\" never got a result (SPEC 3.7) [session {B}]"
            ),
            format!("{p}: 2 errors, 1 warning, 0 infos"),
        ]
    );
    let (_, json) = rawpv(&["check", "--format", "json", &p]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let sessions: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(sessions, [A, B, B]);
    let (_, sarif) = rawpv(&["check", "--format", "sarif", &p]);
    let v: serde_json::Value = serde_json::from_str(&sarif).unwrap();
    assert_eq!(v["runs"][0]["results"][1]["properties"]["session_id"], B);
    let (_, junit) = rawpv(&["check", "--format", "junit", &p]);
    assert!(
        junit.contains(&format!("(SPEC 3.7) [session {A}]</failure>")),
        "{junit}"
    );

    let (code, stats) = rawpv(&["stats", &path("check_sessions_two")]);
    assert_eq!(code, 0);
    let table: Vec<&str> = stats
        .lines()
        .skip_while(|l| !l.starts_with("sessions"))
        .collect();
    assert_eq!(
        table,
        [
            "sessions     2",
            "  session                                frames   calls failed findings  turns  tokens in        out",
            &format!("  {A}        7       1      0        0      1        100         20"),
            &format!("  {B}        7       1      0        0      1        300         40"),
            "  total                                      14       2      0        0      2        400         60",
        ]
    );
}

/// A single-session input's reports name no session and `stats` has no session table.
#[test]
fn a_single_session_input_reports_as_before() {
    let p = path("check_session_id_not_uuid_v4");
    let (_, text) = rawpv(&["check", &p]);
    assert!(!text.contains(" [session "), "{text}");
    let (_, json) = rawpv(&["check", "--format", "json", &p]);
    assert!(!json.contains("\"session_id\":"), "{json}");
    let (_, stats) = rawpv(&["stats", &p]);
    assert!(!stats.contains("sessions "), "{stats}");
    let (_, print) = rawpv(&["print", &p]);
    assert_eq!(
        print,
        "tool.catalog.publish 1 tool published\ntool.catalog.publish 1 tool published\n"
    );
}

/// `print` starts each row with its session's id; `convert` keeps every frame's `session_id`
/// (the one given at the top level or in `metadata`), so checking the converted stream gives
/// the same findings in the same sessions.
#[test]
fn print_names_sessions_and_convert_keeps_them() {
    let p = path("check_sessions_two");
    // `--all`: the quiet (usage) rows carry their session's id too.
    let (_, print) = rawpv(&["print", "--all", &p]);
    let tags: Vec<&str> = print
        .lines()
        .map(|l| l.split_once("] ").unwrap().0.trim_start_matches('['))
        .collect();
    let (a, b) = (A, B);
    assert_eq!(tags, [a, b, a, b, a, b, a, b, a, b]);
    assert!(print.contains(&format!("[{B}] Read       ok        README.md  [{ID}]")));

    for name in ["check_sessions_two", "check_sessions_own_catalog"] {
        let p = path(name);
        let (code, converted) = rawpv(&["convert", &p]);
        assert_eq!(code, 0);
        let input = std::fs::read_to_string(&p).unwrap();
        for (got, given) in converted.lines().zip(input.lines()) {
            let got: serde_json::Value = serde_json::from_str(got).unwrap();
            let given: serde_json::Value = serde_json::from_str(given).unwrap();
            let sid = given
                .get("session_id")
                .or_else(|| given["metadata"].get("session_id"))
                .unwrap();
            assert_eq!(got.get("session_id"), Some(sid), "{name}: {got}");
        }
        let back = Session::from_decoded(load_bytes(converted.as_bytes()).items);
        let before = fixture(name);
        assert_eq!(findings(&back), findings(&before), "{name}");
    }
}

/// (code, message) of every finding of session `sid`, sorted (lines differ between a master's
/// stream and a session alone).
fn findings_of_session(s: &Session, sid: u32) -> Vec<(&'static str, String)> {
    let mut v: Vec<_> = s
        .findings
        .iter()
        .filter(|f| f.session == Some(sid))
        .map(|f| (f.code, f.message.clone()))
        .collect();
    v.sort();
    v
}

/// A generated master stream of 50 interleaved sessions (`gen --sessions 50`) gives each
/// session exactly the findings it gets alone (read from the stream by its `session_id`): no
/// finding comes from mixing them. `stats` has a row per session with its frames.
#[test]
fn fifty_interleaved_sessions_check_as_each_alone_and_stats_lists_each() {
    let mut master = Vec::new();
    crate::generator::generate_sessions(&mut master, 10_000, 5, 50).unwrap();
    let s = Session::from_decoded(load_bytes(&master).items);
    assert_eq!(s.sessions.len(), 50);
    assert_eq!(s.counts.frames, 10_000);
    // The session's own frames, in order.
    let mut parts: Vec<(String, Vec<u8>)> = Vec::new();
    for line in master.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let v: serde_json::Value = serde_json::from_slice(line).unwrap();
        let sid = v["session_id"].as_str().unwrap().to_owned();
        let k = parts
            .iter()
            .position(|(id, _)| *id == sid)
            .unwrap_or_else(|| {
                parts.push((sid, Vec::new()));
                parts.len() - 1
            });
        parts[k].1.extend_from_slice(line);
        parts[k].1.push(b'\n');
    }
    assert_eq!(parts.len(), 50);
    let mut kinds = std::collections::BTreeSet::new();
    for (id, bytes) in &parts {
        let sid = s.sessions.find(id).unwrap();
        let alone = Session::from_decoded(load_bytes(bytes).items);
        assert_eq!(alone.sessions.len(), 1);
        assert_eq!(
            findings_of_session(&s, sid),
            findings_of_session(&alone, 0),
            "session {id}"
        );
        let e = s.sessions.get(sid);
        let a = alone.sessions.get(0);
        assert_eq!(
            (e.counts, e.tokens, e.turns, e.publishes.len()),
            (a.counts, a.tokens, a.turns, a.publishes.len()),
            "session {id}"
        );
        kinds.extend(alone.findings.iter().map(|f| f.code));
    }
    // What a generated session deserves: its degraded tools and the calls cut by its end.
    assert!(
        kinds.is_subset(&[code::TOOL_DEGRADED, code::REQUEST_NEVER_ANSWERED].into()),
        "{kinds:?}"
    );
    assert!(s.findings.iter().all(|f| f.session.is_some()));

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("master.ndjson");
    std::fs::write(&file, &master).unwrap();
    let (code, stats) = rawpv(&["stats", file.to_str().unwrap()]);
    assert_eq!(code, 0);
    let rows: Vec<&str> = stats
        .lines()
        .skip_while(|l| !l.starts_with("sessions"))
        .collect();
    assert_eq!(rows[0], "sessions     50");
    assert_eq!(rows.len(), 1 + 1 + 50 + 1, "{stats}");
    for (row, (id, bytes)) in rows[2..52].iter().zip(&parts) {
        let frames = bytes
            .split(|&b| b == b'\n')
            .count()
            .saturating_sub(1)
            .to_string();
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!((cols[0], cols[1]), (id.as_str(), frames.as_str()), "{row}");
    }
    assert!(rows[52].trim_start().starts_with("total"));
    assert_eq!(rows[52].split_whitespace().nth(1), Some("10000"));
}

/// Compaction of an endless master stream keeps each row's session and each session's calls
/// reachable by their ids: the oldest finished rows go, the row → session map with them.
#[test]
fn compaction_keeps_every_rows_session() {
    let mut master = Vec::new();
    crate::generator::generate_sessions(&mut master, 3_000, 9, 5).unwrap();
    let mut s = Session::new();
    s.max_items = Some(400);
    for d in load_bytes(&master).items {
        s.apply(d);
        s.compact_if_needed();
    }
    s.finish();
    assert!(s.dropped_items > 0);
    assert_eq!(s.sessions.len(), 5);
    for (k, inv) in s.invocations.iter().enumerate() {
        assert_eq!(s.items[inv.item], Item::Invocation(k));
        assert_eq!(
            s.sessions.of_item(inv.item),
            inv.session,
            "{}",
            inv.invocation_id
        );
        let found = s.invocation_in(inv.session, &inv.invocation_id).unwrap();
        assert_eq!((found.item, found.session), (inv.item, inv.session));
    }
    for p in &s.publishes {
        assert_eq!(s.sessions.of_item(p.item), p.session);
    }
    // Every row's session is the one its frame named.
    for (i, it) in s.items.iter().enumerate() {
        if let Item::Event(f) = it {
            let named = f.envelope.session_id.as_deref().unwrap();
            assert_eq!(s.sessions.name(s.sessions.of_item(i)), named);
        }
    }
}

/// Folds NDJSON text.
fn fold(text: &str) -> Session {
    Session::from_decoded(load_bytes(text.as_bytes()).items)
}

fn frame(ty: &str, sid: Option<&str>, payload: &str) -> String {
    let sid = sid.map_or_else(String::new, |s| format!(r#""session_id": {s}, "#));
    format!(r#"{{"type": "{ty}", {sid}"payload": {payload}}}"#)
}

const REQ: &str = r#"{"invocation_id": "00000000-0000-4000-8000-000000000001", "tool_name": "Bash", "input": {"command": "ls"}}"#;
const RES: &str = r#"{"invocation_id": "00000000-0000-4000-8000-000000000001", "tool_name": "Bash", "status": "success", "output": "ok", "output_type": "text"}"#;
/// A catalog with Bash (a session's calls come after one, RAWP-DPS 5.4.1: `catalog-missing`).
const CAT: &str =
    r#"{"tools": [{"name": "Bash", "description": "Bash tool", "category": "shell"}]}"#;

/// Attack 6 #8: a UUID in upper case names the same session (RFC 4122), so its result pairs.
#[test]
fn a_session_uuid_in_upper_case_is_the_same_session() {
    let upper = format!("\"{}\"", A.to_ascii_uppercase());
    let text = [
        frame("tool.catalog.publish", Some(&format!("\"{A}\"")), CAT),
        frame("tool.invoke.request", Some(&format!("\"{A}\"")), REQ),
        frame("tool.invoke.result", Some(&upper), RES),
    ]
    .join("\n");
    let s = fold(&text);
    assert_eq!(s.findings, []);
    assert_eq!((s.sessions.len(), s.sessions.name(0)), (1, A));
}

/// Attack 6 #21: a result naming no session goes to the session whose open call it answers;
/// a result naming another session than its call's is a finding that says where the call is.
#[test]
fn an_unnamed_result_joins_the_session_of_its_open_call() {
    let (a, b) = (format!("\"{A}\""), format!("\"{B}\""));
    let text = [
        frame("session.usage", Some(&a), "{}"),
        frame("tool.catalog.publish", Some(&b), CAT),
        frame("tool.invoke.request", Some(&b), REQ),
        frame("tool.invoke.result", None, RES),
    ]
    .join("\n");
    let s = fold(&text);
    assert_eq!(s.findings, []);
    assert_eq!(
        s.invocation_in(1, ID).unwrap().status,
        CallStatus::Succeeded
    );
    assert_eq!(
        s.sessions.get(1).counts.frames,
        3,
        "catalog, request, result"
    );

    let text = [
        frame("session.usage", Some(&a), "{}"),
        frame("tool.invoke.request", Some(&b), REQ),
        frame("tool.invoke.result", Some(&a), RES),
    ]
    .join("\n");
    let s = fold(&text);
    let f = s
        .findings
        .iter()
        .find(|f| f.code == fcode::RESULT_WITHOUT_REQUEST)
        .unwrap();
    assert_eq!(
        f.message,
        format!(
            "result for invocation_id \"{ID}\", which was never requested in this session; session {B} has a call with this id"
        )
    );
}

/// Attack 6 #16 and #20: a huge session id is cut in text reports (not in JSON); messages quote
/// untrusted text without Rust escapes (control characters become U+FFFD); the stats table
/// has a row for the findings of no session, so its column adds up.
#[test]
fn huge_and_hostile_session_ids_in_reports() {
    let huge = "S".repeat(200_000);
    let hostile = "\\u001b]0;PWNED\\u0007x";
    let text = [
        frame("tool.invoke.request", Some(&format!("\"{huge}\"")), REQ),
        frame("tool.invoke.request", Some(&format!("\"{hostile}\"")), REQ),
        "{not json".to_owned(),
    ]
    .join("\n");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ids.ndjson");
    std::fs::write(&file, &text).unwrap();
    let p = file.to_str().unwrap();
    let cut = format!("{}…", "S".repeat(35));
    let (_, print) = rawpv(&["print", p]);
    assert!(
        print.starts_with(&format!("[{cut}] Bash")),
        "{}",
        &print[..100]
    );
    assert!(print.len() < 1_000, "{} bytes", print.len());
    let (_, check) = rawpv(&["check", p]);
    assert!(check.len() < 2_000, "{} bytes", check.len());
    assert!(check.contains(&format!("[session {cut}]")));
    assert!(
        check.contains("session_id \"\u{fffd}]0;PWNED\u{fffd}x\" is not a UUID v4"),
        "{check}"
    );
    let (_, json) = rawpv(&["check", "--format", "json", p]);
    assert!(!json.contains("\\\\u{"), "{json}");
    assert!(json.contains(&huge), "JSON keeps the whole id");
    let (_, stats) = rawpv(&["stats", p]);
    let rows: Vec<&str> = stats
        .lines()
        .skip_while(|l| !l.starts_with("sessions"))
        .collect();
    assert_eq!(rows.len(), 6, "{stats}");
    let findings = |row: &str| row.split_whitespace().rev().nth(3).unwrap().to_owned();
    assert!(rows[4].trim_start().starts_with("(no session)"), "{stats}");
    assert_eq!(findings(rows[4]), "1");
    // Each session's: not a UUID v4, never answered, no catalog (catalog-missing); the id
    // too long of the first.
    assert_eq!(findings(rows[5]), "7");
}
