//! cgroup v1: a folder per jail (or per unjailed process) in the `pids` and `memory`
//! hierarchies, under `<the agent's own cgroup>/toolbind`, named so that a later runtime
//! and the watchdog can clean up after a dead one.

use super::{CgroupError, NotHere, Support, kill_members, open_write, owned, owner_is_gone};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The toolbind folders of the `pids` and `memory` hierarchies, each when this process may
/// make cgroups there (tried once, by making one).
pub(super) struct Roots {
    pids: Result<PathBuf, NotHere>,
    memory: Result<PathBuf, NotHere>,
}

impl Roots {
    pub(super) fn find() -> Roots {
        Roots {
            pids: root("pids", ("pids.max", "max")),
            memory: root("memory", ("memory.limit_in_bytes", "-1")),
        }
    }

    pub(super) fn support(&self) -> Support {
        let by = |r: &Result<PathBuf, NotHere>, what: &str| {
            r.as_ref()
                .map(|_| format!("a {what} cgroup (v1)"))
                .map_err(Clone::clone)
        };
        Support {
            memory: by(&self.memory, "memory"),
            pids: by(&self.pids, "pids"),
            track: by(&self.pids, "pids"),
        }
    }

    /// A `pids` group bounding `max` processes (`None`: tracking only; the caller has
    /// added the slots bwrap itself needs).
    pub(super) fn pids_group(&self, max: Option<u64>) -> Result<Group, CgroupError> {
        let root = self.pids.as_ref().map_err(Clone::clone)?;
        let value = max.map(|m| m.to_string());
        Group::new(root, value.as_deref().map(|v| ("pids.max", v)), None)
    }

    /// Starts the watchdog over this process's `pids` groups (the lighter jail's too).
    pub(super) fn watch(&self) {
        if let Ok(root) = &self.pids {
            start_watchdog(root);
        }
    }

    /// A group that only tracks what an unjailed process starts; the watchdog started.
    pub(super) fn track(&self) -> Result<Group, CgroupError> {
        let root = self.pids.as_ref().map_err(Clone::clone)?;
        start_watchdog(root);
        self.pids_group(None)
    }

    /// A `memory` group bounding all of a jail's processes together: the kernel's OOM
    /// killer ends the jail's largest process when they pass `limit`. Swap counts too
    /// where the kernel accounts it, so memory cannot go to swap.
    pub(super) fn memory_group(&self, limit: u64) -> Result<Group, CgroupError> {
        let root = self.memory.as_ref().map_err(Clone::clone)?;
        let v = limit.to_string();
        Group::new(
            root,
            Some(("memory.limit_in_bytes", &v)),
            Some(("memory.memsw.limit_in_bytes", &v)),
        )
    }
}

/// `<this process's own cgroup of controller>/toolbind` in the v1 hierarchy of
/// `controller`, created when missing, when this uid owns it and can make a cgroup in it
/// with `probe` (a limit file and a value) written: tried by doing it, since a folder
/// that exists (made by root) says nothing of what this uid may do there. Under the
/// runtime's own cgroup, not the hierarchy's root, so tools stay inside whatever limit the
/// agent itself runs under (a service's `MemoryMax`, a container's cgroup). Cgroups left
/// by runtimes that died are emptied (their processes killed) and removed.
fn root(controller: &str, probe: (&str, &str)) -> Result<PathBuf, NotHere> {
    let not = |why: String| NotHere {
        why,
        fix: super::fix_text(true),
    };
    let mount = Path::new("/sys/fs/cgroup").join(controller);
    let own = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                let mut parts = l.splitn(3, ':');
                let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
                names
                    .split(',')
                    .any(|n| n == controller)
                    .then(|| path.trim_start_matches('/').to_owned())
            })
        })
        .ok_or_else(|| not(format!("no cgroup v1 `{controller}` hierarchy here")))?;
    let own = mount.join(own);
    if !own.join(probe.0).exists() && !own.join("cgroup.procs").exists() {
        return Err(not(format!(
            "{} is not a {controller} cgroup",
            own.display()
        )));
    }
    let root = own.join("toolbind");
    match std::fs::create_dir(&root) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(not(format!(
                "cannot make {}: {e} (cgroup v1 folders are root's)",
                root.display()
            )));
        }
    }
    owned(&root).map_err(|e| not(e.into()))?;
    // Probe by doing: a folder, its limit, its cgroup.procs open for writing.
    Group::new(&root, Some(probe), None)
        .map_err(|e| not(format!("cannot use {}: {}", root.display(), e.why)))?;
    for e in std::fs::read_dir(&root).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if owner_is_gone(&name) && owned(&e.path()).is_ok() {
            // A runtime that was SIGKILLed left its unjailed tools' daemons here.
            kill_members(&e.path());
            super::remove_tree(&e.path(), kill_members);
        }
    }
    Ok(root)
}

/// Once per process, before the first unjailed process is tracked: see
/// [`super::start_watchdog`]. v1 has no `cgroup.kill`: it SIGKILLs the members until none
/// is left.
fn start_watchdog(root: &Path) {
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
    super::start_watchdog(
        SCRIPT,
        &[
            std::ffi::OsStr::new(&std::process::id().to_string()),
            root.as_os_str(),
        ],
    );
}

/// One v1 cgroup folder of a jail or an unjailed process. When dropped, whatever is still
/// in it is killed and the folder removed once empty.
pub(super) struct Group {
    dir: PathBuf,
    /// OOM kills already reported.
    seen: AtomicU64,
    /// `cgroup.procs`, opened for writing: the child writes `0` (itself) to it.
    pub(super) procs: OwnedFd,
}

impl Group {
    /// The group's folder.
    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    /// A new cgroup `<pid>-<start time>-<n>` under `root` with `limit` written, and `also`
    /// where the kernel has that file (the name lets a later runtime, and the watchdog,
    /// find the cgroups of a runtime that died, even once its pid is reused).
    fn new(
        root: &Path,
        limit: Option<(&str, &str)>,
        also: Option<(&str, &str)>,
    ) -> Result<Group, CgroupError> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let dir = root.join(format!(
            "{}-{}-{}",
            std::process::id(),
            super::own_start(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let fail = |what: &str, e: std::io::Error| CgroupError {
            why: format!("{what} {}: {e}", dir.display()),
            fix: super::fix_text(true),
        };
        std::fs::create_dir(&dir).map_err(|e| fail("cannot make", e))?;
        let made = (|| {
            if let Some((file, value)) = limit {
                std::fs::write(dir.join(file), value)
                    .map_err(|e| fail(&format!("cannot write {file} in"), e))?;
            }
            if let Some((file, value)) = also
                && dir.join(file).exists()
            {
                std::fs::write(dir.join(file), value)
                    .map_err(|e| fail(&format!("cannot write {file} in"), e))?;
            }
            open_write(&dir.join("cgroup.procs"))
                .map_err(|e| fail("cannot open cgroup.procs of", e))
        })();
        match made {
            Ok(procs) => Ok(Group {
                dir,
                seen: AtomicU64::new(0),
                procs,
            }),
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                Err(e)
            }
        }
    }

    /// Whether a fork was refused for the limit.
    pub(super) fn pids_hit(&self) -> bool {
        super::pids_refused(&self.dir)
    }

    /// Whether the kernel's OOM killer ended one of the jail's processes since the last
    /// time this was asked. (A refused charge alone, `failcnt`, is not a hit: reclaiming
    /// page cache at the limit counts there too.)
    pub(super) fn memory_hit(&self) -> bool {
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

impl Drop for Group {
    fn drop(&mut self) {
        // A jail's processes die with its init, a moment after the outer bwrap is reaped;
        // an unjailed process's daemons only die here.
        super::remove_when_empty(std::mem::take(&mut self.dir), kill_members);
    }
}
