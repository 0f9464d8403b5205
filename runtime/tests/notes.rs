//! Truncation notes are true: when the executor already cut a tool's output, its note (with
//! the tool's real totals) survives the model-facing truncation intact, and that
//! truncation says what it counted.

mod exec_common;

use std::sync::Arc;

use exec_common::*;
use serde_json::json;
use toolbind::exec::{ExecConfig, SubprocessExecutor};
use toolbind::tool::Language;
use toolbind::{CallOptions, Registry, Runtime};
use toolbind_codegen::model::InputType;

#[tokio::test]
async fn the_executors_note_with_the_real_total_survives_truncation() {
    let cache = tempfile::tempdir().unwrap();
    let tool = spec("sh_tool", Language::Bash, "index.sh");
    let mut mode = sensitive_input("mode");
    mode.sensitive = false;
    mode.ty = InputType::String;
    let tool = toolbind::ToolInfo::from({
        let mut s = tool.spec().clone();
        s.inputs = vec![mode];
        s
    });
    let mut registry = Registry::new();
    registry.insert(tool).unwrap();
    let exec = SubprocessExecutor::new(ExecConfig::default().cache_dir(cache.path().to_path_buf()));
    let rt = Runtime::builder()
        .registry(registry)
        .executor(Arc::new(exec))
        .build();
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
    let mut registry = Registry::new();
    let tool = spec("sh_tool", Language::Bash, "index.sh");
    let mut mode = sensitive_input("mode");
    mode.sensitive = false;
    mode.ty = InputType::String;
    let tool = toolbind::ToolInfo::from({
        let mut s = tool.spec().clone();
        s.inputs = vec![mode];
        s
    });
    registry.insert(tool).unwrap();
    let rt = Runtime::builder()
        .registry(registry)
        .executor(Arc::new(SubprocessExecutor::new(
            ExecConfig::default().cache_dir(cache.path().to_path_buf()),
        )))
        .spill_dir(spill.path())
        .build();
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
