//! The session browser on `TestBackend`: fake Claude Code projects in a tempdir, a filter, and
//! the empty state.

use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rawpv::browse::Browser;
use rawpv::theme::Theme;

fn draw(b: &Browser) -> Terminal<TestBackend> {
    let mut term = Terminal::new(TestBackend::new(90, 8)).expect("backend");
    term.draw(|f| {
        let area = f.area();
        rawpv::ui::browser::render_browser(area, f.buffer_mut(), b, &Theme::dark());
    })
    .expect("draw");
    term
}

fn user(ts: &str, text: &str) -> String {
    format!(
        r#"{{"type":"user","timestamp":"{ts}","message":{{"role":"user","content":"{text}"}}}}"#
    ) + "\n"
}

#[test]
fn browser_lists_and_filters() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("projects");
    for (proj, file, ts, text) in [
        (
            "-home-me-alpha",
            "a.jsonl",
            "2026-11-01T10:00:00Z",
            "Fix the parser",
        ),
        (
            "-home-me-beta",
            "b.jsonl",
            "2026-11-02T09:00:00Z",
            "Add a README \\u001b[31mred",
        ),
        (
            "-home-me-alpha",
            "c.jsonl",
            "2026-10-30T08:30:00Z",
            "Refactor the lexer",
        ),
    ] {
        let dir = root.join(proj);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join(file), user(ts, text)).expect("write");
    }
    let mut b = Browser::scan(&[root]);
    b.move_by(1);
    assert_snapshot!("browser_list", draw(&b).backend());
    b.set_filter("lexer");
    assert_snapshot!("browser_filtered", draw(&b).backend());
}

#[test]
fn browser_empty_says_how_to_start() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let b = Browser::scan(&[tmp.path().join("none")]);
    assert_snapshot!("browser_empty", draw(&b).backend());
}

#[test]
fn esc_in_a_viewer_opened_from_the_browser_goes_back() {
    let items = rawpv::import::load_bytes(rawpv::source::DEMO.as_bytes()).items;
    let mut app = rawpv::app::App::headless(items.clone(), "demo");
    app.set_from_browser(true);
    app.press(crossterm::event::KeyCode::Esc);
    assert!(
        app.quitting(),
        "Esc with nothing to close leaves the viewer"
    );
    let mut plain = rawpv::app::App::headless(items, "demo");
    plain.press(crossterm::event::KeyCode::Esc);
    assert!(!plain.quitting(), "outside the browser Esc never quits");
}

/// Claude Code, Codex and Gemini sessions in their usual places, one list with the agent column.
#[test]
fn browser_lists_each_agent() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path();
    let write = |dir: std::path::PathBuf, name: &str, body: &str| {
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join(name), body).expect("write");
    };
    write(
        home.join(".claude/projects/-home-me-alpha"),
        "a.jsonl",
        &user("2026-11-01T10:00:00Z", "Fix the parser"),
    );
    write(
        home.join(".codex/sessions/2026/11/02"),
        "rollout-2026-11-02T09-00-00-019a.jsonl",
        concat!(
            r#"{"timestamp":"2026-11-02T09:00:00.000Z","type":"session_meta","payload":{"id":"019a","cwd":"/home/me/beta","originator":"codex-tui"}}"#,
            "\n",
            r#"{"timestamp":"2026-11-02T09:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"run the tests"}}"#,
            "\n",
        ),
    );
    write(
        home.join(".gemini/tmp/0123456789abcdef/chats"),
        "session-2026-11-03T08-00-7c1d.json",
        "{\n  \"sessionId\": \"7c1d\",\n  \"projectHash\": \"0123456789abcdef\",\n  \"startTime\": \"2026-11-03T08:00:00.000Z\",\n  \"messages\": [{\"id\": \"1\", \"type\": \"user\", \"content\": \"rename foo\"}]\n}\n",
    );
    let b = Browser::scan(&rawpv::browse::roots_from(Some(home), None, &[]));
    assert_snapshot!("browser_each_agent", draw(&b).backend());
}

/// Issue 22 item 1 in the browser: projects under the home are shown from `~`, the project
/// column is as wide as they need (up to a third of the row) and a longer one loses its middle,
/// so projects that share a long head are told apart; a Claude Code project is its records'
/// `cwd` (`my-app`, not the directory name's `my/app`).
#[test]
fn browser_projects_keep_their_tails() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("projects");
    for (proj, cwd, text) in [
        (
            "-home-user-workspace-clarity-engine-service",
            "/home/user/workspace/clarity-engine-service",
            "Fix the service",
        ),
        (
            "-home-user-workspace-clarity-engine-worker",
            "/home/user/workspace/clarity-engine-worker",
            "Fix the worker",
        ),
        ("-home-user-my-app", "/home/user/my-app", "Rename the app"),
        (
            "-srv-deep-a-b-c-d-e-f-g-tools",
            "/srv/deep/a/b/c/d/e/f/g/tools",
            "Elsewhere",
        ),
    ] {
        let dir = root.join(proj);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let rec = format!(
            r#"{{"type":"user","timestamp":"2026-11-01T10:00:00Z","cwd":"{cwd}","sessionId":"s","message":{{"role":"user","content":"{text}"}}}}"#
        ) + "\n";
        std::fs::write(dir.join("s.jsonl"), rec).expect("write");
    }
    let b = Browser::scan(&[root]).with_home(Some("/home/user".into()));
    let mut term = Terminal::new(TestBackend::new(80, 8)).expect("backend");
    term.draw(|f| {
        let area = f.area();
        rawpv::ui::browser::render_browser(area, f.buffer_mut(), &b, &Theme::dark());
    })
    .expect("draw");
    let buf = term.backend().buffer();
    let rows: Vec<String> = (0..buf.area.height)
        .map(|y| (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect())
        .collect();
    let shows = |needle: &str| rows.iter().any(|r| r.contains(needle));
    // 80 columns: the column is 26 wide (a third of the list); the tails stay.
    assert!(shows("~/…/clarity-engine-service "), "{rows:#?}");
    assert!(shows("~/…/clarity-engine-worker "), "{rows:#?}");
    assert!(shows("~/my-app "), "{rows:#?}");
    assert!(shows("/srv/…/a/b/c/d/e/f/g/tools "), "{rows:#?}");
    assert!(!shows("/home/user"), "{rows:#?}");
    assert_snapshot!("browser_project_tails", term.backend());
}
