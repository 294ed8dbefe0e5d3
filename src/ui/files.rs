//! Files panel (issue 23 items 1, 2, 4): what the session changed, file by file, and the
//! selected file's net change drawn by the diff renderer.
//!
//! Who calls it: `crate::ui::draw` when the files tab is shown (`d`); the app prepares it
//! ([`FilesState::prepare`]) before each draw, asks [`FilesState::selected_item`] where Enter
//! jumps and [`FilesCache::patch_of`] what `y` / `Y` / `W` copy or write.
//!
//! Layout inside `area` (the caller draws the border): a summary line (`11 files changed · +420
//! −133 · 3 changed outside the recorded edits · 2 commands may have written files`), then the
//! list: per file a row (state letter, `+added −removed`, calls, `!` when changed outside the
//! recorded edits, the path relative to the session's cwd) and under it one row per call that
//! touched it (time, tool, what it did, its lines; `!` and what ran between for an outside
//! change), then the commands that may have written files without a recorded edit. Below the
//! list, the selected row's file: its net change as a diff (`render::diff`: syntax colour, word
//! emphasis, side by side at 140 columns and wider), or, where the starting content is not in
//! the record, a line saying why and the file's recorded edits in order.
//!
//! Invariants: the model (`review::files::Files`) is built in steps of about [`FIRST_STEP`]
//! (each a call's record read and parsed): the first inside the key that opened the panel, the
//! rest as the event loop's background work (`App::scanning`), the panel saying how far it got
//! meanwhile; it is built again when the session has more calls (at most once a second while
//! live), the previous model shown until the new one is in; the diff lines are
//! built once per (file, width, flags) and sliced when drawn; only visible rows are built; every
//! untrusted string goes through `render::text::visible` and the diff lines through
//! `detail::build::scrub_lines`.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::render::text::visible;
use crate::render::{Limits, RenderCtx};
use crate::review::files::{Builder, FileEntry, Files};
use crate::session::Session;
use crate::theme::Theme;

/// View state of the files panel: plain data (part of `ViewState`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FilesState {
    /// Selected row of the list (clamped when prepared).
    pub selected: usize,
    /// First visible row of the list.
    pub offset: usize,
    /// Scroll of the diff part.
    pub scroll: usize,
}

/// One row of the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Row {
    /// File `k` of the model.
    File(usize),
    /// Touch `t` of file `k`.
    Touch(usize, usize),
    /// The "commands that may have written files" header.
    WritersHead,
    /// Writer `w` of the model.
    Writer(usize),
}

/// The key of the diff part's lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DiffKey {
    file: usize,
    /// The selected touch when it has an outside change (its explanation goes first).
    touch: Option<usize>,
    width: u16,
    side_by_side: bool,
    wrap: bool,
}

/// What the panel computes and keeps between frames (owned by the app; safe to drop).
#[derive(Debug, Clone, Default)]
pub struct FilesCache {
    model: Option<Files>,
    /// `Session::invocations.len()` when the model was built, and when.
    built: Option<(usize, Instant)>,
    rows: Vec<Row>,
    /// Counts for the summary line: (changed files, added, removed, outside changes).
    totals: (usize, u64, u64, usize),
    diff: Option<(DiffKey, Vec<Line<'static>>)>,
    /// A build under way (the shown model, if any, is the previous one), and how far it got.
    pending: Option<Pending>,
    percent: Option<usize>,
}

/// The two phases of a build: the calls, then each changed file's net counts.
#[derive(Debug, Clone)]
enum Pending {
    Calls(Builder),
    Nets { files: Files, next: usize },
}

/// The first step of a build, run inside the key that opened the panel (the scans' budget).
pub const FIRST_STEP: Duration = Duration::from_millis(4);

/// Rebuilds of the model while calls keep arriving are at least this far apart.
const REBUILD_EVERY: Duration = Duration::from_secs(1);

/// Rows the list takes of a panel `height` rows high: about 40 %, at least 3 when it can.
fn list_rows(height: u16, rows: usize) -> usize {
    let h = usize::from(height.saturating_sub(1));
    let want = (h * 2 / 5).max(3).min(h);
    want.min(rows.max(1))
}

impl FilesCache {
    /// The model, once built.
    pub fn model(&self) -> Option<&Files> {
        self.model.as_ref()
    }

    /// Whether a build waits for its next step ([`Self::step`]).
    pub fn pending(&self) -> bool {
        self.pending.is_some()
    }

    /// How far a build got, in percent of the session's calls.
    pub fn progress(&self, session: &Session) -> Option<usize> {
        match self.pending.as_ref()? {
            Pending::Calls(b) => Some(b.done * 90 / session.invocations.len().max(1)),
            Pending::Nets { files, next } => Some(90 + next * 10 / files.files.len().max(1)),
        }
    }

    /// Starts a build unless one runs, and takes its first step ([`FIRST_STEP`]); a small
    /// session is done at once.
    pub fn start(&mut self, session: &Session) {
        self.start_with(session, FIRST_STEP);
    }

    /// [`Self::start`] with a first step of `budget` (tests step through a build).
    pub fn start_with(&mut self, session: &Session, budget: Duration) {
        if self.pending.is_none() {
            self.pending = Some(Pending::Calls(Builder::for_session(session)));
        }
        self.step(session, budget);
    }

    /// Starts a build when none was made, or the session has more calls than the model and the
    /// last build is [`REBUILD_EVERY`] old (a live session), unless one runs.
    pub fn refresh(&mut self, session: &Session) {
        let stale = match self.built {
            None => true,
            Some((n, at)) => n != session.invocations.len() && at.elapsed() >= REBUILD_EVERY,
        };
        if stale && !self.pending() {
            self.start(session);
        }
    }

    /// Builds the model to its end if none was ever built (the `W` key outside the panel).
    pub fn ensure_built(&mut self, session: &Session) {
        if self.model.is_none() {
            self.start(session);
        }
        if self.pending.is_some() {
            self.step(session, Duration::MAX);
        }
    }

    /// One step of a pending build, at most about `budget` long (a record read is the unit);
    /// installs the model when it ends. Returns whether the build ended.
    pub fn step(&mut self, session: &Session, budget: Duration) -> bool {
        let done = self.step_inner(session, budget);
        self.percent = self.progress(session);
        done
    }

    fn step_inner(&mut self, session: &Session, budget: Duration) -> bool {
        let started = Instant::now();
        let Some(mut p) = self.pending.take() else {
            return false;
        };
        loop {
            p = match p {
                Pending::Calls(mut b) => {
                    if b.step_session(session, budget) {
                        Pending::Nets {
                            files: b.finish(),
                            next: 0,
                        }
                    } else {
                        self.pending = Some(Pending::Calls(b));
                        return false;
                    }
                }
                Pending::Nets {
                    mut files,
                    mut next,
                } => {
                    let call = |i: usize| session.invocations.get(i).map(|b| &**b);
                    while next < files.files.len() {
                        let f = &files.files[next];
                        if f.changed()
                            && f.no_net.is_none()
                            && let Ok(n) = files.net(session, &call, f)
                        {
                            files.files[next].count_net(&n);
                        }
                        next += 1;
                        if started.elapsed() >= budget {
                            break;
                        }
                    }
                    if next < files.files.len() {
                        self.pending = Some(Pending::Nets { files, next });
                        return false;
                    }
                    self.install(files, session);
                    return true;
                }
            };
        }
    }

    fn install(&mut self, files: Files, session: &Session) {
        let mut rows = Vec::new();
        let mut totals = (0, 0u64, 0u64, 0);
        // Changed files first (in order of first touch), then the files only read: the first,
        // selected row is what a reviewer asks about (as `stats` lists them).
        let (changed, read): (Vec<_>, Vec<_>) = files
            .files
            .iter()
            .enumerate()
            .partition(|(_, f)| f.changed());
        for (k, f) in changed.into_iter().chain(read) {
            rows.push(Row::File(k));
            rows.extend((0..f.touches.len()).map(|t| Row::Touch(k, t)));
            if f.changed() {
                totals.0 += 1;
                totals.1 += u64::from(f.added);
                totals.2 += u64::from(f.removed);
                totals.3 += f.outside;
            }
        }
        if !files.writers.is_empty() {
            rows.push(Row::WritersHead);
            rows.extend((0..files.writers.len()).map(Row::Writer));
        }
        self.rows = rows;
        self.totals = totals;
        self.model = Some(files);
        self.diff = None;
        self.built = Some((session.invocations.len(), Instant::now()));
    }

    /// The patch of file `file` of the model (`None`: every changed file inside the working
    /// directory whose net change can be made), with the files it leaves out listed in its
    /// header. Errors: why none can be made.
    pub fn patch_of(
        &self,
        session: &Session,
        file: Option<usize>,
        of: &str,
    ) -> Result<String, String> {
        use crate::review::patch::{split, write_patch};
        let files = self
            .model
            .as_ref()
            .ok_or("the files panel is not built yet")?;
        let call = |i: usize| session.invocations.get(i).map(|b| &**b);
        let chosen: Vec<&FileEntry> = match file {
            Some(k) => files
                .files
                .get(k)
                .into_iter()
                .filter(|f| f.changed())
                .collect(),
            None => files.changed().collect(),
        };
        if chosen.is_empty() {
            return Err(match file {
                Some(_) => "no call changed this file (it was only read)".into(),
                None => "no call in the session changed a file".into(),
            });
        }
        let (parts, left) = split(files, session, &call, chosen);
        if parts.is_empty() {
            let why: Vec<String> = left
                .iter()
                .map(|l| format!("{}: {}", l.file.shown, l.why))
                .collect();
            return Err(format!("no net change can be made ({})", why.join("; ")));
        }
        Ok(write_patch(files, &parts, &left, of))
    }
}

impl FilesState {
    /// Brings the cache up to date for a panel drawn in `area` (the pane's inner area): the
    /// model (first time, or more calls), the selection clamped and kept in view, the selected
    /// file's diff lines for this width.
    pub fn prepare(
        &mut self,
        cache: &mut FilesCache,
        session: &Session,
        theme: &Theme,
        area: Rect,
        (side_by_side, wrap, limits): (bool, bool, Limits),
    ) {
        cache.refresh(session);
        let n = cache.rows.len();
        self.selected = self.selected.min(n.saturating_sub(1));
        let h = list_rows(area.height, n);
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + h {
            self.offset = self.selected + 1 - h;
        }
        self.offset = self.offset.min(n.saturating_sub(h));
        let Some(file) = self.selected_file(cache) else {
            cache.diff = None;
            return;
        };
        let key = DiffKey {
            file,
            touch: self.selected_outside(cache),
            width: area.width.max(1),
            side_by_side,
            wrap,
        };
        if cache.diff.as_ref().is_none_or(|(k, _)| *k != key) {
            let mut cx = RenderCtx::new(key.width, theme);
            cx.side_by_side = side_by_side;
            cx.wrap = wrap;
            cx.limits = limits;
            let lines = cache
                .model
                .as_ref()
                .and_then(|m| m.files.get(file).map(|f| (m, f)))
                .map(|(m, f)| diff_lines(m, f, key.touch, session, &cx))
                .unwrap_or_default();
            cache.diff = Some((key, lines));
        }
        let diff_h = usize::from(area.height).saturating_sub(1 + h + 1);
        let total = cache.diff.as_ref().map_or(0, |(_, l)| l.len());
        self.scroll = self.scroll.min(total.saturating_sub(diff_h.max(1)));
    }

    /// The selected touch's index in its file when it has an outside change.
    fn selected_outside(&self, cache: &FilesCache) -> Option<usize> {
        let Row::Touch(k, t) = *cache.rows.get(self.selected)? else {
            return None;
        };
        let touch = cache.model.as_ref()?.files.get(k)?.touches.get(t)?;
        touch.outside.is_some().then_some(t)
    }

    /// The file of the selected row (a file row, or one of its touches).
    pub fn selected_file(&self, cache: &FilesCache) -> Option<usize> {
        match cache.rows.get(self.selected)? {
            Row::File(k) | Row::Touch(k, _) => Some(*k),
            Row::WritersHead | Row::Writer(_) => None,
        }
    }

    /// The feed row Enter jumps to: the touch's call, a file's first change (else first
    /// touch), a writer's call.
    pub fn selected_item(&self, cache: &FilesCache) -> Option<usize> {
        let m = cache.model.as_ref()?;
        match *cache.rows.get(self.selected)? {
            Row::File(k) => {
                let f = m.files.get(k)?;
                f.touches
                    .iter()
                    .find(|t| t.op.changes())
                    .or_else(|| f.touches.first())
                    .map(|t| t.item)
            }
            Row::Touch(k, t) => m.files.get(k)?.touches.get(t).map(|t| t.item),
            Row::WritersHead => m.writers.first().map(|w| w.item),
            Row::Writer(w) => m.writers.get(w).map(|w| w.item),
        }
    }

    /// Moves the selection by `delta` rows, clamped; the diff part scrolls back to its top
    /// when the file changes.
    pub fn select_by(&mut self, cache: &FilesCache, delta: isize) {
        let before = (self.selected_file(cache), self.selected_outside(cache));
        let last = cache.rows.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(delta).min(last);
        if (self.selected_file(cache), self.selected_outside(cache)) != before {
            self.scroll = 0;
        }
    }

    /// The row on screen row `row` of a panel drawn in `area` (mouse clicks).
    pub fn index_at(&self, cache: &FilesCache, area: Rect, row: u16) -> Option<usize> {
        let k = usize::from(row.checked_sub(area.y.checked_add(1)?)?);
        let h = list_rows(area.height, cache.rows.len());
        (k < h && self.offset + k < cache.rows.len()).then_some(self.offset + k)
    }
}

/// `+12 −3`.
fn counts(added: u32, removed: u32) -> String {
    format!("+{added} −{removed}")
}

fn clock(t: Option<crate::protocol::Timestamp>) -> String {
    t.map_or_else(|| "--:--:--".to_owned(), crate::protocol::Timestamp::clock)
}

/// The selected file's part: its net change, or why it cannot be made and its edits in order;
/// then its outside changes and what ran between.
fn diff_lines(
    files: &Files,
    f: &FileEntry,
    first: Option<usize>,
    session: &Session,
    cx: &RenderCtx<'_>,
) -> Vec<Line<'static>> {
    let theme = cx.theme;
    let mut out: Vec<Line<'static>> = Vec::new();
    let call = |i: usize| session.invocations.get(i).map(|b| &**b);
    // The selected call's outside change first: what ran between is the question it raises.
    if let Some(t) = first.and_then(|k| f.touches.get(k)) {
        outside_lines(t, session, theme, &mut out);
        out.push(Line::from(""));
    }
    if f.changed() {
        match files.net(session, &call, f) {
            Ok(net) => {
                let text = crate::review::patch::file_section(&f.shown, &net);
                if text.is_empty() {
                    out.push(Line::from(Span::styled(
                        "no net change: the file ends as it began",
                        theme.dim,
                    )));
                } else {
                    let patch = crate::render::diff::parse::parse_patch(&text);
                    out.extend(crate::render::diff::build_patch_lines(&patch, cx).lines);
                }
            }
            Err(why) => {
                out.push(Line::from(Span::styled(
                    format!("no net change can be made: {}", visible(&why)),
                    theme.finding_warning,
                )));
                out.push(Line::from(Span::styled(
                    "its recorded changes, in order:",
                    theme.dim,
                )));
                for t in f.touches.iter().filter(|t| t.op.changes()) {
                    out.push(Line::from(Span::styled(
                        format!(
                            "L{} {} · {} · {}",
                            t.line,
                            visible(&t.tool),
                            t.op.label(),
                            counts(t.added, t.removed)
                        ),
                        theme.title,
                    )));
                    if let Some(inv) = call(t.call) {
                        let inv = session.with_input_output(inv);
                        let output = inv
                            .result
                            .as_ref()
                            .and_then(|r| r.output.clone())
                            .unwrap_or(serde_json::Value::Null);
                        let r = match &output {
                            serde_json::Value::String(s)
                                if crate::render::diff::parse::looks_like_diff(s) =>
                            {
                                crate::render::diff::build_patch_lines(
                                    &crate::render::diff::parse::parse_patch(s),
                                    cx,
                                )
                            }
                            _ => {
                                crate::render::diff::build_edit_lines(&output, Some(&inv.input), cx)
                            }
                        };
                        out.extend(r.lines);
                    }
                }
            }
        }
    } else {
        out.push(Line::from(Span::styled(
            format!(
                "{}: read, never changed by a recorded call",
                visible(&f.shown)
            ),
            theme.dim,
        )));
    }
    for (k, t) in f.touches.iter().enumerate() {
        if t.outside.is_some() && first != Some(k) {
            out.push(Line::from(""));
            outside_lines(t, session, theme, &mut out);
        }
    }
    if cx.wrap {
        out = crate::render::wrap::wrap_lines(&out, cx.width);
    }
    crate::detail::build::scrub_lines(&mut out);
    out
}

/// A touch's outside change: which recorded change it follows, and what ran between.
fn outside_lines(
    t: &crate::review::files::Touch,
    session: &Session,
    theme: &Theme,
    out: &mut Vec<Line<'static>>,
) {
    let call = |i: usize| session.invocations.get(i).map(|b| &**b);
    let Some(o) = &t.outside else { return };
    {
        out.push(Line::from(Span::styled(
            format!(
                "! before L{} ({}) the file was not what the recorded call at L{} saw or left: something else changed it",
                t.line,
                visible(&t.tool),
                call(o.after_call).map_or(0, |i| i.request_line)
            ),
            theme.finding_warning,
        )));
        if o.between.is_empty() {
            out.push(Line::from(Span::styled(
                "  nothing recorded ran between the two",
                theme.dim,
            )));
        }
        for s in &o.between {
            out.push(Line::from(vec![
                Span::styled(format!("  L{:<6}", s.line), theme.dim),
                Span::styled(visible(&s.what), theme.text),
            ]));
        }
    }
}

/// The files panel over a session.
#[derive(Debug, Clone, Copy)]
pub struct FilesView<'a> {
    theme: &'a Theme,
}

impl<'a> FilesView<'a> {
    pub fn new(theme: &'a Theme) -> Self {
        Self { theme }
    }

    fn row(self, cache: &FilesCache, row: Row, selected: bool, width: usize) -> Line<'static> {
        let th = self.theme;
        let base = if selected { th.selected } else { th.text };
        let pick = |s: Style| if selected { base } else { s };
        let mark = Span::styled(if selected { "▶" } else { " " }, base);
        let Some(model) = cache.model.as_ref() else {
            return Line::from("");
        };
        let mut spans = vec![mark];
        match row {
            Row::File(k) => {
                let Some(f) = model.files.get(k) else {
                    return Line::from("");
                };
                let letter = f.state.letter();
                let style = match letter {
                    'A' => th.diff_add,
                    'D' => th.diff_del,
                    'R' => th.dim,
                    _ => th.title,
                };
                spans.push(Span::styled(format!("{letter} "), pick(style)));
                let n = f.touches.len();
                let c = if f.changed() {
                    format!("{:<10}", counts(f.added, f.removed))
                } else {
                    format!("{:<10}", "read")
                };
                spans.push(Span::styled(c, pick(th.dim)));
                spans.push(Span::styled(
                    format!("{:>3} call{} ", n, crate::fmt::plural_s(n as u64)),
                    pick(th.dim),
                ));
                spans.push(Span::styled(
                    if f.outside > 0 { "! " } else { "  " },
                    pick(th.finding_warning),
                ));
                let used: usize = spans.iter().map(Span::width).sum();
                let path = crate::fmt::elide_path(&visible(&f.shown), width.saturating_sub(used));
                spans.push(Span::styled(path, base));
            }
            Row::Touch(k, i) => {
                let Some(tt) = model.files.get(k).and_then(|f| f.touches.get(i)) else {
                    return Line::from("");
                };
                spans.push(Span::styled(
                    if tt.outside.is_some() { "  ! " } else { "    " },
                    pick(th.finding_warning),
                ));
                spans.push(Span::styled(format!("{} ", clock(tt.at)), pick(th.dim)));
                spans.push(Span::styled(crate::fmt::fit(&visible(&tt.tool), 10), base));
                spans.push(Span::raw(" "));
                let what = if tt.op.changes() {
                    format!("{} {}", tt.op.label(), counts(tt.added, tt.removed))
                } else {
                    tt.op.label().to_owned()
                };
                spans.push(Span::styled(format!("{what:<16}"), pick(th.dim)));
                let mut note = format!("L{}", tt.line);
                if tt.subagent {
                    note.push_str(" · subagent");
                }
                if tt.outside.is_some() {
                    note.push_str(" · ! changed by something else before it");
                }
                spans.push(Span::styled(note, pick(th.dim)));
            }
            Row::WritersHead => {
                spans.push(Span::styled(
                    "commands that may have written files (not in the record; a guess):",
                    pick(th.title),
                ));
            }
            Row::Writer(w) => {
                let Some(w) = model.writers.get(w) else {
                    return Line::from("");
                };
                spans.push(Span::styled(format!("  {} ", clock(w.at)), pick(th.dim)));
                let first = w.command.lines().next().unwrap_or("");
                spans.push(Span::styled(visible(first), base));
                spans.push(Span::styled(
                    format!("  [{}]", visible(&w.why.join(", "))),
                    pick(th.dim),
                ));
            }
        }
        Line::from(spans)
    }

    /// Draws the panel into `area` (module docs).
    pub fn render_with(
        &self,
        area: Rect,
        buf: &mut Buffer,
        state: &FilesState,
        cache: &FilesCache,
    ) {
        if area.height == 0 || area.width == 0 {
            return;
        }
        let t = self.theme;
        let width = usize::from(area.width);
        let (files, added, removed, outside) = cache.totals;
        let writers = cache.model.as_ref().map_or(0, |m| m.writers.len());
        let mut summary = if cache.model.is_none() {
            format!(
                "reading the session's files… {}%",
                cache.percent.unwrap_or(0)
            )
        } else if cache.rows.is_empty() {
            "no call in this session read or changed a file".to_owned()
        } else {
            format!(
                "{} changed · +{added} −{removed}",
                crate::fmt::plural(files as u64, "file")
            )
        };
        if outside > 0 {
            let _ = write!(summary, " · {outside} changed outside the recorded edits");
        }
        if writers > 0 {
            let n = crate::fmt::plural(writers as u64, "command");
            let _ = write!(summary, " · {n} may have written files");
        }
        // Changes the session rewound past are not in the model (attack 8 #45).
        let abandoned = cache.model.as_ref().map_or(0, |m| m.abandoned.len());
        if abandoned > 0 {
            let n = crate::fmt::plural(abandoned as u64, "change");
            let _ = write!(summary, " · {n} on an abandoned branch left out");
        }
        if crate::fmt::width(&summary) > width && cache.model.is_some() {
            // The short form: `11 files · +1147 −183 · 3 outside · 2 writers`.
            summary = format!(
                "{} · +{added} −{removed}",
                crate::fmt::plural(files as u64, "file")
            );
            if outside > 0 {
                let _ = write!(summary, " · {outside} outside");
            }
            if writers > 0 {
                let _ = write!(
                    summary,
                    " · {}",
                    crate::fmt::plural(writers as u64, "writer")
                );
            }
            if abandoned > 0 {
                let _ = write!(summary, " · {abandoned} abandoned");
            }
        }
        buf.set_line(
            area.x,
            area.y,
            &Line::from(Span::styled(crate::fmt::truncate(&summary, width), t.title)),
            area.width,
        );
        let h = list_rows(area.height, cache.rows.len());
        for (k, r) in cache.rows.iter().skip(state.offset).take(h).enumerate() {
            let y = area.y + 1 + k as u16;
            let selected = state.offset + k == state.selected;
            if selected {
                buf.set_style(Rect::new(area.x, y, area.width, 1), t.selected);
            }
            let line = self.row(cache, *r, selected, width);
            buf.set_line(area.x, y, &line, area.width);
        }
        let rule_y = area.y + 1 + h as u16;
        if rule_y >= area.y + area.height {
            return;
        }
        let lines = cache.diff.as_ref().map_or(&[][..], |(_, l)| l.as_slice());
        let rest = usize::from(area.y + area.height - rule_y - 1);
        let pos = if lines.len() > rest {
            format!(
                " {}–{}/{} ",
                state.scroll + 1,
                (state.scroll + rest).min(lines.len()),
                lines.len()
            )
        } else {
            String::new()
        };
        let title = match state
            .selected_file(cache)
            .and_then(|k| cache.model.as_ref()?.files.get(k))
        {
            Some(f) => format!(" {} · {}{pos}", visible(&f.shown), f.state.label()),
            None => " select a file ".to_owned(),
        };
        let rule: String = std::iter::repeat_n('─', width).collect();
        buf.set_line(
            area.x,
            rule_y,
            &Line::from(Span::styled(rule, t.border)),
            area.width,
        );
        buf.set_line(
            area.x + 1,
            rule_y,
            &Line::from(Span::styled(
                crate::fmt::elide_path(&title, width.saturating_sub(2)),
                t.dim,
            )),
            area.width.saturating_sub(1),
        );
        let y0 = rule_y + 1;
        for (k, l) in lines.iter().skip(state.scroll).take(rest).enumerate() {
            let y = y0 + k as u16;
            let r = Rect::new(area.x, y, area.width, 1);
            ratatui::widgets::Paragraph::new(l.clone()).render(r, buf);
        }
    }
}
