//! Shared checks for the fuzz targets: rendered text must not carry control or invisible
//! characters (issue 9), whatever the input.

use ratatui::text::Line;

/// Panics when a span holds a control character or an invisible/reordering format character.
pub fn assert_lines_clean(lines: &[Line<'_>]) {
    for line in lines {
        for span in &line.spans {
            for c in span.content.chars() {
                assert!(
                    !c.is_control() && !rawpv::finding::is_invisible_format(c),
                    "U+{:04X} reached a rendered line: {:?}",
                    c as u32,
                    span.content
                );
            }
        }
    }
}

/// Panics when `ansi` holds an escape sequence other than SGR (`ESC [ params m`) or a control
/// character other than newline.
pub fn assert_only_sgr(ansi: &str) {
    let b = ansi.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == 0x1b {
            assert_eq!(b.get(i + 1), Some(&b'['), "non-CSI escape in {ansi:?}");
            let mut j = i + 2;
            while b.get(j).is_some_and(|c| c.is_ascii_digit() || *c == b';' || *c == b':') {
                j += 1;
            }
            assert_eq!(b.get(j), Some(&b'm'), "non-SGR sequence in {ansi:?}");
            i = j + 1;
            continue;
        }
        i += 1;
    }
    for c in ansi.chars() {
        assert!(
            c == '\n' || c == '\u{1b}' || !(c.is_control() || rawpv::finding::is_invisible_format(c)),
            "U+{:04X} in SGR output",
            c as u32
        );
    }
}
