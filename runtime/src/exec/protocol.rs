//! The JSON-lines protocol between the runtime and a language harness.
//!
//! One message per line, UTF-8 JSON, on the tool process's fd 3 (a socket; both
//! directions). The runtime sends:
//!
//! - `{"type":"call","id":1,"toolCallId":"...","params":{...}}` — run `execute` once;
//! - `{"type":"abort","id":1}` — fire that call's `AbortSignal`.
//!
//! The harness answers each call with any number of updates and then exactly one
//! result or error:
//!
//! - `{"type":"update","id":1,"content":[{"type":"text","text":"..."}]}` — `onUpdate`;
//! - `{"type":"result","id":1,"result":<what execute returned>}`;
//! - `{"type":"error","id":1,"message":"..."}` — `execute` threw;
//! - `{"type":"fatal","message":"..."}` — the harness cannot serve calls at all (the entry
//!   failed to load or has no `execute`); it exits right after.
//!
//! Lines longer than the configured limit, and anything that is not one of these
//! messages, are protocol errors: the process is killed and its calls fail with a message
//! saying what was received.

use serde::Deserialize;
use serde_json::{Map, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::result::{Content, Progress, ToolResult};

/// A message from a harness.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum FromHarness {
    Update {
        id: u64,
        #[serde(default)]
        content: Value,
    },
    Result {
        id: u64,
        #[serde(default)]
        result: Value,
    },
    Error {
        id: u64,
        message: String,
    },
    Fatal {
        message: String,
    },
}

/// The `call` line for one call.
pub(crate) fn call_line(id: u64, tool_call_id: &str, params: &Map<String, Value>) -> Vec<u8> {
    let msg = serde_json::json!({
        "type": "call",
        "id": id,
        "toolCallId": tool_call_id,
        "params": params,
    });
    let mut line = serde_json::to_vec(&msg).unwrap_or_default();
    line.push(b'\n');
    line
}

/// The `abort` line for one call.
pub(crate) fn abort_line(id: u64) -> Vec<u8> {
    format!("{{\"type\":\"abort\",\"id\":{id}}}\n").into_bytes()
}

/// Why reading a line failed.
#[derive(Debug)]
pub(crate) enum LineError {
    TooLong(usize),
    Io(std::io::Error),
}

/// Reads one `\n`-terminated line of at most `max` bytes; `Ok(None)` at end of stream.
/// A final line without a newline is returned as is.
pub(crate) async fn read_line(
    reader: &mut (impl AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
    max: usize,
) -> Result<Option<()>, LineError> {
    line.clear();
    loop {
        let buf = reader.fill_buf().await.map_err(LineError::Io)?;
        if buf.is_empty() {
            return Ok((!line.is_empty()).then_some(()));
        }
        let (chunk, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], i + 1),
            None => (buf, buf.len()),
        };
        if line.len() + chunk.len() > max {
            return Err(LineError::TooLong(max));
        }
        line.extend_from_slice(chunk);
        let found = done > chunk.len();
        reader.consume(done);
        if found {
            return Ok(Some(()));
        }
    }
}

/// A short, printable preview of bytes that failed to parse.
pub(crate) fn preview(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(120)]);
    let mut s: String = text.chars().filter(|c| !c.is_control()).collect();
    if bytes.len() > 120 {
        s.push_str("...");
    }
    s
}

/// Turns what `execute` returned into a [`ToolResult`]: `{content, details?, isError?}` as
/// seed 000 says, or a bare string as shorthand for one text block. Text is capped at
/// `max_text` bytes in total, with a note saying how much was cut.
pub(crate) fn normalize_result(value: Value, max_text: usize) -> ToolResult {
    let mut result = match value {
        Value::String(s) => ToolResult::text(s),
        Value::Object(mut obj) => match obj.remove("content") {
            Some(Value::Array(items)) => ToolResult {
                content: items.into_iter().map(content_block).collect(),
                details: obj.remove("details").filter(|d| !d.is_null()),
                is_error: matches!(obj.get("isError"), Some(Value::Bool(true))),
                terminate: matches!(obj.get("terminate"), Some(Value::Bool(true))),
            },
            Some(other) => {
                return ToolResult::error(format!(
                    "the tool returned `content` as {}, expected an array of {{type, text}} blocks",
                    kind(&other)
                ));
            }
            None => {
                return ToolResult::error(
                    "the tool returned an object without `content`; expected {content: [{type: \"text\", text}]}",
                );
            }
        },
        other => {
            return ToolResult::error(format!(
                "the tool returned {}; expected {{content: [{{type: \"text\", text}}]}} or a string",
                kind(&other)
            ));
        }
    };
    cap_text(&mut result.content, max_text);
    result
}

/// Progress content from an `update` message: an array of blocks, a `{content}` object or
/// a string.
pub(crate) fn normalize_progress(value: Value, max_text: usize) -> Progress {
    let mut content = match value {
        Value::Array(items) => items.into_iter().map(content_block).collect(),
        Value::Object(mut obj) => match obj.remove("content") {
            Some(Value::Array(items)) => items.into_iter().map(content_block).collect(),
            Some(other) => vec![content_block(other)],
            None => vec![content_block(Value::Object(obj))],
        },
        Value::String(s) => vec![Content::text(s)],
        Value::Null => Vec::new(),
        other => vec![content_block(other)],
    };
    cap_text(&mut content, max_text);
    Progress { content }
}

fn content_block(v: Value) -> Content {
    match v {
        Value::String(s) => Content::text(s),
        Value::Object(ref obj) => {
            if let Ok(c) = serde_json::from_value::<Content>(v.clone()) {
                return c;
            }
            match obj.get("text") {
                Some(Value::String(t)) => Content::text(t.clone()),
                _ => Content::text(v.to_string()),
            }
        }
        other => Content::text(other.to_string()),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing (undefined/None)",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Caps the total text of `content` at `max` bytes (on a char boundary) and appends a note.
pub(crate) fn cap_text(content: &mut Vec<Content>, max: usize) {
    let mut budget = max;
    let mut cut = 0usize;
    for block in content.iter_mut() {
        if let Content::Text { text } = block {
            if text.len() <= budget {
                budget -= text.len();
            } else {
                let mut end = budget;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                cut += text.len() - end;
                text.truncate(end);
                budget = 0;
            }
        }
    }
    if cut > 0 {
        content.push(Content::text(format!(
            "[output truncated by the runtime: {cut} more bytes were cut; limit {max} bytes]"
        )));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_normalise() {
        let r = normalize_result(
            json!({"content": [{"type": "text", "text": "hi"}], "isError": true, "details": {"a": 1}}),
            100,
        );
        assert_eq!(r.text_content(), "hi");
        assert!(r.is_error);
        assert_eq!(r.details, Some(json!({"a": 1})));
        assert_eq!(
            normalize_result(json!("plain"), 100),
            ToolResult::text("plain")
        );
        assert!(normalize_result(Value::Null, 100).is_error);
        assert!(normalize_result(json!({"text": "x"}), 100).is_error);
    }

    #[test]
    fn text_is_capped_with_a_note() {
        let r = normalize_result(json!("é".repeat(10)), 5);
        assert_eq!(r.content[0].as_text(), Some("éé"));
        assert!(r.content[1].as_text().unwrap().contains("16 more bytes"));
    }

    #[tokio::test]
    async fn lines_are_bounded() {
        let data: &[u8] = b"short\nthis line is far too long\nlast";
        let mut r = tokio::io::BufReader::with_capacity(4, data);
        let mut line = Vec::new();
        assert!(read_line(&mut r, &mut line, 10).await.unwrap().is_some());
        assert_eq!(line, b"short");
        assert!(matches!(
            read_line(&mut r, &mut line, 10).await,
            Err(LineError::TooLong(10))
        ));
    }
}
