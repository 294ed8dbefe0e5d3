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
    let s = &app.session;
    let row = s
        .items
        .iter()
        .position(|it| matches!(it, Item::Invocation(k) if s.invocations[*k].tool_name == "Bash"))
        .expect("a Bash call in the demo");
    let Item::Invocation(k) = &s.items[row] else {
        unreachable!()
    };
    let input = s.invocations[*k].input.clone();
    let row = app.view.row_of(row).expect("visible");
    app.select(row);
    app.press(KeyCode::Char('y'));
    let seq = app.clipboard_out.take().expect("an OSC 52 sequence");
    let b64 = seq
        .strip_prefix("\x1b]52;c;")
        .and_then(|s| s.strip_suffix('\x07'))
        .expect("OSC 52 framing");
    let text = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("base64");
    let copied: serde_json::Value = serde_json::from_slice(&text).expect("JSON input");
    assert_eq!(copied, input);
    assert!(
        app.view
            .message
            .as_deref()
            .is_some_and(|m| m.starts_with("copied the input (")),
        "{:?}",
        app.view.message
    );
}
