//! Copy: what `y` / `Y` / `r` put on the clipboard, and how (OSC 52, or a file).
//!
//! Who calls it: [`crate::app`] on the copy actions; the event loop writes the OSC 52 sequence
//! through the terminal it owns (never `println!`). Invariants: the text copied is the data as
//! recorded (no styling, no escaping for the terminal; it only reaches the terminal base64-encoded
//! inside OSC 52); payloads over [`MAX_OSC52_BYTES`] go to a file instead, since terminals cap
//! OSC 52 (xterm and tmux drop or truncate big ones).

use std::path::{Path, PathBuf};

use base64::Engine;
use serde_json::{Value, json};

use crate::session::{Item, Session};

/// Largest text sent by OSC 52, in bytes before base64 (many terminals cap the sequence near
/// 100 KB encoded).
pub const MAX_OSC52_BYTES: usize = 74 * 1024;

/// What to copy from the selected row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyWhat {
    /// The invocation's input (pretty JSON), or a message's / event's text.
    Input,
    /// The invocation's output (a string as is, else pretty JSON; the streamed text when there
    /// is no result yet).
    Output,
    /// The frames as RAWP JSON, one per line (request, then result).
    Raw,
}

impl CopyWhat {
    pub fn label(self) -> &'static str {
        match self {
            Self::Input => "input",
            Self::Output => "output",
            Self::Raw => "raw JSON",
        }
    }
}

fn pretty(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// The text to copy for item `i`; `None` when there is nothing (e.g. no output yet) or when
/// it cannot be read back ([`copy_result`] says why).
pub fn copy_text(session: &Session, i: usize, what: CopyWhat) -> Option<String> {
    copy_result(session, i, what).ok().flatten()
}

/// Why a deferred input or output (`deferred`: it stays in the file) cannot be copied: the file
/// no longer gives it back, and [`Session::input`] / [`Session::output`] hold their
/// "(input not available: why)" stand-in, which is not the data.
fn unavailable(v: &Value, deferred: bool) -> Option<String> {
    let Value::String(s) = v else {
        return None;
    };
    ["(input not available: ", "(output not available: "]
        .iter()
        .find_map(|p| s.strip_prefix(p))
        .and_then(|why| why.strip_suffix(')'))
        .filter(|_| deferred)
        .map(str::to_owned)
}

/// The text to copy for item `i`: `Ok(None)` when there is nothing (e.g. no output yet);
/// `Err(why)` when the call's input or output stays in a file that no longer gives it back
/// (truncated, rewritten: see [`Session::input`]), so nothing must be copied.
///
/// # Errors
/// The deferred input or output cannot be read back; the reason comes from the session.
pub fn copy_result(session: &Session, i: usize, what: CopyWhat) -> Result<Option<String>, String> {
    let Some(item) = session.items.get(i) else {
        return Ok(None);
    };
    Ok(match item {
        Item::Invocation(k) => {
            let Some(inv) = session.invocations.get(*k) else {
                return Ok(None);
            };
            match what {
                CopyWhat::Input => {
                    let v = session.input(inv);
                    if let Some(why) = unavailable(&v, inv.input_span.is_some()) {
                        return Err(why);
                    }
                    Some(pretty(&v))
                }
                CopyWhat::Output => match session.output(inv) {
                    Some(v) => {
                        if let Some(why) = unavailable(&v, inv.output_span.is_some()) {
                            return Err(why);
                        }
                        Some(pretty(&v))
                    }
                    None if !inv.stream.is_empty() => Some(inv.stream.text(None)),
                    None => None,
                },
                CopyWhat::Raw => {
                    // A deferred output is read back so the result frame is whole.
                    let whole = session.with_input_output(inv);
                    if let Some(why) = unavailable(&whole.input, inv.input_span.is_some()) {
                        return Err(why);
                    }
                    if let Some(why) = whole
                        .result
                        .as_ref()
                        .and_then(|r| r.output.as_ref())
                        .and_then(|o| unavailable(o, inv.output_span.is_some()))
                    {
                        return Err(why);
                    }
                    let inv = whole;
                    let req = json!({
                        "type": "tool.invoke.request",
                        "payload": {
                            "invocation_id": inv.invocation_id,
                            "tool_name": inv.tool_name,
                            "input": inv.input,
                        },
                    });
                    let mut out = serde_json::to_string(&req).unwrap_or_default();
                    if let Some(r) = &inv.result {
                        let res = json!({
                            "type": "tool.invoke.result",
                            "payload": serde_json::to_value(r).unwrap_or(Value::Null),
                        });
                        out.push('\n');
                        out.push_str(&serde_json::to_string(&res).unwrap_or_default());
                    }
                    Some(out)
                }
            }
        }
        Item::Message(m) => Some(match what {
            CopyWhat::Input | CopyWhat::Output => m.text.clone(),
            CopyWhat::Raw => serde_json::to_string(&json!({
                "kind": format!("{:?}", m.kind),
                "text": m.text,
                "metadata": m.metadata,
            }))
            .unwrap_or_default(),
        }),
        Item::Event(f) => Some(match what {
            CopyWhat::Input | CopyWhat::Output => pretty(&f.payload_json()),
            CopyWhat::Raw => serde_json::to_string(&f.to_json()).unwrap_or_default(),
        }),
    })
}

/// Copied text made safe to paste: SGR sequences (colours) dropped, and every control
/// character but `\n` and `\t` (ESC and BEL of other sequences, C1, DEL) and every invisible
/// or reordering character (bidi overrides, zero-width) removed, while the printable text of
/// other sequences stays, so a paste shows what was recorded (`]0;$(curl …)`), inert.
/// Returns the text and how many characters went.
///
/// A copied `ESC[201~` and a newline would end a shell's bracketed paste and run what follows
/// on paste (issue 14.10); a bidi override makes pasted code read differently from what runs.
pub fn clean(text: &str) -> (String, usize) {
    let clean = |c: char| {
        matches!(c, '\n' | '\t') || !(c.is_control() || crate::render::ansi::is_invisible_format(c))
    };
    if text.chars().all(clean) {
        return (text.to_owned(), 0);
    }
    let stripped = crate::render::ansi::strip_sgr(text);
    let out: String = stripped.chars().filter(|&c| clean(c)).collect();
    let removed = text.chars().count() - out.chars().count();
    (out, removed)
}

/// The OSC 52 sequence that puts `text` on the system clipboard.
pub fn osc52(text: &str) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    format!("\x1b]52;c;{b64}\x07")
}

/// Writes `text` to a new file (the fallback for payloads too big for OSC 52), in a directory
/// only this user can enter: `$XDG_RUNTIME_DIR/rawpv` when there is one, else the user's cache
/// directory (`~/.cache/rawpv/copies`), else the temp directory. The file is created new-only
/// (`O_EXCL`, so a planted symlink is never followed) with mode 0600 under a random name
/// (`tempfile`); it used to be `/tmp/rawpv-copy-<pid>-<ms>.txt`, mode 0644 and guessable,
/// written through whatever was at that path (issue 14.3).
///
/// # Errors
/// The directory or the file cannot be created or written.
pub fn write_fallback(text: &str) -> std::io::Result<PathBuf> {
    write_fallback_in(&copy_dir(), text)
}

/// [`write_fallback`] into `dir` (created with mode 0700 when missing).
///
/// # Errors
/// The directory or the file cannot be created or written.
pub fn write_fallback_in(dir: &Path, text: &str) -> std::io::Result<PathBuf> {
    private_dir(dir)?;
    let mut f = tempfile::Builder::new()
        .prefix("rawpv-copy-")
        .suffix(".txt")
        .tempfile_in(dir)?;
    std::io::Write::write_all(&mut f, text.as_bytes())?;
    let (_, path) = f.keep().map_err(|e| e.error)?;
    Ok(path)
}

/// Writes an image's `bytes` to a new file named `rawpv-image-*.<ext>` where copies go (see
/// [`write_fallback`]: a private directory, new-only, mode 0600).
///
/// # Errors
/// The directory or the file cannot be created or written.
pub fn write_image(bytes: &[u8], ext: &str) -> std::io::Result<PathBuf> {
    let dir = copy_dir();
    private_dir(&dir)?;
    let mut f = tempfile::Builder::new()
        .prefix("rawpv-image-")
        .suffix(&format!(".{ext}"))
        .tempfile_in(&dir)?;
    std::io::Write::write_all(&mut f, bytes)?;
    let (_, path) = f.keep().map_err(|e| e.error)?;
    Ok(path)
}

/// Writes an exported page (`X` in the viewer) to a new file named `rawpv-export-*.<ext>`
/// where copies go (see [`write_fallback`]).
///
/// # Errors
/// The directory or the file cannot be created or written.
pub fn write_export(bytes: &[u8], ext: &str) -> std::io::Result<PathBuf> {
    let dir = copy_dir();
    private_dir(&dir)?;
    let mut f = tempfile::Builder::new()
        .prefix("rawpv-export-")
        .suffix(&format!(".{ext}"))
        .tempfile_in(&dir)?;
    std::io::Write::write_all(&mut f, bytes)?;
    let (_, path) = f.keep().map_err(|e| e.error)?;
    Ok(path)
}

/// Where copy files go (see [`write_fallback`]).
fn copy_dir() -> PathBuf {
    if let Some(run) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(run).join("rawpv");
    }
    directories::ProjectDirs::from("", "", "rawpv")
        .map_or_else(std::env::temp_dir, |d| d.cache_dir().join("copies"))
}

/// Creates `dir` (and its parents) with mode 0700 on Unix when it is missing.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import;

    #[test]
    fn osc52_is_base64_in_the_sequence() {
        assert_eq!(osc52("hi\n"), "\x1b]52;c;aGkK\x07");
    }

    #[test]
    fn copies_input_output_and_raw_of_a_call() {
        let items = import::load_bytes(crate::source::DEMO.as_bytes()).items;
        let s = Session::from_decoded(items);
        let i = s
            .items
            .iter()
            .position(
                |it| matches!(it, Item::Invocation(k) if s.invocations[*k].tool_name == "Bash"),
            )
            .unwrap();
        let Item::Invocation(k) = &s.items[i] else {
            unreachable!()
        };
        let inv = &s.invocations[*k];
        let input = copy_text(&s, i, CopyWhat::Input).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&input).unwrap(), inv.input);
        assert!(copy_text(&s, i, CopyWhat::Output).is_some());
        let raw = copy_text(&s, i, CopyWhat::Raw).unwrap();
        let lines: Vec<Value> = raw
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["type"], "tool.invoke.request");
        assert_eq!(
            lines[0]["payload"]["invocation_id"],
            json!(inv.invocation_id)
        );
        assert_eq!(lines[1]["type"], "tool.invoke.result");
    }

    /// In a file-backed session the output stays in the file: Output and Raw read it back.
    #[test]
    fn copies_a_deferred_output_whole() {
        let path = std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/check_clean.ndjson"
        ));
        let (s, _) = crate::source::file::fold_path(path).unwrap();
        let k = s
            .invocations
            .iter()
            .position(|inv| inv.result.is_some())
            .unwrap();
        let inv = &s.invocations[k];
        assert!(inv.output_span.is_some(), "the output is deferred");
        let want = s.output(inv).unwrap().into_owned();
        let raw = copy_text(&s, inv.item, CopyWhat::Raw).unwrap();
        let result: Value = serde_json::from_str(raw.lines().nth(1).unwrap()).unwrap();
        assert_eq!(result["payload"]["output"], want);
        assert_ne!(want, Value::Null);
    }

    #[test]
    fn copied_text_loses_escapes_controls_and_bidi() {
        let (t, n) = clean("ok\x1b[201~\nrm -rf ~\r\n\u{9b}x\u{202e}y\tz\x07\x1b[31m");
        assert_eq!((t.as_str(), n), ("ok[201~\nrm -rf ~\nxy\tz", 10));
        assert_eq!(clean("plain\ttext\n"), ("plain\ttext\n".to_owned(), 0));
    }

    #[cfg(unix)]
    #[test]
    fn fallback_file_is_private_and_randomly_named() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("copies");
        let p = write_fallback_in(&dir, "big text").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "big text");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&p), 0o600);
        assert_eq!(mode(&dir), 0o700);
        let q = write_fallback_in(&dir, "again").unwrap();
        assert_ne!(p, q, "a fresh random name each time");
    }

    #[test]
    fn fallback_file_holds_the_text() {
        let p = write_fallback("big text").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "big text");
        std::fs::remove_file(p).unwrap();
    }
}
