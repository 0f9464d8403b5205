//! Bindings for three real MCP servers' tools, from the snapshots that
//! cli/tests/mcp_snapshot.rs proves are what the pinned reference servers list today.
#![deny(warnings)]

use toolbind::tool::McpTool;

mod servers {
    toolbind::tools!(
        "../fixtures/mcp/filesystem.json",
        "../fixtures/mcp/memory.json",
        "../fixtures/mcp/everything.json"
    );
}
use servers::{filesystem, memory};

fn main() {
    // Nested objects and arrays become typed structs and vectors.
    let edit = filesystem::edit_file::Params {
        path: "notes.txt".to_owned(),
        edits: vec![filesystem::edit_file::Edit {
            old_text: "draft".to_owned(),
            new_text: "final".to_owned(),
        }],
        dry_run: true,
    };
    let call = filesystem::ToolCall::EditFile(edit);
    assert_eq!(call.name(), "edit_file");
    assert_eq!(call.mcp_name(), "edit_file");
    let args = call.to_args();
    assert_eq!(args["edits"][0]["oldText"], "draft");
    assert_eq!(args["dryRun"], true);
    // A model's call parses back into the same params, checked against the server's schema.
    let parsed = filesystem::ToolCall::from_call("edit_file", args).unwrap();
    assert_eq!(parsed, call);
    // A parsed call runs on a runtime given the server (`RuntimeBuilder::mcp_server`).
    let runtime = toolbind::Runtime::builder().build();
    let running = parsed.call(&runtime, toolbind::CallOptions::new());
    drop(running);
    let bad = filesystem::ToolCall::from_call(
        "edit_file",
        serde_json::json!({"path": "a", "edits": [{"oldText": "x"}]}),
    );
    let message = bad.unwrap_err().to_string();
    assert!(message.contains("newText"), "{message}");

    let entities = memory::create_entities::Params {
        entities: vec![memory::create_entities::Entity {
            name: "toolbind".to_owned(),
            entity_type: "project".to_owned(),
            observations: vec!["generates typed MCP bindings".to_owned()],
        }],
    };
    let args = memory::ToolCall::CreateEntities(entities).to_args();
    assert_eq!(args["entities"][0]["entityType"], "project");

    // The bindings carry their snapshot: the runtime is given it without a second path.
    let server = toolbind::mcp::McpServer::stdio("filesystem", "npx", ["-y", "fs"])
        .snapshot(filesystem::snapshot());
    let carried = server.get_snapshot().unwrap();
    assert_eq!(carried.name, filesystem::SERVER);
    assert_eq!(carried.tools.len(), filesystem::TOOLS.len());
    for t in filesystem::TOOLS {
        assert_eq!(carried.tool(t.mcp_name).unwrap().contract, t.contract);
    }
    // A struct literal names every field; `new` only the required ones.
    let short = filesystem::edit_file::Params::new(
        "notes.txt".to_owned(),
        vec![filesystem::edit_file::Edit::new(
            "draft".to_owned(),
            "final".to_owned(),
        )],
    )
    .with_dry_run(true);
    assert_eq!(filesystem::ToolCall::EditFile(short).to_args()["dryRun"], true);

    type T = filesystem::edit_file::Tool;
    assert_eq!(<T as McpTool>::SERVER, "filesystem");
    assert!(<T as McpTool>::CONTRACT.starts_with("sha256:"));
    let schema: serde_json::Value = serde_json::from_str(<T as McpTool>::INPUT_SCHEMA).unwrap();
    assert_eq!(schema["required"], serde_json::json!(["path", "edits"]));
    assert_eq!(filesystem::TOOLS.len(), 14);
    assert_eq!(memory::TOOLS.len(), 9);
    assert_eq!(servers::everything::TOOLS.len(), 13);
    assert!(filesystem::ToolCall::NAMES.contains(&"read_text_file"));
}
