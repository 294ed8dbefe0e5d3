//! Limits as findings, never crashes (issue 9): a 10 MB single line, invalid UTF-8, NUL bytes,
//! JSON nested past `serde_json`'s recursion limit, a frame cut off at EOF, a stream over the
//! per-invocation cap, a result of a million lines, and `print` into a closed pipe.
//!
//! Big inputs are generated at test time in a tempdir (nothing big is committed); each test stays
//! well under a few seconds in a debug build.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rawpv::finding::code;
use rawpv::import::{Decoded, load_bytes};
use rawpv::protocol::ParseErrorKind;
use rawpv::session::{MAX_STREAM_BYTES, Session};

fn rawpv() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin!("rawpv"))
}

fn write_temp(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, bytes).unwrap_or_else(|e| panic!("write {}: {e}", p.display()));
    p
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"))
}

fn request(id: &str) -> String {
    format!(
        r#"{{"type":"tool.invoke.request","payload":{{"invocation_id":"{id}","tool_name":"Bash","input":{{"command":"x"}}}}}}"#
    )
}

fn result_with_input_output(id: &str, output_json: &str) -> String {
    format!(
        r#"{{"type":"tool.invoke.result","payload":{{"invocation_id":"{id}","tool_name":"Bash","status":"success","output_type":"text","output":{output_json}}}}}"#
    )
}

fn run_ok(args: &[&str], path: &Path) -> (i32, Vec<u8>, String) {
    let out = rawpv()
        .args(args)
        .arg(path)
        .output()
        .unwrap_or_else(|e| panic!("run rawpv: {e}"));
    (
        out.status.code().unwrap_or(-1),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn ten_megabyte_single_line_is_read_and_rendered_within_limits() {
    let big = "x".repeat(10 * 1024 * 1024);
    let input = format!(
        "{}\n{}\n",
        request("a"),
        result_with_input_output("a", &format!("\"{big}\""))
    );
    let s = Session::from_decoded(load_bytes(input.as_bytes()).items);
    assert_eq!(s.counts.invocations, 1);
    assert_eq!(s.counts.malformed, 0);
    let out = s.invocations[0]
        .result
        .as_ref()
        .and_then(|r| r.output.as_ref())
        .and_then(serde_json::Value::as_str)
        .map(str::len);
    assert_eq!(out, Some(big.len()));

    // The detail view of it is bounded (line cut at the per-line cap), and the CLI succeeds.
    let dir = tempdir();
    let p = write_temp(&dir, "big.ndjson", input.as_bytes());
    let (code, stdout, stderr) = run_ok(&["print", "--detail", "--color", "never"], &p);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.len() < 2 * 1024 * 1024,
        "detail of a 10 MB line printed {} bytes",
        stdout.len()
    );
}

#[test]
fn ten_megabyte_garbage_line_is_one_malformed_finding_with_a_short_excerpt() {
    let mut input = request("a").into_bytes();
    input.push(b'\n');
    input.extend(std::iter::repeat_n(b'{', 10 * 1024 * 1024));
    input.push(b'\n');
    input.extend_from_slice(result_with_input_output("a", "\"ok\"").as_bytes());
    let loaded = load_bytes(&input);
    let malformed: Vec<_> = loaded
        .items
        .iter()
        .filter_map(|d| match d {
            Decoded::Malformed(e) => Some(e),
            Decoded::Frame(_) | Decoded::Finding(_) => None,
        })
        .collect();
    assert_eq!(malformed.len(), 1);
    assert_eq!(malformed[0].line, 2);
    assert!(malformed[0].excerpt.chars().count() <= 121);
    // Reading went on: the result after the bad line was applied.
    let s = Session::from_decoded(loaded.items);
    assert!(!s.invocations[0].status.is_open());
}

#[test]
fn invalid_utf8_becomes_replacement_characters() {
    let mut input = request("a").into_bytes();
    input.push(b'\n');
    let line = result_with_input_output("a", "\"caf\u{e9} XX\"");
    // Replace the placeholder bytes with invalid UTF-8 (a lone continuation byte and 0xFF).
    let mut bytes = line.into_bytes();
    let pos = bytes
        .windows(2)
        .position(|w| w == b"XX")
        .unwrap_or_else(|| panic!("placeholder"));
    bytes[pos] = 0x80;
    bytes[pos + 1] = 0xFF;
    input.extend_from_slice(&bytes);
    input.extend_from_slice(b"\n\xFF\xFE not json at all\n");
    let loaded = load_bytes(&input);
    let s = Session::from_decoded(loaded.items);
    let out = s.invocations[0]
        .result
        .as_ref()
        .and_then(|r| r.output.as_ref())
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_owned();
    assert!(out.ends_with("\u{FFFD}\u{FFFD}"), "{out:?}");
    assert!(out.starts_with("caf\u{e9}"));
    // The third line is a finding whose excerpt shows the replacement characters.
    assert_eq!(s.counts.malformed, 1);
    assert!(
        s.findings.iter().any(|f| f.code == code::MALFORMED_LINE
            && f.line == 3
            && f.message.contains('\u{FFFD}'))
    );
    // The replacement is never silent: both bad lines get an `invalid-utf8` finding, whether
    // the bytes are decoded whole or read from a file (and then checked).
    let lines = |f: &[rawpv::finding::Finding]| -> Vec<u64> {
        f.iter()
            .filter(|f| f.code == code::INVALID_UTF8)
            .map(|f| f.line)
            .collect()
    };
    assert_eq!(lines(&s.findings), [2, 3]);
    let dir = tempdir();
    let p = write_temp(&dir, "bad-utf8.ndjson", &input);
    let (folded, _) = rawpv::source::file::fold_path(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lines(&folded.findings), [2, 3]);
    let out = rawpv()
        .args(["check", "--format", "json"])
        .arg(&p)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("invalid-utf8"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn nul_bytes_raw_and_escaped() {
    // A raw NUL inside a JSON string is invalid JSON: a finding. An escaped one is data, and is
    // shown as a visible picture.
    let mut input = request("a").into_bytes();
    input
        .extend_from_slice(b"\n{\"type\":\"agent.text.delta\",\"payload\":{\"delta\":\"a\0b\"}}\n");
    input.extend_from_slice(result_with_input_output("a", "\"nul\\u0000here\"").as_bytes());
    input.extend_from_slice(b"\n\0\0\0\n");
    let s = Session::from_decoded(load_bytes(&input).items);
    assert_eq!(s.counts.malformed, 2);
    assert!(!s.invocations[0].status.is_open());
    let dir = tempdir();
    let p = write_temp(&dir, "nul.ndjson", &input);
    let (code, stdout, stderr) = run_ok(&["print", "--detail", "--color", "never"], &p);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains(&0), "a NUL reached stdout");
    let text = String::from_utf8_lossy(&stdout);
    assert!(text.contains("nul"), "{text}");
}

#[test]
fn json_nested_past_the_recursion_limit_is_a_finding_not_a_stack_overflow() {
    let depth = 100_000;
    let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let mut input = request("a");
    input.push('\n');
    input.push_str(&result_with_input_output("a", &deep));
    input.push('\n');
    // Deep nesting of objects in the payload, and as a bare line.
    let mut obj = String::new();
    for _ in 0..depth {
        obj.push_str("{\"a\":");
    }
    obj.push('1');
    obj.push_str(&"}".repeat(depth));
    input.push_str(&obj);
    input.push('\n');
    let loaded = load_bytes(input.as_bytes());
    let kinds: Vec<_> = loaded
        .items
        .iter()
        .map(|d| match d {
            Decoded::Frame(f) => format!("frame {}", f.frame_type),
            Decoded::Malformed(e) => match &e.kind {
                ParseErrorKind::Json(m) => format!("json error: {}", m.contains("recursion")),
                other => format!("{other:?}"),
            },
            Decoded::Finding(f) => format!("finding {}", f.code),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "frame tool.invoke.request",
            "json error: true",
            "json error: true"
        ]
    );
    // Just under the limit it is data, and rendering it (JSON tree) does not overflow either.
    let nested = format!("{}1{}", "[".repeat(120), "]".repeat(120));
    let input = format!(
        "{}\n{}\n",
        request("b"),
        result_with_input_output("b", &nested)
    )
    .replace("\"output_type\":\"text\"", "\"output_type\":\"structured\"");
    let dir = tempdir();
    let p = write_temp(&dir, "nested.ndjson", input.as_bytes());
    let (code, stdout, stderr) = run_ok(&["print", "--detail", "--color", "never"], &p);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.is_empty());

    // The JSON-array input format has the same limit.
    let arr = format!("[{deep}]");
    let loaded = load_bytes(arr.as_bytes());
    assert!(
        loaded
            .items
            .iter()
            .all(|d| matches!(d, Decoded::Malformed(_)))
    );
}

#[test]
fn frame_cut_off_at_eof_is_a_finding_and_the_rest_is_kept() {
    let full = result_with_input_output("a", "\"done\"");
    let input = format!("{}\n{}", request("a"), &full[..full.len() / 2]);
    let s = Session::from_decoded(load_bytes(input.as_bytes()).items);
    assert_eq!(s.counts.malformed, 1);
    assert!(
        s.findings
            .iter()
            .any(|f| f.code == code::MALFORMED_LINE && f.line == 2)
    );
    assert_eq!(s.counts.invocations, 1);
    assert!(s.invocations[0].status.is_open(), "no result: still open");
    assert!(s.ended);
    let dir = tempdir();
    let p = write_temp(&dir, "cut.ndjson", input.as_bytes());
    let (code, _, stderr) = run_ok(&["check"], &p);
    assert_eq!(code, 1, "check reports the error level finding: {stderr}");
    let (code, _, stderr) = run_ok(&["print"], &p);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn stream_over_the_cap_is_counted_not_kept() {
    let chunk = "y".repeat(1024 * 1024);
    let mut input = request("a");
    input.push('\n');
    let n = MAX_STREAM_BYTES / chunk.len() + 2;
    for seq in 0..n {
        let _ = writeln!(
            input,
            r#"{{"type":"tool.invoke.stream","payload":{{"invocation_id":"a","tool_name":"Bash","stream_type":"stdout","chunk":"{chunk}","sequence":{seq}}}}}"#
        );
    }
    let s = Session::from_decoded(load_bytes(input.as_bytes()).items);
    let stream = &s.invocations[0].stream;
    assert!(stream.bytes() <= MAX_STREAM_BYTES);
    assert_eq!(
        stream.bytes() as u64 + stream.dropped_bytes,
        (n * chunk.len()) as u64
    );
}

#[test]
fn a_million_line_result_prints_a_bounded_detail() {
    let body = "l\\n".repeat(1_000_000);
    let input = format!(
        "{}\n{}\n",
        request("a"),
        result_with_input_output("a", &format!("\"{body}\""))
    );
    let dir = tempdir();
    let p = write_temp(&dir, "lines.ndjson", input.as_bytes());
    let (code, stdout, stderr) = run_ok(&["print", "--detail", "--color", "never"], &p);
    assert_eq!(code, 0, "{stderr}");
    let lines = memchr::memchr_iter(b'\n', &stdout).count();
    assert!(
        lines < 100_000,
        "{lines} lines printed for one result; the renderer limit did not apply"
    );
}

/// `rawpv CMD FILE | head -1`: rawpv must exit 0 when its reader goes away.
#[test]
fn closed_pipe_exits_zero() {
    let mut input = String::new();
    for i in 0..5_000 {
        input.push_str(&request(&format!("id{i}")));
        input.push('\n');
        input.push_str(&result_with_input_output(
            &format!("id{i}"),
            "\"some output\\nover two lines\"",
        ));
        input.push('\n');
    }
    let dir = tempdir();
    let p = write_temp(&dir, "many.ndjson", input.as_bytes());
    for args in [
        &["print"][..],
        &["print", "--detail", "--color", "always"],
        &["convert"],
    ] {
        let mut child = rawpv()
            .args(args)
            .arg(&p)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn: {e}"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let mut first = String::new();
        BufReader::new(stdout)
            .read_line(&mut first)
            .unwrap_or_else(|e| panic!("read: {e}"));
        // The reader is dropped here: the pipe is closed.
        assert!(!first.is_empty());
        let out = child
            .wait_with_output()
            .unwrap_or_else(|e| panic!("wait: {e}"));
        assert_eq!(
            out.status.code(),
            Some(0),
            "rawpv {args:?} | head -1: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("panicked"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Stdin works the same as a file, including a frame cut off at EOF.
#[test]
fn stdin_cut_off_frame() {
    let mut child = rawpv()
        .args(["print", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    {
        let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("stdin"));
        let _ = writeln!(stdin, "{}", request("a"));
        let _ = write!(stdin, "{{\"type\":\"tool.invoke.res");
    }
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("wait: {e}"));
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Bash"), "{text}");
}
