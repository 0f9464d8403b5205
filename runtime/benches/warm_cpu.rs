//! Where a warm call's time goes, process by process: the agent (this process: the
//! executor, tokio, the socket), the jail's own processes (bwrap) and the harness (node or
//! python running the tool). For each warm tool, in and out of the jail, it makes N calls
//! one at a time and reads each process's CPU time before and after them
//! (`/proc/<pid>/task/*/schedstat`, nanoseconds; the agent's from `getrusage`, which also
//! counts threads that ended), so a regression can be pinned on one process before
//! profiling it.
//!
//! `cargo bench -p toolbind --bench warm_cpu` (`-- --quick` for fewer calls;
//! `TOOLBIND_BENCH_CALLS=N` for N; `TOOLBIND_BENCH_LANGS=python` for one language,
//! `TOOLBIND_BENCH_MODES=off` for one mode). Run two builds alternately and compare
//! the per-process columns: the wall p50 alone cannot tell the agent's work from the
//! harness's.

use std::collections::BTreeMap;
use std::time::Duration;

use toolbind::exec::{ExecConfig, SubprocessExecutor};
use toolbind::sandbox::{SandboxMode, SandboxPolicy};
mod common;

use common::{NODE_TOOL, PY_TOOL, median, one_call, real_python, selected, spec};
use toolbind_codegen::model::{Language, WorkerMode};

/// This process's CPU time, every thread's (ended ones too).
fn own_cpu() -> Duration {
    let u = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)
        .expect("getrusage");
    let tv =
        |t: nix::sys::time::TimeVal| Duration::new(t.tv_sec() as u64, t.tv_usec() as u32 * 1000);
    tv(u.user_time()) + tv(u.system_time())
}

/// A process's CPU time so far, summed over its live threads, in nanoseconds.
fn proc_cpu(pid: u32) -> Option<u64> {
    let mut sum = 0;
    for t in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let s = std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok()?;
        sum += s.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(sum)
}

/// Every process below this one: pid -> its name.
fn descendants() -> BTreeMap<u32, String> {
    let me = std::process::id();
    let mut parent = BTreeMap::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so split after its ')'.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let comm = stat[open + 1..close].to_owned();
        let ppid = stat[close + 1..]
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(ppid) = ppid {
            parent.insert(pid, (ppid, comm));
        }
    }
    let below = |mut pid: u32| {
        while let Some((p, _)) = parent.get(&pid) {
            if *p == me {
                return true;
            }
            pid = *p;
        }
        false
    };
    parent
        .iter()
        .filter(|(pid, _)| below(**pid))
        .map(|(pid, (_, comm))| (*pid, comm.clone()))
        .collect()
}

fn snapshot() -> BTreeMap<u32, (String, u64)> {
    descendants()
        .into_iter()
        .filter_map(|(pid, comm)| Some((pid, (comm, proc_cpu(pid)?))))
        .collect()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let n: u32 = match std::env::var("TOOLBIND_BENCH_CALLS") {
        Ok(n) => n.parse().expect("TOOLBIND_BENCH_CALLS is a number"),
        Err(_) if quick => 500,
        Err(_) => 10_000,
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let python = real_python();
    let executor = |mode: SandboxMode, name: &str| {
        let policy = SandboxPolicy::new()
            .mode(mode)
            .state_dir(root.join("state").join(name));
        SubprocessExecutor::new(
            ExecConfig::default()
                .cache_dir(root.join("cache"))
                .python(python.clone())
                .sandbox(policy),
        )
    };
    println!("{n} warm calls each, one at a time; CPU per call by process.\n");
    println!("| tool | mode | wall p50 | agent CPU | processes below it (CPU per call) |");
    println!("|---|---|---:|---:|---|");
    for (lang, entry, src) in [
        (Language::TypeScript, "index.mjs", NODE_TOOL),
        (Language::Python, "index.py", PY_TOOL),
    ] {
        if !selected("TOOLBIND_BENCH_LANGS", lang.as_str()) {
            continue;
        }
        let d = root.join(lang.as_str());
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(entry), src).unwrap();
        let warm = spec(&d, lang, entry, WorkerMode::Warm);
        for (mode, name) in [(SandboxMode::Off, "off"), (SandboxMode::Required, "jailed")] {
            if !selected("TOOLBIND_BENCH_MODES", name) {
                continue;
            }
            let exec = executor(mode, name);
            for _ in 0..300 {
                one_call(&exec, &warm).await;
            }
            let (before, own_before) = (snapshot(), own_cpu());
            let mut walls = Vec::with_capacity(n as usize);
            for _ in 0..n {
                walls.push(one_call(&exec, &warm).await);
            }
            let (after, own_after) = (snapshot(), own_cpu());
            let per = |ns: u64| format!("{:.1} µs", ns as f64 / 1e3 / f64::from(n));
            let others: Vec<String> = after
                .iter()
                .filter_map(|(pid, (comm, t))| {
                    let (_, t0) = before.get(pid)?;
                    Some(format!("{comm} {}", per(t - t0)))
                })
                .collect();
            println!(
                "| {} | {name} | {:.1} µs | {} | {} |",
                lang.as_str(),
                median(walls).as_secs_f64() * 1e6,
                per((own_after - own_before).as_nanos() as u64),
                others.join(", ")
            );
            exec.shutdown();
        }
    }
}
