//! Nested inputs (objects, arrays, integers, constraints): what TOOL.md may say, the error
//! for each mistake at its line and column at any depth, and the model they build.

use std::path::Path;

use serde_json::json;
use toolbind_codegen::model::{InputType, MAX_DEPTH, Pos};
use toolbind_codegen::schema::{self, Dialect};
use toolbind_codegen::{Diagnostic, Options, Severity, ToolSpec, parse_tool_md};

const OK: &str = "---\nname: t\ndescription: d\n";

fn parse(src: &str) -> Result<ToolSpec, Vec<Diagnostic>> {
    parse_tool_md(
        Path::new("t/TOOL.md"),
        Path::new("t"),
        src.as_bytes(),
        &Options::default().require_entry(false),
    )
}

fn with(inputs: &str) -> String {
    format!("{OK}inputs:\n{inputs}---\n")
}

/// Exactly one error, at `line:col`, containing `msg` (and `hint` in its help).
#[track_caller]
fn one(src: &str, line: u32, col: u32, msg: &str, hint: Option<&str>) {
    let e = match parse(src) {
        Ok(t) => panic!("expected an error, got {t:#?}"),
        Err(d) => d,
    };
    let errors: Vec<&Diagnostic> = e.iter().filter(|d| d.severity == Severity::Error).collect();
    assert_eq!(errors.len(), 1, "{e:#?}");
    let d = errors[0];
    assert!(
        d.message.contains(msg),
        "message {:?} lacks {msg:?}",
        d.message
    );
    assert_eq!(d.pos, Pos::new(line, col), "{}", d.plain());
    if let Some(h) = hint {
        let got = d.hint.as_deref().unwrap_or_default();
        assert!(got.contains(h), "hint {got:?} lacks {h:?}");
    }
}

const EDITS: &str = "  edits:
    type: array
    description: The edits.
    min_items: 1
    max_items: 10
    items:
      type: object
      properties:
        old_text:
          type: string
          description: Text to replace.
        count:
          type: integer
          description: How many.
          minimum: 1
          default: 1
";

#[test]
fn objects_arrays_and_integers_build_the_model() {
    let t = parse(&with(EDITS)).unwrap();
    assert!(t.warnings.is_empty(), "{:#?}", t.warnings);
    let edits = &t.inputs[0];
    assert_eq!(
        (edits.ty, edits.min_items, edits.max_items),
        (InputType::Array, Some(1), Some(10))
    );
    let item = edits.items.as_deref().unwrap();
    assert_eq!(
        (item.ty, item.rust_type.as_str(), item.name.as_str()),
        (InputType::Object, "Edit", "")
    );
    let count = item.property("count").unwrap();
    assert_eq!(
        (count.ty, count.minimum, count.default.clone()),
        (InputType::Integer, Some(1.0), Some(json!(1)))
    );
    assert_eq!(count.pos, Pos::new(16, 9));
    assert_eq!(edits.depth(), 3);
    assert_eq!(
        edits.constraint_text().as_deref(),
        Some("1\u{2013}10 items")
    );
}

#[test]
fn an_object_needs_properties_and_an_array_one_items_spec() {
    one(
        &with("  o:\n    type: object\n    description: d\n"),
        5,
        3,
        "object input `o` has no `properties`",
        Some("add `properties:`"),
    );
    one(
        &with("  o:\n    type: object\n    description: d\n    properties: {}\n"),
        8,
        5,
        "`properties` of input `o` is empty",
        None,
    );
    one(
        &with("  a:\n    type: array\n    description: d\n"),
        5,
        3,
        "array input `a` has no `items`",
        Some("items: {type: string}"),
    );
    one(
        &with("  a:\n    type: array\n    description: d\n    items: [string, number]\n"),
        8,
        12,
        "`items` of `a` must be one input spec (a mapping with `type`), found a list",
        Some("every element of an array has one type"),
    );
    one(
        &with("  a:\n    type: array\n    description: d\n    items: string\n"),
        8,
        12,
        "`items` of `a` must be a mapping with `type`",
        Some("write `items: {type: string}`"),
    );
}

#[test]
fn mistakes_deep_inside_are_located() {
    // A misspelt type and a missing description at depth 3, each at its own line.
    let src = with(
        "  a:\n    type: array\n    description: d\n    items:\n      type: object\n      properties:\n        b:\n          type: object\n          description: d\n          properties:\n            c:\n              type: strng\n              description: d\n            e:\n              type: string\n",
    );
    let e = parse(&src).unwrap_err();
    let text: Vec<String> = e.iter().map(Diagnostic::plain).collect();
    assert_eq!(e.len(), 2, "{text:#?}");
    assert!(
        text[0].starts_with("t/TOOL.md:16:21: unknown input type `strng`"),
        "{}",
        text[0]
    );
    assert!(
        text[1].starts_with("t/TOOL.md:18:13: input `a[].b.e` has no `description`"),
        "{}",
        text[1]
    );
}

#[test]
fn nesting_deeper_than_openai_strict_allows_is_an_error() {
    // Objects inside objects: the arguments are level 1, `l2` level 2, ...
    let mut src = String::new();
    let mut indent = String::from("  ");
    for level in 2..=MAX_DEPTH + 1 {
        src.push_str(&format!("{indent}l{level}:\n{indent}  type: object\n{indent}  description: d\n{indent}  properties:\n"));
        indent.push_str("    ");
    }
    src.push_str(&format!(
        "{indent}leaf:\n{indent}  type: string\n{indent}  description: d\n"
    ));
    let e = parse(&with(&src)).unwrap_err();
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(
        e[0].message.contains("is nested 11 levels deep"),
        "{}",
        e[0].message
    );
    assert!(e[0].message.contains("at most 10"), "{}", e[0].message);
    assert!(
        e[0].message.contains("`l2.l3.l4.l5.l6.l7.l8.l9.l10.l11`"),
        "{}",
        e[0].message
    );
    // Ten levels load.
    let ten = src.clone();
    let cut = ten.find(&format!("{}l11:", " ".repeat(2 + 4 * 9))).unwrap();
    let mut ten = ten[..cut].to_owned();
    let pad = " ".repeat(2 + 4 * 9);
    ten.push_str(&format!(
        "{pad}leaf:\n{pad}  type: string\n{pad}  description: d\n"
    ));
    let t = parse(&with(&ten)).unwrap();
    assert_eq!(t.inputs[0].depth(), MAX_DEPTH, "nine objects and the leaf");
}

#[test]
fn constraints_are_checked_and_defaults_must_satisfy_them() {
    one(
        &with("  n:\n    type: integer\n    description: d\n    minimum: 5\n    maximum: 1\n"),
        9,
        14,
        "`maximum` of input `n` is below its `minimum`",
        None,
    );
    one(
        &with("  n:\n    type: integer\n    description: d\n    maximum: 10\n    default: 20\n"),
        9,
        14,
        "default of input `n` is 20, outside the allowed range (at most 10)",
        None,
    );
    one(
        &with("  n:\n    type: integer\n    description: d\n    default: 2.5\n"),
        8,
        14,
        "default of integer input `n` must be an integer, found a number `2.5`",
        None,
    );
    one(
        &with(
            "  a:\n    type: array\n    description: d\n    min_items: 2\n    default: [x]\n    items:\n      type: string\n",
        ),
        9,
        14,
        "default of input `a` has 1 items, but at least 2 items are allowed",
        None,
    );
    one(
        &with(
            "  a:\n    type: array\n    description: d\n    min_items: -1\n    items:\n      type: string\n",
        ),
        8,
        16,
        "`min_items` must be a non-negative integer",
        None,
    );
    // A constraint on the wrong type is ignored, with a warning.
    let t = parse(&with(
        "  s:\n    type: string\n    description: d\n    minimum: 1\n",
    ))
    .unwrap();
    assert_eq!(t.warnings.len(), 1, "{:#?}", t.warnings);
    assert!(
        t.warnings[0]
            .message
            .contains("`minimum`/`maximum` is ignored")
    );
    assert_eq!(t.inputs[0].minimum, None);
}

#[test]
fn object_and_array_defaults_are_checked_against_their_spec() {
    let o = "  o:\n    type: object\n    description: d\n    optional: true\n    properties:\n      n:\n        type: integer\n        description: d\n";
    let t = parse(&with(&format!("{o}    default: {{n: 3}}\n"))).unwrap();
    assert_eq!(t.inputs[0].default, Some(json!({"n": 3})));
    one(
        &with(&format!("{o}    default: {{m: 3}}\n")),
        13,
        14,
        "default of input `o` has the unknown field `m`",
        None,
    );
    one(
        &with(&format!("{o}    default: {{n: x}}\n")),
        13,
        14,
        "default of input `o` .n must be an integer, found a string",
        None,
    );
}

#[test]
fn properties_named_like_keywords_are_plain_fields() {
    let t = parse(&with(
        "  o:\n    type: object\n    description: d\n    properties:\n      type:\n        type: string\n        description: d\n      items:\n        type: integer\n        description: d\n      properties:\n        type: boolean\n        description: d\n",
    ))
    .unwrap();
    let names: Vec<&str> = t.inputs[0]
        .properties
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(names, ["type", "items", "properties"]);
    assert_eq!(t.inputs[0].properties[0].rust_name, "r#type");
}

#[test]
fn colliding_rust_names_at_depth_two_get_a_fallback_with_a_warning() {
    let t = parse(&with(
        "  edits:\n    type: array\n    description: d\n    items:\n      type: object\n      properties:\n        oldText:\n          type: string\n          description: d\n        old_text:\n          type: string\n          description: d\n",
    ))
    .unwrap();
    let item = t.inputs[0].items.as_deref().unwrap();
    let rust: Vec<&str> = item
        .properties
        .iter()
        .map(|p| p.rust_name.as_str())
        .collect();
    assert_eq!(rust, ["old_text", "old_text_2"]);
    assert_eq!(t.warnings.len(), 1, "{:#?}", t.warnings);
    assert_eq!(t.warnings[0].pos, Pos::new(14, 9));
    assert!(
        t.warnings[0]
            .message
            .contains("`oldText` and `old_text` both map to the Rust field `old_text`")
    );
    // Two nested objects of one name: the second type gets a number.
    let t = parse(&with(
        "  a:\n    type: object\n    description: d\n    properties:\n      opts:\n        type: object\n        description: d\n        properties:\n          x:\n            type: string\n            description: d\n  b:\n    type: object\n    description: d\n    properties:\n      opts:\n        type: object\n        description: d\n        properties:\n          y:\n            type: string\n            description: d\n",
    ))
    .unwrap();
    assert_eq!(t.inputs[1].properties[0].rust_type, "Opts2");
    assert!(
        t.warnings[0]
            .message
            .contains("inputs `a.opts` and `b.opts` both map to the Rust type `Opts`"),
        "{:#?}",
        t.warnings
    );
}

#[test]
fn sensitive_on_an_object_covers_all_of_it() {
    let t = parse(&with(
        "  creds:\n    type: object\n    description: d\n    sensitive: true\n    properties:\n      user:\n        type: string\n        description: d\n      key:\n        type: string\n        description: d\n",
    ))
    .unwrap();
    assert!(t.inputs[0].sensitive && t.inputs[0].holds_sensitive());
    let s = schema::params_schema(&t, Dialect::Portable);
    assert!(
        s["properties"]["creds"]["description"]
            .as_str()
            .unwrap()
            .contains("Sensitive")
    );
    assert!(
        t.inputs[0].properties.iter().all(|p| p.sensitive),
        "everything inside is secret"
    );

    // A field's default inside a secret, and an object default holding a secret field,
    // are never written into schemas, docs or code.
    let t = parse(&with(
        "  creds:\n    type: object\n    description: d\n    sensitive: true\n    properties:\n      key:\n        type: string\n        description: d\n        default: s3cr3t-value\n  plain:\n    type: object\n    description: d\n    optional: true\n    default: {token: t0ken-value}\n    properties:\n      token:\n        type: string\n        description: d\n        sensitive: true\n",
    ))
    .unwrap();
    // Both are said to be applied at run time only.
    assert_eq!(t.warnings.len(), 2, "{:#?}", t.warnings);
    assert!(
        t.warnings[0]
            .message
            .contains("holds fields with defaults (key)"),
        "{:#?}",
        t.warnings
    );
    let one_tool = std::slice::from_ref(&t);
    let everything = format!(
        "{}{}{}{}",
        schema::definitions_json(one_tool, Dialect::Portable),
        schema::definitions_json(one_tool, Dialect::OpenAiStrict),
        toolbind_codegen::prompt::docs(one_tool),
        toolbind_codegen::emit::rust(one_tool, toolbind_codegen::emit::Generator::Build)
    );
    assert!(
        !everything.contains("s3cr3t") && !everything.contains("t0ken"),
        "{everything}"
    );
    assert!(t.inputs[0].properties[0].public_default().is_none());
    assert!(t.inputs[1].public_default().is_none());
}

#[test]
fn integers_stay_within_what_rust_holds() {
    one(
        &with("  n:\n    type: integer\n    description: d\n    default: 10000000000000000000\n"),
        8,
        14,
        "default of integer input `n` must be an integer",
        None,
    );
}

#[test]
fn lossless_readings_of_other_formats() {
    // `required:` as the inverse of `optional:`, on a nested field too.
    let t = parse(&with(
        "  o:\n    type: object\n    description: d\n    properties:\n      a:\n        type: string\n        description: d\n        required: false\n",
    ))
    .unwrap();
    assert!(t.inputs[0].properties[0].optional);
    // `language: javascript` is what a typescript tool's `index.js` is.
    let t = parse(&format!("{OK}language: javascript\n---\n")).unwrap();
    assert_eq!(t.language, toolbind_codegen::model::Language::TypeScript);
    assert!(t.warnings.is_empty(), "{:#?}", t.warnings);
    // `version: "2.0"` and `version: 2.0` are 2, with a warning, as `"2"` is.
    for v in ["\"2.0\"", "2.0", "'2'"] {
        let t = parse(&format!("{OK}version: {v}\n---\n")).unwrap();
        assert_eq!(t.version, 2, "{v}");
        assert_eq!(t.warnings.len(), 1, "{v}: {:#?}", t.warnings);
        assert_eq!(
            toolbind_codegen::read_version(&format!("{OK}version: {v}\n---\n")),
            Some(2),
            "sync's reader agrees for {v}"
        );
    }
    assert!(parse(&format!("{OK}version: \"2.1\"\n---\n")).is_err());
    // `section:` is three edits from `execution`: metadata, not a typo.
    let t = parse(&format!("{OK}section: tools\n---\n")).unwrap();
    assert_eq!(t.warnings.len(), 1, "{:#?}", t.warnings);
    assert!(t.metadata.contains_key("section"));
    assert!(
        parse(&format!("{OK}executon: sequential\n---\n")).is_err(),
        "one edit is a typo"
    );
    // `type: integer` in outputs.
    let t = parse(&format!(
        "{OK}outputs:\n  n:\n    type: integer\n    description: d\n---\n"
    ))
    .unwrap();
    assert_eq!(
        schema::output_schema(&t).unwrap()["properties"]["n"]["type"],
        "integer"
    );
}

#[test]
fn every_dialect_carries_nested_inputs_its_own_way() {
    let t = parse(&with(&format!("{EDITS}  opts:\n    type: object\n    description: d\n    optional: true\n    properties:\n      dry:\n        type: boolean\n        description: d\n"))).unwrap();
    for d in Dialect::ALL {
        let s = schema::params_schema(&t, d);
        jsonschema::draft202012::meta::validate(&s).unwrap_or_else(|e| panic!("{d}: {e}"));
        let edits = &s["properties"]["edits"];
        let item = &edits["items"];
        let count = &item["properties"]["count"];
        match d {
            Dialect::OpenAiStrict | Dialect::OpenAiResponsesStrict => {
                // Every level closed and every key required; constraints said in words.
                assert_eq!(item["additionalProperties"], false);
                assert_eq!(item["required"], json!(["old_text", "count"]));
                assert_eq!(count["type"], json!(["integer", "null"]));
                assert!(edits.get("minItems").is_none() && count.get("minimum").is_none());
                assert!(
                    edits["description"]
                        .as_str()
                        .unwrap()
                        .contains("(1\u{2013}10 items)")
                );
                assert!(
                    count["description"]
                        .as_str()
                        .unwrap()
                        .contains("(at least 1)")
                );
                assert_eq!(s["properties"]["opts"]["type"], json!(["object", "null"]));
            }
            Dialect::Gemini => {
                assert!(item.get("additionalProperties").is_none());
                assert_eq!(
                    (edits["minItems"].clone(), count["minimum"].clone()),
                    (json!(1), json!(1))
                );
                assert!(count.get("default").is_none());
            }
            _ => {
                assert_eq!(item["additionalProperties"], false);
                assert_eq!(item["required"], json!(["old_text"]));
                assert_eq!(
                    (edits["maxItems"].clone(), count["default"].clone()),
                    (json!(10), json!(1))
                );
            }
        }
    }
}

#[test]
fn a_nested_name_a_provider_rejects_is_warned_about_and_leaves_the_tool_out_there() {
    let t = parse(&with(
        "  o:\n    type: object\n    description: d\n    properties:\n      page.size:\n        type: integer\n        description: d\n",
    ))
    .unwrap();
    assert_eq!(t.warnings.len(), 1, "{:#?}", t.warnings);
    assert!(
        t.warnings[0]
            .message
            .contains("parameter name `page.size` is rejected by"),
        "{}",
        t.warnings[0].message
    );
    assert_eq!(t.warnings[0].pos, Pos::new(9, 7));
    assert!(Dialect::OpenAi.rejects(&t).is_some());
    assert!(Dialect::Anthropic.rejects(&t).is_none());
}
