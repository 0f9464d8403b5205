//! At the command line, played as the attacker who publishes a tool: `check`
//! (and `list`) refuse a tool named `..` or `.`, never read a TOOL.md through a symlink out
//! of its folder (so never print `/etc/shadow` or the checker's environment), refuse a
//! 200 MB TOOL.md from its size, say a FIFO entry file is a FIFO, agree with themselves on
//! a column, and warn about a folder named differently from its tool as `list` does.

use crate::common;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{assert_code, stderr, stdout, toolbind};
use serde_json::Value;

/// Runs `cmd`, killing it after 20 s (a read blocking on a FIFO, or of 200 MB, fails the
/// test instead of hanging it).
fn bounded(mut cmd: Command) -> Output {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!("did not finish in 20 s:\n{}{}", stdout(&o), stderr(&o));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

fn check(args: &[&str]) -> Output {
    let mut c = toolbind();
    c.arg("check").args(args);
    bounded(c)
}

fn bash_tool(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("TOOL.md"),
        format!("---\nname: {name}\ndescription: A tool.\nlanguage: bash\n---\n"),
    )
    .unwrap();
    std::fs::write(dir.join("index.sh"), "cat\n").unwrap();
}

#[test]
fn check_and_list_refuse_a_tool_named_dot_dot_or_dot() {
    for name in ["..", "."] {
        let tmp = tempfile::tempdir().unwrap();
        let tools = tmp.path().join("tools");
        bash_tool(&tools.join("escape"), &format!("'{name}'"));
        bash_tool(&tools.join("fine"), "fine");
        let dir = tools.to_str().unwrap();

        let o = check(&[dir]);
        assert_code(&o, 1);
        let err = stderr(&o);
        assert!(
            err.contains(&format!("error: tool name `{name}` cannot be used: ")),
            "{err}"
        );
        assert!(err.contains("a tool name becomes a folder name"), "{err}");
        assert!(err.contains("escape/TOOL.md:2:7"), "{err}");
        assert!(!err.contains("\nok: "), "{err}");

        let o = check(&["--format", "json", dir]);
        assert_code(&o, 1);
        let diags: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
        assert!(
            diags.iter().any(|d| d["severity"] == "error"
                && d["message"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("tool name `{name}` cannot be used"))),
            "{diags:#?}"
        );

        // The runtime's loader, as `list` (and `serve`, `call`) use it: skipped, loudly.
        let mut c = toolbind();
        c.args(["list", "--sandbox", "off", "--dir", dir]);
        let o = bounded(c);
        let out = stdout(&o);
        assert!(out.contains("skipped 1 folder:"), "{out}");
        assert!(
            out.contains(&format!("tool name `{name}` cannot be used")),
            "{out}"
        );
        assert!(out.contains("\n1 tool from "), "{out}");
    }
}

#[test]
fn check_never_prints_what_a_tool_md_symlink_points_to() {
    let tmp = tempfile::tempdir().unwrap();
    let shadow = tmp.path().join("shadow");
    std::fs::write(
        &shadow,
        "root:$6$SECRETHASH$Zz0:19000:0:99999:7:::\nbin:*:19000:0:99999:7:::\n",
    )
    .unwrap();
    let tools = tmp.path().join("tools");
    for (folder, target) in [
        ("shadow", shadow.to_str().unwrap()),
        ("environ", "/proc/self/environ"),
    ] {
        let t = tools.join(folder);
        std::fs::create_dir_all(&t).unwrap();
        std::fs::write(t.join("index.sh"), "cat\n").unwrap();
        symlink(target, t.join("TOOL.md")).unwrap();
    }
    // The checker's environment starts with a secret, as a CI job's might.
    let mut c = toolbind();
    c.env_clear()
        .env("CI_DEPLOY_TOKEN", "ghp_SECRETTOKENVALUE")
        .env("NO_COLOR", "1")
        .args(["check", tools.to_str().unwrap()]);
    let o = bounded(c);
    assert_code(&o, 1);
    let all = format!("{}{}", stdout(&o), stderr(&o));
    for folder in ["shadow", "environ"] {
        assert!(
            all.contains(&format!("{folder}/TOOL.md")),
            "names the file: {all}"
        );
    }
    assert_eq!(
        all.matches("TOOL.md is a symlink out of the tool folder")
            .count(),
        2,
        "{all}"
    );
    for leak in [
        "root:",
        "SECRETHASH",
        "CI_DEPLOY_TOKEN",
        "SECRETTOKENVALUE",
        "missing frontmatter",
    ] {
        assert!(!all.contains(leak), "printed `{leak}`:\n{all}");
    }
}

#[test]
fn check_refuses_a_200_mb_tool_md_from_its_size() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("huge");
    bash_tool(&t, "huge");
    std::fs::File::options()
        .write(true)
        .open(t.join("TOOL.md"))
        .unwrap()
        .set_len(200 << 20)
        .unwrap();
    let mut c = toolbind();
    c.args(["check", tmp.path().to_str().unwrap()]);
    let o = bounded(c);
    assert_code(&o, 1);
    let err = stderr(&o);
    assert!(
        err.contains("TOOL.md is 209715200 bytes, over the limit of 1048576 bytes (1 MiB)"),
        "{err}"
    );
}

#[test]
fn check_reports_a_non_utf8_byte_at_one_column_in_both_formats() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("latin1");
    bash_tool(&t, "latin1");
    std::fs::write(
        t.join("TOOL.md"),
        b"---\nname: latin1\ndescription: caf\xe9\nlanguage: bash\n---\n",
    )
    .unwrap();
    let dir = tmp.path().to_str().unwrap();
    let o = check(&["--format", "json", dir]);
    assert_code(&o, 1);
    let diags: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    let d = &diags[0];
    assert!(d["message"].as_str().unwrap().contains("not valid UTF-8"));
    let (line, col) = (d["line"].as_u64().unwrap(), d["column"].as_u64().unwrap());
    assert_eq!((line, col), (3, 17), "{d}");
    let o = check(&[dir]);
    assert_code(&o, 1);
    let err = stderr(&o);
    assert!(
        err.contains(&format!("latin1/TOOL.md:{line}:{col}\n")),
        "human and JSON disagree ({line}:{col}):\n{err}"
    );
}

#[test]
fn check_says_a_fifo_entry_file_is_a_fifo() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("piped");
    bash_tool(&t, "piped");
    std::fs::remove_file(t.join("index.sh")).unwrap();
    nix::unistd::mkfifo(&t.join("index.sh"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let o = check(&[tmp.path().to_str().unwrap()]);
    assert_code(&o, 1);
    let err = stderr(&o);
    assert!(
        err.contains("index.sh is a FIFO (named pipe), not a regular file"),
        "{err}"
    );
    assert!(!err.contains("missing entry file"), "{err}");
}

#[test]
fn check_warns_about_a_folder_named_differently_from_its_tool() {
    let tmp = tempfile::tempdir().unwrap();
    bash_tool(&tmp.path().join("renamed"), "web_fetch");
    bash_tool(&tmp.path().join("same"), "same");
    let dir = tmp.path().to_str().unwrap();

    let o = check(&[dir]);
    assert_code(&o, 0);
    let err = stderr(&o);
    let folder = tmp.path().join("renamed");
    assert!(
        err.contains(&format!(
            "warning: folder {} holds the tool `web_fetch`: the folder is named differently from the tool",
            folder.display()
        )),
        "{err}"
    );
    assert!(err.contains("rename the folder to `web_fetch`"), "{err}");
    assert!(err.trim_end().ends_with("(1 warning)"), "{err}");

    // The same words as `list`.
    let mut c = toolbind();
    c.args(["list", "--sandbox", "off", "--dir", dir]);
    let o = bounded(c);
    assert!(
        stdout(&o).contains(&format!(
            "folder {} holds the tool `web_fetch`: the folder is named differently from the tool",
            folder.display()
        )),
        "{}",
        stdout(&o)
    );

    let o = check(&["--format", "json", dir]);
    let diags: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert_eq!(diags[0]["severity"], "warning");
    assert_eq!(
        (diags[0]["line"].as_u64(), diags[0]["column"].as_u64()),
        (Some(2), Some(7))
    );

    let o = check(&["--deny-warnings", dir]);
    assert_code(&o, 1);
}
