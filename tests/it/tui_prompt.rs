//! Issue 22 item 5: the search and filter prompts edit like a shell line.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use rawpv::action::Action;
use rawpv::app::{App, Msg};

use crate::support::headless::{demo_items, draw, status_rows};

fn key(app: &mut App, code: KeyCode, mods: KeyModifiers) {
    app.update(Msg::Term(Event::Key(KeyEvent::new(code, mods))));
}

fn ctrl(app: &mut App, c: char) {
    key(app, KeyCode::Char(c), KeyModifiers::CONTROL);
}

fn demo() -> App {
    App::headless(demo_items(), "demo")
}

#[test]
fn cursor_moves_and_deletes_like_a_shell_line() {
    let mut app = demo();
    app.update(Msg::Action(Action::StartSearch));
    app.type_text("parse duration");
    assert_eq!(app.view().input_cursor, "parse duration".len());
    ctrl(&mut app, 'w');
    assert_eq!(app.view().input, "parse ");
    app.type_text("dur");
    ctrl(&mut app, 'a');
    app.type_text("^");
    assert_eq!(app.view().input, "^parse dur");
    ctrl(&mut app, 'e');
    app.press(KeyCode::Left);
    app.press(KeyCode::Left);
    app.press(KeyCode::Backspace);
    assert_eq!(app.view().input, "^parse ur");
    app.press(KeyCode::Right);
    app.type_text("é");
    assert_eq!(app.view().input, "^parse uér");
    ctrl(&mut app, 'u');
    assert_eq!(app.view().input, "r");
    let status = status_rows(&draw(&mut app, 100, 30));
    assert!(status.contains(" /▏r"), "{status}");
}

#[test]
fn the_filter_reopens_selected_and_history_recalls() {
    let mut app = demo();
    app.update(Msg::Action(Action::StartFilter));
    app.type_text("status:error");
    app.press(KeyCode::Enter);
    // Reopened: the old text is selected, so typing replaces it (it used to append).
    app.update(Msg::Action(Action::StartFilter));
    assert_eq!(app.view().input, "status:error");
    assert!(app.view().input_selected);
    app.type_text("tool:Bash");
    assert_eq!(app.view().input, "tool:Bash");
    app.press(KeyCode::Enter);
    // Up walks back through the committed filters, Down forward to an empty line.
    app.update(Msg::Action(Action::StartFilter));
    app.press(KeyCode::Up);
    assert_eq!(app.view().input, "tool:Bash");
    app.press(KeyCode::Up);
    assert_eq!(app.view().input, "status:error");
    app.press(KeyCode::Down);
    app.press(KeyCode::Down);
    assert_eq!(app.view().input, "");
    // A selected text: Right keeps it and puts the cursor at its end for editing.
    app.press(KeyCode::Esc);
    app.update(Msg::Action(Action::StartFilter));
    app.press(KeyCode::Right);
    app.type_text(" x");
    assert_eq!(app.view().input, "tool:Bash x");
}
