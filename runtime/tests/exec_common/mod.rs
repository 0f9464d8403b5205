//! Helpers shared by the `exec_*` integration tests: hand-built specs for the fixture
//! tools, calls, and process-group inspection through /proc.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use toolbind::exec::{ExecConfig, SubprocessExecutor};
use toolbind::executor::{ExecCall, Executor, ProgressSink};
use toolbind::{CancelToken, Progress, ToolResult};
use toolbind_codegen::model::{
    Annotations, Body, Input, InputType, Language, ToolSpec, WorkerMode,
};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/exec")
        .join(name)
}

pub fn spec(name: &str, language: Language, entry: &str) -> ToolSpec {
    let dir = fixture(name);
    ToolSpec {
        name: name.to_owned(),
        label: name.to_owned(),
        description: format!("fixture {name}"),
        version: 1,
        language,
        inputs: Vec::new(),
        prompt_snippet: None,
        prompt_guidelines: Vec::new(),
        timeout_secs: None,
        env: Vec::new(),
        annotations: Annotations::default(),
        worker: WorkerMode::Default,
        sandbox: Default::default(),
        execution: Default::default(),
        body: Body::default(),
        file: dir.join("TOOL.md"),
        dir,
        entry: Some(entry.to_owned()),
        rust_module: name.to_owned(),
        rust_type: name.to_owned(),
        metadata: Default::default(),
        warnings: Vec::new(),
    }
}

pub fn sensitive_input(name: &str) -> Input {
    Input {
        name: name.to_owned(),
        rust_name: name.to_owned(),
        ty: InputType::String,
        description: "a secret".into(),
        optional: false,
        sensitive: true,
        values: Vec::new(),
        default: None,
        pos: Default::default(),
        rust_enum: String::new(),
        metadata: Default::default(),
    }
}

/// An executor whose caches live in a fresh temp dir.
///
/// The sandbox is off here: these tests check the process model itself (process groups,
/// pids a tool reports, the agent's cwd), and in the jail a tool sees namespace-local pids
/// and no host cwd. `tests/sandbox.rs` runs the same kinds of tools in the jail.
pub fn executor(tweak: impl FnOnce(&mut ExecConfig)) -> (SubprocessExecutor, tempfile::TempDir) {
    let cache = tempfile::tempdir().unwrap();
    let mut config = ExecConfig {
        cache_dir: cache.path().to_path_buf(),
        grace: Duration::from_millis(500),
        sandbox: toolbind::exec::SandboxPolicy::off(),
        ..ExecConfig::default()
    };
    tweak(&mut config);
    (SubprocessExecutor::new(config), cache)
}

pub fn params(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("params must be an object, got {other}"),
    }
}

pub async fn call(exec: &SubprocessExecutor, tool: &ToolSpec, p: Value) -> ToolResult {
    run(exec, tool, p, CancelToken::new(), None, None).await
}

pub async fn run(
    exec: &SubprocessExecutor,
    tool: &ToolSpec,
    p: Value,
    cancel: CancelToken,
    progress: Option<ProgressSink>,
    timeout: Option<Duration>,
) -> ToolResult {
    exec.execute(ExecCall {
        tool,
        tool_call_id: "call-1",
        params: params(p),
        cancel,
        progress,
        log: None,
        timeout,
    })
    .await
}

/// A progress sink that records every update's text.
pub fn recorder() -> (ProgressSink, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let sink: ProgressSink = Arc::new(move |p: Progress| {
        let text: Vec<String> = p
            .content
            .iter()
            .filter_map(|c| c.as_text().map(str::to_owned))
            .collect();
        s.lock().unwrap().push(text.join("\n"));
    });
    (sink, seen)
}

/// A sink that cancels `cancel` on the first update and records the update texts.
pub fn cancel_on_first_update(cancel: CancelToken) -> (ProgressSink, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let sink: ProgressSink = Arc::new(move |p: Progress| {
        s.lock().unwrap().push(
            p.content
                .iter()
                .filter_map(|c| c.as_text())
                .collect::<Vec<_>>()
                .join("\n"),
        );
        cancel.cancel();
    });
    (sink, seen)
}

/// Live (non-zombie) processes whose process group is `pgid`.
pub fn group_members(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 2..].split(' ').collect();
        // fields[0] = state, [1] = ppid, [2] = pgrp
        if fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string() {
            out.push(pid);
        }
    }
    out
}

pub fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rfind(')').map(|i| s[i + 2..].starts_with('Z')))
        .is_some_and(|zombie| !zombie)
}

/// Waits until no live process is left in group `pgid`; returns the survivors otherwise.
pub async fn group_gone(pgid: i32, within: Duration) -> Vec<i32> {
    let start = Instant::now();
    loop {
        let left = group_members(pgid);
        if left.is_empty() || start.elapsed() > within {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}
