//! Fuzz target: ANSI handling. Arbitrary terminal output → `render::ansi::ansi_to_lines` → wrap →
//! `render::sgr::lines_to_ansi` (what `print --color always` writes). Checks: no panic, clean
//! spans, and the re-encoded text holds only SGR sequences.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rawpv::render::ansi::ansi_to_lines;
use rawpv::render::{sgr, wrap};
use rawpv::theme::Theme;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let theme = Theme::dark();
    let (lines, _more) = ansi_to_lines(&text, &theme, 500);
    common::assert_lines_clean(&lines);
    let wrapped = wrap::wrap_lines(&lines, 40);
    common::assert_lines_clean(&wrapped);
    common::assert_only_sgr(&sgr::lines_to_ansi(&wrapped));
});
