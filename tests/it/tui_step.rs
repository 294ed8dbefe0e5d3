//! Step tests: drive the headless app with actions and keys, assert whole `ViewState`s.

use crossterm::event::{Event, KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use pretty_assertions::assert_eq;
use ratatui::layout::Rect;
use rawpv::action::Action;
use rawpv::app::{App, Msg};
use rawpv::import;
use rawpv::query::Filter;
use rawpv::source::SourceMsg;
use rawpv::ui::Areas;
use rawpv::view::{DetailState, FeedState, Folds, Mode, Pane, Tab, ViewState};

const SESSION: &str = include_str!("../fixtures/tui_session.jsonl");

/// Rows of the fixture: 0 catalog, 1 prompt, 2 thinking, 3 agent, 4 c1 (Bash error),
/// 5 c2 (Read), 6 t1 (Task), 7 s1 (Grep, subagent), 8 turn end, 9 compacted, 10 prompt,
/// 11 c3 (Bash, open), 12 c4 (Bash).
fn app() -> App {
    let mut app = App::headless(import::load_bytes(SESSION.as_bytes()).items, "s");
    app.prepare(Rect::new(0, 0, 100, 30));
    app
}

fn step(app: &mut App, actions: &[Action]) -> ViewState {
    for a in actions {
        app.update(Msg::Action(*a));
    }
    app.prepare(Rect::new(0, 0, 100, 30));
    app.view().clone()
}

fn base() -> ViewState {
    ViewState {
        feed: FeedState {
            selected: 0,
            offset: 0,
            height: 26,
            follow: false,
        },
        detail: DetailState {
            height: 26,
            ..DetailState::default()
        },
        folds: Folds {
            prompts: vec![1, 10],
            ..Folds::default()
        },
        ..ViewState::default()
    }
}

#[test]
fn navigation_errors_prompts() {
    let mut app = app();
    assert_eq!(*app.view(), base());
    let v = step(&mut app, &[Action::MoveDown, Action::MoveDown]);
    assert_eq!(
        v,
        ViewState {
            feed: FeedState {
                selected: 2,
                ..base().feed
            },
            ..base()
        }
    );
    let v = step(&mut app, &[Action::NextError]);
    assert_eq!(
        v,
        ViewState {
            feed: FeedState {
                selected: 4,
                ..base().feed
            },
            ..base()
        }
    );
    // The open call is not an error; no further error → message, selection kept.
    let v = step(&mut app, &[Action::NextError]);
    assert_eq!(
        v,
        ViewState {
            feed: FeedState {
                selected: 4,
                ..base().feed
            },
            message: Some("no more errors".into()),
            ..base()
        }
    );
    let v = step(&mut app, &[Action::NextPrompt]);
    assert_eq!(v.feed.selected, 10);
    let v = step(&mut app, &[Action::PrevPrompt, Action::PrevPrompt]);
    assert_eq!(v.feed.selected, 1);
    assert_eq!(v.message.as_deref(), Some("no more prompts"));
    let v = step(&mut app, &[Action::Bottom]);
    assert_eq!(v.feed.selected, 12);
    let v = step(&mut app, &[Action::Top, Action::MoveUp]);
    assert_eq!(v.feed.selected, 0);
}

#[test]
fn focus_scroll_and_toggles() {
    let mut app = app();
    let v = step(
        &mut app,
        &[
            Action::NextError,
            Action::Open,
            Action::MoveDown,
            Action::ToggleWrap,
            Action::ToggleSideBySide,
        ],
    );
    assert_eq!(
        v,
        ViewState {
            focus: Pane::Detail,
            feed: FeedState {
                selected: 4,
                ..base().feed
            },
            // The detail fits: scrolling is clamped to 0.
            detail: DetailState {
                scroll: 0,
                wrap: false,
                side_by_side: true,
                ..base().detail
            },
            // The 100-column screen's detail is too narrow for side by side: it says so.
            message: Some(format!(
                "diffs show side by side when the detail is 140 columns wide or more (it has {}; z zooms it)",
                Areas::inner(app.areas().detail).width
            )),
            ..base()
        }
    );
    let v = step(
        &mut app,
        &[Action::Open, Action::FocusNext, Action::ShowCatalog],
    );
    assert_eq!(v.detail.expanded, true);
    // The opened panel takes the keys; Esc gives them back to the feed.
    assert_eq!((v.focus, v.tab), (Pane::Detail, Tab::Catalog));
    let v = step(&mut app, &[Action::ShowProblems, Action::Cancel]);
    assert_eq!((v.focus, v.tab), (Pane::Feed, Tab::Detail));
    let v = step(&mut app, &[Action::ShowCatalog, Action::ShowCatalog]);
    assert_eq!((v.focus, v.tab), (Pane::Feed, Tab::Detail));
}

#[test]
fn search_and_filter_by_keys() {
    let mut app = app();
    step(&mut app, &[Action::StartSearch]);
    assert_eq!(app.view().mode, Mode::Search);
    app.type_text("Unwrap");
    app.press(KeyCode::Enter);
    // Smart case: "Unwrap" is case-sensitive and matches nothing.
    let v = step(&mut app, &[]);
    assert_eq!(v.feed.selected, 0);
    assert_eq!(v.search.as_deref(), Some("Unwrap"));
    step(&mut app, &[Action::StartSearch]);
    app.type_text("unwrap");
    app.press(KeyCode::Enter);
    let v = step(&mut app, &[]);
    assert_eq!(v.feed.selected, 5, "the Read output has unwrap()");
    let v = step(&mut app, &[Action::SearchNext]);
    assert_eq!(v.feed.selected, 6);
    let v = step(&mut app, &[Action::SearchNext, Action::SearchNext]);
    assert_eq!(v.feed.selected, 5, "wraps around");
    let v = step(&mut app, &[Action::SearchPrev]);
    assert_eq!(v.feed.selected, 7);

    step(&mut app, &[Action::StartFilter]);
    app.type_text("status:error");
    app.press(KeyCode::Enter);
    let v = step(&mut app, &[]);
    assert_eq!(
        v,
        ViewState {
            feed: FeedState {
                selected: 0,
                ..base().feed
            },
            filter: Filter::parse("status:error"),
            rows: Some(vec![4]),
            filtered: Some(vec![4]),
            search: Some("unwrap".into()),
            // The committed texts, for Up / Down in the prompts.
            history: rawpv::view::PromptHistory {
                search: vec!["Unwrap".into(), "unwrap".into()],
                filter: vec!["status:error".into()],
                pos: None,
            },
            ..base()
        }
    );
    // Esc clears the search first, then the filter; the selected item stays selected.
    let v = step(&mut app, &[Action::Cancel, Action::Cancel]);
    assert_eq!(
        v,
        ViewState {
            feed: FeedState {
                selected: 4,
                ..base().feed
            },
            // Cancelling a prompt's result keeps what was committed.
            history: rawpv::view::PromptHistory {
                search: vec!["Unwrap".into(), "unwrap".into()],
                filter: vec!["status:error".into()],
                pos: None,
            },
            ..base()
        }
    );
}

#[test]
fn filter_is_kept_as_frames_arrive() {
    let items = import::load_bytes(SESSION.as_bytes()).items;
    let (first, rest) = items.split_at(10);
    let mut app = App::new("live", true);
    app.update(Msg::Source(SourceMsg::Batch(first.to_vec())));
    app.set_filter(Filter::parse("tool:bash"));
    assert_eq!(app.view().rows, Some(vec![4]));
    app.update(Msg::Source(SourceMsg::Batch(rest.to_vec())));
    assert_eq!(app.view().rows, Some(vec![4, 11, 12]));
    // Live: the last row stays selected as rows arrive.
    assert_eq!(app.view().feed.selected, 2);
    assert!(app.view().feed.follow);
}

#[test]
fn mouse_wheel_and_click() {
    let mut app = app();
    let mouse = |kind, column, row| {
        Msg::Term(Event::Mouse(MouseEvent {
            kind,
            column,
            row,
            modifiers: KeyModifiers::NONE,
        }))
    };
    // Wheel over the feed moves the selection; a click selects the row under the pointer.
    app.update(mouse(MouseEventKind::ScrollDown, 5, 5));
    assert_eq!(app.view().feed.selected, 3);
    app.update(mouse(MouseEventKind::Down(MouseButton::Left), 5, 1 + 6));
    assert_eq!(app.view().feed.selected, 6);
    // Click in the detail focuses it.
    app.update(mouse(MouseEventKind::Down(MouseButton::Left), 80, 5));
    assert_eq!(app.view().focus, Pane::Detail);
}

#[test]
fn quit_keys() {
    let mut app = app();
    app.update(Msg::Term(Event::Key(crossterm::event::KeyEvent::new(
        KeyCode::Char('c'),
        KeyModifiers::CONTROL,
    ))));
    assert!(app.quitting());
    let mut again = self::app();
    again.press(KeyCode::Char('q'));
    assert!(again.quitting());
}

#[test]
fn zoom_gives_the_detail_the_screen() {
    let mut app = app();
    let v = step(&mut app, &[Action::ToggleZoom]);
    assert_eq!(
        v,
        ViewState {
            focus: Pane::Detail,
            zoom: true,
            feed: FeedState {
                height: 0,
                ..base().feed
            },
            ..base()
        }
    );
    assert_eq!(app.areas().detail.width, 100);
    // Switching to the hidden feed unzooms.
    let v = step(&mut app, &[Action::FocusNext]);
    assert_eq!(v, base());
}

#[test]
fn quiet_rows_are_hidden_and_counted() {
    let text = "{\"type\":\"control.prompt.request\",\"payload\":{\"text\":\"hi\"}}\n\
                {\"type\":\"session.usage\",\"payload\":{\"input_tokens\":1,\"output_tokens\":2}}\n\
                {\"type\":\"x-claude-code.progress\",\"payload\":{\"data\":{\"type\":\"hook_progress\"}}}\n\
                {\"type\":\"session.turn.end\",\"payload\":{}}\n";
    let mut app = App::headless(import::load_bytes(text.as_bytes()).items, "q");
    assert_eq!(
        (app.view().quiet, app.view().rows.clone()),
        (2, Some(vec![0, 3]))
    );
    app.select(1);
    let v = step(&mut app, &[Action::ToggleQuiet]);
    assert_eq!(
        (v.show_quiet, v.rows, v.feed.selected),
        (true, None, 3),
        "selection stays on the turn end"
    );
    let v = step(&mut app, &[Action::ToggleQuiet]);
    assert_eq!((v.rows, v.feed.selected), (Some(vec![0, 3]), 1));
}

#[test]
fn a_restarted_input_counts_its_quiet_rows_afresh() {
    // `rawpv -f FILE` then `: > FILE`: the feed title must not keep the old file's quiet count.
    let text = "{\"type\":\"control.prompt.request\",\"payload\":{\"text\":\"hi\"}}\n\
                {\"type\":\"session.usage\",\"payload\":{\"input_tokens\":1,\"output_tokens\":2}}\n";
    let items = import::load_bytes(text.as_bytes()).items;
    let mut app = App::new("live", true);
    app.update(Msg::Source(SourceMsg::Batch(items.clone())));
    assert_eq!(app.view().quiet, 1);
    app.update(Msg::Source(SourceMsg::State(
        rawpv::source::SourceState::Restarted {
            reason: "file truncated".into(),
        },
    )));
    assert_eq!(
        (app.view().quiet, app.view().row_count(app.session())),
        (0, 0)
    );
    app.update(Msg::Source(SourceMsg::Batch(items)));
    assert_eq!(
        (app.view().quiet, app.view().rows.clone()),
        (1, Some(vec![0]))
    );
}

/// `n` output lines `line 1` … with `the needle` on line `at`.
fn lines_with_needle(n: usize, at: usize) -> String {
    (1..=n)
        .map(|k| {
            if k == at {
                "the needle\n".to_owned()
            } else {
                format!("line {k}\n")
            }
        })
        .collect()
}

/// Two Bash calls, the second with `output`, and a committed search for `needle`.
fn search_needle_in(output: &str) -> App {
    let frames = [
        serde_json::json!({"type": "tool.invoke.request", "payload": {"invocation_id": "a", "tool_name": "Bash", "input": {"command": "ls"}}}),
        serde_json::json!({"type": "tool.invoke.result", "payload": {"invocation_id": "a", "tool_name": "Bash", "status": "success", "output_type": "text", "output": "nothing here"}}),
        serde_json::json!({"type": "tool.invoke.request", "payload": {"invocation_id": "b", "tool_name": "Bash", "input": {"command": "cat"}}}),
        serde_json::json!({"type": "tool.invoke.result", "payload": {"invocation_id": "b", "tool_name": "Bash", "status": "success", "output_type": "text", "output": output}}),
    ];
    let text = frames.map(|f| f.to_string()).join("\n");
    let mut app = App::headless(import::load_bytes(text.as_bytes()).items, "s");
    app.prepare(Rect::new(0, 0, 100, 30));
    step(&mut app, &[Action::StartSearch]);
    app.type_text("needle");
    app.press(KeyCode::Enter);
    app
}

#[test]
fn a_search_hit_deep_in_an_output_scrolls_the_detail_to_it() {
    // The match is on output line 80: the detail must show it, not the call's first screen.
    let output = lines_with_needle(100, 80);
    let mut app = search_needle_in(&output);
    for _ in 0..3 {
        app.prepare(Rect::new(0, 0, 100, 30));
        app.run_jobs_inline();
    }
    app.prepare(Rect::new(0, 0, 100, 30));
    assert_eq!(app.view().feed.selected, 1);
    let (scroll, h) = (
        app.view().detail.scroll,
        usize::from(app.view().detail.height),
    );
    assert!(scroll > 0, "detail not scrolled");
    let shown: Vec<String> = app.detail_lines()[scroll..(scroll + h).min(app.detail_lines().len())]
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(shown.iter().any(|l| l.contains("the needle")), "{shown:#?}");
    // The next action leaves the scroll to the user.
    let v = step(&mut app, &[Action::FocusNext, Action::MoveUp]);
    assert_eq!(v.detail.scroll, scroll - 1);
}

#[test]
fn a_search_hit_past_the_folded_part_of_an_output_expands_it_and_scrolls_to_it() {
    // The match is on output line 450, past the 200 lines a folded output shows: the search
    // must expand the output and show the match, not leave the user at "match 1/1" with the
    // hit hidden behind "… more lines (press o to expand)".
    let output = lines_with_needle(600, 450);
    let mut app = search_needle_in(&output);
    for _ in 0..4 {
        app.prepare(Rect::new(0, 0, 100, 30));
        app.run_jobs_inline();
    }
    app.prepare(Rect::new(0, 0, 100, 30));
    assert_eq!(app.view().feed.selected, 1);
    assert!(app.view().detail.expanded, "output not expanded");
    let (scroll, h) = (
        app.view().detail.scroll,
        usize::from(app.view().detail.height),
    );
    let shown: Vec<String> = app.detail_lines()[scroll..(scroll + h).min(app.detail_lines().len())]
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(shown.iter().any(|l| l.contains("the needle")), "{shown:#?}");
}

#[test]
fn side_by_side_on_a_narrow_detail_says_how_wide_it_must_be() {
    // `s` with the detail narrower than the side-by-side minimum changed nothing visible and
    // said nothing: the user could not tell whether the key worked.
    let mut app = app();
    let v = step(&mut app, &[Action::ToggleSideBySide]);
    assert!(v.detail.side_by_side);
    let width = Areas::inner(app.areas().detail).width;
    assert!(width < rawpv::render::SIDE_BY_SIDE_MIN_WIDTH, "{width}");
    assert_eq!(
        v.message.as_deref(),
        Some(
            format!(
                "diffs show side by side when the detail is 140 columns wide or more (it has {width}; z zooms it)"
            )
            .as_str()
        )
    );
    // Turning it off, or on at a wide enough detail, says nothing.
    let v = step(&mut app, &[Action::ToggleSideBySide]);
    assert!(!v.detail.side_by_side);
    app.view_mut().message = None;
    app.prepare(Rect::new(0, 0, 300, 30));
    app.update(Msg::Action(Action::ToggleZoom));
    app.prepare(Rect::new(0, 0, 300, 30));
    app.update(Msg::Action(Action::ToggleSideBySide));
    assert!(app.view().detail.side_by_side);
    assert_eq!(app.view().message, None);
}
