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

/// Everything an executor needs for one call. Params are already validated, coerced and
/// defaulted against the tool's spec.
pub struct ExecCall<'a> {
    pub tool: &'a ToolSpec,
    pub tool_call_id: &'a str,
    pub params: Map<String, Value>,
    pub cancel: CancelToken,
    pub progress: Option<ProgressSink>,
    /// The effective timeout for this call (per call, else per tool, else the runtime's).
    pub timeout: Option<Duration>,
}

pub type ExecFuture<'a> = Pin<Box<dyn Future<Output = ToolResult> + Send + 'a>>;

/// Runs validated calls. Implementations turn every failure (crash, timeout, cancellation,
/// protocol error) into an error [`ToolResult`]; they never panic on tool behaviour.
pub trait Executor: Send + Sync {
    fn execute<'a>(&'a self, call: ExecCall<'a>) -> ExecFuture<'a>;
}
