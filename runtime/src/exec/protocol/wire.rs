//! The protocol's messages as they travel: the harness's hello, the lines the runtime
//! sends, the messages it reads (bounded lines) and what a harness says it cut.

use serde::Deserialize;
use serde_json::{Map, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

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
    /// Written from borrowed parts: no copy of the params as a `Value` tree.
    #[derive(serde::Serialize)]
    struct Call<'a> {
        #[serde(rename = "type")]
        kind: &'static str,
        id: u64,
        #[serde(rename = "toolCallId")]
        tool_call_id: &'a str,
        params: &'a Map<String, Value>,
        // The call's W3C trace context, for the harness to hand the tool (`carrier()`).
        #[serde(skip_serializing_if = "Option::is_none")]
        trace: Option<Trace<'a>>,
    }
    #[derive(serde::Serialize)]
    struct Trace<'a> {
        traceparent: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        tracestate: Option<&'a str>,
    }
    let msg = Call {
        kind: "call",
        id,
        tool_call_id,
        params,
        trace: trace.map(|t| Trace {
            traceparent: &t.traceparent,
            tracestate: t.tracestate.as_deref(),
        }),
    };
    let mut line = Vec::with_capacity(128);
    // Strings and a map of JSON values: writing them cannot fail.
    let _ = serde_json::to_writer(&mut line, &msg);
    line.push(b'\n');
    line
}

/// The `abort` line for one call.
/// The answer to question `ask` of call `id`: what the tool's promise resolves to, or why
/// it rejects.
pub(crate) fn answer_line<E: std::fmt::Display>(
    id: u64,
    ask: u64,
    answer: Result<Value, E>,
) -> Vec<u8> {
    let msg = match answer {
        Ok(result) => serde_json::json!({"type": "answer", "id": id, "ask": ask, "result": result}),
        Err(error) => {
            serde_json::json!({"type": "answer", "id": id, "ask": ask, "error": error.to_string()})
        }
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

pub(super) fn kind(v: &Value) -> &'static str {
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
