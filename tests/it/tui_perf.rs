//! Draw-path cost on a large session (run with `--ignored`; prints timings, asserts loosely).
//!
//! The draw path must not grow with the session: drawing 40,000 calls costs about what drawing
//! 100 does, because only visible rows and visible detail lines are built.

use std::fmt::Write as _;
use std::time::Instant;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use rawpv::action::Action;
use rawpv::app::{App, Msg};
use rawpv::import;

fn synthetic(n: usize) -> Vec<u8> {
    let mut s = String::new();
    for i in 0..n {
        let ts = format!("2026-11-29T10:{:02}:{:02}.000Z", (i / 60) % 60, i % 60);
        let _ = writeln!(
            s,
            r#"{{"type":"tool.invoke.request","timestamp":"{ts}","payload":{{"invocation_id":"i{i}","tool_name":"Bash","input":{{"command":"echo {i}"}}}}}}"#
        );
        let _ = writeln!(
            s,
            r#"{{"type":"tool.invoke.result","timestamp":"{ts}","payload":{{"invocation_id":"i{i}","tool_name":"Bash","status":"success","output":"{i}\n","output_type":"text","duration_ms":5}}}}"#
        );
    }
    s.into_bytes()
}

fn draw_cost(n: usize) -> f64 {
    let items = import::load_bytes(&synthetic(n)).items;
    let t = Instant::now();
    let mut app = App::headless(items, "synthetic");
    eprintln!("{n} calls: ingest {:?}", t.elapsed());
    let mut term = Terminal::new(TestBackend::new(200, 60)).expect("backend");
    let rounds = 50;
    let (mut prep, mut draw) = (0.0, 0.0);
    for k in 0..rounds {
        app.update(Msg::Action(if k % 2 == 0 {
            Action::PageDown
        } else {
            Action::MoveDown
        }));
        let t = Instant::now();
        app.prepare(Rect::new(0, 0, 200, 60));
        prep += t.elapsed().as_secs_f64();
        let t = Instant::now();
        term.draw(|f| app.draw(f)).expect("draw");
        draw += t.elapsed().as_secs_f64();
    }
    let per = (prep + draw) * 1000.0 / f64::from(rounds);
    eprintln!(
        "{n} calls: per step at 200x60: prepare (detail render) {:.2} ms, draw {:.2} ms",
        prep * 1000.0 / f64::from(rounds),
        draw * 1000.0 / f64::from(rounds)
    );
    per
}

#[test]
#[ignore = "timing; run with --ignored"]
fn draw_cost_does_not_grow_with_the_session() {
    let small = draw_cost(100);
    let large = draw_cost(40_000);
    assert!(
        large < small * 5.0 + 5.0,
        "draw cost grew: {small:.2} ms → {large:.2} ms"
    );
}
