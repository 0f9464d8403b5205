//! The pieces of one `tools/call`: its slot and run, its host, its report line, the
//! capabilities it needs, and its trace span.

use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{CallToolResult, ErrorCode};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::Value;
use toolbind::{CallOptions, Runtime};
use tracing::Instrument;

use crate::serve::listener::Listener;
use crate::serve::logging::log;
use crate::serve::{asking, logging, spills};

use super::FLUSH;
use super::Server;
use super::results::{shut_down, to_mcp};

impl Server {
    /// The call's place among `--max-concurrent-calls`, taken now over HTTP, where a call
    /// does not queue (the transport refuses one past the limit with 429): tasks can
    /// still hold every slot, and then the call is refused here. `None` over stdio: the
    /// call waits for its slot when it runs.
    pub(super) fn slot(
        &self,
        name: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<tokio::sync::OwnedSemaphorePermit>, McpError> {
        if self.state.queue_calls {
            return Ok(None);
        }
        match self.state.calls.clone().try_acquire_owned() {
            Ok(p) => Ok(Some(p)),
            Err(_) => {
                log(&format!(
                    "refused call {} of `{name}`: every one of --max-concurrent-calls is taken (tasks included)",
                    context.id
                ));
                Err(McpError::new(
                    ErrorCode(-32000),
                    "too many tool calls: every one this server runs at once is taken, by calls or tasks (toolbind serve --max-concurrent-calls); retry later",
                    None,
                ))
            }
        }
    }

    /// A call that is neither a task nor in rounds: run in its slot, its progress and log
    /// lines sent to its request, reported, and answered once its last lines went out.
    #[allow(clippy::too_many_arguments)] // one request's parts, as `first_round` takes them
    pub(super) async fn plain_call(
        &self,
        runtime: Arc<Runtime>,
        name: &str,
        args: Value,
        slot: Option<tokio::sync::OwnedSemaphorePermit>,
        opts: CallOptions,
        request_level: logging::RequestLevel,
        meta: &rmcp::model::RequestMetaObject,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let listener = Arc::new(Listener::default());
        let (attached, forwarder) = listener.request(context, self.logger.clone(), request_level);
        listener.attach(attached);
        let opts = listener
            .report(opts, name)
            .host(self.asker(context, request_level));
        let span = request_span(name, meta, context);
        let started = Instant::now();
        let (result, stopped) = self
            .run_call(runtime, name, args, opts, slot, context)
            .instrument(span.clone())
            .await;
        toolbind::telemetry::mcp_server_ended(&span, name, &result, started);
        // No progress follows the result.
        let logged = listener.let_go(forwarder).await;
        let reported = self.report(context, name, &result, stopped, started, request_level);
        if reported || logged {
            // Its last lines before its answer (over HTTP, its stream ends with it).
            self.logger.flush(FLUSH).await;
        }
        to_mcp(result, &self.state, spills::owner(context).as_deref())
    }

    /// Runs the call once one of `--max-concurrent-calls` is free, stopping it when the
    /// client cancels or the server shuts down. Returns the result and whether it was
    /// stopped so.
    pub(super) async fn run_call(
        &self,
        runtime: Arc<Runtime>,
        name: &str,
        args: Value,
        opts: CallOptions,
        slot: Option<tokio::sync::OwnedSemaphorePermit>,
        context: &RequestContext<RoleServer>,
    ) -> (toolbind::ToolResult, bool) {
        let cancel = opts.get_cancel().clone();
        let call = self
            .state
            .run_in_slot(runtime, name, args, opts, slot, || {});
        tokio::pin!(call);
        let (r, shut) = tokio::select! {
            r = &mut call => r,
            _ = context.ct.cancelled() => {
                log(&format!("call {} of `{name}`: cancelled by the client", context.id));
                cancel.cancel();
                return (call.await.0, true);
            }
        };
        if shut {
            log(&format!(
                "call {} of `{name}`: stopped, the server is shutting down (--drain-timeout)",
                context.id
            ));
            return (shut_down(r), true);
        }
        (r, false)
    }

    /// The host of a `tools/call`: its client, where it can be asked (see [`asking`]).
    pub(super) fn asker(
        &self,
        context: &RequestContext<RoleServer>,
        level: logging::RequestLevel,
    ) -> asking::Asking {
        asking::Asking(if !self.state.subscriptions {
            asking::Via::Nobody(
                "this server is stateless (toolbind serve --stateless) and cannot receive a client's answer".into(),
            )
        } else {
            asking::Via::Client {
                peer: context.peer.clone(),
                request: context.id.clone(),
                logger: self.logger.clone(),
                level,
            }
        })
    }

    /// The call's one line on stderr, and as a `notifications/message` from `toolbind`
    /// (Warning for an error, Debug otherwise) where the request's level allows it.
    pub(super) fn report(
        &self,
        context: &RequestContext<RoleServer>,
        name: &str,
        result: &toolbind::ToolResult,
        stopped: bool,
        started: Instant,
        request_level: logging::RequestLevel,
    ) -> bool {
        let event = format!(
            "call {} of `{name}`: {} in {:.1} s",
            context.id,
            if stopped {
                "stopped"
            } else if result.is_error {
                "error"
            } else {
                "ok"
            },
            started.elapsed().as_secs_f64()
        );
        log(&event);
        #[allow(deprecated)]
        {
            use rmcp::model::LoggingLevel;
            let level = if result.is_error {
                LoggingLevel::Warning
            } else {
                LoggingLevel::Debug
            };
            let enabled = self.logger.enabled(level, request_level);
            if enabled {
                self.logger
                    .log(&context.peer, level, "toolbind", Value::String(event));
            }
            enabled
        }
    }
}

/// Refuses, with -32021 and `requiredCapabilities`, a call of a tool whose TOOL.md says
/// `asks:` a question the client did not declare it can be asked (at `initialize`, or in
/// the request's `_meta` on MCP 2026-07-28), before the tool runs.
pub(super) fn can_be_asked(
    runtime: &Runtime,
    name: &str,
    context: &RequestContext<RoleServer>,
) -> Result<(), McpError> {
    let Some(info) = runtime.registry().get(name) else {
        return Ok(());
    };
    if info.spec().asks.is_empty() {
        return Ok(());
    }
    let caps = context.client_capabilities();
    let missing: Vec<_> = info
        .spec()
        .asks
        .iter()
        .copied()
        .filter(|a| !asking::declares(caps.as_ref(), *a))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let required: serde_json::Map<String, Value> = missing
        .iter()
        .map(|a| (a.as_str().to_owned(), serde_json::json!({})))
        .collect();
    let names: Vec<_> = missing.iter().map(|a| a.as_str()).collect();
    Err(McpError::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "`{name}` asks its client questions it cannot do without (its TOOL.md says `asks:`): declare the client capabilit{} {}",
            if names.len() == 1 { "y" } else { "ies" },
            names.join(", ")
        ),
        Some(serde_json::json!({ "requiredCapabilities": required })),
    ))
}

/// The span of a `tools/call` request, continuing the client's trace: the request's
/// `_meta.traceparent` (2026-07-28, SEP-414), else the HTTP request's `traceparent` header.
pub(super) fn request_span(
    tool: &str,
    meta: &rmcp::model::RequestMetaObject,
    context: &RequestContext<RoleServer>,
) -> tracing::Span {
    let http = context
        .extensions
        .get::<hyper::http::request::Parts>()
        .map(|p| &p.headers);
    let protocol = context
        .protocol_version()
        .map(|v| v.as_str().to_owned())
        .unwrap_or_default();
    let span = toolbind::telemetry::mcp_server_span(
        tool,
        &context.id.to_string(),
        &protocol,
        if http.is_some() { "tcp" } else { "pipe" },
    );
    let header = |name: &str| {
        http.and_then(|h| h.get(name))
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let from_meta = meta
        .get_traceparent()
        .map(|t| toolbind::telemetry::TraceContext {
            traceparent: t.to_owned(),
            tracestate: meta.get_tracestate().map(str::to_owned),
        });
    let from_header = || {
        Some(toolbind::telemetry::TraceContext {
            traceparent: header("traceparent")?,
            tracestate: header("tracestate"),
        })
    };
    if let Some(tc) = from_meta.or_else(from_header) {
        toolbind::telemetry::continue_trace(&span, &tc);
    }
    span
}
