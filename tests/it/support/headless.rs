//! Shared by the headless screen tests (`tui_screens`, `replay_player`, `tui_scan`): drive an
//! [`App`] with actions and draw it on ratatui's `TestBackend` the way the event loop does
//! (`prepare`, the render jobs run inline, `App::draw`).
//!
//! Include with `#[path = "support/headless.rs"] mod headless;`. Not every test file uses every
//! helper, hence `dead_code` is allowed.

#![allow(dead_code)]

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use rawpv::action::Action;
use rawpv::app::{App, Msg};
use rawpv::import::{self, Decoded};

/// The embedded demo session's items.
pub fn demo_items() -> Vec<Decoded> {
    import::load_bytes(rawpv::source::DEMO.as_bytes()).items
}

/// Lays `app` out on a `w`×`h` screen, runs its render jobs and draws it.
pub fn draw(app: &mut App, w: u16, h: u16) -> Terminal<TestBackend> {
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("test backend");
    app.prepare(Rect::new(0, 0, w, h));
    app.run_jobs_inline();
    term.draw(|f| app.draw(f)).expect("draw");
    term
}

/// Applies `actions` in order.
pub fn act(app: &mut App, actions: &[Action]) {
    for a in actions {
        app.update(Msg::Action(*a));
        // A scan's first step has a 4 ms budget: on a loaded machine it may stay pending, so
        // finish it here as the event loop would before the next key.
        app.finish_scans();
    }
}

/// The last two rows of a drawn screen (the status bar), as text.
pub fn status_rows(term: &Terminal<TestBackend>) -> String {
    let buf = term.backend().buffer();
    let (w, h) = (buf.area.width, buf.area.height);
    (h.saturating_sub(2)..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The whole drawn screen as one string (rows concatenated), for `contains` checks.
pub fn screen_text(term: &Terminal<TestBackend>) -> String {
    term.backend()
        .buffer()
        .content()
        .iter()
        .map(ratatui::buffer::Cell::symbol)
        .collect()
}
