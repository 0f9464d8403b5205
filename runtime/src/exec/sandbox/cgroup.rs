//! v1 `pids` and `memory` cgroups: one per jail (or per unjailed process, to track what it
//! starts), named so that a later runtime and the watchdog can clean up after a dead one.

use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub(super) fn is_root() -> bool {
    nix::unistd::getuid().is_root()
}

/// How many processes this uid runs now (RLIMIT_NPROC counts them all).
pub(super) fn processes_of_uid() -> u64 {
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

    pub(super) fn create(max: u64) -> Option<Cgroup> {
        Cgroup::make(Some(max))
    }

    /// [`create`](Self::create), watched as [`track`](Self::track)'s cgroups are: for the
    /// lighter jail, whose daemons no PID namespace ends when the agent dies.
    pub(super) fn create_watched(max: u64) -> Option<Cgroup> {
        start_watchdog(pids_cgroup_root()?);
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
    pub(super) fn hit(&self) -> bool {
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

impl Cgroup {
    /// SIGKILLs every process in the cgroup now (the lighter jail's processes, which no
    /// PID namespace ends).
    pub(super) fn kill_members(&self) {
        kill_members(&self.dir);
    }
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
pub(super) fn memory_cgroup_root() -> Option<&'static Path> {
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
    pub(super) fn create(limit: u64) -> Option<MemoryCgroup> {
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
    pub(super) fn hit(&self) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
