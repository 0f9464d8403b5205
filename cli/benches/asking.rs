//! Tools that ask: what an approval or a question round trip adds to a call, besides the
//! wait for the person, over stdio. `toolbind serve` (sandbox auto) runs the same
//! JavaScript echo plain (`echo_plain`), behind `approval: always` (`echo_approved`: the
//! approval is an `elicitation/create` to the client) and after one `ctx.confirm`
//! (`echo_confirm`: a question from the tool's process, through the runtime, to the
//! client and back); the peer, an MCP server on the official TypeScript SDK, runs the
//! plain echo and one that calls `server.elicitInput` first. The client (raw JSON-RPC
//! lines, one call in flight) answers every elicitation at once with yes. The same
//! toolbind tools again on MCP 2026-07-28 (no session; each request carries its `_meta`):
//! a plain call, and `ctx.confirm` as an `InputRequiredResult` and the client's retry
//! with its answer, the tool waiting alive in between.
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
#[path = "common/stats.rs"]
mod stats;

use line::Line;
use stats::{median, pick};

#[derive(Clone, Copy, PartialEq)]
enum Which {
    Toolbind,
    Peer,
    /// toolbind serve, spoken to on MCP 2026-07-28.
    Rounds,
}

fn start(which: Which) -> Line {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/asking");
    let cmd = match which {
        Which::Toolbind | Which::Rounds => {
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
    if which == Which::Rounds {
        return Line::stateless(cmd);
    }
    Line::start(cmd, json!({"elicitation": {"form": {}}}), "asking-bench")
}

/// A 2026-07-28 request's `_meta`: a client that answers forms.
fn meta() -> serde_json::Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "asking-bench", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    })
}

/// A 2026-07-28 `tools/call` to its end: each `InputRequiredResult`'s forms are answered
/// yes (their first field) in the retry.
fn call_in_rounds(line: &mut Line, tool: &str, args: serde_json::Value) -> serde_json::Value {
    let mut params = json!({"name": tool, "arguments": args, "_meta": meta()});
    loop {
        let r = line.request("tools/call", params.clone());
        let result = &r["result"];
        if result["resultType"] != "input_required" {
            return r;
        }
        line.asked += 1;
        let mut responses = serde_json::Map::new();
        for (key, request) in result["inputRequests"].as_object().unwrap() {
            let field = request["params"]["requestedSchema"]["properties"]
                .as_object()
                .and_then(|p| p.keys().next().cloned())
                .unwrap_or_default();
            responses.insert(
                key.clone(),
                json!({"action": "accept", "content": {field: true}}),
            );
        }
        params["inputResponses"] = responses.into();
        params["requestState"] = result["requestState"].clone();
    }
}

fn measure(line: &mut Line, which: Which, tool: &str, calls: usize) -> Vec<Duration> {
    let mut took = Vec::with_capacity(calls);
    for i in 0..calls {
        let t = Instant::now();
        let args = json!({"text": format!("call {i}")});
        let r = if which == Which::Rounds {
            call_in_rounds(line, tool, args)
        } else {
            line.request("tools/call", json!({"name": tool, "arguments": args}))
        };
        took.push(t.elapsed());
        assert_eq!(
            r["result"]["content"][0]["text"],
            format!("echo: call {i}"),
            "{tool}: {r}"
        );
    }
    took
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (rounds, calls, warmup) = if quick { (1, 200, 50) } else { (5, 1000, 200) };
    let rows: [(Which, &str, &str); 7] = [
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
        (
            Which::Rounds,
            "echo_plain",
            "toolbind serve, MCP 2026-07-28: plain call",
        ),
        (
            Which::Rounds,
            "echo_confirm",
            "toolbind serve, MCP 2026-07-28: one ctx.confirm (InputRequiredResult, retry)",
        ),
    ];
    let mut p50s = vec![Vec::new(); rows.len()];
    let mut p99s = vec![Vec::new(); rows.len()];
    for round in 0..rounds {
        for which in [Which::Toolbind, Which::Peer, Which::Rounds] {
            let mut line = start(which);
            for (r, (w, tool, _)) in rows.iter().enumerate() {
                if *w != which {
                    continue;
                }
                measure(&mut line, which, tool, warmup);
                let mut took = measure(&mut line, which, tool, calls);
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
        let plain = match w {
            Which::Toolbind => med[0].0,
            Which::Peer => med[3].0,
            Which::Rounds => med[5].0,
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
