//! Typed outputs: a tool's result `details` checked against its TOOL.md `outputs:`, and
//! parsed into the generated `Output` type.
//!
//! A result whose details break the declared outputs is a bug in the tool, not a failed
//! call: the call's side effects already happened. The runtime keeps the result as the
//! tool returned it (not `isError`, [`StopReason::Completed`](crate::StopReason)), marks
//! it ([`OutputCheck::Broken`]) and reports each violation (see
//! [`RuntimeBuilder::on_output_violation`](crate::runtime::RuntimeBuilder::on_output_violation)).
//! `toolbind serve` then leaves out the result's `structuredContent`.

use std::fmt;

use serde_json::{Map, Value};
use toolbind_codegen::model::{OutputField, OutputType};

use crate::Tool;
pub use crate::result::OutputCheck;
use crate::result::{StopReason, ToolResult};

/// The most violations one check reports: past them, the first ones say enough.
const MAX_VIOLATIONS: usize = 20;

/// One way a result's `details` broke its tool's declared `outputs:`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OutputViolation {
    /// The field by its path in `details`: `status`, `messages[3].subject`; empty for the
    /// details as a whole.
    pub field: String,
    /// What is wrong: `missing`, `expected a number, found a string`...
    pub message: String,
}

impl fmt::Display for OutputViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "details: {}", self.message)
        } else {
            write!(f, "`{}`: {}", self.field, self.message)
        }
    }
}

/// Why a result has no typed output ([`Runtime::output`](crate::Runtime::output)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputError {
    /// The call did not complete (an error result, bad arguments, a timeout, a
    /// cancellation...), so it has no output; [`ToolResult::stop`](crate::ToolResult)
    /// says why.
    Failed,
    /// The tool's `details` break its declared `outputs:` (a bug in the tool): every
    /// violation the runtime's check finds (at most 20).
    Violated(Vec<OutputViolation>),
    /// The details do not fit the output type this program was compiled with, although
    /// the runtime's check finds nothing wrong: the loaded TOOL.md's `outputs:` differ from
    /// the ones the program was built with. The text is serde's.
    Mismatch(String),
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutputError::Failed => f.write_str("the call did not complete, so it has no output"),
            OutputError::Violated(v) => {
                f.write_str("the tool's details break its declared outputs: ")?;
                let list: Vec<String> = v.iter().map(ToString::to_string).collect();
                f.write_str(&list.join("; "))
            }
            OutputError::Mismatch(e) => write!(
                f,
                "the details do not fit the compiled output type (rebuild if the TOOL.md's \
                 outputs changed): {e}"
            ),
        }
    }
}

impl std::error::Error for OutputError {}

/// A typed call's result together with its typed output: what
/// [`Runtime::call_output`](crate::Runtime::call_output) returns.
///
/// `result` is what the model should see (its text, `isError`, the stop reason); `output`
/// is the same call's `details` as the tool's generated `Output` type, for the program.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Typed<O> {
    /// The result, exactly as [`Runtime::call_typed`](crate::Runtime::call_typed) returns
    /// it.
    pub result: ToolResult,
    /// The result's `details` as the tool's `Output` type, or why there is none.
    pub output: Result<O, OutputError>,
}

/// The typed output of `result`, a result of tool `T` whose loaded spec is `spec`: see
/// [`Runtime::output`](crate::Runtime::output).
pub(crate) fn typed<T: Tool>(
    spec: Option<&toolbind_codegen::model::ToolSpec>,
    result: &ToolResult,
) -> Result<T::Output, OutputError> {
    if result.is_error || result.stop != StopReason::Completed {
        return Err(OutputError::Failed);
    }
    if let Some(spec) = spec {
        let violations = check(&spec.outputs, result.details.as_ref());
        if !violations.is_empty() {
            return Err(OutputError::Violated(violations));
        }
    }
    let details = result.details.clone().unwrap_or(Value::Null);
    serde_json::from_value(details).map_err(|e| OutputError::Mismatch(e.to_string()))
}

/// How `details` break `outputs` (empty when they hold, or when there are no outputs).
/// Absent details count as an empty object: they hold when every output is optional.
pub(crate) fn check(outputs: &[OutputField], details: Option<&Value>) -> Vec<OutputViolation> {
    let mut out = Vec::new();
    if outputs.is_empty() {
        return out;
    }
    match details {
        None | Some(Value::Null) => {
            if outputs.iter().any(|f| !f.optional) {
                push(
                    &mut out,
                    "",
                    "missing: the tool returned no `details`".to_owned(),
                );
            }
        }
        Some(Value::Object(m)) => fields(outputs, m, "", &mut out),
        Some(other) => push(
            &mut out,
            "",
            format!(
                "expected an object, found {}",
                crate::args::json_kind(other)
            ),
        ),
    }
    out
}

fn push(out: &mut Vec<OutputViolation>, field: &str, message: String) {
    if out.len() < MAX_VIOLATIONS {
        out.push(OutputViolation {
            field: field.to_owned(),
            message,
        });
    }
}

fn fields(
    declared: &[OutputField],
    map: &Map<String, Value>,
    parent: &str,
    out: &mut Vec<OutputViolation>,
) {
    for f in declared {
        let path = if parent.is_empty() {
            f.name.clone()
        } else {
            format!("{parent}.{}", f.name)
        };
        match map.get(&f.name) {
            None | Some(Value::Null) if f.optional => {}
            None => push(out, &path, format!("missing (a required {})", f.ty)),
            Some(v) => value(f, v, &path, out),
        }
    }
}

fn value(f: &OutputField, v: &Value, path: &str, out: &mut Vec<OutputViolation>) {
    if out.len() >= MAX_VIOLATIONS {
        return;
    }
    match (&f.ty, v) {
        (OutputType::String, Value::String(_))
        | (OutputType::Number, Value::Number(_))
        | (OutputType::Boolean, Value::Bool(_)) => {}
        (OutputType::Integer, Value::Number(n)) => {
            // The generated `Output` holds an `i64`.
            if !n.is_i64() {
                push(
                    out,
                    path,
                    format!("expected an integer (64-bit), found {n}"),
                );
            }
        }
        (OutputType::Enum { values, .. }, Value::String(s)) => {
            if !values.iter().any(|e| e.wire == *s) {
                let list: Vec<&str> = values.iter().map(|e| e.wire.as_str()).collect();
                let shown: String = s.chars().take(60).collect();
                let more = if shown.len() < s.len() { "..." } else { "" };
                push(
                    out,
                    path,
                    format!("`{shown}{more}` is not one of: {}", list.join(", ")),
                );
            }
        }
        (OutputType::Object { properties, .. }, Value::Object(m)) => {
            fields(properties, m, path, out);
        }
        (OutputType::Array { items }, Value::Array(a)) => {
            for (i, e) in a.iter().enumerate() {
                value(items, e, &format!("{path}[{i}]"), out);
            }
        }
        (ty, v) => push(
            out,
            path,
            format!(
                "expected {}, found {}",
                expected(ty),
                crate::args::json_kind(v)
            ),
        ),
    }
}

fn expected(ty: &OutputType) -> &'static str {
    match ty {
        OutputType::String => "a string",
        OutputType::Number => "a number",
        OutputType::Integer => "an integer",
        OutputType::Boolean => "a boolean",
        OutputType::Enum { .. } => "a string (an enum value)",
        OutputType::Object { .. } => "an object",
        OutputType::Array { .. } => "an array",
        _ => "another type",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    fn outputs(yaml: &str) -> Vec<OutputField> {
        let md = format!("---\nname: t\ndescription: d\noutputs:\n{yaml}---\n");
        let opts = toolbind_codegen::Options::default().require_entry(false);
        toolbind_codegen::parse_tool_md(
            Path::new("t/TOOL.md"),
            Path::new("t"),
            md.as_bytes(),
            &opts,
        )
        .unwrap()
        .outputs
    }

    fn messages(v: &[OutputViolation]) -> Vec<String> {
        v.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn details_that_hold_pass() {
        let o = outputs(
            "  n:\n    type: number\n    description: d\n  tags:\n    type: array\n    description: d\n    items:\n      type: string\n  t:\n    type: string\n    description: d\n    optional: true\n",
        );
        assert!(check(&o, Some(&json!({"n": 1, "tags": ["a"], "extra": true}))).is_empty());
        assert!(check(&o, Some(&json!({"n": 1.5, "tags": [], "t": null}))).is_empty());
    }

    #[test]
    fn every_violation_names_its_field() {
        let o = outputs(
            "  status:\n    type: number\n    description: d\n  mode:\n    type: enum\n    values: a, b\n    description: d\n  rows:\n    type: array\n    description: d\n    items:\n      type: object\n      properties:\n        id:\n          type: string\n          description: d\n        ok:\n          type: boolean\n          description: d\n          optional: true\n",
        );
        let v = check(
            &o,
            Some(
                &json!({"status": "200", "mode": "c", "rows": [{"id": "x"}, {"id": 2, "ok": "yes"}, 3]}),
            ),
        );
        assert_eq!(
            messages(&v),
            [
                "`status`: expected a number, found a string",
                "`mode`: `c` is not one of: a, b",
                "`rows[1].id`: expected a string, found a number",
                "`rows[1].ok`: expected a boolean, found a string",
                "`rows[2]`: expected an object, found a number",
            ]
        );
        assert_eq!(
            messages(&check(&o, Some(&json!({"mode": "a", "rows": []})))),
            ["`status`: missing (a required number)"]
        );
        assert_eq!(
            messages(&check(&o, None)),
            ["details: missing: the tool returned no `details`"]
        );
        assert_eq!(
            messages(&check(&o, Some(&json!([1])))),
            ["details: expected an object, found an array"]
        );
    }

    #[test]
    fn all_optional_outputs_hold_without_details() {
        let o = outputs("  t:\n    type: string\n    description: d\n    optional: true\n");
        assert!(check(&o, None).is_empty());
    }

    #[test]
    fn violations_are_capped() {
        let o =
            outputs("  xs:\n    type: array\n    description: d\n    items:\n      type: number\n");
        let many: Vec<Value> = (0..100).map(|i| json!(i.to_string())).collect();
        assert_eq!(check(&o, Some(&json!({"xs": many}))).len(), MAX_VIOLATIONS);
    }
}
