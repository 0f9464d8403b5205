//! The stdio wire of `toolbind serve`: every request line is answered, even one the MCP
//! library would drop or misreport.
//!
//! Each line from stdin goes through [`crate::serve::checks`] first; a line over the
//! limit is discarded without being held in memory. A request the MCP library cannot read
//! is answered with `-32600`, carrying its id; a notification or a response it cannot read
//! is logged and dropped (neither gets an answer).
//!
//! A client that stops reading stdout stops the server: once about 16 MiB of answers wait
//! (each counted as at least 1 KiB), stdin is not read until they are taken.
//!
//! Each rejection is logged on stderr. Everything else goes on to the service, parsed:
//! [`connect`] makes the wire the service's transport, so each line is parsed once. One
//! task writes stdout, whole messages at a time, so a rejection never lands inside a
//! response.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequest, ClientJsonRpcMessage, ClientRequest, ErrorCode, JsonRpcMessage,
    JsonRpcRequest, RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::Transport;

use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinHandle;

use crate::serve::checks::{check_line, error, too_long};

/// The stdio transport of `toolbind serve`: request lines are read, checked (see
/// [`check_message`]) and parsed once, then handed to the MCP service; what the service
/// sends and the answers to rejected lines are written by one task, whole messages at a
/// time.
///
/// Made for the hot path of a busy session: a `tools/call` request is parsed straight into
/// its type instead of through the generic message parse, which tries each message shape
/// in turn, and messages that are ready together leave in one write (never waiting for
/// more: delaying a write to fill it stalls the client's next requests).
pub struct Stdio {
    messages: mpsc::Receiver<ClientJsonRpcMessage>,
    out: Option<Out>,
}

/// The way to stdout: messages queue for the writer task, at most [`QUEUED`] bytes of them;
/// a send waits for room (so a progress flood waits for a slow client). Every message sent
/// and not yet written counts in the backlog, and while it is over [`BACKLOG`] stdin is
/// not read: a client that stops reading stdout stops the server, rather than growing its
/// memory with answers it does not take.
#[derive(Clone)]
struct Out {
    queue: mpsc::UnboundedSender<Queued>,
    room: Arc<Semaphore>,
    backlog: Arc<Backlog>,
}

/// A message on its way to stdout, with its room in the queue and in the backlog.
type Queued = (Vec<u8>, OwnedSemaphorePermit, Counted);

/// How many bytes of messages may wait for stdout in the queue.
const QUEUED: usize = 1 << 20;

/// How many bytes of messages, queued or waiting for room, stop the reading of stdin:
/// about 16,000 small answers, room for a client that writes a long batch of requests
/// before it reads.
const BACKLOG: usize = 16 * QUEUED;

/// Bytes of messages sent and not yet written.
#[derive(Default)]
struct Backlog {
    bytes: AtomicUsize,
    /// Told when the backlog falls back under [`BACKLOG`].
    drained: Notify,
}

/// A message's bytes in the backlog, from when it is sent until it is written or dropped.
struct Counted {
    backlog: Arc<Backlog>,
    bytes: usize,
}

impl Drop for Counted {
    fn drop(&mut self) {
        let before = self.backlog.bytes.fetch_sub(self.bytes, Ordering::AcqRel);
        if before > BACKLOG && before - self.bytes <= BACKLOG {
            self.backlog.drained.notify_one();
        }
    }
}

impl Out {
    /// Queues one message (a JSON text without its newline): it counts in the backlog at
    /// once, and the returned future waits while the queue is full.
    fn send(
        &self,
        mut message: Vec<u8>,
    ) -> impl Future<Output = std::io::Result<()>> + Send + 'static {
        message.push(b'\n');
        // A small message costs more than its bytes while it waits (rmcp spawns a task
        // per send): each counts as at least 1 KiB.
        let bytes = message.len().max(1024);
        self.backlog.bytes.fetch_add(bytes, Ordering::AcqRel);
        let counted = Counted {
            backlog: self.backlog.clone(),
            bytes,
        };
        let (room, queue) = (self.room.clone(), self.queue.clone());
        async move {
            let permits = u32::try_from(message.len().min(QUEUED)).unwrap_or(u32::MAX);
            let permit = room
                .acquire_many_owned(permits)
                .await
                .map_err(|_| closed())?;
            queue.send((message, permit, counted)).map_err(|_| closed())
        }
    }

    /// Waits until the backlog is under [`BACKLOG`].
    async fn room_for_more(&self) {
        while self.backlog.bytes.load(Ordering::Acquire) > BACKLOG {
            self.backlog.drained.notified().await;
        }
    }
}

fn closed() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout is closed")
}

/// Connects `input`/`output` (stdin/stdout) to the MCP service through the checks above.
/// Returns the transport and the writer task, which ends once everything sent is written.
pub fn connect(
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
    max: usize,
    log: fn(&str),
) -> (Stdio, JoinHandle<()>) {
    let (queue, queued) = mpsc::unbounded_channel();
    let out = Out {
        queue,
        room: Arc::new(Semaphore::new(QUEUED)),
        backlog: Arc::default(),
    };
    let (to_service, messages) = mpsc::channel(64);
    tokio::spawn(read(input, to_service, out.clone(), max, log));
    let writer = tokio::spawn(write(output, queued));
    (
        Stdio {
            messages,
            out: Some(out),
        },
        writer,
    )
}

/// Reads request lines until stdin ends (or the service is gone): each is checked, then
/// forwarded parsed or answered, when the backlog of answers leaves room.
async fn read(
    input: impl AsyncRead + Unpin,
    to_service: mpsc::Sender<ClientJsonRpcMessage>,
    out: Out,
    max: usize,
    log: fn(&str),
) {
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::new();
    loop {
        let next = tokio::select! {
            r = read_line(&mut input, &mut line, max) => r,
            // The session is over: stop reading, so the writer can finish.
            () = to_service.closed() => return,
        };
        let parsed = match next {
            Ok(Line::Eof) | Err(_) => return,
            Ok(Line::TooLong(n)) => {
                log(&format!(
                    "rejected a request line of {n} bytes or more: over the {max}-byte limit (--max-request-bytes)"
                ));
                Parsed::Reject(too_long(max, salvage_id(&line)))
            }
            Ok(Line::Full) => match parse(&line) {
                Parsed::Skip => continue,
                Parsed::Ignored(why) => {
                    log(&why);
                    continue;
                }
                Parsed::Reject(answer) => {
                    log(&format!(
                        "rejected a request: {}",
                        answer["error"]["message"].as_str().unwrap_or_default()
                    ));
                    Parsed::Reject(answer)
                }
                message => message,
            },
        };
        tokio::select! {
            () = out.room_for_more() => {}
            () = to_service.closed() => return,
        }
        let delivered = match parsed {
            Parsed::Message(message) => to_service.send(message).await.is_ok(),
            Parsed::Reject(answer) => out
                .send(serde_json::to_vec(&answer).unwrap_or_default())
                .await
                .is_ok(),
            Parsed::Skip | Parsed::Ignored(_) => true,
        };
        if !delivered {
            return;
        }
    }
}

/// Writes queued messages to stdout; those queued meanwhile go in the same write.
async fn write(mut output: impl AsyncWrite + Unpin, mut queued: mpsc::UnboundedReceiver<Queued>) {
    let mut held = Vec::new();
    while let Some((mut batch, permit, counted)) = queued.recv().await {
        held.push((permit, counted));
        while batch.len() < QUEUED
            && let Ok((more, permit, counted)) = queued.try_recv()
        {
            batch.extend_from_slice(&more);
            held.push((permit, counted));
        }
        if output.write_all(&batch).await.is_err() {
            return;
        }
        let _ = output.flush().await;
        held.clear();
    }
}

impl Transport<RoleServer> for Stdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = match (&self.out, serde_json::to_vec(&item)) {
            (Some(out), Ok(message)) => Ok(out.send(message)),
            (None, _) => Err(closed()),
            (_, Err(e)) => Err(e.into()),
        };
        async move { sent?.await }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ClientJsonRpcMessage>> + Send {
        self.messages.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.out = None;
        self.messages.close();
        Ok(())
    }
}

/// What one request line is.
#[derive(Debug)]
// A value returned and at once taken apart: boxing the message would cost an allocation
// per request for nothing.
#[allow(clippy::large_enum_variant)]
enum Parsed {
    Message(ClientJsonRpcMessage),
    /// A blank line.
    Skip,
    /// A notification not passed on (no answer is due), and why.
    Ignored(String),
    /// Answer with this JSON-RPC error response.
    Reject(Value),
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Checks one request line (without its newline) and parses it.
fn parse(line: &[u8]) -> Parsed {
    let line = line.strip_prefix(UTF8_BOM).unwrap_or(line);
    let value = match check_line(line) {
        Ok(Some(v)) => v,
        Ok(None) => return Parsed::Skip,
        Err(answer) => return Parsed::Reject(answer),
    };
    if let Some(call) = tool_call(&value) {
        return Parsed::Message(call);
    }
    let id = value.get("id").cloned();
    let request = value.get("method").is_some_and(Value::is_string);
    match serde_json::from_value::<ClientJsonRpcMessage>(value) {
        Ok(message) => Parsed::Message(message),
        // A notification gets no answer, nor does a response (to a request of this
        // server's; its id is the server's, and answering with it could fail one of the
        // client's own requests).
        Err(e) if id.is_none() && request => Parsed::Ignored(format!(
            "ignored a notification this server cannot read ({e})"
        )),
        Err(e) if id.is_some() && !request => {
            Parsed::Ignored(format!("ignored a response this server cannot read ({e})"))
        }
        Err(e) => Parsed::Reject(error(
            if request {
                id.unwrap_or(Value::Null)
            } else {
                Value::Null
            },
            ErrorCode::INVALID_REQUEST,
            format!("Invalid Request: {e}"),
        )),
    }
}

/// A well-formed `tools/call` request (as [`check_message`] lets through), parsed straight
/// into its type; `None` for anything else, which takes the generic parse.
fn tool_call(value: &Value) -> Option<ClientJsonRpcMessage> {
    let obj = value.as_object()?;
    if obj.get("method")?.as_str()? != "tools/call"
        || obj.get("jsonrpc")?.as_str()? != "2.0"
        || !obj
            .keys()
            .all(|k| matches!(k.as_str(), "jsonrpc" | "id" | "method" | "params"))
    {
        return None;
    }
    let id = RequestId::deserialize(obj.get("id")?).ok()?;
    let request = CallToolRequest::deserialize(value).ok()?;
    Some(JsonRpcMessage::Request(JsonRpcRequest::new(
        id,
        ClientRequest::CallToolRequest(request),
    )))
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
    use crate::serve::server::{MAX_SUBSCRIPTION_URI, MAX_SUBSCRIPTIONS};
    use serde_json::json;

    fn code(v: &Parsed) -> Option<(i64, Value)> {
        match v {
            Parsed::Reject(a) => Some((a["error"]["code"].as_i64().unwrap(), a["id"].clone())),
            _ => None,
        }
    }

    fn check(line: &[u8]) -> Parsed {
        parse(line)
    }

    fn forwarded(p: &Parsed) -> bool {
        matches!(p, Parsed::Message(_))
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
        assert!(forwarded(&check(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#
        )));
        assert!(matches!(check(b"  "), Parsed::Skip));
        // Bad params of the other methods served: -32602 naming the problem, not rmcp's
        // "method not found".
        for bad in [
            r#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"loud"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":5}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":1}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"argument":{"name":"n","value":""}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{"type":"ref/tool","name":"x"},"argument":{"name":"n","value":""}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{"type":"ref/resource","name":"x"},"argument":{"name":"n","value":""}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":"toolbind://tools/{name}","argument":{"name":"n","value":""}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"n"}}}"#,
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
            r#"{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"toolbind://tools/{name}"},"argument":{"name":"name","value":"we"}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"n","value":""}}}"#,
        ] {
            assert!(forwarded(&check(good.as_bytes())), "{good}");
        }
        // subscriptions/listen: the resource URIs are bounded as for resources/subscribe.
        let listen = |uris: Value| {
            json!({"jsonrpc": "2.0", "id": 3, "method": "subscriptions/listen",
                "params": {"notifications": {"resourceSubscriptions": uris}}})
            .to_string()
        };
        let many: Vec<String> = (0..=MAX_SUBSCRIPTIONS)
            .map(|i| format!("t://{i}"))
            .collect();
        for bad in [
            listen(json!(many)),
            listen(json!(["x".repeat(MAX_SUBSCRIPTION_URI + 1)])),
            listen(json!([1])),
            listen(json!("toolbind://tools/x")),
        ] {
            assert_eq!(
                code(&check(bad.as_bytes())),
                Some((-32602, json!(3))),
                "{bad:.80}"
            );
        }
        for good in [
            listen(json!(many[..MAX_SUBSCRIPTIONS])),
            listen(json!(["x".repeat(MAX_SUBSCRIPTION_URI)])),
            r#"{"jsonrpc":"2.0","id":3,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}"#.into(),
        ] {
            assert!(forwarded(&check(good.as_bytes())), "{good:.80}");
        }
        // 2026-07-28 removed logging/setLevel: method not found, whatever its params.
        for removed in [
            r#"{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"info","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        ] {
            assert_eq!(
                code(&check(removed.as_bytes())),
                Some((-32601, json!(4))),
                "{removed}"
            );
        }
    }

    #[test]
    fn a_tool_call_is_parsed_as_the_generic_parse_would() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi","n":[1,2]}}}"#,
            r#"{"jsonrpc":"2.0","id":"req-7","method":"tools/call","params":{"name":"echo"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":null}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"progressToken":"p1","x":1}}}"#,
            r#"{"params":{"_meta":{"progressToken":9},"name":"echo"},"method":"tools/call","id":4,"jsonrpc":"2.0"}"#,
        ] {
            let value: Value = serde_json::from_str(line).unwrap();
            let fast = tool_call(&value).expect(line);
            let generic: ClientJsonRpcMessage = serde_json::from_value(value).unwrap();
            assert_eq!(
                serde_json::to_value(&fast).unwrap(),
                serde_json::to_value(&generic).unwrap(),
                "{line}"
            );
            assert!(forwarded(&check(line.as_bytes())), "{line}");
        }
        // Anything unusual takes the generic parse.
        for line in [
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"},"extra":1}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        ] {
            let value: Value = serde_json::from_str(line).unwrap();
            assert!(tool_call(&value).is_none(), "{line}");
        }
    }

    #[test]
    fn lines_the_service_cannot_read_are_answered_or_ignored() {
        // A request of the wrong shape: -32600 with its id (rmcp's own transport answers
        // with a null id).
        assert_eq!(
            code(&check(
                br#"{"jsonrpc":"2.0","id":5,"method":"initialize","params":"x"}"#
            )),
            Some((-32600, json!(5)))
        );
        assert_eq!(
            code(&check(
                br#"{"jsonrpc":"1.0","id":6,"method":"tools/call","params":{"name":"x"}}"#
            )),
            Some((-32600, json!(6)))
        );
        // A notification gets no answer, even one the service cannot read; one of another
        // protocol goes on to the service, which ignores it.
        assert!(forwarded(&check(
            br#"{"jsonrpc":"2.0","method":"vendor/hello","params":{}}"#
        )));
        assert!(matches!(
            check(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":7}"#),
            Parsed::Ignored(_)
        ));
        // Nor does a response: its id is the server's.
        assert!(matches!(
            check(br#"{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"x"}}"#),
            Parsed::Ignored(_)
        ));
        // Neither a request nor a notification: answered, with no id to give.
        assert_eq!(
            code(&check(br#"{"jsonrpc":"2.0"}"#)),
            Some((-32600, Value::Null))
        );
        // A byte-order mark and a carriage return are tolerated.
        assert!(forwarded(&check(
            b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r"
        )));
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
