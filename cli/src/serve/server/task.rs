//! A `tools/call` that runs as a task (MCP's tasks extension, see [`tasks`]): the task
//! created, and its call run in the background to leave its result with it.

use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{CallToolResponse, ClientCapabilities, CreateTaskResult, ErrorCode};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::Value;
use toolbind::{CallOptions, Runtime};
use toolbind_codegen::TaskSupport;
use tracing::Instrument;

use crate::serve::logging::log;
use crate::serve::{asking, ids, spills, tasks};

use super::call::request_span;
use super::results::to_mcp;
use super::{Server, State};

impl Server {
    /// A `tools/call` of a tool that runs as a task for this client: the task, its call
    /// started. `None`: a plain call (the tool says `task: never`, or it says `optional`
    /// and the client does not take tasks). A `task: required` tool's call from a client
    /// that does not take tasks is refused with -32021 (missing client capability).
    ///
    /// A client takes tasks when it declared the extension `io.modelcontextprotocol/tasks`
    /// at `initialize`, or in the request's own `_meta` client capabilities (2026-07-28).
    pub(super) fn as_task(
        &self,
        runtime: &Arc<Runtime>,
        name: &str,
        args: &Value,
        meta: &rmcp::model::RequestMetaObject,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<CallToolResponse>, McpError> {
        let Some(info) = runtime.registry().get(name) else {
            return Ok(None);
        };
        let takes_tasks = context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        match info.spec().task {
            TaskSupport::Required | TaskSupport::Optional if takes_tasks => {}
            TaskSupport::Required => {
                let required = ClientCapabilities::builder().enable_tasks().build();
                return Err(McpError::new(
                    ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                    format!(
                        "`{name}` runs only as a task (its TOOL.md says `task: required`): declare the client capability extensions.\"{}\" and poll tasks/get",
                        rmcp::model::TASKS_EXTENSION_ID
                    ),
                    Some(serde_json::json!({ "requiredCapabilities": required })),
                ));
            }
            _ => return Ok(None),
        }
        let runs_for = info
            .timeout()
            .unwrap_or(runtime.config().get_default_timeout())
            .saturating_add(self.state.executor.config().get_grace());
        // Counted against --task-memory while the task is unfinished.
        let args_bytes = serde_json::to_vec(args).map_or(0, |v| v.len());
        let (task, started) =
            self.state
                .tasks
                .create(name, self.owner(context), runs_for, args_bytes)?;
        let span = request_span(name, meta, context);
        log(&format!(
            "call {} of `{name}`: task {}",
            context.id,
            ids::short(&started.id)
        ));
        tokio::spawn(
            run_task(
                self.state.clone(),
                runtime.clone(),
                name.to_owned(),
                args.clone(),
                started,
                context.client_capabilities(),
                span.clone(),
                spills::owner(context),
            )
            .instrument(span),
        );
        Ok(Some(CallToolResponse::Task(CreateTaskResult::new(task))))
    }
}

/// A task's call: it waits for one of `--max-concurrent-calls` (a cancel or the TTL ends
/// the wait), runs (the task's cancel, its TTL and the server's shutdown stop it through
/// the call's abort signal, then the kill), and leaves its result with the task.
#[allow(clippy::too_many_arguments)] // one spawned task's whole context, moved in
async fn run_task(
    state: Arc<State>,
    runtime: Arc<Runtime>,
    name: String,
    args: Value,
    started: tasks::Started,
    capabilities: Option<ClientCapabilities>,
    span: tracing::Span,
    owner: Option<String>,
) {
    let begun = Instant::now();
    let cancel = started.cancel.clone();
    let progress = started.progress.clone();
    let opts = CallOptions::new()
        .id(format!("task-{}", ids::short(&started.id)))
        .host(asking::Asking(asking::Via::Task {
            tasks: state.tasks.clone(),
            id: started.id.clone(),
            capabilities,
        }))
        .cancel(cancel.clone())
        .progress(move |p| {
            progress.send_replace(Some(p));
        });
    let (result, _) = state
        .run_in_slot(runtime, &name, args, opts, None, || started.running())
        .await;
    toolbind::telemetry::mcp_server_ended(&span, &name, &result, begun);
    log(&format!(
        "task {} of `{name}`: {} in {:.1} s",
        ids::short(&started.id),
        result.stop.kind(),
        begun.elapsed().as_secs_f64()
    ));
    let json = match serde_json::to_value(to_mcp(result.clone(), &state, owner.as_deref())) {
        Ok(Value::Object(o)) => o,
        _ => rmcp::model::JsonObject::new(),
    };
    started.finish(&result, json);
}
