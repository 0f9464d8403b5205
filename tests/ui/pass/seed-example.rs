//! The seed's example frontmatter (tool_name), through the single-tool form.
#![deny(warnings)]

use toolbind::{Secret, Tool};
use toolbind::tool::Language;

toolbind::tool!("../../../codegen/tests/fixtures/valid/tool_name");

fn main() {
    let p = tool_name::Params {
        param_name: "x".to_owned(),
        optional_param: Some(2.0),
        secret_param: Some(Secret::from("s3cret")),
        mode: tool_name::Mode::Batch,
    };
    assert!(
        !format!("{p:?}").contains("s3cret"),
        "a secret leaked into Debug"
    );
    assert_eq!(
        tool_name::Mode::ALL,
        [tool_name::Mode::Single, tool_name::Mode::Batch]
    );
    assert_eq!(<tool_name::Tool as Tool>::NAME, "tool_name");
    assert_eq!(<tool_name::Tool as Tool>::LABEL, "Tool Name");
    assert_eq!(<tool_name::Tool as Tool>::VERSION, 1);
    assert_eq!(<tool_name::Tool as Tool>::LANGUAGE, Language::TypeScript);
    let schema: serde_json::Value =
        serde_json::from_str(<tool_name::Tool as Tool>::SCHEMA).unwrap();
    assert_eq!(
        schema["required"],
        serde_json::json!(["param_name", "mode"])
    );
    assert!(<tool_name::Tool as Tool>::DOCS.contains("## Error Handling"));
}
