//! The JSON-lines protocol between the runtime and a language harness.
//!
//! One message per line, UTF-8 JSON, on the tool process's fd 3 (a socket; both
//! directions). The protocol is versioned ([`PROTOCOL_VERSION`]): once the entry has
//! loaded, the harness's first message is
//!
//! - `{"type":"hello","protocol":4,"capabilities":{"prepare":true}}` — the protocol version
//!   it speaks and what the entry offers, found by the harness itself: `prepare` is whether
//!   the entry exports a callable `prepareArguments` (`prepare_arguments` in python). A
//!   capability that is absent is not offered; capability keys the runtime does not know
//!   are ignored (a newer harness may offer more);
//!
//! or a `fatal` (below) when the entry cannot load. A first message of another kind, a
//! second `hello`, or a version the runtime does not speak is a protocol error. Later
//! versions add message kinds and capabilities; they never give an existing message
//! another meaning. The runtime may send before the hello arrives (the harness reads its
//! input only after sending it). The runtime sends:
//!
//! - `{"type":"call","id":1,"toolCallId":"...","params":{...}}` — run `execute` once;
//! - `{"type":"abort","id":1}` — fire that call's `AbortSignal` (and reject what its
//!   `ctx` still waits for);
//! - (version 4) `{"type":"answer","id":1,"ask":0,"result":<value>}` or
//!   `{"type":"answer","id":1,"ask":0,"error":"..."}` — the answer to the call's question
//!   `ask` (below);
//! - `{"type":"prepare","id":2,"args":<raw arguments>}` — run the entry's
//!   `prepareArguments(args)` (the Pi tool API; `prepare_arguments` in python), answered with
//!   `{"type":"prepared","id":2,"args":<its return value>}` (the arguments unchanged when
//!   the entry has none) or an `error`. Sent only to a harness whose hello offered
//!   `prepare`.
//!
//! The harness answers each call with any number of updates and then exactly one
//! result or error:
//!
//! - `{"type":"update","id":1,"content":[{"type":"text","text":"..."}]}` — `onUpdate`;
//! - `{"type":"data","id":1,"ref":0,"data":"<base64 text>","size":<n>}` — (version 2) a
//!   piece of a long base64 string of the coming result (an image's or audio's `data`, a
//!   resource's `blob`), in order, the first one carrying the whole string's length as
//!   `size`; the result then holds `{"ref":0}` in that field. A string longer
//!   than the line limit travels this way, and the runtime bounds it apart from text
//!   (`ExecConfig::max_binary_bytes`), saving one over the bound to the spill folder as
//!   its pieces arrive (exec/blobs.rs);
//! - `{"type":"result","id":1,"result":<what execute returned>}`;
//! - (version 3) an `update` or `result` whose text the harness cut carries `cut`:
//!   `{"kind":"chars","cut":<characters cut>,"limit":<characters kept in all>}`, or for a
//!   message over the line limit that the harness shrank to its text,
//!   `{"kind":"message","message":"result","bytes":<its size>,"limit":<line limit>,"kept":<characters kept>}`.
//!   The runtime writes the note the model reads ([`note`]) and knows it for its own
//!   (`ToolResult::runtime_notes`), so no text a tool returns passes for one;
//! - (version 4) `{"type":"ask","id":1,"ask":0,"kind":"confirm"|"elicit"|"sample"|"roots","params":{...}}`
//!   — a question the tool asks through `ctx` (`execute`'s fifth argument), numbered per
//!   call, with `"key":"..."` when the tool named it; at most [`MAX_QUESTIONS`](crate::host::MAX_QUESTIONS) open at once, one more is
//!   refused at once. The call's timeout stands still while one is open;
//! - (version 4) `{"type":"notify","id":1,"level":"info","text":"..."}` — `ctx.notify`;
//! - (version 4) `{"type":"waiting","id":1}` — the tool asked, and now waits for an
//!   answer (node: its event loop went idle; python: it awaits or blocks on one): a hint
//!   for hosts that gather questions;
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

use super::blobs::{Binary, Kept, file_url};
use super::error::Malformed;
use crate::result::{
    Content, EmbeddedResource, Progress, ResourceContents, ResourceLink, StopReason, ToolResult,
};

/// The protocol version this runtime speaks: the only one a harness's hello may carry.
pub(crate) const PROTOCOL_VERSION: u64 = 4;

/// What a harness's hello says the entry offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Capabilities {
    /// The entry exports a callable `prepareArguments` (`prepare_arguments`).
    pub prepare: bool,
}

/// A message from a harness.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum FromHarness {
    /// The first message: checked by [`hello`].
    Hello {
        #[serde(default)]
        protocol: Value,
        #[serde(default)]
        capabilities: Value,
    },
    Update {
        id: u64,
        #[serde(default)]
        content: Value,
        #[serde(default)]
        cut: Option<Cut>,
    },
    Result {
        id: u64,
        #[serde(default)]
        result: Value,
        #[serde(default)]
        cut: Option<Cut>,
    },
    Error {
        id: u64,
        message: String,
        /// Set by the runtime, never sent: the call's message could not be read (not
        /// JSON), so this is a protocol error, not the tool's own.
        #[serde(skip)]
        salvaged: bool,
    },
    Fatal {
        message: String,
    },
    /// The answer to a `prepare` line: the arguments `prepareArguments` returned.
    Prepared {
        id: u64,
        #[serde(default)]
        args: Value,
    },
    /// (version 4) A question the tool asks during call `id` (`ctx.confirm`, `elicit`,
    /// `sample`, `roots`), number `ask` of that call; answered with an `answer` line.
    Ask {
        id: u64,
        ask: u64,
        kind: String,
        #[serde(default)]
        params: Value,
        /// The question's name, when the tool gave one (`{key}`): checked by
        /// [`host::answer`](crate::host).
        #[serde(default)]
        key: Option<Value>,
    },
    /// (version 4) The tool of call `id` asked and now waits for an answer.
    Waiting {
        id: u64,
    },
    /// (version 4) `ctx.notify(text, level)` during call `id`: no answer.
    Notify {
        id: u64,
        #[serde(default)]
        level: Value,
        #[serde(default)]
        text: Value,
    },
    /// A piece of a long base64 string of call `id`'s result, sent ahead of it; the
    /// result names the whole as `{"ref": <ref>}`.
    Data {
        id: u64,
        #[serde(rename = "ref")]
        index: u64,
        data: String,
        /// On the first piece: the whole string's length, so the runtime can save a block
        /// that will not fit from its first byte (and hold one that will without regrowing).
        #[serde(default)]
        size: Option<u64>,
    },
}

impl FromHarness {
    /// The message's `type`, for errors.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            FromHarness::Hello { .. } => "hello",
            FromHarness::Update { .. } => "update",
            FromHarness::Result { .. } => "result",
            FromHarness::Error { .. } => "error",
            FromHarness::Fatal { .. } => "fatal",
            FromHarness::Prepared { .. } => "prepared",
            FromHarness::Data { .. } => "data",
            FromHarness::Ask { .. } => "ask",
            FromHarness::Notify { .. } => "notify",
            FromHarness::Waiting { .. } => "waiting",
        }
    }
}

/// Checks a hello's protocol version and reads its capabilities: a version other than
/// [`PROTOCOL_VERSION`] (a harness from another toolbind version) or a known capability
/// of the wrong type is a protocol error naming what was received; unknown capability
/// keys are ignored. `label` is "node" or "python".
pub(crate) fn hello(
    label: &'static str,
    protocol: &Value,
    capabilities: &Value,
) -> Result<Capabilities, HelloError> {
    match protocol.as_u64() {
        Some(PROTOCOL_VERSION) => {}
        Some(v) => return Err(HelloError::Version { label, speaks: v }),
        None => {
            return Err(HelloError::NoVersion {
                label,
                got: preview(protocol.to_string().as_bytes()),
            });
        }
    }
    let caps = match capabilities {
        Value::Null => return Ok(Capabilities::default()),
        Value::Object(caps) => caps,
        other => {
            return Err(HelloError::Capabilities {
                label,
                got: kind(other),
            });
        }
    };
    let prepare = match caps.get("prepare") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(HelloError::Prepare {
                label,
                got: kind(other),
            });
        }
    };
    Ok(Capabilities { prepare })
}

/// A harness's hello this runtime cannot take (`label` is "node" or "python").
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HelloError {
    /// Another protocol version: a harness from another toolbind version.
    Version { label: &'static str, speaks: u64 },
    /// No version at all (`got` is what `protocol` held, shortened).
    NoVersion { label: &'static str, got: String },
    /// `capabilities` is not an object.
    Capabilities {
        label: &'static str,
        got: &'static str,
    },
    /// `capabilities.prepare` is not a boolean.
    Prepare {
        label: &'static str,
        got: &'static str,
    },
}

impl std::fmt::Display for HelloError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HelloError::Version { label, speaks } => write!(
                f,
                "protocol error: the {label} harness speaks protocol version {speaks}, and this runtime speaks version {PROTOCOL_VERSION}; the harness is from another toolbind version"
            ),
            HelloError::NoVersion { label, got } => write!(
                f,
                "protocol error: the {label} harness's hello carries no protocol version (`protocol` is {got}); this runtime speaks version {PROTOCOL_VERSION}"
            ),
            HelloError::Capabilities { label, got } => write!(
                f,
                "protocol error: the {label} harness's hello carries `capabilities` as {got}, expected an object"
            ),
            HelloError::Prepare { label, got } => write!(
                f,
                "protocol error: the {label} harness's hello carries the `prepare` capability as {got}, expected a boolean"
            ),
        }
    }
}

/// The `prepare` line: run the entry's `prepareArguments` (node) or `prepare_arguments`
/// (python) on a model's raw arguments; the harness answers with `prepared` or `error`.
pub(crate) fn prepare_line(id: u64, args: &Value) -> Vec<u8> {
    let msg = serde_json::json!({"type": "prepare", "id": id, "args": args});
    let mut line = serde_json::to_vec(&msg).unwrap_or_default();
    line.push(b'\n');
    line
}

/// The `call` line for one call.
pub(crate) fn call_line(
    id: u64,
    tool_call_id: &str,
    params: &Map<String, Value>,
    trace: Option<&crate::telemetry::TraceContext>,
) -> Vec<u8> {
    let mut msg = serde_json::json!({
        "type": "call",
        "id": id,
        "toolCallId": tool_call_id,
        "params": params,
    });
    // The call's W3C trace context, for the harness to hand the tool (`carrier()`).
    if let Some(t) = trace {
        msg["trace"] = serde_json::json!({"traceparent": t.traceparent});
        if let Some(state) = &t.tracestate {
            msg["trace"]["tracestate"] = Value::String(state.clone());
        }
    }
    let mut line = serde_json::to_vec(&msg).unwrap_or_default();
    line.push(b'\n');
    line
}

/// The `abort` line for one call.
/// The answer to question `ask` of call `id`: what the tool's promise resolves to, or why
/// it rejects.
pub(crate) fn answer_line(id: u64, ask: u64, answer: Result<Value, String>) -> Vec<u8> {
    let msg = match answer {
        Ok(result) => serde_json::json!({"type": "answer", "id": id, "ask": ask, "result": result}),
        Err(error) => serde_json::json!({"type": "answer", "id": id, "ask": ask, "error": error}),
    };
    let mut line = serde_json::to_vec(&msg).unwrap_or_default();
    line.push(b'\n');
    line
}

pub(crate) fn abort_line(id: u64) -> Vec<u8> {
    format!("{{\"type\":\"abort\",\"id\":{id}}}\n").into_bytes()
}

/// Why reading a line failed.
#[derive(Debug)]
pub(crate) enum LineError {
    TooLong(usize),
    Io(std::io::Error),
}

/// Reads one `\n`-terminated line of at most `max` bytes into `line` (which the caller
/// clears after each line); `Ok(None)` at end of stream. A final line without a newline is
/// returned as is.
///
/// Cancel-safe: bytes are moved into `line` and consumed in one synchronous step, so a
/// `select!` that drops this future loses nothing; calling again continues the line.
pub(crate) async fn read_line(
    reader: &mut (impl AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
    max: usize,
) -> Result<Option<()>, LineError> {
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

/// The kind and call id of a line that is not valid JSON, read from its start: both
/// harnesses write `{"type": "<kind>", "id": <n>, ...` first. A result Python could not
/// encode (NaN, an integer beyond the range of a double) is then charged to its own call
/// instead of breaking the worker.
pub(crate) fn salvage_id(line: &[u8]) -> Option<(&str, u64)> {
    let text = std::str::from_utf8(&line[..line.len().min(200)])
        .or_else(|e| std::str::from_utf8(&line[..e.valid_up_to()]))
        .ok()?;
    let rest = text.trim_start().strip_prefix('{')?.trim_start();
    let rest = rest
        .strip_prefix("\"type\"")?
        .trim_start()
        .strip_prefix(':')?;
    let rest = rest.trim_start().strip_prefix('"')?;
    let (kind, rest) = rest.split_once('"')?;
    if !matches!(kind, "update" | "result" | "error") {
        return None;
    }
    let rest = rest.trim_start().strip_prefix(',')?.trim_start();
    let rest = rest
        .strip_prefix("\"id\"")?
        .trim_start()
        .strip_prefix(':')?;
    let rest = rest.trim_start();
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let id = rest[..digits].parse().ok()?;
    let after = rest[digits..].trim_start();
    (after.starts_with(',') || after.starts_with('}')).then_some((kind, id))
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

/// [`normalize_result_with`], every binary block kept in memory (tests).
#[cfg(test)]
pub(crate) fn normalize_result(value: Value, max_text: usize) -> ToolResult {
    normalize_result_with(value, max_text, &mut Binary::unbounded())
}

/// Turns what `execute` returned into a [`ToolResult`]: `{content, details?, isError?}` as
/// the platform's TOOLS.md says, or a bare string as shorthand for one text block. Text is
/// capped at `max_text` bytes in total, with a note saying how much was cut. Binary data
/// (sent ahead in pieces, or inline) is kept within `binary`'s bound, the rest saved to
/// its spill folder as `resource_link`s.
pub(crate) fn normalize_result_with(
    value: Value,
    max_text: usize,
    binary: &mut Binary<'_>,
) -> ToolResult {
    let mut result = match value {
        Value::String(s) => ToolResult::text(s),
        Value::Object(mut obj) => match obj.remove("content") {
            Some(Value::Array(items)) => ToolResult {
                content: items
                    .into_iter()
                    .map(|b| content_block(b, binary))
                    .collect(),
                details: obj.remove("details").filter(|d| !d.is_null()),
                is_error: match obj.get("isError") {
                    None | Some(Value::Null) => false,
                    Some(Value::Bool(b)) => *b,
                    // `"true"` or `1` is not success: the tool meant something; say what.
                    Some(other) => {
                        return ToolResult::stopped(
                            StopReason::ProtocolError,
                            format!(
                                "malformed result: the tool returned `isError` as {} ({}), expected a boolean (true or false)",
                                kind(other),
                                preview(other.to_string().as_bytes())
                            ),
                        );
                    }
                },
                terminate: matches!(obj.get("terminate"), Some(Value::Bool(true))),
                stop: StopReason::Completed,
                output_check: Default::default(),
                runtime_notes: Default::default(),
            },
            Some(other) => {
                return ToolResult::stopped(
                    StopReason::ProtocolError,
                    format!(
                        "the tool returned `content` as {}, expected an array of {{type, text}} blocks",
                        kind(&other)
                    ),
                );
            }
            None => {
                return ToolResult::stopped(
                    StopReason::ProtocolError,
                    "the tool returned an object without `content`; expected {content: [{type: \"text\", text}]}",
                );
            }
        },
        other => {
            return ToolResult::stopped(
                StopReason::ProtocolError,
                format!(
                    "the tool returned {}; expected {{content: [{{type: \"text\", text}}]}} or a string",
                    kind(&other)
                ),
            );
        }
    };
    if result.is_error {
        result.stop = StopReason::ToolError;
    }
    cap_result(&mut result, max_text);
    result
}

/// Progress content from an `update` message: an array of blocks, a `{content}` object or
/// a string. An object may also carry `progress` and `total` (finite numbers, `progress
/// >= 0`, `total > 0`); anything else in those fields is ignored.
pub(crate) fn normalize_progress(value: Value, max_text: usize) -> Progress {
    let mut progress = None;
    let mut total = None;
    let content = match value {
        Value::Array(items) => items
            .into_iter()
            .map(|b| content_block(b, &mut Binary::unbounded()))
            .collect(),
        Value::Object(mut obj) => {
            progress = obj
                .remove("progress")
                .and_then(|v| v.as_f64())
                .filter(|p| p.is_finite() && *p >= 0.0);
            total = obj
                .remove("total")
                .and_then(|v| v.as_f64())
                .filter(|t| t.is_finite() && *t > 0.0);
            match obj.remove("content") {
                Some(Value::Array(items)) => items
                    .into_iter()
                    .map(|b| content_block(b, &mut Binary::unbounded()))
                    .collect(),
                Some(other) => vec![content_block(other, &mut Binary::unbounded())],
                // `{progress, total}` alone: a position without text.
                None if obj.is_empty() => Vec::new(),
                None => vec![content_block(Value::Object(obj), &mut Binary::unbounded())],
            }
        }
        Value::String(s) => vec![Content::text(s)],
        Value::Null => Vec::new(),
        other => vec![content_block(other, &mut Binary::unbounded())],
    };
    let mut p = Progress {
        content,
        progress,
        total,
    };
    cap_progress(&mut p, max_text);
    p
}

/// A bash tool's fd 3 line as progress: a JSON object with a numeric `progress` (and
/// optionally `total` and `text`) is a position; any other line is plain text.
pub(crate) fn progress_line(line: String, max_text: usize) -> Progress {
    if line.trim_start().starts_with('{')
        && let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(&line)
        && obj.get("progress").is_some_and(Value::is_number)
    {
        return normalize_progress(Value::Object(obj), max_text);
    }
    normalize_progress(Value::String(line), max_text)
}

/// A [`Malformed`] from a format string.
macro_rules! bad {
    ($($t:tt)*) => {
        Malformed(format!($($t)*))
    };
}

/// One content block as a tool returned it. A well-formed block is kept as it is; a block
/// whose meaning is clear is repaired (base64 with a `data:` prefix, line breaks, the
/// URL-safe alphabet or no padding; a missing `mimeType` the `data:` prefix names); any
/// other is replaced by a text block saying what was wrong, holding the block's JSON, so
/// nothing the tool returned is dropped without a word.
fn content_block(v: Value, binary: &mut Binary<'_>) -> Content {
    match v {
        Value::String(s) => Content::text(s),
        Value::Object(mut obj) => match checked_block(&mut obj, binary) {
            Ok(c) => c,
            Err(why) => {
                let json = Value::Object(obj).to_string();
                Content::text(format!("[toolbind: {why}; kept as its JSON] {json}"))
            }
        },
        other => Content::text(other.to_string()),
    }
}

fn checked_block(
    obj: &mut Map<String, Value>,
    binary: &mut Binary<'_>,
) -> Result<Content, Malformed> {
    let ty = match obj.get("type") {
        Some(Value::String(t)) => t.clone(),
        // A `{text}` object without a type: the platform's older tools write that.
        None if matches!(obj.get("text"), Some(Value::String(_))) => "text".to_owned(),
        None => return Err("a content block without `type`".into()),
        Some(other) => return Err(bad!("a content block whose `type` is {}", kind(other))),
    };
    match ty.as_str() {
        "text" => match obj.remove("text") {
            Some(Value::String(text)) => Ok(Content::Text { text }),
            other => {
                if let Some(o) = other {
                    obj.insert("text".into(), o);
                }
                Err("a text block without a string `text`".into())
            }
        },
        "image" | "audio" => {
            let what = format!("an {ty} block");
            let declared = match obj.get("mimeType") {
                Some(Value::String(m)) if !m.trim().is_empty() => Some(m.clone()),
                _ => None,
            };
            let example = if ty == "image" {
                "image/png"
            } else {
                "audio/wav"
            };
            let no_mime = || format!("{what} without `mimeType` (e.g. \"{example}\")");
            match binary_field(obj.get_mut("data"), declared.as_deref(), binary)
                .map_err(|e| bad!("{what} whose `data` {e}"))?
            {
                Field::Missing => Err(bad!("{what} without base64 `data`")),
                Field::Inline(data, prefix_mime) => {
                    let Some(mime_type) = declared.or(prefix_mime) else {
                        // The block's JSON is kept in the note: the data goes back.
                        obj.insert("data".into(), Value::String(data));
                        return Err(no_mime().into());
                    };
                    Ok(if ty == "image" {
                        Content::Image { data, mime_type }
                    } else {
                        Content::Audio { data, mime_type }
                    })
                }
                Field::Spilled {
                    path,
                    bytes,
                    prefix_mime,
                } => {
                    let mime_type = declared.or(prefix_mime).ok_or_else(|| {
                        format!("{}; its data is saved to {}", no_mime(), path.display())
                    })?;
                    Ok(spilled_link(&path, bytes, mime_type, &what, binary.bound))
                }
            }
        }
        "resource" => {
            let Some(Value::Object(r)) = obj.get_mut("resource") else {
                return Err("a resource block without a `resource` object".into());
            };
            let uri = match r.get("uri") {
                Some(Value::String(u)) if is_uri(u) => u.clone(),
                Some(Value::String(_)) => return Err("a resource whose `uri` is not a URI (it needs a scheme, e.g. file:///report.pdf)".into()),
                _ => return Err("a resource without `uri`".into()),
            };
            let mime_type = match r.get("mimeType") {
                Some(Value::String(m)) => Some(m.clone()),
                None | Some(Value::Null) => None,
                Some(_) => return Err("a resource whose `mimeType` is not a string".into()),
            };
            let contents = match (r.get("text"), r.get("blob")) {
                (Some(_), Some(_)) => {
                    return Err(
                        "a resource with both `text` and `blob` (it has one or the other)".into(),
                    );
                }
                (Some(Value::String(t)), None) => ResourceContents::Text { text: t.clone() },
                (None, Some(Value::String(_) | Value::Object(_))) => {
                    let field = binary_field(r.get_mut("blob"), mime_type.as_deref(), binary)
                        .map_err(|e| format!("a resource whose `blob` {e}"))?;
                    return match field {
                        Field::Missing => {
                            Err("a resource without a string `text` or base64 `blob`".into())
                        }
                        Field::Inline(blob, prefix) => Ok(Content::Resource {
                            resource: EmbeddedResource {
                                uri,
                                mime_type: mime_type.or(prefix),
                                contents: ResourceContents::Blob { blob },
                            },
                        }),
                        Field::Spilled {
                            path,
                            bytes,
                            prefix_mime,
                        } => Ok(spilled_link(
                            &path,
                            bytes,
                            mime_type
                                .or(prefix_mime)
                                .unwrap_or_else(|| "application/octet-stream".to_owned()),
                            &format!("the resource {}", shortened(&uri)),
                            binary.bound,
                        )),
                    };
                }
                _ => return Err("a resource without a string `text` or base64 `blob`".into()),
            };
            Ok(Content::Resource {
                resource: EmbeddedResource {
                    uri,
                    mime_type,
                    contents,
                },
            })
        }
        "resource_link" => {
            if let Some(Value::Number(n)) = obj.get("size")
                && !n.is_u64()
            {
                return Err(bad!(
                    "a resource link whose `size` is {n}, not a byte count"
                ));
            }
            match obj.get("uri") {
                Some(Value::String(u)) if is_uri(u) => {}
                Some(Value::String(_)) => return Err("a resource link whose `uri` is not a URI (it needs a scheme, e.g. file:///out.mp3)".into()),
                _ => return Err("a resource link without `uri`".into()),
            }
            serde_json::from_value::<Content>(Value::Object(obj.clone()))
                .map_err(|e| bad!("a malformed resource link ({e})"))
        }
        other => Err(bad!(
            "a content block of unknown type `{}`",
            other.escape_debug()
        )),
    }
}

/// A binary field (`data`, `blob`) as found in a block.
enum Field {
    Missing,
    /// Standard base64, in memory; the MIME type a `data:` prefix named.
    Inline(String, Option<String>),
    Spilled {
        path: std::path::PathBuf,
        bytes: u64,
        prefix_mime: Option<String>,
    },
}

/// Reads a binary field: a base64 string, or `{"ref": n}` naming pieces the harness sent
/// ahead. Kept in memory within the call's bound (repaired as [`base64_text`] says), or
/// saved to the spill folder. An error completes "an image whose `data` …".
fn binary_field(
    field: Option<&mut Value>,
    declared: Option<&str>,
    binary: &mut Binary<'_>,
) -> Result<Field, Malformed> {
    let Some(field) = field else {
        return Ok(Field::Missing);
    };
    // Pieces held in memory were counted against the bound as they arrived.
    let mut counted = false;
    let text = match field {
        Value::String(s) => std::mem::take(s),
        Value::Object(r) => {
            counted = true;
            let Some(n) = r
                .get("ref")
                .and_then(Value::as_u64)
                .filter(|_| r.len() == 1)
            else {
                return Ok(Field::Missing);
            };
            match binary.take(n, declared)? {
                Kept::Memory(s) => s,
                Kept::Spilled {
                    path,
                    bytes,
                    prefix_mime,
                } => {
                    return Ok(Field::Spilled {
                        path,
                        bytes,
                        prefix_mime,
                    });
                }
            }
        }
        _ => return Ok(Field::Missing),
    };
    let (fix, prefix) = match base64_text(&text) {
        Ok(found) => found,
        Err(e) => {
            // The block's JSON is kept in the note: the text goes back where it was.
            *field = Value::String(text);
            return Err(e);
        }
    };
    let mut slot = Value::String(text);
    let data = fix.apply(Some(&mut slot));
    if counted {
        return Ok(Field::Inline(data, prefix));
    }
    match binary.inline(data, declared.or(prefix.as_deref()))? {
        Kept::Memory(data) => Ok(Field::Inline(data, prefix)),
        Kept::Spilled {
            path,
            bytes,
            prefix_mime,
        } => Ok(Field::Spilled {
            path,
            bytes,
            prefix_mime: prefix_mime.or(prefix),
        }),
    }
}

/// The `resource_link` that replaces a binary block saved to the spill folder.
fn spilled_link(
    path: &std::path::Path,
    bytes: u64,
    mime_type: String,
    what: &str,
    bound: usize,
) -> Content {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut link = ResourceLink::new(file_url(path), name);
    link.description = Some(format!(
        "{what} of {bytes} bytes, over the {bound}-byte bound for binary data a result holds: saved to the spill folder"
    ));
    link.mime_type = Some(mime_type);
    link.size = Some(bytes);
    Content::ResourceLink(link)
}

/// A URI cut to 200 bytes for a message.
fn shortened(uri: &str) -> String {
    let mut end = uri.len().min(200);
    while !uri.is_char_boundary(end) {
        end -= 1;
    }
    if end < uri.len() {
        format!("{}...", &uri[..end])
    } else {
        uri.to_owned()
    }
}

/// Whether `s` starts with a URI scheme (`file:`, `https:`, `toolbind:` ...), as RFC 3986
/// writes it, and holds no whitespace or control character.
fn is_uri(s: &str) -> bool {
    crate::host::has_uri_scheme(s) && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// What [`base64_text`] found: the data as written is base64 once its `data:` prefix (of
/// this many bytes) is taken off, or it was repaired into this text.
pub(crate) enum Base64Fix {
    Keep(usize),
    Replace(String),
}

impl Base64Fix {
    /// The base64 text, taking the tool's string out of its block when it needs no repair
    /// (a 16 MiB image is moved, not copied).
    fn apply(self, field: Option<&mut Value>) -> String {
        let taken = match field {
            Some(Value::String(s)) => std::mem::take(s),
            _ => String::new(),
        };
        match self {
            Base64Fix::Keep(0) => taken,
            Base64Fix::Keep(prefix) => {
                let mut s = taken;
                s.drain(..prefix);
                s
            }
            Base64Fix::Replace(s) => s,
        }
    }
}

/// Base64 text in the standard alphabet with padding, from what a tool wrote: a `data:`
/// URL's prefix is taken off (its MIME type returned), line breaks and spaces removed, the
/// URL-safe alphabet and missing padding accepted. Anything else is not base64: the
/// error says where.
pub(crate) fn base64_text(written: &str) -> Result<(Base64Fix, Option<String>), Malformed> {
    let (data, mime) = match written.strip_prefix("data:") {
        Some(rest) => match rest.split_once(',') {
            Some((head, body)) if head.ends_with(";base64") => {
                let mime = head
                    .trim_end_matches(";base64")
                    .split(';')
                    .next()
                    .unwrap_or("");
                (body, (!mime.is_empty()).then(|| mime.to_owned()))
            }
            _ => return Err("is a data: URL that is not base64 (`;base64,` missing)".into()),
        },
        None => (written, None),
    };
    let clean = data
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
    let prefix = written.len() - data.len();
    if clean {
        // The common case, checked without a copy: canonical padding.
        let body = data.trim_end_matches('=');
        let pad = data.len() - body.len();
        if !body.is_empty()
            && !body.contains('=')
            && body.len() % 4 != 1
            && pad == (4 - body.len() % 4) % 4
        {
            return Ok((Base64Fix::Keep(prefix), mime));
        }
    }
    let mut out = if clean {
        data.to_owned()
    } else {
        let (mut url_safe, mut standard) = (false, false);
        let mut out = String::with_capacity(data.len());
        for (i, c) in data.char_indices() {
            match c {
                'A'..='Z' | 'a'..='z' | '0'..='9' | '=' => out.push(c),
                '+' | '/' => {
                    standard = true;
                    out.push(c);
                }
                '-' => {
                    url_safe = true;
                    out.push('+');
                }
                '_' => {
                    url_safe = true;
                    out.push('/');
                }
                ' ' | '\n' | '\r' | '\t' => {}
                other => {
                    return Err(bad!(
                        "is not base64: byte {i} is {:?}",
                        other.escape_debug().to_string()
                    ));
                }
            }
        }
        if url_safe && standard {
            return Err(
                "is not base64: it mixes the standard (`+`, `/`) and URL-safe (`-`, `_`) alphabets"
                    .into(),
            );
        }
        out
    };
    let body = out.trim_end_matches('=');
    if body.contains('=') || out.len() - body.len() > 2 {
        return Err("is not base64: `=` padding inside the data or more than two".into());
    }
    if body.is_empty() {
        return Err("is empty".into());
    }
    // The padding a decoder wants, whatever was written (none, too little, too much).
    let pad = match body.len() % 4 {
        1 => {
            return Err(bad!(
                "is not base64: {} characters cannot be whole bytes",
                body.len()
            ));
        }
        0 => 0,
        rest => 4 - rest,
    };
    let len = body.len();
    if out.len() != len + pad {
        out.truncate(len);
        out.push_str(&"=="[..pad]);
    }
    Ok((Base64Fix::Replace(out), mime))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing (undefined/None)",
        other => crate::args::json_kind(other),
    }
}

/// How much of a tool's output the runtime (a harness, or the runtime itself) cut: what its
/// note says.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Cut {
    /// A harness cut `cut` more characters of text, past `limit` in all.
    Chars { cut: u64, limit: u64 },
    /// A harness shrank a message of `bytes` bytes, over the `limit`-byte line limit, to
    /// its first `kept` characters of text (details dropped).
    Message {
        message: CutMessage,
        bytes: u64,
        limit: u64,
        kept: u64,
    },
    /// The runtime cut `cut` more bytes of text, past `limit` in all.
    #[serde(skip)]
    Bytes { cut: u64, limit: u64 },
    /// A bash tool's output: the first `kept` of `total` bytes were kept.
    #[serde(skip)]
    Output { kept: u64, total: u64 },
}

/// Which message a harness shrank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CutMessage {
    Update,
    Result,
}

/// The note a model reads where the runtime cut a tool's output: the one place it is
/// written.
pub(crate) fn note(cut: &Cut) -> String {
    let what = match cut {
        Cut::Chars { cut, limit } => format!("{cut} more characters were cut; limit {limit}"),
        Cut::Message {
            message,
            bytes,
            limit,
            kept,
        } => format!(
            "the {} was {bytes} bytes as JSON, over the {limit}-byte protocol limit; its text is cut to {kept} characters and details are dropped",
            match message {
                CutMessage::Update => "update",
                CutMessage::Result => "result",
            }
        ),
        Cut::Bytes { cut, limit } => format!("{cut} more bytes were cut; limit {limit} bytes"),
        Cut::Output { kept, total } => format!("kept the first {kept} of {total} bytes"),
    };
    format!("[output truncated by the runtime: {what}]")
}

/// A result's text, capped at `max` bytes in all, with the runtime's note for what was cut.
fn cap_result(result: &mut ToolResult, max: usize) {
    if let Some(cut) = cap_text(&mut result.content, max) {
        result.push_runtime_note(note(&cut));
    }
}

/// Progress text, capped at `max` bytes in all, with a note for what was cut.
fn cap_progress(progress: &mut Progress, max: usize) {
    if let Some(cut) = cap_text(&mut progress.content, max) {
        progress.content.push(Content::text(note(&cut)));
    }
}

/// Caps the total text of `content` at `max` bytes (on a char boundary): how much was cut.
fn cap_text(content: &mut [Content], max: usize) -> Option<Cut> {
    let mut budget = max;
    let mut cut = 0usize;
    for block in content.iter_mut() {
        // Text blocks and the text of embedded resources share the budget.
        let text = match block {
            Content::Text { text } => Some(text),
            Content::Resource { resource } => match &mut resource.contents {
                crate::result::ResourceContents::Text { text } => Some(text),
                _ => None,
            },
            _ => None,
        };
        if let Some(text) = text {
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
    (cut > 0).then_some(Cut::Bytes {
        cut: cut as u64,
        limit: max as u64,
    })
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
        let forged = normalize_result(json!({"content": [], "isError": "true"}), 100);
        assert!(forged.is_error);
        assert!(
            forged.text_content().contains("`isError` as a string"),
            "{forged:?}"
        );
    }

    #[test]
    fn rich_blocks_keep_their_kind_and_malformed_ones_become_text() {
        use crate::result::{EmbeddedResource, ResourceLink};
        let r = normalize_result(
            json!({"content": [
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "A"}},
                {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAEC"}},
                {"type": "resource_link", "uri": "file:///c", "name": "c", "size": 3},
                // Malformed: a resource without contents, audio without data, an
                // unknown kind.
                {"type": "resource", "resource": {"uri": "file:///d"}},
                {"type": "audio", "mimeType": "audio/wav"},
                {"type": "video", "data": "x"},
            ]}),
            10_000,
        );
        let mut link = ResourceLink::new("file:///c", "c");
        link.size = Some(3);
        assert_eq!(
            r.content[..4],
            [
                Content::Audio {
                    data: "UklGRg==".into(),
                    mime_type: "audio/wav".into()
                },
                Content::Resource {
                    resource: EmbeddedResource::text("file:///a.txt", "A").mime_type("text/plain")
                },
                Content::Resource {
                    resource: EmbeddedResource::blob("file:///b.bin", "AAEC")
                },
                Content::ResourceLink(link),
            ]
        );
        for (block, kind) in r.content[4..].iter().zip(["resource", "audio", "video"]) {
            let text = block.as_text().unwrap_or_else(|| panic!("{block:?}"));
            assert!(text.contains(kind), "{text}");
        }
        // Serialised back, each has MCP's shape.
        assert_eq!(
            serde_json::to_value(&r.content[1]).unwrap(),
            json!({"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "A"}})
        );
        assert_eq!(
            serde_json::to_value(&r.content[3]).unwrap(),
            json!({"type": "resource_link", "uri": "file:///c", "name": "c", "size": 3})
        );
    }

    #[test]
    fn unambiguous_base64_is_repaired_and_the_rest_refused_with_a_reason() {
        let block = |b: Value| {
            normalize_result(json!({"content": [b]}), 1 << 20)
                .content
                .remove(0)
        };
        let image = |data: &str| Content::Image {
            data: data.into(),
            mime_type: "image/png".into(),
        };
        // A data: URL names the MIME type; line breaks, the URL-safe alphabet and missing
        // padding are read as what they mean.
        assert_eq!(
            block(json!({"type": "image", "data": "data:image/png;base64,iVBO\nRw0K"})),
            image("iVBORw0K")
        );
        assert_eq!(
            block(json!({"type": "image", "data": "-_8", "mimeType": "image/png"})),
            image("+/8=")
        );
        assert_eq!(
            block(json!({"type": "image", "data": "AAEC\r\nAw", "mimeType": "image/png"})),
            image("AAECAw==")
        );
        let refused = |b: Value, why: &str| {
            let c = block(b.clone());
            let text = c
                .as_text()
                .unwrap_or_else(|| panic!("{b} was kept as {c:?}"));
            assert!(
                text.starts_with("[toolbind: ") && text.contains(why),
                "{text}"
            );
            assert!(
                text.contains(&b.to_string()),
                "the block's JSON is kept: {text}"
            );
        };
        // Padding rebuilt to what a decoder wants; an empty mimeType beside a prefix.
        assert_eq!(
            block(json!({"type": "image", "data": "AAAA=", "mimeType": "image/png"})),
            image("AAAA")
        );
        assert_eq!(
            block(json!({"type": "image", "data": "AAA==", "mimeType": "image/png"})),
            image("AAA=")
        );
        assert_eq!(
            block(json!({"type": "image", "data": "data:image/png;base64,AAAA", "mimeType": ""})),
            image("AAAA")
        );
        let r = block(
            json!({"type": "resource", "resource": {"uri": "file:///a.png", "blob": "data:image/png;base64,AAAA"}}),
        );
        assert_eq!(
            r,
            Content::Resource {
                resource: EmbeddedResource::blob("file:///a.png", "AAAA").mime_type("image/png")
            }
        );
        refused(
            json!({"type": "image", "data": "", "mimeType": "image/png"}),
            "is empty",
        );
        refused(
            json!({"type": "image", "data": "AA%C", "mimeType": "image/png"}),
            "byte 2 is \"%\"",
        );
        refused(
            json!({"type": "image", "data": "A+B_", "mimeType": "image/png"}),
            "mixes the standard",
        );
        refused(
            json!({"type": "image", "data": "AAAAA", "mimeType": "image/png"}),
            "cannot be whole bytes",
        );
        refused(
            json!({"type": "image", "data": "AAAA"}),
            "without `mimeType` (e.g. \"image/png\")",
        );
        refused(
            json!({"type": "audio", "data": "AAAA", "mimeType": ""}),
            "audio/wav",
        );
        refused(
            json!({"type": "resource", "resource": {"uri": "file:///a", "text": "t", "blob": "AAAA"}}),
            "both `text` and `blob`",
        );
        refused(
            json!({"type": "resource", "resource": {"uri": "a.txt", "text": "t"}}),
            "not a URI",
        );
        refused(
            json!({"type": "resource_link", "uri": "out mp3", "name": "o"}),
            "not a URI",
        );
        refused(
            json!({"type": "resource_link", "uri": "file:///o", "name": "o", "size": -1}),
            "`size` is -1",
        );
        refused(
            json!({"type": "video", "data": "AAAA"}),
            "unknown type `video`",
        );
        refused(json!({"kind": "text", "text": 1}), "without `type`");
    }

    #[test]
    fn an_embedded_resources_text_shares_the_text_budget() {
        let r = normalize_result(
            json!({"content": [
                {"type": "text", "text": "0123456789"},
                {"type": "resource", "resource": {"uri": "test://u", "text": "abcdefghij"}},
            ]}),
            15,
        );
        match &r.content[1] {
            Content::Resource { resource } => assert_eq!(resource.contents.len(), 5),
            other => panic!("{other:?}"),
        }
        assert!(r.text_content().contains("5 more bytes were cut"), "{r:?}");
    }

    #[test]
    fn progress_carries_an_optional_position() {
        let p = normalize_progress(
            json!({"content": [{"type": "text", "text": "Converting: 40%"}], "progress": 40, "total": 100}),
            100,
        );
        assert_eq!(
            (p.text_content().as_str(), p.progress, p.total),
            ("Converting: 40%", Some(40.0), Some(100.0))
        );
        let p = normalize_progress(json!({"progress": 3}), 100);
        assert!(p.content.is_empty() && p.progress == Some(3.0) && p.total.is_none());
        // Not numbers, negative, zero total: ignored, the text still arrives.
        let p = normalize_progress(json!({"content": "x", "progress": "40", "total": 0}), 100);
        assert_eq!(
            (p.text_content().as_str(), p.progress, p.total),
            ("x", None, None)
        );
        let p = normalize_progress(json!({"text": "y", "progress": -1}), 100);
        assert_eq!((p.text_content().as_str(), p.progress), ("y", None));
        // bash fd 3 lines: a JSON object with a numeric progress, else text.
        let p = progress_line(
            r#"{"text": "Converting: 40%", "progress": 40, "total": 100}"#.into(),
            100,
        );
        assert_eq!(
            (p.text_content().as_str(), p.progress, p.total),
            ("Converting: 40%", Some(40.0), Some(100.0))
        );
        let p = progress_line(r#"{"no": "position"}"#.into(), 100);
        assert_eq!(
            (p.text_content().as_str(), p.progress),
            (r#"{"no": "position"}"#, None)
        );
        assert_eq!(progress_line("plain".into(), 100), Progress::text("plain"));
    }

    #[test]
    fn text_is_capped_with_a_note() {
        let r = normalize_result(json!("é".repeat(10)), 5);
        assert_eq!(r.content[0].as_text(), Some("éé"));
        assert!(r.content[1].as_text().unwrap().contains("16 more bytes"));
    }

    #[test]
    fn ids_are_salvaged_from_lines_that_are_not_json() {
        let nan = br#"{"type": "result", "id": 7, "result": {"content": [NaN]}}"#;
        assert_eq!(salvage_id(nan), Some(("result", 7)));
        assert_eq!(
            salvage_id(br#"{"type":"update","id":12}"#),
            Some(("update", 12))
        );
        assert_eq!(salvage_id(br#"{"type":"fatal","id":1,"x":1}"#), None);
        assert_eq!(salvage_id(b"garbage"), None);
        assert_eq!(salvage_id(br#"{"type":"result","id":7x}"#), None);
    }

    #[test]
    fn hellos_are_checked() {
        let hello_of = |line: &str| match serde_json::from_str::<FromHarness>(line).unwrap() {
            FromHarness::Hello {
                protocol,
                capabilities,
            } => hello("node", &protocol, &capabilities),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            hello_of(r#"{"type":"hello","protocol":4,"capabilities":{"prepare":true}}"#),
            Ok(Capabilities { prepare: true })
        );
        // Absent capabilities are not offered; unknown ones (a newer harness) are ignored.
        assert_eq!(
            hello_of(r#"{"type":"hello","protocol":4}"#),
            Ok(Capabilities::default())
        );
        assert_eq!(
            hello_of(
                r#"{"type":"hello","protocol":4,"capabilities":{"prepare":false,"streams":{"x":1}},"extra":2}"#
            ),
            Ok(Capabilities { prepare: false })
        );
        // A version this runtime does not speak: both versions named.
        let e = hello_of(r#"{"type":"hello","protocol":5,"capabilities":{}}"#).unwrap_err();
        assert_eq!(
            e,
            HelloError::Version {
                label: "node",
                speaks: 5
            }
        );
        assert_eq!(
            e.to_string(),
            "protocol error: the node harness speaks protocol version 5, and this runtime speaks version 4; the harness is from another toolbind version"
        );
        let e = hello_of(r#"{"type":"hello","protocol":"1"}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no protocol version (`protocol` is \"1\")"),
            "{e}"
        );
        assert!(e.contains("speaks version 4"), "{e}");
        let e = hello_of(r#"{"type":"hello","capabilities":{}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`protocol` is null"), "{e}");
        let e = hello_of(r#"{"type":"hello","protocol":4,"capabilities":{"prepare":"yes"}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`prepare` capability as a string"), "{e}");
        let e = hello_of(r#"{"type":"hello","protocol":4,"capabilities":[]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`capabilities` as an array"), "{e}");
        // Message kinds stay closed: an unknown one is not a message.
        assert!(
            serde_json::from_str::<FromHarness>(r#"{"type":"greeting","protocol":4}"#).is_err()
        );
    }

    #[tokio::test]
    async fn lines_are_bounded() {
        let data: &[u8] = b"short\nthis line is far too long\nlast";
        let mut r = tokio::io::BufReader::with_capacity(4, data);
        let mut line = Vec::new();
        assert!(read_line(&mut r, &mut line, 10).await.unwrap().is_some());
        assert_eq!(line, b"short");
        line.clear();
        assert!(matches!(
            read_line(&mut r, &mut line, 10).await,
            Err(LineError::TooLong(10))
        ));
    }
}
