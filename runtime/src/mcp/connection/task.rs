//! A call the server runs as a task (MCP's tasks extension, SEP-2663, on 2026-07-28): the
//! server answers `tools/call` with a task id; toolbind polls `tasks/get` at the server's
//! interval, passes each new status message to the call's progress, answers the task's
//! input requests through the host (`tasks/update`), and on the call's cancel or timeout
//! sends `tasks/cancel`. Over HTTP a poll that fails is sent again at the next interval on
//! a new request (the task lives in the server, not in a connection), a few times.

use super::call::{Stop, result_of, until};
use super::*;
use crate::exec::stop::Stopper;
use rmcp::model::{
    CallToolResult as McpResult, CancelTaskParams, CreateTaskResult, GetTaskParams,
    InputRequiredResult, TaskPayload, UpdateTaskParams,
};

/// The poll interval when the server gives none, and the bounds of one it gives.
const DEFAULT_POLL: Duration = Duration::from_millis(500);
pub(super) const MIN_POLL: Duration = Duration::from_millis(50);
pub(super) const MAX_POLL: Duration = Duration::from_secs(5);

/// Polls in a row that may fail (over HTTP) before the task counts as lost.
pub(super) const MAX_FAILED_POLLS: u32 = 3;

impl Connection {
    /// Follows the task `created` to its end: its result, or why there is none.
    pub(super) async fn follow_task(
        &self,
        live: &Arc<Live>,
        call: &ExecCall<'_>,
        created: CreateTaskResult,
        stopper: &mut Stopper,
    ) -> ToolResult {
        let name = call.tool.name();
        let peer = live.client.peer().clone();
        let id = created.task.task_id;
        let poll = created
            .task
            .poll_interval_ms
            .map_or(DEFAULT_POLL, Duration::from_millis)
            .clamp(MIN_POLL, MAX_POLL);
        let mut said: Option<String> = None;
        let (mut rounds, mut failed) = (0, 0);
        loop {
            let waited = tokio::select! {
                () = tokio::time::sleep(poll) => None,
                () = call.cancel.cancelled() => Some(Stop::Cancelled),
                () = tokio::time::sleep_until(stopper.deadline()) => Some(Stop::Timeout),
            };
            if let Some(why) = waited {
                return self.cancel_task(&peer, &id, call, stopper, why).await;
            }
            let polled = until(
                &call.cancel,
                stopper.deadline(),
                peer.get_task(GetTaskParams::new(id.clone())),
            )
            .await;
            let task = match polled {
                Ok(Ok(got)) => got.task,
                Ok(Err(rmcp::ServiceError::McpError(e))) => {
                    return ToolResult::stopped(
                        StopReason::ProtocolError,
                        format!(
                            "tool `{name}`: MCP server `{}` answered `tasks/get` for its task with an error: {} (JSON-RPC error {})",
                            self.name(),
                            e.message,
                            e.code.0
                        ),
                    );
                }
                Ok(Err(e)) if live.process.is_none() && failed < MAX_FAILED_POLLS => {
                    failed += 1;
                    tracing::debug!(target: "toolbind", "tasks/get failed, polled again: {e}");
                    continue;
                }
                Ok(Err(e)) => return self.lost(live, name, &e).await,
                Err(why) => return self.cancel_task(&peer, &id, call, stopper, why).await,
            };
            failed = 0;
            self.pass_on(call, &mut said, task.task.status_message.as_deref());
            match task.payload {
                TaskPayload::InputRequired { input_requests } => {
                    rounds += 1;
                    let input = InputRequiredResult::from_input_requests(input_requests);
                    let answers = match self.round(call, input, rounds, stopper).await {
                        Ok((answers, _)) => answers,
                        Err(r) => {
                            let _ = peer.cancel_task(CancelTaskParams::new(id.clone())).await;
                            return r;
                        }
                    };
                    let sent = until(
                        &call.cancel,
                        stopper.deadline(),
                        peer.update_task(UpdateTaskParams::new(id.clone(), answers)),
                    )
                    .await;
                    if let Err(why) = sent {
                        return self.cancel_task(&peer, &id, call, stopper, why).await;
                    }
                }
                payload => {
                    if let Some(r) = self.task_ended(name, payload) {
                        return r;
                    }
                }
            }
        }
    }

    /// The call's result for a task that ended (`None` while it works on).
    fn task_ended(&self, name: &str, payload: TaskPayload) -> Option<ToolResult> {
        Some(match payload {
            TaskPayload::Completed { result } => {
                match serde_json::from_value::<McpResult>(Value::Object(result)) {
                    Ok(r) => result_of(r),
                    Err(e) => ToolResult::stopped(
                        StopReason::ProtocolError,
                        format!(
                            "tool `{name}`: MCP server `{}` ended its task with a result that is not a tool's: {e}",
                            self.name()
                        ),
                    ),
                }
            }
            TaskPayload::Failed { error } => {
                let message = error.get("message").and_then(Value::as_str).unwrap_or("");
                ToolResult::stopped(
                    StopReason::ToolError,
                    format!(
                        "tool `{name}`: MCP server `{}` failed its task: {}",
                        self.name(),
                        crate::untrusted::clip(message, 1_000)
                    ),
                )
            }
            TaskPayload::Cancelled => ToolResult::stopped(
                StopReason::Cancelled,
                format!(
                    "tool `{name}`: MCP server `{}` cancelled its task",
                    self.name()
                ),
            ),
            _ => return None,
        })
    }

    /// A task's new status message, as the call's progress.
    pub(super) fn pass_on(
        &self,
        call: &ExecCall<'_>,
        said: &mut Option<String>,
        message: Option<&str>,
    ) {
        let (Some(sink), Some(message)) = (&call.progress, message) else {
            return;
        };
        let message = crate::untrusted::clip(message, 1_000);
        if said.as_deref() == Some(message.as_ref()) {
            return;
        }
        *said = Some(message.to_string());
        sink(Progress::new(vec![Content::text(message.to_string())]));
    }

    /// Stops a task for the call's cancel or timeout: `tasks/cancel` (bounded), and the
    /// call's result.
    async fn cancel_task(
        &self,
        peer: &Peer<RoleClient>,
        id: &str,
        call: &ExecCall<'_>,
        stopper: &Stopper,
        why: Stop,
    ) -> ToolResult {
        let sent = tokio::time::timeout(
            self.server.ping_timeout,
            peer.cancel_task(CancelTaskParams::new(id.to_owned())),
        )
        .await;
        self.task_stopped(call, stopper, why, matches!(sent, Ok(Ok(()))))
    }

    /// The result of a call whose task was stopped for `why`; `acknowledged`: the server
    /// answered `tasks/cancel`.
    pub(super) fn task_stopped(
        &self,
        call: &ExecCall<'_>,
        stopper: &Stopper,
        why: Stop,
        acknowledged: bool,
    ) -> ToolResult {
        let name = call.tool.name();
        let mut r = self.stopped_in_flight(name, call.timeout, stopper.deadline(), why);
        if let Some(Content::Text { text }) = r.content.first_mut() {
            *text = text.replace(
                "was sent `notifications/cancelled`",
                if acknowledged {
                    "cancelled its task (`tasks/cancel`)"
                } else {
                    "was sent `tasks/cancel`, which it did not acknowledge"
                },
            );
        }
        r
    }
}
