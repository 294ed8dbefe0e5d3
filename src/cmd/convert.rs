//! `rawpv convert INPUT`: the session as RAWP NDJSON on stdout, one frame per line, exactly what
//! the viewer understood (imported formats become RAWP frames).

use crate::cli::InputArgs;
use crate::import::Decoded;
use crate::source::file::{self, FileEvent};
use crate::source::{SourceKind, load_input_with};

/// Runs the command; returns the exit code.
pub async fn run(input: &InputArgs) -> i32 {
    let input = match input.single() {
        Ok(Some(one)) => one,
        Ok(None) => return run_merged(input).await,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let input = &input;
    let kind = SourceKind::from_arg(&input.input, false);
    let net = match super::net_config(&input.net) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let mut skipped = 0u64;
    if let SourceKind::File(path) = &kind
        && let Some(e) = crate::import::not_a_session(
            path,
            &crate::render::text::visible(&path.display().to_string()),
        )
    {
        eprintln!("rawpv: {e}");
        return 2;
    }
    let r = if let SourceKind::File(path) = &kind {
        // Streamed: frames are written as they are decoded; memory stays one batch.
        let path = path.clone();
        let res = tokio::task::spawn_blocking(move || {
            let mut skipped = 0u64;
            let mut io_err = None;
            let r = super::with_stdout(|out| {
                let read = file::read_path(&path, |ev| {
                    let FileEvent::Batch(b) = ev else {
                        return true;
                    };
                    match write_items(out, &b, &mut skipped) {
                        Ok(()) => true,
                        Err(e) => {
                            io_err = Some(e);
                            false
                        }
                    }
                });
                if let Some(e) = io_err {
                    return Err(e);
                }
                read.map(|_| ()).map_err(|e| {
                    let shown = crate::render::text::visible(&path.display().to_string());
                    std::io::Error::new(e.kind(), format!("cannot read {shown}: {e}"))
                })
            });
            (r, skipped)
        })
        .await;
        match res {
            Ok((r, s)) => {
                skipped = s;
                r
            }
            Err(e) => Err(std::io::Error::other(e.to_string())),
        }
    } else {
        let loaded = match load_input_with(&kind, &net).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("rawpv: {e}");
                return 2;
            }
        };
        super::with_stdout(|out| write_items(out, &loaded.items, &mut skipped))
    };
    if skipped > 0 {
        eprintln!("rawpv: {skipped} malformed line(s) were not converted");
    }
    super::exit_code(r, 0)
}

/// `convert A B …`: the inputs merged by time (`source::merge`) into one RAWP stream, the one
/// `rawpv serve A B …` plays. A frame that names no `session_id` gets its input's session: the
/// first `session_id` that input names, else the input's derived UUID
/// (`serve::inputs::input_session_id`, the same as `serve` gives it), so reading the stream
/// back keeps each input's sessions apart (SPEC §6). Exit 2 when an input could not be read (said on stderr;
/// the others are written).
async fn run_merged(input: &InputArgs) -> i32 {
    let args = match input.expanded() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let net = match super::net_config(&input.net) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let kinds: Vec<SourceKind> = args.iter().map(|a| super::kind_of(a)).collect();
    let labels = crate::source::merge::labels(&kinds);
    let (_, mut runs, failed) = crate::source::merge::load_all(&kinds, &net).await;
    for (i, e) in &failed {
        eprintln!(
            "rawpv: {}: {e} (the other inputs are written)",
            crate::render::text::visible(&args[*i])
        );
    }
    let mut home: Vec<Option<String>> = vec![None; kinds.len()];
    for r in &runs {
        let h = &mut home[usize::from(r.input)];
        if h.is_none() {
            *h = r.items.iter().find_map(|d| match d {
                Decoded::Frame(f) => f.envelope.session_id.clone().filter(|s| !s.is_empty()),
                _ => None,
            });
        }
    }
    for r in &mut runs {
        let i = usize::from(r.input);
        let id = home[i].clone().unwrap_or_else(|| match &kinds[i] {
            SourceKind::File(p) | SourceKind::Follow(p) => {
                crate::serve::inputs::input_session_id(p)
            }
            _ => labels[i].to_string(),
        });
        for d in &mut r.items {
            if let Decoded::Frame(f) = d
                && f.envelope.session_id.as_deref().is_none_or(str::is_empty)
            {
                f.envelope.session_id = Some(id.clone());
            }
        }
    }
    let mut skipped = 0u64;
    let r = super::with_stdout(|out| {
        runs.iter()
            .try_for_each(|r| write_items(out, &r.items, &mut skipped))
    });
    if skipped > 0 {
        eprintln!("rawpv: {skipped} malformed line(s) were not converted");
    }
    super::exit_code(r, if failed.is_empty() { 0 } else { 2 })
}

/// Compact JSON that also escapes DEL and C1 controls (U+007F–U+009F) and invisible or reordering
/// characters (bidi overrides and isolates, zero-width, BOM) as `\uXXXX`: `serde_json` escapes
/// only C0, so `convert` wrote a raw U+009B (a CSI to some terminals) and bidi overrides that
/// `cat session.ndjson` would obey (issue 14.11). The JSON value is unchanged.
pub(crate) struct SafeJson;

impl serde_json::ser::Formatter for SafeJson {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let unsafe_char = |c: char| {
            matches!(c, '\u{7f}'..='\u{9f}') || crate::render::ansi::is_invisible_format(c)
        };
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if unsafe_char(c) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                write!(writer, "\\u{:04x}", c as u32)?;
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

/// Writes the frames of `items` as NDJSON; malformed lines are counted in `skipped` and named on
/// stderr (they have no frame to write).
fn write_items(
    out: &mut dyn std::io::Write,
    items: &[Decoded],
    skipped: &mut u64,
) -> std::io::Result<()> {
    for d in items {
        match d {
            Decoded::Frame(f) => {
                let mut ser = serde_json::Serializer::with_formatter(&mut *out, SafeJson);
                serde::Serialize::serialize(&f.to_json(), &mut ser)?;
                out.write_all(b"\n")?;
            }
            Decoded::Malformed(e) => {
                *skipped += 1;
                eprintln!("rawpv: skipped {e}");
            }
            Decoded::Finding(_) => {}
        }
    }
    Ok(())
}
