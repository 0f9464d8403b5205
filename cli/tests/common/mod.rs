//! Helpers shared by the process-level tests: they run the built `toolbind` binary.

#![allow(dead_code)] // each test crate uses a different subset

pub mod otlp;
pub mod wire;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_toolbind")
}

/// `cli/tests/fixtures/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The workspace's shipped tools folder.
pub fn shipped_tools() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools")
}

/// A `toolbind` command with a clean environment: no `PI_TOOLS_DIRS`, no colour hints,
/// and no `CARGO_MANIFEST_DIR` (cargo sets it for tests; a user's shell does not).
pub fn toolbind() -> Command {
    let mut c = Command::new(bin());
    c.env_remove("PI_TOOLS_DIRS")
        .env_remove("CARGO_MANIFEST_DIR")
        .env("NO_COLOR", "1");
    c
}

pub fn run(args: &[&str]) -> Output {
    toolbind().args(args).output().expect("run toolbind")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts the exit code, showing both streams when it differs.
#[track_caller]
pub fn assert_code(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "exit status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status,
        stdout(o),
        stderr(o)
    );
}

/// Compares `actual` with the snapshot file `cli/tests/snapshots/<name>`; with
/// `UPDATE_EXPECT=1` rewrites it instead.
#[track_caller]
pub fn expect_file(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read snapshot {}: {e}; run with UPDATE_EXPECT=1 to create it",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "snapshot {} differs (UPDATE_EXPECT=1 rewrites it)\n--- expected\n{expected}\n--- actual\n{actual}",
        path.display()
    );
}

/// The live (not zombie) processes whose process group is `pgid`, as `pid state cmd`.
pub fn live_group_members(pgid: i32) -> Vec<String> {
    let mut live = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return live;
    };
    for e in entries.flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...; comm may contain spaces and parentheses.
        let Some((head, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let (Some(state), Some(pgrp)) = (fields.first(), fields.get(2)) else {
            continue;
        };
        if pgrp.parse::<i32>().ok() == Some(pgid) && *state != "Z" && *state != "X" {
            live.push(format!("{head}) {state}"));
        }
    }
    live
}

/// Waits up to `secs` for `f` to be true.
pub fn eventually(secs: f64, mut f: impl FnMut() -> bool) -> bool {
    let end = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs);
    loop {
        if f() {
            return true;
        }
        if std::time::Instant::now() > end {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Runs `cmd` (stdin closed, stdout and stderr captured) and waits up to `secs` for it to
/// end, polling with [`eventually`]: `None` when it is still running then (it is killed).
/// For commands that must fail at once rather than block (a FIFO given as a file).
pub fn output_within(mut cmd: Command, secs: f64) -> Option<Output> {
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run toolbind");
    let ended = eventually(secs, || child.try_wait().unwrap().is_some());
    if !ended {
        let _ = child.kill();
    }
    let out = child.wait_with_output().unwrap();
    ended.then_some(out)
}

/// Copies the folder `from` to `to`, recursively (a fixture a test may change).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// Where `tests/clients/install.sh` installed the official MCP client SDKs:
/// `$TOOLBIND_CLIENTS`, else `$XDG_CACHE_HOME/toolbind/clients`, else
/// `~/.cache/toolbind/clients` (`py/bin/python` with the Python SDK, `node/node_modules`
/// with the TypeScript SDK). Panics, saying to run the script, when they are missing.
pub fn clients_dir() -> PathBuf {
    let dir = match std::env::var_os("TOOLBIND_CLIENTS").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
            Some(c) => PathBuf::from(c).join("toolbind/clients"),
            None => PathBuf::from(std::env::var_os("HOME").expect("HOME is set"))
                .join(".cache/toolbind/clients"),
        },
    };
    assert!(
        dir.join("py/bin/python").exists() && dir.join("node/node_modules").is_dir(),
        "the MCP client SDKs are not installed in {}: run tests/clients/install.sh",
        dir.display()
    );
    dir
}

/// A background HTTP server's process group, killed (the whole group) when dropped.
pub struct Background {
    child: std::process::Child,
    log: PathBuf,
}

impl Background {
    /// Starts `cmd` in a group of its own, its stdout and stderr to `log`, and waits up to
    /// 30 s for `ready` to appear in the log.
    pub fn start(mut cmd: std::process::Command, log: PathBuf, ready: &str) -> Background {
        use std::os::unix::process::CommandExt;
        let out = std::fs::File::create(&log).unwrap();
        cmd.stdin(std::process::Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .process_group(0);
        let b = Background {
            child: cmd.spawn().unwrap(),
            log,
        };
        let up = eventually(30.0, || b.log().contains(ready));
        assert!(up, "the server did not start:\n{}", b.log());
        b
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let pgid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A child's stderr read to its end by a task, into a shared string: what it wrote so far,
/// and whether it is closed (the process, and whatever held the pipe, is gone).
#[derive(Clone, Default)]
pub struct StderrLog {
    pub text: std::sync::Arc<std::sync::Mutex<String>>,
    pub closed: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl StderrLog {
    /// Starts reading `stderr` (nothing to read: closed at once).
    pub fn read(stderr: Option<tokio::process::ChildStderr>) -> StderrLog {
        use tokio::io::AsyncReadExt;
        let log = StderrLog::default();
        let Some(mut e) = stderr else {
            log.closed.store(true, std::sync::atomic::Ordering::SeqCst);
            return log;
        };
        let sink = log.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = e.read(&mut buf).await {
                sink.text
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
            sink.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        log
    }
}

/// A process's peak resident memory (`VmHWM`), in KiB.
pub fn hwm_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}
