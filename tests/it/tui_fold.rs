//! Turn folding: a prompt and its rows fold into one row (issue 6). Headless: the app is driven
//! with actions and keys; whole row lists are asserted, and the folded screens are snapshots.
//!
//! Fixture rows (`tui_session.jsonl`): 0 catalog, 1 prompt, 2 thinking, 3 agent, 4 c1 (Bash
//! error), 5 c2 (Read), 6 t1 (Task), 7 s1 (Grep, subagent), 8 turn end, 9 compacted, 10 prompt,
//! 11 c3 (Bash, open), 12 c4 (Bash).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;

use crossterm::event::KeyCode;
use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use rawpv::action::Action;
use rawpv::app::{App, Msg};
use rawpv::import;
use rawpv::query::Filter;
use rawpv::source::SourceMsg;
use rawpv::view::TurnSummary;

const SESSION: &str = include_str!("../fixtures/tui_session.jsonl");

fn app() -> App {
    let mut app = App::headless(import::load_bytes(SESSION.as_bytes()).items, "s");
    app.prepare(Rect::new(0, 0, 100, 30));
    app
}

fn act(app: &mut App, actions: &[Action]) {
    for a in actions {
        app.update(Msg::Action(*a));
        app.finish_scans();
    }
    app.prepare(Rect::new(0, 0, 100, 30));
}

fn draw(app: &mut App) -> Terminal<TestBackend> {
    let mut term = Terminal::new(TestBackend::new(100, 30)).expect("test backend");
    app.prepare(Rect::new(0, 0, 100, 30));
    app.run_jobs_inline();
    term.draw(|f| app.draw(f)).expect("draw");
    term
}

fn selected(app: &App) -> Option<usize> {
    app.view().selected_item(app.session())
}

/// Turn 1: 8 rows after the prompt, 4 calls (one failed), 10:00:01 → 10:00:15.
fn turn1() -> TurnSummary {
    TurnSummary {
        items: 8,
        calls: 4,
        errors: 1,
        duration_ms: Some(14_000),
        // The fixture has no usage rows.
        tokens: rawpv::session::query::Tokens::default(),
    }
}

#[test]
fn a_turn_folds_into_its_prompt_row_and_unfolds() {
    let mut app = app();
    assert_eq!(app.view().folds.prompts, vec![1, 10]);
    app.select(5);
    act(&mut app, &[Action::ToggleFold]);
    assert_eq!(app.view().rows, Some(vec![0, 1, 10, 11, 12]));
    assert_eq!(app.view().folds.folded.get(&1), Some(&turn1()));
    assert_eq!(selected(&app), Some(1), "the selection moves to the prompt");
    assert_snapshot!("fold_first_turn", draw(&mut app).backend());

    act(&mut app, &[Action::ToggleFold]);
    assert_eq!(
        app.view().rows,
        None,
        "nothing folded: every item is a row again"
    );
    assert_eq!(selected(&app), Some(1));
    assert!(app.view().folds.folded.is_empty());
}

#[test]
fn keys_fold_one_turn_all_turns_and_unfold_all() {
    let mut app = app();
    app.select(11);
    app.press(KeyCode::Char('x'));
    assert_eq!(app.view().rows, Some((0..=10).collect()));
    assert_eq!(selected(&app), Some(10));
    // Left folds (already folded: stays), Right unfolds.
    app.press(KeyCode::Left);
    assert_eq!(app.view().rows, Some((0..=10).collect()));
    app.press(KeyCode::Right);
    assert_eq!(app.view().rows, None);
    app.press(KeyCode::Char('M'));
    assert_eq!(app.view().rows, Some(vec![0, 1, 10]));
    assert_eq!(
        selected(&app),
        Some(10),
        "the selected row's turn folded: its prompt"
    );
    assert_snapshot!("fold_all_turns", draw(&mut app).backend());
    app.press(KeyCode::Char('R'));
    assert_eq!(app.view().rows, None);
    assert_eq!(selected(&app), Some(10));
    // Rows before the first prompt belong to no turn.
    app.select(0);
    app.press(KeyCode::Char('x'));
    assert_eq!(app.view().rows, None);
    assert!(
        app.view()
            .message
            .as_deref()
            .is_some_and(|m| m.starts_with("no turn here"))
    );
}

#[test]
fn search_and_error_jumps_unfold_the_turn_they_land_in() {
    let mut app = app();
    act(&mut app, &[Action::FoldAll, Action::Top]);
    assert_eq!(app.view().rows, Some(vec![0, 1, 10]));
    // `/unwrap` Enter: the first match (the Read output, row 5) is inside folded turn 1.
    act(&mut app, &[Action::StartSearch]);
    app.type_text("unwrap");
    app.press(KeyCode::Enter);
    assert_eq!(selected(&app), Some(5));
    assert_eq!(
        app.view().rows,
        Some(vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    );
    assert!(
        app.view().folds.folded.contains_key(&10),
        "turn 2 stays folded"
    );
    assert_snapshot!("search_unfolds_turn", draw(&mut app).backend());

    // `e` from the top with everything folded lands on c1 and unfolds its turn.
    let mut app = self::app();
    act(&mut app, &[Action::FoldAll, Action::Top, Action::NextError]);
    assert_eq!(selected(&app), Some(4));
    assert_eq!(app.view().rows, Some((0..=10).collect()));
    // `E` back: no error before it; `p` goes to the folded prompt without unfolding it.
    act(&mut app, &[Action::PrevError]);
    assert_eq!(selected(&app), Some(4));
    act(&mut app, &[Action::NextPrompt]);
    assert_eq!(selected(&app), Some(10));
    assert!(app.view().folds.folded.contains_key(&10));
}

#[test]
fn folds_compose_with_filters() {
    let mut app = app();
    app.set_filter(Filter::parse("tool:bash"));
    assert_eq!(app.view().rows, Some(vec![4, 11, 12]));
    // Fold the turn of the selected Bash call: its prompt row shows although the filter hides
    // prompts, so the fold stays visible and can be undone.
    app.select(0);
    act(&mut app, &[Action::ToggleFold]);
    assert_eq!(app.view().rows, Some(vec![1, 11, 12]));
    assert_eq!(app.view().filtered, Some(vec![4, 11, 12]));
    assert_eq!(selected(&app), Some(1));
    assert_snapshot!("fold_with_filter", draw(&mut app).backend());
    // The filter changes: the fold is kept.
    app.set_filter(None);
    assert_eq!(app.view().rows, Some(vec![0, 1, 10, 11, 12]));
    app.set_filter(Filter::parse("status:error"));
    assert_eq!(app.view().rows, Some(vec![1]));
    act(&mut app, &[Action::ToggleFold]);
    assert_eq!(app.view().rows, Some(vec![4]));
    assert_eq!(
        selected(&app),
        Some(4),
        "nearest row to the vanished prompt"
    );
}

#[test]
fn a_folded_last_turn_keeps_folding_live_rows_and_its_summary() {
    let items = import::load_bytes(SESSION.as_bytes()).items;
    let (first, rest) = items.split_at(20);
    let mut app = App::new("live", true);
    app.update(Msg::Source(SourceMsg::Batch(first.to_vec())));
    app.prepare(Rect::new(0, 0, 100, 30));
    assert_eq!(app.session().items.len(), 12, "up to c3");
    act(&mut app, &[Action::Bottom, Action::ToggleFold]);
    let calls = |app: &App| app.view().folds.folded.get(&10).map(|s| s.calls);
    assert_eq!(calls(&app), Some(1));
    app.update(Msg::Source(SourceMsg::Batch(rest.to_vec())));
    app.prepare(Rect::new(0, 0, 100, 30));
    assert_eq!(app.session().items.len(), 13);
    assert_eq!(
        app.view().rows,
        Some((0..=10).collect()),
        "c4 arrived folded"
    );
    assert_eq!(calls(&app), Some(2), "the summary follows");
    assert_eq!(
        selected(&app),
        Some(10),
        "follow keeps the last row: the prompt"
    );
}

#[test]
fn compaction_remaps_folded_turns() {
    // Ten turns of one call each (20 rows); cap 16 rows: compaction drops the oldest rows.
    let mut text = String::new();
    for t in 0..10 {
        let _ = write!(
            text,
            "{{\"type\":\"control.prompt.request\",\"payload\":{{\"text\":\"turn {t}\"}}}}\n\
             {{\"type\":\"tool.invoke.request\",\"payload\":{{\"invocation_id\":\"c{t}\",\"tool_name\":\"Bash\",\"input\":{{\"command\":\"echo {t}\"}}}}}}\n\
             {{\"type\":\"tool.invoke.result\",\"payload\":{{\"invocation_id\":\"c{t}\",\"status\":\"success\",\"output\":\"{t}\",\"output_type\":\"text\"}}}}\n"
        );
    }
    let items = import::load_bytes(text.as_bytes()).items;
    let (first, rest) = items.split_at(15);
    let mut app = App::new("live", true);
    app.session_mut().max_items = Some(16);
    app.update(Msg::Source(SourceMsg::Batch(first.to_vec())));
    // Items 0..10: turns 0–4; fold turn 4 (prompt 8).
    assert_eq!(app.view().folds.prompts, vec![0, 2, 4, 6, 8]);
    app.select(9);
    act(&mut app, &[Action::ToggleFold]);
    assert_eq!(app.view().rows, Some((0..=8).collect()));
    app.update(Msg::Source(SourceMsg::Batch(rest.to_vec())));
    assert!(app.session().dropped_items > 0);
    let dropped = app.session().dropped_items as usize;
    let prompts: Vec<usize> = (0..app.session().items.len())
        .filter(|&i| rawpv::session::query::is_turn_start(app.session(), i))
        .collect();
    assert_eq!(app.view().folds.prompts, prompts, "remapped, not rescanned");
    let p = 8 - dropped;
    assert!(
        app.view().folds.folded.contains_key(&p),
        "turn 4 is still folded"
    );
    let rows = app.view().rows.clone().unwrap();
    assert!(rows.contains(&p) && !rows.contains(&(p + 1)), "{rows:?}");
    assert_eq!(rows.len(), app.session().items.len() - 1);
}

#[test]
fn a_click_on_the_marker_folds_and_unfolds() {
    use crossterm::event::{Event, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
    let mut app = app();
    let click = |column, row| {
        Msg::Term(Event::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column,
            row,
            modifiers: KeyModifiers::NONE,
        }))
    };
    // Feed inner area starts at (1, 1); row 1 is the first prompt; the marker is column 1 + 9.
    app.update(click(1 + 9, 1 + 1));
    assert_eq!(app.view().rows, Some(vec![0, 1, 10, 11, 12]));
    // Elsewhere on the row: only selects.
    app.update(click(1 + 20, 1 + 1));
    assert_eq!(app.view().rows, Some(vec![0, 1, 10, 11, 12]));
    app.update(click(1 + 9, 1 + 1));
    assert_eq!(app.view().rows, None);
}

#[test]
fn fold_keys_are_configurable_and_in_the_help() {
    let loaded = rawpv::config::load_str(
        "[keys]\ntoggle_fold = [\"Space\"]\nfold_all = [\"Z\"]\n",
        std::path::Path::new("/c.toml"),
    )
    .unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let mut app = app();
    app.set_keymap(loaded.config.keymap());
    app.select(5);
    app.press(KeyCode::Char(' '));
    assert_eq!(app.view().rows, Some(vec![0, 1, 10, 11, 12]));
    app.press(KeyCode::Char('Z'));
    assert_eq!(app.view().rows, Some(vec![0, 1, 10]));
    let help: Vec<String> = app
        .keymap()
        .bindings()
        .iter()
        .map(|b| format!("{} {}", b.keys_label(), b.desc))
        .collect();
    assert!(help.contains(&"Space fold or unfold the turn (prompt and its rows)".to_owned()));
    assert!(help.contains(&"Z fold every turn".to_owned()));
}
