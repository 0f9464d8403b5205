//! JSON Schemas and tool definitions for model providers.
//!
//! [`portable`] is the subset every provider accepts: an object schema with `properties`,
//! `required` (always an array), `additionalProperties: false`, enums as
//! `{type: "string", enum: [...]}` (never `const`/`oneOf`/`anyOf`), a description on every
//! property and defaults carried. [`Dialect`]s wrap or adjust it per provider.

use serde_json::{Map, Value, json};

use crate::model::{Input, InputType, ToolSpec};

/// A provider's flavour of tool definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// The bare portable params schema per tool: `{name, description, parameters}`.
    Portable,
    /// OpenAI Chat Completions: `{type: "function", function: {name, description, parameters}}`.
    OpenAi,
    /// OpenAI with `strict: true`: every property required, optional ones nullable
    /// (`type: [T, "null"]`), no `default` (it goes into the description).
    OpenAiStrict,
    /// Anthropic Messages: `{name, description, input_schema}`.
    Anthropic,
    /// Gemini `functionDeclarations` (OpenAPI subset: no `additionalProperties`, no type
    /// arrays, string enums with `format: "enum"`).
    Gemini,
    /// MCP `Tool`: `{name, title, description, inputSchema, annotations?}`.
    Mcp,
}

impl Dialect {
    pub const ALL: [Dialect; 6] = [
        Dialect::Portable,
        Dialect::OpenAi,
        Dialect::OpenAiStrict,
        Dialect::Anthropic,
        Dialect::Gemini,
        Dialect::Mcp,
    ];

    /// The name used on the command line and in file names.
    pub const fn as_str(self) -> &'static str {
        match self {
            Dialect::Portable => "portable",
            Dialect::OpenAi => "openai",
            Dialect::OpenAiStrict => "openai-strict",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
            Dialect::Mcp => "mcp",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        Dialect::ALL.into_iter().find(|d| d.as_str() == s)
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text a sensitive input's description ends with, in every schema.
pub const SENSITIVE_NOTE: &str =
    "Sensitive: pass it only when the user supplied it; it is never logged.";

fn description(input: &Input) -> String {
    if input.sensitive {
        format!("{} ({SENSITIVE_NOTE})", input.description.trim_end())
    } else {
        input.description.clone()
    }
}

fn enum_values(input: &Input) -> Vec<Value> {
    input
        .values
        .iter()
        .map(|v| Value::String(v.wire.clone()))
        .collect()
}

/// The portable JSON Schema of a tool's params.
pub fn portable(tool: &ToolSpec) -> Value {
    let mut props = Map::new();
    for input in &tool.inputs {
        let mut p = Map::new();
        p.insert("type".into(), json!(input.ty.json_type()));
        if input.ty == InputType::Enum {
            p.insert("enum".into(), Value::Array(enum_values(input)));
        }
        p.insert("description".into(), json!(description(input)));
        if let Some(d) = &input.default {
            p.insert("default".into(), d.clone());
        }
        props.insert(input.name.clone(), Value::Object(p));
    }
    json!({
        "type": "object",
        "properties": props,
        "required": required(tool),
        "additionalProperties": false,
    })
}

fn required(tool: &ToolSpec) -> Vec<&str> {
    tool.inputs
        .iter()
        .filter(|i| i.required())
        .map(|i| i.name.as_str())
        .collect()
}

/// OpenAI strict mode: every key required; a key the model may leave out is nullable.
fn openai_strict(tool: &ToolSpec) -> Value {
    let mut props = Map::new();
    for input in &tool.inputs {
        let mut p = Map::new();
        let ty = input.ty.json_type();
        let mut desc = description(input);
        if let Some(d) = &input.default {
            desc = format!("{desc} (default: {d}; send null for the default)");
        }
        if input.required() {
            p.insert("type".into(), json!(ty));
        } else {
            p.insert("type".into(), json!([ty, "null"]));
        }
        if input.ty == InputType::Enum {
            let mut values = enum_values(input);
            if !input.required() {
                values.push(Value::Null);
            }
            p.insert("enum".into(), Value::Array(values));
        }
        p.insert("description".into(), json!(desc));
        props.insert(input.name.clone(), Value::Object(p));
    }
    let all: Vec<&str> = tool.inputs.iter().map(|i| i.name.as_str()).collect();
    json!({
        "type": "object",
        "properties": props,
        "required": all,
        "additionalProperties": false,
    })
}

/// Gemini's OpenAPI subset.
fn gemini(tool: &ToolSpec) -> Value {
    let mut props = Map::new();
    for input in &tool.inputs {
        let mut p = Map::new();
        p.insert("type".into(), json!(input.ty.json_type()));
        if input.ty == InputType::Enum {
            p.insert("format".into(), json!("enum"));
            p.insert("enum".into(), Value::Array(enum_values(input)));
        }
        let mut desc = description(input);
        if let Some(d) = &input.default {
            desc = format!("{desc} (default: {d})");
        }
        p.insert("description".into(), json!(desc));
        props.insert(input.name.clone(), Value::Object(p));
    }
    let mut schema = json!({ "type": "object", "properties": props });
    let req = required(tool);
    if !req.is_empty() {
        schema["required"] = json!(req);
    }
    schema
}

/// The params schema a dialect uses (before wrapping).
pub fn params_schema(tool: &ToolSpec, dialect: Dialect) -> Value {
    match dialect {
        Dialect::OpenAiStrict => openai_strict(tool),
        Dialect::Gemini => gemini(tool),
        _ => portable(tool),
    }
}

/// One tool's definition in a provider's shape.
pub fn tool_definition(tool: &ToolSpec, dialect: Dialect) -> Value {
    let params = params_schema(tool, dialect);
    match dialect {
        Dialect::Portable => json!({
            "name": tool.name,
            "description": tool.description,
            "parameters": params,
        }),
        Dialect::OpenAi => json!({
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": params,
            },
        }),
        Dialect::OpenAiStrict => json!({
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": params,
                "strict": true,
            },
        }),
        Dialect::Anthropic => json!({
            "name": tool.name,
            "description": tool.description,
            "input_schema": params,
        }),
        Dialect::Gemini => json!({
            "name": tool.name,
            "description": tool.description,
            "parameters": params,
        }),
        Dialect::Mcp => {
            let mut def = json!({
                "name": tool.name,
                "title": tool.label,
                "description": tool.description,
                "inputSchema": params,
            });
            let a = &tool.annotations;
            if !a.is_empty() {
                let mut m = Map::new();
                m.insert("title".into(), json!(tool.label));
                for (k, v) in [
                    ("readOnlyHint", a.read_only),
                    ("destructiveHint", a.destructive),
                    ("idempotentHint", a.idempotent),
                    ("openWorldHint", a.open_world),
                ] {
                    if let Some(v) = v {
                        m.insert(k.into(), json!(v));
                    }
                }
                def["annotations"] = Value::Object(m);
            }
            def
        }
    }
}

/// All tools' definitions, ready to paste into a provider request: a JSON array, except
/// Gemini's `{functionDeclarations: [...]}`.
pub fn definitions(tools: &[ToolSpec], dialect: Dialect) -> Value {
    let defs: Vec<Value> = tools.iter().map(|t| tool_definition(t, dialect)).collect();
    match dialect {
        Dialect::Gemini => json!({ "functionDeclarations": defs }),
        _ => Value::Array(defs),
    }
}

/// The params schemas a definition set contains, for meta-schema validation.
pub fn embedded_schemas(definitions: &Value, dialect: Dialect) -> Vec<&Value> {
    let list = match (dialect, definitions) {
        (Dialect::Gemini, v) => v.get("functionDeclarations").and_then(Value::as_array),
        (_, Value::Array(a)) => Some(a),
        _ => None,
    };
    let key: &[&str] = match dialect {
        Dialect::Portable | Dialect::Gemini => &["parameters"],
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
