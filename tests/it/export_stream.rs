//! `rawpv export` of a file writes its rows as the file folds and drops them (issue 26,
//! `rawpv::export::write_path`): the document is the one written from the whole session (every
//! corpus session and RAWP fixture, Markdown byte for byte, HTML row for row and detail for
//! detail), and rows after a call that never ends are still written and dropped, so the folded
//! session stays small whatever the file's length.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use rawpv::export::{Depth, Format, Options};

use crate::support::exports;

fn opts(depth: Depth) -> Options {
    Options {
        depth,
        redact: true,
        max_lines: 200,
        title: "s".into(),
    }
}

fn streamed(path: &Path, format: Format, depth: Depth) -> String {
    let mut out = Vec::new();
    rawpv::export::write_path(&mut out, path, format, &opts(depth)).unwrap();
    String::from_utf8(out).unwrap()
}

fn whole(path: &Path, format: Format, depth: Depth) -> String {
    let s = exports::load(path);
    let mut out = Vec::new();
    rawpv::export::write(&mut out, &s, format, &opts(depth)).unwrap();
    String::from_utf8(out).unwrap()
}

/// What a page shows, independent of the order its rows were written in: the body with the
/// chunk numbers (`data-z`) and nonces taken out, and every call's detail with its style
/// classes replaced by their CSS.
fn shown(page: &str) -> (String, Vec<(String, String)>) {
    use base64::Engine;
    let nonce = regex::Regex::new(r"nonce-[0-9a-f]+|nonce=.[0-9a-f]+.").unwrap();
    let page = nonce.replace_all(page, "N");
    let css: HashMap<String, String> = regex::Regex::new(r"\n\.s(\d+)\{([^}]*)\}")
        .unwrap()
        .captures_iter(&page)
        .map(|c| (c[1].to_owned(), c[2].to_owned()))
        .collect();
    let class = |v: &serde_json::Value| {
        let n = v.to_string();
        css.get(&n).cloned().unwrap_or_default()
    };
    let body_at = page.find("<body>").unwrap();
    let data_at = page.find("<div id=\"data\"").unwrap();
    let body = regex::Regex::new(r#" data-z="\d+""#)
        .unwrap()
        .replace_all(&page[body_at..data_at], "")
        .into_owned();
    let chunk = regex::Regex::new(r#"class="z" id="z\d+">([^<]*)</script>"#).unwrap();
    let mut details = Vec::new();
    for c in chunk.captures_iter(&page) {
        let packed = base64::engine::general_purpose::STANDARD
            .decode(&c[1])
            .unwrap();
        let mut json = Vec::new();
        let mut z = flate2::write::DeflateDecoder::new(&mut json);
        z.write_all(&packed).unwrap();
        z.finish().unwrap();
        let map: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(&json).unwrap();
        for (k, v) in map {
            let mut lines = String::new();
            for l in v["u"].as_array().unwrap() {
                let l = l.as_array().unwrap();
                lines.push_str(&class(&l[0]));
                for pair in l[1..].chunks(2) {
                    let _ = write!(lines, "[{}]{}", class(&pair[0]), pair[1]);
                }
                lines.push('\n');
            }
            details.push((k, lines));
        }
    }
    details.sort();
    (body, details)
}

#[test]
fn every_session_streams_to_the_document_of_the_whole_session() {
    let Some(paths) = exports::sessions() else {
        return;
    };
    for p in &paths {
        for depth in [Depth::Full, Depth::Calls] {
            assert_eq!(
                streamed(p, Format::Markdown, depth),
                whole(p, Format::Markdown, depth),
                "{} ({depth:?})",
                p.display()
            );
        }
        let (a, b) = (
            shown(&streamed(p, Format::Html, Depth::Full)),
            shown(&whole(p, Format::Html, Depth::Full)),
        );
        assert_eq!(a.0, b.0, "{}", p.display());
        assert_eq!(a.1, b.1, "{}", p.display());
    }
}

/// A prompt, a call that never gets a result, then `n` finished Bash calls (a prompt every
/// 5,000).
fn long_file(dir: &Path, n: usize) -> std::path::PathBuf {
    let path = dir.join("long.ndjson");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let ts = |i: usize| format!("2026-11-29T10:{:02}:{:02}.000Z", (i / 60) % 60, i % 60);
    writeln!(
        f,
        r#"{{"type":"control.prompt.request","timestamp":"{}","payload":{{"input_type":"text","text":"go"}}}}"#,
        ts(0)
    )
    .unwrap();
    writeln!(
        f,
        r#"{{"type":"tool.invoke.request","timestamp":"{}","payload":{{"invocation_id":"never","tool_name":"Bash","input":{{"command":"sleep 1000"}}}}}}"#,
        ts(0)
    )
    .unwrap();
    for i in 0..n {
        if i > 0 && i % 5000 == 0 {
            writeln!(
                f,
                r#"{{"type":"control.prompt.request","timestamp":"{}","payload":{{"input_type":"text","text":"more {i}"}}}}"#,
                ts(i)
            )
            .unwrap();
        }
        writeln!(
            f,
            r#"{{"type":"tool.invoke.request","timestamp":"{}","payload":{{"invocation_id":"c{i}","tool_name":"Bash","input":{{"command":"echo {i}"}}}}}}"#,
            ts(i)
        )
        .unwrap();
        writeln!(
            f,
            r#"{{"type":"tool.invoke.result","timestamp":"{}","payload":{{"invocation_id":"c{i}","status":"succeeded","output":"{i}\n"}}}}"#,
            ts(i + 1)
        )
        .unwrap();
    }
    drop(f);
    path
}

#[test]
fn rows_after_a_call_that_never_ends_are_written_and_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let n = 40_000;
    let path = long_file(dir.path(), n);
    assert!(std::fs::metadata(&path).unwrap().len() > 8 << 20);
    // The page stepped as `write_path` steps it: after each batch the rows written are dropped,
    // the open call (the first row after the prompt) and what is not written yet stay.
    let mut page = rawpv::export::html::Page::new(&opts(Depth::Full));
    let mut kept = Vec::new();
    let (session, _) =
        rawpv::source::file::fold_path_each_queued(&path, rawpv::session::Session::new(), 2, |s| {
            page.step(s, s.ended)?;
            page.compact(s);
            kept.push(s.items.len());
            Ok(())
        })
        .unwrap();
    // The session never holds more than the 4,096 rows written before a drop and a batch,
    // not the 80,000 folded (without the drops it grows to all of them).
    assert!(kept.len() >= 3, "{kept:?}");
    assert!(
        kept.iter().all(|&k| k < 6000),
        "rows kept after each batch: {kept:?}"
    );
    let mut out = Vec::new();
    let report = page.finish(&session, &mut out).unwrap();
    assert_eq!(report.calls, n + 1);
    let page = String::from_utf8(out).unwrap();
    // The call that never ended is in its place, first, with its status at the end.
    let first = page.find("id=\"c0\"").unwrap();
    assert!(first < page.find("id=\"c1\"").unwrap());
    assert!(
        page[first..first + 400].contains("no result"),
        "{}",
        &page[first..first + 400]
    );
    // And the page is the whole session's.
    let (a, b) = (
        shown(&page),
        shown(&whole(&path, Format::Html, Depth::Full)),
    );
    assert_eq!(a.0, b.0);
    assert_eq!(a.1, b.1);
    assert_eq!(
        streamed(&path, Format::Markdown, Depth::Full),
        whole(&path, Format::Markdown, Depth::Full)
    );
}
