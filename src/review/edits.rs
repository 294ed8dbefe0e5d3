//! What one call did to files: its [`Fact`]s (read, created, wrote, edited, moved, deleted a
//! path), with the file's content before and after the call where the record holds them.
//!
//! Who calls it: [`super::files`] (the files model, once per call while it is built, and again
//! for the first and last touch of a file when its net change is asked for).
//!
//! Where the content comes from (issue 23 items 1, 2, 6):
//! * Claude Code `Edit` / `MultiEdit`: the record's `toolUseResult.originalFile` (1.0.43's
//!   `MultiEdit`: `originalFileContents`) is the file before; after is that with the call's
//!   `structuredPatch` applied ([`apply_hunks`]), else with its `old_string` → `new_string`
//!   replacements. `Write`: `content` is the file after; `type: "create"` means it did not
//!   exist, `"update"` with `originalFile` gives the file before.
//! * Codex `apply_patch`: `*** Add File` gives the whole new file, `*** Delete File` a deletion,
//!   `*** Update File` (a diff without line numbers) neither side.
//! * Gemini `write_file` (a new file: "created"), `replace`; Anthropic text-editor tools
//!   (`create` gives the new file, `str_replace` / `insert` an edit, `view` a read, `undo_edit`
//!   an [`Op::Undo`]: its result is not in the record).
//!
//! Invariants: pure (the caller reads the record); never panics on any JSON; a side it cannot
//! establish is `None`, never a guess. Line counts are of the call's own change.

use serde_json::Value;
use similar::{ChangeTag, TextDiff};

/// What a call did to one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Read (or viewed) it.
    Read,
    /// Made it (it did not exist before the call).
    Create,
    /// Wrote its whole content over an existing file.
    Write,
    /// Changed part of it.
    Edit,
    /// Removed it.
    Delete,
    /// Moved it to the given path (and maybe edited it).
    Move(String),
    /// A call that changes files with no result in the record (cut off, still running, its
    /// result line malformed): what it did is unknown, but it may have done it (Claude Code
    /// writes the file before it records the result).
    Unanswered,
    /// An Anthropic text editor's `undo_edit`: it put back some earlier content of the file,
    /// which the record does not hold (attack 8 #44).
    Undo,
}

impl Op {
    /// `read`, `created`, `written`, `edited`, `deleted`, `moved`.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Create => "created",
            Self::Write => "written",
            Self::Edit => "edited",
            Self::Delete => "deleted",
            Self::Move(_) => "moved",
            Self::Unanswered => "no result",
            Self::Undo => "undone",
        }
    }

    /// Whether the call changed the file (anything but a read).
    pub fn changes(&self) -> bool {
        !matches!(self, Self::Read)
    }
}

/// One call's effect on one path, as the record states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// The path as the call names it (absolute, or relative to the session's `cwd`).
    pub path: String,
    pub op: Op,
    /// The whole file before the call, when the record holds it (`Some("")` for a created file).
    pub before: Option<String>,
    /// The whole file after the call, when the record holds it or it follows from `before`.
    pub after: Option<String>,
    /// Lines the call added and removed.
    pub added: u32,
    pub removed: u32,
}

impl Fact {
    fn new(path: &str, op: Op) -> Self {
        Self {
            path: path.to_owned(),
            op,
            before: None,
            after: None,
            added: 0,
            removed: 0,
        }
    }

    /// Counts from the two sides when both are known.
    fn count_sides(mut self) -> Self {
        if let (Some(b), Some(a)) = (&self.before, &self.after) {
            (self.added, self.removed) = line_counts(b, a);
        }
        self
    }
}

/// The paths a call of a file-changing tool names in its `input` alone (for a call without a
/// result: `review::files` lists them as unanswered). Empty for other tools.
pub fn input_paths(tool: &str, input: &Value) -> Vec<String> {
    match tool {
        "Edit" | "MultiEdit" | "NotebookEdit" | "Write" | "write_file" | "replace" | "edit" => {
            s(input, PATH_KEYS).map(str::to_owned).into_iter().collect()
        }
        "apply_patch" => codex_patch(input, &Value::Null)
            .into_iter()
            .map(|f| f.path)
            .collect(),
        t if (t.starts_with("str_replace") || t.starts_with("text_editor"))
            && s(input, &["command"]) != Some("view") =>
        {
            s(input, PATH_KEYS).map(str::to_owned).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

/// Tools that run shell commands (their input's `command`, or `argv` / `cmd`).
pub fn is_shell(tool: &str) -> bool {
    matches!(
        tool,
        "Bash"
            | "shell"
            | "local_shell"
            | "container.exec"
            | "exec_command"
            | "run_shell_command"
            | "bash"
            | "bash_code_execution"
    )
}

/// Tools that start a subagent (whose own shell may write files).
pub fn is_subagent(tool: &str) -> bool {
    matches!(tool, "Task" | "Agent" | "delegate_to_agent")
}

/// The command line of a shell call's input: `command` (a string, or an argv list joined by
/// spaces), else `argv` / `cmd`. `None` when the input holds none.
pub fn shell_command(input: &Value) -> Option<String> {
    for k in ["command", "cmd", "argv"] {
        match input.get(k) {
            Some(Value::String(s)) => return Some(s.clone()),
            Some(Value::Array(a)) => {
                let words: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
                // `["bash", "-lc", script]`: the script is the command.
                if let [sh, flag, script] = words.as_slice()
                    && sh.ends_with("sh")
                    && flag.starts_with('-')
                    && flag.contains('c')
                {
                    return Some((*script).to_owned());
                }
                return Some(words.join(" "));
            }
            _ => {}
        }
    }
    None
}

fn s<'v>(v: &'v Value, keys: &[&str]) -> Option<&'v str> {
    keys.iter().find_map(|k| v.get(*k).and_then(Value::as_str))
}

const PATH_KEYS: &[&str] = &[
    "file_path",
    "filePath",
    "notebook_path",
    "absolute_path",
    "path",
];

/// What call `tool` did, from its `input`, its mapped `output` and (Claude Code) the record's
/// raw `toolUseResult` `tur`. Only successful calls should be asked (a failed edit changed
/// nothing). Empty when the call touches no file rawpv knows of.
pub fn facts(tool: &str, input: &Value, output: Option<&Value>, tur: Option<&Value>) -> Vec<Fact> {
    let none = Value::Null;
    let output = output.unwrap_or(&none);
    let tur = tur.filter(|t| t.is_object());
    let path = || {
        tur.and_then(|t| s(t, PATH_KEYS))
            .or_else(|| s(input, PATH_KEYS))
            .or_else(|| s(output, PATH_KEYS))
            .filter(|p| !p.is_empty())
    };
    match tool {
        "Read" | "NotebookRead" | "read_file" => path()
            .map(|p| {
                let mut f = Fact::new(p, Op::Read);
                // A Claude Code Read of the whole file (from line 1, every line) gives its
                // content at that moment (attack 8 #28: a change before the first edit).
                let n = |k: &str| output.get(k).and_then(Value::as_u64);
                let whole = n("start_line").is_some_and(|s| s <= 1)
                    && n("num_lines").is_some()
                    && n("num_lines") == n("total_lines");
                if tool == "Read" && whole {
                    f.after = s(output, &["content"]).map(str::to_owned);
                }
                vec![f]
            })
            .unwrap_or_default(),
        "read_many_files" => input
            .get("paths")
            .and_then(Value::as_array)
            .map(|ps| {
                ps.iter()
                    .filter_map(Value::as_str)
                    .map(|p| Fact::new(p, Op::Read))
                    .collect()
            })
            .unwrap_or_default(),
        "Edit" | "MultiEdit" | "NotebookEdit" => {
            path().map_or_else(Vec::new, |p| vec![cc_edit(p, tool, input, output, tur)])
        }
        "Write" | "write_file" => {
            path().map_or_else(Vec::new, |p| vec![write(p, input, output, tur)])
        }
        "replace" | "edit" => path().map_or_else(Vec::new, |p| {
            let mut f = Fact::new(p, Op::Edit);
            (f.added, f.removed) = match (s(input, &["old_string"]), s(input, &["new_string"])) {
                (Some(o), Some(n)) => line_counts(o, n),
                _ => diff_counts(output),
            };
            vec![f]
        }),
        "apply_patch" => codex_patch(input, output),
        t if t.starts_with("str_replace") || t.starts_with("text_editor") => {
            path().map_or_else(Vec::new, |p| text_editor(p, input))
        }
        _ => Vec::new(),
    }
}

/// A Claude Code `Edit` / `MultiEdit` / `NotebookEdit`.
fn cc_edit(path: &str, tool: &str, input: &Value, output: &Value, tur: Option<&Value>) -> Fact {
    let mut f = Fact::new(path, Op::Edit);
    let src = tur.unwrap_or(output);
    let hunks = src
        .get("structuredPatch")
        .or_else(|| src.get("structured_patch"))
        .and_then(Value::as_array)
        .filter(|h| !h.is_empty());
    f.before = tur
        .and_then(|t| s(t, &["originalFile", "originalFileContents"]))
        .map(str::to_owned);
    if tool == "NotebookEdit" {
        // The notebook's JSON is not in the record; the cell edit is not a line change of it.
        f.before = None;
        return f;
    }
    let reps = replacements(tool, input, tur);
    if let Some(b) = &f.before {
        // The structured patch is the tool's own record of what it did: where it applies it
        // wins over the replacement, which Claude Code itself does not do literally (deleting
        // a block, `new_string: ""`, it also takes the newline after it: the compaction
        // excerpt's app.js). The replacement is used only when the patch does not apply, and
        // never when it is ambiguous.
        f.after = hunks
            .and_then(|h| apply_hunks(b, h))
            .or_else(|| replace_all(b, &reps));
        // Claude Code creates a file through an Edit of an empty `old_string`: the record's
        // `originalFile` is then empty too (attack 8 #7).
        if b.is_empty() && matches!(reps.as_slice(), [(o, _, _)] if o.is_empty()) {
            f.op = Op::Create;
        }
    }
    match (&f.before, &f.after, hunks) {
        (Some(_), Some(_), _) => f.count_sides(),
        (_, _, Some(h)) => {
            (f.added, f.removed) = hunk_counts(h);
            f
        }
        _ => {
            for (o, n, _) in replacements(tool, input, tur) {
                let (a, r) = line_counts(&o, &n);
                f.added += a;
                f.removed += r;
            }
            f
        }
    }
}

/// `(old, new, replace_all)` of an Edit, or each of a `MultiEdit`'s edits, from the record's
/// result when it has them, else from the input.
fn replacements(tool: &str, input: &Value, tur: Option<&Value>) -> Vec<(String, String, bool)> {
    let one = |v: &Value| {
        Some((
            s(v, &["oldString", "old_string"])?.to_owned(),
            s(v, &["newString", "new_string"])?.to_owned(),
            v.get("replaceAll")
                .or_else(|| v.get("replace_all"))
                .and_then(Value::as_bool)
                == Some(true),
        ))
    };
    let src = tur.unwrap_or(input);
    if tool == "MultiEdit" {
        let edits = src
            .get("edits")
            .or_else(|| input.get("edits"))
            .and_then(Value::as_array);
        return edits
            .map(|e| e.iter().filter_map(one).collect())
            .unwrap_or_default();
    }
    one(src).or_else(|| one(input)).into_iter().collect()
}

/// `text` with each `(old, new, all)` applied in turn (the first occurrence, or every one);
/// `None` when an `old` is not found (the record does not describe this text).
fn replace_all(text: &str, edits: &[(String, String, bool)]) -> Option<String> {
    if edits.is_empty() {
        return None;
    }
    let mut t = text.to_owned();
    for (old, new, all) in edits {
        if old.is_empty() {
            // An empty old string on an empty file writes the new text (Claude Code's create
            // through Edit).
            if t.is_empty() {
                t.clone_from(new);
                continue;
            }
            return None;
        }
        if !t.contains(old.as_str()) {
            return None;
        }
        // Claude Code refuses an Edit whose old string is not unique (without replace_all), so
        // two occurrences mean the record does not describe this text: no guess.
        if !*all && t.matches(old.as_str()).nth(1).is_some() {
            return None;
        }
        // Claude Code deletes the newline after a deleted block too.
        let with_nl = format!("{old}\n");
        let old = if new.is_empty() && !old.ends_with('\n') && t.contains(&with_nl) {
            with_nl.as_str()
        } else {
            old.as_str()
        };
        t = if *all {
            t.replace(old, new)
        } else {
            t.replacen(old, new, 1)
        };
    }
    Some(t)
}

/// A Claude Code `Write` or a Gemini `write_file`.
fn write(path: &str, input: &Value, output: &Value, tur: Option<&Value>) -> Fact {
    let src = tur.unwrap_or(output);
    let content = s(src, &["content"]).or_else(|| s(input, &["content"]));
    let kind = s(src, &["type"]);
    let mut f = Fact::new(
        path,
        if kind == Some("create") {
            Op::Create
        } else {
            Op::Write
        },
    );
    f.after = content.map(str::to_owned);
    f.before = match kind {
        Some("create") => Some(String::new()),
        _ => tur.and_then(|t| s(t, &["originalFile"])).map(str::to_owned),
    };
    match (&f.before, &f.after) {
        (Some(_), Some(_)) => f.count_sides(),
        (None, Some(a)) => {
            f.added = line_count(a);
            f
        }
        _ => f,
    }
}

/// Anthropic text-editor tools (`str_replace_based_edit_tool`, `str_replace_editor`,
/// `text_editor_*`): the input's `command`.
fn text_editor(path: &str, input: &Value) -> Vec<Fact> {
    let mut f = match s(input, &["command"]) {
        Some("view") => return vec![Fact::new(path, Op::Read)],
        Some("create") => {
            let mut f = Fact::new(path, Op::Create);
            f.before = Some(String::new());
            f.after = s(input, &["file_text"]).map(str::to_owned);
            return vec![f.count_sides()];
        }
        Some("str_replace") => {
            let mut f = Fact::new(path, Op::Edit);
            if let (Some(o), Some(n)) = (s(input, &["old_str"]), s(input, &["new_str"])) {
                (f.added, f.removed) = line_counts(o, n);
            }
            f
        }
        Some("undo_edit") => return vec![Fact::new(path, Op::Undo)],
        Some("insert") => {
            let mut f = Fact::new(path, Op::Edit);
            f.added = s(input, &["new_str", "insert_text"]).map_or(0, line_count);
            f
        }
        _ => return Vec::new(),
    };
    f.op = Op::Edit;
    vec![f]
}

/// A Codex `apply_patch`: the patch text (`input.patch`, or the input itself as a string), and
/// the counts of its diff output when the patch is not at hand.
fn codex_patch(input: &Value, output: &Value) -> Vec<Fact> {
    // `codex exec --json` `file_change`: which files, not their text (attack 8 #4).
    if let Some(changes) = input.get("changes").and_then(Value::as_array) {
        return changes
            .iter()
            .filter_map(|c| {
                let p = s(c, &["path"])?;
                let mut f = Fact::new(
                    p,
                    match s(c, &["kind", "type"]) {
                        Some("add") => Op::Create,
                        Some("delete") => Op::Delete,
                        _ => Op::Edit,
                    },
                );
                if f.op == Op::Delete {
                    f.after = Some(String::new());
                }
                Some(f)
            })
            .collect();
    }
    let patch = s(input, &["patch", "input"]).or_else(|| input.as_str());
    let Some(patch) = patch.filter(|p| p.contains("*** Begin Patch")) else {
        return Vec::new();
    };
    let mut facts: Vec<Fact> = Vec::new();
    let mut cur: Option<Fact> = None;
    let mut body = String::new();
    let flush = |cur: &mut Option<Fact>, body: &mut String, facts: &mut Vec<Fact>| {
        if let Some(mut f) = cur.take() {
            if f.op == Op::Create {
                f.after = Some(std::mem::take(body));
                f.added = f.after.as_deref().map_or(0, line_count);
            }
            facts.push(f);
        }
        body.clear();
    };
    for l in patch.lines() {
        if let Some(p) = l.strip_prefix("*** Add File: ") {
            flush(&mut cur, &mut body, &mut facts);
            let mut f = Fact::new(p.trim(), Op::Create);
            f.before = Some(String::new());
            cur = Some(f);
        } else if let Some(p) = l.strip_prefix("*** Delete File: ") {
            flush(&mut cur, &mut body, &mut facts);
            let mut f = Fact::new(p.trim(), Op::Delete);
            f.after = Some(String::new());
            cur = Some(f);
        } else if let Some(p) = l.strip_prefix("*** Update File: ") {
            flush(&mut cur, &mut body, &mut facts);
            cur = Some(Fact::new(p.trim(), Op::Edit));
        } else if let Some(p) = l.strip_prefix("*** Move to: ") {
            if let Some(f) = cur.as_mut() {
                f.op = Op::Move(p.trim().to_owned());
            }
        } else if l.starts_with("*** ") {
            // `*** End Patch`, `*** End of File`.
        } else if let Some(f) = cur.as_mut() {
            match (&f.op, l.as_bytes().first()) {
                (Op::Create, Some(b'+')) => {
                    body.push_str(&l[1..]);
                    body.push('\n');
                }
                (Op::Edit | Op::Move(_), Some(b'+')) => f.added += 1,
                (Op::Edit | Op::Move(_), Some(b'-')) => f.removed += 1,
                _ => {}
            }
        }
    }
    flush(&mut cur, &mut body, &mut facts);
    if facts.iter().all(|f| f.added == 0 && f.removed == 0) {
        let (a, r) = diff_counts(output);
        if let [f] = facts.as_mut_slice() {
            (f.added, f.removed) = (a, r);
        }
    }
    facts
}

/// Added and removed lines of a unified diff string output.
fn diff_counts(output: &Value) -> (u32, u32) {
    let Some(text) = output.as_str() else {
        return (0, 0);
    };
    let p = crate::render::diff::parse::parse_patch(text);
    let mut n = (0u32, 0u32);
    for f in &p.files {
        for h in &f.hunks {
            for l in &h.lines {
                match l.kind {
                    crate::render::diff::parse::LineKind::Add => n.0 += 1,
                    crate::render::diff::parse::LineKind::Del => n.1 += 1,
                    _ => {}
                }
            }
        }
    }
    n
}

/// Lines in `text` (a last line without a newline counts).
fn line_count(text: &str) -> u32 {
    u32::try_from(text.lines().count()).unwrap_or(u32::MAX)
}

/// `(added, removed)` of a structured patch's hunks.
fn hunk_counts(hunks: &[Value]) -> (u32, u32) {
    let mut n = (0u32, 0u32);
    for h in hunks {
        for l in h
            .get("lines")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match l.as_str().and_then(|l| l.as_bytes().first()) {
                Some(b'+') => n.0 += 1,
                Some(b'-') => n.1 += 1,
                _ => {}
            }
        }
    }
    n
}

/// `(added, removed)` lines between two texts (a line diff, bounded by
/// `render::diff::DIFF_TIMEOUT`).
pub fn line_counts(old: &str, new: &str) -> (u32, u32) {
    // Lines end at `\n` only, as git counts them (`review::patch`).
    let old: Vec<&str> = old.split_inclusive('\n').collect();
    let new: Vec<&str> = new.split_inclusive('\n').collect();
    let diff = TextDiff::configure()
        .timeout(crate::render::diff::DIFF_TIMEOUT)
        .diff_slices(&old, &new);
    let mut n = (0u32, 0u32);
    for op in diff.ops() {
        for c in diff.iter_changes(op) {
            match c.tag() {
                ChangeTag::Insert => n.0 += 1,
                ChangeTag::Delete => n.1 += 1,
                ChangeTag::Equal => {}
            }
        }
    }
    n
}

/// `text` with a structured patch applied (`[{oldStart, oldLines, lines: [" ctx", "-old",
/// "+new", "\\ No newline at end of file"]}]`, camelCase or `snake_case`: jsdiff's format,
/// lines without their ends, a line followed by the marker has none). `None` when a context or
/// removed line does not match the text: the hunks do not describe it, and nothing is guessed.
///
/// Lines keep their ends (`\n`, and a `\r` before it), so a CRLF file and a missing newline at
/// the end come out exactly.
pub fn apply_hunks(text: &str, hunks: &[Value]) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::with_capacity(text.len() + 256);
    let mut pos = 0usize;
    for h in hunks {
        let num = |k: &[&str]| k.iter().find_map(|k| h.get(*k)).and_then(Value::as_u64);
        let old_start = usize::try_from(num(&["oldStart", "old_start"])?).ok()?;
        let old_lines = num(&["oldLines", "old_lines"]).unwrap_or(1);
        // A hunk that removes nothing starts after line `old_start`; otherwise at it (1-based).
        let at = if old_lines == 0 {
            old_start
        } else {
            old_start.checked_sub(1)?
        };
        if at < pos || at > lines.len() {
            return None;
        }
        lines[pos..at].iter().for_each(|l| out.push_str(l));
        pos = at;
        let hl: Vec<&str> = h
            .get("lines")?
            .as_array()?
            .iter()
            .map(Value::as_str)
            .collect::<Option<_>>()?;
        for (i, l) in hl.iter().enumerate() {
            // The tag is one ASCII byte, so `l[1..]` is a char boundary; any other first
            // character (fuzzing found a multi-byte one) is no hunk line.
            let (tag, body) = match l.as_bytes().first() {
                Some(b'\\') => continue,
                Some(b @ (b' ' | b'-' | b'+')) => (*b, &l[1..]),
                Some(_) => return None,
                None => (b' ', ""),
            };
            let ends = !hl.get(i + 1).is_some_and(|n| n.starts_with('\\'));
            let same = |have: Option<&&str>| {
                have.is_some_and(|h| match h.strip_suffix('\n') {
                    Some(t) => ends && t == body,
                    None => !ends && *h == body,
                })
            };
            match tag {
                b' ' | b'-' => {
                    if !same(lines.get(pos)) {
                        return None;
                    }
                    if tag == b' ' {
                        out.push_str(lines[pos]);
                    }
                    pos += 1;
                }
                b'+' => {
                    out.push_str(body);
                    if ends {
                        out.push('\n');
                    }
                }
                _ => return None,
            }
        }
    }
    lines.get(pos..)?.iter().for_each(|l| out.push_str(l));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn hunks_apply_to_the_original_and_refuse_a_mismatch() {
        let hunks = [
            json!({"oldStart": 2, "oldLines": 2, "newStart": 2, "newLines": 2,
            "lines": [" b", "-c", "+C"]}),
        ];
        assert_eq!(
            apply_hunks("a\nb\nc\nd\n", &hunks).as_deref(),
            Some("a\nb\nC\nd\n")
        );
        assert_eq!(apply_hunks("a\nb\nx\nd\n", &hunks), None);
        // An insertion after line 0, and a file without a newline at the end kept so.
        let ins = [json!({"oldStart": 0, "oldLines": 0, "lines": ["+z"]})];
        assert_eq!(apply_hunks("a", &ins).as_deref(), Some("z\na"));
        let crlf = [json!({"oldStart": 1, "oldLines": 1, "lines": ["-a\r", "+b\r"]})];
        assert_eq!(
            apply_hunks("a\r\nc\r\n", &crlf).as_deref(),
            Some("b\r\nc\r\n")
        );
        assert_eq!(
            apply_hunks("", &[json!({"oldStart": 1, "oldLines": 1})]),
            None
        );
        // jsdiff's marker: the old last line had no newline, the new one has.
        let nl = [json!({"oldStart": 1, "oldLines": 1, "lines":
            ["-a", "\\ No newline at end of file", "+a", "+b"]})];
        assert_eq!(apply_hunks("a", &nl).as_deref(), Some("a\nb\n"));
        assert_eq!(apply_hunks("a\n", &nl), None);
        // fuzz/review crash-92c866d4: a hunk line starting with a multi-byte character.
        let mb = [json!({"oldStart": 1, "oldLines": 1, "lines": ["\u{fffd}fn three() { 3 }"]})];
        assert_eq!(apply_hunks("a\n", &mb), None);
    }

    #[test]
    fn a_claude_code_edit_gives_both_sides() {
        let tur = json!({"filePath": "/p/a.rs", "originalFile": "x\ny\n", "oldString": "y",
            "newString": "Y\nZ", "structuredPatch": [{"oldStart": 2, "oldLines": 1,
            "newStart": 2, "newLines": 2, "lines": ["-y", "+Y", "+Z"]}]});
        let f = facts("Edit", &json!({"file_path": "/p/a.rs"}), None, Some(&tur));
        assert_eq!(
            f,
            vec![Fact {
                path: "/p/a.rs".into(),
                op: Op::Edit,
                before: Some("x\ny\n".into()),
                after: Some("x\nY\nZ\n".into()),
                added: 2,
                removed: 1,
            }]
        );
        // Without the structured patch, the replacement gives the same file.
        let tur2 = json!({"filePath": "/p/a.rs", "originalFile": "x\ny\n", "oldString": "y",
            "newString": "Y\nZ"});
        let g = facts("Edit", &json!({}), None, Some(&tur2));
        assert_eq!(g[0].after.as_deref(), Some("x\nY\nZ\n"));
    }

    #[test]
    fn replacements_never_guess() {
        // attack 8 #6: an old string found twice (Claude Code refuses such an Edit) gives no
        // "after"; #7: an Edit of an empty old string on an empty original creates the file.
        let tur = json!({"filePath": "/p/d", "originalFile": "dup\ndup\n", "oldString": "dup",
            "newString": "x"});
        assert_eq!(facts("Edit", &json!({}), None, Some(&tur))[0].after, None);
        let tur =
            json!({"filePath": "/p/n", "originalFile": "", "oldString": "", "newString": "hi\n"});
        let f = &facts("Edit", &json!({}), None, Some(&tur))[0];
        assert_eq!(
            (f.op.clone(), f.after.as_deref()),
            (Op::Create, Some("hi\n"))
        );
        // Deleting a block takes the newline after it, as Claude Code does.
        let tur = json!({"filePath": "/p/b", "originalFile": "a\nB\nc\n", "oldString": "B",
            "newString": ""});
        assert_eq!(
            facts("Edit", &json!({}), None, Some(&tur))[0]
                .after
                .as_deref(),
            Some("a\nc\n")
        );
    }

    #[test]
    fn writes_and_codex_patches() {
        let tur = json!({"type": "create", "filePath": "/p/n.txt", "content": "1\n2\n"});
        let f = facts("Write", &json!({}), None, Some(&tur));
        assert_eq!(
            f,
            vec![Fact {
                path: "/p/n.txt".into(),
                op: Op::Create,
                before: Some(String::new()),
                after: Some("1\n2\n".into()),
                added: 2,
                removed: 0,
            }]
        );
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** Update File: b.txt\n@@\n-x\n+y\n+z\n*** Delete File: c.txt\n*** End Patch";
        let f = facts("apply_patch", &json!({"patch": patch}), None, None);
        let ops: Vec<_> = f
            .iter()
            .map(|f| (f.path.as_str(), f.op.clone(), f.added, f.removed))
            .collect();
        assert_eq!(
            ops,
            vec![
                ("a.txt", Op::Create, 1, 0),
                ("b.txt", Op::Edit, 2, 1),
                ("c.txt", Op::Delete, 0, 0)
            ]
        );
        assert_eq!(f[0].after.as_deref(), Some("hi\n"));
    }

    #[test]
    fn shell_commands_from_argv() {
        assert_eq!(
            shell_command(&json!({"command": ["bash", "-lc", "rm -f x"]})).as_deref(),
            Some("rm -f x")
        );
        assert_eq!(
            shell_command(&json!({"command": "ls"})).as_deref(),
            Some("ls")
        );
        assert_eq!(shell_command(&json!({})), None);
    }
}
