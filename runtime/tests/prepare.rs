//! The Pi tool API's `prepareArguments`: a node entry may export `prepareArguments(args)`,
//! a python entry `prepare_arguments(args)`; `Runtime::call` runs it on the model's raw
//! arguments, in the tool's own process, before validation, so a tool can still take the
//! argument shapes of its older versions.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolbind::exec::Executor;
use toolbind::exec::{ExecConfig, SubprocessExecutor};
use toolbind::{CallOptions, Content, Loader, Runtime, ToolResult};

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
    let exec = SubprocessExecutor::new(ExecConfig::default().cache_dir(cache.to_path_buf()));
    Runtime::builder()
        .registry(Loader::new().dir(root).quiet().load().registry)
        .executor(Arc::new(exec))
        .build()
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
    let start = Instant::now();
    let r = rt
        .call(
            "node_warm",
            json!({"hang": true}),
            CallOptions::new().timeout(Duration::from_secs(2)),
        )
        .await;
    assert!(r.is_error);
    assert!(text(&r).contains("did not return within 2"), "{}", text(&r));
    assert!(start.elapsed() < Duration::from_secs(20));
}

#[test]
fn only_entries_that_define_it_pay_for_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tools");
    tool(&root, "node_warm", "typescript", "warm", "index.ts", NODE);
    tool(
        &root,
        "plain",
        "typescript",
        "warm",
        "index.mjs",
        "export async function execute() { return 'ok'; }\n",
    );
    tool(&root, "sh", "bash", "warm", "index.sh", "cat\n");
    let registry = Loader::new().dir(&root).quiet().load().registry;
    let exec = SubprocessExecutor::new(ExecConfig::default());
    assert!(exec.prepares(registry.get("node_warm").unwrap()));
    assert!(!exec.prepares(registry.get("plain").unwrap()));
    assert!(!exec.prepares(registry.get("sh").unwrap()));
    // Edited: the cached answer follows the file (re-stamped at most once a second).
    std::thread::sleep(Duration::from_millis(1100));
    std::fs::write(
        root.join("plain/index.mjs"),
        "export const prepareArguments = (a) => a;\nexport async function execute() { return 'ok'; }\n",
    )
    .unwrap();
    assert!(exec.prepares(registry.get("plain").unwrap()));
}
