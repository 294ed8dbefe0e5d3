//! Property tests of the reducer (`Session::apply`) under any order of frames: requests, stream
//! chunks, results, duplicates, unknown ids, missing ids, text deltas, generic and malformed lines.
//!
//! Properties (STYLE 4.1, session.rs invariants):
//! * no panic, whatever the order;
//! * at most one result is applied per invocation, and it is the first result that arrived after
//!   the invocation's request;
//! * counts stay consistent: `invocations` = number of invocations, `running` = open ones,
//!   running + finished = invocations, `failed`/`cancelled` match the statuses;
//! * nothing is dropped: every tool frame is either folded into an invocation or kept as an
//!   event row; `counts.frames` counts every frame;
//! * stream chunks are kept in `sequence` order without duplicates.

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;
use rawpv::import::{Decoded, load_bytes};
use rawpv::protocol::{
    Body, Frame, FrameType, Origin, OutputType, ResultStatus, StreamType, ToolInvokeRequest,
    ToolInvokeResult, ToolInvokeStream, parse_line,
};
use rawpv::session::{CallStatus, Item, Session};
use serde_json::{Map, json};

/// One step of a generated session. Ids come from a small pool so that collisions (duplicates,
/// results before requests, streams for unknown ids) are common.
#[derive(Debug, Clone)]
enum Op {
    Request(u8),
    Stream(u8, Option<u64>, u8),
    Result(u8, u8),
    /// A result or stream frame without any `invocation_id`.
    NoId(bool),
    TextDelta(bool),
    Generic(String),
    Malformed(String),
    /// A line through the JSON parser (exercises the lenient layer too).
    Line(String),
}

fn op() -> impl Strategy<Value = Op> {
    let id = 0u8..6;
    prop_oneof![
        4 => id.clone().prop_map(Op::Request),
        4 => (id.clone(), proptest::option::of(0u64..6), 0u8..4).prop_map(|(i, s, t)| Op::Stream(i, s, t)),
        4 => (id, 0u8..6).prop_map(|(i, s)| Op::Result(i, s)),
        1 => any::<bool>().prop_map(Op::NoId),
        1 => any::<bool>().prop_map(Op::TextDelta),
        1 => "[a-z.]{1,12}".prop_map(Op::Generic),
        1 => ".{0,20}".prop_map(Op::Malformed),
        1 => prop_oneof![
            Just(r#"{"type":"tool.invoke.request","payload":{"invocation_id":"id1","tool_name":"Bash"}}"#.to_owned()),
            Just(r#"{"type":"tool.invoke.result","payload":{"invocation_id":"id1","status":7}}"#.to_owned()),
            Just(r#"{"type":"tool.invoke.stream","payload":{"invocation_id":"id2","chunk":"x","sequence":-1}}"#.to_owned()),
            Just(r#"{"type":"tool.invoke.result","payload":{"invocation_id":"id3","status":"weird","output":null}}"#.to_owned()),
            Just(r#"{"type":"tool.invoke.request","payload":{"invocation_id":"id4","tool_name":"Task"},"metadata":{"delegation_chain":[{"agent_id":"a","invocation_id":"id4"}]}}"#.to_owned()),
            Just(r#"{"type":"agent.text.done","payload":{"text":"full"}}"#.to_owned()),
        ].prop_map(Op::Line),
    ]
}

fn id(i: u8) -> String {
    format!("id{i}")
}

fn status(s: u8) -> Option<ResultStatus> {
    match s {
        0 => Some(ResultStatus::Success),
        1 => Some(ResultStatus::Error),
        2 => Some(ResultStatus::Timeout),
        3 => Some(ResultStatus::Cancelled),
        4 => Some(ResultStatus::Unknown("partial".into())),
        _ => None,
    }
}

fn to_decoded(op: &Op, line: u64) -> Decoded {
    let framed = |t: FrameType, body: Body| {
        Decoded::frame(Frame {
            origin: Origin::at(line),
            ..Frame::new(t, body)
        })
    };
    match op {
        Op::Request(i) => framed(
            FrameType::ToolInvokeRequest,
            Body::Request(ToolInvokeRequest {
                invocation_id: Some(id(*i)),
                tool_name: Some("Bash".into()),
                input: Some(json!({"command": "ls"})),
                ..Default::default()
            }),
        ),
        Op::Stream(i, seq, t) => framed(
            FrameType::ToolInvokeStream,
            Body::Stream(ToolInvokeStream {
                invocation_id: Some(id(*i)),
                tool_name: Some("Bash".into()),
                stream_type: Some(match t {
                    0 => StreamType::Stdout,
                    1 => StreamType::Stderr,
                    2 => StreamType::Progress,
                    _ => StreamType::Unknown("tty".into()),
                }),
                chunk: Some(format!("chunk {line}\n")),
                sequence: *seq,
                extra: Map::new(),
            }),
        ),
        Op::Result(i, s) => framed(
            FrameType::ToolInvokeResult,
            Body::Result(ToolInvokeResult {
                invocation_id: Some(id(*i)),
                tool_name: Some("Bash".into()),
                status: status(*s),
                // The line tells which result frame was applied.
                output: Some(json!(line)),
                output_type: Some(OutputType::Text),
                ..Default::default()
            }),
        ),
        Op::NoId(result) => {
            if *result {
                framed(
                    FrameType::ToolInvokeResult,
                    Body::Result(ToolInvokeResult::default()),
                )
            } else {
                framed(
                    FrameType::ToolInvokeStream,
                    Body::Stream(ToolInvokeStream::default()),
                )
            }
        }
        Op::TextDelta(done) => {
            let mut m = Map::new();
            m.insert("delta".into(), json!("hi "));
            let t = if *done {
                FrameType::AgentTextDone
            } else {
                FrameType::AgentTextDelta
            };
            framed(t, Body::Generic(m))
        }
        Op::Generic(t) => framed(FrameType::from_wire(t), Body::Generic(Map::new())),
        Op::Malformed(text) => match parse_line(line, &format!("{{{text}")) {
            Ok(f) => Decoded::frame(f),
            Err(e) => Decoded::Malformed(e),
        },
        Op::Line(text) => match parse_line(line, text) {
            Ok(f) => Decoded::frame(f),
            Err(e) => Decoded::Malformed(e),
        },
    }
}

/// What a straightforward model of SPEC 3.1–3.3 expects: for each id, the line of the first
/// request, and the line of the first result after it.
fn expected(items: &[Decoded]) -> HashMap<String, (u64, Option<u64>)> {
    let mut m: HashMap<String, (u64, Option<u64>)> = HashMap::new();
    for d in items {
        let Decoded::Frame(f) = d else { continue };
        let line = f.origin.line;
        match &f.body {
            Body::Request(r) => {
                m.entry(r.invocation_id.clone().unwrap_or_default())
                    .or_insert((line, None));
            }
            Body::Result(r) => {
                if let Some(e) = m.get_mut(&r.invocation_id.clone().unwrap_or_default())
                    && e.1.is_none()
                {
                    e.1 = Some(line);
                }
            }
            Body::Stream(_) | Body::Catalog(_) | Body::Generic(_) => {}
        }
    }
    m
}

fn check(items: Vec<Decoded>, finish: bool) -> Result<(), TestCaseError> {
    let frames = items
        .iter()
        .filter(|d| matches!(d, Decoded::Frame(_)))
        .count() as u64;
    let tool_frames = items
        .iter()
        .filter(|d| {
            matches!(d, Decoded::Frame(f) if matches!(f.body, Body::Request(_) | Body::Stream(_) | Body::Result(_)))
        })
        .count();
    let want = expected(&items);
    let mut s = Session::new();
    let mut folded = 0usize;
    for d in items {
        let is_tool = matches!(&d, Decoded::Frame(f) if matches!(f.body, Body::Request(_) | Body::Stream(_) | Body::Result(_)));
        let a = s.apply(d);
        if is_tool && a.invocation.is_some() {
            folded += 1;
        }
    }
    if finish {
        s.finish();
    }

    // One invocation per distinct requested id; the applied result is the first after the request.
    prop_assert_eq!(s.invocations.len(), want.len());
    for inv in &s.invocations {
        let (first_request, first_result) = want[&inv.invocation_id];
        prop_assert_eq!(inv.request_line, first_request);
        prop_assert_eq!(inv.result_line, first_result);
        prop_assert_eq!(inv.status.is_open(), inv.result.is_none());
        // Results built by `Op::Result` carry their own line as output.
        if let (Some(r), Some(l)) = (&inv.result, first_result)
            && r.output.as_ref().is_some_and(serde_json::Value::is_u64)
        {
            prop_assert_eq!(r.output.clone(), Some(json!(l)));
        }
        // Chunks: sequenced ones strictly increasing, no duplicate sequence.
        let seqs: Vec<u64> = inv.stream.chunks().filter_map(|c| c.sequence).collect();
        prop_assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{:?}", seqs);
    }

    // Counts.
    let open = s.invocations.iter().filter(|i| i.status.is_open()).count() as u64;
    let finished = s.invocations.len() as u64 - open;
    prop_assert_eq!(s.counts.invocations, s.invocations.len() as u64);
    prop_assert_eq!(s.counts.running, open);
    prop_assert_eq!(s.counts.running + finished, s.counts.invocations);
    prop_assert_eq!(
        s.counts.failed,
        s.invocations
            .iter()
            .filter(|i| i.status.is_failure())
            .count() as u64
    );
    prop_assert_eq!(
        s.counts.cancelled,
        s.invocations
            .iter()
            .filter(|i| i.status == CallStatus::Cancelled)
            .count() as u64
    );
    prop_assert_eq!(s.counts.frames, frames);

    // Nothing dropped: each tool frame was folded or kept as an event row.
    let tool_events = s
        .items
        .iter()
        .filter(|i| matches!(i, Item::Event(f) if matches!(f.body, Body::Request(_) | Body::Stream(_) | Body::Result(_))))
        .count();
    prop_assert_eq!(folded + tool_events, tool_frames);
    // Every invocation has exactly one feed row pointing at it.
    let rows: HashSet<usize> = s
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Invocation(n) => Some(*n),
            Item::Message(_) | Item::Event(_) => None,
        })
        .collect();
    prop_assert_eq!(rows.len(), s.invocations.len());
    for (n, inv) in s.invocations.iter().enumerate() {
        prop_assert!(matches!(s.items[inv.item], Item::Invocation(k) if k == n));
    }
    Ok(())
}

/// `PROPTEST_CASES` when set (long runs), else `default` (CI).
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(cases(256)) })]

    #[test]
    fn reducer_holds_its_invariants_under_any_order(ops in proptest::collection::vec(op(), 0..80), finish in any::<bool>()) {
        let items: Vec<Decoded> = ops.iter().enumerate().map(|(i, o)| to_decoded(o, i as u64 + 1)).collect();
        check(items, finish)?;
    }

    /// Any permutation of one well-formed session gives the same invocations (by id) as long as
    /// each request still comes first; results never apply twice.
    #[test]
    fn shuffled_well_formed_session(perm in Just((0..30usize).collect::<Vec<_>>()).prop_shuffle()) {
        let mut ops = Vec::new();
        for i in 0..6u8 {
            ops.push(Op::Request(i));
            ops.push(Op::Stream(i, Some(1), 0));
            ops.push(Op::Stream(i, Some(0), 1));
            ops.push(Op::Result(i, i % 4));
            ops.push(Op::Result(i, 0));
        }
        let shuffled: Vec<Op> = perm.iter().map(|&k| ops[k].clone()).collect();
        let items: Vec<Decoded> = shuffled.iter().enumerate().map(|(i, o)| to_decoded(o, i as u64 + 1)).collect();
        check(items, true)?;
    }

    /// Arbitrary bytes as a whole input: the loader and the reducer never panic, and each non-blank
    /// line becomes exactly one frame or one malformed-line finding (NDJSON input).
    #[test]
    fn arbitrary_bytes_load_and_fold(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let loaded = load_bytes(&bytes);
        if loaded.format == rawpv::import::Format::RawpNdjson {
            let non_blank = bytes
                .split(|&b| b == b'\n')
                .filter(|l| !String::from_utf8_lossy(l).trim().is_empty())
                .count();
            // Plus an `invalid-utf8` finding for each line that is not UTF-8.
            let not_utf8 = bytes
                .split(|&b| b == b'\n')
                .filter(|l| std::str::from_utf8(l.strip_suffix(b"\r").unwrap_or(l)).is_err())
                .count();
            prop_assert_eq!(loaded.items.len(), non_blank + not_utf8);
        }
        let s = Session::from_decoded(loaded.items);
        prop_assert_eq!(s.counts.running + s.invocations.iter().filter(|i| !i.status.is_open()).count() as u64, s.counts.invocations);
    }
}

/// Regression (found by `reducer_holds_its_invariants_under_any_order`): with an unsequenced
/// chunk in the buffer, a late chunk was placed after a later one and duplicates could slip in,
/// because the binary search assumed the buffer was partitioned.
#[test]
fn mixed_sequenced_and_unsequenced_chunks_stay_ordered() {
    use rawpv::session::{Chunk, ChunkBuffer, ChunkInsert};
    let chunk = |sequence: Option<u64>, text: &str| Chunk {
        sequence,
        stream_type: StreamType::Stdout,
        text: text.into(),
        line: 0,
    };
    let mut b = ChunkBuffer::default();
    assert_eq!(b.insert(chunk(Some(5), "five ")), ChunkInsert::Appended);
    assert_eq!(b.insert(chunk(None, "none ")), ChunkInsert::Appended);
    assert_eq!(b.insert(chunk(Some(0), "zero ")), ChunkInsert::SlottedIn);
    assert_eq!(b.insert(chunk(Some(5), "again ")), ChunkInsert::Duplicate);
    assert_eq!(b.insert(chunk(Some(7), "seven")), ChunkInsert::Appended);
    assert_eq!(b.text(None), "zero five none seven");
    assert_eq!(b.duplicates, 1);
}
