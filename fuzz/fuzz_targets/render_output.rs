//! Fuzz target: `render::render_output` for every `output_type` on arbitrary JSON or strings
//! (unified diffs, ANSI text, markdown, trees, todos, …), with the render flags varied.
//! Byte 0 picks the `output_type`, byte 1 the flags and width, byte 2 the request input; the rest
//! is the output (JSON when it parses, else a string). Checks: no panic, no control or invisible
//! character in any rendered span.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rawpv::protocol::OutputType;
use rawpv::render::{RenderCtx, render_input, render_output};
use rawpv::theme::Theme;
use serde_json::{Value, json};

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let [ot, flags, inp, rest @ ..] = data else {
        return;
    };
    let output_type = OutputType::ALL
        .get(usize::from(*ot) % (OutputType::ALL.len() + 1))
        .cloned()
        .unwrap_or_else(|| OutputType::Unknown("x-fuzz".into()));
    let text = String::from_utf8_lossy(rest);
    let output = serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text.into_owned()));
    let theme = if flags & 1 == 0 { Theme::dark() } else { Theme::mono() };
    let width = [1u16, 20, 80, 200][usize::from(flags >> 1 & 3)];
    let mut cx = RenderCtx::new(width, &theme);
    cx.highlight = flags & 8 != 0;
    cx.side_by_side = flags & 16 != 0;
    cx.flat_list = flags & 32 != 0;
    cx.expand_depth = usize::from(flags >> 6);
    cx.limits.max_lines = 2_000;
    let (tool, input) = match inp % 4 {
        0 => ("Edit", json!({"file_path": "src/a.rs", "old_string": "a\nb", "new_string": "a\nc"})),
        1 => ("Read", json!({"file_path": "x.py"})),
        2 => ("Bash", output.clone()),
        _ => ("mcp__x", Value::Null),
    };
    let r = render_output(&output_type, &output, tool, &input, &cx);
    common::assert_lines_clean(&r.lines);
    let r = render_input(tool, &output, &cx);
    common::assert_lines_clean(&r.lines);
});
