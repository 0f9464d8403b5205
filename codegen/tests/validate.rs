//! One test per validation rule, asserting the message, its line and column, and the hint.

use std::path::Path;

use toolbind_codegen::model::{InputType, Pos};
use toolbind_codegen::{Diagnostic, Options, Severity, ToolSpec, parse_tool_md};

fn opts() -> Options {
    Options::default().require_entry(false)
}

fn parse(src: &str) -> Result<ToolSpec, Vec<Diagnostic>> {
    parse_tool_md(
        Path::new("t/TOOL.md"),
        Path::new("t"),
        src.as_bytes(),
        &opts(),
    )
}

fn errs(src: &str) -> Vec<Diagnostic> {
    match parse(src) {
        Ok(t) => panic!("expected errors, got {t:#?}"),
        Err(d) => d,
    }
}

/// Asserts exactly one error, at `line:col`, whose message contains `msg` and hint `hint`.
#[track_caller]
fn one(src: &str, line: u32, col: u32, msg: &str, hint: Option<&str>) {
    let e = errs(src);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert_eq!(e[0].severity, Severity::Error, "{}", e[0].plain());
    check(&e[0], line, col, msg, hint);
}

/// Asserts the file loads with exactly one warning, at `line:col`, whose message contains
/// `msg` and hint `hint`; returns the tool.
#[track_caller]
fn warn_one(src: &str, line: u32, col: u32, msg: &str, hint: Option<&str>) -> ToolSpec {
    let t = parse(src).unwrap_or_else(|e| panic!("expected a warning, got errors {e:#?}"));
    assert_eq!(t.warnings.len(), 1, "{:#?}", t.warnings);
    assert_eq!(t.warnings[0].severity, Severity::Warning);
    assert!(
        t.warnings[0].plain().contains(": warning: "),
        "{}",
        t.warnings[0].plain()
    );
    check(&t.warnings[0], line, col, msg, hint);
    t
}

#[track_caller]
fn check(d: &Diagnostic, line: u32, col: u32, msg: &str, hint: Option<&str>) {
    assert!(
        d.message.contains(msg),
        "message {:?} lacks {msg:?}",
        d.message
    );
    assert_eq!(d.pos, Pos::new(line, col), "{}", d.plain());
    if let Some(h) = hint {
        assert!(
            d.hint.as_deref().is_some_and(|x| x.contains(h)),
            "hint {:?} lacks {h:?}",
            d.hint
        );
    }
}

const OK: &str = "---\nname: t\ndescription: d\n";

fn with(extra: &str) -> String {
    format!("{OK}{extra}---\n")
}

#[test]
fn a_minimal_tool_parses_with_defaults() {
    let t = parse(&with("")).unwrap();
    assert_eq!(t.label, "t");
    assert_eq!(t.version, 0);
    assert_eq!(t.language.as_str(), "typescript");
    assert!(t.inputs.is_empty());
}

#[test]
fn missing_and_unterminated_frontmatter() {
    one("# Title\n", 1, 1, "missing frontmatter", Some("`---`"));
    one(
        "---\nname: t\n",
        1,
        1,
        "unterminated frontmatter",
        Some("add a line `---`"),
    );
    one("", 1, 1, "file is empty", None);
    one("  \n\n", 1, 1, "file is empty", None);
}

#[test]
fn yaml_syntax_error_is_reported_at_its_line() {
    one(
        "---\nname: t\ndescription: d\ninputs: [a,\n---\n",
        4,
        9,
        "yaml syntax error",
        None,
    );
    one(
        "---\nname: t\ndescription: 'open\n---\n",
        3,
        14,
        "yaml syntax error",
        None,
    );
}

#[test]
fn duplicate_yaml_key() {
    one(
        "---\nname: t\ndescription: d\nname: u\n---\n",
        4,
        1,
        "duplicate",
        None,
    );
}

#[test]
fn frontmatter_shape() {
    one(
        "---\n- a\n- b\n---\n",
        2,
        1,
        "frontmatter must be a mapping",
        None,
    );
    one("---\n---\n", 1, 1, "frontmatter is empty", None);
}

#[test]
fn missing_name_and_description_reported_together() {
    let e = errs("---\nversion: 1\n---\n");
    let msgs: Vec<&str> = e.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        msgs,
        [
            "missing required key `name`",
            "missing required key `description`"
        ]
    );
    assert!(e.iter().all(|d| d.pos == Pos::new(1, 1)));
}

#[test]
fn bad_tool_names() {
    one(
        "---\nname: Web Search\ndescription: d\n---\n",
        2,
        7,
        "invalid tool name `Web Search`",
        Some("`web_search`"),
    );
    // Past every provider's length (MCP's 128) a name also fails the folder-name rule,
    // which speaks first.
    let long = "a".repeat(129);
    one(
        &format!("---\nname: {long}\ndescription: d\n---\n"),
        2,
        7,
        "longer than 128 bytes",
        None,
    );
    let t = parse("---\nname: 42\ndescription: d\n---\n").unwrap();
    assert_eq!(t.name, "42");
    assert!(
        t.warnings[0]
            .message
            .contains("`name` is written as a number; read as `42`")
    );
    one(
        "---\nname: [a]\ndescription: d\n---\n",
        2,
        7,
        "`name` must be a string",
        None,
    );
    one(
        "---\nname: ''\ndescription: d\n---\n",
        2,
        7,
        "`name` must not be empty",
        None,
    );
}

#[test]
fn provider_valid_tool_names_load_with_warnings() {
    // Not snake_case, but every provider accepts them.
    for (name, module) in [
        ("web-search", "web_search"),
        ("webSearch", "web_search"),
        ("Gmail", "gmail"),
    ] {
        let t = warn_one(
            &format!("---\nname: {name}\ndescription: d\n---\n"),
            2,
            7,
            &format!("tool name `{name}` is not snake_case"),
            Some(module),
        );
        assert_eq!(t.rust_module, module);
    }
    // Gemini wants a letter or `_` first: the tool loads and Gemini's dialect leaves it out.
    let t = parse("---\nname: 3d_render\ndescription: d\n---\n").unwrap();
    let msgs: Vec<String> = t.warnings.iter().map(Diagnostic::plain).collect();
    assert!(
        msgs.iter().any(|m| m.contains(
            "tool name `3d_render` is rejected by gemini: the tool is left out of that dialect"
        )),
        "{msgs:#?}"
    );
    assert_eq!(t.rust_module, "_3d_render");
    assert_eq!(t.rust_type, "V3dRender");
    // A dot: Gemini and MCP accept it, OpenAI and Anthropic do not.
    let t = parse("---\nname: web.search\ndescription: d\n---\n").unwrap();
    assert!(
        t.warnings[0].message.contains(
            "rejected by openai, openai-strict, openai-responses, openai-responses-strict, \
                 anthropic"
        ),
        "{:#?}",
        t.warnings
    );
    // Crate names a module would shadow.
    for (name, module) in [
        ("std", "std_tool"),
        ("core", "core_tool"),
        ("toolbind", "toolbind_tool"),
    ] {
        let t = warn_one(
            &format!("---\nname: {name}\ndescription: d\n---\n"),
            2,
            7,
            "would shadow a crate",
            None,
        );
        assert_eq!(t.rust_module, module);
    }
    let t = parse("---\nname: self\ndescription: d\n---\n").unwrap();
    assert_eq!(t.rust_module, "self_");
}

#[test]
fn relaxed_names_are_mapped_not_rejected() {
    let o = Options::default()
        .portable_names(false)
        .require_entry(false);
    let t = parse_tool_md(Path::new("t/TOOL.md"), Path::new("t"), b"---\nname: web.search\ndescription: d\ninputs:\n  x-y:\n    type: string\n    description: d\n---\n", &o).unwrap();
    assert_eq!(t.rust_module, "web_search");
    assert_eq!(t.inputs[0].rust_name, "x_y");
}

#[test]
fn unknown_keys_suggest_the_closest() {
    one(
        &with("descripton: x\n"),
        4,
        1,
        "unknown key `descripton`",
        Some("did you mean `description`?"),
    );
    one(
        &with("lang: bash\n"),
        4,
        1,
        "unknown key `lang`",
        Some("did you mean `language`?"),
    );
    one(
        &with("inputs:\n  q:\n    type: string\n    description: d\n    optinal: true\n"),
        8,
        5,
        "unknown key in input `q`: `optinal`",
        Some("did you mean `optional`?"),
    );
    one(
        &with(
            "inputs:\n  m:\n    type: enum\n    description: d\n    valuse: a,b\n    values: a\n",
        ),
        8,
        5,
        "unknown key in input `m`: `valuse`",
        Some("did you mean `values`?"),
    );
    // Not a near-miss, or a near-miss with another shape: metadata, kept, with a warning.
    let t = warn_one(
        &with("zzz: 1\n"),
        4,
        1,
        "unknown key `zzz` is ignored",
        None,
    );
    assert_eq!(t.metadata["zzz"], serde_json::json!(1));
    let t = parse(&with(
        "category: web\ncore: true\ntags: [a, b]\nenabled: false\nauthor: me\nmetadata:\n  x: 1\nscript: run.js\ninputs:\n  q:\n    type: string\n    description: d\n    example: hello\n",
    ))
    .unwrap();
    assert_eq!(t.warnings.len(), 8, "{:#?}", t.warnings);
    assert!(t.warnings.iter().all(|w| w.severity == Severity::Warning));
    assert_eq!(t.metadata["tags"], serde_json::json!(["a", "b"]));
    assert_eq!(t.metadata["metadata"], serde_json::json!({"x": 1}));
    assert_eq!(t.metadata.len(), 7);
    assert_eq!(t.inputs[0].metadata["example"], serde_json::json!("hello"));
    // `optinal: maybe` has not the shape of `optional`: metadata, with a hint.
    let t = warn_one(
        &with("inputs:\n  q:\n    type: string\n    description: d\n    optinal: maybe\n"),
        8,
        5,
        "unknown key in input `q`: `optinal` is ignored",
        Some("if you meant `optional`"),
    );
    assert_eq!(t.inputs[0].metadata["optinal"], serde_json::json!("maybe"));
}

#[test]
fn unknown_annotations_are_warnings_unless_a_near_miss() {
    one(
        &with("annotations:\n  readonly: true\n"),
        5,
        3,
        "unknown annotation `readonly`",
        Some("did you mean `read_only`?"),
    );
    warn_one(
        &with("annotations:\n  priority: high\n"),
        5,
        3,
        "unknown annotation `priority` is ignored",
        None,
    );
}

#[test]
fn other_formats_words_for_keys_that_change_the_tool_are_errors() {
    one(
        &with("inputs:\n  q:\n    type: string\n    description: d\n    secret: true\n"),
        8,
        5,
        "unknown key in input `q`: `secret`",
        Some("did you mean `sensitive`?"),
    );
    // `required:` is read as the inverse of `optional:` (other formats' spelling), with no
    // warning; saying both the same way is a contradiction.
    let t = parse(&with(
        "inputs:\n  q:\n    type: string\n    description: d\n    required: false\n  r:\n    type: string\n    description: d\n    required: true\n",
    ))
    .unwrap();
    assert!(t.warnings.is_empty(), "{:#?}", t.warnings);
    assert!(t.inputs[0].optional && !t.inputs[1].optional);
    one(
        &with(
            "inputs:\n  q:\n    type: string\n    description: d\n    required: true\n    optional: true\n",
        ),
        8,
        15,
        "input `q` says both `required: true` and `optional: true`",
        Some("keep one"),
    );
    // Plurals of known keys and `lang: en` are metadata, not misspellings.
    let t = parse(&with("labels: internal\nnames: x\nversions: 3\nlang: en\n")).unwrap();
    assert_eq!(t.warnings.len(), 4, "{:#?}", t.warnings);
    assert!(t.warnings.iter().all(|w| !w.is_error()));
    one(
        &with("lang: python\n"),
        4,
        1,
        "unknown key `lang`",
        Some("did you mean `language`?"),
    );
}

#[test]
fn json_schema_parameters_block_loads_through_the_mapping_with_a_warning_showing_inputs() {
    let src = with(concat!(
        "parameters:\n",
        "  type: object\n",
        "  properties:\n",
        "    q:\n",
        "      type: string\n",
        "      description: What to look for\n",
        "    limit:\n",
        "      type: integer\n",
        "      description: At most this many\n",
        "      minimum: 1\n",
        "      default: 10\n",
        "    mode:\n",
        "      type: string\n",
        "      description: How hard to look\n",
        "      enum: [fast, deep]\n",
        "    filter:\n",
        "      type: object\n",
        "      description: Which results count\n",
        "      properties:\n",
        "        tags:\n",
        "          type: array\n",
        "          description: All of these\n",
        "          items: {type: string}\n",
        "      required: [tags]\n",
        "  required: [q]\n",
    ));
    let t = warn_one(
        &src,
        4,
        1,
        "`parameters:` is a JSON Schema block, not TOOL.md's `inputs:`: read as the `inputs:` it maps to",
        Some("replace `parameters:` with the `inputs:` it was read as:\ninputs:\n"),
    );
    let by = |n: &str| t.inputs.iter().find(|i| i.name == n).unwrap();
    assert_eq!(t.inputs.len(), 4, "{:#?}", t.inputs);
    assert_eq!(by("q").ty, InputType::String);
    assert!(!by("q").optional);
    assert_eq!(by("q").description, "What to look for");
    // The position of each input is its key in the block, for later diagnostics.
    assert_eq!(by("q").pos, Pos::new(7, 5));
    assert_eq!(by("limit").ty, InputType::Integer);
    assert!(by("limit").optional);
    assert_eq!(by("limit").minimum, Some(1.0));
    assert_eq!(by("limit").default, Some(serde_json::json!(10)));
    assert_eq!(by("mode").ty, InputType::Enum);
    assert_eq!(by("filter").ty, InputType::Object);
    assert_eq!(by("filter").properties[0].ty, InputType::Array);
    // The `inputs:` the hint shows is TOOL.md that reads back as the same inputs.
    let hint = t.warnings[0].hint.as_deref().unwrap();
    let yaml = &hint[hint.find("inputs:\n").unwrap()..];
    let back = parse(&with(&format!("{yaml}\n"))).unwrap_or_else(|e| panic!("{yaml}\n{e:#?}"));
    assert!(back.warnings.is_empty(), "{yaml}\n{:#?}", back.warnings);
    let shape = |inputs: &[toolbind_codegen::Input]| {
        let mut out = Vec::new();
        for top in inputs {
            top.visit(&mut |i| {
                out.push((
                    i.name.clone(),
                    i.ty,
                    i.optional,
                    i.description.clone(),
                    i.values.iter().map(|v| v.wire.clone()).collect::<Vec<_>>(),
                    i.default.clone(),
                    i.minimum,
                ))
            });
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    };
    assert_eq!(shape(&back.inputs), shape(&t.inputs), "{yaml}");
}

#[test]
fn json_schema_blocks_toolbind_cannot_read_stay_errors() {
    // Beside `inputs:`, a second parameters block is ambiguous.
    let both = with(
        "inputs:\n  a:\n    type: string\n    description: d\nparameters:\n  type: object\n  properties:\n    q:\n      type: string\n",
    );
    let e = errs(&both);
    assert_eq!(e.len(), 1, "{e:#?}");
    check(
        &e[0],
        8,
        1,
        "`parameters` is not a TOOL.md key: a tool's parameters go under `inputs`",
        Some("rename `parameters:` to `inputs:`"),
    );
    // Two blocks: which one holds the inputs is not guessed either.
    let two = with(
        "parameters:\n  type: object\n  properties:\n    q:\n      type: string\ninput_schema:\n  type: object\n  properties:\n    r:\n      type: string\n",
    );
    let e = errs(&two);
    assert_eq!(e.len(), 2, "{e:#?}");
    assert!(
        e.iter().all(|d| d.message.contains("is not a TOOL.md key")),
        "{e:#?}"
    );
    // Not a JSON Schema object (no `properties`, or another type): not guessed at.
    one(
        &with("params:\n  q: string\n"),
        4,
        1,
        "`params` is not a TOOL.md key",
        None,
    );
    one(
        &with("parameters:\n  type: array\n  properties:\n    q:\n      type: string\n"),
        4,
        1,
        "`parameters` is not a TOOL.md key",
        None,
    );
}

#[test]
fn what_a_json_schema_block_says_that_inputs_cannot_is_untyped_with_a_warning_at_its_line() {
    let src = with(concat!(
        "input_schema:\n",
        "  type: object\n",
        "  properties:\n",
        "    q:\n",
        "      type: string\n",
        "    shape:\n",
        "      description: A circle or a square\n",
        "      oneOf:\n",
        "        - {type: object, properties: {r: {type: number}}}\n",
        "        - {type: object, properties: {w: {type: number}}}\n",
    ));
    let t = parse(&src).unwrap_or_else(|e| panic!("{e:#?}"));
    assert_eq!(t.warnings.len(), 2, "{:#?}", t.warnings);
    let untyped = t
        .warnings
        .iter()
        .find(|w| w.message.contains("`/properties/shape`"))
        .unwrap();
    assert_eq!(untyped.pos, Pos::new(9, 5), "{}", untyped.plain());
    assert!(
        untyped.message.starts_with("input_schema at"),
        "{}",
        untyped.message
    );
    assert!(
        untyped
            .hint
            .as_deref()
            .is_some_and(|h| h.contains("TOOL.md `inputs:` cannot type it")),
        "{:#?}",
        untyped
    );
    let shape = t.inputs.iter().find(|i| i.name == "shape").unwrap();
    assert_eq!(shape.ty, InputType::Any);
    let hint = t
        .warnings
        .iter()
        .find(|w| w.message.contains("is a JSON Schema block"))
        .and_then(|w| w.hint.as_deref())
        .unwrap();
    assert!(
        hint.contains(concat!(
            "  shape:\n",
            "    # any JSON value: TOOL.md has no type for it\n",
            "    description: \"A circle or a square\"\n",
            "    optional: true"
        )),
        "{hint}"
    );
    // `q` has no description: the `inputs:` shown says it needs one.
    assert!(
        hint.contains("  q:\n    type: string\n    # description: none in the schema, and `inputs:` needs one\n"),
        "{hint}"
    );
}

#[test]
fn unknown_type_suggests() {
    one(
        &with("inputs:\n  q:\n    type: strin\n    description: d\n"),
        6,
        11,
        "unknown input type `strin`, expected one of string, number, integer, boolean, enum, object, array",
        Some("did you mean `string`?"),
    );
    one(
        &with("inputs:\n  q:\n    type: int\n    description: d\n"),
        6,
        11,
        "unknown input type `int`",
        Some("did you mean `integer`?"),
    );
    one(
        &with("inputs:\n  q:\n    type: float\n    description: d\n"),
        6,
        11,
        "unknown input type `float`",
        Some("did you mean `number`?"),
    );
    one(
        &with("inputs:\n  q:\n    type: bool\n    description: d\n"),
        6,
        11,
        "unknown input type `bool`",
        Some("`boolean`"),
    );
    one(
        &with("inputs:\n  q:\n    type: list\n    description: d\n"),
        6,
        11,
        "unknown input type `list`",
        Some("did you mean `array`?"),
    );
}

#[test]
fn input_needs_type_and_description() {
    one(
        &with("inputs:\n  q:\n    type: string\n"),
        5,
        3,
        "input `q` has no `description`",
        Some("add `description:`"),
    );
    one(
        &with("inputs:\n  q:\n    description: d\n"),
        5,
        3,
        "input `q` has no `type`",
        None,
    );
    one(
        &with("inputs:\n  q: string\n"),
        5,
        6,
        "input `q` must be a mapping",
        None,
    );
}

#[test]
fn inputs_must_be_a_mapping() {
    one(
        &with("inputs: [a, b]\n"),
        4,
        9,
        "`inputs` must be a mapping",
        None,
    );
    one(
        &with("inputs: text\n"),
        4,
        9,
        "`inputs` must be a mapping",
        None,
    );
    assert!(parse(&with("inputs:\n")).unwrap().inputs.is_empty());
}

#[test]
fn enum_rules() {
    one(
        &with("inputs:\n  m:\n    type: enum\n    description: d\n"),
        5,
        3,
        "enum input `m` has no `values`",
        Some("values: first,second"),
    );
    let t = warn_one(
        &with("inputs:\n  m:\n    type: enum\n    description: d\n    values: a, b, a\n"),
        8,
        19,
        "duplicate enum value `a` in `m` is ignored",
        None,
    );
    assert_eq!(t.inputs[0].values.len(), 2);
    warn_one(
        &with("inputs:\n  m:\n    type: enum\n    description: d\n    values: [x, y, x]\n"),
        8,
        20,
        "duplicate enum value `x`",
        None,
    );
    let t = warn_one(
        &with("inputs:\n  m:\n    type: enum\n    description: d\n    values: a-b, a_b\n"),
        8,
        18,
        "enum values `a-b` and `a_b` of `m` both map to the Rust variant `AB`: `a_b` gets `AB2`",
        None,
    );
    let rust: Vec<&str> = t.inputs[0].values.iter().map(|v| v.rust.as_str()).collect();
    assert_eq!(rust, ["AB", "AB2"]);
    warn_one(
        &with("inputs:\n  m:\n    type: enum\n    description: d\n    values: a,,b\n"),
        8,
        15,
        "empty enum value",
        Some("extra comma"),
    );
    // A trailing comma.
    let t = warn_one(
        &with("inputs:\n  m:\n    type: enum\n    description: d\n    values: a,b,\n"),
        8,
        17,
        "empty enum value",
        Some("extra comma"),
    );
    assert_eq!(t.inputs[0].values.len(), 2);
    let t = warn_one(
        &with("inputs:\n  m:\n    type: string\n    description: d\n    values: a,b\n"),
        8,
        13,
        "`values` is ignored: `m` is a string input",
        Some("change `type` to `enum`"),
    );
    assert!(t.inputs[0].values.is_empty());
    // Punctuation only: spelled out.
    let t = parse(&with(
        "inputs:\n  op:\n    type: enum\n    description: d\n    values: \"+,-,*,/\"\n",
    ))
    .unwrap();
    let rust: Vec<&str> = t.inputs[0].values.iter().map(|v| v.rust.as_str()).collect();
    assert_eq!(rust, ["Plus", "Minus", "Star", "Slash"]);
    // Each warning points at its own value, inside the quotes.
    let cols: Vec<u32> = t.warnings.iter().map(|w| w.pos.column).collect();
    assert_eq!(cols, [14, 16, 18, 20], "{:#?}", t.warnings);
    // Case-only differences.
    let t = parse(&with(
        "inputs:\n  u:\n    type: enum\n    description: d\n    values: mb,MB,Mb2\n",
    ))
    .unwrap();
    let rust: Vec<&str> = t.inputs[0].values.iter().map(|v| v.rust.as_str()).collect();
    assert_eq!(rust, ["Mb", "Mb2", "Mb2_2"]);
    let t = parse(&with(
        "inputs:\n  m:\n    type: enum\n    description: d\n    values: [yes, no, 1.10]\n",
    ))
    .unwrap();
    let wires: Vec<&str> = t.inputs[0].values.iter().map(|v| v.wire.as_str()).collect();
    assert_eq!(wires, ["yes", "no", "1.10"]);
}

#[test]
fn defaults_type_check() {
    one(
        &with("inputs:\n  n:\n    type: number\n    description: d\n    default: ten\n"),
        8,
        14,
        "default of number input `n` must be a number, found a string `ten`",
        None,
    );
    let t = warn_one(
        &with("inputs:\n  n:\n    type: number\n    description: d\n    default: \"5\"\n"),
        8,
        14,
        "default of number input `n` is a quoted string; read as 5",
        Some("remove the quotes"),
    );
    assert_eq!(t.inputs[0].default, Some(serde_json::json!(5)));
    let t = warn_one(
        &with("inputs:\n  s:\n    type: string\n    description: d\n    default: 12345\n"),
        8,
        14,
        "default of string input `s` is written as an integer; read as the string \"12345\"",
        Some("quote it"),
    );
    assert_eq!(t.inputs[0].default, Some(serde_json::json!("12345")));
    // From the source text: the leading zeros stay.
    let t = parse(&with(
        "inputs:\n  s:\n    type: string\n    description: d\n    default: 007\n",
    ))
    .unwrap();
    assert_eq!(t.inputs[0].default, Some(serde_json::json!("007")));
    // `default: null` means no default.
    let t = parse(&with(
        "inputs:\n  s:\n    type: string\n    description: d\n    optional: true\n    default: null\n",
    ))
    .unwrap();
    assert!(t.warnings.is_empty(), "{:#?}", t.warnings);
    assert_eq!(t.inputs[0].default, None);
    one(
        &with("inputs:\n  s:\n    type: string\n    description: d\n    default: [1]\n"),
        8,
        14,
        "default of string input `s` must be a string, found a list",
        None,
    );
    one(
        &with("inputs:\n  n:\n    type: number\n    description: d\n    default: \"1e999\"\n"),
        8,
        14,
        "must be a number",
        None,
    );
    one(
        &with("inputs:\n  b:\n    type: boolean\n    description: d\n    default: yes\n"),
        8,
        14,
        "must be a boolean",
        Some("`true` or `false`"),
    );
    one(
        &with(
            "inputs:\n  m:\n    type: enum\n    description: d\n    values: a,b\n    default: c\n",
        ),
        9,
        14,
        "default `c` of enum `m` is not one of its values: a, b",
        None,
    );
    one(
        &with(
            "inputs:\n  m:\n    type: enum\n    description: d\n    values: alpha,beta\n    default: alpah\n",
        ),
        9,
        14,
        "is not one of its values",
        Some("did you mean `alpha`?"),
    );
    let t = parse(&with("inputs:\n  n:\n    type: number\n    description: d\n    default: 10\n  f:\n    type: number\n    description: d\n    default: 2.5\n")).unwrap();
    assert_eq!(t.inputs[0].default, Some(serde_json::json!(10)));
    assert!(
        t.inputs[0].default.as_ref().unwrap().is_u64(),
        "an integer default stays an integer"
    );
    assert_eq!(t.inputs[1].default, Some(serde_json::json!(2.5)));
    assert!(!t.inputs[0].required());
}

#[test]
fn a_sensitive_default_is_kept_for_the_runtime_only() {
    let t = warn_one(
        &with(
            "inputs:\n  k:\n    type: string\n    description: d\n    sensitive: true\n    default: hunter2\n",
        ),
        9,
        14,
        "sensitive input `k` has a default: it is applied at run time only",
        None,
    );
    let k = &t.inputs[0];
    assert_eq!(k.default, Some(serde_json::json!("hunter2")));
    assert_eq!(k.public_default(), None);
    assert!(!k.required());
}

#[test]
fn versions() {
    one(
        &with("version: 1.5\n"),
        4,
        10,
        "`version` must be a non-negative integer, found `1.5`",
        Some("whole number"),
    );
    one(
        &with("version: -1\n"),
        4,
        10,
        "found `-1`",
        Some("only go up"),
    );
    let t = warn_one(
        &with("version: \"2\"\n"),
        4,
        10,
        "`version` is a quoted string; read as 2",
        Some("remove the quotes"),
    );
    assert_eq!(t.version, 2);
    one(
        &with("version: \"two\"\n"),
        4,
        10,
        "non-negative integer",
        None,
    );
    assert_eq!(parse(&with("version: 12\n")).unwrap().version, 12);
}

#[test]
fn languages() {
    one(
        &with("language: rust\n"),
        4,
        11,
        "unknown language `rust`, expected one of typescript, python, bash",
        None,
    );
    one(
        &with("language: pyhton\n"),
        4,
        11,
        "unknown language",
        Some("did you mean `python`?"),
    );
    one(
        &with("language: sh\n"),
        4,
        11,
        "unknown language",
        Some("did you mean `bash`?"),
    );
}

#[test]
fn parameter_names_providers_reject() {
    one(
        &with("inputs:\n  my param:\n    type: string\n    description: d\n"),
        5,
        3,
        "parameter name `my param` is not accepted by any model provider",
        Some("`my_param`"),
    );
    warn_one(
        &with("inputs:\n  2fa:\n    type: string\n    description: d\n"),
        5,
        3,
        "parameter name `2fa` is rejected by gemini: the tool `t` is left out of that dialect",
        Some("`_2fa`"),
    );
    warn_one(
        &with("inputs:\n  x.y:\n    type: string\n    description: d\n"),
        5,
        3,
        "parameter name `x.y` is rejected by openai, openai-strict",
        None,
    );
    // Every provider takes a dash.
    let t = parse(&with(
        "inputs:\n  x-y:\n    type: string\n    description: d\n",
    ))
    .unwrap();
    assert!(t.warnings.is_empty(), "{:#?}", t.warnings);
    assert_eq!(t.inputs[0].rust_name, "x_y");
}

#[test]
fn rust_identifier_collisions() {
    // The Pi tool API's old-name alias pattern.
    let t = warn_one(
        &with(
            "inputs:\n  maxResults:\n    type: string\n    description: d\n  max_results:\n    type: string\n    description: d\n",
        ),
        8,
        3,
        "parameters `maxResults` and `max_results` both map to the Rust field `max_results`: `max_results` gets `max_results_2`",
        None,
    );
    assert_eq!(t.inputs[1].rust_name, "max_results_2");
    let t = parse(&with(
        "inputs:\n  Self:\n    type: enum\n    description: d\n    values: a\n  self:\n    type: enum\n    description: d\n    values: b\n",
    ))
    .unwrap();
    let msgs: Vec<&str> = t.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(
        msgs,
        [
            "parameters `Self` and `self` both map to the Rust field `self_`: `self` gets `self_2`",
            "enum inputs `Self` and `self` both map to the Rust type `Self_`: `self` gets `Self2`",
        ]
    );
    assert_eq!(t.inputs[1].rust_name, "self_2");
    assert_eq!(t.inputs[0].rust_type, "Self_");
    assert_eq!(t.inputs[1].rust_type, "Self2");
    let t = parse(&with("inputs:\n  type:\n    type: string\n    description: d\n  self:\n    type: string\n    description: d\n")).unwrap();
    assert_eq!(t.inputs[0].rust_name, "r#type");
    assert_eq!(t.inputs[1].rust_name, "self_");
}

#[test]
fn extensions() {
    let t = parse(&with("timeout: 30\nenv: [API_KEY]\nworker: oneshot\nprompt_snippet: s\nprompt_guidelines: [use t well]\nannotations:\n  read_only: true\n")).unwrap();
    assert_eq!(t.timeout_secs, Some(30.0));
    assert_eq!(t.env, ["API_KEY"]);
    assert_eq!(t.snippet(), "s");
    assert_eq!(t.annotations.read_only, Some(true));
    one(
        &with("timeout: 0\n"),
        4,
        10,
        "`timeout` must be a positive number",
        None,
    );
    let t = warn_one(
        &with("env: [1BAD, OK]\n"),
        4,
        7,
        "`1BAD` is not an environment variable name; it is not passed to the tool",
        None,
    );
    assert_eq!(t.env, ["OK"]);
    one(
        &with("worker: hot\n"),
        4,
        9,
        "unknown worker mode `hot`",
        Some("`warm` or `oneshot`"),
    );
    let t = warn_one(
        &with("prompt_guidelines:\n  - Use this tool wisely\n"),
        5,
        5,
        "guideline does not name the tool `t`",
        None,
    );
    assert_eq!(t.prompt_guidelines, ["Use this tool wisely"]);
    // Quoted values of toolbind's own keys convert, as defaults do; case does not matter.
    let t = warn_one(
        &with("timeout: \"30\"\n"),
        4,
        10,
        "`timeout` is a quoted string; read as 30 seconds",
        None,
    );
    assert_eq!(t.timeout_secs, Some(30.0));
    let t = parse(&with("worker: Warm\nexecution: Sequential\n")).unwrap();
    assert!(t.warnings.is_empty());
    assert_eq!(t.worker, toolbind_codegen::model::WorkerMode::Warm);
    one(
        &with("timeout: \"soon\"\n"),
        4,
        10,
        "found `\"soon\"`",
        None,
    );
    let t = warn_one(
        &with("inputs:\n  q:\n    type: string\n    description: d\n    optional: \"true\"\n"),
        8,
        15,
        "`optional` is a quoted string; read as true",
        None,
    );
    assert!(t.inputs[0].optional);
    one(
        &with("annotations:\n  readonly: true\n"),
        5,
        3,
        "unknown annotation `readonly`",
        Some("did you mean `read_only`?"),
    );
}

#[test]
fn all_errors_of_a_file_at_once() {
    let e = errs(
        "---\nname: t\ndescripton: d\nversion: -2\nlanguage: rust\ninputs:\n  a:\n    type: strin\n  b:\n    type: enum\n    description: d\n---\n",
    );
    let lines: Vec<u32> = e.iter().map(|d| d.pos.line).collect();
    assert_eq!(lines, [3, 4, 5, 8, 7, 9, 1], "{e:#?}");
}

#[test]
fn not_utf8() {
    let e = parse_tool_md(
        Path::new("t/TOOL.md"),
        Path::new("t"),
        b"---\nname: t\ndescription: caf\xe9\n---\n",
        &opts(),
    )
    .unwrap_err();
    assert_eq!(e[0].pos, Pos::new(3, 17));
    assert!(e[0].message.contains("not valid UTF-8"));
}

#[test]
fn crlf_and_bom() {
    let t = parse("\u{feff}---\r\nname: t\r\ndescription: d\r\ninputs:\r\n  q:\r\n    type: number\r\n    description: e\r\n---\r\n# T\r\n").unwrap();
    assert_eq!(t.inputs[0].ty, InputType::Number);
    assert_eq!(t.body.title.as_deref(), Some("T"));
    let e = errs("---\r\nname: t\r\ndescription: d\r\nversion: x\r\n---\r\n");
    assert_eq!(e[0].pos, Pos::new(4, 10));
}

#[test]
fn entry_file_required_by_language() {
    let dir = std::env::temp_dir().join(format!("toolbind-entry-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = "---\nname: t\ndescription: d\nlanguage: python\n---\n";
    let e = parse_tool_md(
        &dir.join("TOOL.md"),
        &dir,
        src.as_bytes(),
        &Options::default(),
    )
    .unwrap_err();
    assert_eq!(e[0].pos, Pos::new(4, 11));
    assert!(
        e[0].message
            .contains("missing entry file: a python tool needs one of index.py"),
        "{}",
        e[0]
    );
    std::fs::write(dir.join("index.py"), "def execute(*a): return 'x'\n").unwrap();
    let t = parse_tool_md(
        &dir.join("TOOL.md"),
        &dir,
        src.as_bytes(),
        &Options::default(),
    )
    .unwrap();
    assert_eq!(t.entry.as_deref(), Some("index.py"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unknown_language_does_not_also_ask_for_an_entry_file() {
    let dir = std::env::temp_dir().join(format!("toolbind-lang-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = "---\nname: t\ndescription: d\nlanguage: rust\n---\n";
    let e = parse_tool_md(
        &dir.join("TOOL.md"),
        &dir,
        src.as_bytes(),
        &Options::default(),
    )
    .unwrap_err();
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(e[0].message.starts_with("unknown language"));
    let src = "---\nname: t\ndescription: d\nlanguage: bash\n---\n";
    let e = parse_tool_md(
        &dir.join("TOOL.md"),
        &dir,
        src.as_bytes(),
        &Options::default(),
    )
    .unwrap_err();
    assert!(
        e[0].hint.as_deref().unwrap().contains("JSON on stdin"),
        "{e:#?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_folder_without_tool_md_has_no_line() {
    let dir = std::env::temp_dir().join(format!("toolbind-notool-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let e = toolbind_codegen::parse_tool_dir(&dir, &Options::default()).unwrap_err();
    assert_eq!(e[0].pos, Pos::NONE);
    assert_eq!(
        e[0].plain().split(": ").nth(1),
        Some("tool folder has no TOOL.md (help")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A hostile frontmatter — an alias bomb, or nesting deep enough to exhaust a recursive
/// parser's stack — is refused quickly by the YAML parser's limits, with words for it.
#[test]
fn alias_bombs_and_deep_nesting_are_refused_quickly() {
    let mut bomb = String::from(
        "x0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 9].join(",");
        bomb.push_str(&format!("x{i}: &a{i} [{refs}]\n"));
    }
    let flow = format!("x: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    let block: String = (0..3000)
        .map(|i| format!("x{i}:\n{}", " ".repeat(i + 1)))
        .collect();
    for src in [bomb, flow, format!("{block}y\n")] {
        let started = std::time::Instant::now();
        let e = errs(&with(&src));
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert_eq!(e.len(), 1, "{e:#?}");
        assert!(
            e[0].message.contains("too large or too deeply nested"),
            "{}",
            e[0].plain()
        );
        assert!(
            e[0].hint
                .as_deref()
                .unwrap()
                .contains("one level of inputs")
        );
    }
}

#[test]
fn sandbox_key_narrows_network_and_rejects_the_rest() {
    assert_eq!(parse(&with("")).unwrap().sandbox.network, None);
    let t = parse(&with("sandbox:\n  network: false\n")).unwrap();
    assert_eq!(t.sandbox.network, Some(false));
    let t = parse(&with("sandbox: {network: true}\n")).unwrap();
    assert_eq!(t.sandbox.network, Some(true));
    one(
        &with("sandbox:\n  network: \"no\"\n"),
        5,
        12,
        "`network` must be `true` or `false`",
        None,
    );
    one(
        &with("sandbox:\n  netwrk: false\n"),
        5,
        3,
        "unknown sandbox key `netwrk`",
        Some("did you mean `network`?"),
    );
    one(
        &with("sandbox: strict\n"),
        4,
        10,
        "`sandbox` must be a mapping",
        None,
    );
}

#[test]
fn approval_mode() {
    use toolbind_codegen::Approval;
    assert_eq!(parse(&with("")).unwrap().approval, Approval::Never);
    let t = parse(&with("approval: always\n")).unwrap();
    assert_eq!(t.approval, Approval::Always);
    assert!(t.warnings.is_empty(), "{:#?}", t.warnings);
    assert!(t.metadata.is_empty(), "a known key is not metadata");
    assert_eq!(
        parse(&with("approval: Never\n")).unwrap().approval,
        Approval::Never
    );
    // A tool meant to wait for approval must not run unasked for a typo.
    one(
        &with("approval: yes\n"),
        4,
        11,
        "unknown approval mode `yes`",
        Some("`always` (every call waits for the host's approval), `when <boolean input>`"),
    );
    // Conditional: a boolean input decides.
    let with_inputs = |approval: &str| {
        format!(
            "---\nname: copy_file\ndescription: Copies a file.\n{approval}inputs:\n  overwrite:\n    type: boolean\n    description: Replace it.\n  path:\n    type: string\n    description: Where.\n---\n"
        )
    };
    let t = parse(&with_inputs("approval: when overwrite\n")).unwrap();
    assert_eq!(t.approval, Approval::When("overwrite".into()));
    let args = |v: serde_json::Value| v.as_object().unwrap().clone();
    assert!(
        t.approval
            .needed(&args(serde_json::json!({"overwrite": true})))
    );
    assert!(
        !t.approval
            .needed(&args(serde_json::json!({"overwrite": false})))
    );
    let e = parse(&with_inputs("approval: when force\n")).unwrap_err();
    assert!(
        e[0].message.contains("names no input of this tool"),
        "{e:?}"
    );
    assert!(e[0].hint.as_deref().unwrap().contains("overwrite"), "{e:?}");
    let e = parse(&with_inputs("approval: when path\n")).unwrap_err();
    assert!(e[0].message.contains("not a boolean input"), "{e:?}");
    one(
        &with("aproval: always\n"),
        4,
        1,
        "unknown key `aproval`",
        Some("did you mean `approval`?"),
    );
}

#[test]
fn asks_lists_the_questions_a_tool_cannot_do_without() {
    use toolbind_codegen::Ask;
    assert!(parse(&with("")).unwrap().asks.is_empty());
    let t = parse(&with("asks: [sampling, Roots, sampling]\n")).unwrap();
    assert_eq!(t.asks, [Ask::Sampling, Ask::Roots]);
    assert!(t.warnings.is_empty(), "{:#?}", t.warnings);
    assert!(t.metadata.is_empty(), "a known key is not metadata");
    // A tool listed as needing nothing would run for a client that cannot answer.
    one(
        &with("asks: [sampling, model]\n"),
        4,
        18,
        "`model` is not a question a client can be asked",
        Some(
            "expected `elicitation` (forms: ctx.elicit, ctx.confirm), `sampling` (ctx.sample) or `roots` (ctx.roots)",
        ),
    );
}

#[test]
fn task_support() {
    use toolbind_codegen::TaskSupport;
    // Absent: a plain call, unless the tool may run longer than a host waits for one.
    assert_eq!(parse(&with("")).unwrap().task, TaskSupport::Never);
    assert_eq!(
        parse(&with("timeout: 60\n")).unwrap().task,
        TaskSupport::Never
    );
    assert_eq!(
        parse(&with("timeout: 60.5\n")).unwrap().task,
        TaskSupport::Optional
    );
    let t = parse(&with("task: required\n")).unwrap();
    assert_eq!(t.task, TaskSupport::Required);
    assert!(t.warnings.is_empty(), "{:#?}", t.warnings);
    assert!(t.metadata.is_empty(), "a known key is not metadata");
    assert_eq!(
        parse(&with("task: Optional\n")).unwrap().task,
        TaskSupport::Optional
    );
    // Said outright, `never` wins over a long timeout.
    assert_eq!(
        parse(&with("timeout: 600\ntask: never\n")).unwrap().task,
        TaskSupport::Never
    );
    one(
        &with("task: always\n"),
        4,
        7,
        "unknown task mode `always`",
        Some(
            "`optional` (a task for a client that takes tasks), `required` (only as a task) or `never`",
        ),
    );
    one(
        &with("task: true\n"),
        4,
        7,
        "unknown task mode `true`",
        Some("`optional`"),
    );
}

#[test]
fn execution_mode() {
    use toolbind_codegen::model::Execution;
    assert_eq!(parse(&with("")).unwrap().execution, Execution::Parallel);
    let t = parse(&with("execution: sequential\n")).unwrap();
    assert_eq!(t.execution, Execution::Sequential);
    assert!(t.warnings.is_empty(), "{:#?}", t.warnings);
    assert!(t.metadata.is_empty(), "a known key is not metadata");
    let t = parse(&with("execution: parallel\n")).unwrap();
    assert_eq!(t.execution, Execution::Parallel);
    one(
        &with("execution: serial\n"),
        4,
        12,
        "unknown execution mode `serial`",
        Some("`parallel` (the default) or `sequential`"),
    );
    // A near-miss holding a mode would silently run the tool in parallel: an error.
    one(
        &with("executon: sequential\n"),
        4,
        1,
        "unknown key `executon`",
        Some("did you mean `execution`?"),
    );
}

// ---- outputs: ----------------------------------------------------------------------------

#[test]
fn outputs_parse_into_typed_fields() {
    use toolbind_codegen::OutputType;
    let t = parse(&with(
        "outputs:\n  status:\n    type: number\n    description: s\n  messages:\n    type: array\n    description: m\n    items:\n      type: object\n      properties:\n        subject:\n          type: string\n          description: s\n        labels:\n          type: array\n          optional: true\n          description: l\n          items:\n            type: enum\n            values: a, b\n",
    ))
    .unwrap();
    assert!(t.warnings.is_empty(), "{:#?}", t.warnings);
    assert_eq!(t.outputs.len(), 2);
    assert_eq!(t.outputs[0].ty, OutputType::Number);
    assert_eq!(t.outputs[0].pos, Pos::new(5, 3));
    let OutputType::Array { items } = &t.outputs[1].ty else {
        panic!("{:#?}", t.outputs[1])
    };
    let OutputType::Object {
        properties,
        rust_type,
    } = &items.ty
    else {
        panic!("{items:#?}")
    };
    // Array elements are named after the field, in the singular.
    assert_eq!(rust_type, "Message");
    assert_eq!(properties[0].name, "subject");
    assert!(properties[1].optional);
    let OutputType::Array { items } = &properties[1].ty else {
        panic!()
    };
    assert!(
        matches!(&items.ty, OutputType::Enum { rust_type, values } if rust_type == "Label" && values.len() == 2)
    );
    // A seed-format file has none.
    assert!(parse(&with("")).unwrap().outputs.is_empty());
}

#[test]
fn outputs_must_be_a_mapping() {
    one(
        &with("outputs: [a, b]\n"),
        4,
        10,
        "`outputs` must be a mapping of field names to output specs, found a list",
        Some("one indented `field_name:` block per field"),
    );
    one(
        &with("outputs:\n  n: number\n"),
        5,
        6,
        "output `n` must be a mapping with `type` and `description`, found a string",
        Some("write `n:` then indented `type: string`"),
    );
}

#[test]
fn output_with_a_bad_type() {
    one(
        &with("outputs:\n  n:\n    type: int\n    description: d\n"),
        6,
        11,
        "unknown output type `int`, expected one of string, number, integer, boolean, enum, object, array",
        Some("did you mean `integer`?"),
    );
    one(
        &with("outputs:\n  n:\n    type: list\n    description: d\n"),
        6,
        11,
        "unknown output type `list`",
        Some("did you mean `array`?"),
    );
    one(
        &with("outputs:\n  n:\n    description: d\n"),
        5,
        3,
        "output `n` has no `type`",
        Some("string, number, boolean, enum, object, array"),
    );
}

#[test]
fn array_output_without_items() {
    one(
        &with("outputs:\n  rows:\n    type: array\n    description: d\n"),
        5,
        3,
        "array output `rows` has no `items`",
        Some("e.g. `items: {type: string}`"),
    );
    one(
        &with("outputs:\n  rows:\n    type: array\n    description: d\n    items: string\n"),
        8,
        12,
        "`items` of `rows` must be a mapping with `type`, found a string",
        Some("write `items: {type: string}`"),
    );
    // Errors inside nested specs point into them.
    one(
        &with(
            "outputs:\n  rows:\n    type: array\n    description: d\n    items:\n      type: object\n      properties:\n        id:\n          type: strin\n          description: d\n",
        ),
        12,
        17,
        "unknown output type `strin`",
        Some("did you mean `string`?"),
    );
    one(
        &with("outputs:\n  e:\n    type: enum\n    description: d\n"),
        5,
        3,
        "enum output `e` has no `values`",
        Some("values: first,second"),
    );
}

#[test]
fn keys_of_another_type_are_ignored_with_a_warning() {
    warn_one(
        &with(
            "outputs:\n  n:\n    type: string\n    description: d\n    properties:\n      a:\n        type: string\n",
        ),
        8,
        5,
        "`properties` is ignored: output `n` is of type string, not object",
        Some("change `type` to `object`"),
    );
    warn_one(
        &with(
            "outputs:\n  n:\n    type: array\n    description: d\n    items:\n      type: string\n    properties:\n      a:\n        type: string\n",
        ),
        10,
        5,
        "`properties` is ignored: output `n` is of type array, not object",
        Some("move `properties:` under `items:`"),
    );
    warn_one(
        &with(
            "outputs:\n  n:\n    type: number\n    description: d\n    items:\n      type: string\n",
        ),
        8,
        5,
        "`items` is ignored: output `n` is of type number, not array",
        Some("change `type` to `array`"),
    );
    warn_one(
        &with("outputs:\n  n:\n    type: number\n    description: d\n    default: 3\n"),
        8,
        5,
        "`default` is ignored in output `n`",
        Some("optional: true"),
    );
    warn_one(
        &with("outputs:\n  n:\n    type: number\n"),
        5,
        3,
        "output `n` has no `description`",
        Some("MCP hosts and the generated docs show it"),
    );
}

#[test]
fn output_required_false_says_optional() {
    one(
        &with("outputs:\n  n:\n    type: number\n    description: d\n    required: false\n"),
        8,
        5,
        "unknown key in output `n`: `required`",
        Some("write `optional: true`"),
    );
    one(
        &with("outputs:\n  n:\n    type: number\n    description: d\n    optinal: true\n"),
        8,
        5,
        "unknown key in output `n`: `optinal`",
        Some("did you mean `optional`?"),
    );
}

#[test]
fn a_bash_tool_cannot_declare_outputs() {
    one(
        &with("language: bash\noutputs:\n  n:\n    type: number\n    description: d\n"),
        5,
        1,
        "a bash tool cannot declare `outputs`",
        Some("python or typescript"),
    );
}

#[test]
fn output_type_names_are_unique_and_an_input_enum_yields_output() {
    use toolbind_codegen::OutputType;
    let t = parse(&with(
        "inputs:\n  output:\n    type: enum\n    values: a, b\n    description: d\n  mode:\n    type: enum\n    values: a, b\n    description: d\noutputs:\n  mode:\n    type: enum\n    values: x, y\n    description: d\n  a:\n    type: object\n    description: d\n    properties:\n      mode:\n        type: enum\n        values: z\n        description: d\n",
    ))
    .unwrap();
    let messages: Vec<&str> = t.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "outputs `mode` and `a.mode` both map to the Rust type `Mode`: `a.mode` gets `Mode2`",
            "enum input `output` would be the Rust type `Output`, which holds the tool's outputs: it gets `Output2`",
        ]
    );
    assert_eq!(t.inputs[0].rust_type, "Output2");
    // The input enum `Mode` and the output enum `output::Mode` live in different modules.
    assert_eq!(t.inputs[1].rust_type, "Mode");
    assert!(matches!(&t.outputs[0].ty, OutputType::Enum { rust_type, .. } if rust_type == "Mode"));
}

#[test]
fn bash_output_mode() {
    use toolbind_codegen::model::BashOutput;
    let t = parse(&with("language: bash\noutput: json\n")).unwrap();
    assert_eq!(t.bash_output, BashOutput::Json);
    assert!(t.warnings.is_empty(), "{:#?}", t.warnings);
    assert_eq!(
        parse(&with("language: bash\n")).unwrap().bash_output,
        BashOutput::Text
    );
    one(
        &with("language: bash\noutput: xml\n"),
        5,
        9,
        "unknown output mode `xml`",
        Some("`json`"),
    );
    let t = warn_one(
        &with("output: json\n"),
        4,
        9,
        "`output` is ignored: it says what a bash tool's stdout is, and this is a typescript tool",
        None,
    );
    assert_eq!(
        t.bash_output,
        BashOutput::Json,
        "kept, but only bash reads it"
    );
}
