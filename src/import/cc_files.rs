//! The files of a Claude Code session beside its transcript: which subagent files belong to it
//! (all three layouts' file forms) and reading them safely (SPEC 4; issue 14's planted files).
//!
//! Who calls it: `super::claude_code::ClaudeCodeDecoder` when a saved or followed transcript's
//! first record arrives (a followed one again at a Task result naming an unknown agent). Invariants: regular files only, never more than their size nor
//! [`MAX_SUBAGENT_BYTES`]; a missing directory is no error.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The subagent files of the session at `path`: `<dir>/<session>/subagents/agent-*.jsonl`
/// (2.1.x) and `<dir>/agent-*.jsonl` whose records carry this session's `sessionId` (2.0.x).
/// Regular files only; sorted by name; missing directories are not an error.
pub fn subagent_files(path: &Path, session_id: Option<&str>) -> Vec<PathBuf> {
    let mut found = Vec::new();
    // A bare file name's parent is "" (`read_dir("")` fails): that is the current directory,
    // where `rawpv stats <session>.jsonl` finds the 2.0.x `agent-*.jsonl` files (attack 5).
    let dir = match path.parent() {
        Some(d) if d.as_os_str().is_empty() => Path::new("."),
        Some(d) => d,
        None => return found,
    };
    // Regular files only (a symlink to one is fine): a planted `agent-x.jsonl` that is a FIFO
    // hung the loader, and one linked to /dev/zero grew it to 7.5 GB (second attack of issue
    // 14).
    let is_agent = |p: &Path| {
        p.extension().is_some_and(|x| x == "jsonl")
            && p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("agent-"))
            && std::fs::metadata(p).is_ok_and(|m| m.is_file())
    };
    if path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("agent-"))
    {
        return found;
    }
    if let Some(stem) = path.file_stem() {
        let sub = dir.join(stem).join("subagents");
        if let Ok(rd) = std::fs::read_dir(&sub) {
            found.extend(rd.flatten().map(|d| d.path()).filter(|p| is_agent(p)));
        }
    }
    if let Some(sid) = session_id
        && let Ok(rd) = std::fs::read_dir(dir)
    {
        for p in rd.flatten().map(|d| d.path()).filter(|p| is_agent(p)) {
            if first_session_id(&p).as_deref() == Some(sid) {
                found.push(p);
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Largest subagent file read (256 MiB; real ones are a few MB).
pub const MAX_SUBAGENT_BYTES: u64 = 256 * 1024 * 1024;

/// A subagent file's bytes, at most as many as its size says (and at most
/// [`MAX_SUBAGENT_BYTES`]): a `/proc` file is a "regular
/// file" of size 0 with gigabytes to read (`/proc/self/pagemap` behind a planted
/// `agent-*.jsonl` took 3.2 GB; second attack of issue 14). Reads nothing from such a file.
pub(super) fn read_at_most_its_size(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    if len > MAX_SUBAGENT_BYTES {
        // A planted 8 GB sparse file took 16.8 GB (third attack): bigger than any real one.
        return Err(std::io::Error::other(format!(
            "{} is {len} bytes, over the {MAX_SUBAGENT_BYTES}-byte subagent file cap",
            path.display()
        )));
    }
    let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0).min(1 << 30));
    f.take(len).read_to_end(&mut buf)?;
    Ok(buf)
}

/// The `sessionId` of the first record of a JSONL file that has one (reads at most 64 KiB):
/// a 2.0.x subagent file's session; also for the library's stamps
/// (`crate::library::index::Indexer::stamps_of`).
pub fn first_session_id(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut buf = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(64 * 1024)
        .read_to_end(&mut buf)
        .ok()?;
    session_id_of(&buf)
}

/// The first `sessionId` found in the complete lines of `bytes`.
pub fn session_id_of(bytes: &[u8]) -> Option<String> {
    bytes.split(|&b| b == b'\n').find_map(|l| {
        serde_json::from_slice::<Value>(l)
            .ok()?
            .get("sessionId")?
            .as_str()
            .map(str::to_owned)
    })
}

/// Reads `buf.len()` bytes of `f` at `offset` without moving a shared cursor (a subagent file's
/// record read again when it is placed).
#[cfg(unix)]
pub(super) fn read_exact_at(f: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, offset)
}

/// Reads `buf.len()` bytes of `f` at `offset` (a subagent file's record read again when it is
/// placed; the decoder is its only reader).
#[cfg(not(unix))]
pub(super) fn read_exact_at(
    mut f: &std::fs::File,
    buf: &mut [u8],
    offset: u64,
) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(buf)
}
