//! `toolbind serve` driven by rmcp's client over a child process: initialize, list, call
//! with progress, bad arguments as `isError` results, cancellation, and
//! `tools/list_changed` when the tools folder changes.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{bin, copy_dir, fixture, live_group_members};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, JsonObject,
    ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use toolbind_codegen::schema::{Dialect, output_schema, tool_definition};
use toolbind_codegen::{Options, load_tools};

#[derive(Clone, Default)]
struct Client {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    list_changed: Arc<AtomicUsize>,
    /// The URIs of `notifications/resources/updated`, in order.
    updated: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Client {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }

    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.updated.lock().unwrap().push(params.uri);
    }
}

struct Session {
    client: RunningService<RoleClient, Client>,
    handler: Client,
    stderr: Arc<Mutex<String>>,
    _tools: tempfile::TempDir,
    tools: PathBuf,
}

/// A copy of the fixture tools (so the test may change it) served by `toolbind serve`,
/// with the `initialize` handshake.
async fn start() -> Session {
    start_with(None).await
}

async fn start_with(lifecycle: Option<rmcp::ClientLifecycleMode>) -> Session {
    start_jailed(lifecycle, true).await
}

/// [`start`] for a client of the 2026-07-28 revision: `server/discover`, no session.
async fn start_2026() -> Session {
    start_with(Some(rmcp::ClientLifecycleMode::Discover {
        preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
    }))
    .await
}

/// `jailed: false` serves with `--sandbox off`: for tests that read a tool's host process
/// group from a pidfile (in the jail, pids are the namespace's and the file unwritable).
async fn start_jailed(lifecycle: Option<rmcp::ClientLifecycleMode>, jailed: bool) -> Session {
    start_fixture("tools", lifecycle, jailed).await
}

/// [`start_jailed`] over a copy of the fixture folder `name`.
async fn start_fixture(
    name: &str,
    lifecycle: Option<rmcp::ClientLifecycleMode>,
    jailed: bool,
) -> Session {
    let tmp = tempfile::tempdir().unwrap();
    let tools = tmp.path().join("tools");
    copy_dir(&fixture(name), &tools);
    let mut cmd = tokio::process::Command::new(bin());
    cmd.arg("serve")
        .arg("--dir")
        .arg(&tools)
        .env_remove("PI_TOOLS_DIRS");
    if !jailed {
        cmd.args(["--sandbox", "off"]);
    }
    let (transport, child_stderr) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = common::StderrLog::read(child_stderr).text;
    let handler = Client::default();
    let client = match lifecycle {
        None => handler.clone().serve(transport).await.expect("initialize"),
        Some(l) => rmcp::serve_client_with_lifecycle(handler.clone(), transport, l)
            .await
            .expect("discover"),
    };
    Session {
        client,
        handler,
        stderr,
        _tools: tmp,
        tools,
    }
}

fn args(v: Value) -> JsonObject {
    v.as_object().unwrap().clone()
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn eventually(secs: f64, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs_f64(secs);
    while !f() {
        if Instant::now() > end {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_list_and_call() {
    let s = start().await;
    let info = s.client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("toolbind")
    );
    assert_eq!(
        info.capabilities
            .tools
            .as_ref()
            .and_then(|t| t.list_changed),
        Some(true)
    );

    // tools/list: exactly the MCP dialect of `toolbind schema --dialect mcp`.
    let listed = s.client.list_all_tools().await.unwrap();
    let specs = load_tools(std::slice::from_ref(&s.tools), &Options::default()).unwrap();
    assert_eq!(listed.len(), specs.len());
    for (tool, spec) in listed.iter().zip(&specs) {
        assert_eq!(
            serde_json::to_value(tool).unwrap(),
            tool_definition(spec, Dialect::Mcp),
            "{}",
            spec.name
        );
    }
    let hello = listed.iter().find(|t| t.name == "hello_ts").unwrap();
    assert_eq!(hello.title.as_deref(), Some("Hello (typescript)"));
    assert_eq!(hello.input_schema["required"], json!(["name"]));
    assert_eq!(
        hello.annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );

    // tools/call with a progress token (rmcp's client sends one with every request).
    for (tool, lang) in [
        ("hello_ts", "typescript"),
        ("hello_py", "python"),
        ("hello_sh", "bash"),
    ] {
        s.handler.progress.lock().unwrap().clear();
        let r = s
            .client
            .call_tool(
                CallToolRequestParams::new(tool)
                    .with_arguments(args(json!({"name": "MCP", "steps": 3}))),
            )
            .await
            .unwrap();
        assert_eq!(r.is_error, Some(false), "{r:?}");
        assert_eq!(text(&r), format!("Hello, MCP! ({lang})"));
        // Progress is rate-limited (updates within 50 ms coalesce): in order, numbered
        // 1, 2, ..., and the latest always arrives.
        let progress = s.handler.progress.clone();
        let last_seen = || {
            progress
                .lock()
                .unwrap()
                .last()
                .and_then(|p| p.message.clone())
                == Some("step 3 of 3".into())
        };
        assert!(
            eventually(5.0, last_seen).await,
            "{tool}: {:?}",
            progress.lock().unwrap()
        );
        let got = progress.lock().unwrap().clone();
        let messages: Vec<_> = got.iter().map(|p| p.message.clone().unwrap()).collect();
        let all = ["step 1 of 3", "step 2 of 3", "step 3 of 3"];
        let mut rest = all.iter();
        assert!(
            messages.iter().all(|m| rest.any(|e| e == m)),
            "{tool}: {messages:?}"
        );
        let numbers: Vec<f64> = got.iter().map(|p| p.progress).collect();
        let expected: Vec<f64> = (1..=got.len()).map(|n| n as f64).collect();
        assert_eq!(numbers, expected);
        if tool != "hello_sh" {
            let meta = r.meta.as_ref().expect("details in _meta");
            assert_eq!(meta.0["details"]["steps"], 3);
        }
    }

    // Bad arguments and tool failures are results with isError, not protocol errors.
    let r = s
        .client
        .call_tool(
            CallToolRequestParams::new("hello_ts").with_arguments(args(json!({"steps": "many"}))),
        )
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    let t = text(&r);
    assert!(t.contains("`name`") && t.contains("`steps`"), "{t}");
    let r = s
        .client
        .call_tool(
            CallToolRequestParams::new("wait_py")
                .with_arguments(args(json!({"pidfile": "/no/such/dir/pid"}))),
        )
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(
        text(&r).contains("No such file or directory"),
        "{}",
        text(&r)
    );
    // An unknown tool is a protocol error (MCP: -32602).
    let e = s
        .client
        .call_tool(CallToolRequestParams::new("helo_ts"))
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("unknown tool `helo_ts` (did you mean `hello_ts`?)"),
        "{e}"
    );

    // Logs went to stderr (stdout carries only MCP, or the client would have failed).
    let log = s.stderr.lock().unwrap().clone();
    assert!(
        log.contains("toolbind serve: serving 6 tools from "),
        "{log}"
    );
    assert!(log.contains("of `hello_py`: ok in "), "{log}");
    s.client.cancel().await.unwrap();
}

async fn start_call(
    s: &Session,
    tool: &str,
    pidfile: &Path,
) -> rmcp::service::RequestHandle<RoleClient> {
    let params = CallToolRequestParams::new(tool.to_owned())
        .with_arguments(args(json!({"pidfile": pidfile.to_str().unwrap()})));
    let handle = s
        .client
        .peer()
        .send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    assert!(
        eventually(20.0, || std::fs::read_to_string(pidfile)
            .is_ok_and(|p| !p.trim().is_empty()))
        .await,
        "{tool} did not start"
    );
    handle
}

fn pid(pidfile: &Path) -> i32 {
    std::fs::read_to_string(pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_reaches_the_tool() {
    let s = start_jailed(None, false).await;
    let dir = tempfile::tempdir().unwrap();

    // bash: one process group per call, gone after the cancellation.
    let pidfile = dir.path().join("sh.pid");
    let handle = start_call(&s, "wait_sh", &pidfile).await;
    let pgid = pid(&pidfile);
    assert!(!live_group_members(pgid).is_empty());
    handle.cancel(Some("test".into())).await.unwrap();
    assert!(
        eventually(3.0, || live_group_members(pgid).is_empty()).await,
        "left behind: {:?}",
        live_group_members(pgid)
    );

    // python (a warm worker): the abort signal stops the call well within the grace period.
    let pidfile = dir.path().join("py.pid");
    let handle = start_call(&s, "wait_py", &pidfile).await;
    handle.cancel(None).await.unwrap();
    let stderr = s.stderr.clone();
    assert!(
        eventually(5.0, || stderr
            .lock()
            .unwrap()
            .contains("of `wait_py`: stopped in "))
        .await,
        "{}",
        stderr.lock().unwrap()
    );
    // Stopped by its abort signal, not killed when the grace period ended: that kill
    // takes the warm worker's whole group, an honoured abort leaves the worker serving.
    let worker = pid(&pidfile);
    assert!(
        !live_group_members(worker).is_empty(),
        "the worker was killed: the tool did not stop on its abort signal"
    );
    let log = stderr.lock().unwrap().clone();
    assert!(
        log.contains("of `wait_sh`: cancelled by the client"),
        "{log}"
    );
    assert!(
        log.contains("of `wait_py`: cancelled by the client"),
        "{log}"
    );

    // The server keeps serving.
    let r = s
        .client
        .call_tool(
            CallToolRequestParams::new("hello_py")
                .with_arguments(args(json!({"name": "again", "steps": 0}))),
        )
        .await
        .unwrap();
    assert_eq!(text(&r), "Hello, again! (python)");
    s.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_tools_folder_is_picked_up() {
    let s = start().await;
    let names = |tools: Vec<rmcp::model::Tool>| {
        tools
            .into_iter()
            .map(|t| t.name.to_string())
            .collect::<Vec<_>>()
    };
    assert!(!names(s.client.list_all_tools().await.unwrap()).contains(&"added_tool".to_owned()));

    // A new tool folder (written in a hidden folder, then renamed in, as sync does).
    let staging = s.tools.join(".staging");
    copy_dir(&s.tools.join("hello_sh"), &staging);
    let md = std::fs::read_to_string(staging.join("TOOL.md")).unwrap();
    std::fs::write(
        staging.join("TOOL.md"),
        md.replace("name: hello_sh", "name: added_tool"),
    )
    .unwrap();
    std::fs::rename(&staging, s.tools.join("added_tool")).unwrap();

    let changed = s.handler.list_changed.clone();
    assert!(
        eventually(5.0, || changed.load(Ordering::SeqCst) == 1).await,
        "no tools/list_changed; server log:\n{}",
        s.stderr.lock().unwrap()
    );
    let listed = names(s.client.list_all_tools().await.unwrap());
    assert!(listed.contains(&"added_tool".to_owned()), "{listed:?}");
    let r = s
        .client
        .call_tool(
            CallToolRequestParams::new("added_tool")
                .with_arguments(args(json!({"name": "new", "steps": 1}))),
        )
        .await
        .unwrap();
    assert_eq!(text(&r), "Hello, new! (bash)");

    // Removing a tool is a change too.
    std::fs::remove_dir_all(s.tools.join("wait_ts")).unwrap();
    assert!(eventually(5.0, || changed.load(Ordering::SeqCst) == 2).await);
    let listed = names(s.client.list_all_tools().await.unwrap());
    assert!(!listed.contains(&"wait_ts".to_owned()), "{listed:?}");
    let log = s.stderr.lock().unwrap().clone();
    assert!(log.contains("tool list changed: added added_tool"), "{log}");
    assert!(log.contains("tool list changed: removed wait_ts"), "{log}");
    s.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_session_gets_list_changed_on_its_listen_stream() {
    use rmcp::model::{ServerNotification, SubscriptionFilter};
    let s = start_2026().await;
    let r = s
        .client
        .call_tool(
            CallToolRequestParams::new("hello_ts")
                .with_arguments(args(json!({"name": "2026", "steps": 1}))),
        )
        .await
        .unwrap();
    assert_eq!(text(&r), "Hello, 2026! (typescript)");
    let mut sub = s
        .client
        .peer()
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .unwrap();
    std::fs::remove_dir_all(s.tools.join("hello_py")).unwrap();
    let n = tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .expect("no notification within 5 s")
        .unwrap();
    assert!(
        matches!(n, Some(ServerNotification::ToolListChangedNotification(_))),
        "{n:?}"
    );
    // Dropping the subscription cancels the listen request; an open one would hold the
    // server's shutdown for rmcp's 5 s drain of in-flight requests.
    drop(sub);
    s.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(deprecated)] // resources/subscribe: legacy-only in rmcp, current on 2025-11-25
async fn completion_and_resource_subscriptions() {
    use rmcp::model::{SubscribeRequestParams, UnsubscribeRequestParams};
    let s = start().await;
    let caps = s.client.peer_info().unwrap().capabilities.clone();
    assert!(caps.completions.is_some(), "{caps:?}");
    assert_eq!(caps.resources.as_ref().unwrap().subscribe, Some(true));
    // The docs template's `name` completes to the tool names.
    let peer = s.client.peer();
    let c = peer
        .complete_resource_argument("toolbind://tools/{name}", "name", "HELLO_", None)
        .await
        .unwrap();
    assert_eq!(c.values, ["hello_py", "hello_sh", "hello_ts"]);
    assert_eq!((c.total, c.has_more), (Some(3), Some(false)));
    let all = peer
        .complete_resource_simple("toolbind://tools/{name}", "name", "")
        .await
        .unwrap();
    assert_eq!(all.len(), 6, "{all:?}");
    // What this server does not complete: no values, not an error.
    for (values, what) in [
        (
            peer.complete_prompt_simple("system_prompt", "x", "")
                .await
                .unwrap(),
            "the system prompt",
        ),
        (
            peer.complete_prompt_simple("test_prompt_with_arguments", "arg1", "a")
                .await
                .unwrap(),
            "a prompt not served",
        ),
        (
            peer.complete_resource_simple("test://template/{id}", "id", "1")
                .await
                .unwrap(),
            "a template not served",
        ),
    ] {
        assert!(values.is_empty(), "{what}: {values:?}");
    }

    // Subscriptions: served pages (wait_sh and hello_py mark the end of a batch below)
    // and a URI this server does not serve.
    for uri in [
        "toolbind://tools/hello_sh",
        "toolbind://tools/wait_sh",
        "toolbind://tools/hello_py",
        "test://watched-resource",
    ] {
        peer.subscribe(SubscribeRequestParams::new(uri))
            .await
            .unwrap();
    }
    // Bounded: 1,024 URIs per session, each at most 4 KiB.
    let long = format!("test://{}", "x".repeat(5000));
    let e = peer
        .subscribe(SubscribeRequestParams::new(long))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("at most 4096"), "{e}");
    for i in 0..1020 {
        peer.subscribe(SubscribeRequestParams::new(format!("test://r/{i}")))
            .await
            .unwrap();
    }
    let e = peer
        .subscribe(SubscribeRequestParams::new("test://one-too-many"))
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("too many resource subscriptions"),
        "{e}"
    );
    // Subscribing again to one held is not one more.
    peer.subscribe(SubscribeRequestParams::new("test://r/7"))
        .await
        .unwrap();
    let edit = |to: &str| {
        let md = s.tools.join("hello_sh/TOOL.md");
        let text = std::fs::read_to_string(&md).unwrap();
        let (head, rest) = text.split_once("description: ").unwrap();
        let (_, tail) = rest.split_once('\n').unwrap();
        std::fs::write(&md, format!("{head}description: {to}\n{tail}")).unwrap();
    };
    edit("Says hello, edited.");
    let updated = s.handler.updated.clone();
    assert!(
        eventually(5.0, || !updated.lock().unwrap().is_empty()).await,
        "no resources/updated; server log:\n{}",
        s.stderr.lock().unwrap()
    );
    // A change to a page nobody subscribed to is not sent: once the next subscribed
    // change (a removed tool is one) has arrived, nothing came before it.
    let changed = s.handler.list_changed.clone();
    let sent = |n: usize| {
        let updated = updated.clone();
        move || updated.lock().unwrap().len() >= n
    };
    std::fs::remove_dir_all(s.tools.join("wait_ts")).unwrap();
    assert!(eventually(5.0, || changed.load(Ordering::SeqCst) >= 2).await);
    std::fs::remove_dir_all(s.tools.join("wait_sh")).unwrap();
    assert!(eventually(5.0, sent(2)).await);
    assert_eq!(
        *updated.lock().unwrap(),
        ["toolbind://tools/hello_sh", "toolbind://tools/wait_sh"]
    );
    // Unsubscribed: nothing more for hello_sh.
    peer.unsubscribe(UnsubscribeRequestParams::new("toolbind://tools/hello_sh"))
        .await
        .unwrap();
    edit("Says hello, edited again.");
    assert!(eventually(5.0, || changed.load(Ordering::SeqCst) >= 4).await);
    std::fs::remove_dir_all(s.tools.join("hello_py")).unwrap();
    assert!(eventually(5.0, sent(3)).await);
    assert_eq!(
        *updated.lock().unwrap(),
        [
            "toolbind://tools/hello_sh",
            "toolbind://tools/wait_sh",
            "toolbind://tools/hello_py"
        ]
    );
    s.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_listen_stream_carries_resource_updates() {
    use rmcp::model::{ServerNotification, SubscriptionFilter};
    let s = start_2026().await;
    let mut sub = s
        .client
        .peer()
        .listen(
            SubscriptionFilter::builder()
                .resource_subscriptions(["toolbind://tools/hello_py"])
                .build(),
        )
        .await
        .unwrap();
    std::fs::remove_dir_all(s.tools.join("hello_py")).unwrap();
    let n = tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .expect("no notification within 5 s")
        .unwrap();
    match n {
        Some(ServerNotification::ResourceUpdatedNotification(u)) => {
            assert_eq!(u.params.uri, "toolbind://tools/hello_py");
        }
        other => panic!("{other:?}"),
    }
    drop(sub);
    s.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_outputs_give_output_schema_and_structured_content() {
    let s = start_fixture("typed", None, true).await;
    let listed = s.client.list_all_tools().await.unwrap();
    let specs = load_tools(std::slice::from_ref(&s.tools), &Options::default()).unwrap();
    let spec = specs.iter().find(|t| t.name == "report").unwrap();

    // tools/list: the outputSchema of `toolbind schema --dialect mcp`, an object at the root
    // (MCP requires it), valid JSON Schema.
    let report = listed.iter().find(|t| t.name == "report").unwrap();
    let schema = Value::Object((**report.output_schema.as_ref().expect("outputSchema")).clone());
    assert_eq!(Some(&schema), output_schema(spec).as_ref());
    assert_eq!(schema["type"], "object");
    jsonschema::draft202012::meta::validate(&schema).unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    // A seed-format tool has none.
    let plain = listed.iter().find(|t| t.name == "plain").unwrap();
    assert!(plain.output_schema.is_none());

    // A result whose details keep the contract carries them as structuredContent, beside
    // the text content (and `_meta.details`, as before).
    let r = s
        .client
        .call_tool(CallToolRequestParams::new("report").with_arguments(args(json!({}))))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert_eq!(text(&r), "report ready");
    let structured = r.structured_content.clone().expect("structuredContent");
    assert!(
        validator.is_valid(&structured),
        "{:?}",
        validator.validate(&structured)
    );
    assert_eq!(structured["count"], 2);
    assert_eq!(structured["items"][1]["note"], "second");
    assert_eq!(r.meta.as_ref().unwrap().0["details"], structured);

    // A tool that breaks its contract: still a successful result (its side effects
    // happened), without structuredContent, and the server log names the fields.
    let r = s
        .client
        .call_tool(
            CallToolRequestParams::new("report").with_arguments(args(json!({"broken": true}))),
        )
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert_eq!(text(&r), "report ready");
    assert_eq!(r.structured_content, None);
    let details = &r.meta.as_ref().expect("details in _meta").0["details"];
    assert!(
        !validator.is_valid(details),
        "the runtime's check and the outputSchema agree"
    );
    let stderr = s.stderr.clone();
    assert!(
        eventually(5.0, || stderr.lock().unwrap().contains(
            "warning: tool `report` returned details that break its declared outputs"
        ))
        .await,
        "{}",
        stderr.lock().unwrap()
    );
    let log = stderr.lock().unwrap().clone();
    assert!(
        log.contains("`count`: expected a number, found a string; `items[1].name`: missing"),
        "{log}"
    );

    // No outputs declared: no structuredContent, details in `_meta` as before.
    let r = s
        .client
        .call_tool(CallToolRequestParams::new("plain"))
        .await
        .unwrap();
    assert_eq!(r.structured_content, None);
    assert_eq!(r.meta.as_ref().unwrap().0["details"]["free"], "form");
    s.client.cancel().await.unwrap();
}
