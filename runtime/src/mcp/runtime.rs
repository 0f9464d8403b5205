//! The MCP side of the [`Runtime`] and its builder: declaring servers, connecting them,
//! and the typed path of their tools.

use serde_json::Value;

use super::exec::ConnectError;
use super::server::McpServer;
use crate::StopReason;
use crate::result::{Content, ToolResult};
use crate::runtime::typed::params_object;
use crate::runtime::{CallOptions, Runtime, RuntimeBuilder};

impl RuntimeBuilder {
    /// An MCP server whose tools join the runtime's tool list ([`Runtime::call`] reaches
    /// them by name, [`Runtime::call_mcp`] by their generated types). Its calls get the
    /// same validation (against the server's own `inputSchema` too), redaction, timeouts,
    /// cancellation (`notifications/cancelled`), progress, truncation and output checks
    /// (against its `outputSchema`) as local tools'. With [`build`](Self::build), the
    /// server needs a [`snapshot`](crate::mcp::McpServer::snapshot), its tools are the
    /// snapshot's, and it is started on the first call; with [`connect`](Self::connect) it
    /// is started now.
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub fn mcp_server(mut self, server: McpServer) -> Self {
        self.mcp.push(server);
        self
    }

    /// The runtime, with every [MCP server](Self::mcp_server) started (or reached) and
    /// initialized now, its live tool list checked against its snapshot (when it has
    /// one) and added to the runtime's: the snapshot's tools, and any tool the server now
    /// lists beyond them (callable by name, untyped). A server without a snapshot gives
    /// its live list.
    ///
    /// One server that cannot start affects only its own tools. `connect` waits until
    /// every server is up or has failed, at most [`mcp_start_wait`](Self::mcp_start_wait)
    /// (30 s), and returns the runtime with the tools of the servers that are up, and the
    /// snapshot's tools of the others (their calls wait for the start still under way, or
    /// say why the server failed; a failed server is started again by a call after its
    /// backoff). A server without a snapshot that is not up by then goes on starting (one
    /// that failed is tried again in the background) and its tools join the runtime's once
    /// it is up ([`Runtime::tool_list`], [`Runtime::tool`]; not
    /// [`Runtime::registry`], the list as built). [`Runtime::mcp_servers`] says each
    /// server's state, and each server not
    /// ready is a warning on stderr (the tracing subscriber's, when one is set). A server
    /// with a tool name that another source has is refused (its tools are not added; the
    /// others' are).
    ///
    /// An error: two servers of one name; and with [`mcp_strict`](Self::mcp_strict), the
    /// first server that could not start and why (its last stderr lines included), or a
    /// tool name that two sources share.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), toolbind::mcp::ConnectError> {
    /// use toolbind::mcp::McpServer;
    /// let runtime = toolbind::Runtime::builder()
    ///     .registry(toolbind::Loader::new().env().load().registry)
    ///     .mcp_server(McpServer::stdio("memory", "npx", ["-y", "@modelcontextprotocol/server-memory"]))
    ///     .connect()
    ///     .await?;
    /// # drop(runtime); Ok(()) }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub async fn connect(mut self) -> Result<Runtime, ConnectError> {
        let servers = std::mem::take(&mut self.mcp)
            .connect(
                &mut self.registry,
                self.host.clone(),
                self.config.ask_timeout,
            )
            .await?;
        Ok(self.finish(servers))
    }

    /// The longest [`connect`](Self::connect) waits for the MCP servers' starts (30 s by
    /// default: an `npx -y` server's first start downloads it). A server still starting then goes on starting: its state shows when it
    /// is up, and its snapshot's tools (if it has one) wait for it.
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub fn mcp_start_wait(mut self, wait: std::time::Duration) -> Self {
        self.mcp.wait.bound = wait;
        self
    }

    /// With `true`, [`connect`](Self::connect) fails as a whole when one server cannot
    /// start (or a tool name two sources share), for agents that want to fail fast; it
    /// then waits for every server's start, each bounded by its
    /// [`connect_timeout`](crate::mcp::McpServer::connect_timeout). Off by default.
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub fn mcp_strict(mut self, strict: bool) -> Self {
        self.mcp.wait.strict = strict;
        self
    }

    /// [`connect`](Self::connect) stops waiting for the other servers once a tool named
    /// `name` is ready (at once when the runtime has it already: a local tool, or one of
    /// a snapshot): a one-call agent (`toolbind call`) does not wait for servers it does
    /// not call. Still bounded by [`mcp_start_wait`](Self::mcp_start_wait).
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub fn mcp_wait_for_tool(mut self, name: impl Into<String>) -> Self {
        self.mcp.wait.for_tool = Some(name.into());
        self
    }

    /// [`build`](Self::build), with an error instead of a panic when an [MCP
    /// server](Self::mcp_server) has no snapshot (its tools cannot be known without starting
    /// it: use [`connect`](Self::connect)), two servers have one name, or one of a server's
    /// tools has the name of another tool.
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub fn try_build(mut self) -> Result<Runtime, ConnectError> {
        let servers = std::mem::take(&mut self.mcp).build(
            &mut self.registry,
            self.host.clone(),
            self.config.ask_timeout,
        )?;
        Ok(self.finish(servers))
    }
}

impl Runtime {
    /// Each MCP server's state now (starting, ready, failed and why, needs a login),
    /// by name.
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub fn mcp_servers(&self) -> Vec<(String, crate::mcp::McpServerState)> {
        self.mcp.states()
    }

    /// The state of MCP server `server` now; `None` for a name the runtime was not given.
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub fn mcp_server_state(&self, server: &str) -> Option<crate::mcp::McpServerState> {
        Some(self.mcp.get(server)?.state())
    }

    /// The MCP protocol version negotiated with server `server` (`2025-11-25`,
    /// `2026-07-28`), or `None` while it is not connected (not started yet, or down).
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub fn mcp_protocol_version(&self, server: &str) -> Option<String> {
        self.mcp.get(server)?.protocol_version()
    }

    /// The skills MCP server `server` serves (SEP-2640 `skills/list`, every page): each
    /// skill's name, description, frontmatter and file manifest. No file is read (the
    /// spec's "no prefetch": read one with [`mcp_skill_file`](Self::mcp_skill_file) when
    /// the skill is used). Connects the server when it is not up.
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub async fn mcp_skills(
        &self,
        server: &str,
    ) -> Result<Vec<crate::mcp::McpSkill>, crate::mcp::McpSkillError> {
        let conn = self
            .mcp
            .get(server)
            .ok_or_else(|| crate::mcp::McpSkillError::UnknownServer(server.to_owned()))?;
        conn.skills().await
    }

    /// One file of a skill of MCP server `server` (`resources/read`), checked against the
    /// size and digest its manifest gave: an error, never the bytes, when they differ.
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub async fn mcp_skill_file(
        &self,
        server: &str,
        file: &crate::mcp::McpSkillFile,
    ) -> Result<Vec<u8>, crate::mcp::McpSkillError> {
        let conn = self
            .mcp
            .get(server)
            .ok_or_else(|| crate::mcp::McpSkillError::UnknownServer(server.to_owned()))?;
        conn.skill_file(file).await
    }

    /// Skill `skill`'s `SKILL.md` of MCP server `server`, checked: its size and digest
    /// against the manifest (unless the skill's files are dynamic), and its frontmatter
    /// against the one `skills/list` gave (the spec's MUST: a file that says something
    /// else than its listing is an error, never returned).
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub async fn mcp_skill_md(
        &self,
        server: &str,
        skill: &crate::mcp::McpSkill,
    ) -> Result<String, crate::mcp::McpSkillError> {
        use crate::mcp::McpSkillError;
        let conn = self
            .mcp
            .get(server)
            .ok_or_else(|| McpSkillError::UnknownServer(server.to_owned()))?;
        let bytes = match skill.file(&skill.uri) {
            Some(file) => conn.skill_file(file).await?,
            None => conn.read_uri(&skill.uri).await?,
        };
        let shown = crate::untrusted::echo(&skill.uri);
        let text = String::from_utf8(bytes)
            .map_err(|_| McpSkillError::Protocol(format!("{shown}: not UTF-8")))?;
        let read = toolbind_codegen::skill_frontmatter(&text)
            .map_err(|why| McpSkillError::Protocol(format!("{shown}: {why}")))?;
        skill.same_frontmatter(&read)?;
        Ok(text)
    }

    /// The typed path of an MCP server's tool: sends a generated `Params` value (from
    /// bindings generated from the server's snapshot) to tool `T`'s server.
    ///
    /// Before anything is sent, the contract `T` was generated from
    /// ([`McpTool::CONTRACT`](crate::tool::McpTool::CONTRACT)) is compared with the one of
    /// the runtime's tool (the snapshot given to the server, else its live list), and
    /// that one with the live server's at connect: a difference stops the call with
    /// [`StopReason::ContractDrift`] naming the tool and what changed.
    ///
    /// ```ignore
    /// toolbind::tools!("mcp/everything.json");
    /// let params = everything::echo::Params { message: "hi".into() };
    /// let result = runtime.call_mcp::<everything::echo::Tool>(params, CallOptions::new()).await;
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub fn call_mcp<T: crate::tool::McpTool>(
        &self,
        params: T::Params,
        opts: CallOptions,
    ) -> impl Future<Output = ToolResult> + Send + '_ {
        let params = serde_json::to_value(&params);
        self.call_mcp_compiled(T::NAME, T::MCP_NAME, T::CONTRACT, params, opts)
    }

    async fn call_mcp_compiled(
        &self,
        name: &'static str,
        mcp_name: &'static str,
        contract: &'static str,
        params: Result<Value, serde_json::Error>,
        opts: CallOptions,
    ) -> ToolResult {
        self.in_call_span(name, opts, |opts, span| async move {
            self.call_mcp_checked(name, mcp_name, contract, params, opts, &span)
                .await
        })
        .await
    }

    /// The MCP typed path within its span: the drift checks, then the call.
    async fn call_mcp_checked(
        &self,
        name: &'static str,
        mcp_name: &'static str,
        contract: &'static str,
        params: Result<Value, serde_json::Error>,
        opts: CallOptions,
        span: &tracing::Span,
    ) -> ToolResult {
        let Some(tool) = self.tool(name) else {
            let mut r = self.unknown_tool(name);
            if let Some(Content::Text { text }) = r.content.first_mut() {
                text.insert_str(
                    0,
                    "this program was compiled with the MCP tool, but no server given to the runtime has it: ",
                );
            }
            return r;
        };
        match tool.spec().mcp.as_ref() {
            Some(origin) if origin.name == mcp_name && origin.contract == contract => {}
            Some(origin) => {
                return ToolResult::stopped(
                    StopReason::ContractDrift,
                    format!(
                        "tool `{name}`: this program was compiled against a snapshot of MCP server `{}` whose contract for `{mcp_name}` ({contract}) is not the runtime's ({}): give the server the snapshot the bindings were generated from (McpServer::snapshot), or regenerate them; nothing was sent",
                        origin.server, origin.contract
                    ),
                );
            }
            None => {
                return ToolResult::stopped(
                    StopReason::ContractDrift,
                    format!(
                        "tool `{name}`: this program was compiled with it as an MCP server's tool, but the runtime's `{name}` is a local tool; nothing was sent"
                    ),
                );
            }
        }
        match params_object(name, params) {
            Ok(params) => self.execute(tool, params, opts, span).await,
            Err(result) => result,
        }
    }
}
