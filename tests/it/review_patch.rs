//! `rawpv patch` against real `git apply` (issue 23 Done when): for every corpus transcript
//! that carries `originalFile`, each file's first `originalFile` is written into an empty
//! directory (a created file: nothing), the patch is applied there with `git apply`, and every
//! file must then be exactly its content after its last recorded edit, computed here from the
//! raw JSONL on its own (the last edit's `originalFile` with its `structuredPatch` applied, or
//! the `Write` content), not from rawpv. The set of files in the patch is the set this oracle
//! finds inside the working directory; the others must be named in the header as left out.
//!
//! Also: the fixture `tests/fixtures/review_changes.jsonl` (a created, a modified, an
//! outside-changed and an outside-the-cwd file, a `sed -i` and a formatter run), `--file`, and
//! the exit code 1 when nothing can be made.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command as Proc;

use assert_cmd::Command;
use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::support::corpus;

/// A file as the raw transcript tells it: its first `originalFile` (`None`: created) and its
/// content after the last edit.
#[derive(Debug)]
struct Truth {
    first: Option<String>,
    last: String,
}

/// The test's own structured-patch applier (jsdiff hunks, `\n`-split lines).
fn apply(orig: &str, hunks: &[Value]) -> String {
    let lines: Vec<&str> = orig.split('\n').collect();
    let mut out: Vec<String> = Vec::new();
    let mut pos = 0usize;
    for h in hunks {
        let os = h["oldStart"].as_u64().unwrap() as usize;
        let ol = h["oldLines"].as_u64().unwrap();
        let at = if ol == 0 { os } else { os - 1 };
        out.extend(lines[pos..at].iter().map(|s| (*s).to_owned()));
        pos = at;
        for l in h["lines"].as_array().unwrap() {
            let l = l.as_str().unwrap();
            match l.chars().next() {
                Some(' ') => {
                    out.push(lines[pos].to_owned());
                    pos += 1;
                }
                Some('-') => pos += 1,
                Some('+') => out.push(l[1..].to_owned()),
                _ => {}
            }
        }
    }
    out.extend(lines[pos..].iter().map(|s| (*s).to_owned()));
    out.join("\n")
}

/// The raw file's edits per path, and its first `cwd`.
fn truth(path: &Path) -> (BTreeMap<String, Truth>, String) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    let mut files: BTreeMap<String, Truth> = BTreeMap::new();
    let mut cwd = String::new();
    for line in text.lines() {
        let Ok(r) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if cwd.is_empty()
            && let Some(c) = r["cwd"].as_str()
        {
            c.clone_into(&mut cwd);
        }
        let Some(blocks) = r["message"]["content"].as_array() else {
            continue;
        };
        for b in blocks {
            if b["type"] == "tool_use" {
                names.insert(
                    b["id"].as_str().unwrap_or("").to_owned(),
                    b["name"].as_str().unwrap_or("").to_owned(),
                );
            }
        }
        let results: Vec<&Value> = blocks
            .iter()
            .filter(|b| b["type"] == "tool_result")
            .collect();
        let tur = &r["toolUseResult"];
        let [b] = results.as_slice() else { continue };
        if b["is_error"] == true || !tur.is_object() {
            continue;
        }
        let name = names
            .get(b["tool_use_id"].as_str().unwrap_or(""))
            .map(String::as_str);
        if !matches!(name, Some("Edit" | "MultiEdit" | "Write")) {
            continue;
        }
        let p = tur["filePath"].as_str().unwrap().to_owned();
        let orig = tur
            .get("originalFile")
            .or_else(|| tur.get("originalFileContents"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let after = if name == Some("Write") {
            tur["content"].as_str().unwrap().to_owned()
        } else {
            apply(
                orig.as_deref().unwrap(),
                tur["structuredPatch"].as_array().unwrap(),
            )
        };
        files
            .entry(p)
            .and_modify(|t| t.last.clone_from(&after))
            .or_insert(Truth {
                first: orig,
                last: after,
            });
    }
    (files, cwd)
}

fn patch(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::cargo_bin("rawpv")
        .unwrap()
        .arg("patch")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Writes each file's first content under `dir`, applies `patch` with git, and returns what
/// git said when it failed.
fn git_apply(dir: &Path, patch: &str) -> Result<(), String> {
    let pf = dir.join("../rawpv.patch");
    std::fs::write(&pf, patch).unwrap();
    let out = Proc::new("git")
        .args(["apply", "--whitespace=nowarn", "--unsafe-paths"])
        .arg(&pf)
        .current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap())
        .output()
        .unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Files under `dir`, relative, with their contents.
fn tree(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    out
}

/// path → (added, removed) of `rawpv stats`' files rows inside the cwd.
fn stats_counts(path: &str) -> BTreeMap<String, (u64, u64)> {
    let out = Command::cargo_bin("rawpv")
        .unwrap()
        .args(["stats", path])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut counts = BTreeMap::new();
    for row in text
        .lines()
        .skip_while(|l| !l.starts_with("files "))
        .skip(1)
        .take_while(|l| l.starts_with("  ") && l.chars().nth(3) == Some(' '))
    {
        let words: Vec<&str> = row.split_whitespace().collect();
        let (Some(path), Some(added), Some(removed)) = (words.get(1), words.get(2), words.get(3))
        else {
            continue;
        };
        if path.starts_with('/') || path.contains('…') {
            continue;
        }
        let num = |s: &str| s.trim_start_matches(['+', '−']).parse::<u64>().unwrap();
        counts.insert((*path).to_owned(), (num(added), num(removed)));
    }
    counts
}

/// path → (added, removed) by `git apply --numstat` (paths elided by stats are left out there
/// too).
fn numstat(dir: &Path, patch: &str) -> BTreeMap<String, (u64, u64)> {
    let pf = dir.join("../numstat.patch");
    std::fs::write(&pf, patch).unwrap();
    let out = Proc::new("git")
        .args(["apply", "--numstat"])
        .arg(&pf)
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let mut w = l.split('\t');
            let (a, r, p) = (w.next()?, w.next()?, w.next()?);
            let counts = (a.parse().ok()?, r.parse().ok()?);
            (p.chars().count() <= 48).then(|| (p.to_owned(), counts))
        })
        .collect()
}

fn transcripts_with_original_file() -> Option<Vec<PathBuf>> {
    let files = corpus::files("claude-code")?;
    Some(
        files
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .filter(|p| {
                let t = std::fs::read_to_string(p).unwrap();
                t.contains("\"originalFile\"") || t.contains("\"originalFileContents\"")
            })
            .collect(),
    )
}

/// Runs the whole check on one transcript; returns the relative paths the patch held.
fn check_transcript(path: &Path) -> Vec<String> {
    let (files, cwd) = truth(path);
    let shown = path.display().to_string();
    let (code, out, err) = patch(&[&shown]);
    assert_eq!(code, Some(0), "{shown}: {err}");
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("work");
    std::fs::create_dir(&dir).unwrap();
    let prefix = format!("{}/", cwd.trim_end_matches('/'));
    let mut want = BTreeMap::new();
    let mut outside = Vec::new();
    for (p, t) in &files {
        let Some(rel) = p.strip_prefix(&prefix) else {
            outside.push(p.clone());
            continue;
        };
        if let Some(first) = &t.first {
            let f = dir.join(rel);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(&f, first).unwrap();
        }
        want.insert(rel.to_owned(), t.last.clone());
    }
    git_apply(&dir, &out).unwrap_or_else(|e| panic!("{shown}: git apply failed: {e}\n{out}"));
    // `rawpv stats`' line counts are git's (`git apply --numstat` of the same patch).
    assert_eq!(stats_counts(&shown), numstat(&dir, &out), "{shown}");
    assert_eq!(tree(&dir), want, "{shown}");
    for p in &outside {
        let line = format!("#   {p}: outside the working directory {cwd}");
        assert!(
            out.contains(&line),
            "{shown}: {line:?} not in the header:\n{out}"
        );
    }
    let patched: Vec<String> = out
        .lines()
        .filter_map(|l| l.strip_prefix("diff --git a/"))
        .map(|l| l.split(" b/").next().unwrap().to_owned())
        .collect();
    patched
}

#[test]
fn git_apply_of_the_patch_gives_every_corpus_file_after_its_last_edit() {
    let Some(paths) = transcripts_with_original_file() else {
        return;
    };
    let mut seen = BTreeMap::new();
    for p in &paths {
        let files = check_transcript(p);
        seen.insert(
            p.file_name().unwrap().to_string_lossy().into_owned(),
            files.len(),
        );
    }
    // Which transcripts were checked, and how many files each patch held (11 in the
    // compaction excerpt, as the issue counts; the plan file of deep-manifest is outside its cwd).
    assert_eq!(
        seen,
        BTreeMap::from([
            ("a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl".to_owned(), 4),
            ("cc-v1.0.108-inline-sidechain-task.jsonl".to_owned(), 1),
            ("cc-v1.0.24-summaries-thinking.jsonl".to_owned(), 2),
            ("cc-v1.0.43-image-hooks-multiedit.jsonl".to_owned(), 1),
            ("cc-v2.0.37-planmode-askuser-bashoutput.jsonl".to_owned(), 3),
            ("cc-v2.1.38-task-subagent-progress.jsonl".to_owned(), 1),
            ("cc-v2.1.39-compaction-A-excerpt.jsonl".to_owned(), 11),
        ])
    );
}

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn nothing_to_patch_is_exit_1_with_a_message() {
    let (code, out, err) = patch(&[&fixture("tui_session.jsonl")]);
    assert_eq!((code, out.as_str()), (Some(1), ""));
    assert!(
        err.contains("nothing to patch") && err.contains("no call in the session changed a file"),
        "{err}"
    );
}

/// The fixture's whole patch: the modified file from its first `originalFile` to its last
/// edit's result (the `sed -i` between its edits included, and said), the created file with
/// its missing newline, the file outside the cwd left out and named, the writers listed.
#[test]
fn the_fixture_patch_is_whole_and_honest() {
    let path = fixture("review_changes.jsonl");
    let (code, out, err) = patch(&[&path]);
    assert_eq!(code, Some(0), "{err}");
    let want = format!(
        "# rawpv patch of {path}\n\
         # paths relative to /w/proj: git apply from there\n\
         # (if that is a subdirectory of a git work tree: git apply --directory=SUBDIR from its top, or patch -p1 there)\n\
         # 2 files of 3 changed files: each from its content before its first recorded change to its content after its last\n\
         # NOT in this patch (it is not the whole change):\n\
         #   /tmp/elsewhere.txt: outside the working directory /w/proj\n\
         # changed by something other than a recorded edit (the patch starts at what the first edit found):\n\
         #   src/lib.rs: after line 4, before line 10; ran between: Bash: sed -i 's/two/TWO/' src/lib.rs\n\
         # commands that may have written files and are not in this patch (a guess from the command line):\n\
         #   line 8 Bash: sed -i 's/two/TWO/' src/lib.rs  [sed -i]\n\
         #   line 14 Bash: cargo fmt && echo done > log.txt  [cargo fmt, redirects output to log.txt]\n\
         \n\
         diff --git a/src/lib.rs b/src/lib.rs\n\
         --- a/src/lib.rs\n\
         +++ b/src/lib.rs\n\
         @@ -1,3 +1,3 @@\n \
         fn one() {{}}\n\
         -fn two() {{}}\n\
         -fn three() {{}}\n\
         +fn TWO() {{ 2 }}\n\
         +fn three() {{ 3 }}\n\
         diff --git a/notes/new.md b/notes/new.md\n\
         new file mode 100644\n\
         --- /dev/null\n\
         +++ b/notes/new.md\n\
         @@ -0,0 +1,3 @@\n\
         +# Notes\n\
         +\n\
         +no newline at the end\n\
         \\ No newline at end of file\n"
    );
    assert_eq!(out, want);
    assert_eq!(
        err,
        "rawpv: a partial patch: 1 changed file left out (listed in its header)\n"
    );
    // And git agrees: from the first originalFile to the last edit's result.
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("work");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        "fn one() {}\nfn two() {}\nfn three() {}\n",
    )
    .unwrap();
    git_apply(&dir, &out).unwrap();
    assert_eq!(
        tree(&dir),
        BTreeMap::from([
            (
                "src/lib.rs".to_owned(),
                "fn one() {}\nfn TWO() { 2 }\nfn three() { 3 }\n".to_owned()
            ),
            (
                "notes/new.md".to_owned(),
                "# Notes\n\nno newline at the end".to_owned()
            ),
        ])
    );
}

#[test]
fn file_picks_files_and_an_unknown_one_is_exit_1() {
    let path = fixture("review_changes.jsonl");
    let (code, out, _) = patch(&[&path, "--file", "notes/new.md"]);
    assert_eq!(code, Some(0));
    let sections: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("diff --git"))
        .collect();
    assert_eq!(sections, vec!["diff --git a/notes/new.md b/notes/new.md"]);
    // The absolute path names the same file.
    let (code, out2, _) = patch(&[&path, "--file", "/w/proj/notes/new.md"]);
    assert_eq!((code, out2), (Some(0), out));
    let (code, out, err) = patch(&[&path, "--file", "src/nope.rs"]);
    assert_eq!((code, out.as_str()), (Some(1), ""));
    assert_eq!(
        err,
        format!("rawpv: nothing to patch in {path}: no changed file is src/nope.rs\n")
    );
    // Only a file outside the cwd: nothing can be made, and the message says why.
    let (code, _, err) = patch(&[&path, "--file", "/tmp/elsewhere.txt"]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("/tmp/elsewhere.txt: outside the working directory /w/proj"),
        "{err}"
    );
}

/// Attack 8 #45: an Edit on a branch the user rewound past (`review_rewound_branch.jsonl`:
/// Edit x.txt, then a prompt whose parent is the first record, then Edit y.txt) is not in the
/// patch, and the header and stderr say so; git applies the rest.
#[test]
fn an_abandoned_branch_is_left_out_and_named() {
    let path = fixture("review_rewound_branch.jsonl");
    let (code, out, err) = patch(&[&path]);
    assert_eq!(code, Some(0), "{err}");
    let want = format!(
        "# rawpv patch of {path}\n\
         # paths relative to /proj: git apply from there\n\
         # (if that is a subdirectory of a git work tree: git apply --directory=SUBDIR from its top, or patch -p1 there)\n\
         # 1 file of 1 changed file: each from its content before its first recorded change to its content after its last\n\
         # NOT in this patch: changes on an abandoned branch of the conversation (rewound or retried; whether Claude Code restored the files is not in the record):\n\
         #   x.txt: Edit at line 2, on branch 1 of the fork at line 1 (the session ended on branch 2)\n\
         # no shell command in the session looks like it wrote files\n\
         \n\
         diff --git a/y.txt b/y.txt\n\
         --- a/y.txt\n\
         +++ b/y.txt\n\
         @@ -1 +1 @@\n\
         -y\n\
         +Y\n"
    );
    assert_eq!(out, want);
    assert_eq!(
        err,
        "rawpv: a partial patch: 1 change on an abandoned branch of the conversation left out (listed in its header)\n"
    );
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("work");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("x.txt"), "x\n").unwrap();
    std::fs::write(dir.join("y.txt"), "y\n").unwrap();
    git_apply(&dir, &out).unwrap();
    assert_eq!(
        tree(&dir),
        BTreeMap::from([
            ("x.txt".to_owned(), "x\n".to_owned()),
            ("y.txt".to_owned(), "Y\n".to_owned()),
        ])
    );
}

/// Attack 8 #44: an Anthropic text editor's `undo_edit` put back content the record does not
/// hold (`review_undo_edit.ndjson`: n.py created, edited, undone; m.py created, undone; p.py
/// created): the undone files are left out with why, the patch says it is partial, and git
/// applies the rest.
#[test]
fn an_undo_edit_makes_the_net_change_unknown() {
    let path = fixture("review_undo_edit.ndjson");
    let (code, out, err) = patch(&[&path]);
    assert_eq!(code, Some(0), "{err}");
    let want = format!(
        "# rawpv patch of {path}\n\
         # paths relative to /proj: git apply from there\n\
         # (if that is a subdirectory of a git work tree: git apply --directory=SUBDIR from its top, or patch -p1 there)\n\
         # 1 file of 3 changed files: each from its content before its first recorded change to its content after its last\n\
         # NOT in this patch (it is not the whole change):\n\
         #   n.py: the str_replace_editor undo_edit at line 5 put back an earlier content of the file, which the record does not hold\n\
         #   m.py: the str_replace_editor undo_edit at line 9 put back an earlier content of the file, which the record does not hold\n\
         # no shell command in the session looks like it wrote files\n\
         \n\
         diff --git a/p.py b/p.py\n\
         new file mode 100644\n\
         --- /dev/null\n\
         +++ b/p.py\n\
         @@ -0,0 +1 @@\n\
         +p = 1\n"
    );
    assert_eq!(out, want);
    assert_eq!(
        err,
        "rawpv: a partial patch: 2 changed files left out (listed in its header)\n"
    );
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("work");
    std::fs::create_dir_all(&dir).unwrap();
    git_apply(&dir, &out).unwrap();
    assert_eq!(
        tree(&dir),
        BTreeMap::from([("p.py".to_owned(), "p = 1\n".to_owned())])
    );
}
