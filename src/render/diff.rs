//! `diff` renderer: unified diffs and structured edits with a line-number gutter, `+`/`-`
//! colours from the theme, word-level emphasis and an optional side-by-side layout.
//!
//! Who calls it: `renderer_for(Diff)`; [`build_edit_lines`] also draws Edit / `MultiEdit` inputs.
//!
//! Shapes: a unified diff string (parsed by [`parse`]; a string that is not a diff
//! is shown as text); `{file_path, structured_patch: [...]}` (preferred when non-empty);
//! `{file_path, old_string, new_string}`; `{file_path, edits: [{old_string, new_string}]}`;
//! Write's `{file_path, content, type: "create"|"update", original_file?}`; camelCase spellings
//! too. Before/after text is diffed with `similar` (line diff, 3 lines of context, at most
//! [`DIFF_TIMEOUT`] per diff, after which `similar` approximates).
//!
//! Layout: a file header (path, rename `old → new (96%)`, new / deleted / binary / mode badges),
//! per hunk an `@@ -a,b +c,d @@` row with the function context, then rows `old new │±text`.
//! A CR before the line end is shown as a dim `␍` (CRLF files stay recognisable); `\ No newline
//! at end of file` is a dim marker row. Paired `-`/`+` lines (the i-th deletion of a run with
//! the i-th addition that follows it) get their changed words in `diff_*_emph` when the lines are
//! similar enough ([`EMPH_MIN_RATIO`]). When `cx.highlight` is on and the diff is within the
//! highlight limits, every row gets syntax colours (the new side, context + additions, and the
//! old side, context + deletions, are each highlighted as one unit); added / removed code sits on
//! `theme.diff_add_line` / `diff_del_line` (also the line's style, so the pane tints the row across its
//! width) and its changed words keep their colours on `diff_*_emph`, a stronger tint. With
//! `cx.wrap`, a row wider than `cx.width` continues on rows that start after the gutter (aligned
//! with the code). With `cx.side_by_side` and `cx.width >= SIDE_BY_SIDE_MIN_WIDTH`, old and new
//! sit in two columns (cut with `…`, not wrapped). Work per hunk is bounded by the rows `Out`
//! can still keep.
//!
//! Size (about 900 lines and tests): the unified, side-by-side and structured-edit layouts share
//! the gutter, the word-level emphasis and the continuation-row wrapping, which would have to be
//! public helpers between files if they were apart; the unified-diff parser is its own module
//! (`diff/parse.rs`).

pub mod parse;

use std::ops::Range;
use std::time::Duration;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use serde_json::Value;
use similar::{ChangeTag, TextDiff};
use unicode_width::UnicodeWidthChar;

use self::parse::{FileDiff, Hunk, HunkLine, LineKind, Patch};
use super::{Block, Out, RenderCtx, Rendered, Renderer, SIDE_BY_SIDE_MIN_WIDTH, field, str_field};
use crate::theme::Theme;

/// Longest time one `similar` diff may take before it approximates (keeps renders bounded).
pub const DIFF_TIMEOUT: Duration = Duration::from_millis(300);
/// Word emphasis only when a paired line pair is at least this similar (0–1); below it, the whole
/// line changed and emphasis would only add noise (delta uses a similar threshold).
pub const EMPH_MIN_RATIO: f32 = 0.4;
/// No word emphasis for lines longer than this (bytes): word diffs are quadratic at worst.
pub const EMPH_MAX_LINE_BYTES: usize = 2_000;

/// `diff` renderer (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct DiffRenderer;

impl Renderer for DiffRenderer {
    fn render(&self, block: &Block<'_>, cx: &RenderCtx<'_>) -> Rendered {
        match block.output {
            Value::String(s) if parse::looks_like_diff(s) => {
                let (s, cut) = super::text::cut(s, cx.limits.max_bytes);
                let mut r = build_patch_lines(&parse::parse_patch(s), cx);
                r.truncated |= cut;
                r
            }
            Value::String(s) => super::text::build_ansi_lines(s, cx),
            Value::Null => Rendered::default(),
            v @ Value::Object(_) => build_edit_lines(v, Some(block.input), cx),
            other => super::json::build_json_lines(other, cx),
        }
    }
}

/// A structured edit (`structured_patch`, old/new strings, `edits`, Write create/update) as diff
/// lines; `input` supplies the path (and the edit itself) when `v` lacks them. Unknown shapes
/// fall back to the JSON tree.
pub fn build_edit_lines(v: &Value, input: Option<&Value>, cx: &RenderCtx<'_>) -> Rendered {
    let none = Value::Null;
    let input = input.unwrap_or(&none);
    match edit_to_patch(v).or_else(|| edit_to_patch(input)) {
        Some(f) => build_patch_lines(
            &Patch {
                preamble: Vec::new(),
                files: vec![FileDiff {
                    old_path: f.old_path.clone().or_else(|| path_of(v, input)),
                    new_path: f.new_path.clone().or_else(|| path_of(v, input)),
                    ..f
                }],
            },
            cx,
        ),
        None => match (str_field(v, &["content"]), path_of(v, input)) {
            // Write "update" without the original: the new content as code.
            (Some(c), p) => {
                let mut out = Out::new(cx);
                if let Some(p) = p.as_deref() {
                    out.push(super::input::path_line(p, "  (written)", cx));
                }
                out.extend(super::code::build_code_lines(c, None, p.as_deref(), 1, true, cx).lines);
                out.finish(cx.theme)
            }
            _ => super::json::build_json_lines(v, cx),
        },
    }
}

/// Whether a `diff` output shows the change itself (a unified diff, or a structured edit /
/// Write shape this renderer draws as a diff), so an edit's input need not repeat it.
pub fn shows_change(output: &Value) -> bool {
    match output {
        Value::String(s) => parse::looks_like_diff(s),
        v @ Value::Object(_) => edit_to_patch(v).is_some(),
        _ => false,
    }
}

fn path_of(v: &Value, input: &Value) -> Option<String> {
    super::file_path(v, input).map(str::to_owned)
}

/// Turns the structured shapes into one file's hunks (paths left to the caller).
fn edit_to_patch(v: &Value) -> Option<FileDiff> {
    if !v.is_object() {
        return None;
    }
    if let Some(Value::Array(hunks)) = field(v, &["structured_patch", "structuredPatch"])
        && !hunks.is_empty()
    {
        let hunks: Vec<Hunk> = hunks.iter().filter_map(structured_hunk).collect();
        if !hunks.is_empty() {
            return Some(FileDiff {
                hunks,
                ..FileDiff::default()
            });
        }
    }
    if let (Some(old), Some(new)) = (
        str_field(v, &["old_string", "oldString", "old_str"]),
        str_field(v, &["new_string", "newString", "new_str"]),
    ) {
        let original = str_field(
            v,
            &["original_file", "originalFile", "originalFileContents"],
        );
        let base = original
            .and_then(|o| o.find(old).map(|at| o[..at].matches('\n').count() as u64))
            .unwrap_or(0);
        return Some(FileDiff {
            hunks: diff_hunks(old, new, base, false),
            ..FileDiff::default()
        });
    }
    if let Some(Value::Array(edits)) = field(v, &["edits"]) {
        let original = str_field(
            v,
            &["original_file", "originalFile", "originalFileContents"],
        );
        let mut hunks = Vec::new();
        for e in edits {
            if let (Some(old), Some(new)) = (
                str_field(e, &["old_string", "oldString"]),
                str_field(e, &["new_string", "newString"]),
            ) {
                let base = original
                    .and_then(|o| o.find(old).map(|at| o[..at].matches('\n').count() as u64))
                    .unwrap_or(0);
                hunks.extend(diff_hunks(old, new, base, false));
            }
        }
        return Some(FileDiff {
            hunks,
            ..FileDiff::default()
        });
    }
    let kind = str_field(v, &["type"]);
    let content = str_field(v, &["content"]);
    match (kind, content) {
        (Some("create"), Some(c)) => Some(FileDiff {
            added: true,
            hunks: diff_hunks("", c, 0, true),
            ..FileDiff::default()
        }),
        (Some("update"), Some(c)) => {
            let orig = str_field(v, &["original_file", "originalFile"])?;
            Some(FileDiff {
                hunks: diff_hunks(orig, c, 0, true),
                ..FileDiff::default()
            })
        }
        _ => None,
    }
}

/// One `{old_start, old_lines, new_start, new_lines, lines}` object.
fn structured_hunk(h: &Value) -> Option<Hunk> {
    let n = |k: &[&str]| field(h, k).and_then(Value::as_u64).unwrap_or(0);
    let lines = field(h, &["lines"])?.as_array()?;
    Some(Hunk {
        old_start: n(&["old_start", "oldStart"]),
        old_lines: n(&["old_lines", "oldLines"]),
        new_start: n(&["new_start", "newStart"]),
        new_lines: n(&["new_lines", "newLines"]),
        section: String::new(),
        lines: lines
            .iter()
            .filter_map(Value::as_str)
            .map(|l| {
                let (kind, text) = match l.as_bytes().first() {
                    Some(b'+') => (LineKind::Add, &l[1..]),
                    Some(b'-') => (LineKind::Del, &l[1..]),
                    Some(b'\\') => (LineKind::NoNewline, l),
                    Some(b' ') => (LineKind::Context, &l[1..]),
                    _ => (LineKind::Context, l),
                };
                HunkLine {
                    kind,
                    text: text.to_owned(),
                }
            })
            .collect(),
    })
}

/// Line diff of two texts as hunks with 3 lines of context; line numbers start after `base`
/// lines (the snippet's position in the file when known). `whole_files` adds `\ No newline`
/// markers where a side's last line lacks one.
pub fn diff_hunks(old: &str, new: &str, base: u64, whole_files: bool) -> Vec<Hunk> {
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    let mut hunks = Vec::new();
    for group in diff.grouped_ops(3) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        let mut h = Hunk {
            old_start: base + old_range.start as u64 + u64::from(!old_range.is_empty()),
            old_lines: old_range.len() as u64,
            new_start: base + new_range.start as u64 + u64::from(!new_range.is_empty()),
            new_lines: new_range.len() as u64,
            section: String::new(),
            lines: Vec::new(),
        };
        for op in &group {
            for ch in diff.iter_changes(op) {
                let kind = match ch.tag() {
                    ChangeTag::Equal => LineKind::Context,
                    ChangeTag::Delete => LineKind::Del,
                    ChangeTag::Insert => LineKind::Add,
                };
                let text = ch.value();
                let text = text.strip_suffix('\n').unwrap_or(text);
                h.lines.push(HunkLine {
                    kind,
                    text: text.to_owned(),
                });
                if whole_files && ch.missing_newline() {
                    h.lines.push(HunkLine {
                        kind: LineKind::NoNewline,
                        text: "\\ No newline at end of file".to_owned(),
                    });
                }
            }
        }
        hunks.push(h);
    }
    hunks
}

/// Byte ranges within one line.
pub type Ranges = Vec<Range<usize>>;

/// Byte ranges of changed words in `old` and `new`, or `None` when the lines are too long or too
/// different for emphasis to help.
pub fn word_emphasis(old: &str, new: &str) -> Option<(Ranges, Ranges)> {
    if old.len() > EMPH_MAX_LINE_BYTES || new.len() > EMPH_MAX_LINE_BYTES {
        return None;
    }
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_unicode_words(old, new);
    if diff.ratio() < EMPH_MIN_RATIO {
        return None;
    }
    let (mut o, mut n) = (Vec::new(), Vec::new());
    let (mut oi, mut ni) = (0usize, 0usize);
    for ch in diff.iter_all_changes() {
        let len = ch.value().len();
        match ch.tag() {
            ChangeTag::Equal => {
                oi += len;
                ni += len;
            }
            ChangeTag::Delete => {
                push_range(&mut o, oi..oi + len);
                oi += len;
            }
            ChangeTag::Insert => {
                push_range(&mut n, ni..ni + len);
                ni += len;
            }
        }
    }
    Some((merge_gaps(o, old), merge_gaps(n, new)))
}

/// Joins emphasis ranges separated only by whitespace (`should be`, not `should` + `be`).
fn merge_gaps(v: Ranges, text: &str) -> Ranges {
    let mut out: Ranges = Vec::with_capacity(v.len());
    for r in v {
        if let Some(last) = out.last_mut()
            && text
                .get(last.end..r.start)
                .is_some_and(|gap| gap.chars().all(char::is_whitespace))
        {
            last.end = r.end;
            continue;
        }
        out.push(r);
    }
    out
}

/// Appends a range, merging it with the previous one when adjacent.
fn push_range(v: &mut Vec<Range<usize>>, r: Range<usize>) {
    if let Some(last) = v.last_mut()
        && last.end == r.start
    {
        last.end = r.end;
        return;
    }
    v.push(r);
}

/// Rendering state shared by the painters.
struct Painter<'c, 't> {
    cx: &'c RenderCtx<'t>,
    theme: &'t Theme,
    /// Gutter number width.
    w: usize,
    side: bool,
}

/// One row to draw: kind, old/new numbers, text and emphasis ranges, optional syntax spans.
struct Row<'h> {
    kind: LineKind,
    old: Option<u64>,
    new: Option<u64>,
    text: &'h str,
    emph: Vec<Range<usize>>,
    syntax: Option<Vec<Span<'static>>>,
}

/// Draws a parsed patch.
pub fn build_patch_lines(patch: &Patch, cx: &RenderCtx<'_>) -> Rendered {
    let theme = cx.theme;
    let mut out = Out::new(cx);
    for l in &patch.preamble {
        out.push(super::text::plain_line(l, theme.dim, theme));
    }
    let total_bytes: usize = patch
        .files
        .iter()
        .flat_map(|f| &f.hunks)
        .flat_map(|h| &h.lines)
        .map(|l| l.text.len() + 1)
        .sum();
    let highlight =
        cx.highlight && theme.colour && total_bytes <= super::highlight::MAX_HIGHLIGHT_BYTES;
    for (fi, f) in patch.files.iter().enumerate() {
        if out.full() {
            out.skip(f.hunks.iter().map(|h| h.lines.len() + 1).sum::<usize>() + 1);
            continue;
        }
        if fi > 0 || !patch.preamble.is_empty() {
            out.push(Line::default());
        }
        file_header(&mut out, f, cx);
        let max_no = f
            .hunks
            .iter()
            .map(|h| (h.old_start + h.old_lines).max(h.new_start + h.new_lines))
            .max()
            .unwrap_or(1);
        let p = Painter {
            cx,
            theme,
            w: max_no.to_string().len(),
            side: cx.side_by_side && cx.width >= SIDE_BY_SIDE_MIN_WIDTH,
        };
        let syntax = if highlight {
            super::highlight::find_syntax(None, Some(f.display_path()), "")
        } else {
            None
        };
        for h in &f.hunks {
            if out.full() {
                out.skip(h.lines.len() + 1);
                continue;
            }
            p.hunk(&mut out, h, syntax);
        }
    }
    if patch.files.is_empty() && patch.preamble.is_empty() {
        out.push(Line::from(Span::styled("(empty diff)", theme.dim)));
    }
    out.finish(theme)
}

fn file_header(out: &mut Out, f: &FileDiff, cx: &RenderCtx<'_>) {
    let theme = cx.theme;
    let mut spans = vec![Span::styled("▌", theme.diff_file)];
    match (&f.old_path, &f.new_path) {
        (Some(a), Some(b)) if a != b => {
            spans.extend(super::text::plain_spans(a, theme.diff_file, theme));
            spans.push(Span::styled(" → ", theme.dim));
            spans.extend(super::text::plain_spans(b, theme.diff_file, theme));
        }
        _ => spans.extend(super::text::plain_spans(
            f.display_path(),
            theme.diff_file,
            theme,
        )),
    }
    let mut badges = Vec::new();
    if f.added {
        badges.push("new file".to_owned());
    }
    if f.deleted {
        badges.push("deleted".to_owned());
    }
    if f.renamed || f.copied {
        let what = if f.copied { "copied" } else { "renamed" };
        match f.similarity {
            Some(s) => badges.push(format!("{what}, {s}% similar")),
            None => badges.push(what.to_owned()),
        }
    }
    if f.binary {
        badges.push("binary".to_owned());
    }
    if let Some((a, b)) = &f.mode_change {
        badges.push(format!("mode {a} → {b}"));
    }
    let (adds, dels) = f
        .hunks
        .iter()
        .flat_map(|h| &h.lines)
        .fold((0, 0), |(a, d), l| match l.kind {
            LineKind::Add => (a + 1, d),
            LineKind::Del => (a, d + 1),
            LineKind::Context | LineKind::NoNewline => (a, d),
        });
    if adds + dels > 0 {
        spans.push(Span::raw("  "));
        spans.push(Span::styled(format!("+{adds}"), theme.diff_add));
        spans.push(Span::raw(" "));
        spans.push(Span::styled(format!("-{dels}"), theme.diff_del));
    }
    if !badges.is_empty() {
        spans.push(Span::styled(
            format!("  ({})", badges.join(", ")),
            theme.hint,
        ));
    }
    out.push(Line::from(spans));
    for h in &f.headers {
        out.push(super::text::plain_line(h, theme.dim, theme));
    }
    if f.hunks.is_empty() && !f.binary && f.mode_change.is_none() && !f.renamed && !f.copied {
        out.push(Line::from(Span::styled("  (no changes shown)", theme.dim)));
    } else if f.binary {
        out.push(Line::from(Span::styled(
            "  binary content not shown",
            theme.dim,
        )));
    }
}

impl Painter<'_, '_> {
    fn hunk(
        &self,
        out: &mut Out,
        h: &Hunk,
        syntax: Option<&'static syntect::parsing::SyntaxReference>,
    ) {
        let theme = self.theme;
        let mut head = vec![Span::styled(
            format!(
                "@@ -{},{} +{},{} @@",
                h.old_start, h.old_lines, h.new_start, h.new_lines
            ),
            theme.diff_hunk,
        )];
        if !h.section.is_empty() {
            head.push(Span::raw(" "));
            head.extend(super::text::plain_spans(&h.section, theme.hint, theme));
        }
        out.push(Line::from(head));

        // Syntax colours: the new side (context + additions) and the old side (context +
        // deletions) are each highlighted as one unit, so the parser state carries across lines.
        // Rows past what `out` can keep are only counted: the work (emphasis, syntax, spans)
        // stays bounded by `Limits::max_lines` even for one huge hunk.
        // (Side by side, a paired `-`/`+` takes one line for two rows.)
        let room = if self.side {
            out.room().saturating_mul(2)
        } else {
            out.room()
        };
        let keep = h.lines.len().min(room);
        out.skip(h.lines.len() - keep);
        let shown = &h.lines[..keep];
        let (new_syntax, old_syntax) = match syntax {
            Some(s) => (
                side_syntax(shown, LineKind::Add, s, theme),
                if shown.iter().any(|l| l.kind == LineKind::Del) {
                    side_syntax(shown, LineKind::Del, s, theme)
                } else {
                    Vec::new()
                },
            ),
            None => (Vec::new(), Vec::new()),
        };
        let mut rows: Vec<Row<'_>> = Vec::with_capacity(keep);
        let (mut o, mut n) = (h.old_start, h.new_start);
        for (i, l) in h.lines.iter().enumerate().take(keep) {
            let (old, new) = match l.kind {
                LineKind::Context => {
                    o += 1;
                    n += 1;
                    (Some(o - 1), Some(n - 1))
                }
                LineKind::Del => {
                    o += 1;
                    (Some(o - 1), None)
                }
                LineKind::Add => {
                    n += 1;
                    (None, Some(n - 1))
                }
                LineKind::NoNewline => (None, None),
            };
            rows.push(Row {
                kind: l.kind,
                old,
                new,
                text: &l.text,
                emph: Vec::new(),
                syntax: match l.kind {
                    LineKind::Del => old_syntax.get(i).cloned().flatten(),
                    LineKind::Context | LineKind::Add | LineKind::NoNewline => {
                        new_syntax.get(i).cloned().flatten()
                    }
                },
            });
        }
        // Pair runs of deletions with the additions right after them.
        let mut i = 0;
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        while i < rows.len() {
            if rows[i].kind != LineKind::Del {
                i += 1;
                continue;
            }
            let del_start = i;
            while i < rows.len() && matches!(rows[i].kind, LineKind::Del | LineKind::NoNewline) {
                i += 1;
            }
            let add_start = i;
            while i < rows.len() && matches!(rows[i].kind, LineKind::Add | LineKind::NoNewline) {
                i += 1;
            }
            let dels: Vec<usize> = (del_start..add_start)
                .filter(|&k| rows[k].kind == LineKind::Del)
                .collect();
            let adds: Vec<usize> = (add_start..i)
                .filter(|&k| rows[k].kind == LineKind::Add)
                .collect();
            for (d, a) in dels.iter().zip(adds.iter()) {
                if let Some((eo, en)) = word_emphasis(
                    rows[*d].text.trim_end_matches('\r'),
                    rows[*a].text.trim_end_matches('\r'),
                ) {
                    rows[*d].emph = eo;
                    rows[*a].emph = en;
                }
                pairs.push((*d, *a));
            }
        }
        if self.side {
            self.side_by_side(out, &rows, &pairs);
        } else {
            for r in &rows {
                if out.full() {
                    out.skip(1);
                    continue;
                }
                out.extend(self.unified_rows(r));
            }
        }
    }

    fn num(&self, n: Option<u64>) -> String {
        match n {
            Some(n) => format!("{n:>w$}", w = self.w),
            None => " ".repeat(self.w),
        }
    }

    /// Sign and content spans of one row.
    fn content(&self, r: &Row<'_>) -> Vec<Span<'static>> {
        let theme = self.theme;
        let (sign, base, emph) = match r.kind {
            LineKind::Add => ("+", theme.diff_add, theme.diff_add_emph),
            LineKind::Del => ("-", theme.diff_del, theme.diff_del_emph),
            LineKind::Context => (" ", theme.text, theme.text),
            LineKind::NoNewline => {
                return vec![Span::styled("⏎ no newline at end of file", theme.dim)];
            }
        };
        let mut spans = vec![Span::styled(sign, base)];
        let (text, cr) = match r.text.strip_suffix('\r') {
            Some(t) => (t, true),
            None => (r.text, false),
        };
        let line_bg = match r.kind {
            LineKind::Add => Some(theme.diff_add_line),
            LineKind::Del => Some(theme.diff_del_line),
            LineKind::Context | LineKind::NoNewline => None,
        };
        // Emphasis is a stronger tint of the line's own background over the text's colours
        // (syntax colours kept inside changed words, as delta draws them).
        let base = line_bg.map_or(base, |bg| base.patch(bg));
        match (&r.syntax, line_bg) {
            (Some(s), None) => spans.extend(s.iter().cloned()),
            (Some(s), Some(bg)) => match syntax_with_emphasis(s, text, bg, &r.emph, emph) {
                Some(v) => spans.extend(v),
                None => spans.extend(emphasised(text, base, &r.emph, emph, theme)),
            },
            (None, _) => spans.extend(emphasised(text, base, &r.emph, emph, theme)),
        }
        if cr {
            spans.push(Span::styled("␍", theme.dim));
        }
        spans
    }

    /// One unified row; when the context wraps and the row is wider than the pane, its code
    /// continues on rows that start after the gutter (aligned with the code, delta style).
    fn unified_rows(&self, r: &Row<'_>) -> Vec<Line<'static>> {
        let theme = self.theme;
        let gutter = format!("{} {} │", self.num(r.old), self.num(r.new));
        let gutter_w = gutter.chars().count();
        let mut content = self.content(r);
        let width = usize::from(self.cx.width);
        let total = gutter_w + super::wrap::line_width(&Line::from(content.clone()));
        // Below 8 columns of code the generic wrapper does better.
        let tint = self.tint(r.kind);
        if !self.cx.wrap || total <= width || width < gutter_w + 1 + 8 {
            let mut spans = vec![Span::styled(gutter, theme.diff_gutter)];
            spans.extend(content);
            return vec![Line::from(spans).style(tint)];
        }
        let sign = content.remove(0);
        let avail = u16::try_from(width - gutter_w - 1).unwrap_or(u16::MAX);
        let pieces = super::wrap::wrap_line(&Line::from(content), avail);
        let blank = format!("{}│", " ".repeat(gutter_w - 1));
        pieces
            .into_iter()
            .enumerate()
            .map(|(k, piece)| {
                let mut spans = if k == 0 {
                    vec![
                        Span::styled(gutter.clone(), theme.diff_gutter),
                        sign.clone(),
                    ]
                } else {
                    vec![
                        Span::styled(blank.clone(), theme.diff_gutter),
                        Span::styled(" ", sign.style),
                    ]
                };
                spans.extend(piece.spans);
                Line::from(spans).style(tint)
            })
            .collect()
    }

    /// The background an added / removed row is tinted with across the pane (the line's
    /// style; the gutter keeps the terminal's background).
    fn tint(&self, kind: LineKind) -> Style {
        match kind {
            LineKind::Add => self.theme.diff_add_line,
            LineKind::Del => self.theme.diff_del_line,
            LineKind::Context | LineKind::NoNewline => Style::new(),
        }
    }

    /// Two columns: old rows left, new rows right; paired `-`/`+` rows share a line.
    fn side_by_side(&self, out: &mut Out, rows: &[Row<'_>], pairs: &[(usize, usize)]) {
        let theme = self.theme;
        let half = (usize::from(self.cx.width).saturating_sub(1)) / 2;
        let cell = |r: Option<&Row<'_>>, num: Option<u64>, pad: bool| -> Vec<Span<'static>> {
            let mut spans = vec![Span::styled(
                format!("{} │", self.num(num)),
                theme.diff_gutter,
            )];
            if let Some(r) = r {
                spans.extend(self.content(r));
            }
            fit(spans, half, pad)
        };
        let paired_add = |k: usize| pairs.iter().any(|&(_, a)| a == k);
        let mut k = 0;
        while k < rows.len() {
            if out.full() {
                out.skip(1);
                k += 1;
                continue;
            }
            let r = &rows[k];
            // A `\ No newline` marker belongs to the side of the row before it.
            let prev = k.checked_sub(1).map(|p| rows[p].kind);
            let (left, right) = match r.kind {
                LineKind::NoNewline if prev == Some(LineKind::Del) => {
                    (cell(Some(r), None, true), cell(None, None, false))
                }
                LineKind::NoNewline if prev == Some(LineKind::Add) => {
                    (cell(None, None, true), cell(Some(r), None, false))
                }
                LineKind::Context | LineKind::NoNewline => {
                    (cell(Some(r), r.old, true), cell(Some(r), r.new, false))
                }
                LineKind::Del => match pairs.iter().find(|&&(d, _)| d == k) {
                    Some(&(_, a)) => (
                        cell(Some(r), r.old, true),
                        cell(Some(&rows[a]), rows[a].new, false),
                    ),
                    None => (cell(Some(r), r.old, true), cell(None, None, false)),
                },
                LineKind::Add if paired_add(k) => {
                    k += 1;
                    continue;
                }
                LineKind::Add => (cell(None, None, true), cell(Some(r), r.new, false)),
            };
            let mut spans = left;
            spans.push(Span::styled("┃", theme.border));
            spans.extend(right);
            out.push(Line::from(spans));
            k += 1;
        }
    }
}

/// Syntax colours of one hunk side, per hunk line: context lines and lines of kind `changed`
/// (`Add` for the new side, `Del` for the old) get spans; the others `None`.
fn side_syntax(
    lines: &[HunkLine],
    changed: LineKind,
    syntax: &syntect::parsing::SyntaxReference,
    theme: &Theme,
) -> Vec<Option<Vec<Span<'static>>>> {
    let on_side = |k: LineKind| k == LineKind::Context || k == changed;
    let side: Vec<&str> = lines
        .iter()
        .filter(|l| on_side(l.kind))
        .map(|l| l.text.trim_end_matches('\r'))
        .collect();
    let Some(hl) = super::highlight::highlight_block(&side.join("\n"), syntax, theme) else {
        return Vec::new();
    };
    let mut it = hl.into_iter();
    lines
        .iter()
        .map(|l| if on_side(l.kind) { it.next() } else { None })
        .collect()
}

/// Syntax spans of an added / removed line on the line background `bg`, with the emphasised
/// byte ranges of `text` in `emph_style` instead. `None` when there is emphasis and the spans do
/// not spell `text` byte for byte (tabs expanded, control characters made visible): the caller
/// then draws the line without syntax colours.
fn syntax_with_emphasis(
    syntax: &[Span<'static>],
    text: &str,
    bg: Style,
    emph: &[Range<usize>],
    emph_style: Style,
) -> Option<Vec<Span<'static>>> {
    if emph.is_empty() {
        return Some(
            syntax
                .iter()
                .map(|s| Span::styled(s.content.clone(), s.style.patch(bg)))
                .collect(),
        );
    }
    let spelled: usize = syntax.iter().map(|s| s.content.len()).sum();
    if spelled != text.len() || text.contains(|c: char| c.is_control()) {
        return None;
    }
    let in_emph = |at: usize| emph.iter().any(|r| r.contains(&at));
    let mut out: Vec<Span<'static>> = Vec::with_capacity(syntax.len() + 2 * emph.len());
    let mut at = 0;
    for s in syntax {
        let piece = s.content.as_ref();
        let styled = s.style.patch(bg);
        // Split the piece where emphasis starts or ends.
        let mut start = 0;
        while start < piece.len() {
            let e = in_emph(at + start);
            let mut end = start;
            for (i, _) in piece[start..].char_indices() {
                if in_emph(at + start + i) != e {
                    break;
                }
                end = start + i;
            }
            end += piece[end..].chars().next().map_or(0, char::len_utf8);
            let chunk = piece[start..end].to_owned();
            let st = if e { styled.patch(emph_style) } else { styled };
            out.push(Span::styled(chunk, st));
            start = end;
        }
        at += piece.len();
    }
    Some(out)
}

/// Text with emphasis ranges, sanitised.
fn emphasised(
    text: &str,
    base: Style,
    emph: &[Range<usize>],
    emph_style: Style,
    theme: &Theme,
) -> Vec<Span<'static>> {
    if emph.is_empty() {
        return super::text::plain_spans(text, base, theme);
    }
    let mut spans = Vec::new();
    let mut at = 0;
    for r in emph {
        let (s, e) = (r.start.min(text.len()), r.end.min(text.len()));
        if s < at || !text.is_char_boundary(s) || !text.is_char_boundary(e) {
            continue;
        }
        if at < s {
            spans.extend(super::text::plain_spans(&text[at..s], base, theme));
        }
        if s < e {
            spans.extend(super::text::plain_spans(
                &text[s..e],
                base.patch(emph_style),
                theme,
            ));
        }
        at = e;
    }
    if at < text.len() {
        spans.extend(super::text::plain_spans(&text[at..], base, theme));
    }
    spans
}

/// Cuts spans to at most `width` columns (a cut line ends in `…`), padding to exactly `width`
/// when `pad`.
fn fit(spans: Vec<Span<'static>>, width: usize, pad: bool) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut col = 0;
    let total: usize = spans
        .iter()
        .map(|s| unicode_width::UnicodeWidthStr::width(s.content.as_ref()))
        .sum();
    let limit = if total > width {
        width.saturating_sub(1)
    } else {
        width
    };
    for s in spans {
        if col >= limit {
            break;
        }
        let mut text = String::new();
        for c in s.content.chars() {
            let cw = c.width().unwrap_or(0);
            if col + cw > limit {
                col = limit;
                break;
            }
            text.push(c);
            col += cw;
        }
        out.push(Span::styled(text, s.style));
    }
    if total > width {
        out.push(Span::raw("…"));
        col += 1;
    }
    if pad && col < width {
        out.push(Span::raw(" ".repeat(width - col)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::OutputType;
    use crate::render::{lines_to_string, render_output};
    use serde_json::json;

    fn cx(t: &Theme) -> RenderCtx<'_> {
        let mut c = RenderCtx::new(80, t);
        c.highlight = false;
        c
    }

    #[test]
    fn old_new_strings_with_emphasis() {
        let t = Theme::dark();
        let v = json!({"file_path": "a.rs", "old_string": "let x = 1;\nkeep\n", "new_string": "let x = 2;\nkeep\n"});
        let r = render_output(&OutputType::Diff, &v, "Edit", &Value::Null, &cx(&t));
        assert_eq!(
            lines_to_string(&r.lines),
            "▌a.rs  +1 -1\n@@ -1,2 +1,2 @@\n1   │-let x = 1;\n  1 │+let x = 2;\n2 2 │ keep\n"
        );
        let add = &r.lines[3];
        assert_eq!(add.spans[1].style, t.diff_add);
        let emph: Vec<&str> = add
            .spans
            .iter()
            .filter(|s| s.style.bg == t.diff_add_emph.bg && s.style.fg == t.diff_add.fg)
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(emph, ["2"]);
    }

    #[test]
    fn sixteen_colours_use_no_rgb_and_bold_underlined_words() {
        let t = Theme::ansi16();
        let v = json!({"file_path": "a.txt", "old_string": "let x = 1;\n", "new_string": "let x = 2;\n"});
        let mut c = cx(&t);
        c.highlight = false;
        let r = render_output(&OutputType::Diff, &v, "Edit", &Value::Null, &c);
        for l in &r.lines {
            assert!(!matches!(l.style.bg, Some(ratatui::style::Color::Rgb(..))));
            for s in &l.spans {
                assert!(
                    !matches!(s.style.bg, Some(ratatui::style::Color::Rgb(..))),
                    "{s:?}"
                );
            }
        }
        let add = &r.lines[3];
        let emph: Vec<&str> = add
            .spans
            .iter()
            .filter(|s| {
                s.style
                    .add_modifier
                    .contains(ratatui::style::Modifier::UNDERLINED)
            })
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(emph, ["2"]);
        assert_eq!(add.spans.last().map(|s| s.style.fg), Some(t.diff_add.fg));
    }

    #[test]
    fn structured_patch_preferred_and_original_offset() {
        let t = Theme::dark();
        let v = json!({"filePath": "f", "oldString": "b", "newString": "c",
            "structuredPatch": [{"oldStart": 7, "oldLines": 1, "newStart": 7, "newLines": 1, "lines": ["-b", "+c"]}]});
        let s = lines_to_string(
            &render_output(&OutputType::Diff, &v, "Edit", &Value::Null, &cx(&t)).lines,
        );
        assert!(s.contains("@@ -7,1 +7,1 @@\n7   │-b\n  7 │+c\n"), "{s}");
        let v =
            json!({"filePath": "f", "oldString": "b", "newString": "c", "originalFile": "a\nb\n"});
        let s = lines_to_string(
            &render_output(&OutputType::Diff, &v, "Edit", &Value::Null, &cx(&t)).lines,
        );
        assert!(s.contains("2   │-b\n  2 │+c\n"), "{s}");
    }

    #[test]
    fn write_create_is_all_added() {
        let t = Theme::dark();
        let v = json!({"type": "create", "filePath": "n.txt", "content": "a\nb"});
        let s = lines_to_string(
            &render_output(&OutputType::Diff, &v, "Write", &Value::Null, &cx(&t)).lines,
        );
        assert_eq!(
            s,
            "▌n.txt  +2 -0  (new file)\n@@ -0,0 +1,2 @@\n  1 │+a\n  2 │+b\n    │⏎ no newline at end of file\n"
        );
    }

    #[test]
    #[allow(clippy::many_single_char_names)]
    fn crlf_shown_and_side_by_side() {
        let t = Theme::dark();
        let d = "--- a\n+++ b\n@@ -1,2 +1,2 @@\n-old line\r\n+new line\r\n same\n";
        let mut c = cx(&t);
        let s = lines_to_string(
            &render_output(&OutputType::Diff, &json!(d), "x", &Value::Null, &c).lines,
        );
        assert!(s.contains("1   │-old line␍\n"), "{s}");
        c.width = 140;
        c.side_by_side = true;
        let r = render_output(&OutputType::Diff, &json!(d), "x", &Value::Null, &c);
        let rows = lines_to_string(&r.lines);
        let row = rows.lines().nth(2).unwrap();
        assert!(row.starts_with("1 │-old line␍"), "{row}");
        assert!(row.contains("┃1 │+new line␍"), "{row}");
        assert!(crate::render::wrap::line_width(&r.lines[2]) <= 139);
        assert_eq!(
            rows.lines().nth(2).unwrap().chars().position(|c| c == '┃'),
            rows.lines().nth(3).unwrap().chars().position(|c| c == '┃')
        );
    }
}
