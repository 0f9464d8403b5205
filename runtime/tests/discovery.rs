//! Progressive discovery (`toolbind::discovery`): a scripted model that is first shown a
//! few tools and `search_tools`, finds a tool it was not shown, and calls it on its next
//! turn — over OpenAI Chat, OpenAI Responses, Gemini and Anthropic (deferred loading with
//! `tool_reference` blocks, and without). The tools are real bash tools run in the jail.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use toolbind::batch::{Batch, BatchOptions, ToolCallRequest};
use toolbind::discovery::{Discovery, SEARCH_TOOL};
use toolbind::provider::Provider;
use toolbind::{Loader, Registry, Runtime};

/// (name, description) of the catalog's tools; each answers with its name and its
/// arguments.
const CATALOG: &[(&str, &str)] = &[
    (
        "create_invoice",
        "Create an invoice for a customer and email it",
    ),
    (
        "convert_currency",
        "Convert an amount of money from one currency to another",
    ),
    (
        "get_forecast",
        "Get the weather forecast for a city for the next days",
    ),
    (
        "list_calendar_events",
        "List the events on a calendar between two dates",
    ),
    ("book_meeting_room", "Book a meeting room for a time slot"),
    ("translate_text", "Translate text into another language"),
    (
        "resize_image",
        "Resize an image to a given width and height",
    ),
    ("send_sms", "Send a text message to a phone number"),
    (
        "lookup_stock_price",
        "Look up the latest price of a stock ticker",
    ),
    ("todo", "Manage the session's todo list"),
];

fn write_tool(dir: &Path, name: &str, description: &str, extra: &str) {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("TOOL.md"),
        format!(
            "---\nname: {name}\ndescription: {description}\nlanguage: bash\n{extra}inputs:\n  \
             city:\n    type: string\n    description: The place.\n    optional: true\n---\n\
             # {name}\n"
        ),
    )
    .unwrap();
    std::fs::write(d.join("index.sh"), format!("printf '{name}:'; cat\n")).unwrap();
}

fn catalog(dir: &Path) -> Registry {
    for (name, description) in CATALOG {
        let extra = if *name == "todo" {
            "discovery: always\n"
        } else {
            ""
        };
        write_tool(dir, name, description, extra);
    }
    let loaded = Loader::new().dir(dir).quiet().load();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    loaded.registry
}

async fn bounded<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .expect("finished in time")
}

/// The names a request's `tools` define, with whether each is deferred.
fn defined(p: Provider, tools: &Value) -> Vec<(String, bool)> {
    let list = match p {
        Provider::Gemini => tools[0]["functionDeclarations"].clone(),
        _ => tools.clone(),
    };
    list.as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let name = d
                .pointer("/function/name")
                .or_else(|| d.get("name"))
                .and_then(Value::as_str)
                .unwrap()
                .to_owned();
            (name, d.get("defer_loading") == Some(&json!(true)))
        })
        .collect()
}

fn shown(p: Provider, tools: &Value) -> Vec<String> {
    defined(p, tools)
        .into_iter()
        .filter(|(_, deferred)| !deferred)
        .map(|(n, _)| n)
        .collect()
}

/// A model response that calls `name` with `args`, in `p`'s wire format.
fn response(p: Provider, id: &str, name: &str, args: Value) -> Value {
    match p {
        Provider::OpenAiChat => json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": id, "type": "function",
                 "function": {"name": name, "arguments": args.to_string()}}]}}]}),
        Provider::OpenAiResponses => json!({"output": [{"type": "function_call", "id": "fc_1",
            "call_id": id, "name": name, "arguments": args.to_string(), "status": "completed"}]}),
        Provider::Anthropic => json!({"role": "assistant", "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": id, "name": name, "input": args}]}),
        _ => json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"id": id, "name": name, "args": args}}]}}]}),
    }
}

/// One turn: the calls of `response` run through `found`, and the results as `p` sends them.
async fn turn(
    rt: &Runtime,
    found: &mut Discovery,
    p: Provider,
    response: &Value,
) -> (Batch, Vec<Value>) {
    let calls = p.tool_calls(response);
    let batch = bounded(found.call_batch(rt, calls, BatchOptions::new())).await;
    let results = found.results(&batch);
    (batch, results)
}

async fn finds_and_calls(p: Provider, defer: bool) {
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::builder().registry(catalog(dir.path())).build();
    let mut found = Discovery::new(p).defer_loading(defer);
    let deferring = defer && p == Provider::Anthropic;

    // Turn 1: the model sees the core tool (TOOL.md `discovery: always`) and the search.
    let tools = found.definitions(&rt.tool_list());
    assert_eq!(shown(p, &tools), ["todo", SEARCH_TOOL], "{p:?}");
    let all = defined(p, &tools);
    assert_eq!(all.len(), if deferring { CATALOG.len() + 1 } else { 2 });
    let prompt = found.system_prompt(&rt.tool_list());
    assert!(prompt.contains("- todo:"), "{prompt}");
    assert!(!prompt.contains("get_forecast"), "{prompt}");
    assert!(prompt.contains("9 more tools are not listed"), "{prompt}");

    // It calls the forecast tool it was not shown: refused, with what to do.
    let (b, _) = turn(
        &rt,
        &mut found,
        p,
        &response(p, "c0", "get_forecast", json!({"city": "Oslo"})),
    )
    .await;
    let refusal = b.results[0].result.text_content();
    assert!(b.results[0].result.is_error, "{refusal}");
    assert!(refusal.contains("search_tools first"), "{refusal}");

    // It searches.
    let (b, results) = turn(
        &rt,
        &mut found,
        p,
        &response(
            p,
            "c1",
            SEARCH_TOOL,
            json!({"query": "what will the weather be tomorrow", "limit": 3}),
        ),
    )
    .await;
    let search = &b.results[0].result;
    assert!(!search.is_error, "{}", search.text_content());
    assert_eq!(
        found.found()[0],
        "get_forecast",
        "{}",
        search.text_content()
    );
    if deferring {
        let block = &results[0]["content"][0];
        assert_eq!(block["type"], "tool_result");
        assert_eq!(
            block["content"][0],
            json!({"type": "tool_reference", "tool_name": "get_forecast"})
        );
    } else {
        let text = search.text_content();
        assert!(
            text.contains("get_forecast: Get the weather forecast"),
            "{text}"
        );
    }

    // Turn 2: the tool found is shown (Anthropic: the same deferred array, the reference
    // loads it), and the call runs in the jail.
    let again = found.definitions(&rt.tool_list());
    if deferring {
        assert_eq!(again, tools, "the deferred array stays the same");
    } else {
        assert!(
            shown(p, &again).contains(&"get_forecast".to_owned()),
            "{p:?}: {again}"
        );
    }
    let (b, _) = turn(
        &rt,
        &mut found,
        p,
        &response(p, "c2", "get_forecast", json!({"city": "Oslo"})),
    )
    .await;
    let r = &b.results[0].result;
    assert!(!r.is_error, "{}", r.text_content());
    assert!(
        r.text_content().starts_with("get_forecast:{"),
        "{}",
        r.text_content()
    );
    assert!(r.text_content().contains("Oslo"), "{}", r.text_content());
}

#[tokio::test]
async fn openai_chat_model_finds_and_calls_a_tool_it_was_not_shown() {
    finds_and_calls(Provider::OpenAiChat, true).await;
}

#[tokio::test]
async fn openai_responses_model_finds_and_calls_a_tool_it_was_not_shown() {
    finds_and_calls(Provider::OpenAiResponses, true).await;
}

#[tokio::test]
async fn gemini_model_finds_and_calls_a_tool_it_was_not_shown() {
    finds_and_calls(Provider::Gemini, true).await;
}

#[tokio::test]
async fn anthropic_model_finds_a_deferred_tool_by_reference_and_calls_it() {
    finds_and_calls(Provider::Anthropic, true).await;
}

#[tokio::test]
async fn anthropic_without_deferred_loading_is_shown_what_it_found() {
    finds_and_calls(Provider::Anthropic, false).await;
}

#[tokio::test]
async fn bad_searches_get_clear_answers_and_find_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::builder().registry(catalog(dir.path())).build();
    let mut found = Discovery::new(Provider::OpenAiChat).core(["send_sms"]);
    let megabyte = "weather ".repeat(131_072);
    let calls = vec![
        ToolCallRequest::new("a", SEARCH_TOOL, json!({})),
        ToolCallRequest::new("b", SEARCH_TOOL, json!({"query": "   "})),
        ToolCallRequest::new("c", SEARCH_TOOL, json!({"query": megabyte})),
        ToolCallRequest::new("d", SEARCH_TOOL, json!({"query": "weather", "limit": 0})),
        ToolCallRequest::new("e", SEARCH_TOOL, json!({"query": "quokka zebra"})),
        ToolCallRequest::new("f", SEARCH_TOOL, json!({"query": "погода"})),
        ToolCallRequest::from_json_text("g", SEARCH_TOOL, "{\"query\": "),
    ];
    let b = bounded(found.call_batch(&rt, calls, BatchOptions::new())).await;
    let text = |i: usize| b.results[i].result.text_content();
    assert!(text(0).contains("needs `query`"), "{}", text(0));
    assert!(text(1).contains("no words to search for"), "{}", text(1));
    assert!(text(2).contains("the most taken is 4096"), "{}", text(2));
    assert!(text(3).contains("`limit` must be"), "{}", text(3));
    for i in [0, 1, 2, 3, 6] {
        assert!(b.results[i].result.is_error, "{i}: {}", text(i));
    }
    assert!(!b.results[4].result.is_error);
    assert!(text(4).starts_with("No tool matches"), "{}", text(4));
    // Russian for "weather": the glossary of other languages' words finds the forecast.
    assert!(text(5).contains("get_forecast"), "{}", text(5));
    assert_eq!(found.found(), ["get_forecast"]);
    // A core tool named by the agent is shown from the start.
    let tools = found.definitions(&rt.tool_list());
    let names = shown(Provider::OpenAiChat, &tools);
    assert!(names.contains(&"send_sms".to_owned()) && names.contains(&"todo".to_owned()));
}

#[tokio::test]
async fn a_tool_gone_between_search_and_call_is_an_unknown_tool() {
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::builder().registry(catalog(dir.path())).build();
    let mut found = Discovery::new(Provider::Anthropic);
    let search = vec![ToolCallRequest::new(
        "a",
        SEARCH_TOOL,
        json!({"query": "convert money to another currency", "limit": 1}),
    )];
    bounded(found.call_batch(&rt, search, BatchOptions::new())).await;
    assert_eq!(found.found(), ["convert_currency"]);

    // The tool leaves (a server dropped it, the folder was reloaded without it).
    std::fs::remove_dir_all(dir.path().join("convert_currency")).unwrap();
    let fewer = Loader::new().dir(dir.path()).quiet().load().registry;
    let rt = Runtime::builder().registry(fewer).build();
    let tools = found.definitions(&rt.tool_list());
    assert!(
        !defined(Provider::Anthropic, &tools)
            .iter()
            .any(|(n, _)| n == "convert_currency")
    );
    let call = vec![ToolCallRequest::new("b", "convert_currency", json!({}))];
    let b = bounded(found.call_batch(&rt, call, BatchOptions::new())).await;
    let text = b.results[0].result.text_content();
    assert!(b.results[0].result.is_error);
    assert!(text.contains("unknown tool `convert_currency`"), "{text}");
}

#[tokio::test]
async fn what_the_provider_cannot_carry_is_never_found_nor_listed() {
    let dir = tempfile::tempdir().unwrap();
    // A tool named like the search tool, and one with an untyped input (as an MCP server's
    // schema may have), which Gemini refuses.
    write_tool(dir.path(), SEARCH_TOOL, "Search the forecast archive", "");
    write_tool(dir.path(), "weird_delete", "Delete a forecast record", "");
    let mut list = catalog(dir.path());
    let weird = list.get("weird_delete").unwrap().spec().clone();
    let mut untyped = weird.clone();
    untyped.inputs[0].ty = toolbind_codegen::model::InputType::Any;
    let mut rebuilt = Registry::new();
    for t in list.iter() {
        if t.name() == "weird_delete" {
            rebuilt
                .insert(toolbind::ToolInfo::from(untyped.clone()))
                .unwrap();
        } else {
            rebuilt.insert(t.clone()).unwrap();
        }
    }
    list = rebuilt;
    assert!(list.get(SEARCH_TOOL).is_some());
    let rt = Runtime::builder().registry(list).build();
    let p = Provider::Gemini;
    let mut found = Discovery::new(p);
    let names: Vec<String> = defined(p, &found.definitions(&rt.tool_list()))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        names.iter().filter(|n| *n == SEARCH_TOOL).count(),
        1,
        "one search_tools: {names:?}"
    );
    assert!(!names.contains(&"weird_delete".to_owned()), "{names:?}");
    let call = ToolCallRequest::new(
        "s",
        SEARCH_TOOL,
        json!({"query": "delete a forecast record from the archive", "limit": 20}),
    );
    let b = bounded(found.call_batch(&rt, vec![call], BatchOptions::new())).await;
    assert!(!b.results[0].result.is_error);
    assert!(!found.found().is_empty());
    assert!(
        !found
            .found()
            .iter()
            .any(|n| n == "weird_delete" || n == SEARCH_TOOL),
        "{:?}",
        found.found()
    );
    // The same tool is found where the dialect carries it.
    let mut anthropic = Discovery::new(Provider::Anthropic).defer_loading(false);
    let call = ToolCallRequest::new(
        "s",
        SEARCH_TOOL,
        json!({"query": "delete a forecast record", "limit": 3}),
    );
    bounded(anthropic.call_batch(&rt, vec![call], BatchOptions::new())).await;
    assert_eq!(anthropic.found()[0], "weird_delete");
    // A name no tool has: the nearest shown name, never the whole catalog.
    let b = bounded(found.call_batch(
        &rt,
        vec![ToolCallRequest::new("u", "tod", json!({}))],
        BatchOptions::new(),
    ))
    .await;
    let text = b.results[0].result.text_content();
    assert!(text.contains("did you mean `todo`"), "{text}");
    assert!(
        !text.contains("convert_currency"),
        "the catalog leaked: {text}"
    );
}
