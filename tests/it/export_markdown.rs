//! `rawpv export --format markdown` (issue 26 item 5): every corpus session and RAWP fixture
//! exports, and the document parsed back with pulldown-cmark (GitHub's flavour: tables,
//! strikethrough, task lists) has one `### N.` heading per call at `--depth full` and one
//! top-level list item per call at `--depth calls`, so no fence or quote swallowed a call; the
//! secrets fixture's four kinds are redacted; the hostile fixture's fences stay closed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pulldown_cmark::{Event, HeadingLevel, Options as MdOptions, Parser, Tag, TagEnd};
use rawpv::export::{Depth, Format, Options};

use crate::support::exports;

fn export(session: &rawpv::session::Session, depth: Depth, redact: bool) -> String {
    let opts = Options {
        depth,
        redact,
        max_lines: 200,
        title: "t".into(),
    };
    let mut out = Vec::new();
    rawpv::export::write(&mut out, session, Format::Markdown, &opts).unwrap();
    String::from_utf8(out).unwrap()
}

fn gfm(md: &str) -> Parser<'_> {
    Parser::new_ext(
        md,
        MdOptions::ENABLE_TABLES | MdOptions::ENABLE_STRIKETHROUGH | MdOptions::ENABLE_TASKLISTS,
    )
}

/// Texts of the top-level `###` headings (not inside a quote: an agent's reply may have its
/// own) that start with a call number (`N. `), in order.
fn call_headings(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = None::<String>;
    let mut quotes = 0usize;
    for ev in gfm(md) {
        match ev {
            Event::Start(Tag::BlockQuote(_)) => quotes += 1,
            Event::End(TagEnd::BlockQuote(_)) => quotes -= 1,
            Event::Start(Tag::Heading {
                level: HeadingLevel::H3,
                ..
            }) if quotes == 0 => inside = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(s) = inside.as_mut() {
                    s.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(HeadingLevel::H3)) if inside.is_some() => {
                let s = inside.take().unwrap();
                if s.split_once(". ")
                    .is_some_and(|(n, _)| n.parse::<usize>().is_ok())
                {
                    out.push(s);
                }
            }
            _ => {}
        }
    }
    out
}

/// Top-level list items (not inside a quote or another list).
fn top_items(md: &str) -> usize {
    let (mut lists, mut quotes, mut n) = (0usize, 0usize, 0);
    for ev in gfm(md) {
        match ev {
            Event::Start(Tag::List(_)) => lists += 1,
            Event::End(TagEnd::List(_)) => lists -= 1,
            Event::Start(Tag::BlockQuote(_)) => quotes += 1,
            Event::End(TagEnd::BlockQuote(_)) => quotes -= 1,
            Event::Start(Tag::Item) if lists == 1 && quotes == 0 => n += 1,
            _ => {}
        }
    }
    n
}

#[test]
fn every_session_exports_with_one_heading_and_one_item_per_call() {
    let Some(paths) = exports::sessions() else {
        return;
    };
    assert!(paths.len() > 60, "{} sessions", paths.len());
    for p in &paths {
        let s = exports::load(p);
        let calls = s.invocations.len();
        let full = export(&s, Depth::Full, true);
        let heads = call_headings(&full);
        assert_eq!(heads.len(), calls, "{}: {heads:#?}", p.display());
        for (i, h) in heads.iter().enumerate() {
            let tool = rawpv::export::clean(&s.invocations[i].tool_name).replace('\n', " ");
            assert!(
                h.starts_with(&format!("{}. {tool}", i + 1)),
                "{}: heading {h:?} is not call {} ({tool})",
                p.display(),
                i + 1
            );
        }
        let list = export(&s, Depth::Calls, true);
        assert_eq!(top_items(&list), calls, "{}", p.display());
        let prompts = export(&s, Depth::Prompts, true);
        assert!(call_headings(&prompts).is_empty() && top_items(&prompts) == 0);
        assert!(prompts.len() <= list.len(), "{}", p.display());
        for doc in [&full, &list, &prompts] {
            assert!(
                !doc.chars()
                    .any(|c| c.is_control() && c != '\n' && c != '\t'),
                "{}: a control character in the document",
                p.display()
            );
        }
    }
}

#[test]
fn fences_in_outputs_stay_inside_their_block() {
    let s = exports::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/export/hostile.ndjson"
    )));
    let md = export(&s, Depth::Full, true);
    // The Bash output holds ``` and ```` lines: its block is the one code block that has them,
    // whole, and the calls after it still have their headings.
    let blocks: Vec<String> = {
        let mut out = Vec::new();
        let mut cur = None::<String>;
        for ev in gfm(&md) {
            match ev {
                Event::Start(Tag::CodeBlock(_)) => cur = Some(String::new()),
                Event::Text(t) => {
                    if let Some(c) = cur.as_mut() {
                        c.push_str(&t);
                    }
                }
                Event::End(TagEnd::CodeBlock) => out.push(cur.take().unwrap()),
                _ => {}
            }
        }
        out
    };
    let bash = blocks
        .iter()
        .find(|b| b.contains("not a fence end"))
        .unwrap();
    assert!(bash.contains("```\nnot a fence end\n````\n"), "{bash}");
    assert_eq!(call_headings(&md).len(), 3, "{md}");
    assert!(!md.contains('\u{1b}') && !md.contains('\u{202e}') && !md.contains('\0'));
    // The tool name's markup is text: escaped, so no `<b>` element is parsed.
    assert!(
        !gfm(&md).any(|e| matches!(&e, Event::InlineHtml(h) if h.contains("onmouseover"))),
        "{md}"
    );
}

#[test]
fn the_secrets_fixture_exports_with_all_four_redacted() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/export/secrets.ndjson"
    );
    let out = assert_cmd::Command::cargo_bin("rawpv")
        .unwrap()
        .args(["export", path, "-o", "-", "--format", "markdown"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let md = String::from_utf8(out.stdout).unwrap();
    let raw = std::fs::read_to_string(path).unwrap();
    for (secret, kind) in [
        ("T3BlbkFJ", "openai-api-key"),
        ("AKIAZ7QRSTUVWX2345AB", "aws-access-token"),
        (
            "9xKq2Lm7Np4Rt8Vw1Yz3Bc6Df0Gh5Jk2Mn9Pq4St",
            "generic-api-key",
        ),
        ("ghp_R7x2Kq9Lm4Np8Tv3Wy6Zb1Cd5Fg0Hj2Kl7Mn", "github-pat"),
        ("eyJhbGciOiJIUzI1NiJ9", "authorization-bearer"),
    ] {
        assert!(raw.contains(secret), "the fixture holds {secret}");
        assert!(!md.contains(secret), "{secret} left in:\n{md}");
        assert!(md.contains(&format!("[REDACTED: {kind}]")), "{kind}:\n{md}");
    }
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("rawpv: wrote stdout: 2 calls, "), "{err}");
    assert!(
        err.trim_end().ends_with(
            "; redacted 6 secrets: 1 authorization-bearer, 1 aws-access-token, \
             1 generic-api-key, 2 github-pat, 1 openai-api-key"
        ),
        "{err}"
    );
    assert!(md.ends_with(
        "*redacted 6 secrets: 1 authorization-bearer, 1 aws-access-token, 1 generic-api-key, \
         2 github-pat, 1 openai-api-key*\n"
    ));
    // --no-redact keeps them, and says so.
    let out = assert_cmd::Command::cargo_bin("rawpv")
        .unwrap()
        .args([
            "export",
            path,
            "-o",
            "-",
            "--format",
            "markdown",
            "--no-redact",
        ])
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("ghp_R7x2Kq9Lm4Np8Tv3Wy6Zb1Cd5Fg0Hj2Kl7Mn"));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("not redacted (--no-redact)")
    );
}

#[test]
fn the_format_comes_from_the_extension_and_the_file_is_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/check_clean.ndjson"
    );
    let md = dir.path().join("s.md");
    let out = assert_cmd::Command::cargo_bin("rawpv")
        .unwrap()
        .args(["export", path, "-o"])
        .arg(&md)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.starts_with("# check\\_clean.ndjson\n"), "{text}");
    // No extension and no --format: a clear message, exit 2, no file.
    let out = assert_cmd::Command::cargo_bin("rawpv")
        .unwrap()
        .args(["export", path, "-o"])
        .arg(dir.path().join("s.txt"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("--format html or --format markdown")
    );
    assert!(!dir.path().join("s.txt").exists());
}

proptest::proptest! {
    /// Any text in a fence comes back as one code block holding exactly that text (cleaned),
    /// whatever backtick runs, fences, quotes or HTML it holds.
    #[test]
    fn a_fence_holds_any_text(text in "(```|````|`|~~~|> |<!--|-->|\n|[a-z ]|</script>|\t){0,40}") {
        let mut doc = String::new();
        rawpv::export::markdown::block(&mut doc, &text, Some("text"), 0);
        doc.push_str("### 1. after\n");
        let mut blocks = Vec::new();
        let mut cur = None::<String>;
        for ev in gfm(&doc) {
            match ev {
                Event::Start(Tag::CodeBlock(_)) => cur = Some(String::new()),
                Event::Text(t) => if let Some(c) = cur.as_mut() { c.push_str(&t) },
                Event::End(TagEnd::CodeBlock) => blocks.push(cur.take().unwrap()),
                _ => {}
            }
        }
        let mut want = rawpv::export::clean(&text);
        if !want.ends_with('\n') {
            want.push('\n');
        }
        proptest::prop_assert_eq!(blocks, vec![want]);
        proptest::prop_assert_eq!(call_headings(&doc), vec!["1. after".to_owned()]);
    }
}

/// `rawpv print --redact` (feed and `--detail`) redacts with the same pass and says what on
/// stderr; without it the feed is as recorded.
#[test]
fn print_redact_uses_the_same_pass() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/export/secrets.ndjson"
    );
    let run = |args: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("rawpv")
            .unwrap()
            .args(args)
            .arg(path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (feed, err) = run(&["print", "--redact"]);
    assert!(
        feed.contains("my token is [REDACTED: github-pat]\n"),
        "{feed}"
    );
    assert_eq!(err, "rawpv: redacted 1 secret: 1 github-pat\n");
    let (detail, err) = run(&["print", "--redact", "--detail", "--color", "always"]);
    for secret in [
        "T3BlbkFJ",
        "AKIAZ7QRSTUVWX2345AB",
        "ghp_R7x2",
        "eyJhbGciOiJIUzI1NiJ9",
    ] {
        assert!(!detail.contains(secret), "{secret}");
    }
    assert!(err.starts_with("rawpv: redacted 5 secrets: "), "{err}");
    let (plain, err) = run(&["print"]);
    assert!(plain.contains("ghp_R7x2Kq9Lm4Np8Tv3Wy6Zb1Cd5Fg0Hj2Kl7Mn") && err.is_empty());
}

/// Attack 10 #1, #2: HTML pasted into a prompt or written in a reply is text in the Markdown.
/// An unclosed `<!--` no longer swallows the calls and the prompt after it (GitHub and
/// pulldown-cmark both read it as a comment running to the end), and no `<img onerror>` or
/// `<details>` reaches a renderer that keeps raw HTML; code spans and fences keep their `<`.
#[test]
fn html_in_prompts_and_replies_is_shown_as_text() {
    let s = exports::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/export/html_in_text.ndjson"
    )));
    let md = export(&s, Depth::Full, true);
    let html: Vec<String> = gfm(&md)
        .filter_map(|e| match e {
            Event::Html(h) | Event::InlineHtml(h) => Some(h.into_string()),
            _ => None,
        })
        .collect();
    assert_eq!(html, Vec::<String>::new(), "{md}");
    assert_eq!(call_headings(&md).len(), 2, "{md}");
    let text: String = gfm(&md)
        .filter_map(|e| match e {
            Event::Text(t) | Event::Code(t) => Some(t.into_string()),
            _ => None,
        })
        .collect();
    for shown in [
        "<!-- header",
        "<details><summary>open</summary>",
        "<img src=x onerror=\"document.body.dataset.pwned=1\">",
        "<div>",
        "<div class=\"kept\">",
        "the second prompt still shows",
    ] {
        assert!(text.contains(shown), "{shown:?} not shown as text in\n{md}");
    }
}

/// Attack 10 #16, #17: `-o` never replaces the input session, a symbolic link, a directory or a
/// FIFO (each refused with exit 2 and left as it was), and a stdout closed early (`| head`)
/// ends the export without a summary of a document that was not written.
#[cfg(unix)]
#[test]
fn the_output_is_a_regular_file_and_never_the_input() {
    use std::os::unix::fs::FileTypeExt as _;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("s.ndjson");
    let session = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/check_clean.ndjson"
    ))
    .unwrap();
    std::fs::write(&input, &session).unwrap();
    let link = dir.path().join("link.md");
    std::os::unix::fs::symlink(&input, &link).unwrap();
    let fifo = dir.path().join("pipe.md");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let sub = dir.path().join("sub.md");
    std::fs::create_dir(&sub).unwrap();
    for (out, says) in [
        (&input, "it is the input session"),
        (&link, "it is a symbolic link"),
        (&fifo, "it is not a regular file"),
        (&sub, "it is a directory"),
    ] {
        let r = assert_cmd::Command::cargo_bin("rawpv")
            .unwrap()
            .args(["export", "--format", "markdown"])
            .arg(&input)
            .arg("-o")
            .arg(out)
            .output()
            .unwrap();
        let err = String::from_utf8(r.stderr).unwrap();
        assert_eq!(r.status.code(), Some(2), "{out:?}: {err}");
        assert!(err.contains(says), "{out:?}: {err}");
    }
    assert_eq!(std::fs::read(&input).unwrap(), session);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );

    // A reader that stops at once: exit 0, nothing claimed on stderr.
    let bin = assert_cmd::cargo::cargo_bin!("rawpv");
    let big = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/claude-code/cc-v2.0.55-deep-manifest/a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl"
    );
    let mut child = std::process::Command::new(bin)
        .args(["export", big, "-o", "-", "--format", "markdown"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let r = child.wait_with_output().unwrap();
    let err = String::from_utf8(r.stderr).unwrap();
    assert_eq!(r.status.code(), Some(0), "{err}");
    assert!(!err.contains("wrote"), "{err}");
}

/// Attack 10 #10: `--max-lines 0` keeps every line of a big output (the terminal renderer's
/// 20,000-line display limit does not apply to an export), and the default cut's note counts
/// the whole output, not the lines the renderer had already kept.
#[test]
fn max_lines_zero_keeps_a_big_output_whole_and_the_cut_note_counts_all_of_it() {
    use std::fmt::Write as _;
    const LINES: usize = 30_000;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.ndjson");
    let mut output = String::new();
    for i in 1..=LINES {
        writeln!(output, "line {i}").unwrap();
    }
    let frames = [
        serde_json::json!({"type": "control.prompt.request", "timestamp": "2026-11-29T10:00:01.000Z",
            "payload": {"input_type": "text", "text": "print many lines"}}),
        serde_json::json!({"type": "tool.invoke.request", "timestamp": "2026-11-29T10:00:02.000Z",
            "payload": {"invocation_id": "00000000-0000-4000-8000-000000000001",
                "tool_name": "Bash", "input": {"command": "seq 30000"}}}),
        serde_json::json!({"type": "tool.invoke.result", "timestamp": "2026-11-29T10:00:05.000Z",
            "payload": {"invocation_id": "00000000-0000-4000-8000-000000000001",
                "tool_name": "Bash", "status": "success", "output": output, "output_type": "text"}}),
    ];
    let mut body = String::new();
    for f in &frames {
        writeln!(body, "{f}").unwrap();
    }
    std::fs::write(&input, body).unwrap();
    let run = |max: &str| {
        let r = assert_cmd::Command::cargo_bin("rawpv")
            .unwrap()
            .args([
                "export",
                "--format",
                "markdown",
                "--max-lines",
                max,
                "-o",
                "-",
            ])
            .arg(&input)
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        String::from_utf8(r.stdout).unwrap()
    };
    let whole = run("0");
    let kept = whole.lines().filter(|l| l.starts_with("line ")).count();
    assert_eq!(kept, LINES);
    assert!(whole.contains(&format!("line {LINES}\n")));
    assert!(
        !whole.contains("more line"),
        "a cut note in an uncut export"
    );

    let cut = run("200");
    let kept = cut.lines().filter(|l| l.starts_with("line ")).count();
    assert!(kept <= 200, "{kept} lines kept of 200");
    let said = format!("… {} more lines", LINES - kept);
    assert!(cut.contains(&said), "no {said:?} in the cut export");
}

/// The ```` ```diff ```` blocks of a document, in order.
fn diff_blocks(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside: Option<String> = None;
    for ev in gfm(md) {
        match ev {
            Event::Start(Tag::CodeBlock(pulldown_cmark::CodeBlockKind::Fenced(lang)))
                if &*lang == "diff" =>
            {
                inside = Some(String::new());
            }
            Event::Text(t) => {
                if let Some(s) = inside.as_mut() {
                    s.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => out.extend(inside.take()),
            _ => {}
        }
    }
    out
}

/// Attack 10 #5: an Edit's output diff carries the file's line numbers from its structured
/// patch (it was `@@ -0,0 +0,0 @@`), a Write's the lines of the file it replaced; both name the
/// path relative to the session's directory and apply with `git apply` there, one after the
/// other, giving the file the session ended with. An edit's strings alone (its input) give no
/// line numbers: the hunk says so and the block claims no file (no `---`/`+++` headers), and a
/// snippet's missing final newline is not called the file's.
#[test]
fn edit_diffs_carry_the_files_line_numbers_and_apply_with_git() {
    let fixture = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/export/edits.jsonl"
    ));
    let md = export(&exports::load(fixture), Depth::Full, true);
    assert!(!md.contains("@@ -0,0 +0,0 @@"), "{md}");
    assert!(!md.contains("No newline"), "{md}");
    let blocks = diff_blocks(&md);
    let (patches, snippets): (Vec<_>, Vec<_>) = blocks
        .iter()
        .partition(|b| b.starts_with("--- a/src/lib.rs\n+++ b/src/lib.rs\n"));
    assert_eq!(patches.len(), 2, "{md}");
    assert!(patches[0].contains("\n@@ -2,7 +2,8 @@\n"), "{}", patches[0]);
    assert!(patches[1].contains("\n@@ -7,5 +7,5 @@\n"), "{}", patches[1]);
    assert_eq!(
        snippets,
        vec!["@@ line numbers not in the record @@\n-l5\n+L5\n+L5b\n"],
        "{md}"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    let file = dir.path().join("src/lib.rs");
    let original = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n";
    std::fs::write(&file, original).unwrap();
    for (i, p) in patches.iter().enumerate() {
        let patch = dir.path().join(format!("{i}.diff"));
        std::fs::write(&patch, p).unwrap();
        let out = std::process::Command::new("git")
            .args(["apply", "--verbose"])
            .arg(&patch)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{p}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "l1\nl2\nl3\nl4\nL5\nL5b\nl6\nl7\nl8\nl nine\nl10\n"
    );
}

/// `rawpv export A B C -o out.md` (issue 26 item 1, several inputs): one document holding each
/// session in turn, byte for byte the single exports one after another (a blank line between),
/// the calls and the redactions summed on stderr; to HTML, one page of every session; a stdin
/// among them or a missing file is refused (exit 2) and writes nothing.
#[test]
fn several_inputs_export_to_one_markdown_document_each_session_in_turn() {
    let bin = assert_cmd::cargo::cargo_bin!("rawpv");
    let dir = tempfile::tempdir().unwrap();
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    let inputs = [
        format!("{fixtures}/export/secrets.ndjson"),
        format!("{fixtures}/tui_session.jsonl"),
        format!("{fixtures}/cc_two_bash_calls.jsonl"),
    ];
    let run = |args: &[&str]| {
        let r = std::process::Command::new(bin).args(args).output().unwrap();
        (r.status.code(), String::from_utf8(r.stderr).unwrap())
    };
    let mut joined = String::new();
    let mut calls = 0;
    let mut secrets = 0;
    for (i, input) in inputs.iter().enumerate() {
        let out = dir.path().join(format!("{i}.md"));
        let (code, err) = run(&["export", input, "-o", out.to_str().unwrap()]);
        assert_eq!(code, Some(0), "{err}");
        if i > 0 {
            joined.push('\n');
        }
        joined.push_str(&std::fs::read_to_string(&out).unwrap());
        let n = |word: &str| -> usize {
            err.split_once(word)
                .and_then(|(a, _)| a.rsplit(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        calls += n(" calls,");
        secrets += n(" secrets:");
    }
    assert!(calls > 0 && secrets > 0, "{calls} {secrets}");
    let all = dir.path().join("all.md");
    let mut args = vec!["export"];
    args.extend(inputs.iter().map(String::as_str));
    args.extend(["-o", all.to_str().unwrap()]);
    let (code, err) = run(&args);
    assert_eq!(code, Some(0), "{err}");
    let doc = std::fs::read_to_string(&all).unwrap();
    assert_eq!(doc, joined);
    let titles: Vec<&str> = doc.lines().filter(|l| l.starts_with("# ")).collect();
    assert_eq!(
        titles,
        [
            "# secrets.ndjson",
            "# tui\\_session.jsonl",
            "# cc\\_two\\_bash\\_calls.jsonl"
        ]
    );
    assert!(
        err.contains(&format!(": {calls} calls, "))
            && err.contains(&format!("redacted {secrets} secrets:")),
        "{err}"
    );
    // The document is GitHub-flavoured Markdown whose headings are the three sessions.
    let h1 = pulldown_cmark::Parser::new(&doc)
        .filter(|e| {
            matches!(
                e,
                pulldown_cmark::Event::Start(pulldown_cmark::Tag::Heading {
                    level: pulldown_cmark::HeadingLevel::H1,
                    ..
                })
            )
        })
        .count();
    assert_eq!(h1, 3);

    // To HTML: one page of every session (the browser test opens it), with the calls and the
    // redactions of the three single pages.
    let mut page_secrets = 0;
    for (i, input) in inputs.iter().enumerate() {
        let one = dir.path().join(format!("{i}.html"));
        let (code, err) = run(&["export", input, "-o", one.to_str().unwrap()]);
        assert_eq!(code, Some(0), "{err}");
        page_secrets += err.split_once("redacted ").map_or(0, |(_, r)| {
            r.split(' ').next().unwrap().parse::<usize>().unwrap()
        });
    }
    assert!(page_secrets > 0);
    let page = dir.path().join("all.html");
    let (code, err) = run(&[
        "export",
        &inputs[0],
        &inputs[1],
        &inputs[2],
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains(&format!(": {calls} calls, "))
            && err.contains(&format!("redacted {page_secrets} secrets")),
        "{err}"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("class=\"call\"").count(), calls, "{err}");
    assert!(
        html.contains("<dt>sessions</dt><dd>3"),
        "three sessions named"
    );
    // Refused, and nothing written.
    let bad = dir.path().join("bad.md");
    let (code, err) = run(&["export", &inputs[0], "-", "-o", bad.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(err.contains("each is a session file"), "{err}");
    let missing = format!("{fixtures}/no-such-session.jsonl");
    let (code, err) = run(&["export", &inputs[0], &missing, "-o", bad.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(err.contains("cannot read"), "{err}");
    assert!(!bad.exists());
}
