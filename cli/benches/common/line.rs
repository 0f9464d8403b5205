//! A server on stdio spoken to in raw JSON-RPC lines, one request at a time: the client of
//! the tasks and asking benchmarks (what an SDK client would hide is what they measure).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

pub struct Line {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: i64,
    /// How many `elicitation/create` requests the server sent (each answered yes).
    pub asked: usize,
}

impl Line {
    /// Starts `cmd` and initialises it as a 2025-11-25 client named `client` with
    /// `capabilities`.
    pub fn start(cmd: Command, capabilities: Value, client: &str) -> Line {
        let mut line = Line::stateless(cmd);
        let init = line.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
                "clientInfo": {"name": client, "version": "0"}}),
        );
        assert!(init["result"].is_object(), "{init}");
        line.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        line
    }

    /// Starts `cmd`, not initialised: an MCP 2026-07-28 client, whose requests carry their
    /// own `_meta`.
    #[allow(dead_code)]
    pub fn stateless(mut cmd: Command) -> Line {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the server");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Line {
            child,
            stdin,
            stdout,
            next: 0,
            asked: 0,
        }
    }

    fn send(&mut self, msg: &Value) {
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and returns its answer. Notifications in between are skipped; an
    /// `elicitation/create` from the server is answered at once: yes to its first field.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut buf = String::new();
        loop {
            buf.clear();
            assert!(self.stdout.read_line(&mut buf).unwrap() > 0, "server gone");
            let v: Value = serde_json::from_str(&buf).unwrap();
            if v["method"] == "elicitation/create" {
                self.asked += 1;
                let field = v["params"]["requestedSchema"]["properties"]
                    .as_object()
                    .and_then(|p| p.keys().next().cloned())
                    .unwrap_or_default();
                self.send(&json!({"jsonrpc": "2.0", "id": v["id"],
                    "result": {"action": "accept", "content": {field: true}}}));
                continue;
            }
            if v["id"] == id && v.get("method").is_none() {
                return v;
            }
        }
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
