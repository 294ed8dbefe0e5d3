//! Reducer tests: frames folded into a `Session`, asserted as whole objects (STYLE 4.11).

use pretty_assertions::assert_eq;
use rawpv::finding::{Level, code};
use rawpv::import::{Decoded, load_bytes};
use rawpv::protocol::{
    Body, Envelope, Frame, FrameType, Origin, OutputType, ResultStatus, StreamType, Timestamp,
    ToolInvokeRequest, ToolInvokeResult, ToolInvokeStream, parse_line,
};
use rawpv::session::{CallStatus, Chunk, ChunkBuffer, ChunkInsert, Invocation, Item, Session};
use serde_json::{Map, json};

const PROBLEMS: &str = include_str!("../fixtures/rawp_problems.ndjson");

fn ts(s: &str) -> Option<Timestamp> {
    Timestamp::parse_str(s)
}

/// A request and result whose envelopes carry an id, metadata beyond the delegation chain and
/// an unknown field keep them whole; plain ones (timestamp, session id, seq) are dropped.
#[test]
fn envelopes_are_kept_only_when_they_carry_something() {
    let text = concat!(
        r#"{"type":"tool.invoke.request","id":"f1","session_id":"s","seq":1,"timestamp":"2026-01-05T09:00:01Z","metadata":{"isMeta":true},"payload":{"invocation_id":"a","tool_name":"Bash","input":{}}}"#,
        "\n",
        r#"{"type":"tool.invoke.result","session_id":"s","seq":2,"x_custom":7,"payload":{"invocation_id":"a","status":"success","output":"ok","output_type":"text"}}"#,
        "\n",
        r#"{"type":"tool.invoke.request","session_id":"s","seq":3,"metadata":{"delegation_chain":[]},"payload":{"invocation_id":"b","tool_name":"Bash","input":{}}}"#,
        "\n",
    );
    let session = Session::from_decoded(load_bytes(text.as_bytes()).items);
    let a = session.invocation("a").expect("a");
    let mut metadata = Map::new();
    metadata.insert("isMeta".into(), json!(true));
    assert_eq!(
        a.request_envelope.as_deref(),
        Some(&Envelope {
            id: Some("f1".into()),
            session_id: Some("s".into()),
            seq: Some(1),
            timestamp: ts("2026-01-05T09:00:01Z"),
            metadata,
            extra: Map::new(),
        })
    );
    let mut extra = Map::new();
    extra.insert("x_custom".into(), json!(7));
    assert_eq!(
        a.result_envelope.as_deref(),
        Some(&Envelope {
            session_id: Some("s".into()),
            seq: Some(2),
            extra,
            ..Envelope::default()
        })
    );
    let b = session.invocation("b").expect("b");
    assert_eq!((&b.request_envelope, &b.result_envelope), (&None, &None));
}

#[test]
fn problems_fixture_keeps_everything_and_reports_each_problem() {
    let session = Session::from_decoded(load_bytes(PROBLEMS.as_bytes()).items);

    // Findings, with their line numbers.
    let found: Vec<(&str, u64)> = session.findings.iter().map(|f| (f.code, f.line)).collect();
    for expected in [
        (code::MALFORMED_LINE, 4),
        (code::RESULT_WITHOUT_REQUEST, 7),
        (code::UNKNOWN_FRAME_TYPE, 8),
    ] {
        assert!(
            found.contains(&expected),
            "missing {expected:?} in {found:?}"
        );
    }
    assert_eq!(session.counts.malformed, 1);

    // The invocation: chunks in sequence order, the duplicate dropped, the result applied.
    let id = "0b6f3a52-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
    let mut stream = ChunkBuffer::default();
    let chunk = |seq, text: &str, line| Chunk {
        sequence: Some(seq),
        stream_type: StreamType::Stdout,
        text: text.into(),
        line,
    };
    assert_eq!(stream.insert(chunk(1, "two\n", 3)), ChunkInsert::Appended);
    assert_eq!(stream.insert(chunk(0, "one\n", 5)), ChunkInsert::SlottedIn);
    assert_eq!(
        stream.insert(chunk(0, "one again\n", 9)),
        ChunkInsert::Duplicate
    );
    let expected = Invocation {
        invocation_id: id.into(),
        tool_name: "Bash".into(),
        tool_version: None,
        input: json!({"command": "cargo build"}),
        input_span: None,
        summary: "cargo build".into(),
        parallel_group_id: None,
        status: CallStatus::Failed,
        result: Some(Box::new(ToolInvokeResult {
            invocation_id: Some(id.into()),
            tool_name: Some("Bash".into()),
            status: Some(ResultStatus::Error),
            output: Some(json!("one\ntwo\nerror: linker failed\n")),
            output_type: Some(OutputType::Text),
            duration_ms: Some(2000.0),
            truncated: None,
            extra: Map::new(),
        })),
        output_span: None,
        stream,
        requested_at: ts("2026-01-05T09:00:01.000Z"),
        ended_at: ts("2026-01-05T09:00:03.000Z"),
        // Plain envelopes (timestamp, session id, seq) are not kept: the times are above.
        request_envelope: None,
        result_envelope: None,
        request_line: 2,
        result_line: Some(10),
        delegation_chain: vec![],
        parent: None,
        children: vec![],
        item: 1,
        findings: session.invocations[0].findings,
        // One session; the catalog published on line 1 was in force when the result came.
        session: 0,
        catalog_at: 1,
        rev: session.invocations[0].rev,
    };
    assert_eq!(session.invocations, vec![Box::new(expected)]);
    assert_eq!(session.invocations[0].stream.text(None), "one\ntwo\n");
    assert_eq!(session.invocations[0].duration_ms(), Some(2000.0));

    // Everything else is still in the feed: catalog, invocation, orphan result, unknown type.
    let kinds: Vec<String> = session
        .items
        .iter()
        .map(|i| match i {
            Item::Invocation(n) => format!("invocation {n}"),
            Item::Message(m) => format!("message {:?}", m.kind),
            Item::Event(f) => format!("event {}", f.frame_type),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "event tool.catalog.publish",
            "invocation 0",
            "event tool.invoke.result",
            "event agent.telepathy"
        ]
    );
    assert_eq!(session.publishes.len(), 1);
    assert_eq!(session.counts.failed, 1);
    assert_eq!(session.counts.running, 0);
    assert!(session.ended);
}

fn frame(t: FrameType, body: Body, line: u64) -> Decoded {
    Decoded::frame(Frame {
        origin: Origin::at(line),
        ..Frame::new(t, body)
    })
}

#[test]
fn lifecycle_requested_streaming_finished_and_duplicates() {
    let req = |id: &str| ToolInvokeRequest {
        invocation_id: Some(id.into()),
        tool_name: Some("Read".into()),
        input: Some(json!({"file_path": "/a"})),
        ..Default::default()
    };
    let mut s = Session::new();
    let a = s.apply(frame(
        FrameType::ToolInvokeRequest,
        Body::Request(req("a")),
        1,
    ));
    assert_eq!((a.item, a.invocation, a.new_item), (Some(0), Some(0), true));
    assert_eq!(s.invocations[0].status, CallStatus::Requested);
    assert_eq!(s.counts.running, 1);

    let stream = ToolInvokeStream {
        invocation_id: Some("a".into()),
        stream_type: Some(StreamType::Stderr),
        chunk: Some("warn\n".into()),
        sequence: Some(0),
        ..Default::default()
    };
    let b = s.apply(frame(FrameType::ToolInvokeStream, Body::Stream(stream), 2));
    assert_eq!(
        (b.item, b.invocation, b.new_item),
        (Some(0), Some(0), false)
    );
    assert_eq!(s.invocations[0].status, CallStatus::Streaming);

    // A duplicate request becomes its own row plus a finding.
    let c = s.apply(frame(
        FrameType::ToolInvokeRequest,
        Body::Request(req("a")),
        3,
    ));
    assert_eq!((c.item, c.invocation, c.new_item), (Some(1), None, true));
    assert!(
        s.findings
            .iter()
            .any(|f| (f.code, f.line) == (code::DUPLICATE_INVOCATION_ID, 3))
    );

    let result = |status| ToolInvokeResult {
        invocation_id: Some("a".into()),
        status: Some(status),
        output: Some(json!("x")),
        output_type: Some(OutputType::FileContent),
        ..Default::default()
    };
    s.apply(frame(
        FrameType::ToolInvokeResult,
        Body::Result(result(ResultStatus::Cancelled)),
        4,
    ));
    assert_eq!(s.invocations[0].status, CallStatus::Cancelled);
    assert_eq!(
        (s.counts.running, s.counts.cancelled, s.counts.failed),
        (0, 1, 0)
    );

    // A second result is not applied; it answers the repeated request (whose
    // duplicate-invocation-id is the finding), a third one is a duplicate result.
    for line in [5, 6] {
        s.apply(frame(
            FrameType::ToolInvokeResult,
            Body::Result(result(ResultStatus::Success)),
            line,
        ));
    }
    assert_eq!(s.invocations[0].status, CallStatus::Cancelled);
    let duplicates: Vec<(Level, u64)> = (s.findings.iter())
        .filter(|f| f.code == code::DUPLICATE_RESULT)
        .map(|f| (f.level, f.line))
        .collect();
    assert_eq!(duplicates, [(Level::Error, 6)]);
    // The reducer's two findings (duplicate id, duplicate result) plus the checker's
    // (`crate::check`: "a" is not a UUID v4, …): every finding about "a" is counted on it.
    let about_a = s
        .findings
        .iter()
        .filter(|f| f.invocation_id.as_deref() == Some("a"))
        .count();
    assert!(about_a >= 2);
    assert_eq!(s.invocations[0].findings as usize, about_a);
}

#[test]
fn text_deltas_merge_into_one_message_and_done_replaces() {
    let lines = [
        r#"{"type":"control.prompt.request","payload":{"text":"fix it","input_type":"text"}}"#,
        r#"{"type":"agent.text.delta","payload":{"delta":"Hel"}}"#,
        r#"{"type":"agent.thinking.delta","payload":{"delta":"hmm"}}"#,
        r#"{"type":"agent.text.delta","payload":{"delta":"lo"}}"#,
        r#"{"type":"agent.text.done","payload":{}}"#,
        r#"{"type":"agent.thinking.done","payload":{"text":"hmm, full","redacted":true}}"#,
        r#"{"type":"agent.text.done","payload":{"text":"Second"}}"#,
    ];
    let mut s = Session::new();
    for (i, l) in lines.iter().enumerate() {
        s.apply(Decoded::frame(parse_line(i as u64 + 1, l).unwrap()));
    }
    let texts: Vec<(String, bool, bool)> = s
        .items
        .iter()
        .map(|i| match i {
            Item::Message(m) => (format!("{:?}:{}", m.kind, m.text), m.done, m.redacted),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        texts,
        [
            ("Prompt:fix it".to_owned(), true, false),
            ("AgentText:Hello".to_owned(), true, false),
            ("Thinking:hmm, full".to_owned(), true, true),
            ("AgentText:Second".to_owned(), true, false),
        ]
    );
}

#[test]
fn subagent_requests_nest_under_their_parent() {
    let lines = [
        r#"{"type":"tool.invoke.request","payload":{"invocation_id":"t","tool_name":"Task","input":{"description":"explore"}}}"#,
        r#"{"type":"tool.invoke.request","payload":{"invocation_id":"c1","tool_name":"Grep","input":{"pattern":"x"}},"metadata":{"delegation_chain":[{"agent_id":"sub","invocation_id":"t"}]}}"#,
        r#"{"type":"tool.invoke.request","payload":{"invocation_id":"c2","tool_name":"Read","input":{}},"metadata":{"delegation_chain":[{"agent_id":"sub","invocation_id":"t"}]}}"#,
    ];
    let mut s = Session::new();
    for (i, l) in lines.iter().enumerate() {
        s.apply(Decoded::frame(parse_line(i as u64 + 1, l).unwrap()));
    }
    assert_eq!(s.invocations[0].children, vec![1, 2]);
    assert_eq!(s.invocations[1].parent, Some(0));
    assert_eq!(s.invocations[2].parent, Some(0));
}

#[test]
fn convert_round_trip_is_stable() {
    // What `convert` writes parses back to the same frames.
    let loaded = load_bytes(PROBLEMS.as_bytes());
    for d in &loaded.items {
        if let Decoded::Frame(f) = d {
            let again = parse_line(f.origin.line, &f.to_json().to_string()).unwrap();
            assert_eq!(again.frame_type, f.frame_type);
            assert_eq!(again.body, f.body);
            assert_eq!(again.envelope, f.envelope);
        }
    }
}

#[test]
fn convert_keeps_floats_exact() {
    // Found by the parse_line fuzz target: without exact float parsing, `convert` changed
    // 1.7000000044444442e50 into 1.7000000044444444e50.
    let line = r#"{"type":"tool.catalog.publish","payload":{"tools":[{"name":"x","weight":1.7000000044444442e50}]}}"#;
    let f = parse_line(1, line).unwrap();
    let again = parse_line(1, &f.to_json().to_string()).unwrap();
    assert_eq!(again.body, f.body);
}

/// `convert` writes `duration_ms` as the sender did: an integer stays an integer (it became
/// `3887.0`), a fraction stays a fraction.
#[test]
fn convert_keeps_integral_durations_integers() {
    for (given, written) in [
        ("3887", "3887"),
        ("2.5", "2.5"),
        ("0", "0"),
        ("1e3", "1000"),
    ] {
        let line = format!(
            r#"{{"type":"tool.invoke.result","payload":{{"invocation_id":"a","status":"success","duration_ms":{given}}}}}"#
        );
        let json = parse_line(1, &line).unwrap().to_json().to_string();
        assert!(
            json.contains(&format!(r#""duration_ms":{written}}}"#))
                || json.contains(&format!(r#""duration_ms":{written},"#)),
            "{given}: {json}"
        );
    }
}

/// A call's findings come from the index: those naming it, and id-less ones on its request or
/// result line, in order and capped; a finding naming another call on the same line is not its.
#[test]
fn findings_of_a_call_by_id_and_line() {
    use rawpv::finding::Finding;
    let text = concat!(
        r#"{"type":"tool.invoke.request","payload":{"invocation_id":"a","tool_name":"Bash","input":{}}}"#,
        "\n",
        r#"{"type":"tool.invoke.result","payload":{"invocation_id":"a","status":"success","output":"ok","output_type":"text"}}"#,
        "\n",
    );
    let mut session = Session::from_decoded(load_bytes(text.as_bytes()).items);
    let f = |msg: &str, line: u64| {
        Finding::new(
            Level::Info,
            code::MALFORMED_LINE,
            "SPEC 2",
            line,
            msg.to_string(),
        )
    };
    session.push_finding(f("by id", 9).for_invocation("a"));
    session.push_finding(f("on the request line", 1));
    session.push_finding(f("other call, same line", 1).for_invocation("b"));
    session.push_finding(f("on the result line", 2));
    session.push_finding(f("elsewhere", 3));
    session.push_finding(f("no line", 0));
    let inv = session.invocation("a").expect("a").clone();
    let got: Vec<&str> = session
        .findings_of(&inv, 10)
        .iter()
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(
        got,
        [
            "invocation_id \"a\" is not a UUID v4",
            "tool.invoke.result without required field `tool_name`",
            "by id",
            "on the request line",
            "on the result line"
        ]
    );
    assert_eq!(session.findings_of(&inv, 1).len(), 1);
}
