//! The Pi tool API's `prepareArguments`: a node entry may export `prepareArguments(args)`,
//! a python entry `prepare_arguments(args)`; `Runtime::call` runs it on the model's raw
//! arguments, in the tool's own process, before validation, so a tool can still take the
//! argument shapes of its older versions. Whether an entry has one is what its
//! harness's hello says, not a search of its text.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolbind::exec::{ExecCall, ExecConfig, Executor, SubprocessExecutor};
use toolbind::sandbox::SandboxPolicy;
use toolbind::{CallOptions, Content, Loader, Runtime, StopReason, ToolResult};

/// A tool whose current shape is `{query, max_results?}`; its entry maps the old shape
/// `{q, maxResults}` onto it.
const TOOL_MD: &str = "---
name: NAME
description: Searches.
language: LANG
worker: WORKER
inputs:
  query:
    type: string
    description: What to search for.
  max_results:
    type: number
    description: How many.
    optional: true
---
";

const NODE: &str = r#"
export function prepareArguments(args) {
  if (args && args.q !== undefined) {
    return { query: args.q, max_results: args.maxResults };
  }
  if (args && args.boom) throw new Error("cannot read this shape");
  if (args && args.hang) return new Promise(() => {});
  return args;
}
export async function execute(id, params) {
  return { content: [{ type: "text", text: JSON.stringify(params) }] };
}
"#;

const PYTHON: &str = r#"
import json, os

def prepare_arguments(args):
    if isinstance(args, dict) and "q" in args:
        return {"query": args["q"], "max_results": args.get("maxResults")}
    if isinstance(args, dict) and args.get("boom"):
        raise ValueError("cannot read this shape")
    return args

def execute(tool_call_id, params, signal, on_update):
    return json.dumps(params, sort_keys=True)
"#;

fn tool(root: &Path, name: &str, lang: &str, worker: &str, file: &str, code: &str) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let md = TOOL_MD
        .replace("NAME", name)
        .replace("LANG", lang)
        .replace("WORKER", worker);
    std::fs::write(dir.join("TOOL.md"), md).unwrap();
    std::fs::write(dir.join(file), code).unwrap();
}

fn runtime(root: &Path, cache: &Path) -> Runtime {
    runtime_with(root, ExecConfig::default().cache_dir(cache.to_path_buf())).0
}

/// A runtime over the tools in `root` and its executor, to ask it what it has learned.
fn runtime_with(root: &Path, config: ExecConfig) -> (Runtime, Arc<SubprocessExecutor>) {
    let exec = Arc::new(SubprocessExecutor::new(config));
    let rt = Runtime::builder()
        .registry(Loader::new().dir(root).quiet().load().registry)
        .executor(exec.clone())
        .build();
    (rt, exec)
}

fn text(r: &ToolResult) -> String {
    match r.content.first() {
        Some(Content::Text { text }) => text.clone(),
        other => panic!("{other:?}"),
    }
}

fn parsed(r: &ToolResult) -> Value {
    assert!(!r.is_error, "{r:?}");
    serde_json::from_str(&text(r)).unwrap_or_else(|e| panic!("{e}: {}", text(r)))
}

#[tokio::test]
async fn old_argument_shapes_are_reshaped_before_validation() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tools");
    tool(&root, "node_warm", "typescript", "warm", "index.ts", NODE);
    tool(
        &root,
        "node_oneshot",
        "typescript",
        "oneshot",
        "index.mjs",
        NODE,
    );
    tool(&root, "py_warm", "python", "warm", "index.py", PYTHON);
    tool(&root, "py_oneshot", "python", "oneshot", "index.py", PYTHON);
    let rt = runtime(&root, &tmp.path().join("cache"));
    for name in ["node_warm", "node_oneshot", "py_warm", "py_oneshot"] {
        // The old shape: without prepareArguments, `q` is unknown and `query` missing.
        assert!(rt.check(name, json!({"q": "rust"})).is_err(), "{name}");
        let r = rt
            .call(
                name,
                json!({"q": "rust", "maxResults": 3}),
                CallOptions::new(),
            )
            .await;
        assert_eq!(
            parsed(&r),
            json!({"query": "rust", "max_results": 3}),
            "{name}"
        );
        // The current shape passes through unchanged.
        let r = rt
            .call(name, json!({"query": "go"}), CallOptions::new())
            .await;
        assert_eq!(parsed(&r), json!({"query": "go"}), "{name}");
        // What prepareArguments returns is still validated.
        let r = rt.call(name, json!({"q": 5}), CallOptions::new()).await;
        assert!(r.is_error, "{name}: {r:?}");
        assert!(text(&r).contains("query"), "{name}: {}", text(&r));
    }
}

#[tokio::test]
async fn a_failing_prepare_is_an_error_result_and_the_worker_lives_on() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tools");
    tool(&root, "node_warm", "typescript", "warm", "index.ts", NODE);
    tool(&root, "py_warm", "python", "warm", "index.py", PYTHON);
    let rt = runtime(&root, &tmp.path().join("cache"));
    for name in ["node_warm", "py_warm"] {
        let r = rt
            .call(name, json!({"boom": true}), CallOptions::new())
            .await;
        assert!(r.is_error, "{name}: {r:?}");
        let t = text(&r);
        assert!(
            t.contains(&format!("tool `{name}` did not run: ")),
            "{name}: {t}"
        );
        assert!(
            t.contains("prepareArguments failed") || t.contains("prepare_arguments failed"),
            "{name}: {t}"
        );
        assert!(t.contains("cannot read this shape"), "{name}: {t}");
        // The worker survives: the next call works.
        let r = rt
            .call(name, json!({"query": "after"}), CallOptions::new())
            .await;
        assert_eq!(parsed(&r), json!({"query": "after"}), "{name}");
    }
}

#[tokio::test]
async fn a_hanging_prepare_is_bounded_by_the_calls_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tools");
    tool(&root, "node_warm", "typescript", "warm", "index.ts", NODE);
    let rt = runtime(&root, &tmp.path().join("cache"));
    let r = tokio::time::timeout(
        Duration::from_secs(30),
        rt.call(
            "node_warm",
            json!({"hang": true}),
            CallOptions::new().timeout(Duration::from_secs(2)),
        ),
    )
    .await
    .expect("the call with a hanging prepare did not end within 30 s");
    assert!(r.is_error);
    assert!(text(&r).contains("did not return within 2"), "{}", text(&r));
}

/// Node entries that record the type of every protocol line their harness receives (the
/// harness parses each with `JSON.parse`) and return it with their params: a `prepare`
/// round trip shows up as a "prepare".
const NODE_SPY: &str = r#"
const seen = [];
const parse = JSON.parse;
JSON.parse = function (text, ...rest) {
  const value = parse.call(this, text, ...rest);
  if (value && typeof value.type === "string") seen.push(value.type);
  return value;
};
export async function execute(id, params) {
  return JSON.stringify({ params, seen });
}
"#;

/// The same in python: the harness parses each line with `json.loads`.
const PYTHON_SPY: &str = r#"
import json
seen = []
_loads = json.loads
def _spy(text, *args, **kwargs):
    value = _loads(text, *args, **kwargs)
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        seen.append(value["type"])
    return value
json.loads = _spy

def execute(tool_call_id, params, signal, on_update):
    return json.dumps({"params": params, "seen": seen})
"#;

/// Mentions the word, in a comment and a string, and exports no such function.
const NODE_MENTION: &str = "// This tool has no prepareArguments(args); a comment only.\nconst note = \"prepareArguments\";\n";
const PYTHON_MENTION: &str =
    "# This tool has no prepare_arguments(args); a comment only.\nNOTE = \"prepare_arguments\"\n";

/// The entry exports one, spying too.
const NODE_SPY_PREPARE: &str =
    "export const prepareArguments = (a) => (a.q !== undefined ? { query: a.q } : a);\n";
const PYTHON_SPY_PREPARE: &str =
    "def prepare_arguments(a):\n    return {\"query\": a[\"q\"]} if \"q\" in a else a\n";

fn seen(r: &ToolResult) -> Vec<String> {
    serde_json::from_value(parsed(r)["seen"].clone()).unwrap()
}

#[tokio::test]
async fn only_entries_that_export_it_get_a_prepare_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tools");
    let node_mention = format!("{NODE_MENTION}{NODE_SPY}");
    let py_mention = format!("{PYTHON_MENTION}{PYTHON_SPY}");
    let node_prepare = format!("{NODE_SPY_PREPARE}{NODE_SPY}");
    let py_prepare = format!("{PYTHON_SPY}{PYTHON_SPY_PREPARE}");
    tool(
        &root,
        "node_mention",
        "typescript",
        "warm",
        "index.mjs",
        &node_mention,
    );
    tool(
        &root,
        "py_mention",
        "python",
        "warm",
        "index.py",
        &py_mention,
    );
    tool(
        &root,
        "node_prepare",
        "typescript",
        "warm",
        "index.mjs",
        &node_prepare,
    );
    tool(
        &root,
        "py_prepare",
        "python",
        "warm",
        "index.py",
        &py_prepare,
    );
    tool(&root, "sh", "bash", "warm", "index.sh", "cat\n");
    let (rt, exec) = runtime_with(
        &root,
        ExecConfig::default().cache_dir(tmp.path().join("cache")),
    );
    let spec = |name: &str| rt.registry().get(name).unwrap().clone();
    // Nothing is known before a harness has said hello: "maybe", except for bash.
    for name in ["node_mention", "py_mention", "node_prepare", "py_prepare"] {
        assert!(exec.prepares(&spec(name)), "{name}");
    }
    assert!(!exec.prepares(&spec("sh")));
    for name in ["node_mention", "py_mention"] {
        // The first call learns from the hello of the worker it runs on: no prepare line.
        let r = rt
            .call(name, json!({"query": "a"}), CallOptions::new())
            .await;
        assert_eq!(seen(&r), ["call"], "{name}");
        assert!(!exec.prepares(&spec(name)), "{name}");
        let r = rt
            .call(name, json!({"query": "b"}), CallOptions::new())
            .await;
        assert_eq!(seen(&r), ["call", "call"], "{name}");
        assert_eq!(parsed(&r)["params"], json!({"query": "b"}), "{name}");
        // Still validated as sent: nothing reshaped the old shape.
        let r = rt.call(name, json!({"q": "c"}), CallOptions::new()).await;
        assert_eq!(r.stop, StopReason::BadArguments, "{name}: {r:?}");
    }
    for name in ["node_prepare", "py_prepare"] {
        let r = rt.call(name, json!({"q": "a"}), CallOptions::new()).await;
        assert_eq!(seen(&r), ["prepare", "call"], "{name}");
        assert_eq!(parsed(&r)["params"], json!({"query": "a"}), "{name}");
        assert!(exec.prepares(&spec(name)), "{name}");
    }
}

#[tokio::test]
async fn a_oneshot_entry_without_it_costs_no_extra_process() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tools");
    let loads = tmp.path().join("loads");
    std::fs::create_dir_all(&loads).unwrap();
    let node_count = "import { appendFileSync } from \"node:fs\";\nappendFileSync(`${process.env.LOADS}/${process.env.TOOL}`, \"load\\n\");\n";
    let py_count = "import os\nwith open(os.path.join(os.environ[\"LOADS\"], os.environ[\"TOOL\"]), \"a\") as f:\n    f.write(\"load\\n\")\n";
    tool(
        &root,
        "node_plain",
        "typescript",
        "oneshot",
        "index.mjs",
        &format!("{node_count}{NODE_MENTION}{NODE_SPY}"),
    );
    tool(
        &root,
        "py_plain",
        "python",
        "oneshot",
        "index.py",
        &format!("{py_count}{PYTHON_MENTION}{PYTHON_SPY}"),
    );
    tool(
        &root,
        "node_prepare",
        "typescript",
        "oneshot",
        "index.mjs",
        &format!("{node_count}{NODE_SPY_PREPARE}{NODE_SPY}"),
    );
    for name in ["node_plain", "py_plain", "node_prepare"] {
        let md = root.join(name).join("TOOL.md");
        let text = std::fs::read_to_string(&md).unwrap();
        std::fs::write(&md, text.replacen("---\n", "---\nenv: [LOADS, TOOL]\n", 1)).unwrap();
    }
    let count = |name: &str| {
        std::fs::read_to_string(loads.join(name))
            .unwrap_or_default()
            .lines()
            .count()
    };
    for name in ["node_plain", "py_plain", "node_prepare"] {
        let (rt, exec) = runtime_with(
            &root,
            ExecConfig::default()
                .cache_dir(tmp.path().join("cache"))
                .env_set([
                    ("LOADS", loads.display().to_string()),
                    ("TOOL", name.to_owned()),
                ])
                .sandbox(SandboxPolicy::new().allow_write(&loads)),
        );
        let spec = rt.registry().get(name).unwrap().clone();
        let r = rt
            .call(name, json!({"query": "a"}), CallOptions::new())
            .await;
        // Unknown: a process is started to read its hello; an entry without
        // `prepareArguments` hands that untouched process to the call (one process per
        // call, as one-shot promises), one with it runs it there and the call gets another.
        assert_eq!(seen(&r), ["call"], "{name}");
        let first = if name == "node_prepare" { 2 } else { 1 };
        assert_eq!(count(name), first, "{name}");
        let r = rt
            .call(name, json!({"query": "b"}), CallOptions::new())
            .await;
        assert_eq!(seen(&r), ["call"], "{name}");
        if name == "node_prepare" {
            // It has one: each call runs it in a process of its own first.
            assert!(exec.prepares(&spec));
            assert_eq!(count(name), 4, "{name}");
        } else {
            // Known: just the call's own process.
            assert!(!exec.prepares(&spec), "{name}");
            assert_eq!(count(name), 2, "{name}");
        }
    }
}

#[tokio::test]
async fn an_edited_entry_is_learned_again() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tools");
    let plain = "export async function execute(id, p) { return JSON.stringify(p); }\n";
    tool(&root, "edited", "typescript", "warm", "index.mjs", plain);
    tool(
        &root,
        "py_edited",
        "python",
        "warm",
        "index.py",
        "import json\ndef execute(i, p, s, u):\n    return json.dumps(p)\n",
    );
    // What a hello said is trusted for the source check interval.
    let interval = Duration::from_millis(500);
    let (rt, exec) = runtime_with(
        &root,
        ExecConfig::default()
            .cache_dir(tmp.path().join("cache"))
            .source_check_interval(interval),
    );
    for (name, file, with) in [
        (
            "edited",
            "index.mjs",
            format!("export const prepareArguments = (a) => (a.q !== undefined ? {{ query: a.q }} : a);\n{plain}"),
        ),
        (
            "py_edited",
            "index.py",
            "import json\ndef prepare_arguments(a):\n    return {\"query\": a[\"q\"]} if \"q\" in a else a\ndef execute(i, p, s, u):\n    return json.dumps(p)\n".to_string(),
        ),
    ] {
        let spec = rt.registry().get(name).unwrap().clone();
        let r = rt.call(name, json!({"q": "x"}), CallOptions::new()).await;
        assert_eq!(r.stop, StopReason::BadArguments, "{name}: {r:?}");
        assert!(!exec.prepares(&spec), "{name}");
        // Edited to add one: picked up at the next check, once the interval has passed.
        std::fs::write(root.join(name).join(file), with).unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while !exec.prepares(&spec) && Instant::now() < deadline {
            tokio::time::sleep(interval / 10).await;
        }
        assert!(exec.prepares(&spec), "{name}: unknown again, so maybe");
        let r = rt.call(name, json!({"q": "x"}), CallOptions::new()).await;
        assert_eq!(parsed(&r), json!({"query": "x"}), "{name}");
        assert!(exec.prepares(&spec), "{name}");
    }
}

#[tokio::test]
async fn an_entry_still_loading_at_the_timeout_fails_the_call() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tools");
    tool(
        &root,
        "slow",
        "typescript",
        "warm",
        "index.mjs",
        "await new Promise((r) => setTimeout(r, 60000));\nexport async function execute() { return 'late'; }\n",
    );
    let rt = runtime(&root, &tmp.path().join("cache"));
    let r = rt
        .call(
            "slow",
            json!({"query": "a"}),
            CallOptions::new().timeout(Duration::from_secs(1)),
        )
        .await;
    assert!(r.is_error);
    assert_eq!(
        text(&r),
        "tool `slow` did not run: index.mjs did not finish loading within 1 s"
    );
}

/// A stand-in for the interpreter that ignores its arguments and writes `first` on fd 3 as
/// its first protocol message: a harness from another toolbind version.
fn fake_interpreter(dir: &Path, first: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(format!("fake-{:x}", first.len()));
    std::fs::write(
        &path,
        format!("#!/bin/sh\nprintf '%s\\n' '{first}' >&3\nexec sleep 30\n"),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

#[tokio::test]
async fn a_harness_speaking_another_protocol_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tools");
    tool(&root, "node_tool", "typescript", "warm", "index.mjs", NODE);
    tool(&root, "py_tool", "python", "oneshot", "index.py", PYTHON);
    let cases = [
        (
            // A harness of the previous version (no ctx questions).
            r#"{"type":"hello","protocol":3,"capabilities":{"prepare":true}}"#,
            "speaks protocol version 3, and this runtime speaks version 4".to_string(),
        ),
        (
            r#"{"type":"hello","protocol":5,"capabilities":{"prepare":true}}"#,
            "speaks protocol version 5, and this runtime speaks version 4".to_string(),
        ),
        // An older harness, without a hello: its answer to the call comes first.
        (
            r#"{"type":"result","id":1,"result":"hi"}"#,
            "first message is `result`, not the hello protocol version 4 begins with".into(),
        ),
        (
            r#"{"type":"greeting","protocol":1}"#,
            "first message is not a hello (protocol version 4)".into(),
        ),
    ];
    for (first, needle) in cases {
        let fake = fake_interpreter(tmp.path(), first);
        let (rt, exec) = runtime_with(
            &root,
            ExecConfig::default()
                .cache_dir(tmp.path().join("cache"))
                .node(fake.clone())
                .python(fake)
                .sandbox(SandboxPolicy::off()),
        );
        for (name, lang) in [("node_tool", "node"), ("py_tool", "python")] {
            // Through the runtime: the hello is read before any prepare, and the call fails.
            let r = rt
                .call(name, json!({"query": "a"}), CallOptions::new())
                .await;
            assert_eq!(r.stop, StopReason::ProtocolError, "{name} {first}: {r:?}");
            let t = text(&r);
            assert!(
                t.contains(&format!("protocol error: the {lang} harness")),
                "{t}"
            );
            assert!(t.contains(&needle), "{name} {first}: {t}");
            // Nothing learned from it.
            let spec = rt.registry().get(name).unwrap();
            assert!(exec.prepares(spec), "{name}");
            // A call on the executor alone fails the same way.
            let r = exec.execute(ExecCall::new(spec, Default::default())).await;
            assert_eq!(r.stop, StopReason::ProtocolError, "{name} {first}: {r:?}");
            assert!(text(&r).contains(&needle), "{name} {first}: {}", text(&r));
        }
        assert_eq!(exec.warm_workers(), 0);
    }
}

/// A one-shot process started to read a hello waits for its call a moment only: when the
/// arguments then fail validation (no call comes), the process is killed, not left idle.
#[tokio::test]
async fn a_oneshot_process_whose_call_never_comes_is_killed() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tools");
    let pids = tmp.path().join("pids");
    // Unjailed, so the pid the tool writes is the host's.
    let code = format!(
        "import {{ appendFileSync }} from \"node:fs\";\nappendFileSync({:?}, `${{process.pid}}\\n`);\n{NODE_SPY}",
        pids.display().to_string()
    );
    tool(&root, "lonely", "typescript", "oneshot", "index.mjs", &code);
    let (rt, _exec) = runtime_with(
        &root,
        ExecConfig::default()
            .cache_dir(tmp.path().join("cache"))
            .sandbox(SandboxPolicy::off()),
    );
    let r = rt
        .call("lonely", json!({"nope": 1}), CallOptions::new())
        .await;
    assert_eq!(r.stop, StopReason::BadArguments, "{r:?}");
    let pid = std::fs::read_to_string(&pids).unwrap();
    let pid: u32 = pid.trim().parse().unwrap();
    let alive = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    };
    // Bounded wait (this test must end), not a speed claim: it goes a second after start.
    for _ in 0..200 {
        if !alive(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the process started for the hello (pid {pid}) is still alive");
}
