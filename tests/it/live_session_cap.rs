//! Memory bound for endless streams: `Session::compact_if_needed` drops the oldest finished rows
//! past the cap and keeps every index consistent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use rawpv::import::Decoded;
use rawpv::protocol::parse_line;
use rawpv::session::{CallStatus, Item, Session};

fn frame(line: u64, json: &str) -> Decoded {
    Decoded::frame(parse_line(line, json).unwrap())
}

fn req(line: u64, id: &str, parent: Option<&str>) -> Decoded {
    let meta = parent.map_or(String::new(), |p| {
        format!(
            r#","metadata":{{"delegation_chain":[{{"agent_id":"sub","invocation_id":"{p}"}}]}}"#
        )
    });
    frame(
        line,
        &format!(
            r#"{{"type":"tool.invoke.request","payload":{{"invocation_id":"{id}","tool_name":"Bash"}}{meta}}}"#
        ),
    )
}

fn res(line: u64, id: &str) -> Decoded {
    frame(
        line,
        &format!(
            r#"{{"type":"tool.invoke.result","payload":{{"invocation_id":"{id}","status":"success","output":"ok","output_type":"text"}}}}"#
        ),
    )
}

/// Every index points where it should.
fn assert_consistent(s: &Session) {
    for (row, it) in s.items.iter().enumerate() {
        if let Item::Invocation(k) = it {
            assert_eq!(s.invocations[*k].item, row);
        }
    }
    for (k, inv) in s.invocations.iter().enumerate() {
        assert_eq!(s.invocation_index(&inv.invocation_id), Some(k));
        assert!(matches!(s.items[inv.item], Item::Invocation(x) if x == k));
        if let Some(p) = inv.parent {
            assert!(s.invocations[p].children.contains(&k));
        }
        for &c in &inv.children {
            assert_eq!(s.invocations[c].parent, Some(k));
        }
    }
    for p in &s.publishes {
        assert!(
            matches!(&s.items[p.item], Item::Event(f) if f.frame_type.as_str() == "tool.catalog.publish")
        );
    }
}

#[test]
fn oldest_finished_rows_are_dropped_and_indices_stay_consistent() {
    let mut s = Session::new();
    s.max_items = Some(20);
    let mut line = 0;
    let mut next = || {
        line += 1;
        line
    };
    s.apply(frame(
        next(),
        r#"{"type":"tool.catalog.publish","payload":{"tools":[{"name":"Bash"}]}}"#,
    ));
    s.apply(req(next(), "open-early", None));
    s.apply(req(next(), "parent", None));
    s.apply(frame(
        next(),
        r#"{"type":"agent.text.delta","payload":{"delta":"typing"}}"#,
    ));
    for i in 0..30 {
        let id = format!("c{i}");
        s.apply(req(next(), &id, Some("parent")));
        s.apply(res(next(), &id));
    }
    s.apply(res(next(), "parent"));
    assert_eq!(s.items.len(), 34);
    let before_last = s.items.len() - 1;
    let c = s.compact_if_needed().expect("over the cap");
    // Down to 90% of the cap: 18 rows.
    assert_eq!(s.items.len(), 18);
    assert_eq!(c.removed_items, 16);
    assert_eq!(s.dropped_items, 16);
    assert_eq!(c.item(before_last), Some(17));
    assert_eq!(
        c.item(2),
        None,
        "the finished parent (row 2) is among the oldest"
    );
    assert_consistent(&s);
    // Pinned: the catalog publish, the open invocation, the open message.
    assert!(s.catalog().is_some());
    assert_eq!(
        s.invocation("open-early").unwrap().status,
        CallStatus::Requested
    );
    assert!(matches!(&s.items[2], Item::Message(m) if !m.done));
    assert!(s.invocation("parent").is_none());
    assert!(s.invocation("c29").unwrap().parent.is_none());
    // The session keeps working after compaction.
    s.apply(res(next(), "open-early"));
    assert_eq!(
        s.invocation("open-early").unwrap().status,
        CallStatus::Succeeded
    );
    s.apply(frame(next(), r#"{"type":"agent.text.done","payload":{}}"#));
    assert!(matches!(&s.items[2], Item::Message(m) if m.done && m.text == "typing"));
    assert_consistent(&s);
    assert_eq!(s.compact_if_needed(), None);
}

#[test]
fn no_compaction_under_the_cap_or_when_disabled() {
    let mut s = Session::new();
    for i in 0..10 {
        s.apply(req(i, &format!("x{i}"), None));
        s.apply(res(i, &format!("x{i}")));
    }
    assert_eq!(s.compact_if_needed(), None);
    s.max_items = Some(0);
    assert_eq!(s.compact_if_needed(), None);
    s.max_items = Some(5);
    assert!(s.compact_if_needed().is_some());
    assert_consistent(&s);
}

#[test]
fn the_live_app_compacts_and_keeps_following_the_last_row() {
    use rawpv::app::{App, Msg, SourceStatus};
    use rawpv::source::{SourceMsg, SourceState};
    let mut app = App::new("test", true);
    app.session_mut().max_items = Some(10);
    let mut batch = Vec::new();
    for i in 0..12u64 {
        batch.push(req(2 * i + 1, &format!("x{i}"), None));
        batch.push(res(2 * i + 2, &format!("x{i}")));
    }
    app.update(Msg::Source(SourceMsg::Batch(batch)));
    assert_eq!(app.session().items.len(), 9);
    assert_eq!(app.session().dropped_items, 3);
    assert_eq!(app.view().feed.selected, 8);
    assert_consistent(app.session());
    let st = SourceState::Reconnecting {
        attempt: 2,
        reason: "x".into(),
    };
    app.update(Msg::Source(SourceMsg::State(st)));
    assert_eq!(*app.source_status(), SourceStatus::Reconnecting(2));
}

/// Several sessions (issue 24): past the cap the least recently active session gives its
/// finished rows first (its oldest first), the active one keeps its history, and each
/// session's dropped rows are counted on it.
#[test]
fn the_idle_sessions_rows_go_first() {
    let call = |line: u64, sid: &str, id: &str, ts: u64, kind: &str| {
        let body = if kind == "req" {
            format!(
                r#""tool.invoke.request","payload":{{"invocation_id":"{id}","tool_name":"Bash"}}"#
            )
        } else {
            format!(
                r#""tool.invoke.result","payload":{{"invocation_id":"{id}","status":"success","output":"ok","output_type":"text"}}"#
            )
        };
        frame(
            line,
            &format!(r#"{{"type":{body},"session_id":"{sid}","timestamp":{ts}}}"#),
        )
    };
    let mut s = Session::new();
    s.max_items = Some(20);
    let mut line = 0;
    // "idle": 8 calls early on; "busy": 14 calls after it, the last one still open.
    for k in 0..8 {
        line += 1;
        s.apply(call(line, "idle", &format!("i{k}"), 1_000 + k, "req"));
        line += 1;
        s.apply(call(line, "idle", &format!("i{k}"), 1_000 + k, "res"));
    }
    for k in 0..14 {
        line += 1;
        s.apply(call(line, "busy", &format!("b{k}"), 5_000 + k, "req"));
        if k < 13 {
            line += 1;
            s.apply(call(line, "busy", &format!("b{k}"), 5_000 + k, "res"));
        }
    }
    assert_eq!(s.items.len(), 22);
    s.compact_if_needed().unwrap();
    assert_consistent(&s);
    // Down to 18 rows: the 4 dropped are idle's oldest four.
    let kept: Vec<&str> = s
        .items
        .iter()
        .map(|it| match it {
            Item::Invocation(k) => s.invocations[*k].invocation_id.as_str(),
            _ => "",
        })
        .collect();
    let mut want: Vec<String> = (4..8).map(|k| format!("i{k}")).collect();
    want.extend((0..14).map(|k| format!("b{k}")));
    assert_eq!(kept, want);
    let dropped: Vec<(&str, u64)> = s
        .sessions
        .iter()
        .map(|(k, e)| (s.sessions.name(k), e.dropped))
        .collect();
    assert_eq!(dropped, [("idle", 4), ("busy", 0)]);
}
