//! Claude Code fork points (issue 16): the decoder's `x-claude-code.fork` frames are facts that
//! stay true as a stream goes on; the fork table (`rawpv::session::forks`) reads the branch
//! count and the main line (the branch leading to the latest record) from them; the viewer
//! shows ONE row per fork point whose count is true at every moment and folds the other
//! branches (command-only ones included) in place; stats and check count and list them.
//! On the 1.0.43 corpus transcript (one fork point, line 62, three command-only branches), the
//! rewind fixture (main line = last branch) and `cc_fork_main_first.jsonl` (main line = the
//! first branch: the conversation went back to it after the second).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use crate::support::headless::{act, draw, screen_text};
use rawpv::action::Action;
use rawpv::app::{App, Msg};
use rawpv::session::forks::{ForkPoint, ForkTable};
use rawpv::session::{Item, Session};
use rawpv::source::SourceMsg;
use serde_json::json;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

fn corpus_1_0_43() -> Option<PathBuf> {
    crate::support::corpus::dir("claude-code")
        .map(|d| d.join("cc-v1.0.43-image-hooks-multiedit.jsonl"))
}

fn load(path: &Path) -> Session {
    rawpv::source::file::fold_path(path).unwrap().0
}

/// The payloads of the session's fork frames, in order.
fn fork_frames(s: &Session) -> Vec<serde_json::Value> {
    s.items
        .iter()
        .filter_map(|it| match it {
            Item::Event(f) if f.frame_type.as_str() == "x-claude-code.fork" => {
                Some(f.payload_json())
            }
            _ => None,
        })
        .collect()
}

/// The item of the first main-agent row made from transcript line `line`.
fn item_of_line(s: &Session, line: u64) -> usize {
    s.items
        .iter()
        .position(|it| match it {
            Item::Message(m) => m.line == line,
            Item::Invocation(k) => s.invocations[*k].request_line == line,
            Item::Event(f) => f.origin.line == line,
        })
        .unwrap()
}

fn fork_item(s: &Session, nth: usize) -> usize {
    s.items
        .iter()
        .enumerate()
        .filter(
            |(_, it)| matches!(it, Item::Event(f) if f.frame_type.as_str() == "x-claude-code.fork"),
        )
        .nth(nth)
        .unwrap()
        .0
}

fn app_for(path: &Path) -> App {
    let items = rawpv::import::load_path(path).unwrap().items;
    let mut app = App::headless(items, &path.file_name().unwrap().to_string_lossy());
    act(&mut app, &[Action::Top]);
    app
}

/// The feed rows (left pane, 80 columns at most) that are fork rows.
fn fork_rows(text: &str, width: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(width)
        .map(|r| r.iter().collect::<String>())
        .filter(|r| r.contains("fork ·"))
        .collect()
}

#[test]
fn the_1_0_43_fork_frames_are_facts_and_its_table_has_three_branches_the_third_main() {
    let Some(path) = corpus_1_0_43() else {
        return;
    };
    let s = load(&path);
    let parent = "faa89ae6-1b21-4d05-b6fb-31c904bcb21c";
    assert_eq!(
        fork_frames(&s),
        [
            json!({"parentUuid": parent, "parent_line": 62, "first_line": 63, "branch": 2, "line": 65}),
            json!({"parentUuid": parent, "parent_line": 62, "first_line": 63, "branch": 3, "line": 67}),
        ]
    );
    let (row, mark) = (fork_item(&s, 0), fork_item(&s, 1));
    assert_eq!(
        ForkTable::build(&s),
        ForkTable {
            points: vec![ForkPoint {
                parent: parent.to_owned(),
                parent_line: 62,
                row,
                lines: vec![63, 65, 67],
                segments: vec![(item_of_line(&s, 63), 1), (row, 2), (mark, 3)],
                folded: true,
            }],
            marks: vec![mark],
        }
    );
    assert_eq!(
        rawpv::session::forks::sentence(&s, row).unwrap(),
        "Fork point at line 62: the conversation branches here into 3 branches (a rewind or a retried prompt): branch 1 from line 63, branch 2 from line 65, branch 3 from line 67. The main line is branch 3, the one that leads to the session's latest record. Folded, this row hides branches 1 and 2 (4 rows); x folds and unfolds them."
    );
    // The third branch's frame is a mark, a row only while the fork point is unfolded; the row
    // is a turn start.
    let t = ForkTable::build(&s);
    assert!(t.hidden(mark) && !t.hidden(row));
    let mut open = t.clone();
    open.points[0].folded = false;
    assert!(!open.hidden(mark));
    assert!(rawpv::session::query::is_turn_start(&s, row));
    assert!(!rawpv::session::query::is_turn_start(&s, mark));
}

#[test]
fn the_rewind_fixture_table_has_its_last_branch_as_main_line() {
    let s = load(&fixture("cc_fork_rewind.jsonl"));
    let parent = "f0000000-0000-4000-8000-000000000004";
    assert_eq!(
        fork_frames(&s),
        [json!({"parentUuid": parent, "parent_line": 4, "first_line": 5, "branch": 2, "line": 8})]
    );
    let row = fork_item(&s, 0);
    assert_eq!(
        ForkTable::build(&s).points,
        [ForkPoint {
            parent: parent.to_owned(),
            parent_line: 4,
            row,
            lines: vec![5, 8],
            segments: vec![(item_of_line(&s, 5), 1), (row, 2)],
            folded: true,
        }]
    );
}

#[test]
fn a_fork_whose_main_line_is_not_the_last_branch_in_file_order() {
    let path = fixture("cc_fork_main_first.jsonl");
    let s = load(&path);
    let parent = "f1000000-0000-4000-8000-000000000004";
    assert_eq!(
        fork_frames(&s),
        [
            json!({"parentUuid": parent, "parent_line": 4, "first_line": 5, "branch": 2, "line": 8}),
            json!({"resume": true, "parent_line": 7, "line": 10}),
        ]
    );
    let (row, resume) = (fork_item(&s, 0), fork_item(&s, 1));
    let t = ForkTable::build(&s);
    assert_eq!(
        t.points,
        [ForkPoint {
            parent: parent.to_owned(),
            parent_line: 4,
            row,
            lines: vec![5, 8],
            segments: vec![(item_of_line(&s, 5), 1), (row, 2), (resume, 1)],
            folded: true,
        }]
    );
    assert_eq!(t.points[0].main(), 1);
    let forks: Vec<(u64, String)> = s
        .findings
        .iter()
        .filter(|f| f.code == rawpv::finding::code::FORK)
        .map(|f| (f.line, f.message.clone()))
        .collect();
    assert_eq!(
        forks,
        [(
            4,
            "fork point: the conversation branches here into 2 branches (a rewind or a retried prompt); the main line is branch 1 (from line 5), the one that leads to the session's last record".to_owned()
        )]
    );
    // The second branch (lines 8-9: prompt, reply, turn end) is what the fold hides; the first branch stays, before and
    // after the row.
    let mut app = app_for(&path);
    let text = screen_text(&draw(&mut app, 200, 60));
    assert!(!text.contains("Rename b.rs"), "{text}");
    assert!(
        text.contains("Delete b.rs") && text.contains("Deleted."),
        "{text}"
    );
    assert_eq!(
        fork_rows(&text, 200)
            .iter()
            .map(|r| r
                .split("┄┄ ")
                .nth(1)
                .unwrap()
                .trim_end_matches(['┄', ' ', '│'])
                .to_owned())
            .collect::<Vec<_>>(),
        ["▸ fork · 2 branches · main line: 1 · 1 folded (3 rows)"]
    );
}

/// Folded and unfolded, at 80x24 (the fork row selected) and 200x60, as a user sees it.
#[test]
fn fork_feeds_folded_and_unfolded_snapshots() {
    let mut files = vec![
        ("rewind", fixture("cc_fork_rewind.jsonl")),
        ("main_first", fixture("cc_fork_main_first.jsonl")),
    ];
    if let Some(p) = corpus_1_0_43() {
        files.push(("v1_0_43", p));
    }
    for (name, path) in files {
        let mut app = app_for(&path);
        let row = app
            .view()
            .row_of(fork_item(app.session(), 0))
            .expect("the fork row is shown");
        app.select(row);
        for state in ["folded", "unfolded"] {
            if state == "unfolded" {
                act(&mut app, &[Action::ToggleFold]);
            }
            for (w, h) in [(80, 24), (200, 60)] {
                insta::assert_snapshot!(
                    format!("cc_fork_{name}_{state}_{w}x{h}"),
                    draw(&mut app, w, h).backend()
                );
            }
        }
        // Unfolded, every row that passes the filter is shown: every branch can be reached.
        let v = app.view();
        let n = app.session().items.len();
        let shown: Vec<usize> = (0..v.row_count(app.session()))
            .filter_map(|r| v.item_at(r))
            .collect();
        let filtered: Vec<usize> = (0..v.filtered_count(app.session()))
            .filter_map(|k| v.filtered_at(k))
            .collect();
        assert_eq!(shown, filtered, "{name} ({n} items)");
        act(&mut app, &[Action::ToggleFold]);
        assert!(app.view().forks.points[0].folded, "{name}");
    }
}

/// Streamed one decoded item at a time: at every moment there is at most one fork row, and its
/// count is the number of branches seen so far (never the "2 branches" of an earlier moment
/// once the third arrived); the command-only branches are all reachable at the end.
#[test]
fn the_1_0_43_fork_row_is_true_at_every_moment_of_a_stream() {
    let Some(path) = corpus_1_0_43() else {
        return;
    };
    let items = rawpv::import::load_path(&path).unwrap().items;
    let mut app = App::headless(Vec::new(), "stream");
    let mut forks_seen = 0;
    let mut counts = Vec::new();
    for d in items {
        if let rawpv::import::Decoded::Frame(f) = &d
            && f.frame_type.as_str() == "x-claude-code.fork"
        {
            forks_seen += 1;
        }
        app.update(Msg::Source(SourceMsg::Batch(vec![d])));
        act(&mut app, &[Action::Bottom]);
        let text = screen_text(&draw(&mut app, 200, 60));
        let rows = fork_rows(&text, 200);
        assert!(rows.len() <= 1, "{rows:?}");
        if forks_seen > 0 {
            let want = format!("fork · {} branches", forks_seen + 1);
            assert_eq!(rows.len(), 1, "{text}");
            assert!(rows[0].contains(&want), "{} lacks {want}", rows[0]);
            counts.push(forks_seen + 1);
        }
    }
    counts.dedup();
    assert_eq!(counts, [2, 3]);
    // Every branch can be reached: unfolding shows /doctor, /status and /mcp.
    let row = app.view().row_of(fork_item(app.session(), 0)).unwrap();
    app.select(row);
    let folded = screen_text(&draw(&mut app, 200, 60));
    assert!(!folded.contains("/doctor") && !folded.contains("/status"));
    assert!(folded.contains("/mcp"));
    act(&mut app, &[Action::ToggleFold, Action::Bottom]);
    let text = screen_text(&draw(&mut app, 200, 100));
    for cmd in ["/doctor", "/status", "/mcp"] {
        assert!(text.contains(cmd), "{cmd}: {text}");
    }
}

#[test]
fn stats_counts_the_fork_points_and_branches() {
    let mut cases = vec![(
        fixture("cc_fork_main_first.jsonl"),
        "1 fork point · 2 branches",
    )];
    if let Some(p) = corpus_1_0_43() {
        cases.push((p, "1 fork point · 3 branches"));
    }
    for (path, want) in cases {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rawpv"))
            .arg("stats")
            .arg(&path)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text.lines().find(|l| l.starts_with("forks")).unwrap();
        assert_eq!(
            line,
            format!("forks        {want} (tokens above count every branch)")
        );
    }
}

/// The viewer keeps a Claude Code transcript's progress/system/… payloads in the file
/// (`Session::defer_events`): each such row holds only its summary, reads back the very payload
/// a session that keeps them holds, and shows the same feed text.
#[test]
fn deferred_event_payloads_read_back_equal_to_the_kept_ones() {
    let Some(dir) = crate::support::corpus::dir("claude-code") else {
        return;
    };
    let path = dir.join("cc-v2.1.38-task-subagent-progress.jsonl");
    let kept = load(&path);
    let mut s = Session::new();
    s.defer_events = true;
    let (deferred, _) = rawpv::source::file::fold_path_into(&path, s).unwrap();
    assert_eq!(kept.items.len(), deferred.items.len());
    let mut n = 0;
    for (a, b) in kept.items.iter().zip(&deferred.items) {
        let (Item::Event(a), Item::Event(b)) = (a, b) else {
            continue;
        };
        let stand_in = b.payload_json();
        if stand_in.get(rawpv::session::DEFERRED_EVENT).is_some() {
            n += 1;
            assert_eq!(stand_in.as_object().unwrap().len(), 1, "{stand_in}");
        }
        assert_eq!(
            deferred.event_payload(b),
            a.payload_json(),
            "line {}",
            a.origin.line
        );
    }
    // Its system, queue-operation and waiting progress rows (hook_progress records are hook
    // rows since they are tied to their calls, and hook rows keep their payload).
    assert!(n >= 4, "{n} deferred");
    let theme = rawpv::theme::Theme::default();
    let row = |s: &Session, i| {
        rawpv::ui::feed::build_row(s, i, 200, &theme, None, rawpv::ui::feed::Fold::None)
    };
    for i in 0..kept.items.len() {
        assert_eq!(row(&kept, i), row(&deferred, i), "row {i}");
    }
}

/// A fork row also starts a turn, and so does a slash command (issue 20): the main line after
/// the fork starts with the `/mcp` prompt, so x on its last row folds the `/mcp` turn and x on
/// the prompt gives it back, the fork fold kept (before issue 20 the command was a dim row and
/// the rows after the fork row were the fork row's turn).
#[test]
fn x_on_a_fork_row_gives_back_a_main_line_folded_as_a_turn() {
    let Some(path) = corpus_1_0_43() else {
        return;
    };
    let mut app = app_for(&path);
    let fork = fork_item(app.session(), 0);
    let shown = |app: &App| -> Vec<usize> {
        let v = app.view();
        (0..v.row_count(app.session()))
            .filter_map(|r| v.item_at(r))
            .collect()
    };
    let before = shown(&app);
    let after_fork = *before.last().unwrap();
    assert!(after_fork > fork, "the main line follows the fork row");
    let prompt = before
        .iter()
        .copied()
        .find(|&i| i > fork && rawpv::session::query::is_prompt(app.session(), i))
        .unwrap();
    match &app.session().items[prompt] {
        Item::Message(m) => assert_eq!(m.text, "/mcp"),
        other => panic!("not a prompt: {other:?}"),
    }
    app.select(app.view().row_of(after_fork).unwrap());
    act(&mut app, &[Action::ToggleFold]);
    assert!(
        !shown(&app).contains(&after_fork),
        "the turn fold hides the command's output"
    );
    app.select(app.view().row_of(prompt).unwrap());
    act(&mut app, &[Action::ToggleFold]);
    assert_eq!(shown(&app), before);
    assert!(app.view().forks.points[0].folded, "the fork fold is kept");
}

/// A fork inside a subagent's run (an inline sidechain retried from its prompt): `check` lists
/// it as an info that says no branch of it is the session's main line, and why, instead of
/// suggesting a main-agent fork with no main line.
#[test]
fn a_fork_inside_a_subagent_run_is_an_info_that_says_why_it_has_no_main_line() {
    let s = load(&fixture("cc_fork_in_subagent.jsonl"));
    let forks: Vec<(u64, &str)> = s
        .findings
        .iter()
        .filter(|f| f.code == "fork")
        .map(|f| (f.line, f.message.as_str()))
        .collect();
    assert_eq!(
        forks,
        [(
            3,
            "fork point: the conversation branches here into 2 branches (a rewind or a retried prompt); no branch of it leads to the session's last record (a fork inside a subagent run, or one whose branches all ended)"
        )]
    );
    // Both tries are shown, under the Task.
    let texts: Vec<&str> = s
        .items
        .iter()
        .filter_map(|it| match it {
            Item::Message(m) if !m.delegation_chain.is_empty() => Some(m.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["sub prompt", "first try", "second try"]);
}
