//! Config wiring: `limits.*` reach the detail pane and `print --detail`; `syntax_theme` selects
//! the syntect theme (an unknown name is a warning naming it, never an error).
//!
//! Its own test binary: the syntect theme is process-wide, so switching it here cannot disturb
//! other tests' highlighted output.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use ratatui::layout::Rect;
use ratatui::style::Color;
use rawpv::app::App;
use rawpv::config::load_str;
use rawpv::import;
use rawpv::render::{highlight, lines_to_string};
use rawpv::theme::Theme;

const SESSION: &str = include_str!("../fixtures/tui_session.jsonl");

/// Serialises the tests that set the process-wide syntect theme (`App::configure` does too).
static THEME_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn rawpv() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin!("rawpv"))
}

#[test]
fn limits_cut_the_detail_pane() {
    let _guard = THEME_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let loaded = load_str(
        "[limits]\nmax_lines_per_block = 1\n",
        std::path::Path::new("/c.toml"),
    )
    .unwrap();
    let mut app = App::headless(import::load_bytes(SESSION.as_bytes()).items, "s");
    app.configure(&loaded.config);
    app.select(4); // c1: three lines of output
    app.prepare(Rect::new(0, 0, 120, 40));
    app.run_jobs_inline();
    let text = lines_to_string(app.detail_lines());
    assert!(text.contains("running 3 tests"), "{text}");
    assert!(text.contains("… 2 more lines"), "{text}");
    assert!(!text.contains("test empty ... FAILED"), "{text}");
}

#[test]
fn limits_cut_print_detail_and_a_bad_theme_only_warns() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.toml");
    std::fs::write(
        &cfg,
        "syntax_theme = \"no-such-theme\"\n[limits]\nmax_lines_per_block = 1\n",
    )
    .unwrap();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/tui_session.jsonl"
    );
    let out = rawpv()
        .args(["print", "--detail", "--color", "never", "--config"])
        .arg(&cfg)
        .arg(fixture)
        .env_remove("RAWPV_CONFIG")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("… 2 more lines"), "{stdout}");
    assert!(!stdout.contains("test empty ... FAILED"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "unknown syntax_theme `no-such-theme` (using base16-ocean.dark); available: "
        ) && stderr.contains("InspiredGitHub"),
        "{stderr}"
    );
    // Without the config: everything.
    let out = rawpv()
        .args(["print", "--detail", "--color", "never", fixture])
        .env("RAWPV_CONFIG", dir.path().join("missing.toml"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "an explicit missing config is an error"
    );
}

#[test]
fn syntax_theme_selects_the_highlighter_theme() {
    let _guard = THEME_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let t = Theme::dark();
    let rust = highlight::find_syntax(None, Some("a.rs"), "").unwrap();
    let colours = || -> Vec<Color> {
        highlight::highlight_block("fn main() { let x = \"s\"; }\n", rust, &t)
            .unwrap()
            .concat()
            .iter()
            .filter_map(|s| s.style.fg)
            .collect()
    };
    highlight::set_theme(highlight::DEFAULT_THEME).unwrap();
    let default = colours();
    let loaded = load_str(
        "syntax_theme = \"InspiredGitHub\"\n",
        std::path::Path::new("/c.toml"),
    )
    .unwrap();
    assert!(loaded.warnings.is_empty());
    loaded.config.apply_render_settings();
    assert_eq!(highlight::current_theme(), "InspiredGitHub");
    let github = colours();
    assert_ne!(default, github, "another theme, other colours");
    // An unknown name keeps the current theme and says what exists.
    let e = highlight::set_theme("nope").unwrap_err();
    assert!(e.starts_with("unknown syntax_theme `nope`"), "{e}");
    assert!(e.contains("base16-ocean.dark"), "{e}");
    assert_eq!(highlight::current_theme(), "InspiredGitHub");
    assert_eq!(colours(), github);
}

/// The background of the cell showing `ch` on the drawn row that contains `row_text`.
fn cell_bg(
    term: &ratatui::Terminal<ratatui::backend::TestBackend>,
    row_text: &str,
    ch: &str,
) -> Option<Color> {
    let buf = term.backend().buffer();
    for y in 0..buf.area.height {
        let row: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        if let Some(at) = row.find(row_text) {
            let start = row[..at].chars().count() as u16;
            let off = row_text.find(ch)? as u16;
            return Some(buf[(start + off, y)].bg);
        }
    }
    None
}

/// Issue 22.8: the `[diff]` styles of the config are what the detail draws a changed line and
/// a changed word with (the defaults otherwise).
#[test]
fn diff_styles_of_the_config_are_drawn() {
    let _guard = THEME_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let diff = "--- a/x.rs\n+++ b/x.rs\n@@ -1,3 +1,3 @@\n fn main() {\n-    let n = 1;\n+    let n = 2;\n }\n";
    let draw_with = |toml: &str| {
        let loaded = load_str(toml, std::path::Path::new("/c.toml")).unwrap();
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        let mut app = App::headless(import::load_bytes(diff.as_bytes()).items, "x.diff");
        app.configure(&loaded.config);
        let row = (0..app.session().items.len())
            .find(|&i| matches!(app.session().items[i], rawpv::session::Item::Invocation(_)))
            .unwrap();
        app.select(row);
        crate::support::headless::draw(&mut app, 120, 24)
    };
    let dark = Theme::dark();
    let term = draw_with("");
    assert_eq!(
        cell_bg(&term, "+    let n = 2;", "2"),
        dark.diff_add_emph.bg
    );
    assert_eq!(
        cell_bg(&term, "+    let n = 2;", "l"),
        dark.diff_add_line.bg
    );
    assert_eq!(
        cell_bg(&term, "-    let n = 1;", "1"),
        dark.diff_del_emph.bg
    );
    let term = draw_with(
        "theme = \"dark\"\n[diff]\nplus = \"normal #002800\"\nplus-emph = \"normal #005f00\"\nminus-emph = \"normal 88\"\n",
    );
    assert_eq!(
        cell_bg(&term, "+    let n = 2;", "2"),
        Some(Color::Rgb(0, 0x5f, 0))
    );
    assert_eq!(
        cell_bg(&term, "+    let n = 2;", "l"),
        Some(Color::Rgb(0, 0x28, 0))
    );
    assert_eq!(
        cell_bg(&term, "-    let n = 1;", "1"),
        Some(Color::Indexed(88))
    );
    // The removed line's own tint was not named: the theme's stays.
    assert_eq!(
        cell_bg(&term, "-    let n = 1;", "l"),
        dark.diff_del_line.bg
    );
    highlight::set_theme(highlight::DEFAULT_THEME).unwrap();
}
