//! `structured` renderer: a JSON tree with counts on collapsed nodes; todo lists as checklists.
//!
//! Who calls it: `renderer_for(Structured | Unknown(_))`, and every renderer as the fallback for
//! shapes it does not know.
//!
//! Tree model: each container is one line (`▾ key: {` expanded, `▸ key: {…} 3 keys` collapsed);
//! a node at depth `d` is expanded when `d < cx.expand_depth`, flipped when its path is in
//! `cx.toggled`. Paths are JSONPath-like: root `$`, `$.key`, `$[3]`, `$["odd key"]`
//! ([`child_path`]). Strings are shown JSON-escaped, so control characters appear as `\n`,
//! `\u001b`; the rest (DEL, C1, bidi) go through [`super::text::plain_spans`].
//!
//! Todo lists (`{todos}`, `{old_todos,new_todos}` / `{oldTodos,newTodos}`, Codex's `{plan}`, or an
//! array of `{content,status}` objects; Codex steps `{step,status}` and Gemini todos
//! `{description,status}` too) render as a checklist: `✔` completed, `◐` in progress (with its
//! `active_form`), `☐` pending; with an old list, status changes are noted.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use serde_json::Value;

use super::{Block, Out, RenderCtx, Rendered, Renderer, field};
use crate::theme::Theme;

/// JSON tree / todo list renderer (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonRenderer;

impl Renderer for JsonRenderer {
    fn render(&self, block: &Block<'_>, cx: &RenderCtx<'_>) -> Rendered {
        if let Some(r) = build_todo_lines(block.output, cx) {
            return r;
        }
        match block.output {
            Value::String(s) => super::text::build_ansi_lines(s, cx),
            other => build_json_lines(other, cx),
        }
    }
}

/// The path of a child: `$.key`, `$[3]`, or `$["odd key"]` for keys that are not identifiers.
pub fn child_path(parent: &str, key: ChildKey<'_>) -> String {
    match key {
        ChildKey::Index(i) => format!("{parent}[{i}]"),
        ChildKey::Key(k)
            if !k.is_empty()
                && k.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-') =>
        {
            format!("{parent}.{k}")
        }
        ChildKey::Key(k) => format!("{parent}[{}]", serde_json::to_string(k).unwrap_or_default()),
    }
}

/// A child's key in [`child_path`].
#[derive(Debug, Clone, Copy)]
pub enum ChildKey<'a> {
    Key(&'a str),
    Index(usize),
}

/// Any JSON value as a tree (see the module docs for expansion rules).
pub fn build_json_lines(v: &Value, cx: &RenderCtx<'_>) -> Rendered {
    let mut out = Out::new(cx);
    node(&mut out, v, None, "$", 0, cx);
    out.finish(cx.theme)
}

fn expanded(path: &str, depth: usize, cx: &RenderCtx<'_>) -> bool {
    let default = depth < cx.expand_depth;
    let flipped = cx.toggled.is_some_and(|t| t.contains(path));
    default != flipped
}

fn key_spans(key: Option<ChildKey<'_>>, theme: &Theme) -> Vec<Span<'static>> {
    match key {
        None => vec![],
        Some(ChildKey::Key(k)) => {
            let mut v = super::text::plain_spans(
                &serde_json::to_string(k).unwrap_or_default(),
                theme.json_key,
                theme,
            );
            v.push(Span::styled(": ", theme.dim));
            v
        }
        Some(ChildKey::Index(i)) => vec![Span::styled(format!("{i}: "), theme.dim)],
    }
}

fn scalar_spans(v: &Value, theme: &Theme) -> Vec<Span<'static>> {
    match v {
        Value::String(s) => super::text::plain_spans(
            &serde_json::to_string(s).unwrap_or_default(),
            theme.json_string,
            theme,
        ),
        Value::Number(n) => vec![Span::styled(n.to_string(), theme.json_number)],
        Value::Bool(b) => vec![Span::styled(b.to_string(), theme.json_literal)],
        Value::Null => vec![Span::styled("null", theme.json_literal)],
        Value::Array(a) if a.is_empty() => vec![Span::styled("[]", theme.dim)],
        Value::Object(o) if o.is_empty() => vec![Span::styled("{}", theme.dim)],
        Value::Array(_) | Value::Object(_) => vec![],
    }
}

/// Number of lines a subtree would take if rendered (for counting what was cut).
fn count_lines(v: &Value, path: &str, depth: usize, cx: &RenderCtx<'_>) -> usize {
    let children: Vec<(String, &Value)> = match v {
        Value::Array(a) if !a.is_empty() => a
            .iter()
            .enumerate()
            .map(|(i, c)| (child_path(path, ChildKey::Index(i)), c))
            .collect(),
        Value::Object(o) if !o.is_empty() => o
            .iter()
            .map(|(k, c)| (child_path(path, ChildKey::Key(k)), c))
            .collect(),
        Value::String(t) if t.contains('\n') && expanded(path, depth, cx) => {
            return 1 + t.lines().count();
        }
        _ => return 1,
    };
    if !expanded(path, depth, cx) {
        return 1;
    }
    1 + children
        .iter()
        .map(|(p, c)| count_lines(c, p, depth + 1, cx))
        .sum::<usize>()
}

fn node(
    out: &mut Out,
    v: &Value,
    key: Option<ChildKey<'_>>,
    path: &str,
    depth: usize,
    cx: &RenderCtx<'_>,
) {
    let theme = cx.theme;
    if out.full() {
        out.skip(count_lines(v, path, depth, cx));
        return;
    }
    let indent = Span::raw("  ".repeat(depth));
    let (open, count) = match v {
        Value::Array(a) if !a.is_empty() => ("[", crate::fmt::plural(a.len(), "item")),
        Value::Object(o) if !o.is_empty() => ("{", crate::fmt::plural(o.len(), "key")),
        Value::String(t) if t.contains('\n') => {
            text_block(out, t, key, path, depth, cx);
            return;
        }
        _ => {
            let mut spans = vec![indent, Span::raw("  ")];
            spans.extend(key_spans(key, theme));
            spans.extend(scalar_spans(v, theme));
            out.push(Line::from(spans));
            return;
        }
    };
    let open_now = expanded(path, depth, cx);
    let mut spans = vec![
        indent,
        Span::styled(if open_now { "▾ " } else { "▸ " }, theme.dim),
    ];
    spans.extend(key_spans(key, theme));
    if open_now {
        spans.push(Span::raw(open));
        spans.push(Span::styled(format!(" {count}"), theme.dim));
        out.push(Line::from(spans));
        match v {
            Value::Array(a) => {
                for (i, c) in a.iter().enumerate() {
                    let p = child_path(path, ChildKey::Index(i));
                    node(out, c, Some(ChildKey::Index(i)), &p, depth + 1, cx);
                }
            }
            Value::Object(o) => {
                for (k, c) in o {
                    let p = child_path(path, ChildKey::Key(k));
                    node(out, c, Some(ChildKey::Key(k)), &p, depth + 1, cx);
                }
            }
            _ => {}
        }
    } else {
        let close = if open == "[" { "[…]" } else { "{…}" };
        spans.push(Span::raw(close));
        spans.push(Span::styled(format!(" {count}"), theme.dim));
        out.push(Line::from(spans));
    }
}

/// A multi-line string: expanded, one row per line under a `│` bar; collapsed, the escaped
/// one-line form with its line count.
fn text_block(
    out: &mut Out,
    t: &str,
    key: Option<ChildKey<'_>>,
    path: &str,
    depth: usize,
    cx: &RenderCtx<'_>,
) {
    let theme = cx.theme;
    let indent = "  ".repeat(depth);
    let n = t.lines().count();
    let open_now = expanded(path, depth, cx);
    let mut spans = vec![
        Span::raw(indent.clone()),
        Span::styled(if open_now { "▾ " } else { "▸ " }, theme.dim),
    ];
    spans.extend(key_spans(key, theme));
    if open_now {
        spans.push(Span::styled(crate::fmt::plural(n, "line"), theme.dim));
        out.push(Line::from(spans));
        for (i, l) in t.lines().enumerate() {
            if out.full() {
                out.skip(n - i);
                break;
            }
            let mut row = vec![Span::styled(format!("{indent}    │ "), theme.dim)];
            row.extend(super::text::plain_spans(l, theme.json_string, theme));
            out.push(Line::from(row));
        }
    } else {
        let one: String = t.chars().take(200).collect();
        spans.extend(scalar_spans(&Value::String(one), theme));
        spans.push(Span::styled(
            format!(" {}", crate::fmt::plural(n, "line")),
            theme.dim,
        ));
        out.push(Line::from(spans));
    }
}

/// One todo item's fields.
struct Todo<'v> {
    content: &'v str,
    status: &'v str,
    active: Option<&'v str>,
}

fn todos_of(v: &Value) -> Option<Vec<Todo<'_>>> {
    let arr = v.as_array()?;
    arr.iter()
        .map(|t| {
            Some(Todo {
                content: field(t, &["content", "step", "description"])?.as_str()?,
                status: field(t, &["status"])?.as_str()?,
                active: field(t, &["active_form", "activeForm"]).and_then(Value::as_str),
            })
        })
        .collect()
}

/// A todo list as a checklist, or `None` when `v` is not one.
pub fn build_todo_lines(v: &Value, cx: &RenderCtx<'_>) -> Option<Rendered> {
    let (old, new) = if let Some(new) = field(v, &["new_todos", "newTodos"]) {
        (field(v, &["old_todos", "oldTodos"]), new)
    } else if let Some(t) = field(v, &["todos", "plan"]) {
        (None, t)
    } else if v.as_array().is_some_and(|a| !a.is_empty()) {
        (None, v)
    } else {
        return None;
    };
    let new = todos_of(new)?;
    let old = old.and_then(todos_of).unwrap_or_default();
    let theme = cx.theme;
    let mut out = Out::new(cx);
    let done = new.iter().filter(|t| t.status == "completed").count();
    out.push(Line::from(Span::styled(
        format!("Todos {done}/{} done", new.len()),
        theme.title,
    )));
    for t in &new {
        let (mark, style): (&str, Style) = match t.status {
            "completed" => ("✔ ", theme.status_ok),
            "in_progress" => ("◐ ", theme.status_running),
            "pending" => ("☐ ", theme.text),
            _ => ("? ", theme.dim),
        };
        let text_style = if t.status == "completed" {
            theme.dim
        } else {
            theme.text
        };
        let mut spans = vec![Span::styled(mark, style)];
        spans.extend(super::text::plain_spans(t.content, text_style, theme));
        if t.status == "in_progress"
            && let Some(a) = t.active
        {
            spans.push(Span::styled(" — ", theme.dim));
            spans.extend(super::text::plain_spans(a, theme.status_running, theme));
        }
        if !old.is_empty() {
            match old.iter().find(|o| o.content == t.content) {
                Some(o) if o.status != t.status => {
                    spans.push(Span::styled(format!("  (was {})", o.status), theme.hint));
                }
                Some(_) => {}
                None => spans.push(Span::styled("  (new)", theme.hint)),
            }
        }
        out.push(Line::from(spans));
    }
    for o in old
        .iter()
        .filter(|o| !new.iter().any(|t| t.content == o.content))
    {
        let mut spans = vec![Span::styled("✘ ", theme.dim)];
        spans.extend(super::text::plain_spans(o.content, theme.dim, theme));
        spans.push(Span::styled("  (removed)", theme.hint));
        out.push(Line::from(spans));
    }
    Some(out.finish(theme))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::lines_to_string;
    use serde_json::json;
    use std::collections::HashSet;

    #[test]
    fn tree_with_counts_and_toggles() {
        let t = Theme::dark();
        let mut cx = RenderCtx::new(80, &t);
        cx.expand_depth = 1;
        let v = json!({"a": 1, "b": {"c": [1, 2]}, "odd key": "x\ny"});
        let s = lines_to_string(&build_json_lines(&v, &cx).lines);
        assert_eq!(
            s,
            "▾ { 3 keys\n    \"a\": 1\n  ▸ \"b\": {…} 1 key\n  ▸ \"odd key\": \"x\\ny\" 2 lines\n"
        );
        cx.expand_depth = 2;
        let s = lines_to_string(&build_json_lines(&v, &cx).lines);
        assert!(
            s.ends_with("  ▾ \"odd key\": 2 lines\n      │ x\n      │ y\n"),
            "{s}"
        );
        cx.expand_depth = 1;
        let toggled: HashSet<String> = ["$.b".to_owned()].into();
        cx.toggled = Some(&toggled);
        let s = lines_to_string(&build_json_lines(&v, &cx).lines);
        assert!(
            s.contains("  ▾ \"b\": { 1 key\n    ▸ \"c\": […] 2 items\n"),
            "{s}"
        );
        assert_eq!(child_path("$", ChildKey::Key("odd key")), "$[\"odd key\"]");
    }

    #[test]
    fn todo_checklist() {
        let t = Theme::dark();
        let cx = RenderCtx::new(80, &t);
        let v = json!({
            "oldTodos": [{"content": "a", "status": "pending"}],
            "newTodos": [{"content": "a", "status": "in_progress", "activeForm": "Doing a"},
                         {"content": "b", "status": "completed"}]
        });
        let r = build_todo_lines(&v, &cx).unwrap();
        assert_eq!(
            lines_to_string(&r.lines),
            "Todos 1/2 done\n◐ a — Doing a  (was pending)\n✔ b  (new)\n"
        );
        assert_eq!(r.lines[2].spans[0].style, t.status_ok);
    }
}
