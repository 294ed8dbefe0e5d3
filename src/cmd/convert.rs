//! `rawpv convert INPUT`: the session as RAWP NDJSON on stdout, one frame per line, exactly what
//! the viewer understood (imported formats become RAWP frames).

use crate::cli::InputArgs;
use crate::import::Decoded;
use crate::source::file::{self, FileEvent};
use crate::source::{SourceKind, load_input_with};

/// Runs the command; returns the exit code.
pub async fn run(input: &InputArgs) -> i32 {
    let kind = SourceKind::from_arg(&input.input, false);
    let net = match super::net_config(&input.net) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let mut skipped = 0u64;
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
                    std::io::Error::new(e.kind(), format!("cannot read {}: {e}", path.display()))
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
                serde_json::to_writer(&mut *out, &f.to_json())?;
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
