//! One jailed start for every place a stdio MCP server runs (the executor, `list
//! --mcp-config`, `mcp snapshot`, `mcp check`), played by a server that tries what a hostile
//! one would (fixtures/mcp_servers/misbehaving.py, mode `nosy`): read a file outside its
//! grants, write one, see the agent's environment, plant a file in its `HOME` for another
//! server of the same name, leave a setsid daemon behind. It reports what it saw in its
//! tool's description.

use crate::common;

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

/// Runs `toolbind mcp snapshot` of `command args` in `dir`, under `mode`.
fn snapshot_in(dir: &Path, lab: &Lab, mode: &str, command: &Path, args: &[String]) -> Output {
    let mut cmd = toolbind();
    cmd.current_dir(dir);
    snapshot_with(cmd, lab, mode, command, args)
}

/// Runs `toolbind mcp snapshot` of `command args` under `mode` with `cmd`'s folder and
/// environment.
fn snapshot_with(
    mut cmd: std::process::Command,
    lab: &Lab,
    mode: &str,
    command: &Path,
    args: &[String],
) -> Output {
    cmd.env_remove("XDG_STATE_HOME")
        .args([
            "mcp",
            "snapshot",
            "--out",
            "-",
            "--name",
            "srv",
            "--sandbox",
            mode,
        ])
        .arg("--state-dir")
        .arg(lab.state())
        .arg("--")
        .arg(command)
        .args(args)
        .output()
        .unwrap()
}

use std::process::Output;

/// Nothing a server names runs on the host: not a command named like an interpreter
/// (`python-mcp`, which toolbind used to ask on the host where its Python lives), not the
/// interpreter of a `#!` line that is relative or outside the system's folders, and not,
/// under `auto`, a script whose `#!` line fails in the jail on purpose (an interpreter
/// that is not there behind env's `-u`, a `./node` that fails its trial): those used to
/// run the script unjailed. Each writes to a file the jail does not let it write.
#[test]
fn nothing_a_server_names_runs_on_the_host() {
    let lab = Lab::new();
    let srv = lab.path().join("srv");
    std::fs::create_dir_all(&srv).unwrap();
    std::fs::copy(misbehaving(), srv.join("misbehaving.py")).unwrap();
    let log = lab.path().join("ran-on-host");
    let script = |name: &str, text: String| {
        let p = srv.join(name);
        std::fs::write(&p, text).unwrap();
        make_executable(&p);
        p
    };
    let m = mark("host");
    let _reap = Reap(vec![m.clone()]);
    let (l, s) = (log.display(), srv.display());
    let python_mcp = script(
        "python-mcp",
        format!("#!/bin/sh\necho \"$$\" >> {l}\nexec python3 {s}/misbehaving.py \"$@\"\n"),
    );
    script(
        "python3",
        format!("#!/bin/sh\necho \"$$\" >> {l}\nexec /usr/bin/python3 \"$@\"\n"),
    );
    script(
        "node",
        format!("#!/bin/sh\n[ \"$1\" = -e ] && exit 1\necho \"$$\" >> {l}\nexit 1\n"),
    );
    let cases = [
        ("python-mcp", python_mcp),
        (
            "relative #!",
            script("rel", format!("#!./python3\n# {s}/misbehaving.py\n")),
        ),
        (
            "absolute #! outside the system",
            script("abs", format!("#!{s}/python3\n")),
        ),
        (
            "env -S -u",
            script(
                "env-u",
                format!("#!/usr/bin/env -S -u python9 sh -c 'echo escaped >> {l}'\n"),
            ),
        ),
        (
            "a ./node that fails its trial",
            script("dot-node", "#!./node\n".into()),
        ),
    ];
    // Every case is tried, and every escape named, before the test fails.
    let mut escaped = Vec::new();
    for (what, command) in &cases {
        for mode in ["auto", "required"] {
            let out = snapshot_in(&srv, &lab, mode, command, &lab.nosy_args(&m));
            if let Ok(ran) = std::fs::read_to_string(&log) {
                escaped.push(format!("{what} ({mode}) ran on the host: {ran}"));
                std::fs::remove_file(&log).unwrap();
            } else if *what == "python-mcp" {
                assert_code(&out, 0);
                assert_contained(&stdout(&out), &lab);
            } else {
                assert_ne!(out.status.code(), Some(0), "{what} ({mode})");
            }
        }
    }
    assert!(escaped.is_empty(), "{}", escaped.join("\n"));
    assert!(eventually(5.0, || marked(&m).is_empty()));
}

/// An interpreter or a `#!` line never widens the jail to the user's home or a secret
/// folder in it: a `node` in `~/rv-evil` used to have its grandparent (the whole home)
/// shown, and `#!/usr/bin/env -S -u ~/.rvs/credentials sh -c ...` the folder of the file
/// env's option named.
#[test]
fn an_interpreter_does_not_show_the_home_it_lives_in() {
    let lab = Lab::new();
    let home = lab.path().join("home");
    let evil = home.join("rv-evil");
    std::fs::create_dir_all(&evil).unwrap();
    std::fs::create_dir_all(home.join(".rvs")).unwrap();
    std::fs::write(home.join(".rv-secret"), "s3cret\n").unwrap();
    std::fs::write(home.join(".rvs/credentials"), "rvs-s3cret\n").unwrap();
    std::fs::copy(misbehaving(), evil.join("misbehaving.py")).unwrap();
    let node = evil.join("node");
    std::fs::write(&node, "#!/bin/sh\nexec python3 \"$@\"\n").unwrap();
    make_executable(&node);
    let m = mark("home-interp");
    let _reap = Reap(vec![m.clone()]);
    let run = |mode: &str, command: &Path, args: &[String]| {
        let mut cmd = toolbind();
        cmd.env("HOME", &home);
        snapshot_with(cmd, &lab, mode, command, args)
    };
    let args = [
        evil.join("misbehaving.py").display().to_string(),
        "nosy".into(),
        home.join(".rv-secret").display().to_string(),
        lab.outside().display().to_string(),
        m.clone(),
    ];
    let mut shown = Vec::new();
    for mode in ["auto", "required"] {
        let out = run(mode, &node, &args);
        assert_code(&out, 0);
        let seen = stdout(&out);
        if !seen.contains("secret=unreadable") || seen.contains("s3cret") {
            shown.push(format!(
                "{mode}: the home the interpreter lives in was shown: {seen}"
            ));
        }
    }
    let creds = home.join(".rvs/credentials");
    let script = evil.join("creds");
    std::fs::write(
        &script,
        format!(
            "#!/usr/bin/env -S -u {c} sh -c 'cat {c} >&2'\n",
            c = creds.display()
        ),
    )
    .unwrap();
    make_executable(&script);
    for mode in ["auto", "required"] {
        let out = run(mode, &script, &[]);
        assert_ne!(out.status.code(), Some(0));
        if stderr(&out).contains("rvs-s3cret") {
            shown.push(format!(
                "{mode}: a #! line showed a secret folder: {}",
                stderr(&out)
            ));
        }
    }
    assert!(shown.is_empty(), "{}", shown.join("\n"));
    assert!(eventually(5.0, || marked(&m).is_empty()));
}

/// A config's `env` reaches the jailed server only: bwrap runs on the host with none of
/// it (a `LD_PRELOAD` there would run code in bwrap before any namespace exists; here
/// `LD_DEBUG_OUTPUT` makes the loader of whatever process gets it write a file). With the
/// sandbox off, such a variable from a config is refused.
#[test]
fn a_configs_env_does_not_reach_bwrap() {
    let lab = Lab::new();
    let m = mark("ldenv");
    let _reap = Reap(vec![m.clone()]);
    let mut args = vec![misbehaving().display().to_string()];
    args.extend(lab.nosy_args(&m));
    let debug = lab.path().join("lddebug");
    let config = serde_json::json!({"mcpServers": {"nosy": {
        "command": "python3", "args": args,
        "env": {"LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": debug, "CANARY": "in-the-jail"},
    }}});
    let cfg = lab.path().join(".mcp.json");
    std::fs::write(&cfg, config.to_string()).unwrap();
    let snapshot = |mode: &str| {
        toolbind()
            .current_dir(lab.path())
            .args([
                "mcp",
                "snapshot",
                "--out",
                "-",
                "--sandbox",
                mode,
                "--config",
            ])
            .arg(&cfg)
            .arg("--state-dir")
            .arg(lab.state())
            .output()
            .unwrap()
    };
    let written = || {
        std::fs::read_dir(lab.path())
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.starts_with("lddebug"))
            .collect::<Vec<_>>()
    };
    let out = snapshot("required");
    assert_code(&out, 0);
    let text = stdout(&out);
    assert!(text.contains("CANARY=in-the-jail"), "{text}");
    assert_contained(&text, &lab);
    assert_eq!(
        written(),
        Vec::<String>::new(),
        "the loader ran on the host with the config's env"
    );
    let out = snapshot("off");
    assert_ne!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("LD_DEBUG") && stderr(&out).contains("refused"),
        "{}",
        stderr(&out)
    );
    assert_eq!(written(), Vec::<String>::new());
    assert!(eventually(5.0, || marked(&m).is_empty()));
}

/// A server defined in code has no config file and, unless it sets one, no working
/// folder: the folder toolbind runs in keys its state folder, so the same server started
/// in another project does not find what the first planted in its `HOME`. Each start is a
/// process of this test binary run in that folder (`home_per_folder_child`): a test must
/// not change the folder of the process every other test runs in.
#[test]
fn a_server_defined_in_code_has_a_home_per_folder() {
    let lab = Lab::new();
    let m = mark("cwd-key");
    let _reap = Reap(vec![m.clone()]);
    let mut args = vec![misbehaving().display().to_string()];
    args.extend(lab.nosy_args(&m));
    let mut seen = Vec::new();
    for project in ["one", "two", "one"] {
        let dir = lab.path().join(project);
        std::fs::create_dir_all(&dir).unwrap();
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "mcp_jail::home_per_folder_child",
                "--exact",
                "--ignored",
                "--nocapture",
            ])
            .current_dir(&dir)
            .env(HOME_CHILD_ENV, args.join("\n"))
            .env(HOME_CHILD_STATE_ENV, lab.state())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix("DESCRIPTION "))
            .unwrap_or_else(|| panic!("{text}{}", String::from_utf8_lossy(&out.stderr)))
            .to_owned();
        seen.push(line);
    }
    assert!(seen[0].contains("planted=no"), "{}", seen[0]);
    assert!(
        seen[1].contains("planted=no"),
        "the same server started in another folder shared a HOME: {}",
        seen[1]
    );
    assert!(
        seen[2].contains("planted=yes"),
        "its own HOME is kept: {}",
        seen[2]
    );
    assert!(eventually(5.0, || marked(&m).is_empty()));
}

/// The arguments of the server (one a line) of `home_per_folder_child`, and its state
/// folder.
const HOME_CHILD_ENV: &str = "TOOLBIND_TEST_HOME_CHILD_ARGS";
const HOME_CHILD_STATE_ENV: &str = "TOOLBIND_TEST_HOME_CHILD_STATE";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "helper: run in a folder of its own by a_server_defined_in_code_has_a_home_per_folder"]
async fn home_per_folder_child() {
    let (Some(args), Some(state)) = (
        std::env::var_os(HOME_CHILD_ENV),
        std::env::var_os(HOME_CHILD_STATE_ENV),
    ) else {
        return;
    };
    let args: Vec<String> = args.to_string_lossy().lines().map(str::to_owned).collect();
    let server = McpServer::stdio("fs", "python3", args)
        .sandbox(
            SandboxPolicy::new()
                .mode(SandboxMode::Required)
                .state_dir(std::path::PathBuf::from(state)),
        )
        .connect_timeout(Duration::from_secs(30));
    let runtime = tokio::time::timeout(
        Duration::from_secs(60),
        Runtime::builder().mcp_server(server).connect(),
    )
    .await
    .expect("connect within 60 s")
    .unwrap();
    let tool = runtime
        .registry()
        .iter()
        .find(|t| t.name() == "ok")
        .unwrap();
    println!("DESCRIPTION {}", tool.description());
}

/// The lighter jail serves stdio servers through the same one jailed start: chosen
/// (`--sandbox light`), or under `auto` where bwrap cannot make a user namespace (a
/// `bwrap` on `PATH` that fails as bwrap does there), where `required` refuses and names
/// the opt-in.
#[test]
fn the_lighter_jail_contains_a_server_too() {
    use std::os::unix::fs::PermissionsExt;
    let lab = Lab::new();
    let bin = lab.path().join("no-userns");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(
        bin.join("bwrap"),
        "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(bin.join("bwrap"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut dirs = vec![bin.clone()];
    dirs.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap()));
    let no_userns = std::env::join_paths(dirs).unwrap();
    let python = which_python();
    for (mode, path) in [
        ("light", std::env::var_os("PATH").unwrap()),
        ("auto", no_userns.clone()),
    ] {
        let m = mark(mode);
        let _reap = Reap(vec![m.clone()]);
        let mut cmd = toolbind();
        cmd.current_dir(lab.path())
            .env("CANARY", "from-the-agent")
            .env("PATH", &path);
        let mut args = vec![misbehaving().display().to_string()];
        args.extend(lab.nosy_args(&m));
        let out = snapshot_with(cmd, &lab, mode, &python, &args);
        assert_code(&out, 0);
        let text = stdout(&out);
        assert_contained(&text, &lab);
        assert!(text.contains("CANARY=unset"), "{mode}: {text}");
        assert!(
            eventually(5.0, || marked(&m).is_empty()),
            "{mode}: the server's setsid daemon outlived the snapshot: {:?}",
            marked(&m)
        );
    }
    let m = mark("required");
    let _reap = Reap(vec![m.clone()]);
    let mut cmd = toolbind();
    cmd.current_dir(lab.path()).env("PATH", &no_userns);
    let mut args = vec![misbehaving().display().to_string()];
    args.extend(lab.nosy_args(&m));
    let out = snapshot_with(cmd, &lab, "required", &python, &args);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--sandbox light") && stderr(&out).contains("user namespace"),
        "{}",
        stderr(&out)
    );
}

/// `python3` as found on `PATH`, absolute.
fn which_python() -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("python3"))
        .find(|p| p.is_file())
        .expect("python3 on PATH")
}
