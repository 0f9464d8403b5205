//! Tools as the runtime knows them: [`ToolInfo`] (a loaded tool's
//! description), [`Tool`] (a tool known at compile time) and what generated
//! bindings use ([`CompiledTool`], [`CallError`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolbind_codegen::model::ToolSpec;

/// The language of a tool's entry file (`language:` in TOOL.md).
pub use toolbind_codegen::model::Language;

/// A tool known at compile time. Generated code implements it on one marker type per tool
/// (`web_fetch::Tool`); agents use it for the typed call path.
pub trait Tool {
    /// The generated params struct.
    type Params: Serialize + DeserializeOwned + Send + 'static;
    /// The typed `details` of the tool's results: the generated `Output` struct for a tool
    /// whose TOOL.md declares `outputs:`, `serde_json::Value` (the details as they are) for
    /// one that does not. [`Runtime::call_output`](crate::Runtime::call_output) and [`Runtime::output`](crate::Runtime::output) give it.
    type Output: DeserializeOwned + Send + 'static;
    /// The name a model calls the tool by.
    const NAME: &'static str;
    /// The tool's display name (`label:`).
    const LABEL: &'static str;
    /// What the tool does, for the model (`description:`).
    const DESCRIPTION: &'static str;
    /// The tool's version (`version:`).
    const VERSION: u64;
    /// The entry's language (`language:`).
    const LANGUAGE: Language;
    /// The portable JSON Schema of the params, as JSON text.
    const SCHEMA: &'static str;
    /// The tool's line of the system prompt's "Available tools" section.
    const PROMPT: &'static str;
    /// The Markdown body of TOOL.md.
    const DOCS: &'static str;
    /// [`ToolInfo::fingerprint`] of the TOOL.md this code was generated from.
    const FINGERPRINT: u64;
}

/// A tool of an MCP server known at compile time, generated from its snapshot
/// (`toolbind_codegen::Config::mcp_snapshot`): one marker type per tool
/// (`filesystem::edit_file::Tool`).
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub trait McpTool {
    /// The generated params struct.
    type Params: Serialize + DeserializeOwned + Send + 'static;
    /// The generated `Output` for a server that gives an `outputSchema` typed outputs can
    /// hold, else `serde_json::Value`.
    type Output: DeserializeOwned + Send + 'static;
    /// The name a model calls the tool by: the server's name when every provider accepts
    /// it, else a mapped one (`toolbind_codegen::mcp::provider_name`).
    const NAME: &'static str;
    /// The name the server calls the tool by.
    const MCP_NAME: &'static str;
    /// The snapshot's name (the server's key in the `mcpServers` config).
    const SERVER: &'static str;
    /// The tool's `title`, else its name.
    const TITLE: &'static str;
    /// The tool's `description`.
    const DESCRIPTION: &'static str;
    /// The portable JSON Schema of the generated params, as JSON text.
    const SCHEMA: &'static str;
    /// The server's own `inputSchema`, as listed: calls are validated against it.
    const INPUT_SCHEMA: &'static str;
    /// The server's `outputSchema`, when it gave one.
    const OUTPUT_SCHEMA: Option<&'static str>;
    /// The tool's line of the system prompt's "Available tools" section.
    const PROMPT: &'static str;
    /// The tool's contract hash in the snapshot (`sha256:<hex>`): a live server whose
    /// hash differs has changed what it accepts or returns.
    const CONTRACT: &'static str;
}

/// Static facts about one compiled MCP tool, collected by a server module's `TOOLS`.
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompiledMcpTool {
    /// The name a model calls the tool by.
    pub name: &'static str,
    /// The name the server calls the tool by.
    pub mcp_name: &'static str,
    /// The snapshot's name.
    pub server: &'static str,
    /// The tool's title.
    pub title: &'static str,
    /// What the tool does, for the model.
    pub description: &'static str,
    /// The portable JSON Schema of the params.
    pub schema: &'static str,
    /// The server's `inputSchema`.
    pub input_schema: &'static str,
    /// The tool's line of the system prompt.
    pub prompt: &'static str,
    /// The contract hash.
    pub contract: &'static str,
}

#[cfg(feature = "mcp")]
impl CompiledMcpTool {
    /// The facts of an [`McpTool`] implementation.
    pub const fn of<T: McpTool>() -> Self {
        CompiledMcpTool {
            name: T::NAME,
            mcp_name: T::MCP_NAME,
            server: T::SERVER,
            title: T::TITLE,
            description: T::DESCRIPTION,
            schema: T::SCHEMA,
            input_schema: T::INPUT_SCHEMA,
            prompt: T::PROMPT,
            contract: T::CONTRACT,
        }
    }
}

/// Static facts about one compiled tool, collected by the generated `TOOLS` slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompiledTool {
    /// The name a model calls the tool by.
    pub name: &'static str,
    /// The display name.
    pub label: &'static str,
    /// What the tool does, for the model.
    pub description: &'static str,
    /// The tool's version.
    pub version: u64,
    /// The entry's language.
    pub language: Language,
    /// The JSON Schema of the tool's params.
    pub schema: &'static str,
    /// The tool's line of the system prompt.
    pub prompt: &'static str,
    /// The contract fingerprint (see [`Tool::FINGERPRINT`]).
    pub fingerprint: u64,
}

impl CompiledTool {
    /// The facts of a [`Tool`] implementation.
    pub const fn of<T: Tool>() -> Self {
        CompiledTool {
            name: T::NAME,
            label: T::LABEL,
            description: T::DESCRIPTION,
            version: T::VERSION,
            language: T::LANGUAGE,
            schema: T::SCHEMA,
            prompt: T::PROMPT,
            fingerprint: T::FINGERPRINT,
        }
    }
}

/// A loaded tool, as the runtime describes it: what [`Registry::get`](crate::Registry::get)
/// returns and what an [`Executor`](crate::exec::Executor) is handed. Cheap to clone (the
/// description is shared).
///
/// ```
/// # fn demo(registry: &toolbind::Registry) {
/// if let Some(tool) = registry.get("web_fetch") {
///     println!("{} (v{}): {}", tool.label(), tool.version(), tool.description());
///     println!("{}", tool.input_schema());
/// }
/// # }
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct ToolInfo {
    spec: Arc<ToolSpec>,
    fingerprint: u64,
    input_schema: Arc<OnceLock<Value>>,
    output_schema: Arc<OnceLock<Option<Value>>>,
}

impl std::fmt::Debug for ToolInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolInfo")
            .field("name", &self.spec.name)
            .field("version", &self.spec.version)
            .field("language", &self.spec.language)
            .field("dir", &self.spec.dir)
            .finish_non_exhaustive()
    }
}

impl PartialEq for ToolInfo {
    fn eq(&self, other: &Self) -> bool {
        self.spec == other.spec
    }
}

impl From<ToolSpec> for ToolInfo {
    /// The description of a tool parsed by `toolbind_codegen` (what the
    /// [`Loader`](crate::Loader) does for every tool folder it loads). A relative tool
    /// folder (and TOOL.md path) is made absolute against the current directory here, as
    /// the loader's folders are: a jailed process runs elsewhere.
    fn from(mut spec: ToolSpec) -> Self {
        if spec.dir.is_relative() {
            spec.dir = crate::dirs::given(spec.dir);
        }
        if spec.file.is_relative() {
            spec.file = crate::dirs::given(spec.file);
        }
        ToolInfo {
            fingerprint: spec.fingerprint(),
            spec: Arc::new(spec),
            input_schema: Arc::default(),
            output_schema: Arc::default(),
        }
    }
}

impl ToolInfo {
    /// The very same loaded description (not merely an equal one).
    pub(crate) fn same(&self, other: &ToolInfo) -> bool {
        Arc::ptr_eq(&self.spec, &other.spec)
    }

    /// The name a model calls the tool by (`name:`).
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The display name (`label:`; the name when TOOL.md has none).
    pub fn label(&self) -> &str {
        &self.spec.label
    }

    /// What the tool does, for the model (`description:`).
    pub fn description(&self) -> &str {
        &self.spec.description
    }

    /// The tool's version (`version:`, default 0).
    pub fn version(&self) -> u64 {
        self.spec.version
    }

    /// The entry's language (`language:`).
    pub fn language(&self) -> Language {
        self.spec.language
    }

    /// The portable JSON Schema of the tool's params (what the MCP dialect and the
    /// generated `SCHEMA` constant give), computed once.
    pub fn input_schema(&self) -> &Value {
        self.input_schema
            .get_or_init(|| toolbind_codegen::schema::portable(&self.spec))
    }

    /// The JSON Schema of the result's `details` the tool promises (TOOL.md `outputs:`),
    /// or `None` for a tool that declares none.
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema
            .get_or_init(|| toolbind_codegen::schema::output_schema(&self.spec))
            .as_ref()
    }

    /// The behaviour hints of TOOL.md `annotations:`.
    pub fn annotations(&self) -> Annotations {
        let a = &self.spec.annotations;
        Annotations {
            read_only: a.read_only,
            destructive: a.destructive,
            idempotent: a.idempotent,
            open_world: a.open_world,
        }
    }

    /// The tool's line of the system prompt's "Available tools" section
    /// (`prompt_snippet:`, else the description).
    pub fn prompt_line(&self) -> &str {
        self.spec.snippet()
    }

    /// The lines TOOL.md `prompt_guidelines:` adds to the system prompt's "Guidelines".
    pub fn prompt_guidelines(&self) -> &[String] {
        &self.spec.prompt_guidelines
    }

    /// The Markdown documentation after the frontmatter.
    pub fn docs(&self) -> &str {
        &self.spec.body.markdown
    }

    /// The tool's own timeout (`timeout:`), if it sets one.
    pub fn timeout(&self) -> Option<Duration> {
        self.spec.timeout()
    }

    /// The names of agent environment variables the tool may read (`env:`).
    pub fn env(&self) -> &[String] {
        &self.spec.env
    }

    /// The tool folder.
    pub fn dir(&self) -> &Path {
        &self.spec.dir
    }

    /// The TOOL.md file.
    pub fn file(&self) -> &Path {
        &self.spec.file
    }

    /// The entry file (`index.ts`, `index.py`, `index.sh`, ...), when the folder has one.
    pub fn entry(&self) -> Option<PathBuf> {
        self.spec.entry_path()
    }

    /// A hash of everything in TOOL.md that generated bindings depend on (name, inputs,
    /// outputs, ...), computed once at load; [`Tool::FINGERPRINT`] is the same hash of the
    /// TOOL.md the bindings were generated from.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// Top-level TOOL.md keys toolbind does not use (`category:`, `tags:`, ...), as JSON.
    pub fn metadata(&self) -> &std::collections::BTreeMap<String, Value> {
        &self.spec.metadata
    }

    /// The whole parsed TOOL.md, in toolbind-codegen's model. Not a stable API: it
    /// changes with the code generator (toolbind's own executors and CLI read it).
    #[doc(hidden)]
    pub fn spec(&self) -> &ToolSpec {
        &self.spec
    }
}

/// The behaviour hints of a tool (TOOL.md `annotations:`; MCP's tool annotations). `None`:
/// the tool does not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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

/// Why `ToolCall::from_call(name, args)` rejected a model's call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallError {
    /// No compiled tool has this name.
    UnknownTool {
        /// The name the model called.
        name: String,
        /// The names of the compiled tools.
        known: &'static [&'static str],
    },
    /// The arguments did not match the tool's params: the tool, and serde's message.
    BadArgs {
        /// The tool called.
        tool: &'static str,
        /// What was wrong, from serde.
        message: String,
    },
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::UnknownTool { name, known } => write!(
                f,
                "unknown tool `{name}`; available tools: {}",
                known.join(", ")
            ),
            CallError::BadArgs { tool, message } => {
                write!(f, "invalid arguments for tool `{tool}`: {message}")
            }
        }
    }
}

impl std::error::Error for CallError {}
