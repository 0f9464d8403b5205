//! Helpers shared by the `exec_*` integration tests: hand-built specs for the fixture
//! tools, calls, and process-group inspection through /proc.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use toolbind::exec::{ExecCall, Executor, ProgressSink};
use toolbind::exec::{ExecConfig, SubprocessExecutor};
use toolbind::{CancelToken, Progress, ToolInfo, ToolResult};
use toolbind_codegen::model::{Input, Language};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/exec")
        .join(name)
}

/// A tool named `name` in fixture folder `name`, running `entry`: parsed from TOOL.md
/// text, as users get one (the model types cannot be built field by field).
pub fn spec(name: &str, language: Language, entry: &str) -> ToolInfo {
    let dir = fixture(name);
    let md = format!(
        "---\nname: {name}\ndescription: fixture {name}\nversion: 1\nlanguage: {language}\n---\n"
    );
    let opts = toolbind_codegen::Options::default()
        .require_entry(false)
        .portable_names(false);
    let mut spec =
        toolbind_codegen::parse_tool_md(&dir.join("TOOL.md"), &dir, md.as_bytes(), &opts)
            .unwrap_or_else(|d| panic!("fixture spec {name}: {d:?}"));
    spec.entry = Some(entry.to_owned());
    spec.label = name.to_owned();
    spec.into()
}

/// A required string input marked `sensitive: true`.
pub fn sensitive_input(name: &str) -> Input {
    let md = format!(
        "---\nname: holder\ndescription: d\nlanguage: bash\ninputs:\n  {name}:\n    type: string\n    description: a secret\n    sensitive: true\n---\n"
    );
    let opts = toolbind_codegen::Options::default().require_entry(false);
    let mut spec = toolbind_codegen::parse_tool_md(
        std::path::Path::new("holder/TOOL.md"),
        std::path::Path::new("holder"),
        md.as_bytes(),
        &opts,
    )
    .unwrap_or_else(|d| panic!("input {name}: {d:?}"));
    spec.inputs.remove(0)
}

/// An executor whose caches live in a fresh temp dir.
///
/// The sandbox is off here: these tests check the process model itself (process groups,
/// pids a tool reports, the agent's cwd), and in the jail a tool sees namespace-local pids
/// and no host cwd. `tests/sandbox.rs` runs the same kinds of tools in the jail.
pub fn executor(
    tweak: impl FnOnce(ExecConfig) -> ExecConfig,
) -> (SubprocessExecutor, tempfile::TempDir) {
    let cache = tempfile::tempdir().unwrap();
    let config = ExecConfig::default()
        .cache_dir(cache.path().to_path_buf())
        .grace(Duration::from_millis(500))
        .sandbox(toolbind::sandbox::SandboxPolicy::off());
    (SubprocessExecutor::new(tweak(config)), cache)
}

pub fn params(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("params must be an object, got {other}"),
    }
}

pub async fn call(exec: &SubprocessExecutor, tool: &ToolInfo, p: Value) -> ToolResult {
    run(exec, tool, p, CancelToken::new(), None, None).await
}

pub async fn run(
    exec: &SubprocessExecutor,
    tool: &ToolInfo,
    p: Value,
    cancel: CancelToken,
    progress: Option<ProgressSink>,
    timeout: Option<Duration>,
) -> ToolResult {
    let mut call = ExecCall::new(tool, params(p))
        .tool_call_id("call-1")
        .cancel(cancel);
    call.progress = progress;
    if let Some(t) = timeout {
        call = call.timeout(t);
    }
    exec.execute(call).await
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

/// A sink that wakes the returned `Notify` on every update (a permit is kept if no one
/// waits yet), for a test to act once a call is running.
pub fn notifier() -> (ProgressSink, Arc<tokio::sync::Notify>) {
    let notify = Arc::new(tokio::sync::Notify::new());
    let n = notify.clone();
    let sink: ProgressSink = Arc::new(move |_: Progress| n.notify_one());
    (sink, notify)
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

/// Set in a child process of the test binary that runs one test alone ([`alone`]).
const ALONE_ENV: &str = "TOOLBIND_TEST_ALONE";

/// Runs the test `name` (`FILE::NAME`) alone, in a child process of this test binary, so
/// that what it measures of its process (the peak resident set) is its own and not that
/// of the tests beside it: `true` in the calling test once the child passed (its output
/// printed here), `false` in the child, which then runs the test's body.
pub fn alone(name: &str) -> bool {
    if std::env::var_os(ALONE_ENV).is_some() {
        return false;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(ALONE_ENV, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    print!("{stdout}");
    eprint!("{stderr}");
    assert!(out.status.success(), "{name}, run alone, failed");
    assert!(
        stdout.contains("1 passed"),
        "{name} did not run alone: {stdout}"
    );
    true
}
