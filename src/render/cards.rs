//! Cards for Claude Code's interactive and task tools (issue 20), drawn the way a reader of the
//! session wants them rather than as JSON: `AskUserQuestion` (each question, its options, the
//! answer marked), `ExitPlanMode` (the plan as markdown under its outcome), `TaskCreate` /
//! `TaskUpdate` / `TaskGet` / `TaskList` (a task line or a checklist).
//!
//! Who calls it: [`super::render_input_beside`] (the request's card, with the result when there
//! is one) and [`super::render_output`] (a result's card). Shapes (from the corpus and Claude
//! Code's tool schemas):
//! * `AskUserQuestion` input `{questions: [{question, header?, options: [{label, description?}],
//!   multiSelect?}]}` (2.0.55+) or `{question}` (2.0.37); output `{questions?, answers: {question:
//!   answer}}` (`super::super::import::cc_output` shapes it so).
//! * `ExitPlanMode` input `{plan}`; the result says whether the user approved. 2.1.x: input `{}`,
//!   result `{result, file_path}` (the plan is only in the file; the card says so).
//! * `TaskCreate` input `{subject, description?, activeForm?}`; `TaskUpdate` `{taskId, status?,
//!   subject?, owner?, …}`; `TaskList` / `TaskGet` output `{tasks: [{id, subject, status,
//!   owner?, blockedBy?}]}` or `{task: {…}}`. A failed `TaskCreate` / `TaskUpdate` (status
//!   `error`: an `is_error` result, or `{success: false, error}`) draws the requested change
//!   without its mark and `✘ not updated: <the result's message>`.
//!
//! Invariants: pure; untrusted text goes through `text::plain_spans` (no control reaches a
//! line); any other shape returns `None` and the caller draws its usual rendering.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use serde_json::{Map, Value};

use super::text::plain_spans;
use super::{Out, RenderCtx, Rendered, field};

/// A tool's request as a card (`output`: its result, when known; `failed`: the result is a
/// failure), or `None`.
pub fn input_card(
    tool_name: &str,
    input: &Value,
    output: Option<&Value>,
    failed: bool,
    cx: &RenderCtx<'_>,
) -> Option<Rendered> {
    match tool_name {
        "AskUserQuestion" => questions_card(input, output.and_then(answers_of), cx),
        "ExitPlanMode" | "exit_plan_mode" => plan_card(input, output, cx),
        "TaskCreate" | "TaskUpdate" => {
            task_request_card(tool_name, input, output.filter(|_| failed), cx)
        }
        _ => None,
    }
}

/// A tool's result as a card, or `None`.
pub fn output_card(tool_name: &str, output: &Value, cx: &RenderCtx<'_>) -> Option<Rendered> {
    match tool_name {
        "AskUserQuestion" => {
            let answers = answers_of(output)?;
            let mut out = Out::new(cx);
            for (q, a) in answers {
                let mut spans = vec![Span::styled("? ", cx.theme.dim)];
                spans.extend(plain_spans(q, cx.theme.dim, cx.theme));
                out.push(Line::from(spans));
                let mut spans = vec![Span::styled("→ ", cx.theme.status_ok)];
                spans.extend(plain_spans(&answer_text(a), cx.theme.status_ok, cx.theme));
                out.push(Line::from(spans));
            }
            Some(out.finish(cx.theme))
        }
        "TaskList" | "TaskGet" | "TaskCreate" | "TaskUpdate" => task_list_card(output, cx),
        // `{result, file_path}`: what the user was told, and where the plan is saved.
        "ExitPlanMode" | "exit_plan_mode" => {
            let result = field(output, &["result"]).and_then(Value::as_str)?;
            let mut out = Out::new(cx);
            for l in result.lines() {
                out.push(Line::from(plain_spans(l, cx.theme.text, cx.theme)));
            }
            if let Some(p) = field(output, &["file_path"]).and_then(Value::as_str) {
                let mut spans = vec![Span::styled("plan file ", cx.theme.dim)];
                spans.extend(plain_spans(p, cx.theme.hint, cx.theme));
                out.push(Line::from(spans));
            }
            Some(out.finish(cx.theme))
        }
        _ => None,
    }
}

/// The `answers` map of an `AskUserQuestion` result.
fn answers_of(output: &Value) -> Option<&Map<String, Value>> {
    field(output, &["answers"]).and_then(Value::as_object)
}

fn answer_text(a: &Value) -> String {
    match a {
        Value::String(s) => s.clone(),
        Value::Array(v) => v
            .iter()
            .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned))
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

fn questions_card(
    input: &Value,
    answers: Option<&Map<String, Value>>,
    cx: &RenderCtx<'_>,
) -> Option<Rendered> {
    let theme = cx.theme;
    let qs: Vec<&Value> = match field(input, &["questions"]) {
        Some(Value::Array(a)) if !a.is_empty() => a.iter().collect(),
        _ if field(input, &["question"]).is_some_and(Value::is_string) => vec![input],
        _ => return None,
    };
    let mut out = Out::new(cx);
    for (i, q) in qs.iter().enumerate() {
        if i > 0 {
            out.push(Line::default());
        }
        let text = field(q, &["question"])
            .and_then(Value::as_str)
            .unwrap_or("");
        let mut spans = Vec::new();
        if let Some(h) = field(q, &["header"]).and_then(Value::as_str) {
            spans.push(Span::styled("[", theme.dim));
            spans.extend(plain_spans(h, theme.hint, theme));
            spans.push(Span::styled("] ", theme.dim));
        }
        let mut lines = text.lines();
        spans.extend(plain_spans(lines.next().unwrap_or(""), theme.title, theme));
        out.push(Line::from(spans));
        for l in lines {
            out.push(Line::from(plain_spans(l, theme.text, theme)));
        }
        let answer = answers.and_then(|a| a.get(text)).map(answer_text);
        let multi =
            field(q, &["multiSelect", "multi_select"]).and_then(Value::as_bool) == Some(true);
        let mut matched = false;
        for o in field(q, &["options"])
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice)
        {
            let label = field(o, &["label"]).and_then(Value::as_str).unwrap_or("");
            let chosen = answer
                .as_deref()
                .is_some_and(|a| a == label || (multi && a.split(", ").any(|part| part == label)));
            matched |= chosen;
            let (mark, style): (&str, Style) = match (chosen, multi) {
                (true, false) => ("  ● ", theme.status_ok),
                (true, true) => ("  ☑ ", theme.status_ok),
                (false, false) => ("  ○ ", theme.dim),
                (false, true) => ("  ☐ ", theme.dim),
            };
            let mut spans = vec![Span::styled(mark, style)];
            spans.extend(plain_spans(
                label,
                if chosen { theme.status_ok } else { theme.text },
                theme,
            ));
            if let Some(d) = field(o, &["description"]).and_then(Value::as_str) {
                spans.push(Span::styled(" — ", theme.dim));
                spans.extend(plain_spans(d, theme.dim, theme));
            }
            out.push(Line::from(spans));
        }
        match answer {
            // An answer typed instead of an option ("Other").
            Some(a) if !matched => {
                let mut spans = vec![Span::styled("  → ", theme.status_ok)];
                spans.extend(plain_spans(&a, theme.status_ok, theme));
                out.push(Line::from(spans));
            }
            None if answers.is_some() => {
                out.push(Line::from(Span::styled("  (no answer)", theme.dim)));
            }
            _ => {}
        }
    }
    Some(out.finish(theme))
}

fn plan_card(input: &Value, output: Option<&Value>, cx: &RenderCtx<'_>) -> Option<Rendered> {
    let file = output
        .and_then(|o| field(o, &["file_path", "filePath"]))
        .and_then(Value::as_str);
    let plan = field(input, &["plan"]).and_then(Value::as_str);
    // A 2.1.x request is `{}`: without a plan and a plan file there is nothing to draw.
    if plan.is_none() && file.is_none() {
        return None;
    }
    let theme = cx.theme;
    let mut out = Out::new(cx);
    let said = output.map(|o| match o {
        Value::String(s) => s.as_str(),
        other => field(other, &["result", "content"])
            .and_then(Value::as_str)
            .unwrap_or(""),
    });
    let mut head = vec![Span::styled("Plan", theme.title)];
    match said {
        Some(s) if s.contains("approved") => {
            head.push(Span::styled("  ✔ approved", theme.status_ok));
        }
        Some(s) if !s.trim().is_empty() => {
            head.push(Span::styled("  ✘ not approved", theme.status_failed));
        }
        _ => {}
    }
    if let Some(p) = file {
        head.push(Span::styled("  ", theme.dim));
        head.extend(plain_spans(p, theme.dim, theme));
    }
    out.push(Line::from(head));
    out.push(Line::default());
    match plan {
        Some(plan) => out.extend(super::markdown::build_markdown_lines(plan, cx).lines),
        None => out.push(Line::from(Span::styled(
            "The plan's text is not in this transcript: Claude Code 2.1 keeps it in the plan file above.",
            theme.dim,
        ))),
    }
    Some(out.finish(theme))
}

fn status_mark(status: &str, cx: &RenderCtx<'_>) -> (&'static str, Style) {
    match status {
        "completed" | "done" => ("✔ ", cx.theme.status_ok),
        "in_progress" => ("◐ ", cx.theme.status_running),
        "pending" | "open" => ("☐ ", cx.theme.text),
        "deleted" | "cancelled" => ("✘ ", cx.theme.dim),
        _ => ("· ", cx.theme.dim),
    }
}

/// `failure`: the result of a failed call (its text, or the `{error}`/`{message}` object): the
/// change did not happen, so the requested status is drawn without its mark and a line says the
/// call failed, with the result's message.
fn task_request_card(
    tool: &str,
    input: &Value,
    failure: Option<&Value>,
    cx: &RenderCtx<'_>,
) -> Option<Rendered> {
    let theme = cx.theme;
    let s = |k: &[&str]| field(input, k).and_then(Value::as_str);
    let mut out = Out::new(cx);
    if tool == "TaskCreate" {
        let subject = s(&["subject", "title"])?;
        let mut spans = vec![Span::styled("☐ new task  ", theme.hint)];
        spans.extend(plain_spans(subject, theme.title, theme));
        out.push(Line::from(spans));
    } else {
        let id = field(input, &["taskId", "task_id", "id"])?;
        let id = id.as_str().map_or_else(|| id.to_string(), str::to_owned);
        let mut spans = vec![Span::styled("task #", theme.dim)];
        spans.extend(plain_spans(&id, theme.title, theme));
        if let Some(st) = s(&["status"]) {
            spans.push(Span::styled("  → ", theme.dim));
            if failure.is_some() {
                spans.extend(plain_spans(st, theme.dim, theme));
            } else {
                let (mark, style) = status_mark(st, cx);
                spans.push(Span::styled(mark, style));
                spans.extend(plain_spans(st, style, theme));
            }
        }
        if let Some(sub) = s(&["subject"]) {
            spans.push(Span::raw("  "));
            spans.extend(plain_spans(sub, theme.text, theme));
        }
        if let Some(o) = s(&["owner"]) {
            spans.push(Span::styled("  owner ", theme.dim));
            spans.extend(plain_spans(o, theme.text, theme));
        }
        out.push(Line::from(spans));
    }
    if let Some(d) = s(&["description"]) {
        for l in d.lines() {
            out.push(Line::from(plain_spans(l, theme.dim, theme)));
        }
    }
    if let Some(f) = failure {
        let verb = if tool == "TaskCreate" {
            "not created"
        } else {
            "not updated"
        };
        let msg = failure_message(f);
        let mut lines = msg.lines();
        let mut spans = vec![Span::styled(format!("✘ {verb}"), theme.status_failed)];
        if let Some(first) = lines.next() {
            spans.push(Span::styled(": ", theme.status_failed));
            spans.extend(plain_spans(first, theme.status_failed, theme));
        }
        out.push(Line::from(spans));
        for l in lines {
            out.push(Line::from(plain_spans(l, theme.status_failed, theme)));
        }
    }
    Some(out.finish(theme))
}

/// The message of a failed result: its text without Claude Code's `<tool_use_error>` tags, or
/// the `error` / `message` of an object.
fn failure_message(f: &Value) -> String {
    let text = match f {
        Value::String(s) => s.clone(),
        other => field(other, &["error", "message"])
            .and_then(Value::as_str)
            .map_or_else(|| other.to_string(), str::to_owned),
    };
    let t = text.trim();
    let t = t.strip_prefix("<tool_use_error>").unwrap_or(t);
    let t = t.strip_suffix("</tool_use_error>").unwrap_or(t);
    t.trim().to_owned()
}

fn task_list_card(output: &Value, cx: &RenderCtx<'_>) -> Option<Rendered> {
    let theme = cx.theme;
    let mut out = Out::new(cx);
    let Some(Value::Array(list)) = field(output, &["tasks"]) else {
        // One task (TaskCreate's, TaskGet's): its line alone.
        let t = field(output, &["task"]).filter(|t| t.is_object())?;
        out.push(task_line(t, cx));
        return Some(out.finish(theme));
    };
    let tasks: Vec<&Value> = list.iter().collect();
    let done = tasks
        .iter()
        .filter(|t| field(t, &["status"]).and_then(Value::as_str) == Some("completed"))
        .count();
    out.push(Line::from(Span::styled(
        format!("Tasks {done}/{} done", tasks.len()),
        theme.title,
    )));
    for t in tasks {
        out.push(task_line(t, cx));
    }
    Some(out.finish(theme))
}

/// One task: its status mark, `#id`, subject, owner, what blocks it.
fn task_line(t: &Value, cx: &RenderCtx<'_>) -> Line<'static> {
    let theme = cx.theme;
    {
        let st = field(t, &["status"]).and_then(Value::as_str).unwrap_or("");
        let (mark, style) = status_mark(st, cx);
        let mut spans = vec![Span::styled(mark, style)];
        if let Some(id) = field(t, &["id", "taskId"]) {
            let id = id.as_str().map_or_else(|| id.to_string(), str::to_owned);
            spans.push(Span::styled("#", theme.dim));
            spans.extend(plain_spans(&id, theme.dim, theme));
            spans.push(Span::raw(" "));
        }
        let subject = field(t, &["subject", "title", "content"])
            .and_then(Value::as_str)
            .unwrap_or("");
        spans.extend(plain_spans(subject, theme.text, theme));
        if let Some(o) = field(t, &["owner"]).and_then(Value::as_str) {
            spans.push(Span::styled("  @", theme.dim));
            spans.extend(plain_spans(o, theme.dim, theme));
        }
        if let Some(Value::Array(b)) = field(t, &["blockedBy", "blocked_by"])
            && !b.is_empty()
        {
            let ids: Vec<String> = b
                .iter()
                .map(|x| {
                    x.as_str()
                        .map_or_else(|| x.to_string(), |s| format!("#{s}"))
                })
                .collect();
            spans.push(Span::styled(
                format!("  blocked by {}", super::text::visible(&ids.join(" "))),
                theme.status_failed,
            ));
        }
        Line::from(spans)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::lines_to_string;
    use crate::theme::Theme;
    use serde_json::json;

    #[test]
    fn a_question_card_marks_the_answer() {
        let theme = Theme::mono();
        let cx = RenderCtx::new(80, &theme);
        let input = json!({"questions": [{"question": "Which rig?", "header": "Rig",
            "options": [{"label": "spotter", "description": "the app"}, {"label": "No rig"}],
            "multiSelect": false}, {"question": "Name?", "options": [{"label": "a"}]}]});
        let out = json!({"answers": {"Which rig?": "No rig", "Name?": "zed"}});
        let r = input_card("AskUserQuestion", &input, Some(&out), false, &cx).unwrap();
        assert_eq!(
            lines_to_string(&r.lines),
            "[Rig] Which rig?\n  ○ spotter — the app\n  ● No rig\n\nName?\n  ○ a\n  → zed\n"
        );
        let r = output_card("AskUserQuestion", &out, &cx).unwrap();
        assert_eq!(
            lines_to_string(&r.lines),
            "? Which rig?\n→ No rig\n? Name?\n→ zed\n"
        );
    }

    #[test]
    fn task_cards() {
        let theme = Theme::mono();
        let cx = RenderCtx::new(80, &theme);
        let r = input_card(
            "TaskUpdate",
            &json!({"taskId": "3", "status": "completed"}),
            None,
            false,
            &cx,
        )
        .unwrap();
        assert_eq!(lines_to_string(&r.lines), "task #3  → ✔ completed\n");
        let list = json!({"tasks": [{"id": "1", "subject": "Model", "status": "completed"},
            {"id": "2", "subject": "README", "status": "pending", "owner": "docs", "blockedBy": ["1"]}]});
        let r = output_card("TaskList", &list, &cx).unwrap();
        assert_eq!(
            lines_to_string(&r.lines),
            "Tasks 1/2 done\n✔ #1 Model\n☐ #2 README  @docs  blocked by #1\n"
        );
        assert!(output_card("TaskList", &json!("text"), &cx).is_none());
    }
}
