//! The documentation `serve` offers besides the tools: one Markdown resource per tool, a
//! resource template for them, the system prompt as an MCP prompt, and the `instructions`.
//!
//! Every text comes from codegen's renderers, so it is what `toolbind docs` and `toolbind
//! prompt` print: a tool's resource is its `toolbind docs` section
//! ([`prompt::tool_reference`], at heading level 1), the prompt is `toolbind prompt`
//! ([`prompt::system_prompt`]), and the instructions are its "Available tools" and
//! "Guidelines" sections.
//!
//! URIs: `toolbind://tools/<name>` (template `toolbind://tools/{name}`), `text/markdown`.

use std::collections::{BTreeMap, BTreeSet};

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CompleteRequestParams, CompletionInfo, GetPromptResult, Prompt, PromptMessage,
    ReadResourceResult, Reference, Resource, ResourceContents, ResourceTemplate, Role,
};
use toolbind_codegen::ToolSpec;
use toolbind_codegen::prompt;

/// The scheme and path every tool's documentation lives under.
pub const TOOL_URI_PREFIX: &str = "toolbind://tools/";
/// The RFC 6570 template of the tools' documentation URIs.
pub const TOOL_URI_TEMPLATE: &str = "toolbind://tools/{name}";
/// The name of the MCP prompt holding the system prompt.
pub const SYSTEM_PROMPT: &str = "system_prompt";
const MARKDOWN: &str = "text/markdown";

/// The documentation of the loaded tools at one moment.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Docs {
    /// Tool name -> (label, description, its reference page).
    pages: BTreeMap<String, (String, String, String)>,
    system_prompt: String,
    instructions: String,
}

impl Docs {
    /// The documentation of `specs`, in registry order for the prompt texts.
    pub fn of(specs: &[ToolSpec]) -> Self {
        let pages = specs
            .iter()
            .map(|t| {
                (
                    t.name.clone(),
                    (
                        t.label.clone(),
                        t.description.trim().to_owned(),
                        prompt::tool_reference(t, 1),
                    ),
                )
            })
            .collect();
        let mut instructions = prompt::available_tools(specs);
        if let Some(g) = prompt::guidelines(specs) {
            instructions.push('\n');
            instructions.push_str(&g);
        }
        instructions.push_str(&format!(
            "\nEach tool's full documentation (inputs, usage, examples, errors) is the resource \
             `{TOOL_URI_TEMPLATE}` (text/markdown); the whole system prompt for these tools is \
             the prompt `{SYSTEM_PROMPT}`.\n"
        ));
        Docs {
            pages,
            system_prompt: prompt::system_prompt(specs),
            instructions,
        }
    }

    /// These docs with the `instructions` and system prompt of `serve --progressive`: those
    /// of `core` (the listed tools' docs) and `line`, on the tools to search for.
    pub fn progressive(mut self, core: &Docs, line: &str) -> Self {
        self.instructions = format!("{}\n{line}", core.instructions);
        self.system_prompt = format!("{}\n{line}", core.system_prompt);
        self
    }

    /// The server's `instructions`: the tools, one line each, the guidelines, and where the
    /// full documentation is.
    pub fn instructions(&self) -> &str {
        &self.instructions
    }

    /// `resources/list`: one resource per tool.
    pub fn resources(&self) -> Vec<Resource> {
        self.pages
            .iter()
            .map(|(name, (label, description, page))| {
                Resource::new(format!("{TOOL_URI_PREFIX}{name}"), name.clone())
                    .with_title(format!("{label}: documentation"))
                    .with_description(description.clone())
                    .with_mime_type(MARKDOWN)
                    .with_size(page.len() as u64)
            })
            .collect()
    }

    /// `resources/templates/list`.
    pub fn templates() -> Vec<ResourceTemplate> {
        vec![
            ResourceTemplate::new(TOOL_URI_TEMPLATE, "tool_docs")
                .with_title("Tool documentation")
                .with_description(
                    "The documentation of one tool by name: label, description, inputs and \
                     its TOOL.md body (usage, examples, error handling)",
                )
                .with_mime_type(MARKDOWN),
        ]
    }

    /// `resources/read`; an unknown URI is a resource-not-found error naming what exists.
    pub fn read(&self, uri: &str) -> Result<ReadResourceResult, McpError> {
        let page = uri
            .strip_prefix(TOOL_URI_PREFIX)
            .and_then(|name| self.pages.get(name));
        match page {
            Some((_, _, page)) => Ok(ReadResourceResult::new(vec![
                ResourceContents::text(page.clone(), uri).with_mime_type(MARKDOWN),
            ])),
            None => {
                let known: Vec<String> = self
                    .pages
                    .keys()
                    .map(|n| format!("{TOOL_URI_PREFIX}{n}"))
                    .collect();
                Err(McpError::resource_not_found(
                    format!(
                        "no resource `{}`; the resources are {}",
                        shortened(uri),
                        if known.is_empty() {
                            "none (no tools are loaded)".to_owned()
                        } else {
                            known.join(", ")
                        }
                    ),
                    // MCP: the error's data names the URI that was not found (shortened:
                    // an echo is never the client's megabytes).
                    Some(serde_json::json!({ "uri": shortened(uri) })),
                ))
            }
        }
    }

    /// The URIs of the pages that differ between `self` and `new` (changed, added or
    /// removed): what `resources/updated` goes out for.
    pub fn changed_pages(&self, new: &Docs) -> BTreeSet<String> {
        let names = self.pages.keys().chain(new.pages.keys());
        names
            .filter(|n| self.pages.get(*n) != new.pages.get(*n))
            .map(|n| format!("{TOOL_URI_PREFIX}{n}"))
            .collect()
    }

    /// `completion/complete`: the `name` argument of the docs template
    /// ([`TOOL_URI_TEMPLATE`]) completes to the tool names starting with what was typed
    /// (ignoring case), at most [`CompletionInfo::MAX_VALUES`]. Anything else this server
    /// does not complete (the system prompt has no arguments; other prompts and templates
    /// are not served): no values.
    pub fn complete(&self, request: &CompleteRequestParams) -> CompletionInfo {
        let docs_name = matches!(&request.r#ref, Reference::Resource(r) if r.uri == TOOL_URI_TEMPLATE)
            && request.argument.name == "name";
        if !docs_name {
            return CompletionInfo::default();
        }
        let typed = request.argument.value.to_lowercase();
        let matching: Vec<&String> = self
            .pages
            .keys()
            .filter(|n| n.to_lowercase().starts_with(&typed))
            .collect();
        let total = matching.len();
        let values: Vec<String> = matching
            .into_iter()
            .take(CompletionInfo::MAX_VALUES)
            .cloned()
            .collect();
        let more = values.len() < total;
        CompletionInfo::with_pagination(values, u32::try_from(total).ok(), more).unwrap_or_default()
    }

    /// `prompts/list`: the system prompt.
    pub fn prompts() -> Vec<Prompt> {
        vec![
            Prompt::new(
                SYSTEM_PROMPT,
                Some(
                    "The system prompt for the served tools (what `toolbind prompt` prints): \
                     the available tools, the guidelines and each tool's documentation",
                ),
                None,
            )
            .with_title("System prompt for these tools"),
        ]
    }

    /// `prompts/get`; an unknown name is an invalid-params error.
    pub fn prompt(&self, name: &str) -> Result<GetPromptResult, McpError> {
        if name != SYSTEM_PROMPT {
            return Err(McpError::invalid_params(
                format!(
                    "no prompt `{}`; the prompts are: {SYSTEM_PROMPT}",
                    toolbind::untrusted::echo(name)
                ),
                None,
            ));
        }
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            self.system_prompt.clone(),
        )])
        .with_description("The system prompt for the served tools"))
    }
}

/// `uri` as an error message quotes it: at most 200 characters.
pub(crate) fn shortened(uri: &str) -> String {
    toolbind::untrusted::echo(uri).into_owned()
}
