//! Status bar: source and its state (on a live source, the live state of `session::live`:
//! `live · waiting for you: permission for Deploy 40.0s`), counts, filter and search (with the
//! selected match's rank and the match count, `match 3/17`), key hints (two rows).
//!
//! Who calls it: [`crate::ui::draw`]. Hints are generated from the keymap's bindings, so they
//! always name the real keys. In search / filter mode the second row is the input prompt.
//!
//! Sessions (SPEC §6, issue 18): with more than one session in the input, the counts (calls,
//! running, errors, findings, tokens) are those of the selected row's session, after
//! `session 6f1c2b1e… 3/50` (its id, cut, and its place in order of first appearance).
//!
//! Narrow terminals: the first row keeps the source state and what the user asked for (filter,
//! search and its count, scan progress) first; the source's name is cut from its start (the file
//! name stays), the counts go when there is no room, and a message that does not fit opens the
//! second row.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{DrawCtx, SourceStatus};
use crate::action::Action;
use crate::view::{Mode, Pane, Tab};

/// Fewest columns of the source's name on the first row (with room for less, the counts go).
const LABEL_MIN: usize = 12;
/// Most columns of the source's name.
const LABEL_MAX: usize = 40;
/// Most columns of the live state's words (`waiting for you: permission for Deploy 40.0s`).
const LIVE_MAX: usize = 48;

/// What the status bar says about the search's matches (the app counts them: `App::match_status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchStatus {
    /// 1-based rank of the selected row among the matches; `None` when it is no match or not
    /// counted yet.
    pub at: Option<usize>,
    /// Matches counted so far.
    pub total: usize,
    /// While the count runs: the share of the filtered rows counted, in percent (0–99). `None`
    /// once the count reached the end (rows arriving later are counted as they come).
    pub scanning: Option<usize>,
}

impl std::fmt::Display for MatchStatus {
    /// `match 3/17`, `17 matches`, `no match`; while counting `match 3/17+ (scanning 40%)` or
    /// `17+ matches (scanning 40%)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let more = if self.scanning.is_some() { "+" } else { "" };
        match (self.at, self.total) {
            (Some(k), n) => write!(f, "match {k}/{n}{more}")?,
            (None, 0) if self.scanning.is_none() => f.write_str("no match")?,
            (None, 1) if self.scanning.is_none() => f.write_str("1 match")?,
            (None, n) => write!(f, "{n}{more} matches")?,
        }
        match self.scanning {
            Some(pct) => write!(f, " (scanning {pct}%)"),
            None => Ok(()),
        }
    }
}

/// Draws the two status rows.
pub fn render_status(area: Rect, buf: &mut Buffer, ctx: &DrawCtx<'_>) {
    if area.height == 0 {
        return;
    }
    let t = ctx.theme;
    let w = usize::from(area.width);
    let (state, state_style) = match ctx.source.status {
        SourceStatus::Loading => match ctx.source.load_progress {
            Some((bytes, total)) if total > 0 => (
                format!("loading {}%", (bytes.min(total) * 100 / total)),
                t.status_running,
            ),
            _ => ("loading".to_owned(), t.status_running),
        },
        SourceStatus::Live => ("live".to_owned(), t.status_ok),
        SourceStatus::Reconnecting(n) => (format!("reconnecting (attempt {n})"), t.status_running),
        SourceStatus::Ended => ("ended".to_owned(), t.dim),
        SourceStatus::Failed(e) => (format!("failed: {e}"), t.status_failed),
    };
    // Several sessions (SPEC §6): the counts, findings and tokens are the selected row's
    // session's, and the bar says which session that is.
    let followed = ctx.view.followed_session(ctx.session);
    let (c, findings, tokens) = match followed {
        Some(sid) => {
            let e = ctx.session.sessions.get(sid);
            (e.counts, e.findings as usize, e.tokens)
        }
        None => (
            ctx.session.counts,
            ctx.session.findings.len(),
            ctx.view.tokens,
        ),
    };
    let width =
        |spans: &[Span<'_>]| -> usize { spans.iter().map(|s| crate::fmt::width(&s.content)).sum() };
    // What must show: the state, and what the user asked for (filter, search and its count,
    // scan progress). Then, by priority: the source's name (at least LABEL_MIN columns), the
    // message, the counts, the rest of the name, the token totals.
    let mut fixed = vec![Span::styled(state, state_style)];
    // The live state (issue 21): what the agent does now, and why the bell rang.
    if *ctx.source.status == SourceStatus::Live
        && let Some(l) = &ctx.live
    {
        use crate::session::live::State;
        let style = match l.state {
            State::Waiting { .. } | State::Stuck { .. } | State::Looping { .. } => {
                t.finding_warning
            }
            State::Running { .. } => t.status_running,
            State::Idle | State::Ended => t.dim,
        };
        let words = crate::render::text::visible(&l.describe(ctx.session));
        fixed.push(Span::styled(
            format!(" · {}", crate::fmt::truncate(&words, LIVE_MAX)),
            style,
        ));
    }
    // Several inputs may each have their own format: none is named then.
    if let Some(f) = ctx
        .source
        .format
        .filter(|_| ctx.session.sessions.inputs() == 0)
    {
        fixed.push(Span::styled(format!(" {}", f.as_str()), t.dim));
    }
    // Which session the counts are of: kept when the counts do not fit.
    let mut whose = Vec::new();
    if let Some(sid) = followed {
        whose.push(Span::styled(" │ ", t.border));
        whose.push(Span::styled(
            format!(
                "{} {}/{}",
                super::session_label(ctx.session, sid),
                sid + 1,
                ctx.session.sessions.len()
            ),
            t.hint,
        ));
    }
    let mut counts = vec![
        Span::styled(if whose.is_empty() { " │ " } else { " · " }, t.border),
        Span::raw(crate::fmt::plural(c.invocations, "call")),
    ];
    if c.running > 0 {
        let label = if ctx.session.ended {
            "no result"
        } else {
            "running"
        };
        counts.push(Span::styled(
            format!(" · {} {label}", c.running),
            t.status_running,
        ));
    }
    if c.failed > 0 {
        counts.push(Span::styled(
            format!(" · {}", crate::fmt::plural(c.failed, "error")),
            t.status_failed,
        ));
    }
    if findings > 0 {
        counts.push(Span::styled(
            format!(" · {}", crate::fmt::plural(findings as u64, "finding")),
            t.finding_warning,
        ));
    }
    // The session's cost (issue 28 item 3): with the counts, so it stays on narrow terminals.
    let cost = tokens.cost.label();
    if !cost.is_empty() {
        counts.push(Span::styled(format!(" · {cost}"), t.dim));
    }
    if ctx.session.dropped_items > 0 {
        counts.push(Span::styled(
            format!(
                " · {} dropped (oldest)",
                crate::fmt::plural(ctx.session.dropped_items, "row")
            ),
            t.dim,
        ));
    }
    let mut tail = Vec::new();
    if let Some(f) = &ctx.view.filter {
        tail.push(Span::styled(" │ ", t.border));
        tail.push(Span::styled(format!("filter: {}", f.raw), t.hint));
    }
    if let Some(q) = &ctx.view.search {
        tail.push(Span::styled(" │ ", t.border));
        tail.push(Span::styled(format!("/{q}"), t.search_match));
        // `match 3/17`, `17+ matches (scanning 40%)`; a search's own "no match for /q"
        // message says it already.
        if let Some(m) = ctx.matches
            && !(m.total == 0 && m.scanning.is_none() && ctx.view.message.is_some())
        {
            let style = if m.total == 0 && m.scanning.is_none() {
                t.finding_warning
            } else {
                t.hint
            };
            tail.push(Span::styled(format!(" {m}"), style));
        }
    }
    if let Some(p) = &ctx.view.progress {
        tail.push(Span::styled(" │ ", t.border));
        tail.push(Span::styled(p.clone(), t.status_running));
    }
    // A message that does not fit the first row opens the second one (in normal mode), so its
    // end (`… at 7`) is not cut off.
    let must = 2 + LABEL_MIN + width(&fixed) + width(&tail);
    let mut message_below = None;
    if let Some(m) = &ctx.view.message {
        if must + 3 + crate::fmt::width(m) > w && ctx.view.mode == Mode::Normal && area.height >= 2
        {
            message_below = Some(Span::styled(format!(" {m} "), t.finding_warning));
        } else {
            tail.push(Span::styled(" │ ", t.border));
            tail.push(Span::styled(m.clone(), t.finding_warning));
        }
    }
    let room = w.saturating_sub(2 + width(&fixed) + width(&tail));
    // Several sessions: the counts that do not fit go from the last (the calls stay longest), so
    // they do not come and go whole from one row's session to another's (attack 6 #15).
    while !whose.is_empty() && counts.len() > 2 && width(&whose) + width(&counts) + LABEL_MIN > room
    {
        counts.pop();
    }
    if width(&whose) + width(&counts) + LABEL_MIN > room {
        counts.clear();
    }
    if width(&whose) + LABEL_MIN > room {
        whose.clear();
    }
    counts.splice(0..0, whose);
    let label_w = room
        .saturating_sub(width(&counts))
        .clamp(LABEL_MIN, LABEL_MAX);
    let mut spans = vec![Span::styled(
        format!(
            " {} ",
            crate::fmt::truncate_keep_tail(ctx.source.label, label_w)
        ),
        t.title,
    )];
    spans.extend(fixed);
    let has_counts = !counts.is_empty();
    spans.extend(counts);
    // Token totals go in only when the rest leaves room for them.
    let tk = &tokens;
    if has_counts && tk.rows > 0 {
        let mut s = format!(
            " · {} in · {} out",
            short_count(tk.input),
            short_count(tk.output)
        );
        if tk.cache_read > 0 {
            s.push_str(" · ");
            s.push_str(&short_count(tk.cache_read));
            s.push_str(" cached");
        }
        s.push_str(" tokens");
        if width(&spans) + width(&tail) + crate::fmt::width(&s) <= w {
            spans.push(Span::styled(s, t.dim));
        }
    }
    spans.extend(tail);
    buf.set_line(area.x, area.y, &Line::from(spans), area.width);
    if area.height < 2 {
        return;
    }
    let second = match ctx.view.mode {
        Mode::Search | Mode::Filter => {
            let prompt = if ctx.view.mode == Mode::Search {
                "/"
            } else {
                "filter (tool:NAME status:ok|error|running|findings text): "
            };
            let input = &ctx.view.input;
            let cur = ctx.view.input_cursor.min(input.len());
            let (head, tail) = input.split_at(if input.is_char_boundary(cur) {
                cur
            } else {
                input.len()
            });
            let text = |s: &str| crate::render::text::visible(s);
            let mut spans = vec![Span::styled(format!(" {prompt}"), t.hint)];
            if ctx.view.input_selected {
                // Selected: typing replaces it.
                spans.push(Span::styled(text(input), t.selected));
                spans.push(Span::styled("▏", t.hint));
            } else {
                spans.push(Span::raw(text(head)));
                spans.push(Span::styled("▏", t.hint));
                spans.push(Span::raw(text(tail)));
            }
            if let Some(why) = &ctx.view.input_problem {
                spans.push(Span::styled(format!("  {why}"), t.finding_warning));
            }
            spans.push(Span::styled("  Enter apply · Esc cancel", t.dim));
            Line::from(spans)
        }
        Mode::Normal => {
            let mut spans = Vec::new();
            let mut used = 0usize;
            if let Some(m) = message_below {
                used += crate::fmt::width(&m.content);
                spans.push(m);
            }
            if let Some(h) = &ctx.source.hint {
                let s = format!(" {h} ");
                used += crate::fmt::width(&s);
                spans.push(Span::styled(s, t.finding_info));
            }
            // A panel that has the keys says first what they do there (issue 22 item 2).
            let enter = match (ctx.view.focus, ctx.view.tab) {
                (Pane::Detail, Tab::Catalog) => Some("filter by tool"),
                (Pane::Detail, Tab::Problems) => Some("go to its row"),
                (Pane::Detail, Tab::Files | Tab::Audit) => Some("go to its call"),
                (Pane::Detail, Tab::Sessions) => Some("show this session"),
                (Pane::Detail | Pane::Feed, _) => None,
            };
            let mut hints: Vec<(String, &'static str)> = Vec::new();
            if let Some(enter) = enter {
                let key = |a| ctx.keymap.key_for(a).map(|k| k.to_string());
                if let (Some(d), Some(u)) = (key(Action::MoveDown), key(Action::MoveUp)) {
                    hints.push((format!("{d}/{u}"), "move"));
                }
                if let Some(k) = key(Action::Open) {
                    hints.push((k, enter));
                }
                if let Some(k) = key(Action::Cancel) {
                    hints.push((k, "back"));
                }
                match ctx.view.tab {
                    Tab::Files => {
                        if let (Some(y), Some(yy)) =
                            (key(Action::CopyInput), key(Action::CopyOutput))
                        {
                            hints.push((format!("{y}/{yy}"), "copy file's/all patch"));
                        }
                        if let Some(k) = key(Action::WritePatch) {
                            hints.push((k, "write patch"));
                        }
                    }
                    Tab::Audit => {
                        if let Some(k) = key(Action::AuditKind) {
                            hints.push((k, "next kind"));
                        }
                    }
                    Tab::Detail | Tab::Catalog | Tab::Problems | Tab::Sessions => {}
                }
            }
            hints.extend(ctx.keymap.hints());
            for (key, label) in hints {
                let piece = format!(" {key} {label} ");
                let pw = crate::fmt::width(&piece);
                if used + pw > w {
                    break;
                }
                used += pw;
                spans.push(Span::styled(format!(" {key}"), t.hint));
                spans.push(Span::styled(format!(" {label} "), t.dim));
            }
            Line::from(spans)
        }
    };
    buf.set_line(area.x, area.y + 1, &second, area.width);
}

/// A count in at most 5 columns: `950`, `12.3k`, `4.5M`.
pub fn short_count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::short_count;

    #[test]
    fn short_counts() {
        assert_eq!(short_count(950), "950");
        assert_eq!(short_count(12_345), "12.3k");
        assert_eq!(short_count(4_500_000), "4.5M");
    }
}
