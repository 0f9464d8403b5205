//! The OAuth client's costs (issue 55), against a real authorization server and a real
//! protected MCP server (`cli/tests/fixtures/oauth/server.mjs`: oidc-provider in front of
//! the MCP TypeScript SDK's server, which introspects every token):
//! - a call with the kept token against the same call with that token given as a static
//!   bearer (`McpServer::bearer`): what toolbind's token handling costs a call;
//! - a login, browser step driven by the fixture, to the first call's result.
//!
//! `cargo bench -p toolbind --features mcp-http --bench oauth` (needs
//! `tests/clients/install.sh`). Alternating rounds; prints a Markdown table of medians.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolbind::host::{Answer, ApprovalRequest, Decision, Host, LoginRequest, LoginStep, Refusal};
use toolbind::mcp::{McpServer, OAuth};
use toolbind::{CallOptions, Runtime};

const ROUNDS: usize = 21;
const CALLS: usize = 30;
const LOGINS: usize = 5;

fn clients() -> PathBuf {
    match std::env::var_os("TOOLBIND_CLIENTS").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/toolbind/clients"),
    }
}

/// The fixture, killed when dropped.
struct Fixture {
    child: Child,
    mcp: String,
    web: String,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(dir: &Path) -> Fixture {
    let c = clients();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/fixtures/oauth/server.mjs");
    let log = dir.join("fixture.log");
    let child = Command::new(c.join("conformance/node22/bin/node"))
        .arg(script)
        .env("NODE_MODULES", c.join("node/node_modules"))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("node 22 from tests/clients/install.sh");
    // Held at once: any panic below kills and reaps it.
    let mut f = Fixture {
        child,
        mcp: String::new(),
        web: String::new(),
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if let Some(line) = text.lines().find(|l| l.starts_with("ready ")) {
            f.mcp = line.split_whitespace().nth(1).unwrap().to_owned();
            f.web = f
                .mcp
                .trim_start_matches("http://")
                .split('/')
                .next()
                .unwrap()
                .to_owned();
            return f;
        }
        assert!(Instant::now() < deadline, "the fixture did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn get(address: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(address).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nhost: {address}\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[derive(Clone)]
struct Browser(String);

impl Host for Browser {
    fn approve(&self, _r: ApprovalRequest) -> Answer<Decision> {
        Box::pin(async { Decision::Approve })
    }

    fn login(&self, r: LoginRequest) -> Answer<Result<LoginStep, Refusal>> {
        let web = self.0.clone();
        Box::pin(async move {
            let path = format!("/browse?url={}", encode(&r.url));
            tokio::task::spawn_blocking(move || get(&web, &path))
                .await
                .unwrap();
            Ok(LoginStep::Opened)
        })
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

async fn calls(runtime: &Runtime) -> Duration {
    let t = Instant::now();
    for _ in 0..CALLS {
        let r = runtime.call("whoami", json!({}), CallOptions::new()).await;
        assert!(
            r.text_content().starts_with("alice"),
            "{}",
            r.text_content()
        );
    }
    t.elapsed() / CALLS as u32
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let f = start(dir.path());
    let browser = Browser(f.web.clone());

    // Login to the first call, from nothing kept (a new registration each time).
    let mut logins = Vec::new();
    let mut tokens = PathBuf::new();
    for i in 0..LOGINS {
        tokens = dir.path().join(format!("tokens-{i}"));
        let server = McpServer::http("secure", &f.mcp).oauth(OAuth::new().token_dir(&tokens));
        let t = Instant::now();
        toolbind::mcp::login(&server, Arc::new(browser.clone()))
            .await
            .unwrap();
        let runtime = Runtime::builder()
            .mcp_server(server)
            .mcp_strict(true)
            .connect()
            .await
            .unwrap();
        let r = runtime.call("whoami", json!({}), CallOptions::new()).await;
        assert!(r.text_content().starts_with("alice"));
        logins.push(t.elapsed());
    }

    // The kept token against the same token as a static bearer, same server.
    let file = std::fs::read_dir(&tokens)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    let record: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let token = record["access_token"].as_str().unwrap().to_owned();
    let oauth = Runtime::builder()
        .mcp_server(McpServer::http("secure", &f.mcp).oauth(OAuth::new().token_dir(&tokens)))
        .mcp_strict(true)
        .connect()
        .await
        .unwrap();
    let bearer = Runtime::builder()
        .mcp_server(McpServer::http("secure", &f.mcp).bearer(token))
        .mcp_strict(true)
        .connect()
        .await
        .unwrap();
    calls(&oauth).await;
    calls(&bearer).await;
    let (mut with_oauth, mut with_bearer) = (Vec::new(), Vec::new());
    // Alternating, and which goes first alternating too: drift cancels out.
    for round in 0..ROUNDS {
        if round % 2 == 0 {
            with_oauth.push(calls(&oauth).await);
            with_bearer.push(calls(&bearer).await);
        } else {
            with_bearer.push(calls(&bearer).await);
            with_oauth.push(calls(&oauth).await);
        }
    }
    let (o, b) = (median(with_oauth), median(with_bearer));
    drop((oauth, bearer));
    // The baseline: the TypeScript SDK's client with its OAuth provider, same fixture.
    let c = clients();
    let ts = Command::new(c.join("conformance/node22/bin/node"))
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/ts-oauth-client.mjs"))
        .args([&f.mcp, &f.web])
        .args([LOGINS, ROUNDS, CALLS].map(|n| n.to_string()))
        .env("NODE_MODULES", c.join("node/node_modules"))
        .output()
        .unwrap();
    assert!(
        ts.status.success(),
        "{}",
        String::from_utf8_lossy(&ts.stderr)
    );
    let ts: Value = serde_json::from_slice(&ts.stdout).unwrap();
    let ts_call = ts["call_ms"].as_f64().unwrap();
    let ts_login = ts["login_ms"].as_f64().unwrap();
    let login = median(logins).as_secs_f64() * 1e3;
    let (o, b) = (o.as_secs_f64() * 1e3, b.as_secs_f64() * 1e3);
    println!("| measure | toolbind | ratio | TypeScript SDK client | toolbind / TS |");
    println!("|---|---:|---:|---:|---:|");
    println!(
        "| call, static bearer | {b:.2} ms | 1.00 | | {:.2} |",
        b / ts_call
    );
    println!(
        "| call, kept OAuth token | {o:.2} ms | {:.3} | {ts_call:.2} ms | {:.2} |",
        o / b,
        o / ts_call
    );
    println!(
        "| login (discovery, registration, browser, token) to the first call's result | {login:.1} ms | | {ts_login:.1} ms | {:.2} |",
        login / ts_login
    );
    println!(
        "\n({ROUNDS} alternating rounds of {CALLS} calls; {LOGINS} logins; the TS client's rounds after toolbind's.)"
    );
}
