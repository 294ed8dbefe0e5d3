//! The fork table of a Claude Code session (issue 16): which rows belong to which branch of
//! each fork point, how many branches there are and which is the main line, read from the
//! `x-claude-code.fork` frames the decoder emits (`crate::import::claude_code`, module docs
//! item 4) and true at every moment of a stream.
//!
//! Who uses it: the view (`crate::view::ViewState::forks`, updated item by item as rows
//! arrive, folds the branches that are not the main line), the feed (the fork row's label),
//! the detail (the fork row's sentence, [`sentence`]) and `stats` (`super::tally`, with
//! [`branch_start`]).
//!
//! Model: the decoder's frames are facts that never change (branch k starts here; the
//! conversation goes on from an earlier record here), so nothing on screen is a snapshot.
//! Each fork point keeps *segments*: runs of items, from a first item up to the next segment,
//! that belong to one of its branches (0: outside the fork point). Branch 1's first segment
//! starts at the first main-agent item of its first line; each mark starts a segment in every
//! fork point, on the branch of that fork point that holds the mark's parent record. The
//! main line is the branch of the last segment: the branch that holds the latest record.
//!
//! The marks other than the rows are rows only while their fork point is unfolded (they say
//! where each branch starts); folded, the fork point is its one row.
//!
//! Invariants: segments ascend by item; O(fork points × log segments) per lookup; a mark costs
//! one backward scan for its parent's item (bounded by [`MAX_SCAN`]) and a push per fork point.

use serde_json::{Map, Value};

use super::{Item, Session};
use crate::protocol::{Body, Frame};

/// Items scanned back from a mark for the item of its parent record (or of branch 1's start).
pub const MAX_SCAN: usize = 1 << 20;

/// One fork point and its branches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkPoint {
    /// `uuid` of the record the branches start from.
    pub parent: String,
    /// Line of that record (1-based, in the transcript).
    pub parent_line: u64,
    /// Item of the fork point's row (branch 2's frame).
    pub row: usize,
    /// First line of each branch (index: branch number − 1); its length is the branch count.
    pub lines: Vec<u64>,
    /// `(first item, branch)` runs ascending by item; branch 0 is "outside this fork point".
    pub segments: Vec<(usize, u32)>,
    /// The view folds the branches other than the main line (the default).
    pub folded: bool,
}

impl ForkPoint {
    /// Number of branches so far.
    pub fn branches(&self) -> u32 {
        u32::try_from(self.lines.len()).unwrap_or(u32::MAX)
    }

    /// The branch holding the latest record (0: the session went on outside this fork point).
    pub fn main(&self) -> u32 {
        self.segments.last().map_or(0, |s| s.1)
    }

    /// The branch item `item` belongs to (0: outside). O(log segments).
    pub fn branch_of(&self, item: usize) -> u32 {
        let k = self.segments.partition_point(|&(s, _)| s <= item);
        k.checked_sub(1).map_or(0, |k| self.segments[k].1)
    }

    /// Whether the fold of this fork point hides `item` (a row of a branch other than the
    /// main line; the fork row itself never).
    pub fn hides(&self, item: usize) -> bool {
        if item == self.row {
            return false;
        }
        let b = self.branch_of(item);
        b != 0 && b != self.main()
    }

    /// The item ranges `[start, end)` the fold hides (`n_items`: the session's item count),
    /// the fork row left out.
    pub fn hidden_ranges(&self, n_items: usize) -> Vec<(usize, usize)> {
        let main = self.main();
        let mut out = Vec::new();
        for (k, &(start, b)) in self.segments.iter().enumerate() {
            if b == 0 || b == main {
                continue;
            }
            let end = self.segments.get(k + 1).map_or(n_items, |s| s.0);
            for (s, e) in [(start, self.row.min(end)), (start.max(self.row + 1), end)] {
                if s < e {
                    out.push((s, e));
                }
            }
        }
        out
    }

    /// The branches other than the main line, as text: "branch 1", "branches 1 and 2",
    /// "branches 1, 2 and 4".
    pub fn others(&self) -> String {
        let main = self.main();
        let v: Vec<String> = (1..=self.branches())
            .filter(|&b| b != main)
            .map(|b| b.to_string())
            .collect();
        match v.as_slice() {
            [] => "no branch".to_owned(),
            [one] => format!("branch {one}"),
            [rest @ .., last] => format!("branches {} and {last}", rest.join(", ")),
        }
    }
}

/// The fork points of a session, in the order their rows arrived.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForkTable {
    pub points: Vec<ForkPoint>,
    /// Items of the fork marks other than the rows (later branches, resumes), ascending: rows
    /// only while a fork point they start a segment of is unfolded ("branch 3 of the fork at
    /// line 62", "back on branch 1 …").
    pub marks: Vec<usize>,
}

/// A fork frame's payload, when `f` is a main-agent `x-claude-code.fork` frame.
fn fork_payload(f: &Frame) -> Option<&Map<String, Value>> {
    if f.frame_type.as_str() != "x-claude-code.fork" || !is_main(f) {
        return None;
    }
    match &f.body {
        Body::Generic(m) => Some(m),
        _ => None,
    }
}

/// Whether event `f` is the main agent's (no delegation chain), without parsing the chain.
fn is_main(f: &Frame) -> bool {
    f.envelope
        .metadata
        .get("delegation_chain")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
}

/// The transcript line of item `i` when it is the main agent's.
fn main_line(session: &Session, i: usize) -> Option<u64> {
    match session.items.get(i)? {
        Item::Message(m) => m.delegation_chain.is_empty().then_some(m.line),
        Item::Invocation(k) => {
            let inv = &session.invocations[*k];
            inv.delegation_chain.is_empty().then_some(inv.request_line)
        }
        Item::Event(f) => is_main(f).then_some(f.origin.line),
    }
}

/// The latest main-agent item before `before` made from line `line` (a call's result line
/// counts), else the one with the greatest line below it (a record that made no row).
fn item_of_line(session: &Session, before: usize, line: u64) -> Option<usize> {
    let mut best: Option<(u64, usize)> = None;
    for i in (before.saturating_sub(MAX_SCAN)..before).rev() {
        let Some(l) = main_line(session, i) else {
            continue;
        };
        let result = match &session.items[i] {
            Item::Invocation(k) => session.invocations[*k].result_line,
            _ => None,
        };
        if l == line || result == Some(line) {
            return Some(i);
        }
        if l < line && best.is_none_or(|(b, _)| l > b) {
            best = Some((l, i));
        }
    }
    best.map(|(_, i)| i)
}

/// `(parent uuid, branch)` when `f` is the frame starting branch `branch` (2, 3, …) of the
/// main agent's fork point at that parent (for counting without a table, `super::tally`).
pub fn branch_start(f: &Frame) -> Option<(&str, u32)> {
    let p = fork_payload(f)?;
    let b = p.get("branch").and_then(Value::as_u64)?;
    Some((
        p.get("parentUuid").and_then(Value::as_str)?,
        u32::try_from(b).ok()?,
    ))
}

/// Whether `f` is the row of a fork point (branch 2's frame): shown, a turn start.
pub fn is_fork_row(f: &Frame) -> bool {
    fork_payload(f).is_some_and(|p| p.get("branch").and_then(Value::as_u64) == Some(2))
}

/// Whether `f` is a fork mark other than the row (a later branch, a resume): quiet.
pub fn is_fork_mark(f: &Frame) -> bool {
    fork_payload(f).is_some_and(|p| p.get("branch").and_then(Value::as_u64) != Some(2))
}

impl ForkTable {
    /// The table of a whole session. O(items + marks × scan).
    pub fn build(session: &Session) -> Self {
        let mut t = Self::default();
        for i in 0..session.items.len() {
            t.on_item(session, i);
        }
        t
    }

    /// Takes item `item` (just added) into the table; returns whether the table changed (a
    /// fork mark: rows may fold or unfold).
    pub fn on_item(&mut self, session: &Session, item: usize) -> bool {
        let Some(Item::Event(f)) = session.items.get(item) else {
            return false;
        };
        let Some(p) = fork_payload(f) else {
            return false;
        };
        if p.get("branch").and_then(Value::as_u64) != Some(2) {
            self.marks.push(item);
        }
        let num = |k: &str| p.get(k).and_then(Value::as_u64);
        let Some(parent_line) = num("parent_line") else {
            return false;
        };
        let line = num("line").unwrap_or(f.origin.line);
        let parent_item = item_of_line(session, item, parent_line);
        let parent = p.get("parentUuid").and_then(Value::as_str);
        let branch = num("branch").and_then(|b| u32::try_from(b).ok());
        let mut changed = false;
        // Every other fork point: the mark goes on along the branch holding its parent.
        for fp in &mut self.points {
            if branch.is_some() && Some(fp.parent.as_str()) == parent {
                continue;
            }
            let b = parent_item.map_or_else(|| fp.main(), |pi| fp.branch_of(pi));
            if b != fp.main() {
                fp.segments.push((item, b));
                changed = true;
            }
        }
        let (Some(branch), Some(parent)) = (branch, parent) else {
            return changed;
        };
        if let Some(fp) = self.points.iter_mut().find(|fp| fp.parent == parent) {
            let k = usize::try_from(branch).unwrap_or(usize::MAX);
            if fp.lines.len() < k {
                fp.lines.resize(k, line);
            }
            fp.lines[k - 1] = line;
            fp.segments.push((item, branch));
            return true;
        }
        let first_line = num("first_line").unwrap_or(line);
        // Branch 1: the main-agent items from its first line up to this row.
        let mut start = item;
        for i in (item.saturating_sub(MAX_SCAN)..item).rev() {
            match main_line(session, i) {
                Some(l) if l >= first_line => start = i,
                Some(_) => break,
                None => {}
            }
        }
        let mut lines = vec![first_line; usize::try_from(branch).unwrap_or(2).max(2)];
        if let Some(last) = lines.last_mut() {
            *last = line;
        }
        let mut segments = vec![(item, branch)];
        if start < item {
            segments.insert(0, (start, 1));
        }
        self.points.push(ForkPoint {
            parent: parent.to_owned(),
            parent_line,
            row: item,
            lines,
            segments,
            folded: true,
        });
        true
    }

    /// The fork point whose row is item `item`.
    pub fn at_row(&self, item: usize) -> Option<&ForkPoint> {
        self.points.iter().find(|fp| fp.row == item)
    }

    /// Whether a fold of a fork point is closed.
    pub fn any_folded(&self) -> bool {
        self.points.iter().any(|fp| fp.folded)
    }

    /// The folded fork point that hides `item`, if any (its index in [`Self::points`]).
    pub fn hiding(&self, item: usize) -> Option<usize> {
        self.points
            .iter()
            .position(|fp| fp.folded && fp.hides(item))
    }

    /// Whether the fork folds hide `item`: a row of a folded fork point's other branches, or a
    /// mark that starts no segment of an unfolded fork point.
    pub fn hidden(&self, item: usize) -> bool {
        if self.marks.binary_search(&item).is_ok() {
            return self.mark_of(item).is_none();
        }
        self.hiding(item).is_some()
    }

    /// The unfolded fork point and branch whose segment mark `item` starts, if any.
    pub fn mark_of(&self, item: usize) -> Option<(&ForkPoint, u32)> {
        self.marks.binary_search(&item).ok()?;
        self.points.iter().filter(|fp| !fp.folded).find_map(|fp| {
            fp.segments
                .iter()
                .find(|s| s.0 == item)
                .map(|&(_, b)| (fp, b))
        })
    }

    /// Follows a session compaction (`map`: old item → new item, `None` when removed).
    pub fn remap(&mut self, map: impl Fn(usize) -> Option<usize>) {
        self.marks = self.marks.iter().filter_map(|&m| map(m)).collect();
        self.points.retain_mut(|fp| {
            let Some(row) = map(fp.row) else {
                return false;
            };
            fp.row = row;
            fp.segments = fp
                .segments
                .iter()
                .filter_map(|&(s, b)| map(s).map(|s| (s, b)))
                .collect();
            true
        });
    }
}

/// The fork row's detail, a few sentences: which fork point, how many branches, which is the
/// main line, what the fold hides (`item`: the fork row). `None` when `item` is no fork row.
/// O(items) (the table is built from the session).
pub fn sentence(session: &Session, item: usize) -> Option<String> {
    let t = ForkTable::build(session);
    let fp = t.at_row(item)?;
    let n = fp.branches();
    let main = fp.main();
    let lines: Vec<String> = fp
        .lines
        .iter()
        .enumerate()
        .map(|(k, l)| format!("branch {} from line {l}", k + 1))
        .collect();
    let main_text = if main == 0 {
        "None of them is the main line: the session went on from an earlier record.".to_owned()
    } else {
        format!(
            "The main line is branch {main}, the one that leads to the session's latest record."
        )
    };
    let hidden: usize = fp
        .hidden_ranges(session.items.len())
        .iter()
        .map(|&(s, e)| {
            (s..e)
                .filter(|&i| !super::query::is_quiet(session, i))
                .count()
        })
        .sum();
    Some(format!(
        "Fork point at line {}: the conversation branches here into {n} branches (a rewind or a retried prompt): {}. {main_text} Folded, this row hides {} ({hidden} row{}); x folds and unfolds them.",
        fp.parent_line,
        lines.join(", "),
        fp.others(),
        if hidden == 1 { "" } else { "s" },
    ))
}
