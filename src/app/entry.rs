//! Entry points of the viewer: `rawpv [INPUT]` ([`run`]) and the session browser
//! ([`run_browse`]): refuse what cannot be opened before the screen is taken, read the config
//! and token, start the source task and the loop, and restore the terminal.
//!
//! Who calls it: `main.rs`. Invariants: errors before the TUI starts go to stderr with exit
//! code 2; the source task is cancelled and awaited (at most 1 s) when the loop ends.

use std::io::IsTerminal;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{App, browser, event_loop, player};
use crate::cli::OpenArgs;
use crate::source::{CHANNEL_CAPACITY, NetConfig, SourceKind, spawn_source_with};
use crate::tui::Tui;

/// `rawpv` with no input on a terminal: the session browser (see `app/browser.rs`).
///
/// # Errors
/// The terminal could not be set up or written.
pub async fn run_browse(open: &OpenArgs) -> color_eyre::Result<i32> {
    if !std::io::stdout().is_terminal() {
        eprintln!("rawpv: the browser needs a terminal; use `rawpv print INPUT` for plain output");
        return Ok(2);
    }
    let Some(mut config) = player::load_config(open) else {
        return Ok(2);
    };
    // The browser's own status line has no room for a note: the log says what was picked.
    let _ = pick_theme(&mut config, open);
    // Zero set-up (issue 21): the session of this project being written now opens first.
    let roots = crate::browse::default_roots(&config.browser.dirs);
    let first = crate::project::here().and_then(|(dir, home, today)| {
        crate::project::project_sessions(&roots, &dir, home.as_deref(), today)
            .into_iter()
            .next()
            .filter(|e| {
                crate::project::being_written(e, std::time::SystemTime::now(), config.live.recent)
            })
            .map(|e| e.path)
    });
    if let Some(p) = &first {
        tracing::info!(path = %p.display(), "this project's session is being written: opened live");
    }
    browser::run_browser(&config, open.no_index, first).await
}

/// `rawpv --latest`: the newest session of the project in the current directory (or its
/// nearest parent with sessions: `crate::project`), followed as `-f` does.
///
/// # Errors
/// The terminal could not be set up or written.
pub async fn run_latest(open: &OpenArgs) -> color_eyre::Result<i32> {
    let Some(config) = player::load_config(open) else {
        return Ok(2);
    };
    let roots = crate::browse::default_roots(&config.browser.dirs);
    let Some((dir, home, today)) = crate::project::here() else {
        eprintln!("rawpv: --latest: the current directory cannot be read");
        return Ok(2);
    };
    let found = crate::project::project_sessions(&roots, &dir, home.as_deref(), today);
    let Some(newest) = found.into_iter().next() else {
        eprintln!(
            "rawpv: --latest: no session of {} (looked in {})",
            crate::render::text::visible(&dir.display().to_string()),
            crate::project::looked_in(&roots, &dir, today).join(", ")
        );
        return Ok(2);
    };
    Box::pin(run(SourceKind::Follow(newest.path), open)).await
}

/// Why the viewer cannot open `kind` at all, said before the screen is taken (like `print`):
/// a saved file that is missing, a directory or not a session (binary data, plain text: what
/// it looks like and how to read it), or `-` while stdin is the terminal (the
/// reader would eat the keys). `None` when it can try; a followed file may appear later.
pub(super) fn unopenable(kind: &SourceKind) -> Option<String> {
    match kind {
        SourceKind::File(p) => match std::fs::metadata(p) {
            Err(e) => Some(format!("cannot read {}: {e}", p.display())),
            Ok(m) if m.is_dir() => Some(format!("cannot read {}: it is a directory", p.display())),
            Ok(_) => crate::import::not_a_session(
                p,
                &crate::render::text::visible(&p.display().to_string()),
            ),
        },
        SourceKind::Stdin if std::io::stdin().is_terminal() => Some(
            "`-` reads a session from stdin, but stdin is the terminal: pipe one in \
             (`producer | rawpv -`) or name a file"
                .into(),
        ),
        SourceKind::Stdin | SourceKind::Follow(_) | SourceKind::Url(_) | SourceKind::Demo => None,
    }
}

/// The theme for the screen: `--theme` over the config's; `auto` asks the terminal
/// ([`crate::theme::probe_background`], stdout is a terminal here). Returns the status bar's
/// note of what the answer chose ([`crate::config::Config::pick_theme`]).
pub(super) fn pick_theme(config: &mut crate::config::Config, open: &OpenArgs) -> Option<String> {
    if let Some(t) = open.theme {
        config.set_theme(t);
    }
    config.pick_theme(crate::config::no_color_env(), || {
        crate::theme::probe_background(crate::theme::PROBE_TIMEOUT)
    })
}

/// Runs the TUI on `kind`; returns the exit code.
///
/// # Errors
/// The terminal could not be set up or written.
pub async fn run(kind: SourceKind, open: &OpenArgs) -> color_eyre::Result<i32> {
    if let Some(e) = unopenable(&kind) {
        eprintln!("rawpv: {e}");
        return Ok(2);
    }
    if !std::io::stdout().is_terminal() {
        eprintln!("rawpv: the viewer needs a terminal; use `rawpv print INPUT` for plain output");
        return Ok(2);
    }
    let live = matches!(
        kind,
        SourceKind::Follow(_) | SourceKind::Stdin | SourceKind::Url(_)
    );
    let Some(mut config) = player::load_config(open) else {
        return Ok(2);
    };
    if open.replay {
        let note = pick_theme(&mut config, open);
        return player::run_replay(kind, open, &config, note).await;
    }
    let mut app = App::new(kind.label(), live);
    if let SourceKind::File(p) = &kind {
        // Big outputs stay in the file and are read back when shown (RAWP NDJSON files).
        app.session.backing = Some(std::sync::Arc::from(p.as_path()));
    }
    if !live {
        // A saved file is finite: every row stays. The row cap is for endless live streams.
        app.session.max_items = Some(0);
    }
    if kind == SourceKind::Demo && open.input.is_none() {
        app.hint = Some("demo session: `rawpv FILE` opens a session file".into());
    }
    run_app(app, config, open, |net, tx, cancel| {
        spawn_source_with(kind, net, tx, cancel)
    })
    .await
}

/// The viewer on several inputs (issue 24: `rawpv A B …`, `rawpv -f A B …`, a directory): one
/// view, saved inputs merged by time and live ones by arrival (`source::merge`), each session
/// named within its input. An input that cannot be read is an `input-failed` finding on screen
/// and the others are shown; only when none can be is it refused before the screen is taken.
///
/// # Errors
/// The terminal could not be set up or written.
pub async fn run_many(kinds: Vec<SourceKind>, open: &OpenArgs) -> color_eyre::Result<i32> {
    let refused: Vec<String> = kinds.iter().filter_map(unopenable).collect();
    let stdin_is_tty = kinds.contains(&SourceKind::Stdin) && std::io::stdin().is_terminal();
    if refused.len() == kinds.len() || stdin_is_tty {
        for r in &refused {
            eprintln!("rawpv: {r}");
        }
        return Ok(2);
    }
    if !std::io::stdout().is_terminal() {
        eprintln!("rawpv: the viewer needs a terminal; use `rawpv print INPUT…` for plain output");
        return Ok(2);
    }
    if open.replay {
        eprintln!("rawpv: --replay plays one input; name one");
        return Ok(2);
    }
    let Some(config) = player::load_config(open) else {
        return Ok(2);
    };
    let live = kinds.iter().any(|k| {
        matches!(
            k,
            SourceKind::Follow(_) | SourceKind::Stdin | SourceKind::Url(_)
        )
    });
    let labels = crate::source::merge::labels(&kinds);
    let mut app = App::new(format!("{} inputs", kinds.len()), live);
    app.session.sessions.set_inputs(labels);
    if !live {
        app.session.max_items = Some(0);
    }
    run_app(app, config, open, |net, tx, cancel| {
        crate::source::merge::spawn_sources(kinds, net, tx, cancel)
    })
    .await
}

/// The common end of [`run`] and [`run_many`]: the token (its warnings to stderr before the
/// screen is taken), the source task (`spawn`), the theme, the loop; the source is cancelled
/// and awaited (at most 1 s) when the loop ends.
async fn run_app(
    mut app: App,
    mut config: crate::config::Config,
    open: &OpenArgs,
    spawn: impl FnOnce(
        NetConfig,
        mpsc::Sender<crate::source::SourceMsg>,
        CancellationToken,
    ) -> tokio::task::JoinHandle<()>,
) -> color_eyre::Result<i32> {
    // Token from --token-file / RAWP_TOKEN; its warnings go to stderr before the TUI starts.
    let net = match NetConfig::resolve(open.net.token_file.as_deref()) {
        Ok(mut n) => {
            open.net.apply(&mut n);
            n
        }
        Err(e) => {
            eprintln!("rawpv: {e}");
            return Ok(2);
        }
    };
    for w in &net.warnings {
        eprintln!("rawpv: warning: {w}");
    }
    let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
    let cancel = CancellationToken::new();
    let source = spawn(net, tx, cancel.clone());
    // Asked while the source reads (the answer's wait overlaps the loading), before raw mode and
    // the key reader take the terminal.
    let note = pick_theme(&mut config, open);
    app.configure(&config);
    if note.is_some() {
        app.view.message = note;
    }
    let mut tui = Tui::init()?;
    let result = event_loop(&mut app, &mut tui, rx).await;
    cancel.cancel();
    drop(tui);
    let _ = tokio::time::timeout(Duration::from_secs(1), source).await;
    result.map(|()| 0)
}
