//! Unified diffs from `corpus/diffs/*` through the `diff` renderer: snapshots at 80 columns
//! (unified) and 140 columns (side by side), plus style assertions (`+` rows green, `-` rows
//! red, emphasis on the changed word, CRLF marker, `\ No newline` marker).
//! Skips (with a message) when the shared corpus is absent.

use std::path::Path;

use rawpv::protocol::OutputType;
use rawpv::render::{RenderCtx, lines_to_string, render_output, wrap};
use rawpv::theme::Theme;
use serde_json::Value;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/diffs");

fn read(name: &str) -> Option<String> {
    let p = Path::new(CORPUS).join(name);
    if crate::support::corpus::skipped(&p) {
        return None;
    }
    let Ok(b) = std::fs::read(&p) else {
        eprintln!("skipping: {} not found", p.display());
        return None;
    };
    Some(String::from_utf8_lossy(&b).into_owned())
}

fn ctx(width: u16, theme: &Theme) -> RenderCtx<'_> {
    let mut cx = RenderCtx::new(width, theme);
    cx.side_by_side = true;
    // The 15-file commit has one 450-line hunk: 200 rows pin the layout and the cut marker.
    cx.limits.max_lines = 200;
    cx
}

#[test]
fn corpus_diff_snapshots() {
    let theme = Theme::dark();
    for name in [
        "unidiff-sample4-crlf-no-newline.diff",
        "godiff-binary-inline-rename.diff",
        "ccl-d784e7e-renames-crlf.diff",
    ] {
        let Some(text) = read(name) else { return };
        for width in [80u16, 140] {
            let r = render_output(
                &OutputType::Diff,
                &Value::String(text.clone()),
                "",
                &Value::Null,
                &ctx(width, &theme),
            );
            let s = lines_to_string(&wrap::wrap_lines(&r.lines, width));
            insta::assert_snapshot!(format!("{name}@{width}"), s);
        }
    }
}

#[test]
fn diff_styles_on_real_diff() {
    let Some(text) = read("unidiff-sample4-crlf-no-newline.diff") else {
        return;
    };
    let theme = Theme::dark();
    let mut cx = ctx(80, &theme);
    cx.side_by_side = false;
    let r = render_output(
        &OutputType::Diff,
        &Value::String(text),
        "",
        &Value::Null,
        &cx,
    );
    let row = |needle: &str| {
        r.lines
            .iter()
            .find(|l| lines_to_string(std::slice::from_ref(*l)).contains(needle))
            .unwrap_or_else(|| panic!("no row with {needle:?}"))
    };
    // `-This should be updated.` is paired with `+This is now updated.`.
    let del = row("This should be updated.");
    let add = row("This is now updated.");
    assert_eq!(del.spans[1].content, "-");
    assert_eq!(del.spans[1].style, theme.diff_del);
    assert_eq!(add.spans[1].content, "+");
    assert_eq!(add.spans[1].style, theme.diff_add);
    // An emphasised word keeps the line's colour on the stronger tint.
    let emph = |l: &ratatui::text::Line<'_>, st: ratatui::style::Style| -> String {
        l.spans
            .iter()
            .filter(|s| s.style.bg == st.bg)
            .map(|s| s.content.as_ref())
            .collect()
    };
    assert_eq!(emph(del, theme.diff_del_emph), "should be");
    assert_eq!(emph(add, theme.diff_add_emph), "is now");
    // CRLF rows end with a dim ␍ marker; no raw CR anywhere.
    assert_eq!(add.spans.last().map(|s| s.content.as_ref()), Some("␍"));
    let all = lines_to_string(&r.lines);
    assert!(!all.contains('\r'));
    assert_eq!(all.matches("⏎ no newline at end of file").count(), 3);
    assert!(all.contains("holá mundo!"));
}

#[test]
fn renames_and_binary_sections() {
    let Some(text) = read("godiff-binary-inline-rename.diff") else {
        return;
    };
    let theme = Theme::dark();
    let r = render_output(
        &OutputType::Diff,
        &Value::String(text),
        "",
        &Value::Null,
        &ctx(80, &theme),
    );
    let s = lines_to_string(&r.lines);
    assert!(
        s.contains("▌logo.png → logo-old.png  (renamed, 100% similar)"),
        "{s}"
    );
    assert!(s.contains("(deleted, binary)"), "{s}");
    assert!(
        !s.contains("HcmV?d00001"),
        "binary patch data must not be shown: {s}"
    );
}
