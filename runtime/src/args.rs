//! Checking a model's arguments against a tool's inputs: [`validate`] and what it returns.

use std::fmt;

use serde_json::{Map, Value};
use toolbind_codegen::model::{Input, InputType, ToolSpec};
use toolbind_codegen::suggest;

use crate::ToolInfo;
use crate::secret::REDACTED;

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

/// `params` with the value of every input the spec marks sensitive replaced by
/// `"[REDACTED]"`.
pub(crate) fn redact(spec: &ToolSpec, params: &Map<String, Value>) -> Map<String, Value> {
    params
        .iter()
        .map(|(k, v)| {
            let sensitive = spec.input(k).is_some_and(|i| i.sensitive);
            let v = if sensitive {
                Value::String(REDACTED.to_owned())
            } else {
                v.clone()
            };
            (k.clone(), v)
        })
        .collect()
}

/// Why a model's arguments were rejected: every problem found, in input order.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArgsError {
    /// The tool's name.
    pub tool: String,
    /// Every problem found, in input order, unknown fields last.
    pub problems: Vec<ArgProblem>,
}

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
            });
        }
    };
    let mut problems = Vec::new();
    // How many keys of `params` are inputs: when it is all of them, there is no need to look
    // for unknown fields (the common, allocation-free path).
    let mut known = 0;

    for input in &spec.inputs {
        let value = params.get_mut(input.name.as_str());
        match value {
            Some(v) if !v.is_null() => {
                known += 1;
                if let Err(p) = check_value(input, v) {
                    problems.push(p);
                }
            }
            given => {
                let was_null = given.is_some();
                if let Some(default) = &input.default {
                    known += 1;
                    params.insert(input.name.clone(), default.clone());
                } else if input.optional {
                    if was_null {
                        params.remove(input.name.as_str());
                    }
                } else if was_null {
                    known += 1;
                    problems.push(ArgProblem::WrongType {
                        field: input.name.clone(),
                        expected: expected(input),
                        received: "null".to_owned(),
                    });
                } else {
                    problems.push(ArgProblem::Missing {
                        field: input.name.clone(),
                        expected: expected(input),
                        description: input.description.clone(),
                    });
                }
            }
        }
    }

    if params.len() > known {
        for key in params.keys() {
            if spec.input(key).is_none() {
                let names: Vec<&str> = spec.inputs.iter().map(|i| i.name.as_str()).collect();
                problems.push(ArgProblem::Unknown {
                    field: key.clone(),
                    valid: names.iter().map(|n| (*n).to_owned()).collect(),
                    suggestion: suggest(key, &names).map(str::to_owned),
                });
            }
        }
    }

    if problems.is_empty() {
        Ok(ValidArgs { tool, params })
    } else {
        Err(ArgsError {
            tool: spec.name.clone(),
            problems,
        })
    }
}

/// What [`validate`] still does for typed params: fills the defaults of inputs absent or
/// `null` (a sensitive input's default lives only in TOOL.md, never in generated code, so
/// the typed value leaves it out) and drops the `null` of an optional input without one.
pub(crate) fn typed_defaults(spec: &ToolSpec, params: &mut Map<String, Value>) {
    for input in &spec.inputs {
        if !params.get(input.name.as_str()).is_none_or(Value::is_null) {
            continue;
        }
        match &input.default {
            Some(default) => {
                params.insert(input.name.clone(), default.clone());
            }
            None => {
                params.remove(input.name.as_str());
            }
        }
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

fn check_value(input: &Input, v: &mut Value) -> Result<(), ArgProblem> {
    let ok = match input.ty {
        InputType::String => v.is_string(),
        InputType::Number => match v {
            Value::Number(_) => true,
            Value::String(s) => match parse_number(s) {
                Some(n) => {
                    *v = Value::Number(n);
                    true
                }
                None => false,
            },
            _ => false,
        },
        InputType::Boolean => match v {
            Value::Bool(_) => true,
            Value::String(s) => match parse_bool(s) {
                Some(b) => {
                    *v = Value::Bool(b);
                    true
                }
                None => false,
            },
            _ => false,
        },
        InputType::Enum => {
            if let Value::String(s) = &*v {
                if input.values.iter().any(|e| e.wire == *s) {
                    return Ok(());
                }
                return Err(not_in_enum(input, v, Some(s)));
            }
            if matches!(v, Value::Number(_) | Value::Bool(_)) {
                let s = v.to_string();
                if input.values.iter().any(|e| e.wire == s) {
                    *v = Value::String(s);
                    return Ok(());
                }
                return Err(not_in_enum(input, v, None));
            }
            false
        }
    };
    if ok {
        Ok(())
    } else {
        Err(ArgProblem::WrongType {
            field: input.name.clone(),
            expected: expected(input),
            received: describe(v, input.sensitive),
        })
    }
}

fn not_in_enum(input: &Input, v: &Value, text: Option<&str>) -> ArgProblem {
    let values: Vec<String> = input.values.iter().map(|e| e.wire.clone()).collect();
    let suggestion = match text {
        Some(s) if !input.sensitive => {
            let known: Vec<&str> = values.iter().map(String::as_str).collect();
            suggest(s, &known).map(str::to_owned)
        }
        _ => None,
    };
    ArgProblem::NotInEnum {
        field: input.name.clone(),
        values,
        received: describe(v, input.sensitive),
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

/// What an input wants, in words: `a string`, `a number`, `one of "a", "b"`.
fn expected(input: &Input) -> String {
    match input.ty {
        InputType::String => "a string".to_owned(),
        InputType::Number => "a number".to_owned(),
        InputType::Boolean => "a boolean (true or false)".to_owned(),
        InputType::Enum => {
            let values: Vec<String> = input.values.iter().map(|e| e.wire.clone()).collect();
            format!("one of {}", quoted_list(&values))
        }
    }
}

fn quoted_list(values: &[String]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("\"{v}\"")).collect();
    quoted.join(", ")
}

/// Longest received text shown back to the model, in characters.
const SHOWN_CHARS: usize = 60;

/// A JSON value's type, in words: `null`, `a boolean`, `a number`, `a string`, `an array`,
/// `an object`. Every message about a value of the wrong type says it this way.
pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

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
