//! Screen snapshots of the viewer on `TestBackend` (100x30): the demo, help, search, filter.
//!
//! Headless: the app is built from decoded items, driven with actions and keys, and drawn.

use insta::assert_snapshot;
use rawpv::action::Action;
use rawpv::app::{App, Msg};
use rawpv::import;

use crate::support::headless;
use headless::{act, draw, screen_text, status_rows};

fn demo() -> App {
    App::headless(headless::demo_items(), "demo")
}

#[test]
fn demo_feed_and_detail() {
    let mut app = demo();
    act(&mut app, &[Action::NextPrompt, Action::MoveDown]);
    let term = draw(&mut app, 100, 30);
    assert_snapshot!("demo_feed_and_detail", term.backend());
}

const SESSION: &str = include_str!("../fixtures/tui_session.jsonl");

fn session() -> App {
    App::headless(
        import::load_bytes(SESSION.as_bytes()).items,
        "tui_session.jsonl",
    )
}

#[test]
fn session_subagent_call_selected() {
    let mut app = session();
    // Rows: catalog, prompt, thinking, agent, c1, c2, t1, s1 …
    app.select(7);
    let term = draw(&mut app, 100, 30);
    assert_snapshot!("session_subagent_call", term.backend());
}

#[test]
fn session_failed_call_with_stream_mismatch() {
    let mut app = session();
    act(&mut app, &[Action::NextError]);
    let term = draw(&mut app, 100, 30);
    assert_snapshot!("session_failed_call", term.backend());
}

#[test]
fn help_popup() {
    let mut app = session();
    act(&mut app, &[Action::ToggleHelp]);
    let term = draw(&mut app, 100, 30);
    assert_snapshot!("help_popup", term.backend());
}

#[test]
fn search_highlights_matches() {
    let mut app = session();
    act(&mut app, &[Action::StartSearch]);
    app.type_text("unwrap");
    app.press(crossterm::event::KeyCode::Enter);
    let term = draw(&mut app, 100, 30);
    assert_snapshot!("search_unwrap", term.backend());
    // Every drawn occurrence of "unwrap" carries the search style.
    let buf = term.backend().buffer();
    let style = app.theme().search_match;
    let mut hits = 0;
    for y in 0..buf.area.height {
        let row: String = (0..buf.area.width)
            .map(|x| buf[(x, y)].symbol().to_owned())
            .collect();
        let chars: Vec<char> = row.chars().collect();
        for x in 0..chars.len().saturating_sub(5) {
            if chars[x..x + 6]
                .iter()
                .collect::<String>()
                .eq_ignore_ascii_case("unwrap")
            {
                let cell = &buf[(x as u16, y)];
                assert_eq!(
                    cell.bg,
                    style.bg.unwrap_or_default(),
                    "row {y} col {x}: {row}"
                );
                hits += 1;
            }
        }
    }
    assert!(hits >= 2, "expected highlighted matches, found {hits}");
}

#[test]
fn filter_by_tool_keeps_matching_rows() {
    let mut app = session();
    act(&mut app, &[Action::StartFilter]);
    app.type_text("tool:bash");
    app.press(crossterm::event::KeyCode::Enter);
    let term = draw(&mut app, 100, 30);
    assert_snapshot!("filter_tool_bash", term.backend());
}

/// A filter that leaves no row says how to clear it, with the key bound to that.
#[test]
fn an_empty_filter_result_says_how_to_clear_it() {
    let mut app = session();
    act(&mut app, &[Action::StartFilter]);
    app.type_text("tool:NoSuchTool");
    app.press(crossterm::event::KeyCode::Enter);
    let term = draw(&mut app, 100, 30);
    let screen = screen_text(&term);
    assert!(
        screen.contains("no rows match the filter (Esc clears it)"),
        "{screen}"
    );
    act(&mut app, &[Action::Cancel]);
    assert!(app.view().filter.is_none());
}

/// A file of nothing but bad lines says so instead of looking like one still loading.
#[test]
fn a_file_of_only_bad_lines_says_so() {
    let mut app = App::headless(
        import::load_bytes(b"not json\n{also not\n").items,
        "bad.ndjson",
    );
    let term = draw(&mut app, 100, 30);
    let screen = screen_text(&term);
    assert!(
        screen.contains("no frame: 2 malformed lines (! lists them)"),
        "{screen}"
    );
}

#[test]
fn running_call_streams_live() {
    let mut app = App::new("live", true);
    app.update(Msg::Source(rawpv::source::SourceMsg::Batch(
        import::load_bytes(SESSION.as_bytes()).items,
    )));
    // Live: the last row stays selected; select the running `cargo test`.
    act(&mut app, &[Action::MoveUp]);
    let term = draw(&mut app, 100, 30);
    assert_snapshot!("running_call_live", term.backend());
}

/// A real Claude Code transcript (inline sidechain Task), through the importer.
#[test]
fn corpus_claude_code_task_with_subagent() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/claude-code/cc-v1.0.108-inline-sidechain-task.jsonl"
    );
    if crate::support::corpus::skipped(std::path::Path::new(path)) {
        return;
    }
    let Ok(bytes) = std::fs::read(path) else {
        panic!("cannot read {path}");
    };
    let mut app = App::headless(
        import::load_bytes(&bytes).items,
        "cc-v1.0.108-inline-sidechain-task.jsonl",
    );
    // Second error: a subagent's Bash call whose output is an `lsd --tree` listing.
    act(&mut app, &[Action::NextError, Action::NextError]);
    let term = draw(&mut app, 100, 30);
    assert_snapshot!("corpus_cc_sidechain_error", term.backend());
}

#[test]
fn a_bad_regex_says_why_on_one_line() {
    let mut app = session();
    act(&mut app, &[Action::StartSearch]);
    app.type_text("unwrap(");
    // While typing, the prompt row says why it does not compile yet.
    let typing = status_rows(&draw(&mut app, 100, 30));
    assert_snapshot!("bad_regex_typing", typing);
    app.press(crossterm::event::KeyCode::Enter);
    assert_eq!(
        app.view().message.as_deref(),
        Some("bad regex: unclosed group at 7")
    );
    assert_eq!(app.view().input_problem, None);
    let term = draw(&mut app, 100, 30);
    assert_snapshot!("bad_regex_status", status_rows(&term));
    // A bad regex after a good one keeps the good one: its highlighting, count and `n`.
    app.set_search("unwrap");
    act(&mut app, &[Action::StartSearch]);
    app.type_text("(");
    app.press(crossterm::event::KeyCode::Enter);
    assert_eq!(app.view().search.as_deref(), Some("unwrap"));
    assert!(
        app.search_regex().is_some(),
        "the committed search still highlights"
    );
    assert_eq!(
        app.match_status().map(|m| m.to_string()).as_deref(),
        Some("match 1/3")
    );
    act(&mut app, &[Action::SearchNext]);
    assert_eq!(
        app.match_status().map(|m| m.to_string()).as_deref(),
        Some("match 2/3")
    );
}

#[test]
fn a_narrow_status_bar_keeps_the_filter_search_and_count() {
    // On 80 columns the long source label and the counts used to push the filter, the search and
    // its count off the row; now the label keeps its end (the file name) and the counts give way.
    let mut app = App::headless(
        import::load_bytes(SESSION.as_bytes()).items,
        "/home/user/projects/some-long-project-name/sessions/tui_session.jsonl",
    );
    app.set_filter(rawpv::query::Filter::parse("tool:Read"));
    app.set_search("unwrap");
    act(&mut app, &[Action::SearchNext]);
    let narrow = status_rows(&draw(&mut app, 80, 24));
    let wide = status_rows(&draw(&mut app, 160, 24));
    assert_snapshot!("narrow_status", format!("{narrow}\n{wide}"));
}

/// Issue 22: at 80x24 the help is one column that scrolls; every binding's description is
/// drawn whole on one of its pages, and the border says what is below.
#[test]
fn help_fits_80x24_and_scrolls() {
    let mut app = session();
    act(&mut app, &[Action::ToggleHelp]);
    let term = draw(&mut app, 80, 24);
    assert_snapshot!("help_popup_80x24", term.backend());
    assert!(screen_text(&term).contains("below (j/k scroll)"));
    let mut seen = String::new();
    for _ in 0..6 {
        seen.push_str(&screen_text(&draw(&mut app, 80, 24)));
        app.press(crossterm::event::KeyCode::PageDown);
    }
    assert!(app.view().help, "paging keeps the help open");
    for b in app.keymap().bindings() {
        assert!(seen.contains(b.desc), "{:?} not shown whole", b.desc);
    }
    for l in rawpv::ui::help::HELP_FOOTER {
        assert!(seen.contains(l), "{l:?} not shown whole");
    }
    app.press(crossterm::event::KeyCode::Esc);
    assert!(!app.view().help);
}

/// Issue 22: a session that opens with summary records (no conversation) starts at its first
/// prompt, so the first 80x24 screen shows the conversation.
#[test]
fn first_screen_skips_header_rows_to_the_first_prompt() {
    let Some(dir) = crate::support::corpus::dir("claude-code") else {
        return;
    };
    let loaded = import::load_path(&dir.join("cc-v1.0.24-summaries-thinking.jsonl")).unwrap();
    let mut app = App::headless(loaded.items, "summaries");
    let term = draw(&mut app, 80, 24);
    let first = app.view().item_at(app.view().feed.offset).unwrap();
    assert!(
        rawpv::session::query::is_prompt(app.session(), first),
        "{}",
        screen_text(&term)
    );
    assert!(app.view().feed.offset >= 3);
    // The feed has most of the height: 13 of the 22 rows above the status bar.
    assert_eq!(app.areas().feed.height, 13);
    assert_snapshot!("first_screen_80x24", term.backend());
}
