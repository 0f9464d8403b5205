//! The validated model of a tools folder: what every emitter, the runtime and the CLI read.
//!
//! A [`ToolSpec`] is only ever built by parsing and validating a TOOL.md ([`crate::parse_tool_md`], [`crate::load_tools`]), so its
//! invariants hold: names are accepted by at least one provider, enum values are unique,
//! defaults type-check, and every Rust identifier derived from a wire name is
//! collision-free (a fallback identifier is picked, with a warning, where the obvious one
//! collides).

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde_json::Value;

use crate::diagnostic::Diagnostic;
/// Where a diagnostic points (defined beside [`Diagnostic`], which carries it).
pub use crate::diagnostic::Pos;

/// The file every tool folder holds.
pub const TOOL_FILE: &str = "TOOL.md";

/// The language a tool's entry file is written in.
///
/// Exhaustive on purpose, unlike this crate's other enums: a new language needs a new
/// executor, so it is a breaking change whatever this enum says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Language {
    #[default]
    /// `language: typescript` (also JavaScript): `index.ts` or `index.js`, run on Node.
    TypeScript,
    /// `language: python`: `index.py`, run on python3.
    Python,
    /// `language: bash`: `index.sh`, run on bash.
    Bash,
}

impl Language {
    /// Every language, in TOOL.md documentation order.
    pub const ALL: [Language; 3] = [Language::TypeScript, Language::Python, Language::Bash];

    /// The spelling used in TOOL.md (`language: typescript`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Language::TypeScript => "typescript",
            Language::Python => "python",
            Language::Bash => "bash",
        }
    }

    /// The language a TOOL.md `language:` value names (`typescript`, `python`, `bash`, and
    /// the aliases the platform accepts).
    pub fn from_name(s: &str) -> Option<Self> {
        Language::ALL.into_iter().find(|l| l.as_str() == s)
    }

    /// Entry file names in order of preference (the platform's TOOLS.md: `index.ts` or
    /// `index.js`).
    pub const fn entry_candidates(self) -> &'static [&'static str] {
        match self {
            Language::TypeScript => &["index.ts", "index.js", "index.mjs"],
            Language::Python => &["index.py"],
            Language::Bash => &["index.sh"],
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The type of an input: what TOOL.md spells (`string`, `number`, `integer`, `boolean`,
/// `enum`, `object`, `array`), and what other tool sources (an MCP server's JSON Schemas)
/// also need: maps, constants and untyped values.
///
/// Exhaustive on purpose: code generated for a tool matches on it, and a new type changes
/// what every binding holds. What a type holds (enum values, object properties, array
/// items, a map's values, the constant) is on the [`Input`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InputType {
    /// `type: string`: a JSON string.
    String,
    /// `type: number`: a JSON number (an `f64` in Rust).
    Number,
    /// `type: integer`: a JSON number without a fraction (an `i64` in Rust).
    Integer,
    /// `type: boolean`: `true` or `false`.
    Boolean,
    /// `type: enum`: one of the input's [`values`](Input::values), sent as a string.
    Enum,
    /// `type: object`: a JSON object with the fields [`properties`](Input::properties)
    /// (no others).
    Object,
    /// `type: array`: a JSON array whose every element is [`items`](Input::items).
    Array,
    /// A JSON object with any keys, every value [`items`](Input::items) (JSON Schema's
    /// `additionalProperties` with a schema; a `BTreeMap<String, T>` in Rust). Not
    /// spelled in TOOL.md.
    Map,
    /// Exactly the JSON value [`constant`](Input::constant) (JSON Schema's `const`). Not
    /// spelled in TOOL.md.
    Const,
    /// Any JSON value (a schema without a type; a `serde_json::Value` in Rust). Not spelled
    /// in TOOL.md.
    Any,
}

impl InputType {
    /// Every input type.
    pub const ALL: [InputType; 10] = [
        InputType::String,
        InputType::Number,
        InputType::Integer,
        InputType::Boolean,
        InputType::Enum,
        InputType::Object,
        InputType::Array,
        InputType::Map,
        InputType::Const,
        InputType::Any,
    ];

    /// The types TOOL.md spells, in the order messages list them.
    pub const TOOL_MD: [InputType; 7] = [
        InputType::String,
        InputType::Number,
        InputType::Integer,
        InputType::Boolean,
        InputType::Enum,
        InputType::Object,
        InputType::Array,
    ];

    /// The name of the type (`string`, ..., `map`, `const`, `any`); TOOL.md's spelling for
    /// the types it has.
    pub const fn as_str(self) -> &'static str {
        match self {
            InputType::String => "string",
            InputType::Number => "number",
            InputType::Integer => "integer",
            InputType::Boolean => "boolean",
            InputType::Enum => "enum",
            InputType::Object => "object",
            InputType::Array => "array",
            InputType::Map => "map",
            InputType::Const => "const",
            InputType::Any => "any",
        }
    }

    /// The type a TOOL.md `type:` value names (one of [`TOOL_MD`](Self::TOOL_MD)).
    pub fn from_name(s: &str) -> Option<Self> {
        InputType::TOOL_MD.into_iter().find(|t| t.as_str() == s)
    }

    /// The JSON Schema `type` keyword for this input; `None` for a constant (its value
    /// decides) and for any value.
    pub const fn json_type(self) -> Option<&'static str> {
        match self {
            InputType::String | InputType::Enum => Some("string"),
            InputType::Number => Some("number"),
            InputType::Integer => Some("integer"),
            InputType::Boolean => Some("boolean"),
            InputType::Object | InputType::Map => Some("object"),
            InputType::Array => Some("array"),
            InputType::Const | InputType::Any => None,
        }
    }

    /// Whether a value of this type is one JSON scalar (string, number, boolean, enum).
    pub const fn is_scalar(self) -> bool {
        matches!(
            self,
            InputType::String
                | InputType::Number
                | InputType::Integer
                | InputType::Boolean
                | InputType::Enum
        )
    }
}

impl fmt::Display for InputType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The most levels of nesting a tool's arguments may have, the arguments object being the
/// first: OpenAI's strict mode refuses deeper schemas.
pub const MAX_DEPTH: usize = 10;

/// One allowed value of an enum input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnumValue {
    /// Exactly as the model must send it.
    pub wire: String,
    /// The Rust variant name (`UpperCamelCase`, escaped where needed).
    pub rust: String,
}

/// One typed input of a tool, or a field of an object input (its
/// [`properties`](Input::properties)), or the element of an array or map input (its
/// [`items`](Input::items)).
///
/// ```yaml
/// inputs:
///   edits:
///     type: array
///     description: The edits, applied in order.
///     min_items: 1
///     items:
///       type: object
///       properties:
///         old_text:
///           type: string
///           description: Text to replace.
///         new_text:
///           type: string
///           description: The replacement.
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Input {
    /// The parameter name as the model sends it; empty for an array's or map's `items`.
    pub name: String,
    /// The Rust field name (`snake_case`, a raw identifier or escaped where needed); empty
    /// for `items`.
    pub rust_name: String,
    /// The Rust type name of an enum or of an object with properties (`Mode` for `mode`,
    /// `Edit` for the items of `edits`, or its `title`; a numbered fallback when two would
    /// share one in the tool's module); empty otherwise.
    pub rust_type: String,
    /// The input's type (`type:`).
    pub ty: InputType,
    /// A display name for an object (`title:`); the Rust type is named after it.
    pub title: Option<String>,
    /// What the model reads about the input (`description:`); may be empty for `items`.
    pub description: String,
    /// `optional: true`: the model may leave the input out. Never set for `items`.
    pub optional: bool,
    /// `null` is a value of this input (a JSON Schema type list with `"null"`); an optional
    /// input takes `null` for "not given" whatever this says. Not spelled in TOOL.md.
    pub nullable: bool,
    /// `sensitive: true`: the value is a secret (for an object or array, all of it: every
    /// input inside a sensitive one is sensitive too); it is redacted from every text the
    /// runtime builds and wrapped in `Secret` in Rust.
    pub sensitive: bool,
    /// Allowed values, for [`InputType::Enum`] only.
    pub values: Vec<EnumValue>,
    /// The fields of an [`InputType::Object`], in TOOL.md order.
    pub properties: Vec<Input>,
    /// The element of an [`InputType::Array`], or the value of an [`InputType::Map`].
    pub items: Option<Box<Input>>,
    /// The value of an [`InputType::Const`].
    pub constant: Option<Value>,
    /// `minimum:`: the smallest number or integer allowed.
    pub minimum: Option<f64>,
    /// `maximum:`: the largest number or integer allowed.
    pub maximum: Option<f64>,
    /// `min_items:`: the fewest elements an array may have.
    pub min_items: Option<u64>,
    /// `max_items:`: the most elements an array may have.
    pub max_items: Option<u64>,
    /// The default, already type-checked (a number default keeps its JSON form: `10`, not
    /// `10.0`). A field's default applies only when the object holding it is given.
    pub default: Option<Value>,
    /// Where the input's key (for `items`, the `items` key) is in TOOL.md.
    pub pos: Pos,
    /// Keys of the input spec that toolbind does not use (`example:`, ...), as JSON, in
    /// file order. TOOL.md authors put metadata there; it is kept, not rejected.
    pub metadata: BTreeMap<String, Value>,
}

impl Input {
    /// An input of type `ty` with nothing else set: for code that builds a model from
    /// another source than TOOL.md (an MCP server's JSON Schema).
    pub fn new(name: impl Into<String>, ty: InputType) -> Self {
        Input {
            name: name.into(),
            rust_name: String::new(),
            rust_type: String::new(),
            ty,
            title: None,
            description: String::new(),
            optional: false,
            nullable: false,
            sensitive: false,
            values: Vec::new(),
            properties: Vec::new(),
            items: None,
            constant: None,
            minimum: None,
            maximum: None,
            min_items: None,
            max_items: None,
            default: None,
            pos: Pos::NONE,
            metadata: BTreeMap::new(),
        }
    }

    /// Whether a model must send this input (not optional and no default).
    pub fn required(&self) -> bool {
        !self.optional && self.default.is_none()
    }

    /// The default as it may be shown: in schemas, prompts, docs and generated code. A
    /// sensitive input's default is applied by the runtime only, so this is `None` for it.
    pub fn public_default(&self) -> Option<&Value> {
        // An object's default holds its fields' values: a sensitive field's among them.
        if self.holds_sensitive() {
            None
        } else {
            self.default.as_ref()
        }
    }

    /// The Rust type name for an enum or object input (`Mode` for `mode`).
    pub fn enum_type_name(&self) -> String {
        if self.rust_type.is_empty() {
            crate::ident::type_name(&self.name)
        } else {
            self.rust_type.clone()
        }
    }

    /// The field named `name` (its wire name) of an object input.
    pub fn property(&self, name: &str) -> Option<&Input> {
        self.properties.iter().find(|p| p.name == name)
    }

    /// The constraints on the value, in words, for descriptions and messages: `from 1 to
    /// 10`, `at least 0`, `1–10 items`, `at most 5 items`; `None` when there are none.
    pub fn constraint_text(&self) -> Option<String> {
        let num = |f: f64| {
            serde_json::Number::from_f64(f).map_or_else(
                || f.to_string(),
                |n| {
                    if f.fract() == 0.0 && f.abs() < 9.0e15 {
                        format!("{}", f as i64)
                    } else {
                        n.to_string()
                    }
                },
            )
        };
        let range = match (self.minimum, self.maximum) {
            (Some(a), Some(b)) => Some(format!("from {} to {}", num(a), num(b))),
            (Some(a), None) => Some(format!("at least {}", num(a))),
            (None, Some(b)) => Some(format!("at most {}", num(b))),
            (None, None) => None,
        };
        let items = match (self.min_items, self.max_items) {
            (Some(a), Some(b)) if a == b => Some(format!("exactly {a} items")),
            (Some(a), Some(b)) => Some(format!("{a}\u{2013}{b} items")),
            (Some(a), None) => Some(format!("at least {a} items")),
            (None, Some(b)) => Some(format!("at most {b} items")),
            (None, None) => None,
        };
        match (range, items) {
            (Some(r), Some(i)) => Some(format!("{r}; {i}")),
            (r, i) => r.or(i),
        }
    }

    /// How many levels of nesting a value of this input has (1 for a scalar, 2 for an
    /// object of scalars or an array of them, ...).
    pub fn depth(&self) -> usize {
        1 + self
            .properties
            .iter()
            .map(Input::depth)
            .chain(self.items.as_deref().map(Input::depth))
            .max()
            .unwrap_or(0)
    }

    /// Calls `f` on this input and on every input nested in it (properties and items), an
    /// object before its fields.
    pub fn visit<'a>(&'a self, f: &mut dyn FnMut(&'a Input)) {
        f(self);
        for p in &self.properties {
            p.visit(f);
        }
        if let Some(items) = &self.items {
            items.visit(f);
        }
    }

    /// [`visit`](Self::visit) with mutable access.
    pub fn visit_mut(&mut self, f: &mut dyn FnMut(&mut Input)) {
        f(self);
        for p in &mut self.properties {
            p.visit_mut(f);
        }
        if let Some(items) = &mut self.items {
            items.visit_mut(f);
        }
    }

    /// Whether this input or anything nested in it is sensitive.
    pub fn holds_sensitive(&self) -> bool {
        self.sensitive
            || self.properties.iter().any(Input::holds_sensitive)
            || self.items.as_deref().is_some_and(Input::holds_sensitive)
    }

    fn hash_into(&self, h: &mut Fnv) {
        h.write(self.name.as_bytes());
        h.write(self.ty.as_str().as_bytes());
        h.write(&[u8::from(self.optional), u8::from(self.sensitive)]);
        if self.nullable {
            h.write(b"\x09");
        }
        for v in &self.values {
            h.write(b"\x01");
            h.write(v.wire.as_bytes());
        }
        match (&self.default, self.holds_sensitive()) {
            // Generated code embeds the fingerprint: a secret default must not be
            // recoverable from it, so only its presence counts.
            (Some(_), true) => h.write(b"\x03"),
            (Some(d), false) => {
                h.write(b"\x02");
                h.write(d.to_string().as_bytes());
            }
            (None, _) => {}
        }
        if let Some(c) = &self.constant {
            h.write(b"\x04");
            h.write(c.to_string().as_bytes());
        }
        for (tag, bound) in [(b'\x05', self.minimum), (b'\x06', self.maximum)] {
            if let Some(b) = bound {
                h.write(&[tag]);
                h.write(&b.to_bits().to_le_bytes());
            }
        }
        for (tag, bound) in [(b'\x07', self.min_items), (b'\x08', self.max_items)] {
            if let Some(b) = bound {
                h.write(&[tag]);
                h.write(&b.to_le_bytes());
            }
        }
        for p in &self.properties {
            h.write(b"\x10");
            p.hash_into(h);
            h.write(b"\x11");
        }
        if let Some(items) = &self.items {
            h.write(b"\x12");
            items.hash_into(h);
            h.write(b"\x13");
        }
    }
}

/// The type of an output field (TOOL.md `outputs:`): the input types, plus `object` and
/// `array` so that structured results (a list of messages) can be declared.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum OutputType {
    /// `type: string`.
    String,
    /// `type: number` (an integer or a float).
    Number,
    /// `type: integer`: a number without a fraction (an `i64` in Rust).
    Integer,
    /// `type: boolean`.
    Boolean,
    /// `type: enum`: a string that is one of `values`.
    Enum {
        /// The allowed values, in TOOL.md order.
        values: Vec<EnumValue>,
        /// The generated Rust enum's name in the tool's `output` module.
        rust_type: String,
    },
    /// `type: object`: a JSON object with the fields `properties`; other fields may be
    /// present too. With no `properties`, any object.
    Object {
        /// The declared fields, in TOOL.md order.
        properties: Vec<OutputField>,
        /// The generated Rust struct's name in the tool's `output` module; empty for an
        /// object without `properties` (a map in Rust).
        rust_type: String,
    },
    /// `type: array`: a JSON array whose every element is `items`.
    Array {
        /// The element's spec (`items:`): its `name` is empty and it is never optional.
        items: Box<OutputField>,
    },
}

impl OutputType {
    /// Every type name TOOL.md accepts for an output, in the order messages list them.
    pub const NAMES: [&'static str; 7] = [
        "string", "number", "integer", "boolean", "enum", "object", "array",
    ];

    /// The spelling used in TOOL.md (`type: array`).
    pub const fn as_str(&self) -> &'static str {
        match self {
            OutputType::String => "string",
            OutputType::Number => "number",
            OutputType::Integer => "integer",
            OutputType::Boolean => "boolean",
            OutputType::Enum { .. } => "enum",
            OutputType::Object { .. } => "object",
            OutputType::Array { .. } => "array",
        }
    }

    /// The JSON Schema `type` keyword for this output (`string` for an enum).
    pub const fn json_type(&self) -> &'static str {
        match self {
            OutputType::String | OutputType::Enum { .. } => "string",
            OutputType::Number => "number",
            OutputType::Integer => "integer",
            OutputType::Boolean => "boolean",
            OutputType::Object { .. } => "object",
            OutputType::Array { .. } => "array",
        }
    }
}

impl fmt::Display for OutputType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One declared field of a tool's result `details` (TOOL.md `outputs:`, or an object's
/// `properties:`), or the element of an array (`items:`).
///
/// ```yaml
/// outputs:
///   status:
///     type: number
///     description: The HTTP status code.
///   messages:
///     type: array
///     description: The messages found.
///     items:
///       type: object
///       properties:
///         subject:
///           type: string
///           description: The subject line.
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OutputField {
    /// The field's name in the JSON `details`; empty for an array's `items`.
    pub name: String,
    /// The Rust field name (`snake_case`, escaped where needed); empty for `items`.
    pub rust_name: String,
    /// What the field holds; empty when TOOL.md gives no description.
    pub description: String,
    /// The type, with what it holds (enum values, object properties, array items).
    pub ty: OutputType,
    /// `optional: true`: the field may be absent or `null`. Never set for `items`.
    pub optional: bool,
    /// Where the field's key (for `items`, the `items` key) is in TOOL.md.
    pub pos: Pos,
    /// Keys of the spec that toolbind does not use, as JSON (see [`Input::metadata`]).
    pub metadata: BTreeMap<String, Value>,
}

/// MCP-style behaviour hints (the Pi tool API / MCP `ToolAnnotations`), all optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Annotations {
    /// The tool does not change its environment (MCP `readOnlyHint`).
    pub read_only: Option<bool>,
    /// The tool may destroy or overwrite data (MCP `destructiveHint`).
    pub destructive: Option<bool>,
    /// Calling again with the same arguments has no further effect (MCP `idempotentHint`);
    /// the runtime may retry such a call once on a fresh worker.
    pub idempotent: Option<bool>,
    /// The tool reaches the outside world, e.g. the web (MCP `openWorldHint`).
    pub open_world: Option<bool>,
}

impl Annotations {
    /// Whether no annotation is set.
    pub fn is_empty(&self) -> bool {
        *self == Annotations::default()
    }
}

/// Whether a tool's process is kept warm between calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum WorkerMode {
    /// Decided by the runtime's configuration (warm by default).
    #[default]
    Default,
    /// Keep one process and send it every call.
    Warm,
    /// A fresh process per call.
    OneShot,
}

/// A tool's own narrowing of the runtime's sandbox policy: TOOL.md `sandbox:`.
///
/// A tool may only narrow what the runtime grants, never widen it; a plain seed-format
/// file has no `sandbox:` key and gets the runtime's policy unchanged.
///
/// ```yaml
/// sandbox:
///   network: false   # this tool never needs the network
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ToolSandbox {
    /// `Some(false)`: no network for this tool even when the runtime allows it.
    /// `Some(true)` or `None`: the runtime decides.
    pub network: Option<bool>,
}

/// How a tool's calls run when a model sends several at once (TOOL.md `execution:`, pi's
/// per-tool execution mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Execution {
    /// Calls may run concurrently with any other call (the default).
    #[default]
    Parallel,
    /// `execution: sequential`: at most one call of this tool runs at a time, within a
    /// batch and across batches of the same runtime; calls start in the order they were
    /// made. Other tools still run beside it.
    Sequential,
}

/// Whether a call of the tool may run as a task (TOOL.md `task:`): started, answered at
/// once with a task id, then polled for its result. `toolbind serve` offers MCP's tasks
/// extension (`io.modelcontextprotocol/tasks`) for such tools; a Rust agent has
/// `Runtime::start` for any tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Always a plain call (the default for a tool whose `timeout:` is 60 s or less, or
    /// unset; `task: never`).
    #[default]
    Never,
    /// `task: optional`: a task for a client that takes tasks, a plain call for one that
    /// does not. The default for a tool whose `timeout:` is over 60 s: a host's request
    /// timeout (the MCP TypeScript SDK's is 60 s) would give up on a plain call first.
    Optional,
    /// `task: required`: only as a task; a client that does not take tasks is refused.
    Required,
}

/// A kind of question a tool cannot do without (TOOL.md `asks: [sampling]`): the MCP client
/// capability of that name. `toolbind serve` refuses a call from a client that did not
/// declare it (JSON-RPC -32021, `requiredCapabilities`) before the tool runs; questions a
/// tool asks only when it can (catching the refusal) need not be listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Ask {
    /// Forms to the user (`ctx.elicit`, `ctx.confirm`): MCP `elicitation`.
    Elicitation,
    /// The client's model (`ctx.sample`): MCP `sampling`.
    Sampling,
    /// The client's workspace roots (`ctx.roots`): MCP `roots`.
    Roots,
}

impl Ask {
    /// Every kind, as TOOL.md spells them.
    pub const ALL: [(&'static str, Ask); 3] = [
        ("elicitation", Ask::Elicitation),
        ("sampling", Ask::Sampling),
        ("roots", Ask::Roots),
    ];

    /// The MCP client capability's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Ask::Elicitation => "elicitation",
            Ask::Sampling => "sampling",
            Ask::Roots => "roots",
        }
    }
}

/// Whether a call of the tool needs someone's approval before it runs (TOOL.md
/// `approval:`). The runtime asks its host (`toolbind::host::Host`); without one, such a
/// call is denied, never run unasked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Approval {
    /// Runs as soon as the model calls it (the default), unless the host's policy asks
    /// anyway (for example for every tool annotated `destructive`).
    #[default]
    Never,
    /// `approval: always`: every call waits for the host's approval.
    Always,
    /// `approval: when <input>`: a call waits for approval when this boolean input is
    /// `true` (`approval: when overwrite`: replacing a file needs a yes, writing a new one
    /// does not).
    When(String),
}

impl Approval {
    /// Whether a call with these (validated) arguments needs approval.
    pub fn needed(&self, args: &serde_json::Map<String, Value>) -> bool {
        match self {
            Approval::Never => false,
            Approval::Always => true,
            Approval::When(input) => args.get(input) == Some(&Value::Bool(true)),
        }
    }

    /// How TOOL.md says it: `always`, `never`, `when overwrite`.
    pub fn describe(&self) -> String {
        match self {
            Approval::Never => "never".into(),
            Approval::Always => "always".into(),
            Approval::When(input) => format!("when {input}"),
        }
    }
}

/// The longest `timeout:` a tool may declare and still default to [`TaskSupport::Never`].
pub const PLAIN_CALL_TIMEOUT_SECS: f64 = 60.0;

/// What a bash tool's stdout is (TOOL.md `output:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum BashOutput {
    /// `output: text` (the default): stdout is the result's one text block.
    #[default]
    Text,
    /// `output: json`: stdout is the whole result object, as a node or python tool's
    /// `execute` returns it (`{content: [...], details?, isError?}`), so a bash tool can
    /// return images, audio, resources and links. fd 3 stays progress.
    Json,
}

/// A `##` section of the Markdown body.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Section {
    /// The heading text.
    pub title: String,
    /// Its 1-based line in TOOL.md.
    pub line: u32,
}

/// The Markdown documentation after the frontmatter.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Body {
    /// The Markdown text, line endings normalised to `\n`, surrounding blank lines trimmed.
    pub markdown: String,
    /// The first `#` heading, if any.
    pub title: Option<String>,
    /// The `##` sections, in order.
    pub sections: Vec<Section>,
}

/// One validated tool.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolSpec {
    /// The name a model calls the tool by (`name:`).
    pub name: String,
    /// Display name; the name when TOOL.md has no `label`.
    pub label: String,
    /// What the tool does, for the model (`description:`).
    pub description: String,
    /// The tool's version (`version:`, default 0); sync installs a seed tool when its
    /// version is newer.
    pub version: u64,
    /// The entry's language (`language:`).
    pub language: Language,
    /// The typed inputs (`inputs:`), in TOOL.md order.
    pub inputs: Vec<Input>,
    /// TOOL.md `outputs:`: the fields of the result's `details` the tool promises (empty
    /// for a tool that declares none, such as every seed-format tool). The runtime checks
    /// each result against them; the MCP dialect gives them as `outputSchema`; generated
    /// code has an `Output` type for them.
    pub outputs: Vec<OutputField>,
    /// One line for the "Available tools" section; the description when absent.
    pub prompt_snippet: Option<String>,
    /// Lines appended to the "Guidelines" section; each names the tool.
    pub prompt_guidelines: Vec<String>,
    /// Per-tool timeout in seconds.
    pub timeout_secs: Option<f64>,
    /// Environment variables the tool may read from the agent's environment.
    pub env: Vec<String>,
    /// Behaviour hints (`annotations:`).
    pub annotations: Annotations,
    /// Whether a Node or Python tool stays warm between calls (`worker:`).
    pub worker: WorkerMode,
    /// TOOL.md `sandbox:`: how the tool narrows the runtime's sandbox (default: not at all).
    pub sandbox: ToolSandbox,
    /// Whether a batch may run this tool's calls concurrently (`execution:`).
    pub execution: Execution,
    /// Whether a call may run as a task (`task:`; absent: [`TaskSupport::Optional`] when
    /// `timeout:` is over [`PLAIN_CALL_TIMEOUT_SECS`], else [`TaskSupport::Never`]).
    pub task: TaskSupport,
    /// Whether every call needs approval before it runs (`approval:`).
    pub approval: Approval,
    /// The questions the tool cannot do without (`asks:`), in TOOL.md's order.
    pub asks: Vec<Ask>,
    /// What a bash tool's stdout is (`output:`; `text` unless it says `json`).
    pub bash_output: BashOutput,
    /// The Markdown documentation after the frontmatter.
    pub body: Body,
    /// The tool folder.
    pub dir: PathBuf,
    /// The TOOL.md path.
    pub file: PathBuf,
    /// The entry file's name inside `dir` (`index.ts`, ...), when one exists.
    pub entry: Option<String>,
    /// The Rust module name (`snake_case`).
    pub rust_module: String,
    /// The Rust type name used for the `ToolCall` variant (`UpperCamelCase`).
    pub rust_type: String,
    /// Top-level frontmatter keys that toolbind does not use (`category:`, `tags:`,
    /// `author:`, ...), as JSON. The platform ignores them; toolbind keeps them here for
    /// whoever wants to read them.
    pub metadata: BTreeMap<String, Value>,
    /// For a tool of an MCP server (generated from a snapshot): where it comes from. `None`
    /// for a TOOL.md tool. An MCP tool's [`language`](Self::language), `version`, `dir` and
    /// entry mean nothing; its `name` is the provider-facing one.
    pub mcp: Option<McpOrigin>,
    /// What is worth a look but does not stop the tool from loading: extra keys, names a
    /// provider rejects, fallback Rust identifiers, converted defaults. Each is a
    /// [`Diagnostic`] with [`Severity::Warning`](crate::diagnostic::Severity::Warning).
    pub warnings: Vec<Diagnostic>,
}

/// Where a tool generated from an MCP server's snapshot comes from.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct McpOrigin {
    /// The snapshot's name (the server's key in the `mcpServers` config).
    pub server: String,
    /// The name the server calls the tool by, which may hold characters providers reject
    /// (`.`, `/`); [`ToolSpec::name`] is the provider-facing name it maps to.
    pub name: String,
    /// The tool's contract hash in the snapshot.
    pub contract: String,
    /// The server's `inputSchema`, as listed: untyped parts of a call are checked against it.
    pub input_schema: Value,
    /// The server's `outputSchema`, when it gave one.
    pub output_schema: Option<Value>,
}

impl ToolSpec {
    /// A spec for a process that is not a TOOL.md tool (an MCP server toolbind runs in its
    /// jail): a name and a folder, everything else empty or default. Not public API.
    #[doc(hidden)]
    pub fn process(name: &str, dir: PathBuf) -> ToolSpec {
        ToolSpec {
            name: name.to_owned(),
            label: name.to_owned(),
            description: String::new(),
            version: 0,
            language: Language::default(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            prompt_snippet: None,
            prompt_guidelines: Vec::new(),
            timeout_secs: None,
            env: Vec::new(),
            annotations: Annotations::default(),
            worker: WorkerMode::default(),
            sandbox: ToolSandbox::default(),
            execution: Execution::default(),
            task: TaskSupport::default(),
            approval: Approval::default(),
            asks: Vec::new(),
            bash_output: BashOutput::Text,
            body: Body::default(),
            file: dir.join("TOOL.md"),
            dir,
            entry: None,
            rust_module: String::new(),
            rust_type: String::new(),
            metadata: BTreeMap::new(),
            mcp: None,
            warnings: Vec::new(),
        }
    }

    /// The line for the "Available tools" section of a system prompt.
    pub fn snippet(&self) -> &str {
        self.prompt_snippet.as_deref().unwrap_or(&self.description)
    }

    /// The entry file's full path, when it exists.
    pub fn entry_path(&self) -> Option<PathBuf> {
        self.entry.as_ref().map(|e| self.dir.join(e))
    }

    /// The per-tool timeout, when TOOL.md sets one that a `Duration` can hold.
    pub fn timeout(&self) -> Option<std::time::Duration> {
        self.timeout_secs
            .filter(|s| *s > 0.0)
            .and_then(|s| std::time::Duration::try_from_secs_f64(s).ok())
    }

    /// The input named `name` (its wire name).
    pub fn input(&self, name: &str) -> Option<&Input> {
        self.inputs.iter().find(|i| i.name == name)
    }

    /// A stable hash of the call contract (name, inputs, types, optionality, values and
    /// defaults). Generated code embeds it so the runtime can tell when a TOOL.md on disk
    /// has drifted from the one the agent was compiled against.
    pub fn fingerprint(&self) -> u64 {
        let mut h = Fnv::new();
        h.write(self.name.as_bytes());
        for input in &self.inputs {
            h.write(b"\x00input\x00");
            input.hash_into(&mut h);
        }
        h.finish()
    }
}

/// FNV-1a, 64 bit: tiny, stable across Rust versions and platforms (unlike `DefaultHasher`).
/// Used for contract fingerprints here and for content-addressed caches in the runtime.
#[doc(hidden)]
pub struct Fnv(u64);

impl Fnv {
    pub fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    pub fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    pub fn finish(&self) -> u64 {
        self.0
    }
}

impl Default for Fnv {
    fn default() -> Self {
        Self::new()
    }
}

/// Why `name` cannot be used as one path component (a tool's state folder, its synced
/// folder, a cache or spill name are `<root>/<name>`), or `None` when it can: empty, `.`,
/// `..`, a name starting with `.`, one holding `/`, `\`, NUL or a control character, or
/// longer than 128 bytes would escape its root, hide, or forge output lines. The codegen
/// checks, the loader, sync and the runtime's folders all use this one rule.
#[doc(hidden)]
pub fn path_component_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("it is empty".to_owned());
    }
    if name == "." || name == ".." {
        return Some(format!(
            "`{name}` names a folder itself or its parent, so it would escape the folder it is joined to"
        ));
    }
    if name.starts_with('.') {
        return Some(format!(
            "`{name}` starts with `.` (hidden names are reserved for toolbind's own files)"
        ));
    }
    if name.contains(['/', '\\', '\0']) {
        return Some(format!(
            "`{}` contains a path separator or NUL, so it is not one folder name",
            name.escape_debug()
        ));
    }
    if name.chars().any(char::is_control) {
        return Some(format!(
            "`{}` contains a control character (a newline would forge log and report lines)",
            name.escape_debug()
        ));
    }
    // A cache entry is `<name>-<64 hex digits>`: 128 + 65 stays well under the 255-byte
    // limit of a file name.
    if name.len() > 128 {
        return Some("it is longer than 128 bytes".to_owned());
    }
    None
}

#[cfg(test)]
mod path_component_tests {
    use super::path_component_problem as p;

    #[test]
    fn only_one_normal_component_passes() {
        for bad in [
            "", ".", "..", ".hidden", "a/b", "/", "a\\b", "a\0b", "a\nb", "a\tb",
        ] {
            assert!(p(bad).is_some(), "{bad:?} passed");
        }
        assert!(p(&"x".repeat(129)).is_some());
        assert_eq!(p(&"x".repeat(128)), None);
        for good in ["web_fetch", "a-b", "A1", "café", "a.b"] {
            assert_eq!(p(good), None, "{good:?}");
        }
    }
}
