//! The stdio wire of `toolbind serve`: every request line is answered, even one the MCP
//! library would drop or misreport.
//!
//! Lines from stdin are checked before the MCP service sees them:
//!
//! - a line over the request limit (`--max-request-bytes`, default 16 MiB) is discarded
//!   without being held in memory and answered with `-32600` naming the limit;
//! - a line that is not JSON is answered with `-32700`;
//! - `tools/call` without a string `name`, or with `arguments` that are not an object, and
//!   a `tools/list` with a pagination cursor (this server has one page) are answered with
//!   `-32602`, carrying the request's id.
//!
//! Each rejection is logged on stderr. Everything else goes on to the service. One task
//! writes stdout, whole lines at a time, so a rejection never lands inside a response.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The default of `--max-request-bytes`.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 16 << 20;

/// What to do with one request line.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Pass it to the MCP service.
    Forward,
    /// Nothing to do (a blank line).
    Skip,
    /// Answer with this JSON-RPC error response.
    Reject(Value),
}

fn error(id: Value, code: i64, message: String) -> Verdict {
    Verdict::Reject(
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
    )
}

/// The answer to a line over the limit, with the request's id when the line's start shows
/// it (`{"jsonrpc": "2.0", "id": 7, ...`).
pub fn too_long(max: usize, id: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message": format!(
        "Invalid Request: the request line is longer than the server's limit of {max} bytes (toolbind serve --max-request-bytes)"
    )}})
}

/// Checks one request line (without its newline).
pub fn check(line: &[u8]) -> Verdict {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let msg: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => return error(Value::Null, -32700, format!("Parse error: {e}")),
    };
    check_message(&msg)
}

/// Checks one parsed message (a stdio line, an HTTP body): malformed `tools/call` and
/// `tools/list` requests are rejected.
pub fn check_message(msg: &Value) -> Verdict {
    let Some(obj) = msg.as_object() else {
        return Verdict::Forward;
    };
    let (Some(id), Some(method)) = (obj.get("id"), obj.get("method").and_then(Value::as_str))
    else {
        return Verdict::Forward;
    };
    let params = obj.get("params").unwrap_or(&Value::Null);
    let invalid = |why: String| error(id.clone(), -32602, format!("Invalid params: {why}"));
    match method {
        "tools/call" => {
            let Some(params) = params.as_object() else {
                return invalid("tools/call needs params {name, arguments}".into());
            };
            match params.get("name") {
                Some(Value::String(n)) if !n.is_empty() => {}
                Some(other) => {
                    return invalid(format!(
                        "tools/call `name` must be a tool name, got {other}"
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
                "unknown pagination cursor {c}: this server lists every tool on the first page"
            )),
        },
        // rmcp answers params it cannot read with "method not found": a client would
        // conclude the capability is missing. Say what is wrong instead.
        "logging/setLevel" => match params.get("level").and_then(Value::as_str) {
            Some(l) if LOG_LEVELS.contains(&l) => Verdict::Forward,
            _ => invalid(format!(
                "logging/setLevel needs `level`, one of {}; got {}",
                LOG_LEVELS.join(", "),
                params
                    .get("level")
                    .map_or("nothing".into(), Value::to_string)
            )),
        },
        "prompts/get" => required_string(params, "name", method, invalid),
        "resources/read" => required_string(params, "uri", method, invalid),
        _ => Verdict::Forward,
    }
}

/// The MCP log levels, as `logging/setLevel` takes them (RFC 5424's, lower case).
const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

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

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Connects `input`/`output` (stdin/stdout) to the MCP service through the checks above.
/// Returns the service's ends (what it reads, what it writes) and the writer task, which
/// ends once the service's output and the rejections are all written.
pub fn connect(
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
    max: usize,
    log: fn(&str),
) -> (DuplexStream, DuplexStream, JoinHandle<()>) {
    let (service_in, mut to_service) = tokio::io::duplex(64 * 1024);
    let (from_service, service_out) = tokio::io::duplex(64 * 1024);
    let (rejects, mut rejected) = mpsc::channel::<Value>(16);
    tokio::spawn(async move {
        let mut input = BufReader::with_capacity(64 * 1024, input);
        let mut line = Vec::new();
        loop {
            match read_line(&mut input, &mut line, max).await {
                Ok(Line::Eof) | Err(_) => break,
                Ok(Line::TooLong(n)) => {
                    log(&format!(
                        "rejected a request line of {n} bytes or more: over the {max}-byte limit (--max-request-bytes)"
                    ));
                    if rejects
                        .send(too_long(max, salvage_id(&line)))
                        .await
                        .is_err()
                    {
                        break;
                    }
                }
                Ok(Line::Full) => match check(&line) {
                    Verdict::Skip => {}
                    Verdict::Forward => {
                        line.push(b'\n');
                        if to_service.write_all(&line).await.is_err() {
                            break;
                        }
                    }
                    Verdict::Reject(answer) => {
                        log(&format!(
                            "rejected a request: {}",
                            answer["error"]["message"].as_str().unwrap_or_default()
                        ));
                        if rejects.send(answer).await.is_err() {
                            break;
                        }
                    }
                },
            }
        }
        let _ = to_service.shutdown().await;
    });
    let writer = tokio::spawn(async move {
        let mut output = output;
        let mut from_service = BufReader::with_capacity(64 * 1024, from_service);
        let mut out_line = Vec::new();
        let mut service_open = true;
        loop {
            tokio::select! {
                n = from_service.read_until(b'\n', &mut out_line), if service_open => {
                    match n {
                        Ok(0) | Err(_) => service_open = false,
                        Ok(_) => {
                            if output.write_all(&out_line).await.is_err() {
                                return;
                            }
                            out_line.clear();
                            let _ = output.flush().await;
                        }
                    }
                }
                answer = rejected.recv() => match answer {
                    Some(answer) => {
                        let mut bytes = serde_json::to_vec(&answer).unwrap_or_default();
                        bytes.push(b'\n');
                        if output.write_all(&bytes).await.is_err() {
                            return;
                        }
                        let _ = output.flush().await;
                    }
                    None if !service_open => return,
                    None => {
                        // No more rejections; keep relaying the service's output.
                        while let Ok(n) = from_service.read_until(b'\n', &mut out_line).await {
                            if n == 0 || output.write_all(&out_line).await.is_err() {
                                break;
                            }
                            out_line.clear();
                            let _ = output.flush().await;
                        }
                        return;
                    }
                },
            }
        }
    });
    (service_in, service_out, writer)
}

/// How much of an over-long line is kept to find its id.
const PREFIX: usize = 1024;

/// The value of the first `"id"` key in `prefix` if it is a number or a simple string,
/// else null.
fn salvage_id(prefix: &[u8]) -> Value {
    let text = String::from_utf8_lossy(prefix);
    let Some(at) = text.find("\"id\"") else {
        return Value::Null;
    };
    let rest = text[at + 4..].trim_start();
    let Some(rest) = rest.strip_prefix(':') else {
        return Value::Null;
    };
    let rest = rest.trim_start();
    if let Some(s) = rest.strip_prefix('"') {
        return match s.find(['"', '\\']) {
            Some(end) if s.as_bytes()[end] == b'"' => Value::String(s[..end].to_owned()),
            _ => Value::Null,
        };
    }
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '-'))
        .unwrap_or(rest.len());
    rest[..end].parse::<i64>().map_or(Value::Null, Value::from)
}

enum Line {
    Full,
    TooLong(usize),
    Eof,
}

/// Reads one line into `line` (cleared first); a line over `max` bytes is consumed to its
/// end without being kept.
async fn read_line(
    input: &mut (impl tokio::io::AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    line.clear();
    let mut over: Option<usize> = None;
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(match over {
                Some(n) => Line::TooLong(n),
                None if line.is_empty() => Line::Eof,
                None => Line::Full,
            });
        }
        let (chunk, used, found) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        match &mut over {
            Some(n) => *n += chunk.len(),
            None if line.len() + chunk.len() > max => {
                over = Some(line.len() + chunk.len());
                // Only the start is kept, to find the request's id in.
                let room = PREFIX.saturating_sub(line.len());
                line.extend_from_slice(&chunk[..room.min(chunk.len())]);
                line.truncate(PREFIX);
                line.shrink_to(64 * 1024);
            }
            None => line.extend_from_slice(chunk),
        }
        input.consume(used);
        if found {
            return Ok(match over {
                Some(n) => Line::TooLong(n),
                None => Line::Full,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(v: &Verdict) -> Option<(i64, Value)> {
        match v {
            Verdict::Reject(a) => Some((a["error"]["code"].as_i64().unwrap(), a["id"].clone())),
            _ => None,
        }
    }

    #[test]
    fn requests_are_checked() {
        assert_eq!(code(&check(b"not json")), Some((-32700, Value::Null)));
        assert_eq!(
            code(&check(
                br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}"#
            )),
            Some((-32602, json!(7)))
        );
        assert_eq!(
            code(&check(
                br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":[1]}}"#
            )),
            Some((-32602, json!("a")))
        );
        assert_eq!(
            code(&check(
                br#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"cursor":"zzz"}}"#
            )),
            Some((-32602, json!(9)))
        );
        assert_eq!(
            check(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#),
            Verdict::Forward
        );
        assert_eq!(check(b"  "), Verdict::Skip);
        // Bad params of the other methods served: -32602 naming the problem, not rmcp's
        // "method not found".
        for bad in [
            r#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"loud"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":5}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":1}}"#,
        ] {
            assert_eq!(
                code(&check(bad.as_bytes())),
                Some((-32602, json!(3))),
                "{bad}"
            );
        }
        for good in [
            r#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"warning"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"system_prompt"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"toolbind://tools/x"}}"#,
        ] {
            assert_eq!(check(good.as_bytes()), Verdict::Forward, "{good}");
        }
    }

    #[test]
    fn the_id_of_an_over_long_line_is_found_at_its_start() {
        assert_eq!(
            salvage_id(br#"{"jsonrpc":"2.0","id":42,"method":"x","#),
            json!(42)
        );
        assert_eq!(
            salvage_id(br#"{"jsonrpc":"2.0", "id" : "r-1", "#),
            json!("r-1")
        );
        assert_eq!(
            salvage_id(br#"{"jsonrpc":"2.0","method":"x","#),
            Value::Null
        );
    }
}
