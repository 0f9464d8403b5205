//! The runtime's memory while a tool returns a base64 blob far larger than the bound for
//! binary data: the block is decoded into the spill folder piece by piece, so the
//! runtime's peak resident set grows by a few pieces, not by the blob. The test runs alone
//! in a child process of the test binary (`exec_common::alone`), so no other test's
//! allocations blur the measurement of its peak.
//!
//! `BLOB_MB=200 cargo test -p toolbind --test it exec_blob_memory:: -- --nocapture` gives the
//! BENCHMARKS.md row; `BLOB_BASELINE=1` also measures the same blob held in memory (the
//! bound raised past it), as the runtime did before the bound existed.

use crate::exec_common;

use exec_common::*;
use serde_json::json;
use toolbind::Content;
use toolbind_codegen::model::Language;

/// This process's peak resident set (VmHWM), in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Resets VmHWM to the current resident set (Linux: `5` into clear_refs); false where
/// that is not allowed, and then a measurement counts from the process's start.
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

#[tokio::test]
async fn a_blob_far_over_the_bound_does_not_grow_the_runtime() {
    if alone("exec_blob_memory::a_blob_far_over_the_bound_does_not_grow_the_runtime") {
        return;
    }
    let mb: usize = std::env::var("BLOB_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let spill = tempfile::tempdir().unwrap();
    let dir = spill.path().join("spill");
    let (exec, _cache) = executor(|c| c.spill_dir(&dir));
    let js = spec("blob_js", Language::TypeScript, "index.mjs");
    // Warm up: start the worker and let the runtime allocate what it always needs.
    let r = call(&exec, &js, json!({"kind": "image", "bytes": 3 << 20})).await;
    assert!(!r.is_error, "{r:?}");
    drop(r);
    reset_peak();
    let before = peak_rss_kib();
    let n = mb << 20;
    let r = call(&exec, &js, json!({"kind": "image", "bytes": n})).await;
    let grown = peak_rss_kib().saturating_sub(before);
    let Content::ResourceLink(link) = &r.content[1] else {
        panic!("{:?}", r.content[1])
    };
    assert_eq!(link.size, Some(n as u64));
    let on_disk = std::fs::metadata(dir.join(&link.name)).unwrap().len();
    assert_eq!(on_disk, n as u64);
    println!(
        "spilled: a {mb} MiB blob ({} MiB of base64) grew the runtime's peak RSS by {} KiB",
        (n.div_ceil(3) * 4) >> 20,
        grown
    );
    // A bound on memory, not on time: the blob is never held, so growth stays far below
    // the 64 MB target whatever its size (a few 1 MiB pieces, the reader's buffers).
    assert!(
        grown < 64 << 10,
        "the runtime grew by {grown} KiB for a {mb} MiB blob"
    );

    if std::env::var_os("BLOB_BASELINE").is_some() {
        let (exec, _cache) = executor(|c| c.max_binary_bytes(usize::MAX));
        let r = call(&exec, &js, json!({"kind": "image", "bytes": 3 << 20})).await;
        drop(r);
        reset_peak();
        let before = peak_rss_kib();
        let r = call(&exec, &js, json!({"kind": "image", "bytes": n})).await;
        let grown = peak_rss_kib().saturating_sub(before);
        assert!(matches!(r.content[1], Content::Image { .. }));
        println!("in memory: the same blob grew the runtime's peak RSS by {grown} KiB");
    }
}
