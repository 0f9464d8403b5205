//! Dispatch: validation messages, quirk coercions, defaults, truncation, the typed path and
//! its drift check, and secret redaction.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use toolbind::exec::{ExecCall, ExecFuture, Executor};
use toolbind::tool::Language;
use toolbind::truncate::TruncateOptions;
use toolbind::{CallOptions, CancelToken, Content, Loader, Runtime, Secret, Tool, ToolResult};

/// A secret no message may ever contain.
const SECRET: &str = "SECRET-zx81-do-not-log";

#[derive(Debug, Clone)]
struct Seen {
    tool: String,
    id: String,
    params: Map<String, Value>,
    timeout: Duration,
}

type Reply = Box<dyn Fn(&Map<String, Value>) -> ToolResult + Send + Sync>;

/// The in-process test double: records each call and answers with `reply`.
struct Recorder {
    seen: Mutex<Vec<Seen>>,
    reply: Reply,
}

impl Recorder {
    fn new(reply: impl Fn(&Map<String, Value>) -> ToolResult + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(Recorder {
            seen: Mutex::new(Vec::new()),
            reply: Box::new(reply),
        })
    }

    fn echo() -> Arc<Self> {
        Self::new(|p| ToolResult::text(Value::Object(p.clone()).to_string()))
    }

    fn calls(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn last(&self) -> Seen {
        self.calls().pop().expect("the executor was called")
    }
}

impl Executor for Recorder {
    fn execute<'a>(&'a self, call: ExecCall<'a>) -> ExecFuture<'a> {
        Box::pin(async move {
            self.seen.lock().unwrap().push(Seen {
                tool: call.tool.name().to_owned(),
                id: call.tool_call_id.to_owned(),
                params: call.params.clone(),
                timeout: call.timeout,
            });
            (self.reply)(&call.params)
        })
    }
}

fn tools_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/core/tools")
}

fn runtime(exec: Arc<Recorder>) -> Runtime {
    let loaded = Loader::new().dir(tools_dir()).quiet().load();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    Runtime::builder()
        .registry(loaded.registry)
        .executor(exec)
        .build()
}

async fn call(rt: &Runtime, name: &str, args: Value) -> ToolResult {
    rt.call(name, args, CallOptions::new()).await
}

/// Calls expected to fail validation: returns the error text and checks nothing ran.
async fn rejected(name: &str, args: Value) -> String {
    let exec = Recorder::echo();
    let rt = runtime(exec.clone());
    let r = call(&rt, name, args).await;
    assert!(r.is_error, "{r:?}");
    assert!(
        exec.calls().is_empty(),
        "nothing runs when validation fails"
    );
    r.text_content()
}

#[tokio::test]
async fn unknown_tool_lists_the_available_ones() {
    let text = rejected("serch", json!({"query": "x"})).await;
    assert_eq!(
        text,
        "unknown tool `serch` (did you mean `search`?); available tools: ping, search, vault"
    );
    let text = rejected("weather", json!({})).await;
    assert_eq!(
        text,
        "unknown tool `weather`; available tools: ping, search, vault"
    );
}

#[tokio::test]
async fn missing_required_field() {
    let text = rejected("search", json!({"limit": 3})).await;
    assert_eq!(
        text,
        "invalid arguments for tool `search`:\n\
         - `query`: missing required field, expected a string (The search terms.)\n\
         Fix the arguments and call `search` again."
    );
}

#[tokio::test]
async fn wrong_types_say_expected_and_received() {
    let text = rejected(
        "search",
        json!({"query": 42, "limit": "ten", "safe": "maybe", "mode": [1]}),
    )
    .await;
    assert!(
        text.contains("- `query`: expected a string, received the number 42\n"),
        "{text}"
    );
    assert!(
        text.contains("- `limit`: expected a number, received the string \"ten\"\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "- `safe`: expected a boolean (true or false), received the string \"maybe\"\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("- `mode`: expected one of \"web\", \"news\", \"images\", received an array of 1 items\n"),
        "{text}"
    );
    let text = rejected("search", json!({"query": null})).await;
    assert!(
        text.contains("- `query`: expected a string, received null"),
        "{text}"
    );
    let long = "y".repeat(500);
    let text = rejected("search", json!({"query": "q", "limit": long})).await;
    assert!(
        text.contains(&format!("received the string \"{}…\"", "y".repeat(60))),
        "{text}"
    );
}

#[tokio::test]
async fn unknown_field_lists_the_valid_fields() {
    let text = rejected("search", json!({"querry": "rust"})).await;
    assert!(
        text.contains("- `querry`: unknown field (did you mean `query`?); valid fields: query, limit, safe, mode, api_token"),
        "{text}"
    );
    // Every problem at once: the missing `query` too.
    assert!(text.contains("- `query`: missing required field"), "{text}");
    let text = rejected("ping", json!({"host": "x"})).await;
    assert!(
        text.contains("- `host`: unknown field; this tool takes no arguments"),
        "{text}"
    );
    // Optional inputs only: an unknown field must still be caught.
    let text = rejected("search", json!({"query": "q", "colour": "red"})).await;
    assert!(
        text.contains("- `colour`: unknown field; valid fields:"),
        "{text}"
    );
}

#[tokio::test]
async fn enum_outside_its_values_lists_them() {
    let text = rejected("search", json!({"query": "q", "mode": "newz"})).await;
    assert!(
        text.contains("- `mode`: expected one of \"web\", \"news\", \"images\", received the string \"newz\" (did you mean \"news\"?)"),
        "{text}"
    );
    let text = rejected("search", json!({"query": "q", "mode": 3})).await;
    assert!(
        text.contains(
            "- `mode`: expected one of \"web\", \"news\", \"images\", received the number 3\n"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn arguments_must_be_an_object() {
    for (args, received) in [
        (json!([1, 2]), "an array of 2 items"),
        (json!(7), "the number 7"),
        (json!("not json"), "a string that is not a JSON object"),
        (json!("[1]"), "a string that is not a JSON object"),
    ] {
        let text = rejected("ping", args).await;
        assert!(
            text.contains(&format!(
                "- arguments: expected a JSON object of named fields, received {received}"
            )),
            "{text}"
        );
    }
}

#[tokio::test]
async fn numbers_and_booleans_sent_as_strings_are_coerced() {
    let exec = Recorder::echo();
    let rt = runtime(exec.clone());
    let r = call(
        &rt,
        "search",
        json!({"query": "q", "limit": "5", "safe": "true"}),
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    let p = exec.last().params;
    assert_eq!(p["limit"], json!(5));
    assert!(p["limit"].is_u64(), "\"5\" becomes the integer 5");
    assert_eq!(p["safe"], json!(true));

    call(
        &rt,
        "search",
        json!({"query": "q", "limit": " 2.5 ", "safe": "False"}),
    )
    .await;
    let p = exec.last().params;
    assert_eq!(p["limit"], json!(2.5));
    assert_eq!(p["safe"], json!(false));

    call(&rt, "search", json!({"query": "q", "limit": "-3e2"})).await;
    assert_eq!(exec.last().params["limit"].as_f64(), Some(-300.0));

    // Strings are not numbers when the field wants a string.
    call(&rt, "search", json!({"query": "5"})).await;
    assert_eq!(exec.last().params["query"], json!("5"));
}

#[tokio::test]
async fn empty_and_null_arguments_mean_no_arguments() {
    let exec = Recorder::echo();
    let rt = runtime(exec.clone());
    for args in [json!(""), json!("   "), json!(null), json!({})] {
        let r = call(&rt, "ping", args.clone()).await;
        assert!(!r.is_error, "{args}: {r:?}");
        assert!(exec.last().params.is_empty());
    }
    assert_eq!(exec.calls().len(), 4);
    // ...but a tool with required inputs still needs them.
    let text = rejected("search", json!("")).await;
    assert!(text.contains("- `query`: missing required field"), "{text}");
}

#[tokio::test]
async fn arguments_sent_as_a_json_string_are_parsed() {
    let exec = Recorder::echo();
    let rt = runtime(exec.clone());
    let r = call(&rt, "search", json!("{\"query\": \"rust\", \"limit\": 3}")).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(exec.last().params["limit"], json!(3));
    assert_eq!(exec.last().params["query"], json!("rust"));
}

#[tokio::test]
async fn defaults_are_filled_exactly_as_json_has_them() {
    let exec = Recorder::echo();
    let rt = runtime(exec.clone());
    call(&rt, "search", json!({"query": "q"})).await;
    let seen = exec.last();
    assert_eq!(seen.tool, "search");
    let p = seen.params;
    assert!(
        p["limit"].is_u64(),
        "the default 10 is the integer 10: {p:?}"
    );
    assert_eq!(
        Value::Object(p.clone()).to_string(),
        r#"{"query":"q","limit":10,"mode":"web"}"#
    );
    assert!(
        !p.contains_key("safe"),
        "optional inputs without a default stay absent"
    );

    // Given values pass through untouched: 10.0 stays a float, 7 an integer.
    call(&rt, "search", json!({"query": "q", "limit": 10.0})).await;
    assert_eq!(exec.last().params["limit"].to_string(), "10.0");

    // `null` for an optional input means "not given"; for a defaulted one, the default.
    call(
        &rt,
        "search",
        json!({"query": "q", "safe": null, "limit": null, "api_token": null}),
    )
    .await;
    let p = exec.last().params;
    assert!(
        !p.contains_key("safe") && !p.contains_key("api_token"),
        "{p:?}"
    );
    assert_eq!(p["limit"], json!(10));
}

#[test]
fn enum_values_sent_as_numbers_or_booleans_match_their_text() {
    use toolbind::args::validate;
    let dir = Path::new("/nonexistent/pick");
    let spec = toolbind_codegen::parse_tool_md(
        &dir.join("TOOL.md"),
        dir,
        b"---\nname: pick\ndescription: Pick.\ninputs:\n  n:\n    type: enum\n    values: 1, 2, true\n    description: N.\n---\n",
        &toolbind_codegen::Options::default().require_entry(false),
    )
    .unwrap();
    let spec = toolbind::ToolInfo::from(spec);
    assert_eq!(
        validate(&spec, json!({"n": 2})).unwrap().params()["n"],
        json!("2")
    );
    assert_eq!(
        validate(&spec, json!({"n": true})).unwrap().params()["n"],
        json!("true")
    );
    assert_eq!(
        validate(&spec, json!({"n": "1"})).unwrap().params()["n"],
        json!("1")
    );
    let err = validate(&spec, json!({"n": 3})).unwrap_err().to_string();
    assert!(
        err.contains("- `n`: expected one of \"1\", \"2\", \"true\", received the number 3"),
        "{err}"
    );
}

#[tokio::test]
async fn call_options_reach_the_executor() {
    let exec = Recorder::echo();
    let rt = Runtime::builder()
        .registry(Loader::new().dir(tools_dir()).quiet().load().registry)
        .executor(exec.clone())
        .default_timeout(Duration::from_secs(5))
        .build();
    rt.call("ping", json!({}), CallOptions::new().id("call_abc"))
        .await;
    let seen = exec.last();
    assert_eq!(seen.id, "call_abc");
    assert_eq!(
        seen.timeout,
        Duration::from_secs(5),
        "the runtime's default"
    );
    // The tool's `timeout: 30` beats the runtime default; the call's beats both.
    rt.call("search", json!({"query": "q"}), CallOptions::new())
        .await;
    assert_eq!(exec.last().timeout, Duration::from_secs(30));
    assert!(
        exec.last().id.starts_with("call_"),
        "an id is made up when none is given"
    );
    rt.call(
        "search",
        json!({"query": "q"}),
        CallOptions::new().timeout(Duration::from_millis(1500)),
    )
    .await;
    assert_eq!(exec.last().timeout, Duration::from_millis(1500));
    // With no default set, the runtime's default is 120 s: resolved here, once.
    let plain = Runtime::builder()
        .registry(Loader::new().dir(tools_dir()).quiet().load().registry)
        .executor(exec.clone())
        .build();
    plain.call("ping", json!({}), CallOptions::new()).await;
    assert_eq!(exec.last().timeout, toolbind::exec::DEFAULT_TIMEOUT);

    let token = CancelToken::new();
    token.cancel();
    let r = rt
        .call("ping", json!({}), CallOptions::new().cancel(token))
        .await;
    assert!(r.is_error);
    assert_eq!(
        r.text_content(),
        "tool `ping` was cancelled before it started"
    );
    assert_eq!(
        exec.calls().len(),
        4,
        "the cancelled call never reached the executor"
    );
}

fn big_output(_: &Map<String, Value>) -> ToolResult {
    let long: String = (0..3000).map(|i| format!("row {i}\n")).collect();
    ToolResult::new(vec![
        Content::text(long),
        Content::Image {
            data: "aGVsbG8=".into(),
            mime_type: "image/png".into(),
        },
        Content::text("short"),
    ])
    .with_details(json!({"rows": 3000}))
}

#[tokio::test]
async fn every_text_block_is_truncated_with_a_note() {
    let exec = Recorder::new(big_output);
    let rt = runtime(exec);
    let r = call(&rt, "ping", json!({})).await;
    let Content::Text { text } = &r.content[0] else {
        panic!()
    };
    assert!(text.starts_with("row 0\nrow 1\n"));
    assert!(
        text.ends_with("row 1999\n\n[Output truncated: 2000/3000 lines (16.5KB/25.3KB)]"),
        "{}",
        &text[text.len() - 80..]
    );
    assert_eq!(
        r.content[1],
        big_output(&Map::new()).content[1],
        "images untouched"
    );
    // One budget for the whole result: the first block used it up.
    assert_eq!(
        r.content[2],
        Content::text("[Output truncated: 0/1 lines (0B/5B)]")
    );
    assert_eq!(r.details, Some(json!({"rows": 3000})));
}

#[tokio::test]
async fn truncation_limits_are_configurable_and_can_spill() {
    let dir = tempfile::tempdir().unwrap();
    let spill = dir.path().join("spill");
    let exec = Recorder::new(big_output);
    let rt = Runtime::builder()
        .registry(Loader::new().dir(tools_dir()).quiet().load().registry)
        .executor(exec)
        .truncation(TruncateOptions::default().max_bytes(1000).max_lines(10_000))
        .spill_dir(&spill)
        .build();
    let r = rt
        .call("ping", json!(null), CallOptions::new().id("call/../7"))
        .await;
    let text = r.content[0].as_text().unwrap();
    let spilled: Vec<_> = std::fs::read_dir(&spill)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(spilled.len(), 1, "{spilled:?}");
    let path = spilled[0].clone();
    let name = path.file_name().unwrap().to_str().unwrap();
    let prefix = format!("ping-call____7-0-{}-", std::process::id());
    assert!(
        name.starts_with(&prefix) && name.ends_with(".txt"),
        "{name}"
    );
    let note = format!(
        "\n\n[Output truncated: 138/3000 lines (993B/25.3KB). Full output saved to: {}]",
        path.display()
    );
    assert!(text.ends_with(&note), "{text}");
    let full = std::fs::read_to_string(&path).unwrap();
    assert_eq!(full, big_output(&Map::new()).content[0].as_text().unwrap());
    assert!(full.starts_with(text.strip_suffix(&note).unwrap()));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let dir_mode = std::fs::metadata(&spill).unwrap().permissions().mode();
    assert_eq!(dir_mode & 0o777, 0o700);

    // A second call never overwrites the first one's file.
    rt.call("ping", json!(null), CallOptions::new().id("call/../7"))
        .await;
    assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 2);
}

#[tokio::test]
async fn several_text_blocks_share_one_budget() {
    let exec = Recorder::new(|_: &Map<String, Value>| {
        ToolResult::new(vec![
            Content::text("a\n".repeat(1500)),
            Content::text("b\n".repeat(1500)),
        ])
    });
    let r = call(&runtime(exec), "ping", json!({})).await;
    let second = r.content[1].as_text().unwrap();
    assert!(second.starts_with("b\n"), "{second}");
    assert_eq!(
        second.lines().filter(|l| *l == "b").count(),
        500,
        "2000 lines in all"
    );
    assert!(
        second.ends_with("[Output truncated: 500/1500 lines (999B/2.9KB)]"),
        "{second}"
    );
}

// The typed path: a hand-written stand-in for what codegen generates for `search`.

#[derive(Serialize, Deserialize, Default)]
struct SearchParams {
    query: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    limit: Option<f64>,
    safe: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    api_token: Option<Secret<String>>,
}

/// `ToolSpec::fingerprint()` of tests/fixtures/core/tools/search/TOOL.md.
const SEARCH_FINGERPRINT: u64 = 0x6fb5_3623_6995_6828;

macro_rules! search_tool {
    ($ty:ident, $fp:expr, $version:expr) => {
        struct $ty;
        impl Tool for $ty {
            type Params = SearchParams;
            type Output = Value;
            const NAME: &'static str = "search";
            const LABEL: &'static str = "Web Search";
            const DESCRIPTION: &'static str = "Search the web and return the top results.";
            const VERSION: u64 = $version;
            const LANGUAGE: Language = Language::Python;
            const SCHEMA: &'static str = "{}";
            const PROMPT: &'static str = "";
            const DOCS: &'static str = "";
            const FINGERPRINT: u64 = $fp;
        }
    };
}

search_tool!(SearchTool, SEARCH_FINGERPRINT, 2);
search_tool!(OldSearchTool, SEARCH_FINGERPRINT ^ 1, 1);
// Compiled against an edit of the same version: a TOOL.md changed without a version bump.
search_tool!(UnbumpedSearchTool, SEARCH_FINGERPRINT ^ 2, 2);

#[test]
fn fingerprint_constant_matches_the_fixture() {
    let loaded = Loader::new().dir(tools_dir()).quiet().load();
    let fp = loaded.registry.get("search").unwrap().fingerprint();
    assert_eq!(
        fp, SEARCH_FINGERPRINT,
        "update SEARCH_FINGERPRINT to {fp:#x}"
    );
}

#[tokio::test]
async fn call_typed_sends_params() {
    let exec = Recorder::echo();
    let rt = runtime(exec.clone());
    let params = SearchParams {
        query: "rust".into(),
        limit: None,
        safe: None,
        api_token: Some(Secret::new(SECRET.to_owned())),
    };
    let r = rt
        .call_typed::<SearchTool>(params, CallOptions::new().id("t1"))
        .await;
    assert!(!r.is_error, "{r:?}");
    let p = exec.last().params;
    assert_eq!(p["query"], json!("rust"));
    assert_eq!(
        p["limit"],
        json!(10),
        "defaults apply on the typed path too"
    );
    assert!(
        !p.contains_key("safe"),
        "a None serialised as null is dropped"
    );
    assert_eq!(
        p["api_token"],
        json!(SECRET),
        "the tool gets the real secret"
    );
}

#[tokio::test]
async fn call_typed_refuses_a_drifted_tool_md() {
    let exec = Recorder::echo();
    let rt = runtime(exec.clone());
    let params = SearchParams {
        query: "rust".into(),
        api_token: Some(Secret::new(SECRET.to_owned())),
        ..Default::default()
    };
    let r = rt
        .call_typed::<OldSearchTool>(params, CallOptions::new())
        .await;
    assert!(r.is_error);
    assert_eq!(r.stop, toolbind::StopReason::ContractDrift);
    assert!(exec.calls().is_empty(), "nothing runs on drift");
    let text = r.text_content();
    let file = tools_dir().join("search/TOOL.md");
    assert!(
        text.starts_with(&format!(
            "tool `search`: the TOOL.md on disk ({}, version 2) differs from the contract this program was compiled against (version 1)",
            file.display()
        )),
        "{text}"
    );
    assert!(
        text.contains("Rebuild against the current TOOL.md"),
        "{text}"
    );
    assert!(!text.contains("bump `version:`"), "{text}");
    assert!(!text.contains(SECRET));
    assert!(rt.drift_check::<OldSearchTool>().is_err());
    assert!(rt.drift_check::<SearchTool>().is_ok());

    // A compiled tool that is not loaded at all.
    let empty = Runtime::builder().executor(exec).build();
    let r = empty
        .call_typed::<SearchTool>(SearchParams::default(), CallOptions::new())
        .await;
    assert_eq!(
        r.text_content(),
        "this program was compiled with the tool, but it is not loaded: unknown tool `search`; no tools are available"
    );
}

#[tokio::test]
async fn secrets_never_appear_in_messages_or_debug() {
    let exec = Recorder::echo();
    let rt = runtime(exec.clone());
    let cases = [
        // a sensitive string sent as an object holding the secret
        json!({"secret": {"value": SECRET}}),
        // a sensitive number sent as a non-numeric string
        json!({"secret": "x", "pin": SECRET}),
        // a sensitive enum outside its values
        json!({"secret": "x", "level": SECRET}),
        json!({"secret": "x", "level": "hihg"}),
        // a misspelt field carrying the secret
        json!({"secret": "x", "scret": SECRET}),
        // the whole arguments as a string that is not an object
        json!(format!("secret={SECRET}")),
        // a sensitive required field with the wrong type
        json!({"secret": [SECRET]}),
    ];
    for args in cases {
        let r = call(&rt, "vault", args.clone()).await;
        assert!(r.is_error, "{args}");
        let text = r.text_content();
        assert!(!text.contains(SECRET), "{args} leaked: {text}");
        assert!(!text.contains("hihg"), "{args} leaked: {text}");
        assert!(!format!("{r:?}").contains(SECRET));
    }
    let text = rejected("vault", json!({"secret": "x", "pin": SECRET})).await;
    assert!(
        text.contains(
            "- `pin`: expected a number, received a string (value hidden: sensitive input)"
        ),
        "{text}"
    );
    let text = rejected("vault", json!({"secret": "x", "level": "hihg"})).await;
    assert!(
        text.contains("- `level`: expected one of \"low\", \"high\", received a string (value hidden: sensitive input)\n"),
        "no did-you-mean for a sensitive value: {text}"
    );

    // Validated args print redacted; the tool still gets the value.
    let valid = rt
        .check("vault", json!({"secret": SECRET, "note": "hi"}))
        .unwrap();
    let debug = format!("{valid:?}");
    assert!(!debug.contains(SECRET), "{debug}");
    assert!(
        debug.contains("[REDACTED]") && debug.contains("hi"),
        "{debug}"
    );
    assert_eq!(valid.redacted()["secret"], json!("[REDACTED]"));
    assert_eq!(valid.params()["secret"], json!(SECRET));
    let r = call(&rt, "vault", json!({"secret": SECRET})).await;
    assert!(!r.is_error);
    assert_eq!(exec.last().params["secret"], json!(SECRET));
    assert!(!format!("{rt:?}").contains(SECRET));
    assert!(!format!("{:?}", CallOptions::new().id("c")).contains(SECRET));
}

#[test]
fn check_validates_without_running() {
    let exec = Recorder::echo();
    let rt = runtime(exec.clone());
    let ok = rt.check("search", json!({"query": "q"})).unwrap();
    assert_eq!(ok.tool().name(), "search");
    assert_eq!(ok.params()["mode"], json!("web"));
    assert!(rt.check("nope", json!({})).unwrap_err().is_error);
    assert!(exec.calls().is_empty());
}

#[test]
fn args_errors_are_structured() {
    use toolbind::args::{ArgProblem, validate};
    let rt = runtime(Recorder::echo());
    let spec = rt.registry().get("search").unwrap();
    let err = validate(spec, json!({"querry": 1, "mode": "x"})).unwrap_err();
    assert_eq!(err.tool, "search");
    let fields: Vec<Option<&str>> = err.problems.iter().map(ArgProblem::field).collect();
    assert_eq!(fields, [Some("query"), Some("mode"), Some("querry")]);
    assert!(
        matches!(&err.problems[1], ArgProblem::NotInEnum { values, .. } if values == &["web", "news", "images"])
    );
}

// Generated bindings for the fixtures, as an agent compiles them.
mod generated {
    toolbind::tools!("fixtures/core/tools");
}

#[tokio::test]
async fn typed_and_raw_calls_share_one_validator() {
    let exec = Recorder::echo();
    let rt = runtime(exec.clone());
    let bad = [
        json!({"query": 5, "limt": 3}),
        json!({"mode": "video"}),
        json!([1, 2]),
        json!({"query": "x", "api_token": 7}),
    ];
    for args in bad {
        let raw = call(&rt, "search", args.clone()).await;
        assert!(raw.is_error, "{args}");
        let typed = generated::ToolCall::parse(&rt, "search", args.clone()).unwrap_err();
        assert_eq!(
            typed, raw,
            "{args}: the same text for the model on both paths"
        );
    }
    let raw = call(&rt, "serch", json!({})).await;
    assert_eq!(
        generated::ToolCall::parse(&rt, "serch", json!({})).unwrap_err(),
        raw
    );
    assert!(exec.calls().is_empty(), "nothing ran");

    // A valid call with the quirks models send: both paths hand the tool the same params.
    let args = json!({"query": "rust", "limit": "3", "safe": null, "api_token": SECRET});
    call(&rt, "search", args.clone()).await;
    let raw_params = exec.last().params;
    let tc = generated::ToolCall::parse(&rt, "search", args).unwrap();
    assert!(matches!(tc, generated::ToolCall::Search(_)));
    assert!(!format!("{tc:?}").contains(SECRET));
    let r = tc.call(&rt, CallOptions::new().id("typed")).await;
    assert!(!r.is_error, "{r:?}");
    let seen = exec.last();
    assert_eq!(seen.id, "typed");
    assert_eq!(seen.params, raw_params);
    assert_eq!(seen.params["limit"], json!(3));
    assert_eq!(seen.params["mode"], json!("web"));
    assert_eq!(seen.params["api_token"], json!(SECRET));
}

#[tokio::test]
async fn a_drift_at_the_same_version_says_to_bump_it() {
    let exec = Recorder::echo();
    let rt = runtime(exec.clone());
    let params = SearchParams {
        query: "rust".into(),
        ..Default::default()
    };
    let r = rt
        .call_typed::<UnbumpedSearchTool>(params, CallOptions::new())
        .await;
    assert_eq!(r.stop, toolbind::StopReason::ContractDrift);
    assert!(exec.calls().is_empty(), "nothing runs on drift");
    let text = r.text_content();
    assert!(
        text.contains("Both are version 2, so one of them was edited without bumping `version:`")
            && text
                .contains("bump `version:` to 3 in the edited (seed) TOOL.md, sync, and rebuild"),
        "{text}"
    );
    assert!(!text.contains("install the tool version"), "{text}");
}
