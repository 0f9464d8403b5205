//! Feature `otel`: the calls' spans and duration metrics exported over OTLP.

use crate::lock::RwLocked;
use opentelemetry::metrics::MeterProvider as _;
use std::collections::HashMap;
use std::fmt;
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

/// Spans waiting for export, at most; one more is dropped, so a collector that is down
/// never grows memory or slows a call. (The SDK counts the drops in its internal logs,
/// which this build leaves out: no warning is printed for them.)
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
    id: u64,
}

impl fmt::Debug for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guard").finish_non_exhaustive()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let mut metrics = METRICS.write_locked();
        if metrics.as_ref().is_some_and(|m| m.of == self.id) {
            *metrics = None;
        }
        drop(metrics);
        let (tracer, meter) = (self.tracer.clone(), self.meter.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        // The SDK's shutdowns block (the meter's for a fixed 5 s when the collector does
        // not answer): each runs on a thread of its own, both within one deadline.
        let traces = tx.clone();
        std::thread::spawn(move || {
            let _ = traces.send(tracer.shutdown_with_timeout(FLUSH_LIMIT).is_ok());
        });
        std::thread::spawn(move || {
            let _ = tx.send(meter.shutdown().is_ok());
        });
        let deadline = std::time::Instant::now() + FLUSH_LIMIT + Duration::from_millis(100);
        let mut sent = 0;
        while sent < 2 {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(true) => sent += 1,
                Ok(false) | Err(_) => break,
            }
        }
        if sent < 2 {
            eprintln!(
                "toolbind: warning: the OpenTelemetry collector did not take the last spans and metrics within {} s (it is down, slow or refused them): they were dropped",
                FLUSH_LIMIT.as_secs()
            );
        }
    }
}

/// The duration histograms of the export set up last, and whose they are.
struct Histograms {
    of: u64,
    tool: Histogram<f64>,
    client: Histogram<f64>,
    server: Histogram<f64>,
}

/// Recorded into while an export runs; none before one is set up, none after its guard
/// is dropped. (Not `global::meter`'s: that would keep the provider of its first use.)
static METRICS: std::sync::RwLock<Option<Histograms>> = std::sync::RwLock::new(None);

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
    activate(&guard);
    Ok(Some(guard))
}

/// The same export as [`init`], for a program with a `tracing` subscriber of its own:
/// the guard, and the layer to add to it (it passes on toolbind's and rig's spans only).
/// Like `init`, it makes its meter provider OpenTelemetry's global one (replacing the
/// program's) and the W3C trace context the global propagator.
pub fn layer<S>() -> Result<Option<(Guard, impl tracing_subscriber::Layer<S>)>, InitError>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    if disabled() {
        return Ok(None);
    }
    let (guard, layer) = providers()?;
    activate(&guard);
    Ok(Some((guard, layer)))
}

/// Makes `guard`'s providers the ones recorded into (and OpenTelemetry's globals).
fn activate(guard: &Guard) {
    opentelemetry::global::set_meter_provider(guard.meter.clone());
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let meter = guard.meter.meter("toolbind");
    let histogram = |name: &'static str, description: &'static str| {
        meter
            .f64_histogram(name)
            .with_unit("s")
            .with_description(description)
            .build()
    };
    *METRICS.write_locked() = Some(Histograms {
        of: guard.id,
        tool: histogram(
            "gen_ai.execute_tool.duration",
            "Duration of a tool call, validation to result",
        ),
        client: histogram(
            "mcp.client.operation.duration",
            "Duration of an MCP request, as the client saw it",
        ),
        server: histogram(
            "mcp.server.operation.duration",
            "Duration of an MCP request, as the server saw it",
        ),
    });
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
    let targets = tracing_subscriber::filter::Targets::new()
        .with_target("toolbind", tracing::Level::INFO)
        .with_target("rig_agent", tracing::Level::INFO);
    let layer = tracing_subscriber::Layer::with_filter(span_layer(&tracer), targets);
    static IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let id = IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Ok((Guard { tracer, meter, id }, layer))
}

/// The layer that makes toolbind's spans OpenTelemetry spans of `provider`. Per-call cost
/// (BENCHMARKS.md): no source location, thread, level or target attributes, no busy/idle
/// timing on every poll, no OpenTelemetry context activated on every enter (`current`
/// reads the span's own).
fn span_layer<S>(provider: &SdkTracerProvider) -> impl tracing_subscriber::Layer<S> + use<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("toolbind"))
        .with_location(false)
        .with_threads(false)
        .with_level(false)
        .with_target(false)
        .with_tracked_inactivity(false)
        .with_context_activation(false)
}

/// [`layer`]'s spans built by a provider that exports nothing: for the bench that tells
/// building spans from exporting them (runtime/benches/telemetry.rs).
#[doc(hidden)]
pub fn unexported_layer<S>() -> impl tracing_subscriber::Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    let provider = SdkTracerProvider::builder().build();
    let layer = span_layer(&provider);
    // The layer's tracer keeps what it needs; the provider itself has nothing to flush.
    drop(provider);
    layer
}

/// `span`'s trace context, when it is sampled into an OpenTelemetry trace.
pub(super) fn context_of(span: &Span) -> Option<TraceContext> {
    if span.is_disabled() {
        return None;
    }
    let cx = span.context();
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

/// `gen_ai.execute_tool.duration`: how long a call took, by tool and how it failed.
pub(super) fn record_tool_duration(tool: &str, took: Duration, error: Option<&'static str>) {
    let metrics = METRICS.read_locked();
    if let Some(m) = metrics.as_ref() {
        record(
            &m.tool,
            took,
            ("gen_ai.operation.name", "execute_tool"),
            tool,
            error,
        );
    }
}

/// `mcp.client.operation.duration` / `mcp.server.operation.duration` of a `tools/call`.
pub(super) fn record_mcp_duration(
    name: &'static str,
    tool: &str,
    took: Duration,
    error: Option<&'static str>,
) {
    let metrics = METRICS.read_locked();
    if let Some(m) = metrics.as_ref() {
        let h = if name == "mcp.server.operation.duration" {
            &m.server
        } else {
            &m.client
        };
        record(h, took, ("mcp.method.name", "tools/call"), tool, error);
    }
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
