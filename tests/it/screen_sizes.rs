//! Issue 22's "Done when" screens: the feed (paths, tool names, statuses), the help, the catalog
//! and the problems panels with their keys, on a real Claude Code transcript at 80x24, 120x35 and
//! 200x60. Each screen is an insta snapshot; the asserts say what must hold at every size.

use insta::assert_snapshot;
use rawpv::action::Action;
use rawpv::app::App;
use rawpv::import;

use crate::support::corpus;
use crate::support::headless::{act, draw, screen_text, status_rows};

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 35), (200, 60)];

/// A corpus transcript with many tools (`WebSearch`, `WebFetch`, `Glob`, `Read`, `Edit`),
/// findings and paths inside its cwd.
fn transcript() -> Option<App> {
    let dir = corpus::dir("claude-code")?;
    let loaded = import::load_path(&dir.join("cc-v2.1.38-tool-heavy-web.jsonl")).ok()?;
    Some(App::headless(
        loaded.items,
        "cc-v2.1.38-tool-heavy-web.jsonl",
    ))
}

#[test]
fn feed_help_catalog_and_problems_at_three_sizes() {
    for (w, h) in SIZES {
        let Some(mut app) = transcript() else {
            return;
        };
        // The feed: the first screen, paths relative to the session's cwd.
        let term = draw(&mut app, w, h);
        let screen = screen_text(&term);
        assert!(
            !screen.contains("/home/user/projects/spotter/"),
            "{w}x{h}: {screen}"
        );
        assert_snapshot!(format!("feed_{w}x{h}"), term.backend());

        // The help: fits, and says what Enter does in the panels.
        act(&mut app, &[Action::ToggleHelp]);
        let term = draw(&mut app, w, h);
        assert_snapshot!(format!("help_{w}x{h}"), term.backend());
        act(&mut app, &[Action::ToggleHelp]);

        // The catalog takes the keys: its hints are in the status bar.
        act(&mut app, &[Action::ShowCatalog]);
        let term = draw(&mut app, w, h);
        let status = status_rows(&term);
        assert!(status.contains("Enter"), "{w}x{h}: {status}");
        assert_snapshot!(format!("catalog_{w}x{h}"), term.backend());
        act(&mut app, &[Action::Cancel]);

        act(&mut app, &[Action::ShowProblems]);
        let term = draw(&mut app, w, h);
        let status = status_rows(&term);
        assert!(status.contains("Enter"), "{w}x{h}: {status}");
        assert_snapshot!(format!("problems_{w}x{h}"), term.backend());
    }
}

/// In the help, `G` goes to the last rows shown and `k` moves up at once (it used to count
/// down from past the end first).
#[test]
fn help_bottom_then_up_moves_at_once() {
    let Some(mut app) = transcript() else {
        return;
    };
    draw(&mut app, 80, 24);
    for c in ['?', 'G'] {
        press(&mut app, c);
    }
    let bottom = screen_text(&draw(&mut app, 80, 24));
    assert!(bottom.contains(" 0 below (j/k scroll) "), "{bottom}");
    let limit = app.view().help_scroll;
    assert!(
        bottom.contains(&format!(" {limit} above · 0 below ")),
        "{bottom}"
    );
    press(&mut app, 'k');
    let up = screen_text(&draw(&mut app, 80, 24));
    assert!(
        up.contains(&format!(" {} above · 1 below ", limit - 1)),
        "{up}"
    );
}

fn press(app: &mut App, c: char) {
    use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
    app.update(rawpv::app::Msg::Term(Event::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::NONE,
    ))));
}

/// With wrap off, ←/→ (h/l) in the detail pane scroll its long lines sideways and say where
/// they are; in the feed they still fold (issue 22 item 6).
#[test]
fn wrap_off_the_detail_scrolls_sideways() {
    let long = (0..40)
        .map(|i| format!("col{i:02}"))
        .collect::<Vec<_>>()
        .join(" ");
    let request = r#"{"type":"tool.invoke.request","payload":{"invocation_id":"a","tool_name":"Bash","input":{"command":"wide"}}}"#;
    let result = format!(
        r#"{{"type":"tool.invoke.result","payload":{{"invocation_id":"a","tool_name":"Bash","status":"success","output_type":"text","output":"{long}"}}}}"#
    );
    let input = format!("{request}\n{result}\n");
    let mut app = App::headless(import::load_bytes(input.as_bytes()).items, "wide.ndjson");
    draw(&mut app, 120, 35);
    act(&mut app, &[Action::FocusNext, Action::ToggleWrap]);
    let term = draw(&mut app, 120, 35);
    let screen = screen_text(&term);
    assert!(screen.contains("col00 col01"), "{screen}");
    assert!(
        status_rows(&term).contains("scroll sideways"),
        "{}",
        status_rows(&term)
    );
    act(&mut app, &[Action::UnfoldTurn, Action::UnfoldTurn]);
    let term = draw(&mut app, 120, 35);
    let screen = screen_text(&term);
    assert_eq!(app.view().detail.hscroll, 16);
    // 16 columns in (the output is indented by 2): the row starts inside `col02`.
    assert!(
        !screen.contains("col01") && screen.contains("│2 col03 col04"),
        "{screen}"
    );
    assert!(
        status_rows(&term).contains("columns 17–"),
        "{}",
        status_rows(&term)
    );
    act(&mut app, &[Action::FoldTurn]);
    assert_eq!(app.view().detail.hscroll, 8);
    // Wrap back on: no sideways scroll.
    act(&mut app, &[Action::ToggleWrap]);
    assert_eq!(app.view().detail.hscroll, 0);
}

/// With wrap off, the problems and the catalog panels scroll sideways too: ←/→ (h/l) and, out
/// of a replay, `<`/`>`; the marker column and the catalog's title stay. With wrap on, ←/→
/// there say how to get it (issue 22 item 6). The fixture has long findings, a long tool
/// description and status reason.
#[test]
fn wrap_off_the_problems_and_catalog_scroll_sideways() {
    const WIDE: &str = include_str!("../fixtures/wide_panels.ndjson");
    for (w, h) in [(80, 24), (120, 35)] {
        let mut app = App::headless(import::load_bytes(WIDE.as_bytes()).items, "wide.ndjson");
        draw(&mut app, w, h);
        act(&mut app, &[Action::ShowProblems, Action::FoldTurn]);
        let term = draw(&mut app, w, h);
        assert!(
            status_rows(&term).contains("wrap is on: w turns it off"),
            "{}",
            status_rows(&term)
        );
        let wrapped = screen_text(&term);
        assert!(
            wrapped.contains("▶error   L2     tool-not-in-catalog"),
            "{wrapped}"
        );
        act(
            &mut app,
            &[Action::ToggleWrap, Action::UnfoldTurn, Action::StepForward],
        );
        assert_eq!(app.view().problems.hscroll, 16, "{w}x{h}");
        let term = draw(&mut app, w, h);
        let status = status_rows(&term);
        assert!(status.contains("columns 17–"), "{w}x{h}: {status}");
        // 16 columns in: the badge and line are gone, the marker stays, the code is cut.
        let screen = screen_text(&term);
        assert!(
            screen.contains("▶ool-not-in-catalog request for"),
            "{w}x{h}: {screen}"
        );
        assert!(
            screen.contains("1 warning"),
            "the summary line stays: {screen}"
        );
        assert_snapshot!(format!("problems_sideways_{w}x{h}"), term.backend());
        act(&mut app, &[Action::StepBack, Action::FoldTurn]);
        assert_eq!(app.view().problems.hscroll, 0);

        act(
            &mut app,
            &[Action::ShowCatalog, Action::UnfoldTurn, Action::UnfoldTurn],
        );
        assert_eq!(app.view().catalog.hscroll, 16, "{w}x{h}");
        let term = draw(&mut app, w, h);
        let screen = screen_text(&term);
        // The title stays; the description line and the table lost their first 16 columns.
        assert!(screen.contains("current catalog · publish 1"), "{screen}");
        assert!(screen.contains("mand in the project's working"), "{screen}");
        assert!(!screen.contains("Runs a shell command"), "{screen}");
        assert_snapshot!(format!("catalog_sideways_{w}x{h}"), term.backend());
        // As far as the widest line's end, no further.
        act(&mut app, &[Action::UnfoldTurn; 40]);
        let widest = app.view().catalog.hscroll;
        act(&mut app, &[Action::UnfoldTurn]);
        assert_eq!(app.view().catalog.hscroll, widest);
        let term = draw(&mut app, w, h);
        let status = status_rows(&term);
        let (shown, of) = status
            .split_once(" of ")
            .map(|(a, b)| {
                let end = a.rsplit('–').next().unwrap_or("").to_owned();
                (end, b.split(' ').next().unwrap_or("").to_owned())
            })
            .unwrap_or_default();
        assert!(!of.is_empty() && shown == of, "the end shows: {status}");
        // Wrap back on: no sideways scroll anywhere.
        act(&mut app, &[Action::ToggleWrap]);
        assert_eq!(
            (app.view().catalog.hscroll, app.view().problems.hscroll),
            (0, 0)
        );
    }
}

/// At 80x24 the problems panel has 7 rows: when its findings leave two or more of them, the
/// selected finding is shown in full below the list there too (it used to need 12 rows).
#[test]
fn a_short_problems_panel_shows_the_selected_finding_when_it_has_room() {
    const WIDE: &str = include_str!("../fixtures/wide_panels.ndjson");
    let mut app = App::headless(import::load_bytes(WIDE.as_bytes()).items, "wide.ndjson");
    draw(&mut app, 80, 24);
    act(&mut app, &[Action::ShowProblems, Action::MoveDown]);
    let term = draw(&mut app, 80, 24);
    let buf = term.backend().buffer();
    let rows: Vec<String> = (0..24)
        .map(|y| (0..80).map(|x| buf[(x, y)].symbol()).collect())
        .collect();
    // Four findings in six rows under the summary: a rule, then the selected one's first line.
    let rule = rows
        .iter()
        .position(|r| r.starts_with("│────"))
        .unwrap_or_else(|| panic!("{rows:#?}"));
    assert!(
        rows[rule - 1].contains("request-never-answered"),
        "{rows:#?}"
    );
    assert!(
        rows[rule + 1].starts_with(
            "│malformed-line line 3: not valid JSON: expected ident at line 1 column 2 — "
        ),
        "{rows:#?}"
    );
    assert!(
        rows[rule + 1].ends_with("…│"),
        "the rest is cut with a mark: {rows:#?}"
    );
}
