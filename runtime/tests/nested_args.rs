//! A model's arguments for nested inputs: the validator's verdict at every depth, with the
//! path of each problem, its tolerance of the quirks models have, nested defaults and the
//! redaction of nested secrets.

use serde_json::{Value, json};
use toolbind::ToolInfo;
use toolbind::args::{ArgProblem, MAX_PROBLEMS, validate};

const TOOL: &str = r#"---
name: edit_file
description: Edits a file.
inputs:
  path:
    type: string
    description: The file.
  edits:
    type: array
    description: The edits.
    min_items: 1
    max_items: 50
    items:
      type: object
      properties:
        old_text:
          type: string
          description: Text to replace.
        new_text:
          type: string
          description: The replacement.
        count:
          type: integer
          description: How many.
          minimum: 1
          default: 1
  options:
    type: object
    description: How.
    optional: true
    properties:
      dry_run:
        type: boolean
        description: Only show.
        default: false
      creds:
        type: object
        description: Where to push.
        optional: true
        sensitive: true
        properties:
          user:
            type: string
            description: Who.
          token:
            type: string
            description: The token.
      note:
        type: string
        description: A secret note.
        optional: true
        sensitive: true
  limit:
    type: integer
    description: Lines of diff.
    minimum: 0
    maximum: 1000
    default: 200
  numbers:
    type: array
    description: Any numbers.
    optional: true
    items:
      type: number
---
"#;

fn tool() -> ToolInfo {
    let dir = std::env::temp_dir();
    toolbind_codegen::parse_tool_md(
        &dir.join("TOOL.md"),
        &dir,
        TOOL.as_bytes(),
        &toolbind_codegen::Options::default().require_entry(false),
    )
    .unwrap()
    .into()
}

fn edit() -> Value {
    json!({"old_text": "a", "new_text": "b"})
}

fn problems(args: Value) -> Vec<String> {
    let t = tool();
    match validate(&t, args) {
        Ok(v) => panic!("accepted as {:?}", v.params()),
        Err(e) => e.problems.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn nested_defaults_apply_only_inside_a_given_object() {
    let t = tool();
    let ok = validate(&t, json!({"path": "p", "edits": [edit()]})).unwrap();
    assert_eq!(
        Value::Object(ok.params().clone()),
        json!({"path": "p", "edits": [{"old_text": "a", "new_text": "b", "count": 1}], "limit": 200}),
        "`options` is absent, so its `dry_run` default is not applied"
    );
    let ok = validate(&t, json!({"path": "p", "edits": [edit()], "options": {}})).unwrap();
    assert_eq!(ok.params()["options"], json!({"dry_run": false}));
    // OpenAI strict sends every optional key as null: null means "the default".
    let ok = validate(
        &t,
        json!({"path": "p", "edits": [{"old_text": "a", "new_text": "b", "count": null}],
               "options": {"dry_run": null, "creds": null, "note": null}, "limit": null, "numbers": null}),
    )
    .unwrap();
    assert_eq!(ok.params()["edits"][0]["count"], json!(1));
    assert_eq!(ok.params()["options"], json!({"dry_run": false}));
    assert!(!ok.params().contains_key("numbers"));
}

#[test]
fn each_problem_names_its_path() {
    let p = problems(json!({"path": "p", "edits": [edit(), {"old_text": 42, "new_text": "b"}]}));
    assert_eq!(
        p,
        ["`edits[1].old_text`: expected a string, received the number 42"]
    );
    // `null` for a required nested field.
    let p = problems(json!({"path": "p", "edits": [{"old_text": null, "new_text": "b"}]}));
    assert_eq!(p, ["`edits[0].old_text`: expected a string, received null"]);
    let p = problems(json!({"path": "p", "edits": [{"new_text": "b"}]}));
    assert_eq!(
        p,
        ["`edits[0].old_text`: missing required field, expected a string (Text to replace.)"]
    );
    let p = problems(json!({"path": "p", "edits": [{"old_txt": "a", "new_text": "b"}]}));
    assert_eq!(p.len(), 2, "{p:#?}");
    assert_eq!(
        p[1],
        "`edits[0].old_txt`: unknown field (did you mean `old_text`?); valid fields: old_text, new_text, count"
    );
    let p = problems(json!({"path": "p", "edits": "not a list"}));
    assert_eq!(
        p,
        [
            "`edits`: expected an array of objects (1\u{2013}50 items), received the string \"not a list\""
        ]
    );
}

#[test]
fn integers_and_ranges() {
    let t = tool();
    let with = |limit: Value| json!({"path": "p", "edits": [edit()], "limit": limit});
    // `5.0` and `"7"` are whole numbers: they reach the tool as integers.
    assert_eq!(
        validate(&t, with(json!(5.0))).unwrap().params()["limit"],
        json!(5)
    );
    assert_eq!(
        validate(&t, with(json!("7"))).unwrap().params()["limit"],
        json!(7)
    );
    assert_eq!(
        problems(with(json!(2.5))),
        ["`limit`: expected an integer from 0 to 1000, received the number 2.5"]
    );
    let e = validate(&t, with(json!(5000))).unwrap_err();
    assert!(
        matches!(e.problems[0], ArgProblem::OutOfRange { .. }),
        "{e:?}"
    );
    assert_eq!(
        e.problems[0].to_string(),
        "`limit`: expected an integer from 0 to 1000, received the number 5000"
    );
    // A whole number no 64-bit integer holds: out of range, saying the range.
    for big in [json!(1e20), json!(9_223_372_036_854_775_808u64)] {
        let e = validate(&t, with(big)).unwrap_err();
        assert!(
            matches!(&e.problems[0], ArgProblem::OutOfRange { expected, .. } if expected.contains("fits in 64 bits")),
            "{e}"
        );
    }
    let p =
        problems(json!({"path": "p", "edits": [{"old_text": "a", "new_text": "b", "count": 0}]}));
    assert_eq!(
        p,
        ["`edits[0].count`: expected an integer at least 1, received the number 0"]
    );
}

#[test]
fn objects_and_arrays_sent_as_json_strings_are_read() {
    let t = tool();
    let ok = validate(
        &t,
        json!({"path": "p", "edits": "[{\"old_text\": \"a\", \"new_text\": \"b\"}]",
               "options": " {\"dry_run\": \"true\"} "}),
    )
    .unwrap();
    assert_eq!(ok.params()["edits"][0]["count"], json!(1));
    assert_eq!(ok.params()["options"], json!({"dry_run": true}));
    // A string that is not the JSON of an array is still a wrong type.
    assert_eq!(problems(json!({"path": "p", "edits": "[oops"})).len(), 1);
}

#[test]
fn ten_thousand_items_are_bounded_and_so_is_the_answer() {
    let many: Vec<Value> = (0..10_000).map(|_| edit()).collect();
    let e = validate(&tool(), json!({"path": "p", "edits": many})).unwrap_err();
    assert_eq!(e.problems.len(), 1, "{e}");
    assert_eq!(
        e.problems[0].to_string(),
        "`edits`: expected an array of objects (1\u{2013}50 items), received an array of 10000 items"
    );
    // 10,000 wrong elements: the first MAX_PROBLEMS are listed, the rest counted.
    let wrong: Vec<Value> = (0..10_000).map(|i| json!(format!("n{i}"))).collect();
    let e = validate(
        &tool(),
        json!({"path": "p", "edits": [edit()], "numbers": wrong}),
    )
    .unwrap_err();
    assert_eq!(
        (e.problems.len(), e.omitted),
        (MAX_PROBLEMS, 10_000 - MAX_PROBLEMS)
    );
    let text = e.to_string();
    assert!(
        text.contains("`numbers[0]`: expected a number, received the string \"n0\""),
        "{text}"
    );
    assert!(
        text.contains(&format!("- and {} more problems", 10_000 - MAX_PROBLEMS)),
        "{text}"
    );
    assert!(text.lines().count() < 30, "{text}");
}

#[test]
fn nested_secrets_are_hidden_and_redacted() {
    let t = tool();
    let args = json!({"path": "p", "edits": [edit()],
        "options": {"creds": {"user": "alice", "token": "tok-123456"}, "note": "hush-hush"}});
    let ok = validate(&t, args).unwrap();
    assert_eq!(
        ok.params()["options"]["creds"]["token"],
        "tok-123456",
        "the tool gets the value"
    );
    let red = Value::Object(ok.redacted());
    assert_eq!(
        red["options"]["creds"], "[REDACTED]",
        "a sensitive object is hidden whole"
    );
    assert_eq!(red["options"]["note"], "[REDACTED]");
    assert_eq!(red["options"]["dry_run"], false, "the rest stays readable");
    let shown = format!("{ok:?}");
    assert!(
        !shown.contains("tok-123456") && !shown.contains("hush-hush"),
        "{shown}"
    );
    // A wrong value inside a secret is described by its type only.
    let p = problems(json!({"path": "p", "edits": [edit()],
        "options": {"creds": {"user": "alice", "token": 1234567}}}));
    assert_eq!(
        p,
        [
            "`options.creds.token`: expected a string, received a number (value hidden: sensitive input)"
        ]
    );
}
