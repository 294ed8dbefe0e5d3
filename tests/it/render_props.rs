//! Property tests: arbitrary text (biased towards escapes, CRs and diff syntax) never panics any
//! renderer and never leaves a control character in a span.

use proptest::prelude::*;
use rawpv::protocol::OutputType;
use rawpv::render::{RenderCtx, render_output};
use rawpv::theme::Theme;
use serde_json::Value;

fn tricky() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("\x1b[".to_owned()),
        Just("\x1b]8;;http://x\x07".to_owned()),
        Just("\x1b_bk;t=1\x07".to_owned()),
        Just("\x1bP".to_owned()),
        Just("\x1b\\".to_owned()),
        Just("\r".to_owned()),
        Just("\n".to_owned()),
        Just("\x08".to_owned()),
        Just("\t".to_owned()),
        Just("\u{9b}".to_owned()),
        Just("\u{202e}".to_owned()),
        Just("@@ -1,2 +1,3 @@ f\n".to_owned()),
        Just("diff --git a/x b/y\n".to_owned()),
        Just("--- a\n+++ b\n".to_owned()),
        Just("-x\n+y\n \\ No newline at end of file\n".to_owned()),
        Just("# h\n- [x] `c` [l](u)\n```rs\n".to_owned()),
        "[ -~]{0,12}",
        "[0-9;:]{0,6}[mKGCDXPHJ]",
        any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn renderers_never_panic_or_leak_controls(s in tricky(), width in 1u16..200) {
        let theme = Theme::dark();
        let mut cx = RenderCtx::new(width, &theme);
        cx.highlight = false;
        cx.side_by_side = true;
        let v = Value::String(s);
        for ot in [OutputType::Text, OutputType::Diff, OutputType::WebContent, OutputType::FileContent, OutputType::Structured] {
            let r = render_output(&ot, &v, "", &Value::Null, &cx);
            for l in &r.lines {
                for sp in &l.spans {
                    prop_assert!(!sp.content.chars().any(char::is_control), "{ot}: {:?}", sp.content);
                }
            }
            let wrapped = rawpv::render::wrap::wrap_lines(&r.lines, width);
            prop_assert!(wrapped.len() >= r.lines.len());
        }
    }
}
