//! When the session under the view changes wholesale (the source restarted, the oldest rows were
//! compacted away), the view is rebased by one
//! path: render results and panel counts from before are not shown for the rows after.

use ratatui::layout::Rect;
use rawpv::app::{App, Msg};
use rawpv::import;
use rawpv::source::{SourceMsg, SourceState};

use crate::support::headless;

/// One finished call whose output is `out`.
fn call(id: &str, out: &str) -> String {
    format!(
        "{{\"type\":\"tool.invoke.request\",\"payload\":{{\"invocation_id\":\"{id}\",\"tool_name\":\"Bash\",\"input\":{{\"command\":\"echo\"}}}}}}\n\
         {{\"type\":\"tool.invoke.result\",\"payload\":{{\"invocation_id\":\"{id}\",\"status\":\"success\",\"output\":\"{out}\",\"output_type\":\"text\"}}}}\n"
    )
}

fn batch(app: &mut App, text: &str) {
    app.update(Msg::Source(SourceMsg::Batch(
        import::load_bytes(text.as_bytes()).items,
    )));
}

fn detail_text(app: &App) -> String {
    rawpv::render::lines_to_string(app.detail_lines())
}

#[test]
fn a_render_started_before_a_restart_is_not_shown_after_it() {
    // Live: the detail renders off the app task in stages (the shown screens, every row plain,
    // every row highlighted). Count them, then hold the last one until after the restart.
    let stages = |app: &mut App, hold_last: Option<usize>| {
        let mut n = 0;
        loop {
            app.prepare(Rect::new(0, 0, 120, 40));
            let jobs = app.take_jobs();
            if jobs.is_empty() || hold_last == Some(n + 1) {
                return (n, jobs);
            }
            n += 1;
            for job in jobs {
                app.update(Msg::Rendered(job.run()));
            }
        }
    };
    let mut probe = App::new("live", true);
    batch(&mut probe, &call("a", "OLD-OUTPUT"));
    let (n, _) = stages(&mut probe, None);
    let mut app = App::new("live", true);
    batch(&mut app, &call("a", "OLD-OUTPUT"));
    let (_, old_jobs) = stages(&mut app, Some(n));
    assert!(!old_jobs.is_empty(), "the last stage is a job");
    app.update(Msg::Source(SourceMsg::State(SourceState::Restarted {
        reason: "file truncated".into(),
    })));
    batch(&mut app, &call("a", "NEW-OUTPUT"));
    for job in old_jobs {
        app.update(Msg::Rendered(job.run()));
    }
    for _ in 0..3 {
        app.prepare(Rect::new(0, 0, 120, 40));
        app.run_jobs_inline();
    }
    let text = detail_text(&app);
    assert!(
        !text.contains("OLD-OUTPUT") && text.contains("NEW-OUTPUT"),
        "a render of the old session's row 0 is stale:\n{text}"
    );
}

#[test]
fn a_restart_recounts_the_problems_panel() {
    // One finding before and one after, of different levels: counts cached by the number of
    // findings must not survive the restart.
    let before = "this is not json\n";
    let after = "{\"type\":\"zzz.unknown\",\"payload\":{}}\n";
    let screen = |app: &mut App| {
        app.update(Msg::Action(rawpv::action::Action::ShowProblems));
        let s = headless::screen_text(&headless::draw(app, 120, 40));
        app.update(Msg::Action(rawpv::action::Action::ShowProblems));
        s
    };
    let mut fresh = App::new("live", true);
    batch(&mut fresh, after);
    let want = screen(&mut fresh);
    let mut app = App::new("live", true);
    batch(&mut app, before);
    let old = screen(&mut app);
    assert_ne!(old, want, "the two inputs have different findings");
    app.update(Msg::Source(SourceMsg::State(SourceState::Restarted {
        reason: "file truncated".into(),
    })));
    batch(&mut app, after);
    let got = screen(&mut app);
    // The status bar says the input restarted; the panel must be the fresh one.
    let panel = |s: &str| s.chars().take(120 * 38).collect::<String>();
    assert_eq!(panel(&got), panel(&want));
}

#[test]
fn compaction_drops_renders_of_the_old_row_numbers() {
    let mut app = App::new("live", true);
    app.session_mut().max_items = Some(10);
    let mut text = String::new();
    for k in 0..10 {
        text.push_str(&call(&format!("c{k}"), &format!("OUT-{k}-")));
    }
    batch(&mut app, &text);
    app.update(Msg::Action(rawpv::action::Action::Top));
    app.prepare(Rect::new(0, 0, 120, 40));
    let old_jobs = app.take_jobs();
    // Three more calls: past the cap, the oldest rows go and row numbers shift.
    let mut more = String::new();
    for k in 10..13 {
        more.push_str(&call(&format!("c{k}"), &format!("OUT-{k}-")));
    }
    batch(&mut app, &more);
    assert!(app.session().dropped_items > 0, "compacted");
    for job in old_jobs {
        app.update(Msg::Rendered(job.run()));
    }
    app.prepare(Rect::new(0, 0, 120, 40));
    app.run_jobs_inline();
    let sel = app.view().selected_item(app.session()).expect("a row");
    let want = match &app.session().items[sel] {
        rawpv::session::Item::Invocation(k) => app.session().invocations[*k].invocation_id.clone(),
        _ => panic!("calls only"),
    };
    let n: usize = want[1..].parse().expect("cN");
    assert!(
        detail_text(&app).contains(&format!("OUT-{n}-")),
        "the detail shows the selected call {want}:\n{}",
        detail_text(&app)
    );
}
