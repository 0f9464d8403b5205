//! Typed outputs: a result's `details` checked against the tool's
//! TOOL.md `outputs:`, a broken contract kept as a successful result with the violation
//! reported, and the typed `Output` of generated code through `call_output` /
//! `Runtime::output`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolbind::exec::{ExecCall, ExecFuture, Executor};
use toolbind::output::{OutputCheck, OutputError, OutputViolation};
use toolbind::{CallOptions, Loader, Runtime, StopReason, Tool, ToolResult};

// Generated bindings for the fixtures, as an agent compiles them.
mod generated {
    toolbind::tools!("fixtures/outputs/tools");
}

/// Answers every call with a fixed result.
struct Reply(ToolResult);

impl Executor for Reply {
    fn execute<'a>(&'a self, _call: ExecCall<'a>) -> ExecFuture<'a> {
        Box::pin(async move { self.0.clone() })
    }
}

fn tools_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/outputs/tools")
}

type Seen = Arc<Mutex<Vec<(String, Vec<OutputViolation>)>>>;

/// A runtime whose tools all answer `reply`; the violations it reports land in the list.
fn runtime(reply: ToolResult) -> (Runtime, Seen) {
    let loaded = Loader::new().dir(tools_dir()).quiet().load();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let seen: Seen = Arc::default();
    let sink = seen.clone();
    let rt = Runtime::builder()
        .registry(loaded.registry)
        .executor(Arc::new(Reply(reply)))
        .on_output_violation(move |tool, v| {
            sink.lock()
                .unwrap()
                .push((tool.name().to_owned(), v.to_vec()));
        })
        .build();
    (rt, seen)
}

fn with_details(details: Value) -> ToolResult {
    ToolResult::text("found it").with_details(details)
}

fn params() -> generated::lookup::Params {
    generated::lookup::Params { id: "u1".into() }
}

#[tokio::test]
async fn call_output_gives_the_generated_output_type() {
    let (rt, seen) = runtime(with_details(json!({
        "status": 200,
        "kind": "group",
        "rows": [{"key": "a", "tags": ["x", "y"]}],
        "extra": "a field not declared is ignored",
    })));
    let typed = rt
        .call_output::<generated::lookup::Tool>(params(), CallOptions::new())
        .await;
    assert!(!typed.result.is_error);
    assert_eq!(typed.result.output_check, OutputCheck::Held);
    let out: generated::lookup::Output = typed.output.unwrap();
    assert_eq!(out.status, 200.0);
    assert_eq!(out.kind, generated::lookup::output::Kind::Group);
    assert_eq!(out.note, None);
    assert_eq!(out.rows.len(), 1);
    let row: &generated::lookup::output::Row = &out.rows[0];
    assert_eq!(row.key, "a");
    assert_eq!(row.tags, ["x", "y"]);
    // The same from any result of the tool, e.g. one `call_typed` or `ToolCall::call` gave.
    let r = rt
        .call_typed::<generated::lookup::Tool>(params(), CallOptions::new())
        .await;
    assert_eq!(rt.output::<generated::lookup::Tool>(&r).unwrap(), out);
    let raw = rt
        .call("lookup", json!({"id": "u1"}), CallOptions::new())
        .await;
    assert_eq!(rt.output::<generated::lookup::Tool>(&raw).unwrap(), out);
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn details_that_break_the_outputs_keep_the_result_and_report_the_field() {
    let details = json!({"status": "200", "kind": "user", "rows": [{"key": "a", "tags": [1]}]});
    let (rt, seen) = runtime(with_details(details.clone()));
    let typed = rt
        .call_output::<generated::lookup::Tool>(params(), CallOptions::new())
        .await;
    // A tool bug, not a failed call: the result is the tool's, as it returned it.
    let r = &typed.result;
    assert!(!r.is_error);
    assert_eq!(r.stop, StopReason::Completed);
    assert_eq!(r.text_content(), "found it");
    assert_eq!(r.details, Some(details));
    assert_eq!(r.output_check, OutputCheck::Broken);
    // Reported once, to the hook, naming the tool and each field.
    let reported = seen.lock().unwrap().clone();
    assert_eq!(reported.len(), 1);
    assert_eq!(reported[0].0, "lookup");
    let fields: Vec<(&str, &str)> = reported[0]
        .1
        .iter()
        .map(|v| (v.field.as_str(), v.message.as_str()))
        .collect();
    assert_eq!(
        fields,
        [
            ("status", "expected a number, found a string"),
            ("rows[0].tags[0]", "expected a string, found a number"),
        ]
    );
    // Never on the wire.
    let wire = serde_json::to_value(r).unwrap();
    assert_eq!(wire.as_object().unwrap().len(), 2, "{wire}");
    // No typed output, and the error says why, field by field.
    match &typed.output {
        Err(OutputError::Violated(v)) => assert_eq!(*v, reported[0].1),
        other => panic!("{other:?}"),
    }
    let text = typed.output.unwrap_err().to_string();
    assert!(
        text.contains("`status`: expected a number, found a string"),
        "{text}"
    );

    // The raw path checks the same.
    let raw = rt
        .call("lookup", json!({"id": "u1"}), CallOptions::new())
        .await;
    assert_eq!(raw.output_check, OutputCheck::Broken);
    assert_eq!(seen.lock().unwrap()[1], reported[0]);
}

#[tokio::test]
async fn missing_details_and_missing_fields_are_violations() {
    let reported = |seen: &Seen| -> Vec<String> {
        let seen = seen.lock().unwrap();
        seen.iter()
            .flat_map(|(_, v)| v.iter().map(ToString::to_string))
            .collect()
    };
    let (rt, seen) = runtime(ToolResult::text("no details"));
    let r = rt
        .call("lookup", json!({"id": "u1"}), CallOptions::new())
        .await;
    assert!(!r.is_error);
    assert_eq!(r.output_check, OutputCheck::Broken);
    assert_eq!(
        reported(&seen),
        ["details: missing: the tool returned no `details`"]
    );
    let (rt, seen) = runtime(with_details(json!({"kind": "admin", "rows": []})));
    let r = rt
        .call("lookup", json!({"id": "u1"}), CallOptions::new())
        .await;
    assert_eq!(r.output_check, OutputCheck::Broken);
    let expected = [
        "`status`: missing (a required number)",
        "`kind`: `admin` is not one of: user, group",
    ];
    assert_eq!(reported(&seen), expected);
    // `Runtime::output` lists the same for any result of the tool.
    match rt.output::<generated::lookup::Tool>(&r) {
        Err(OutputError::Violated(v)) => {
            assert_eq!(
                v.iter().map(ToString::to_string).collect::<Vec<_>>(),
                expected
            )
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn failed_calls_are_not_checked_and_have_no_output() {
    let (rt, seen) = runtime(ToolResult::error("the lookup failed"));
    let typed = rt
        .call_output::<generated::lookup::Tool>(params(), CallOptions::new())
        .await;
    assert!(typed.result.is_error);
    assert_eq!(typed.result.output_check, OutputCheck::Unchecked);
    assert_eq!(typed.output, Err(OutputError::Failed));
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_tool_without_outputs_gives_its_details_as_json() {
    let (rt, seen) = runtime(with_details(json!({"anything": [1, 2]})));
    let typed = rt
        .call_output::<generated::plain::Tool>(generated::plain::Params {}, CallOptions::new())
        .await;
    let out: <generated::plain::Tool as Tool>::Output = typed.output.unwrap();
    assert_eq!(out, json!({"anything": [1, 2]}));
    assert!(seen.lock().unwrap().is_empty());
    let (rt, _) = runtime(ToolResult::text("none"));
    let r = rt.call("plain", json!({}), CallOptions::new()).await;
    assert_eq!(r.output_check, OutputCheck::Unchecked);
    assert_eq!(rt.output::<generated::plain::Tool>(&r), Ok(Value::Null));
}

#[tokio::test]
async fn a_real_python_tool_returning_its_declared_details() {
    // The fixture's own entry file, run for real (no sandbox: a test machine may lack bwrap).
    let loaded = Loader::new().dir(tools_dir()).quiet().load();
    let rt = Runtime::builder()
        .registry(loaded.registry)
        .sandbox(toolbind::sandbox::SandboxPolicy::new().mode(toolbind::sandbox::SandboxMode::Off))
        .build();
    let typed = rt
        .call_output::<generated::lookup::Tool>(params(), CallOptions::new())
        .await;
    assert!(!typed.result.is_error, "{:?}", typed.result);
    let out = typed.output.unwrap();
    assert_eq!(
        (out.status, out.kind),
        (200.0, generated::lookup::output::Kind::User)
    );
}
