//! The build.rs path over the shipped tools/ folder, used the way an agent uses it.

use serde_json::json;
use toolbind::tool::CallError;
use toolbind::{Secret, Tool};
use toolbind_tests::golden::kitchen_sink;
use toolbind_tests::shipped::{self, ToolCall, todo, web_fetch};

#[test]
fn every_shipped_tool_is_compiled() {
    let mut folders: Vec<String> =
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../tools"))
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.path().join("TOOL.md").is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
    folders.sort();
    let names: Vec<&str> = shipped::TOOLS.iter().map(|t| t.name).collect();
    assert_eq!(names, folders);
    assert_eq!(ToolCall::NAMES, names.as_slice());
    for t in shipped::TOOLS {
        let schema: serde_json::Value = serde_json::from_str(t.schema).unwrap();
        assert_eq!(schema["type"], "object", "{}", t.name);
        assert!(
            shipped::PROMPT.contains(t.prompt),
            "{} missing from the prompt",
            t.name
        );
    }
}

#[test]
fn a_model_call_parses_into_typed_params() {
    let call =
        ToolCall::from_call("todo", json!({"action": "add", "text": "write the report"})).unwrap();
    let ToolCall::Todo(p) = &call else {
        panic!("{call:?}")
    };
    assert_eq!(p.action, todo::Action::Add);
    assert_eq!(p.text.as_deref(), Some("write the report"));
    assert_eq!(call.name(), "todo");
    assert_eq!(
        call.to_args(),
        json!({"action": "add", "text": "write the report"})
    );
}

#[test]
fn defaults_fill_in_and_numbers_stay_integers() {
    let call = ToolCall::from_call("web_fetch", json!({"url": "http://127.0.0.1/"})).unwrap();
    let ToolCall::WebFetch(p) = &call else {
        panic!()
    };
    assert_eq!(p.format, web_fetch::Format::default());
    let args = call.to_args();
    assert!(
        args["max_bytes"].is_u64(),
        "whole numbers serialise as integers: {args}"
    );
    assert!(args["timeout_ms"].is_u64(), "{args}");
}

#[test]
fn bad_calls_are_clear_errors() {
    match ToolCall::from_call("todo", json!({"action": "finish"})) {
        Err(CallError::BadArgs { tool, message }) => {
            assert_eq!(tool, "todo");
            assert!(
                message.contains("finish") && message.contains("list"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    match ToolCall::from_call("todo", json!({"action": "list", "txt": "x"})) {
        Err(CallError::BadArgs { message, .. }) => assert!(message.contains("txt"), "{message}"),
        other => panic!("{other:?}"),
    }
    let e = ToolCall::from_call("tood", json!({})).unwrap_err();
    assert!(
        e.to_string().contains("unknown tool `tood`") && e.to_string().contains("todo"),
        "{e}"
    );
}

#[test]
fn model_quirks_for_empty_args_and_strict_nulls() {
    let p = ToolCall::from_call("todo", json!({"action": "list", "text": null})).unwrap();
    assert_eq!(
        p,
        ToolCall::Todo(todo::Params {
            action: todo::Action::List,
            text: None,
            items: None,
        })
    );
    let ks = ToolCall::from_call(
        "kitchen_sink",
        json!({"type": "t", "kind": "match", "maxResults": null}),
    );
    assert!(ks.is_err(), "kitchen_sink is not in shipped tools");
    let g = toolbind_tests::golden::ToolCall::from_call("py_tool", json!("")).unwrap();
    assert_eq!(g.name(), "py_tool");
    let g =
        toolbind_tests::golden::ToolCall::from_call("py_tool", serde_json::Value::Null).unwrap();
    assert_eq!(g.to_args(), json!({}));
}

#[test]
fn the_typed_path_tolerates_the_quirks_the_runtime_does() {
    use toolbind_tests::golden::ToolCall as G;
    let args = json!({"type": "t", "kind": 1, "unit": "m²", "maxResults": "5", "verbose": "false"});
    // `kind` has no value "1": still an error, and the message names the field's values.
    let e = G::from_call("kitchen_sink", args.clone())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown variant `1`") && e.contains("`Self`"),
        "{e}"
    );
    let mut ok = args;
    ok["kind"] = json!("match");
    let G::KitchenSink(p) = G::from_call("kitchen_sink", ok.clone()).unwrap() else {
        panic!()
    };
    assert_eq!(p.max_results, 5.0);
    assert!(!p.verbose);
    // Arguments sent as a JSON string.
    let as_string = serde_json::Value::String(ok.to_string());
    assert_eq!(
        G::from_call("kitchen_sink", as_string).unwrap(),
        G::KitchenSink(p)
    );
}

/// Found by fuzzing the typed path against `Runtime::call`'s validation: the two now read
/// the arguments by the same rules.
#[test]
fn the_typed_path_and_the_runtime_agree_on_what_fuzzing_found() {
    use toolbind_tests::golden::ToolCall as G;
    let base = json!({"type": "t", "kind": "match", "unit": "m²"});
    // An unknown field is refused even when its value is null (the schema says so too).
    let mut unknown = base.clone();
    unknown["not_an_input"] = json!(null);
    let e = G::from_call("kitchen_sink", unknown)
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown field `not_an_input`"), "{e}");
    // Booleans in any case, numbers with spaces, as strings.
    let mut quirks = base.clone();
    quirks["verbose"] = json!("False");
    quirks["maxResults"] = json!(" 12 ");
    let G::KitchenSink(p) = G::from_call("kitchen_sink", quirks).unwrap() else {
        panic!()
    };
    assert!(!p.verbose);
    assert_eq!(p.max_results, 12.0);
    // The arguments as the JSON string "null": no arguments.
    assert_eq!(
        G::from_call("py_tool", json!("null")).unwrap().name(),
        "py_tool"
    );
    // Not an object at all: the runtime's words.
    let e = G::from_call("py_tool", json!([1])).unwrap_err().to_string();
    assert!(e.contains("received an array of 1 items"), "{e}");
}

#[test]
fn golden_types_round_trip_and_redact_secrets() {
    let p = kitchen_sink::Params {
        r#type: "t".into(),
        self_: Some(true),
        max_results: 3.0,
        ratio: 0.5,
        verbose: false,
        greeting: "hi".into(),
        resolution: kitchen_sink::Resolution::Gpt4oMini,
        kind: kitchen_sink::Kind::Self_,
        api_token: Some(Secret::new("sk-very-distinctive-secret".into())),
        limit: None,
        notes: None,
        unit: kitchen_sink::Unit::KmH,
    };
    let v = serde_json::to_value(&p).unwrap();
    assert_eq!(v["maxResults"], json!(3));
    assert_eq!(v["self"], json!(true));
    assert_eq!(v["resolution"], "gpt-4o-mini");
    assert_eq!(v["kind"], "Self");
    assert_eq!(v["api_token"], "sk-very-distinctive-secret");
    assert!(v.get("limit").is_none());
    let back: kitchen_sink::Params = serde_json::from_value(v).unwrap();
    assert_eq!(back, p);
    let debug = format!("{p:?}");
    assert!(!debug.contains("sk-very-distinctive-secret"), "{debug}");
    assert!(debug.contains("[REDACTED]"));

    let d: kitchen_sink::Params =
        serde_json::from_value(json!({"type": "x", "kind": "match", "unit": "m²"})).unwrap();
    assert_eq!(d.unit, kitchen_sink::Unit::M);
    assert_eq!(d.max_results, 10.0);
    assert_eq!(d.ratio, 0.25);
    assert!(d.verbose);
    assert_eq!(d.greeting, "hello \"world\"");
    assert_eq!(d.resolution, kitchen_sink::Resolution::V720p);
}

#[test]
fn enums_display_and_parse() {
    use kitchen_sink::Resolution;
    assert_eq!(Resolution::X1_5.to_string(), "x-1.5");
    assert_eq!("v2.0".parse::<Resolution>(), Ok(Resolution::V2_0));
    let e = "4k".parse::<Resolution>().unwrap_err().to_string();
    assert!(e.contains("`4k`") && e.contains("1080p, 720p"), "{e}");
    assert_eq!(Resolution::ALL.len(), 6);
}

#[test]
fn tool_consts_describe_the_tool() {
    assert_eq!(todo::Tool::NAME, "todo");
    assert_eq!(
        <todo::Tool as Tool>::LANGUAGE,
        toolbind::tool::Language::TypeScript
    );
    assert!(todo::Tool::PROMPT.starts_with("- todo: "));
    assert!(todo::Tool::DOCS.starts_with("# "));
    assert_ne!(todo::Tool::FINGERPRINT, web_fetch::Tool::FINGERPRINT);
}

/// Hostile texts (tests/hostile/: a TOOL.md and an MCP snapshot) reach the generated docs
/// as text: rustdoc finds no code block (a doctest), raw HTML or link in any doc comment
/// of their bindings, and no hidden character; the words are escaped, not blanked out.
#[test]
fn hostile_texts_stay_text_in_the_generated_docs() {
    use pulldown_cmark::{Event, Options, Parser, Tag};
    let code = include_str!(concat!(env!("OUT_DIR"), "/toolbind/hostile.rs"));
    let mut docs = Vec::new();
    let mut cur = String::new();
    for line in code.lines() {
        match line.trim_start().strip_prefix("///") {
            Some(d) => {
                cur.push_str(d.strip_prefix(' ').unwrap_or(d));
                cur.push('\n');
            }
            None if !cur.is_empty() => docs.push(std::mem::take(&mut cur)),
            None => {}
        }
    }
    assert!(docs.len() > 40, "{} doc comments", docs.len());
    for doc in &docs {
        for e in Parser::new_ext(doc, Options::all()) {
            let bad = matches!(
                &e,
                Event::Start(Tag::CodeBlock(_) | Tag::HtmlBlock | Tag::Link { .. })
                    | Event::Html(_)
                    | Event::InlineHtml(_)
            );
            assert!(!bad, "{e:?} in the doc comment:\n{doc}");
        }
        assert!(
            !doc.chars()
                .any(|c| matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')),
            "{doc}"
        );
    }
    for words in [
        "compile_error!(\"a TOOL.md description became a doctest (fenced)\");",
        "compile_error!(\"a server version became a doctest\");",
        "compile_error!(\"a nested field's description became a doctest (indented)\");",
        "&lt;script>alert(\"live HTML\")&lt;/script> \\[a link\\](javascript:alert(1)) bidi: aU+202EbU+2066c",
    ] {
        assert!(code.contains(words), "{words}");
    }
}

/// A hostile server's tool binds and parses calls: names rustc would read as one are two
/// fields, and defaults no `i64` holds, or outside their range, are left to the server
/// instead of panicking `from_call`.
#[test]
fn hostile_bindings_parse_calls() {
    use toolbind_tests::hostile::injected::{self, inject_ed};
    let call = injected::ToolCall::from_call(
        injected::ToolCall::NAMES[0],
        json!({"path": "p", "caf\u{e9}": "nfc", "cafe\u{301}": "nfd", "q\u{430}": "cyrillic"}),
    )
    .unwrap();
    let injected::ToolCall::InjectEd(p) = &call;
    assert_eq!(p.cafe.as_deref(), Some("nfc"));
    assert_eq!(p.cafe_2.as_deref(), Some("nfd"));
    assert_eq!(p.q_u0430.as_deref(), Some("cyrillic"));
    assert_eq!((p.big, p.ranged), (None, None));
    assert_eq!(call.mcp_name(), "inject`ed\n```");
    let mode = inject_ed::Mode::ALL[1];
    assert_eq!(
        mode.as_str(),
        "```\ncompile_error!(\"an enum value became a doctest\");\n```"
    );
}
