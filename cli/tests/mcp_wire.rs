//! `toolbind serve` answers every request line, on the wire itself: an over-long line, bad
//! JSON, a malformed `tools/call`, a bad cursor; and it writes every
//! answer before it exits.

use crate::common;

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::wire::{Wire, error_of};
use serde_json::{Value, json};

/// `toolbind serve` on the fixture tools plus `extra`, initialised (2025-06-18).
fn server(extra: &[&str]) -> Wire {
    let tools = common::fixture("tools");
    let mut args: Vec<&OsStr> = vec![OsStr::new("--dir"), tools.as_os_str()];
    args.extend(extra.iter().map(OsStr::new));
    Wire::start(&args, "2025-06-18", json!({}))
}

/// The `initialize` request and the `initialized` notification, as lines.
fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "wire-test", "version": "0"}}})
    .to_string()
        + "\n"
        + r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        + "\n"
}

fn spawn(extra: &[&str]) -> Child {
    let tools = common::fixture("tools");
    let mut args: Vec<&OsStr> = vec![OsStr::new("--dir"), tools.as_os_str()];
    args.extend(extra.iter().map(OsStr::new));
    common::wire::spawn(&args, Stdio::null())
}

#[test]
fn malformed_requests_get_the_right_json_rpc_errors() {
    let mut s = server(&[]);
    s.send_raw(b"this is not json");
    let (id, code, _) = error_of(&s.answer());
    assert_eq!((id, code), (Value::Null, -32700));

    s.send_raw(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}"#);
    let (id, code, msg) = error_of(&s.answer());
    assert_eq!((id, code), (json!(7), -32602), "{msg}");

    s.send_raw(
        br#"{"jsonrpc":"2.0","id":"eight","method":"tools/call","params":{"name":"hello_py","arguments":[1]}}"#,
    );
    let (id, code, msg) = error_of(&s.answer());
    assert_eq!((id, code), (json!("eight"), -32602), "{msg}");
    assert!(msg.contains("must be an object"), "{msg}");

    s.send_raw(br#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"cursor":"zzz"}}"#);
    let (id, code, msg) = error_of(&s.answer());
    assert_eq!((id, code), (json!(9), -32602), "{msg}");

    // completion/complete with a ref that is neither a prompt nor a template.
    s.send_raw(
        br#"{"jsonrpc":"2.0","id":11,"method":"completion/complete","params":{"ref":{"type":"ref/tool","name":"x"},"argument":{"name":"n","value":""}}}"#,
    );
    let (id, code, msg) = error_of(&s.answer());
    assert_eq!((id, code), (json!(11), -32602), "{msg}");
    assert!(msg.contains("ref/prompt"), "{msg}");

    // A well-formed request still works after all that.
    s.send_raw(br#"{"jsonrpc":"2.0","id":10,"method":"tools/list"}"#);
    let list = s.answer();
    assert_eq!(list["id"], 10);
    assert!(list["result"]["tools"].is_array(), "{list}");
}

#[test]
fn an_over_long_request_is_answered_with_the_limit() {
    // The default limit (16 MiB): a 17 MiB line.
    let mut s = server(&[]);
    let mut line = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"hello_py","arguments":{"name":""#.to_vec();
    line.extend(std::iter::repeat_n(b'x', 17 << 20));
    line.extend_from_slice(br#""}}}"#);
    s.send_raw(&line);
    let (id, code, msg) = error_of(&s.answer());
    assert_eq!((id, code), (json!(5), -32600), "{msg}");
    assert!(
        msg.contains("16777216 bytes") && msg.contains("--max-request-bytes"),
        "{msg}"
    );

    // The limit is configurable.
    let mut s = server(&["--max-request-bytes", "4096"]);
    let mut line = br#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"x":""#.to_vec();
    line.extend(std::iter::repeat_n(b'y', 5000));
    line.extend_from_slice(br#""}}"#);
    s.send_raw(&line);
    let (id, code, msg) = error_of(&s.answer());
    assert_eq!((id, code), (json!(6), -32600), "{msg}");
    assert!(msg.contains("4096 bytes"), "{msg}");
    s.send_raw(br#"{"jsonrpc":"2.0","id":11,"method":"tools/list"}"#);
    assert_eq!(s.answer()["id"], 11);
}

/// Runs `serve` on `input` (stdin closed after it) and returns every stdout line, waiting
/// at most 20 s for it to exit.
fn serve_all(input: &[u8]) -> Vec<Value> {
    let mut child = spawn(&[]);
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let lines: Vec<Value> = stdout
            .lines()
            .map_while(Result::ok)
            .map(|l| serde_json::from_str(&l).unwrap())
            .collect();
        let _ = tx.send(lines);
    });
    let lines = rx.recv_timeout(Duration::from_secs(20));
    let _ = child.kill();
    let _ = child.wait();
    writer.join().unwrap();
    lines.expect("toolbind serve did not exit within 20 s of the end of its input")
}

#[test]
fn every_answer_is_written_before_serve_exits() {
    // Rejected lines with no session at all (initialisation fails at the end of input):
    // each still gets its answer.
    let mut input = b"not json\n".to_vec();
    for id in 1..=200 {
        input.extend(
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{}}}}"#).bytes(),
        );
        input.push(b'\n');
    }
    let lines = serve_all(&input);
    assert_eq!(lines.len(), 201, "{lines:?}");
    assert!(
        lines.iter().all(|l| l["error"]["code"].is_i64()),
        "{lines:?}"
    );

    // Calls still running when the input ends, with progress tokens: each is answered.
    let mut input = initialize();
    for id in 1..=5 {
        input += &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "hello_sh", "arguments": {"name": format!("n{id}"), "steps": 3},
            "_meta": {"progressToken": format!("p{id}")}}})
        .to_string();
        input += "\n";
    }
    let lines = serve_all(input.as_bytes());
    let mut answered: Vec<i64> = lines
        .iter()
        .filter(|l| l["result"]["content"].is_array())
        .map(|l| l["id"].as_i64().unwrap())
        .collect();
    answered.sort();
    assert_eq!(answered, [1, 2, 3, 4, 5], "{lines:?}");
}

#[test]
fn a_response_the_server_cannot_read_is_not_answered() {
    // A client's response to a request of the server's: its id is the server's, so an
    // error with that id could fail the client's own request 3.
    let mut s = server(&[]);
    s.send_raw(br#"{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"x"}}"#);
    s.send_raw(br#"{"jsonrpc":"2.0","id":4}"#);
    s.send_raw(br#"{"jsonrpc":"2.0","id":12,"method":"tools/list"}"#);
    let next = s.answer();
    assert_eq!(next["id"], 12, "{next}");
    assert!(next["result"]["tools"].is_array(), "{next}");
}

#[test]
fn stdio_runs_at_most_max_concurrent_calls_and_the_rest_wait() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let mut s = server(&["--max-concurrent-calls", "1", "--sandbox", "off"]);
    for (id, pidfile) in [(1, &a), (2, &b)] {
        s.send_raw(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "wait_py", "arguments": {"pidfile": pidfile, "stubborn": false}}})
            .to_string()
            .as_bytes(),
        );
    }
    // Either may be first: the calls are dispatched concurrently.
    assert!(
        common::eventually(20.0, || a.exists() || b.exists()),
        "no call started"
    );
    let (first, second, waiting) = if a.exists() { (1, 2, &b) } else { (2, 1, &a) };
    // The other waits for it: it has not started a second later.
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        !waiting.exists(),
        "two calls ran at once with --max-concurrent-calls 1"
    );
    let cancel = |s: &mut Wire, id: i64| {
        s.send_raw(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": id}})
            .to_string()
            .as_bytes(),
        )
    };
    cancel(&mut s, first);
    assert!(
        common::eventually(20.0, || waiting.exists()),
        "the waiting call never started"
    );
    cancel(&mut s, second);
    // Both slots' holders are gone: a new call runs (rmcp sends no answer to a
    // cancelled request, as MCP allows).
    s.send_raw(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "hello_py", "arguments": {"name": "Ada"}}})
        .to_string()
        .as_bytes(),
    );
    let done = (0..20)
        .map(|_| s.answer())
        .find(|m| m["id"] == 3)
        .expect("no answer to the third call");
    assert_eq!(done["result"]["isError"], false, "{done}");
}
