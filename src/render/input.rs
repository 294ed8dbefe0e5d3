//! Input renderers: a request's `input` drawn by tool.
//!
//! Who calls it: the detail pane and `print --detail` through [`render_input`].
//! Bash (`command`) → highlighted shell (plus its description); Edit / `MultiEdit` → the diff of
//! the edit; Write → the new file, highlighted by its path; Read → path and line range; anything
//! `TodoWrite` → the checklist; `ExitPlanMode` → the plan as markdown; Task / Agent → description
//! and prompt (markdown); anything else (including those tools with unexpected shapes) → the
//! JSON tree. Pure, bounded.

use ratatui::text::{Line, Span};
use serde_json::Value;

use super::{Out, RenderCtx, Rendered, field, str_field};

/// Renders a tool's input (see the module docs).
pub fn render_input(tool_name: &str, input: &Value, cx: &RenderCtx<'_>) -> Rendered {
    let theme = cx.theme;
    match tool_name {
        "Bash" | "bash" | "shell" | "BashOutput" if str_field(input, &["command"]).is_some() => {
            let cmd = str_field(input, &["command"]).unwrap_or_default();
            let mut out = Out::new(cx);
            if let Some(d) = str_field(input, &["description"]) {
                let mut spans = vec![Span::styled("# ", theme.dim)];
                spans.extend(super::text::plain_spans(d, theme.dim, theme));
                out.push(Line::from(spans));
            }
            let code = super::code::build_code_lines(cmd, Some("sh"), None, 1, false, cx);
            for mut l in code.lines {
                l.spans.insert(0, Span::styled("$ ", theme.prompt));
                out.push(l);
            }
            out.finish(theme)
        }
        "Edit" | "MultiEdit" | "str_replace_based_edit_tool" | "str_replace_editor"
            if field(input, &["old_string", "oldString", "edits", "old_str"]).is_some() =>
        {
            super::diff::build_edit_lines(input, None, cx)
        }
        "Write" | "create_file" if str_field(input, &["content", "file_text"]).is_some() => {
            let content = str_field(input, &["content", "file_text"]).unwrap_or_default();
            let path = super::file_path(input, &Value::Null);
            let mut out = Out::new(cx);
            out.push(path_line(path.unwrap_or("(no path)"), "", cx));
            out.extend(super::code::build_code_lines(content, None, path, 1, true, cx).lines);
            out.finish(theme)
        }
        "Read" | "view" if super::file_path(input, &Value::Null).is_some() => {
            let path = super::file_path(input, &Value::Null).unwrap_or_default();
            let offset = field(input, &["offset"]).and_then(Value::as_u64);
            let limit = field(input, &["limit"]).and_then(Value::as_u64);
            let range = match (offset, limit) {
                (Some(o), Some(l)) => format!("  lines {o}–{}", o + l.saturating_sub(1)),
                (Some(o), None) => format!("  from line {o}"),
                (None, Some(l)) => format!("  first {l} lines"),
                (None, None) => String::new(),
            };
            Rendered {
                lines: vec![path_line(path, &range, cx)],
                truncated: false,
            }
        }
        "TodoWrite" | "todo_write" => super::json::build_todo_lines(input, cx)
            .unwrap_or_else(|| super::json::build_json_lines(input, cx)),
        "ExitPlanMode" | "exit_plan_mode" if str_field(input, &["plan"]).is_some() => {
            super::markdown::build_markdown_lines(str_field(input, &["plan"]).unwrap_or(""), cx)
        }
        "Task" | "Agent" if str_field(input, &["prompt"]).is_some() => {
            let mut out = Out::new(cx);
            if let Some(d) = str_field(input, &["description"]) {
                let mut spans = vec![Span::styled("agent: ", theme.dim)];
                spans.extend(super::text::plain_spans(d, theme.title, theme));
                if let Some(t) = str_field(input, &["subagent_type", "subagentType"]) {
                    spans.push(Span::styled(format!("  ({t})"), theme.dim));
                }
                out.push(Line::from(spans));
                out.push(Line::default());
            }
            let prompt = str_field(input, &["prompt"]).unwrap_or("");
            out.extend(super::markdown::build_markdown_lines(prompt, cx).lines);
            out.finish(theme)
        }
        _ => super::json::build_json_lines(input, cx),
    }
}

/// `path  extra` with the path in the diff-file style.
pub(crate) fn path_line(path: &str, extra: &str, cx: &RenderCtx<'_>) -> Line<'static> {
    let mut spans = super::text::plain_spans(path, cx.theme.diff_file, cx.theme);
    if !extra.is_empty() {
        spans.push(Span::styled(extra.to_owned(), cx.theme.dim));
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::lines_to_string;
    use crate::theme::Theme;
    use serde_json::json;

    #[test]
    fn read_and_bash_inputs() {
        let t = Theme::dark();
        let cx = RenderCtx::new(80, &t);
        let r = render_input(
            "Read",
            &json!({"file_path": "/a/b.rs", "offset": 10, "limit": 5}),
            &cx,
        );
        assert_eq!(lines_to_string(&r.lines), "/a/b.rs  lines 10–14\n");
        let r = render_input(
            "Bash",
            &json!({"command": "ls -l\necho hi", "description": "List"}),
            &cx,
        );
        assert_eq!(lines_to_string(&r.lines), "# List\n$ ls -l\n$ echo hi\n");
        let todos = json!({"todos": [{"content": "a", "status": "pending", "activeForm": "A"}]});
        let r = render_input("TodoWrite", &todos, &cx);
        assert_eq!(lines_to_string(&r.lines), "Todos 0/1 done\n☐ a\n");
        let r = render_input("ExitPlanMode", &json!({"plan": "## Plan\n\n- x"}), &cx);
        assert_eq!(lines_to_string(&r.lines), "## Plan\n\n• x\n");
        let r = render_input("Other", &json!({"x": 1}), &cx);
        assert_eq!(lines_to_string(&r.lines), "▾ { 1 key\n    \"x\": 1\n");
    }
}
