//! Claude Code transcripts of the shared corpus → frames → session: counts pinned per file.
//!
//! The expected numbers were counted by hand from each raw file and checked again with a
//! python/jq pass over the raw JSONL (unique `tool_use` ids, `is_error: true` results, rejection
//! texts, `compact_boundary` records, usage of the last record of each `message.id`).
//! Every test skips (with a message) when `../shared/corpus` is absent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rawpv::import::{self, Decoded, Format};
use rawpv::protocol::{FrameType, OutputType, ResultStatus};
use rawpv::session::{CallStatus, Item, Session};
use serde_json::Value;

fn corpus(rel: &str) -> Option<PathBuf> {
    let p = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/claude-code"
    ))
    .join(rel);
    (!crate::support::corpus::skipped(&p)).then_some(p)
}

/// What a corpus file must produce.
#[derive(Debug, Default, Clone, Copy)]
struct Expect {
    invocations: u64,
    /// Results with status `error` (`is_error: true` minus rejections).
    failed: u64,
    /// User rejections / interrupts (`is_error: true` with the rejection text).
    cancelled: u64,
    /// Invocations made by a subagent (non-empty delegation chain), all with a Task/Agent parent.
    subagent: usize,
    compactions: usize,
    /// `tool_use` calls with no `tool_result` in the file.
    unanswered: usize,
    /// Sum over API messages (`message.id`) of the last record's usage.
    input_tokens: u64,
    output_tokens: u64,
}

struct Loaded {
    session: Session,
    items: Vec<Decoded>,
}

fn load(path: &Path) -> Loaded {
    let loaded = import::load_path(path).expect("readable");
    assert_eq!(loaded.format, Format::ClaudeCode, "{}", path.display());
    let items = loaded.items.clone();
    Loaded {
        session: Session::from_decoded(loaded.items),
        items,
    }
}

/// Raw scan of a JSONL file: `tool_use` ids, and the `is_error: true` result ids (with whether the
/// text is a rejection). Includes messages embedded in `agent_progress` records.
fn raw_ids(paths: &[&Path]) -> (HashSet<String>, Vec<(String, bool)>) {
    let mut uses = HashSet::new();
    let mut errors = Vec::new();
    for p in paths {
        let text = std::fs::read_to_string(p).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: Value = serde_json::from_str(line).unwrap();
            let msgs = [
                v.pointer("/message/content"),
                v.pointer("/data/message/message/content"),
            ];
            for content in msgs.into_iter().flatten() {
                for b in content.as_array().into_iter().flatten() {
                    match b["type"].as_str() {
                        Some("tool_use") => {
                            uses.insert(b["id"].as_str().unwrap().to_owned());
                        }
                        Some("tool_result") if b["is_error"] == Value::Bool(true) => {
                            let t = match &b["content"] {
                                Value::String(s) => s.clone(),
                                other => other.to_string(),
                            };
                            let rejected = t.contains("doesn't want to proceed with this tool use")
                                || t.contains("[Request interrupted by user");
                            errors.push((b["tool_use_id"].as_str().unwrap().to_owned(), rejected));
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    (uses, errors)
}

fn check(rel: &str, extra: &[&str], e: Expect) -> Option<Session> {
    let path = corpus(rel)?;
    let started = Instant::now();
    let Loaded { session: s, items } = load(&path);
    let elapsed = started.elapsed();
    eprintln!("{rel}: load + fold {elapsed:?}");

    assert_eq!(s.counts.malformed, 0, "malformed lines");
    assert_eq!(s.counts.invocations, e.invocations, "invocations");
    assert_eq!(s.counts.failed, e.failed, "failed");
    assert_eq!(s.counts.cancelled, e.cancelled, "cancelled");

    // Every tool_use is a request; every is_error result is error (or cancelled for rejections).
    let mut paths = vec![path.clone()];
    paths.extend(extra.iter().map(|x| corpus(x).unwrap()));
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let (uses, errors) = raw_ids(&refs);
    assert_eq!(uses.len() as u64, e.invocations, "raw tool_use ids");
    for id in &uses {
        assert!(
            s.invocation(id).is_some(),
            "tool_use {id} has no invocation"
        );
    }
    for (id, rejected) in &errors {
        let inv = s.invocation(id).expect("errored call requested");
        let want = if *rejected {
            CallStatus::Cancelled
        } else {
            CallStatus::Failed
        };
        assert_eq!(inv.status, want, "status of {id}");
    }

    // Subagents: nested under their Task/Agent call.
    let subs: Vec<_> = s
        .invocations
        .iter()
        .filter(|i| !i.delegation_chain.is_empty())
        .collect();
    assert_eq!(subs.len(), e.subagent, "subagent invocations");
    for inv in &subs {
        let p = inv.parent.expect("subagent invocation has a parent");
        let parent = &s.invocations[p];
        assert!(matches!(parent.tool_name.as_str(), "Task" | "Agent"));
        assert_eq!(
            inv.delegation_chain.last().unwrap().invocation_id,
            parent.invocation_id
        );
        assert!(
            parent
                .children
                .contains(&s.invocation_index(&inv.invocation_id).unwrap())
        );
    }

    // Compactions, usage, findings.
    let events = || {
        s.items.iter().filter_map(|i| match i {
            Item::Event(f) => Some(f),
            Item::Invocation(_) | Item::Message(_) => None,
        })
    };
    let compactions = events()
        .filter(|f| f.frame_type == FrameType::SessionCompacted)
        .count();
    assert_eq!(compactions, e.compactions, "compactions");
    let (mut input, mut output) = (0, 0);
    for f in events().filter(|f| f.frame_type == FrameType::SessionUsage) {
        let p = f.payload_json();
        input += p["input_tokens"].as_u64().unwrap_or(0);
        output += p["output_tokens"].as_u64().unwrap_or(0);
    }
    assert_eq!((input, output), (e.input_tokens, e.output_tokens), "usage");
    let unanswered = s
        .findings
        .iter()
        .filter(|f| f.code == rawpv::finding::code::TOOL_USE_WITHOUT_RESULT)
        .count();
    assert_eq!(unanswered, e.unanswered, "unanswered tool uses");
    assert!(
        !s.findings
            .iter()
            .any(|f| f.code == rawpv::finding::code::TOOL_RESULT_WITHOUT_USE)
    );

    // Envelope: a derived catalog before the first call; every frame has a timestamp and a
    // rising seq.
    let frames: Vec<_> = items
        .iter()
        .filter_map(|d| match d {
            Decoded::Frame(f) => Some(f),
            Decoded::Malformed(_) | Decoded::Finding(_) => None,
        })
        .collect();
    let first_catalog = frames
        .iter()
        .position(|f| f.frame_type == FrameType::ToolCatalogPublish)
        .unwrap();
    let first_call = frames
        .iter()
        .position(|f| f.frame_type == FrameType::ToolInvokeRequest)
        .unwrap();
    assert!(first_catalog < first_call);
    assert_eq!(
        frames[first_catalog].envelope.metadata["rawpv_derived"],
        Value::Bool(true)
    );
    let catalog = s.catalog().unwrap();
    for inv in &s.invocations {
        assert!(catalog.tools.iter().any(|t| t.name == inv.tool_name));
    }
    let mut last_seq = 0;
    for f in &frames {
        assert!(
            f.envelope.timestamp.is_some(),
            "{:?} has no timestamp",
            f.frame_type
        );
        let seq = f.envelope.seq.unwrap();
        assert!(seq > last_seq);
        last_seq = seq;
        if let FrameType::Unknown(t) = &f.frame_type {
            assert!(t.starts_with("x-claude-code."), "{t}");
        }
    }
    assert!(
        !s.findings
            .iter()
            .any(|f| f.code == rawpv::finding::code::UNKNOWN_FRAME_TYPE)
    );
    // No invocation stays open apart from the unanswered ones.
    let open = s.invocations.iter().filter(|i| i.status.is_open()).count();
    assert_eq!(open, e.unanswered);
    Some(s)
}

#[test]
fn v1_0_24_summaries_thinking() {
    let Some(s) = check(
        "cc-v1.0.24-summaries-thinking.jsonl",
        &[],
        Expect {
            invocations: 32,
            failed: 6,
            input_tokens: 279,
            output_tokens: 2201,
            ..Expect::default()
        },
    ) else {
        return;
    };
    // 15 summaries kept as extension rows; 20 thinking blocks.
    let ext = |name: &str| {
        s.items
            .iter()
            .filter(|i| matches!(i, Item::Event(f) if f.frame_type.as_str() == name))
            .count()
    };
    assert_eq!(ext("x-claude-code.summary"), 15);
    let thinking = s
        .items
        .iter()
        .filter(
            |i| matches!(i, Item::Message(m) if m.kind == rawpv::session::MessageKind::Thinking),
        )
        .count();
    assert_eq!(thinking, 20);
    // LS (a tool that no longer exists) is still a filesystem call.
    let ls = s.invocations.iter().find(|i| i.tool_name == "LS").unwrap();
    assert_eq!(ls.status, CallStatus::Succeeded);
    // TodoWrite {oldTodos,newTodos} → structured {old_todos,new_todos}.
    let todo = s
        .invocations
        .iter()
        .find(|i| i.tool_name == "TodoWrite")
        .unwrap();
    let r = todo.result.as_ref().unwrap();
    assert_eq!(r.output_type, Some(OutputType::Structured));
    assert!(r.output.as_ref().unwrap().get("new_todos").is_some());
}

#[test]
fn v1_0_43_image_hooks_multiedit() {
    let Some(s) = check(
        "cc-v1.0.43-image-hooks-multiedit.jsonl",
        &[],
        Expect {
            invocations: 14,
            cancelled: 3,
            input_tokens: 138,
            output_tokens: 5057,
            ..Expect::default()
        },
    ) else {
        return;
    };
    let count = |name: &str| {
        s.items
            .iter()
            .filter(|i| matches!(i, Item::Event(f) if f.frame_type.as_str() == name))
            .count()
    };
    // Issue 20: the 8 hook records are hook rows, 4 of them (2 starts, 2 results) tied to
    // their MultiEdit call, 4 `Stop` hooks on their own.
    assert_eq!(
        count("x-claude-code.system"),
        0,
        "hook records are no system rows"
    );
    assert_eq!(count("x-claude-code.hook"), 8, "hook records");
    let tied = s
        .invocations
        .iter()
        .map(|i| (i.tool_name.as_str(), s.hooks.of(&i.invocation_id).count()))
        .filter(|(_, n)| *n > 0)
        .collect::<Vec<_>>();
    assert_eq!(tied, [("MultiEdit", 1), ("MultiEdit", 1)]);
    assert_eq!(count("x-claude-code.image"), 1, "pasted image");
    // 3 rejections, each followed by an interrupt marker record.
    assert_eq!(count("x-claude-code.interrupt"), 3);
    let multi = s
        .invocations
        .iter()
        .find(|i| i.tool_name == "MultiEdit" && i.status == CallStatus::Succeeded)
        .unwrap();
    let out = multi.result.as_ref().unwrap().output.as_ref().unwrap();
    assert!(out["edits"].is_array());
    assert!(out["structured_patch"].is_array());
}

#[test]
fn v1_0_108_inline_sidechain_task() {
    let Some(s) = check(
        "cc-v1.0.108-inline-sidechain-task.jsonl",
        &[],
        Expect {
            invocations: 21,
            failed: 3,
            subagent: 8,
            input_tokens: 129,
            output_tokens: 3629,
            ..Expect::default()
        },
    ) else {
        return;
    };
    // Two runs, matched to their Task calls by prompt: 2 calls (…NJ7gjC) and 6 calls (…QcJH44).
    let kids = |suffix: &str| {
        let t = s
            .invocations
            .iter()
            .find(|i| i.invocation_id.ends_with(suffix))
            .unwrap();
        t.children.len()
    };
    assert_eq!(kids("NJ7gjC"), 2);
    assert_eq!(kids("QcJH44"), 6);
    assert_eq!(
        kids("HGQife"),
        0,
        "the Task that failed validation started no agent"
    );
    let task = s
        .invocations
        .iter()
        .find(|i| i.invocation_id.ends_with("QcJH44"))
        .unwrap();
    let r = task.result.as_ref().unwrap();
    assert_eq!(r.output_type, Some(OutputType::AgentResult));
    assert!(r.output.as_ref().unwrap()["total_tokens"].is_number());
}

#[test]
fn v2_0_37_planmode_askuser_bashoutput() {
    let Some(s) = check(
        "cc-v2.0.37-planmode-askuser-bashoutput.jsonl",
        &[],
        Expect {
            invocations: 76,
            failed: 5,
            cancelled: 2,
            input_tokens: 735,
            output_tokens: 23714,
            ..Expect::default()
        },
    ) else {
        return;
    };
    // stop_reason is set on every record (8 records say end_turn), but those are 4 API
    // messages: one turn end each.
    let turn_ends = s
        .items
        .iter()
        .filter(|i| matches!(i, Item::Event(f) if f.frame_type == FrameType::SessionTurnEnd))
        .count();
    assert_eq!(turn_ends, 4);
    let queue = s
        .items
        .iter()
        .filter(|i| matches!(i, Item::Event(f) if f.frame_type.as_str() == "x-claude-code.queue-operation"))
        .count();
    assert_eq!(queue, 10);
    let bo = s
        .invocations
        .iter()
        .find(|i| i.tool_name == "BashOutput")
        .unwrap();
    let out = bo.result.as_ref().unwrap().output.as_ref().unwrap();
    assert!(out.get("stdout").is_some());
}

#[test]
fn v2_0_55_deep_manifest_with_agent_file() {
    let Some(s) = check(
        "cc-v2.0.55-deep-manifest/a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl",
        &["cc-v2.0.55-deep-manifest/agent-c8d9b115.jsonl"],
        Expect {
            invocations: 123,
            failed: 4,
            cancelled: 1,
            subagent: 15,
            input_tokens: 3119,
            output_tokens: 32270,
            ..Expect::default()
        },
    ) else {
        return;
    };
    let sub = s
        .invocations
        .iter()
        .find(|i| !i.delegation_chain.is_empty())
        .unwrap();
    assert_eq!(sub.delegation_chain[0].agent_id, "c8d9b115");
    let meta = &sub
        .request_envelope
        .as_ref()
        .expect("kept envelope")
        .metadata["claude_code"];
    assert_eq!(meta["file"], "agent-c8d9b115.jsonl");
    let snaps = s
        .items
        .iter()
        .filter(|i| matches!(i, Item::Event(f) if f.frame_type.as_str() == "x-claude-code.file-history-snapshot"))
        .count();
    assert_eq!(snaps, 15);
}

#[test]
fn v2_1_17_bash_errors() {
    let Some(s) = check(
        "cc-v2.1.17-bash-errors.jsonl",
        &[],
        Expect {
            invocations: 9,
            failed: 6,
            input_tokens: 2,
            output_tokens: 180,
            ..Expect::default()
        },
    ) else {
        return;
    };
    // The string toolUseResult has an `Error: ` prefix; the output is the tool_result text.
    let ws = s
        .invocations
        .iter()
        .find(|i| i.tool_name == "WebSearch")
        .unwrap();
    let out = ws.result.as_ref().unwrap().output.as_ref().unwrap();
    assert!(
        out.as_str()
            .unwrap()
            .starts_with("Claude requested permissions")
    );
    assert_eq!(
        ws.result.as_ref().unwrap().status,
        Some(ResultStatus::Error)
    );
}

#[test]
fn v2_1_38_task_subagent_progress() {
    let Some(s) = check(
        "cc-v2.1.38-task-subagent-progress.jsonl",
        &[],
        Expect {
            invocations: 25,
            failed: 3,
            subagent: 9,
            input_tokens: 1600,
            output_tokens: 1593,
            ..Expect::default()
        },
    ) else {
        return;
    };
    let task = s
        .invocations
        .iter()
        .find(|i| i.tool_name == "Task")
        .unwrap();
    assert_eq!(task.children.len(), 9);
    let write = s
        .invocations
        .iter()
        .find(|i| i.tool_name == "Write")
        .unwrap();
    let out = write.result.as_ref().unwrap().output.as_ref().unwrap();
    assert_eq!(out["type"], "create");
    assert!(out.get("structured_patch").is_none(), "empty patch dropped");
}

#[test]
fn v2_1_38_tool_heavy_web() {
    let Some(s) = check(
        "cc-v2.1.38-tool-heavy-web.jsonl",
        &[],
        Expect {
            invocations: 6,
            input_tokens: 54,
            output_tokens: 212,
            ..Expect::default()
        },
    ) else {
        return;
    };
    let by = |n: &str| s.invocations.iter().find(|i| i.tool_name == n).unwrap();
    let ws = by("WebSearch").result.clone().unwrap();
    assert_eq!(ws.output_type, Some(OutputType::WebContent));
    let results = ws.output.as_ref().unwrap()["results"]
        .as_array()
        .unwrap()
        .clone();
    assert!(results.iter().any(Value::is_string) && results.iter().any(Value::is_object));
    let read = by("Read").result.clone().unwrap();
    assert_eq!(read.output_type, Some(OutputType::FileContent));
    let out = read.output.unwrap();
    assert!(out["file_path"].is_string() && out["start_line"].is_number());
    assert!(
        !out["content"].as_str().unwrap().contains('\u{2192}'),
        "content is unnumbered"
    );
    assert_eq!(
        by("Glob").result.clone().unwrap().output_type,
        Some(OutputType::FileList)
    );
    let wf = by("WebFetch").result.clone().unwrap();
    assert_eq!(wf.output.unwrap()["code"], 200);
}

#[test]
fn v2_1_39_compaction_excerpt() {
    let Some(s) = check(
        "cc-v2.1.39-compaction-A-excerpt.jsonl",
        &[],
        Expect {
            invocations: 110,
            failed: 3,
            compactions: 1,
            unanswered: 1,
            input_tokens: 119,
            output_tokens: 21419,
            ..Expect::default()
        },
    ) else {
        return;
    };
    let c = s
        .items
        .iter()
        .find_map(|i| match i {
            Item::Event(f) if f.frame_type == FrameType::SessionCompacted => Some(f.payload_json()),
            _ => None,
        })
        .unwrap();
    assert_eq!(c["trigger"], "auto");
    assert_eq!(c["pre_tokens"], 170_251);
    // The summary that follows the boundary is its own row, not a second compaction.
    let summary = s
        .items
        .iter()
        .filter(|i| matches!(i, Item::Event(f) if f.frame_type.as_str() == "x-claude-code.compact-summary"))
        .count();
    assert_eq!(summary, 1);
    // 737 progress records: the 137 bash_progress ones are progress chunks of their running Bash
    // call, the 599 hook_progress ones hook rows (tied to their call where they name one), and
    // the waiting_for_task one stays a row.
    let count = |kind: &str| {
        s.items
            .iter()
            .filter(|i| matches!(i, Item::Event(f) if f.frame_type.as_str() == kind))
            .count()
    };
    assert_eq!(count("x-claude-code.progress"), 1);
    assert_eq!(count("x-claude-code.hook"), 599);
    // The 4 whitespace-only text blocks ("\n\n" before a call) make no empty agent rows.
    assert!(!s.items.iter().any(|i| matches!(i,
        Item::Message(m) if m.kind == rawpv::session::MessageKind::AgentText && m.text.trim().is_empty())));
    let chunks: usize = s.invocations.iter().map(|i| i.stream.chunks().len()).sum();
    assert_eq!(chunks, 137);
    assert!(s.invocations.iter().all(|i| i.stream.gaps().is_empty()));
}

fn fixture(name: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures")).join(name)
}

#[test]
fn graph_order_duplicates_orphans_and_unknown_records() {
    use rawpv::finding::code;
    let Loaded { session: s, items } = load(&fixture("cc_graph_order_resumed.jsonl"));
    assert_eq!(s.counts.malformed, 0);
    // The result (file line 3) comes after its request (line 4): parent order, not file order.
    let first = s.invocation("toolu_first").unwrap();
    assert_eq!(first.status, CallStatus::Succeeded);
    assert_eq!(first.request_line, 4);
    assert_eq!(first.result_line, Some(3));
    assert_eq!(first.duration_ms(), Some(2500.0));
    assert_eq!(
        first.result.as_ref().unwrap().output,
        Some(serde_json::json!({"stdout": "one", "stderr": "", "interrupted": false}))
    );
    // The resumed copy of line 4 is skipped (one invocation, one info finding).
    assert_eq!(s.counts.invocations, 2);
    let count = |c: &str| s.findings.iter().filter(|f| f.code == c).count();
    assert_eq!(count(code::DUPLICATE_RECORD), 1);
    assert_eq!(count(code::TOOL_USE_WITHOUT_RESULT), 1, "toolu_second");
    assert_eq!(count(code::TOOL_RESULT_WITHOUT_USE), 1, "toolu_elsewhere");
    assert_eq!(count(code::UNRECOGNISED_RECORD), 1, "mystery-record");
    assert_eq!(count(code::DUPLICATE_INVOCATION_ID), 0);
    // Unknown records stay visible; the summary (no timestamp) gets the first one.
    let frames: Vec<_> = items
        .iter()
        .filter_map(|d| match d {
            Decoded::Frame(f) => Some(f),
            Decoded::Malformed(_) | Decoded::Finding(_) => None,
        })
        .collect();
    let types: Vec<&str> = frames.iter().map(|f| f.frame_type.as_str()).collect();
    assert_eq!(
        types,
        [
            "x-claude-code.summary",
            "control.prompt.request",
            // The derived catalog before the first call of each new tool.
            "tool.catalog.publish",
            "tool.invoke.request",
            "tool.invoke.result",
            // A message's usage goes out when its agent's next message (or prompt, or the end)
            // comes: its later records, with the final usage, may follow its first results.
            "session.usage",
            "tool.invoke.request",
            "tool.invoke.result",
            "x-claude-code.mystery-record",
            "session.usage",
        ]
    );
    assert_eq!(
        frames[0].envelope.timestamp,
        rawpv::protocol::Timestamp::parse_str("2026-01-01T10:00:00.000Z")
    );
    let meta = &frames[3].envelope.metadata["claude_code"];
    assert_eq!(meta["uuid"], "a0000000-0000-4000-8000-000000000002");
    assert_eq!(meta["parentUuid"], "a0000000-0000-4000-8000-000000000001");
}

#[test]
fn subagent_directory_layout_is_found_by_load_path() {
    let dir = fixture("cc_subagents_layout");
    let s = load(&dir.join("11111111-2222-4333-8444-555555555555.jsonl")).session;
    assert_eq!(s.counts.invocations, 2);
    let glob = s.invocation("toolu_sub_glob").unwrap();
    let parent = glob.parent.expect("nested under the Agent call");
    assert_eq!(s.invocations[parent].invocation_id, "toolu_agent");
    assert_eq!(glob.delegation_chain[0].agent_id, "a1b2c3d");
    assert_eq!(
        glob.request_envelope
            .as_ref()
            .expect("kept envelope")
            .metadata["claude_code"]["file"],
        "agent-a1b2c3d.jsonl"
    );
    // The Agent (renamed Task) result is an agent_result with the totals.
    let agent = &s.invocations[parent];
    let r = agent.result.as_ref().unwrap();
    assert_eq!(r.output_type, Some(OutputType::AgentResult));
    assert_eq!(r.output.as_ref().unwrap()["total_tool_use_count"], 1);
    assert_eq!(r.output.as_ref().unwrap()["description"], "Explore");
    // Subagent rows come before the Agent result row in the feed.
    let glob_item = glob.item;
    assert!(glob_item > agent.item);
    let turn_end = s
        .items
        .iter()
        .filter(|i| matches!(i, Item::Event(f) if f.frame_type == FrameType::SessionTurnEnd))
        .count();
    assert_eq!(turn_end, 1);
}

/// Live (line by line) decoding gives the same calls, statuses and parents as the whole-file
/// load for every corpus transcript (subagent files aside, which only `load_path` reads).
#[test]
fn live_decoding_matches_file_decoding_but_for_subagent_files() {
    let Some(dir) = corpus("") else {
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.push(dir.join("cc-v2.0.55-deep-manifest/a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl"));
    let mut only_in_files = 0;
    for path in files {
        // The file decode (its path known: subagent files beside it are read) against a live
        // one (stdin, a followed file's lines: no path, so no subagent files).
        let whole = Session::from_decoded(import::load_path(&path).unwrap().items);
        let bytes = std::fs::read(&path).unwrap();
        let mut dec = import::decoder_for(Format::ClaudeCode);
        let mut items = Vec::new();
        for (i, l) in String::from_utf8_lossy(&bytes).split('\n').enumerate() {
            dec.line(i as u64 + 1, l, &mut items);
        }
        dec.finish(&mut items);
        let live = Session::from_decoded(items);
        let name = path.display();
        for l in &live.invocations {
            let inv = whole.invocation(&l.invocation_id).unwrap();
            assert_eq!(l.status, inv.status, "{name} {}", inv.invocation_id);
            let parent_id =
                |s: &Session, p: Option<usize>| p.map(|p| s.invocations[p].invocation_id.clone());
            assert_eq!(
                parent_id(&live, l.parent),
                parent_id(&whole, inv.parent),
                "{name}"
            );
        }
        // What only the file decode has comes from subagent files, under a Task.
        for inv in &whole.invocations {
            if live.invocation(&inv.invocation_id).is_none() {
                only_in_files += 1;
                assert!(inv.parent.is_some(), "{name} {}", inv.invocation_id);
            }
        }
    }
    // The 2.0.55 session's agent file: 15 calls.
    assert_eq!(only_in_files, 15);
}

#[test]
fn live_decoding_gives_leading_records_the_first_timestamp() {
    let text = std::fs::read_to_string(fixture("cc_graph_order_resumed.jsonl")).unwrap();
    let mut dec = import::decoder_for(Format::ClaudeCode);
    let mut out = Vec::new();
    let mut lines = text.lines();
    dec.line(1, lines.next().unwrap(), &mut out);
    assert!(out.is_empty(), "the summary waits for a timestamp");
    dec.line(2, lines.next().unwrap(), &mut out);
    let frames: Vec<_> = out
        .iter()
        .filter_map(|d| match d {
            Decoded::Frame(f) => Some(f),
            Decoded::Malformed(_) | Decoded::Finding(_) => None,
        })
        .collect();
    assert_eq!(frames[0].frame_type.as_str(), "x-claude-code.summary");
    let first = rawpv::protocol::Timestamp::parse_str("2026-01-01T10:00:00.000Z");
    assert!(frames.iter().all(|f| f.envelope.timestamp == first));
}

#[cfg(unix)]
#[test]
fn planted_subagent_files_that_are_not_regular_files_are_passed_over() {
    // Second attack of issue 14: an `agent-*.jsonl` beside a transcript that is a FIFO hung
    // the loader; one linked to /dev/zero grew it to 7.5 GB in 15 s.
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("s.jsonl");
    // A 2.x transcript with a sessionId: its directory is scanned for `agent-*.jsonl`.
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../shared/corpus/claude-code/cc-v2.1.17-bash-errors.jsonl"
        ),
        &main,
    )
    .expect("the corpus (../shared/corpus) is needed");
    let ok = std::process::Command::new("mkfifo")
        .arg(dir.path().join("agent-fifo.jsonl"))
        .status()
        .unwrap()
        .success();
    assert!(ok, "mkfifo");
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("agent-zero.jsonl")).unwrap();
    let sub = dir.path().join("s").join("subagents");
    std::fs::create_dir_all(&sub).unwrap();
    std::os::unix::fs::symlink("/dev/zero", sub.join("agent-evil.jsonl")).unwrap();
    // A `/proc` file is a regular file of size 0 with gigabytes behind it (second attack).
    std::os::unix::fs::symlink("/proc/self/pagemap", sub.join("agent-pm.jsonl")).unwrap();
    // A sparse file far over the subagent cap (an 8 GB one took 16.8 GB; third attack).
    std::fs::File::create(sub.join("agent-sparse.jsonl"))
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    let out = assert_cmd::Command::cargo_bin("rawpv")
        .unwrap()
        .args(["stats", main.to_str().unwrap()])
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("invocations"));
}

/// A subagent file's bad lines and a file too big to read are warnings naming the file and line,
/// never a silent loss; a byte order mark before its first record is not part of it (attack 5).
#[test]
fn a_subagent_files_bad_lines_are_findings_and_its_bom_is_skipped() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cc_follow_subagent");
    let name = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join(name).join("subagents");
    std::fs::create_dir_all(&sub).unwrap();
    let main = dir.path().join(format!("{name}.jsonl"));
    std::fs::copy(src.join(format!("{name}.jsonl")), &main).unwrap();
    let agent =
        std::fs::read_to_string(src.join(name).join("subagents/agent-abc123.jsonl")).unwrap();
    let (first, rest) = agent.split_once('\n').unwrap();
    std::fs::write(
        sub.join("agent-abc123.jsonl"),
        format!("\u{feff}{first}\n{{\"cut off\n{rest}"),
    )
    .unwrap();
    // Sparse: no disk is used.
    let huge = std::fs::File::create(sub.join("agent-huge.jsonl")).unwrap();
    huge.set_len(rawpv::import::cc_files::MAX_SUBAGENT_BYTES + 1)
        .unwrap();
    let (s, _) = rawpv::source::file::fold_path(&main).unwrap();
    let ids: Vec<&str> = s
        .invocations
        .iter()
        .map(|i| i.invocation_id.as_str())
        .collect();
    assert_eq!(ids, ["toolu_T", "toolu_S1", "toolu_S2"]);
    let warnings: Vec<String> = s
        .findings
        .iter()
        .map(|f| format!("{}:{}", f.line, f.message))
        .collect();
    assert_eq!(
        warnings,
        [
            "0:subagent file agent-abc123.jsonl line 2: not valid JSON: EOF while parsing a string at line 1 column 9; the line is not shown".to_owned(),
            format!(
                "0:subagent file agent-huge.jsonl not read ({} is {} bytes, over the {}-byte subagent file cap); its calls are not shown",
                sub.join("agent-huge.jsonl").display(),
                rawpv::import::cc_files::MAX_SUBAGENT_BYTES + 1,
                rawpv::import::cc_files::MAX_SUBAGENT_BYTES
            ),
        ]
    );
}

/// A transcript that names 300 tools: the derived catalog stops at `MAX_DERIVED_TOOLS` with one
/// warning at the record naming the first tool left out, so its publishes stay bounded instead of
/// growing with the square of the names (as attack 6 #1 found for Codex); every call still pairs.
#[test]
fn the_derived_catalog_is_capped() {
    use rawpv::import::MAX_DERIVED_TOOLS;
    use std::fmt::Write as _;
    let sid = "11111111-2222-4333-8444-555555555555";
    let mut text = String::new();
    let mut parent = String::from("null");
    for i in 1..=300u32 {
        let (a, u) = (format!("a{i:07}"), format!("u{i:07}"));
        let _ = writeln!(
            text,
            r#"{{"parentUuid":{parent},"sessionId":"{sid}","type":"assistant","uuid":"{a}","timestamp":"2026-01-01T00:00:01.000Z","message":{{"id":"msg_{i}","role":"assistant","model":"claude-x","content":[{{"type":"tool_use","id":"t{i}","name":"Tool{i}","input":{{}}}}]}}}}"#
        );
        let _ = writeln!(
            text,
            r#"{{"parentUuid":"{a}","sessionId":"{sid}","type":"user","uuid":"{u}","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{i}","content":"ok"}}]}}}}"#
        );
        parent = format!("\"{u}\"");
    }
    let loaded = import::load_bytes(text.as_bytes());
    assert_eq!(loaded.format, Format::ClaudeCode);
    let s = Session::from_decoded(loaded.items);
    let sizes: Vec<usize> = s.publishes.iter().map(|p| p.catalog.tools.len()).collect();
    assert_eq!(sizes, (1..=MAX_DERIVED_TOOLS).collect::<Vec<_>>());
    let capped: Vec<(u64, &str)> = s
        .findings
        .iter()
        .filter(|f| f.message.contains("derived catalog lists the first"))
        .map(|f| (f.line, f.code))
        .collect();
    // Tool 257 is named on line 2 × 257 − 1.
    assert_eq!(capped, vec![(513, "unrecognised-record")]);
    assert_eq!(s.invocations.len(), 300);
    assert!(
        s.invocations
            .iter()
            .all(|i| i.status == CallStatus::Succeeded)
    );
}
