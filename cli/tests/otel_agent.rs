//! One trace across processes (feature `otel`): a Rust agent's call of an MCP server's
//! tool through toolbind's MCP executor is a `tools/call` CLIENT span whose context goes
//! in the request's `_meta.traceparent`; the server (`toolbind serve`) continues it, and
//! its python tool continues that. Both processes export to one OTLP receiver on
//! loopback. A test binary of its own: it sets this process's OTEL_* variables and its
//! global `tracing` subscriber.
#![cfg(feature = "otel")]

mod common;

use std::time::Duration;

use common::otlp::{Receiver, attr, named};
use common::{bin, clients_dir, copy_dir, eventually, fixture};
use serde_json::{Value, json};
use toolbind::mcp::McpServer;
use toolbind::sandbox::SandboxPolicy;
use toolbind::{CallOptions, Runtime};

#[test]
fn an_agents_mcp_call_carries_its_trace_into_the_server_and_its_tool() {
    let receiver = Receiver::start("answer");
    let endpoint = format!("http://127.0.0.1:{}", receiver.port);
    // SAFETY: set before any other thread of this test binary (its only test) exists.
    unsafe {
        std::env::set_var("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint);
        std::env::set_var("OTEL_SERVICE_NAME", "agent");
        std::env::remove_var("OTEL_SDK_DISABLED");
    }
    let guard = toolbind::telemetry::init()
        .expect("export set up")
        .expect("not disabled");

    let tools = tempfile::tempdir().unwrap();
    copy_dir(&fixture("otel_tools"), tools.path());
    let path = format!(
        "{}:{}",
        clients_dir().join("py/bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let dir = tools.path().display().to_string();
    let server = McpServer::stdio(
        "tb",
        bin(),
        ["serve", "--dir", dir.as_str(), "--sandbox", "off"],
    )
    .env("PATH", path)
    .env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.clone())
    .env("OTEL_SERVICE_NAME", "toolbind-test")
    // The server's spans go out 50 ms after they end: the runtime's drop kills it.
    .env("OTEL_BSP_SCHEDULE_DELAY", "50")
    .sandbox(SandboxPolicy::off());

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let runtime = tokio::time::timeout(
            Duration::from_secs(60),
            Runtime::builder().mcp_server(server).connect(),
        )
        .await
        .expect("connect hung")
        .expect("connect");
        let r = tokio::time::timeout(
            Duration::from_secs(60),
            runtime.call(
                "traced_py",
                json!({"word": "agent"}),
                CallOptions::new().id("agent-1"),
            ),
        )
        .await
        .expect("the call hung");
        assert_eq!(r.text_content(), "agent", "{r:?}");
        // The server's spans arrive before it is stopped with the runtime.
        let server_done = eventually(30.0, || {
            !named(&receiver.spans(), "execute_tool traced_py")
                .iter()
                .all(|s| s["service"] == "agent")
        });
        assert!(server_done, "no server spans: {:#?}", receiver.spans());
    });
    drop(rt);
    drop(guard);

    let all = |spans: &[Value]| {
        named(spans, "execute_tool traced_py").len() == 2
            && named(spans, "tools/call traced_py").len() == 2
            && named(spans, "tool work").len() == 1
    };
    assert!(
        eventually(30.0, || all(&receiver.spans())),
        "{:#?}",
        receiver.spans()
    );
    let spans = receiver.spans();
    let of = |name: &str, service: &str| -> Value {
        (*named(&spans, name)
            .into_iter()
            .find(|s| s["service"] == service)
            .unwrap_or_else(|| panic!("no {name} of {service}: {spans:#?}")))
        .clone()
    };
    let agent_call = of("execute_tool traced_py", "agent");
    let client = of("tools/call traced_py", "agent");
    let server = of("tools/call traced_py", "toolbind-test");
    let server_call = of("execute_tool traced_py", "toolbind-test");
    let tool = of("tool work", "traced-tool");

    // The agent's call: an MCP server's tool is an `extension`.
    assert_eq!(agent_call["kind"], "internal");
    assert_eq!(agent_call["parent_span_id"], "");
    assert_eq!(attr(&agent_call, "gen_ai.tool.type"), "extension");
    assert_eq!(attr(&agent_call, "gen_ai.tool.call.id"), "agent-1");
    // Its request, a CLIENT span.
    assert_eq!(client["kind"], "client");
    assert_eq!(client["parent_span_id"], agent_call["span_id"]);
    assert_eq!(attr(&client, "mcp.method.name"), "tools/call");
    assert_eq!(attr(&client, "network.transport"), "pipe");
    assert!(attr(&client, "jsonrpc.request.id").is_string(), "{client}");
    assert!(
        attr(&client, "mcp.protocol.version")
            .as_str()
            .is_some_and(|v| v.starts_with("20")),
        "{client}"
    );
    // The server continued it from `_meta.traceparent`, and so did the tool.
    assert_eq!(server["kind"], "server");
    assert_eq!(server["parent_span_id"], client["span_id"]);
    assert_eq!(server_call["parent_span_id"], server["span_id"]);
    assert_eq!(tool["parent_span_id"], server_call["span_id"]);
    for s in [&client, &server, &server_call, &tool] {
        assert_eq!(s["trace_id"], agent_call["trace_id"], "{s}");
    }
    // The client's duration metric.
    let metrics = receiver.lines("metrics.jsonl");
    assert!(
        metrics
            .iter()
            .any(|m| m["name"] == "mcp.client.operation.duration"
                && m["attributes"]["gen_ai.tool.name"] == "traced_py"
                && m["count"].as_u64() == Some(1)),
        "{metrics:#?}"
    );
}
