//! cgroup v2: one leaf per jail (or per unjailed process) under a folder of this runtime's,
//! `<base>/toolbind-<pid>-<start time>`, that holds no processes.
//!
//! The base is the agent's own cgroup when this uid owns it (root; a container with its own
//! cgroup namespace; a unit with `Delegate=yes`), else the systemd user manager's delegated
//! `user.slice/user-UID.slice/user@UID.service`. The runtime never moves the agent's own
//! process (it runs inside someone else's program): where the base itself holds processes,
//! cgroup v2's no-internal-processes rule refuses to enable `memory` and `pids` for its
//! children (`EBUSY`), and the limits are reported as not enforced, with the fix; the
//! leaves still track what a call starts (`cgroup.kill` needs no controller). Nothing is
//! written outside a folder this uid owns. No D-Bus, no `systemd-run`: a user who wants
//! limits where nothing is delegated runs the agent under
//! `systemd-run --user --scope -p Delegate=yes`.

use super::{CgroupError, NotHere, Support, kill_members, open_write, owned};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// This runtime's folder of leaves, and what it can do.
pub(super) struct Tree {
    base: PathBuf,
    parent: PathBuf,
    memory: Result<(), NotHere>,
    pids: Result<(), NotHere>,
    /// `cgroup.kill` exists (Linux ≥ 5.14); else a SIGKILL loop over `cgroup.procs`.
    kill: bool,
    seq: AtomicU64,
    /// Whether the watchdog is started with the first leaf (the process's own tree).
    watch: bool,
}

/// The controllers a leaf uses.
const CONTROLLERS: [&str; 2] = ["memory", "pids"];

impl Tree {
    /// The tree of this process: under the first base that gives both controllers, else
    /// the first where leaves can be made at all (tracking only).
    pub(super) fn find() -> Result<Tree, NotHere> {
        let not = |why: String| NotHere {
            why,
            fix: super::fix_text(),
        };
        let (mount, own) = own_cgroup().ok_or_else(|| {
            not("no cgroup2 mount shows this process's cgroup (/proc/self/mountinfo)".into())
        })?;
        let uid = super::euid();
        let mut bases = vec![own];
        let user = mount.join(format!("user.slice/user-{uid}.slice/user@{uid}.service"));
        if !bases.contains(&user) && user.is_dir() {
            bases.push(user);
        }
        let mut whys = Vec::new();
        let mut fallback: Option<Tree> = None;
        for base in &bases {
            match Tree::at(base) {
                Ok(mut t) if t.memory.is_ok() && t.pids.is_ok() => {
                    t.watch = true;
                    return Ok(t);
                }
                Ok(t) => {
                    for e in [&t.memory, &t.pids].into_iter().flatten_err() {
                        whys.push(e.why.clone());
                    }
                    if fallback.is_none() {
                        fallback = Some(t);
                    }
                }
                Err(e) => whys.push(e.why),
            }
        }
        whys.dedup();
        let why = whys.join("; ");
        match fallback {
            Some(mut t) => {
                for r in [&mut t.memory, &mut t.pids] {
                    if let Err(e) = r {
                        e.why = why.clone();
                    }
                }
                t.watch = true;
                Ok(t)
            }
            None => Err(not(why)),
        }
    }

    /// The tree under `base` (tests give a folder of a private cgroup2 mount): sweeps the
    /// folders of dead runtimes, makes this runtime's folder, enables the controllers it
    /// can, and tries a leaf.
    pub(super) fn at(base: &Path) -> Result<Tree, NotHere> {
        let not = |why: String| NotHere {
            why,
            fix: super::fix_text(),
        };
        owned(base).map_err(not)?;
        sweep(base);
        let parent = base.join(format!(
            "toolbind-{}-{}",
            std::process::id(),
            super::own_start()
        ));
        std::fs::create_dir(&parent).map_err(|e| {
            not(if e.kind() == std::io::ErrorKind::AlreadyExists {
                format!(
                    "{} already exists and was not made by this runtime",
                    parent.display()
                )
            } else {
                format!("cannot make a cgroup in {}: {e}", base.display())
            })
        })?;
        let mut t = Tree {
            base: base.to_path_buf(),
            kill: parent.join("cgroup.kill").exists(),
            parent,
            memory: Ok(()),
            pids: Ok(()),
            seq: AtomicU64::new(0),
            watch: false,
        };
        for c in CONTROLLERS {
            let r = enable(base, c)
                .and_then(|()| enable(&t.parent, c))
                .map_err(not);
            if c == "memory" {
                t.memory = r;
            } else {
                t.pids = r;
            }
        }
        // Probe by doing: a leaf with each limit written and cgroup.procs open.
        let probe = t.leaf(
            t.memory.is_ok().then_some(u64::MAX),
            t.pids.is_ok().then_some(u64::MAX - 3),
        );
        if let Err(e) = probe {
            // Without limits, once more: a leaf that only tracks.
            for r in [&mut t.memory, &mut t.pids] {
                if r.is_ok() {
                    *r = Err(not(e.why.clone()));
                }
            }
            t.leaf(None, None).map_err(|e| not(e.why))?;
        }
        Ok(t)
    }

    pub(super) fn support(&self) -> Support {
        let by = |r: &Result<(), NotHere>, what: &str| {
            r.as_ref()
                .map(|()| {
                    format!(
                        "a cgroup v2 leaf per call ({what}, under {})",
                        self.base.display()
                    )
                })
                .map_err(Clone::clone)
        };
        Support {
            memory: by(&self.memory, "memory.max"),
            pids: by(&self.pids, "pids.max"),
            track: Ok(format!(
                "a cgroup v2 leaf per call under {}, ended by {}",
                self.base.display(),
                if self.kill {
                    "cgroup.kill"
                } else {
                    "a SIGKILL loop"
                }
            )),
        }
    }

    /// A leaf that tracks an unjailed process and all it starts (no limit).
    pub(super) fn track(&self) -> Result<Leaf, CgroupError> {
        self.leaf(None, None)
    }

    /// A new leaf `call-<n>` with `memory` bytes (`memory.max`, no swap, the whole leaf
    /// killed on OOM) and `pids` processes (plus bwrap's three) when given. A name that is
    /// taken (planted) is skipped; a runtime folder removed under us is made again once.
    pub(super) fn leaf(&self, memory: Option<u64>, pids: Option<u64>) -> Result<Leaf, CgroupError> {
        if self.watch {
            start_watchdog(&self.parent);
        }
        let err = |why: String| CgroupError { why };
        let mut remade = false;
        let mut taken = 0;
        let dir = loop {
            let dir = self
                .parent
                .join(format!("call-{}", self.seq.fetch_add(1, Ordering::Relaxed)));
            match std::fs::create_dir(&dir) {
                Ok(()) => break dir,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && taken < 16 => {
                    taken += 1;
                }
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {
                    return Err(err(format!(
                        "cannot make a cgroup in {}: {e} (its or an ancestor's cgroup.max.descendants or cgroup.max.depth is reached)",
                        self.parent.display()
                    )));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && !remade => {
                    remade = true;
                    self.remake_parent().map_err(err)?;
                }
                Err(e) => {
                    return Err(err(format!("cannot make {}: {e}", dir.display())));
                }
            }
        };
        let made = (|| {
            owned(&dir)?;
            let write = |file: &str, value: &str| {
                std::fs::write(dir.join(file), value)
                    .map_err(|e| format!("cannot write {file} of {}: {e}", dir.display()))
            };
            if let Some(m) = memory {
                write("memory.max", &cap(m))?;
                if dir.join("memory.swap.max").exists() {
                    write("memory.swap.max", "0")?;
                }
                write("memory.oom.group", "1")?;
            }
            if let Some(n) = pids {
                // bwrap itself needs three slots (its monitor, the namespace's init, the
                // command).
                write("pids.max", &cap(n.saturating_add(3)))?;
            }
            open_write(&dir.join("cgroup.procs"))
                .map_err(|e| format!("cannot open cgroup.procs of {}: {e}", dir.display()))
        })();
        match made {
            Ok(procs) => Ok(Leaf {
                dir,
                procs,
                seen: AtomicU64::new(0),
                pids_limited: pids.is_some(),
            }),
            Err(why) => {
                if owned(&dir).is_ok() {
                    let _ = std::fs::remove_dir(&dir);
                }
                Err(err(why))
            }
        }
    }

    /// This runtime's folder, made again after something removed it (and its base still
    /// exists), with the controllers enabled that were.
    fn remake_parent(&self) -> Result<(), String> {
        if !self.base.is_dir() {
            return Err(format!(
                "the base cgroup {} was removed while the runtime ran",
                self.base.display()
            ));
        }
        match std::fs::create_dir(&self.parent) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(format!(
                    "the cgroup {} was removed and cannot be made again: {e}",
                    self.parent.display()
                ));
            }
        }
        owned(&self.parent)?;
        for (c, r) in CONTROLLERS.iter().zip([&self.memory, &self.pids]) {
            if r.is_ok() {
                enable(&self.base, c).and_then(|()| enable(&self.parent, c))?;
            }
        }
        Ok(())
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        end_tree(&self.parent);
    }
}

/// `n` as a cgroup file takes it (`max` for no limit).
fn cap(n: u64) -> String {
    if n >= i64::MAX as u64 {
        "max".to_owned()
    } else {
        n.to_string()
    }
}

trait FlattenErr<'a> {
    fn flatten_err(self) -> impl Iterator<Item = &'a NotHere>;
}

impl<'a, I: Iterator<Item = &'a Result<(), NotHere>>> FlattenErr<'a> for I {
    fn flatten_err(self) -> impl Iterator<Item = &'a NotHere> {
        self.filter_map(|r| r.as_ref().err())
    }
}

/// The cgroup2 mount point and this process's cgroup folder in it.
fn own_cgroup() -> Option<(PathBuf, PathBuf)> {
    let own = std::fs::read_to_string("/proc/self/cgroup")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("0::").map(str::to_owned))?;
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut found = None;
    for line in info.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        if right.split(' ').next() != Some("cgroup2") {
            continue;
        }
        let fields: Vec<&str> = left.split(' ').collect();
        let (Some(root), Some(point)) = (fields.get(3), fields.get(4)) else {
            continue;
        };
        let Some(rel) = Path::new(&own).strip_prefix(root).ok() else {
            continue;
        };
        let mount = PathBuf::from(point);
        let preferred = mount == Path::new("/sys/fs/cgroup");
        if found.is_none() || preferred {
            found = Some((mount.clone(), mount.join(rel)));
        }
    }
    found
}

/// Enables controller `c` for the children of `dir` when it is not: `dir` must be this
/// uid's, offer `c`, and hold no processes.
fn enable(dir: &Path, c: &str) -> Result<(), String> {
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
    if read("cgroup.subtree_control")
        .split_whitespace()
        .any(|x| x == c)
    {
        return Ok(());
    }
    if !read("cgroup.controllers")
        .split_whitespace()
        .any(|x| x == c)
    {
        return Err(format!(
            "the {c} controller is not available in {} (its parent does not delegate it)",
            dir.display()
        ));
    }
    let control = dir.join("cgroup.subtree_control");
    owned(&control)?;
    std::fs::write(&control, format!("+{c}")).map_err(|e| {
        if e.raw_os_error() == Some(libc::EBUSY) {
            format!(
                "{} holds processes, so cgroup v2 cannot enable {c} for its children (no internal processes; toolbind never moves the agent)",
                dir.display()
            )
        } else {
            format!("cannot enable {c} in {}: {e}", dir.display())
        }
    })
}

/// Removes the folders of runtimes that died (`toolbind-<pid>-<start>` whose process is
/// gone or whose pid names a later process), after killing what is left in them. Folders
/// owned by another uid are not touched.
fn sweep(base: &Path) {
    for e in std::fs::read_dir(base).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some((pid, start)) = name
            .strip_prefix("toolbind-")
            .and_then(|r| r.split_once('-'))
        else {
            continue;
        };
        let (Ok(_), Ok(start)) = (pid.parse::<u32>(), start.parse::<u64>()) else {
            continue;
        };
        if super::start_time(pid) == Some(start) || owned(&e.path()).is_err() {
            continue;
        }
        end_tree(&e.path());
    }
}

/// Kills everything in a runtime's folder and removes its leaves and itself (bounded: a
/// leaf that will not go, such as one holding a cgroup of another's, is left).
fn end_tree(parent: &Path) {
    for _ in 0..20 {
        kill_leaf(parent);
        let mut left = false;
        for e in std::fs::read_dir(parent).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir())
                && owned(&e.path()).is_ok()
                && std::fs::remove_dir(e.path()).is_err()
            {
                left = true;
            }
        }
        if std::fs::remove_dir(parent).is_ok() || !parent.exists() || !left {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Kills every process in cgroup `dir` and below: one write to `cgroup.kill`, else
/// SIGKILL rounds over `cgroup.procs` of it and its folders; then waits (up to 20 ms)
/// for `cgroup.events` to say `populated 0`.
fn kill_leaf(dir: &Path) {
    if std::fs::write(dir.join("cgroup.kill"), "1").is_err() {
        kill_members(dir);
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                kill_members(&e.path());
            }
        }
    }
    for _ in 0..20 {
        if !populated(dir) {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Whether cgroup `dir` or one below it holds a process (`cgroup.events`).
pub(super) fn populated(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("cgroup.events")).is_ok_and(|t| {
        t.lines().any(|l| {
            l.strip_prefix("populated ")
                .is_some_and(|n| n.trim() != "0")
        })
    })
}

/// Once per process, before the first leaf: see [`super::start_watchdog`]. It kills the
/// runtime's whole folder with one write to `cgroup.kill` (else SIGKILL rounds) and
/// removes the leaves and the folder.
fn start_watchdog(parent: &Path) {
    const SCRIPT: &str = r#"read -r _
p=$1
i=0
while [ $i -lt 100 ]; do
  if [ -e "$p/cgroup.kill" ]; then
    echo 1 > "$p/cgroup.kill" 2>/dev/null
  else
    for d in "$p" "$p"/*/; do
      for x in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$x" 2>/dev/null; done
    done
  fi
  for d in "$p"/*/; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
  rmdir "$p" 2>/dev/null && exit 0
  [ -d "$p" ] || exit 0
  i=$((i+1))
  sleep 0.05
done"#;
    super::start_watchdog(SCRIPT, &[parent.as_os_str()]);
}

/// One leaf: a jail's or an unjailed process's. When dropped, everything in it is killed
/// (`cgroup.kill`) and it is removed once empty.
pub(super) struct Leaf {
    dir: PathBuf,
    /// `cgroup.procs`, opened for writing: the child writes `0` (itself) to it.
    pub(super) procs: OwnedFd,
    /// OOM kills already reported.
    seen: AtomicU64,
    pub(super) pids_limited: bool,
}

impl Leaf {
    /// Whether the OOM killer ended a process of the leaf (or the whole leaf) since the
    /// last time this was asked (`memory.events`: `oom_kill`, `oom_group_kill`).
    pub(super) fn memory_hit(&self) -> bool {
        let kills: u64 = std::fs::read_to_string(self.dir.join("memory.events"))
            .map(|t| {
                t.lines()
                    .filter_map(|l| {
                        l.strip_prefix("oom_kill ")
                            .or_else(|| l.strip_prefix("oom_group_kill "))
                            .and_then(|n| n.trim().parse::<u64>().ok())
                    })
                    .sum()
            })
            .unwrap_or(0);
        kills > self.seen.swap(kills, Ordering::Relaxed)
    }

    /// Whether a fork was refused for `pids.max` (`pids.events`: `max`).
    pub(super) fn pids_hit(&self) -> bool {
        std::fs::read_to_string(self.dir.join("pids.events")).is_ok_and(|t| {
            t.lines().any(|l| {
                l.strip_prefix("max ")
                    .and_then(|n| n.trim().parse::<u64>().ok())
                    .is_some_and(|n| n > 0)
            })
        })
    }

    #[cfg(test)]
    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Leaf {
    fn drop(&mut self) {
        super::remove_when_empty(std::mem::take(&mut self.dir), kill_leaf);
    }
}
