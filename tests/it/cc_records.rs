//! Issue 20: what a Claude Code session contains around its calls, read as a person reads it.
//! Hook runs (2.1.x `attachment` records, 1.0.x `system` records) tied to their call and listed
//! in its detail, quiet in the feed, a failed one said on the call's row; slash commands and
//! queued messages as prompts; `deferred_tools_delta` as catalog publishes; context attachments
//! quiet; ANSI in command output through the emulator; `print` without quiet rows unless
//! `--all`; one status vocabulary. On `tests/fixtures/cc_records_2_1.jsonl` (2.1.x shapes, from
//! claude-code-viewer's schemas and public transcripts; `/work/notes/cc-records.md`) and the
//! 1.0.43 and 2.0.55 corpus transcripts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use rawpv::action::Action;
use rawpv::app::App;
use rawpv::session::{Item, Session};

use crate::support::headless::{act, draw, screen_text};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cc_records_2_1.jsonl")
}

fn load(path: &Path) -> Session {
    rawpv::source::file::fold_path(path).unwrap().0
}

fn rawpv(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_rawpv"))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn app_for(path: &Path) -> App {
    let items = rawpv::import::load_path(path).unwrap().items;
    let mut app = App::headless(items, &path.file_name().unwrap().to_string_lossy());
    act(&mut app, &[Action::Top]);
    app
}

/// The prompt rows' texts of the file at `path`, in order.
fn prompts(path: &Path) -> Vec<String> {
    load(path)
        .items
        .iter()
        .filter_map(|it| match it {
            Item::Message(m) if m.kind == rawpv::session::MessageKind::Prompt => {
                Some(m.text.clone())
            }
            _ => None,
        })
        .collect()
}

/// Selects the feed row of item `item`.
fn select_item(app: &mut App, item: usize) {
    let row = app.view().row_of(item).unwrap();
    app.select(row);
}

#[test]
fn print_lists_what_the_fixture_says_and_hides_quiet_rows() {
    let p = fixture();
    let p = p.to_str().unwrap();
    assert_eq!(
        rawpv(&["print", p]),
        "prompt     /orchestrator create TODO app\n\
         x-claude-code.meta meta · # Orchestrator …\n\
         x-claude-code.hook UserPromptSubmit · context added · [skill-suggester] orchestrator matches\n\
         tool.catalog.publish +WebFetch +mcp__linear__list_issues · 2 tools\n\
         x-claude-code.attachment attachment · mcp instructions delta · +linear · added blocks 1\n\
         Bash       ok        hook failed · git commit -m \"$(cat <<'EOF' …  [toolu_01AAA]\n\
         prompt     also add a README\n\
         x-claude-code.attachment attachment · brand new kind · foo bar\n\
         tool.catalog.publish −mcp__linear__list_issues · 2 tools\n\
         agent      Committed, and the README is next.\n\
         x-claude-code.system system · away summary · Built the TODO model; next the README. (disable recaps in /config)\n\
         prompt     /context\n\
         x-claude-code.command command output: Context Usage ⛁ ⛀ ⛁ ⛁ claude-opus-4-5 · 20k/200k tokens (10%)\n\
         session.turn.end session.turn.end · stop reason end_turn\n"
    );
    let all = rawpv(&["print", "--all", p]);
    let quiet: Vec<&str> = all
        .lines()
        .filter(|l| !rawpv(&["print", p]).lines().any(|k| k == *l))
        .collect();
    assert_eq!(
        quiet,
        [
            "x-claude-code.attachment attachment · skill listing · content - orchestrator: plans work - reviewer: reviews diffs · is initial: yes",
            "x-claude-code.attachment attachment · deferred tools delta · +WebFetch +mcp__linear__list_issues",
            "x-claude-code.attachment attachment · companion intro · name Crumb · species owl",
            "tool.catalog.publish 3 tools published",
            "x-claude-code.hook PreToolUse:Bash · ok · exit 0 · 44ms · python3 ${CLAUDE_PLUGIN_ROOT}/hooks/pretooluse.py · {}",
            "x-claude-code.hook PostToolUse:Bash · failed · exit 1 · 93ms · ./hooks/lint.sh · lint failed: 2 problems",
            "x-claude-code.attachment attachment · task reminder · content 1 · item count 1",
            "x-claude-code.attachment attachment · deferred tools delta · −mcp__linear__list_issues",
            "session.usage in 10 · out 5 · cache read 0 tokens",
            "x-claude-code.system system · turn duration · duration ms 6.0s",
            "x-claude-code.mode mode normal",
            "x-claude-code.last-prompt last prompt",
            "x-claude-code.atis-latch atis latch",
            "session.usage in 12 · out 7 · cache read 0 tokens",
        ]
    );
    // Only the unknown types are "not understood"; every other record is read.
    assert_eq!(
        rawpv(&["check", p]).replace(p, "F"),
        "F:14: info[unrecognised-record] 1 record(s) of type \"attachment brand_new_kind\" not understood; kept as raw rows (SPEC 4)\n\
         F: 0 errors, 0 warnings, 1 info\n"
    );
}

#[test]
fn hooks_are_tied_to_their_call_and_listed_in_its_detail() {
    let s = load(&fixture());
    let bash = s
        .invocations
        .iter()
        .find(|i| i.tool_name == "Bash")
        .unwrap();
    let runs: Vec<_> = s
        .hooks
        .of(&bash.invocation_id)
        .map(|h| {
            (
                h.name.as_str(),
                h.outcome.as_str(),
                h.failed,
                h.exit_code,
                h.duration_ms,
                h.command.as_deref(),
                h.line,
            )
        })
        .collect();
    assert_eq!(
        runs,
        [
            (
                "PreToolUse:Bash",
                "success",
                false,
                Some(0),
                Some(44.0),
                Some("python3 ${CLAUDE_PLUGIN_ROOT}/hooks/pretooluse.py"),
                9
            ),
            (
                "PostToolUse:Bash",
                "non_blocking_error",
                true,
                Some(1),
                Some(93.0),
                Some("./hooks/lint.sh"),
                11
            ),
        ]
    );
    assert_eq!(s.hooks.failed(&bash.invocation_id), 1);
    let detail = rawpv(&[
        "print",
        "--detail",
        "--width",
        "80",
        fixture().to_str().unwrap(),
    ]);
    let hooks = detail.split("── Hooks").nth(1).unwrap();
    assert_eq!(
        format!("── Hooks{hooks}"),
        "── Hooks: 2 hooks, 1 failed ──\n\
         PreToolUse:Bash  ok  exit 0  44ms  line 9\n  \
         $ python3 ${CLAUDE_PLUGIN_ROOT}/hooks/pretooluse.py\n  \
         │ {}\n\
         PostToolUse:Bash  failed  exit 1  93ms  line 11\n  \
         $ ./hooks/lint.sh\n  \
         │ lint failed: 2 problems\n  \
         │ src/todo.rs:3 unused import\n\n"
    );
    // One command, one prompt: the heredoc commit reads as one command.
    let input = detail.split("── Input ──\n").nth(1).unwrap();
    assert!(
        input.starts_with(
            "# Commit\n$ git commit -m \"$(cat <<'EOF'\n  Add the TODO model\n  \n  Tests pass.\n  EOF\n  )\"\n"
        ),
        "{input}"
    );
}

#[test]
fn hooks_of_1_0_43_are_tied_with_their_duration() {
    let Some(dir) = crate::support::corpus::dir("claude-code") else {
        return;
    };
    let path = dir.join("cc-v1.0.43-image-hooks-multiedit.jsonl");
    let detail = rawpv(&[
        "print",
        "--detail",
        "--width",
        "100",
        path.to_str().unwrap(),
    ]);
    let sections: Vec<&str> = detail
        .split("── Hooks")
        .skip(1)
        .map(|s| s.split("\n\n").next().unwrap())
        .collect();
    assert_eq!(
        sections,
        [
            ": 1 hook ──\nPostToolUse:MultiEdit  ok  exit 0  33ms  line 37\n  $ uv run ruff format\n  │ 24 files left unchanged",
            ": 1 hook ──\nPostToolUse:MultiEdit  ok  exit 0  74ms  line 52\n  $ uv run ruff format\n  │ 24 files left unchanged",
        ]
    );
    // The Stop hooks name no call: rows of their own, visible; the tied ones are quiet.
    let print = rawpv(&["print", path.to_str().unwrap()]);
    let hooks = print
        .lines()
        .filter(|l| l.starts_with("x-claude-code.hook"))
        .count();
    assert_eq!(hooks, 4);
    assert!(
        print.contains(
            "x-claude-code.hook Stop · ok · exit 0 · uv run ruff check --fix 2>&1 · All checks passed!\n"
        ),
        "{print}"
    );
}

#[test]
fn slash_commands_and_queued_messages_are_prompts() {
    assert_eq!(
        prompts(&fixture()),
        [
            "/orchestrator create TODO app",
            "also add a README",
            "/context"
        ]
    );
    // `p` reaches the slash command, and its turn folds the expansion under it.
    let mut app = app_for(&fixture());
    act(
        &mut app,
        &[
            Action::Bottom,
            Action::PrevPrompt,
            Action::PrevPrompt,
            Action::PrevPrompt,
        ],
    );
    assert_eq!(app.view().selected_item(app.session()), Some(0));
    let rows = |app: &App| app.view().row_count(app.session());
    let before = rows(&app);
    act(&mut app, &[Action::ToggleFold]);
    assert!(rows(&app) < before);
}

#[test]
fn deferred_tools_deltas_are_catalog_publishes() {
    let s = load(&fixture());
    let catalogs: Vec<Vec<&str>> = s
        .publishes
        .iter()
        .map(|p| p.catalog.tools.iter().map(|t| t.name.as_str()).collect())
        .collect();
    assert_eq!(
        catalogs,
        [
            vec!["WebFetch", "mcp__linear__list_issues"],
            vec!["WebFetch", "mcp__linear__list_issues", "Bash"],
            vec!["WebFetch", "Bash"],
        ]
    );
}

#[test]
fn screens_show_hooks_prompts_and_command_output() {
    for (w, h) in [(80, 24), (200, 60)] {
        let mut app = app_for(&fixture());
        // The feed, the Bash call selected: its row says a hook failed, its detail lists both.
        let s = app.session();
        let bash = s
            .items
            .iter()
            .position(|it| matches!(it, Item::Invocation(_)))
            .unwrap();
        select_item(&mut app, bash);
        let term = draw(&mut app, w, h);
        let screen = screen_text(&term);
        assert!(screen.contains("hook failed · "), "{w}x{h}: {screen}");
        if w == 200 {
            assert!(
                screen.contains("PostToolUse:Bash  failed  exit 1  93ms"),
                "{screen}"
            );
        }
        assert_snapshot!(format!("cc_records_bash_{w}x{h}"), term.backend());
        // The `/context` output: SGR kept, the synchronized-output modes dropped.
        let cmd = app
            .session()
            .items
            .iter()
            .rposition(|it| matches!(it, Item::Event(f) if f.frame_type.as_str() == "x-claude-code.command"))
            .unwrap();
        select_item(&mut app, cmd);
        let term = draw(&mut app, w, h);
        let screen = screen_text(&term);
        assert!(
            !screen.contains('\u{1b}') && !screen.contains("[?2026"),
            "{screen}"
        );
        assert!(screen.contains("Context Usage"), "{screen}");
        assert_snapshot!(format!("cc_records_context_{w}x{h}"), term.backend());
    }
}

#[test]
fn context_output_of_2_0_55_is_drawn_by_the_emulator() {
    let Some(dir) = crate::support::corpus::dir("claude-code") else {
        return;
    };
    let path = dir.join("cc-v2.0.55-deep-manifest/a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl");
    let mut app = app_for(&path);
    let cmd = app
        .session()
        .items
        .iter()
        .position(
            |it| matches!(it, Item::Event(f) if f.frame_type.as_str() == "x-claude-code.command"),
        )
        .unwrap();
    select_item(&mut app, cmd);
    let term = draw(&mut app, 200, 60);
    let screen = screen_text(&term);
    // The row: no escape picture; the detail: the grid and its legend.
    assert!(!screen.contains("␛[?2026"), "{screen}");
    assert!(
        screen.contains("⛁ System prompt: 3.0k tokens (1.5%)"),
        "{screen}"
    );
    assert_snapshot!("cc_context_2_0_55_200x60", term.backend());
}

fn images_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cc_images.jsonl")
}

#[test]
fn images_are_placeholders_and_the_keys_save_their_bytes() {
    let p = images_fixture();
    let print = rawpv(&["print", p.to_str().unwrap()]);
    assert!(
        print.contains("x-claude-code.image image · image/png · 155 B · 64×48\n"),
        "{print}"
    );
    let detail = rawpv(&["print", "--detail", "--width", "80", p.to_str().unwrap()]);
    let out = detail.split("── Output (text) ──\n").nth(1).unwrap();
    assert_eq!(
        out,
        "Took the screenshot\n[image: image/png · 664 B · 320×200]\n\n"
    );
    assert!(
        !detail.contains("iVBOR"),
        "no base64 is ever shown: {detail}"
    );
    // The corpus image (1.0.43): its pixel size read from its header.
    if let Some(dir) = crate::support::corpus::dir("claude-code") {
        let c = dir.join("cc-v1.0.43-image-hooks-multiedit.jsonl");
        let print = rawpv(&["print", c.to_str().unwrap()]);
        assert!(
            print.contains("x-claude-code.image image · image/png · 766.4 KiB · 2000×1008\n"),
            "{print}"
        );
    }
    // `i` on the pasted image and on the screenshot call: the files hold the very bytes.
    let text = std::fs::read_to_string(&p).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let first = rawpv::import::image_meta::record_images(lines[0], None);
    let shot = rawpv::import::image_meta::record_images(lines[2], Some("toolu_shot"));
    assert_eq!((first.len(), shot.len()), (1, 1));
    assert_eq!(
        imagesize_of(&first[0].bytes),
        (64, 48),
        "the pasted image decodes"
    );
    assert_eq!(imagesize_of(&shot[0].bytes), (320, 200));
    assert!(rawpv::import::image_meta::record_images(lines[2], Some("other")).is_empty());
    // The headless app has no backing file: the bytes are not in memory, and it says so.
    let mut app = app_for(&p);
    let image_row = image_item(&app);
    select_item(&mut app, image_row);
    act(&mut app, &[Action::SaveImages]);
    assert_eq!(
        app.view().message.as_deref(),
        Some("the image's bytes are only in a saved file (open the transcript, not a stream)")
    );
    // As the viewer opens a saved file: `i` writes the pasted image, byte for byte.
    let mut app = App::new(p.display().to_string(), false);
    app.session_mut().backing = Some(std::sync::Arc::from(p.as_path()));
    app.update(rawpv::app::Msg::Source(rawpv::source::SourceMsg::Format(
        rawpv::import::Format::ClaudeCode,
    )));
    let opts = rawpv::source::file::ReadOptions {
        defer_outputs: true,
    };
    rawpv::source::file::read_path_with(&p, opts, |ev| {
        if let rawpv::source::file::FileEvent::Batch(b) = ev {
            app.update(rawpv::app::Msg::Source(rawpv::source::SourceMsg::Batch(b)));
        }
        true
    })
    .unwrap();
    app.update(rawpv::app::Msg::Source(rawpv::source::SourceMsg::Eof));
    act(&mut app, &[Action::Top]);
    let image_row = image_item(&app);
    select_item(&mut app, image_row);
    act(&mut app, &[Action::SaveImages]);
    let msg = app.view().message.clone().unwrap();
    let saved = msg.strip_prefix("image saved to ").expect(&msg);
    assert_eq!(std::fs::read(saved).unwrap(), first[0].bytes);
    std::fs::remove_file(saved).unwrap();
}

fn image_item(app: &App) -> usize {
    app.session()
        .items
        .iter()
        .position(
            |it| matches!(it, Item::Event(f) if f.frame_type.as_str() == "x-claude-code.image"),
        )
        .unwrap()
}

fn imagesize_of(bytes: &[u8]) -> (u32, u32) {
    // PNG IHDR: width and height are big-endian u32 at bytes 16..24.
    let be = |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    (be(16), be(20))
}

#[test]
fn a_missing_subagent_transcript_is_said_on_the_call() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cc_subagent_missing/11111111-2222-4333-8444-555555555555.jsonl");
    let p = p.to_str().unwrap();
    assert_eq!(
        rawpv(&["check", p]).replace(p, "F"),
        "F:5: info[subagent-missing] the subagent transcript of this call (agent \"ffff0000\": its agent-<id>.jsonl beside the session or in its subagents/ directory) is not in this input; only its result is shown (SPEC 4)\n\
         F: 0 errors, 0 warnings, 1 info\n"
    );
    let detail = rawpv(&["print", "--detail", "--width", "200", p]);
    let review = detail.split("Agent  ok").nth(2).unwrap();
    assert!(
        review.contains("! info subagent-missing the subagent transcript of this call"),
        "{review}"
    );
    // The corpus: 2.0.37's Task has no agent file beside it; 2.1.38's subagent is in its
    // progress records, 1.0.108's inline: no finding there.
    let Some(dir) = crate::support::corpus::dir("claude-code") else {
        return;
    };
    for (file, n) in [
        ("cc-v2.0.37-planmode-askuser-bashoutput.jsonl", 1),
        ("cc-v2.1.38-task-subagent-progress.jsonl", 0),
        ("cc-v1.0.108-inline-sidechain-task.jsonl", 0),
        (
            "cc-v2.0.55-deep-manifest/a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl",
            0,
        ),
    ] {
        let out = rawpv(&["check", dir.join(file).to_str().unwrap()]);
        assert_eq!(out.matches("subagent-missing").count(), n, "{file}: {out}");
    }
}

#[test]
fn compactions_say_trigger_and_tokens_and_c_jumps_to_them() {
    let Some(dir) = crate::support::corpus::dir("claude-code") else {
        return;
    };
    let path = dir.join("cc-v2.1.39-compaction-A-excerpt.jsonl");
    let print = rawpv(&["print", path.to_str().unwrap()]);
    assert!(
        print.contains("session.compacted compacted · auto · 170251 tokens before\n"),
        "{print}"
    );
    for (w, h) in [(80, 24), (200, 60)] {
        let mut app = app_for(&path);
        act(&mut app, &[Action::NextCompaction]);
        let item = app.view().selected_item(app.session()).unwrap();
        assert!(rawpv::session::query::is_compaction(app.session(), item));
        let term = draw(&mut app, w, h);
        let screen = screen_text(&term);
        assert!(
            screen.contains("compacted · auto · 170.3k tokens before"),
            "{screen}"
        );
        assert!(screen.contains("── Summary ──"), "{screen}");
        assert_snapshot!(format!("cc_compaction_{w}x{h}"), term.backend());
        // One compaction: C again comes back to it.
        act(&mut app, &[Action::NextCompaction]);
        assert_eq!(app.view().selected_item(app.session()), Some(item));
    }
}

/// The sections of call `tool`'s `print --detail` (80 columns) after its id and type lines.
fn detail_of(path: &Path, tool: &str, nth: usize) -> String {
    let detail = rawpv(&["print", "--detail", "--width", "80", path.to_str().unwrap()]);
    let call = detail
        .split("\n\n")
        .collect::<Vec<_>>()
        .join("\n\n")
        .split(&format!("{tool}  "))
        .nth(nth + 1)
        .unwrap()
        .to_owned();
    let body = call.split_once("\n\n── Input ──\n").unwrap().1;
    // Up to the next call's header (a line `Name  status  duration` after a blank line).
    body.split("\n\nTask")
        .next()
        .unwrap()
        .split("\n\nAskUserQuestion")
        .next()
        .unwrap()
        .split("\n\nagent")
        .next()
        .unwrap()
        .trim_end()
        .to_owned()
        + "\n"
}

#[test]
fn task_and_question_tools_are_cards() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cc_task_tools.jsonl");
    assert_eq!(
        detail_of(&p, "TaskCreate", 0),
        "☐ new task  Write the README\nUsage and install sections\n\n── Output (structured) ──\n· #1 Write the README\n"
    );
    assert_eq!(
        detail_of(&p, "TaskUpdate", 0),
        "task #1  → ✔ completed\n\n── Output (structured) ──\nUpdated task #1 status\n"
    );
    assert_eq!(
        detail_of(&p, "TaskList", 0),
        "  {}\n\n── Output (structured) ──\nTasks 1/2 done\n✔ #1 Write the README\n☐ #2 Add a screenshot  @docs  blocked by #1\n"
    );
    assert_eq!(
        detail_of(&p, "AskUserQuestion", 0),
        "[Image] Which screenshot?\n  ● Feed — the feed pane\n  ○ Detail\n\n── Output (text) ──\n? Which screenshot?\n→ Feed\n"
    );
    let print = rawpv(&["print", p.to_str().unwrap()]);
    assert!(
        print.contains("TaskUpdate ok        #1 → completed  [toolu_3]\n"),
        "{print}"
    );
    let Some(dir) = crate::support::corpus::dir("claude-code") else {
        return;
    };
    // 2.1.38: two questions answered, the chosen options marked.
    let c = dir.join("cc-v2.1.38-task-subagent-progress.jsonl");
    let ask = detail_of(&c, "AskUserQuestion", 0);
    assert!(
        ask.contains(
            "  ○ spotter — Use 'spotter' as the rig prefix\n  ● No rig — Don't use a rig prefix\n"
        ),
        "{ask}"
    );
    assert!(
        ask.contains(
            "  ● Credo + Dialyxir + mix_audit — Skip Sobelow (Phoenix security scanner)\n"
        ),
        "{ask}"
    );
    // 2.0.37: the plan rejected, then approved; BashOutput says its command and status; LS
    // (1.0.24) is a tree.
    let c = dir.join("cc-v2.0.37-planmode-askuser-bashoutput.jsonl");
    assert!(detail_of(&c, "ExitPlanMode", 0).starts_with("Plan  ✘ not approved\n\n## Plan: Make"));
    assert!(detail_of(&c, "ExitPlanMode", 1).starts_with("Plan  ✔ approved\n\n## Plan: Make"));
    let bo = detail_of(&c, "BashOutput", 0);
    assert!(
        bo.contains("── Output (text) ──\n$ uv tool uninstall coderabbit-review-extractor && uv cache clean && uv tool \ninstall .  status running\n"),
        "{bo}"
    );
    let ls = detail_of(&dir.join("cc-v1.0.24-summaries-thinking.jsonl"), "LS", 0);
    assert!(
        ls.contains("── Output (file_list) ──\n/home/user/workspace/claude-code-log/ 34 files\n├── claude_code_log/ 7\n│   ├── templates/ 2\n"),
        "{ls}"
    );
}

#[test]
fn the_catalog_panel_shows_deferred_tools_come_and_go() {
    let mut app = app_for(&fixture());
    act(&mut app, &[Action::ShowCatalog]);
    let term = draw(&mut app, 200, 40);
    let screen = screen_text(&term);
    assert!(screen.contains("line 15 (derived)"), "{screen}");
    assert!(screen.contains("− mcp__linear__list_issues"), "{screen}");
    assert_snapshot!("cc_records_catalog_200x40", term.backend());
}

/// Attack 9 #14: only a text that *is* Claude Code's command-tag envelope is a slash prompt; a
/// typed sentence that mentions the tags (or starts with one and goes on) is the typed prompt,
/// in full, on the row and in its detail.
#[test]
fn a_prompt_that_mentions_command_tags_stays_the_typed_prompt() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cc_slash_mentions.jsonl");
    let sentence = "Please explain why the log shows <command-name>/rm</command-name> with \
                    <command-args>-rf /</command-args> in it, and fix the parser";
    assert_eq!(
        prompts(&p),
        [
            sentence,
            "/noslash a\nb\nc",
            "<command-message>x</command-message>\n<command-name>/a</command-name><command-name>/b</command-name>",
            "<command-name>/review</command-name> and also the words the user typed",
            "/compact keep the API notes",
        ]
    );
    assert_eq!(
        rawpv(&["print", p.to_str().unwrap()]),
        format!(
            "prompt     {sentence}\n\
             prompt     /noslash a …\n\
             prompt     <command-message>x</command-message> …\n\
             prompt     <command-name>/review</command-name> and also the words the user typed\n\
             prompt     /compact keep the API notes\n\
             x-claude-code.command command output: Compacted. ctrl+o to see full summary\n"
        )
    );
    // The TUI: the prompt's detail is the sentence, not `/rm -rf /`.
    let mut app = app_for(&p);
    select_item(&mut app, 0);
    act(&mut app, &[Action::Open]);
    let screen = screen_text(&draw(&mut app, 200, 30));
    assert!(
        screen.contains("Please explain why the log shows"),
        "{screen}"
    );
    assert!(!screen.contains("/rm -rf /"), "{screen}");
}

/// Attack 9 #5: a hook ties to a call by (session, id): the other session's hook naming
/// `toolu_A` stays its own visible row, and the call's Hooks section lists only its session's.
#[test]
fn a_hook_of_another_session_is_not_tied_to_the_call() {
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cc_hook_other_session.jsonl");
    let p = p.to_str().unwrap();
    assert_eq!(
        rawpv(&["print", p]),
        "[5f0c3c1e-1111-4a2b-9c3d-0123456789ab] prompt     start\n\
         [5f0c3c1e-1111-4a2b-9c3d-0123456789ab] tool.catalog.publish 1 tool published\n\
         [5f0c3c1e-1111-4a2b-9c3d-0123456789ab] Bash       ok        hook failed · echo a  [toolu_A]\n\
         [99999999-2222-4a2b-9c3d-0123456789ab] x-claude-code.hook PostToolUse:Bash · failed · exit 1 · 1ms · other.sh · other session's hook\n"
    );
    let detail = rawpv(&["print", "--detail", p]);
    let hooks = detail.split_once("── Hooks").unwrap().1;
    assert_eq!(
        hooks,
        ": 1 hook, 1 failed ──\n\
         PostToolUse:Bash  failed  exit 1  1ms  line 5\n  \
         $ same.sh\n  \
         │ this session's hook\n\n"
    );
}

/// Attack 9 #4: the filter takes the status word the row shows: 2.1.39's cut-off call is `no
/// result`, and `status:"no result"` (or `no_result`, `noresult`) finds it and only it.
#[test]
fn the_filter_takes_the_status_word_the_feed_shows() {
    let Some(dir) = crate::support::corpus::dir("claude-code") else {
        return;
    };
    let s = load(&dir.join("cc-v2.1.39-compaction-A-excerpt.jsonl"));
    let open: Vec<&str> = s
        .invocations
        .iter()
        .filter(|inv| inv.status.word(s.ended) == "no result")
        .map(|inv| inv.invocation_id.as_str())
        .collect();
    assert_eq!(open.len(), 1, "{open:?}");
    for typed in [
        r#"status:"no result""#,
        "status:no_result",
        "status:noresult",
    ] {
        let f = rawpv::query::Filter::parse(typed).unwrap();
        assert_eq!(f.problem(), None, "{typed}");
        let hits: Vec<&str> = (0..s.items.len())
            .filter(|&i| f.matches(&s, i))
            .filter_map(|i| match &s.items[i] {
                Item::Invocation(k) => Some(s.invocations[*k].invocation_id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(hits, open, "{typed}");
    }
}

#[test]
fn a_failed_task_update_says_it_failed_with_the_message() {
    // `tests/fixtures/cc_task_update_failed.jsonl`: #1 updated; #7 `{success: false, error:
    // "Task not found"}` (no `is_error`); #2 an `is_error` result (an invalid status).
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cc_task_update_failed.jsonl");
    let print = rawpv(&["print", p.to_str().unwrap()]);
    let updates: Vec<&str> = print
        .lines()
        .filter(|l| l.starts_with("TaskUpdate"))
        .collect();
    assert_eq!(
        updates,
        [
            "TaskUpdate ok        #1 → completed  [toolu_3]",
            "TaskUpdate error     #7 → completed  [toolu_u1]",
            "TaskUpdate error     #2 → finished  [toolu_u2]",
        ]
    );
    assert_eq!(
        detail_of(&p, "TaskUpdate", 0),
        "task #1  → ✔ completed\n\n── Output (structured) ──\nUpdated task #1 status\n"
    );
    assert_eq!(
        detail_of(&p, "TaskUpdate", 1),
        "task #7  → completed\n✘ not updated: Task not found\n\n── Output (structured) ──\nTask not found\n"
    );
    assert_eq!(
        detail_of(&p, "TaskUpdate", 2),
        "task #2  → finished\n✘ not updated: InputValidationError: TaskUpdate failed due to the following \nissue:\nThe parameter `status` type is expected as `enum` but provided as `finished`\n\n── Output (structured) ──\n<tool_use_error>InputValidationError: TaskUpdate failed due to the following \nissue:\nThe parameter `status` type is expected as `enum` but provided as \n`finished`</tool_use_error>\n"
    );
    // The viewer: the failed call's detail pane, and `e` reaches both failed calls.
    let mut app = app_for(&p);
    act(&mut app, &[Action::NextError]);
    let first = app.view().selected_item(app.session());
    act(&mut app, &[Action::NextError]);
    let second = app.view().selected_item(app.session());
    let tools: Vec<String> = [first, second]
        .iter()
        .map(|i| match &app.session().items[i.unwrap()] {
            Item::Invocation(k) => app.session().invocations[*k].invocation_id.clone(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(tools, ["toolu_u1", "toolu_u2"]);
    act(&mut app, &[Action::PrevError]);
    let term = draw(&mut app, 100, 40);
    assert!(
        screen_text(&term).contains("✘ not updated: Task not found"),
        "{}",
        screen_text(&term)
    );
    assert_snapshot!("cc_task_update_failed_100x40", term.backend());
}

/// The `invocation_id` of the selected row's call (else the row's item, debug-printed).
fn selected_call(app: &App) -> String {
    let s = app.session();
    match app.view().selected_item(s).map(|i| &s.items[i]) {
        Some(Item::Invocation(k)) => s.invocations[*k].invocation_id.clone(),
        other => format!("{other:?}"),
    }
}

#[test]
fn e_stops_at_a_call_whose_hook_failed() {
    // `tests/fixtures/cc_hook_failed_calls.jsonl`: h1 ok; h2 ok with a failed PostToolUse hook;
    // h3 an error result; h4 ok with a hook that succeeded.
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cc_hook_failed_calls.jsonl");
    let mut app = app_for(&p);
    let mut stops = Vec::new();
    for a in [
        Action::NextError,
        Action::NextError,
        Action::NextError,
        Action::PrevError,
    ] {
        act(&mut app, &[a]);
        stops.push(selected_call(&app));
    }
    assert_eq!(stops, ["toolu_h2", "toolu_h3", "toolu_h3", "toolu_h2"]);
    // The hook's failure is not the call's: the turn counts one error (h3), as the rows say.
    let term = draw(&mut app, 100, 30);
    let screen = screen_text(&term);
    assert!(
        screen.contains("Run the checks") && screen.contains("4 calls · 1 error"),
        "{screen}"
    );
}

#[test]
fn search_finds_text_only_in_a_calls_hooks() {
    // `tests/fixtures/cc_hook_failed_calls.jsonl`: "quokka-threshold" is only in h4's
    // PostToolUse hook output, "coverage-gate" only in its command, "needless_return" only in
    // h2's failed hook's stderr (the hook rows themselves are quiet, hidden).
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cc_hook_failed_calls.jsonl");
    let mut app = app_for(&p);
    let mut found = Vec::new();
    for word in ["quokka-threshold", "coverage-gate", "needless_return"] {
        act(&mut app, &[Action::Top, Action::StartSearch]);
        app.type_text(word);
        app.press(crossterm::event::KeyCode::Enter);
        found.push(selected_call(&app));
    }
    assert_eq!(found, ["toolu_h4", "toolu_h4", "toolu_h2"]);
    act(&mut app, &[Action::Top, Action::StartSearch]);
    app.type_text("quokka-threshold");
    app.press(crossterm::event::KeyCode::Enter);
    let term = draw(&mut app, 100, 30);
    assert!(
        screen_text(&term).contains("(quokka-threshold met)"),
        "{}",
        screen_text(&term)
    );
    assert_snapshot!("cc_search_hook_output_100x30", term.backend());
}

#[test]
fn a_pasted_image_follows_the_prompt_it_came_with() {
    // `tests/fixtures/cc_image_before_prompt.jsonl`: one user record `[image, text]` (the order
    // Claude Code writes a pasted image in, as in the 1.0.43 corpus file), then the reply.
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cc_image_before_prompt.jsonl");
    assert_eq!(
        rawpv(&["print", p.to_str().unwrap()]),
        "prompt     Why is this button grey?\n\
         x-claude-code.image image · image/png · 155 B · 64×48\n\
         agent      The button has `disabled` set.\n\
         session.turn.end session.turn.end · stop reason end_turn\n"
    );
    let mut app = app_for(&p);
    let term = draw(&mut app, 80, 12);
    assert_snapshot!("cc_image_after_prompt_80x12", term.backend());
    let Some(dir) = crate::support::corpus::dir("claude-code") else {
        return;
    };
    let c = dir.join("cc-v1.0.43-image-hooks-multiedit.jsonl");
    let print = rawpv(&["print", c.to_str().unwrap()]);
    let lines: Vec<&str> = print.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("x-claude-code.image "))
        .unwrap();
    assert_eq!(
        lines[at - 1..=at],
        [
            "prompt     I think the library is setting it, it's an inline style (and there's no data-groupid:\\ …",
            "x-claude-code.image image · image/png · 766.4 KiB · 2000×1008",
        ]
    );
}

/// `tests/fixtures/cc_hook_progress.jsonl` (2.1.38 shapes): `hook_progress` records before and
/// after the calls, one of them followed by the same hook's `hook_success`, and a 2.1.x
/// `ExitPlanMode` whose plan is in a file.
fn hook_progress_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cc_hook_progress.jsonl")
}

/// A hook run as the test compares it: name, outcome, exit code, command, line.
type Run = (String, String, Option<i64>, Option<String>, u64);

#[test]
fn hook_progress_records_are_their_calls_hooks() {
    let p = hook_progress_fixture();
    let s = load(&p);
    let runs = |tool: &str| -> Vec<Run> {
        let inv = s.invocations.iter().find(|i| i.tool_name == tool).unwrap();
        s.hooks
            .of(&inv.invocation_id)
            .map(|h| {
                (
                    h.name.clone(),
                    h.outcome.clone(),
                    h.exit_code,
                    h.command.clone(),
                    h.line,
                )
            })
            .collect()
    };
    let ran = |name: &str, cmd: &str, line| {
        (
            name.to_owned(),
            "progress".to_owned(),
            None,
            Some(cmd.to_owned()),
            line,
        )
    };
    assert_eq!(runs("Glob"), [ran("PostToolUse:Glob", "callback", 4)]);
    // The progress record and the outcome of the same hook are one run: the outcome's.
    assert_eq!(
        runs("Bash"),
        [(
            "PreToolUse:Bash".to_owned(),
            "success".to_owned(),
            Some(0),
            Some("./hooks/guard.sh".to_owned()),
            8
        )]
    );
    // Progress hooks are quiet rows (the session's own, SessionStart and Stop, too: they say
    // only that a hook ran); `--all` lists them.
    assert!(
        rawpv(&["print", "--all", p.to_str().unwrap()])
            .starts_with("x-claude-code.hook SessionStart:startup · ran · bd prime\n")
    );
    assert_eq!(
        rawpv(&["print", p.to_str().unwrap()]),
        "prompt     Plan the TODO app, then list the sources\n\
         tool.catalog.publish 1 tool published\n\
         Glob       ok        src/**/*.rs  [toolu_G]\n\
         Bash       ok        cargo check  [toolu_B]\n\
         ExitPlanMode ok        leave plan mode (plan in its file)  [toolu_P]\n"
    );
    let detail = rawpv(&["print", "--detail", "--width", "80", p.to_str().unwrap()]);
    let detail = detail.split("\n\nBash  ok").next().unwrap();
    assert!(
        detail.ends_with(
            "── Hooks: 1 hook ──\nPostToolUse:Glob  ran (no outcome recorded)  line 4\n  $ callback"
        ),
        "{detail}"
    );

    // The corpus: every `hook_progress` naming a call of the file is one of that call's hooks.
    let Some(dir) = crate::support::corpus::dir("claude-code") else {
        return;
    };
    for name in [
        "cc-v2.1.38-task-subagent-progress.jsonl",
        "cc-v2.1.38-tool-heavy-web.jsonl",
        "cc-v2.1.17-bash-errors.jsonl",
    ] {
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let recs: Vec<serde_json::Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let uses: std::collections::HashSet<&str> = recs
            .iter()
            .filter_map(|r| r.pointer("/message/content")?.as_array())
            .flatten()
            .filter(|b| b["type"] == "tool_use")
            .filter_map(|b| b["id"].as_str())
            .collect();
        let mut want = std::collections::BTreeMap::<&str, usize>::new();
        for r in &recs {
            if r.pointer("/data/type").and_then(|t| t.as_str()) == Some("hook_progress")
                && let Some(id) = r["parentToolUseID"].as_str().filter(|id| uses.contains(id))
            {
                *want.entry(id).or_default() += 1;
            }
        }
        let s = load(&path);
        let got: std::collections::BTreeMap<&str, usize> = s
            .invocations
            .iter()
            .map(|i| {
                (
                    i.invocation_id.as_str(),
                    s.hooks.of(&i.invocation_id).count(),
                )
            })
            .filter(|(_, n)| *n > 0)
            .collect();
        assert_eq!(got, want, "{name}");
        assert!(!want.is_empty() || name.contains("2.1.17"), "{name}");
    }
}

#[test]
fn an_exit_plan_mode_of_2_1_says_where_its_plan_is() {
    assert_eq!(
        detail_of(&hook_progress_fixture(), "ExitPlanMode", 0),
        "Plan  ✔ approved  /home/u/.claude/plans/quiet-fox.md\n\n\
         The plan's text is not in this transcript: Claude Code 2.1 keeps it in the plan \n\
         file above.\n\n\
         ── Output (text) ──\n\
         User has approved exiting plan mode. You can now proceed.\n\
         plan file /home/u/.claude/plans/quiet-fox.md\n"
    );
    let Some(dir) = crate::support::corpus::dir("claude-code") else {
        return;
    };
    let c = dir.join("cc-v2.1.38-task-subagent-progress.jsonl");
    assert!(detail_of(&c, "ExitPlanMode", 0).starts_with(
        "Plan  ✔ approved  /home/user/.claude/plans/humble-seeking-umbrella.md\n\n\
             The plan's text is not in this transcript"
    ));
    // 2.0.55 writes the plan in the request: the card draws it, as before.
    let c = dir.join("cc-v2.0.55-deep-manifest/a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl");
    assert!(
        detail_of(&c, "ExitPlanMode", 0).starts_with(
            "Plan  ✔ approved  /home/user/.claude/plans/humble-doodling-wolf.md\n\n# Plan: Add Tar"
        ),
        "{}",
        detail_of(&c, "ExitPlanMode", 0)
    );
}

#[test]
fn screens_show_progress_hooks_and_the_plan_file() {
    for (w, h) in [(80, 24), (200, 60)] {
        let mut app = app_for(&hook_progress_fixture());
        let calls: Vec<usize> = app
            .session()
            .items
            .iter()
            .enumerate()
            .filter(|(_, it)| matches!(it, Item::Invocation(_)))
            .map(|(k, _)| k)
            .collect();
        // Glob: its progress hook in the detail.
        select_item(&mut app, calls[0]);
        act(&mut app, &[Action::ToggleZoom]);
        let term = draw(&mut app, w, h);
        let screen = screen_text(&term);
        assert!(
            screen.contains("PostToolUse:Glob  ran (no outcome recorded)  line 4"),
            "{w}x{h}: {screen}"
        );
        assert_snapshot!(format!("cc_progress_hook_{w}x{h}"), term.backend());
        act(&mut app, &[Action::ToggleZoom]);
        // ExitPlanMode of 2.1.x: the outcome and the plan file.
        select_item(&mut app, calls[2]);
        act(&mut app, &[Action::ToggleZoom]);
        let term = draw(&mut app, w, h);
        let screen = screen_text(&term);
        assert!(
            screen.contains("Plan  ✔ approved  /home/u/.claude/plans/quiet-fox.md"),
            "{w}x{h}: {screen}"
        );
        assert_snapshot!(format!("cc_plan_file_{w}x{h}"), term.backend());
    }
}

/// The viewer on a saved file, as `rawpv FILE` opens it (the session backed by the file, the
/// outputs left in it), at the top.
fn file_app(p: &Path) -> App {
    let name = p.file_name().unwrap().to_string_lossy().into_owned();
    let mut app = App::new(name, false);
    app.session_mut().backing = Some(std::sync::Arc::from(p));
    app.update(rawpv::app::Msg::Source(rawpv::source::SourceMsg::Format(
        rawpv::import::Format::ClaudeCode,
    )));
    let opts = rawpv::source::file::ReadOptions {
        defer_outputs: true,
    };
    rawpv::source::file::read_path_with(p, opts, |ev| {
        if let rawpv::source::file::FileEvent::Batch(b) = ev {
            app.update(rawpv::app::Msg::Source(rawpv::source::SourceMsg::Batch(b)));
        }
        true
    })
    .unwrap();
    app.update(rawpv::app::Msg::Source(rawpv::source::SourceMsg::Eof));
    act(&mut app, &[Action::Top]);
    app
}

/// A PNG of `w`×`h` pixels: the left half red, the right half green.
fn two_colour_png(w: u32, h: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(w, h, |x, _| {
        if x < w / 2 {
            image::Rgb([255, 0, 0])
        } else {
            image::Rgb([0, 255, 0])
        }
    });
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(img)
        .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

/// A Claude Code user record with the prompt "look" and these PNG images.
fn image_record(images: &[Vec<u8>]) -> String {
    use base64::Engine as _;
    let mut content = vec![serde_json::json!({"type": "text", "text": "look"})];
    for bytes in images {
        content.push(
            serde_json::json!({"type": "image", "source": {"type": "base64",
            "media_type": "image/png",
            "data": base64::engine::general_purpose::STANDARD.encode(bytes)}}),
        );
    }
    serde_json::json!({"type": "user", "uuid": "00000000-0000-4000-8000-000000000001",
        "parentUuid": null, "sessionId": "7a1d0c2e-3333-4b4c-8d5e-0123456789ab",
        "timestamp": "2026-04-21T13:00:00.000Z", "cwd": "/p", "version": "2.1.114",
        "message": {"role": "user", "content": content}})
    .to_string()
}

#[test]
fn v_shows_the_rows_image_in_half_blocks() {
    use ratatui::style::Color;
    // The fixture's pasted image: one colour (32, 128, 255), 64×48, centred in the pane.
    let mut app = file_app(&images_fixture());
    let row = image_item(&app);
    select_item(&mut app, row);
    act(&mut app, &[Action::ViewImage]);
    let term = draw(&mut app, 80, 24);
    let screen = screen_text(&term);
    assert!(
        screen.contains("┌ Image 1/1 · image/png · 155 B · 64×48 · Esc back ─"),
        "{screen}"
    );
    assert_snapshot!("cc_image_view_80x24", term.backend());
    // The detail pane's inner area at 80x24 is rows 14..21, columns 1..79 (78×7 cells, 14
    // pixel rows): 64×48 fits as 18×14 pixels, 18 columns × 7 rows, centred.
    let buf = term.backend().buffer();
    let bg = |x: u16, y: u16| buf.cell((x, y)).unwrap().bg;
    let blue = Color::Rgb(32, 128, 255);
    let drawn: Vec<(u16, u16)> = (14..21)
        .flat_map(|y| (1..79).map(move |x| (x, y)))
        .filter(|&(x, y)| bg(x, y) == blue)
        .collect();
    assert_eq!(drawn.len(), 18 * 7, "{drawn:?}");
    assert_eq!(drawn.first(), Some(&(31, 14)));
    assert_eq!(drawn.last(), Some(&(48, 20)));
    // Esc gives the detail back; so does another row.
    act(&mut app, &[Action::Cancel]);
    assert!(!screen_text(&draw(&mut app, 80, 24)).contains("┌ Image"));
    act(&mut app, &[Action::ViewImage, Action::MoveDown]);
    assert!(!screen_text(&draw(&mut app, 80, 24)).contains("┌ Image"));

    // Two images on one row: `v` again shows the next, then the first again; the left half
    // is red and the right half green at 200x60 (aspect kept: 40×20 px in 98 columns).
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("two.jsonl");
    let rec = image_record(&[two_colour_png(40, 20), two_colour_png(8, 8)]);
    std::fs::write(&p, format!("{rec}\n")).unwrap();
    let mut app = file_app(&p);
    let row = image_item(&app);
    select_item(&mut app, row);
    act(&mut app, &[Action::ViewImage]);
    let term = draw(&mut app, 200, 60);
    let screen = screen_text(&term);
    assert!(screen.contains("┌ Image 1/2 · image/png · "), "{screen}");
    assert!(
        screen.contains(" · 40×20 · v next · Esc back ─"),
        "{screen}"
    );
    assert_snapshot!("cc_image_view_200x60", term.backend());
    let buf = term.backend().buffer();
    let row_colours: Vec<Color> = (0..200)
        .map(|x| buf.cell((x, 30)).unwrap().bg)
        .filter(|c| matches!(c, Color::Rgb(..)))
        .collect();
    let red = row_colours
        .iter()
        .filter(|c| **c == Color::Rgb(255, 0, 0))
        .count();
    let green = row_colours
        .iter()
        .filter(|c| **c == Color::Rgb(0, 255, 0))
        .count();
    assert!(
        red > 40 && red.abs_diff(green) <= 2,
        "{red} red, {green} green"
    );
    let first_red = (0..200).find(|&x| buf.cell((x, 30)).unwrap().bg == Color::Rgb(255, 0, 0));
    let first_green = (0..200).find(|&x| buf.cell((x, 30)).unwrap().bg == Color::Rgb(0, 255, 0));
    assert!(first_red < first_green, "red is on the left");
    act(&mut app, &[Action::ViewImage]);
    assert!(screen_text(&draw(&mut app, 200, 60)).contains("┌ Image 2/2 · image/png · "));
    act(&mut app, &[Action::ViewImage]);
    assert!(screen_text(&draw(&mut app, 200, 60)).contains("┌ Image 1/2 · image/png · "));
}

#[test]
fn an_image_v_cannot_decode_is_a_message() {
    let dir = tempfile::tempdir().unwrap();
    // Bytes that are no image, and a PNG wider than the decoder's limit.
    for (name, bytes, said) in [
        (
            "broken",
            b"\x89PNG\r\n\x1a\nnot really".to_vec(),
            "cannot show the image (image/png · 18 B): ",
        ),
        (
            "wide",
            two_colour_png(rawpv::app::MAX_IMAGE_SIDE + 2, 1),
            "cannot show the image (image/png · ",
        ),
    ] {
        let p = dir.path().join(format!("{name}.jsonl"));
        std::fs::write(&p, format!("{}\n", image_record(&[bytes]))).unwrap();
        let mut app = file_app(&p);
        let row = image_item(&app);
        select_item(&mut app, row);
        act(&mut app, &[Action::ViewImage]);
        // Decoding: said in the title until the decode job (run by `draw`) fails.
        let mut term = Terminal::new(TestBackend::new(80, 24)).unwrap();
        app.prepare(Rect::new(0, 0, 80, 24));
        term.draw(|f| app.draw(f)).unwrap();
        assert!(
            screen_text(&term).contains(" · decoding · Esc back ─"),
            "{name}"
        );
        let screen = screen_text(&draw(&mut app, 80, 24));
        let msg = app.view().message.clone().unwrap_or_default();
        assert!(msg.starts_with(said), "{name}: {msg}");
        assert!(!screen.contains("┌ Image"), "{name}");
    }
    // A row without an image, and a stream (no file to read the bytes back from).
    let mut app = file_app(&images_fixture());
    act(&mut app, &[Action::ViewImage]);
    assert_eq!(app.view().message.as_deref(), Some("no image on this row"));
    let mut app = app_for(&images_fixture());
    let row = image_item(&app);
    select_item(&mut app, row);
    act(&mut app, &[Action::ViewImage]);
    assert_eq!(
        app.view().message.as_deref(),
        Some("the image's bytes are only in a saved file (open the transcript, not a stream)")
    );
}
