//! A jailed process while it runs and after it ends: its CPU re-arm, the tool's pid and
//! group, and why it ended when the jail ended it.

use super::SandboxLimits;
use super::cgroup::CallCgroup;
use super::jail::Jail;
use super::tmp::PrivateTmp;
use crate::lock::Locked;
use crate::result::{Limit, StopReason};
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A jailed process: for re-arming its CPU limit, signalling the tool inside, and telling
/// a limit from a crash.
pub(crate) struct Running {
    pub(super) bwrap_pid: i32,
    /// The read end of bwrap's `--json-status-fd` pipe.
    pub(super) status: Option<OwnedFd>,
    /// Whether bwrap reported the command's exit, i.e. exec'd it (read once it ended).
    pub(super) exec_seen: OnceLock<bool>,
    pub(super) limits: SandboxLimits,
    pub(super) cgroup: Option<CallCgroup>,
    /// The tool process's host pid, once found.
    pub(super) cpu_base: Mutex<Option<i32>>,
    /// When the CPU limit was last re-armed.
    pub(super) armed: Mutex<Option<Instant>>,
    /// The lighter jail's private temporary folder, removed with this: `Some` means there
    /// is no bwrap, and `bwrap_pid` is the tool's own pid.
    pub(super) light_tmp: Option<PrivateTmp>,
}

fn children(pid: i32) -> Vec<i32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .map(|t| {
            t.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

impl Running {
    /// The host pid of the command bwrap runs (bwrap -> the namespace's init -> command).
    pub(crate) fn tool_pid(&self) -> Option<i32> {
        if self.light_tmp.is_some() {
            return Some(self.bwrap_pid);
        }
        let mut cached = self.cpu_base.locked();
        if let Some(p) = *cached
            && Path::new(&format!("/proc/{p}")).exists()
        {
            return Some(p);
        }
        let init = *children(self.bwrap_pid).first()?;
        let tool = *children(init).first()?;
        *cached = Some(tool);
        Some(tool)
    }

    /// Once the process is reaped: in the lighter jail, which has no PID namespace whose
    /// end takes the rest with it, what the process started (a `setsid` daemon) is killed
    /// through its cgroup now, not when the last holder of this lets go.
    pub(crate) fn end(&self) {
        if self.light_tmp.is_some()
            && let Some(c) = &self.cgroup
        {
            c.kill_now();
        }
    }

    /// The host id of the process group the tool runs in: with `--new-session` bwrap's
    /// init leads a new session and group that the command inherits. A SIGTERM to it
    /// reaches the tool and whatever it started in its group; the init itself ignores it
    /// (a namespace's init only takes signals it handles from outside).
    pub(crate) fn tool_group(&self) -> Option<i32> {
        let pid = self.tool_pid()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let close = stat.rfind(')')?;
        // After the name: state, ppid, pgrp.
        stat[close + 2..].split(' ').nth(2)?.parse().ok()
    }

    /// Gives the next call of a warm worker its own CPU budget: the soft limit becomes what
    /// the process has used so far plus the per-call limit.
    pub(crate) fn rearm_cpu(&self) {
        let Some(cpu) = self.limits.cpu else { return };
        // The soft limit is set 1 s above the budget. Within 1 s / (CPUs) of the last
        // re-arm the process cannot have used that second, so the budget still stands:
        // skipping keeps the /proc read and prlimit off a busy worker's hot path.
        static CPUS: OnceLock<u32> = OnceLock::new();
        let cpus = *CPUS
            .get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
        if self
            .armed
            .locked()
            .is_some_and(|t| t.elapsed() < Duration::from_secs(1) / cpus.max(1))
        {
            return;
        }
        let Some(pid) = self.tool_pid() else { return };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return;
        };
        let Some(close) = stat.rfind(')') else { return };
        let fields: Vec<&str> = stat[close + 2..].split(' ').collect();
        // utime and stime are fields 14 and 15 of stat (11 and 12 after the name).
        let ticks: u64 = [11, 12]
            .iter()
            .filter_map(|i| fields.get(*i).and_then(|f| f.parse::<u64>().ok()))
            .sum();
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
        let soft = ticks / hz + 1 + cpu.as_secs().max(1);
        // The hard limit stays unlimited (see `Jail::warm`): raising it again would need
        // CAP_SYS_RESOURCE, which a container's root often lacks.
        let new = libc::rlimit {
            rlim_cur: soft,
            rlim_max: libc::RLIM_INFINITY,
        };
        // SAFETY: `new` is a valid rlimit; a null old-limit pointer is allowed.
        if unsafe { libc::prlimit(pid, libc::RLIMIT_CPU, &new, std::ptr::null_mut()) } == 0 {
            *self.armed.locked() = Some(Instant::now());
        }
    }

    /// Why the process ended, when the jail ended it: a limit (which one, and how to raise
    /// it) or the jail's own failure, typed and as the message the caller shows. `output`
    /// is the tail of what it printed (or its error message).
    pub(crate) fn explain(
        &self,
        status: Option<ExitStatus>,
        output: &str,
    ) -> Option<(StopReason, String)> {
        let signal = status.and_then(|s| {
            s.signal()
                .or_else(|| s.code().filter(|c| *c > 128 && *c < 192).map(|c| c - 128))
        });
        // bwrap's own failures (a bind source gone, a namespace refused, the interpreter
        // missing inside) end it with status 1 before the command ever runs; what was
        // printed then is bwrap's message. Told by bwrap's status record, not the text: a
        // tool that prints `bwrap: ...` and exits 1 is a tool that failed.
        if status.and_then(|s| s.code()) == Some(1) && !self.command_ran() {
            return Some((
                StopReason::JailFailed,
                format!(
                    "the sandbox could not start the tool: {}",
                    last_words(output, 1000)
                ),
            ));
        }
        if self.cgroup.as_ref().is_some_and(CallCgroup::memory_hit) {
            return Some((
                StopReason::LimitExceeded {
                    limit: Limit::Memory,
                },
                format!(
                    "the tool hit the sandbox's memory limit per call ({} for all its processes together, a memory cgroup); raise it with `--call-memory MIB` or `SandboxLimits::call_memory`",
                    self.limits.call_memory.map_or("unlimited".into(), mib)
                ),
            ));
        }
        let limit = if self.cgroup.as_ref().is_some_and(CallCgroup::pids_hit) {
            Limit::Processes
        } else if signal == Some(libc::SIGXCPU) {
            Limit::CpuTime
        } else if signal == Some(libc::SIGXFSZ) {
            Limit::FileSize
        } else {
            text_limit(output, &self.limits)?
        };
        Some((
            StopReason::LimitExceeded { limit },
            limit_message(limit, &self.limits),
        ))
    }

    /// Whether bwrap exec'd the command: it writes `{ "exit-code": N }` on its status fd
    /// only for a command it exec'd (its setup-finished pipe closed by that exec), and
    /// always before it exits itself. Asked only once bwrap has exited, so everything it
    /// wrote is in the pipe. No status pipe: taken as ran (no failure is blamed on the jail
    /// without its word).
    fn command_ran(&self) -> bool {
        *self.exec_seen.get_or_init(|| {
            let Some(fd) = &self.status else { return true };
            let mut buf = Vec::new();
            let mut chunk = [0u8; 512];
            // Non-blocking: ends at the end of what bwrap wrote (EOF) or at EAGAIN.
            while buf.len() < 8 << 10 {
                match nix::unistd::read(fd, &mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
            buf.split(|b| *b == b'\n').any(|line| {
                serde_json::from_slice::<serde_json::Value>(line)
                    .is_ok_and(|v| v.get("exit-code").is_some())
            })
        })
    }

    /// "exited with code 3", "was killed by signal 9 (SIGKILL)": bwrap reports a command
    /// killed by signal N as exit code 128 + N.
    pub(crate) fn describe(&self, status: ExitStatus) -> String {
        crate::exec::exit::describe_jailed(status)
    }
}

/// The end of `output`, trimmed, at most `max` bytes (cut at a character boundary).
fn last_words(output: &str, max: usize) -> &str {
    let t = output.trim();
    let mut from = t.len().saturating_sub(max);
    while !t.is_char_boundary(from) {
        from += 1;
    }
    &t[from..]
}

/// A limit named by what a tool printed (an error it caught, or its last words).
fn text_limit(output: &str, limits: &SandboxLimits) -> Option<Limit> {
    const MEMORY: &[&str] = &[
        "JavaScript heap out of memory",
        "Array buffer allocation failed",
        "MemoryError",
        "xmalloc: cannot allocate",
        "Cannot allocate memory",
        "std::bad_alloc",
        "Out of memory",
    ];
    const PROCESSES: &[&str] = &[
        "fork: retry",
        "fork: Resource temporarily unavailable",
        "BlockingIOError: [Errno 11]",
        "spawn EAGAIN",
    ];
    const FILE_SIZE: &[&str] = &["File too large", "EFBIG", "File size limit exceeded"];
    if limits.memory.is_some() && MEMORY.iter().any(|m| output.contains(m)) {
        return Some(Limit::Memory);
    }
    if limits.file_size.is_some() && FILE_SIZE.iter().any(|m| output.contains(m)) {
        return Some(Limit::FileSize);
    }
    if limits.processes.is_some() && PROCESSES.iter().any(|m| output.contains(m)) {
        return Some(Limit::Processes);
    }
    None
}

fn mib(b: u64) -> String {
    format!("{} MiB", b >> 20)
}

fn limit_message(which: Limit, l: &SandboxLimits) -> String {
    match which {
        Limit::Memory => format!(
            "the tool hit the sandbox's memory limit ({} per process, RLIMIT_DATA); raise it with `--memory MIB` or `SandboxLimits::memory`",
            l.memory.map_or("unlimited".into(), mib)
        ),
        Limit::CpuTime => format!(
            "the tool hit the sandbox's CPU time limit ({} s per call, RLIMIT_CPU); raise it with `--cpu SECS` or `SandboxLimits::cpu`",
            l.cpu.map_or(0, |c| c.as_secs())
        ),
        Limit::FileSize => format!(
            "the tool hit the sandbox's file size limit ({}, RLIMIT_FSIZE); raise it with `--max-file-size MIB` or `SandboxLimits::file_size`",
            l.file_size.map_or("unlimited".into(), mib)
        ),
        Limit::Processes => format!(
            "the tool hit the sandbox's process limit ({} processes); raise it with `--max-processes N` or `SandboxLimits::processes`",
            l.processes.unwrap_or(0)
        ),
    }
}

impl Jail {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_messages_name_the_limit_and_the_knob() {
        let l = SandboxLimits::default();
        let m = limit_message(
            text_limit("FATAL ERROR: ... JavaScript heap out of memory", &l).unwrap(),
            &l,
        );
        assert!(
            m.contains("memory limit (1024 MiB") && m.contains("--memory"),
            "{m}"
        );
        let m = limit_message(
            text_limit("bash: fork: retry: Resource temporarily unavailable", &l).unwrap(),
            &l,
        );
        assert!(
            m.contains("process limit (256") && m.contains("--max-processes"),
            "{m}"
        );
        assert!(text_limit("TypeError: x is undefined", &l).is_none());
        let none = SandboxLimits::default().memory(None);
        assert!(text_limit("MemoryError", &none).is_none());
    }
}
