//! A snapshot's tools as the `ToolSpec`s code is generated from, under provider-facing
//! names.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::diagnostic::{Diagnostic, Pos};
use crate::model::{Annotations, OutputField};

use super::snapshot::{Snapshot, SnapshotTool};

/// The most characters of a provider-facing tool name (OpenAI's and Anthropic's limit).
pub const MAX_PROVIDER_NAME: usize = 64;

/// The name a model calls MCP tool `name` by, with `prefix` (from
/// [`Config::mcp_prefix`](crate::Config::mcp_prefix), usually empty) in front: unchanged
/// when every provider accepts it (`[A-Za-z0-9_-]{1,64}`), else with every other character
/// made `_`, cut to fit, and `_` plus 8 hex digits of the SHA-256 of the original
/// appended, so that two names never map to one (`files/read.text` →
/// `files_read_text_1f0c3a9b`). Generated code keeps the map both ways.
pub fn provider_name(prefix: &str, name: &str) -> String {
    let full = format!("{prefix}{name}");
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if !full.is_empty() && full.len() <= MAX_PROVIDER_NAME && full.chars().all(ok) {
        return full;
    }
    let digest = Sha256::digest(full.as_bytes());
    let tag: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    let mut stem: String = full
        .chars()
        .map(|c| if ok(c) { c } else { '_' })
        .take(MAX_PROVIDER_NAME - 9)
        .collect();
    while stem.ends_with('_') {
        stem.pop();
    }
    if stem.is_empty() {
        stem.push_str("tool");
    }
    format!("{stem}_{tag}")
}

/// The tools of a snapshot as the model every emitter reads, provider names built with
/// `prefix`, plus the warnings of mapping their schemas (each at its line and column in
/// the snapshot file).
pub fn tool_specs(snapshot: &Snapshot, prefix: &str) -> Vec<crate::model::ToolSpec> {
    use crate::ident;
    use crate::model::{Body, Execution, McpOrigin, ToolSandbox, WorkerMode};
    let at = |ptr: &str| (snapshot.file.clone(), snapshot.position(ptr));
    let mut out: Vec<crate::model::ToolSpec> = Vec::new();
    for t in &snapshot.tools {
        let base = snapshot
            .tool_pointer(&t.name)
            .unwrap_or_else(|| "/tools/0".to_owned());
        let mut m = crate::from_schema::Mapper::new(
            &t.input_schema,
            format!("{base}/inputSchema"),
            &at,
            &["Params", "Tool", "Output"],
        );
        let inputs = m.params();
        let mut warnings = m.warnings;
        let outputs = typed_outputs(t, &at(&format!("{base}/outputSchema")), &mut warnings);
        let name = provider_name(prefix, &t.name);
        let module_base = ident::module_name(&t.name);
        let rust_module = ident::unique(&module_base, |c| out.iter().any(|o| o.rust_module == c));
        let type_base = ident::type_name(&t.name);
        let rust_type = ident::unique(&type_base, |c| out.iter().any(|o| o.rust_type == c));
        let annotations = annotations_of(t);
        let description = t.description.clone().unwrap_or_default();
        let body = Body {
            markdown: description.trim().to_owned(),
            ..Body::default()
        };
        out.push(crate::model::ToolSpec {
            label: t.title.clone().unwrap_or_else(|| t.name.clone()),
            name,
            description,
            version: 0,
            language: crate::model::Language::default(),
            inputs,
            outputs,
            prompt_snippet: None,
            prompt_guidelines: Vec::new(),
            timeout_secs: None,
            env: Vec::new(),
            annotations,
            worker: WorkerMode::default(),
            sandbox: ToolSandbox::default(),
            execution: Execution::default(),
            discovery: crate::model::DiscoveryMode::default(),
            task: crate::model::TaskSupport::default(),
            approval: crate::model::Approval::default(),
            asks: Vec::new(),
            bash_output: crate::model::BashOutput::Text,
            body,
            dir: snapshot
                .file
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
            file: snapshot.file.clone(),
            entry: None,
            rust_module,
            rust_type,
            metadata: Default::default(),
            mcp: Some(McpOrigin {
                server: snapshot.name.clone(),
                name: t.name.clone(),
                contract: t.contract.clone(),
                input_schema: t.input_schema.clone(),
                output_schema: t.output_schema.clone(),
            }),
            warnings,
        });
    }
    out
}

/// A tool's `outputSchema` as typed outputs; none, with a warning at `at`, when the schema
/// uses what typed outputs cannot hold.
fn typed_outputs(
    t: &SnapshotTool,
    at: &(PathBuf, Pos),
    warnings: &mut Vec<Diagnostic>,
) -> Vec<OutputField> {
    let Some(o) = &t.output_schema else {
        return Vec::new();
    };
    crate::from_schema::outputs(o).unwrap_or_else(|| {
        let (file, pos) = at.clone();
        warnings.push(
            Diagnostic::new(file, pos, format!("tool `{}`: the output schema uses what typed outputs cannot hold (unions, nullable or untyped fields, `$ref`)", t.name))
                .warning()
                .hint("the tool's `Output` is a `serde_json::Value`"),
        );
        Vec::new()
    })
}

/// The MCP tool annotations toolbind reads (the `*Hint` booleans).
fn annotations_of(t: &SnapshotTool) -> Annotations {
    let hint = |key: &str| {
        t.annotations
            .as_ref()
            .and_then(|a| a.get(key))
            .and_then(Value::as_bool)
    };
    Annotations {
        read_only: hint("readOnlyHint"),
        destructive: hint("destructiveHint"),
        idempotent: hint("idempotentHint"),
        open_world: hint("openWorldHint"),
    }
}
