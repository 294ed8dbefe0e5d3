//! Input renderers: a request's `input` drawn by tool.
//!
//! Who calls it: the detail pane and `print --detail` through [`render_input`].
//! Bash (`command`; Codex `shell` / `exec_command`, Gemini `run_shell_command` too) →
//! highlighted shell (plus its description); Edit / `MultiEdit` (Gemini `replace`) → the diff of
//! the edit; Write (Gemini `write_file`) → the new file, highlighted by its path; Codex
//! `apply_patch` → the patch text, highlighted as a diff; Read → path and line range;
//! `TodoWrite`, Codex `update_plan`, Gemini `write_todos` → the checklist; `ExitPlanMode` → the
//! plan as markdown; Task / Agent (Gemini `delegate_to_agent`: agent name and objective) →
//! description and prompt (markdown); anything else (including those tools with unexpected
//! shapes) → the JSON tree. Pure, bounded.

use ratatui::text::{Line, Span};
use serde_json::Value;

use super::{Out, RenderCtx, Rendered, field, str_field};
use crate::protocol::OutputType;

/// [`render_input`] beside the call's result: an Edit / `MultiEdit` / Write input whose output
/// (of type `diff`) already shows the real change, numbered from its real line, is summarised
/// (path, `replace_all`, sizes) instead of drawing the same change a second time numbered from 1
/// (FEEDBACK: "Edit input … output repeats the real diff"). `failed`: the result is a failure
/// (a card then says so instead of drawing the request as done).
pub fn render_input_beside(
    tool_name: &str,
    input: &Value,
    output: Option<(&OutputType, &Value)>,
    failed: bool,
    cx: &RenderCtx<'_>,
) -> Rendered {
    if let Some((OutputType::Diff, out)) = output
        && super::diff::shows_change(out)
        && let Some(r) = edit_summary(tool_name, input, cx)
    {
        return r;
    }
    if let Some(r) = super::cards::input_card(tool_name, input, output.map(|(_, o)| o), failed, cx)
    {
        return r;
    }
    render_input(tool_name, input, cx)
}

/// `N lines, S` of a text.
fn size_of(text: &str) -> String {
    let n = text.lines().count();
    format!(
        "{n} line{}, {}",
        crate::fmt::plural_s(n),
        crate::fmt::bytes(text.len() as u64)
    )
}

/// The compact form of an edit-like input (`None` for other tools and shapes).
fn edit_summary(tool_name: &str, input: &Value, cx: &RenderCtx<'_>) -> Option<Rendered> {
    let theme = cx.theme;
    let path = super::file_path(input, &Value::Null).unwrap_or("(no path)");
    let note = Span::styled("  (the change is shown in the output)", theme.dim);
    let mut out = Out::new(cx);
    let edit_line = |old: &str, new: &str| {
        Line::from(vec![
            Span::styled("  old ", theme.dim),
            Span::styled(size_of(old), theme.diff_del),
            Span::styled(" → new ", theme.dim),
            Span::styled(size_of(new), theme.diff_add),
        ])
    };
    match tool_name {
        "Edit" | "MultiEdit" | "str_replace_based_edit_tool" | "str_replace_editor" | "replace" => {
            let old = str_field(input, &["old_string", "oldString", "old_str"]);
            let new = str_field(input, &["new_string", "newString", "new_str"]);
            let edits = field(input, &["edits"]).and_then(Value::as_array);
            let replace_all = field(input, &["replace_all", "replaceAll"])
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let mut head = path_line(path, "", cx);
            if replace_all {
                head.spans.push(Span::styled("  replace all", theme.hint));
            }
            match (old, new, edits) {
                (Some(o), Some(n), _) => {
                    head.spans.push(note);
                    out.push(head);
                    out.push(edit_line(o, n));
                }
                (_, _, Some(edits)) => {
                    let k = edits.len();
                    head.spans.push(Span::styled(
                        format!("  {k} edit{}", crate::fmt::plural_s(k)),
                        theme.dim,
                    ));
                    head.spans.push(note);
                    out.push(head);
                    for e in edits {
                        let o = str_field(e, &["old_string", "oldString"]).unwrap_or("");
                        let n = str_field(e, &["new_string", "newString"]).unwrap_or("");
                        let mut l = edit_line(o, n);
                        if field(e, &["replace_all", "replaceAll"]).and_then(Value::as_bool)
                            == Some(true)
                        {
                            l.spans.push(Span::styled("  replace all", theme.hint));
                        }
                        out.push(l);
                    }
                }
                _ => return None,
            }
        }
        "apply_patch" => {
            let patch_text = str_field(input, &["patch"])?;
            let mut any = false;
            for l in patch_text.lines() {
                let file = ["*** Update File: ", "*** Add File: ", "*** Delete File: "]
                    .iter()
                    .find_map(|p| l.strip_prefix(p).map(|f| (p, f)));
                if let Some((p, f)) = file {
                    let verb = p.trim_start_matches("*** ").trim_end_matches(" File: ");
                    let mut head = path_line(f.trim(), &format!("  {}", verb.to_lowercase()), cx);
                    if !any {
                        head.spans.push(note.clone());
                    }
                    any = true;
                    out.push(head);
                }
            }
            if !any {
                return None;
            }
        }
        "Write" | "create_file" | "write_file" => {
            let content = str_field(input, &["content", "file_text"])?;
            let mut head = path_line(path, "", cx);
            head.spans
                .push(Span::styled(format!("  {}", size_of(content)), theme.dim));
            head.spans.push(note);
            out.push(head);
        }
        _ => return None,
    }
    Some(out.finish(theme))
}

/// Renders a tool's input (see the module docs).
pub fn render_input(tool_name: &str, input: &Value, cx: &RenderCtx<'_>) -> Rendered {
    let theme = cx.theme;
    if let Some(r) = super::cards::input_card(tool_name, input, None, false, cx) {
        return r;
    }
    match tool_name {
        "Bash" | "bash" | "shell" | "BashOutput" | "local_shell" | "run_shell_command"
        | "exec_command"
            if str_field(input, &["command", "cmd"]).is_some() =>
        {
            let cmd = str_field(input, &["command", "cmd"]).unwrap_or_default();
            let mut out = Out::new(cx);
            if let Some(d) = str_field(input, &["description"]) {
                let mut spans = vec![Span::styled("# ", theme.dim)];
                spans.extend(super::text::plain_spans(d, theme.dim, theme));
                out.push(Line::from(spans));
            }
            // One command, one prompt: a multi-line command (a heredoc commit message, a
            // quoted script) continues under it, indented, as a terminal shows it.
            let code = super::code::build_code_lines(cmd, Some("sh"), None, 1, false, cx);
            for (i, mut l) in code.lines.into_iter().enumerate() {
                let lead = if i == 0 { "$ " } else { "  " };
                l.spans.insert(0, Span::styled(lead, theme.prompt));
                out.push(l);
            }
            out.finish(theme)
        }
        "Edit" | "MultiEdit" | "str_replace_based_edit_tool" | "str_replace_editor" | "replace"
            if field(input, &["old_string", "oldString", "edits", "old_str"]).is_some() =>
        {
            super::diff::build_edit_lines(input, None, cx)
        }
        "apply_patch" if str_field(input, &["patch"]).is_some() => {
            let patch = str_field(input, &["patch"]).unwrap_or_default();
            super::code::build_code_lines(patch, Some("diff"), None, 1, false, cx)
        }
        "Write" | "create_file" | "write_file"
            if str_field(input, &["content", "file_text"]).is_some() =>
        {
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
                // Saturating: `offset: u64::MAX` overflowed (a debug build panicked).
                (Some(_), Some(0)) => "  no lines (limit 0)".to_owned(),
                (Some(o), Some(l)) => {
                    format!("  lines {o}–{}", o.saturating_add(l.saturating_sub(1)))
                }
                (Some(o), None) => format!("  from line {o}"),
                (None, Some(l)) => format!("  first {l} lines"),
                (None, None) => String::new(),
            };
            Rendered {
                lines: vec![path_line(path, &range, cx)],
                truncated: false,
            }
        }
        "TodoWrite" | "todo_write" | "update_plan" | "write_todos" => {
            super::json::build_todo_lines(input, cx)
                .unwrap_or_else(|| super::json::build_json_lines(input, cx))
        }
        "ExitPlanMode" | "exit_plan_mode" if str_field(input, &["plan"]).is_some() => {
            super::markdown::build_markdown_lines(str_field(input, &["plan"]).unwrap_or(""), cx)
        }
        "Task" | "Agent" | "delegate_to_agent"
            if str_field(input, &["prompt", "objective"]).is_some() =>
        {
            let mut out = Out::new(cx);
            if let Some(d) = str_field(input, &["description", "agent_name"]) {
                let mut spans = vec![Span::styled("agent: ", theme.dim)];
                spans.extend(super::text::plain_spans(d, theme.title, theme));
                if let Some(t) = str_field(input, &["subagent_type", "subagentType"]) {
                    spans.push(Span::styled(
                        format!("  ({})", super::text::visible(t)),
                        theme.dim,
                    ));
                }
                out.push(Line::from(spans));
                out.push(Line::default());
            }
            let prompt = str_field(input, &["prompt", "objective"]).unwrap_or("");
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
        // Hostile ranges (second attack of issue 14): no overflow, no `lines 10–10` for 0.
        let r = render_input(
            "Read",
            &json!({"file_path": "/a", "offset": u64::MAX, "limit": 3}),
            &cx,
        );
        assert_eq!(
            lines_to_string(&r.lines),
            "/a  lines 18446744073709551615–18446744073709551615\n"
        );
        let r = render_input(
            "Read",
            &json!({"file_path": "/a", "offset": 10, "limit": 0}),
            &cx,
        );
        assert_eq!(lines_to_string(&r.lines), "/a  no lines (limit 0)\n");
        let r = render_input(
            "Bash",
            &json!({"command": "ls -l\necho hi", "description": "List"}),
            &cx,
        );
        assert_eq!(lines_to_string(&r.lines), "# List\n$ ls -l\n  echo hi\n");
        // A heredoc commit is one command (issue 20: it read as twelve).
        let heredoc = "git commit -m \"$(cat <<'EOF'\nAdd x\n\nEOF\n)\"";
        let r = render_input("Bash", &json!({ "command": heredoc }), &cx);
        assert_eq!(
            lines_to_string(&r.lines),
            "$ git commit -m \"$(cat <<'EOF'\n  Add x\n  \n  EOF\n  )\"\n"
        );
        let todos = json!({"todos": [{"content": "a", "status": "pending", "activeForm": "A"}]});
        let r = render_input("TodoWrite", &todos, &cx);
        assert_eq!(lines_to_string(&r.lines), "Todos 0/1 done\n☐ a\n");
        let r = render_input("ExitPlanMode", &json!({"plan": "## Plan\n\n- x"}), &cx);
        // The plan card (`super::cards`): its outcome heads it once the result is known.
        assert_eq!(lines_to_string(&r.lines), "Plan\n\n## Plan\n\n• x\n");
        let r = render_input("Other", &json!({"x": 1}), &cx);
        assert_eq!(lines_to_string(&r.lines), "▾ { 1 key\n    \"x\": 1\n");
    }
}
