//! Starting a stdio MCP server the way a tool process starts: in toolbind's jail (the
//! tools' bubblewrap sandbox) and in a process group toolbind owns, its pipes handed to the
//! MCP client. No transport of rmcp's spawns or kills it.
//!
//! In the jail the server sees the system folders, the interpreter that runs it, its
//! package folder read-only (the `node_modules` folder its entry sits in, else the entry's
//! folder; the same for a script named in its arguments), its own state folder
//! (`<state root>/mcp/<key>/home`, keyed by what the server is: [`McpServer::state_key`];
//! its `HOME` and working folder unless a granted `cwd` is set), a private `/tmp`, and what
//! the policy grants.
//!
//! Every place a server runs (the executor's connection, `list_tools` for snapshots and
//! checks) starts it here: one policy, one scrubbed environment, one process-group and
//! cgroup owner. Nothing runs unjailed unless the policy is `off`, or `auto` on a machine
//! where bwrap cannot run at all (with the one warning).

use crate::lock::Locked;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use nix::sys::signal::Signal;
use tokio::io::AsyncReadExt;
use tokio::process::{ChildStdin, ChildStdout};

use super::server::{McpServer, which};
use crate::exec::group::Group;
use crate::exec::process::{Io, Stdout, describe_exit, spawn};
use crate::exec::sandbox::{CallCgroup, Jail, Kind, Running, Sandbox};
use crate::exec::{
    ExecConfig, InterpError, JailError, ProbeError, SetupError, StartError, Subject,
};
use toolbind_codegen::model::ToolSpec;

/// How many bytes of the server's stderr are kept for error messages.
const STDERR_TAIL: usize = 4096;

/// A started server: its pipes, and the owner of its process group.
pub(crate) struct Started {
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: ChildStdout,
    pub(crate) process: ServerProcess,
    /// The interpreter it runs in the jail (`None`: unjailed), for [`Sandbox::check`] when
    /// the jailed start fails.
    pub(crate) jailed: Option<(Kind, String)>,
}

/// The server's process group: killed, whole, when this is dropped (an `npx` server is
/// npm's child, and killing npm alone would leave the server running); a jailed server's
/// cgroups go with it.
pub(crate) struct ServerProcess {
    group: Arc<Group>,
    tail: Arc<Mutex<Vec<u8>>>,
    drain: tokio::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    _jail: Option<Running>,
    _tracker: Option<CallCgroup>,
    /// What its jail shows of the host (real paths); `None` unjailed.
    shown: Option<Vec<PathBuf>>,
}

impl ServerProcess {
    /// What its jail shows of the host, as real paths; `None` when it runs unjailed.
    pub(crate) fn shown(&self) -> Option<&[PathBuf]> {
        self.shown.as_deref()
    }

    /// How the process ended, once it has ("exited with code 1", "was killed by signal
    /// 9 (SIGKILL)"); `None` while it runs. Its group is ended and it is reaped at once.
    pub(crate) fn exit(&self) -> Option<String> {
        // Jailed, the process is bwrap, which reports a server killed by signal N as exit
        // code 128 + N (it used to be found, and killed, by its environment too).
        let describe = |s| match &self._jail {
            Some(j) => j.describe(s),
            None => describe_exit(s),
        };
        self.group
            .status()
            .map(|s| s.map_or_else(|| "ended".to_owned(), describe))
    }

    /// Waits up to `limit` for the process to end, then says how it did.
    pub(crate) async fn exit_within(&self, limit: std::time::Duration) -> Option<String> {
        let _ = tokio::time::timeout(limit, self.group.exited()).await;
        self.exit()
    }

    /// Kills the whole group now (the group's owner never signals a reaped one); members
    /// that left it go with the jail's or the tracking cgroup.
    pub(crate) fn kill(&self) {
        self.group.signal(Signal::SIGKILL);
    }

    /// The server's last stderr lines (at most 10, control characters removed), as a
    /// paragraph to append to a message; empty when it wrote none. Once the process has
    /// ended, what it wrote before it went is read first (for at most 500 ms: a child it
    /// left behind may hold the pipe open).
    pub(crate) async fn stderr_note(&self) -> String {
        if self.exit().is_some() {
            let mut drain = self.drain.lock().await;
            if let Some(d) = drain.as_mut()
                && tokio::time::timeout(std::time::Duration::from_millis(500), d)
                    .await
                    .is_ok()
            {
                *drain = None;
            }
        }
        stderr_note(&self.tail)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The server's last stderr lines, for a message.
pub(crate) fn stderr_note(tail: &Mutex<Vec<u8>>) -> String {
    let t = tail.locked();
    let text = String::from_utf8_lossy(&t);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return String::new();
    }
    let mut out = "\nthe server's last stderr lines:".to_owned();
    for l in &lines[lines.len().saturating_sub(10)..] {
        let l: String = l
            .chars()
            .filter(|c| !c.is_control() || *c == '\t')
            .take(300)
            .collect();
        out.push_str("\n  ");
        out.push_str(&l);
    }
    out
}

/// Reads `stderr` to its end in a task, keeping its last bytes (at most 8 KiB, at least
/// 4 KiB once it wrote that much) for messages.
pub(crate) fn keep_tail(
    mut stderr: impl tokio::io::AsyncRead + Unpin + Send + 'static,
) -> (Arc<Mutex<Vec<u8>>>, tokio::task::JoinHandle<()>) {
    let tail = Arc::new(Mutex::new(Vec::<u8>::new()));
    let tail_w = tail.clone();
    let drain = tokio::spawn(async move {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = stderr.read(&mut buf).await {
            let mut t = tail_w.locked();
            t.extend_from_slice(&buf[..n]);
            if t.len() > STDERR_TAIL * 2 {
                let cut = t.len() - STDERR_TAIL;
                t.drain(..cut);
            }
        }
    });
    (tail, drain)
}

/// How the jail runs the server's command.
#[derive(Debug, PartialEq)]
struct Plan {
    /// The interpreter probed and run in the jail.
    kind: Kind,
    program: String,
    /// A native program run in place of the probed interpreter.
    native: Option<PathBuf>,
    /// The arguments after the executable.
    args: Vec<OsString>,
    /// Folders bound read-only.
    binds: Vec<PathBuf>,
    /// Folders put first on the jail's `PATH`: that of an interpreter the jail does not
    /// know, which a script's `#!/usr/bin/env NAME` finds there.
    path: Vec<PathBuf>,
}

/// What a script's `#!` line asks for, as far as the jail believes it. The line comes
/// with the server's package: it is hostile. Only an interpreter the user chose (a bare
/// name `env` finds on the user's `PATH`, or a plain path in `/usr`, `/bin`, `/sbin`) is
/// set up by the jail; any other line makes the script a native program, which the kernel
/// starts inside the jail, its interpreter never probed, run or shown on the host.
#[derive(Debug, PartialEq)]
enum Shebang {
    /// An interpreter the jail knows, the user's: run as `program script args`.
    Known(Kind, String),
    /// Another interpreter, a bare name `env` looks up on the user's `PATH` (`uv` in
    /// `~/.local/bin`): its folder may be shown and put on the jail's `PATH`.
    OnPath(String),
    /// Anything else (a relative or non-system path, `env` with options other than `-S`,
    /// an assignment): nothing of it is shown or trusted.
    Other,
}

/// Reads the `#!` line of `file` (`None`: it has none).
fn shebang(file: &Path) -> Option<Shebang> {
    let mut head = [0u8; 256];
    let n = std::fs::File::open(file).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = line.split(|b| *b == b'\n').next()?;
    let line = String::from_utf8_lossy(line);
    Some(read_shebang(&line))
}

/// The meaning of a `#!` line's text (after `#!`).
fn read_shebang(line: &str) -> Shebang {
    let mut words = line.split_whitespace();
    let Some(first) = words.next() else {
        return Shebang::Other;
    };
    if !crate::exec::sandbox::system_path(Path::new(first)) {
        // `#!./python3`, `#!.venv/bin/python`, `#!/home/x/node`.
        return Shebang::Other;
    }
    if !first.ends_with("/env") {
        return match kind_of(first) {
            Some(k) => Shebang::Known(k, first.to_owned()),
            None => Shebang::Other,
        };
    }
    // `env NAME` or `env -S NAME ARGS`; any other option of env's (`-u`, `-i`, `-C`,
    // `--`), or an assignment, changes what runs: not read.
    let mut name = words.next();
    if matches!(name, Some("-S" | "--split-string")) {
        name = words.next();
    }
    let Some(name) = name else {
        return Shebang::Other;
    };
    if name.starts_with('-') || name.contains('=') {
        return Shebang::Other;
    }
    if name.contains('/') {
        return match kind_of(name) {
            Some(k) if crate::exec::sandbox::system_path(Path::new(name)) => {
                Shebang::Known(k, name.to_owned())
            }
            _ => Shebang::Other,
        };
    }
    match kind_of(name) {
        Some(k) => Shebang::Known(k, name.to_owned()),
        None => Shebang::OnPath(name.to_owned()),
    }
}

/// The interpreter kind of a program by its exact file name (`python3`, `python3.12`,
/// `node`, `bash`), never by a prefix: `python-mcp` or `node-server` is a program of its
/// own.
fn kind_of(name: &str) -> Option<Kind> {
    let base = Path::new(name).file_name()?.to_str()?;
    let python_version = |v: &str| {
        v.is_empty()
            || v == "3"
            || v.strip_prefix("3.")
                .is_some_and(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
    };
    match base {
        "node" | "nodejs" => Some(Kind::Node),
        "bash" | "sh" => Some(Kind::Bash),
        _ => base
            .strip_prefix("python")
            .filter(|v| python_version(v))
            .map(|_| Kind::Python),
    }
}

/// The folder a server's file needs: its `node_modules` ancestor (Node looks for packages
/// in every `node_modules` above a file), the virtualenv whose `bin` holds it (its
/// interpreter finds its packages through `pyvenv.cfg` beside `bin`), else its own
/// folder; `None` for one already in the jail (under `/usr`) or one that must never be
/// shown ([`unsafe_to_show`]).
fn package_folder(file: &Path) -> Option<PathBuf> {
    let real = file.canonicalize().ok()?;
    let parent = real.parent()?;
    let venv = parent.parent().filter(|v| {
        parent.file_name().is_some_and(|n| n == "bin") && v.join("pyvenv.cfg").is_file()
    });
    let dir = real
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .or(venv)
        .unwrap_or(parent)
        .to_path_buf();
    (!dir.starts_with("/usr") && !unsafe_to_show(&dir)).then_some(dir)
}

use crate::exec::sandbox::unsafe_to_show;

/// Whether `arg` names the script an interpreter runs (`server.js`, `main.py`): what the
/// jail shows the package folder of. Any other argument that happens to be a path (a
/// database, a folder to serve) is the server's business and must be granted.
fn is_script(arg: &str) -> bool {
    [".js", ".mjs", ".cjs", ".ts", ".mts", ".py", ".sh"]
        .iter()
        .any(|e| arg.ends_with(e))
}

fn plan(command: &str, args: &[String], cwd: Option<&Path>) -> Result<Plan, ProbeError> {
    let found = which(command).ok_or_else(|| InterpError::NotOnPath {
        program: command.to_owned(),
    })?;
    let real = found.canonicalize().map_err(|e| InterpError::Unresolved {
        path: found.clone(),
        why: e.to_string(),
    })?;
    let mut binds = Vec::new();
    let mut rest: Vec<OsString> = args.iter().map(OsString::from).collect();
    // The script an interpreter runs (`node server.js`; `python3 -m pkg` needs none): the
    // first argument that is not an option, when it is a script. A relative one is passed
    // by its real path: in the jail the server may start in its state folder instead of
    // `cwd` (an ungranted `cwd` is not shown).
    if kind_of(command).is_some()
        && let Some(i) = args.iter().position(|a| !a.starts_with('-'))
        && is_script(&args[i])
    {
        let a = &args[i];
        let p = match cwd {
            Some(c) if Path::new(a).is_relative() => c.join(a),
            _ => PathBuf::from(a),
        };
        if p.is_file() {
            binds.extend(package_folder(&p));
            if Path::new(a).is_relative()
                && let Ok(real) = p.canonicalize()
            {
                rest[i] = real.into_os_string();
            }
        }
    }
    let mut path = Vec::new();
    let (kind, program, native) = if let Some(k) = kind_of(command) {
        (k, command.to_owned(), None)
    } else if let Some(sb) = shebang(&real) {
        binds.extend(package_folder(&real));
        match sb {
            Shebang::Known(k, interp) => {
                rest.insert(0, real.clone().into_os_string());
                (k, interp, None)
            }
            // A script whose `#!` names an interpreter the jail does not set up itself
            // (dash, perl, `env -S uv run --script`), or one the jail does not trust
            // (`#!./python3`): run as a native program, jailed like any other; the kernel
            // starts its interpreter inside the jail. The system's are under `/usr`
            // (shown); a bare name `env` finds on the user's `PATH` has its folder shown
            // read-only and put on `PATH`; any other is not shown (it fails in the jail).
            Shebang::OnPath(interp) => {
                for dir in interpreter_folders(&interp) {
                    path.push(dir.clone());
                    binds.push(dir);
                }
                (Kind::Bash, "bash".to_owned(), Some(real))
            }
            Shebang::Other => (Kind::Bash, "bash".to_owned(), Some(real)),
        }
    } else {
        // A native program: probed with bash (the jail's own userland), run as itself.
        binds.extend(real.parent().and_then(showable_bin));
        (Kind::Bash, "bash".to_owned(), Some(real))
    };
    binds.sort();
    binds.dedup();
    path.dedup();
    Ok(Plan {
        kind,
        program,
        native,
        args: rest,
        binds,
        path,
    })
}

/// `dir` when the jail does not show it already (it is not `/usr`, `/bin`, `/sbin` or
/// below them) and it may be shown ([`unsafe_to_show`]).
fn showable_bin(dir: &Path) -> Option<PathBuf> {
    (!dir.starts_with("/usr")
        && !matches!(dir.to_str(), Some("/bin" | "/sbin"))
        && !unsafe_to_show(dir))
    .then(|| dir.to_path_buf())
}

/// The folders an interpreter a `#!` line names by a bare name (`env uv`) lives in, found
/// on the user's `PATH`: as found (where `env` looks for it) and for real (where a link
/// leads), for those the jail does not show already and may show. Empty for one not
/// found: it then fails in the jail, saying so.
fn interpreter_folders(interp: &str) -> Vec<PathBuf> {
    if interp.contains('/') {
        return Vec::new();
    }
    let Some(found) = which(interp) else {
        return Vec::new();
    };
    let found = std::path::absolute(&found).unwrap_or(found);
    let real = found.canonicalize().unwrap_or_else(|_| found.clone());
    let mut dirs: Vec<PathBuf> = [found.parent(), real.parent()]
        .into_iter()
        .flatten()
        .filter_map(showable_bin)
        .collect();
    dirs.dedup();
    dirs
}

/// The policy the jail of `server` is built from: the server's, with its state root at
/// `<state root>/mcp/<key>` (`SandboxPolicy::state_dir`, else toolbind's own; the key is
/// [`McpServer::state_key`]), so that its `HOME` is `<state root>/mcp/<key>/home`, beside
/// the empty folder the jail is built for (`.../jail`).
pub(crate) fn jail_policy(server: &McpServer) -> crate::sandbox::SandboxPolicy {
    let policy = &server.sandbox;
    let root = match policy.get_state_dir() {
        Some(d) => d.join("mcp"),
        None => crate::dirs::state_root().join("mcp"),
    };
    policy.clone().state_dir(root.join(server.state_key()))
}

/// Whether `name` is a variable the dynamic loader or the C library reads to load code or
/// data from a path (`LD_PRELOAD`, `LD_LIBRARY_PATH`, `GCONV_PATH`, ...): refused in a
/// config's `env` for a server run unjailed (`off`). Jailed, the variables reach only the
/// jailed program (bwrap's `--setenv`), never bwrap itself.
pub(crate) fn is_loader_variable(name: &str) -> bool {
    name.starts_with("LD_")
        || matches!(
            name,
            "GCONV_PATH"
                | "GETCONF_DIR"
                | "GLIBC_TUNABLES"
                | "HOSTALIASES"
                | "LOCPATH"
                | "MALLOC_TRACE"
                | "NIS_PATH"
                | "NLSPATH"
                | "RESOLV_HOST_CONF"
        )
}

/// The reminder after the error of a server that failed in a working jail, naming the grant
/// in the words of the front end its policy was made by ([`GrantHints`]).
///
/// [`GrantHints`]: crate::sandbox::GrantHints
pub(crate) fn grant_hint(policy: &crate::sandbox::SandboxPolicy) -> String {
    let grant = policy.get_grant_hints().grant();
    format!(
        "It runs in toolbind's jail: if it needs a folder or a file the jail does not show, grant it ({grant})."
    )
}

/// What a failed start means, once the jail has been tried out ([`after_failure`]).
pub(crate) enum Failed {
    /// It ran unjailed (`off`, or a jail that cannot run here): its own error.
    Unjailed,
    /// It ran in a jail that works here: its own error, and a reminder to grant what it
    /// needs.
    InWorkingJail,
    /// The jail cannot run here and the mode is `required`, or the jail runs here but not
    /// the server's interpreter (any mode).
    Jail(StartError),
    /// The jail cannot run here and the mode is `auto`: start it again, which runs it
    /// unjailed, with the one warning (the only case a server runs unjailed under `auto`).
    StartAgain,
}

/// Why a server's start (`jailed`: [`Started::jailed`]) failed: the jail is tried out
/// now, once (a blocking interpreter start), to tell a jail that cannot run here from a
/// server that fails in it.
pub(crate) async fn after_failure(
    jailed: Option<(Kind, String)>,
    sandbox: &Arc<Sandbox>,
    mode: crate::sandbox::SandboxMode,
) -> Failed {
    let Some((kind, program)) = jailed else {
        return Failed::Unjailed;
    };
    let sandbox = sandbox.clone();
    // The server's own interpreter failing in the jail excuses nothing: only a jail that
    // cannot run the system shell either (bwrap cannot run here at all) does.
    let trial = tokio::task::spawn_blocking(move || {
        sandbox
            .check(kind, &program)
            .map_err(|why| (why, sandbox.jail_runs_here()))
    })
    .await
    .unwrap_or(Ok(()));
    match trial {
        Ok(()) => Failed::InWorkingJail,
        Err((why, _)) if mode == crate::sandbox::SandboxMode::Required => Failed::Jail(
            StartError::Jail(JailError::Unavailable(why), Subject::Server),
        ),
        Err((why, true)) => Failed::Jail(StartError::Jail(
            JailError::Interpreter(why),
            Subject::Server,
        )),
        Err((_, false)) => Failed::StartAgain,
    }
}

/// Starts a stdio server: jailed under the server's policy (unless it is `off`, or `auto`
/// on a machine where bwrap does not work), in a new process group, stdin and stdout piped
/// for the client, stderr kept (its tail) for messages.
///
/// The jail is not tried out first (`sandbox` is [`Sandbox::untried`]): when a jailed start
/// fails, the caller asks [`Sandbox::check`] whether the jail or the server is to blame.
pub(crate) fn start(server: &McpServer, sandbox: &Sandbox) -> Result<Started, StartError> {
    let super::ServerConfig::Stdio {
        command,
        args,
        env,
        cwd,
    } = &server.config
    else {
        unreachable!("only a stdio server is started as a process");
    };
    let policy = &server.sandbox;
    let mut exec = ExecConfig::default()
        .sandbox(policy.clone())
        .env_set(env.iter().map(|(k, v)| (k.clone(), v.clone())));
    if let Some(c) = cwd {
        exec = exec.cwd(c);
    }
    // The "tool folder" the jail is built for: an empty private folder of the server's own
    // (shown read-only); the "tool" is `home`, so its state folder, `HOME`, is
    // `<state root>/mcp/<name>/home`.
    let jail_root = jail_policy(server);
    let root = jail_root.get_state_dir().expect("jail_policy sets it");
    let own = crate::dirs::private_subdir(root, &["jail"]).map_err(|why| StartError::Folder {
        what: "the server's folder",
        why,
    })?;
    let spec = ToolSpec::process("home", own);
    // Only `off` runs a server unjailed by choice; a command the jail cannot be planned
    // for is refused in every other mode, never run unjailed instead.
    let off = policy.get_mode() == crate::sandbox::SandboxMode::Off;
    if off
        && let Some(config) = &server.origin
        && let Some(var) = env.keys().find(|k| is_loader_variable(k))
    {
        return Err(StartError::LoaderVariable {
            var: var.clone(),
            config: config.clone(),
        });
    }
    let (jail, plan) = if off {
        (None, None)
    } else {
        jail_of(server, sandbox, &spec, root)?
    };
    let jailed = match (&jail, &plan) {
        (Some(_), Some(p)) => Some((p.kind, p.program.clone())),
        _ => None,
    };
    let shown = match (&jail, &plan) {
        (Some(_), Some(p)) => Some(super::hidden::shown(policy, &[root, &spec.dir], &p.binds)),
        _ => None,
    };
    let mut jail = jail;
    let argv = argv_in(jail.as_mut(), plan, args);
    let argv: Vec<&std::ffi::OsStr> = argv.iter().map(OsString::as_os_str).collect();
    let io = Io {
        stdin: true,
        stdout: Stdout::Piped,
        env: &[],
    };
    let mut spawned = spawn(command, &argv, &spec, &exec, io, jail)?;
    // The server does not speak toolbind's harness protocol: its end of fd 3 is closed.
    drop(spawned.control);
    let stdin = spawned.stdin.take().expect("stdin is piped");
    let stdout = spawned.stdout.take().expect("stdout is piped");
    let stderr = spawned.stderr.take().expect("stderr is piped");
    let (tail, drain) = keep_tail(stderr);
    Ok(Started {
        stdin,
        stdout,
        process: ServerProcess {
            group: spawned.group,
            tail,
            drain: tokio::sync::Mutex::new(Some(drain)),
            _jail: spawned.jail,
            _tracker: spawned.tracker,
            shown,
        },
        jailed,
    })
}

/// The server's jail (none where `auto` finds none here) and the plan of its command in
/// it: planned from the command, never with another server's state folder (under `root`'s
/// parent) bound.
fn jail_of(
    server: &McpServer,
    sandbox: &Sandbox,
    spec: &ToolSpec,
    root: &Path,
) -> Result<(Option<Jail>, Option<Plan>), StartError> {
    let super::ServerConfig::Stdio {
        command, args, cwd, ..
    } = &server.config
    else {
        unreachable!("only a stdio server is started as a process");
    };
    let mut p = plan(command, args, cwd.as_deref())
        .map_err(|e| StartError::Jail(JailError::Setup(SetupError::Command(e)), Subject::Server))?;
    // Never another server's state folder (nor the folder holding them all), wherever
    // the policy puts the state root.
    if let Some(all) = root.parent() {
        let all = all.canonicalize().unwrap_or_else(|_| all.to_path_buf());
        p.binds.retain(|b| {
            let b = b.canonicalize().unwrap_or_else(|_| b.clone());
            !b.starts_with(&all) && !all.starts_with(&b)
        });
    }
    let j = sandbox
        .jail(p.kind, &p.program, &[], spec, &p.binds, cwd.as_deref())
        .map_err(|e| StartError::Jail(e, Subject::Server))?;
    Ok((j, Some(p)))
}

/// The server's arguments: in a jail, the plan's (its executable and `PATH` set on the
/// jail); unjailed, as configured.
fn argv_in(jail: Option<&mut Jail>, plan: Option<Plan>, args: &[String]) -> Vec<OsString> {
    match (jail, plan) {
        (Some(j), Some(p)) => {
            if let Some(native) = p.native {
                j.exe = native;
            }
            if !p.path.is_empty()
                && let Some((_, v)) = j.env.iter_mut().find(|(k, _)| k == "PATH")
            {
                let mut dirs = p.path;
                dirs.extend(std::env::split_paths(v));
                if let Ok(joined) = std::env::join_paths(dirs) {
                    *v = joined;
                }
            }
            p.args
        }
        _ => args.iter().map(OsString::from).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shebangs() {
        let dir = std::env::temp_dir().join(format!("toolbind-shebang-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("node_modules/pkg/dist")).unwrap();
        let script = dir.join("node_modules/pkg/dist/index.js");
        std::fs::write(&script, "#!/usr/bin/env node\nconsole.log(1)\n").unwrap();
        assert_eq!(
            shebang(&script),
            Some(Shebang::Known(Kind::Node, "node".into()))
        );
        assert_eq!(
            package_folder(&script),
            Some(dir.join("node_modules").canonicalize().unwrap())
        );
        std::fs::write(&script, "#!/usr/bin/env -S python3 -u\n").unwrap();
        assert_eq!(
            shebang(&script),
            Some(Shebang::Known(Kind::Python, "python3".into()))
        );
        std::fs::write(&script, "\x7fELF").unwrap();
        assert_eq!(shebang(&script), None);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(unsafe_to_show(Path::new("/")));
        assert!(unsafe_to_show(Path::new("/run")));
        assert!(unsafe_to_show(Path::new("/etc/ssl")));
        if let Some(home) = std::env::var_os("HOME") {
            let home = PathBuf::from(home);
            assert!(unsafe_to_show(&home));
            assert!(home.parent().is_none_or(unsafe_to_show));
        }
        assert!(!is_script("/srv/data/notes.db") && is_script("server.mjs"));
        use super::super::server::safe_name;
        assert!(safe_name("../x y").starts_with("_x_y-"));
        assert_ne!(safe_name("a b"), safe_name("a/b"));
        assert_eq!(safe_name("memory"), "memory");
        assert!(safe_name("..").starts_with("server-"));
    }

    #[test]
    fn a_script_of_an_unknown_interpreter_is_planned_as_a_native_program() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        let script = real.join("server");
        std::fs::write(&script, "#!/usr/bin/perl\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let command = script.display().to_string();
        let p = plan(&command, &["--flag".to_owned()], None).unwrap();
        assert_eq!((p.kind, p.program.as_str()), (Kind::Bash, "bash"));
        assert_eq!(p.native.as_deref(), Some(script.as_path()));
        assert_eq!(p.args, [OsString::from("--flag")]);
        assert_eq!(p.binds, std::slice::from_ref(&real));
        assert!(p.path.is_empty(), "perl is under /usr: {:?}", p.path);
        // An interpreter outside the system's folders, by absolute path: untrusted (it
        // comes with the package), so a native program with nothing of it shown.
        std::fs::create_dir(real.join("bin")).unwrap();
        std::os::unix::fs::symlink("/bin/dash", real.join("bin/interp")).unwrap();
        std::fs::write(&script, format!("#!{}/bin/interp -e\n", real.display())).unwrap();
        let p = plan(&command, &[], None).unwrap();
        assert_eq!(p.native.as_deref(), Some(script.as_path()));
        assert!(p.path.is_empty(), "{:?}", p.path);
        assert_eq!(p.binds, std::slice::from_ref(&real));
        // A known one is still run by its interpreter.
        std::fs::write(&script, "#!/usr/bin/env -S python3 -u\n").unwrap();
        let p = plan(&command, &[], None).unwrap();
        assert_eq!((p.kind, p.native), (Kind::Python, None));
        // A command that is not there is an error (refused), not an unjailed start.
        assert!(plan("/nonexistent/server", &[], None).is_err());
    }

    #[test]
    fn state_folders_are_keyed_by_what_the_server_is() {
        let base = || McpServer::stdio("filesystem", "npx", ["-y", "pkg", "."]);
        let key = |s: McpServer| s.state_key();
        let plain = key(base());
        assert_eq!(plain, key(base()), "the same server, the same folder");
        assert!(plain.starts_with("filesystem-") && plain.len() == "filesystem-".len() + 32);
        let mut from_a = base();
        from_a.origin = Some("/a/.mcp.json".into());
        let mut from_b = base();
        from_b.origin = Some("/b/.mcp.json".into());
        let others = [
            key(from_a),
            key(from_b),
            key(McpServer::stdio("filesystem", "npx", ["-y", "pkg", "/"])),
            key(McpServer::stdio("filesystem", "node", ["-y", "pkg", "."])),
            key(base().env("TOKEN", "x")),
            key(base().cwd("/srv")),
            key(McpServer::stdio("filesystem2", "npx", ["-y", "pkg", "."])),
        ];
        for (i, k) in others.iter().enumerate() {
            assert_ne!(*k, plain, "variant {i}");
            assert!(others[i + 1..].iter().all(|o| o != k), "variant {i}");
            assert_eq!(toolbind_codegen::model::path_component_problem(k), None);
        }
        // A server defined in code has no config file: where it runs and the file its
        // command names tell two projects' apart.
        let s = base();
        let at = |w: &str, p: &str| s.state_key_of(Some(w.into()), Some(p.into()));
        assert_ne!(at("/a", "/usr/bin/npx"), at("/b", "/usr/bin/npx"));
        assert_ne!(at("/a", "/a/bin/npx"), at("/a", "/usr/bin/npx"));
        assert_eq!(at("/a", "/usr/bin/npx"), at("/a", "/usr/bin/npx"));
        // A hostile name stays one path component.
        let k = key(McpServer::stdio("..", "npx", Vec::<String>::new()));
        assert_eq!(
            toolbind_codegen::model::path_component_problem(&k),
            None,
            "{k}"
        );
        let k = key(McpServer::stdio("../../x", "npx", Vec::<String>::new()));
        assert_eq!(
            toolbind_codegen::model::path_component_problem(&k),
            None,
            "{k}"
        );
    }

    #[test]
    fn a_relative_script_is_passed_by_its_real_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("server.mjs"), "").unwrap();
        let args = [
            "--no-warnings".to_owned(),
            "server.mjs".to_owned(),
            "x.db".to_owned(),
        ];
        let p = plan("bash", &args, Some(dir.path())).unwrap();
        let real = dir.path().canonicalize().unwrap();
        assert_eq!(p.args[1], real.join("server.mjs").into_os_string());
        assert_eq!(
            p.args[2],
            OsString::from("x.db"),
            "only the script is rewritten"
        );
        assert!(p.binds.contains(&real), "{:?}", p.binds);
        // A script that is a symlink into a system folder: passed by its real path, and
        // its folder (`/etc`) is never shown.
        std::os::unix::fs::symlink("/etc/hostname", dir.path().join("evil.js")).unwrap();
        let p = plan("bash", &["evil.js".to_owned()], Some(dir.path())).unwrap();
        assert!(p.binds.is_empty(), "{:?}", p.binds);
        assert_eq!(p.args[0], OsString::from("/etc/hostname"));
    }

    #[test]
    fn interpreters_are_known_by_their_exact_names() {
        for (name, kind) in [
            ("python", Some(Kind::Python)),
            ("python3", Some(Kind::Python)),
            ("/usr/bin/python3.12", Some(Kind::Python)),
            ("node", Some(Kind::Node)),
            ("nodejs", Some(Kind::Node)),
            ("bash", Some(Kind::Bash)),
            ("sh", Some(Kind::Bash)),
            ("python-mcp", None),
            ("/tmp/x/python-mcp", None),
            ("python3-config", None),
            ("python3.", None),
            ("python3.x", None),
            ("python2", None),
            ("node-server", None),
            ("bashful", None),
        ] {
            assert_eq!(kind_of(name), kind, "{name}");
        }
    }

    /// A `#!` line comes with the server's package: only an interpreter the user chose is
    /// set up (and, for Python, asked on the host where it lives); anything else is a
    /// native program that the kernel starts inside the jail.
    #[test]
    fn a_shebang_is_believed_only_for_the_users_interpreters() {
        use Shebang::*;
        for (line, want) in [
            ("/usr/bin/env node", Known(Kind::Node, "node".into())),
            (
                "/usr/bin/env -S python3 -u",
                Known(Kind::Python, "python3".into()),
            ),
            (
                "/usr/bin/env --split-string python3",
                Known(Kind::Python, "python3".into()),
            ),
            (
                "/usr/bin/python3 -u",
                Known(Kind::Python, "/usr/bin/python3".into()),
            ),
            ("/bin/bash", Known(Kind::Bash, "/bin/bash".into())),
            ("/usr/bin/env -S uv run --script", OnPath("uv".into())),
            ("/usr/bin/perl -w", Other),
            // Relative or outside the system's folders: never run, probed or shown.
            ("./python3", Other),
            (".venv/bin/python", Other),
            ("/root/rv-evil/node", Other),
            ("/usr/../root/node", Other),
            ("./env python3", Other),
            ("/tmp/env python3", Other),
            ("/usr/bin/env /tmp/x/python3", Other),
            (
                "/usr/bin/env /usr/bin/python3",
                Known(Kind::Python, "/usr/bin/python3".into()),
            ),
            // env's options other than -S change what runs: not read.
            ("/usr/bin/env -S -u python9 sh -c 'id'", Other),
            ("/usr/bin/env -u python9 sh", Other),
            ("/usr/bin/env -i python3", Other),
            (
                "/usr/bin/env -S -u /root/.rvs/credentials sh -c 'cat x'",
                Other,
            ),
            ("/usr/bin/env LD_PRELOAD=/x.so python3", Other),
            ("/usr/bin/env -- python3", Other),
            ("/usr/bin/env -Spython3", Other),
            ("/usr/bin/env", Other),
            ("", Other),
        ] {
            assert_eq!(read_shebang(line), want, "#!{line}");
        }
    }

    #[test]
    fn an_untrusted_shebang_is_a_native_program_with_nothing_of_it_shown() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        std::fs::create_dir(real.join("pkg")).unwrap();
        std::fs::create_dir(real.join("bin")).unwrap();
        std::fs::write(real.join("bin/python3"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(real.join("bin/python3"), PermissionsExt::from_mode(0o755))
            .unwrap();
        let script = real.join("pkg/server");
        let command = script.display().to_string();
        for line in [
            format!("#!{}/bin/python3\n", real.display()),
            "#!./python3\n".to_owned(),
            "#!../bin/python3\n".to_owned(),
            format!("#!/usr/bin/env -S -u x {}/bin/python3\n", real.display()),
            format!("#!/usr/bin/env {}/bin/python3\n", real.display()),
        ] {
            std::fs::write(&script, &line).unwrap();
            std::fs::set_permissions(&script, PermissionsExt::from_mode(0o755)).unwrap();
            let p = plan(&command, &[], None).unwrap();
            assert_eq!((p.kind, p.program.as_str()), (Kind::Bash, "bash"), "{line}");
            assert_eq!(p.native.as_deref(), Some(script.as_path()), "{line}");
            assert_eq!(p.binds, [real.join("pkg")], "{line}");
            assert!(p.path.is_empty(), "{line}");
        }
        // A command named like an interpreter but not one (`python-mcp`): run by its own
        // `#!` (the system's sh here), never as a Python.
        let mcp = real.join("pkg/python-mcp");
        std::fs::write(&mcp, "#!/bin/sh\nid\n").unwrap();
        std::fs::set_permissions(&mcp, PermissionsExt::from_mode(0o755)).unwrap();
        let p = plan(&mcp.display().to_string(), &[], None).unwrap();
        assert_eq!((p.kind, p.program.as_str()), (Kind::Bash, "/bin/sh"));
        assert_eq!(p.args, [mcp.into_os_string()]);
    }

    #[test]
    fn a_venv_script_shows_its_venv() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let venv = dir.path().canonicalize().unwrap().join("venv");
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        std::fs::write(venv.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        let script = venv.join("bin/mcp-server-x");
        std::fs::write(&script, format!("#!{}/bin/python\n", venv.display())).unwrap();
        std::fs::set_permissions(&script, PermissionsExt::from_mode(0o755)).unwrap();
        assert_eq!(package_folder(&script), Some(venv.clone()));
    }

    #[test]
    fn homes_secret_folders_and_state_roots_are_never_shown() {
        let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
            return;
        };
        let home = home.canonicalize().unwrap_or(home);
        for d in [
            home.clone(),
            home.join(".ssh"),
            home.join(".aws/x"),
            home.join(".cache"),
            home.join(".config"),
            home.join(".config/gh"),
            home.join(".local"),
            home.join(".local/share/keyrings"),
            home.join("projects/../.ssh"),
            PathBuf::from("relative/bin"),
            crate::dirs::state_root(),
            crate::dirs::state_root().join("mcp/other-0123/home"),
        ] {
            assert!(unsafe_to_show(&d), "{}", d.display());
        }
        for d in [
            home.join(".local/bin"),
            home.join(".local/share/uv/python/cpython-3.12"),
            home.join(".cache/toolbind/clients/servers/node_modules"),
            home.join(".npm/_npx/0123abcd/node_modules"),
            home.join(".nvm/versions/node/v20.0.0"),
            home.join("projects/srv"),
            PathBuf::from("/opt/node"),
        ] {
            assert!(!unsafe_to_show(&d), "{}", d.display());
        }
        // A link to the home is judged by where it leads.
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(&home, dir.path().join("h")).unwrap();
        assert!(unsafe_to_show(&dir.path().join("h")));
        assert!(is_loader_variable("LD_PRELOAD") && is_loader_variable("GCONV_PATH"));
        assert!(!is_loader_variable("PATH") && !is_loader_variable("OLD_PRELOAD"));
    }
}
