//! The one Claude Code decoder against the two it replaced (issue 16): every corpus transcript
//! gives the same calls, statuses and tokens as the old exact whole-file decode did at the
//! moment of the switch, except where a placement was fixed on purpose.
//!
//! `tests/fixtures/cc_switch_old_decoder.txt` was written by this test's `summary` run through
//! the old decoder (commit c550f45, `RAWPV_WRITE_SWITCH_SUMMARY=1`); it is never rewritten by
//! the new one. [`CHANGED`] lists the lines that differ on purpose, each with its reason; the
//! test fails on any other difference, and on a listed change that no longer happens.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use rawpv::session::query::Tokens;
use rawpv::session::{Item, Session};

const OLD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/cc_switch_old_decoder.txt"
);

/// The corpus transcripts (subagent files are read with their session, not on their own).
fn transcripts() -> Option<Vec<std::path::PathBuf>> {
    let files = crate::support::corpus::files("claude-code")?;
    Some(
        files
            .into_iter()
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .filter(|p| {
                !p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("agent-")
            })
            .collect(),
    )
}

/// One line per call (sorted by id): id, tool, status, the Task it is under (the last link of
/// its delegation chain), then one line of totals. What the commands show (`fold_path`).
fn summary(path: &Path) -> String {
    let (session, _) = rawpv::source::file::fold_path(path).unwrap();
    summarize(&session)
}

fn summarize(session: &Session) -> String {
    let mut calls = BTreeSet::new();
    for inv in &session.invocations {
        let under = inv
            .delegation_chain
            .last()
            .map_or("-", |d| d.invocation_id.as_str());
        calls.insert(format!(
            "call {} {} {:?} under={under}",
            inv.invocation_id, inv.tool_name, inv.status
        ));
    }
    let mut tokens = Tokens::default();
    for i in 0..session.items.len() {
        tokens.add(session, i);
    }
    let prompts = (0..session.items.len())
        .filter(|&i| rawpv::session::query::is_prompt(session, i))
        .count();
    let events = session
        .items
        .iter()
        .filter(|it| matches!(it, Item::Event(_)))
        .count();
    let mut out = String::new();
    for c in calls {
        writeln!(out, "{c}").unwrap();
    }
    writeln!(
        out,
        "tokens in={} out={} cache_read={} usage_rows={} prompts={prompts} events={events}",
        tokens.input, tokens.output, tokens.cache_read, tokens.rows
    )
    .unwrap();
    out
}

fn all_summaries() -> Option<String> {
    let mut out = String::new();
    for p in transcripts()? {
        let name = p.strip_prefix(crate::support::corpus::CORPUS).unwrap();
        writeln!(out, "# {}", name.display()).unwrap();
        out.push_str(&summary(&p));
    }
    Some(out)
}

/// Lines of the old decoder's summary that the new one changes on purpose: `(file, old line or
/// "", new line or "", why)`. Every call, status, Task link and token count is the same; only
/// the count of other rows changed: the new decoder streams, so it publishes the derived
/// catalog again at each new tool name (one publish per tool instead of one in all), and fork
/// points get rows of their own. Issue 20: a slash command (`<command-name>`, `system/
/// local_command`) is a prompt row, no longer an event row (`prompts` up, `events` down by as
/// many).
const CHANGED: &[(&str, &str, &str, &str)] = &[
    (
        "claude-code/cc-v1.0.108-inline-sidechain-task.jsonl",
        "tokens in=47876 out=3629 cache_read=324259 usage_rows=20 prompts=2 events=24",
        "tokens in=47876 out=3629 cache_read=324259 usage_rows=20 prompts=3 events=29",
        "7 tools: 6 more catalog publishes",
    ),
    (
        "claude-code/cc-v1.0.24-summaries-thinking.jsonl",
        "tokens in=84245 out=2201 cache_read=1164952 usage_rows=34 prompts=2 events=53",
        "tokens in=84245 out=2201 cache_read=1164952 usage_rows=34 prompts=3 events=58",
        "7 tools: 6 more catalog publishes",
    ),
    (
        "claude-code/cc-v1.0.43-image-hooks-multiedit.jsonl",
        "tokens in=85238 out=5057 cache_read=348985 usage_rows=15 prompts=4 events=36",
        "tokens in=85238 out=5057 cache_read=348985 usage_rows=15 prompts=7 events=38",
        "4 tools: 3 more catalog publishes; 2 fork frames (the row of the fork point at line 62 and the quiet mark of its third branch)",
    ),
    (
        "claude-code/cc-v2.0.37-planmode-askuser-bashoutput.jsonl",
        "tokens in=152832 out=23714 cache_read=3483153 usage_rows=80 prompts=5 events=101",
        "tokens in=152832 out=23714 cache_read=3483153 usage_rows=80 prompts=5 events=109",
        "9 tools: 8 more catalog publishes",
    ),
    (
        "claude-code/cc-v2.0.55-deep-manifest/a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl",
        "tokens in=219809 out=32270 cache_read=8629528 usage_rows=109 prompts=7 events=134",
        "tokens in=219809 out=32270 cache_read=8629528 usage_rows=109 prompts=9 events=141",
        "10 tools (its agent file's included): 9 more catalog publishes",
    ),
    (
        "claude-code/cc-v2.1.17-bash-errors.jsonl",
        "tokens in=9464 out=180 cache_read=212147 usage_rows=10 prompts=1 events=13",
        "tokens in=9464 out=180 cache_read=212147 usage_rows=10 prompts=1 events=16",
        "4 tools: 3 more catalog publishes",
    ),
    (
        "claude-code/cc-v2.1.38-task-subagent-progress.jsonl",
        "tokens in=41727 out=1593 cache_read=522629 usage_rows=17 prompts=2 events=50",
        "tokens in=41727 out=1593 cache_read=522629 usage_rows=17 prompts=3 events=57",
        "9 tools: 8 more catalog publishes",
    ),
    (
        "claude-code/cc-v2.1.38-tool-heavy-web.jsonl",
        "tokens in=17750 out=212 cache_read=88231 usage_rows=4 prompts=2 events=27",
        "tokens in=17750 out=212 cache_read=88231 usage_rows=4 prompts=4 events=29",
        "5 tools: 4 more catalog publishes",
    ),
    (
        "claude-code/cc-v2.1.39-compaction-A-excerpt.jsonl",
        "tokens in=317395 out=21419 cache_read=8747154 usage_rows=101 prompts=1 events=713",
        "tokens in=317395 out=21419 cache_read=8747154 usage_rows=101 prompts=1 events=719",
        "7 tools: 6 more catalog publishes",
    ),
];

#[test]
fn the_new_decoder_gives_the_old_calls_statuses_and_tokens_on_every_corpus_transcript() {
    let Some(new) = all_summaries() else { return };
    if std::env::var("RAWPV_WRITE_SWITCH_SUMMARY").is_ok() {
        std::fs::write(OLD, &new).unwrap();
        return;
    }
    let old = std::fs::read_to_string(OLD).unwrap();
    let split = |s: &str| -> BTreeSet<(String, String)> {
        let mut file = String::new();
        let mut set = BTreeSet::new();
        for l in s.lines() {
            if let Some(f) = l.strip_prefix("# ") {
                file = f.to_owned();
            } else {
                set.insert((file.clone(), l.to_owned()));
            }
        }
        set
    };
    let (old, new) = (split(&old), split(&new));
    let gone: BTreeSet<_> = old.difference(&new).cloned().collect();
    let came: BTreeSet<_> = new.difference(&old).cloned().collect();
    let want_gone: BTreeSet<_> = CHANGED
        .iter()
        .filter(|c| !c.1.is_empty())
        .map(|c| (c.0.to_owned(), c.1.to_owned()))
        .collect();
    let want_came: BTreeSet<_> = CHANGED
        .iter()
        .filter(|c| !c.2.is_empty())
        .map(|c| (c.0.to_owned(), c.2.to_owned()))
        .collect();
    assert_eq!(
        (gone, came),
        (want_gone, want_came),
        "(lines only in the old decoder's summary, lines only in the new one's)"
    );
}
