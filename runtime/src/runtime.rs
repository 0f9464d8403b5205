//! The [`Runtime`]: loaded tools plus an executor, and the call pipeline (look up,
//! prepare, validate, approve, run, redact, truncate, check outputs); how it is built
//! ([`RuntimeBuilder`], [`RuntimeConfig`]) and the typed path live beside it.

mod builder;
mod config;
pub(crate) mod typed;

pub use builder::RuntimeBuilder;
pub use config::{CallOptions, RuntimeConfig};

use crate::lock::Locked;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tracing::Instrument;

use serde_json::Value;
use toolbind_codegen::suggest;

use crate::ToolInfo;
use crate::args::{self, ValidArgs};
pub use crate::executor::DEFAULT_ASK_TIMEOUT;
use crate::executor::{ExecCall, Executor, LogSink, ProgressSink};
use crate::loader::Registry;
use crate::output::{OutputCheck, OutputViolation};
use crate::result::{Progress, StopReason, ToolResult};
use crate::secret::{self, Redactor};
pub use crate::spill::{
    MAX_SPILL_DIR_BYTES, MAX_SPILL_FILE_BYTES, SPILL_RETENTION, default_spill_dir,
};
use crate::telemetry::CallSpan;

/// What the runtime does with a result whose `details` break its tool's `outputs:`.
pub(crate) type ViolationHook = Arc<dyn Fn(&ToolInfo, &[OutputViolation]) + Send + Sync>;

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
    index: crate::index::Cached,
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
        let mut map = self.0.locked();
        map.entry(tool.to_owned()).or_default().clone()
    }
}

/// The caller's progress sink as the executor gets it: through the call's redactor, and,
/// for an executor polled outside the call's span (`in_span`), told within it.
fn progress_sink(
    sink: Option<ProgressSink>,
    redactor: &Redactor,
    in_span: Option<&tracing::Span>,
) -> Option<ProgressSink> {
    let sink = match sink {
        Some(sink) if !redactor.is_empty() => {
            let r = redactor.clone();
            Some(Arc::new(move |mut p: Progress| {
                r.content(&mut p.content);
                sink(p)
            }) as ProgressSink)
        }
        other => other,
    };
    match (sink, in_span) {
        (Some(sink), Some(span)) if !span.is_disabled() => {
            let span = span.clone();
            Some(Arc::new(move |p: Progress| span.in_scope(|| sink(p))) as ProgressSink)
        }
        (sink, _) => sink,
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

    /// The tools the runtime was built with: the loaded ones and those of its MCP servers
    /// then. A server without a snapshot that came up later adds its tools to
    /// [`tool_list`](Self::tool_list) and [`tool`](Self::tool), not here.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Tool `name`: one the runtime was built with, or one of an MCP server that came up
    /// since.
    pub fn tool(&self, name: &str) -> Option<&ToolInfo> {
        self.registry.get(name).or_else(|| self.mcp.joined(name))
    }

    /// Every tool callable now, for the model's tool list: [`registry`](Self::registry)'s
    /// and those of the MCP servers that came up since the runtime was built (in the order
    /// they came).
    pub fn tool_list(&self) -> Registry {
        let mut list = self.registry.clone();
        for t in self.mcp.joined_tools() {
            let _ = list.insert(t.clone());
        }
        list
    }

    /// A search index of [`tool_list`](Self::tool_list): kept while that list is
    /// unchanged, built anew when it changed (a tool's server listed it afresh, a server
    /// came up later). Ranking: [`ToolIndex`](crate::index::ToolIndex).
    pub fn tool_index(&self) -> Arc<crate::index::ToolIndex> {
        self.index.of(&self.tool_list())
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
        let Some(spec) = self.tool(name) else {
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
        self.in_call_span(name, opts, |opts, span| async move {
            let args = match self.prepare(name, args, &opts, &span).await {
                Ok(a) => a,
                Err(result) => return result,
            };
            self.call_prepared(name, args, opts, &span).await
        })
        .await
    }

    /// Runs `run` for a call of tool `name` with the call's span (see
    /// [`telemetry`](crate::telemetry)), the call's id settled first.
    ///
    /// `run` enters the span itself, around its synchronous parts and the futures that
    /// may make spans of their own (`execute` does): a span entered across a whole warm
    /// call would be entered and left again at each of its polls.
    pub(crate) async fn in_call_span<'a, F>(
        &'a self,
        name: &str,
        opts: CallOptions,
        run: impl FnOnce(CallOptions, tracing::Span) -> F,
    ) -> ToolResult
    where
        F: Future<Output = ToolResult> + 'a,
    {
        let opts = self.with_call_id(opts);
        let span = CallSpan::open(name, self.tool(name), &opts.tool_call_id);
        let result = run(opts, span.span().clone()).await;
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
    async fn call_prepared(
        &self,
        name: &str,
        args: Value,
        opts: CallOptions,
        span: &tracing::Span,
    ) -> ToolResult {
        // DEBUG: a span per call costs more than the checks it times (BENCHMARKS.md).
        // Made with the call's span entered: a filter that selects by span (`[execute_tool]`)
        // sees it, and a disabled call span leaves the caller's as the parent.
        let checked = span.in_scope(|| {
            tracing::debug_span!(target: "toolbind", "validate_arguments")
                .in_scope(|| self.check(name, args))
        });
        match checked {
            Ok(valid) => {
                let tool = valid.tool();
                self.execute(tool, valid.into_params(), opts, span).await
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
        span: &tracing::Span,
    ) -> Result<Value, ToolResult> {
        let Some(spec) = self.tool(name) else {
            return Ok(args);
        };
        if !self.executor.prepares(spec) {
            return Ok(args);
        }
        let timeout = self.timeout_of(spec, opts);
        let raw = args.clone();
        span.in_scope(|| self.executor.prepare(spec, args, timeout))
            .instrument(span.clone())
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
        span: &tracing::Span,
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
        // Only a host runs code of its own while approving: then it runs in the span.
        let hosted = approver.host.is_some();
        let approved = crate::host::approval(approver, tool, params, check);
        let approved = if hosted {
            approved.instrument(span.clone()).await
        } else {
            approved.await
        };
        let params = match approved {
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
            crate::telemetry::record_arguments(span, tool, &params, &redactor);
        }
        let polled_in_span = self.executor.polls_in_call_span(tool);
        let mut call = ExecCall::new(tool, params)
            .tool_call_id(&tool_call_id)
            .cancel(opts.cancel)
            .timeout(timeout);
        call.progress = progress_sink(opts.progress, &redactor, (!polled_in_span).then_some(span));
        call.log = match opts.log {
            Some(sink) if !redactor.is_empty() => {
                let r = redactor.clone();
                Some(Arc::new(move |line: String| sink(r.text(&line))) as LogSink)
            }
            other => other,
        };
        // A call span a filter disabled leaves the caller's trace to continue, as before.
        call.trace = if span.is_disabled() {
            crate::telemetry::current()
        } else {
            crate::telemetry::context_of(span)
        };
        call.ask_timeout = self.config.ask_timeout;
        call.host = opts
            .host
            .or_else(|| self.host.clone())
            .map(|h| crate::host::redacting(h, &redactor));
        call.span = span.clone();
        let mut result = if polled_in_span {
            // `execute` itself too: an executor may work before it returns its future.
            let executor = &self.executor;
            async move { executor.execute(call).await }
                .instrument(span.clone())
                .await
        } else {
            self.executor.execute(call).await
        };
        // In the span: `check_outputs` runs the program's output-violation hook; and an
        // OpenTelemetry layer ends a span at its last exit, not at its close (span_tree
        // checks it), so the span is left last here, as the call ends.
        span.in_scope(|| {
            redactor.result(&mut result);
            self.truncate_result(tool, &tool_call_id, &mut result);
            self.check_outputs(tool, &mut result);
        });
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

    pub(crate) fn unknown_tool(&self, name: &str) -> ToolResult {
        let names: Vec<&str> = self
            .registry
            .names()
            .chain(self.mcp.joined_tools().map(ToolInfo::name))
            .collect();
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
        if let Some(note) = self.mcp.unknown_note() {
            text.push_str(&note);
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
