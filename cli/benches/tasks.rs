//! Long calls as tasks: what a task costs next to a plain call of the same tool, in
//! `toolbind serve` (MCP's tasks extension, SEP-2663) and in the official TypeScript SDK's
//! server (its experimental tasks, MCP 2025-11-25's SEP-1686: `registerToolTask` with the
//! SDK's in-memory task store), both over stdio, both running the same JavaScript tool
//! (`benches/tasks/tools/echo_task`; toolbind in its warm worker in the sandbox, the SDK
//! in its own process).
//!
//! `cargo bench -p toolbind-cli --bench tasks [-- --quick]`; needs the clients of
//! `tests/clients/install.sh`.
//!
//! One client, raw JSON-RPC lines, one request in flight. Per server and round, N times:
//! - **plain call**: `tools/call` from a client that does not take tasks;
//! - **create**: `tools/call` until the `CreateTaskResult` is back (the handle);
//! - **first get**: a `tasks/get` right after it;
//! - **to result**: from sending `tools/call` to holding the result, polling `tasks/get`
//!   back to back (the SDK: then `tasks/result`);
//! - **get (done)**: `tasks/get` on a finished task.
//!
//! Servers take turns within a round, each started afresh and warmed up; the report is the
//! median over rounds of each p50 and p99, and the ratios of a task's way to its result to
//! a plain call.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "common/line.rs"]
mod line;
#[path = "common/stats.rs"]
mod stats;

use line::Line;
use stats::{median, pick};

const TASKS: &str = "io.modelcontextprotocol/tasks";

#[derive(Clone, Copy, PartialEq)]
enum Which {
    Toolbind,
    Peer,
}

impl Which {
    fn label(self) -> &'static str {
        match self {
            Which::Toolbind => "toolbind serve (SEP-2663 tasks, sandbox auto)",
            Which::Peer => "TypeScript SDK 1.32 server (SEP-1686 tasks, tool in-process)",
        }
    }
}

fn start(which: Which, takes_tasks: bool) -> Line {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/tasks");
    let cmd = match which {
        Which::Toolbind => {
            let mut c = Command::new(env!("CARGO_BIN_EXE_toolbind"));
            c.arg("serve")
                .arg(here.join("tools"))
                .env_remove("PI_TOOLS_DIRS");
            c
        }
        Which::Peer => {
            let mut c = Command::new("node");
            c.arg(here.join("ts_task_server.mjs"))
                .arg(common::clients_dir());
            c
        }
    };
    let capabilities = match (which, takes_tasks) {
        (Which::Toolbind, true) => json!({"extensions": {TASKS: {}}}),
        (Which::Peer, true) => json!({"tasks": {"requests": {}}}),
        (_, false) => json!({}),
    };
    Line::start(cmd, capabilities, "tasks-bench")
}

fn call_params(which: Which, i: usize, as_task: bool) -> Value {
    let mut p = json!({"name": "echo_task", "arguments": {"text": format!("call {i}")}});
    if which == Which::Peer && as_task {
        // SEP-1686: the client asks for a task.
        p["task"] = json!({"ttl": 60_000});
    }
    p
}

fn task_id(which: Which, created: &Value) -> String {
    let r = &created["result"];
    let id = match which {
        Which::Toolbind => &r["taskId"],
        Which::Peer => &r["task"]["taskId"],
    };
    id.as_str()
        .unwrap_or_else(|| panic!("no task: {created}"))
        .to_owned()
}

/// Polls until the task has ended and returns its result.
fn result_of(line: &mut Line, which: Which, id: &str) -> Value {
    loop {
        let got = line.request("tasks/get", json!({"taskId": id}));
        match got["result"]["status"].as_str() {
            Some("completed") => {
                return match which {
                    Which::Toolbind => got["result"]["result"].clone(),
                    Which::Peer => {
                        line.request("tasks/result", json!({"taskId": id}))["result"].clone()
                    }
                };
            }
            Some("working") => {}
            _ => panic!("task {id}: {got}"),
        }
    }
}

fn check(result: &Value, i: usize) {
    assert_eq!(
        result["content"][0]["text"],
        format!("echo: call {i}"),
        "{result}"
    );
}

/// The five figures of one server in one round, each a list of durations.
#[derive(Default)]
struct Samples {
    plain: Vec<Duration>,
    create: Vec<Duration>,
    first_get: Vec<Duration>,
    to_result: Vec<Duration>,
    get_done: Vec<Duration>,
}

fn measure(which: Which, calls: usize, warmup: usize) -> Samples {
    let mut s = Samples::default();
    let mut plain = start(which, false);
    for i in 0..warmup {
        check(
            &plain.request("tools/call", call_params(which, i, false))["result"],
            i,
        );
    }
    for i in 0..calls {
        let t = Instant::now();
        let r = plain.request("tools/call", call_params(which, i, false));
        s.plain.push(t.elapsed());
        check(&r["result"], i);
    }
    drop(plain);
    let mut tasks = start(which, true);
    for i in 0..warmup {
        let created = tasks.request("tools/call", call_params(which, i, true));
        let id = task_id(which, &created);
        check(&result_of(&mut tasks, which, &id), i);
    }
    for i in 0..calls {
        let t = Instant::now();
        let created = tasks.request("tools/call", call_params(which, i, true));
        s.create.push(t.elapsed());
        let id = task_id(which, &created);
        let g = Instant::now();
        tasks.request("tasks/get", json!({"taskId": id}));
        s.first_get.push(g.elapsed());
        let result = result_of(&mut tasks, which, &id);
        s.to_result.push(t.elapsed());
        check(&result, i);
        let g = Instant::now();
        let done = tasks.request("tasks/get", json!({"taskId": id}));
        s.get_done.push(g.elapsed());
        assert_eq!(done["result"]["status"], "completed", "{done}");
    }
    // The time to the result, measured separately from the first get above (which sits
    // inside it): once more without it.
    s.to_result.clear();
    for i in 0..calls {
        let t = Instant::now();
        let created = tasks.request("tools/call", call_params(which, i, true));
        let id = task_id(which, &created);
        let result = result_of(&mut tasks, which, &id);
        s.to_result.push(t.elapsed());
        check(&result, i);
    }
    s
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (rounds, calls, warmup) = if quick { (1, 100, 20) } else { (5, 500, 100) };
    let which = [Which::Toolbind, Which::Peer];
    // [server][metric][round] = (p50, p99)
    let mut figures: Vec<Vec<Vec<(Duration, Duration)>>> = vec![vec![Vec::new(); 5]; 2];
    for round in 0..rounds {
        for (w, &server) in which.iter().enumerate() {
            let mut s = measure(server, calls, warmup);
            for (m, v) in [
                &mut s.plain,
                &mut s.create,
                &mut s.first_get,
                &mut s.to_result,
                &mut s.get_done,
            ]
            .into_iter()
            .enumerate()
            {
                let p = (pick(v, 0.5), pick(v, 0.99));
                figures[w][m].push(p);
            }
        }
        eprintln!("round {} of {rounds} done", round + 1);
    }
    let names = [
        "plain call",
        "create (the handle)",
        "first tasks/get",
        "to result (create + polls)",
        "tasks/get (done)",
    ];
    let ms = |d: Duration| format!("{:.3} ms", d.as_secs_f64() * 1e3);
    println!("{rounds} round(s) of {calls} calls each, 1 in flight, medians over rounds; stdio\n");
    println!("| server | measure | p50 | p99 |");
    println!("| --- | --- | --- | --- |");
    let mut med = vec![vec![(Duration::ZERO, Duration::ZERO); 5]; 2];
    for (w, server) in which.iter().enumerate() {
        for (m, name) in names.iter().enumerate() {
            let p50 = median(figures[w][m].iter().map(|p| p.0).collect());
            let p99 = median(figures[w][m].iter().map(|p| p.1).collect());
            med[w][m] = (p50, p99);
            println!(
                "| {} | {name} | {} | {} |",
                server.label(),
                ms(p50),
                ms(p99)
            );
        }
    }
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!();
    for (w, server) in which.iter().enumerate() {
        println!(
            "{}: to result / plain call = {:.2}x (p50), {:.2}x (p99); create / plain call = {:.2}x (p50)",
            server.label(),
            ratio(med[w][3].0, med[w][0].0),
            ratio(med[w][3].1, med[w][0].1),
            ratio(med[w][1].0, med[w][0].0),
        );
    }
    println!(
        "toolbind / TypeScript SDK: plain call {:.2}x, create {:.2}x, tasks/get (done) {:.2}x, to result {:.2}x (p50)",
        ratio(med[0][0].0, med[1][0].0),
        ratio(med[0][1].0, med[1][1].0),
        ratio(med[0][4].0, med[1][4].0),
        ratio(med[0][3].0, med[1][3].0),
    );
}
