//! The library's append path (issue 27 item 2, `rawpv::library::append`): a session file
//! indexed, then appended to, then indexed again through the same `Indexer` (which reads only
//! the appended bytes) gives exactly the rows, calls, documents and word hits that indexing the
//! whole file at once gives. For every corpus Claude Code transcript and every Claude Code and
//! RAWP NDJSON fixture, split at several line boundaries (one append, and two in a row) and
//! once in the middle of a line (a writer caught mid-record).
//!
//! Also: the checks that make the append path read a file from scratch (a rewrite of the bytes
//! before the offset, a truncation, another inode), two indexers sharing one store, and an
//! append to a subagent file re-indexing its session.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use rawpv::library::index::{self, Indexer};
use rawpv::library::store::{CallRow, Candidate, SessionRow};
use rawpv::library::{Filter, SqliteStore, Store};

use crate::support::corpus;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// The files of the oracle: corpus Claude Code transcripts (with the subagent files of a
/// directory beside them) and the fixtures' `.jsonl` and `.ndjson` sessions.
fn sessions() -> Option<Vec<(PathBuf, Vec<PathBuf>)>> {
    let mut out = Vec::new();
    for f in corpus::files("claude-code")? {
        if f.extension().is_none_or(|e| e != "jsonl")
            || f.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("agent-"))
        {
            continue;
        }
        let beside: Vec<PathBuf> = std::fs::read_dir(f.parent().unwrap())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("agent-"))
            })
            .collect();
        out.push((f, beside));
    }
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(FIXTURES)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl" || e == "ndjson"))
        .collect();
    fixtures.sort();
    out.extend(fixtures.into_iter().map(|f| (f, Vec::new())));
    Some(out)
}

/// What a store holds of `path`: its session row, calls and documents, and the documents each
/// of `words` finds.
#[derive(Debug, PartialEq)]
struct Held {
    rows: Vec<SessionRow>,
    calls: Vec<CallRow>,
    docs: Vec<Candidate>,
    hits: Vec<(String, Vec<Candidate>)>,
}

fn held(store: &SqliteStore, path: &Path, words: &[String]) -> Held {
    let f = Filter::default();
    let mut docs = Vec::new();
    store
        .each_doc(&f, &mut |c| {
            docs.push(c);
            true
        })
        .unwrap();
    Held {
        rows: store.sessions(&f).unwrap(),
        calls: store.calls_of(path).unwrap(),
        docs,
        hits: words
            .iter()
            .map(|w| {
                (
                    w.clone(),
                    store.candidates(std::slice::from_ref(w), &f).unwrap(),
                )
            })
            .collect(),
    }
}

/// `got == want`, else a failure naming the first part that differs (the whole values are
/// too long to read).
fn same(got: &Held, want: &Held, what: &str) {
    assert_eq!(got.rows, want.rows, "{what}: the session rows");
    assert_eq!(got.calls, want.calls, "{what}: the call rows");
    for (g, w) in got.docs.iter().zip(&want.docs) {
        assert_eq!(g, w, "{what}: the first document that differs");
    }
    assert_eq!(got.docs.len(), want.docs.len(), "{what}: documents");
    for (g, w) in got.hits.iter().zip(&want.hits) {
        assert_eq!(g, w, "{what}: a word's hits");
    }
    assert_eq!(got, want, "{what}");
}

/// Up to 300 distinct words of the whole file's documents (spread over them), and a prefix.
fn words_of(path: &Path) -> Vec<String> {
    let (_, _, docs) = index::read(path, "");
    let all: BTreeSet<String> = docs
        .iter()
        .flat_map(|d| {
            d.text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect::<Vec<_>>()
        })
        .collect();
    let step = all.len().div_ceil(300).max(1);
    let mut out: Vec<String> = all.into_iter().step_by(step).collect();
    if let Some(w) = out.first().cloned() {
        out.push(format!("{}*", w.chars().take(2).collect::<String>()));
    }
    out
}

/// Byte offsets just after a line, at each share of `parts` of the lines, and after the first
/// and the last but one line.
fn cuts(bytes: &[u8], parts: &[f64]) -> Vec<usize> {
    let ends: Vec<usize> = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
        .filter(|&e| e < bytes.len())
        .collect();
    if ends.is_empty() {
        return Vec::new();
    }
    let mut out: BTreeSet<usize> = parts
        .iter()
        .map(|p| ends[((ends.len() as f64 * p) as usize).min(ends.len() - 1)])
        .collect();
    out.insert(ends[0]);
    out.insert(ends[ends.len() - 1]);
    out.into_iter().collect()
}

fn append(path: &Path, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(bytes).unwrap();
}

/// Indexes `bytes` written to `dir/name` in the pieces `cuts` make, one update after each,
/// through one indexer; returns what the store holds, and the tails the indexer kept.
fn by_appends(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    at: &[usize],
    words: &[String],
) -> (Held, usize) {
    let path = dir.join(name);
    let mut store = SqliteStore::memory().unwrap();
    let mut indexer = Indexer::new();
    let inputs = vec![(path.clone(), "/dir".to_owned())];
    std::fs::write(&path, &bytes[..at[0]]).unwrap();
    indexer.update(&mut store, &inputs, |_| true).unwrap();
    let mut from = at[0];
    for &to in at[1..].iter().chain([bytes.len()].iter()) {
        append(&path, &bytes[from..to]);
        from = to;
        indexer.update(&mut store, &inputs, |_| true).unwrap();
    }
    (held(&store, &path, words), indexer.tails())
}

/// The oracle (module docs). It fails when the append path is not taken for the files that
/// can take it (so a silent fall back to whole reads cannot pass it).
#[test]
fn appends_index_exactly_as_the_whole_file() {
    let Some(files) = sessions() else {
        return;
    };
    let mut followed = 0;
    let mut whole_only = Vec::new();
    for (file, beside) in &files {
        let bytes = std::fs::read(file).unwrap();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let tmp = tempfile::tempdir().unwrap();
        for b in beside {
            std::fs::copy(b, tmp.path().join(b.file_name().unwrap())).unwrap();
        }
        let path = tmp.path().join(&name);
        std::fs::write(&path, &bytes).unwrap();
        let words = words_of(&path);
        let mut whole_store = SqliteStore::memory().unwrap();
        // The whole file, once; each split writes the same bytes again, so the stamps differ:
        // the whole store is indexed again after each.
        let mut splits: Vec<Vec<usize>> = cuts(&bytes, &[0.25, 0.5, 0.75])
            .into_iter()
            .map(|c| vec![c])
            .collect();
        let two = cuts(&bytes, &[0.3, 0.6]);
        if two.len() >= 2 {
            splits.push(two[..2].to_vec());
        }
        // A writer caught in the middle of a line: the half line is read again with the rest.
        if let Some(&c) = cuts(&bytes, &[0.5]).get(1)
            && bytes[c..]
                .iter()
                .position(|&b| b == b'\n')
                .is_some_and(|n| n > 20)
        {
            splits.push(vec![c + 10]);
        }
        let mut tails = 0;
        for at in &splits {
            let (got, kept) = by_appends(tmp.path(), &name, &bytes, at, &words);
            tails += kept;
            index::update(
                &mut whole_store,
                &vec![(path.clone(), "/dir".to_owned())],
                |_| true,
            )
            .unwrap();
            let want = held(&whole_store, &path, &words);
            assert!(!want.rows.is_empty(), "{name}");
            same(
                &got,
                &want,
                &format!("{name} cut at bytes {at:?} of {}", bytes.len()),
            );
        }
        if tails > 0 {
            followed += 1;
        } else {
            whole_only.push(name);
        }
    }
    // Those read whole: the transcript with subagent files, the formats that are not Claude
    // Code or RAWP NDJSON, and two whose records wait to the end for a parent that is not in
    // the file (the end of the file would place them).
    assert!(
        followed >= 40,
        "followed {followed}; read whole: {whole_only:?}"
    );
    assert_eq!(
        whole_only,
        [
            "a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl",
            "anthropic_messages.jsonl",
            "cc_hook_other_session.jsonl",
            "cc_slash_mentions.jsonl",
            "cc_stream_json_init_mcp_task.jsonl",
        ],
        "files read whole instead of through the append path"
    );
}

/// The whole file's rows in a store of its own.
fn whole(path: &Path, words: &[String]) -> Held {
    let mut store = SqliteStore::memory().unwrap();
    index::update(
        &mut store,
        &vec![(path.to_owned(), "/dir".to_owned())],
        |_| true,
    )
    .unwrap();
    held(&store, path, words)
}

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/tui_session.jsonl"
);

/// A file rewritten under the indexer is read from scratch when the bytes before the offset
/// changed (same length: only the check sees it), when it shrank, and when another file took
/// its name (another inode); each time the rows are the whole file's.
#[test]
fn a_rewrite_a_truncation_and_a_new_inode_are_read_from_scratch() {
    let bytes = std::fs::read(FIXTURE).unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    let cut = cuts(&bytes, &[0.5])[1];
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("s.jsonl");
    let inputs = vec![(path.clone(), "/dir".to_owned())];
    let mut store = SqliteStore::memory().unwrap();
    let mut indexer = Indexer::new();
    std::fs::write(&path, &bytes[..cut]).unwrap();
    indexer.update(&mut store, &inputs, |_| true).unwrap();
    assert_eq!(indexer.tails(), 1);
    // The first prompt's words changed in place (same length), and the rest appended.
    let word = "failing".to_owned();
    assert!(text[..cut].contains("the failing test"));
    let other: String = "q".repeat(word.len());
    let rewritten = text[..cut].replacen(&word, &other, 1) + &text[cut..];
    assert_ne!(rewritten, text);
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, rewritten.as_bytes(), 0).unwrap();
    drop(f);
    indexer.update(&mut store, &inputs, |_| true).unwrap();
    let words = vec![word.to_lowercase(), other.clone()];
    let got = held(&store, &path, &words);
    same(&got, &whole(&path, &words), "rewritten in place");
    assert!(!got.hits[1].1.is_empty(), "{other} is found");
    // Shrunk to its first half, then grown back.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(cut as u64)
        .unwrap();
    indexer.update(&mut store, &inputs, |_| true).unwrap();
    same(
        &held(&store, &path, &words),
        &whole(&path, &words),
        "truncated",
    );
    append(&path, &rewritten.as_bytes()[cut..]);
    indexer.update(&mut store, &inputs, |_| true).unwrap();
    same(
        &held(&store, &path, &words),
        &whole(&path, &words),
        "grown back",
    );
    // Another file (the original text) renamed over it, longer than the offset.
    let next = tmp.path().join("next.jsonl");
    std::fs::write(&next, &text).unwrap();
    std::fs::rename(&next, &path).unwrap();
    indexer.update(&mut store, &inputs, |_| true).unwrap();
    let got = held(&store, &path, &words);
    same(&got, &whole(&path, &words), "another inode");
    assert!(got.hits[1].1.is_empty(), "{other} is gone");
    assert_eq!(indexer.tails(), 1);
}

/// Two indexers (two rawpv processes) following the same file into one store, each seeing
/// some of the appends: the store's rows are the whole file's after each update.
#[test]
fn two_indexers_on_one_store_stay_exact() {
    let bytes = std::fs::read(FIXTURE).unwrap();
    let at = cuts(&bytes, &[0.2, 0.4, 0.6, 0.8]);
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("s.jsonl");
    let db = tmp.path().join("library.sqlite");
    let inputs = vec![(path.clone(), "/dir".to_owned())];
    let mut a = (SqliteStore::open(&db).unwrap().store, Indexer::new());
    let mut b = (SqliteStore::open(&db).unwrap().store, Indexer::new());
    let words = words_of_bytes(tmp.path(), &bytes);
    std::fs::write(&path, &bytes[..at[0]]).unwrap();
    let mut from = at[0];
    for (k, &to) in at[1..].iter().chain([bytes.len()].iter()).enumerate() {
        // A sees every append, B every other one.
        a.1.update(&mut a.0, &inputs, |_| true).unwrap();
        if k % 2 == 0 {
            b.1.update(&mut b.0, &inputs, |_| true).unwrap();
        }
        append(&path, &bytes[from..to]);
        from = to;
        let (store, indexer) = if k % 2 == 0 { &mut b } else { &mut a };
        indexer.update(store, &inputs, |_| true).unwrap();
        same(
            &held(store, &path, &words),
            &whole(&path, &words),
            &format!("append {k}"),
        );
    }
}

/// [`words_of`] for bytes not yet at their path.
fn words_of_bytes(dir: &Path, bytes: &[u8]) -> Vec<String> {
    let p = dir.join("words.jsonl");
    std::fs::write(&p, bytes).unwrap();
    let w = words_of(&p);
    std::fs::remove_file(&p).unwrap();
    w
}

/// A record with `text` appended to the subagent file at `path`, after its last record.
fn append_agent_text(path: &Path, text: &str) {
    let body = std::fs::read_to_string(path).unwrap();
    let last: serde_json::Value =
        serde_json::from_str(body.lines().rev().find(|l| !l.trim().is_empty()).unwrap()).unwrap();
    let mut r = last.clone();
    r["parentUuid"] = last["uuid"].clone();
    r["uuid"] = serde_json::json!("99999999-0000-4000-8000-000000000001");
    r["type"] = serde_json::json!("assistant");
    r["message"] = serde_json::json!({
        "model": "claude-x", "id": "msg_zz", "type": "message", "role": "assistant",
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1}
    });
    append(path, format!("{r}\n").as_bytes());
}

/// An append to a session's subagent file (both layouts: 2.0.x `agent-*.jsonl` beside the
/// transcript, 2.1.x `<session>/subagents/`) is its session's: the session is read again and
/// its new words found, by the browser's indexer and by a one-shot update (`rawpv search`),
/// though the transcript itself did not change (the index kept the old rows: attack of
/// session 14).
#[test]
fn an_append_to_a_subagent_file_is_its_sessions() {
    let Some(deep) = corpus::dir("claude-code/cc-v2.0.55-deep-manifest") else {
        return;
    };
    let layouts = [
        (
            deep,
            "a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl",
            "agent-c8d9b115.jsonl",
        ),
        (
            PathBuf::from(FIXTURES).join("cc_subagents_layout"),
            "11111111-2222-4333-8444-555555555555.jsonl",
            "11111111-2222-4333-8444-555555555555/subagents/agent-a1b2c3d.jsonl",
        ),
    ];
    for (from, main, agent) in layouts {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("p");
        std::fs::create_dir_all(dir.join(agent).parent().unwrap()).unwrap();
        std::fs::copy(from.join(main), dir.join(main)).unwrap();
        std::fs::copy(from.join(agent), dir.join(agent)).unwrap();
        let path = dir.join(main);
        let inputs = rawpv::library::index::list(std::slice::from_ref(&dir));
        assert_eq!(inputs.len(), 1, "{inputs:?}");
        let mut live = (SqliteStore::memory().unwrap(), Indexer::new());
        let mut once = SqliteStore::memory().unwrap();
        live.1.update(&mut live.0, &inputs, |_| true).unwrap();
        index::update(&mut once, &inputs, |_| true).unwrap();
        let words = vec!["zzsubagentword".to_owned()];
        assert_eq!(held(&live.0, &path, &words).hits[0].1, Vec::new());
        append_agent_text(&dir.join(agent), "zzsubagentword written by the subagent");
        let mut fresh = SqliteStore::memory().unwrap();
        index::update(&mut fresh, &inputs, |_| true).unwrap();
        let want = held(&fresh, &path, &words);
        assert_eq!(want.hits[0].1.len(), 1, "{main}: the whole read finds it");
        live.1.update(&mut live.0, &inputs, |_| true).unwrap();
        same(
            &held(&live.0, &path, &words),
            &want,
            &format!("{main}, browser"),
        );
        index::update(&mut once, &inputs, |_| true).unwrap();
        same(&held(&once, &path, &words), &want, &format!("{main}, once"));
    }
}

/// A followed file that is no longer written to (older than `Indexer::recent`) lets its tail go
/// at the next update, with nothing changed: its session leaves the indexer's memory.
#[test]
fn a_tail_goes_once_its_file_is_no_longer_written() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("s.jsonl");
    std::fs::copy(FIXTURE, &path).unwrap();
    let inputs = vec![(path.clone(), "/dir".to_owned())];
    let mut store = SqliteStore::memory().unwrap();
    let mut indexer = Indexer::new();
    indexer.update(&mut store, &inputs, |_| true).unwrap();
    assert_eq!(indexer.tails(), 1);
    indexer.update(&mut store, &inputs, |_| true).unwrap();
    assert_eq!(indexer.tails(), 1, "still written to: kept");
    indexer.recent = std::time::Duration::ZERO;
    let p = indexer.update(&mut store, &inputs, |_| true).unwrap();
    assert_eq!((p.files, indexer.tails()), (0, 0));
}
