//! The RAWP frame model (SPEC 2–3, RAWP-DPS 1.0.1 section 5).
//!
//! Who uses it: every other module. `parse.rs` builds [`Frame`]s from JSON lines, the importers
//! build them from other formats, the [`crate::session`] reducer folds them, `convert` writes them
//! back out with [`Frame::to_json`].
//!
//! # Wire format
//!
//! A frame is one JSON object: `{"type": "...", "payload": {...}, "metadata": {...}}` plus the
//! optional envelope fields `id`/`frame_id`, `session_id`, `seq`/`sequence`, `timestamp`/`ts`
//! (SPEC 2, \[ours\]), accepted at the top level or inside `metadata`.
//!
//! * `tool.invoke.request` (SPEC 3.1): `invocation_id`, `tool_name`, `tool_version`?, `input`,
//!   `parallel_group_id`?
//! * `tool.invoke.stream` (SPEC 3.3): `invocation_id`, `tool_name`, `stream_type`, `chunk`,
//!   `sequence` (0-based)
//! * `tool.invoke.result` (SPEC 3.2): `invocation_id`, `tool_name`, `status`, `output`,
//!   `output_type`, `duration_ms`?, `truncated`?
//! * `tool.catalog.publish` (SPEC 3.5): `tools[]`, `diagnostics[]`?
//! * every other `type` (SPEC 3.6) is carried as a generic JSON payload.
//!
//! Invariants:
//! * Leniency: required fields are `Option` here so that a frame missing one still parses; the
//!   checker (`crate::check`) reports the absence. Unknown fields land in `extra` maps and are
//!   written back by [`Frame::to_json`]. Unknown enum values are kept as `Unknown(String)`.
//! * Text is always valid UTF-8 here: invalid bytes were replaced (U+FFFD) by the reader.
//! * No ratatui, no tokio.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// Declares a string enum with an `Unknown(String)` fallback that round-trips through serde.
macro_rules! wire_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $var:ident = $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vm])* $var,)+
            /// A value outside the spec's enum, kept verbatim (a checker finding, never an error).
            Unknown(String),
        }
        impl $name {
            /// Every value the spec defines, in spec order.
            pub const ALL: &'static [$name] = &[$($name::$var),+];
            /// The wire spelling.
            pub fn as_str(&self) -> &str {
                match self { $($name::$var => $s,)+ $name::Unknown(s) => s.as_str() }
            }
            /// Parses the wire spelling; anything else becomes `Unknown`.
            pub fn from_wire(s: &str) -> Self {
                match s { $($s => $name::$var,)+ other => $name::Unknown(other.to_owned()) }
            }
            /// Whether the value is one the spec defines.
            pub fn is_known(&self) -> bool { !matches!(self, $name::Unknown(_)) }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> { s.serialize_str(self.as_str()) }
        }
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Ok($name::from_wire(&s))
            }
        }
    };
}

wire_enum! {
    /// A frame's `type` (SPEC 3, 3.6). Unknown types are shown as generic rows, never dropped.
    FrameType {
        ToolInvokeRequest = "tool.invoke.request",
        ToolInvokeStream = "tool.invoke.stream",
        ToolInvokeResult = "tool.invoke.result",
        ToolCatalogPublish = "tool.catalog.publish",
        AgentTextDelta = "agent.text.delta",
        AgentTextDone = "agent.text.done",
        AgentThinkingDelta = "agent.thinking.delta",
        AgentThinkingDone = "agent.thinking.done",
        AgentInteractionRequest = "agent.interaction.request",
        AgentError = "agent.error",
        AgentFileTransfer = "agent.file.transfer",
        AgentStateChanged = "agent.state.changed",
        SessionTurnEnd = "session.turn.end",
        SessionCompacted = "session.compacted",
        SessionUsage = "session.usage",
        SessionError = "session.error",
        ControlPromptRequest = "control.prompt.request",
        ControlSessionCompact = "control.session.compact",
        ControlModeSwitch = "control.mode.switch",
    }
}

wire_enum! {
    /// `tool.invoke.result` `status` (SPEC 3.2).
    ResultStatus { Success = "success", Error = "error", Timeout = "timeout", Cancelled = "cancelled" }
}

wire_enum! {
    /// `tool.invoke.stream` `stream_type` (SPEC 3.3).
    StreamType { Stdout = "stdout", Stderr = "stderr", Progress = "progress" }
}

wire_enum! {
    /// `output_type`: the rendering hint of a result (SPEC 3.4, RAWP-DPS 5.3.3).
    OutputType {
        Text = "text",
        Structured = "structured",
        FileContent = "file_content",
        FileList = "file_list",
        Diff = "diff",
        WebContent = "web_content",
        Empty = "empty",
        BinaryRef = "binary_ref",
        AgentResult = "agent_result",
    }
}

wire_enum! {
    /// A catalog tool's `category` (SPEC 3.5).
    Category {
        Filesystem = "filesystem",
        Shell = "shell",
        Search = "search",
        Web = "web",
        Notebook = "notebook",
        TaskManagement = "task_management",
        Agent = "agent",
        Planning = "planning",
        Mcp = "mcp",
        Custom = "custom",
    }
}

wire_enum! {
    /// A catalog tool's `status` (SPEC 3.5); absent means `available`.
    ToolStatus { Available = "available", Unavailable = "unavailable", Degraded = "degraded" }
}

wire_enum! {
    /// A catalog diagnostic's `severity` (SPEC 3.5), ordered from least to most severe.
    Severity { Info = "info", Warning = "warning", Error = "error", Fatal = "fatal" }
}

/// A timestamp in milliseconds since the Unix epoch (UTC). Parsed from ISO 8601 / RFC 3339
/// strings or integer epoch milliseconds (SPEC 2, \[ours\]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// Parses a JSON value: an RFC 3339 string, or a number of epoch milliseconds.
    /// Returns `None` for anything else (the caller keeps the raw value).
    pub fn from_json(v: &Value) -> Option<Self> {
        match v {
            Value::Number(n) => n
                .as_i64()
                .or_else(|| n.as_f64().map(|f| f as i64))
                .map(Self),
            Value::String(s) => Self::parse_str(s),
            _ => None,
        }
    }

    /// Parses an RFC 3339 string such as `2025-06-20T10:00:00.123Z`.
    pub fn parse_str(s: &str) -> Option<Self> {
        let s = s.trim();
        if let Some(t) = Self::parse_utc(s) {
            return Some(t);
        }
        chrono::DateTime::parse_from_rfc3339(s)
            .ok()
            .map(|d| Self(d.timestamp_millis()))
    }

    /// The common case of [`Timestamp::parse_str`] without chrono (one per frame, so it counts):
    /// exactly `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, years 1970–9999, a valid date and time (no leap
    /// second). `None` for anything else, which chrono then decides; where both read a string
    /// they agree (tested against chrono).
    fn parse_utc(s: &str) -> Option<Self> {
        let b = s.as_bytes();
        if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
            return None;
        }
        if b[16] != b':' || *b.last()? != b'Z' {
            return None;
        }
        let num = |r: std::ops::Range<usize>| {
            b[r].iter().try_fold(0i64, |n, &c| {
                c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
            })
        };
        let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (hour, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
        let millis = match &b[19..b.len() - 1] {
            [] => 0,
            [b'.', frac @ ..] if (1..=9).contains(&frac.len()) => {
                if !frac.iter().all(u8::is_ascii_digit) {
                    return None;
                }
                frac.iter()
                    .chain(std::iter::repeat(&b'0'))
                    .take(3)
                    .fold(0i64, |n, &c| n * 10 + i64::from(c - b'0'))
            }
            _ => return None,
        };
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        let month_days = match month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return None,
        };
        if !(1970..=9999).contains(&year) || !(1..=month_days).contains(&day) {
            return None;
        }
        if hour > 23 || min > 59 || sec > 59 {
            return None;
        }
        // Days from 1970-01-01 (Howard Hinnant's `days_from_civil`).
        let y = if month <= 2 { year - 1 } else { year };
        let era = y / 400;
        let yoe = y - era * 400;
        let mp = (month + 9) % 12;
        let doy = (153 * mp + 2) / 5 + day - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = era * 146_097 + doe - 719_468;
        Some(Self(
            ((days * 24 + hour) * 60 + min) * 60_000 + sec * 1000 + millis,
        ))
    }

    /// RFC 3339 with milliseconds, UTC (`2025-06-20T10:00:00.123Z`).
    pub fn to_rfc3339(self) -> String {
        chrono::DateTime::from_timestamp_millis(self.0).map_or_else(
            || self.0.to_string(),
            |d| d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        )
    }

    /// `HH:MM:SS` in UTC, for feed rows.
    pub fn clock(self) -> String {
        chrono::DateTime::from_timestamp_millis(self.0).map_or_else(
            || "--:--:--".to_owned(),
            |d| d.format("%H:%M:%S").to_string(),
        )
    }
}

/// One hop of `metadata.delegation_chain`: which agent, spawned by which invocation (SPEC 2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delegation {
    #[serde(default)]
    pub agent_id: String,
    #[serde(default)]
    pub invocation_id: String,
}

/// Where a frame came from, for findings and "jump to frame".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Origin {
    /// 1-based line number in the source file or stream (0 when unknown).
    pub line: u64,
    /// Where the frame's line is in its file, in bytes; set only for RAWP NDJSON files read by
    /// `crate::source::file` (one line, one frame), so the frame can be read again on demand.
    pub span: Option<ByteSpan>,
    /// The `tool.invoke.result` output was validated but not built (the file reader does this
    /// for results the session defers, see `crate::protocol::parse::ParseOptions`): the body's
    /// `output` then holds [`OutputShape::stand_in`], which has the real output's shape for the
    /// checks, and the session reads the real output back from `span`.
    pub output_skipped: bool,
}

impl Origin {
    /// Line `line` (1-based) of a source with no byte spans and nothing skipped.
    pub fn at(line: u64) -> Self {
        Self {
            line,
            ..Self::default()
        }
    }
}

/// What the SPEC 3.4 rules and the checker read of a result's `output`: its JSON kind, whether it
/// is empty (`null`, `""`, `[]`, `{}`), and for an array whether every element is a string
/// (`crate::protocol::rules::category_default`, `check`'s empty-output leniency).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputShape {
    Null,
    Bool,
    Number,
    String { empty: bool },
    Array { empty: bool, all_strings: bool },
    Object { empty: bool },
}

impl OutputShape {
    /// The shape of `v`.
    pub fn of(v: &Value) -> Self {
        match v {
            Value::Null => Self::Null,
            Value::Bool(_) => Self::Bool,
            Value::Number(_) => Self::Number,
            Value::String(s) => Self::String {
                empty: s.is_empty(),
            },
            Value::Array(a) => Self::Array {
                empty: a.is_empty(),
                all_strings: a.iter().all(Value::is_string),
            },
            Value::Object(o) => Self::Object {
                empty: o.is_empty(),
            },
        }
    }

    /// A small value of this shape (`OutputShape::of(&s.stand_in()) == s`), kept in place of an
    /// output that was not built. Its strings say so, should one ever be shown.
    pub fn stand_in(self) -> Value {
        const NOT_LOADED: &str = "(output not loaded)";
        match self {
            Self::Null => Value::Null,
            Self::Bool => Value::Bool(false),
            Self::Number => Value::from(0),
            Self::String { empty: true } => Value::String(String::new()),
            Self::String { empty: false } => Value::String(NOT_LOADED.into()),
            Self::Array { empty: true, .. } => Value::Array(Vec::new()),
            Self::Array {
                empty: false,
                all_strings: true,
            } => Value::Array(vec![Value::String(NOT_LOADED.into())]),
            Self::Array {
                empty: false,
                all_strings: false,
            } => Value::Array(vec![Value::Null]),
            Self::Object { empty: true } => Value::Object(Map::new()),
            Self::Object { empty: false } => {
                let mut m = Map::new();
                m.insert(NOT_LOADED.into(), Value::Null);
                Value::Object(m)
            }
        }
    }
}

/// A byte range of a file: `len` bytes from `offset`, and the CRC-32 of those bytes as they were
/// read, so that reading them again can tell the file changed (replaced by `mv`, rewritten in
/// place) instead of showing another call's bytes (attack 5). 16 bytes: lines are at most
/// `source::file::MAX_FILE_LINE` (256 MiB) long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteSpan {
    pub offset: u64,
    pub len: u32,
    /// CRC-32 (IEEE) of the bytes.
    pub sum: u32,
}

impl ByteSpan {
    /// The span of `bytes`, found at `offset` of their file. A longer slice than `u32::MAX`
    /// bytes (never a line rawpv keeps) is cut to that length.
    pub fn of(offset: u64, bytes: &[u8]) -> Self {
        let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        Self {
            offset,
            len,
            sum: crc32fast::hash(&bytes[..len as usize]),
        }
    }

    /// The offset one past the span's last byte.
    pub fn end(&self) -> u64 {
        self.offset + u64::from(self.len)
    }

    /// Whether `bytes`, read again at this span, are the bytes that were read.
    pub fn holds(&self, bytes: &[u8]) -> bool {
        bytes.len() == self.len as usize && crc32fast::hash(bytes) == self.sum
    }
}

/// The envelope fields around the payload (SPEC 2, \[ours\]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Envelope {
    /// `id` or `frame_id`.
    pub id: Option<String>,
    /// `session_id` (UUID v4 by the spec).
    pub session_id: Option<String>,
    /// `seq` or `sequence`: per-session frame order.
    pub seq: Option<u64>,
    /// `timestamp` or `ts`, parsed.
    pub timestamp: Option<Timestamp>,
    /// `metadata` as given (includes `delegation_chain` when present).
    pub metadata: Map<String, Value>,
    /// Unknown top-level fields, kept for the raw view and for `convert`.
    pub extra: Map<String, Value>,
}

impl Envelope {
    /// `metadata.delegation_chain`, root agent first; empty when absent or malformed.
    pub fn delegation_chain(&self) -> Vec<Delegation> {
        self.metadata
            .get("delegation_chain")
            .and_then(|v| serde_json::from_value::<Vec<Delegation>>(v.clone()).ok())
            .unwrap_or_default()
    }
}

/// `tool.invoke.request` payload (SPEC 3.1).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolInvokeRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_version: Option<String>,
    /// Present, even `null`: `Some` (a `null` input is not an object, not a missing one).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub input: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_group_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `tool.invoke.stream` payload (SPEC 3.3).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolInvokeStream {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_type: Option<StreamType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk: Option<String>,
    /// 0-based; used to rebuild order (frames may arrive out of order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence: Option<u64>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `tool.invoke.result` payload (SPEC 3.2).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolInvokeResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ResultStatus>,
    /// Tool-specific output; `None` when the field is absent (`Some(Value::Null)` when null).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub output: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_type: Option<OutputType>,
    /// Run time in milliseconds. Written back as an integer when it is one (`3887`, not
    /// `3887.0`), so `convert` keeps what the sender wrote.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "whole_if_integral"
    )]
    pub duration_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Serializes an `f64` that holds a whole number within ±2^53 as an integer, any other as a
/// float.
#[allow(clippy::ref_option)] // serde's `serialize_with` passes `&Option<f64>`.
fn whole_if_integral<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53: every integer up to it is exact
    match *v {
        #[allow(clippy::cast_possible_truncation)]
        Some(x) if x.fract() == 0.0 && x.abs() <= EXACT => s.serialize_i64(x as i64),
        Some(x) => s.serialize_f64(x),
        None => s.serialize_none(),
    }
}

/// Deserializes a present field (even `null`) as `Some`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// One `payload.tools[]` entry of `tool.catalog.publish` (SPEC 3.5).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CatalogTool {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_type: Option<OutputType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_approval: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<Category>,
    /// Absent means `available`; see [`CatalogTool::effective_status`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ToolStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_description: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CatalogTool {
    /// The status with the spec default applied (`available`).
    pub fn effective_status(&self) -> ToolStatus {
        self.status.clone().unwrap_or(ToolStatus::Available)
    }
}

/// One `payload.diagnostics[]` entry of `tool.catalog.publish` (SPEC 3.5).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CatalogDiagnostic {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// Absent: about the whole catalog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `tool.catalog.publish` payload (SPEC 3.5).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CatalogPublish {
    #[serde(default)]
    pub tools: Vec<CatalogTool>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<CatalogDiagnostic>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A frame's payload: typed for the tool frames, generic for everything else.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Request(ToolInvokeRequest),
    Stream(ToolInvokeStream),
    Result(ToolInvokeResult),
    Catalog(CatalogPublish),
    /// Any other frame type (SPEC 3.6).
    Generic(Map<String, Value>),
}

/// One RAWP message: `type` + `payload` + envelope (SPEC 2).
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub frame_type: FrameType,
    pub body: Body,
    pub envelope: Envelope,
    pub origin: Origin,
    /// The payload fields that held the wrong JSON type (e.g. a number where SPEC 3 asks for a
    /// string), in the order read: each is absent from `body` (SPEC 2 leniency: the frame is
    /// kept) and becomes one `wrong-field-type` finding. Empty for frames built by importers.
    pub field_errors: Vec<FieldError>,
}

/// A payload field of the wrong JSON type, read as absent (`crate::protocol::parse`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// Its path in the payload: `tool_version`, `tools[0].version`, `diagnostics[1]`, `tools`.
    pub field: String,
    /// What SPEC 3 asks for: `"a string"`, `"a number"`, `"a non-negative integer"`,
    /// `"a boolean"`, `"an object"`, `"an array"`.
    pub expected: &'static str,
    /// What the line holds, in the same words (`"a number"`, `"an object"`, …).
    pub found: &'static str,
    /// Whether SPEC 3's tables mark the field required (the finding is then an error, else a
    /// warning).
    pub required: bool,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is {}, expected {}; read as absent",
            self.field, self.found, self.expected
        )
    }
}

impl Frame {
    /// Builds a frame from a type and a typed body, with an empty envelope.
    pub fn new(frame_type: FrameType, body: Body) -> Self {
        Self {
            frame_type,
            body,
            envelope: Envelope::default(),
            origin: Origin::default(),
            field_errors: Vec::new(),
        }
    }

    /// The `invocation_id` of a tool frame, if any.
    pub fn invocation_id(&self) -> Option<&str> {
        match &self.body {
            Body::Request(r) => r.invocation_id.as_deref(),
            Body::Stream(s) => s.invocation_id.as_deref(),
            Body::Result(r) => r.invocation_id.as_deref(),
            Body::Catalog(_) => None,
            Body::Generic(m) => m.get("invocation_id").and_then(Value::as_str),
        }
    }

    /// The payload as JSON (what `convert` writes under `payload`).
    pub fn payload_json(&self) -> Value {
        let v = match &self.body {
            Body::Request(r) => serde_json::to_value(r),
            Body::Stream(s) => serde_json::to_value(s),
            Body::Result(r) => serde_json::to_value(r),
            Body::Catalog(c) => serde_json::to_value(c),
            Body::Generic(m) => return Value::Object(m.clone()),
        };
        v.unwrap_or(Value::Null)
    }

    /// The whole frame as one RAWP JSON object, envelope fields at the top level.
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert(
            "type".into(),
            Value::String(self.frame_type.as_str().to_owned()),
        );
        if let Some(id) = &self.envelope.id {
            obj.insert("id".into(), Value::String(id.clone()));
        }
        if let Some(s) = &self.envelope.session_id {
            obj.insert("session_id".into(), Value::String(s.clone()));
        }
        if let Some(seq) = self.envelope.seq {
            obj.insert("seq".into(), Value::from(seq));
        }
        if let Some(ts) = self.envelope.timestamp {
            obj.insert("timestamp".into(), Value::String(ts.to_rfc3339()));
        }
        obj.insert("payload".into(), self.payload_json());
        if !self.envelope.metadata.is_empty() {
            obj.insert(
                "metadata".into(),
                Value::Object(self.envelope.metadata.clone()),
            );
        }
        for (k, v) in &self.envelope.extra {
            obj.entry(k.clone()).or_insert_with(|| v.clone());
        }
        Value::Object(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chrono_ms(s: &str) -> Option<i64> {
        chrono::DateTime::parse_from_rfc3339(s.trim())
            .ok()
            .map(|d| d.timestamp_millis())
    }

    #[test]
    fn timestamps_read_without_chrono_agree_with_chrono() {
        let years = [
            "1969", "1970", "1999", "2000", "2024", "2025", "2100", "9999", "0000",
        ];
        let fracs = [
            "",
            ".",
            ".1",
            ".12",
            ".123",
            ".1239",
            ".123456789",
            ".1234567891",
            ".12a",
            ".999",
        ];
        let ends = ["Z", "z", "+00:00", "+01:30", "-05:00", "", "Z "];
        let seps = ["T", "t", " "];
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut pick = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let (mut fast, mut n) = (0, 0);
        for i in 0..60_000 {
            let (month, day) = if i % 2 == 0 {
                (1 + pick(12), 1 + pick(31))
            } else {
                (pick(14), pick(33))
            };
            let s = format!(
                "{}-{month:02}-{day:02}{}{:02}:{:02}:{:02}{}{}",
                years[pick(years.len())],
                seps[pick(seps.len())],
                pick(25),
                pick(61),
                pick(61),
                fracs[pick(fracs.len())],
                ends[pick(ends.len())],
            );
            assert_eq!(
                Timestamp::parse_str(&s).map(|t| t.0),
                chrono_ms(&s),
                "{s:?}"
            );
            fast += usize::from(Timestamp::parse_utc(s.trim()).is_some());
            n += 1;
        }
        assert!(fast > 1_000, "{fast} of {n} read without chrono");
        for s in [
            "2026-11-18T11:06:40.025Z",
            " 2024-02-29T23:59:59Z ",
            "1970-01-01T00:00:00Z",
        ] {
            assert!(Timestamp::parse_utc(s.trim()).is_some(), "{s}");
            assert_eq!(Timestamp::parse_str(s).map(|t| t.0), chrono_ms(s), "{s}");
        }
        for s in [
            "",
            "x",
            "2024-02-30T00:00:00Z",
            "2024-01-01T00:00:60Z",
            "+2024-01-01T00:00:00Z",
        ] {
            assert_eq!(Timestamp::parse_str(s).map(|t| t.0), chrono_ms(s), "{s}");
        }
    }
}
