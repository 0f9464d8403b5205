//! One jailed process as [`process::spawn`](crate::exec::process::spawn) takes it, and
//! what both jails (bwrap's and the lighter one) give it alike: the files of `/etc`, the
//! mounts, the working folder, the environment, the cgroup and rlimits.

use super::cgroup::{CallCgroup, is_root, processes_of_uid};
use super::interp::Interp;
use super::seccomp::Program;
use super::tmp::PrivateTmp;
use super::{SandboxLimits, SandboxMode, SandboxPolicy};
use crate::exec::error::SetupError;
use nix::sys::resource::Resource;
use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use toolbind_codegen::model::ToolSpec;

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
    /// The cgroup bounding all of the jail's processes together (memory, processes).
    pub(crate) cgroup: Option<CallCgroup>,
    /// `RLIMIT_NPROC` when no cgroup bounds processes and the runtime is not root.
    pub(crate) nproc: Option<u64>,
    /// A warm worker: its CPU limit is a soft limit re-armed at each call, with no hard
    /// limit (which could not be raised again without CAP_SYS_RESOURCE). A one-shot
    /// process gets a hard limit 5 s above the soft one, which SIGKILLs a tool that
    /// ignores SIGXCPU.
    pub(crate) warm: bool,
    /// The seccomp filter bwrap installs (`--seccomp 6`): the child puts it on fd 6.
    pub(crate) seccomp: Option<&'static Program>,
    /// The lighter jail: no bwrap; the child restricts itself (`light.rs`).
    pub(crate) light: Option<Light>,
}

/// What the child of a lighter jail applies before exec.
#[derive(Debug)]
pub(crate) struct Light {
    /// The Landlock ruleset, for `landlock_restrict_self` in the child.
    pub(crate) ruleset: OwnedFd,
    /// The seccomp filter the child installs.
    pub(crate) filter: &'static Program,
    /// The process's private temporary folder (`TMPDIR`), removed when it ends.
    pub(crate) tmp: PrivateTmp,
    /// Where the process starts.
    pub(crate) cwd: PathBuf,
}

/// Files of `/etc` the interpreters need: TLS roots, name resolution, users, time zone,
/// the dynamic loader's cache, Debian's alternatives. The TLS folders by their public
/// parts only: `/etc/ssl/private` (Debian) and `/etc/pki/tls/private` (Red Hat) hold the
/// host's private keys, root's to read, and a root agent's tool is uid 0 in both jails.
pub(super) const ETC: &[&str] = &[
    "/etc/ssl/certs",
    "/etc/ssl/openssl.cnf",
    "/etc/ca-certificates",
    "/etc/pki/ca-trust",
    "/etc/pki/tls/certs",
    "/etc/pki/tls/cert.pem",
    "/etc/pki/tls/openssl.cnf",
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

/// The jail's cgroup, and `RLIMIT_NPROC` where no cgroup bounds processes and the runtime
/// is not root. A limit the owner set explicitly that cannot be enforced here fails under
/// `required` (before anything runs), naming why and the fix; otherwise it is warned
/// about once and the call runs (`SandboxStatus` reports it). `own`: the processes of the
/// jail itself, counted on top of the limit (bwrap's `BWRAP_PROCESSES`; the lighter jail has
/// none: its command is the tool).
pub(super) fn cgroup_of(
    policy: &SandboxPolicy,
    own: u64,
) -> Result<(Option<CallCgroup>, Option<u64>), SetupError> {
    let l = &policy.limits;
    let (cgroup, missed) = CallCgroup::jail(l.call_memory, l.processes.map(|n| n + own));
    let nproc = match (l.processes, &cgroup) {
        (Some(n), c) if !is_root() && !c.as_ref().is_some_and(CallCgroup::bounds_pids) => {
            Some(n + processes_of_uid() + own)
        }
        _ => None,
    };
    let mut unenforced = Vec::new();
    for (name, e) in missed {
        if name == "processes" && nproc.is_some() {
            continue;
        }
        if l.is_explicit(name) && matches!(policy.mode, SandboxMode::Required | SandboxMode::Light)
        {
            return Err(SetupError::Limit {
                name,
                why: e.why,
                fix: e.fix,
            });
        }
        let what = if name == "processes" {
            "process"
        } else {
            "memory per call"
        };
        unenforced.push(format!("the {what} limit: {}; {}", e.why, e.fix));
    }
    if !unenforced.is_empty() {
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| {
            crate::telemetry::warn(&format!(
                "warning: toolbind cannot enforce {}",
                unenforced.join("; nor ")
            ))
        });
    }
    Ok((cgroup, nproc))
}

/// What the jail mounts beside the system folders: `(host path, path in the jail,
/// writable)` for the grants, the tool folder, `binds` and the state folder, shallowest
/// first, so that a grant containing the tool folder does not hide it.
pub(super) fn mounts(
    policy: &SandboxPolicy,
    tool: &ToolSpec,
    binds: &[PathBuf],
    state: &Path,
) -> Result<Vec<(PathBuf, PathBuf, bool)>, SetupError> {
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
    mounts.push((state.to_path_buf(), state.to_path_buf(), true));
    mounts.sort_by_key(|(_, dest, _)| dest.components().count());
    Ok(mounts)
}

/// Where the tool runs: the caller's directory when it is inside a granted directory (not
/// the tool's own read-only folder, not a harness bind), else the state folder.
pub(super) fn working_dir(policy: &SandboxPolicy, cwd: Option<&Path>, state: &Path) -> PathBuf {
    let granted: Vec<PathBuf> = policy
        .read
        .iter()
        .chain(&policy.write)
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let inside = |p: &Path| granted.iter().any(|d| p.starts_with(d));
    match cwd.and_then(|c| c.canonicalize().ok()) {
        Some(c) if inside(&c) => c,
        _ => state.to_path_buf(),
    }
}

/// The variables that replace the agent's in the jail.
pub(super) fn jail_env(interp: &Interp, state: &Path) -> Vec<(String, OsString)> {
    let mut bin = String::new();
    for p in &interp.path {
        if !p.starts_with("/usr") {
            bin.push_str(&format!("{}:", p.display()));
        }
    }
    vec![
        ("HOME".to_owned(), state.as_os_str().to_owned()),
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
    ]
}

impl Jail {
    /// The raw fds of the cgroup's `cgroup.procs` files (`-1`: none), for the child to
    /// join before exec.
    pub(crate) fn procs_fds(&self) -> [i32; 2] {
        self.cgroup.as_ref().map_or([-1, -1], CallCgroup::procs_fds)
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
}
