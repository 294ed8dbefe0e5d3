//! Hook runs tied to their calls (issue 20): the `x-<agent>.hook` rows an importer emits with an
//! `invocation_id` (Claude Code: `crate::import::cc_records`), kept by call so the call's detail
//! lists them and its feed row says when one failed.
//!
//! Who calls it: `Session::push_event` ([`Hooks::add`]), the detail builder and the feed
//! ([`Hooks::of`], [`Hooks::failed`]), search and the filter (`super::query`, through
//! [`HookRun::search_texts`]). Payload read (all optional): `invocation_id`, `outcome`,
//! `failed`, `hook_name`, `hook_event`, `command`, `exit_code`, `duration_ms`, `output`,
//! `stderr`. Invariants: a run's texts are kept up to [`MAX_HOOK_TEXT`] bytes each (the row
//! itself keeps the whole record); lookups are one hash probe; a `start` row (1.0.x "Running
//! …") is not a run; a [`PROGRESS`] run and an outcome of the same hook on the same call are
//! one run (the outcome's).

use std::collections::HashMap;

use serde_json::Value;

use crate::protocol::{Body, Frame, Timestamp};

/// Bytes of a hook's output (and of its stderr) kept for the call's detail; the rest is
/// counted (`HookRun::cut`) and the hook's own row has it all.
pub const MAX_HOOK_TEXT: usize = 64 * 1024;

/// Bytes of each of a run's texts (command, output, stderr) that `/` search and the text filter
/// read as part of its call ([`HookRun::search_texts`]): a hook printing megabytes costs a
/// search at most this much per text. (Output and stderr are kept up to [`MAX_HOOK_TEXT`]
/// already; the command is not cut when kept.)
pub const MAX_HOOK_SEARCH: usize = 64 * 1024;

/// The outcome of a run known only from a 2.1.x `hook_progress` record: it ran, and Claude Code
/// wrote no outcome (`crate::import::cc_records::hook_progress`).
pub const PROGRESS: &str = "progress";

/// One hook run, as the call's detail shows it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HookRun {
    /// Line of the hook's record.
    pub line: u64,
    pub at: Option<Timestamp>,
    /// `PostToolUse:Edit` (else the event alone).
    pub name: String,
    pub command: Option<String>,
    /// `success`, `non_blocking_error`, `blocking_error`, `cancelled`, … (the attachment type
    /// without `hook_`).
    pub outcome: String,
    pub failed: bool,
    pub exit_code: Option<i64>,
    pub duration_ms: Option<f64>,
    /// What the hook printed (ANSI as written), at most [`MAX_HOOK_TEXT`] bytes.
    pub output: String,
    pub stderr: String,
    /// Bytes of output and stderr not kept.
    pub cut: usize,
}

/// The hook runs of a session's calls, by `invocation_id`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Hooks {
    runs: Vec<HookRun>,
    by_id: HashMap<String, Vec<u32>>,
    failed: HashMap<String, u32>,
}

/// Whether `f` is a hook row (`x-<agent>.hook`).
pub fn is_hook(f: &Frame) -> bool {
    let t = f.frame_type.as_str();
    t.starts_with("x-") && t.rsplit_once('.').is_some_and(|(_, kind)| kind == "hook")
}

/// The run a hook row records (`None`: not a hook row, or a `start` row).
pub fn run_of(f: &Frame) -> Option<HookRun> {
    if !is_hook(f) {
        return None;
    }
    let Body::Generic(p) = &f.body else {
        return None;
    };
    let s = |k: &str| p.get(k).and_then(Value::as_str);
    let outcome = s("outcome").unwrap_or("").to_owned();
    if outcome == "start" {
        return None;
    }
    let mut cut = 0;
    let mut keep = |k: &str| {
        let t = s(k).unwrap_or("");
        let (kept, was_cut) = crate::fmt::cut_bytes(t, MAX_HOOK_TEXT);
        if was_cut {
            cut += t.len() - kept.len();
        }
        kept.to_owned()
    };
    let output = keep("output");
    let stderr = keep("stderr");
    Some(HookRun {
        line: f.origin.line,
        at: f.envelope.timestamp,
        name: s("hook_name")
            .or_else(|| s("hook_event"))
            .unwrap_or("hook")
            .to_owned(),
        command: s("command").map(str::to_owned),
        failed: p.get("failed").and_then(Value::as_bool) == Some(true),
        outcome,
        exit_code: p.get("exit_code").and_then(Value::as_i64),
        duration_ms: p.get("duration_ms").and_then(Value::as_f64),
        output,
        stderr,
        cut,
    })
}

/// What a call's row says before its summary when `n` of its hooks failed: empty for 0,
/// `hook failed · `, `N hooks failed · ` (the feed and `print` say it alike).
pub fn failed_words(n: u32) -> String {
    match n {
        0 => String::new(),
        1 => "hook failed · ".to_owned(),
        n => format!("{n} hooks failed · "),
    }
}

impl HookRun {
    /// What search reads of this run: its name, command, output and stderr, each cut to
    /// [`MAX_HOOK_SEARCH`] bytes (at a character boundary).
    pub fn search_texts(&self) -> [&str; 4] {
        fn cap(t: &str) -> &str {
            crate::fmt::cut_bytes(t, MAX_HOOK_SEARCH).0
        }
        [
            cap(&self.name),
            cap(self.command.as_deref().unwrap_or("")),
            cap(&self.output),
            cap(&self.stderr),
        ]
    }
}

impl Hooks {
    /// Keeps `f` when it is a hook row naming a call; returns that call's id.
    pub fn add(&mut self, f: &Frame) -> Option<String> {
        let Body::Generic(p) = &f.body else {
            return None;
        };
        let id = p.get("invocation_id").and_then(Value::as_str)?.to_owned();
        let run = run_of(f)?;
        // A `progress` run (2.1.x `hook_progress`: it ran, no outcome written) is the same run
        // as an outcome of the same hook on the same call: the outcome takes its place, and a
        // progress record after the outcome adds nothing.
        let same = |r: &HookRun| {
            r.name == run.name
                && (r.command.is_none() || run.command.is_none() || r.command == run.command)
        };
        let ran = |r: &HookRun| r.outcome == PROGRESS;
        let earlier = self.by_id.get(&id).into_iter().flatten().copied();
        if run.outcome == PROGRESS {
            if earlier
                .clone()
                .filter_map(|k| self.runs.get(k as usize))
                .any(|r| !ran(r) && same(r))
            {
                return Some(id);
            }
        } else if let Some(k) = earlier
            .rev()
            .find(|&k| self.runs.get(k as usize).is_some_and(|r| ran(r) && same(r)))
        {
            if run.failed {
                *self.failed.entry(id.clone()).or_default() += 1;
            }
            self.runs[k as usize] = run;
            return Some(id);
        }
        if run.failed {
            *self.failed.entry(id.clone()).or_default() += 1;
        }
        let k = u32::try_from(self.runs.len()).unwrap_or(u32::MAX);
        self.runs.push(run);
        self.by_id.entry(id.clone()).or_default().push(k);
        Some(id)
    }

    /// The hook runs of call `id`, in arrival order.
    pub fn of<'a>(&'a self, id: &str) -> impl Iterator<Item = &'a HookRun> + 'a {
        self.by_id
            .get(id)
            .into_iter()
            .flatten()
            .filter_map(|&k| self.runs.get(k as usize))
    }

    /// How many hook runs of call `id` failed. O(1).
    pub fn failed(&self, id: &str) -> u32 {
        self.failed.get(id).copied().unwrap_or(0)
    }

    /// Hook runs kept.
    pub fn len(&self) -> usize {
        self.runs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_reads_each_text_up_to_the_cap() {
        // A command of 64 KiB + "tail" (commands are kept whole): search reads 64 KiB of it.
        let command = format!("{}tail", "é".repeat(MAX_HOOK_SEARCH / 2));
        let run = HookRun {
            name: "PostToolUse:Bash".into(),
            command: Some(command.clone()),
            output: "coverage 87%".into(),
            stderr: "warn".into(),
            ..HookRun::default()
        };
        assert_eq!(
            run.search_texts(),
            [
                "PostToolUse:Bash",
                &command[..MAX_HOOK_SEARCH],
                "coverage 87%",
                "warn"
            ]
        );
        let none = HookRun::default();
        assert_eq!(none.search_texts(), ["", "", "", ""]);
    }
}
