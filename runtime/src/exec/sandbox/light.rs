//! The lighter jail, for hosts where bwrap cannot make a user namespace: Landlock rules
//! that mirror what the bwrap jail shows, the seccomp filter, the same rlimits and cgroups,
//! no namespaces.
//!
//! The Landlock ruleset is built here, in the parent; the forked child only drops its
//! capabilities, sets `no_new_privs` and makes two system calls, `landlock_restrict_self`
//! and `seccomp` (`process::ChildSetup`), so nothing allocates after the fork.
//!
//! What holds where (docs/sandbox.md says it for users): file rules need Landlock ABI 1
//! (Linux 5.13), required; `refer`, `truncate` and device `ioctl` rules are enforced from
//! ABI 2, 3 and 5 (below 3 the seccomp filter refuses `truncate` by path); TCP bind and
//! connect rules from ABI 4 (the seccomp filter refuses `AF_INET`/`AF_INET6` sockets on
//! every kernel when the network is off); signal and abstract Unix socket scoping from
//! ABI 6 (the seccomp filter refuses signals to the agent's pid, its group and `-1` on
//! every kernel, and below 6 `F_SETOWN`; it cannot know the ids of the agent's other
//! threads, which `kill` also reaches the agent by). Reading the agent's
//! `/proc/<pid>/environ` needs ptrace access, which Landlock denies to a sandboxed process
//! over any process outside its domain, on every ABI.

use super::SandboxPolicy;
use super::cgroup::{CallCgroup, is_root};
use super::interp::Interp;
use super::jail::{ETC, Jail, Light, cgroup_of, jail_env, mounts, working_dir};
use super::seccomp::{self, LightRules};
use super::tmp::PrivateTmp;
use crate::exec::error::SetupError;
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
};
use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use toolbind_codegen::model::ToolSpec;

/// The newest Landlock ABI whose rules the jail asks for: a newer kernel enforces these.
const TARGET: ABI = ABI::V6;

/// The Landlock ABI this kernel offers (0: none, or Landlock is not enabled at boot).
pub(crate) fn kernel_abi() -> i32 {
    // SAFETY: LANDLOCK_CREATE_RULESET_VERSION with a null attribute and size 0 only asks
    // the kernel for its ABI version.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    v.max(0) as i32
}

/// The Landlock ABI the jail enforces here: what this kernel offers, up to [`TARGET`].
pub(crate) fn enforced_abi() -> i32 {
    kernel_abi().min(TARGET as i32)
}

/// Why the lighter jail cannot run here, or `None` when it can.
pub(crate) fn unavailable() -> Option<String> {
    match kernel_abi() {
        0 => Some(
            "Landlock is not available in this kernel (Linux 5.13 or later with Landlock enabled at boot: `lsm=...,landlock`)"
                .to_owned(),
        ),
        _ => None,
    }
}

fn landlock_error(e: impl std::fmt::Display) -> SetupError {
    SetupError::Landlock(e.to_string())
}

/// The lighter jail for one process of `tool`, the same grants as [`super::bwrap::build`].
pub(super) fn build(
    policy: &SandboxPolicy,
    interp: &Interp,
    tool: &ToolSpec,
    binds: &[PathBuf],
    cwd: Option<&Path>,
) -> Result<Jail, SetupError> {
    if let Some(why) = unavailable() {
        return Err(SetupError::Landlock(why));
    }
    let network = policy.network && tool.sandbox.network != Some(false);
    let state = policy.checked_state_dir(tool)?;
    // Beside the tools' state folders, not in one (a tool's `HOME` is its own to fill).
    let tmp_root = crate::dirs::private_subdir(&crate::dirs::state_root(), &["light-tmp"])
        .map_err(|why| SetupError::StateDir {
            tool: tool.name.clone(),
            why,
        })?;
    let tmp = PrivateTmp::new(&tmp_root).map_err(SetupError::PrivateTmp)?;

    let paths = access_paths(policy, interp, tool, binds, &state, &tmp)?;
    let ruleset = landlock_ruleset(paths, network)?;

    let filter = seccomp::light(LightRules {
        agent: std::process::id() as i32,
        // SAFETY: getpgrp has no preconditions and cannot fail.
        agent_group: unsafe { libc::getpgrp() },
        no_network: !network,
        landlock_abi: enforced_abi(),
        root: is_root(),
    })
    .map_err(SetupError::Seccomp)?;

    let mut env: Vec<(String, OsString)> = jail_env(interp, &state);
    for (k, v) in &mut env {
        if k == "TMPDIR" {
            *v = tmp.path().as_os_str().to_owned();
        }
    }
    // The same limits as the bwrap jail's (an explicit one that cannot hold fails here
    // under `required`); with no limit asked, a tracking cgroup still, since no PID
    // namespace ends what the tool leaves behind. Watched either way: a SIGKILLed agent
    // takes the jail's daemons with it.
    let (cgroup, nproc) = cgroup_of(policy, 0)?;
    let cgroup = cgroup.or_else(CallCgroup::track).map(CallCgroup::watched);
    Ok(Jail {
        bwrap: PathBuf::new(),
        options: Vec::new(),
        exe: interp.exe.clone(),
        env,
        limits: policy.limits.clone(),
        cgroup,
        nproc,
        warm: false,
        seccomp: None,
        light: Some(Light {
            ruleset,
            filter,
            cwd: working_dir(policy, cwd, &state),
            tmp,
        }),
    })
}

/// What the lighter jail lets the tool reach, path by path, as the bwrap jail shows it:
/// the system folders, the files of `/etc` and `/proc` to read, a few devices, the
/// interpreter's prefixes, the tool's mounts and its private `TMPDIR`.
fn access_paths(
    policy: &SandboxPolicy,
    interp: &Interp,
    tool: &ToolSpec,
    binds: &[PathBuf],
    state: &Path,
    tmp: &PrivateTmp,
) -> Result<Vec<(PathBuf, BitFlags<AccessFs>)>, SetupError> {
    let read = AccessFs::from_read(TARGET);
    let write = AccessFs::from_all(TARGET);
    let mut paths: Vec<(PathBuf, BitFlags<AccessFs>)> = Vec::new();
    for p in [
        "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
    ]
    .iter()
    .chain(ETC)
    .chain(&["/proc"])
    {
        paths.push((PathBuf::from(p), read));
    }
    // The devices a program needs, one rule each, never `/dev` as a whole: without a mount
    // namespace it is the host's, and a read rule over it hands the tool the host's
    // terminals (`/dev/pts/N`, `/dev/ttyS0`, `/dev/vcs*`: reading one steals what the user
    // types there), and to a root agent's tool the raw disks (`/dev/sda`, `/dev/loop*`,
    // past every file rule), which root still owns with no capability.
    for dev in [
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/random",
        "/dev/urandom",
    ] {
        paths.push((PathBuf::from(dev), AccessFs::from_file(TARGET)));
    }
    for p in &interp.prefixes {
        paths.push((p.clone(), read));
    }
    for (src, _dest, writable) in mounts(policy, tool, binds, state)? {
        // Without a mount namespace a bind's destination is its source (the tool folder as
        // named, a symlink's target here); the rule is on the real folder.
        paths.push((src, if writable { write } else { read }));
    }
    paths.push((tmp.path().to_path_buf(), write));
    Ok(paths)
}

/// The Landlock ruleset over `paths` (and, with no network, no TCP port), its descriptor
/// above fd 9 for the child to restrict itself with.
fn landlock_ruleset(
    paths: Vec<(PathBuf, BitFlags<AccessFs>)>,
    network: bool,
) -> Result<OwnedFd, SetupError> {
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(TARGET))
        .map_err(landlock_error)?;
    if !network {
        // No rule allows a port: TCP bind and connect are refused where ABI >= 4.
        ruleset = ruleset
            .handle_access(AccessNet::from_all(TARGET))
            .map_err(landlock_error)?;
    }
    ruleset = ruleset
        .scope(Scope::from_all(TARGET))
        .map_err(landlock_error)?;
    let mut created = ruleset.create().map_err(landlock_error)?;
    for (path, access) in paths {
        // Missing system folders and `/etc` files are skipped, as bwrap's `--ro-bind-try`.
        let Ok(fd) = PathFd::new(&path) else { continue };
        let access = if path.is_dir() {
            access
        } else {
            access & AccessFs::from_file(TARGET)
        };
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(landlock_error)?;
    }
    let ruleset: Option<OwnedFd> = created.into();
    let ruleset = ruleset.ok_or_else(|| landlock_error("the kernel made no Landlock ruleset"))?;
    // Above fd 9, as the option pipes: the child places fds 3 to 6 before it restricts
    // itself, and must not clobber the ruleset doing so.
    let ruleset = nix::fcntl::fcntl(&ruleset, nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(10))
        .map_err(|e| landlock_error(format!("cannot move the ruleset's descriptor: {e}")))?;
    // SAFETY: F_DUPFD_CLOEXEC returned a new descriptor that nothing else owns.
    let ruleset = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(ruleset) };
    Ok(ruleset)
}

/// What the forked child needs of a [`Light`], as raw values (nothing to allocate or drop
/// after the fork).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LightChild {
    ruleset: i32,
    filter: *const seccompiler::sock_filter,
    len: u16,
    root: bool,
}

// SAFETY: the pointer is to a leaked, never-freed, never-changed program.
unsafe impl Send for LightChild {}
unsafe impl Sync for LightChild {}

impl Light {
    pub(crate) fn child(&self) -> LightChild {
        let insns = self.filter.insns();
        LightChild {
            ruleset: self.ruleset.as_raw_fd(),
            filter: insns.as_ptr(),
            len: insns.len() as u16,
            root: is_root(),
        }
    }
}

impl LightChild {
    /// In the forked child, last before exec: no capabilities (a root runtime's tool would
    /// otherwise keep them all, as bwrap's `--cap-drop ALL` prevents), no new privileges,
    /// the Landlock domain, the seccomp filter. System calls only.
    pub(crate) fn apply(&self) -> std::io::Result<()> {
        let os_error = std::io::Error::last_os_error;
        if self.root {
            // The bounding set first (needs CAP_SETPCAP, dropped below), so that exec gives
            // root nothing back; then every set of this process.
            for cap in 0..64 {
                // SAFETY: prctl(PR_CAPBSET_DROP) only changes this process's bounding set.
                if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } < 0
                    && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL)
                {
                    return Err(os_error());
                }
            }
            // SAFETY: prctl(PR_CAP_AMBIENT_CLEAR_ALL) only changes this process's sets.
            unsafe {
                libc::prctl(
                    libc::PR_CAP_AMBIENT,
                    libc::PR_CAP_AMBIENT_CLEAR_ALL,
                    0,
                    0,
                    0,
                )
            };
            #[repr(C)]
            struct Header {
                version: u32,
                pid: i32,
            }
            #[repr(C)]
            struct Data {
                effective: u32,
                permitted: u32,
                inheritable: u32,
            }
            let header = Header {
                version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
                pid: 0,
            };
            let data = [
                Data {
                    effective: 0,
                    permitted: 0,
                    inheritable: 0,
                },
                Data {
                    effective: 0,
                    permitted: 0,
                    inheritable: 0,
                },
            ];
            // SAFETY: capset with a version-3 header and two data structs on the stack.
            if unsafe { libc::syscall(libc::SYS_capset, &header, data.as_ptr()) } < 0 {
                return Err(os_error());
            }
        }
        // SAFETY: prctl(PR_SET_NO_NEW_PRIVS) only sets this process's flag.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } < 0 {
            return Err(os_error());
        }
        // SAFETY: the ruleset fd is open (the parent holds it until the spawn returns).
        if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, self.ruleset, 0u32) } < 0 {
            return Err(os_error());
        }
        let prog = libc::sock_fprog {
            len: self.len,
            filter: self.filter as *mut libc::sock_filter,
        };
        // SAFETY: `prog` points to `len` instructions that live as long as the process.
        if unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0u32,
                &prog as *const libc::sock_fprog,
            )
        } < 0
        {
            return Err(os_error());
        }
        Ok(())
    }
}
