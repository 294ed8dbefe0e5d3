//! Inputs that are not agent sessions (issue 22 item 10): unified diffs and patches, raw
//! terminal captures, and a description of anything else.
//!
//! Who calls it: [`super::detect`] (through [`looks_like_patch`], [`looks_like_terminal`] and
//! [`is_not_a_session`]), [`super::decoder_for`] (the two decoders here), and the viewer and the
//! commands through [`describe`] for the message about a file they cannot read.
//!
//! Shapes. A patch (`git diff`, `git show`, `diff -u`, bzr/hg/svn diffs) becomes one call of
//! the tool `diff` per file: input `{file_path, change}` (`change` is `M`, `A`, `D` or `R`),
//! output the file's part of the patch (its header lines and hunks) as a string, `output_type`
//! `diff`, so the detail draws it with the renderer of Edit results. Text before the first
//! file (a `git show` commit header) is one `x-diff.header` row `{text}`. A terminal capture
//! (text with escape sequences, not JSON) becomes one call of the tool `terminal` whose output
//! is the whole capture (`text`, drawn through the terminal emulator).
//!
//! Invariants: both decoders buffer the input (at most [`MAX_BUFFERED_BYTES`]; past it one
//! error finding says where the rest was dropped) and emit at the end of input; a hunk's lines
//! are counted from its `@@ -a,b +c,d @@` header, so a deleted line reading `--- x` never starts
//! a new file; never panics.

use serde_json::{Map, Value, json};

use super::Decoded;
use super::codex_emit::{Emitter, obj};
use crate::finding::{Finding, Level, code};
use crate::protocol::{FrameType, ResultStatus};

/// Most bytes of a diff or capture kept (a larger input is cut with a finding): the whole patch
/// is one document, drawn from memory.
pub const MAX_BUFFERED_BYTES: usize = 256 << 20;

/// Whether the start of `text` reads as a unified diff: a `diff --git` / `diff --cc` (a merge's
/// combined diff) / `Binary files … differ` line, or a `--- ` line followed by `+++ ` (and
/// usually a `@@ ` or `@@@ ` hunk header; a patch of headers only has none), within the first
/// lines. Colours (`git diff --color`: SGR sequences) are looked through.
pub fn looks_like_patch(text: &str) -> bool {
    let plain = crate::render::ansi::strip_sgr(text);
    let lines: Vec<&str> = plain.lines().take(400).collect();
    let first = lines.iter().find(|l| !l.trim().is_empty()).copied();
    let Some(first) = first else {
        return false;
    };
    if first.starts_with('{') || first.starts_with('[') {
        return false;
    }
    let file_header = |i: usize| {
        lines[i].starts_with("--- ") && lines.get(i + 1).is_some_and(|l| l.starts_with("+++ "))
    };
    let git_file = |l: &str| {
        l.starts_with("diff --git ")
            || l.starts_with("diff --cc ")
            || l.starts_with("diff --combined ")
            || binary_files(l).is_some()
    };
    (0..lines.len()).any(|i| file_header(i) || git_file(lines[i]))
}

/// The two paths of a `Binary files A and B differ` line (git and GNU diff).
fn binary_files(l: &str) -> Option<(&str, &str)> {
    l.strip_prefix("Binary files ")?
        .strip_suffix(" differ")?
        .split_once(" and ")
}

/// Whether the whole input is coloured (`git diff --color`): its first line that is not blank
/// holds an SGR sequence. The patch decoder then reads it without its colours.
fn coloured(first_line: &str) -> bool {
    first_line.contains("\x1b[")
}

/// Whether `head` (the first bytes of an input) is a raw terminal capture: text (no NUL) holding
/// escape sequences, whose first line is not JSON.
pub fn looks_like_terminal(head: &[u8]) -> bool {
    let first = head
        .split(|&b| b == b'\n')
        .find(|l| !l.iter().all(u8::is_ascii_whitespace));
    let json = first.is_some_and(|l| {
        let t = l.trim_ascii_start();
        t.starts_with(b"{") || t.starts_with(b"[")
    });
    !json && !head.contains(&0) && head.contains(&0x1b)
}

/// Whether `head` is certainly not a session of any format rawpv reads: binary data (a known
/// format by its magic bytes, NUL bytes or mostly invalid UTF-8: [`is_binary`]), or input in
/// which no line starts like JSON (`{`, `[`) and that is neither a patch nor a terminal capture
/// (the callers check those first). An empty input is not decided here.
pub fn is_not_a_session(head: &[u8]) -> bool {
    if head.iter().all(u8::is_ascii_whitespace) {
        return false;
    }
    is_binary(head)
        || !head.split(|&b| b == b'\n').any(|l| {
            let t = l.trim_ascii_start();
            let t = t.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(t);
            t.starts_with(b"{") || t.starts_with(b"[")
        })
}

/// What a binary `head` looks like (`a PNG image`), from its magic bytes.
fn magic_kind(head: &[u8]) -> Option<&'static str> {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x89PNG", "a PNG image"),
        (b"\xFF\xD8\xFF", "a JPEG image"),
        (b"GIF8", "a GIF image"),
        (b"%PDF", "a PDF document"),
        (b"PK\x03\x04", "a ZIP archive"),
        (b"\x1F\x8B", "gzip-compressed data"),
        (b"\x28\xB5\x2F\xFD", "zstd-compressed data"),
        (b"BZh", "bzip2-compressed data"),
        (b"\xFD7zXZ\x00", "xz-compressed data"),
        (b"\x7FELF", "an executable (ELF)"),
        (b"SQLite format 3\x00", "an SQLite database"),
    ];
    MAGIC
        .iter()
        .find(|(m, _)| head.starts_with(m))
        .map(|(_, kind)| *kind)
}

/// Whether `head` is binary data, even when a line of it starts with `{` (attack 7 #16): a known
/// magic, or NUL bytes or more than one byte in ten not UTF-8 with at most half of its lines
/// that are not blank starting like JSON (a session with a few damaged lines stays a session:
/// its lines are findings).
pub fn is_binary(head: &[u8]) -> bool {
    if magic_kind(head).is_some() {
        return true;
    }
    if binary_kind(head).is_none() {
        return false;
    }
    let (mut lines, mut json) = (0usize, 0usize);
    for l in head.split(|&b| b == b'\n') {
        let t = l.trim_ascii();
        if t.is_empty() {
            continue;
        }
        lines += 1;
        if t.starts_with(b"{") || t.starts_with(b"[") {
            json += 1;
        }
    }
    json * 2 <= lines
}

/// [`magic_kind`], else `Some("binary data")` for input with NUL bytes or mostly invalid
/// UTF-8; `None` for text.
fn binary_kind(head: &[u8]) -> Option<&'static str> {
    if let Some(kind) = magic_kind(head) {
        return Some(kind);
    }
    let bad = String::from_utf8_lossy(head)
        .chars()
        .filter(|&c| c == '\u{fffd}')
        .count();
    (head.contains(&0) || bad * 10 > head.len().max(1)).then_some("binary data")
}

/// The message for an input that is not a session (see [`is_not_a_session`]), naming `name`:
/// what it looks like and how to read it. One sentence or two, for stderr or the screen.
pub fn describe(name: &str, head: &[u8]) -> String {
    let formats = "rawpv reads agent sessions (RAWP, Claude Code, Codex CLI, Gemini CLI, \
                   Anthropic API JSON), unified diffs and terminal captures";
    let Some(kind) = binary_kind(head) else {
        let text = String::from_utf8_lossy(head);
        let lines = text.lines().count();
        let more = if head.len() >= 64 * 1024 { "+" } else { "" };
        return format!(
            "{name} is not a session: it looks like plain text ({lines}{more} line{}, none a JSON record). {formats}; read plain text with a pager: less {name}",
            crate::fmt::plural_s(lines)
        );
    };
    let tool = match kind {
        "gzip-compressed data" => Some("gzip"),
        "zstd-compressed data" => Some("zstd"),
        "bzip2-compressed data" => Some("bzip2"),
        "xz-compressed data" => Some("xz"),
        _ => None,
    };
    let how = match (tool, kind) {
        (Some(t), _) => format!("; decompress it first: {t} -dc {name} | rawpv -"),
        (None, "a ZIP archive") => format!("; list it with: unzip -l {name}"),
        (None, _) => String::new(),
    };
    format!("{name} is not a session: it looks like {kind}. {formats}{how}")
}

/// Buffers the input's lines (at most [`MAX_BUFFERED_BYTES`]).
#[derive(Debug, Default)]
struct Buffered {
    lines: Vec<String>,
    bytes: usize,
    /// The first line dropped past the cap.
    cut_at: Option<u64>,
}

impl Buffered {
    fn push(&mut self, line: u64, text: &str) {
        if self.cut_at.is_some() {
            return;
        }
        if self.bytes + text.len() + 1 > MAX_BUFFERED_BYTES {
            self.cut_at = Some(line);
            return;
        }
        self.bytes += text.len() + 1;
        self.lines.push(text.to_owned());
    }

    fn finding(&self, out: &mut Vec<Decoded>) {
        if let Some(line) = self.cut_at {
            out.push(Decoded::Finding(Finding::new(
                Level::Error,
                code::UNRECOGNISED_RECORD,
                "SPEC 2",
                line,
                format!(
                    "input larger than {}: lines from {line} on are not shown",
                    crate::fmt::bytes(MAX_BUFFERED_BYTES as u64)
                ),
            )));
        }
    }
}

/// The decoder of a unified diff (see the module docs).
#[derive(Debug)]
pub struct PatchDecoder {
    buf: Buffered,
    /// Whether the input is coloured ([`coloured`], decided at its first line that is not
    /// blank): its SGR sequences are dropped.
    colours: Option<bool>,
}

impl PatchDecoder {
    pub fn new() -> Self {
        Self {
            buf: Buffered::default(),
            colours: None,
        }
    }
}

impl Default for PatchDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl super::Decoder for PatchDecoder {
    fn line(&mut self, line: u64, text: &str, _out: &mut Vec<Decoded>) {
        if self.colours.is_none() && !text.trim().is_empty() {
            self.colours = Some(coloured(text));
        }
        if self.colours == Some(true) {
            self.buf.push(line, &crate::render::ansi::strip_sgr(text));
        } else {
            self.buf.push(line, text);
        }
    }

    fn finish(&mut self, out: &mut Vec<Decoded>) {
        let lines = std::mem::take(&mut self.buf.lines);
        let mut em = Emitter::new("x-diff", "patch", ("rawpv_import", "unified-diff"));
        let mut files = 0;
        for part in split_files(&lines) {
            let text = lines[part.lines.clone()].join("\n");
            let line = part.lines.start as u64 + 1;
            match part.file {
                None => em.ext(
                    out,
                    "header",
                    obj([("text", Value::String(text))]),
                    line,
                    None,
                ),
                Some((path, change)) => {
                    files += 1;
                    let id = format!("file-{files}");
                    let input = json!({ "file_path": path, "change": change });
                    em.request(out, &id, "diff", input, Map::new(), line, None);
                    let end = part.lines.end as u64;
                    em.result(
                        out,
                        &id,
                        ResultStatus::Success,
                        Value::String(text),
                        None,
                        Map::new(),
                        end,
                        None,
                    );
                }
            }
        }
        em.finish(out);
        self.buf.finding(out);
    }
}

/// One part of a patch: a file's lines (its path and change letter) or text before a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub lines: std::ops::Range<usize>,
    pub file: Option<(String, &'static str)>,
}

/// Splits a patch's lines into parts: text before a file header, then one part per file. A file
/// starts at a `diff ` / `Index: ` / `=== ` line or, outside a file's header, at `--- ` followed
/// by `+++ `, or at a `Binary files … differ` line of its own (`diff -r`; after a `diff --git`
/// header it is that file's); a `commit <hex>` line after a file starts a header part (`git
/// log -p`). A hunk's lines are counted from its header, a combined diff's (`@@@ -a,b -c,d
/// +e,f @@@`, one column per parent) too.
pub fn split_files(lines: &[String]) -> Vec<Part> {
    let mut starts: Vec<(usize, bool)> = Vec::new(); // (line, is a file)
    let mut in_file_header = false; // after `diff`/`Index`/`===`, before its `---`
    let mut hunk = Hunk::default();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].as_str();
        if hunk.open() {
            hunk.take(l);
            i += 1;
            continue;
        }
        if l.starts_with("diff ") || l.starts_with("Index: ") || l.starts_with("=== ") {
            starts.push((i, true));
            in_file_header = true;
        } else if l.starts_with("--- ") && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ ")) {
            if !in_file_header {
                starts.push((i, true));
            }
            in_file_header = false;
            i += 2;
            continue;
        } else if let Some(h) = Hunk::parse(l) {
            hunk = h;
            in_file_header = false;
        } else if binary_files(l).is_some() {
            if !in_file_header {
                starts.push((i, true));
            }
            in_file_header = false;
        } else if is_commit_line(l) {
            starts.push((i, false));
            in_file_header = false;
        } else if i == 0 {
            starts.push((0, false));
        }
        i += 1;
    }
    if starts.first().is_none_or(|s| s.0 != 0) && !lines.is_empty() {
        starts.insert(0, (0, false));
    }
    let mut parts = Vec::new();
    for (k, &(s, is_file)) in starts.iter().enumerate() {
        let e = starts.get(k + 1).map_or(lines.len(), |n| n.0);
        let file = is_file.then(|| file_of(&lines[s..e]));
        parts.push(Part { lines: s..e, file });
    }
    // A header part of only blank lines says nothing.
    parts.retain(|p| {
        p.file.is_some() || lines[p.lines.clone()].iter().any(|l| !l.trim().is_empty())
    });
    parts
}

/// The lines a hunk has left: per parent (one for a unified diff, N for a combined diff of N
/// parents) and in the result.
#[derive(Debug, Default)]
struct Hunk {
    parents: Vec<u64>,
    result: u64,
}

impl Hunk {
    /// A hunk header: `@@ -a,b +c,d @@` or, for N parents, N+1 `@` and N `-` ranges.
    fn parse(l: &str) -> Option<Self> {
        let ats = l.bytes().take_while(|&b| b == b'@').count();
        if ats < 2 || l.as_bytes().get(ats) != Some(&b' ') {
            return None;
        }
        let count = |r: &str| match r.split_once(',') {
            Some((_, n)) => n.parse().unwrap_or(0),
            None => 1,
        };
        let mut h = Self::default();
        for w in l[ats + 1..].split(' ').take(ats) {
            if let Some(r) = w.strip_prefix('-') {
                h.parents.push(count(r));
            } else if let Some(r) = w.strip_prefix('+') {
                h.result = count(r);
            }
        }
        (h.parents.len() == ats - 1).then_some(h)
    }

    fn open(&self) -> bool {
        self.result > 0 || self.parents.iter().any(|&n| n > 0)
    }

    /// Counts one line of the hunk: its first column per parent says whether it is in that
    /// parent (not `+`) and in the result (no `-`); `\ No newline` counts nowhere.
    fn take(&mut self, l: &str) {
        let b = l.as_bytes();
        if b.first() == Some(&b'\\') {
            return;
        }
        let cols = &b[..b.len().min(self.parents.len())];
        for (k, n) in self.parents.iter_mut().enumerate() {
            if cols.get(k).copied().unwrap_or(b' ') != b'+' {
                *n = n.saturating_sub(1);
            }
        }
        if !cols.contains(&b'-') {
            self.result = self.result.saturating_sub(1);
        }
    }
}

/// `git show` / `git log -p`'s `commit <40 hex>` line.
fn is_commit_line(l: &str) -> bool {
    l.strip_prefix("commit ").is_some_and(|r| {
        let h = r.split(' ').next().unwrap_or("");
        h.len() >= 7 && h.chars().all(|c| c.is_ascii_hexdigit())
    })
}

/// Whether a `---` / `+++` line's rest dates its file at the Unix epoch: how `diff -N` (and
/// `diff -ruN`) names a file that is missing on that side (in local time: west of UTC it is
/// the last day of 1969).
fn epoch(rest: &str) -> bool {
    rest.split_once('\t')
        .is_some_and(|(_, t)| t.starts_with("1970-01-01 ") || t.starts_with("1969-12-31 "))
}

/// A file part's path and change letter (`M`, `A`, `D`, `R`): the new path (`+++`, `rename to`,
/// a `diff --git` line's second path), else the old one for a deletion.
fn file_of(lines: &[String]) -> (String, &'static str) {
    let strip = |p: &str| {
        let p = p.split('\t').next().unwrap_or(p).trim_end();
        let p = p.trim_matches('"');
        p.strip_prefix("a/")
            .or_else(|| p.strip_prefix("b/"))
            .unwrap_or(p)
            .to_owned()
    };
    let (mut old, mut new, mut change) = (None, None, "M");
    let mut git_paths = None;
    for l in lines {
        if l.starts_with("@@ ") {
            break;
        }
        if let Some(r) = l.strip_prefix("diff --git ") {
            git_paths = r.split_once(" b/").map(|(a, b)| (strip(a), b.to_owned()));
        } else if let Some(r) =
            (l.strip_prefix("diff --cc ")).or_else(|| l.strip_prefix("diff --combined "))
        {
            new.get_or_insert_with(|| r.trim().to_owned());
        } else if let Some((a, b)) = binary_files(l) {
            let (a, b) = (strip(a), strip(b));
            if a == "/dev/null" {
                change = "A";
            }
            old.get_or_insert(a);
            new.get_or_insert(b);
        } else if let Some(r) = l.strip_prefix("--- ") {
            old = Some(strip(r));
            // `diff -N` names a missing file with the epoch as its time.
            if epoch(r) {
                change = "A";
            }
        } else if let Some(r) = l.strip_prefix("+++ ") {
            new = Some(strip(r));
            if epoch(r) {
                change = "D";
            }
        } else if let Some(r) = l.strip_prefix("rename to ") {
            new = Some(r.to_owned());
            change = "R";
        } else if l.starts_with("new file mode") {
            change = "A";
        } else if l.starts_with("deleted file mode") {
            change = "D";
        } else if let Some(r) = l.strip_prefix("Index: ") {
            new.get_or_insert_with(|| r.trim().to_owned());
        } else if let Some(r) = l.strip_prefix("=== ") {
            // bzr: `=== added file 'x'`, `=== modified file 'x'`, `=== removed file 'x'`.
            if r.starts_with("added") {
                change = "A";
            } else if r.starts_with("removed") {
                change = "D";
            }
            if let Some(p) = r.split('\'').nth(1) {
                new.get_or_insert_with(|| p.to_owned());
            }
        }
    }
    if old.as_deref() == Some("/dev/null") {
        change = "A";
    }
    let path = match new {
        Some(n) if n == "/dev/null" => {
            change = "D";
            old.unwrap_or(n)
        }
        Some(n) => n,
        None => git_paths.map(|(_, b)| b).or(old).unwrap_or_default(),
    };
    (path, change)
}

/// The decoder of a raw terminal capture (see the module docs).
#[derive(Debug, Default)]
pub struct TerminalDecoder {
    buf: Buffered,
}

impl TerminalDecoder {
    pub fn new() -> Self {
        Self::default()
    }
}

impl super::Decoder for TerminalDecoder {
    fn line(&mut self, line: u64, text: &str, _out: &mut Vec<Decoded>) {
        self.buf.push(line, text);
    }

    fn finish(&mut self, out: &mut Vec<Decoded>) {
        let lines = std::mem::take(&mut self.buf.lines);
        let n = lines.len();
        if n > 0 {
            let mut em = Emitter::new(
                "x-terminal",
                "terminal capture",
                ("rawpv_import", "terminal"),
            );
            let description = format!("terminal capture, {}", crate::fmt::plural(n, "line"));
            let input = json!({ "description": description });
            em.request(out, "capture", "terminal", input, Map::new(), 1, None);
            let text = lines.join("\n");
            em.result(
                out,
                "capture",
                ResultStatus::Success,
                Value::String(text),
                None,
                Map::new(),
                n as u64,
                None,
            );
            em.finish(out);
        }
        self.buf.finding(out);
    }
}

/// The decoder of an input that is not a session: one error finding at the end (the viewer and
/// the commands refuse a file before decoding it, with [`describe`]; this is for stdin).
#[derive(Debug, Default)]
pub struct NotSessionDecoder {
    lines: u64,
}

impl super::Decoder for NotSessionDecoder {
    fn line(&mut self, line: u64, _text: &str, _out: &mut Vec<Decoded>) {
        self.lines = line;
    }

    fn finish(&mut self, out: &mut Vec<Decoded>) {
        out.push(Decoded::Finding(Finding::new(
            Level::Error,
            code::UNRECOGNISED_RECORD,
            "SPEC 2",
            1,
            format!(
                "not a session: none of the {} read is a JSON record, a diff or a terminal capture",
                crate::fmt::plural(self.lines, "line")
            ),
        )));
    }
}

/// The frame type of a patch's header row.
pub fn is_header(t: &FrameType) -> bool {
    t.as_str() == "x-diff.header"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_owned).collect()
    }

    #[test]
    fn a_git_show_splits_into_header_and_files() {
        let p = lines(
            "commit 0123456789abcdef0123456789abcdef01234567\nAuthor: A <a@example.com>\n\n    msg\n\ndiff --git a/x.rs b/x.rs\nindex 1..2 100644\n--- a/x.rs\n+++ b/x.rs\n@@ -1,2 +1,2 @@\n--- a\n+b\n ok\ndiff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+hi\n",
        );
        let parts = split_files(&p);
        assert_eq!(
            parts,
            vec![
                Part {
                    lines: 0..5,
                    file: None
                },
                Part {
                    lines: 5..13,
                    file: Some(("x.rs".into(), "M"))
                },
                Part {
                    lines: 13..19,
                    file: Some(("n.txt".into(), "A"))
                },
            ]
        );
    }

    #[test]
    fn plain_unified_diffs_split_at_each_file() {
        let p = lines(
            "--- a.txt\t2020\n+++ a.txt\t2021\n@@ -1 +1 @@\n-x\n+y\n--- b.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n",
        );
        let parts = split_files(&p);
        assert_eq!(
            parts,
            vec![
                Part {
                    lines: 0..5,
                    file: Some(("a.txt".into(), "M"))
                },
                Part {
                    lines: 5..9,
                    file: Some(("b.txt".into(), "D"))
                },
            ]
        );
    }

    #[test]
    fn what_is_not_a_session() {
        assert!(is_not_a_session(b"\x89PNG\r\n\x1a\n\0\0"));
        assert!(is_not_a_session(b"hello\nworld\n"));
        assert!(!is_not_a_session(b"{\"type\":1}\nnot json\n"));
        assert!(!is_not_a_session(b"\n"));
        assert!(
            describe("x.png", b"\x89PNG\r\n")
                .contains("x.png is not a session: it looks like a PNG image")
        );
        assert!(describe("x.gz", b"\x1f\x8b\x08").contains("gzip -dc x.gz | rawpv -"));
        assert!(looks_like_terminal(b"\x1b[31mred\x1b[0m\n"));
        assert!(!looks_like_terminal(b"{\"a\":\"\\u001b\"}\n"));
        assert!(looks_like_patch("diff --git a/x b/x\n"));
        assert!(!looks_like_patch("{\"diff --git a/x b/x\"}\n"));
    }
}
