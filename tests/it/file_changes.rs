//! A call's input and output left in its file (a span, read again when shown) after the file
//! changed under the viewer: replaced by `mv` (editors, sync tools) or rewritten in place. The
//! span's checksum tells; the detail says the file changed and never shows another call's bytes
//! (attack 5 showed `echo Q` under the row of `echo A`). A handle opened before the replace still
//! reads the loaded bytes, which are the right ones.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use rawpv::session::Session;
use rawpv::source::file;
use serde_json::{Value, json};

const TRANSCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/cc_two_bash_calls.jsonl"
);

const RECORDING: &str = r#"{"type":"agent.text.done","payload":{"text":"hi"}}
{"type":"tool.invoke.request","payload":{"invocation_id":"3f2b8c1e-1d2a-4b5c-8d9e-0a1b2c3d4e51","tool_name":"Bash","input":{"command":"cat balance"}}}
{"type":"tool.invoke.result","payload":{"invocation_id":"3f2b8c1e-1d2a-4b5c-8d9e-0a1b2c3d4e51","tool_name":"Bash","status":"success","output":"balance: 100","output_type":"text"}}
"#;

fn copy(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Replaces `path` by a new file holding `text` (a rename over it: another inode).
fn replace(path: &Path, text: &str) {
    let tmp = path.with_extension("new");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// (input, output) of call `i` as the detail would show them.
fn shown(s: &Session, i: usize) -> (Value, Option<Value>) {
    let inv = s.with_input_output(&s.invocations[i]);
    (
        inv.input.clone(),
        inv.result.as_ref().and_then(|r| r.output.clone()),
    )
}

fn changed(what: &str, path: &Path) -> Value {
    Value::String(format!(
        "({what} not available: {} changed since it was read)",
        path.display()
    ))
}

#[test]
fn a_transcript_replaced_by_mv_says_it_changed_and_shows_none_of_the_new_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(TRANSCRIPT).unwrap();
    let path = copy(dir.path(), "s.jsonl", &text);
    let (s, _) = file::fold_path(&path).unwrap();
    let inv = &s.invocations[0];
    assert_eq!(inv.invocation_id, "toolu_A");
    assert!(inv.input_span.is_some() && inv.output_span.is_some());
    // The same lengths: only the checksum can tell.
    replace(
        &path,
        &text
            .replace("echo A", "echo Q")
            .replace(r#""content": "A""#, r#""content": "Q""#)
            .replace(r#""stdout": "A""#, r#""stdout": "Q""#),
    );
    assert_eq!(
        shown(&s, 0),
        (changed("input", &path), Some(changed("output", &path)))
    );
    // The call whose bytes did not change still reads back.
    assert_eq!(shown(&s, 1).0, json!({"command": "echo B"}));
}

#[test]
fn a_recording_rewritten_in_place_says_it_changed() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy(dir.path(), "r.ndjson", RECORDING);
    let (s, _) = file::fold_path(&path).unwrap();
    assert!(s.invocations[0].output_span.is_some());
    // Same inode, same length.
    std::fs::write(&path, RECORDING.replace("balance: 100", "balance: 999")).unwrap();
    assert_eq!(
        shown(&s, 0),
        (
            json!({"command": "cat balance"}),
            Some(changed("output", &path))
        )
    );
}

#[cfg(unix)]
#[test]
fn a_handle_opened_before_the_replace_still_reads_the_bytes_that_were_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(TRANSCRIPT).unwrap();
    let path = copy(dir.path(), "s.jsonl", &text);
    let (s, _) = file::fold_path(&path).unwrap();
    let before = shown(&s, 0);
    assert_eq!(before.0, json!({"command": "echo A"}));
    replace(&path, &text.replace("echo A", "echo Q"));
    assert_eq!(shown(&s, 0), before);
}

/// A UTF-8 byte order mark before the first line is not part of it: the first record decodes
/// (attack 5: it was "not valid JSON" and lost), for a saved file, `print` of stdin and a
/// transcript alike, and a deferred input of line 1 reads back (its span starts after the mark).
#[test]
fn a_byte_order_mark_before_the_first_line_is_not_part_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let with_bom = |name: &str, text: &str| copy(dir.path(), name, &format!("\u{feff}{text}"));
    let rec = with_bom("r.ndjson", RECORDING.split_once('\n').unwrap().1);
    let (s, _) = file::fold_path(&rec).unwrap();
    // The recording has no catalog: that is its one finding (the first line is not lost).
    let codes: Vec<&str> = s.findings.iter().map(|f| f.code).collect();
    assert_eq!(codes, ["catalog-missing"], "{:?}", s.findings);
    assert!(s.invocations[0].input_span.is_some());
    assert_eq!(shown(&s, 0).0, json!({"command": "cat balance"}));

    let cc = with_bom("s.jsonl", &std::fs::read_to_string(TRANSCRIPT).unwrap());
    let (s, _) = file::fold_path(&cc).unwrap();
    let (plain, _) = file::fold_path(Path::new(TRANSCRIPT)).unwrap();
    assert!(s.findings.is_empty(), "{:?}", s.findings);
    assert_eq!(s.items.len(), plain.items.len());
    assert_eq!(shown(&s, 0), shown(&plain, 0));

    let out = assert_cmd::Command::cargo_bin("rawpv")
        .unwrap()
        .args(["print", "--color", "never", "-"])
        .write_stdin("\u{feff}{\"type\":\"agent.text.done\",\"payload\":{\"text\":\"hi\"}}\n")
        .output()
        .unwrap();
    assert_eq!(
        (out.status.code(), String::from_utf8(out.stdout).unwrap()),
        (Some(0), "agent      hi\n".to_owned())
    );
}
