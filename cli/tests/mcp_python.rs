//! `toolbind serve` over stdio, driven by the official MCP Python SDK client
//! (`cli/tests/clients/stdio_surface.py`, installed by `tests/clients/install.sh`):
//! tools, the docs resources and their template, the system prompt, logging (setLevel,
//! tool stderr as `notifications/message`, redaction, the rate limit's dropped count) and
//! progress with totals, for a TypeScript, a Python and a bash tool, and
//! `resources/list_changed` when a TOOL.md body changes.

use crate::common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{bin, clients_dir, copy_dir, fixture};

/// Runs a client script with the SDK's Python, killing it after `limit`; its stdout,
/// stderr and whether it succeeded.
fn python(script: &str, args: &[&std::ffi::OsStr], limit: Duration) -> (String, String, bool) {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients")
        .join(script);
    let mut child = Command::new(clients_dir().join("py/bin/python"))
        .arg(script)
        .args(args)
        .env_remove("PI_TOOLS_DIRS")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the MCP Python client");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (out, err) = (out_t.join().unwrap(), err_t.join().unwrap());
    if status.is_none() {
        panic!("the client did not finish within {limit:?}\n--- stdout\n{out}\n--- stderr\n{err}");
    }
    (out, err, status.is_some_and(|s| s.success()))
}

#[test]
fn the_python_sdk_sees_docs_prompts_logging_and_progress_totals() {
    // A copy: the client edits a TOOL.md to see resources/list_changed.
    let tmp = tempfile::tempdir().unwrap();
    let tools = tmp.path().join("tools");
    copy_dir(&fixture("mcp_tools"), &tools);
    let (out, err, ok) = python(
        "stdio_surface.py",
        &[bin().as_ref(), tools.as_os_str()],
        Duration::from_secs(180),
    );
    assert!(
        ok,
        "the client failed\n--- stdout\n{out}\n--- stderr\n{err}"
    );
    for check in [
        "ok: initialize: resources, prompts and logging capabilities",
        "ok: tools: list, call, bad arguments as isError",
        "ok: resources: one text/markdown page per tool",
        "ok: prompts: system_prompt is exactly `toolbind prompt`",
        "ok: progress totals: report_ts",
        "ok: progress totals: report_py",
        "ok: progress totals: report_sh",
        "ok: logging: report_ts's stderr lines arrive",
        "ok: logging: report_py's stderr lines arrive",
        "ok: logging: report_sh's stderr lines arrive",
        "ok: logging: secrets in stderr lines are redacted",
        "ok: logging: setLevel warning filters stderr lines",
        "ok: logging: a flood of 5000 stderr lines",
        "ok: resources: a changed TOOL.md body sends resources/list_changed",
    ] {
        assert!(
            out.contains(check),
            "missing `{check}`\n--- stdout\n{out}\n--- stderr\n{err}"
        );
    }
}

#[test]
fn the_python_sdk_sees_nested_inputs_and_every_content_block_type() {
    let spill = tempfile::tempdir().unwrap();
    let (out, err, ok) = python(
        "rich_and_nested.py",
        &[
            bin().as_ref(),
            fixture("mcp_rich").as_os_str(),
            spill.path().as_os_str(),
        ],
        Duration::from_secs(120),
    );
    assert!(
        ok,
        "the client failed\n--- stdout\n{out}\n--- stderr\n{err}"
    );
    for check in [
        "ok: tools/list: a nested input's schema",
        "ok: tools/call: text, image, audio, embedded text and blob resources, a resource link",
        "ok: tools/call: a nested mistake is an isError result naming its path",
        "ok: tools/call: an image over the bound is a toolbind://spill/ link, and resources/read serves it whole",
        "ok: tools/call: a truncated text's note names a toolbind://spill/ resource holding it whole",
        "ok: resources/read: a spill name that is a path, hidden, partial or unknown is not found",
    ] {
        assert!(
            out.contains(check),
            "missing `{check}`\n--- stdout\n{out}\n--- stderr\n{err}"
        );
    }
}

#[test]
fn the_python_sdk_answers_approvals_elicitation_sampling_and_roots() {
    let (out, err, ok) = python(
        "asking.py",
        &[bin().as_ref(), fixture("ask_tools").as_os_str()],
        Duration::from_secs(120),
    );
    assert!(
        ok,
        "the client failed\n--- stdout\n{out}\n--- stderr\n{err}"
    );
    for check in [
        "ok: ctx: elicit, confirm, roots and notify reach the client",
        "ok: ctx: sample reaches the client's model",
        "ok: approval: asked as an elicitation, sensitive inputs hidden; yes runs, no denies",
        "ok: a client without the capabilities: the tool is told it cannot be asked",
        "ok: asks: [sampling]: a client without sampling is refused with -32021",
        "ok: 2026-07-28: the SDK's driver answers a tool's questions and approval round by round",
    ] {
        assert!(
            out.contains(check),
            "missing `{check}`\n--- stdout\n{out}\n--- stderr\n{err}"
        );
    }
}
