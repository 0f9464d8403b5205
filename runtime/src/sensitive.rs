//! Which values of a call are sensitive (`sensitive: true` in TOOL.md, at any depth):
//! the params with them redacted, and their texts for the outbound redactor.

use serde_json::{Map, Value};
use toolbind_codegen::model::{Input, InputType, ToolSpec};

/// The text shown wherever a secret would be printed.
pub const REDACTED: &str = "[REDACTED]";

/// `params` with the value of every input the spec marks sensitive, at any depth, replaced
/// by `"[REDACTED]"`.
pub(crate) fn redact(spec: &ToolSpec, params: &Map<String, Value>) -> Map<String, Value> {
    redact_fields(&spec.inputs, params)
}

fn redact_fields(fields: &[Input], map: &Map<String, Value>) -> Map<String, Value> {
    map.iter()
        .map(|(k, v)| {
            let v = match fields.iter().find(|i| i.name == *k) {
                Some(i) => redact_value(i, v),
                None => v.clone(),
            };
            (k.clone(), v)
        })
        .collect()
}

fn redact_value(input: &Input, v: &Value) -> Value {
    if input.sensitive && !v.is_null() {
        return Value::String(REDACTED.to_owned());
    }
    if !input.holds_sensitive() {
        return v.clone();
    }
    match (input.ty, v, input.items.as_deref()) {
        (InputType::Object, Value::Object(m), _) => {
            Value::Object(redact_fields(&input.properties, m))
        }
        (InputType::Array, Value::Array(a), Some(items)) => {
            Value::Array(a.iter().map(|e| redact_value(items, e)).collect())
        }
        (InputType::Map, Value::Object(m), Some(items)) => Value::Object(
            m.iter()
                .map(|(k, e)| (k.clone(), redact_value(items, e)))
                .collect(),
        ),
        _ => v.clone(),
    }
}

/// The texts of every sensitive value in `params`, at any depth: a string as it is, any
/// other value as its JSON and, for an object or array, each string and number inside it
/// too (a tool may print one field of a secret object).
pub(crate) fn sensitive_texts(spec: &ToolSpec, params: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    for input in spec.inputs.iter().filter(|i| i.holds_sensitive()) {
        if let Some(v) = params.get(&input.name) {
            collect_sensitive(input, v, &mut out);
        }
    }
    out
}

fn collect_sensitive(input: &Input, v: &Value, out: &mut Vec<String>) {
    if input.sensitive {
        leaf_texts(v, out);
        if !matches!(v, Value::String(_) | Value::Null) {
            out.push(v.to_string());
        }
        return;
    }
    match (v, input.items.as_deref()) {
        (Value::Object(m), _) if input.ty == InputType::Object => {
            for p in input.properties.iter().filter(|p| p.holds_sensitive()) {
                if let Some(e) = m.get(&p.name) {
                    collect_sensitive(p, e, out);
                }
            }
        }
        (Value::Array(a), Some(items)) => a.iter().for_each(|e| collect_sensitive(items, e, out)),
        (Value::Object(m), Some(items)) => {
            m.values().for_each(|e| collect_sensitive(items, e, out))
        }
        _ => {}
    }
}

fn leaf_texts(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Number(n) => out.push(n.to_string()),
        Value::Array(a) => a.iter().for_each(|e| leaf_texts(e, out)),
        Value::Object(m) => m.values().for_each(|e| leaf_texts(e, out)),
        Value::Null | Value::Bool(_) => {}
    }
}
