//! The [`Runtime`]: loaded tools plus an executor; how it is built
//! ([`RuntimeBuilder`], [`RuntimeConfig`]) and where truncated output is spilled.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tracing::Instrument;

use serde_json::Value;
use toolbind_codegen::suggest;

use crate::Tool;
use crate::ToolInfo;
use crate::args::{self, ValidArgs};
use crate::cancel::CancelToken;
use crate::executor::{ExecCall, Executor, LogSink, ProgressSink};
use crate::loader::Registry;
use crate::output::{OutputCheck, OutputError, OutputViolation, Typed};
use crate::result::{Content, Progress, StopReason, ToolResult};
use crate::secret::{self, Redactor};
use crate::telemetry::CallSpan;
use crate::truncate::{TruncateOptions, truncate_head};

/// Settings of a [`Runtime`].
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeConfig {
    pub(crate) default_timeout: Duration,
    pub(crate) truncation: TruncateOptions,
    pub(crate) spill_dir: Option<PathBuf>,
    pub(crate) record_content: bool,
    pub(crate) ask_timeout: Duration,
}

impl RuntimeConfig {
    /// The timeout of a call when neither the call nor the tool's `timeout:` sets one
    /// (default [`DEFAULT_TIMEOUT`](crate::exec::DEFAULT_TIMEOUT), 120 s). The runtime
    /// resolves each call's timeout once — the call's, else the tool's, else this — and
    /// the executor enforces exactly that ([`ExecCall::timeout`]).
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// Limits applied to every text block of every result (default 50 KB / 2000 lines).
    pub fn truncation(mut self, limits: TruncateOptions) -> Self {
        self.truncation = limits;
        self
    }

    /// Where the full text of a truncated block is saved. The folder is created 0700 and
    /// must be private (a symlink, or a folder owned by another user, is refused; one of
    /// ours that is too open is tightened); files are 0600, hold at most
    /// [`MAX_SPILL_FILE_BYTES`], and are pruned by the retention rule of
    /// [`SPILL_RETENTION`] and [`MAX_SPILL_DIR_BYTES`] each time one is written. The
    /// truncation note gives the file's path. Default none: the cut text is dropped.
    /// [`default_spill_dir`] is what the CLI uses.
    pub fn spill_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.spill_dir = Some(dir.into());
        self
    }

    /// Records each call's arguments and result on its span (`gen_ai.tool.call.arguments`,
    /// `gen_ai.tool.call.result`; see [`telemetry`](crate::telemetry)), after redaction: a
    /// sensitive input's value never appears, binary content appears as its type, MIME
    /// type and size. Default off, or on when
    /// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is `true`.
    pub fn record_content(mut self, on: bool) -> Self {
        self.record_content = on;
        self
    }

    /// See [`record_content`](Self::record_content).
    pub fn get_record_content(&self) -> bool {
        self.record_content
    }

    /// See [`default_timeout`](Self::default_timeout).
    pub fn get_default_timeout(&self) -> Duration {
        self.default_timeout
    }

    /// How long a call waits for its [host](crate::host::Host)'s approval before it is
    /// denied, and a tool's question (`ctx.confirm`, `ctx.elicit`, ...) for its answer
    /// before it fails in the tool (default [`DEFAULT_ASK_TIMEOUT`], 5 minutes). The wait
    /// does not count against the call's timeout, up to three of these per call.
    pub fn ask_timeout(mut self, timeout: Duration) -> Self {
        self.ask_timeout = timeout;
        self
    }

    /// See [`ask_timeout`](Self::ask_timeout).
    pub fn get_ask_timeout(&self) -> Duration {
        self.ask_timeout
    }

    /// See [`truncation`](Self::truncation).
    pub fn get_truncation(&self) -> TruncateOptions {
        self.truncation
    }

    /// See [`spill_dir`](Self::spill_dir); `None`: cut text is dropped.
    pub fn get_spill_dir(&self) -> Option<&Path> {
        self.spill_dir.as_deref()
    }
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            default_timeout: crate::exec::DEFAULT_TIMEOUT,
            truncation: TruncateOptions::default(),
            spill_dir: None,
            record_content: crate::telemetry::content_from_env(),
            ask_timeout: DEFAULT_ASK_TIMEOUT,
        }
    }
}

/// The default of [`RuntimeConfig::ask_timeout`]: 5 minutes.
pub const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(300);

/// The most bytes of one block saved to a spill file; the note says when more was cut.
pub const MAX_SPILL_FILE_BYTES: usize = 16 << 20;
/// Spill files older than this are removed when a new one is written.
pub const SPILL_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);
/// When a new spill file is written, the oldest are removed until the folder holds at
/// most this much.
pub const MAX_SPILL_DIR_BYTES: u64 = 256 << 20;

/// The default spill folder: `$XDG_STATE_HOME/toolbind/spill`, else
/// `~/.local/state/toolbind/spill`, else `$TMPDIR/toolbind-<euid>/state/spill`.
pub fn default_spill_dir() -> PathBuf {
    crate::dirs::state_root().join("spill")
}

/// Per-call options for [`Runtime::call`].
#[derive(Clone, Default)]
pub struct CallOptions {
    pub(crate) tool_call_id: String,
    pub(crate) cancel: CancelToken,
    pub(crate) progress: Option<ProgressSink>,
    pub(crate) log: Option<LogSink>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) host: Option<crate::host::SharedHost>,
}

impl CallOptions {
    /// Default options: no id, a fresh cancel token, no progress sink, no timeout override.
    pub fn new() -> Self {
        Self::default()
    }

    /// The model's tool call id, passed to the tool as `toolCallId`. Default empty: the
    /// runtime makes one up (`call_<n>`).
    pub fn id(mut self, tool_call_id: impl Into<String>) -> Self {
        self.tool_call_id = tool_call_id.into();
        self
    }

    /// Uses `token` to cancel the call (the tool's `AbortSignal`).
    pub fn cancel(mut self, token: CancelToken) -> Self {
        self.cancel = token;
        self
    }

    /// Sends the tool's `onUpdate` progress to `sink`.
    pub fn progress(mut self, sink: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(sink));
        self
    }

    /// Sends progress to a sink already shared as an `Arc` (see
    /// [`progress`](Self::progress)).
    pub fn progress_sink(mut self, sink: ProgressSink) -> Self {
        self.progress = Some(sink);
        self
    }

    /// Sends the tool's stderr lines to `sink`, one line per call of it, redacted like
    /// everything else that leaves the call; see [`LogSink`] for when a line is
    /// attributed to a call. The sink runs on the executor's I/O tasks: it must not block.
    pub fn log(mut self, sink: impl Fn(String) + Send + Sync + 'static) -> Self {
        self.log = Some(Arc::new(sink));
        self
    }

    /// Sends stderr lines to a sink already shared as an `Arc` (see [`log`](Self::log)).
    pub fn log_sink(mut self, sink: LogSink) -> Self {
        self.log = Some(sink);
        self
    }

    /// Overrides the tool's and the runtime's timeout for this call.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Asks `host` instead of the runtime's ([`RuntimeBuilder::host`]) about this call:
    /// for a server whose calls come from several clients, each with its own person to
    /// ask (`toolbind serve` asks the MCP client that made the call).
    pub fn host(mut self, host: impl crate::host::Host) -> Self {
        self.host = Some(Arc::new(host));
        self
    }

    /// See [`id`](Self::id).
    pub fn get_id(&self) -> &str {
        &self.tool_call_id
    }

    /// See [`cancel`](Self::cancel).
    pub fn get_cancel(&self) -> &CancelToken {
        &self.cancel
    }

    /// See [`timeout`](Self::timeout); `None`: the tool's, else the runtime's.
    pub fn get_timeout(&self) -> Option<Duration> {
        self.timeout
    }
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("tool_call_id", &self.tool_call_id)
            .field("cancelled", &self.cancel.is_cancelled())
            .field("progress", &self.progress.is_some())
            .field("log", &self.log.is_some())
            .field("timeout", &self.timeout)
            .field("host", &self.host.is_some())
            .finish()
    }
}

/// What the runtime does with a result whose `details` break its tool's `outputs:`.
type ViolationHook = Arc<dyn Fn(&ToolInfo, &[OutputViolation]) + Send + Sync>;

/// Loaded tools plus an executor: validates a model's calls and runs them.
///
/// The [`Runtime`]: a registry of loaded tools, validated calls, an executor, truncation.
///
/// ```no_run
/// use serde_json::json;
/// use toolbind::{CallOptions, Runtime};
/// # async fn demo() {
/// let loaded = toolbind::Loader::new().env().load();
/// // Tools run in node / python3 / bash subprocesses (`exec::SubprocessExecutor`) unless
/// // `.executor(...)` supplies another executor.
/// let runtime = Runtime::builder()
///     .registry(loaded.registry)
///     .spill_dir("/tmp/tool-output")
///     .build();
///
/// // A model's call: validated (quirks tolerated, defaults filled), run, truncated.
/// let result = runtime
///     .call("web_fetch", json!({"url": "https://example.com"}), CallOptions::new().id("call_1"))
///     .await;
/// println!("{}", serde_json::to_string(&result).unwrap());
/// # }
/// ```
pub struct Runtime {
    registry: Registry,
    config: RuntimeConfig,
    executor: Arc<dyn Executor>,
    on_output_violation: Option<ViolationHook>,
    host: Option<crate::host::SharedHost>,
    seq: AtomicU64,
    /// One queue per `execution: sequential` tool, shared by every batch.
    pub(crate) sequential: crate::batch::Queues,
    #[cfg(feature = "mcp")]
    mcp: std::collections::HashMap<String, Arc<crate::mcp::connection::Connection>>,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("tools", &self.registry.names().collect::<Vec<_>>())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Runtime`]; see [`Runtime::builder`].
#[derive(Default)]
pub struct RuntimeBuilder {
    registry: Registry,
    config: RuntimeConfig,
    executor: Option<Arc<dyn Executor>>,
    sandbox: Option<crate::sandbox::SandboxPolicy>,
    on_output_violation: Option<ViolationHook>,
    host: Option<crate::host::SharedHost>,
    #[cfg(feature = "mcp")]
    mcp: Vec<crate::mcp::McpServer>,
}

impl RuntimeBuilder {
    /// The agent's side of calls that need its say: approval before a call (see
    /// [`host`](crate::host)). Without one, a call that needs approval is denied.
    pub fn host(mut self, host: impl crate::host::Host) -> Self {
        self.host = Some(Arc::new(host));
        self
    }

    /// The tools to serve (for example [`Loaded::registry`](crate::loader::Loaded)).
    pub fn registry(mut self, registry: Registry) -> Self {
        self.registry = registry;
        self
    }

    /// What runs validated calls. Required.
    pub fn executor(mut self, executor: Arc<dyn Executor>) -> Self {
        self.executor = Some(executor);
        self
    }

    /// Replaces the whole configuration.
    pub fn config(mut self, config: RuntimeConfig) -> Self {
        self.config = config;
        self
    }

    /// Sets [`RuntimeConfig::default_timeout`].
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.config = self.config.default_timeout(timeout);
        self
    }

    /// Sets [`RuntimeConfig::ask_timeout`].
    pub fn ask_timeout(mut self, timeout: Duration) -> Self {
        self.config = self.config.ask_timeout(timeout);
        self
    }

    /// Sets [`RuntimeConfig::truncation`].
    pub fn truncation(mut self, limits: TruncateOptions) -> Self {
        self.config = self.config.truncation(limits);
        self
    }

    /// Sets [`RuntimeConfig::record_content`].
    pub fn record_content(mut self, on: bool) -> Self {
        self.config = self.config.record_content(on);
        self
    }

    /// The sandbox the default executor runs tools in (mode, grants, network, limits);
    /// [`SandboxPolicy::default`](crate::sandbox::SandboxPolicy) (`auto`) when not set. With
    /// [`executor`](Self::executor), set the executor's own `ExecConfig::sandbox` instead:
    /// this setter only configures the executor `build` creates.
    ///
    /// ```
    /// use toolbind::Runtime;
    /// use toolbind::sandbox::{SandboxMode, SandboxPolicy};
    /// let runtime = Runtime::builder()
    ///     .sandbox(SandboxPolicy::new().mode(SandboxMode::Required).allow_write("/tmp/out"))
    ///     .build();
    /// # drop(runtime);
    /// ```
    pub fn sandbox(mut self, policy: crate::sandbox::SandboxPolicy) -> Self {
        self.sandbox = Some(policy);
        self
    }

    /// Called, instead of the default warning on stderr, when a result's `details` break
    /// the declared TOOL.md `outputs:` of its tool, with the tool and every violation
    /// found (the result is marked [`OutputCheck::Broken`]). The result itself
    /// is kept as the tool returned it: a broken contract is a bug in the tool, not a
    /// failed call.
    ///
    /// ```
    /// use toolbind::Runtime;
    /// let runtime = Runtime::builder()
    ///     .on_output_violation(|tool, violations| {
    ///         for v in violations {
    ///             eprintln!("tool `{}` broke its outputs: {v}", tool.name());
    ///         }
    ///     })
    ///     .build();
    /// # drop(runtime);
    /// ```
    pub fn on_output_violation(
        mut self,
        hook: impl Fn(&ToolInfo, &[OutputViolation]) + Send + Sync + 'static,
    ) -> Self {
        self.on_output_violation = Some(Arc::new(hook));
        self
    }

    /// Sets [`RuntimeConfig::spill_dir`].
    pub fn spill_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config = self.config.spill_dir(dir);
        self
    }

    /// An MCP server whose tools join the runtime's tool list ([`Runtime::call`] reaches
    /// them by name, [`Runtime::call_mcp`] by their generated types). Its calls get the
    /// same validation (against the server's own `inputSchema` too), redaction, timeouts,
    /// cancellation (`notifications/cancelled`), progress, truncation and output checks
    /// (against its `outputSchema`) as local tools'. With [`build`](Self::build), the
    /// server needs a [`snapshot`](crate::mcp::McpServer::snapshot), its tools are the
    /// snapshot's, and it is started on the first call; with [`connect`](Self::connect) it
    /// is started now.
    #[cfg(feature = "mcp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub fn mcp_server(mut self, server: crate::mcp::McpServer) -> Self {
        self.mcp.push(server);
        self
    }

    /// The runtime, with every [MCP server](Self::mcp_server) started (or reached) and
    /// initialized now, its live tool list checked against its snapshot (when it has
    /// one) and added to the runtime's: the snapshot's tools, and any tool the server now
    /// lists beyond them (callable by name, untyped). A server without a snapshot gives
    /// its live list.
    ///
    /// An error names the server that could not start and why (its last stderr lines
    /// included), or a tool name that two sources share.
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
    #[cfg(feature = "mcp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub async fn connect(mut self) -> Result<Runtime, crate::mcp::ConnectError> {
        let conns = self.connections()?;
        // Every server starts at once (an agent with several waits for the slowest, not
        // for the sum); if one fails, the others' starts are stopped with the guard.
        let _stop = crate::mcp::connection::Abandon(conns.clone());
        let mut starts = tokio::task::JoinSet::new();
        for (i, conn) in conns.iter().enumerate() {
            let conn = conn.clone();
            starts.spawn(async move { (i, crate::mcp::exec::connect(&conn).await) });
        }
        let mut tools = vec![Vec::new(); conns.len()];
        while let Some(done) = starts.join_next().await {
            // Not cancelled (the set is ours): an error is a panic, passed on.
            let (i, listed) = done.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
            tools[i] = listed?;
        }
        for (conn, tools) in conns.iter().zip(tools) {
            add_tools(&mut self.registry, conn.server().get_name(), tools)?;
        }
        Ok(self.finish(conns))
    }

    /// The runtime. Without [`executor`](Self::executor), tools run in subprocesses with
    /// [`SubprocessExecutor`](crate::exec::SubprocessExecutor)'s default configuration.
    ///
    /// # Panics
    ///
    /// Where [`try_build`](Self::try_build) returns an error: an [MCP
    /// server](Self::mcp_server) without a snapshot, two servers of one name, or a tool
    /// name two sources share.
    pub fn build(self) -> Runtime {
        #[cfg(feature = "mcp")]
        return self.try_build().unwrap_or_else(|e| panic!("{e}"));
        #[cfg(not(feature = "mcp"))]
        self.finish()
    }

    /// [`build`](Self::build), with an error instead of a panic when an [MCP
    /// server](Self::mcp_server) has no snapshot (its tools cannot be known without starting
    /// it: use [`connect`](Self::connect)), two servers have one name, or one of a server's
    /// tools has the name of another tool.
    #[cfg(feature = "mcp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub fn try_build(mut self) -> Result<Runtime, crate::mcp::ConnectError> {
        let conns = self.connections()?;
        for conn in &conns {
            let server = conn.server();
            let Some(snapshot) = server.get_snapshot() else {
                return Err(crate::mcp::ConnectError::new(
                    server.get_name(),
                    format!(
                        "MCP server `{}` has no snapshot, so its tools are not known until it runs: give it one (McpServer::snapshot) or build the runtime with RuntimeBuilder::connect().await",
                        server.get_name()
                    ),
                ));
            };
            let tools = crate::mcp::exec::tools_of(server, snapshot);
            add_tools(&mut self.registry, server.get_name(), tools)?;
        }
        Ok(self.finish(conns))
    }

    /// A connection for each declared server, none started; two of one name are an error.
    #[cfg(feature = "mcp")]
    fn connections(
        &mut self,
    ) -> Result<Vec<Arc<crate::mcp::connection::Connection>>, crate::mcp::ConnectError> {
        let mut conns: Vec<Arc<crate::mcp::connection::Connection>> = Vec::new();
        for server in std::mem::take(&mut self.mcp) {
            if conns
                .iter()
                .any(|c| c.server().get_name() == server.get_name())
            {
                return Err(duplicate(server.get_name()));
            }
            let conn = crate::mcp::connection::Connection::new(server);
            conn.set_host(self.host.clone(), self.config.ask_timeout);
            conns.push(Arc::new(conn));
        }
        Ok(conns)
    }

    fn finish(
        self,
        #[cfg(feature = "mcp")] servers: Vec<Arc<crate::mcp::connection::Connection>>,
    ) -> Runtime {
        #[cfg(feature = "mcp")]
        let servers: std::collections::HashMap<_, _> = servers
            .into_iter()
            .map(|c| (c.server().get_name().to_owned(), c))
            .collect();
        let sandbox = self.sandbox.unwrap_or_default();
        let executor = self.executor.unwrap_or_else(|| {
            let mut exec = crate::exec::ExecConfig::default().sandbox(sandbox);
            if let Some(dir) = &self.config.spill_dir {
                exec = exec.spill_dir(dir);
            }
            Arc::new(crate::exec::SubprocessExecutor::new(exec))
        });
        #[cfg(feature = "mcp")]
        let executor: Arc<dyn Executor> = if servers.is_empty() {
            executor
        } else {
            Arc::new(crate::mcp::exec::Routed {
                local: executor,
                servers: servers.clone(),
            })
        };
        Runtime {
            registry: self.registry,
            config: self.config,
            executor,
            on_output_violation: self.on_output_violation,
            host: self.host,
            seq: AtomicU64::new(0),
            sequential: Default::default(),
            #[cfg(feature = "mcp")]
            mcp: servers,
        }
    }
}

#[cfg(feature = "mcp")]
fn duplicate(name: &str) -> crate::mcp::ConnectError {
    crate::mcp::ConnectError::new(
        name,
        format!("two MCP servers are named `{name}`: give each its own name"),
    )
}

/// Adds an MCP server's tools to the registry; a name already there is an error.
#[cfg(feature = "mcp")]
fn add_tools(
    registry: &mut Registry,
    server: &str,
    tools: Vec<ToolInfo>,
) -> Result<(), crate::mcp::ConnectError> {
    for tool in tools {
        if let Err(t) = registry.insert(tool) {
            return Err(crate::mcp::ConnectError::new(
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

/// The sensitive values in a model's raw arguments (before validation), to redact from an
/// error that may quote them.
fn raw_secrets(tool: &ToolInfo, args: &Value) -> Vec<String> {
    match args {
        Value::Object(m) => secret::secrets_of(tool.spec(), m),
        _ => Vec::new(),
    }
}

impl Runtime {
    /// Starts building a runtime.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
    }

    /// The loaded tools.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Which sandbox the runtime's local tools run in and whether each limit holds here
    /// ([`SandboxStatus::limits`](crate::sandbox::SandboxStatus::limits): enforced and how,
    /// or why not and the fix), for an agent's start-up line. Probes the jail with the
    /// interpreters of the loaded tools (once; cached by the executor). `None` when the
    /// executor does not say ([`Executor::sandbox`]: an executor of your own).
    pub fn sandbox_status(&self) -> Option<crate::sandbox::SandboxStatus> {
        let mut languages = Vec::new();
        for t in self.registry.iter() {
            #[cfg(feature = "mcp")]
            if t.spec().mcp.is_some() {
                continue;
            }
            if !languages.contains(&t.language()) {
                languages.push(t.language());
            }
        }
        self.executor.sandbox(&languages)
    }

    /// The runtime's settings.
    pub fn config(&self) -> &RuntimeConfig {
        &self.config
    }

    /// The MCP protocol version negotiated with server `server` (`2025-11-25`,
    /// `2026-07-28`), or `None` while it is not connected (not started yet, or down).
    #[cfg(feature = "mcp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub fn mcp_protocol_version(&self, server: &str) -> Option<String> {
        self.mcp.get(server)?.protocol_version()
    }

    /// Validates a model's call without running it: the tool's spec and the coerced,
    /// defaulted params, or the error result [`call`](Self::call) would return.
    pub fn check(&self, name: &str, args: Value) -> Result<ValidArgs<'_>, ToolResult> {
        let Some(spec) = self.registry.get(name) else {
            return Err(self.unknown_tool(name));
        };
        // A secret sent in the wrong field would be echoed by the error ("received the
        // string ..."): the error goes through the same redaction as a result.
        let secrets = raw_secrets(spec, &args);
        args::validate(spec, args).map_err(|e| {
            let mut r = ToolResult::stopped(StopReason::BadArguments, e.to_string());
            Redactor::new(&secrets).result(&mut r);
            r
        })
    }

    /// Runs a model's call: look the tool up, validate `args` (see [`validate_args`](crate::args::validate)), run it
    /// on the executor, truncate every text block.
    ///
    /// The values of the tool's sensitive inputs are redacted (as `[REDACTED]`, raw and in
    /// their JSON-escaped forms) from everything that leaves the call: progress updates,
    /// stderr lines sent to [`CallOptions::log`],
    /// result and error text, `details`, and so the spill files, the CLI's output and MCP
    /// messages built from them. Values shorter than
    /// [`MIN_REDACTED_CHARS`](crate::secret::MIN_REDACTED_CHARS) are left alone. Every failure — unknown tool, bad
    /// arguments, a failing tool — is an error result (`isError: true`) the model can act
    /// on; this never panics on model input.
    ///
    /// A node or python tool whose entry exports `prepareArguments(args)` (the Pi tool API;
    /// python: `prepare_arguments`) has it run on the raw `args` first, in the tool's own
    /// process, so an old argument shape can be reshaped before validation. The typed path
    /// ([`call_typed`](Self::call_typed)) and [`check`](Self::check) do not run it: their
    /// params are already in the tool's current shape.
    pub async fn call(&self, name: &str, args: Value, opts: CallOptions) -> ToolResult {
        self.in_call_span(name, opts, |opts| async move {
            let args = match self.prepare(name, args, &opts).await {
                Ok(a) => a,
                Err(result) => return result,
            };
            self.call_prepared(name, args, opts).await
        })
        .await
    }

    /// Runs `run` in the span of a call of tool `name` (see [`telemetry`](crate::telemetry)),
    /// the call's id settled first.
    async fn in_call_span<'a, F>(
        &'a self,
        name: &str,
        opts: CallOptions,
        run: impl FnOnce(CallOptions) -> F,
    ) -> ToolResult
    where
        F: Future<Output = ToolResult> + 'a,
    {
        let opts = self.with_call_id(opts);
        let span = CallSpan::open(name, self.registry.get(name), &opts.tool_call_id);
        let result = run(opts).instrument(span.span().clone()).await;
        span.end(&result, self.config.record_content);
        result
    }

    /// `opts` with the call's id: the caller's, else one made up (`call_<n>`).
    pub(crate) fn with_call_id(&self, mut opts: CallOptions) -> CallOptions {
        if opts.tool_call_id.is_empty() {
            opts.tool_call_id = format!("call_{}", self.seq.fetch_add(1, Ordering::Relaxed));
        }
        opts
    }

    /// [`call`](Self::call) after `prepareArguments`: validate and run.
    async fn call_prepared(&self, name: &str, args: Value, opts: CallOptions) -> ToolResult {
        // DEBUG: a span per call costs more than the checks it times (BENCHMARKS.md).
        let checked = tracing::debug_span!(target: "toolbind", "validate_arguments")
            .in_scope(|| self.check(name, args));
        match checked {
            Ok(valid) => {
                let tool = valid.tool();
                self.execute(tool, valid.into_params(), opts).await
            }
            Err(result) => result,
        }
    }

    /// Runs the tool's `prepareArguments` (the Pi tool API) on a model's raw arguments, when
    /// its entry has one; otherwise returns them unchanged. An error is the result to report:
    /// it threw or did not return within the call's timeout.
    async fn prepare(
        &self,
        name: &str,
        args: Value,
        opts: &CallOptions,
    ) -> Result<Value, ToolResult> {
        let Some(spec) = self.registry.get(name) else {
            return Ok(args);
        };
        if !self.executor.prepares(spec) {
            return Ok(args);
        }
        let timeout = self.timeout_of(spec, opts);
        let raw = args.clone();
        self.executor
            .prepare(spec, args, timeout)
            .await
            .map_err(|e| {
                // The raw arguments may hold a secret the message repeats.
                let secrets = raw_secrets(spec, &raw);
                let mut r = ToolResult::error(format!("tool `{name}` did not run: {e}"));
                Redactor::new(&secrets).result(&mut r);
                r
            })
    }

    /// Runs params that already passed validation (or were built from a generated, typed
    /// `Params` value) on the executor and truncates the result.
    async fn execute(
        &self,
        tool: &ToolInfo,
        params: serde_json::Map<String, Value>,
        opts: CallOptions,
    ) -> ToolResult {
        let name = tool.name();
        if opts.cancel.is_cancelled() {
            return ToolResult::stopped(
                StopReason::Cancelled,
                format!("tool `{name}` was cancelled before it started"),
            );
        }
        let approver = crate::host::Approver {
            host: opts.host.as_ref().or(self.host.as_ref()),
            tool_call_id: &opts.tool_call_id,
            cancel: &opts.cancel,
            wait: self.config.ask_timeout,
        };
        let check = |name: &str, args| self.check(name, args).map(ValidArgs::into_params);
        let params = match crate::host::approval(approver, tool, params, check).await {
            Ok(params) => params,
            Err(denied) => return denied,
        };
        let timeout = self.timeout_of(tool, &opts);
        let tool_call_id = opts.tool_call_id;
        // The one choke point for secrets: everything that leaves the call (progress, result
        // text, details, error text, and so spill files and whatever the CLI, MCP or a
        // provider adapter makes of them) passes through this redactor.
        let redactor = Redactor::new(&secret::secrets_of(tool.spec(), &params));
        if self.config.record_content {
            crate::telemetry::record_arguments(tool, &params, &redactor);
        }
        let progress = match opts.progress {
            Some(sink) if !redactor.is_empty() => {
                let r = redactor.clone();
                Some(Arc::new(move |mut p: Progress| {
                    r.content(&mut p.content);
                    sink(p)
                }) as ProgressSink)
            }
            other => other,
        };
        let log = match opts.log {
            Some(sink) if !redactor.is_empty() => {
                let r = redactor.clone();
                Some(Arc::new(move |line: String| sink(r.text(&line))) as LogSink)
            }
            other => other,
        };
        let mut call = ExecCall::new(tool, params)
            .tool_call_id(&tool_call_id)
            .cancel(opts.cancel)
            .timeout(timeout);
        call.progress = progress;
        call.log = log;
        call.trace = crate::telemetry::current();
        call.ask_timeout = self.config.ask_timeout;
        call.host = opts
            .host
            .or_else(|| self.host.clone())
            .map(|h| crate::host::redacting(h, &redactor));
        let mut result = self.executor.execute(call).await;
        redactor.result(&mut result);
        self.truncate_result(tool, &tool_call_id, &mut result);
        self.check_outputs(tool, &mut result);
        result
    }

    /// A call's timeout, resolved here and only here: the call's, else the tool's
    /// `timeout:`, else [`RuntimeConfig::default_timeout`]; capped at a year, so a deadline
    /// `now + timeout` cannot overflow.
    fn timeout_of(&self, spec: &ToolInfo, opts: &CallOptions) -> Duration {
        opts.timeout
            .or_else(|| spec.timeout())
            .unwrap_or(self.config.default_timeout)
            .min(crate::exec::MAX_TIMEOUT)
    }

    /// Checks a completed result's `details` against the tool's declared `outputs:`,
    /// marks the result and reports what breaks them.
    fn check_outputs(&self, tool: &ToolInfo, result: &mut ToolResult) {
        let spec = tool.spec();
        if result.is_error || result.stop != StopReason::Completed {
            return;
        }
        // An MCP tool's `structuredContent` is checked against its own `outputSchema`.
        #[cfg(feature = "mcp")]
        let mcp = spec.mcp.is_some();
        #[cfg(not(feature = "mcp"))]
        let mcp = false;
        let violations = if mcp {
            #[cfg(feature = "mcp")]
            match crate::mcp::exec::output_violations(tool, result.details.as_ref()) {
                Some(v) => v,
                None => return,
            }
            #[cfg(not(feature = "mcp"))]
            unreachable!()
        } else if spec.outputs.is_empty() {
            return;
        } else {
            crate::output::check(&spec.outputs, result.details.as_ref())
        };
        if violations.is_empty() {
            result.output_check = OutputCheck::Held;
            return;
        }
        result.output_check = OutputCheck::Broken;
        match &self.on_output_violation {
            Some(hook) => hook(tool, &violations),
            None => {
                let list: Vec<String> = violations.iter().map(ToString::to_string).collect();
                crate::telemetry::warn(&format!(
                    "toolbind: warning: tool `{}` returned details that break its declared outputs \
                     (a bug in the tool; the result is kept): {}",
                    spec.name,
                    list.join("; ")
                ));
            }
        }
    }

    /// The typed path: sends a generated `Params` value to tool `T`.
    ///
    /// The params are not validated again: a generated `Params` value is valid by
    /// construction (it came through the generated `ToolCall::parse`, which runs the same
    /// validator as [`call`](Self::call), or was built by the program with the compiler checking
    /// every field). Only the defaults generated code cannot hold (a sensitive input's) are
    /// filled in from the loaded TOOL.md.
    ///
    /// Before anything runs, the loaded TOOL.md's contract is compared with the one `T` was
    /// generated from ([`Tool::FINGERPRINT`]); when they differ the call is refused with an
    /// error result naming the tool and both versions, instead of sending params the tool
    /// no longer expects.
    ///
    /// ```ignore
    /// toolbind::include_tools!(); // generated from tools/todo/TOOL.md by build.rs
    /// let params = todo::Params { action: todo::Action::Add, text: Some("ship it".into()), items: None };
    /// let result = runtime.call_typed::<todo::Tool>(params, CallOptions::new()).await;
    /// ```
    pub fn call_typed<T: Tool>(
        &self,
        params: T::Params,
        opts: CallOptions,
    ) -> impl Future<Output = ToolResult> + Send + '_ {
        // Only the serialisation depends on `T`: the call itself is compiled once per
        // program, not once per tool (a crate with 100 tools' bindings builds in half the
        // time).
        let params = serde_json::to_value(&params);
        self.call_compiled(Compiled::of::<T>(), params, opts)
    }

    /// The typed path's one span around its call (not generic: see `call_typed`).
    async fn call_compiled(
        &self,
        tool: Compiled,
        params: Result<Value, serde_json::Error>,
        opts: CallOptions,
    ) -> ToolResult {
        self.in_call_span(tool.name, opts, |opts| async move {
            if let Err(result) = self.drift_check_of(&tool) {
                return result;
            }
            let Some(spec) = self.registry.get(tool.name) else {
                return self.unknown_tool(tool.name);
            };
            let mut params = match params_object(tool.name, params) {
                Ok(p) => p,
                Err(result) => return result,
            };
            // Types hold every rule but the constraints (`minimum`, `max_items`, ...): the
            // runtime still enforces them, as for a model's call.
            if let Err(e) = args::typed_check(spec.spec(), &mut params) {
                return ToolResult::stopped(StopReason::BadArguments, e.to_string());
            }
            self.execute(spec, params, opts).await
        })
        .await
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
    #[cfg(feature = "mcp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub fn call_mcp<T: crate::tool::McpTool>(
        &self,
        params: T::Params,
        opts: CallOptions,
    ) -> impl Future<Output = ToolResult> + Send + '_ {
        let params = serde_json::to_value(&params);
        self.call_mcp_compiled(T::NAME, T::MCP_NAME, T::CONTRACT, params, opts)
    }

    #[cfg(feature = "mcp")]
    async fn call_mcp_compiled(
        &self,
        name: &'static str,
        mcp_name: &'static str,
        contract: &'static str,
        params: Result<Value, serde_json::Error>,
        opts: CallOptions,
    ) -> ToolResult {
        self.in_call_span(name, opts, |opts| {
            self.call_mcp_checked(name, mcp_name, contract, params, opts)
        })
        .await
    }

    /// The MCP typed path within its span: the drift checks, then the call.
    #[cfg(feature = "mcp")]
    async fn call_mcp_checked(
        &self,
        name: &'static str,
        mcp_name: &'static str,
        contract: &'static str,
        params: Result<Value, serde_json::Error>,
        opts: CallOptions,
    ) -> ToolResult {
        let Some(tool) = self.registry.get(name) else {
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
            Ok(params) => self.execute(tool, params, opts).await,
            Err(result) => result,
        }
    }

    /// [`call_typed`](Self::call_typed), with the result's `details` also parsed into
    /// `T`'s generated `Output` type ([`output`](Self::output)): the result for the model,
    /// the typed output for the program.
    ///
    /// ```ignore
    /// toolbind::include_tools!(); // web_fetch declares `outputs:` in its TOOL.md
    /// let typed = runtime.call_output::<web_fetch::Tool>(params, CallOptions::new()).await;
    /// match typed.output {
    ///     Ok(out) => println!("{} from {}", out.status, out.final_url),
    ///     Err(e) => eprintln!("no output: {e}; the model sees: {}", typed.result.text_content()),
    /// }
    /// ```
    pub async fn call_output<T: Tool>(
        &self,
        params: T::Params,
        opts: CallOptions,
    ) -> Typed<T::Output> {
        let result = self.call_typed::<T>(params, opts).await;
        let output = self.output::<T>(&result);
        Typed { result, output }
    }

    /// The `details` of `result`, a result of tool `T` (from [`call`](Self::call),
    /// [`call_typed`](Self::call_typed) or a generated `ToolCall::call`), as `T`'s
    /// generated `Output` type: the struct for a tool whose TOOL.md declares `outputs:`,
    /// the details as a `serde_json::Value` (`null` when absent) for one that does not.
    ///
    /// An error when the call did not complete ([`OutputError::Failed`]), when the details
    /// break the loaded tool's declared outputs ([`OutputError::Violated`], each field and
    /// what is wrong), or when they do not fit the compiled type
    /// ([`OutputError::Mismatch`]).
    pub fn output<T: Tool>(&self, result: &ToolResult) -> Result<T::Output, OutputError> {
        crate::output::typed::<T>(self.registry.get(T::NAME).map(ToolInfo::spec), result)
    }

    /// Whether the loaded tool `T::NAME` has the contract `T` was compiled against; the
    /// error result [`call_typed`](Self::call_typed) returns when not.
    pub fn drift_check<T: Tool>(&self) -> Result<(), ToolResult> {
        self.drift_check_of(&Compiled::of::<T>())
    }

    fn drift_check_of(&self, tool: &Compiled) -> Result<(), ToolResult> {
        let Some(spec) = self.registry.get(tool.name) else {
            let mut r = self.unknown_tool(tool.name);
            if let Some(Content::Text { text }) = r.content.first_mut() {
                text.insert_str(
                    0,
                    "this program was compiled with the tool, but it is not loaded: ",
                );
            }
            return Err(r);
        };
        let fp = spec.fingerprint();
        if fp == tool.fingerprint {
            return Ok(());
        }
        Err(ToolResult::stopped(
            StopReason::ContractDrift,
            format!(
                "tool `{name}`: the TOOL.md on disk ({file}, version {disk}) differs from the \
             contract this program was compiled against (version {compiled}): its inputs, \
             types, optionality, enum values or defaults changed, so the compiled params \
             would be wrong. Rebuild against the current TOOL.md, or install the tool version \
             the program was built for. (contract fingerprint on disk {fp:016x}, compiled \
             {cfp:016x})",
                name = tool.name,
                file = spec.file().display(),
                disk = spec.version(),
                compiled = tool.version,
                cfp = tool.fingerprint,
            ),
        ))
    }

    fn unknown_tool(&self, name: &str) -> ToolResult {
        let names: Vec<&str> = self.registry.names().collect();
        // `name` is the caller's (a client of `toolbind serve`): echoed shortened.
        let mut text = format!("unknown tool `{}`", crate::untrusted::echo(name));
        if let Some(s) = suggest(name, &names) {
            text.push_str(&format!(" (did you mean `{s}`?)"));
        }
        if names.is_empty() {
            text.push_str("; no tools are available");
        } else {
            text.push_str("; available tools: ");
            text.push_str(&names.join(", "));
        }
        ToolResult::stopped(StopReason::UnknownTool, text)
    }

    /// Truncates the text of `result` to the configured limits — one budget for the whole
    /// result, shared by its text blocks in order — appending the note to each block that
    /// was cut (and saving its full text to the spill folder, when configured).
    ///
    /// A note the executor added when it had already cut the tool's output (`[output
    /// truncated by the runtime: ...]`, which gives the tool's real totals) is kept as it
    /// is, outside the budget, and this truncation's own note says that it counts only what
    /// the executor kept.
    pub fn truncate_result(&self, tool: &ToolInfo, tool_call_id: &str, result: &mut ToolResult) {
        let mut budget = self.config.truncation;
        let executor_cut = !result.runtime_notes.is_empty();
        let mut dropped: Vec<usize> = Vec::new();
        let mut cut_whole = 0usize;
        for (i, block) in result.content.iter_mut().enumerate() {
            let Content::Text { text } = block else {
                continue;
            };
            if result.runtime_notes.contains(i) {
                continue;
            }
            let spent = budget.max_bytes == 0 || budget.max_lines == 0;
            if spent && !text.is_empty() {
                // Nothing of it can be shown. Past the first few such blocks (a note and a
                // spill file each), the rest are left out under one note: a result of many
                // blocks must not flood the model with notes, or the folder with files.
                if cut_whole >= MAX_NOTED_BLOCKS {
                    dropped.push(i);
                    continue;
                }
                cut_whole += 1;
            }
            let t = truncate_head(text, budget);
            budget.max_bytes = budget.max_bytes.saturating_sub(t.output_bytes);
            budget.max_lines = budget.max_lines.saturating_sub(t.output_lines);
            if !t.truncated {
                continue;
            }
            let spilled = self.config.spill_dir.as_deref().map(|dir| {
                crate::spill::spill_text(
                    dir,
                    tool.name(),
                    tool_call_id,
                    i,
                    text,
                    MAX_SPILL_FILE_BYTES,
                )
            });
            let mut out = String::with_capacity(t.content.len() + 120);
            if !t.content.is_empty() {
                out.push_str(t.content);
                out.push_str("\n\n");
            }
            let note = |path: Option<&Path>| {
                if !executor_cut {
                    return t.note(path);
                }
                // The totals are of what the executor kept; its own note has the tool's, and
                // the spill holds only what was kept: never call it the full output.
                let mut note = t.note(None);
                note.insert_str(
                    note.len() - 1,
                    "; counted after the runtime's own cut, see its note below",
                );
                if let Some(p) = path {
                    note.insert_str(
                        note.len() - 1,
                        &format!(". The text the runtime kept is saved to: {}", p.display()),
                    );
                }
                note
            };
            match &spilled {
                Some(Ok(path)) => out.push_str(&note(Some(path))),
                Some(Err(e)) => {
                    out.push_str(&note(None));
                    out.push_str(&format!(" (the full output could not be saved: {e})"));
                }
                None => out.push_str(&note(None)),
            }
            *text = out;
        }
        if !dropped.is_empty() {
            self.drop_blocks(tool, tool_call_id, result, &dropped);
        }
    }

    /// Takes the text blocks at `dropped` (which the budget left no room for) out of
    /// `result`, saving their text to one spill file when a spill folder is configured, and
    /// says so in one note.
    fn drop_blocks(
        &self,
        tool: &ToolInfo,
        tool_call_id: &str,
        result: &mut ToolResult,
        dropped: &[usize],
    ) {
        let mut joined = String::new();
        let mut kept = Vec::with_capacity(result.content.len() - dropped.len() + 1);
        let mut notes = crate::result::RuntimeNotes::default();
        for (i, block) in std::mem::take(&mut result.content).into_iter().enumerate() {
            match block {
                Content::Text { text } if dropped.contains(&i) => {
                    if !joined.is_empty() {
                        joined.push('\n');
                    }
                    joined.push_str(&text);
                }
                block => {
                    if result.runtime_notes.contains(i) {
                        notes.push(kept.len());
                    }
                    kept.push(block);
                }
            }
        }
        let mut note = format!(
            "[{} more text blocks ({} bytes) left out: the output limit was reached",
            dropped.len(),
            joined.len()
        );
        if let Some(dir) = self.config.spill_dir.as_deref() {
            match crate::spill::spill_text(
                dir,
                tool.name(),
                tool_call_id,
                dropped[0],
                &joined,
                MAX_SPILL_FILE_BYTES,
            ) {
                Ok(path) => note.push_str(&format!(". Their text is saved to: {}", path.display())),
                Err(e) => note.push_str(&format!(" (their text could not be saved: {e})")),
            }
        }
        note.push(']');
        kept.push(Content::text(note));
        result.content = kept;
        result.runtime_notes = notes;
    }
}

/// How many text blocks the budget left no room for get a note (and a spill file) each;
/// the rest are left out under one.
const MAX_NOTED_BLOCKS: usize = 16;

/// What generated code knows of a compiled-in tool: the part of [`Tool`] the typed path
/// needs, taken out of the generic so that path is compiled once.
struct Compiled {
    name: &'static str,
    version: u64,
    fingerprint: u64,
}

impl Compiled {
    fn of<T: Tool>() -> Self {
        Compiled {
            name: T::NAME,
            version: T::VERSION,
            fingerprint: T::FINGERPRINT,
        }
    }
}

/// A typed call's serialised params as the object a call takes, or the result saying why
/// they are not one.
fn params_object(
    name: &str,
    params: Result<Value, serde_json::Error>,
) -> Result<serde_json::Map<String, Value>, ToolResult> {
    match params {
        Ok(Value::Object(params)) => Ok(params),
        Ok(other) => Err(ToolResult::stopped(
            StopReason::BadArguments,
            format!("the params of tool `{name}` serialised to {other}, not an object"),
        )),
        Err(e) => Err(ToolResult::error(format!(
            "cannot serialise the params of tool `{name}`: {e}"
        ))),
    }
}
