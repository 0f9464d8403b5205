//! The contract between dispatch and whatever runs a tool.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use toolbind_codegen::model::ToolSpec;

use crate::cancel::CancelToken;
use crate::result::{Progress, ToolResult};

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
pub struct ExecCall<'a> {
    pub tool: &'a ToolSpec,
    pub tool_call_id: &'a str,
    pub params: Map<String, Value>,
    pub cancel: CancelToken,
    pub progress: Option<ProgressSink>,
    /// Receives the tool's stderr lines, when the caller wants them. Executors that cannot
    /// tell which call a line belongs to (several calls in flight in one process) leave it
    /// out rather than hand it to the wrong call.
    pub log: Option<LogSink>,
    /// The effective timeout for this call (per call, else per tool, else the runtime's).
    pub timeout: Option<Duration>,
}

pub type ExecFuture<'a> = Pin<Box<dyn Future<Output = ToolResult> + Send + 'a>>;

/// What [`Executor::prepare`] returns: the prepared arguments, or why preparing failed (a
/// message the model can read).
pub type PrepareFuture<'a> = Pin<Box<dyn Future<Output = Result<Value, String>> + Send + 'a>>;

/// Runs validated calls. Implementations turn every failure (crash, timeout, cancellation,
/// protocol error) into an error [`ToolResult`]; they never panic on tool behaviour.
pub trait Executor: Send + Sync {
    fn execute<'a>(&'a self, call: ExecCall<'a>) -> ExecFuture<'a>;

    /// Seed 002's `prepareArguments`: reshapes a model's raw arguments (an old argument
    /// shape, say) before the runtime validates them, in the tool's own process.
    /// [`Runtime::call`](crate::Runtime::call) calls it first when
    /// [`prepares`](Self::prepares) says the tool has it. The default returns `args` as
    /// they are.
    fn prepare<'a>(
        &'a self,
        tool: &'a ToolSpec,
        args: Value,
        timeout: Duration,
    ) -> PrepareFuture<'a> {
        let _ = (tool, timeout);
        Box::pin(async move { Ok(args) })
    }

    /// Whether `tool` has a `prepareArguments` for [`prepare`](Self::prepare) to run. The
    /// default is `false`.
    fn prepares(&self, tool: &ToolSpec) -> bool {
        let _ = tool;
        false
    }
}
