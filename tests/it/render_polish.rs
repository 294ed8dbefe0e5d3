//! Renderer polish pinned by snapshots: syntax colour on `+`/`-` diff lines, wrapped diff rows
//! continuing after the gutter, cursor-up redraws (docker pull) in the text renderer, Edit /
//! Write inputs summarised beside a result that shows the real diff, and `print --detail`
//! wrapping at word boundaries. Small fixtures written for these cases (no corpus needed).

use ratatui::style::Color;
use ratatui::text::Line;
use rawpv::app::App;
use rawpv::detail::{JobKind, Stage};
use rawpv::import;
use rawpv::protocol::OutputType;
use rawpv::render::{RenderCtx, lines_to_string, render_input_beside, render_output, sgr, wrap};
use rawpv::theme::Theme;
use serde_json::{Value, json};

const RUST_DIFF: &str = "diff --git a/src/lib.rs b/src/lib.rs\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,4 +1,5 @@\n fn main() {\n-    let total = old_sum(1, 2);\n+    let total = new_sum(1, 2);\n     println!(\"{total}\");\n+    // a comment that is long enough to wrap at forty columns, after the gutter\n }\n";

fn diff(width: u16, highlight: bool) -> Vec<Line<'static>> {
    let theme = Theme::dark();
    let mut cx = RenderCtx::new(width, &theme);
    cx.highlight = highlight;
    render_output(
        &OutputType::Diff,
        &Value::String(RUST_DIFF.to_owned()),
        "Bash",
        &Value::Null,
        &cx,
    )
    .lines
}

#[test]
fn added_and_removed_lines_get_syntax_colour() {
    let theme = Theme::dark();
    let lines = diff(120, true);
    let ansi = sgr::lines_to_ansi(&lines).replace('\x1b', "ESC");
    insta::assert_snapshot!("diff_syntax_on_changed_lines", ansi);
    // `-    let total = old_sum(1, 2);` (row 3) and its `+` partner (row 4).
    for (row, bg, emph) in [
        (3, theme.diff_del_line, theme.diff_del_emph),
        (4, theme.diff_add_line, theme.diff_add_emph),
    ] {
        let l = &lines[row];
        let code: Vec<_> = l.spans.iter().skip(2).collect();
        // Every code span keeps its syntax colour, emphasised words too (delta's way); the
        // words are on the stronger tint, the rest on the line's background, which is also
        // the line's style (the pane tints the rest of the row with it).
        assert!(
            code.iter()
                .all(|s| (s.style.bg == bg.bg || s.style.bg == emph.bg)
                    && matches!(s.style.fg, Some(Color::Rgb(..)))),
            "row {row}: {l:?}"
        );
        assert_eq!(l.style, bg, "row {row}");
        let emphasised: String = code
            .iter()
            .filter(|s| s.style.bg == emph.bg)
            .map(|s| s.content.as_ref())
            .collect();
        assert!(emphasised.contains("_sum"), "row {row}: {emphasised:?}");
    }
    // The sign keeps the add colour.
    assert_eq!(lines[4].spans[1].style, theme.diff_add);
}

#[test]
fn wrapped_diff_rows_continue_after_the_gutter() {
    let lines = diff(40, false);
    let s = lines_to_string(&wrap::wrap_lines(&lines, 40));
    insta::assert_snapshot!("diff_wrapped_rows@40", s);
    for row in s.lines() {
        assert!(row.chars().count() <= 40, "{row:?}");
    }
    // Continuation rows start with an empty gutter and the code column.
    assert!(s.contains("\n    │ enough"), "{s}");
    // With wrapping off, rows are not split.
    let theme = Theme::dark();
    let mut cx = RenderCtx::new(40, &theme);
    cx.highlight = false;
    cx.wrap = false;
    let r = render_output(
        &OutputType::Diff,
        &Value::String(RUST_DIFF.to_owned()),
        "",
        &Value::Null,
        &cx,
    );
    assert_eq!(r.lines.len(), diff(200, false).len());
}

#[test]
fn docker_pull_redraw_shows_final_lines() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/docker-pull-redraw.txt"
    ))
    .unwrap_or_default();
    let theme = Theme::dark();
    let cx = RenderCtx::new(80, &theme);
    let r = render_output(
        &OutputType::Text,
        &Value::String(text),
        "Bash",
        &Value::Null,
        &cx,
    );
    let s = lines_to_string(&r.lines);
    insta::assert_snapshot!("docker_pull_redraw", s);
    assert!(!s.contains("Downloading"), "{s}");
    assert!(!s.chars().any(|c| c.is_control() && c != '\n'), "{s:?}");
}

#[test]
fn edit_input_is_summarised_beside_a_real_diff() {
    let theme = Theme::dark();
    let mut cx = RenderCtx::new(80, &theme);
    cx.highlight = false;
    let input = json!({"file_path": "/p/src/a.rs", "old_string": "let x = 1;\nlet y = 2;", "new_string": "let x = 10;", "replace_all": true});
    let output = json!({"filePath": "/p/src/a.rs", "structuredPatch": [{"oldStart": 40, "oldLines": 2, "newStart": 40, "newLines": 1, "lines": ["-let x = 1;", "-let y = 2;", "+let x = 10;"]}]});
    let inp = render_input_beside(
        "Edit",
        &input,
        Some((&OutputType::Diff, &output)),
        false,
        &cx,
    );
    let out = render_output(&OutputType::Diff, &output, "Edit", &input, &cx);
    let s = format!(
        "{}---\n{}",
        lines_to_string(&inp.lines),
        lines_to_string(&out.lines)
    );
    insta::assert_snapshot!("edit_input_beside_diff", s);
    // A text output (no diff) keeps the input's own diff.
    let text = json!("The file was updated.");
    let inp = render_input_beside("Edit", &input, Some((&OutputType::Text, &text)), false, &cx);
    assert!(lines_to_string(&inp.lines).contains("│-let x = 1;"));
    // MultiEdit and Write.
    let multi = json!({"file_path": "f.py", "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c\nd", "new_string": "", "replace_all": true}]});
    let mo = json!({"filePath": "f.py", "edits": [{"old_string": "a", "new_string": "b"}]});
    let inp = render_input_beside(
        "MultiEdit",
        &multi,
        Some((&OutputType::Diff, &mo)),
        false,
        &cx,
    );
    insta::assert_snapshot!("multiedit_input_beside_diff", lines_to_string(&inp.lines));
    let write = json!({"file_path": "n.txt", "content": "a\nb\n"});
    let wo = json!({"type": "create", "filePath": "n.txt", "content": "a\nb\n"});
    let inp = render_input_beside("Write", &write, Some((&OutputType::Diff, &wo)), false, &cx);
    assert_eq!(
        lines_to_string(&inp.lines),
        "n.txt  2 lines, 4 B  (the change is shown in the output)\n"
    );
}

#[test]
fn print_detail_wraps_at_word_boundaries() {
    let rec = concat!(
        r#"{"type":"tool.invoke.request","payload":{"invocation_id":"a","tool_name":"Bash","input":{"command":"echo"}}}"#,
        "\n",
        r#"{"type":"tool.invoke.result","payload":{"invocation_id":"a","status":"success","output":"the quick brown fox jumps over the lazy dog and keeps running through the project directory supercalifragilisticexpialidocious_identifier_longer_than_the_row\n","output_type":"text"}}"#,
        "\n"
    );
    let app = App::headless(import::load_bytes(rec.as_bytes()).items, "test");
    let mut out = Vec::new();
    rawpv::cmd::print::write_detail(&mut out, app.session(), 30, false).unwrap_or_default();
    let s = String::from_utf8_lossy(&out).into_owned();
    insta::assert_snapshot!("print_detail_word_wrap@30", s);
    for w in ["quick", "brown", "jumps", "running", "project", "directory"] {
        assert!(s.contains(w), "{w} split: {s}");
    }
}

#[test]
fn heavy_diff_shows_its_first_screen_at_once() {
    use std::fmt::Write as _;
    // No syntax for `.txt`: the full render stays cheap in debug builds.
    let mut d = String::from("--- a/x.txt\n+++ b/x.txt\n@@ -1,3000 +1,3000 @@\n");
    for i in 0..3000 {
        let _ = writeln!(d, "-let v{i} = old({i});\n+let v{i} = new({i});");
    }
    let out = serde_json::to_string(&d).unwrap_or_default();
    let rec = format!(
        "{}\n{}\n",
        r#"{"type":"tool.invoke.request","payload":{"invocation_id":"d","tool_name":"Bash","input":{"command":"git diff"}}}"#,
        format_args!(
            r#"{{"type":"tool.invoke.result","payload":{{"invocation_id":"d","status":"success","output":{out},"output_type":"diff"}}}}"#
        )
    );
    let mut app = App::headless(import::load_bytes(rec.as_bytes()).items, "test");
    let area = ratatui::layout::Rect::new(0, 0, 160, 40);
    app.prepare(area);
    // The first frame: rendered rows (gutter, sign), folded, while the full render is queued.
    let text = lines_to_string(app.detail_lines());
    assert!(text.contains("   1      │-let v0 = old(0);"), "{text}");
    assert!(text.contains("rendering"), "{text}");
    assert!(
        app.detail_lines().len() < 400,
        "{}",
        app.detail_lines().len()
    );
    assert!(
        matches!(
            (app.queued_job().map(|j| &j.kind), app.detail().stage()),
            (Some(JobKind::FirstScreens { rows }), Stage::Quick { rows: q, .. }) if *rows == q
        ),
        "{:?}",
        app.detail().stage()
    );
    // Job 1: those screens highlighted (still partial); job 2: everything plain, the shown
    // screens spliced in; job 3: everything highlighted.
    app.run_jobs_inline();
    assert!(matches!(app.detail().stage(), Stage::FirstScreens { .. }));
    let first = app.detail_lines().to_vec();
    app.prepare(area);
    assert!(matches!(
        app.queued_job().map(|j| &j.kind),
        Some(JobKind::Plain { .. })
    ));
    app.run_jobs_inline();
    assert_eq!(app.detail().stage(), Stage::Plain);
    let marker = first
        .iter()
        .position(|l| lines_to_string(std::slice::from_ref(l)).contains("rendering"))
        .unwrap_or(0);
    assert!(marker > 50, "{marker}");
    assert_eq!(app.detail_lines()[..marker], first[..marker]);
    app.prepare(area);
    assert!(matches!(
        app.queued_job().map(|j| &j.kind),
        Some(JobKind::Highlighted)
    ));
    settle(&mut app, area);
    assert_eq!(app.detail().stage(), Stage::Complete);
    let text = lines_to_string(app.detail_lines());
    assert!(!text.contains("rendering"), "{text}");
    assert!(text.contains("more lines (press o to expand)"), "{text}");
    // Expanded: the quick rendering grows as the view scrolls, before the full one lands.
    app.update(rawpv::app::Msg::Action(rawpv::action::Action::FocusNext));
    app.update(rawpv::app::Msg::Action(rawpv::action::Action::ToggleExpand));
    app.prepare(area);
    let first = app.detail_lines().len();
    assert!(first < 1000, "{first}");
    for _ in 0..20 {
        app.update(rawpv::app::Msg::Action(rawpv::action::Action::PageDown));
        app.prepare(area);
    }
    assert!(
        app.view().detail.scroll > 600,
        "{}",
        app.view().detail.scroll
    );
    assert!(app.detail_lines().len() > first);
    // Following the bottom: the quick rendering grows until it is complete, then stays.
    app.update(rawpv::app::Msg::Action(rawpv::action::Action::Bottom));
    for _ in 0..30 {
        app.prepare(area);
    }
    let quick = |app: &App| match app.detail().stage() {
        Stage::Quick { rows, cut } | Stage::FirstScreens { rows, cut } => Some((rows, cut)),
        Stage::Empty | Stage::Plain | Stage::Complete => None,
    };
    let q = quick(&app);
    app.prepare(area);
    assert_eq!(quick(&app), q);
    assert_eq!(q.map(|q| q.1), Some(false), "{q:?}");
    settle(&mut app, area);
    assert!(
        app.detail_lines().len() > 6000,
        "{}",
        app.detail_lines().len()
    );
}

/// Prepares and runs render jobs until none is left (the loop would spawn them).
fn settle(app: &mut App, area: ratatui::layout::Rect) {
    for _ in 0..10 {
        app.prepare(area);
        if app.queued_job().is_none() {
            return;
        }
        app.run_jobs_inline();
    }
}
