//! Executors end to end with real node, python3 and bash: every language runs seed-format
//! entries unchanged, progress arrives in order, crashes of every kind become error
//! results naming the cause, and warm workers keep state, serve concurrent calls and are
//! restarted after a crash.

use crate::exec_common;

use std::time::Duration;

use exec_common::*;
use serde_json::json;
use toolbind_codegen::model::{Language, WorkerMode};

fn js() -> toolbind::ToolInfo {
    spec("js_tool", Language::TypeScript, "index.mjs")
}

fn py() -> toolbind::ToolInfo {
    spec("py_sync", Language::Python, "index.py")
}

#[tokio::test]
async fn seed_000_example_runs_unchanged() {
    let (exec, _cache) = executor(|c| c);
    let tool = spec("seed_example", Language::TypeScript, "index.ts");
    let (sink, seen) = recorder();
    let r = run(
        &exec,
        &tool,
        json!({"param_name": "hello", "mode": "batch"}),
        Default::default(),
        Some(sink),
        None,
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.text_content(), "call-1: hello / batch");
    assert_eq!(
        *seen.lock().unwrap(),
        vec!["Processing step 2 of 5...".to_owned()]
    );
}

#[tokio::test]
async fn typescript_features_and_source_maps() {
    let (exec, _cache) = executor(|c| c);
    let tool = spec("ts_features", Language::TypeScript, "index.ts");
    let r = call(&exec, &tool, json!({"words": "ab cde f"})).await;
    assert!(!r.is_error, "{r:?}");
    let out = json(&r.text_content());
    assert_eq!(out["upper"], "AB:10");
    assert_eq!(out["lengths"], json!([2, 3, 1]));
    assert_eq!(out["level"], "Low");
    assert_eq!(out["dir"], "ts_features");
    assert_eq!(out["hasHost"], true);
    // `new Error('where')` is on line 40 of index.ts; the source map must say so.
    let stack = out["stack"].as_str().unwrap();
    assert!(
        stack.contains("ts_features/index.ts:40:"),
        "stack frame not mapped to .ts: {stack}"
    );
}

#[tokio::test]
async fn typescript_syntax_error_names_file_line_and_column() {
    let (exec, _cache) = executor(|c| c);
    let tool = spec("ts_broken", Language::TypeScript, "index.ts");
    let r = call(&exec, &tool, json!({})).await;
    assert!(r.is_error);
    let t = r.text_content();
    assert!(
        t.contains("cannot transpile") && t.contains("ts_broken/index.ts:2:"),
        "{t}"
    );
}

#[tokio::test]
async fn python_sync_and_async_entries() {
    let (exec, _cache) = executor(|c| c);
    let r = call(&exec, &py(), json!({"mode": "echo", "x": [1, 2]})).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(
        json(&r.text_content()),
        json!({"toolCallId": "call-1", "params": {"mode": "echo", "x": [1, 2]}})
    );

    let tool = spec("py_async", Language::Python, "index.py");
    let (sink, seen) = recorder();
    let r = run(
        &exec,
        &tool,
        json!({"words": "hi there"}),
        Default::default(),
        Some(sink),
        None,
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.text_content(), "async hi there");
    assert_eq!(*seen.lock().unwrap(), vec!["halfway".to_owned()]);
}

#[tokio::test]
async fn bash_entry_gets_json_on_stdin_and_reports_progress_on_fd3() {
    let (exec, _cache) = executor(|c| c);
    let tool = spec("sh_tool", Language::Bash, "index.sh");
    let (sink, seen) = recorder();
    let r = run(
        &exec,
        &tool,
        json!({"mode": "echo", "q": "a b"}),
        Default::default(),
        Some(sink),
        None,
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.text_content(), r#"got {"mode":"echo","q":"a b"}"#);
    // Written back to back, the two lines may coalesce: the latest always arrives.
    let seen = seen.lock().unwrap().clone();
    assert!(
        seen == ["step 1", "step 2"] || seen == ["step 2"],
        "{seen:?}"
    );

    let r = call(&exec, &tool, json!({"mode": "fail"})).await;
    assert!(r.is_error);
    let t = r.text_content();
    assert!(
        t.contains("index.sh exited with code 4") && t.contains("disk full"),
        "{t}"
    );
}

#[tokio::test]
async fn progress_arrives_in_order_before_the_result() {
    let (exec, _cache) = executor(|c| c);
    for tool in [js(), py()] {
        let (sink, seen) = recorder();
        let r = run(
            &exec,
            &tool,
            json!({"mode": "progress", "n": 200}),
            Default::default(),
            Some(sink),
            None,
        )
        .await;
        assert_eq!(r.text_content(), "done");
        // Coalesced (see exec_progress.rs), but in order and ending with the latest.
        let seen = seen.lock().unwrap().clone();
        let expected: Vec<String> = (0..200).map(|i| format!("step {i}")).collect();
        let mut rest = expected.iter();
        assert!(
            seen.iter().all(|s| rest.any(|e| e == s)),
            "{}: {seen:?}",
            tool.name()
        );
        assert_eq!(seen.last().map(String::as_str), Some("step 199"));
    }
}

#[tokio::test]
async fn thrown_errors_become_error_results_with_the_message() {
    let (exec, _cache) = executor(|c| c);
    let r = call(&exec, &js(), json!({"mode": "throw", "value": 7})).await;
    assert!(r.is_error);
    assert_eq!(r.text_content(), "bad input: 7");
    let r = call(&exec, &py(), json!({"mode": "raise", "value": 7})).await;
    assert!(r.is_error);
    assert_eq!(r.text_content(), "ValueError: bad value 7");
    let r = call(&exec, &js(), json!({"mode": "nothing"})).await;
    assert!(
        r.is_error && r.text_content().contains("returned nothing"),
        "{r:?}"
    );
}

#[tokio::test]
async fn crashes_of_every_kind_name_their_cause() {
    let (exec, _cache) = executor(|c| c.worker_mode(WorkerMode::OneShot));
    let sh = spec("sh_tool", Language::Bash, "index.sh");
    let cases = [
        (js(), json!({"mode": "uncaught"}), vec!["boom-uncaught"]),
        (
            js(),
            json!({"mode": "exit"}),
            vec!["node process running index.mjs exited with code 3"],
        ),
        (
            js(),
            json!({"mode": "kill9"}),
            vec!["killed by signal 9 (SIGKILL)"],
        ),
        (
            py(),
            json!({"mode": "exit"}),
            vec!["exited with code 2", "sys.exit(2)"],
        ),
        (
            py(),
            json!({"mode": "kill9"}),
            vec!["killed by signal 9 (SIGKILL)"],
        ),
        (
            sh,
            json!({"mode": "kill9"}),
            vec!["index.sh was killed by signal 9 (SIGKILL)"],
        ),
        (
            spec("js_syntax", Language::TypeScript, "index.mjs"),
            json!({}),
            vec!["failed to load index.mjs", "SyntaxError"],
        ),
        (
            spec("py_syntax", Language::Python, "index.py"),
            json!({}),
            vec!["failed to load index.py", "SyntaxError", "line 1"],
        ),
        (
            spec("js_noexport", Language::TypeScript, "index.mjs"),
            json!({}),
            vec![
                "index.mjs does not export an execute function",
                "run, version",
            ],
        ),
    ];
    for (tool, p, needles) in cases {
        let r = call(&exec, &tool, p.clone()).await;
        assert!(r.is_error, "{} {p}: {r:?}", tool.name());
        let t = r.text_content();
        for n in needles {
            assert!(
                t.contains(n),
                "{} {p}: expected `{n}` in:\n{t}",
                tool.name()
            );
        }
    }
    let missing = js();
    let missing = toolbind::ToolInfo::from({
        let mut s = missing.spec().clone();
        s.entry = Some("nope.mjs".into());
        s
    });
    let r = call(&exec, &missing, json!({})).await;
    assert!(
        r.is_error && r.text_content().contains("has no entry file"),
        "{r:?}"
    );
}

#[tokio::test]
async fn console_output_does_not_break_the_protocol() {
    let (exec, _cache) = executor(|c| c);
    let r = call(&exec, &js(), json!({"mode": "console"})).await;
    assert_eq!(
        (r.is_error, r.text_content().as_str()),
        (false, "real result")
    );
    let r = call(&exec, &py(), json!({"mode": "print"})).await;
    assert_eq!(
        (r.is_error, r.text_content().as_str()),
        (false, "real result")
    );
}

#[tokio::test]
async fn results_too_long_for_the_protocol_are_cut_not_fatal() {
    let (exec, _cache) = executor(|c| c.max_text_bytes(1000).max_line_bytes(4096));
    for tool in [js(), py()] {
        let first = call(&exec, &tool, json!({"mode": "counter"})).await;
        let r = call(&exec, &tool, json!({"mode": "escapes", "n": 800})).await;
        assert!(!r.is_error, "{}: {r:?}", tool.name());
        let text = r.text_content();
        assert!(
            text.contains("over the 4096-byte protocol limit")
                && text.contains("details are dropped"),
            "{}: {text}",
            tool.name()
        );
        assert_eq!(r.details, None);
        // The worker survived: same process, state kept.
        let after = call(&exec, &tool, json!({"mode": "counter"})).await;
        let (a, b) = (json(&first.text_content()), json(&after.text_content()));
        assert_eq!(a["pid"], b["pid"], "{}", tool.name());
    }
}

#[tokio::test]
async fn the_text_cap_is_one_budget_and_never_edits_the_tools_objects() {
    let (exec, _cache) = executor(|c| c.max_text_bytes(1000));
    let r = call(&exec, &js(), json!({"mode": "escapes", "n": 300})).await;
    assert_eq!(
        r.content.len(),
        2,
        "300 + 300 characters fit in one budget of 1000"
    );
    for _ in 0..2 {
        // 1500 characters, cut to 1000 with a note, each time: the cached object is intact.
        let r = call(&exec, &js(), json!({"mode": "cached", "n": 1500})).await;
        assert_eq!(r.content[0].as_text().unwrap().len(), 1000);
        assert!(
            r.content[1]
                .as_text()
                .unwrap()
                .contains("500 more characters were cut")
        );
        assert_eq!(r.content.len(), 2);
    }
}

#[tokio::test]
async fn wrapped_async_python_and_default_export_js_entries_run() {
    let (exec, _cache) = executor(|c| c);
    let r = call(
        &exec,
        &spec("py_wrapped", Language::Python, "index.py"),
        json!({}),
    )
    .await;
    assert_eq!(
        (r.is_error, r.text_content().as_str()),
        (false, "wrapped async ran")
    );
    let r = call(
        &exec,
        &spec("js_default", Language::TypeScript, "index.mjs"),
        json!({"who": "Ada"}),
    )
    .await;
    assert_eq!(
        (r.is_error, r.text_content().as_str()),
        (false, "default export ran for Ada")
    );
}

#[tokio::test]
async fn editing_a_helper_module_or_tool_md_replaces_the_warm_worker() {
    // Sources checked at every call: the edits below are seen without waiting out the
    // default one-second interval.
    let (exec, _cache) = executor(|c| c.source_check_interval(Duration::ZERO));
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("lib")).unwrap();
    std::fs::write(
        dir.path().join("index.ts"),
        "import { v } from './lib/v.ts';\nexport async function execute(): Promise<string> { return `${v} ${process.pid}`; }\n",
    )
    .unwrap();
    let write_v = |v: &str| {
        std::fs::write(
            dir.path().join("lib/v.ts"),
            format!("export const v: string = '{v}';\n"),
        )
        .unwrap();
    };
    write_v("v1");
    let tool = toolbind::ToolInfo::from({
        let mut s = spec("helper", Language::TypeScript, "index.ts")
            .spec()
            .clone();
        s.dir = dir.path().to_path_buf();
        s.file = dir.path().join("TOOL.md");
        s
    });
    std::fs::write(tool.file(), "---\nname: helper\ndescription: d\n---\n").unwrap();
    let out = |r: toolbind::ToolResult| r.text_content();
    let first = out(call(&exec, &tool, json!({})).await);
    assert!(first.starts_with("v1 "), "{first}");
    assert_eq!(
        out(call(&exec, &tool, json!({})).await),
        first,
        "same worker"
    );
    write_v("v2-longer");
    let second = out(call(&exec, &tool, json!({})).await);
    assert!(second.starts_with("v2-longer "), "{second}");
    std::fs::write(
        tool.file(),
        "---\nname: helper\ndescription: d\nenv: [X]\n---\n",
    )
    .unwrap();
    let third = out(call(&exec, &tool, json!({})).await);
    assert_ne!(
        third, second,
        "a TOOL.md edit restarts the worker (new pid)"
    );
}

/// A tool's thrown error is the tool's, whatever it says: one that reads like the
/// runtime's own protocol errors is still a `ToolError`.
#[tokio::test]
async fn a_thrown_error_that_reads_like_a_protocol_error_is_the_tools() {
    let (exec, _cache) = executor(|c| c);
    let tool = spec("js_tool", Language::TypeScript, "index.mjs");
    let r = call(
        &exec,
        &tool,
        json!({"mode": "throw_raw", "message": "protocol error: made up by the tool"}),
    )
    .await;
    assert_eq!(r.stop, toolbind::StopReason::ToolError, "{r:?}");
    assert!(r.text_content().contains("made up by the tool"), "{r:?}");
}

#[tokio::test]
async fn a_lone_surrogate_in_a_js_result_does_not_break_the_worker() {
    let (exec, _cache) = executor(|c| c);
    let first = json(
        &call(&exec, &js(), json!({"mode": "counter"}))
            .await
            .text_content(),
    );
    let r = call(&exec, &js(), json!({"mode": "lone_surrogate"})).await;
    assert_eq!(
        (r.is_error, r.text_content().as_str()),
        (false, "cut \u{fffd}")
    );
    // The same warm worker, state intact.
    let after = json(
        &call(&exec, &js(), json!({"mode": "counter"}))
            .await
            .text_content(),
    );
    assert_eq!(after["pid"], first["pid"]);
    assert_eq!(after["counter"], 2);
}

#[tokio::test]
async fn warm_worker_keeps_state_and_one_shot_does_not() {
    for tool in [js(), py()] {
        let (exec, _cache) = executor(|c| c);
        let mut pids = Vec::new();
        for n in 1..=3 {
            let out = json(
                &call(&exec, &tool, json!({"mode": "counter"}))
                    .await
                    .text_content(),
            );
            assert_eq!(out["counter"], n, "{}", tool.name());
            pids.push(out["pid"].clone());
        }
        assert!(pids.windows(2).all(|w| w[0] == w[1]), "{pids:?}");
        assert_eq!(exec.warm_workers(), 1);

        let one_shot = tool.clone();
        let one_shot = toolbind::ToolInfo::from({
            let mut s = one_shot.spec().clone();
            s.worker = WorkerMode::OneShot;
            s
        });
        for _ in 0..2 {
            let out = json(
                &call(&exec, &one_shot, json!({"mode": "counter"}))
                    .await
                    .text_content(),
            );
            assert_eq!(out["counter"], 1, "{}", tool.name());
            assert_ne!(out["pid"], pids[0]);
        }
    }
}

/// Calls one after another reuse one pooled thread: the thread counts itself idle before
/// its answer goes out, so the next call, sent as soon as the answer arrives, never finds
/// it busy and starts another (each extra thread costs every later call a wake-up).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_calls_in_turn_reuse_one_pooled_thread() {
    let (exec, _cache) = executor(|c| c);
    let mut pool = Vec::new();
    for _ in 0..50 {
        let out = json(
            &call(&exec, &py(), json!({"mode": "threads", "hog": true}))
                .await
                .text_content(),
        );
        pool.push(out["pool"].as_u64().unwrap());
    }
    assert!(pool.iter().all(|&n| n == 1), "{pool:?}");
}

/// An exception that cannot be printed is named by its type, and the worker's next call
/// runs: the pooled thread that failed to describe it lives on.
#[tokio::test]
async fn a_python_exception_that_cannot_be_printed_is_named_by_its_type() {
    let (exec, _cache) = executor(|c| c);
    let tool = py();
    // Bounded: a call left unanswered would otherwise wait out the default timeout.
    let ten_s = Some(Duration::from_secs(10));
    let r = run(
        &exec,
        &tool,
        json!({"mode": "bad_str"}),
        Default::default(),
        None,
        ten_s,
    )
    .await;
    assert!(r.is_error, "{r:?}");
    assert!(r.text_content().contains("Unprintable"), "{r:?}");
    for _ in 0..3 {
        let r = run(
            &exec,
            &tool,
            json!({"mode": "echo"}),
            Default::default(),
            None,
            ten_s,
        )
        .await;
        assert!(!r.is_error, "{r:?}");
    }
}

#[tokio::test]
async fn warm_worker_serves_concurrent_calls() {
    for tool in [js(), py()] {
        let (exec, _cache) = executor(|c| c);
        // Start the worker first, then 8 calls that each wait for all 8 to arrive: they
        // meet only if the one worker runs them at once.
        call(&exec, &tool, json!({"mode": "counter"})).await;
        let calls = (0..8).map(|_| call(&exec, &tool, json!({"mode": "rendezvous", "n": 8})));
        let results: Vec<_> = futures_join_all(calls)
            .await
            .iter()
            .map(|r| json(&r.text_content()))
            .collect();
        assert!(
            results.iter().all(|r| r["met"] == true),
            "{}: the calls did not run at once: {results:?}",
            tool.name()
        );
        assert!(
            results.windows(2).all(|w| w[0]["pid"] == w[1]["pid"]),
            "{results:?}"
        );
    }
}

#[tokio::test]
async fn dead_worker_fails_calls_in_flight_and_is_restarted() {
    for tool in [js(), py()] {
        let (exec, _cache) = executor(|c| c);
        let first = json(
            &call(&exec, &tool, json!({"mode": "counter"}))
                .await
                .text_content(),
        );
        // The crash is sent once the slow call is running on the worker.
        let (sink, running) = notifier();
        let slow = run(
            &exec,
            &tool,
            json!({"mode": "sleep", "ms": 30000}),
            toolbind::CancelToken::new(),
            Some(sink),
            None,
        );
        let crash = async {
            running.notified().await;
            call(&exec, &tool, json!({"mode": "exit"})).await
        };
        let (slow, crash) = tokio::join!(slow, crash);
        assert!(
            crash.is_error && crash.text_content().contains("exited with code"),
            "{crash:?}"
        );
        assert!(
            slow.is_error && slow.text_content().contains("exited with code"),
            "in-flight call: {slow:?}"
        );
        let again = json(
            &call(&exec, &tool, json!({"mode": "counter"}))
                .await
                .text_content(),
        );
        assert_eq!(
            again["counter"],
            1,
            "{}: a fresh worker starts from scratch",
            tool.name()
        );
        assert_ne!(again["pid"], first["pid"]);
    }
}

#[tokio::test]
async fn idle_workers_are_reaped() {
    let (exec, _cache) = executor(|c| c.idle_timeout(Duration::from_millis(150)));
    let out = json(
        &call(&exec, &js(), json!({"mode": "counter"}))
            .await
            .text_content(),
    );
    let pid = out["pid"].as_i64().unwrap() as i32;
    assert_eq!(exec.warm_workers(), 1);
    let left = group_gone(pid, Duration::from_secs(3)).await;
    assert!(left.is_empty(), "idle worker still running: {left:?}");
    assert_eq!(exec.warm_workers(), 0);
}

#[tokio::test]
async fn dropping_the_executor_kills_its_workers() {
    let (exec, _cache) = executor(|c| c);
    let out = json(
        &call(&exec, &py(), json!({"mode": "counter"}))
            .await
            .text_content(),
    );
    let pid = out["pid"].as_i64().unwrap() as i32;
    assert!(alive(pid));
    drop(exec);
    let left = group_gone(pid, Duration::from_secs(3)).await;
    assert!(left.is_empty(), "worker outlived the executor: {left:?}");
}

async fn futures_join_all<F: std::future::Future>(
    futs: impl IntoIterator<Item = F>,
) -> Vec<F::Output> {
    let futs: Vec<_> = futs.into_iter().map(Box::pin).collect();
    let mut out = Vec::new();
    // Poll all at once: a tiny join_all without the futures crate.
    let mut slots: Vec<Option<F::Output>> = futs.iter().map(|_| None).collect();
    let mut futs: Vec<_> = futs.into_iter().map(Some).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in futs.iter_mut().enumerate() {
            if let Some(fut) = f {
                match fut.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => {
                        slots[i] = Some(v);
                        *f = None;
                    }
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
    out.extend(slots.into_iter().map(|s| s.unwrap()));
    out
}

/// A bash tool with `output: json`: its stdout is the whole result, so it can return any
/// content block (repaired where the meaning is clear) and `details`; fd 3 stays progress.
#[tokio::test]
async fn bash_output_json_returns_a_whole_result() {
    use toolbind::Content;
    let (exec, _cache) = executor(|c| c);
    let dir = fixture("sh_json");
    let md = "---\nname: sh_json\ndescription: d\nlanguage: bash\noutput: json\ninputs:\n  mode:\n    type: string\n    description: d\n---\n";
    let spec = toolbind_codegen::parse_tool_md(
        &dir.join("TOOL.md"),
        &dir,
        md.as_bytes(),
        &toolbind_codegen::Options::default().require_entry(false),
    )
    .unwrap();
    let mut spec = spec;
    spec.entry = Some("index.sh".into());
    let tool = toolbind::ToolInfo::from(spec);
    let (sink, seen) = recorder();
    let r = run(
        &exec,
        &tool,
        json!({"mode": "ok"}),
        Default::default(),
        Some(sink),
        None,
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.content.len(), 3, "{r:?}");
    assert_eq!(r.content[0].as_text(), Some("converted"));
    // The data: URL's prefix is taken off and names the MIME type the tool left null.
    assert_eq!(
        r.content[1],
        Content::Image {
            data: "UE5HREFUQQ==".into(),
            mime_type: "image/png".into()
        }
    );
    let Content::ResourceLink(link) = &r.content[2] else {
        panic!("{:?}", r.content[2])
    };
    assert_eq!(
        (link.uri.as_str(), link.size),
        ("file:///tmp/out.mp3", Some(1234))
    );
    assert_eq!(r.details, Some(json!({"ok": true})));
    assert!(!seen.lock().unwrap().is_empty(), "fd 3 is still progress");

    let r = call(&exec, &tool, json!({"mode": "error"})).await;
    assert!(r.is_error && r.text_content() == "no such file", "{r:?}");
    let r = call(&exec, &tool, json!({"mode": "bad"})).await;
    assert_eq!(r.stop, toolbind::StopReason::ProtocolError, "{r:?}");
    assert!(
        r.text_content()
            .contains("has `output: json`, but its stdout is not a JSON result"),
        "{}",
        r.text_content()
    );
    // A result larger than the bound (here 1 MiB) is refused, not read whole.
    let (small, _cache2) = executor(|c| c.max_line_bytes(1 << 20));
    let r = call(&small, &tool, json!({"mode": "flood"})).await;
    assert_eq!(r.stop, toolbind::StopReason::ProtocolError, "{r:?}");
    assert!(
        r.text_content()
            .contains("is longer than the 1 MiB limit for a result"),
        "{}",
        r.text_content()
    );
}
