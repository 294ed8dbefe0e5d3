//! Fuzz target: the JSON tree (`render::json::build_json_lines`) and todo lists on arbitrary JSON,
//! at every expand depth, with a set of toggled paths. Checks: no panic, clean spans.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use rawpv::render::RenderCtx;
use rawpv::render::json::{build_json_lines, build_todo_lines};
use rawpv::theme::Theme;
use serde_json::Value;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let [depth, rest @ ..] = data else {
        return;
    };
    let Ok(v) = serde_json::from_slice::<Value>(rest) else {
        return;
    };
    let theme = Theme::dark();
    let toggled: HashSet<String> = ["$", "$[0]", "$.a", "$.todos", "$[\"\"]"]
        .into_iter()
        .map(String::from)
        .collect();
    let mut cx = RenderCtx::new(80, &theme);
    cx.expand_depth = usize::from(*depth % 8);
    cx.limits.max_lines = 5_000;
    if depth & 0x80 != 0 {
        cx.toggled = Some(&toggled);
    }
    common::assert_lines_clean(&build_json_lines(&v, &cx).lines);
    if let Some(r) = build_todo_lines(&v, &cx) {
        common::assert_lines_clean(&r.lines);
    }
});
