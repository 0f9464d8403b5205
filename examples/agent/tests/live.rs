//! The example agent's live path against a loopback HTTP server that replays responses in
//! each provider's documented wire format: parallel tool calls, malformed argument JSON
//! (OpenAI), bad arguments, an unknown tool, then the final text answer. The agent binary
//! runs exactly as `--model` / `--provider` run it against a real API; only the base URL
//! points at the replay server. The requests the agent sent are checked too.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

const KEY: &str = "test-key-zx81";

#[derive(Debug, Clone)]
struct Request {
    path: String,
    headers: HashMap<String, String>,
    body: Value,
}

/// Serves `script` one response per request (HTTP/1.1, `Connection: close`), recording
/// each request; answers 500 once the script is spent.
fn replay(script: Vec<Value>) -> (String, Arc<Mutex<Vec<Request>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        let mut script = script.into_iter();
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { return };
            let Some(req) = read_request(&mut s) else {
                continue;
            };
            record.lock().unwrap().push(req);
            let (status, body) = match script.next() {
                Some(v) => ("200 OK", v.to_string()),
                None => (
                    "500 Internal Server Error",
                    "{\"error\":\"script spent\"}".into(),
                ),
            };
            let _ = write!(
                s,
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (url, seen)
}

fn read_request(s: &mut std::net::TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        let n = s.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.lines();
    let path = lines.next()?.split(' ').nth(1)?.to_owned();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let len: usize = headers.get("content-length")?.parse().ok()?;
    while buf.len() < head_end + len {
        let n = s.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&buf[head_end..head_end + len]).ok()?;
    Some(Request {
        path,
        headers,
        body,
    })
}

fn run_agent(data: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent"));
    cmd.arg("--data").arg(data).args(args);
    for k in [
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "GEMINI_API_KEY",
        "GEMINI_BASE_URL",
    ] {
        cmd.env_remove(k);
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().expect("run the agent binary");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "agent exited with {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    assert!(!stdout.contains(KEY), "the API key was printed");
    assert!(stdout.contains("\n=== done"), "{stdout}");
    stdout
}

const ALICE: &str = "Summarise unread email from Alice";

#[test]
fn openai_compatible_live_path() {
    let (url, seen) = replay(vec![
        json!({"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0,
            "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "todo",
                "arguments": format!("{{\"action\":\"add\",\"text\":\"{ALICE}\"}}")}},
            {"id": "call_2", "type": "function", "function": {"name": "todo",
                "arguments": "{\"action\":\"add\",\"text\":"}},
            {"id": "call_3", "type": "function", "function": {"name": "todo_lst", "arguments": "{}"}},
            {"id": "call_4", "type": "function", "function": {"name": "todo",
                "arguments": "{\"action\":\"finish\"}"}}
        ]}}]}),
        json!({"id": "chatcmpl-2", "object": "chat.completion", "choices": [{"index": 0,
            "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_5", "type": "function", "function": {"name": "todo", "arguments": "{\"action\":\"list\"}"}}
        ]}}]}),
        json!({"id": "chatcmpl-3", "object": "chat.completion", "choices": [{"index": 0,
            "finish_reason": "stop", "message": {"role": "assistant", "content": "Your list has one item."}}]}),
    ]);
    let data = tempfile::tempdir().unwrap();
    let base = format!("{url}/v1");
    let out = run_agent(
        data.path(),
        &["--model", "test-model"],
        &[("OPENAI_BASE_URL", &base), ("OPENAI_API_KEY", KEY)],
    );
    assert!(
        out.contains("5. live model turn (OpenAiChat, test-model)"),
        "{out}"
    );
    assert!(out.contains("model: Your list has one item."), "{out}");

    let reqs = seen.lock().unwrap().clone();
    assert_eq!(reqs.len(), 3);
    for r in &reqs {
        assert_eq!(r.path, "/v1/chat/completions");
        assert_eq!(r.headers["authorization"], format!("Bearer {KEY}"));
        assert_eq!(r.body["model"], "test-model");
    }
    let first = &reqs[0].body;
    assert_eq!(first["messages"][0]["role"], "system");
    assert_eq!(first["messages"][1]["role"], "user");
    let names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"todo") && names.contains(&"web_fetch"),
        "{names:?}"
    );

    // Turn 2's request: the assistant message as sent, then one tool message per call in
    // call order.
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    assert_eq!(msgs[2]["tool_calls"][1]["id"], "call_2");
    let tool_msgs: Vec<&Value> = msgs[3..].iter().collect();
    let ids: Vec<&str> = tool_msgs
        .iter()
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["call_1", "call_2", "call_3", "call_4"]);
    let text = |i: usize| tool_msgs[i]["content"].as_str().unwrap().to_owned();
    assert!(text(0).contains(ALICE), "{}", text(0));
    assert!(text(1).contains("not valid JSON"), "{}", text(1));
    assert!(text(2).contains("unknown tool `todo_lst`"), "{}", text(2));
    assert!(
        text(3).starts_with("Error: ") && text(3).contains("`action`"),
        "{}",
        text(3)
    );
    let last = reqs[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["tool_call_id"], "call_5");
    assert!(last["content"].as_str().unwrap().contains(ALICE), "{last}");
}

#[test]
fn anthropic_live_path() {
    let (url, seen) = replay(vec![
        json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "stop_reason": "tool_use", "content": [
            {"type": "text", "text": "Adding them."},
            {"type": "tool_use", "id": "toolu_1", "name": "todo", "input": {"action": "add", "text": ALICE}},
            {"type": "tool_use", "id": "toolu_2", "name": "todo", "input": {"action": "add", "txt": "x"}},
            {"type": "tool_use", "id": "toolu_3", "name": "todo_lst", "input": {}}
        ]}),
        json!({"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-test",
            "stop_reason": "end_turn", "content": [{"type": "text", "text": "Done: one item."}]}),
    ]);
    let data = tempfile::tempdir().unwrap();
    let out = run_agent(
        data.path(),
        &["--provider", "anthropic", "--model", "claude-test"],
        &[("ANTHROPIC_BASE_URL", &url), ("ANTHROPIC_API_KEY", KEY)],
    );
    assert!(out.contains("model: Done: one item."), "{out}");
    let reqs = seen.lock().unwrap().clone();
    assert_eq!(reqs.len(), 2);
    for r in &reqs {
        assert_eq!(r.path, "/v1/messages");
        assert_eq!(r.headers["x-api-key"], KEY);
        assert_eq!(r.headers["anthropic-version"], "2023-06-01");
        assert!(r.body["system"].as_str().unwrap().contains("todo"));
        assert!(r.body["tools"][0]["input_schema"].is_object());
    }
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    assert_eq!(
        msgs.len(),
        3,
        "user, assistant, one user message of results"
    );
    assert_eq!(msgs[1]["role"], "assistant");
    assert_eq!(msgs[1]["content"][0]["text"], "Adding them.");
    let results = msgs[2]["content"].as_array().unwrap();
    let ids: Vec<&str> = results
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["toolu_1", "toolu_2", "toolu_3"]);
    assert_eq!(results[0]["is_error"], false);
    assert_eq!(results[1]["is_error"], true);
    assert!(
        results[1]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("`txt`")
    );
    assert_eq!(results[2]["is_error"], true);
    assert!(
        results[2]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("unknown tool `todo_lst`")
    );
}

#[test]
fn gemini_live_path() {
    let (url, seen) = replay(vec![
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "todo", "args": {"action": "add", "text": ALICE}}, "thoughtSignature": "c2ln"},
            {"functionCall": {"name": "todo_lst", "args": {}}}
        ]}, "finishReason": "STOP"}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "todo", "args": {"action": "list"}}}
        ]}, "finishReason": "STOP"}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Listed."}]},
            "finishReason": "STOP"}]}),
    ]);
    let data = tempfile::tempdir().unwrap();
    let base = format!("{url}/v1beta");
    let out = run_agent(
        data.path(),
        &["--provider", "gemini", "--model", "gemini-test"],
        &[("GEMINI_BASE_URL", &base), ("GEMINI_API_KEY", KEY)],
    );
    assert!(out.contains("model: Listed."), "{out}");
    let reqs = seen.lock().unwrap().clone();
    assert_eq!(reqs.len(), 3);
    for r in &reqs {
        assert_eq!(r.path, "/v1beta/models/gemini-test:generateContent");
        assert_eq!(r.headers["x-goog-api-key"], KEY);
        assert!(r.body["tools"][0]["functionDeclarations"].is_array());
        assert!(r.body["systemInstruction"]["parts"][0]["text"].is_string());
    }
    let contents = reqs[1].body["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 3);
    assert_eq!(
        contents[1]["parts"][0]["thoughtSignature"], "c2ln",
        "the model turn is resent unchanged"
    );
    let parts = contents[2]["parts"].as_array().unwrap();
    assert_eq!(contents[2]["role"], "user");
    assert_eq!(parts.len(), 2);
    for p in parts {
        assert!(
            p["functionResponse"].get("id").is_none(),
            "no made-up id goes back"
        );
    }
    assert_eq!(parts[0]["functionResponse"]["name"], "todo");
    assert!(parts[0]["functionResponse"]["response"]["output"].is_string());
    assert_eq!(parts[1]["functionResponse"]["name"], "todo_lst");
    let unknown = parts[1]["functionResponse"]["response"]["error"]
        .as_str()
        .unwrap();
    assert!(unknown.contains("unknown tool `todo_lst`"), "{unknown}");
    let contents = reqs[2].body["contents"].as_array().unwrap();
    let listed = contents[4]["parts"][0]["functionResponse"]["response"]["output"]
        .as_str()
        .unwrap();
    assert!(listed.contains(ALICE), "{listed}");
}
