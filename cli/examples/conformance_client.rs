//! The MCP conformance suite's client driver: toolbind's MCP executor (the same
//! `Runtime` an agent builds) against the suite's test servers.
//!
//! `@modelcontextprotocol/conformance client --command "<this binary>"` starts it once per
//! scenario with the server's URL as its last argument, the scenario's name in
//! `MCP_CONFORMANCE_SCENARIO` and its data (if any) in `MCP_CONFORMANCE_CONTEXT`. The
//! driver does what an agent would, through the public API only: give the server to a
//! runtime (`McpServer::http`), connect (initialize or discover, list the tools), answer
//! the server's questions with its `Host`, and call the tools the scenario serves.
//!
//! ```text
//! cargo build -p toolbind-cli --examples
//! conformance client --command target/debug/examples/conformance_client --requirements 2026-07-28
//! ```
//!
//! `cli/tests/conformance.rs` runs it for both revisions; the scenarios it does not pass
//! are in `tests/conformance/baseline-client-*.yml`, each with its reason.

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Map, Value, json};
use toolbind::host::{
    Answer, ApprovalRequest, Decision, ElicitRequest, Elicited, Host, LoginRequest, LoginStep,
    Refusal,
};
use toolbind::mcp::{McpServer, OAuth};
use toolbind::{CallOptions, Runtime, StopReason, ToolInfo};

/// Under the suite's own 30 s per scenario: a driver that hangs is stopped here, with a
/// message, rather than killed there.
const SCENARIO_LIMIT: Duration = Duration::from_secs(25);

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance_client URL (the conformance suite gives it)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    match tokio::time::timeout(SCENARIO_LIMIT, run(&scenario, &url, &context)).await {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("conformance_client: {scenario}: {e}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!(
                "conformance_client: {scenario}: not done within {} s",
                SCENARIO_LIMIT.as_secs()
            );
            ExitCode::FAILURE
        }
    }
}

async fn run(scenario: &str, url: &str, context: &Value) -> Result<(), String> {
    let mut server = McpServer::http("server", url).connect_timeout(Duration::from_secs(20));
    // The authorization scenarios: a fresh token folder per run (the suite's servers
    // reuse ports), the suite's client metadata document, the pre-registered client when
    // the scenario gives one. `Agent::login` plays the person at the browser.
    let tokens = tempfile::tempdir().map_err(|e| e.to_string())?;
    if scenario.starts_with("auth/") {
        let mut oauth = OAuth::new()
            .client_name("toolbind-conformance")
            .client_metadata_url("https://conformance-test.local/client-metadata.json")
            .token_dir(tokens.path());
        if let Some(id) = context["client_id"].as_str() {
            oauth = oauth.client_id(id);
        }
        if let Some(secret) = context["client_secret"].as_str() {
            oauth = oauth.client_secret(secret);
        }
        if scenario.starts_with("auth/client-credentials") {
            oauth = oauth.client_credentials();
        }
        server = server.oauth(oauth);
    }
    // `initialize`'s server offers no tools, which the executor reports (a server it has
    // nothing to call): the handshake is the scenario, so the runtime is built anyway.
    let runtime = Runtime::builder()
        .host(Agent)
        .mcp_server(server)
        .mcp_strict(scenario != "initialize" && !scenario.starts_with("sep-2640"))
        .connect()
        .await
        .map_err(|e| e.to_string())?;
    let tools: Vec<ToolInfo> = runtime
        .tool_list()
        .iter()
        .filter(|t| t.spec().mcp.is_some())
        .cloned()
        .collect();
    eprintln!(
        "conformance_client: {scenario}: {:?} ({}), tools: {}",
        runtime.mcp_server_state("server"),
        runtime.mcp_protocol_version("server").unwrap_or_default(),
        tools
            .iter()
            .map(ToolInfo::name)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let calls: Vec<(String, Value)> = match scenario {
        // Connecting and listing is the scenario.
        "initialize" | "json-schema-ref-no-deref" => Vec::new(),
        // A host lists the server's skills and reads a file only when a skill is used
        // (the scenario checks that listing reads none).
        s if s.starts_with("sep-2640") => {
            let skills = runtime
                .mcp_skills("server")
                .await
                .map_err(|e| e.to_string())?;
            let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
            eprintln!(
                "conformance_client: {scenario}: skills: {}",
                names.join(", ")
            );
            Vec::new()
        }
        "tools_call" => vec![("add_numbers".into(), json!({"a": 2, "b": 3}))],
        "json-schema-2020-12-preservation" => {
            let schema = tools
                .iter()
                .find(|t| t.spec().mcp.as_ref().unwrap().name == "json_schema_2020_12_tool")
                .map(|t| t.spec().mcp.as_ref().unwrap().input_schema.clone())
                .ok_or("the server lists no json_schema_2020_12_tool")?;
            vec![("json_schema_echo".into(), json!({"schema": schema}))]
        }
        // The scenario's own calls, when it gives them; else every tool it lists.
        _ => match context.get("toolCalls").and_then(Value::as_array) {
            Some(calls) => calls
                .iter()
                .map(|c| {
                    (
                        c["name"].as_str().unwrap_or_default().to_owned(),
                        c["arguments"].clone(),
                    )
                })
                .collect(),
            None => tools
                .iter()
                .map(|t| (t.name().to_owned(), arguments(t)))
                .collect(),
        },
    };
    // sse-retry's server takes any GET as the client's reconnection of the tool call's
    // stream. rmcp opens its standalone GET stream right after `initialized`, alongside
    // the first requests; when that GET reaches the server after `tools/call` (a loaded
    // machine, 25 scenarios at once), the server answers the call on it, never closes
    // the call's stream, and warns that no reconnection carried `Last-Event-ID`. The
    // call waits until the standalone stream is surely open.
    if scenario == "sse-retry" {
        tokio::time::sleep(Duration::from_millis(750)).await;
    }
    let mut failed = Vec::new();
    for (name, args) in calls {
        let r = runtime.call(&name, args, CallOptions::new()).await;
        eprintln!(
            "conformance_client: {scenario}: {name}: {:?}: {}",
            r.stop,
            r.text_content()
        );
        if r.stop != StopReason::Completed {
            failed.push(name);
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "calls that did not complete: {}",
            failed.join(", ")
        ))
    }
}

/// Arguments for a tool the scenario does not describe: a value of its type for each
/// required input (the suite's servers check what they receive, not what it is).
fn arguments(tool: &ToolInfo) -> Value {
    let schema = &tool.spec().mcp.as_ref().expect("an MCP tool").input_schema;
    let mut args = Map::new();
    for name in schema["required"].as_array().into_iter().flatten() {
        let Some(name) = name.as_str() else { continue };
        let value = match schema["properties"][name]["type"].as_str() {
            Some("number") => json!(1.5),
            Some("integer") => json!(1),
            Some("boolean") => json!(true),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ => json!("test"),
        };
        args.insert(name.to_owned(), value);
    }
    Value::Object(args)
}

/// The agent's side: approves, and fills in every form with the defaults it states (a
/// user who accepts a form as shown).
struct Agent;

impl Host for Agent {
    fn approve(&self, _request: ApprovalRequest) -> Answer<Decision> {
        Box::pin(async { Decision::Approve })
    }

    fn elicit(&self, request: ElicitRequest) -> Answer<Result<Elicited, Refusal>> {
        let mut content = Map::new();
        if let Some(props) = request.schema["properties"].as_object() {
            for (name, prop) in props {
                let value = match (&prop["default"], prop["type"].as_str()) {
                    (d, _) if !d.is_null() => d.clone(),
                    (_, Some("boolean")) => json!(true),
                    _ => continue,
                };
                content.insert(name.clone(), value);
            }
        }
        Box::pin(async move { Ok(Elicited::accept(content)) })
    }

    /// The person at the browser: the suite's authorization endpoint signs in at once and
    /// redirects; that redirect is followed to toolbind's loopback listener, as a browser
    /// would, so the listener's checks (state, `iss`) run.
    fn login(&self, request: LoginRequest) -> Answer<Result<LoginStep, Refusal>> {
        Box::pin(async move {
            eprintln!("conformance_client: login ({:?})", request.reason);
            let location = get(&request.url)
                .await
                .map_err(Refusal::new)?
                .ok_or_else(|| Refusal::new("the authorization endpoint did not redirect"))?;
            if !location.starts_with(&request.redirect_uri) {
                // An error page or another place: the login fails as it would for a person.
                return Ok(LoginStep::Redirected(location));
            }
            get(&location).await.map_err(Refusal::new)?;
            Ok(LoginStep::Opened)
        })
    }
}

/// A GET of an `http://` URL, redirects not followed: the `Location` of a redirect.
async fn get(url: &str) -> Result<Option<String>, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("not an http:// URL: {url}"))?;
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let address = if authority.contains(':') {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    };
    let mut stream = tokio::net::TcpStream::connect(&address)
        .await
        .map_err(|e| format!("cannot reach {address}: {e}"))?;
    let request = format!("GET {path} HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    stream
        .take(1 << 20)
        .read_to_end(&mut answer)
        .await
        .map_err(|e| e.to_string())?;
    let head = String::from_utf8_lossy(&answer);
    let head = head.split("\r\n\r\n").next().unwrap_or_default();
    Ok(head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("location")
            .then(|| v.trim().to_owned())
    }))
}
