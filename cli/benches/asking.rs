//! Tools that ask: what an approval or a question round trip adds to a call, besides the
//! wait for the person, over stdio. `toolbind serve` (sandbox auto) runs the same
//! JavaScript echo plain (`echo_plain`), behind `approval: always` (`echo_approved`: the
//! approval is an `elicitation/create` to the client) and after one `ctx.confirm`
//! (`echo_confirm`: a question from the tool's process, through the runtime, to the
//! client and back); the peer, an MCP server on the official TypeScript SDK, runs the
//! plain echo and one that calls `server.elicitInput` first. The client (raw JSON-RPC
//! lines, one call in flight) answers every elicitation at once with yes.
//!
//! `cargo bench -p toolbind-cli --bench asking [-- --quick]`; needs the clients of
//! `tests/clients/install.sh`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "common/line.rs"]
mod line;

use line::Line;

#[derive(Clone, Copy, PartialEq)]
enum Which {
    Toolbind,
    Peer,
}

fn start(which: Which) -> Line {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/asking");
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
            c.arg(here.join("ts_asking_server.mjs"))
                .arg(common::clients_dir());
            c
        }
    };
    Line::start(cmd, json!({"elicitation": {"form": {}}}), "asking-bench")
}

fn measure(line: &mut Line, tool: &str, calls: usize) -> Vec<Duration> {
    let mut took = Vec::with_capacity(calls);
    for i in 0..calls {
        let t = Instant::now();
        let r = line.request(
            "tools/call",
            json!({"name": tool, "arguments": {"text": format!("call {i}")}}),
        );
        took.push(t.elapsed());
        assert_eq!(
            r["result"]["content"][0]["text"],
            format!("echo: call {i}"),
            "{tool}: {r}"
        );
    }
    took
}

fn pick(v: &mut [Duration], q: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 * q) as usize).min(v.len() - 1)]
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (rounds, calls, warmup) = if quick { (1, 200, 50) } else { (5, 1000, 200) };
    let rows: [(Which, &str, &str); 5] = [
        (Which::Toolbind, "echo_plain", "toolbind serve: plain call"),
        (
            Which::Toolbind,
            "echo_approved",
            "toolbind serve: approval (elicitation) first",
        ),
        (
            Which::Toolbind,
            "echo_confirm",
            "toolbind serve: one ctx.confirm (elicitation)",
        ),
        (
            Which::Peer,
            "echo_plain",
            "TypeScript SDK server: plain call",
        ),
        (
            Which::Peer,
            "echo_confirm",
            "TypeScript SDK server: one elicitInput",
        ),
    ];
    let mut p50s = vec![Vec::new(); rows.len()];
    let mut p99s = vec![Vec::new(); rows.len()];
    for round in 0..rounds {
        for which in [Which::Toolbind, Which::Peer] {
            let mut line = start(which);
            for (r, (w, tool, _)) in rows.iter().enumerate() {
                if *w != which {
                    continue;
                }
                measure(&mut line, tool, warmup);
                let mut took = measure(&mut line, tool, calls);
                p50s[r].push(pick(&mut took, 0.5));
                p99s[r].push(pick(&mut took, 0.99));
            }
            assert!(line.asked > 0, "the client was never asked");
        }
        eprintln!("round {} of {rounds} done", round + 1);
    }
    let ms = |d: Duration| format!("{:.3} ms", d.as_secs_f64() * 1e3);
    println!("{rounds} round(s) of {calls} calls each, 1 in flight, medians over rounds; stdio\n");
    println!("| server: call | p50 | p99 | p50 added to the plain call |");
    println!("| --- | ---: | ---: | ---: |");
    let med: Vec<(Duration, Duration)> = (0..rows.len())
        .map(|r| (median(p50s[r].clone()), median(p99s[r].clone())))
        .collect();
    for (r, (w, _, label)) in rows.iter().enumerate() {
        let plain = if *w == Which::Toolbind {
            med[0].0
        } else {
            med[3].0
        };
        let added = med[r].0.as_secs_f64() - plain.as_secs_f64();
        println!(
            "| {label} | {} | {} | {:+.3} ms |",
            ms(med[r].0),
            ms(med[r].1),
            added * 1e3
        );
    }
}
