//! Text from outside reaches the terminal escaped: a tool's progress lines and result in
//! `toolbind call` (piped and on a pty), an MCP server's name, version, descriptions and
//! stderr in `toolbind mcp snapshot` and `mcp check`. Escape sequences (ESC, the one-byte
//! CSI U+009B), carriage returns and bidi overrides arrive as `\u{..}` text.

use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{assert_code, bin, stderr, toolbind};

/// What must not reach a terminal as it is.
const RAW: [&str; 4] = ["\u{1b}", "\u{9b}", "\u{202e}", "\r"];

fn assert_escaped(what: &str, text: &str) {
    for raw in RAW {
        assert!(
            !text.contains(raw),
            "{what}: a raw {raw:?} reached the terminal: {text:?}"
        );
    }
}

/// A bash tool whose progress line and result carry escapes.
fn escaping_tool(dir: &Path) -> std::path::PathBuf {
    let tools = dir.join("tools");
    let t = tools.join("loud");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(
        t.join("TOOL.md"),
        "---\nname: loud\ndescription: Reports with escapes.\nlanguage: bash\n---\nLoud.\n",
    )
    .unwrap();
    std::fs::write(
        t.join("index.sh"),
        "cat >/dev/null\n\
         printf 'step\\033]0;owned\\007 \\342\\200\\256evil \\302\\2332J\\rover\\n' >&3\n\
         sleep 0.3\n\
         printf 'done\\033]52;c;ZXZpbA==\\007\\n'\n",
    )
    .unwrap();
    tools
}

#[test]
fn progress_lines_are_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let tools = escaping_tool(tmp.path());
    let o = toolbind()
        .args(["call", "loud", "--dir"])
        .arg(&tools)
        .args(["--sandbox", "off"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let err = stderr(&o);
    assert_escaped("progress", &err);
    assert!(
        err.contains(r"progress: step\u{1b}]0;owned\u{7} \u{202e}evil \u{9b}2J\u{d}over"),
        "{err}"
    );
    // Piped, the result is the tool's bytes, as they are.
    assert!(String::from_utf8_lossy(&o.stdout).contains("done\u{1b}]52;c;ZXZpbA==\u{7}"));
}

#[test]
fn on_a_terminal_progress_and_the_result_are_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let tools = escaping_tool(tmp.path());
    let cmd = format!(
        "'{}' call loud --sandbox off --dir '{}'",
        bin(),
        tools.display()
    );
    // `script` runs it on a pty of its own (stdout and stderr a terminal).
    let child = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env_remove("PI_TOOLS_DIRS")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script (bsdutils) runs");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let o: Output = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("toolbind call on a terminal did not end within 60 s")
        .unwrap();
    let t = String::from_utf8_lossy(&o.stdout).into_owned();
    // The spinner draws with escapes of its own; the tool's never arrive raw.
    for raw in ["\u{1b}]0;owned", "\u{1b}]52", "\u{202e}", "\u{9b}"] {
        assert!(
            !t.contains(raw),
            "a raw {raw:?} reached the terminal: {t:?}"
        );
    }
    assert!(t.contains(r"done\u{1b}]52;c;ZXZpbA==\u{7}"), "{t:?}");
}

fn escapes_server(mode: &str) -> Vec<String> {
    vec![
        "python3".into(),
        common::fixture("mcp_servers/escapes.py")
            .display()
            .to_string(),
        mode.into(),
    ]
}

#[test]
fn mcp_snapshot_and_check_escape_what_the_server_says() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("srv.json");
    let o = toolbind()
        .current_dir(dir.path())
        .args(["mcp", "snapshot", "--name", "srv", "--out"])
        .arg(&snap)
        .arg("--")
        .args(escapes_server("ok"))
        .output()
        .unwrap();
    assert_code(&o, 0);
    let err = stderr(&o);
    assert_escaped("snapshot", &err);
    assert!(
        err.contains(r"srv\u{1b}]0;owned\u{7}\u{202e}evil\u{9b}2J"),
        "{err}"
    );

    for mode in ["ok", "changed"] {
        let o = toolbind()
            .current_dir(dir.path())
            .args(["mcp", "check"])
            .arg(&snap)
            .arg("--")
            .args(escapes_server(mode))
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_escaped(&format!("check {mode}"), &err);
        assert!(err.contains(r"\u{202e}evil"), "check {mode}: {err}");
    }

    // A server that dies: its last stderr line, in the error, escaped.
    let o = toolbind()
        .current_dir(dir.path())
        .args(["mcp", "snapshot", "--name", "srv", "--out", "-", "--"])
        .args(escapes_server("die"))
        .output()
        .unwrap();
    assert_code(&o, 1);
    let err = stderr(&o);
    assert_escaped("a dead server's stderr", &err);
    assert!(err.contains(r"fatal: "), "{err}");
    assert!(err.contains(r"\u{202e}evil"), "{err}");
}
