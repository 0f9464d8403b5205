// The documentation of this private module is on `toolbind::Tool`.

use serde::Serialize;
use serde::de::DeserializeOwned;
use toolbind_codegen::model::Language;

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
    /// [`ToolSpec::fingerprint`](crate::ToolSpec::fingerprint) of the TOOL.md this code was generated from.
    const FINGERPRINT: u64;
}

/// Static facts about one compiled tool, collected by the generated `TOOLS` slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolInfo {
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

impl ToolInfo {
    /// The facts of a [`Tool`] implementation.
    pub const fn of<T: Tool>() -> Self {
        ToolInfo {
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
