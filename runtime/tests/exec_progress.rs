//! Progress is bounded: a tool reporting far faster than anyone reads grows neither its
//! harness nor the runtime; updates are coalesced and rate-limited, the latest arrives
//! before the result, and an over-long bash progress line is an error naming the limit.
//! The flood runs alone in a child process of the test binary (`exec_common::alone`), so
//! the peak-RSS measurement is this flood's.

use crate::exec_common;

use std::sync::Arc;
use std::time::Duration;

use exec_common::*;
use serde_json::json;
use toolbind::Progress;
use toolbind::exec::ProgressSink;
use toolbind_codegen::model::Language;

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// MiB of progress to flood; `FLOOD_MB=1024` for the BENCHMARKS.md figure.
fn flood_mb() -> u64 {
    std::env::var("FLOOD_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

#[tokio::test]
async fn a_progress_flood_grows_neither_the_harness_nor_the_runtime() {
    if alone("exec_progress::a_progress_flood_grows_neither_the_harness_nor_the_runtime") {
        return;
    }
    let (exec, _cache) = executor(|c| c);
    let js = spec("js_tool", Language::TypeScript, "index.mjs");
    call(&exec, &js, json!({"mode": "counter"})).await;
    let before = peak_rss_kib();
    // A slow consumer: it holds the call loop for 20 ms per update it is given.
    let last = Arc::new(std::sync::Mutex::new((0usize, String::new())));
    let l = last.clone();
    let sink: ProgressSink = Arc::new(move |p: Progress| {
        std::thread::sleep(Duration::from_millis(20));
        let text = p.content[0].as_text().unwrap_or_default();
        let mut l = l.lock().unwrap();
        l.0 += 1;
        l.1 = text.chars().take(40).collect();
    });
    let r = run(
        &exec,
        &js,
        json!({"mode": "progress_flood", "mb": flood_mb()}),
        Default::default(),
        Some(sink),
        None,
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    let harness_mib = json(&r.text_content())["grown_kib"].as_u64().unwrap() / 1024;
    let runtime_mib = peak_rss_kib().saturating_sub(before) / 1024;
    let (delivered, latest) = last.lock().unwrap().clone();
    eprintln!(
        "{} MiB of progress: harness grew {harness_mib} MiB, runtime {runtime_mib} MiB, {delivered} updates delivered",
        flood_mb()
    );
    assert!(harness_mib < 64, "the harness grew by {harness_mib} MiB");
    assert!(runtime_mib < 64, "the runtime grew by {runtime_mib} MiB");
    assert_eq!(
        latest, "last update",
        "the latest update arrives before the result"
    );
    assert!(delivered < 4096, "updates were not coalesced: {delivered}");
}

#[tokio::test]
async fn updates_are_coalesced_in_order_and_the_latest_arrives() {
    let (exec, _cache) = executor(|c| c);
    for tool in [
        spec("js_tool", Language::TypeScript, "index.mjs"),
        spec("py_sync", Language::Python, "index.py"),
    ] {
        let (sink, seen) = recorder();
        let r = run(
            &exec,
            &tool,
            json!({"mode": "progress", "n": 2000}),
            Default::default(),
            Some(sink),
            None,
        )
        .await;
        assert_eq!(r.text_content(), "done");
        let seen = seen.lock().unwrap().clone();
        let steps: Vec<usize> = seen
            .iter()
            .map(|s| s.strip_prefix("step ").unwrap().parse().unwrap())
            .collect();
        assert!(
            steps.windows(2).all(|w| w[0] < w[1]),
            "{}: {steps:?}",
            tool.name()
        );
        assert_eq!(steps.last(), Some(&1999), "{}", tool.name());
        assert!(steps.len() < 2000, "{}: nothing was coalesced", tool.name());
    }
}

#[tokio::test]
async fn an_over_long_bash_progress_line_is_an_error_naming_the_limit() {
    let (exec, _cache) = executor(|c| c);
    let sh = spec("sh_tool", Language::Bash, "index.sh");
    let (sink, _seen) = recorder();
    let r = run(
        &exec,
        &sh,
        json!({"mode": "long_progress"}),
        Default::default(),
        Some(sink),
        None,
    )
    .await;
    assert!(r.is_error, "{r:?}");
    let text = r.text_content();
    assert!(text.contains("longer than the 1 MiB limit"), "{text}");
    assert!(!text.contains("SIGPIPE"), "{text}");
}

#[tokio::test]
async fn a_bash_progress_line_can_never_become_the_result() {
    let (exec, _cache) = executor(|c| c.progress_interval(Duration::ZERO));
    let sh = spec("sh_tool", Language::Bash, "index.sh");
    let (sink, seen) = recorder();
    let r = run(
        &exec,
        &sh,
        json!({"mode": "forge"}),
        Default::default(),
        Some(sink),
        None,
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.text_content(), "real");
    // Progress lines are text, taken literally (coalesced: the latest always arrives).
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen.last().map(String::as_str),
        Some(r#"{"content":[{"type":"text","text":"forged"}]}"#),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .all(|s| s.starts_with(r#"{"type":"result""#) || s.starts_with(r#"{"content""#)),
        "{seen:?}"
    );
}
