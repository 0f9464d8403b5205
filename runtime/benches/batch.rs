//! Batches and the provider layer, on a warm Node tool.
//!
//! 1. A batch of 8 parallel calls to a tool that sleeps 100 ms, with the default
//!    concurrency limit: wall time (target < 130 ms).
//! 2. The provider layer's cost per call against `Runtime::call` directly, same run,
//!    interleaved: a Chat Completions response holding one call -> `tool_calls` ->
//!    `call_batch` -> `results`, against `Runtime::call` with the same arguments (a tool
//!    that returns at once, so the layer's cost is not lost in the sleep). Plus the layer
//!    alone (parse 8 calls + build 8 result messages, nothing run) in µs.
//!
//! `cargo bench -p toolbind --bench batch` (add `-- --quick` for fewer iterations).

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolbind::batch::{Answered, Batch, BatchOptions};
use toolbind::exec::{ExecConfig, SubprocessExecutor};
use toolbind::provider::Provider;
use toolbind::{CallOptions, Loader, Runtime, ToolResult};

const TOOL_MD: &str = "---\nname: nap\ndescription: Sleeps.\nlanguage: typescript\ninputs:\n  ms:\n    type: number\n    description: How long.\n---\n# Nap\n";
const TOOL_TS: &str = "export async function execute(toolCallId: string, params: { ms: number }) {\n  await new Promise((r) => setTimeout(r, params.ms));\n  return { content: [{ type: 'text', text: `slept ${params.ms}` }] };\n}\n";

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn chat_response(n: usize, ms: u64) -> Value {
    let calls: Vec<Value> = (0..n)
        .map(|i| {
            json!({"id": format!("call_{i}"), "type": "function",
                   "function": {"name": "nap", "arguments": format!("{{\"ms\":{ms}}}")}})
        })
        .collect();
    json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": calls}}]})
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (batches, calls) = if quick { (5, 100) } else { (20, 1000) };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tools/nap");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("TOOL.md"), TOOL_MD).unwrap();
    std::fs::write(dir.join("index.ts"), TOOL_TS).unwrap();
    let loaded = Loader::new().dir(tmp.path().join("tools")).quiet().load();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let exec = SubprocessExecutor::new(ExecConfig::default().cache_dir(tmp.path().join("cache")));
    let rt = Runtime::builder()
        .registry(loaded.registry)
        .executor(std::sync::Arc::new(exec))
        .build();
    // Warm the worker (start, transpile, first import).
    let r = rt.call("nap", json!({"ms": 0}), CallOptions::new()).await;
    assert!(!r.is_error, "{r:?}");

    // 1. Eight parallel 100 ms calls.
    let p = Provider::OpenAiChat;
    let eight = chat_response(8, 100);
    let mut walls = Vec::new();
    for _ in 0..batches {
        let start = Instant::now();
        let b = rt
            .call_batch(p.tool_calls(&eight), BatchOptions::new())
            .await;
        walls.push(start.elapsed());
        assert!(b.results.iter().all(|a| !a.result.is_error), "{b:?}");
    }
    let wall = median(walls.clone());
    let worst = walls.iter().max().copied().unwrap_or_default();

    // 2. Provider round trip vs Runtime::call, interleaved.
    let one = chat_response(1, 0);
    let (mut direct, mut layered) = (Vec::new(), Vec::new());
    for _ in 0..calls {
        let start = Instant::now();
        let r = rt
            .call("nap", json!({"ms": 0}), CallOptions::new().id("call_0"))
            .await;
        direct.push(start.elapsed());
        assert!(!r.is_error);
        let start = Instant::now();
        let b = rt.call_batch(p.tool_calls(&one), BatchOptions::new()).await;
        let msgs = p.results(&b);
        layered.push(start.elapsed());
        assert_eq!(msgs.len(), 1);
    }
    let (d, l) = (median(direct), median(layered));

    // The layer alone: parse a response of 8 calls, build their 8 result messages.
    let layer_n = if quick { 2_000 } else { 20_000 };
    let start = Instant::now();
    for _ in 0..layer_n {
        let calls = p.tool_calls(&eight);
        let batch = Batch::new(
            calls
                .into_iter()
                .map(|call| Answered::new(call, ToolResult::text("slept 100")))
                .collect(),
        );
        std::hint::black_box(p.results(&batch));
    }
    let per_call_layer = start.elapsed() / (layer_n * 8);

    println!("| case | time |");
    println!("|---|---:|");
    println!(
        "| batch of 8 x 100 ms calls, concurrency {}: median of {batches} | {} |",
        BatchOptions::DEFAULT_CONCURRENCY,
        ms(wall)
    );
    println!("| same, slowest batch | {} |", ms(worst));
    println!(
        "| `Runtime::call`, warm node, median of {calls} | {} |",
        ms(d)
    );
    println!(
        "| Chat Completions round trip (parse, `call_batch`, results), median of {calls} | {} |",
        ms(l)
    );
    println!(
        "| provider layer overhead per call (difference of medians) | {:.1} µs |",
        (l.as_secs_f64() - d.as_secs_f64()) * 1e6
    );
    println!(
        "| provider layer alone per call (parse + result message, nothing run) | {:.2} µs |",
        per_call_layer.as_secs_f64() * 1e6
    );
}
