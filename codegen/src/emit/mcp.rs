//! An MCP server's module: one module per tool (its types and its `McpTool` impl), the
//! server's `ToolCall` and its `TOOLS`.

use crate::model::ToolSpec;
use crate::rustdoc::{code, text};
use crate::{prompt, schema};

use super::Generator;
use super::layout::{W, include_bytes, lit};
use super::tool_call::{Calls, tool_call, tools_static};
use super::types::{VALUE_DERIVES, params_and_types};

/// One MCP server's tools, for [`rust_with_mcp`](super::rust_with_mcp).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpServerCode {
    /// The server's Rust module name.
    pub module: String,
    /// The snapshot's name (the server's key in the `mcpServers` config).
    pub name: String,
    /// `name version` of the server, as it introduced itself.
    pub server: String,
    /// The snapshot file, as given.
    pub file: String,
    /// Its tools ([`crate::mcp::tool_specs`]).
    pub tools: Vec<ToolSpec>,
}

impl McpServerCode {
    /// A server's code from its parts.
    pub fn new(
        module: String,
        name: String,
        server: String,
        file: String,
        tools: Vec<ToolSpec>,
    ) -> Self {
        McpServerCode {
            module,
            name,
            server,
            file,
            tools,
        }
    }
}

pub(super) fn mcp_server(w: &mut W, server: &McpServerCode, generator: Generator) {
    let rt = w.rt.clone();
    w.doc(&format!(
        "Tools of the MCP server {} ({}), from the snapshot {}.",
        code(&server.name),
        text(&server.server),
        code(&server.file)
    ));
    w.line(
        "#[allow(rustdoc::broken_intra_doc_links, rustdoc::bare_urls, rustdoc::invalid_html_tags)]",
    );
    w.open(&format!("pub mod {} {{", server.module));
    w.line(&format!("{rt}::__mcp_bindings!();"));
    if generator == Generator::Macro {
        include_bytes(w, &server.file);
    }
    w.line("/// The snapshot's name: the server's key in the `mcpServers` config.");
    w.line(&format!("pub const SERVER: &str = {};", lit(&server.name)));
    for tool in &server.tools {
        mcp_tool_module(w, tool);
    }
    tool_call(
        w,
        &server.tools,
        Calls::Mcp,
        "/// A model's call of one of the server's tools, parsed into its generated params.",
    );
    tools_static(
        w,
        &server.tools,
        "CompiledMcpTool",
        &[
            "/// Static facts (names, schemas, contract hash) about every tool of the server, in",
            "/// name order.",
        ],
    );
    w.close("}");
}

fn mcp_tool_module(w: &mut W, tool: &ToolSpec) {
    let rt = w.rt.clone();
    let origin = tool.mcp.as_ref().expect("an MCP tool");
    let desc = tool.description.trim();
    if desc.is_empty() {
        w.doc(&format!("{}.", code(&origin.name)));
    } else {
        w.doc(&format!("{}: {}", code(&origin.name), text(desc)));
    }
    w.open(&format!("pub mod {} {{", tool.rust_module));
    params_and_types(w, tool);
    w.doc(&format!(
        "The {} tool of the server {}.",
        code(&origin.name),
        code(&origin.server)
    ));
    let mut derives = VALUE_DERIVES.to_vec();
    derives.insert(3, "::core::default::Default");
    w.derive(&derives);
    w.line("pub struct Tool;");
    w.open(&format!("impl {rt}::__private::McpTool for Tool {{"));
    w.line("type Params = Params;");
    if tool.outputs.is_empty() {
        w.line(&format!(
            "type Output = {rt}::__private::serde_json::Value;"
        ));
    } else {
        w.line("type Output = Output;");
    }
    w.line(&format!("const NAME: &'static str = {};", lit(&tool.name)));
    w.line(&format!(
        "const MCP_NAME: &'static str = {};",
        lit(&origin.name)
    ));
    w.line(&format!(
        "const SERVER: &'static str = {};",
        lit(&origin.server)
    ));
    w.line(&format!(
        "const TITLE: &'static str = {};",
        lit(&tool.label)
    ));
    w.line(&format!(
        "const DESCRIPTION: &'static str = {};",
        lit(&tool.description)
    ));
    w.line(&format!(
        "const SCHEMA: &'static str = {};",
        lit(&schema::portable_json(tool))
    ));
    let input = serde_json::to_string(&origin.input_schema).expect("JSON serializes");
    w.line(&format!(
        "const INPUT_SCHEMA: &'static str = {};",
        lit(&input)
    ));
    match &origin.output_schema {
        Some(o) => {
            w.call(
                "const OUTPUT_SCHEMA: ::core::option::Option<&'static str> = ::core::option::Option::Some(",
                &lit(&serde_json::to_string(o).expect("JSON serializes")),
                true,
                ");",
            );
        }
        None => w.line(
            "const OUTPUT_SCHEMA: ::core::option::Option<&'static str> = ::core::option::Option::None;",
        ),
    }
    w.line(&format!(
        "const PROMPT: &'static str = {};",
        lit(&prompt::tool_line(tool))
    ));
    w.line(&format!(
        "const CONTRACT: &'static str = {};",
        lit(&origin.contract)
    ));
    w.close("}");
    w.close("}");
}
