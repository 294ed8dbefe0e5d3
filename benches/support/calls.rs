//! Synthetic sessions for the benches: finished tool calls built as frames directly (the benches
//! measure drawing and navigation, not parsing; a million calls through `examples/gen.rs` would
//! need ~5M frames), plus the thread's on-CPU clock.
//!
//! Who uses it: `benches/draw.rs` and `benches/navigate.rs`, through
//! `#[path = "support/calls.rs"] mod calls;` (a file directly under `benches/` would be a bench
//! target of its own).
//!
//! Shape of call `i`: tool `tools[i % tools.len()]`, input `{"command": "cargo test --lib
//! case_i"}` (plus `file_path` when set), a four-line text output, status error for one call in
//! 13, `duration_ms = i % 997`, timestamps 1 s apart from 2026-11-18; with `prompt_every = Some(k)`
//! a prompt frame `turn T please` precedes every k-th call.

use rawpv::import::Decoded;
use rawpv::protocol::{
    Body, Frame, FrameType, OutputType, ResultStatus, Timestamp, ToolInvokeRequest,
    ToolInvokeResult,
};
use serde_json::json;

/// What [`finished_calls`] builds.
pub struct Shape {
    /// Tool names, used in turn.
    pub tools: &'static [&'static str],
    /// A prompt before every this many calls (`None`: no prompts).
    pub prompt_every: Option<usize>,
    /// A `file_path` in every input.
    pub file_path: Option<&'static str>,
}

/// `n` finished calls of shape `shape` (see the module docs), as decoded frames in order.
pub fn finished_calls(n: usize, shape: &Shape) -> Vec<Decoded> {
    let prompts = shape.prompt_every.map_or(0, |k| n / k.max(1) + 1);
    let mut v = Vec::with_capacity(2 * n + prompts);
    for i in 0..n {
        let ts = Some(Timestamp(1_795_000_000_000 + i as i64 * 1_000));
        if let Some(k) = shape.prompt_every
            && i % k.max(1) == 0
        {
            let mut payload = serde_json::Map::new();
            payload.insert(
                "text".into(),
                json!(format!("turn {} please", i / k.max(1))),
            );
            let mut p = Frame::new(FrameType::ControlPromptRequest, Body::Generic(payload));
            p.envelope.timestamp = ts;
            v.push(Decoded::frame(p));
        }
        let id = format!("{i:08x}-0000-4000-8000-000000000000");
        let tool = shape.tools[i % shape.tools.len()];
        let mut input = json!({"command": format!("cargo test --lib case_{i}")});
        if let (Some(path), Some(obj)) = (shape.file_path, input.as_object_mut()) {
            obj.insert("file_path".into(), json!(path));
        }
        let mut req = Frame::new(
            FrameType::ToolInvokeRequest,
            Body::Request(ToolInvokeRequest {
                invocation_id: Some(id.clone()),
                tool_name: Some(tool.into()),
                input: Some(input),
                ..Default::default()
            }),
        );
        req.envelope.timestamp = ts;
        let mut res = Frame::new(
            FrameType::ToolInvokeResult,
            Body::Result(ToolInvokeResult {
                invocation_id: Some(id),
                tool_name: Some(tool.into()),
                status: Some(if i % 13 == 0 {
                    ResultStatus::Error
                } else {
                    ResultStatus::Success
                }),
                output: Some(json!(format!(
                    "running 3 tests\ntest a ... ok\ntest b ... ok\ntest case_{i} ... ok\n"
                ))),
                output_type: Some(OutputType::Text),
                duration_ms: Some((i % 997) as f64),
                ..Default::default()
            }),
        );
        res.envelope.timestamp = ts;
        v.push(Decoded::frame(req));
        v.push(Decoded::frame(res));
    }
    v
}

/// On-CPU time of this thread in ns (Linux `/proc/thread-self/schedstat`); 0 elsewhere.
pub fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}
