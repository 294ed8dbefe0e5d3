//! The detail builder: one item's detail as lines, by sections (header, findings, input,
//! output, stream), for the viewer's detail pane and `print --detail` alike.
//!
//! Who calls it: [`super::Pipeline`] (inline when light, in a render job when heavy, see
//! [`is_heavy`]; [`build_quick_lines`] for the first screens meanwhile) and `cmd::print`
//! (`--detail`: every call, expanded). Invariants: pure functions of a [`DetailSource`] (an
//! owned snapshot) or a borrowed session, the theme and [`DetailOpts`]; bounded by `Limits`,
//! [`FOLD_LINES`] and [`STREAM_TAIL_LINES`]; renderers come from `crate::render` and untrusted
//! text is made visible. A partial build (first screens) says where it was cut in
//! [`Built::cut_at`], never by a line's text. The quick build never reads the backing file: a
//! deferred input or output shows a "reading" marker until the job has read it back.

use std::fmt::Write as _;

use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::finding::{Finding, Level};
use crate::protocol::rules::expected_output_type;
use crate::protocol::{CatalogTool, Frame, OutputType};
use crate::render::text::{build_plain_lines, visible};
use crate::render::{RenderCtx, render_input_beside, render_output};
use crate::session::hooks::HookRun;
use crate::session::{Deferred, Invocation, Item, Message, MessageKind, Session};
use crate::theme::Theme;

/// Findings listed in a call's header (the problems panel has them all).
pub const MAX_FINDINGS_SHOWN: usize = 8;
/// Output lines shown before folding (`o` expands).
pub const FOLD_LINES: usize = 200;
/// Stream lines kept in the live view (the last ones).
pub const STREAM_TAIL_LINES: usize = 5_000;
/// Above this many bytes of input + output + stream, rendering runs on `spawn_blocking`.
pub const HEAVY_BYTES: usize = 64 * 1024;

/// An owned copy of what the detail pane shows, so a render job can own it.
#[derive(Debug, Clone, PartialEq)]
pub enum DetailSource {
    Invocation {
        inv: Box<Invocation>,
        /// The tool's current catalog entry (for the SPEC 3.4 expected `output_type`).
        entry: Option<Box<CatalogTool>>,
        /// The source ended (an open call has "no result").
        ended: bool,
        /// Findings about this call (by id, or by the line of its request or result).
        findings: Vec<Finding>,
        /// The hooks that ran around this call (`crate::session::hooks`).
        hooks: Vec<HookRun>,
    },
    Message(Message),
    Event(Box<Frame>),
}

impl DetailSource {
    /// Copies item `item` out of the session with its deferred input and output read back from
    /// the file now (the caller's thread: `print --detail`, light items).
    pub fn from_session(session: &Session, item: usize) -> Option<Self> {
        Self::snapshot_with(session, item, |inv| {
            session.with_input_output(inv).into_owned()
        })
    }

    /// Copies item `item` out of the session, leaving a deferred input or output in the file:
    /// the render job reads it back ([`Self::read_back`]), off the app task.
    pub fn snapshot(session: &Session, item: usize) -> Option<Self> {
        Self::snapshot_with(session, item, Clone::clone)
    }

    fn snapshot_with(
        session: &Session,
        item: usize,
        copy: impl FnOnce(&Invocation) -> Invocation,
    ) -> Option<Self> {
        Some(match session.items.get(item)? {
            Item::Invocation(k) => {
                let inv = &session.invocations[*k];
                let mut copied = copy(inv);
                // The header shows the summary as the feed does (paths relative to the cwd).
                if let std::borrow::Cow::Owned(s) = crate::session::summary::shown(session, inv) {
                    copied.summary = s.into();
                }
                Self::Invocation {
                    inv: Box::new(copied),
                    entry: catalog_entry(session, inv).map(|t| Box::new(t.clone())),
                    ended: session.ended,
                    findings: findings_of(session, inv),
                    hooks: hooks_of(session, inv),
                }
            }
            Item::Message(m) => Self::Message((**m).clone()),
            Item::Event(f) => Self::Event(Box::new(with_fork_sentence(session, item, f))),
        })
    }

    /// Reads a [`Self::snapshot`]'s deferred input and output back (blocking file I/O and a
    /// parse: in the render job).
    pub fn read_back(&mut self, deferred: &Deferred) {
        if let Self::Event(f) = self
            && let crate::protocol::Body::Generic(m) = &f.body
            && m.contains_key(crate::session::DEFERRED_EVENT)
            && let Value::Object(p) = deferred.event_payload(f)
        {
            f.body = crate::protocol::Body::Generic(p);
        }
        if let Self::Invocation { inv, .. } = self
            && (inv.input_span.is_some() || inv.output_span.is_some())
        {
            **inv = deferred.with_input_output(inv).into_owned();
        }
    }
}

/// Whether item `item` is a call with an input or output still in the backing file.
pub fn has_deferred(session: &Session, item: usize) -> bool {
    match session.items.get(item) {
        Some(Item::Invocation(k)) => Session::deferred_bytes(&session.invocations[*k]) > 0,
        Some(Item::Event(f)) => {
            matches!(&f.body, crate::protocol::Body::Generic(m) if m.contains_key(crate::session::DEFERRED_EVENT))
        }
        Some(Item::Message(_)) | None => false,
    }
}

/// The tool's entry in the catalog in force in the call's session when its result arrived
/// (SPEC §6; the entry `check` read for the `output_type` rule).
fn catalog_entry<'s>(session: &'s Session, inv: &Invocation) -> Option<&'s CatalogTool> {
    session.catalog_entry_of(inv)
}

/// Findings about one call (by id, or by the line of its request or result), at most
/// [`MAX_FINDINGS_SHOWN`] + 1 (the extra one says "more").
fn findings_of(session: &Session, inv: &Invocation) -> Vec<Finding> {
    session
        .findings_of(inv, MAX_FINDINGS_SHOWN + 1)
        .into_iter()
        .cloned()
        .collect()
}

/// The hook runs of one call (`crate::session::hooks`).
fn hooks_of(session: &Session, inv: &Invocation) -> Vec<HookRun> {
    session.hooks.of(&inv.invocation_id).cloned().collect()
}

/// The item's own revision: changes whenever its content would (with the catalog and the end
/// of the source, which change a call's header too: see `DetailKey`).
pub fn item_rev(session: &Session, item: usize) -> u64 {
    match session.items.get(item) {
        Some(Item::Invocation(k)) => session.invocations[*k].rev,
        Some(Item::Message(m)) => m.text.len() as u64 + u64::from(m.done),
        Some(Item::Event(_)) | None => 0,
    }
}

/// Approximate bytes the detail of `item` has to render.
pub fn detail_bytes(session: &Session, item: usize) -> usize {
    fn size(v: &Value) -> usize {
        match v {
            Value::String(s) => s.len(),
            Value::Array(a) => a.iter().map(size).sum::<usize>() + a.len(),
            Value::Object(o) => o.iter().map(|(k, v)| k.len() + size(v)).sum::<usize>() + o.len(),
            Value::Null | Value::Bool(_) | Value::Number(_) => 8,
        }
    }
    match session.items.get(item) {
        Some(Item::Invocation(k)) => {
            let inv = &session.invocations[*k];
            size(&inv.input)
                + inv
                    .result
                    .as_ref()
                    .and_then(|r| r.output.as_ref())
                    .map_or(0, size)
                + Session::deferred_bytes(inv)
                + inv.stream.bytes()
        }
        Some(Item::Message(m)) => m.text.len(),
        Some(Item::Event(f)) => size(&f.payload_json()),
        None => 0,
    }
}

/// Whether rendering `item` should run off the app task.
pub fn is_heavy(session: &Session, item: usize) -> bool {
    detail_bytes(session, item) > HEAVY_BYTES
}

/// Options that change the detail's lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DetailOpts {
    pub width: u16,
    pub expanded: bool,
    pub side_by_side: bool,
    /// Lines will be wrapped at `width` (renderers may lay out their own continuation rows).
    pub wrap: bool,
    /// Render limits (config `limits.*`).
    pub limits: crate::render::Limits,
}

/// Builds the detail's lines (unwrapped). Pure; bounded by [`Limits`], [`FOLD_LINES`] and
/// [`STREAM_TAIL_LINES`].
pub fn build_detail_lines(
    src: &DetailSource,
    theme: &Theme,
    opts: DetailOpts,
) -> Vec<Line<'static>> {
    build_with(src, &detail_ctx(theme, opts, true, None), opts, false).lines
}

/// The render context of a detail build: `opts`' width, layout and limits, highlighting on or
/// off, and each renderer cut at `rows` output lines when given.
fn detail_ctx(
    theme: &Theme,
    opts: DetailOpts,
    highlight: bool,
    rows: Option<usize>,
) -> RenderCtx<'_> {
    let mut cx = RenderCtx::new(opts.width, theme);
    cx.side_by_side = opts.side_by_side;
    cx.wrap = opts.wrap;
    cx.limits = opts.limits;
    cx.highlight &= highlight;
    if let Some(rows) = rows {
        cx.limits.max_lines = rows.clamp(1, cx.limits.max_lines);
    }
    cx
}

/// Lines of a build, and where a partial one was cut.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Built {
    pub lines: Vec<Line<'static>>,
    /// Index of the first "rendering…" marker line of a partial build (first screens cut at
    /// `rows`, or a deferred part not read yet); `None`: nothing was cut.
    pub cut_at: Option<usize>,
}

#[allow(clippy::too_many_arguments)]
fn invocation_with_findings(
    inv: &Invocation,
    entry: Option<&CatalogTool>,
    ended: bool,
    findings: &[Finding],
    hooks: &[HookRun],
    cx: &RenderCtx<'_>,
    opts: DetailOpts,
    partial: bool,
) -> Built {
    let mut b = build_invocation(inv, entry, ended, cx, opts, partial);
    if !hooks.is_empty() {
        b.lines.push(Line::default());
        b.lines.extend(build_hook_lines(hooks, cx, opts.expanded));
    }
    // After the header's first line (tool, status, duration).
    let at = b.lines.len().min(1);
    let found = build_finding_lines(findings, cx.theme);
    let n = found.len();
    b.lines.splice(at..at, found);
    b.cut_at = b.cut_at.map(|c| if c >= at { c + n } else { c });
    scrub(b)
}

/// The last line of defence of every detail build (TUI and `print --detail`): a span that still
/// holds a control or invisible character is made visible (`text::visible`). Renderers already
/// neutralise their text; a header field formatted raw (a catalog's declared `output_type`, a
/// Task's `subagent_type`) wrote a raw OSC 52 and `ESC[6n` to `print --detail` (issue 14, found
/// by the second attack). One pass over the built lines, bounded by the build's limits.
fn scrub(mut b: Built) -> Built {
    scrub_lines(&mut b.lines);
    b
}

/// [`scrub`] of lines built elsewhere (the files panel's net diff): every span holding a
/// control or invisible character is made visible.
pub fn scrub_lines(lines: &mut [Line<'static>]) {
    for line in lines {
        for span in &mut line.spans {
            if span
                .content
                .chars()
                .any(|c| c.is_control() || crate::render::ansi::is_invisible_format(c))
            {
                span.content = visible(&span.content).into();
            }
        }
    }
}

/// [`build_detail_lines`] without syntax highlighting (a heavy item's cheap complete stage).
pub fn build_plain_detail_lines(
    src: &DetailSource,
    theme: &Theme,
    opts: DetailOpts,
) -> Vec<Line<'static>> {
    build_with(src, &detail_ctx(theme, opts, false, None), opts, false).lines
}

/// `partial`: renderers are cut (`rows`) and end in the "rendering the rest…" marker.
fn build_with(src: &DetailSource, cx: &RenderCtx<'_>, opts: DetailOpts, partial: bool) -> Built {
    match src {
        DetailSource::Invocation {
            inv,
            entry,
            ended,
            findings,
            hooks,
        } => invocation_with_findings(
            inv,
            entry.as_deref(),
            *ended,
            findings,
            hooks,
            cx,
            opts,
            partial,
        ),
        DetailSource::Message(m) => scrub(whole(build_message(m, cx))),
        DetailSource::Event(f) => scrub(whole(build_event(f, cx))),
    }
}

fn whole(lines: Vec<Line<'static>>) -> Built {
    Built {
        lines,
        cut_at: None,
    }
}

const RENDERING_REST: &str = "… rendering the rest";
const RENDERING_FOLDED: &str = "… more lines (press o to expand; rendering)";
const READING_BACK: &str = "… reading it back from the file";

/// `full` with its first rows taken from `first` (the highlighted first screens, same text up to
/// `first_cut`, where they were cut), so colours already shown stay while the rest is plain.
/// Returns `full` unchanged when the texts differ (e.g. a live update in between).
pub fn splice_first_screens(
    first: &[Line<'static>],
    first_cut: Option<usize>,
    mut full: Vec<Line<'static>>,
) -> Vec<Line<'static>> {
    let m = first_cut.unwrap_or(first.len()).min(first.len());
    if m > full.len() {
        return full;
    }
    let text = |l: &Line<'_>| {
        l.spans
            .iter()
            .map(|s| s.content.as_ref())
            .collect::<String>()
    };
    if first[..m]
        .iter()
        .zip(&full[..m])
        .all(|(a, b)| text(a) == text(b))
    {
        full.splice(..m, first[..m].iter().cloned());
    }
    full
}

/// [`build_detail_lines`] with each renderer cut at `rows` output lines, highlighted: the first
/// screens of a heavy item, rendered (off the app task) before the full rendering so colours
/// show early. Rows past the cut end in the "rendering the rest…" marker.
pub fn build_first_lines(
    src: &DetailSource,
    theme: &Theme,
    opts: DetailOpts,
    rows: usize,
) -> Built {
    build_with(src, &detail_ctx(theme, opts, true, Some(rows)), opts, true)
}

/// The first rows of a heavy item's detail, cheaply, so the pane shows the real (plain) rendering
/// at once while the full one runs off the app task (issue 8: "a 10,000-line diff shown within
/// 50 ms"). Borrows from the session (no copy of the output); no syntax highlighting; each
/// renderer keeps at most `rows` lines (the renderers' `Limits::max_lines`), so the work is
/// bounded by `rows` plus one linear pass of parsing. Rows past the cut end in a
/// "rendering the rest…" marker instead of a count. Unwrapped, like [`build_detail_lines`].
/// A deferred input or output is not read (that is file I/O and a parse): its section shows a
/// "reading it back" marker.
pub fn build_quick_lines(
    session: &Session,
    item: usize,
    theme: &Theme,
    opts: DetailOpts,
    rows: usize,
) -> Built {
    let cx = detail_ctx(theme, opts, false, Some(rows));
    match session.items.get(item) {
        Some(Item::Invocation(k)) => {
            let inv = &session.invocations[*k];
            let findings = findings_of(session, inv);
            let hooks = hooks_of(session, inv);
            let entry = catalog_entry(session, inv);
            invocation_with_findings(
                inv,
                entry,
                session.ended,
                &findings,
                &hooks,
                &cx,
                opts,
                true,
            )
        }
        Some(Item::Message(m)) => scrub(whole(build_message(m, &cx))),
        Some(Item::Event(f)) => scrub(whole(build_event(
            &with_fork_sentence(session, item, f),
            &cx,
        ))),
        None => Built::default(),
    }
}

/// Output rows a new quick rendering should have, or `None` when the one shown (`have`: its rows
/// and whether it was cut) is enough: not cut, already at the cap (folded output never needs
/// more than [`FOLD_LINES`] + 1; nothing more than `Limits::max_lines`), or its `shown` wrapped
/// rows still reach past `scroll + 2 * height`. Grows by doubling, so scrolling through a long
/// output re-renders O(log n) times.
pub fn quick_rows(
    have: Option<(usize, bool)>,
    opts: DetailOpts,
    scroll: usize,
    height: usize,
    shown: usize,
) -> Option<usize> {
    let h = height.max(10);
    let max = opts.limits.max_lines.max(1);
    let cap = if opts.expanded {
        max
    } else {
        (FOLD_LINES + 1).min(max)
    };
    match have {
        None => Some((scroll + 4 * h).min(cap)),
        Some((n, cut)) if !cut || n >= cap || shown >= scroll + 2 * h => None,
        Some((n, _)) => Some((scroll + 4 * h).max(2 * n).min(cap)),
    }
}

fn section(title: &str, theme: &Theme) -> Line<'static> {
    Line::from(vec![
        Span::styled("── ", theme.border),
        Span::styled(title.to_owned(), theme.title),
        Span::styled(" ──", theme.border),
    ])
}

/// Folds long output at [`FOLD_LINES`]. `partial`: the lines are a quick rendering cut at
/// `Limits::max_lines` (see [`build_quick_lines`]), so counts are not known yet.
/// Returns the lines and, for a partial build, the index of its "rendering" marker.
fn fold(
    mut lines: Vec<Line<'static>>,
    expanded: bool,
    partial: Option<&RenderCtx<'_>>,
    theme: &Theme,
) -> (Vec<Line<'static>>, Option<usize>) {
    let mut cut = None;
    if let Some(cx) = partial
        && lines.len() > cx.limits.max_lines
    {
        // The renderer's "… N more lines" marker counts only what it skipped cheaply.
        lines.truncate(cx.limits.max_lines);
        cut = Some(lines.len());
        lines.push(Line::from(Span::styled(RENDERING_REST, theme.dim)));
    }
    if !expanded && lines.len() > FOLD_LINES {
        let more = lines.len() - FOLD_LINES;
        lines.truncate(FOLD_LINES);
        let msg = if partial.is_some() {
            cut = Some(lines.len());
            RENDERING_FOLDED.to_owned()
        } else {
            format!("… {more} more lines (press o to expand)")
        };
        lines.push(Line::from(Span::styled(msg, theme.hint)));
    }
    (lines, cut)
}

/// One line per finding (level, code, message, SPEC section), at most [`MAX_FINDINGS_SHOWN`].
fn build_finding_lines(findings: &[Finding], theme: &Theme) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'static>> = findings
        .iter()
        .take(MAX_FINDINGS_SHOWN)
        .map(|f| {
            let style = match f.level {
                Level::Error => theme.finding_error,
                Level::Warning => theme.finding_warning,
                Level::Info => theme.finding_info,
            };
            Line::from(vec![
                Span::styled(format!("! {} ", f.level.as_str()), style),
                Span::styled(format!("{} ", f.code), theme.title),
                Span::raw(visible(&f.message)),
                Span::styled(format!(" ({})", f.spec), theme.dim),
            ])
        })
        .collect();
    if findings.len() > MAX_FINDINGS_SHOWN {
        lines.push(Line::from(Span::styled(
            "! more findings: press ! for the problems panel",
            theme.dim,
        )));
    }
    lines
}

/// Appends a section's folded lines, noting the first cut.
fn extend(
    lines: &mut Vec<Line<'static>>,
    cut_at: &mut Option<usize>,
    (more, cut): (Vec<Line<'static>>, Option<usize>),
) {
    if let Some(c) = cut {
        cut_at.get_or_insert(lines.len() + c);
    }
    lines.extend(more);
}

/// A deferred part not read yet (quick builds only): a marker, and the build is cut there.
fn reading(lines: &mut Vec<Line<'static>>, cut_at: &mut Option<usize>, theme: &Theme) {
    cut_at.get_or_insert(lines.len());
    lines.push(Line::from(Span::styled(READING_BACK, theme.dim)));
}

fn build_invocation(
    inv: &Invocation,
    entry: Option<&CatalogTool>,
    ended: bool,
    cx: &RenderCtx<'_>,
    opts: DetailOpts,
    partial: bool,
) -> Built {
    let theme = cx.theme;
    let part = partial.then_some(cx);
    let mut lines = Vec::new();
    let mut cut_at: Option<usize> = None;
    let (badge, badge_style) = theme.call_badge(&inv.status, ended);
    let mut head = vec![
        Span::styled(visible(&inv.tool_name), theme.title),
        Span::raw("  "),
        Span::styled(badge.to_owned(), badge_style),
    ];
    if let Some(ms) = inv.duration_ms() {
        head.push(Span::raw("  "));
        head.push(Span::styled(crate::fmt::duration_ms(ms), theme.dim));
    }
    lines.push(Line::from(head));
    // What the call did (the feed's summary: a path relative to the session's cwd, a command).
    let summary = crate::render::ansi::visible_plain(&inv.summary);
    if !summary.is_empty() {
        lines.push(Line::from(summary));
    }
    let mut ids = format!(
        "id {}  line {}",
        visible(&inv.invocation_id),
        inv.request_line
    );
    if let Some(l) = inv.result_line {
        let _ = write!(ids, "→{l}");
    }
    if let Some(ts) = inv.requested_at {
        let _ = write!(ids, "  at {}", ts.to_rfc3339());
    }
    lines.push(Line::from(Span::styled(ids, theme.dim)));
    if let Some(p) = &inv.parallel_group_id {
        lines.push(Line::from(Span::styled(
            format!("parallel group {}", visible(p)),
            theme.dim,
        )));
    }
    // A Codex `write_stdin` poll names the call whose process it polls (`crate::import::codex`).
    if let Some(id) = inv
        .request_envelope
        .as_ref()
        .and_then(|e| e.metadata.get("codex"))
        .and_then(|c| c.get("polls_invocation_id"))
        .and_then(Value::as_str)
    {
        lines.push(Line::from(Span::styled(
            format!("polls the process of call {}", visible(id)),
            theme.dim,
        )));
    }
    if !inv.delegation_chain.is_empty() {
        let chain: Vec<String> = inv
            .delegation_chain
            .iter()
            .map(|d| visible(&d.agent_id))
            .collect();
        lines.push(Line::from(Span::styled(
            format!("agent {}", chain.join(" › ")),
            theme.dim,
        )));
    }
    let output = inv.result.as_ref().and_then(|r| r.output.as_ref());
    let (expected, rule) = expected_output_type(&inv.tool_name, entry, output);
    let carried = inv.result.as_ref().and_then(|r| r.output_type.clone());
    let type_line = match &carried {
        Some(c) if *c == expected => Line::from(vec![
            Span::styled("output_type ", theme.dim),
            Span::raw(visible(c.as_str())),
            Span::styled(format!("  (expected by {} rule)", rule.as_str()), theme.dim),
        ]),
        Some(c) => Line::from(vec![
            Span::styled("output_type ", theme.dim),
            Span::styled(visible(c.as_str()), theme.finding_warning),
            Span::styled(
                format!(
                    "  ≠ expected {} ({} rule, SPEC 3.4)",
                    visible(expected.as_str()),
                    rule.as_str()
                ),
                theme.finding_warning,
            ),
        ]),
        None if inv.result.is_some() => Line::from(vec![
            Span::styled("output_type ", theme.dim),
            Span::styled("missing", theme.finding_warning),
            Span::styled(
                format!("  (expected {}, {} rule)", expected.as_str(), rule.as_str()),
                theme.dim,
            ),
        ]),
        None => Line::from(vec![
            Span::styled("output_type ", theme.dim),
            Span::styled(
                format!("expected {} ({} rule)", expected.as_str(), rule.as_str()),
                theme.dim,
            ),
        ]),
    };
    lines.push(type_line);
    if inv.result.as_ref().and_then(|r| r.truncated) == Some(true) {
        lines.push(Line::from(Span::styled(
            "output truncated by the sender",
            theme.finding_warning,
        )));
    }
    lines.push(Line::default());
    lines.push(section("Input", theme));
    let shown_output = inv.result.as_ref().and_then(|r| {
        let ot = r.output_type.as_ref().unwrap_or(&expected);
        r.output.as_ref().map(|o| (ot, o))
    });
    if inv.input_span.is_some() {
        reading(&mut lines, &mut cut_at, theme);
    } else {
        let failed = inv.status.is_failure();
        let input_lines =
            render_input_beside(&inv.tool_name, &inv.input, shown_output, failed, cx).lines;
        extend(
            &mut lines,
            &mut cut_at,
            fold(input_lines, opts.expanded, part, theme),
        );
    }
    let show_stream = !inv.stream.is_empty()
        && (inv.status.is_open() || output.is_none_or(|o| o.is_null() || o.as_str() == Some("")));
    if let Some(r) = &inv.result {
        lines.push(Line::default());
        let ot = r.output_type.clone().unwrap_or_else(|| expected.clone());
        lines.push(section(
            &format!("Output ({})", visible(ot.as_str())),
            theme,
        ));
        match &r.output {
            Some(out) => {
                let rendered = render_output(&ot, out, &inv.tool_name, &inv.input, cx);
                if rendered.lines.is_empty() {
                    lines.push(Line::from(Span::styled("(empty)", theme.dim)));
                }
                extend(
                    &mut lines,
                    &mut cut_at,
                    fold(rendered.lines, opts.expanded, part, theme),
                );
            }
            None if inv.output_span.is_some() => reading(&mut lines, &mut cut_at, theme),
            None => lines.push(Line::from(Span::styled(
                "(no output field)",
                theme.finding_warning,
            ))),
        }
    } else if !show_stream {
        lines.push(Line::default());
        let msg = if ended {
            "no result: the source ended first"
        } else {
            "waiting for the result…"
        };
        lines.push(Line::from(Span::styled(msg, theme.status_running)));
    }
    if !show_stream && !inv.stream.is_empty() {
        // Finished with an output: the stream stays reachable, folded.
        lines.push(Line::default());
        let n = inv.stream.chunks().len();
        let gaps = inv.stream.gaps().len();
        let mut title = format!("Stream: {n} chunk{}", crate::fmt::plural_s(n));
        if gaps > 0 {
            let _ = write!(title, ", {gaps} gap{}", crate::fmt::plural_s(gaps));
        }
        if !opts.expanded {
            title.push_str(" (press o to show)");
        }
        lines.push(section(&title, theme));
        if opts.expanded {
            let (stream, _) =
                super::stream::build_stream_lines(&inv.stream, theme, STREAM_TAIL_LINES);
            lines.extend(stream);
        }
    }
    if show_stream {
        lines.push(Line::default());
        let title = if inv.status.is_open() && !ended {
            "Stream (live)"
        } else {
            "Stream"
        };
        lines.push(section(title, theme));
        let (stream, skipped) =
            super::stream::build_stream_lines(&inv.stream, theme, STREAM_TAIL_LINES);
        if skipped > 0 {
            lines.push(Line::from(Span::styled(
                format!("⋯ {skipped} earlier lines not shown"),
                theme.dim,
            )));
        }
        lines.extend(stream);
    }
    Built { lines, cut_at }
}

/// Output lines of one hook shown before `o` expands them.
const HOOK_FOLD_LINES: usize = 12;

/// The call's "Hooks" section: per run its name, outcome, exit code, duration and line, the
/// command, then what it printed through the terminal emulator (SGR kept, other sequences
/// dropped), folded at [`HOOK_FOLD_LINES`] unless `expanded`.
fn build_hook_lines(hooks: &[HookRun], cx: &RenderCtx<'_>, expanded: bool) -> Vec<Line<'static>> {
    let theme = cx.theme;
    let failed = hooks.iter().filter(|h| h.failed).count();
    let mut title = crate::fmt::plural(hooks.len(), "hook");
    if failed > 0 {
        let _ = write!(title, ", {failed} failed");
    }
    let mut lines = vec![section(&format!("Hooks: {title}"), theme)];
    for h in hooks {
        let style = if h.failed {
            theme.status_failed
        } else if h.outcome == crate::session::hooks::PROGRESS {
            theme.dim
        } else {
            theme.status_ok
        };
        let word = hook_outcome_words(&h.outcome);
        let mut head = vec![
            Span::styled(visible(&h.name), theme.title),
            Span::raw("  "),
            Span::styled(word, style),
        ];
        if let Some(c) = h.exit_code {
            head.push(Span::styled(format!("  exit {c}"), style));
        }
        if let Some(ms) = h.duration_ms {
            head.push(Span::styled(
                format!("  {}", crate::fmt::duration_ms(ms)),
                theme.dim,
            ));
        }
        head.push(Span::styled(format!("  line {}", h.line), theme.dim));
        lines.push(Line::from(head));
        if let Some(c) = &h.command {
            lines.push(Line::from(vec![
                Span::styled("  $ ", theme.dim),
                Span::raw(crate::render::ansi::visible_plain(c)),
            ]));
        }
        let mut body = Vec::new();
        for (text, style) in [(&h.output, None), (&h.stderr, Some(theme.status_failed))] {
            if text.trim().is_empty() {
                continue;
            }
            let r = crate::render::text::build_ansi_lines(text.trim_end(), cx);
            body.extend(r.lines.into_iter().map(|mut l| {
                l.spans
                    .insert(0, Span::styled("  │ ", style.unwrap_or(theme.dim)));
                l
            }));
        }
        if !expanded && body.len() > HOOK_FOLD_LINES {
            let more = body.len() - HOOK_FOLD_LINES;
            body.truncate(HOOK_FOLD_LINES);
            body.push(Line::from(Span::styled(
                format!("  … {more} more lines (press o to expand)"),
                theme.hint,
            )));
        }
        lines.extend(body);
        if h.cut > 0 {
            lines.push(Line::from(Span::styled(
                format!(
                    "  … {} more not kept here (the hook's row, line {}, has it all)",
                    crate::fmt::bytes(h.cut as u64),
                    h.line
                ),
                theme.dim,
            )));
        }
    }
    lines
}

/// A hook outcome in words: `ok`, `failed`, `blocked`, `cancelled`, `context added`, ….
pub fn hook_outcome_words(outcome: &str) -> String {
    match outcome {
        "success" => "ok".into(),
        crate::session::hooks::PROGRESS => "ran (no outcome recorded)".into(),
        "non_blocking_error" | "error_during_execution" => "failed".into(),
        "blocking_error" => "blocked".into(),
        "cancelled" => "cancelled".into(),
        "additional_context" => "context added".into(),
        "system_message" => "message".into(),
        "permission_decision" => "permission".into(),
        "stopped_continuation" => "stopped the turn".into(),
        other => other.replace('_', " "),
    }
}

fn build_message(m: &Message, cx: &RenderCtx<'_>) -> Vec<Line<'static>> {
    let theme = cx.theme;
    let (label, style) = match m.kind {
        MessageKind::Prompt => ("Prompt", theme.prompt),
        MessageKind::AgentText => ("Agent", theme.title),
        MessageKind::Thinking => ("Thinking", theme.thinking),
    };
    let mut head = vec![Span::styled(label, style)];
    if let Some(ts) = m.timestamp {
        head.push(Span::styled(format!("  {}", ts.to_rfc3339()), theme.dim));
    }
    head.push(Span::styled(format!("  line {}", m.line), theme.dim));
    if !m.done {
        head.push(Span::styled("  streaming…", theme.status_running));
    }
    let mut lines = vec![Line::from(head), Line::default()];
    if m.redacted {
        lines.push(Line::from(Span::styled(
            "[redacted by the sender]",
            theme.dim,
        )));
    }
    let body = match m.kind {
        // Agent replies are markdown: drawn by the web_content (markdown) renderer.
        MessageKind::AgentText if !m.redacted => {
            let text = Value::String(m.text.clone());
            render_output(&OutputType::WebContent, &text, "", &Value::Null, cx).lines
        }
        MessageKind::Thinking => build_plain_lines(&m.text, cx)
            .lines
            .into_iter()
            .map(|l| l.patch_style(theme.thinking))
            .collect(),
        MessageKind::AgentText | MessageKind::Prompt => build_plain_lines(&m.text, cx).lines,
    };
    lines.extend(body);
    lines
}

/// Metadata key of a fork row's detail sentence in a detail copy of the frame (never written
/// to the session or any output).
const FORK_SENTENCE: &str = "rawpv_fork_sentence";

/// A copy of event `f` (item `item`) for the detail: a fork point's row carries its sentence
/// (`crate::session::forks::sentence`, read from the session now, so it is true when shown), a
/// compaction the summary of the record after it (`x-claude-code.compact-summary`).
/// A deferred payload (`Session::defer_events`) is read back here (one positional read and a
/// parse of the one line).
fn with_fork_sentence(session: &Session, item: usize, f: &Frame) -> Frame {
    let mut f = f.clone();
    if let crate::protocol::Body::Generic(m) = &f.body
        && m.contains_key(crate::session::DEFERRED_EVENT)
        && let Value::Object(p) = session.event_payload(&f)
    {
        f.body = crate::protocol::Body::Generic(p);
    }
    // A compaction's summary is Claude Code's next record: its detail shows it (issue 20).
    if f.frame_type == crate::protocol::FrameType::SessionCompacted
        && let crate::protocol::Body::Generic(m) = &mut f.body
        && !m.contains_key("summary")
        && let Some(next) = session
            .items
            .iter()
            .skip(item + 1)
            .take(8)
            .take_while(|it| matches!(it, Item::Event(_)))
            .find_map(|it| match it {
                Item::Event(n) if n.frame_type.as_str().ends_with(".compact-summary") => Some(n),
                _ => None,
            })
        && let Some(t) = next.payload_json().get("text").and_then(Value::as_str)
    {
        m.insert("summary".into(), Value::String(t.to_owned()));
    }
    if crate::session::forks::is_fork_row(&f)
        && let Some(s) = crate::session::forks::sentence(session, item)
    {
        f.envelope
            .metadata
            .insert(FORK_SENTENCE.into(), Value::String(s));
    }
    f
}

fn build_event(f: &Frame, cx: &RenderCtx<'_>) -> Vec<Line<'static>> {
    if let Some(Value::String(s)) = f.envelope.metadata.get(FORK_SENTENCE) {
        let theme = cx.theme;
        let mut head = vec![Span::styled("fork point".to_owned(), theme.title)];
        if let Some(ts) = f.envelope.timestamp {
            head.push(Span::styled(format!("  {}", ts.to_rfc3339()), theme.dim));
        }
        head.push(Span::styled(format!("  line {}", f.origin.line), theme.dim));
        let mut lines = vec![Line::from(head), Line::default()];
        lines.extend(s.split(". ").map(|p| {
            let p = p.trim_end_matches('.');
            Line::from(format!("{}.", visible(p)))
        }));
        return lines;
    }
    let theme = cx.theme;
    let mut head = vec![Span::styled(visible(f.frame_type.as_str()), theme.title)];
    if let Some(ts) = f.envelope.timestamp {
        head.push(Span::styled(format!("  {}", ts.to_rfc3339()), theme.dim));
    }
    head.push(Span::styled(format!("  line {}", f.origin.line), theme.dim));
    let mut lines = vec![Line::from(head), Line::default()];
    let payload = f.payload_json();
    if let Some(more) = build_compaction_lines(f, &payload, cx) {
        lines.extend(more);
        lines.push(Line::default());
        lines.push(section("Record", theme));
        let mut json = f.to_json();
        if let Some(Value::Object(p)) = json.get_mut("payload") {
            for k in ["summary", "text"] {
                if p.get(k).is_some_and(Value::is_string) {
                    p.insert(k.into(), Value::String("(shown above)".into()));
                }
            }
        }
        lines.extend(render_output(&OutputType::Structured, &json, "", &Value::Null, cx).lines);
        return lines;
    }
    if crate::session::query::is_image_row(f) {
        // A placeholder, never the bytes (issue 20); the keys read them back from the file.
        lines.push(Line::from(crate::render::ansi::visible_plain(
            &crate::session::summary::event_line(f),
        )));
        lines.push(Line::from(Span::styled(
            "i saves it to a file, I opens it in the system viewer",
            theme.hint,
        )));
        lines.push(Line::default());
        lines.push(section("Record", theme));
    }
    if crate::session::hooks::is_hook(f) {
        match crate::session::hooks::run_of(f) {
            Some(run) => lines.extend(build_hook_lines(&[run], cx, true).into_iter().skip(1)),
            None => lines.push(Line::from(crate::render::ansi::visible_plain(
                &crate::fmt::words::hook_words(&payload),
            ))),
        }
        if let Some(id) = payload.get("invocation_id").and_then(Value::as_str) {
            lines.push(Line::from(Span::styled(
                format!("ran around call {}", visible(id)),
                theme.dim,
            )));
        }
        lines.push(Line::default());
        lines.push(section("Record", theme));
    }
    let mut json = f.to_json();
    if crate::session::hooks::is_hook(f)
        && let Some(Value::Object(p)) = json.get_mut("payload")
    {
        // What the hook printed is drawn above; its escaped copies would only repeat it.
        let shown = |m: &mut serde_json::Map<String, Value>, keys: &[&str]| {
            for k in keys {
                if m.get(*k)
                    .and_then(Value::as_str)
                    .is_some_and(|t| !t.is_empty())
                {
                    m.insert((*k).to_owned(), Value::String("(shown above)".into()));
                }
            }
        };
        shown(p, &["output", "stderr", "content"]);
        if let Some(Value::Object(a)) = p.get_mut("attachment") {
            shown(a, &["stdout", "stderr", "content"]);
        }
    }
    if !crate::session::hooks::is_hook(f)
        && let Some((key, text)) = event_text(&payload)
    {
        // System, slash-command and hook text is terminal output: SGR kept as style, every
        // other sequence dropped (the `/context` grid, synchronized-output modes). The record
        // below says where it went instead of repeating it as escaped JSON.
        let n = text.lines().count();
        lines.extend(crate::render::text::build_ansi_lines(&text, cx).lines);
        lines.push(Line::default());
        lines.push(section("Record", theme));
        if let Some(Value::Object(p)) = json.get_mut("payload") {
            p.insert(
                key.to_owned(),
                Value::String(format!("(shown above: {})", crate::fmt::plural(n, "line"))),
            );
        }
    }
    lines.extend(render_output(&OutputType::Structured, &json, "", &Value::Null, cx).lines);
    lines
}

/// A compaction's detail (issue 20): what triggered it and how many tokens the context held
/// before, then its summary as markdown (a `session.compacted` carrying `summary`, or Claude
/// Code's summary record after the boundary, `x-claude-code.compact-summary`). `None` for other
/// events.
fn build_compaction_lines(
    f: &Frame,
    payload: &Value,
    cx: &RenderCtx<'_>,
) -> Option<Vec<Line<'static>>> {
    let theme = cx.theme;
    let compacted = matches!(
        f.frame_type,
        crate::protocol::FrameType::SessionCompacted
            | crate::protocol::FrameType::ControlSessionCompact
    );
    let summary_row = f.frame_type.as_str().ends_with(".compact-summary");
    if !compacted && !summary_row {
        return None;
    }
    let mut lines = Vec::new();
    let s = |k: &str| payload.get(k).and_then(Value::as_str);
    if compacted {
        let mut facts = vec![Span::styled("compaction", theme.title)];
        if let Some(t) = s("trigger") {
            facts.push(Span::raw(format!("  trigger {}", visible(t))));
        }
        if let Some(n) = payload.get("pre_tokens").and_then(Value::as_u64) {
            facts.push(Span::raw(format!("  {n} tokens before")));
        }
        lines.push(Line::from(facts));
        if let Some(c) = s("content").filter(|c| !c.trim().is_empty()) {
            lines.push(Line::from(Span::styled(visible(c), theme.dim)));
        }
    }
    let text = if summary_row { s("text") } else { s("summary") };
    match text {
        Some(t) if !t.trim().is_empty() => {
            lines.push(Line::default());
            lines.push(section("Summary", theme));
            let md = Value::String(t.to_owned());
            lines.extend(render_output(&OutputType::WebContent, &md, "", &Value::Null, cx).lines);
        }
        _ if compacted => lines.push(Line::from(Span::styled(
            "its summary, when recorded, is the next row",
            theme.dim,
        ))),
        _ => {}
    }
    Some(lines)
}

/// The text an event row carries for a reader (`text`, `content`, `message`, `summary`) and its
/// key, without Claude Code's command-output tags; `None` when it has none.
fn event_text(payload: &Value) -> Option<(&'static str, String)> {
    let (key, raw) = ["text", "content", "message", "summary"]
        .iter()
        .find_map(|k| payload.get(*k).and_then(Value::as_str).map(|v| (*k, v)))?;
    let t = raw.trim_start();
    let text = [
        "local-command-stdout",
        "local-command-stderr",
        "bash-stdout",
        "bash-stderr",
    ]
    .iter()
    .find_map(|tag| {
        t.starts_with(&format!("<{tag}>"))
            .then(|| crate::fmt::words::tag(t, tag).unwrap_or(""))
    })
    .unwrap_or(raw);
    (!text.trim().is_empty()).then(|| (key, text.trim_end().to_owned()))
}
