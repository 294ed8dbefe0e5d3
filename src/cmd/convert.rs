//! `rawpv convert INPUT`: the session as RAWP NDJSON on stdout, one frame per line, exactly what
//! the viewer understood (imported formats become RAWP frames).

use crate::cli::InputArgs;
use crate::import::Decoded;
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
    let loaded = match load_input_with(&kind, &net).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let mut skipped = 0u64;
    let r = super::with_stdout(|out| {
        for d in &loaded.items {
            match d {
                Decoded::Frame(f) => {
                    serde_json::to_writer(&mut *out, &f.to_json())?;
                    out.write_all(b"\n")?;
                }
                Decoded::Malformed(e) => {
                    skipped += 1;
                    eprintln!("rawpv: skipped {e}");
                }
                Decoded::Finding(_) => {}
            }
        }
        Ok(())
    });
    if skipped > 0 {
        eprintln!("rawpv: {skipped} malformed line(s) were not converted");
    }
    super::exit_code(r, 0)
}
