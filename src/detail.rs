//! The detail pipeline: what the detail pane shows for the selected item, as one typed state.
//!
//! Who calls it: the app (`App::prepare` asks [`Pipeline::refresh`] for the selected item's
//! [`DetailKey`]; the loop spawns [`Pipeline::take_job`] on `spawn_blocking` and hands the result
//! to [`Pipeline::on_done`]; a session change wholesale calls [`Pipeline::invalidate`]);
//! `cmd::print` (`--detail`) builds with the same [`build`] functions, so what it prints is what
//! the pane shows with every block expanded. The widget (`ui::detail`) draws [`Pipeline::lines`].
//!
//! The state:
//! * the key of what is shown ([`DetailKey`]: item, its revision, the catalog revision, whether
//!   the source ended, width and flags, theme) and its [`Stage`];
//! * the source snapshot a job renders from ([`build::DetailSource`], an owned copy; a deferred
//!   input or output is read back from the file in the job, off the app task);
//! * the builder of sections (header, findings, input, output, stream: [`build`], [`stream`]);
//! * the job state: at most one job in flight and one queued, the newest queued wins;
//! * the stale-result rule ([`Pipeline::on_done`]): a result is used only when it was started
//!   after the last [`Pipeline::invalidate`] and is for the selected item; first screens only
//!   when the quick view they improve is still shown.
//!
//! Light items render inline. Heavy ones ([`build::is_heavy`], or any item on a live source)
//! show a quick plain rendering of the rows the pane needs at once ([`build::build_quick_lines`],
//! grown by doubling on scroll), then stages from jobs: the shown screens highlighted, every row
//! plain, every row highlighted.

pub mod build;
pub mod stream;

use ratatui::text::Line;

pub use build::{DetailOpts, DetailSource};

use crate::session::{Deferred, Session};
use crate::theme::Theme;

/// What identifies a detail rendering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DetailKey {
    pub item: usize,
    /// The item's own revision ([`build::item_rev`]).
    pub rev: u64,
    /// Catalog publishes so far: a call's header shows the output type its catalog entry
    /// expects.
    pub catalog_rev: usize,
    /// The source ended: an open call then says "no result".
    pub ended: bool,
    pub opts: DetailOpts,
    pub theme: u8,
}

impl DetailKey {
    /// The key of item `item` of `session` drawn with `opts` and `theme`.
    pub fn of(session: &Session, item: usize, opts: DetailOpts, theme: &Theme) -> Self {
        Self {
            item,
            rev: build::item_rev(session, item),
            catalog_rev: session.publishes.len(),
            ended: session.ended,
            opts,
            theme: theme.id,
        }
    }

    /// The same item drawn the same way, whatever its content's revision.
    pub fn same_view(self, other: Self) -> bool {
        Self {
            rev: other.rev,
            catalog_rev: other.catalog_rev,
            ended: other.ended,
            ..self
        } == other
    }
}

/// How far the shown lines are from the complete, highlighted rendering of their key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stage {
    /// Nothing rendered.
    #[default]
    Empty,
    /// The first `rows` output rows of each renderer, plain, built on the app task; `cut`: more
    /// rows exist than it shows.
    Quick { rows: usize, cut: bool },
    /// The first `rows` rows highlighted (a job's first stage).
    FirstScreens { rows: usize, cut: bool },
    /// Every row, plain; the highlighted rendering is still to come.
    Plain,
    /// Every row, highlighted (or plain under a theme without colour): final for its key.
    Complete,
}

impl Stage {
    /// Every row is there (plain or highlighted).
    pub fn is_whole(self) -> bool {
        matches!(self, Self::Plain | Self::Complete)
    }
}

/// What a render job computes.
#[derive(Debug, Clone, PartialEq)]
pub enum JobKind {
    /// The first `rows` rows of each renderer, highlighted.
    FirstScreens { rows: usize },
    /// Every row, plain, with `first` (the highlighted first screens shown, cut at `first_cut`)
    /// spliced over its start.
    Plain {
        first: Vec<Line<'static>>,
        first_cut: Option<usize>,
    },
    /// Every row, highlighted.
    Highlighted,
}

impl JobKind {
    /// A short name for logs.
    pub fn name(&self) -> &'static str {
        match self {
            Self::FirstScreens { .. } => "first-screens",
            Self::Plain { .. } => "plain",
            Self::Highlighted => "highlighted",
        }
    }
}

/// A heavy detail render to run off the app task.
#[derive(Debug)]
pub struct RenderJob {
    pub generation: u64,
    pub key: DetailKey,
    pub src: DetailSource,
    /// Reads the snapshot's deferred input and output back (in the job).
    pub deferred: Deferred,
    pub theme: Theme,
    pub kind: JobKind,
}

impl RenderJob {
    /// Runs the render (blocking: file read-back, parse, render; call on `spawn_blocking`).
    pub fn run(mut self) -> RenderDone {
        let started = std::time::Instant::now();
        self.src.read_back(&self.deferred);
        let (lines, cut_at) = match &self.kind {
            JobKind::FirstScreens { rows } => {
                let b = build::build_first_lines(&self.src, &self.theme, self.key.opts, *rows);
                wrap_if(b.lines, b.cut_at, self.key)
            }
            JobKind::Highlighted => {
                let lines = build::build_detail_lines(&self.src, &self.theme, self.key.opts);
                wrap_if(lines, None, self.key)
            }
            JobKind::Plain { first, first_cut } => {
                let lines = build::build_plain_detail_lines(&self.src, &self.theme, self.key.opts);
                let (full, _) = wrap_if(lines, None, self.key);
                (build::splice_first_screens(first, *first_cut, full), None)
            }
        };
        tracing::debug!(
            item = self.key.item,
            generation = self.generation,
            kind = self.kind.name(),
            lines = lines.len(),
            ms = started.elapsed().as_secs_f64() * 1000.0,
            "render job done"
        );
        RenderDone {
            generation: self.generation,
            key: self.key,
            lines,
            cut_at,
            kind: self.kind,
        }
    }
}

/// A finished render job.
#[derive(Debug)]
pub struct RenderDone {
    pub generation: u64,
    pub key: DetailKey,
    pub lines: Vec<Line<'static>>,
    /// [`build::Built::cut_at`] in the wrapped lines (first screens only).
    pub cut_at: Option<usize>,
    /// What the job computed.
    pub kind: JobKind,
}

/// Wraps lines at the key's width when it wraps; maps a cut index into the wrapped lines.
fn wrap_if(
    lines: Vec<Line<'static>>,
    cut_at: Option<usize>,
    key: DetailKey,
) -> (Vec<Line<'static>>, Option<usize>) {
    if !key.opts.wrap {
        return (lines, cut_at);
    }
    let w = usize::from(key.opts.width);
    let mut out = Vec::with_capacity(lines.len());
    let mut cut = None;
    for (i, l) in lines.iter().enumerate() {
        if cut_at == Some(i) {
            cut = Some(out.len());
        }
        out.extend(crate::render::wrap::wrap_line_styled(l, w));
    }
    (out, cut)
}

/// The detail pane's state: what is shown, for which key, at which stage, and the render jobs.
#[derive(Debug, Default)]
pub struct Pipeline {
    /// The key the shown lines were rendered for.
    key: Option<DetailKey>,
    stage: Stage,
    lines: Vec<Line<'static>>,
    /// Where the shown partial lines were cut (first screens), for splicing.
    cut_at: Option<usize>,
    generation: u64,
    /// Results of generations below this were started before an [`Pipeline::invalidate`].
    stale_before: u64,
    in_flight: bool,
    /// The job for the loop to spawn next (newest wins).
    queued: Option<RenderJob>,
}

impl Pipeline {
    /// The shown lines (wrapped as drawn).
    pub fn lines(&self) -> &[Line<'static>] {
        &self.lines
    }

    /// How complete the shown lines are.
    pub fn stage(&self) -> Stage {
        self.stage
    }

    /// The key the shown lines were rendered for, when they are whole (every row).
    pub fn whole_key(&self) -> Option<DetailKey> {
        self.key.filter(|_| self.stage.is_whole())
    }

    /// Whether a render job is running (its result not in yet).
    pub fn in_flight(&self) -> bool {
        self.in_flight
    }

    /// The job waiting to be spawned, if any.
    pub fn queued(&self) -> Option<&RenderJob> {
        self.queued.as_ref()
    }

    /// Takes the job to spawn, if any.
    pub fn take_job(&mut self) -> Option<RenderJob> {
        self.queued.take()
    }

    /// Forgets what is shown (another item is selected, or rows shifted). Jobs in flight stay
    /// valid for their own item.
    pub fn clear(&mut self) {
        self.key = None;
        self.stage = Stage::Empty;
        self.lines.clear();
        self.cut_at = None;
    }

    /// The session changed wholesale (restart, compaction, replacement): item numbers mean
    /// other rows now. Forgets what is shown and ignores every result started before.
    pub fn invalidate(&mut self) {
        self.clear();
        self.generation += 1;
        self.stale_before = self.generation;
        self.in_flight = false;
        self.queued = None;
    }

    fn queue(&mut self, job: RenderJob) {
        tracing::debug!(
            item = job.key.item,
            generation = job.generation,
            kind = job.kind.name(),
            width = job.key.opts.width,
            replaced = self.queued.is_some(),
            "render job queued"
        );
        self.in_flight = true;
        self.queued = Some(job);
    }

    /// Brings the shown lines up to date for `key` (the selected item drawn now): nothing when
    /// they are complete for it; inline when light; else a quick rendering at once (unless one
    /// for the same view is enough for `scroll` and `height`) and the next stage as a job.
    /// `offload`: render even light items in jobs (live sources: a first use of a syntax can
    /// stall for 100+ ms).
    pub fn refresh(
        &mut self,
        session: &Session,
        key: DetailKey,
        theme: &Theme,
        offload: bool,
        (scroll, height): (usize, usize),
    ) {
        let current = self.key == Some(key);
        if current
            && (self.stage == Stage::Complete || (self.stage == Stage::Plain && self.in_flight))
        {
            return;
        }
        if !(offload || build::is_heavy(session, key.item)) {
            let Some(src) = DetailSource::from_session(session, key.item) else {
                return;
            };
            let lines = build::build_detail_lines(&src, theme, key.opts);
            self.lines = wrap_if(lines, None, key).0;
            self.key = Some(key);
            self.stage = Stage::Complete;
            self.cut_at = None;
            return;
        }
        // A live update of what is shown keeps it until the new rendering arrives; anything
        // else shows the first screens at once (plain, bounded) while the full render runs.
        let same_view = self.key.is_some_and(|k| k.same_view(key));
        if !(same_view && self.stage.is_whole()) {
            let have = match self.stage {
                Stage::Quick { rows, cut } | Stage::FirstScreens { rows, cut } if same_view => {
                    Some((rows, cut))
                }
                _ => None,
            };
            // A call with a part still in the file is not re-rendered on the app task once shown:
            // its quick view would lose what a job read back.
            let regrow = have.is_none() || !build::has_deferred(session, key.item);
            if regrow
                && let Some(rows) =
                    build::quick_rows(have, key.opts, scroll, height, self.lines.len())
            {
                let b = build::build_quick_lines(session, key.item, theme, key.opts, rows);
                let cut = b.cut_at.is_some();
                (self.lines, self.cut_at) = wrap_if(b.lines, b.cut_at, key);
                self.key = Some(key);
                self.stage = Stage::Quick { rows, cut };
            }
        }
        if self.in_flight {
            return;
        }
        let Some(src) = DetailSource::snapshot(session, key.item) else {
            return;
        };
        // First the shown screens with colours, then everything plain (exact counts, every row;
        // cheap), then everything with colours.
        let same = self.key.is_some_and(|k| k.same_view(key));
        let kind = match self.stage {
            Stage::Quick { rows, .. } if same => JobKind::FirstScreens { rows },
            Stage::FirstScreens { .. } if same && theme.colour => JobKind::Plain {
                first: self.lines.clone(),
                first_cut: self.cut_at,
            },
            _ => JobKind::Highlighted,
        };
        self.generation += 1;
        self.queue(RenderJob {
            generation: self.generation,
            key,
            src,
            deferred: session.deferred(),
            theme: *theme,
            kind,
        });
    }

    /// Takes a job's result under the stale-result rule; `selected` is the selected item now.
    /// Returns whether what is shown changed, or a redraw should start a render that no job in
    /// flight blocks any more.
    pub fn on_done(&mut self, done: RenderDone, selected: Option<usize>) -> bool {
        if done.generation == self.generation {
            self.in_flight = false;
        }
        if done.generation < self.stale_before {
            // Rendered from a session since replaced: its item numbers mean other rows now.
            tracing::debug!(
                generation = done.generation,
                "render result from before a rebase dropped"
            );
            return false;
        }
        if selected != Some(done.key.item) {
            tracing::debug!(
                item = done.key.item,
                ?selected,
                "render result for another row dropped"
            );
            // Stale. If the selected row still shows a placeholder, draw again so `refresh`
            // starts its render now that no job is in flight.
            return !self.stage.is_whole() && !self.in_flight;
        }
        match done.kind {
            JobKind::FirstScreens { rows } => match self.stage {
                // The highlighted first screens replace the plain ones they cover.
                Stage::Quick { rows: have, .. } | Stage::FirstScreens { rows: have, .. }
                    if self.key.is_some_and(|k| k.same_view(done.key)) && have <= rows =>
                {
                    self.stage = Stage::FirstScreens {
                        rows,
                        cut: done.cut_at.is_some(),
                    };
                    self.lines = done.lines;
                    self.cut_at = done.cut_at;
                    true
                }
                _ => false,
            },
            JobKind::Plain { .. } => {
                self.accept_whole(done.key, done.lines, Stage::Plain);
                true
            }
            JobKind::Highlighted => {
                self.accept_whole(done.key, done.lines, Stage::Complete);
                true
            }
        }
    }

    fn accept_whole(&mut self, key: DetailKey, lines: Vec<Line<'static>>, stage: Stage) {
        self.key = Some(key);
        self.lines = lines;
        self.stage = stage;
        self.cut_at = None;
    }
}
