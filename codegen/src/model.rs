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

/// A 1-based line and column in a source file (columns count characters, as rustc does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
}

impl Pos {
    /// No position: the error is about a whole file or folder.
    pub const NONE: Pos = Pos { line: 0, column: 0 };

    /// A position (1-based line and column).
    pub const fn new(line: u32, column: u32) -> Self {
        Pos { line, column }
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

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

/// The type of an input, as TOOL.md spells it.
///
/// Exhaustive on purpose: code generated for a tool matches on it, and a new type changes
/// what every binding holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InputType {
    /// `type: string`: a JSON string.
    String,
    /// `type: number`: a JSON number (an `f64` in Rust).
    Number,
    /// `type: boolean`: `true` or `false`.
    Boolean,
    /// `type: enum`: one of the input's `values`, sent as a string.
    Enum,
}

impl InputType {
    /// Every input type.
    pub const ALL: [InputType; 4] = [
        InputType::String,
        InputType::Number,
        InputType::Boolean,
        InputType::Enum,
    ];

    /// The TOOL.md spelling (`string`, `number`, `boolean`, `enum`).
    pub const fn as_str(self) -> &'static str {
        match self {
            InputType::String => "string",
            InputType::Number => "number",
            InputType::Boolean => "boolean",
            InputType::Enum => "enum",
        }
    }

    /// The type a TOOL.md `type:` value names.
    pub fn from_name(s: &str) -> Option<Self> {
        InputType::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// The JSON Schema `type` keyword for this input.
    pub const fn json_type(self) -> &'static str {
        match self {
            InputType::String | InputType::Enum => "string",
            InputType::Number => "number",
            InputType::Boolean => "boolean",
        }
    }
}

impl fmt::Display for InputType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One allowed value of an enum input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnumValue {
    /// Exactly as the model must send it.
    pub wire: String,
    /// The Rust variant name (`UpperCamelCase`, escaped where needed).
    pub rust: String,
}

/// One typed input of a tool.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Input {
    /// The parameter name as the model sends it.
    pub name: String,
    /// The Rust field name (`snake_case`, a raw identifier or escaped where needed).
    pub rust_name: String,
    /// The Rust enum type name, for [`InputType::Enum`] inputs (`Mode` for `mode`; a
    /// numbered fallback when two inputs of a tool would share one); empty otherwise.
    pub rust_enum: String,
    /// The input's type (`type:`).
    pub ty: InputType,
    /// What the model reads about the input (`description:`).
    pub description: String,
    /// `optional: true`: the model may leave the input out.
    pub optional: bool,
    /// `sensitive: true`: the value is a secret; it is redacted from every text the runtime
    /// builds and wrapped in `Secret` in Rust.
    pub sensitive: bool,
    /// Allowed values, for [`InputType::Enum`] only.
    pub values: Vec<EnumValue>,
    /// The default, already type-checked (a number default keeps its JSON form: `10`, not
    /// `10.0`).
    pub default: Option<Value>,
    /// Where the input's key is in TOOL.md.
    pub pos: Pos,
    /// Keys of the input spec that toolbind does not use (`example:`, ...), as JSON, in
    /// file order. TOOL.md authors put metadata there; it is kept, not rejected.
    pub metadata: BTreeMap<String, Value>,
}

impl Input {
    /// Whether a model must send this input (not optional and no default).
    pub fn required(&self) -> bool {
        !self.optional && self.default.is_none()
    }

    /// The default as it may be shown: in schemas, prompts, docs and generated code. A
    /// sensitive input's default is applied by the runtime only, so this is `None` for it.
    pub fn public_default(&self) -> Option<&Value> {
        if self.sensitive {
            None
        } else {
            self.default.as_ref()
        }
    }

    /// The Rust enum type name for an enum input (`Mode` for `mode`).
    pub fn enum_type_name(&self) -> String {
        if self.rust_enum.is_empty() {
            crate::ident::type_name(&self.name)
        } else {
            self.rust_enum.clone()
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
    pub const NAMES: [&'static str; 6] = ["string", "number", "boolean", "enum", "object", "array"];

    /// The spelling used in TOOL.md (`type: array`).
    pub const fn as_str(&self) -> &'static str {
        match self {
            OutputType::String => "string",
            OutputType::Number => "number",
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
    /// What is worth a look but does not stop the tool from loading: extra keys, names a
    /// provider rejects, fallback Rust identifiers, converted defaults. Each is a
    /// [`Diagnostic`] with [`Severity::Warning`](crate::diagnostic::Severity::Warning).
    pub warnings: Vec<Diagnostic>,
}

impl ToolSpec {
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
            h.write(input.name.as_bytes());
            h.write(input.ty.as_str().as_bytes());
            h.write(&[u8::from(input.optional), u8::from(input.sensitive)]);
            for v in &input.values {
                h.write(b"\x01");
                h.write(v.wire.as_bytes());
            }
            match (&input.default, input.sensitive) {
                // Generated code embeds the fingerprint: a secret default must not be
                // recoverable from it, so only its presence counts.
                (Some(_), true) => h.write(b"\x03"),
                (Some(d), false) => {
                    h.write(b"\x02");
                    h.write(d.to_string().as_bytes());
                }
                (None, _) => {}
            }
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
