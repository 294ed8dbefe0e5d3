//! Issue 22 item 4: every toggle says in the status bar what it did, or why it did nothing.

use rawpv::action::Action;
use rawpv::app::{App, Msg};

use crate::support::headless::{demo_items, draw, status_rows};

fn said(app: &mut App, a: Action) -> String {
    app.update(Msg::Action(a));
    status_rows(&draw(app, 100, 30))
}

#[test]
fn toggles_say_what_they_did() {
    let mut app = App::headless(demo_items(), "demo");
    draw(&mut app, 100, 30);
    // The demo's first row is its catalog: F has no output to follow.
    assert!(said(&mut app, Action::Follow).contains("not a call with output"));
    let w = said(&mut app, Action::ToggleWrap);
    assert!(w.contains("wrap off"), "{w}");
    let w = said(&mut app, Action::ToggleWrap);
    assert!(w.contains("wrap on"), "{w}");
    let q = said(&mut app, Action::ToggleQuiet);
    assert!(q.contains("1 quiet row shown"), "{q}");
    let q = said(&mut app, Action::ToggleQuiet);
    assert!(q.contains("1 quiet row hidden"), "{q}");
    let o = said(&mut app, Action::ToggleExpand);
    assert!(o.contains("long output shown in full"), "{o}");
    let f = said(&mut app, Action::FeedWider);
    assert!(f.contains("up to 55% of the width"), "{f}");
    app.update(Msg::Action(Action::NextError));
    let f = said(&mut app, Action::Follow);
    assert!(f.contains("the call has finished"), "{f}");
}
