//! Regression tests of the Codex CLI and Gemini CLI importers for the defects attack 6 found
//! (/work/notes/attack6/README.md, numbered as there): appended runs and sessions in one input,
//! repeated call ids, interrupted turns, the derived catalog's size, Gemini exit codes and
//! detection, bad field types. Inputs are written here (a few lines each) or built from the real
//! corpus files; every assert is on the session or frames the importers give.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rawpv::import::{self, Decoded, Format};
use rawpv::protocol::{Body, Frame, FrameType};
use rawpv::session::CallStatus::{self, Cancelled, Failed, Requested, Succeeded};
use rawpv::session::Session;

use crate::support::corpus;

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn fold(p: &Path) -> Session {
    rawpv::source::file::fold_path(p).unwrap().0
}

fn frames(p: &Path) -> (Format, Vec<Frame>, Vec<rawpv::finding::Finding>) {
    let loaded = import::load_path(p).unwrap();
    let mut fr = Vec::new();
    let mut fi = Vec::new();
    for d in loaded.items {
        match d {
            Decoded::Frame(f) => fr.push(*f),
            Decoded::Finding(f) => fi.push(f),
            Decoded::Malformed(_) => {}
        }
    }
    (loaded.format, fr, fi)
}

fn statuses(s: &Session) -> Vec<(String, String, CallStatus)> {
    s.invocations
        .iter()
        .map(|i| {
            (
                i.invocation_id.clone(),
                i.tool_name.clone(),
                i.status.clone(),
            )
        })
        .collect()
}

fn st(id: &str, name: &str, s: CallStatus) -> (String, String, CallStatus) {
    (id.to_owned(), name.to_owned(), s)
}

/// The corpus files `names` (under `sub`) joined into one file, or `None` without the corpus.
fn joined(dir: &tempfile::TempDir, sub: &str, names: &[&str]) -> Option<PathBuf> {
    let d = corpus::dir(sub)?;
    let mut text = String::new();
    for n in names {
        text.push_str(&std::fs::read_to_string(d.join(n)).ok()?);
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    Some(write(dir, "joined", &text))
}

/// Every session's first request comes after a derived catalog of that session, listing only
/// tools that session calls (#9).
fn assert_own_catalogs(fr: &[Frame]) {
    let mut sids: Vec<Option<String>> = Vec::new();
    for f in fr {
        if !sids.contains(&f.envelope.session_id) {
            sids.push(f.envelope.session_id.clone());
        }
    }
    for sid in sids {
        let mine: Vec<&Frame> = fr.iter().filter(|f| f.envelope.session_id == sid).collect();
        let called: Vec<String> = mine
            .iter()
            .filter_map(|f| match &f.body {
                Body::Request(r) => r.tool_name.clone(),
                _ => None,
            })
            .collect();
        let first_req = mine
            .iter()
            .position(|f| f.frame_type == FrameType::ToolInvokeRequest);
        let first_cat = mine
            .iter()
            .position(|f| f.frame_type == FrameType::ToolCatalogPublish);
        if let Some(r) = first_req {
            assert!(first_cat.is_some_and(|c| c < r), "session {sid:?}");
        }
        for f in &mine {
            if let Body::Catalog(c) = &f.body {
                for t in &c.tools {
                    assert!(called.contains(&t.name), "{} in {sid:?}", t.name);
                }
            }
        }
    }
}

/// #2, #9: the two corpus `codex exec --json` runs appended in one file: both calls are shown,
/// each in its own session, each session with its own derived catalog.
#[test]
fn appended_exec_runs_keep_every_call() {
    let dir = tempfile::tempdir().unwrap();
    let Some(p) = joined(
        &dir,
        "codex",
        &[
            "codex-exec-json-v0.46.0-command-execution.jsonl",
            "codex-exec-json-v0.46.0-file-change.jsonl",
        ],
    ) else {
        return;
    };
    let s = fold(&p);
    assert_eq!(
        statuses(&s),
        vec![
            st("item_1", "shell", Succeeded),
            st("item_1", "apply_patch", Succeeded)
        ]
    );
    assert_eq!(
        s.invocations.iter().map(|i| i.session).collect::<Vec<_>>(),
        vec![0, 1]
    );
    assert!(s.findings.is_empty(), "{:?}", s.findings);
    let (_, fr, _) = frames(&p);
    assert_own_catalogs(&fr);
}

/// #2, #9: two rollouts appended (0.77 then 0.40): every call of both is paired, and the 0.40
/// session's first call has its own catalog.
#[test]
fn appended_rollouts_have_their_own_catalogs() {
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "codex-v0.77.0-exec-shell-json-output.jsonl",
        "codex-v0.40.0-vscode-shell-applypatch-updateplan-123calls.jsonl",
    ];
    let Some(p) = joined(&dir, "codex", &names) else {
        return;
    };
    let alone: usize = names
        .iter()
        .map(|n| {
            fold(&corpus::dir("codex").unwrap().join(n))
                .invocations
                .len()
        })
        .sum();
    let s = fold(&p);
    assert_eq!(s.invocations.len(), alone);
    assert!(s.invocations.iter().all(|i| i.status != Requested));
    let (_, fr, _) = frames(&p);
    assert_own_catalogs(&fr);
}

/// #2: a Gemini stream-json run appended to itself (same session id, same `tool_id`s): four
/// calls, the second run's with run-scoped ids, and nothing for check to blame.
#[test]
fn gemini_stream_run_twice_keeps_four_calls() {
    let dir = tempfile::tempdir().unwrap();
    let name = "gemini-stream-json-2025-12-26-shell-readfile.jsonl";
    let Some(p) = joined(&dir, "gemini", &[name, name]) else {
        return;
    };
    let s = fold(&p);
    let ids: Vec<String> = s
        .invocations
        .iter()
        .map(|i| i.invocation_id.clone())
        .collect();
    assert_eq!(ids.len(), 4);
    assert_eq!(ids[2], format!("{}@2", ids[0]));
    assert_eq!(ids[3], format!("{}@2", ids[1]));
    assert!(s.invocations.iter().all(|i| i.status == Succeeded));
    assert!(s.findings.is_empty(), "{:?}", s.findings);
}

/// #2, #5: exec run whose turn fails with a command in progress; the next turn reuses the item
/// id. The first call is cancelled at `turn.failed` (not shown ok with the later call's
/// output), the later one is its own call.
#[test]
fn failed_exec_turn_cancels_and_reused_item_id_is_a_new_call() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        &dir,
        "exec.jsonl",
        concat!(
            r#"{"type":"thread.started","thread_id":"019a2d7b-7fb8-78e1-8cfa-5bdbe274a3aa"}"#,
            "\n",
            r#"{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"sleep 100","aggregated_output":"","status":"in_progress"}}"#,
            "\n",
            r#"{"type":"turn.failed","error":{"message":"usage limit reached"}}"#,
            "\n",
            r#"{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"ls","aggregated_output":"","status":"in_progress"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"ls","aggregated_output":"a","exit_code":0,"status":"completed"}}"#,
            "\n",
        ),
    );
    let s = fold(&p);
    assert_eq!(
        statuses(&s),
        vec![
            st("item_1", "shell", Cancelled),
            st("item_1#2", "shell", Succeeded)
        ]
    );
    let codes: Vec<(&str, u64)> = s.findings.iter().map(|f| (f.code, f.line)).collect();
    assert_eq!(codes, vec![("duplicate-invocation-id", 4)]);
}

/// #3: a repeated call id within one rollout: the second call (`false`, exit 1) is shown, as
/// `d1#2`, and counts as failed.
#[test]
fn repeated_codex_call_id_keeps_the_second_call_and_its_failure() {
    let dir = tempfile::tempdir().unwrap();
    let rec = |t: &str, payload: &str| {
        format!(
            r#"{{"timestamp":"2026-04-02T10:00:0{t}.000Z","type":"response_item","payload":{payload}}}"#
        )
    };
    let text = [
        r#"{"timestamp":"2026-04-02T10:00:00.000Z","type":"session_meta","payload":{"id":"019d4a1e-7c2b-7e01-9a55-3f0c2d9e8b11","cwd":"/p"}}"#.to_owned(),
        rec("1", r#"{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls\"]}","call_id":"d1"}"#),
        rec("2", r#"{"type":"function_call_output","call_id":"d1","output":"{\"output\":\"a\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.1}}"}"#),
        rec("3", r#"{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"false\"]}","call_id":"d1"}"#),
        rec("4", r#"{"type":"function_call_output","call_id":"d1","output":"{\"output\":\"b\",\"metadata\":{\"exit_code\":1,\"duration_seconds\":0.1}}"}"#),
    ]
    .join("\n");
    let p = write(&dir, "rollout.jsonl", &text);
    let s = fold(&p);
    assert_eq!(
        statuses(&s),
        vec![st("d1", "shell", Succeeded), st("d1#2", "shell", Failed)]
    );
    assert_eq!(s.counts.failed, 1);
    // The file-backed session reads the second call's output back from its line.
    let inv = &s.invocations[1];
    let out = s
        .with_input_output(inv)
        .result
        .as_ref()
        .unwrap()
        .output
        .clone();
    assert_eq!(
        out,
        Some(serde_json::json!({"stdout": "b", "exit_code": 1}))
    );
    let codes: Vec<(&str, u64)> = s.findings.iter().map(|f| (f.code, f.line)).collect();
    assert_eq!(codes, vec![("duplicate-invocation-id", 4)]);
}

/// #3: the same in a Gemini saved session (two `toolCalls` entries with one id).
#[test]
fn repeated_gemini_call_id_keeps_the_second_call() {
    let dir = tempfile::tempdir().unwrap();
    let call = |cmd: &str, code: u8| {
        format!(
            r#"{{"id":"x-1","name":"run_shell_command","args":{{"command":"{cmd}"}},"result":[{{"functionResponse":{{"id":"x-1","name":"run_shell_command","response":{{"output":"Exit Code: {code}"}}}}}}],"status":"success","timestamp":"2025-10-27T19:56:04.625Z"}}"#
        )
    };
    let text = format!(
        r#"{{"sessionId":"981c87cb-90ef-4c7f-948d-23173ff43e4e","projectHash":"ab","startTime":"2025-10-27T19:56:01.701Z","messages":[{{"id":"m1","timestamp":"2025-10-27T19:56:01.000Z","type":"user","content":"p"}},{{"id":"m2","timestamp":"2025-10-27T19:56:02.000Z","type":"gemini","content":"a","toolCalls":[{},{}]}}]}}"#,
        call("ls", 0),
        call("false", 1)
    );
    let p = write(&dir, "session.json", &text);
    let s = fold(&p);
    assert_eq!(
        statuses(&s),
        vec![
            st("x-1", "run_shell_command", Succeeded),
            st("x-1#2", "run_shell_command", Failed)
        ]
    );
}

/// #5: `turn_aborted` with no later prompt cancels the open call there, its duration ending at
/// the abort; no "cut off, or still running" warning.
#[test]
fn codex_turn_aborted_cancels_at_the_abort() {
    let dir = tempfile::tempdir().unwrap();
    let text = [
        r#"{"timestamp":"2026-04-02T10:00:00.000Z","type":"session_meta","payload":{"id":"019d4a1e-7c2b-7e01-9a55-3f0c2d9e8b11","cwd":"/p"}}"#,
        r#"{"timestamp":"2026-04-02T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}"#,
        r#"{"timestamp":"2026-04-02T10:00:02.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"sleep\",\"100\"]}","call_id":"t1"}}"#,
        r#"{"timestamp":"2026-04-02T10:00:06.000Z","type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}"#,
    ]
    .join("\n");
    let p = write(&dir, "rollout.jsonl", &text);
    let s = fold(&p);
    assert_eq!(statuses(&s), vec![st("t1", "shell", Cancelled)]);
    let r = s.invocations[0].result.as_ref().unwrap();
    assert_eq!(r.duration_ms, Some(4000.0));
    assert!(s.findings.is_empty(), "{:?}", s.findings);
}

/// #1: 1000 tool names in one rollout: the derived catalog stops at `MAX_DERIVED_TOOLS` (one
/// warning), so the publishes stay bounded instead of growing with the square of the names.
#[test]
fn derived_catalog_is_capped() {
    use rawpv::import::codex_emit::MAX_DERIVED_TOOLS;
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from(
        r#"{"timestamp":"2026-04-02T10:00:00.000Z","type":"session_meta","payload":{"id":"019d4a1e-7c2b-7e01-9a55-3f0c2d9e8b11"}}"#,
    );
    for i in 0..1000 {
        let _ = write!(
            text,
            "\n{{\"type\":\"response_item\",\"payload\":{{\"type\":\"function_call\",\"name\":\"tool{i}\",\"arguments\":\"{{}}\",\"call_id\":\"c{i}\"}}}}\n{{\"type\":\"response_item\",\"payload\":{{\"type\":\"function_call_output\",\"call_id\":\"c{i}\",\"output\":\"ok\"}}}}"
        );
    }
    let p = write(&dir, "rollout.jsonl", &text);
    let (_, fr, fi) = frames(&p);
    let listed: usize = fr
        .iter()
        .filter_map(|f| match &f.body {
            Body::Catalog(c) => Some(c.tools.len()),
            _ => None,
        })
        .sum();
    assert_eq!(listed, MAX_DERIVED_TOOLS * (MAX_DERIVED_TOOLS + 1) / 2);
    let capped: Vec<u64> = fi
        .iter()
        .filter(|f| f.message.contains("derived catalog lists the first"))
        .map(|f| f.line)
        .collect();
    assert_eq!(capped, vec![2 * MAX_DERIVED_TOOLS as u64 + 2]);
    let s = fold(&p);
    assert_eq!(s.invocations.len(), 1000);
    assert!(s.invocations.iter().all(|i| i.status == Succeeded));
}

/// #4: a Gemini shell's exit code is the trailer's (the last `Exit Code:` line), not a line of
/// the command's output; killed by a signal (`Exit Code: (none)`, `Signal: 9`) is an error.
#[test]
fn gemini_exit_code_is_the_trailers() {
    use rawpv::import::gemini::{call_result, shell_exit};
    use rawpv::protocol::ResultStatus;
    let t = |stdout: &str, code: &str, sig: &str| {
        format!(
            "Command: c\nDirectory: (root)\nStdout: {stdout}\nStderr: (empty)\nError: (none)\nExit Code: {code}\nSignal: {sig}\nBackground PIDs: (none)"
        )
    };
    let ok = t("line1\nExit Code: 1\nline3", "0", "(none)");
    assert_eq!(shell_exit(&ok), (Some(0), None));
    let fail = t("Exit Code: 0", "2", "(none)");
    assert_eq!(shell_exit(&fail), (Some(2), None));
    let killed = t("(empty)", "(none)", "9");
    assert_eq!(shell_exit(&killed), (None, Some(9)));
    assert_eq!(
        shell_exit("no trailer; Exit Code: 3 mid-line"),
        (None, None)
    );
    let args = serde_json::json!({"command": "c"});
    let status = |text: &str| {
        call_result(
            "run_shell_command",
            &args,
            Some("success"),
            Some(text),
            None,
            None,
        )
        .0
    };
    assert_eq!(status(&ok), ResultStatus::Success);
    assert_eq!(status(&fail), ResultStatus::Error);
    let (st, out, extra) = call_result(
        "run_shell_command",
        &args,
        Some("success"),
        Some(&killed),
        None,
        None,
    );
    assert_eq!(st, ResultStatus::Error);
    assert_eq!(out, serde_json::json!({"stdout": killed, "signal": 9}));
    assert_eq!(
        extra.get("reported_status"),
        Some(&serde_json::json!("success"))
    );
}

/// #4: the real trailer writes `Signal: 0` for no signal (corpus 2025-10-27): not an error.
#[test]
fn gemini_signal_zero_is_no_signal() {
    use rawpv::import::gemini::shell_exit;
    let text = "Command: ls\nOutput: (empty)\nError: (none)\nExit Code: 0\nSignal: 0\nBackground PIDs: (none)";
    assert_eq!(shell_exit(text), (Some(0), None));
}

/// #7: a Gemini saved session without `sessionId` is still Gemini (by `projectHash`, or by its
/// messages' Gemini `type`s), its calls all kept; `messages` as an object is a finding, not 0
/// frames in silence.
#[test]
fn gemini_detected_without_session_id() {
    let msgs = r#"[{"id":"m1","timestamp":"2025-10-27T19:56:01.000Z","type":"user","content":"p"},{"id":"m2","timestamp":"2025-10-27T19:56:02.000Z","type":"gemini","content":"a","toolCalls":[{"id":"a-1","name":"read_file","args":{"file_path":"/x"},"result":[{"functionResponse":{"id":"a-1","name":"read_file","response":{"output":"hi"}}}],"status":"success"}]}]"#;
    for doc in [
        format!("{{\n\"projectHash\": \"ab\",\n\"messages\": {msgs}\n}}"),
        format!("{{\n\"startTime\": \"2025-10-27T19:56:01.701Z\",\n\"messages\": {msgs}\n}}"),
    ] {
        let loaded = import::load_bytes(doc.as_bytes());
        assert_eq!(loaded.format, Format::GeminiSession, "{doc}");
        let calls = loaded
            .items
            .iter()
            .filter(
                |d| matches!(d, Decoded::Frame(f) if f.frame_type == FrameType::ToolInvokeRequest),
            )
            .count();
        assert_eq!(calls, 1);
    }
    // An Anthropic request body stays Anthropic.
    let body = "{\n\"model\": \"m\",\n\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]\n}";
    assert_eq!(
        import::load_bytes(body.as_bytes()).format,
        Format::Anthropic
    );
    let loaded = import::load_bytes(b"{\n\"sessionId\": \"x\",\n\"messages\": {}\n}");
    assert_eq!(loaded.format, Format::GeminiSession);
    let found: Vec<(&str, u64, &str)> = loaded
        .items
        .iter()
        .filter_map(|d| match d {
            Decoded::Finding(f) => Some((f.code, f.line, f.message.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        found,
        vec![(
            "unreadable-input",
            1,
            "`messages` is an object, not an array of messages: none read"
        )]
    );
}

/// #10: fields of the wrong type build no invalid RAWP frame: a Codex call with `name: 123`
/// and `call_id: 7` (and its result) are rows with one warning each naming line and field;
/// an exit code written as "1" is a failure; a Gemini status "weird" is an error with one
/// warning. `check` then blames nothing on RAWP's rules.
#[test]
fn bad_field_types_are_findings_not_invalid_frames() {
    let dir = tempfile::tempdir().unwrap();
    let text = [
        r#"{"timestamp":"2026-04-02T10:00:00.000Z","type":"session_meta","payload":{"id":"019d4a1e-7c2b-7e01-9a55-3f0c2d9e8b11"}}"#,
        r#"{"timestamp":"2026-04-02T10:00:05.000Z","type":"response_item","payload":{"type":"function_call","name":123,"arguments":"not json","call_id":7}}"#,
        r#"{"timestamp":"2026-04-02T10:00:06.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":7,"output":null}}"#,
        r#"{"timestamp":"2026-04-02T10:00:13.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"x\"]}","call_id":"w5"}}"#,
        r#"{"timestamp":"2026-04-02T10:00:14.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"w5","output":"{\"output\":\"x\",\"metadata\":{\"exit_code\":\"1\"}}"}}"#,
    ]
    .join("\n");
    let p = write(&dir, "rollout.jsonl", &text);
    let s = fold(&p);
    assert_eq!(statuses(&s), vec![st("w5", "shell", Failed)]);
    let found: Vec<(&str, u64)> = s.findings.iter().map(|f| (f.code, f.line)).collect();
    assert_eq!(
        found,
        vec![("wrong-field-type", 2), ("wrong-field-type", 3)]
    );
    assert!(s.findings[0].message.contains("`call_id`"));
    let rows: Vec<&str> = s
        .items
        .iter()
        .filter_map(|i| match i {
            rawpv::session::Item::Event(f) => Some(f.frame_type.as_str()),
            _ => None,
        })
        .filter(|t| t.starts_with("x-codex.c") || t.starts_with("x-codex.r"))
        .collect();
    assert_eq!(rows, vec!["x-codex.call", "x-codex.result"]);

    let doc = r#"{"sessionId":"s1","projectHash":"ab","messages":[{"id":"m2","type":"gemini","content":"a","toolCalls":[{"id":"a-1","name":"read_file","args":{"file_path":"/x"},"result":[],"status":"weird"}]}]}"#;
    let g = write(&dir, "session.json", doc);
    let s = fold(&g);
    assert_eq!(statuses(&s), vec![st("a-1", "read_file", Failed)]);
    let found: Vec<(&str, u64)> = s.findings.iter().map(|f| (f.code, f.line)).collect();
    assert_eq!(found, vec![("wrong-field-type", 1)]);
    let r = s.invocations[0].result.as_ref().unwrap();
    assert_eq!(
        r.extra.get("reported_status"),
        Some(&serde_json::json!("weird"))
    );
}

/// #12: Codex 0.125 writes a compaction twice (`compacted`, then its `context_compacted`
/// event): one `session.compacted` frame, the event counted as a mirror.
#[test]
fn one_compaction_is_one_row() {
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents/codex_v0125_calls.jsonl");
    let (_, fr, _) = frames(&p);
    let lines: Vec<u64> = fr
        .iter()
        .filter(|f| f.frame_type == FrameType::SessionCompacted)
        .map(|f| f.origin.line)
        .collect();
    assert_eq!(lines, vec![43]);
    // A lone `context_compacted` is still a row.
    let dir = tempfile::tempdir().unwrap();
    let q = write(
        &dir,
        "r.jsonl",
        r#"{"timestamp":"2026-04-02T10:00:00.000Z","type":"session_meta","payload":{"id":"s"}}
{"timestamp":"2026-04-02T10:01:10.010Z","type":"event_msg","payload":{"type":"context_compacted"}}
"#,
    );
    let (_, fr, _) = frames(&q);
    assert_eq!(
        fr.iter()
            .filter(|f| f.frame_type == FrameType::SessionCompacted)
            .count(),
        1
    );
}

/// #13: a `write_stdin` poll of a process no call started is an info finding naming it.
#[test]
fn poll_of_an_unknown_process_is_a_finding() {
    let dir = tempfile::tempdir().unwrap();
    let q = write(
        &dir,
        "r.jsonl",
        r#"{"timestamp":"2026-04-02T10:00:00.000Z","type":"session_meta","payload":{"id":"s"}}
{"timestamp":"2026-04-02T10:00:01.000Z","type":"response_item","payload":{"type":"function_call","name":"write_stdin","arguments":"{\"session_id\":99,\"chars\":\"\"}","call_id":"p1"}}
{"timestamp":"2026-04-02T10:00:02.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"p1","output":"Process running with session ID 99\nOutput:\n"}}
"#,
    );
    let s = fold(&q);
    let found: Vec<(&str, u64, &str)> = s
        .findings
        .iter()
        .map(|f| (f.code, f.line, f.message.as_str()))
        .collect();
    assert_eq!(
        found,
        vec![(
            "unrecognised-record",
            2,
            "write_stdin call \"p1\" polls process 99, which no exec_command call in this session started"
        )]
    );
}

/// #11: Gemini's output tokens count its thoughts (billed as output, outside `output` in
/// `tokens`), as Codex's count its reasoning: summed from the raw corpus session.
#[test]
fn gemini_output_tokens_count_thoughts() {
    let Some(d) = corpus::dir("gemini") else {
        return;
    };
    let p = d.join("gemini-session-2025-10-27-shell-websearch-cancelled-error.json");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    let n =
        |t: &serde_json::Value, k: &str| t.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
    let (mut out, mut thoughts) = (0, 0);
    for m in doc["messages"].as_array().unwrap() {
        if let Some(t) = m.get("tokens") {
            out += n(t, "output") + n(t, "thoughts");
            thoughts += n(t, "thoughts");
        }
    }
    assert!(thoughts > 0);
    let (_, fr, _) = frames(&p);
    let got: u64 = fr
        .iter()
        .filter(|f| f.frame_type == FrameType::SessionUsage)
        .filter_map(|f| match &f.body {
            Body::Generic(g) => g.get("output_tokens").and_then(serde_json::Value::as_u64),
            _ => None,
        })
        .sum();
    assert_eq!(got, out);
}
