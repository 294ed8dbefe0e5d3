//! Several inputs at once (issue 24 item 2): `rawpv print|convert|check A B …`, a directory
//! argument, and the viewer on two files, end to end on the binary where it can be, on the
//! two fixtures `tests/fixtures/multi/{a,b}.ndjson` (the same invocation ids in both, their
//! times interleaved, no `session_id`; a's line 5 is broken; b's second call is never answered)
//! and on the corpus's Claude Code transcripts.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use rawpv::action::Action;
use rawpv::session::Session;
use rawpv::source::SourceKind;
use rawpv::source::merge::{self, Run};
use serde_json::Value;

use crate::support::headless::{draw, screen_text};

fn rawpv() -> Command {
    Command::cargo_bin("rawpv").unwrap()
}

fn multi(name: &str) -> String {
    format!("{}/tests/fixtures/multi/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = rawpv().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The feed of a and b merged by time: each row tagged with its input's session, b's calls
/// apart from a's though their ids are the same.
const MERGED_FEED: &str = "\
[a.ndjson] tool.catalog.publish 1 tool published
[a.ndjson] prompt     build the project
[b.ndjson] tool.catalog.publish 1 tool published
[b.ndjson] prompt     read the readme
[a.ndjson] Bash       ok        cargo build  [00000000-0000-4000-8000-000000000001]
[b.ndjson] Read       ok        README.md  [00000000-0000-4000-8000-000000000001]
[a.ndjson] Bash       error     cargo test  [00000000-0000-4000-8000-000000000002]
[b.ndjson] Read       no result Cargo.toml  [00000000-0000-4000-8000-000000000002]
";

#[test]
fn print_merges_saved_inputs_by_time_and_tags_each_row_with_its_session() {
    let (code, out, err) = run(&["print", &multi("a.ndjson"), &multi("b.ndjson")]);
    assert_eq!((code, out.as_str(), err.as_str()), (0, MERGED_FEED, ""));
    // A directory is its session files, in path order: the same two.
    let (code, out, _) = run(&["print", &multi("")]);
    assert_eq!((code, out.as_str()), (0, MERGED_FEED));
    // One input prints as before: no tags.
    let (_, one, _) = run(&["print", &multi("b.ndjson")]);
    assert!(one.starts_with("tool.catalog.publish"), "{one}");
}

#[test]
fn an_input_that_cannot_be_read_is_said_and_the_others_are_still_shown() {
    let missing = multi("missing.ndjson");
    let (code, out, err) = run(&["print", &multi("a.ndjson"), &missing]);
    assert_eq!(code, 2, "{err}");
    // The missing input's session is there (its failure is its finding), so rows are tagged.
    assert_eq!(
        out,
        "\
[a.ndjson] tool.catalog.publish 1 tool published
[a.ndjson] prompt     build the project
[a.ndjson] Bash       ok        cargo build  [00000000-0000-4000-8000-000000000001]
[a.ndjson] Bash       error     cargo test  [00000000-0000-4000-8000-000000000002]
"
    );
    assert!(
        err.contains("missing.ndjson: cannot read") && err.contains("the other inputs are read on"),
        "{err}"
    );
    // A picture is refused as not a session, the same way, and the text file is still read.
    let png = std::env::temp_dir().join(format!("rawpv-multi-{}.png", std::process::id()));
    std::fs::write(&png, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    let (code, out, err) = run(&["convert", &multi("b.ndjson"), png.to_str().unwrap()]);
    std::fs::remove_file(&png).ok();
    assert_eq!(code, 2, "{err}");
    assert_eq!(out.lines().count(), 5, "{out}");
}

#[test]
fn check_reports_on_each_input_in_turn_in_every_format() {
    let (a, b) = (multi("a.ndjson"), multi("b.ndjson"));
    let (code, out, _) = run(&["check", &a, &b]);
    assert_eq!(code, 1);
    let expected = format!(
        "{a}:5: error[malformed-line] line 5: not valid JSON: key must be a string at line 1 column 33 — {{\"type\": \"tool.invoke.request\", this line is broken (SPEC 2)
{a}: 1 error, 0 warnings, 0 infos
{b}:5: warning[request-never-answered] Read request \"00000000-0000-4000-8000-000000000002\" never got a result (SPEC 3.7)
{b}: 0 errors, 1 warning, 0 infos
2 inputs: 1 error, 1 warning, 0 infos
"
    );
    assert_eq!(out, expected);
    // JSON: one report per line, each a valid check report of its own file.
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/check-report.v1.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let schema = jsonschema::validator_for(&schema).unwrap();
    let (_, out, _) = run(&["check", &a, &b, "--format", "json"]);
    let reports: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(reports.len(), 2);
    for (r, file) in reports.iter().zip([&a, &b]) {
        assert!(schema.is_valid(r), "{r}");
        assert_eq!(r["file"], file.as_str());
    }
    assert_eq!(reports[1]["summary"]["warning"], 1);
    // SARIF: one run per input; JUnit: one suite per input, the totals summed.
    let (_, out, _) = run(&["check", &a, &b, "--format", "sarif"]);
    let sarif: Value = serde_json::from_str(&out).unwrap();
    let uris: Vec<&str> = sarif["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(uris.len(), 2);
    assert!(
        uris[0].ends_with("a.ndjson") && uris[1].ends_with("b.ndjson"),
        "{uris:?}"
    );
    let (_, out, _) = run(&["check", &a, &b, "--format", "junit"]);
    let doc = roxmltree::Document::parse(&out).unwrap();
    let root = doc.root_element();
    assert_eq!(
        (root.attribute("tests"), root.attribute("failures")),
        (Some("2"), Some("2"))
    );
    assert_eq!(
        root.children()
            .filter(|n| n.has_tag_name("testsuite"))
            .count(),
        2
    );
    // An unreadable input: exit 2, the others still checked and counted.
    let (code, out, err) = run(&["check", &b, &multi("missing.ndjson")]);
    assert_eq!(code, 2, "{err}");
    assert!(
        out.ends_with("2 inputs (1 could not be read): 0 errors, 1 warning, 0 infos\n"),
        "{out}"
    );
}

/// `convert A B` is one RAWP stream: read back, it holds the same sessions and rows (each
/// input's frames name its session), and a frame that named a session keeps it.
#[test]
fn convert_writes_one_stream_that_reads_back_as_the_same_sessions() {
    let (code, out, err) = run(&["convert", &multi("a.ndjson"), &multi("b.ndjson")]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err,
        "rawpv: skipped line 5: not valid JSON: key must be a string at line 1 column 33 — {\"type\": \"tool.invoke.request\", this line is broken\nrawpv: 1 malformed line(s) were not converted\n"
    );
    let ids: Vec<String> = out
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["session_id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    // Neither input names a session: each gets the UUID `serve` derives for it.
    let a = rawpv::serve::inputs::input_session_id(Path::new(&multi("a.ndjson")));
    let b = rawpv::serve::inputs::input_session_id(Path::new(&multi("b.ndjson")));
    assert_ne!(a, b);
    let (a, b) = (a.as_str(), b.as_str());
    assert_eq!(ids, [a, a, b, b, a, b, b, a, a, b, a]);
    let back = std::env::temp_dir().join(format!("rawpv-multi-{}.ndjson", std::process::id()));
    std::fs::write(&back, &out).unwrap();
    let (_, feed, _) = run(&["print", back.to_str().unwrap()]);
    std::fs::remove_file(&back).ok();
    assert_eq!(
        feed,
        MERGED_FEED
            .replace("[a.ndjson]", &format!("[{a}]"))
            .replace("[b.ndjson]", &format!("[{b}]"))
    );
}

fn fold(runs: Vec<Run>, labels: Vec<Box<str>>) -> Session {
    let mut s = Session::new();
    s.sessions.set_inputs(labels);
    for r in runs {
        s.input = r.input;
        for d in r.items {
            s.apply(d);
        }
    }
    s.finish();
    s
}

/// Each input's calls, as `(tool, status)` in order, read alone and read merged with every
/// other Claude Code transcript of the corpus: the same, for every transcript (a merged view
/// never pairs a result with another file's call, nor loses one).
#[test]
fn every_corpus_transcript_pairs_the_same_merged_as_alone() {
    let Some(dir) = crate::support::corpus::dir("claude-code") else {
        return;
    };
    let args = merge::expand_dirs(&[dir.display().to_string()]).unwrap();
    assert_eq!(args.len(), 9, "{args:?}");
    let kinds: Vec<SourceKind> = args
        .iter()
        .map(|a| SourceKind::File(PathBuf::from(a)))
        .collect();
    let calls = |s: &Session, sids: &[u32]| -> Vec<(String, String)> {
        s.invocations
            .iter()
            .filter(|i| sids.contains(&i.session))
            .map(|i| (i.tool_name.clone(), format!("{:?}", i.status)))
            .collect()
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (_, runs, failed) = rt.block_on(merge::load_all(
        &kinds,
        &rawpv::source::NetConfig::default(),
    ));
    assert!(failed.is_empty());
    let merged = fold(runs, merge::labels(&kinds));
    let mut total = 0;
    for (i, k) in kinds.iter().enumerate() {
        let alone = Session::from_decoded(rt.block_on(rawpv::source::load_input(k)).unwrap().items);
        let all: Vec<u32> = (0..alone.sessions.len() as u32).collect();
        let want = calls(&alone, &all);
        let mine: Vec<u32> = merged.sessions.of_input(i as u16).collect();
        assert_eq!(calls(&merged, &mine), want, "{}", args[i]);
        total += want.len();
    }
    assert!(total > 300, "{total}");
    assert_eq!(merged.invocations.len(), total);
}

/// The viewer on two inputs: one feed merged by time, each row starting with its session's
/// tag, at 80x24 and 200x60.
#[test]
fn the_viewer_shows_two_inputs_in_one_feed_with_session_tags() {
    let kinds = [
        SourceKind::File(multi("a.ndjson").into()),
        SourceKind::File(multi("b.ndjson").into()),
    ];
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (_, runs, _) = rt.block_on(merge::load_all(
        &kinds,
        &rawpv::source::NetConfig::default(),
    ));
    let mut app = rawpv::app::App::headless_inputs(runs, merge::labels(&kinds));
    for (w, h) in [(80, 24), (200, 60)] {
        let term = draw(&mut app, w, h);
        let screen = screen_text(&term);
        let rows: Vec<String> = screen
            .chars()
            .collect::<Vec<_>>()
            .chunks(usize::from(w))
            .map(|r| r.iter().collect())
            .collect();
        // Feed rows: the tag, then the time.
        let tagged = rows
            .iter()
            .filter(|l| l.starts_with("│a.ndjson 10:00") || l.starts_with("│b.ndjson 10:00"))
            .count();
        assert_eq!(tagged, 8, "{screen}");
        // Two sessions: the sessions list shows by itself, newest activity first.
        let list: Vec<&str> = rows
            .iter()
            .filter(|l| l.starts_with('│'))
            .filter_map(|l| l.split('│').find(|c| c.contains(" ended ")))
            .map(|c| c.split_whitespace().next().unwrap_or(""))
            .collect();
        assert_eq!(list, ["all", "a.ndjson", "b.ndjson"], "{screen}");
        insta::assert_snapshot!(format!("multi_input_two_files_{w}x{h}"), term.backend());
    }
    // Enter on b's row in the list: the feed shows b only (a `session:` filter), Enter on
    // "all" shows both again.
    crate::support::headless::act(
        &mut app,
        &[
            Action::FocusNext,
            Action::MoveDown,
            Action::MoveDown,
            Action::Open,
        ],
    );
    let term = draw(&mut app, 80, 24);
    let screen = screen_text(&term);
    assert!(
        screen.contains("README.md") && !screen.contains("cargo build"),
        "{screen}"
    );
    assert!(screen.contains("session:b.ndjson"), "{screen}");
    insta::assert_snapshot!("multi_input_one_session_shown_80x24", term.backend());
    crate::support::headless::act(&mut app, &[Action::Top, Action::Open]);
    let screen = screen_text(&draw(&mut app, 80, 24));
    assert!(
        screen.contains("README.md") && screen.contains("cargo build"),
        "{screen}"
    );
    crate::support::headless::act(&mut app, &[Action::ShowSessions]);
    // Folding b's turn hides b's rows only: a's calls between them stay.
    crate::support::headless::act(
        &mut app,
        &[
            Action::Top,
            Action::MoveDown,
            Action::MoveDown,
            Action::MoveDown,
            Action::ToggleFold,
        ],
    );
    let term = draw(&mut app, 80, 24);
    let screen = screen_text(&term);
    assert!(
        screen.contains("cargo build") && screen.contains("cargo test"),
        "{screen}"
    );
    assert!(
        !screen.contains("README.md") && !screen.contains("Cargo.toml"),
        "{screen}"
    );
    insta::assert_snapshot!("multi_input_fold_one_session_80x24", term.backend());
}

/// The real binary on a terminal: `rawpv a.ndjson b.ndjson missing.ndjson` opens the two that
/// can be read in one feed, tagged, with the sessions list saying the third input failed; `-f`
/// on two growing files shows a call appended to the second (live inputs by arrival).
#[test]
fn the_binary_opens_several_inputs_and_says_which_failed() {
    use crate::support::pty::Pty;
    let wait = std::time::Duration::from_secs(30);
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("in");
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["a.ndjson", "b.ndjson"] {
        std::fs::copy(multi(f), dir.join(f)).unwrap();
    }
    let t = Pty::spawn(
        &["a.ndjson", "b.ndjson", "missing.ndjson"],
        &dir,
        home.path(),
        120,
        30,
    );
    t.wait_screen("b.ndjson 10:00:10", wait);
    t.wait_screen("a.ndjson 10:00:09", wait);
    t.wait_screen("input failed", wait);
    t.wait_screen("3 inputs", wait);
    drop(t);
    let t = Pty::spawn(&["-f", "a.ndjson", "b.ndjson"], &dir, home.path(), 120, 30);
    t.wait_screen("b.ndjson 10:00:10", wait);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join("b.ndjson"))
        .unwrap();
    std::io::Write::write_all(
        &mut f,
        br#"{"type": "tool.invoke.request", "timestamp": "2026-11-29T10:00:20.000Z", "payload": {"invocation_id": "00000000-0000-4000-8000-000000000003", "tool_name": "Read", "input": {"path": "appended.md"}}}
"#,
    )
    .unwrap();
    t.wait_screen("appended.md", wait);
}
