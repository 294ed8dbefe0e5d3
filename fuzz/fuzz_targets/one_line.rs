//! Fuzz target: the one-line and copy sanitizers (issue 14.1, 14.10). Arbitrary text →
//! `render::ansi::visible_plain` (feed rows, `print` rows, browser entries), `strip_sgr`
//! and `clipboard::clean` (what `y`/`Y`/`r` copy). Checks: no panic; a one-line row holds no
//! control or invisible character and never hides a character by obeying cursor motion (every
//! printable character left once SGR styling is dropped is still there, in order);
//! a copy holds no control character but `\n` and `\t` and no invisible one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rawpv::clipboard::clean;
use rawpv::finding::is_invisible_format;
use rawpv::render::ansi::{strip_sgr, visible_plain};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let row = visible_plain(&text);
    assert!(
        !row.chars().any(|c| c.is_control() || is_invisible_format(c)),
        "{row:?}"
    );
    let mut shown = row.chars();
    for c in strip_sgr(&text).chars() {
        // Made visible as pictures or U+FFFD (the renderer's set, ZWJ included), not kept.
        if c.is_control() || rawpv::render::ansi::is_invisible_format(c) {
            continue;
        }
        assert!(shown.any(|s| s == c), "{c:?} hidden from {row:?}");
    }
    let (copy, removed) = clean(&text);
    assert!(
        !copy
            .chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t') || is_invisible_format(c)),
        "{copy:?}"
    );
    assert_eq!(copy.chars().count() + removed, text.chars().count());
});
