//! The embedded demo session (`assets/demo.ndjson`, `source::DEMO`) exercises what it promises:
//! every tool frame type and `output_type`, all catalog statuses and severities, a re-publish that
//! changes a status, subagents, parallel calls, out-of-order streams; ids and timestamps are sane.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use rawpv::check::is_uuid_v4;
use rawpv::import::{Decoded, load_bytes};
use rawpv::protocol::{Body, FrameType, OutputType, Severity, StreamType, ToolStatus};
use rawpv::session::Session;
use rawpv::source::DEMO;

fn frames() -> Vec<rawpv::protocol::Frame> {
    load_bytes(DEMO.as_bytes())
        .items
        .into_iter()
        .map(|d| match d {
            Decoded::Frame(f) => *f,
            other => panic!("demo line is not a frame: {other:?}"),
        })
        .collect()
}

#[test]
fn demo_is_well_formed_and_ordered() {
    let frames = frames();
    assert!((40..=90).contains(&frames.len()), "{} frames", frames.len());
    let mut last = None;
    for f in &frames {
        let ts = f
            .envelope
            .timestamp
            .expect("every demo frame has a timestamp");
        assert!(
            last.is_none_or(|l| ts >= l),
            "timestamps go back at line {}",
            f.origin.line
        );
        last = Some(ts);
        assert!(f.field_errors.is_empty(), "line {}", f.origin.line);
        if let Body::Request(r) = &f.body {
            let id = r.invocation_id.as_deref().unwrap();
            assert!(is_uuid_v4(id), "{id}");
        }
    }
    let session_ids: BTreeSet<_> = frames
        .iter()
        .map(|f| f.envelope.session_id.clone())
        .collect();
    assert_eq!(session_ids.len(), 1);
}

#[test]
fn demo_covers_every_frame_and_output_type() {
    let frames = frames();
    let types: BTreeSet<&str> = frames.iter().map(|f| f.frame_type.as_str()).collect();
    for t in [
        FrameType::ToolCatalogPublish,
        FrameType::ToolInvokeRequest,
        FrameType::ToolInvokeStream,
        FrameType::ToolInvokeResult,
        FrameType::ControlPromptRequest,
        FrameType::AgentTextDelta,
        FrameType::AgentTextDone,
        FrameType::AgentThinkingDelta,
        FrameType::AgentThinkingDone,
        FrameType::AgentInteractionRequest,
        FrameType::SessionUsage,
        FrameType::SessionTurnEnd,
        FrameType::SessionError,
    ] {
        assert!(types.contains(t.as_str()), "no {t} frame");
    }
    let output_types: BTreeSet<&str> = frames
        .iter()
        .filter_map(|f| match &f.body {
            Body::Result(r) => r.output_type.as_ref().map(OutputType::as_str),
            _ => None,
        })
        .collect();
    for ot in OutputType::ALL {
        assert!(output_types.contains(ot.as_str()), "no {ot} result");
    }
    let streams: BTreeSet<&str> = frames
        .iter()
        .filter_map(|f| match &f.body {
            Body::Stream(s) => s.stream_type.as_ref().map(StreamType::as_str),
            _ => None,
        })
        .collect();
    assert_eq!(streams.len(), StreamType::ALL.len());
}

#[test]
fn demo_session_shape() {
    let s = Session::from_decoded(load_bytes(DEMO.as_bytes()).items);
    // A parallel group of three calls.
    let groups: Vec<_> = s
        .invocations
        .iter()
        .filter_map(|i| i.parallel_group_id.as_deref())
        .collect();
    assert_eq!(groups.len(), 3);
    // A subagent: its calls carry the delegation chain and hang under the Task.
    let task = s
        .invocations
        .iter()
        .position(|i| i.tool_name == "Task")
        .unwrap();
    assert_eq!(s.invocations[task].children.len(), 2);
    // The first Bash streamed in several chunks, one out of order, rebuilt in order.
    let bash = &s.invocations[s
        .invocations
        .iter()
        .position(|i| i.tool_name == "Bash")
        .unwrap()];
    let seqs: Vec<_> = bash.stream.chunks().filter_map(|c| c.sequence).collect();
    assert_eq!(seqs, (0..8).collect::<Vec<_>>());
    let arrival: Vec<_> = {
        let mut v: Vec<_> = bash.stream.chunks().map(|c| (c.line, c.sequence)).collect();
        v.sort_unstable();
        v.into_iter().filter_map(|(_, s)| s).collect()
    };
    assert_ne!(arrival, seqs, "one chunk must arrive out of order");
    assert!(
        bash.stream.text(None).contains('\u{1b}'),
        "ANSI colour in the Bash output"
    );
    assert!(s.invocations.iter().all(|i| !i.status.is_open()));
}

#[test]
fn demo_catalog_has_all_statuses_and_severities() {
    let s = Session::from_decoded(load_bytes(DEMO.as_bytes()).items);
    let first = &s.publishes[0].catalog;
    let statuses: BTreeSet<String> = first
        .tools
        .iter()
        .map(|t| t.effective_status().as_str().to_owned())
        .collect();
    let all: BTreeSet<String> = ToolStatus::ALL
        .iter()
        .map(|x| x.as_str().to_owned())
        .collect();
    assert_eq!(statuses, all);
    for t in &first.tools {
        if t.effective_status() != ToolStatus::Available {
            assert!(t.status_description.is_some(), "{} has no reason", t.name);
        }
    }
    let severities: BTreeSet<_> = first
        .diagnostics
        .iter()
        .filter_map(|d| d.severity.clone())
        .map(|x| x.as_str().to_owned())
        .collect();
    let all: BTreeSet<_> = Severity::ALL
        .iter()
        .map(|x| x.as_str().to_owned())
        .collect();
    assert_eq!(severities, all);
}

#[test]
fn republish_changes_status_and_current_catalog_follows() {
    let s = Session::from_decoded(load_bytes(DEMO.as_bytes()).items);
    assert_eq!(s.publishes.len(), 2);
    let grep = |c: &rawpv::protocol::CatalogPublish| {
        c.tools
            .iter()
            .find(|t| t.name == "Grep")
            .unwrap()
            .effective_status()
    };
    assert_eq!(grep(&s.publishes[0].catalog), ToolStatus::Degraded);
    assert_eq!(grep(&s.publishes[1].catalog), ToolStatus::Available);
    assert_eq!(grep(s.catalog().unwrap()), ToolStatus::Available);
    assert!(s.publishes[1].timestamp > s.publishes[0].timestamp);
}
