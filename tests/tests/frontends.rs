//! The two frontends agree: `toolbind::tools!` (the proc-macro) and build.rs
//! (`toolbind_codegen::Config::compile`) produce the same items for the same folder.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolbind_codegen::Config;
use toolbind_codegen::emit::Generator;
use toolbind_tests::shipped;

/// The shipped tools/ again, this time through the macro (build.rs made `shipped`).
mod by_macro {
    toolbind::tools!("../../tools");
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn generate(dir: &Path, generator: Generator) -> String {
    Config::new()
        .tools_dir(dir)
        .generator(generator)
        .generate()
        .unwrap_or_else(|e| panic!("{e}"))
        .rust()
        .expect("Rust output is on by default")
        .to_owned()
}

/// The macro's rebuild-tracking items (`const _: &[u8] = ::core::include_bytes!("...");`,
/// which prettyplease may wrap over several lines): the paths they embed, and the source
/// without them.
fn split_tracking(src: &str) -> (Vec<String>, String) {
    const START: &str = "const _: &[u8] = ::core::include_bytes!(";
    let mut paths = Vec::new();
    let mut rest = String::new();
    let mut tail = src;
    while let Some(i) = tail.find(START) {
        let line_start = tail[..i].rfind('\n').map_or(0, |n| n + 1);
        rest.push_str(&tail[..line_start]);
        let end = i + tail[i..].find(");\n").expect("tracking item ends") + 3;
        let item = &tail[i + START.len()..end];
        paths.push(item.split('"').nth(1).expect("a path literal").to_owned());
        tail = &tail[end..];
    }
    rest.push_str(tail);
    (paths, rest)
}

#[test]
fn generated_source_differs_only_by_rebuild_tracking() {
    for dir in [
        root().join("tools"),
        root().join("codegen/tests/fixtures/valid"),
    ] {
        let build = generate(&dir, Generator::Build);
        let mac = generate(&dir, Generator::Macro);
        let (none, build_rest) = split_tracking(&build);
        assert!(none.is_empty(), "build.rs output embeds files: {none:?}");
        let (tracking, mac_rest) = split_tracking(&mac);
        if let Some((b, m)) = build_rest
            .lines()
            .zip(mac_rest.lines())
            .find(|(b, m)| b != m)
        {
            panic!(
                "{}: build.rs and macro output differ:\n{b}\n{m}",
                dir.display()
            );
        }
        assert_eq!(mac_rest, build_rest, "{}", dir.display());

        // Every TOOL.md and entry file the macro read is tracked, and nothing else.
        let tools = Config::new().tools_dir(&dir).generate().unwrap().tools;
        let mut expected: Vec<String> = Vec::new();
        for t in &tools {
            expected.push(t.file.display().to_string());
            expected.extend(t.entry_path().map(|e| e.display().to_string()));
        }
        let mut tracked = tracking;
        tracked.sort();
        expected.sort();
        assert_eq!(tracked, expected, "{}", dir.display());
    }
}

#[test]
fn macro_and_build_rs_compile_to_the_same_tools() {
    assert_eq!(by_macro::TOOLS, shipped::TOOLS);
    assert_eq!(by_macro::ToolCall::NAMES, shipped::ToolCall::NAMES);
    assert!(!shipped::TOOLS.is_empty());
}

/// Arguments with every required property of `schema` set to a valid value.
fn minimal_args(schema: &Value) -> Value {
    let mut args = serde_json::Map::new();
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    for name in required.iter().filter_map(Value::as_str) {
        let prop = &schema["properties"][name];
        let value = match (&prop["enum"], prop["type"].as_str()) {
            (Value::Array(values), _) => values[0].clone(),
            (_, Some("string")) => json!("x"),
            (_, Some("number" | "integer")) => json!(3),
            (_, Some("boolean")) => json!(true),
            other => panic!("unexpected property schema {other:?} for `{name}`"),
        };
        args.insert(name.to_owned(), value);
    }
    Value::Object(args)
}

#[test]
fn both_parse_a_call_to_the_same_arguments() {
    for t in shipped::TOOLS {
        let schema: Value = serde_json::from_str(t.schema).unwrap();
        let args = minimal_args(&schema);
        let by_build = shipped::ToolCall::from_call(t.name, args.clone())
            .unwrap_or_else(|e| panic!("build.rs: {e}"));
        let by_mac = by_macro::ToolCall::from_call(t.name, args.clone())
            .unwrap_or_else(|e| panic!("macro: {e}"));
        assert_eq!(by_mac.name(), by_build.name());
        // Defaults filled in the same way too.
        assert_eq!(by_mac.to_args(), by_build.to_args(), "{}", t.name);
    }
}
