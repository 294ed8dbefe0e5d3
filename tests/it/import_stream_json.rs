//! Claude Code stream-json (`claude -p --output-format stream-json`) → frames → session:
//! the init catalog with MCP diagnostics, subagent nesting by `parent_tool_use_id`, the final
//! `result` record.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use rawpv::import::{self, Format};
use rawpv::protocol::{FrameType, Severity, ToolStatus};
use rawpv::session::{CallStatus, Item, MessageKind, Session};

fn load() -> Session {
    let p = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/cc_stream_json_init_mcp_task.jsonl"
    ));
    let loaded = import::load_path(p).unwrap();
    assert_eq!(loaded.format, Format::ClaudeStreamJson);
    Session::from_decoded(loaded.items)
}

#[test]
fn init_becomes_the_catalog_with_mcp_diagnostics() {
    let s = load();
    assert_eq!(
        s.publishes.len(),
        1,
        "no derived catalog next to the real one"
    );
    let c = s.catalog().unwrap();
    assert_eq!(c.tools.len(), 6);
    assert!(!s.publishes[0].derived);
    let jira = c
        .tools
        .iter()
        .find(|t| t.name == "mcp__jira__search")
        .unwrap();
    assert_eq!(jira.status, Some(ToolStatus::Unavailable));
    let gh = c
        .tools
        .iter()
        .find(|t| t.name == "mcp__github__get_issue")
        .unwrap();
    assert_eq!(gh.status, None);
    assert_eq!(c.diagnostics.len(), 1);
    assert_eq!(c.diagnostics[0].severity, Some(Severity::Error));
    assert_eq!(c.diagnostics[0].code.as_deref(), Some("MCP_SERVER_FAILED"));
}

#[test]
fn messages_subagents_and_result() {
    let s = load();
    assert_eq!(s.counts.malformed, 0);
    assert_eq!(s.counts.invocations, 3);
    assert_eq!(s.counts.failed, 1);
    let bash = s.invocation("toolu_bash1").unwrap();
    let parent = bash.parent.unwrap();
    assert_eq!(s.invocations[parent].invocation_id, "toolu_task1");
    assert_eq!(
        bash.result.as_ref().unwrap().output.as_ref().unwrap()["stdout"],
        "a.rs\nb.rs"
    );
    assert_eq!(
        s.invocation("toolu_read1").unwrap().status,
        CallStatus::Failed
    );
    assert_eq!(
        s.invocation("toolu_task1").unwrap().status,
        CallStatus::Succeeded
    );
    // The subagent's prompt is a prompt in the subagent's chain.
    let sub_prompt = s.items.iter().any(|i| {
        matches!(i, Item::Message(m) if m.kind == MessageKind::Prompt && !m.delegation_chain.is_empty())
    });
    assert!(sub_prompt);
    let usage: Vec<_> = s
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Event(f) if f.frame_type == FrameType::SessionUsage => Some(f.payload_json()),
            _ => None,
        })
        .collect();
    // One per API message (msg_01 counted once although it spans two records) + the total.
    assert_eq!(usage.len(), 5);
    let per_message: u64 = usage
        .iter()
        .filter(|u| u.get("scope").is_none())
        .map(|u| u["output_tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(per_message, 40 + 7 + 9 + 8);
    let total = usage
        .iter()
        .find(|u| u["scope"] == "session_total")
        .unwrap();
    assert_eq!(total["total_cost_usd"], 0.0123);
    // The total is shown, not added: the session's tokens are the messages' (attack 5: doubled).
    let mut tokens = rawpv::session::query::Tokens::default();
    for i in 0..s.items.len() {
        tokens.add(&s, i);
    }
    assert_eq!(
        (tokens.output, tokens.rows),
        (40 + 7 + 9 + 8, 4),
        "{tokens:?}"
    );
    let ends = s
        .items
        .iter()
        .filter(|i| matches!(i, Item::Event(f) if f.frame_type == FrameType::SessionTurnEnd))
        .count();
    assert_eq!(ends, 2, "msg_04 end_turn and the result record");
    assert!(s.findings.is_empty(), "{:?}", s.findings);
}
