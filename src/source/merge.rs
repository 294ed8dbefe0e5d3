//! Several inputs as one (issue 24 item 2): `rawpv A B …`, `rawpv -f A B …`, and `print`,
//! `convert` and `stats` over several inputs.
//!
//! Who calls it: `crate::app::entry` (the viewer: [`spawn_sources`]), `crate::cmd` (the one-shot
//! commands: [`load_all`]). Each input is read by the source it would have alone (`super`), so
//! each keeps its own decoder, reconnect and resume state; what this module adds is the input's
//! index on every item it yields ([`Run`], [`SourceMsg::Input`]) so the session reads each
//! item in its own input (`Session::input`: ids and line numbers are per input), and the order:
//! * saved inputs (files, the demo) merge by frame timestamp ([`merge_by_time`], [`interleave`]:
//!   the same order `serve` gives several recordings): a stable k-way merge that never reorders
//!   an input's own items; an item without a timestamp (a malformed line, a finding, an untimed
//!   frame) sorts with the item before it in its own input;
//! * with a live input among them (`-f`, `-`, a URL) every input goes by arrival.
//!
//! One input failing (unreadable, refused, dropped for good) never stops the others: it becomes
//! an error finding `input-failed` naming the input, and the rest is read on
//! ([`failure_finding`]).
//!
//! Invariants: an input's items keep their order; every item of the merged stream is preceded
//! by the [`SourceMsg::Input`] of its input (runs, not one marker per item); the merged source
//! ends with one `Eof` when every input has ended or failed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{
    CHANNEL_CAPACITY, NetConfig, SourceError, SourceKind, SourceMsg, SourceState, load_input_with,
    spawn_source_with,
};
use crate::finding::{Finding, Level};
use crate::import::{Decoded, Format};
use crate::protocol::Timestamp;

/// Code of the finding for an input that could not be read (the others still are).
pub const INPUT_FAILED: &str = "input-failed";

/// Most inputs at once (the input index is a `u16`).
pub const MAX_INPUTS: usize = 4096;

/// Consecutive items of one input: `input` is the index of its argument.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub input: u16,
    pub items: Vec<Decoded>,
}

/// Short, distinct labels for the inputs, in order: a file's name (`b.ndjson`), or the path as
/// given when two inputs share a name, `stdin`, a URL without its credentials, `demo`; a label
/// used twice gets ` (2)`, ` (3)`. Raw text (file names are untrusted): made visible where shown.
pub fn labels(kinds: &[SourceKind]) -> Vec<Box<str>> {
    let name = |k: &SourceKind| match k {
        SourceKind::File(p) | SourceKind::Follow(p) => p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ),
        SourceKind::Url(u) => crate::log::redact_url(u),
        other => other.label(),
    };
    let short: Vec<String> = kinds.iter().map(name).collect();
    let mut out: Vec<String> = kinds
        .iter()
        .zip(&short)
        .map(|(k, s)| {
            let shared = short.iter().filter(|t| *t == s).count() > 1;
            match k {
                SourceKind::File(p) | SourceKind::Follow(p) if shared => p.display().to_string(),
                _ => s.clone(),
            }
        })
        .collect();
    for i in 0..out.len() {
        let seen = out[..i].iter().filter(|t| **t == out[i]).count();
        if seen > 0 {
            out[i] = format!("{} ({})", out[i], seen + 1);
        }
    }
    out.into_iter().map(String::into_boxed_str).collect()
}

/// Expands the command-line inputs: a directory becomes every session file under it
/// (recursively, at most 8 levels, symlinked directories not followed, sorted by path); a
/// Claude Code subagent transcript (`agent-*.jsonl`, or any file under a `subagents`
/// directory) is not an input of its own, as its parent session brings it in. Other arguments
/// are kept as they are. An empty directory is said (`Err`), never silently nothing.
///
/// # Errors
/// A directory holding no session file.
pub fn expand_dirs(args: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for a in args {
        let p = Path::new(a);
        if a != "-" && p.is_dir() {
            let mut found = Vec::new();
            walk(p, 0, &mut found);
            if found.is_empty() {
                return Err(format!(
                    "{} holds no session file (.jsonl, .ndjson, .json)",
                    crate::render::text::visible(a)
                ));
            }
            found.sort();
            out.extend(found.into_iter().map(|f| f.display().to_string()));
        } else {
            out.push(a.clone());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let Ok(t) = e.file_type() else { continue };
        let p = e.path();
        if t.is_dir() {
            if depth < 8 && e.file_name() != "subagents" {
                walk(&p, depth + 1, out);
            }
        } else if crate::browse::is_session_file(&p) {
            out.push(p);
        }
    }
}

/// The finding for input `label` that failed with `e`; the other inputs are read on.
pub fn failure_finding(label: &str, e: &SourceError) -> Finding {
    Finding::new(
        Level::Error,
        INPUT_FAILED,
        "issue 24",
        0,
        format!(
            "input {} failed: {e}; the other inputs are read on",
            crate::render::text::visible(label)
        ),
    )
}

/// The timestamp an item is ordered by: a frame's own.
fn stamp(d: &Decoded) -> Option<Timestamp> {
    match d {
        Decoded::Frame(f) => f.envelope.timestamp,
        Decoded::Malformed(_) | Decoded::Finding(_) => None,
    }
}

/// The merge order of inputs whose frames have the timestamps `keys` (epoch ms, `None` when a
/// frame has none): `(input, position in it)` pairs, every frame once. The one merge order of rawpv (`serve` of several recordings, the viewer
/// and the commands on several inputs): each input keeps its own order, a frame sorts by its
/// timestamp or, without one, its predecessor's in its input (none yet: before everything),
/// ties go to the input given first. O(n log k) for n frames of k inputs.
pub fn interleave(keys: &[Vec<Option<i64>>]) -> Vec<(usize, usize)> {
    // Each input's frames with the key they sort by: their timestamp, else their predecessor's.
    let sort_keys: Vec<Vec<Option<i64>>> = keys
        .iter()
        .map(|k| {
            let mut last = None;
            k.iter()
                .map(|ts| {
                    if ts.is_some() {
                        last = *ts;
                    }
                    last
                })
                .collect()
        })
        .collect();
    let total = keys.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(total);
    // Heads of the inputs: (key, input, position); the smallest goes next. Only the input just
    // taken from pushes, so a frame sorting with its predecessor's key follows it at once.
    let mut heads: BinaryHeap<Reverse<(Option<i64>, usize, usize)>> = sort_keys
        .iter()
        .enumerate()
        .filter_map(|(i, k)| k.first().map(|key| Reverse((*key, i, 0))))
        .collect();
    while let Some(Reverse((_, input, pos))) = heads.pop() {
        out.push((input, pos));
        if let Some(key) = sort_keys[input].get(pos + 1) {
            heads.push(Reverse((*key, input, pos + 1)));
        }
    }
    out
}

/// Merges saved inputs by frame timestamp into runs ([`interleave`]'s order; an item that is
/// not a frame sorts as an untimed one).
pub fn merge_by_time(inputs: Vec<Vec<Decoded>>) -> Vec<Run> {
    let inputs: Vec<Vec<Decoded>> = inputs.into_iter().take(MAX_INPUTS).collect();
    let keys: Vec<Vec<Option<i64>>> = inputs
        .iter()
        .map(|v| v.iter().map(|d| stamp(d).map(|t| t.0)).collect())
        .collect();
    let order = interleave(&keys);
    let mut items: Vec<std::vec::IntoIter<Decoded>> =
        inputs.into_iter().map(Vec::into_iter).collect();
    let mut out: Vec<Run> = Vec::new();
    for (i, _) in order {
        let Some(d) = items[i].next() else { continue };
        let input = u16::try_from(i).unwrap_or(u16::MAX);
        match out.last_mut() {
            Some(r) if r.input == input => r.items.push(d),
            _ => out.push(Run {
                input,
                items: vec![d],
            }),
        }
    }
    out
}

/// Reads every input whole (the one-shot commands), merged by time (see the module doc). An
/// input that cannot be read is an `input-failed` finding in the result and its error in the
/// second value (the caller says it and exits 2); the format is the first input's.
pub async fn load_all(
    kinds: &[SourceKind],
    net: &NetConfig,
) -> (Format, Vec<Run>, Vec<(usize, SourceError)>) {
    let labels = labels(kinds);
    let mut all = Vec::with_capacity(kinds.len());
    let mut format = None;
    let mut failed = Vec::new();
    for (i, k) in kinds.iter().enumerate().take(MAX_INPUTS) {
        let refused = match k {
            SourceKind::File(p) => crate::import::not_a_session(
                p,
                &crate::render::text::visible(&p.display().to_string()),
            ),
            _ => None,
        };
        let read = match refused {
            Some(e) => Err(SourceError::Other(e)),
            None => load_input_with(k, net).await,
        };
        match read {
            Ok(l) => {
                format.get_or_insert(l.format);
                all.push(l.items);
            }
            Err(e) => {
                all.push(vec![Decoded::Finding(failure_finding(&labels[i], &e))]);
                failed.push((i, e));
            }
        }
    }
    (
        format.unwrap_or(Format::RawpNdjson),
        merge_by_time(all),
        failed,
    )
}

/// Whether `kind` is read once and ends (merged by time) rather than live (by arrival).
fn is_saved(kind: &SourceKind) -> bool {
    matches!(kind, SourceKind::File(_) | SourceKind::Demo)
}

/// Spawns the viewer's source for several inputs: one source per input (as alone, with its own
/// reconnect and resume state), forwarded to `tx` as runs each preceded by its
/// [`SourceMsg::Input`]. All saved: read whole, merged by time, then sent. Otherwise by
/// arrival. State: `Live` once any input is live, `Reconnecting` while one reconnects,
/// `Reading` sums the saved inputs' progress; an input's `Failed` is an `input-failed`
/// finding; a followed input's `Restarted` is a warning finding (its rows so far stay: the
/// other inputs' rows cannot be folded again); one `Eof` when every input has ended.
pub fn spawn_sources(
    kinds: Vec<SourceKind>,
    net: NetConfig,
    tx: mpsc::Sender<SourceMsg>,
    cancel: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let run = async {
            if kinds.iter().all(is_saved) {
                send_merged(&kinds, &net, &tx).await;
            } else {
                forward_by_arrival(kinds, net, &tx, cancel.clone()).await;
            }
        };
        tokio::select! {
            () = cancel.cancelled() => {}
            () = run => {}
        }
    })
}

async fn send_merged(kinds: &[SourceKind], net: &NetConfig, tx: &mpsc::Sender<SourceMsg>) {
    let (format, runs, _failed) = load_all(kinds, net).await;
    if tx.send(SourceMsg::Format(format)).await.is_err() {
        return;
    }
    for mut r in runs {
        if tx.send(SourceMsg::Input(r.input)).await.is_err()
            || !super::send_items(tx, &mut r.items).await
        {
            return;
        }
    }
    let _ = tx.send(SourceMsg::Eof).await;
}

/// Per-input state the merged status is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Loading,
    Live,
    Reconnecting(u32),
    Done,
}

async fn forward_by_arrival(
    kinds: Vec<SourceKind>,
    net: NetConfig,
    tx: &mpsc::Sender<SourceMsg>,
    cancel: CancellationToken,
) {
    let labels = labels(&kinds);
    let n = kinds.len().min(MAX_INPUTS);
    let (mux_tx, mut mux_rx) = mpsc::channel::<(usize, SourceMsg)>(CHANNEL_CAPACITY);
    let mut tasks = Vec::with_capacity(n);
    for (i, k) in kinds.into_iter().take(n).enumerate() {
        let (one_tx, mut one_rx) = mpsc::channel(CHANNEL_CAPACITY);
        tasks.push(spawn_source_with(
            k,
            net.clone(),
            one_tx,
            cancel.child_token(),
        ));
        let mux = mux_tx.clone();
        tokio::spawn(async move {
            while let Some(m) = one_rx.recv().await {
                if mux.send((i, m)).await.is_err() {
                    return;
                }
            }
        });
    }
    drop(mux_tx);
    let mut phase = vec![Phase::Loading; n];
    let mut progress = vec![(0u64, 0u64); n];
    let mut sent_format = false;
    let mut current: Option<usize> = None;
    let mut shown: Option<SourceState> = None;
    while let Some((i, m)) = mux_rx.recv().await {
        let input = u16::try_from(i).unwrap_or(u16::MAX);
        let mut out: Vec<SourceMsg> = Vec::new();
        match m {
            SourceMsg::Batch(items) => {
                if phase[i] == Phase::Loading {
                    phase[i] = Phase::Live;
                }
                if current != Some(i) {
                    out.push(SourceMsg::Input(input));
                    current = Some(i);
                }
                out.push(SourceMsg::Batch(items));
            }
            SourceMsg::Format(f) => {
                if !sent_format {
                    sent_format = true;
                    out.push(SourceMsg::Format(f));
                }
            }
            SourceMsg::Input(_) => {}
            SourceMsg::State(s) => match s {
                SourceState::Reading { bytes, total } => progress[i] = (bytes, total),
                SourceState::Live | SourceState::Connecting { .. } => phase[i] = Phase::Live,
                SourceState::Reconnecting { attempt, .. } => {
                    phase[i] = Phase::Reconnecting(attempt);
                }
                SourceState::Ended => phase[i] = Phase::Done,
                SourceState::Loading => {}
                SourceState::Restarted { reason } => {
                    out.push(SourceMsg::Input(input));
                    current = Some(i);
                    out.push(SourceMsg::Batch(vec![Decoded::Finding(Finding::new(
                        Level::Warning,
                        INPUT_FAILED,
                        "issue 24",
                        0,
                        format!(
                            "input {} restarted ({}): its rows so far stay, its new content \
                             follows them",
                            crate::render::text::visible(&labels[i]),
                            crate::render::text::visible(&reason)
                        ),
                    ))]));
                }
            },
            SourceMsg::Eof => phase[i] = Phase::Done,
            SourceMsg::Failed(e) => {
                phase[i] = Phase::Done;
                out.push(SourceMsg::Input(input));
                current = Some(i);
                out.push(SourceMsg::Batch(vec![Decoded::Finding(failure_finding(
                    &labels[i], &e,
                ))]));
            }
        }
        let state = merged_state(&phase, &progress);
        if state.as_ref() != shown.as_ref()
            && let Some(s) = &state
        {
            out.push(SourceMsg::State(s.clone()));
        }
        shown = state;
        for m in out {
            if tx.send(m).await.is_err() {
                cancel.cancel();
                return;
            }
        }
        if phase.iter().all(|p| *p == Phase::Done) {
            let _ = tx.send(SourceMsg::Eof).await;
            break;
        }
    }
    for t in tasks {
        let _ = t.await;
    }
}

/// The status bar's state for all inputs: reconnecting if one is, live if one is, else reading
/// (summed progress) while one loads; `None` when nothing is to be said yet.
fn merged_state(phase: &[Phase], progress: &[(u64, u64)]) -> Option<SourceState> {
    if let Some(attempt) = phase.iter().find_map(|p| match p {
        Phase::Reconnecting(a) => Some(*a),
        _ => None,
    }) {
        return Some(SourceState::Reconnecting {
            attempt,
            reason: "an input reconnects".into(),
        });
    }
    if phase.contains(&Phase::Live) {
        return Some(SourceState::Live);
    }
    let (bytes, total) = progress
        .iter()
        .fold((0, 0), |(b, t), (x, y)| (b + x, t + y));
    (total > 0).then_some(SourceState::Reading { bytes, total })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(ts: Option<i64>, line: u64) -> Decoded {
        let text = match ts {
            Some(t) => format!(r#"{{"type":"agent.message","timestamp":{t},"text":"x"}}"#),
            None => r#"{"type":"agent.message","text":"x"}"#.to_owned(),
        };
        let f = crate::protocol::parse::parse_line(line, &text).expect("a frame");
        assert_eq!(f.envelope.timestamp, ts.map(Timestamp));
        Decoded::frame(f)
    }

    fn order(runs: &[Run]) -> Vec<(u16, u64)> {
        runs.iter()
            .flat_map(|r| {
                r.items.iter().map(move |d| match d {
                    Decoded::Frame(f) => (r.input, f.origin.line),
                    _ => (r.input, 0),
                })
            })
            .collect()
    }

    /// By time across inputs; an untimed item sorts with its predecessor; ties go to the earlier
    /// input; an input's own order is never changed.
    #[test]
    fn merges_by_time_keeping_each_inputs_order() {
        let a = vec![
            frame(None, 1),
            frame(Some(10), 2),
            frame(None, 3),
            frame(Some(30), 4),
            frame(Some(20), 5),
        ];
        let b = vec![frame(Some(5), 1), frame(Some(10), 2), frame(Some(25), 3)];
        let runs = merge_by_time(vec![a, b]);
        assert_eq!(
            order(&runs),
            vec![
                (0, 1),
                (1, 1),
                (0, 2),
                (0, 3),
                (1, 2),
                (1, 3),
                (0, 4),
                (0, 5)
            ]
        );
        // Runs, not one marker per item.
        assert_eq!(runs.len(), 5);
    }

    #[test]
    fn labels_are_short_and_distinct() {
        let l = labels(&[
            SourceKind::File("x/a.jsonl".into()),
            SourceKind::File("y/a.jsonl".into()),
            SourceKind::File("b.ndjson".into()),
            SourceKind::Stdin,
            SourceKind::File("b.ndjson".into()),
        ]);
        let l: Vec<&str> = l.iter().map(|s| &**s).collect();
        assert_eq!(
            l,
            vec![
                "x/a.jsonl",
                "y/a.jsonl",
                "b.ndjson",
                "stdin",
                "b.ndjson (2)"
            ]
        );
    }
}
