//! The net change of a session's files as a git-style unified diff (issue 23 item 3): what
//! `rawpv patch` writes and the files panel copies, so that `git apply` in the session's working
//! directory reproduces the files as the agent's last recorded edits left them.
//!
//! Who calls it: `crate::cmd::patch`, the files panel's copy key (`crate::app`), tests.
//!
//! Format: a header of `#` lines (git apply skips text before the first `diff --git`; no header
//! line can start with `diff`, `---`, `+++` or `@@`) saying what the patch is and, above all,
//! what it is not: the files it leaves out and why, the changes made outside the recorded edits
//! that it does include, and the shell commands that may have written files and are not in it.
//! Then per file `diff --git a/P b/P`, `new file mode 100644` / `deleted file mode 100644`,
//! `--- a/P` (or `/dev/null`), `+++ b/P` (or `/dev/null`) and hunks with 3 lines of context
//! from `similar`'s line diff, each line written with its own end, a last line without one
//! followed by `\ No newline at end of file`. Paths are relative to the session's `cwd`; a path
//! with a character git would quote (a control character, `"`, `\`) is written quoted the way
//! git does (C escapes).
//!
//! Invariants: file contents are written byte for byte (a patch for a terminal is made visible
//! by the caller, never here); the header's untrusted text (commands, paths) goes through
//! `render::text::visible`, one line each, cut at [`HEADER_COLUMNS`].

use std::fmt::Write as _;

use similar::TextDiff;

use super::files::{FileEntry, Files, Net};

/// Widest header line (characters) before it is cut with `…`.
pub const HEADER_COLUMNS: usize = 160;
/// At most this many commands are listed in the header (the count of the rest follows).
pub const HEADER_COMMANDS: usize = 50;

/// Why a changed file whose two sides are equal is not in a patch.
pub const NO_NET: &str = "no net change: it ends as it began";

/// One file of a patch: its entry and its two sides.
pub struct Part<'a> {
    pub file: &'a FileEntry,
    pub net: Net,
}

/// A file left out of a patch, and why.
pub struct Left<'a> {
    pub file: &'a FileEntry,
    pub why: String,
}

/// Which of `chosen` (changed files of `files`) a patch can hold, with their two sides, and the
/// others with why not: a path with a NUL (no file system holds one; git would cut it), a file
/// outside the working directory, a net change not in the record, none at all ([`NO_NET`]).
/// `call` gives a touch's call. For `rawpv patch` and the files panel's copy keys.
pub fn split<'f, 'a>(
    files: &'f Files,
    rec: &dyn super::files::Records,
    call: &dyn Fn(usize) -> Option<&'a crate::session::Invocation>,
    chosen: impl IntoIterator<Item = &'f FileEntry>,
) -> (Vec<Part<'f>>, Vec<Left<'f>>) {
    let mut parts = Vec::new();
    let mut left = Vec::new();
    for f in chosen {
        if f.path.contains('\0') {
            left.push(Left {
                file: f,
                why: "its path holds a NUL character (the call cannot have made it)".into(),
            });
            continue;
        }
        if !f.inside {
            let why = match &files.cwd {
                Some(c) => format!("outside the working directory {c}"),
                None => {
                    "the session names no working directory to make its path relative to".into()
                }
            };
            left.push(Left { file: f, why });
            continue;
        }
        match files.net(rec, call, f) {
            Ok(net) if net.before == net.after => left.push(Left {
                file: f,
                why: NO_NET.into(),
            }),
            Ok(net) => parts.push(Part { file: f, net }),
            Err(why) => left.push(Left { file: f, why }),
        }
    }
    (parts, left)
}

/// `path` as git writes it in a header: as is, or C-quoted when it holds a control character, a
/// `"` or a `\` (git's `quote_c_style`).
pub fn git_path(prefix: &str, path: &str) -> String {
    let full = format!("{prefix}{path}");
    if !full
        .chars()
        .any(|c| c.is_control() || c == '"' || c == '\\')
    {
        return full;
    }
    let mut q = String::from("\"");
    for c in full.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\t' => q.push_str("\\t"),
            '\r' => q.push_str("\\r"),
            c if c.is_control() => {
                let mut b = [0u8; 4];
                for byte in c.encode_utf8(&mut b).bytes() {
                    let _ = write!(q, "\\{byte:03o}");
                }
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// One file's section (empty when its two sides are equal).
pub fn file_section(path: &str, net: &Net) -> String {
    let mut out = String::new();
    let (old, new) = (net.before.as_deref(), net.after.as_deref());
    if old == new {
        return out;
    }
    let a_path = git_path("a/", path);
    let b_path = git_path("b/", path);
    let _ = writeln!(out, "diff --git {a_path} {b_path}");
    match (old, new) {
        (None, Some(_)) => out.push_str("new file mode 100644\n"),
        (Some(_), None) => out.push_str("deleted file mode 100644\n"),
        _ => {}
    }
    let (old_text, new_text) = (old.unwrap_or(""), new.unwrap_or(""));
    if old_text == new_text {
        // An empty file created or deleted: the mode line is the whole change.
        return out;
    }
    let minus = if old.is_some() {
        a_path.as_str()
    } else {
        "/dev/null"
    };
    let plus = if new.is_some() {
        b_path.as_str()
    } else {
        "/dev/null"
    };
    let _ = writeln!(out, "--- {minus}\n+++ {plus}");
    // Lines end at `\n` only, as git reads them (`similar`'s line diff also ends one at a lone
    // `\r`, which made a patch git refused: attack 8 #2).
    let old_lines: Vec<&str> = old_text.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new_text.split_inclusive('\n').collect();
    let diff = TextDiff::configure()
        .timeout(crate::render::diff::DIFF_TIMEOUT)
        .diff_slices(&old_lines, &new_lines);
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        let _ = writeln!(out, "{}", hunk.header());
        for change in hunk.iter_changes() {
            out.push_str(match change.tag() {
                similar::ChangeTag::Equal => " ",
                similar::ChangeTag::Delete => "-",
                similar::ChangeTag::Insert => "+",
            });
            let line = change.value();
            out.push_str(line);
            if !line.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out
}

/// One header line: `# ` + `text` made visible and cut.
fn header_line(out: &mut String, text: &str) {
    let v = crate::render::text::visible(text);
    let _ = writeln!(out, "# {}", crate::fmt::truncate(&v, HEADER_COLUMNS));
}

/// One abandoned change, as the header lists it: `  x.txt: Edit at line 2, on branch 1 of the
/// fork at line 1 (the session ended on branch 2)`.
pub fn abandoned_line(a: &super::files::Abandoned) -> String {
    let ended = if a.main == 0 {
        "the session went on from an earlier record".to_owned()
    } else {
        format!("the session ended on branch {}", a.main)
    };
    format!(
        "  {}: {} at line {}, on branch {} of the fork at line {} ({ended})",
        a.shown, a.tool, a.line, a.branch, a.fork_line
    )
}

/// The whole patch: header, then `parts` in order. `left` are the changed files it leaves out;
/// `of` names the session (its file).
pub fn write_patch(files: &Files, parts: &[Part<'_>], left: &[Left<'_>], of: &str) -> String {
    let mut out = String::new();
    header_line(&mut out, &format!("rawpv patch of {of}"));
    match &files.cwd {
        Some(c) => {
            header_line(
                &mut out,
                &format!("paths relative to {c}: git apply from there"),
            );
            // git apply inside a subdirectory of a work tree skips every path (attack 8 #37).
            header_line(
                &mut out,
                "(if that is a subdirectory of a git work tree: git apply --directory=SUBDIR from its top, or patch -p1 there)",
            );
        }
        None => header_line(
            &mut out,
            "the session names no working directory: relative paths as the agent wrote them",
        ),
    }
    if files.cwd_changed {
        header_line(
            &mut out,
            "the working directory changed during the session: paths are relative to the first one",
        );
    }
    header_line(
        &mut out,
        &format!(
            "{} of {}: each from its content before its first recorded change to its content after its last",
            crate::fmt::plural(parts.len() as u64, "file"),
            crate::fmt::plural((parts.len() + left.len()) as u64, "changed file"),
        ),
    );
    if !left.is_empty() {
        if left.iter().all(|l| l.why == NO_NET) {
            header_line(
                &mut out,
                "not in this patch (nothing of theirs is missing):",
            );
        } else {
            header_line(&mut out, "NOT in this patch (it is not the whole change):");
        }
        for l in left {
            header_line(&mut out, &format!("  {}: {}", l.file.shown, l.why));
        }
    }
    if !files.abandoned.is_empty() {
        header_line(
            &mut out,
            "NOT in this patch: changes on an abandoned branch of the conversation (rewound or retried; whether Claude Code restored the files is not in the record):",
        );
        for a in &files.abandoned {
            header_line(&mut out, &abandoned_line(a));
        }
    }
    let outside: Vec<&FileEntry> = parts
        .iter()
        .map(|p| p.file)
        .filter(|f| f.outside > 0)
        .collect();
    if !outside.is_empty() {
        header_line(
            &mut out,
            "changed by something other than a recorded edit (the patch starts at what the first edit found):",
        );
        for f in outside {
            for t in &f.touches {
                let Some(o) = &t.outside else { continue };
                let Some(prev) = f.touches.iter().find(|x| x.call == o.after_call) else {
                    continue;
                };
                let ran: Vec<&str> = o.between.iter().take(3).map(|s| s.what.as_str()).collect();
                let ran = match o.between.len() {
                    0 => "nothing recorded ran between them".to_owned(),
                    n if n > 3 => format!("ran between: {} … ({n})", ran.join("; ")),
                    _ => format!("ran between: {}", ran.join("; ")),
                };
                header_line(
                    &mut out,
                    &format!(
                        "  {}: after line {}, before line {}; {ran}",
                        f.shown, prev.line, t.line
                    ),
                );
            }
        }
    }
    if files.writers.is_empty() {
        header_line(
            &mut out,
            "no shell command in the session looks like it wrote files",
        );
    } else {
        header_line(
            &mut out,
            "commands that may have written files and are not in this patch (a guess from the command line):",
        );
        for w in files.writers.iter().take(HEADER_COMMANDS) {
            let first = w.command.lines().next().unwrap_or("");
            let more = if w.command.lines().nth(1).is_some() {
                " …"
            } else {
                ""
            };
            header_line(
                &mut out,
                &format!(
                    "  line {} {}: {first}{more}  [{}]",
                    w.line,
                    w.tool,
                    w.why.join(", ")
                ),
            );
        }
        if files.writers.len() > HEADER_COMMANDS {
            header_line(
                &mut out,
                &format!("  … and {} more", files.writers.len() - HEADER_COMMANDS),
            );
        }
    }
    out.push('\n');
    for p in parts {
        out.push_str(&file_section(&p.file.shown, &p.net));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn sections_have_git_headers_and_newline_markers() {
        let created = Net {
            before: None,
            after: Some("a\nb".into()),
        };
        assert_eq!(
            file_section("x/n.txt", &created),
            "diff --git a/x/n.txt b/x/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/x/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of file\n"
        );
        let deleted = Net {
            before: Some("a\n".into()),
            after: None,
        };
        assert_eq!(
            file_section("d", &deleted),
            "diff --git a/d b/d\ndeleted file mode 100644\n--- a/d\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"
        );
        let same = Net {
            before: Some("a\n".into()),
            after: Some("a\n".into()),
        };
        assert_eq!(file_section("s", &same), "");
        // attack 8 #2: a lone CR is inside a line, as git reads it.
        let cr = Net {
            before: Some("a\rb\nc\n".into()),
            after: Some("a\rb\nC\n".into()),
        };
        assert_eq!(
            file_section("cr", &cr),
            "diff --git a/cr b/cr\n--- a/cr\n+++ b/cr\n@@ -1,2 +1,2 @@\n a\rb\n-c\n+C\n"
        );
        assert_eq!(git_path("a/", "we\"ird\u{1b}"), "\"a/we\\\"ird\\033\"");
    }
}
