//! The counters `rawpv stats` prints, kept while a session folds (issue 17: the one-shot commands
//! fold and drop). Set `Session::tally` (with `Session::findings_only`) and the session hands
//! each call to [`Tally::call`] when its result is folded (its status can no longer change) and
//! each event frame to [`Tally::event`] before dropping it; `rawpv stats` adds the calls still
//! open at the end. Memory: one entry per distinct tool name, status, `output_type`, call
//! duration (in ms) and fork point, not per call.

use std::collections::BTreeMap;

use super::Invocation;
use super::query::Tokens;
use crate::protocol::Frame;

/// What `rawpv stats` counts: per tool, status and `output_type`, call durations and usage tokens.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Tally {
    /// Tool name (raw, untrusted) → (calls, failed calls).
    pub per_tool: BTreeMap<String, (u64, u64)>,
    /// Status label (`CallStatus::label`) → calls.
    pub per_status: BTreeMap<String, u64>,
    /// The result's `output_type` (`(none)` when absent) → finished calls.
    pub per_output: BTreeMap<String, u64>,
    /// Finished calls' durations ([`Invocation::duration_ms`], finite and ≥ 0): the key orders
    /// as `f64::total_cmp` ([`order_key`]) → how many calls took exactly that long.
    durations: BTreeMap<u64, u64>,
    /// Token totals of the `session.usage` frames.
    pub tokens: Tokens,
    /// Claude Code fork points (their `x-claude-code.fork` branch frames, `super::forks`) by
    /// parent uuid → most branches seen.
    forks: BTreeMap<String, u64>,
    /// Which finished calls to keep whole (`rawpv stats`' files section keeps the file tools'
    /// calls: their spans, status and rows, a few hundred bytes each; `None`: none).
    pub keep: Option<Keep>,
    /// The calls `keep` chose, in the order their results were folded.
    pub kept: Vec<Invocation>,
    /// Every usage row and call as a small fact (`rawpv stats` over several sessions,
    /// `crate::usage::facts`); `None`: not kept.
    pub log: Option<Box<crate::usage::facts::Log>>,
    /// Models without a price → their tokens.
    pub unpriced: BTreeMap<String, u64>,
}

/// Which calls [`Tally::kept`] keeps, by tool name; compared by address.
#[derive(Debug, Clone, Copy)]
pub struct Keep(pub fn(&str) -> bool);

impl PartialEq for Keep {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::fn_addr_eq(self.0, other.0)
    }
}

/// `f64::total_cmp`'s order as an unsigned key (sign bit flipped for positives, all bits for
/// negatives), and back with [`from_order_key`].
fn order_key(d: f64) -> u64 {
    let b = d.to_bits();
    if b >> 63 == 0 { b | (1 << 63) } else { !b }
}

fn from_order_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

impl Tally {
    /// Counts call `inv`; call it once, when its status can no longer change (its result was
    /// folded, or the input ended).
    pub fn call(&mut self, inv: &Invocation) {
        if let Some(l) = &mut self.log {
            l.call(inv);
        }
        if self.keep.is_some_and(|k| (k.0)(&inv.tool_name)) {
            self.kept.push(inv.clone());
        }
        let e = self.per_tool.entry(inv.tool_name.clone()).or_default();
        e.0 += 1;
        if inv.status.is_failure() {
            e.1 += 1;
        }
        *self
            .per_status
            // Counted when its status can no longer change: an open call is one the input
            // ended without answering, `no result` as the viewer says.
            .entry(inv.status.word(true).to_owned())
            .or_default() += 1;
        if let Some(r) = &inv.result {
            let t = r.output_type.as_ref().map_or("(none)", |t| t.as_str());
            *self.per_output.entry(t.to_owned()).or_default() += 1;
        }
        if !inv.status.is_open()
            && let Some(d) = inv.duration_ms().filter(|d| d.is_finite() && *d >= 0.0)
        {
            *self.durations.entry(order_key(d)).or_default() += 1;
        }
    }

    /// Counts an event row's frame: usage tokens and fork rows.
    pub fn event(&mut self, f: &Frame) {
        self.tokens.add_frame(f);
        if let Some(u) = crate::usage::facts::usage_fact(f) {
            let c = crate::usage::price::table().cost(u.model.as_deref(), &u.tokens);
            if c.unpriced_tokens > 0 {
                let m = u.model.as_deref().unwrap_or("(no model)").to_owned();
                let e = self.unpriced.entry(m).or_default();
                *e = e.saturating_add(c.unpriced_tokens);
            }
        }
        if let Some(l) = &mut self.log {
            l.event(f);
        }
        if let Some((parent, n)) = super::forks::branch_start(f) {
            let e = self.forks.entry(parent.to_owned()).or_default();
            *e = (*e).max(u64::from(n));
        }
    }

    /// The counted durations in ms, ascending (each as often as it was counted).
    pub fn durations(&self) -> impl Iterator<Item = f64> + '_ {
        self.durations
            .iter()
            .flat_map(|(&k, &n)| std::iter::repeat_n(from_order_key(k), n as usize))
    }

    /// The longest counted duration in ms.
    pub fn max_duration(&self) -> Option<f64> {
        self.durations
            .keys()
            .next_back()
            .map(|&k| from_order_key(k))
    }

    /// How many durations were counted.
    pub fn duration_count(&self) -> u64 {
        self.durations.values().sum()
    }

    /// (fork points, their branches in all).
    pub fn forks(&self) -> (u64, u64) {
        (self.forks.len() as u64, self.forks.values().sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_key_orders_as_total_cmp_and_round_trips() {
        let mut v = [3.5, 0.0, -0.0, 1e300, 2.0, 0.25, f64::MIN_POSITIVE];
        let mut keys: Vec<u64> = v.iter().map(|&d| order_key(d)).collect();
        v.sort_by(f64::total_cmp);
        keys.sort_unstable();
        let back: Vec<u64> = keys.iter().map(|&k| from_order_key(k).to_bits()).collect();
        assert_eq!(back, v.iter().map(|d| d.to_bits()).collect::<Vec<_>>());
    }
}
