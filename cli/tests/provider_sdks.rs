//! The providers' own SDK types accept what toolbind builds for them: the tool
//! definitions of every dialect (the shipped tools and a nested-input fixture) and the
//! tool-result messages of a batch holding every content block type, an error and a
//! spilled binary block's link; and progressive discovery's (`search_tools`, Anthropic's
//! deferred definitions and `tool_reference` results). Checked by the official Python SDKs at pinned versions
//! (tests/clients/requirements.txt: openai, anthropic, google-genai), driven by
//! cli/tests/clients/provider_types.py.

use crate::common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{clients_dir, fixture, shipped_tools};
use serde_json::{Value, json};
use toolbind::batch::{Answered, Batch, ToolCallRequest};
use toolbind::discovery::{Discovery, SEARCH_TOOL};
use toolbind::provider::Provider;
use toolbind::result::{EmbeddedResource, ResourceLink};
use toolbind::{Content, Loader, ToolResult};

fn provider_name(p: Provider) -> &'static str {
    match p {
        Provider::OpenAiChat => "openai_chat",
        Provider::OpenAiResponses => "openai_responses",
        Provider::Anthropic => "anthropic",
        Provider::Gemini => "gemini",
        _ => "unknown",
    }
}

fn batch() -> Batch {
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==";
    let mut link = ResourceLink::new("file:///tmp/spill/t-1-b0-1-0.png", "t-1-b0-1-0.png");
    link.mime_type = Some("image/png".into());
    link.size = Some(209_715_200);
    link.description = Some("an image block of 209715200 bytes, saved to the spill folder".into());
    let every_block = ToolResult::new(vec![
        Content::text("here is everything"),
        Content::Image {
            data: png.into(),
            mime_type: "image/png".into(),
        },
        Content::Audio {
            data: "UklGRg==".into(),
            mime_type: "audio/wav".into(),
        },
        Content::Resource {
            resource: EmbeddedResource::text("file:///notes.md", "# Notes")
                .mime_type("text/markdown"),
        },
        Content::Resource {
            resource: EmbeddedResource::blob("file:///report.pdf", "JVBERi0xLjQK")
                .mime_type("application/pdf"),
        },
        Content::Resource {
            resource: EmbeddedResource::blob("file:///shot.png", png).mime_type("image/png"),
        },
        Content::ResourceLink(link),
    ]);
    let answered = vec![
        Answered::new(
            ToolCallRequest::new("call_1", "todo", json!({"action": "list"})),
            ToolResult::text("1. ship it"),
        ),
        Answered::new(
            ToolCallRequest::new("call_2", "rich_py", json!({"edits": [{"old_text": "a"}]})),
            every_block,
        ),
        Answered::new(
            ToolCallRequest::new("call_3", "rich_py", json!({"edits": []})),
            ToolResult::error("`edits` needs at least 1 item"),
        ),
        Answered::new(
            ToolCallRequest::new("call_4", "rich_py", json!({})),
            ToolResult::new(vec![Content::Image {
                data: png.into(),
                mime_type: "image/png".into(),
            }])
            .failed(toolbind::StopReason::ToolError),
        ),
    ];
    Batch::new(answered)
}

/// A turn in which the model searched for tools and found two.
fn search_batch() -> Batch {
    Batch::new(vec![Answered::new(
        ToolCallRequest::new("call_s", SEARCH_TOOL, json!({"query": "nested edits"})),
        ToolResult::text("Found 2 tools")
            .with_details(json!({"query": "nested edits", "tools": ["rich_py", "web_fetch"]})),
    )])
}

#[test]
fn the_providers_sdk_types_accept_definitions_and_tool_results() {
    let loaded = Loader::new()
        .dir(shipped_tools())
        .dir(fixture("mcp_rich"))
        .quiet()
        .load();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let registry = loaded.registry;
    assert!(registry.get("rich_py").is_some() && registry.get("todo").is_some());
    let batch = batch();
    let mut out = serde_json::Map::new();
    for p in Provider::ALL {
        let mut defs = serde_json::Map::new();
        for strict in [false, true] {
            defs.insert(strict.to_string(), p.definitions(&registry, strict));
        }
        // Progressive discovery: the core tool, `search_tools` and (Anthropic) the others
        // deferred; a search's result (Anthropic: `tool_reference` blocks).
        let mut progressive = serde_json::Map::new();
        for strict in [false, true] {
            let found = Discovery::new(p).strict(strict).core(["todo"]);
            progressive.insert(strict.to_string(), found.definitions(&registry));
        }
        let found = Discovery::new(p).core(["todo"]);
        out.insert(
            provider_name(p).into(),
            json!({
                "definitions": defs,
                "results": p.results(&batch),
                "discovery": {
                    "definitions": progressive,
                    "results": found.results(&search_batch()),
                },
            }),
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("messages.json");
    std::fs::write(
        &file,
        serde_json::to_vec_pretty(&Value::Object(out)).unwrap(),
    )
    .unwrap();

    let python = clients_dir().join("py/bin/python");
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/provider_types.py");
    let mut child = Command::new(python)
        .arg(script)
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the provider SDK checks (run tests/clients/install.sh)");
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(
        o.status.success(),
        "--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    for check in [
        "ok: openai_chat definitions (strict false)",
        "ok: openai_chat definitions (strict true)",
        "ok: openai_chat results",
        "ok: openai_responses definitions (strict false)",
        "ok: openai_responses definitions (strict true)",
        "ok: openai_responses results",
        "ok: anthropic definitions",
        "ok: anthropic results",
        "ok: gemini definitions",
        "ok: gemini results",
        "ok: discovery openai_chat",
        "ok: discovery openai_responses",
        "ok: discovery anthropic deferred definitions and tool_reference results",
        "ok: discovery gemini",
    ] {
        assert!(
            stdout.contains(check),
            "missing `{check}`\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
        );
    }
}
