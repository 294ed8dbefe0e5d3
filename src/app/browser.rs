//! The session browser screen: `rawpv` with no input on a terminal lists the sessions under
//! `~/.claude/projects` (and the config's `browser.dirs`); typing filters (fuzzy), Up/Down move,
//! Enter opens the session in the viewer, and Esc (or q) in the viewer comes back to the list.
//! Esc on an empty filter, or Ctrl-C, leaves.
//!
//! Each row's cost comes from a thread of its own (`crate::usage::report::costs`, through the
//! usage cache), row by row as the sessions are read.
//!
//! Who calls it: [`crate::app::run_browse`] (from `main.rs`). Invariants: one terminal owner; the
//! list's input stream is dropped while the viewer runs (the viewer reads its own); a fatal
//! signal, in the list or in a viewer opened from it, ends the process (exit 128+N), and so does
//! the end of terminal input.

use std::time::Duration;

use crossterm::event::{Event, EventStream, KeyCode, KeyEventKind, KeyModifiers};
use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{App, event_loop};
use crate::browse::{self, Browser};
use crate::config::Config;
use crate::signals::{Sig, Signals};
use crate::source::{CHANNEL_CAPACITY, NetConfig, SourceKind, spawn_source_with};
use crate::tui::Tui;

/// Runs the browser until the user leaves; returns the exit code.
///
/// # Errors
/// The terminal could not be set up or written.
pub(super) async fn run_browser(config: &Config) -> color_eyre::Result<i32> {
    let mut browser = Browser::scan(&browse::default_roots(&config.browser.dirs));
    // Each session's cost, off the UI thread: cached ones at once, the others as they are read.
    let (cost_tx, mut cost_rx) = mpsc::unbounded_channel();
    let inputs: crate::usage::report::Inputs = browser
        .entries
        .iter()
        .map(|e| (e.path.clone(), e.project.clone()))
        .collect();
    std::thread::spawn(move || {
        crate::usage::report::costs(
            &inputs,
            crate::usage::cache::default_dir(),
            crate::usage::price::table(),
            |p, c| cost_tx.send((p, c)).is_ok(),
        );
    });
    let theme = config.theme(crate::config::no_color_env());
    let mut tui = Tui::init()?;
    let mut events = EventStream::new();
    // Polled here too: once the viewer has registered handlers, a signal nobody polls is lost.
    let mut signals = Signals::new()?;
    loop {
        tui.draw(|f| {
            let area = f.area();
            crate::ui::browser::render_browser(area, f.buffer_mut(), &browser, &theme);
        })?;
        let ev = tokio::select! {
            biased;
            ev = events.next() => ev,
            cost = cost_rx.recv(), if !browser.costs_done => {
                match cost {
                    Some((p, c)) => {
                        browser.costs.insert(p, c);
                        // Draw once a batch has arrived, not once per session.
                        while let Ok((p, c)) = cost_rx.try_recv() {
                            browser.costs.insert(p, c);
                        }
                    }
                    None => browser.costs_done = true,
                }
                continue;
            }
            sig = signals.recv() => {
                match sig {
                    Sig::Fatal(_) => break,
                    Sig::Stop => tui.suspend()?,
                    Sig::Cont => tui.resume()?,
                }
                continue;
            }
        };
        // The terminal went away (EOF) or cannot be read: leave, restoring what can be.
        let Some(ev) = ev else {
            break;
        };
        let Event::Key(k) = ev? else {
            continue;
        };
        if k.kind != KeyEventKind::Press {
            continue;
        }
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        match k.code {
            KeyCode::Char('c') if ctrl => break,
            KeyCode::Esc if browser.filter.is_empty() => break,
            KeyCode::Esc => browser.set_filter(""),
            KeyCode::Up => browser.move_by(-1),
            KeyCode::Down => browser.move_by(1),
            KeyCode::PageUp => browser.move_by(-10),
            KeyCode::PageDown => browser.move_by(10),
            KeyCode::Backspace => {
                let mut f = browser.filter.clone();
                f.pop();
                browser.set_filter(&f);
            }
            KeyCode::Enter => {
                let Some(path) = browser.selected_entry().map(|e| e.path.clone()) else {
                    continue;
                };
                drop(events);
                open_in_viewer(SourceKind::File(path), config, &mut tui).await?;
                if crate::signals::fatal().is_some() {
                    // The viewer quit on a fatal signal: the browser ends with it.
                    break;
                }
                tui.clear_screen()?;
                events = EventStream::new();
            }
            KeyCode::Char(c) if !ctrl => {
                let mut f = browser.filter.clone();
                f.push(c);
                browser.set_filter(&f);
            }
            _ => {}
        }
    }
    Ok(0)
}

async fn open_in_viewer(
    kind: SourceKind,
    config: &Config,
    tui: &mut Tui,
) -> color_eyre::Result<()> {
    let mut app = App::new(kind.label(), false);
    app.configure(config);
    app.from_browser = true;
    if let SourceKind::File(p) = &kind {
        // As `rawpv FILE`: big outputs stay in the file (the file source skips building them).
        app.session.backing = Some(std::sync::Arc::from(p.as_path()));
    }
    let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
    let cancel = CancellationToken::new();
    let source = spawn_source_with(kind, NetConfig::default(), tx, cancel.clone());
    let result = event_loop(&mut app, tui, rx).await;
    cancel.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(1), source).await;
    result
}
