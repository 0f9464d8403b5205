//! docs/http.md's client examples, run as written: the curl handshake, the official Python
//! SDK and the official TypeScript SDK list the tools of `toolbind serve --http` and call
//! `todo`, each with the bearer token. The blocks are read out of the page, so the page and
//! this test cannot drift; the only change made to them is the server's address (the test
//! serves on a free port, not on 8080).

use crate::common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{bin, clients_dir, eventually, shipped_tools};

const TOKEN: &str = "docs-token-0123456789abcdef";
const DOC_ADDR: &str = "127.0.0.1:8080";

/// The fenced blocks of the `### Clients` section of docs/http.md: `(info string, text)`.
fn client_blocks() -> Vec<(String, String)> {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/http.md"))
            .expect("read docs/http.md");
    let start = page
        .find("\n### Clients\n")
        .expect("docs/http.md has a Clients section");
    let mut blocks = Vec::new();
    let mut lines = page[start..].lines().skip(2);
    while let Some(line) = lines.next() {
        // The next heading (outside a code block) ends the section.
        if line.starts_with('#') {
            break;
        }
        if let Some(info) = line.strip_prefix("```") {
            let mut text = String::new();
            for body in lines.by_ref() {
                if body.starts_with("```") {
                    break;
                }
                text.push_str(body);
                text.push('\n');
            }
            blocks.push((info.trim().to_string(), text));
        }
    }
    blocks
}

fn block(lang: &str, nth: usize) -> String {
    client_blocks()
        .into_iter()
        .filter(|(info, _)| info == lang)
        .nth(nth)
        .unwrap_or_else(|| panic!("docs/http.md's Clients section has no {lang} block #{nth}"))
        .1
}

/// `toolbind serve --dir tools --http 127.0.0.1:0` over the shipped tools, killed when
/// dropped.
struct Serve {
    child: Child,
    addr: String,
    stderr: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Serve {
    fn start() -> Serve {
        // The page's own command, with the test's port.
        let start = block("sh", 0);
        assert!(
            start.contains(&format!("toolbind serve --dir tools --http {DOC_ADDR}")),
            "the page no longer starts the server this test starts:\n{start}"
        );
        let tmp = tempfile::tempdir().unwrap();
        let stderr = tmp.path().join("stderr");
        let child = Command::new(bin())
            .args(["serve", "--dir"])
            .arg(shipped_tools())
            .args(["--http", "127.0.0.1:0"])
            .env_remove("PI_TOOLS_DIRS")
            .env("TOOLBIND_TOKEN", TOKEN)
            .env("XDG_STATE_HOME", tmp.path().join("state"))
            .env("XDG_RUNTIME_DIR", tmp.path().join("run"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let mut s = Serve {
            child,
            addr: String::new(),
            stderr,
            _tmp: tmp,
        };
        let found = eventually(30.0, || {
            let log = s.log();
            if let Some(at) = log.find("at http://") {
                let rest = &log[at + "at http://".len()..];
                s.addr = rest[..rest.find("/mcp").unwrap()].to_string();
                return true;
            }
            false
        });
        assert!(found, "serve did not start:\n{}", s.log());
        s
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// A block of the page with the test server's address in place of the page's.
    fn at_server(&self, text: &str) -> String {
        assert!(
            text.contains(DOC_ADDR),
            "the block names no {DOC_ADDR}:\n{text}"
        );
        text.replace(DOC_ADDR, &self.addr)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `cmd` with the token in its environment, in its own process group, killing the
/// whole group after `secs` (a hung client fails the test instead of hanging it: what it
/// started holds its output pipes open too) and when it ends (nothing is left behind).
fn run(mut cmd: Command, secs: u64) -> Output {
    use std::os::unix::process::CommandExt;
    let mut child = cmd
        .process_group(0)
        .env("TOOLBIND_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the client");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut o = Vec::new();
        let _ = out.read_to_end(&mut o);
        o
    });
    let reader_err = std::thread::spawn(move || {
        let mut e = Vec::new();
        let _ = err.read_to_end(&mut e);
        e
    });
    let group = nix::unistd::Pid::from_raw(child.id() as i32);
    let end = Instant::now() + Duration::from_secs(secs);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > end {
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // The group outlives its leader while a member lives: end what it left.
    let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
    Output {
        status,
        stdout: reader.join().unwrap(),
        stderr: reader_err.join().unwrap(),
    }
}

#[track_caller]
fn assert_listed_and_called(what: &str, out: &Output, serve: &Serve) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let shown = format!(
        "{what}: {:?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}\n--- serve\n{}",
        out.status,
        serve.log()
    );
    assert!(out.status.success(), "{shown}");
    for tool in ["todo", "web_fetch", "email_db"] {
        assert!(stdout.contains(tool), "{what} did not list {tool}: {shown}");
    }
    assert!(
        stdout.contains("Added: ship it"),
        "{what} did not call todo: {shown}"
    );
}

#[test]
fn the_curl_handshake_lists_and_calls() {
    let serve = Serve::start();
    let script = serve.at_server(&block("sh", 1));
    // Each request of the page's block bounded without changing the block: curl reads
    // `$CURL_HOME/.curlrc`.
    let curl_home = tempfile::tempdir().unwrap();
    std::fs::write(curl_home.path().join(".curlrc"), "max-time = 60\n").unwrap();
    let mut cmd = Command::new("bash");
    cmd.args(["-euo", "pipefail", "-c", &script])
        .env("CURL_HOME", curl_home.path());
    let out = run(cmd, 120);
    assert_listed_and_called("curl", &out, &serve);
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The handshake went as the page says: the session was named, nothing was refused.
    assert!(
        !stdout.contains("\"error\""),
        "a request was refused:\n{stdout}"
    );
    assert!(!stdout.contains("Session ID is required"), "{stdout}");
}

#[test]
fn the_python_sdk_example_lists_and_calls() {
    let serve = Serve::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("client.py");
    std::fs::write(&file, serve.at_server(&block("python", 0))).unwrap();
    let mut cmd = Command::new(clients_dir().join("py/bin/python"));
    cmd.arg(&file);
    let out = run(cmd, 120);
    assert_listed_and_called("the Python SDK", &out, &serve);
}

#[test]
fn the_typescript_sdk_example_lists_and_calls() {
    let serve = Serve::start();
    // An ES module resolves its imports from its own folder: give it the SDK's
    // node_modules there.
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        clients_dir().join("node/node_modules"),
        dir.path().join("node_modules"),
    )
    .unwrap();
    let file = dir.path().join("client.mjs");
    std::fs::write(&file, serve.at_server(&block("js", 0))).unwrap();
    let mut cmd = Command::new("node");
    cmd.arg(&file);
    let out = run(cmd, 120);
    assert_listed_and_called("the TypeScript SDK", &out, &serve);
}
