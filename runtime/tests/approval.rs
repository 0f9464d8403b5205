//! Approval before a call (`toolbind::host`): TOOL.md `approval: always` and a host's
//! policy; approved, denied, edited (and edited into invalid arguments), a policy that
//! panics, one that never answers, a call cancelled while it waits, no host at all, a
//! policy that asks for every destructive tool, and a wait that does not count against
//! the tool's timeout (a real bash tool).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolbind::exec::{ExecCall, ExecFuture, Executor};
use toolbind::host::{Answer, ApprovalRequest, Decision, Host, policy};
use toolbind::runtime::{RuntimeBuilder, RuntimeConfig};
use toolbind::{CallOptions, CancelToken, Loader, Runtime, StopReason, ToolResult};

/// Hang guard of each test.
const GUARD: Duration = Duration::from_secs(30);

/// Records the params of every call it runs, and runs none of them.
#[derive(Default)]
struct Recorder(Mutex<Vec<(String, Value)>>);

impl Executor for Recorder {
    fn execute<'a>(&'a self, call: ExecCall<'a>) -> ExecFuture<'a> {
        self.0
            .lock()
            .unwrap()
            .push((call.tool.name().to_owned(), Value::Object(call.params)));
        Box::pin(async { ToolResult::text("ran") })
    }
}

fn registry() -> toolbind::Registry {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/approval/tools");
    let loaded = Loader::new().dir(dir).quiet().load();
    assert_eq!(loaded.registry.len(), 4, "{:?}", loaded.warnings);
    loaded.registry
}

fn runtime(
    host: Option<Box<dyn FnOnce(RuntimeBuilder) -> RuntimeBuilder>>,
) -> (Runtime, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let mut b = Runtime::builder()
        .registry(registry())
        .executor(recorder.clone());
    if let Some(h) = host {
        b = h(b);
    }
    (b.build(), recorder)
}

async fn call(rt: &Runtime, tool: &str, args: Value) -> ToolResult {
    tokio::time::timeout(GUARD, rt.call(tool, args, CallOptions::new()))
        .await
        .expect("the call hung")
}

fn ran(r: &Recorder) -> Vec<(String, Value)> {
    r.0.lock().unwrap().clone()
}

#[tokio::test]
async fn without_a_host_a_call_that_needs_approval_is_denied_and_nothing_runs() {
    let (rt, rec) = runtime(None);
    let r = call(&rt, "remove_file", json!({"path": "/tmp/x"})).await;
    assert_eq!(r.stop, StopReason::Denied);
    assert!(r.is_error);
    let text = r.text_content();
    assert!(text.contains("approval: always"), "{text}");
    assert!(text.contains("RuntimeBuilder::host"), "{text}");
    // A tool that needs none runs.
    assert_eq!(
        call(&rt, "read_note", json!({})).await.stop,
        StopReason::Completed
    );
    assert_eq!(ran(&rec), vec![("read_note".into(), json!({}))]);
}

#[tokio::test]
async fn approved_denied_and_edited() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let (rt, rec) = runtime(Some(Box::new(move |b| {
        b.host(policy(move |req: ApprovalRequest| {
            seen.lock().unwrap().push(req.args.clone());
            async move {
                match req.args["path"].as_str() {
                    Some("/etc/passwd") => Decision::deny("not a system file"),
                    Some("/tmp/a") => Decision::approve_with(json!({"path": "/tmp/a.bak"})),
                    Some("/tmp/bad") => Decision::approve_with(json!({"path": 7})),
                    _ => Decision::Approve,
                }
            }
        }))
    })));
    // Approved: runs with the validated arguments (the default filled in).
    let r = call(&rt, "remove_file", json!({"path": "/tmp/ok"})).await;
    assert_eq!(r.stop, StopReason::Completed, "{r:?}");
    // Denied: the model reads why; nothing ran.
    let r = call(&rt, "remove_file", json!({"path": "/etc/passwd"})).await;
    assert_eq!(r.stop, StopReason::Denied);
    assert!(r.is_error);
    assert!(
        r.text_content().contains("denied: not a system file"),
        "{r:?}"
    );
    // Edited: runs with the approver's arguments, validated again.
    let r = call(&rt, "remove_file", json!({"path": "/tmp/a"})).await;
    assert_eq!(r.stop, StopReason::Completed, "{r:?}");
    // Edited into invalid arguments: bad arguments, saying whose; nothing ran.
    let r = call(&rt, "remove_file", json!({"path": "/tmp/bad"})).await;
    assert_eq!(r.stop, StopReason::BadArguments, "{r:?}");
    assert!(
        r.text_content()
            .starts_with("the arguments the approver edited are invalid: "),
        "{r:?}"
    );
    assert_eq!(
        ran(&rec),
        vec![
            (
                "remove_file".into(),
                json!({"path": "/tmp/ok", "force": false})
            ),
            (
                "remove_file".into(),
                json!({"path": "/tmp/a.bak", "force": false})
            ),
        ]
    );
    // The policy saw validated arguments, defaults included.
    assert_eq!(
        asked.lock().unwrap()[0],
        json!({"path": "/tmp/ok", "force": false})
    );
    // A tool that needs no approval is not asked about.
    call(&rt, "read_note", json!({})).await;
    assert_eq!(asked.lock().unwrap().len(), 4);
}

#[tokio::test]
async fn a_policy_that_panics_denies_with_its_message() {
    let (rt, rec) = runtime(Some(Box::new(|b| {
        b.host(policy(|_req| async { panic!("policy bug") }))
    })));
    let r = call(&rt, "remove_file", json!({"path": "/tmp/x"})).await;
    assert_eq!(r.stop, StopReason::Denied);
    assert!(r.text_content().contains("panicked: policy bug"), "{r:?}");
    assert!(ran(&rec).is_empty());
}

#[tokio::test]
async fn a_host_that_never_answers_is_a_denial_after_the_ask_timeout() {
    let (rt, rec) = runtime(Some(Box::new(|b| {
        b.config(RuntimeConfig::default().ask_timeout(Duration::from_millis(200)))
            .host(policy(|_req| std::future::pending::<Decision>()))
    })));
    let r = call(&rt, "remove_file", json!({"path": "/tmp/x"})).await;
    assert_eq!(r.stop, StopReason::Denied);
    assert!(
        r.text_content().contains("did not come within 0.2 s"),
        "{r:?}"
    );
    assert!(ran(&rec).is_empty());
}

#[tokio::test]
async fn a_call_cancelled_while_it_waits_is_cancelled() {
    let (rt, rec) = runtime(Some(Box::new(|b| {
        b.host(policy(|_req| std::future::pending::<Decision>()))
    })));
    let cancel = CancelToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        stop.cancel();
    });
    let r = tokio::time::timeout(
        GUARD,
        rt.call(
            "remove_file",
            json!({"path": "/tmp/x"}),
            CallOptions::new().cancel(cancel),
        ),
    )
    .await
    .unwrap();
    assert_eq!(r.stop, StopReason::Cancelled);
    assert!(
        r.text_content().contains("while it waited for approval"),
        "{r:?}"
    );
    assert!(ran(&rec).is_empty());
}

/// A policy that asks about every destructive tool and counts what it was asked.
struct Destructive(AtomicUsize);

impl Host for Destructive {
    fn needs_approval(&self, tool: &toolbind::ToolInfo) -> bool {
        tool.spec().annotations.destructive == Some(true)
    }

    fn approve(&self, request: ApprovalRequest) -> Answer<Decision> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move { Decision::deny(format!("{} destroys", request.tool.name())) })
    }
}

#[tokio::test]
async fn a_policy_may_ask_for_tools_by_their_annotations() {
    let (rt, rec) = runtime(Some(Box::new(|b| b.host(Destructive(AtomicUsize::new(0))))));
    let r = call(&rt, "wipe_disk", json!({})).await;
    assert_eq!(r.stop, StopReason::Denied);
    assert!(r.text_content().contains("wipe_disk destroys"), "{r:?}");
    // `approval: always` is asked whatever the policy's predicate says.
    let r = call(&rt, "remove_file", json!({"path": "/x"})).await;
    assert_eq!(r.stop, StopReason::Denied);
    assert_eq!(
        call(&rt, "read_note", json!({})).await.stop,
        StopReason::Completed
    );
    assert_eq!(ran(&rec).len(), 1);
}

#[tokio::test]
async fn the_wait_for_approval_does_not_count_against_the_timeout() {
    // A real bash tool with a 1-second timeout that takes half a second, approved after
    // 1.5 s: it runs to its end.
    let rt = Runtime::builder()
        .registry(registry())
        .host(policy(|_req| async {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            Decision::Approve
        }))
        .build();
    let r = call(&rt, "slow_remove", json!({})).await;
    assert_eq!(r.stop, StopReason::Completed, "{r:?}");
    assert_eq!(r.text_content().trim(), "removed slowly");
}
