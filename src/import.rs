//! Input formats → RAWP frames: format detection and the decoders.
//!
//! Who calls it: the sources (`crate::source`) for files, stdin and network streams, and the
//! one-shot commands (`print`, `convert`, `check`, `stats`) through [`load_path`].
//!
//! A [`Decoder`] is fed one line (or one message) at a time and appends [`Decoded`] items; it may
//! keep state across lines (the Claude Code adapter pairs `tool_use` with `tool_result`) and emit
//! the rest in [`Decoder::finish`]. Invariants: decoders never panic and never drop input silently:
//! what they cannot map becomes a `Decoded::Malformed` or a `Decoded::Finding`, and the record is
//! kept visible as a generic frame where it has content.

pub mod anthropic;
pub mod anthropic_stream;
pub mod cc_files;
pub mod cc_map;
pub mod cc_output;
pub mod cc_records;
pub mod claude_code;
pub mod codex;
pub mod codex_emit;
pub mod codex_exec;
pub mod codex_patch;
pub mod gemini;
pub mod image_meta;
pub mod patch;
pub mod rawp;
pub mod stream_json;

use std::borrow::Cow;
use std::path::Path;

use crate::finding::{Finding, Level, code};
use crate::protocol::{Frame, ParseError};

/// The most tools a catalog derived by an importer lists per session (Claude Code, Codex,
/// Gemini). SPEC 3.5 makes every publish the whole catalog, so a derived catalog published again
/// at each new tool costs the square of its size in frames and memory (attack 6 #1: 5000 tool
/// names in a 2 MB file took 5.8 GB); past this many, later tools are left out with one warning
/// ([`derived_catalog_full`]) and their requests get check's `tool-not-in-catalog`.
pub const MAX_DERIVED_TOOLS: usize = 256;

/// `v` at the object keys `path` in turn (`at(v, &["message", "content"])`): what
/// `Value::pointer("/message/content")` finds, without parsing a pointer string (which allocates
/// for every token: 10 % of a Claude Code `check` was `pointer`). Arrays are not indexed.
pub fn at<'a>(v: &'a serde_json::Value, path: &[&str]) -> Option<&'a serde_json::Value> {
    path.iter().try_fold(v, |v, k| v.get(*k))
}

/// The one warning an importer gives when its derived catalog is full: `name` is the first tool
/// left out, `line` the record that named it (SPEC 3.5).
pub fn derived_catalog_full(name: &str, line: u64) -> Finding {
    Finding::new(
        Level::Warning,
        code::UNRECOGNISED_RECORD,
        "SPEC 3.5",
        line,
        format!(
            "more than {MAX_DERIVED_TOOLS} tool names in this session: the derived catalog lists the first {MAX_DERIVED_TOOLS}, so {name} and later new tools are not in it"
        ),
    )
}

/// One output of a decoder.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    Frame(Box<Frame>),
    /// A line that could not be read at all (a `malformed-line` finding).
    Malformed(ParseError),
    /// A problem the importer found (pairing rules, unrecognised records, …).
    Finding(Finding),
}

impl Decoded {
    pub fn frame(f: Frame) -> Self {
        Self::Frame(Box::new(f))
    }
}

/// A recognised input format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// RAWP NDJSON: one frame per line (SPEC 2).
    RawpNdjson,
    /// A JSON array of RAWP frames (SPEC 2).
    RawpJsonArray,
    /// Claude Code session transcript JSONL (`~/.claude/projects/*/*.jsonl`).
    ClaudeCode,
    /// Claude Code headless `--output-format stream-json` records.
    ClaudeStreamJson,
    /// Anthropic Messages API conversations (request/response bodies, message lists, cassettes,
    /// vercel/ai `{steps, final}` recordings).
    Anthropic,
    /// A plain SSE capture of a Messages API stream (`event:` / `data:` lines), read live.
    AnthropicSse,
    /// Messages API stream events, one JSON object per line (vercel/ai `*.chunks.txt`), live.
    AnthropicEvents,
    /// Codex CLI rollout JSONL (`~/.codex/sessions/…/rollout-*.jsonl`), every version.
    CodexRollout,
    /// `codex exec --json` stdout (`thread.started`, `item.*`, `turn.completed`), live.
    CodexExec,
    /// A Gemini CLI saved session (`~/.gemini/tmp/<hash>/chats/session-*.json`): one document.
    GeminiSession,
    /// `gemini -o stream-json` stdout (`init`, `message`, `tool_use`, `tool_result`, `result`).
    GeminiStreamJson,
    /// A unified diff or patch (`git diff`, `git show`, `diff -u`): one `diff` call per file
    /// ([`patch`]).
    UnifiedDiff,
    /// A raw terminal capture (text with escape sequences): one `terminal` call ([`patch`]).
    TerminalCapture,
    /// Not a session of any format here (binary data, plain text): [`patch::describe`] says
    /// what it looks like.
    NotSession,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RawpNdjson => "rawp-ndjson",
            Self::RawpJsonArray => "rawp-json-array",
            Self::ClaudeCode => "claude-code",
            Self::ClaudeStreamJson => "claude-stream-json",
            Self::Anthropic => "anthropic",
            Self::AnthropicSse => "anthropic-sse",
            Self::AnthropicEvents => "anthropic-events",
            Self::CodexRollout => "codex",
            Self::CodexExec => "codex-exec-json",
            Self::GeminiSession => "gemini",
            Self::GeminiStreamJson => "gemini-stream-json",
            Self::UnifiedDiff => "unified-diff",
            Self::TerminalCapture => "terminal-capture",
            Self::NotSession => "not-a-session",
        }
    }
}

/// Guesses the format from the first bytes of the input (up to 64 KiB is enough; a cut last line
/// is ignored). Defaults to RAWP NDJSON.
///
/// * a unified diff (`diff --git`, `--- `/`+++ `/`@@ `, `git show`'s commit header first) → a
///   patch; text with escape sequences whose first line is not JSON → a terminal capture; binary
///   data or text with no line starting like JSON → not a session (`patch::describe`);
/// * `[` … → a JSON array: of RAWP frames, or Anthropic messages / `[{request, response}]` pairs;
/// * YAML (`interactions:`, `---`) → an Anthropic VCR cassette;
/// * JSON lines → by the first lines that decide: Codex rollouts (`{timestamp, type:
///   session_meta|…, payload}`, or the pre-envelope bare header / `record_type` markers),
///   `codex exec --json` (`thread.started`, `item.*`), Gemini stream-json (`init`, `tool_use`,
///   `tool_result`, `result` with `stats`) — before the RAWP rule, which their `payload` or
///   dotted types would match —, RAWP frames (`payload`, dotted `type`),
///   Claude Code transcript records (`sessionId`/`uuid`/`leafUuid`/`messageId` with a transcript
///   `type`), stream-json records (`system/init`, `result`, `session_id`), Anthropic messages;
/// * one multi-line JSON object → a Gemini saved session (`messages` with `sessionId` or
///   `projectHash`, or Gemini-typed messages without `role`), else Anthropic (request or response body, vercel `{steps}`);
/// * `event:` / `data:` / `:` lines whose data is a Messages API stream event → an SSE capture;
/// * JSON lines that are Messages API stream events (`message_start`, …) → an event stream.
pub fn detect(head: &[u8]) -> Format {
    // Binary data first: a line of it may well start like JSON or a diff (attack 7 #16).
    if patch::is_binary(head) {
        return Format::NotSession;
    }
    let text = String::from_utf8_lossy(head);
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if is_sse(trimmed) {
        return Format::AnthropicSse;
    }
    if patch::looks_like_patch(trimmed) {
        return Format::UnifiedDiff;
    }
    if patch::looks_like_terminal(head) {
        return Format::TerminalCapture;
    }
    if trimmed.starts_with('[') {
        return detect_array(trimmed);
    }
    if trimmed.starts_with("interactions:") || trimmed.starts_with("---") {
        return Format::Anthropic;
    }
    if patch::is_not_a_session(head) {
        return Format::NotSession;
    }
    let mut undecided_json = 0;
    for line in trimmed.lines().take(50) {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        match serde_json::from_str::<serde_json::Value>(line) {
            Ok(v) => {
                if let Some(f) = classify_record(&v) {
                    return f;
                }
                undecided_json += 1;
            }
            Err(_) if undecided_json == 0 && trimmed.starts_with('{') => {
                // A pretty-printed single document (or a first line longer than the head).
                return detect_document(trimmed);
            }
            Err(_) => {}
        }
    }
    Format::RawpNdjson
}

/// Whether `text` starts as an SSE capture of a Messages API stream: its first line is an SSE
/// field (`event:`, `data:`, `:`, `id:`, `retry:`) and a `data:` line in the head holds a
/// stream event.
fn is_sse(text: &str) -> bool {
    let first = text.lines().next().unwrap_or("");
    let field = ["event:", "data:", ":", "id:", "retry:"]
        .iter()
        .any(|p| first.starts_with(p));
    field
        && text
            .lines()
            .take(200)
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<serde_json::Value>(d.trim()).ok())
            .any(|v| anthropic_stream::is_stream_event(&v))
}

/// Classifies one JSON line; `None` when it does not decide.
fn classify_record(v: &serde_json::Value) -> Option<Format> {
    if anthropic_stream::is_stream_event(v) {
        return Some(Format::AnthropicEvents);
    }
    let obj = v.as_object()?;
    let ty = obj.get("type").and_then(serde_json::Value::as_str);
    if let Some(f) = classify_agent_record(obj, ty) {
        return Some(f);
    }
    if obj.contains_key("payload") || ty.is_some_and(|t| t.contains('.')) {
        return Some(Format::RawpNdjson);
    }
    let has = |k: &str| obj.contains_key(k);
    match ty {
        Some("system")
            if has("session_id")
                || obj.get("subtype").and_then(|s| s.as_str()) == Some("init")
                    && !has("sessionId") =>
        {
            Some(Format::ClaudeStreamJson)
        }
        Some("result") if has("session_id") || has("subtype") => Some(Format::ClaudeStreamJson),
        Some("assistant" | "user" | "stream_event") if has("session_id") && !has("sessionId") => {
            Some(Format::ClaudeStreamJson)
        }
        Some(
            "user"
            | "assistant"
            | "summary"
            | "system"
            | "progress"
            | "queue-operation"
            | "file-history-snapshot",
        ) if has("sessionId") || has("uuid") || has("leafUuid") || has("messageId") => {
            Some(Format::ClaudeCode)
        }
        Some("message") if has("content") => Some(Format::Anthropic),
        _ if has("role") && has("content") => Some(Format::Anthropic),
        _ if has("messages") || (has("request") && has("response")) => Some(Format::Anthropic),
        _ if obj
            .get("steps")
            .and_then(|s| s.as_array())
            .is_some_and(|s| {
                s.iter()
                    .all(|x| x.get("body").is_some() || x.get("response").is_some())
            }) =>
        {
            Some(Format::Anthropic)
        }
        _ => None,
    }
}

/// Codex CLI and Gemini CLI records (checked before the RAWP rule: a rollout line has a
/// `payload`, `codex exec --json` types are dotted): AGENT-FORMATS.md §1–4.
fn classify_agent_record(
    obj: &serde_json::Map<String, serde_json::Value>,
    ty: Option<&str>,
) -> Option<Format> {
    let has = |k: &str| obj.contains_key(k);
    match ty {
        Some(t)
            if codex::ENVELOPE_TYPES.contains(&t)
                && obj.get("payload").is_some_and(serde_json::Value::is_object) =>
        {
            Some(Format::CodexRollout)
        }
        Some("thread.started") if has("thread_id") => Some(Format::CodexExec),
        Some("item.started" | "item.updated" | "item.completed") if has("item") => {
            Some(Format::CodexExec)
        }
        Some("turn.completed" | "turn.failed") if !has("payload") => Some(Format::CodexExec),
        Some("turn.started") if obj.len() == 1 => Some(Format::CodexExec),
        Some("init") if has("session_id") && !has("subtype") => Some(Format::GeminiStreamJson),
        Some("tool_use") if has("tool_id") && has("tool_name") => Some(Format::GeminiStreamJson),
        Some("tool_result") if has("tool_id") => Some(Format::GeminiStreamJson),
        Some("result") if has("stats") && !has("subtype") => Some(Format::GeminiStreamJson),
        // The pre-envelope rollout: a bare header, then `record_type` markers.
        None if has("id") && has("timestamp") && (has("instructions") || has("git")) => {
            Some(Format::CodexRollout)
        }
        None if obj.get("record_type").and_then(serde_json::Value::as_str) == Some("state") => {
            Some(Format::CodexRollout)
        }
        None if has("messages") && is_gemini_session(obj) => Some(Format::GeminiSession),
        _ => None,
    }
}

/// Whether a document with `messages` (and no `type`) is a Gemini saved session: it has a
/// `sessionId` or `projectHash` (an Anthropic request body has neither), or its first message
/// has a Gemini `type` and no `role` (attack 6 #7: a session without `sessionId` was read as an
/// Anthropic conversation).
fn is_gemini_session(obj: &serde_json::Map<String, serde_json::Value>) -> bool {
    if obj.contains_key("sessionId") || obj.contains_key("projectHash") {
        return true;
    }
    let first = obj
        .get("messages")
        .and_then(serde_json::Value::as_array)
        .and_then(|m| m.first());
    first.is_some_and(|m| {
        m.get("role").is_none()
            && matches!(
                m.get("type").and_then(serde_json::Value::as_str),
                Some("user" | "gemini" | "info" | "warning" | "error")
            )
    })
}

/// A JSON array: RAWP frames unless its first element looks like an Anthropic message or
/// a recorded `{request, response}` pair.
fn detect_array(text: &str) -> Format {
    let first = serde_json::from_str::<Vec<serde_json::Value>>(text)
        .ok()
        .and_then(|a| a.into_iter().next());
    if let Some(v) = first {
        match v.as_object() {
            Some(o) if o.contains_key("payload") => Format::RawpJsonArray,
            Some(o)
                if (o.contains_key("role") && o.contains_key("content"))
                    || (o.contains_key("request") && o.contains_key("response")) =>
            {
                Format::Anthropic
            }
            _ => Format::RawpJsonArray,
        }
    } else {
        // Cut head: look at the text.
        let head = prefix(text, 4096);
        if head.contains("\"payload\"") {
            Format::RawpJsonArray
        } else if head.contains("\"role\"") || head.contains("\"request\"") {
            Format::Anthropic
        } else {
            Format::RawpJsonArray
        }
    }
}

/// At most `max` bytes of `s`, cut at a character boundary.
fn prefix(s: &str, max: usize) -> &str {
    let mut n = max.min(s.len());
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    &s[..n]
}

/// A multi-line JSON document.
fn detect_document(text: &str) -> Format {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
        return classify_record(&v).unwrap_or(Format::RawpNdjson);
    }
    // Not one JSON value within the head: a first line longer than the head (a transcript
    // record holding a pasted image, say) or a cut document. Look for telling keys, transcript
    // ones first (their record fields come before the message).
    let head = prefix(text, 8192);
    if head.contains("\"projectHash\"")
        && (head.contains("\"sessionId\"") || head.contains("\"messages\""))
    {
        Format::GeminiSession
    } else if head.starts_with("{\"timestamp\":") && head.contains("\"type\":\"session_meta\"") {
        // A Codex rollout whose header (the whole system prompt, 0.125) is longer than the head.
        Format::CodexRollout
    } else if head.contains("\"parentUuid\"") || head.contains("\"sessionId\"") {
        Format::ClaudeCode
    } else if head.contains("\"parent_tool_use_id\"")
        || (head.contains("\"session_id\"") && head.contains("\"subtype\""))
    {
        Format::ClaudeStreamJson
    } else if head.contains("\"payload\"") {
        Format::RawpNdjson
    } else if ["\"messages\"", "\"stop_reason\"", "\"role\"", "\"steps\""]
        .iter()
        .any(|k| head.contains(k))
    {
        Format::Anthropic
    } else {
        Format::RawpNdjson
    }
}

/// Turns lines of one format into frames.
pub trait Decoder: Send {
    /// Feeds one line (without its newline). `line` is 1-based.
    fn line(&mut self, line: u64, text: &str, out: &mut Vec<Decoded>);
    /// [`Decoder::line`] for a line of a saved file at byte `span` (`\r` included): decoders
    /// whose frames can be read back from their line (Claude Code) put it in `Origin::span`.
    fn line_span(
        &mut self,
        line: u64,
        span: crate::protocol::ByteSpan,
        text: &str,
        out: &mut Vec<Decoded>,
    ) {
        let _ = span;
        self.line(line, text, out);
    }
    /// The input ended; emit whatever is pending.
    fn finish(&mut self, out: &mut Vec<Decoded>);
    /// A copy of this decoder's state, to see what [`Decoder::finish`] would emit now without
    /// ending the input (the library's append path, `crate::library::index`): `None` (the
    /// default) when the decoder cannot be copied, and then its files are read whole each time.
    fn fork(&self) -> Option<Box<dyn Decoder>> {
        None
    }
    /// A live input has nothing more for now (a followed file at its end): emit what waits for
    /// later lines that may never come (Claude Code's records waiting for a parent), so the
    /// screen shows everything written. Later lines still decode as usual.
    fn caught_up(&mut self, out: &mut Vec<Decoded>) {
        let _ = out;
    }
}

/// How a session backed by a file of `format` reads a deferred input or output again
/// (`Session::reparse`): Claude Code and Codex rollouts (their frames carry record spans);
/// `None` for RAWP (the line is a frame) and the formats whose frames carry no span.
pub fn reparse_for(format: Format) -> Option<crate::session::Reparse> {
    match format {
        Format::ClaudeCode => Some(crate::session::Reparse(
            claude_code::reparse,
            Some(claude_code::reparse_event),
        )),
        Format::CodexRollout => Some(crate::session::Reparse(codex::reparse, None)),
        _ => None,
    }
}

/// A decoder for `format`.
pub fn decoder_for(format: Format) -> Box<dyn Decoder> {
    match format {
        Format::RawpNdjson | Format::RawpJsonArray => Box::new(rawp::RawpDecoder),
        // The one decoder, streaming; `load_path` and saved files also give it the path (for
        // subagent files).
        Format::ClaudeCode => Box::new(claude_code::ClaudeCodeDecoder::new()),
        Format::ClaudeStreamJson => Box::new(stream_json::StreamJsonDecoder::new()),
        Format::Anthropic => Box::new(anthropic::AnthropicDecoder::new()),
        Format::AnthropicSse => Box::new(anthropic_stream::StreamDecoder::new(
            anthropic_stream::Framing::Sse,
        )),
        Format::AnthropicEvents => Box::new(anthropic_stream::StreamDecoder::new(
            anthropic_stream::Framing::Lines,
        )),
        Format::CodexRollout => Box::new(codex::CodexDecoder::new()),
        Format::CodexExec => Box::new(codex_exec::CodexExecDecoder::new()),
        Format::GeminiSession => Box::new(gemini::GeminiSessionDecoder::new()),
        Format::GeminiStreamJson => Box::new(gemini::GeminiStreamDecoder::new()),
        Format::UnifiedDiff => Box::new(patch::PatchDecoder::new()),
        Format::TerminalCapture => Box::new(patch::TerminalDecoder::new()),
        Format::NotSession => Box::new(patch::NotSessionDecoder::default()),
    }
}

/// A whole input, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub format: Format,
    pub items: Vec<Decoded>,
}

/// Line `line`'s bytes as text. Valid UTF-8 is borrowed; otherwise the invalid bytes become
/// U+FFFD and an `invalid-utf8` finding for the line is pushed to `out`, so the replacement is
/// never silent (the frame itself is still decoded).
pub fn line_text<'a>(raw: &'a [u8], line: u64, out: &mut Vec<Decoded>) -> Cow<'a, str> {
    match std::str::from_utf8(raw) {
        Ok(s) => Cow::Borrowed(s),
        Err(e) => {
            out.push(Decoded::Finding(Finding::new(
                Level::Warning,
                code::INVALID_UTF8,
                "SPEC 2",
                line,
                format!(
                    "not valid UTF-8 (first bad byte at byte {}); invalid bytes are shown as U+FFFD",
                    e.valid_up_to() + 1
                ),
            )));
            String::from_utf8_lossy(raw)
        }
    }
}

/// Line `line` without the UTF-8 byte order mark a Windows editor puts at the start of a file
/// (line 1 only): with it, the first record was "not valid JSON" and lost (attack 5).
pub fn without_bom(line: u64, raw: &[u8]) -> &[u8] {
    match raw.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) if line == 1 => rest,
        _ => raw,
    }
}

/// Decodes a whole in-memory input. Invalid UTF-8 is replaced (U+FFFD) line by line.
pub fn load_bytes(bytes: &[u8]) -> Loaded {
    let format = detect(&bytes[..bytes.len().min(64 * 1024)]);
    let mut items = Vec::new();
    if format == Format::RawpJsonArray {
        rawp::decode_array(bytes, &mut items);
        return Loaded { format, items };
    }
    let mut dec = decoder_for(format);
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let raw = without_bom(i as u64 + 1, raw.strip_suffix(b"\r").unwrap_or(raw));
        let text = line_text(raw, i as u64 + 1, &mut items);
        dec.line(i as u64 + 1, &text, &mut items);
    }
    dec.finish(&mut items);
    Loaded { format, items }
}

/// The format of the file at `path`, from its first 64 KiB ([`detect`]); `None` when it cannot
/// be read.
pub fn detect_path(path: &Path) -> Option<Format> {
    read_head(path).map(|h| detect(&h))
}

fn read_head(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(64 * 1024);
    std::fs::File::open(path)
        .ok()?
        .take(64 * 1024)
        .read_to_end(&mut head)
        .ok()?;
    Some(head)
}

/// Why the file at `path` cannot be read as a session, when it is certainly not one (binary
/// data, plain text: [`Format::NotSession`]): what it looks like and how to read it
/// ([`patch::describe`], naming it `shown`: the path as the caller shows it, made visible).
/// `None` when it may be one, or cannot be read (the caller reports that).
pub fn not_a_session(path: &Path, shown: &str) -> Option<String> {
    let head = read_head(path)?;
    (detect(&head) == Format::NotSession).then(|| patch::describe(shown, &head))
}

/// Reads and decodes a file. A Claude Code transcript also brings in its subagent files
/// (`agent-*.jsonl` beside it with the same `sessionId`, `<session>/subagents/agent-*.jsonl`).
///
/// # Errors
/// The I/O error of reading the file.
pub fn load_path(path: &Path) -> std::io::Result<Loaded> {
    let bytes = std::fs::read(path)?;
    let format = detect(&bytes[..bytes.len().min(64 * 1024)]);
    if format == Format::ClaudeCode {
        let items = claude_code::load_session(path, &bytes);
        return Ok(Loaded { format, items });
    }
    Ok(load_bytes(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcript_whose_first_line_is_longer_than_the_head() {
        let mut line = String::from(
            r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"type":"image","source":{"data":""#,
        );
        line.push_str(&"A".repeat(70 * 1024));
        let head = &line.as_bytes()[..64 * 1024];
        assert_eq!(detect(head), Format::ClaudeCode);
    }

    /// A Codex header or a Gemini saved session longer than the detection head.
    #[test]
    fn agent_sessions_longer_than_the_head() {
        let mut codex = String::from(
            r#"{"timestamp":"2026-04-02T10:00:00.000Z","type":"session_meta","payload":{"id":"x","base_instructions":{"text":""#,
        );
        codex.push_str(&"a".repeat(70 * 1024));
        assert_eq!(detect(&codex.as_bytes()[..64 * 1024]), Format::CodexRollout);
        let mut gemini = String::from(
            "{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"h\",\n  \"messages\": [\n    {\"type\": \"user\", \"content\": \"",
        );
        gemini.push_str(&"b".repeat(70 * 1024));
        assert_eq!(
            detect(&gemini.as_bytes()[..64 * 1024]),
            Format::GeminiSession
        );
    }

    #[test]
    fn records_decide_the_format() {
        let cases: &[(&str, Format)] = &[
            (
                r#"{"type":"summary","summary":"x","leafUuid":"u"}"#,
                Format::ClaudeCode,
            ),
            (
                r#"{"type":"queue-operation","operation":"dequeue","sessionId":"s"}"#,
                Format::ClaudeCode,
            ),
            (
                r#"{"type":"file-history-snapshot","messageId":"m","snapshot":{}}"#,
                Format::ClaudeCode,
            ),
            (
                r#"{"type":"system","subtype":"init","session_id":"s","tools":[]}"#,
                Format::ClaudeStreamJson,
            ),
            (
                r#"{"type":"assistant","message":{},"parent_tool_use_id":null,"session_id":"s"}"#,
                Format::ClaudeStreamJson,
            ),
            (r#"{"role":"user","content":"hi"}"#, Format::Anthropic),
            (
                r#"{"type":"agent.text.done","payload":{"text":"x"}}"#,
                Format::RawpNdjson,
            ),
            ("interactions:\n- request: {}\n", Format::Anthropic),
            (
                r#"{"timestamp":"2026-01-02T16:39:45.349Z","type":"session_meta","payload":{"id":"u"}}"#,
                Format::CodexRollout,
            ),
            (
                r#"{"id":"u","timestamp":"2025-05-20T09:00:00Z","instructions":null,"git":null}"#,
                Format::CodexRollout,
            ),
            (
                r#"{"type":"thread.started","thread_id":"t"}"#,
                Format::CodexExec,
            ),
            (
                r#"{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"x"}}"#,
                Format::CodexExec,
            ),
            (
                r#"{"type":"init","timestamp":"2025-12-26T12:48:29.765Z","session_id":"s","model":"m"}"#,
                Format::GeminiStreamJson,
            ),
            ("", Format::RawpNdjson),
        ];
        for (text, want) in cases {
            assert_eq!(detect(text.as_bytes()), *want, "{text}");
        }
    }
}
