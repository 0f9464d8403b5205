//! The agent loop's pieces: batches (order, concurrency limit, `execution: sequential`,
//! one cancel, terminate, malformed arguments) and each provider's round trip on responses
//! in its documented wire format (shapes from the providers' SDK types; see
//! /work/shared/research/integrations.md section B).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use toolbind::batch::{Batch, BatchOptions, ToolCallRequest};
use toolbind::exec::{ExecCall, ExecFuture, Executor};
use toolbind::provider::Provider;
use toolbind::{CancelToken, Content, Loader, Runtime, ToolResult};

const SECRET: &str = "SECRET-provider-zx81";
/// A 1x1 PNG, base64.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

fn tool(dir: &Path, name: &str, extra: &str) {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("TOOL.md"),
        format!(
            "---\nname: {name}\ndescription: Test tool {name}.\nlanguage: bash\n{extra}inputs:\n  ms:\n    type: number\n    description: Sleep.\n    optional: true\n  tag:\n    type: string\n    description: Tag.\n    optional: true\n  terminate:\n    type: boolean\n    description: Ask to stop.\n    optional: true\n  fail:\n    type: boolean\n    description: Fail.\n    optional: true\n  image:\n    type: string\n    description: An image MIME type to return.\n    optional: true\n  token:\n    type: string\n    description: A secret.\n    optional: true\n    sensitive: true\n---\n# {name}\n"
        ),
    )
    .unwrap();
    std::fs::write(d.join("index.sh"), "cat\n").unwrap();
}

#[derive(Default)]
struct Stats {
    running: HashMap<String, usize>,
    max: HashMap<String, usize>,
    running_all: usize,
    max_all: usize,
    started: Vec<String>,
}

/// In-process executor: sleeps `ms`, tracks how many calls run at once (per tool and in
/// all), answers with its tag, an image, an error or `terminate` as asked. Cancellable.
#[derive(Default)]
struct Sleeper {
    stats: Mutex<Stats>,
}

impl Sleeper {
    fn max(&self, tool: &str) -> usize {
        self.stats
            .lock()
            .unwrap()
            .max
            .get(tool)
            .copied()
            .unwrap_or(0)
    }
    fn max_all(&self) -> usize {
        self.stats.lock().unwrap().max_all
    }
    fn started(&self) -> Vec<String> {
        self.stats.lock().unwrap().started.clone()
    }
}

impl Executor for Sleeper {
    fn execute<'a>(&'a self, call: ExecCall<'a>) -> ExecFuture<'a> {
        Box::pin(async move {
            let p: Map<String, Value> = call.params;
            let tool = call.tool.name().to_owned();
            let tag = p
                .get("tag")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            {
                let mut s = self.stats.lock().unwrap();
                let n = s.running.entry(tool.clone()).or_default();
                *n += 1;
                let n = *n;
                let m = s.max.entry(tool.clone()).or_default();
                *m = (*m).max(n);
                s.running_all += 1;
                s.max_all = s.max_all.max(s.running_all);
                s.started.push(format!("{tool}:{tag}"));
            }
            let ms = p.get("ms").and_then(Value::as_u64).unwrap_or(0);
            let cancelled = tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(ms)) => false,
                _ = call.cancel.cancelled() => true,
            };
            {
                let mut s = self.stats.lock().unwrap();
                *s.running.get_mut(&tool).unwrap() -= 1;
                s.running_all -= 1;
            }
            if cancelled {
                return ToolResult::error(format!("{tag} cancelled"));
            }
            if p.get("fail") == Some(&json!(true)) {
                return ToolResult::error(format!("{tag} failed"));
            }
            let mut r = ToolResult::text(format!("done {tag}"));
            if let Some(mime) = p.get("image").and_then(Value::as_str) {
                r.content.push(Content::Image {
                    data: PNG.into(),
                    mime_type: mime.into(),
                });
            }
            r.terminate = p.get("terminate") == Some(&json!(true));
            r
        })
    }
}

fn setup() -> (Runtime, Arc<Sleeper>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    tool(dir.path(), "par", "");
    tool(dir.path(), "seq", "execution: sequential\n");
    let loaded = Loader::new().dir(dir.path()).quiet().load();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let exec = Arc::new(Sleeper::default());
    let rt = Runtime::builder()
        .registry(loaded.registry)
        .executor(exec.clone())
        .build();
    (rt, exec, dir)
}

fn req(id: &str, name: &str, args: Value) -> ToolCallRequest {
    ToolCallRequest::new(id, name, args)
}

fn texts(b: &Batch) -> Vec<String> {
    b.results.iter().map(|a| a.result.text_content()).collect()
}

/// Bounds every test: a hang is a failure, not a stuck CI job.
async fn bounded<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(20), f)
        .await
        .expect("finished in time")
}

// ---- batches ----

#[tokio::test]
async fn a_batch_runs_concurrently_and_answers_in_call_order() {
    let (rt, exec, _d) = setup();
    let calls = (0..4)
        .map(|i| {
            req(
                &format!("c{i}"),
                "par",
                json!({"ms": 200 - i * 40, "tag": format!("t{i}")}),
            )
        })
        .collect();
    let b = bounded(rt.call_batch(calls, BatchOptions::new())).await;
    assert_eq!(texts(&b), ["done t0", "done t1", "done t2", "done t3"]);
    let ids: Vec<&str> = b.results.iter().map(|a| a.call.id.as_str()).collect();
    assert_eq!(ids, ["c0", "c1", "c2", "c3"]);
    assert_eq!(exec.max("par"), 4, "all four ran at once");
}

#[tokio::test]
async fn the_concurrency_limit_holds() {
    let (rt, exec, _d) = setup();
    let calls = (0..6)
        .map(|i| {
            req(
                &format!("c{i}"),
                "par",
                json!({"ms": 30, "tag": i.to_string()}),
            )
        })
        .collect();
    let b = bounded(rt.call_batch(calls, BatchOptions::new().concurrency(2))).await;
    assert_eq!(b.results.len(), 6);
    assert!(b.results.iter().all(|a| !a.result.is_error));
    assert_eq!(exec.max_all(), 2);
}

#[tokio::test]
async fn a_sequential_tool_runs_one_call_at_a_time_in_call_order() {
    let (rt, exec, _d) = setup();
    let calls = vec![
        req("1", "seq", json!({"ms": 60, "tag": "a"})),
        req("2", "par", json!({"ms": 60, "tag": "x"})),
        req("3", "seq", json!({"ms": 10, "tag": "b"})),
        req("4", "par", json!({"ms": 60, "tag": "y"})),
        req("5", "seq", json!({"ms": 0, "tag": "c"})),
    ];
    let b = bounded(rt.call_batch(calls, BatchOptions::new())).await;
    assert_eq!(
        texts(&b),
        ["done a", "done x", "done b", "done y", "done c"]
    );
    assert_eq!(exec.max("seq"), 1);
    assert_eq!(exec.max("par"), 2, "the parallel tool is not held up");
    assert!(
        exec.max_all() >= 2,
        "other tools run beside the sequential one"
    );
    let seq_order: Vec<String> = exec
        .started()
        .into_iter()
        .filter(|s| s.starts_with("seq:"))
        .collect();
    assert_eq!(seq_order, ["seq:a", "seq:b", "seq:c"]);
}

#[tokio::test]
async fn a_sequential_tool_is_serialised_across_batches() {
    let (rt, exec, _d) = setup();
    let batch = |tag: &str| {
        (0..3)
            .map(|i| {
                req(
                    &format!("{tag}{i}"),
                    "seq",
                    json!({"ms": 20, "tag": format!("{tag}{i}")}),
                )
            })
            .collect::<Vec<_>>()
    };
    let (a, b) = bounded(async {
        tokio::join!(
            rt.call_batch(batch("a"), BatchOptions::new()),
            rt.call_batch(batch("b"), BatchOptions::new())
        )
    })
    .await;
    assert_eq!(texts(&a), ["done a0", "done a1", "done a2"]);
    assert_eq!(texts(&b), ["done b0", "done b1", "done b2"]);
    assert_eq!(exec.max("seq"), 1);
}

#[tokio::test]
async fn terminate_is_reported_when_every_result_says_so() {
    let (rt, _exec, _d) = setup();
    let all = vec![
        req("1", "par", json!({"terminate": true})),
        req("2", "seq", json!({"terminate": true})),
    ];
    let b = bounded(rt.call_batch(all, BatchOptions::new())).await;
    assert!(b.results.iter().all(|a| a.result.terminate));
    assert!(b.terminate());

    let one_not = vec![
        req("1", "par", json!({"terminate": true})),
        req("2", "par", json!({})),
    ];
    assert!(
        !bounded(rt.call_batch(one_not, BatchOptions::new()))
            .await
            .terminate()
    );

    // An error (here an unknown tool) keeps the loop going: the model must see it.
    let with_error = vec![
        req("1", "par", json!({"terminate": true})),
        req("2", "nope", json!({})),
    ];
    assert!(
        !bounded(rt.call_batch(with_error, BatchOptions::new()))
            .await
            .terminate()
    );
    assert!(
        !bounded(rt.call_batch(Vec::new(), BatchOptions::new()))
            .await
            .terminate()
    );
}

#[tokio::test]
async fn terminate_is_read_from_what_a_tool_returns_and_never_sent_to_the_model() {
    let r: ToolResult = serde_json::from_value(
        json!({"content": [{"type": "text", "text": "bye"}], "terminate": true}),
    )
    .unwrap();
    assert!(r.terminate);
    let plain: ToolResult =
        serde_json::from_value(json!({"content": [{"type": "text", "text": "hi"}]})).unwrap();
    assert!(!plain.terminate);
    assert!(!serde_json::to_string(&plain).unwrap().contains("terminate"));
}

#[tokio::test]
async fn malformed_argument_json_is_an_error_result_and_nothing_runs() {
    let (rt, exec, _d) = setup();
    let calls = vec![
        ToolCallRequest::from_json_text("1", "par", &format!("{{\"token\": \"{SECRET}\", ")),
        ToolCallRequest::from_json_text("2", "par", "{\"tag\": \"ok\"}"),
        ToolCallRequest::from_json_text("3", "par", ""),
    ];
    let b = bounded(rt.call_batch(calls, BatchOptions::new())).await;
    let bad = &b.results[0].result;
    assert!(bad.is_error);
    let text = bad.text_content();
    assert!(
        text.contains("tool `par` was not run: the arguments are not valid JSON"),
        "{text}"
    );
    assert!(
        !text.contains(SECRET),
        "the malformed text is not echoed: {text}"
    );
    assert_eq!(b.results[1].result.text_content(), "done ok");
    assert!(!b.results[2].result.is_error, "empty arguments mean none");
    assert_eq!(exec.started(), ["par:ok", "par:"]);
}

#[tokio::test]
async fn one_cancel_stops_the_whole_batch() {
    let (rt, _exec, _d) = setup();
    let cancel = CancelToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        trigger.cancel();
    });
    let calls = vec![
        req("1", "par", json!({"ms": 60_000, "tag": "a"})),
        req("2", "seq", json!({"ms": 60_000, "tag": "b"})),
        req("3", "seq", json!({"ms": 60_000, "tag": "c"})),
    ];
    let b = bounded(rt.call_batch(calls, BatchOptions::new().cancel(cancel))).await;
    assert!(b.results.iter().all(|a| a.result.is_error), "{b:?}");
    assert_eq!(b.results[0].result.text_content(), "a cancelled");
    // The waiting call of the sequential tool never started.
    assert!(
        b.results[2]
            .result
            .text_content()
            .contains("cancelled before it started"),
        "{b:?}"
    );
}

// ---- provider round trips ----

/// Runs a provider response's calls and returns the messages to send back.
async fn round_trip(rt: &Runtime, p: Provider, response: &Value) -> (Batch, Vec<Value>) {
    let calls = p.tool_calls(response);
    let b = bounded(rt.call_batch(calls, BatchOptions::new())).await;
    let msgs = p.results(&b);
    for m in &msgs {
        assert!(
            !m.to_string().contains(SECRET),
            "a secret reached {p:?}: {m}"
        );
    }
    (b, msgs)
}

#[tokio::test]
async fn openai_chat_round_trip() {
    let (rt, _exec, _d) = setup();
    let defs = Provider::OpenAiChat.definitions(rt.registry(), false);
    assert_eq!(defs[0]["type"], "function");
    assert_eq!(defs[0]["function"]["name"], "par");
    // A Chat Completions response with parallel calls: good, malformed JSON, an unknown
    // tool, an image result, and a `custom` tool call that is not toolbind's.
    let response = json!({
        "id": "chatcmpl-1", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "par",
                    "arguments": format!("{{\"tag\":\"a\",\"token\":\"{SECRET}\"}}")}},
                {"id": "call_b", "type": "function", "function": {"name": "par", "arguments": "{\"tag\": "}},
                {"id": "call_c", "type": "function", "function": {"name": "parr", "arguments": "{}"}},
                {"id": "call_d", "type": "function", "function": {"name": "seq",
                    "arguments": "{\"tag\":\"d\",\"image\":\"image/png\"}"}},
                {"id": "call_e", "type": "custom", "custom": {"name": "x", "input": "y"}}
            ]}}]
    });
    let turn = Provider::OpenAiChat.model_turn(&response);
    assert_eq!(turn, [response["choices"][0]["message"].clone()]);
    let (b, msgs) = round_trip(&rt, Provider::OpenAiChat, &response).await;
    assert_eq!(b.results.len(), 4, "the custom call is not ours");
    assert_eq!(msgs.len(), 4);
    for (m, id) in msgs.iter().zip(["call_a", "call_b", "call_c", "call_d"]) {
        assert_eq!(m["role"], "tool");
        assert_eq!(m["tool_call_id"], id);
        assert_eq!(m.as_object().unwrap().len(), 3, "{m}");
    }
    assert_eq!(msgs[0]["content"], "done a");
    let malformed = msgs[1]["content"].as_str().unwrap();
    assert!(
        malformed.starts_with("Error: tool `par` was not run: the arguments are not valid JSON"),
        "{malformed}"
    );
    let unknown = msgs[2]["content"].as_str().unwrap();
    assert!(
        unknown.starts_with("Error: unknown tool `parr` (did you mean `par`?)"),
        "{unknown}"
    );
    // Chat tool messages are text only: the image is described.
    let img = msgs[3]["content"].as_str().unwrap();
    assert!(img.starts_with("done d\n[image: image/png, about"), "{img}");

    let answer = json!({"choices": [{"message": {"role": "assistant", "content": "All done."}, "finish_reason": "stop"}]});
    assert!(Provider::OpenAiChat.tool_calls(&answer).is_empty());
    assert_eq!(
        Provider::OpenAiChat.text(&answer).as_deref(),
        Some("All done.")
    );
}

#[tokio::test]
async fn openai_responses_round_trip() {
    let (rt, _exec, _d) = setup();
    let defs = Provider::OpenAiResponses.definitions(rt.registry(), false);
    assert_eq!(defs[0]["type"], "function");
    assert_eq!(defs[0]["name"], "par");
    assert_eq!(defs[0]["strict"], false);
    assert!(defs[0].get("function").is_none());
    let strict = Provider::OpenAiResponses.definitions(rt.registry(), true);
    assert_eq!(strict[0]["strict"], true);

    let response = json!({
        "id": "resp_1", "object": "response", "status": "completed",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "par",
             "arguments": "{\"tag\":\"one\",\"image\":\"image/png\"}", "status": "completed"},
            {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "par",
             "arguments": "{\"fail\": true, \"tag\": \"two\"}", "status": "completed"},
            {"type": "function_call", "id": "fc_3", "call_id": "call_3", "name": "seq",
             "arguments": "not json", "status": "completed"}
        ]
    });
    assert_eq!(
        Provider::OpenAiResponses.model_turn(&response).len(),
        4,
        "reasoning items go back too"
    );
    let (_b, msgs) = round_trip(&rt, Provider::OpenAiResponses, &response).await;
    assert_eq!(msgs.len(), 3);
    assert_eq!(
        msgs[0],
        json!({"type": "function_call_output", "call_id": "call_1", "output": [
            {"type": "input_text", "text": "done one"},
            {"type": "input_image", "image_url": format!("data:image/png;base64,{PNG}")}
        ]})
    );
    assert_eq!(
        msgs[1],
        json!({"type": "function_call_output", "call_id": "call_2", "output": "Error: two failed"})
    );
    assert_eq!(msgs[2]["call_id"], "call_3");
    assert!(
        msgs[2]["output"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );

    let answer = json!({"output": [{"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": "Two ", "annotations": []},
        {"type": "output_text", "text": "done.", "annotations": []}]}]});
    assert!(Provider::OpenAiResponses.tool_calls(&answer).is_empty());
    assert_eq!(
        Provider::OpenAiResponses.text(&answer).as_deref(),
        Some("Two done.")
    );
}

#[tokio::test]
async fn anthropic_round_trip() {
    let (rt, _exec, _d) = setup();
    let defs = Provider::Anthropic.definitions(rt.registry(), false);
    assert_eq!(defs[0]["name"], "par");
    assert!(defs[0]["input_schema"].is_object());
    let response = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "tool_use",
        "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_1", "name": "par", "input": {"tag": "a", "image": "image/png"}},
            {"type": "tool_use", "id": "toolu_2", "name": "par", "input": {"tag": "b", "fail": true}},
            {"type": "tool_use", "id": "toolu_3", "name": "seq", "input": {"tag": "c", "image": "image/bmp"}}
        ]
    });
    assert_eq!(
        Provider::Anthropic.model_turn(&response),
        [json!({"role": "assistant", "content": response["content"]})]
    );
    assert_eq!(
        Provider::Anthropic.text(&response).as_deref(),
        Some("Let me check.")
    );
    let (_b, msgs) = round_trip(&rt, Provider::Anthropic, &response).await;
    // One user message, tool_result blocks only, in call order.
    assert_eq!(msgs.len(), 1);
    assert_eq!(msgs[0]["role"], "user");
    let blocks = msgs[0]["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 3);
    assert_eq!(
        blocks[0],
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": [
            {"type": "text", "text": "done a"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
        ], "is_error": false})
    );
    assert_eq!(
        blocks[1],
        json!({"type": "tool_result", "tool_use_id": "toolu_2",
               "content": [{"type": "text", "text": "b failed"}], "is_error": true})
    );
    // A media type Anthropic does not take is described instead.
    let bmp = blocks[2]["content"][1]["text"].as_str().unwrap();
    assert!(bmp.starts_with("[image: image/bmp"), "{bmp}");
}

#[tokio::test]
async fn gemini_round_trip() {
    let (rt, _exec, _d) = setup();
    let defs = Provider::Gemini.definitions(rt.registry(), false);
    assert_eq!(defs[0]["functionDeclarations"][0]["name"], "par");
    let response = json!({
        "candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "par", "args": {"tag": "a", "image": "image/png"}}, "thoughtSignature": "sig-1"},
            {"functionCall": {"name": "par", "args": {"tag": "b", "fail": true}}},
            {"functionCall": {"id": "given", "name": "seq", "args": {"tag": "c"}}}
        ]}, "finishReason": "STOP"}]
    });
    let calls = Provider::Gemini.tool_calls(&response);
    let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_0_par", "call_1_par", "given"]);
    assert_eq!(
        Provider::Gemini.tool_calls(&response),
        calls,
        "generated ids are stable"
    );
    assert!(calls[0].generated_id && !calls[2].generated_id);
    // The model turn goes back unchanged, thought signature included.
    assert_eq!(
        Provider::Gemini.model_turn(&response),
        [response["candidates"][0]["content"].clone()]
    );
    let (_b, msgs) = round_trip(&rt, Provider::Gemini, &response).await;
    assert_eq!(msgs.len(), 1);
    assert_eq!(msgs[0]["role"], "user");
    let parts = msgs[0]["parts"].as_array().unwrap();
    assert_eq!(
        parts[0],
        json!({"functionResponse": {"name": "par", "response": {"output": "done a"},
               "parts": [{"inlineData": {"mimeType": "image/png", "data": PNG}}]}})
    );
    assert_eq!(
        parts[1],
        json!({"functionResponse": {"name": "par", "response": {"error": "b failed"}}})
    );
    assert_eq!(
        parts[2],
        json!({"functionResponse": {"id": "given", "name": "seq", "response": {"output": "done c"}}})
    );
    let answer = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"text": "thinking...", "thought": true}, {"text": "Done."}]}}]});
    assert!(Provider::Gemini.tool_calls(&answer).is_empty());
    assert_eq!(Provider::Gemini.text(&answer).as_deref(), Some("Done."));
}

#[tokio::test]
async fn a_batch_with_no_calls_sends_nothing_back() {
    let b = Batch::default();
    for p in Provider::ALL {
        assert!(p.results(&b).is_empty(), "{p:?}");
    }
}
