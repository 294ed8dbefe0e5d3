//! Input renderers on real Claude Code `tool_use` inputs (Bash, Edit, `MultiEdit`, Write, Read,
//! `TodoWrite`, Grep) at 80 and 140 columns, and `rawpv print --detail` end to end (plain and
//! coloured). Skips (with a message) when the shared corpus is absent.

use rawpv::render::{RenderCtx, lines_to_string, render_input, wrap};
use rawpv::theme::Theme;
use std::path::Path;

use serde_json::Value;

use crate::support::transcripts;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/claude-code");

/// Every `(tool name, input)` of the assistant `tool_use` blocks, in file order.
fn tool_uses() -> Option<Vec<(String, Value)>> {
    let mut out = Vec::new();
    for rec in transcripts::records()? {
        {
            let Some(blocks) = rec.pointer("/message/content").and_then(Value::as_array) else {
                continue;
            };
            for b in blocks {
                if b.get("type").and_then(Value::as_str) == Some("tool_use")
                    && let (Some(name), Some(input)) =
                        (b.get("name").and_then(Value::as_str), b.get("input"))
                {
                    out.push((name.to_owned(), input.clone()));
                }
            }
        }
    }
    Some(out)
}

#[test]
fn tool_inputs_snapshots() {
    let Some(all) = tool_uses() else { return };
    let theme = Theme::dark();
    for tool in [
        "Bash",
        "Edit",
        "MultiEdit",
        "Write",
        "Read",
        "TodoWrite",
        "Grep",
    ] {
        let Some((_, input)) = all.iter().find(|(n, _)| n == tool) else {
            panic!("no {tool} tool_use in the corpus");
        };
        for width in [80u16, 140] {
            let mut cx = RenderCtx::new(width, &theme);
            cx.side_by_side = true;
            cx.limits.max_lines = 40;
            let r = render_input(tool, input, &cx);
            let s = lines_to_string(&wrap::wrap_lines(&r.lines, width));
            insta::assert_snapshot!(format!("input_{tool}@{width}"), s);
        }
    }
}

#[test]
fn print_detail_plain_and_colour() {
    let path = Path::new(CORPUS).join("cc-v2.0.37-planmode-askuser-bashoutput.jsonl");
    if crate::support::corpus::skipped(&path) {
        return;
    }
    let run = |color: &str| {
        let out = assert_cmd::Command::cargo_bin("rawpv")
            .unwrap()
            .args(["print", "--detail", "--width", "100", "--color", color])
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let plain = run("never");
    assert!(!plain.contains('\x1b'));
    // The viewer's detail lines (the same builder): sections, then the header of each call.
    assert!(plain.contains("── Output (diff) ──"), "{plain}");
    assert!(
        plain.lines().any(|l| l.starts_with("Edit  ok  ")),
        "{plain}"
    );
    let colour = run("always");
    // Only our own SGR: every ESC starts `ESC[0;…m` or `ESC[0m`.
    assert!(
        colour
            .match_indices('\x1b')
            .all(|(i, _)| colour[i..].starts_with("\x1b[0"))
    );
    assert!(colour.contains("\x1b[0;32m+"), "added rows are green");
    assert_eq!(
        rawpv::render::lines_to_string(&[]),
        String::new(),
        "sanity: empty input gives empty text"
    );
}
