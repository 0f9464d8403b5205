//! What the executor benches share: the echo tools and their specs.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use toolbind::CancelToken;
use toolbind::exec::SubprocessExecutor;
use toolbind::executor::{ExecCall, Executor};

use toolbind_codegen::model::{Annotations, Body, Language, ToolSpec, WorkerMode};

/// An echo tool in each language: its params back as text.
pub const NODE_TOOL: &str = "export async function execute(toolCallId, params) {\n  return { content: [{ type: 'text', text: JSON.stringify(params) }] };\n}\n";
pub const PY_TOOL: &str = "import json\n\ndef execute(tool_call_id, params, signal, on_update):\n    return json.dumps(params)\n";
pub const SH_TOOL: &str = "cat\n";

/// The spec of the echo tool of `language` in `dir`.
pub fn spec(dir: &Path, language: Language, entry: &str, worker: WorkerMode) -> ToolSpec {
    ToolSpec {
        name: format!("echo_{}", language.as_str()),
        label: "echo".into(),
        description: "echo".into(),
        version: 1,
        language,
        inputs: Vec::new(),
        prompt_snippet: None,
        prompt_guidelines: Vec::new(),
        timeout_secs: None,
        env: Vec::new(),
        annotations: Annotations::default(),
        worker,
        sandbox: Default::default(),
        execution: Default::default(),
        body: Body::default(),
        dir: dir.to_path_buf(),
        file: dir.join("TOOL.md"),
        entry: Some(entry.into()),
        rust_module: "echo".into(),
        rust_type: "Echo".into(),
        metadata: Default::default(),
        warnings: Vec::new(),
    }
}

/// The echo tools' params.
pub fn params() -> Map<String, Value> {
    match json!({"text": "hello", "n": 1}) {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

/// One call through the executor, timed; panics on a wrong answer.
pub async fn one_call(exec: &SubprocessExecutor, tool: &ToolSpec) -> Duration {
    let start = Instant::now();
    let r = exec
        .execute(ExecCall {
            tool,
            tool_call_id: "bench",
            params: params(),
            cancel: CancelToken::new(),
            progress: None,
            log: None,
            timeout: None,
        })
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
