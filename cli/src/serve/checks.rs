//! The checks every request gets before the MCP service sees it, each stdio line and
//! each HTTP body alike: what the MCP library would drop or misreport is answered here.
//!
//! - a line over the request limit (`--max-request-bytes`, default 16 MiB) is answered
//!   with `-32600` naming the limit ([`too_long`]; over HTTP, a body over it gets 413);
//! - a line that is not JSON is answered with `-32700`;
//! - `tools/call` without a string `name`, or with `arguments` that are not an object, and
//!   a `tools/list` with a pagination cursor (this server has one page) are answered with
//!   `-32602`, carrying the request's id; so are `tasks/get`, `tasks/update` and
//!   `tasks/cancel` without a string `taskId`, and the other malformed requests
//!   [`check_message`] names.

use rmcp::model::ErrorCode;
use serde_json::{Value, json};
use toolbind::untrusted::echo_json;

use super::server::{MAX_SUBSCRIPTION_URI, MAX_SUBSCRIPTIONS};

/// What to do with one request.
#[derive(Debug, PartialEq)]
pub(crate) enum Verdict {
    /// Pass it to the MCP service.
    Forward,
    /// Answer with this JSON-RPC error response.
    Reject(Value),
}

/// A JSON-RPC error response.
pub(crate) fn error(id: Value, code: ErrorCode, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code.0, "message": message}})
}

/// The answer to a line over the limit, with the request's id when the line's start shows
/// it (`{"jsonrpc": "2.0", "id": 7, ...`).
pub(crate) fn too_long(max: usize, id: Value) -> Value {
    error(
        id,
        ErrorCode::INVALID_REQUEST,
        format!(
            "Invalid Request: the request line is longer than the server's limit of {max} bytes (toolbind serve --max-request-bytes)"
        ),
    )
}

/// Checks one request line (without its newline): the message it holds, `None` for a
/// blank line, or the answer to send instead.
pub(crate) fn check_line(line: &[u8]) -> Result<Option<Value>, Value> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let msg: Value = serde_json::from_slice(line).map_err(|e| {
        error(
            Value::Null,
            ErrorCode::PARSE_ERROR,
            format!("Parse error: {e}"),
        )
    })?;
    match check_message(&msg) {
        Verdict::Forward => Ok(Some(msg)),
        Verdict::Reject(answer) => Err(answer),
    }
}

/// Checks one parsed message (a stdio line, an HTTP body): malformed `tools/call` and
/// `tools/list` requests are rejected.
pub(crate) fn check_message(msg: &Value) -> Verdict {
    let Some(obj) = msg.as_object() else {
        return Verdict::Forward;
    };
    let (Some(id), Some(method)) = (obj.get("id"), obj.get("method").and_then(Value::as_str))
    else {
        return Verdict::Forward;
    };
    let params = obj.get("params").unwrap_or(&Value::Null);
    let invalid = |why: String| {
        Verdict::Reject(error(
            id.clone(),
            ErrorCode::INVALID_PARAMS,
            format!("Invalid params: {why}"),
        ))
    };
    match method {
        "tools/call" => {
            let Some(params) = params.as_object() else {
                return invalid("tools/call needs params {name, arguments}".into());
            };
            match params.get("name") {
                Some(Value::String(n)) if !n.is_empty() => {}
                Some(other) => {
                    return invalid(format!(
                        "tools/call `name` must be a tool name, got {}",
                        echo_json(other)
                    ));
                }
                None => return invalid("tools/call needs a `name`".into()),
            }
            match params.get("arguments") {
                None | Some(Value::Null) | Some(Value::Object(_)) => Verdict::Forward,
                Some(other) => invalid(format!(
                    "tools/call `arguments` must be an object, got {}",
                    kind(other)
                )),
            }
        }
        "tools/list" => match params.get("cursor") {
            None | Some(Value::Null) => Verdict::Forward,
            Some(c) => invalid(format!(
                "unknown pagination cursor {}: this server lists every tool on the first page",
                echo_json(c)
            )),
        },
        // 2026-07-28 removed `logging/setLevel`: the level travels in each request's
        // `_meta`. A request of that revision carries its protocol version there.
        "logging/setLevel" if modern(params) => Verdict::Reject(error(
            id.clone(),
            ErrorCode::METHOD_NOT_FOUND,
            "Method not found: logging/setLevel was removed in MCP 2026-07-28; send the log \
             level with each request, in `_meta` as `io.modelcontextprotocol/logLevel`"
                .into(),
        )),
        // rmcp answers params it cannot read with "method not found": a client would
        // conclude the capability is missing. Say what is wrong instead.
        "logging/setLevel" => match params.get("level").and_then(Value::as_str) {
            Some(l) if LOG_LEVELS.contains(&l) => Verdict::Forward,
            _ => invalid(format!(
                "logging/setLevel needs `level`, one of {}; got {}",
                LOG_LEVELS.join(", "),
                params.get("level").map_or("nothing".into(), echo_json)
            )),
        },
        "completion/complete" => match completion_problem(params) {
            None => Verdict::Forward,
            Some(why) => invalid(why),
        },
        "subscriptions/listen" => match listen_problem(params) {
            None => Verdict::Forward,
            Some(why) => invalid(why),
        },
        "prompts/get" => required_string(params, "name", method, invalid),
        "resources/read" => required_string(params, "uri", method, invalid),
        // The tasks extension's methods: rmcp answers params it cannot read with "method
        // not found", which says the extension is missing.
        "tasks/get" | "tasks/cancel" => required_string(params, "taskId", method, invalid),
        "tasks/update" => match params.get("inputResponses") {
            Some(Value::Object(_)) => required_string(params, "taskId", method, invalid),
            Some(other) => invalid(format!(
                "tasks/update `inputResponses` must be an object, got {}",
                kind(other)
            )),
            None => invalid("tasks/update needs `inputResponses`".into()),
        },
        _ => Verdict::Forward,
    }
}

/// Whether a request's params say it is of a revision without `initialize`
/// (2026-07-28 or later): `_meta` names its protocol version. Revisions are dates, so
/// they compare as strings (as rmcp compares them).
fn modern(params: &Value) -> bool {
    params["_meta"]["io.modelcontextprotocol/protocolVersion"]
        .as_str()
        .is_some_and(|v| v >= rmcp::model::ProtocolVersion::NO_INITIALIZE.as_str())
}

/// The MCP log levels, as `logging/setLevel` takes them (RFC 5424's, lower case).
use toolbind::host::LEVELS as LOG_LEVELS;

/// What is wrong with `completion/complete` params, if anything: `ref` must be a prompt
/// (`{type: "ref/prompt", name}`) or a resource template (`{type: "ref/resource", uri}`),
/// and `argument` `{name, value}`, all strings.
fn completion_problem(params: &Value) -> Option<String> {
    let r = &params["ref"];
    let field = match r["type"].as_str() {
        Some("ref/prompt") => "name",
        Some("ref/resource") => "uri",
        _ => {
            return Some(format!(
                "completion/complete `ref` must be {{\"type\": \"ref/prompt\", \"name\"}} or \
                 {{\"type\": \"ref/resource\", \"uri\"}}, got {}",
                if r.is_null() {
                    "nothing".into()
                } else {
                    echo_json(r)
                }
            ));
        }
    };
    if !r[field].is_string() {
        return Some(format!(
            "completion/complete `ref` of type {} needs a string `{field}`",
            echo_json(&r["type"])
        ));
    }
    let a = &params["argument"];
    if !(a["name"].is_string() && a["value"].is_string()) {
        return Some(format!(
            "completion/complete needs `argument` {{\"name\", \"value\"}} (strings), got {}",
            if a.is_null() {
                "nothing".into()
            } else {
                echo_json(a)
            }
        ));
    }
    None
}

/// What is wrong with a `subscriptions/listen`'s resource URIs, if anything: at most
/// [`MAX_SUBSCRIPTIONS`] strings of at most [`MAX_SUBSCRIPTION_URI`] bytes, as for
/// `resources/subscribe` (rmcp would otherwise hold and compare any number of them).
fn listen_problem(params: &Value) -> Option<String> {
    let uris = params["notifications"].get("resourceSubscriptions")?;
    let Some(uris) = uris.as_array() else {
        return Some("subscriptions/listen `resourceSubscriptions` must be a list of URIs".into());
    };
    if uris.len() > MAX_SUBSCRIPTIONS {
        return Some(format!(
            "subscriptions/listen names {} resources: at most {MAX_SUBSCRIPTIONS} may be subscribed to",
            uris.len()
        ));
    }
    match uris
        .iter()
        .find(|u| u.as_str().is_none_or(|u| u.len() > MAX_SUBSCRIPTION_URI))
    {
        Some(u) if u.is_string() => Some(format!(
            "subscriptions/listen names a resource URI of more than {MAX_SUBSCRIPTION_URI} bytes"
        )),
        Some(u) => Some(format!(
            "subscriptions/listen `resourceSubscriptions` must hold URIs (strings), got {}",
            kind(u)
        )),
        None => None,
    }
}

/// Forwards a request whose `params.field` is a string; else `invalid`'s error.
fn required_string(
    params: &Value,
    field: &str,
    method: &str,
    invalid: impl Fn(String) -> Verdict,
) -> Verdict {
    match params.get(field) {
        Some(Value::String(_)) => Verdict::Forward,
        Some(other) => invalid(format!(
            "{method} `{field}` must be a string, got {}",
            kind(other)
        )),
        None => invalid(format!("{method} needs a `{field}`")),
    }
}

use toolbind_codegen::mcp::json_kind as kind;
