//! Tool catalog panel: the current `tool.catalog.publish` (SPEC 3.5) as a table, the selected
//! tool's details and usage, catalog-wide diagnostics and the publish history.
//!
//! Who calls it: `crate::ui::draw` when the catalog tab is shown (`c`), and the widget snapshot
//! tests. [`CatalogView`] borrows the session; [`CatalogState`] is the mutable part (selected tool,
//! detail scroll) plus a usage cache.
//!
//! Layout inside `area` (the caller draws the border):
//!
//! ```text
//! current catalog · publish 2 · 09:17:41 · line 61 · 11 tools
//!  NAME        CATEGORY   STATUS         APPR OUTPUT      VERSION      ← table (selected row
//! ▶Bash        shell      ● available    ✓    text        1.4.0          kept visible)
//! ─ Bash ─────────────────────────────────────────────────             ← details, scrolled by
//! description, status_description, diagnostics by severity, usage,       `CatalogState::scroll`
//! input_schema tree, catalog-wide diagnostics, publish history
//! ```
//!
//! Sessions (SPEC §6, issue 18): the panel shows one session's catalog, publish history and tool
//! usage: the selected feed row's session (`CatalogState::session`, set by the app before each
//! draw); with more than one session the title names it (`current catalog of session 6f1c2b1e… ·
//! publish 2 · …`).
//!
//! Invariants: draw cost is bounded by the catalog (tools, diagnostics, last
//! [`MAX_HISTORY`] publishes of [`MAX_CHANGES_SHOWN`] changes each) and the visible rows, never by the session's invocations: usage
//! numbers are computed once per (tool, invocation count, running count) and cached in the state.
//! Untrusted text goes through [`visible`]. Colours come from the [`Theme`] only.
//!
//! Size (about 920 lines): one panel with one layout: the tool table, the selected tool's
//! details, its usage statistics and the publish history, whose column widths and rows depend
//! on each other; the statistics and history are pure functions the tests call directly.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::StatefulWidget;

use crate::protocol::{
    CatalogDiagnostic, CatalogPublish, CatalogTool, Severity, Timestamp, ToolStatus,
};
use crate::render::text::visible;
use crate::render::{RenderCtx, json::build_json_lines};
use crate::session::{CallStatus, Publish, Session};
use crate::theme::Theme;

/// Publishes shown in the history (the most recent ones).
pub const MAX_HISTORY: usize = 50;
/// Changes listed per publish in the history at most (a "… N more" line follows).
pub const MAX_CHANGES_SHOWN: usize = 20;
/// Lines of one tool's `input_schema` tree shown at most.
pub const MAX_SCHEMA_LINES: usize = 200;

/// How one tool was used in the session (all invocations with its name, subagents included).
/// `Eq`: the durations are finite (non-finite ones are skipped), so equality is reflexive.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolUsage {
    pub calls: usize,
    /// Finished with `error` (or a status outside the spec).
    pub errors: usize,
    pub timeouts: usize,
    pub cancelled: usize,
    /// Still waiting for a result.
    pub open: usize,
    /// Median run time in ms over calls with a known duration.
    pub median_ms: Option<f64>,
    /// 95th percentile (nearest rank) run time in ms.
    pub p95_ms: Option<f64>,
}

impl ToolUsage {
    /// Computes the usage of `tool` over every invocation: O(invocations), so callers cache it
    /// (see [`CatalogState`]).
    /// Only the calls of session `sid` count (SPEC §6: the panel shows one session's catalog).
    pub fn compute(session: &Session, sid: u32, tool: &str) -> Self {
        let mut u = Self::default();
        let mut durations = Vec::new();
        let calls = session.invocations.iter();
        for inv in calls.filter(|i| i.session == sid && i.tool_name == tool) {
            u.calls += 1;
            match &inv.status {
                CallStatus::Requested | CallStatus::Streaming => u.open += 1,
                CallStatus::Failed | CallStatus::Other(_) => u.errors += 1,
                CallStatus::TimedOut => u.timeouts += 1,
                CallStatus::Cancelled => u.cancelled += 1,
                CallStatus::Succeeded => {}
            }
            if !inv.status.is_open()
                && let Some(d) = inv.duration_ms().filter(|d| d.is_finite() && *d >= 0.0)
            {
                durations.push(d);
            }
        }
        durations.sort_by(f64::total_cmp);
        u.median_ms = percentile(&durations, 50.0);
        u.p95_ms = percentile(&durations, 95.0);
        u
    }
}

impl Eq for ToolUsage {}

/// Nearest-rank percentile of sorted values; `None` when empty.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// What changed from one publish to the next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogChange {
    Added(String),
    Removed(String),
    Status {
        tool: String,
        from: ToolStatus,
        to: ToolStatus,
    },
    /// A diagnostic (severity, tool, code) that was not in the previous publish.
    DiagnosticAdded(String),
    /// A diagnostic of the previous publish that is gone.
    DiagnosticRemoved(String),
}

fn diag_key(d: &CatalogDiagnostic) -> String {
    format!(
        "{} {}{}",
        d.severity.as_ref().map_or("?", Severity::as_str),
        d.tool_name
            .as_deref()
            .map(|t| format!("{t} "))
            .unwrap_or_default(),
        d.code.as_deref().unwrap_or("?")
    )
}

/// The changes from `prev` (none for the first publish) to `next`, in `next`'s tool order:
/// status transitions and added tools, then removed tools, then diagnostics. O(tools +
/// diagnostics).
pub fn publish_changes(prev: Option<&CatalogPublish>, next: &CatalogPublish) -> Vec<CatalogChange> {
    let Some(prev) = prev else {
        return Vec::new();
    };
    let mut before: HashMap<&str, &CatalogTool> = HashMap::with_capacity(prev.tools.len());
    for p in &prev.tools {
        before.entry(p.name.as_str()).or_insert(p);
    }
    let after: HashSet<&str> = next.tools.iter().map(|t| t.name.as_str()).collect();
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for t in &next.tools {
        if !seen.insert(t.name.as_str()) {
            continue;
        }
        match before.get(t.name.as_str()) {
            None => out.push(CatalogChange::Added(t.name.clone())),
            Some(p) => {
                let (from, to) = (p.effective_status(), t.effective_status());
                if from != to {
                    out.push(CatalogChange::Status {
                        tool: t.name.clone(),
                        from,
                        to,
                    });
                }
            }
        }
    }
    let mut gone = HashSet::new();
    for p in &prev.tools {
        if !after.contains(p.name.as_str()) && gone.insert(p.name.as_str()) {
            out.push(CatalogChange::Removed(p.name.clone()));
        }
    }
    let before: Vec<String> = prev.diagnostics.iter().map(diag_key).collect();
    let after: Vec<String> = next.diagnostics.iter().map(diag_key).collect();
    let (bset, aset): (HashSet<&String>, HashSet<&String>) =
        (before.iter().collect(), after.iter().collect());
    for k in &after {
        if !bset.contains(k) {
            out.push(CatalogChange::DiagnosticAdded(k.clone()));
        }
    }
    for k in &before {
        if !aset.contains(k) {
            out.push(CatalogChange::DiagnosticRemoved(k.clone()));
        }
    }
    out
}

/// The publishes of session `sid`, in order (SPEC §6: each session has its own history).
pub fn publishes_of(session: &Session, sid: u32) -> Vec<&Publish> {
    let own = &session.sessions.get(sid).publishes;
    own.iter()
        .filter_map(|&i| session.publishes.get(i as usize))
        .collect()
}

/// The changes of each of the last [`MAX_HISTORY`] publishes of session `sid` against the one
/// before it.
pub fn history_changes(session: &Session, sid: u32) -> Vec<Vec<CatalogChange>> {
    let own = publishes_of(session, sid);
    let n = own.len();
    (n.saturating_sub(MAX_HISTORY)..n)
        .map(|i| {
            let prev = i.checked_sub(1).map(|j| &own[j].catalog);
            publish_changes(prev, &own[i].catalog)
        })
        .collect()
}

/// Cache key of [`ToolUsage`]: session, tool name, invocation count, running count. Any new
/// invocation or finished one changes it; stream chunks do not.
type UsageKey = (u32, String, usize, u64);

/// Cache key of [`history_changes`]: the session and the number of its publishes.
type HistoryKey = (u32, usize);

/// View state of the catalog panel: plain data (part of `ViewState`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CatalogState {
    /// Index of the selected tool in the current catalog's `tools` (clamped when drawn).
    pub selected: usize,
    /// Scroll of the details section, in lines.
    pub scroll: usize,
    /// Offset of the table's first visible row (kept so the selection stays visible).
    pub offset: usize,
    /// The session whose catalog is shown (`Session::sessions`): the selected feed row's, set by
    /// the app before each draw (SPEC §6).
    pub session: u32,
    /// Columns the table and the details are scrolled sideways while wrap is off (`←`/`→`,
    /// `<`/`>`); the title and the table's marker column stay.
    pub hscroll: usize,
}

/// What the catalog panel computes from the session and keeps between frames (owned by the
/// app; safe to drop at any time).
#[derive(Debug, Clone, Default)]
pub struct CatalogCache {
    usage: Option<(UsageKey, ToolUsage)>,
    /// [`history_changes`] and the session and number of its publishes it was computed for.
    history: Option<(HistoryKey, Vec<Vec<CatalogChange>>)>,
}

impl CatalogState {
    /// Selects the next tool (stops at the last).
    pub fn select_next(&mut self, session: &Session) {
        let n = session
            .catalog_of(self.session)
            .map_or(0, |c| c.tools.len());
        if self.selected + 1 < n {
            self.selected += 1;
            self.scroll = 0;
        }
    }

    /// Selects the previous tool.
    pub fn select_prev(&mut self) {
        if self.selected > 0 {
            self.selected -= 1;
            self.scroll = 0;
        }
    }

    /// Name of the selected tool, if a catalog exists.
    pub fn selected_tool<'s>(&self, session: &'s Session) -> Option<&'s str> {
        let tools = &session.catalog_of(self.session)?.tools;
        tools
            .get(self.selected.min(tools.len().saturating_sub(1)))
            .map(|t| t.name.as_str())
    }
}

impl CatalogCache {
    /// The usage of `tool`, from the cache when the session has not changed in a way that
    /// matters.
    pub fn usage(&mut self, session: &Session, sid: u32, tool: &str) -> &ToolUsage {
        let key: UsageKey = (
            sid,
            tool.to_owned(),
            session.invocations.len(),
            session.counts.running,
        );
        if self.usage.as_ref().is_none_or(|(k, _)| *k != key) {
            self.usage = Some((key, ToolUsage::compute(session, sid, tool)));
        }
        match &self.usage {
            Some((_, u)) => u,
            None => unreachable_usage(),
        }
    }
}

/// Never reached (the cache was just filled); a static default keeps this panic-free.
fn unreachable_usage() -> &'static ToolUsage {
    static EMPTY: ToolUsage = ToolUsage {
        calls: 0,
        errors: 0,
        timeouts: 0,
        cancelled: 0,
        open: 0,
        median_ms: None,
        p95_ms: None,
    };
    &EMPTY
}

/// The catalog panel over a session.
#[derive(Debug, Clone, Copy)]
pub struct CatalogView<'a> {
    session: &'a Session,
    theme: &'a Theme,
}

impl<'a> CatalogView<'a> {
    pub fn new(session: &'a Session, theme: &'a Theme) -> Self {
        Self { session, theme }
    }
}

/// Style of a tool status badge.
pub fn status_style(theme: &Theme, status: &ToolStatus) -> Style {
    match status {
        ToolStatus::Available => theme.status_ok,
        ToolStatus::Degraded => theme.status_running,
        ToolStatus::Unavailable => theme.status_failed,
        ToolStatus::Unknown(_) => theme.dim,
    }
}

/// Badge text of a tool status (`● available`, `◐ degraded`, `✕ unavailable`).
pub fn status_badge(status: &ToolStatus) -> String {
    let mark = match status {
        ToolStatus::Available => '●',
        ToolStatus::Degraded => '◐',
        ToolStatus::Unavailable => '✕',
        ToolStatus::Unknown(_) => '?',
    };
    format!("{mark} {}", visible(status.as_str()))
}

/// Style of a diagnostic severity.
pub fn severity_style(theme: &Theme, severity: Option<&Severity>) -> Style {
    match severity {
        Some(Severity::Info) => theme.finding_info,
        Some(Severity::Warning) => theme.finding_warning,
        Some(Severity::Error) => theme.finding_error,
        Some(Severity::Fatal) => theme
            .finding_error
            .add_modifier(Modifier::BOLD | Modifier::REVERSED),
        Some(Severity::Unknown(_)) | None => theme.dim,
    }
}

/// Columns (display width) of a string, for the table layout.
fn cols(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// Column widths of the tool table; 0 hides a column (narrow panels drop category, then
/// output, then approval, then diagnostics). VERSION takes the rest of the row.
struct Widths {
    name: usize,
    category: usize,
    status: usize,
    appr: usize,
    output: usize,
    diag: usize,
}

impl Widths {
    /// Columns taken by the fixed columns (marker and separators included).
    fn used(&self) -> usize {
        1 + [
            self.name,
            self.category,
            self.status,
            self.appr,
            self.output,
            self.diag,
        ]
        .iter()
        .filter(|w| **w > 0)
        .map(|w| w + 1)
        .sum::<usize>()
    }
}

/// Pads `text` to `w` columns plus a separator; nothing when the column is hidden.
fn cell(text: &str, w: usize) -> String {
    if w == 0 {
        String::new()
    } else {
        format!("{} ", crate::fmt::fit(text, w))
    }
}

fn widths(tools: &[CatalogTool], width: u16) -> Widths {
    let name = tools
        .iter()
        .map(|t| cols(&visible(&t.name)))
        .max()
        .unwrap_or(4)
        .clamp(4, 28);
    let mut w = Widths {
        name,
        category: 15,
        status: 13,
        appr: 4,
        output: 12,
        diag: 9,
    };
    let avail = usize::from(width);
    // Narrow panels: drop category, output, approval; then shorten names (to 12 columns at
    // least); then drop diagnostics; then shorten names further. VERSION gets what is left.
    for step in 0..6 {
        if w.used() <= avail {
            break;
        }
        match step {
            0 => w.category = 0,
            1 => w.output = 0,
            2 => w.appr = 0,
            3 => w.name = avail.saturating_sub(w.used() - w.name).max(12).min(w.name),
            4 => w.diag = 0,
            _ => w.name = avail.saturating_sub(w.used() - w.name).max(4).min(w.name),
        }
    }
    w
}

fn header_line(w: &Widths, theme: &Theme) -> Line<'static> {
    let text = format!(
        "{}{}{}{}{}{}VERSION",
        cell("NAME", w.name),
        cell("CATEGORY", w.category),
        cell("STATUS", w.status),
        cell("APPR", w.appr),
        cell("OUTPUT", w.output),
        cell("DIAG", w.diag)
    );
    let style = theme.dim.add_modifier(Modifier::BOLD);
    // The marker column first, a span of its own (it stays when the table scrolls sideways).
    Line::from(vec![Span::styled(" ", style), Span::styled(text, style)])
}

/// The most severe diagnostic about `tool` and how many there are (`fatal ×2`).
fn worst_diagnostic<'c>(
    catalog: &'c CatalogPublish,
    tool: &str,
) -> Option<(Option<&'c Severity>, usize)> {
    let mut worst: Option<Option<&Severity>> = None;
    let mut n = 0;
    for d in catalog
        .diagnostics
        .iter()
        .filter(|d| d.tool_name.as_deref() == Some(tool))
    {
        n += 1;
        let s = d.severity.as_ref();
        if worst.is_none_or(|w| severity_rank(s) < severity_rank(w)) {
            worst = Some(s);
        }
    }
    worst.map(|w| (w, n))
}

fn tool_row(
    t: &CatalogTool,
    catalog: &CatalogPublish,
    w: &Widths,
    selected: bool,
    theme: &Theme,
) -> Line<'static> {
    let status = t.effective_status();
    let base = if selected { theme.selected } else { theme.text };
    let marker = if selected { "▶" } else { " " };
    let approval = if t.requires_approval == Some(true) {
        "✓"
    } else {
        ""
    };
    let output = t
        .output_type
        .as_ref()
        .map_or_else(|| "—".to_owned(), |o| visible(o.as_str()));
    let category = t
        .category
        .as_ref()
        .map_or_else(|| "—".to_owned(), |c| visible(c.as_str()));
    let version = t.version.as_deref().map(visible).unwrap_or_default();
    let badge_style = if selected {
        base
    } else {
        status_style(theme, &status)
    };
    Line::from(vec![
        Span::styled(marker.to_owned(), base),
        Span::styled(cell(&visible(&t.name), w.name), base),
        Span::styled(cell(&category, w.category), base),
        Span::styled(cell(&status_badge(&status), w.status), badge_style),
        Span::styled(cell(approval, w.appr), base),
        Span::styled(cell(&output, w.output), base),
        diag_cell(catalog, &t.name, w.diag, selected, theme),
        Span::styled(version, base),
    ])
}

fn diag_cell(
    catalog: &CatalogPublish,
    tool: &str,
    width: usize,
    selected: bool,
    theme: &Theme,
) -> Span<'static> {
    let base = if selected { theme.selected } else { theme.text };
    if width == 0 {
        return Span::raw("");
    }
    match worst_diagnostic(catalog, tool) {
        None => Span::styled(cell("", width), base),
        Some((sev, n)) => {
            let name = sev.map_or("?", Severity::as_str);
            let text = if n > 1 {
                format!("{} ×{n}", visible(name))
            } else {
                visible(name)
            };
            let style = if selected {
                base
            } else {
                severity_style(theme, sev)
            };
            Span::styled(cell(&text, width), style)
        }
    }
}

fn section(title: &str, theme: &Theme) -> Line<'static> {
    Line::from(Span::styled(title.to_owned(), theme.title))
}

fn diag_line(d: &CatalogDiagnostic, theme: &Theme) -> Line<'static> {
    let sev = d.severity.as_ref().map_or("?", Severity::as_str);
    Line::from(vec![
        Span::raw("  "),
        Span::styled(
            format!("{:<7}", visible(sev)),
            severity_style(theme, d.severity.as_ref()),
        ),
        Span::raw(" "),
        Span::styled(visible(d.code.as_deref().unwrap_or("?")), theme.title),
        Span::raw(" "),
        Span::raw(visible(d.message.as_deref().unwrap_or(""))),
    ])
}

/// Severity order for display: fatal first.
fn severity_rank(s: Option<&Severity>) -> u8 {
    match s {
        Some(Severity::Fatal) => 0,
        Some(Severity::Error) => 1,
        Some(Severity::Warning) => 2,
        Some(Severity::Info) => 3,
        Some(Severity::Unknown(_)) | None => 4,
    }
}

/// `{sep}line N`, or nothing for line 0 (unknown, e.g. a catalog an importer derived).
fn line_part(line: u64, sep: &str) -> String {
    if line == 0 {
        String::new()
    } else {
        format!("{sep}line {line}")
    }
}

fn usage_line(u: &ToolUsage, theme: &Theme) -> Line<'static> {
    let mut text = format!(
        "  {} · {} · {} · {} cancelled",
        crate::fmt::plural(u.calls, "call"),
        crate::fmt::plural(u.errors, "error"),
        crate::fmt::plural(u.timeouts, "timeout"),
        u.cancelled
    );
    if u.open > 0 {
        let _ = write!(text, " · {} open", u.open);
    }
    if let (Some(m), Some(p)) = (u.median_ms, u.p95_ms) {
        let _ = write!(
            text,
            " · median {} · p95 {}",
            crate::fmt::duration_ms(m),
            crate::fmt::duration_ms(p)
        );
    }
    let style = if u.errors + u.timeouts > 0 {
        theme.finding_warning
    } else {
        theme.text
    };
    Line::from(Span::styled(text, style))
}

fn change_spans(c: &CatalogChange, theme: &Theme) -> Vec<Span<'static>> {
    match c {
        CatalogChange::Added(t) => vec![Span::styled(format!("+ {}", visible(t)), theme.diff_add)],
        CatalogChange::Removed(t) => {
            vec![Span::styled(format!("− {}", visible(t)), theme.diff_del)]
        }
        CatalogChange::Status { tool, from, to } => vec![
            Span::raw(format!("{} ", visible(tool))),
            Span::styled(visible(from.as_str()), status_style(theme, from)),
            Span::raw(" → "),
            Span::styled(visible(to.as_str()), status_style(theme, to)),
        ],
        CatalogChange::DiagnosticAdded(k) => {
            vec![Span::styled(format!("+ diag {}", visible(k)), theme.dim)]
        }
        CatalogChange::DiagnosticRemoved(k) => {
            vec![Span::styled(format!("− diag {}", visible(k)), theme.dim)]
        }
    }
}

/// The details section's lines for the selected tool plus the catalog-wide sections.
/// `own` is the shown session's publishes ([`publishes_of`]), `history` their [`history_changes`].
fn detail_lines(
    own: &[&Publish],
    catalog: &CatalogPublish,
    tool: Option<&CatalogTool>,
    usage: Option<&ToolUsage>,
    history: &[Vec<CatalogChange>],
    theme: &Theme,
    width: u16,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Some(t) = tool {
        let name = visible(&t.name);
        let rule = "─".repeat(usize::from(width).saturating_sub(cols(&name) + 3));
        lines.push(Line::from(vec![
            Span::styled("─ ", theme.border),
            Span::styled(name, theme.title),
            Span::styled(format!(" {rule}"), theme.border),
        ]));
        match t.description.as_deref() {
            Some(d) => lines.extend(d.lines().map(|l| Line::from(visible(l)))),
            None => lines.push(Line::from(Span::styled("(no description)", theme.dim))),
        }
        let status = t.effective_status();
        let mut st = vec![
            Span::styled("status ", theme.dim),
            Span::styled(status_badge(&status), status_style(theme, &status)),
        ];
        // SPEC 3.5: without `status_description` the UI shows no reason.
        if let Some(why) = t.status_description.as_deref() {
            st.push(Span::raw(format!(" — {}", visible(why))));
        }
        lines.push(Line::from(st));
        let mut diags: Vec<&CatalogDiagnostic> = catalog
            .diagnostics
            .iter()
            .filter(|d| d.tool_name.as_deref() == Some(t.name.as_str()))
            .collect();
        diags.sort_by_key(|d| severity_rank(d.severity.as_ref()));
        if !diags.is_empty() {
            lines.push(section("diagnostics", theme));
            lines.extend(diags.into_iter().map(|d| diag_line(d, theme)));
        }
        if let Some(u) = usage {
            lines.push(section("usage in this session", theme));
            lines.push(usage_line(u, theme));
        }
        if let Some(schema) = &t.input_schema {
            lines.push(section("input_schema", theme));
            let mut cx = RenderCtx::new(width.saturating_sub(2), theme);
            cx.highlight = false;
            cx.expand_depth = 8;
            let rendered = build_json_lines(schema, &cx);
            let n = rendered.lines.len();
            for l in rendered.lines.into_iter().take(MAX_SCHEMA_LINES) {
                let mut spans = vec![Span::raw("  ")];
                spans.extend(l.spans);
                lines.push(Line::from(spans));
            }
            if n > MAX_SCHEMA_LINES {
                lines.push(Line::from(Span::styled(
                    format!("  … {} more lines", n - MAX_SCHEMA_LINES),
                    theme.dim,
                )));
            }
        }
        lines.push(Line::default());
    }
    let mut wide: Vec<&CatalogDiagnostic> = catalog
        .diagnostics
        .iter()
        .filter(|d| d.tool_name.is_none())
        .collect();
    wide.sort_by_key(|d| severity_rank(d.severity.as_ref()));
    lines.push(section("catalog diagnostics", theme));
    if wide.is_empty() {
        lines.push(Line::from(Span::styled("  (none)", theme.dim)));
    }
    lines.extend(wide.into_iter().map(|d| diag_line(d, theme)));
    lines.push(Line::default());
    lines.push(section("publish history", theme));
    let n = own.len();
    let start = n.saturating_sub(MAX_HISTORY);
    if start > 0 {
        lines.push(Line::from(Span::styled(
            format!("  … {start} earlier publishes"),
            theme.dim,
        )));
    }
    for (i, p) in own.iter().enumerate().skip(start) {
        let when = p
            .timestamp
            .map_or_else(|| "--:--:--".to_owned(), Timestamp::clock);
        let mut head = vec![Span::styled(
            format!("  #{} {when}{}", i + 1, line_part(p.line, " ")),
            theme.dim,
        )];
        if p.derived {
            head.push(Span::styled(" (derived)", theme.dim));
        }
        let changes = history.get(i - start).map_or(&[][..], Vec::as_slice);
        if i == 0 {
            head.push(Span::raw(format!(
                "  {}, {}",
                crate::fmt::plural(p.catalog.tools.len(), "tool"),
                crate::fmt::plural(p.catalog.diagnostics.len(), "diagnostic")
            )));
        } else if changes.is_empty() {
            head.push(Span::styled("  no change", theme.dim));
        }
        lines.push(Line::from(head));
        for c in changes.iter().take(MAX_CHANGES_SHOWN) {
            let mut spans = vec![Span::raw("      ")];
            spans.extend(change_spans(c, theme));
            lines.push(Line::from(spans));
        }
        if changes.len() > MAX_CHANGES_SHOWN {
            lines.push(Line::from(Span::styled(
                format!("      … {} more changes", changes.len() - MAX_CHANGES_SHOWN),
                theme.dim,
            )));
        }
    }
    lines
}

/// Rows of the tool table in a panel `height` rows high: at most half the panel, at least 3
/// when there are tools, never more than fit below the title and header.
fn table_rows(height: u16, tools: usize) -> usize {
    let half = usize::from((height / 2).saturating_sub(2).max(3));
    tools.min(half).min(usize::from(height.saturating_sub(2)))
}

impl CatalogState {
    /// Brings the state up to date for drawing into `area`: clamps the selection, keeps it
    /// visible in the table, fills the usage cache and clamps the detail scroll. Called by the
    /// app before each draw (and by the `StatefulWidget` impl).
    pub fn prepare(
        &mut self,
        cache: &mut CatalogCache,
        session: &Session,
        theme: &Theme,
        area: Rect,
    ) {
        let Some(catalog) = session.catalog_of(self.session) else {
            self.selected = 0;
            self.offset = 0;
            self.scroll = 0;
            return;
        };
        let n = catalog.tools.len();
        self.selected = self.selected.min(n.saturating_sub(1));
        let rows = table_rows(area.height, n);
        if rows > 0 {
            if self.selected < self.offset {
                self.offset = self.selected;
            } else if self.selected >= self.offset + rows {
                self.offset = self.selected + 1 - rows;
            }
        }
        self.offset = self.offset.min(n.saturating_sub(rows));
        let sid = self.session;
        let key = (sid, session.sessions.get(sid).publishes.len());
        if cache.history.as_ref().is_none_or(|(k, _)| *k != key) {
            cache.history = Some((key, history_changes(session, sid)));
        }
        let tool = catalog.tools.get(self.selected);
        let usage = tool.map(|t| cache.usage(session, sid, &t.name).clone());
        let history = cache
            .history
            .as_ref()
            .map_or(&[][..], |(_, h)| h.as_slice());
        let lines = detail_lines(
            &publishes_of(session, sid),
            catalog,
            tool,
            usage.as_ref(),
            history,
            theme,
            area.width,
        );
        let height = usize::from(area.height).saturating_sub(2 + rows);
        self.scroll = self.scroll.min(lines.len().saturating_sub(height));
    }

    /// Display columns of the widest table row or details line in a panel `width` columns wide
    /// (what sideways scrolling stops at). Bounded by the catalog, like a draw.
    pub fn widest(&self, session: &Session, theme: &Theme, width: u16) -> usize {
        let Some(catalog) = session.catalog_of(self.session) else {
            return 0;
        };
        let w = widths(&catalog.tools, width);
        let selected = self.selected.min(catalog.tools.len().saturating_sub(1));
        let rows = (catalog.tools.iter().enumerate())
            .map(|(k, t)| tool_row(t, catalog, &w, k == selected, theme).width());
        let tool = catalog.tools.get(selected);
        let usage = tool.map(|t| ToolUsage::compute(session, self.session, &t.name));
        let history = history_changes(session, self.session);
        let lines = detail_lines(
            &publishes_of(session, self.session),
            catalog,
            tool,
            usage.as_ref(),
            &history,
            theme,
            width,
        );
        rows.chain(lines.iter().map(Line::width)).max().unwrap_or(0)
    }

    /// The tool index shown on screen row `row` of a panel drawn in `area` (for mouse clicks).
    pub fn index_at(&self, session: &Session, area: Rect, row: u16) -> Option<usize> {
        let n = session.catalog_of(self.session)?.tools.len();
        // Title and header rows come first.
        let k = usize::from(row.checked_sub(area.y.checked_add(2)?)?);
        (k < table_rows(area.height, n))
            .then_some(self.offset + k)
            .filter(|&i| i < n)
    }
}

impl CatalogCache {
    /// The cached usage when it is about `tool` (possibly a little stale); else computed now.
    fn usage_for_draw(&self, session: &Session, sid: u32, tool: &str) -> ToolUsage {
        match &self.usage {
            Some((k, u)) if k.0 == sid && k.1 == tool => u.clone(),
            _ => ToolUsage::compute(session, sid, tool),
        }
    }
}

impl CatalogView<'_> {
    /// Draws the panel for a state already [`CatalogState::prepare`]d for this area. Pure: the
    /// state is only read.
    pub fn render_with(
        self,
        area: Rect,
        buf: &mut Buffer,
        state: &CatalogState,
        cache: &CatalogCache,
    ) {
        if area.is_empty() {
            return;
        }
        let theme = self.theme;
        let sid = state.session;
        let Some(publish) = self.session.publish_of(sid) else {
            buf.set_line(
                area.x,
                area.y,
                &Line::from(Span::styled("no tool.catalog.publish received", theme.dim)),
                area.width,
            );
            return;
        };
        let catalog = &publish.catalog;
        let tools = &catalog.tools;
        let selected = state.selected.min(tools.len().saturating_sub(1));
        let when = publish
            .timestamp
            .map_or_else(|| "--:--:--".to_owned(), Timestamp::clock);
        let derived = if publish.derived {
            " · derived by the importer"
        } else {
            ""
        };
        let publishes = self.session.sessions.get(sid).publishes.len();
        // Several sessions: whose catalog this is.
        let whose = if self.session.sessions.is_multi() {
            format!(" of {}", super::session_label(self.session, sid))
        } else {
            String::new()
        };
        let title = format!(
            "current catalog{whose} · publish {publishes} · {when}{} · {}{derived}",
            line_part(publish.line, " · "),
            crate::fmt::plural(tools.len(), "tool")
        );
        let mut y = area.y;
        let bottom = area.y + area.height;
        buf.set_line(
            area.x,
            y,
            &Line::from(Span::styled(title, theme.dim)),
            area.width,
        );
        y += 1;
        let w = widths(tools, area.width);
        if y < bottom {
            let header = super::problems::scrolled(header_line(&w, theme), state.hscroll);
            buf.set_line(area.x, y, &header, area.width);
            y += 1;
        }
        let rows = table_rows(area.height, tools.len());
        for (k, t) in tools.iter().enumerate().skip(state.offset).take(rows) {
            if y >= bottom {
                return;
            }
            let row = tool_row(t, catalog, &w, k == selected, theme);
            let row = super::problems::scrolled(row, state.hscroll);
            buf.set_line(area.x, y, &row, area.width);
            y += 1;
        }
        if y >= bottom {
            return;
        }
        let tool = tools.get(selected);
        let usage = tool.map(|t| cache.usage_for_draw(self.session, sid, &t.name));
        let fresh;
        let history = match &cache.history {
            Some((k, h)) if *k == (sid, publishes) => h.as_slice(),
            _ => {
                fresh = history_changes(self.session, sid);
                fresh.as_slice()
            }
        };
        let lines = detail_lines(
            &publishes_of(self.session, sid),
            catalog,
            tool,
            usage.as_ref(),
            history,
            theme,
            area.width,
        );
        let height = usize::from(bottom - y);
        let scroll = state.scroll.min(lines.len().saturating_sub(height));
        for l in lines.into_iter().skip(scroll).take(height) {
            let l = if state.hscroll > 0 {
                super::detail::skip_columns(l, state.hscroll)
            } else {
                l
            };
            buf.set_line(area.x, y, &l, area.width);
            y += 1;
        }
    }
}

impl StatefulWidget for CatalogView<'_> {
    type State = CatalogState;

    /// Draws with a cache of its own (tests, one-off drawings); the app keeps its cache.
    fn render(self, area: Rect, buf: &mut Buffer, state: &mut CatalogState) {
        let mut cache = CatalogCache::default();
        state.prepare(&mut cache, self.session, self.theme, area);
        self.render_with(area, buf, state, &cache);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_nearest_rank() {
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&[5.0], 95.0), Some(5.0));
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), Some(10.0));
        assert_eq!(percentile(&v, 95.0), Some(19.0));
    }
}
