//! `toolbind serve --progressive` (cli/src/serve/progressive.rs) with the official MCP
//! clients pinned in tests/clients: the Python SDK (cli/tests/clients/progressive.py), the
//! TypeScript SDK (progressive.mjs) and the MCP Inspector's CLI; and the index kept fresh
//! when the folder is reloaded.

use crate::common;

use std::process::Command;

use common::{bin, clients_dir, copy_dir, output_within, shipped_tools};
use serde_json::{Value, json};

fn checks(out: &std::process::Output, expected: &[&str]) {
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    for check in expected {
        assert!(
            stdout.contains(&format!("ok: {check}")),
            "missing `{check}`\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
        );
    }
}

/// A copy of the shipped tools (their todo state is per tool folder: a fresh one per test).
fn tools() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&shipped_tools(), dir.path());
    dir
}

#[test]
fn the_python_sdk_client_searches_and_calls_through_progressive_serve() {
    let tools = tools();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/progressive.py");
    let mut cmd = Command::new(clients_dir().join("py/bin/python"));
    cmd.arg(script).arg(bin()).arg(tools.path());
    let out = output_within(cmd, 120.0).expect("the Python client finished in time");
    checks(
        &out,
        &[
            "tools/list: the core tool, search_tools and call_tool",
            "search_tools finds a tool not listed, with its input schema",
            "call_tool runs a tool; the tool answers by its own name too",
            "call_tool validates the inner tool's arguments",
            "bad proxy calls are error results",
            "bad searches are error results; no match is an empty list",
        ],
    );
}

#[test]
fn the_typescript_sdk_client_searches_and_calls_through_progressive_serve() {
    let tools = tools();
    // An ES module resolves its imports from its own folder.
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        clients_dir().join("node/node_modules"),
        dir.path().join("node_modules"),
    )
    .unwrap();
    let script = dir.path().join("progressive.mjs");
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/progressive.mjs"),
        &script,
    )
    .unwrap();
    let mut cmd = Command::new("node");
    cmd.arg(&script).arg(bin()).arg(tools.path());
    let out = output_within(cmd, 120.0).expect("the TypeScript client finished in time");
    checks(
        &out,
        &[
            "tools/list holds search_tools and call_tool only",
            "search_tools finds the todo tool",
            "call_tool runs the tool found",
            "a blank query is an error result",
        ],
    );
}

/// The MCP Inspector's CLI (`mcp-inspector --cli`) against `serve --progressive`: its
/// JSON on stdout.
fn inspector(tools: &std::path::Path, method: &[&str]) -> Value {
    let mut cmd = Command::new(clients_dir().join("node/node_modules/.bin/mcp-inspector"));
    cmd.arg("--cli")
        .arg(bin())
        .args(["serve", "--progressive", "--core", "web_fetch", "--dir"])
        .arg(tools)
        .args(method)
        // Its catalog file, kept out of HOME.
        .env("MCP_CATALOG_PATH", tools.join("inspector-catalog.json"));
    let out = output_within(cmd, 120.0).expect("the Inspector finished in time");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{method:?}\n--- stdout\n{stdout}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn the_inspector_cli_lists_searches_and_calls_through_progressive_serve() {
    let tools = tools();
    let listed = inspector(tools.path(), &["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["web_fetch", "search_tools", "call_tool"]);
    let found = inspector(
        tools.path(),
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "search_tools",
            "--tool-arg",
            "query=what is on my todo list",
        ],
    );
    assert_eq!(found["isError"], json!(false), "{found}");
    assert_eq!(
        found["structuredContent"]["tools"][0]["name"], "todo",
        "{found}"
    );
    let called = inspector(
        tools.path(),
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "call_tool",
            "--tool-arg",
            "name=todo",
            r#"arguments={"action": "list"}"#,
        ],
    );
    assert_eq!(called["isError"], json!(false), "{called}");
    assert_eq!(
        called["content"][0]["text"], "Todo list is empty",
        "{called}"
    );
}

#[test]
fn a_tool_added_to_the_folder_is_found_after_the_reload() {
    use common::wire::Wire;
    let tools = tools();
    let args: Vec<std::ffi::OsString> = vec![
        "serve".into(),
        "--progressive".into(),
        "--dir".into(),
        tools.path().into(),
    ];
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let mut wire = Wire::start(&args, "2025-11-25", json!({}));
    let search = |wire: &mut Wire, id: i64| {
        wire.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "search_tools", "arguments": {"query": "feed the quokkas"}}}));
        wire.answer_to(id)["result"]["structuredContent"]["tools"].clone()
    };
    assert_eq!(search(&mut wire, 10), json!([]));
    let d = tools.path().join("quokka_feeder");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(
        d.join("TOOL.md"),
        "---\nname: quokka_feeder\ndescription: Feed the quokkas at the zoo.\nlanguage: bash\n---\n",
    )
    .unwrap();
    std::fs::write(d.join("index.sh"), "echo fed\n").unwrap();
    let mut id = 11;
    let found = common::eventually(20.0, || {
        id += 1;
        search(&mut wire, id)
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["name"] == "quokka_feeder"))
    });
    assert!(found, "the new tool was never found");
}

/// MCP 2026-07-28's `_meta` of a stateless request from a client that can be asked.
fn rounds_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "progressive-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    })
}

#[test]
fn a_tool_that_asks_goes_on_through_call_tool_round_by_round() {
    use common::wire::Wire;
    let tools = common::fixture("ask_tools");
    let args: Vec<&std::ffi::OsStr> = vec![tools.as_os_str(), "--progressive".as_ref()];
    let mut w = Wire::stateless(&args);
    let inner = json!({"name": "two_steps", "arguments": {"greeting": "Hello"}});
    let mut state = Value::Null;
    let mut responses = json!({});
    for (id, (key, answer)) in [
        ("name", json!({"name": "Ada"})),
        ("color", json!({"color": "red"})),
    ]
    .into_iter()
    .enumerate()
    {
        let mut params = json!({"name": "call_tool", "arguments": inner, "_meta": rounds_meta()});
        if !state.is_null() {
            params["requestState"] = state.clone();
            params["inputResponses"] = responses.clone();
        }
        let got = w.request(id as i64 + 1, "tools/call", params);
        let r = &got["result"];
        assert_eq!(r["resultType"], "input_required", "{got}");
        assert!(r["inputRequests"].get(key).is_some(), "{got}");
        state = r["requestState"].clone();
        responses = json!({key: {"action": "accept", "content": answer}});
    }
    let last = w.request(
        9,
        "tools/call",
        json!({"name": "call_tool", "arguments": inner, "_meta": rounds_meta(),
               "requestState": state, "inputResponses": responses}),
    );
    let text = last["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("Ada") && text.contains("red"), "{last}");
}

#[test]
fn a_task_runs_through_call_tool() {
    use common::wire::Wire;
    let tools = common::fixture("task_tools");
    let args: Vec<&std::ffi::OsStr> = vec![tools.as_os_str(), "--progressive".as_ref()];
    let mut w = Wire::start(
        &args,
        "2025-11-25",
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
    );
    let created = w.request(
        1,
        "tools/call",
        json!({"name": "call_tool", "arguments": {"name": "job_py", "arguments": {"seconds": 1}}}),
    );
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    let mut id = 10;
    let done = common::eventually(30.0, || {
        id += 1;
        let got = w.request(id, "tasks/get", json!({"taskId": task}));
        got["result"]["status"] == "completed"
    });
    assert!(done, "the task through call_tool never completed");
}

#[test]
fn a_folder_tool_named_like_ours_is_reached_through_call_tool() {
    use common::wire::Wire;
    let tools = tempfile::tempdir().unwrap();
    let d = tools.path().join("search_tools");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(
        d.join("TOOL.md"),
        "---\nname: search_tools\ndescription: Search the archive.\nlanguage: bash\n---\n",
    )
    .unwrap();
    std::fs::write(d.join("index.sh"), "echo the folder tool ran\n").unwrap();
    let args: Vec<&std::ffi::OsStr> = vec![tools.path().as_os_str(), "--progressive".as_ref()];
    let mut w = Wire::start(&args, "2025-11-25", json!({}));
    let listed = w.request(1, "tools/list", json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["search_tools", "call_tool"], "{listed}");
    let ran = w.request(
        2,
        "tools/call",
        json!({"name": "call_tool", "arguments": {"name": "search_tools"}}),
    );
    assert_eq!(
        ran["result"]["content"][0]["text"], "the folder tool ran",
        "{ran}"
    );
    // By its own name, ours answers.
    let ours = w.request(
        3,
        "tools/call",
        json!({"name": "search_tools", "arguments": {"query": "archive"}}),
    );
    assert!(
        ours["result"]["structuredContent"]["tools"].is_array(),
        "{ours}"
    );
}
