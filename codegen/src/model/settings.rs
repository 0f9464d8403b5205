//! How a tool runs: its language, worker, sandbox, execution, task support, approval and
//! questions, and its annotations.

use super::*;

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

/// Whether a model sees the tool from its first turn when tools are found by search
/// (TOOL.md `discovery:`; a runtime's progressive mode, `toolbind::discovery`). Without
/// progressive mode every tool is listed and this says nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum DiscoveryMode {
    /// The model finds the tool with `search_tools` first (the default).
    #[default]
    Search,
    /// `discovery: always`: listed from the first turn, beside `search_tools`.
    Always,
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
