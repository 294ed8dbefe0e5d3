//! `rawpv patch INPUT [--file PATH]…`: the net change of the session's files as a git-style
//! unified diff on stdout (issue 23 item 3; the format is `crate::review::patch`'s).
//!
//! Who calls it: `main`. Exit codes: 0 a patch was written (a partial one says so in its
//! header and on stderr: the files left out and why), 1 nothing could be made (no file changed,
//! none of the `--file`s changed, or no changed file's net change is in the record; the
//! message says which), 2 the input could not be read.
//!
//! Changes on an abandoned branch of a forked Claude Code conversation (a rewind, a retried
//! prompt) are left out and named in the header and on stderr: the patch follows the branch
//! the session ended on (`review::files::Abandoned`).
//!
//! Files outside the session's working directory are left out (a patch path relative to it
//! cannot name them), and so are files whose content before the session or after their last
//! edit is not in the record (`review::files::FileEntry::no_net`).
//!
//! A terminal on stdout gets the patch made visible (control characters in file contents as
//! control pictures, `render::text::visible`) and a note on stderr; piped or redirected, the
//! bytes are exact.
//!
//! Memory: the input is folded as the viewer folds it (`cmd::load_session`); the files model
//! keeps no content, and one file's two sides are in memory at a time.

use std::io::IsTerminal as _;

use crate::cli::InputArgs;
use crate::review::files::{Files, normalise};
use crate::review::patch::{split, write_patch};

/// Runs the command; returns the exit code.
pub async fn run(input: &InputArgs, only: &[String]) -> i32 {
    let input = &match input.one_only("patch") {
        Ok(i) => i,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let Some((session, _)) = super::load_session_or_say(input).await else {
        return 2;
    };
    let files = Files::of_session(&session);
    let shown_input = crate::render::text::visible(&input.input);
    let cwd = files.cwd.clone();
    let wanted = |f: &crate::review::files::FileEntry| {
        only.is_empty()
            || only
                .iter()
                .any(|p| *p == f.shown || *p == f.path || normalise(p, cwd.as_deref()) == f.path)
    };
    let changed: Vec<_> = files.changed().filter(|f| wanted(f)).collect();
    if changed.is_empty() {
        let msg = if only.is_empty() && !files.writers.is_empty() {
            // The record still says files were likely changed (attack 8 #34).
            let w = &files.writers[0];
            format!(
                "no recorded edit changed a file, but {} may have (not recordable as a patch), the first: line {} {}: {}",
                crate::fmt::plural(files.writers.len() as u64, "command"),
                w.line,
                crate::render::text::visible(&w.tool),
                crate::render::text::visible(w.command.lines().next().unwrap_or(""))
            )
        } else if only.is_empty() && !files.abandoned.is_empty() {
            let a = &files.abandoned[0];
            format!(
                "every change is on an abandoned branch of the conversation ({}), the first: {}",
                crate::fmt::plural(files.abandoned.len() as u64, "change"),
                crate::render::text::visible(crate::review::patch::abandoned_line(a).trim_start())
            )
        } else if only.is_empty() {
            "no call in the session changed a file".to_owned()
        } else {
            let list: Vec<String> = only
                .iter()
                .map(|p| crate::render::text::visible(p))
                .collect();
            format!("no changed file is {}", list.join(" or "))
        };
        eprintln!("rawpv: nothing to patch in {shown_input}: {msg}");
        return 1;
    }
    let call = |i: usize| session.invocations.get(i).map(|b| &**b);
    let (parts, left) = split(&files, &session, &call, changed);
    if parts.is_empty() {
        eprintln!(
            "rawpv: nothing to patch in {shown_input}: no changed file's net change is in the record:"
        );
        for l in &left {
            eprintln!(
                "  {}: {}",
                crate::render::text::visible(&l.file.shown),
                crate::render::text::visible(&l.why)
            );
        }
        return 1;
    }
    for p in only {
        let hit = files
            .changed()
            .any(|f| *p == f.shown || *p == f.path || normalise(p, cwd.as_deref()) == f.path);
        if !hit {
            eprintln!(
                "rawpv: --file {}: no changed file is that path",
                crate::render::text::visible(p)
            );
        }
    }
    // A malformed line can hold an edit (attack 8 #17).
    if session.counts.malformed > 0 {
        eprintln!(
            "rawpv: {} of the input could not be read; a change recorded there is not in this patch",
            crate::fmt::plural(session.counts.malformed, "line")
        );
    }
    let text = write_patch(&files, &parts, &left, &input.input);
    if left.iter().any(|l| l.why != crate::review::patch::NO_NET) {
        eprintln!(
            "rawpv: a partial patch: {} left out (listed in its header)",
            crate::fmt::plural(left.len() as u64, "changed file")
        );
    }
    // Edits the session rewound past are not its net change (attack 8 #45).
    if !files.abandoned.is_empty() {
        eprintln!(
            "rawpv: a partial patch: {} on an abandoned branch of the conversation left out (listed in its header)",
            crate::fmt::plural(files.abandoned.len() as u64, "change")
        );
    }
    let terminal = std::io::stdout().is_terminal();
    if terminal {
        eprintln!(
            "rawpv: stdout is a terminal: control characters are shown as pictures; redirect it for an exact patch"
        );
    }
    let r = super::with_stdout(|out| {
        if terminal {
            for l in text.lines() {
                writeln!(out, "{}", crate::render::text::visible(l))?;
            }
            Ok(())
        } else {
            out.write_all(text.as_bytes())
        }
    });
    super::exit_code(r, 0)
}
