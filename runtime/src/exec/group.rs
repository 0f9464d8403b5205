//! The one owner of a spawned process group: the child that leads it, and every signal
//! sent to it.
//!
//! A group's id is its leader's pid. Once the leader is reaped and the group has no other
//! member, the kernel may hand that number to a new process, which may lead a group of its
//! own: a `killpg` sent then reaches a stranger. A zombie leader still holds the number, so
//! the rule "signal only while the leader is unreaped" makes a reused id impossible. This
//! type is where that rule is kept:
//!
//! - [`Group::signal`] sends only while the leader is unreaped, under the same lock that
//!   reaping takes;
//! - [`Group::exited`] waits for the leader's exit *without* reaping it (a pidfd, else
//!   `waitid(WNOWAIT)` polling), so whoever learns of the exit may still signal the group;
//! - reaping ([`Group::wait`], [`Group::status`]) first SIGKILLs what is left of the group
//!   (a script's background jobs, an `npx` server's child), then reaps the leader. Members
//!   that left the group (a daemon's `setsid`) go with the jail's PID namespace or the
//!   unjailed process's tracking cgroup;
//! - dropping an unreaped group SIGKILLs it (tokio reaps the leader later).

use crate::lock::Locked;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::ExitStatus;
use std::sync::Mutex;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::unix::AsyncFd;
use tokio::process::Child;

pub(crate) struct Group {
    pgid: i32,
    leader: Mutex<Leader>,
    /// Readable once the leader has exited (a pidfd); `None` where the kernel has no
    /// `pidfd_open` (before Linux 5.3, or a seccomp filter that refuses it): then polling.
    pidfd: Option<AsyncFd<OwnedFd>>,
}

enum Leader {
    Running(Child),
    /// Reaped, with its status when it could be had.
    Reaped(Option<ExitStatus>),
}

impl Group {
    /// Takes over `child`, which leads a process group of its own (it was spawned in a new
    /// session). Its pipes should be taken out first: they stay with the child.
    pub(crate) fn new(child: Child) -> Group {
        let pgid = child.id().map_or(0, |p| p as i32);
        Group {
            pgid,
            pidfd: pidfd_open(pgid),
            leader: Mutex::new(Leader::Running(child)),
        }
    }

    /// The group's id, for messages and `/proc` reads; never to signal (that is
    /// [`Group::signal`]'s).
    pub(crate) fn id(&self) -> i32 {
        self.pgid
    }

    /// Sends `signal` to every process of the group, if its leader is unreaped (a group
    /// that is gone already is fine). Whether it was sent.
    pub(crate) fn signal(&self, signal: Signal) -> bool {
        let leader = self.lock();
        self.send(&leader, self.pgid, signal)
    }

    /// Sends `signal` to group `inner`, another group of this group's processes (the tool's
    /// own group inside its jail), while this group's leader has not even exited: the
    /// inner group lives inside the leader's PID namespace, which ends with the leader.
    /// This narrows the window but cannot close it: bwrap reaps the namespace's init (the
    /// inner group's leader) a moment before it exits itself.
    pub(crate) fn signal_inner(&self, inner: i32, signal: Signal) -> bool {
        let leader = self.lock();
        !self.leader_exited(&leader) && self.send(&leader, inner, signal)
    }

    fn send(&self, leader: &Leader, pgid: i32, signal: Signal) -> bool {
        matches!(leader, Leader::Running(_))
            && pgid > 1
            && killpg(Pid::from_raw(pgid), signal).is_ok()
    }

    /// Waits until the leader has exited, leaving it unreaped: the group can still be
    /// signalled safely. Cancel-safe, and ready at once every time after.
    pub(crate) async fn exited(&self) {
        if let Some(fd) = &self.pidfd {
            // A pidfd stays readable once its process has exited: the readiness is never
            // cleared, so every later call returns at once.
            if fd.readable().await.is_ok() {
                return;
            }
        }
        let mut pause = Duration::from_millis(1);
        loop {
            if self.leader_exited(&self.lock()) {
                return;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    /// Waits for the leader to exit, then ends what is left of its group and reaps it: its
    /// exit status, when it could be had.
    pub(crate) async fn wait(&self) -> Option<ExitStatus> {
        loop {
            self.exited().await;
            if let Some(status) = self.status() {
                return status;
            }
            // A pidfd that woke without an exit (it cannot, but a poll loop must not spin).
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// `Some` once the leader has exited: what is left of its group is SIGKILLed and the
    /// leader reaped (at the first call), then its status (`None` when it could not be
    /// had). `None` while it runs.
    pub(crate) fn status(&self) -> Option<Option<ExitStatus>> {
        let mut leader = self.lock();
        if let Leader::Reaped(status) = &*leader {
            return Some(*status);
        }
        if !self.leader_exited(&leader) {
            return None;
        }
        // The zombie leader still holds the id: the signal cannot reach a stranger.
        self.send(&leader, self.pgid, Signal::SIGKILL);
        let status = match &mut *leader {
            Leader::Running(child) => child.try_wait().ok().flatten(),
            Leader::Reaped(s) => *s,
        };
        *leader = Leader::Reaped(status);
        Some(status)
    }

    /// Whether the leader has exited (a zombie, or reaped), without reaping it: one
    /// `waitid(WNOWAIT)`, exact at once (the pidfd's readiness lags the exit until the
    /// reactor runs, and a task out of its cooperative budget would read it as pending).
    fn leader_exited(&self, leader: &Leader) -> bool {
        match leader {
            Leader::Reaped(_) => true,
            Leader::Running(_) => {
                // SAFETY: an all-zero siginfo_t is a valid value for waitid to fill.
                let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
                // SAFETY: `info` is a valid siginfo_t; WNOWAIT leaves the child unreaped.
                let r = unsafe {
                    libc::waitid(
                        libc::P_PID,
                        self.pgid as libc::id_t,
                        &mut info,
                        libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
                    )
                };
                // ECHILD: someone else reaped it (it cannot be signalled either way).
                // SAFETY: waitid filled `info` (si_pid 0: no child has exited).
                r < 0 || unsafe { info.si_pid() } != 0
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Leader> {
        self.leader.locked()
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // The child's own kill-on-drop reaches the leader only; its group goes here.
        self.signal(Signal::SIGKILL);
    }
}

/// A pidfd for `pid`, registered with the reactor (outside a runtime: none).
fn pidfd_open(pid: i32) -> Option<AsyncFd<OwnedFd>> {
    if pid <= 1 || tokio::runtime::Handle::try_current().is_err() {
        return None;
    }
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::c_long, 0 as libc::c_long) };
    if fd < 0 {
        return None;
    }
    // SAFETY: the syscall returned a new descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    // SAFETY: the AsyncFd owns `fd`, an OwnedFd, so it stays open and the same for the
    // AsyncFd's whole life.
    unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }.ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt as _;

    fn spawn(script: &str) -> Group {
        let mut cmd = tokio::process::Command::new("bash");
        cmd.args(["-c", script]).kill_on_drop(true);
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            cmd.as_std_mut().pre_exec(|| {
                nix::unistd::setsid().map_err(std::io::Error::from)?;
                Ok(())
            });
        }
        Group::new(cmd.spawn().expect("bash spawns"))
    }

    #[tokio::test]
    async fn without_a_pidfd_the_exit_is_polled_for() {
        let mut group = spawn("sleep 0.05; exit 4");
        group.pidfd = None;
        group.exited().await;
        assert!(
            group.signal(Signal::SIGCONT),
            "still unreaped after the wait"
        );
        assert_eq!(group.wait().await.and_then(|s| s.code()), Some(4));
    }

    fn alive(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.rsplit(')').next().is_some_and(|r| !r.starts_with(" Z")))
    }

    #[tokio::test]
    async fn an_exited_leader_stays_a_zombie_until_reaped_and_its_group_can_be_signalled() {
        let group = spawn("exit 3");
        group.exited().await;
        // Unreaped: its id is held, so signalling is still allowed.
        assert!(std::path::Path::new(&format!("/proc/{}", group.id())).exists());
        assert!(group.signal(Signal::SIGCONT));
        assert_eq!(group.wait().await.and_then(|s| s.code()), Some(3));
        // Reaped: never again.
        assert!(!group.signal(Signal::SIGCONT));
        assert!(!std::path::Path::new(&format!("/proc/{}", group.id())).exists());
    }

    #[tokio::test]
    async fn reaping_kills_what_the_leader_left_in_its_group() {
        let group = spawn("sleep 60 & exit 0");
        group.exited().await;
        // The background job: the one other member of the group.
        let members = members(group.id());
        assert_eq!(members.len(), 1, "the background sleep is in the group");
        let job = members[0];
        assert!(alive(job));
        assert_eq!(group.wait().await.and_then(|s| s.code()), Some(0));
        // SIGKILLed before the leader was reaped; give the kernel a moment to finish it.
        gone(job, "the job outlived its group").await;
    }

    #[tokio::test]
    async fn status_is_none_while_running_and_a_drop_kills_the_whole_group() {
        let group = spawn("sleep 60 & wait");
        assert!(group.status().is_none());
        // The background sleep: the child's own kill-on-drop would never reach it.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let job = loop {
            if let Some(job) = members(group.id()).first() {
                break *job;
            }
            assert!(std::time::Instant::now() < deadline, "no background job");
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        drop(group);
        gone(job, "the group outlived its owner").await;
    }

    /// Waits (30 s at most, then fails saying `what`) until `pid` is dead.
    async fn gone(pid: i32, what: &str) {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while alive(pid) {
            assert!(std::time::Instant::now() < deadline, "{what}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    #[tokio::test]
    async fn the_exit_is_exact_at_once_and_inner_groups_are_not_signalled_after_it() {
        let group = spawn("exit 0");
        group.exited().await;
        // Many looks in one poll: none may depend on a task's budget.
        for _ in 0..1000 {
            assert!(group.leader_exited(&group.lock()));
        }
        assert!(!group.signal_inner(group.id(), Signal::SIGCONT));
        assert!(
            group.signal(Signal::SIGCONT),
            "the zombie still holds the id"
        );
        group.wait().await;
    }

    /// The pids of group `pgid` other than its leader.
    fn members(pgid: i32) -> Vec<i32> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .filter(|p: &i32| {
                *p != pgid
                    && std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                        s.rsplit(')')
                            .next()
                            .and_then(|r| r.split(' ').nth(3))
                            .and_then(|g| g.parse::<i32>().ok())
                            == Some(pgid)
                    })
            })
            .collect()
    }
}
