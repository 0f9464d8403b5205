//! bubblewrap's options for one jailed process, and the rlimits and cgroups it starts
//! under.

use super::cgroup::{CallCgroup, is_root, processes_of_uid};
use super::light::Light;
use super::probe::{Interp, which};
use super::running::Running;
use super::seccomp::{self, Program};
use super::{SandboxLimits, SandboxMode, SandboxPolicy};
use crate::exec::error::SetupError;
use nix::sys::resource::Resource;
use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use toolbind_codegen::model::ToolSpec;

pub(super) fn push<const N: usize>(opts: &mut Vec<OsString>, items: [&str; N]) {
    opts.extend(items.iter().map(OsString::from));
}

fn push_bind(opts: &mut Vec<OsString>, flag: &str, src: &Path, dest: &Path) {
    opts.push(flag.into());
    opts.push(src.as_os_str().to_owned());
    opts.push(dest.as_os_str().to_owned());
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

/// The options every jail shares: namespaces, the system folders, /proc, /dev, /tmp and
/// the interpreter's prefix.
pub(super) fn base_options(
    policy: &SandboxPolicy,
    interp: &Interp,
    network: bool,
) -> Vec<OsString> {
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

pub(super) fn build(
    policy: &SandboxPolicy,
    interp: &Interp,
    tool: &ToolSpec,
    binds: &[PathBuf],
    cwd: Option<&Path>,
) -> Result<Jail, SetupError> {
    let network = policy.network && tool.sandbox.network != Some(false);
    let mut o = base_options(policy, interp, network);

    let state = policy.checked_state_dir(tool)?;
    for (src, dest, writable) in &mounts(policy, tool, binds, &state)? {
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
    // Applied by bwrap after its own setup, just before it execs the tool; `process::spawn`
    // puts the program on fd 6.
    let seccomp = if network {
        seccomp::common()
    } else {
        seccomp::common_offline()
    }
    .map_err(SetupError::Seccomp)?;
    push(&mut o, ["--seccomp", "6"]);
    o.push("--chdir".into());
    o.push(working_dir(policy, cwd, &state).into_os_string());

    let mut options = Vec::new();
    for a in &o {
        options.extend_from_slice(a.as_bytes());
        options.push(0);
    }
    let (cgroup, nproc) = cgroup_of(policy, BWRAP_PROCESSES)?;
    Ok(Jail {
        bwrap: which(&policy.bwrap).unwrap_or_else(|| policy.bwrap.clone()),
        options,
        exe: interp.exe.clone(),
        env: jail_env(interp, &state),
        limits: policy.limits.clone(),
        cgroup,
        nproc,
        warm: false,
        seccomp: Some(seccomp),
        light: None,
    })
}

/// The slots bwrap itself takes in a jail's cgroup, counted on top of the process limit:
/// its monitor, the namespace's init, the command.
const BWRAP_PROCESSES: u64 = 3;

/// The jail's cgroup, and `RLIMIT_NPROC` where no cgroup bounds processes and the runtime
/// is not root. A limit the owner set explicitly that cannot be enforced here fails under
/// `required` (before anything runs), naming why and the fix; otherwise it is warned
/// about once and the call runs (`SandboxStatus` reports it). `own`: the processes of the
/// jail itself, counted on top of the limit ([`BWRAP_PROCESSES`]; the lighter jail has
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

    /// What the executor keeps of the jail while the process runs.
    /// `status`: the read end of bwrap's `--json-status-fd` pipe.
    pub(crate) fn running(self, bwrap_pid: i32, status: Option<OwnedFd>) -> Running {
        Running {
            bwrap_pid,
            status,
            exec_seen: OnceLock::new(),
            limits: self.limits,
            cgroup: self.cgroup,
            cpu_base: Mutex::new(None),
            armed: Mutex::new(None),
            light_tmp: self.light.map(|l| l.tmp),
        }
    }
}
