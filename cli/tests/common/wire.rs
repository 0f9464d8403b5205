//! `toolbind serve` over stdio, spoken to line by line: raw JSON-RPC, for what an SDK
//! client would never send (or would hide the answer to).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::bin;

/// A running `toolbind serve` on stdin/stdout; killed when dropped.
pub struct Wire {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    /// Messages read while waiting for another one's id.
    held: Vec<Value>,
}

/// `toolbind serve ARGS`, stdin and stdout piped, stderr to `stderr`.
pub fn spawn(args: &[&std::ffi::OsStr], stderr: Stdio) -> Child {
    Command::new(bin())
        .arg("serve")
        .args(args)
        .env_remove("PI_TOOLS_DIRS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap()
}

impl Wire {
    /// `serve ARGS`, initialised as a client of `protocol` with `capabilities`.
    pub fn start(args: &[&std::ffi::OsStr], protocol: &str, capabilities: Value) -> Wire {
        let mut w = Wire::stateless(args);
        let init = w.request(
            0,
            "initialize",
            json!({"protocolVersion": protocol, "capabilities": capabilities,
                "clientInfo": {"name": "wire-test", "version": "0"}}),
        );
        assert!(init["result"].is_object(), "initialize failed: {init}");
        w.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        w
    }

    /// `serve ARGS`, not initialised: an MCP 2026-07-28 client, whose every request carries
    /// its own `_meta`.
    #[allow(dead_code)]
    pub fn stateless(args: &[&std::ffi::OsStr]) -> Wire {
        let mut child = spawn(args, Stdio::null());
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                    break;
                }
            }
        });
        Wire {
            child,
            stdin: Some(stdin),
            lines,
            held: Vec::new(),
        }
    }

    pub fn send_raw(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, msg: &Value) {
        self.send_raw(msg.to_string().as_bytes());
    }

    /// The next message, waiting at most 15 s (a missing answer fails instead of hanging).
    pub fn answer(&mut self) -> Value {
        if !self.held.is_empty() {
            return self.held.remove(0);
        }
        self.lines
            .recv_timeout(Duration::from_secs(15))
            .expect("no answer from toolbind serve")
    }

    /// The answer to request `id`; other messages read meanwhile are kept for
    /// [`answer`](Self::answer).
    pub fn answer_to(&mut self, id: i64) -> Value {
        if let Some(i) = self.held.iter().position(|m| m["id"] == id) {
            return self.held.remove(i);
        }
        loop {
            let m = self
                .lines
                .recv_timeout(Duration::from_secs(15))
                .unwrap_or_else(|_| panic!("no answer to request {id} from toolbind serve"));
            if m["id"] == id && m.get("method").is_none() {
                return m;
            }
            self.held.push(m);
        }
    }

    /// The messages read while waiting for answers and not taken since (notifications).
    pub fn take_held(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.held)
    }

    /// Sends request `id` and waits for its answer.
    pub fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.answer_to(id)
    }
}

impl Drop for Wire {
    /// Ends the session as a client does, by closing stdin, so the server stops its tools
    /// and reaps them; killed if it has not exited 10 s later.
    fn drop(&mut self) {
        self.stdin = None;
        let end = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < end {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An error answer's id, code and message.
pub fn error_of(v: &Value) -> (Value, i64, String) {
    (
        v["id"].clone(),
        v["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("not an error: {v}")),
        v["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}
