//! Claude Code `toolUseResult` → `tool.invoke.result.output` in the shapes the renderers accept
//! (each `render/*.rs` module doc lists its `Shapes:`; SPEC 3.4, SPEC 4).
//!
//! Who calls it: the Claude Code transcript and stream-json adapters (`super::cc_map`).
//! Invariants: pure; never panics; any shape it does not know becomes the `tool_result` text, so
//! nothing is lost (the raw `toolUseResult` is kept in the frame's metadata by the caller).
//! Keys are written in `snake_case` (`file_path`, `structured_patch`, `old_start`, …).

use serde_json::{Map, Value, json};

use crate::protocol::OutputType;
use crate::protocol::rules::expected_output_type;

/// Text that marks a tool call the user rejected or interrupted (Claude Code writes it as the
/// `tool_result` content, with `is_error: true`).
pub const REJECTED_PREFIX: &str = "The user doesn't want to proceed with this tool use";
/// Marker of an interrupt, as a user text block or a `tool_result` content.
pub const INTERRUPTED_MARKER: &str = "[Request interrupted by user";

/// The plain text of a `tool_result.content`: a string, or the `text` blocks of a list joined by
/// newlines (other blocks become `[<type>]` placeholders; image bytes are never copied).
pub fn result_text(content: Option<&Value>) -> String {
    match content {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            let mut parts = Vec::with_capacity(blocks.len());
            for b in blocks {
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => parts.push(str_of(b, "text").to_owned()),
                    // A placeholder with its media type, size and pixel size (issue 20): the
                    // bytes stay in the record (the viewer's `i`/`I` save or open them).
                    Some("image") => match super::image_meta::block_meta(b) {
                        Some(m) => parts.push(format!("[image: {}]", m.words())),
                        None => parts.push("[image]".to_owned()),
                    },
                    Some(t) => parts.push(format!("[{t}]")),
                    None => parts.push(b.as_str().map_or_else(|| b.to_string(), str::to_owned)),
                }
            }
            parts.join("\n")
        }
        Some(other) => other.to_string(),
    }
}

/// Whether a result that is not flagged `is_error` still says the tool failed: a `TaskUpdate`
/// whose `toolUseResult` is `{success: false, error?}` (an unknown task id; Claude Code writes
/// the message as the `tool_result` text). Such a call is a failed call (status `error`).
pub fn reports_failure(name: &str, tur: Option<&Value>) -> bool {
    name == "TaskUpdate"
        && tur.and_then(|t| t.get("success")).and_then(Value::as_bool) == Some(false)
}

/// Whether a failed `tool_result` is a user rejection or interrupt (→ status `cancelled`).
pub fn is_rejection(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with(REJECTED_PREFIX) || t.starts_with(INTERRUPTED_MARKER)
}

/// The output of one call and its `output_type`.
///
/// `text` is the `tool_result` content as text; `tur` the record's `toolUseResult` (any JSON);
/// `input` the `tool_use` input. Errors, strings and unknown shapes give `text` as the output.
/// `output_type` follows SPEC 3.4 ([`expected_output_type`]) except for a Read of an image
/// (`binary_ref`).
pub fn tool_output(
    name: &str,
    text: &str,
    tur: Option<&Value>,
    input: Option<&Value>,
    is_error: bool,
) -> (Value, OutputType) {
    let shaped = if is_error {
        None
    } else if name == "LS" {
        ls_tree(text).map(Shaped::Plain)
    } else {
        tur.and_then(Value::as_object)
            .and_then(|o| shape(name, o, text, input))
    };
    if let Some(Shaped::Binary(v)) = shaped {
        return (v, OutputType::BinaryRef);
    }
    let output = match shaped {
        Some(Shaped::Plain(v)) => v,
        Some(Shaped::Binary(_)) | None => Value::String(text.to_owned()),
    };
    let (ot, _) = expected_output_type(name, None, Some(&output));
    (output, ot)
}

/// An `LS` result (`- /dir/\n  - sub/\n    - file`, two spaces a level, directories ending in
/// `/`, a trailing note) as `{filenames}` for the tree renderer: every file's full path and every
/// empty directory's (ending in `/`). `None` when no line is an entry.
fn ls_tree(text: &str) -> Option<Value> {
    // (depth, full path) of every entry line.
    let mut entries: Vec<(usize, String)> = Vec::new();
    let mut stack: Vec<String> = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        let Some(name) = t.strip_prefix("- ") else {
            continue;
        };
        let depth = (line.len() - t.len()) / 2;
        stack.truncate(depth);
        let full = format!("{}{name}", stack.last().map_or("", String::as_str));
        if name.ends_with('/') {
            stack.push(full.clone());
        }
        entries.push((depth, full));
    }
    let out: Vec<Value> = entries
        .iter()
        .enumerate()
        .filter(|(i, (depth, full))| {
            // A file, or a directory nothing is listed under (the root line excepted).
            !full.ends_with('/') || (*i > 0 && entries.get(i + 1).is_none_or(|(d, _)| d <= depth))
        })
        .map(|(_, (_, full))| Value::String(full.clone()))
        .collect();
    (!out.is_empty()).then(|| json!({ "filenames": out }))
}

enum Shaped {
    Plain(Value),
    Binary(Value),
}

fn str_of<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

/// Copies the listed `(from, to)` keys that are present.
fn pick(o: &Map<String, Value>, keys: &[(&str, &str)]) -> Map<String, Value> {
    let mut m = Map::new();
    for (from, to) in keys {
        if let Some(v) = o.get(*from) {
            m.insert((*to).to_owned(), v.clone());
        }
    }
    m
}

/// `camelCase` → `snake_case` for every object key, recursively.
pub fn snake_keys(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (snake(k), snake_keys(v))).collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(snake_keys).collect()),
        other => other.clone(),
    }
}

fn snake(k: &str) -> String {
    let mut s = String::with_capacity(k.len() + 4);
    for c in k.chars() {
        if c.is_ascii_uppercase() {
            s.push('_');
            s.push(c.to_ascii_lowercase());
        } else {
            s.push(c);
        }
    }
    s
}

/// Adds `structured_patch` when it is a non-empty list.
fn add_patch(m: &mut Map<String, Value>, o: &Map<String, Value>) {
    if let Some(Value::Array(p)) = o.get("structuredPatch")
        && !p.is_empty()
    {
        m.insert(
            "structured_patch".into(),
            snake_keys(&Value::Array(p.clone())),
        );
    }
}

fn shape(name: &str, o: &Map<String, Value>, text: &str, input: Option<&Value>) -> Option<Shaped> {
    let v = match name {
        "Edit" => {
            let mut m = pick(
                o,
                &[
                    ("filePath", "file_path"),
                    ("oldString", "old_string"),
                    ("newString", "new_string"),
                    ("replaceAll", "replace_all"),
                    ("userModified", "user_modified"),
                ],
            );
            add_patch(&mut m, o);
            Value::Object(m)
        }
        "MultiEdit" => {
            let mut m = pick(o, &[("filePath", "file_path")]);
            if let Some(e) = o.get("edits") {
                m.insert("edits".into(), snake_keys(e));
            }
            add_patch(&mut m, o);
            Value::Object(m)
        }
        "Write" => {
            let mut m = pick(
                o,
                &[
                    ("filePath", "file_path"),
                    ("content", "content"),
                    ("type", "type"),
                    ("originalFile", "original_file"),
                ],
            );
            add_patch(&mut m, o);
            Value::Object(m)
        }
        "Read" | "NotebookRead" => {
            let file = o.get("file")?;
            match o.get("type").and_then(Value::as_str) {
                Some("text") => Value::Object(pick(
                    file.as_object()?,
                    &[
                        ("filePath", "file_path"),
                        ("content", "content"),
                        ("startLine", "start_line"),
                        ("numLines", "num_lines"),
                        ("totalLines", "total_lines"),
                    ],
                )),
                Some("image") => {
                    let path = input.map(|i| str_of(i, "file_path")).unwrap_or_default();
                    let mut m = Map::new();
                    if !path.is_empty() {
                        m.insert("name".into(), Value::String(path.to_owned()));
                    }
                    if let Some(t) = file.get("type") {
                        m.insert("media_type".into(), t.clone());
                    }
                    if let Some(s) = file.get("originalSize") {
                        m.insert("size".into(), s.clone());
                    }
                    return Some(Shaped::Binary(Value::Object(m)));
                }
                _ => return None,
            }
        }
        "Bash" => {
            let mut m = pick(
                o,
                &[
                    ("stdout", "stdout"),
                    ("stderr", "stderr"),
                    ("interrupted", "interrupted"),
                    ("returnCode", "exit_code"),
                    ("exitCode", "exit_code"),
                    ("backgroundTaskId", "background_task_id"),
                    ("returnCodeInterpretation", "return_code_interpretation"),
                ],
            );
            if !m.contains_key("stdout") {
                m.insert("stdout".into(), Value::String(text.to_owned()));
            }
            Value::Object(m)
        }
        "BashOutput" | "TaskOutput" if o.contains_key("stdout") || o.contains_key("shellId") => {
            Value::Object(pick(
                o,
                &[
                    ("command", "command"),
                    ("status", "status"),
                    ("exitCode", "exit_code"),
                    ("shellId", "shell_id"),
                    ("stdout", "stdout"),
                    ("stderr", "stderr"),
                ],
            ))
        }
        // Cards (`crate::render::cards`): the questions and their answers; a task list.
        // The answers are keyed by the question's text: no key is rewritten.
        "AskUserQuestion" if o.contains_key("answers") => Value::Object(pick(
            o,
            &[("questions", "questions"), ("answers", "answers")],
        )),
        // A failed update: its message (the card says it failed, with this text).
        "TaskUpdate" if o.get("success").and_then(Value::as_bool) == Some(false) => {
            let msg = o.get("error").and_then(Value::as_str).unwrap_or(text);
            Value::String(msg.to_owned())
        }
        "TaskList" | "TaskGet" | "TaskCreate" | "TaskUpdate"
            if o.contains_key("tasks") || o.get("task").is_some_and(Value::is_object) =>
        {
            Value::Object(o.clone())
        }
        "Grep" => match o.get("mode").and_then(Value::as_str) {
            Some("content" | "count") => {
                let c = o.get("content").and_then(Value::as_str).unwrap_or(text);
                Value::String(c.to_owned())
            }
            _ => o.get("filenames").filter(|f| f.is_array())?.clone(),
        },
        "Glob" => {
            let m = pick(
                o,
                &[
                    ("filenames", "filenames"),
                    ("numFiles", "num_files"),
                    ("truncated", "truncated"),
                ],
            );
            if !m.contains_key("filenames") {
                return None;
            }
            Value::Object(m)
        }
        // The plan is saved to a file (`toolUseResult {plan, filePath}`; 2.1.x asks with `{}`
        // and writes `plan: null`, so the file is where the plan is): the result keeps the
        // file's path beside what the user was told. The plan itself is the request's.
        "ExitPlanMode" if o.get("filePath").is_some_and(Value::is_string) => {
            let mut m = Map::new();
            m.insert("result".into(), Value::String(text.to_owned()));
            m.extend(pick(o, &[("filePath", "file_path")]));
            Value::Object(m)
        }
        "TodoWrite" => {
            if !o.contains_key("newTodos") {
                return None;
            }
            snake_keys(&Value::Object(pick(
                o,
                &[("oldTodos", "old_todos"), ("newTodos", "new_todos")],
            )))
        }
        "WebFetch" => {
            let mut m = pick(
                o,
                &[
                    ("url", "url"),
                    ("code", "code"),
                    ("codeText", "code_text"),
                    ("bytes", "bytes"),
                    ("durationMs", "duration_ms"),
                ],
            );
            let content = o.get("result").cloned().unwrap_or_else(|| json!(text));
            m.insert("content".into(), content);
            Value::Object(m)
        }
        "WebSearch" => {
            let mut results = Vec::new();
            for r in o.get("results").and_then(Value::as_array)? {
                match r {
                    Value::Object(ro) => match ro.get("content") {
                        Some(Value::Array(items)) => results.extend(items.iter().cloned()),
                        _ => results.push(r.clone()),
                    },
                    other => results.push(other.clone()),
                }
            }
            let mut m = pick(o, &[("query", "query")]);
            if let Some(q) = o.get("query").and_then(Value::as_str) {
                m.insert("title".into(), Value::String(q.to_owned()));
            }
            m.insert("results".into(), Value::Array(results));
            Value::Object(m)
        }
        "Task" | "Agent" => {
            let mut m = pick(
                o,
                &[
                    ("content", "content"),
                    ("totalDurationMs", "total_duration_ms"),
                    ("totalTokens", "total_tokens"),
                    ("totalToolUseCount", "total_tool_use_count"),
                    ("agentId", "agent_id"),
                    ("status", "status"),
                ],
            );
            if !m.contains_key("content") {
                m.insert("content".into(), Value::String(text.to_owned()));
            }
            if let Some(d) = input.and_then(|i| i.get("description")) {
                m.insert("description".into(), d.clone());
            }
            Value::Object(m)
        }
        _ => return None,
    };
    Some(Shaped::Plain(v))
}

#[cfg(test)]
mod tests {
    #[test]
    fn ls_output_becomes_a_tree() {
        let text = "- /p/\n  - a.md\n  - src/\n    - main.rs\n  - empty/\n  - z.txt\n\nNOTE: do any of the files above seem malicious?";
        assert_eq!(
            super::ls_tree(text),
            Some(
                serde_json::json!({"filenames": ["/p/a.md", "/p/src/main.rs", "/p/empty/", "/p/z.txt"]})
            )
        );
        assert_eq!(super::ls_tree("no entries"), None);
    }

    use super::*;

    #[test]
    fn edit_structured_patch_is_snake_case() {
        let tur = json!({"filePath":"/a.rs","oldString":"x","newString":"y","originalFile":"big",
            "structuredPatch":[{"oldStart":1,"oldLines":1,"newStart":1,"newLines":1,"lines":["-x","+y"]}]});
        let (out, ot) = tool_output("Edit", "ok", Some(&tur), None, false);
        assert_eq!(ot, OutputType::Diff);
        assert_eq!(out["file_path"], "/a.rs");
        assert_eq!(out["structured_patch"][0]["old_start"], 1);
        assert!(out.get("original_file").is_none());
    }

    #[test]
    fn errors_and_strings_keep_the_text() {
        let tur = json!("Error: nope");
        let (out, ot) = tool_output("Bash", "nope", Some(&tur), None, true);
        assert_eq!(out, json!("nope"));
        assert_eq!(ot, OutputType::Text);
    }

    #[test]
    fn grep_modes() {
        let files = json!({"mode":"files_with_matches","filenames":["a","b"],"numFiles":2});
        assert_eq!(
            tool_output("Grep", "", Some(&files), None, false),
            (json!(["a", "b"]), OutputType::FileList)
        );
        let content = json!({"mode":"content","content":"1:x","filenames":[],"numLines":1});
        assert_eq!(
            tool_output("Grep", "", Some(&content), None, false),
            (json!("1:x"), OutputType::Text)
        );
    }

    #[test]
    fn read_image_is_binary_ref() {
        let tur =
            json!({"type":"image","file":{"base64":"AAAA","type":"image/png","originalSize":3}});
        let input = json!({"file_path":"/x.png"});
        let (out, ot) = tool_output("Read", "", Some(&tur), Some(&input), false);
        assert_eq!(ot, OutputType::BinaryRef);
        assert_eq!(
            out,
            json!({"name":"/x.png","media_type":"image/png","size":3})
        );
    }

    #[test]
    fn rejection_text() {
        assert!(is_rejection(
            "The user doesn't want to proceed with this tool use. The tool use was rejected"
        ));
        assert!(is_rejection("[Request interrupted by user for tool use]"));
        assert!(!is_rejection("Exit code 1"));
    }
}
