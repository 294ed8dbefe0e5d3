//! Replay mode of the app (`rawpv --replay FILE`): wires the pure [`Replay`] player into the
//! [`App`]: builds a replaying app, applies the player's [`Move`]s to the session and view, runs
//! the replay actions and reserves the timeline row.
//!
//! Who calls it: [`App::update`] (replay ticks, replay actions), [`App::prepare`] and
//! [`crate::app::run`] (through [`run_replay`]). Invariants: the session always equals the fold
//! of `replay.items()[..replay.cursor()]` (finished exactly when the cursor is at the end); a
//! timer runs only while playing ([`App::replay_deadline`]). `rawpv --replay` opens *playing*
//! from the start, at `--speed`, with idle gaps compressed to `--max-idle` seconds.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::{App, Msg, SourceStatus, event_loop};
use crate::action::Action;
use crate::cli::OpenArgs;
use crate::config::Config;
use crate::import::{Decoded, Format};
use crate::replay::{Move, Replay};
use crate::source::{NetConfig, SourceKind, SourceMsg, load_input_with};
use crate::tui::Tui;

/// While playing, the timeline redraws at least this often (the position moves between frames).
pub const REPLAY_REDRAW: Duration = Duration::from_millis(250);

impl App {
    /// A paused replay at 0 over `items` (nothing applied yet), without a terminal.
    pub fn replaying(items: Vec<Decoded>, source_label: &str, speed: f64, max_idle: f64) -> Self {
        let mut app = Self::new(format!("{source_label} (replay)"), false);
        app.theme = crate::theme::Theme::dark();
        let max_idle = Duration::try_from_secs_f64(max_idle.max(0.0)).unwrap_or(Duration::MAX);
        app.replay = Some(Replay::new(items, speed, max_idle));
        app.view.feed.follow = true;
        app.source_status = SourceStatus::Live;
        app
    }

    /// Applies the user's config: theme (mono under `NO_COLOR`) and key bindings.
    pub fn configure(&mut self, config: &Config) {
        self.theme = config.theme(crate::config::no_color_env());
        self.keymap = config.keymap();
        self.limits = config.limits.limits();
        self.thresholds = config.live.thresholds();
        self.notify = config.notify.resolve_env();
        self.view.feed_share = config
            .feed_width
            .clamp(crate::ui::Split::MIN_SHARE, crate::ui::Split::MAX_SHARE);
        config.apply_render_settings();
    }

    /// When the replay timer should fire next: `None` unless playing.
    pub fn replay_deadline(&self) -> Option<Instant> {
        let r = self.replay.as_ref()?;
        let due = r.next_due()?;
        Some(due.min(Instant::now() + REPLAY_REDRAW))
    }

    /// Replay timer: applies what is due at `now`.
    pub(super) fn replay_tick(&mut self, now: Instant) -> bool {
        self.clock = now;
        let Some(r) = self.replay.as_mut() else {
            return false;
        };
        let mv = r.tick(now);
        self.apply_move(mv);
        true
    }

    /// Runs a replay action at the current instant.
    pub(super) fn replay_action(&mut self, a: Action) {
        let now = Instant::now();
        self.clock = now;
        let Some(r) = self.replay.as_mut() else {
            self.view.message = Some("not a replay: `rawpv --replay FILE` plays a session".into());
            return;
        };
        let mv = match a {
            Action::TogglePlay => r.toggle_play(now),
            Action::SpeedUp | Action::SpeedDown => {
                r.change_speed(now, a == Action::SpeedUp);
                Move::None
            }
            Action::StepForward | Action::StepBack => r.step(now, a == Action::StepForward),
            Action::NextTurn | Action::PrevTurn => {
                let mv = r.seek_turn(now, a == Action::NextTurn);
                if mv == Move::None {
                    self.view.message = Some("no more turns".into());
                }
                mv
            }
            Action::Seek(p) => r.seek_percent(now, p),
            Action::Quit
            | Action::Suspend
            | Action::MoveDown
            | Action::MoveUp
            | Action::PageDown
            | Action::PageUp
            | Action::Top
            | Action::Bottom
            | Action::FocusNext
            | Action::Open
            | Action::ToggleExpand
            | Action::Follow
            | Action::ToggleQuiet
            | Action::ToggleZoom
            | Action::ToggleWrap
            | Action::ToggleSideBySide
            | Action::FeedNarrower
            | Action::FeedWider
            | Action::StartSearch
            | Action::SearchNext
            | Action::SearchPrev
            | Action::NextError
            | Action::PrevError
            | Action::NextPrompt
            | Action::PrevPrompt
            | Action::NextCompaction
            | Action::StartFilter
            | Action::ToggleFold
            | Action::FoldTurn
            | Action::UnfoldTurn
            | Action::FoldAll
            | Action::UnfoldAll
            | Action::ShowCatalog
            | Action::ShowProblems
            | Action::ShowFiles
            | Action::ShowAudit
            | Action::AuditKind
            | Action::ShowSessions
            | Action::WritePatch
            | Action::SaveImages
            | Action::OpenImage
            | Action::ViewImage
            | Action::ToggleHelp
            | Action::CopyInput
            | Action::CopyOutput
            | Action::CopyRaw
            | Action::ToggleRedactCopies
            | Action::ExportPage
            | Action::Cancel => Move::None,
        };
        self.apply_move(mv);
    }

    /// Brings the session to the player's cursor.
    fn apply_move(&mut self, mv: Move) {
        let Some(len) = self.replay.as_ref().map(Replay::len) else {
            return;
        };
        match mv {
            Move::None => return,
            Move::Forward { from, to } => {
                for i in from..to {
                    let Some(d) = self.replay.as_ref().and_then(|r| r.items().get(i).cloned())
                    else {
                        break;
                    };
                    let applied = self.session.apply(d);
                    self.reconcile(applied);
                }
                if to == len {
                    self.session.finish();
                }
            }
            Move::Back { to } => {
                let Some(session) = self.replay.as_mut().map(|r| r.rebuild(to)) else {
                    return;
                };
                self.session = session;
                self.detail.invalidate();
                self.rebuild_rows();
                if self.view.feed.follow {
                    self.view.feed.selected = self.row_count().saturating_sub(1);
                }
                self.reset_detail();
            }
        }
        self.source_status = if self.session.ended {
            SourceStatus::Ended
        } else {
            SourceStatus::Live
        };
    }
}

/// Loads the config (`--config` / `RAWPV_CONFIG` / the default file), printing warnings on
/// stderr; `None` after printing the error (the caller exits 2).
pub(super) fn load_config(open: &OpenArgs) -> Option<Config> {
    match crate::config::load(open.config.as_deref()) {
        Ok(loaded) => {
            for w in &loaded.warnings {
                eprintln!("rawpv: warning: {w}");
            }
            // Checked by the load: the prices of the prompt rows, status bar and browser.
            let _ = crate::usage::price::install(&loaded.config.prices);
            Some(loaded.config)
        }
        Err(e) => {
            eprintln!("rawpv: {e}");
            None
        }
    }
}

/// `rawpv --replay INPUT`: loads the whole input, then plays it in the viewer.
///
/// # Errors
/// The terminal could not be set up or written.
pub(super) async fn run_replay(
    kind: SourceKind,
    open: &OpenArgs,
    config: &Config,
    note: Option<String>,
) -> color_eyre::Result<i32> {
    if matches!(kind, SourceKind::Follow(_) | SourceKind::Url(_)) {
        eprintln!("rawpv: --replay plays a saved session; it cannot follow a file or a stream");
        return Ok(2);
    }
    let net = NetConfig::default();
    let loaded = match load_input_with(&kind, &net).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return Ok(2);
        }
    };
    let format: Format = loaded.format;
    let mut app = App::replaying(loaded.items, &kind.label(), open.speed, open.max_idle);
    app.format = Some(format);
    app.configure(config);
    if note.is_some() {
        app.view.message = note;
    }
    let now = Instant::now();
    if let Some(r) = app.replay.as_mut() {
        let mv = r.play(now);
        app.apply_move(mv);
    }
    app.update(Msg::ReplayTick(now));
    // No source task: the player feeds the session; the closed channel ends at once.
    let (tx, rx) = mpsc::channel::<SourceMsg>(1);
    drop(tx);
    let mut tui = Tui::init()?;
    let result = event_loop(&mut app, &mut tui, rx).await;
    drop(tui);
    result.map(|()| 0)
}
