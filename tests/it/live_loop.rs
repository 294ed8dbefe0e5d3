//! The app loop under a live source (`rawpv::app::run_loop`, the loop `rawpv -` runs): a key that
//! arrives while a big batch is being applied is handled and drawn before the rest of the batch,
//! instead of waiting for the whole batch and then for the frame interval. Pins the fixes found
//! with `examples/live_load.rs` (BENCHMARKS.md "Live ingest while drawing"). Not timed: the clock
//! is paused, so only the order of work is checked.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::task::Poll;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::backend::TestBackend;
use ratatui::layout::Size;
use rawpv::app::{APPLY_PER_TURN, App, BackendScreen, Screen, SourceStatus, run_loop};
use rawpv::source::{SourceMsg, SourceState};
use tokio::sync::mpsc;

const FRAMES: usize = 4096;

/// Records, per draw, the frames applied so far and whether the help overlay is shown.
struct Recorder {
    inner: BackendScreen<TestBackend>,
    draws: Rc<RefCell<Vec<(u64, bool)>>>,
    ended: Rc<Cell<bool>>,
}

impl Screen for Recorder {
    fn size(&self) -> std::io::Result<Size> {
        self.inner.size()
    }
    fn draw(&mut self, f: impl FnOnce(&mut Frame<'_>)) -> std::io::Result<()> {
        self.inner.draw(f)
    }
    fn write_raw(&mut self, seq: &str) -> std::io::Result<()> {
        self.inner.write_raw(seq)
    }
    fn suspend(&mut self) -> std::io::Result<()> {
        self.inner.suspend()
    }
    fn drew(&mut self, app: &App) {
        self.draws
            .borrow_mut()
            .push((app.session().counts.frames, app.view().help));
        if *app.source_status() == SourceStatus::Ended {
            self.ended.set(true);
        }
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_key_is_handled_and_drawn_between_parts_of_a_big_batch() {
    let text = (1..=FRAMES)
        .map(|i| format!("{{\"type\":\"x-test\",\"seq\":{i},\"payload\":{{}}}}"))
        .collect::<Vec<_>>()
        .join("\n");
    let items = rawpv::import::load_bytes(text.as_bytes()).items;
    assert_eq!(items.len(), FRAMES);
    let (tx, rx) = mpsc::channel(4);
    tx.send(SourceMsg::State(SourceState::Live)).await.unwrap();
    tx.send(SourceMsg::Batch(items)).await.unwrap();
    tx.send(SourceMsg::Eof).await.unwrap();
    // The key becomes available once the loop has taken the source messages (the channel is
    // empty again), i.e. while the big batch is being applied.
    let ended = Rc::new(Cell::new(false));
    let mut key_sent = false;
    let events = futures::stream::poll_fn({
        let ended = ended.clone();
        move |cx| {
            if ended.get() {
                return Poll::Ready(None);
            }
            if !key_sent && tx.capacity() == tx.max_capacity() {
                key_sent = true;
                let key = KeyEvent::new(KeyCode::Char('?'), KeyModifiers::NONE);
                return Poll::Ready(Some(Ok(Event::Key(key))));
            }
            // No wake-up needed: the loop polls input first on every turn.
            let _ = cx;
            Poll::Pending
        }
    });
    let draws = Rc::new(RefCell::new(Vec::new()));
    let mut screen = Recorder {
        inner: BackendScreen::new(TestBackend::new(100, 30), 100, 30).unwrap(),
        draws: draws.clone(),
        ended,
    };
    let mut app = App::new("stdin", true);
    run_loop(&mut app, &mut screen, events, rx).await.unwrap();

    assert_eq!(
        app.session().counts.frames,
        FRAMES as u64,
        "everything applied"
    );
    let draws = draws.borrow();
    let (frames_when_shown, _) = *draws
        .iter()
        .find(|(_, help)| *help)
        .expect("the key was drawn");
    // The key was taken after the first part of the batch and drawn before the next part.
    assert!(
        frames_when_shown <= APPLY_PER_TURN as u64,
        "key drawn only after {frames_when_shown} of {FRAMES} frames; draws: {draws:?}"
    );
}
