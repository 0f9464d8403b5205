//! The MCP executor: a runtime's calls of MCP tools go to their server's connection, the
//! rest to the local executor.

use crate::lock::Locked;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use super::connection::Connection;
use super::{McpServer, Snapshot};
use crate::ToolInfo;
use crate::executor::{ExecCall, ExecFuture, Executor, PrepareFuture};
use crate::output::OutputViolation;
use crate::result::{StopReason, ToolResult};

/// Why [`RuntimeBuilder::connect`](crate::runtime::RuntimeBuilder::connect) could not
/// build the runtime: the server, and what went wrong (its last stderr lines included).
/// Without [`mcp_strict`](crate::runtime::RuntimeBuilder::mcp_strict), only two servers of
/// one name are such an error: a server that cannot start affects its own tools only
/// ([`Runtime::mcp_servers`](crate::Runtime::mcp_servers)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectError {
    server: String,
    message: String,
}

impl ConnectError {
    pub(crate) fn new(server: &str, message: impl Into<String>) -> Self {
        ConnectError {
            server: server.to_owned(),
            message: message.into(),
        }
    }

    /// The server's name.
    pub fn server(&self) -> &str {
        &self.server
    }
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConnectError {}

/// Routes each call: an MCP tool's to its server, every other to `local`.
pub(crate) struct Routed {
    pub(crate) local: Arc<dyn Executor>,
    pub(crate) servers: HashMap<String, Arc<Connection>>,
}

impl Drop for Routed {
    fn drop(&mut self) {
        // A start in progress holds its connection: stop it with the runtime.
        for c in self.servers.values() {
            c.abandon();
        }
    }
}

impl Executor for Routed {
    fn execute<'a>(&'a self, call: ExecCall<'a>) -> ExecFuture<'a> {
        let Some(origin) = call.tool.spec().mcp.as_ref() else {
            return self.local.execute(call);
        };
        let Some(conn) = self.servers.get(&origin.server) else {
            let text = format!(
                "tool `{}` belongs to MCP server `{}`, which this runtime was not given (RuntimeBuilder::mcp_server)",
                call.tool.name(),
                origin.server
            );
            return Box::pin(std::future::ready(ToolResult::stopped(
                StopReason::UnknownTool,
                text,
            )));
        };
        Box::pin(conn.call(&origin.name, &origin.contract, call))
    }

    fn prepare<'a>(
        &'a self,
        tool: &'a ToolInfo,
        args: Value,
        timeout: std::time::Duration,
    ) -> PrepareFuture<'a> {
        if tool.spec().mcp.is_some() {
            return Box::pin(std::future::ready(Ok(args)));
        }
        self.local.prepare(tool, args, timeout)
    }

    fn prepares(&self, tool: &ToolInfo) -> bool {
        tool.spec().mcp.is_none() && self.local.prepares(tool)
    }

    fn polls_in_call_span(&self, tool: &ToolInfo) -> bool {
        // A server's call makes its `tools/call` span a child of the current one.
        tool.spec().mcp.is_some() || self.local.polls_in_call_span(tool)
    }

    fn sandbox(
        &self,
        languages: &[crate::tool::Language],
    ) -> Option<crate::sandbox::SandboxStatus> {
        self.local.sandbox(languages)
    }
}

/// The tools of `snapshot` as the runtime lists them, the server's prefix on their names
/// and its sensitive inputs marked.
pub(crate) fn tools_of(server: &McpServer, snapshot: &Snapshot) -> Vec<ToolInfo> {
    let mut specs = toolbind_codegen::mcp::tool_specs(snapshot, &server.prefix);
    for spec in &mut specs {
        spec.warnings.clear();
        // The server the snapshot is given to serves its tools, whatever name the
        // snapshot was written under.
        if let Some(origin) = &mut spec.mcp {
            origin.server.clone_from(&server.name);
        }
        for input in &mut spec.inputs {
            if server.sensitive.contains(&input.name) {
                input.sensitive = true;
            }
        }
    }
    specs.into_iter().map(ToolInfo::from).collect()
}

/// Connects `server` now and returns its tools: the snapshot's when it has one (plus any
/// the live list adds, untyped), else the live list's.
pub(crate) async fn connect(conn: &Arc<Connection>) -> Result<Vec<ToolInfo>, ConnectError> {
    let server = conn.server();
    let live = conn
        .live()
        .await
        .map_err(|r| ConnectError::new(&server.name, r.text_content()))?;
    let listed = Connection::listed(&live);
    let tools = match &server.snapshot {
        Some(snap) => {
            let mut tools = snap.tools.clone();
            tools.extend(listed.into_iter().filter(|t| snap.tool(&t.name).is_none()));
            tools
        }
        None => listed,
    };
    let info = server
        .snapshot
        .as_ref()
        .map(|s| s.server.clone())
        .unwrap_or_default();
    let snapshot =
        Snapshot::new(&server.name, info, live.protocol.clone(), tools).map_err(|e| {
            ConnectError::new(&server.name, format!("MCP server `{}`: {e}", server.name))
        })?;
    Ok(tools_of(server, &snapshot))
}

/// For an MCP tool that gave an `outputSchema`: what is wrong with `details` (its
/// `structuredContent`) by that schema; `None` for a tool without one (or a schema that
/// does not compile: a remote `$ref` is never fetched).
pub(crate) fn output_violations(
    tool: &ToolInfo,
    details: Option<&Value>,
) -> Option<Vec<OutputViolation>> {
    let origin = tool.spec().mcp.as_ref()?;
    let schema = origin.output_schema.as_ref()?;
    type Cache = Mutex<HashMap<String, Option<Arc<jsonschema::Validator>>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let validator = CACHE
        .get_or_init(Default::default)
        .locked()
        .entry(origin.contract.clone())
        .or_insert_with(|| super::validator(schema).map(Arc::new))
        .clone()?;
    let Some(details) = details else {
        return Some(vec![OutputViolation {
            field: String::new(),
            message:
                "missing: the tool has an outputSchema but the result has no structuredContent"
                    .into(),
        }]);
    };
    // Bounded before it runs: the check cannot be stopped once it has begun.
    if let Err(e) = toolbind_codegen::schema_work::check_work(
        schema,
        details,
        toolbind_codegen::schema_work::MAX_CHECK_WORK,
    ) {
        return Some(vec![OutputViolation {
            field: String::new(),
            message: format!("not checked: checking it against the outputSchema is refused, {e}"),
        }]);
    }
    Some(
        validator
            .iter_errors(details)
            .take(10)
            .map(|e| OutputViolation {
                field: e
                    .instance_path()
                    .to_string()
                    .trim_start_matches('/')
                    .replace('/', "."),
                message: e.to_string(),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::SnapshotTool;

    /// A config's `"prefix"` is the user's text: one with a path, a newline or a control
    /// character still gives a name every provider accepts.
    #[test]
    fn a_hostile_prefix_still_gives_provider_safe_names() {
        let tool = SnapshotTool::from_listed(
            &serde_json::json!({"name": "read", "inputSchema": {"type": "object"}}),
        )
        .unwrap();
        let snap = Snapshot::new("s", Default::default(), "2025-11-25", vec![tool]).unwrap();
        for prefix in ["../", "a\nb_", "\u{7}", &"x".repeat(200)] {
            let server = McpServer::stdio("s", "true", Vec::<String>::new()).prefix(prefix);
            let tools = tools_of(&server, &snap);
            let name = tools[0].name();
            assert!(
                !name.is_empty()
                    && name.len() <= 64
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
                "{prefix:?} gave {name:?}"
            );
        }
    }
}
