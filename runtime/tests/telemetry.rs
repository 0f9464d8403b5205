//! Every call is a `tracing` span by the GenAI conventions, for any subscriber (no
//! OpenTelemetry needed): its name, attributes and `error.type`, and content recorded
//! only when asked, redacted. (The OTLP export itself: cli/tests/otel.rs.)

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolbind::exec::{ExecCall, ExecFuture, Executor};
use toolbind::{CallOptions, Content, Loader, Runtime, ToolResult};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

mod span_tree;

const SECRET: &str = "vault-password-7f3a9c";

/// A span's name and fields.
type Seen = (String, BTreeMap<String, String>);

/// Each span's name and fields (recorded at creation and after).
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<Seen>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        fields.insert("#id".into(), id.into_u64().to_string());
        self.0
            .lock()
            .unwrap()
            .push((attrs.metadata().name().to_owned(), fields));
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        if let Some((_, fields)) = spans
            .iter_mut()
            .rev()
            .find(|(_, f)| f["#id"] == id.into_u64().to_string())
        {
            values.record(&mut Fields(fields));
        }
    }
}

/// Answers every call with its params as text and a small image.
struct Echo;

impl Executor for Echo {
    fn execute<'a>(&'a self, call: ExecCall<'a>) -> ExecFuture<'a> {
        Box::pin(async move {
            ToolResult::new(vec![
                Content::text(Value::Object(call.params.clone()).to_string()),
                Content::Image {
                    data: "aGVsbG8gd29ybGQ=".into(),
                    mime_type: "image/png".into(),
                },
            ])
        })
    }
}

fn runtime(record_content: bool) -> Runtime {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/core/tools");
    let loaded = Loader::new().dir(dir).quiet().load();
    Runtime::builder()
        .registry(loaded.registry)
        .executor(Arc::new(Echo))
        .record_content(record_content)
        .build()
}

/// Runs `calls` on a current-thread runtime under a subscriber that keeps every span.
fn traced(record_content: bool, calls: Vec<(&'static str, Value)>) -> Vec<Seen> {
    traced_in(tracing::Span::none, record_content, calls)
}

/// [`traced`], inside the span `outer` makes.
fn traced_in(
    outer: fn() -> tracing::Span,
    record_content: bool,
    calls: Vec<(&'static str, Value)>,
) -> Vec<Seen> {
    traced_on(move || runtime(record_content), outer, calls)
}

/// Runs `calls` on the runtime `make` builds, on a current-thread runtime, inside the span
/// `outer` makes, under a subscriber that keeps every span.
fn traced_on(
    make: impl FnOnce() -> Runtime,
    outer: fn() -> tracing::Span,
    calls: Vec<(&'static str, Value)>,
) -> Vec<Seen> {
    let spans = Spans::default();
    let subscriber = tracing_subscriber::registry().with(spans.clone());
    tracing::subscriber::with_default(subscriber, || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let outer = outer();
        let _in = outer.enter();
        rt.block_on(async {
            let runtime = make();
            for (name, args) in calls {
                runtime
                    .call(name, args, CallOptions::new().id(format!("id-{name}")))
                    .await;
            }
        });
    });
    spans.0.lock().unwrap().clone()
}

#[test]
fn a_call_is_an_execute_tool_span_with_the_genai_attributes() {
    let spans = traced(false, vec![("search", json!({"query": "rust"}))]);
    let (name, f) = spans
        .iter()
        .find(|(n, _)| n == "execute_tool")
        .expect("an execute_tool span");
    assert_eq!(name, "execute_tool");
    assert_eq!(f["otel.name"], "execute_tool search");
    assert_eq!(f["otel.kind"], "internal");
    assert_eq!(f["gen_ai.operation.name"], "execute_tool");
    assert_eq!(f["gen_ai.tool.name"], "search");
    assert_eq!(f["gen_ai.tool.call.id"], "id-search");
    assert_eq!(f["gen_ai.tool.type"], "function");
    assert!(f["gen_ai.tool.description"].len() > 3, "{f:?}");
    assert!(!f.contains_key("error.type"), "{f:?}");
    // Not recorded unless asked.
    assert!(!f.contains_key("gen_ai.tool.call.arguments"), "{f:?}");
    assert!(!f.contains_key("gen_ai.tool.call.result"), "{f:?}");
}

#[test]
fn a_failed_call_records_its_stop_kind_as_error_type() {
    let spans = traced(
        false,
        vec![
            ("search", json!({"query": 7, "nope": 1})),
            ("serch", json!({})),
        ],
    );
    let calls: Vec<_> = spans.iter().filter(|(n, _)| n == "execute_tool").collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].1["error.type"], "bad_arguments");
    assert_eq!(calls[0].1["otel.status_code"], "ERROR");
    // An unknown tool still has its span, named by what the model called.
    assert_eq!(calls[1].1["gen_ai.tool.name"], "serch");
    assert_eq!(calls[1].1["error.type"], "unknown_tool");
}

#[test]
fn content_is_recorded_only_when_asked_and_then_redacted() {
    // The secret also copied into a plain argument: redacted there too.
    let spans = traced(
        true,
        vec![(
            "vault",
            json!({"secret": SECRET, "note": format!("visible note {SECRET}")}),
        )],
    );
    let (_, f) = spans.iter().find(|(n, _)| n == "execute_tool").unwrap();
    let args = &f["gen_ai.tool.call.arguments"];
    assert!(args.contains("visible note"), "{args}");
    assert!(args.contains("[REDACTED]"), "{args}");
    let result = &f["gen_ai.tool.call.result"];
    // The result echoed the secret: the redactor removed it before the span saw it.
    assert!(result.contains("visible note"), "{result}");
    // Binary content by type, MIME type and size only.
    assert!(
        result.contains(r#"{"mimeType":"image/png","size":11,"type":"image"}"#)
            || result.contains(r#""type":"image","mimeType":"image/png","size":11"#),
        "{result}"
    );
    assert!(!result.contains("aGVsbG8"), "{result}");
    for (_, fields) in &spans {
        for v in fields.values() {
            assert!(!v.contains(SECRET), "the secret is on a span: {v}");
        }
    }
}

/// Inside rig's own `execute_tool` span (as rig's agent loop opens one per tool call),
/// toolbind opens no second one, and records nothing rig sets itself.
#[test]
fn inside_rigs_execute_tool_span_no_second_span_is_opened() {
    // rig-agent 0.44's span (agent/telemetry.rs), with a field of its own left empty.
    let rig = || {
        tracing::info_span!(
            target: "rig_agent::agent::telemetry",
            "execute_tool",
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.type = tracing::field::Empty,
            gen_ai.tool.name = tracing::field::Empty,
        )
    };
    let spans = traced_in(rig, false, vec![("search", json!({"query": "rust"}))]);
    let calls: Vec<_> = spans.iter().filter(|(n, _)| n == "execute_tool").collect();
    assert_eq!(calls.len(), 1, "{spans:?}");
    assert!(!calls[0].1.contains_key("gen_ai.tool.type"), "{calls:?}");
    assert!(
        !calls[0].1.contains_key("otel.name"),
        "not toolbind's own span"
    );
}

/// A sensitive field inside an object input is redacted in the recorded arguments too.
#[test]
fn a_nested_sensitive_field_is_redacted_in_the_recorded_arguments() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("nested");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("TOOL.md"),
        "---\nname: nested\ndescription: Logs in.\nversion: 1\nlanguage: bash\ninputs:\n  auth:\n    type: object\n    description: Credentials.\n    properties:\n      user:\n        type: string\n        description: Who.\n      token:\n        type: string\n        description: The token.\n        sensitive: true\n---\n# Nested\n",
    )
    .unwrap();
    std::fs::write(dir.join("index.sh"), "cat\n").unwrap();
    let loaded = Loader::new().dir(tmp.path()).quiet().load();
    assert!(
        loaded.registry.get("nested").is_some(),
        "{:?}",
        loaded.warnings
    );
    let make = move || {
        Runtime::builder()
            .registry(loaded.registry)
            .executor(Arc::new(Echo))
            .record_content(true)
            .build()
    };
    let args = json!({"auth": {"user": "ada", "token": SECRET}});
    let spans = traced_on(make, tracing::Span::none, vec![("nested", args)]);
    let (_, f) = spans.iter().find(|(n, _)| n == "execute_tool").unwrap();
    let args = &f["gen_ai.tool.call.arguments"];
    assert!(
        args.contains("ada") && args.contains("[REDACTED]"),
        "{args}"
    );
    for (_, fields) in &spans {
        for v in fields.values() {
            assert!(!v.contains(SECRET), "the secret is on a span: {v}");
        }
    }
}
