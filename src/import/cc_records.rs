//! Claude Code's records around the calls (issue 20): hook runs, `attachment` records and slash
//! commands, read into the payloads the transcript mapper emits.
//!
//! Who calls it: `super::cc_map::Mapper` (per record) and `super::claude_code` (the catalog
//! deltas). Shapes (from the corpus and claude-code-viewer's schemas, see
//! `/work/notes/cc-records.md`):
//! * 2.1.x `attachment` records: `{type: "attachment", attachment: {type, …}}`. Hook runs are
//!   `hook_success`, `hook_non_blocking_error`, `hook_blocking_error`, `hook_cancelled`,
//!   `hook_error_during_execution`, `hook_additional_context`, `hook_system_message`,
//!   `hook_stopped_continuation`, `hook_permission_decision` with `hookName`, `hookEvent`,
//!   `toolUseID`, `command`, `exitCode`, `durationMs`, `stdout`, `stderr`, `content`
//!   (a string or a list of strings), `blockingError: {blockingError, command}`, `decision`.
//!   `queued_command` (`prompt`, `commandMode`) is a message typed while the agent worked;
//!   `deferred_tools_delta` / `mcp_instructions_delta` (`addedNames`, `removedNames`) change the
//!   tool catalog; the others (`skill_listing`, `task_reminder`, …) are context.
//! * 1.0.x `system` records without `subtype`: `content` `"Running ␛[1mPostToolUse:Edit␛[22m..."`
//!   or `"␛[1mPostToolUse:Edit␛[22m [cmd] completed successfully: output"` (or `failed with
//!   non-blocking status code N: stderr`) and a `toolUseID`.
//! * 2.1.x `progress` records with `data: {type: "hook_progress", hookEvent, hookName, command}`
//!   and `parentToolUseID` (the call, for a tool's hooks): a hook Claude Code ran, with no outcome
//!   written (2.1.17–2.1.39 write no `hook_success` attachment after it).
//! * Slash commands: user text `<command-name>/x</command-name><command-message>…
//!   </command-message><command-args>a b</command-args>` (any order).
//!
//! The hook payload (`x-claude-code.hook`, read by `crate::session` and the views):
//! `{outcome, failed, hook_name?, hook_event?, tool_use_id?, command?, exit_code?, duration_ms?,
//! output?, stderr?, decision?}`; `outcome` is the attachment type without `hook_` (`success`,
//! `non_blocking_error`, …), `start` for a 1.0.x "Running …" record, `message` for 1.0.x text
//! that is neither, `progress` for a 2.1.x `hook_progress` record (ran; outcome not written); `output` is the text the hook printed (stdout, else `content`, else the
//! blocking error), ANSI as written. Invariants: pure; never panics; unknown fields are left in
//! the record (the frame keeps the raw attachment under `attachment`).

use serde_json::{Map, Value, json};

use super::at;

/// Attachment types that are context Claude Code put in front of the model (shown as quiet,
/// readable rows). Any other type that is not a hook, a queued command or a catalog delta is
/// unknown: a visible row, counted in the "not understood" finding.
pub const CONTEXT_ATTACHMENTS: &[&str] = &[
    "skill_listing",
    "task_reminder",
    "todo_reminder",
    "companion_intro",
    "plan_mode",
    "plan_mode_exit",
    "plan_mode_reentry",
    "auto_mode",
    "auto_mode_exit",
    "date_change",
    "nested_memory",
    "edited_text_file",
    "edited_image_file",
    "file",
    "directory",
    "compact_file_reference",
    "plan_file_reference",
    "command_permissions",
    "invoked_skills",
    "output_style",
    "agent_mention",
    "critical_system_reminder",
    "already_read_file",
    "diagnostics",
    "total_tokens_reminder",
    "goal_status",
    "budget_usd",
    "max_turns_reached",
    "async_hook_response",
    "silent_turn_reminder",
    "structured_output",
    "background_task_status",
    "autocheckpointing",
    "ultramemory",
    "instructions",
    "model",
    "agent_listing_delta",
    "deferred_tools_record",
];

/// Record types of the session's state rather than its conversation (2.1.x; claude-code-viewer
/// issues #210, #211, #231): kept as rows without a "not understood" finding, quiet unless in
/// [`TITLE_RECORDS`].
pub const META_RECORDS: &[&str] = &[
    "mode",
    "permission-mode",
    "last-prompt",
    "atis-latch",
    "ai-title",
    "custom-title",
    "agent-name",
    "agent-setting",
    "pr-link",
    "bridge-session",
    "worktree-state",
    "tag",
    "cost-state",
    "frame-link",
    "history-suppression",
];

/// Of [`META_RECORDS`], those a reader wants to see: the session's title, a pull request.
pub const TITLE_RECORDS: &[&str] = &["ai-title", "custom-title", "pr-link"];

/// What an `attachment` record is.
#[derive(Debug, Clone, PartialEq)]
pub enum Attachment {
    /// A hook run: the hook payload (module docs).
    Hook(Map<String, Value>),
    /// A message the user typed while the agent worked (`queued_command`, `commandMode`
    /// `prompt` or absent): its text.
    Prompt(String),
    /// A change of the tool catalog: tools added and removed (`deferred_tools_delta`,
    /// `mcp_instructions_delta`, whose names are MCP servers).
    CatalogDelta {
        added: Vec<String>,
        removed: Vec<String>,
    },
    /// Context (one of [`CONTEXT_ATTACHMENTS`], or a queued command that is not a prompt).
    Context,
    /// A type not known here (or none).
    Unknown,
}

/// Reads an `attachment` object (the record's `attachment` field).
pub fn attachment(att: &Value) -> Attachment {
    let t = att.get("type").and_then(Value::as_str).unwrap_or("");
    if let Some(outcome) = t.strip_prefix("hook_") {
        return Attachment::Hook(hook_attachment(outcome, att));
    }
    match t {
        "queued_command" => match queued_prompt(att) {
            Some(p) => Attachment::Prompt(p),
            None => Attachment::Context,
        },
        "deferred_tools_delta" | "mcp_instructions_delta" => Attachment::CatalogDelta {
            added: names(att.get("addedNames")),
            removed: names(att.get("removedNames")),
        },
        t if CONTEXT_ATTACHMENTS.contains(&t) => Attachment::Context,
        _ => Attachment::Unknown,
    }
}

fn names(v: Option<&Value>) -> Vec<String> {
    crate::fmt::words::string_list(v)
}

/// A `queued_command`'s text when it is a prompt typed by the user: `commandMode` `prompt` or
/// absent, not `isMeta`, `origin.kind` `human` or absent; `prompt` a string or text blocks.
fn queued_prompt(att: &Value) -> Option<String> {
    let mode = att.get("commandMode").and_then(Value::as_str);
    if !matches!(mode, None | Some("prompt"))
        || att.get("isMeta").and_then(Value::as_bool) == Some(true)
        || at(att, &["origin", "kind"])
            .and_then(Value::as_str)
            .is_some_and(|k| k != "human")
    {
        return None;
    }
    match att.get("prompt")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) => {
            let parts: Vec<&str> = blocks
                .iter()
                .filter_map(|b| match b {
                    Value::String(s) => Some(s.as_str()),
                    b => b.get("text").and_then(Value::as_str),
                })
                .collect();
            (!parts.is_empty()).then(|| parts.join("\n\n"))
        }
        _ => None,
    }
}

/// Whether a hook outcome is a failure (shown on the call's row).
pub fn outcome_failed(outcome: &str) -> bool {
    matches!(
        outcome,
        "non_blocking_error" | "blocking_error" | "error_during_execution" | "cancelled"
    )
}

fn hook_attachment(outcome: &str, att: &Value) -> Map<String, Value> {
    let s = |k: &str| att.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    let mut p = Map::new();
    p.insert("outcome".into(), json!(outcome));
    let mut failed = outcome_failed(outcome);
    if let Some(n) = s("hookName") {
        p.insert("hook_name".into(), json!(n));
    }
    if let Some(n) = s("hookEvent") {
        p.insert("hook_event".into(), json!(n));
    }
    if let Some(n) = s("toolUseID") {
        p.insert("tool_use_id".into(), json!(n));
    }
    let blocking = att.get("blockingError");
    let command = s("command").or_else(|| {
        blocking
            .and_then(|b| b.get("command"))
            .and_then(Value::as_str)
    });
    if let Some(c) = command {
        p.insert("command".into(), json!(c));
    }
    if let Some(c) = att.get("exitCode").and_then(Value::as_i64) {
        p.insert("exit_code".into(), json!(c));
        failed |= c != 0;
    }
    if let Some(d) = att.get("durationMs").and_then(Value::as_f64) {
        p.insert("duration_ms".into(), json!(d));
    }
    let content = match att.get("content") {
        Some(Value::String(c)) => Some(c.clone()),
        Some(Value::Array(a)) => Some(
            a.iter()
                .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
    .filter(|c| !c.is_empty());
    let output = s("stdout")
        .map(str::to_owned)
        .or(content)
        .or_else(|| {
            blocking
                .and_then(|b| b.get("blockingError"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .or_else(|| s("message").map(str::to_owned));
    if let Some(o) = output {
        p.insert("output".into(), json!(o));
    }
    if let Some(e) = s("stderr") {
        p.insert("stderr".into(), json!(e));
    }
    if let Some(d) = s("decision") {
        p.insert("decision".into(), json!(d));
        failed |= d == "deny";
    }
    p.insert("failed".into(), json!(failed));
    p
}

/// A 2.1.x `hook_progress` record's `data` read as a hook payload with outcome `progress`
/// (`None`: `data` is not a `hook_progress`). `tool_use_id`: the record's `parentToolUseID`.
pub fn hook_progress(data: &Value, tool_use_id: Option<&str>) -> Option<Map<String, Value>> {
    if data.get("type").and_then(Value::as_str) != Some("hook_progress") {
        return None;
    }
    let s = |k: &str| {
        data.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let mut p = Map::new();
    p.insert("outcome".into(), json!("progress"));
    for (from, to) in [
        ("hookName", "hook_name"),
        ("hookEvent", "hook_event"),
        ("command", "command"),
    ] {
        if let Some(v) = s(from) {
            p.insert(to.into(), json!(v));
        }
    }
    if let Some(id) = tool_use_id.filter(|s| !s.is_empty()) {
        p.insert("tool_use_id".into(), json!(id));
    }
    p.insert("failed".into(), json!(false));
    Some(p)
}

/// A 1.0.x `system` hook record's `content` read as a hook payload (`None`: not a hook's text).
pub fn system_hook(content: &str, tool_use_id: Option<&str>) -> Option<Map<String, Value>> {
    let plain = crate::render::ansi::strip_sgr(content);
    let plain = plain.trim_start();
    let mut p = Map::new();
    if let Some(id) = tool_use_id {
        p.insert("tool_use_id".into(), json!(id));
    }
    if let Some(rest) = plain.strip_prefix("Running ") {
        let name = rest
            .trim_end()
            .trim_end_matches("...")
            .trim_end_matches('…');
        if name.is_empty() || name.contains('\n') {
            return None;
        }
        p.insert("outcome".into(), json!("start"));
        p.insert("hook_name".into(), json!(name));
        p.insert("failed".into(), json!(false));
        return Some(p);
    }
    // `NAME [COMMAND] completed successfully: OUT` / `NAME [COMMAND] failed with … N: OUT`.
    let open = plain.find(" [")?;
    let name = &plain[..open];
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let after = &plain[open + 2..];
    let (close, marker, outcome) = [
        ("] completed successfully", "success"),
        (
            "] failed with non-blocking status code",
            "non_blocking_error",
        ),
        ("] failed with status code", "error_during_execution"),
        ("] failed", "error_during_execution"),
        ("]: ", "message"),
    ]
    .iter()
    .filter_map(|(m, o)| after.find(m).map(|i| (i, *m, *o)))
    .min_by_key(|(i, _, _)| *i)?;
    let command = &after[..close];
    let tail = &after[close + marker.len()..];
    let status = tail.split(':').next().unwrap_or("");
    p.insert("outcome".into(), json!(outcome));
    p.insert("hook_name".into(), json!(name));
    let event = name.split_once(':').map_or(name, |(ev, _)| ev);
    p.insert("hook_event".into(), json!(event));
    p.insert("command".into(), json!(command));
    let code = status
        .split(|c: char| !c.is_ascii_digit())
        .find(|d| !d.is_empty())
        .and_then(|d| d.parse::<i64>().ok());
    if let Some(c) = code {
        p.insert("exit_code".into(), json!(c));
    } else if outcome == "success" {
        p.insert("exit_code".into(), json!(0));
    }
    // The output as written (ANSI kept for the emulator): the record's own text after the
    // status phrase and its colon.
    let raw_tail = content
        .find(marker)
        .map_or(tail, |i| &content[i + marker.len()..]);
    let out = raw_tail.split_once(':').map_or("", |(_, o)| o);
    let out = out.strip_prefix(' ').unwrap_or(out);
    if !out.trim().is_empty() {
        p.insert("output".into(), json!(out));
    }
    p.insert("failed".into(), json!(outcome_failed(outcome)));
    Some(p)
}

/// A slash command in a user text: `(name, args)` (`/orchestrator`, `create TODO app`), from
/// `<command-name>` and `<command-args>`; `None` unless the whole text is the command-tag
/// envelope ([`crate::fmt::words::command_envelope`]): a prompt that mentions the tags, or a
/// command's output, is not a slash command.
pub fn slash_command(text: &str) -> Option<(String, String)> {
    let t = text.trim_start();
    if t.starts_with("<local-command-stdout>") || t.starts_with("<local-command-stderr>") {
        return None;
    }
    let (name, args, _) = crate::fmt::words::command_envelope(t)?;
    let name = if name.starts_with('/') {
        name.to_owned()
    } else {
        format!("/{name}")
    };
    Some((name, args.to_owned()))
}

pub use crate::fmt::words::tag;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_hooks_of_1_0() {
        let done = "\u{1b}[1mPostToolUse:MultiEdit\u{1b}[22m [uv run ruff format] completed successfully: 24 files left unchanged";
        assert_eq!(
            Value::Object(system_hook(done, Some("toolu_1")).unwrap()),
            json!({"tool_use_id": "toolu_1", "outcome": "success", "hook_name": "PostToolUse:MultiEdit",
                   "hook_event": "PostToolUse", "command": "uv run ruff format", "exit_code": 0,
                   "output": "24 files left unchanged", "failed": false})
        );
        let start = "Running \u{1b}[1mPostToolUse:MultiEdit\u{1b}[22m...";
        assert_eq!(
            Value::Object(system_hook(start, None).unwrap()),
            json!({"outcome": "start", "hook_name": "PostToolUse:MultiEdit", "failed": false})
        );
        let failed = "\u{1b}[1mPreToolUse:Bash\u{1b}[22m [./check [x] y] failed with non-blocking status code 2: \u{1b}[31mno\u{1b}[0m";
        assert_eq!(
            Value::Object(system_hook(failed, None).unwrap()),
            json!({"outcome": "non_blocking_error", "hook_name": "PreToolUse:Bash", "hook_event": "PreToolUse",
                   "command": "./check [x] y", "exit_code": 2, "output": "\u{1b}[31mno\u{1b}[0m", "failed": true})
        );
        assert_eq!(system_hook("Conversation compacted", None), None);
        assert_eq!(system_hook("Running", None), None);
    }

    #[test]
    fn hook_attachments_of_2_1() {
        let a = json!({"type": "hook_success", "hookName": "PreToolUse:Bash", "toolUseID": "toolu_A",
            "hookEvent": "PreToolUse", "content": "", "stdout": "{}\n", "stderr": "", "exitCode": 0,
            "command": "python3 x.py", "durationMs": 44});
        assert_eq!(
            attachment(&a),
            Attachment::Hook(
                json!({"outcome": "success", "hook_name": "PreToolUse:Bash", "hook_event": "PreToolUse",
                   "tool_use_id": "toolu_A", "command": "python3 x.py", "exit_code": 0, "duration_ms": 44.0,
                   "output": "{}\n", "failed": false})
                .as_object()
                .unwrap()
                .clone()
            )
        );
        let b = json!({"type": "hook_blocking_error", "hookName": "Stop", "hookEvent": "Stop",
            "blockingError": {"blockingError": "tests fail", "command": "make test"}});
        let Attachment::Hook(p) = attachment(&b) else {
            panic!("a hook")
        };
        assert_eq!(
            Value::Object(p),
            json!({"outcome": "blocking_error", "hook_name": "Stop", "hook_event": "Stop",
                   "command": "make test", "output": "tests fail", "failed": true})
        );
        let c = json!({"type": "hook_additional_context", "hookName": "UserPromptSubmit",
            "content": ["a", "b"]});
        let Attachment::Hook(p) = attachment(&c) else {
            panic!("a hook")
        };
        assert_eq!(p["output"], json!("a\nb"));
    }

    #[test]
    fn other_attachments() {
        assert_eq!(
            attachment(
                &json!({"type": "queued_command", "prompt": "also fix the tests", "commandMode": "prompt"})
            ),
            Attachment::Prompt("also fix the tests".into())
        );
        assert_eq!(
            attachment(
                &json!({"type": "queued_command", "prompt": "<task-notification>", "commandMode": "task-notification"})
            ),
            Attachment::Context
        );
        assert_eq!(
            attachment(
                &json!({"type": "deferred_tools_delta", "addedNames": ["WebFetch"], "addedLines": ["WebFetch"], "removedNames": ["X"]})
            ),
            Attachment::CatalogDelta {
                added: vec!["WebFetch".into()],
                removed: vec!["X".into()]
            }
        );
        assert_eq!(
            attachment(&json!({"type": "skill_listing", "content": "…"})),
            Attachment::Context
        );
        assert_eq!(
            attachment(&json!({"type": "brand_new"})),
            Attachment::Unknown
        );
        assert_eq!(attachment(&json!(3)), Attachment::Unknown);
    }

    #[test]
    fn slash_commands() {
        assert_eq!(
            slash_command(
                "<command-message>orchestrator is running…</command-message>\n<command-name>/orchestrator</command-name>\n<command-args>create TODO app</command-args>"
            ),
            Some(("/orchestrator".into(), "create TODO app".into()))
        );
        assert_eq!(
            slash_command("<command-name>mcp</command-name>"),
            Some(("/mcp".into(), String::new()))
        );
        assert_eq!(
            slash_command("<local-command-stdout>x</local-command-stdout>"),
            None
        );
        assert_eq!(slash_command("plain"), None);
        // Mentioning the tags inside a sentence is a typed prompt, not a command.
        assert_eq!(
            slash_command("Why does the log show <command-name>/rm</command-name> here?"),
            None
        );
        assert_eq!(
            slash_command("<command-name>/a</command-name> and then some typed words"),
            None
        );
        assert_eq!(
            slash_command("<command-name>/a</command-name><command-name>/b</command-name>"),
            None
        );
    }
}
