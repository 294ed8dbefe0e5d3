//! The typed payloads of the tool frames as they are on the wire: borrowed serde structs whose
//! every field is read leniently (SPEC 2), and their conversion to the model
//! ([`crate::protocol::model`]) with one [`FieldError`] per field of the wrong JSON type.
//!
//! Who calls it: `super` only (the line reader and [`super::frame_from_value`]), with any serde
//! deserializer: the line's text (strings borrowed from it) or an already-parsed `Value`.
//!
//! Invariants:
//! * A field of the wrong type never fails the payload: it is read as absent and reported
//!   (its path, what SPEC 3 asks, what the line holds). Its value is validated like any JSON
//!   (so a line is valid or not whichever type its fields have) but not built.
//! * `null` is absent, as before: `Option` fields of the model hold `None` for it (but a
//!   result's `output: null` is present, `Some(Value::Null)`).
//! * Unknown fields land in `extra` (`#[serde(flatten)]`, which costs nothing when there are
//!   none); a repeated known field is an error here, and the caller then reads the line as a
//!   `Value` (the last value wins) and comes back through the same structs.
//! * With [`Skipped`] as a result's output type the output is validated but not built: its
//!   [`OutputShape`] is kept (see `super::ParseOptions::skip_output`).

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::super::model::{
    CatalogDiagnostic, CatalogPublish, CatalogTool, Category, FieldError, OutputShape, OutputType,
    ResultStatus, Severity, StreamType, ToolInvokeRequest, ToolInvokeResult, ToolInvokeStream,
    ToolStatus,
};

/// One field as read: absent (or `null`), of the type the spec asks, or of another JSON type
/// (its kind, e.g. `"a number"`).
#[derive(Debug, Default)]
pub(super) enum Lenient<T> {
    #[default]
    Absent,
    Ok(T),
    Wrong(&'static str),
}

/// A type a [`Lenient`] field may hold: which JSON kinds it accepts and how it is built from
/// them. The defaults refuse every kind.
pub(super) trait Expect<'de>: Sized {
    /// What the spec asks, for findings ("a string").
    const EXPECTED: &'static str;
    fn from_str(_: Cow<'de, str>) -> Option<Self> {
        None
    }
    fn from_u64(_: u64) -> Option<Self> {
        None
    }
    fn from_i64(_: i64) -> Option<Self> {
        None
    }
    fn from_f64(_: f64) -> Option<Self> {
        None
    }
    fn from_bool(_: bool) -> Option<Self> {
        None
    }
    /// An object: `None` after validating it when the type is not one.
    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Option<Self>, A::Error> {
        Skip::deserialize(MapAccessDeserializer::new(map)).map(|_| None)
    }
    /// An array: `None` after validating it when the type is not one.
    fn from_seq<A: SeqAccess<'de>>(seq: A) -> Result<Option<Self>, A::Error> {
        Skip::deserialize(SeqAccessDeserializer::new(seq)).map(|_| None)
    }
}

impl<'a, 'de: 'a> Expect<'de> for Cow<'a, str> {
    const EXPECTED: &'static str = "a string";
    fn from_str(s: Cow<'de, str>) -> Option<Self> {
        Some(s)
    }
}

impl Expect<'_> for u64 {
    const EXPECTED: &'static str = "a non-negative integer";
    fn from_u64(n: u64) -> Option<Self> {
        Some(n)
    }
}

impl Expect<'_> for f64 {
    const EXPECTED: &'static str = "a number";
    #[allow(clippy::cast_precision_loss)] // what serde_json does for an `f64` field
    fn from_u64(n: u64) -> Option<Self> {
        Some(n as Self)
    }
    #[allow(clippy::cast_precision_loss)]
    fn from_i64(n: i64) -> Option<Self> {
        Some(n as Self)
    }
    fn from_f64(n: f64) -> Option<Self> {
        Some(n)
    }
}

impl Expect<'_> for bool {
    const EXPECTED: &'static str = "a boolean";
    fn from_bool(b: bool) -> Option<Self> {
        Some(b)
    }
}

impl<'de, T: Deserialize<'de>> Expect<'de> for Vec<T> {
    const EXPECTED: &'static str = "an array";
    fn from_seq<A: SeqAccess<'de>>(seq: A) -> Result<Option<Self>, A::Error> {
        Self::deserialize(SeqAccessDeserializer::new(seq)).map(Some)
    }
}

/// Objects read as their own lenient struct.
macro_rules! expect_object {
    ($($t:ident),+) => {$(
        impl<'a, 'de: 'a> Expect<'de> for $t<'a> {
            const EXPECTED: &'static str = "an object";
            fn from_map<A: MapAccess<'de>>(map: A) -> Result<Option<Self>, A::Error> {
                $t::deserialize(MapAccessDeserializer::new(map)).map(Some)
            }
        }
    )+};
}
expect_object!(Tool, Diagnostic);

impl<'de, T: Expect<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LenientVisitor(std::marker::PhantomData))
    }
}

struct LenientVisitor<T>(std::marker::PhantomData<T>);

fn pick<T>(v: Option<T>, found: &'static str) -> Lenient<T> {
    v.map_or(Lenient::Wrong(found), Lenient::Ok)
}

impl<'de, T: Expect<'de>> Visitor<'de> for LenientVisitor<T> {
    type Value = Lenient<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Lenient::Absent)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Lenient::Absent)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(pick(T::from_bool(v), "a boolean"))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(pick(T::from_u64(v), "a number"))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(pick(T::from_i64(v), "a number"))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(pick(T::from_f64(v), "a number"))
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(pick(T::from_str(Cow::Borrowed(v)), "a string"))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(pick(T::from_str(Cow::Owned(v.to_owned())), "a string"))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(pick(T::from_str(Cow::Owned(v)), "a string"))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::from_map(map).map(|v| pick(v, "an object"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        T::from_seq(seq).map(|v| pick(v, "an array"))
    }
}

/// `tool.invoke.request` payload (SPEC 3.1).
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Request<'a> {
    #[serde(borrow)]
    invocation_id: Lenient<Cow<'a, str>>,
    #[serde(borrow)]
    tool_name: Lenient<Cow<'a, str>>,
    #[serde(borrow)]
    tool_version: Lenient<Cow<'a, str>>,
    /// Present, even `null`: `Some` (a `null` input is not an object, not a missing one).
    #[serde(deserialize_with = "present")]
    input: Option<Value>,
    #[serde(borrow)]
    parallel_group_id: Lenient<Cow<'a, str>>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

/// `tool.invoke.stream` payload (SPEC 3.3).
#[allow(clippy::struct_field_names)] // the wire's names
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Stream<'a> {
    #[serde(borrow)]
    invocation_id: Lenient<Cow<'a, str>>,
    #[serde(borrow)]
    tool_name: Lenient<Cow<'a, str>>,
    #[serde(borrow)]
    stream_type: Lenient<Cow<'a, str>>,
    #[serde(borrow)]
    chunk: Lenient<Cow<'a, str>>,
    sequence: Lenient<u64>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

/// `tool.invoke.result` payload (SPEC 3.2); `O` is `Value`, or [`Skipped`] when the output is
/// not built.
#[derive(Deserialize)]
#[serde(default, bound(deserialize = "O: Deserialize<'de>"))]
pub(super) struct ResultBody<'a, O> {
    #[serde(borrow)]
    invocation_id: Lenient<Cow<'a, str>>,
    #[serde(borrow)]
    tool_name: Lenient<Cow<'a, str>>,
    #[serde(borrow)]
    status: Lenient<Cow<'a, str>>,
    /// Present, even `null`: `Some`.
    #[serde(deserialize_with = "present")]
    output: Option<O>,
    #[serde(borrow)]
    output_type: Lenient<Cow<'a, str>>,
    duration_ms: Lenient<f64>,
    truncated: Lenient<bool>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

impl<O> Default for ResultBody<'_, O> {
    fn default() -> Self {
        Self {
            invocation_id: Lenient::Absent,
            tool_name: Lenient::Absent,
            status: Lenient::Absent,
            output: None,
            output_type: Lenient::Absent,
            duration_ms: Lenient::Absent,
            truncated: Lenient::Absent,
            extra: Map::new(),
        }
    }
}

fn present<'de, D: Deserializer<'de>, O: Deserialize<'de>>(d: D) -> Result<Option<O>, D::Error> {
    O::deserialize(d).map(Some)
}

/// `tool.catalog.publish` payload (SPEC 3.5).
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Catalog<'a> {
    #[serde(borrow)]
    tools: Lenient<Vec<Lenient<Tool<'a>>>>,
    #[serde(borrow)]
    diagnostics: Lenient<Vec<Lenient<Diagnostic<'a>>>>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

/// One `tools[]` entry.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Tool<'a> {
    #[serde(borrow)]
    name: Lenient<Cow<'a, str>>,
    #[serde(borrow)]
    version: Lenient<Cow<'a, str>>,
    #[serde(borrow)]
    description: Lenient<Cow<'a, str>>,
    input_schema: Option<Value>,
    #[serde(borrow)]
    output_type: Lenient<Cow<'a, str>>,
    requires_approval: Lenient<bool>,
    #[serde(borrow)]
    category: Lenient<Cow<'a, str>>,
    #[serde(borrow)]
    status: Lenient<Cow<'a, str>>,
    #[serde(borrow)]
    status_description: Lenient<Cow<'a, str>>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

/// One `diagnostics[]` entry.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Diagnostic<'a> {
    #[serde(borrow)]
    severity: Lenient<Cow<'a, str>>,
    #[serde(borrow)]
    tool_name: Lenient<Cow<'a, str>>,
    #[serde(borrow)]
    code: Lenient<Cow<'a, str>>,
    #[serde(borrow)]
    message: Lenient<Cow<'a, str>>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

/// Collects the field errors of one payload; `prefix` is the path of the object being read
/// (`""`, `"tools[2]."`).
struct Errors<'e> {
    out: &'e mut Vec<FieldError>,
    prefix: String,
}

impl Errors<'_> {
    /// The value of `f`, or `None` with a [`FieldError`] when it had the wrong type.
    fn take<'de, T: Expect<'de>>(
        &mut self,
        f: Lenient<T>,
        name: &str,
        required: bool,
    ) -> Option<T> {
        match f {
            Lenient::Absent => None,
            Lenient::Ok(v) => Some(v),
            Lenient::Wrong(found) => {
                self.out.push(FieldError {
                    field: format!("{}{name}", self.prefix),
                    expected: T::EXPECTED,
                    found,
                    required,
                });
                None
            }
        }
    }

    /// An optional field that must be a JSON object (a catalog entry's `input_schema`, SPEC
    /// 3.5): any other kind is a [`FieldError`] and reads as absent (`null` as absent too).
    fn object(&mut self, v: Option<Value>, name: &str) -> Option<Value> {
        let found = match v? {
            v @ Value::Object(_) => return Some(v),
            Value::Null => return None,
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
        };
        self.out.push(FieldError {
            field: format!("{}{name}", self.prefix),
            expected: "an object",
            found,
            required: false,
        });
        None
    }

    fn string(&mut self, f: Lenient<Cow<'_, str>>, name: &str, required: bool) -> Option<String> {
        self.take(f, name, required).map(Cow::into_owned)
    }

    fn wire<T>(
        &mut self,
        f: Lenient<Cow<'_, str>>,
        name: &str,
        required: bool,
        from: fn(&str) -> T,
    ) -> Option<T> {
        self.take(f, name, required).map(|s| from(&s))
    }
}

/// Whether `extra` holds `super::RAW_VALUE_TOKEN` (see there).
fn token_in(extra: &Map<String, Value>) -> bool {
    extra.contains_key(super::RAW_VALUE_TOKEN)
}

impl Request<'_> {
    pub(super) fn holds_token(&self) -> bool {
        token_in(&self.extra)
    }
}

impl Stream<'_> {
    pub(super) fn holds_token(&self) -> bool {
        token_in(&self.extra)
    }
}

impl<O> ResultBody<'_, O> {
    pub(super) fn holds_token(&self) -> bool {
        token_in(&self.extra)
    }
}

impl Catalog<'_> {
    pub(super) fn holds_token(&self) -> bool {
        let entries = |l: &Lenient<Vec<Lenient<Tool<'_>>>>| match l {
            Lenient::Ok(v) => v
                .iter()
                .any(|t| matches!(t, Lenient::Ok(t) if token_in(&t.extra))),
            _ => false,
        };
        let diags = match &self.diagnostics {
            Lenient::Ok(v) => v
                .iter()
                .any(|d| matches!(d, Lenient::Ok(d) if token_in(&d.extra))),
            _ => false,
        };
        token_in(&self.extra) || entries(&self.tools) || diags
    }
}

impl Request<'_> {
    pub(super) fn into_model(self, out: &mut Vec<FieldError>) -> ToolInvokeRequest {
        let mut e = Errors {
            out,
            prefix: String::new(),
        };
        ToolInvokeRequest {
            invocation_id: e.string(self.invocation_id, "invocation_id", true),
            tool_name: e.string(self.tool_name, "tool_name", true),
            tool_version: e.string(self.tool_version, "tool_version", false),
            input: self.input,
            parallel_group_id: e.string(self.parallel_group_id, "parallel_group_id", false),
            extra: self.extra,
        }
    }
}

impl Stream<'_> {
    pub(super) fn into_model(self, out: &mut Vec<FieldError>) -> ToolInvokeStream {
        let mut e = Errors {
            out,
            prefix: String::new(),
        };
        ToolInvokeStream {
            invocation_id: e.string(self.invocation_id, "invocation_id", true),
            tool_name: e.string(self.tool_name, "tool_name", true),
            stream_type: e.wire(self.stream_type, "stream_type", true, StreamType::from_wire),
            chunk: e.string(self.chunk, "chunk", true),
            sequence: e.take(self.sequence, "sequence", true),
            extra: self.extra,
        }
    }
}

impl<O: Into<Value>> ResultBody<'_, O> {
    /// The model's result, and whether the output was a [`Skipped`] stand-in.
    pub(super) fn into_model(self, out: &mut Vec<FieldError>) -> ToolInvokeResult {
        let mut e = Errors {
            out,
            prefix: String::new(),
        };
        ToolInvokeResult {
            invocation_id: e.string(self.invocation_id, "invocation_id", true),
            tool_name: e.string(self.tool_name, "tool_name", true),
            status: e.wire(self.status, "status", true, ResultStatus::from_wire),
            output: self.output.map(Into::into),
            output_type: e.wire(self.output_type, "output_type", true, OutputType::from_wire),
            duration_ms: e.take(self.duration_ms, "duration_ms", false),
            truncated: e.take(self.truncated, "truncated", false),
            extra: self.extra,
        }
    }
}

impl Catalog<'_> {
    pub(super) fn into_model(self, out: &mut Vec<FieldError>) -> CatalogPublish {
        let mut e = Errors {
            out,
            prefix: String::new(),
        };
        let tools = e.take(self.tools, "tools", true).unwrap_or_default();
        let diagnostics = e
            .take(self.diagnostics, "diagnostics", false)
            .unwrap_or_default();
        let mut c = CatalogPublish {
            tools: Vec::with_capacity(tools.len()),
            diagnostics: Vec::with_capacity(diagnostics.len()),
            extra: self.extra,
        };
        for (i, t) in tools.into_iter().enumerate() {
            e.prefix.clear();
            if let Some(t) = e.take(t, &format!("tools[{i}]"), true) {
                e.prefix = format!("tools[{i}].");
                c.tools.push(t.into_model(&mut e));
            }
        }
        for (i, d) in diagnostics.into_iter().enumerate() {
            e.prefix.clear();
            if let Some(d) = e.take(d, &format!("diagnostics[{i}]"), false) {
                e.prefix = format!("diagnostics[{i}].");
                c.diagnostics.push(d.into_model(&mut e));
            }
        }
        c
    }
}

impl Tool<'_> {
    fn into_model(self, e: &mut Errors<'_>) -> CatalogTool {
        CatalogTool {
            name: e.string(self.name, "name", true).unwrap_or_default(),
            version: e.string(self.version, "version", false),
            description: e.string(self.description, "description", true),
            input_schema: e.object(self.input_schema, "input_schema"),
            output_type: e.wire(
                self.output_type,
                "output_type",
                false,
                OutputType::from_wire,
            ),
            requires_approval: e.take(self.requires_approval, "requires_approval", false),
            category: e.wire(self.category, "category", false, Category::from_wire),
            status: e.wire(self.status, "status", false, ToolStatus::from_wire),
            status_description: e.string(self.status_description, "status_description", false),
            extra: self.extra,
        }
    }
}

impl Diagnostic<'_> {
    fn into_model(self, e: &mut Errors<'_>) -> CatalogDiagnostic {
        CatalogDiagnostic {
            severity: e.wire(self.severity, "severity", true, Severity::from_wire),
            tool_name: e.string(self.tool_name, "tool_name", false),
            code: e.string(self.code, "code", true),
            message: e.string(self.message, "message", true),
            extra: self.extra,
        }
    }
}

/// A result's output read without being built: its shape (see the module doc).
pub(super) struct Skipped(pub(super) OutputShape);

impl From<Skipped> for Value {
    fn from(s: Skipped) -> Self {
        s.0.stand_in()
    }
}

impl<'de> Deserialize<'de> for Skipped {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ShapeVisitor).map(Skipped)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = OutputShape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<OutputShape, E> {
        Ok(OutputShape::Null)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<OutputShape, E> {
        Ok(OutputShape::Bool)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<OutputShape, E> {
        Ok(OutputShape::Number)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<OutputShape, E> {
        Ok(OutputShape::Number)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<OutputShape, E> {
        Ok(OutputShape::Number)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<OutputShape, E> {
        Ok(OutputShape::String {
            empty: v.is_empty(),
        })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<OutputShape, A::Error> {
        let (mut empty, mut all_strings) = (true, true);
        while let Some(Skip(is_str)) = seq.next_element()? {
            empty = false;
            all_strings &= is_str;
        }
        Ok(OutputShape::Array { empty, all_strings })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OutputShape, A::Error> {
        let mut empty = true;
        while map.next_entry::<Skip, Skip>()?.is_some() {
            empty = false;
        }
        Ok(OutputShape::Object { empty })
    }
}

/// Any JSON value validated as a real parse would (strings unescaped, numbers parsed) without
/// being built; holds whether it was a string. (Read with the [`OutputShape`] visitor, whose
/// result is simply not kept.)
pub(super) struct Skip(pub(super) bool);

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ShapeVisitor)
            .map(|s| Self(matches!(s, OutputShape::String { .. })))
    }
}

/// Reads a payload of a known frame type from any deserializer (see [`super::Read`]).
pub(super) struct PayloadSeed<'t> {
    pub(super) frame_type: &'t super::FrameType,
    pub(super) skip_output: bool,
}

impl<'de> DeserializeSeed<'de> for PayloadSeed<'_> {
    type Value = super::Read<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        use super::{FrameType as T, Read};
        Ok(match self.frame_type {
            T::ToolInvokeRequest => Read::Request(Request::deserialize(d)?),
            T::ToolInvokeStream => Read::Stream(Stream::deserialize(d)?),
            T::ToolInvokeResult if self.skip_output => Read::Skipped(ResultBody::deserialize(d)?),
            T::ToolInvokeResult => Read::Result(ResultBody::deserialize(d)?),
            T::ToolCatalogPublish => Read::Catalog(Catalog::deserialize(d)?),
            _ => Read::Value(Value::deserialize(d)?),
        })
    }
}
