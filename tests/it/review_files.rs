//! The files model (`rawpv::review::files`, issue 23 items 1, 4) on real transcripts: the
//! compaction excerpt's 11 files in 26 edit calls and its three outside changes (which files,
//! which calls, which shell calls between), and the fixture `review_changes.jsonl` as a whole
//! object, including a transcript read from stdin (no file to read records back from: the
//! decoder keeps `toolUseResult` in the frame's metadata instead).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use pretty_assertions::assert_eq;
use rawpv::review::edits::Op;
use rawpv::review::files::{Files, State};
use rawpv::session::Session;

use crate::support::corpus;

fn load(p: &Path) -> Session {
    rawpv::source::file::fold_path(p).unwrap().0
}

/// `(file, request line of the edit whose "before" differs, request line of the change before
/// it, the shell commands between)`.
fn outside(session: &Session, files: &Files) -> Vec<(String, u64, u64, Vec<String>)> {
    let mut out = Vec::new();
    for f in &files.files {
        for t in &f.touches {
            if let Some(o) = &t.outside {
                let cmds = o.between.iter().map(|s| s.what.clone()).collect();
                out.push((
                    f.shown.clone(),
                    t.line,
                    session.invocations[o.after_call].request_line,
                    cmds,
                ));
            }
        }
    }
    out
}

#[test]
fn the_compaction_excerpt_has_three_outside_changes() {
    let Some(dir) = corpus::dir("claude-code") else {
        return;
    };
    let session = load(&dir.join("cc-v2.1.39-compaction-A-excerpt.jsonl"));
    let files = Files::of_session(&session);
    let changed: Vec<_> = files.changed().collect();
    let edits: usize = changed
        .iter()
        .map(|f| f.touches.iter().filter(|t| t.op.changes()).count())
        .sum();
    assert_eq!((changed.len(), edits), (11, 26));
    // The three (the excerpt's request lines: the edit whose "before" differs, the
    // change before it). No Bash ran between: the suspects are the PostToolUse hooks that ran
    // after the earlier change (its `post-edit.sh` formats the file), and for the third the
    // hooks of the compaction's SessionStart.
    assert_eq!(
        outside(&session, &files),
        vec![
            (
                "lib/spotter_web/live/session_live.ex".to_owned(),
                30,
                18,
                vec![
                    "hook PostToolUse:Edit: cd ${CLAUDE_PLUGIN_ROOT}/hooks && bun run ./dist/post-yaml-validate.js".to_owned(),
                    "hook PostToolUse:Edit: cd ${CLAUDE_PLUGIN_ROOT}/hooks && bun run ./dist/post-edit-check.js".to_owned(),
                    "hook PostToolUse:Edit: cd ${CLAUDE_PLUGIN_ROOT}/hooks && bun run ./dist/post-write-eslint.js".to_owned(),
                    "hook PostToolUse:Edit: ${CLAUDE_PLUGIN_ROOT}/scripts/post-edit.sh".to_owned(),
                    "hook PostToolUse:Edit: ${CLAUDE_PLUGIN_ROOT}/scripts/post-tool-capture.sh".to_owned(),
                    "hook PostToolUse:Edit: ${CLAUDE_PLUGIN_ROOT}/scripts/tool-call-capture.sh".to_owned(),
                ]
            ),
            (
                "lib/spotter/services/transcript_renderer.ex".to_owned(),
                316,
                303,
                vec![
                    "hook PostToolUse:Write: cd ${CLAUDE_PLUGIN_ROOT}/hooks && bun run ./dist/post-yaml-validate.js".to_owned(),
                    "hook PostToolUse:Write: cd ${CLAUDE_PLUGIN_ROOT}/hooks && bun run ./dist/post-edit-check.js".to_owned(),
                    "hook PostToolUse:Write: cd ${CLAUDE_PLUGIN_ROOT}/hooks && bun run ./dist/post-write-eslint.js".to_owned(),
                    "hook PostToolUse:Write: ${CLAUDE_PLUGIN_ROOT}/scripts/post-edit.sh".to_owned(),
                    "hook PostToolUse:Write: ${CLAUDE_PLUGIN_ROOT}/scripts/post-tool-capture.sh".to_owned(),
                    "hook PostToolUse:Write: ${CLAUDE_PLUGIN_ROOT}/scripts/tool-call-capture.sh".to_owned(),
                ]
            ),
            (
                "lib/spotter_web/components/transcript_components.ex".to_owned(),
                484,
                464,
                vec![
                    "hook PostToolUse:Write: cd ${CLAUDE_PLUGIN_ROOT}/hooks && bun run ./dist/post-yaml-validate.js".to_owned(),
                    "hook PostToolUse:Write: cd ${CLAUDE_PLUGIN_ROOT}/hooks && bun run ./dist/post-edit-check.js".to_owned(),
                    "hook PostToolUse:Write: cd ${CLAUDE_PLUGIN_ROOT}/hooks && bun run ./dist/post-write-eslint.js".to_owned(),
                    "hook PostToolUse:Write: ${CLAUDE_PLUGIN_ROOT}/scripts/post-edit.sh".to_owned(),
                    "hook PostToolUse:Write: ${CLAUDE_PLUGIN_ROOT}/scripts/post-tool-capture.sh".to_owned(),
                    "hook PostToolUse:Write: ${CLAUDE_PLUGIN_ROOT}/scripts/tool-call-capture.sh".to_owned(),
                    "hook SessionStart:compact: /home/USER/.claude/hooks/tmux-waiting.sh clear".to_owned(),
                    "hook SessionStart:compact: bd prime".to_owned(),
                    "hook SessionStart:compact: ${CLAUDE_PLUGIN_ROOT}/scripts/notify-session.sh".to_owned(),
                    "hook SessionStart:compact: ${CLAUDE_PLUGIN_ROOT}/scripts/review-context-session-start.sh".to_owned(),
                ]
            ),
        ]
    );
}

#[test]
fn the_fixture_as_a_whole_object() {
    let p = format!(
        "{}/tests/fixtures/review_changes.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let session = load(Path::new(&p));
    let files = Files::of_session(&session);
    let rows: Vec<_> = files
        .files
        .iter()
        .map(|f| {
            (
                f.shown.as_str(),
                f.state.clone(),
                f.inside,
                f.added,
                f.removed,
                f.outside,
                f.no_net.clone(),
                f.touches
                    .iter()
                    .map(|t| (t.tool.as_str(), t.op.clone(), t.line, t.outside.is_some()))
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            (
                "src/lib.rs",
                State::Modified,
                true,
                2,
                2,
                1,
                None,
                vec![
                    ("Read", Op::Read, 2, false),
                    ("Edit", Op::Edit, 4, false),
                    ("Edit", Op::Edit, 10, true)
                ]
            ),
            (
                "notes/new.md",
                State::Created,
                true,
                3,
                0,
                0,
                None,
                vec![("Write", Op::Create, 6, false)]
            ),
            (
                "/tmp/elsewhere.txt",
                State::Created,
                false,
                1,
                0,
                0,
                None,
                vec![("Write", Op::Create, 12, false)]
            ),
        ]
    );
    let writers: Vec<_> = files
        .writers
        .iter()
        .map(|w| (w.line, w.command.as_str(), w.why.clone()))
        .collect();
    assert_eq!(
        writers,
        vec![
            (
                8,
                "sed -i 's/two/TWO/' src/lib.rs",
                vec!["sed -i".to_owned()]
            ),
            (
                14,
                "cargo fmt && echo done > log.txt",
                vec![
                    "cargo fmt".to_owned(),
                    "redirects output to log.txt".to_owned()
                ]
            ),
        ]
    );
    // The same model when the transcript comes from stdin (records kept in memory).
    let bytes = std::fs::read(&p).unwrap();
    let items = rawpv::import::claude_code::load_session(Path::new("-"), &bytes);
    let mem = Session::from_decoded(items);
    assert_eq!(Files::of_session(&mem).files, files.files);
}

/// The viewer's build in steps (`ui::files::FilesCache`): with a zero budget each step adds one
/// call or one file's net counts, the progress only grows, and the model at the end is the one
/// built at once (with the net counts) — so a big session never holds up a key and loses nothing.
#[test]
fn the_stepped_build_equals_the_whole_build() {
    let Some(dir) = corpus::dir("claude-code") else {
        return;
    };
    let session = load(&dir.join("cc-v2.1.39-compaction-A-excerpt.jsonl"));
    let mut cache = rawpv::ui::files::FilesCache::default();
    cache.start_with(&session, std::time::Duration::ZERO);
    let mut steps = 1;
    let mut last = 0;
    while cache.pending() {
        let p = cache.progress(&session).unwrap();
        assert!(p >= last && p <= 100, "{p} after {last}");
        last = p;
        cache.step(&session, std::time::Duration::ZERO);
        steps += 1;
    }
    // One step per call, then one per file (the last call's step takes the first file too).
    assert_eq!(steps, session.invocations.len() + 12 - 1);
    let mut whole = Files::of_session(&session);
    let call = |i: usize| session.invocations.get(i).map(|b| &**b);
    let nets: Vec<_> = whole
        .files
        .iter()
        .map(|f| whole.net(&session, &call, f).ok())
        .collect();
    for (f, n) in whole.files.iter_mut().zip(&nets) {
        if let Some(n) = n {
            f.count_net(n);
        }
    }
    assert_eq!(cache.model(), Some(&whole));
}
