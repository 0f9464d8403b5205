//! Every tool call traced (feature `otel`): `toolbind serve` exports its spans and
//! duration metrics over OTLP/HTTP to a receiver on loopback that decodes them with the
//! official OpenTelemetry protobuf definitions (cli/tests/fixtures/otlp_receiver.py), and
//! the tools continue the trace. Driven by rmcp's client over stdio; the fixture python
//! tools export their own spans with the OpenTelemetry Python SDK (tests/clients).
//!
//! `cargo test -p toolbind-cli --features otel --test otel` (`.ci/run` runs it).
#![cfg(feature = "otel")]

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::otlp::{Receiver, attr, named};
use common::{bin, clients_dir, copy_dir, eventually, fixture};
use rmcp::model::{CallToolRequestParams, CallToolResult, RequestParamsMeta};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

/// The MCP client's own span: the trace every request of these tests belongs to.
const TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const CLIENT_SPAN: &str = "b7ad6b7169203331";

/// Hang guard for a whole test.
const GUARD: Duration = Duration::from_secs(120);

struct Served {
    client: RunningService<RoleClient, ()>,
    stderr: common::StderrLog,
    _tools: tempfile::TempDir,
}

/// `toolbind serve` over the otel fixture tools, exporting to `receiver`; its tools run
/// unjailed (their own spans go to the receiver on the host's loopback) on the python of
/// tests/clients, which has the OpenTelemetry SDK.
async fn serve(receiver: &Receiver, env: &[(&str, &str)]) -> Served {
    let tools = tempfile::tempdir().unwrap();
    copy_dir(&fixture("otel_tools"), tools.path());
    let py_bin: PathBuf = clients_dir().join("py/bin");
    let path = format!(
        "{}:{}",
        py_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = tokio::process::Command::new(bin());
    cmd.arg("serve")
        .arg("--dir")
        .arg(tools.path())
        .args(["--sandbox", "off"])
        .env_remove("PI_TOOLS_DIRS")
        .env("PATH", path)
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{}", receiver.port),
        )
        .env("OTEL_SERVICE_NAME", "toolbind-test")
        .env_remove("OTEL_SDK_DISABLED")
        .env_remove("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let (transport, child_stderr) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = common::StderrLog::read(child_stderr);
    let client = ().serve(transport).await.expect("initialize");
    Served {
        client,
        stderr,
        _tools: tools,
    }
}

impl Served {
    /// Calls `name` as a request of the client's span `CLIENT_SPAN`.
    async fn call(&self, name: &str, args: Value) -> CallToolResult {
        let mut params = CallToolRequestParams::new(name.to_owned())
            .with_arguments(args.as_object().cloned().unwrap_or_default());
        params.set_traceparent(&format!("00-{TRACE}-{CLIENT_SPAN}-01"));
        self.client.call_tool(params).await.expect("tools/call")
    }

    /// Ends the session (stdin closes, `serve` exits and flushes what it holds) and waits
    /// until its stderr is closed: it has exited.
    async fn stop(self) -> String {
        let _ = self.client.cancel().await;
        let closed = eventually(30.0, || {
            self.stderr.closed.load(std::sync::atomic::Ordering::SeqCst)
        });
        assert!(closed, "serve did not exit");
        self.stderr.text.lock().unwrap().clone()
    }
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_is_traced_from_the_mcp_request_to_the_tools_own_span() {
    tokio::time::timeout(GUARD, async {
        let receiver = Receiver::start("answer");
        let served = serve(&receiver, &[]).await;
        // A warm worker twice (the second call reuses the process), a one-shot process,
        // a bash script.
        for (tool, word) in [
            ("traced_py", "first"),
            ("traced_py", "second"),
            ("traced_once", "once"),
        ] {
            let r = served.call(tool, json!({"word": word})).await;
            assert_eq!(text(&r), word, "{r:?}");
        }
        let sh = text(&served.call("traced_sh", json!({})).await);
        let stderr = served.stop().await;

        // The tools' own spans arrive during their calls; serve's at its exit.
        let wanted = |spans: &[Value]| {
            named(spans, "tool work").len() == 3
                && named(spans, "execute_tool traced_sh").len() == 1
        };
        assert!(
            eventually(30.0, || wanted(&receiver.spans())),
            "spans missing; got {:#?}\nserve's stderr:\n{stderr}",
            receiver.spans()
        );
        let spans = receiver.spans();
        let servers = named(&spans, "tools/call traced_py");
        assert_eq!(servers.len(), 2, "{spans:#?}");
        // serve starts a warm worker ahead of the first call: both calls reuse it.
        for call in named(&spans, "execute_tool traced_py") {
            assert_eq!(attr(call, "toolbind.process"), "warm_reused", "{call}");
        }
        for tool in ["traced_py", "traced_once", "traced_sh"] {
            for server in named(&spans, &format!("tools/call {tool}")) {
                // The server's span continues the client's trace, as the client's child.
                assert_eq!(server["kind"], "server");
                assert_eq!(server["trace_id"], TRACE);
                assert_eq!(server["parent_span_id"], CLIENT_SPAN);
                assert_eq!(server["service"], "toolbind-test");
                assert_eq!(attr(server, "mcp.method.name"), "tools/call");
                assert_eq!(attr(server, "network.transport"), "pipe");
                assert_eq!(attr(server, "gen_ai.tool.name"), tool);
                assert!(attr(server, "jsonrpc.request.id").is_string(), "{server}");
                assert!(
                    attr(server, "mcp.protocol.version")
                        .as_str()
                        .is_some_and(|v| v.starts_with("20")),
                    "{server}"
                );
                assert!(attr(server, "error.type").is_null(), "{server}");
                // The call's span is its child.
                let calls: Vec<&Value> = named(&spans, &format!("execute_tool {tool}"))
                    .into_iter()
                    .filter(|c| c["parent_span_id"] == server["span_id"])
                    .collect();
                assert_eq!(calls.len(), 1, "no execute_tool child of {server}");
                let call = calls[0];
                assert_eq!(call["kind"], "internal");
                assert_eq!(call["trace_id"], TRACE);
                assert_eq!(attr(call, "gen_ai.operation.name"), "execute_tool");
                assert_eq!(attr(call, "gen_ai.tool.name"), tool);
                assert_eq!(attr(call, "gen_ai.tool.type"), "function");
                assert!(
                    attr(call, "gen_ai.tool.call.id")
                        .as_str()
                        .is_some_and(|id| id.starts_with("mcp-")),
                    "{call}"
                );
                assert!(attr(call, "gen_ai.tool.description").is_string());
                assert_eq!(attr(call, "toolbind.sandbox"), "off");
                let process = attr(call, "toolbind.process").as_str().unwrap_or_default();
                let expected: &[&str] = match tool {
                    "traced_py" => &["warm", "warm_reused"],
                    "traced_once" => &["oneshot_spare", "oneshot_started"],
                    _ => &["bash"],
                };
                assert!(expected.contains(&process), "{call}");
                // Content is not recorded unless asked.
                assert!(attr(call, "gen_ai.tool.call.arguments").is_null());
                // The tool's own span is the call's child (python), or the script got the
                // call's span as its TRACEPARENT (bash).
                if tool == "traced_sh" {
                    assert_eq!(
                        sh,
                        format!("00-{TRACE}-{}-01", call["span_id"].as_str().unwrap())
                    );
                } else {
                    let own: Vec<&Value> = named(&spans, "tool work")
                        .into_iter()
                        .filter(|s| s["parent_span_id"] == call["span_id"])
                        .collect();
                    assert_eq!(own.len(), 1, "no tool span under {call}");
                    assert_eq!(own[0]["trace_id"], TRACE);
                    assert_eq!(own[0]["service"], "traced-tool");
                }
            }
        }

        // The duration metrics, by tool.
        let metrics = receiver.lines("metrics.jsonl");
        let points = |name: &str, tool: &str| {
            metrics
                .iter()
                .filter(|m| m["name"] == name && m["attributes"]["gen_ai.tool.name"] == tool)
                .map(|m| {
                    assert_eq!(m["unit"], "s", "{m}");
                    assert_eq!(m["kind"], "histogram", "{m}");
                    m["count"].as_u64().unwrap_or(0)
                })
                .max()
                .unwrap_or(0)
        };
        assert_eq!(
            points("gen_ai.execute_tool.duration", "traced_py"),
            2,
            "{metrics:#?}"
        );
        assert_eq!(points("gen_ai.execute_tool.duration", "traced_once"), 1);
        assert_eq!(points("mcp.server.operation.duration", "traced_sh"), 1);
        assert!(
            !stderr.contains("warning"),
            "serve warned with a collector that answers:\n{stderr}"
        );
    })
    .await
    .expect("the test hung");
}

#[tokio::test(flavor = "multi_thread")]
async fn no_secret_value_reaches_an_exported_byte() {
    tokio::time::timeout(GUARD, async {
        let receiver = Receiver::start("answer");
        // Content recording on: arguments and results go on the spans, redacted.
        let served = serve(
            &receiver,
            &[("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")],
        )
        .await;
        let secret = "sk-otel-test-4f1c9a2e7b";
        let r = served
            .call("traced_py", json!({"word": "visible", "key": secret}))
            .await;
        assert_eq!(text(&r), "visible");
        served.stop().await;
        assert!(eventually(30.0, || {
            !named(&receiver.spans(), "execute_tool traced_py").is_empty()
        }));
        let spans = receiver.spans();
        let call = named(&spans, "execute_tool traced_py")[0];
        let args = attr(call, "gen_ai.tool.call.arguments")
            .as_str()
            .expect("arguments recorded");
        assert!(
            args.contains("visible") && args.contains("[REDACTED]"),
            "{args}"
        );
        let result = attr(call, "gen_ai.tool.call.result")
            .as_str()
            .expect("result recorded");
        assert!(result.contains("visible"), "{result}");
        let raw = receiver.raw();
        assert!(!raw.is_empty());
        assert!(
            !raw.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "the secret is in an exported byte"
        );
    })
    .await
    .expect("the test hung");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_collector_that_never_answers_neither_fails_a_call_nor_holds_the_exit() {
    tokio::time::timeout(GUARD, async {
        let receiver = Receiver::start("hang");
        let served = serve(&receiver, &[("OTEL_BSP_SCHEDULE_DELAY", "50")]).await;
        for _ in 0..3 {
            let r = served.call("traced_sh", json!({})).await;
            assert!(text(&r).starts_with(&format!("00-{TRACE}-")), "{r:?}");
            assert_ne!(r.is_error, Some(true));
        }
        // serve exits (the hang guard above bounds it), having said once that the rest
        // was dropped.
        let stderr = served.stop().await;
        assert_eq!(
            stderr
                .matches("did not take the last spans and metrics")
                .count(),
            1,
            "{stderr}"
        );
        // The receiver did get the requests it never answered.
        assert!(!receiver.raw().is_empty());
    })
    .await
    .expect("the test hung");
}

/// Over Streamable HTTP a request without `_meta.traceparent` continues the trace of the
/// HTTP request's `traceparent` header (the official Python SDK's client sends it).
#[tokio::test(flavor = "multi_thread")]
async fn over_http_the_traceparent_header_is_continued() {
    tokio::time::timeout(GUARD, async {
        let receiver = Receiver::start("answer");
        let tools = tempfile::tempdir().unwrap();
        copy_dir(
            &fixture("otel_tools/traced_sh"),
            &tools.path().join("tools/traced_sh"),
        );
        let log = tools.path().join("serve.log");
        let mut cmd = std::process::Command::new(bin());
        cmd.args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--sandbox",
            "off",
            "--dir",
        ])
        .arg(tools.path().join("tools"))
        .env_remove("PI_TOOLS_DIRS")
        .env("TOOLBIND_TOKEN", "otel-test-token-0123456789")
        .env("XDG_STATE_HOME", tools.path().join("state"))
        .env("XDG_RUNTIME_DIR", tools.path().join("run"))
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{}", receiver.port),
        )
        .env("OTEL_SERVICE_NAME", "toolbind-test")
        .env("OTEL_BSP_SCHEDULE_DELAY", "50");
        let serve = common::Background::start(cmd, log, "at http://");
        let text = serve.log();
        let at = text.find("at http://").unwrap() + "at ".len();
        let url = text[at..].split_whitespace().next().unwrap().to_owned();
        let script = fixture("../clients/http_client.py");
        let out = tokio::process::Command::new(clients_dir().join("py/bin/python"))
            .arg(script)
            .args([url.as_str(), "otel-test-token-0123456789", "call", "legacy"])
            .args(["traced_sh", "{}"])
            .env(
                "HTTP_CLIENT_HEADERS",
                json!({"traceparent": format!("00-{TRACE}-{CLIENT_SPAN}-01")}).to_string(),
            )
            .output()
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let answer: Value = serde_json::from_str(stdout.lines().last().unwrap_or("null"))
            .unwrap_or_else(|_| panic!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
        assert_eq!(answer["ok"], true, "{answer}");
        assert!(
            answer["text"]
                .as_str()
                .is_some_and(|t| t.starts_with(&format!("00-{TRACE}-"))),
            "{answer}"
        );
        // The spans go out 50 ms after they end.
        let found = eventually(30.0, || {
            !named(&receiver.spans(), "tools/call traced_sh").is_empty()
        });
        assert!(found, "{:#?}\n{}", receiver.spans(), serve.log());
        let spans = receiver.spans();
        let server = named(&spans, "tools/call traced_sh")[0];
        assert_eq!(server["trace_id"], TRACE);
        assert_eq!(server["parent_span_id"], CLIENT_SPAN);
        assert_eq!(attr(server, "network.transport"), "tcp");
    })
    .await
    .expect("the test hung");
}

/// A client's trace context is the client's text: a `traceparent` with a newline and an
/// environment assignment, or a 200 KB `tracestate`, never reaches a tool as it was sent.
/// The tool gets a well-formed `TRACEPARENT` of the server's own span (the malformed
/// context is not continued), and the call runs as usual.
#[tokio::test(flavor = "multi_thread")]
async fn a_hostile_trace_context_never_reaches_a_tool_as_sent() {
    tokio::time::timeout(GUARD, async {
        let receiver = Receiver::start("answer");
        let served = serve(&receiver, &[]).await;
        let hostile = [
            (format!("00-{TRACE}-{CLIENT_SPAN}-01\nEVIL=1"), None),
            ("../../etc/passwd".to_owned(), None),
            (
                format!("00-{TRACE}-{CLIENT_SPAN}-01"),
                Some(format!("k={}", "v".repeat(200 << 10))),
            ),
        ];
        for (parent, state) in hostile {
            let mut params =
                CallToolRequestParams::new("traced_sh").with_arguments(serde_json::Map::new());
            params.set_traceparent(&parent);
            if let Some(s) = &state {
                params.set_tracestate(s);
            }
            let r = served.client.call_tool(params).await.expect("tools/call");
            assert_ne!(r.is_error, Some(true), "{r:?}");
            let t = text(&r);
            let well_formed = t.len() == 55
                && t.starts_with("00-")
                && t[3..].split('-').map(str::len).eq([32, 16, 2])
                && t[3..].chars().all(|c| c == '-' || c.is_ascii_hexdigit());
            assert!(well_formed, "{t:?}");
            assert!(!t.contains("EVIL") && !t.contains("passwd"), "{t:?}");
        }
        served.stop().await;
    })
    .await
    .expect("the test hung");
}
