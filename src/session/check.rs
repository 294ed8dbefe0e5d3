//! Conformance checks over frames and sessions (SPEC 3.1–3.5, 3.7; SPEC 5 pairing).
//!
//! Who calls it: the reducer (its parent module, `crate::session`) runs [`frame_findings`] on
//! every frame *before* folding it and [`end_findings`] once when the source ends, so live mode,
//! replay, the problems panel and `rawpv check` all see the same findings. It lives inside the
//! session module because it reads the model the reducer builds (`crate::check` re-exports it
//! for `rawpv check` and the tests): a child reading its parent, not two modules in a cycle.
//!
//! Rules that live elsewhere: result/stream without a request, duplicate `invocation_id`, duplicate
//! result, malformed lines, unknown frame types and payload fields of the wrong type are reported by the
//! reducer itself (codes in [`crate::finding::code`]; a stream or result without a usable id is
//! only this module's `missing-field`, not also "without a request"). The codes of this module are
//! in [`code`].
//!
//! Levels (calibrated so converted Claude Code / Anthropic files get no error the adapter caused):
//!
//! | rule | code | level |
//! |---|---|---|
//! | required field absent (SPEC 3.1–3.5 tables); not when it was of the wrong type (the reducer's `wrong-field-type` says so) | `missing-field` | error |
//! | `status`, `stream_type`, `output_type`, `severity` outside the enum | `unknown-enum-value` | error |
//! | catalog `category` / tool `status` / declared `output_type` outside the enum | `unknown-enum-value` | warning |
//! | request `input` not an object (a required Object, RAWP-DPS 5.1) | `input-not-object` | error |
//! | request for a tool absent from the agent's catalog | `tool-not-in-catalog` | error (warning when the catalog was derived by an importer) |
//! | request for an `unavailable` tool | `tool-unavailable` | error |
//! | request for a tool under a `fatal` diagnostic | `tool-fatal-diagnostic` | error |
//! | request for a `degraded` tool (naming its `error` diagnostic, if any) | `tool-degraded` | info |
//! | request for a tool with an `error` catalog diagnostic (allowed; the user SHOULD be warned, RAWP-DPS 5.4.1) | `tool-error-diagnostic` | info |
//! | stream chunk for a call whose result already came | `stream-after-result` | error |
//! | request for a tool whose entry has `requires_approval: true` with no `agent.interaction.request` before it approving it (one naming its `invocation_id`, or naming the tool and no id: the tool for the rest of the session; not for a blocked request, which never runs) | `approval-request-missing` | warning |
//! | a computer/browser toolset member (`toolset_name` on the request) is looked up by its toolset's entry (SPEC 5) | — | — |
//! | a successful call whose input does not follow its entry's `input_schema` (JSON Schema, validated at the result; an invalid call answered with an error is not reported) | `input-schema-mismatch` | warning |
//! | such a blocked request (not in catalog, unavailable, fatal) answered by a `session.error` naming its `invocation_id`, and no stream or result after (the master blocked it; replaces the error) | `blocked-request-answered` | info |
//! | `invocation_id` not a UUID v4 (skipped for imported frames) | `invocation-id-not-uuid-v4` | warning |
//! | stream `sequence` already received | `stream-sequence-duplicate` | error |
//! | stream `sequence` gap, found when the result arrives | `stream-sequence-gap` | error (warning when still open at the end) |
//! | stream/result `tool_name` differs from the request's | `tool-name-mismatch` | error |
//! | `output_type` differs from the SPEC 3.4 rule (any step: catalog, category, fallback; RAWP-DPS 5.3.3 makes the whole order a MUST) | `output-type-mismatch` | error |
//! | request never answered by the end of the session (unless an importer reported it as `tool-use-without-result`; not a request without a usable `invocation_id`, which cannot be answered, nor the session's only open call when a result for an unknown id of its tool came after it: one finding per problem) | `request-never-answered` | warning |
//! | unavailable/degraded tool without `status_description` (a SHOULD, RAWP-DPS 5.4) | `status-description-missing` | warning |
//! | a tool listed twice in one publish | `duplicate-catalog-tool` | warning |
//! | a session's first publish after requests of it (not an importer's), at the publish | `catalog-not-first` | warning |
//! | a session with requests (not an importer's) and no publish, at the end (line 0: about the session; the message names its first request's line) | `catalog-missing` | warning |
//! | `session_id` not a string, or empty (the frame goes to the default session) | `invalid-session-id` | warning |
//! | `session_id` not a UUID v4 (once per session, at its first frame; skipped for imported frames) | `session-id-not-uuid-v4` | warning |
//!
//! Leniency in the SPEC 3.4 rule (documented choices, [ours]): filesystem writes accept `diff` or
//! `empty` (SPEC 4 lists both for Write); `search` accepts `text` or `file_list`; a result that is
//! not `success` may also be `text` (an error message); an empty output (`null`, `""`, `{}`, `[]`)
//! may be `empty` unless the catalog declares another type (step 1 wins over everything). A filesystem tool whose name rawpv cannot classify (a custom reader,
//! lister or writer) may have any filesystem default (`diff`, `empty`, `file_content`,
//! `file_list`). SPEC notes, where the seed contradicts itself (either reading passes, issue 19
//! item 8): `WebSearch` may be `text` (5.3.1: category `search`) or `web_content` (SPEC 4 table);
//! `NotebookEdit` may be `empty` (5.3.1 table) or `diff` (SPEC 4), under category `notebook` or
//! `filesystem`. A declared `output_type` outside the enum is reported (`unknown-enum-value`) and
//! ignored: the category step decides.
//!
//! Sessions (SPEC §6): every rule reads the frame's own session (`super::sessions`): its
//! current catalog, its invocation ids; the `output_type` rule reads the catalog in force in the
//! call's session when its result arrives (`Session::catalog_entry_at`, which the detail header
//! reads too). End-of-session findings are per session (each names its call's session).
//!
//! Cost: each frame is checked in O(tools in the current catalog + log chunks) with no rescans of
//! the session; stream gaps are computed once per invocation, when its result arrives or at the end.
//! Invariants: pure functions of (session so far, frame); never panic.

use serde_json::Value;

use super::{CallRef, Invocation, Session};
use crate::finding::{Finding, Level, Quoted};
use crate::protocol::rules::{Rule, expected_output_type, known_category};
use crate::protocol::{
    Body, CatalogPublish, CatalogTool, Category, FieldError, Frame, OutputType, ResultStatus,
    Severity, ToolInvokeRequest, ToolInvokeResult, ToolInvokeStream, ToolStatus,
};

/// Stable codes of the checker's findings. Never rename one (the JSON output of `rawpv check` is
/// read by CI pipelines); only add.
pub mod code {
    /// A required field of a tool frame or catalog entry is absent (SPEC 3.1–3.5).
    pub const MISSING_FIELD: &str = "missing-field";
    /// An enum field holds a value outside the spec (SPEC 3.2–3.5).
    pub const UNKNOWN_ENUM_VALUE: &str = "unknown-enum-value";
    /// A request's `input` is not a JSON object (SPEC 3.1).
    pub const INPUT_NOT_OBJECT: &str = "input-not-object";
    /// A request names a tool absent from the current catalog (SPEC 3.7).
    pub const TOOL_NOT_IN_CATALOG: &str = "tool-not-in-catalog";
    /// A request names a tool whose catalog status is `unavailable` (SPEC 3.5, 3.7).
    pub const TOOL_UNAVAILABLE: &str = "tool-unavailable";
    /// A request names a tool with a `fatal` catalog diagnostic (SPEC 3.5, 3.7).
    pub const TOOL_FATAL_DIAGNOSTIC: &str = "tool-fatal-diagnostic";
    /// A request names a `degraded` tool: the user should be told (SPEC 3.5).
    pub const TOOL_DEGRADED: &str = "tool-degraded";
    /// An `invocation_id` that is not a UUID v4 (SPEC 3.1, 3.7).
    pub const INVOCATION_ID_NOT_UUID_V4: &str = "invocation-id-not-uuid-v4";
    /// A stream chunk repeats a `sequence` already received (SPEC 3.3, 3.7).
    pub const STREAM_SEQUENCE_DUPLICATE: &str = "stream-sequence-duplicate";
    /// Stream `sequence` numbers do not run 0, 1, 2, … without holes (SPEC 3.3, 3.7).
    pub const STREAM_SEQUENCE_GAP: &str = "stream-sequence-gap";
    /// A stream or result `tool_name` differs from its request's (SPEC 3.2, 3.3).
    pub const TOOL_NAME_MISMATCH: &str = "tool-name-mismatch";
    /// A result's `output_type` differs from what the SPEC 3.4 rule picks.
    pub const OUTPUT_TYPE_MISMATCH: &str = "output-type-mismatch";
    /// A request with no result by the end of the session (SPEC 3.7, SPEC 5).
    pub const REQUEST_NEVER_ANSWERED: &str = "request-never-answered";
    /// An unavailable or degraded tool without `status_description` (SPEC 3.5 SHOULD).
    pub const STATUS_DESCRIPTION_MISSING: &str = "status-description-missing";
    /// The same tool name twice in one `tool.catalog.publish` (SPEC 3.5).
    pub const DUPLICATE_CATALOG_TOOL: &str = "duplicate-catalog-tool";
    /// A `session_id` that is not a string, or empty: the frame is counted in the input's
    /// default session (SPEC 2, §6).
    pub const INVALID_SESSION_ID: &str = "invalid-session-id";
    /// A `session_id` that is not a UUID v4 (SPEC 2; once per session; skipped for imported
    /// frames).
    pub const SESSION_ID_NOT_UUID_V4: &str = "session-id-not-uuid-v4";
    /// A request for a blocked tool (not in the catalog, `unavailable`, `fatal` diagnostic)
    /// answered by a `session.error` naming its `invocation_id` (RAWP-DPS 5.4: the master did
    /// its job); the call's blocking error again if it runs after all.
    pub const BLOCKED_REQUEST_ANSWERED: &str = "blocked-request-answered";

    /// A request input that does not follow its catalog entry's `input_schema` (JSON Schema;
    /// SPEC 3.3's `input_schema`, SPEC 5: "an object that follows the tool's `input_schema`").
    pub const INPUT_SCHEMA_MISMATCH: &str = "input-schema-mismatch";

    /// A request for a tool with an `error` catalog diagnostic: allowed, and the user should
    /// be warned (SPEC 3.5, RAWP-DPS 5.4.1).
    pub const TOOL_ERROR_DIAGNOSTIC: &str = "tool-error-diagnostic";
    /// A stream chunk for a call whose result already came (SPEC 3.3: a stream is the output
    /// of a call still running).
    pub const STREAM_AFTER_RESULT: &str = "stream-after-result";

    /// A session's first `tool.catalog.publish` after requests of it (SPEC 3.5, RAWP-DPS
    /// 5.4.1: published right after the session starts).
    pub const CATALOG_NOT_FIRST: &str = "catalog-not-first";
    /// A session with requests and no `tool.catalog.publish` at all (SPEC 3.5, RAWP-DPS 5.4.1).
    pub const CATALOG_MISSING: &str = "catalog-missing";

    /// A request for a tool that requires approval (`requires_approval: true`) with no
    /// `agent.interaction.request` before it (RAWP-DPS 5.2.1; SPEC 3.1).
    pub const APPROVAL_REQUEST_MISSING: &str = "approval-request-missing";

    /// Every code of this module, for docs and tests.
    pub const ALL: &[&str] = &[
        APPROVAL_REQUEST_MISSING,
        CATALOG_NOT_FIRST,
        CATALOG_MISSING,
        TOOL_ERROR_DIAGNOSTIC,
        STREAM_AFTER_RESULT,
        INPUT_SCHEMA_MISMATCH,
        MISSING_FIELD,
        UNKNOWN_ENUM_VALUE,
        INPUT_NOT_OBJECT,
        TOOL_NOT_IN_CATALOG,
        TOOL_UNAVAILABLE,
        TOOL_FATAL_DIAGNOSTIC,
        TOOL_DEGRADED,
        INVOCATION_ID_NOT_UUID_V4,
        STREAM_SEQUENCE_DUPLICATE,
        STREAM_SEQUENCE_GAP,
        TOOL_NAME_MISMATCH,
        OUTPUT_TYPE_MISMATCH,
        REQUEST_NEVER_ANSWERED,
        STATUS_DESCRIPTION_MISSING,
        DUPLICATE_CATALOG_TOOL,
        INVALID_SESSION_ID,
        SESSION_ID_NOT_UUID_V4,
        BLOCKED_REQUEST_ANSWERED,
    ];
}

/// Metadata keys importers set on the frames they build; such frames keep the source's ids.
const IMPORTER_METADATA: &[&str] = &[
    "claude_code",
    "anthropic",
    "codex",
    "gemini",
    "rawpv_import",
];

/// Whether `id` is a hyphenated UUID of version 4 (SPEC 3.1).
/// RFC 9562: version nibble 4 and the variant bits `10` (the nibble after the second hyphen is
/// 8, 9, a or b).
pub fn is_uuid_v4(id: &str) -> bool {
    uuid::Uuid::try_parse(id)
        .is_ok_and(|u| u.get_version_num() == 4 && u.get_variant() == uuid::Variant::RFC4122)
}

/// Whether the frame was built by an importer (Claude Code, Anthropic API).
pub fn is_imported(frame: &Frame) -> bool {
    IMPORTER_METADATA
        .iter()
        .any(|k| frame.envelope.metadata.contains_key(*k))
}

/// Collects findings about one frame.
struct Out<'a> {
    line: u64,
    invocation: Option<&'a str>,
    /// The frame's fields of the wrong type: read as absent, reported by the reducer, so not
    /// reported again as missing.
    wrong: &'a [FieldError],
    findings: Vec<Finding>,
}

impl Out<'_> {
    fn push(&mut self, level: Level, code: &'static str, spec: &'static str, msg: String) {
        let mut f = Finding::new(level, code, spec, self.line, msg);
        if let Some(id) = self.invocation.filter(|id| !id.is_empty()) {
            f = f.for_invocation(id);
        }
        self.findings.push(f);
    }

    /// Whether the field at `path` held the wrong type (see `wrong`).
    fn was_wrong(&self, path: &str) -> bool {
        self.wrong.iter().any(|e| e.field == path)
    }

    fn missing(&mut self, frame_type: &str, field: &str, spec: &'static str) {
        self.missing_in(frame_type, "", field, spec);
    }

    /// [`Out::missing`] for a field of the payload's element at `prefix` (`tools[2].`).
    fn missing_in(&mut self, frame_type: &str, prefix: &str, field: &str, spec: &'static str) {
        if self.was_wrong(&format!("{prefix}{field}")) {
            return;
        }
        self.push(
            Level::Error,
            code::MISSING_FIELD,
            spec,
            format!("{frame_type} without required field `{field}`"),
        );
    }
}

/// Findings about one frame, given the session before it is applied.
/// `sid` is the frame's session (`Session::sessions`): the catalog, the invocation ids and the
/// `output_type` rule are that session's (SPEC §6).
pub fn frame_findings(session: &Session, frame: &Frame, sid: u32) -> Vec<Finding> {
    let mut out = Out {
        line: frame.origin.line,
        invocation: frame.invocation_id(),
        wrong: &frame.field_errors,
        findings: Vec::new(),
    };
    // The reducer counted the frame in its session before this check: 1 on its first frame.
    let first = session.sessions.get(sid).counts.frames == 1;
    check_session_id(frame, first, &mut out);
    let at = At { session, sid };
    match &frame.body {
        Body::Request(r) => check_request(&at, frame, r, &mut out),
        Body::Stream(s) => check_stream(&at, s, &mut out),
        Body::Result(r) => check_result(&at, r, &mut out),
        Body::Catalog(c) => {
            let derived = frame
                .envelope
                .metadata
                .get("rawpv_derived")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            check_catalog(c, derived, &mut out);
            if let Some((line, n)) = (session.publish_of(sid).is_none())
                .then(|| session.uncatalogued.get(&sid))
                .flatten()
            {
                out.push(
                    Level::Warning,
                    code::CATALOG_NOT_FIRST,
                    "SPEC 3.5",
                    format!(
                        "the session's first tool.catalog.publish comes after {} (the first on \
                         line {line}): the catalog is published right after the session starts",
                        crate::fmt::plural(*n, "request")
                    ),
                );
            }
        }
        // SPEC 3.6 bodies are not public: nothing to enforce beyond what the reducer does.
        Body::Generic(_) => {}
    }
    out.findings
}

/// Findings that can only be made once the source ended: requests never answered and the stream
/// gaps of those still-open invocations.
pub fn end_findings(session: &Session) -> Vec<Finding> {
    // Importers already report unanswered tool uses (`tool-use-without-result`, SPEC 5): one
    // finding per problem is enough.
    // Keyed by session (`None`: the importer's finding names none, so it matches every session).
    let reported: std::collections::HashSet<(Option<u32>, &str)> = session
        .findings
        .iter()
        .filter(|f| {
            // B14: the importer's error names the server tool left without a result.
            [
                crate::finding::code::TOOL_USE_WITHOUT_RESULT,
                crate::finding::code::TEXT_WITH_UNRESOLVED_SERVER_TOOL,
            ]
            .contains(&f.code)
        })
        .filter_map(|f| Some((f.session, f.invocation_id.as_deref()?)))
        .collect();
    let mut findings = Vec::new();
    let answered = |inv: &Invocation| {
        !session.blocked.is_empty()
            && (session.blocked).contains_key(&(inv.session, Box::from(inv.invocation_id.as_str())))
    };
    // A request without a usable id cannot be answered (its `missing-field` says what is
    // wrong); one an orphan result probably answered is that result's finding.
    let orphaned = |inv: &Invocation| {
        !session.orphans.is_empty()
            && (session.orphans)
                .get(&(inv.session, Box::from(inv.tool_name.as_str())))
                // Requested before the result: on an earlier line, or on its line in a
                // whole-document input (an Anthropic JSON body is one line).
                .is_some_and(|&line| line >= inv.request_line)
    };
    for inv in (session.invocations.iter()).filter(|i| {
        i.status.is_open() && !i.invocation_id.is_empty() && !answered(i) && !orphaned(i)
    }) {
        let mut out = Out {
            line: inv.request_line,
            invocation: Some(&inv.invocation_id),
            wrong: &[],
            findings: Vec::new(),
        };
        let id = inv.invocation_id.as_str();
        if !reported.contains(&(Some(inv.session), id)) && !reported.contains(&(None, id)) {
            out.push(
                Level::Warning,
                code::REQUEST_NEVER_ANSWERED,
                "SPEC 3.7",
                format!(
                    "{} request {} never got a result",
                    name_or_unnamed(&inv.tool_name),
                    Quoted(&inv.invocation_id)
                ),
            );
        }
        push_gaps(inv, Level::Warning, &mut out);
        findings.extend(out.findings.into_iter().map(|f| f.in_session(inv.session)));
    }
    let mut bare: Vec<(&u32, &(u64, u64))> = session.uncatalogued.iter().collect();
    bare.sort_unstable();
    for (&sid, &(line, n)) in bare {
        let f = Finding::new(
            Level::Warning,
            code::CATALOG_MISSING,
            "SPEC 3.5",
            // About the session, not a row: no line (the first request's is said).
            0,
            format!(
                "the session has {} (the first on line {line}) and no tool.catalog.publish: \
                 the agent publishes its catalog right after the session starts",
                crate::fmt::plural(n, "request")
            ),
        );
        findings.push(f.in_session(sid));
    }
    findings
}

fn name_or_unnamed(name: &str) -> &str {
    if name.is_empty() { "(unnamed)" } else { name }
}

/// A session's compiled `input_schema`s, by (publish, tool name), each schema compiled once
/// whatever publishes repeat it (by its JSON text; a schema that does not compile is `None`,
/// no validation), and the requests whose input broke their schema, by (session,
/// `invocation_id`), waiting for their result: validated at the request, where the input is in
/// hand (a file-backed session does not keep it), reported at a successful result (at most
/// [`PENDING_MAX`] wait; an error result drops its own). Shared by clones; equal to any other
/// (check state, not data).
#[derive(Clone, Default)]
pub struct SchemaCache(std::sync::Arc<std::sync::Mutex<SchemaState>>);

/// Requests with a broken input waiting for their result, at most.
pub const PENDING_MAX: usize = 10_000;

#[derive(Default)]
struct SchemaState {
    /// (publish's feed row, tool name) → its validator.
    by_entry:
        std::collections::HashMap<(usize, String), Option<std::sync::Arc<jsonschema::Validator>>>,
    /// A schema's JSON text → its validator.
    by_text: std::collections::HashMap<String, Option<std::sync::Arc<jsonschema::Validator>>>,
    /// (session, `invocation_id`) → the mismatch's message.
    pending: std::collections::HashMap<(u32, Box<str>), String>,
}

impl std::fmt::Debug for SchemaCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SchemaCache")
    }
}

impl PartialEq for SchemaCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl SchemaCache {
    fn state(&self) -> std::sync::MutexGuard<'_, SchemaState> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The validator of tool `name`'s `schema` in the publish whose feed row is `publish`.
    fn validator(
        &self,
        publish: usize,
        name: &str,
        schema: &Value,
    ) -> Option<std::sync::Arc<jsonschema::Validator>> {
        let mut st = self.state();
        let key = (publish, name.to_owned());
        if let Some(v) = st.by_entry.get(&key) {
            return v.clone();
        }
        let v = st
            .by_text
            .entry(schema.to_string())
            .or_insert_with(|| {
                jsonschema::validator_for(schema)
                    .ok()
                    .map(std::sync::Arc::new)
            })
            .clone();
        st.by_entry.insert(key, v.clone());
        v
    }

    /// Holds request `id`'s (of session `sid`) mismatch `message` until its result.
    fn hold(&self, sid: u32, id: &str, message: String) {
        let mut st = self.state();
        if st.pending.len() < PENDING_MAX {
            st.pending.insert((sid, id.into()), message);
        }
    }

    /// Request `id`'s (of session `sid`) held mismatch, taken.
    fn take(&self, sid: u32, id: &str) -> Option<String> {
        self.state().pending.remove(&(sid, Box::from(id)))
    }
}

/// The session so far and the session of the frame at hand.
struct At<'s> {
    session: &'s Session,
    sid: u32,
}

impl<'s> At<'s> {
    /// The frame's session's current publish.
    fn publish(&self) -> Option<&'s super::Publish> {
        self.session.publish_of(self.sid)
    }

    /// The current catalog's entry for `name` (the first one when listed twice); O(1).
    fn catalog_entry(&self, name: &str) -> Option<&'s CatalogTool> {
        self.publish().and_then(|p| p.tool(name))
    }

    /// The call with this id in the frame's session (kept, or folded away once finished).
    fn call(&self, id: &str) -> Option<CallRef<'s>> {
        self.session.call_in(self.sid, id)
    }
}

/// The frame's `session_id` (SPEC 2, §6): not a string, or empty (each such frame), or (on the
/// first frame of its session, when no importer built it) not a UUID v4. The frame is folded all
/// the same, an invalid one in the default session.
fn check_session_id(frame: &Frame, first: bool, out: &mut Out<'_>) {
    let e = &frame.envelope;
    let msg = match &e.session_id {
        None => {
            let Some(v) = (e.extra.get("session_id"))
                .or_else(|| e.metadata.get("session_id"))
                .filter(|v| !v.is_string())
            else {
                return;
            };
            format!(
                "session_id is {}, not a string; the frame is counted in the input's default session",
                json_kind(v)
            )
        }
        Some(id) if id.is_empty() => {
            "session_id is empty; the frame is counted in the input's default session".to_owned()
        }
        Some(id) if first && !is_imported(frame) && !is_uuid_v4(id) => {
            out.push(
                Level::Warning,
                code::SESSION_ID_NOT_UUID_V4,
                "SPEC 2",
                format!(
                    "session_id {} is not a UUID v4",
                    // An id of 200 KB was repeated whole (attack 6).
                    Quoted(&crate::fmt::truncate(id, super::sessions::NAME_MAX))
                ),
            );
            return;
        }
        Some(_) => return,
    };
    out.push(Level::Warning, code::INVALID_SESSION_ID, "SPEC 2", msg);
}

fn check_request(at: &At<'_>, frame: &Frame, r: &ToolInvokeRequest, out: &mut Out<'_>) {
    const T: &str = "tool.invoke.request";
    const S: &str = "SPEC 3.1";
    match r.invocation_id.as_deref() {
        None | Some("") => out.missing(T, "invocation_id", S),
        Some(id) => {
            if !is_imported(frame) && !is_uuid_v4(id) {
                out.push(
                    Level::Warning,
                    code::INVOCATION_ID_NOT_UUID_V4,
                    "SPEC 3.7",
                    format!("invocation_id {} is not a UUID v4", Quoted(id)),
                );
            }
        }
    }
    match &r.input {
        None => out.missing(T, "input", S),
        Some(Value::Object(_)) => {}
        Some(other) => out.push(
            Level::Error,
            code::INPUT_NOT_OBJECT,
            S,
            format!("input is {}, not an object", json_kind(other)),
        ),
    }
    let Some(name) = r.tool_name.as_deref().filter(|n| !n.is_empty()) else {
        out.missing(T, "tool_name", S);
        return;
    };
    let Some(publish) = at.publish() else {
        return; // no catalog in this session: nothing to compare with
    };
    let derived = publish.derived;
    // A computer or browser toolset member (`screenshot`) is dispatched on its toolset and
    // name (SPEC 5): it is in the catalog when its toolset is.
    let toolset = r
        .extra
        .get("toolset_name")
        .and_then(Value::as_str)
        .filter(|t| at.catalog_entry(t).is_some());
    let Some(entry) = at.catalog_entry(toolset.unwrap_or(name)) else {
        let (level, whose) = if derived {
            (Level::Warning, "the derived catalog")
        } else {
            (Level::Error, "the current catalog")
        };
        out.push(
            level,
            code::TOOL_NOT_IN_CATALOG,
            "SPEC 3.7",
            format!("request for {name}, which is not in {whose}"),
        );
        return;
    };
    hold_input_schema(at, r, entry);
    let why = entry
        .status_description
        .as_deref()
        .map(|d| format!(" ({d})"))
        .unwrap_or_default();
    // An `error` diagnostic on the tool: use is allowed, the user SHOULD be warned (RAWP-DPS
    // 5.4.1): an info on the call; said in the degraded info when the tool is both.
    let error_diag = (publish.catalog.diagnostics.iter())
        .find(|d| d.severity == Some(Severity::Error) && d.tool_name.as_deref() == Some(name))
        .map(|d| {
            format!(
                "an error catalog diagnostic ({}: {})",
                d.code.as_deref().unwrap_or("?"),
                crate::fmt::truncate(d.message.as_deref().unwrap_or(""), 200)
            )
        });
    match entry.effective_status() {
        ToolStatus::Unavailable => out.push(
            Level::Error,
            code::TOOL_UNAVAILABLE,
            "SPEC 3.5",
            format!("request for {name}, which the catalog marks unavailable{why}"),
        ),
        ToolStatus::Degraded => out.push(
            Level::Info,
            code::TOOL_DEGRADED,
            "SPEC 3.5",
            format!(
                "request for {name}, which the catalog marks degraded{why}{}",
                error_diag
                    .as_deref()
                    .map(|d| format!(" and which has {d}"))
                    .unwrap_or_default()
            ),
        ),
        ToolStatus::Available | ToolStatus::Unknown(_) => {
            if let Some(d) = &error_diag {
                out.push(
                    Level::Info,
                    code::TOOL_ERROR_DIAGNOSTIC,
                    "SPEC 3.5",
                    format!(
                        "request for {name}, which has {d}: its use is allowed, and the user \
                         should be warned"
                    ),
                );
            }
        }
    }
    let fatal = publish
        .catalog
        .diagnostics
        .iter()
        .find(|d| d.severity == Some(Severity::Fatal) && d.tool_name.as_deref() == Some(name));
    if let Some(d) = fatal {
        let code = d.code.as_deref().unwrap_or("?");
        out.push(
            Level::Error,
            code::TOOL_FATAL_DIAGNOSTIC,
            "SPEC 3.5",
            format!("request for {name}, which has a fatal catalog diagnostic ({code})"),
        );
    }
    // A blocked call never runs: its approval is moot (one finding per problem).
    let blocked = fatal.is_some() || entry.effective_status() == ToolStatus::Unavailable;
    if entry.requires_approval == Some(true) && !blocked {
        approval_missing(at, r, name, toolset, out);
    }
}

/// RAWP-DPS 5.2.1 (A08): a request for a tool needing approval comes after an
/// `agent.interaction.request` approving it (`super::Approvals`: naming the call's
/// `invocation_id`, or the tool, a toolset member also by its toolset). A warning: the seed
/// states the order as the protocol's flow ("is preceded by"), not as a MUST.
fn approval_missing(
    at: &At<'_>,
    r: &ToolInvokeRequest,
    name: &str,
    toolset: Option<&str>,
    out: &mut Out<'_>,
) {
    let approved = at.session.approvals.get(&at.sid).is_some_and(|a| {
        r.invocation_id
            .as_deref()
            .is_some_and(|id| a.calls.contains(id))
            || a.tools.contains(name)
            || toolset.is_some_and(|t| a.tools.contains(t))
    });
    if !approved {
        out.push(
            Level::Warning,
            code::APPROVAL_REQUEST_MISSING,
            "SPEC 3.1",
            format!(
                "request for {name}, which the catalog says requires approval, with no \
                 agent.interaction.request before it asking for that approval"
            ),
        );
    }
}

fn check_stream(at: &At<'_>, s: &ToolInvokeStream, out: &mut Out<'_>) {
    const T: &str = "tool.invoke.stream";
    const S: &str = "SPEC 3.3";
    if s.invocation_id.as_deref().is_none_or(str::is_empty) {
        out.missing(T, "invocation_id", S);
    }
    if s.tool_name.is_none() {
        out.missing(T, "tool_name", S);
    }
    match &s.stream_type {
        None => out.missing(T, "stream_type", S),
        Some(t) if !t.is_known() => out.push(
            Level::Error,
            code::UNKNOWN_ENUM_VALUE,
            S,
            format!(
                "stream_type {} is not stdout, stderr or progress",
                Quoted(t.as_str())
            ),
        ),
        Some(_) => {}
    }
    if s.chunk.is_none() {
        out.missing(T, "chunk", S);
    }
    if s.sequence.is_none() {
        out.missing(T, "sequence", S);
    }
    let Some((id, call)) = (s.invocation_id.as_deref()).and_then(|id| Some((id, at.call(id)?)))
    else {
        return; // reported by the reducer (stream-without-request)
    };
    name_mismatch(
        call.tool_name(),
        s.tool_name.as_deref(),
        "stream chunk",
        out,
    );
    let finished = match call {
        CallRef::Kept(inv) => !inv.status.is_open(),
        CallRef::Folded { .. } => true,
    };
    if finished {
        out.push(
            Level::Error,
            code::STREAM_AFTER_RESULT,
            S,
            format!(
                "stream chunk for {}, whose result already came (a stream is the output of a \
                 call still running)",
                Quoted(id)
            ),
        );
    }
    if let Some(seq) = s.sequence {
        // The lookup `ChunkBuffer::insert` makes, so this agrees with what the buffer drops.
        if let Some(line) = call.chunk_line(seq) {
            out.push(
                Level::Error,
                code::STREAM_SEQUENCE_DUPLICATE,
                "SPEC 3.7",
                format!(
                    "stream sequence {seq} of {} was already received (line {line}); this chunk is dropped",
                    Quoted(id),
                ),
            );
        }
    }
}

/// Request `r`'s input against its catalog entry's `input_schema` (JSON Schema; SPEC 3.3, SPEC
/// 5 B04): a mismatch is held ([`SchemaCache`]) and reported as a warning only if the call
/// succeeds (an invalid call answered with an error is what the tool-use guide expects: the
/// model retries, B18). Only inputs that are objects, of entries whose schema is an object that
/// compiles (toolset members, looked up by their toolset, have none).
fn hold_input_schema(at: &At<'_>, r: &ToolInvokeRequest, entry: &CatalogTool) {
    let (Some(schema @ Value::Object(_)), Some(input @ Value::Object(_)), Some(id), Some(publish)) = (
        &entry.input_schema,
        &r.input,
        r.invocation_id.as_deref(),
        at.publish(),
    ) else {
        return;
    };
    let Some(v) = at
        .session
        .schemas
        .validator(publish.item, &entry.name, schema)
    else {
        return;
    };
    if let Err(e) = v.validate(input) {
        let path = e.instance_path().to_string();
        let path = if path.is_empty() {
            String::new()
        } else {
            format!(" at {path}")
        };
        let name = r.tool_name.as_deref().unwrap_or_default();
        at.session.schemas.hold(
            at.sid,
            id,
            format!(
                "{} input does not follow its input_schema{}, and the call succeeded: {}",
                crate::render::text::visible(name),
                crate::render::text::visible(&path),
                crate::render::text::visible(&crate::fmt::truncate(&e.to_string(), 300))
            ),
        );
    }
}

/// The held input-schema mismatch of the call result `r` answers ([`hold_input_schema`]):
/// reported when the call succeeded, dropped otherwise.
fn check_input_schema(at: &At<'_>, r: &ToolInvokeResult, out: &mut Out<'_>) {
    let Some(id) = r.invocation_id.as_deref() else {
        return;
    };
    let Some(message) = at.session.schemas.take(at.sid, id) else {
        return;
    };
    if r.status.as_ref().is_some_and(|s| s.as_str() == "success") {
        out.push(
            Level::Warning,
            code::INPUT_SCHEMA_MISMATCH,
            "SPEC 3.3",
            message,
        );
    }
}

fn check_result(at: &At<'_>, r: &ToolInvokeResult, out: &mut Out<'_>) {
    const T: &str = "tool.invoke.result";
    const S: &str = "SPEC 3.2";
    check_input_schema(at, r, out);
    if r.invocation_id.as_deref().is_none_or(str::is_empty) {
        out.missing(T, "invocation_id", S);
    }
    if r.tool_name.is_none() {
        out.missing(T, "tool_name", S);
    }
    match &r.status {
        None => out.missing(T, "status", S),
        Some(st) if !st.is_known() => out.push(
            Level::Error,
            code::UNKNOWN_ENUM_VALUE,
            S,
            format!(
                "status {} is not success, error, timeout or cancelled",
                Quoted(st.as_str())
            ),
        ),
        Some(_) => {}
    }
    if r.output.is_none() {
        out.missing(T, "output", S);
    }
    match &r.output_type {
        None => out.missing(T, "output_type", S),
        Some(ot) if !ot.is_known() => out.push(
            Level::Error,
            code::UNKNOWN_ENUM_VALUE,
            "SPEC 3.4",
            format!(
                "output_type {} is not a SPEC 3.4 value",
                Quoted(ot.as_str())
            ),
        ),
        Some(_) => {}
    }
    let Some(call) = r.invocation_id.as_deref().and_then(|id| at.call(id)) else {
        return; // reported by the reducer (result-without-request)
    };
    let CallRef::Kept(inv) = call else {
        return; // folded away once finished: reported by the reducer (duplicate-result)
    };
    if !inv.status.is_open() {
        return; // reported by the reducer (duplicate-result)
    }
    name_mismatch(&inv.tool_name, r.tool_name.as_deref(), "result", out);
    if let Some(ot) = r.output_type.as_ref().filter(|o| o.is_known()) {
        check_output_type(at, inv, r, ot, out);
    }
    push_gaps(inv, Level::Error, out);
}

fn name_mismatch(requested: &str, name: Option<&str>, what: &str, out: &mut Out<'_>) {
    if let Some(name) = name
        && !requested.is_empty()
        && name != requested
    {
        out.push(
            Level::Error,
            code::TOOL_NAME_MISMATCH,
            "SPEC 3.2",
            format!(
                "{what} names tool {} but its request named {}",
                Quoted(name),
                Quoted(requested)
            ),
        );
    }
}

fn is_empty_output(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::Object(o)) => o.is_empty(),
        Some(Value::Bool(_) | Value::Number(_)) => false,
    }
}

/// The tools whose filesystem default [`crate::protocol::rules`] knows (a read, a listing, a
/// write); for any other filesystem tool rawpv cannot tell a reader from a writer by its name, so
/// every filesystem default (`diff`, `empty`, `file_content`, `file_list`) is accepted.
fn is_classified_filesystem_tool(name: &str) -> bool {
    matches!(
        name,
        "Read" | "NotebookRead" | "Glob" | "LS" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit"
    ) || crate::protocol::rules::is_text_editor(name)
}

/// Where the seed contradicts itself, either reading passes (SPEC notes in the module doc):
/// `WebSearch` is `search` in RAWP-DPS 5.3.1 and `web_content` in the SPEC 4 table; `NotebookEdit` is
/// `empty` in the 5.3.1 table and a write (`diff`) in SPEC 4, with no notebook default in 5.3.3.
fn accepted_either_way(tool: &str, category: Option<&Category>, got: &OutputType) -> bool {
    match tool {
        "WebSearch" | "web_search" => matches!(got, OutputType::WebContent | OutputType::Text),
        "NotebookEdit" => {
            matches!(category, Some(Category::Notebook | Category::Filesystem))
                && matches!(got, OutputType::Diff | OutputType::Empty)
        }
        _ => false,
    }
}

fn check_output_type(
    at: &At<'_>,
    inv: &Invocation,
    r: &ToolInvokeResult,
    got: &OutputType,
    out: &mut Out<'_>,
) {
    let output = r.output.as_ref();
    // The catalog in force in the call's session now, as its result arrives (what the detail
    // header reads later through `Session::catalog_entry_of`).
    let upto = at.session.publishes.len();
    let entry = at.session.catalog_entry_at(at.sid, upto, &inv.tool_name);
    let (expected, rule) = expected_output_type(&inv.tool_name, entry, output);
    if *got == expected {
        return;
    }
    // Documented leniency (module doc); not against a catalog declaration, which wins over
    // everything (SPEC 3.4 step 1).
    if *got == OutputType::Empty && rule != Rule::Catalog && is_empty_output(output) {
        return;
    }
    if *got == OutputType::Text
        && r.status
            .as_ref()
            .is_some_and(|s| *s != ResultStatus::Success)
    {
        return;
    }
    let category = entry
        .and_then(|e| e.category.clone())
        .or_else(|| known_category(&inv.tool_name));
    if accepted_either_way(&inv.tool_name, category.as_ref(), got) {
        return;
    }
    if rule == Rule::Category {
        let pair_ok = |a: OutputType, b: OutputType| {
            (expected == a && *got == b) || (expected == b && *got == a)
        };
        let lenient = match category {
            Some(Category::Filesystem) => {
                pair_ok(OutputType::Diff, OutputType::Empty)
                    || (!is_classified_filesystem_tool(&inv.tool_name)
                        && matches!(
                            got,
                            OutputType::Diff
                                | OutputType::Empty
                                | OutputType::FileContent
                                | OutputType::FileList
                        ))
            }
            Some(Category::Search) => pair_ok(OutputType::Text, OutputType::FileList),
            Some(
                Category::Shell
                | Category::Web
                | Category::Notebook
                | Category::TaskManagement
                | Category::Agent
                | Category::Planning
                | Category::Mcp
                | Category::Custom
                | Category::Unknown(_),
            )
            | None => false,
        };
        if lenient {
            return;
        }
    }
    // The whole SPEC 3.4 order is a MUST (RAWP-DPS 5.3.3: catalog, category, fallback): an
    // error on every step.
    out.push(
        Level::Error,
        code::OUTPUT_TYPE_MISMATCH,
        "SPEC 3.4",
        format!(
            "{} result has output_type {got} but the SPEC 3.4 {} rule gives {expected}",
            inv.tool_name,
            rule.as_str()
        ),
    );
}

fn push_gaps(inv: &Invocation, level: Level, out: &mut Out<'_>) {
    for (from, to) in inv.stream.gaps() {
        let range = if from == to {
            format!("{from}")
        } else {
            format!("{from}–{to}")
        };
        out.push(
            level,
            code::STREAM_SEQUENCE_GAP,
            "SPEC 3.7",
            format!(
                "stream of {} is missing sequence {range}",
                Quoted(&inv.invocation_id)
            ),
        );
    }
}

fn check_catalog(c: &CatalogPublish, derived: bool, out: &mut Out<'_>) {
    const T: &str = "tool.catalog.publish tool";
    const S: &str = "SPEC 3.5";
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for (i, tool) in c.tools.iter().enumerate() {
        let at = format!("tools[{i}].");
        if tool.name.is_empty() {
            out.missing_in(&format!("{T} #{i}"), &at, "name", S);
            continue;
        }
        let name = tool.name.as_str();
        if !seen.insert(name) {
            out.push(
                Level::Warning,
                code::DUPLICATE_CATALOG_TOOL,
                S,
                format!("tool {name} is listed more than once; the first entry is used"),
            );
        }
        // Importers derive catalogs from tool names alone; the description is the agent's job.
        if tool.description.is_none() && !derived {
            out.missing_in(&format!("{T} {name}"), &at, "description", S);
        }
        if let Some(cat) = tool.category.as_ref().filter(|c| !c.is_known()) {
            out.push(
                Level::Warning,
                code::UNKNOWN_ENUM_VALUE,
                S,
                format!(
                    "tool {name} has category {}, not a SPEC 3.5 value",
                    Quoted(cat.as_str())
                ),
            );
        }
        if let Some(ot) = tool.output_type.as_ref().filter(|o| !o.is_known()) {
            out.push(
                Level::Warning,
                code::UNKNOWN_ENUM_VALUE,
                "SPEC 3.4",
                format!(
                    "tool {name} declares output_type {}, not a SPEC 3.4 value",
                    Quoted(ot.as_str())
                ),
            );
        }
        let status = tool.effective_status();
        match &status {
            ToolStatus::Unknown(s) => out.push(
                Level::Warning,
                code::UNKNOWN_ENUM_VALUE,
                S,
                format!(
                    "tool {name} has status {}, not available, unavailable or degraded",
                    Quoted(s)
                ),
            ),
            ToolStatus::Unavailable | ToolStatus::Degraded => {
                if tool.status_description.is_none() {
                    out.push(
                        Level::Warning,
                        code::STATUS_DESCRIPTION_MISSING,
                        S,
                        format!("tool {name} is {status} without a status_description"),
                    );
                }
            }
            ToolStatus::Available => {}
        }
    }
    for (i, d) in c.diagnostics.iter().enumerate() {
        let what = format!("tool.catalog.publish diagnostic #{i}");
        let at = format!("diagnostics[{i}].");
        match &d.severity {
            None => out.missing_in(&what, &at, "severity", S),
            Some(s) if !s.is_known() => out.push(
                Level::Error,
                code::UNKNOWN_ENUM_VALUE,
                S,
                format!(
                    "{what} has severity {}, not info, warning, error or fatal",
                    Quoted(s.as_str())
                ),
            ),
            Some(_) => {}
        }
        if d.code.is_none() {
            out.missing_in(&what, &at, "code", S);
        }
        if d.message.is_none() {
            out.missing_in(&what, &at, "message", S);
        }
    }
}

/// The JSON kind of `v` in a finding's words ("a string", "a number"…).
pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_v4_detection() {
        assert!(is_uuid_v4("6f1c2b1e-8a4d-4c55-9e1a-0b7a3c2d4e5f"));
        // version 1
        assert!(!is_uuid_v4("6f1c2b1e-8a4d-1c55-9e1a-0b7a3c2d4e5f"));
        // version 4, variant nibble c (Microsoft's), not 8–b
        assert!(!is_uuid_v4("6f1c2b1e-8a4d-4c55-ce1a-0b7a3c2d4e5f"));
        assert!(is_uuid_v4("6F1C2B1E-8A4D-4C55-BE1A-0B7A3C2D4E5F"));
        assert!(!is_uuid_v4("toolu_01ABC"));
        assert!(!is_uuid_v4(""));
    }

    #[test]
    fn codes_are_unique() {
        let mut v = code::ALL.to_vec();
        v.sort_unstable();
        v.dedup();
        assert_eq!(v.len(), code::ALL.len());
    }
}
