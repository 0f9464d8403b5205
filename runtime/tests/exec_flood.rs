//! A tool printing hundreds of megabytes leaves the runtime's memory bounded and returns a
//! truncated result. The test runs alone in a child process of the test binary
//! (`exec_common::alone`), so no other test's allocations blur the measurement of its
//! peak RSS.

use crate::exec_common;

use exec_common::*;
use serde_json::json;
use toolbind_codegen::model::Language;

/// This process's peak resident set (VmHWM), in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test]
async fn flooding_output_keeps_memory_bounded() {
    if alone("exec_flood::flooding_output_keeps_memory_bounded") {
        return;
    }
    let (exec, _cache) = executor(|c| c.max_text_bytes(1 << 20));
    let js = spec("js_tool", Language::TypeScript, "index.mjs");
    let sh = spec("sh_tool", Language::Bash, "index.sh");
    // Warm up: start the worker and let the runtime allocate what it always needs.
    let r = call(&exec, &js, json!({"mode": "counter"})).await;
    assert!(!r.is_error, "{r:?}");
    let before = peak_rss_kib();

    // 100 MiB to stdout and 100 MiB to stderr, then an 8 MiB result.
    let r = call(
        &exec,
        &js,
        json!({"mode": "flood", "mb": 100, "result_mb": 8}),
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    let text = r.text_content();
    assert!(
        text.len() < (1 << 20) + 1024,
        "result not capped: {} bytes",
        text.len()
    );
    assert!(text.starts_with("yyyy"));
    assert!(
        text.contains("7340032 more characters were cut"),
        "no truncation note: {}",
        &text[text.len() - 200..]
    );

    // bash: 100 MB of stdout (the result) and 100 MB of stderr.
    let r = call(&exec, &sh, json!({"mode": "flood"})).await;
    assert!(!r.is_error, "{r:?}");
    let text = r.text_content();
    assert!(
        text.len() < (1 << 20) + 1024,
        "result not capped: {} bytes",
        text.len()
    );
    assert!(
        text.contains("kept the first 1048576 of 100000000 bytes"),
        "{}",
        &text[text.len() - 200..]
    );

    let grown_mib = (peak_rss_kib().saturating_sub(before)) / 1024;
    eprintln!("peak RSS growth: {grown_mib} MiB");
    assert!(
        grown_mib < 48,
        "peak RSS grew by {grown_mib} MiB while tools printed 400 MB"
    );
}
