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
    /// The snapshot as JSON, when the module is to carry it ([`Self::with_snapshot`]).
    pub snapshot: Option<String>,
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
            snapshot: None,
        }
    }

    /// The module carries the snapshot it was generated from (`SNAPSHOT` and a
    /// `snapshot()` that reads it, for `McpServer::snapshot`), so a program names the
    /// snapshot file once, where the bindings are generated. `json`: the snapshot as
    /// [`Snapshot::to_json`](crate::mcp::Snapshot::to_json) writes it.
    pub fn with_snapshot(mut self, json: String) -> Self {
        self.snapshot = Some(json);
        self
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
    if let Some(json) = &server.snapshot {
        snapshot_items(w, json);
    }
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

/// `SNAPSHOT` (compact JSON: the file's indentation would only cost compile time) and
/// `snapshot()`, which reads it back for the runtime.
fn snapshot_items(w: &mut W, json: &str) {
    let rt = w.rt.clone();
    let compact = serde_json::from_str::<serde_json::Value>(json)
        .map_or_else(|_| json.to_owned(), |v| v.to_string());
    w.line("/// The snapshot these bindings were generated from, as JSON.");
    w.line(&format!("pub const SNAPSHOT: &str = {};", lit(&compact)));
    w.line("/// The snapshot these bindings were generated from: give it to the runtime with");
    w.line("/// `McpServer::snapshot(snapshot())`, so the snapshot file is named only where the");
    w.line("/// bindings are generated.");
    w.open(&format!(
        "pub fn snapshot() -> {rt}::__private::McpSnapshot {{"
    ));
    w.line(&format!("{rt}::__private::mcp_snapshot(SERVER, SNAPSHOT)"));
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
