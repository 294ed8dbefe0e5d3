//! `rawpv export INPUT -o FILE [--format html|markdown] [--depth prompts|calls|full]
//! [--no-redact] [--max-lines N]`: the session as a self-contained HTML page or as Markdown
//! (`crate::export`), to share it.
//!
//! Who calls it: `main.rs`. The format comes from `--format`, else from the file's extension
//! (`.html`, `.htm`, `.md`, `.markdown`); `-o -` writes to stdout (then `--format` is needed).
//! Secrets are redacted unless `--no-redact`; what was redacted, and where the file went, is said
//! on stderr at the end (`rawpv: wrote out.html: 42 calls, 310 KiB; redacted 2 secrets: …`).
//! A file is written beside its target under a temporary name and renamed into place, so a
//! failed export never leaves half a page behind. Exit 0 written, 2 bad input or write error.

use std::io::Write;

use crate::cli::InputArgs;
use crate::export::{Depth, Format, Options};

/// What the command was asked.
#[derive(Debug, Clone)]
pub struct Args {
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
    let Some((session, file_format)) = super::load_session_or_say(input).await else {
        return 2;
    };
    if file_format == crate::import::Format::NotSession {
        eprintln!(
            "rawpv: the input is not a session: no line of it is a JSON record, a diff or a terminal capture"
        );
        return 2;
    }
    let title = std::path::Path::new(&input.input)
        .file_name()
        .map_or_else(|| input.input.clone(), |n| n.to_string_lossy().into_owned());
    let opts = Options {
        depth: args.depth,
        redact: !args.no_redact,
        max_lines: args.max_lines,
        title,
    };
    let result = tokio::task::spawn_blocking({
        let output = args.output.clone();
        move || write_to(&output, &session, format, &opts)
    })
    .await;
    match result {
        Ok(Ok((report, bytes))) => {
            let place = if args.output == "-" {
                "stdout".to_owned()
            } else {
                crate::render::text::visible(&args.output)
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

/// Writes the export to `output` (`-`: stdout); returns the report and the bytes written.
///
/// # Errors
/// The file cannot be created, written or renamed into place (phrased for the user).
pub fn write_to(
    output: &str,
    session: &crate::session::Session,
    format: Format,
    opts: &Options,
) -> Result<(crate::export::Report, u64), String> {
    if output == "-" {
        let stdout = std::io::stdout();
        let mut out = Counting {
            inner: std::io::BufWriter::new(stdout.lock()),
            bytes: 0,
        };
        let r = crate::export::write(&mut out, session, format, opts).and_then(|r| {
            out.flush()?;
            Ok(r)
        });
        return match r {
            Ok(r) => Ok((r, out.bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                Ok((crate::export::Report::default(), out.bytes))
            }
            Err(e) => Err(e.to_string()),
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
    let report = crate::export::write(&mut out, session, format, opts)
        .and_then(|r| {
            out.flush()?;
            Ok(r)
        })
        .map_err(|e| format!("cannot write {shown}: {e}"))?;
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
    Ok((report, bytes))
}
