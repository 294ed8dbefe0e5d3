//! Findings: conformance and input problems, each with a level, a stable code, a message, the
//! frame's line and the SPEC section that the rule comes from.
//!
//! Who makes them: the reducer (`crate::session`), the checker (`crate::check`) and the importers
//! (pairing rules, SPEC 5). Who shows them: the feed marks, the problems panel, `rawpv check`.
//! Invariant: `code` strings are stable API (the JSON output of `check` is read by CI pipelines):
//! never rename one, only add.

use std::fmt::Write as _;

use serde::Serialize;

/// How bad a finding is. `check` exits 1 when any finding is at [`Level::Error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Info,
    Warning,
    Error,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

/// Stable finding codes. Each names the rule it enforces.
pub mod code {
    /// A line that is not a frame (SPEC 2).
    pub const MALFORMED_LINE: &str = "malformed-line";
    /// A frame `type` outside SPEC 3 / 3.6 (shown as a generic row; an info: the list of frame
    /// types is open, SPEC 2).
    pub const UNKNOWN_FRAME_TYPE: &str = "unknown-frame-type";
    /// A known frame type whose payload could not be read at all. Since the lenient parse layer
    /// (issue 17) every field is read on its own and this is not produced for RAWP lines; kept
    /// because codes are never removed.
    pub const INVALID_PAYLOAD: &str = "invalid-payload";
    /// A payload field of the wrong JSON type (SPEC 2 leniency, SPEC 3 tables): the frame is
    /// kept with the field absent. An error for a required field, a warning for an optional one.
    pub const WRONG_FIELD_TYPE: &str = "wrong-field-type";
    /// `tool.invoke.result` whose `invocation_id` was never requested (SPEC 3.7).
    pub const RESULT_WITHOUT_REQUEST: &str = "result-without-request";
    /// `tool.invoke.stream` whose `invocation_id` was never requested (SPEC 3.7).
    pub const STREAM_WITHOUT_REQUEST: &str = "stream-without-request";
    /// A second `tool.invoke.request` with an id already used (SPEC 3.7).
    pub const DUPLICATE_INVOCATION_ID: &str = "duplicate-invocation-id";
    /// A second `tool.invoke.result` for one invocation.
    pub const DUPLICATE_RESULT: &str = "duplicate-result";
    /// A record of an imported format that the adapter does not understand (kept raw).
    pub const UNRECOGNISED_RECORD: &str = "unrecognised-record";
    /// An imported `tool_use` with no `tool_result` in the input (SPEC 5 pairing).
    pub const TOOL_USE_WITHOUT_RESULT: &str = "tool-use-without-result";
    /// An imported `tool_result` whose `tool_use_id` no `tool_use` in the input has (SPEC 5).
    pub const TOOL_RESULT_WITHOUT_USE: &str = "tool-result-without-use";
    /// Text placed before the `tool_result` blocks of a user message (SPEC 5: results first).
    pub const TEXT_BEFORE_TOOL_RESULT: &str = "text-before-tool-result";
    /// A `tool_result` that does not directly follow the message holding its `tool_use` (SPEC 5).
    pub const TOOL_RESULT_NOT_NEXT: &str = "tool-result-not-next";
    /// A `tool_result` block inside an assistant message (SPEC 5, B06: the reply to a tool call
    /// is a user message).
    pub const TOOL_RESULT_IN_ASSISTANT: &str = "tool-result-in-assistant";
    /// A user message holding more than `tool_result` blocks while a server tool of the
    /// assistant turn before it has no result yet (SPEC 5, B14; the API answers 400).
    pub const TEXT_WITH_UNRESOLVED_SERVER_TOOL: &str = "text-with-unresolved-server-tool";
    /// A server tool's result sent in a user message, as a `*_tool_result` block or as a client
    /// `tool_result` for a server tool's id (SPEC 5, B16: server tools run inside the API and
    /// their results sit in the assistant message).
    pub const SERVER_TOOL_RESULT_IN_USER_MESSAGE: &str = "server-tool-result-in-user-message";
    /// A `tool_use` naming a member of a declared computer or browser toolset (`screenshot`)
    /// without `toolset_name` (SPEC 5: dispatch on both fields); the toolset is inferred when
    /// only one is declared.
    pub const TOOLSET_NAME_MISSING: &str = "toolset-name-missing";
    /// A toolset member's `tool_result` without the call's `toolset_name`, or with another
    /// (SPEC 5: "a member result that omits it is rejected").
    pub const TOOLSET_NAME_NOT_ECHOED: &str = "toolset-name-not-echoed";
    /// A toolset member's `tool_result` holding a block other than `text` and `image` (and, for
    /// the browser, one `browser_state`) (SPEC 5).
    pub const TOOLSET_RESULT_BLOCK_NOT_ALLOWED: &str = "toolset-result-block-not-allowed";
    /// A `tool_result` whose `content` is neither a string nor a list of `text`, `image`,
    /// `document` and `search_result` blocks (SPEC 5, B08).
    pub const INVALID_TOOL_RESULT_CONTENT: &str = "invalid-tool-result-content";
    /// An `is_error: true` `tool_result` with no content: the error has no message (SPEC 5, B17).
    pub const ERROR_RESULT_WITHOUT_MESSAGE: &str = "error-result-without-message";
    /// An assistant response with `stop_reason: "tool_use"` and no `tool_use` block (SPEC 5, B01).
    pub const STOP_REASON_WITHOUT_TOOL_USE: &str = "stop-reason-without-tool-use";
    /// An assistant response holding a `tool_use` block whose `stop_reason` is `end_turn` or
    /// `stop_sequence` (SPEC 5, B01: tool calls end the turn with `tool_use`).
    pub const TOOL_USE_WITHOUT_STOP_REASON: &str = "tool-use-without-stop-reason";
    /// Imported records repeating an earlier record's id (resumed sessions); the first is kept.
    pub const DUPLICATE_RECORD: &str = "duplicate-record";
    /// A Claude Code record with two or more branches (a rewind, a retried prompt; issue 16).
    pub const FORK: &str = "fork";
    /// An imported input the adapter could not read as a whole (e.g. a cassette it cannot parse).
    pub const UNREADABLE_INPUT: &str = "unreadable-input";
    /// A line that is not valid UTF-8 (SPEC 2: frames are UTF-8 JSON); the invalid bytes are read
    /// as U+FFFD and the rest of the line is kept.
    pub const INVALID_UTF8: &str = "invalid-utf8";
    /// A recorded API call answered with an HTTP error (400, 429, 529, …) or a stream `error`
    /// event; the finding is on the line of the request it answers (SPEC 5).
    pub const API_ERROR: &str = "api-error";
    /// A Claude Code Task/Agent call whose subagent's own records are not in the input (no
    /// subagent file beside the transcript, no inline or progress copies): its calls are not
    /// shown (issue 20).
    pub const SUBAGENT_MISSING: &str = "subagent-missing";
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub level: Level,
    /// Stable code from [`code`] (or the checker's own list).
    pub code: &'static str,
    /// Human-readable; never contains control characters.
    pub message: String,
    /// 1-based line of the frame or record in its source (0 when unknown).
    pub line: u64,
    /// The SPEC section the rule comes from, e.g. `"SPEC 3.7"`.
    pub spec: &'static str,
    /// The invocation the finding is about, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invocation_id: Option<String>,
    /// Index of the finding's session in `Session::sessions` (SPEC §6), set by
    /// `Session::push_finding` (the session of the frame being folded); `None` for what belongs
    /// to no session (a malformed line, an importer's finding about the input). Reports name
    /// the session's `session_id` when the input has more than one (`rawpv check`).
    #[serde(skip)]
    pub session: Option<u32>,
    /// The input the finding's line is in (issue 24: `rawpv A B …`; the index of its argument, 0
    /// with one input), set by `Session::push_finding`.
    #[serde(skip)]
    pub input: u16,
}

impl Finding {
    /// Builds a finding about no particular invocation.
    pub fn new(
        level: Level,
        code: &'static str,
        spec: &'static str,
        line: u64,
        message: impl Into<String>,
    ) -> Self {
        Self {
            level,
            code,
            message: sanitize(&message.into()),
            line,
            spec,
            invocation_id: None,
            session: None,
            input: 0,
        }
    }

    /// The finding, attributed to session `sid` (an index into `Session::sessions`).
    #[must_use]
    pub fn in_session(mut self, sid: u32) -> Self {
        self.session = Some(sid);
        self
    }

    /// Attaches the invocation the finding is about.
    #[must_use]
    pub fn for_invocation(mut self, id: impl Into<String>) -> Self {
        self.invocation_id = Some(id.into());
        self
    }
}

/// Replaces control characters so a message can never drive a terminal, and shows invisible or
/// reordering characters as `<U+XXXX>` so a message cannot hide or reverse text.
/// Untrusted text in double quotes as it is, for finding messages: `Finding::new` then
/// replaces its control characters, so a message shows `"\u{FFFD}]0;…"`, never Rust's Debug
/// escapes (attack 6: `check --format json` messages held `\u{1b}` and `\r`).
#[derive(Debug, Clone, Copy)]
pub struct Quoted<'a>(pub &'a str);

impl std::fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "\"{}\"", self.0)
    }
}

fn sanitize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() && c != '\n' {
            out.push('\u{FFFD}');
        } else if is_invisible_format(c) {
            let _ = write!(out, "<U+{:04X}>", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether `c` is an invisible or reordering format character (bidi embeddings, overrides,
/// isolates and marks, zero-width spaces, word joiner, BOM, soft hyphen) that text shown to a
/// user must make visible (issue 9). ZWJ (U+200D) is not included: emoji sequences use it.
pub fn is_invisible_format(c: char) -> bool {
    // Below the soft hyphen (the lowest listed) nothing is: most text is ASCII, and this is
    // asked of every character shown (the export cleans every string with it).
    if c < '\u{AD}' {
        return false;
    }
    matches!(
        c,
        '\u{200B}' | '\u{200C}' | '\u{200E}' | '\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{061C}'
            | '\u{FEFF}'
            | '\u{00AD}'
            | '\u{180E}'
            // Line and paragraph separators (they break a row's layout), interlinear
            // annotations, Hangul fillers and the Braille blank (they draw nothing), tag
            // characters and variation selectors 17-256 (invisible text smuggled into a
            // command; second attack of issue 14). VS1-16 stay: emoji use them.
            | '\u{2028}'
            | '\u{2029}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{115F}'
            | '\u{1160}'
            | '\u{3164}'
            | '\u{FFA0}'
            | '\u{2800}'
            | '\u{E0000}'..='\u{E007F}'
            | '\u{E0100}'..='\u{E01EF}'
            // Third attack: VS1-14 (16 selectors carry 4 bits each after ordinary letters; emoji
            // use VS15/16, which stay), and other characters that draw nothing: combining
            // grapheme joiner, Mongolian and Khmer fillers, deprecated format characters,
            // musical and Egyptian format controls, shorthand format controls, prepended
            // concatenation marks.
            | '\u{FE00}'..='\u{FE0D}'
            | '\u{034F}'
            | '\u{180B}'..='\u{180D}'
            | '\u{180F}'
            | '\u{17B4}'
            | '\u{17B5}'
            | '\u{206A}'..='\u{206F}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{13430}'..='\u{13440}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{0600}'..='\u{0605}'
            | '\u{06DD}'
            | '\u{070F}'
            | '\u{08E2}'
            | '\u{110BD}'
            | '\u{110CD}'
    )
}
