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

mod input;
mod output;
mod settings;

pub use input::*;
pub use output::*;
pub use settings::*;

/// The file every tool folder holds.
pub const TOOL_FILE: &str = "TOOL.md";

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
    /// When a model first sees the tool in progressive mode (`discovery:`).
    pub discovery: DiscoveryMode,
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
            discovery: DiscoveryMode::default(),
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
