//! Fuzz target: the review pipeline (issue 23). Arbitrary bytes as a shell command line →
//! `review::writers::writes` and `review::audit::network_commands`; as a session
//! (`import::load_bytes`, any format) → the files model (`review::files::Files`), every changed
//! file's net change and patch section (`review::patch::file_section`), the audit list; as a
//! text and a JSON list of structured-patch hunks → `review::edits::apply_hunks`. Checks: no
//! panic; every reason is non-empty; a patch section starts with `diff --git ` and every hunk
//! line of it starts with ` `, `-`, `+`, `@` or `\`; an audit entry has at least one kind.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rawpv::review::files::Files;
use rawpv::session::Session;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for why in rawpv::review::writers::writes(&text) {
        assert!(!why.is_empty());
    }
    let _ = rawpv::review::audit::network_commands(&text);
    // `TEXT\0[hunks…]`: the structured-patch applier.
    if let Some((t, h)) = text.split_once('\0')
        && let Ok(serde_json::Value::Array(hunks)) = serde_json::from_str(h)
    {
        let _ = rawpv::review::edits::apply_hunks(t, &hunks);
    }
    let loaded = rawpv::import::load_bytes(data);
    let session = Session::from_decoded(loaded.items);
    let files = Files::of_session(&session);
    let call = |i: usize| session.invocations.get(i).map(|b| &**b);
    for f in files.changed() {
        if let Ok(net) = files.net(&session, &call, f) {
            let s = rawpv::review::patch::file_section(&f.shown, &net);
            if s.is_empty() {
                continue;
            }
            assert!(s.starts_with("diff --git "), "{s:?}");
            let mut in_hunks = false;
            for l in s.lines() {
                in_hunks |= l.starts_with("@@ ");
                if in_hunks {
                    assert!(
                        l.is_empty() || matches!(l.as_bytes()[0], b' ' | b'-' | b'+' | b'@' | b'\\'),
                        "{l:?} in {s:?}"
                    );
                }
            }
        }
    }
    for e in rawpv::review::audit::audit(&session, &files) {
        assert!(!e.kinds.is_empty());
    }
});
