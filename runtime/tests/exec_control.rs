//! Process control with real processes: cancellation reaches the tool's signal, tools that
//! ignore it are killed with their grandchildren, timeouts do the same, the environment is
//! scrubbed, and sensitive values stay out of argv and error text.

use crate::exec_common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use exec_common::*;
use serde_json::json;
use toolbind::CancelToken;
use toolbind::exec::{Executor, ProgressSink};
use toolbind_codegen::model::{Language, WorkerMode};

fn js() -> toolbind::ToolInfo {
    spec("js_tool", Language::TypeScript, "index.mjs")
}

fn py() -> toolbind::ToolInfo {
    spec("py_sync", Language::Python, "index.py")
}

fn sh() -> toolbind::ToolInfo {
    spec("sh_tool", Language::Bash, "index.sh")
}

#[tokio::test]
async fn cancelled_call_sees_its_signal_and_returns_within_the_grace_period() {
    let (exec, _cache) = executor(|c| c.grace(Duration::from_secs(3)));
    let cases = [
        (js(), "saw abort: true"),
        (py(), "saw abort: True"),
        (
            spec("py_async", Language::Python, "index.py"),
            "async saw abort: True",
        ),
    ];
    for (tool, expected) in cases {
        let cancel = CancelToken::new();
        let (sink, seen) = cancel_on_first_update(cancel.clone());
        let r = tokio::time::timeout(
            Duration::from_secs(30),
            run(
                &exec,
                &tool,
                json!({"mode": "abortable"}),
                cancel,
                Some(sink),
                None,
            ),
        )
        .await
        .expect("the cancelled call did not end within 30 s");
        assert_eq!(
            (r.is_error, r.text_content().as_str()),
            (false, expected),
            "{}",
            tool.name()
        );
        assert_eq!(*seen.lock().unwrap(), vec!["started".to_owned()]);
        // The worker survives a cooperative cancel.
        assert_eq!(exec.warm_workers(), 1);
        exec.shutdown();
    }
}

/// Runs `tool` in `ignore_abort` (or bash `ignore_term`) mode, stopped by `stop`, and
/// checks the error and that nothing of its process group survives.
async fn killed_with_grandchildren(
    tool: toolbind::ToolInfo,
    mode: &str,
    timeout: Option<Duration>,
    cancel: bool,
    expect: &str,
) {
    let (exec, _cache) = executor(|c| c.grace(Duration::from_millis(300)));
    let token = CancelToken::new();
    let (sink, seen) = if cancel {
        cancel_on_first_update(token.clone())
    } else {
        recorder()
    };
    let r = tokio::time::timeout(
        Duration::from_secs(30),
        run(
            &exec,
            &tool,
            json!({"mode": mode}),
            token,
            Some(sink),
            timeout,
        ),
    )
    .await
    .unwrap_or_else(|_| {
        panic!(
            "{} {mode}: the stopped call did not end within 30 s",
            tool.name()
        )
    });
    assert!(r.is_error, "{} {mode}: {r:?}", tool.name());
    assert!(
        r.text_content().contains(expect),
        "{} {mode}: expected `{expect}` in {r:?}",
        tool.name()
    );
    let info = json(&seen.lock().unwrap()[0]);
    let pgid = info["pgid"].as_i64().unwrap() as i32;
    let left = group_gone(pgid, Duration::from_secs(2)).await;
    assert!(
        left.is_empty(),
        "{} {mode}: survivors in group {pgid}: {left:?}",
        tool.name()
    );
    if let Some(gc) = info["grandchild"].as_i64() {
        assert!(
            !alive(gc as i32),
            "{} {mode}: grandchild {gc} survived",
            tool.name()
        );
    }
}

#[tokio::test]
async fn tool_ignoring_abort_is_killed_with_its_grandchildren() {
    let expect = "did not stop within 0.3 s of its abort signal, so its process group was killed";
    killed_with_grandchildren(js(), "ignore_abort", None, true, expect).await;
    killed_with_grandchildren(py(), "ignore_abort", None, true, expect).await;
    let bash = "cancelled; the tool ignored SIGTERM for 0.3 s and its process group was killed";
    killed_with_grandchildren(sh(), "ignore_term", None, true, bash).await;
}

#[tokio::test]
async fn other_calls_on_a_killed_warm_worker_are_told_why() {
    let (exec, _cache) = executor(|c| c.grace(Duration::from_millis(300)));
    let tool = js();
    let stubborn = run(
        &exec,
        &tool,
        json!({"mode": "ignore_abort"}),
        CancelToken::new(),
        None,
        Some(Duration::from_millis(400)),
    );
    let innocent = call(&exec, &tool, json!({"mode": "sleep", "ms": 5000}));
    let (s, i) = tokio::join!(stubborn, innocent);
    assert!(s.text_content().contains("timed out after 0.4 s"), "{s:?}");
    let text = i.text_content();
    assert!(i.is_error, "{text}");
    assert!(
        text.contains("worker process was restarted") && text.contains("ignored its abort signal"),
        "{text}"
    );
    // The next call gets a fresh worker.
    let next = call(&exec, &tool, json!({"mode": "sleep", "ms": 1})).await;
    assert!(!next.is_error, "{next:?}");
}

#[tokio::test]
async fn a_dropped_call_is_aborted_then_killed_if_it_ignores_the_abort() {
    let grace = Duration::from_millis(300);
    let (exec, _cache) = executor(|c| c.grace(grace));
    let tool = js();
    let pid = |r: toolbind::ToolResult| json(&r.text_content())["pid"].clone();

    // A cooperative tool: the abort stops it, the worker lives on.
    let first = pid(call(&exec, &tool, json!({"mode": "counter"})).await);
    let (sink, running) = notifier();
    let abortable = run(
        &exec,
        &tool,
        json!({"mode": "abortable"}),
        CancelToken::new(),
        Some(sink),
        None,
    );
    // Dropped once the tool runs.
    tokio::time::timeout(Duration::from_secs(30), async {
        tokio::select! {
            r = abortable => panic!("the call ended by itself: {r:?}"),
            _ = running.notified() => {}
        }
    })
    .await
    .expect("the abortable call did not start within 30 s");
    // Until the tool has seen the abort (polled, with a deadline)...
    let deadline = Instant::now() + Duration::from_secs(30);
    let aborts = loop {
        let r = json(
            &call(&exec, &tool, json!({"mode": "aborts"}))
                .await
                .text_content(),
        );
        assert_eq!(r["pid"], first, "the worker was replaced: {r}");
        if r["aborts"] == 1 || Instant::now() > deadline {
            break r["aborts"].clone();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(aborts, 1, "the tool saw no abort within 30 s of the drop");
    // ...and past the grace period, when a call that ignored it would be killed: this wait
    // looks for something that must not happen, so it is a window, not a synchronisation.
    tokio::time::sleep(grace * 2).await;
    assert_eq!(
        pid(call(&exec, &tool, json!({"mode": "counter"})).await),
        first
    );

    // A tool that ignores the abort: killed with its grandchildren after the grace period.
    let (sink, seen) = recorder();
    let dropped = tokio::time::timeout(
        Duration::from_millis(300),
        run(
            &exec,
            &tool,
            json!({"mode": "ignore_abort"}),
            CancelToken::new(),
            Some(sink),
            None,
        ),
    )
    .await;
    assert!(dropped.is_err());
    let info = json(&seen.lock().unwrap()[0]);
    let pgid = info["pgid"].as_i64().unwrap() as i32;
    let left = group_gone(pgid, Duration::from_secs(3)).await;
    assert!(left.is_empty(), "survivors in group {pgid}: {left:?}");
    assert!(!alive(info["grandchild"].as_i64().unwrap() as i32));
    assert_ne!(
        pid(call(&exec, &tool, json!({"mode": "counter"})).await),
        first
    );
}

/// A bash call whose future is dropped ends as a cancelled one does: SIGTERM first, so its
/// traps run, and the kill only after the grace period (it used to be SIGKILLed at once).
#[tokio::test]
async fn a_dropped_bash_call_runs_its_term_trap_before_the_kill() {
    let (exec, _cache) = executor(|c| c.grace(Duration::from_secs(10)));
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("trapped");
    let started = Arc::new(tokio::sync::Notify::new());
    let (sink, seen) = recorder();
    let notify = started.clone();
    let sink: ProgressSink = Arc::new(move |p| {
        sink(p);
        notify.notify_one();
    });
    let tool = sh();
    let call = run(
        &exec,
        &tool,
        json!({"mode": "trap_term", "marker": marker.to_str().unwrap()}),
        CancelToken::new(),
        Some(sink),
        None,
    );
    // The trap is set once the script reports its group: then the call is dropped.
    tokio::time::timeout(Duration::from_secs(30), async {
        tokio::select! {
            r = call => panic!("the call ended by itself: {r:?}"),
            _ = started.notified() => {}
        }
    })
    .await
    .expect("the script did not start within 30 s");
    let pgid = json(&seen.lock().unwrap()[0])["pgid"].as_i64().unwrap() as i32;
    let left = group_gone(pgid, Duration::from_secs(30)).await;
    assert!(left.is_empty(), "survivors in group {pgid}: {left:?}");
    assert_eq!(
        std::fs::read_to_string(&marker).ok().as_deref(),
        Some("trapped\n"),
        "the TERM trap did not run: the script was killed outright"
    );
}

#[tokio::test]
async fn timeouts_kill_the_group_and_say_so() {
    let t = Some(Duration::from_millis(700));
    killed_with_grandchildren(js(), "ignore_abort", t, false, "timed out after 0.7 s").await;
    killed_with_grandchildren(py(), "ignore_abort", t, false, "timed out after 0.7 s").await;
    let bash = "timed out after 0.7 s; the tool ignored SIGTERM for 0.3 s and its process group was killed";
    killed_with_grandchildren(sh(), "ignore_term", t, false, bash).await;
    // bash without a trap dies of the SIGTERM itself.
    killed_with_grandchildren(sh(), "sleep", t, false, "timed out after 0.7 s").await;
}

#[tokio::test]
async fn the_executor_enforces_the_timeout_it_is_given() {
    // The caller resolves the timeout (`ExecCall::new`: the tool's, else 120 s; the
    // runtime: the call's, the tool's, its default — see runtime.rs); the executor
    // enforces exactly that, whatever the tool says.
    let (exec, _cache) = executor(|c| c);
    let tool = sh();
    let tool = toolbind::ToolInfo::from({
        let mut s = tool.spec().clone();
        s.timeout_secs = Some(0.6);
        s
    });
    let r = call(&exec, &tool, json!({"mode": "sleep"})).await;
    assert!(r.text_content().contains("timed out after 0.6 s"), "{r:?}");
    assert_eq!(
        r.stop,
        toolbind::StopReason::Timeout {
            after: Duration::from_millis(600)
        }
    );
    let p = params(json!({"mode": "sleep"}));
    let r = exec
        .execute(toolbind::exec::ExecCall::new(&tool, p).timeout(Duration::from_millis(400)))
        .await;
    assert!(r.text_content().contains("timed out after 0.4 s"), "{r:?}");
}

#[tokio::test]
async fn environment_is_scrubbed_and_cwd_configured() {
    let cwd = tempfile::tempdir().unwrap();
    let cwd_path = cwd.path().canonicalize().unwrap();
    let (exec, _cache) = executor(|c| {
        c.cwd(cwd_path.clone())
            .env_set([("INTEGRATION_URL", "http://x")])
    });
    // cargo sets CARGO_PKG_NAME and CARGO_MANIFEST_DIR for the test process.
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    let tool = js();
    let tool = toolbind::ToolInfo::from({
        let mut s = tool.spec().clone();
        s.env = vec!["CARGO_PKG_NAME".into()];
        s
    });
    let out = json(
        &call(&exec, &tool, json!({"mode": "env"}))
            .await
            .text_content(),
    );
    let env = out["env"].as_object().unwrap();
    assert_eq!(out["cwd"], cwd_path.to_str().unwrap());
    assert_eq!(env["TOOL_DIR"], fixture("js_tool").to_str().unwrap());
    assert_eq!(env["CARGO_PKG_NAME"], "toolbind");
    assert_eq!(env["INTEGRATION_URL"], "http://x");
    assert!(env.contains_key("PATH"));
    assert!(
        !env.contains_key("CARGO_MANIFEST_DIR"),
        "undeclared variable leaked: {env:?}"
    );
    let allowed = [
        "PATH",
        "HOME",
        "LANG",
        "LC_ALL",
        "TMPDIR",
        "TZ",
        "USER",
        "TOOL_DIR",
        "CARGO_PKG_NAME",
        "INTEGRATION_URL",
    ];
    for k in env.keys() {
        assert!(allowed.contains(&k.as_str()), "unexpected variable {k}");
    }
}

#[tokio::test]
async fn sensitive_values_never_reach_argv_or_error_text() {
    let secret = "sk-live-7f3a9c1e5b2d";
    let (exec, _cache) = executor(|c| c.worker_mode(WorkerMode::OneShot));
    let tool = js();
    let tool = toolbind::ToolInfo::from({
        let mut s = tool.spec().clone();
        s.inputs = vec![sensitive_input("token")];
        s
    });
    let cancel = CancelToken::new();
    let c2 = cancel.clone();
    let (sink, seen) = recorder();
    let sink2 = sink.clone();
    let scanner = async move {
        while seen.lock().unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let mut scanned = 0;
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            for file in ["cmdline", "environ"] {
                if let Ok(bytes) = std::fs::read(e.path().join(file)) {
                    scanned += 1;
                    let text = String::from_utf8_lossy(&bytes);
                    assert!(
                        !text.contains(secret),
                        "secret in {}/{file}: {text}",
                        e.path().display()
                    );
                }
            }
        }
        c2.cancel();
        scanned
    };
    let (r, scanned) = tokio::join!(
        run(
            &exec,
            &tool,
            json!({"mode": "secret", "token": secret}),
            cancel,
            Some(sink2),
            None
        ),
        scanner
    );
    assert!(scanned > 4);
    drop(sink);
    assert!(r.is_error);
    let t = r.text_content();
    assert!(t.contains("token [REDACTED] was rejected"), "{t}");
    assert!(!t.contains(secret));
}
