//! A runtime's MCP servers: the ones declared on its builder, their connections once
//! built, and what the call pipeline asks of them (routing a call, checking an output).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::connection::{Abandon, Connection};
use super::exec::ConnectError;
use super::server::McpServer;
use crate::ToolInfo;
use crate::executor::Executor;
use crate::host::SharedHost;
use crate::loader::Registry;
use crate::output::OutputViolation;

/// The MCP servers given to a [`RuntimeBuilder`](crate::runtime::RuntimeBuilder), not
/// started yet.
#[derive(Default)]
pub(crate) struct Declared(Vec<McpServer>);

/// A built runtime's MCP servers, by name.
#[derive(Default)]
pub(crate) struct Servers(HashMap<String, Arc<Connection>>);

impl Declared {
    pub(crate) fn push(&mut self, server: McpServer) {
        self.0.push(server);
    }

    /// The servers, started and initialized now, their tools added to `registry`: see
    /// [`RuntimeBuilder::connect`](crate::runtime::RuntimeBuilder::connect).
    pub(crate) async fn connect(
        self,
        registry: &mut Registry,
        host: Option<SharedHost>,
        ask_timeout: Duration,
    ) -> Result<Servers, ConnectError> {
        let conns = self.connections(host, ask_timeout)?;
        // Every server starts at once (an agent with several waits for the slowest, not
        // for the sum); if one fails, the others' starts are stopped with the guard.
        let _stop = Abandon(conns.clone());
        let mut starts = tokio::task::JoinSet::new();
        for (i, conn) in conns.iter().enumerate() {
            let conn = conn.clone();
            starts.spawn(async move { (i, super::exec::connect(&conn).await) });
        }
        let mut tools = vec![Vec::new(); conns.len()];
        while let Some(done) = starts.join_next().await {
            // Not cancelled (the set is ours): an error is a panic, passed on.
            let (i, listed) = done.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
            tools[i] = listed?;
        }
        for (conn, tools) in conns.iter().zip(tools) {
            add_tools(registry, conn.server().get_name(), tools)?;
        }
        Ok(Servers::of(conns))
    }

    /// The servers, not started, their snapshots' tools added to `registry`: see
    /// [`RuntimeBuilder::try_build`](crate::runtime::RuntimeBuilder::try_build).
    pub(crate) fn build(
        self,
        registry: &mut Registry,
        host: Option<SharedHost>,
        ask_timeout: Duration,
    ) -> Result<Servers, ConnectError> {
        let conns = self.connections(host, ask_timeout)?;
        for conn in &conns {
            let server = conn.server();
            let Some(snapshot) = server.get_snapshot() else {
                return Err(ConnectError::new(
                    server.get_name(),
                    format!(
                        "MCP server `{}` has no snapshot, so its tools are not known until it runs: give it one (McpServer::snapshot) or build the runtime with RuntimeBuilder::connect().await",
                        server.get_name()
                    ),
                ));
            };
            let tools = super::exec::tools_of(server, snapshot);
            add_tools(registry, server.get_name(), tools)?;
        }
        Ok(Servers::of(conns))
    }

    /// A connection for each declared server, none started; two of one name are an error.
    fn connections(
        self,
        host: Option<SharedHost>,
        ask_timeout: Duration,
    ) -> Result<Vec<Arc<Connection>>, ConnectError> {
        let mut conns: Vec<Arc<Connection>> = Vec::new();
        for server in self.0 {
            if conns
                .iter()
                .any(|c| c.server().get_name() == server.get_name())
            {
                return Err(duplicate(server.get_name()));
            }
            let conn = Connection::new(server);
            conn.set_host(host.clone(), ask_timeout);
            conns.push(Arc::new(conn));
        }
        Ok(conns)
    }
}

impl Servers {
    fn of(conns: Vec<Arc<Connection>>) -> Self {
        Servers(
            conns
                .into_iter()
                .map(|c| (c.server().get_name().to_owned(), c))
                .collect(),
        )
    }

    /// The server named `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<Connection>> {
        self.0.get(name)
    }

    /// The executor of a runtime with these servers: `local` for local tools, and each
    /// MCP tool's call sent to its server.
    pub(crate) fn route(&self, local: Arc<dyn Executor>) -> Arc<dyn Executor> {
        if self.0.is_empty() {
            return local;
        }
        Arc::new(super::exec::Routed {
            local,
            servers: self.0.clone(),
        })
    }

    /// For an MCP server's tool, what breaks its `outputSchema` in `details` (`None`
    /// inside: nothing to check); `None` for a local tool.
    pub(crate) fn output_violations(
        &self,
        tool: &ToolInfo,
        details: Option<&serde_json::Value>,
    ) -> Option<Option<Vec<OutputViolation>>> {
        tool.spec().mcp.as_ref()?;
        Some(super::exec::output_violations(tool, details))
    }
}

fn duplicate(name: &str) -> ConnectError {
    ConnectError::new(
        name,
        format!("two MCP servers are named `{name}`: give each its own name"),
    )
}

/// Adds an MCP server's tools to the registry; a name already there is an error.
fn add_tools(
    registry: &mut Registry,
    server: &str,
    tools: Vec<ToolInfo>,
) -> Result<(), ConnectError> {
    for tool in tools {
        if let Err(t) = registry.insert(tool) {
            return Err(ConnectError::new(
                server,
                format!(
                    "MCP server `{server}` has a tool `{}`, a name another tool already has: give the server a prefix (McpServer::prefix, or `\"prefix\": \"{server}_\"` in its mcpServers entry)",
                    t.name()
                ),
            ));
        }
    }
    Ok(())
}
