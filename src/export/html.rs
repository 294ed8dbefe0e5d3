//! The HTML page of a session (issue 26 items 2, 4 and 6): one self-contained file that works
//! offline.
//!
//! Who calls it: [`super::write`] and [`super::write_path`], through [`Page`], which writes the
//! rows as the session folds (see its doc). Layout: a header with the summary figures, the controls
//! (search, filters by tool and status, fold and side-by-side switches), the catalog and the
//! findings (each linked to its call), then the feed: one `<section class="turn">` per turn (a
//! prompt and what followed it; its `h2` button folds it), each call a `.call` element (`id="cK"`, K its index in
//! `Session::invocations`) with its time, tool, summary, status and duration, its subagent's
//! calls and messages nested inside it; agent text and prompts as Markdown (pulldown-cmark).
//!
//! A call's detail is the terminal's detail (`crate::detail::build`, every block expanded,
//! syntax colour, word emphasis, the files' line numbers; a diff also side by side), as lines of
//! styled runs, packed by chunks of calls (raw deflate, base64) into `<script
//! type="application/octet-stream">` elements after the feed, inflated, parsed and drawn by the
//! page's script only when a call is opened, so a big session's page opens at once and holds its
//! data once (the 100 MB benchmark transcript: 53 MB of detail JSON, 8 MB packed). Styles are classes of one stylesheet (`.sN`), never
//! `style` attributes.
//!
//! Safety (issue 26 item 4): every string of the session is [`super::clean`]ed (no control
//! character or escape sequence) and escaped for where it goes: HTML text and attributes by
//! [`esc`], detail JSON by [`json_str`] (`<`, `>`, `&`, U+2028/9 as `\u` escapes, so no
//! `</script>` or `<!--` can occur even unpacked) inside base64, whose alphabet has neither; Markdown's raw HTML becomes text, its links keep only
//! `http:`, `https:`, `mailto:` and `#` targets (`rel="noopener noreferrer"`), its images become
//! text. The page's script builds details with `textContent` only. The Content-Security-Policy
//! allows only the page's own style and script element (a fresh nonce per export) and `data:`
//! images; nothing is fetched from the network.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::io::Write;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

use super::spool::{Hole, Pieces, Spool};
use super::{Options, Ords, Report, Summary, clean};
use crate::detail::DetailOpts;
use crate::detail::build::{DetailSource, build_detail_lines};
use crate::redact::Redactor;
use crate::session::{Item, MessageKind, Session};
use crate::theme::Theme;

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// Largest image embedded in a page (bigger ones stay a placeholder row).
const MAX_IMAGE_BYTES: usize = 1024 * 1024;
/// Images embedded in one page, in all.
const MAX_PAGE_IMAGE_BYTES: usize = 16 * 1024 * 1024;
/// Bytes of detail JSON packed into one chunk (inflated at once when one of its calls opens).
const CHUNK_BYTES: usize = 256 * 1024;
/// Width the details are laid out at (the page scrolls or wraps wider lines).
const DETAIL_WIDTH: u16 = 120;
/// Rows of a turn in one `.blk` block: the page lays out and paints only the blocks on screen
/// (`content-visibility: auto`), so a turn of 100,000 calls opens in 2.8 s instead of 47 s and
/// scrolls at 60 frames a second (attack 10 #26; BENCHMARKS "Export").
const BLOCK_ROWS: usize = 200;
/// Characters of a prompt shown in its turn's summary line.
const PROMPT_LINE_CHARS: usize = 160;

/// `s` escaped for HTML text and double- or single-quoted attributes.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    esc_into(&mut out, s);
    out
}

fn esc_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

/// `s` as a JSON string safe inside a `<script>` element: `"`, `\` and control characters
/// escaped as JSON wants, and `<`, `>`, `&`, U+2028, U+2029 as `\u` escapes.
pub fn json_str(out: &mut String, s: &str) {
    out.push('"');
    // Most runs need no escape: one pass over the bytes, then a copy (U+2028/9 start with 0xE2).
    let plain =
        |b: &u8| b >= &0x20 && !matches!(b, b'"' | b'\\' | b'<' | b'>' | b'&' | 0x7f | 0xe2);
    if s.as_bytes().iter().all(plain) {
        out.push_str(s);
        out.push('"');
        return;
    }
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The classes of the styles used on the page: one per distinct (fg, bg, modifiers).
#[derive(Debug, Default)]
struct Styles {
    index: HashMap<StyleKey, usize, std::hash::BuildHasherDefault<StyleHasher>>,
    list: Vec<(Option<Color>, Option<Color>, Modifier)>,
}

type StyleKey = (Option<Color>, Option<Color>, u16);

/// A multiply-and-rotate hasher for [`Styles`]' keys: a few small integers each, looked up
/// once per styled run of every detail (`SipHash` was 2 % of an export's CPU). Keys come from
/// our renderers' styles, so there is nothing to flood.
#[derive(Debug, Default, Clone, Copy)]
struct StyleHasher(u64);

impl std::hash::Hasher for StyleHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }
    fn write_u16(&mut self, n: u16) {
        self.write_u64(u64::from(n));
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl Styles {
    /// Class number of `style` (0: no style).
    fn of(&mut self, style: Style) -> usize {
        let m = style.add_modifier - style.sub_modifier;
        if style.fg.is_none() && style.bg.is_none() && m.is_empty() {
            return 0;
        }
        let key = (style.fg, style.bg, m.bits());
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        self.list.push((style.fg, style.bg, m));
        let i = self.list.len();
        self.index.insert(key, i);
        i
    }

    fn css(&self) -> String {
        let mut out = String::new();
        for (i, (fg, bg, m)) in self.list.iter().enumerate() {
            let (mut fg, mut bg) = (fg.and_then(css_color), bg.and_then(css_color));
            if m.contains(Modifier::REVERSED) {
                let f = fg.take().unwrap_or_else(|| "var(--code-fg)".into());
                let b = bg.take().unwrap_or_else(|| "var(--code-bg)".into());
                fg = Some(b);
                bg = Some(f);
            }
            let _ = write!(out, ".s{}{{", i + 1);
            if let Some(c) = fg {
                let _ = write!(out, "color:{c};");
            }
            if let Some(c) = bg {
                let _ = write!(out, "background:{c};");
            }
            if m.contains(Modifier::BOLD) {
                out.push_str("font-weight:700;");
            }
            if m.contains(Modifier::ITALIC) {
                out.push_str("font-style:italic;");
            }
            if m.contains(Modifier::DIM) {
                out.push_str("opacity:.65;");
            }
            match (
                m.contains(Modifier::UNDERLINED),
                m.contains(Modifier::CROSSED_OUT),
            ) {
                (true, true) => out.push_str("text-decoration:underline line-through;"),
                (true, false) => out.push_str("text-decoration:underline;"),
                (false, true) => out.push_str("text-decoration:line-through;"),
                (false, false) => {}
            }
            out.push_str("}\n");
        }
        out
    }
}

/// A terminal colour as CSS: the 16 ANSI colours are the page's palette variables (so they
/// suit its background), 256-colour indices the xterm palette, RGB as is.
fn css_color(c: Color) -> Option<String> {
    let ansi = |n: u8| Some(format!("var(--c{n})"));
    match c {
        Color::Reset => None,
        Color::Black => ansi(0),
        Color::Red => ansi(1),
        Color::Green => ansi(2),
        Color::Yellow => ansi(3),
        Color::Blue => ansi(4),
        Color::Magenta => ansi(5),
        Color::Cyan => ansi(6),
        Color::Gray => ansi(7),
        Color::DarkGray => ansi(8),
        Color::LightRed => ansi(9),
        Color::LightGreen => ansi(10),
        Color::LightYellow => ansi(11),
        Color::LightBlue => ansi(12),
        Color::LightMagenta => ansi(13),
        Color::LightCyan => ansi(14),
        Color::White => ansi(15),
        Color::Indexed(n) if n < 16 => ansi(n),
        Color::Indexed(n) if n < 232 => {
            let n = n - 16;
            let step = |v: u8| if v == 0 { 0 } else { 55 + v * 40 };
            Some(format!(
                "#{:02x}{:02x}{:02x}",
                step(n / 36),
                step((n / 6) % 6),
                step(n % 6)
            ))
        }
        Color::Indexed(n) => {
            let v = 8 + (n - 232) * 10;
            Some(format!("#{v:02x}{v:02x}{v:02x}"))
        }
        Color::Rgb(r, g, b) => Some(format!("#{r:02x}{g:02x}{b:02x}")),
    }
}

/// `lines` as the page's JSON: `[[lineClass, class, "text", class, "text", …], …]`.
fn lines_json(out: &mut String, lines: &[Line<'_>], styles: &mut Styles) {
    out.push('[');
    for (i, l) in lines.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "[{}", styles.of(l.style));
        for sp in &l.spans {
            if sp.content.is_empty() {
                continue;
            }
            let _ = write!(out, ",{},", styles.of(sp.style));
            json_str(out, &clean(&sp.content));
        }
        out.push(']');
    }
    out.push(']');
}

/// A random nonce for the page's CSP (128 bits from the std hasher's random keys).
fn nonce() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut s = String::new();
    for i in 0..2u8 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u8(i);
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        let _ = write!(s, "{:016x}", h.finish());
    }
    s
}

/// Redacts what a detail shows of an item: a call's input, output, stream, summary, hooks and
/// findings; a message's text; an event's payload. Also `print --detail --redact`.
pub fn redact_source(src: &mut DetailSource, r: &mut Redactor) {
    match src {
        DetailSource::Invocation {
            inv,
            findings,
            hooks,
            ..
        } => {
            r.value(&mut inv.input);
            if let Some(res) = inv.result.as_mut() {
                if let Some(o) = res.output.as_mut() {
                    r.value(o);
                }
                for v in res.extra.values_mut() {
                    r.value(v);
                }
            }
            let summary = r.text(&inv.summary).into_owned();
            inv.summary = summary.into();
            if !inv.stream.is_empty() {
                let mut fresh = crate::session::ChunkBuffer::default();
                for c in inv.stream.chunks() {
                    let mut c = c.clone();
                    r.string(&mut c.text);
                    fresh.insert(c);
                }
                inv.stream = fresh;
            }
            for f in findings {
                r.string(&mut f.message);
            }
            for h in hooks {
                r.string(&mut h.output);
                r.string(&mut h.stderr);
                if let Some(c) = h.command.as_mut() {
                    r.string(c);
                }
            }
        }
        DetailSource::Message(m) => r.string(&mut m.text),
        DetailSource::Event(f) => {
            let mut p = f.payload_json();
            r.value(&mut p);
            if let serde_json::Value::Object(m) = p {
                **f = crate::protocol::Frame::new(
                    f.frame_type.clone(),
                    crate::protocol::Body::Generic(m),
                );
            }
        }
    }
}

/// Markdown (agent text, prompts) as safe HTML: raw HTML as text, links only to `http:`,
/// `https:`, `mailto:` or `#…` targets and with `rel="noopener noreferrer"`, images as text.
pub fn markdown_html(text: &str) -> String {
    use pulldown_cmark::{CowStr, Event, Options as MdOptions, Parser, Tag, TagEnd};
    let text = clean(text);
    let parser = Parser::new_ext(
        &text,
        MdOptions::ENABLE_TABLES | MdOptions::ENABLE_STRIKETHROUGH | MdOptions::ENABLE_TASKLISTS,
    );
    let mut links: Vec<bool> = Vec::new();
    let mut images: Vec<String> = Vec::new();
    let events = parser.map(|ev| match ev {
        Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
        Event::Start(Tag::Link { dest_url, .. }) => {
            let url = dest_url.trim();
            let lower = url.to_ascii_lowercase();
            let safe = lower.starts_with("http://")
                || lower.starts_with("https://")
                || lower.starts_with("mailto:")
                || lower.starts_with('#');
            links.push(safe);
            if safe {
                Event::Html(CowStr::from(format!(
                    "<a href=\"{}\" rel=\"noopener noreferrer\" target=\"_blank\">",
                    esc(url)
                )))
            } else {
                Event::Html(CowStr::from("<span class=\"badlink\">"))
            }
        }
        Event::End(TagEnd::Link) => {
            if links.pop().unwrap_or(false) {
                Event::Html(CowStr::from("</a>"))
            } else {
                Event::Html(CowStr::from("</span>"))
            }
        }
        Event::Start(Tag::Image { dest_url, .. }) => {
            images.push(dest_url.to_string());
            Event::Text(CowStr::from("[image: "))
        }
        Event::End(TagEnd::Image) => {
            let url = images.pop().unwrap_or_default();
            Event::Text(CowStr::from(format!("] ({url})")))
        }
        other => other,
    });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

/// A turn of the feed being written: its header is a hole, filled with the counts once every
/// row of the turn is final and the next turn has begun.
#[derive(Debug)]
struct TurnState {
    hole: Hole,
    /// Top-level rows written or held so far.
    rows: usize,
    calls: usize,
    errors: usize,
    start: Option<i64>,
    end: Option<i64>,
    /// Rows of the turn not counted yet (not final).
    pending: usize,
    /// `Prompt N · first line` when the first row is a prompt.
    prompt: Option<String>,
    closed: bool,
}

/// A top-level row not final yet (a call still open, or one whose subagent's calls are): a hole
/// in the feed, filled once it is.
#[derive(Debug, Clone, Copy)]
struct Held {
    ord: u64,
    hole: Hole,
}

struct Writer {
    red: Option<Redactor>,
    styles: Styles,
    theme: Theme,
    /// The packed chunks of the details ([`Writer::flush_chunk`]) not yet moved to the page's
    /// data spool.
    data: String,
    /// Details not packed yet: `"K":{…},` entries of the chunk being filled.
    pending: String,
    /// Number of the chunk being filled.
    chunk_no: usize,
    /// Bytes of images embedded so far.
    image_bytes: usize,
    calls: usize,
    tools: std::collections::BTreeSet<String>,
    statuses: std::collections::BTreeSet<String>,
}

/// A page being written as its session folds ([`write`] for a whole session; `rawpv export` of
/// a file steps it after each folded batch and drops the rows written, [`Page::compact`]).
///
/// Rows are written in feed order as soon as they are final (a call with its result, and its
/// subagent's calls nested in it); a row not final yet is a hole filled when it is, so rows after
/// a call that never ends are still written and dropped. The header figures, the style classes,
/// the filters' lists, the catalog and the findings are written at the end ([`Page::finish`]),
/// before the feed and the details, which wait in spools ([`super::spool`]).
pub struct Page {
    w: Writer,
    title: String,
    feed: Pieces,
    data: Spool,
    summary: Summary,
    ords: Ords,
    /// First row not swept yet; rows before it are written, held or counted.
    next: usize,
    /// Rows looked at for nesting (`inner`, `nested`).
    scanned: usize,
    /// Rows written inside another one (a subagent's calls and messages in their Task), by ord.
    inner: HashSet<u64>,
    /// The rows nested in a row not written yet, by the row's ord.
    nested: HashMap<u64, Vec<u64>>,
    /// Rows written that are still in the session.
    written: HashSet<u64>,
    held: Vec<Held>,
    /// Rows swept before they were final: (ord, turn), counted once they are.
    uncounted: Vec<(u64, usize)>,
    turns: Vec<TurnState>,
    /// Turns whose header is not filled yet.
    unfilled: Vec<usize>,
    prompt_no: usize,
    /// Calls with findings: (session, id) → ord, for the findings' links once they are dropped.
    targets: HashMap<(u32, Box<str>), u64>,
}

fn is_final(session: &Session, idx: usize) -> bool {
    match &session.items[idx] {
        Item::Invocation(k) => !session.invocations[*k].status.is_open(),
        // A closed message is never continued (deltas go to open ones).
        Item::Message(m) => m.done,
        Item::Event(_) => true,
    }
}

impl Page {
    /// A page titled `opts.title`, redacted unless `opts.redact` is off.
    pub fn new(opts: &Options) -> Self {
        let mut w = Writer {
            red: opts.redact.then(Redactor::new),
            styles: Styles::default(),
            theme: page_theme(),
            data: String::new(),
            pending: String::new(),
            chunk_no: 0,
            image_bytes: 0,
            calls: 0,
            tools: std::collections::BTreeSet::new(),
            statuses: std::collections::BTreeSet::new(),
        };
        let title = w.text(&opts.title);
        Self {
            w,
            title,
            feed: Pieces::default(),
            data: Spool::default(),
            summary: Summary::default(),
            ords: Ords::default(),
            next: 0,
            scanned: 0,
            inner: HashSet::new(),
            nested: HashMap::new(),
            written: HashSet::new(),
            held: Vec::new(),
            uncounted: Vec::new(),
            turns: Vec::new(),
            unfilled: Vec::new(),
            prompt_no: 0,
            targets: HashMap::new(),
        }
    }

    /// Appends `s` to the feed (its markers counted).
    fn emit(&mut self, s: &str) -> std::io::Result<()> {
        if let Some(r) = self.w.red.as_mut() {
            r.tally(s);
        }
        self.feed.push(s)
    }

    /// Writes the rows of `session` that are final (every row when `last`: the session is
    /// whole, or has ended).
    ///
    /// # Errors
    /// Writing a spool failed.
    pub fn step(&mut self, session: &Session, last: bool) -> std::io::Result<()> {
        self.ords.extend(session);
        self.scan(session);
        while self.next < session.items.len() {
            let idx = self.next;
            let ord = self.ords.items[idx];
            if crate::session::query::is_turn_start(session, idx) || self.turns.is_empty() {
                self.close_turn()?;
                let hole = self.feed.hole();
                self.turns.push(TurnState {
                    hole,
                    rows: 0,
                    calls: 0,
                    errors: 0,
                    start: None,
                    end: None,
                    pending: 0,
                    prompt: None,
                    closed: false,
                });
                self.unfilled.push(self.turns.len() - 1);
            }
            let t = self.turns.len() - 1;
            if last || is_final(session, idx) {
                self.count(session, idx, t);
            } else {
                self.uncounted.push((ord, t));
                self.turns[t].pending += 1;
            }
            let quiet = crate::session::query::is_quiet(session, idx)
                && !matches!(session.items[idx], Item::Invocation(_));
            if !self.inner.contains(&ord) && !quiet {
                let i = self.turns[t].rows;
                self.turns[t].rows += 1;
                if i.is_multiple_of(BLOCK_ROWS) {
                    self.emit(if i == 0 {
                        "<div class=\"blk\">\n"
                    } else {
                        "</div><div class=\"blk\">\n"
                    })?;
                }
                if i == 0
                    && let Item::Message(m) = &session.items[idx]
                    && m.kind == MessageKind::Prompt
                {
                    self.prompt_no += 1;
                    let line = self.w.text(&crate::session::summary::message_line(m));
                    let line: String = line.chars().take(PROMPT_LINE_CHARS).collect();
                    self.turns[t].prompt =
                        Some(format!("Prompt {} · {}", self.prompt_no, esc(&line)));
                }
                if last || self.ready(session, idx) {
                    let mut doc = String::new();
                    self.row(session, &mut doc, idx);
                    self.emit(&doc)?;
                } else {
                    let hole = self.feed.hole();
                    self.held.push(Held { ord, hole });
                }
            }
            self.next += 1;
            self.move_data()?;
        }
        if last {
            self.close_turn()?;
        }
        self.resolve(session, last)?;
        Ok(())
    }

    /// Marks which new rows nest in a call not written yet (a subagent's, in its Task call).
    fn scan(&mut self, session: &Session) {
        for idx in self.scanned..session.items.len() {
            let parent = match &session.items[idx] {
                Item::Invocation(k) => session.invocations[*k].parent,
                Item::Message(m) => m
                    .delegation_chain
                    .last()
                    .and_then(|d| session.invocation_index(&d.invocation_id)),
                Item::Event(_) => None,
            };
            // Only into a call written after it (the page is written in order).
            if let Some(p) = parent
                && let Some(&pord) = self.ords.items.get(session.invocations[p].item)
                && session.invocations[p].item < idx
                && !self.written.contains(&pord)
            {
                let ord = self.ords.items[idx];
                self.nested.entry(pord).or_default().push(ord);
                self.inner.insert(ord);
            }
        }
        self.scanned = session.items.len();
    }

    /// Whether row `idx` and every row nested in it are final.
    fn ready(&self, session: &Session, idx: usize) -> bool {
        if !is_final(session, idx) {
            return false;
        }
        let ord = self.ords.items[idx];
        self.nested.get(&ord).is_none_or(|kids| {
            kids.iter().all(|&c| {
                self.ords
                    .index_of(c)
                    .is_none_or(|ci| self.ready(session, ci))
            })
        })
    }

    /// Counts final row `idx` into turn `t` and the header's figures.
    fn count(&mut self, session: &Session, idx: usize, t: usize) {
        self.summary.add(session, idx);
        let turn = &mut self.turns[t];
        let ts = match &session.items[idx] {
            Item::Invocation(k) => {
                let inv = &session.invocations[*k];
                turn.calls += 1;
                turn.errors += usize::from(inv.status.is_failure());
                inv.ended_at.or(inv.requested_at)
            }
            Item::Message(m) => m.timestamp,
            Item::Event(f) => f.envelope.timestamp,
        };
        if let Some(crate::protocol::Timestamp(ms)) = ts {
            turn.start = Some(turn.start.map_or(ms, |s| s.min(ms)));
            turn.end = Some(turn.end.map_or(ms, |e| e.max(ms)));
        }
    }

    /// Ends the turn being written (if any).
    fn close_turn(&mut self) -> std::io::Result<()> {
        let Some(t) = self.turns.last_mut().filter(|t| !t.closed) else {
            return Ok(());
        };
        t.closed = true;
        let rows = t.rows;
        if rows > 0 {
            self.emit("</div>")?;
        }
        self.emit("</div></section>\n")
    }

    /// Fills the holes whose rows are final now (all of them when `last`), counts the rows
    /// that are, and fills the headers of the turns that are complete.
    fn resolve(&mut self, session: &Session, last: bool) -> std::io::Result<()> {
        let waiting = std::mem::take(&mut self.held);
        for h in waiting {
            let idx = self.ords.index_of(h.ord);
            match idx {
                Some(idx) if last || self.ready(session, idx) => {
                    let mut doc = String::new();
                    self.row(session, &mut doc, idx);
                    if let Some(r) = self.w.red.as_mut() {
                        r.tally(&doc);
                    }
                    self.feed.fill(h.hole, doc);
                    self.move_data()?;
                }
                Some(_) => self.held.push(h),
                None => {}
            }
        }
        let uncounted = std::mem::take(&mut self.uncounted);
        for (ord, t) in uncounted {
            match self.ords.index_of(ord) {
                Some(idx) if last || is_final(session, idx) => {
                    self.count(session, idx, t);
                    self.turns[t].pending -= 1;
                }
                Some(_) => self.uncounted.push((ord, t)),
                None => self.turns[t].pending -= 1,
            }
        }
        let unfilled = std::mem::take(&mut self.unfilled);
        for n in unfilled {
            let t = &self.turns[n];
            if !(t.closed && t.pending == 0) {
                self.unfilled.push(n);
                continue;
            }
            let head = match &t.prompt {
                Some(p) => p.clone(),
                None if n == 0 => "Before the first prompt".to_owned(),
                None => "Branch".to_owned(),
            };
            let mut counts = vec![crate::fmt::plural(t.calls, "call")];
            if t.errors > 0 {
                counts.push(crate::fmt::plural(t.errors, "error"));
            }
            if let (Some(a), Some(b)) = (t.start, t.end) {
                counts.push(crate::fmt::duration_ms((b - a) as f64));
            }
            // A section, not a `<details>`: Chromium lays out a `<details>` holding 100,000
            // rows in time quadratic in them (attack 10 #26: 73 s to open such a page); the
            // page's script folds a turn by a class.
            let text = format!(
                "<section class=\"turn\" id=\"t{n}\"><h2 class=\"tt\"><button type=\"button\" \
                 aria-expanded=\"true\"><span class=\"th\">{head}</span> \
                 <span class=\"tc{}\">{}</span></button></h2><div class=\"tb\">\n",
                if t.errors > 0 { " bad" } else { "" },
                esc(&counts.join(" · "))
            );
            if let Some(r) = self.w.red.as_mut() {
                r.tally(&text);
            }
            let hole = t.hole;
            self.feed.fill(hole, text);
        }
        Ok(())
    }

    /// Moves the packed details to the data spool.
    fn move_data(&mut self) -> std::io::Result<()> {
        if !self.w.data.is_empty() {
            self.data.push(&self.w.data)?;
            self.w.data.clear();
        }
        Ok(())
    }

    /// Drops the rows written from `session` (`Session::drop_written_except`: finished calls
    /// keep a folded record for later frames naming them), keeping those not written yet, once
    /// they are half the feed (amortised O(1) a row).
    pub fn compact(&mut self, session: &mut Session) {
        if self.next < 4096 || self.next * 2 < session.items.len() || session.ended {
            return;
        }
        let held: HashSet<u64> = self.held.iter().map(|h| h.ord).collect();
        let unwritten = |i: usize| {
            let ord = self.ords.items[i];
            !self.written.contains(&ord) && (held.contains(&ord) || self.inner.contains(&ord))
        };
        let (at, map) = session.drop_written_except(self.next, unwritten);
        self.next = at;
        self.scanned = session.items.len();
        if let Some(map) = map {
            self.ords.remap(&map);
            let ords = &self.ords;
            self.written.retain(|o| ords.index_of(*o).is_some());
            self.inner.retain(|o| ords.index_of(*o).is_some());
            self.nested.retain(|o, _| ords.index_of(*o).is_some());
        }
    }

    /// Writes the page to `out`: the head, header, controls, catalog and findings of `session`
    /// (whole or ended: every row stepped with `last`), then the feed and the details.
    ///
    /// # Errors
    /// Writing failed.
    pub fn finish(mut self, session: &Session, out: &mut dyn Write) -> std::io::Result<Report> {
        self.step(session, true)?;
        self.summary.finish(session);
        self.w.flush_chunk();
        self.move_data()?;
        let nonce = nonce();
        let title = self.title.clone();
        let mut doc = String::with_capacity(64 * 1024);
        let _ = write!(
            doc,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
             <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
             style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}'; img-src data:; \
             base-uri 'none'; form-action 'none'\">\n\
             <meta name=\"referrer\" content=\"no-referrer\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"generator\" content=\"rawpv {}\">\n\
             <title>{} · rawpv</title>\n<style nonce=\"{nonce}\">\n{CSS}",
            env!("CARGO_PKG_VERSION"),
            esc(&title)
        );
        // The style classes are known once every detail is rendered (above).
        doc.push_str(&self.w.styles.css());
        doc.push_str("</style></head>\n<body>\n");
        write_header(&mut doc, &title, &self.summary);
        write_controls(&mut doc, &self.w.tools, &self.w.statuses);
        let shown_from = doc.len();
        write_catalog(&mut doc, session, &mut self.w);
        self.write_findings(&mut doc, session);
        let _ = writeln!(
            doc,
            "<main id=\"feed\" data-calls=\"{}\">\n<p id=\"shown\" class=\"dim\"></p>",
            self.w.calls
        );
        if let Some(r) = self.w.red.as_mut() {
            r.tally(&doc[shown_from..]);
        }
        out.write_all(doc.as_bytes())?;
        drop(doc);
        self.feed.copy_to(out)?;
        let mut tail = String::from("</main>\n");
        if let Some(r) = &self.w.red {
            let _ = writeln!(tail, "<footer><p>{}</p></footer>", esc(&r.summary()));
        }
        let _ = writeln!(
            tail,
            "<div id=\"data\" hidden data-g=\"{}\">",
            self.w.styles.of(self.w.theme.diff_gutter)
        );
        out.write_all(tail.as_bytes())?;
        self.data.copy_to(out)?;
        let _ = writeln!(
            out,
            "</div>\n<script nonce=\"{nonce}\">\n{JS}</script>\n</body></html>"
        );
        Ok(Report {
            redacted: self.w.red,
            calls: self.w.calls,
        })
    }

    fn row(&mut self, session: &Session, doc: &mut String, idx: usize) {
        let ord = self.ords.items[idx];
        self.written.insert(ord);
        match &session.items[idx] {
            Item::Invocation(k) => {
                let k = *k;
                let inv = &session.invocations[k];
                let kord = self.ords.invs[k];
                if inv.findings > 0 {
                    self.targets
                        .entry((inv.session, inv.invocation_id.as_str().into()))
                        .or_insert(kord);
                }
                let w = &mut self.w;
                w.calls += 1;
                let tool = w.text(&inv.tool_name);
                let status = inv.status.word(session.ended).to_owned();
                w.tools.insert(tool.clone());
                w.statuses.insert(status.clone());
                // Redacted before and after the rewrites (attack 10 #24).
                let raw = super::redacted(w.red.as_mut(), &inv.summary);
                let summary = crate::render::ansi::visible_plain(
                    &crate::session::summary::shown_as(session, inv, &raw),
                );
                let summary = w.text(&summary);
                let time = inv
                    .requested_at
                    .map(crate::protocol::Timestamp::clock)
                    .unwrap_or_default();
                let dur = inv
                    .duration_ms()
                    .map(crate::fmt::duration_ms)
                    .unwrap_or_default();
                let class = status_class(&inv.status);
                let z = w.chunk_no;
                let _ = write!(
                    doc,
                    "<div class=\"call\" id=\"c{kord}\" data-z=\"{z}\" data-tool=\"{}\" data-status=\"{}\">\
                     <button class=\"row\" type=\"button\" aria-expanded=\"false\">\
                     <span class=\"t\">{}</span><span class=\"tool\">{}</span>\
                     <span class=\"sum\">{}</span><span class=\"st {class}\">{}</span>\
                     <span class=\"dur\">{}</span>",
                    esc(&tool),
                    esc(&status),
                    esc(&time),
                    esc(&tool),
                    esc(&summary),
                    esc(&status),
                    esc(&dur),
                );
                if inv.findings > 0 {
                    let _ = write!(
                        doc,
                        "<span class=\"fc\">{}</span>",
                        crate::fmt::plural(inv.findings, "finding")
                    );
                }
                doc.push_str("</button><div class=\"detail\" hidden></div>");
                w.detail(session, idx, &kord.to_string());
                if let Some(children) = self.nested.remove(&ord) {
                    doc.push_str("<div class=\"sub\">");
                    for c in children {
                        if let Some(ci) = self.ords.index_of(c) {
                            self.row(session, doc, ci);
                        }
                    }
                    doc.push_str("</div>");
                }
                doc.push_str("</div>\n");
            }
            Item::Message(m) => {
                let time = m
                    .timestamp
                    .map(crate::protocol::Timestamp::clock)
                    .unwrap_or_default();
                let (kind, who) = match m.kind {
                    MessageKind::Prompt if m.delegation_chain.is_empty() => ("prompt", "Prompt"),
                    MessageKind::Prompt => ("prompt", "Subagent prompt"),
                    MessageKind::AgentText if m.delegation_chain.is_empty() => ("agent", "Agent"),
                    MessageKind::AgentText => ("agent", "Subagent"),
                    MessageKind::Thinking => ("thinking", "Thinking"),
                };
                let body = if m.redacted {
                    "<p><em>(redacted by the producer)</em></p>".to_owned()
                } else {
                    let t = self.w.text(&m.text);
                    markdown_html(&t)
                };
                if m.kind == MessageKind::Thinking {
                    let _ = writeln!(
                        doc,
                        "<details class=\"msg thinking\"><summary><span class=\"t\">{}</span> \
                         {who}</summary><div class=\"md\">{body}</div></details>",
                        esc(&time)
                    );
                } else {
                    let _ = writeln!(
                        doc,
                        "<div class=\"msg {kind}\"><div class=\"who\"><span class=\"t\">{}</span> \
                         {who}</div><div class=\"md\">{body}</div></div>",
                        esc(&time)
                    );
                }
            }
            Item::Event(f) => {
                let w = &mut self.w;
                let words = match w.red.as_mut() {
                    Some(r) => crate::session::summary::event_line(&r.frame(f)),
                    None => crate::session::summary::event_line(f),
                };
                let words = w.text(&words);
                let image = if crate::session::query::is_image_row(f) {
                    w.image(session, f)
                } else {
                    String::new()
                };
                let kind = clean(f.frame_type.as_str());
                let time = f
                    .envelope
                    .timestamp
                    .map(crate::protocol::Timestamp::clock)
                    .unwrap_or_default();
                let err = crate::session::query::is_error(session, idx);
                let _ = writeln!(
                    doc,
                    "<div class=\"ev{}\" id=\"e{ord}\"><span class=\"t\">{}</span>\
                     <span class=\"et\">{}</span> <span class=\"ew\">{}</span>{image}</div>",
                    if err { " err" } else { "" },
                    esc(&time),
                    esc(&kind),
                    esc(words.lines().next().unwrap_or("")),
                );
            }
        }
    }

    fn write_findings(&mut self, doc: &mut String, session: &Session) {
        if session.findings.is_empty() {
            return;
        }
        let _ = write!(
            doc,
            "<details id=\"findings\"><summary>{}</summary><ul>",
            esc(&crate::fmt::plural(session.findings.len(), "finding"))
        );
        for f in &session.findings {
            // The call's place: a call still in the session (the first session holding the id),
            // else one written with findings and dropped since.
            let target = f.invocation_id.as_deref().and_then(|id| {
                session
                    .invocation_index(id)
                    .and_then(|k| self.ords.invs.get(k).copied())
                    .or_else(|| {
                        (0..session.sessions.len() as u32)
                            .find_map(|sid| self.targets.get(&(sid, Box::from(id))).copied())
                    })
            });
            let msg = self.w.text(&f.message);
            let _ = write!(
                doc,
                "<li class=\"{}\"><span class=\"lvl\">{}</span> <code>{}</code> {} \
                 <span class=\"dim\">line {} ({})</span>",
                f.level.as_str(),
                f.level.as_str(),
                esc(f.code),
                esc(&msg),
                f.line,
                esc(f.spec)
            );
            if let Some(k) = target {
                let _ = write!(doc, " <a href=\"#c{k}\" class=\"goto\">the call</a>");
            }
            doc.push_str("</li>");
        }
        doc.push_str("</ul></details>\n");
    }
}

impl Writer {
    fn text(&mut self, s: &str) -> String {
        let s = match self.red.as_mut() {
            Some(r) => r.text(s).into_owned(),
            None => s.to_owned(),
        };
        clean(&s)
    }

    /// The detail of row `idx` as JSON (`{"u": lines, "s": side-by-side lines}`), into `data`.
    fn detail(&mut self, session: &Session, idx: usize, id: &str) {
        let Some(mut src) = DetailSource::from_session(session, idx) else {
            return;
        };
        if let Some(r) = self.red.as_mut() {
            redact_source(&mut src, r);
        }
        let opts = DetailOpts {
            width: DETAIL_WIDTH,
            expanded: true,
            side_by_side: false,
            wrap: false,
            limits: crate::render::Limits::default(),
        };
        let unified = build_detail_lines(&src, &self.theme, opts);
        if let Some(r) = self.red.as_mut() {
            // The count is of the markers shown (attack 10 #4).
            for l in &unified {
                r.tally(
                    &l.spans
                        .iter()
                        .map(|s| s.content.as_ref())
                        .collect::<String>(),
                );
            }
        }
        let mut out = std::mem::take(&mut self.pending);
        let _ = write!(out, "\"{id}\":{{\"u\":");
        lines_json(&mut out, &unified, &mut self.styles);
        out.push_str("},");
        self.pending = out;
        if self.pending.len() >= CHUNK_BYTES {
            self.flush_chunk();
        }
    }

    /// Packs the pending details into chunk `chunk_no`: a JSON object (call index → detail),
    /// raw-deflated and base64-encoded in one `<script type="application/octet-stream">`
    /// (the page inflates it with the browser's `DecompressionStream` when a call of it opens:
    /// the HTML parser then reads a seventh of the bytes).
    fn flush_chunk(&mut self) {
        use base64::Engine;
        use std::io::Write as _;
        if self.pending.is_empty() {
            return;
        }
        self.pending.pop(); // the last comma
        let mut z = flate2::write::DeflateEncoder::new(
            Vec::with_capacity(self.pending.len() / 6),
            flate2::Compression::fast(),
        );
        let packed = z
            .write_all(b"{")
            .and_then(|()| z.write_all(self.pending.as_bytes()))
            .and_then(|()| z.write_all(b"}"))
            .and_then(|()| z.finish());
        self.pending.clear();
        let Ok(packed) = packed else { return };
        let _ = write!(
            self.data,
            "<script type=\"application/octet-stream\" class=\"z\" id=\"z{}\">",
            self.chunk_no
        );
        base64::engine::general_purpose::STANDARD.encode_string(&packed, &mut self.data);
        self.data.push_str("</script>\n");
        self.chunk_no += 1;
    }

    /// A pasted image's row (`x-claude-code.image`): each image of its record as an `<img>` of
    /// a `data:` URL when it is a PNG, JPEG, GIF or WebP of at most [`MAX_IMAGE_BYTES`] and the
    /// page's images stay under [`MAX_PAGE_IMAGE_BYTES`]; otherwise nothing (the row's text
    /// already says its type, size and pixel size). The bytes are read back from the file.
    fn image(&mut self, session: &Session, f: &crate::protocol::Frame) -> String {
        use base64::Engine;
        let Some(span) = f.origin.span else {
            return String::new();
        };
        let Ok(text) = session.line_text(span) else {
            return String::new();
        };
        let mut out = String::new();
        for img in crate::import::image_meta::record_images(&text, None) {
            let mt = img.media_type.as_str();
            let known = matches!(mt, "image/png" | "image/jpeg" | "image/gif" | "image/webp");
            if !known
                || img.bytes.len() > MAX_IMAGE_BYTES
                || self.image_bytes + img.bytes.len() > MAX_PAGE_IMAGE_BYTES
            {
                continue;
            }
            self.image_bytes += img.bytes.len();
            let _ = write!(
                out,
                "<img class=\"shot\" alt=\"pasted image ({mt})\" src=\"data:{mt};base64,"
            );
            base64::engine::general_purpose::STANDARD.encode_string(&img.bytes, &mut out);
            out.push_str("\">");
        }
        out
    }
}

fn status_class(s: &crate::session::CallStatus) -> &'static str {
    use crate::session::CallStatus;
    match s {
        CallStatus::Succeeded => "ok",
        CallStatus::Cancelled => "cancelled",
        CallStatus::Requested | CallStatus::Streaming => "open",
        CallStatus::Failed | CallStatus::TimedOut | CallStatus::Other(_) => "bad",
    }
}

/// The terminal's dark theme with the diff gutter in a style of its own (dim, and a blink the
/// page never draws), so the page's script knows a diff row by its first run's class and lays
/// it out side by side from the unified rows (each diff is held once).
fn page_theme() -> Theme {
    let mut t = Theme::dark();
    t.diff_gutter = t.diff_gutter.add_modifier(Modifier::SLOW_BLINK);
    t
}

/// Writes `session` as one self-contained page; returns what was redacted.
///
/// # Errors
/// Writing failed.
pub fn write(out: &mut dyn Write, session: &Session, opts: &Options) -> std::io::Result<Report> {
    let mut page = Page::new(opts);
    page.step(session, true)?;
    page.finish(session, out)
}

fn write_header(doc: &mut String, title: &str, s: &Summary) {
    let _ = write!(doc, "<header><h1>{}</h1><dl class=\"figures\">", esc(title));
    let mut fig = |k: &str, v: String, class: &str| {
        let _ = write!(
            doc,
            "<div class=\"fig {class}\"><dt>{}</dt><dd>{}</dd></div>",
            esc(k),
            esc(&v)
        );
    };
    fig("calls", super::thousands(s.calls), "");
    fig(
        "errors",
        super::thousands(s.errors),
        if s.errors > 0 { "bad" } else { "" },
    );
    if s.cancelled > 0 {
        fig("cancelled", super::thousands(s.cancelled), "");
    }
    if s.open > 0 {
        fig("no result", super::thousands(s.open), "");
    }
    fig("prompts", super::thousands(s.prompts), "");
    if s.tokens_in > 0 || s.tokens_out > 0 || s.tokens_cache_read > 0 {
        fig(
            "tokens in / out / cache read",
            format!(
                "{} / {} / {}",
                super::thousands(s.tokens_in),
                super::thousands(s.tokens_out),
                super::thousands(s.tokens_cache_read)
            ),
            "",
        );
    }
    if let Some(ms) = s.span_ms {
        fig("duration", crate::fmt::duration_ms(ms), "");
    }
    if let Some(t) = s.started {
        fig("started (UTC)", t.to_rfc3339(), "");
    }
    if !s.models.is_empty() {
        fig("models", clean(&s.models.join(", ")), "");
    }
    if s.sessions > 1 {
        fig("sessions", s.sessions.to_string(), "");
    }
    fig(
        "findings",
        super::thousands(s.findings as u64),
        if s.findings > 0 { "warn" } else { "" },
    );
    doc.push_str("</dl></header>\n");
}

fn write_controls(
    doc: &mut String,
    tools: &std::collections::BTreeSet<String>,
    statuses: &std::collections::BTreeSet<String>,
) {
    doc.push_str(
        "<nav id=\"controls\"><input id=\"q\" type=\"search\" placeholder=\"Search calls \
         (tool, summary; Enter also searches details)\" aria-label=\"Search\">\
         <select id=\"ftool\" aria-label=\"Tool\"><option value=\"\">every tool</option>",
    );
    for t in tools {
        let _ = write!(doc, "<option>{}</option>", esc(t));
    }
    doc.push_str("</select><select id=\"fstatus\" aria-label=\"Status\"><option value=\"\">every status</option>");
    for s in statuses {
        let _ = write!(doc, "<option>{}</option>", esc(s));
    }
    doc.push_str(
        "</select><label><input id=\"indetail\" type=\"checkbox\"> in details</label>\
         <button id=\"fold\" type=\"button\">Fold turns</button>\
         <button id=\"unfold\" type=\"button\">Unfold turns</button>\
         <label><input id=\"sbs\" type=\"checkbox\"> diffs side by side</label>\
         <label><input id=\"wrap\" type=\"checkbox\"> wrap</label></nav>\n",
    );
}

fn write_catalog(doc: &mut String, session: &Session, w: &mut Writer) {
    let mut any = false;
    for (sid, _) in session.sessions.iter() {
        let Some(cat) = session.catalog_of(sid) else {
            continue;
        };
        if !any {
            doc.push_str("<details id=\"catalog\"><summary>Tool catalog</summary>");
            any = true;
        }
        if session.sessions.is_multi() {
            let name = w.text(&session.sessions.short_name(sid));
            let _ = write!(doc, "<h3>session {}</h3>", esc(&name));
        }
        let _ = write!(
            doc,
            "<table><thead><tr><th>tool</th><th>status</th><th>category</th><th>output_type</th>\
             <th>description</th></tr></thead><tbody>"
        );
        for t in &cat.tools {
            let status = t.status.as_ref().map(|s| s.as_str().to_owned());
            let status = match (&status, &t.status_description) {
                (Some(s), Some(d)) => format!("{s}: {d}"),
                (Some(s), None) => s.clone(),
                (None, _) => String::new(),
            };
            let cat_name = t.category.as_ref().map(|c| c.as_str().to_owned());
            let ot = t.output_type.as_ref().map(|o| o.as_str().to_owned());
            let desc = t.description.as_deref().unwrap_or("");
            let desc: String = desc.chars().take(300).collect();
            let _ = write!(
                doc,
                "<tr><td class=\"tool\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&w.text(&t.name)),
                esc(&w.text(&status)),
                esc(&clean(cat_name.as_deref().unwrap_or(""))),
                esc(&clean(ot.as_deref().unwrap_or(""))),
                esc(&w.text(&desc))
            );
        }
        doc.push_str("</tbody></table>");
        if !cat.diagnostics.is_empty() {
            doc.push_str("<h4>Diagnostics</h4><ul class=\"diag\">");
            for d in &cat.diagnostics {
                let sev = d.severity.as_ref().map(|s| s.as_str().to_owned());
                let line = [
                    sev.unwrap_or_default(),
                    d.tool_name.clone().unwrap_or_default(),
                    d.code.clone().unwrap_or_default(),
                    d.message.clone().unwrap_or_default(),
                ]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(" · ");
                let _ = write!(doc, "<li>{}</li>", esc(&w.text(&line)));
            }
            doc.push_str("</ul>");
        }
    }
    if any {
        doc.push_str("</details>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_in_a_script_cannot_close_it() {
        let mut s = String::new();
        json_str(&mut s, "</script><!-- \u{2028} \"q\" \\ \u{1b}[31m &amp;");
        assert_eq!(
            s,
            "\"\\u003c/script\\u003e\\u003c!-- \\u2028 \\\"q\\\" \\\\ \\u001b[31m \\u0026amp;\""
        );
        let back: String = serde_json::from_str(&s).unwrap_or_default();
        assert_eq!(back, "</script><!-- \u{2028} \"q\" \\ \u{1b}[31m &amp;");
    }

    #[test]
    fn markdown_keeps_no_html_and_no_unsafe_link() {
        let h = markdown_html(
            "<script>x()</script>\n\n[a](javascript:alert(1)) [b](https://e.test/?a=\"1\") \
             ![i](https://e.test/i.png) <https://ok.test> <javascript:alert(2)>",
        );
        assert!(!h.contains("<script"), "{h}");
        assert!(!h.contains("href=\"javascript"), "{h}");
        assert!(h.contains("&lt;script&gt;"), "{h}");
        assert!(
            h.contains(
                "<a href=\"https://e.test/?a=%221%22\" rel=\"noopener noreferrer\" target=\"_blank\">b</a>"
            ) || h.contains("<a href=\"https://e.test/?a=&quot;1&quot;\" rel=\"noopener noreferrer\" target=\"_blank\">b</a>"),
            "{h}"
        );
        assert!(!h.contains("<img"), "{h}");
        assert!(h.contains("[image: i] (https://e.test/i.png)"), "{h}");
    }

    #[test]
    fn colours_become_css() {
        assert_eq!(css_color(Color::Red).as_deref(), Some("var(--c1)"));
        assert_eq!(css_color(Color::Indexed(196)).as_deref(), Some("#ff0000"));
        assert_eq!(css_color(Color::Indexed(244)).as_deref(), Some("#808080"));
        assert_eq!(css_color(Color::Rgb(1, 2, 3)).as_deref(), Some("#010203"));
        assert_eq!(css_color(Color::Reset), None);
    }
}
