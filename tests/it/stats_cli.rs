//! `rawpv stats` end to end (`assert_cmd` on the binary): the summary holds what `--help`
//! promises (counts per tool, status and `output_type`, durations, tokens); and `rawpv print`'s
//! feed rows.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use assert_cmd::Command;

fn stats(path: &str) -> String {
    let out = Command::cargo_bin("rawpv")
        .unwrap()
        .args(["stats", path])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{path}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn stats_counts_statuses_output_types_and_durations() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/tui_session.jsonl"
    );
    assert_eq!(
        stats(path),
        "format       rawp-ndjson\n\
         frames       24\n\
         invocations  6\n\
         failed       1\n\
         findings     13\n\
         status       error 1 · no result 1 · ok 4\n\
         output_type  agent_result 1 · file_list 1 · structured 1 · text 2\n\
         duration     total 5.2 s · median 40 ms · max 3.0 s\n  \
         Bash                      3 calls     1 failed\n  \
         Grep                      1 call      0 failed\n  \
         Read                      1 call      0 failed\n  \
         Task                      1 call      0 failed\n"
    );
}

#[test]
fn stats_shows_rejected_calls_and_token_totals_of_a_real_session() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/claude-code/cc-v1.0.43-image-hooks-multiedit.jsonl"
    );
    if crate::support::corpus::skipped(Path::new(path)) {
        return;
    }
    let out = stats(path);
    // The 3 user-rejected MultiEdits are cancelled, not failed nor dropped.
    assert!(out.contains("status       cancelled 3 · ok 11\n"), "{out}");
    assert!(
        out.contains("tokens       85238 in · 5057 out · 348985 cached\n"),
        "{out}"
    );
}

/// `rawpv print` rows say what each call did (the viewer's summary, escape sequences interpreted
/// away) and end with the call's id.
#[test]
fn print_rows_show_the_summary_and_the_id() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("esc.ndjson");
    std::fs::write(
        &path,
        concat!(
            r#"{"type":"tool.invoke.request","payload":{"invocation_id":"a","tool_name":"Bash","input":{"command":"echo \u001b[1mbold\u001b[0m done"}}}"#,
            "\n",
            r#"{"type":"control.prompt.request","payload":{"text":"\u001b[31mred\u001b[0m prompt\nmore"}}"#,
            "\n",
        ),
    )
    .unwrap();
    let out = Command::cargo_bin("rawpv")
        .unwrap()
        .arg("print")
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "Bash       no result echo bold done  [a]\nprompt     red prompt …\n"
    );
}

#[test]
fn token_totals_saturate_instead_of_wrapping() {
    // Issue 14.15: two usage rows of 2^63 tokens summed to `0 in · 0 out` (a debug build
    // panicked on the overflow).
    let out = stats(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/hostile_token_overflow.ndjson"
    ));
    assert!(
        out.contains("tokens       18446744073709551615 in · 18446744073709551615 out · 0 cached"),
        "{out}"
    );
}

/// A transcript named bare (`rawpv stats <session>.jsonl` in its directory) finds its 2.0.x
/// `agent-*.jsonl` files beside it as `./<session>.jsonl` does: the parent of a bare name is the
/// current directory (attack 5: 108 calls instead of 123, the subagent's 15 lost silently).
#[test]
fn a_bare_file_name_finds_the_subagent_files_beside_it() {
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/claude-code/cc-v2.0.55-deep-manifest"
    ));
    if crate::support::corpus::skipped(dir) {
        return;
    }
    let run = |arg: &str| {
        let out = Command::cargo_bin("rawpv")
            .unwrap()
            .current_dir(dir)
            .args(["stats", arg])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{arg}");
        String::from_utf8(out.stdout).unwrap()
    };
    let bare = run("a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl");
    assert_eq!(bare, run("./a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl"));
    assert!(
        bare.lines().any(|l| l == "invocations  123"),
        "the subagent's calls are counted:\n{bare}"
    );
}

/// `print` never shows redacted text as the original (SPEC 3.6), as the feed does; a `redacted`
/// of another type than a boolean reads as redacted, with a finding naming it and its line
/// (attack 5: `print` showed `SECRET-A` of a `redacted: true` record, and `"true"` as false).
#[test]
fn print_hides_redacted_text_and_a_wrong_typed_redacted_reads_as_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.ndjson");
    std::fs::write(
        &path,
        concat!(
            r#"{"type":"agent.thinking.done","payload":{"text":"SECRET-A","redacted":true}}"#,
            "\n",
            r#"{"type":"agent.thinking.done","payload":{"text":"SECRET-B","redacted":"true"}}"#,
            "\n",
            r#"{"type":"agent.text.done","payload":{"text":"plain","redacted":false}}"#,
            "\n",
        ),
    )
    .unwrap();
    let run = |args: &[&str]| {
        let out = Command::cargo_bin("rawpv")
            .unwrap()
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap())
    };
    assert_eq!(
        run(&["print", "--color", "never", "r.ndjson"]),
        (
            Some(0),
            "thinking   [redacted]\nthinking   [redacted]\nagent      plain\n".to_owned()
        )
    );
    assert_eq!(
        run(&["check", "r.ndjson"]),
        (
            Some(0),
            "r.ndjson:2: warning[wrong-field-type] agent.thinking.done field `redacted` is a string, expected a boolean; read as redacted (SPEC 3.6)\nr.ndjson: 0 errors, 1 warning, 0 infos\n".to_owned()
        )
    );
}
