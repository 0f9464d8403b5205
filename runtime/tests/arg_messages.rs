//! What a model is told about a bad argument for an MCP tool's input: a union of JSON
//! types is named as what it is (not "any JSON value"), and a whole-number bound prints as
//! an integer, however large.

use serde_json::{Value, json};
use toolbind::ToolInfo;
use toolbind::args::validate;
use toolbind_codegen::mcp::{Snapshot, SnapshotTool};

fn mcp_tool(input_schema: Value) -> ToolInfo {
    let listed = json!({"name": "probe", "description": "d", "inputSchema": input_schema});
    let tool = SnapshotTool::from_listed(&listed).unwrap();
    let snap = Snapshot::new("srv", Default::default(), "2025-11-25", vec![tool]).unwrap();
    let spec = toolbind_codegen::mcp::tool_specs(&snap, "")
        .into_iter()
        .next()
        .unwrap();
    ToolInfo::from(spec)
}

fn refusal(tool: &ToolInfo, args: Value) -> String {
    validate(tool, args).map(|_| ()).unwrap_err().to_string()
}

#[test]
fn a_union_of_types_is_named_as_what_it_is() {
    let tool = mcp_tool(json!({
        "type": "object",
        "properties": {
            "flag": {"type": ["boolean", "string"], "description": "on, off or auto"},
            "opt": {"anyOf": [{"type": "number"}, {"type": "string"}, {"type": "null"}]}
        },
        "required": ["flag"]
    }));
    for (args, said) in [
        (
            json!({"flag": null}),
            "`flag`: expected a boolean or a string, received null",
        ),
        (
            json!({"flag": 5}),
            "`flag`: expected a boolean or a string, received the number 5",
        ),
        (
            json!({"flag": [true]}),
            "`flag`: expected a boolean or a string, received an array of 1 items",
        ),
        (
            json!({"flag": true, "opt": {}}),
            "`opt`: expected a number, a string or null, received an object",
        ),
    ] {
        let text = refusal(&tool, args.clone());
        assert!(text.contains(said), "{args}: {text}");
        assert!(!text.contains("any JSON value"), "{text}");
    }
    let text = refusal(&tool, json!({}));
    assert!(
        text.contains("`flag`") && text.contains("a boolean or a string"),
        "{text}"
    );
    assert!(!text.contains("any JSON value"), "{text}");
    for ok in [
        json!({"flag": "auto"}),
        json!({"flag": false, "opt": 2}),
        json!({"flag": true, "opt": null}),
    ] {
        assert!(validate(&tool, ok.clone()).is_ok(), "{ok}");
    }
}

#[test]
fn a_large_integer_bound_prints_as_an_integer() {
    let tool = mcp_tool(json!({
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": -9007199254740991i64, "maximum": 9007199254740991i64}},
        "required": ["n"]
    }));
    let text = refusal(&tool, json!({"n": "many"}));
    assert!(
        text.contains("from -9007199254740991 to 9007199254740991"),
        "{text}"
    );
    assert!(!text.contains(".0"), "{text}");
}
