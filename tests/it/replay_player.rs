//! Replay mode end to end, headless: the demo session in a replaying [`App`], driven by actions
//! and replay ticks on paused tokio time; the session must always equal the fold of the applied
//! prefix, and the timeline bar is snapshotted on `TestBackend`.

use std::time::Duration;

use insta::assert_snapshot;
use rawpv::action::Action;
use rawpv::app::{App, Msg};
use rawpv::import::Decoded;
use rawpv::session::Session;
use tokio::time::Instant;

use crate::support::headless;
use headless::{act, demo_items as items, draw};

fn fold(items: &[Decoded], n: usize) -> Session {
    let mut s = Session::new();
    for d in &items[..n] {
        s.apply(d.clone());
    }
    if n == items.len() {
        s.finish();
    }
    s
}

fn cursor(app: &App) -> usize {
    app.replay().map_or(0, rawpv::replay::Replay::cursor)
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn actions_keep_the_session_equal_to_the_applied_prefix() {
    let all = items();
    let mut app = App::replaying(all.clone(), "demo", 1.0, 2.0);
    assert_eq!(cursor(&app), 0);
    assert!(app.session().items.is_empty(), "opens with nothing applied");
    act(&mut app, &[Action::NextTurn]);
    let c = cursor(&app);
    assert!(c > 0);
    assert_eq!(*app.session(), fold(&all, c));
    act(&mut app, &[Action::StepForward, Action::StepForward]);
    assert_eq!(cursor(&app), c + 2);
    assert_eq!(*app.session(), fold(&all, c + 2));
    act(&mut app, &[Action::StepBack]);
    assert_eq!(*app.session(), fold(&all, c + 1), "step back re-folds");
    act(&mut app, &[Action::Seek(50)]);
    let half = cursor(&app);
    assert!(half > c + 1 && half < all.len());
    assert_eq!(*app.session(), fold(&all, half));
    act(&mut app, &[Action::PrevTurn]);
    assert!(cursor(&app) < half);
    assert_eq!(*app.session(), fold(&all, cursor(&app)));
    app.update(Msg::Action(Action::Seek(0)));
    assert!(app.session().items.is_empty());
    // Play to the end on paused time: the end finishes the session and stops the timer.
    act(
        &mut app,
        &[Action::SpeedUp, Action::SpeedUp, Action::SpeedUp],
    );
    act(&mut app, &[Action::TogglePlay]);
    let mut guard = 0;
    while let Some(at) = app.replay_deadline() {
        tokio::time::sleep_until(at).await;
        app.update(Msg::ReplayTick(Instant::now()));
        guard += 1;
        assert!(guard < 100_000, "replay must end");
    }
    assert_eq!(cursor(&app), all.len());
    assert!(app.session().ended);
    assert_eq!(*app.session(), fold(&all, all.len()));
    assert_eq!(*app.session(), Session::from_decoded(all.clone()));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn playing_applies_frames_as_they_fall_due() {
    let all = items();
    let mut app = App::replaying(all.clone(), "demo", 1.0, 2.0);
    act(&mut app, &[Action::TogglePlay]);
    app.update(Msg::ReplayTick(Instant::now()));
    let first = cursor(&app);
    assert!(first >= 1, "the first frame is due at once");
    tokio::time::advance(Duration::from_secs(3)).await;
    app.update(Msg::ReplayTick(Instant::now()));
    assert!(
        cursor(&app) > first,
        "three seconds in, more frames are shown"
    );
    act(&mut app, &[Action::TogglePlay]);
    assert_eq!(app.replay_deadline(), None, "paused: no timer");
    assert_eq!(*app.session(), fold(&all, cursor(&app)));
}

#[test]
fn replay_keys_without_a_replay_say_how() {
    let mut app = App::headless(items(), "demo");
    act(&mut app, &[Action::TogglePlay]);
    assert_eq!(
        app.view().message.as_deref(),
        Some("not a replay: `rawpv --replay FILE` plays a session")
    );
    assert!(app.replay_deadline().is_none());
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn timeline_bar_snapshot() {
    let mut app = App::replaying(items(), "demo", 1.0, 2.0);
    act(
        &mut app,
        &[
            Action::NextTurn,
            Action::NextTurn,
            Action::SpeedUp,
            Action::StepForward,
        ],
    );
    let term = draw(&mut app, 100, 24);
    assert_snapshot!("replay_timeline_paused", term.backend());
}

/// `<`/`>` step a replay even where, out of a replay, they scroll sideways (a panel with the
/// keys and wrap off: issue 22 item 6).
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn step_keys_still_step_in_a_panel_with_wrap_off() {
    let all = items();
    let mut app = App::replaying(all.clone(), "demo", 1.0, 2.0);
    act(&mut app, &[Action::NextTurn]);
    let c = cursor(&app);
    draw(&mut app, 120, 35);
    act(&mut app, &[Action::ShowProblems, Action::ToggleWrap]);
    act(&mut app, &[Action::StepForward, Action::StepForward]);
    assert_eq!(cursor(&app), c + 2);
    act(&mut app, &[Action::StepBack]);
    assert_eq!(cursor(&app), c + 1);
    assert_eq!(app.view().problems.hscroll, 0);
    // ←/→ scroll the panel there.
    act(&mut app, &[Action::UnfoldTurn]);
    assert_eq!(cursor(&app), c + 1);
}
