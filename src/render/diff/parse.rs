//! A small, tolerant unified-diff parser: git (`diff --git`, extended headers, renames, binary
//! and mode-only sections with no hunks), bzr (`=== modified file 'x'`), svn (`Index:`), plain
//! `diff -u` output, multi-file, with text before the first file kept as a preamble.
//!
//! Who calls it: [`super`] (the `diff` renderer) for unified-diff strings.
//!
//! Why not a crate: `diffy::Patch` reads one file's patch; `patch`/`unidiff` reject or misread git
//! extended headers, `GIT binary patch` blocks, hunk-less renames and bzr headers, all of which
//! the corpus has. This parser never fails: a line it cannot place becomes a header line of the
//! current file (or the preamble), shown dimmed, so nothing is lost.
//!
//! Invariants: lines are split on `\n` only, so a CRLF line keeps its `\r` (the renderer shows
//! it); a bare `\r` inside a line never splits it. `\ No newline at end of file` is a
//! [`LineKind::NoNewline`] marker, not content. Hunk line counts from `@@` decide where a hunk
//! ends, so a removed line that reads `-- x` is not mistaken for a file header.

/// A parsed patch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Patch {
    /// Lines before the first file (commit message, `From …` headers).
    pub preamble: Vec<String>,
    pub files: Vec<FileDiff>,
}

/// One file's section.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileDiff {
    /// Old path (`None` for `/dev/null`, i.e. a new file, or when unknown).
    pub old_path: Option<String>,
    /// New path (`None` for `/dev/null`, i.e. a deleted file, or when unknown).
    pub new_path: Option<String>,
    /// Extended header lines as they were (`index …`, `similarity index 96%`, …) minus the ones
    /// summarised by the fields below.
    pub headers: Vec<String>,
    pub added: bool,
    pub deleted: bool,
    /// `similarity index N%` of a rename or copy.
    pub similarity: Option<u8>,
    pub renamed: bool,
    pub copied: bool,
    pub binary: bool,
    /// `(old mode, new mode)`.
    pub mode_change: Option<(String, String)>,
    pub hunks: Vec<Hunk>,
}

impl FileDiff {
    /// The path to show (new, else old, else `?`).
    pub fn display_path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or("?")
    }
}

/// One `@@ -a,b +c,d @@ section` hunk.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hunk {
    pub old_start: u64,
    pub old_lines: u64,
    pub new_start: u64,
    pub new_lines: u64,
    /// Function context after the closing `@@` (may be empty).
    pub section: String,
    pub lines: Vec<HunkLine>,
}

/// A hunk line's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Context,
    Add,
    Del,
    /// `\ No newline at end of file` (applies to the line before it).
    NoNewline,
}

/// One hunk line: its kind and text without the prefix and without `\n` (a `\r` is kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkLine {
    pub kind: LineKind,
    pub text: String,
}

/// Parses `@@ -a[,b] +c[,d] @@[ section]`.
pub fn parse_hunk_header(line: &str) -> Option<Hunk> {
    let rest = line.strip_prefix("@@ ")?;
    let (ranges, section) = rest.split_once(" @@").unwrap_or((rest, ""));
    let mut parts = ranges.split_whitespace();
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let range = |r: &str| -> Option<(u64, u64)> {
        match r.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (old_start, old_lines) = range(old)?;
    let (new_start, new_lines) = range(new)?;
    Some(Hunk {
        old_start,
        old_lines,
        new_start,
        new_lines,
        section: section
            .trim_start_matches(' ')
            .trim_end_matches('\r')
            .to_owned(),
        lines: Vec::new(),
    })
}

/// A `---`/`+++` path: timestamp after a tab dropped, `a/`/`b/` stripped, `/dev/null` → `None`.
fn header_path(s: &str) -> Option<String> {
    let s = s.trim_end_matches('\r');
    let s = s.split('\t').next().unwrap_or(s).trim_end();
    let s = unquote(s);
    if s == "/dev/null" || s.is_empty() {
        return None;
    }
    Some(strip_ab(&s).to_owned())
}

/// Whether a `---` / `+++` line's rest dates its file at the Unix epoch: `diff -N`'s way of
/// naming a file missing on that side (west of UTC, the last day of 1969).
fn epoch(rest: &str) -> bool {
    rest.split_once('\t')
        .is_some_and(|(_, t)| t.starts_with("1970-01-01 ") || t.starts_with("1969-12-31 "))
}

/// The two paths of a `Binary files A and B differ` line (git and GNU diff).
fn binary_files(l: &str) -> Option<(&str, &str)> {
    l.strip_prefix("Binary files ")?
        .strip_suffix(" differ")?
        .split_once(" and ")
}

fn strip_ab(s: &str) -> &str {
    s.strip_prefix("a/")
        .or_else(|| s.strip_prefix("b/"))
        .unwrap_or(s)
}

/// Undoes git's C-style quoting of a path (`"a/sp ace\303\251"`), or returns it as is.
fn unquote(s: &str) -> String {
    let Some(inner) = s.strip_prefix('"').and_then(|x| x.strip_suffix('"')) else {
        return s.to_owned();
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut it = inner.bytes().peekable();
    while let Some(b) = it.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match it.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(d @ b'0'..=b'7') => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    if let Some(&n @ b'0'..=b'7') = it.peek() {
                        v = v * 8 + u32::from(n - b'0');
                        it.next();
                    }
                }
                bytes.push(u8::try_from(v).unwrap_or(b'?'));
            }
            Some(o) => bytes.push(o),
            None => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Paths of `diff --git a/x b/y` (best effort with spaces: split where ` b/` starts).
fn git_paths(rest: &str) -> (Option<String>, Option<String>) {
    let rest = rest.trim_end_matches('\r');
    if let Some(tail) = rest.strip_prefix('"') {
        // Quoted: `"a/x" "b/y"` or `"a/x" b/y`.
        if let Some(end) = tail.find("\" ") {
            let a = &rest[..end + 2];
            let b = &rest[end + 3..];
            return (
                Some(strip_ab(&unquote(a)).to_owned()),
                Some(strip_ab(&unquote(b)).to_owned()),
            );
        }
    }
    if let Some(i) = rest.find(" b/") {
        (
            Some(strip_ab(&rest[..i]).to_owned()),
            Some(strip_ab(&unquote(&rest[i + 1..])).to_owned()),
        )
    } else {
        let mut it = rest.splitn(2, ' ');
        let a = it.next().map(|a| strip_ab(a).to_owned());
        let b = it.next().map(|b| strip_ab(b).to_owned());
        (a, b)
    }
}

/// bzr `=== kind file 'a' => 'b'` paths.
fn bzr_paths(rest: &str) -> (Option<String>, Option<String>) {
    let rest = rest.trim_end_matches('\r');
    let q = |s: &str| s.trim().trim_matches('\'').to_owned();
    match rest.split_once(" => ") {
        Some((a, b)) => (Some(q(a)), Some(q(b))),
        None => (Some(q(rest)), Some(q(rest))),
    }
}

/// Parser state across lines.
struct Parser {
    patch: Patch,
    /// Remaining (old, new) lines of the current hunk.
    remaining: Option<(u64, u64)>,
    /// Inside a `GIT binary patch` block (its base85 lines are skipped).
    in_binary: bool,
    /// The current file saw its `---` line.
    seen_minus: bool,
}

impl Parser {
    fn file(&mut self) -> &mut FileDiff {
        if self.patch.files.is_empty() {
            self.patch.files.push(FileDiff::default());
        }
        let n = self.patch.files.len() - 1;
        &mut self.patch.files[n]
    }

    fn start_file(&mut self, f: FileDiff) {
        self.patch.files.push(f);
        self.remaining = None;
        self.in_binary = false;
        self.seen_minus = false;
    }

    fn hunk_line(&mut self, line: &str) -> bool {
        let Some((old, new)) = self.remaining else {
            return false;
        };
        let (kind, text) = match line.as_bytes().first() {
            Some(b' ') if old > 0 && new > 0 => (LineKind::Context, &line[1..]),
            Some(b'-') if old > 0 => (LineKind::Del, &line[1..]),
            Some(b'+') if new > 0 => (LineKind::Add, &line[1..]),
            Some(b'\\') => (LineKind::NoNewline, line),
            // Some tools strip the space of empty context lines.
            None | Some(b'\r') if old > 0 && new > 0 => (LineKind::Context, line),
            _ => {
                self.remaining = None;
                return false;
            }
        };
        self.remaining = Some(match kind {
            LineKind::Context => (old - 1, new - 1),
            LineKind::Del => (old - 1, new),
            LineKind::Add => (old, new - 1),
            LineKind::NoNewline => (old, new),
        });
        let f = self.file();
        if let Some(h) = f.hunks.last_mut() {
            h.lines.push(HunkLine {
                kind,
                text: text.to_owned(),
            });
        }
        true
    }

    fn line(&mut self, line: &str) {
        // After a hunk's last line, `remaining` is `(0, 0)`: only a `\ No newline` marker may
        // still belong to it.
        if self.remaining.is_some() {
            if self.remaining == Some((0, 0)) && !line.starts_with('\\') {
                self.remaining = None;
            } else if self.hunk_line(line) {
                return;
            }
        }
        let bare = line.trim_end_matches('\r');
        if let Some(rest) = bare.strip_prefix("diff --git ") {
            let (a, b) = git_paths(rest);
            self.start_file(FileDiff {
                old_path: a,
                new_path: b,
                ..FileDiff::default()
            });
            return;
        }
        if let Some(rest) = bare.strip_prefix("=== ") {
            // bzr: `=== added file 'x'`, `=== modified file 'x'`, `=== removed file 'x'`,
            // `=== renamed file 'a' => 'b'`.
            let mut f = FileDiff::default();
            let mut words = rest.splitn(3, ' ');
            let verb = words.next().unwrap_or("");
            let _kind = words.next();
            let (a, b) = bzr_paths(words.next().unwrap_or(""));
            f.old_path = a;
            f.new_path = b;
            match verb {
                "added" => f.added = true,
                "removed" => f.deleted = true,
                "renamed" => f.renamed = true,
                _ => {}
            }
            self.start_file(f);
            return;
        }
        if let Some(rest) = bare.strip_prefix("Index: ") {
            self.start_file(FileDiff {
                old_path: Some(rest.to_owned()),
                new_path: Some(rest.to_owned()),
                ..FileDiff::default()
            });
            return;
        }
        if self.in_binary {
            if bare.starts_with("literal ") || bare.starts_with("delta ") || bare.is_empty() {
                return;
            }
            // base85 data lines start with a length character A–Z / a–z.
            if bare.len() > 1 && bare.as_bytes()[0].is_ascii_alphabetic() {
                return;
            }
            self.in_binary = false;
        }
        if let Some(h) = bare
            .strip_prefix("@@ ")
            .and_then(|_| parse_hunk_header(bare))
        {
            self.remaining = Some((h.old_lines, h.new_lines));
            self.file().hunks.push(h);
            return;
        }
        if let Some(rest) = bare.strip_prefix("--- ") {
            let starts_new =
                self.patch.files.is_empty() || self.seen_minus || !self.file().hunks.is_empty();
            if starts_new {
                self.start_file(FileDiff::default());
            }
            self.seen_minus = true;
            let p = header_path(rest).filter(|_| !epoch(rest));
            let f = self.file();
            if p.is_none() {
                f.added = true;
            }
            if p.is_some() || f.old_path.is_none() || f.added {
                f.old_path = p;
            }
            return;
        }
        if let Some(rest) = bare.strip_prefix("+++ ")
            && self.seen_minus
            && self.file().hunks.is_empty()
        {
            let p = header_path(rest).filter(|_| !epoch(rest));
            let f = self.file();
            if p.is_none() {
                f.deleted = true;
            }
            f.new_path = p;
            return;
        }
        // `diff -r`'s `Binary files a/x and b/x differ` is a file of its own (after a `diff
        // --git` header, still without hunks, it is that file's: below).
        if let Some((a, b)) = binary_files(bare)
            && (self.patch.files.is_empty() || !self.file().hunks.is_empty() || self.seen_minus)
        {
            let (old, new) = (header_path(a), header_path(b));
            self.start_file(FileDiff {
                added: old.is_none(),
                deleted: new.is_none(),
                old_path: old,
                new_path: new,
                binary: true,
                ..FileDiff::default()
            });
            return;
        }
        if self.patch.files.is_empty() {
            if bare.starts_with("diff ") {
                self.start_file(FileDiff::default());
                self.file().headers.push(bare.to_owned());
            } else {
                self.patch.preamble.push(line.to_owned());
            }
            return;
        }
        let f = self.file();
        if let Some(m) = bare.strip_prefix("new file mode ") {
            f.added = true;
            f.old_path = None;
            f.headers.push(format!("new file mode {m}"));
        } else if let Some(m) = bare.strip_prefix("deleted file mode ") {
            f.deleted = true;
            f.new_path = None;
            f.headers.push(format!("deleted file mode {m}"));
        } else if let Some(m) = bare.strip_prefix("old mode ") {
            f.mode_change = Some((m.to_owned(), String::new()));
        } else if let Some(m) = bare.strip_prefix("new mode ") {
            let old = f.mode_change.take().map(|(o, _)| o).unwrap_or_default();
            f.mode_change = Some((old, m.to_owned()));
        } else if let Some(p) = bare
            .strip_prefix("similarity index ")
            .or_else(|| bare.strip_prefix("dissimilarity index "))
        {
            f.similarity = p.trim_end_matches('%').parse().ok();
        } else if let Some(p) = bare.strip_prefix("rename from ") {
            f.renamed = true;
            f.old_path = Some(unquote(p));
        } else if let Some(p) = bare.strip_prefix("rename to ") {
            f.renamed = true;
            f.new_path = Some(unquote(p));
        } else if let Some(p) = bare.strip_prefix("copy from ") {
            f.copied = true;
            f.old_path = Some(unquote(p));
        } else if let Some(p) = bare.strip_prefix("copy to ") {
            f.copied = true;
            f.new_path = Some(unquote(p));
        } else if bare == "GIT binary patch" {
            f.binary = true;
            self.in_binary = true;
        } else if bare.starts_with("Binary files ") {
            f.binary = true;
        } else if bare.starts_with("index ") || bare.chars().all(|c| c == '=') {
            // Object ids and svn's separator carry nothing for a reader.
        } else if !bare.is_empty() {
            f.headers.push(line.to_owned());
        }
    }
}

/// Parses a unified diff (never fails; see the module docs).
pub fn parse_patch(text: &str) -> Patch {
    let mut p = Parser {
        patch: Patch::default(),
        remaining: None,
        in_binary: false,
        seen_minus: false,
    };
    let body = text.strip_suffix('\n').unwrap_or(text);
    for line in body.split('\n') {
        p.line(line);
    }
    p.patch
}

/// Whether `text` looks like a unified diff: a hunk header, a git/bzr file header, a `Binary
/// files … differ` line, or a `--- ` line followed by `+++ ` (a file of headers only).
pub fn looks_like_diff(text: &str) -> bool {
    let mut minus = false;
    text.lines().take(2000).any(|l| {
        let pair = minus && l.starts_with("+++ ");
        minus = l.starts_with("--- ");
        pair || (l.starts_with("@@ -") && parse_hunk_header(l).is_some())
            || l.starts_with("diff --git ")
            || l.starts_with("=== modified file ")
            || l.starts_with("=== added file ")
            || binary_files(l).is_some()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunk_header_with_section() {
        let h = parse_hunk_header("@@ -2278,7 +2278 @@ def f(x) -> None:").unwrap();
        assert_eq!(
            (h.old_start, h.old_lines, h.new_start, h.new_lines),
            (2278, 7, 2278, 1)
        );
        assert_eq!(h.section, "def f(x) -> None:");
        assert!(parse_hunk_header("@@ nonsense @@").is_none());
    }

    #[test]
    fn git_rename_binary_mode_and_removed_dash_line() {
        let d = "From abc\n\ndiff --git a/x b/y\nsimilarity index 96%\nrename from x\nrename to y\n\
diff --git a/bin b/bin\nnew file mode 100644\nGIT binary patch\nliteral 0\nHcmV?d00001\n\nliteral 0\nHcmV?d00001\n\n\
diff --git a/m b/m\nold mode 100644\nnew mode 100755\n\
diff --git a/c b/c\n--- a/c\n+++ b/c\n@@ -1,2 +1,1 @@\n--- x\n keep\r\n\\ No newline at end of file\n";
        let p = parse_patch(d);
        assert_eq!(p.preamble, ["From abc", ""]);
        assert_eq!(p.files.len(), 4);
        let r = &p.files[0];
        assert!(r.renamed && r.hunks.is_empty());
        assert_eq!(
            (r.old_path.as_deref(), r.new_path.as_deref(), r.similarity),
            (Some("x"), Some("y"), Some(96))
        );
        assert!(p.files[1].binary && p.files[1].added && p.files[1].headers.len() == 1);
        assert_eq!(
            p.files[2].mode_change,
            Some(("100644".into(), "100755".into()))
        );
        let h = &p.files[3].hunks[0];
        assert_eq!(
            h.lines[0],
            HunkLine {
                kind: LineKind::Del,
                text: "-- x".into()
            }
        );
        assert_eq!(
            h.lines[1],
            HunkLine {
                kind: LineKind::Context,
                text: "keep\r".into()
            }
        );
        assert_eq!(h.lines[2].kind, LineKind::NoNewline);
    }

    #[test]
    fn plain_multi_file_and_bzr() {
        let d = "--- a.txt\t2020\n+++ a.txt\t2021\n@@ -1 +1 @@\n-a\n+b\n--- b.txt\n+++ b.txt\n@@ -0,0 +1 @@\n+new\n";
        let p = parse_patch(d);
        assert_eq!(p.files.len(), 2);
        assert_eq!(p.files[0].display_path(), "a.txt");
        let d = "=== renamed file 'a' => 'b'\n=== added file 'c'\n--- c\t1970\n+++ c\t2013\n@@ -0,0 +1 @@\n+x\n";
        let p = parse_patch(d);
        assert_eq!(p.files.len(), 2);
        assert!(p.files[0].renamed);
        assert!(p.files[1].added);
        assert_eq!(p.files[1].hunks[0].lines.len(), 1);
    }

    #[test]
    fn quoted_paths() {
        assert_eq!(unquote("\"a/caf\\303\\251\""), "a/café");
        let (a, b) = git_paths("a/my file b/my file");
        assert_eq!(
            (a.as_deref(), b.as_deref()),
            (Some("my file"), Some("my file"))
        );
    }
}
