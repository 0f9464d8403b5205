//! `toolbind serve` against a peer MCP server on the official TypeScript SDK, over stdio,
//! with the same client (rmcp's), the same JavaScript tool and the same calls.
//!
//! `cargo bench -p toolbind-cli --bench serve [-- --quick]`
//!
//! The peer (`benches/serve/ts_server.mjs`, on `@modelcontextprotocol/sdk` from
//! `tests/clients/install.sh`) imports `benches/serve/tools/echo_js/index.mjs` and calls
//! it in its own process; toolbind serves the same folder (its warm node worker, in the
//! sandbox as by default, and once more with `--sandbox off`). Each round starts every
//! server afresh, warms it up, then times N calls with 1 and with 8 calls in flight;
//! servers take turns within a round so load on the machine hits them alike. The report
//! is the median over rounds of calls/s, p50 and p99, and the ratios to the peer.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::json;

#[path = "../tests/common/mod.rs"]
mod common;

use common::clients_dir;

const IN_FLIGHT: [usize; 2] = [1, 8];

#[derive(Clone, Copy, PartialEq)]
enum Which {
    Toolbind,
    ToolbindUnjailed,
    Peer,
}

impl Which {
    fn label(self) -> &'static str {
        match self {
            Which::Toolbind => "toolbind serve (sandbox auto, the default)",
            Which::ToolbindUnjailed => "toolbind serve --sandbox off",
            Which::Peer => "TypeScript SDK server, tool in-process",
        }
    }

    fn command(self, here: &Path, clients: &Path) -> tokio::process::Command {
        let mut cmd;
        match self {
            Which::Peer => {
                cmd = tokio::process::Command::new("node");
                cmd.arg(here.join("ts_server.mjs")).arg(clients);
            }
            Which::Toolbind | Which::ToolbindUnjailed => {
                cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolbind"));
                cmd.arg("serve").arg("--dir").arg(here.join("tools"));
                if self == Which::ToolbindUnjailed {
                    cmd.args(["--sandbox", "off"]);
                }
                cmd.env_remove("PI_TOOLS_DIRS");
            }
        }
        cmd
    }
}

/// calls/s, p50, p99 of one measurement.
#[derive(Clone, Copy)]
struct Figures {
    rate: f64,
    p50: Duration,
    p99: Duration,
}

fn args(i: usize) -> JsonObject {
    match json!({"text": format!("call {i}")}) {
        serde_json::Value::Object(m) => m,
        _ => unreachable!(),
    }
}

async fn measure(
    client: &RunningService<RoleClient, ()>,
    calls: usize,
    in_flight: usize,
) -> Figures {
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..in_flight {
        let peer = client.peer().clone();
        let next = next.clone();
        tasks.push(tokio::spawn(async move {
            let mut took = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= calls {
                    return took;
                }
                let t = Instant::now();
                let r = peer
                    .call_tool(CallToolRequestParams::new("echo_js").with_arguments(args(i)))
                    .await
                    .expect("call");
                took.push(t.elapsed());
                let text = r.content[0]
                    .as_text()
                    .map(|t| t.text.as_str())
                    .unwrap_or("");
                assert!(
                    r.is_error != Some(true) && text == format!("echo: call {i}"),
                    "{r:?}"
                );
            }
        }));
    }
    let mut all = Vec::with_capacity(calls);
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let wall = start.elapsed();
    all.sort();
    let pick = |q: f64| all[((all.len() as f64 * q) as usize).min(all.len() - 1)];
    Figures {
        rate: calls as f64 / wall.as_secs_f64(),
        p50: pick(0.50),
        p99: pick(0.99),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (rounds, calls, warmup) = if quick { (1, 300, 50) } else { (3, 3000, 300) };
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/serve");
    let clients = clients_dir();
    let servers = [Which::Toolbind, Which::ToolbindUnjailed, Which::Peer];
    // results[server][in_flight index] = one Figures per round
    let mut results: Vec<Vec<Vec<Figures>>> =
        vec![vec![Vec::new(); IN_FLIGHT.len()]; servers.len()];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for round in 0..rounds {
            for (s, which) in servers.iter().enumerate() {
                let transport = TokioChildProcess::builder(which.command(&here, &clients))
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .expect("start the server")
                    .0;
                let client = ().serve(transport).await.expect("initialize");
                let tools = client.peer().list_all_tools().await.expect("tools/list");
                assert!(tools.iter().any(|t| t.name == "echo_js"), "{tools:?}");
                measure(&client, warmup, 8).await;
                for (k, n) in IN_FLIGHT.iter().enumerate() {
                    let f = measure(&client, calls, *n).await;
                    eprintln!(
                        "round {round} {:<45} {n} in flight: {:>7.0} calls/s, p50 {:>6.3} ms, p99 {:>6.3} ms",
                        which.label(),
                        f.rate,
                        f.p50.as_secs_f64() * 1e3,
                        f.p99.as_secs_f64() * 1e3
                    );
                    results[s][k].push(f);
                }
                let _ = client.cancel().await;
            }
        }
    });
    println!(
        "\n{rounds} round(s) x {calls} calls per case (median over rounds), {warmup} warm-up calls per server\n"
    );
    println!("| server | in flight | calls/s | p50 | p99 | calls/s vs peer | p99 vs peer |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let peer = servers.len() - 1;
    for (s, which) in servers.iter().enumerate() {
        for (k, n) in IN_FLIGHT.iter().enumerate() {
            let get =
                |s: usize, f: fn(&Figures) -> f64| median(results[s][k].iter().map(f).collect());
            let rate = get(s, |f| f.rate);
            let p50 = get(s, |f| f.p50.as_secs_f64() * 1e3);
            let p99 = get(s, |f| f.p99.as_secs_f64() * 1e3);
            let peer_rate = get(peer, |f| f.rate);
            let peer_p99 = get(peer, |f| f.p99.as_secs_f64() * 1e3);
            println!(
                "| {} | {n} | {rate:.0} | {p50:.3} ms | {p99:.3} ms | {:.2}x | {:.2}x |",
                which.label(),
                rate / peer_rate,
                p99 / peer_p99
            );
        }
    }
}
