//! What the jail costs, measured side by side in one run: a one-shot call sandboxed
//! (`required`: bwrap with its seccomp filter) against the same call unsandboxed (`off`)
//! and in the lighter jail (`light`: Landlock + seccomp, no namespaces), a warm call in
//! and out of the jail, and starting a worker (spawn + first call) in and out of the jail.
//!
//! `cargo bench -p toolbind --bench sandbox` (add `-- --quick` for fewer iterations;
//! `TOOLBIND_BENCH_LANGS=bash` for one language).
//! Prints a Markdown table. Calls alternate between the two executors so machine noise
//! hits both alike.

use std::time::Duration;

use toolbind::exec::{ExecConfig, SubprocessExecutor};
use toolbind::sandbox::{SandboxLimits, SandboxMode, SandboxPolicy};
mod common;

use common::{NODE_TOOL, PY_TOOL, SH_TOOL, median, ms, one_call, real_python, selected, spec};
use toolbind_codegen::model::{Language, WorkerMode};

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (one_shot_n, warm_n, start_n) = if quick { (10, 200, 5) } else { (40, 2000, 20) };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let python = real_python();
    let executor = |mode: SandboxMode, name: &str, processes: Option<u64>| {
        let mut limits = SandboxLimits::default().processes(processes);
        // "No cgroups": neither the pids nor the memory cgroup.
        if processes.is_none() {
            limits = limits.call_memory(None);
        }
        let policy = SandboxPolicy::new()
            .mode(mode)
            .state_dir(root.join("state").join(name))
            .limits(limits);
        SubprocessExecutor::new(
            ExecConfig::default()
                .cache_dir(root.join("cache"))
                .python(python.clone())
                .sandbox(policy),
        )
    };
    let jailed = executor(SandboxMode::Required, "jailed", Some(256));
    // The same jail without its cgroups (pids, memory): joining a cgroup v1 costs a few ms.
    let no_cgroup = executor(SandboxMode::Required, "no_cgroup", None);
    let open = executor(SandboxMode::Off, "open", None);
    let light = executor(SandboxMode::Light, "light", Some(256));
    let light_no_cgroup = executor(SandboxMode::Light, "light_no_cgroup", None);
    // What checking a state folder costs on each jailed start: the openat walk from the
    // state root, no-follow, owner and mode checks (dirs::private_subdir).
    let state_root = root.join("state").join("checks");
    let mut checks = Vec::new();
    for _ in 0..2000 {
        let t = std::time::Instant::now();
        toolbind::dirs::private_subdir(&state_root, &["0123abcd", "some_tool"]).unwrap();
        checks.push(t.elapsed());
    }
    println!("state folder check (p50 of 2000): {}\n", us(median(checks)));
    let langs = [
        (Language::TypeScript, "index.mjs", NODE_TOOL),
        (Language::Python, "index.py", PY_TOOL),
        (Language::Bash, "index.sh", SH_TOOL),
    ];
    println!(
        "| language | one-shot off (p50) | one-shot jailed (p50) | added | jailed, no cgroups (p50) | one-shot light (p50) | light, no cgroups (p50) | warm off (p50) | warm jailed (p50) | ratio | worker start off (p50) | worker start jailed (p50) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    // `TOOLBIND_BENCH_LANGS=bash` (a comma list): only those languages, e.g. in the
    // cgroup-v2 VM, where every call is ~10x slower under TCG.
    for (lang, entry, src) in langs {
        if !selected("TOOLBIND_BENCH_LANGS", lang.as_str()) {
            continue;
        }
        let d = root.join(lang.as_str());
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(entry), src).unwrap();
        let one_shot = spec(&d, lang, entry, WorkerMode::OneShot);
        let warm = spec(&d, lang, entry, WorkerMode::Warm);
        for _ in 0..3 {
            one_call(&open, &one_shot).await;
            one_call(&jailed, &one_shot).await;
            one_call(&no_cgroup, &one_shot).await;
            one_call(&light, &one_shot).await;
            one_call(&light_no_cgroup, &one_shot).await;
        }
        let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        let (mut l, mut lc) = (Vec::new(), Vec::new());
        for _ in 0..one_shot_n {
            a.push(one_call(&open, &one_shot).await);
            b.push(one_call(&jailed, &one_shot).await);
            c.push(one_call(&no_cgroup, &one_shot).await);
            l.push(one_call(&light, &one_shot).await);
            lc.push(one_call(&light_no_cgroup, &one_shot).await);
        }
        let (shot_open, shot_jail, shot_nocg) = (median(a), median(b), median(c));
        let (shot_light, shot_light_nocg) = (median(l), median(lc));
        let added = shot_jail.saturating_sub(shot_open);
        let warm_cols = if lang == Language::Bash {
            [
                "n/a (one-shot)".to_owned(),
                "n/a".into(),
                "n/a".into(),
                "n/a".into(),
                "n/a".into(),
            ]
        } else {
            // Worker start: spawn + first call, after stopping the previous worker.
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for _ in 0..start_n {
                open.shutdown();
                jailed.shutdown();
                a.push(one_call(&open, &warm).await);
                b.push(one_call(&jailed, &warm).await);
            }
            let (start_open, start_jail) = (median(a), median(b));
            let (mut a, mut b) = (Vec::with_capacity(warm_n), Vec::with_capacity(warm_n));
            // Alternate which goes first, so neither always follows the other.
            for i in 0..warm_n {
                if i % 2 == 0 {
                    a.push(one_call(&open, &warm).await);
                    b.push(one_call(&jailed, &warm).await);
                } else {
                    b.push(one_call(&jailed, &warm).await);
                    a.push(one_call(&open, &warm).await);
                }
            }
            let (warm_open, warm_jail) = (median(a), median(b));
            [
                us(warm_open),
                us(warm_jail),
                format!("{:.2}x", warm_jail.as_secs_f64() / warm_open.as_secs_f64()),
                ms(start_open),
                ms(start_jail),
            ]
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            lang.as_str(),
            ms(shot_open),
            ms(shot_jail),
            ms(added),
            ms(shot_nocg),
            ms(shot_light),
            ms(shot_light_nocg),
            warm_cols.join(" | ")
        );
    }
}
