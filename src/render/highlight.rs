//! Syntax highlighting with syntect: lazily loaded singletons, lookup, limits, style conversion.
//!
//! Who calls it: [`super::code`] (file contents, shell commands) and [`super::diff`] (both
//! sides of each hunk). Everything here is a pure, synchronous function; it is only ever run when
//! `RenderCtx::highlight` is set, so the app can draw the plain rendering at once and run the
//! highlighted one on `spawn_blocking` (STYLE 4.6). The plain fallback is [`plain_code_spans`].
//!
//! Syntaxes: `two-face` (bat's curated set, ~200 syntaxes including TypeScript, TSX, TOML,
//! Dockerfile, Terraform, Kotlin, Swift …). syntect's own defaults lack TypeScript and TOML, which
//! agents edit all the time. Cost: about 1 MB more binary (one embedded, uncompressed dump) and a
//! one-time load on the first highlighted block (lazy, off the draw path: see BENCHMARKS.md).
//! Themes stay syntect's bundled ones.
//!
//! Regex engine: Oniguruma (syntect's `regex-onig`, two-face's onig dump; bat's choice), not the
//! pure-Rust fancy-regex: on the corpus's files it highlights 2.9× faster (Elixir 2×, JavaScript
//! 2.8×, Markdown 13×; BENCHMARKS.md "Highlighting", issue 17). It builds its bundled C source
//! with the C compiler (`onig_sys`).
//!
//! Repeats cost a copy: [`highlight_block`] keeps its results in a bounded cache, and a block
//! that misses it takes each line it can from a bounded line cache, keyed by the line and the
//! parser state before it (a file read again after an edit differs in a few lines; the HTML
//! export of the 100 MB transcript spent 38 % of its time highlighting).
//!
//! Style conversion (codex `convert_style`): keep the foreground and bold, drop the background
//! (the terminal or diff owns it), drop italic and underline.

use std::sync::{OnceLock, RwLock};

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use syntect::highlighting::{
    FontStyle, HighlightIterator, HighlightState, Highlighter, Theme as SynTheme, ThemeSet,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

use crate::theme::Theme;

/// No highlighting above this many bytes per block (codex): syntect runs at roughly 10–50 MB/s
/// of typical code, so 512 KiB stays well under 100 ms even off the draw path.
pub const MAX_HIGHLIGHT_BYTES: usize = 512 * 1024;
/// No highlighting above this many lines per block (codex).
pub const MAX_HIGHLIGHT_LINES: usize = 10_000;
/// Lines longer than this many bytes are drawn plain (bat: minified files make regex-based
/// highlighting quadratic); the parser state simply skips them.
pub const MAX_HIGHLIGHT_LINE_BYTES: usize = 16 * 1024;

/// The syntect theme used unless the config names another (`syntax_theme`).
pub const DEFAULT_THEME: &str = "base16-ocean.dark";

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(two_face::syntax::extra_newlines)
}

fn theme_set() -> &'static ThemeSet {
    static THEMES: OnceLock<ThemeSet> = OnceLock::new();
    THEMES.get_or_init(ThemeSet::load_defaults)
}

/// bat's themes (two-face: Dracula, Nord, GitHub, gruvbox, Catppuccin, Solarized, One Half…),
/// each deserialised the first time it is used; a name syntect also ships keeps syntect's.
fn extra_themes() -> &'static two_face::theme::LazyThemeSet {
    static EXTRA: OnceLock<two_face::theme::LazyThemeSet> = OnceLock::new();
    EXTRA.get_or_init(|| two_face::theme::extra().into())
}

/// The theme called `name`: syntect's, else bat's.
fn theme_named(name: &str) -> Option<&'static SynTheme> {
    theme_set()
        .themes
        .get(name)
        .or_else(|| extra_themes().get(name))
}

/// The selected theme's name; `None`: [`DEFAULT_THEME`]. Process-wide because the renderers
/// that highlight run on worker threads and take no config; set once at startup.
static SELECTED: RwLock<Option<String>> = RwLock::new(None);

/// Names of the bundled themes (syntect's and bat's), sorted.
pub fn theme_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = theme_set().themes.keys().map(String::as_str).collect();
    names.extend(extra_themes().theme_names());
    names.sort_unstable();
    names.dedup();
    names
}

/// Whether `name` is a bundled theme (syntect's or bat's).
pub fn has_theme(name: &str) -> bool {
    theme_set().themes.contains_key(name) || extra_themes().theme_names().any(|n| n == name)
}

/// The warning for an unknown theme name: names it and lists the available ones.
pub fn unknown_theme_message(name: &str) -> String {
    format!(
        "unknown syntax_theme `{name}` (using {DEFAULT_THEME}); available: {}",
        theme_names().join(", ")
    )
}

/// Selects the syntect theme used from now on (config `syntax_theme`).
///
/// # Errors
/// An unknown name: the selection is unchanged; the message names the theme and lists the
/// available ones (a warning for the user, not a failure).
pub fn set_theme(name: &str) -> Result<(), String> {
    if !has_theme(name) {
        return Err(unknown_theme_message(name));
    }
    if let Ok(mut sel) = SELECTED.write() {
        *sel = Some(name.to_owned());
    }
    Ok(())
}

/// The name of the theme in use.
pub fn current_theme() -> String {
    SELECTED
        .read()
        .ok()
        .and_then(|s| s.clone())
        .unwrap_or_else(|| DEFAULT_THEME.to_owned())
}

fn syn_theme() -> Option<&'static SynTheme> {
    let sel = SELECTED.read().ok().and_then(|s| s.clone());
    sel.and_then(|n| theme_named(&n))
        .or_else(|| theme_named(DEFAULT_THEME))
}

/// Maps common language names and extensions syntect does not know to ones it does.
fn alias(token: &str) -> &str {
    match token {
        "sh" | "shell" | "zsh" | "bash" | "console" => "bash",
        "py" | "python3" | "py3" => "python",
        "golang" => "go",
        "ts" | "typescript" | "mts" | "cts" => "ts",
        "mjs" | "cjs" | "jsx" | "javascript" => "js",
        "jsonl" | "json5" | "jsonc" | "ndjson" => "json",
        "yml" => "yaml",
        "rs" => "rust",
        "md" => "markdown",
        "htm" => "html",
        other => other,
    }
}

/// Finds a syntax: explicit language hint → path (extension or file name) → first line
/// (shebang, `<?xml`, modelines). `None` means plain text.
pub fn find_syntax(
    lang: Option<&str>,
    path: Option<&str>,
    first_line: &str,
) -> Option<&'static SyntaxReference> {
    let ss = syntaxes();
    if let Some(l) = lang {
        let l = l.trim().to_ascii_lowercase();
        let a = alias(&l);
        if let Some(s) = ss
            .find_syntax_by_token(a)
            .or_else(|| ss.find_syntax_by_extension(a))
        {
            return Some(s);
        }
    }
    if let Some(p) = path {
        let name = p.rsplit(['/', '\\']).next().unwrap_or(p);
        if let Some(s) = ss.find_syntax_by_extension(name) {
            return Some(s);
        }
        if let Some((_, ext)) = name.rsplit_once('.') {
            let ext = ext.to_ascii_lowercase();
            if let Some(s) = ss
                .find_syntax_by_extension(&ext)
                .or_else(|| ss.find_syntax_by_extension(alias(&ext)))
            {
                return Some(s);
            }
        }
    }
    ss.find_syntax_by_first_line(first_line)
}

/// Whether a block is small enough to highlight ([`MAX_HIGHLIGHT_BYTES`], [`MAX_HIGHLIGHT_LINES`]).
pub fn within_limits(text: &str) -> bool {
    text.len() <= MAX_HIGHLIGHT_BYTES
        && memchr::memchr_iter(b'\n', text.as_bytes()).count() < MAX_HIGHLIGHT_LINES
}

/// Converts a syntect style (foreground and bold only).
fn convert(s: syntect::highlighting::Style) -> Style {
    let mut st = Style::new().fg(Color::Rgb(s.foreground.r, s.foreground.g, s.foreground.b));
    if s.font_style.contains(FontStyle::BOLD) {
        st = st.add_modifier(Modifier::BOLD);
    }
    st
}

/// Highlights `text` as one unit (parser state carries across lines) and returns one span list
/// per line (`\n` removed; other controls made visible). `None` when the block is over the limits,
/// the theme is missing, or syntect fails; callers then use [`plain_code_spans`].
///
/// Results are kept in a bounded process-wide cache ([`CACHE_BYTES`]) keyed by the syntax, the
/// theme and the text: a session reads and edits the same files again and again (the same file
/// content, the same hunk sides), and each repeat then costs a copy instead of a regex run.
pub fn highlight_block(
    text: &str,
    syntax: &SyntaxReference,
    theme: &Theme,
) -> Option<Vec<Vec<Span<'static>>>> {
    if !within_limits(text) || !theme.colour {
        return None;
    }
    let st = syn_theme()?;
    let key = CacheKey::new(text, syntax, st);
    if let Some(hit) = cache().lock().ok().and_then(|mut c| c.get(&key)) {
        return Some(hit);
    }

    let out = highlight_uncached(text, syntax, st, theme)?;
    if let Ok(mut c) = cache().lock() {
        c.insert(key, text.len(), &out);
    }
    Some(out)
}

/// A block missed the block cache: each line comes from the line cache when the same line was
/// highlighted before from the same parser state (a file read again after an edit, the same
/// lines in another hunk), else from syntect.
fn highlight_uncached(
    text: &str,
    syntax: &SyntaxReference,
    st: &SynTheme,
    theme: &Theme,
) -> Option<Vec<Vec<Span<'static>>>> {
    let ss = syntaxes();
    let highlighter = Highlighter::new(st);
    let mut parse = ParseState::new(syntax);
    let mut paint = HighlightState::new(&highlighter, ScopeStack::new());
    let mut out = Vec::new();
    for line in LinesWithEndings::from(text) {
        let body = line.strip_suffix('\n').unwrap_or(line);
        if line.len() > MAX_HIGHLIGHT_LINE_BYTES {
            out.push(plain_code_spans(body, theme));
            continue;
        }
        let key = LineKey::new(line, syntax, st);
        if let Some((spans, state)) = LINE_CACHE.with_borrow_mut(|c| c.get(&key, &parse, &paint)) {
            (parse, paint) = state;
            out.push(spans);
            continue;
        }
        let start = (parse.clone(), paint.clone());
        let ops = parse.parse_line(line, ss).ok()?;
        let mut spans = Vec::new();
        for (s, piece) in HighlightIterator::new(&mut paint, &ops, line, &highlighter) {
            let piece = piece.strip_suffix('\n').unwrap_or(piece);
            if piece.is_empty() {
                continue;
            }
            spans.extend(super::text::plain_spans(piece, convert(s), theme));
        }
        let end = (parse.clone(), paint.clone());
        LINE_CACHE.with_borrow_mut(|c| c.insert(key, line.len(), start, end, &spans));
        out.push(spans);
    }
    Some(out)
}

/// Bytes of lines the line cache of a thread keeps per generation (two generations), counting
/// [`LINE_ENTRY_COST`] more for each entry's parser states. The states weigh more than that
/// (a scope stack and the painter's style stacks): at this budget the cache held ~4 MB on the
/// HTML export of the 100 MB transcript (peak RSS 88 → 92 MB) and took its CPU from 3.3 s to
/// 2.1 s; four times the budget saved nothing more and cost 9 MB.
pub const LINE_CACHE_BYTES: usize = 256 * 1024;
/// What a line cache entry is counted besides its line: its two pairs of parser states.
const LINE_ENTRY_COST: usize = 512;

/// A line of a block: syntax and theme (by address) and the line's length and hashes.
type LineKey = CacheKey;

/// Parser and painter state before or after a line.
type LineState = (ParseState, HighlightState);

/// One line highlighted from `start`: its spans and the state after it.
struct LineEntry {
    start: LineState,
    end: LineState,
    spans: Packed,
}

/// Highlighted lines by their text, each with the parser state it was highlighted from (a line
/// highlights differently inside a comment or a string); two generations as [`Cache`].
#[derive(Default)]
struct LineCache {
    current: std::collections::HashMap<LineKey, Vec<LineEntry>>,
    current_bytes: usize,
    previous: std::collections::HashMap<LineKey, Vec<LineEntry>>,
}

impl LineCache {
    /// The spans of the line `key` highlighted from (`parse`, `paint`), and the state after it.
    fn get(
        &mut self,
        key: &LineKey,
        parse: &ParseState,
        paint: &HighlightState,
    ) -> Option<(Vec<Span<'static>>, LineState)> {
        let hit = |e: &LineEntry| e.start.0 == *parse && e.start.1 == *paint;
        if let Some(e) = self
            .current
            .get(key)
            .and_then(|v| v.iter().find(|e| hit(e)))
        {
            return Some((e.spans.unpack().pop().unwrap_or_default(), e.end.clone()));
        }
        let list = self.previous.get_mut(key)?;
        let i = list.iter().position(hit)?;
        let e = list.swap_remove(i);
        let out = (e.spans.unpack().pop().unwrap_or_default(), e.end.clone());
        self.put(*key, key.len, e);
        Some(out)
    }

    fn insert(
        &mut self,
        key: LineKey,
        bytes: usize,
        start: LineState,
        end: LineState,
        spans: &[Span<'static>],
    ) {
        let spans = Packed::pack(&vec![spans.to_vec()]);
        self.put(key, bytes, LineEntry { start, end, spans });
    }

    fn put(&mut self, key: LineKey, bytes: usize, e: LineEntry) {
        let cost = bytes + LINE_ENTRY_COST;
        if self.current_bytes + cost > LINE_CACHE_BYTES {
            self.previous = std::mem::take(&mut self.current);
            self.current_bytes = 0;
        }
        self.current_bytes += cost;
        self.current.entry(key).or_default().push(e);
    }
}

thread_local! {
    /// Per thread: a parser state holds Oniguruma match regions, which may not cross threads.
    /// Highlighting runs on the export's thread or the viewer's blocking jobs, whose idle
    /// threads end (and free this) after a few seconds.
    static LINE_CACHE: std::cell::RefCell<LineCache> = std::cell::RefCell::default();
}

/// Bytes of highlighted text the cache keeps per generation (two generations: at most about
/// twice this, plus the spans' overhead).
pub const CACHE_BYTES: usize = 8 * 1024 * 1024;

/// A cached block: the syntax and theme (by address: both live in process-wide sets loaded once),
/// the text's length and two independent 64-bit hashes of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct CacheKey {
    syntax: usize,
    theme: usize,
    len: usize,
    hash: (u64, u64),
}

impl CacheKey {
    fn new(text: &str, syntax: &SyntaxReference, theme: &SynTheme) -> Self {
        use std::hash::{BuildHasher, Hasher};
        let hash = |seed: u64| {
            let mut h = std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
                .build_hasher();
            h.write_u64(seed);
            h.write(text.as_bytes());
            h.finish()
        };
        Self {
            syntax: std::ptr::from_ref(syntax) as usize,
            theme: std::ptr::from_ref(theme) as usize,
            len: text.len(),
            hash: (hash(0x9e37_79b9_7f4a_7c15), hash(0xc2b2_ae3d_27d4_eb4f)),
        }
    }
}

type Lines = Vec<Vec<Span<'static>>>;

/// A cached block, packed: the spans' text end to end, each span's length and style, and each
/// line's number of spans. The spans themselves cost ~80 bytes each besides their text (a
/// `String` allocation and a `Span`), so 8 MB of highlighted text held as spans was ~40 MB of
/// heap (heaptrack, `rawpv export` of the 100 MB transcript); packed it is the text plus ~30
/// bytes a span, and a hit builds the spans once (it cloned them before).
#[derive(Debug, Default)]
struct Packed {
    text: String,
    runs: Vec<(u32, Style)>,
    lines: Vec<u32>,
}

impl Packed {
    fn pack(lines: &Lines) -> Self {
        let mut p = Self {
            text: String::with_capacity(lines.iter().flatten().map(|s| s.content.len()).sum()),
            runs: Vec::with_capacity(lines.iter().map(Vec::len).sum()),
            lines: Vec::with_capacity(lines.len()),
        };
        for line in lines {
            for sp in line {
                p.text.push_str(&sp.content);
                p.runs.push((
                    u32::try_from(sp.content.len()).unwrap_or(u32::MAX),
                    sp.style,
                ));
            }
            p.lines.push(u32::try_from(line.len()).unwrap_or(u32::MAX));
        }
        p
    }

    fn unpack(&self) -> Lines {
        let mut at = 0usize;
        let mut runs = self.runs.iter();
        self.lines
            .iter()
            .map(|&n| {
                runs.by_ref()
                    .take(n as usize)
                    .map(|&(len, style)| {
                        let end = (at + len as usize).min(self.text.len());
                        let piece = self.text.get(at..end).unwrap_or_default();
                        at = end;
                        Span::styled(piece.to_owned(), style)
                    })
                    .collect()
            })
            .collect()
    }
}

/// Two generations: lookups search the current one, then the previous (moving a hit forward);
/// when the current one holds [`CACHE_BYTES`] of text it becomes the previous one. An LRU in
/// effect, without per-entry bookkeeping.
#[derive(Default)]
struct Cache {
    current: std::collections::HashMap<CacheKey, (usize, Packed)>,
    current_bytes: usize,
    previous: std::collections::HashMap<CacheKey, (usize, Packed)>,
}

impl Cache {
    fn get(&mut self, key: &CacheKey) -> Option<Lines> {
        if let Some((_, packed)) = self.current.get(key) {
            return Some(packed.unpack());
        }
        let (bytes, packed) = self.previous.remove(key)?;
        let out = packed.unpack();
        self.put(*key, bytes, packed);
        Some(out)
    }

    fn insert(&mut self, key: CacheKey, bytes: usize, lines: &Lines) {
        self.put(key, bytes, Packed::pack(lines));
    }

    fn put(&mut self, key: CacheKey, bytes: usize, packed: Packed) {
        if self.current_bytes + bytes > CACHE_BYTES {
            self.previous = std::mem::take(&mut self.current);
            self.current_bytes = 0;
        }
        self.current_bytes += bytes;
        self.current.insert(key, (bytes, packed));
    }
}

fn cache() -> &'static std::sync::Mutex<Cache> {
    static CACHE: OnceLock<std::sync::Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The cheap fallback: one line of code as plain, sanitised spans.
pub fn plain_code_spans(line: &str, theme: &Theme) -> Vec<Span<'static>> {
    super::text::plain_spans(line, theme.text, theme)
}

#[cfg(test)]
mod tests {

    #[test]
    fn bats_themes_are_offered() {
        let names = theme_names();
        for n in [
            "Dracula",
            "Nord",
            "GitHub",
            "gruvbox-light",
            "base16-ocean.dark",
            "InspiredGitHub",
        ] {
            assert!(names.contains(&n), "{n} missing from {names:?}");
            assert!(has_theme(n), "{n}");
            assert!(theme_named(n).is_some(), "{n}");
        }
        assert!(!has_theme("Solarized (neon)"));
    }

    use super::*;

    /// syntect's own line-by-line highlighting, without either cache: the oracle.
    fn fresh(text: &str, syntax: &SyntaxReference, theme: &Theme) -> Lines {
        let st = syn_theme().expect("theme");
        let mut h = syntect::easy::HighlightLines::new(syntax, st);
        LinesWithEndings::from(text)
            .map(|line| {
                let regions = h.highlight_line(line, syntaxes()).expect("highlights");
                regions
                    .into_iter()
                    .map(|(s, p)| (s, p.strip_suffix('\n').unwrap_or(p)))
                    .filter(|(_, p)| !p.is_empty())
                    .flat_map(|(s, p)| super::super::text::plain_spans(p, convert(s), theme))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn lines_from_the_line_cache_equal_a_fresh_highlight_whatever_the_state_before_them() {
        let theme = Theme::dark();
        let syntax = find_syntax(None, Some("a.rs"), "").expect("rust");
        let st = syn_theme().expect("theme");
        let before = "fn a() {\n    let x = 1; // one\n    call(x, \"s\");\n}\nfn b() {}\n";
        // The same lines after an edit that opens a comment (and later a string): the lines
        // after it are the same text in another parser state, and must not come back as code.
        let edits = [
            "fn a() {\n    /* let x = 1; // one\n    call(x, \"s\");\n}\nfn b() {} */\n",
            "fn a() {\n    let x = \"1; // one\n    call(x, \"s\");\n}\nfn b() {}\n",
            before,
        ];
        assert_eq!(
            highlight_uncached(before, syntax, st, &theme),
            Some(fresh(before, syntax, &theme))
        );
        for text in edits {
            let got = highlight_uncached(text, syntax, st, &theme).expect("highlighted");
            assert_eq!(got, fresh(text, syntax, &theme), "{text}");
        }
        // And the lines did come from the cache: every line of `before` is in it, from the
        // state it was highlighted in.
        let hits = LINE_CACHE.with_borrow(|c| {
            LinesWithEndings::from(before)
                .filter(|l| c.current.contains_key(&LineKey::new(l, syntax, st)))
                .count()
        });
        assert_eq!(hits, 5);
    }

    #[test]
    fn a_cached_block_comes_back_span_for_span() {
        let theme = Theme::dark();
        let syntax = find_syntax(None, Some("a.rs"), "").expect("rust");
        let text = "fn main() {\n\tlet s = \"é\u{1b}x\";\n}\n\n// end";
        let st = syn_theme().expect("theme");
        let lines = highlight_uncached(text, syntax, st, &theme).expect("highlighted");
        assert!(lines.iter().map(Vec::len).sum::<usize>() > 5);
        assert_eq!(Packed::pack(&lines).unpack(), lines);
        assert_eq!(Packed::pack(&Vec::new()).unpack(), Lines::new());
    }

    #[test]
    fn finds_syntaxes() {
        assert_eq!(
            find_syntax(None, Some("src/a.rs"), "").map(|s| s.name.as_str()),
            Some("Rust")
        );
        assert_eq!(
            find_syntax(Some("sh"), None, "").map(|s| s.name.as_str()),
            Some("Bourne Again Shell (bash)")
        );
        assert_eq!(
            find_syntax(None, None, "#!/usr/bin/env python3").map(|s| s.name.as_str()),
            Some("Python")
        );
        assert_eq!(
            find_syntax(None, Some("Makefile"), "").map(|s| s.name.as_str()),
            Some("Makefile")
        );
        assert!(find_syntax(None, Some("x.unknownext"), "hello").is_none());
        // From two-face: the languages syntect's defaults lack.
        for (path, name) in [
            ("src/app.ts", "TypeScript"),
            ("src/App.tsx", "TypeScriptReact"),
            ("Cargo.toml", "TOML"),
            ("Dockerfile", "Dockerfile"),
        ] {
            assert_eq!(
                find_syntax(None, Some(path), "").map(|s| s.name.as_str()),
                Some(name),
                "{path}"
            );
        }
        assert_eq!(
            find_syntax(Some("typescript"), None, "").map(|s| s.name.as_str()),
            Some("TypeScript")
        );
    }

    #[test]
    fn a_repeated_block_comes_from_the_cache_unchanged() {
        let t = Theme::dark();
        let s = find_syntax(None, Some("a.py"), "").unwrap();
        let text = "def f(x):\n    return x + 1  # one\n";
        let st = syn_theme().unwrap();
        let fresh = highlight_uncached(text, s, st, &t).unwrap();
        assert_eq!(highlight_block(text, s, &t).unwrap(), fresh);
        let key = CacheKey::new(text, s, st);
        assert!(cache().lock().unwrap().current.contains_key(&key));
        assert_eq!(highlight_block(text, s, &t).unwrap(), fresh);
        // Another syntax for the same text is another entry.
        let rs = find_syntax(None, Some("a.rs"), "").unwrap();
        assert_ne!(CacheKey::new(text, rs, st), key);
    }

    #[test]
    fn the_cache_keeps_two_generations_of_at_most_cache_bytes() {
        let mut c = Cache::default();
        let key = |n: usize| CacheKey {
            syntax: 1,
            theme: 1,
            len: n,
            hash: (n as u64, 0),
        };
        let third = CACHE_BYTES / 3;
        for n in 0..3 {
            c.insert(key(n), third, &Vec::new());
        }
        assert_eq!((c.current.len(), c.previous.len()), (3, 0));
        c.insert(key(3), third, &Vec::new()); // over: the first three become the previous one
        assert_eq!((c.current.len(), c.previous.len()), (1, 3));
        assert!(c.get(&key(0)).is_some()); // a hit moves forward
        assert_eq!((c.current.len(), c.previous.len()), (2, 2));
        for n in 4..7 {
            c.insert(key(n), third, &Vec::new());
        }
        // 0 and 3 (the previous generation now) are still found; 1 and 2 are gone.
        assert!(c.get(&key(1)).is_none() && c.get(&key(2)).is_none());
        assert!(c.get(&key(0)).is_some() && c.get(&key(3)).is_some());
    }

    /// WCAG relative luminance of an RGB colour.
    fn luminance((r, g, b): (u8, u8, u8)) -> f64 {
        let lin = |c: u8| {
            let c = f64::from(c) / 255.0;
            if c <= 0.039_28 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
    }

    /// WCAG contrast ratio of two colours (1 to 21).
    fn contrast(a: (u8, u8, u8), b: (u8, u8, u8)) -> f64 {
        let (x, y) = (luminance(a), luminance(b));
        (x.max(y) + 0.05) / (x.min(y) + 0.05)
    }

    fn rgb(s: ratatui::style::Style) -> (u8, u8, u8) {
        match s.bg {
            Some(Color::Rgb(r, g, b)) => (r, g, b),
            other => panic!("not an RGB background: {other:?}"),
        }
    }

    /// Issue 22.8: the diff tints are readable under the syntax theme each palette goes with
    /// (dark: the default, light: [`crate::config::LIGHT_SYNTAX_THEME`]): every colour the
    /// syntax theme draws text in keeps at least 65% of the contrast it has on the theme's own
    /// background, on a changed line and on a changed word; the plain text keeps 4.5:1 (WCAG
    /// AA); and a changed word's tint is told from its line's (1.15:1 at least). In 16 colours
    /// nothing relies on RGB: changed words are bold and underlined.
    #[test]
    fn diff_tints_are_readable_on_dark_light_and_16_colours() {
        for (palette, name) in [
            (Theme::dark(), DEFAULT_THEME),
            (Theme::light(), crate::config::LIGHT_SYNTAX_THEME),
        ] {
            let st = theme_named(name).unwrap();
            let c8 = |c: syntect::highlighting::Color| (c.r, c.g, c.b);
            let own_bg = c8(st.settings.background.unwrap());
            let text = c8(st.settings.foreground.unwrap());
            let mut colours: Vec<(u8, u8, u8)> = (st.scopes.iter())
                .filter_map(|i| i.style.foreground.map(c8))
                .collect();
            colours.push(text);
            for (what, tint, emph) in [
                ("added", palette.diff_add_line, palette.diff_add_emph),
                ("removed", palette.diff_del_line, palette.diff_del_emph),
            ] {
                let (line, word) = (rgb(tint), rgb(emph));
                assert!(
                    contrast(line, word) >= 1.15,
                    "{name}: {what} word {word:?} hardly differs from its line {line:?}"
                );
                for bg in [line, word] {
                    assert!(contrast(text, bg) >= 4.5, "{name}: text on {bg:?}");
                    for &fg in &colours {
                        let (on_own, on_tint) = (contrast(fg, own_bg), contrast(fg, bg));
                        assert!(
                            on_tint >= 0.65 * on_own,
                            "{name}: {fg:?} on the {what} tint {bg:?}: {on_tint:.2}:1, on its \
                             own background {on_own:.2}:1"
                        );
                    }
                }
            }
        }
        let t = Theme::ansi16();
        for s in [
            t.diff_add_emph,
            t.diff_del_emph,
            t.diff_add_line,
            t.diff_del_line,
        ] {
            assert!(!matches!(s.bg, Some(Color::Rgb(..))) && !matches!(s.fg, Some(Color::Rgb(..))));
        }
        let emph = ratatui::style::Modifier::BOLD | ratatui::style::Modifier::UNDERLINED;
        assert!(
            t.diff_add_emph.add_modifier.contains(emph)
                && t.diff_del_emph.add_modifier.contains(emph)
        );
    }

    #[test]
    fn highlights_with_colour() {
        let t = Theme::dark();
        let s = find_syntax(None, Some("a.rs"), "").unwrap();
        let lines = highlight_block("fn main() {}\nlet x = 1;\n", s, &t).unwrap();
        assert_eq!(lines.len(), 2);
        assert!(
            lines[0]
                .iter()
                .any(|sp| matches!(sp.style.fg, Some(Color::Rgb(..))))
        );
        assert!(highlight_block("x", s, &Theme::mono()).is_none());
    }
}
