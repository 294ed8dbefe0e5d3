//! Several inputs served as one master stream: the merge order of finished recordings (by
//! timestamp) and the session of frames whose input names none.
//!
//! Who uses it: `crate::serve::Recording::merged` (finished recordings), `crate::cmd::serve`
//! (`--follow` with several files, merged in arrival order, each input through its own
//! [`Sessions`]) and `crate::cmd::convert` (`convert A B` gives a frame the session `serve A B`
//! gives it). The order is `crate::source::merge::interleave` (re-exported here), the one the
//! viewer and the commands use for several inputs.
//!
//! Rules:
//! * **Order** ([`interleave`]): by frame timestamp, stable: each input keeps its own order
//!   (a timestamp going back in time never reorders a file), ties go to the input given first,
//!   and a frame without a timestamp stays right after its predecessor in its own input (it
//!   sorts with the predecessor's timestamp); the frames before an input's first timestamp come
//!   first.
//! * **Sessions** ([`Sessions`], SPEC §6): a frame keeps its `session_id`. A frame without one
//!   belongs to its input's default session, which is the first `session_id` the input names
//!   (as a viewer reading the input alone would group it, `crate::session::sessions`), so it is
//!   written into the frame: merged, the frames of two inputs never fall into one default
//!   session. An input that names no session gets [`input_session_id`]: a UUID derived from the
//!   input's canonical path, the same on every run and for every client. A live input whose
//!   first frames name no session holds them until one does or until the end of what has been
//!   read (the batch); then they take the derived id.

use std::path::Path;

use crate::protocol::Frame;

pub use crate::source::merge::interleave;

/// 64-bit FNV-1a of `bytes` from `seed`.
fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(seed, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The session id of an input that names none: a UUID (version 8, "custom", RFC 9562: derived,
/// not random) whose bytes are two FNV-1a hashes of the input's canonical path (the path as
/// given when it cannot be resolved), so it is the same on every run.
pub fn input_session_id(path: &Path) -> String {
    let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let bytes = canon.as_os_str().as_encoded_bytes();
    let a = fnv1a(0xcbf2_9ce4_8422_2325, bytes);
    let b = fnv1a(a ^ 0x9e37_79b9_7f4a_7c15, bytes);
    let mut raw = [0u8; 16];
    raw[..8].copy_from_slice(&a.to_be_bytes());
    raw[8..].copy_from_slice(&b.to_be_bytes());
    uuid::Builder::from_custom_bytes(raw)
        .into_uuid()
        .hyphenated()
        .to_string()
}

/// Writes the input's default session into the frames of one input that name none (see the
/// module rules).
#[derive(Debug)]
pub struct Sessions {
    /// The first `session_id` the input named (or the derived one, once it was needed).
    default: Option<String>,
    derived: String,
    /// Frames read before the input named a session.
    pending: Vec<Frame>,
}

impl Sessions {
    /// For an input that names none: `derived` ([`input_session_id`]).
    pub fn new(derived: String) -> Self {
        Self {
            default: None,
            derived,
            pending: Vec::new(),
        }
    }

    /// Takes the next frame of the input; frames ready to send are appended to `out`.
    pub fn frame(&mut self, mut f: Frame, out: &mut Vec<Frame>) {
        match (&f.envelope.session_id, &self.default) {
            (Some(id), None) => {
                let id = id.clone();
                for mut p in self.pending.drain(..) {
                    p.envelope.session_id = Some(id.clone());
                    out.push(p);
                }
                self.default = Some(id);
                out.push(f);
            }
            (Some(_), Some(_)) => out.push(f),
            (None, Some(id)) => {
                f.envelope.session_id = Some(id.clone());
                out.push(f);
            }
            (None, None) => self.pending.push(f),
        }
    }

    /// The end of what has been read (a batch, or the whole input): frames still waiting for
    /// the input to name a session take the derived id, which is the default from now on.
    pub fn batch_end(&mut self, out: &mut Vec<Frame>) {
        if self.pending.is_empty() {
            return;
        }
        let id = self.default.get_or_insert_with(|| self.derived.clone());
        for mut p in self.pending.drain(..) {
            p.envelope.session_id = Some(id.clone());
            out.push(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_by_timestamp_stable_and_untimed_frames_stay_with_their_predecessor() {
        let a = vec![None, Some(10), None, Some(30), Some(30)];
        let b = vec![Some(10), Some(20), None, Some(5), Some(40)];
        let c = vec![];
        let order = interleave(&[a, b, c]);
        assert_eq!(
            order,
            vec![
                (0, 0), // before any timestamp: first
                (0, 1), // 10, tie: the first input
                (0, 2), // untimed: right after its predecessor
                (1, 0), // 10
                (1, 1), // 20
                (1, 2), // untimed, after 20
                (1, 3), // 5: back in time, but after its predecessor in its own file
                (0, 3), // 30
                (0, 4), // 30
                (1, 4), // 40
            ]
        );
    }

    #[test]
    fn the_derived_session_id_is_a_stable_uuid_per_path() {
        let a = input_session_id(Path::new("/nonexistent/a.ndjson"));
        let b = input_session_id(Path::new("/nonexistent/b.ndjson"));
        assert_ne!(a, b);
        assert_eq!(a, input_session_id(Path::new("/nonexistent/a.ndjson")));
        let u = uuid::Uuid::parse_str(&a).unwrap();
        assert_eq!(u.get_version_num(), 8);
        assert_eq!(a, a.to_ascii_lowercase());
    }

    fn f(n: u64, session: Option<&str>) -> Frame {
        let sid = session.map_or(String::new(), |s| format!(r#","session_id":"{s}""#));
        let line = format!(r#"{{"type":"agent.text.delta"{sid},"payload":{{"delta":"{n}"}}}}"#);
        crate::protocol::parse_line(n, &line).unwrap()
    }

    fn ids(v: &[Frame]) -> Vec<(u64, Option<&str>)> {
        v.iter()
            .map(|f| (f.origin.line, f.envelope.session_id.as_deref()))
            .collect()
    }

    #[test]
    fn frames_without_a_session_take_the_first_one_the_input_names() {
        let mut s = Sessions::new("derived".into());
        let mut out = Vec::new();
        s.frame(f(1, None), &mut out);
        assert!(out.is_empty());
        s.frame(f(2, Some("s1")), &mut out);
        s.frame(f(3, None), &mut out);
        s.frame(f(4, Some("s2")), &mut out);
        s.frame(f(5, None), &mut out);
        s.batch_end(&mut out);
        assert_eq!(
            ids(&out),
            vec![
                (1, Some("s1")),
                (2, Some("s1")),
                (3, Some("s1")),
                (4, Some("s2")),
                (5, Some("s1"))
            ]
        );
        // An input that names none by the end of its batch takes the derived id for good.
        let mut s = Sessions::new("derived".into());
        let mut out = Vec::new();
        s.frame(f(1, None), &mut out);
        s.batch_end(&mut out);
        s.frame(f(2, Some("s1")), &mut out);
        s.frame(f(3, None), &mut out);
        assert_eq!(
            ids(&out),
            vec![(1, Some("derived")), (2, Some("s1")), (3, Some("derived"))]
        );
    }
}
