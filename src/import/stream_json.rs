//! Claude Code headless output (`claude -p --output-format stream-json`) → RAWP frames.
//!
//! Who calls it: `crate::import` (`decoder_for(Format::ClaudeStreamJson)`) for files, stdin
//! and live pipes.
//!
//! Mapping:
//! * `system/init` → `tool.catalog.publish` of its `tools` (categories from
//!   `rules::known_category`) with one diagnostic per MCP server that is not `connected`
//!   (`failed` → severity `error`, others `warning`); its tools are marked `unavailable`;
//! * `assistant` / `user` → the Claude Code message mapping (`super::cc_map`); a message with
//!   `parent_tool_use_id` belongs to the subagent started by that Task call
//!   (`metadata.delegation_chain`);
//! * `result` → `session.turn.end` (`stop_reason` `end_turn`, or `error` when `is_error`) and a
//!   `session.usage` with `scope: "session_total"` (the run's total usage and cost; per-message
//!   usage frames come from the assistant messages);
//! * other `system` subtypes, `stream_event` and unknown records → `x-claude-code.*` frames.
//!
//! Invariants: line by line (nothing waits for the end of input except usage of the last API
//! message); never panics; bad lines are `Decoded::Malformed`.

use serde_json::{Map, Value, json};

use super::cc_map::RecCtx;
use super::claude_code::ClaudeCodeDecoder;
use super::{Decoded, Decoder};
use crate::protocol::rules::known_category;
use crate::protocol::{
    Body, CatalogDiagnostic, CatalogPublish, CatalogTool, FrameType, ParseError, ParseErrorKind,
    Severity, ToolStatus,
};

/// Decodes stream-json records one line at a time.
#[derive(Debug)]
pub struct StreamJsonDecoder {
    inner: ClaudeCodeDecoder,
}

impl Default for StreamJsonDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl StreamJsonDecoder {
    pub fn new() -> Self {
        let mut inner = ClaudeCodeDecoder::new();
        // stream-json records carry no timestamps: never wait for one.
        inner.hold_for_timestamp = false;
        Self { inner }
    }

    fn init(&mut self, v: &Value, line: u64, out: &mut Vec<Decoded>) {
        self.inner.derive_catalog = false;
        let mut diagnostics = Vec::new();
        let mut down: Vec<String> = Vec::new();
        for s in v
            .get("mcp_servers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = s.get("name").and_then(Value::as_str).unwrap_or("?");
            let status = s.get("status").and_then(Value::as_str).unwrap_or("unknown");
            if status == "connected" {
                continue;
            }
            down.push(format!("mcp__{name}__"));
            let severity = if status == "failed" {
                Severity::Error
            } else {
                Severity::Warning
            };
            diagnostics.push(CatalogDiagnostic {
                severity: Some(severity),
                tool_name: None,
                code: Some(format!(
                    "MCP_SERVER_{}",
                    status.to_ascii_uppercase().replace('-', "_")
                )),
                message: Some(format!("MCP server {name:?} is {status}")),
                extra: Map::new(),
            });
        }
        let tools = v
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str().or_else(|| t.get("name").and_then(Value::as_str)))
            .map(|name| {
                let unavailable = down.iter().any(|p| name.starts_with(p.as_str()));
                CatalogTool {
                    name: name.to_owned(),
                    description: Some(String::new()),
                    category: known_category(name),
                    status: unavailable.then_some(ToolStatus::Unavailable),
                    status_description: unavailable
                        .then(|| "its MCP server is not connected".to_owned()),
                    ..Default::default()
                }
            })
            .collect();
        let mut extra = Map::new();
        for k in [
            "model",
            "cwd",
            "permissionMode",
            "claude_code_version",
            "mcp_servers",
        ] {
            if let Some(x) = v.get(k) {
                extra.insert(k.to_owned(), x.clone());
            }
        }
        let body = Body::Catalog(CatalogPublish {
            tools,
            diagnostics,
            extra,
        });
        let ctx = RecCtx {
            line,
            chain: &[],
            file: None,
            last_of_message: false,
            in_file: false,
        };
        let f = self
            .inner
            .mapper
            .frame(FrameType::ToolCatalogPublish, body, Some(v), &ctx, None);
        out.push(Decoded::frame(f));
    }

    fn result(&mut self, v: &Value, line: u64, out: &mut Vec<Decoded>) {
        let ctx = RecCtx {
            line,
            chain: &[],
            file: None,
            last_of_message: false,
            in_file: false,
        };
        let is_error = v.get("is_error").and_then(Value::as_bool) == Some(true);
        let mut end = Map::new();
        end.insert(
            "stop_reason".into(),
            json!(if is_error { "error" } else { "end_turn" }),
        );
        for k in ["subtype", "result", "num_turns", "duration_ms", "is_error"] {
            if let Some(x) = v.get(k) {
                end.insert(k.to_owned(), x.clone());
            }
        }
        let mut usage = v
            .get("usage")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        usage.insert("scope".into(), json!("session_total"));
        for k in [
            "total_cost_usd",
            "duration_ms",
            "duration_api_ms",
            "modelUsage",
        ] {
            if let Some(x) = v.get(k) {
                usage.insert(k.to_owned(), x.clone());
            }
        }
        let f = self.inner.mapper.frame(
            FrameType::SessionUsage,
            Body::Generic(usage),
            Some(v),
            &ctx,
            None,
        );
        out.push(Decoded::frame(f));
        let f = self.inner.mapper.frame(
            FrameType::SessionTurnEnd,
            Body::Generic(end),
            Some(v),
            &ctx,
            None,
        );
        out.push(Decoded::frame(f));
    }
}

impl Decoder for StreamJsonDecoder {
    fn line(&mut self, line: u64, text: &str, out: &mut Vec<Decoded>) {
        if text.trim().is_empty() {
            return;
        }
        let v = match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => {
                let e = ParseError::new(line, ParseErrorKind::NotObject, text);
                out.push(Decoded::Malformed(e));
                return;
            }
            Err(e) => {
                let e = ParseError::new(line, ParseErrorKind::Json(e.to_string()), text);
                out.push(Decoded::Malformed(e));
                return;
            }
        };
        let ty = v.get("type").and_then(Value::as_str);
        let sub = v.get("subtype").and_then(Value::as_str);
        match (ty, sub) {
            (Some("system"), Some("init")) => self.init(&v, line, out),
            (Some("result"), _) => {
                self.inner.finish_messages(out);
                self.result(&v, line, out);
            }
            (Some("stream_event"), _) => {
                // Partial-message events: shown raw; the complete messages follow anyway.
                self.inner.record_ext(&v, "stream_event", line, out);
            }
            _ => self.inner.record(&v, line, out),
        }
    }

    fn finish(&mut self, out: &mut Vec<Decoded>) {
        self.inner.finish(out);
    }
}
