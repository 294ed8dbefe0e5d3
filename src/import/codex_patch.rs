//! Codex `apply_patch` patches (`*** Begin Patch` … `*** End Patch`) → unified diff text, which
//! the `diff` renderer draws (`crate::render::diff`).
//!
//! Who calls it: the Codex rollout decoder (`super::codex`) for `apply_patch` heredocs run
//! through `shell` (before the freeform tool, 0.40) and for the freeform `apply_patch` tool's
//! input when no `patch_apply_end` diff came.
//!
//! The patch format: `*** Add File: p` (every line `+`), `*** Delete File: p`, `*** Update File:
//! p` with an optional `*** Move to: q`, then hunks that start with `@@` (optionally followed by
//! a context line such as a function signature) and hold ` `/`-`/`+` lines; `*** End of File`
//! marks a hunk anchored at the end. Codex hunks carry no line numbers, so the unified diff
//! numbers each hunk from 1 and says so in a first line (the renderer's preamble), never
//! presenting invented numbers as the file's.
//!
//! Invariants: pure; never panics; lines it does not recognise are kept as context-free header
//! lines (the renderer shows them dimmed), so nothing of the patch is lost.

use std::fmt::Write as _;

/// The note that starts a converted patch (shown as the diff's preamble).
pub const NUMBERING_NOTE: &str =
    "(Codex patch: its hunks carry no line numbers; each is numbered from 1)";

/// The patch text of an `apply_patch` run through the shell: `argv` of `["apply_patch", patch]`,
/// or a shell script (`bash -lc "apply_patch <<'EOF' … EOF"`) whose heredoc holds the patch.
pub fn patch_in_argv(argv: &[&str]) -> Option<String> {
    if let [cmd, patch] = argv
        && (*cmd == "apply_patch" || cmd.ends_with("/apply_patch"))
        && patch.contains("*** Begin Patch")
    {
        return Some((*patch).to_owned());
    }
    let script = argv.last()?;
    let t = script.trim_start();
    let rest = t
        .strip_prefix("apply_patch")
        .or_else(|| t.strip_prefix("applypatch"))?;
    let begin = rest.find("*** Begin Patch")?;
    let end = rest
        .find("*** End Patch")
        .map_or(rest.len(), |e| e + "*** End Patch".len());
    (begin < end).then(|| rest[begin..end].to_owned())
}

/// Paths a patch touches, each with its action (`A`, `M`, `D`, `R` for a move), in order.
pub fn patch_files(patch: &str) -> Vec<(char, String)> {
    let mut files = Vec::new();
    for l in patch.lines() {
        if let Some(p) = l.strip_prefix("*** Add File: ") {
            files.push(('A', p.trim().to_owned()));
        } else if let Some(p) = l.strip_prefix("*** Delete File: ") {
            files.push(('D', p.trim().to_owned()));
        } else if let Some(p) = l.strip_prefix("*** Update File: ") {
            files.push(('M', p.trim().to_owned()));
        } else if let Some(p) = l.strip_prefix("*** Move to: ")
            && let Some(last) = files.last_mut()
        {
            last.0 = 'R';
            last.1 = format!("{} → {}", last.1, p.trim());
        }
    }
    files
}

/// One hunk being collected.
#[derive(Default)]
struct Hunk {
    context: String,
    lines: Vec<String>,
}

impl Hunk {
    fn write(&self, out: &mut String) {
        if self.lines.is_empty() {
            return;
        }
        let old = self.lines.iter().filter(|l| !l.starts_with('+')).count();
        let new = self.lines.iter().filter(|l| !l.starts_with('-')).count();
        let start = |n: usize| usize::from(n > 0);
        let _ = write!(out, "@@ -{},{old} +{},{new} @@", start(old), start(new));
        if !self.context.is_empty() {
            out.push(' ');
            out.push_str(&self.context);
        }
        out.push('\n');
        for l in &self.lines {
            out.push_str(l);
            out.push('\n');
        }
    }
}

/// A Codex patch as a unified diff (see the module docs).
pub fn to_unified(patch: &str) -> String {
    let mut out = String::with_capacity(patch.len() + 256);
    out.push_str(NUMBERING_NOTE);
    out.push('\n');
    let mut hunk: Option<Hunk> = None;
    // `Some(true)`: inside an added file (every line is `+`).
    let mut adding = false;
    let flush = |hunk: &mut Option<Hunk>, out: &mut String| {
        if let Some(h) = hunk.take() {
            h.write(out);
        }
    };
    for l in patch.lines() {
        if l == "*** Begin Patch" || l == "*** End Patch" || l == "*** End of File" {
            continue;
        }
        if let Some(p) = l.strip_prefix("*** Add File: ") {
            flush(&mut hunk, &mut out);
            let _ = write!(out, "--- /dev/null\n+++ b/{}\n", p.trim());
            adding = true;
            hunk = Some(Hunk::default());
        } else if let Some(p) = l.strip_prefix("*** Delete File: ") {
            flush(&mut hunk, &mut out);
            adding = false;
            let _ = write!(
                out,
                "--- a/{}\n+++ /dev/null\n(deleted; the patch does not hold its text)\n",
                p.trim()
            );
        } else if let Some(p) = l.strip_prefix("*** Update File: ") {
            flush(&mut hunk, &mut out);
            adding = false;
            let _ = write!(out, "--- a/{0}\n+++ b/{0}\n", p.trim());
        } else if let Some(p) = l.strip_prefix("*** Move to: ") {
            // Rewrite the `+++` line just written.
            if let Some(at) = out.rfind("+++ b/") {
                out.truncate(at);
                let _ = writeln!(out, "+++ b/{}", p.trim());
            }
        } else if !adding && (l == "@@" || l.starts_with("@@ ")) {
            flush(&mut hunk, &mut out);
            hunk = Some(Hunk {
                context: l.trim_start_matches('@').trim().to_owned(),
                lines: Vec::new(),
            });
        } else if let Some(h) = hunk.as_mut() {
            if adding {
                h.lines.push(if l.starts_with('+') {
                    l.to_owned()
                } else {
                    format!("+{l}")
                });
            } else if l.starts_with(['+', '-', ' ']) {
                h.lines.push(l.to_owned());
            } else if l.is_empty() {
                // An empty context line whose leading space was stripped.
                h.lines.push(" ".to_owned());
            } else {
                flush(&mut hunk, &mut out);
                out.push_str(l);
                out.push('\n');
            }
        } else if l.starts_with(['+', '-', ' ']) {
            // A hunk without its `@@` line (Codex accepts one right after the file header).
            hunk = Some(Hunk {
                context: String::new(),
                lines: vec![l.to_owned()],
            });
        } else {
            out.push_str(l);
            out.push('\n');
        }
    }
    flush(&mut hunk, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heredoc_in_a_shell_script() {
        let script = "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: a.ts\n@@\n-x\n+y\n*** End Patch\nPATCH\n";
        let p = patch_in_argv(&["bash", "-lc", script]).unwrap();
        assert_eq!(
            p,
            "*** Begin Patch\n*** Update File: a.ts\n@@\n-x\n+y\n*** End Patch"
        );
        assert_eq!(patch_in_argv(&["bash", "-lc", "ls"]), None);
    }

    #[test]
    fn update_add_delete_move() {
        let p = "*** Begin Patch\n*** Update File: src/a.rs\n*** Move to: src/b.rs\n@@ fn main() {\n ctx\n-old\n+new\n\n*** Add File: n.txt\n+hello\n*** Delete File: gone.txt\n*** End Patch";
        assert_eq!(
            to_unified(p),
            format!(
                "{NUMBERING_NOTE}\n--- a/src/a.rs\n+++ b/src/b.rs\n@@ -1,3 +1,3 @@ fn main() {{\n ctx\n-old\n+new\n \n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,1 @@\n+hello\n--- a/gone.txt\n+++ /dev/null\n(deleted; the patch does not hold its text)\n"
            )
        );
        assert_eq!(
            patch_files(p),
            vec![
                ('R', "src/a.rs → src/b.rs".to_owned()),
                ('A', "n.txt".to_owned()),
                ('D', "gone.txt".to_owned())
            ]
        );
    }
}
