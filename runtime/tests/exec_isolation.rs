//! Calls sharing a warm worker are isolated: a call that misbehaves gets the error, the
//! calls in flight beside it complete.

use crate::exec_common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use exec_common::*;
use serde_json::{Value, json};
use toolbind::ToolResult;
use toolbind::exec::SubprocessExecutor;
use toolbind_codegen::model::Language;

fn js() -> toolbind::ToolInfo {
    spec("js_tool", Language::TypeScript, "index.mjs")
}

fn py() -> toolbind::ToolInfo {
    spec("py_sync", Language::Python, "index.py")
}

/// A progress sink that counts the calls that said they started (the fixtures' `sleep`
/// mode reports "sleeping" first), and a wait for `n` of them (at most 30 s).
fn started() -> (toolbind::exec::ProgressSink, Arc<tokio::sync::Semaphore>) {
    let count = Arc::new(tokio::sync::Semaphore::new(0));
    let c = count.clone();
    (Arc::new(move |_| c.add_permits(1)), count)
}

async fn until_started(count: &tokio::sync::Semaphore, n: u32) {
    tokio::time::timeout(Duration::from_secs(30), count.acquire_many(n))
        .await
        .expect("the slow calls did not start within 30 s")
        .unwrap()
        .forget();
}

/// A slow call (`sleep` for `ms`) that reports its start to `sink`.
async fn slow_call(
    exec: &SubprocessExecutor,
    tool: &toolbind::ToolInfo,
    ms: u64,
    sink: &toolbind::exec::ProgressSink,
) -> ToolResult {
    run(
        exec,
        tool,
        json!({"mode": "sleep", "ms": ms}),
        toolbind::CancelToken::new(),
        Some(sink.clone()),
        None,
    )
    .await
}

/// Two slow calls and, once both run, `bad`: returns (bad, [slow, slow]).
async fn beside_two_slow_calls(
    exec: &SubprocessExecutor,
    tool: &toolbind::ToolInfo,
    bad: Value,
) -> (ToolResult, [ToolResult; 2]) {
    let (sink, count) = started();
    let slow = || slow_call(exec, tool, 800, &sink);
    let bad = async {
        until_started(&count, 2).await;
        call(exec, tool, bad).await
    };
    let (a, b, c) = tokio::join!(slow(), bad, slow());
    (b, [a, c])
}

fn pid_of(r: &ToolResult) -> Value {
    json(&r.text_content())["pid"].clone()
}

#[tokio::test]
async fn a_python_result_with_no_json_form_fails_only_its_own_call() {
    let (exec, _cache) = executor(|c| c);
    let tool = py();
    let before = pid_of(&call(&exec, &tool, json!({"mode": "sleep", "ms": 1})).await);
    for mode in ["nan", "inf", "bigint"] {
        let (bad, others) = beside_two_slow_calls(&exec, &tool, json!({"mode": mode})).await;
        let text = bad.text_content();
        assert!(bad.is_error, "{mode}: {text}");
        assert!(
            text.contains("JSON") && !text.contains("\"pid\""),
            "{mode}: the error is about this call's result only: {text}"
        );
        for r in others {
            assert!(!r.is_error, "{mode}: a neighbour failed: {r:?}");
            assert_eq!(pid_of(&r), before, "{mode}: the worker was restarted");
        }
    }
}

#[tokio::test]
async fn a_python_tools_child_cannot_write_into_the_protocol() {
    let (exec, _cache) = executor(|c| c);
    let tool = py();
    let before = pid_of(&call(&exec, &tool, json!({"mode": "sleep", "ms": 1})).await);
    let (child, others) = beside_two_slow_calls(&exec, &tool, json!({"mode": "fd3_child"})).await;
    assert!(!child.is_error, "{child:?}");
    assert!(child.text_content().starts_with("converted"), "{child:?}");
    for r in others {
        assert!(!r.is_error, "a neighbour failed: {r:?}");
        assert_eq!(pid_of(&r), before, "the worker was restarted");
    }
}

#[tokio::test]
async fn a_node_exception_after_execute_returned_is_charged_to_no_call() {
    let (exec, _cache) = executor(|c| c);
    let tool = js();
    let before = pid_of(&call(&exec, &tool, json!({"mode": "sleep", "ms": 1})).await);
    let (late, others) = beside_two_slow_calls(&exec, &tool, json!({"mode": "late_throw"})).await;
    assert!(!late.is_error, "{late:?}");
    assert_eq!(late.text_content(), "returned");
    for r in others {
        assert!(!r.is_error, "a neighbour failed: {r:?}");
        assert_eq!(pid_of(&r), before, "the worker was restarted");
    }
    // An exception thrown from a timer while its call is in flight is that call's error.
    let own = call(&exec, &tool, json!({"mode": "uncaught"})).await;
    assert!(
        own.is_error && own.text_content().contains("boom-uncaught"),
        "{own:?}"
    );
    let after = call(&exec, &tool, json!({"mode": "sleep", "ms": 1})).await;
    assert_eq!(pid_of(&after), before, "the worker was restarted");
}

#[tokio::test]
async fn a_dead_harness_is_noticed_even_when_a_daemon_holds_its_channel() {
    let (exec, _cache) = executor(|c| c);
    let tool = py();
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("daemon.pid");
    call(&exec, &tool, json!({"mode": "sleep", "ms": 1})).await;
    let start = Instant::now();
    let (sink, count) = started();
    let slow = || slow_call(&exec, &tool, 20000, &sink);
    let bad = async {
        until_started(&count, 2).await;
        call(
            &exec,
            &tool,
            json!({"mode": "fork_daemon", "pidfile": pidfile.to_str().unwrap()}),
        )
        .await
    };
    let (a, bad, c) = tokio::join!(slow(), bad, slow());
    let elapsed = start.elapsed();
    if let Ok(pid) = std::fs::read_to_string(&pidfile) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid.trim().parse().unwrap()),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    // The daemon holds the channel for 120 s: calls that waited for it would end then.
    assert!(
        elapsed < Duration::from_secs(60),
        "the calls waited for the daemon: {elapsed:?}"
    );
    assert!(
        bad.is_error && bad.text_content().contains("exited with code 3"),
        "{bad:?}"
    );
    for r in [a, c] {
        let text = r.text_content();
        assert!(r.is_error, "{text}");
        assert!(
            text.contains("neighbouring call") && text.contains("exited with code 3"),
            "{text}"
        );
    }
    // The next call gets a fresh worker.
    let next = call(&exec, &tool, json!({"mode": "sleep", "ms": 1})).await;
    assert!(!next.is_error, "{next:?}");
}

#[tokio::test]
async fn idempotent_calls_broken_by_a_neighbour_are_retried_once() {
    let (exec, _cache) = executor(|c| c);
    // Same tool folder, so the same worker; only the first is annotated idempotent.
    let plain = py();
    let tool = py();
    let tool = toolbind::ToolInfo::from({
        let mut s = tool.spec().clone();
        s.annotations.idempotent = Some(true);
        s
    });
    call(&exec, &tool, json!({"mode": "sleep", "ms": 1})).await;
    let (sink, count) = started();
    let slow = slow_call(&exec, &tool, 1500, &sink);
    let crash = async {
        until_started(&count, 1).await;
        call(&exec, &plain, json!({"mode": "exit"})).await
    };
    let (slow, crash) = tokio::join!(slow, crash);
    assert!(crash.is_error, "{crash:?}");
    assert!(!slow.is_error, "retried on a fresh worker: {slow:?}");
}

// Results are what they claim: a tool's child cannot forge one, and one that is not
// well-formed is not taken for success.
#[tokio::test]
async fn a_python_tools_child_cannot_forge_a_result() {
    let (exec, _cache) = executor(|c| c);
    let py = py();
    for _ in 0..3 {
        let r = call(&exec, &py, json!({"mode": "forge"})).await;
        assert_eq!(r.text_content(), "real", "{r:?}");
    }
}

#[tokio::test]
async fn a_non_boolean_is_error_is_a_malformed_result_not_success() {
    let (exec, _cache) = executor(|c| c);
    let py = py();
    let r = call(&exec, &py, json!({"mode": "is_error_string"})).await;
    assert!(r.is_error, "{r:?}");
    assert!(r.text_content().contains("`isError` as a string"), "{r:?}");
}
