//! What `rawpv stats` keeps of a session file for its usage report: one small fact per usage
//! row and per call (issue 28 item 1), read by folding the file once.
//!
//! Who calls it: `super::report` (through [`read_file`] or the cache, `super::cache`);
//! `crate::session::tally::Tally` fills a [`Log`] while a file folds (`Tally::log`), so no
//! result record, event or message is kept. Memory: ~100 bytes a usage row or call.
//!
//! Invariants: a usage row is a `session.usage` frame that is not a run's total (`scope:
//! "session_total"` restates its messages' rows, as `crate::session::query::Tokens` says); its
//! time is the frame's; its model, message id and request id are the payload's `model` /
//! `message_id` (or `id`) / `request_id` and `metadata.claude_code.requestId`. A call's model is
//! the model of the latest usage row of the same agent (main agent or one subagent, by its
//! delegation chain) before its result: the API message that asked for it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::price::Tokens;
use crate::protocol::{Body, Frame, FrameType};
use crate::session::Invocation;

/// One usage row.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UsageFact {
    /// Epoch ms of the row.
    pub ts: Option<i64>,
    pub model: Option<Box<str>>,
    pub message_id: Option<Box<str>>,
    pub request_id: Option<Box<str>>,
    /// A subagent's (Claude Code `isSidechain`) row.
    pub sidechain: bool,
    pub tokens: Tokens,
}

/// One finished (or never answered) call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CallFact {
    /// Epoch ms of the request (else the result).
    pub ts: Option<i64>,
    pub tool: Box<str>,
    pub failed: bool,
    /// Request to result, ms (finished calls with both times).
    pub duration_ms: Option<f64>,
    pub model: Option<Box<str>>,
}

/// The facts a fold collects (`crate::session::tally::Tally::log`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Log {
    pub usage: Vec<UsageFact>,
    pub calls: Vec<CallFact>,
    /// Agent key (the last `agent_id` of the chain, empty for the main agent) → its latest
    /// usage row's model.
    last_model: HashMap<String, Box<str>>,
}

fn agent_key(chain: &[crate::protocol::Delegation]) -> String {
    chain.last().map(|d| d.agent_id.clone()).unwrap_or_default()
}

/// The usage fact of frame `f`, when it is a `session.usage` row to count.
pub fn usage_fact(f: &Frame) -> Option<UsageFact> {
    if f.frame_type != FrameType::SessionUsage {
        return None;
    }
    let owned;
    let p = match &f.body {
        Body::Generic(m) => m,
        Body::Request(_) | Body::Stream(_) | Body::Result(_) | Body::Catalog(_) => {
            owned = match f.payload_json() {
                Value::Object(m) => m,
                _ => return None,
            };
            &owned
        }
    };
    if p.get("scope").and_then(Value::as_str) == Some("session_total") {
        return None;
    }
    let s = |v: Option<&Value>| v.and_then(Value::as_str).map(Box::from);
    let cc = f.envelope.metadata.get("claude_code");
    Some(UsageFact {
        ts: f.envelope.timestamp.map(|t| t.0),
        model: s(p.get("model")),
        message_id: s(p.get("message_id").or_else(|| p.get("id"))),
        request_id: s(p
            .get("request_id")
            .or_else(|| cc.and_then(|c| c.get("requestId")))),
        sidechain: cc
            .and_then(|c| c.get("isSidechain"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
        tokens: Tokens::of_payload(p),
    })
}

impl Log {
    /// Counts frame `f` when it is a usage row.
    pub fn event(&mut self, f: &Frame) {
        if let Some(u) = usage_fact(f) {
            if let Some(m) = &u.model {
                let key = agent_key(&f.envelope.delegation_chain());
                self.last_model.insert(key, m.clone());
            }
            self.usage.push(u);
        }
    }

    /// Counts call `inv` (once, when its status can no longer change).
    pub fn call(&mut self, inv: &Invocation) {
        let model = self
            .last_model
            .get(&agent_key(&inv.delegation_chain))
            .cloned();
        self.calls.push(CallFact {
            ts: inv.requested_at.or(inv.ended_at).map(|t| t.0),
            tool: inv.tool_name.as_str().into(),
            failed: inv.status.is_failure(),
            duration_ms: if inv.status.is_open() {
                None
            } else {
                inv.duration_ms().filter(|d| d.is_finite() && *d >= 0.0)
            },
            model,
        });
    }
}

/// What one session file holds for the report.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FileFacts {
    pub path: PathBuf,
    /// Size and modification time (ns since the epoch) when read: the cache's key.
    pub size: u64,
    pub mtime_ns: i128,
    /// The file's (first) session id.
    pub session_id: Option<String>,
    /// The session's `cwd`, else the project the directory names.
    pub project: String,
    pub usage: Vec<UsageFact>,
    pub calls: Vec<CallFact>,
    /// Why it could not be read (then it has no facts).
    pub error: Option<String>,
}

/// `(size, mtime ns)` of `path` (the cache's key), `None` when it cannot be read.
pub fn stamp(path: &Path) -> Option<(u64, i128)> {
    let m = std::fs::metadata(path).ok()?;
    let t = m
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some((m.len(), t.as_nanos() as i128))
}

/// Folds `path` (and, for a Claude Code transcript, its subagent files) into facts;
/// `project` is the directory's project name, used when the session names no `cwd`.
pub fn read_file(path: &Path, project: &str) -> FileFacts {
    let (size, mtime_ns) = stamp(path).unwrap_or((0, 0));
    let mut out = FileFacts {
        path: path.to_path_buf(),
        size,
        mtime_ns,
        project: project.to_owned(),
        ..FileFacts::default()
    };
    let shown = crate::render::text::visible(&path.display().to_string());
    if let Some(e) = crate::import::not_a_session(path, &shown) {
        out.error = Some(e);
        return out;
    }
    let mut session = crate::session::Session::new();
    session.findings_only = true;
    let mut tally = Box::<crate::session::tally::Tally>::default();
    tally.log = Some(Box::default());
    session.tally = Some(tally);
    match crate::source::file::fold_path_into(path, session) {
        Ok((mut s, _)) => {
            let mut tally = s.tally.take().map(|t| *t).unwrap_or_default();
            for inv in s.invocations.iter().filter(|i| i.status.is_open()) {
                tally.call(inv);
            }
            if let Some((_, e)) = s.sessions.iter().next() {
                out.session_id = e.id.as_deref().map(str::to_owned);
                if let Some(cwd) = &e.cwd {
                    out.project = String::from(&**cwd);
                }
            }
            if let Some(log) = tally.log {
                out.usage = log.usage;
                out.calls = log.calls;
            }
        }
        Err(e) => out.error = Some(format!("cannot read {shown}: {e}")),
    }
    out
}
