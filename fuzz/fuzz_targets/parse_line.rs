//! Fuzz target: one NDJSON line → the lenient parse layer (`protocol::parse_line_with`, plain and
//! skipping outputs). Properties: a frame writes back (`convert`) to JSON that reads again to the
//! same frame with no field errors (the fields of the wrong type were dropped, SPEC 2); the line
//! read as a `Value` (`frame_from_value`, the layer's other entry) gives the same frame; skipping
//! outputs changes nothing but the output; an error's excerpt has no control character.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rawpv::protocol::{Body, OutputShape, ParseOptions, frame_from_value, parse_line, parse_line_with};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse_line(1, &text) {
        Ok(f) => {
            let json = f.to_json().to_string();
            let again = match parse_line(1, &json) {
                Ok(a) => a,
                Err(e) => panic!("convert output does not parse again: {e}"),
            };
            assert_eq!(again.frame_type, f.frame_type);
            assert_eq!(again.body, f.body);
            assert!(again.field_errors.is_empty(), "{:?}", again.field_errors);
            if !text.contains("$serde_json::private::RawValue")
                && let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
            {
                let by_value = frame_from_value(1, v).expect("a frame as a Value too");
                assert_eq!(by_value, f);
            }
            let skipped = parse_line_with(1, &text, &ParseOptions { skip_output: true })
                .expect("skipping reads what plain reads");
            let mut want = f.clone();
            if let Body::Result(r) = &mut want.body
                && let Some(out) = r.output.as_mut()
            {
                *out = OutputShape::of(out).stand_in();
                want.origin.output_skipped = true;
            }
            assert_eq!(skipped, want);
        }
        Err(e) => {
            assert!(!e.excerpt.chars().any(char::is_control));
            assert!(parse_line_with(1, &text, &ParseOptions { skip_output: true }).is_err());
        }
    }
});
