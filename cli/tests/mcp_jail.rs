//! One jailed start for every place a stdio MCP server runs (the executor, `list
//! --mcp-config`, `mcp snapshot`, `mcp check`), played by a server that tries what a hostile
//! one would (fixtures/mcp_servers/misbehaving.py, mode `nosy`): read a file outside its
//! grants, write one, see the agent's environment, plant a file in its `HOME` for another
//! server of the same name, leave a setsid daemon behind. It reports what it saw in its
//! tool's description.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{assert_code, eventually, stderr, stdout, toolbind};
use toolbind::Runtime;
use toolbind::mcp::McpServer;
use toolbind::sandbox::{SandboxMode, SandboxPolicy};

fn misbehaving() -> PathBuf {
    common::fixture("mcp_servers/misbehaving.py")
}

/// A mark unique to this test run, for the daemon's argv.
fn mark(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("toolbind-jail-{what}-{}-{nanos}", std::process::id())
}

/// The pids of live processes whose argv holds `mark`.
fn marked(mark: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
                return false;
            };
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('Z'));
            !zombie && cmd.split(|b| *b == 0).any(|a| a == mark.as_bytes())
        })
        .collect()
}

/// Kills (by pid) what a test's servers left behind, however the test ends: on a toolbind
/// that lets a server's daemon outlive it, the test fails without leaking it.
struct Reap(Vec<String>);

impl Drop for Reap {
    fn drop(&mut self) {
        for m in &self.0 {
            for pid in marked(m) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    }
}

/// A project folder: a secret beside it that no server is granted, and the path a server
/// tries to write.
struct Lab {
    dir: tempfile::TempDir,
}

impl Lab {
    fn new() -> Lab {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("secret"), "s3cret\n").unwrap();
        Lab { dir }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn secret(&self) -> PathBuf {
        self.path().join("secret")
    }
    fn outside(&self) -> PathBuf {
        self.path().join("escaped")
    }
    fn state(&self) -> PathBuf {
        self.path().join("state")
    }
    /// The server's arguments after the script.
    fn nosy_args(&self, mark: &str) -> Vec<String> {
        vec![
            "nosy".into(),
            self.secret().display().to_string(),
            self.outside().display().to_string(),
            mark.into(),
        ]
    }
}

/// What a `nosy` server saw, from a snapshot's or a listing's description.
#[track_caller]
fn assert_contained(seen: &str, lab: &Lab) {
    assert!(
        seen.contains("secret=unreadable") && !seen.contains("s3cret"),
        "the server read a file outside its grants: {seen}"
    );
    let home = format!("HOME={}/mcp/", lab.state().display());
    assert!(
        seen.contains(&home),
        "the server's HOME is not its own state folder ({home}): {seen}"
    );
    assert!(
        !lab.outside().exists(),
        "a file was written outside the jail"
    );
}

/// A script whose `#!` names an interpreter the jail does not set up itself (dash, perl,
/// `env -S perl -w`, an interpreter outside `/usr` found on `PATH`) runs jailed under `auto`
/// as a native program, its interpreter shown read-only: it used to run unjailed, with the
/// agent's home and files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_of_an_interpreter_the_jail_does_not_know_runs_jailed() {
    let lab = Lab::new();
    let srv = lab.path().join("srv");
    std::fs::create_dir_all(&srv).unwrap();
    std::fs::copy(misbehaving(), srv.join("misbehaving.py")).unwrap();
    let mut reap = Reap(Vec::new());
    let perl =
        "use File::Basename; exec('python3', dirname($0) . '/misbehaving.py', @ARGV) or die;\n";
    let cases = [
        (
            "dash",
            "#!/bin/dash\nexec python3 \"${0%/*}/misbehaving.py\" \"$@\"\n".to_owned(),
        ),
        ("perl", format!("#!/usr/bin/perl\n{perl}")),
        ("env-s", format!("#!/usr/bin/env -S perl -w\n{perl}")),
    ];
    for (name, text) in cases {
        let script = srv.join(format!("{name}-server"));
        std::fs::write(&script, text).unwrap();
        make_executable(&script);
        for mode in [SandboxMode::Auto, SandboxMode::Required] {
            let m = mark(name);
            reap.0.push(m.clone());
            let server = McpServer::stdio(name, script.display().to_string(), lab.nosy_args(&m))
                .sandbox(
                    SandboxPolicy::new()
                        .mode(mode)
                        .state_dir(lab.state())
                        .limits(toolbind::sandbox::SandboxLimits::default().cpu(None)),
                )
                .connect_timeout(Duration::from_secs(30));
            let runtime = tokio::time::timeout(
                Duration::from_secs(60),
                Runtime::builder().mcp_server(server).connect(),
            )
            .await
            .expect("connect within 60 s")
            .unwrap_or_else(|e| panic!("{name} ({mode:?}): {e}"));
            let seen = runtime
                .registry()
                .iter()
                .find(|t| t.name() == "ok")
                .expect("the server's tool")
                .description()
                .to_owned();
            assert_contained(&seen, &lab);
            drop(runtime);
            assert!(
                eventually(5.0, || marked(&m).is_empty()),
                "{name}: the server's setsid daemon outlived it: {:?}",
                marked(&m)
            );
        }
    }

    // An interpreter outside `/usr`, found on `PATH` by `#!/usr/bin/env NAME` (as `uv` in
    // ~/.local/bin): its folder is shown read-only and put on the jail's `PATH`.
    let bin = lab.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink("/bin/dash", bin.join("tbinterp")).unwrap();
    let script = srv.join("own-interp-server");
    std::fs::write(
        &script,
        "#!/usr/bin/env tbinterp\nexec python3 \"${0%/*}/misbehaving.py\" \"$@\"\n",
    )
    .unwrap();
    make_executable(&script);
    let m = mark("own-interp");
    reap.0.push(m.clone());
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = toolbind()
        .env("PATH", path)
        .args([
            "mcp",
            "snapshot",
            "--out",
            "-",
            "--name",
            "own",
            "--state-dir",
        ])
        .arg(lab.state())
        .arg("--")
        .arg(&script)
        .args(lab.nosy_args(&m))
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert_contained(&stdout(&out), &lab);
    assert!(
        eventually(5.0, || marked(&m).is_empty()),
        "the daemon outlived `mcp snapshot`"
    );
}

fn make_executable(file: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `mcp snapshot` and `mcp check` start the server in the same jail as the executor: the
/// sandbox flags, a clean environment plus the config's `env` (with `${VAR}`), and the
/// whole jail (a setsid daemon too) ended when the command ends. They used to run it
/// unjailed with the whole environment, and its daemons survived.
#[test]
fn snapshot_and_check_start_the_server_in_the_jail() {
    let lab = Lab::new();
    let (m1, m2, m3) = (mark("snapshot"), mark("check"), mark("config"));
    let _reap = Reap(vec![m1.clone(), m2.clone(), m3.clone()]);
    let snap = lab.path().join("nosy.json");
    let out = toolbind()
        .current_dir(lab.path())
        .env("CANARY", "from-the-agent")
        .args(["mcp", "snapshot", "--name", "nosy", "--out"])
        .arg(&snap)
        .arg("--state-dir")
        .arg(lab.state())
        .args(["--", "python3"])
        .arg(misbehaving())
        .args(lab.nosy_args(&m1))
        .output()
        .unwrap();
    assert_code(&out, 0);
    let text = std::fs::read_to_string(&snap).unwrap();
    assert_contained(&text, &lab);
    assert!(
        text.contains("CANARY=unset"),
        "the agent's environment reached the server: {text}"
    );
    assert!(
        eventually(5.0, || marked(&m1).is_empty()),
        "the server's setsid daemon outlived `mcp snapshot`: {:?}",
        marked(&m1)
    );

    // `check` takes the same flags (`required` here) and ends the jail the same way.
    let out = toolbind()
        .current_dir(lab.path())
        .env("CANARY", "from-the-agent")
        .args(["mcp", "check"])
        .arg(&snap)
        .args(["--sandbox", "required", "--state-dir"])
        .arg(lab.state())
        .args(["--", "python3"])
        .arg(misbehaving())
        .args(lab.nosy_args(&m2))
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert!(
        stderr(&out).contains("1 tools match misbehaving"),
        "{}",
        stderr(&out)
    );
    assert!(
        !lab.outside().exists(),
        "`mcp check` let the server write outside"
    );
    assert!(
        eventually(5.0, || marked(&m2).is_empty()),
        "the server's setsid daemon outlived `mcp check`: {:?}",
        marked(&m2)
    );

    // A config's `env` reaches the jailed server, `${VAR}` expanded; nothing else does.
    let cfg = lab.path().join(".mcp.json");
    let mut args = vec![misbehaving().display().to_string()];
    args.extend(lab.nosy_args(&m3));
    let config = serde_json::json!({"mcpServers": {"nosy": {
        "command": "python3", "args": args, "env": {"CANARY": "${TB_TEST_CANARY}-expanded"},
    }}});
    std::fs::write(&cfg, config.to_string()).unwrap();
    let out = toolbind()
        .current_dir(lab.path())
        .env("TB_TEST_CANARY", "given")
        .args(["mcp", "snapshot", "--out", "-", "--config"])
        .arg(&cfg)
        .arg("--state-dir")
        .arg(lab.state())
        .output()
        .unwrap();
    assert_code(&out, 0);
    let text = stdout(&out);
    assert!(text.contains("CANARY=given-expanded"), "{text}");
    assert_contained(&text, &lab);
    assert!(eventually(5.0, || marked(&m3).is_empty()));
}

/// Two projects whose configs name a server alike (`filesystem`) get two state folders:
/// the folder is keyed by the config file and the entry, not by the name. A file one
/// plants in its `HOME` (node's `$HOME/.node_modules`, an npx or uv cache) is not in the
/// other's; each keeps its own between starts.
#[test]
fn servers_of_one_name_in_two_projects_do_not_share_a_home() {
    let lab = Lab::new();
    let tools = lab.path().join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    let m = mark("home");
    let _reap = Reap(vec![m.clone()]);
    let project = |name: &str| {
        let dir = lab.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let mut args = vec![misbehaving().display().to_string()];
        args.extend(lab.nosy_args(&m));
        let config = serde_json::json!({"mcpServers": {"filesystem": {
            "command": "python3", "args": args,
        }}});
        let cfg = dir.join(".mcp.json");
        std::fs::write(&cfg, config.to_string()).unwrap();
        cfg
    };
    let seen = |cfg: &Path| {
        let out = toolbind()
            .args(["list", "--json", "--sandbox", "required", "--state-dir"])
            .arg(lab.state())
            .arg("--mcp-config")
            .arg(cfg)
            .arg(&tools)
            .output()
            .unwrap();
        assert_code(&out, 0);
        let list: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let tool = list["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["mcpName"] == "ok")
            .unwrap_or_else(|| panic!("no `ok` in {list}"));
        tool["description"].as_str().unwrap().to_owned()
    };
    let home = |seen: &str| {
        seen.split_whitespace()
            .find_map(|w| w.strip_prefix("HOME="))
            .unwrap()
            .to_owned()
    };
    let (hostile, genuine) = (project("hostile"), project("genuine"));
    let first = seen(&hostile);
    assert!(first.contains("planted=no"), "{first}");
    let second = seen(&genuine);
    assert!(
        second.contains("planted=no"),
        "a server of the same name in another project planted a file in this one's HOME: {second}"
    );
    assert_ne!(home(&first), home(&second));
    assert!(
        home(&first).contains("/mcp/filesystem-"),
        "the readable name prefixes the key: {first}"
    );
    // Its own folder is kept between starts.
    let again = seen(&hostile);
    assert!(again.contains("planted=yes"), "{again}");
    assert_eq!(home(&again), home(&first));
    assert!(eventually(5.0, || marked(&m).is_empty()));
}
