//! Issue 25 "Done when": every recording in `../shared/corpus/anthropic-api/` opens, and every
//! tool use in it (client `tool_use`, `server_tool_use`, `mcp_tool_use`) is a request in the
//! session with its result where the file records one, errors as errors; the calls whose
//! result the file does not hold are open and carry a `tool-use-without-result` finding saying
//! why. The counts come from the raw files, read here independently of the importer (JSON /
//! YAML parsed as plain values, SSE bodies scanned for `content_block_start`).
//! Also: the orphaned-result case, the stream formats (SSE capture, one event per line, live
//! from stdin), recorded HTTP errors and retries.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::corpus;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rawpv::finding::{Level, code};
use rawpv::import::{self, Decoded, Format};
use rawpv::protocol::{FrameType, OutputType};
use rawpv::session::{CallStatus, Item, Session};
use rawpv::source::{SourceMsg, stdin};
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

fn fixture(name: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures")).join(name)
}

fn load(path: &Path) -> (Session, Format) {
    let loaded = import::load_path(path).unwrap();
    let format = loaded.format;
    (Session::from_decoded(loaded.items), format)
}

/// What the raw file says: tool use ids (with their block type) and result ids (error or not).
#[derive(Debug, Default)]
struct Raw {
    uses: BTreeMap<String, String>,
    results: BTreeMap<String, bool>,
}

impl Raw {
    fn walk(&mut self, v: &Value) {
        match v {
            Value::Object(o) => {
                let ty = o.get("type").and_then(Value::as_str).unwrap_or("");
                if matches!(ty, "tool_use" | "server_tool_use" | "mcp_tool_use")
                    && let Some(id) = o.get("id").and_then(Value::as_str)
                {
                    self.uses.insert(id.to_owned(), ty.to_owned());
                }
                if (ty == "tool_result" || ty.ends_with("_tool_result"))
                    && let Some(id) = o.get("tool_use_id").and_then(Value::as_str)
                {
                    let err = o.get("is_error").and_then(Value::as_bool) == Some(true)
                        || o.get("content")
                            .and_then(|c| c.get("type"))
                            .and_then(Value::as_str)
                            .is_some_and(|t| t.ends_with("_error"));
                    self.results.insert(id.to_owned(), err);
                }
                for x in o.values() {
                    self.walk(x);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| self.walk(x)),
            Value::String(s) if s.contains("data:") => {
                // A recorded SSE body: each data line is one event.
                for d in s.lines().filter_map(|l| l.trim().strip_prefix("data:")) {
                    if let Ok(ev) = serde_json::from_str::<Value>(d.trim()) {
                        self.walk(&ev);
                    }
                }
            }
            _ => {}
        }
    }
}

fn raw_of(path: &Path) -> Raw {
    let text = std::fs::read_to_string(path).unwrap();
    let v: Value = if path.extension().is_some_and(|e| e == "yaml") {
        serde_yaml_ng::from_str(&text).unwrap()
    } else {
        serde_json::from_str(&text).unwrap()
    };
    let mut raw = Raw::default();
    raw.walk(&v);
    raw
}

#[test]
fn every_tool_use_in_the_corpus_is_a_request_with_its_result() {
    let Some(files) = corpus::files("anthropic-api") else {
        return;
    };
    assert!(files.len() >= 9, "{files:?}");
    let mut table = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let raw = raw_of(path);
        let (s, format) = load(path);
        assert_eq!(format, Format::Anthropic, "{name}");
        assert_eq!(s.counts.malformed, 0, "{name}: malformed lines");
        let session_ids: BTreeSet<&str> = s
            .invocations
            .iter()
            .map(|i| i.invocation_id.as_str())
            .collect();
        let raw_ids: BTreeSet<&str> = raw.uses.keys().map(String::as_str).collect();
        assert_eq!(session_ids, raw_ids, "{name}: tool uses");
        let mut answered = 0;
        for (id, ty) in &raw.uses {
            let inv = s.invocation(id).unwrap();
            if let Some(&err) = raw.results.get(id) {
                answered += 1;
                assert!(inv.result.is_some(), "{name}: {id} ({ty}) has no result");
                let want = if err {
                    CallStatus::Failed
                } else {
                    CallStatus::Succeeded
                };
                assert_eq!(inv.status, want, "{name}: {id} status");
            } else {
                assert!(
                    inv.status.is_open(),
                    "{name}: {id} has a result the file lacks"
                );
                let said = s.findings.iter().any(|f| {
                    f.code == code::TOOL_USE_WITHOUT_RESULT
                        && f.invocation_id.as_deref() == Some(id.as_str())
                });
                assert!(said, "{name}: {id} is open without a finding saying why");
            }
        }
        // Every result in the file answers a use in the file.
        for id in raw.results.keys() {
            assert!(raw.uses.contains_key(id), "{name}: result for unknown {id}");
        }
        let failed = raw.results.values().filter(|e| **e).count();
        assert_eq!(s.counts.failed as usize, failed, "{name}: failed calls");
        let server = raw.uses.values().filter(|t| *t != "tool_use").count();
        table.push(format!(
            "{name}: {} uses ({server} server), {answered} with results ({failed} errors)",
            raw.uses.len()
        ));
    }
    println!("{}", table.join("\n"));
}

#[test]
fn vercel_steps_open_with_the_server_result_and_the_client_calls() {
    let Some(dir) = corpus::dir("anthropic-api") else {
        return;
    };
    let (s, format) = load(&dir.join("vercel-programmatic-tool-calling-steps.json"));
    assert_eq!(format, Format::Anthropic);
    assert_eq!(s.counts.invocations, 9);
    let code = s.invocation("srvtoolu_01CberhXc9TgYXrCZU8bQoks").unwrap();
    assert_eq!(code.status, CallStatus::Succeeded);
    let r = code.result.as_ref().unwrap();
    assert_eq!(r.output_type, Some(OutputType::Text));
    let out = r.output.as_ref().unwrap();
    assert!(out["stdout"].as_str().unwrap().contains("PLAYER 1 WINS"));
    assert_eq!(out["exit_code"], 0);
    // The 8 client calls were answered in requests the recording does not keep: info only.
    let infos: Vec<_> = s
        .findings
        .iter()
        .filter(|f| f.code == code::TOOL_USE_WITHOUT_RESULT)
        .collect();
    assert_eq!(infos.len(), 8);
    assert!(infos.iter().all(|f| f.level == Level::Info), "{infos:?}");
    // `final` repeats the last step: one turn end, five usages.
    let n = |t: FrameType| {
        s.items
            .iter()
            .filter(|i| matches!(i, Item::Event(f) if f.frame_type == t))
            .count()
    };
    assert_eq!(n(FrameType::SessionTurnEnd), 1);
    assert_eq!(n(FrameType::SessionUsage), 5);
    // Each step's frames point at that step's line in the file.
    let lines: BTreeSet<u64> = s.invocations.iter().map(|i| i.request_line).collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
}

#[test]
fn recorded_429s_are_api_errors_on_their_requests_and_linked_to_the_retries() {
    let Some(dir) = corpus::dir("anthropic-api") else {
        return;
    };
    let (s, _) = load(&dir.join("sdkpy-429-retries-then-sse-stream.json"));
    assert_eq!(
        s.findings
            .iter()
            .filter(|f| f.code == code::UNREADABLE_INPUT)
            .count(),
        0
    );
    let api: Vec<_> = s
        .findings
        .iter()
        .filter(|f| f.code == code::API_ERROR)
        .collect();
    assert_eq!(api.len(), 2, "{api:?}");
    assert!(api.iter().all(|f| f.level == Level::Warning));
    let errors: Vec<Value> = s
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Event(f) if f.frame_type == FrameType::SessionError => Some(f.payload_json()),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 2);
    assert_eq!(errors[0]["http_status"], 429);
    assert_eq!(errors[0]["error_code"], "rate_limit_error");
    assert_eq!(errors[0]["request_id"], "req_011CYK5n67SytMUxm8WMZUWY");
    assert_eq!(errors[0]["attempt"], 1);
    assert_eq!(errors[1]["attempt"], 2);
    let first = errors[0]["request_line"].as_u64().unwrap();
    let second = errors[1]["request_line"].as_u64().unwrap();
    assert_eq!(errors[0]["retried_on_line"], second);
    assert_eq!(errors[1]["retry_of_line"], first);
    let third = errors[1]["retried_on_line"].as_u64().unwrap();
    assert!(first < second && second < third);
    assert_eq!(api[0].line, first);
    // The streamed answer of the third attempt is there once (no repeated prompt).
    let prompts = s
        .items
        .iter()
        .filter(|i| matches!(i, Item::Message(m) if m.kind == rawpv::session::MessageKind::Prompt))
        .count();
    assert_eq!(prompts, 1);
}

#[test]
fn an_orphaned_result_is_kept_and_is_an_error_on_its_line() {
    let path = fixture("anthropic_orphaned_result.json");
    let (s, _) = load(&path);
    let inv = s.invocation("toolu_orphan").unwrap();
    assert_eq!(inv.status, CallStatus::Succeeded);
    assert_eq!(
        inv.result.as_ref().unwrap().output,
        Some(Value::String("18 C, cloudy".into()))
    );
    let text = std::fs::read_to_string(&path).unwrap();
    // The second recorded pair starts on the line of its `{` after the first pair's `},`.
    let pair2 = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == "{")
        .nth(1)
        .map(|(i, _)| i as u64 + 1)
        .unwrap();
    let orphan: Vec<_> = s
        .findings
        .iter()
        .filter(|f| f.code == code::TOOL_RESULT_NOT_NEXT)
        .collect();
    assert_eq!(orphan.len(), 1, "{:?}", s.findings);
    assert_eq!(orphan[0].level, Level::Error);
    assert_eq!(orphan[0].line, pair2);
    assert_eq!(orphan[0].invocation_id.as_deref(), Some("toolu_orphan"));
    // Not the misleading "not answered" of before, and the 400 is an error on the same request.
    assert!(
        !s.findings
            .iter()
            .any(|f| f.code == code::TOOL_USE_WITHOUT_RESULT)
    );
    let api: Vec<_> = s
        .findings
        .iter()
        .filter(|f| f.code == code::API_ERROR)
        .collect();
    assert_eq!(api.len(), 1);
    assert_eq!(api[0].level, Level::Error);
    assert_eq!(api[0].line, pair2);
}

#[test]
fn an_sse_capture_is_read_as_a_stream() {
    let (s, format) = load(&fixture("anthropic_stream_web_search.sse"));
    assert_eq!(format, Format::AnthropicSse);
    assert_eq!(s.counts.malformed, 0);
    assert_eq!(s.counts.invocations, 2);
    let ws = s.invocation("srvtoolu_sse_ws").unwrap();
    assert_eq!(ws.input["query"], "ratatui release notes");
    let r = ws.result.as_ref().unwrap();
    assert_eq!(r.output_type, Some(OutputType::WebContent));
    assert_eq!(
        r.output.as_ref().unwrap()["results"][1]["url"],
        "https://ratatui.rs"
    );
    let weather = s.invocation("toolu_sse_weather").unwrap();
    assert_eq!(weather.input["location"], "Oslo");
    assert!(weather.status.is_open());
    // The cited text keeps its citation and shows it as a footnote.
    let cited = s
        .items
        .iter()
        .find_map(|i| match i {
            Item::Message(m) if m.text.contains("0.30") => Some(m.text.clone()),
            _ => None,
        })
        .unwrap();
    assert!(cited.contains("0.30.[1]"), "{cited}");
    assert!(
        cited.contains("[1] Releases · ratatui <https://github.com/ratatui/ratatui/releases>"),
        "{cited}"
    );
    let usage: Vec<Value> = s
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Event(f) if f.frame_type == FrameType::SessionUsage => Some(f.payload_json()),
            _ => None,
        })
        .collect();
    assert_eq!(usage.len(), 1);
    assert_eq!(usage[0]["output_tokens"], 89);
    assert_eq!(usage[0]["input_tokens"], 2679);
}

#[test]
fn one_event_per_line_is_read_as_a_stream() {
    let (s, format) = load(&fixture("anthropic_events_programmatic.chunks.txt"));
    assert_eq!(format, Format::AnthropicEvents);
    assert_eq!(s.counts.malformed, 0);
    assert_eq!(s.counts.invocations, 2);
    let code_ex = s.invocation("srvtoolu_ev_code").unwrap();
    assert_eq!(code_ex.status, CallStatus::Succeeded);
    assert_eq!(
        code_ex.result.as_ref().unwrap().output.as_ref().unwrap()["stdout"],
        "6\n"
    );
    let roll = s.invocation("toolu_ev_roll").unwrap();
    assert_eq!(roll.input["player"], 1);
    assert_eq!(roll.delegation_chain.len(), 1);
    assert_eq!(roll.delegation_chain[0].invocation_id, "srvtoolu_ev_code");
    let f: Vec<_> = s
        .findings
        .iter()
        .filter(|f| f.code == code::TOOL_USE_WITHOUT_RESULT)
        .collect();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].level, Level::Info);
}

async fn ids_until(rx: &mut mpsc::Receiver<SourceMsg>, want: &str) -> Vec<String> {
    let mut ids = Vec::new();
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("a batch in time")
            .expect("the source is open");
        if let SourceMsg::Batch(b) = msg {
            for d in b {
                if let Decoded::Frame(f) = d
                    && let Some(id) = f.invocation_id()
                {
                    ids.push(id.to_owned());
                }
            }
            if ids.iter().any(|i| i == want) {
                return ids;
            }
        }
    }
}

/// Writes the first `cut` lines of `fixture`, expects `want` before EOF, then the rest.
async fn live(name: &str, cut: usize, want: &str, later: &str) {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (mut w, r) = tokio::io::duplex(64 * 1024);
    let (tx, mut rx) = mpsc::channel(64);
    let task = tokio::spawn(async move { stdin::run(r, &tx).await });
    let head = lines[..cut].join("\n") + "\n";
    w.write_all(head.as_bytes()).await.unwrap();
    let ids = ids_until(&mut rx, want).await;
    assert!(!ids.iter().any(|i| i == later), "{later} came too early");
    let tail = lines[cut..].join("\n") + "\n";
    w.write_all(tail.as_bytes()).await.unwrap();
    drop(w);
    let ids = ids_until(&mut rx, later).await;
    assert!(ids.iter().any(|i| i == later));
    task.await.unwrap();
}

#[tokio::test]
async fn streams_are_read_live_from_stdin() {
    // SSE: up to the end of the web search block (its content_block_stop and the blank line).
    let sse = std::fs::read_to_string(fixture("anthropic_stream_web_search.sse")).unwrap();
    let cut = sse
        .lines()
        .position(|l| l.contains(r#""type":"content_block_stop","index":1"#))
        .unwrap()
        + 2;
    live(
        "anthropic_stream_web_search.sse",
        cut,
        "srvtoolu_sse_ws",
        "toolu_sse_weather",
    )
    .await;
    live(
        "anthropic_events_programmatic.chunks.txt",
        7,
        "srvtoolu_ev_code",
        "toolu_ev_roll",
    )
    .await;
}

#[test]
fn text_editor_results_are_file_content_and_diffs_with_a_category_from_the_tool_type() {
    let (s, _) = load(&fixture("anthropic_text_editor.json"));
    assert_eq!(s.counts.malformed, 0);
    let cat = s.catalog().unwrap();
    let editor = cat
        .tools
        .iter()
        .find(|t| t.name == "str_replace_based_edit_tool")
        .unwrap();
    assert_eq!(editor.category, Some(rawpv::protocol::Category::Filesystem));
    let ot = |id: &str| {
        let r = s.invocation(id).unwrap().result.clone().unwrap();
        (r.output_type.unwrap(), r.output.unwrap())
    };
    let (t, v) = ot("toolu_view");
    assert_eq!(t, OutputType::FileContent);
    assert_eq!(v["file_path"], "src/main.rs");
    assert!(v["content"].as_str().unwrap().contains("fn main"));
    let (t, v) = ot("toolu_create");
    assert_eq!(t, OutputType::Diff);
    assert_eq!(v["type"], "create");
    assert_eq!(v["content"], "hello\n");
    let (t, v) = ot("toolu_replace");
    assert_eq!(t, OutputType::Diff);
    assert_eq!(v["old_string"], "println!(\"hi\")");
    assert_eq!(v["new_string"], "println!(\"hello\")");
    let (t, v) = ot("srvtoolu_te_view");
    assert_eq!(t, OutputType::FileContent);
    assert_eq!(v["num_lines"], 2);
    let (t, v) = ot("srvtoolu_te_replace");
    assert_eq!(t, OutputType::Diff);
    assert_eq!(v["structured_patch"][0]["old_start"], 1);
    // No conformance finding about the chosen output types.
    assert!(
        !s.findings.iter().any(|f| f.code == "output-type-mismatch"),
        "{:?}",
        s.findings
    );
}

#[test]
fn a_document_in_a_tool_result_is_shown_by_its_media_type() {
    let Some(dir) = corpus::dir("anthropic-api") else {
        return;
    };
    let (s, _) = load(&dir.join("pai-tool-result-document-block.yaml"));
    let r = s.invocations[0].result.as_ref().unwrap();
    let out = r.output.as_ref().unwrap();
    assert_eq!(out["kind"], "document");
    assert_eq!(out["media_type"], "application/pdf");
    assert_eq!(out["uri"], "https://pdfobject.com/pdf/sample.pdf");
    let mut buf = Vec::new();
    rawpv::cmd::print::write_detail(&mut buf, &s, 100, false).unwrap();
    let text = String::from_utf8(buf).unwrap();
    assert!(text.contains("media type application/pdf"), "{text}");
    assert!(!text.contains("\"source\""), "{text}");
}

#[test]
fn a_stream_error_event_is_an_api_error() {
    let sse = b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_e\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":0}}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let items = rawpv::import::anthropic_stream::decode_bytes(
        sse,
        rawpv::import::anthropic_stream::Framing::Sse,
    );
    let s = Session::from_decoded(items);
    let api: Vec<_> = s
        .findings
        .iter()
        .filter(|f| f.code == code::API_ERROR)
        .collect();
    assert_eq!(api.len(), 1, "{:?}", s.findings);
    assert_eq!(api[0].level, Level::Warning);
    assert_eq!(api[0].line, 5);
    assert!(api[0].message.contains("overloaded_error: Overloaded"));
    let errors = s
        .items
        .iter()
        .filter(|i| matches!(i, Item::Event(f) if f.frame_type == FrameType::SessionError))
        .count();
    assert_eq!(errors, 1);
    // The cut message is reported too.
    assert!(
        s.findings
            .iter()
            .any(|f| f.message.contains("message_stop"))
    );
}
