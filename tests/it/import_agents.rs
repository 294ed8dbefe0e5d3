//! Codex CLI and Gemini CLI sessions (issue 29): every corpus file and the fixtures of the record
//! kinds the corpus lacks (`tests/fixtures/agents/`, written from AGENT-FORMATS.md) → frames →
//! session. The calls and failures are counted from the raw files with `serde_json`,
//! independently of the importers, and compared with what the session shows.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use insta::assert_snapshot;
use rawpv::action::Action;
use rawpv::app::App;
use rawpv::import::{self, Decoded, Format};
use rawpv::protocol::{Body, FrameType, OutputType, ResultStatus};
use rawpv::session::CallStatus::{Cancelled, Failed, Succeeded};
use rawpv::session::{CallStatus, Session};
use serde_json::Value;

use crate::support::{corpus, headless};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents")
        .join(name)
}

fn fold(p: &Path) -> Session {
    rawpv::source::file::fold_path(p).unwrap().0
}

fn decode(p: &Path) -> (Format, Vec<rawpv::protocol::Frame>) {
    let loaded = import::load_path(p).unwrap();
    let frames = loaded
        .items
        .into_iter()
        .filter_map(|d| match d {
            Decoded::Frame(f) => Some(*f),
            _ => None,
        })
        .collect();
    (loaded.format, frames)
}

/// `(calls, failed calls)` counted from a raw file, without the importers.
fn raw_counts(p: &Path) -> (usize, usize) {
    let text = std::fs::read_to_string(p).unwrap();
    let name = p.file_name().unwrap().to_str().unwrap();
    let lines = || {
        text.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    };
    let exit = |t: &str| {
        t.lines()
            .find_map(|l| l.trim().strip_prefix("Exit Code:"))
            .and_then(|n| n.trim().parse::<i64>().ok())
    };
    if name.starts_with("gemini-session") {
        let doc: Value = serde_json::from_str(&text).unwrap();
        let calls: Vec<&Value> = doc["messages"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|m| m["toolCalls"].as_array().into_iter().flatten())
            .collect();
        let failed = calls
            .iter()
            .filter(|c| {
                let out = c["result"][0]["functionResponse"]["response"]["output"]
                    .as_str()
                    .unwrap_or("");
                c["status"] != "success" || exit(out).is_some_and(|e| e != 0)
            })
            .count();
        return (calls.len(), failed);
    }
    if name.starts_with("gemini-stream") {
        let calls = lines().filter(|v| v["type"] == "tool_use").count();
        let failed = lines()
            .filter(|v| v["type"] == "tool_result")
            .filter(|v| {
                v["status"] != "success"
                    || exit(v["output"].as_str().unwrap_or("")).is_some_and(|e| e != 0)
            })
            .count();
        return (calls, failed);
    }
    if name.starts_with("codex-exec-json") {
        let kinds = [
            "command_execution",
            "file_change",
            "mcp_tool_call",
            "web_search",
        ];
        let done: Vec<Value> = lines()
            .filter(|v| v["type"] == "item.completed")
            .map(|v| v["item"].clone())
            .filter(|i| kinds.contains(&i["type"].as_str().unwrap_or("")))
            .collect();
        let failed = done
            .iter()
            .filter(|i| i["status"] == "failed" || i["exit_code"].as_i64().is_some_and(|e| e != 0))
            .count();
        return (done.len(), failed);
    }
    // A rollout: calls are `function_call`s; a result fails when its JSON form has a non-zero
    // exit code, or when it is plain text other than update_plan's "Plan updated".
    let mut calls = 0;
    let mut failed = 0;
    for v in lines() {
        let p = &v["payload"];
        match p["type"].as_str() {
            Some("function_call") => calls += 1,
            Some("function_call_output") => {
                let out = p["output"].as_str().unwrap_or("");
                match serde_json::from_str::<Value>(out) {
                    Ok(j) if j.is_object() => {
                        if j["metadata"]["exit_code"].as_i64().is_some_and(|e| e != 0) {
                            failed += 1;
                        }
                    }
                    _ if out == "Plan updated" => {}
                    _ => failed += 1,
                }
            }
            _ => {}
        }
    }
    (calls, failed)
}

/// Every corpus file of both agents: each call is a request paired with its result, and the
/// failed calls (non-zero exit, rejected patch, error / cancelled status) are exactly the
/// non-success results; `check` finds no error.
#[test]
fn corpus_calls_pair_with_results_and_failures_are_not_success() {
    let mut seen = 0;
    for sub in ["codex", "gemini"] {
        let Some(files) = corpus::files(sub) else {
            return;
        };
        for p in files {
            let (calls, failed) = raw_counts(&p);
            let s = fold(&p);
            let name = p.display().to_string();
            assert_eq!(s.invocations.len(), calls, "{name}: calls");
            for inv in &s.invocations {
                assert!(
                    inv.result.is_some(),
                    "{name}: {} has no result",
                    inv.invocation_id
                );
                assert!(!inv.status.is_open(), "{name}: {} open", inv.invocation_id);
            }
            let not_ok = s
                .invocations
                .iter()
                .filter(|i| i.status != CallStatus::Succeeded)
                .count();
            assert_eq!(not_ok, failed, "{name}: failed calls");
            let errors: Vec<_> = s
                .findings
                .iter()
                .filter(|f| f.level == rawpv::finding::Level::Error)
                .collect();
            assert!(errors.is_empty(), "{name}: {errors:?}");
            seen += 1;
        }
    }
    assert_eq!(seen, 7);
}

#[test]
fn corpus_formats_are_detected_and_known_counts_hold() {
    let Some(dir) = corpus::dir("codex") else {
        return;
    };
    let gem = dir.parent().unwrap().join("gemini");
    let cases: &[(PathBuf, Format, usize, usize)] = &[
        (
            dir.join("codex-v0.40.0-vscode-shell-applypatch-updateplan-123calls.jsonl"),
            Format::CodexRollout,
            123,
            12,
        ),
        (
            dir.join("codex-v0.77.0-exec-shell-json-output.jsonl"),
            Format::CodexRollout,
            3,
            0,
        ),
        (
            dir.join("codex-exec-json-v0.46.0-command-execution.jsonl"),
            Format::CodexExec,
            1,
            0,
        ),
        (
            gem.join("gemini-session-2025-10-27-shell-websearch-cancelled-error.json"),
            Format::GeminiSession,
            13,
            4,
        ),
        (
            gem.join("gemini-stream-json-2025-12-26-shell-readfile.jsonl"),
            Format::GeminiStreamJson,
            2,
            0,
        ),
    ];
    for (p, format, calls, failed) in cases {
        let (f, frames) = decode(p);
        assert_eq!(f, *format, "{}", p.display());
        assert_eq!(raw_counts(p), (*calls, *failed), "{}", p.display());
        // Every frame carries the session id (the per-session model groups by it).
        assert!(
            frames.iter().all(|f| f.envelope.session_id.is_some()),
            "{}",
            p.display()
        );
    }
    // 0.40: 29 apply_patch heredocs become apply_patch calls; 2 rejected → cancelled.
    let s = fold(&cases[0].0);
    let patches: Vec<_> = s
        .invocations
        .iter()
        .filter(|i| i.tool_name == "apply_patch")
        .collect();
    assert_eq!(patches.len(), 29);
    assert_eq!(
        patches
            .iter()
            .filter(|i| i.status == CallStatus::Cancelled)
            .count(),
        2
    );
    // Gemini: the shell's exit 127 (and pip3's exit 1) are failures although Gemini said success.
    let s = fold(&cases[3].0);
    let pip = s
        .invocations
        .iter()
        .find(|i| i.summary.as_ref() == "pip install RestrictedPython")
        .unwrap();
    assert_eq!(pip.status, CallStatus::Failed);
    let r = pip.result.as_ref().unwrap();
    assert_eq!(r.extra["reported_status"], "success");
}

/// The result of call `id` among `frames`.
fn result_of<'a>(
    frames: &'a [rawpv::protocol::Frame],
    id: &str,
) -> &'a rawpv::protocol::ToolInvokeResult {
    frames
        .iter()
        .find_map(|f| match &f.body {
            Body::Result(r) if r.invocation_id.as_deref() == Some(id) => Some(r),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {id}"))
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

/// Codex 0.125 (a fixture: the corpus has no 0.125 rollout): `exec_command` polled by
/// `write_stdin` until its `exec_command_end`, the freeform patch with its real diff, a rejected
/// patch, `update_plan`, web search, MCP success / `Err` / `isError`, `local_shell_call`, an
/// interrupted turn, compaction, usage deduplicated, a malformed last line.
#[test]
fn codex_0125_fixture() {
    let p = fixture("codex_v0125_calls.jsonl");
    let (format, frames) = decode(&p);
    assert_eq!(format, Format::CodexRollout);
    let s = fold(&p);
    assert_eq!(
        statuses(&s),
        vec![
            st("call_exec1", "exec_command", Failed),
            st("call_poll1", "write_stdin", Succeeded),
            st("call_patch1", "apply_patch", Succeeded),
            st("call_patch2", "apply_patch", Cancelled),
            st("call_plan1", "update_plan", Succeeded),
            st("web_search-1", "web_search", Succeeded),
            st("call_mcp1", "docs.lookup", Succeeded),
            st("call_mcp2", "docs.lookup", Failed),
            st("call_mcp3", "docs.lookup", Failed),
            st("call_local1", "local_shell", Succeeded),
            st("call_exec2", "exec_command", Cancelled),
        ]
    );
    // The poll is tied to the process it polls; the running output is a chunk of that call.
    let poll = frames
        .iter()
        .find_map(|f| match &f.body {
            Body::Request(r) if r.invocation_id.as_deref() == Some("call_poll1") => Some(r),
            _ => None,
        })
        .unwrap();
    assert_eq!(poll.extra["polls_invocation_id"], "call_exec1");
    // The detail says which call's process the poll polls.
    let detail = std::process::Command::new(env!("CARGO_BIN_EXE_rawpv"))
        .args(["print", "--detail", "--color", "never"])
        .arg(&p)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&detail.stdout);
    let poll_at = text.find("write_stdin  ok").unwrap();
    assert!(
        text[poll_at..]
            .lines()
            .take(4)
            .any(|l| l == "polls the process of call call_exec1"),
        "{}",
        &text[poll_at..]
    );
    let chunks: Vec<_> = frames
        .iter()
        .filter_map(|f| match &f.body {
            Body::Stream(c) => Some((c.invocation_id.clone(), c.chunk.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        chunks,
        vec![(
            Some("call_exec1".to_owned()),
            Some("   Compiling proj v0.1.0\n".to_owned())
        )]
    );
    let exec = result_of(&frames, "call_exec1");
    assert_eq!(exec.output.as_ref().unwrap()["exit_code"], 101);
    assert_eq!(exec.duration_ms, Some(6900.0));
    // The applied diff comes from patch_apply_end, with its real line numbers.
    let patch = result_of(&frames, "call_patch1");
    assert_eq!(patch.output_type, Some(OutputType::Diff));
    assert_eq!(
        patch.output.as_ref().unwrap().as_str().unwrap(),
        "Success. Updated the following files:\nM src/parse.rs\n--- a//home/user/proj/src/parse.rs\n+++ b//home/user/proj/src/parse.rs\n@@ -11,2 +11,2 @@ fn parse(s: &str) -> u32 {\n-    s.parse().unwrap()\n+    s.trim().parse().unwrap_or(0)\n }\n"
    );
    let plan = result_of(&frames, "call_plan1");
    assert_eq!(plan.output_type, Some(OutputType::Structured));
    assert_eq!(
        plan.output.as_ref().unwrap()["plan"][1]["status"],
        "in_progress"
    );
    assert_eq!(
        result_of(&frames, "call_mcp2").output.as_ref().unwrap(),
        "tool call failed: connection refused"
    );
    // Usage: the repeated token_count is not counted twice; cached input is split out.
    let usage: Vec<_> = frames
        .iter()
        .filter(|f| f.frame_type == FrameType::SessionUsage)
        .collect();
    assert_eq!(usage.len(), 1);
    let Body::Generic(u) = &usage[0].body else {
        panic!()
    };
    assert_eq!(
        (
            u["input_tokens"].as_u64(),
            u["cache_read_input_tokens"].as_u64()
        ),
        (Some(1000), Some(8000))
    );
    // Turns: one ended, one interrupted; one compaction row (attack 6 #12); the prompt shown
    // once.
    let ends: Vec<String> = frames
        .iter()
        .filter(|f| f.frame_type == FrameType::SessionTurnEnd)
        .map(|f| f.payload_json()["stop_reason"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ends, ["end_turn", "interrupted"]);
    assert_eq!(
        frames
            .iter()
            .filter(|f| f.frame_type == FrameType::SessionCompacted)
            .count(),
        1
    );
    assert_eq!(
        frames
            .iter()
            .filter(|f| f.frame_type == FrameType::ControlPromptRequest)
            .count(),
        3
    );
    // The malformed last line is a finding with its line number; the unknown event is a row.
    let loaded = import::load_path(&p).unwrap();
    let bad: Vec<u64> = loaded
        .items
        .iter()
        .filter_map(|d| match d {
            Decoded::Malformed(e) => Some(e.line),
            _ => None,
        })
        .collect();
    assert_eq!(bad, [48]);
    assert!(
        frames
            .iter()
            .any(|f| f.frame_type.as_str() == "x-codex.entered_review_mode")
    );
}

/// The pre-envelope rollout (mid-2025): bare header, `record_type: state`, bare items.
#[test]
fn codex_pre_envelope_fixture() {
    let p = fixture("codex_pre_envelope.jsonl");
    let (format, frames) = decode(&p);
    assert_eq!(format, Format::CodexRollout);
    assert!(
        frames
            .iter()
            .all(|f| f.envelope.session_id.as_deref()
                == Some("5973b6c0-94b8-487b-a530-2aeb6098ae0e"))
    );
    assert_eq!(
        statuses(&fold(&p)),
        vec![
            st("call_ls", "shell", Succeeded),
            st("call_cat", "shell", Failed),
            st("call_rm", "apply_patch", Failed),
        ]
    );
}

/// `codex exec --json`: a failed MCP call with `error: null` is an error, its text from
/// `result.content`; a command's non-zero exit; `item.updated` output as a chunk; todo lists.
#[test]
fn codex_exec_fixture() {
    let p = fixture("codex_exec_mcp_failed.jsonl");
    let (format, frames) = decode(&p);
    assert_eq!(format, Format::CodexExec);
    assert_eq!(
        statuses(&fold(&p)),
        vec![
            st("item_0", "update_plan", Succeeded),
            st("item_1", "shell", Failed),
            st("item_2", "github.get_issue", Failed),
            st("item_3", "github.get_issue", Succeeded),
            st("item_4", "web_search", Succeeded),
            st("item_5", "apply_patch", Succeeded),
        ]
    );
    assert_eq!(
        result_of(&frames, "item_2").output.as_ref().unwrap(),
        "Not Found: issue 7"
    );
    assert_eq!(
        result_of(&frames, "item_0").output.as_ref().unwrap()["plan"][0]["status"],
        "completed"
    );
    assert!(frames.iter().any(|f| matches!(&f.body,
        Body::Stream(c) if c.chunk.as_deref() == Some("   Compiling a v0.1.0\n"))));
    assert_eq!(
        frames
            .iter()
            .filter(|f| f.frame_type == FrameType::SessionError)
            .count(),
        2
    );
}

/// Gemini: `replace` as a diff, a shell exit 1 reported as success, a tool error; stream-json
/// deltas joined, an error result.
#[test]
fn gemini_fixtures() {
    let p = fixture("gemini_replace_exit_error.json");
    let (format, frames) = decode(&p);
    assert_eq!(format, Format::GeminiSession);
    let r = result_of(&frames, "replace-1769932805000-aa11");
    assert_eq!(r.output_type, Some(OutputType::Diff));
    assert_eq!(
        r.output.as_ref().unwrap()["old_string"],
        "def foo():\n    return 1\n"
    );
    let sh = result_of(&frames, "run_shell_command-1769932806000-bb22");
    assert_eq!(sh.status, Some(ResultStatus::Error));
    assert_eq!(sh.output.as_ref().unwrap()["exit_code"], 1);
    assert_eq!(
        result_of(&frames, "unknown_tool-1769932807000-cc33").status,
        Some(ResultStatus::Error)
    );

    let p = fixture("gemini_stream_errors.jsonl");
    let (format, frames) = decode(&p);
    assert_eq!(format, Format::GeminiStreamJson);
    let s = fold(&p);
    assert_eq!(
        statuses(&s),
        vec![
            st(
                "run_shell_command-1770022801200-dd44",
                "run_shell_command",
                Failed
            ),
            st("read_file-1770022802000-ee55", "read_file", Failed),
        ]
    );
    let text: Vec<_> = frames
        .iter()
        .filter(|f| f.frame_type == FrameType::AgentTextDone)
        .map(|f| f.payload_json()["text"].clone())
        .collect();
    assert_eq!(text, ["Checking the disk."]);
}

/// `rawpv print -` from stdin gives what `print FILE` gives, for the line-based formats
/// (live from stdin: `codex exec --json`, Gemini stream-json, a rollout).
#[test]
fn stdin_prints_like_the_file() {
    let bin = env!("CARGO_BIN_EXE_rawpv");
    for p in [
        fixture("codex_exec_mcp_failed.jsonl"),
        fixture("gemini_stream_errors.jsonl"),
        fixture("codex_v0125_calls.jsonl"),
    ] {
        let file = std::process::Command::new(bin)
            .arg("print")
            .arg(&p)
            .output()
            .unwrap();
        let piped = std::process::Command::new(bin)
            .args(["print", "-"])
            .stdin(std::fs::File::open(&p).unwrap())
            .output()
            .unwrap();
        assert!(!file.stdout.is_empty());
        assert_eq!(
            String::from_utf8_lossy(&piped.stdout),
            String::from_utf8_lossy(&file.stdout),
            "{}",
            p.display()
        );
    }
}

fn app_of(p: &Path) -> App {
    let bytes = std::fs::read(p).unwrap();
    let name = p.file_name().unwrap().to_string_lossy().into_owned();
    App::headless(import::load_bytes(&bytes).items, &name)
}

/// One screen of each kind: a Codex rollout (its first failed call), `codex exec --json`, a
/// Gemini saved session (the shell's exit 127), Gemini stream-json.
#[test]
fn screens_of_each_kind() {
    let mut app = app_of(&fixture("codex_v0125_calls.jsonl"));
    headless::act(&mut app, &[Action::NextError]);
    let term = headless::draw(&mut app, 120, 34);
    assert_snapshot!("agents_codex_rollout_exec_failed", term.backend());

    let mut app = app_of(&fixture("codex_exec_mcp_failed.jsonl"));
    headless::act(&mut app, &[Action::NextError, Action::NextError]);
    let term = headless::draw(&mut app, 120, 34);
    assert_snapshot!("agents_codex_exec_mcp_failed", term.backend());

    let Some(gem) = corpus::dir("gemini") else {
        return;
    };
    let mut app =
        app_of(&gem.join("gemini-session-2025-10-27-shell-websearch-cancelled-error.json"));
    headless::act(&mut app, &[Action::NextError, Action::NextError]);
    let term = headless::draw(&mut app, 120, 34);
    assert_snapshot!("agents_gemini_session_exit_127", term.backend());

    let mut app = app_of(&gem.join("gemini-stream-json-2025-12-26-shell-readfile.jsonl"));
    headless::act(&mut app, &[Action::MoveDown; 4]);
    let term = headless::draw(&mut app, 120, 34);
    assert_snapshot!("agents_gemini_stream_json", term.backend());

    let Some(codex) = corpus::dir("codex") else {
        return;
    };
    let mut app =
        app_of(&codex.join("codex-v0.40.0-vscode-shell-applypatch-updateplan-123calls.jsonl"));
    headless::act(&mut app, &[Action::StartFilter]);
    app.type_text("tool:update_plan");
    app.press(crossterm::event::KeyCode::Enter);
    app.finish_scans();
    let term = headless::draw(&mut app, 120, 34);
    assert_snapshot!("agents_codex_update_plan_checklist", term.backend());
}

/// A saved rollout's requests and shell results stay in the file (their frames carry the line's
/// span) and read back equal to what the decoder built in memory.
#[test]
fn rollout_inputs_and_shell_outputs_read_back_from_the_file() {
    let mut files = vec![
        fixture("codex_v0125_calls.jsonl"),
        fixture("codex_pre_envelope.jsonl"),
    ];
    if let Some(dir) = corpus::dir("codex") {
        files.push(dir.join("codex-v0.40.0-vscode-shell-applypatch-updateplan-123calls.jsonl"));
        files.push(dir.join("codex-v0.77.0-exec-shell-json-output.jsonl"));
    }
    for p in files {
        let backed = fold(&p);
        let memory = Session::from_decoded(import::load_path(&p).unwrap().items);
        assert_eq!(backed.invocations.len(), memory.invocations.len());
        let mut deferred = (0, 0);
        for (b, m) in backed.invocations.iter().zip(&memory.invocations) {
            deferred.0 += usize::from(b.input_span.is_some());
            deferred.1 += usize::from(b.output_span.is_some());
            let back = backed.with_input_output(b);
            assert_eq!(
                back.input,
                m.input,
                "{}: input of {}",
                p.display(),
                b.invocation_id
            );
            assert_eq!(
                back.result.as_ref().and_then(|r| r.output.clone()),
                m.result.as_ref().and_then(|r| r.output.clone()),
                "{}: output of {}",
                p.display(),
                b.invocation_id
            );
        }
        // Deferred: the requests of call items and the results of shell calls, counted from
        // the raw lines.
        let text = std::fs::read_to_string(&p).unwrap();
        let items: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .map(|v| v.get("payload").cloned().unwrap_or(v))
            .collect();
        let ty = |v: &Value| v["type"].as_str().unwrap_or("").to_owned();
        let calls = items
            .iter()
            .filter(|v| {
                matches!(
                    ty(v).as_str(),
                    "function_call" | "custom_tool_call" | "local_shell_call"
                )
            })
            .count();
        let shell_results = memory
            .invocations
            .iter()
            .filter(|i| matches!(i.tool_name.as_str(), "shell" | "local_shell"))
            .count();
        assert_eq!(deferred, (calls, shell_results), "{}", p.display());
    }
}

/// Fuzz finding (`agents`, 2026-12-01): a call id requested twice, first as an `apply_patch`
/// heredoc and then as a plain `shell` call, gave its result the second call's kind under the
/// first call's name, so the file-backed session could not read the output back. The first call
/// keeps its kind and gets the result; the second (another call: attack 6 #3) is shown as `c1#2`,
/// never answered.
#[test]
fn a_repeated_call_id_keeps_its_first_call() {
    let lines = [
        r#"{"id":"5973b6c0-94b8-487b-a530-2aeb6098ae0e","timestamp":"2025-05-20T09:00:00.000Z","instructions":null}"#,
        r#"{"type":"function_call","name":"shell","arguments":"{\"command\":[\"apply_patch\",\"*** Begin Patch\\n*** Delete File: old.txt\\n*** End Patch\"]}","call_id":"c1"}"#,
        r#"{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls\"]}","call_id":"c1"}"#,
        r#"{"type":"function_call_output","call_id":"c1","output":"failed in sandbox Seatbelt with execution error: exit code: 1"}"#,
    ];
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("rollout.jsonl");
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    let backed = fold(&p);
    assert_eq!(
        statuses(&backed),
        vec![
            st("c1", "apply_patch", Failed),
            st("c1#2", "shell", CallStatus::Requested)
        ]
    );
    let inv = &backed.invocations[0];
    assert_eq!(
        backed
            .with_input_output(inv)
            .result
            .as_ref()
            .unwrap()
            .output,
        Some(Value::String(
            "failed in sandbox Seatbelt with execution error: exit code: 1".into()
        ))
    );
    assert!(
        backed
            .findings
            .iter()
            .any(|f| f.code == "duplicate-invocation-id" && f.line == 3)
    );
}

/// A Gemini saved session that is not valid JSON is one malformed item at the JSON error's line;
/// a message type not understood is a row, counted in an info finding.
#[test]
fn gemini_bad_document_and_unknown_message() {
    let bad = b"{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"h\",\n  \"messages\": [\n    {\"type\": \"user\",, }\n  ]\n}\n";
    let loaded = import::load_bytes(bad);
    assert_eq!(loaded.format, Format::GeminiSession);
    let lines: Vec<u64> = loaded
        .items
        .iter()
        .map(|d| match d {
            Decoded::Malformed(e) => e.line,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(lines, [5]);

    let p = fixture("gemini_replace_exit_error.json");
    let loaded = import::load_path(&p).unwrap();
    assert!(loaded.items.iter().any(|d| matches!(d,
        Decoded::Frame(f) if f.frame_type.as_str() == "x-gemini.compression")));
    let info: Vec<String> = loaded
        .items
        .iter()
        .filter_map(|d| match d {
            Decoded::Finding(f) if f.code == "unrecognised-record" => Some(f.message.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        info,
        ["1 record(s) of type \"compression\" not understood; kept as raw rows"]
    );
}

/// Fuzz finding (`agents`, 2026-12-01, third run): a shell call answered by a
/// `custom_tool_call_output` item (the decoder reads both output items alike) did not read back
/// from the file: `reparse` looked for a `function_call_output` only.
#[test]
fn a_shell_result_in_a_custom_tool_output_reads_back() {
    let lines = [
        r#"{"timestamp":"2026-04-02T10:00:00.000Z","type":"session_meta","payload":{"id":"s"}}"#,
        r#"{"timestamp":"2026-04-02T10:00:01.000Z","type":"response_item","payload":{"type":"local_shell_call","call_id":"c1","status":"completed","action":{"type":"exec","command":["bash","-lc","ls"]}}}"#,
        r#"{"timestamp":"2026-04-02T10:00:02.000Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c1","output":"{\"output\":\"a\\n\",\"metadata\":{\"exit_code\":0}}"}}"#,
    ];
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("rollout.jsonl");
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    let backed = fold(&p);
    let inv = &backed.invocations[0];
    assert!(inv.output_span.is_some());
    assert_eq!(
        backed
            .with_input_output(inv)
            .result
            .as_ref()
            .unwrap()
            .output,
        Some(serde_json::json!({"stdout": "a\n", "exit_code": 0}))
    );
}
