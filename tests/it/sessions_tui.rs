//! The viewer follows the selected row's session (issue 18, SPEC §6): the status bar's counts,
//! the catalog panel and the problems panel are that session's, on the two-session fixture
//! `check_sessions_own_catalog.ndjson` (session A publishes Bash and calls Read; session B
//! publishes Read and calls Bash, never answered).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::headless::{act, draw, screen_text, status_rows};
use rawpv::action::Action;
use rawpv::app::App;
use rawpv::import;

fn app() -> App {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/check_sessions_own_catalog.ndjson"
    );
    App::headless(
        import::load_bytes(&std::fs::read(path).unwrap()).items,
        "sessions.ndjson",
    )
}

#[test]
fn status_bar_and_catalog_follow_the_selected_rows_session() {
    let mut app = app();
    act(
        &mut app,
        &[Action::ShowCatalog, Action::FocusNext, Action::Top],
    );
    let term = draw(&mut app, 120, 24);
    let screen = screen_text(&term);
    // A's catalog (Bash), with A's usage: its one call was a Read.
    assert!(screen.contains("▶Bash ● available"), "{screen}");
    assert!(screen.contains("  0 calls · 0 errors"), "{screen}");
    assert!(status_rows(&term).contains("session 6f1c2b1e… 1/2 · 1 call · 1 finding"));
    insta::assert_snapshot!("sessions_catalog_of_a", term.backend());

    act(&mut app, &[Action::Bottom]);
    let term = draw(&mut app, 120, 24);
    let screen = screen_text(&term);
    assert!(screen.contains("▶Read ● available"), "{screen}");
    assert!(
        screen.contains("current catalog of session 0b7a3c2d… · publish 1"),
        "{screen}"
    );
    assert!(
        status_rows(&term).contains("session 0b7a3c2d… 2/2 · 1 call · 1 no result · 2 findings")
    );
    insta::assert_snapshot!("sessions_catalog_of_b", term.backend());
}

#[test]
fn problems_panel_lists_the_selected_rows_session() {
    let mut app = app();
    act(
        &mut app,
        &[Action::ShowProblems, Action::FocusNext, Action::Bottom],
    );
    let term = draw(&mut app, 120, 24);
    let screen = screen_text(&term);
    assert!(
        screen.contains("1 error · 1 warning · 0 infos in session 0b7a3c2d…"),
        "{screen}"
    );
    assert!(!screen.contains("request for Read"), "{screen}");
    insta::assert_snapshot!("sessions_problems_of_b", term.backend());
    act(&mut app, &[Action::Top]);
    let term = draw(&mut app, 120, 24);
    let screen = screen_text(&term);
    assert!(screen.contains("request for Read"), "{screen}");
    assert!(!screen.contains("request for Bash"), "{screen}");
    insta::assert_snapshot!("sessions_problems_of_a", term.backend());
}

/// Attack 6 #15: on a narrow screen the counts that do not fit go one by one from the end, so each
/// session's row still shows its calls (they used to vanish whole on one session's rows).
#[test]
fn on_a_narrow_screen_each_sessions_calls_stay() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/check_sessions_own_catalog.ndjson"
    );
    let mut app = App::headless(
        import::load_bytes(&std::fs::read(path).unwrap()).items,
        "/home/user/projects/some-long-project-name/sessions/wrong_session_result.ndjson",
    );
    act(&mut app, &[Action::Top]);
    let a = status_rows(&draw(&mut app, 66, 24));
    act(&mut app, &[Action::Bottom]);
    let b = status_rows(&draw(&mut app, 66, 24));
    let first = |s: &str| s.lines().next().unwrap().trim_end().to_owned();
    assert!(first(&a).contains("session 6f1c2b1e… 1/2 · 1 call"), "{a}");
    // B's counts (1 call · 1 no result · 2 findings) do not all fit: the last ones go.
    assert!(first(&b).contains("session 0b7a3c2d… 2/2 · 1 call"), "{b}");
    assert!(!first(&b).contains("2 findings"), "{b}");
}

/// The sessions list on a generated master stream of 50 interleaved sessions (issue 24): it
/// shows by itself, one row per session under "all", newest activity first, each row's calls
/// and errors that session's; at 80x24 and 200x60.
#[test]
fn the_sessions_list_of_fifty_interleaved_sessions() {
    let mut master = Vec::new();
    crate::generator::generate_sessions(&mut master, 3_000, 5, 50).unwrap();
    let mut app = App::headless(import::load_bytes(&master).items, "master.ndjson");
    let s = app.session();
    let calls: u64 = s.sessions.iter().map(|(_, e)| e.counts.invocations).sum();
    assert_eq!(calls, s.invocations.len() as u64);
    for (w, h) in [(80, 24), (200, 60)] {
        let term = draw(&mut app, w, h);
        let screen = screen_text(&term);
        assert!(screen.contains("Sessions L"), "{screen}");
        assert!(screen.contains("│all      ended"), "{screen}");
        insta::assert_snapshot!(format!("sessions_list_fifty_{w}x{h}"), term.backend());
    }
    // Every session has its row, once, and the rows go newest first.
    let rows = app.sessions_rows();
    assert_eq!(rows.len(), 51);
    let mut ids: Vec<u32> = rows.iter().filter_map(|r| r.sid).collect();
    assert!(rows[1..].windows(2).all(|w| w[0].last >= w[1].last));
    ids.sort_unstable();
    assert_eq!(ids, (0..50).collect::<Vec<u32>>());
    for r in &rows[1..] {
        let e = app.session().sessions.get(r.sid.unwrap());
        assert_eq!((r.calls, r.errors), (e.counts.invocations, e.counts.failed));
    }
}
