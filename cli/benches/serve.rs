//! `toolbind serve` against a peer MCP server on the official TypeScript SDK, over stdio,
//! with the same client (rmcp's), the same JavaScript tool and the same calls.
//!
//! `cargo bench -p toolbind-cli --bench serve [-- --quick]`; with
//! `TOOLBIND_BASELINE=/path/to/toolbind` set, another build of toolbind gets a row too,
//! and a table of this build's ratios to it, round by round. `TOOLBIND_BENCH_ROUNDS` and
//! `TOOLBIND_BENCH_CALLS` change the rounds (3) and the calls per case (10,000).
//!
//! The peer (`benches/serve/ts_server.mjs`, on `@modelcontextprotocol/sdk` from
//! `tests/clients/install.sh`) imports `benches/serve/tools/echo_js/index.mjs` and calls
//! it in its own process; toolbind serves the same folder (its warm node worker, in the
//! sandbox as by default, and once more with `--sandbox off`). Each round starts every
//! server afresh, warms it up, then times N calls with 1 and with 8 calls in flight;
//! servers take turns within a round so load on the machine hits them alike. The report
//! is the median over rounds of calls/s, p50 and p99, the ratios to the peer, and the CPU
//! time a call cost the server (its whole process tree) and the client.

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
    /// Another build of toolbind (`TOOLBIND_BASELINE`), for a before/after in one run.
    Baseline,
    Peer,
}

/// `TOOLBIND_BASELINE=/path/to/toolbind`: a row for another build of toolbind (sandbox
/// auto), e.g. the last release or the commit before a change.
const BASELINE: &str = "TOOLBIND_BASELINE";

impl Which {
    fn label(self) -> &'static str {
        match self {
            Which::Toolbind => "toolbind serve (sandbox auto, the default)",
            Which::ToolbindUnjailed => "toolbind serve --sandbox off",
            Which::Baseline => "baseline build ($TOOLBIND_BASELINE, sandbox auto)",
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
            Which::Toolbind | Which::ToolbindUnjailed | Which::Baseline => {
                cmd = tokio::process::Command::new(match self {
                    Which::Baseline => std::env::var_os(BASELINE).expect("$TOOLBIND_BASELINE"),
                    _ => env!("CARGO_BIN_EXE_toolbind").into(),
                });
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

/// calls/s, p50, p99 of one measurement, and the CPU time a call cost the server (its
/// whole process tree: toolbind's workers and jails included) and the client.
#[derive(Clone, Copy)]
struct Figures {
    rate: f64,
    p50: Duration,
    p99: Duration,
    server_cpu: Duration,
    client_cpu: Duration,
}

/// CPU time of every thread of `pid` so far, from `/proc/<pid>/task/*/schedstat`
/// (nanoseconds; the tick-based `stat` figures are too coarse for a run of a second).
fn threads_cpu(pid: &str) -> Duration {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Duration::ZERO;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map(Duration::from_nanos)
        .sum()
}

/// CPU time of `root` and every process below it.
fn tree_cpu(root: u32) -> Duration {
    let mut parent = std::collections::HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(pid) = name.parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...; comm may hold spaces and parentheses.
        let Some(ppid) = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
        else {
            continue;
        };
        parent.insert(pid, ppid);
    }
    let below = |mut pid: u32| {
        while pid > 1 {
            if pid == root {
                return true;
            }
            pid = parent.get(&pid).copied().unwrap_or(0);
        }
        false
    };
    parent
        .keys()
        .filter(|p| below(**p))
        .map(|p| threads_cpu(&p.to_string()))
        .sum()
}

fn args(i: usize) -> JsonObject {
    match json!({"text": format!("call {i}")}) {
        serde_json::Value::Object(m) => m,
        _ => unreachable!(),
    }
}

async fn measure(
    client: &RunningService<RoleClient, ()>,
    server: u32,
    calls: usize,
    in_flight: usize,
) -> Figures {
    let next = Arc::new(AtomicUsize::new(0));
    let (server_before, client_before) = (tree_cpu(server), threads_cpu("self"));
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
    let server_cpu = tree_cpu(server).saturating_sub(server_before) / calls as u32;
    let client_cpu = threads_cpu("self").saturating_sub(client_before) / calls as u32;
    all.sort();
    let pick = |q: f64| all[((all.len() as f64 * q) as usize).min(all.len() - 1)];
    Figures {
        rate: calls as f64 / wall.as_secs_f64(),
        p50: pick(0.50),
        p99: pick(0.99),
        server_cpu,
        client_cpu,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (rounds, calls, warmup) = if quick {
        (1, 300, 50)
    } else {
        (3, 10_000, 1000)
    };
    // More, shorter rounds tell two builds apart on a noisy machine: the ratio to the
    // baseline is taken within each round, where both saw the same load.
    let number = |var: &str, default: usize| {
        std::env::var(var).map_or(default, |v| v.parse().expect("a number of rounds or calls"))
    };
    let (rounds, calls) = (
        number("TOOLBIND_BENCH_ROUNDS", rounds),
        number("TOOLBIND_BENCH_CALLS", calls),
    );
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/serve");
    let clients = clients_dir();
    let mut servers = vec![Which::Toolbind, Which::ToolbindUnjailed];
    if std::env::var_os(BASELINE).is_some() {
        servers.push(Which::Baseline);
    }
    // The peer comes last: the ratios are to it.
    servers.push(Which::Peer);
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
                let pid = transport.id().expect("the server's pid");
                let client = ().serve(transport).await.expect("initialize");
                let tools = client.peer().list_all_tools().await.expect("tools/list");
                assert!(tools.iter().any(|t| t.name == "echo_js"), "{tools:?}");
                measure(&client, pid, warmup, 8).await;
                for (k, n) in IN_FLIGHT.iter().enumerate() {
                    let f = measure(&client, pid, calls, *n).await;
                    eprintln!(
                        "round {round} {:<45} {n} in flight: {:>7.0} calls/s, p50 {:>6.3} ms, p99 {:>6.3} ms, CPU/call server {:>5.1} µs client {:>5.1} µs",
                        which.label(),
                        f.rate,
                        f.p50.as_secs_f64() * 1e3,
                        f.p99.as_secs_f64() * 1e3,
                        f.server_cpu.as_secs_f64() * 1e6,
                        f.client_cpu.as_secs_f64() * 1e6,
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
    println!(
        "| server | in flight | calls/s | p50 | p99 | calls/s vs peer | p99 vs peer | server CPU/call | client CPU/call |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
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
            let server_cpu = get(s, |f| f.server_cpu.as_secs_f64() * 1e6);
            let client_cpu = get(s, |f| f.client_cpu.as_secs_f64() * 1e6);
            println!(
                "| {} | {n} | {rate:.0} | {p50:.3} ms | {p99:.3} ms | {:.2}x | {:.2}x | {server_cpu:.1} µs | {client_cpu:.1} µs |",
                which.label(),
                rate / peer_rate,
                p99 / peer_p99
            );
        }
    }
    if let Some(base) = servers.iter().position(|w| matches!(w, Which::Baseline)) {
        println!(
            "\nThis build against the baseline, the median of the rounds' ratios (each round's servers ran in turn):\n"
        );
        println!("| in flight | calls/s | calls/s, lowest and highest round | server CPU/call |");
        println!("|---:|---:|---:|---:|");
        for (k, n) in IN_FLIGHT.iter().enumerate() {
            let ratios = |f: fn(&Figures) -> f64| -> Vec<f64> {
                let mut r: Vec<f64> = results[0][k]
                    .iter()
                    .zip(&results[base][k])
                    .map(|(ours, theirs)| f(ours) / f(theirs))
                    .collect();
                r.sort_by(|a, b| a.partial_cmp(b).unwrap());
                r
            };
            let rate = ratios(|f| f.rate);
            let cpu = ratios(|f| f.server_cpu.as_secs_f64());
            println!(
                "| {n} | {:.2}x | {:.2}x-{:.2}x | {:.2}x |",
                median(rate.clone()),
                rate[0],
                rate[rate.len() - 1],
                median(cpu)
            );
        }
    }
}
