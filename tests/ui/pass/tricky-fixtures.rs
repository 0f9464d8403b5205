//! Keywords, camelCase, digits/dashes/dots in enum values, CRLF + BOM and unicode, all in
//! one folder, compiled warning-free.
#![deny(warnings)]

use serde_json::json;
use toolbind::Tool;

toolbind::tools!("../../../codegen/tests/fixtures/valid");

fn main() {
    assert_eq!(
        ToolCall::NAMES,
        [
            "crlf_bom",
            "enum_lookalikes",
            "kitchen_sink",
            "nested_inputs",
            "py_tool",
            "sh_tool",
            "tool_name",
            "typed_outputs",
            "unicode_tool"
        ]
    );

    // Keywords and camelCase as field names; defaults fill in.
    let p: kitchen_sink::Params =
        serde_json::from_value(json!({"type": "t", "self": true, "kind": "Self", "unit": "km/h"})).unwrap();
    assert_eq!(p.r#type, "t");
    assert_eq!(p.self_, Some(true));
    assert_eq!(p.max_results, 10.0);
    assert_eq!(p.resolution, kitchen_sink::Resolution::V720p);
    assert_eq!(p.kind, kitchen_sink::Kind::Self_);
    assert_eq!(serde_json::to_value(&p).unwrap()["maxResults"], json!(10));

    // Digits, dashes and dots in enum values.
    use kitchen_sink::Resolution as R;
    let wires: Vec<&str> = R::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(
        wires,
        [
            "1080p",
            "720p",
            "x-1.5",
            "gpt-4o-mini",
            "v2.0",
            "high-quality"
        ]
    );
    assert_eq!("gpt-4o-mini".parse::<R>(), Ok(R::Gpt4oMini));
    assert_eq!(R::X1_5.to_string(), "x-1.5");

    // Typed outputs: nested structs, enums, lists, optional and free-form fields.
    let out: typed_outputs::Output = serde_json::from_value(json!({
        "count": 2, "complete": false, "mode": "thorough", "type": "t", "headers": {"a": 1},
        "tags": ["x"], "note": null, "not_declared": true,
        "entries": [{"id": "e", "labels": ["red", "blue"], "matrix": [[1, 2.5]]}]
    }))
    .unwrap();
    assert_eq!(out.mode, typed_outputs::output::Mode::Thorough);
    assert_eq!((out.count, out.r#type.as_str(), out.note), (2.0, "t", None));
    assert_eq!(out.headers["a"], json!(1));
    assert!(out.summary.is_none());
    let e: &typed_outputs::output::Entry = &out.entries[0];
    assert_eq!(e.labels, [typed_outputs::output::Label::Red, typed_outputs::output::Label::Blue]);
    assert_eq!(e.matrix, Some(vec![vec![1.0, 2.5]]));
    let _: <typed_outputs::Tool as Tool>::Output = out;
    let missing = serde_json::from_value::<typed_outputs::Output>(json!({"count": 1}));
    assert!(missing.unwrap_err().to_string().contains("missing field `complete`"));
    let _: <py_tool::Tool as Tool>::Output = json!({"free": "form"});

    // CRLF + BOM: no stray `\r` in what the model sees.
    assert_eq!(<crlf_bom::Tool as Tool>::VERSION, 2);
    assert!(!<crlf_bom::Tool as Tool>::DESCRIPTION.contains('\r'));
    assert!(!<crlf_bom::Tool as Tool>::DOCS.contains('\r'));
    assert_eq!(crlf_bom::Order::default(), crlf_bom::Order::Newest);

    // Unicode labels, descriptions and enum values (ASCII identifiers: accents dropped,
    // other letters as code points).
    assert_eq!(<unicode_tool::Tool as Tool>::LABEL, "Übersetzer 翻訳");
    assert_eq!(unicode_tool::Style::U666eU901a.as_str(), "普通");
    let call =
        ToolCall::from_call("unicode_tool", json!({"texte": "é", "style": "naïve"})).unwrap();
    assert_eq!(
        call,
        ToolCall::UnicodeTool(unicode_tool::Params {
            texte: "é".to_owned(),
            style: unicode_tool::Style::Naive,
        })
    );
    // Enum values that look like numbers and booleans take those JSON types, not near
    // misses of them (the same rules as `Runtime::call`).
    let level = |v| match ToolCall::from_call("enum_lookalikes", json!({"level": v})) {
        Ok(ToolCall::EnumLookalikes(p)) => Some(p.level.as_str()),
        _ => None,
    };
    assert_eq!(level(json!(2)), Some("2"));
    assert_eq!(level(json!(true)), Some("true"));
    assert_eq!(level(json!(2.5)), Some("2.5"));
    assert_eq!(level(json!(" 2")), None);
    assert_eq!(level(json!(1.0)), None);
    assert_eq!(level(json!("True")), None);

    // Nested inputs: structs per object (named by `title` or the field, array items in the
    // singular), `Vec`, integers, nested defaults only where their object is given.
    use nested_inputs::{Edit, EditOptions, Mode as EditMode};
    let call = ToolCall::from_call(
        "nested_inputs",
        json!({"path": "a.md", "edits": [{"old_text": "x", "new_text": "y"}],
               "options": {"mode": "strict"}}),
    )
    .unwrap();
    let ToolCall::NestedInputs(p) = &call else {
        panic!("{call:?}")
    };
    assert_eq!(
        p.edits,
        [Edit { old_text: "x".into(), new_text: "y".into(), count: 1 }]
    );
    assert_eq!(
        p.options,
        Some(EditOptions { dry_run: false, mode: Some(EditMode::Strict), tags: None })
    );
    assert_eq!((p.limit, p.ranges.len()), (200, 0));
    assert_eq!(
        call.to_args(),
        json!({"path": "a.md", "edits": [{"old_text": "x", "new_text": "y", "count": 1}],
               "options": {"dry_run": false, "mode": "strict"}, "limit": 200, "ranges": []})
    );
    // A wrong field at depth 2 is refused, naming it.
    let err = ToolCall::from_call(
        "nested_inputs",
        json!({"path": "a.md", "edits": [{"old_txt": "x", "new_text": "y"}]}),
    )
    .unwrap_err();
    assert!(err.to_string().contains("old_txt"), "{err}");
    assert_eq!(TOOLS.len(), 9);
}
