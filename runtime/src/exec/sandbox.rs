//! The jail every tool process runs in: bubblewrap (`bwrap`) plus resource limits.
//!
//! Everything a tool process can reach is decided here: which host folders it sees (and
//! whether it may write them), whether it has a network, its limits, its `HOME`. The
//! executors call [`Sandbox::jail`] once per process they start and hand the result to
//! `process::spawn`, the single place a tool process is started.
//!
//! What the jail is made of (and why each piece is there) is in `docs/sandbox.md`,
//! and what it costs per call in BENCHMARKS.md's. The measured facts behind the
//! choices (which rlimit each interpreter survives, when `--die-with-parent` fires) are
//! stated here and at the code they shaped. In short:
//!
//! - bwrap's PID, IPC, UTS, user (and unless allowed, network) namespaces, a new session,
//!   `--die-with-parent` (every descendant dies with the call or worker, and with the agent
//!   even when it is SIGKILLed), `--cap-drop ALL` (a root caller would otherwise keep its
//!   capabilities and could remount a read-only bind read-write). bwrap always sets
//!   no-new-privileges.
//! - A root filesystem of `/usr` and the host's `/bin`, `/lib*` layout, a minimal `/etc`,
//!   the real prefix of the interpreter, the tool folder (and its transpiled mirror and the
//!   harness file) read-only, the grants, a writable per-tool state folder (`HOME`), a
//!   size-capped private `/tmp` and `/dev/shm`, fresh `/proc` and `/dev`.
//! - rlimits set before bwrap starts: `RLIMIT_DATA` (memory: the one limit node, python
//!   and bash all survive), `RLIMIT_CPU` (re-armed per call on a warm worker),
//!   `RLIMIT_NOFILE`, `RLIMIT_FSIZE`; processes are bounded by a `pids` cgroup where one is
//!   writable (RLIMIT_NPROC does nothing for root), else by `RLIMIT_NPROC` for a non-root
//!   runtime.
//! - bwrap reads its options from a pipe (`--args 4`), never from argv.
//!
//! bwrap's `--die-with-parent` fires when the *thread* that started it exits, so tool
//! processes are spawned from the async runtime's worker threads (which live as long as
//! the runtime), never from a short-lived blocking thread.

use super::error::{InterpError, JailError, ProbeError, SetupError};
use crate::result::{Limit, StopReason};
use std::collections::HashMap;
use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use nix::sys::resource::Resource;
use toolbind_codegen::model::{Fnv, ToolSpec};

/// Whether tool processes run in the jail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SandboxMode {
    /// Always jail; a call fails (naming the missing `bwrap` and how to install it) when
    /// the jail cannot run on this machine.
    Required,
    /// Jail when bwrap works here with the interpreters in use; otherwise warn once per
    /// process and run unjailed, as [`Off`](Self::Off).
    #[default]
    Auto,
    /// Never jail, no limits: a tool sees what the agent's user sees. Each tool process
    /// still dies with the runtime (`PR_SET_PDEATHSIG`) and its process group is killed
    /// when the call ends; where a `pids` cgroup can be made, everything the call started
    /// (a `setsid` daemon included) is killed too. Without one, a process that leaves the
    /// group survives: [`SandboxStatus::reason`] says which case applies.
    Off,
}

impl SandboxMode {
    /// `required`, `auto` or `off`.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Required => "required",
            SandboxMode::Auto => "auto",
            SandboxMode::Off => "off",
        }
    }

    /// The mode spelled `name` (`required`, `auto`, `off`).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "required" => SandboxMode::Required,
            "auto" => SandboxMode::Auto,
            "off" => SandboxMode::Off,
            _ => return None,
        })
    }
}

impl std::fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Resource limits of one jailed call (one-shot) or worker (warm). `None`: unlimited.
/// Start from [`SandboxLimits::default`] and change what you need:
///
/// ```
/// use std::time::Duration;
/// use toolbind::sandbox::SandboxLimits;
/// let limits = SandboxLimits::default()
///     .cpu(Duration::from_secs(30))
///     .memory(None)
///     .processes(64);
/// assert_eq!(limits.get_processes(), Some(64));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxLimits {
    pub(crate) memory: Option<u64>,
    pub(crate) cpu: Option<Duration>,
    pub(crate) open_files: u64,
    pub(crate) file_size: Option<u64>,
    pub(crate) processes: Option<u64>,
    pub(crate) tmp_size: u64,
    pub(crate) call_memory: Option<u64>,
}

impl SandboxLimits {
    /// Bytes of private writable memory per process (`RLIMIT_DATA`). Default 1 GiB.
    pub fn memory(mut self, bytes: impl Into<Option<u64>>) -> Self {
        self.memory = bytes.into();
        self
    }

    /// CPU time per call (`RLIMIT_CPU`, re-armed at each call of a warm worker).
    /// Default 300 s.
    pub fn cpu(mut self, time: impl Into<Option<Duration>>) -> Self {
        self.cpu = time.into();
        self
    }

    /// Open files per process (`RLIMIT_NOFILE`); at least 256. Default 1024.
    pub fn open_files(mut self, n: u64) -> Self {
        self.open_files = n;
        self
    }

    /// The largest file a tool may write (`RLIMIT_FSIZE`). Default 1 GiB.
    pub fn file_size(mut self, bytes: impl Into<Option<u64>>) -> Self {
        self.file_size = bytes.into();
        self
    }

    /// Processes (and threads) in the jail at once: a `pids` cgroup where one is
    /// writable, else `RLIMIT_NPROC` for a non-root runtime. Default 256.
    pub fn processes(mut self, n: impl Into<Option<u64>>) -> Self {
        self.processes = n.into();
        self
    }

    /// Size of the jail's private `/tmp` and of its `/dev/shm`. Default 256 MiB.
    pub fn tmp_size(mut self, bytes: u64) -> Self {
        self.tmp_size = bytes;
        self
    }

    /// Bytes of memory of all the jail's processes together (and what they keep in its
    /// `/tmp`): a `memory` cgroup where one is writable, else not bounded (the per-process
    /// [`memory`](Self::memory) limit still holds). Default 2 GiB.
    pub fn call_memory(mut self, bytes: impl Into<Option<u64>>) -> Self {
        self.call_memory = bytes.into();
        self
    }

    /// See [`memory`](Self::memory).
    pub fn get_memory(&self) -> Option<u64> {
        self.memory
    }

    /// See [`cpu`](Self::cpu).
    pub fn get_cpu(&self) -> Option<Duration> {
        self.cpu
    }

    /// See [`open_files`](Self::open_files).
    pub fn get_open_files(&self) -> u64 {
        self.open_files
    }

    /// See [`file_size`](Self::file_size).
    pub fn get_file_size(&self) -> Option<u64> {
        self.file_size
    }

    /// See [`processes`](Self::processes).
    pub fn get_processes(&self) -> Option<u64> {
        self.processes
    }

    /// See [`tmp_size`](Self::tmp_size).
    pub fn get_tmp_size(&self) -> u64 {
        self.tmp_size
    }

    /// See [`call_memory`](Self::call_memory).
    pub fn get_call_memory(&self) -> Option<u64> {
        self.call_memory
    }
}

impl Default for SandboxLimits {
    fn default() -> Self {
        SandboxLimits {
            memory: Some(1 << 30),
            cpu: Some(Duration::from_secs(300)),
            open_files: 1024,
            file_size: Some(1 << 30),
            processes: Some(256),
            tmp_size: 256 << 20,
            call_memory: Some(2 << 30),
        }
    }
}

/// What a tool process may reach: the sandbox mode, grants, network and limits.
///
/// ```
/// use toolbind::sandbox::{SandboxMode, SandboxPolicy};
/// let policy = SandboxPolicy::new()
///     .mode(SandboxMode::Required)
///     .allow_read("/srv/mail/sample.db")
///     .allow_write("/srv/audio")
///     .network(false);
/// assert_eq!(policy.get_write().len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    pub(crate) mode: SandboxMode,
    pub(crate) network: bool,
    pub(crate) read: Vec<PathBuf>,
    pub(crate) write: Vec<PathBuf>,
    pub(crate) limits: SandboxLimits,
    pub(crate) state_dir: Option<PathBuf>,
    pub(crate) bwrap: PathBuf,
}

impl Default for SandboxPolicy {
    fn default() -> Self {
        SandboxPolicy {
            mode: SandboxMode::Auto,
            network: true,
            read: Vec::new(),
            write: Vec::new(),
            limits: SandboxLimits::default(),
            state_dir: None,
            bwrap: PathBuf::from("bwrap"),
        }
    }
}

impl SandboxPolicy {
    /// The defaults: `auto`, network on, no grants, default limits.
    pub fn new() -> Self {
        Self::default()
    }

    /// No jail at all; see [`SandboxMode::Off`] for what still holds.
    pub fn off() -> Self {
        Self::default().mode(SandboxMode::Off)
    }

    /// The sandbox mode. Default [`SandboxMode::Auto`].
    pub fn mode(mut self, mode: SandboxMode) -> Self {
        self.mode = mode;
        self
    }

    /// Network access (default on; seed tools fetch the web). A tool's TOOL.md
    /// `sandbox: {network: false}` turns it off for that tool.
    pub fn network(mut self, on: bool) -> Self {
        self.network = on;
        self
    }

    /// Grants every tool read access to `path`.
    pub fn allow_read(mut self, path: impl Into<PathBuf>) -> Self {
        self.read.push(path.into());
        self
    }

    /// Grants every tool read and write access to `path`.
    pub fn allow_write(mut self, path: impl Into<PathBuf>) -> Self {
        self.write.push(path.into());
        self
    }

    /// Resource limits inside the jail. Default [`SandboxLimits::default`].
    pub fn limits(mut self, limits: SandboxLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Where the per-tool state folders live (`<state_dir>/<tool>`). Default:
    /// `$XDG_STATE_HOME/toolbind/<hash of the tools folder>/`, else
    /// `~/.local/state/toolbind/<hash>/`, else `$TMPDIR/toolbind-<euid>/state/<hash>/`.
    /// Every folder from this root down is created `0700` and checked before each jailed
    /// process starts: a symlink, or a folder owned by another user, is refused.
    pub fn state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// The bubblewrap binary. Default `bwrap` (looked up on `PATH`).
    pub fn bwrap(mut self, program: impl Into<PathBuf>) -> Self {
        self.bwrap = program.into();
        self
    }

    /// See [`mode`](Self::mode).
    pub fn get_mode(&self) -> SandboxMode {
        self.mode
    }

    /// See [`network`](Self::network).
    pub fn get_network(&self) -> bool {
        self.network
    }

    /// The paths every tool may read ([`allow_read`](Self::allow_read)).
    pub fn get_read(&self) -> &[PathBuf] {
        &self.read
    }

    /// The paths every tool may read and write ([`allow_write`](Self::allow_write)).
    pub fn get_write(&self) -> &[PathBuf] {
        &self.write
    }

    /// See [`limits`](Self::limits).
    pub fn get_limits(&self) -> &SandboxLimits {
        &self.limits
    }

    /// See [`state_dir`](Self::state_dir); `None`: the default location.
    pub fn get_state_dir(&self) -> Option<&Path> {
        self.state_dir.as_deref()
    }

    /// See [`bwrap`](Self::bwrap).
    pub fn get_bwrap(&self) -> &Path {
        &self.bwrap
    }

    /// The state folder of `tool`: writable in the jail, its `HOME`, kept between calls.
    pub fn tool_state_dir(&self, tool: &crate::ToolInfo) -> PathBuf {
        self.state_dir_of(tool.spec())
    }

    /// [`tool_state_dir`](Self::tool_state_dir) of codegen's model of the tool.
    pub(crate) fn state_dir_of(&self, tool: &ToolSpec) -> PathBuf {
        let (root, below) = self.state_location(tool);
        below.iter().fold(root, |p, c| p.join(c))
    }

    /// The state root and the folders below it that make `tool`'s state folder.
    fn state_location(&self, tool: &ToolSpec) -> (PathBuf, Vec<String>) {
        match &self.state_dir {
            Some(root) => (root.clone(), vec![tool.name.clone()]),
            None => {
                let tools_folder = tool.dir.parent().unwrap_or(&tool.dir);
                let mut h = Fnv::new();
                h.write(tools_folder.as_os_str().as_bytes());
                (
                    crate::dirs::state_root(),
                    vec![format!("{:08x}", h.finish() as u32), tool.name.clone()],
                )
            }
        }
    }

    /// [`tool_state_dir`](Self::tool_state_dir), created if missing and checked, every
    /// time, to be a private folder of this user's reached without following a symlink;
    /// its path as the bind mount takes it.
    fn checked_state_dir(&self, tool: &ToolSpec) -> Result<PathBuf, SetupError> {
        let (root, below) = self.state_location(tool);
        if self.state_dir.is_some() {
            // `<DIR>/<tool>`: a DIR holding toolbind's own state root would hand a tool
            // named `spill`, `http-token`'s folder or a hash folder what is not its own.
            let real = |p: &Path| {
                p.canonicalize()
                    .unwrap_or_else(|_| std::path::absolute(p).unwrap_or_else(|_| p.into()))
            };
            let own = real(&crate::dirs::state_root());
            if own.starts_with(real(&root)) {
                return Err(SetupError::StateHoldsOwn { root, own });
            }
        }
        let below: Vec<&str> = below.iter().map(String::as_str).collect();
        crate::dirs::private_subdir(&root, &below).map_err(|why| SetupError::StateDir {
            tool: tool.name.clone(),
            why,
        })
    }
}

/// Which sandbox is in force and why (for `toolbind list` and agents' start-up lines).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxStatus {
    /// The configured mode.
    pub mode: SandboxMode,
    /// Whether tool processes run in the bubblewrap jail.
    pub jailed: bool,
    /// Why, in a sentence: what works, or what is missing.
    pub reason: String,
}

impl std::fmt::Display for SandboxStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.jailed {
            "bubblewrap jail"
        } else {
            "no jail"
        };
        write!(f, "{} -> {what}: {}", self.mode, self.reason)
    }
}

/// The kind of interpreter, for the probe's command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    Node,
    Python,
    Bash,
}

/// An interpreter as the jail sees it.
#[derive(Debug, Clone)]
struct Interp {
    /// The real executable, run by absolute path inside the jail.
    exe: PathBuf,
    /// Host folders (outside `/usr`) the interpreter needs, bound read-only.
    prefixes: Vec<PathBuf>,
    /// Folders put first on the jail's `PATH`.
    path: Vec<PathBuf>,
}

/// The sandbox of one executor: its policy and what it learnt about this machine.
#[derive(Debug)]
pub(crate) struct Sandbox {
    policy: SandboxPolicy,
    probes: Mutex<HashMap<(Kind, String), Result<Interp, ProbeError>>>,
    resolved: Mutex<HashMap<(Kind, String), Option<Interp>>>,
    /// Whether a jail is tried out (the interpreter run in it once) before the first start
    /// of each interpreter. Tools: yes, so that a jail that cannot run here is told from a
    /// tool that failed. An MCP server's own failed start shows as much, and is explained
    /// afterwards with [`check`](Self::check): the trial, a whole interpreter start (50 ms
    /// for node), is not paid before every connect.
    trial_first: bool,
}

static WARNED: std::sync::Once = std::sync::Once::new();

impl Sandbox {
    pub(crate) fn new(policy: SandboxPolicy) -> Self {
        Sandbox {
            policy,
            probes: Mutex::new(HashMap::new()),
            resolved: Mutex::new(HashMap::new()),
            trial_first: true,
        }
    }

    /// A sandbox whose jails are not tried out before their first start (see
    /// `trial_first`); a missing bwrap is still known at once.
    #[cfg(feature = "mcp")]
    pub(crate) fn untried(policy: SandboxPolicy) -> Self {
        Sandbox {
            trial_first: false,
            ..Sandbox::new(policy)
        }
    }

    /// The status for tools using `interpreters` (`(kind, program)` pairs).
    pub(crate) fn status(&self, interpreters: &[(Kind, String)]) -> SandboxStatus {
        let mode = self.policy.mode;
        if mode == SandboxMode::Off {
            return SandboxStatus {
                mode,
                jailed: false,
                reason: format!("the sandbox is turned off: {}", unjailed_guarantee()),
            };
        }
        let mut works = Vec::new();
        for (kind, program) in interpreters {
            match self.probe(*kind, program) {
                Ok(_) => works.push(program.clone()),
                Err(e) => {
                    return SandboxStatus {
                        mode,
                        jailed: false,
                        reason: if mode == SandboxMode::Required {
                            format!("calls will fail: {e}")
                        } else {
                            format!("{e}; {}", unjailed_guarantee())
                        },
                    };
                }
            }
        }
        let procs = match (self.policy.limits.processes, pids_cgroup_root()) {
            (None, _) => "processes unlimited".to_owned(),
            (Some(_), Some(_)) => "processes bounded by a pids cgroup".to_owned(),
            (Some(_), None) if !is_root() => "processes bounded by RLIMIT_NPROC".to_owned(),
            (Some(_), None) => {
                "processes NOT bounded (root and no writable pids cgroup)".to_owned()
            }
        };
        let procs = match (self.policy.limits.call_memory, memory_cgroup_root()) {
            (None, _) => procs,
            (Some(_), Some(_)) => format!("{procs}; memory per call bounded by a memory cgroup"),
            (Some(_), None) => format!(
                "{procs}; memory per call NOT bounded (no writable memory cgroup; only per process)"
            ),
        };
        SandboxStatus {
            mode,
            jailed: true,
            reason: if works.is_empty() {
                format!("bwrap is used when a tool runs; {procs}")
            } else {
                format!(
                    "bwrap works here with {}; network {}; {procs}",
                    works.join(", "),
                    if self.policy.network { "on" } else { "off" }
                )
            },
        }
    }

    /// The jail for one process of `tool` run by `program`, with `binds` (harness file,
    /// transpiled mirror) read-only; `None` when it runs unjailed (`off`, or `auto` on a
    /// machine where bwrap does not work). `Err` in `required` mode when it cannot jail.
    /// `also`: other interpreters the tool may run (a bash script calling `python3`): their
    /// prefixes are bound and their folders put on `PATH` when they resolve.
    pub(crate) fn jail(
        &self,
        kind: Kind,
        program: &str,
        also: &[(Kind, String)],
        tool: &ToolSpec,
        binds: &[PathBuf],
        cwd: Option<&Path>,
    ) -> Result<Option<Jail>, JailError> {
        if self.policy.mode == SandboxMode::Off {
            return Ok(None);
        }
        let untried = !self.trial_first
            && !self
                .probes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains_key(&(kind, program.to_owned()))
            && which(&self.policy.bwrap).is_some();
        let trial = match untried.then(|| self.resolved(kind, program)).flatten() {
            Some(i) => Ok(i),
            None => self.probe(kind, program),
        };
        let interp = match trial {
            Ok(i) => i,
            Err(e) if self.policy.mode == SandboxMode::Required => {
                return Err(JailError::Unavailable(e));
            }
            Err(e) => {
                WARNED.call_once(|| {
                    eprintln!(
                        "warning: toolbind runs tools WITHOUT a sandbox: {e}; {}",
                        unjailed_guarantee()
                    )
                });
                return Ok(None);
            }
        };
        let mut interp = interp;
        for (k, p) in also {
            let Some(other) = self.resolved(*k, p) else {
                continue;
            };
            for prefix in other.prefixes {
                if !interp.prefixes.iter().any(|q| prefix.starts_with(q)) {
                    interp.prefixes.push(prefix);
                }
            }
            interp.path.extend(other.path);
        }
        build(&self.policy, &interp, tool, binds, cwd)
            .map(Some)
            .map_err(JailError::Setup)
    }

    /// Whether `program` runs in this jail on this machine (the trial start, cached):
    /// `Err` says why not.
    #[cfg(feature = "mcp")]
    pub(crate) fn check(&self, kind: Kind, program: &str) -> Result<(), ProbeError> {
        self.probe(kind, program).map(|_| ())
    }

    /// For a jailed call that failed: a note naming each argument that is a path on this
    /// machine which the jail does not show the tool (relative ones resolved against the
    /// caller's directory `cwd`), and how to grant it. `None` when the call ran unjailed
    /// or no argument names such a path.
    pub(crate) fn hidden_paths_note(
        &self,
        kind: Kind,
        program: &str,
        tool: &ToolSpec,
        params: &serde_json::Map<String, serde_json::Value>,
        cwd: Option<&Path>,
    ) -> Option<String> {
        if self.policy.mode == SandboxMode::Off {
            return None;
        }
        let Some(Ok(interp)) = self
            .probes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(kind, program.to_owned()))
            .cloned()
        else {
            return None;
        };
        let mut strings = Vec::new();
        collect_strings(params.values(), &mut strings);
        // What the jail shows, and what no grant should be suggested for (the jail has its
        // own /proc, /dev, /tmp; /sys is not the tool's business).
        let mut shown: Vec<PathBuf> = [
            "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/dev", "/sys",
        ]
        .iter()
        .chain(ETC)
        .map(PathBuf::from)
        .collect();
        shown.extend(interp.prefixes);
        let real = |p: &Path| p.canonicalize().ok();
        shown.extend(
            self.policy
                .read
                .iter()
                .chain(&self.policy.write)
                .filter_map(|p| real(p)),
        );
        shown.extend(real(&tool.dir));
        shown.extend(real(&self.policy.state_dir_of(tool)));
        let hidden: Vec<String> = strings
            .into_iter()
            .filter(|s| s.len() <= 4096 && !s.contains('\n'))
            .filter_map(|s| {
                let p = match cwd {
                    Some(c) if Path::new(s).is_relative() => c.join(s),
                    _ => PathBuf::from(s),
                };
                let host = real(&p)?;
                (host != Path::new("/") && !shown.iter().any(|r| host.starts_with(r)))
                    .then(|| format!("`{s}`"))
            })
            .take(8)
            .collect();
        if hidden.is_empty() {
            return None;
        }
        let (these, exist) = if hidden.len() == 1 {
            ("this path", "exists")
        } else {
            ("these paths", "exist")
        };
        Some(format!(
            "note: {these} {exist} on this machine but the sandbox does not show {} to the tool: {} (a jailed tool sees its own folder, its state folder, system folders and granted paths; its /tmp is its own). Grant access with `--allow-read PATH` or `--allow-write PATH` (SandboxPolicy::allow_read / allow_write); a granted working directory is also where the tool runs, so relative paths work.",
            if hidden.len() == 1 { "it" } else { "them" },
            hidden.join(", ")
        ))
    }

    /// [`resolve`], cached; `None` when the interpreter is not installed.
    fn resolved(&self, kind: Kind, program: &str) -> Option<Interp> {
        let key = (kind, program.to_owned());
        let mut map = self.resolved.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(key)
            .or_insert_with(|| resolve(kind, program).ok())
            .clone()
    }

    fn probe(&self, kind: Kind, program: &str) -> Result<Interp, ProbeError> {
        let key = (kind, program.to_owned());
        if let Some(r) = self
            .probes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return r.clone();
        }
        let r = probe(&self.policy, kind, program);
        self.probes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, r.clone());
        r
    }
}

/// The string values of `values`, nested ones included (at most 64).
fn collect_strings<'a>(
    values: impl Iterator<Item = &'a serde_json::Value>,
    out: &mut Vec<&'a str>,
) {
    for v in values {
        if out.len() >= 64 {
            return;
        }
        match v {
            serde_json::Value::String(s) => out.push(s),
            serde_json::Value::Array(a) => collect_strings(a.iter(), out),
            serde_json::Value::Object(m) => collect_strings(m.values(), out),
            _ => {}
        }
    }
}

/// What an unjailed call still guarantees here, in a clause.
fn unjailed_guarantee() -> &'static str {
    if pids_cgroup_root().is_some() {
        "unjailed tools have no limits and see everything this user can, but each dies with the runtime and everything a call starts (daemons included) is tracked in a pids cgroup and killed when the call or its worker ends"
    } else {
        "unjailed tools have no limits and see everything this user can; each dies with the runtime and its process group is killed when the call ends, but a process that leaves the group (setsid, a daemon) can survive: there is no writable pids cgroup to track it here"
    }
}

/// Finds the interpreter, then runs it inside the real jail: `bwrap ... -- node -e 0`.
fn probe(policy: &SandboxPolicy, kind: Kind, program: &str) -> Result<Interp, ProbeError> {
    let Some(bwrap) = which(&policy.bwrap) else {
        return Err(ProbeError::NoBwrap {
            bwrap: policy.bwrap.clone(),
        });
    };
    let interp = resolve(kind, program)?;
    let mut opts = base_options(policy, &interp, policy.network);
    push(&mut opts, ["--chdir", "/"]);
    let mut cmd = std::process::Command::new(&bwrap);
    cmd.args(&opts)
        .arg("--")
        .arg(&interp.exe)
        .args(match kind {
            Kind::Node => ["-e", "0"],
            Kind::Python => ["-c", "pass"],
            Kind::Bash => ["-c", "true"],
        })
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let out = run_bounded(cmd, Duration::from_secs(20)).map_err(|e| ProbeError::BwrapFailed {
        bwrap: bwrap.clone(),
        why: e.to_string(),
    })?;
    if !out.0.success() {
        return Err(ProbeError::Refused {
            bwrap,
            program: program.to_owned(),
            exit: describe(out.0),
            stderr: String::from_utf8_lossy(&out.1).trim().to_owned(),
        });
    }
    Ok(interp)
}

/// Runs `cmd` for at most `limit`, returning its status and stderr.
fn run_bounded(
    mut cmd: std::process::Command,
    limit: Duration,
) -> std::io::Result<(ExitStatus, Vec<u8>)> {
    use std::io::Read;
    let mut child = cmd.spawn()?;
    let mut stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.take(16 << 10).read_to_end(&mut buf);
        }
        buf
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other(format!(
                "no answer within {} s",
                limit.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Ok((status, reader.join().unwrap_or_default()))
}

fn which(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 {
        return program.is_file().then(|| program.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| {
                use std::os::unix::fs::PermissionsExt;
                m.is_file() && m.permissions().mode() & 0o111 != 0
            })
        })
}

/// The real interpreter behind `program` (a pyenv shim, an nvm or cache install) and the
/// host folders it needs.
fn resolve(kind: Kind, program: &str) -> Result<Interp, InterpError> {
    let found = which(Path::new(program)).ok_or_else(|| InterpError::NotOnPath {
        program: program.to_owned(),
    })?;
    let real = found.canonicalize().map_err(|e| InterpError::Unresolved {
        path: found.clone(),
        why: e.to_string(),
    })?;
    let mut prefixes = Vec::new();
    let exe = match kind {
        Kind::Python => {
            // A pyenv shim is a shell script: ask python itself where it lives.
            let out = std::process::Command::new(&found)
                .args([
                    "-c",
                    "import sys;print(sys.executable);print(sys.prefix);print(sys.base_prefix)",
                ])
                .stdin(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .output()
                .map_err(|e| InterpError::CannotRun {
                    program: program.to_owned(),
                    why: e.to_string(),
                })?;
            let text = String::from_utf8_lossy(&out.stdout);
            let lines: Vec<&str> = text.lines().collect();
            if !out.status.success() || lines.len() < 3 || lines[0].is_empty() {
                return Err(InterpError::NoLocation {
                    program: program.to_owned(),
                });
            }
            prefixes.push(PathBuf::from(lines[1]));
            prefixes.push(PathBuf::from(lines[2]));
            let exe = PathBuf::from(lines[0]);
            if let Ok(r) = exe.canonicalize()
                && let Some(p) = r.parent().and_then(Path::parent)
            {
                prefixes.push(p.to_path_buf());
            }
            exe
        }
        Kind::Node | Kind::Bash => {
            if let Some(p) = real.parent().and_then(Path::parent) {
                prefixes.push(p.to_path_buf());
            }
            real
        }
    };
    let mut kept: Vec<PathBuf> = Vec::new();
    for p in prefixes {
        let Ok(p) = p.canonicalize() else { continue };
        if p == Path::new("/") || p.starts_with("/usr") || kept.iter().any(|k| p.starts_with(k)) {
            continue;
        }
        kept.retain(|k| !k.starts_with(&p));
        kept.push(p);
    }
    let path = exe.parent().map(Path::to_path_buf).into_iter().collect();
    Ok(Interp {
        exe,
        prefixes: kept,
        path,
    })
}

fn push<const N: usize>(opts: &mut Vec<OsString>, items: [&str; N]) {
    opts.extend(items.iter().map(OsString::from));
}

fn push_bind(opts: &mut Vec<OsString>, flag: &str, src: &Path, dest: &Path) {
    opts.push(flag.into());
    opts.push(src.as_os_str().to_owned());
    opts.push(dest.as_os_str().to_owned());
}

/// Files of `/etc` the interpreters need: TLS roots, name resolution, users, time zone,
/// the dynamic loader's cache, Debian's alternatives.
const ETC: &[&str] = &[
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
    "/etc/hosts",
    "/etc/resolv.conf",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/localtime",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
];

/// The options every jail shares: namespaces, the system folders, /proc, /dev, /tmp and
/// the interpreter's prefix.
fn base_options(policy: &SandboxPolicy, interp: &Interp, network: bool) -> Vec<OsString> {
    let mut o = Vec::new();
    push(&mut o, ["--unshare-all"]);
    if network {
        // Only counts after --unshare-all.
        push(&mut o, ["--share-net"]);
    }
    push(
        &mut o,
        [
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/usr",
            "/usr",
        ],
    );
    // Copy the host's layout: a symlink where it has one (merged /usr), a bind otherwise.
    for top in ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"] {
        let p = Path::new(top);
        match std::fs::read_link(p) {
            Ok(target) => {
                o.push("--symlink".into());
                o.push(target.into_os_string());
                o.push(top.into());
            }
            Err(_) if p.is_dir() => push_bind(&mut o, "--ro-bind", p, p),
            Err(_) => {}
        }
    }
    for etc in ETC {
        push(&mut o, ["--ro-bind-try", etc, etc]);
    }
    let tmp = policy.limits.tmp_size.max(1 << 20).to_string();
    push(&mut o, ["--proc", "/proc", "--dev", "/dev", "--size"]);
    o.push(tmp.clone().into());
    push(&mut o, ["--tmpfs", "/dev/shm", "--size"]);
    o.push(tmp.into());
    push(&mut o, ["--tmpfs", "/tmp"]);
    for p in &interp.prefixes {
        push_bind(&mut o, "--ro-bind", p, p);
    }
    o
}

/// One jailed process, ready for `process::spawn`.
pub(crate) struct Jail {
    pub(crate) bwrap: PathBuf,
    /// bwrap's options, NUL-separated, for `--args`.
    pub(crate) options: Vec<u8>,
    /// The interpreter, by absolute path inside the jail.
    pub(crate) exe: PathBuf,
    /// Variables that replace the agent's (`HOME`, `TMPDIR`, `PATH`, ...).
    pub(crate) env: Vec<(String, OsString)>,
    pub(crate) limits: SandboxLimits,
    pub(crate) cgroup: Option<Cgroup>,
    /// The memory cgroup bounding all of the jail's processes together.
    pub(crate) memory: Option<MemoryCgroup>,
    /// `RLIMIT_NPROC` when no cgroup bounds processes and the runtime is not root.
    pub(crate) nproc: Option<u64>,
    /// A warm worker: its CPU limit is a soft limit re-armed at each call, with no hard
    /// limit (which could not be raised again without CAP_SYS_RESOURCE). A one-shot
    /// process gets a hard limit 5 s above the soft one, which SIGKILLs a tool that
    /// ignores SIGXCPU.
    pub(crate) warm: bool,
}

fn build(
    policy: &SandboxPolicy,
    interp: &Interp,
    tool: &ToolSpec,
    binds: &[PathBuf],
    cwd: Option<&Path>,
) -> Result<Jail, SetupError> {
    let network = policy.network && tool.sandbox.network != Some(false);
    let mut o = base_options(policy, interp, network);

    let state = policy.checked_state_dir(tool)?;

    // (host path, path in the jail, writable). Mounted shallowest first, so a grant that
    // contains the tool folder does not hide it.
    let mut mounts: Vec<(PathBuf, PathBuf, bool)> = Vec::new();
    let grant = |p: &Path, access: &'static str| -> Result<PathBuf, SetupError> {
        p.canonicalize().map_err(|source| SetupError::Grant {
            access,
            path: p.to_path_buf(),
            source,
        })
    };
    for p in &policy.read {
        let c = grant(p, "read")?;
        mounts.push((c.clone(), c, false));
    }
    for p in &policy.write {
        let c = grant(p, "write")?;
        mounts.push((c.clone(), c, true));
    }
    let dir = std::path::absolute(&tool.dir).unwrap_or_else(|_| tool.dir.clone());
    let dir_real = tool
        .dir
        .canonicalize()
        .map_err(|source| SetupError::ToolFolder {
            dir: tool.dir.clone(),
            source,
        })?;
    mounts.push((dir_real, dir.clone(), false));
    for b in binds {
        if let Ok(real) = b.canonicalize() {
            mounts.push((real, b.clone(), false));
        }
    }
    mounts.push((state.clone(), state.clone(), true));
    mounts.sort_by_key(|(_, dest, _)| dest.components().count());
    for (src, dest, writable) in &mounts {
        // /usr is already visible, read-only: a grant below it adds nothing.
        if dest.starts_with("/usr") && !writable {
            continue;
        }
        push_bind(
            &mut o,
            if *writable { "--bind" } else { "--ro-bind" },
            src,
            dest,
        );
    }
    // bwrap's root is a tmpfs as large as half the host's memory: left writable, a tool could
    // fill RAM by writing to `/` or `/etc`, past every limit. Read-only once everything is
    // mounted (not recursive: /tmp, /dev/shm, the state folder and write grants stay
    // writable, each with its own bound).
    push(&mut o, ["--remount-ro", "/"]);
    // A granted directory only: not the tool's own read-only folder, not a harness bind.
    let granted: Vec<PathBuf> = policy
        .read
        .iter()
        .chain(&policy.write)
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let inside = |p: &Path| granted.iter().any(|d| p.starts_with(d));
    let chdir = match cwd.and_then(|c| c.canonicalize().ok()) {
        Some(c) if inside(&c) => c,
        _ => state.clone(),
    };
    o.push("--chdir".into());
    o.push(chdir.into_os_string());

    let mut options = Vec::new();
    for a in &o {
        options.extend_from_slice(a.as_bytes());
        options.push(0);
    }
    let mut bin = String::new();
    for p in &interp.path {
        if !p.starts_with("/usr") {
            bin.push_str(&format!("{}:", p.display()));
        }
    }
    let env = vec![
        ("HOME".to_owned(), state.clone().into_os_string()),
        ("TMPDIR".to_owned(), "/tmp".into()),
        (
            "PATH".to_owned(),
            format!("{bin}/usr/local/bin:/usr/bin:/bin").into(),
        ),
        // The tool folder is read-only: no __pycache__ there.
        ("PYTHONDONTWRITEBYTECODE".to_owned(), "1".into()),
        // A python3 that a bash tool starts skips the user site (`usercustomize.py`)
        // too, as the harness does with `-s`.
        ("PYTHONNOUSERSITE".to_owned(), "1".into()),
    ];
    let cgroup = policy.limits.processes.and_then(Cgroup::create);
    let memory = policy.limits.call_memory.and_then(MemoryCgroup::create);
    let nproc = match (policy.limits.processes, &cgroup) {
        (Some(n), None) if !is_root() => Some(n + processes_of_uid() + 3),
        _ => None,
    };
    Ok(Jail {
        bwrap: which(&policy.bwrap).unwrap_or_else(|| policy.bwrap.clone()),
        options,
        exe: interp.exe.clone(),
        env,
        limits: policy.limits.clone(),
        cgroup,
        memory,
        nproc,
        warm: false,
    })
}

fn is_root() -> bool {
    nix::unistd::getuid().is_root()
}

/// How many processes this uid runs now (RLIMIT_NPROC counts them all).
fn processes_of_uid() -> u64 {
    use std::os::unix::fs::MetadataExt;
    let uid = nix::unistd::getuid().as_raw();
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().as_bytes().iter().all(u8::is_ascii_digit))
                .filter(|e| e.metadata().is_ok_and(|m| m.uid() == uid))
                .count() as u64
        })
        .unwrap_or(0)
}

/// The v1 `pids` hierarchy's toolbind folder, when this process may create cgroups there.
pub(crate) fn pids_cgroup_root() -> Option<&'static Path> {
    static ROOT: OnceLock<Option<PathBuf>> = OnceLock::new();
    ROOT.get_or_init(|| cgroup_root("pids", "pids.max"))
        .as_deref()
}

/// `<this process's own cgroup of controller>/toolbind` in the v1 hierarchy of
/// `controller` (one that has `file`), created when missing; `None` where there is no such
/// hierarchy or it is not writable. Under the runtime's own cgroup, not the hierarchy's
/// root, so tools stay inside whatever limit the agent itself runs under (a service's
/// `MemoryMax`, a container's cgroup). Cgroups left by runtimes that died are emptied
/// (their processes killed) and removed.
fn cgroup_root(controller: &str, file: &str) -> Option<PathBuf> {
    let mount = Path::new("/sys/fs/cgroup").join(controller);
    let own = std::fs::read_to_string("/proc/self/cgroup")
        .ok()?
        .lines()
        .find_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
            names
                .split(',')
                .any(|n| n == controller)
                .then(|| path.trim_start_matches('/').to_owned())
        })?;
    let own = mount.join(own);
    if !own.join(file).exists() && !own.join("cgroup.procs").exists() {
        return None;
    }
    let root = own.join("toolbind");
    match std::fs::create_dir(&root) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(_) => return None,
    }
    for e in std::fs::read_dir(&root).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if owner_is_gone(&name) {
            // A runtime that was SIGKILLed left its unjailed tools' daemons here.
            kill_members(&e.path());
            let _ = std::fs::remove_dir(e.path());
        }
    }
    Some(root)
}

/// When process `pid` started, in clock ticks since boot (`/proc/<pid>/stat` field 22):
/// with the pid it names one process, even after the pid is reused.
fn start_time(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let close = stat.rfind(')')?;
    // After the name: state is field 3, so the start time is the 20th from there.
    stat[close + 2..].split(' ').nth(19)?.parse().ok()
}

/// Whether the runtime that made cgroup `name` (`<pid>-<start time>-<n>`, or an older
/// `<pid>-<n>`) is gone: no such pid, or a pid now used by a later process.
fn owner_is_gone(name: &str) -> bool {
    let mut parts = name.split('-');
    let (Some(pid), Some(second)) = (parts.next(), parts.next()) else {
        return false;
    };
    if pid.parse::<u32>().is_err() {
        return false;
    }
    match (start_time(pid), parts.next()) {
        (None, _) => true,
        (Some(now), Some(_)) => second.parse::<u64>().is_ok_and(|then| then != now),
        (Some(_), None) => false,
    }
}

/// Once per process, before the first unjailed process is tracked: a watchdog (`sh`, its
/// own session) blocked reading a pipe whose only write end this process holds. When
/// this process dies in any way, SIGKILL included, the read returns and the watchdog kills
/// whatever is left in this process's cgroups — the daemons of unjailed tools, which
/// `PR_SET_PDEATHSIG` does not reach — and removes them.
fn start_watchdog(root: &Path) {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        const SCRIPT: &str = r#"read -r _
i=0
while [ $i -lt 40 ]; do
  left=
  for d in "$2"/"$1"-*; do
    [ -d "$d" ] || continue
    for p in $(cat "$d/cgroup.procs" 2>/dev/null); do left=1; kill -9 "$p" 2>/dev/null; done
    rmdir "$d" 2>/dev/null
  done
  [ -n "$left" ] || exit 0
  i=$((i+1))
  sleep 0.05
done"#;
        let Ok((r, w)) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC) else {
            return;
        };
        use std::os::unix::process::CommandExt;
        let started = std::process::Command::new("/bin/sh")
            .args(["-c", SCRIPT, "sh"])
            .arg(std::process::id().to_string())
            .arg(root)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .stdin(std::process::Stdio::from(r))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn();
        if started.is_ok() {
            // The write end lives as long as this process.
            std::mem::forget(w);
        }
    });
}

/// A `pids` cgroup for one jail (bwrap joins it before it execs, so every process of the
/// jail counts) or for one unjailed process (no limit: it only tracks what the process
/// starts, a `setsid` daemon included). When dropped, whatever is still in it is killed
/// and the cgroup removed once empty.
pub(crate) struct Cgroup {
    dir: PathBuf,
    /// `cgroup.procs`, opened for writing: the child writes `0` (itself) to it.
    pub(crate) procs: OwnedFd,
}

impl Cgroup {
    /// A cgroup that tracks an unjailed process and all it starts (no limit), where a
    /// `pids` hierarchy is writable.
    pub(crate) fn track() -> Option<Cgroup> {
        start_watchdog(pids_cgroup_root()?);
        Cgroup::make(None)
    }

    fn create(max: u64) -> Option<Cgroup> {
        Cgroup::make(Some(max))
    }

    fn make(max: Option<u64>) -> Option<Cgroup> {
        let dir = new_cgroup(pids_cgroup_root()?)?;
        // bwrap itself needs three slots (its monitor, the namespace's init, the command).
        if let Some(max) = max
            && std::fs::write(dir.join("pids.max"), (max + 3).to_string()).is_err()
        {
            let _ = std::fs::remove_dir(&dir);
            return None;
        }
        let procs = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join("cgroup.procs"))
            .ok()?;
        Some(Cgroup {
            dir,
            procs: procs.into(),
        })
    }

    /// Whether a fork was refused for the limit.
    fn hit(&self) -> bool {
        std::fs::read_to_string(self.dir.join("pids.events")).is_ok_and(|t| {
            t.lines().any(|l| {
                l.strip_prefix("max ")
                    .and_then(|n| n.trim().parse::<u64>().ok())
                    .is_some_and(|n| n > 0)
            })
        })
    }
}

/// SIGKILLs every process in the cgroup folder `dir` until none is left (a process that
/// forks while being killed is caught on a later round).
fn kill_members(dir: &Path) {
    for _ in 0..50 {
        let Ok(text) = std::fs::read_to_string(dir.join("cgroup.procs")) else {
            return;
        };
        let pids: Vec<i32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
        if pids.is_empty() {
            return;
        }
        for pid in pids {
            if pid > 1 {
                // SAFETY: kill has no memory-safety preconditions.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A new cgroup `<pid>-<start time>-<n>` under `root` (the name lets a later runtime,
/// and the watchdog, find the cgroups of a runtime that died, even once its pid is reused).
fn new_cgroup(root: &Path) -> Option<PathBuf> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    static START: OnceLock<u64> = OnceLock::new();
    let start = START.get_or_init(|| start_time("self").unwrap_or(0));
    let dir = root.join(format!(
        "{}-{start}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir(&dir).ok()?;
    Some(dir)
}

/// Kills what is left in the cgroup folder `dir`, then removes it once the kernel has
/// let the last process go (a moment after it is reaped; retried off this thread).
fn remove_cgroup(dir: PathBuf) {
    kill_members(&dir);
    if std::fs::remove_dir(&dir).is_ok() {
        return;
    }
    std::thread::spawn(move || {
        for _ in 0..100 {
            if std::fs::remove_dir(&dir).is_ok() || !dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // A jail's processes die with its init, a moment after the outer bwrap is reaped;
        // an unjailed process's daemons only die here.
        remove_cgroup(std::mem::take(&mut self.dir));
    }
}

/// The v1 `memory` hierarchy's toolbind folder, when this process may create cgroups
/// there.
fn memory_cgroup_root() -> Option<&'static Path> {
    static ROOT: OnceLock<Option<PathBuf>> = OnceLock::new();
    ROOT.get_or_init(|| cgroup_root("memory", "memory.limit_in_bytes"))
        .as_deref()
}

/// A `memory` cgroup bounding one jail's processes together: the kernel's OOM killer
/// ends the jail's largest process when they pass the limit. Removed once empty.
pub(crate) struct MemoryCgroup {
    dir: PathBuf,
    /// OOM kills already reported.
    seen: AtomicU64,
    /// `cgroup.procs`, opened for writing: the child writes `0` (itself) to it.
    pub(crate) procs: OwnedFd,
}

impl MemoryCgroup {
    fn create(limit: u64) -> Option<MemoryCgroup> {
        let dir = new_cgroup(memory_cgroup_root()?)?;
        let limited = std::fs::write(dir.join("memory.limit_in_bytes"), limit.to_string())
            .is_ok()
            // Swap counts too where the kernel accounts it, so memory cannot go to swap.
            && (std::fs::write(dir.join("memory.memsw.limit_in_bytes"), limit.to_string())
                .is_ok()
                || !dir.join("memory.memsw.limit_in_bytes").exists());
        let procs = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join("cgroup.procs"))
            .ok()
            .filter(|_| limited);
        let Some(procs) = procs else {
            let _ = std::fs::remove_dir(&dir);
            return None;
        };
        Some(MemoryCgroup {
            dir,
            seen: AtomicU64::new(0),
            procs: procs.into(),
        })
    }

    /// Whether the kernel's OOM killer ended one of the jail's processes since the last
    /// time this was asked: a warm worker whose child was killed once must not have every
    /// later error of its calls blamed on memory. (A refused charge alone, `failcnt`, is
    /// not a hit: reclaiming page cache at the limit counts there too.)
    fn hit(&self) -> bool {
        let kills = std::fs::read_to_string(self.dir.join("memory.oom_control"))
            .ok()
            .and_then(|t| {
                t.lines().find_map(|l| {
                    l.strip_prefix("oom_kill ")
                        .and_then(|n| n.trim().parse::<u64>().ok())
                })
            })
            .unwrap_or(0);
        kills > self.seen.swap(kills, Ordering::Relaxed)
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        remove_cgroup(std::mem::take(&mut self.dir));
    }
}

impl Jail {
    /// The raw fd of the cgroup's `cgroup.procs`, for the child to join before exec.
    pub(crate) fn cgroup_fd(&self) -> Option<i32> {
        self.cgroup.as_ref().map(|c| c.procs.as_raw_fd())
    }

    /// The raw fd of the memory cgroup's `cgroup.procs`.
    pub(crate) fn memory_fd(&self) -> Option<i32> {
        self.memory.as_ref().map(|c| c.procs.as_raw_fd())
    }

    /// `(resource, soft, hard)` for `setrlimit` in the child before exec.
    pub(crate) fn rlimits(&self) -> Vec<(Resource, u64, u64)> {
        let l = &self.limits;
        let mut out = Vec::new();
        if let Some(m) = l.memory {
            out.push((Resource::RLIMIT_DATA, m, m));
        }
        if let Some(c) = l.cpu {
            let s = c.as_secs().max(1);
            let hard = if self.warm {
                libc::RLIM_INFINITY
            } else {
                s + 5
            };
            out.push((Resource::RLIMIT_CPU, s, hard));
        }
        let n = l.open_files.max(256);
        out.push((Resource::RLIMIT_NOFILE, n, n));
        if let Some(f) = l.file_size {
            out.push((Resource::RLIMIT_FSIZE, f, f));
        }
        if let Some(n) = self.nproc {
            out.push((Resource::RLIMIT_NPROC, n, n));
        }
        out
    }

    /// What the executor keeps of the jail while the process runs.
    pub(crate) fn running(self, bwrap_pid: i32) -> Running {
        Running {
            bwrap_pid,
            limits: self.limits,
            cgroup: self.cgroup,
            memory: self.memory,
            cpu_base: Mutex::new(None),
            armed: Mutex::new(None),
        }
    }
}

/// A jailed process: for re-arming its CPU limit, signalling the tool inside, and telling
/// a limit from a crash.
pub(crate) struct Running {
    bwrap_pid: i32,
    limits: SandboxLimits,
    cgroup: Option<Cgroup>,
    memory: Option<MemoryCgroup>,
    /// The tool process's host pid, once found.
    cpu_base: Mutex<Option<i32>>,
    /// When the CPU limit was last re-armed.
    armed: Mutex<Option<Instant>>,
}

fn children(pid: i32) -> Vec<i32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .map(|t| {
            t.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

impl Running {
    /// The host pid of the command bwrap runs (bwrap -> the namespace's init -> command).
    pub(crate) fn tool_pid(&self) -> Option<i32> {
        let mut cached = self.cpu_base.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = *cached
            && Path::new(&format!("/proc/{p}")).exists()
        {
            return Some(p);
        }
        let init = *children(self.bwrap_pid).first()?;
        let tool = *children(init).first()?;
        *cached = Some(tool);
        Some(tool)
    }

    /// The host id of the process group the tool runs in: with `--new-session` bwrap's
    /// init leads a new session and group that the command inherits. A SIGTERM to it
    /// reaches the tool and whatever it started in its group; the init itself ignores it
    /// (a namespace's init only takes signals it handles from outside).
    pub(crate) fn tool_group(&self) -> Option<i32> {
        let pid = self.tool_pid()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let close = stat.rfind(')')?;
        // After the name: state, ppid, pgrp.
        stat[close + 2..].split(' ').nth(2)?.parse().ok()
    }

    /// Gives the next call of a warm worker its own CPU budget: the soft limit becomes what
    /// the process has used so far plus the per-call limit.
    pub(crate) fn rearm_cpu(&self) {
        let Some(cpu) = self.limits.cpu else { return };
        // The soft limit is set 1 s above the budget. Within 1 s / (CPUs) of the last
        // re-arm the process cannot have used that second, so the budget still stands:
        // skipping keeps the /proc read and prlimit off a busy worker's hot path.
        static CPUS: OnceLock<u32> = OnceLock::new();
        let cpus = *CPUS
            .get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
        if self
            .armed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some_and(|t| t.elapsed() < Duration::from_secs(1) / cpus.max(1))
        {
            return;
        }
        let Some(pid) = self.tool_pid() else { return };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return;
        };
        let Some(close) = stat.rfind(')') else { return };
        let fields: Vec<&str> = stat[close + 2..].split(' ').collect();
        // utime and stime are fields 14 and 15 of stat (11 and 12 after the name).
        let ticks: u64 = [11, 12]
            .iter()
            .filter_map(|i| fields.get(*i).and_then(|f| f.parse::<u64>().ok()))
            .sum();
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
        let soft = ticks / hz + 1 + cpu.as_secs().max(1);
        // The hard limit stays unlimited (see `Jail::warm`): raising it again would need
        // CAP_SYS_RESOURCE, which a container's root often lacks.
        let new = libc::rlimit {
            rlim_cur: soft,
            rlim_max: libc::RLIM_INFINITY,
        };
        // SAFETY: `new` is a valid rlimit; a null old-limit pointer is allowed.
        if unsafe { libc::prlimit(pid, libc::RLIMIT_CPU, &new, std::ptr::null_mut()) } == 0 {
            *self.armed.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        }
    }

    /// Why the process ended, when the jail ended it: a limit (which one, and how to raise
    /// it) or the jail's own failure, typed and as the message the caller shows. `output`
    /// is the tail of what it printed (or its error message).
    pub(crate) fn explain(
        &self,
        status: Option<ExitStatus>,
        output: &str,
    ) -> Option<(StopReason, String)> {
        let signal = status.and_then(|s| {
            s.signal()
                .or_else(|| s.code().filter(|c| *c > 128 && *c < 192).map(|c| c - 128))
        });
        // bwrap reports its own failures (a bind source gone, a namespace refused) as
        // `bwrap: ...` and exit status 1, before the tool ever runs.
        if status.and_then(|s| s.code()) == Some(1)
            && let Some(line) = output.lines().find(|l| l.starts_with("bwrap: "))
        {
            return Some((
                StopReason::JailFailed,
                format!("the sandbox could not start the tool: {line}"),
            ));
        }
        if self.memory.as_ref().is_some_and(MemoryCgroup::hit) {
            return Some((
                StopReason::LimitExceeded {
                    limit: Limit::Memory,
                },
                format!(
                    "the tool hit the sandbox's memory limit per call ({} for all its processes together, a memory cgroup); raise it with `--call-memory MIB` or `SandboxLimits::call_memory`",
                    self.limits.call_memory.map_or("unlimited".into(), mib)
                ),
            ));
        }
        let limit = if self.cgroup.as_ref().is_some_and(Cgroup::hit) {
            Limit::Processes
        } else if signal == Some(libc::SIGXCPU) {
            Limit::CpuTime
        } else if signal == Some(libc::SIGXFSZ) {
            Limit::FileSize
        } else {
            text_limit(output, &self.limits)?
        };
        Some((
            StopReason::LimitExceeded { limit },
            limit_message(limit, &self.limits),
        ))
    }

    /// "exited with code 3", "was killed by signal 9 (SIGKILL)": bwrap reports a command
    /// killed by signal N as exit code 128 + N.
    pub(crate) fn describe(&self, status: ExitStatus) -> String {
        describe(status)
    }
}

fn describe(status: ExitStatus) -> String {
    match status.code() {
        Some(c) if c > 128 && c < 192 => super::process::killed_by(c - 128),
        _ => super::process::describe_exit(status),
    }
}

/// A limit named by what a tool printed (an error it caught, or its last words).
pub(crate) fn text_limit(output: &str, limits: &SandboxLimits) -> Option<Limit> {
    const MEMORY: &[&str] = &[
        "JavaScript heap out of memory",
        "Array buffer allocation failed",
        "MemoryError",
        "xmalloc: cannot allocate",
        "Cannot allocate memory",
        "std::bad_alloc",
        "Out of memory",
    ];
    const PROCESSES: &[&str] = &[
        "fork: retry",
        "fork: Resource temporarily unavailable",
        "BlockingIOError: [Errno 11]",
        "spawn EAGAIN",
    ];
    const FILE_SIZE: &[&str] = &["File too large", "EFBIG", "File size limit exceeded"];
    if limits.memory.is_some() && MEMORY.iter().any(|m| output.contains(m)) {
        return Some(Limit::Memory);
    }
    if limits.file_size.is_some() && FILE_SIZE.iter().any(|m| output.contains(m)) {
        return Some(Limit::FileSize);
    }
    if limits.processes.is_some() && PROCESSES.iter().any(|m| output.contains(m)) {
        return Some(Limit::Processes);
    }
    None
}

fn mib(b: u64) -> String {
    format!("{} MiB", b >> 20)
}

fn limit_message(which: Limit, l: &SandboxLimits) -> String {
    match which {
        Limit::Memory => format!(
            "the tool hit the sandbox's memory limit ({} per process, RLIMIT_DATA); raise it with `--memory MIB` or `SandboxLimits::memory`",
            l.memory.map_or("unlimited".into(), mib)
        ),
        Limit::CpuTime => format!(
            "the tool hit the sandbox's CPU time limit ({} s per call, RLIMIT_CPU); raise it with `--cpu SECS` or `SandboxLimits::cpu`",
            l.cpu.map_or(0, |c| c.as_secs())
        ),
        Limit::FileSize => format!(
            "the tool hit the sandbox's file size limit ({}, RLIMIT_FSIZE); raise it with `--max-file-size MIB` or `SandboxLimits::file_size`",
            l.file_size.map_or("unlimited".into(), mib)
        ),
        Limit::Processes => format!(
            "the tool hit the sandbox's process limit ({} processes); raise it with `--max-processes N` or `SandboxLimits::processes`",
            l.processes.unwrap_or(0)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_messages_name_the_limit_and_the_knob() {
        let l = SandboxLimits::default();
        let m = limit_message(
            text_limit("FATAL ERROR: ... JavaScript heap out of memory", &l).unwrap(),
            &l,
        );
        assert!(
            m.contains("memory limit (1024 MiB") && m.contains("--memory"),
            "{m}"
        );
        let m = limit_message(
            text_limit("bash: fork: retry: Resource temporarily unavailable", &l).unwrap(),
            &l,
        );
        assert!(
            m.contains("process limit (256") && m.contains("--max-processes"),
            "{m}"
        );
        assert!(text_limit("TypeError: x is undefined", &l).is_none());
        let none = SandboxLimits::default().memory(None);
        assert!(text_limit("MemoryError", &none).is_none());
    }

    #[test]
    fn a_cgroup_is_stale_when_its_runtime_is_gone_or_its_pid_reused() {
        let me = std::process::id().to_string();
        let start = start_time("self").unwrap();
        assert!(!owner_is_gone(&format!("{me}-{start}-0")));
        assert!(
            owner_is_gone(&format!("{me}-{}-0", start + 1)),
            "pid reused"
        );
        assert!(
            !owner_is_gone(&format!("{me}-3")),
            "an older name of a live pid"
        );
        assert!(owner_is_gone("4194304999-1-0"), "no such pid");
        assert!(!owner_is_gone("toolbind") && !owner_is_gone("x-1"));
    }

    #[test]
    fn modes_round_trip() {
        for m in [SandboxMode::Required, SandboxMode::Auto, SandboxMode::Off] {
            assert_eq!(SandboxMode::from_name(m.as_str()), Some(m));
        }
        assert_eq!(SandboxMode::from_name("on"), None);
    }
}
