//! A FIFO named TOOL.md never blocks a command: `check`, `list`, `call` and `sync` refuse
//! it with a clear error, and a later sync is not left waiting on the lock.

use crate::common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::toolbind;

/// Runs `toolbind args`, killing it after 20 s: (finished in time, stdout + stderr).
fn run_bounded(args: &[&str]) -> (bool, String) {
    let mut child = toolbind()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let finished = loop {
        if child.try_wait().unwrap().is_some() {
            break true;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            break false;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let o = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (finished, text)
}

#[test]
fn a_fifo_named_tool_md_is_refused_without_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    let tools = tmp.path().join("tools");
    let good = tools.join("good");
    std::fs::create_dir_all(&good).unwrap();
    std::fs::write(
        good.join("TOOL.md"),
        "---\nname: good\ndescription: Fine.\nlanguage: bash\n---\nFine.\n",
    )
    .unwrap();
    std::fs::write(good.join("index.sh"), "echo ok\n").unwrap();
    let trap = tools.join("trap");
    std::fs::create_dir_all(&trap).unwrap();
    std::fs::write(trap.join("index.sh"), "echo trapped\n").unwrap();
    nix::unistd::mkfifo(&trap.join("TOOL.md"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let dir = tools.to_str().unwrap();
    let data = tmp.path().join("data");
    let data = data.to_str().unwrap();

    let cases: [(&str, Vec<&str>); 5] = [
        ("check", vec!["check", dir]),
        ("list", vec!["list", "--dir", dir]),
        ("call", vec!["call", "trap", "--dir", dir]),
        ("sync", vec!["sync", "--seed", dir, "--data", data]),
        ("sync again", vec!["sync", "--seed", dir, "--data", data]),
    ];
    for (what, args) in cases {
        let (finished, out) = run_bounded(&args);
        assert!(finished, "`{what}` blocked on the FIFO:\n{out}");
        assert!(
            out.contains("TOOL.md is a FIFO (named pipe), not a regular file"),
            "`{what}`: {out}"
        );
    }
}
