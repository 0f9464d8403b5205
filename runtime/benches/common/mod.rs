//! What the executor benches share: the echo tools and their specs.
// Each bench uses a part of it.
#![allow(dead_code)]

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use toolbind::ToolInfo;
use toolbind::exec::SubprocessExecutor;
use toolbind::exec::{ExecCall, Executor};
use toolbind_codegen::model::{Language, WorkerMode};

/// An echo tool in each language: its params back as text.
pub const NODE_TOOL: &str = "export async function execute(toolCallId, params) {\n  return { content: [{ type: 'text', text: JSON.stringify(params) }] };\n}\n";
pub const PY_TOOL: &str = "import json\n\ndef execute(tool_call_id, params, signal, on_update):\n    return json.dumps(params)\n";
pub const SH_TOOL: &str = "cat\n";

/// The spec of the echo tool of `language` in `dir`, parsed from TOOL.md text.
pub fn spec(dir: &Path, language: Language, entry: &str, worker: WorkerMode) -> ToolInfo {
    let md = format!(
        "---\nname: echo_{language}\nlabel: echo\ndescription: echo\nversion: 1\nlanguage: {language}\n---\n"
    );
    let opts = toolbind_codegen::Options::default().require_entry(false);
    let mut spec = toolbind_codegen::parse_tool_md(&dir.join("TOOL.md"), dir, md.as_bytes(), &opts)
        .expect("the echo TOOL.md parses");
    spec.entry = Some(entry.into());
    spec.worker = worker;
    spec.into()
}

/// The echo tools' params.
pub fn params() -> Map<String, Value> {
    match json!({"text": "hello", "n": 1}) {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

/// One call through the executor, timed; panics on a wrong answer.
pub async fn one_call(exec: &SubprocessExecutor, tool: &ToolInfo) -> Duration {
    let start = Instant::now();
    let r = exec
        .execute(ExecCall::new(tool, params()).tool_call_id("bench"))
        .await;
    let d = start.elapsed();
    assert!(!r.is_error && r.text_content().contains("hello"), "{r:?}");
    d
}

/// The median.
pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Milliseconds, two decimals.
pub fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// The real python behind a pyenv shim: the jail resolves it itself, and the shim's own
/// start-up (~100 ms of bash) would flatter the jail.
pub fn real_python() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Whether `name` is one of the comma list in environment variable `var` (all are when it
/// is unset).
pub fn selected(var: &str, name: &str) -> bool {
    std::env::var(var).map_or(true, |list| list.split(',').any(|l| l.trim() == name))
}
