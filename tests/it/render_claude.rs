//! Renderers on real Claude Code tool results (`toolUseResult` of the shared transcripts):
//! Edit, `MultiEdit`, Write, Read, Bash, Glob, Grep, `TodoWrite`, `WebFetch`, `WebSearch`, Task, each at
//! 80 and 140 columns (140 with the side-by-side diff layout), plus style assertions.
//! Skips (with a message) when the shared corpus is absent.

use rawpv::protocol::OutputType;
use rawpv::render::{RenderCtx, lines_to_string, render_output, wrap};
use rawpv::theme::Theme;
use serde_json::Value;

use crate::support::transcripts;

/// (name, `output_type`, predicate on `toolUseResult`).
type Kind = (&'static str, OutputType, fn(&Value) -> bool);

fn has(v: &Value, k: &str) -> bool {
    v.get(k).is_some()
}

fn kinds() -> Vec<Kind> {
    vec![
        ("edit", OutputType::Diff, |v| {
            has(v, "oldString") && has(v, "structuredPatch")
        }),
        ("multiedit", OutputType::Diff, |v| has(v, "edits")),
        ("write", OutputType::Diff, |v| {
            has(v, "content") && has(v, "filePath") && v.get("type").is_some_and(Value::is_string)
        }),
        ("read", OutputType::FileContent, |v| {
            v.get("type").and_then(Value::as_str) == Some("text") && has(v, "file")
        }),
        ("bash", OutputType::Text, |v| {
            has(v, "stdout") && has(v, "stderr")
        }),
        ("glob", OutputType::FileList, |v| {
            !has(v, "mode")
                && v.get("filenames")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.len() > 2)
        }),
        ("grep", OutputType::FileList, |v| {
            v.get("mode").and_then(Value::as_str) == Some("content")
        }),
        ("todos", OutputType::Structured, |v| has(v, "newTodos")),
        ("webfetch", OutputType::WebContent, |v| {
            has(v, "url") && has(v, "result")
        }),
        ("websearch", OutputType::WebContent, |v| {
            has(v, "query") && has(v, "results")
        }),
        ("task", OutputType::AgentResult, |v| {
            has(v, "totalDurationMs")
        }),
    ]
}

/// Every object `toolUseResult` in the transcripts, in file order.
fn results() -> Option<Vec<Value>> {
    let mut out = Vec::new();
    for rec in transcripts::records()? {
        {
            if let Some(r) = rec.get("toolUseResult").filter(|r| r.is_object()) {
                out.push(r.clone());
            }
        }
    }
    Some(out)
}

fn ctx(width: u16, theme: &Theme) -> RenderCtx<'_> {
    let mut cx = RenderCtx::new(width, theme);
    cx.side_by_side = true;
    cx.limits.max_lines = 60;
    cx
}

#[test]
fn claude_code_results_snapshots() {
    let Some(all) = results() else { return };
    let theme = Theme::dark();
    for (name, ot, pred) in kinds() {
        let Some(v) = all.iter().find(|v| pred(v)) else {
            panic!("no {name} result in the corpus");
        };
        for width in [80u16, 140] {
            let r = render_output(&ot, v, "", &Value::Null, &ctx(width, &theme));
            let s = lines_to_string(&wrap::wrap_lines(&r.lines, width));
            insta::assert_snapshot!(format!("{name}@{width}"), s);
        }
    }
}

#[test]
fn edit_diff_styles() {
    let Some(all) = results() else { return };
    let theme = Theme::dark();
    let mut cx = ctx(80, &theme);
    // Colours of the code do not matter here; highlighting every edit costs seconds in debug.
    cx.highlight = false;
    let mut checked = 0;
    for v in all
        .iter()
        .filter(|v| has(v, "oldString") && has(v, "structuredPatch"))
    {
        let r = render_output(&OutputType::Diff, v, "Edit", &Value::Null, &cx);
        for l in &r.lines {
            let Some(sign) = l.spans.get(1) else { continue };
            // Rows are `gutter`, sign, content…: `+` rows green, `-` rows red.
            if sign.content == "+" && l.spans[0].content.ends_with('│') {
                assert_eq!(sign.style, theme.diff_add);
                checked += 1;
            }
            if sign.content == "-" && l.spans[0].content.ends_with('│') {
                assert_eq!(sign.style, theme.diff_del);
            }
        }
    }
    assert!(checked > 10, "only {checked} added rows seen");
}

#[test]
fn every_result_renders_without_control_chars() {
    let Some(all) = results() else { return };
    let theme = Theme::dark();
    let mut cx = RenderCtx::new(100, &theme);
    cx.highlight = false;
    for (name, ot, pred) in kinds() {
        for v in all.iter().filter(|v| pred(v)) {
            let r = render_output(&ot, v, "", &Value::Null, &cx);
            for l in &r.lines {
                for sp in &l.spans {
                    assert!(
                        !sp.content.chars().any(char::is_control),
                        "{name}: control char in {:?}",
                        sp.content
                    );
                }
            }
        }
    }
}
