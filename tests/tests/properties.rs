//! Property tests over generated TOOL.md files and model arguments (proptest).
//!
//! The invariants are `toolbind_tests::fuzzing`'s, shared with the fuzz targets; here they
//! run on structured inputs a byte fuzzer rarely builds: valid files with every input type,
//! optional and default combination, Unicode text and keyword names, then random edits of
//! them, and argument objects both valid and invalid for the generated tool.
//!
//! Kept to a few seconds: each property runs a fixed number of cases (override with
//! `PROPTEST_CASES`). A failure prints the minimal case; proptest stores its seed in
//! `properties.proptest-regressions` beside this file, which replays it first on every
//! run — commit that file with the fix.

use std::fmt::Write as _;

use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{Map, Value, json};
use toolbind_codegen::ident;
use toolbind_codegen::model::InputType;
use toolbind_tests::fuzzing;

// ---- the generated TOOL.md ----------------------------------------------------------------

#[derive(Debug, Clone)]
struct GenInput {
    name: String,
    ty: InputType,
    description: String,
    optional: bool,
    sensitive: bool,
    /// Enum values, unique as wire strings and as Rust variants.
    values: Vec<String>,
    default: Option<Value>,
    /// Write `values` as a YAML list rather than a comma-separated string.
    values_as_list: bool,
}

#[derive(Debug, Clone)]
struct GenTool {
    name: String,
    label: Option<String>,
    description: String,
    /// Write the description as a `|` block (multi-line, quotes, brackets and `#` inside).
    description_block: bool,
    /// `prompt_guidelines` as a flow list: (style: plain / single / double quoted, text).
    guidelines: Vec<(u8, String)>,
    /// `env` as a flow list.
    env: Vec<String>,
    version: Option<u64>,
    /// How the version is spelled (`3`, `0x3`, `3 # note`, `"version": 3`) and whether it
    /// comes last, after the inputs: what sync's fast `read_version` must read right.
    version_style: (u8, bool),
    language: &'static str,
    inputs: Vec<GenInput>,
    body: String,
}

/// A YAML double-quoted scalar holding exactly `s`: escapes what YAML does not allow raw
/// (C0 and C1 controls, DEL, the BOM, U+FFFE/U+FFFF) as well as `"` and `\`.
fn yaml_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20
                || (0x7f..=0x9f).contains(&(c as u32))
                || matches!(c, '\u{feff}' | '\u{fffe}' | '\u{ffff}') =>
            {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn yaml_value(v: &Value) -> String {
    match v {
        Value::String(s) => yaml_quoted(s),
        other => other.to_string(),
    }
}

impl GenTool {
    fn render(&self) -> String {
        let mut s = String::from("---\n");
        let _ = writeln!(s, "name: {}", self.name);
        if let Some(l) = &self.label {
            let _ = writeln!(s, "label: {}", yaml_quoted(l));
        }
        if self.description_block {
            s.push_str("description: |\n");
            for line in self.description.lines() {
                let _ = writeln!(s, "  {line}");
            }
        } else {
            let _ = writeln!(s, "description: {}", yaml_quoted(&self.description));
        }
        if !self.guidelines.is_empty() {
            let items: Vec<String> = self
                .guidelines
                .iter()
                .map(|(style, g)| match style % 3 {
                    0 => g.clone(),
                    1 => format!("'{}'", g.replace('\'', "''")),
                    _ => yaml_quoted(g),
                })
                .collect();
            let _ = writeln!(s, "prompt_guidelines: [{}]", items.join(", "));
        }
        if !self.env.is_empty() {
            let _ = writeln!(s, "env: [{}]", self.env.join(", "));
        }
        let version = self.version.map(|v| match self.version_style.0 % 4 {
            0 => format!("version: {v}\n"),
            1 => format!("version: {v:#x}\n"),
            2 => format!("version: {v} # bump on every change\n"),
            _ => format!("\"version\": {v}\n"),
        });
        let last = self.version_style.1;
        if !last {
            s.push_str(version.as_deref().unwrap_or_default());
        }
        let _ = writeln!(s, "language: {}", self.language);
        if !self.inputs.is_empty() {
            s.push_str("inputs:\n");
        }
        for i in &self.inputs {
            let _ = writeln!(s, "  {}:", i.name);
            let _ = writeln!(s, "    type: {}", i.ty.as_str());
            let _ = writeln!(s, "    description: {}", yaml_quoted(&i.description));
            if i.optional {
                s.push_str("    optional: true\n");
            }
            if i.sensitive {
                s.push_str("    sensitive: true\n");
            }
            if i.ty == InputType::Enum {
                if i.values_as_list {
                    let list: Vec<String> = i.values.iter().map(|v| yaml_quoted(v)).collect();
                    let _ = writeln!(s, "    values: [{}]", list.join(", "));
                } else {
                    let _ = writeln!(s, "    values: {}", yaml_quoted(&i.values.join(", ")));
                }
            }
            if let Some(d) = &i.default {
                let _ = writeln!(s, "    default: {}", yaml_value(d));
            }
        }
        if last {
            s.push_str(version.as_deref().unwrap_or_default());
        }
        s.push_str("---\n");
        s.push_str(&self.body);
        s
    }
}

/// Free text: any printable characters, with the ones that break naive escaping (quotes,
/// backslashes, comment and doc-comment markers, CR, NUL, bidi and line separators) mixed in.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => "\\PC{1,12}",
        1 => Just("\"".to_owned()),
        1 => Just("\\".to_owned()),
        1 => Just("*/".to_owned()),
        1 => Just("/*".to_owned()),
        1 => Just("\r".to_owned()),
        1 => Just("\u{0}".to_owned()),
        1 => Just("\u{2028}".to_owned()),
        1 => Just("\u{202e}".to_owned()),
        1 => Just("\u{85}".to_owned()),
        1 => Just("`".to_owned()),
        1 => Just("#".to_owned()),
        1 => Just("\n".to_owned()),
        1 => Just("{}".to_owned()),
        1 => Just("<b>".to_owned()),
    ];
    prop::collection::vec(piece, 1..6)
        .prop_map(|p| p.concat())
        .prop_filter("must not be blank", |s| !s.trim().is_empty())
}

/// Text for a `|` block: several lines holding quotes, brackets, `:` and `#` — what a
/// line-based reader could mistake for structure.
fn block_text() -> impl Strategy<Value = String> {
    prop::collection::vec("[a-zA-Z0-9][a-zA-Z0-9 .,:#'\"\\[\\]{}-]{0,20}", 1..4)
        .prop_map(|lines| lines.join("\n"))
}

/// A guideline's text after "Use <tool> ", for its style: plain flow text (quotes only
/// inside a word), or quoted text holding commas, brackets, quotes and `#`.
fn guideline() -> impl Strategy<Value = (u8, String)> {
    prop_oneof![
        "[a-z]{1,5}['\"][a-z]{1,5}".prop_map(|t| (0u8, t)),
        "[a-z ,#'\"\\[\\]]{0,12}".prop_map(|t| (1u8, t)),
        "[a-z ,#'\"\\[\\]]{0,12}".prop_map(|t| (2u8, t)),
    ]
}

/// Parameter names: snake_case, camelCase and Rust keywords (`type`, `self`, `async`).
fn param_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z][a-z0-9]{0,8}(_[a-z0-9]{1,4}){0,2}",
        1 => "[a-z]{1,6}[A-Z][a-z]{0,6}",
        1 => "_[a-z0-9]{1,5}",
        1 => prop::sample::select(vec!["type", "self", "Self", "async", "match", "crate", "params", "tool", "r"])
            .prop_map(str::to_owned),
    ]
}

/// Enum values as models see them: words, versions, sizes, numbers, Unicode units.
fn enum_value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z][a-z0-9]{0,7}",
        1 => "[0-9]{1,4}[a-z]{0,2}",
        1 => "[0-9]{1,3}",
        1 => "v[0-9]\\.[0-9]",
        1 => "[a-z]{1,4}-[0-9]{1,2}",
        1 => prop::sample::select(vec!["Self", "m²", "°C", "km/h", "true", "null", "1.5", "x y"])
            .prop_map(str::to_owned),
    ]
}

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-1_000_000i64..1_000_000).prop_map(Value::from),
        (-10_000i64..10_000).prop_map(|c| json!(c as f64 / 100.0)),
    ]
}

fn input() -> impl Strategy<Value = GenInput> {
    // The flat types; nested inputs get their own property (`nested_arguments`).
    let ty = prop::sample::select(vec![
        InputType::String,
        InputType::Number,
        InputType::Integer,
        InputType::Boolean,
        InputType::Enum,
    ]);
    (
        param_name(),
        ty,
        text(),
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(enum_value(), 1..5),
        any::<bool>(),
        text(),
        number(),
        any::<(bool, bool, usize)>(),
    )
        .prop_map(
            |(
                name,
                ty,
                description,
                optional,
                sensitive,
                raw_values,
                list,
                s,
                n,
                (b, with_default, pick),
            )| {
                // Values must be unique as wire strings and as Rust variants.
                let mut values: Vec<String> = Vec::new();
                for v in raw_values {
                    let rust = ident::variant_name(&v);
                    if !values
                        .iter()
                        .any(|w| *w == v || ident::variant_name(w) == rust)
                    {
                        values.push(v);
                    }
                }
                // A comma-separated string cannot carry a comma or an edge space.
                let values_as_list =
                    list || values.iter().any(|v| v.contains(',') || v.trim() != v);
                let default = (with_default && !sensitive).then(|| match ty {
                    InputType::String => Value::String(s),
                    InputType::Number => n,
                    InputType::Integer => Value::from(n.as_f64().unwrap_or_default() as i64),
                    InputType::Boolean => Value::Bool(b),
                    InputType::Enum => Value::String(values[pick % values.len()].clone()),
                    other => panic!("not generated: {other}"),
                });
                GenInput {
                    name,
                    ty,
                    description,
                    optional,
                    sensitive,
                    values: if ty == InputType::Enum {
                        values
                    } else {
                        Vec::new()
                    },
                    default,
                    values_as_list,
                }
            },
        )
}

fn tool() -> impl Strategy<Value = GenTool> {
    (
        "[a-z][a-z0-9]{0,10}(_[a-z0-9]{1,6}){0,2}",
        prop::option::of(text()),
        (text(), block_text(), any::<bool>()),
        (
            prop::collection::vec(guideline(), 0..3),
            prop::collection::btree_set("[A-Z][A-Z0-9_]{0,8}", 0..3),
        ),
        prop::option::of(0u64..10_000),
        any::<(u8, bool)>(),
        prop::sample::select(vec!["typescript", "python", "bash"]),
        prop::collection::vec(input(), 0..7),
        prop::sample::select(vec![
            "",
            "# Title\n\nUsage text.\n",
            "# T\n\n## Usage\n\n```ts\nlet x = 1;\n```\n\n- a\n- b\n",
            "Body with `code`, *emphasis* and a [link](https://example.com).\n",
        ]),
    )
        .prop_map(
            |(
                name,
                label,
                (text, block, description_block),
                (guidelines, env),
                version,
                version_style,
                language,
                raw_inputs,
                body,
            )| {
                // Parameter names must be unique, and so must their Rust fields and enum types.
                let mut inputs: Vec<GenInput> = Vec::new();
                for i in raw_inputs {
                    let clash = inputs.iter().any(|o| {
                        o.name == i.name
                            || ident::field_name(&o.name) == ident::field_name(&i.name)
                            || (o.ty == InputType::Enum
                                && i.ty == InputType::Enum
                                && ident::type_name(&o.name) == ident::type_name(&i.name))
                    });
                    if !clash {
                        inputs.push(i);
                    }
                }
                let guidelines = guidelines
                    .into_iter()
                    .map(|(style, t)| (style, format!("Use {name} {t}").trim_end().to_owned()))
                    .collect();
                GenTool {
                    description: if description_block { block } else { text },
                    description_block,
                    guidelines,
                    env: env.into_iter().collect(),
                    name,
                    label,
                    version,
                    version_style,
                    language,
                    inputs,
                    body: body.to_owned(),
                }
            },
        )
}

// ---- model arguments ----------------------------------------------------------------------

/// Any JSON value, small.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        "\\PC{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,3}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A value for one input: right for its type, a quirk the runtime coerces, or anything.
fn arg_for(input: &GenInput) -> BoxedStrategy<Value> {
    let valid: BoxedStrategy<Value> = match input.ty {
        InputType::String => "\\PC{0,10}".prop_map(Value::String).boxed(),
        InputType::Number => number().boxed(),
        InputType::Integer => (-1_000_000i64..1_000_000).prop_map(Value::from).boxed(),
        InputType::Boolean => any::<bool>().prop_map(Value::Bool).boxed(),
        InputType::Enum => prop::sample::select(input.values.clone())
            .prop_map(Value::String)
            .boxed(),
        other => panic!("not generated: {other}"),
    };
    let quirk: BoxedStrategy<Value> = match input.ty {
        InputType::Number | InputType::Integer => prop_oneof![
            number().prop_map(|n| Value::String(format!(" {n} "))),
            Just(json!("1e3")),
            Just(json!("ten")),
            Just(json!("")),
        ]
        .boxed(),
        InputType::Boolean => prop::sample::select(vec!["true", "False", " TRUE ", "yes", "0", ""])
            .prop_map(|s| Value::String(s.to_owned()))
            .boxed(),
        // What a model sends for a value that looks like a number or a boolean: the JSON
        // number or boolean (accepted when its JSON text is the value), `2.0` for "2",
        // padding, other case, a near miss.
        InputType::Enum => (prop::sample::select(input.values.clone()), 0..5u8)
            .prop_map(|(v, how)| match how {
                0 => serde_json::from_str::<Value>(&v)
                    .ok()
                    .filter(|j| j.is_number() || j.is_boolean())
                    .unwrap_or_else(|| Value::String(format!("{v}x"))),
                1 => v
                    .parse::<i64>()
                    .map(|n| json!(n as f64))
                    .unwrap_or_else(|_| Value::String(v.to_uppercase())),
                2 => Value::String(format!(" {v}")),
                3 => Value::String(v.to_uppercase()),
                _ => Value::String(format!("{v}x")),
            })
            .boxed(),
        InputType::String => prop_oneof![Just(json!("")), Just(json!(5))].boxed(),
        other => panic!("not generated: {other}"),
    };
    prop_oneof![4 => valid, 2 => quirk, 1 => json_value()].boxed()
}

/// Arguments for a tool: each input omitted, null or given, sometimes an unknown field,
/// sometimes the whole object sent as a JSON string or not an object at all.
fn args_for(tool: &GenTool) -> BoxedStrategy<Value> {
    let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = tool
        .inputs
        .iter()
        .map(|i| {
            let name = i.name.clone();
            let name2 = name.clone();
            prop_oneof![
                5 => arg_for(i).prop_map(move |v| Some((name.clone(), v))),
                1 => Just(Some((name2, Value::Null))),
                2 => Just(None),
            ]
            .boxed()
        })
        .collect();
    let extra = prop::option::weighted(0.15, ("[a-z_]{1,8}", json_value()));
    (fields, extra, 0..20u8)
        .prop_map(|(fields, extra, shape)| {
            let mut m = Map::new();
            for (k, v) in fields.into_iter().flatten() {
                m.insert(k, v);
            }
            if let Some((k, v)) = extra {
                m.insert(k, v);
            }
            let obj = Value::Object(m);
            match shape {
                0 => Value::String(obj.to_string()),
                1 => Value::Array(vec![obj]),
                2 if obj.as_object().is_some_and(Map::is_empty) => Value::Null,
                _ => obj,
            }
        })
        .boxed()
}

// ---- random edits ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Edit {
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Replace(usize, u8),
    DuplicateLine(usize),
    DeleteLine(usize),
    SwapLines(usize, usize),
}

/// Bytes worth inserting into YAML: structure, quoting, anchors, tags, line ends, BOM.
const TOKENS: &[&str] = &[
    ":",
    " ",
    "  ",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "-",
    "- ",
    "---",
    "\"",
    "'",
    "|",
    ">",
    "[",
    "]",
    "{",
    "}",
    ",",
    "#",
    "&a ",
    "*a",
    "!!str ",
    "!!int ",
    "~",
    "null",
    "true",
    "yes",
    "0x10",
    "1e999",
    "-1",
    ".inf",
    "type: enum",
    "values: ",
    "default: ",
    "optional: true",
    "sensitive: true",
    "inputs:",
    "\u{feff}",
    "\u{0}",
    "é",
    "\u{2028}",
    "\u{ffff}",
];

fn edit() -> impl Strategy<Value = Edit> {
    let bytes = prop_oneof![
        prop::sample::select(TOKENS).prop_map(|t| t.as_bytes().to_vec()),
        prop::collection::vec(any::<u8>(), 1..4),
    ];
    prop_oneof![
        (any::<usize>(), bytes).prop_map(|(at, b)| Edit::Insert(at, b)),
        (any::<usize>(), 1usize..8).prop_map(|(at, n)| Edit::Delete(at, n)),
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Edit::Replace(at, b)),
        any::<usize>().prop_map(Edit::DuplicateLine),
        any::<usize>().prop_map(Edit::DeleteLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::SwapLines(a, b)),
    ]
}

fn apply(mut bytes: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let len = bytes.len().max(1);
        match e {
            Edit::Insert(at, b) => {
                let at = at % (bytes.len() + 1);
                bytes.splice(at..at, b.iter().copied());
            }
            Edit::Delete(at, n) => {
                let at = at % len;
                let end = (at + n).min(bytes.len());
                bytes.drain(at.min(end)..end);
            }
            Edit::Replace(at, b) => {
                if !bytes.is_empty() {
                    bytes[at % len] = *b;
                }
            }
            Edit::DuplicateLine(i) | Edit::DeleteLine(i) | Edit::SwapLines(i, _) => {
                let mut lines: Vec<Vec<u8>> =
                    bytes.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
                let n = lines.len();
                let i = i % n;
                match e {
                    Edit::DuplicateLine(_) => {
                        let l = lines[i].clone();
                        lines.insert(i, l);
                    }
                    Edit::DeleteLine(_) => {
                        lines.remove(i);
                    }
                    Edit::SwapLines(_, j) => lines.swap(i, j % n),
                    _ => unreachable!(),
                }
                bytes = lines.join(&b'\n');
            }
        }
    }
    bytes
}

// ---- the properties -------------------------------------------------------------------------

/// The front end's checks on a generated valid file, which it must accept.
fn accepted(text: &str) -> toolbind_codegen::ToolSpec {
    fuzzing::front_end(text.as_bytes()).unwrap_or_else(|| {
        let dir = std::path::Path::new(fuzzing::FUZZ_DIR);
        let opts = toolbind_codegen::Options::default().require_entry(false);
        let errors = match toolbind_codegen::parse_tool_md(
            &dir.join("TOOL.md"),
            dir,
            text.as_bytes(),
            &opts,
        ) {
            Err(d) => d.iter().map(|d| d.plain()).collect::<Vec<_>>().join("\n"),
            Ok(_) => "accepted on a second try".to_owned(),
        };
        panic!("a valid TOOL.md was rejected:\n{errors}\n{text}")
    })
}

/// A value for a nested input: right for its spec at this level (and recursively below),
/// a quirk the runtime tolerates (a JSON string for an object or array, a whole float or a
/// numeric string for an integer), or any JSON.
fn nested_value(input: &toolbind_codegen::model::Input) -> BoxedStrategy<Value> {
    use toolbind_codegen::model::Input;
    let valid: BoxedStrategy<Value> = match input.ty {
        InputType::String => "\\PC{0,6}".prop_map(Value::String).boxed(),
        InputType::Boolean => any::<bool>().prop_map(Value::Bool).boxed(),
        InputType::Number => number().boxed(),
        InputType::Integer => {
            let lo = input.minimum.map_or(-50, |m| m as i64);
            let hi = input.maximum.map_or(1_200, |m| m as i64);
            prop_oneof![
                (lo - 2..hi + 3).prop_map(Value::from),
                (lo..hi + 1).prop_map(|n| json!(n as f64)),
                (lo..hi + 1).prop_map(|n| Value::String(n.to_string())),
                Just(json!(2.5)),
            ]
            .boxed()
        }
        InputType::Enum => prop::sample::select(
            input
                .values
                .iter()
                .map(|v| v.wire.clone())
                .collect::<Vec<_>>(),
        )
        .prop_map(Value::String)
        .boxed(),
        InputType::Object => {
            let fields: Vec<(String, bool, BoxedStrategy<Value>)> = input
                .properties
                .iter()
                .map(|p: &Input| (p.name.clone(), p.required(), nested_value(p)))
                .collect();
            let strategies: Vec<BoxedStrategy<Option<(String, Value)>>> = fields
                .into_iter()
                .map(|(name, required, st)| {
                    let n = name.clone();
                    let absent = if required { 1 } else { 3 };
                    prop_oneof![
                        6 => st.prop_map(move |v| Some((n.clone(), v))),
                        absent => Just(None),
                        1 => Just(Some((name, Value::Null))),
                    ]
                    .boxed()
                })
                .collect();
            let extra = prop::option::weighted(0.1, ("[a-z_]{1,8}", Just(json!(1))));
            (strategies, extra)
                .prop_map(|(fields, extra)| {
                    let mut m: Map<String, Value> = fields.into_iter().flatten().collect();
                    if let Some((k, v)) = extra {
                        m.insert(k, v);
                    }
                    Value::Object(m)
                })
                .boxed()
        }
        InputType::Array => {
            let items = input.items.as_deref().expect("an array has items");
            let max = input.max_items.map_or(4, |m| m as usize + 2).min(6);
            prop::collection::vec(nested_value(items), 0..max)
                .prop_map(Value::Array)
                .boxed()
        }
        _ => json_value().boxed(),
    };
    let stringly = if matches!(input.ty, InputType::Object | InputType::Array) {
        valid
            .clone()
            .prop_map(|v| Value::String(v.to_string()))
            .boxed()
    } else {
        json_value().boxed()
    };
    prop_oneof![8 => valid, 1 => stringly, 1 => json_value()].boxed()
}

/// Arguments for the nested fixture (`codegen/tests/fixtures/valid/nested_inputs`).
fn nested_args() -> BoxedStrategy<Value> {
    let r = fuzzing::representatives()
        .iter()
        .find(|r| r.tool.name() == "nested_inputs")
        .expect("the nested fixture");
    let mut root = toolbind_codegen::model::Input::new("", InputType::Object);
    root.properties = r.tool.spec().inputs.clone();
    nested_value(&root)
}

fn config(cases: u32) -> Config {
    Config {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(cases),
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config(96))]

    /// A generated valid TOOL.md always parses, into the tool that was written, and every
    /// emitter's output holds its invariants (Rust that parses and is the same on every run;
    /// valid schemas; prompt text; the version sync's fast reader reads).
    #[test]
    fn a_valid_tool_md_always_parses(tool in tool()) {
        let text = tool.render();
        let spec = accepted(&text);
        prop_assert_eq!(&spec.name, &tool.name);
        prop_assert_eq!(spec.version, tool.version.unwrap_or(0));
        let guidelines: Vec<&str> = tool.guidelines.iter().map(|(_, g)| g.as_str()).collect();
        prop_assert_eq!(&spec.prompt_guidelines, &guidelines);
        prop_assert_eq!(&spec.env, &tool.env);
        // Trailing whitespace is dropped (a block scalar's last newline is not text).
        prop_assert_eq!(spec.description.as_str(), tool.description.trim_end());
        prop_assert_eq!(spec.inputs.len(), tool.inputs.len());
        for (got, want) in spec.inputs.iter().zip(&tool.inputs) {
            prop_assert_eq!(&got.name, &want.name);
            prop_assert_eq!(got.ty, want.ty);
            prop_assert_eq!(got.description.as_str(), want.description.trim_end());
            prop_assert_eq!(got.optional, want.optional);
            prop_assert_eq!(got.sensitive, want.sensitive);
            prop_assert_eq!(&got.default, &want.default);
            let wires: Vec<&str> = got.values.iter().map(|v| v.wire.as_str()).collect();
            prop_assert_eq!(wires, want.values.iter().map(String::as_str).collect::<Vec<_>>());
        }
    }

    /// The schema and the runtime agree on a model's arguments (see `fuzzing::check_args`
    /// for the exact contract), for valid and invalid arguments alike.
    #[test]
    fn schema_and_runtime_agree_on_arguments(
        (tool, calls) in tool().prop_flat_map(|t| {
            let calls = prop::collection::vec(args_for(&t), 8);
            (Just(t), calls)
        })
    ) {
        let text = tool.render();
        let spec = accepted(&text);
        let validator = fuzzing::portable_validator(&spec);
        let tool = toolbind::ToolInfo::from(spec);
        for args in &calls {
            fuzzing::check_args(&tool, &validator, args);
        }
    }

    /// Nested arguments (right at every level, with quirks, or anything) for the nested
    /// fixture: the schema, the runtime and the generated typed path agree at every depth.
    #[test]
    fn schema_runtime_and_typed_path_agree_on_nested_arguments(
        args in prop::collection::vec(nested_args(), 8)
    ) {
        let r = fuzzing::representatives()
            .iter()
            .find(|r| r.tool.name() == "nested_inputs")
            .expect("the nested fixture");
        for a in &args {
            let ok = fuzzing::check_args(&r.tool, &r.validator, a);
            fuzzing::check_typed(r, a, ok);
        }
    }

    /// Random edits of a valid file never panic the front end, and every error it reports
    /// has a line and column inside the file.
    #[test]
    fn an_edited_tool_md_never_panics(
        tool in tool(),
        edits in prop::collection::vec(edit(), 1..5),
    ) {
        let bytes = apply(tool.render().into_bytes(), &edits);
        fuzzing::front_end(&bytes);
    }
}
