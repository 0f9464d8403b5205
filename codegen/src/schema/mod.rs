//! JSON Schemas and tool definitions for model providers.
//!
//! [`portable`] is the subset every provider accepts: an object schema with `properties`,
//! `required` (always an array), `additionalProperties: false`, enums as
//! `{type: "string", enum: [...]}` (never `const`/`oneOf`/`anyOf`), a description on every
//! property and defaults carried. [`Dialect`]s wrap or adjust it per provider.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

use crate::model::{Input, InputType, OutputField, OutputType, ToolSpec};

mod dialect;

pub use dialect::Dialect;

/// The text a sensitive input's description ends with, in every schema.
pub const SENSITIVE_NOTE: &str =
    "Sensitive: pass it only when the user supplied it; it is never logged.";

// Schemas are serialised straight from the model (no intermediate `serde_json::Value`):
// for a folder of 1,000 tools that is ~5x faster than building and dropping Values. The
// `Value`-returning functions below go through the same `Serialize` impls.

/// A tool's params schema in a dialect.
struct Params<'a> {
    tool: &'a ToolSpec,
    dialect: Dialect,
}

struct Props<'a> {
    fields: &'a [Input],
    dialect: Dialect,
}

struct Prop<'a> {
    input: &'a Input,
    dialect: Dialect,
}

/// A provider type keyword: `"string"`, or `["string", "null"]` for OpenAI strict.
struct TypeKw {
    ty: &'static str,
    nullable: bool,
}

struct EnumValues<'a> {
    input: &'a Input,
    with_null: bool,
}

struct Names<'a> {
    inputs: &'a [Input],
    all: bool,
}

/// `properties`, `required` and `additionalProperties: false` of an object over `fields`
/// (the arguments, or an object input), as the dialect wants them.
fn object_entries<M: SerializeMap>(
    m: &mut M,
    fields: &[Input],
    dialect: Dialect,
) -> Result<(), M::Error> {
    let gemini = dialect == Dialect::Gemini;
    let strict = dialect.strict_params();
    m.serialize_entry("properties", &Props { fields, dialect })?;
    // Gemini rejects an empty `required`; everyone else gets it always, as an array.
    if !gemini || fields.iter().any(Input::required) {
        m.serialize_entry(
            "required",
            &Names {
                inputs: fields,
                all: strict,
            },
        )?;
    }
    if !gemini {
        m.serialize_entry("additionalProperties", &false)?;
    }
    Ok(())
}

impl Serialize for Params<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("type", "object")?;
        object_entries(&mut m, &self.tool.inputs, self.dialect)?;
        m.end()
    }
}

impl Serialize for Props<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.fields.len()))?;
        for input in self.fields {
            m.serialize_entry(
                &input.name,
                &Prop {
                    input,
                    dialect: self.dialect,
                },
            )?;
        }
        m.end()
    }
}

/// A number as JSON: a whole one as an integer (`1`, not `1.0`).
fn json_number(f: f64) -> Value {
    match crate::model::whole(f) {
        Some(i) => Value::from(i),
        None => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
    }
}

impl Serialize for Prop<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let input = self.input;
        let strict = self.dialect.strict_params();
        let gemini = self.dialect == Dialect::Gemini;
        // An array's items are never left out; anything else optional is `null` in strict.
        let nullable = input.nullable || (strict && !input.name.is_empty() && !input.required());
        let mut m = s.serialize_map(None)?;
        let ty = match (input.ty, &input.constant) {
            (InputType::Const, Some(c)) => const_type(c),
            (t, _) => t.json_type(),
        };
        if ty.is_none() && !input.json_types.is_empty() && !gemini && !strict {
            // A union of primitives, as the server's schema says it.
            let mut types: Vec<&str> = input.json_types.iter().map(String::as_str).collect();
            if nullable {
                types.push("null");
            }
            m.serialize_entry("type", &types)?;
        }
        if let Some(ty) = ty {
            if gemini {
                m.serialize_entry("type", ty)?;
                if nullable {
                    m.serialize_entry("nullable", &true)?;
                }
            } else {
                m.serialize_entry("type", &TypeKw { ty, nullable })?;
            }
        }
        let const_as_enum = input.ty == InputType::Const && (strict || gemini);
        // Strict takes an enum of any JSON values; Gemini's enums are strings only.
        let enum_const =
            const_as_enum && (strict || matches!(input.constant, Some(Value::String(_))));
        if input.ty == InputType::Enum {
            if gemini {
                m.serialize_entry("format", "enum")?;
            }
            m.serialize_entry(
                "enum",
                &EnumValues {
                    input,
                    with_null: nullable && !gemini,
                },
            )?;
        } else if enum_const && let Some(c) = &input.constant {
            if gemini {
                m.serialize_entry("format", "enum")?;
            }
            let mut values = vec![c.clone()];
            if nullable && !gemini {
                values.push(Value::Null);
            }
            m.serialize_entry("enum", &values)?;
        }
        let desc = self.description(const_as_enum, enum_const);
        if !desc.is_empty() {
            m.serialize_entry("description", &desc)?;
        }
        self.nested_entries(&mut m, const_as_enum)?;
        self.bound_entries(&mut m)?;
        m.end()
    }
}

impl Prop<'_> {
    /// What a property holds inside it: an object's properties, an array's `items`, a
    /// map's `additionalProperties`, a constant's `const`.
    fn nested_entries<M: SerializeMap>(
        &self,
        m: &mut M,
        const_as_enum: bool,
    ) -> Result<(), M::Error> {
        let input = self.input;
        let gemini = self.dialect == Dialect::Gemini;
        match input.ty {
            InputType::Object => object_entries(m, &input.properties, self.dialect)?,
            InputType::Array => {
                if let Some(items) = &input.items {
                    m.serialize_entry(
                        "items",
                        &Prop {
                            input: items,
                            dialect: self.dialect,
                        },
                    )?;
                }
            }
            InputType::Map if !gemini => {
                if let Some(items) = &input.items {
                    m.serialize_entry(
                        "additionalProperties",
                        &Prop {
                            input: items,
                            dialect: self.dialect,
                        },
                    )?;
                }
            }
            InputType::Const if !const_as_enum => {
                m.serialize_entry("const", &input.constant)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// The bounds and the default, which strict mode (and, for the default, Gemini) does
    /// not take.
    fn bound_entries<M: SerializeMap>(&self, m: &mut M) -> Result<(), M::Error> {
        let input = self.input;
        let strict = self.dialect.strict_params();
        let gemini = self.dialect == Dialect::Gemini;
        if !strict {
            for (k, v) in [("minimum", input.minimum), ("maximum", input.maximum)] {
                if let Some(v) = v {
                    m.serialize_entry(k, &json_number(v))?;
                }
            }
            for (k, v) in [("minItems", input.min_items), ("maxItems", input.max_items)] {
                if let Some(v) = v {
                    m.serialize_entry(k, &v)?;
                }
            }
        }
        if !strict
            && !gemini
            && let Some(d) = input.public_default()
        {
            m.serialize_entry("default", d)?;
        }
        Ok(())
    }

    /// The property's description with what this dialect cannot say in the schema said in
    /// words: sensitivity, strict mode's dropped constraints, a constant that is not an
    /// enum, Gemini's free-keyed map, a default strict mode and Gemini do not take.
    fn description(&self, const_as_enum: bool, enum_const: bool) -> std::borrow::Cow<'_, str> {
        let input = self.input;
        let strict = self.dialect.strict_params();
        let gemini = self.dialect == Dialect::Gemini;
        let mut desc = std::borrow::Cow::Borrowed(input.description.as_str());
        if input.sensitive {
            desc = format!("{} ({SENSITIVE_NOTE})", desc.trim_end()).into();
        }
        // Strict OpenAI drops the constraints (not every strict-mode model takes them):
        // they are said in the description, and the runtime still enforces them.
        if strict && let Some(c) = input.constraint_text() {
            desc = join_note(&desc, &c).into();
        }
        if const_as_enum && !enum_const {
            let c = input.constant.clone().unwrap_or_default();
            desc = join_note(&desc, &format!("always {c}")).into();
        }
        if gemini && input.ty == InputType::Map {
            desc = join_note(&desc, "an object whose keys are free").into();
        }
        // Strict OpenAI and Gemini take no `default`: say it in the description instead.
        match (input.public_default(), self.dialect) {
            (Some(d), Dialect::OpenAiStrict | Dialect::OpenAiResponsesStrict) => {
                desc = format!("{desc} (default: {d}; send null for the default)").into();
            }
            (Some(d), Dialect::Gemini) => desc = format!("{desc} (default: {d})").into(),
            _ => {}
        }
        desc
    }
}

/// `text (note)`, or the note alone for an empty text.
fn join_note(text: &str, note: &str) -> String {
    if text.trim().is_empty() {
        note.to_owned()
    } else {
        format!("{} ({note})", text.trim_end())
    }
}

/// The JSON Schema type of a constant's value.
fn const_type(v: &Value) -> Option<&'static str> {
    match v {
        Value::Null => Some("null"),
        Value::Bool(_) => Some("boolean"),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some("integer"),
        Value::Number(_) => Some("number"),
        Value::String(_) => Some("string"),
        Value::Array(_) => Some("array"),
        Value::Object(_) => Some("object"),
    }
}

impl Serialize for TypeKw {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.nullable && self.ty != "null" {
            [self.ty, "null"].serialize(s)
        } else {
            s.serialize_str(self.ty)
        }
    }
}

impl Serialize for EnumValues<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for v in &self.input.values {
            seq.serialize_element(&v.wire)?;
        }
        if self.with_null {
            seq.serialize_element(&())?;
        }
        seq.end()
    }
}

impl Serialize for Names<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for i in self.inputs.iter().filter(|i| self.all || i.required()) {
            seq.serialize_element(&i.name)?;
        }
        seq.end()
    }
}

/// An object of declared outputs: `{type: "object", properties, required}`. Fields not
/// declared may be present (no `additionalProperties: false`): a tool may return more than
/// it promises.
struct OutputObject<'a>(&'a [OutputField]);

/// One declared output: its type (with `null` allowed when optional), enum values,
/// description, and an object's properties or an array's items.
struct OutputProp<'a>(&'a OutputField);

struct OutputProps<'a>(&'a [OutputField]);

struct OutputRequired<'a>(&'a [OutputField]);

struct OutputEnum<'a> {
    values: &'a [crate::model::EnumValue],
    with_null: bool,
}

impl Serialize for OutputObject<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("type", "object")?;
        m.serialize_entry("properties", &OutputProps(self.0))?;
        m.serialize_entry("required", &OutputRequired(self.0))?;
        m.end()
    }
}

impl Serialize for OutputProps<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for f in self.0 {
            m.serialize_entry(&f.name, &OutputProp(f))?;
        }
        m.end()
    }
}

impl Serialize for OutputRequired<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for f in self.0.iter().filter(|f| !f.optional) {
            seq.serialize_element(&f.name)?;
        }
        seq.end()
    }
}

impl Serialize for OutputEnum<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for v in self.values {
            seq.serialize_element(&v.wire)?;
        }
        if self.with_null {
            seq.serialize_element(&())?;
        }
        seq.end()
    }
}

impl Serialize for OutputProp<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry(
            "type",
            &TypeKw {
                ty: f.ty.json_type(),
                nullable: f.optional,
            },
        )?;
        if !f.description.is_empty() {
            m.serialize_entry("description", &f.description)?;
        }
        match &f.ty {
            OutputType::Enum { values, .. } => m.serialize_entry(
                "enum",
                &OutputEnum {
                    values,
                    with_null: f.optional,
                },
            )?,
            OutputType::Object { properties, .. } if !properties.is_empty() => {
                m.serialize_entry("properties", &OutputProps(properties))?;
                m.serialize_entry("required", &OutputRequired(properties))?;
            }
            OutputType::Array { items } => m.serialize_entry("items", &OutputProp(items))?,
            _ => {}
        }
        m.end()
    }
}

/// One tool's definition in a dialect's wrapper.
struct Definition<'a> {
    tool: &'a ToolSpec,
    dialect: Dialect,
}

impl Serialize for Definition<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.tool;
        let params = Params {
            tool: t,
            dialect: self.dialect,
        };
        let mut m = s.serialize_map(None)?;
        match self.dialect {
            Dialect::OpenAi | Dialect::OpenAiStrict => {
                m.serialize_entry("type", "function")?;
                m.serialize_entry(
                    "function",
                    &Function {
                        params,
                        strict: self.dialect == Dialect::OpenAiStrict,
                    },
                )?;
            }
            Dialect::OpenAiResponses | Dialect::OpenAiResponsesStrict => {
                m.serialize_entry("type", "function")?;
                m.serialize_entry("name", &t.name)?;
                m.serialize_entry("description", &t.description)?;
                m.serialize_entry("parameters", &params)?;
                m.serialize_entry("strict", &self.dialect.strict_params())?;
            }
            Dialect::Portable | Dialect::Gemini => {
                m.serialize_entry("name", &t.name)?;
                m.serialize_entry("description", &t.description)?;
                m.serialize_entry("parameters", &params)?;
            }
            Dialect::Anthropic => {
                m.serialize_entry("name", &t.name)?;
                m.serialize_entry("description", &t.description)?;
                m.serialize_entry("input_schema", &params)?;
            }
            Dialect::Mcp => {
                m.serialize_entry("name", &t.name)?;
                m.serialize_entry("title", &t.label)?;
                m.serialize_entry("description", &t.description)?;
                m.serialize_entry("inputSchema", &params)?;
                if !t.outputs.is_empty() {
                    m.serialize_entry("outputSchema", &OutputObject(&t.outputs))?;
                }
                if !t.annotations.is_empty() {
                    m.serialize_entry("annotations", &McpAnnotations(t))?;
                }
            }
        }
        m.end()
    }
}

struct Function<'a> {
    params: Params<'a>,
    strict: bool,
}

impl Serialize for Function<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.params.tool;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("name", &t.name)?;
        m.serialize_entry("description", &t.description)?;
        m.serialize_entry("parameters", &self.params)?;
        if self.strict {
            m.serialize_entry("strict", &true)?;
        }
        m.end()
    }
}

/// MCP `ToolAnnotations`: `title` and the hints TOOL.md sets.
struct McpAnnotations<'a>(&'a ToolSpec);

impl Serialize for McpAnnotations<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let a = &self.0.annotations;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("title", &self.0.label)?;
        for (k, v) in [
            ("readOnlyHint", a.read_only),
            ("destructiveHint", a.destructive),
            ("idempotentHint", a.idempotent),
            ("openWorldHint", a.open_world),
        ] {
            if let Some(v) = v {
                m.serialize_entry(k, &v)?;
            }
        }
        m.end()
    }
}

struct Definitions<'a> {
    tools: &'a [ToolSpec],
    dialect: Dialect,
}

impl Serialize for Definitions<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let defs = DefinitionList(self);
        if self.dialect == Dialect::Gemini {
            let mut m = s.serialize_map(Some(1))?;
            m.serialize_entry("functionDeclarations", &defs)?;
            m.end()
        } else {
            defs.serialize(s)
        }
    }
}

struct DefinitionList<'a, 'b>(&'b Definitions<'a>);

impl Serialize for DefinitionList<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for tool in self.0.tools {
            if self.0.dialect.rejects(tool).is_some() {
                continue;
            }
            seq.serialize_element(&Definition {
                tool,
                dialect: self.0.dialect,
            })?;
        }
        seq.end()
    }
}

fn value(v: impl Serialize) -> Value {
    // Strings, booleans, finite numbers and maps with string keys only: cannot fail.
    serde_json::to_value(v).unwrap_or_default()
}

/// The portable JSON Schema of a tool's params.
pub fn portable(tool: &ToolSpec) -> Value {
    params_schema(tool, Dialect::Portable)
}

/// The portable JSON Schema of a tool's params as compact JSON text.
pub fn portable_json(tool: &ToolSpec) -> String {
    serde_json::to_string(&Params {
        tool,
        dialect: Dialect::Portable,
    })
    .unwrap_or_default()
}

/// The params schema a dialect uses (before wrapping): the portable one, or OpenAI strict's
/// (Chat Completions or Responses)
/// (every key required, optional ones nullable, defaults in the description), or Gemini's
/// OpenAPI subset (no `additionalProperties`, no type arrays, `format: "enum"`).
pub fn params_schema(tool: &ToolSpec, dialect: Dialect) -> Value {
    value(Params { tool, dialect })
}

/// The JSON Schema of a tool's result `details` (MCP's `outputSchema`), from TOOL.md
/// `outputs:`; `None` for a tool that declares none. The root is always an object, as MCP
/// requires: `{type: "object", properties, required}`. An optional output may be absent or
/// `null`; fields the tool returns beyond those declared are allowed.
pub fn output_schema(tool: &ToolSpec) -> Option<Value> {
    (!tool.outputs.is_empty()).then(|| value(OutputObject(&tool.outputs)))
}

/// One tool's definition in a provider's shape.
pub fn tool_definition(tool: &ToolSpec, dialect: Dialect) -> Value {
    value(Definition { tool, dialect })
}

/// All tools' definitions, ready to paste into a provider request: a JSON array, except
/// Gemini's `{functionDeclarations: [...]}`. A tool whose name or a parameter name the
/// provider rejects ([`Dialect::rejects`]) is left out: one such tool must not make the
/// provider refuse the whole request.
pub fn definitions(tools: &[ToolSpec], dialect: Dialect) -> Value {
    value(Definitions { tools, dialect })
}

/// [`definitions`] as pretty JSON text with a trailing newline, written without building
/// a `Value` (what `Config::emit_schemas` and `toolbind schema` write).
pub fn definitions_json(tools: &[ToolSpec], dialect: Dialect) -> String {
    let mut s = serde_json::to_string_pretty(&Definitions { tools, dialect }).unwrap_or_default();
    s.push('\n');
    s
}

/// The params schemas a definition set contains, for meta-schema validation.
pub fn embedded_schemas(definitions: &Value, dialect: Dialect) -> Vec<&Value> {
    let list = match (dialect, definitions) {
        (Dialect::Gemini, v) => v.get("functionDeclarations").and_then(Value::as_array),
        (_, Value::Array(a)) => Some(a),
        _ => None,
    };
    let key: &[&str] = match dialect {
        Dialect::Portable
        | Dialect::Gemini
        | Dialect::OpenAiResponses
        | Dialect::OpenAiResponsesStrict => &["parameters"],
        Dialect::OpenAi | Dialect::OpenAiStrict => &["function", "parameters"],
        Dialect::Anthropic => &["input_schema"],
        Dialect::Mcp => &["inputSchema"],
    };
    list.into_iter()
        .flatten()
        .filter_map(|d| key.iter().try_fold(d, |v, k| v.get(*k)))
        .collect()
}

/// Pretty JSON text with a trailing newline (what files and the CLI print).
pub fn to_pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}
