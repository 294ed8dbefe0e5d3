//! `rawpv stats` over the library (issue 28): on a fake HOME holding the Claude Code corpus,
//! `stats --all --by day --json` gives per day the token totals of the kept `ccusage daily
//! --json` output (`tests/fixtures/ccusage/`, written by `tests/oracle/ccusage_compare.sh` with
//! ccusage 20.0.24 from npm, so this test needs no npm) and costs within 1 % of ccusage's where
//! both price the model; the report validates against `schemas/stats-report.v1.json`; the
//! other groupings, `--since`/`--until`, deduplication across files, the cache, unpriced models
//! and bad inputs behave as `--help` says.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

use crate::support::corpus;

const KEPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/ccusage");

/// A fake HOME with every Claude Code corpus session under `.claude/projects/<cwd as Claude Code
/// names it>/` and the Codex rollouts under `.codex/sessions/2025/01/01/`, as
/// `tests/oracle/ccusage_compare.sh` builds it (Gemini is left out: the script says why).
fn corpus_home() -> Option<tempfile::TempDir> {
    let files = corpus::files("claude-code")?;
    let home = tempfile::tempdir().unwrap();
    for f in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
    {
        let text = std::fs::read_to_string(f).unwrap();
        let cwd = text
            .split("\"cwd\":\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .expect("a cwd");
        let dir: String = cwd
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let d = home.path().join(".claude/projects").join(dir);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::copy(f, d.join(f.file_name().unwrap())).unwrap();
    }
    let codex = home.path().join(".codex/sessions/2025/01/01");
    std::fs::create_dir_all(&codex).unwrap();
    for f in corpus::files("codex")? {
        let text = std::fs::read_to_string(&f).unwrap();
        let first = text.lines().next().unwrap_or("");
        if first.contains(r#""type":"session_meta""#) {
            std::fs::copy(&f, codex.join(f.file_name().unwrap())).unwrap();
        }
    }
    Some(home)
}

/// `rawpv ARGS` with HOME = `home`, days in UTC, nothing of this machine's environment.
fn rawpv(home: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("rawpv")
        .unwrap()
        .env_clear()
        .env("HOME", home)
        .env("TZ", "UTC")
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn json(home: &Path, args: &[&str]) -> Value {
    let (code, out, err) = rawpv(home, args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}\n{out}"))
}

fn schema() -> jsonschema::Validator {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/stats-report.v1.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    jsonschema::validator_for(&v).unwrap()
}

fn assert_valid(doc: &Value, what: &str) {
    let v = schema();
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}");
}

/// (input, output, cache writes, cache reads) of a ccusage day or breakdown.
fn cc_tokens(d: &Value) -> [u64; 4] {
    [
        "inputTokens",
        "outputTokens",
        "cacheCreationTokens",
        "cacheReadTokens",
    ]
    .map(|k| d[k].as_u64().unwrap())
}

fn rv_tokens(t: &Value) -> [u64; 4] {
    ["input", "output", "cache_write", "cache_read"].map(|k| t[k].as_u64().unwrap())
}

/// The kept outputs are the files the script wrote, and rawpv's run today gives ccusage's
/// per-day token totals exactly and its costs within 1 % per model.
#[test]
fn stats_by_day_matches_the_kept_ccusage_daily() {
    let Some(home) = corpus_home() else {
        return;
    };
    let kept: Value =
        serde_json::from_str(&std::fs::read_to_string(Path::new(KEPT).join("daily.json")).unwrap())
            .unwrap();
    let version = std::fs::read_to_string(Path::new(KEPT).join("ccusage-version.txt")).unwrap();
    assert!(version.contains("20.0.24"), "{version}");
    let ours = json(
        home.path(),
        &["stats", "--all", "--by", "day", "--json", "--no-cache"],
    );
    assert_valid(&ours, "stats --all --by day");
    let days: Vec<&Value> = kept["daily"].as_array().unwrap().iter().collect();
    let rows: Vec<&Value> = ours["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["tokens"]["total"].as_u64() > Some(0))
        .collect();
    // The same days, in the same order.
    let cc_days: Vec<&str> = days.iter().map(|d| d["period"].as_str().unwrap()).collect();
    let rv_days: Vec<&str> = rows.iter().map(|r| r["key"].as_str().unwrap()).collect();
    assert_eq!(rv_days, cc_days);
    assert!(cc_days.len() >= 10, "{cc_days:?}");
    for (d, r) in days.iter().zip(&rows) {
        let day = d["period"].as_str().unwrap();
        assert_eq!(rv_tokens(&r["tokens"]), cc_tokens(d), "{day}: tokens");
        for b in d["modelBreakdowns"].as_array().unwrap() {
            let model = b["modelName"].as_str().unwrap();
            let m = r["models"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["model"] == model)
                .unwrap_or_else(|| panic!("{day}: no {model} in {r}"));
            assert_eq!(rv_tokens(&m["tokens"]), cc_tokens(b), "{day} {model}");
            let (ours, theirs) = (m["cost_usd"].as_f64(), b["cost"].as_f64().unwrap());
            // Where both price the model (ccusage says 0 for a model it cannot price).
            if let Some(ours) = ours
                && theirs > 0.0
            {
                let off = (ours / theirs - 1.0).abs();
                assert!(off < 0.01, "{day} {model}: {ours} vs ccusage {theirs}");
            }
        }
        let (ours, theirs) = (
            r["cost_usd"].as_f64().unwrap(),
            d["totalCost"].as_f64().unwrap(),
        );
        assert!(
            (ours / theirs - 1.0).abs() < 0.01,
            "{day}: {ours} vs {theirs}"
        );
    }
    // The totals too.
    let t = &kept["totals"];
    assert_eq!(rv_tokens(&ours["total"]["tokens"]), cc_tokens(t));
    // The kept rawpv output is today's (the script writes it with the release binary).
    let kept_ours: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(KEPT).join("rawpv-daily.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(kept_ours["rows"], ours["rows"]);
}

/// Weeks and months too: the kept `ccusage weekly` / `monthly --json` periods and token totals.
#[test]
fn weeks_and_months_match_the_kept_ccusage_outputs() {
    let Some(home) = corpus_home() else {
        return;
    };
    for (by, file, list) in [
        ("week", "weekly.json", "weekly"),
        ("month", "monthly.json", "monthly"),
    ] {
        let kept: Value =
            serde_json::from_str(&std::fs::read_to_string(Path::new(KEPT).join(file)).unwrap())
                .unwrap();
        let ours = json(
            home.path(),
            &["stats", "--all", "--by", by, "--json", "--no-cache"],
        );
        let theirs: Vec<(String, [u64; 4])> = kept[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| (d["period"].as_str().unwrap().to_owned(), cc_tokens(d)))
            .collect();
        let mine: Vec<(String, [u64; 4])> = ours["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["tokens"]["total"].as_u64() > Some(0))
            .map(|r| {
                (
                    r["key"].as_str().unwrap().to_owned(),
                    rv_tokens(&r["tokens"]),
                )
            })
            .collect();
        assert_eq!(mine, theirs, "{by}");
    }
}

/// Every grouping validates, adds up to the same total tokens, and groups as named.
#[test]
fn every_grouping_validates_and_adds_up() {
    let Some(home) = corpus_home() else {
        return;
    };
    let day = json(home.path(), &["stats", "--all", "--json"]);
    assert_eq!(day["by"], "day");
    assert_eq!(day["timezone"], "UTC");
    let total = day["total"]["tokens"].clone();
    let calls = day["total"]["calls"].as_u64().unwrap();
    assert!(calls > 100, "{calls}");
    for by in ["week", "month", "project", "session", "model", "tool"] {
        let r = json(home.path(), &["stats", "--all", "--by", by, "--json"]);
        assert_valid(&r, by);
        assert_eq!(r["by"], by);
        assert_eq!(r["total"]["calls"].as_u64(), Some(calls), "{by}");
        let rows = r["rows"].as_array().unwrap();
        if by == "tool" {
            assert!(
                rows.iter()
                    .all(|g| g["tokens"].is_null() && g["cost_usd"].is_null())
            );
            assert!(rows.iter().any(|g| g["key"] == "Bash"), "{rows:?}");
            continue;
        }
        assert_eq!(r["total"]["tokens"], total, "{by}");
        let sum: u64 = rows
            .iter()
            .map(|g| g["tokens"]["total"].as_u64().unwrap())
            .sum();
        assert_eq!(Some(sum), total["total"].as_u64(), "{by}");
        let keys: Vec<&str> = rows.iter().map(|g| g["key"].as_str().unwrap()).collect();
        match by {
            "month" => assert!(keys.contains(&"2025-11"), "{keys:?}"),
            // 2025-11-29 is a Saturday: its week starts on Monday the 24th (ccusage's weeks).
            "week" => assert!(keys.contains(&"2025-11-24"), "{keys:?}"),
            // The session's own cwd, not the directory's name.
            "project" => assert!(keys.contains(&"/src/deep-manifest"), "{keys:?}"),
            "session" => assert_eq!(keys.len(), 11, "{keys:?}"),
            "model" => assert!(keys.contains(&"claude-opus-4-6"), "{keys:?}"),
            _ => {}
        }
    }
}

/// `--since` / `--until` keep the days asked for; the text table says the same as the JSON.
#[test]
fn since_until_and_the_text_table() {
    let Some(home) = corpus_home() else {
        return;
    };
    let r = json(
        home.path(),
        &[
            "stats",
            "--all",
            "--since",
            "2025-11-17",
            "--until",
            "20251129",
            "--json",
        ],
    );
    let keys: Vec<&str> = r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["2025-11-17", "2025-11-29"]);
    assert_eq!(r["since"], "2025-11-17");
    let (code, text, _) = rawpv(home.path(), &["stats", "--all", "--by", "month"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("11 files read · 11 sessions · prices as of "),
        "{text}"
    );
    assert!(lines[1].starts_with("month "), "{text}");
    assert!(lines.iter().any(|l| l.starts_with("2025-11 ")), "{text}");
    assert!(lines.iter().any(|l| l.starts_with("total ")), "{text}");
    let (code, _, err) = rawpv(
        home.path(),
        &[
            "stats",
            "--all",
            "--since",
            "2026-01-01",
            "--until",
            "2025-01-01",
        ],
    );
    assert_eq!(
        (code, err.trim()),
        (2, "rawpv: --since 2026-01-01 is after --until 2025-01-01")
    );
    let (code, _, err) = rawpv(home.path(), &["stats", "--all", "--since", "yesterday"]);
    assert_eq!(code, 2);
    assert!(err.contains("not a date"), "{err}");
}

/// A directory is a report (it used to fail with "Is a directory"); a resumed session's copy
/// of its predecessor's messages counts once; a model without a price says so; the cache gives
/// the same report and follows a changed file.
#[test]
fn directories_duplicates_unpriced_models_and_the_cache() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let rec = |uuid: &str, parent: &str, msg: &str, req: &str, model: &str, ts: &str, n: u64| {
        format!(
            r#"{{"type":"assistant","uuid":"{uuid}","parentUuid":{parent},"sessionId":"S","cwd":"/p","timestamp":"{ts}","requestId":"{req}","message":{{"id":"{msg}","role":"assistant","model":"{model}","content":[{{"type":"text","text":"hi"}}],"stop_reason":"end_turn","usage":{{"input_tokens":{n},"output_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}}}}}"#
        )
    };
    let user = |uuid: &str, ts: &str| {
        format!(
            r#"{{"type":"user","uuid":"{uuid}","parentUuid":null,"sessionId":"S","cwd":"/p","timestamp":"{ts}","message":{{"role":"user","content":"go"}}}}"#
        )
    };
    let a = [
        user("u1", "2026-03-01T10:00:00Z"),
        rec(
            "a1",
            "\"u1\"",
            "m1",
            "r1",
            "claude-opus-4-6",
            "2026-03-01T10:00:01Z",
            1000,
        ),
    ]
    .join("\n");
    // The resumed session repeats m1 (another file, another record uuid), then its own m2 of a
    // model rawpv has no price for.
    let b = [
        user("v1", "2026-03-02T10:00:00Z"),
        rec(
            "b0",
            "\"v1\"",
            "m1",
            "r1",
            "claude-opus-4-6",
            "2026-03-02T10:00:00Z",
            1000,
        ),
        rec(
            "b1",
            "\"b0\"",
            "m2",
            "r2",
            "mystery-model-9",
            "2026-03-02T10:00:05Z",
            500,
        ),
    ]
    .join("\n");
    std::fs::write(dir.join("a.jsonl"), a + "\n").unwrap();
    std::fs::write(dir.join("b.jsonl"), &b).unwrap();
    let dir_s = dir.to_str().unwrap();
    let r = json(home.path(), &["stats", dir_s, "--json"]);
    assert_valid(&r, "dir");
    assert_eq!(r["inputs"]["files"], 2);
    assert_eq!(r["inputs"]["duplicate_usage_rows"], 1);
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    // m1 counts once, on the first file's day.
    assert_eq!(rows[0]["key"], "2026-03-01");
    assert_eq!(rows[0]["tokens"]["input"], 1000);
    assert_eq!(rows[0]["cost_usd"].as_f64(), Some(0.00525));
    assert_eq!(rows[1]["key"], "2026-03-02");
    assert_eq!(rows[1]["tokens"]["input"], 500);
    assert!(rows[1]["cost_usd"].is_null(), "{}", rows[1]);
    assert_eq!(
        rows[1]["unpriced"],
        serde_json::json!([{"model": "mystery-model-9", "tokens": 510}])
    );
    let (_, text, _) = rawpv(home.path(), &["stats", dir_s]);
    assert!(
        text.contains("no price (not in the cost): mystery-model-9 (510 tokens)"),
        "{text}"
    );
    assert!(text.contains("1 usage row dropped as copies"), "{text}");
    // Warm: the same report from the cache; then a changed file is read again.
    let cache = home.path().join(".cache/rawpv/usage-v1.json");
    assert!(cache.exists());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&cache).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert_eq!(json(home.path(), &["stats", dir_s, "--json"]), r);
    let more = rec(
        "b2",
        "\"b1\"",
        "m3",
        "r3",
        "claude-opus-4-6",
        "2026-03-02T10:00:09Z",
        7,
    );
    std::fs::write(dir.join("b.jsonl"), b + "\n" + &more + "\n").unwrap();
    let r2 = json(home.path(), &["stats", dir_s, "--json"]);
    assert_eq!(r2["rows"][1]["tokens"]["input"], 507);
    // A deleted session leaves the cache.
    std::fs::remove_file(dir.join("b.jsonl")).unwrap();
    json(home.path(), &["stats", dir_s, "--json"]);
    let kept = std::fs::read_to_string(&cache).unwrap();
    assert!(!kept.contains("b.jsonl"), "{kept}");
    // Several files at once, and a bad input.
    let a_s = dir.join("a.jsonl");
    let r3 = json(
        home.path(),
        &[
            "stats",
            a_s.to_str().unwrap(),
            a_s.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(r3["inputs"]["files"], 1);
    let (code, _, err) = rawpv(home.path(), &["stats", "nope/", "--by", "day"]);
    assert_eq!(
        (code, err.trim()),
        (2, "rawpv: cannot read nope/: no such file or directory")
    );
}

/// Config prices override the table; a bad price is an error naming the model.
#[test]
fn config_prices_override_the_table() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("s");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("x.jsonl"),
        r#"{"type":"assistant","uuid":"a","parentUuid":null,"sessionId":"S","timestamp":"2026-03-01T10:00:01Z","requestId":"r","message":{"id":"m","role":"assistant","model":"my-model.v2","content":[],"stop_reason":"end_turn","usage":{"input_tokens":1000000,"output_tokens":0}}}"#,
    )
    .unwrap();
    let cfg = home.path().join("c.toml");
    std::fs::write(
        &cfg,
        "[prices.\"my-model.v2\"]\ninput = 2.5\noutput = 10.0\n",
    )
    .unwrap();
    let dir_s = dir.to_str().unwrap();
    let r = json(
        home.path(),
        &["stats", dir_s, "--json", "--config", cfg.to_str().unwrap()],
    );
    assert_eq!(r["total"]["cost_usd"].as_f64(), Some(2.5));
    assert_eq!(
        r["prices"]["overridden"],
        serde_json::json!(["my-model.v2"])
    );
    std::fs::write(
        &cfg,
        "[prices.\"my-model.v2\"]\ninput = 2.5\noutptu = 10.0\n",
    )
    .unwrap();
    let (code, _, err) = rawpv(
        home.path(),
        &["stats", dir_s, "--config", cfg.to_str().unwrap()],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("bad value for `prices.\"my-model.v2\"`"),
        "{err}"
    );
}

/// The corpus sessions whose turns the viewer tests add up.
pub fn corpus_sessions() -> Vec<PathBuf> {
    corpus::files("claude-code")
        .unwrap_or_default()
        .into_iter()
        .filter(|p| {
            p.extension().is_some_and(|e| e == "jsonl")
                && !p
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("agent-")
        })
        .collect()
}

/// Each prompt row's figures (tokens and cost of its turn, subagents included) add up, with the
/// rows before the first prompt, to the session's figures the status bar shows, on every corpus
/// session; and the prompt rows show them.
#[test]
fn turn_figures_add_up_to_the_session() {
    use rawpv::session::query::{Tokens, is_turn_start};
    let files = corpus_sessions();
    if files.is_empty() {
        return;
    }
    let theme = rawpv::theme::Theme::dark();
    for path in files {
        let (s, _) = rawpv::source::file::fold_path(&path).unwrap();
        let n = s.items.len();
        let prompts: Vec<usize> = (0..n).filter(|&i| is_turn_start(&s, i)).collect();
        let mut sum = Tokens::default();
        let first = prompts.first().copied().unwrap_or(n);
        for i in 0..first {
            sum.add(&s, i);
        }
        let mut with_cost = 0;
        for (k, &p) in prompts.iter().enumerate() {
            let end = prompts.get(k + 1).copied().unwrap_or(n);
            let t = rawpv::view::summarize_turn(&s, p, end);
            sum.input += t.tokens.input;
            sum.output += t.tokens.output;
            sum.cache_read += t.tokens.cache_read;
            sum.rows += t.tokens.rows;
            sum.cost.add(&t.tokens.cost);
            if t.tokens.cost.nanos > 0 {
                with_cost += 1;
                let row = rawpv::ui::feed::build_row(
                    &s,
                    p,
                    200,
                    &theme,
                    None,
                    rawpv::ui::feed::Fold::Open(Some(t)),
                );
                let text: String = row.spans.iter().map(|sp| sp.content.as_ref()).collect();
                assert!(
                    text.trim_end().ends_with(&t.tokens.cost.label()),
                    "{}: {text}",
                    path.display()
                );
            }
        }
        let mut session = Tokens::default();
        for i in 0..n {
            session.add(&s, i);
        }
        assert_eq!(sum, session, "{}", path.display());
        let total: Tokens = s.sessions.iter().fold(Tokens::default(), |mut a, (_, e)| {
            a.input += e.tokens.input;
            a.output += e.tokens.output;
            a.cache_read += e.tokens.cache_read;
            a.rows += e.tokens.rows;
            a.cost.add(&e.tokens.cost);
            a
        });
        assert_eq!(total, session, "{}", path.display());
        assert!(session.cost.nanos > 0, "{}", path.display());
        assert!(with_cost >= 1, "{}", path.display());
    }
}

/// The browser's cost column (`usage::report::costs`, the function its thread runs) says, for
/// every corpus session, the cost the viewer's status bar says for it (`Tokens` of the fold),
/// and the drawn rows show it, at 120 and 80 columns.
#[test]
fn the_browser_shows_each_sessions_cost() {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    let Some(home) = corpus_home() else {
        return;
    };
    let roots = rawpv::browse::roots_from(Some(home.path()), None, &[]);
    let mut b = rawpv::browse::Browser::scan(&roots);
    let inputs: Vec<(PathBuf, String)> = b
        .entries
        .iter()
        .map(|e| (e.path.clone(), e.project.clone()))
        .collect();
    assert_eq!(inputs.len(), 11);
    rawpv::usage::report::costs(
        &inputs,
        Some(home.path().join("cache")),
        rawpv::usage::price::table(),
        |p, c| {
            b.costs.insert(p, c);
            true
        },
    );
    b.costs_done = true;
    for (p, _) in &inputs {
        let (s, _) = rawpv::source::file::fold_path(p).unwrap();
        let mut t = rawpv::session::query::Tokens::default();
        for i in 0..s.items.len() {
            t.add(&s, i);
        }
        assert_eq!(b.costs[p].nanos, t.cost.nanos, "{}", p.display());
        assert!(t.cost.nanos > 0, "{}", p.display());
    }
    for w in [120u16, 80] {
        let mut term = Terminal::new(TestBackend::new(w, 20)).unwrap();
        term.draw(|f| {
            let area = f.area();
            rawpv::ui::browser::render_browser(
                area,
                f.buffer_mut(),
                &b,
                &rawpv::theme::Theme::dark(),
            );
        })
        .unwrap();
        let buf = term.backend().buffer().clone();
        let rows: Vec<String> = (0..buf.area.height)
            .map(|y| {
                (0..buf.area.width)
                    .map(|x| buf[(x, y)].symbol().to_owned())
                    .collect()
            })
            .collect();
        // The border, the filter line and the column names, then the rows.
        assert!(rows[2].contains("cost"), "{:?}", rows[2]);
        for (k, &i) in b.visible.iter().enumerate() {
            let want = b.costs[&b.entries[i].path].label();
            assert!(
                rows[k + 3].contains(&want),
                "{w}: {want} in {:?}",
                rows[k + 3]
            );
        }
    }
}
