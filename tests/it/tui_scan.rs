//! Bounded scans (issue 6: search and filter answer within one frame at any session size): a
//! search or filter over a big session runs in steps, shows its progress, keeps the old rows
//! until done, takes rows that arrive meanwhile, and a search gives way to the next action; the
//! status bar's match count (`match 3/17`) is built the same way, never blocking a frame.
//!
//! `scan_budget = 0` makes every step exactly 16 items, so the tests are deterministic.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::time::Duration;

use crossterm::event::KeyCode;
use pretty_assertions::assert_eq;
use rawpv::action::Action;
use rawpv::app::{App, Msg};
use rawpv::import::{self, Decoded};
use rawpv::query::Filter;
use rawpv::source::SourceMsg;

use crate::support::headless;

/// `turns` turns of a prompt and `calls` calls each: a Read, then Bash `echo T-C`; turn `t`'s
/// prompt is item `t * (calls + 1)`, its call `c` the item after it plus `c`.
fn session(turns: usize, calls: usize) -> Vec<Decoded> {
    let mut text = String::new();
    for t in 0..turns {
        let _ = writeln!(
            text,
            r#"{{"type":"control.prompt.request","payload":{{"text":"turn {t}"}}}}"#
        );
        for c in 0..calls {
            let (tool, input) = if c == 0 {
                ("Read", format!(r#"{{"file_path":"/src/f{t}.rs"}}"#))
            } else {
                ("Bash", format!(r#"{{"command":"echo {t}-{c}"}}"#))
            };
            let _ = writeln!(
                text,
                r#"{{"type":"tool.invoke.request","payload":{{"invocation_id":"c{t}-{c}","tool_name":"{tool}","input":{input}}}}}"#
            );
            let _ = writeln!(
                text,
                r#"{{"type":"tool.invoke.result","payload":{{"invocation_id":"c{t}-{c}","status":"success","output":"out {t}-{c}","output_type":"text"}}}}"#
            );
        }
    }
    import::load_bytes(text.as_bytes()).items
}

fn big() -> App {
    // 100 turns × 20 calls: 2,100 rows.
    let mut app = App::headless(session(100, 20), "big");
    app.set_scan_budget(Duration::ZERO);
    app
}

fn selected(app: &App) -> Option<usize> {
    app.view().selected_item(app.session())
}

#[test]
fn a_search_runs_in_steps_with_progress_then_selects_the_match() {
    let mut app = big();
    assert_eq!(app.session().items.len(), 2_100);
    app.update(Msg::Action(Action::StartSearch));
    app.type_text("echo 99-7");
    app.press(KeyCode::Enter);
    assert!(app.scanning());
    assert_eq!(
        selected(&app),
        Some(0),
        "nothing moves before the match is found"
    );
    assert_eq!(
        app.view().progress.as_deref(),
        Some("searching /echo 99-7… 0%")
    );
    let mut steps = 1;
    while app.searching() {
        app.update(Msg::Work);
        steps += 1;
        if steps == 66 {
            assert_eq!(
                app.view().progress.as_deref(),
                Some("searching /echo 99-7… 50%")
            );
        }
    }
    assert_eq!(steps, 131, "the match is 2,087 rows on, 16 a step");
    assert_eq!(selected(&app), Some(99 * 21 + 8));
    assert_eq!(app.view().progress, None);
    // `N` back to the same match from the next row: wraps, steps again.
    app.select(99 * 21 + 9);
    app.update(Msg::Action(Action::SearchPrev));
    app.finish_scans();
    assert_eq!(selected(&app), Some(99 * 21 + 8));
    // No match anywhere: a message once the whole session was seen.
    app.set_search("no-such-text");
    app.update(Msg::Action(Action::SearchNext));
    app.finish_scans();
    assert_eq!(
        app.view().message.as_deref(),
        Some("no match for /no-such-text")
    );
}

#[test]
fn any_action_stops_a_pending_search() {
    let mut app = big();
    app.set_search("echo 99-7");
    app.update(Msg::Action(Action::SearchNext));
    assert!(app.scanning());
    app.update(Msg::Action(Action::MoveDown));
    assert!(!app.searching());
    assert_eq!(app.view().progress, None);
    assert_eq!(selected(&app), Some(1));
}

#[test]
fn a_filter_keeps_the_old_rows_until_done_and_takes_rows_that_arrive() {
    let mut items = session(100, 20);
    let late = items.split_off(items.len() - 2 * 20 * 2 - 2);
    let mut app = App::new("live", false);
    app.set_scan_budget(Duration::ZERO);
    app.update(Msg::Source(SourceMsg::Batch(items)));
    let before = app.session().items.len();
    assert_eq!(before, 2_100 - 42);
    app.set_filter(Filter::parse("tool:read"));
    assert!(app.scanning());
    assert_eq!(app.view().rows, None, "old rows on screen meanwhile");
    assert_eq!(app.view().progress.as_deref(), Some("filtering… 0%"));
    app.update(Msg::Work);
    // Two more turns arrive in the middle of the scan.
    app.update(Msg::Source(SourceMsg::Batch(late)));
    app.finish_scans();
    let want: Vec<usize> = (0..100).map(|t| t * 21 + 1).collect();
    assert_eq!(
        app.view().rows,
        Some(want.clone()),
        "each Read once, late ones too"
    );
    assert_eq!(app.view().filtered, Some(want));
    assert_eq!(app.view().folds.prompts.len(), 100);
    assert_eq!(app.view().progress, None);
}

#[test]
fn error_and_prompt_jumps_cross_a_big_session_at_once() {
    let mut app = big();
    app.update(Msg::Action(Action::Bottom));
    app.update(Msg::Action(Action::PrevPrompt));
    assert_eq!(selected(&app), Some(99 * 21));
    app.update(Msg::Action(Action::Top));
    app.update(Msg::Action(Action::NextError));
    assert_eq!(app.view().message.as_deref(), Some("no more errors"));
    assert!(!app.scanning());
}

fn status(app: &App) -> String {
    app.match_status()
        .map(|m| m.to_string())
        .unwrap_or_default()
}

#[test]
fn the_match_count_grows_in_steps_and_ranks_the_selected_match() {
    let mut app = big();
    // "echo 5-" is in turn 5's 19 Bash calls only (items 107..=125).
    app.set_search("echo 5-");
    assert!(
        app.scanning(),
        "2,100 rows are not counted in one 16-item step"
    );
    assert_eq!(status(&app), "0+ matches (scanning 0%)");
    app.update(Msg::Action(Action::SearchNext));
    // The search goes first: it stops at the first match, then the count goes on.
    while app.searching() {
        app.update(Msg::Work);
    }
    assert_eq!(selected(&app), Some(5 * 21 + 2));
    assert_eq!(
        status(&app),
        "0+ matches (scanning 0%)",
        "the selected match is not counted yet: its rank is unknown"
    );
    for _ in 0..7 {
        app.update(Msg::Work);
    }
    // 8 steps of 16 items: 128 items seen, all of turn 5's calls.
    assert_eq!(status(&app), "match 1/19+ (scanning 6%)");
    app.finish_scans();
    assert_eq!(status(&app), "match 1/19");
    app.update(Msg::Action(Action::SearchNext));
    assert_eq!(status(&app), "match 2/19");
    app.update(Msg::Action(Action::SearchPrev));
    app.update(Msg::Action(Action::SearchPrev));
    app.finish_scans();
    assert_eq!(status(&app), "match 19/19", "wraps backwards to the last");
    app.update(Msg::Action(Action::Top));
    assert_eq!(status(&app), "19 matches", "off a match: the count alone");
    // The count follows the filter: only Bash rows of turn 5 that are errors… none.
    app.set_filter(Filter::parse("tool:read"));
    app.finish_scans();
    assert_eq!(status(&app), "no match");
    app.set_filter(None);
    app.finish_scans();
    assert_eq!(status(&app), "19 matches");
    // Esc clears the search and its count.
    app.update(Msg::Action(Action::Cancel));
    assert_eq!(app.match_status(), None);
    assert!(!app.scanning());
}

#[test]
fn the_match_count_takes_rows_that_arrive_or_change() {
    let mut items = session(3, 3);
    // The last call's result arrives later: its output is what matches.
    let last = items.pop().unwrap();
    let mut app = App::new("live", true);
    app.update(Msg::Source(SourceMsg::Batch(items)));
    app.set_search("out 2-2");
    app.finish_scans();
    assert_eq!(status(&app), "no match");
    app.update(Msg::Source(SourceMsg::Batch(vec![last])));
    assert!(app.scanning(), "the changed row is checked again");
    assert_eq!(
        app.match_status().unwrap().scanning,
        None,
        "a live stream's new rows do not make the status bar say scanning"
    );
    app.finish_scans();
    assert_eq!(status(&app), "match 1/1", "live: the new row is selected");
    // New rows are counted as they come.
    let more = session(4, 3).split_off(21);
    app.update(Msg::Source(SourceMsg::Batch(more)));
    app.set_search("echo");
    app.finish_scans();
    assert_eq!(status(&app), "match 8/8", "turns 0-3, two Bash calls each");
}

#[test]
fn the_status_bar_shows_what_the_count_knows_so_far() {
    let mut app = big();
    app.set_search("echo 5-");
    app.update(Msg::Action(Action::SearchNext));
    for _ in 0..16 {
        app.update(Msg::Work);
    }
    let term = headless::draw(&mut app, 100, 12);
    let rows = headless::status_rows(&term);
    insta::assert_snapshot!(
        "status_while_counting",
        rows.lines().next().unwrap_or_default()
    );
}

#[test]
fn the_match_count_follows_a_compaction() {
    // Live with a 100-row cap: the oldest rows go in chunks; the count drops them too and keeps
    // counting the rows that arrive.
    let all = session(20, 9); // 200 rows
    let mut app = App::new("live", true);
    app.session_mut().max_items = Some(100);
    app.set_scan_budget(Duration::ZERO);
    let mut frames = all.into_iter();
    app.update(Msg::Source(SourceMsg::Batch(
        frames.by_ref().take(150).collect(),
    )));
    app.set_search("echo");
    app.finish_scans();
    let truth = |app: &App| {
        let re = rawpv::query::compile_search("echo").unwrap().unwrap();
        (0..app.view().filtered_count(app.session()))
            .filter_map(|k| app.view().filtered_at(k))
            .filter(|&i| rawpv::session::query::item_matches(app.session(), i, &re))
            .count()
    };
    let before = app.match_status().unwrap().total;
    assert_eq!(before, truth(&app));
    for chunk in frames.collect::<Vec<_>>().chunks(40) {
        app.update(Msg::Source(SourceMsg::Batch(chunk.to_vec())));
        // Renumbered, not counted again from the start.
        assert_eq!(app.match_status().unwrap().scanning, None);
        app.update(Msg::Work);
    }
    app.finish_scans();
    assert!(app.session().dropped_items > 0, "the cap dropped rows");
    let m = app.match_status().unwrap();
    assert_eq!(m.total, truth(&app));
    assert_eq!(m.scanning, None);
}

#[test]
fn once_counted_next_and_previous_jump_at_once() {
    let mut app = big();
    app.set_search("echo 5-");
    app.finish_scans();
    app.select(0);
    // No scan step: the count's hits answer `n` and `N` in the key press itself.
    app.update(Msg::Action(Action::SearchNext));
    assert!(!app.scanning());
    assert_eq!(selected(&app), Some(5 * 21 + 2));
    app.update(Msg::Action(Action::SearchPrev));
    assert!(!app.scanning());
    assert_eq!(selected(&app), Some(5 * 21 + 20), "wraps to the last match");
    app.update(Msg::Action(Action::SearchNext));
    assert_eq!(selected(&app), Some(5 * 21 + 2), "wraps to the first");
    app.select(1000);
    app.update(Msg::Action(Action::SearchPrev));
    assert_eq!(selected(&app), Some(5 * 21 + 20));
    // Under a filter (call rows only, no prompts) the count follows the filtered rows.
    app.set_filter(Filter::parse("status:ok"));
    app.finish_scans();
    app.select(0);
    app.update(Msg::Action(Action::SearchNext));
    assert_eq!(
        app.match_status().map(|m| m.to_string()).as_deref(),
        Some("match 1/19")
    );
    // No match: said at once, without a scan over the 2,100 rows.
    app.set_search("no-such-text");
    app.finish_scans();
    app.update(Msg::Action(Action::SearchNext));
    assert!(!app.scanning());
    assert_eq!(
        app.view().message.as_deref(),
        Some("no match for /no-such-text")
    );
}
