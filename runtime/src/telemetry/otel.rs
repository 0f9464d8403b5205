//! Feature `otel`: the calls' spans and duration metrics exported over OTLP.

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::Histogram;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use super::TraceContext;

/// How long [`Guard`]'s drop waits for the last spans and metrics to go out.
pub const FLUSH_LIMIT: Duration = Duration::from_secs(1);

/// Spans waiting for export, at most; one more is dropped (and counted once, in a
/// warning the SDK logs), so a collector that is down never grows memory or slows a call.
const MAX_QUEUED_SPANS: usize = 2048;

/// Why [`init`] could not set up export.
#[derive(Debug)]
pub struct InitError(String);

impl fmt::Display for InitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InitError {}

/// Keeps export running; dropping it sends what is left, waiting at most [`FLUSH_LIMIT`]
/// (then the rest is dropped, with one warning on stderr).
#[must_use = "export stops when the guard is dropped"]
pub struct Guard {
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
}

impl fmt::Debug for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guard").finish_non_exhaustive()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let (tracer, meter) = (self.tracer.clone(), self.meter.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        // The SDK's shutdowns block (the meter's for a fixed 5 s when the collector does
        // not answer): they run on a thread of their own, waited for at most FLUSH_LIMIT.
        std::thread::spawn(move || {
            let traces = tracer.shutdown_with_timeout(FLUSH_LIMIT);
            let metrics = meter.shutdown();
            let _ = tx.send(traces.is_ok() && metrics.is_ok());
        });
        match rx.recv_timeout(FLUSH_LIMIT + Duration::from_millis(100)) {
            Ok(true) => {}
            Ok(false) | Err(_) => eprintln!(
                "toolbind: warning: the OpenTelemetry collector did not take the last spans and metrics within {} s: they were dropped",
                FLUSH_LIMIT.as_secs()
            ),
        }
    }
}

/// Sets up export of toolbind's spans (and rig's `execute_tool` spans) and duration
/// metrics over OTLP, HTTP/protobuf, as the standard variables say:
/// `OTEL_EXPORTER_OTLP_ENDPOINT` (default `http://localhost:4318`; `/v1/traces` and
/// `/v1/metrics` are added) or the per-signal `..._TRACES_ENDPOINT` /
/// `..._METRICS_ENDPOINT` (used as given), `OTEL_EXPORTER_OTLP_HEADERS`,
/// `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_SERVICE_NAME` (default `toolbind`),
/// `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*`, `OTEL_METRIC_EXPORT_INTERVAL`. An `https`
/// endpoint works (rustls with ring, the platform's roots). `OTEL_SDK_DISABLED=true`:
/// nothing is set up, `Ok(None)`. Another `OTEL_EXPORTER_OTLP_PROTOCOL` than
/// `http/protobuf` gets one warning and HTTP/protobuf.
///
/// Installs the global `tracing` subscriber (an error when the program already set one:
/// then add [`layer`]'s layer to yours instead), with
/// [`stderr_layer`](super::stderr_layer) for toolbind's warnings, and the global meter
/// provider. Keep the guard for as long as the program runs:
///
/// ```no_run
/// # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let _telemetry = toolbind::telemetry::init()?;
/// // ... build the runtime and call tools: every call is a span.
/// # Ok(()) }
/// ```
pub fn init() -> Result<Option<Guard>, InitError> {
    if disabled() {
        return Ok(None);
    }
    let (guard, layer) = providers()?;
    tracing_subscriber::registry()
        .with(layer)
        .with(super::stderr_layer())
        .try_init()
        .map_err(|e| InitError(format!("cannot install the tracing subscriber: {e}")))?;
    Ok(Some(guard))
}

/// The same export as [`init`], for a program with a `tracing` subscriber of its own:
/// the guard, and the layer to add to it (it passes on toolbind's and rig's spans only).
pub fn layer<S>() -> Result<Option<(Guard, impl tracing_subscriber::Layer<S>)>, InitError>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    if disabled() {
        return Ok(None);
    }
    providers().map(Some)
}

fn disabled() -> bool {
    std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

fn providers<S>() -> Result<(Guard, impl tracing_subscriber::Layer<S>), InitError>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    for var in [
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
    ] {
        if let Ok(v) = std::env::var(var)
            && !v.is_empty()
            && v != "http/protobuf"
        {
            eprintln!(
                "toolbind: warning: {var}={v} is not supported: toolbind exports over http/protobuf"
            );
        }
    }
    // reqwest is built without a crypto provider of its own (no aws-lc): ring's, unless
    // the program installed one already.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let failed = |what: &str| {
        let what = what.to_owned();
        move |e: opentelemetry_otlp::ExporterBuildError| {
            InitError(format!("cannot build the OTLP {what} exporter: {e}"))
        }
    };
    let spans = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .build()
        .map_err(failed("span"))?;
    let metrics = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .build()
        .map_err(failed("metric"))?;
    let mut resource = opentelemetry_sdk::Resource::builder();
    // A service name in code would override the variable's: only when it is unset.
    if std::env::var("OTEL_SERVICE_NAME").map_or(true, |v| v.is_empty()) {
        resource = resource.with_service_name("toolbind");
    }
    let resource = resource.build();
    let batch = BatchSpanProcessor::builder(spans)
        .with_batch_config(
            BatchConfigBuilder::default()
                .with_max_queue_size(MAX_QUEUED_SPANS)
                .build(),
        )
        .build();
    let tracer = SdkTracerProvider::builder()
        .with_span_processor(batch)
        .with_resource(resource.clone())
        .build();
    let meter = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics).build())
        .with_resource(resource)
        .build();
    opentelemetry::global::set_meter_provider(meter.clone());
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let targets = tracing_subscriber::filter::Targets::new()
        .with_target("toolbind", tracing::Level::INFO)
        .with_target("rig_agent", tracing::Level::INFO);
    // Per-call cost (BENCHMARKS.md): no source location, thread, level or target
    // attributes, no busy/idle timing on every poll, no OpenTelemetry context activated on
    // every enter (`current` reads the span's own).
    let otel = tracing_opentelemetry::layer()
        .with_tracer(tracer.tracer("toolbind"))
        .with_location(false)
        .with_threads(false)
        .with_level(false)
        .with_target(false)
        .with_tracked_inactivity(false)
        .with_context_activation(false);
    let layer = tracing_subscriber::Layer::with_filter(otel, targets);
    Ok((Guard { tracer, meter }, layer))
}

/// The current span's trace context, when it is sampled into an OpenTelemetry trace.
pub(super) fn current() -> Option<TraceContext> {
    let cx = Span::current().context();
    let span = cx.span();
    let sc = span.span_context();
    if !sc.is_valid() {
        return None;
    }
    // W3C trace context version 00, written directly (the propagator's carrier map costs
    // allocations on every call).
    let state = sc.trace_state().header();
    Some(TraceContext {
        traceparent: format!(
            "00-{}-{}-{:02x}",
            sc.trace_id(),
            sc.span_id(),
            sc.trace_flags().to_u8()
        ),
        tracestate: (!state.is_empty()).then_some(state),
    })
}

/// Makes `span` (not entered yet) a child of the span `context` names.
pub(super) fn set_parent(span: &Span, context: &TraceContext) {
    let mut carrier = HashMap::from([("traceparent".to_owned(), context.traceparent.clone())]);
    if let Some(state) = &context.tracestate {
        carrier.insert("tracestate".to_owned(), state.clone());
    }
    let parent = TraceContextPropagator::new().extract(&carrier);
    if parent.span().span_context().is_valid() {
        let _ = span.set_parent(parent);
    }
}

fn histogram(name: &'static str, description: &'static str) -> Histogram<f64> {
    opentelemetry::global::meter("toolbind")
        .f64_histogram(name)
        .with_unit("s")
        .with_description(description)
        .build()
}

/// `gen_ai.execute_tool.duration`: how long a call took, by tool and how it failed.
pub(super) fn record_tool_duration(tool: &str, took: Duration, error: Option<&'static str>) {
    static H: OnceLock<Histogram<f64>> = OnceLock::new();
    let h = H.get_or_init(|| {
        histogram(
            "gen_ai.execute_tool.duration",
            "Duration of a tool call, validation to result",
        )
    });
    record(
        h,
        took,
        ("gen_ai.operation.name", "execute_tool"),
        tool,
        error,
    );
}

/// `mcp.client.operation.duration` / `mcp.server.operation.duration` of a `tools/call`.
pub(super) fn record_mcp_duration(
    name: &'static str,
    tool: &str,
    took: Duration,
    error: Option<&'static str>,
) {
    static CLIENT: OnceLock<Histogram<f64>> = OnceLock::new();
    static SERVER: OnceLock<Histogram<f64>> = OnceLock::new();
    let h = if name == "mcp.server.operation.duration" {
        SERVER.get_or_init(|| histogram(name, "Duration of an MCP request, as the server saw it"))
    } else {
        CLIENT.get_or_init(|| histogram(name, "Duration of an MCP request, as the client saw it"))
    };
    record(h, took, ("mcp.method.name", "tools/call"), tool, error);
}

fn record(
    h: &Histogram<f64>,
    took: Duration,
    operation: (&'static str, &'static str),
    tool: &str,
    error: Option<&'static str>,
) {
    let mut attrs = vec![
        KeyValue::new(operation.0, operation.1),
        KeyValue::new("gen_ai.tool.name", tool.to_owned()),
    ];
    if let Some(e) = error {
        attrs.push(KeyValue::new("error.type", e));
    }
    h.record(took.as_secs_f64(), &attrs);
}
