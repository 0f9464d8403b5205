//! Codegen throughput: parse + validate + emit for a generated folder of 1,000 tools with 8
//! inputs each, split by phase, against a baseline in the same run (reading the same files).
//! With `--compile`, also how long rustc takes to build the bindings of 100 such tools;
//! `--outputs` gives those 100 tools typed `outputs:` too (an enum, a number and a list
//! of objects each), to measure what the generated `Output` types cost; `--nested` gives
//! each a nested object input too (a string, an integer with a default and a list of
//! strings), to measure what the generated nested `Params` structs cost. `--mcp` measures
//! instead the bindings of the three MCP reference servers' snapshots
//! (tests/ui/fixtures/mcp: server-everything, -filesystem, -memory; 36 tools).
//!
//! `cargo bench -p toolbind-codegen --bench codegen [-- --compile [--outputs] [--nested] [--mcp]]`

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use toolbind_codegen::emit::{self, Generator};
use toolbind_codegen::schema::{self, Dialect};
use toolbind_codegen::{Options, load_tools, prompt};

/// What `--outputs` adds to each of the 100 tools of the rustc measurement.
const OUTPUTS: &str = "outputs:\n  count:\n    type: number\n    description: How many items.\n  state:\n    type: enum\n    values: ok, partial, failed\n    description: How it went.\n  items:\n    type: array\n    description: The items.\n    items:\n      type: object\n      properties:\n        id:\n          type: string\n          description: The item's id.\n        score:\n          type: number\n          optional: true\n          description: Its score.\n        tags:\n          type: array\n          description: Its tags.\n          items:\n            type: string\n";

/// What `--nested` adds to each of the 100 tools: a ninth input, a nested object.
const NESTED: &str = "  options:\n    type: object\n    description: How to run it.\n    optional: true\n    properties:\n      label:\n        type: string\n        description: A label.\n      retries:\n        type: integer\n        description: How many retries.\n        minimum: 0\n        default: 2\n      tags:\n        type: array\n        description: Tags.\n        optional: true\n        items:\n          type: string\n";

fn write_tools(dir: &Path, n: usize, outputs: bool, nested: bool) {
    for i in 0..n {
        let t = dir.join(format!("tool_{i:04}"));
        std::fs::create_dir_all(&t).unwrap();
        let mut md = format!(
            "---\nname: tool_{i:04}\nlabel: Tool {i}\ndescription: Generated tool number {i}; it does one thing well.\nversion: {}\nlanguage: typescript\ninputs:\n",
            i % 7
        );
        for j in 0..8 {
            let spec = match j % 4 {
                0 => format!("    type: string\n    description: String input {j}.\n"),
                1 => format!(
                    "    type: number\n    description: Number input {j}.\n    default: {j}\n"
                ),
                2 => format!("    type: boolean\n    description: Flag {j}.\n    optional: true\n"),
                _ => format!(
                    "    type: enum\n    values: alpha, beta-{j}, gamma.{j}, delta\n    default: alpha\n    description: Mode {j}.\n"
                ),
            };
            md.push_str(&format!("  input{j}:\n{spec}"));
        }
        if nested {
            md.push_str(NESTED);
        }
        if outputs {
            md.push_str(OUTPUTS);
        }
        md.push_str("---\n\n# Tool\n\n## Usage\n\nCall it.\n\n## Notes\n\nNone.\n");
        std::fs::write(t.join("TOOL.md"), md).unwrap();
        std::fs::write(
            t.join("index.ts"),
            "export async function execute() { return { content: [] }; }\n",
        )
        .unwrap();
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                black_box(f());
                t.elapsed()
            })
            .collect(),
    )
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let compile = std::env::args().any(|a| a == "--compile");
    let tmp = std::env::temp_dir().join(format!("toolbind-bench-{}", std::process::id()));
    let tools_dir = tmp.join("tools");
    write_tools(&tools_dir, 1000, false, false);
    let dirs = vec![tools_dir.clone()];
    let opts = Options::default();
    let runs = 7;

    let read = time(runs, || {
        let mut n = 0;
        for d in toolbind_codegen::tool_folders(&tools_dir).unwrap() {
            n += std::fs::read(d.join("TOOL.md")).unwrap().len();
            n += usize::from(d.join("index.ts").is_file());
        }
        n
    });
    let parse = time(runs, || load_tools(&dirs, &opts).unwrap());
    let tools = load_tools(&dirs, &opts).unwrap();
    let rust = time(runs, || emit::rust(&tools, Generator::Build));
    let schemas = time(runs, || {
        Dialect::ALL
            .map(|d| schema::definitions_json(&tools, d))
            .len()
    });
    let prompts = time(runs, || {
        (prompt::system_prompt(&tools), prompt::docs(&tools))
    });
    let total = parse + rust + schemas + prompts;

    println!("## codegen: 1,000 tools x 8 inputs (median of {runs})\n");
    println!("| phase | time | x baseline |");
    println!("| --- | --- | --- |");
    let row = |name: &str, d: Duration| {
        println!(
            "| {name} | {} | {:.1}x |",
            ms(d),
            d.as_secs_f64() / read.as_secs_f64()
        );
    };
    row("baseline: read the same files", read);
    row("parse + validate (incl. reading)", parse);
    row("emit Rust", rust);
    row("emit schemas (6 dialects)", schemas);
    row("emit prompt + docs", prompts);
    row("**total, all emitters**", total);

    if compile {
        compile_bench(
            &tmp,
            std::env::args().any(|a| a == "--outputs"),
            std::env::args().any(|a| a == "--nested"),
            std::env::args().any(|a| a == "--mcp"),
        );
    }
    if std::env::var_os("TOOLBIND_BENCH_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
}

/// rustc's cost for the bindings of 100 tools: a non-incremental debug build of a crate
/// that includes them, against the same crate with no tools (dependencies already built,
/// both measured here); then an incremental rebuild after one tool changed.
fn compile_bench(tmp: &Path, outputs: bool, nested: bool, mcp: bool) {
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap();
    let crate_dir = tmp.join("bindings");
    std::fs::create_dir_all(crate_dir.join("src")).unwrap();
    std::fs::write(
        crate_dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"bindings-bench\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n[dependencies]\ntoolbind = {{ path = {:?}, default-features = false, features = [{}] }}\n\n[workspace]\n",
            workspace.join("runtime").display().to_string(),
            if mcp { "\"mcp\"" } else { "" }
        ),
    )
    .unwrap();
    std::fs::copy(workspace.join("Cargo.lock"), crate_dir.join("Cargo.lock")).unwrap();
    let (bindings, edit_from) = if mcp {
        (mcp_bindings(&workspace), "Echoes back the input")
    } else {
        let hundred = tmp.join("hundred");
        write_tools(&hundred, 100, outputs, nested);
        let tools = load_tools(&[hundred], &Options::default()).unwrap();
        (
            emit::rust(&tools, Generator::Build),
            "Generated tool number 0;",
        )
    };
    assert!(bindings.contains(edit_from));
    let empty = emit::rust(&[], Generator::Build);
    let target = workspace.join("target/bench-compile");
    let build_with = |src: &str, incremental: &str| {
        std::fs::write(crate_dir.join("src/lib.rs"), src).unwrap();
        let t = Instant::now();
        let out = Command::new(env!("CARGO"))
            .args(["build", "--offline", "-q"])
            .current_dir(&crate_dir)
            .env("CARGO_TARGET_DIR", &target)
            .env("CARGO_INCREMENTAL", incremental)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        t.elapsed()
    };
    let build = |src: &str| build_with(src, "0");
    build(&empty); // dependencies
    let mut base = Vec::new();
    let mut full = Vec::new();
    for i in 0..3 {
        // A comment that changes each time forces rustc to rebuild the crate itself.
        base.push(build(&format!("{empty}\n// {i}\n")));
        full.push(build(&format!("{bindings}\n// {i}\n")));
    }
    let (base, full) = (median(base), median(full));
    // What a user pays after editing one TOOL.md: an incremental rebuild where one tool's
    // description (in its docs, schema and consts) changed.
    build_with(&bindings, "1");
    let mut edit = Vec::new();
    for i in 0..3 {
        let edited = bindings.replace(edit_from, &format!("{edit_from} (edit {i})"));
        edit.push(build_with(&edited, "1"));
    }
    let edit = median(edit);
    let (title, what, edited) = if mcp {
        (
            "the three MCP reference servers (36 tools, median of 3)".to_owned(),
            "the three servers' bindings",
            "one tool's description changed",
        )
    } else {
        let mut with = String::new();
        if nested {
            with.push_str(" + a nested object input");
        }
        if outputs {
            with.push_str(" + typed outputs (an enum, a number, a list of objects)");
        }
        (
            format!("100 tools x 8 inputs{with} (median of 3)"),
            "100 tools' bindings",
            "one tool's TOOL.md changed",
        )
    };
    println!("\n## rustc: debug build of the bindings of {title}\n");
    println!("| crate | build time |");
    println!("| --- | --- |");
    println!("| baseline: same crate, no tools | {} |", ms(base));
    println!(
        "| with {what} ({} lines) | {} |",
        bindings.lines().count(),
        ms(full)
    );
    println!(
        "| **cost of the bindings** | {} ({:.1}x baseline) |",
        ms(full.saturating_sub(base)),
        full.as_secs_f64() / base.as_secs_f64()
    );
    println!("| incremental rebuild after {edited} | {} |", ms(edit));
}

/// The bindings `Config::mcp_snapshot` generates for the three reference servers'
/// snapshots, as build.rs would include them.
fn mcp_bindings(workspace: &Path) -> String {
    use toolbind_codegen::emit::{McpServerCode, rust_with_mcp};
    use toolbind_codegen::mcp::{Snapshot, tool_specs};
    let servers: Vec<McpServerCode> = ["everything", "filesystem", "memory"]
        .iter()
        .map(|name| {
            let file = workspace.join(format!("tests/ui/fixtures/mcp/{name}.json"));
            let (snapshot, _) = Snapshot::read(&file).unwrap_or_else(|e| panic!("{e:?}"));
            McpServerCode::new(
                (*name).to_owned(),
                snapshot.name.clone(),
                format!("{} {}", snapshot.server.name, snapshot.server.version),
                file.display().to_string(),
                tool_specs(&snapshot, ""),
            )
        })
        .collect();
    rust_with_mcp(&[], &servers, Generator::Build, "::toolbind")
}
