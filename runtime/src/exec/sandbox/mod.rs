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
//!   `RLIMIT_NOFILE`, `RLIMIT_FSIZE`; memory per call and processes by the call's cgroup
//!   (`cgroup`: v1, or a v2 leaf under a delegated subtree) where this uid can make one
//!   (RLIMIT_NPROC does nothing for root), else processes by `RLIMIT_NPROC` for a non-root
//!   runtime. Whether each holds is in `SandboxStatus::limits` (`status`).
//! - bwrap reads its options from a pipe (`--args 4`), never from argv, and reports on
//!   fd 5 (`--json-status-fd`) whether it exec'd the command (`running.rs`); it installs
//!   the seccomp filter (`seccomp.rs`) it reads from fd 6 (`--seccomp 6`).
//! - Where bwrap cannot make a user namespace, the lighter jail (`light.rs`): Landlock and
//!   the same filter, applied by the forked child itself, no namespaces.
//!
//! The rooms, lowest first: `policy.rs` and `status.rs` (what is asked and what holds),
//! `interp.rs` (the real interpreter and the folders a jail may show), `cgroup/`,
//! `seccomp.rs`, `tmp.rs`; `jail.rs` (one jailed process, and what both jails give it);
//! `running.rs` (a jailed process while it runs); `bwrap.rs` and `light.rs` (the two
//! jails); `probe.rs` (trying an interpreter once in the jail).
//!
//! bwrap's `--die-with-parent` fires when the *thread* that started it exits, so tool
//! processes are spawned from the async runtime's worker threads (which live as long as
//! the runtime), never from a short-lived blocking thread.

mod bwrap;
mod cgroup;
mod interp;
mod jail;
mod light;
mod policy;
mod probe;
mod running;
mod seccomp;
mod status;
mod tmp;

pub(crate) use cgroup::CallCgroup;
pub(crate) use jail::Jail;
pub(crate) use light::LightChild;
pub use policy::{GrantHints, SandboxLimits, SandboxPolicy};
pub(crate) use running::Running;

pub use status::{Enforcement, LimitStatus};

use super::error::{JailError, ProbeError};
use crate::lock::Locked;
use interp::{Interp, resolve, which};
#[cfg(feature = "mcp")]
pub(crate) use interp::{system_path, unsafe_to_show};
use jail::ETC;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use toolbind_codegen::model::ToolSpec;

/// Whether tool processes run in the jail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SandboxMode {
    /// Always jail; a call fails (naming the missing `bwrap` and how to install it) when
    /// the jail cannot run on this machine.
    Required,
    /// Jail when bwrap works here with the interpreters in use. Where bwrap cannot create
    /// a user namespace (disabled, or refused by AppArmor), run in the lighter jail
    /// ([`Light`](Self::Light)) and warn once; where neither can run, warn once per process
    /// and run unjailed, as [`Off`](Self::Off).
    #[default]
    Auto,
    /// Always the lighter jail, without namespaces: Landlock rules that mirror what the
    /// bubblewrap jail shows, the same seccomp filter plus rules of its own, the same
    /// limits. A call fails where Landlock is not available. What it holds, and what only
    /// the bubblewrap jail does, is in docs/sandbox.md.
    Light,
    /// Never jail, no limits: a tool sees what the agent's user sees. Each tool process
    /// still dies with the runtime (`PR_SET_PDEATHSIG`) and its process group is killed
    /// when the call ends; where a cgroup can be made, everything the call started
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
            SandboxMode::Light => "light",
        }
    }

    /// The mode spelled `name` (`required`, `auto`, `light`, `off`).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "required" => SandboxMode::Required,
            "auto" => SandboxMode::Auto,
            "off" => SandboxMode::Off,
            "light" => SandboxMode::Light,
            _ => return None,
        })
    }
}

impl std::fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which jail tool processes run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JailKind {
    /// The bubblewrap jail (namespaces, seccomp, limits).
    Bubblewrap,
    /// The lighter jail without namespaces (Landlock, seccomp, limits).
    Light {
        /// The Landlock ABI whose rules are enforced on this kernel (1 to 6).
        landlock_abi: i32,
    },
    /// No jail.
    None,
}

/// Which sandbox is in force and why (for `toolbind list` and agents' start-up lines).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxStatus {
    /// The configured mode.
    pub mode: SandboxMode,
    /// Whether tool processes run in a jail ([`jail`](Self::jail) says which).
    pub jailed: bool,
    /// Which jail.
    pub jail: JailKind,
    /// Why, in a sentence: what works, or what is missing (made from `limits` for the
    /// limits' part).
    pub reason: String,
    /// Each limit of the policy and whether it holds here, or why not and how to get it.
    /// Jailed: `call_memory`, `processes`, `memory`, `cpu`, `file_size`, and in the
    /// lighter jail `tracking`. Unjailed: the same, not enforced (or unlimited), and
    /// `tracking`.
    pub limits: Vec<LimitStatus>,
}

impl std::fmt::Display for SandboxStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.jail {
            JailKind::Bubblewrap => "bubblewrap jail".to_owned(),
            JailKind::Light { landlock_abi } => {
                format!("light jail (Landlock ABI {landlock_abi} + seccomp)")
            }
            JailKind::None => "no jail".to_owned(),
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
    /// Whether only a jail that cannot run on this machine at all excuses an unjailed
    /// start under `auto` (MCP servers): the program a server names (its interpreter, a
    /// `#!` line of its package) is not trusted to decide, by failing in the jail, that it
    /// runs outside it. Tools run the user's own interpreters and keep the older rule: any
    /// interpreter the jail cannot run falls back, with the warning.
    strict: bool,
    /// Whether this sandbox has handed out a lighter jail (see [`check`](Self::check)).
    light_used: std::sync::atomic::AtomicBool,
}

/// The program the jail is tried out with when an MCP server's own interpreter fails in
/// it: the system's shell, which every jail shows. When it fails too, bwrap cannot run
/// here at all.
const TRUSTED_TRIAL: (Kind, &str) = (Kind::Bash, "/bin/sh");

static WARNED: std::sync::Once = std::sync::Once::new();
static WARNED_LIGHT: std::sync::Once = std::sync::Once::new();

impl Sandbox {
    pub(crate) fn new(policy: SandboxPolicy) -> Self {
        Sandbox {
            policy,
            probes: Mutex::new(HashMap::new()),
            resolved: Mutex::new(HashMap::new()),
            trial_first: true,
            strict: false,
            light_used: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The sandbox of MCP servers: its jails are not tried out before their first start
    /// (see `trial_first`; a missing bwrap is still known at once), and under `auto` a
    /// server runs unjailed only when bwrap cannot run here at all (see `strict`).
    #[cfg(feature = "mcp")]
    pub(crate) fn untried(policy: SandboxPolicy) -> Self {
        Sandbox {
            trial_first: false,
            strict: true,
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
                jail: JailKind::None,
                reason: format!("the sandbox is turned off: {}", unjailed_guarantee()),
                limits: status::limits(&self.policy, false),
            };
        }
        if mode == SandboxMode::Light {
            return match light::unavailable() {
                Some(why) => SandboxStatus {
                    mode,
                    jailed: false,
                    jail: JailKind::None,
                    reason: format!("calls will fail: {}", ProbeError::NoLandlock { why }),
                    limits: status::limits(&self.policy, false),
                },
                None => self.light_status(mode, "the lighter jail was chosen"),
            };
        }
        let mut works = Vec::new();
        for (kind, program) in interpreters {
            match self.probe(*kind, program) {
                Ok(_) => works.push(program.clone()),
                Err(e) if mode == SandboxMode::Auto && light_fallback(&e) => {
                    return self.light_status(mode, &e.to_string());
                }
                Err(e) => {
                    return SandboxStatus {
                        mode,
                        jailed: false,
                        jail: JailKind::None,
                        reason: if mode == SandboxMode::Required {
                            format!("calls will fail: {e}")
                        } else {
                            format!("{e}; {}", unjailed_guarantee())
                        },
                        limits: status::limits(&self.policy, false),
                    };
                }
            }
        }
        let limits = status::limits(&self.policy, true);
        let procs = status::prose(&limits, mode == SandboxMode::Required);
        SandboxStatus {
            mode,
            jailed: true,
            jail: JailKind::Bubblewrap,
            reason: if works.is_empty() {
                format!("bwrap is used when a tool runs; {procs}")
            } else {
                format!(
                    "bwrap works here with {}; network {}; {procs}",
                    works.join(", "),
                    if self.policy.network { "on" } else { "off" }
                )
            },
            limits,
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
        if self.policy.mode == SandboxMode::Light {
            return self
                .light_jail(kind, program, also, tool, binds, cwd)
                .map(Some);
        }
        let untried = !self.trial_first
            && !self
                .probes
                .locked()
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
            Err(e) if light_fallback(&e) => {
                WARNED_LIGHT.call_once(|| {
                    crate::telemetry::warn(&format!(
                        "warning: toolbind runs tools in the lighter jail (Landlock ABI {} + seccomp, no namespaces): {e}",
                        light::enforced_abi()
                    ))
                });
                return self
                    .light_jail(kind, program, also, tool, binds, cwd)
                    .map(Some);
            }
            Err(e) if self.strict && self.jail_runs_here() => {
                return Err(JailError::Interpreter(e));
            }
            Err(e) => {
                WARNED.call_once(|| {
                    crate::telemetry::warn(&format!(
                        "warning: toolbind runs tools WITHOUT a sandbox: {e}; {}",
                        unjailed_guarantee()
                    ))
                });
                return Ok(None);
            }
        };
        let interp = self.with_also(interp, also);
        bwrap::build(&self.policy, &interp, tool, binds, cwd)
            .map(Some)
            .map_err(JailError::Setup)
    }

    /// `interp` with the prefixes and `PATH` folders of the `also` interpreters that
    /// resolve.
    fn with_also(&self, mut interp: Interp, also: &[(Kind, String)]) -> Interp {
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
        interp
    }

    /// The lighter jail for one process (see [`jail`](Self::jail)).
    fn light_jail(
        &self,
        kind: Kind,
        program: &str,
        also: &[(Kind, String)],
        tool: &ToolSpec,
        binds: &[PathBuf],
        cwd: Option<&Path>,
    ) -> Result<Jail, JailError> {
        if let Some(why) = light::unavailable() {
            return Err(JailError::Unavailable(ProbeError::NoLandlock { why }));
        }
        let interp = match self.resolved(kind, program) {
            Some(i) => i,
            None => {
                let e = resolve(kind, program).err().map_or_else(
                    || ProbeError::NoLandlock {
                        why: format!("`{program}` could not be located"),
                    },
                    ProbeError::Interpreter,
                );
                return Err(JailError::Unavailable(e));
            }
        };
        let interp = self.with_also(interp, also);
        let jail =
            light::build(&self.policy, &interp, tool, binds, cwd).map_err(JailError::Setup)?;
        self.light_used
            .store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(jail)
    }

    /// The status of a sandbox whose tools run in the lighter jail, `why` in a clause.
    fn light_status(&self, mode: SandboxMode, why: &str) -> SandboxStatus {
        let abi = light::enforced_abi();
        let scoped = if abi >= 6 {
            "signals and abstract sockets scoped by Landlock"
        } else {
            "signals to the agent's pid and group refused by seccomp, other processes of this user not protected (no Landlock signal scoping before ABI 6)"
        };
        let network = match (self.policy.network, abi >= 4) {
            (true, _) => "network on (per tool `network: false`: seccomp refuses IP sockets)",
            (false, true) => "network off (seccomp and Landlock TCP rules)",
            (false, false) => "network off (seccomp refuses IP sockets)",
        };
        // No PID namespace: whether a daemon a call leaves ends with it is the cgroup's.
        let mut limits = status::limits(&self.policy, true);
        limits.push(status::tracking());
        let procs = status::prose(&limits, mode == SandboxMode::Light);
        SandboxStatus {
            mode,
            jailed: true,
            jail: JailKind::Light { landlock_abi: abi },
            reason: format!(
                "{why}; tools run under Landlock ABI {abi} file rules and seccomp, without namespaces: {scoped}; {network}; no PID namespace, so processes that leave the call are caught only by a cgroup; {procs}"
            ),
            limits,
        }
    }

    /// Whether `program` runs in this jail on this machine (the trial start, cached):
    /// `Err` says why not.
    #[cfg(feature = "mcp")]
    pub(crate) fn check(&self, kind: Kind, program: &str) -> Result<(), ProbeError> {
        // The lighter jail has no start of its own to try: once it is in use, a server that
        // failed failed in a working jail.
        if self.light_used.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(());
        }
        self.probe(kind, program).map(|_| ())
    }

    /// Whether bwrap runs on this machine at all: the system shell in the jail (the trial
    /// start, cached). What an MCP server names cannot make this false.
    pub(crate) fn jail_runs_here(&self) -> bool {
        let (kind, program) = TRUSTED_TRIAL;
        self.probe(kind, program).is_ok()
    }

    /// For a jailed call that failed: a note naming each argument that is a path on this
    /// machine which the jail does not show the tool (relative ones resolved against the
    /// caller's directory `cwd`), and each variable of `env` whose value is such a path and which the tool's error text `said`
    /// names (by name or value, as "EMAIL_DB_PATH=/srv/mail.db does not exist"), and how
    /// to grant it, in the words of the policy's [`GrantHints`]. `None` when the call ran
    /// unjailed or nothing names such a path.
    pub(crate) fn hidden_paths_note(
        &self,
        (kind, program): (Kind, &str),
        tool: &ToolSpec,
        params: &serde_json::Map<String, serde_json::Value>,
        cwd: Option<&Path>,
        env: &[(String, std::ffi::OsString)],
        said: &str,
    ) -> Option<String> {
        if self.policy.mode == SandboxMode::Off {
            return None;
        }
        let Some(Ok(interp)) = self
            .probes
            .locked()
            .get(&(kind, program.to_owned()))
            .cloned()
        else {
            return None;
        };
        let mut strings = Vec::new();
        collect_strings(params.values(), &mut strings);
        // `(how the note names it, the path)`: an argument by its text, a variable by its
        // name and value.
        let mut named: Vec<(String, &str)> =
            strings.iter().map(|s| (format!("`{s}`"), *s)).collect();
        for (name, value) in env {
            let Some(v) = value.to_str() else { continue };
            if !v.is_empty() && (said.contains(name.as_str()) || said.contains(v)) {
                named.push((format!("`{v}` (in `{name}`)"), v));
            }
        }
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
        let hidden: Vec<String> = named
            .into_iter()
            .filter(|(_, s)| s.len() <= 4096 && !s.contains('\n'))
            .filter_map(|(label, s)| {
                let p = match cwd {
                    Some(c) if Path::new(s).is_relative() => c.join(s),
                    _ => PathBuf::from(s),
                };
                let host = real(&p)?;
                (host != Path::new("/") && !shown.iter().any(|r| host.starts_with(r)))
                    .then_some(label)
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
            "note: {these} {exist} on this machine but the sandbox does not show {} to the tool: {} (a jailed tool sees its own folder, its state folder, system folders and granted paths; its /tmp is its own). Grant access with {}; a granted working directory is also where the tool runs, so relative paths work.",
            if hidden.len() == 1 { "it" } else { "them" },
            hidden.join(", "),
            self.policy.hints.grant()
        ))
    }

    /// [`resolve`], cached; `None` when the interpreter is not installed.
    fn resolved(&self, kind: Kind, program: &str) -> Option<Interp> {
        let key = (kind, program.to_owned());
        let mut map = self.resolved.locked();
        map.entry(key)
            .or_insert_with(|| resolve(kind, program).ok())
            .clone()
    }

    fn probe(&self, kind: Kind, program: &str) -> Result<Interp, ProbeError> {
        let key = (kind, program.to_owned());
        if let Some(r) = self.probes.locked().get(&key) {
            return r.clone();
        }
        let r = probe::probe(&self.policy, kind, program);
        self.probes.locked().insert(key, r.clone());
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

/// Whether `auto` runs tools in the lighter jail after the trial failed with `e`: bwrap
/// cannot make a user namespace here, and Landlock is available.
fn light_fallback(e: &ProbeError) -> bool {
    matches!(e, ProbeError::NoUserNamespace { .. }) && light::unavailable().is_none()
}

/// What an unjailed call still guarantees here, in a clause.
fn unjailed_guarantee() -> String {
    match &cgroup::here().track {
        Ok(by) => format!(
            "unjailed tools have no limits and see everything this user can, but each dies with the runtime and everything a call starts (daemons included) is tracked in {by} and killed when the call or its worker ends"
        ),
        Err(e) => format!(
            "unjailed tools have no limits and see everything this user can; each dies with the runtime and its process group is killed when the call ends, but a process that leaves the group (setsid, a daemon) can survive: no cgroup can track it here ({}; {})",
            e.why, e.fix
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_round_trip() {
        for m in [
            SandboxMode::Required,
            SandboxMode::Auto,
            SandboxMode::Light,
            SandboxMode::Off,
        ] {
            assert_eq!(SandboxMode::from_name(m.as_str()), Some(m));
        }
        assert_eq!(SandboxMode::from_name("on"), None);
    }
}
