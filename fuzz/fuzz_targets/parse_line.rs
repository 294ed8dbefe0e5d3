//! Fuzz target: one NDJSON line → `protocol::parse_line`; a frame must write back (`convert`) to
//! JSON that parses again to the same frame type.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rawpv::protocol::parse_line;

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
        }
        Err(e) => {
            assert!(!e.excerpt.chars().any(char::is_control));
        }
    }
});
