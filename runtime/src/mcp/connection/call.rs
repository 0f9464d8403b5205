//! One tool call over the connection: a slot, the live connection, the request, the
//! server's input rounds, and the result or why there is none.

use super::legacy_task::{self, LEGACY_TASKS, LegacyTask};
use super::*;
use crate::exec::stop::Stopper;
use crate::lock::Locked;

impl Connection {
    /// Runs one call of tool `mcp_name`, whose contract the caller was built against is
    /// `contract`.
    pub(crate) async fn call(
        self: &Arc<Self>,
        mcp_name: &str,
        contract: &str,
        call: ExecCall<'_>,
    ) -> ToolResult {
        let transport = match self.server.config {
            ServerConfig::Stdio { .. } => "pipe",
            ServerConfig::Http { .. } => "tcp",
        };
        // The protocol is recorded once the connection is up (a span's attribute recorded
        // twice is exported twice).
        let span = crate::telemetry::mcp_client_span(mcp_name, transport);
        let started = std::time::Instant::now();
        let result = self
            .call_untraced(mcp_name, contract, call)
            .instrument(span.clone())
            .await;
        crate::telemetry::mcp_client_ended(&span, mcp_name, &result, started);
        result
    }

    pub(super) async fn call_untraced(
        self: &Arc<Self>,
        mcp_name: &str,
        contract: &str,
        mut call: ExecCall<'_>,
    ) -> ToolResult {
        let _asking = self.asking_for(&call);
        let name = call.tool.name().to_owned();
        let cancel = call.cancel.clone();
        // The waits for answers stand the call's timeout still, up to three ask timeouts
        // in all, as a tool's own questions do: a server cannot stretch a call without end.
        let ask_timeout = self.shared.asking.locked().ask_timeout;
        let mut stopper = Stopper::new(call.timeout, Duration::ZERO)
            .with_pause_budget(ask_timeout.saturating_mul(3));
        let slots = self.slots.clone();
        let _permit = match until(&cancel, stopper.deadline(), slots.acquire_owned()).await {
            Ok(Ok(p)) => p,
            Ok(Err(_)) => return ToolResult::error("the MCP connection is shutting down"),
            Err(why) => return self.stopped_waiting(&name, call.timeout, why),
        };
        // Over HTTP, a call of a read-only or idempotent tool whose connection failed is
        // sent once more, on a new connection (behind a load balancer: to a replica that
        // is up). Any other call could run twice: it is not.
        let annotations = call.tool.annotations();
        let retry = matches!(self.server.config, ServerConfig::Http { .. })
            && (annotations.read_only == Some(true) || annotations.idempotent == Some(true));
        let mut retried = false;
        let params = std::mem::take(&mut call.params);
        // MCP 2026-07-28: the answers to the server's last `InputRequiredResult`, and how
        // many it sent.
        let mut answered: Option<(rmcp::model::InputResponses, Option<String>)> = None;
        let mut rounds = 0;
        // MCP 2025-11-25: the call was sent again as a task, once refused without one.
        let mut asked_as_task = false;
        loop {
            let live = match until(&cancel, stopper.deadline(), self.live()).await {
                Ok(Ok(l)) => l,
                Ok(Err(r)) => return r,
                Err(why) => return self.stopped_waiting(&name, call.timeout, why),
            };
            // A retry (of a lost connection, or with answers) sends the arguments again.
            let args = match self.checked_args(&live, &name, mcp_name, contract, params.clone()) {
                Ok(a) => a,
                Err(r) => return r,
            };
            tracing::Span::current().record("mcp.protocol.version", live.protocol.as_str());
            let legacy = match (live.protocol == LEGACY_TASKS, live.needs_task(mcp_name)) {
                (false, _) => Legacy::No,
                (true, false) => Legacy::Plain,
                (true, true) => Legacy::Task,
            };
            let lasts = call.timeout.saturating_add(ask_timeout.saturating_mul(3));
            let request = call_request(mcp_name, args, answered.as_ref(), legacy, lasts);
            let lost = match self
                .exchange(&live, request, &call, stopper.deadline(), legacy)
                .await
            {
                Reply::Done(r) => return self.with_hidden_note(&live, r, &params),
                // Sent once more, as a task (`legacy_task.rs`).
                Reply::WantsTask(r) => {
                    live.mark_needs_task(mcp_name);
                    if std::mem::replace(&mut asked_as_task, true) {
                        return r;
                    }
                    tracing::debug!(target: "toolbind", "`{mcp_name}` runs only as a task: asked again as one");
                    continue;
                }
                Reply::LegacyTask(task, _progress) => {
                    return self
                        .follow_legacy_task(&live, &call, task, &mut stopper)
                        .await;
                }
                Reply::Input(input, _progress) => {
                    rounds += 1;
                    match self.round(&call, input, rounds, &mut stopper).await {
                        Ok(a) => {
                            answered = Some(a);
                            continue;
                        }
                        Err(r) => return r,
                    }
                }
                Reply::Task(task, _progress) => {
                    return self.follow_task(&live, &call, task, &mut stopper).await;
                }
                Reply::Lost(e) => e,
            };
            // The connection failed under the call.
            let r = self.lost(&live, &name, &lost).await;
            if retry && !retried {
                retried = true;
                continue;
            }
            return r;
        }
    }

    /// `r`, with a note when it is a tool error naming a path the server's jail hides.
    fn with_hidden_note(
        &self,
        live: &Live,
        mut r: ToolResult,
        args: &serde_json::Map<String, Value>,
    ) -> ToolResult {
        if r.stop != StopReason::ToolError {
            return r;
        }
        let Some(shown) = live.process.as_ref().and_then(|p| p.shown()) else {
            return r;
        };
        let policy = &self.server.sandbox;
        let said = r.text_content();
        if let Some(note) = crate::mcp::hidden::note(&self.server.name, policy, shown, args, &said)
        {
            r.content.push(Content::text(note));
        }
        r
    }

    /// Sends `request` (asked as `legacy` says) on `live` and waits for its reply until
    /// `deadline` (or the call's cancel: the server is then told).
    async fn exchange(
        &self,
        live: &Arc<Live>,
        request: ClientRequest,
        call: &ExecCall<'_>,
        deadline: Instant,
        legacy: Legacy,
    ) -> Reply {
        let name = call.tool.name();
        let peer = live.client.peer().clone();
        let handle = match peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(e) => return Reply::Lost(e),
        };
        let progress = call.progress.clone().map(|sink| {
            let key = (live.generation, handle.progress_token.clone());
            self.shared.register(key.clone(), sink);
            ProgressGuard {
                shared: self.shared.clone(),
                key,
            }
        });
        let id = handle.id.clone();
        tracing::Span::current().record("jsonrpc.request.id", id.to_string().as_str());
        match until(&call.cancel, deadline, handle.await_response()).await {
            Ok(Ok(ServerResult::InputRequiredResult(input))) => Reply::Input(input, progress),
            Ok(Ok(ServerResult::CreateTaskResult(task))) => Reply::Task(task, progress),
            Ok(Ok(ServerResult::CallToolResult(r)))
                if legacy == Legacy::Plain && legacy_task::result_wants_task(&r) =>
            {
                Reply::WantsTask(result_of(r))
            }
            Ok(Ok(ServerResult::CustomResult(c))) if legacy == Legacy::Task => {
                match LegacyTask::of(&c.0) {
                    Some(task) => Reply::LegacyTask(task, progress),
                    None => Reply::Done(self.answered(name, ServerResult::CustomResult(c))),
                }
            }
            Ok(Ok(response)) => Reply::Done(self.answered(name, response)),
            Ok(Err(rmcp::ServiceError::McpError(e)))
                if legacy == Legacy::Plain && legacy_task::wants_task(&e) =>
            {
                Reply::WantsTask(self.refused(name, &e))
            }
            Ok(Err(rmcp::ServiceError::McpError(e))) => Reply::Done(self.refused(name, &e)),
            Ok(Err(e)) => Reply::Lost(e),
            Err(why) => {
                cancel_request(&peer, id, &why).await;
                if matches!(why, Stop::Timeout) {
                    self.check_alive(live.clone());
                }
                Reply::Done(self.stopped_in_flight(name, call.timeout, deadline, why))
            }
        }
    }

    /// Round `rounds` of the server's questions (MCP 2026-07-28): answered through the
    /// host while the call's timeout stands still (within the stopper's pause budget);
    /// the answers to send back, or the result that ends the call.
    pub(super) async fn round(
        &self,
        call: &ExecCall<'_>,
        input: rmcp::model::InputRequiredResult,
        rounds: usize,
        stopper: &mut Stopper,
    ) -> Result<(rmcp::model::InputResponses, Option<String>), ToolResult> {
        let name = call.tool.name();
        if rounds > rmcp::model::DEFAULT_MRTR_MAX_ROUNDS {
            return Err(ToolResult::stopped(
                StopReason::ProtocolError,
                format!(
                    "tool `{name}`: MCP server `{}` asked for input {} times over; toolbind answers at most {} rounds",
                    self.name(),
                    rounds,
                    rmcp::model::DEFAULT_MRTR_MAX_ROUNDS
                ),
            ));
        }
        stopper.pause();
        let answers = tokio::select! {
            a = self.fulfil(name, call, input) => a,
            () = call.cancel.cancelled() => {
                return Err(self.stopped_waiting(name, call.timeout, Stop::Cancelled));
            }
        };
        stopper.resume();
        answers
    }

    /// A call stopped before its request was sent: waiting for a slot or the connection.
    pub(super) fn stopped_waiting(&self, name: &str, timeout: Duration, why: Stop) -> ToolResult {
        match why {
            Stop::Cancelled => ToolResult::stopped(
                StopReason::Cancelled,
                format!("tool `{name}` was cancelled before the server got it"),
            ),
            Stop::Timeout => ToolResult::stopped(
                StopReason::Timeout { after: timeout },
                format!(
                    "tool `{name}` timed out after {} s waiting for MCP server `{}`",
                    timeout.as_secs_f64(),
                    self.name()
                ),
            ),
        }
    }

    /// A call stopped while the server had it (and was sent `notifications/cancelled`).
    pub(super) fn stopped_in_flight(
        &self,
        name: &str,
        timeout: Duration,
        deadline: Instant,
        why: Stop,
    ) -> ToolResult {
        let what = match why {
            Stop::Cancelled => "was cancelled",
            Stop::Timeout => "timed out",
        };
        let mut r = self.stopped_waiting(name, timeout, why);
        if let Some(Content::Text { text }) = r.content.first_mut() {
            *text = format!(
                "tool `{name}` {what} after {:.1} s; MCP server `{}` was sent `notifications/cancelled`",
                timeout
                    .saturating_sub(deadline.saturating_duration_since(Instant::now()))
                    .as_secs_f64(),
                self.name()
            );
        }
        r
    }

    /// The result of a `tools/call` the server answered.
    pub(super) fn answered(&self, name: &str, response: ServerResult) -> ToolResult {
        match response {
            ServerResult::CallToolResult(r) => result_of(r),

            _ => ToolResult::stopped(
                StopReason::ProtocolError,
                format!(
                    "tool `{name}`: MCP server `{}` answered `tools/call` with another kind of result",
                    self.name()
                ),
            ),
        }
    }

    /// A `tools/call` the server answered with a JSON-RPC error.
    pub(super) fn refused(&self, name: &str, e: &rmcp::model::ErrorData) -> ToolResult {
        let stop = if e.code == rmcp::model::ErrorCode::INVALID_PARAMS {
            StopReason::BadArguments
        } else {
            StopReason::ToolError
        };
        ToolResult::stopped(
            stop,
            format!(
                "tool `{name}`: MCP server `{}` refused the call: {} (JSON-RPC error {})",
                self.name(),
                e.message,
                e.code.0
            ),
        )
    }

    /// A call whose connection broke: the result says how (the server's exit and last
    /// stderr lines), and the next call starts the server again.
    ///
    /// Over HTTP one request can fail while the session is fine (a 502 from a proxy, an
    /// answer over the bound): unless the transport closed, only that call fails.
    pub(super) async fn lost(
        &self,
        live: &Arc<Live>,
        name: &str,
        error: &rmcp::ServiceError,
    ) -> ToolResult {
        let closed = matches!(error, rmcp::ServiceError::TransportClosed);
        if live.process.is_none() && !closed && live.is_open() {
            return ToolResult::stopped(
                StopReason::Crashed,
                format!(
                    "tool `{name}`: the request to MCP server `{}` failed: {}",
                    self.name(),
                    error_text(error)
                ),
            );
        }
        let how = match live.over.message(self.server.max_message_bytes) {
            Some(m) => m,
            None => live.ended_how().await,
        };
        let note = match &live.process {
            Some(p) => p.stderr_note().await,
            None => String::new(),
        };
        let why = format!("{how} ({})", error_text(error));
        live.stop(&why);
        ToolResult::stopped(
            StopReason::Crashed,
            format!(
                "tool `{name}`: MCP server `{}` {why} before answering; it is started again for the next call{note}",
                self.name()
            ),
        )
    }
}

#[derive(Clone, Copy)]
pub(super) enum Stop {
    Cancelled,
    Timeout,
}

/// What became of a request sent to the server.
pub(super) enum Reply {
    /// The call's result (an answer, a refusal, or why it stopped).
    Done(ToolResult),
    /// The server asks for input first; the call's progress stays registered meanwhile.
    Input(rmcp::model::InputRequiredResult, Option<ProgressGuard>),
    /// The server runs the call as a task (MCP's tasks extension); the call's progress
    /// stays registered while it is followed.
    Task(rmcp::model::CreateTaskResult, Option<ProgressGuard>),
    /// The server refused a plain call of a tool that runs only as a task (MCP
    /// 2025-11-25): the refusal, for when it was asked as a task already.
    WantsTask(ToolResult),
    /// The server runs the call as a 2025-11-25 task.
    LegacyTask(LegacyTask, Option<ProgressGuard>),
    /// The connection failed under the request.
    Lost(rmcp::ServiceError),
}

/// How a call is asked of a server on MCP 2025-11-25, whose tasks the client requests
/// (`legacy_task.rs`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Legacy {
    /// Another revision: the server decides (2026-07-28), or there are no tasks.
    No,
    /// A plain call, which the server may refuse for want of a task.
    Plain,
    /// As a task.
    Task,
}

/// The `tools/call` request for `mcp_name` with `args`, and the answers to the server's
/// last round when there was one.
fn call_request(
    mcp_name: &str,
    args: serde_json::Map<String, Value>,
    answered: Option<&(rmcp::model::InputResponses, Option<String>)>,
    legacy: Legacy,
    lasts: Duration,
) -> ClientRequest {
    let mut request = CallToolRequestParams::new(mcp_name.to_owned()).with_arguments(args);
    if let Some((responses, state)) = answered {
        request = request.with_input_responses(responses.clone());
        if let Some(state) = state {
            request = request.with_request_state(state.clone());
        }
    }
    let request = crate::telemetry::with_trace_context(request);
    if legacy == Legacy::Task {
        return legacy_task::as_task(request, lasts);
    }
    ClientRequest::CallToolRequest(CallToolRequest::new(request))
}

/// `fut`, unless the call is cancelled or its deadline passes first.
pub(super) async fn until<F: Future>(
    cancel: &crate::CancelToken,
    deadline: Instant,
    fut: F,
) -> Result<F::Output, Stop> {
    tokio::select! {
        biased;
        out = fut => Ok(out),
        () = cancel.cancelled() => Err(Stop::Cancelled),
        () = tokio::time::sleep_until(deadline) => Err(Stop::Timeout),
    }
}

pub(super) async fn cancel_request(peer: &Peer<RoleClient>, id: RequestId, why: &Stop) {
    let reason = match why {
        Stop::Cancelled => "the caller cancelled the call",
        Stop::Timeout => "the call's timeout passed",
    };
    let n = ClientNotification::CancelledNotification(CancelledNotification::new(
        CancelledNotificationParam::new(Some(id), Some(reason.to_owned())),
    ));
    let _ = tokio::time::timeout(Duration::from_secs(2), peer.send_notification(n)).await;
}

/// A request's error in words, without rmcp's wrapper (which names Rust types).
pub(super) fn error_text(e: &rmcp::ServiceError) -> String {
    match e {
        rmcp::ServiceError::TransportSend(t) => crate::mcp::said::chain(&*t.error),
        rmcp::ServiceError::TransportClosed => "the connection closed".to_owned(),
        e => e.to_string(),
    }
}

/// A tool's answer as a [`ToolResult`]: its content blocks (one toolbind cannot represent
/// becomes a text note), `structuredContent` as `details`, `isError` as a tool error.
pub(super) fn result_of(r: CallToolResult) -> ToolResult {
    let content = r
        .content
        .into_iter()
        .map(|block| {
            let v = serde_json::to_value(&block).unwrap_or_default();
            serde_json::from_value::<Content>(v.clone()).unwrap_or_else(|_| {
                let kind = v.get("type").and_then(Value::as_str).unwrap_or("unknown");
                Content::text(format!(
                    "[a `{kind}` content block toolbind cannot represent]"
                ))
            })
        })
        .collect();
    let mut result = ToolResult::new(content);
    result.details = r.structured_content;
    if r.is_error == Some(true) {
        result = result.failed(StopReason::ToolError);
    }
    result
}
