//! Every generated schema is valid JSON Schema 2020-12, and no dialect contains a construct
//! its provider rejects.

use std::path::PathBuf;

use serde_json::{Value, json};
use toolbind_codegen::schema::{self, Dialect};
use toolbind_codegen::{Options, ToolSpec, load_tools};

fn fixtures() -> Vec<ToolSpec> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/valid");
    load_tools(&[dir], &Options::default()).unwrap()
}

/// Every object node of a schema, recursively.
fn walk<'a>(v: &'a Value, out: &mut Vec<&'a serde_json::Map<String, Value>>) {
    match v {
        Value::Object(m) => {
            out.push(m);
            m.values().for_each(|c| walk(c, out));
        }
        Value::Array(a) => a.iter().for_each(|c| walk(c, out)),
        _ => {}
    }
}

fn strict(d: Dialect) -> bool {
    matches!(d, Dialect::OpenAiStrict | Dialect::OpenAiResponsesStrict)
}

#[test]
fn every_dialect_is_valid_2020_12() {
    let tools = fixtures();
    for d in Dialect::ALL {
        let defs = schema::definitions(&tools, d);
        let schemas = schema::embedded_schemas(&defs, d);
        assert_eq!(schemas.len(), tools.len(), "{d}");
        for s in schemas {
            if let Err(e) = jsonschema::draft202012::meta::validate(s) {
                panic!("{d}: {e}\n{s:#}");
            }
        }
    }
}

#[test]
fn no_dialect_uses_constructs_providers_reject() {
    let tools = fixtures();
    for d in Dialect::ALL {
        let defs = schema::definitions(&tools, d);
        for s in schema::embedded_schemas(&defs, d) {
            let mut nodes = Vec::new();
            walk(s, &mut nodes);
            for node in &nodes {
                for banned in ["const", "oneOf", "anyOf", "allOf", "$ref", "$defs"] {
                    assert!(!node.contains_key(banned), "{d} uses `{banned}`: {s:#}");
                }
                if d == Dialect::Gemini {
                    assert!(!node.contains_key("additionalProperties"), "gemini: {s:#}");
                    assert!(
                        !node.get("type").is_some_and(Value::is_array),
                        "gemini type array: {s:#}"
                    );
                    assert!(!node.contains_key("default"), "gemini default: {s:#}");
                }
                if !strict(d) {
                    assert!(
                        !node.get("type").is_some_and(Value::is_array),
                        "{d} type array: {s:#}"
                    );
                }
            }
            let props = s["properties"].as_object().unwrap();
            for (name, p) in props {
                assert!(
                    p["description"].as_str().is_some_and(|d| !d.is_empty()),
                    "{d}: {name}"
                );
                if p.get("enum").is_some() {
                    assert!(
                        p["type"] == "string" || p["type"] == json!(["string", "null"]),
                        "{d}: {name}"
                    );
                }
            }
            if strict(d) {
                let req: Vec<&str> = s["required"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap())
                    .collect();
                let keys: Vec<&str> = props.keys().map(String::as_str).collect();
                assert_eq!(req, keys, "strict: every key required");
                assert_eq!(s["additionalProperties"], false);
            }
            if d != Dialect::Gemini {
                assert!(s["required"].is_array(), "{d}: required is always an array");
                assert_eq!(s["additionalProperties"], false, "{d}");
            }
        }
    }
}

#[test]
fn portable_schema_accepts_good_args_and_rejects_bad() {
    let tools = fixtures();
    let ks = tools.iter().find(|t| t.name == "kitchen_sink").unwrap();
    let v = jsonschema::draft202012::new(&schema::portable(ks)).unwrap();
    let ok = |extra: serde_json::Value| {
        let mut args = json!({"type": "x", "kind": "match", "unit": "m²"});
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        args
    };
    assert!(v.is_valid(&ok(json!({}))));
    assert!(v.is_valid(&ok(
        json!({"kind": "Self", "maxResults": 3, "resolution": "x-1.5"})
    )));
    assert!(
        !v.is_valid(&json!({"kind": "match", "unit": "m²"})),
        "missing required"
    );
    assert!(!v.is_valid(&ok(json!({"kind": "nope"}))), "enum value");
    assert!(!v.is_valid(&ok(json!({"extra": 1}))), "unknown key");
    assert!(!v.is_valid(&ok(json!({"type": 1}))), "wrong type");

    let strict =
        jsonschema::draft202012::new(&schema::params_schema(ks, Dialect::OpenAiStrict)).unwrap();
    let all_null = json!({"type": "x", "self": null, "maxResults": null, "ratio": null, "verbose": null,
        "greeting": null, "resolution": null, "kind": "match", "api_token": null, "limit": null,
        "notes": null, "unit": "km/h"});
    assert!(strict.is_valid(&all_null));
}

#[test]
fn sensitive_inputs_are_marked_and_mcp_carries_annotations() {
    let tools = fixtures();
    let ks = tools.iter().find(|t| t.name == "kitchen_sink").unwrap();
    for d in Dialect::ALL {
        let p = &schema::params_schema(ks, d)["properties"]["api_token"];
        assert!(
            p["description"]
                .as_str()
                .unwrap()
                .contains(schema::SENSITIVE_NOTE),
            "{d}"
        );
    }
    let mcp = schema::tool_definition(ks, Dialect::Mcp);
    assert_eq!(mcp["title"], "Kitchen Sink");
    assert_eq!(mcp["annotations"]["readOnlyHint"], true);
    assert_eq!(mcp["annotations"]["openWorldHint"], false);
    assert!(mcp["annotations"].get("destructiveHint").is_none());
}

/// The OpenAI Responses API's `FunctionToolParam` as the official SDK types it
/// (openai-python `src/openai/types/responses/function_tool_param.py`): `name`,
/// `parameters`, `strict` and `type: "function"` required, `description` optional, no
/// other key. A checker written from that document, so a test can show what it refuses.
fn responses_function_tool_problems(def: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(obj) = def.as_object() else {
        return vec!["not an object".into()];
    };
    for k in obj.keys() {
        if !["type", "name", "description", "parameters", "strict"].contains(&k.as_str()) {
            problems.push(format!("unknown key `{k}`"));
        }
    }
    for k in ["type", "name", "parameters", "strict"] {
        if !obj.contains_key(k) {
            problems.push(format!("missing `{k}`"));
        }
    }
    if obj.get("type").is_some_and(|t| t != "function") {
        problems.push("`type` is not \"function\"".into());
    }
    if obj.get("name").is_some_and(|n| !n.is_string()) {
        problems.push("`name` is not a string".into());
    }
    if obj.get("description").is_some_and(|n| !n.is_string()) {
        problems.push("`description` is not a string".into());
    }
    if obj
        .get("parameters")
        .is_some_and(|p| !p.is_object() && !p.is_null())
    {
        problems.push("`parameters` is not an object".into());
    }
    if obj
        .get("strict")
        .is_some_and(|p| !p.is_boolean() && !p.is_null())
    {
        problems.push("`strict` is not a boolean".into());
    }
    problems
}

#[test]
fn responses_dialect_has_the_function_tool_param_shape_field_by_field() {
    let tools = fixtures();
    for d in [Dialect::OpenAiResponses, Dialect::OpenAiResponsesStrict] {
        let defs = schema::definitions(&tools, d);
        let defs = defs.as_array().unwrap();
        assert!(!defs.is_empty());
        for (def, tool) in defs
            .iter()
            .zip(tools.iter().filter(|t| d.rejects(t).is_none()))
        {
            assert_eq!(
                responses_function_tool_problems(def),
                Vec::<String>::new(),
                "{d}: {def:#}"
            );
            assert_eq!(def["type"], "function");
            assert_eq!(def["name"], tool.name.as_str());
            assert_eq!(def["description"], tool.description.as_str());
            // The API defaults `strict` to true: the plain dialect must say false, since
            // its schema leaves optional keys out of `required`.
            assert_eq!(def["strict"], json!(strict(d)), "{d}");
            let chat = if strict(d) {
                Dialect::OpenAiStrict
            } else {
                Dialect::OpenAi
            };
            assert_eq!(def["parameters"], schema::params_schema(tool, chat), "{d}");
        }
    }
}

#[test]
fn responses_checker_refuses_the_chat_completions_shape_and_unknown_keys() {
    let tools = fixtures();
    let chat = schema::definitions(&tools, Dialect::OpenAi);
    let problems = responses_function_tool_problems(&chat[0]);
    assert!(
        problems.contains(&"unknown key `function`".to_owned()),
        "{problems:?}"
    );
    for k in ["name", "parameters", "strict"] {
        assert!(problems.contains(&format!("missing `{k}`")), "{problems:?}");
    }
    let mut extra = schema::definitions(&tools, Dialect::OpenAiResponses)[0].clone();
    extra["input_schema"] = json!({});
    assert_eq!(
        responses_function_tool_problems(&extra),
        vec!["unknown key `input_schema`".to_owned()]
    );
}

#[test]
fn output_schemas_are_valid_and_describe_the_details() {
    let tools = fixtures();
    let t = tools.iter().find(|t| t.name == "typed_outputs").unwrap();
    let s = schema::output_schema(t).unwrap();
    jsonschema::draft202012::meta::validate(&s).unwrap();
    // MCP requires an object at the root; the MCP definition carries it as `outputSchema`.
    assert_eq!(s["type"], "object");
    assert_eq!(
        schema::tool_definition(t, Dialect::Mcp)["outputSchema"],
        s,
        "the MCP dialect carries the same schema"
    );
    for d in Dialect::ALL.into_iter().filter(|d| *d != Dialect::Mcp) {
        assert!(
            !schema::tool_definition(t, d)
                .to_string()
                .contains("outputSchema"),
            "{d}: only MCP has a place for outputs"
        );
    }
    // A tool without `outputs:` (every seed-format tool) has none.
    let plain = tools.iter().find(|t| t.name == "kitchen_sink").unwrap();
    assert_eq!(schema::output_schema(plain), None);
    assert!(
        schema::tool_definition(plain, Dialect::Mcp)
            .get("outputSchema")
            .is_none()
    );

    let v = jsonschema::draft202012::new(&s).unwrap();
    let good = json!({
        "count": 1, "complete": true, "mode": "fast", "type": "x", "headers": {"a": 1},
        "tags": ["a"], "note": null, "extra": "fields not declared are allowed",
        "entries": [{"id": "e", "labels": ["red"], "matrix": [[1.5]]}],
        "summary": {"first": "f"}
    });
    assert!(v.is_valid(&good), "{:?}", v.validate(&good));
    for bad in [
        json!({"count": "1"}),
        json!({"mode": "slow"}),
        json!({"entries": [{"id": "e", "labels": ["pink"]}]}),
        json!({"entries": [{"labels": []}]}),
        json!({"summary": {"score": 1}}),
        json!({"tags": "a"}),
    ] {
        let mut doc = good.clone();
        for (k, val) in bad.as_object().unwrap() {
            doc[k] = val.clone();
        }
        assert!(!v.is_valid(&doc), "accepted {doc}");
    }
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("count");
    assert!(!v.is_valid(&missing));
}
