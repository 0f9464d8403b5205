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

use super::{CgroupError, NotHere, Support, Unusable, kill_members, open_write, owned};
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
            fix: super::fix_text(false),
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
            fix: super::fix_text(false),
        };
        owned(base).map_err(|e| not(e.into()))?;
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
                .map_err(|e| not(e.into()));
            if c == "memory" {
                t.memory = r;
            } else {
                t.pids = r;
            }
        }
        // Probe by doing: a leaf with each limit written, and a process moved into it as
        // a tool's child moves itself.
        let probe = t
            .leaf(
                t.memory.is_ok().then_some(u64::MAX),
                t.pids.is_ok().then_some(u64::MAX - 3),
            )
            .and_then(|l| join_probe(&l));
        if let Err(e) = probe {
            // Without limits, once more: a leaf that only tracks.
            for r in [&mut t.memory, &mut t.pids] {
                if r.is_ok() {
                    *r = Err(not(e.why.clone()));
                }
            }
            t.leaf(None, None)
                .and_then(|l| join_probe(&l))
                .map_err(|e| not(e.why))?;
        }
        // A process that only asks (`toolbind list`) would leave its empty folder until the
        // next runtime's sweep: removed now, made again with the first leaf (as after any
        // removal). The probe's leaf is removed as it is dropped; should the kernel still
        // hold it a moment, a few tries (then the folder stays, for the sweep).
        for _ in 0..20 {
            if std::fs::remove_dir(&t.parent).is_ok() || !t.parent.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
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
    /// killed on OOM) and `pids` processes (the caller's headroom for bwrap included) when given. A name that is
    /// taken (planted) is skipped; a runtime folder removed under us is made again once.
    pub(super) fn leaf(&self, memory: Option<u64>, pids: Option<u64>) -> Result<Leaf, CgroupError> {
        if self.watch {
            start_watchdog(&self.parent);
        }
        let err = |why: String| CgroupError {
            why,
            fix: super::fix_text(false),
        };
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
                    return Err(CgroupError {
                        why: format!(
                            "cannot make a cgroup in {}: {e} (its or an ancestor's cgroup.max.descendants or cgroup.max.depth is reached)",
                            self.parent.display()
                        ),
                        fix: "raise cgroup.max.descendants (or cgroup.max.depth) of the cgroups above it, or end what holds the cgroups there".to_owned(),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && !remade => {
                    remade = true;
                    self.remake_parent().map_err(|e| err(e.into()))?;
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
                // The caller has added its jail's own processes (bwrap's).
                write("pids.max", &cap(n))?;
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
    fn remake_parent(&self) -> Result<(), Unusable> {
        if !self.base.is_dir() {
            return Err(Unusable::BaseRemoved(self.base.clone()));
        }
        match std::fs::create_dir(&self.parent) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(why) => {
                return Err(Unusable::NotRemade {
                    dir: self.parent.clone(),
                    why,
                });
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

/// Whether a process of this runtime's can move itself into `leaf` (`/bin/true`, which
/// writes `0` to the leaf's `cgroup.procs` before exec, as a tool's child does). Opening
/// the file is not enough: cgroup v2 also needs write access to `cgroup.procs` of the
/// nearest common ancestor of the agent's cgroup and the leaf, which a user's login session
/// (`session-N.scope`) and its `user@UID.service` do not share.
fn join_probe(leaf: &Leaf) -> Result<(), CgroupError> {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let fd = leaf.procs.as_raw_fd();
    let mut c = std::process::Command::new("/bin/true");
    c.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: one write to an open descriptor, async-signal-safe.
    unsafe {
        c.pre_exec(move || {
            if libc::write(fd, b"0".as_ptr().cast(), 1) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let status = c.spawn().and_then(|mut child| child.wait());
    match status {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("/bin/true failed in {}: {s}", leaf.dir.display())),
        Err(e) => Err(format!(
            "a process cannot move into {}: {e} (cgroup v2 needs write access to cgroup.procs of the nearest common ancestor of the agent's cgroup and the leaf)",
            leaf.dir.display()
        )),
    }
    .map_err(|why| CgroupError {
        why,
        fix: super::fix_text(false),
    })
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
fn enable(dir: &Path, c: &str) -> Result<(), Unusable> {
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
        return Err(Unusable::NotDelegated {
            controller: c.to_owned(),
            dir: dir.to_path_buf(),
        });
    }
    let control = dir.join("cgroup.subtree_control");
    owned(&control)?;
    std::fs::write(&control, format!("+{c}")).map_err(|why| {
        let (controller, dir) = (c.to_owned(), dir.to_path_buf());
        if why.raw_os_error() == Some(libc::EBUSY) {
            Unusable::Busy { controller, dir }
        } else {
            Unusable::NotEnabled {
                controller,
                dir,
                why,
            }
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
                && !super::remove_tree(&e.path(), kill_leaf)
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
pub(super) fn kill_leaf(dir: &Path) {
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

/// The watchdog's script (see [`super::start_watchdog`]), `$1` the runtime's folder: it
/// kills the whole folder with one write to `cgroup.kill` (else SIGKILL rounds) and
/// removes the leaves and the folder.
const WATCHDOG: &str = r#"read -r _
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

/// Once per process, before the first leaf of the process's own tree.
fn start_watchdog(parent: &Path) {
    super::start_watchdog(WATCHDOG, &[parent.as_os_str()]);
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
        super::pids_refused(&self.dir)
    }

    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Leaf {
    fn drop(&mut self) {
        super::remove_when_empty(std::mem::take(&mut self.dir), kill_leaf);
    }
}

/// The v2 logic on a private `cgroup2` mount (a temp folder, unmounted after): on a v1
/// host it has `cgroup.kill`, `cgroup.events` and `cgroup.procs` but no `memory` or `pids`
/// controller, enough for tree kill, naming, the sweep and the bad inputs; the limits
/// themselves need a v2 host (the VM script). Mounting needs root: as another user these
/// tests say so and return.
#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;
    use std::time::Instant;

    /// A base folder on a private cgroup2 mount; dropped, it ends every process left in
    /// it, removes its folders and unmounts.
    pub(in super::super) struct Private {
        mount: PathBuf,
        pub(in super::super) base: PathBuf,
    }

    impl Private {
        pub(in super::super) fn new() -> Option<Private> {
            if !super::super::is_root() {
                eprintln!("skipped: mounting a private cgroup2 needs root");
                return None;
            }
            let mount = tempfile::tempdir().unwrap().keep();
            let ok = std::process::Command::new("mount")
                .args(["-t", "cgroup2", "none"])
                .arg(&mount)
                .status()
                .unwrap();
            assert!(ok.success(), "mount -t cgroup2 failed as root");
            static N: AtomicU64 = AtomicU64::new(0);
            let base = mount.join(format!(
                "tbtest-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir(&base).unwrap();
            Some(Private { mount, base })
        }
    }

    /// Every cgroup folder at and below `dir`, deepest first.
    fn folders(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                folders(&e.path(), out);
            }
        }
        out.push(dir.to_path_buf());
    }

    impl Drop for Private {
        fn drop(&mut self) {
            let mut all = Vec::new();
            folders(&self.base, &mut all);
            for _ in 0..100 {
                for d in &all {
                    kill_members(d);
                    let _ = std::fs::remove_dir(d);
                }
                if !self.base.exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(&self.mount)
                .status();
            let _ = std::fs::remove_dir(&self.mount);
        }
    }

    /// `sh -c script` started in the cgroup of `procs` (the child writes `0` to it before
    /// exec, as a tool's does); its stdout piped.
    fn spawn_in(procs: &OwnedFd, script: &str) -> std::process::Child {
        use std::os::unix::process::CommandExt;
        let fd = procs.as_raw_fd();
        let mut c = std::process::Command::new("/bin/sh");
        c.args(["-c", script])
            .stdout(std::process::Stdio::piped())
            .stdin(std::process::Stdio::null());
        // SAFETY: one write to an open descriptor, async-signal-safe.
        unsafe {
            c.pre_exec(move || {
                if libc::write(fd, b"0".as_ptr().cast(), 1) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        c.spawn().unwrap()
    }

    /// Starts a `setsid sleep` daemon (its own session, out of the starter's group) in the
    /// cgroup of `procs`; the starter exits at once. The daemon's pid.
    fn daemon_in(procs: &OwnedFd) -> i32 {
        let child = spawn_in(
            procs,
            "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!",
        );
        let out = child.wait_with_output().unwrap();
        let pid = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        assert!(alive(pid), "the daemon {pid} did not start");
        pid
    }

    /// Whether `pid` runs (a zombie no one reaps has ended).
    fn alive(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rfind(')')
                .and_then(|i| s.get(i + 2..i + 3))
                .is_some_and(|state| state != "Z" && state != "X")
        })
    }

    /// Waits (at most 5 s) for `done`; whether it came.
    fn within_5s(done: impl Fn() -> bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if done() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        done()
    }

    fn read_procs(dir: &Path) -> String {
        std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default()
    }

    #[test]
    fn leaves_are_named_after_the_runtime_and_their_kill_ends_a_setsid_daemon() {
        let Some(p) = Private::new() else { return };
        let tree = Tree::at(&p.base).unwrap();
        let name = tree
            .parent
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert_eq!(
            name,
            format!(
                "toolbind-{}-{}",
                std::process::id(),
                super::super::own_start()
            )
        );
        let leaf = tree.track().unwrap();
        assert_eq!(leaf.dir().parent(), Some(tree.parent.as_path()));
        assert!(
            leaf.dir()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("call-")
        );
        let daemon = daemon_in(&leaf.procs);
        assert!(read_procs(leaf.dir()).contains(&daemon.to_string()));
        assert!(populated(leaf.dir()));
        let dir = leaf.dir().to_path_buf();
        drop(leaf);
        assert!(within_5s(|| !alive(daemon)), "the daemon outlived its leaf");
        assert!(within_5s(|| !dir.exists()), "the leaf was not removed");
        drop(tree);
        assert!(
            !p.base.join(&name).exists(),
            "the runtime's folder was left"
        );
    }

    #[test]
    fn a_dead_runtimes_folder_is_swept_with_its_daemon_and_another_uids_left_alone() {
        let Some(p) = Private::new() else { return };
        // A runtime that died: no process 4194304999 (above any pid_max).
        let dead = p.base.join("toolbind-4194304999-1");
        std::fs::create_dir_all(dead.join("call-0")).unwrap();
        let procs = open_write(&dead.join("call-0/cgroup.procs")).unwrap();
        let daemon = daemon_in(&procs);
        // Another uid's folder with a dead runtime's name: not ours to touch.
        let planted = p.base.join("toolbind-4194304998-1");
        std::fs::create_dir(&planted).unwrap();
        std::os::unix::fs::chown(&planted, Some(65534), Some(65534)).unwrap();
        // This very process's name is alive, and other names are no runtime's.
        let other = p.base.join("not-toolbind");
        std::fs::create_dir(&other).unwrap();

        let tree = Tree::at(&p.base).unwrap();
        assert!(
            !alive(daemon),
            "the dead runtime's daemon survived the sweep"
        );
        assert!(!dead.exists(), "the dead runtime's folder was left");
        assert!(planted.exists() && other.exists());
        drop(tree);
    }

    /// A tree whose runtime folder exists, as after its first leaf.
    fn made(base: &Path) -> Tree {
        let tree = Tree::at(base).unwrap();
        tree.remake_parent().unwrap();
        tree
    }

    #[test]
    fn a_probe_leaves_no_folder_and_the_first_leaf_makes_it_again() {
        let Some(p) = Private::new() else { return };
        let tree = Tree::at(&p.base).unwrap();
        assert!(
            within_5s(|| !tree.parent.exists()),
            "the probe left {}",
            tree.parent.display()
        );
        let leaf = tree.track().expect("the runtime's folder made again");
        assert!(leaf.dir().starts_with(&tree.parent));
        let daemon = daemon_in(&leaf.procs);
        drop(leaf);
        assert!(within_5s(|| !alive(daemon)));
    }

    #[test]
    fn a_leaf_holding_a_nested_runtimes_cgroups_is_removed_with_them() {
        let Some(p) = Private::new() else { return };
        let tree = made(&p.base);
        let leaf = tree.track().unwrap();
        // An unjailed tool that runs a runtime of its own: its folders inside the leaf.
        let nested = leaf.dir().join("toolbind-1-1").join("call-0");
        std::fs::create_dir_all(&nested).unwrap();
        let procs: OwnedFd = open_write(&nested.join("cgroup.procs")).unwrap();
        let daemon = daemon_in(&procs);
        let dir = leaf.dir().to_path_buf();
        drop(leaf);
        assert!(within_5s(|| !alive(daemon)), "the nested daemon lived on");
        assert!(
            within_5s(|| !dir.exists()),
            "{} was left behind",
            dir.display()
        );
    }

    #[test]
    fn taken_leaf_names_are_skipped_and_never_written() {
        let Some(p) = Private::new() else { return };
        let tree = made(&p.base);
        let next = tree.seq.load(Ordering::Relaxed);
        // One planted by another uid, one that merely exists.
        let planted = tree.parent.join(format!("call-{next}"));
        std::fs::create_dir(&planted).unwrap();
        std::os::unix::fs::chown(&planted, Some(65534), Some(65534)).unwrap();
        std::fs::create_dir(tree.parent.join(format!("call-{}", next + 1))).unwrap();
        let leaf = tree.track().unwrap();
        assert_eq!(
            leaf.dir(),
            tree.parent.join(format!("call-{}", next + 2)).as_path()
        );
        let daemon = daemon_in(&leaf.procs);
        assert_eq!(
            read_procs(&planted),
            "",
            "a process went into the planted leaf"
        );
        assert_eq!(std::fs::metadata(&planted).unwrap().uid(), 65534);
        drop(leaf);
        assert!(within_5s(|| !alive(daemon)));
        // The planted leaf is not removed: nothing of another uid's is.
        drop(tree);
        assert!(planted.exists());
    }

    #[test]
    fn a_runtime_folder_planted_or_a_base_of_another_uid_is_refused() {
        let Some(p) = Private::new() else { return };
        let mine = p.base.join(format!(
            "toolbind-{}-{}",
            std::process::id(),
            super::super::own_start()
        ));
        std::fs::create_dir(&mine).unwrap();
        let e = Tree::at(&p.base)
            .err()
            .expect("a planted runtime folder was used");
        assert!(e.why.contains("already exists"), "{}", e.why);
        std::fs::remove_dir(&mine).unwrap();

        let foreign = p.base.join("foreign");
        std::fs::create_dir(&foreign).unwrap();
        std::os::unix::fs::chown(&foreign, Some(65534), Some(65534)).unwrap();
        let e = Tree::at(&foreign)
            .err()
            .expect("another uid's base was used");
        assert!(
            e.why.contains("owned by uid 65534, not delegated to uid 0"),
            "{}",
            e.why
        );
        assert_eq!(
            std::fs::read_dir(&foreign)
                .unwrap()
                .flatten()
                .filter(|e| e.path().is_dir())
                .count(),
            0
        );
    }

    #[test]
    fn max_descendants_reached_is_a_clear_error_and_the_limit_lifted_works_again() {
        let Some(p) = Private::new() else { return };
        let tree = made(&p.base);
        std::fs::write(tree.parent.join("cgroup.max.descendants"), "0").unwrap();
        let e = tree
            .track()
            .err()
            .expect("a leaf past cgroup.max.descendants");
        assert!(e.why.contains("cgroup.max.descendants"), "{}", e.why);
        std::fs::write(tree.parent.join("cgroup.max.descendants"), "max").unwrap();
        let leaf = tree.track().unwrap();
        let daemon = daemon_in(&leaf.procs);
        drop(leaf);
        assert!(within_5s(|| !alive(daemon)));
    }

    #[test]
    fn a_runtime_folder_removed_mid_run_is_made_again_and_a_removed_base_is_named() {
        let Some(p) = Private::new() else { return };
        let tree = made(&p.base);
        std::fs::remove_dir(&tree.parent).unwrap();
        let leaf = tree.track().expect("the runtime's folder made again");
        let daemon = daemon_in(&leaf.procs);
        drop(leaf);
        assert!(within_5s(|| !alive(daemon)));
        assert!(within_5s(|| std::fs::remove_dir(&tree.parent).is_ok()));
        std::fs::remove_dir(&p.base).unwrap();
        let e = tree.track().err().expect("a leaf in a removed base");
        assert!(
            e.why.contains("base cgroup") && e.why.contains("was removed"),
            "{}",
            e.why
        );
        // For Private's drop.
        std::fs::create_dir(&p.base).unwrap();
    }

    #[test]
    fn a_leaf_that_rmdir_refuses_is_retried_and_its_processes_still_die() {
        let Some(p) = Private::new() else { return };
        let tree = Tree::at(&p.base).unwrap();
        let leaf = tree.track().unwrap();
        // Cgroups below the leaf make rmdir say EBUSY; folders below it are removed with it
        // (see the nested runtime's test), but only so deep: a chain deeper than that
        // stands for any folder that will not go yet.
        let chain: Vec<PathBuf> = (1..=24)
            .map(|n| (0..n).fold(leaf.dir().to_path_buf(), |p, _| p.join("d")))
            .collect();
        std::fs::create_dir_all(chain.last().unwrap()).unwrap();
        let procs = open_write(&chain.last().unwrap().join("cgroup.procs")).unwrap();
        let daemon = daemon_in(&procs);
        let dir = leaf.dir().to_path_buf();
        assert_eq!(
            std::fs::remove_dir(&dir).unwrap_err().raw_os_error(),
            Some(libc::EBUSY)
        );
        drop(leaf);
        assert!(
            within_5s(|| !alive(daemon)),
            "the sub-cgroup's process survived"
        );
        assert!(dir.exists(), "rmdir cannot succeed yet");
        for d in chain.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
        assert!(
            within_5s(|| !dir.exists()),
            "the retry did not remove the leaf"
        );
    }

    #[test]
    fn the_watchdog_ends_the_runtimes_leaves_when_the_runtime_is_gone() {
        let Some(p) = Private::new() else { return };
        let tree = Tree::at(&p.base).unwrap();
        let (a, b) = (tree.track().unwrap(), tree.track().unwrap());
        let daemons = [daemon_in(&a.procs), daemon_in(&b.procs)];
        let (mut watchdog, w) =
            super::super::spawn_watchdog(WATCHDOG, &[tree.parent.as_os_str()]).unwrap();
        // What the runtime's death does: the pipe's write end closes.
        drop(w);
        assert!(within_5s(|| daemons.iter().all(|d| !alive(*d))));
        assert!(watchdog.wait().unwrap().success());
        assert!(
            !tree.parent.exists(),
            "the watchdog left the runtime's folder"
        );
        // The leaves are gone already; their drops find nothing to do.
        std::mem::forget((a, b));
    }
}
