//! Per-call latency of an echo tool in each language: one-shot through the executor
//! against the bare interpreter doing the same work, and warm-mode p50 and calls/s.
//!
//! `cargo bench -p toolbind --bench exec` (add `-- --quick` for fewer iterations).
//! Prints a Markdown table.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use toolbind::exec::{ExecConfig, SubprocessExecutor};
mod common;

use common::{NODE_TOOL, PY_TOOL, SH_TOOL, median, ms, one_call, params, spec};
use toolbind_codegen::model::{Language, WorkerMode};

const NODE_BARE: &str = "import { execute } from './index.mjs';\nconst r = await execute('bench', JSON.parse(process.argv[2]), undefined);\nprocess.stdout.write(r.content[0].text);\n";
const PY_BARE: &str = "import json, os, sys\nsys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))\nfrom index import execute\nprint(execute('bench', json.loads(sys.argv[1]), None, None))\n";

fn bare(cmd: &mut Command, stdin: Option<&str>) -> Duration {
    use std::io::Write;
    // The same scrubbed environment the executor gives tools (NODE_EXTRA_CA_CERTS alone
    // costs Node ~50 ms of startup).
    cmd.env_clear();
    for name in ["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ", "USER"] {
        if let Some(v) = std::env::var_os(name) {
            cmd.env(name, v);
        }
    }
    let start = Instant::now();
    let mut child = cmd
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let d = start.elapsed();
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains("hello"));
    d
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (one_shot_n, warm_n) = if quick { (10, 300) } else { (40, 3000) };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let langs = [
        (Language::TypeScript, "index.mjs", NODE_TOOL),
        (Language::Python, "index.py", PY_TOOL),
        (Language::Bash, "index.sh", SH_TOOL),
    ];
    for (lang, entry, src) in langs {
        let d = root.join(lang.as_str());
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(entry), src).unwrap();
        std::fs::write(d.join("bare.mjs"), NODE_BARE).unwrap();
        std::fs::write(d.join("bare.py"), PY_BARE).unwrap();
    }
    let exec = SubprocessExecutor::new(ExecConfig::default().cache_dir(root.join("cache")));
    let payload = serde_json::to_string(&params()).unwrap();

    println!(
        "| language | bare interpreter (p50) | one-shot (p50) | ratio | warm p50 | warm calls/s |"
    );
    println!("|---|---|---|---|---|---|");
    for (lang, entry, _) in langs {
        let d = root.join(lang.as_str());
        let one_shot = spec(&d, lang, entry, WorkerMode::OneShot);
        let warm = spec(&d, lang, entry, WorkerMode::Warm);
        let module = d.join(entry);
        // The bare baseline: the same interpreter importing the same module and calling
        // `execute` once from a tiny runner file, without the protocol.
        let bare_cmd = || -> (Command, Option<String>) {
            match lang {
                Language::TypeScript => {
                    let mut c = Command::new("node");
                    c.arg(d.join("bare.mjs")).arg(&payload);
                    (c, None)
                }
                Language::Python => {
                    let mut c = Command::new("python3");
                    c.arg(d.join("bare.py")).arg(&payload);
                    (c, None)
                }
                Language::Bash => {
                    let mut c = Command::new("bash");
                    c.arg(&module);
                    (c, Some(payload.clone()))
                }
            }
        };
        // Warm-up: caches, page cache, the harness file.
        for _ in 0..3 {
            let (mut c, input) = bare_cmd();
            bare(&mut c, input.as_deref());
            one_call(&exec, &one_shot).await;
        }
        let mut bare_t = Vec::new();
        let mut shot_t = Vec::new();
        // Interleave so machine noise hits both alike.
        for _ in 0..one_shot_n {
            let (mut c, input) = bare_cmd();
            bare_t.push(bare(&mut c, input.as_deref()));
            shot_t.push(one_call(&exec, &one_shot).await);
        }
        let (b, s) = (median(bare_t), median(shot_t));
        let ratio = s.as_secs_f64() / b.as_secs_f64();
        let (warm_p50, rate) = if lang == Language::Bash {
            ("n/a (one-shot)".to_owned(), "n/a".to_owned())
        } else {
            one_call(&exec, &warm).await;
            let mut t = Vec::with_capacity(warm_n);
            let start = Instant::now();
            for _ in 0..warm_n {
                t.push(one_call(&exec, &warm).await);
            }
            let total = start.elapsed();
            (
                ms(median(t)),
                format!("{:.0}", warm_n as f64 / total.as_secs_f64()),
            )
        };
        println!(
            "| {} | {} | {} | {ratio:.2}x | {warm_p50} | {rate} |",
            match lang {
                Language::TypeScript => "node (index.mjs)",
                Language::Python => "python3",
                Language::Bash => "bash",
            },
            ms(b),
            ms(s)
        );
    }
}
