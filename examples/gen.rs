//! Recording generator: writes a deterministic RAWP NDJSON recording of exactly N frames to stdout.
//!
//! Who uses it: the benchmarks (`BENCHMARKS.md`), the whole-process measurements and manual load
//! tests. Usage: `cargo run --release --example gen -- --frames 1000000 --seed 1 > /tmp/1m.ndjson`.
//!
//! `--sessions N` (issue 18) writes a master's stream instead: N agent sessions, each with its own
//! `session_id`, catalog, invocation ids, `seq` and clock, their frames interleaved one by one
//! (each next frame from a session picked at random among those with frames left), as an Edge
//! Node sees a hub. Each session is a recording of its own (the session alone, read from the
//! stream by its `session_id`, is what one session of `frames / N` frames would be with its seed).
//! Without `--sessions` (or with 1) the bytes are those of the single-session generator.
//!
//! Invariants:
//! * Same `--frames` and `--seed`, same bytes (a private `SplitMix64`, no library whose stream could
//!   change between versions).
//! * Exactly `--frames` lines; the recording may end with invocations still open (a cut session).
//! * Content is realistic in shape and size: catalog publishes (with status changes and
//!   diagnostics), prompts, agent text and thinking deltas, Bash calls streamed in chunks with ANSI
//!   colour, Read/Edit/Write/Glob/Grep/WebFetch/TodoWrite/Task results in their `output_type`
//!   shapes, parallel groups, subagent frames with a delegation chain, usage and turn ends. Every
//!   100,000 frames (starting at frame 5,000) one 10,000-line unified diff, and (starting at frame
//!   7,000) one 1 MB Bash result.
//!
//! Generated files are never committed: write them under /tmp.

use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};

use serde_json::{Value, json};

/// `SplitMix64`: small, fast, and fixed forever (the recordings must not change).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// A UUID v4 string.
    fn uuid(&mut self) -> String {
        let a = self.next();
        let b = self.next();
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            ((b >> 48) & 0x3fff) | 0x8000,
            b & 0xffff_ffff_ffff
        )
    }
}

const WORDS: &[&str] = &[
    "the",
    "session",
    "frame",
    "parser",
    "reducer",
    "invocation",
    "result",
    "stream",
    "chunk",
    "catalog",
    "render",
    "widget",
    "buffer",
    "cache",
    "terminal",
    "diff",
    "hunk",
    "line",
    "file",
    "module",
    "test",
    "error",
    "warning",
    "config",
    "value",
    "index",
    "cursor",
    "scroll",
    "feed",
    "detail",
    "output",
    "input",
    "status",
    "agent",
    "tool",
    "call",
    "json",
    "schema",
    "width",
    "height",
    "theme",
    "style",
    "span",
    "text",
    "ünïcödé",
    "日本語",
    "emoji🦀",
    "box─drawing",
];

const PATHS: &[&str] = &[
    "src/main.rs",
    "src/lib.rs",
    "src/session.rs",
    "src/protocol/parse.rs",
    "src/render/diff.rs",
    "src/ui/feed.rs",
    "tests/reducer.rs",
    "Cargo.toml",
    "README.md",
    "docs/ARCHITECTURE.md",
];

const TOOLS: &[(&str, &str, &str)] = &[
    ("Bash", "shell", "Run a shell command"),
    ("Read", "filesystem", "Read a file"),
    ("Write", "filesystem", "Write a file"),
    ("Edit", "filesystem", "Edit a file"),
    ("Glob", "filesystem", "Find files by pattern"),
    ("Grep", "search", "Search file contents"),
    ("WebFetch", "web", "Fetch a web page"),
    ("TodoWrite", "task_management", "Update the todo list"),
    ("Task", "agent", "Run a subagent"),
    ("mcp__github__search", "mcp", "Search GitHub"),
];

/// Writes frames until the budget is spent.
struct Gen<W: Write> {
    out: W,
    rng: Rng,
    /// Frames written so far.
    written: u64,
    /// Frames to write in total.
    budget: u64,
    /// Current timestamp, epoch ms.
    now: i64,
    seq: u64,
    session_id: String,
    line: String,
    /// The 100,000-frame window that already got its big diff / big output.
    big_diff_bucket: Option<u64>,
    big_out_bucket: Option<u64>,
}

impl<W: Write> Gen<W> {
    fn done(&self) -> bool {
        self.written >= self.budget
    }

    /// Writes one frame (if the budget allows). `chain` is the delegation chain metadata.
    fn emit(&mut self, ty: &str, payload: Value, chain: Option<&Value>) -> io::Result<()> {
        if self.done() {
            return Ok(());
        }
        self.now += 1 + self.rng.below(40) as i64;
        self.seq += 1;
        let ts = chrono::DateTime::from_timestamp_millis(self.now).map_or_else(
            || self.now.to_string(),
            |d| d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        );
        let mut frame = serde_json::Map::new();
        frame.insert("type".into(), json!(ty));
        frame.insert("session_id".into(), json!(self.session_id));
        frame.insert("seq".into(), json!(self.seq));
        frame.insert("timestamp".into(), json!(ts));
        frame.insert("payload".into(), payload);
        if let Some(c) = chain {
            frame.insert("metadata".into(), json!({ "delegation_chain": c }));
        }
        let frame = Value::Object(frame);
        self.line.clear();
        // Writing into a String cannot fail.
        let _ = write!(self.line, "{frame}");
        self.out.write_all(self.line.as_bytes())?;
        self.out.write_all(b"\n")?;
        self.written += 1;
        Ok(())
    }

    fn words(&mut self, n: u64) -> String {
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            let w = *self.rng.pick(WORDS);
            s.push_str(w);
        }
        s
    }

    /// A line of coloured build output (SGR, 24-bit colour, a bold run).
    fn ansi_line(&mut self) -> String {
        match self.rng.below(5) {
            0 => format!(
                "\u{1b}[1m\u{1b}[32m   Compiling\u{1b}[0m {} v0.{}.{}",
                self.rng.pick(WORDS),
                self.rng.below(9),
                self.rng.below(30)
            ),
            1 => format!(
                "\u{1b}[33mwarning\u{1b}[0m\u{1b}[1m: unused variable `{}`\u{1b}[0m",
                self.rng.pick(WORDS)
            ),
            2 => format!(
                "\u{1b}[38;2;{};{};{}m{}\u{1b}[39m",
                self.rng.below(256),
                self.rng.below(256),
                self.rng.below(256),
                self.words(6)
            ),
            3 => format!(
                "test {}::{} ... \u{1b}[32mok\u{1b}[0m",
                self.rng.pick(WORDS),
                self.rng.pick(WORDS)
            ),
            _ => self.words(10),
        }
    }

    fn catalog(&mut self) -> io::Result<()> {
        let mut tools = Vec::new();
        let mut diagnostics = Vec::new();
        for (name, cat, desc) in TOOLS {
            let mut t = json!({ "name": name, "description": desc, "category": cat,
                "input_schema": {"type": "object", "properties": {"arg": {"type": "string"}}} });
            if *cat == "mcp" {
                // MCP tools have no category default (SPEC 3.4): the catalog declares the type.
                t["output_type"] = json!("structured");
            }
            if self.rng.chance(10) {
                t["status"] = json!("degraded");
                t["status_description"] = json!("rate limited");
                diagnostics.push(json!({"severity": "warning", "tool_name": name,
                    "code": "DEGRADED", "message": "rate limited for 60 s"}));
            }
            tools.push(t);
        }
        self.emit(
            "tool.catalog.publish",
            json!({ "tools": tools, "diagnostics": diagnostics }),
            None,
        )
    }

    /// Agent text or thinking as a few deltas and a done.
    fn message(&mut self, kind: &str, chain: Option<&Value>) -> io::Result<()> {
        let n = 1 + self.rng.below(6);
        for _ in 0..n {
            let w = 3 + self.rng.below(20);
            let delta = self.words(w) + " ";
            self.emit(
                &format!("agent.{kind}.delta"),
                json!({ "delta": delta }),
                chain,
            )?;
        }
        self.emit(&format!("agent.{kind}.done"), json!({}), chain)
    }

    /// One tool invocation: request, optional stream, result.
    fn invocation(&mut self, chain: Option<&Value>, group: Option<&str>) -> io::Result<String> {
        let id = self.rng.uuid();
        let (name, _, _) = *self.rng.pick(TOOLS);
        let path = *self.rng.pick(PATHS);
        let (input, output_type, output) = match name {
            "Bash" => {
                let cmd = format!("cargo {} --{}", self.rng.pick(WORDS), self.rng.pick(WORDS));
                let max = if self.rng.chance(2) { 1_000 } else { 30 };
                let lines = 1 + self.rng.below(max);
                let mut out = String::new();
                for _ in 0..lines {
                    out.push_str(&self.ansi_line());
                    out.push('\n');
                }
                (
                    json!({"command": cmd}),
                    "text",
                    json!({"stdout": out, "stderr": "", "interrupted": false, "exit_code": 0}),
                )
            }
            "Read" => {
                let n = 1 + self.rng.below(200);
                let mut content = String::new();
                for i in 0..n {
                    let _ = writeln!(content, "{:>6}\u{2192}{}", i + 1, self.words(8));
                }
                (json!({"file_path": path}), "file_content", json!(content))
            }
            "Write" => {
                let content = self.words(50);
                (
                    json!({"file_path": path, "content": content}),
                    "diff",
                    json!({"file_path": path, "content": content, "type": "create"}),
                )
            }
            "Edit" => {
                let old = self.words(6);
                let new = self.words(7);
                let start = 1 + self.rng.below(500);
                (
                    json!({"file_path": path, "old_string": old, "new_string": new}),
                    "diff",
                    json!({"file_path": path, "old_string": old, "new_string": new,
                        "structured_patch": [{"old_start": start, "old_lines": 3, "new_start": start, "new_lines": 3,
                            "lines": [format!(" {}", self.words(4)), format!("-{old}"), format!("+{new}"), format!(" {}", self.words(4))]}]}),
                )
            }
            "Glob" => {
                let n = self.rng.below(60);
                let files: Vec<String> = (0..n)
                    .map(|i| format!("src/{}/{i}.rs", self.rng.pick(WORDS)))
                    .collect();
                (
                    json!({"pattern": "**/*.rs"}),
                    "file_list",
                    json!({"filenames": files, "num_files": n}),
                )
            }
            "Grep" => {
                let n = self.rng.below(40);
                let mut s = String::new();
                for i in 0..n {
                    let _ = writeln!(
                        s,
                        "{}:{}:{}",
                        self.rng.pick(PATHS),
                        i * 7 + 1,
                        self.words(6)
                    );
                }
                (json!({"pattern": self.rng.pick(WORDS)}), "text", json!(s))
            }
            "WebFetch" => (
                json!({"url": "https://example.com/docs", "prompt": "summarise"}),
                "web_content",
                json!({"url": "https://example.com/docs", "title": "Docs", "content": format!("# Docs\n\n{}\n\n```rust\nfn main() {{}}\n```\n", self.words(80))}),
            ),
            "TodoWrite" => {
                let todos: Vec<Value> = (0..=self.rng.below(6))
                    .map(|_| json!({"content": self.words(5), "status": *self.rng.pick(&["pending", "in_progress", "completed"]), "active_form": self.words(3)}))
                    .collect();
                (
                    json!({"todos": todos}),
                    "structured",
                    json!({"todos": todos}),
                )
            }
            "Task" => (
                json!({"description": self.words(4), "prompt": self.words(30)}),
                "agent_result",
                json!({"content": [{"type": "text", "text": self.words(60)}], "total_duration_ms": self.rng.below(90_000), "total_tokens": self.rng.below(50_000), "total_tool_use_count": self.rng.below(20)}),
            ),
            _ => (
                json!({"query": self.words(3)}),
                "structured",
                json!({"items": [{"name": self.words(2), "stars": self.rng.below(10_000)}]}),
            ),
        };
        let mut req = json!({"invocation_id": id, "tool_name": name, "input": input});
        if let Some(g) = group {
            req["parallel_group_id"] = json!(g);
        }
        self.emit("tool.invoke.request", req, chain)?;
        if name == "Bash" {
            // Stream the stdout in chunks of a few lines, as a live run would.
            let stdout = output["stdout"].as_str().unwrap_or_default().to_owned();
            let lines: Vec<&str> = stdout.split_inclusive('\n').collect();
            for (seq, chunk) in lines.chunks(8).enumerate() {
                self.emit(
                    "tool.invoke.stream",
                    json!({"invocation_id": id, "tool_name": name, "stream_type": "stdout", "chunk": chunk.concat(), "sequence": seq}),
                    chain,
                )?;
            }
        }
        if name == "Task" {
            // The subagent's own calls, one level deeper.
            let mut sub = chain.and_then(Value::as_array).cloned().unwrap_or_default();
            sub.push(json!({"agent_id": format!("agent-{}", &id[..8]), "invocation_id": id}));
            let sub = Value::Array(sub);
            if sub.as_array().map_or(0, Vec::len) < 3 {
                for _ in 0..=self.rng.below(3) {
                    self.invocation(Some(&sub), None)?;
                }
            }
        }
        let status = if self.rng.chance(7) {
            "error"
        } else {
            "success"
        };
        let duration = self.rng.below(5_000);
        self.emit(
            "tool.invoke.result",
            json!({"invocation_id": id, "tool_name": name, "status": status, "output": output,
                "output_type": output_type, "duration_ms": duration}),
            chain,
        )?;
        Ok(id)
    }

    /// A Bash call whose result is one 1 MB string.
    fn huge_result(&mut self) -> io::Result<()> {
        let id = self.rng.uuid();
        self.emit(
            "tool.invoke.request",
            json!({"invocation_id": id, "tool_name": "Bash", "input": {"command": "cat big.log"}}),
            None,
        )?;
        let mut out = String::with_capacity(1 << 20);
        while out.len() < 1 << 20 {
            out.push_str(&self.ansi_line());
            out.push('\n');
        }
        self.emit(
            "tool.invoke.result",
            json!({"invocation_id": id, "tool_name": "Bash", "status": "success", "output": out, "output_type": "text"}),
            None,
        )
    }

    /// An Edit whose result is a 10,000-line unified diff.
    fn huge_diff(&mut self) -> io::Result<()> {
        let id = self.rng.uuid();
        self.emit(
            "tool.invoke.request",
            json!({"invocation_id": id, "tool_name": "Edit", "input": {"file_path": "src/generated.rs", "old_string": "a", "new_string": "b"}}),
            None,
        )?;
        let mut d = String::from("--- a/src/generated.rs\n+++ b/src/generated.rs\n");
        let mut lines = 2;
        let mut old = 1;
        while lines < 10_000 {
            let _ = writeln!(d, "@@ -{old},8 +{old},8 @@ fn block_{old}() {{");
            lines += 1;
            for k in 0..8 {
                let text = self.words(6);
                match k {
                    3 => {
                        let _ = writeln!(d, "-    let {} = {text};", self.rng.pick(WORDS));
                    }
                    4 => {
                        let _ = writeln!(d, "+    let {} = {text};", self.rng.pick(WORDS));
                    }
                    _ => {
                        let _ = writeln!(d, "     // {text}");
                    }
                }
                lines += 1;
            }
            old += 40;
        }
        self.emit(
            "tool.invoke.result",
            json!({"invocation_id": id, "tool_name": "Edit", "status": "success", "output": d, "output_type": "diff"}),
            None,
        )
    }

    /// One user turn: prompt, thinking, text, tools (some in parallel groups), usage, turn end.
    fn turn(&mut self) -> io::Result<()> {
        let n = 5 + self.rng.below(30);
        let prompt = self.words(n);
        self.emit(
            "control.prompt.request",
            json!({"input_type": "text", "text": prompt}),
            None,
        )?;
        self.message("thinking", None)?;
        self.message("text", None)?;
        for _ in 0..=self.rng.below(6) {
            if self.done() {
                return Ok(());
            }
            if self.rng.chance(20) {
                // A parallel group: all requests, then the results in another order.
                let group = self.rng.uuid();
                for _ in 0..2 + self.rng.below(3) {
                    self.invocation(None, Some(&group))?;
                }
            } else {
                self.invocation(None, None)?;
            }
            self.big_if_due()?;
            if self.rng.chance(30) {
                self.message("text", None)?;
            }
        }
        let usage = json!({"input_tokens": self.rng.below(200_000), "output_tokens": self.rng.below(8_000), "cache_read_input_tokens": self.rng.below(150_000)});
        self.emit("session.usage", usage, None)?;
        self.emit("session.turn.end", json!({"stop_reason": "end_turn"}), None)
    }

    fn big_if_due(&mut self) -> io::Result<()> {
        // Bucket = which 100,000-frame window we are in; each window gets one of each, once the
        // frame count passes 5,000 / 7,000 within it.
        if self.written % 100_000 >= 5_000 && self.big_diff_bucket != Some(self.written / 100_000) {
            self.big_diff_bucket = Some(self.written / 100_000);
            self.huge_diff()?;
        }
        if self.written % 100_000 >= 7_000 && self.big_out_bucket != Some(self.written / 100_000) {
            self.big_out_bucket = Some(self.written / 100_000);
            self.huge_result()?;
        }
        Ok(())
    }
}

#[allow(dead_code)] // unused when the benches include this file as a module
fn arg(args: &[String], name: &str) -> Option<u64> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.replace('_', "").parse().ok())
}

/// A generator of one session of `frames` frames seeded by `rng`, writing to `out`.
fn session_gen<W: Write>(out: W, frames: u64, mut rng: Rng) -> Gen<W> {
    let session_id = rng.uuid();
    Gen {
        out,
        rng,
        written: 0,
        budget: frames,
        now: 1_795_000_000_000,
        seq: 0,
        session_id,
        line: String::new(),
        big_diff_bucket: None,
        big_out_bucket: None,
    }
}

impl<W: Write> Gen<W> {
    /// The next step of the session: its first catalog, then a turn (and a fresh catalog every
    /// 50 turns). `turns` counts the turns so far.
    fn step(&mut self, turns: &mut u64) -> io::Result<()> {
        if self.written == 0 {
            return self.catalog();
        }
        self.turn()?;
        *turns += 1;
        if turns.is_multiple_of(50) {
            self.catalog()?;
        }
        Ok(())
    }
}

/// Writes a recording of exactly `frames` frames for `seed` to `out` (also used by the benches,
/// which include this file as a module).
pub fn generate<W: Write>(out: W, frames: u64, seed: u64) -> io::Result<()> {
    let mut g = session_gen(out, frames, Rng(seed));
    let mut turns = 0u64;
    while !g.done() {
        g.step(&mut turns)?;
    }
    g.out.flush()
}

/// One session of a master stream: its generator (writing into a buffer), the lines it wrote
/// that are not out yet, and its turn count.
struct Lane {
    g: Gen<Vec<u8>>,
    pending: std::collections::VecDeque<Vec<u8>>,
    turns: u64,
}

/// Writes a master's stream of exactly `frames` frames: `sessions` sessions (at least 1), their
/// frames interleaved (module docs). Memory: one turn of frames per session.
pub fn generate_sessions<W: Write>(
    mut out: W,
    frames: u64,
    seed: u64,
    sessions: u64,
) -> io::Result<()> {
    let n = sessions.max(1);
    if n == 1 {
        return generate(out, frames, seed);
    }
    let mut pick = Rng(seed);
    let mut lanes: Vec<Lane> = (0..n)
        .map(|k| {
            let share = frames / n + u64::from(k < frames % n);
            Lane {
                g: session_gen(Vec::new(), share, Rng(pick.next())),
                pending: std::collections::VecDeque::new(),
                turns: 0,
            }
        })
        .collect();
    let mut open: Vec<usize> = (0..lanes.len()).collect();
    while !open.is_empty() {
        let at = pick.below(open.len() as u64) as usize;
        let next = &mut lanes[open[at]];
        if next.pending.is_empty() && !next.g.done() {
            next.g.step(&mut next.turns)?;
            let buf = std::mem::take(&mut next.g.out);
            next.pending.extend(
                buf.split(|&b| b == b'\n')
                    .filter(|l| !l.is_empty())
                    .map(<[u8]>::to_vec),
            );
        }
        match next.pending.pop_front() {
            Some(line) => {
                out.write_all(&line)?;
                out.write_all(b"\n")?;
            }
            None => {
                open.swap_remove(at);
            }
        }
    }
    out.flush()
}

#[allow(dead_code)] // unused when the benches include this file as a module
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(frames) = arg(&args, "--frames") else {
        eprintln!("usage: gen --frames N [--seed S] [--sessions N] > out.ndjson");
        std::process::exit(2);
    };
    let seed = arg(&args, "--seed").unwrap_or(1);
    let sessions = arg(&args, "--sessions").unwrap_or(1);
    let stdout = io::stdout();
    match generate_sessions(
        BufWriter::with_capacity(1 << 20, stdout.lock()),
        frames,
        seed,
        sessions,
    ) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            eprintln!("gen: {e}");
            std::process::exit(1);
        }
    }
}
