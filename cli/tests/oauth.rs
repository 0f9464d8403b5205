//! The OAuth 2.1 client against a real authorization server and a real protected MCP
//! server, neither written here: `oidc-provider` in front of the MCP TypeScript SDK's
//! Streamable HTTP server, which checks every token by introspection
//! (`fixtures/oauth/server.mjs`, the packages pinned in `tests/clients`). The person at the
//! browser is the fixture's `/browse`, which follows the authorization URL through sign-in
//! and consent to toolbind's loopback listener.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::{
    Background, assert_code, clients_dir, fixture, output_within, stderr, stdout, toolbind,
};
use serde_json::{Value, json};

/// The fixture: the MCP endpoint, the issuer, and the HTTP address of its test routes.
struct Fixture {
    _server: Background,
    mcp: String,
    issuer: String,
    web: String,
}

fn start(dir: &Path) -> Fixture {
    let clients = clients_dir();
    let mut cmd = Command::new(clients.join("conformance/node22/bin/node"));
    cmd.arg(fixture("oauth/server.mjs"))
        .env("NODE_MODULES", clients.join("node/node_modules"));
    let log = dir.join("fixture.log");
    let server = Background::start(cmd, log, "ready ");
    let line = server
        .log()
        .lines()
        .find(|l| l.starts_with("ready "))
        .unwrap()
        .to_owned();
    let mut words = line.split_whitespace().skip(1);
    let mcp = words.next().unwrap().to_owned();
    let issuer = words.next().unwrap().to_owned();
    let web = mcp
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    Fixture {
        _server: server,
        mcp,
        issuer,
        web,
    }
}

/// An HTTP/1.1 request to `127.0.0.1:port`, its body.
fn http(address: &str, method: &str, path: &str, form: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(address).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nhost: {address}\r\nconnection: close\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: {}\r\n\r\n{form}",
        form.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out.split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default()
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

impl Fixture {
    fn stats(&self) -> Value {
        serde_json::from_str(&http(&self.web, "GET", "/stats", "")).unwrap()
    }

    fn refreshes(&self) -> u64 {
        self.stats()["grants"]["refresh_token"]
            .as_u64()
            .unwrap_or(0)
    }

    /// The person at the browser, for an authorization URL.
    fn browse(&self, url: &str) -> Value {
        let body = http(
            &self.web,
            "GET",
            &format!("/browse?url={}", encode(url)),
            "",
        );
        serde_json::from_str(&body).unwrap_or_else(|_| json!({"raw": body}))
    }
}

/// A `toolbind` with its own state folder (where tokens are kept).
fn tb(state: &Path) -> Command {
    let mut c = toolbind();
    c.env("XDG_STATE_HOME", state)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY");
    c
}

fn run(cmd: Command, what: &str) -> Output {
    output_within(cmd, 120.0).unwrap_or_else(|| panic!("{what}: still running after 120 s"))
}

/// The one credential file in the state folder.
fn token_file(state: &Path) -> PathBuf {
    let dir = state.join("toolbind/mcp-oauth");
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

fn read_record(file: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

/// The access token made stale in the file, as if its hour had passed (the server still
/// takes it: the client decides to refresh on its own clock).
fn expire(file: &Path) {
    let mut r = read_record(file);
    r["expires_at"] = json!(1);
    std::fs::write(file, serde_json::to_vec(&r).unwrap()).unwrap();
}

/// Signs in with `toolbind mcp login`: the URL it prints is followed by the fixture.
fn login(f: &Fixture, state: &Path, config: &Path, server: &str) -> Output {
    use std::io::{BufRead, BufReader};
    let mut child = tb(state)
        // Every log line there is: none may show the code or a token.
        .env("RUST_LOG", "trace")
        .args([
            "mcp",
            "login",
            "--no-browser",
            "--timeout",
            "60",
            "--config",
        ])
        .arg(config)
        .arg(server)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    let url = loop {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            panic!("`mcp login` printed no URL:\n{said}");
        }
        said.push_str(&line);
        if let Some(u) = line.trim().strip_prefix(&format!("{}/auth?", f.issuer)) {
            break format!("{}/auth?{u}", f.issuer);
        }
    };
    let browsed = f.browse(&url);
    assert_eq!(browsed["status"], 200, "{browsed}");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    let mut out = child.wait_with_output().unwrap();
    out.stderr = format!("{said}{rest}").into_bytes();
    out
}

#[test]
fn a_person_signs_in_once_and_later_runs_use_and_refresh_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let f = start(dir.path());
    let state = dir.path().join("state");
    let config = dir.path().join(".mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"secure": {"url": f.mcp}}}).to_string(),
    )
    .unwrap();
    let mut said = String::new();

    // Before a login: the server needs one, and `list` says which command.
    let o = run(
        {
            let mut c = tb(&state);
            c.args(["list", "--mcp-wait", "20", "--mcp-config"])
                .arg(&config);
            c
        },
        "list",
    );
    assert_code(&o, 1);
    assert!(
        stdout(&o).contains("needs a login") && stdout(&o).contains("toolbind mcp login --config"),
        "{}",
        stdout(&o)
    );
    said += &format!("{}{}", stdout(&o), stderr(&o));

    // The login: registration, PKCE, the browser, the code exchanged; the token kept 0600.
    let o = login(&f, &state, &config, "secure");
    assert_code(&o, 0);
    assert!(stderr(&o).contains("Signed in: `secure`"), "{}", stderr(&o));
    said += &format!("{}{}", stdout(&o), stderr(&o));
    let file = token_file(&state);
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let first = read_record(&file);
    assert_eq!(first["resource"], f.mcp.as_str());
    assert_eq!(first["issuer"], f.issuer.as_str());
    assert!(first["refresh_token"].is_string(), "{first}");

    // Later runs use it: the server's introspection says whose it is.
    let o = run(
        {
            let mut c = tb(&state);
            c.args(["call", "whoami", "--mcp-config"]).arg(&config);
            c
        },
        "call",
    );
    assert_code(&o, 0);
    assert!(stdout(&o).starts_with("alice mcp:tools"), "{}", stdout(&o));
    said += &format!("{}{}", stdout(&o), stderr(&o));
    let o = run(
        {
            let mut c = tb(&state);
            c.args(["mcp", "status", "--json", "--config"]).arg(&config);
            c
        },
        "status",
    );
    assert_code(&o, 0);
    let status: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(status[0]["signed_in"], true, "{status}");
    assert_eq!(status[0]["refreshable"], true, "{status}");
    said += &stdout(&o);

    // Twelve calls at once, in twelve processes, with the token expired: one refresh.
    expire(&file);
    assert_eq!(f.refreshes(), 0);
    let calls: Vec<_> = (0..12)
        .map(|_| {
            let mut c = tb(&state);
            c.args(["call", "whoami", "--mcp-config"])
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            c.spawn().unwrap()
        })
        .collect();
    // While they run, no token is on any process's command line.
    let secrets = [
        first["access_token"].as_str().unwrap().to_owned(),
        first["refresh_token"].as_str().unwrap().to_owned(),
    ];
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let argv = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let argv = String::from_utf8_lossy(&argv);
        assert!(
            secrets.iter().all(|s| !argv.contains(s.as_str())),
            "a token on an argv: {argv}"
        );
    }
    for c in calls {
        let o = c.wait_with_output().unwrap();
        assert_code(&o, 0);
        assert!(stdout(&o).starts_with("alice"), "{}", stdout(&o));
        said += &format!("{}{}", stdout(&o), stderr(&o));
    }
    assert_eq!(f.refreshes(), 1, "{}", f.stats());
    let second = read_record(&file);
    assert_ne!(second["access_token"], first["access_token"]);
    // Rotation: the authorization server gave a new refresh token, and it was kept.
    assert_ne!(second["refresh_token"], first["refresh_token"]);

    // A revoked refresh token: the next refresh is refused, and the command to run is said.
    let revoked = http(
        f.issuer.trim_start_matches("http://"),
        "POST",
        "/token/revocation",
        &format!(
            "token={}&token_type_hint=refresh_token&client_id={}",
            encode(second["refresh_token"].as_str().unwrap()),
            encode(second["client"]["id"].as_str().unwrap())
        ),
    );
    assert!(!revoked.contains("error"), "{revoked}");
    expire(&file);
    // The server still takes the access token; make it refuse it too, as once expired.
    let mut r = read_record(&file);
    r["access_token"] = json!("an-access-token-the-server-never-issued");
    std::fs::write(&file, serde_json::to_vec(&r).unwrap()).unwrap();
    let o = run(
        {
            let mut c = tb(&state);
            c.args(["call", "whoami", "--mcp-config"]).arg(&config);
            c
        },
        "call after revocation",
    );
    assert_ne!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("toolbind mcp login secure"),
        "{}",
        stderr(&o)
    );
    said += &format!("{}{}", stdout(&o), stderr(&o));

    // No output of any command (the login's at RUST_LOG=trace) showed a token or the
    // authorization code.
    let codes: Vec<String> = serde_json::from_str(&http(&f.web, "GET", "/codes", "")).unwrap();
    assert!(!codes.is_empty());
    let later = [
        second["access_token"].as_str().unwrap().to_owned(),
        second["refresh_token"].as_str().unwrap().to_owned(),
    ];
    for s in secrets.iter().chain(&later).chain(&codes) {
        assert!(!said.contains(s.as_str()), "a secret in the output: {said}");
    }

    // Logout forgets it.
    let o = run(
        {
            let mut c = tb(&state);
            c.args(["mcp", "logout", "--config"])
                .arg(&config)
                .arg("secure");
            c
        },
        "logout",
    );
    assert_code(&o, 0);
    assert!(!file.exists());
}

#[test]
fn a_headless_agent_signs_in_with_its_client_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let f = start(dir.path());
    let state = dir.path().join("state");
    let config = dir.path().join(".mcp.json");
    let secret = dir.path().join("agent-secret");
    std::fs::write(&secret, "agent-secret\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    std::fs::write(
        &config,
        json!({"mcpServers": {"agent": {"url": f.mcp, "oauth": {
            "clientId": "agent", "clientSecretFile": "agent-secret", "grant": "client_credentials"
        }}}})
        .to_string(),
    )
    .unwrap();
    for n in 0..2 {
        let o = run(
            {
                let mut c = tb(&state);
                c.args(["call", "whoami", "--mcp-config"]).arg(&config);
                c
            },
            "call",
        );
        assert_code(&o, 0);
        assert!(
            stdout(&o).starts_with("agent mcp:tools"),
            "call {n}: {}",
            stdout(&o)
        );
    }
    // One grant: the second run used the kept token.
    assert_eq!(
        f.stats()["grants"]["client_credentials"],
        1,
        "{}",
        f.stats()
    );
    // A wrong secret: the grant fails, saying so, with no secret in the message.
    std::fs::write(&secret, "not-the-secret\n").unwrap();
    expire(&token_file(&state));
    let mut r = read_record(&token_file(&state));
    r["access_token"] = json!("stale");
    std::fs::write(token_file(&state), serde_json::to_vec(&r).unwrap()).unwrap();
    let o = run(
        {
            let mut c = tb(&state);
            c.args(["call", "whoami", "--mcp-config"]).arg(&config);
            c
        },
        "call, wrong secret",
    );
    assert_ne!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("client-credentials grant failed"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("not-the-secret"), "{}", stderr(&o));
}

impl Fixture {
    /// Sets how the fixture misbehaves (`token=hang`, `prm=mismatch`, ...).
    fn mode(&self, query: &str) {
        http(&self.web, "GET", &format!("/mode?{query}"), "");
    }
}

/// A host whose person follows the authorization URL (through the fixture's `/browse`).
#[derive(Clone)]
struct Browser {
    web: String,
}

impl toolbind::host::Host for Browser {
    fn approve(
        &self,
        _r: toolbind::host::ApprovalRequest,
    ) -> toolbind::host::Answer<toolbind::host::Decision> {
        Box::pin(async { toolbind::host::Decision::Approve })
    }

    fn login(
        &self,
        request: toolbind::host::LoginRequest,
    ) -> toolbind::host::Answer<Result<toolbind::host::LoginStep, toolbind::host::Refusal>> {
        let web = self.web.clone();
        Box::pin(async move {
            let path = format!("/browse?url={}", encode(&request.url));
            tokio::task::spawn_blocking(move || http(&web, "GET", &path, ""))
                .await
                .unwrap();
            Ok(toolbind::host::LoginStep::Opened)
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authorization_server_that_misbehaves_is_a_clear_error_in_bounded_time() {
    use std::sync::Arc;
    use toolbind::mcp::{McpServer, OAuth};
    use toolbind::{CallOptions, Runtime};
    let dir = tempfile::tempdir().unwrap();
    let f = start(dir.path());
    let tokens = dir.path().join("tokens");
    let server = || {
        McpServer::http("secure", &f.mcp).oauth(
            OAuth::new()
                .token_dir(&tokens)
                .request_timeout(Duration::from_secs(2)),
        )
    };
    let host = Arc::new(Browser { web: f.web.clone() });
    let connect = |host: Option<Arc<Browser>>| {
        let mut b = Runtime::builder().mcp_server(server()).mcp_strict(true);
        if let Some(h) = host {
            b = b.host((*h).clone());
        }
        tokio::time::timeout(Duration::from_secs(60), b.connect())
    };

    // An authorization endpoint that is not https (here `file:`): refused before any
    // host is asked to open it.
    f.mode("as=file-scheme");
    let e = toolbind::mcp::login(&server(), Arc::new(Refuses))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`authorization_endpoint` that is not an https:// URL (`file:`)"),
        "{e}"
    );
    f.mode("as=normal");

    // Metadata that names another resource: refused before the person is sent anywhere.
    f.mode("prm=mismatch");
    let e = toolbind::mcp::login(&server(), host.clone())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("discovery failed") && e.contains("evil.example"),
        "{e}"
    );
    assert_eq!(f.stats()["authorize"], 0, "{}", f.stats());
    f.mode("prm=normal");

    // A server that lets the handshake through and wants a login to list its tools:
    // with nobody to sign in, it "needs a login" (not "failed"), saying which.
    f.mode("mcp=open-initialize");
    let runtime = Runtime::builder()
        .mcp_server(server())
        .mcp_start_wait(Duration::from_secs(30))
        .connect()
        .await
        .unwrap();
    match runtime.mcp_server_state("secure") {
        Some(toolbind::mcp::McpServerState::NeedsLogin { reason, .. }) => {
            assert!(reason.contains("toolbind mcp login secure"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    drop(runtime);
    f.mode("mcp=normal");

    // A token without `expires_in`: used until the server refuses it.
    f.mode("token=no-expiry");
    let status = toolbind::mcp::login(&server(), host.clone()).await.unwrap();
    assert_eq!(status.expires_at, None);
    let runtime = connect(None).await.unwrap().unwrap();
    let r = runtime.call("whoami", json!({}), CallOptions::new()).await;
    assert!(
        r.text_content().starts_with("alice"),
        "{}",
        r.text_content()
    );
    drop(runtime);

    // A token endpoint that answers HTML: the refresh fails, saying so, without the page.
    f.mode("token=normal");
    toolbind::mcp::login(&server(), host.clone()).await.unwrap();
    let file = std::fs::read_dir(&tokens)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    expire(&file);
    f.mode("token=html");
    // The server still takes the old token: the call goes on with it.
    let runtime = connect(None).await.unwrap().unwrap();
    let r = runtime.call("whoami", json!({}), CallOptions::new()).await;
    assert!(
        r.text_content().starts_with("alice"),
        "{}",
        r.text_content()
    );
    drop(runtime);
    // Once it does not, the error says why the refresh failed and which login to run.
    let mut r = read_record(&file);
    r["access_token"] = json!("an-access-token-the-server-never-issued");
    std::fs::write(&file, serde_json::to_vec(&r).unwrap()).unwrap();
    let e = connect(None).await.unwrap().unwrap_err().to_string();
    assert!(e.contains("the refresh failed"), "{e}");
    assert!(e.contains("toolbind mcp login secure"), "{e}");
    assert!(!e.contains("<html>") && !e.contains("proxy page"), "{e}");

    // One that hangs: the refresh gives up after the request timeout, once.
    f.mode("token=hang");
    let started = std::time::Instant::now();
    let e = connect(None).await.unwrap().unwrap_err().to_string();
    assert!(e.contains("the refresh: no answer within 2 s"), "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );

    // A server that refuses every token: one refresh, then a login the host does, then
    // the error; not a loop.
    f.mode("token=normal");
    drop(connect(None).await.unwrap().unwrap()); // the expired token refreshed
    f.mode("mcp=always-401");
    let before = f.refreshes();
    let logins = f.stats()["grants"]["authorization_code"].as_u64().unwrap();
    let e = connect(Some(host.clone()))
        .await
        .unwrap()
        .unwrap_err()
        .to_string();
    assert!(e.contains("the server refuses the tokens"), "{e}");
    assert_eq!(f.refreshes() - before, 1, "{}", f.stats());
    let after = f.stats()["grants"]["authorization_code"].as_u64().unwrap();
    assert_eq!(after - logins, 1, "{}", f.stats());
}

/// A host that must not be asked to log in.
struct Refuses;

impl toolbind::host::Host for Refuses {
    fn approve(
        &self,
        _r: toolbind::host::ApprovalRequest,
    ) -> toolbind::host::Answer<toolbind::host::Decision> {
        Box::pin(async { toolbind::host::Decision::Approve })
    }

    fn login(
        &self,
        request: toolbind::host::LoginRequest,
    ) -> toolbind::host::Answer<Result<toolbind::host::LoginStep, toolbind::host::Refusal>> {
        panic!("asked to open {}", request.url)
    }
}
