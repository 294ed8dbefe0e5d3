//! `check`, `stats`, `print` (plain and `--detail`) and `convert` give the outputs the binary
//! gave before issue 17 (the lenient parse layer, the folding commands): the oracle is
//! `tests/fixtures/oracle_outputs.txt`, one SHA-256 of stdout and the exit code per (command,
//! input), written by the binary of `c550f45`.
//!
//! Inputs: every RAWP fixture (`tests/fixtures/*.ndjson`), two generated recordings
//! (`examples/gen.rs`, seeds 1 and 2), every corpus session file, and each corpus file converted
//! to RAWP (so that the RAWP reader sees real content). Commands run in the input's directory on
//! its bare name, so no path of this machine reaches an output.
//!
//! An output that changes on purpose (a decoder that now reads more, a new finding) is blessed
//! again: `RAWPV_ORACLE_BLESS=path/to/rawpv cargo test --test it oracle_outputs` rewrites the
//! file with that binary's outputs; say in the commit which lines changed and why.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use crate::generator;

const ORACLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/oracle_outputs.txt"
);
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

const COMMANDS: &[&[&str]] = &[
    &["check"],
    &["check", "--format", "json"],
    &["stats"],
    &["print", "--color", "never"],
    &["print", "--detail", "--width", "100", "--color", "never"],
    &["convert"],
];

/// (name in the oracle, directory, file name).
fn inputs(bin: &Path, work: &Path) -> Vec<(String, PathBuf, String)> {
    let mut out = Vec::new();
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(FIXTURES)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ndjson"))
        .collect();
    fixtures.sort();
    for p in fixtures {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        out.push((format!("fixtures/{name}"), PathBuf::from(FIXTURES), name));
    }
    for seed in [1, 2] {
        let name = format!("gen-{seed}.ndjson");
        let mut buf = Vec::new();
        generator::generate(&mut buf, 3_000, seed).unwrap();
        std::fs::write(work.join(&name), buf).unwrap();
        out.push((format!("generated/{name}"), work.to_path_buf(), name));
    }
    let root = Path::new(crate::support::corpus::CORPUS);
    if crate::support::corpus::skipped(root) {
        return out;
    }
    for sub in ["claude-code", "anthropic-api", "codex", "gemini"] {
        for p in crate::support::corpus::files(sub).unwrap() {
            // Subagent files are read with their session, not alone.
            if p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("agent-")
            {
                continue;
            }
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let dir = p.parent().unwrap().to_path_buf();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let rawp = format!("{}.rawp.ndjson", rel.replace('/', "_"));
            let converted = run(bin, &dir, &name, &["convert"]).1;
            std::fs::write(work.join(&rawp), converted).unwrap();
            out.push((format!("corpus/{rel}"), dir, name));
            out.push((format!("corpus-as-rawp/{rel}"), work.to_path_buf(), rawp));
        }
    }
    out
}

/// Runs `bin args name` in `dir`: (exit code, stdout).
fn run(bin: &Path, dir: &Path, name: &str, args: &[&str]) -> (i32, Vec<u8>) {
    let out = Command::new(bin)
        .args(args)
        .arg(name)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("RAWPV_LOG")
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), out.stdout)
}

fn digest(code: i32, stdout: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(stdout);
    let mut s = format!("exit {code} ");
    for b in h.finalize() {
        write!(s, "{b:02x}").unwrap();
    }
    s
}

/// Every (command, input) → its digest, with `bin`.
fn outputs(bin: &Path) -> BTreeMap<String, String> {
    let work = tempfile::tempdir().unwrap();
    let mut map = BTreeMap::new();
    for (name, dir, file) in inputs(bin, work.path()) {
        for args in COMMANDS {
            let (code, stdout) = run(bin, &dir, &file, args);
            map.insert(format!("{} {name}", args.join(" ")), digest(code, &stdout));
        }
    }
    map
}

fn read_oracle() -> BTreeMap<String, String> {
    std::fs::read_to_string(ORACLE)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (digest, key) = l.split_once(" | ").unwrap();
            (key.to_owned(), digest.to_owned())
        })
        .collect()
}

#[test]
fn command_outputs_match_the_oracle() {
    if let Ok(bin) = std::env::var("RAWPV_ORACLE_BLESS") {
        let mut text = String::from(
            "# Digests of command outputs (see tests/it/oracle_outputs.rs): exit code, SHA-256 of stdout | command input\n",
        );
        for (k, v) in outputs(Path::new(&bin)) {
            writeln!(text, "{v} | {k}").unwrap();
        }
        std::fs::write(ORACLE, text).unwrap();
        return;
    }
    let want = read_oracle();
    let got = outputs(Path::new(env!("CARGO_BIN_EXE_rawpv")));
    let corpus_present = got.keys().any(|k| k.contains(" corpus/"));
    let mut diffs = Vec::new();
    for (k, w) in &want {
        if !corpus_present && k.contains(" corpus") {
            continue;
        }
        match got.get(k) {
            Some(g) if g == w => {}
            Some(g) => diffs.push(format!("changed: {k}: {w} → {g}")),
            None => diffs.push(format!("no longer run: {k}")),
        }
    }
    for k in got.keys().filter(|k| !want.contains_key(*k)) {
        diffs.push(format!("not in the oracle: {k}"));
    }
    assert!(
        diffs.is_empty(),
        "{} of {} outputs differ from the oracle:\n{}",
        diffs.len(),
        want.len(),
        diffs.join("\n")
    );
}
