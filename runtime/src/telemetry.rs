//! Every tool call traced, by the OpenTelemetry GenAI and MCP semantic conventions.
//!
//! The runtime opens one [`tracing`] span per call, `execute_tool` (its OpenTelemetry name
//! `execute_tool {gen_ai.tool.name}`, kind INTERNAL), with `gen_ai.operation.name`,
//! `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type` (`function` for a
//! tools-folder tool, `extension` for an MCP server's) and `gen_ai.tool.description`;
//! `error.type` is the call's [`StopReason::kind`] when it did not complete. A call to an
//! MCP server's tool has a child span `tools/call {tool}` (kind CLIENT) with
//! `mcp.method.name`, `jsonrpc.request.id`, `mcp.protocol.version` and `network.transport`
//! (`pipe` for stdio, `tcp` for HTTP). Inside rig's own `execute_tool` span for the same
//! call (the rig adapter), toolbind opens none of its own and leaves rig's span as rig
//! fills it (rig records the arguments itself, unredacted, when its own content recording
//! is on). toolbind's own span also says how the tool's process was had
//! (`toolbind.process`: `bash`, `oneshot_spare`, `oneshot_started`, `warm_reused`,
//! `warm`) and whether it ran in the jail (`toolbind.sandbox`). The checks of a model's
//! arguments are a child span `validate_arguments` at DEBUG level, for a subscriber of
//! your own (`init` (feature `otel`) exports INFO: a span per call costs more
//! than the checks it would time).
//!
//! The arguments and the result (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`)
//! are recorded only when asked ([`RuntimeBuilder::record_content`](crate::runtime::RuntimeBuilder::record_content),
//! or `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`), and then after the
//! call's redactor: a sensitive input's value never appears, and binary content is
//! recorded as `{type, mimeType, size}`, never its bytes.
//!
//! Without a subscriber these spans cost a branch each. With feature `otel`,
//! `init` (feature `otel`) exports them, and the duration metrics, over OTLP.

use std::time::Instant;

use serde_json::{Map, Value};
use tracing::Span;
use tracing::field::Empty;

use crate::result::{Content, StopReason, ToolResult};
use crate::tool::ToolInfo;

#[cfg(feature = "otel")]
mod otel;
#[cfg(feature = "otel")]
#[doc(hidden)]
pub use otel::unexported_layer;
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub use otel::{FLUSH_LIMIT, Guard, InitError, init, layer};

/// Says `line` (a whole `toolbind: warning: ...` line) as a WARN event of target
/// `toolbind` when the program's `tracing` subscriber takes it, else on stderr as before:
/// a library's warnings reach a program with no subscriber (or one that filters them
/// out), and follow the subscriber's rules in one that takes them.
pub(crate) fn warn(line: &str) {
    // `parent: None`: a warning may quote a tool's values; it is not part of a call's span
    // (an exported span event) unless content recording says so.
    if taken(tracing::enabled!(target: "toolbind", tracing::Level::WARN)) {
        tracing::warn!(target: "toolbind", parent: None, "{line}");
    } else {
        // It may quote a tool's or a server's text: escaped for the terminal.
        eprintln!("{}", crate::untrusted::terminal(line));
    }
}

/// Whether a warning or note goes to the subscriber (`enabled`: whether it takes it): with
/// [`stderr_layer`] installed, its `RUST_LOG` decides, silence included; with another
/// subscriber, one that does not take it (an `EnvFilter` left at its ERROR default, an
/// export-only one) leaves it to stderr, where it always went.
fn taken(enabled: bool) -> bool {
    tracing::dispatcher::has_been_set()
        && (enabled || STDERR_LAYER.load(std::sync::atomic::Ordering::Relaxed))
}

/// Set once [`stderr_layer`] has made a layer.
static STDERR_LAYER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// [`warn`] for a note: an INFO event.
#[cfg(feature = "mcp")]
pub(crate) fn note(line: &str) {
    if taken(tracing::enabled!(target: "toolbind", tracing::Level::INFO)) {
        tracing::info!(target: "toolbind", parent: None, "{line}");
    } else {
        eprintln!("{}", crate::untrusted::terminal(line));
    }
}

/// A `tracing` layer that prints toolbind's warnings and notes on stderr as the lines they
/// are (`toolbind: warning: ...`), byte for byte what a program without a subscriber
/// gets, filtered by `RUST_LOG` (`target=level` directives, e.g. `toolbind=warn`;
/// default `toolbind=info`: warnings and notes, nothing of other crates; a `RUST_LOG`
/// that names neither toolbind nor a default level keeps `toolbind=info`). The CLI's
/// stderr, and `init` (feature `otel`)'s.
pub fn stderr_layer<S>() -> impl tracing_subscriber::Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    use std::str::FromStr;
    use tracing_subscriber::filter::Targets;
    STDERR_LAYER.store(true, std::sync::atomic::Ordering::Relaxed);
    let default = || Targets::new().with_target("toolbind", tracing::Level::INFO);
    let filter = match std::env::var("RUST_LOG") {
        Ok(v) if !v.trim().is_empty() => match Targets::from_str(&v) {
            // A RUST_LOG for other crates (`myapp=debug`) keeps toolbind's warnings and
            // notes: only a directive naming toolbind, or a default level, changes them.
            Ok(t) if !v.contains("toolbind") && v.split(',').all(|d| d.contains('=')) => {
                t.with_target("toolbind", tracing::Level::INFO)
            }
            Ok(t) => t,
            Err(e) => {
                eprintln!(
                    "toolbind: warning: RUST_LOG={v} is not a list of target=level directives ({e}): using toolbind=info"
                );
                default()
            }
        },
        _ => default(),
    };
    // rmcp's OAuth code logs the authorization code (and an OpenID `id_token`) at debug
    // level: never below info here, whatever RUST_LOG asks.
    let filter = filter.with_target("rmcp::transport::auth", tracing::Level::INFO);
    use tracing_subscriber::filter::FilterExt;
    // Events only: no per-span work for this layer.
    let events = tracing_subscriber::filter::filter_fn(|m| m.is_event());
    tracing_subscriber::Layer::with_filter(Lines, filter.and(events))
}

/// Prints each event on stderr: toolbind's as the line it is, another crate's (when
/// `RUST_LOG` asks for it) as `LEVEL target: message field=value ...`.
struct Lines;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Lines {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        #[derive(Default)]
        struct Text {
            message: String,
            fields: String,
        }
        impl tracing::field::Visit for Text {
            fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
                if field.name() == "message" {
                    self.message.push_str(value);
                } else {
                    self.record_debug(field, &value);
                }
            }
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                use std::fmt::Write;
                let _ = if field.name() == "message" {
                    write!(self.message, "{value:?}")
                } else {
                    write!(self.fields, " {}={value:?}", field.name())
                };
            }
        }
        let mut text = Text::default();
        event.record(&mut text);
        let meta = event.metadata();
        // A warning may quote a tool's or a server's text: escaped for the terminal.
        let (message, fields) = (
            crate::untrusted::terminal(&text.message),
            crate::untrusted::terminal(&text.fields),
        );
        if meta.target() == "toolbind" || meta.target().starts_with("toolbind::") {
            eprintln!("{message}{fields}");
        } else {
            eprintln!("{} {}: {message}{fields}", meta.level(), meta.target());
        }
    }
}

/// The span name every call's span has, toolbind's and rig's alike.
const EXECUTE_TOOL: &str = "execute_tool";

/// Whether `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` asks for arguments and
/// results on the spans (the variable the GenAI instrumentations share).
pub(crate) fn content_from_env() -> bool {
    std::env::var("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
        .is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// One call's span and when it started.
pub(crate) struct CallSpan {
    span: Span,
    started: Instant,
    tool: String,
}

impl CallSpan {
    /// The span of a call of tool `name` (`tool`: the loaded tool, when there is one) with
    /// id `call_id`: rig's own `execute_tool` span when the call runs inside one, else a
    /// new one.
    pub(crate) fn open(name: &str, tool: Option<&ToolInfo>, call_id: &str) -> CallSpan {
        let current = Span::current();
        let span = if current
            .metadata()
            .is_some_and(|m| m.name() == EXECUTE_TOOL && m.target() != "toolbind")
        {
            // rig's span for this call: it sets its own attributes (an exported attribute
            // recorded twice is exported twice); what it does not declare is dropped.
            current
        } else {
            tracing::info_span!(
                target: "toolbind",
                "execute_tool",
                otel.name = %format_args!("execute_tool {name}"),
                otel.kind = "internal",
                otel.status_code = Empty,
                gen_ai.operation.name = "execute_tool",
                gen_ai.tool.name = name,
                gen_ai.tool.call.id = call_id,
                gen_ai.tool.type = tool.map(tool_type),
                gen_ai.tool.description = tool.map(|t| t.spec().description.as_str()),
                gen_ai.tool.call.arguments = Empty,
                gen_ai.tool.call.result = Empty,
                error.type = Empty,
                toolbind.process = Empty,
                toolbind.sandbox = Empty,
            )
        };
        CallSpan {
            span,
            started: Instant::now(),
            // A name no tool has (the model's typo) is not a metric series of its own.
            tool: if tool.is_some() { name } else { "_OTHER" }.to_owned(),
        }
    }

    pub(crate) fn span(&self) -> &Span {
        &self.span
    }

    /// Records how the call ended (and, with `content`, its result) and its duration.
    pub(crate) fn end(self, result: &ToolResult, content: bool) {
        let failed = result.is_error || result.stop != StopReason::Completed;
        if failed {
            self.span.record("error.type", result.stop.kind());
            self.span.record("otel.status_code", "ERROR");
        }
        if content {
            self.span
                .record("gen_ai.tool.call.result", result_json(result).as_str());
        }
        #[cfg(feature = "otel")]
        otel::record_tool_duration(
            &self.tool,
            self.started.elapsed(),
            failed.then(|| result.stop.kind()),
        );
        #[cfg(not(feature = "otel"))]
        let _ = (&self.tool, self.started);
    }
}

/// Records on the call's span how its process was had (`bash`: one per call;
/// `oneshot_spare` / `oneshot_started`; `warm_reused`, or `warm`: a worker just started
/// for it or by a call that got there first) and whether it runs in the jail.
pub(crate) fn note_process(span: &Span, how: &'static str, jailed: bool) {
    span.record("toolbind.process", how);
    span.record("toolbind.sandbox", if jailed { "jailed" } else { "off" });
}

/// Records a call's validated arguments on its span: every sensitive input's
/// value replaced, at any depth, then what is left passed through the call's redactor (a
/// secret the model copied into another argument).
pub(crate) fn record_arguments(
    span: &Span,
    tool: &ToolInfo,
    params: &Map<String, Value>,
    redactor: &crate::secret::Redactor,
) {
    let shown = crate::sensitive::redact(tool.spec(), params);
    let text = redactor.text(&Value::Object(shown).to_string());
    span.record("gen_ai.tool.call.arguments", text.as_str());
}

fn tool_type(tool: &ToolInfo) -> &'static str {
    #[cfg(feature = "mcp")]
    if tool.spec().mcp.is_some() {
        return "extension";
    }
    let _ = tool;
    "function"
}

/// The result as JSON for a span: its text blocks as they are (already redacted), each
/// binary block as `{type, mimeType, size}` only.
fn result_json(result: &ToolResult) -> String {
    // base64: 3 bytes per 4 characters.
    let size = |b64: &str| b64.trim_end_matches('=').len() * 3 / 4;
    let blocks: Vec<Value> = result
        .content
        .iter()
        .map(|c| match c {
            Content::Image { data, mime_type } => {
                serde_json::json!({"type": "image", "mimeType": mime_type, "size": size(data)})
            }
            Content::Audio { data, mime_type } => {
                serde_json::json!({"type": "audio", "mimeType": mime_type, "size": size(data)})
            }
            Content::Resource { resource } => match &resource.contents {
                crate::result::ResourceContents::Blob { blob } => serde_json::json!({
                    "type": "resource", "uri": resource.uri,
                    "mimeType": resource.mime_type, "size": size(blob),
                }),
                _ => serde_json::to_value(c).unwrap_or(Value::Null),
            },
            // Text and links carry no bytes of their own.
            _ => serde_json::to_value(c).unwrap_or(Value::Null),
        })
        .collect();
    let mut out = serde_json::json!({"content": blocks, "isError": result.is_error});
    if let Some(d) = &result.details {
        out["details"] = d.clone();
    }
    out.to_string()
}

/// The span of one `tools/call` request to an MCP server (kind CLIENT), a child of the
/// call's span; its request id is recorded once sent.
#[cfg(feature = "mcp")]
pub(crate) fn mcp_client_span(tool: &str, transport: &str) -> Span {
    mcp_span("client", tool, None, None, transport)
}

fn mcp_span(
    kind: &'static str,
    tool: &str,
    request_id: Option<&str>,
    protocol: Option<&str>,
    transport: &str,
) -> Span {
    tracing::info_span!(
        target: "toolbind",
        "tools/call",
        otel.name = %format_args!("tools/call {tool}"),
        otel.kind = kind,
        otel.status_code = Empty,
        mcp.method.name = "tools/call",
        gen_ai.tool.name = tool,
        gen_ai.operation.name = "execute_tool",
        jsonrpc.request.id = request_id,
        mcp.protocol.version = protocol,
        network.transport = transport,
        error.type = Empty,
    )
}

/// Records how an MCP `tools/call` ended on its span, and its duration.
#[cfg(feature = "mcp")]
pub(crate) fn mcp_client_ended(span: &Span, tool: &str, result: &ToolResult, started: Instant) {
    mcp_ended("mcp.client.operation.duration", span, tool, result, started);
}

fn mcp_ended(metric: &'static str, span: &Span, tool: &str, result: &ToolResult, started: Instant) {
    let failed = result.is_error || result.stop != StopReason::Completed;
    if failed {
        span.record("error.type", result.stop.kind());
        span.record("otel.status_code", "ERROR");
    }
    #[cfg(feature = "otel")]
    otel::record_mcp_duration(
        metric,
        tool,
        started.elapsed(),
        failed.then(|| result.stop.kind()),
    );
    #[cfg(not(feature = "otel"))]
    let _ = (metric, tool, started);
}

/// The span of one `tools/call` request `toolbind serve` answers (kind SERVER): the
/// CLI's, here so that the names stay in one place.
#[doc(hidden)]
pub fn mcp_server_span(tool: &str, request_id: &str, protocol: &str, transport: &str) -> Span {
    mcp_span("server", tool, Some(request_id), Some(protocol), transport)
}

/// Records how a served `tools/call` ended on its span, and its duration.
#[doc(hidden)]
pub fn mcp_server_ended(span: &Span, tool: &str, result: &ToolResult, started: Instant) {
    mcp_ended("mcp.server.operation.duration", span, tool, result, started);
}

/// A W3C trace context: where a call's span sits in its trace, for what the call starts
/// (a tool process, an MCP request) to continue it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    /// `traceparent`: `00-<trace id>-<span id>-<flags>`.
    pub traceparent: String,
    /// `tracestate`, when the trace carries one.
    pub tracestate: Option<String>,
}

/// The trace context of the current span, when spans are exported (feature `otel`, with
/// an OpenTelemetry layer in the subscriber); `None` otherwise.
pub fn current() -> Option<TraceContext> {
    context_of(&Span::current())
}

/// The trace context of `span`, as [`current`] gives the current span's.
pub(crate) fn context_of(span: &Span) -> Option<TraceContext> {
    #[cfg(feature = "otel")]
    return otel::context_of(span);
    #[cfg(not(feature = "otel"))]
    {
        let _ = span;
        None
    }
}

/// Makes `span` continue the trace of `context` (a `traceparent` and `tracestate` an MCP
/// request or an HTTP request carried). Without feature `otel`, or with a malformed
/// `traceparent`, nothing changes.
pub fn continue_trace(span: &Span, context: &TraceContext) {
    #[cfg(feature = "otel")]
    otel::set_parent(span, context);
    #[cfg(not(feature = "otel"))]
    let _ = (span, context);
}

/// `params` with the current trace context in its `_meta` (`traceparent`, `tracestate`).
#[cfg(feature = "mcp")]
pub(crate) fn with_trace_context(
    mut params: rmcp::model::CallToolRequestParams,
) -> rmcp::model::CallToolRequestParams {
    use rmcp::model::RequestParamsMeta;
    if let Some(tc) = current() {
        params.set_traceparent(&tc.traceparent);
        if let Some(state) = &tc.tracestate {
            params.set_tracestate(state);
        }
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_blocks_are_recorded_by_type_mime_and_size_only() {
        let r = ToolResult::new(vec![
            Content::text("hi"),
            Content::Image {
                data: "aGVsbG8gd29ybGQ=".into(),
                mime_type: "image/png".into(),
            },
        ]);
        let json: Value = serde_json::from_str(&result_json(&r)).unwrap();
        assert_eq!(json["content"][0]["text"], "hi");
        assert_eq!(
            json["content"][1],
            serde_json::json!({"type": "image", "mimeType": "image/png", "size": 11})
        );
        assert!(!result_json(&r).contains("aGVsbG8"));
    }
}
