//! `rawpv audit INPUT [--json]`: the audit list (`crate::review::audit`): every shell command,
//! network access, write outside the working directory, permission-mode change and approval of
//! the session, in order.
//!
//! Who calls it: `main`. Text: one line per entry, `L<line> <time> <kinds> <tool> <status>
//! <what>  [notes]` (the first line of a multi-line command, then `…`), untrusted text made
//! visible; a last line counts the entries per kind. `--json`: one object per entry and line,
//! `{line, time, kinds, tool, invocation_id, status, what, notes}` (`time` RFC 3339 or null,
//! strings with DEL, C1 and invisible characters escaped as convert does). Exit 0, 2 when the
//! input cannot be read.

use std::fmt::Write as _;

use serde_json::json;

use crate::cli::InputArgs;
use crate::review::audit::{Kind, audit};
use crate::review::files::Files;

/// Runs the command; returns the exit code.
pub async fn run(input: &InputArgs, as_json: bool) -> i32 {
    let input = &match input.one_only("audit") {
        Ok(i) => i,
        Err(e) => {
            eprintln!("rawpv: {e}");
            return 2;
        }
    };
    let Some((session, _)) = super::load_session_or_say(input).await else {
        return 2;
    };
    let files = Files::of_session(&session);
    let entries = audit(&session, &files);
    let vis = crate::render::text::visible;
    let r = super::with_stdout(|out| {
        for e in &entries {
            if as_json {
                let v = json!({
                    "line": e.line,
                    "time": e.at.map(crate::protocol::Timestamp::to_rfc3339),
                    "kinds": e.kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
                    "tool": e.tool,
                    "invocation_id": e.invocation_id,
                    "status": e.status,
                    "what": e.what,
                    "notes": e.notes,
                });
                let mut ser =
                    serde_json::Serializer::with_formatter(&mut *out, super::convert::SafeJson);
                serde::Serialize::serialize(&v, &mut ser)?;
                out.write_all(b"\n")?;
                continue;
            }
            let kinds: Vec<&str> = e.kinds.iter().map(|k| k.as_str()).collect();
            let first = e.what.lines().next().unwrap_or("");
            let more = if e.what.lines().nth(1).is_some() {
                " …"
            } else {
                ""
            };
            let mut line = format!(
                "L{:<6} {} {:<18} {:<12} {:<9} {}{more}",
                e.line,
                e.at.map_or_else(|| "--:--:--".to_owned(), crate::protocol::Timestamp::clock),
                kinds.join(","),
                vis(&e.tool),
                vis(&e.status),
                vis(first),
            );
            if !e.notes.is_empty() {
                let _ = write!(line, "  [{}]", vis(&e.notes.join("; ")));
            }
            writeln!(out, "{}", line.trim_end())?;
        }
        if !as_json {
            let counts: Vec<String> = Kind::ALL
                .iter()
                .map(|k| {
                    format!(
                        "{} {}",
                        k.as_str(),
                        entries.iter().filter(|e| e.is(*k)).count()
                    )
                })
                .collect();
            let n = entries.len();
            let noun = if n == 1 { "entry" } else { "entries" };
            writeln!(out, "{n} {noun} · {}", counts.join(" · "))?;
        }
        Ok(())
    });
    super::exit_code(r, 0)
}
