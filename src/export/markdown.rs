//! GitHub-flavoured Markdown of a session (issue 26 item 5), for an issue, a pull request or a
//! model's context.
//!
//! Who calls it: [`super::write`] and [`super::write_path`], through [`Doc`], which writes the
//! rows as the session folds. Layout: `# title`, the summary line, then the feed's rows in
//! order (quiet rows left out, as the viewer hides them): a prompt is a `## Prompt N` heading, a
//! prompt's or the agent's text a block quote (each line `> `), so that whatever Markdown it
//! holds (an unclosed fence) ends with the quote, and raw HTML in it (an unclosed `<!--`,
//! `<img onerror=…>`) is escaped outside code so it shows as text; with `--depth calls` each call
//! is one top-level list item (`- **Bash** · ok · 1.2s · ` and the summary as a code span), with `--depth full` a
//! `### N. Tool · status · duration` heading with its input and output in code fences.
//!
//! Invariants: a fence is longer than every backtick run of its text (so an output holding
//! ```` ``` ```` stays inside) and its info string is a language name of `[a-z0-9+#-]`; an
//! edit's change is a ```` ```diff ```` block; an input or output longer than
//! [`super::Options::max_lines`] lines (or 64 KiB a line budget's worth) is cut with a note that
//! says how much; names, statuses and summaries are inline text with every ASCII punctuation
//! character backslash-escaped, or code spans delimited longer than their backtick runs; no
//! control character or escape sequence is written ([`super::clean`]). Parsed back with
//! pulldown-cmark, the document has one heading (full) or one top-level item (calls) per call
//! (`tests/it/export_markdown.rs`).

use std::fmt::Write as _;
use std::io::Write;

use serde_json::Value;

use super::spool::{Hole, Pieces};
use super::{
    Depth, Options, Ords, Parts, Report, Summary, clean, diff_text, input_path, language_of,
};
use crate::protocol::OutputType;
use crate::redact::Redactor;
use crate::session::{Item, MessageKind, Session};

/// Bytes of one block kept when `max_lines` is set (besides the line count).
const MAX_BLOCK_BYTES: usize = 64 * 1024;

/// Writes `session` as Markdown; returns what was redacted.
///
/// # Errors
/// Writing failed.
pub fn write(out: &mut dyn Write, session: &Session, opts: &Options) -> std::io::Result<Report> {
    let mut doc = Doc::new(opts);
    doc.step(session, true)?;
    doc.finish(session, out)
}

/// A row swept before it was final (a call still open): a hole in the body, filled when it is.
#[derive(Debug, Clone, Copy)]
struct Held {
    ord: u64,
    hole: Hole,
    /// The call's number (`### N.`) or the prompt's (`## Prompt N`).
    no: usize,
}

/// A Markdown document being written as its session folds ([`write`] for a whole session;
/// `rawpv export` of a file steps it after each folded batch and drops the rows written,
/// [`Doc::compact`]). Rows are written in feed order once final; a row not final yet is a hole
/// filled when it is. The title and the summary line, which need the whole input, are written
/// at the end before the body, which waits in a spool ([`super::spool`]).
pub struct Doc {
    opts: Options,
    red: Option<Redactor>,
    title: String,
    body: Pieces,
    /// The body not yet in the spool.
    buf: String,
    summary: Summary,
    ords: Ords,
    /// First row not swept yet.
    next: usize,
    calls: usize,
    prompts: usize,
    held: Vec<Held>,
}

impl Doc {
    /// A document titled `opts.title`, redacted unless `opts.redact` is off.
    pub fn new(opts: &Options) -> Self {
        let mut red = opts.redact.then(Redactor::new);
        let title = super::redacted(red.as_mut(), &opts.title).into_owned();
        Self {
            opts: opts.clone(),
            red,
            title,
            body: Pieces::default(),
            buf: String::new(),
            summary: Summary::default(),
            ords: Ords::default(),
            next: 0,
            calls: 0,
            prompts: 0,
            held: Vec::new(),
        }
    }

    /// Moves the body written so far to the spool (its markers counted).
    fn spill(&mut self) -> std::io::Result<()> {
        if let Some(r) = self.red.as_mut() {
            r.tally(&self.buf);
        }
        self.body.push(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    /// Writes the rows of `session` that are final (every row when `last`).
    ///
    /// # Errors
    /// Writing the spool failed.
    pub fn step(&mut self, session: &Session, last: bool) -> std::io::Result<()> {
        self.ords.extend(session);
        while self.next < session.items.len() {
            let idx = self.next;
            self.next += 1;
            let done = match &session.items[idx] {
                Item::Invocation(k) => !session.invocations[*k].status.is_open(),
                Item::Message(m) => m.done,
                Item::Event(_) => true,
            };
            if last || done {
                self.summary.add(session, idx);
            }
            if crate::session::query::is_quiet(session, idx) {
                continue;
            }
            let no = match &session.items[idx] {
                Item::Invocation(_) => {
                    self.calls += 1;
                    self.calls
                }
                Item::Message(m)
                    if m.kind == MessageKind::Prompt && m.delegation_chain.is_empty() =>
                {
                    self.prompts += 1;
                    self.prompts
                }
                _ => 0,
            };
            if last || done {
                let mut buf = std::mem::take(&mut self.buf);
                self.row(session, idx, no, &mut buf);
                self.buf = buf;
                if self.buf.len() > 1 << 20 {
                    self.spill()?;
                }
            } else {
                self.spill()?;
                let hole = self.body.hole();
                let ord = self.ords.items[idx];
                self.held.push(Held { ord, hole, no });
            }
        }
        let held = std::mem::take(&mut self.held);
        for h in held {
            let Some(idx) = self.ords.index_of(h.ord) else {
                continue;
            };
            let done = match &session.items[idx] {
                Item::Invocation(k) => !session.invocations[*k].status.is_open(),
                Item::Message(m) => m.done,
                Item::Event(_) => true,
            };
            if !(last || done) {
                self.held.push(h);
                continue;
            }
            self.summary.add(session, idx);
            let mut text = String::new();
            if !crate::session::query::is_quiet(session, idx) {
                self.row(session, idx, h.no, &mut text);
            }
            if let Some(r) = self.red.as_mut() {
                r.tally(&text);
            }
            self.body.fill(h.hole, text);
        }
        Ok(())
    }

    /// Drops the rows written from `session` once they are half the feed, as
    /// [`super::html::Page::compact`] does.
    pub fn compact(&mut self, session: &mut Session) {
        if self.next < 4096 || self.next * 2 < session.items.len() || session.ended {
            return;
        }
        let (at, map) = session.drop_written_except(self.next, |_| false);
        self.next = at;
        if let Some(map) = map {
            self.ords.remap(&map);
        }
    }

    /// Writes the document to `out`: the title and summary line of `session` (whole or ended),
    /// then the body and the redaction note.
    ///
    /// # Errors
    /// Writing failed.
    pub fn finish(mut self, session: &Session, out: &mut dyn Write) -> std::io::Result<Report> {
        self.step(session, true)?;
        self.summary.finish(session);
        if self.opts.depth == Depth::Calls {
            self.buf.push('\n');
        }
        self.spill()?;
        let mut head = String::new();
        let _ = writeln!(head, "# {}\n", inline(&self.title));
        let _ = writeln!(head, "{}\n", inline(&self.summary.line()));
        if let Some(r) = self.red.as_mut() {
            r.tally(&head);
        }
        out.write_all(head.as_bytes())?;
        self.body.copy_to(out)?;
        // The count is of the markers written (attack 10 #4).
        if let Some(r) = self.red.as_ref() {
            let _ = writeln!(out, "---\n\n*{}*", inline(&r.summary()));
        }
        Ok(Report {
            redacted: self.red,
            calls: self.calls,
        })
    }

    /// Row `idx` (not quiet) into `doc`; `no` is its call's or prompt's number.
    fn row(&mut self, session: &Session, idx: usize, no: usize, doc: &mut String) {
        let opts = &self.opts;
        let red = &mut self.red;
        match &session.items[idx] {
            Item::Message(m) => {
                let sub = !m.delegation_chain.is_empty();
                let label = match m.kind {
                    MessageKind::Prompt if !sub => {
                        let time = m.timestamp.map(|t| format!(" · {}", t.clock()));
                        let _ = writeln!(doc, "## Prompt {no}{}\n", time.unwrap_or_default());
                        None
                    }
                    MessageKind::Prompt => Some("Subagent prompt"),
                    MessageKind::AgentText if sub => Some("Subagent"),
                    MessageKind::AgentText => Some("Agent"),
                    MessageKind::Thinking => Some("Thinking"),
                };
                if m.kind == MessageKind::Thinking && opts.depth != Depth::Full {
                    return;
                }
                if sub && opts.depth == Depth::Prompts {
                    return;
                }
                if let Some(label) = label {
                    let _ = writeln!(doc, "**{label}**\n");
                }
                if m.redacted {
                    doc.push_str("> *(redacted by the producer)*\n\n");
                    return;
                }
                let text = super::redacted(red.as_mut(), &m.text);
                let (text, cut) = cut(&clean(&text), opts.max_lines_for(m.kind));
                quote(doc, &text);
                if let Some(note) = cut {
                    let _ = writeln!(doc, "*{note}*\n");
                }
            }
            Item::Invocation(k) => {
                if opts.depth == Depth::Prompts {
                    return;
                }
                let inv = &session.invocations[*k];
                let parts = Parts::of(session, inv, red.as_mut());
                let status = inv.status.word(session.ended).to_owned();
                let tool = super::redacted(red.as_mut(), &inv.tool_name);
                let mut head = vec![format!("**{}**", inline(&clean(&tool)))];
                head.push(inline(&status));
                if let Some(ms) = inv.duration_ms() {
                    head.push(crate::fmt::duration_ms(ms));
                }
                if let Some(p) = inv.parent {
                    let parent = &session.invocations[p];
                    let tool = super::redacted(red.as_mut(), &parent.tool_name);
                    head.push(format!("in {}", inline(&clean(&tool))));
                }
                let summary = clean(&parts.summary);
                if opts.depth == Depth::Calls {
                    let mut line = head.join(" · ");
                    if !summary.trim().is_empty() {
                        line.push_str(" · ");
                        line.push_str(&code_span(&summary));
                    }
                    let _ = writeln!(doc, "- {line}");
                    return;
                }
                let _ = writeln!(doc, "### {no}. {}\n", head.join(" · "));
                // A shell call's summary is its command, which the input block shows.
                let command = crate::review::edits::shell_command(&parts.input);
                if !summary.trim().is_empty() && command.as_deref() != Some(summary.as_str()) {
                    let _ = writeln!(doc, "{}\n", code_span(&summary));
                }
                write_call(doc, &inv.tool_name, &parts, opts.max_lines);
            }
            Item::Event(f) => {
                if opts.depth == Depth::Prompts {
                    return;
                }
                // Words of a redacted copy, redacted again (attack 10 #24).
                let words = match red.as_mut() {
                    Some(r) => crate::session::summary::event_line(&r.frame(f)),
                    None => crate::session::summary::event_line(f),
                };
                let words = super::redacted(red.as_mut(), &words);
                let words = clean(&words);
                let kind = clean(f.frame_type.as_str());
                if words.trim().is_empty() {
                    let _ = writeln!(doc, "*{}*\n", inline(&kind));
                } else {
                    let first = words.lines().next().unwrap_or("");
                    let _ = writeln!(doc, "*{}: {}*\n", inline(&kind), inline(first));
                }
            }
        }
    }
}

impl Options {
    /// The line limit for a message: thinking is cut like an output, prompts and replies are
    /// kept whole (they are what a reader came for).
    fn max_lines_for(&self, kind: MessageKind) -> usize {
        if kind == MessageKind::Thinking {
            self.max_lines
        } else {
            0
        }
    }
}

/// A call's input and output blocks.
fn write_call(doc: &mut String, tool: &str, parts: &Parts, max_lines: usize) {
    // Input: a shell command as `bash`, an edit as its diff, anything else as JSON.
    let (text, lang) = if let Some(cmd) = crate::review::edits::shell_command(&parts.input)
        .filter(|_| crate::review::edits::is_shell(tool) || tool == "BashOutput")
    {
        (cmd, Some("bash".to_owned()))
    } else if let Some(d) = edit_diff(tool, &parts.input, parts.cwd.as_deref()) {
        (d, Some("diff".to_owned()))
    } else if parts.input.is_null() {
        (String::new(), None)
    } else {
        (pretty(&parts.input), Some("json".to_owned()))
    };
    if !text.is_empty() {
        doc.push_str("**Input**\n\n");
        block(doc, &text, lang.as_deref(), max_lines);
    }
    let Some(output) = &parts.output else {
        doc.push_str("*(no output)*\n\n");
        return;
    };
    let (text, lang, cut_already) = output_text(tool, parts, output, max_lines);
    doc.push_str("**Output**\n\n");
    if text.is_empty() {
        doc.push_str("*(empty)*\n\n");
    } else {
        block(
            doc,
            &text,
            lang.as_deref(),
            if cut_already { 0 } else { max_lines },
        );
    }
}

/// The diff an edit's input asks for (Edit, `MultiEdit`, Write, `apply_patch`, `replace`).
fn edit_diff(tool: &str, input: &Value, cwd: Option<&str>) -> Option<String> {
    let edit = matches!(
        tool,
        "Edit" | "MultiEdit" | "replace" | "str_replace_based_edit_tool" | "apply_patch"
    );
    if !edit {
        return None;
    }
    if let Some(p) = input.get("patch").or_else(|| input.get("input"))
        && let Some(s) = p.as_str()
    {
        return Some(s.to_owned());
    }
    diff_text(input, cwd)
}

/// An output as text and its fence language: a diff as `diff`, a file's content in its
/// language, structured data as JSON, anything else as the terminal's plain rendering (stdout
/// and stderr, trees, checklists, cards) without colour. The last value says the text was
/// already cut to `max_lines` by the renderer (its `… N more lines` marker counts the whole
/// output, so the caller must not cut again, which would count only the kept lines: attack 10
/// #10); `max_lines` 0 lifts the renderer's display limits (20,000 lines, 8 MiB) too.
fn output_text(
    tool: &str,
    parts: &Parts,
    output: &Value,
    max_lines: usize,
) -> (String, Option<String>, bool) {
    let (input, output_type, cwd) = (&parts.input, &parts.output_type, parts.cwd.as_deref());
    match output_type {
        OutputType::Diff => {
            if let Some(d) = diff_text(output, cwd).or_else(|| edit_diff(tool, input, cwd)) {
                return (d, Some("diff".to_owned()), false);
            }
        }
        OutputType::FileContent => {
            if let Value::String(s) = output {
                return (s.clone(), input_path(input).and_then(language_of), false);
            }
        }
        OutputType::Structured | OutputType::Unknown(_) => {
            return match output {
                Value::String(s) => (s.clone(), None, false),
                v => (pretty(v), Some("json".to_owned()), false),
            };
        }
        OutputType::WebContent => {
            if let Value::String(s) = output {
                return (s.clone(), Some("markdown".to_owned()), false);
            }
        }
        _ => {}
    }
    let theme = crate::theme::Theme::mono();
    let mut cx = crate::render::RenderCtx::new(200, &theme);
    cx.highlight = false;
    cx.wrap = false;
    cx.expand_depth = usize::MAX;
    cx.limits = if max_lines == 0 {
        crate::render::Limits {
            max_lines: usize::MAX,
            max_bytes: usize::MAX,
        }
    } else {
        crate::render::Limits {
            max_lines,
            ..crate::render::Limits::default()
        }
    };
    let r = crate::render::render_output(output_type, output, tool, input, &cx);
    let mut s = crate::render::lines_to_string(&r.lines);
    while s.ends_with('\n') {
        s.pop();
    }
    (s, None, true)
}

fn pretty(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// A fenced code block of `text` (cleaned, cut to `max_lines`), fenced longer than any
/// backtick run inside.
pub fn block(doc: &mut String, text: &str, lang: Option<&str>, max_lines: usize) {
    let text = clean(text);
    let (text, note) = cut(&text, max_lines);
    let fence = "`".repeat(longest_run(&text, '`').max(2) + 1);
    let lang: String = lang
        .unwrap_or("")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '#' | '-'))
        .collect();
    let _ = writeln!(doc, "{fence}{lang}");
    doc.push_str(&text);
    if !text.ends_with('\n') {
        doc.push('\n');
    }
    let _ = writeln!(doc, "{fence}\n");
    if let Some(note) = note {
        let _ = writeln!(doc, "*{note}*\n");
    }
}

/// Longest run of `c` in `s`.
pub fn longest_run(s: &str, c: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for ch in s.chars() {
        if ch == c {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

/// `text` cut to `max_lines` lines and [`MAX_BLOCK_BYTES`] (0: whole), with the note that says
/// what was cut.
fn cut(text: &str, max_lines: usize) -> (String, Option<String>) {
    if max_lines == 0 {
        return (text.to_owned(), None);
    }
    let total = text.lines().count();
    let mut kept = String::new();
    let mut n = 0;
    for line in text.lines() {
        if n == max_lines || kept.len() + line.len() > MAX_BLOCK_BYTES {
            break;
        }
        kept.push_str(line);
        kept.push('\n');
        n += 1;
    }
    if n == total {
        return (text.to_owned(), None);
    }
    let rest = total - n;
    let bytes = text.len() - kept.len().min(text.len());
    (
        kept,
        Some(format!(
            "… {} cut ({} more; `--max-lines` sets the limit, 0 keeps all)",
            crate::fmt::plural(rest, "more line"),
            crate::fmt::bytes(bytes as u64)
        )),
    )
}

/// `text` as a block quote: every line after `> `, so its Markdown ends with the quote. Its
/// Markdown is kept (a reply's lists, emphasis and fences render), but no raw HTML: outside fenced
/// code, indented code and code spans, `<` and `&` are backslash-escaped (`CommonMark` 2.4), so a
/// pasted `<!--` (which would swallow the rest of the document), `<details>` or `<img
/// onerror=…>` is shown as text (attack 10 #1, #2).
fn quote(doc: &mut String, text: &str) {
    if text.trim().is_empty() {
        doc.push_str("> *(empty)*\n\n");
        return;
    }
    let mut fence: Option<(char, usize)> = None;
    let mut indented_code = false;
    let mut prev_blank = true;
    for line in text.lines() {
        let blank = line.trim().is_empty();
        let code = if let Some((c, n)) = fence {
            if closes_fence(line, c, n) {
                fence = None;
            }
            true
        } else if let Some(f) = opens_fence(line) {
            fence = Some(f);
            true
        } else {
            let indented = line.starts_with('\t') || line.starts_with("    ");
            indented_code = (indented && (indented_code || prev_blank)) || (indented_code && blank);
            indented_code
        };
        prev_blank = blank;
        if line.is_empty() {
            doc.push_str(">\n");
            continue;
        }
        doc.push_str("> ");
        if code {
            doc.push_str(line);
        } else {
            escape_html(doc, line);
        }
        doc.push('\n');
    }
    doc.push('\n');
}

/// A fence opening (`CommonMark` 4.5): up to 3 spaces, then 3 or more backticks (with no backtick
/// in the info string) or tildes; returns the fence character and length.
fn opens_fence(line: &str) -> Option<(char, usize)> {
    let rest = line.trim_start_matches(' ');
    if line.len() - rest.len() > 3 {
        return None;
    }
    let c = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = rest.chars().take_while(|x| *x == c).count();
    (n >= 3 && (c == '~' || !rest[n..].contains('`'))).then_some((c, n))
}

/// A fence closing one opened with `n` of `c`: up to 3 spaces, at least `n` of `c`, then only
/// spaces.
fn closes_fence(line: &str, c: char, n: usize) -> bool {
    let rest = line.trim_start_matches(' ');
    if line.len() - rest.len() > 3 {
        return false;
    }
    let run = rest.chars().take_while(|x| *x == c).count();
    run >= n && rest[run * c.len_utf8()..].trim().is_empty()
}

/// Appends `line` with `<` and `&` backslash-escaped outside its code spans (a run of backticks
/// closed by a run of the same length on the line; an unclosed run is literal text).
fn escape_html(doc: &mut String, line: &str) {
    let b = line.as_bytes();
    let mut i = 0;
    let mut start = 0;
    while i < b.len() {
        match b[i] {
            b'`' => {
                let run = b[i..].iter().take_while(|x| **x == b'`').count();
                let mut j = i + run;
                let mut close = None;
                while j < b.len() {
                    if b[j] == b'`' {
                        let r = b[j..].iter().take_while(|x| **x == b'`').count();
                        if r == run {
                            close = Some(j + r);
                            break;
                        }
                        j += r;
                    } else {
                        j += 1;
                    }
                }
                i = close.unwrap_or(i + run);
            }
            b'<' | b'&' => {
                doc.push_str(&line[start..i]);
                doc.push('\\');
                start = i;
                i += 1;
            }
            _ => i += 1,
        }
    }
    doc.push_str(&line[start..]);
}

/// Inline text with every ASCII punctuation character that means something inline
/// backslash-escaped (`CommonMark` 2.4: emphasis, links, images, code, HTML, entities, tables,
/// strikethrough, math), so no name or status becomes markup; newlines become spaces. Inline
/// text never starts a line, so `-`, `+`, `.` and `#` need no escape.
pub fn inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' | '\r' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '<' | '>' | '!' | '|' | '~' | '&'
            | '{' | '}' | '$' | '^' | '#' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// `s` (one line) as a code span delimited by more backticks than its longest run, padded with
/// a space when it starts or ends with a backtick or a space (`CommonMark` 6.1).
pub fn code_span(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    let ticks = "`".repeat(longest_run(&s, '`') + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') || s.starts_with(' ') || s.ends_with(' ') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{s}{pad}{ticks}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_outlast_the_backticks_inside() {
        let mut doc = String::new();
        block(&mut doc, "a\n```\nb\n`````\n", Some("rust"), 0);
        assert_eq!(doc, "``````rust\na\n```\nb\n`````\n``````\n\n");
        let mut doc = String::new();
        block(&mut doc, "x", Some("we`ird lang"), 0);
        assert_eq!(doc, "```weirdlang\nx\n```\n\n");
    }

    #[test]
    fn code_spans_and_inline_text_escape() {
        assert_eq!(code_span("ls -la"), "`ls -la`");
        assert_eq!(code_span("a `b` c"), "``a `b` c``");
        assert_eq!(code_span("`x"), "`` `x ``");
        assert_eq!(
            inline("[a](javascript:x) <b>"),
            "\\[a\\]\\(javascript:x\\) \\<b\\>"
        );
        assert_eq!(inline("cc-v2.1.json *x*"), "cc-v2.1.json \\*x\\*");
    }

    #[test]
    fn quoted_text_keeps_its_markdown_but_no_raw_html() {
        let mut doc = String::new();
        quote(
            &mut doc,
            "<!-- a template\n**bold** `<kbd>` & <img src=x onerror=y>\n```html\n<div>\n```\n\n    <pre>\nafter ``a`` <b>",
        );
        assert_eq!(
            doc,
            "> \\<!-- a template\n> **bold** `<kbd>` \\& \\<img src=x onerror=y>\n> ```html\n> <div>\n> ```\n>\n>     <pre>\n> after ``a`` \\<b>\n\n"
        );
    }

    #[test]
    fn long_text_is_cut_with_a_note() {
        let text = (0..10).fold(String::new(), |mut t, i| {
            let _ = writeln!(t, "line {i}");
            t
        });
        let (kept, note) = cut(&text, 3);
        assert_eq!(kept, "line 0\nline 1\nline 2\n");
        assert!(note.unwrap().starts_with("… 7 more lines cut"));
        assert_eq!(cut(&text, 10).1, None);
        assert_eq!(cut(&text, 0).1, None);
    }
}
