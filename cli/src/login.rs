//! `toolbind mcp login|logout|status`: the OAuth credentials of HTTP MCP servers.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use toolbind::host::{Answer, ApprovalRequest, Decision, Host, LoginRequest, LoginStep, Refusal};
use toolbind::mcp::{AuthStatus, McpServer, OAuth, ServerConfig, auth_status};
use toolbind::untrusted::terminal;

use crate::args::McpLoginArgs;
use crate::exit::{Code, Failure, Outcome};

/// The servers the command is about: the one at --url, the one named in --config, or
/// (for `status` without a name) every HTTP server of --config.
fn servers(a: &McpLoginArgs, all: bool) -> Result<Vec<McpServer>, Failure> {
    if let Some(url) = &a.url {
        let name = a.server.clone().unwrap_or_else(|| "server".into());
        return Ok(vec![McpServer::http(name, url)]);
    }
    let found =
        McpServer::from_config_file(&a.config).map_err(|e| Failure::failed(e.to_string()))?;
    let http = |s: &McpServer| matches!(s.get_config(), ServerConfig::Http { .. });
    match &a.server {
        Some(name) => {
            let s = found
                .into_iter()
                .find(|s| s.get_name() == name)
                .ok_or_else(|| {
                    Failure::usage(format!(
                        "no server `{}` in {}",
                        name.escape_debug(),
                        a.config.display()
                    ))
                })?;
            if !http(&s) {
                return Err(Failure::usage(format!(
                    "`{}` is a stdio server: OAuth is for HTTP servers (`\"url\"`)",
                    name.escape_debug()
                )));
            }
            Ok(vec![s])
        }
        None if all => Ok(found.into_iter().filter(http).collect()),
        None => Err(Failure::usage(
            "name the server (a key of --config's `mcpServers`), or give --url",
        )),
    }
}

/// The person at the terminal: the URL printed, a browser opened when there is a display.
struct Terminal {
    browser: bool,
}

impl Host for Terminal {
    fn approve(&self, _request: ApprovalRequest) -> Answer<Decision> {
        Box::pin(async { Decision::deny("not asked here") })
    }

    fn login(&self, request: LoginRequest) -> Answer<Result<LoginStep, Refusal>> {
        eprintln!(
            "Sign in to {} for `{}` ({}):\n\n  {}\n\nWaiting for the browser to come back to {} ...",
            terminal(
                request
                    .issuer
                    .as_deref()
                    .unwrap_or("the authorization server")
            ),
            request.server.escape_debug(),
            terminal(&request.resource),
            terminal(&request.url),
            request.redirect_uri
        );
        // toolbind refused any other scheme already; checked again before an opener runs.
        let web = request.url.starts_with("https://") || request.url.starts_with("http://");
        if self.browser && web && has_display() {
            open_browser(&request.url);
        }
        Box::pin(async { Ok(LoginStep::Opened) })
    }
}

fn has_display() -> bool {
    cfg!(target_os = "macos")
        || ["DISPLAY", "WAYLAND_DISPLAY"]
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|v| !v.is_empty()))
}

/// Opens `url` with the desktop's opener; the URL is its one argument (it holds no
/// secret: PKCE keeps the verifier here).
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let spawned = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Ok(mut child) = spawned {
        // Reaped in the background: the opener returns at once.
        std::thread::spawn(move || child.wait());
    }
}

pub async fn login(a: McpLoginArgs) -> Outcome {
    let server = servers(&a, false)?.remove(0);
    let mut oauth = server.get_oauth().cloned().unwrap_or_else(OAuth::new);
    oauth = oauth.login_timeout(Duration::from_secs(a.timeout.max(1)));
    let server = server.oauth(oauth);
    let host = Arc::new(Terminal {
        browser: !a.no_browser,
    });
    let status = toolbind::mcp::login(&server, host).await.map_err(|e| {
        Failure::failed(format!(
            "`{}`: {}",
            server.get_name().escape_debug(),
            terminal(&e.to_string())
        ))
    })?;
    eprintln!(
        "Signed in: `{}` {}",
        server.get_name().escape_debug(),
        describe(&status)
    );
    Ok(Code::Ok)
}

pub fn logout(a: McpLoginArgs) -> Outcome {
    let server = servers(&a, false)?.remove(0);
    let name = server.get_name().escape_debug().to_string();
    let removed =
        toolbind::mcp::logout(&server).map_err(|e| Failure::failed(format!("`{name}`: {e}")))?;
    if removed {
        eprintln!("Removed the OAuth credentials kept for `{name}`.");
    } else {
        eprintln!("No OAuth credentials were kept for `{name}`.");
    }
    Ok(Code::Ok)
}

pub fn status(a: McpLoginArgs) -> Outcome {
    let mut rows = Vec::new();
    for server in servers(&a, true)? {
        let name = server.get_name().to_owned();
        match auth_status(&server) {
            Ok(s) => rows.push((name, Ok(s))),
            Err(e) => rows.push((name, Err(e.to_string()))),
        }
    }
    if a.json {
        let out: Vec<serde_json::Value> = rows.iter().map(|(n, s)| json_row(n, s)).collect();
        println!("{}", serde_json::Value::Array(out));
        return Ok(Code::Ok);
    }
    if rows.is_empty() {
        println!("No HTTP servers in {}.", a.config.display());
    }
    for (name, s) in &rows {
        let name = name.escape_debug();
        match s {
            Ok(Some(s)) => println!("{name}: {}", describe(s)),
            Ok(None) => println!("{name}: not signed in"),
            Err(e) => println!("{name}: {}", terminal(e)),
        }
    }
    Ok(Code::Ok)
}

fn json_row(name: &str, s: &Result<Option<AuthStatus>, String>) -> serde_json::Value {
    match s {
        Ok(Some(s)) => serde_json::json!({
            "name": name,
            "signed_in": true,
            "resource": s.resource,
            "issuer": s.issuer,
            "client_id": s.client_id,
            "client_kind": s.client_kind,
            "scopes": s.scopes,
            "expires_in": s.expires_at.map(left),
            "refreshable": s.refreshable,
            "client_credentials": s.client_credentials,
            "file": s.file,
        }),
        Ok(None) => serde_json::json!({"name": name, "signed_in": false}),
        Err(e) => serde_json::json!({"name": name, "signed_in": false, "error": e}),
    }
}

/// Seconds until `at` (negative once past).
fn left(at: SystemTime) -> i64 {
    match at.duration_since(SystemTime::now()) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
    }
}

/// What an authorization server said (a client id, scopes, an issuer), safe on a
/// terminal.
fn describe(s: &AuthStatus) -> String {
    terminal(&describe_raw(s)).into_owned()
}

fn describe_raw(s: &AuthStatus) -> String {
    let expiry = match s.expires_at.map(left) {
        None => "no expiry given".to_owned(),
        Some(l) if l <= 0 => "expired".to_owned(),
        Some(l) => format!("expires in {} min", l / 60),
    };
    let scopes = if s.scopes.is_empty() {
        "no scopes".to_owned()
    } else {
        format!("scopes {}", s.scopes.join(" "))
    };
    format!(
        "{} via {} (client {}, {}); {scopes}; {expiry}{}; kept in {}",
        s.resource,
        s.issuer.as_deref().unwrap_or("an authorization server"),
        s.client_id,
        s.client_kind,
        if s.refreshable { ", refreshable" } else { "" },
        s.file.display()
    )
}
