//! `toolbind serve --http` driven by the official MCP Python SDK's Streamable HTTP client
//! (`cli/tests/clients/http_client.py`) and by raw HTTP requests for the status codes:
//! list and call (sessions, 2026-07-28, stateless), the bearer token (refused, accepted,
//! generated), Origin and Host checks, the body, call and session limits, the health
//! endpoint, the SIGTERM drain, a bounded loopback load test, and tasks (polled across
//! stateless requests; answered only from the session that created them).

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{bin, clients_dir, eventually, fixture};
use serde_json::{Value, json};

const TOKEN: &str = "test-token-0123456789abcdef";

/// A running `toolbind serve --http 127.0.0.1:0`, killed when dropped.
struct Serve {
    child: Child,
    addr: String,
    stderr: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Serve {
    fn start(args: &[&str]) -> Serve {
        Self::start_with(args, &[("TOOLBIND_TOKEN", TOKEN)], None)
    }

    /// `tools`: a tools folder to serve instead of the fixtures. `args` may name another
    /// `--http` address.
    fn start_with(args: &[&str], env: &[(&str, &str)], tools: Option<&Path>) -> Serve {
        let tmp = tempfile::tempdir().unwrap();
        let stderr = tmp.path().join("stderr");
        let mut cmd = Command::new(bin());
        cmd.arg("serve")
            .arg("--dir")
            .arg(tools.map_or_else(|| fixture("tools"), Path::to_path_buf))
            .args(if args.contains(&"--http") {
                &[][..]
            } else {
                &["--http", "127.0.0.1:0"][..]
            })
            .args(args)
            .env_remove("PI_TOOLS_DIRS")
            .env_remove("TOOLBIND_TOKEN")
            .env("XDG_STATE_HOME", tmp.path().join("state"))
            .env("XDG_RUNTIME_DIR", tmp.path().join("run"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().unwrap();
        let mut s = Serve {
            child,
            addr: String::new(),
            stderr,
            _tmp: tmp,
        };
        let found = eventually(20.0, || {
            let log = s.log();
            if let Some(at) = log.find("at http://") {
                let rest = &log[at + "at http://".len()..];
                s.addr = rest[..rest.find("/mcp").unwrap()].to_string();
                return true;
            }
            false
        });
        assert!(found, "serve did not start:\n{}", s.log());
        s
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    fn signal(&self, sig: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.child.id() as i32), sig).unwrap();
    }

    /// Waits up to `secs` for the process to exit; its exit code.
    fn wait(&mut self, secs: f64) -> Option<i32> {
        let end = Instant::now() + Duration::from_secs_f64(secs);
        while Instant::now() < end {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `http_client.py URL TOKEN ARGS...` with a time limit; its status and last stdout
/// line as JSON.
fn py(url: &str, token: &str, args: &[&str], secs: u64) -> (bool, Value) {
    let out = py_child(url, token, args).wait_with_timeout(secs);
    parse_py(&out)
}

fn py_child(url: &str, token: &str, args: &[&str]) -> Child {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/http_client.py");
    Command::new(clients_dir().join("py/bin/python"))
        .arg(script)
        .arg(url)
        .arg(token)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the MCP Python SDK client")
}

fn parse_py(out: &Output) -> (bool, Value) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    let v = serde_json::from_str(last).unwrap_or_else(|_| {
        panic!(
            "the client printed no JSON ({:?})\n--- stdout\n{stdout}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.success(), v)
}

trait WaitTimeout {
    fn wait_with_timeout(self, secs: u64) -> Output;
}

impl WaitTimeout for Child {
    /// `wait_with_output`, but the child is killed after `secs`.
    fn wait_with_timeout(mut self, secs: u64) -> Output {
        let pid = self.id();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            if rx.recv_timeout(Duration::from_secs(secs)).is_err() {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        });
        let mut stdout = String::new();
        let mut stderr = String::new();
        self.stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .unwrap();
        self.stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = self.wait().unwrap();
        let _ = tx.send(());
        Output {
            status,
            stdout: stdout.into_bytes(),
            stderr: stderr.into_bytes(),
        }
    }
}

/// A raw HTTP/1.1 response.
#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|_| panic!("not JSON: {self:?}"))
    }
}

/// One request on its own connection; `headers` as `Name: value`; the Host header is
/// 127.0.0.1 unless given.
fn request(addr: &str, method: &str, path: &str, headers: &[&str], body: &str) -> Reply {
    let mut conn = TcpStream::connect(addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    send(&mut conn, method, path, headers, body, true);
    let mut reader = BufReader::new(conn);
    read_reply(&mut reader, true)
}

fn send(conn: &mut TcpStream, method: &str, path: &str, headers: &[&str], body: &str, close: bool) {
    let mut req = format!("{method} {path} HTTP/1.1\r\n");
    if !headers
        .iter()
        .any(|h| h.to_ascii_lowercase().starts_with("host:"))
    {
        req.push_str("Host: 127.0.0.1\r\n");
    }
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    if close {
        req.push_str("Connection: close\r\n");
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    // The body may be refused before it is all read: a failed write is not an error here.
    let _ = conn.write_all(req.as_bytes());
    let _ = conn.write_all(body.as_bytes());
}

/// Reads one response: to the end of the connection when `to_end`, else by its
/// Content-Length.
fn read_reply(reader: &mut BufReader<TcpStream>, to_end: bool) -> Reply {
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {line:?}"));
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (k, v) = l.split_once(':').unwrap();
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    let len = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .map(|(_, v)| v.parse::<usize>().unwrap());
    let mut body = Vec::new();
    match len {
        Some(n) if !to_end => {
            body.resize(n, 0);
            reader.read_exact(&mut body).unwrap();
        }
        _ => {
            let _ = reader.read_to_end(&mut body);
        }
    }
    Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

const AUTH: &str = "Authorization: Bearer test-token-0123456789abcdef";
const MCP: [&str; 3] = [
    AUTH,
    "Content-Type: application/json",
    "Accept: application/json, text/event-stream",
];

fn initialize(id: u32) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string()
}

fn call(id: u32, tool: &str, args: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": args}})
    .to_string()
}

#[test]
fn list_and_call_with_the_python_sdk() {
    let s = Serve::start(&[]);
    // `legacy`: initialize and a session; `auto`: the SDK's default (server/discover,
    // then 2026-07-28 requests without a session).
    for mode in ["legacy", "auto"] {
        let (ok, v) = py(&s.url(), TOKEN, &["smoke", mode], 60);
        assert!(ok && v["ok"] == true, "{mode}: {v}\n{}", s.log());
        assert_eq!(v["progress"], 2, "{mode}: progress updates: {v}");
    }
    // A session id comes with the initialize answer.
    let r = request(&s.addr, "POST", "/mcp", &MCP, &initialize(1));
    assert_eq!(r.status, 200, "{r:?}");
    assert!(
        r.header("mcp-session-id").is_some_and(|id| id.len() >= 16),
        "{r:?}"
    );
    assert!(r.body.contains("\"serverInfo\""), "{r:?}");
}

#[test]
fn the_bearer_token_is_required() {
    let s = Serve::start(&[]);
    for token in ["-", "not-the-token-at-all"] {
        let (ok, v) = py(&s.url(), token, &["refused", "legacy"], 60);
        assert!(ok, "{v}");
        assert!(v["error"].as_str().unwrap().contains("Unauthorized"), "{v}");
    }
    for auth in [
        None,
        Some("Authorization: Bearer nope"),
        Some("Authorization: Basic dGVzdA=="),
    ] {
        let mut headers = vec![
            "Content-Type: application/json",
            "Accept: application/json, text/event-stream",
        ];
        headers.extend(auth);
        let r = request(&s.addr, "POST", "/mcp", &headers, &initialize(1));
        assert_eq!(r.status, 401, "{auth:?}: {r:?}");
        assert!(
            r.header("www-authenticate").unwrap().starts_with("Bearer"),
            "{r:?}"
        );
        assert_eq!(r.json()["error"]["code"], -32001, "{r:?}");
    }
    // The health endpoint needs no token and says how many tools are served.
    let r = request(&s.addr, "GET", "/healthz", &[], "");
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["status"], "ok");
    assert_eq!(r.json()["tools"], 6);
    // Everything else is not found.
    assert_eq!(request(&s.addr, "GET", "/", &[AUTH], "").status, 404);
    let log = s.log();
    assert!(log.contains("bearer token: from $TOOLBIND_TOKEN"), "{log}");
    assert!(!log.contains(TOKEN), "the token was logged:\n{log}");
}

#[test]
fn a_token_file_or_a_generated_token() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, "from-a-file-0123456789\n").unwrap();
    let s = Serve::start_with(
        &["--auth-token-file", file.to_str().unwrap()],
        &[("TOOLBIND_TOKEN", TOKEN)],
        None,
    );
    // The file wins over the environment.
    let (ok, v) = py(&s.url(), "from-a-file-0123456789", &["smoke", "legacy"], 60);
    assert!(ok, "{v}");
    let (ok, _) = py(&s.url(), TOKEN, &["refused", "legacy"], 60);
    assert!(ok);
    drop(s);

    // Neither: a token is generated into a 0600 file under XDG_RUNTIME_DIR, named on
    // stderr, never printed.
    let s = Serve::start_with(&[], &[], None);
    // The token's line comes after the "serving" line that start_with waits for.
    let mut log = s.log();
    for _ in 0..100 {
        if log.contains("bearer token:") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        log = s.log();
    }
    let path = s._tmp.path().join("run/toolbind/http-token");
    assert!(
        log.contains(&format!("generated into {}", path.display())),
        "{log}"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let token = std::fs::read_to_string(&path).unwrap().trim().to_string();
    assert_eq!(token.len(), 64);
    assert!(!log.contains(&token), "the token was logged:\n{log}");
    let (ok, v) = py(&s.url(), &token, &["smoke", "auto"], 60);
    assert!(ok, "{v}");
}

#[test]
fn origin_and_host_are_checked() {
    let s = Serve::start(&[
        "--allowed-origin",
        "https://app.example.com",
        "--allowed-host",
        "tools.example.com",
    ]);
    let (ok, v) = py(
        &s.url(),
        TOKEN,
        &["refused", "legacy", "Origin: https://evil.example"],
        60,
    );
    assert!(ok, "{v}");
    assert!(v["error"].as_str().unwrap().contains("Origin"), "{v}");
    let with = |extra: &[&'static str]| {
        let mut h = MCP.to_vec();
        h.extend_from_slice(extra);
        request(&s.addr, "POST", "/mcp", &h, &initialize(1))
    };
    // A foreign Origin gets 403 before the token is even looked at.
    let r = request(
        &s.addr,
        "POST",
        "/mcp",
        &[
            "Origin: https://evil.example",
            "Content-Type: application/json",
        ],
        &initialize(1),
    );
    assert_eq!(r.status, 403, "{r:?}");
    assert_eq!(with(&["Origin: https://app.example.com"]).status, 200);
    assert_eq!(with(&["Origin: http://app.example.com"]).status, 403);
    // Host: loopback names and the allowed ones.
    assert_eq!(with(&["Host: evil.example"]).status, 403);
    assert_eq!(with(&["Host: tools.example.com"]).status, 200);
    assert_eq!(with(&["Host: localhost:1234"]).status, 200);
    // Only the loopback names: another loopback address is a name like any other.
    let r = with(&["Host: 127.0.0.2"]);
    assert_eq!(r.status, 403);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--allowed-host"),
        "{r:?}"
    );
}

#[test]
fn limits_on_bodies_calls_and_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let s = Serve::start(&[
        "--max-request-bytes",
        "2048",
        "--max-concurrent-calls",
        "1",
        "--max-sessions",
        "1",
        "--sandbox",
        "off",
    ]);
    // A body over the limit: 413 and a JSON-RPC error naming the flag.
    let big = call(1, "hello_sh", json!({"name": "x".repeat(4096)}));
    let r = request(&s.addr, "POST", "/mcp", &MCP, &big);
    assert_eq!(r.status, 413, "{r:?}");
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--max-request-bytes")
    );

    // One session is allowed; a second initialize gets 503 with Retry-After.
    let r = request(&s.addr, "POST", "/mcp", &MCP, &initialize(1));
    let session = format!("Mcp-Session-Id: {}", r.header("mcp-session-id").unwrap());
    let r = request(&s.addr, "POST", "/mcp", &MCP, &initialize(2));
    assert_eq!(r.status, 503, "{r:?}");
    assert_eq!(r.json()["id"], 2);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--max-sessions")
    );
    assert!(r.header("retry-after").is_some());

    // One call at a time: while one runs, another gets 429.
    let mut h = MCP.to_vec();
    h.push(&session);
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(request(&s.addr, "POST", "/mcp", &h, &note).status, 202);
    let pidfile = dir.path().join("pid");
    let slow = call(2, "wait_sh", json!({"pidfile": pidfile}));
    let (addr, h2) = (
        s.addr.clone(),
        h.iter().map(|x| x.to_string()).collect::<Vec<_>>(),
    );
    let running = std::thread::spawn(move || {
        let h: Vec<&str> = h2.iter().map(String::as_str).collect();
        request(&addr, "POST", "/mcp", &h, &slow)
    });
    assert!(eventually(10.0, || pidfile.exists()), "{}", s.log());
    let r = request(
        &s.addr,
        "POST",
        "/mcp",
        &h,
        &call(3, "hello_sh", json!({"name": "y"})),
    );
    assert_eq!(r.status, 429, "{r:?}");
    assert_eq!(r.json()["id"], 3);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--max-concurrent-calls")
    );
    let health = request(&s.addr, "GET", "/healthz", &[], "").json();
    assert_eq!(health["sessions"], 1, "{health}");
    assert_eq!(health["in_flight"], 1, "{health}");
    // Cancel the running call (notifications/cancelled) and the slot is free again.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2}})
    .to_string();
    assert_eq!(request(&s.addr, "POST", "/mcp", &h, &cancel).status, 202);
    let _ = running.join();
    assert!(
        eventually(10.0, || {
            request(
                &s.addr,
                "POST",
                "/mcp",
                &h,
                &call(4, "hello_sh", json!({"name": "z"})),
            )
            .body
            .contains("Hello, z!")
        }),
        "{}",
        s.log()
    );
}

#[test]
fn the_session_limit_holds_under_concurrent_initializes() {
    let s = Serve::start(&["--max-sessions", "3"]);
    // Without the server's one-at-a-time opening, 4 of 40 got through in one run of 3.
    let answers: Vec<u16> = (0..40)
        .map(|i| {
            let addr = s.addr.clone();
            std::thread::spawn(move || request(&addr, "POST", "/mcp", &MCP, &initialize(i)).status)
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    assert_eq!(
        answers.iter().filter(|s| **s == 200).count(),
        3,
        "{answers:?}"
    );
    assert_eq!(
        answers.iter().filter(|s| **s == 503).count(),
        37,
        "{answers:?}"
    );
    let health = request(&s.addr, "GET", "/healthz", &[], "").json();
    assert_eq!(health["sessions"], 3, "{health}");
}

#[test]
fn stateless_mode() {
    let s = Serve::start(&["--stateless"]);
    for mode in ["legacy", "auto"] {
        let (ok, v) = py(&s.url(), TOKEN, &["smoke", mode], 60);
        assert!(ok && v["ok"] == true, "{mode}: {v}\n{}", s.log());
    }
    // No session: initialize answers without an id, any request stands alone (as JSON),
    // and there is no GET stream.
    let r = request(&s.addr, "POST", "/mcp", &MCP, &initialize(1));
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.header("mcp-session-id").is_none(), "{r:?}");
    // Nothing to hold a resource subscription in: not offered, and refused.
    let caps = &r.json()["result"]["capabilities"];
    assert!(caps["resources"].is_object(), "{r:?}");
    assert_eq!(caps["resources"].get("subscribe"), None, "{r:?}");
    let sub = json!({"jsonrpc": "2.0", "id": 8, "method": "resources/subscribe",
        "params": {"uri": "toolbind://tools/hello_sh"}});
    let r = request(&s.addr, "POST", "/mcp", &MCP, &sub.to_string());
    assert_eq!(r.json()["error"]["code"], -32601, "{r:?}");
    let r = request(
        &s.addr,
        "POST",
        "/mcp",
        &MCP,
        &call(7, "hello_sh", json!({"name": "s"})),
    );
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert!(
        r.json()["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Hello, s!")
    );
    let r = request(
        &s.addr,
        "GET",
        "/mcp",
        &[AUTH, "Accept: text/event-stream"],
        "",
    );
    assert_eq!(r.status, 405, "{r:?}");
}

/// A tool that sleeps `secs` seconds, beside the fixtures.
fn tools_with_sleep(dir: &Path) -> PathBuf {
    let tools = dir.join("tools");
    for name in ["wait_sh", "hello_sh"] {
        let to = tools.join(name);
        std::fs::create_dir_all(&to).unwrap();
        for f in ["TOOL.md", "index.sh"] {
            std::fs::copy(fixture("tools").join(name).join(f), to.join(f)).unwrap();
        }
    }
    let sleep = tools.join("sleep_sh");
    std::fs::create_dir_all(&sleep).unwrap();
    std::fs::write(
        sleep.join("TOOL.md"),
        "---\nname: sleep_sh\ndescription: Sleeps, then says so.\nlanguage: bash\ninputs:\n  secs:\n    type: number\n    description: How long.\n  started:\n    type: string\n    description: A file to create once the sleep starts.\n---\n\n# Sleep\n",
    )
    .unwrap();
    std::fs::write(
        sleep.join("index.sh"),
        "#!/usr/bin/env bash\nparams=$(cat)\nsecs=$(printf '%s' \"$params\" | sed -n 's/.*\"secs\":\\([0-9.]*\\).*/\\1/p')\nstarted=$(printf '%s' \"$params\" | sed -n 's/.*\"started\":\"\\([^\"]*\\)\".*/\\1/p')\n[ -n \"$started\" ] && : > \"$started\"\nsleep \"$secs\"\necho \"slept $secs\"\n",
    )
    .unwrap();
    tools
}

#[test]
fn sigterm_drains_then_cancels() {
    let dir = tempfile::tempdir().unwrap();
    let tools = tools_with_sleep(dir.path());
    let mut s = Serve::start_with(
        &["--sandbox", "off", "--drain-timeout", "4"],
        &[("TOOLBIND_TOKEN", TOKEN)],
        Some(&tools),
    );
    // A keep-alive connection opened before the drain: its next request gets 503.
    let mut kept = TcpStream::connect(&s.addr).unwrap();
    kept.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    send(&mut kept, "GET", "/healthz", &[], "", false);
    let mut kept_reader = BufReader::new(kept.try_clone().unwrap());
    assert_eq!(read_reply(&mut kept_reader, false).status, 200);

    let pidfile = dir.path().join("pid");
    let asleep = dir.path().join("asleep");
    let short = py_child(
        &s.url(),
        TOKEN,
        &[
            "call",
            "legacy",
            "sleep_sh",
            &json!({"secs": 2, "started": asleep}).to_string(),
        ],
    );
    let long = py_child(
        &s.url(),
        TOKEN,
        &[
            "call",
            "legacy",
            "wait_sh",
            &json!({"pidfile": pidfile}).to_string(),
        ],
    );
    // Both tools are running (not merely two requests in flight: one client's
    // `initialize` and the other's call would count 2 too).
    let in_flight = || request(&s.addr, "GET", "/healthz", &[], "").json()["in_flight"] == 2;
    assert!(
        eventually(20.0, || pidfile.exists() && asleep.exists() && in_flight()),
        "{}",
        s.log()
    );
    let started = Instant::now();
    s.signal(nix::sys::signal::Signal::SIGTERM);
    assert!(
        eventually(10.0, || s.log().contains("draining:")),
        "{}",
        s.log()
    );
    send(&mut kept, "POST", "/mcp", &MCP, &initialize(9), false);
    let r = read_reply(&mut kept_reader, false);
    assert_eq!(r.status, 503, "{r:?}");
    assert!(r.body.contains("shutting down"), "{r:?}");
    // New connections are refused.
    assert!(TcpStream::connect(&s.addr).is_err());

    // The short call finishes; the long one is cancelled at the deadline; the process
    // exits (143) soon after.
    let (_, short) = parse_py(&short.wait_with_timeout(30));
    assert_eq!(short["text"], "slept 2", "{short}\n{}", s.log());
    let (_, long) = parse_py(&long.wait_with_timeout(30));
    assert!(long["text"] != "waited 30 s", "{long}");
    // It is answered, not dropped: an error result saying the server shut down.
    assert_eq!(long["is_error"], true, "{long}\n{}", s.log());
    assert!(
        long["text"]
            .as_str()
            .is_some_and(|t| t.contains("the server shut down before the call finished")),
        "{long}\n{}",
        s.log()
    );
    // A hang guard: the long call alone would keep a server that did not cancel it at
    // the deadline for 30 s (its answer above says it was cancelled).
    let code = s.wait(60.0);
    let took = started.elapsed();
    assert_eq!(
        code,
        Some(143),
        "the server did not exit within 60 s: {}",
        s.log()
    );
    assert!(
        took >= Duration::from_secs(3),
        "exited after {took:?}: no drain?"
    );
    let log = s.log();
    assert!(log.contains("draining: 2 requests in flight"), "{log}");
    assert!(log.contains("drain ended: cancelling 1 request"), "{log}");
    // The cancelled tool's process is gone.
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        eventually(5.0, || !Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z "))),
        "the tool process {pid} outlived the server"
    );
}

#[test]
fn a_bounded_load_test_loses_nothing() {
    let s = Serve::start(&[]);
    // 16 concurrent clients (a session each) x 200 calls of a warm TypeScript tool.
    let (ok, v) = py(&s.url(), TOKEN, &["load", "legacy", "16", "200"], 120);
    assert!(ok, "{v}\n{}", s.log());
    assert_eq!(v["ok"], 3200, "{v}");
    assert_eq!(v["failed"], 0, "{v}");
    eprintln!("load: {v}");
}

#[test]
fn browser_pages_of_an_allowed_origin_get_cors() {
    let s = Serve::start(&["--allowed-origin", "https://app.example.com"]);
    // The preflight: no token (browsers never send one on it), the allowed methods and
    // headers, for the allowed Origin only.
    let pre = |origin: &'static str| {
        request(
            &s.addr,
            "OPTIONS",
            "/mcp",
            &[
                origin,
                "Access-Control-Request-Method: POST",
                "Access-Control-Request-Headers: authorization, content-type, mcp-session-id",
            ],
            "",
        )
    };
    let r = pre("Origin: https://app.example.com");
    assert_eq!(r.status, 204, "{r:?}");
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("https://app.example.com")
    );
    let allowed = r.header("access-control-allow-headers").unwrap();
    for h in ["authorization", "content-type", "mcp-session-id"] {
        assert!(allowed.contains(h), "{r:?}");
    }
    assert_eq!(pre("Origin: https://evil.example").status, 403);
    // The real request: the page can read the answer and the session id.
    let mut h = MCP.to_vec();
    h.push("Origin: https://app.example.com");
    let r = request(&s.addr, "POST", "/mcp", &h, &initialize(1));
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("https://app.example.com")
    );
    assert!(
        r.header("access-control-expose-headers")
            .unwrap()
            .contains("Mcp-Session-Id"),
        "{r:?}"
    );
    // No Origin (not a browser): no CORS headers.
    let r = request(&s.addr, "POST", "/mcp", &MCP, &initialize(2));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("access-control-allow-origin"), None);
}

#[test]
fn ambiguous_hosts_and_floods_of_refusals() {
    let s = Serve::start(&[]);
    // Two Host headers: which one did a proxy check? Refused.
    let mut h = MCP.to_vec();
    h.extend(["Host: 127.0.0.1", "Host: evil.example"]);
    assert_eq!(
        request(&s.addr, "POST", "/mcp", &h, &initialize(1)).status,
        403
    );
    // An absolute-form target names a host the Host check would not see.
    let r = request(
        &s.addr,
        "POST",
        "http://evil.example/mcp",
        &MCP,
        &initialize(1),
    );
    assert_eq!(r.status, 400, "{r:?}");
    // 40 requests without a token: at most 20 log lines in a 10 s window.
    for _ in 0..40 {
        let r = request(
            &s.addr,
            "POST",
            "/mcp",
            &["Content-Type: application/json"],
            &initialize(1),
        );
        assert_eq!(r.status, 401);
    }
    let lines = s.log().matches("refused a request from").count();
    assert_eq!(lines, 20, "{}", s.log());
}

#[test]
fn unusable_and_untrusted_tokens() {
    // A token with a second line could never be sent in a header: refused at start.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("two-lines");
    std::fs::write(&file, "line1tokenaaaaaaaaaaa\nline2tokenbbbbbbbbbbbb\n").unwrap();
    let out = Command::new(bin())
        .args(["serve", "--dir"])
        .arg(fixture("tools"))
        .args(["--http", "127.0.0.1:0", "--auth-token-file"])
        .arg(&file)
        .env_remove("TOOLBIND_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot carry"), "{err}");

    // A generated-token folder others can write is made private; a token file there that
    // is not ours (or not one we wrote) is replaced, not reused.
    let run = dir.path().join("run");
    let folder = run.join("toolbind");
    std::fs::create_dir_all(&folder).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
    let planted = folder.join("http-token");
    std::fs::write(
        &planted,
        "planted token, not hex: zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\n",
    )
    .unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o600)).unwrap();
    let s = Serve::start_with(&[], &[("XDG_RUNTIME_DIR", run.to_str().unwrap())], None);
    assert!(s.log().contains("generated into"), "{}", s.log());
    let mode = std::fs::metadata(&folder).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    let token = std::fs::read_to_string(&planted).unwrap();
    assert!(!token.contains("planted"));
}

/// The `_meta` every 2026-07-28 request carries.
fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A 2026-07-28 request's headers: MCP's, the revision, the method (and name).
fn modern_headers(origin: &'static str, method: &str, name: Option<&str>) -> Vec<String> {
    let mut h: Vec<String> = MCP.iter().map(|s| s.to_string()).collect();
    h.push(origin.into());
    h.push("MCP-Protocol-Version: 2026-07-28".into());
    h.push(format!("Mcp-Method: {method}"));
    if let Some(n) = name {
        h.push(format!("Mcp-Name: {n}"));
    }
    h
}

#[test]
fn a_loopback_server_serves_browser_pages_of_loopback_origins() {
    // No --allowed-origin: the MCP Inspector's web UI (http://localhost:6274) connects
    // to a server on loopback with the token alone.
    let s = Serve::start(&[]);
    const INSPECTOR: &str = "Origin: http://localhost:6274";
    let pre = request(
        &s.addr,
        "OPTIONS",
        "/mcp",
        &[
            INSPECTOR,
            "Access-Control-Request-Method: POST",
            "Access-Control-Request-Headers: authorization, content-type, mcp-protocol-version, \
             mcp-method, mcp-name, mcp-param-region, x-evil",
        ],
        "",
    );
    assert_eq!(pre.status, 204, "{pre:?}");
    assert_eq!(
        pre.header("access-control-allow-origin"),
        Some("http://localhost:6274")
    );
    let allowed: Vec<&str> = pre
        .header("access-control-allow-headers")
        .unwrap()
        .split(", ")
        .collect();
    for h in [
        "authorization",
        "content-type",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "mcp-param-region",
    ] {
        assert!(allowed.contains(&h), "{h}: {pre:?}");
    }
    // A header toolbind does not take is not allowed, and nothing is a wildcard.
    assert!(!allowed.contains(&"x-evil"), "{pre:?}");
    assert!(!allowed.contains(&"*"), "{pre:?}");
    assert!(pre.header("vary").unwrap().contains("Origin"), "{pre:?}");

    // 2025-11-25: initialize from the page.
    let mut h = MCP.to_vec();
    h.push(INSPECTOR);
    let r = request(&s.addr, "POST", "/mcp", &h, &initialize(1));
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("http://localhost:6274")
    );
    // 2026-07-28: no session; a request names its revision in headers and `_meta`.
    let h = modern_headers(INSPECTOR, "tools/list", None);
    let h: Vec<&str> = h.iter().map(String::as_str).collect();
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
        "params": {"_meta": modern_meta()}});
    let r = request(&s.addr, "POST", "/mcp", &h, &body.to_string());
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.body.contains("\"tools\""), "{r:?}");
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("http://localhost:6274")
    );

    // Foreign pages and hosts are still refused, preflight included.
    for origin in [
        "Origin: http://evil.example",
        "Origin: http://localhost.evil.example",
    ] {
        let mut h = MCP.to_vec();
        h.push(origin);
        assert_eq!(
            request(&s.addr, "POST", "/mcp", &h, &initialize(3)).status,
            403
        );
        let pre = request(&s.addr, "OPTIONS", "/mcp", &[origin], "");
        assert_eq!(pre.status, 403, "{pre:?}");
        assert_eq!(pre.header("access-control-allow-origin"), None);
    }
    let mut h = MCP.to_vec();
    h.extend([INSPECTOR, "Host: evil.example"]);
    assert_eq!(
        request(&s.addr, "POST", "/mcp", &h, &initialize(4)).status,
        403
    );
}

#[test]
fn a_server_listening_on_all_interfaces_needs_allowed_origins() {
    let s = Serve::start_with(&["--http", "0.0.0.0:0"], &[("TOOLBIND_TOKEN", TOKEN)], None);
    let port = s.addr.rsplit(':').next().unwrap();
    let addr = format!("127.0.0.1:{port}");
    let mut h = MCP.to_vec();
    h.push("Origin: http://localhost:6274");
    let r = request(&addr, "POST", "/mcp", &h, &initialize(1));
    assert_eq!(r.status, 403, "{r:?}");
    assert!(r.body.contains("loopback address"), "{r:?}");
}

#[test]
fn revision_2026_07_28_has_no_set_level_and_logs_only_when_asked() {
    // The conformance suite's fixtures: `test_logging_tool` writes one stderr line.
    let conformance = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance/tools");
    let s = Serve::start_with(&[], &[("TOOLBIND_TOKEN", TOKEN)], Some(&conformance));
    // logging/setLevel was removed: 404 and -32601, whatever its params.
    for params in [
        json!({"level": "debug", "_meta": modern_meta()}),
        json!({"_meta": modern_meta()}),
    ] {
        let h = modern_headers("X-No-Origin: 1", "logging/setLevel", None);
        let h: Vec<&str> = h.iter().map(String::as_str).collect();
        let body =
            json!({"jsonrpc": "2.0", "id": 5, "method": "logging/setLevel", "params": params});
        let r = request(&s.addr, "POST", "/mcp", &h, &body.to_string());
        assert_eq!(r.status, 404, "{r:?}");
        assert_eq!(r.json()["error"]["code"], -32601, "{r:?}");
        assert_eq!(r.json()["id"], 5, "{r:?}");
    }
    // A call of a tool that writes to stderr: log messages only when the request names
    // a level.
    let logged = |meta: Value| {
        let h = modern_headers("X-No-Origin: 1", "tools/call", Some("test_logging_tool"));
        let h: Vec<&str> = h.iter().map(String::as_str).collect();
        let body = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
            "params": {"name": "test_logging_tool", "arguments": {}, "_meta": meta}});
        let r = request(&s.addr, "POST", "/mcp", &h, &body.to_string());
        assert_eq!(r.status, 200, "{r:?}");
        assert!(r.body.contains("\"result\""), "{r:?}");
        r.body.contains("notifications/message")
    };
    assert!(
        !logged(modern_meta()),
        "a message without a level asked for"
    );
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/logLevel"] = json!("debug");
    assert!(logged(meta), "no message at level debug:\n{}", s.log());
}

#[test]
fn tasks_over_stateless_http_are_polled_by_later_requests_on_the_same_replica() {
    let tools = fixture("task_tools");
    let s = Serve::start_with(&["--stateless"], &[("TOOLBIND_TOKEN", TOKEN)], Some(&tools));
    let other = Serve::start_with(&["--stateless"], &[("TOOLBIND_TOKEN", TOKEN)], Some(&tools));
    // A 2026-07-28 request takes tasks by saying so in its own `_meta`.
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let post = |s: &Serve, id: u32, method: &str, name: &str, params: Value| {
        let h = modern_headers("X-No-Origin: 1", method, Some(name));
        let h: Vec<&str> = h.iter().map(String::as_str).collect();
        let mut params = params;
        params["_meta"] = meta.clone();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let r = request(&s.addr, "POST", "/mcp", &h, &body.to_string());
        assert_eq!(r.status, 200, "{r:?}\n{}", s.log());
        r.json()
    };
    let created = post(
        &s,
        1,
        "tools/call",
        "job_py",
        json!({"name": "job_py", "arguments": {"seconds": 0.5}}),
    );
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    let mut id = 10;
    let done = loop {
        id += 1;
        let got = post(&s, id, "tasks/get", &task, json!({"taskId": task}));
        if got["result"]["status"] != "working" {
            break got;
        }
        assert!(id < 200, "the task never ended: {got}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["result"]["content"][0]["text"], "worked 0.5 s",
        "{done}"
    );
    // Over HTTP a plain call does not queue behind tasks that hold every slot: refused.
    let slow = Serve::start_with(
        &["--stateless", "--max-concurrent-calls", "1"],
        &[("TOOLBIND_TOKEN", TOKEN)],
        Some(&tools),
    );
    let long = post(
        &slow,
        3,
        "tools/call",
        "job_sh",
        json!({"name": "job_sh", "arguments": {"seconds": 15}}),
    );
    let long = long["result"]["taskId"].as_str().unwrap().to_owned();
    let mut id = 300;
    loop {
        id += 1;
        let got = post(&slow, id, "tasks/get", &long, json!({"taskId": long}));
        if !got["result"]["statusMessage"]
            .as_str()
            .is_some_and(|m| m.starts_with("queued"))
        {
            break;
        }
        assert!(id < 500, "the task never started: {got}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let h = modern_headers("X-No-Origin: 1", "tools/call", Some("job_py"));
    let h: Vec<&str> = h.iter().map(String::as_str).collect();
    let plain = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "job_py", "arguments": {"seconds": 0}, "_meta": modern_meta()}});
    let r = request(&slow.addr, "POST", "/mcp", &h, &plain.to_string());
    let refused = r.json();
    assert_eq!(refused["error"]["code"], -32000, "{r:?}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--max-concurrent-calls"),
        "{refused}"
    );
    post(&slow, 5, "tasks/cancel", &long, json!({"taskId": long}));
    // Another replica does not have it: the reason tasks need affinity.
    let elsewhere = post(&other, 2, "tasks/get", &task, json!({"taskId": task}));
    assert_eq!(elsewhere["error"]["code"], -32602, "{elsewhere}");
    assert!(
        elsewhere["error"]["message"]
            .as_str()
            .unwrap()
            .contains("found only on the server that made it"),
        "{elsewhere}"
    );
}

/// The JSON-RPC answer of id `id` in a reply: its body, or one of its SSE events.
fn answer_of(r: &Reply, id: u32) -> Value {
    if let Ok(v) = serde_json::from_str::<Value>(&r.body) {
        return v;
    }
    r.body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|v| v["id"] == id)
        .unwrap_or_else(|| panic!("no answer to {id} in {r:?}"))
}

/// A task created in one session takes `tasks/update` answers only from that session:
/// another client holding the token cannot approve what this one's tool asks, even with
/// the task's id. It can still read it (`tasks/get` is open to whoever has the id).
#[test]
fn a_task_takes_answers_only_from_the_session_that_created_it() {
    let tools = fixture("task_tools");
    let s = Serve::start_with(&[], &[("TOOLBIND_TOKEN", TOKEN)], Some(&tools));
    let open = || {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
            "clientInfo": {"name": "raw", "version": "1"}}});
        let r = request(&s.addr, "POST", "/mcp", &MCP, &init.to_string());
        assert_eq!(r.status, 200, "{r:?}");
        let session = format!("Mcp-Session-Id: {}", r.header("mcp-session-id").unwrap());
        let mut h: Vec<String> = MCP.iter().map(|x| x.to_string()).collect();
        h.push(session);
        h.push("MCP-Protocol-Version: 2025-11-25".into());
        let hs: Vec<&str> = h.iter().map(String::as_str).collect();
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
        assert_eq!(request(&s.addr, "POST", "/mcp", &hs, &note).status, 202);
        h
    };
    let post = |h: &[String], id: u32, method: &str, params: Value| {
        let hs: Vec<&str> = h.iter().map(String::as_str).collect();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let r = request(&s.addr, "POST", "/mcp", &hs, &body.to_string());
        assert_eq!(r.status, 200, "{r:?}\n{}", s.log());
        answer_of(&r, id)
    };
    let (mine, theirs) = (open(), open());
    let created = post(
        &mine,
        2,
        "tools/call",
        json!({"name": "approve_task", "arguments": {}}),
    );
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    let mut id = 10;
    let waiting = loop {
        id += 1;
        let got = post(&mine, id, "tasks/get", json!({"taskId": task}));
        if got["result"]["status"] != "working" {
            break got;
        }
        assert!(id < 200, "the task never asked: {got}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(waiting["result"]["status"], "input_required", "{waiting}");
    let yes = json!({"taskId": task, "inputResponses": {"approval": {"action": "accept", "content": {"approve": true}}}});
    let refused = post(&theirs, 3, "tasks/update", yes.clone());
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("created in another session"),
        "{refused}"
    );
    // Readable by the other session, and still waiting for its own.
    let seen = post(&theirs, 4, "tasks/get", json!({"taskId": task}));
    assert_eq!(seen["result"]["status"], "input_required", "{seen}");
    let ack = post(&mine, 5, "tasks/update", yes);
    assert!(ack["result"].is_object(), "{ack}");
    let done = loop {
        id += 1;
        let got = post(&mine, id, "tasks/get", json!({"taskId": task}));
        if !matches!(
            got["result"]["status"].as_str(),
            Some("working" | "input_required")
        ) {
            break got;
        }
        assert!(id < 400, "the task never ended: {got}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(
        done["result"]["result"]["content"][0]["text"]
            .as_str()
            .map(str::trim),
        Some("approved and ran"),
        "{done}"
    );
}
