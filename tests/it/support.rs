//! Helpers shared by the integration test modules.

pub mod cdp;
pub mod corpus;
pub mod exports;
pub mod headless;
pub mod pty;
pub mod transcripts;

/// A fake HOME holding one Claude Code project with `tests/fixtures/tui_session.jsonl` as its
/// session (`~/.claude/projects/-home-me-p/s.jsonl`), for the session browser.
#[allow(clippy::unwrap_used)]
pub fn fake_claude_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join(".claude/projects/-home-me-p");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/tui_session.jsonl"
        ),
        project.join("s.jsonl"),
    )
    .unwrap();
    home
}
