//! Every result says why the call ended, typed ([`StopReason`]): an agent can retry a
//! timeout, fix bad arguments and give up on a crash without parsing text.

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use toolbind::sandbox::{SandboxLimits, SandboxMode, SandboxPolicy};
use toolbind::{CallOptions, CancelToken, Loader, Runtime, StopReason};

fn tool(root: &Path, name: &str, lang: &str, file: &str, code: &str) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("TOOL.md"),
        format!(
            "---\nname: {name}\ndescription: d\nlanguage: {lang}\ninputs:\n  n:\n    type: number\n    description: n\n    optional: true\n---\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.join(file), code).unwrap();
}

fn runtime(root: &Path, policy: SandboxPolicy) -> Runtime {
    Runtime::builder()
        .registry(Loader::new().dir(root).quiet().load().registry)
        .sandbox(policy)
        .build()
}

#[tokio::test]
async fn each_way_a_call_ends_has_its_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    tool(root, "ok_sh", "bash", "index.sh", "echo fine\n");
    tool(
        root,
        "fails_sh",
        "bash",
        "index.sh",
        "echo 'no such file' >&2\nexit 3\n",
    );
    tool(root, "killed_sh", "bash", "index.sh", "kill -9 $$\n");
    tool(root, "sleeps_sh", "bash", "index.sh", "sleep 30\n");
    tool(
        root,
        "is_error_py",
        "python",
        "index.py",
        "def execute(i, p, s, u):\n    return {'content': [{'type': 'text', 'text': 'bad'}], 'isError': True}\n",
    );
    tool(
        root,
        "exits_py",
        "python",
        "index.py",
        "import os\ndef execute(i, p, s, u):\n    os._exit(7)\n",
    );
    tool(
        root,
        "malformed_js",
        "typescript",
        "index.mjs",
        "export async function execute() { return { content: 'not a list' }; }\n",
    );
    tool(
        root,
        "hog_sh",
        "bash",
        "index.sh",
        "python3 -c 'x = bytearray(512 * 1024 * 1024); print(len(x))'\n",
    );
    let limits = SandboxLimits::default().memory(Some(128 << 20));
    let rt = runtime(
        root,
        SandboxPolicy::new()
            .mode(SandboxMode::Required)
            .limits(limits),
    );
    let stop = |r: toolbind::ToolResult| r.stop;
    let call = |name: &'static str, args: serde_json::Value| {
        let rt = &rt;
        async move { rt.call(name, args, CallOptions::new()).await }
    };

    assert_eq!(stop(call("ok_sh", json!({})).await), StopReason::Completed);
    assert_eq!(
        stop(call("fails_sh", json!({})).await),
        StopReason::ToolError
    );
    assert_eq!(
        stop(call("is_error_py", json!({})).await),
        StopReason::ToolError
    );
    assert_eq!(
        stop(call("ok_sh", json!({"n": "many"})).await),
        StopReason::BadArguments
    );
    assert_eq!(
        stop(call("no_such_tool", json!({})).await),
        StopReason::UnknownTool
    );
    assert_eq!(
        stop(call("killed_sh", json!({})).await),
        StopReason::Crashed
    );
    assert_eq!(stop(call("exits_py", json!({})).await), StopReason::Crashed);
    assert_eq!(
        stop(call("malformed_js", json!({})).await),
        StopReason::ProtocolError
    );
    let hog = call("hog_sh", json!({})).await;
    assert_eq!(
        hog.stop,
        StopReason::LimitExceeded {
            limit: toolbind::result::Limit::Memory
        },
        "{}",
        hog.text_content()
    );

    let r = rt
        .call(
            "sleeps_sh",
            json!({}),
            CallOptions::new().timeout(Duration::from_millis(300)),
        )
        .await;
    assert_eq!(
        r.stop,
        StopReason::Timeout {
            after: Duration::from_millis(300)
        }
    );
    let cancel = CancelToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        c.cancel();
    });
    let r = rt
        .call("sleeps_sh", json!({}), CallOptions::new().cancel(cancel))
        .await;
    assert_eq!(r.stop, StopReason::Cancelled, "{}", r.text_content());

    // A grant that does not exist: the jail cannot be built.
    let jail = runtime(
        root,
        SandboxPolicy::new()
            .mode(SandboxMode::Required)
            .allow_read(root.join("no-such-folder")),
    );
    let r = jail.call("ok_sh", json!({}), CallOptions::new()).await;
    assert_eq!(r.stop, StopReason::JailFailed, "{}", r.text_content());
    // The reason stays off the wire.
    let wire = serde_json::to_value(&r).unwrap();
    assert!(wire.get("stop").is_none(), "{wire}");
}
