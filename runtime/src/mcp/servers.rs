//! A runtime's MCP servers: the ones declared on its builder, their connections once
//! built, and what the call pipeline asks of them (routing a call, checking an output).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::McpServerState;
use super::connection::{Abandon, Connection};
use super::exec::ConnectError;
use super::join::{self, Book};
use super::server::McpServer;
use crate::ToolInfo;
use crate::executor::Executor;
use crate::host::SharedHost;
use crate::loader::Registry;
use crate::output::OutputViolation;

/// The MCP servers given to a [`RuntimeBuilder`](crate::runtime::RuntimeBuilder), not
/// started yet, and how [`connect`](crate::runtime::RuntimeBuilder::connect) waits for
/// them.
#[derive(Default)]
pub(crate) struct Declared {
    servers: Vec<McpServer>,
    pub(crate) wait: StartWait,
}

/// How long `connect` waits for the servers' starts, and what it does with a server that
/// is not ready then.
pub(crate) struct StartWait {
    /// The longest wait for the servers to settle (up, or failed).
    pub(crate) bound: Duration,
    /// Every server must start: the first failure is the error of `connect`.
    pub(crate) strict: bool,
    /// Stop waiting once a tool of this name is ready.
    pub(crate) for_tool: Option<String>,
}

/// How long `connect` waits for servers to settle, by default: an `npx -y` server's
/// first start downloads it (10–30 s).
pub(crate) const DEFAULT_START_WAIT: Duration = Duration::from_secs(30);

impl Default for StartWait {
    fn default() -> Self {
        StartWait {
            bound: DEFAULT_START_WAIT,
            strict: false,
            for_tool: None,
        }
    }
}

/// A built runtime's MCP servers, by name, and the servers whose tools it does not know
/// (not ready when it was built, and without a snapshot).
#[derive(Default)]
pub(crate) struct Servers(HashMap<String, Arc<Connection>>, Vec<String>);

impl Declared {
    pub(crate) fn push(&mut self, server: McpServer) {
        self.servers.push(server);
    }

    /// The servers, started now (all at once) and waited for as `self.wait` says, the
    /// tools of those ready added to `registry`, with the snapshots' tools of the others:
    /// see [`RuntimeBuilder::connect`](crate::runtime::RuntimeBuilder::connect).
    pub(crate) async fn connect(
        self,
        registry: &mut Registry,
        host: Option<SharedHost>,
        ask_timeout: Duration,
    ) -> Result<Servers, ConnectError> {
        let wait = self.wait;
        let conns = connections(self.servers, host, ask_timeout)?;
        // Each start runs on its own and outlives the wait: a server still starting at
        // the bound goes on, its state shows when it is up, and (without a snapshot)
        // its tools join then.
        let book = Arc::new(Book::default());
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        for (i, conn) in conns.iter().enumerate() {
            tokio::spawn(join::start(conn.clone(), i, tx.clone(), book.clone()));
        }
        drop(tx);
        // If connect fails (strict), the starts in progress are stopped with the guard.
        let mut stop = Abandon(conns.clone());
        // Strict waits for every server whatever tool is wanted.
        let known = !wait.strict
            && wait
                .for_tool
                .as_deref()
                .is_some_and(|name| has_tool(registry, &conns, name));
        let (mut tools, found) = if known {
            (vec![None; conns.len()], true)
        } else {
            settled(&mut rx, conns.len(), &wait).await?
        };
        // The wait is over: the starts still under way go on. Under the book's lock, so
        // a start that ends now joins the built runtime, not this list.
        stop.0.clear();
        let mut names = book.names();
        rx.close();
        while let Ok((i, outcome)) = rx.try_recv() {
            tools[i].get_or_insert(outcome);
        }
        let failed: Vec<bool> = tools.iter().map(|t| matches!(t, Some(Err(_)))).collect();
        let unlisted = add_connected(registry, &conns, tools, wait.strict)?;
        names.open(registry);
        drop(names);
        // Once the wanted tool is there, the other servers are not waited for: no warning.
        for (conn, failed) in conns.iter().zip(failed) {
            if !found {
                warn_not_ready(conn);
            }
            // A failed server whose tools are not known is tried again until they are.
            if failed && unlisted.iter().any(|n| n == conn.server().get_name()) {
                tokio::spawn(join::keep_trying(Arc::downgrade(conn), book.clone(), None));
            }
        }
        let mut servers = Servers::of(conns);
        servers.1 = unlisted;
        Ok(servers)
    }

    /// The servers, not started, their snapshots' tools added to `registry`: see
    /// [`RuntimeBuilder::try_build`](crate::runtime::RuntimeBuilder::try_build).
    pub(crate) fn build(
        self,
        registry: &mut Registry,
        host: Option<SharedHost>,
        ask_timeout: Duration,
    ) -> Result<Servers, ConnectError> {
        let conns = connections(self.servers, host, ask_timeout)?;
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
}

impl Servers {
    fn of(conns: Vec<Arc<Connection>>) -> Self {
        Servers(
            conns
                .into_iter()
                .map(|c| (c.server().get_name().to_owned(), c))
                .collect(),
            Vec::new(),
        )
    }

    /// Each server's state, by name.
    pub(crate) fn states(&self) -> Vec<(String, McpServerState)> {
        let mut out: Vec<_> = self
            .0
            .iter()
            .map(|(name, c)| (name.clone(), c.state()))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Tool `name` of a server that came up after the runtime was built.
    pub(crate) fn joined(&self, name: &str) -> Option<&ToolInfo> {
        self.1
            .iter()
            .filter_map(|s| self.0.get(s)?.late.get())
            .flatten()
            .find(|t| t.name() == name)
    }

    /// The tools of the servers that came up after the runtime was built.
    pub(crate) fn joined_tools(&self) -> impl Iterator<Item = &ToolInfo> {
        self.1
            .iter()
            .filter_map(|s| self.0.get(s)?.late.get())
            .flatten()
    }

    /// For an unknown tool's message (the model reads it): the servers whose tools the
    /// runtime does not have, and in a word why — never their text (stderr lines, HTTP
    /// bodies), which is the operator's ([`crate::Runtime::mcp_servers`]); at most ten.
    pub(crate) fn unknown_note(&self) -> Option<String> {
        let mut notes = Vec::new();
        for name in &self.1 {
            let Some(conn) = self.0.get(name) else {
                continue;
            };
            if conn.late.get().is_some() {
                continue;
            }
            let state = match conn.state() {
                McpServerState::Ready => "up, its tools about to join",
                McpServerState::Starting | McpServerState::NotStarted => "still starting",
                McpServerState::NeedsLogin { .. } => "needs a login",
                McpServerState::Refused { .. } => "refused: a tool name another tool has",
                _ => "failed to start",
            };
            notes.push(format!("MCP server `{name}` ({state})"));
        }
        if notes.is_empty() {
            return None;
        }
        notes.sort();
        let more = notes.len().saturating_sub(10);
        notes.truncate(10);
        if more > 0 {
            notes.push(format!("and {more} more"));
        }
        Some(format!(
            "; the tools of these servers are not in this runtime: {}",
            notes.join(", ")
        ))
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

/// A connection for each declared server, none started; two of one name are an error.
fn connections(
    servers: Vec<McpServer>,
    host: Option<SharedHost>,
    ask_timeout: Duration,
) -> Result<Vec<Arc<Connection>>, ConnectError> {
    let mut conns: Vec<Arc<Connection>> = Vec::new();
    for server in servers {
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

fn duplicate(name: &str) -> ConnectError {
    ConnectError::new(
        name,
        format!("two MCP servers are named `{name}`: give each its own name"),
    )
}

/// Adds an MCP server's tools to the registry, all or none: a name already there is an
/// error, and then none is added.
fn add_tools(
    registry: &mut Registry,
    server: &str,
    tools: Vec<ToolInfo>,
) -> Result<(), ConnectError> {
    if let Some(t) = tools.iter().find(|t| registry.get(t.name()).is_some()) {
        return Err(join::clash(server, t.name()));
    }
    for tool in tools {
        // Checked above; a server's list has no name twice (its snapshot refuses that).
        let _ = registry.insert(tool);
    }
    Ok(())
}

/// A result of one server's start: its tools, or why it has none.
type Started = Option<Result<Vec<ToolInfo>, ConnectError>>;

/// Whether the runtime has tool `name` without waiting: a local one, or one of a snapshot.
fn has_tool(registry: &Registry, conns: &[Arc<Connection>], name: &str) -> bool {
    registry.get(name).is_some()
        || conns.iter().any(|c| {
            c.server().get_snapshot().is_some_and(|s| {
                super::exec::tools_of(c.server(), s)
                    .iter()
                    .any(|t| t.name() == name)
            })
        })
}

/// The starts' results as they come, until all `n` are in, `wait.bound` has passed (not
/// when strict), or `wait.for_tool` is ready (`true` then); strict, the first failure is
/// the error.
async fn settled(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<join::Outcome>,
    n: usize,
    wait: &StartWait,
) -> Result<(Vec<Started>, bool), ConnectError> {
    let mut tools: Vec<Started> = vec![None; n];
    let deadline = (!wait.strict).then(|| tokio::time::Instant::now() + wait.bound);
    loop {
        let next = match deadline {
            Some(d) => match tokio::time::timeout_at(d, rx.recv()).await {
                Ok(n) => n,
                Err(_) => break,
            },
            None => rx.recv().await,
        };
        let Some((i, listed)) = next else { break };
        if wait.strict
            && let Err(e) = listed
        {
            return Err(e);
        }
        tools[i] = Some(listed);
        if let Some(name) = &wait.for_tool
            && !wait.strict
            && tools
                .iter()
                .flatten()
                .flatten()
                .flatten()
                .any(|t| t.name() == name)
        {
            return Ok((tools, true));
        }
    }
    Ok((tools, false))
}

/// Adds each server's tools to `registry`: the listed ones of a server that is up, the
/// snapshot's of one that is not. A server whose tools clash is refused (strict: the
/// error). Returns the servers whose tools the runtime does not have.
fn add_connected(
    registry: &mut Registry,
    conns: &[Arc<Connection>],
    tools: Vec<Started>,
    strict: bool,
) -> Result<Vec<String>, ConnectError> {
    let mut unlisted = Vec::new();
    for (conn, listed) in conns.iter().zip(tools) {
        let server = conn.server();
        let listed = match listed {
            Some(Ok(tools)) => Some(tools),
            _ => None,
        };
        if listed.is_none() && server.get_snapshot().is_none() {
            unlisted.push(server.get_name().to_owned());
        }
        // Not ready: its snapshot's tools, which wait for its start or say why it
        // failed; without one its tools are not known.
        let tools = listed.unwrap_or_else(|| match server.get_snapshot() {
            Some(snapshot) => super::exec::tools_of(server, snapshot),
            None => Vec::new(),
        });
        if let Err(e) = add_tools(registry, server.get_name(), tools) {
            if strict {
                return Err(e);
            }
            crate::telemetry::warn(&format!("toolbind: warning: {e}"));
            conn.refuse(e.to_string());
            if !unlisted.iter().any(|n| n == server.get_name()) {
                unlisted.push(server.get_name().to_owned());
            }
        }
    }
    Ok(unlisted)
}

/// A warning for a server that is not ready when `connect` returns.
fn warn_not_ready(conn: &Connection) {
    match conn.state() {
        McpServerState::Ready | McpServerState::Refused { .. } => {}
        state => crate::telemetry::warn(&format!(
            "toolbind: warning: MCP server `{}` is not ready ({state}); the other servers' tools are callable{}",
            conn.server().get_name(),
            if conn.server().get_snapshot().is_some() {
                ", and its snapshot's tools wait for it"
            } else {
                "; its tools are not in this runtime (it has no snapshot)"
            }
        )),
    }
}
