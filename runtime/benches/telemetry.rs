//! What exporting every call's span and metrics costs a warm call (feature `otel`).
//!
//! `cargo bench -p toolbind --features otel --bench telemetry` (`-- --quick` for one short
//! round). One binary, one runtime, the same warm node and python echo workers; each
//! round runs its calls three ways, the order rotating from round to round: with no
//! `tracing` subscriber (the same build, nothing exported), with
//! `toolbind::telemetry::layer()` exporting over OTLP/HTTP to a collector on loopback
//! that answers at once, and with the same layer pointed at a port where nothing listens
//! (a collector that is down). Prints a Markdown table of p50 and mean per call.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use toolbind::exec::{ExecConfig, SubprocessExecutor};
use toolbind::sandbox::SandboxPolicy;
use toolbind::{CallOptions, Registry, Runtime};
use toolbind_codegen::model::{Language, WorkerMode};
use tracing::Dispatch;
use tracing_subscriber::layer::SubscriberExt;

mod common;
use common::{NODE_TOOL, PY_TOOL, spec};

/// A collector that answers every request with an empty 200 at once.
fn collector() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut read = BufReader::new(stream.try_clone().unwrap());
                let mut stream = stream;
                loop {
                    let mut len = 0usize;
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if read.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let l = line.to_ascii_lowercase();
                        if let Some(v) = l.strip_prefix("content-length:") {
                            len = v.trim().parse().unwrap_or(0);
                        }
                        if line == "\r\n" {
                            break;
                        }
                    }
                    let mut body = vec![0; len];
                    if read.read_exact(&mut body).is_err() {
                        return;
                    }
                    let _ = stream.write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n",
                    );
                }
            });
        }
    });
    port
}

/// Answers every call at once, in-process.
struct Inline;

impl toolbind::exec::Executor for Inline {
    fn execute<'a>(&'a self, _: toolbind::exec::ExecCall<'a>) -> toolbind::exec::ExecFuture<'a> {
        Box::pin(std::future::ready(toolbind::ToolResult::text("{}")))
    }
}

/// A subscriber whose spans are built as `layer()`'s are, by a provider with no
/// processor: the spans and the trace context sent to the tools as with export, no export
/// thread.
fn built_only() -> Dispatch {
    Dispatch::new(tracing_subscriber::registry().with(toolbind::telemetry::unexported_layer()))
}

/// A subscriber exporting to `endpoint`, and the guard that keeps its export running.
fn exporting(endpoint: &str) -> (Dispatch, toolbind::telemetry::Guard) {
    // SAFETY: set before the runtime (or any other thread that reads the environment)
    // starts; `layer` reads it now.
    unsafe { std::env::set_var("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint) };
    let (guard, layer) = toolbind::telemetry::layer()
        .expect("export set up")
        .expect("not disabled");
    (
        Dispatch::new(tracing_subscriber::registry().with(layer)),
        guard,
    )
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (rounds, calls) = if quick { (1, 300) } else { (7, 2000) };
    let tmp = tempfile::tempdir().unwrap();
    let mut registry = Registry::new();
    for (language, entry, body) in [
        (Language::TypeScript, "index.mjs", NODE_TOOL),
        (Language::Python, "index.py", PY_TOOL),
    ] {
        let dir = tmp.path().join(language.to_string());
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(entry), body).unwrap();
        registry
            .insert(spec(&dir, language, entry, WorkerMode::Warm))
            .unwrap();
    }
    // Down: a port that was free a moment ago. Set up first, so that the global meter
    // provider (the last one set) is the answering collector's.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (down, down_guard) = exporting(&format!("http://127.0.0.1:{closed}"));
    let (export, export_guard) = exporting(&format!("http://127.0.0.1:{}", collector()));
    let modes = [
        ("no subscriber", Dispatch::none()),
        ("exporting (otel)", export),
        ("exporting, collector down", down),
        ("spans built, not exported", built_only()),
    ];

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let exec = SubprocessExecutor::new(
        ExecConfig::default()
            .sandbox(SandboxPolicy::off())
            .cache_dir(tmp.path().join("cache")),
    );
    let runtime = Runtime::builder()
        .registry(registry)
        .executor(Arc::new(exec))
        .build();
    // The same tools on an executor that answers in-process: what the runtime's own work
    // per call costs, telemetry included, without a tool process.
    let inproc = Runtime::builder()
        .registry(runtime.registry().clone())
        .executor(Arc::new(Inline))
        .build();
    let names = ["echo_typescript", "echo_python"];
    // Warm-up: both workers started, the code paths touched in every mode.
    for (_, d) in &modes {
        tracing::dispatcher::with_default(d, || {
            rt.block_on(async {
                for name in names {
                    for _ in 0..50 {
                        runtime.call(name, json!({}), CallOptions::new()).await;
                    }
                }
            })
        });
    }
    let mut times = vec![vec![Vec::<Duration>::new(); modes.len()]; names.len() + 1];
    for round in 0..rounds {
        for k in 0..modes.len() {
            let m = (k + round) % modes.len();
            tracing::dispatcher::with_default(&modes[m].1, || {
                rt.block_on(async {
                    for (t, name) in names.iter().enumerate() {
                        for _ in 0..calls {
                            let start = Instant::now();
                            let r = runtime.call(name, json!({}), CallOptions::new()).await;
                            times[t][m].push(start.elapsed());
                            assert!(!r.is_error, "{r:?}");
                        }
                    }
                    for _ in 0..calls {
                        let start = Instant::now();
                        let r = inproc.call(names[0], json!({}), CallOptions::new()).await;
                        times[names.len()][m].push(start.elapsed());
                        assert!(!r.is_error, "{r:?}");
                    }
                })
            });
        }
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "`toolbind {}, {rounds} rounds x {calls} calls per tool and mode, load {}`\n",
        env!("CARGO_PKG_VERSION"),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!("| tool | mode | p50 | mean | p50 vs no subscriber | mean vs no subscriber |");
    println!("|---|---|---:|---:|---:|---:|");
    let rows = names
        .iter()
        .map(|n| format!("{n} (warm)"))
        .chain(["in-process executor (no tool process)".to_owned()]);
    for (t, name) in rows.enumerate() {
        let stats = |v: &Vec<Duration>| {
            let mut v = v.clone();
            v.sort();
            let mean = v.iter().sum::<Duration>() / v.len() as u32;
            (v[v.len() / 2], mean)
        };
        let (base_p50, base_mean) = stats(&times[t][0]);
        for (m, (mode, _)) in modes.iter().enumerate() {
            let (p50, mean) = stats(&times[t][m]);
            println!(
                "| {name} | {mode} | {:.1} µs | {:.1} µs | {:.3}x | {:.3}x |",
                p50.as_secs_f64() * 1e6,
                mean.as_secs_f64() * 1e6,
                p50.as_secs_f64() / base_p50.as_secs_f64(),
                mean.as_secs_f64() / base_mean.as_secs_f64()
            );
        }
    }
    drop(rt);
    let start = Instant::now();
    drop(export_guard);
    let flushed = start.elapsed();
    let start = Instant::now();
    drop(down_guard);
    println!(
        "\nGuard drop (flush at exit): {:.0} ms with the collector up, {:.0} ms with it down (bound: {} s).",
        flushed.as_secs_f64() * 1e3,
        start.elapsed().as_secs_f64() * 1e3,
        toolbind::telemetry::FLUSH_LIMIT.as_secs()
    );
}
