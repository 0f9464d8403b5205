//! The invariants the fuzz targets (`fuzz/`), the property tests (`tests/properties.rs`)
//! and the corpus replay (`tests/fuzz_corpus.rs`) all check, written once.
//!
//! Each check panics, with the input in its message, when an invariant breaks; that is
//! what a fuzzer reports as a crash and a test as a failure.
//!
//! - [`front_end`]: any bytes as a TOOL.md. Parsing never panics; a rejected file gets
//!   diagnostics whose line and column are inside the file and which render in every
//!   format; an accepted file has the version sync's fast `read_version` reads, and
//!   emits Rust that parses and is the same on every run, schemas that are valid JSON
//!   Schema in every dialect, and prompt text.
//! - [`arguments`]: any bytes as a model's arguments, for every representative tool.
//!   [`check_args`] holds the runtime's verdict to the JSON Schema's; [`check_typed`]
//!   holds the generated typed path (`ToolCall::from_call`) to the runtime's.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{Map, Value};
use toolbind::ToolInfo;
use toolbind::args::{ArgProblem, validate as validate_args};
use toolbind_codegen::emit::{self, Generator};
use toolbind_codegen::model::{InputType, Pos};
use toolbind_codegen::schema::{self, Dialect};
use toolbind_codegen::{Diagnostic, Options, ToolSpec, parse_tool_md, prompt};

/// Where [`front_end`] pretends the TOOL.md lives.
pub const FUZZ_DIR: &str = "fuzz_tool";

/// Parses `bytes` as `fuzz_tool/TOOL.md` (no entry file needed), with strict names and
/// with `portable_names` relaxed, and checks every invariant of the front end. Returns
/// the strictly parsed spec, if the file was valid.
pub fn front_end(bytes: &[u8]) -> Option<ToolSpec> {
    let strict = front_end_with(bytes, true);
    front_end_with(bytes, false);
    strict
}

fn front_end_with(bytes: &[u8], portable_names: bool) -> Option<ToolSpec> {
    let dir = Path::new(FUZZ_DIR);
    let file = dir.join("TOOL.md");
    let opts = Options::default()
        .portable_names(portable_names)
        .require_entry(false);
    match parse_tool_md(&file, dir, bytes, &opts) {
        Ok(spec) => {
            accepted(&spec, bytes, &opts);
            Some(spec)
        }
        Err(diags) => {
            assert!(!diags.is_empty(), "rejected without a diagnostic");
            let text = normalized(bytes);
            for d in &diags {
                check_diagnostic(d, &file, &text);
            }
            None
        }
    }
}

/// The file's text as diagnostics count lines and columns in it: BOM dropped, CRLF and
/// bare CR as line ends (invalid UTF-8 replaced, for the decode error's position).
fn normalized(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    String::from_utf8_lossy(bytes)
        .replace("\r\n", "\n")
        .replace('\r', "\n")
}

/// A diagnostic names the file, points inside it, says something, and renders.
pub fn check_diagnostic(d: &Diagnostic, file: &Path, text: &str) {
    let shown = d.plain();
    assert_eq!(d.file, file, "diagnostic names another file: {shown}");
    assert!(!d.message.trim().is_empty(), "empty message: {d:?}");
    if let Some(h) = &d.hint {
        assert!(!h.trim().is_empty(), "empty hint: {shown}");
    }
    assert_ne!(d.pos, Pos::NONE, "no position: {shown}");
    let lines: Vec<&str> = text.split('\n').collect();
    let line = d.pos.line as usize;
    assert!(
        (1..=lines.len()).contains(&line),
        "line {line} outside the file's {} lines: {shown}",
        lines.len()
    );
    let width = lines[line - 1].chars().count();
    let col = d.pos.column as usize;
    assert!(
        (1..=width + 1).contains(&col),
        "column {col} outside line {line} ({width} characters): {shown}"
    );
    // Every way a diagnostic is shown: the macro's line, rustc-style snippets with and
    // without colour, and JSON for editors.
    let _ = d.render(false);
    let _ = d.render(true);
    let json = d.to_json();
    assert_eq!(json["line"], Value::from(d.pos.line), "{json}");
}

/// The invariants of a file the front end accepted.
fn accepted(spec: &ToolSpec, bytes: &[u8], opts: &Options) {
    // Deterministic: a second parse gives the same spec, the same fingerprint, the same code.
    let again = parse_tool_md(&spec.file, &spec.dir, bytes, opts).expect("second parse failed");
    assert_eq!(&again, spec, "two parses of one file differ");
    assert_eq!(again.fingerprint(), spec.fingerprint());
    // Sync's fast version read agrees with the parser (a disagreement can downgrade a tool).
    let text = std::str::from_utf8(bytes).expect("an accepted file is UTF-8");
    assert_eq!(
        toolbind_codegen::read_version(text),
        Some(spec.version),
        "read_version disagrees with the parser"
    );
    let mut one = vec![spec.clone()];
    assert!(
        toolbind_codegen::check_set(&mut one).is_empty(),
        "a single valid tool fails the set checks"
    );
    assert_eq!(&one[0], spec, "the set checks changed a single tool");
    // Warnings are warnings: each is well-formed like an error, and none is an error.
    for w in &spec.warnings {
        assert!(!w.is_error(), "an accepted file carries an error: {w}");
        check_diagnostic(w, &spec.file, &normalized(bytes));
    }

    let tools = std::slice::from_ref(spec);
    let rust = emit::rust(tools, Generator::Build);
    assert_eq!(
        rust,
        emit::rust(std::slice::from_ref(&again), Generator::Build),
        "emitted Rust differs between runs"
    );
    rust_parses(&rust);
    rust_parses(&emit::rust(tools, Generator::Macro));

    for d in Dialect::ALL {
        let text = schema::definitions_json(tools, d);
        let parsed: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{d} definitions are not JSON ({e}):\n{text}"));
        assert_eq!(
            parsed,
            schema::definitions(tools, d),
            "{d}: text and value differ"
        );
        for s in schema::embedded_schemas(&parsed, d) {
            if let Err(e) = jsonschema::draft202012::meta::validate(s) {
                panic!("{d} schema is not valid JSON Schema: {e}\n{s:#}");
            }
        }
    }
    let _ = prompt::system_prompt(tools);
    let _ = prompt::docs(tools);
    let _ = prompt::tool_docs(spec);

    // The smallest call a model could make: only the required inputs, each a plain value.
    // The schema and the runtime both accept it (defaults type-check against their input).
    let validator = portable_validator(spec);
    let mut minimal = Map::new();
    for input in spec.inputs.iter().filter(|i| i.required()) {
        minimal.insert(input.name.clone(), minimal_value(input));
    }
    let minimal = Value::Object(minimal);
    assert!(
        validator.is_valid(&minimal),
        "the schema rejects the minimal call {minimal}"
    );
    check_args(&ToolInfo::from(spec.clone()), &validator, &minimal);
}

/// The smallest plain value of `input`: its required fields only, the fewest elements
/// allowed, a number within its bounds.
pub fn minimal_value(input: &toolbind_codegen::model::Input) -> Value {
    match input.ty {
        InputType::String => Value::from("x"),
        InputType::Number | InputType::Integer => {
            let n = input.minimum.map_or(1.0, f64::ceil);
            let n = input.maximum.map_or(n, |m| n.min(m.floor()));
            Value::from(n as i64)
        }
        InputType::Boolean => Value::from(true),
        InputType::Enum => Value::from(input.values[0].wire.clone()),
        InputType::Object => Value::Object(
            input
                .properties
                .iter()
                .filter(|p| p.required())
                .map(|p| (p.name.clone(), minimal_value(p)))
                .collect(),
        ),
        InputType::Array => {
            let n = input.min_items.unwrap_or(0) as usize;
            let item = input.items.as_deref().map_or(Value::Null, minimal_value);
            Value::Array(vec![item; n])
        }
        InputType::Map => Value::Object(Map::new()),
        InputType::Const => input.constant.clone().unwrap_or_default(),
        InputType::Any => Value::Null,
    }
}

/// `map` with the defaults of absent fields filled in, at every depth: what the runtime
/// hands on for arguments in which it coerced nothing.
pub fn with_defaults(fields: &[toolbind_codegen::model::Input], map: &mut Map<String, Value>) {
    for input in fields {
        match map.get_mut(&input.name) {
            Some(v) => nested_defaults(input, v),
            None => {
                if let Some(d) = &input.default {
                    let mut d = d.clone();
                    nested_defaults(input, &mut d);
                    map.insert(input.name.clone(), d);
                }
            }
        }
    }
}

fn nested_defaults(input: &toolbind_codegen::model::Input, v: &mut Value) {
    match (input.ty, v, input.items.as_deref()) {
        (InputType::Object, Value::Object(m), _) => with_defaults(&input.properties, m),
        (InputType::Array, Value::Array(a), Some(items)) => {
            a.iter_mut().for_each(|e| nested_defaults(items, e));
        }
        (InputType::Map, Value::Object(m), Some(items)) => {
            m.values_mut().for_each(|e| nested_defaults(items, e));
        }
        _ => {}
    }
}

/// Generated code parses as Rust (syn, as rustc would tokenise and parse it).
///
/// Its layout is not checked here: the emitter writes prettyplease's layout for the shapes
/// `codegen/tests/format.rs` pins, but fuzzing showed prettyplease breaks some lines of
/// particular lengths in ways the emitter does not copy (cosmetic: the code is the same).
fn rust_parses(rust: &str) {
    if let Err(e) = syn::parse_file(rust) {
        panic!("emitted Rust does not parse: {e}\n{rust}");
    }
}

/// A compiled validator for the tool's portable params schema.
pub fn portable_validator(spec: &ToolSpec) -> jsonschema::Validator {
    jsonschema::draft202012::new(&schema::portable(spec))
        .unwrap_or_else(|e| panic!("portable schema does not compile: {e}"))
}

/// The runtime's verdict on `args` against the schema's, and what the runtime hands on.
///
/// The runtime accepts more than the schema — the quirks models are known for (`"5"` for
/// a number, `null` for an absent optional input, the object sent as a JSON string) — so
/// the contract is:
/// - whatever the schema accepts, the runtime accepts unchanged (only defaults are added):
///   a model that follows the schema is never refused or second-guessed;
/// - whatever the runtime accepts without coercing anything, the schema accepts: on
///   arguments with no quirk in them the two verdicts are the same;
/// - whatever the runtime accepts, it hands on as params the schema accepts: a tool never
///   receives what its schema rules out;
/// - a rejection lists problems, and never shows a sensitive input's value.
///
/// Returns whether the runtime accepted.
pub fn check_args(tool: &ToolInfo, validator: &jsonschema::Validator, args: &Value) -> bool {
    let spec = tool.spec();
    let schema_ok = validator.is_valid(args);
    match validate_args(tool, args.clone()) {
        Ok(valid) => {
            let params = Value::Object(valid.params().clone());
            // The arguments with only the defaults added: what the runtime hands on when
            // it coerced nothing.
            let unchanged = args.as_object().map(|a| {
                let mut m = a.clone();
                with_defaults(&spec.inputs, &mut m);
                Value::Object(m)
            });
            // Numbers compare by value: an integer input's `5.0` (an integer to JSON
            // Schema too) reaches the tool as `5`, which a Python `range(n)` needs.
            let same = unchanged.as_ref().is_some_and(|u| same_params(&params, u));
            if schema_ok {
                assert!(
                    same,
                    "the runtime changed arguments the schema accepts ({}): {params} for {unchanged:?}",
                    spec.name
                );
            } else {
                // No quirk was coerced, so the verdicts must be the same.
                assert!(
                    !same,
                    "the runtime accepts {args} as it is, the schema of `{}` rejects it",
                    spec.name
                );
            }
            assert!(
                validator.is_valid(&params),
                "the runtime accepted {args} as {params}, which the schema of `{}` rejects: {:?}",
                spec.name,
                validator
                    .iter_errors(&params)
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
            );
            true
        }
        Err(e) => {
            // The one documented difference: JSON Schema's `integer` has no size, toolbind's
            // is 64 bits (`toolbind::args::INTEGER_RANGE`), so `1e20` passes the schema and
            // is refused, as out of range, by the runtime.
            let only_too_big = e.problems.iter().all(|p| {
                matches!(p, ArgProblem::OutOfRange { expected, .. } if expected.contains("fits in 64 bits"))
            });
            assert!(
                !schema_ok || only_too_big,
                "the schema of `{}` accepts {args}, the runtime refuses it:\n{e}",
                spec.name
            );
            assert!(!e.problems.is_empty(), "a rejection without problems");
            let text = e.to_string();
            for p in &e.problems {
                let Some(input) = p.field().and_then(|f| spec.input(f)) else {
                    continue;
                };
                if !input.sensitive {
                    continue;
                }
                let hidden = match p {
                    ArgProblem::WrongType { received, .. } => {
                        received == "null" || received.ends_with("(value hidden: sensitive input)")
                    }
                    ArgProblem::NotInEnum {
                        received,
                        suggestion,
                        ..
                    } => {
                        suggestion.is_none()
                            && received.ends_with("(value hidden: sensitive input)")
                    }
                    _ => true,
                };
                assert!(hidden, "a sensitive value shown: {p}");
            }
            assert!(text.contains(&format!("`{}`", spec.name)), "{text}");
            false
        }
    }
}

/// One representative tool: the runtime's description of it, its schema and the
/// generated typed path.
pub struct Representative {
    pub tool: ToolInfo,
    pub validator: jsonschema::Validator,
    /// `ToolCall::from_call(name, args)` then `to_args()`, from the generated code.
    pub typed: fn(&str, Value) -> Result<Value, toolbind::__private::CallError>,
}

/// The tools [`arguments`] checks against: the codegen fixtures (every input type,
/// optional, default, sensitive, enum values that look like numbers, Unicode names) and
/// the shipped tools, each with its generated typed path.
pub fn representatives() -> &'static [Representative] {
    static ALL: OnceLock<Vec<Representative>> = OnceLock::new();
    ALL.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let fixtures = root.join("codegen/tests/fixtures/valid");
        let shipped = root.join("tools");
        let load = |dir: PathBuf| {
            toolbind_codegen::load_tools(&[dir], &Options::default())
                .unwrap_or_else(|d| panic!("{}", d.render(false)))
        };
        let golden = load(fixtures).into_iter().map(|spec| Representative {
            validator: portable_validator(&spec),
            tool: spec.into(),
            typed: |name, args| crate::golden::ToolCall::from_call(name, args).map(|c| c.to_args()),
        });
        let shipped = load(shipped).into_iter().map(|spec| Representative {
            validator: portable_validator(&spec),
            tool: spec.into(),
            typed: |name, args| {
                crate::shipped::ToolCall::from_call(name, args).map(|c| c.to_args())
            },
        });
        golden.chain(shipped).collect()
    })
}

/// Any bytes as a model's arguments (JSON; bytes that are not JSON arrive as a string, as
/// a model's unparsable arguments text would), checked against every representative tool.
pub fn arguments(bytes: &[u8]) {
    let args = serde_json::from_slice::<Value>(bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()));
    for r in representatives() {
        let runtime_ok = check_args(&r.tool, &r.validator, &args);
        check_typed(r, &args, runtime_ok);
    }
}

/// The typed path accepts exactly what the runtime accepts, and reads the same params.
pub fn check_typed(r: &Representative, args: &Value, runtime_ok: bool) {
    let name = r.tool.name();
    let typed = (r.typed)(name, args.clone());
    match (&typed, runtime_ok) {
        (Ok(_), true) | (Err(_), false) => {}
        (Ok(v), false) => panic!(
            "`{}`: the typed path accepts {args} (as {v}), the runtime refuses it",
            name
        ),
        (Err(e), true) => panic!(
            "`{}`: the runtime accepts {args}, the typed path refuses it: {e}",
            name
        ),
    }
    if let Ok(typed) = typed {
        let runtime = validate_args(&r.tool, args.clone()).expect("accepted above");
        let runtime = Value::Object(runtime.into_params());
        assert!(
            same_params(&typed, &runtime),
            "`{}`: for {args} the typed path reads {typed}, the runtime {runtime}",
            name
        );
    }
}

/// Equal params, numbers compared as the `f64` the typed path holds them in.
fn same_params(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_params(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_params(v, w))
        }
        _ => a == b,
    }
}
