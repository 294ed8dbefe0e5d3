//! The feed: one row per session item, only the visible window built (STYLE 4.6).
//!
//! Who calls it: [`crate::ui::draw`]. Rows: time, a findings mark, indentation for subagent calls
//! (depth of the delegation chain), tool name or row kind, a one-line summary (Bash command, file
//! path, pattern, URL, Task description …), a status badge and the duration. A turn's prompt
//! row carries a fold marker (`▾` open, `▸` folded); a folded one ends with the turn's summary
//! (calls, errors, duration; see `crate::view::Folds`).
//! Invariants: [`render_feed`] touches only `rows[offset..offset + height]`; untrusted text goes
//! through `render::text::visible` before it reaches the buffer.

use std::fmt::Write as _;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use serde_json::Value;

use super::DrawCtx;
use crate::fmt::{fit, fit_right, plural_s, truncate};
use crate::protocol::{Frame, FrameType, Timestamp};
use crate::render::text::visible;
use crate::session::{Invocation, Item, MessageKind, Session};
use crate::theme::Theme;
use crate::view::{Pane, TurnSummary};

/// Columns of the time column (`HH:MM:SS`).
const TIME_W: usize = 8;
/// Fewest columns of the tool / kind column (`thinking`, `catalog`, a folded `▸ prompt`).
const TOOL_W: usize = 8;
/// Most columns of the tool column: a longer name keeps its tail (`…server__tool`).
pub const TOOL_W_MAX: usize = 24;
/// Fewest columns of the status badge (`pending`, `running`, `timeout`).
const BADGE_W: usize = 7;
/// Most columns of the status badge: a producer's own status longer than this is cut.
const BADGE_W_MAX: usize = 16;
/// Columns of the duration.
const DUR_W: usize = 6;
/// Columns of text an event row (a fork point, a turn end, an error) asks the layout for.
const EVENT_WANT: usize = 56;
/// Deepest indentation level drawn (deeper chains indent no further).
const MAX_DEPTH: usize = 4;

/// Draws the bordered feed pane.
pub fn render_feed(area: Rect, buf: &mut Buffer, ctx: &DrawCtx<'_>) {
    let count = ctx.view.row_count(ctx.session);
    let total = ctx.session.items.len();
    let mut title = if count == total {
        format!(" Feed {count} ")
    } else {
        format!(" Feed {count}/{total} ")
    };
    if !ctx.view.show_quiet && ctx.view.quiet > 0 {
        let _ = write!(title, "· {} quiet hidden (.) ", ctx.view.quiet);
    }
    let block = super::pane_block(ctx, title, Pane::Feed);
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    if count == 0 {
        let msg = if ctx.view.filter.is_some() {
            match ctx.keymap.key_for(crate::action::Action::Cancel) {
                Some(k) => format!("no rows match the filter ({k} clears it)"),
                None => "no rows match the filter".to_owned(),
            }
        } else if ctx.session.counts.malformed > 0 && ctx.session.counts.frames == 0 {
            // A file of nothing but bad lines is not "still loading": say what happened.
            let n = ctx.session.counts.malformed;
            let lines = format!("line{}", plural_s(n));
            match ctx.keymap.key_for(crate::action::Action::ShowProblems) {
                Some(k) => {
                    format!("no frame: {n} malformed {lines} ({k} lists them)")
                }
                None => format!("no frame: {n} malformed {lines}"),
            }
        } else {
            "no frames yet".to_owned()
        };
        buf.set_span(
            inner.x,
            inner.y,
            &Span::styled(msg, ctx.theme.dim),
            inner.width,
        );
        return;
    }
    let width = usize::from(inner.width);
    let start = ctx.view.feed.offset;
    let end = (start + usize::from(inner.height)).min(count);
    let cols = Cols::of_rows(
        ctx.session,
        (start..end).filter_map(|r| ctx.view.item_at(r)),
    );
    for (k, row) in (start..end).enumerate() {
        let Some(item) = ctx.view.item_at(row) else {
            continue;
        };
        let fold = if crate::session::query::is_turn_start(ctx.session, item) {
            ctx.view.folds.folded.get(&item).map_or_else(
                || Fold::Open(ctx.view.folds.figures.get(&item).copied()),
                |s| {
                    // The folded summary with the turn's usage (computed alike).
                    let mut s = *s;
                    if let Some(f) = ctx.view.folds.figures.get(&item) {
                        s.tokens = f.tokens;
                    }
                    Fold::Folded(s)
                },
            )
        } else {
            Fold::None
        };
        // A fork point's row, or the mark of a branch of an unfolded one (issue 16).
        let event = match &ctx.session.items[item] {
            Item::Event(f) => Some(f),
            _ => None,
        };
        let forks = &ctx.view.forks;
        let fork = event.and_then(|f| forks.at_row(item).map(|fp| (f, fp)));
        let mark = event.and_then(|f| forks.mark_of(item).map(|m| (f, m)));
        let mut line = match (fork, mark) {
            (Some((f, fp)), _) => {
                let hidden = ctx.view.fork_hidden_rows(fp, ctx.session.items.len());
                fork_row(f, &fork_label(fp, hidden), width, ctx.theme)
            }
            (None, Some((f, (fp, b)))) => {
                let main = if b == fp.main() { " (main line)" } else { "" };
                let label = format!("  branch {b}{main} of the fork at line {}", fp.parent_line);
                fork_row(f, &label, width, ctx.theme)
            }
            (None, None) => {
                build_row_with(ctx.session, item, width, ctx.theme, ctx.now, fold, cols)
            }
        };
        // The call the live state is about says so in its badge (issue 21).
        if let Some(l) = &ctx.live
            && l.attention().is_some()
            && let Some(Item::Invocation(k)) = ctx.session.items.get(item)
            && l.call() == Some(*k)
        {
            mark_live(&mut line, l.word(), ctx.theme.finding_warning, cols.badge);
        }
        if let Some(re) = &ctx.search {
            line = super::highlight_matches(line, re, ctx.theme.search_match);
        }
        if row == ctx.view.feed.selected {
            let style = if ctx.view.focus == Pane::Feed {
                ctx.theme.selected
            } else {
                ctx.theme
                    .selected
                    .remove_modifier(ratatui::style::Modifier::BOLD)
            };
            line = line.patch_style(style);
            let y = inner.y + k as u16;
            buf.set_style(Rect::new(inner.x, y, inner.width, 1), style);
        }
        buf.set_line(inner.x, inner.y + k as u16, &line, inner.width);
    }
}

/// The time column for an optional timestamp.
fn clock(ts: Option<Timestamp>) -> String {
    ts.map_or_else(|| " ".repeat(TIME_W), Timestamp::clock)
}

/// Column of the fold marker in a prompt row (after the time and a space); a click there
/// folds or unfolds the turn.
pub const FOLD_MARKER_COL: usize = TIME_W + 1;

/// A prompt row's fold state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fold {
    /// Not a prompt row: no marker.
    None,
    /// The turn's rows show (`▾`); its figures end the row when known.
    Open(Option<TurnSummary>),
    /// The turn is folded (`▸`): its summary ends the row.
    Folded(TurnSummary),
}

/// Columns a prompt keeps for its text before the summary gets shorter, at least; on a wide row
/// the text keeps half of it ([`fold_summary_fit`]).
const FOLDED_TEXT_MIN: usize = 12;

/// What a turn summary shows, widest first: tokens, then duration, then the call count go when
/// the row is narrow; errors and cost always stay.
#[derive(Debug, Clone, Copy)]
struct Parts {
    tokens: bool,
    duration: bool,
    calls: bool,
}

/// The text ending a prompt row: `5 calls · 1 error · 2m 03s · 48k tok · $0.42`; the tokens,
/// then the duration, then the call count are left out when they would cut the prompt's text
/// (`text_w` columns) to fewer than half of `room` columns (and never fewer than
/// [`FOLDED_TEXT_MIN`]). What is left when even that does not fit is the errors and the cost
/// (the caller truncates it).
pub fn fold_summary_fit(s: &TurnSummary, room: usize, text_w: usize) -> String {
    let keep = text_w.min(FOLDED_TEXT_MIN.max(room / 2));
    let mut last = String::new();
    for (tokens, duration, calls) in [
        (true, true, true),
        (false, true, true),
        (false, false, true),
        (false, false, false),
    ] {
        last = summary_with(
            s,
            Parts {
                tokens,
                duration,
                calls,
            },
        );
        if crate::fmt::width(&last) + 1 + keep <= room {
            break;
        }
    }
    last
}

/// The text ending a prompt row, whole: `5 calls · 1 error · 2m 03s · 48k tok · $0.42` (tokens
/// in and out as the status bar counts them; the cost of the turn's usage rows).
pub fn fold_summary(s: &TurnSummary) -> String {
    summary_with(
        s,
        Parts {
            tokens: true,
            duration: true,
            calls: true,
        },
    )
}

fn summary_with(s: &TurnSummary, parts: Parts) -> String {
    let t = &s.tokens;
    let cost = if t.rows > 0 {
        t.cost.label()
    } else {
        String::new()
    };
    let mut out: Vec<String> = Vec::new();
    // The call count goes last, and only when an error count or a cost is left to show.
    if parts.calls || (s.errors == 0 && cost.is_empty()) {
        out.push(if s.calls == 0 {
            crate::fmt::plural(s.items as u64, "row")
        } else {
            crate::fmt::plural(s.calls as u64, "call")
        });
    }
    if s.errors > 0 {
        out.push(crate::fmt::plural(s.errors as u64, "error"));
    }
    if parts.duration
        && let Some(ms) = s.duration_ms
    {
        out.push(crate::fmt::duration_ms(ms as f64));
    }
    if t.rows > 0 && parts.tokens {
        out.push(format!(
            "{} tok",
            crate::usage::report::short(t.input.saturating_add(t.output))
        ));
    }
    if !cost.is_empty() {
        out.push(cost);
    }
    out.join(" · ")
}

/// The widths of the feed's variable columns for the rows drawn together: the tool column as
/// wide as the longest tool name among them ([`TOOL_W`]..=[`TOOL_W_MAX`]), the badge as wide as
/// the longest status ([`BADGE_W`]..=[`BADGE_W_MAX`]), and the widest call summary (what the
/// feed's width would need, `crate::ui::Areas::compute`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cols {
    pub tool: usize,
    pub badge: usize,
    pub summary: usize,
    /// Columns of text the event rows in view would like ([`EVENT_WANT`], 0 without events).
    pub event: usize,
}

impl Default for Cols {
    fn default() -> Self {
        Self {
            tool: TOOL_W,
            badge: BADGE_W,
            summary: 0,
            event: 0,
        }
    }
}

impl Cols {
    /// The columns for `items` (the rows in view: work proportional to their number only).
    pub fn of_rows(session: &Session, items: impl Iterator<Item = usize>) -> Self {
        let mut c = Self::default();
        for item in items {
            if let Some(Item::Invocation(k)) = session.items.get(item) {
                let inv = &session.invocations[*k];
                c.tool = c.tool.max(crate::fmt::width(&visible(&inv.tool_name)));
                let badge = Theme::badge_text(&inv.status, session.ended);
                c.badge = c.badge.max(crate::fmt::width(badge));
                c.summary = c
                    .summary
                    .max(crate::fmt::width(&crate::session::summary::shown(
                        session, inv,
                    )));
            } else if let Some(Item::Event(_)) = session.items.get(item) {
                // An event's label (a fork point's branches and fold) wants a line's worth.
                c.event = EVENT_WANT;
            }
        }
        c.tool = c.tool.min(TOOL_W_MAX);
        c.badge = c.badge.min(BADGE_W_MAX);
        c
    }

    /// Columns the rows need to show every call summary and event label whole (borders not
    /// counted).
    pub fn row_width(&self) -> usize {
        (self.fixed_width() + self.summary).max(TIME_W + 2 + self.tool + 1 + self.event)
    }

    /// Columns a call row needs besides its summary (a subagent's indentation not counted).
    pub fn fixed_width(&self) -> usize {
        TIME_W + 2 + self.tool + 1 + 1 + self.badge + 1 + DUR_W
    }
}

/// Builds one feed row at `width` columns, its columns sized for this row alone (see
/// [`build_row_with`]).
pub fn build_row(
    session: &Session,
    item: usize,
    width: usize,
    theme: &Theme,
    now: Option<Timestamp>,
    fold: Fold,
) -> Line<'static> {
    let cols = Cols::of_rows(session, std::iter::once(item));
    build_row_with(session, item, width, theme, now, fold, cols)
}

/// Builds one feed row at `width` columns with the columns `cols` (the same for every row drawn
/// together). `now` (epoch ms) drives running calls' elapsed time; `None` (tests, finished
/// sources) shows no elapsed time. `fold` marks prompt rows.
///
/// With several sessions (SPEC §6, issue 24) each row starts with its session's tag
/// ([`session_tag`]): [`TAG_W`] columns and a space, in the session's own colour.
pub fn build_row_with(
    session: &Session,
    item: usize,
    width: usize,
    theme: &Theme,
    now: Option<Timestamp>,
    fold: Fold,
    cols: Cols,
) -> Line<'static> {
    if !session.sessions.is_multi() || width <= TAG_W + 20 {
        return build_row_plain(session, item, width, theme, now, fold, cols);
    }
    let sid = session.sessions.of_item(item);
    let mut row = build_row_plain(session, item, width - TAG_W - 1, theme, now, fold, cols);
    let (tag, style) = session_tag(session, sid, theme);
    row.spans.insert(0, Span::styled(format!("{tag} "), style));
    row
}

/// Columns of the session tag column (issue 24).
pub const TAG_W: usize = 8;

/// Session `sid`'s tag: its id's first [`TAG_W`] columns (a UUID's first group), or its input's
/// label when no frame named one, padded to [`TAG_W`]; and its colour, the same for the session
/// wherever it shows (picked from the theme's by a hash of the name). Untrusted text made
/// visible.
pub fn session_tag(session: &Session, sid: u32, theme: &Theme) -> (String, Style) {
    let name = visible(session.sessions.name(sid));
    // Cut without an ellipsis: a UUID's first group is the usual short id.
    let mut short = String::new();
    let mut w = 0;
    for c in name.chars() {
        let cw = crate::fmt::width(c.encode_utf8(&mut [0; 4]));
        if w + cw > TAG_W {
            break;
        }
        short.push(c);
        w += cw;
    }
    let pad = TAG_W - w;
    let palette = [
        theme.prompt,
        theme.agent,
        theme.json_key,
        theme.json_string,
        theme.json_number,
        theme.status_running,
        theme.diff_hunk,
        theme.thinking,
    ];
    // FNV-1a: stable across runs and platforms (std's hasher is seeded per process).
    let h = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let style = palette[(h % palette.len() as u64) as usize];
    (format!("{short}{}", " ".repeat(pad)), style)
}

fn build_row_plain(
    session: &Session,
    item: usize,
    width: usize,
    theme: &Theme,
    now: Option<Timestamp>,
    fold: Fold,
    cols: Cols,
) -> Line<'static> {
    let tool_w = cols.tool;
    match session.items.get(item) {
        Some(Item::Invocation(k)) => {
            build_invocation_row(session, &session.invocations[*k], width, theme, now, cols)
        }
        Some(Item::Message(m)) => {
            let (label, style) = match m.kind {
                MessageKind::Prompt => ("prompt", theme.prompt),
                MessageKind::AgentText => ("agent", theme.agent),
                MessageKind::Thinking => ("thinking", theme.thinking),
            };
            let depth = m.delegation_chain.len().min(MAX_DEPTH);
            let text =
                crate::render::ansi::visible_plain(&crate::session::summary::message_line(m));
            let fixed = TIME_W + 2 + depth * 2 + tool_w + 1;
            let (gap, label_w) = match fold {
                Fold::None => (Span::raw("  "), tool_w),
                Fold::Open(_) => (Span::styled(" ▾ ", theme.dim), tool_w - 1),
                Fold::Folded(_) => (Span::styled(" ▸ ", theme.hint), tool_w - 1),
            };
            let mut spans = vec![
                Span::styled(clock(m.timestamp), theme.dim),
                gap,
                Span::raw("  ".repeat(depth)),
                Span::styled(fit(label, label_w), style),
                Span::raw(" "),
            ];
            let room = width.saturating_sub(fixed);
            let figures = match fold {
                Fold::Folded(sum) | Fold::Open(Some(sum)) => Some(sum),
                Fold::Open(None) | Fold::None => None,
            };
            if let Some(sum) = figures {
                let tail = fold_summary_fit(&sum, room, crate::fmt::width(&text));
                let tail_w = crate::fmt::width(&tail) + 1;
                let text_w = room.saturating_sub(tail_w);
                let err_style = if sum.errors > 0 {
                    theme.status_failed
                } else {
                    theme.dim
                };
                spans.push(Span::styled(fit(&text, text_w), style));
                spans.push(Span::raw(" "));
                spans.push(Span::styled(
                    truncate(&tail, room.saturating_sub(text_w + 1)),
                    err_style,
                ));
            } else {
                spans.push(Span::styled(truncate(&text, room), style));
            }
            Line::from(spans)
        }
        Some(Item::Event(f)) => {
            let mut row = build_event_row_labelled(f, width, theme, fold, None, tool_w);
            // A finding about the frame's line (a field of the wrong type, a missing one): the
            // row is marked like a call with findings. Not for imported frames: one record
            // gives several rows there, and the line does not say which one a finding is about.
            let input = session.sessions.get(session.sessions.of_item(item)).input;
            if session.has_findings_at_line(input, f.origin.line)
                && !crate::check::is_imported(f)
                && let Some(gap) = row.spans.get_mut(1)
            {
                *gap = Span::styled(" !", theme.finding_warning);
            }
            row
        }
        None => Line::default(),
    }
}

/// Index of the status badge among a call row's spans ([`build_invocation_row`]).
const BADGE_SPAN: usize = 9;

/// Puts the live state's word (`waiting`, `stuck`, `looping`) in a call row's badge.
pub fn mark_live(line: &mut Line<'static>, word: &str, style: Style, badge_w: usize) {
    if let Some(span) = line.spans.get_mut(BADGE_SPAN) {
        *span = Span::styled(fit_right(word, badge_w), style);
    }
}

fn build_invocation_row(
    session: &Session,
    inv: &Invocation,
    width: usize,
    theme: &Theme,
    now: Option<Timestamp>,
    cols: Cols,
) -> Line<'static> {
    let depth = inv.delegation_chain.len().min(MAX_DEPTH);
    let (badge, badge_style) = theme.call_badge(&inv.status, session.ended);
    let duration = match inv.duration_ms() {
        Some(ms) => crate::fmt::duration_ms(ms),
        None if inv.status.is_open() && !session.ended => match (now, inv.requested_at) {
            (Some(n), Some(r)) if n.0 >= r.0 => crate::fmt::duration_ms((n.0 - r.0) as f64),
            _ => String::new(),
        },
        None => String::new(),
    };
    let mark = if inv.findings > 0 {
        Span::styled("!", theme.finding_warning)
    } else {
        Span::raw(" ")
    };
    let indent = if depth > 0 {
        format!("{}└ ", "  ".repeat(depth - 1))
    } else {
        String::new()
    };
    let fixed =
        TIME_W + 1 + 1 + indent.chars().count() + cols.tool + 1 + 1 + cols.badge + 1 + DUR_W;
    let summary = crate::render::ansi::visible_plain(&crate::session::summary::shown(session, inv));
    let name = visible(&inv.tool_name);
    let room = width.saturating_sub(fixed);
    // A path keeps its file name (the middle gives way), a patch's list of files its last
    // file; other summaries keep their start.
    // A failed hook is said on the call's row (issue 20); the detail lists every hook.
    let hook_failed = crate::session::hooks::failed_words(session.hooks.failed(&inv.invocation_id));
    let room_left = room.saturating_sub(crate::fmt::width(&hook_failed));
    let summary = if crate::session::summary::is_path_tool(&inv.tool_name)
        || inv.tool_name == "apply_patch"
    {
        crate::fmt::fit_path(&summary, room_left)
    } else {
        fit(&summary, room_left)
    };
    // The badge is span BADGE_SPAN (`mark_live` replaces it).
    Line::from(vec![
        Span::styled(clock(inv.requested_at), theme.dim),
        Span::raw(" "),
        mark,
        Span::styled(indent, theme.dim),
        Span::styled(crate::fmt::fit_keep_tail(&name, cols.tool), theme.title),
        Span::raw(" "),
        Span::styled(
            crate::fmt::truncate(&hook_failed, room),
            theme.status_failed,
        ),
        Span::raw(summary),
        Span::raw(" "),
        Span::styled(fit_right(badge, cols.badge), badge_style),
        Span::raw(" "),
        Span::styled(fit_right(&duration, DUR_W), theme.dim),
    ])
}

/// A fork point's row label (issue 16), true at every moment of a stream: the branch count
/// and main line come from the view's fork table, `hidden` is how many rows its fold hides.
/// "▸ fork · 3 branches · main line: 3 · 2 folded (4 rows)", "▾ fork · 3 branches · main
/// line: 3 · all shown" (the detail says which fork point and branch is which).
pub fn fork_label(fp: &crate::session::forks::ForkPoint, hidden: usize) -> String {
    let n = fp.branches();
    let main = match fp.main() {
        0 => "no main line".to_owned(),
        m => format!("main line: {m}"),
    };
    let head = format!("fork · {n} branches · {main}");
    if fp.folded {
        let others = n - u32::from(fp.main() != 0);
        format!(
            "▸ {head} · {others} folded ({hidden} row{})",
            plural_s(hidden)
        )
    } else {
        format!("▾ {head} · all shown")
    }
}

/// The row of a fork point's frame `f` with `label` (see [`fork_label`]).
pub fn fork_row(f: &Frame, label: &str, width: usize, theme: &Theme) -> Line<'static> {
    build_event_row_labelled(f, width, theme, Fold::None, Some(label), TOOL_W)
}

fn build_event_row_labelled(
    f: &Frame,
    width: usize,
    theme: &Theme,
    fold: Fold,
    fork_label: Option<&str>,
    tool_w: usize,
) -> Line<'static> {
    let time = clock(f.envelope.timestamp);
    // A subagent's rows (its turn end, usage, compaction) are indented like its messages.
    let pad = "  ".repeat(f.envelope.delegation_chain().len().min(MAX_DEPTH));
    let fill = |label: &str, ch: char, style: Style| {
        let head = format!("{ch}{ch} {label} ");
        let rest = width.saturating_sub(TIME_W + 2 + pad.len() + crate::fmt::width(&head));
        Line::from(vec![
            Span::styled(time.clone(), theme.dim),
            Span::raw("  "),
            Span::raw(pad.clone()),
            Span::styled(format!("{head}{}", ch.to_string().repeat(rest)), style),
        ])
    };
    let payload = f.payload_json();
    let field = |k: &str| payload.get(k).and_then(Value::as_str).map(visible);
    if let Some(label) = fork_label {
        return fill(label, '┄', theme.hint);
    }
    if f.frame_type.as_str() == "x-claude-code.fork" {
        // A fork frame drawn without the view's table (a fork mark, shown with quiet rows, or
        // a row out of a view): its facts only.
        let num = |k: &str| payload.get(k).and_then(Value::as_u64).unwrap_or(0);
        let label = if payload.get("resume").is_some() {
            format!(
                "back on an earlier branch (from line {})",
                num("parent_line")
            )
        } else {
            format!(
                "branch {} of the fork at line {}",
                num("branch"),
                num("parent_line")
            )
        };
        let _ = fold;
        return fill(&label, '┄', theme.hint);
    }
    match event_look(&f.frame_type) {
        EventLook::TurnEnd => {
            let reason = field("stop_reason").or_else(|| field("reason"));
            let label = reason.map_or_else(|| "turn end".to_owned(), |r| format!("turn end: {r}"));
            fill(&label, '─', theme.dim)
        }
        EventLook::Compacted => {
            // Why and how big (issue 20): `compacted · auto · 170.3k tokens before` (C jumps).
            let mut parts = vec!["compacted".to_owned()];
            if let Some(t) = field("trigger") {
                parts.push(t);
            }
            if let Some(n) = payload.get("pre_tokens").and_then(Value::as_u64) {
                parts.push(format!(
                    "{} tokens before",
                    crate::ui::status_bar::short_count(n)
                ));
            }
            let label = parts.join(" · ");
            fill(&label, '═', theme.hint)
        }
        look @ (EventLook::Error | EventLook::Catalog | EventLook::Usage | EventLook::Other) => {
            let hook = crate::session::hooks::is_hook(f);
            let hook_failed = hook && payload.get("failed") == Some(&Value::Bool(true));
            let (label, style) = match look {
                _ if hook_failed => ("hook", theme.status_failed),
                _ if hook => ("hook", theme.dim),
                EventLook::Error => ("error", theme.status_failed),
                EventLook::Catalog => ("catalog", theme.hint),
                EventLook::Usage => ("usage", theme.dim),
                EventLook::TurnEnd | EventLook::Compacted | EventLook::Other => {
                    ("event", theme.dim)
                }
            };
            let summary = first_line(&crate::session::summary::event_line(f));
            let fixed = TIME_W + 2 + pad.len() + tool_w + 1;
            Line::from(vec![
                Span::styled(time, theme.dim),
                Span::raw("  "),
                Span::raw(pad),
                Span::styled(fit(label, tool_w), style),
                Span::raw(" "),
                Span::styled(
                    truncate(&visible(&summary), width.saturating_sub(fixed)),
                    theme.dim,
                ),
            ])
        }
    }
}

/// How a generic event row looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EventLook {
    TurnEnd,
    Compacted,
    Error,
    Catalog,
    Usage,
    Other,
}

fn event_look(t: &FrameType) -> EventLook {
    match t {
        FrameType::SessionTurnEnd => EventLook::TurnEnd,
        FrameType::SessionCompacted | FrameType::ControlSessionCompact => EventLook::Compacted,
        FrameType::AgentError | FrameType::SessionError => EventLook::Error,
        FrameType::ToolCatalogPublish => EventLook::Catalog,
        FrameType::SessionUsage => EventLook::Usage,
        FrameType::ToolInvokeRequest
        | FrameType::ToolInvokeStream
        | FrameType::ToolInvokeResult
        | FrameType::AgentTextDelta
        | FrameType::AgentTextDone
        | FrameType::AgentThinkingDelta
        | FrameType::AgentThinkingDone
        | FrameType::AgentInteractionRequest
        | FrameType::AgentFileTransfer
        | FrameType::AgentStateChanged
        | FrameType::ControlPromptRequest
        | FrameType::ControlModeSwitch
        | FrameType::Unknown(_) => EventLook::Other,
    }
}

/// The first non-blank line of `s`, trimmed, as plain visible text (escape sequences
/// interpreted away), with ` …` when more lines follow.
pub fn first_line(s: &str) -> String {
    crate::render::ansi::visible_plain(&crate::session::summary::first_line(s))
}

/// A one-line summary of a call's input, as plain visible text (`crate::session::summary`).
pub fn input_summary(tool: &str, input: &Value) -> String {
    crate::render::ansi::visible_plain(&crate::session::summary::input_summary(tool, input))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn published_counts_agree_in_number() {
        let publish = |n: usize| {
            let tools: Vec<_> = (0..n).map(|i| json!({"name": format!("t{i}")})).collect();
            let f =
                rawpv_frame(&json!({"type": "tool.catalog.publish", "payload": {"tools": tools}}));
            crate::session::summary::event_line(&f)
        };
        assert_eq!(publish(1), "1 tool published");
        assert_eq!(publish(0), "0 tools published");
        assert_eq!(publish(11), "11 tools published");
    }

    fn rawpv_frame(v: &serde_json::Value) -> Frame {
        crate::protocol::parse::parse_line(1, &v.to_string()).unwrap()
    }

    #[test]
    fn summaries() {
        assert_eq!(
            input_summary("Bash", &json!({"command": "ls -la\npwd"})),
            "ls -la …"
        );
        assert_eq!(
            input_summary("Read", &json!({"file_path": "/a/b.rs"})),
            "/a/b.rs"
        );
        assert_eq!(
            input_summary("Grep", &json!({"pattern": "fn main", "path": "src"})),
            "fn main  in src"
        );
        assert_eq!(
            input_summary("Task", &json!({"description": "find x", "prompt": "..."})),
            "find x"
        );
        assert_eq!(
            input_summary("mcp__x__y", &json!({"n": 1, "q": "hi"})),
            "hi"
        );
        // Escape sequences are interpreted away, other controls shown as pictures.
        assert_eq!(
            input_summary("Bash", &json!({"command": "echo \u{1b}[31mred"})),
            "echo red"
        );
        assert_eq!(
            input_summary("Bash", &json!({"command": "printf \u{7}"})),
            "printf ␇"
        );
    }
}
