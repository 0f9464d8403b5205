//! Following a 2025-11-25 task (`legacy_task.rs` has its wire shapes and why it is asked
//! for as it is): `tasks/get` at the server's interval, `tasks/result` while the task's
//! questions reach the call's host, `tasks/cancel` on the call's cancel or timeout.

use super::call::{Stop, cancel_request, result_of, until};
use super::legacy_task::LegacyTask;
use super::task::{MAX_FAILED_POLLS, MIN_POLL};
use super::*;
use crate::exec::stop::Stopper;
use rmcp::model::CustomRequest;

/// The poll interval when the server gives none (the SDK's default), and the longest one
/// taken from a server (the call's deadline and cancel end a wait in any case).
const DEFAULT_POLL: Duration = Duration::from_millis(1000);
const MAX_LEGACY_POLL: Duration = Duration::from_secs(60);

impl Connection {
    /// Follows the 2025-11-25 task `created` to its end: its result, or why there is none.
    pub(super) async fn follow_legacy_task(
        &self,
        live: &Arc<Live>,
        call: &ExecCall<'_>,
        created: LegacyTask,
        stopper: &mut Stopper,
    ) -> ToolResult {
        let name = call.tool.name();
        let peer = live.client.peer().clone();
        let id = created.id.clone();
        // Not cancelled: the task is the other call's.
        let Some((followed, mut open)) = self.follow_asks(&id, call) else {
            return ToolResult::stopped(
                StopReason::ProtocolError,
                format!(
                    "tool `{name}`: MCP server `{}` gave this call a task another call follows already ({})",
                    self.name(),
                    crate::untrusted::clip(&id, 100)
                ),
            );
        };
        let mut poll = DEFAULT_POLL;
        let mut said: Option<String> = None;
        let mut task = created;
        // Polls in a row that failed, and `tasks/result`s that failed in all.
        let (mut failed, mut results_failed) = (0, 0);
        loop {
            if let Some(p) = task.poll {
                poll = p.clamp(MIN_POLL, MAX_LEGACY_POLL);
            }
            self.pass_on(call, &mut said, task.message.as_deref());
            match task.status.as_str() {
                "working" => {}
                "input_required" | "completed" | "failed" => {
                    match self
                        .task_result(live, call, &followed, stopper, &mut open)
                        .await
                    {
                        Ok(r) => return r,
                        // Over HTTP the task outlives a request that failed: it is polled
                        // again by its id, on a new request.
                        Err(e) if live.process.is_none() && results_failed < MAX_FAILED_POLLS => {
                            results_failed += 1;
                            tracing::debug!(target: "toolbind", "tasks/result failed, polled again: {e}");
                        }
                        Err(e) => return self.lost(live, name, &e).await,
                    }
                }
                "cancelled" => {
                    return ToolResult::stopped(
                        StopReason::Cancelled,
                        format!(
                            "tool `{name}`: MCP server `{}` cancelled its task",
                            self.name()
                        ),
                    );
                }
                other => {
                    return ToolResult::stopped(
                        StopReason::ProtocolError,
                        format!(
                            "tool `{name}`: MCP server `{}` gave its task a status MCP does not have: {}",
                            self.name(),
                            crate::untrusted::clip(other, 100)
                        ),
                    );
                }
            }
            let waited = tokio::select! {
                () = tokio::time::sleep(poll) => None,
                () = call.cancel.cancelled() => Some(Stop::Cancelled),
                () = tokio::time::sleep_until(stopper.deadline()) => Some(Stop::Timeout),
            };
            if let Some(why) = waited {
                return self.cancel_legacy(&peer, &id, call, stopper, why).await;
            }
            let polled = until(
                &call.cancel,
                stopper.deadline(),
                peer.send_request(request("tasks/get", &id)),
            )
            .await;
            task = match polled {
                Ok(got) => match self.polled(name, &id, got) {
                    Ok(Ok(t)) => t,
                    Ok(Err(e)) if live.process.is_none() && failed < MAX_FAILED_POLLS => {
                        failed += 1;
                        tracing::debug!(target: "toolbind", "tasks/get failed, polled again: {e}");
                        continue;
                    }
                    Ok(Err(e)) => return self.lost(live, name, &e).await,
                    Err(r) => return r,
                },
                Err(why) => return self.cancel_legacy(&peer, &id, call, stopper, why).await,
            };
            failed = 0;
        }
    }

    /// What `tasks/get` for task `id` gave: the task, or the request's failure (`Ok`), or
    /// the result that ends the call.
    fn polled(
        &self,
        name: &str,
        id: &str,
        got: Result<ServerResult, rmcp::ServiceError>,
    ) -> Result<Result<LegacyTask, rmcp::ServiceError>, ToolResult> {
        match got {
            Ok(r) => match LegacyTask::of_result(&r) {
                Some(t) if t.id == id => Ok(Ok(t)),
                _ => Err(ToolResult::stopped(
                    StopReason::ProtocolError,
                    format!(
                        "tool `{name}`: MCP server `{}` answered `tasks/get` for its task with something else than that task",
                        self.name()
                    ),
                )),
            },
            Err(rmcp::ServiceError::McpError(e)) => Err(ToolResult::stopped(
                StopReason::ProtocolError,
                format!(
                    "tool `{name}`: MCP server `{}` answered `tasks/get` for its task with an error: {} (JSON-RPC error {})",
                    self.name(),
                    crate::untrusted::clip(&e.message, 1_000),
                    e.code.0
                ),
            )),
            Err(e) => Ok(Err(e)),
        }
    }

    /// `tasks/result`: the server holds it open while it puts the task's questions to the
    /// call's host (the call's timeout stands still while one is open, within its pause
    /// budget), then answers with the tool's result; `Err` when the request failed.
    async fn task_result(
        &self,
        live: &Arc<Live>,
        call: &ExecCall<'_>,
        followed: &FollowedTask,
        stopper: &mut Stopper,
        open: &mut tokio::sync::watch::Receiver<usize>,
    ) -> Result<ToolResult, rmcp::ServiceError> {
        let name = call.tool.name();
        let id = followed.id();
        let peer = live.client.peer().clone();
        followed.in_result(true);
        let handle = peer
            .send_cancellable_request(
                request("tasks/result", id),
                PeerRequestOptions::no_options(),
            )
            .await;
        let handle = match handle {
            Ok(h) => h,
            Err(e) => {
                followed.in_result(false);
                return Err(e);
            }
        };
        let request_id = handle.id.clone();
        let answer = handle.await_response();
        tokio::pin!(answer);
        let mut watching = true;
        let answer = loop {
            let why = tokio::select! {
                biased;
                out = &mut answer => break out,
                () = call.cancel.cancelled() => Stop::Cancelled,
                () = tokio::time::sleep_until(stopper.deadline()) => Stop::Timeout,
                changed = open.changed(), if watching => {
                    watching = changed.is_ok();
                    if watching && *open.borrow_and_update() > 0 {
                        stopper.pause();
                    } else {
                        stopper.resume();
                    }
                    continue;
                }
            };
            // The time the call took, as told, leaves out the open question's pause.
            stopper.resume();
            followed.in_result(false);
            cancel_request(&peer, request_id, &why).await;
            return Ok(self.cancel_legacy(&peer, id, call, stopper, why).await);
        };
        stopper.resume();
        followed.in_result(false);
        Ok(match answer {
            Ok(ServerResult::CallToolResult(r)) => result_of(r),
            Ok(other) => match serde_json::to_value(&other)
                .ok()
                .and_then(|v| serde_json::from_value::<CallToolResult>(v).ok())
            {
                Some(r) => result_of(r),
                None => ToolResult::stopped(
                    StopReason::ProtocolError,
                    format!(
                        "tool `{name}`: MCP server `{}` answered `tasks/result` with something else than a tool's result",
                        self.name()
                    ),
                ),
            },
            Err(rmcp::ServiceError::McpError(e)) => ToolResult::stopped(
                StopReason::ToolError,
                format!(
                    "tool `{name}`: MCP server `{}` failed its task: {} (JSON-RPC error {})",
                    self.name(),
                    crate::untrusted::clip(&e.message, 1_000),
                    e.code.0
                ),
            ),
            Err(e) => return Err(e),
        })
    }

    /// Stops a task for the call's cancel or timeout: `tasks/cancel` (bounded), and the
    /// call's result.
    async fn cancel_legacy(
        &self,
        peer: &Peer<RoleClient>,
        id: &str,
        call: &ExecCall<'_>,
        stopper: &Stopper,
        why: Stop,
    ) -> ToolResult {
        let sent = tokio::time::timeout(
            self.server.ping_timeout,
            peer.send_request(request("tasks/cancel", id)),
        )
        .await;
        self.task_stopped(call, stopper, why, matches!(sent, Ok(Ok(_))))
    }
}

fn request(method: &str, id: &str) -> ClientRequest {
    ClientRequest::CustomRequest(CustomRequest::new(
        method,
        Some(serde_json::json!({ "taskId": id })),
    ))
}
