//! Startup and per-call costs of the runtime core: an up-to-date sync of 1,000 tools and
//! argument validation per call, against the targets (< 50 ms and < 20 µs).
//!
//! `cargo bench -p toolbind --bench core` (add `-- --quick` for fewer iterations).
//! Prints a Markdown table.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolbind::args::validate;
use toolbind::exec::{ExecCall, ExecFuture, Executor};
use toolbind::sync;
use toolbind::{CallOptions, Loader, Runtime, ToolResult};
use toolbind_codegen::{Options, ToolSpec};

const TOOLS: usize = 1000;

fn tool_md(name: &str, version: u64) -> String {
    format!(
        "---\nname: {name}\nlabel: {name}\ndescription: Benchmark tool {name}; searches things and returns results.\nversion: {version}\nlanguage: bash\ninputs:\n  query:\n    type: string\n    description: The search terms.\n  limit:\n    type: number\n    description: Most results.\n    default: 10\n  safe:\n    type: boolean\n    description: Filter.\n    optional: true\n  mode:\n    type: enum\n    values: web, news, images\n    description: Where.\n    default: web\n  api_token:\n    type: string\n    description: Token override.\n    optional: true\n    sensitive: true\n---\n# {name}\n\n## Usage\n\nCall it with a query.\n"
    )
}

fn write_tools(dir: &Path) {
    for i in 0..TOOLS {
        let name = format!("tool_{i:04}");
        let t = dir.join(&name);
        std::fs::create_dir_all(&t).unwrap();
        std::fs::write(t.join("TOOL.md"), tool_md(&name, 1 + (i as u64 % 7))).unwrap();
        std::fs::write(t.join("index.sh"), "#!/usr/bin/env bash\ncat\n").unwrap();
        std::fs::write(t.join("README.md"), "x".repeat(2000)).unwrap();
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Median over `rounds` of the mean time of `iters` calls of `f`.
fn per_call(rounds: usize, iters: usize, mut f: impl FnMut()) -> Duration {
    let mut samples = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        for _ in 0..iters {
            f();
        }
        samples.push(start.elapsed() / iters as u32);
    }
    median(samples)
}

fn fmt(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns >= 1_000_000 {
        format!("{:.2} ms", ns as f64 / 1e6)
    } else if ns >= 1_000 {
        format!("{:.2} µs", ns as f64 / 1e3)
    } else {
        format!("{ns} ns")
    }
}

struct Noop;

impl Executor for Noop {
    fn execute<'a>(&'a self, call: ExecCall<'a>) -> ExecFuture<'a> {
        Box::pin(async move {
            black_box(&call.params);
            ToolResult::text("ok")
        })
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (sync_rounds, val_rounds, val_iters) = if quick {
        (5, 5, 2_000)
    } else {
        (30, 15, 20_000)
    };
    let tmp = tempfile::tempdir().unwrap();
    let (seed, data) = (tmp.path().join("seed"), tmp.path().join("data"));
    write_tools(&seed);

    let mut rows: Vec<(String, String, String)> = Vec::new();

    let start = Instant::now();
    let report = sync(&seed, &data).unwrap();
    let install = start.elapsed();
    assert_eq!(report.counts().installed, TOOLS, "{report}");
    rows.push((
        format!("first sync, {TOOLS} tools installed (validate + copy + fsync)"),
        fmt(install),
        "—".into(),
    ));

    let mut samples = Vec::new();
    for _ in 0..sync_rounds {
        let start = Instant::now();
        let report = sync(&seed, &data).unwrap();
        samples.push(start.elapsed());
        assert_eq!(report.counts().unchanged, TOOLS);
    }
    let up_to_date = median(samples);
    rows.push((
        format!("**up-to-date sync, {TOOLS} tools** (target < 50 ms)"),
        fmt(up_to_date),
        format!("{:.1}% of target", up_to_date.as_secs_f64() / 0.050 * 100.0),
    ));

    // What an up-to-date sync would cost if it parsed every seed TOOL.md in full.
    let opts = Options::default();
    let folders = toolbind_codegen::tool_folders(&seed).unwrap();
    let mut samples = Vec::new();
    for _ in 0..sync_rounds.min(10) {
        let start = Instant::now();
        for f in &folders {
            black_box(toolbind_codegen::parse_tool_dir(f, &opts).unwrap());
        }
        samples.push(start.elapsed());
    }
    let full_parse = median(samples);
    rows.push((
        format!("for comparison: full parse of {TOOLS} seed TOOL.md"),
        fmt(full_parse),
        format!(
            "up-to-date sync is {:.1}x faster",
            full_parse.as_secs_f64() / up_to_date.as_secs_f64()
        ),
    ));

    let dir = seed.join("tool_0000");
    let spec: ToolSpec = toolbind_codegen::parse_tool_md(
        &dir.join("TOOL.md"),
        &dir,
        tool_md("tool_0000", 1).as_bytes(),
        &Options::default().require_entry(false),
    )
    .unwrap();
    let spec = toolbind::ToolInfo::from(spec);
    let budget = Duration::from_micros(20);
    let pct = |d: Duration| {
        format!(
            "{:.2}% of target",
            d.as_secs_f64() / budget.as_secs_f64() * 100.0
        )
    };
    let cases: [(&str, Value); 4] = [
        (
            "valid, 3 of 5 fields, 2 defaults filled",
            json!({"query": "rust async", "limit": 5, "mode": "news"}),
        ),
        (
            "valid, all 5 fields",
            json!({"query": "rust", "limit": 5, "safe": true, "mode": "web", "api_token": "t"}),
        ),
        (
            "quirks: \"5\" and \"true\" coerced",
            json!({"query": "rust", "limit": "5", "safe": "true"}),
        ),
        (
            "invalid: 3 problems, error text built",
            json!({"querry": "rust", "limit": "ten", "mode": "newz"}),
        ),
    ];
    let clone_cost = per_call(val_rounds, val_iters, || {
        black_box(black_box(&cases[0].1).clone());
    });
    rows.push((
        "baseline: cloning the args `Value` (included below)".into(),
        fmt(clone_cost),
        "—".into(),
    ));
    for (label, args) in &cases {
        let invalid = label.starts_with("invalid");
        let d = per_call(val_rounds, val_iters, || {
            let r = validate(&spec, black_box(args).clone());
            if invalid {
                black_box(r.unwrap_err().to_string());
            } else {
                black_box(r.unwrap());
            }
        });
        rows.push((format!("**validate**: {label}"), fmt(d), pct(d)));
    }

    // Nested arguments (issue 26): three levels, 100 array items, each an object holding an
    // integer with a default and a list of strings, against the flat call above.
    let nested_md = "---\nname: edit_file\ndescription: d\ninputs:\n  path:\n    type: string\n    description: d\n  edits:\n    type: array\n    description: d\n    max_items: 500\n    items:\n      type: object\n      properties:\n        old_text:\n          type: string\n          description: d\n        new_text:\n          type: string\n          description: d\n        count:\n          type: integer\n          description: d\n          minimum: 1\n          default: 1\n        tags:\n          type: array\n          description: d\n          optional: true\n          items:\n            type: string\n---\n";
    let nested: ToolSpec = toolbind_codegen::parse_tool_md(
        &dir.join("TOOL.md"),
        &dir,
        nested_md.as_bytes(),
        &Options::default().require_entry(false),
    )
    .unwrap();
    let nested = toolbind::ToolInfo::from(nested);
    let edits: Vec<Value> = (0..100)
        .map(|i| json!({"old_text": format!("a{i}"), "new_text": "b", "tags": ["x", "y"]}))
        .collect();
    let nested_args = json!({"path": "notes.md", "edits": edits});
    let nested_clone = per_call(val_rounds, val_iters / 20, || {
        black_box(black_box(&nested_args).clone());
    });
    let flat = per_call(val_rounds, val_iters, || {
        black_box(validate(&spec, black_box(&cases[1].1).clone()).unwrap());
    });
    let d = per_call(val_rounds, val_iters / 20, || {
        black_box(validate(&nested, black_box(&nested_args).clone()).unwrap());
    });
    rows.push((
        "baseline: cloning the nested args `Value` (included below)".into(),
        fmt(nested_clone),
        "—".into(),
    ));
    rows.push((
        "**validate**: nested, 3 levels, 100 array items (100 defaults filled)".into(),
        fmt(d),
        format!(
            "{:.1}x the flat call ({}); {:.1} ns per array item without the clone",
            d.as_secs_f64() / flat.as_secs_f64(),
            fmt(flat),
            (d.saturating_sub(nested_clone)).as_secs_f64() * 1e9 / 100.0
        ),
    ));

    let rt = Runtime::builder()
        .registry(Loader::new().dir(&seed).quiet().load().registry)
        .executor(Arc::new(Noop))
        .build();
    let tokio = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let args = cases[0].1.clone();
    let d = tokio.block_on(async {
        let mut samples = Vec::new();
        for _ in 0..val_rounds {
            let start = Instant::now();
            for _ in 0..val_iters {
                let r = rt
                    .call("tool_0500", args.clone(), CallOptions::new().id("c"))
                    .await;
                black_box(r);
            }
            samples.push(start.elapsed() / val_iters as u32);
        }
        median(samples)
    });
    rows.push((
        format!("`Runtime::call` end to end, no-op executor, {TOOLS} tools loaded"),
        fmt(d),
        pct(d),
    ));

    println!("| case | time | vs target |\n|---|---:|---|");
    for (case, time, ratio) in rows {
        println!("| {case} | {time} | {ratio} |");
    }
}
