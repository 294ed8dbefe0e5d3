//! Anthropic Messages API inputs → frames → session (SPEC 5): the shared corpus recordings and
//! small fixtures for the pairing rules, server tools and input shapes.
//!
//! Corpus counts were checked against the raw files with python (json / yaml + an SSE pass).
//! Corpus tests skip (with a message) when `../shared/corpus` is absent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use rawpv::finding::code;
use rawpv::import::{self, Decoded, Format};
use rawpv::protocol::{FrameType, OutputType};
use rawpv::session::{CallStatus, Item, MessageKind, Session};
use serde_json::{Value, json};

fn corpus(rel: &str) -> Option<PathBuf> {
    let p = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/anthropic-api"
    ))
    .join(rel);
    (!crate::support::corpus::skipped(&p)).then_some(p)
}

fn fixture(name: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures")).join(name)
}

fn load(path: &Path) -> Session {
    let loaded = import::load_path(path).unwrap();
    assert_eq!(loaded.format, Format::Anthropic, "{}", path.display());
    Session::from_decoded(loaded.items)
}

fn findings(s: &Session, c: &str) -> usize {
    s.findings.iter().filter(|f| f.code == c).count()
}

fn events(s: &Session, t: &FrameType) -> Vec<Value> {
    s.items
        .iter()
        .filter_map(|i| match i {
            Item::Event(f) if &f.frame_type == t => Some(f.payload_json()),
            _ => None,
        })
        .collect()
}

#[test]
fn sdk_toolrunner_is_error() {
    let Some(p) = corpus("sdkpy-toolrunner-is-error.json") else {
        return;
    };
    let s = load(&p);
    assert_eq!(s.counts.malformed, 0);
    assert_eq!(s.counts.invocations, 1);
    assert_eq!(s.counts.failed, 1);
    let inv = &s.invocations[0];
    assert_eq!(inv.invocation_id, "toolu_01A9HHF5Ezy3oBrKmSgfASm9");
    assert_eq!(inv.tool_name, "get_weather");
    assert_eq!(inv.status, CallStatus::Failed);
    let r = inv.result.as_ref().unwrap();
    assert_eq!(
        r.output,
        Some(json!("RuntimeError('Unexpected error, try again')"))
    );
    // `caller` is kept on the request.
    assert_eq!(inv.input["location"], "San Francisco, CA");
    // Two responses: two usage frames; the second ends the turn.
    assert_eq!(events(&s, &FrameType::SessionUsage).len(), 2);
    let ends = events(&s, &FrameType::SessionTurnEnd);
    assert_eq!(ends, vec![json!({"stop_reason": "end_turn"})]);
    // The request's tools are the catalog (not derived).
    assert_eq!(s.publishes.len(), 1);
    assert!(!s.publishes[0].derived);
    assert_eq!(s.catalog().unwrap().tools[0].name, "get_weather");
    // History repeated by the second request is not repeated: 1 prompt, 1 reply.
    let prompts = s
        .items
        .iter()
        .filter(|i| matches!(i, Item::Message(m) if m.kind == MessageKind::Prompt))
        .count();
    assert_eq!(prompts, 1);
    assert_eq!(findings(&s, code::TOOL_USE_WITHOUT_RESULT), 0);
    assert_eq!(findings(&s, code::TOOL_RESULT_WITHOUT_USE), 0);
}

#[test]
fn sdk_server_and_client_tools() {
    let Some(p) = corpus("sdkpy-server-and-client-tools.json") else {
        return;
    };
    let s = load(&p);
    assert_eq!(s.counts.malformed, 0);
    assert_eq!(s.counts.invocations, 3);
    assert_eq!(s.counts.failed, 0);
    let server = s.invocation("srvtoolu_017SzB73BSitzNFo1Xb3bq7S").unwrap();
    assert_eq!(server.tool_name, "code_execution");
    assert!(
        server.status.is_open(),
        "its result is not in the recording"
    );
    // tool_result without is_error → success.
    let first = s.invocation("toolu_011MDRpaZRMRRjtFkJizD6nS").unwrap();
    assert_eq!(first.status, CallStatus::Succeeded);
    // The client tool called from inside code execution nests under it.
    let nested = s.invocation("toolu_01RXQDRjwv5Un7n98xFahjo8").unwrap();
    let parent = nested.parent.unwrap();
    assert_eq!(
        s.invocations[parent].invocation_id,
        "srvtoolu_017SzB73BSitzNFo1Xb3bq7S"
    );
    // The recording ends with an unanswered call; the server call never got its result.
    assert_eq!(findings(&s, code::TOOL_USE_WITHOUT_RESULT), 2);
    // The server tool is in the catalog although the request did not list it.
    assert!(
        s.catalog()
            .unwrap()
            .tools
            .iter()
            .any(|t| t.name == "code_execution")
    );
}

#[test]
fn pydantic_cassette_with_sse_and_mcp() {
    let Some(p) = corpus("pydantic-ai-mcp-servers-stream.yaml") else {
        return;
    };
    let s = load(&p);
    assert_eq!(s.counts.malformed, 0);
    assert_eq!(s.counts.invocations, 1);
    let inv = &s.invocations[0];
    assert_eq!(inv.invocation_id, "mcptoolu_01FZmJ5UspaX5BB9uU339UT1");
    assert_eq!(inv.tool_name, "mcp__deepwiki__ask_question");
    // input_json_delta pieces joined, then parsed.
    assert_eq!(inv.input["repoName"], "pydantic/pydantic-ai");
    assert_eq!(inv.status, CallStatus::Succeeded);
    let out = inv.result.as_ref().unwrap().output.clone().unwrap();
    assert!(
        out.as_str()
            .unwrap()
            .starts_with("This repository, `pydantic/pydantic-ai`")
    );
    let thinking: Vec<_> = s
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Message(m) if m.kind == MessageKind::Thinking => Some(m.text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking.len(), 1);
    assert!(thinking[0].starts_with("The user is asking about the pydantic/pydantic-ai"));
    let usage = events(&s, &FrameType::SessionUsage);
    assert_eq!(usage.len(), 1);
    assert_eq!(usage[0]["output_tokens"], 354);
    assert_eq!(usage[0]["input_tokens"], 3042);
    assert_eq!(
        events(&s, &FrameType::SessionTurnEnd),
        vec![json!({"stop_reason": "end_turn"})]
    );
    assert!(s.findings.is_empty(), "{:?}", s.findings);
}

#[test]
fn pairing_violations_are_findings() {
    let s = load(&fixture("anthropic_request_pairing_violations.json"));
    assert_eq!(s.counts.invocations, 3);
    assert_eq!(s.counts.failed, 1, "is_error on Read");
    assert_eq!(
        s.invocation("toolu_read")
            .unwrap()
            .result
            .as_ref()
            .unwrap()
            .output,
        Some(json!("ENOENT: notes.txt"))
    );
    assert_eq!(findings(&s, code::TEXT_BEFORE_TOOL_RESULT), 1);
    // toolu_oslo: not answered in the next message, which answers toolu_paris of the same
    // turn (B20: that reply is incomplete), answered two messages later: one finding, the
    // unanswered use's; the late result is not reported again.
    assert_eq!(findings(&s, code::TOOL_USE_WITHOUT_RESULT), 1);
    assert_eq!(findings(&s, code::TOOL_RESULT_NOT_NEXT), 0);
    assert_eq!(
        s.invocation("toolu_oslo").unwrap().status,
        CallStatus::Succeeded
    );
    assert_eq!(
        findings(&s, code::TOOL_RESULT_WITHOUT_USE),
        1,
        "toolu_ghost"
    );
    // One finding per problem: the importer's; the reducer keeps the result as a row.
    assert_eq!(findings(&s, code::RESULT_WITHOUT_REQUEST), 0);
    assert!(
        s.items.iter().any(|i| matches!(i, Item::Event(f)
            if f.frame_type == FrameType::ToolInvokeResult
                && f.invocation_id() == Some("toolu_ghost"))),
        "the ghost result is a row"
    );
    assert_eq!(s.catalog().unwrap().tools.len(), 2);
    let read = s.invocation("toolu_read").unwrap();
    assert_eq!(
        read.result.as_ref().unwrap().output_type,
        Some(OutputType::FileContent)
    );
}

#[test]
fn response_with_server_web_search() {
    let s = load(&fixture("anthropic_response_web_search.json"));
    assert_eq!(s.counts.invocations, 2);
    let ok = s.invocation("srvtoolu_ws1").unwrap();
    let r = ok.result.as_ref().unwrap();
    assert_eq!(r.output_type, Some(OutputType::WebContent));
    let results = r.output.as_ref().unwrap()["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["url"], "https://ratatui.rs");
    assert!(results[0].get("encrypted_content").is_none());
    let err = s.invocation("srvtoolu_ws2").unwrap();
    assert_eq!(err.status, CallStatus::Failed);
    assert_eq!(
        err.result.as_ref().unwrap().output,
        Some(json!("error: max_uses_exceeded"))
    );
    assert!(s.publishes[0].derived);
    assert_eq!(events(&s, &FrameType::SessionTurnEnd).len(), 1);
    assert_eq!(findings(&s, code::TOOL_USE_WITHOUT_RESULT), 0);
}

#[test]
fn jsonl_of_messages() {
    let s = load(&fixture("anthropic_messages.jsonl"));
    assert_eq!(s.counts.invocations, 1);
    let inv = &s.invocations[0];
    assert_eq!(inv.tool_name, "Glob");
    assert_eq!(inv.status, CallStatus::Succeeded);
    assert_eq!(
        inv.result.as_ref().unwrap().output_type,
        Some(OutputType::FileList)
    );
    assert!(s.findings.is_empty(), "{:?}", s.findings);
}

#[test]
fn broken_cassette_is_a_clear_message() {
    let bytes = b"interactions:\n- request: [unclosed\n  response: {\n";
    let loaded = import::load_bytes(bytes);
    assert_eq!(loaded.format, Format::Anthropic);
    let Decoded::Malformed(e) = &loaded.items[0] else {
        panic!("{:?}", loaded.items)
    };
    assert!(e.to_string().contains("YAML cassette"), "{e}");
}

#[test]
fn detection_of_single_bodies_and_lists() {
    let req = br#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#;
    assert_eq!(import::detect(req), Format::Anthropic);
    let pretty = b"{\n  \"id\": \"msg_1\",\n  \"type\": \"message\",\n  \"role\": \"assistant\",\n  \"content\": [],\n  \"stop_reason\": \"end_turn\"\n}\n";
    assert_eq!(import::detect(pretty), Format::Anthropic);
    let list = br#"[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]"#;
    assert_eq!(import::detect(list), Format::Anthropic);
    let frames = br#"[{"type":"agent.text.done","payload":{"text":"x"}}]"#;
    assert_eq!(import::detect(frames), Format::RawpJsonArray);
    let ndjson = br#"{"type":"tool.invoke.request","payload":{"invocation_id":"a"}}"#;
    assert_eq!(import::detect(ndjson), Format::RawpNdjson);
}

#[test]
fn a_yaml_bomb_is_called_what_it_is() {
    // Issue 14.17: the alias-expansion bomb was reported as "not valid JSON".
    let out = assert_cmd::Command::cargo_bin("rawpv")
        .unwrap()
        .args([
            "check",
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/hostile_yaml_bomb.yaml"
            ),
        ])
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "not a readable YAML cassette: repetition limit exceeded (its aliases expand \
             without bound: a \"billion laughs\" YAML bomb)"
        ),
        "{text}"
    );
    assert!(!text.contains("not valid JSON"), "{text}");
}

#[test]
fn deeply_nested_yaml_is_refused_at_once() {
    // Second attack of issue 14: `interactions: [[[[…]]]]` took time quadratic in the depth
    // (100,000 levels, 200 KB: 22 s) before the YAML reader's recursion limit answered.
    let text = format!(
        "interactions: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let items = import::load_bytes(text.as_bytes()).items;
    let [Decoded::Malformed(e)] = items.as_slice() else {
        panic!("{items:?}");
    };
    assert_eq!(e.line, 1);
    assert!(
        e.to_string()
            .contains("collections nested deeper than 128 levels; not read"),
        "{e}"
    );
    // Block sequences opened on one line count too (4M `- ` took 1.8 GB).
    for run in ["- ", "? ", "- ? "] {
        let block = format!("interactions:\n{}x\n", run.repeat(200_000));
        let items = import::load_bytes(block.as_bytes()).items;
        assert!(
            matches!(items.as_slice(), [Decoded::Malformed(e)] if e.line == 2),
            "{run:?}: {items:?}"
        );
    }
    // Brackets inside quoted scalars and comments do not count.
    let quoted = format!(
        "interactions:\n- a: \"{}\"\n  b: '{}' # {}\n",
        "[".repeat(500),
        "{".repeat(500),
        "[".repeat(500)
    );
    let items = import::load_bytes(quoted.as_bytes()).items;
    assert!(
        !items.iter().any(|d| matches!(d, Decoded::Malformed(_))),
        "{items:?}"
    );
}
