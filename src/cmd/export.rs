//! `rawpv export INPUT [MORE…] -o FILE [--format html|markdown] [--depth prompts|calls|full]
//! [--no-redact] [--max-lines N]`: the session as a self-contained HTML page or as Markdown
//! (`crate::export`), to share it.
//!
//! Who calls it: `main.rs`. A file is exported as it folds (`crate::export::write_path`: rows
//! written and dropped, so memory holds the rows still open, not the file); stdin, a stream's
//! snapshot and the demo are read whole first. The format comes from `--format`, else from the file's extension
//! (`.html`, `.htm`, `.md`, `.markdown`); `-o -` writes to stdout (then `--format` is needed).
//! Secrets are redacted unless `--no-redact`; what was redacted, and where the file went, is said
//! on stderr at the end (`rawpv: wrote out.html: 42 calls, 310 KiB; redacted 2 secrets: …`).
//! A file is written beside its target under a temporary name and renamed into place, so a
//! failed export never leaves half a page behind. `-o` must name a regular file or a new one:
//! a directory, device, FIFO, socket or symbolic link is refused, and so is the input itself
//! (attack 10 #16: a rename over `/dev/null` or over the session would replace it). When stdout
//! is closed early (`| head`), the export stops silently as `print` does, with no summary
//! (which would describe a document that was not written). Exit 0 written, 2 bad input or
//! write error.
//!
//! Several inputs (session files) make one Markdown document holding each session in turn,
//! each under its own title with its own summary line, as their exports one after another
//! would read: that is what a user pasting "these sessions" into an issue or a model expects,
//! and `-o` names one file. Several inputs to HTML make one page of all their sessions, merged
//! by time as `rawpv A B` shows them (a page is browsed, filtered and searched as one view; its
//! catalog and findings are per session, SPEC §6).

use std::io::Write;

use crate::cli::InputArgs;
use crate::export::{Depth, Format, Options, PathError};
use crate::source::SourceKind;

/// What the command was asked.
#[derive(Debug, Clone)]
pub struct Args {
    /// Inputs after the first (session files), each exported in turn into the same document.
    pub more: Vec<String>,
    pub output: String,
    pub format: Option<Format>,
    pub depth: Depth,
    pub no_redact: bool,
    pub max_lines: usize,
}

/// Runs the command; returns the exit code.
pub async fn run(input: &InputArgs, args: &Args) -> i32 {
    let Some(format) = args.format.or_else(|| Format::from_path(&args.output)) else {
        let shown = crate::render::text::visible(&args.output);
        eprintln!(
            "rawpv: say which format to write: --format html or --format markdown (the name \
             {shown} does not end in .html or .md)"
        );
        return 2;
    };
    if let Err(e) = check_output(&args.output, &input.input) {
        eprintln!("rawpv: {e}");
        return 2;
    }
    let result = if args.more.is_empty() {
        match export_one(input, args, format).await {
            Some(r) => r,
            None => return 2,
        }
    } else {
        match export_several(input, args, format).await {
            Some(r) => r,
            None => return 2,
        }
    };
    say(result, &args.output)
}

/// The title of an input's document: its file name (the input as given when it has none).
fn title_of(input: &str) -> String {
    std::path::Path::new(input)
        .file_name()
        .map_or_else(|| input.to_owned(), |n| n.to_string_lossy().into_owned())
}

/// What an export's writing thread returns.
type Written = Result<Result<Option<(crate::export::Report, u64)>, String>, tokio::task::JoinError>;

/// Several inputs: each session in turn in one Markdown document (each under its own
/// title, with its own summary line, as `cat` of their exports would read); the redaction
/// counts and calls are summed. Only files: stdin, a stream and the demo are one input each.
/// `None` after saying why not.
async fn export_several(input: &InputArgs, args: &Args, format: Format) -> Option<Written> {
    if format == Format::Html {
        return export_merged_page(input, args).await;
    }
    let mut paths = Vec::new();
    for arg in std::iter::once(&input.input).chain(&args.more) {
        let shown = crate::render::text::visible(arg);
        let one = InputArgs {
            input: arg.clone(),
            more: Vec::new(),
            net: input.net.clone(),
        };
        let SourceKind::File(path) = super::source_kind(&one) else {
            eprintln!(
                "rawpv: {shown}: with several inputs each is a session file (stdin, a stream \
                 or the demo is exported alone)"
            );
            return None;
        };
        if let Some(e) = crate::import::not_a_session(&path, &shown) {
            eprintln!("rawpv: {e}");
            return None;
        }
        if let Err(e) = check_output(&args.output, arg) {
            eprintln!("rawpv: {e}");
            return None;
        }
        paths.push((path, title_of(arg), shown));
    }
    let output = args.output.clone();
    let base = Options {
        depth: args.depth,
        redact: !args.no_redact,
        max_lines: args.max_lines,
        title: String::new(),
    };
    Some(
        tokio::task::spawn_blocking(move || {
            write_to(&output, |out| {
                let mut all = crate::export::Report {
                    redacted: base.redact.then(crate::redact::Redactor::new),
                    calls: 0,
                };
                for (i, (path, title, shown)) in paths.iter().enumerate() {
                    if i > 0 {
                        // A blank line, then the next session's `# title`.
                        out.write_all(b"\n").map_err(Failure::Write)?;
                    }
                    let opts = Options {
                        title: title.clone(),
                        ..base.clone()
                    };
                    let r = crate::export::write_path(out, path, format, &opts).map_err(
                        |e| match e {
                            PathError::Write(e) => Failure::Write(e),
                            PathError::Read(e) => {
                                Failure::Other(format!("cannot read {shown}: {e}"))
                            }
                            PathError::NotSession => {
                                Failure::Other(format!("{shown}: {NOT_A_SESSION}"))
                            }
                        },
                    )?;
                    all.calls += r.calls;
                    if let (Some(sum), Some(one)) = (all.redacted.as_mut(), r.redacted.as_ref()) {
                        sum.absorb(one);
                    }
                }
                Ok(all)
            })
        })
        .await,
    )
}

/// One input (module docs); `None` after saying why not.
async fn export_one(input: &InputArgs, args: &Args, format: Format) -> Option<Written> {
    let title = title_of(&input.input);
    let opts = Options {
        depth: args.depth,
        redact: !args.no_redact,
        max_lines: args.max_lines,
        title,
    };
    let output = args.output.clone();
    // A file is written as it folds (`crate::export::write_path`); other inputs (stdin, a
    // stream's snapshot, the demo) are read whole first.
    Some(if let SourceKind::File(path) = super::source_kind(input) {
        let shown = crate::render::text::visible(&path.display().to_string());
        if let Some(e) = crate::import::not_a_session(&path, &shown) {
            eprintln!("rawpv: {e}");
            return None;
        }
        tokio::task::spawn_blocking(move || {
            write_to(&output, |out| {
                crate::export::write_path(out, &path, format, &opts).map_err(|e| match e {
                    PathError::Write(e) => Failure::Write(e),
                    PathError::Read(e) => Failure::Other(format!("cannot read {shown}: {e}")),
                    PathError::NotSession => Failure::Other(NOT_A_SESSION.to_owned()),
                })
            })
        })
        .await
    } else {
        let (session, file_format) = super::load_session_or_say(input).await?;
        if file_format == crate::import::Format::NotSession {
            eprintln!("rawpv: {NOT_A_SESSION}");
            return None;
        }
        tokio::task::spawn_blocking(move || {
            write_to(&output, |out| {
                crate::export::write(out, &session, format, &opts).map_err(Failure::Write)
            })
        })
        .await
    })
}

/// Several inputs to HTML: one page of every session, merged by time as the viewer shows them
/// (`rawpv A B`: `cmd::load_session`, `source::merge`), each session named within its input;
/// the page's catalog and findings are per session (SPEC §6). The merged session is read whole
/// first. An input that cannot be read is said on stderr and is an `input-failed` finding on
/// the page, as in the viewer. `None` after saying why not.
async fn export_merged_page(input: &InputArgs, args: &Args) -> Option<Written> {
    for arg in std::iter::once(&input.input).chain(&args.more) {
        if let Err(e) = check_output(&args.output, arg) {
            eprintln!("rawpv: {e}");
            return None;
        }
    }
    let all = InputArgs {
        input: input.input.clone(),
        more: args.more.clone(),
        net: input.net.clone(),
    };
    let (session, file_format) = super::load_session_or_say(&all).await?;
    if file_format == crate::import::Format::NotSession {
        eprintln!("rawpv: {NOT_A_SESSION}");
        return None;
    }
    let names: Vec<String> = std::iter::once(&input.input)
        .chain(&args.more)
        .map(|a| title_of(a))
        .collect();
    let opts = Options {
        depth: args.depth,
        redact: !args.no_redact,
        max_lines: args.max_lines,
        title: crate::fmt::truncate(&names.join(", "), 120),
    };
    let output = args.output.clone();
    Some(
        tokio::task::spawn_blocking(move || {
            write_to(&output, |out| {
                crate::export::write(out, &session, Format::Html, &opts).map_err(Failure::Write)
            })
        })
        .await,
    )
}

/// Says how the export went (stderr); returns the exit code.
fn say(result: Written, output: &str) -> i32 {
    match result {
        // stdout closed early: nothing more to say (and nothing true to summarise).
        Ok(Ok(None)) => 0,
        Ok(Ok(Some((report, bytes)))) => {
            let place = if output == "-" {
                "stdout".to_owned()
            } else {
                crate::render::text::visible(output)
            };
            let mut line = format!(
                "rawpv: wrote {place}: {}, {}",
                crate::fmt::plural(report.calls, "call"),
                crate::fmt::bytes(bytes)
            );
            match &report.redacted {
                Some(r) => {
                    line.push_str("; ");
                    line.push_str(&r.summary());
                }
                None => line.push_str("; not redacted (--no-redact)"),
            }
            eprintln!("{line}");
            0
        }
        Ok(Err(e)) => {
            eprintln!("rawpv: {e}");
            2
        }
        Err(e) => {
            eprintln!("rawpv: {e}");
            2
        }
    }
}

/// Counts the bytes written through it.
struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Refuses an `-o` that is not a regular file or a new name, or that is the input itself.
///
/// # Errors
/// Why the path cannot be written (phrased for the user).
pub fn check_output(output: &str, input: &str) -> Result<(), String> {
    if output == "-" {
        return Ok(());
    }
    let path = std::path::Path::new(output);
    let shown = crate::render::text::visible(output);
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(()); // a new file
    };
    let ft = meta.file_type();
    let what = if ft.is_symlink() {
        Some("a symbolic link (give the file it points to, or a new name)")
    } else if ft.is_dir() {
        Some("a directory (give a file name in it)")
    } else if !ft.is_file() {
        Some("not a regular file (a device, FIFO or socket; `-o -` writes to stdout)")
    } else {
        None
    };
    if let Some(what) = what {
        return Err(format!("will not write {shown}: it is {what}"));
    }
    if input != "-"
        && let Ok(inp) = std::fs::metadata(input)
        && same_file(&inp, &meta)
    {
        return Err(format!(
            "will not write {shown}: it is the input session, which the export would replace"
        ));
    }
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

/// Said when the input holds no session.
const NOT_A_SESSION: &str =
    "the input is not a session: no line of it is a JSON record, a diff or a terminal capture";

/// Why an export's writer stopped.
#[derive(Debug)]
pub enum Failure {
    /// Writing the output failed (a closed stdout is no failure: see [`write_to`]).
    Write(std::io::Error),
    /// Anything else, phrased for the user (the input cannot be read).
    Other(String),
}

/// Writes the export `job` makes to `output` (`-`: stdout); returns the report and the bytes
/// written, or `None` when stdout was closed before the end (a reader such as `head` had
/// enough).
///
/// # Errors
/// The file cannot be created, written or renamed into place, or `job` failed otherwise
/// (phrased for the user).
pub fn write_to(
    output: &str,
    job: impl FnOnce(&mut dyn Write) -> Result<crate::export::Report, Failure>,
) -> Result<Option<(crate::export::Report, u64)>, String> {
    if output == "-" {
        let stdout = std::io::stdout();
        let mut out = Counting {
            inner: std::io::BufWriter::new(stdout.lock()),
            bytes: 0,
        };
        let r = job(&mut out).and_then(|r| {
            out.flush().map_err(Failure::Write)?;
            Ok(r)
        });
        return match r {
            Ok(r) => Ok(Some((r, out.bytes))),
            Err(Failure::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(None),
            Err(Failure::Write(e)) => Err(e.to_string()),
            Err(Failure::Other(e)) => Err(e),
        };
    }
    let path = std::path::Path::new(output);
    let shown = crate::render::text::visible(output);
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| std::path::Path::new("."));
    let tmp =
        tempfile::NamedTempFile::new_in(dir).map_err(|e| format!("cannot write {shown}: {e}"))?;
    let mut out = Counting {
        inner: std::io::BufWriter::new(tmp),
        bytes: 0,
    };
    let report = job(&mut out)
        .and_then(|r| {
            out.flush().map_err(Failure::Write)?;
            Ok(r)
        })
        .map_err(|e| match e {
            Failure::Write(e) => format!("cannot write {shown}: {e}"),
            Failure::Other(e) => e,
        })?;
    let bytes = out.bytes;
    let tmp = out
        .inner
        .into_inner()
        .map_err(|e| format!("cannot write {shown}: {e}"))?;
    // A page is for reading: the usual file mode, not the temporary file's 0600.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644));
    }
    tmp.persist(path)
        .map_err(|e| format!("cannot write {shown}: {}", e.error))?;
    Ok(Some((report, bytes)))
}
