//! Event rows in words (issue 22 item 7): an extension frame's kind and payload said as a
//! reader would, instead of its raw type, tags and bare values.
//!
//! Who calls it: `ui::feed` for generic event rows, and `session::summary::event_text` for the
//! summary a deferred event row keeps. Shapes: `x-<agent>.<kind>` types become the
//! kind's words (`x-claude-code.queue-operation` → `queue operation`); a text that starts with a
//! tag becomes the tag's words and its content without tags (`<task-notification><task-id>b0be39e
//! </task-id><status>completed</status>…` → `task notification · b0be39e completed …`), Claude
//! Code's slash commands `command /mcp`, their output `command output: …`; payload values get
//! their names and units (`hooks 3 · prevented: no`, `image/png · 766.4 KiB`).
//! Invariants: pure; the text returned is raw (the caller makes it visible) and one line; work
//! bounded by [`MAX_SCAN`] bytes of text.

use serde_json::Value;

/// Most bytes of a text looked at for tags and words (a row shows one line of it).
const MAX_SCAN: usize = 4096;

/// The words of an event row: `frame_type`'s kind, then what its payload says; `text` is the
/// payload's message text when it has one (`message`, `text`, `content`, a deferred row's
/// summary).
pub fn event_words(frame_type: &str, payload: &Value, text: Option<&str>) -> String {
    let kind = kind_words(frame_type);
    let body = match text {
        Some(t) => text_words(t),
        None => value_words(payload),
    };
    match (kind.is_empty(), body.is_empty()) {
        (_, true) => kind,
        (true, false) => body,
        (false, false) if body == kind || body.starts_with(&format!("{kind} ")) => body,
        (false, false) => format!("{kind} · {body}"),
    }
}

/// A hook row's payload (`crate::import::cc_records`) in words: `PostToolUse:Edit · ok · exit 0
/// · 93ms · uv run ruff format`, then the first line of its output.
pub fn hook_words(payload: &Value) -> String {
    let s = |k: &str| {
        payload
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let mut parts: Vec<String> = Vec::new();
    parts.push(
        s("hook_name")
            .or_else(|| s("hook_event"))
            .unwrap_or("hook")
            .to_owned(),
    );
    let outcome = s("outcome").unwrap_or("");
    parts.push(match outcome {
        "start" => "started".to_owned(),
        "success" => "ok".to_owned(),
        "non_blocking_error" | "error_during_execution" => "failed".to_owned(),
        "blocking_error" => "blocked".to_owned(),
        "additional_context" => "context added".to_owned(),
        "permission_decision" => format!("permission: {}", s("decision").unwrap_or("?")),
        "" | crate::session::hooks::PROGRESS => "ran".to_owned(),
        o => o.replace('_', " "),
    });
    if let Some(c) = payload.get("exit_code").and_then(Value::as_i64) {
        parts.push(format!("exit {c}"));
    }
    if let Some(ms) = payload.get("duration_ms").and_then(Value::as_f64) {
        parts.push(crate::fmt::duration_ms(ms));
    }
    if let Some(c) = s("command") {
        parts.push(squash(c));
    }
    if let Some(o) = s("output").or_else(|| s("stderr")) {
        let first = o
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        if !first.is_empty() {
            parts.push(first.to_owned());
        }
    }
    drop_csi(&parts.join(" · ")).into_owned()
}

/// A catalog publish that changed tools (`metadata.rawpv_catalog_delta: {added, removed}`) in
/// words: `+WebFetch +Grep −Mcp · 14 tools`.
pub fn catalog_delta_words(delta: &Value, tools: usize) -> String {
    let names = |k: &str| string_list(delta.get(k));
    let mut parts: Vec<String> = names("added")
        .into_iter()
        .map(|n| format!("+{n}"))
        .collect();
    parts.extend(names("removed").into_iter().map(|n| format!("−{n}")));
    format!(
        "{} · {tools} tool{}",
        parts.join(" "),
        crate::fmt::plural_s(tools)
    )
}

/// The strings of a JSON array (other items and other values: none).
pub fn string_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// `x-claude-code.queue-operation` → `queue operation`; a RAWP or unknown type stays as it is.
pub fn kind_words(frame_type: &str) -> String {
    match frame_type
        .strip_prefix("x-")
        .and_then(|t| t.split_once('.'))
    {
        Some((_, kind)) => kind.replace(['-', '_', '.'], " "),
        None => frame_type.to_owned(),
    }
}

/// A text that starts with a tag (`<system-reminder>…`, `<command-name>/mcp</command-name>`) in
/// words; other text as it is.
pub fn text_words(text: &str) -> String {
    let text = drop_csi(text);
    let t = text.trim_start();
    let t = &t[..floor_char_boundary(t, MAX_SCAN)];
    if let Some((name, args, _)) = command_envelope(t) {
        return format!("command {name} {args}").trim_end().to_owned();
    }
    if let Some(out) = tag(t, "local-command-stdout") {
        return format!("command output: {}", squash(&strip_tags(out)));
    }
    if let Some(name) = leading_tag(t) {
        let rest = strip_tags(t);
        let label = name.replace(['-', '_'], " ");
        let rest = squash(&rest);
        return if rest.is_empty() {
            label
        } else {
            format!("{label} · {rest}")
        };
    }
    t.to_owned()
}

/// `text` without its complete CSI sequences (`ESC [` parameters, a final byte `@`–`~`): in one
/// line they are colours, modes and cursor moves that mean nothing (`/context`'s
/// `ESC[?2026h`), and dropping one neither hides nor reorders text. Every other escape and
/// control stays, for the caller to make visible.
pub fn drop_csi(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\u{1b}') {
        return std::borrow::Cow::Borrowed(text);
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        if b[i] == 0x1b && b.get(i + 1) == Some(&b'[') {
            let mut j = i + 2;
            while b.get(j).is_some_and(|c| (0x20..=0x3f).contains(c)) {
                j += 1;
            }
            if b.get(j).is_some_and(|c| (0x40..=0x7e).contains(c)) {
                // ESC, `[`, the parameters and the final byte are ASCII: char boundaries.
                out.push_str(&text[copied..i]);
                copied = j + 1;
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    std::borrow::Cow::Owned(out)
}

/// The name of the tag `text` starts with (`<task-notification>` → `task-notification`).
fn leading_tag(text: &str) -> Option<&str> {
    let rest = text.strip_prefix('<')?;
    let end = rest.find('>')?;
    let name = &rest[..end];
    (!name.is_empty()
        && name.len() <= 40
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
    .then_some(name)
}

/// The text between `<name>` and `</name>` (to the end when unclosed), borrowed.
/// A slash command as Claude Code writes it: the whole text is `<command-message>`,
/// `<command-name>`, `<command-args>` (and `<command-contents>`) elements, in any order,
/// separated only by whitespace, with exactly one non-empty `<command-name>`. Returns
/// `(name, args, message)`, each trimmed, the name as written (no `/` added). `None` for any
/// other text: a typed prompt that merely mentions the tags stays a typed prompt (issue 20,
/// attack 9 #14).
pub fn command_envelope(text: &str) -> Option<(&str, &str, &str)> {
    const PARTS: [&str; 4] = ["message", "name", "args", "contents"];
    let (mut name, mut args, mut message) = (None, "", "");
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let after = rest.strip_prefix("<command-")?;
        let part = PARTS
            .iter()
            .find(|p| after.strip_prefix(**p).is_some_and(|a| a.starts_with('>')))?;
        let body_start = "<command-".len() + part.len() + 1;
        let close = format!("</command-{part}>");
        let len = rest[body_start..].find(&close)?;
        let body = rest[body_start..body_start + len].trim();
        match *part {
            "name" if name.is_some() => return None,
            "name" => name = Some(body),
            "args" => args = body,
            "message" => message = body,
            _ => {}
        }
        rest = rest[body_start + len + close.len()..].trim_start();
    }
    name.filter(|n| !n.is_empty()).map(|n| (n, args, message))
}

pub fn tag<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("<{name}>");
    let a = text.find(&open)? + open.len();
    let close = format!("</{name}>");
    let b = text[a..].find(&close).map_or(text.len(), |b| a + b);
    Some(&text[a..b])
}

/// `text` without its `<tag>` / `</tag>` markup (a `<` not starting a tag stays).
fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('<') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let name = after.strip_prefix('/').unwrap_or(after);
        match name.find('>') {
            Some(e)
                if e > 0
                    && name[..e]
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
            {
                out.push(' ');
                rest = &name[e + 1..];
            }
            _ => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whitespace runs (newlines too) as one space, trimmed.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The largest char boundary of `s` at or below `i`.
fn floor_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A payload without a message text in words: its subtype's words first, then each scalar
/// field named (`hooks 3`, `prevented: no`, sizes in bytes, durations); ids, uuids and empty
/// values are left out, at most six fields.
pub fn value_words(payload: &Value) -> String {
    let Some(o) = payload.as_object() else {
        return scalar_words("", payload).unwrap_or_default();
    };
    let mut parts = Vec::new();
    if let Some(s) = o.get("subtype").and_then(Value::as_str) {
        parts.push(s.replace(['-', '_'], " "));
    }
    for (k, v) in o {
        if parts.len() >= 6 {
            break;
        }
        if k == "subtype" || is_id_key(k) {
            continue;
        }
        match v {
            Value::Object(inner) => {
                // One level down: a nested map's scalars under their own names.
                for (k2, v2) in inner {
                    if parts.len() >= 6 {
                        break;
                    }
                    if !is_id_key(k2)
                        && let Some(w) = scalar_words(k2, v2)
                    {
                        parts.push(w);
                    }
                }
            }
            Value::Array(a) if !a.is_empty() => {
                let texts: Vec<&str> = a
                    .iter()
                    .filter_map(|x| x.get("text").and_then(Value::as_str))
                    .collect();
                if texts.is_empty() {
                    parts.push(format!("{} {}", key_words(k), a.len()));
                } else {
                    parts.push(text_words(texts[0]));
                }
            }
            _ => {
                if let Some(w) = scalar_words(k, v) {
                    parts.push(w);
                }
            }
        }
    }
    parts.join(" · ")
}

/// One named scalar: `hooks 3`, `prevented: no`, `image/png`, `766.4 KiB`; `None` for empty
/// strings, nulls and empty containers.
fn scalar_words(key: &str, v: &Value) -> Option<String> {
    let name = key_words(key);
    let lower = key.to_ascii_lowercase();
    match v {
        Value::Bool(b) => Some(format!("{name}: {}", if *b { "yes" } else { "no" })),
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
            if lower.contains("size") || lower.contains("bytes") {
                Some(crate::fmt::bytes(n.as_u64().unwrap_or(0)))
            } else if lower.ends_with("ms") || lower.contains("duration") {
                Some(format!("{name} {}", crate::fmt::duration_ms(x)))
            } else {
                Some(format!("{name} {n}"))
            }
        }
        Value::String(s) if !s.trim().is_empty() => {
            // A media type, a level, a value that names itself: shown bare.
            let bare = matches!(
                lower.as_str(),
                "media_type"
                    | "mediatype"
                    | "operation"
                    | "level"
                    | "summary"
                    | "status"
                    | "model"
                    | "type"
            ) || key.is_empty();
            let s = squash(&text_words(s));
            Some(if bare { s } else { format!("{name} {s}") })
        }
        Value::String(_) | Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// Keys that hold ids or the time (left out of a row: the row has its time, the detail shows
/// the rest).
fn is_id_key(k: &str) -> bool {
    let l = k.to_ascii_lowercase();
    l == "timestamp"
        || l == "id"
        || l.ends_with("id")
        || l.ends_with("uuid")
        || l.ends_with("_id")
        || l == "leafuuid"
}

/// A key in words: `hookCount` → `hooks`, `preventedContinuation` → `prevented`,
/// `stop_reason` → `stop reason`, `hasOutput` → `output`.
fn key_words(k: &str) -> String {
    match k {
        "hookCount" => return "hooks".to_owned(),
        "preventedContinuation" => return "prevented".to_owned(),
        "hookErrors" => return "hook errors".to_owned(),
        _ => {}
    }
    let k = k
        .strip_prefix("has")
        .filter(|r| r.starts_with(char::is_uppercase))
        .unwrap_or(k);
    let mut out = String::new();
    for (i, c) in k.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push(' ');
        }
        if c == '_' || c == '-' {
            out.push(' ');
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tags_become_labels() {
        assert_eq!(
            text_words(
                "<task-notification>\n<task-id>b0be39e</task-id>\n<status>completed</status>\n<summary>Background command done</summary></task-notification>"
            ),
            "task notification · b0be39e completed Background command done"
        );
        assert_eq!(
            text_words("<system-reminder>\nThe file was modified.</system-reminder>"),
            "system reminder · The file was modified."
        );
        assert_eq!(
            text_words(
                "<command-name>/mcp</command-name>\n  <command-message>mcp</command-message>\n  <command-args></command-args>"
            ),
            "command /mcp"
        );
        assert_eq!(
            text_words("<local-command-stdout>Reconnected to tidewave.</local-command-stdout>"),
            "command output: Reconnected to tidewave."
        );
        assert_eq!(text_words("a < b and <c"), "a < b and <c");
    }

    #[test]
    fn values_get_names_and_units() {
        let hooks = json!({"subtype": "stop_hook_summary", "hookCount": 3, "hookErrors": [], "preventedContinuation": false, "stopReason": "", "hasOutput": true, "level": "suggestion", "toolUseID": "a0"});
        assert_eq!(
            event_words("x-claude-code.system", &hooks, None),
            "system · stop hook summary · hooks 3 · prevented: no · output: yes · suggestion"
        );
        let image = json!({"media_type": "image/png", "size": 784_788});
        assert_eq!(
            event_words("x-claude-code.image", &image, None),
            "image · image/png · 766.4 KiB"
        );
        assert_eq!(
            event_words(
                "x-claude-code.queue-operation",
                &json!({"operation": "enqueue", "content": [{"type": "text", "text": "<ide_selection>The user selected</ide_selection>"}]}),
                None
            ),
            "queue operation · enqueue · ide selection · The user selected"
        );
        assert_eq!(
            event_words("x-codex.turn_started", &json!({}), None),
            "turn started"
        );
        assert_eq!(
            event_words(
                "x-claude-code.interrupt",
                &Value::Null,
                Some("[Request interrupted by user]")
            ),
            "interrupt · [Request interrupted by user]"
        );
    }
}
