//! A `tools/call` on MCP 2026-07-28 (see [`rounds`]): its first request starts the tool,
//! and each round runs until the tool ends or asks, its questions going out in an
//! `InputRequiredResult`.

use std::sync::Arc;
use std::time::Instant;

use rmcp::model::CallToolResponse;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::Value;
use toolbind::{CallOptions, Runtime};
use tracing::Instrument;

use crate::serve::listener::Listener;
use crate::serve::logging::log;
use crate::serve::{asking, logging, rounds, spills};

use super::call::request_span;
use super::results::{shut_down, to_mcp};
use super::{FLUSH, Server};

/// Detaches a round's request from its call when dropped.
struct Detach(Arc<Listener>);

impl Drop for Detach {
    fn drop(&mut self) {
        self.0.detach();
    }
}

impl Server {
    /// A retry of an MCP 2026-07-28 call (`sealed`: the `requestState` it got): its
    /// answers go to its waiting call, and its request to the call's next round.
    pub(super) async fn resume(
        &self,
        sealed: &str,
        name: &str,
        args: &Value,
        responses: std::collections::BTreeMap<String, Value>,
        meta: &rmcp::model::RequestMetaObject,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        #[allow(deprecated)]
        let request_level = logging::RequestLevel {
            level: context.meta.log_level(),
            per_request: true,
        };
        let mut forwarder = None;
        let call = self
            .state
            .rounds
            .redeem(sealed, name, args, responses, |call| {
                let (attached, task) =
                    call.listener
                        .request(context, self.logger.clone(), request_level);
                call.listener.attach(attached);
                forwarder = task;
            })?;
        log(&format!(
            "call {} of `{name}`: resumed by the client's answers (call {})",
            context.id,
            call.short_id()
        ));
        self.next_round(name, call, forwarder, request_level, context, meta)
            .await
    }

    /// The first request of an MCP 2026-07-28 call: the tool starts, in a task of its
    /// own that outlives the request should the tool ask (see [`rounds`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn first_round(
        &self,
        runtime: Arc<Runtime>,
        name: &str,
        args: Value,
        responses: std::collections::BTreeMap<String, Value>,
        slot: Option<tokio::sync::OwnedSemaphorePermit>,
        opts: CallOptions,
        request_level: logging::RequestLevel,
        meta: &rmcp::model::RequestMetaObject,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let call = rounds::Rounds::begin(name, &args, responses)?;
        // Progress and log lines go to the request of the round at hand: this one, then
        // each retry.
        let (attached, forwarder) =
            call.listener
                .request(context, self.logger.clone(), request_level);
        call.listener.attach(attached);
        let opts = call
            .listener
            .report(opts, name)
            .cancel(call.cancel.clone())
            .host(asking::Asking(asking::Via::Rounds {
                call: call.clone(),
                capabilities: context.client_capabilities(),
            }));
        let span = request_span(name, meta, context);
        let started = Instant::now();
        let (state, called, running) = (self.state.clone(), name.to_owned(), call.clone());
        let counted = self.state.rounds.runs();
        tokio::spawn(
            async move {
                let _counted = counted;
                let (result, shut) = state
                    .run_in_slot(runtime, &called, args, opts, slot, || {})
                    .await;
                let result = if shut { shut_down(result) } else { result };
                toolbind::telemetry::mcp_server_ended(
                    &tracing::Span::current(),
                    &called,
                    &result,
                    started,
                );
                running.finish(result);
            }
            .instrument(span),
        );
        self.round(name, &call, forwarder, context, request_level)
            .await
    }

    /// A retry of an MCP 2026-07-28 call, its answers delivered (and its request attached
    /// to the call, with `forwarder` sending its progress): on to the call's end or its
    /// next questions.
    pub(super) async fn next_round(
        &self,
        name: &str,
        call: Arc<rounds::Call>,
        forwarder: Option<tokio::task::JoinHandle<()>>,
        request_level: logging::RequestLevel,
        context: &RequestContext<RoleServer>,
        meta: &rmcp::model::RequestMetaObject,
    ) -> Result<CallToolResponse, McpError> {
        self.round(name, &call, forwarder, context, request_level)
            .instrument(request_span(name, meta, context))
            .await
    }

    /// Drives `call` until it ends or asks; the client's cancel and the server's end stop
    /// it.
    async fn drive(
        &self,
        call: &Arc<rounds::Call>,
        context: &RequestContext<RoleServer>,
    ) -> Result<rounds::Turn, McpError> {
        let (ct, shutdown, id) = (
            context.ct.clone(),
            self.state.shutdown.clone(),
            context.id.clone(),
        );
        let stop = async move {
            tokio::select! {
                () = ct.cancelled() => log(&format!("call {id}: cancelled by the client")),
                () = shutdown.cancelled() => log(&format!("call {id}: stopped, the server is shutting down")),
            }
        };
        self.state.rounds.drive(call, stop).await
    }

    /// One round of `call`, for the request of `context` (attached to the call, its
    /// progress sent by `forwarder`): on until the tool ends or asks, then its result or
    /// its questions. The request is detached first, and, as a plain call's, the rest of
    /// its progress goes before the answer (for at most a second): what the tool reports
    /// after that is the retry's.
    async fn round(
        &self,
        name: &str,
        call: &Arc<rounds::Call>,
        forwarder: Option<tokio::task::JoinHandle<()>>,
        context: &RequestContext<RoleServer>,
        request_level: logging::RequestLevel,
    ) -> Result<CallToolResponse, McpError> {
        let started = Instant::now();
        // Detached however this ends (should the request's future be dropped).
        let _detach = Detach(call.listener.clone());
        let turn = self.drive(call, context).await;
        let logged = call.listener.let_go(forwarder).await;
        match turn? {
            rounds::Turn::Done(result) => {
                let stopped = context.ct.is_cancelled() || self.state.shutdown.is_cancelled();
                let reported = self.report(context, name, &result, stopped, started, request_level);
                if logged || reported {
                    self.logger.flush(FLUSH).await;
                }
                Ok(to_mcp(result, &self.state, spills::owner(context).as_deref()).into())
            }
            rounds::Turn::Input(input) => {
                log(&format!(
                    "call {} of `{name}`: waits for the client's answers to {} (call {}, --pending-ttl {} s)",
                    context.id,
                    input
                        .input_requests
                        .as_ref()
                        .map(|r| r.keys().cloned().collect::<Vec<_>>().join(", "))
                        .unwrap_or_default(),
                    call.short_id(),
                    self.state.rounds.ttl().as_secs(),
                ));
                if logged {
                    self.logger.flush(FLUSH).await;
                }
                Ok(CallToolResponse::InputRequired(input))
            }
        }
    }
}

/// A request's `inputResponses` (MCP 2026-07-28): each must be an object, the client's
/// result for the input request of its key; -32602 otherwise.
pub(super) fn input_responses(
    responses: Option<rmcp::model::InputResponses>,
) -> Result<std::collections::BTreeMap<String, Value>, McpError> {
    let responses = responses.unwrap_or_default();
    for (key, value) in &responses {
        if !value.is_object() {
            return Err(McpError::invalid_params(
                format!(
                    "inputResponses.{key} must be an object (the client's result for that input request), not {}",
                    toolbind_codegen::mcp::json_kind(value)
                ),
                None,
            ));
        }
    }
    Ok(responses)
}
