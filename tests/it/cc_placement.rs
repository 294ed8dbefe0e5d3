//! Where the one Claude Code decoder places records (issue 16): a compaction subagent at its
//! compaction, inline sidechains under the Task whose prompt started them (their turn end with
//! them), fork points as rows and info findings with every branch's tokens counted, resumed
//! replays marked. Fixtures of our own in the corpus's shapes, and the corpus files that show
//! each case (skipped with a message when `../shared/corpus` is absent).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use rawpv::finding::{Finding, Level, code};
use rawpv::protocol::{Delegation, FrameType};
use rawpv::session::query::Tokens;
use rawpv::session::{Item, Session};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

fn load(path: &Path) -> Session {
    rawpv::source::file::fold_path(path).unwrap().0
}

/// One line per feed row: kind, its agent (last delegation), and its text or type.
fn rows(s: &Session) -> Vec<String> {
    let under = |chain: &[Delegation]| {
        chain
            .last()
            .map_or_else(|| "-".to_owned(), |d| d.agent_id.clone())
    };
    s.items
        .iter()
        .map(|it| match it {
            Item::Invocation(k) => {
                let inv = &s.invocations[*k];
                let u = under(&inv.delegation_chain);
                format!("call {} {:?} [{u}]", inv.tool_name, inv.status)
            }
            Item::Message(m) => {
                format!("{:?} {} [{}]", m.kind, m.text, under(&m.delegation_chain))
            }
            Item::Event(f) => {
                let u = under(&f.envelope.delegation_chain());
                format!("{} [{u}]", f.frame_type.as_str())
            }
        })
        .collect()
}

fn tokens(s: &Session) -> Tokens {
    let mut t = Tokens::default();
    for i in 0..s.items.len() {
        t.add(s, i);
    }
    t
}

#[test]
fn a_compaction_subagent_is_placed_at_its_compaction_indented_and_in_time() {
    let s = load(&fixture(
        "cc_compaction_subagent/22222222-3333-4444-8555-666666666666.jsonl",
    ));
    let rows: Vec<String> = rows(&s)
        .into_iter()
        .filter(|r| !r.starts_with("tool.catalog"))
        .collect();
    assert_eq!(
        rows,
        [
            "Prompt Build the parser [-]",
            "call Bash Succeeded [-]",
            "session.usage [-]",
            "AgentText Built. [-]",
            "session.usage [-]",
            "session.turn.end [-]",
            "Prompt Your task is to create a detailed summary of the conversation so far. [acompact-7f3e]",
            "AgentText <summary>The parser was built.</summary> [acompact-7f3e]",
            "session.usage [acompact-7f3e]",
            "session.turn.end [acompact-7f3e]",
            "session.compacted [-]",
            "x-claude-code.compact-summary [-]",
            "Prompt Now test it [-]",
            "AgentText Tested. [-]",
            "session.usage [-]",
            "session.turn.end [-]",
        ]
    );
    // Times never run backwards along the feed.
    let times: Vec<i64> = s
        .items
        .iter()
        .filter_map(|it| match it {
            Item::Message(m) => m.timestamp.map(|t| t.0),
            Item::Event(f) => f.envelope.timestamp.map(|t| t.0),
            Item::Invocation(k) => s.invocations[*k].requested_at.map(|t| t.0),
        })
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    // Its chain: the compaction agent, under no call.
    let sub = s
        .items
        .iter()
        .find_map(|it| match it {
            Item::Message(m) if !m.delegation_chain.is_empty() => Some(&m.delegation_chain),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        *sub,
        vec![Delegation {
            agent_id: "acompact-7f3e".into(),
            invocation_id: String::new(),
        }]
    );
    // Its tokens were spent: counted.
    let t = tokens(&s);
    assert_eq!((t.input, t.output, t.rows), (170_270, 418, 4));
}

#[test]
fn a_rewind_is_a_fork_row_and_an_info_finding_and_both_branches_count() {
    let s = load(&fixture("cc_fork_rewind.jsonl"));
    let rows: Vec<String> = rows(&s)
        .into_iter()
        .filter(|r| !r.starts_with("tool.catalog") && !r.starts_with("session.usage"))
        .collect();
    assert_eq!(
        rows,
        [
            "Prompt List the files [-]",
            "call Bash Succeeded [-]",
            "AgentText Two files. [-]",
            "session.turn.end [-]",
            "Prompt Delete b.rs [-]",
            "call Bash Cancelled [-]",
            "x-claude-code.fork [-]",
            "Prompt Rename b.rs to c.rs [-]",
            "call Bash Succeeded [-]",
            "AgentText Renamed. [-]",
            "session.turn.end [-]",
        ]
    );
    let fork = s
        .items
        .iter()
        .find_map(|it| match it {
            Item::Event(f) if f.frame_type.as_str() == "x-claude-code.fork" => Some(f),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        fork.payload_json(),
        serde_json::json!({
            "parentUuid": "f0000000-0000-4000-8000-000000000004",
            "parent_line": 4,
            "first_line": 5,
            "branch": 2,
            "line": 8,
        })
    );
    let forks: Vec<&Finding> = s.findings.iter().filter(|f| f.code == code::FORK).collect();
    assert_eq!(forks.len(), 1);
    assert_eq!(
        (forks[0].level, forks[0].line, forks[0].message.as_str()),
        (
            Level::Info,
            4,
            "fork point: the conversation branches here into 2 branches (a rewind or a retried prompt); the main line is branch 2 (from line 8), the one that leads to the session's last record"
        )
    );
    // Both branches' tokens were spent: 10+20+30+40+50 in, 2+3+4+5+2 out.
    let t = tokens(&s);
    assert_eq!((t.input, t.output, t.rows), (150, 16, 5));
}

#[test]
fn check_lists_fork_points_as_infos() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rawpv"))
        .arg("check")
        .arg(fixture("cc_fork_rewind.jsonl"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "cc_fork_rewind.jsonl:4: info[fork] fork point: the conversation branches here into 2 branches"
        ),
        "{text}"
    );
    assert!(text.contains("0 errors, 0 warnings, 1 info"), "{text}");
}

#[test]
fn the_1_0_43_transcript_has_one_fork_point_with_three_branches() {
    let Some(dir) = crate::support::corpus::dir("claude-code") else {
        return;
    };
    let s = load(&dir.join("cc-v1.0.43-image-hooks-multiedit.jsonl"));
    let forks: Vec<(u64, &str)> = s
        .findings
        .iter()
        .filter(|f| f.code == code::FORK)
        .map(|f| (f.line, f.message.as_str()))
        .collect();
    assert_eq!(
        forks,
        [(
            62,
            "fork point: the conversation branches here into 3 branches (a rewind or a retried prompt); the main line is branch 3 (from line 67), the one that leads to the session's last record"
        )]
    );
    let rows: Vec<serde_json::Value> = s
        .items
        .iter()
        .filter_map(|it| match it {
            Item::Event(f) if f.frame_type.as_str() == "x-claude-code.fork" => {
                Some(f.payload_json()["branch"].clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(rows, [2, 3]);
    // Parallel tool calls of one message are no fork (2.1.x writes their results as branches).
    for name in [
        "cc-v2.1.38-task-subagent-progress.jsonl",
        "cc-v2.1.38-tool-heavy-web.jsonl",
        "cc-v2.1.39-compaction-A-excerpt.jsonl",
    ] {
        let s = load(&dir.join(name));
        assert!(!s.findings.iter().any(|f| f.code == code::FORK), "{name}");
    }
}

#[test]
fn inline_sidechains_are_under_the_task_whose_prompt_started_them() {
    let Some(dir) = crate::support::corpus::dir("claude-code") else {
        return;
    };
    let s = load(&dir.join("cc-v1.0.108-inline-sidechain-task.jsonl"));
    // The two runs (lines 16 and 26), each under the Task with its prompt.
    let task_prompt = |id: &str| {
        let inv = s.invocation(id).unwrap();
        s.input(inv)["prompt"].as_str().unwrap().to_owned()
    };
    let mut runs: Vec<(String, String)> = Vec::new();
    for it in &s.items {
        if let Item::Message(m) = it
            && m.kind == rawpv::session::MessageKind::Prompt
            && let Some(d) = m.delegation_chain.last()
        {
            runs.push((d.invocation_id.clone(), m.text.clone()));
        }
    }
    assert_eq!(runs.len(), 2);
    for (task, prompt) in &runs {
        assert_eq!(task_prompt(task).trim(), prompt.trim(), "{task}");
    }
    // A run's turn end is its own (indented with it), not the main agent's.
    let ends: Vec<usize> = s
        .items
        .iter()
        .filter_map(|it| match it {
            Item::Event(f) if f.frame_type == FrameType::SessionTurnEnd => {
                Some(f.envelope.delegation_chain().len())
            }
            _ => None,
        })
        .collect();
    assert!(ends.contains(&1), "{ends:?}");
}

#[test]
fn a_resumed_sessions_replayed_records_are_shown_once_and_marked() {
    let dir = tempfile::tempdir().unwrap();
    // A new session file whose first records are the earlier session's (another sessionId, the
    // same uuids twice: once replayed at the top, once more by a progress copy).
    let old = "44444444-5555-4666-8777-888888888888";
    let new = "55555555-6666-4777-8888-999999999999";
    let rec = |sid: &str, uuid: &str, parent: Option<&str>, text: &str| {
        serde_json::json!({
            "parentUuid": parent, "isSidechain": false, "type": "user", "sessionId": sid,
            "message": {"role": "user", "content": text}, "uuid": uuid,
            "timestamp": "2026-03-03T10:00:00.000Z"
        })
        .to_string()
    };
    let u1 = "a1000000-0000-4000-8000-000000000001";
    let u2 = "a1000000-0000-4000-8000-000000000002";
    let u3 = "a1000000-0000-4000-8000-000000000003";
    let text = [
        rec(old, u1, None, "first question"),
        rec(old, u1, None, "first question"),
        rec(new, u2, Some(u1), "second question"),
        rec(new, u3, Some(u2), "third question"),
    ]
    .join("\n");
    let path = dir.path().join(format!("{new}.jsonl"));
    std::fs::write(&path, text).unwrap();
    // The replayed record's frames say so; the session's own do not.
    let items = rawpv::import::load_path(&path).unwrap().items;
    let replayed: Vec<bool> = items
        .iter()
        .filter_map(|d| match d {
            rawpv::import::Decoded::Frame(f) if f.frame_type == FrameType::ControlPromptRequest => {
                Some(f.envelope.metadata["claude_code"].get("replayed").is_some())
            }
            _ => None,
        })
        .collect();
    assert_eq!(replayed, [true, false, false]);
    // One session, the file's: the replayed record's frames name it and keep their own.
    let frames: Vec<(Option<&str>, Option<&str>)> = items
        .iter()
        .filter_map(|d| match d {
            rawpv::import::Decoded::Frame(f) if f.frame_type == FrameType::ControlPromptRequest => {
                let from = f.envelope.metadata["claude_code"].get("replayed_from");
                Some((
                    f.envelope.session_id.as_deref(),
                    from.and_then(|v| v.as_str()),
                ))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        frames,
        [(Some(new), Some(old)), (Some(new), None), (Some(new), None)]
    );
    let s = load(&path);
    let prompts: Vec<&str> = s
        .items
        .iter()
        .filter_map(|it| match it {
            Item::Message(m) => Some(m.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        prompts,
        ["first question", "second question", "third question"]
    );
    assert_eq!(s.sessions.len(), 1);
    assert_eq!(s.sessions.name(0), new);
    assert_eq!(s.sessions.get(0).turns, 3);
    let infos: Vec<&str> = s
        .findings
        .iter()
        .filter(|f| f.code == code::DUPLICATE_RECORD)
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(
        infos,
        [
            "1 record(s) repeated an earlier uuid (resumed session or subagent progress copy); the first copy is shown",
            "1 record(s) belong to an earlier session (a resumed session replays its predecessor); marked claude_code.replayed",
        ]
    );
}
