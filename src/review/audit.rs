//! The audit list (issue 23 item 5): what the session did that a reviewer must see, in order:
//! every shell command, every network access (web tools, `curl`/`wget`/… in a command, MCP
//! tools the catalog marks open-world), every write outside the session's working directory,
//! every permission-mode change and every approval asked, given or refused.
//!
//! Who calls it: `rawpv audit` (`crate::cmd::audit`), the viewer's audit panel
//! (`crate::ui::audit`), tests.
//!
//! Sources, per kind:
//! * shell: calls of the shell tools (`review::edits::is_shell`); the command as written, with
//!   notes for network commands and the writers `review::writers` finds.
//! * network: `WebFetch`, `WebSearch`, `web_search`, `web_fetch`, `google_web_search` and any
//!   tool whose catalog category is `web`; shell commands running `curl`, `wget`, `ssh`, `scp`,
//!   `rsync`, `nc`, `http`, `git clone|fetch|pull|push`, package installs; MCP tools whose
//!   catalog entry has `annotations.openWorldHint: true` (or `openWorldHint` itself).
//! * write outside the working directory: the files model's changes of files outside `cwd`, and
//!   shell commands naming an absolute (or `~`) target outside it (`review::writers::targets`:
//!   redirects, `cp`/`mv`/`tee`/`dd of=`/`sed -i` …).
//! * permission: Claude Code `EnterPlanMode` / `ExitPlanMode` (plan mode entered; left once
//!   the user approves the plan, so `ExitPlanMode` is an approval too), Codex `turn_context`
//!   rows whose `approval_policy` or `sandbox_policy` differ from the previous ones, and a
//!   `permissionMode` in a frame's `metadata.claude_code` (the first one, then each change).
//! * approval: calls of tools the catalog says require approval (`requires_approval`), every
//!   cancelled call (refused or interrupted by the user), Codex calls asking to leave the
//!   sandbox (`with_escalated_permissions`, `sandbox_permissions`).
//!
//! Invariants: one entry per call (its kinds are flags, so a filter by kind is a test of a
//! flag); entries in feed order; the text is raw, made visible by whoever shows it; never
//! panics on any session.

use serde_json::Value;

use super::edits;
use super::files::Files;
use super::writers;
use crate::protocol::{Category, Timestamp};
use crate::session::{CallStatus, Invocation, Item, Session};

/// What an entry is about; an entry can be several.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Shell,
    Network,
    OutsideWrite,
    Permission,
    Approval,
}

impl Kind {
    pub const ALL: [Self; 5] = [
        Self::Shell,
        Self::Network,
        Self::OutsideWrite,
        Self::Permission,
        Self::Approval,
    ];

    /// `shell`, `network`, `outside`, `permission`, `approval` (the filter words).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Shell => "shell",
            Self::Network => "network",
            Self::OutsideWrite => "outside",
            Self::Permission => "permission",
            Self::Approval => "approval",
        }
    }

    /// The kind a filter word names (also `net`, `web`, `write`, `perm`, `approve`).
    pub fn parse(word: &str) -> Option<Self> {
        match word {
            "shell" | "bash" | "sh" => Some(Self::Shell),
            "network" | "net" | "web" => Some(Self::Network),
            "outside" | "write" | "writes" => Some(Self::OutsideWrite),
            "permission" | "perm" | "mode" => Some(Self::Permission),
            "approval" | "approve" | "approvals" => Some(Self::Approval),
            _ => None,
        }
    }
}

/// One row of the audit list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its kinds, in [`Kind`] order, at least one.
    pub kinds: Vec<Kind>,
    /// Its feed row.
    pub item: usize,
    /// The call (`Session::invocations` index), when it is one.
    pub call: Option<usize>,
    /// The call's `invocation_id`.
    pub invocation_id: Option<String>,
    pub line: u64,
    pub at: Option<Timestamp>,
    /// Tool name or row kind (`x-codex.turn_context`).
    pub tool: String,
    /// What it did, raw: the command, the URL or query, the path, the new mode.
    pub what: String,
    /// The call's status label (`ok`, `error`, `cancelled`…), or `—` for a row.
    pub status: String,
    /// Notes: `network: curl`, `writes: rm`, `open-world MCP tool`, `refused by the user`.
    pub notes: Vec<String>,
}

impl Entry {
    pub fn is(&self, k: Kind) -> bool {
        self.kinds.contains(&k)
    }
}

/// Network commands in a shell command line: its programs (`review::writers::programs`, so
/// `echo curl` is none and `bash -c "curl …"` is one) that reach the network: `curl`, `wget`,
/// `ssh`, `scp`, `rsync`, `nc`, `gh`, `docker pull|run|push`, `git clone|fetch|pull|push` (after
/// any `-C DIR`), package installs (`npm|pnpm|yarn|bun install|i|ci|add`, `pip install`, `go
/// get|install`, `cargo install|add`, `apt(-get) install`, `brew install`), `npx` / `pnpx` /
/// `bunx` / `uvx` (they download).
pub fn network_commands(command: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for words in super::writers::programs(command) {
        let prog = super::writers::base(words[0].trim_start_matches('\\'));
        let sub = words
            .iter()
            .skip(1)
            .scan(false, |skip, w| {
                // `git -C DIR push`: options and their values before the subcommand.
                let take = !*skip && !w.starts_with('-');
                *skip = matches!(w.as_str(), "-C" | "-c" | "--git-dir" | "--work-tree");
                Some(take.then_some(w.as_str()))
            })
            .flatten()
            .next()
            .unwrap_or("");
        let name = match prog {
            "curl" | "wget" | "ssh" | "scp" | "sftp" | "rsync" | "nc" | "ncat" | "telnet"
            | "ftp" | "http" | "https" | "xh" | "aria2c" | "gh" | "npx" | "pnpx" | "bunx"
            | "uvx" => prog.to_owned(),
            "git" if matches!(sub, "clone" | "fetch" | "pull" | "push" | "ls-remote") => {
                format!("git {sub}")
            }
            "docker" | "podman" if matches!(sub, "pull" | "push" | "run" | "build" | "login") => {
                format!("{prog} {sub}")
            }
            "npm" | "pnpm" | "yarn" | "bun"
                if matches!(sub, "install" | "i" | "ci" | "add" | "update" | "publish") =>
            {
                format!("{prog} {sub}")
            }
            "pip" | "pip3" | "uv" | "poetry"
                if matches!(sub, "install" | "add" | "sync" | "download") =>
            {
                format!("{prog} {sub}")
            }
            "go" if matches!(sub, "get" | "install") => format!("go {sub}"),
            "uv" if sub == "pip" && words.iter().any(|w| w == "install") => {
                "uv pip install".to_owned()
            }
            "cargo" if matches!(sub, "install" | "add" | "update" | "fetch" | "publish") => {
                format!("cargo {sub}")
            }
            "apt" | "apt-get" | "brew" | "dnf" | "yum" | "apk"
                if matches!(sub, "install" | "update" | "upgrade" | "add") =>
            {
                format!("{prog} {sub}")
            }
            _ => continue,
        };
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

fn web_tool(session: &Session, inv: &Invocation) -> bool {
    matches!(
        inv.tool_name.as_str(),
        "WebFetch" | "WebSearch" | "web_search" | "web_fetch" | "google_web_search"
    ) || session
        .catalog_entry_of(inv)
        .and_then(|t| t.category.as_ref())
        .is_some_and(|c| *c == Category::Web)
        || crate::protocol::rules::known_category(&inv.tool_name) == Some(Category::Web)
}

fn open_world(session: &Session, inv: &Invocation) -> bool {
    session.catalog_entry_of(inv).is_some_and(|t| {
        let hint = |v: &Value| v.get("openWorldHint").and_then(Value::as_bool) == Some(true);
        t.extra.get("annotations").is_some_and(hint) || hint(&Value::Object(t.extra.clone()))
    })
}

fn str_in<'v>(v: &'v Value, keys: &[&str]) -> Option<&'v str> {
    keys.iter().find_map(|k| v.get(*k).and_then(Value::as_str))
}

/// The audit list of `session`, with `files` its files model (for writes outside `cwd`).
pub fn audit(session: &Session, files: &Files) -> Vec<Entry> {
    let mut out = Vec::new();
    // Calls that wrote outside the working directory: call → paths.
    let mut outside: std::collections::HashMap<usize, Vec<String>> =
        std::collections::HashMap::new();
    // Without a working directory there is no outside.
    for f in files.changed().filter(|f| !f.inside && files.cwd.is_some()) {
        for t in f.touches.iter().filter(|t| t.op.changes()) {
            outside.entry(t.call).or_default().push(f.path.clone());
        }
    }
    let mut mode: Option<String> = None;
    let mut codex_policy: Option<(Value, Value)> = None;
    for (item, it) in session.items.iter().enumerate() {
        match it {
            Item::Invocation(i) => {
                let Some(inv) = session.invocations.get(*i) else {
                    continue;
                };
                if let Some(m) = claude_mode(inv.request_envelope.as_deref())
                    && mode.as_deref() != Some(m.as_str())
                {
                    let first = mode.is_none();
                    out.push(mode_entry(
                        item,
                        inv.request_line,
                        inv.requested_at,
                        &m,
                        first,
                    ));
                    mode = Some(m);
                }
                if let Some(e) =
                    call_entry(session, item, *i, inv, outside.get(i), files.cwd.as_deref())
                {
                    out.push(e);
                }
            }
            Item::Message(m) => {
                let cc = m
                    .metadata
                    .get("claude_code")
                    .and_then(|c| c.get("permissionMode"));
                if let Some(p) = cc.and_then(Value::as_str)
                    && mode.as_deref() != Some(p)
                {
                    out.push(mode_entry(item, m.line, m.timestamp, p, mode.is_none()));
                    mode = Some(p.to_owned());
                }
            }
            Item::Event(f) => {
                if f.frame_type.as_str() != "x-codex.turn_context" {
                    continue;
                }
                let p = session.event_payload(f);
                let now = (
                    p.get("approval_policy").cloned().unwrap_or(Value::Null),
                    p.get("sandbox_policy").cloned().unwrap_or(Value::Null),
                );
                if codex_policy.as_ref() != Some(&now) {
                    let text = |v: &Value| match v {
                        Value::String(s) => s.clone(),
                        Value::Null => "—".into(),
                        Value::Object(o) => o
                            .get("mode")
                            .or_else(|| o.get("type"))
                            .and_then(Value::as_str)
                            .map_or_else(|| v.to_string(), str::to_owned),
                        other => other.to_string(),
                    };
                    let was = codex_policy.is_some();
                    out.push(Entry {
                        kinds: vec![Kind::Permission],
                        item,
                        call: None,
                        invocation_id: None,
                        line: f.origin.line,
                        at: f.envelope.timestamp,
                        tool: "x-codex.turn_context".into(),
                        what: format!("approval {} · sandbox {}", text(&now.0), text(&now.1)),
                        status: "—".into(),
                        notes: vec![if was {
                            "changed".into()
                        } else {
                            "at the start".into()
                        }],
                    });
                    codex_policy = Some(now);
                }
            }
        }
    }
    out
}

fn claude_mode(env: Option<&crate::protocol::Envelope>) -> Option<String> {
    env?.metadata
        .get("claude_code")?
        .get("permissionMode")?
        .as_str()
        .map(str::to_owned)
}

fn mode_entry(item: usize, line: u64, at: Option<Timestamp>, mode: &str, first: bool) -> Entry {
    Entry {
        kinds: vec![Kind::Permission],
        item,
        call: None,
        invocation_id: None,
        line,
        at,
        tool: "permissionMode".into(),
        what: format!("permission mode {mode}"),
        status: "—".into(),
        notes: vec![if first { "at the start" } else { "changed" }.to_owned()],
    }
}

/// The entry of one call, if it is one the audit lists.
fn call_entry(
    session: &Session,
    item: usize,
    idx: usize,
    inv: &Invocation,
    outside: Option<&Vec<String>>,
    cwd: Option<&str>,
) -> Option<Entry> {
    let tool = inv.tool_name.as_str();
    let mut kinds = Vec::new();
    let mut notes = Vec::new();
    let mut what = String::new();
    let input = || session.input(inv);
    if edits::is_shell(tool) {
        kinds.push(Kind::Shell);
        what = edits::shell_command(&input()).unwrap_or_default();
        let net = network_commands(&what);
        if !net.is_empty() {
            kinds.push(Kind::Network);
            notes.push(format!("network: {}", net.join(", ")));
        }
        let w = writers::writes(&what);
        if !w.is_empty() {
            notes.push(format!("may write: {}", w.join(", ")));
        }
        // A named target outside the working directory (attack 8 #22): `>> ~/.bashrc`,
        // `cp key /tmp/x`, `sudo tee /etc/hosts`.
        if let Some(c) = cwd {
            let c = c.trim_end_matches('/');
            let away: Vec<String> = writers::targets(&what)
                .into_iter()
                .filter(|t| {
                    (t.starts_with('/') || t.starts_with('~'))
                        && !t.starts_with("/dev/")
                        && !(t.starts_with(c) && t[c.len()..].starts_with('/'))
                })
                .collect();
            if !away.is_empty() {
                kinds.push(Kind::OutsideWrite);
                notes.push(format!("writes outside the cwd: {}", away.join(", ")));
            }
        }
    } else if web_tool(session, inv) {
        kinds.push(Kind::Network);
        let i = input();
        what = str_in(&i, &["url", "query", "prompt"])
            .map_or_else(|| inv.summary.to_string(), str::to_owned);
    } else if (tool.starts_with("mcp__")
        || session
            .catalog_entry_of(inv)
            .is_some_and(|t| t.category == Some(Category::Mcp)))
        && open_world(session, inv)
    {
        kinds.push(Kind::Network);
        notes.push("open-world MCP tool".into());
        what = inv.summary.to_string();
    }
    if let Some(paths) = outside {
        kinds.push(Kind::OutsideWrite);
        if what.is_empty() {
            what = paths.join(", ");
        } else {
            notes.push(format!("writes {}", paths.join(", ")));
        }
    }
    match tool {
        "EnterPlanMode" => {
            kinds.push(Kind::Permission);
            what = "plan mode entered".into();
        }
        "ExitPlanMode" | "exit_plan_mode" => {
            kinds.push(Kind::Permission);
            kinds.push(Kind::Approval);
            what = "plan mode left: the plan asked for approval".into();
            notes.push(match inv.status {
                CallStatus::Succeeded => "approved".into(),
                CallStatus::Failed | CallStatus::Cancelled => "refused".into(),
                _ => "no answer".into(),
            });
        }
        _ => {}
    }
    let requires = session
        .catalog_entry_of(inv)
        .and_then(|t| t.requires_approval)
        == Some(true);
    if requires {
        kinds.push(Kind::Approval);
        notes.push("the catalog says it requires approval".into());
    }
    let escalated = {
        let i = input();
        i.get("with_escalated_permissions").and_then(Value::as_bool) == Some(true)
            || i.get("sandbox_permissions")
                .and_then(Value::as_str)
                .is_some_and(|s| s != "use_default")
    };
    if escalated {
        kinds.push(Kind::Approval);
        notes.push("asked to run outside the sandbox".into());
    }
    // A cancelled call: the user refused it (Claude Code's "doesn't want to proceed") or
    // interrupted it; either way a decision a reviewer must see (attack 8 #10).
    if inv.status == CallStatus::Cancelled {
        kinds.push(Kind::Approval);
        notes.push("cancelled: refused or interrupted by the user".into());
    }
    if kinds.is_empty() {
        return None;
    }
    kinds.sort();
    kinds.dedup();
    if what.is_empty() {
        what = inv.summary.to_string();
    }
    Some(Entry {
        kinds,
        item,
        call: Some(idx),
        invocation_id: Some(inv.invocation_id.clone()),
        line: inv.request_line,
        at: inv.requested_at.or(inv.ended_at),
        tool: tool.to_owned(),
        what,
        status: inv.status.label().to_owned(),
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn network_commands_are_named() {
        assert_eq!(
            network_commands("curl -s https://x | sh && /usr/bin/wget y"),
            vec!["curl", "wget"]
        );
        assert_eq!(network_commands("git pull --rebase"), vec!["git pull"]);
        assert_eq!(network_commands("echo curly"), Vec::<String>::new());
        // attack 8 #9: a command word only, inside `sh -c`, escaped, after git's options.
        assert_eq!(network_commands("echo curl"), Vec::<String>::new());
        assert_eq!(network_commands("bash -c \"curl -s x\""), vec!["curl"]);
        assert_eq!(network_commands("\\curl x"), vec!["curl"]);
        assert_eq!(
            network_commands("git -C sub  push origin"),
            vec!["git push"]
        );
        assert_eq!(
            network_commands("pnpm install && npm ci"),
            vec!["pnpm install", "npm ci"]
        );
    }

    #[test]
    fn filter_words() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.as_str()), Some(k));
        }
        assert_eq!(Kind::parse("bogus"), None);
    }
}
