//! One-line summaries of a call's input, computed once when the request is folded.
//!
//! Who calls it: `Session::apply_request` (stored as `Invocation::summary`, so the feed draws a
//! row without the input, which a file-backed session leaves in the file), and `ui::feed`.
//! Invariants: pure; the text is raw (control characters kept: the feed makes it visible when it
//! draws), one line, at most [`SUMMARY_MAX_BYTES`] bytes plus a closing `…`.

use std::fmt::Write as _;

use serde_json::Value;

/// Longest summary kept, in bytes (a feed row is never wider; longer ones end in `…`).
pub const SUMMARY_MAX_BYTES: usize = 512;

/// A one-line summary of a call's input: the command, path, pattern, URL, description … that
/// says what the call does. Falls back to the first string field, then compact JSON.
pub fn input_summary(tool: &str, input: &Value) -> String {
    let s = |k: &str| input.get(k).and_then(Value::as_str);
    let pick = |keys: &[&str]| keys.iter().find_map(|k| s(k)).map(first_line);
    let found = match tool {
        "Bash" | "BashOutput" | "KillBash" | "KillShell" => {
            pick(&["command", "bash_id", "shell_id"])
        }
        "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookRead" | "NotebookEdit" => {
            pick(&["file_path", "filePath", "notebook_path", "path"])
        }
        "Glob" | "Grep" => {
            let pat = pick(&["pattern"]);
            match (pat, s("path")) {
                (Some(p), Some(dir)) => Some(format!("{p}  in {dir}")),
                (p, _) => p,
            }
        }
        "LS" => pick(&["path"]),
        "WebFetch" | "web_fetch" => pick(&["url"]),
        "WebSearch" | "web_search" | "google_web_search" => pick(&["query"]),
        "Task" | "Agent" => pick(&["description", "prompt"]),
        "AskUserQuestion" => input
            .pointer("/questions/0/question")
            .and_then(Value::as_str)
            .map(first_line),
        // 2.1.x asks with `{}` (the plan is in a file): say what the call does.
        "ExitPlanMode" | "exit_plan_mode" => {
            pick(&["plan"]).or_else(|| Some("leave plan mode (plan in its file)".to_owned()))
        }
        "TaskCreate" => pick(&["subject", "title"]),
        "TaskUpdate" | "TaskGet" => {
            let id = input
                .get("taskId")
                .or_else(|| input.get("task_id"))
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned));
            id.map(|id| match s("status") {
                Some(st) => format!("#{id} → {st}"),
                None => format!("#{id}"),
            })
        }
        "TodoWrite" | "write_todos" => input
            .get("todos")
            .and_then(Value::as_array)
            .map(|t| format!("{} todos", t.len())),
        // Codex CLI and Gemini CLI tools (`crate::import::codex`, `crate::import::gemini`).
        "shell" | "local_shell" | "run_shell_command" => pick(&["command"]),
        "exec_command" => pick(&["cmd", "command"]),
        "write_stdin" => input.get("session_id").map(|p| {
            let chars = s("chars").filter(|c| !c.is_empty());
            match chars {
                Some(c) => format!("process {p} ← {}", first_line(c)),
                None => format!("poll process {p}"),
            }
        }),
        "apply_patch" => patch_summary(input),
        // A file of a patch opened as a session (`crate::import::patch`): `M src/x.rs`.
        "diff" => s("file_path").map(|p| format!("{} {p}", s("change").unwrap_or("M"))),
        "update_plan" => input
            .get("plan")
            .and_then(Value::as_array)
            .map(|t| format!("{} steps", t.len())),
        "read_file" | "write_file" | "replace" | "list_directory" | "read_many_files" => {
            pick(&["file_path", "absolute_path", "path", "dir_path"])
        }
        "search_file_content" | "glob" => pick(&["pattern"]),
        "delegate_to_agent" => pick(&["agent_name", "objective"]),
        _ => None,
    };
    let summary = found.unwrap_or_else(|| match input {
        Value::Object(o) if o.is_empty() => String::new(),
        Value::Object(o) => o
            .values()
            .find_map(Value::as_str)
            .map_or_else(|| first_line(&input.to_string()), first_line),
        Value::Null => String::new(),
        Value::String(v) => first_line(v),
        other => first_line(&other.to_string()),
    });
    capped(summary)
}

/// Whether `tool`'s summary is a file path (Claude Code's Read/Write/Edit…, Gemini CLI's
/// `read_file`, `write_file`, `replace`…): the feed cuts such a summary in the middle so the file name
/// stays (`crate::fmt::elide_path`).
pub fn is_path_tool(tool: &str) -> bool {
    matches!(
        tool,
        "Read"
            | "Write"
            | "Edit"
            | "MultiEdit"
            | "NotebookRead"
            | "NotebookEdit"
            | "LS"
            | "read_file"
            | "write_file"
            | "replace"
            | "list_directory"
            | "read_many_files"
            | "diff"
    )
}

/// The files an `apply_patch` call changes (`M path, A path`): from a Codex patch's `*** Update
/// File:` lines, or `codex exec --json`'s `changes [{path, kind}]`.
fn patch_summary(input: &Value) -> Option<String> {
    let mut files = Vec::new();
    if let Some(p) = input.get("patch").and_then(Value::as_str) {
        for l in p.lines() {
            for (pre, k) in [
                ("*** Update File: ", "M"),
                ("*** Add File: ", "A"),
                ("*** Delete File: ", "D"),
            ] {
                if let Some(f) = l.strip_prefix(pre) {
                    files.push(format!("{k} {}", f.trim()));
                }
            }
        }
    }
    for c in input
        .get("changes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let k = match c.get("kind").and_then(Value::as_str) {
            Some("add") => "A",
            Some("delete") => "D",
            _ => "M",
        };
        if let Some(p) = c.get("path").and_then(Value::as_str) {
            files.push(format!("{k} {p}"));
        }
    }
    (!files.is_empty()).then(|| files.join(", "))
}

/// A call's summary as shown: for the tools whose summary is file paths ([`is_path_tool`],
/// the search tools, `apply_patch`), paths inside its session's working directory made
/// relative to it (`crate::fmt::relative_to`; the feed, `print` and the detail header). A
/// shell command is shown as written (a `cd` or a remote command would make a rewritten path a
/// lie, attack 7 #7), and so is every call of a session whose working directory changed (the
/// directory a call ran in is not kept per call, attack 7 #8).
pub fn shown<'a>(
    session: &crate::session::Session,
    inv: &'a crate::session::Invocation,
) -> std::borrow::Cow<'a, str> {
    shown_as(session, inv, &inv.summary)
}

/// [`shown`] of `text` in place of the call's own summary: `crate::export` passes its redacted
/// copy, so that redaction comes before the paths are made relative.
pub fn shown_as<'t>(
    session: &crate::session::Session,
    inv: &crate::session::Invocation,
    text: &'t str,
) -> std::borrow::Cow<'t, str> {
    let entry = session.sessions.get(inv.session);
    let paths = is_path_tool(&inv.tool_name)
        || matches!(
            &*inv.tool_name,
            "Grep" | "Glob" | "apply_patch" | "glob" | "search_file_content"
        );
    match entry.cwd.as_deref() {
        Some(cwd) if paths && !entry.cwd_changed => crate::fmt::relative_to(text, cwd),
        _ => std::borrow::Cow::Borrowed(text),
    }
}

/// A message's one-line text (the feed row, `print`): `[redacted]` when the sender redacted it
/// (SPEC 3.6: never shown as the original), else [`first_line`] of its text.
pub fn message_line(m: &crate::session::Message) -> String {
    if m.redacted {
        "[redacted]".to_owned()
    } else {
        first_line(&m.text)
    }
}

/// The first non-blank line of `s`, trimmed, with ` …` when more lines follow.
pub fn first_line(s: &str) -> String {
    let mut lines = s.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut out = lines.next().unwrap_or("").to_owned();
    if lines.next().is_some() {
        out.push_str(" …");
    }
    out
}

/// `s` cut to [`SUMMARY_MAX_BYTES`] at a character boundary, `…` marking the cut.
fn capped(mut s: String) -> String {
    if s.len() > SUMMARY_MAX_BYTES {
        let mut end = SUMMARY_MAX_BYTES;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}

/// A short summary of an event payload without a message: token counts for usage, else the
/// first few scalar values (two levels deep), each its first line, joined by ` · ` (the feed's
/// event rows, `crate::ui::feed`).
pub fn payload_summary(payload: &Value) -> String {
    fn walk(v: &Value, depth: usize, out: &mut Vec<String>) {
        if out.len() >= 4 {
            return;
        }
        match v {
            Value::String(s) if !s.is_empty() => out.push(s.clone()),
            Value::Number(x) => out.push(x.to_string()),
            Value::Bool(b) => out.push(b.to_string()),
            Value::Object(o) if depth < 2 => o.values().for_each(|x| walk(x, depth + 1, out)),
            Value::Array(a) if depth < 2 => a.iter().for_each(|x| walk(x, depth + 1, out)),
            Value::String(_) | Value::Null | Value::Object(_) | Value::Array(_) => {}
        }
    }
    let n = |k: &str| payload.get(k).and_then(Value::as_u64);
    if let (Some(i), Some(o)) = (n("input_tokens"), n("output_tokens")) {
        let cached = n("cache_read_input_tokens").unwrap_or(0);
        return format!("in {i} · out {o} · cache read {cached} tokens");
    }
    let mut parts = Vec::new();
    walk(payload, 0, &mut parts);
    parts
        .iter()
        .map(|p| first_line(p))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The one-line text of an event row (the feed's and `print`'s), raw (callers make it visible):
/// a catalog publish's tool count (and what changed, `metadata.rawpv_catalog_delta`), a hook
/// run in words (`crate::fmt::words::hook_words`), usage token counts, else the kind and what
/// the payload says (`crate::fmt::words::event_words`), its first line.
pub fn event_line(f: &crate::protocol::Frame) -> String {
    use crate::protocol::FrameType;
    let payload = f.payload_json();
    if f.frame_type == FrameType::ToolCatalogPublish {
        let n = payload
            .get("tools")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        return match f.envelope.metadata.get("rawpv_catalog_delta") {
            Some(d) => crate::fmt::words::catalog_delta_words(d, n),
            None => format!("{n} tool{} published", crate::fmt::plural_s(n)),
        };
    }
    if super::hooks::is_hook(f) {
        return crate::fmt::words::hook_words(&payload);
    }
    if matches!(
        f.frame_type,
        FrameType::SessionCompacted | FrameType::ControlSessionCompact
    ) {
        let mut s = "compacted".to_owned();
        if let Some(t) = payload.get("trigger").and_then(Value::as_str) {
            s.push_str(" · ");
            s.push_str(t);
        }
        if let Some(n) = payload.get("pre_tokens").and_then(Value::as_u64) {
            let _ = write!(s, " · {n} tokens before");
        }
        return s;
    }
    let kind = crate::fmt::words::kind_words(f.frame_type.as_str());
    if kind == "image" {
        // A pasted image's placeholder: `image · image/png · 766.4 KiB · 2000×1008 · i saves`.
        let mut s = "image".to_owned();
        if let Some(t) = payload.get("media_type").and_then(Value::as_str) {
            s.push_str(" · ");
            s.push_str(t);
        }
        if let Some(n) = payload.get("size").and_then(Value::as_u64) {
            s.push_str(" · ");
            s.push_str(&crate::fmt::bytes(n));
        }
        let dim = |k: &str| payload.get(k).and_then(Value::as_u64);
        if let (Some(w), Some(h)) = (dim("width"), dim("height")) {
            let _ = write!(s, " · {w}×{h}");
        }
        return s;
    }
    if let Some(Value::Object(att)) = payload.get("attachment") {
        // An attachment (Claude Code 2.1.x) by its own type, then what it carries.
        let t = att.get("type").and_then(Value::as_str).unwrap_or("?");
        let names = |k: &str, sign: &str| -> Vec<String> {
            crate::fmt::words::string_list(att.get(k))
                .into_iter()
                .map(|n| format!("{sign}{n}"))
                .collect()
        };
        let mut changed = names("addedNames", "+");
        changed.extend(names("removedNames", "−"));
        let rest: serde_json::Map<String, Value> = att
            .iter()
            .filter(|(k, _)| {
                !matches!(
                    k.as_str(),
                    "type" | "addedNames" | "removedNames" | "addedLines"
                )
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut body = changed.join(" ");
        let more = crate::fmt::words::value_words(&Value::Object(rest));
        if !more.is_empty() {
            if !body.is_empty() {
                body.push_str(" · ");
            }
            body.push_str(&more);
        }
        let head = format!("{kind} · {}", t.replace('_', " "));
        return first_line(&if body.is_empty() {
            head
        } else {
            format!("{head} · {body}")
        });
    }
    let raw = |k: &str| payload.get(k).and_then(Value::as_str);
    if let (Some(sub), Some(text)) = (raw("subtype"), raw("content").or_else(|| raw("text"))) {
        // A system record with a subtype and a text (`away_summary`, `informational`): both.
        let text = crate::fmt::words::text_words(text);
        return first_line(&format!("{kind} · {} · {text}", sub.replace('_', " ")));
    }
    let msg = raw(crate::session::DEFERRED_EVENT)
        .or_else(|| raw("message"))
        .or_else(|| raw("error"))
        .or_else(|| raw("text"))
        .or_else(|| raw("content"));
    if f.frame_type == FrameType::SessionUsage && msg.is_none() {
        return payload_summary(&payload);
    }
    first_line(&crate::fmt::words::event_words(
        f.frame_type.as_str(),
        &payload,
        msg,
    ))
}

/// The text an event row shows of `payload` (its `message`, `error`, `text` or `content`
/// string, else its values named, `crate::fmt::words::value_words`), at most 512 characters: what a deferred event keeps
/// (`crate::session::Session::defer_events`).
pub fn event_text(payload: &Value) -> String {
    let raw = |k: &str| payload.get(k).and_then(Value::as_str);
    if let (Some(sub), Some(text)) = (raw("subtype"), raw("content").or_else(|| raw("text"))) {
        // As `event_line` says it of the payload itself.
        let text = crate::fmt::words::text_words(text);
        let s = format!("{} · {text}", sub.replace('_', " "));
        return s.chars().take(512).collect();
    }
    let s = ["message", "error", "text", "content"]
        .iter()
        .find_map(|k| payload.get(*k).and_then(Value::as_str))
        .map_or_else(|| crate::fmt::words::value_words(payload), str::to_owned);
    s.chars().take(512).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn long_summaries_are_cut_at_a_char_boundary() {
        let long = "é".repeat(SUMMARY_MAX_BYTES);
        let s = input_summary("Bash", &json!({ "command": long }));
        assert_eq!(s.len(), SUMMARY_MAX_BYTES + '…'.len_utf8());
        assert!(s.ends_with("é…"));
        assert_eq!(input_summary("Bash", &json!({"command": "ls"})), "ls");
    }
}
