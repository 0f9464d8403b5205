//! The contract between dispatch and whatever runs a tool.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::ToolInfo;
use serde_json::{Map, Value};

use crate::cancel::CancelToken;
use crate::exec::stop::MAX_TIMEOUT;
use crate::result::{Progress, ToolResult};

/// The default of [`RuntimeConfig::ask_timeout`](crate::runtime::RuntimeConfig::ask_timeout): 5 minutes.
pub const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(300);

/// Receives `onUpdate` progress, in order, before the result.
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

/// Receives the lines a tool writes to stderr during a call, one line at a time without
/// its newline (at most [`MAX_LOG_LINE_BYTES`]; a longer line is cut with a note). It is
/// called from the executor's I/O tasks: it must return quickly and never block (queue the
/// line, or drop it).
pub type LogSink = Arc<dyn Fn(String) + Send + Sync>;

/// The longest stderr line handed to a [`LogSink`]; the rest of a longer line is dropped
/// and the line ends with ` [line cut at 4096 bytes]`.
pub const MAX_LOG_LINE_BYTES: usize = 4096;

/// Everything an executor needs for one call. Params are already validated, coerced and
/// defaulted against the tool's spec.
#[non_exhaustive]
pub struct ExecCall<'a> {
    /// The tool to run (its loaded TOOL.md).
    pub tool: &'a ToolInfo,
    /// The provider's id for this call (`toolCallId`), passed to the tool.
    pub tool_call_id: &'a str,
    /// The validated arguments, defaults filled in.
    pub params: Map<String, Value>,
    /// Fires when the caller cancels the call.
    pub cancel: CancelToken,
    /// Receives the tool's progress updates (`onUpdate`), if anyone listens.
    pub progress: Option<ProgressSink>,
    /// Receives the tool's stderr lines, when the caller wants them. Executors that cannot
    /// tell which call a line belongs to (several calls in flight in one process) leave it
    /// out rather than hand it to the wrong call.
    pub log: Option<LogSink>,
    /// The call's timeout, resolved by the caller (the [`Runtime`](crate::Runtime): the
    /// call's, else the tool's, else its default). The executor enforces it as given:
    /// abort, then kill after the grace period.
    pub timeout: Duration,
    /// The call's W3C trace context, when its span is exported (feature `otel`): handed
    /// to the tool (a bash tool's `TRACEPARENT`/`TRACESTATE`, node and python tools'
    /// `carrier()`) and to an MCP server (`_meta.traceparent`).
    pub trace: Option<crate::telemetry::TraceContext>,
    /// Who answers the questions the tool asks while it runs (`ctx.confirm`, ...): the
    /// call's or the runtime's [`Host`](crate::host::Host); `None`, every question is
    /// refused with a message saying so.
    pub host: Option<Arc<dyn crate::host::Host>>,
    /// How long one question may wait for its answer
    /// ([`RuntimeConfig::ask_timeout`](crate::runtime::RuntimeConfig::ask_timeout)); the
    /// wait does not count against [`timeout`](Self::timeout).
    pub ask_timeout: Duration,
    /// The call's span (`execute_tool`, see [`telemetry`](crate::telemetry)); a disabled
    /// span when nothing records it. While [`Executor::polls_in_call_span`] says `true` (the
    /// default) it is also the current span wherever the executor's code runs; an executor
    /// that says `false` records on it, and parents its own spans to it, itself.
    pub span: tracing::Span,
}

/// A call's timeout when nobody set one: 120 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

impl<'a> ExecCall<'a> {
    /// A call of `tool` with `params` (validated and defaulted by the caller): call id
    /// `""`, a fresh cancel token, no progress sink, the tool's `timeout:` else
    /// [`DEFAULT_TIMEOUT`].
    pub fn new(tool: &'a ToolInfo, params: Map<String, Value>) -> Self {
        ExecCall {
            tool,
            tool_call_id: "",
            params,
            cancel: CancelToken::new(),
            progress: None,
            log: None,
            timeout: tool.timeout().unwrap_or(DEFAULT_TIMEOUT).min(MAX_TIMEOUT),
            trace: None,
            host: None,
            ask_timeout: DEFAULT_ASK_TIMEOUT,
            span: tracing::Span::none(),
        }
    }

    /// Sets who answers the tool's questions (see [`ExecCall::host`]) and how long each
    /// may wait.
    pub fn host(mut self, host: Arc<dyn crate::host::Host>, ask_timeout: Duration) -> Self {
        self.host = Some(host);
        self.ask_timeout = ask_timeout;
        self
    }

    /// Sets the provider's call id.
    pub fn tool_call_id(mut self, id: &'a str) -> Self {
        self.tool_call_id = id;
        self
    }

    /// Sets the token that cancels the call.
    pub fn cancel(mut self, cancel: CancelToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Sets the sink for the tool's progress updates.
    pub fn progress(mut self, sink: ProgressSink) -> Self {
        self.progress = Some(sink);
        self
    }

    /// Sets the sink for the tool's stderr lines.
    pub fn log(mut self, sink: LogSink) -> Self {
        self.log = Some(sink);
        self
    }

    /// Sets the call's timeout (capped at [`MAX_TIMEOUT`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.min(MAX_TIMEOUT);
        self
    }

    /// Sets the call's trace context (see [`ExecCall::trace`]).
    pub fn trace(mut self, context: crate::telemetry::TraceContext) -> Self {
        self.trace = Some(context);
        self
    }
}

/// The future [`Executor::execute`] returns.
pub type ExecFuture<'a> = Pin<Box<dyn Future<Output = ToolResult> + Send + 'a>>;

/// What [`Executor::prepare`] returns: the prepared arguments, or why preparing failed (a
/// message the model can read).
pub type PrepareFuture<'a> = Pin<Box<dyn Future<Output = Result<Value, String>> + Send + 'a>>;

/// Runs validated calls. Implementations turn every failure (crash, timeout, cancellation,
/// protocol error) into an error [`ToolResult`]; they never panic on tool behaviour.
pub trait Executor: Send + Sync {
    /// Runs one call to completion. Every failure (crash, timeout, cancellation, protocol
    /// error) is a [`ToolResult`] with `is_error` and a [`StopReason`](crate::StopReason),
    /// never a panic or an `Err`.
    fn execute<'a>(&'a self, call: ExecCall<'a>) -> ExecFuture<'a>;

    /// The Pi tool API's `prepareArguments`: reshapes a model's raw arguments (an old argument
    /// shape, say) before the runtime validates them, in the tool's own process.
    /// [`Runtime::call`](crate::Runtime::call) calls it first unless
    /// [`prepares`](Self::prepares) says the tool has none. A tool that turns out to have
    /// none gets `args` back as they are, as from the default.
    fn prepare<'a>(
        &'a self,
        tool: &'a ToolInfo,
        args: Value,
        timeout: Duration,
    ) -> PrepareFuture<'a> {
        let _ = (tool, timeout);
        Box::pin(async move { Ok(args) })
    }

    /// Whether `tool` may have a `prepareArguments` for [`prepare`](Self::prepare) to run:
    /// `false` lets [`Runtime::call`](crate::Runtime::call) skip [`prepare`](Self::prepare).
    /// An executor that cannot tell yet answers `true` ("maybe") and finds out in
    /// [`prepare`](Self::prepare) ([`SubprocessExecutor`](crate::exec::SubprocessExecutor)
    /// learns it from the tool's harness and remembers it until the entry changes). The
    /// default is `false`.
    fn prepares(&self, tool: &ToolInfo) -> bool {
        let _ = tool;
        false
    }

    /// Which sandbox this executor runs tools of `languages` in, and whether each limit
    /// holds ([`SandboxStatus::limits`](crate::sandbox::SandboxStatus::limits)); `None` for
    /// an executor that runs no local processes or does not say (the default).
    /// [`SubprocessExecutor`](crate::exec::SubprocessExecutor) answers with
    /// [`SubprocessExecutor::sandbox_status`](crate::exec::SubprocessExecutor::sandbox_status);
    /// [`Runtime::sandbox_status`](crate::Runtime::sandbox_status) asks its executor.
    fn sandbox(
        &self,
        languages: &[crate::tool::Language],
    ) -> Option<crate::sandbox::SandboxStatus> {
        let _ = languages;
        None
    }

    /// Whether the [`Runtime`](crate::Runtime) makes the call's span
    /// ([`ExecCall::span`]) the current one while it runs [`execute`](Self::execute) and
    /// at every poll of its future (`true`, the default): the spans and events the
    /// executor's code makes are then the call's children without its doing anything.
    /// `false` saves `tracing`'s enter and exit at every poll (a warm call is polled for
    /// each progress update, message and wake-up); the executor then records on
    /// [`ExecCall::span`] and parents its spans to it itself, as
    /// [`SubprocessExecutor`](crate::exec::SubprocessExecutor) does.
    fn polls_in_call_span(&self, tool: &ToolInfo) -> bool {
        let _ = tool;
        true
    }
}
