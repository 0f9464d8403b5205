//! A call's stderr lines reach its `CallOptions::log` sink: every line of a bash
//! tool, a warm worker's lines while it serves that one call, none that could belong to
//! another call, and redacted of the call's secrets by `Runtime::call`.

use crate::exec_common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use exec_common::*;
use serde_json::json;
use toolbind::Registry;
use toolbind::exec::{ExecCall, Executor, LogSink};
use toolbind::{CallOptions, Runtime};
use toolbind_codegen::model::Language;

fn sink() -> (LogSink, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let sink: LogSink = Arc::new(move |line: String| s.lock().unwrap().push(line));
    (sink, seen)
}

async fn logged_call(
    exec: &toolbind::exec::SubprocessExecutor,
    tool: &toolbind::ToolInfo,
    p: serde_json::Value,
    log: LogSink,
) -> toolbind::ToolResult {
    exec.execute(
        ExecCall::new(tool, params(p))
            .tool_call_id("call-log")
            .log(log)
            .timeout(Duration::from_secs(30)),
    )
    .await
}

async fn settle(seen: &Arc<Mutex<Vec<String>>>, n: usize) -> Vec<String> {
    for _ in 0..100 {
        if seen.lock().unwrap().len() >= n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    seen.lock().unwrap().clone()
}

#[tokio::test]
async fn a_warm_worker_serving_one_call_forwards_every_line_in_order() {
    let (exec, _cache) = executor(|c| c);
    let js = spec("js_tool", Language::TypeScript, "index.mjs");
    let (log, seen) = sink();
    let r = logged_call(
        &exec,
        &js,
        json!({"mode": "stderr", "tag": "solo", "lines": 5}),
        log,
    )
    .await;
    assert_eq!(r.text_content(), "logged", "{r:?}");
    let got = settle(&seen, 5).await;
    let want: Vec<String> = (1..=5).map(|i| format!("solo line {i}")).collect();
    assert_eq!(got, want);
}

#[tokio::test]
async fn lines_of_calls_sharing_a_worker_never_reach_the_wrong_caller() {
    let (exec, _cache) = executor(|c| c);
    let js = spec("js_tool", Language::TypeScript, "index.mjs");
    // Warm the worker first, so both calls share it.
    call(&exec, &js, json!({"mode": "counter"})).await;
    let (log_a, seen_a) = sink();
    let (log_b, seen_b) = sink();
    let (a, b) = tokio::join!(
        logged_call(
            &exec,
            &js,
            json!({"mode": "stderr", "tag": "a", "lines": 6, "ms": 30}),
            log_a
        ),
        logged_call(
            &exec,
            &js,
            json!({"mode": "stderr", "tag": "b", "lines": 6, "ms": 30}),
            log_b
        ),
    );
    assert_eq!(
        (a.text_content(), b.text_content()),
        ("logged".into(), "logged".into())
    );
    tokio::time::sleep(Duration::from_millis(600)).await;
    let (got_a, got_b) = (
        seen_a.lock().unwrap().clone(),
        seen_b.lock().unwrap().clone(),
    );
    assert!(got_a.iter().all(|l| l.starts_with("a line")), "{got_a:?}");
    assert!(got_b.iter().all(|l| l.starts_with("b line")), "{got_b:?}");
    // While both ran, nothing could be attributed: most lines are not forwarded.
    assert!(got_a.len() + got_b.len() < 12, "{got_a:?} {got_b:?}");
}

#[tokio::test]
async fn every_stderr_line_of_a_bash_tool_is_forwarded() {
    let (exec, _cache) = executor(|c| c);
    let sh = spec("sh_tool", Language::Bash, "index.sh");
    let (log, seen) = sink();
    let r = logged_call(&exec, &sh, json!({"mode": "fail"}), log).await;
    assert!(r.is_error, "{r:?}");
    assert_eq!(*seen.lock().unwrap(), ["something went wrong: disk full"]);
}

#[tokio::test]
async fn runtime_call_redacts_secrets_from_stderr_lines() {
    let tool = spec("js_tool", Language::TypeScript, "index.mjs");
    let mut mode = sensitive_input("mode");
    mode.sensitive = false;
    let mut lines = sensitive_input("lines");
    lines.sensitive = false;
    lines.ty = toolbind_codegen::model::InputType::Number;
    let tool = toolbind::ToolInfo::from({
        let mut s = tool.spec().clone();
        s.inputs = vec![mode, sensitive_input("tag"), lines];
        s
    });
    let (exec, _cache) = executor(|c| c);
    let mut registry = Registry::default();
    registry.insert(tool).unwrap();
    let rt = Runtime::builder()
        .registry(registry)
        .executor(Arc::new(exec))
        .build();
    let (log, seen) = sink();
    let token = "sk-live-0a1b2c3d-distinctive";
    let r = rt
        .call(
            "js_tool",
            json!({"mode": "stderr", "tag": token, "lines": 2}),
            CallOptions::new().log(move |l| log(l)),
        )
        .await;
    assert_eq!(r.text_content(), "logged", "{r:?}");
    let got = settle(&seen, 2).await;
    assert_eq!(got, ["[REDACTED] line 1", "[REDACTED] line 2"]);
}
