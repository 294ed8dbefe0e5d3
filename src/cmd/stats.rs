//! `rawpv stats INPUT`: counts per tool and status.

use std::collections::BTreeMap;

use crate::cli::InputArgs;

/// Runs the command; returns the exit code.
pub async fn run(input: &InputArgs) -> i32 {
    let (session, format) = match super::load_session(input).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let mut per_tool: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for inv in &session.invocations {
        let e = per_tool.entry(inv.tool_name.as_str()).or_default();
        e.0 += 1;
        if inv.status.is_failure() {
            e.1 += 1;
        }
    }
    let r = super::with_stdout(|out| {
        writeln!(out, "format       {}", format.as_str())?;
        writeln!(out, "frames       {}", session.counts.frames)?;
        writeln!(out, "invocations  {}", session.counts.invocations)?;
        writeln!(out, "failed       {}", session.counts.failed)?;
        writeln!(out, "findings     {}", session.findings.len())?;
        for (tool, (n, err)) in per_tool {
            let tool = crate::render::text::visible(tool);
            writeln!(out, "  {tool:<20} {n:>6} calls {err:>5} failed")?;
        }
        Ok(())
    });
    super::exit_code(r, 0)
}
