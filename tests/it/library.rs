//! The session library (issue 27) end to end: a fake HOME holding the corpus (Claude Code
//! projects named as Claude Code names them, with a subagent file; Codex rollouts; Gemini
//! sessions) and the Anthropic API recordings in a `--dir`; `rawpv search` against a
//! brute-force scan of every decoded document, the index surviving SIGKILL, two processes, a
//! truncated file and a deleted session; `rawpv sessions` against each session's own `cwd`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

use crate::support::corpus;
use rawpv::library::search;

/// The fake HOME (module docs); `None` when the corpus is absent.
fn corpus_home() -> Option<tempfile::TempDir> {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    for f in corpus::files("claude-code")? {
        if f.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let cwd = text
            .split("\"cwd\":\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .expect("a cwd");
        let dir: String = cwd
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let d = h.join(".claude/projects").join(dir);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::copy(&f, d.join(f.file_name().unwrap())).unwrap();
    }
    let codex = h.join(".codex/sessions/2025/01/01");
    std::fs::create_dir_all(&codex).unwrap();
    for f in corpus::files("codex")? {
        std::fs::copy(&f, codex.join(f.file_name().unwrap())).unwrap();
    }
    let gemini = h.join(".gemini/tmp").join("b".repeat(64)).join("chats");
    std::fs::create_dir_all(&gemini).unwrap();
    for f in corpus::files("gemini")? {
        std::fs::copy(&f, gemini.join(f.file_name().unwrap())).unwrap();
    }
    let api = h.join("api");
    std::fs::create_dir_all(&api).unwrap();
    for f in corpus::files("anthropic-api")? {
        if f.extension().is_some_and(|e| e == "json") {
            std::fs::copy(&f, api.join(f.file_name().unwrap())).unwrap();
        }
    }
    Some(home)
}

fn cmd(home: &Path) -> Command {
    let mut c = Command::cargo_bin("rawpv").unwrap();
    c.env_clear()
        .env("HOME", home)
        .env("TZ", "UTC")
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_CONFIG_HOME", home.join(".config"));
    c
}

fn rawpv(home: &Path, args: &[&str]) -> (i32, String, String) {
    let out = cmd(home).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Every session file the library holds for `home` (its roots and `home/api`).
fn library_files(home: &Path) -> Vec<PathBuf> {
    let roots = [
        home.join(".claude/projects"),
        home.join(".codex/sessions"),
        home.join(".gemini/tmp"),
        home.join("api"),
    ];
    rawpv::library::index::list(&roots)
        .into_iter()
        .map(|(p, _)| p)
        .collect()
}

/// The regex of a whole word as FTS5's tokenizer cuts words.
fn word_re(word: &str) -> regex::Regex {
    regex::Regex::new(&format!(
        r"(?i)(?:^|[^\p{{L}}\p{{N}}\p{{Co}}]){}(?:$|[^\p{{L}}\p{{N}}\p{{Co}}])",
        regex::escape(word)
    ))
    .unwrap()
}

/// (file, item) of every prompt, reply, thinking block and call whose text holds `word`:
/// each file decoded and every row tested with the viewer's own search on the row's own records
/// (`own_matches`: the library indexes a call's records, not its hooks, which are other lines).
fn brute_force(home: &Path, word: &str) -> BTreeSet<(PathBuf, u32)> {
    let re = word_re(word);
    let mut out = BTreeSet::new();
    for f in library_files(home) {
        let Ok((s, _)) = rawpv::source::file::fold_path(&f) else {
            continue;
        };
        for i in 0..s.items.len() {
            let is_doc = match &s.items[i] {
                rawpv::session::Item::Invocation(_) => true,
                rawpv::session::Item::Message(m) => !m.text.is_empty(),
                rawpv::session::Item::Event(_) => false,
            };
            if is_doc && rawpv::session::query::own_matches(&s, i, &re) {
                out.insert((f.clone(), i as u32));
            }
        }
    }
    out
}

fn search_json(home: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["search", "--json", "--dir"];
    let api = home.join("api");
    all.push(api.to_str().unwrap());
    all.extend_from_slice(args);
    let (code, out, err) = rawpv(home, &all);
    assert!(code == 0 || code == 1, "{args:?}: exit {code}: {err}");
    (
        code,
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}")),
    )
}

fn hits(doc: &Value) -> BTreeSet<(PathBuf, u32)> {
    doc["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                PathBuf::from(h["path"].as_str().unwrap()),
                h["item"].as_u64().unwrap() as u32,
            )
        })
        .collect()
}

fn validator(name: &str) -> jsonschema::Validator {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schemas")
        .join(name);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    jsonschema::validator_for(&v).unwrap()
}

fn assert_valid(schema: &str, doc: &Value) {
    let v = validator(schema);
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{schema}: {errors:#?}");
}

/// Words of the oracle: in prompts, replies, inputs and outputs of several formats;
/// `WebLinksAddon` only inside tool outputs (checked below).
const WORDS: &[&str] = &[
    "xterm",
    "parser",
    "dialyzer",
    "WebLinksAddon",
    "README",
    "uv",
    "tmux",
];
/// Words that occur only in tool outputs (results), never in a prompt, reply or input.
const OUTPUT_ONLY: &[&str] = &["WebLinksAddon"];

#[test]
fn search_lists_exactly_what_a_brute_force_scan_finds() {
    let Some(home) = corpus_home() else {
        return;
    };
    let h = home.path();
    for w in WORDS {
        let want = brute_force(h, w);
        let (code, doc) = search_json(h, &[w]);
        assert_valid("search.v1.json", &doc);
        assert_eq!(hits(&doc), want, "search {w}");
        assert_eq!(code, i32::from(want.is_empty()), "exit code of search {w}");
        assert!(!want.is_empty(), "{w} is in the corpus");
        for hit in doc["hits"].as_array().unwrap() {
            let snippet = hit["snippet"].as_str().unwrap();
            let mark = &hit["matches"][0];
            let (start, end) = (
                mark[0].as_u64().unwrap() as usize,
                mark[1].as_u64().unwrap() as usize,
            );
            assert!(
                snippet[start..end].eq_ignore_ascii_case(w),
                "{w}: {snippet:?} marks {start}..{end}"
            );
        }
    }
    // The output-only words are found in outputs only: each hit is a call whose output (read
    // back from the file) holds the word and whose input does not.
    for w in OUTPUT_ONLY {
        let re = word_re(w);
        let (_, doc) = search_json(h, &[w]);
        for hit in doc["hits"].as_array().unwrap() {
            assert_eq!(hit["kind"], "call", "{w}: {hit}");
            let path = PathBuf::from(hit["path"].as_str().unwrap());
            let (s, _) = rawpv::source::file::fold_path(&path).unwrap();
            let rawpv::session::Item::Invocation(k) =
                &s.items[hit["item"].as_u64().unwrap() as usize]
            else {
                panic!("{w}: not a call");
            };
            let inv = &s.invocations[*k];
            let input = serde_json::to_string(&s.input(inv)).unwrap();
            let output = serde_json::to_string(&s.output(inv).unwrap()).unwrap();
            assert!(!re.is_match(&input) && re.is_match(&output), "{w}: {hit}");
        }
    }
    // Prefixes and phrases are verified too; a word nowhere is exit 1.
    let (_, doc) = search_json(h, &["xterm*"]);
    assert!(hits(&doc).is_superset(&brute_force(h, "xterm")));
    let (code, doc) = search_json(h, &["zqxjkvwpl"]);
    assert_eq!((code, hits(&doc).len()), (1, 0));
    let (code, _, err) = rawpv(h, &["search", "\"unclosed"]);
    assert_eq!(code, 2, "{err}");
    // --regex narrows exactly; --tool keeps that tool's calls.
    let (_, doc) = search_json(h, &["xterm", "--regex", r"xterm\.js"]);
    let js = brute_force(h, "xterm")
        .into_iter()
        .filter(|(p, i)| {
            let (s, _) = rawpv::source::file::fold_path(p).unwrap();
            rawpv::library::index::doc_text(&s, *i as usize).is_some_and(|t| t.contains("xterm.js"))
        })
        .collect::<BTreeSet<_>>();
    assert_eq!(hits(&doc), js);
    let (_, doc) = search_json(h, &["xterm", "--tool", "read"]);
    assert!(!hits(&doc).is_empty());
    assert!(
        doc["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["tool"] == "Read")
    );
    // --no-index reads every file and gives the same hits, writing no index.
    let fresh = corpus_home().unwrap();
    let (_, doc) = search_json(fresh.path(), &["xterm", "--no-index"]);
    assert_eq!(hits(&doc), brute_force(fresh.path(), "xterm"));
    assert!(!fresh.path().join(".cache/rawpv/library.sqlite").exists());
}

#[test]
fn sessions_show_each_sessions_own_cwd_and_validate() {
    let Some(home) = corpus_home() else {
        return;
    };
    let h = home.path();
    let (code, out, err) = rawpv(h, &["sessions", "--json"]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_valid("sessions.v1.json", &doc);
    let rows = doc["sessions"].as_array().unwrap();
    let files = library_files(h)
        .into_iter()
        .filter(|p| !p.starts_with(h.join("api")))
        .collect::<BTreeSet<_>>();
    assert_eq!(
        rows.iter()
            .map(|r| PathBuf::from(r["path"].as_str().unwrap()))
            .collect::<BTreeSet<_>>(),
        files
    );
    for r in rows {
        let path = PathBuf::from(r["path"].as_str().unwrap());
        let (s, _) = rawpv::source::file::fold_path(&path).unwrap();
        if let Some(cwd) = s.sessions.iter().next().and_then(|(_, e)| e.cwd.clone()) {
            assert_eq!(r["project"], &*cwd, "{}", path.display());
        }
        if path.starts_with(h.join(".claude")) {
            assert!(r["project"].as_str().unwrap().starts_with('/'), "{r}");
        }
    }
    // Sorted by last activity, newest first.
    let last: Vec<&str> = rows
        .iter()
        .filter_map(|r| r["last_activity"].as_str())
        .collect();
    let mut sorted = last.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(last, sorted);
    // The deep-manifest session: its own cwd, not the directory name decoded.
    assert!(rows.iter().any(|r| r["project"] == "/src/deep-manifest"));
    let (_, out, _) = rawpv(h, &["sessions", "--json", "--project", "deep-manifest"]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["sessions"].as_array().unwrap().len(), 1);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let m = std::fs::metadata(h.join(".cache/rawpv/library.sqlite")).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o600);
    }
}

#[test]
fn a_deleted_session_leaves_search_and_a_truncated_index_is_rebuilt() {
    let Some(home) = corpus_home() else {
        return;
    };
    let h = home.path();
    let want = brute_force(h, "xterm");
    let (_, doc) = search_json(h, &["xterm"]);
    assert_eq!(hits(&doc), want);
    let gone = want.iter().next().unwrap().0.clone();
    std::fs::remove_file(&gone).unwrap();
    let (_, doc) = search_json(h, &["xterm"]);
    assert!(
        hits(&doc).iter().all(|(p, _)| *p != gone),
        "{} still found",
        gone.display()
    );
    assert_eq!(hits(&doc), brute_force(h, "xterm"));
    // Cut the index file in half: the next run says so, moves it aside and rebuilds.
    let db = h.join(".cache/rawpv/library.sqlite");
    let len = std::fs::metadata(&db).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
    f.set_len(len / 2).unwrap();
    drop(f);
    let (code, out, err) = rawpv(
        h,
        &[
            "search",
            "--json",
            "--dir",
            h.join("api").to_str().unwrap(),
            "xterm",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("could not be used") && err.contains("rebuilt"),
        "{err}"
    );
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(hits(&doc), brute_force(h, "xterm"));
    // A file that is not a database at all, likewise.
    std::fs::write(&db, b"hello, this is not SQLite").unwrap();
    let (code, _, err) = rawpv(h, &["sessions"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("moved to"), "{err}");
}

/// A corpus home with `n` more copies of every Claude Code session (other names, so the index
/// has work for a while).
fn big_home(n: usize) -> Option<tempfile::TempDir> {
    let home = corpus_home()?;
    let projects = home.path().join(".claude/projects");
    let mut files = Vec::new();
    for d in std::fs::read_dir(&projects).unwrap().flatten() {
        for f in std::fs::read_dir(d.path()).unwrap().flatten() {
            if f.path().is_file() {
                files.push(f.path());
            }
        }
    }
    for k in 0..n {
        for f in &files {
            let name = format!("copy{k}-{}", f.file_name().unwrap().to_str().unwrap());
            std::fs::copy(f, f.with_file_name(name)).unwrap();
        }
    }
    Some(home)
}

#[test]
fn sigkill_mid_index_then_a_restart_gives_a_correct_index() {
    let Some(home) = big_home(6) else {
        return;
    };
    let h = home.path();
    let bin = assert_cmd::cargo::cargo_bin("rawpv");
    let mut child = std::process::Command::new(bin)
        .env_clear()
        .env("HOME", h)
        .env("XDG_CACHE_HOME", h.join(".cache"))
        .env("XDG_CONFIG_HOME", h.join(".config"))
        .args(["sessions"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let db = h.join(".cache/rawpv/library.sqlite");
    // Kill once the first sessions are written (the index exists and is not empty).
    let t0 = std::time::Instant::now();
    while t0.elapsed() < std::time::Duration::from_secs(20)
        && std::fs::metadata(&db).map_or(0, |m| m.len()) == 0
    {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::thread::sleep(std::time::Duration::from_millis(150));
    let finished_early = child.try_wait().unwrap().is_some();
    let _ = child.kill(); // SIGKILL
    let _ = child.wait();
    assert!(
        !finished_early,
        "indexing finished before the kill: make the home bigger"
    );
    for w in ["xterm", "WebLinksAddon"] {
        let (_, doc) = search_json(h, &[w]);
        assert_eq!(hits(&doc), brute_force(h, w), "after SIGKILL: {w}");
    }
}

#[test]
fn two_instances_at_once_both_answer() {
    let Some(home) = big_home(2) else {
        return;
    };
    let h = home.path();
    let want = brute_force(h, "xterm");
    let api = h.join("api");
    let run = || {
        cmd(h)
            .args(["search", "--json", "--dir", api.to_str().unwrap(), "xterm"])
            .output()
            .unwrap()
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(run);
        let b = s.spawn(run);
        (a.join().unwrap(), b.join().unwrap())
    });
    for out in [a, b] {
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(hits(&doc), want);
    }
}

/// Attack 11 #2: an index merely locked by another process (a writer holding its lock) is not
/// damage: a run that has nothing to write reads it at once (an index at this schema opens
/// without the write lock), and the file is never moved aside.
#[test]
fn a_locked_index_is_read_and_never_moved_aside() {
    let Some(home) = corpus_home() else {
        return;
    };
    let h = home.path();
    let (code, before, err) = rawpv(h, &["sessions"]);
    assert_eq!(code, 0, "{err}");
    let db = h.join(".cache/rawpv/library.sqlite");
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE;").unwrap();
    let (code, after, err) = rawpv(h, &["sessions"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(after, before);
    assert!(!err.contains("could not be used"), "{err}");
    let aside: Vec<_> = std::fs::read_dir(db.parent().unwrap())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".bad-"))
        .collect();
    assert_eq!(aside, Vec::<String>::new());
    holder.execute_batch("COMMIT;").unwrap();
}

/// One RAWP prompt line (with its newline) at second `ts` of 2026-11-29T11:00.
fn prompt_line(ts: u32, text: &str) -> String {
    format!(
        "{}\n",
        serde_json::json!({
            "type": "control.prompt.request",
            "timestamp": format!("2026-11-29T11:00:{ts:02}.000Z"),
            "payload": {"input_type": "text", "text": text},
        })
    )
}

/// Attack 11 #4: a word is found however its letters are encoded and cased. `İ` (which Rust
/// lower-cases to `i` and a combining dot, a separator to the index) and `é` typed as one
/// character against a text holding `e` and a combining accent (NFD, as macOS file names
/// and some editors write it), and back.
#[test]
fn words_are_found_whatever_their_unicode_form() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let api = h.join("api");
    std::fs::create_dir_all(&api).unwrap();
    let file = api.join("s.jsonl");
    std::fs::write(
        &file,
        prompt_line(1, "yarın İstanbul'a gidiyoruz")
            + &prompt_line(2, "un cafe\u{301} au lait, merci"),
    )
    .unwrap();
    let snippet_of = |args: &[&str]| -> Vec<(String, String)> {
        let (code, doc) = search_json(h, args);
        assert_eq!(code, 0, "{args:?} found nothing: {doc}");
        doc["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|hit| {
                let snippet = hit["snippet"].as_str().unwrap().to_owned();
                let mark = &hit["matches"][0];
                let (from, to) = (
                    mark[0].as_u64().unwrap() as usize,
                    mark[1].as_u64().unwrap() as usize,
                );
                (snippet[from..to].to_owned(), snippet)
            })
            .collect()
    };
    let istanbul = vec![(
        "İstanbul".to_owned(),
        "yarın İstanbul'a gidiyoruz".to_owned(),
    )];
    assert_eq!(snippet_of(&["İstanbul"]), istanbul);
    // A prefix marks what it matched.
    assert_eq!(
        snippet_of(&["İst*"]),
        vec![("İst".to_owned(), istanbul[0].1.clone())]
    );
    let cafe = vec![("café".to_owned(), "un café au lait, merci".to_owned())];
    assert_eq!(snippet_of(&["café"]), cafe);
    assert_eq!(snippet_of(&["cafe\u{301}"]), cafe);
    assert_eq!(snippet_of(&["CAFÉ"]), cafe);
}

/// Attack 11 #1: a deleted session's text does not outlive it in the index's bytes (the
/// full-text postings, the call rows, the WAL), not only in its answers.
#[test]
fn a_deleted_sessions_words_leave_the_index_file() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let api = h.join("api");
    std::fs::create_dir_all(&api).unwrap();
    // Two sessions, so the index is not simply emptied; the secret is in one.
    std::fs::write(api.join("keep.jsonl"), prompt_line(1, "an ordinary prompt")).unwrap();
    let gone = api.join("gone.jsonl");
    std::fs::write(
        &gone,
        prompt_line(2, "the password is qzvkwxhorsebatterystaple"),
    )
    .unwrap();
    let (code, doc) = search_json(h, &["qzvkwxhorsebatterystaple"]);
    assert_eq!((code, hits(&doc).len()), (0, 1), "{doc}");
    let db = h.join(".cache/rawpv/library.sqlite");
    let bytes_hold = |needle: &[u8]| -> Vec<String> {
        std::fs::read_dir(db.parent().unwrap())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| {
                std::fs::read(e.path())
                    .unwrap()
                    .windows(needle.len())
                    .any(|w| w == needle)
            })
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    };
    // The term's tail (FTS5 may store a term as a suffix of the one before it).
    assert_ne!(bytes_hold(b"batterystaple"), Vec::<String>::new());
    std::fs::remove_file(&gone).unwrap();
    let (code, doc) = search_json(h, &["qzvkwxhorsebatterystaple"]);
    assert_eq!((code, hits(&doc).len()), (1, 0), "{doc}");
    assert_eq!(bytes_hold(b"batterystaple"), Vec::<String>::new());
    assert_eq!(bytes_hold(b"gone.jsonl"), Vec::<String>::new());
    let (code, doc) = search_json(h, &["ordinary"]);
    assert_eq!((code, hits(&doc).len()), (0, 1), "{doc}");
}

/// Attack 11 #3: while another process holds the index's write lock (its own long indexing)
/// past the busy timeout, `rawpv search` answers from what the index holds and says so; it
/// does not fail. Once the lock is gone the new session is indexed.
#[test]
fn a_search_while_another_rawpv_writes_answers_from_the_index() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let api = h.join("api");
    std::fs::create_dir_all(&api).unwrap();
    std::fs::write(api.join("old.jsonl"), prompt_line(1, "an aardvark prompt")).unwrap();
    let (code, doc) = search_json(h, &["aardvark"]);
    assert_eq!((code, hits(&doc).len()), (0, 1), "{doc}");
    std::fs::write(api.join("new.jsonl"), prompt_line(2, "a narwhal prompt")).unwrap();
    let db = h.join(".cache/rawpv/library.sqlite");
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE;").unwrap();
    let dir = api.to_str().unwrap();
    let (code, out, err) = rawpv(h, &["search", "--json", "--dir", dir, "aardvark"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("written by another rawpv") && err.contains("what the index holds"),
        "{err}"
    );
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(hits(&doc).len(), 1, "{doc}");
    holder.execute_batch("COMMIT;").unwrap();
    drop(holder);
    let (code, doc) = search_json(h, &["narwhal"]);
    assert_eq!((code, hits(&doc).len()), (0, 1), "{doc}");
}

/// Every document the index can read back from its own lines (`Doc::recipe`) has, read that
/// way (`search::texts_by_line`: only those lines decoded), exactly the text of the whole file
/// folded: for every corpus session and every fixture, all formats. This is what lets a
/// search verify its candidates without folding their whole files.
#[test]
fn documents_read_from_their_lines_equal_the_whole_files() {
    let Some(mut files) = corpus::all_sessions() else {
        return;
    };
    let mut dirs = vec![PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures"
    ))];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    let (mut by_line, mut whole, mut with_recipes) = (0usize, 0usize, 0usize);
    for f in &files {
        let (_, _, docs) = rawpv::library::index::read(f, "");
        let wanted: Vec<(usize, search::ByLine<'_>)> = docs
            .iter()
            .enumerate()
            .filter_map(|(n, d)| {
                Some((
                    n,
                    search::ByLine {
                        line: d.line,
                        kind: d.kind,
                        recipe: d.recipe.as_deref()?,
                    },
                ))
            })
            .collect();
        whole += docs.len() - wanted.len();
        if wanted.is_empty() {
            continue;
        }
        with_recipes += 1;
        let lines: Vec<search::ByLine<'_>> = wanted.iter().map(|w| w.1).collect();
        let texts = search::texts_by_line(f, &lines)
            .unwrap_or_else(|| panic!("{}: not read back by line", f.display()));
        for ((n, w), text) in wanted.iter().zip(texts) {
            assert_eq!(
                text.as_deref(),
                Some(docs[*n].text.as_str()),
                "{}: line {} {} (recipe {})",
                f.display(),
                w.line,
                w.kind,
                w.recipe
            );
            by_line += 1;
        }
    }
    println!("{by_line} documents read by line in {with_recipes} files, {whole} only whole");
    assert!(
        with_recipes > 200 && by_line > 1000,
        "{by_line} {with_recipes}"
    );
}

/// The browser (the real binary on a pty, 80x24) over a truncated index file says that it was
/// moved aside and rebuilt, and lists the sessions; the note stays on the status line while
/// the rebuild's progress comes and goes, until a key (the browser dropped the open's notes,
/// and the indexing thread's went with the next progress: attack of session 14).
#[test]
fn the_browser_says_a_truncated_index_was_rebuilt() {
    let Some(home) = corpus_home() else {
        return;
    };
    let h = home.path();
    let (code, _, err) = rawpv(h, &["sessions"]);
    assert_eq!(code, 0, "{err}");
    let db = h.join(".cache/rawpv/library.sqlite");
    let len = std::fs::metadata(&db).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&db)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let mut pty = crate::support::pty::Pty::spawn(&[], h, h, 80, 24);
    pty.wait_screen(
        "library index rebuilt: the old one could not be used (the file is",
        std::time::Duration::from_secs(10),
    );
    pty.wait_screen("/spotter", std::time::Duration::from_secs(10));
    // Indexed again (no progress left on the status line), and still said.
    let t0 = std::time::Instant::now();
    while pty.screen().iter().any(|r| r.contains("indexing"))
        && t0.elapsed() < std::time::Duration::from_secs(20)
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let screen = pty.screen().join("\n");
    assert!(!screen.contains("indexing"), "{screen}");
    assert!(screen.contains("could not be used"), "{screen}");
    assert!(
        h.join(".cache/rawpv")
            .read_dir()
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().contains(".bad-"))
    );
    // A key puts it away.
    pty.send(b"\x1b[B");
    pty.wait_screen(
        "/ search all sessions · Enter open",
        std::time::Duration::from_secs(5),
    );
    let t0 = std::time::Instant::now();
    while pty.screen().iter().any(|r| r.contains("could not be used"))
        && t0.elapsed() < std::time::Duration::from_secs(5)
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let screen = pty.screen().join("\n");
    assert!(!screen.contains("could not be used"), "{screen}");
}
