//! The generated `ToolCall`'s path into the runtime: params read from a model's JSON
//! (an MCP tool's checked against its schema), and the typed calls.

use super::decode::coerced;
use super::*;
use crate::lock::Locked;

/// Deserialises a tool's params from a model's JSON args. The arguments as a whole are
/// read by the rule `Runtime::call` uses (`args::root_object`): `null`, `""`
/// and a JSON string holding an object are accepted too.
pub fn params_from_value<T: ::serde::de::DeserializeOwned>(
    tool: &'static str,
    args: ::serde_json::Value,
) -> ::core::result::Result<T, CallError> {
    ::serde_json::from_value(root_value(tool, args)?).map_err(|e| bad_args(tool, e))
}

// Kept out of the generic function above so that each tool's instantiation stays small.
fn root_value(
    tool: &'static str,
    args: ::serde_json::Value,
) -> ::core::result::Result<::serde_json::Value, CallError> {
    match crate::args::root_object(args) {
        Ok(map) => Ok(::serde_json::Value::Object(map)),
        Err(received) => Err(CallError::BadArgs {
            tool,
            message: format!("expected an object of named arguments, received {received}"),
        }),
    }
}

fn bad_args(tool: &'static str, e: ::serde_json::Error) -> CallError {
    CallError::BadArgs {
        tool,
        message: e.to_string(),
    }
}

/// [`params_from_value`] for a generated tool, then the constraints types cannot hold
/// (`minimum`/`maximum`, `min_items`/`max_items`, at any depth), read from the tool's
/// schema: the typed path refuses what `Runtime::call` refuses.
pub fn params<T: Tool>(args: ::serde_json::Value) -> ::core::result::Result<T::Params, CallError> {
    let facts = schema_facts(T::SCHEMA);
    let args = if facts.nested {
        nested_quirks(&facts.schema, args)
    } else {
        args
    };
    let p: T::Params = params_from_value(T::NAME, args)?;
    if facts.constrained {
        // Params hold what `Arg` gives: serialising cannot fail.
        let v = ::serde_json::to_value(&p).unwrap_or_default();
        if let Some(message) = constraint_problem(&facts.schema, &v, "") {
            return Err(CallError::BadArgs {
                tool: T::NAME,
                message,
            });
        }
    }
    Ok(p)
}

/// Generated MCP `ToolCall::from_call`: the model's arguments are checked against the
/// server's own `inputSchema` first (the parts the generated types hold as
/// `serde_json::Value` too; a remote `$ref` is never fetched), then parsed into the params.
#[cfg(feature = "mcp")]
pub fn mcp_params<T: McpTool>(
    args: ::serde_json::Value,
) -> ::core::result::Result<T::Params, CallError> {
    let args = root_value(T::NAME, args)?;
    if let Some(message) = crate::mcp::schema_problem(T::INPUT_SCHEMA, &args) {
        return Err(CallError::BadArgs {
            tool: T::NAME,
            message,
        });
    }
    params_from_value(T::NAME, args)
}

/// What the typed path needs to know of a tool's portable schema, read once per program:
/// the schema, whether it nests (objects or arrays inside the arguments) and whether it
/// has constraints types cannot hold.
struct SchemaFacts {
    schema: ::serde_json::Value,
    nested: bool,
    constrained: bool,
}

fn schema_facts(schema: &'static str) -> ::std::sync::Arc<SchemaFacts> {
    use ::std::collections::HashMap;
    use ::std::sync::{Arc, Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<usize, Arc<SchemaFacts>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut map = cache.locked();
    map.entry(schema.as_ptr() as usize)
        .or_insert_with(|| {
            Arc::new(SchemaFacts {
                schema: ::serde_json::from_str(schema).unwrap_or_default(),
                nested: schema.contains("\"items\"")
                    || schema.contains("\"additionalProperties\":{")
                    || schema.matches("\"properties\"").nth(1).is_some(),
                constrained: ["\"minimum\"", "\"maximum\"", "\"minItems\"", "\"maxItems\""]
                    .iter()
                    .any(|k| schema.contains(k)),
            })
        })
        .clone()
}

/// The quirks `Runtime::call` tolerates inside nested values (a number or boolean sent as
/// a string, a whole float for an integer, an array or object sent as a JSON string),
/// applied by the tool's schema before the typed fields read them; a flat tool's fields
/// handle their own.
fn nested_quirks(
    schema: &::serde_json::Value,
    mut args: ::serde_json::Value,
) -> ::serde_json::Value {
    if let ::serde_json::Value::String(s) = &args
        && let Ok(v @ ::serde_json::Value::Object(_)) = ::serde_json::from_str(s.trim())
    {
        args = v;
    }
    coerce(schema, &mut args);
    args
}

fn coerce(schema: &::serde_json::Value, v: &mut ::serde_json::Value) {
    use ::serde_json::Value;
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or(""),
        _ => "",
    };
    match (ty, &*v) {
        ("integer" | "number", Value::String(s)) => {
            if let Some(n) = crate::args::parse_number(s) {
                *v = Value::Number(n);
            }
        }
        ("boolean", Value::String(s)) => {
            if let Some(b) = crate::args::parse_bool(s) {
                *v = Value::Bool(b);
            }
        }
        ("array", Value::String(s)) => {
            if let Some(a) = crate::args::parse_array(s) {
                *v = Value::Array(a);
            }
        }
        ("object", Value::String(s)) if s.trim_start().starts_with('{') => {
            if let Ok(o @ Value::Object(_)) = ::serde_json::from_str(s.trim()) {
                *v = o;
            }
        }
        _ => {}
    }
    match v {
        Value::Number(n) if ty == "integer" && n.is_f64() => {
            if let Some(w) = coerced(&Value::Number(n.clone())) {
                *v = w;
            }
        }
        Value::Array(a) => {
            if let Some(items) = schema.get("items") {
                a.iter_mut().for_each(|e| coerce(items, e));
            }
        }
        Value::Object(m) => {
            let props = schema.get("properties");
            let values = schema.get("additionalProperties").filter(|a| a.is_object());
            for (k, e) in m.iter_mut() {
                if let Some(sub) = props.and_then(|p| p.get(k)).or(values) {
                    coerce(sub, e);
                }
            }
        }
        _ => {}
    }
}

/// The first value under `v` outside a `minimum`/`maximum`/`minItems`/`maxItems` of
/// `schema`, in words.
fn constraint_problem(
    schema: &::serde_json::Value,
    v: &::serde_json::Value,
    path: &str,
) -> Option<String> {
    use ::serde_json::Value;
    let bound = |k: &str| schema.get(k).and_then(Value::as_f64);
    match v {
        Value::Number(n) => {
            let f = n.as_f64()?;
            let low = bound("minimum").is_some_and(|m| f < m);
            let high = bound("maximum").is_some_and(|m| f > m);
            // The value is not shown: it may be a secret's.
            (low || high).then(|| format!("`{path}`: a number outside the allowed range"))
        }
        Value::Array(a) => {
            let n = a.len() as f64;
            if bound("minItems").is_some_and(|m| n < m) || bound("maxItems").is_some_and(|m| n > m)
            {
                return Some(format!(
                    "`{path}`: {} items is not an allowed number",
                    a.len()
                ));
            }
            let items = schema.get("items")?;
            a.iter()
                .enumerate()
                .find_map(|(i, e)| constraint_problem(items, e, &format!("{path}[{i}]")))
        }
        Value::Object(m) => {
            let props = schema.get("properties");
            let values = schema.get("additionalProperties").filter(|a| a.is_object());
            m.iter().find_map(|(k, e)| {
                let sub = props.and_then(|p| p.get(k)).or(values)?;
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                constraint_problem(sub, e, &p)
            })
        }
        _ => None,
    }
}

/// The error for a call of a tool that was not compiled in.
pub fn unknown_tool<T>(
    name: &str,
    known: &'static [&'static str],
) -> ::core::result::Result<T, CallError> {
    Err(CallError::UnknownTool {
        name: name.to_owned(),
        known,
    })
}

/// The future generated `ToolCall::call` returns.
pub type BoxFuture<'a, T> =
    ::core::pin::Pin<::std::boxed::Box<dyn ::core::future::Future<Output = T> + Send + 'a>>;

/// One arm of generated `ToolCall::call`: [`Runtime::call_typed`](crate::Runtime::call_typed).
pub fn call_typed<'a, T: Tool + 'a>(
    runtime: &'a crate::Runtime,
    params: T::Params,
    opts: crate::CallOptions,
) -> BoxFuture<'a, crate::ToolResult> {
    ::std::boxed::Box::pin(runtime.call_typed::<T>(params, opts))
}

/// One arm of generated MCP `ToolCall::call`: [`Runtime::call_mcp`](crate::Runtime::call_mcp).
#[cfg(feature = "mcp")]
pub fn call_mcp<'a, T: McpTool + 'a>(
    runtime: &'a crate::Runtime,
    params: T::Params,
    opts: crate::CallOptions,
) -> BoxFuture<'a, crate::ToolResult> {
    ::std::boxed::Box::pin(runtime.call_mcp::<T>(params, opts))
}

/// Generated `ToolCall::parse`: the runtime's validator first (so both paths answer a
/// model with the same text), then the generated types on the validated params.
pub fn parse_call<T>(
    runtime: &crate::Runtime,
    name: &str,
    args: ::serde_json::Value,
    from_call: fn(&str, ::serde_json::Value) -> ::core::result::Result<T, CallError>,
) -> ::core::result::Result<T, crate::ToolResult> {
    let valid = runtime.check(name, args)?;
    let params = ::serde_json::Value::Object(valid.into_params());
    // Only when the loaded TOOL.md differs from the compiled one (`call_typed`'s drift
    // check names that case) or the program was compiled without this tool.
    from_call(name, params)
        .map_err(|e| crate::ToolResult::stopped(crate::StopReason::ContractDrift, e.to_string()))
}

/// A generated params value as the JSON a tool receives.
pub fn to_args<T: ::serde::Serialize>(params: &T) -> ::serde_json::Value {
    // Params hold strings, numbers, booleans and enums only: serialising cannot fail.
    ::serde_json::to_value(params).unwrap_or_default()
}
