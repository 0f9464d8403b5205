//! Spawning a tool process: its own process group, a scrubbed environment, the control
//! socket on fd 3, bounded capture of its output, and killing the whole group.

use std::collections::VecDeque;
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use nix::sys::resource::{Resource, setrlimit};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::net::UnixStream;
use tokio::process::{ChildStderr, ChildStdin, ChildStdout, Command};

use super::ExecConfig;
use super::error::{SpawnError, SpawnStep};
pub(crate) use super::exit::describe_exit;
use super::group::Group;
use super::sandbox::{CallCgroup, Jail, LightChild, Running};
use crate::executor::{LogSink, MAX_LOG_LINE_BYTES};
use toolbind_codegen::model::ToolSpec;

/// Variables every tool sees when the agent has them.
pub(crate) const BASE_ENV: [&str; 7] = ["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ", "USER"];

/// What to connect the child's stdin and stdout to.
pub(crate) enum Stdout {
    /// fd 1 is a duplicate of fd 2: whatever the tool prints goes to the stderr capture and
    /// can never reach the protocol channel.
    ToStderr,
    /// fd 1 is its own pipe (bash: stdout is the result).
    Piped,
}

/// What the child's stdin and stdout connect to, and the variables its one call adds to
/// the scrubbed environment (a trace context).
pub(crate) struct Io<'a> {
    pub stdin: bool,
    pub stdout: Stdout,
    pub env: &'a [(&'a str, &'a str)],
}

pub(crate) struct Spawned {
    /// The process and its group: the one way to signal or reap it.
    pub group: Arc<Group>,
    pub stdin: Option<ChildStdin>,
    pub stdout: Option<ChildStdout>,
    pub stderr: Option<ChildStderr>,
    /// The runtime's end of the fd 3 socket.
    pub control: UnixStream,
    /// The jail the process runs in, when it runs in one.
    pub jail: Option<Running>,
    /// An unjailed process's tracking cgroup, where one can be made: dropping it kills
    /// everything the process started, daemons that left its group included.
    pub tracker: Option<CallCgroup>,
}

/// Spawns `program args` for `tool` in a new session (so a new process group whose id is
/// the child's pid), with fd 3 connected to the returned socket. With a `jail`, the process
/// is bwrap running the interpreter inside it (see `sandbox`).
///
/// Over 100 lines on purpose: every descriptor the child gets is made here, handed to
/// [`ChildSetup`], and the parent's copy dropped right after the spawn; one function keeps
/// each descriptor's whole life in view (a copy kept open would hold a pipe or the control
/// socket open for as long as the tool runs).
pub(crate) fn spawn(
    program: &str,
    args: &[&std::ffi::OsStr],
    tool: &ToolSpec,
    config: &ExecConfig,
    io: Io<'_>,
    jail: Option<Jail>,
) -> Result<Spawned, SpawnError> {
    let Io {
        stdin,
        stdout,
        env: extra,
    } = io;
    let failed = |step: SpawnStep| move |source: std::io::Error| SpawnError { step, source };
    let (ours, theirs) =
        std::os::unix::net::UnixStream::pair().map_err(failed(SpawnStep::ControlSocket))?;
    ours.set_nonblocking(true)
        .map_err(failed(SpawnStep::ControlSocket))?;
    let theirs: OwnedFd = theirs.into();
    let theirs_raw = theirs.as_raw_fd();

    let mut env = environment(tool, config);
    for (k, v) in extra {
        env.retain(|(n, _)| n != k);
        env.push(((*k).to_owned(), (*v).into()));
    }
    let light = jail.as_ref().and_then(|j| j.light.as_ref());
    if let Some(j) = &jail {
        for (k, v) in &j.env {
            // The runtime owner's explicit `env_set` wins over the jail's defaults.
            if config.env_set.iter().any(|(n, _)| n == k) {
                continue;
            }
            env.retain(|(n, _)| n != k);
            env.push((k.clone(), v.clone()));
        }
    }
    let bwrap = jail.as_ref().filter(|j| j.light.is_none());
    let mut cmd = match (&jail, light) {
        (None, _) => {
            let mut cmd = Command::new(program);
            cmd.args(args);
            cmd
        }
        // The lighter jail: the interpreter itself, restricted by the child (`ChildSetup`).
        (Some(j), Some(l)) => {
            let mut cmd = Command::new(&j.exe);
            cmd.args(args).current_dir(&l.cwd);
            cmd
        }
        (Some(j), None) => {
            // bwrap's options travel on fd 4, not in argv; its status (whether the command
            // was ever exec'd) comes back on fd 5; the command follows `--`.
            let mut cmd = Command::new(&j.bwrap);
            cmd.args(["--args", "4", "--json-status-fd", "5", "--"])
                .arg(&j.exe)
                .args(args);
            cmd
        }
    };
    // The options pipe: read end for the child (moved above fd 9, so that placing it on
    // fd 4 cannot clobber fd 3), written in full before the child runs. A jailed
    // process's environment travels there too (`--clearenv`, then `--setenv NAME VALUE`):
    // bwrap itself runs on the host with none of it (a config's `LD_PRELOAD` would load
    // code into bwrap before any namespace exists), and no value reaches an argv.
    let options_fd: Option<OwnedFd> = match bwrap {
        None => None,
        Some(j) => Some(options_pipe(&jail_options(&j.options, &env)?)?),
    };
    let options_raw = options_fd.as_ref().map_or(-1, |f| f.as_raw_fd());
    // bwrap's seccomp program (`--seccomp 6`), a pipe like the options'.
    let seccomp_fd: Option<OwnedFd> = match bwrap.and_then(|j| j.seccomp) {
        None => None,
        Some(p) => Some(options_pipe(&p.bytes())?),
    };
    let seccomp_raw = seccomp_fd.as_ref().map_or(-1, |f| f.as_raw_fd());
    // bwrap's status pipe: the write end for the child (on fd 5), the read end kept.
    let (status_read, status_write) = match bwrap {
        None => (None, None),
        Some(_) => {
            let (r, w) = status_pipe()?;
            (Some(r), Some(w))
        }
    };
    let status_raw = status_write.as_ref().map_or(-1, |f| f.as_raw_fd());
    let tracker = if jail.is_none() {
        CallCgroup::track()
    } else {
        None
    };
    let procs = match (&jail, &tracker) {
        (Some(j), _) => j.procs_fds(),
        (None, Some(t)) => t.procs_fds(),
        (None, None) => [-1, -1],
    };
    let rlimits = jail.as_ref().map(|j| j.rlimits()).unwrap_or_default();
    cmd.env_clear();
    if bwrap.is_none() {
        cmd.envs(env);
    }
    cmd.stdin(if stdin { Stdio::piped() } else { Stdio::null() })
        .stdout(match stdout {
            Stdout::ToStderr => Stdio::null(),
            Stdout::Piped => Stdio::piped(),
        })
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let (Some(cwd), None) = (&config.cwd, &jail) {
        cmd.current_dir(cwd);
    }
    let setup = ChildSetup {
        // The lighter jail has no bwrap to die with the runtime either.
        unjailed: bwrap.is_none(),
        light: light.map(|l| l.child()),
        seccomp: seccomp_raw,
        // SAFETY: getpid cannot fail.
        parent: unsafe { libc::getpid() },
        procs,
        dup_stdout: matches!(stdout, Stdout::ToStderr),
        control: theirs_raw,
        options: options_raw,
        status: status_raw,
        rlimits,
    };
    // SAFETY: `ChildSetup::run` runs in the forked child before exec and only makes
    // async-signal-safe system calls; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || setup.run());
    }
    let step = match (&jail, light) {
        (None, _) => SpawnStep::Exec(program.to_owned()),
        (Some(j), Some(_)) => SpawnStep::LightJail(j.exe.display().to_string()),
        (Some(j), None) => SpawnStep::Exec(j.bwrap.display().to_string()),
    };
    let mut child = cmd.spawn().map_err(failed(step))?;
    drop(theirs);
    drop(options_fd);
    drop(seccomp_fd);
    drop(status_write);
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let group = Arc::new(Group::new(child));
    let jail = jail.map(|j| j.running(group.id(), status_read));
    let control = UnixStream::from_std(ours).map_err(failed(SpawnStep::RegisterSocket))?;
    Ok(Spawned {
        group,
        stdin,
        stdout,
        stderr,
        control,
        jail,
        tracker,
    })
}

/// bwrap's options for a jail: `options`, then the jailed program's whole environment
/// (`--clearenv`, `--setenv NAME VALUE` each), NUL-separated. A NUL in a name or value
/// (possible in a config's JSON) would split it into options of bwrap's own: refused, as
/// is a name holding `=`.
fn jail_options(
    options: &[u8],
    env: &[(String, std::ffi::OsString)],
) -> Result<Vec<u8>, SpawnError> {
    use std::os::unix::ffi::OsStrExt;
    let mut out = options.to_vec();
    out.extend_from_slice(b"--clearenv\0");
    for (k, v) in env {
        let v = v.as_bytes();
        if k.is_empty() || k.contains(['\0', '=']) || v.contains(&0) {
            return Err(SpawnError {
                step: SpawnStep::OptionsPipe,
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!(
                        "the environment variable {k:?} has an empty name, a NUL byte or `=` in its name, or a NUL byte in its value"
                    ),
                ),
            });
        }
        out.extend_from_slice(b"--setenv\0");
        out.extend_from_slice(k.as_bytes());
        out.push(0);
        out.extend_from_slice(v);
        out.push(0);
    }
    Ok(out)
}

/// A pipe holding `bytes`, closed for writing; its read end sits above fd 9.
fn options_pipe(bytes: &[u8]) -> Result<OwnedFd, SpawnError> {
    use std::io::Write;
    let err = |source: std::io::Error| SpawnError {
        step: SpawnStep::OptionsPipe,
        source,
    };
    // Close-on-exec from the start: a tool spawned meanwhile on another thread must not
    // inherit the write end, or bwrap would wait for an end of file that never comes.
    let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| err(e.into()))?;
    let r = nix::fcntl::fcntl(&r, nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(10))
        .map_err(|e| err(e.into()))?;
    // SAFETY: F_DUPFD_CLOEXEC returned a new descriptor that nothing else owns.
    let r = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(r) };
    let mut w = std::fs::File::from(w);
    if bytes.len() < 60 << 10 {
        // Fits in the pipe's buffer: no reader needed yet.
        w.write_all(bytes).map_err(err)?;
    } else {
        let bytes = bytes.to_vec();
        std::thread::spawn(move || {
            let _ = w.write_all(&bytes);
        });
    }
    Ok(r)
}

/// What the forked child does before exec, with the raw descriptors it needs (`-1`: none).
struct ChildSetup {
    /// Not in bwrap (unjailed, or the lighter jail): dies with the runtime by itself.
    unjailed: bool,
    /// The lighter jail's restrictions, applied last.
    light: Option<LightChild>,
    /// bwrap's seccomp program (fd 6).
    seccomp: i32,
    /// The runtime's pid, to notice it died before `PR_SET_PDEATHSIG` was set.
    parent: i32,
    /// `cgroup.procs` of the cgroups to join (v1: pids and memory; v2: one leaf).
    procs: [i32; 2],
    /// stdout goes to stderr.
    dup_stdout: bool,
    /// The tool's end of the control socket, for fd 3.
    control: i32,
    /// bwrap's options pipe (fd 4) and status pipe (fd 5): set for a jail only.
    options: i32,
    status: i32,
    rlimits: Vec<(Resource, u64, u64)>,
}

impl ChildSetup {
    /// A new session; unjailed or in the lighter jail, death with the runtime; the cgroups
    /// joined; fds 1, 3, 4, 5 and 6 in place; the jail's limits; last, the lighter jail's
    /// restrictions. Async-signal-safe system calls only (setsid, dup2, fcntl, prctl,
    /// getppid, setrlimit, the `write` that joins a cgroup, close_range, capset,
    /// landlock_restrict_self, seccomp).
    fn run(&self) -> std::io::Result<()> {
        let os_error = std::io::Error::last_os_error;
        if libc_setsid() < 0 {
            return Err(os_error());
        }
        // Unjailed, the tool dies with the runtime (bwrap's --die-with-parent does this for
        // a jail), even when the runtime is SIGKILLed.
        if self.unjailed {
            // SAFETY: prctl(PR_SET_PDEATHSIG) only sets this process's flag.
            if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) } < 0 {
                return Err(os_error());
            }
            // SAFETY: getppid has no preconditions.
            if unsafe { libc::getppid() } != self.parent {
                // The runtime died before the flag was set.
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
        }
        // Before the dup2s below, which may reuse the cgroup file's descriptor number.
        for procs in self.procs {
            if procs >= 0 {
                join_cgroup(procs)?;
            }
        }
        if self.dup_stdout && libc_dup2(2, 1) < 0 {
            return Err(os_error());
        }
        if self.control == 3 {
            // dup2(3, 3) would keep FD_CLOEXEC.
            if libc_clear_cloexec(3) < 0 {
                return Err(os_error());
            }
        } else if libc_dup2(self.control, 3) < 0 {
            return Err(os_error());
        }
        if self.options >= 0 {
            if libc_dup2(self.options, 4) < 0 || libc_dup2(self.status, 5) < 0 {
                return Err(os_error());
            }
            if self.seccomp >= 0 && libc_dup2(self.seccomp, 6) < 0 {
                return Err(os_error());
            }
            jail_child(&self.rlimits, if self.seccomp >= 0 { 7 } else { 6 })?;
        }
        if let Some(light) = &self.light {
            jail_child(&self.rlimits, 4)?;
            light.apply()?;
        }
        Ok(())
    }
}

/// A pipe for bwrap's `--json-status-fd`: the read end (non-blocking, read once bwrap has
/// exited) and the write end, both close-on-exec and above fd 9 so that placing the write
/// end on fd 5 in the child clobbers nothing.
fn status_pipe() -> Result<(OwnedFd, OwnedFd), SpawnError> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    let err = |e: nix::Error| SpawnError {
        step: SpawnStep::StatusPipe,
        source: e.into(),
    };
    let (r, w) = nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK).map_err(err)?;
    let w = fcntl(&w, FcntlArg::F_DUPFD_CLOEXEC(10)).map_err(err)?;
    // SAFETY: F_DUPFD_CLOEXEC returned a new descriptor that nothing else owns.
    let w = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(w) };
    // The write end must block for bwrap (it writes a line or two, far below a pipe's
    // buffer, but a failed write would lose the record).
    nix::fcntl::fcntl(&w, FcntlArg::F_SETFL(OFlag::empty())).map_err(err)?;
    Ok((r, w))
}

/// In the forked child: move this process (soon bwrap, or an unjailed tool) into the call's
/// cgroup, so every process it starts counts and ends with it. Async-signal-safe.
fn join_cgroup(procs_fd: i32) -> std::io::Result<()> {
    // SAFETY: writes one byte from a static buffer to an open descriptor.
    if unsafe { libc::write(procs_fd, b"0".as_ptr().cast(), 1) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// In the forked child, before bwrap (or the lighter jail's interpreter) execs: set the
/// jail's limits and let no descriptor from `first` up reach the jail. Async-signal-safe
/// system calls only.
fn jail_child(rlimits: &[(Resource, u64, u64)], first: u32) -> std::io::Result<()> {
    for &(resource, soft, hard) in rlimits {
        // nix's setrlimit is a plain libc::setrlimit call (no allocation), and takes the
        // resource in whatever type this target's libc wants (glibc's is not musl's).
        setrlimit(resource, soft, hard)?;
    }
    // Close-on-exec, not closed: std's own exec-error pipe must stay usable. Descriptors
    // leaked *into* this process thus stop here.
    // SAFETY: close_range with CLOSE_RANGE_CLOEXEC only changes descriptor flags.
    unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        );
    }
    Ok(())
}

fn libc_setsid() -> i32 {
    match nix::unistd::setsid() {
        Ok(_) => 0,
        Err(_) => -1,
    }
}

fn libc_dup2(from: i32, to: i32) -> i32 {
    // SAFETY: `to` is a descriptor number the child owns after exec; nothing in this process
    // (a forked child about to exec) holds an `OwnedFd` for it, so forgetting the returned
    // handle is what keeps it open.
    let from = unsafe { std::os::fd::BorrowedFd::borrow_raw(from) };
    match unsafe { nix::unistd::dup2_raw(from, to) } {
        Ok(fd) => {
            std::mem::forget(fd);
            0
        }
        Err(_) => -1,
    }
}

fn libc_clear_cloexec(fd: i32) -> i32 {
    use nix::fcntl::{FcntlArg, FdFlag, fcntl};
    // SAFETY: fd 3 is open (it is the control socket) for the duration of the call.
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    match fcntl(fd, FcntlArg::F_SETFD(FdFlag::empty())) {
        Ok(_) => 0,
        Err(_) => -1,
    }
}

/// The scrubbed environment of a tool process.
pub(crate) fn environment(
    tool: &ToolSpec,
    config: &ExecConfig,
) -> Vec<(String, std::ffi::OsString)> {
    let mut out: Vec<(String, std::ffi::OsString)> = Vec::new();
    let names = BASE_ENV
        .iter()
        .map(|s| s.to_string())
        .chain(config.env_allow.iter().cloned())
        .chain(tool.env.iter().cloned());
    for name in names {
        if out.iter().any(|(n, _)| *n == name) {
            continue;
        }
        if let Some(v) = std::env::var_os(&name) {
            out.push((name, v));
        }
    }
    for (k, v) in &config.env_set {
        out.retain(|(n, _)| n != k);
        out.push((k.clone(), v.into()));
    }
    out.push(("TOOL_DIR".into(), tool.dir.clone().into_os_string()));
    out
}

/// A bounded record of a byte stream: the first `head` bytes and the last `tail` bytes.
#[derive(Debug, Default)]
pub(crate) struct Capture {
    head: Vec<u8>,
    head_cap: usize,
    tail: VecDeque<u8>,
    tail_cap: usize,
    total: u64,
}

impl Capture {
    pub(crate) fn new(head_cap: usize, tail_cap: usize) -> Self {
        Capture {
            head: Vec::new(),
            head_cap,
            tail: VecDeque::new(),
            tail_cap,
            total: 0,
        }
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.head_cap - self.head.len();
        let n = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..n]);
        bytes = &bytes[n..];
        if self.tail_cap == 0 || bytes.is_empty() {
            return;
        }
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.tail_cap..]);
        } else {
            let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
            self.tail.drain(..overflow);
            self.tail.extend(bytes);
        }
    }

    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The kept text; a note marks the omitted middle when a tail is kept. The cuts fall on
    /// character boundaries: a multi-byte character split by the byte limit is dropped
    /// rather than turned into U+FFFD.
    pub(crate) fn render(&self) -> String {
        let head = match std::str::from_utf8(&self.head) {
            Ok(s) => s.into(),
            // Only an incomplete character at the very end: cut before it.
            Err(e) if e.error_len().is_none() => {
                String::from_utf8_lossy(&self.head[..e.valid_up_to()])
            }
            Err(_) => String::from_utf8_lossy(&self.head),
        };
        let mut out = head.into_owned();
        if self.tail_cap == 0 {
            return out;
        }
        let kept = (self.head.len() + self.tail.len()) as u64;
        let (a, b) = self.tail.as_slices();
        let mut tail = a.to_vec();
        tail.extend_from_slice(b);
        if self.total > kept {
            out.push_str(&format!(
                "\n[... {} bytes omitted ...]\n",
                self.total - kept
            ));
            // The tail may start inside a character: skip its continuation bytes.
            let skip = tail
                .iter()
                .take(3)
                .take_while(|b| (**b & 0xC0) == 0x80)
                .count();
            tail.drain(..skip);
        }
        out.push_str(&String::from_utf8_lossy(&tail));
        out
    }

    /// The last `max` bytes of the kept text (for error messages), with `secrets` redacted
    /// before the cut: a cut made first could leave the end of a secret that no longer
    /// matches.
    pub(crate) fn render_tail(&self, max: usize, secrets: &[String]) -> String {
        let text = redact(&self.render(), secrets);
        let text = text.trim_end();
        if text.len() <= max {
            return text.to_owned();
        }
        let mut start = text.len() - max;
        while !text.is_char_boundary(start) {
            start += 1;
        }
        format!("...{}", &text[start..])
    }
}

/// Reads `reader` to the end into `capture`, holding at most its bounds in memory.
pub(crate) async fn drain(mut reader: impl AsyncRead + Unpin, capture: Arc<Mutex<Capture>>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if let Ok(mut c) = capture.lock() {
                    c.push(&buf[..n]);
                }
            }
        }
    }
}

/// Splits a stream of bytes into lines for a [`LogSink`](crate::executor::LogSink),
/// holding at most [`MAX_LOG_LINE_BYTES`] of an unfinished line: the rest of a longer line
/// is dropped and the line is marked as cut.
#[derive(Default)]
pub(crate) struct LineSplitter {
    partial: Vec<u8>,
    cut: bool,
}

impl LineSplitter {
    /// Feeds `bytes`, calling `emit` with each finished line (without its newline).
    pub(crate) fn push(&mut self, mut bytes: &[u8], emit: &mut impl FnMut(String)) {
        while !bytes.is_empty() {
            let (chunk, rest, done) = match bytes.iter().position(|b| *b == b'\n') {
                Some(i) => (&bytes[..i], &bytes[i + 1..], true),
                None => (bytes, &[][..], false),
            };
            let room = MAX_LOG_LINE_BYTES.saturating_sub(self.partial.len());
            if chunk.len() > room {
                self.partial.extend_from_slice(&chunk[..room]);
                self.cut = true;
            } else {
                self.partial.extend_from_slice(chunk);
            }
            if done {
                self.flush(emit);
            }
            bytes = rest;
        }
    }

    /// Emits what is left of an unfinished last line.
    pub(crate) fn flush(&mut self, emit: &mut impl FnMut(String)) {
        if self.partial.is_empty() && !self.cut {
            return;
        }
        let mut line = String::from_utf8_lossy(&self.partial).into_owned();
        if line.ends_with('\r') {
            line.pop();
        }
        if self.cut {
            line.push_str(&format!(" [line cut at {MAX_LOG_LINE_BYTES} bytes]"));
        }
        self.partial.clear();
        self.cut = false;
        emit(line);
    }
}

/// [`drain`], also handing each line to `log`.
pub(crate) async fn drain_lines(
    mut reader: impl AsyncRead + Unpin,
    capture: Arc<Mutex<Capture>>,
    log: LogSink,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut lines = LineSplitter::default();
    let mut emit = |line: String| log(line);
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if let Ok(mut c) = capture.lock() {
                    c.push(&buf[..n]);
                }
                lines.push(&buf[..n], &mut emit);
            }
        }
    }
    lines.flush(&mut emit);
}

/// Replaces every occurrence of each secret (and its JSON-escaped forms) in `text` with
/// `[REDACTED]`; see [`crate::secret::Redactor`].
pub(crate) fn redact(text: &str, secrets: &[String]) -> String {
    crate::secret::Redactor::new(secrets).text(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_split_and_bounded() {
        let mut got = Vec::new();
        let mut emit = |l: String| got.push(l);
        let mut s = LineSplitter::default();
        s.push(b"one\ntw", &mut emit);
        s.push(b"o\r\n", &mut emit);
        s.push(&vec![b'x'; MAX_LOG_LINE_BYTES + 10], &mut emit);
        s.push(b"yy\nlast", &mut emit);
        s.flush(&mut emit);
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!((got[0].as_str(), got[1].as_str()), ("one", "two"));
        assert!(got[2].starts_with("xxx") && got[2].ends_with("[line cut at 4096 bytes]"));
        assert_eq!(
            got[2].len(),
            MAX_LOG_LINE_BYTES + " [line cut at 4096 bytes]".len()
        );
        assert_eq!(got[3], "last");
    }

    #[test]
    fn capture_keeps_head_and_tail_only() {
        let mut c = Capture::new(4, 4);
        for chunk in [b"abc".as_slice(), b"defgh", b"ijklmnop", b"q"] {
            c.push(chunk);
        }
        assert_eq!(c.total(), 17);
        assert_eq!(c.render(), "abcd\n[... 9 bytes omitted ...]\nnopq");
        let mut small = Capture::new(4, 4);
        small.push(b"abcdef");
        assert_eq!(small.render(), "abcdef");
    }

    #[test]
    fn cuts_never_split_a_character() {
        // "é" is two bytes: the head limit falls inside the third one.
        let mut head_only = Capture::new(5, 0);
        head_only.push("ééé".as_bytes());
        assert_eq!(head_only.render(), "éé");
        let mut c = Capture::new(3, 3);
        c.push("aé€€bé".as_bytes()); // 1 + 2 + 3 + 3 + 1 + 2 bytes
        assert_eq!(c.render(), "aé\n[... 6 bytes omitted ...]\nbé");
        assert!(!c.render().contains('\u{fffd}'));
    }

    #[test]
    fn redact_hides_every_secret() {
        let s = redact(
            "token=abc123 again abc123",
            &["abc123".into(), String::new()],
        );
        assert_eq!(s, "token=[REDACTED] again [REDACTED]");
    }
}
