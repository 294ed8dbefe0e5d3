//! Terminal output (`corpus/terminal/*`) through the `text` renderer: snapshots at 80 and 140
//! columns, and the invariant that no control character and no non-SGR escape survives.
//! Skips (with a message) when the shared corpus is absent.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rawpv::protocol::OutputType;
use rawpv::render::{RenderCtx, lines_to_string, render_output, sgr, wrap};
use rawpv::theme::Theme;
use serde_json::Value;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/terminal");

fn files() -> Option<Vec<PathBuf>> {
    let dir = Path::new(CORPUS);
    if crate::support::corpus::skipped(dir) {
        return None;
    }
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    Some(v)
}

fn render(path: &Path, width: u16, theme: &Theme) -> Vec<ratatui::text::Line<'static>> {
    let bytes = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let cx = RenderCtx::new(width, theme);
    let r = render_output(
        &OutputType::Text,
        &Value::String(text),
        "Bash",
        &Value::Null,
        &cx,
    );
    wrap::wrap_lines(&r.lines, width)
}

#[test]
fn terminal_snapshots() {
    let Some(files) = files() else { return };
    let theme = Theme::dark();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        for width in [80u16, 140] {
            let lines = render(f, width, &theme);
            // The 48 KB CI log: its first 120 rows pin the behaviour well enough.
            let shown = &lines[..lines.len().min(120)];
            let mut s = lines_to_string(shown);
            if shown.len() < lines.len() {
                let _ = writeln!(s, "[{} more rows]", lines.len() - shown.len());
            }
            insta::assert_snapshot!(format!("{name}@{width}"), s);
        }
    }
}

/// Control characters that must never reach a span.
fn is_forbidden(c: char) -> bool {
    (c < ' ') || c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c)
}

#[test]
fn no_control_character_survives() {
    let Some(files) = files() else { return };
    for theme in [Theme::dark(), Theme::mono()] {
        for f in &files {
            for width in [80u16, 140] {
                let lines = render(f, width, &theme);
                for (i, l) in lines.iter().enumerate() {
                    for sp in &l.spans {
                        assert!(
                            !sp.content.chars().any(is_forbidden),
                            "{}: row {i}: control char in {:?}",
                            f.display(),
                            sp.content
                        );
                    }
                }
                // Written out as ANSI, the only escapes are our own SGR: `ESC [ digits;… m`.
                let ansi = sgr::lines_to_ansi(&lines);
                let mut rest = ansi.as_str();
                while let Some(at) = rest.find('\x1b') {
                    let seq = &rest[at + 1..];
                    let end = seq.find('m').expect("unterminated escape");
                    let params = &seq[..end];
                    assert!(
                        params.starts_with('[')
                            && params[1..].chars().all(|c| c.is_ascii_digit() || c == ';'),
                        "{}: non-SGR escape {:?}",
                        f.display(),
                        &seq[..end.min(20)]
                    );
                    rest = &seq[end + 1..];
                }
                assert!(
                    !ansi
                        .chars()
                        .any(|c| is_forbidden(c) && c != '\x1b' && c != '\n')
                );
            }
        }
    }
}

#[test]
fn curl_progress_shows_final_redraw() {
    let Some(files) = files() else { return };
    let Some(curl) = files.iter().find(|f| f.ends_with("bk-curl-progress.raw")) else {
        return;
    };
    let s = lines_to_string(&render(curl, 200, &Theme::dark()));
    // Each progress row shows only its last state: no half-overwritten percentages.
    assert!(!s.contains('\r'));
    assert!(s.lines().any(|l| l.trim_start().starts_with("100")), "{s}");
}
