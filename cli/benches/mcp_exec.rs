//! The MCP executor (`Runtime::builder().mcp_server(..).connect()`, then `Runtime::call`)
//! against the official TypeScript SDK client, both calling server-everything's `echo`
//! tool over stdio: the same server binary, the same calls, in the same run.
//!
//! `cargo bench -p toolbind-cli --bench mcp_exec [-- --quick] [-- --rounds=N --calls=N]
//! [-- --workers=N]`
//! (needs `tests/clients/install.sh`).
//!
//! The TypeScript side is `bench/ts-call-tool.mjs` (`@modelcontextprotocol/sdk`'s `Client`
//! and `StdioClientTransport`), driven from here step by step over its stdin so that the
//! CPU counters are read around each measurement. toolbind's executor runs the server in
//! its jail (`SandboxMode::Required`), and once more with `SandboxPolicy::off()`.
//!
//! Each round starts every server afresh (the clients take turns, their order rotating
//! from round to round so that load on the machine hits them alike), times start to first
//! call, warms up, then times N calls with 1 and with 8 calls in flight; then a few more
//! starts of each, for start to first call alone, and one bwrap probe (the trial jail a
//! tool's first start runs; a server's connect no longer does, only after a failed start). The report is the median over rounds.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::ChildStdout;
use toolbind::mcp::McpServer;
use toolbind::sandbox::{SandboxLimits, SandboxMode, SandboxPolicy};
use toolbind::{CallOptions, Runtime};

#[path = "../tests/common/mod.rs"]
mod common;

use common::clients_dir;

const IN_FLIGHT: [usize; 2] = [1, 8];

#[derive(Clone, Copy, PartialEq)]
enum Which {
    Jailed,
    Unjailed,
    /// The jail without its pids and memory cgroups: start to first call only, to show
    /// what joining them costs.
    JailedNoCgroups,
    Ts,
}

impl Which {
    fn label(self) -> &'static str {
        match self {
            Which::Jailed => "toolbind executor, jailed (Required)",
            Which::Unjailed => "toolbind executor, SandboxPolicy::off()",
            Which::JailedNoCgroups => "toolbind executor, jailed, no pids/memory cgroup",
            Which::Ts => "TypeScript SDK client",
        }
    }

    fn policy(self, state: &Path) -> SandboxPolicy {
        let limits = SandboxLimits::default().cpu(None);
        match self {
            Which::Unjailed => SandboxPolicy::off(),
            Which::JailedNoCgroups => SandboxPolicy::new()
                .mode(SandboxMode::Required)
                .limits(limits.processes(None).call_memory(None)),
            _ => SandboxPolicy::new()
                .mode(SandboxMode::Required)
                .limits(limits),
        }
        .state_dir(state)
    }
}

/// Where the two clients find what they run.
struct Setup {
    server: PathBuf,
    sdk: PathBuf,
    script: PathBuf,
    state: tempfile::TempDir,
}

/// calls/s, p50, p99 of one measurement, and the CPU time a call cost the server (its
/// whole process tree: bwrap included) and the client.
#[derive(Clone, Copy)]
struct Figures {
    rate: f64,
    p50: Duration,
    p99: Duration,
    server_cpu: Duration,
    client_cpu: Duration,
}

/// One start: from nothing to the first `echo` result, and its parts.
#[derive(Clone, Copy)]
struct Start {
    /// toolbind: `connect()` to the first result; TypeScript: `new StdioClientTransport`
    /// to the first result, in the script (node and the SDK already loaded).
    total: Duration,
    /// Start, `initialize` and `tools/list`.
    connect: Duration,
    /// The first `tools/call`.
    first_call: Duration,
    /// TypeScript only: from spawning `node` to the first result (node's start and the
    /// SDK's import included).
    from_spawn: Option<Duration>,
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

/// CPU time of every process below `root`, and of `root` itself when `with_root`.
fn tree_cpu(root: u32, with_root: bool) -> Duration {
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
        if pid == root {
            return with_root;
        }
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

fn pick(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() as f64 * q) as usize).min(sorted.len() - 1)]
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn check(r: &toolbind::ToolResult, i: usize) {
    assert!(
        !r.is_error && r.text_content() == format!("Echo: call {i}"),
        "call {i}: {:?}: {}",
        r.stop,
        r.text_content()
    );
}

fn echo(i: usize) -> Value {
    json!({"message": format!("call {i}")})
}

/// `calls` calls of `echo`, `in_flight` at once, through the runtime.
async fn measure_toolbind(runtime: &Arc<Runtime>, calls: usize, in_flight: usize) -> Figures {
    let me = std::process::id();
    let next = Arc::new(AtomicUsize::new(0));
    let (server_before, client_before) = (tree_cpu(me, false), threads_cpu("self"));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..in_flight {
        let runtime = runtime.clone();
        let next = next.clone();
        tasks.push(tokio::spawn(async move {
            let mut took = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= calls {
                    return took;
                }
                let t = Instant::now();
                let r = runtime.call("echo", echo(i), CallOptions::new()).await;
                took.push(t.elapsed());
                check(&r, i);
            }
        }));
    }
    let mut all = Vec::with_capacity(calls);
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let wall = start.elapsed();
    let client_cpu = threads_cpu("self").saturating_sub(client_before) / calls as u32;
    let server_cpu = tree_cpu(me, false).saturating_sub(server_before) / calls as u32;
    all.sort();
    Figures {
        rate: calls as f64 / wall.as_secs_f64(),
        p50: pick(&all, 0.50),
        p99: pick(&all, 0.99),
        server_cpu,
        client_cpu,
    }
}

/// One toolbind session: connect, first call; then (when `calls > 0`) warm-up and one
/// measurement per `IN_FLIGHT`. The runtime, and with it the server, is dropped at the end.
async fn toolbind(
    which: Which,
    setup: &Setup,
    warmup: usize,
    calls: usize,
) -> (Start, Vec<Figures>) {
    let t0 = Instant::now();
    let server = McpServer::stdio("everything", setup.server.display().to_string(), ["stdio"])
        .sandbox(which.policy(setup.state.path()));
    let runtime = Runtime::builder()
        .mcp_server(server)
        .connect()
        .await
        .unwrap_or_else(|e| panic!("{}: connect: {e}", which.label()));
    let t1 = Instant::now();
    let r = runtime.call("echo", echo(0), CallOptions::new()).await;
    check(&r, 0);
    let start = Start {
        total: t0.elapsed(),
        connect: t1 - t0,
        first_call: t1.elapsed(),
        from_spawn: None,
    };
    let mut figures = Vec::new();
    if calls > 0 {
        let runtime = Arc::new(runtime);
        measure_toolbind(&runtime, warmup, *IN_FLIGHT.iter().max().unwrap()).await;
        for n in IN_FLIGHT {
            figures.push(measure_toolbind(&runtime, calls, n).await);
        }
    }
    (start, figures)
}

fn ms_field(v: &Value, key: &str) -> Duration {
    Duration::from_secs_f64(
        v[key]
            .as_f64()
            .unwrap_or_else(|| panic!("no `{key}` in {v}"))
            / 1e3,
    )
}

/// The script's next line, as JSON.
async fn next_json(lines: &mut Lines<BufReader<ChildStdout>>) -> Value {
    let line = lines
        .next_line()
        .await
        .expect("read the script's stdout")
        .expect("bench/ts-call-tool.mjs ended early (its stderr is above)");
    serde_json::from_str(&line).expect("a JSON line")
}

/// One TypeScript session: `bench/ts-call-tool.mjs`, stepped over its stdin.
async fn typescript(setup: &Setup, warmup: usize, calls: usize) -> (Start, Vec<Figures>) {
    let in_flight: Vec<String> = IN_FLIGHT.iter().map(|n| n.to_string()).collect();
    let t0 = Instant::now();
    let mut child = tokio::process::Command::new("node")
        .arg(&setup.script)
        .arg("--step")
        .arg(&setup.sdk)
        .arg(warmup.to_string())
        .arg(calls.to_string())
        .arg(in_flight.join(","))
        .arg(&setup.server)
        .arg("stdio")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("start node");
    let node = child.id().expect("node's pid");
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = next_json(&mut lines).await;
    let from_spawn = t0.elapsed();
    assert_eq!(first["event"], "first", "{first}");
    let connect = ms_field(&first, "connect_ms") + ms_field(&first, "list_ms");
    let total = ms_field(&first, "start_to_first_ms");
    let start = Start {
        total,
        connect,
        first_call: total.saturating_sub(connect),
        from_spawn: Some(from_spawn),
    };
    let server = first["server_pid"].as_u64().expect("server_pid") as u32;
    let mut figures = Vec::new();
    if calls > 0 {
        stdin.write_all(b"warm up\n").await.unwrap();
        for n in IN_FLIGHT {
            let (server_before, client_before) =
                (tree_cpu(server, true), threads_cpu(&node.to_string()));
            stdin.write_all(b"go\n").await.unwrap();
            let m = next_json(&mut lines).await;
            let client_cpu = threads_cpu(&node.to_string()).saturating_sub(client_before);
            let server_cpu = tree_cpu(server, true).saturating_sub(server_before);
            assert_eq!(m["event"], "measured", "{m}");
            assert_eq!(m["in_flight"].as_u64(), Some(n as u64), "{m}");
            let mut all: Vec<Duration> = m["latencies_ms"]
                .as_array()
                .expect("latencies_ms")
                .iter()
                .map(|v| Duration::from_secs_f64(v.as_f64().unwrap() / 1e3))
                .collect();
            assert_eq!(all.len(), calls);
            all.sort();
            figures.push(Figures {
                rate: calls as f64 / ms_field(&m, "wall_ms").as_secs_f64(),
                p50: pick(&all, 0.50),
                p99: pick(&all, 0.99),
                server_cpu: server_cpu / calls as u32,
                client_cpu: client_cpu / calls as u32,
            });
        }
    }
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("node ends after its last measurement")
        .unwrap();
    assert!(status.success(), "bench/ts-call-tool.mjs: {status}");
    (start, figures)
}

async fn session(
    which: Which,
    setup: &Setup,
    warmup: usize,
    calls: usize,
) -> (Start, Vec<Figures>) {
    match which {
        Which::Ts => typescript(setup, warmup, calls).await,
        _ => toolbind(which, setup, warmup, calls).await,
    }
}

/// The trial jail a tool's first jailed start runs, and a server's only after its jailed
/// start failed (before, every connect ran it): the bwrap probe of the interpreter
/// (`bwrap ... -- node -e 0`), timed here through a fresh executor's `sandbox_status`;
/// and, for reference, `node -e 0` unjailed, in the same cleared environment.
fn probe_times(state: &Path) -> (Duration, Duration) {
    let exec = toolbind::exec::SubprocessExecutor::new(
        toolbind::exec::ExecConfig::default().sandbox(Which::Jailed.policy(state)),
    );
    let t = Instant::now();
    let status = exec.sandbox_status(&[toolbind::tool::Language::TypeScript]);
    let probe = t.elapsed();
    assert!(status.jailed, "{}", status.reason);
    let t = Instant::now();
    let ok = std::process::Command::new("node")
        .args(["-e", "0"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .status()
        .expect("node -e 0")
        .success();
    assert!(ok);
    (probe, t.elapsed())
}

fn node_version() -> String {
    std::process::Command::new("node")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|_| "?".into())
}

fn sdk_version(sdk: &Path) -> String {
    std::fs::read_to_string(sdk.join("package.json"))
        .ok()
        .and_then(|s| serde_json::from_str::<Value>(&s).ok())
        .and_then(|v| v["version"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

fn arg(name: &str) -> Option<usize> {
    std::env::args().find_map(|a| a.strip_prefix(&format!("--{name}="))?.parse().ok())
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (rounds, calls, warmup, starts) = if quick {
        (1, 300, 50, 1)
    } else {
        (7, 5000, 200, 3)
    };
    let rounds = arg("rounds").unwrap_or(rounds).max(1);
    let calls = arg("calls").unwrap_or(calls).max(1);
    let clients = clients_dir();
    let setup = Setup {
        server: clients.join("servers/node_modules/.bin/mcp-server-everything"),
        sdk: clients.join("node/node_modules/@modelcontextprotocol/sdk"),
        script: Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/ts-call-tool.mjs"),
        state: tempfile::tempdir().unwrap(),
    };
    assert!(
        setup.server.exists() && setup.sdk.is_dir(),
        "server-everything or the TypeScript SDK is missing under {}: run tests/clients/install.sh",
        clients.display()
    );
    let load_before = load();
    // The TypeScript client comes last: the ratios are to it.
    let clients = [Which::Jailed, Which::Unjailed, Which::Ts];
    let start_kinds = [
        Which::Jailed,
        Which::Unjailed,
        Which::JailedNoCgroups,
        Which::Ts,
    ];
    // results[client][in-flight index]: one Figures per round.
    let mut results: Vec<Vec<Vec<Figures>>> =
        vec![vec![Vec::new(); IN_FLIGHT.len()]; clients.len()];
    // begun[start kind]: every start measured.
    let mut begun: Vec<Vec<Start>> = vec![Vec::new(); start_kinds.len()];
    let mut probes = Vec::new();
    let mut bare_node = Vec::new();
    // `--workers=N`: the tokio worker threads the executor runs on (default: one per core).
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = arg("workers") {
        rt.worker_threads(n.max(1));
    }
    let rt = rt.enable_all().build().unwrap();
    rt.block_on(async {
        for round in 0..rounds {
            for i in 0..clients.len() {
                let c = (i + round) % clients.len();
                let which = clients[c];
                let (start, figures) = session(which, &setup, warmup, calls).await;
                let s = start_kinds.iter().position(|k| *k == which).unwrap();
                begun[s].push(start);
                for (k, f) in figures.into_iter().enumerate() {
                    eprintln!(
                        "round {round} {:<42} {} in flight: {:>6.0} calls/s, p50 {:>6.3} ms, p99 {:>6.3} ms, CPU/call server {:>6.1} µs client {:>6.1} µs",
                        which.label(),
                        IN_FLIGHT[k],
                        f.rate,
                        ms(f.p50),
                        ms(f.p99),
                        f.server_cpu.as_secs_f64() * 1e6,
                        f.client_cpu.as_secs_f64() * 1e6,
                    );
                    results[c][k].push(f);
                }
                eprintln!(
                    "round {round} {:<42} start to first call {:>7.1} ms (connect {:.1} ms)",
                    which.label(),
                    ms(start.total),
                    ms(start.connect)
                );
            }
            for n in 0..starts {
                for i in 0..start_kinds.len() {
                    let s = (i + round + n) % start_kinds.len();
                    let (start, _) = session(start_kinds[s], &setup, 0, 0).await;
                    eprintln!(
                        "round {round} {:<42} start to first call {:>7.1} ms (connect {:.1} ms)",
                        start_kinds[s].label(),
                        ms(start.total),
                        ms(start.connect)
                    );
                    begun[s].push(start);
                }
            }
            let (probe, node) = probe_times(setup.state.path());
            eprintln!(
                "round {round} bwrap probe {:.1} ms, node -e 0 {:.1} ms",
                ms(probe),
                ms(node)
            );
            probes.push(ms(probe));
            bare_node.push(ms(node));
        }
    });
    drop(rt);

    println!(
        "\ntoolbind {}, TypeScript SDK {}, node {}, {rounds} rounds, {} cores, load {load_before}-{}",
        env!("CARGO_PKG_VERSION"),
        sdk_version(&setup.sdk),
        node_version(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load(),
    );
    println!(
        "\nCalls of server-everything's `echo`: {calls} calls per case per round, after {warmup} warm-up calls (median over rounds)\n"
    );
    println!(
        "| client | in flight | calls/s | p50 | p99 | calls/s toolbind / TS | same, per round (min-max) | p99 toolbind / TS | server CPU/call | client CPU/call |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let ts = clients.len() - 1;
    for (c, which) in clients.iter().enumerate() {
        for (k, n) in IN_FLIGHT.iter().enumerate() {
            let get =
                |c: usize, f: fn(&Figures) -> f64| median(results[c][k].iter().map(f).collect());
            let rate = get(c, |f| f.rate);
            let p50 = get(c, |f| ms(f.p50));
            let p99 = get(c, |f| ms(f.p99));
            let server_cpu = get(c, |f| f.server_cpu.as_secs_f64() * 1e6);
            let client_cpu = get(c, |f| f.client_cpu.as_secs_f64() * 1e6);
            // The ratio within each round (the clients ran back to back in it).
            let per_round: Vec<f64> = results[c][k]
                .iter()
                .zip(&results[ts][k])
                .map(|(a, b)| a.rate / b.rate)
                .collect();
            let range = if c == ts {
                "-".to_owned()
            } else {
                let lo = per_round.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = per_round.iter().copied().fold(0.0, f64::max);
                format!("{lo:.2}-{hi:.2}x")
            };
            println!(
                "| {} | {n} | {rate:.0} | {p50:.3} ms | {p99:.3} ms | {:.2}x | {range} | {:.2}x | {server_cpu:.1} µs | {client_cpu:.1} µs |",
                which.label(),
                rate / get(ts, |f| f.rate),
                p99 / get(ts, |f| ms(f.p99)),
            );
        }
    }

    let med = |s: usize, f: fn(&Start) -> f64| median(begun[s].iter().map(f).collect());
    let total = |s: usize| med(s, |b| ms(b.total));
    let (jailed, unjailed, ts) = (total(0), total(1), total(3));
    println!(
        "\nStart to first call: `Runtime::builder().mcp_server(..).connect()` to the first `echo` result (TypeScript: `new StdioClientTransport` to it, `connect` and `listTools` included, node and the SDK already loaded); {} starts each ({} for the no-cgroup row), median\n",
        begun[0].len(),
        begun[2].len()
    );
    println!(
        "| client | start to first call | of which start + initialize + tools/list | first call | vs unjailed | toolbind / TS |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (s, which) in start_kinds.iter().enumerate() {
        let t = total(s);
        println!(
            "| {} | {t:.1} ms | {:.1} ms | {:.2} ms | {:+.1} ms | {} |",
            which.label(),
            med(s, |b| ms(b.connect)),
            med(s, |b| ms(b.first_call)),
            t - unjailed,
            if *which == Which::Ts {
                "1.00x".to_owned()
            } else {
                format!("{:.2}x", t / ts)
            }
        );
    }
    let spawn = median(
        begun[3]
            .iter()
            .filter_map(|b| b.from_spawn.map(ms))
            .collect(),
    );
    println!(
        "| TypeScript SDK client, from spawning `node` (its start and the SDK's import included) | {spawn:.1} ms | | | {:+.1} ms | |",
        spawn - unjailed
    );
    let probe = median(probes);
    println!(
        "\nJailed - unjailed: {:+.1} ms (target: at most +20 ms). The bwrap probe (`bwrap ... -- node -e 0`; a connect runs it only after a failed jailed start): {probe:.1} ms; `node -e 0` unjailed: {:.1} ms (medians of {rounds}).",
        jailed - unjailed,
        median(bare_node)
    );
}
