//! The rig adapter (feature `rig`): toolbind's tools driven by rig 0.44's own agent loop
//! (`prompt(..).max_turns(n)`) with rig's scripted `MockCompletionModel`.

use std::sync::Arc;

use rig_agent::AgentBuilder;
use rig_agent::core::message::{AssistantContent, ToolCall, ToolFunction, ToolName};
use rig_agent::core::test_utils::{MockCompletionModel, MockTurn};
use serde_json::json;
use toolbind::{Content, Loader, Runtime, ToolResult};

fn call(id: &str, name: &str, args: serde_json::Value) -> AssistantContent {
    AssistantContent::ToolCall(ToolCall::from_wire(
        id,
        ToolFunction::new(ToolName::new(name).unwrap(), args),
    ))
}

fn runtime(dir: &std::path::Path) -> Arc<Runtime> {
    let t = dir.join("shout");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(
        t.join("TOOL.md"),
        "---\nname: shout\ndescription: Says a word back, loudly.\nlanguage: bash\ninputs:\n  word:\n    type: string\n    description: The word.\n---\n# Shout\n",
    )
    .unwrap();
    std::fs::write(
        t.join("index.sh"),
        "read -r params\nword=${params#*\\\"word\\\":\\\"}\necho \"SHOUTED ${word%%\\\"*}\"\n",
    )
    .unwrap();
    let loaded = Loader::new().dir(dir).quiet().load();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    Arc::new(Runtime::builder().registry(loaded.registry).build())
}

#[tokio::test]
async fn rigs_agent_loop_runs_toolbind_tools() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(dir.path());
    let tools = toolbind::rig::dynamic_tools(&rt);
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name().as_str(), "shout");
    assert!(toolbind::rig::tool_set(&rt).contains("shout"));

    // Turn 1: two parallel calls, the second with a misspelt field; turn 2: the answer.
    let model = MockCompletionModel::from_turns([
        MockTurn::from_contents([
            call("c1", "shout", json!({"word": "hello"})),
            call("c2", "shout", json!({"wrd": "x"})),
        ]),
        MockTurn::text("It shouted back."),
    ]);
    let agent = AgentBuilder::new(model.clone())
        .dynamic_tools(tools)
        .build();
    let answer = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        agent.prompt("shout hello").max_turns(3),
    )
    .await
    .expect("the loop finished")
    .expect("the loop succeeded");
    assert_eq!(answer.output(), "It shouted back.");

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].tools.len(), 1);
    // What rig sent the model on turn 2: both results, the bad call as a tool error with
    // toolbind's model-readable text.
    let history = serde_json::to_string(&requests[1].chat_history).unwrap();
    assert!(history.contains("SHOUTED hello"), "{history}");
    assert!(history.contains("`wrd`"), "{history}");
    assert!(history.contains("\"is_error\":true"), "{history}");
}

#[test]
fn results_become_rig_outputs_and_errors() {
    let mut r = ToolResult::text("a chart");
    r.content.push(Content::Image {
        data: "iVBORw0KGgo=".into(),
        mime_type: "image/png".into(),
    });
    let out = toolbind::rig::to_rig(r).unwrap();
    let blocks = out.as_content();
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[0].as_text(), Some("a chart"));
    let image = serde_json::to_value(&blocks[1]).unwrap();
    assert_eq!(image["type"], "image");
    assert!(image.to_string().contains("iVBORw0KGgo="), "{image}");

    let err = toolbind::rig::to_rig(ToolResult::error("unknown tool `x`")).unwrap_err();
    assert!(err.message().contains("unknown tool `x`"));
    assert!(toolbind::rig::to_rig(ToolResult::default()).is_ok());
}
