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
