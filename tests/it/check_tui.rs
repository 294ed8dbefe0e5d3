//! The catalog and problems panels inside the viewer (headless app on the demo): `c` / `!`
//! tabs, selection with the panel focused, Enter on a finding jumps to its feed row, Enter on a
//! catalog tool filters the feed to its calls and back.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use rawpv::action::Action;
use rawpv::app::{App, Msg};
use rawpv::import;
use rawpv::session::Item;
use rawpv::source::DEMO;
use rawpv::view::{Pane, Tab};

fn demo() -> App {
    let mut app = App::headless(import::load_bytes(DEMO.as_bytes()).items, "demo");
    app.prepare(Rect::new(0, 0, 120, 32));
    app
}

fn act(app: &mut App, actions: &[Action]) {
    for a in actions {
        app.update(Msg::Action(*a));
        // A scan's first step has a 4 ms budget (it may stay pending under load).
        app.finish_scans();
        app.prepare(Rect::new(0, 0, 120, 32));
    }
}

fn draw(app: &mut App) -> Terminal<TestBackend> {
    let mut term = Terminal::new(TestBackend::new(120, 32)).unwrap();
    app.prepare(Rect::new(0, 0, 120, 32));
    app.run_jobs_inline();
    term.draw(|f| app.draw(f)).unwrap();
    term
}

fn selected_tool_name(app: &App) -> Option<String> {
    let item = app.view().selected_item(app.session())?;
    match &app.session().items[item] {
        Item::Invocation(i) => Some(app.session().invocations[*i].tool_name.clone()),
        Item::Message(_) | Item::Event(_) => None,
    }
}

#[test]
fn enter_on_a_finding_jumps_to_its_feed_row() {
    let mut app = demo();
    act(&mut app, &[Action::ShowProblems]);
    assert_eq!(
        (app.view().focus, app.view().tab),
        (Pane::Detail, Tab::Problems)
    );
    // Findings: 0 Grep degraded, 1 WebFetch unavailable, …
    act(&mut app, &[Action::MoveDown]);
    assert_eq!(app.view().problems.selected, 1);
    insta::assert_snapshot!("tui_problems_tab", draw(&mut app).backend());
    act(&mut app, &[Action::Open]);
    assert_eq!(
        (app.view().focus, app.view().tab),
        (Pane::Feed, Tab::Detail)
    );
    assert_eq!(selected_tool_name(&app).as_deref(), Some("WebFetch"));
    // Bottom selects the last finding (the Read result typed binary_ref).
    act(
        &mut app,
        &[Action::ShowProblems, Action::Bottom, Action::Open],
    );
    assert_eq!(selected_tool_name(&app).as_deref(), Some("Read"));
}

#[test]
fn enter_on_a_catalog_tool_filters_the_feed_and_back() {
    let mut app = demo();
    act(&mut app, &[Action::ShowCatalog]);
    let tools: Vec<String> = app
        .session()
        .catalog()
        .unwrap()
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    let bash = tools.iter().position(|t| t == "Bash").unwrap();
    for _ in 0..bash {
        act(&mut app, &[Action::MoveDown]);
    }
    assert_eq!(
        app.view().catalog.selected_tool(app.session()),
        Some("Bash")
    );
    insta::assert_snapshot!("tui_catalog_tab", draw(&mut app).backend());
    act(&mut app, &[Action::Open]);
    let rows = app.view().rows.clone().expect("a filter is active");
    assert_eq!(rows.len(), 3, "the demo's three Bash calls");
    for item in rows {
        let Item::Invocation(i) = &app.session().items[item] else {
            panic!("not a call")
        };
        assert_eq!(app.session().invocations[*i].tool_name, "Bash");
    }
    act(&mut app, &[Action::Open]);
    assert_eq!(app.view().filter, None);
    // Without a filter only the quiet rows (usage, progress) stay hidden.
    let shown = app
        .view()
        .rows
        .as_ref()
        .map_or_else(|| app.session().items.len(), Vec::len);
    assert_eq!(shown, app.session().items.len() - app.view().quiet);
}

#[test]
fn page_keys_scroll_the_tool_details() {
    let mut app = demo();
    act(&mut app, &[Action::ShowCatalog, Action::PageDown]);
    assert!(app.view().catalog.scroll > 0);
    assert_eq!(app.view().catalog.selected, 0);
    act(&mut app, &[Action::Top]);
    assert_eq!(app.view().catalog.scroll, 0);
}

#[test]
fn clicks_select_panel_rows() {
    use crossterm::event::{Event, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
    let click = |app: &mut App, column: u16, row: u16| {
        app.update(Msg::Term(Event::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column,
            row,
            modifiers: KeyModifiers::NONE,
        })));
        app.prepare(Rect::new(0, 0, 120, 32));
    };
    let mut app = demo();
    act(&mut app, &[Action::ShowProblems]);
    let d = app.areas().detail;
    // Border, summary line, then findings 0, 1, 2: click the third.
    click(&mut app, d.x + 3, d.y + 1 + 1 + 2);
    assert_eq!(app.view().focus, Pane::Detail);
    assert_eq!(app.view().problems.selected, 2);
    // The summary line selects nothing.
    click(&mut app, d.x + 3, d.y + 1);
    assert_eq!(app.view().problems.selected, 2);
    act(&mut app, &[Action::ShowCatalog]);
    // Border, title, header, then tools 0, 1, …: click the fourth (Write).
    click(&mut app, d.x + 3, d.y + 1 + 2 + 3);
    assert_eq!(
        app.view().catalog.selected_tool(app.session()),
        Some("Write")
    );
}

/// Issue 22: `c` gives the catalog the keys, so `c` `j` `Enter` filters the feed by the
/// catalog's second tool (it used to move the feed and open its row).
#[test]
fn c_j_enter_filters_by_the_second_tool() {
    use crossterm::event::KeyCode;
    let mut app = demo();
    draw(&mut app);
    let second = app.session().catalog().unwrap().tools[1].name.clone();
    app.press(KeyCode::Char('c'));
    app.press(KeyCode::Char('j'));
    app.press(KeyCode::Enter);
    let rows = app.view().rows.clone().expect("a filter is active");
    assert!(!rows.is_empty());
    for item in rows {
        let Item::Invocation(i) = &app.session().items[item] else {
            panic!("not a call")
        };
        assert_eq!(app.session().invocations[*i].tool_name, second);
    }
}
