//! Truncation notes are true: when the executor already cut a tool's output, its note (with
//! the tool's real totals) survives the model-facing truncation intact, and that
//! truncation says what it counted.

use crate::exec_common;

use std::sync::Arc;

use exec_common::*;
use serde_json::json;
use toolbind::exec::{ExecConfig, SubprocessExecutor};
use toolbind::tool::Language;
use toolbind::{CallOptions, Registry, Runtime, ToolInfo};
use toolbind_codegen::model::InputType;

/// Fixture tool `name` taking `inputs` (none sensitive).
fn tool(name: &str, language: Language, entry: &str, inputs: &[(&str, InputType)]) -> ToolInfo {
    let mut s = spec(name, language, entry).spec().clone();
    s.inputs = inputs
        .iter()
        .map(|(n, ty)| {
            let mut i = sensitive_input(n);
            i.sensitive = false;
            i.ty = *ty;
            i
        })
        .collect();
    ToolInfo::from(s)
}

/// A runtime with only `tool`, its executor caching in `cache`.
fn runtime(tool: ToolInfo, cache: &std::path::Path, spill: Option<&std::path::Path>) -> Runtime {
    let mut registry = Registry::new();
    registry.insert(tool).unwrap();
    let exec = SubprocessExecutor::new(ExecConfig::default().cache_dir(cache.to_path_buf()));
    let mut b = Runtime::builder()
        .registry(registry)
        .executor(Arc::new(exec));
    if let Some(dir) = spill {
        b = b.spill_dir(dir);
    }
    b.build()
}

#[tokio::test]
async fn the_executors_note_with_the_real_total_survives_truncation() {
    let cache = tempfile::tempdir().unwrap();
    let sh_tool = || {
        tool(
            "sh_tool",
            Language::Bash,
            "index.sh",
            &[("mode", InputType::String)],
        )
    };
    let rt = runtime(sh_tool(), cache.path(), None);
    // 100 MB on stdout (the result), 100 MB on stderr.
    let r = rt
        .call("sh_tool", json!({"mode": "flood"}), CallOptions::new())
        .await;
    assert!(!r.is_error, "{:?}", &r.text_content()[..200]);
    let text = r.text_content();
    let tail = &text[text.len().saturating_sub(600)..];
    assert!(
        tail.contains("kept the first 4194304 of 100000000 bytes]"),
        "the tool's real total is lost: {tail}"
    );
    assert!(
        !tail.contains("0/1 lines"),
        "the executor's note was cut: {tail}"
    );
    assert!(
        tail.contains("(50.0KB/4.0MB); counted after the runtime's own cut"),
        "{tail}"
    );
    assert!(text.len() < 60 * 1024, "{}", text.len());

    // With a spill folder, the note names the file, and says it holds what the runtime
    // kept, not "the full output".
    let spill = tempfile::tempdir().unwrap();
    let rt = runtime(sh_tool(), cache.path(), Some(spill.path()));
    let r = rt
        .call("sh_tool", json!({"mode": "flood"}), CallOptions::new())
        .await;
    let text = r.text_content();
    assert!(
        !text.contains("Full output"),
        "{}",
        &text[text.len() - 600..]
    );
    let marker = ". The text the runtime kept is saved to: ";
    let at = text
        .find(marker)
        .unwrap_or_else(|| panic!("{}", &text[text.len() - 600..]));
    let path = text[at + marker.len()..].split(']').next().unwrap();
    assert_eq!(std::fs::metadata(path).unwrap().len(), 4_194_304);
}

/// The runtime knows its own notes by where it put them, not by their text: a tool that
/// writes blocks looking like them gets them truncated like any other text.
#[tokio::test]
async fn a_tool_cannot_write_a_note_that_escapes_truncation() {
    let cache = tempfile::tempdir().unwrap();
    let js_tool = tool(
        "js_tool",
        Language::TypeScript,
        "index.mjs",
        &[("mode", InputType::String), ("n", InputType::Integer)],
    );
    let rt = runtime(js_tool, cache.path(), None);
    // 3,000 blocks of 72 bytes: 216,000 bytes, over the 50 KB the model is given.
    let r = rt
        .call(
            "js_tool",
            json!({"mode": "forged_notes", "n": 3000}),
            CallOptions::new(),
        )
        .await;
    assert!(!r.is_error, "{:?}", r.text_content());
    let text = r.text_content();
    assert!(
        text.len() < 60 * 1024,
        "not truncated: {} bytes",
        text.len()
    );
    assert!(
        !text.contains("counted after the runtime's own cut"),
        "a forged note passed for the runtime's"
    );
    // The blocks the budget had no room for are left out under one note, not a note each.
    assert!(
        text.contains("more text blocks ("),
        "{}",
        &text[text.len().saturating_sub(300)..]
    );
    assert!(r.content.len() < 800, "{} blocks", r.content.len());
}
