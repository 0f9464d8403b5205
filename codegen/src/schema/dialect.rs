//! The model providers' dialects of JSON Schema and of tool names: what each accepts,
//! and how the portable schema is adjusted for it.

use super::*;

/// A provider's flavour of tool definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// The bare portable params schema per tool: `{name, description, parameters}`.
    Portable,
    /// OpenAI Chat Completions: `{type: "function", function: {name, description, parameters}}`.
    OpenAi,
    /// OpenAI with `strict: true`: every property required, optional ones nullable
    /// (`type: [T, "null"]`), no `default` (it goes into the description).
    OpenAiStrict,
    /// OpenAI Responses (`FunctionToolParam`): flat `{type: "function", name, description,
    /// parameters, strict: false}`. `strict` is sent because the API's default is `true`,
    /// which the plain schema (optional keys not in `required`) does not satisfy.
    OpenAiResponses,
    /// OpenAI Responses with `strict: true` and [`OpenAiStrict`](Dialect::OpenAiStrict)'s
    /// params schema (every property required, optional ones nullable).
    OpenAiResponsesStrict,
    /// Anthropic Messages: `{name, description, input_schema}`.
    Anthropic,
    /// Gemini `functionDeclarations` (OpenAPI subset: no `additionalProperties`, no type
    /// arrays, string enums with `format: "enum"`).
    Gemini,
    /// MCP `Tool`: `{name, title, description, inputSchema, outputSchema?, annotations?}`;
    /// `outputSchema` for a tool that declares `outputs:` ([`output_schema`]).
    Mcp,
}

impl Dialect {
    /// Every dialect, in the order the CLI lists them.
    pub const ALL: [Dialect; 8] = [
        Dialect::Portable,
        Dialect::OpenAi,
        Dialect::OpenAiStrict,
        Dialect::OpenAiResponses,
        Dialect::OpenAiResponsesStrict,
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
            Dialect::OpenAiResponses => "openai-responses",
            Dialect::OpenAiResponsesStrict => "openai-responses-strict",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
            Dialect::Mcp => "mcp",
        }
    }

    /// The dialect a CLI name names (`openai`, `anthropic`, `mcp`, ...).
    pub fn from_name(s: &str) -> Option<Self> {
        Dialect::ALL.into_iter().find(|d| d.as_str() == s)
    }

    /// The provider dialects (every one but [`Dialect::Portable`], toolbind's own shape).
    pub const PROVIDERS: [Dialect; 7] = [
        Dialect::OpenAi,
        Dialect::OpenAiStrict,
        Dialect::OpenAiResponses,
        Dialect::OpenAiResponsesStrict,
        Dialect::Anthropic,
        Dialect::Gemini,
        Dialect::Mcp,
    ];

    /// Whether the provider accepts `name` as a tool (function) name. The rules are the
    /// providers' published ones:
    /// - OpenAI (Chat Completions and Responses): `^[a-zA-Z0-9_-]{1,64}$` (the SDK's
    ///   `FunctionDefinition.name`; Responses' `FunctionToolParam.name` documents no other);
    /// - Anthropic: `^[a-zA-Z0-9_-]{1,64}$` (the Messages API `tools[].name`);
    /// - Gemini: starts with a letter or `_`, then letters, digits, `_`, `.`, `:` or `-`, at
    ///   most 64 characters (the API's `Invalid function name` error text);
    /// - MCP: 1 to 128 of letters, digits, `_`, `-` and `.` (the specification's tool-name
    ///   guidance).
    pub fn accepts_tool_name(self, name: &str) -> bool {
        match self {
            Dialect::Portable => !name.is_empty(),
            Dialect::OpenAi
            | Dialect::OpenAiStrict
            | Dialect::OpenAiResponses
            | Dialect::OpenAiResponsesStrict
            | Dialect::Anthropic => name_chars(name, 64, |c| c == '_' || c == '-'),
            Dialect::Gemini => {
                name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    && name_chars(name, 64, |c| matches!(c, '_' | '.' | ':' | '-'))
            }
            Dialect::Mcp => name_chars(name, 128, |c| matches!(c, '_' | '.' | '-')),
        }
    }

    /// Whether the provider accepts `name` as a parameter (property) name. Anthropic
    /// publishes `^[a-zA-Z0-9_.-]{1,64}$` for property keys, and MCP hosts backed by its
    /// models enforce the same; OpenAI and Gemini publish no rule for property keys, so
    /// their function-name rules are applied, the narrowest reading of their documents.
    pub fn accepts_param_name(self, name: &str) -> bool {
        match self {
            Dialect::Portable => !name.is_empty(),
            Dialect::Anthropic | Dialect::Mcp => {
                name_chars(name, 64, |c| matches!(c, '_' | '.' | '-'))
            }
            Dialect::OpenAi
            | Dialect::OpenAiStrict
            | Dialect::OpenAiResponses
            | Dialect::OpenAiResponsesStrict
            | Dialect::Gemini => self.accepts_tool_name(name),
        }
    }

    /// Whether the params schema is OpenAI's strict one (every key required, optional ones
    /// nullable, defaults in the description).
    pub(super) const fn strict_params(self) -> bool {
        matches!(self, Dialect::OpenAiStrict | Dialect::OpenAiResponsesStrict)
    }

    /// Why this dialect cannot carry `tool` (a name it rejects), or `None` when it can.
    /// [`definitions`] leaves such a tool out; validation has warned about it.
    pub fn rejects(self, tool: &ToolSpec) -> Option<String> {
        if !self.accepts_tool_name(&tool.name) {
            return Some(format!("tool name `{}`", tool.name));
        }
        let mut bad: Vec<String> = Vec::new();
        let mut untyped = None;
        for top in &tool.inputs {
            top.visit(&mut |i| {
                if !i.name.is_empty() && !self.accepts_param_name(&i.name) {
                    bad.push(format!("`{}`", i.name));
                }
                let refused = match i.ty {
                    InputType::Any => self.strict_params() || self == Dialect::Gemini,
                    // Gemini has no `additionalProperties`: an object without properties is refused.
                    InputType::Map => self.strict_params() || self == Dialect::Gemini,
                    _ => false,
                };
                if refused && untyped.is_none() {
                    let label = if i.name.is_empty() {
                        "items"
                    } else {
                        i.name.as_str()
                    };
                    untyped = Some(format!("{} input `{label}`", i.ty));
                }
            });
        }
        if let Some(u) = untyped {
            return Some(u);
        }
        match bad.len() {
            0 => None,
            1 => Some(format!("parameter name {}", bad[0])),
            _ => Some(format!("parameter names {}", bad.join(", "))),
        }
    }
}

/// 1 to `max` characters, each an ASCII letter or digit or one `extra` allows.
fn name_chars(name: &str, max: usize, extra: impl Fn(char) -> bool) -> bool {
    (1..=max).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphanumeric() || extra(c))
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
