//! Property tests of the renderers (issue 9): any output, of any `output_type` (and an unknown
//! one), rendered with any flags, never panics and never lets a control or invisible/reordering
//! character reach a span; what `print --color always` writes from those lines holds only SGR.
//!
//! Inputs mix fragments that matter to the renderers: SGR and other escape sequences, C1
//! controls, bidi overrides, zero-width characters, CR/BS, unified-diff lines and hunk headers,
//! markdown, numbered file lines, and arbitrary JSON. `PROPTEST_CASES=N` runs more cases (the
//! default keeps CI fast).

use proptest::prelude::*;
use rawpv::finding::is_invisible_format;
use rawpv::protocol::OutputType;
use rawpv::render::{RenderCtx, render_input, render_output, sgr};
use rawpv::theme::Theme;
use serde_json::{Value, json};

fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,12}",
        Just("\u{1b}[1;31m".to_owned()),
        Just("\u{1b}[0m".to_owned()),
        Just("\u{1b}[38;2;1;2;3m".to_owned()),
        Just("\u{1b}]52;c;ZXZpbA==\u{7}".to_owned()),
        Just("\u{1b}]8;;http://x\u{1b}\\".to_owned()),
        Just("\u{1b}]0;title\u{7}".to_owned()),
        Just("\u{1b}P1$r\u{1b}\\".to_owned()),
        Just("\u{1b}[2J\u{1b}[10;10H".to_owned()),
        Just("\u{1b}[".to_owned()),
        Just("\u{1b}".to_owned()),
        Just("\u{9b}31m\u{9d}".to_owned()),
        Just("\u{202e}\u{2066}\u{200b}\u{feff}\u{2060}".to_owned()),
        Just("\r".to_owned()),
        Just("\u{8}".to_owned()),
        Just("\t".to_owned()),
        Just("\n".to_owned()),
        Just("\r\n".to_owned()),
        Just("\0".to_owned()),
        Just("\n@@ -1,3 +1,4 @@ fn f()\n".to_owned()),
        Just("\n@@ -0,0 +1 @@\n".to_owned()),
        Just("\n--- a/x.rs\n+++ b/x.rs\n".to_owned()),
        Just("\n-old\n+new\n context\n".to_owned()),
        Just("\n\\ No newline at end of file\n".to_owned()),
        Just("\ndiff --git a/x b/x\nBinary files differ\n".to_owned()),
        Just("\n# Title\n\n* item\n\n```rust\nfn x() {}\n```\n".to_owned()),
        Just("\n[link](http://x) **b** `c` <b>html</b>\n".to_owned()),
        Just("     1\u{2192}numbered\n".to_owned()),
        Just("🦀\u{200d}🔥 日本語 ".to_owned()),
        any::<char>().prop_map(String::from),
    ]
}

fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(fragment(), 0..24).prop_map(|v| v.concat())
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec(
                (
                    prop_oneof![
                        Just("file_path".to_owned()),
                        Just("content".to_owned()),
                        Just("old_string".to_owned()),
                        Just("new_string".to_owned()),
                        Just("structured_patch".to_owned()),
                        Just("lines".to_owned()),
                        Just("edits".to_owned()),
                        Just("filenames".to_owned()),
                        Just("todos".to_owned()),
                        Just("status".to_owned()),
                        Just("stdout".to_owned()),
                        Just("stderr".to_owned()),
                        Just("url".to_owned()),
                        Just("results".to_owned()),
                        Just("type".to_owned()),
                        Just("text".to_owned()),
                        Just("old_start".to_owned()),
                        Just("new_lines".to_owned()),
                        text(),
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn output_type() -> impl Strategy<Value = OutputType> {
    (0..=OutputType::ALL.len()).prop_map(|i| {
        OutputType::ALL
            .get(i)
            .cloned()
            .unwrap_or_else(|| OutputType::Unknown("x-prop".into()))
    })
}

fn assert_clean(lines: &[ratatui::text::Line<'_>]) -> Result<(), TestCaseError> {
    for l in lines {
        for s in &l.spans {
            for c in s.content.chars() {
                prop_assert!(
                    !c.is_control() && !is_invisible_format(c),
                    "U+{:04X} in span {:?}",
                    c as u32,
                    s.content
                );
            }
        }
    }
    let ansi = sgr::lines_to_ansi(lines);
    let b = ansi.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == 0x1b {
            prop_assert_eq!(b.get(i + 1), Some(&b'['), "non-CSI escape in {:?}", ansi);
            let mut j = i + 2;
            while b
                .get(j)
                .is_some_and(|c| c.is_ascii_digit() || *c == b';' || *c == b':')
            {
                j += 1;
            }
            prop_assert_eq!(b.get(j), Some(&b'm'), "non-SGR sequence in {:?}", ansi);
            i = j + 1;
        } else {
            i += 1;
        }
    }
    Ok(())
}

fn render_all(ot: &OutputType, output: &Value, flags: u8, width: u16) -> Result<(), TestCaseError> {
    let theme = if flags & 1 == 0 {
        Theme::dark()
    } else {
        Theme::mono()
    };
    let mut cx = RenderCtx::new(width, &theme);
    cx.highlight = flags & 2 != 0;
    cx.side_by_side = flags & 4 != 0;
    cx.flat_list = flags & 8 != 0;
    cx.expand_depth = usize::from(flags >> 4);
    cx.limits.max_lines = 500;
    let input = json!({"file_path": "src/a.rs", "old_string": "a\nb", "new_string": "a\nc"});
    for tool in ["Edit", "Read", "Bash", "mcp__x__y"] {
        assert_clean(&render_output(ot, output, tool, &input, &cx).lines)?;
        assert_clean(&render_input(tool, output, &cx).lines)?;
    }
    Ok(())
}

/// `PROPTEST_CASES` when set (long runs), else `default` (CI).
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(cases(64)) })]

    #[test]
    fn any_string_output_renders_clean(ot in output_type(), s in text(), flags in any::<u8>(), width in prop_oneof![Just(1u16), Just(20), Just(80), Just(200)]) {
        render_all(&ot, &Value::String(s), flags, width)?;
    }

    #[test]
    fn any_json_output_renders_clean(ot in output_type(), v in json_value(), flags in any::<u8>(), width in prop_oneof![Just(1u16), Just(20), Just(80), Just(200)]) {
        render_all(&ot, &v, flags, width)?;
    }
}
