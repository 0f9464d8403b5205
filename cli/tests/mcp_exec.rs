//! The MCP executor (`RuntimeBuilder::mcp_server`) against real servers no one here wrote
//! (the official reference servers, pinned in tests/mcp-servers/package.json and installed
//! by tests/clients/install.sh), against `toolbind serve` itself, and against a server that
//! misbehaves on purpose (fixtures/mcp_servers/misbehaving.py). The servers run in the real
//! jail (`SandboxMode::Required`) unless a test says otherwise.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::clients_dir;
use serde_json::json;
use toolbind::mcp::{McpServer, Snapshot, SnapshotTool};
use toolbind::sandbox::{SandboxMode, SandboxPolicy};
use toolbind::{CallOptions, CancelToken, Runtime, StopReason};

mod servers {
    toolbind::tools!(
        "../../tests/ui/fixtures/mcp/everything.json",
        "../../tests/ui/fixtures/mcp/memory.json"
    );
}

fn server_bin(name: &str) -> String {
    let bin = clients_dir().join("servers/node_modules/.bin").join(name);
    assert!(
        bin.exists(),
        "{} is missing: run tests/clients/install.sh",
        bin.display()
    );
    bin.display().to_string()
}

fn fixture_snapshot(name: &str) -> Snapshot {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/ui/fixtures/mcp/{name}.json"));
    Snapshot::read(&file).expect("the fixture snapshot reads").0
}

/// A jail that must hold, its state under `dir`.
fn jail(dir: &Path) -> SandboxPolicy {
    SandboxPolicy::new()
        .mode(SandboxMode::Required)
        .state_dir(dir.join("state"))
        .limits(toolbind::sandbox::SandboxLimits::default().cpu(None))
}

fn everything(dir: &Path) -> McpServer {
    McpServer::stdio("everything", server_bin("mcp-server-everything"), ["stdio"])
        .snapshot(fixture_snapshot("everything"))
        .sandbox(jail(dir))
}

fn misbehaving(mode: &str, dir: &Path) -> McpServer {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_servers/misbehaving.py");
    McpServer::stdio(
        format!("misbehaving-{mode}"),
        "python3",
        [script.display().to_string(), mode.to_owned()],
    )
    .sandbox(jail(dir))
    .connect_timeout(Duration::from_secs(30))
}

/// Waits, polling, until `done` holds; panics with `what` after `secs`.
async fn until_true(what: impl Fn() -> String, secs: u64, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "not within {secs} s: {}",
            what()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn text(r: &toolbind::ToolResult) -> String {
    r.text_content()
}

/// Hang guard: every await of a call in these tests is bounded.
async fn bounded<F: std::future::Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(120), f)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within 120 s"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_under_another_name_serves_the_server_it_is_given_to() {
    let dir = tempfile::tempdir().unwrap();
    // The snapshot is named `everything`; the server here is `reference`.
    let server = McpServer::stdio("reference", server_bin("mcp-server-everything"), ["stdio"])
        .snapshot(fixture_snapshot("everything"))
        .sandbox(jail(dir.path()));
    let runtime = Runtime::builder().mcp_server(server).build();
    let echo = runtime.tool("echo").unwrap();
    assert_eq!(echo.spec().mcp.as_ref().unwrap().server, "reference");
    let r = bounded(
        "echo",
        runtime.call("echo", json!({"message": "renamed"}), CallOptions::new()),
    )
    .await;
    assert_eq!(text(&r), "Echo: renamed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_typed_untyped_progress_cancel_timeout() {
    let dir = tempfile::tempdir().unwrap();
    // Started on the first call: the snapshot gives the tool list.
    let runtime = Runtime::builder()
        .mcp_server(everything(dir.path()))
        .build();
    assert!(runtime.registry().get("echo").is_some());

    // The typed path, from bindings generated from the snapshot.
    let params = servers::everything::echo::Params {
        message: "through the jail".into(),
    };
    let r = bounded(
        "echo",
        runtime.call_mcp::<servers::everything::echo::Tool>(params, CallOptions::new()),
    )
    .await;
    assert_eq!(r.stop, StopReason::Completed, "{}", text(&r));
    assert_eq!(text(&r), "Echo: through the jail");
    // A model's call parsed by the generated `ToolCall`, run by the same path.
    let call =
        servers::everything::ToolCall::from_call("echo", json!({"message": "parsed"})).unwrap();
    let r = bounded("parsed echo", call.call(&runtime, CallOptions::new())).await;
    assert_eq!(text(&r), "Echo: parsed");

    // The untyped path, validated first: nothing reaches the server.
    let r = bounded(
        "bad echo",
        runtime.call("echo", json!({"message": 5}), CallOptions::new()),
    )
    .await;
    assert_eq!(r.stop, StopReason::BadArguments, "{}", text(&r));
    let r = bounded(
        "sum",
        runtime.call("get-sum", json!({"a": 2, "b": 3}), CallOptions::new()),
    )
    .await;
    assert!(text(&r).contains('5'), "{}", text(&r));

    // structuredContent becomes details, checked against the outputSchema.
    let r = bounded(
        "structured",
        runtime.call(
            "get-structured-content",
            json!({"location": "Chicago"}),
            CallOptions::new(),
        ),
    )
    .await;
    assert_eq!(r.stop, StopReason::Completed, "{}", text(&r));
    assert!(
        r.details
            .as_ref()
            .is_some_and(|d| d.get("temperature").is_some()),
        "{:?}",
        r.details
    );
    assert_eq!(r.output_check, toolbind::output::OutputCheck::Held);

    // An image block stays an image.
    let r = bounded(
        "image",
        runtime.call("get-tiny-image", json!({}), CallOptions::new()),
    )
    .await;
    assert!(
        r.content.iter().any(
            |c| matches!(c, toolbind::Content::Image { mime_type, .. } if mime_type == "image/png")
        ),
        "{:?}",
        r.content
    );

    // Progress reaches the call's sink.
    let seen = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    let opts = CallOptions::new().progress(move |p| {
        assert!(p.progress.is_some());
        s.fetch_add(1, Ordering::SeqCst);
    });
    let r = bounded(
        "long-running",
        runtime.call(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 3}),
            opts,
        ),
    )
    .await;
    assert_eq!(r.stop, StopReason::Completed, "{}", text(&r));
    assert_eq!(seen.load(Ordering::SeqCst), 3);

    // Cancellation leaves as `notifications/cancelled`, promptly.
    let cancel = CancelToken::new();
    let c = cancel.clone();
    let opts = CallOptions::new()
        .cancel(cancel)
        .progress(move |_| c.cancel());
    let r = bounded(
        "cancelled",
        runtime.call(
            "trigger-long-running-operation",
            json!({"duration": 60, "steps": 60}),
            opts,
        ),
    )
    .await;
    assert_eq!(r.stop, StopReason::Cancelled, "{}", text(&r));
    assert!(text(&r).contains("notifications/cancelled"), "{}", text(&r));

    // The call's timeout, then the server still answers (it was not hung).
    let opts = CallOptions::new().timeout(Duration::from_millis(500));
    let r = bounded(
        "timeout",
        runtime.call(
            "trigger-long-running-operation",
            json!({"duration": 60, "steps": 60}),
            opts,
        ),
    )
    .await;
    assert!(
        matches!(r.stop, StopReason::Timeout { .. }),
        "{:?}: {}",
        r.stop,
        text(&r)
    );
    let r = bounded(
        "echo again",
        runtime.call("echo", json!({"message": "still here"}), CallOptions::new()),
    )
    .await;
    assert_eq!(text(&r), "Echo: still here");

    // 1,000 calls at once, at most 64 in flight: every one answered.
    let calls = (0..1000).map(|i| {
        let runtime = &runtime;
        async move {
            runtime
                .call(
                    "echo",
                    json!({"message": format!("n{i}")}),
                    CallOptions::new(),
                )
                .await
        }
    });
    let results = bounded("1000 calls", futures_join_all(calls)).await;
    for (i, r) in results.iter().enumerate() {
        assert_eq!(text(r), format!("Echo: n{i}"));
    }
}

/// `futures::future::join_all` without the crate: spawn-free, in order.
async fn futures_join_all<F: std::future::Future>(futs: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut set = Vec::new();
    for f in futs {
        set.push(Box::pin(f));
    }
    let mut out: Vec<Option<F::Output>> = (0..set.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in set.iter_mut().enumerate() {
            if out[i].is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => out[i] = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.into_iter().map(Option::unwrap).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_allowed_everything_but_jailed_to_one_folder() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "not for the server").unwrap();
    // The server is told it may use all of `/`; the jail shows it one folder to write.
    let server = McpServer::stdio("filesystem", server_bin("mcp-server-filesystem"), ["/"])
        .sandbox(jail(dir.path()).allow_write(&work));
    let runtime = bounded("connect", Runtime::builder().mcp_server(server).connect())
        .await
        .unwrap();
    let file = work.join("note.txt");
    let r = bounded(
        "write",
        runtime.call(
            "write_file",
            json!({"path": file, "content": "written in the jail"}),
            CallOptions::new(),
        ),
    )
    .await;
    assert_eq!(r.stop, StopReason::Completed, "{}", text(&r));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "written in the jail"
    );
    let r = bounded(
        "read",
        runtime.call("read_text_file", json!({"path": file}), CallOptions::new()),
    )
    .await;
    assert_eq!(text(&r), "written in the jail");

    // Outside the grant: the file exists on this machine, not in the jail.
    let r = bounded(
        "read outside",
        runtime.call(
            "read_text_file",
            json!({"path": secret}),
            CallOptions::new(),
        ),
    )
    .await;
    assert!(r.is_error, "{}", text(&r));
    assert!(!text(&r).contains("not for the server"), "{}", text(&r));
    assert!(
        text(&r).contains("ENOENT") || text(&r).contains("no such file"),
        "{}",
        text(&r)
    );
    // Writing outside it fails too; nothing appears on the host.
    let escaped = outside.path().join("escaped.txt");
    let r = bounded(
        "write outside",
        runtime.call(
            "write_file",
            json!({"path": escaped, "content": "x"}),
            CallOptions::new(),
        ),
    )
    .await;
    assert!(r.is_error, "{}", text(&r));
    assert!(!escaped.exists());
}

fn edited(mut snap: Snapshot, tool: &str) -> Snapshot {
    let t = snap.tools.iter_mut().find(|t| t.name == tool).unwrap();
    let mut schema = t.input_schema.clone();
    schema["properties"]["addedSinceTheBuild"] = json!({"type": "string"});
    let listed = json!({"name": t.name, "description": t.description, "inputSchema": schema});
    *t = SnapshotTool::from_listed(&listed).unwrap();
    Snapshot::new(
        &snap.name,
        snap.server.clone(),
        snap.protocol_version.clone(),
        snap.tools.clone(),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_snapshot_stops_the_call_before_anything_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let memory_file = data.join("memory.jsonl");
    let server = McpServer::stdio(
        "memory",
        server_bin("mcp-server-memory"),
        Vec::<String>::new(),
    )
    .env("MEMORY_FILE_PATH", memory_file.display().to_string())
    .snapshot(edited(fixture_snapshot("memory"), "create_entities"))
    .sandbox(jail(dir.path()).allow_write(&data));
    let runtime = Runtime::builder().mcp_server(server).build();
    let args =
        json!({"entities": [{"name": "toolbind", "entityType": "project", "observations": []}]});
    let r = bounded(
        "drifted call",
        runtime.call("create_entities", args, CallOptions::new()),
    )
    .await;
    assert_eq!(r.stop, StopReason::ContractDrift, "{}", text(&r));
    let t = text(&r);
    assert!(
        t.contains("create_entities") && t.contains("addedSinceTheBuild"),
        "{t}"
    );
    assert!(t.contains("nothing was sent"), "{t}");
    // Nothing reached the server: its graph is empty, its file never written.
    let r = bounded(
        "read_graph",
        runtime.call("read_graph", json!({}), CallOptions::new()),
    )
    .await;
    assert_eq!(r.stop, StopReason::Completed, "{}", text(&r));
    assert!(!text(&r).contains("toolbind"), "{}", text(&r));
    assert!(!memory_file.exists());

    // The typed path compares the compiled contract too: bindings from the real snapshot
    // against a runtime given the edited one.
    let params = servers::memory::create_entities::Params { entities: vec![] };
    let r = bounded(
        "typed drift",
        runtime.call_mcp::<servers::memory::create_entities::Tool>(params, CallOptions::new()),
    )
    .await;
    assert_eq!(r.stop, StopReason::ContractDrift, "{}", text(&r));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_mid_call_is_started_again() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = bounded(
        "connect",
        Runtime::builder()
            .mcp_server(misbehaving("die", dir.path()))
            .connect(),
    )
    .await
    .unwrap();
    let r = bounded(
        "die",
        runtime.call("ok", json!({"text": "die"}), CallOptions::new()),
    )
    .await;
    assert_eq!(r.stop, StopReason::Crashed, "{}", text(&r));
    let t = text(&r);
    assert!(t.contains("exited with code 7"), "{t}");
    assert!(
        t.contains("dying on purpose in the middle of a call"),
        "{t}"
    );
    let r = bounded(
        "after",
        runtime.call("ok", json!({"text": "again"}), CallOptions::new()),
    )
    .await;
    assert_eq!(text(&r), "ok: again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_hangs_times_out_and_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let server = misbehaving("hang", dir.path()).ping_timeout(Duration::from_millis(500));
    let runtime = bounded("connect", Runtime::builder().mcp_server(server).connect())
        .await
        .unwrap();
    let opts = CallOptions::new().timeout(Duration::from_millis(500));
    let r = bounded("hang", runtime.call("ok", json!({"text": "hang"}), opts)).await;
    assert!(matches!(r.stop, StopReason::Timeout { .. }), "{:?}", r.stop);
    // The hung server does not answer the ping either: it is stopped, and the next call
    // gets a fresh one (polled: the ping's verdict takes up to its timeout).
    let mut last = String::new();
    for _ in 0..100 {
        let r = bounded(
            "after",
            runtime.call(
                "ok",
                json!({"text": "fresh"}),
                CallOptions::new().timeout(Duration::from_secs(20)),
            ),
        )
        .await;
        last = text(&r);
        if last == "ok: fresh" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no fresh server answered; last: {last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floods_and_broken_outputs_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = bounded(
        "connect",
        Runtime::builder()
            .mcp_server(misbehaving("flood", dir.path()))
            .mcp_server(misbehaving("badout", dir.path()).prefix("bad_"))
            .mcp_server(
                misbehaving("hugeline", dir.path())
                    .prefix("huge_")
                    .max_message_bytes(1 << 20),
            )
            .mcp_server(misbehaving("notutf8", dir.path()).prefix("utf_"))
            .mcp_server(misbehaving("deep", dir.path()).prefix("deep_"))
            .connect(),
    )
    .await
    .unwrap();
    // 100,000 notifications before the answer: progress delivered, log messages dropped.
    let seen = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    let opts = CallOptions::new().progress(move |_| {
        s.fetch_add(1, Ordering::Relaxed);
    });
    let r = bounded(
        "flood",
        runtime.call("ok", json!({"text": "after the flood"}), opts),
    )
    .await;
    assert_eq!(text(&r), "ok: after the flood");
    assert_eq!(seen.load(Ordering::Relaxed), 50_000);

    // structuredContent that breaks the outputSchema: kept, marked broken.
    let r = bounded(
        "badout",
        runtime.call("bad_ok", json!({"text": "x"}), CallOptions::new()),
    )
    .await;
    assert_eq!(r.stop, StopReason::Completed);
    assert_eq!(r.output_check, toolbind::output::OutputCheck::Broken);

    // One line over the message bound ends that connection with a clear reason.
    let r = bounded(
        "hugeline",
        runtime.call("huge_ok", json!({"text": "x"}), CallOptions::new()),
    )
    .await;
    assert_eq!(r.stop, StopReason::Crashed, "{}", text(&r));
    assert!(
        text(&r).contains("longer than 1048576 bytes"),
        "{}",
        text(&r)
    );

    // An answer the client cannot parse (rmcp skips such a line as it skips a log line)
    // ends the connection with the reason, instead of leaving the call to its timeout.
    for (name, why) in [
        ("utf_ok", "not valid UTF-8"),
        ("deep_ok", "nested deeper than 127 levels"),
    ] {
        let r = bounded(
            name,
            runtime.call(
                name,
                json!({"text": "x"}),
                CallOptions::new().timeout(Duration::from_secs(600)),
            ),
        )
        .await;
        assert_eq!(r.stop, StopReason::Crashed, "{}", text(&r));
        assert!(text(&r).contains(why), "{}", text(&r));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_fails_fast_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let server = misbehaving("stderr", dir.path()).max_restart_delay(Duration::from_secs(60));
    let err = bounded(
        "connect",
        Runtime::builder()
            .mcp_server(server.clone())
            .mcp_strict(true)
            .connect(),
    )
    .await
    .unwrap_err();
    assert_eq!(err.server(), "misbehaving-stderr");
    assert!(
        err.to_string().contains("MISBEHAVING_TOKEN is not set"),
        "{err}"
    );

    // Lazily: the first call tries and fails; the next one fails at once, saying why.
    let snap = Snapshot::new(
        "misbehaving-stderr",
        Default::default(),
        "2025-11-25",
        vec![
            SnapshotTool::from_listed(&json!({"name": "ok", "inputSchema": {"type": "object"}}))
                .unwrap(),
        ],
    )
    .unwrap();
    let runtime = Runtime::builder().mcp_server(server.snapshot(snap)).build();
    let r = bounded("first", runtime.call("ok", json!({}), CallOptions::new())).await;
    assert_eq!(r.stop, StopReason::Crashed, "{}", text(&r));
    assert!(text(&r).contains("MISBEHAVING_TOKEN"), "{}", text(&r));
    // Waits under a second are waited out (250 ms, 500 ms, 1 s); the next fails at once.
    for _ in 0..3 {
        let r = bounded("again", runtime.call("ok", json!({}), CallOptions::new())).await;
        assert!(text(&r).contains("MISBEHAVING_TOKEN"), "{}", text(&r));
    }
    let r = bounded("fast", runtime.call("ok", json!({}), CallOptions::new())).await;
    let t = text(&r);
    assert!(
        t.contains("is not running") && t.contains("starts it again in"),
        "{t}"
    );
    assert!(t.contains("4 start(s) in a row failed"), "{t}");
    // Two servers of one name are refused.
    let twice = Runtime::builder()
        .mcp_server(misbehaving("die", dir.path()).prefix("a_"))
        .mcp_server(misbehaving("die", dir.path()).prefix("b_"))
        .connect();
    let err = bounded("twice", twice).await.unwrap_err();
    assert!(
        err.to_string().contains("two MCP servers are named"),
        "{err}"
    );
}

/// From Rust: a server that cannot start and one that hangs at `initialize` leave the
/// runtime built, the healthy server's tools callable, and their states said; a call of a
/// failed server's tool names it and why; with `mcp_strict`, the failure is `connect`'s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_fails_affects_only_its_own_tools() {
    use toolbind::mcp::McpServerState;
    let dir = tempfile::tempdir().unwrap();
    let one_tool = |server: &str, tool: &str| {
        let tool =
            SnapshotTool::from_listed(&json!({"name": tool, "inputSchema": {"type": "object"}}))
                .unwrap();
        Snapshot::new(server, Default::default(), "2025-11-25", vec![tool]).unwrap()
    };
    let dead = || {
        McpServer::stdio("dead", "sh", ["-c", "echo dead on arrival >&2; exit 3"])
            .sandbox(jail(dir.path()))
            .max_restart_delay(Duration::from_secs(60))
    };
    // It stays starting for the whole test: its own bound is far off.
    let hangs = misbehaving("silent", dir.path()).connect_timeout(Duration::from_secs(300));
    let runtime = bounded(
        "connect",
        Runtime::builder()
            .mcp_server(everything(dir.path()))
            .mcp_server(dead().snapshot(one_tool("dead", "dead_tool")))
            .mcp_server(hangs.snapshot(one_tool("misbehaving-silent", "hangs_tool")))
            .mcp_start_wait(Duration::from_secs(2))
            .connect(),
    )
    .await
    .expect("failed servers do not stop the runtime");
    // The wait may end before the healthy server is up on a loaded machine: its state
    // gets there, the hanging one's does not.
    let settled = || {
        let states: std::collections::HashMap<_, _> = runtime.mcp_servers().into_iter().collect();
        (states["everything"] == McpServerState::Ready
            && matches!(states["dead"], McpServerState::Failed { .. }))
        .then_some(states)
    };
    until_true(
        || format!("{:?}", runtime.mcp_servers()),
        60,
        || settled().is_some(),
    )
    .await;
    let states = settled().unwrap();
    assert_eq!(states["misbehaving-silent"], McpServerState::Starting);
    match &states["dead"] {
        McpServerState::Failed { reason, .. } => {
            assert!(reason.contains("dead on arrival"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    let r = bounded(
        "echo",
        runtime.call("echo", json!({"message": "hi"}), CallOptions::new()),
    )
    .await;
    assert_eq!(text(&r), "Echo: hi");
    // The failed server's snapshot tool: a call names the server and why.
    let r = bounded(
        "dead",
        runtime.call("dead_tool", json!({}), CallOptions::new()),
    )
    .await;
    assert_eq!(r.stop, StopReason::Crashed, "{}", text(&r));
    assert!(
        text(&r).contains("MCP server `dead`") && text(&r).contains("dead on arrival"),
        "{}",
        text(&r)
    );
    // The hanging one's waits for its start, within the call's own timeout.
    let r = bounded(
        "hangs",
        runtime.call(
            "hangs_tool",
            json!({}),
            CallOptions::new().timeout(Duration::from_secs(1)),
        ),
    )
    .await;
    assert!(matches!(r.stop, StopReason::Timeout { .. }), "{}", text(&r));
    // A server without a snapshot that failed: its tools are unknown, and the message
    // says which server may have had it.
    let runtime = bounded(
        "no snapshot",
        Runtime::builder()
            .mcp_server(everything(dir.path()))
            .mcp_server(dead())
            .connect(),
    )
    .await
    .unwrap();
    let r = bounded(
        "unknown",
        runtime.call("dead_tool", json!({}), CallOptions::new()),
    )
    .await;
    assert_eq!(r.stop, StopReason::UnknownTool, "{}", text(&r));
    // The model reads this: the server and a word, never the server's own text.
    assert!(
        text(&r).contains("MCP server `dead` (failed to start)")
            && !text(&r).contains("dead on arrival"),
        "{}",
        text(&r)
    );
    // Strict: the first failure is connect's error.
    let err = bounded(
        "strict",
        Runtime::builder()
            .mcp_server(everything(dir.path()))
            .mcp_server(dead())
            .mcp_strict(true)
            .connect(),
    )
    .await
    .unwrap_err();
    assert_eq!(err.server(), "dead");
    assert!(err.to_string().contains("dead on arrival"), "{err}");
}

/// A server without a snapshot that is not up when `connect` returns: its tools join the
/// runtime once it is — one still starting, and one whose first start failed (tried again
/// in the background). Until then a call of its tool is unknown, saying it is starting;
/// a second server with the same tool names is refused, as at connect.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_comes_up_later_joins_with_its_tools() {
    use toolbind::mcp::McpServerState;
    let dir = tempfile::tempdir().unwrap();
    let script = common::fixture("mcp_servers/misbehaving.py");
    // Fails its first start (exit 3), then runs as a well-behaved server.
    let once = McpServer::stdio(
        "once",
        "sh",
        [
            "-c".to_owned(),
            "if [ -e \"$HOME/once\" ]; then exec python3 \"$0\" die; fi; touch \"$HOME/once\"; echo first start fails >&2; exit 3".to_owned(),
            script.display().to_string(),
        ],
    )
    // `sh -c` names no script the jail would show: the fixture's folder is granted.
    .sandbox(jail(dir.path()).allow_read(script.parent().unwrap()))
    .prefix("once_");
    let runtime = bounded(
        "connect",
        Runtime::builder()
            .mcp_server(misbehaving("slow", dir.path()))
            .mcp_server(once)
            .mcp_start_wait(Duration::from_millis(500))
            .connect(),
    )
    .await
    .unwrap();
    assert_eq!(
        runtime.mcp_server_state("misbehaving-slow"),
        Some(McpServerState::Starting)
    );
    assert!(runtime.tool("ok").is_none() && runtime.registry().is_empty());
    let r = bounded(
        "early",
        runtime.call("ok", json!({"text": "x"}), CallOptions::new()),
    )
    .await;
    assert_eq!(r.stop, StopReason::UnknownTool, "{}", text(&r));
    assert!(
        text(&r).contains("MCP server `misbehaving-slow` (still starting)"),
        "{}",
        text(&r)
    );
    until_true(
        || format!("joined: {:?}", runtime.mcp_servers()),
        60,
        || runtime.tool("ok").is_some() && runtime.tool("once_ok").is_some(),
    )
    .await;
    for name in ["ok", "once_ok"] {
        let r = bounded(
            name,
            runtime.call(name, json!({"text": "late"}), CallOptions::new()),
        )
        .await;
        assert_eq!(text(&r), "ok: late");
    }
    let list = runtime.tool_list();
    assert!(list.get("ok").is_some() && list.get("once_ok").is_some());
    assert!(
        runtime.registry().is_empty(),
        "the built list stays as built"
    );

    // Two late servers with the same names: the one that comes second is refused.
    let runtime = bounded(
        "clash",
        Runtime::builder()
            .mcp_server(misbehaving("slow", dir.path()))
            .mcp_server(
                McpServer::stdio(
                    "again",
                    "python3",
                    [script.display().to_string(), "slow".to_owned()],
                )
                .sandbox(jail(dir.path())),
            )
            .mcp_start_wait(Duration::from_millis(500))
            .connect(),
    )
    .await
    .unwrap();
    let settled = || {
        runtime
            .mcp_servers()
            .iter()
            .all(|(_, s)| !matches!(s, McpServerState::Starting))
            && runtime.tool("ok").is_some()
    };
    until_true(|| format!("{:?}", runtime.mcp_servers()), 60, settled).await;
    // The second to come up is refused a moment after it is ready.
    let refused = || {
        runtime
            .mcp_servers()
            .into_iter()
            .filter(|(_, s)| matches!(s, McpServerState::Refused { .. }))
            .collect::<Vec<_>>()
    };
    until_true(
        || format!("{:?}", runtime.mcp_servers()),
        10,
        || !refused().is_empty(),
    )
    .await;
    let refused = refused();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0]
            .1
            .reason()
            .unwrap()
            .contains("a name another tool already has"),
        "{refused:?}"
    );
}

/// MCP's tasks extension from the client side, against `toolbind serve` (2026-07-28): a
/// `task: required` tool (refused to a client that does not take tasks) runs as a task
/// and its result comes back; a task's progress arrives as the call's progress; a task's
/// question is answered by the agent's host; a cancel is `tasks/cancel`, and the tool's
/// own abort signal fires in the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_the_server_runs_as_a_task_is_followed_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let tools = common::fixture("task_tools");
    let server = McpServer::stdio(
        "tasks",
        common::bin(),
        [
            "serve".to_owned(),
            "--allow-write".to_owned(),
            dir.path().display().to_string(),
            tools.display().to_string(),
        ],
    )
    // toolbind's own server jails its tools itself.
    .sandbox(SandboxPolicy::off());
    let runtime = bounded(
        "connect",
        Runtime::builder()
            .host(Recorder::default())
            .mcp_server(server)
            .mcp_strict(true)
            .connect(),
    )
    .await
    .unwrap();
    assert_eq!(
        runtime.mcp_protocol_version("tasks").as_deref(),
        Some("2026-07-28")
    );
    let r = bounded(
        "job_sh",
        runtime.call("job_sh", json!({"seconds": 1}), CallOptions::new()),
    )
    .await;
    assert_eq!(r.stop, StopReason::Completed, "{}", text(&r));
    assert_eq!(text(&r).trim(), "slept 1 s");

    let updates = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = updates.clone();
    let opts = CallOptions::new().progress(move |p| seen.lock().unwrap().push(p.text_content()));
    let r = bounded(
        "job_py",
        runtime.call("job_py", json!({"seconds": 1}), opts),
    )
    .await;
    assert_eq!(text(&r), "worked 1 s", "{}", text(&r));
    assert!(
        updates
            .lock()
            .unwrap()
            .iter()
            .any(|u| u.contains("started")),
        "{:?}",
        updates.lock().unwrap()
    );

    let r = bounded(
        "ask_task",
        runtime.call("ask_task", json!({}), CallOptions::new()),
    )
    .await;
    assert_eq!(text(&r), "told yes", "{}", text(&r));

    // A cancel: `tasks/cancel`, and the tool in the server gets its abort signal.
    let pidfile = dir.path().join("job.pid");
    let cancel = CancelToken::new();
    let c = cancel.clone();
    let file = pidfile.clone();
    tokio::spawn(async move {
        while !file.exists() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        c.cancel();
    });
    let r = bounded(
        "cancel",
        runtime.call(
            "job_py",
            json!({"seconds": 60, "pidfile": pidfile.display().to_string()}),
            CallOptions::new().cancel(cancel),
        ),
    )
    .await;
    assert_eq!(r.stop, StopReason::Cancelled, "{}", text(&r));
    assert!(
        text(&r).contains("cancelled its task (`tasks/cancel`)"),
        "{}",
        text(&r)
    );
    let aborted = dir.path().join("job.pid.aborted");
    until_true(
        || "the tool in the server got its abort signal".into(),
        30,
        || aborted.exists(),
    )
    .await;
    // A timeout: the same, as `Timeout`.
    let r = bounded(
        "timeout",
        runtime.call(
            "job_sh",
            json!({"seconds": 60}),
            CallOptions::new().timeout(Duration::from_secs(1)),
        ),
    )
    .await;
    assert!(matches!(r.stop, StopReason::Timeout { .. }), "{}", text(&r));
}

/// A host that answers every yes/no of a form yes and every sample with a haiku, and
/// records who asked what (the tool, and the question); its forms answer after `delay_ms`,
/// or, while `hold` is set, never; `dropped` counts the forms dropped unanswered.
#[derive(Clone, Default)]
struct Recorder {
    asked: Arc<std::sync::Mutex<Vec<(String, String)>>>,
    hold: Arc<std::sync::atomic::AtomicBool>,
    delay_ms: Arc<std::sync::atomic::AtomicU64>,
    dropped: Arc<AtomicUsize>,
}

/// Counts one in `dropped` when dropped before `answered` is set.
struct Unanswered {
    dropped: Arc<AtomicUsize>,
    answered: bool,
}

impl Drop for Unanswered {
    fn drop(&mut self) {
        if !self.answered {
            self.dropped.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl toolbind::host::Host for Recorder {
    fn approve(
        &self,
        _request: toolbind::host::ApprovalRequest,
    ) -> toolbind::host::Answer<toolbind::host::Decision> {
        Box::pin(async { toolbind::host::Decision::Approve })
    }

    fn elicit(
        &self,
        request: toolbind::host::ElicitRequest,
    ) -> toolbind::host::Answer<Result<toolbind::host::Elicited, toolbind::host::Refusal>> {
        self.asked.lock().unwrap().push((
            request.asker.tool.name().to_owned(),
            request.message.clone(),
        ));
        let hold = self.hold.load(Ordering::SeqCst);
        let delay = Duration::from_millis(self.delay_ms.load(Ordering::SeqCst));
        let unanswered = Unanswered {
            dropped: self.dropped.clone(),
            answered: false,
        };
        let mut content = serde_json::Map::new();
        for (k, v) in request.schema["properties"]
            .as_object()
            .into_iter()
            .flatten()
        {
            if v["type"] == "boolean" {
                content.insert(k.clone(), json!(true));
            }
        }
        Box::pin(async move {
            // Moved in whole (a field alone would be captured otherwise).
            let mut unanswered = unanswered;
            if hold {
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(delay).await;
            unanswered.answered = true;
            Ok(toolbind::host::Elicited::accept(content))
        })
    }

    fn sample(
        &self,
        request: toolbind::host::SampleRequest,
    ) -> toolbind::host::Answer<Result<serde_json::Value, toolbind::host::Refusal>> {
        let asked = request.params["messages"][0]["content"]["text"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        self.asked
            .lock()
            .unwrap()
            .push((request.asker.tool.name().to_owned(), asked));
        Box::pin(async move {
            Ok(json!({"role": "assistant", "model": "the-host",
                "content": {"type": "text", "text": "old pond, a frog"}}))
        })
    }
}

/// A Node server of the TypeScript SDK's, started on loopback: `script` with `env`, ready
/// when its log has `ready`.
fn ts_server(
    script: PathBuf,
    env: &[(&str, String)],
    dir: &Path,
    ready: &str,
) -> common::Background {
    let clients = clients_dir();
    let mut cmd = std::process::Command::new(clients.join("conformance/node22/bin/node"));
    cmd.arg("--import")
        .arg(common::fixture("mcp_servers/loopback.mjs"))
        .env("NODE_MODULES", clients.join("node/node_modules"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut name = script.file_stem().unwrap().to_string_lossy().into_owned();
    for (k, _) in env {
        name.push('-');
        name.push_str(k);
    }
    cmd.arg(script);
    common::Background::start(cmd, dir.join(format!("{name}.log")), ready)
}

/// fixtures/mcp_servers/ts_legacy_tasks.mjs with `env`, and a runtime connected to it as
/// server `name`.
async fn legacy_tasks_server(
    name: &str,
    env: &[(&str, String)],
    dir: &Path,
) -> (common::Background, Runtime) {
    let server = ts_server(
        common::fixture("mcp_servers/ts_legacy_tasks.mjs"),
        env,
        dir,
        "ready ",
    );
    let log = server.log();
    let url = log[log.find("http://").unwrap()..]
        .lines()
        .next()
        .unwrap()
        .trim()
        .to_owned();
    let runtime = bounded(
        "connect",
        Runtime::builder()
            .mcp_server(McpServer::http(name, url))
            .mcp_strict(true)
            .connect(),
    )
    .await
    .unwrap();
    (server, runtime)
}

/// MCP 2025-11-25 tasks from the client side, against servers on the TypeScript SDK: its
/// own example of tools that run only as tasks and ask through the task
/// (`simpleTaskInteractive`), where toolbind finds out a tool wants a task from the
/// refusal of a plain call, and each task's question reaches the agent's host on behalf of
/// its own call (two at once); and a long tool on the SDK's task store
/// (fixtures/mcp_servers/ts_legacy_tasks.mjs), whose status messages arrive as progress
/// and which a cancel or a timeout stops in the server through `tasks/cancel`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_11_25_servers_tasks_are_followed_to_their_end() {
    let dir = tempfile::tempdir().unwrap();
    let port = common::free_port();
    let example = clients_dir()
        .join("node/node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleTaskInteractive.js");
    let _example = ts_server(
        example,
        &[("PORT", port.to_string())],
        dir.path(),
        "Starting server on",
    );
    let host = Recorder::default();
    let server = McpServer::http("sti", format!("http://127.0.0.1:{port}/mcp"));
    let runtime = bounded(
        "connect",
        Runtime::builder()
            .host(host.clone())
            .mcp_server(server)
            .mcp_strict(true)
            .connect(),
    )
    .await
    .unwrap();
    assert_eq!(
        runtime.mcp_protocol_version("sti").as_deref(),
        Some("2025-11-25")
    );
    let (deleted, haiku) = bounded("two tasks at once", async {
        tokio::join!(
            runtime.call(
                "confirm_delete",
                json!({"filename": "a.txt"}),
                CallOptions::new(),
            ),
            runtime.call("write_haiku", json!({"topic": "ponds"}), CallOptions::new()),
        )
    })
    .await;
    assert_eq!(deleted.stop, StopReason::Completed, "{}", text(&deleted));
    assert_eq!(text(&deleted), "Deleted 'a.txt'");
    assert_eq!(haiku.stop, StopReason::Completed, "{}", text(&haiku));
    assert!(text(&haiku).starts_with("Haiku:"), "{}", text(&haiku));
    assert!(
        text(&haiku).contains("old pond, a frog"),
        "{}",
        text(&haiku)
    );
    let mut asked = host.asked.lock().unwrap().clone();
    asked.sort();
    assert_eq!(asked.len(), 2, "{asked:?}");
    // Each question is charged to its own call's tool, not to the server.
    assert_eq!(asked[0].0, "confirm_delete", "{asked:?}");
    assert!(asked[0].1.contains("delete 'a.txt'"), "{asked:?}");
    assert_eq!(asked[1].0, "write_haiku", "{asked:?}");
    assert!(asked[1].1.contains("ponds"), "{asked:?}");
    // Known now to want a task, the tool is asked as one at once.
    let r = bounded(
        "again",
        runtime.call(
            "confirm_delete",
            json!({"filename": "b.txt"}),
            CallOptions::new(),
        ),
    )
    .await;
    assert_eq!(text(&r), "Deleted 'b.txt'");
    // The call's timeout stands still while the host has the task's question: a host that
    // takes 2.5 s does not time out a call of 1 s.
    host.delay_ms.store(2_500, Ordering::SeqCst);
    let r = bounded(
        "a slow answer",
        runtime.call(
            "confirm_delete",
            json!({"filename": "slow.txt"}),
            CallOptions::new().timeout(Duration::from_secs(1)),
        ),
    )
    .await;
    assert_eq!(r.stop, StopReason::Completed, "{}", text(&r));
    assert_eq!(text(&r), "Deleted 'slow.txt'");
    host.delay_ms.store(0, Ordering::SeqCst);
    // A cancel while the host has the task's question open: the call stops at once and
    // the question is dropped; this server has no `tasks/cancel`, and the result says so.
    host.hold.store(true, Ordering::SeqCst);
    let cancel = CancelToken::new();
    let c = cancel.clone();
    let asked = host.asked.clone();
    tokio::spawn(async move {
        while asked.lock().unwrap().len() < 5 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        c.cancel();
    });
    let r = bounded(
        "cancel during a question",
        runtime.call(
            "confirm_delete",
            json!({"filename": "c.txt"}),
            CallOptions::new().cancel(cancel),
        ),
    )
    .await;
    assert_eq!(r.stop, StopReason::Cancelled, "{}", text(&r));
    assert!(
        text(&r).contains("was sent `tasks/cancel`, which it did not acknowledge"),
        "{}",
        text(&r)
    );
    let dropped = host.dropped.clone();
    until_true(
        || {
            format!(
                "the cancelled call's open question was dropped: {}",
                host.dropped.load(Ordering::SeqCst)
            )
        },
        30,
        || dropped.load(Ordering::SeqCst) == 1,
    )
    .await;
    drop(runtime);

    // Progress, a cancel and a timeout, on the SDK's task store.
    let (fixture, runtime) = legacy_tasks_server("slow", &[], dir.path()).await;
    let updates = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = updates.clone();
    let opts = CallOptions::new().progress(move |p| seen.lock().unwrap().push(p.text_content()));
    let r = bounded("slow", runtime.call("slow", json!({"steps": 3}), opts)).await;
    assert_eq!(r.stop, StopReason::Completed, "{}", text(&r));
    assert_eq!(text(&r), "did 3 steps");
    let updates = updates.lock().unwrap().clone();
    assert!(
        updates.iter().any(|u| u == "step 1 of 3") && updates.iter().any(|u| u == "step 2 of 3"),
        "{updates:?}"
    );
    let cancels = |log: &str| log.matches("CANCEL-SEEN").count();
    let cancel = CancelToken::new();
    let c = cancel.clone();
    let opts = CallOptions::new()
        .cancel(cancel)
        .progress(move |_| c.cancel());
    let r = bounded("cancel", runtime.call("slow", json!({"steps": 100}), opts)).await;
    assert_eq!(r.stop, StopReason::Cancelled, "{}", text(&r));
    assert!(
        text(&r).contains("cancelled its task (`tasks/cancel`)"),
        "{}",
        text(&r)
    );
    until_true(
        || format!("the task stopped in the server: {}", fixture.log()),
        30,
        || cancels(&fixture.log()) == 1,
    )
    .await;
    let r = bounded(
        "timeout",
        runtime.call(
            "slow",
            json!({"steps": 100}),
            CallOptions::new().timeout(Duration::from_secs(1)),
        ),
    )
    .await;
    assert!(matches!(r.stop, StopReason::Timeout { .. }), "{}", text(&r));
    assert!(
        text(&r).contains("cancelled its task (`tasks/cancel`)"),
        "{}",
        text(&r)
    );
    until_true(
        || {
            format!(
                "the timed-out task stopped in the server: {}",
                fixture.log()
            )
        },
        30,
        || cancels(&fixture.log()) == 2,
    )
    .await;
    assert_eq!(fixture.log().matches("COMPLETED").count(), 1);
    // Only the first call was sent without a task (and refused): the others asked for one
    // at once.
    assert_eq!(fixture.log().matches("PLAIN-CALL slow").count(), 1);
    drop(runtime);

    // The connection of a poll, then of `tasks/result`, cut without an answer: the task
    // lives in the server, and the call takes it up again by its id.
    let (cut, runtime) = legacy_tasks_server(
        "cut",
        &[("DROP_ONCE", "tasks/get,tasks/result".to_owned())],
        dir.path(),
    )
    .await;
    let r = bounded(
        "cut",
        runtime.call("slow", json!({"steps": 3}), CallOptions::new()),
    )
    .await;
    assert_eq!(r.stop, StopReason::Completed, "{}\n{}", text(&r), cut.log());
    assert_eq!(text(&r), "did 3 steps");
    assert!(cut.log().contains("DROPPED tasks/get"), "{}", cut.log());
    assert!(cut.log().contains("DROPPED tasks/result"), "{}", cut.log());
}

/// A 2025-11-25 server whose tasks go wrong (fixtures/mcp_servers/legacy_tasks_hostile.py):
/// two calls given one task id, a tool whose own failure mentions a task, two first calls
/// of a task-only tool at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_11_25_server_whose_tasks_go_wrong_is_followed_safely() {
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mcp_servers/legacy_tasks_hostile.py");
    let start = |mode: &str| {
        let log = dir.path().join(format!("{mode}.log"));
        let server = McpServer::stdio(
            mode,
            "python3",
            [
                script.display().to_string(),
                mode.to_owned(),
                log.display().to_string(),
            ],
        )
        .sandbox(SandboxPolicy::off());
        let runtime = Runtime::builder()
            .mcp_server(server)
            .mcp_strict(true)
            .connect();
        (log, runtime)
    };
    let read = |log: &Path| std::fs::read_to_string(log).unwrap_or_default();

    // One task for two calls: one follows it, the other is refused (it would otherwise
    // take the first one's questions, and spin).
    let (_, runtime) = start("same");
    let runtime = bounded("connect", runtime).await.unwrap();
    let (a, b) = bounded("two calls, one task", async {
        tokio::join!(
            runtime.call("t", json!({}), CallOptions::new()),
            runtime.call("t", json!({}), CallOptions::new()),
        )
    })
    .await;
    let mut results = [a, b];
    results.sort_by_key(|r| r.stop == StopReason::Completed);
    assert_eq!(
        results[1].stop,
        StopReason::Completed,
        "{}",
        text(&results[1])
    );
    assert_eq!(text(&results[1]), "ok");
    assert_eq!(
        results[0].stop,
        StopReason::ProtocolError,
        "{}",
        text(&results[0])
    );
    assert!(
        text(&results[0]).contains("a task another call follows already"),
        "{}",
        text(&results[0])
    );
    drop(runtime);

    // A tool that ran and failed in words that mention a task is not run again.
    let (log, runtime) = start("twice");
    let runtime = bounded("connect", runtime).await.unwrap();
    let r = bounded("w", runtime.call("w", json!({}), CallOptions::new())).await;
    assert_eq!(r.stop, StopReason::ToolError, "{}", text(&r));
    assert!(
        text(&r).contains("requires task owner approval"),
        "{}",
        text(&r)
    );
    assert_eq!(read(&log).matches("RAN").count(), 1, "{}", read(&log));
    drop(runtime);

    // Two first calls at once of a tool that runs only as a task: both are asked again as
    // tasks, and a later call asks for one at once.
    let (log, runtime) = start("race");
    let runtime = bounded("connect", runtime).await.unwrap();
    let (a, b) = bounded("two first calls", async {
        tokio::join!(
            runtime.call("r", json!({}), CallOptions::new()),
            runtime.call("r", json!({}), CallOptions::new()),
        )
    })
    .await;
    assert_eq!(text(&a), "ok", "{a:?}");
    assert_eq!(text(&b), "ok", "{b:?}");
    let plain = read(&log).matches("PLAIN").count();
    assert!((1..=2).contains(&plain), "{}", read(&log));
    let r = bounded("r", runtime.call("r", json!({}), CallOptions::new())).await;
    assert_eq!(text(&r), "ok", "{r:?}");
    assert_eq!(read(&log).matches("PLAIN").count(), plain, "{}", read(&log));
}

/// Secrets: an input the server's schema marks `format: password` and one the config
/// lists as `"sensitive"` never leave the call; an ordinary input does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inputs_marked_secret_by_the_schema_or_the_config_are_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_servers/misbehaving.py");
    let cfg = dir.path().join(".mcp.json");
    std::fs::write(
        &cfg,
        json!({"mcpServers": {"secret": {
            "command": "python3",
            "args": [script, "secret"],
            "sensitive": ["text"]
        }}})
        .to_string(),
    )
    .unwrap();
    let servers = McpServer::from_config_file(&cfg).unwrap();
    let mut b = Runtime::builder();
    for s in servers {
        b = b.mcp_server(s.sandbox(jail(dir.path())));
    }
    let runtime = bounded("connect", b.connect()).await.unwrap();
    let r = bounded(
        "call",
        runtime.call(
            "ok",
            json!({"text": "listed-secret-1", "pin": "schema-secret-2", "note": "plain-note-3"}),
            CallOptions::new(),
        ),
    )
    .await;
    let t = text(&r);
    assert_eq!(r.stop, StopReason::Completed, "{t}");
    assert!(
        !t.contains("listed-secret-1") && !t.contains("schema-secret-2"),
        "a secret left the call: {t}"
    );
    assert!(
        t.contains("[REDACTED]") && t.contains("note=plain-note-3"),
        "{t}"
    );
}

/// A start slower than the first call's deadline is not thrown away with that call: the
/// next call waits for the same start, and the server is started once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_start_outlives_the_first_callers_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let snap = Snapshot::new(
        "misbehaving-slow",
        Default::default(),
        "2025-11-25",
        vec![
            SnapshotTool::from_listed(&json!({"name": "ok", "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"]
            }}))
            .unwrap(),
        ],
    )
    .unwrap();
    let runtime = Runtime::builder()
        .mcp_server(misbehaving("slow", dir.path()).snapshot(snap))
        .build();
    let r = bounded(
        "first",
        runtime.call(
            "ok",
            json!({"text": "a"}),
            CallOptions::new().timeout(Duration::from_millis(200)),
        ),
    )
    .await;
    assert!(matches!(r.stop, StopReason::Timeout { .. }), "{}", text(&r));
    let r = bounded(
        "second",
        runtime.call("ok", json!({"text": "b"}), CallOptions::new()),
    )
    .await;
    assert_eq!(r.stop, StopReason::Completed, "{}", text(&r));
    assert_eq!(text(&r), "ok: b");
    // Its state folder: `<state root>/mcp/<name>-<hash of what it is>/home`.
    let folder = std::fs::read_dir(dir.path().join("state/mcp"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("misbehaving-slow-"))
        })
        .expect("the server's state folder");
    let starts =
        std::fs::read_to_string(folder.join("home/starts")).expect("the server wrote its starts");
    assert_eq!(
        starts.lines().count(),
        1,
        "started more than once: {starts}"
    );
}

/// A bwrap that is installed but cannot build a jail here (as where user namespaces are
/// off): the server's start is not preceded by a trial jail, so the failed start is what
/// shows it, and the trial then says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jail_that_cannot_run_here_is_named_after_the_start_fails() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bwrap = dir.path().join("bwrap");
    std::fs::write(
        &bwrap,
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&bwrap, std::fs::Permissions::from_mode(0o755)).unwrap();
    let server =
        |mode| misbehaving("die", dir.path()).sandbox(jail(dir.path()).mode(mode).bwrap(&bwrap));
    let err = bounded(
        "required",
        Runtime::builder()
            .mcp_server(server(SandboxMode::Required))
            .mcp_strict(true)
            .connect(),
    )
    .await
    .unwrap_err();
    let e = err.to_string();
    assert!(
        e.contains("the sandbox is required but cannot run the server")
            && e.contains("No permissions to create new namespace"),
        "{e}"
    );
    // `auto`: the same failed start, then the server runs unjailed.
    let runtime = bounded(
        "auto",
        Runtime::builder()
            .mcp_server(server(SandboxMode::Auto))
            .connect(),
    )
    .await
    .expect("auto falls back to an unjailed start");
    let r = bounded(
        "call",
        runtime.call("ok", json!({"text": "hi"}), CallOptions::new()),
    )
    .await;
    assert_eq!(r.stop, StopReason::Completed, "{}", text(&r));
    assert_eq!(text(&r), "ok: hi");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn toolbind_serve_as_a_server_speaks_2026_07_28() {
    // toolbind's own server, unjailed here (it jails its tools itself: bwrap in bwrap is
    // not what this test is about).
    let tools: PathBuf = common::fixture("tools");
    let server = McpServer::stdio(
        "local",
        common::bin(),
        ["serve".to_owned(), tools.display().to_string()],
    )
    .sandbox(SandboxPolicy::off());
    let runtime = bounded("connect", Runtime::builder().mcp_server(server).connect())
        .await
        .unwrap();
    assert_eq!(
        runtime.mcp_protocol_version("local").as_deref(),
        Some("2026-07-28")
    );
    assert!(
        runtime.registry().iter().all(|t| t.spec().mcp.is_some()),
        "every tool comes from the server"
    );
    let seen = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    let opts = CallOptions::new().progress(move |_| {
        s.fetch_add(1, Ordering::SeqCst);
    });
    let r = bounded(
        "hello_sh",
        runtime.call("hello_sh", json!({"name": "agent", "steps": 2}), opts),
    )
    .await;
    assert_eq!(r.stop, StopReason::Completed, "{}", text(&r));
    assert!(text(&r).contains("agent"), "{}", text(&r));
    assert_eq!(seen.load(Ordering::SeqCst), 2);
    // A reference server negotiates 2025-11-25 through the same client.
    let dir = tempfile::tempdir().unwrap();
    let runtime = bounded(
        "connect",
        Runtime::builder()
            .mcp_server(everything(dir.path()))
            .connect(),
    )
    .await
    .unwrap();
    assert_eq!(
        runtime.mcp_protocol_version("everything").as_deref(),
        Some("2025-11-25")
    );
}

fn misbehaving_http(mode: &str, dir: &Path) -> (common::Background, String) {
    let mut cmd = std::process::Command::new("python3");
    cmd.arg(common::fixture("mcp_servers/misbehaving.py"))
        .args([mode, "--http"]);
    let server = common::Background::start(cmd, dir.join(format!("{mode}.log")), "/mcp");
    let log = server.log();
    let url = log[log.find("http://").unwrap()..].trim().to_owned();
    (server, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_servers_with_and_without_a_token() {
    let dir = tempfile::tempdir().unwrap();
    // The reference server over Streamable HTTP.
    let port = common::free_port();
    let mut cmd = std::process::Command::new(server_bin("mcp-server-everything"));
    cmd.arg("streamableHttp").env("PORT", port.to_string());
    let _everything =
        common::Background::start(cmd, dir.path().join("everything.log"), "listening on port");
    let server = McpServer::http("everything", format!("http://127.0.0.1:{port}/mcp"))
        .snapshot(fixture_snapshot("everything"));
    let runtime = Runtime::builder().mcp_server(server).build();
    let params = servers::everything::echo::Params {
        message: "over HTTP".into(),
    };
    let r = bounded(
        "http echo",
        runtime.call_mcp::<servers::everything::echo::Tool>(params, CallOptions::new()),
    )
    .await;
    assert_eq!(text(&r), "Echo: over HTTP");
    let seen = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    let opts = CallOptions::new().progress(move |_| {
        s.fetch_add(1, Ordering::SeqCst);
    });
    let r = bounded(
        "http long-running",
        runtime.call(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 2}),
            opts,
        ),
    )
    .await;
    assert_eq!(r.stop, StopReason::Completed, "{}", text(&r));
    assert_eq!(seen.load(Ordering::SeqCst), 2);

    // toolbind's own server behind a bearer token.
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "s3cret-token-for-the-test\n").unwrap();
    let mut cmd = std::process::Command::new(common::bin());
    cmd.args(["serve", "--http", "127.0.0.1:0", "--auth-token-file"])
        .arg(&token_file)
        .arg(common::fixture("tools"));
    let serve = common::Background::start(cmd, dir.path().join("serve.log"), "/mcp");
    let log = serve.log();
    let url = log[log.find("http://").unwrap()..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    let err = bounded(
        "no token",
        Runtime::builder()
            .mcp_server(McpServer::http("local", &url))
            .mcp_strict(true)
            .connect(),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("needs a bearer token and none was sent"),
        "{err}"
    );
    let server = McpServer::http("local", &url).bearer_file(&token_file);
    let runtime = bounded("token", Runtime::builder().mcp_server(server).connect())
        .await
        .unwrap();
    assert_eq!(
        runtime.mcp_protocol_version("local").as_deref(),
        Some("2026-07-28")
    );
    let r = bounded(
        "hello",
        runtime.call("hello_sh", json!({"name": "http"}), CallOptions::new()),
    )
    .await;
    assert!(text(&r).contains("http"), "{}", text(&r));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_retries_only_what_is_safe_to_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = misbehaving_http("drop", dir.path());
    let runtime = bounded(
        "connect",
        Runtime::builder()
            .mcp_server(McpServer::http("drop", &url))
            .connect(),
    )
    .await
    .unwrap();
    // `ok` is read-only: its dropped call is sent again, on a new connection.
    let r = bounded(
        "ok",
        runtime.call("ok", json!({"text": "once more"}), CallOptions::new()),
    )
    .await;
    assert_eq!(text(&r), "ok: once more");
    // `write` says nothing of the kind: it could have run; it is not repeated.
    let r = bounded(
        "write",
        runtime.call("write", json!({"text": "x"}), CallOptions::new()),
    )
    .await;
    assert_eq!(r.stop, StopReason::Crashed, "{}", text(&r));
    let r = bounded(
        "write again",
        runtime.call("write", json!({"text": "y"}), CallOptions::new()),
    )
    .await;
    assert_eq!(text(&r), "ok: y");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_redirects_elsewhere_and_oauth_challenges_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let (redirect, url) = misbehaving_http("redirect", dir.path());
    let server = McpServer::http("redirect", &url).bearer("a-token-that-must-stay-home");
    let err = bounded(
        "redirect",
        Runtime::builder()
            .mcp_server(server)
            .mcp_strict(true)
            .connect(),
    )
    .await
    .unwrap_err();
    let e = err.to_string();
    assert!(
        e.contains("redirected to another origin") && e.contains("localhost"),
        "{e}"
    );
    assert!(!e.contains("a-token-that-must-stay-home"), "{e}");
    assert!(
        !redirect.log().contains("the token reached"),
        "{}",
        redirect.log()
    );

    let (_oauth, url) = misbehaving_http("oauth", dir.path());
    let err = bounded(
        "oauth",
        Runtime::builder()
            .mcp_server(McpServer::http("oauth", &url))
            .mcp_strict(true)
            .connect(),
    )
    .await
    .unwrap_err();
    let e = err.to_string();
    // No host to sign in with: the login to run is named.
    assert!(
        e.contains("HTTP 401") && e.contains("run `toolbind mcp login oauth`"),
        "{e}"
    );
    assert!(e.contains("bearer token"), "{e}");
    // Not strict: the runtime is built, and the server needs a login, saying how.
    let runtime = bounded(
        "oauth, not strict",
        Runtime::builder()
            .mcp_server(McpServer::http("oauth", &url))
            .connect(),
    )
    .await
    .expect("one server that needs a login does not stop the runtime");
    match runtime.mcp_server_state("oauth") {
        Some(toolbind::mcp::McpServerState::NeedsLogin { reason, .. }) => {
            assert!(reason.contains("HTTP 401"), "{reason}");
            assert!(reason.contains("toolbind mcp login oauth"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_cli_lists_and_calls_local_and_mcp_tools_together() {
    use common::{assert_code, stderr, stdout, toolbind};
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join(".mcp.json");
    std::fs::write(
        &cfg,
        json!({"mcpServers": {"everything": {"command": server_bin("mcp-server-everything"), "args": ["stdio"]}}})
            .to_string(),
    )
    .unwrap();
    let tools = common::fixture("tools");
    let state = dir.path().join("state");
    let run = |args: &[&str]| {
        toolbind()
            .args(args)
            .arg("--mcp-config")
            .arg(&cfg)
            .arg(&tools)
            .output()
            .unwrap()
    };
    let out = toolbind()
        .args(["list", "--sandbox", "required", "--state-dir"])
        .arg(&state)
        .arg("--mcp-config")
        .arg(&cfg)
        .arg(&tools)
        .output()
        .unwrap();
    assert_code(&out, 0);
    let list = stdout(&out);
    assert!(list.contains("hello_sh") && list.contains("echo"), "{list}");
    assert!(list.contains("MCP server `everything`"), "{list}");

    let out = toolbind()
        .args([
            "call",
            "echo",
            "--args",
            r#"{"message": "from the CLI"}"#,
            "--sandbox",
            "required",
            "--state-dir",
        ])
        .arg(&state)
        .arg("--mcp-config")
        .arg(&cfg)
        .arg(&tools)
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert_eq!(
        stdout(&out).trim(),
        "Echo: from the CLI",
        "{}",
        stderr(&out)
    );
    let out = toolbind()
        .args([
            "call",
            "echo",
            "--args",
            r#"{"message": 1}"#,
            "--mcp-config",
        ])
        .arg(&cfg)
        .arg(&tools)
        .output()
        .unwrap();
    assert_code(&out, 2);
    let out = toolbind()
        .args([
            "call",
            "hello_sh",
            "--args",
            r#"{"name": "local"}"#,
            "--mcp-config",
        ])
        .arg(&cfg)
        .arg(&tools)
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert!(stdout(&out).contains("local"), "{}", stdout(&out));

    // `schema` and `prompt` start the servers in the jail their sandbox flags say.
    let state_arg = state.display().to_string();
    let out = run(&["schema", "--sandbox", "required", "--state-dir", &state_arg]);
    assert_code(&out, 0);
    let schema: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let names: Vec<&str> = schema
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"hello_sh"),
        "{names:?}"
    );
    let out = run(&["prompt"]);
    assert_code(&out, 0);
    assert!(stdout(&out).contains("echo") && stdout(&out).contains("hello_sh"));

    // Two servers with the same tools: the clash names its remedy, a `prefix` in the
    // config (for the server added second, in name order); with it, both are callable.
    let two = |prefix: serde_json::Value| {
        let everything = server_bin("mcp-server-everything");
        json!({"mcpServers": {
            "everything": {"command": everything, "args": ["stdio"]},
            "again": {"command": everything, "args": ["stdio"], "prefix": prefix}
        }})
        .to_string()
    };
    // Without it, the second is refused (its tools only): the first's are listed.
    std::fs::write(&cfg, two(serde_json::Value::Null)).unwrap();
    let out = run(&["list"]);
    assert_code(&out, 1);
    assert!(
        stderr(&out).contains(r#"`"prefix": "everything_"` in its mcpServers entry"#),
        "{}",
        stderr(&out)
    );
    let list = stdout(&out);
    assert!(
        list.contains("MCP server `again`") && list.contains("everything: refused:"),
        "{list}"
    );
    assert!(
        list.contains(r#"fix: give it a prefix: `"prefix": "everything_"`"#),
        "{list}"
    );
    std::fs::write(&cfg, two(json!("again_"))).unwrap();
    let out = run(&["call", "again_echo", "--args", r#"{"message": "twice"}"#]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out).trim(), "Echo: twice", "{}", stderr(&out));

    // A config that names no server that starts: the local tools, the server's reason,
    // exit 1.
    std::fs::write(
        &cfg,
        json!({"mcpServers": {"gone": {"command": "/nonexistent/server"}}}).to_string(),
    )
    .unwrap();
    let out = run(&["list"]);
    assert_code(&out, 1);
    assert!(
        stderr(&out).contains("MCP server `gone` is not ready (failed: ")
            && stderr(&out).contains("`/nonexistent/server` is not on PATH"),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("hello_sh") && stdout(&out).contains("gone: failed:"),
        "{}",
        stdout(&out)
    );
}

/// A config of four servers, as real ones are: one healthy (the reference server), one
/// that exits at once, one that never answers `initialize`, one that needs a login. Each
/// bad one affects only its own tools: the healthy one's are listed and called, and each
/// other is reported with its state, reason and fix. No server's process outlives the
/// command.
#[test]
fn one_bad_server_stays_one_bad_server() {
    use common::{assert_code, stderr, stdout, toolbind};
    let dir = tempfile::tempdir().unwrap();
    let (_login, url) = misbehaving_http("oauth", dir.path());
    let mark = format!(
        "four-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    );
    let env = json!({"TOOLBIND_TEST_MARK": mark});
    let cfg = dir.path().join(".mcp.json");
    std::fs::write(
        &cfg,
        json!({"mcpServers": {
            "everything": {"command": server_bin("mcp-server-everything"), "args": ["stdio"], "env": env},
            "dead": {"command": "sh", "args": ["-c", "echo dead on arrival >&2; exit 3"], "env": env},
            "hangs": {"command": "python3",
                      "args": [common::fixture("mcp_servers/misbehaving.py"), "silent"], "env": env},
            "login": {"type": "http", "url": url},
            // Nothing listens there; the URL's user information and query are secrets.
            "unreachable": {"type": "http", "url": "http://user:hunter2@127.0.0.1:9/mcp?key=SECRET"}
        }})
        .to_string(),
    )
    .unwrap();
    // The same without the hanging server: every server settles, nothing waits the bound.
    let settling = dir.path().join("settling.json");
    let mut servers: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cfg).unwrap()).unwrap();
    servers["mcpServers"]
        .as_object_mut()
        .unwrap()
        .remove("hangs");
    std::fs::write(&settling, servers.to_string()).unwrap();
    let state = dir.path().join("state");
    let run_with = |cfg: &Path, args: &[&str]| {
        let mut cmd = toolbind();
        cmd.args(args)
            .arg("--state-dir")
            .arg(&state)
            .arg("--mcp-config")
            .arg(cfg)
            // Long enough for the reference server on a loaded machine; the hanging one
            // is reported as starting when it ends.
            .args(["--mcp-wait", "15"])
            .arg(dir.path());
        common::output_within(cmd, 120.0).expect("toolbind finished within 120 s")
    };
    let run = |args: &[&str]| run_with(&cfg, args);

    let out = run(&["list", "--json"]);
    assert_code(&out, 1);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let names: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"echo"), "{names:?}");
    let server = |name: &str| {
        v["mcp_servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {v}"))
            .clone()
    };
    assert_eq!(server("everything")["state"], "ready", "{v}");
    let dead = server("dead");
    assert_eq!(dead["state"], "failed", "{v}");
    assert!(
        dead["reason"].as_str().unwrap().contains("dead on arrival"),
        "{dead}"
    );
    assert!(
        dead["fix"]
            .as_str()
            .unwrap()
            .contains("toolbind mcp snapshot"),
        "{dead}"
    );
    let hangs = server("hangs");
    assert_eq!(hangs["state"], "starting", "{v}");
    assert!(
        hangs["fix"].as_str().unwrap().contains("--mcp-wait"),
        "{hangs}"
    );
    let unreachable = server("unreachable");
    assert_eq!(unreachable["state"], "failed", "{v}");
    assert!(
        !out.stdout
            .windows(6)
            .any(|w| w == b"SECRET" || w == b"hunter")
            && !stderr(&out).contains("SECRET")
            && !stderr(&out).contains("hunter2"),
        "a secret of the URL was shown: {v}\n{}",
        stderr(&out)
    );
    let login = server("login");
    assert_eq!(login["state"], "needs_login", "{v}");
    assert!(
        login["reason"].as_str().unwrap().contains("HTTP 401"),
        "{login}"
    );
    // It asks for OAuth (its challenge names its metadata): the fix is the login.
    assert!(
        login["fix"]
            .as_str()
            .unwrap()
            .contains("toolbind mcp login --config"),
        "{login}"
    );

    let out = run_with(&settling, &["list"]);
    assert_code(&out, 1);
    let text = stdout(&out);
    assert!(
        text.contains("echo") && text.contains("MCP servers not ready"),
        "{text}"
    );
    for line in [
        "dead: failed:",
        "login: needs a login:",
        "fix: sign in: `toolbind mcp login --config",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }

    // The healthy server's tool is called; a failed server's tool is unknown, and the
    // message names the server and why.
    let out = run(&["call", "echo", "--args", r#"{"message": "still here"}"#]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out).trim(), "Echo: still here", "{}", stderr(&out));
    // A tool the runtime cannot find while a server is down: exit 1 (not 2, a typo), the
    // server named; its reason is the warning's, on stderr.
    let out = run_with(&settling, &["call", "dead_tool"]);
    assert_code(&out, 1);
    let text = stderr(&out);
    assert!(
        text.contains("unknown tool `dead_tool`")
            && text.contains("MCP server `dead` (failed to start)")
            && text.contains("dead on arrival"),
        "{text}"
    );
    assert!(
        common::eventually(10.0, || marked(&mark).is_empty()),
        "a server outlived the command: {:?}",
        marked(&mark)
    );
}

/// The pids of this user's processes whose environment holds `mark`.
fn marked(mark: &str) -> Vec<i32> {
    let needle = format!("TOOLBIND_TEST_MARK={mark}");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == needle.as_bytes()))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reference_server_killed_mid_call_is_named_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let mark = format!("{}-{:?}", std::process::id(), std::time::SystemTime::now());
    let server = everything(dir.path()).env("TOOLBIND_TEST_MARK", &mark);
    let runtime = Runtime::builder().mcp_server(server).build();
    // Kill the server (every process of it) once the long call has reported progress.
    let killer = {
        let mark = mark.clone();
        move |_: toolbind::Progress| {
            for pid in marked(&mark) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    };
    let r = bounded(
        "killed",
        runtime.call(
            "trigger-long-running-operation",
            json!({"duration": 30, "steps": 30}),
            CallOptions::new().progress(killer),
        ),
    )
    .await;
    assert_eq!(r.stop, StopReason::Crashed, "{}", text(&r));
    let t = text(&r);
    assert!(
        t.contains("killed by signal 9") || t.contains("closed the connection"),
        "{t}"
    );
    assert!(t.contains("started again"), "{t}");
    let r = bounded(
        "restarted",
        runtime.call("echo", json!({"message": "back"}), CallOptions::new()),
    )
    .await;
    assert_eq!(text(&r), "Echo: back");
    assert!(!marked(&mark).is_empty(), "a new server runs");
    drop(runtime);
    // Dropping the runtime ends the server, whole.
    assert!(
        common::eventually(10.0, || marked(&mark).is_empty()),
        "the server outlived the runtime"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_07_28_server_that_changes_its_tools_is_listed_again() {
    // `toolbind serve` watches its folder and, on 2026-07-28, tells a listen stream.
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools");
    common::copy_dir(&common::fixture("tools"), &tools);
    let server = McpServer::stdio(
        "local",
        common::bin(),
        ["serve".to_owned(), tools.display().to_string()],
    )
    .sandbox(SandboxPolicy::off());
    let runtime = bounded("connect", Runtime::builder().mcp_server(server).connect())
        .await
        .unwrap();
    let r = bounded(
        "before",
        runtime.call("hello_sh", json!({"name": "a"}), CallOptions::new()),
    )
    .await;
    assert_eq!(r.stop, StopReason::Completed, "{}", text(&r));
    // A new input: the contract the runtime's tool came from no longer holds.
    let file = tools.join("hello_sh/TOOL.md");
    let md = std::fs::read_to_string(&file).unwrap();
    let md = md.replacen("inputs:\n", "inputs:\n  added:\n    type: string\n    description: An input added while the server runs.\n    optional: true\n", 1);
    std::fs::write(&file, md).unwrap();
    let mut last = String::new();
    for _ in 0..300 {
        let r = bounded(
            "after",
            runtime.call("hello_sh", json!({"name": "b"}), CallOptions::new()),
        )
        .await;
        if r.stop == StopReason::ContractDrift {
            assert!(text(&r).contains("nothing was sent"), "{}", text(&r));
            return;
        }
        last = text(&r);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the change was never noticed; last: {last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_initialize_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let server = misbehaving("silent", dir.path()).connect_timeout(Duration::from_secs(1));
    let err = bounded(
        "connect",
        Runtime::builder()
            .mcp_server(server)
            .mcp_strict(true)
            .connect(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("within 1 s"), "{err}");
}

#[test]
fn a_server_dies_with_the_agent() {
    // `toolbind call` is the agent here; SIGKILL gives it no chance to clean up.
    let dir = tempfile::tempdir().unwrap();
    let mark = format!(
        "agent-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    );
    let cfg = dir.path().join(".mcp.json");
    std::fs::write(
        &cfg,
        json!({"mcpServers": {"everything": {"command": server_bin("mcp-server-everything"), "args": ["stdio"],
                                             "env": {"TOOLBIND_TEST_MARK": mark}}}})
        .to_string(),
    )
    .unwrap();
    let mut agent = common::toolbind()
        .args([
            "call",
            "trigger-long-running-operation",
            "--args",
            r#"{"duration": 60, "steps": 60}"#,
            "--state-dir",
        ])
        .arg(dir.path().join("state"))
        .arg("--mcp-config")
        .arg(&cfg)
        .arg(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        common::eventually(60.0, || !marked(&mark).is_empty()),
        "the server never started"
    );
    agent.kill().unwrap();
    agent.wait().unwrap();
    assert!(
        common::eventually(10.0, || marked(&mark).is_empty()),
        "the server outlived the agent: {:?}",
        marked(&mark)
    );
}

/// A host that answers every question of a server: a form with a name, a sample, a root.
struct Answers;

impl toolbind::host::Host for Answers {
    fn approve(
        &self,
        _request: toolbind::host::ApprovalRequest,
    ) -> toolbind::host::Answer<toolbind::host::Decision> {
        Box::pin(async { toolbind::host::Decision::Approve })
    }

    fn elicit(
        &self,
        request: toolbind::host::ElicitRequest,
    ) -> toolbind::host::Answer<Result<toolbind::host::Elicited, toolbind::host::Refusal>> {
        Box::pin(async move {
            assert!(request.schema["properties"]["name"].is_object());
            let mut content = serde_json::Map::new();
            content.insert("name".into(), json!("Ada Lovelace"));
            Ok(toolbind::host::Elicited::accept(content))
        })
    }

    fn sample(
        &self,
        request: toolbind::host::SampleRequest,
    ) -> toolbind::host::Answer<Result<serde_json::Value, toolbind::host::Refusal>> {
        Box::pin(async move {
            let asked = request.params["messages"][0]["content"]["text"].clone();
            Ok(json!({"role": "assistant", "model": "the-host",
                "content": {"type": "text", "text": format!("sampled for {asked}")}}))
        })
    }

    fn roots(
        &self,
        _asker: toolbind::host::Asker,
    ) -> toolbind::host::Answer<Result<Vec<toolbind::host::Root>, toolbind::host::Refusal>> {
        Box::pin(async {
            Ok(vec![toolbind::host::Root::new(
                "file:///work/project",
                Some("project".into()),
            )])
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reference_servers_questions_reach_the_agents_host() {
    let dir = tempfile::tempdir().unwrap();
    let server = || {
        McpServer::stdio("everything", server_bin("mcp-server-everything"), ["stdio"])
            .sandbox(jail(dir.path()))
    };
    // With a host, the client declares elicitation, sampling and roots, and the server
    // offers the tools that use them.
    let runtime = bounded(
        "connect",
        Runtime::builder()
            .host(Answers)
            .mcp_server(server())
            .connect(),
    )
    .await
    .expect("server-everything starts");
    let r = bounded(
        "elicitation",
        runtime.call("trigger-elicitation-request", json!({}), CallOptions::new()),
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    let t = text(&r);
    assert!(t.contains("User provided the requested information"), "{t}");
    assert!(t.contains("Ada Lovelace"), "{t}");
    let r = bounded(
        "sampling",
        runtime.call(
            "trigger-sampling-request",
            json!({"prompt": "a haiku", "maxTokens": 20}),
            CallOptions::new(),
        ),
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    assert!(text(&r).contains("sampled for"), "{}", text(&r));
    assert!(text(&r).contains("a haiku"), "{}", text(&r));
    let r = bounded(
        "roots",
        runtime.call("get-roots-list", json!({}), CallOptions::new()),
    )
    .await;
    assert!(text(&r).contains("file:///work/project"), "{r:?}");
    drop(runtime);
    // Without a host nothing is declared, and the server does not offer those tools.
    let runtime = bounded("connect", Runtime::builder().mcp_server(server()).connect())
        .await
        .expect("server-everything starts");
    let r = runtime
        .call("trigger-elicitation-request", json!({}), CallOptions::new())
        .await;
    assert_eq!(r.stop, StopReason::UnknownTool, "{r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_07_28_servers_input_required_results_are_answered_by_the_agents_host() {
    // toolbind serve on the conformance fixtures: their tools ask through an
    // InputRequiredResult on 2026-07-28, round after round.
    let server = McpServer::stdio(
        "asking",
        common::bin(),
        [
            "serve".to_owned(),
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../tests/conformance/tools")
                .display()
                .to_string(),
        ],
    )
    .sandbox(SandboxPolicy::off());
    let runtime = bounded(
        "connect",
        Runtime::builder()
            .host(Answers)
            .mcp_server(server.clone())
            .connect(),
    )
    .await
    .unwrap();
    assert_eq!(
        runtime.mcp_protocol_version("asking").as_deref(),
        Some("2026-07-28")
    );
    // A form, a sample and the roots in one round.
    let r = bounded(
        "three questions",
        runtime.call(
            "test_input_required_result_multiple_inputs",
            json!({}),
            CallOptions::new(),
        ),
    )
    .await;
    assert_eq!(r.stop, StopReason::Completed, "{}", text(&r));
    assert_eq!(
        text(&r),
        "sampled for \"Generate a greeting\" Ada Lovelace (1 roots)"
    );
    let r = bounded(
        "one question",
        runtime.call(
            "test_input_required_result_elicitation",
            json!({}),
            CallOptions::new(),
        ),
    )
    .await;
    assert_eq!(text(&r), "Hello, Ada Lovelace!");
    drop(runtime);
    // A host that does not answer forms: the server's question stops the call, saying so.
    struct OnlyApproves;
    impl toolbind::host::Host for OnlyApproves {
        fn approve(
            &self,
            _request: toolbind::host::ApprovalRequest,
        ) -> toolbind::host::Answer<toolbind::host::Decision> {
            Box::pin(async { toolbind::host::Decision::Approve })
        }
    }
    let runtime = bounded(
        "connect",
        Runtime::builder()
            .host(OnlyApproves)
            .mcp_server(server)
            .connect(),
    )
    .await
    .unwrap();
    let r = bounded(
        "unanswered",
        runtime.call(
            "test_input_required_result_elicitation",
            json!({}),
            CallOptions::new(),
        ),
    )
    .await;
    assert!(r.is_error, "{r:?}");
    assert!(
        text(&r).contains("asked for input (elicitation/create), and it was not given"),
        "{}",
        text(&r)
    );
}

/// Hostile schemas cost bounded work, whoever sends them: a `$ref` bomb is refused at
/// connect; a recursive schema that doubles at each level of the value (which passes the
/// connect-time bound) is refused at the call, before its check runs: the call ends at
/// once and the CPU time of the runtime's threads stops growing.
///
/// The CPU time is that of this test's own runtime threads (workers and blocking threads,
/// read from /proc/self/task): the process's would count the other tests running beside
/// it in this binary.
#[test]
fn schemas_that_make_checking_exponential_cost_bounded_work() {
    let threads = Arc::new(std::sync::Mutex::new(Vec::<i32>::new()));
    let t = threads.clone();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .on_thread_start(move || t.lock().unwrap().push(nix::unistd::gettid().as_raw()))
        .build()
        .unwrap();
    let cpu = move || {
        let tick = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
            .unwrap()
            .unwrap_or(100) as u64;
        let ticks: u64 = threads
            .lock()
            .unwrap()
            .iter()
            .filter_map(|tid| std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok())
            .map(|stat| {
                // Fields 14 and 15 (utime, stime), counted after the `(comm)` field.
                let rest = &stat[stat.rfind(')').unwrap() + 2..];
                let f: Vec<&str> = rest.split(' ').collect();
                f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
            })
            .sum();
        Duration::from_millis(ticks * 1000 / tick)
    };
    rt.block_on(exponential_checks(cpu));
}

async fn exponential_checks(cpu: impl Fn() -> Duration) {
    async fn quick<F: std::future::Future>(what: &str, f: F) -> F::Output {
        tokio::time::timeout(Duration::from_secs(30), f)
            .await
            .unwrap_or_else(|_| {
                panic!("{what} did not finish within 30 s: the schema check ran unbounded")
            })
    }
    let dir = tempfile::tempdir().unwrap();
    let bomb = Runtime::builder()
        .mcp_server(misbehaving("refbomb", dir.path()))
        .mcp_strict(true)
        .connect();
    let err = quick("connect", bomb).await.unwrap_err();
    assert!(
        err.to_string().contains("its `inputSchema` is refused"),
        "{err}"
    );

    let deep_server = Runtime::builder()
        .mcp_server(misbehaving("refdeep", dir.path()))
        .default_timeout(Duration::from_secs(5))
        .connect();
    let runtime = quick("connect", deep_server).await.unwrap();
    let mut deep = json!(5);
    for _ in 0..40 {
        deep = json!({"a": deep});
    }
    let before = cpu();
    let call = runtime.call("ok", json!({"text": "x", "deep": deep}), CallOptions::new());
    let r = quick("the call", call).await;
    assert_eq!(r.stop, StopReason::BadArguments, "{}", text(&r));
    assert!(
        text(&r).contains("neither checked nor sent") && text(&r).contains("schema evaluations"),
        "{}",
        text(&r)
    );
    let spent = cpu() - before;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = cpu() - before;
    assert!(
        spent < Duration::from_secs(2) && after - spent < Duration::from_millis(500),
        "the check took {spent:?} of CPU, and {:?} more a second later",
        after - spent
    );
    // A value of ordinary depth is checked and sent.
    let call = runtime.call(
        "ok",
        json!({"text": "fine", "deep": {"a": {"a": {}}}}),
        CallOptions::new(),
    );
    let r = quick("the ordinary call", call).await;
    assert_eq!(text(&r), "ok: fine", "{r:?}");

    // A pattern that backtracks: each match counts for its backtracking, so a long array
    // of near-matches is refused before its check, and a short one checked and sent.
    let regex = Runtime::builder()
        .mcp_server(misbehaving("regex", dir.path()))
        .connect();
    let runtime = quick("connect", regex).await.unwrap();
    let near = format!("{}b", "a".repeat(30));
    let before = cpu();
    let call = runtime.call(
        "ok",
        json!({"text": "x", "words": vec![near.clone(); 20_000]}),
        CallOptions::new(),
    );
    let r = quick("the long call", call).await;
    assert_eq!(r.stop, StopReason::BadArguments, "{}", text(&r));
    assert!(text(&r).contains("schema evaluations"), "{}", text(&r));
    let call = runtime.call(
        "ok",
        json!({"text": "x", "words": [near.clone(), "aa"]}),
        CallOptions::new(),
    );
    let r = quick("the short call", call).await;
    assert_eq!(r.stop, StopReason::BadArguments, "{}", text(&r));
    let call = runtime.call(
        "ok",
        json!({"text": "short", "words": ["aa"]}),
        CallOptions::new(),
    );
    let r = quick("the matching call", call).await;
    assert_eq!(text(&r), "ok: short", "{r:?}");
    let spent = cpu() - before;
    assert!(
        spent < Duration::from_secs(2),
        "the checks took {spent:?} of CPU"
    );
}

/// A server's name is a key of the config, which may be a project's: in `list`'s report
/// its escape sequences and newlines are shown escaped, so it cannot colour the terminal
/// or forge a line; `--json` keeps it as it is.
#[test]
fn a_server_name_cannot_forge_a_report_line() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join(".mcp.json");
    let name = "evil\u{1b}[31m\nfake: ok";
    std::fs::write(
        &cfg,
        json!({"mcpServers": {name: {"command": "/nonexistent/server"}}}).to_string(),
    )
    .unwrap();
    let run = |json: bool| {
        let mut cmd = common::toolbind();
        cmd.arg("list")
            .args(json.then_some("--json"))
            .arg("--mcp-config")
            .arg(&cfg)
            .args(["--mcp-wait", "20"])
            .arg(dir.path());
        common::output_within(cmd, 60.0).expect("toolbind finished within 60 s")
    };
    let out = run(false);
    let text = common::stdout(&out);
    assert!(!text.contains('\u{1b}'), "{text:?}");
    assert!(!text.lines().any(|l| l.starts_with("fake: ok")), "{text}");
    assert!(
        text.contains(r"evil\u{1b}[31m\nfake: ok: failed:"),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_str(&common::stdout(&run(true))).unwrap();
    assert_eq!(v["mcp_servers"][0]["name"], name);
    assert_eq!(v["mcp_servers"][0]["state"], "failed");
    assert!(v["mcp_servers"][0]["fix"].is_string(), "{v}");
}
