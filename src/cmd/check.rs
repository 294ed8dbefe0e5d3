//! `rawpv check INPUT [--format text|json]`: conformance findings; exit 0 when nothing at error
//! level, 1 when something was, 2 when the input could not be read.

use crate::cli::{CheckFormat, InputArgs};
use crate::finding::Level;

/// Runs the command; returns the exit code.
pub async fn run(input: &InputArgs, format: CheckFormat) -> i32 {
    let session = match super::load_session(input).await {
        Ok((s, _)) => s,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let errors = session.findings.iter().any(|f| f.level == Level::Error);
    let r = super::with_stdout(|out| match format {
        CheckFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &session.findings)?;
            writeln!(out)
        }
        CheckFormat::Text => {
            for f in &session.findings {
                writeln!(
                    out,
                    "{}:{}: {} [{}] {} ({})",
                    input.input,
                    f.line,
                    f.level.as_str(),
                    f.code,
                    f.message,
                    f.spec
                )?;
            }
            Ok(())
        }
    });
    super::exit_code(r, i32::from(errors))
}
