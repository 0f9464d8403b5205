//! Checking a model's arguments against a tool's inputs: [`validate`] and what it returns.

use std::fmt;

use serde_json::{Map, Value};
use toolbind_codegen::model::{Input, InputType, ToolSpec};
use toolbind_codegen::suggest;

use crate::ToolInfo;

mod unions;
use crate::sensitive::redact;

/// Arguments that passed [`validate`]: coerced, defaulted, ready for an executor.
///
/// Its `Debug` output redacts the values of sensitive inputs, so it is safe to log.
#[derive(Clone)]
#[non_exhaustive]
pub struct ValidArgs<'a> {
    tool: &'a ToolInfo,
    params: Map<String, Value>,
}

impl<'a> ValidArgs<'a> {
    /// The tool the arguments were validated against.
    pub fn tool(&self) -> &'a ToolInfo {
        self.tool
    }

    /// The validated params (sensitive values included: the tool needs them).
    pub fn params(&self) -> &Map<String, Value> {
        &self.params
    }

    /// The validated params, for an [`ExecCall`](crate::executor::ExecCall).
    pub fn into_params(self) -> Map<String, Value> {
        self.params
    }

    /// The params with every sensitive input's value replaced by `"[REDACTED]"`: what to
    /// log or display.
    pub fn redacted(&self) -> Map<String, Value> {
        redact(self.tool.spec(), &self.params)
    }
}

impl fmt::Debug for ValidArgs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValidArgs")
            .field("tool", &self.tool.name())
            .field("params", &self.redacted())
            .finish()
    }
}

/// Why a model's arguments were rejected: every problem found, in input order.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArgsError {
    /// The tool's name.
    pub tool: String,
    /// The problems found, in input order (a nested object's unknown fields after its
    /// known ones), at most [`MAX_PROBLEMS`].
    pub problems: Vec<ArgProblem>,
    /// How many more problems were found beyond [`MAX_PROBLEMS`] (a list of 10,000 wrong
    /// elements must not become a 10,000-line answer).
    pub omitted: usize,
}

/// The most problems an [`ArgsError`] lists.
pub const MAX_PROBLEMS: usize = 20;

/// One thing wrong with a model's arguments. Texts (`expected`, `received`) are ready for
/// the model and never contain a sensitive value.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgProblem {
    /// The arguments were not a JSON object.
    NotAnObject {
        /// What was sent instead, in words (`an array of 2 items`).
        received: String,
    },
    /// A required input was not given.
    Missing {
        /// The input's name.
        field: String,
        /// What it wants, in words (`a string`).
        expected: String,
        /// The input's description from TOOL.md.
        description: String,
    },
    /// An input of the wrong JSON type (or a string that is not a number/boolean).
    WrongType {
        /// The input's name.
        field: String,
        /// What it wants, in words (`a number`).
        expected: String,
        /// What was sent, in words (`the string "ten"`); only the type of a sensitive value.
        received: String,
    },
    /// A number outside its `minimum`/`maximum`, or an array with too few or too many
    /// elements.
    OutOfRange {
        /// The input's path.
        field: String,
        /// What it allows, in words (`an integer from 1 to 10`, `an array of 1\u{2013}5
        /// items`).
        expected: String,
        /// What was sent, in words; only the type of a sensitive value.
        received: String,
    },
    /// An enum input outside its values.
    NotInEnum {
        /// The input's name.
        field: String,
        /// The allowed values.
        values: Vec<String>,
        /// What was sent, in words; only the type of a sensitive value.
        received: String,
        /// The closest allowed value, when one is close (never for a sensitive input).
        suggestion: Option<String>,
    },
    /// A field the tool has no input for.
    Unknown {
        /// The name the model sent.
        field: String,
        /// The tool's input names, in TOOL.md order.
        valid: Vec<String>,
        /// The closest input name, when one is close.
        suggestion: Option<String>,
    },
}

impl ArgProblem {
    /// The field the problem is about (`None` for the arguments as a whole).
    pub fn field(&self) -> Option<&str> {
        match self {
            ArgProblem::NotAnObject { .. } => None,
            ArgProblem::Missing { field, .. }
            | ArgProblem::WrongType { field, .. }
            | ArgProblem::OutOfRange { field, .. }
            | ArgProblem::NotInEnum { field, .. }
            | ArgProblem::Unknown { field, .. } => Some(field),
        }
    }
}

impl fmt::Display for ArgProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgProblem::NotAnObject { received } => write!(
                f,
                "arguments: expected a JSON object of named fields, received {received}"
            ),
            ArgProblem::Missing {
                field,
                expected,
                description,
            } => write!(
                f,
                "`{field}`: missing required field, expected {expected} ({description})"
            ),
            ArgProblem::WrongType {
                field,
                expected,
                received,
            }
            | ArgProblem::OutOfRange {
                field,
                expected,
                received,
            } => write!(f, "`{field}`: expected {expected}, received {received}"),
            ArgProblem::NotInEnum {
                field,
                values,
                received,
                suggestion,
            } => {
                write!(
                    f,
                    "`{field}`: expected one of {}, received {received}",
                    quoted_list(values)
                )?;
                if let Some(s) = suggestion {
                    write!(f, " (did you mean \"{s}\"?)")?;
                }
                Ok(())
            }
            ArgProblem::Unknown {
                field,
                valid,
                suggestion,
            } => {
                write!(f, "`{field}`: unknown field")?;
                if let Some(s) = suggestion {
                    write!(f, " (did you mean `{s}`?)")?;
                }
                if valid.is_empty() {
                    write!(f, "; this tool takes no arguments")
                } else {
                    write!(f, "; valid fields: {}", valid.join(", "))
                }
            }
        }
    }
}

impl fmt::Display for ArgsError {
    /// The text of the error result sent back to the model.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "invalid arguments for tool `{}`:", self.tool)?;
        for p in &self.problems {
            writeln!(f, "- {p}")?;
        }
        if self.omitted > 0 {
            writeln!(f, "- and {} more problems", self.omitted)?;
        }
        write!(f, "Fix the arguments and call `{}` again.", self.tool)
    }
}

impl std::error::Error for ArgsError {}

/// Checks a model's arguments for `spec`, coercing the known quirks and filling defaults.
///
///
/// Validation of a model's arguments against a tool's inputs, before anything runs.
///
/// [`validate`] checks the arguments directly against the tool's inputs (no schema is built
/// per call), tolerates the argument quirks models are known for, fills in defaults and
/// reports **every** problem at once in a text a model can act on: the field, what was
/// expected, what was received, and the valid fields or values.
///
/// Quirks tolerated:
/// - `null`, `""` (or only whitespace) as the whole arguments mean "no arguments", `{}`;
/// - the whole arguments sent as a JSON string holding an object are parsed;
/// - a number or boolean sent as a string (`"5"`, `"2.5"`, `"true"`, `"False"`) is
///   converted when the input wants a number or boolean;
/// - a number or boolean sent for an enum is accepted when its JSON text is one of the
///   values (`2` for `values: 1,2,3`);
/// - `null` for an optional input means "not given" (OpenAI's strict mode sends optional
///   fields as `null`); for an input with a default, the default is used.
///
/// Numbers reach the tool exactly as JSON has them: `10` stays the integer `10`.
///
/// A sensitive input's value never appears in an error: its type is named, not its value.
///
/// ```
/// use serde_json::json;
/// use toolbind::ToolInfo;
/// use toolbind::args::validate;
/// # let dir = std::env::temp_dir();
/// let spec = toolbind_codegen::parse_tool_md(
///     &dir.join("TOOL.md"),
///     &dir,
///     b"---\nname: search\ndescription: Search.\ninputs:\n  query:\n    type: string\n    description: Terms.\n  limit:\n    type: number\n    description: Max hits.\n    default: 10\n---\n",
///     &toolbind_codegen::Options::default().require_entry(false),
/// )
/// .unwrap();
/// let tool = ToolInfo::from(spec);
///
/// let ok = validate(&tool, json!({"query": "rust"})).unwrap();
/// assert_eq!(ok.params()["limit"], json!(10));
///
/// let err = validate(&tool, json!({"query": "rust", "limit": "ten"})).unwrap_err();
/// assert!(err.to_string().contains("`limit`: expected a number, received the string \"ten\""));
/// ```
pub fn validate(tool: &ToolInfo, args: Value) -> Result<ValidArgs<'_>, ArgsError> {
    let spec = tool.spec();
    let mut params = match root_object(args) {
        Ok(map) => map,
        Err(received) => {
            return Err(ArgsError {
                tool: spec.name.clone(),
                problems: vec![ArgProblem::NotAnObject { received }],
                omitted: 0,
            });
        }
    };
    let mut out = Problems::default();
    check_object(&spec.inputs, &mut params, &Path::Root, false, &mut out);
    if let Some(mcp) = &spec.mcp {
        let sensitive = |n: &str| spec.inputs.iter().any(|i| i.name == n && i.sensitive);
        unions::name_unions(&mcp.input_schema, &params, &sensitive, &mut out);
    }
    if out.list.is_empty() {
        Ok(ValidArgs { tool, params })
    } else {
        Err(ArgsError {
            tool: spec.name.clone(),
            problems: out.list,
            omitted: out.omitted,
        })
    }
}

/// The problems found so far: the first [`MAX_PROBLEMS`], and a count of the rest.
#[derive(Default)]
struct Problems {
    list: Vec<ArgProblem>,
    omitted: usize,
}

impl Problems {
    fn push(&mut self, p: impl FnOnce() -> ArgProblem) {
        if self.list.len() < MAX_PROBLEMS {
            self.list.push(p());
        } else {
            self.omitted += 1;
        }
    }
}

/// Where a value is in the arguments, written out only for a problem (`edits[1].old_text`).
#[derive(Clone, Copy)]
enum Path<'a> {
    Root,
    Field(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // A name may be the caller's (an unknown field, a map's key): echoed shortened.
            Path::Root => Ok(()),
            Path::Field(Path::Root, name) => f.write_str(&crate::untrusted::echo(name)),
            Path::Field(parent, name) => write!(f, "{parent}.{}", crate::untrusted::echo(name)),
            Path::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

/// Checks (and coerces, and fills the defaults of) the fields of an object: the arguments
/// as a whole, or an object input. `hidden`: inside a sensitive value, nothing is shown.
fn check_object(
    fields: &[Input],
    map: &mut Map<String, Value>,
    at: &Path<'_>,
    hidden: bool,
    out: &mut Problems,
) {
    // How many keys of `map` are fields: when it is all of them, there is no need to look
    // for unknown ones (the common, allocation-free path).
    let mut known = 0;
    for input in fields {
        let path = Path::Field(at, &input.name);
        let hide = hidden || input.sensitive;
        match map.get_mut(input.name.as_str()) {
            Some(v) if !v.is_null() || input.nullable => {
                known += 1;
                check_value(input, v, &path, hide, out);
            }
            given => {
                let was_null = given.is_some();
                if let Some(default) = &input.default {
                    known += 1;
                    let mut v = default.clone();
                    // A default object or array gets the defaults of its own fields.
                    if !input.ty.is_scalar() {
                        check_value(input, &mut v, &path, hide, out);
                    }
                    map.insert(input.name.clone(), v);
                } else if input.optional {
                    if was_null {
                        map.remove(input.name.as_str());
                    }
                } else if was_null {
                    known += 1;
                    out.push(|| ArgProblem::WrongType {
                        field: path.to_string(),
                        expected: expected(input),
                        received: "null".to_owned(),
                    });
                } else {
                    out.push(|| ArgProblem::Missing {
                        field: path.to_string(),
                        expected: expected(input),
                        description: input.description.clone(),
                    });
                }
            }
        }
    }
    if map.len() > known {
        let names: Vec<&str> = fields.iter().map(|i| i.name.as_str()).collect();
        for key in map.keys() {
            if !names.contains(&key.as_str()) {
                out.push(|| ArgProblem::Unknown {
                    field: Path::Field(at, key).to_string(),
                    valid: names.iter().map(|n| (*n).to_owned()).collect(),
                    suggestion: suggest(key, &names).map(str::to_owned),
                });
            }
        }
    }
}

/// A JSON string holding an array or object, when an array or object is wanted: a model's
/// habit, tolerated as the arguments as a whole are.
fn decoded(v: &mut Value, want_array: bool) {
    if let Value::String(s) = v {
        let t = s.trim();
        let looks = if want_array {
            t.starts_with('[')
        } else {
            t.starts_with('{')
        };
        if looks
            && let Ok(parsed) = serde_json::from_str::<Value>(t)
            && parsed.is_array() == want_array
            && (want_array || parsed.is_object())
        {
            *v = parsed;
        }
    }
}

/// An array sent as a JSON string (`"[1, 2]"`): the quirk rule shared with the typed path.
pub(crate) fn parse_array(s: &str) -> Option<Vec<Value>> {
    let t = s.trim();
    if !t.starts_with('[') {
        return None;
    }
    match serde_json::from_str::<Value>(t) {
        Ok(Value::Array(a)) => Some(a),
        _ => None,
    }
}

fn check_value(input: &Input, v: &mut Value, at: &Path<'_>, hidden: bool, out: &mut Problems) {
    if v.is_null() && input.nullable {
        return;
    }
    // Each check reads (and may coerce) the value; `false`: it is of the wrong type. A
    // check that found another problem has pushed it and says `true`.
    let ok = match input.ty {
        InputType::Any => true,
        InputType::String => v.is_string(),
        InputType::Number | InputType::Integer => check_number(input, v, at, hidden, out),
        InputType::Boolean => check_bool(v),
        InputType::Enum => check_enum(input, v, at, hidden, out),
        InputType::Const => input.constant.as_ref() == Some(&*v),
        InputType::Object | InputType::Map => check_object_or_map(input, v, at, hidden, out),
        InputType::Array => check_array(input, v, at, hidden, out),
    };
    if !ok {
        out.push(|| ArgProblem::WrongType {
            field: at.to_string(),
            expected: expected(input),
            received: describe(v, hidden),
        });
    }
}

/// A number or integer input; a numeric string is read as its number.
fn check_number(
    input: &Input,
    v: &mut Value,
    at: &Path<'_>,
    hidden: bool,
    out: &mut Problems,
) -> bool {
    if let Value::String(s) = &*v
        && let Some(n) = parse_number(s)
    {
        *v = Value::Number(n);
    }
    match v {
        Value::Number(n) if input.ty == InputType::Number => {
            let f = n.as_f64().unwrap_or_default();
            in_range(input, f, v, at, hidden, out);
            true
        }
        Value::Number(n) => match whole(n) {
            Some(w) => {
                let f = n.as_f64().unwrap_or_default();
                // `5.0` is the integer 5: a tool doing `range(n)` needs an int.
                if !n.is_i64() {
                    *v = w;
                }
                in_range(input, f, v, at, hidden, out);
                true
            }
            // A whole number no 64-bit integer holds (`1e20`, 2^63): JSON Schema
            // calls it an integer, Rust and most tools cannot take it.
            None if n.as_f64().is_some_and(|f| f.fract() == 0.0) => {
                out.push(|| ArgProblem::OutOfRange {
                    field: at.to_string(),
                    expected: format!("{} that fits in 64 bits ({INTEGER_RANGE})", expected(input)),
                    received: describe(v, hidden),
                });
                true
            }
            None => false,
        },
        _ => false,
    }
}

/// A boolean input; `"true"`/`"false"` are read as booleans.
fn check_bool(v: &mut Value) -> bool {
    match v {
        Value::Bool(_) => true,
        Value::String(s) => match parse_bool(s) {
            Some(b) => {
                *v = Value::Bool(b);
                true
            }
            None => false,
        },
        _ => false,
    }
}

/// An enum input: one of its wire values; a number or boolean whose text is one is read
/// as that string.
fn check_enum(
    input: &Input,
    v: &mut Value,
    at: &Path<'_>,
    hidden: bool,
    out: &mut Problems,
) -> bool {
    if let Value::String(s) = &*v {
        if !input.values.iter().any(|e| e.wire == *s) {
            out.push(|| not_in_enum(input, v, Some(s), at, hidden));
        }
        return true;
    }
    if matches!(v, Value::Number(_) | Value::Bool(_)) {
        let s = v.to_string();
        if input.values.iter().any(|e| e.wire == s) {
            *v = Value::String(s);
        } else {
            out.push(|| not_in_enum(input, v, None, at, hidden));
        }
        return true;
    }
    false
}

/// An object input (its properties) or a map input (each value against `items`); an
/// object sent as JSON text is decoded first.
fn check_object_or_map(
    input: &Input,
    v: &mut Value,
    at: &Path<'_>,
    hidden: bool,
    out: &mut Problems,
) -> bool {
    decoded(v, false);
    match v {
        Value::Object(m) if input.ty == InputType::Object => {
            check_object(&input.properties, m, at, hidden, out);
            true
        }
        Value::Object(m) => {
            if let Some(items) = input.items.as_deref() {
                for (k, e) in m.iter_mut() {
                    let path = Path::Field(at, k);
                    check_value(items, e, &path, hidden || items.sensitive, out);
                }
            }
            true
        }
        _ => false,
    }
}

/// An array input: its length bounds, then each item; an array sent as JSON text is
/// decoded first.
fn check_array(
    input: &Input,
    v: &mut Value,
    at: &Path<'_>,
    hidden: bool,
    out: &mut Problems,
) -> bool {
    decoded(v, true);
    let Value::Array(a) = v else {
        return false;
    };
    let n = a.len() as u64;
    if input.min_items.is_some_and(|m| n < m) || input.max_items.is_some_and(|m| n > m) {
        out.push(|| ArgProblem::OutOfRange {
            field: at.to_string(),
            expected: expected(input),
            received: format!("an array of {n} items"),
        });
    }
    if let Some(items) = input.items.as_deref() {
        for (i, e) in a.iter_mut().enumerate() {
            let path = Path::Index(at, i);
            check_value(items, e, &path, hidden || items.sensitive, out);
        }
    }
    true
}

/// The integers an integer input takes: an `i64`'s, and no more than 2^53 in magnitude
/// when written as a float (beyond it a float no longer names one integer).
pub const INTEGER_RANGE: &str =
    "at most 9223372036854775807 in magnitude as an integer, 9007199254740992 as a float";

/// A number as an integer when it has no fraction (`5.0` -> `5`), or `None`.
fn whole(n: &serde_json::Number) -> Option<Value> {
    // An integer input is an `i64` in Rust: one beyond it could not reach a typed caller.
    if n.is_i64() {
        return Some(Value::Number(n.clone()));
    }
    if n.is_u64() {
        return None;
    }
    let f = n.as_f64()?;
    // Beyond 2^53 a float no longer says which integer it is.
    (f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0).then(|| Value::from(f as i64))
}

fn in_range(input: &Input, f: f64, v: &Value, at: &Path<'_>, hidden: bool, out: &mut Problems) {
    if input.minimum.is_some_and(|m| f < m) || input.maximum.is_some_and(|m| f > m) {
        out.push(|| ArgProblem::OutOfRange {
            field: at.to_string(),
            expected: expected(input),
            received: describe(v, hidden),
        });
    }
}

/// What [`validate`] still does for typed params, in place: fills the defaults of inputs
/// absent or `null`, at every depth (a sensitive input's default lives only in TOOL.md,
/// never in generated code, so the typed value leaves it out), drops the `null` of an
/// optional input without one, and checks what a Rust type cannot hold (`minimum`,
/// `max_items`, ...). The types saw to the rest, so only those can fail.
pub(crate) fn typed_check(
    spec: &ToolSpec,
    params: &mut Map<String, Value>,
) -> Result<(), ArgsError> {
    let mut out = Problems::default();
    check_object(&spec.inputs, params, &Path::Root, false, &mut out);
    if out.list.is_empty() {
        Ok(())
    } else {
        Err(ArgsError {
            tool: spec.name.clone(),
            problems: out.list,
            omitted: out.omitted,
        })
    }
}

/// The arguments as an object, or a description of what was received instead: the one
/// rule for the arguments as a whole, shared by [`validate`] and the typed path.
pub(crate) fn root_object(args: Value) -> Result<Map<String, Value>, String> {
    match args {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        Value::String(s) => {
            let t = s.trim();
            if t.is_empty() {
                return Ok(Map::new());
            }
            // Some models send the arguments object as a JSON string.
            match serde_json::from_str::<Value>(t) {
                Ok(Value::Object(map)) => Ok(map),
                Ok(Value::Null) => Ok(Map::new()),
                // The text may hold secrets: describe it, never echo it.
                _ => Err("a string that is not a JSON object".to_owned()),
            }
        }
        other => Err(describe(&other, false)),
    }
}

fn not_in_enum(
    input: &Input,
    v: &Value,
    text: Option<&str>,
    at: &Path<'_>,
    hidden: bool,
) -> ArgProblem {
    let values: Vec<String> = input.values.iter().map(|e| e.wire.clone()).collect();
    let suggestion = match text {
        Some(s) if !hidden => {
            let known: Vec<&str> = values.iter().map(String::as_str).collect();
            suggest(s, &known).map(str::to_owned)
        }
        _ => None,
    };
    ArgProblem::NotInEnum {
        field: at.to_string(),
        values,
        received: describe(v, hidden),
        suggestion,
    }
}

/// A number sent as a string (`" 2.5 "`): the quirk rule shared with the typed path.
pub(crate) fn parse_number(s: &str) -> Option<serde_json::Number> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    match serde_json::from_str::<Value>(t) {
        Ok(Value::Number(n)) => Some(n),
        _ => None,
    }
}

/// A boolean sent as a string (`"True"`, `"false"`): shared with the typed path.
pub(crate) fn parse_bool(s: &str) -> Option<bool> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("true") {
        Some(true)
    } else if t.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

/// What an input wants, in words: `a string`, `an integer from 1 to 10`, `one of "a",
/// "b"`, `an array of strings (1\u{2013}5 items)`.
fn expected(input: &Input) -> String {
    let base = match input.ty {
        InputType::String => "a string".to_owned(),
        InputType::Number => "a number".to_owned(),
        InputType::Integer => "an integer".to_owned(),
        InputType::Boolean => "a boolean (true or false)".to_owned(),
        InputType::Enum => {
            let values: Vec<String> = input.values.iter().map(|e| e.wire.clone()).collect();
            format!("one of {}", quoted_list(&values))
        }
        InputType::Object => {
            let names: Vec<&str> = input.properties.iter().map(|p| p.name.as_str()).collect();
            format!("an object with the fields {}", names.join(", "))
        }
        InputType::Array => match input.items.as_deref().map(|i| i.ty) {
            Some(InputType::String) => "an array of strings".to_owned(),
            Some(InputType::Number) => "an array of numbers".to_owned(),
            Some(InputType::Integer) => "an array of integers".to_owned(),
            Some(InputType::Boolean) => "an array of booleans".to_owned(),
            Some(InputType::Object) => "an array of objects".to_owned(),
            _ => "an array".to_owned(),
        },
        InputType::Map => "an object".to_owned(),
        InputType::Const => match &input.constant {
            Some(c) => format!("exactly {c}"),
            None => "null".to_owned(),
        },
        InputType::Any => "any JSON value".to_owned(),
    };
    let base = if input.nullable {
        format!("{base} or null")
    } else {
        base
    };
    match input.constraint_text() {
        Some(c) if input.ty == InputType::Array => format!("{base} ({c})"),
        Some(c) => format!("{base} {c}"),
        None => base,
    }
}

fn quoted_list(values: &[String]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("\"{v}\"")).collect();
    quoted.join(", ")
}

/// Longest received text shown back to the model, in characters.
const SHOWN_CHARS: usize = 60;

pub(crate) use toolbind_codegen::mcp::json_kind;

/// What a value is, in words; a sensitive value is described by its type only.
fn describe(v: &Value, sensitive: bool) -> String {
    let kind = match v {
        Value::Null => return "null".to_owned(),
        other => json_kind(other),
    };
    if sensitive {
        return format!("{kind} (value hidden: sensitive input)");
    }
    match v {
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => {
            let mut shown: String = s.chars().take(SHOWN_CHARS).collect();
            if shown.len() < s.len() {
                shown.push('…');
            }
            format!("the string {}", Value::String(shown))
        }
        Value::Array(a) => format!("an array of {} items", a.len()),
        _ => kind.to_owned(),
    }
}
