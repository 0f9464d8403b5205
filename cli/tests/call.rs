//! `toolbind call`: real tools in each language, progress on stderr, exit codes, and
//! Ctrl-C cancellation that leaves no tool process behind.

use crate::common;

use std::io::Write;
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use common::{assert_code, eventually, fixture, live_group_members, stderr, stdout, toolbind};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;

const LANGS: [(&str, &str); 3] = [("ts", "typescript"), ("py", "python"), ("sh", "bash")];

fn call(args: &[&str]) -> Output {
    toolbind()
        .arg("call")
        .args(args)
        .args(["--dir", fixture("tools").to_str().unwrap()])
        .output()
        .unwrap()
}

#[test]
fn runs_a_tool_in_each_language_with_progress_on_stderr() {
    for (suffix, lang) in LANGS {
        let o = call(&[
            &format!("hello_{suffix}"),
            "--args",
            r#"{"name": "Ada", "steps": 3}"#,
        ]);
        assert_code(&o, 0);
        assert_eq!(stdout(&o), format!("Hello, Ada! ({lang})\n"));
        // Progress is rate-limited (updates within 50 ms coalesce): in order, never
        // duplicated, and the latest always arrives.
        let err = stderr(&o);
        let all = ["step 1 of 3", "step 2 of 3", "step 3 of 3"].map(|s| format!("progress: {s}"));
        let mut rest = all.iter();
        assert!(err.lines().all(|l| rest.any(|e| e == l)), "{lang}: {err}");
        assert!(err.ends_with("progress: step 3 of 3\n"), "{lang}: {err}");
    }
}

#[test]
fn json_prints_the_whole_result_and_defaults_apply() {
    for (suffix, _) in LANGS {
        let o = call(&[
            &format!("hello_{suffix}"),
            "--args",
            r#"{"name": "Bo"}"#,
            "--json",
        ]);
        assert_code(&o, 0);
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r["content"][0]["type"], "text");
        assert!(
            r["content"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("Hello, Bo!")
        );
        assert!(r.get("isError").is_none(), "{r}");
        // `steps` defaulted to 2: two progress lines (one if they coalesced), the last
        // one always.
        let err = stderr(&o);
        assert!(
            (1..=2).contains(&err.lines().count()) && err.ends_with("step 2 of 2\n"),
            "{err}"
        );
        if suffix != "sh" {
            assert_eq!(r["details"]["steps"], 2, "{r}");
            assert!(
                r["details"]["toolCallId"]
                    .as_str()
                    .is_some_and(|s| !s.is_empty())
            );
        }
    }
}

#[test]
fn args_from_stdin() {
    let mut child = toolbind()
        .args(["call", "hello_py", "--args", "-", "--dir"])
        .arg(fixture("tools"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"name": "stdin", "steps": 0}"#)
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "Hello, stdin! (python)\n");
}

#[test]
fn usage_errors_exit_2_with_a_reason() {
    let o = call(&["hello_ts", "--args", r#"{"name": "Ada""#]);
    assert_code(&o, 2);
    assert_eq!(
        stderr(&o),
        "error: --args is not valid JSON: EOF while parsing an object at line 1 column 14; \
         pass an object such as --args '{\"url\": \"https://example.com\"}'\n"
    );
    let o = call(&["hello_ts", "--args", r#"{"name": "Ada", "steps": "many"}"#]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("`steps`"), "{}", stderr(&o));
    assert!(stderr(&o).contains("\"many\""), "{}", stderr(&o));
    let o = call(&["hello_ts"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("`name`"), "{}", stderr(&o));
    let o = call(&["helo_ts", "--args", "{}"]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("unknown tool `helo_ts` (did you mean `hello_ts`?)"),
        "{}",
        stderr(&o)
    );
    let o = call(&["hello_ts", "--timeout", "soon"]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("`soon` is not a number of seconds"),
        "{}",
        stderr(&o)
    );
    // Nothing ran: no progress.
    assert!(!stderr(&o).contains("progress:"));
    // A grant of a path that does not exist would fail every call in the jail.
    let o = call(&[
        "hello_ts",
        "--args",
        r#"{"name": "Ada"}"#,
        "--allow-read",
        "/nonexistent/typo",
    ]);
    assert_code(&o, 2);
    assert_eq!(
        stderr(&o),
        "error: --allow-read /nonexistent/typo: No such file or directory (os error 2); \
         a grant must name an existing file or folder\n"
    );
}

#[test]
fn unknown_tool_shows_why_folders_were_skipped() {
    let o = toolbind()
        .args(["call", "no_entry", "--dir"])
        .arg(fixture("malformed"))
        .output()
        .unwrap();
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("warning: skipped "), "{err}");
    assert!(err.contains("tool `no_entry` has no entry file"), "{err}");
    assert!(
        err.contains("error: unknown tool `no_entry`; no tools are available"),
        "{err}"
    );
}

#[test]
fn an_error_result_exits_1() {
    let o = call(&["wait_ts", "--args", r#"{"pidfile": "/no/such/dir/pid"}"#]);
    assert_code(&o, 1);
    assert_eq!(stdout(&o), "");
    assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
    assert!(stderr(&o).contains("ENOENT"), "{}", stderr(&o));

    let o = call(&[
        "wait_ts",
        "--args",
        r#"{"pidfile": "/no/such/dir/pid"}"#,
        "--json",
    ]);
    assert_code(&o, 1);
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["isError"], true);
}

#[test]
fn timeout_stops_the_tool() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let args = format!(r#"{{"pidfile": "{}"}}"#, pidfile.display());
    // Unjailed: the test reads the tool's host process group from a pidfile.
    let o = call(&[
        "wait_sh",
        "--args",
        &args,
        "--timeout",
        "0.5",
        "--sandbox",
        "off",
    ]);
    assert_code(&o, 1);
    assert!(
        stderr(&o).contains("timed out after 0.5 s"),
        "{}",
        stderr(&o)
    );
    assert_no_group(&pidfile);
}

/// `--json`'s `stop`: why the call ended, named as `StopReason::kind` names it, with the
/// timeout or the limit where there is one. Exit statuses are as without `--json`.
#[test]
fn json_says_why_the_call_stopped() {
    let stop = |o: &Output| -> Value {
        let r: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(o), stderr(o)));
        r["stop"].clone()
    };
    let o = call(&["hello_ts", "--args", r#"{"name": "Ada"}"#, "--json"]);
    assert_code(&o, 0);
    assert_eq!(stop(&o), serde_json::json!({"kind": "completed"}));

    let o = call(&[
        "wait_ts",
        "--args",
        r#"{"pidfile": "/no/such/dir/pid"}"#,
        "--json",
    ]);
    assert_code(&o, 1);
    assert_eq!(stop(&o), serde_json::json!({"kind": "tool_error"}));

    let dir = tempfile::tempdir().unwrap();
    let args = format!(r#"{{"pidfile": "{}"}}"#, dir.path().join("pid").display());
    let o = call(&[
        "wait_sh",
        "--args",
        &args,
        "--timeout",
        "0.5",
        "--sandbox",
        "off",
        "--json",
    ]);
    assert_code(&o, 1);
    assert_eq!(
        stop(&o),
        serde_json::json!({"kind": "timeout", "timeout_ms": 500})
    );

    // Nothing ran: exit 2, and the result still says why.
    let o = call(&["hello_ts", "--args", r#"{"steps": "many"}"#, "--json"]);
    assert_code(&o, 2);
    assert_eq!(stop(&o), serde_json::json!({"kind": "bad_arguments"}));
    let o = call(&["helo_ts", "--json"]);
    assert_code(&o, 2);
    assert_eq!(stop(&o), serde_json::json!({"kind": "unknown_tool"}));

    // A sandbox limit: which one, and the values in force.
    python_tool(
        dir.path(),
        "grab",
        "inputs:\n  mib:\n    type: number\n    description: How much.\n",
        "def execute(i, p, s, u):\n    return str(len(bytearray(int(p['mib']) << 20)))\n",
    );
    let o = call_in(
        dir.path(),
        &[
            "grab",
            "--sandbox",
            "required",
            "--args",
            r#"{"mib": 300}"#,
            "--memory",
            "200",
            "--json",
        ],
    );
    assert_code(&o, 1);
    assert_eq!(
        stop(&o),
        serde_json::json!({
            "kind": "limit_exceeded",
            "limit": "memory",
            "memory_mib": 200,
            "call_memory_mib": 2048
        })
    );
}

/// A python tool `name` in `dir/tools`, its TOOL.md `inputs` (YAML) and its `index.py`.
fn python_tool(dir: &Path, name: &str, inputs: &str, index_py: &str) {
    let tool = dir.join("tools").join(name);
    std::fs::create_dir_all(&tool).unwrap();
    std::fs::write(
        tool.join("TOOL.md"),
        format!(
            "---\nname: {name}\ndescription: Test tool {name}.\nlanguage: python\n{inputs}---\n"
        ),
    )
    .unwrap();
    std::fs::write(tool.join("index.py"), index_py).unwrap();
}

/// `toolbind call ARGS` on the tools of `dir/tools`, with state and cache in `dir`.
fn call_in(dir: &Path, args: &[&str]) -> Output {
    toolbind()
        .arg("call")
        .args(args)
        .arg("--dir")
        .arg(dir.join("tools"))
        .arg("--state-dir")
        .arg(dir.join("state"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .output()
        .unwrap()
}

fn spawn_wait(tool: &str, pidfile: &Path, stubborn: bool) -> Child {
    let args = format!(
        r#"{{"pidfile": "{}", "stubborn": {stubborn}}}"#,
        pidfile.display()
    );
    // Unjailed: these tests check process-group signalling through the tool's host pgid,
    // written to a pidfile (cli/tests/sandbox.rs covers the same in the jail).
    let child = toolbind()
        .args(["call", tool, "--sandbox", "off", "--args", &args, "--dir"])
        .arg(fixture("tools"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        eventually(20.0, || std::fs::read_to_string(pidfile)
            .is_ok_and(|s| !s.trim().is_empty())),
        "{tool} did not start"
    );
    // The check `assert_no_group` makes later does see the running tool.
    let pgid: i32 = std::fs::read_to_string(pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        !live_group_members(pgid).is_empty(),
        "{tool}: group {pgid} not found"
    );
    child
}

fn sigint(child: &Child) {
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
}

/// Waits (at most 10 s) for the child to exit.
fn finish(mut child: Child) -> Output {
    let end = Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > end {
            let _ = child.kill();
            panic!("toolbind did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// No live process is left in the tool's process group (grandchildren included).
#[track_caller]
fn assert_no_group(pidfile: &Path) {
    let pgid: i32 = std::fs::read_to_string(pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        eventually(3.0, || live_group_members(pgid).is_empty()),
        "tool processes left behind: {:?}",
        live_group_members(pgid)
    );
}

#[test]
fn ctrl_c_cancels_through_the_abort_signal() {
    let handles: Vec<_> = LANGS
        .map(|(suffix, _)| {
            std::thread::spawn(move || {
                let tool = format!("wait_{suffix}");
                let dir = tempfile::tempdir().unwrap();
                let pidfile = dir.path().join("pid");
                let child = spawn_wait(&tool, &pidfile, false);
                sigint(&child);
                let o = finish(child);
                assert_code(&o, 130);
                let err = stderr(&o);
                // The tool honours its abort signal: it stops itself, not the grace
                // period's kill.
                assert!(
                    !err.contains("did not stop within") && !err.contains("ignored SIGTERM"),
                    "{tool}: {err}"
                );
                assert!(err.contains("progress: waiting\n"), "{tool}: {err}");
                assert!(
                    err.contains(&format!(
                        "cancelling `{tool}` (press Ctrl-C again to kill it)\n"
                    )),
                    "{err}"
                );
                assert!(err.ends_with(&format!("cancelled `{tool}`\n")), "{err}");
                if suffix == "sh" {
                    assert!(
                        err.contains("SIGTERM was sent to the tool's process group"),
                        "{err}"
                    );
                } else {
                    assert!(err.contains("aborted by the caller"), "{tool}: {err}");
                }
                assert_no_group(&pidfile);
            })
        })
        .into();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn a_second_ctrl_c_kills_a_tool_that_ignores_its_abort_signal() {
    let handles: Vec<_> = LANGS
        .map(|(suffix, _)| {
            std::thread::spawn(move || {
                let tool = format!("wait_{suffix}");
                let dir = tempfile::tempdir().unwrap();
                let pidfile = dir.path().join("pid");
                let child = spawn_wait(&tool, &pidfile, true);
                sigint(&child);
                std::thread::sleep(Duration::from_millis(300));
                assert!(
                    child_alive(&child),
                    "{tool} stopped without the second Ctrl-C"
                );
                sigint(&child);
                let o = finish(child);
                assert_code(&o, 130);
                // Killed by the second Ctrl-C, not by the end of the grace period.
                let err = stderr(&o);
                assert!(
                    err.ends_with(&format!("killed `{tool}` and its processes\n"))
                        && !err.contains("did not stop within")
                        && !err.contains("ignored SIGTERM"),
                    "{err}"
                );
                assert_eq!(stdout(&o), "");
                assert_no_group(&pidfile);
            })
        })
        .into();
    for h in handles {
        h.join().unwrap();
    }
}

fn child_alive(child: &Child) -> bool {
    // Signal 0: is the process still there (it is our child, so not yet reaped)?
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap_or_default();
    !stat.is_empty() && !stat.contains(") Z ")
}

#[test]
fn a_secret_on_the_command_line_gets_a_warning_and_stdin_does_not() {
    let args = r#"{"name": "Ada", "steps": 0, "token": "sk-argv-visible"}"#;
    let o = call(&["hello_sh", "--args", args]);
    assert_code(&o, 0);
    let err = stderr(&o);
    assert!(err.contains("warning: `token` is sensitive"), "{err}");
    assert!(err.contains("--args -"), "{err}");
    assert!(!err.contains("sk-argv-visible"), "{err}");

    let mut child = toolbind()
        .args([
            "call",
            "hello_sh",
            "--args",
            "-",
            "--dir",
            fixture("tools").to_str().unwrap(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(args.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_code(&o, 0);
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
}

#[test]
fn sigterm_cancels_like_ctrl_c_and_exits_143() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let child = spawn_wait("wait_py", &pidfile, false);
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
    let o = finish(child);
    assert_code(&o, 143);
    assert!(
        stderr(&o).ends_with("cancelled `wait_py`\n"),
        "{}",
        stderr(&o)
    );
    assert_no_group(&pidfile);
}

#[test]
fn prepare_arguments_reshapes_an_old_argument_shape_before_validation() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("search");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("TOOL.md"),
        "---\nname: search\ndescription: Searches.\ninputs:\n  query:\n    type: string\n    description: q\n  max_results:\n    type: number\n    description: n\n    optional: true\n---\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("index.ts"),
        "export function prepareArguments(a) {\n  if (a.boom) throw new Error(\"old shape unknown\");\n  return a.q !== undefined ? { query: a.q, max_results: a.maxResults } : a;\n}\nexport async function execute(id, p) {\n  return `query=${p.query} max=${p.max_results}`;\n}\n",
    )
    .unwrap();
    let run = |args: &str| {
        toolbind()
            .args([
                "call",
                "search",
                tmp.path().to_str().unwrap(),
                "--args",
                args,
            ])
            .output()
            .unwrap()
    };
    let o = run(r#"{"q": "hello", "maxResults": 3}"#);
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "query=hello max=3\n");
    // What it returns is still validated: a usage error, exit 2.
    let o = run(r#"{"q": 5}"#);
    assert_code(&o, 2);
    // A throwing prepareArguments is the tool's failure: exit 1, with its message.
    let o = run(r#"{"boom": true}"#);
    assert_code(&o, 1);
    assert!(
        stderr(&o)
            .contains("tool `search` did not run: prepareArguments failed: old shape unknown"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_unjailed_tool_dies_with_a_sigkilled_toolbind_call() {
    for (suffix, _) in LANGS {
        let tool = format!("wait_{suffix}");
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let child = spawn_wait(&tool, &pidfile, true);
        // SIGKILL: no handler, no cleanup in toolbind itself.
        kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
        let _ = finish(child);
        assert_no_group(&pidfile);
    }
}

#[test]
fn rich_blocks_are_named_on_stderr_and_cannot_forge_a_line() {
    let dir = tempfile::tempdir().unwrap();
    // A URI and a MIME type holding a newline and a terminal escape.
    python_tool(
        dir.path(),
        "rich",
        "inputs: {}\n",
        "def execute(i, p, s, u):\n    return {'content': [\n        {'type': 'text', 'text': 'ok'},\n        {'type': 'audio', 'data': 'UklGRg==', 'mimeType': 'audio/wav\\nnote: forged'},\n        {'type': 'resource', 'resource': {'uri': 'file:///x\\n\\u001b[31mnote: forged', 'text': 'abc'}},\n        {'type': 'resource_link', 'uri': 'https://e.example/r', 'name': 'r'}]}\n",
    );
    let o = call_in(dir.path(), &["rich", "--sandbox", "off"]);
    assert_code(&o, 0);
    // A URI holding a newline is not a URI: that block is kept as text saying so, its
    // JSON escaped (no raw control character reaches the terminal).
    let out = stdout(&o);
    assert!(
        out.starts_with("ok\n[toolbind: a resource whose `uri` is not a URI"),
        "{out}"
    );
    assert!(out.contains(r"file:///x\n\u001b[31mnote: forged"), "{out}");
    assert!(!out.contains('\u{1b}'), "{out}");
    let err = stderr(&o);
    let notes: Vec<&str> = err.lines().filter(|l| l.starts_with("note:")).collect();
    assert_eq!(notes.len(), 2, "{err}");
    assert!(notes[0].contains(r"audio/wav\nnote: forged audio"), "{err}");
    assert!(
        notes[1].contains("a link to the resource https://e.example/r"),
        "{err}"
    );
    assert!(!err.contains('\u{1b}'), "{err}");
}

/// The runtime's warnings are `tracing` events the CLI prints as the lines they always
/// were; `RUST_LOG` filters them (`toolbind=error` silences warnings), and another crate's
/// events stay out unless asked for.
#[test]
fn runtime_warnings_are_lines_on_stderr_filtered_by_rust_log() {
    let call = |rust_log: Option<&str>| {
        let mut cmd = toolbind();
        cmd.args(["call", "report", "--sandbox", "off", "--dir"])
            .arg(fixture("typed"))
            .args(["--args", r#"{"broken": true}"#]);
        match rust_log {
            Some(v) => cmd.env("RUST_LOG", v),
            None => cmd.env_remove("RUST_LOG"),
        };
        let o = cmd.output().unwrap();
        assert_code(&o, 0);
        stderr(&o)
    };
    let warning = "toolbind: warning: tool `report` returned details that break its declared outputs (a bug in the tool; the result is kept): ";
    let default = call(None);
    assert!(default.starts_with(warning), "{default}");
    assert_eq!(default.lines().count(), 1, "{default}");
    assert!(call(Some("toolbind=warn")).starts_with(warning));
    assert_eq!(call(Some("toolbind=error")), "");
    // A RUST_LOG for another crate leaves toolbind's warnings as they were.
    assert!(call(Some("myapp=debug")).starts_with(warning));
    // A directive for other crates prints theirs (there are none here), not twice ours.
    let all = call(Some("info"));
    assert_eq!(all.matches(warning).count(), 1, "{all}");
}
