//! What the executor benches share: the echo tools and their specs.

use std::path::Path;

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
