//! Conformance checks over frames and sessions (SPEC 3.7, SPEC 3.4, SPEC 5).
//!
//! Who calls it: the reducer (`crate::session`) runs [`frame_findings`] on every frame before
//! folding it and [`end_findings`] when the source ends, so live and replay see the same findings;
//! `rawpv check` prints them.
//! Invariants: pure functions of (session so far, frame); never panic.

use crate::finding::Finding;
use crate::protocol::Frame;
use crate::session::Session;

/// Findings about one frame, given the session before it is applied.
pub fn frame_findings(_session: &Session, _frame: &Frame) -> Vec<Finding> {
    Vec::new()
}

/// Findings that can only be made once the source ended (e.g. requests never answered).
pub fn end_findings(_session: &Session) -> Vec<Finding> {
    Vec::new()
}
