//! `rawpv check` and `rawpv stats` fold a file with `Session::findings_only` (issue 17: the
//! one-shot commands keep only what their output needs): the findings and counts must be those of
//! the full session.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use rawpv::session::Session;

/// A generated recording of `frames` frames (`crate::generator`, seed `seed`) in a temporary
/// directory (kept while the first value lives).
fn generated(frames: u64, seed: u64) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("gen.ndjson");
    let mut buf = Vec::new();
    crate::generator::generate(&mut buf, frames, seed).unwrap();
    std::fs::write(&p, buf).unwrap();
    (dir, p)
}

/// Runs `rawpv print --color never` on `p` (rows written and dropped as the file folds) and
/// asserts it prints the full session's feed, byte for byte; returns that feed.
fn assert_print_is_the_full_feed(p: &std::path::Path, full: &Session) -> String {
    let mut expected = Vec::new();
    rawpv::cmd::print::write_feed(&mut expected, full, false).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rawpv"))
        .args(["print", "--color", "never"])
        .arg(p)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (got, want) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&expected),
    );
    let first_diff = got.lines().zip(want.lines()).position(|(a, b)| a != b);
    assert!(got == want, "first differing line: {first_diff:?}");
    want.into_owned()
}

/// `rawpv check` folds with `Session::findings_only`: the same findings as the full session on
/// every RAWP fixture and a generated recording, with no event or message kept and no finished
/// call's result record.
#[test]
fn a_findings_only_fold_finds_the_same() {
    use rawpv::session::Item;
    use rawpv::source::file::{fold_path, fold_path_into};
    let (_dir, recording) = generated(3_000, 1);
    let mut paths = vec![recording];
    for e in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "ndjson") {
            paths.push(p);
        }
    }
    let mut kept_less = 0;
    for p in paths {
        let (full, _) = fold_path(&p).unwrap();
        let mut lean = Session::new();
        lean.findings_only = true;
        let (lean, _) = fold_path_into(&p, lean).unwrap();
        assert_eq!(lean.findings, full.findings, "{}", p.display());
        assert!(
            lean.items.iter().all(|i| matches!(i, Item::Invocation(_))),
            "{}",
            p.display()
        );
        assert!(lean.invocations.iter().all(|i| i.result.is_none()));
        kept_less += usize::from(lean.items.len() < full.items.len());
    }
    assert!(kept_less > 10, "{kept_less}");
}

/// `rawpv stats` folds with `Session::tally` (issue 17): no event, message or result record is
/// kept, no finished call's chunk text or summary, and the counters are those a full fold gives
/// (per tool, status and `output_type`, the durations, the usage tokens).
#[test]
fn a_tally_fold_counts_what_the_full_session_holds() {
    use rawpv::session::Item;
    use rawpv::session::tally::Tally;
    use rawpv::source::file::{fold_path, fold_path_into};
    let (_dir, p) = generated(3_000, 2);
    let (full, _) = fold_path(&p).unwrap();
    let mut expected = Tally::default();
    for inv in &full.invocations {
        expected.call(inv);
    }
    for it in &full.items {
        if let Item::Event(f) = it {
            expected.event(f);
        }
    }
    let mut lean = Session::new();
    lean.findings_only = true;
    lean.tally = Some(Box::default());
    let (mut lean, _) = fold_path_into(&p, lean).unwrap();
    let mut got = *lean.tally.take().unwrap();
    for inv in lean.invocations.iter().filter(|i| i.status.is_open()) {
        got.call(inv);
    }
    assert!(expected.tokens.rows > 0 && expected.duration_count() > 100);
    assert!(expected.per_output.len() > 1, "{:?}", expected.per_output);
    assert_eq!(got, expected);
    assert_eq!(lean.findings, full.findings);
    assert!(lean.items.iter().all(|i| matches!(i, Item::Invocation(_))));
    for inv in lean.invocations.iter().filter(|i| !i.status.is_open()) {
        assert!(inv.result.is_none() && inv.summary.is_empty());
        assert!(inv.stream.chunks().all(|c| c.text.is_empty()));
    }
}

/// `rawpv print` of a file writes rows as the file folds and drops what it wrote (issue 17): on a
/// recording of many batches, with calls still open across batch ends, the output is the full
/// session's feed, byte for byte.
#[test]
fn print_streaming_rows_writes_the_full_feed() {
    use rawpv::source::file::fold_path;
    let (_dir, p) = generated(40_000, 3);
    let (full, _) = fold_path(&p).unwrap();
    assert!(full.items.len() > 3 * rawpv::source::BATCH);
    assert_print_is_the_full_feed(&p, &full);
}

/// A `findings_only` fold moves every finished call out of `Session::invocations` into its
/// compact table (issue 17 item 3), so it must still answer what later frames ask of those calls:
/// a second request or result, late chunks (a repeated `sequence` names the line of the kept
/// one; a new one is kept and then repeats), a chunk naming another tool, and an unnamed frame's
/// session. 6,000 calls fold first, so the list is compacted several times; the findings are the
/// full fold's, and only the open calls stay as records. `rawpv print`, which drops the rows it
/// wrote the same way (`Session::drop_written`), prints the full session's feed.
#[test]
fn finished_calls_folded_away_still_answer_later_frames() {
    use rawpv::source::file::{fold_path, fold_path_into};
    use std::fmt::Write as _;
    let id = |i: u32| format!("00000000-0000-4000-8000-{i:012x}");
    let req = |i: u32, s: &str| {
        format!(
            r#"{{"type":"tool.invoke.request","session_id":"{s}","payload":{{"invocation_id":"{}","tool_name":"Bash","input":{{"command":"ls"}}}}}}"#,
            id(i)
        )
    };
    let chunk = |i: u32, seq: u32, tool: &str| {
        format!(
            r#"{{"type":"tool.invoke.stream","payload":{{"invocation_id":"{}","tool_name":"{tool}","sequence":{seq},"stream_type":"stdout","chunk":"out {seq}\n"}}}}"#,
            id(i)
        )
    };
    let res_in = |i: u32, s: &str| {
        format!(
            r#"{{"type":"tool.invoke.result",{s}"payload":{{"invocation_id":"{}","tool_name":"Bash","status":"success","output":"ok","output_type":"text"}}}}"#,
            id(i)
        )
    };
    let res = |i: u32| res_in(i, "");
    let (s1, s2) = (
        "10000000-0000-4000-8000-000000000001",
        "20000000-0000-4000-8000-000000000002",
    );
    let in_s2 = format!(r#""session_id":"{s2}","#);
    let mut text = String::new();
    for i in 0..6_000 {
        writeln!(text, "{}", req(i, s1)).unwrap();
        if i % 3 == 0 {
            writeln!(text, "{}\n{}", chunk(i, 0, "Bash"), chunk(i, 2, "Bash")).unwrap();
        }
        if i % 500 != 7 {
            writeln!(text, "{}", res(i)).unwrap();
        }
    }
    for late in [
        req(3, s1),          // already requested (finished)
        chunk(3, 2, "Bash"), // sequence 2 already kept
        chunk(3, 1, "Bash"), // new: kept
        chunk(3, 1, "Bash"), // now a duplicate
        chunk(6, 5, "Read"), // another tool's name
        res(3),              // second result
        res(5_000),          // never requested
        req(7, s1),          // still open: already requested
    ] {
        writeln!(text, "{late}").unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    // One session for `print` (a streamed print learns of a second session only when it comes).
    let one = dir.path().join("late.ndjson");
    std::fs::write(&one, &text).unwrap();
    for late in [
        req(9_000, s2), // a call of another session, finished there …
        res_in(9_000, &in_s2),
        res(9_000), // … then a result naming no session: the default one has no such call
    ] {
        writeln!(text, "{late}").unwrap();
    }
    let p = dir.path().join("two.ndjson");
    std::fs::write(&p, text).unwrap();
    let (full, _) = fold_path(&p).unwrap();
    let mut lean = Session::new();
    lean.findings_only = true;
    let (lean, _) = fold_path_into(&p, lean).unwrap();
    let codes = |s: &Session| {
        let mut c: Vec<&str> = s.findings.iter().map(|f| f.code).collect();
        c.sort_unstable();
        c.dedup();
        c
    };
    assert_eq!(
        codes(&full),
        [
            "catalog-missing",
            "duplicate-invocation-id",
            "duplicate-result",
            "request-never-answered",
            "result-without-request",
            "stream-after-result",
            "stream-sequence-duplicate",
            "stream-sequence-gap",
            "tool-name-mismatch",
        ]
    );
    assert_eq!(lean.findings, full.findings);
    let open: Vec<&str> = (lean.invocations.iter())
        .filter(|i| i.status.is_open())
        .map(|i| i.invocation_id.as_str())
        .collect();
    assert_eq!(
        open,
        (0..6_000)
            .filter(|i| i % 500 == 7)
            .map(id)
            .collect::<Vec<_>>()
    );
    // Finished records are compacted out of the list in steps of at least 1,024.
    assert!(lean.invocations.len() < 1_100, "{}", lean.invocations.len());
    let (full, _) = fold_path(&one).unwrap();
    assert!(full.items.len() > 6_000);
    let want = assert_print_is_the_full_feed(&one, &full);
    assert!(want.contains("tool.invoke.result") && want.contains("tool.invoke.request"));
}

/// Sequences `u64::MAX - 1` and `u64::MAX` are two chunks (attack 7 #1): neither the full fold
/// nor the findings-only one (whose call is folded away before the second chunk) calls the second
/// a duplicate, and both give the same findings. Fixture `seq_u64max_late.ndjson`: the MAX chunk
/// arrives after the result; the one finding either way is the gap 0..MAX-2.
#[test]
fn sequences_max_minus_one_and_max_are_distinct() {
    use rawpv::source::file::{fold_path, fold_path_into};
    let p = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/seq_u64max_late.ndjson"
    ));
    let (full, _) = fold_path(p).unwrap();
    let mut lean = Session::new();
    lean.findings_only = true;
    let (lean, _) = fold_path_into(p, lean).unwrap();
    assert_eq!(lean.findings, full.findings);
    let codes: Vec<_> = full.findings.iter().map(|f| f.code).collect();
    assert!(!codes.contains(&"stream-sequence-duplicate"), "{codes:?}");
    // In order (both chunks before the result): both kept; the one finding about them is the
    // gap below them (and the input has no catalog).
    let text = std::fs::read_to_string(p).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("in_order.ndjson");
    std::fs::write(&q, [lines[0], lines[1], lines[3], lines[2]].join("\n")).unwrap();
    let (full, _) = fold_path(&q).unwrap();
    let codes: Vec<_> = full.findings.iter().map(|f| f.code).collect();
    assert_eq!(codes, ["stream-sequence-gap", "catalog-missing"]);
    let inv = &full.invocations[0];
    assert_eq!(inv.stream.len(), 2);
}
