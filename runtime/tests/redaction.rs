//! Secrets are redacted in everything that leaves a call, at one choke point
//! (`Runtime::call`): progress, result text, details, errors, the stderr tail, spill files,
//! and the JSON-escaped forms of the value.

use crate::exec_common;

use std::sync::{Arc, Mutex};

use exec_common::*;
use serde_json::{Value, json};
use toolbind::exec::{ExecConfig, SubprocessExecutor};
use toolbind::tool::Language;
use toolbind::{CallOptions, Registry, Runtime, ToolResult};
use toolbind_codegen::model::InputType;

/// JSON-special characters and a non-ASCII one, so escaped forms differ from the raw one.
const TOKEN: &str = "sk-\"live\"\\ü-9Q7XwZ31";
/// A part of the token no escaping changes: it must never be seen.
const TAIL: &str = "9Q7XwZ31";

fn runtime(cache: &std::path::Path, spill: &std::path::Path) -> Runtime {
    let tool = spec("py_sync", Language::Python, "index.py");
    let plain = |name: &str, ty: InputType| {
        let mut i = sensitive_input(name);
        i.sensitive = false;
        i.optional = true;
        i.ty = ty;
        i
    };
    let tool = toolbind::ToolInfo::from({
        let mut s = tool.spec().clone();
        s.inputs = vec![
            plain("mode", InputType::String),
            plain("what", InputType::String),
            sensitive_input("token"),
        ];
        s
    });
    let mut registry = Registry::new();
    registry.insert(tool).unwrap();
    let exec = SubprocessExecutor::new(ExecConfig::default().cache_dir(cache.to_path_buf()));
    Runtime::builder()
        .registry(registry)
        .executor(Arc::new(exec))
        .spill_dir(spill)
        .build()
}

async fn leak(rt: &Runtime, what: &str) -> (ToolResult, Vec<String>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let opts = CallOptions::new().progress(move |p| {
        s.lock().unwrap().push(serde_json::to_string(&p).unwrap());
    });
    let r = rt
        .call(
            "py_sync",
            json!({"mode": "leak", "what": what, "token": TOKEN}),
            opts,
        )
        .await;
    let seen = seen.lock().unwrap().clone();
    (r, seen)
}

fn assert_clean(what: &str, text: &str) {
    assert!(!text.contains(TAIL), "{what}: the secret leaked: {text}");
}

#[tokio::test]
async fn secrets_are_redacted_from_everything_that_leaves_a_call() {
    let cache = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let rt = runtime(cache.path(), spill.path());

    let (r, progress) = leak(&rt, "progress").await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(progress.len(), 1);
    assert!(progress[0].contains("using [REDACTED]"), "{progress:?}");
    assert_clean("progress", &progress[0]);

    let (r, _) = leak(&rt, "result").await;
    assert!(!r.is_error, "{r:?}");
    let all = serde_json::to_string(&r).unwrap();
    assert_clean("result and details", &all);
    assert!(
        r.text_content().starts_with("raw [REDACTED] json "),
        "{all}"
    );
    assert_eq!(
        r.details.as_ref().unwrap()["echo"]["token"],
        Value::from("[REDACTED]")
    );

    let (r, _) = leak(&rt, "error").await;
    assert!(
        r.is_error && r.text_content().contains("bad token [REDACTED]"),
        "{r:?}"
    );
    assert_clean("error", &serde_json::to_string(&r).unwrap());

    let (r, _) = leak(&rt, "stderr").await;
    assert!(
        r.is_error && r.text_content().contains("exited with code 5"),
        "{r:?}"
    );
    assert_clean("stderr tail", &r.text_content());

    let (r, _) = leak(&rt, "big").await;
    assert!(r.text_content().contains("Full output saved to"), "{r:?}");
    assert_clean("truncated result", &r.text_content());
    let mut spilled = 0;
    for f in std::fs::read_dir(spill.path()).unwrap() {
        let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
        assert!(text.contains("line [REDACTED]"));
        assert_clean("spill file", &text);
        spilled += 1;
    }
    assert_eq!(spilled, 1);
}

#[tokio::test]
async fn values_too_short_to_redact_are_left_alone() {
    let cache = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let rt = runtime(cache.path(), spill.path());
    let r = rt
        .call(
            "py_sync",
            json!({"mode": "leak", "what": "error", "token": "ab12"}),
            CallOptions::new(),
        )
        .await;
    // Redacting every "ab12" would corrupt ordinary text; documented at
    // `toolbind::secret::MIN_REDACTED_CHARS`.
    assert!(r.text_content().contains("bad token ab12"), "{r:?}");
}

#[tokio::test]
async fn a_secret_sent_in_the_wrong_field_is_not_echoed_by_the_validation_error() {
    let tool = spec("py_sync", Language::Python, "index.py");
    let mut level = sensitive_input("level");
    level.sensitive = false;
    level.ty = InputType::Enum;
    level.values = vec![toolbind_codegen::model::EnumValue {
        wire: "low".into(),
        rust: "Low".into(),
    }];
    let tool = toolbind::ToolInfo::from({
        let mut s = tool.spec().clone();
        s.inputs = vec![level, sensitive_input("token")];
        s
    });
    let mut registry = Registry::new();
    registry.insert(tool).unwrap();
    let rt = Runtime::builder().registry(registry).build();
    // An enum error quotes what it received: here, the secret.
    let err = rt
        .check(
            "py_sync",
            json!({"token": "S3cr3tTokenValue99", "level": "S3cr3tTokenValue99"}),
        )
        .err()
        .unwrap();
    let text = err.text_content();
    assert!(text.contains("`level`"), "{text}");
    assert!(!text.contains("S3cr3tTokenValue99"), "{text}");
    let r = rt
        .call(
            "py_sync",
            json!({"token": "S3cr3tTokenValue99", "level": "S3cr3tTokenValue99"}),
            CallOptions::new(),
        )
        .await;
    assert!(r.is_error);
    assert!(!r.text_content().contains("S3cr3tTokenValue99"));
}
