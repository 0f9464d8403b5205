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
pub use crate::executor::DEFAULT_ASK_TIMEOUT;
use crate::executor::{ExecCall, Executor, LogSink, ProgressSink};
use crate::loader::Registry;
use crate::output::{OutputCheck, OutputError, OutputViolation, Typed};
use crate::result::{Content, Progress, StopReason, ToolResult};
use crate::secret::{self, Redactor};
pub use crate::spill::{
    MAX_SPILL_DIR_BYTES, MAX_SPILL_FILE_BYTES, SPILL_RETENTION, default_spill_dir,
};
use crate::telemetry::CallSpan;
use crate::truncate::TruncateOptions;

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
    pub(crate) registry: Registry,
    config: RuntimeConfig,
    executor: Arc<dyn Executor>,
    on_output_violation: Option<ViolationHook>,
    host: Option<crate::host::SharedHost>,
    seq: AtomicU64,
    /// One queue per `execution: sequential` tool, shared by every batch.
    pub(crate) sequential: Queues,
    pub(crate) mcp: crate::mcp::Servers,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("tools", &self.registry.names().collect::<Vec<_>>())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The per-tool queues of `execution: sequential` tools, one per runtime.
#[derive(Default)]
pub(crate) struct Queues(
    std::sync::Mutex<std::collections::HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
);

impl Queues {
    pub(crate) fn get(&self, tool: &str) -> Arc<tokio::sync::Mutex<()>> {
        // A poisoned map still holds valid queues: a panic elsewhere must not stop tools.
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.entry(tool.to_owned()).or_default().clone()
    }
}

/// Builds a [`Runtime`]; see [`Runtime::builder`].
#[derive(Default)]
pub struct RuntimeBuilder {
    pub(crate) registry: Registry,
    pub(crate) config: RuntimeConfig,
    executor: Option<Arc<dyn Executor>>,
    sandbox: Option<crate::sandbox::SandboxPolicy>,
    on_output_violation: Option<ViolationHook>,
    pub(crate) host: Option<crate::host::SharedHost>,
    pub(crate) mcp: crate::mcp::Declared,
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

    /// The runtime. Without [`executor`](Self::executor), tools run in subprocesses with
    /// [`SubprocessExecutor`](crate::exec::SubprocessExecutor)'s default configuration.
    ///
    /// # Panics
    ///
    /// Where [`try_build`](Self::try_build) returns an error: an [MCP
    /// server](Self::mcp_server) without a snapshot, two servers of one name, or a tool
    /// name two sources share.
    pub fn build(mut self) -> Runtime {
        let servers = std::mem::take(&mut self.mcp)
            .from_snapshots(
                &mut self.registry,
                self.host.clone(),
                self.config.ask_timeout,
            )
            .unwrap_or_else(|e| panic!("{e}"));
        self.finish(servers)
    }

    /// The runtime, over the MCP servers `servers` (none without feature `mcp`).
    pub(crate) fn finish(self, servers: crate::mcp::Servers) -> Runtime {
        let sandbox = self.sandbox.unwrap_or_default();
        let executor = self.executor.unwrap_or_else(|| {
            let mut exec = crate::exec::ExecConfig::default().sandbox(sandbox);
            if let Some(dir) = &self.config.spill_dir {
                exec = exec.spill_dir(dir);
            }
            Arc::new(crate::exec::SubprocessExecutor::new(exec))
        });
        let executor = servers.route(executor);
        Runtime {
            registry: self.registry,
            config: self.config,
            executor,
            on_output_violation: self.on_output_violation,
            host: self.host,
            seq: AtomicU64::new(0),
            sequential: Default::default(),
            mcp: servers,
        }
    }
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
            // An MCP server's tool runs in the server, not in a local jail.
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
    pub(crate) async fn in_call_span<'a, F>(
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
    pub(crate) async fn execute(
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
        let params = match self.approval(tool, params, &opts).await {
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

    /// The call's params once approved, when it needs approval: as they are, or as the host
    /// edited them (validated again). Otherwise the result to report: denied (by the host,
    /// by its silence past [`RuntimeConfig::ask_timeout`], by its panic, or for want of a
    /// host), cancelled while waiting, or edited into invalid arguments.
    async fn approval(
        &self,
        tool: &ToolInfo,
        params: serde_json::Map<String, Value>,
        opts: &CallOptions,
    ) -> Result<serde_json::Map<String, Value>, ToolResult> {
        let host = opts.host.as_ref().or(self.host.as_ref());
        let declared = tool.spec().approval.needed(&params);
        let asked = host.is_some_and(|h| h.needs_approval(tool));
        if !declared && !asked {
            return Ok(params);
        }
        let name = tool.name();
        let denied = |why: String| {
            ToolResult::stopped(
                StopReason::Denied,
                format!("tool `{name}` did not run: {why}"),
            )
        };
        let Some(host) = host.cloned() else {
            return Err(denied(format!(
                "it needs approval before it runs (its TOOL.md says `approval: {}`), and this agent has no one to ask (toolbind::RuntimeBuilder::host; `toolbind call --yes` approves)",
                tool.spec().approval.describe()
            )));
        };
        let request = crate::host::ApprovalRequest {
            tool: tool.clone(),
            tool_call_id: opts.tool_call_id.clone(),
            args: Value::Object(params.clone()),
        };
        // Its own task: a policy that panics denies this call and nothing else.
        // Aborted when this future is dropped: the question does not outlive the call.
        let mut asking = crate::host::AbortOnDrop(tokio::spawn(host.approve(request)));
        let wait = self.config.ask_timeout;
        let decision = tokio::select! {
            d = &mut asking.0 => match d {
                Ok(d) => d,
                Err(e) if e.is_panic() => {
                    let panic = e.into_panic();
                    let message = panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "a panic without a message".into());
                    return Err(denied(format!("the approval policy panicked: {message}")));
                }
                Err(e) => return Err(denied(format!("the approval was not given: {e}"))),
            },
            () = tokio::time::sleep(wait) => {
                return Err(denied(format!(
                    "its approval did not come within {} s (RuntimeConfig::ask_timeout)",
                    wait.as_secs_f64()
                )));
            }
            _ = opts.cancel.cancelled() => {
                return Err(ToolResult::stopped(
                    StopReason::Cancelled,
                    format!("tool `{name}` was cancelled while it waited for approval"),
                ));
            }
        };
        match decision {
            crate::host::Decision::Approve => Ok(params),
            crate::host::Decision::Deny { reason } => {
                Err(denied(format!("the call was denied: {reason}")))
            }
            crate::host::Decision::ApproveWith { args } => match self.check(name, args) {
                Ok(valid) => Ok(valid.into_params()),
                Err(mut bad) => {
                    if let Some(Content::Text { text }) = bad.content.first_mut() {
                        text.insert_str(0, "the arguments the approver edited are invalid: ");
                    }
                    Err(bad)
                }
            },
        }
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
        let violations = match self.mcp.output_violations(tool, result.details.as_ref()) {
            Some(Some(v)) => v,
            Some(None) => return,
            None if spec.outputs.is_empty() => return,
            None => crate::output::check(&spec.outputs, result.details.as_ref()),
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

    pub(crate) fn unknown_tool(&self, name: &str) -> ToolResult {
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
        crate::truncate::truncate_result(
            self.config.truncation,
            self.config.spill_dir.as_deref(),
            tool.name(),
            tool_call_id,
            result,
        );
    }
}

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
pub(crate) fn params_object(
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
