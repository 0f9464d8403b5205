//! A Rust agent calling a fleet of `toolbind serve --http --stateless` replicas through
//! toolbind's MCP executor: the client side of bench/scale-out.sh's runs 5 and 6.
//!
//! `cargo bench -p toolbind-cli --bench fleet -- URL CLIENTS CALLS`
//!
//! One `Runtime` with one `McpServer::http(URL)` (the bearer token from `TOOLBIND_TOKEN`),
//! CLIENTS concurrent loops of CALLS calls each of `hello_ts` (read-only: the executor
//! sends it once more on a new connection when its connection fails). No retry of its own:
//! what the executor does not recover is a failed call. Prints one JSON line like
//! cli/tests/clients/http_client.py's: `{"ok", "failed", "seconds", "calls_per_s",
//! "p50_ms", "p99_ms", "errors"}`; exits 1 when a call failed.

use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use toolbind::mcp::McpServer;
use toolbind::{CallOptions, Runtime};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let [url, clients, calls] = &args[..] else {
        eprintln!("usage: fleet URL CLIENTS CALLS");
        std::process::exit(2);
    };
    let clients: usize = clients.parse().expect("CLIENTS is a number");
    let calls: usize = calls.parse().expect("CALLS is a number");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let failed = rt.block_on(run(url, clients, calls));
    std::process::exit(i32::from(failed));
}

async fn run(url: &str, clients: usize, calls: usize) -> bool {
    let mut server = McpServer::http("fleet", url);
    if std::env::var_os("TOOLBIND_TOKEN").is_some() {
        server = server.bearer_env("TOOLBIND_TOKEN");
    }
    let runtime = match Runtime::builder().mcp_server(server).connect().await {
        Ok(r) => Arc::new(r),
        Err(e) => {
            println!(
                "{}",
                json!({"ok": 0, "failed": clients * calls, "errors": [e.to_string()]})
            );
            return true;
        }
    };
    let start = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..clients {
        let runtime = runtime.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(calls);
            let mut errors = Vec::new();
            for j in 0..calls {
                let name = format!("c{i}-{j}");
                let t = Instant::now();
                let r = runtime
                    .call(
                        "hello_ts",
                        json!({"name": name, "steps": 0}),
                        CallOptions::new(),
                    )
                    .await;
                latencies.push(t.elapsed().as_secs_f64());
                let text = r.text_content();
                if r.is_error || text != format!("Hello, {name}! (typescript)") {
                    errors.push(text);
                }
            }
            (latencies, errors)
        }));
    }
    let mut latencies = Vec::new();
    let mut errors = Vec::new();
    for t in tasks {
        let (l, e) = t.await.expect("a client task");
        latencies.extend(l);
        errors.extend(e);
    }
    let seconds = start.elapsed().as_secs_f64();
    latencies.sort_by(f64::total_cmp);
    let pct = |q: f64| {
        let i = ((q * latencies.len() as f64) as usize).min(latencies.len().saturating_sub(1));
        (latencies.get(i).copied().unwrap_or(0.0) * 100_000.0).round() / 100.0
    };
    let total = clients * calls;
    let failed = errors.len();
    errors.truncate(5);
    println!(
        "{}",
        json!({
            "ok": total - failed,
            "failed": failed,
            "seconds": (seconds * 100.0).round() / 100.0,
            "calls_per_s": (total as f64 / seconds * 10.0).round() / 10.0,
            "p50_ms": pct(0.50),
            "p99_ms": pct(0.99),
            "errors": errors,
        })
    );
    failed > 0
}
