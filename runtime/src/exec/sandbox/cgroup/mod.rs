//! The cgroup of one call (or warm worker): what bounds its processes together and what
//! ends every process it started. Two backends behind one type, [`CallCgroup`]:
//!
//! - `v1`: a folder per call in the `pids` and `memory` hierarchies, under
//!   `<the agent's own cgroup>/toolbind` (root only, in practice).
//! - `v2`: one leaf per call under `<base>/toolbind-<pid>-<start time>`, where `<base>` is
//!   the agent's own cgroup when it is delegated to this uid, else the user manager's
//!   delegated `user@UID.service`. The agent's own process is never moved.
//!
//! Which one serves a process is decided once ([`here`]), by doing: a folder is made, a
//! limit written, `cgroup.procs` opened, the folder removed. What cannot be done is kept
//! with its reason and fix for `SandboxStatus`.

mod v1;
mod v2;

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

pub(super) fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

fn euid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// How many processes this uid runs now (RLIMIT_NPROC counts them all).
pub(super) fn processes_of_uid() -> u64 {
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

/// Why a cgroup feature cannot be used here, and what the user can do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NotHere {
    pub(crate) why: String,
    pub(crate) fix: String,
}

/// The fix for a non-root agent with no delegated cgroup, or root without a usable one,
/// on cgroup `v1` or v2.
pub(super) fn fix_text(v1: bool) -> String {
    let scope =
        "`systemd-run --user --scope -p Delegate=yes AGENT`; toolbind starts no scope itself";
    match (is_root(), v1) {
        (true, _) => "run the agent in a cgroup whose subtree it may manage: on cgroup v2 a unit with `Delegate=yes` (`systemd-run --scope -p Delegate=yes AGENT`), or a cgroup that holds no processes of its own".to_owned(),
        (false, true) => format!(
            "on cgroup v1 only root makes cgroups: run the agent as root, or on a cgroup v2 host under a systemd user manager with a delegated subtree ({scope})"
        ),
        (false, false) => format!(
            "run the agent under a systemd user manager with a delegated subtree ({scope})"
        ),
    }
}

/// What cgroups can do for this process: bound a call's memory, its processes, and end
/// every process a call started. `Ok` says by what.
#[derive(Debug)]
pub(crate) struct Support {
    pub(crate) memory: Result<String, NotHere>,
    pub(crate) pids: Result<String, NotHere>,
    pub(crate) track: Result<String, NotHere>,
}

enum Backend {
    V1(v1::Roots),
    V2(Result<v2::Tree, NotHere>),
    None(NotHere),
}

fn backend() -> &'static Backend {
    static B: OnceLock<Backend> = OnceLock::new();
    B.get_or_init(|| {
        let text = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let v1 = text.lines().any(|l| {
            l.split(':')
                .nth(1)
                .is_some_and(|names| names.split(',').any(|n| n == "pids" || n == "memory"))
        });
        if v1 {
            Backend::V1(v1::Roots::find())
        } else if text.lines().any(|l| l.starts_with("0::")) {
            Backend::V2(v2::Tree::find())
        } else {
            Backend::None(NotHere {
                why: "this kernel shows no cgroups (/proc/self/cgroup)".to_owned(),
                fix: "run on a kernel with cgroups mounted".to_owned(),
            })
        }
    })
}

/// What cgroups can do here (decided once per process).
pub(crate) fn here() -> &'static Support {
    static S: OnceLock<Support> = OnceLock::new();
    S.get_or_init(|| match backend() {
        Backend::V1(r) => r.support(),
        Backend::V2(Ok(t)) => t.support(),
        Backend::V2(Err(e)) | Backend::None(e) => Support {
            memory: Err(e.clone()),
            pids: Err(e.clone()),
            track: Err(e.clone()),
        },
    })
}

/// Why a call's cgroup could not be made as asked, and the fix.
pub(crate) type CgroupError = NotHere;

enum Inner {
    V1 {
        pids: Option<v1::Group>,
        memory: Option<v1::Group>,
    },
    V2(v2::Leaf),
}

/// The cgroup(s) of one jail or one unjailed process. The child joins it before exec by
/// writing `0` to each of [`procs_fds`](Self::procs_fds); when dropped, everything still in
/// it is killed and the folders removed once empty.
pub(crate) struct CallCgroup {
    inner: Inner,
}

impl CallCgroup {
    /// For one jail: a memory limit of `memory` bytes and `pids` processes for all its
    /// processes together, the jail's own (bwrap's) included (`None`: not asked). `Ok(None)` when nothing was asked. A limit
    /// asked for that cannot be set here is an `Err`; the caller decides whether that
    /// fails the call.
    pub(crate) fn jail(
        memory: Option<u64>,
        pids: Option<u64>,
    ) -> (Option<CallCgroup>, Vec<(&'static str, CgroupError)>) {
        let mut missed = Vec::new();
        if memory.is_none() && pids.is_none() {
            return (None, missed);
        }
        let made = match backend() {
            Backend::V1(r) => {
                let pids = pids.and_then(|n| match r.pids_group(Some(n)) {
                    Ok(g) => Some(g),
                    Err(e) => {
                        missed.push(("processes", e));
                        None
                    }
                });
                let memory = memory.and_then(|n| match r.memory_group(n) {
                    Ok(g) => Some(g),
                    Err(e) => {
                        missed.push(("call_memory", e));
                        None
                    }
                });
                (pids.is_some() || memory.is_some()).then_some(Inner::V1 { pids, memory })
            }
            Backend::V2(Ok(t)) => {
                let s = here();
                let memory = memory.filter(|_| {
                    s.memory.is_ok() || {
                        missed.push(("call_memory", not_here(&s.memory)));
                        false
                    }
                });
                let pids = pids.filter(|_| {
                    s.pids.is_ok() || {
                        missed.push(("processes", not_here(&s.pids)));
                        false
                    }
                });
                match t.leaf(memory, pids) {
                    Ok(l) => Some(Inner::V2(l)),
                    Err(e) => {
                        if memory.is_some() {
                            missed.push(("call_memory", e.clone()));
                        }
                        if pids.is_some() {
                            missed.push(("processes", e));
                        }
                        None
                    }
                }
            }
            Backend::V2(Err(e)) | Backend::None(e) => {
                let e = e.clone();
                if memory.is_some() {
                    missed.push(("call_memory", e.clone()));
                }
                if pids.is_some() {
                    missed.push(("processes", e));
                }
                None
            }
        };
        (made.map(|inner| CallCgroup { inner }), missed)
    }

    /// A cgroup that tracks an unjailed process and all it starts (no limit), where one can
    /// be made; starts the watchdog that ends them when this process dies.
    pub(crate) fn track() -> Option<CallCgroup> {
        let made = match backend() {
            Backend::V1(r) => r.track().map(|g| Inner::V1 {
                pids: Some(g),
                memory: None,
            }),
            Backend::V2(Ok(t)) => t.track().map(Inner::V2),
            // Said by the status (`tracking`) and the `auto` warning.
            _ => return None,
        };
        match made {
            Ok(inner) => Some(CallCgroup { inner }),
            Err(e) => {
                // Tracking worked when the runtime started (the status said so), and no
                // longer does: said once, not silently.
                static WARNED: std::sync::Once = std::sync::Once::new();
                WARNED.call_once(|| {
                    crate::telemetry::warn(&format!(
                        "warning: toolbind cannot track what an unjailed call starts (a daemon may outlive it): {}; {}",
                        e.why, e.fix
                    ))
                });
                None
            }
        }
    }

    /// For the lighter jail, which has no PID namespace whose end takes a daemon with it:
    /// the watchdog is started (on v2 every leaf has it already), so that what the jail
    /// started is killed when this process dies, SIGKILL included.
    pub(crate) fn watched(self) -> CallCgroup {
        if let (Backend::V1(r), Inner::V1 { pids: Some(_), .. }) = (backend(), &self.inner) {
            r.watch();
        }
        self
    }

    /// SIGKILLs everything in the cgroup now (the lighter jail's processes once its tool
    /// is reaped), without waiting for the drop.
    pub(crate) fn kill_now(&self) {
        match &self.inner {
            Inner::V1 { pids, memory } => {
                for g in [pids, memory].into_iter().flatten() {
                    kill_members(g.dir());
                }
            }
            Inner::V2(l) => v2::kill_leaf(l.dir()),
        }
    }

    /// The `cgroup.procs` descriptors the child writes `0` to (`-1`: none).
    pub(crate) fn procs_fds(&self) -> [i32; 2] {
        let raw = |g: &Option<v1::Group>| g.as_ref().map_or(-1, |g| g.procs.as_raw_fd());
        match &self.inner {
            Inner::V1 { pids, memory } => [raw(pids), raw(memory)],
            Inner::V2(l) => [l.procs.as_raw_fd(), -1],
        }
    }

    /// Whether the kernel's OOM killer ended one of its processes since the last time this
    /// was asked (a warm worker's later calls are not blamed for an old kill).
    pub(crate) fn memory_hit(&self) -> bool {
        match &self.inner {
            Inner::V1 { memory, .. } => memory.as_ref().is_some_and(v1::Group::memory_hit),
            Inner::V2(l) => l.memory_hit(),
        }
    }

    /// Whether a fork was refused for the process limit.
    pub(crate) fn pids_hit(&self) -> bool {
        match &self.inner {
            Inner::V1 { pids, .. } => pids.as_ref().is_some_and(v1::Group::pids_hit),
            Inner::V2(l) => l.pids_hit(),
        }
    }

    /// Whether this cgroup bounds processes (so `RLIMIT_NPROC` is not needed).
    pub(crate) fn bounds_pids(&self) -> bool {
        match &self.inner {
            Inner::V1 { pids, .. } => pids.is_some(),
            Inner::V2(l) => l.pids_limited,
        }
    }
}

fn not_here(r: &Result<String, NotHere>) -> CgroupError {
    r.as_ref().err().cloned().unwrap_or(NotHere {
        why: String::new(),
        fix: String::new(),
    })
}

/// When process `pid` started, in clock ticks since boot (`/proc/<pid>/stat` field 22):
/// with the pid it names one process, even after the pid is reused.
fn start_time(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let close = stat.rfind(')')?;
    // After the name: state is field 3, so the start time is the 20th from there.
    stat[close + 2..].split(' ').nth(19)?.parse().ok()
}

/// This process's start time (see [`start_time`]).
fn own_start() -> u64 {
    static START: OnceLock<u64> = OnceLock::new();
    *START.get_or_init(|| start_time("self").unwrap_or(0))
}

/// Whether the runtime that made cgroup `name` (`<pid>-<start time>[-<n>]`, or an older
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

/// Whether cgroup `dir` refused a fork for its `pids.max` (`pids.events`: `max N`, N > 0;
/// the same file in v1 and v2).
fn pids_refused(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("pids.events")).is_ok_and(|t| {
        t.lines().any(|l| {
            l.strip_prefix("max ")
                .and_then(|n| n.trim().parse::<u64>().ok())
                .is_some_and(|n| n > 0)
        })
    })
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

/// Removes the cgroup folder `dir` once the kernel lets it go, calling `kill` first and
/// before each retry: a moment after the last process is reaped, so retried off this
/// thread (bounded: 5 s), never blocking the caller.
fn remove_when_empty(dir: std::path::PathBuf, kill: fn(&Path)) {
    kill(&dir);
    if remove_tree(&dir, kill) {
        return;
    }
    std::thread::spawn(move || {
        for _ in 0..100 {
            if remove_tree(&dir, kill) || !dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
            kill(&dir);
        }
    });
}

/// Removes cgroup folder `dir` and the folders below it, deepest first, killing their
/// members: a process of the call may itself be a runtime (an unjailed tool running
/// `toolbind`), whose own cgroup folders inside the call's would keep it (`EBUSY`) for
/// good. Whether `dir` is gone.
fn remove_tree(dir: &Path, kill: fn(&Path)) -> bool {
    fn below(dir: &Path, kill: fn(&Path), depth: usize) {
        if depth > 16 {
            return;
        }
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                let sub = e.path();
                below(&sub, kill, depth + 1);
                kill(&sub);
                let _ = std::fs::remove_dir(&sub);
            }
        }
    }
    if std::fs::remove_dir(dir).is_ok() {
        return true;
    }
    below(dir, kill, 0);
    std::fs::remove_dir(dir).is_ok()
}

/// Why a cgroup folder or file cannot be used: the words of a [`CgroupError`]'s or a
/// [`NotHere`]'s `why`.
#[derive(Debug)]
pub(super) enum Unusable {
    /// It is a symlink (never followed).
    Symlink(PathBuf),
    /// Another uid owns it: not delegated to this one (`euid`).
    NotOwned { path: PathBuf, uid: u32, euid: u32 },
    /// Its owner cannot be read.
    Unreadable { path: PathBuf, why: std::io::Error },
    /// cgroup v2: the parent of `dir` does not delegate `controller` to it.
    NotDelegated { controller: String, dir: PathBuf },
    /// cgroup v2: `dir` holds processes, so no controller can be enabled for its children.
    Busy { controller: String, dir: PathBuf },
    /// cgroup v2: enabling `controller` in `dir` failed otherwise.
    NotEnabled {
        controller: String,
        dir: PathBuf,
        why: std::io::Error,
    },
    /// The base cgroup was removed while the runtime ran.
    BaseRemoved(PathBuf),
    /// The runtime's own folder was removed and cannot be made again.
    NotRemade { dir: PathBuf, why: std::io::Error },
}

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unusable::Symlink(p) => write!(f, "{} is a symlink", p.display()),
            Unusable::NotOwned { path, uid, euid } => write!(
                f,
                "{} is owned by uid {uid}, not delegated to uid {euid}",
                path.display()
            ),
            Unusable::Unreadable { path, why } => {
                write!(f, "cannot read {}: {why}", path.display())
            }
            Unusable::NotDelegated { controller, dir } => write!(
                f,
                "the {controller} controller is not available in {} (its parent does not delegate it)",
                dir.display()
            ),
            Unusable::Busy { controller, dir } => write!(
                f,
                "{} holds processes, so cgroup v2 cannot enable {controller} for its children (no internal processes; toolbind never moves the agent)",
                dir.display()
            ),
            Unusable::NotEnabled {
                controller,
                dir,
                why,
            } => write!(f, "cannot enable {controller} in {}: {why}", dir.display()),
            Unusable::BaseRemoved(base) => write!(
                f,
                "the base cgroup {} was removed while the runtime ran",
                base.display()
            ),
            Unusable::NotRemade { dir, why } => write!(
                f,
                "the cgroup {} was removed and cannot be made again: {why}",
                dir.display()
            ),
        }
    }
}

/// The `why` of a [`CgroupError`] or a [`NotHere`] is its words.
impl From<Unusable> for String {
    fn from(u: Unusable) -> String {
        u.to_string()
    }
}

/// Whether `path` (not followed if a symlink) is owned by this process's effective uid.
fn owned(path: &Path) -> Result<(), Unusable> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.uid() == euid() && !m.file_type().is_symlink() => Ok(()),
        Ok(m) if m.file_type().is_symlink() => Err(Unusable::Symlink(path.to_path_buf())),
        Ok(m) => Err(Unusable::NotOwned {
            path: path.to_path_buf(),
            uid: m.uid(),
            euid: euid(),
        }),
        Err(why) => Err(Unusable::Unreadable {
            path: path.to_path_buf(),
            why,
        }),
    }
}

/// Opens `path` for writing without following a symlink.
fn open_write(path: &Path) -> std::io::Result<OwnedFd> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map(OwnedFd::from)
}

/// Starts, once per process, a watchdog (`sh`, its own session) blocked reading a pipe
/// whose only write end this process holds. When this process dies in any way, SIGKILL
/// included, the read returns and the watchdog runs `script` with `args`: it ends what
/// is left in this process's cgroups — the daemons of unjailed tools, which
/// `PR_SET_PDEATHSIG` does not reach — and removes them.
fn start_watchdog(script: &'static str, args: &[&std::ffi::OsStr]) {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        if let Some((_, w)) = spawn_watchdog(script, args) {
            // The write end lives as long as this process.
            std::mem::forget(w);
        }
    });
}

/// The watchdog `sh` running `script` with `args`, and the write end of the pipe it reads.
fn spawn_watchdog(
    script: &'static str,
    args: &[&std::ffi::OsStr],
) -> Option<(std::process::Child, OwnedFd)> {
    use std::os::unix::process::CommandExt;
    let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).ok()?;
    let child = std::process::Command::new("/bin/sh")
        .args(["-c", script, "sh"])
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(std::process::Stdio::from(r))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    Some((child, w))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The type the rest of the runtime uses, over a v2 leaf: one descriptor to join, and
    /// dropping it ends what joined. (The v2 logic itself: `v2::tests`.)
    #[test]
    fn a_call_cgroup_over_a_v2_leaf_has_one_descriptor_and_its_drop_ends_a_daemon() {
        let Some(p) = v2::tests::Private::new() else {
            return;
        };
        let tree = v2::Tree::at(&p.base).unwrap();
        let cg = CallCgroup {
            inner: Inner::V2(tree.track().unwrap()),
        };
        let [fd, none] = cg.procs_fds();
        assert!(fd >= 0 && none == -1);
        assert!(!cg.memory_hit() && !cg.pids_hit() && !cg.bounds_pids());
        use std::os::unix::process::CommandExt;
        let mut c = std::process::Command::new("/bin/sh");
        c.args([
            "-c",
            "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!",
        ])
        .stdout(std::process::Stdio::piped());
        // SAFETY: one write to an open descriptor, async-signal-safe.
        unsafe {
            c.pre_exec(move || {
                if libc::write(fd, b"0".as_ptr().cast(), 1) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let out = c.spawn().unwrap().wait_with_output().unwrap();
        let daemon: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        let running = |pid: i32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.rfind(')').is_some_and(|i| &s[i + 2..i + 3] != "Z"))
        };
        assert!(running(daemon));
        drop(cg);
        let start = std::time::Instant::now();
        while running(daemon) && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let survived = running(daemon);
        drop(tree);
        assert!(!survived, "the daemon outlived its CallCgroup");
    }

    #[test]
    fn a_cgroup_is_stale_when_its_runtime_is_gone_or_its_pid_reused() {
        let me = std::process::id().to_string();
        let start = start_time("self").unwrap();
        assert!(!owner_is_gone(&format!("{me}-{start}-0")));
        assert!(!owner_is_gone(&format!("{me}-{start}")));
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
}
