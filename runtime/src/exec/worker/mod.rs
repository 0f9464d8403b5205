//! A node or python harness process serving calls over the protocol: used once (one-shot)
//! or kept warm for many calls, several in flight at a time.

use crate::lock::Locked;
use std::collections::HashMap;
use std::ffi::OsString;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use super::error::{PrepareError, SpawnError};
use super::group::Group;
use super::process::{self, Capture, Stdout};
use super::protocol::{self, Capabilities};
use super::pump;
use super::sandbox::{Jail, Running};
use super::stop::{self, Step, secs};
use super::{ExecConfig, Limits};
use crate::executor::LogSink;
use crate::result::{StopReason, ToolResult};
use toolbind_codegen::model::ToolSpec;

mod asking;
mod call;
mod input;
mod reader;

use asking::Asked;
use input::Input;
use reader::{ReaderCtx, reader};

/// How to start a harness for one tool.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    /// `node` / `python3`.
    pub program: String,
    pub args: Vec<OsString>,
    /// Files and folders outside the tool folder the process must read (the harness, the
    /// transpiled mirror): bound read-only into its jail.
    pub binds: Vec<std::path::PathBuf>,
    /// "node" or "python", for messages.
    pub label: &'static str,
    /// The entry's file name, for messages.
    pub entry_name: String,
    /// What the worker is started from ([`worker_stamp`](super::pool::worker_stamp)): a
    /// warm worker with another stamp is replaced.
    pub stamp: u64,
}

enum Event {
    Done(ToolResult),
    /// The answer to a `prepare` request.
    Prepared(Value),
    /// A question the call's tool asks (`ctx`).
    Ask(Asked),
    /// The tool asked and now waits for an answer.
    Waiting,
    /// `ctx.notify(text, level)`.
    Notify {
        level: String,
        text: String,
    },
    /// The worker died with this call in flight, for a reason not charged to it; `others`
    /// is how many other calls were in flight with it.
    Died {
        reason: String,
        others: usize,
        /// The reason already names the call at fault.
        named: bool,
        /// Why, typed: a limit, a protocol error, or a crash.
        why: StopReason,
    },
}

/// How a call on a worker ended.
pub(crate) enum CallEnd {
    /// The call's own result (success or error).
    Done(ToolResult),
    /// The worker was dead before the call was sent: nothing ran, so retrying is safe.
    NotStarted(String),
    /// The worker died under this call while other calls were in flight on it; any of them
    /// may have broken it. Retried only for idempotent tools: a retry repeats side effects.
    NeighbourBroke(ToolResult),
}

/// A call in flight: where its end goes, and its latest-progress slot (which never
/// blocks the reader, whatever the caller's sink does).
struct Pending {
    done: mpsc::Sender<Event>,
    progress: Arc<pump::Slot>,
    /// Where the call's stderr lines go, when its caller wants them.
    log: Option<LogSink>,
    /// The call's id, naming its spill files.
    tool_call_id: String,
}

#[derive(Default)]
struct State {
    pending: HashMap<u64, Pending>,
    /// Why the worker can serve no more calls.
    dead: Option<String>,
    in_flight: usize,
    last_used: Option<Instant>,
    /// Sensitive values sent to this worker, redacted from every message it causes.
    secrets: Vec<String>,
    /// Why the runtime killed the worker on purpose: what the other calls in flight on it
    /// are told, instead of a bare "killed by signal 9".
    killed_because: Option<String>,
    /// Calls whose caller dropped the future: aborted, given the grace period to stop.
    abandoned: std::collections::HashSet<u64>,
    /// The log sink of the call that last ran alone, and when it ended: stderr it wrote
    /// just before returning may still be in the pipe when its result arrives.
    last_log: Option<(LogSink, Instant)>,
}

/// The worker was dead before a call was sent.
#[derive(Debug)]
struct Dead {
    /// Why it died: what its calls are told.
    reason: String,
}

/// The longest a result waits for the stderr the tool wrote before it to be read.
const STDERR_CATCH_UP: Duration = Duration::from_millis(100);

/// How long after a call ended alone its stderr lines are still handed to its sink.
const LOG_LINGER: Duration = Duration::from_secs(1);

struct Shared {
    state: Mutex<State>,
    stderr: Mutex<Capture>,
    /// The worker's stderr pipe while the task reading it holds it open (`None` after):
    /// what [`Shared::stderr_caught_up`] asks how much is still unread.
    stderr_fd: Mutex<Option<std::os::fd::RawFd>>,
}

impl Shared {
    /// Waits (at most [`STDERR_CATCH_UP`]) until the worker's stderr pipe holds nothing
    /// unread: a line the tool wrote before its result is in the pipe when the result
    /// arrives on the socket, and must reach the call's log sink before the call ends (a
    /// server answers the request then, and a line after it goes nowhere).
    async fn stderr_caught_up(&self) {
        let deadline = Instant::now() + STDERR_CATCH_UP;
        let mut waited = false;
        loop {
            let unread = {
                let fd = self.stderr_fd.locked();
                match *fd {
                    Some(fd) => {
                        let mut n: libc::c_int = 0;
                        // SAFETY: FIONREAD writes one int; the fd is open while it is held
                        // here (the reading task forgets it under this lock before closing).
                        let r = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) };
                        r == 0 && n > 0
                    }
                    None => false,
                }
            };
            if !unread || Instant::now() >= deadline {
                break;
            }
            waited = true;
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        if waited {
            // The reading task has taken the bytes; let it hand the line over.
            tokio::task::yield_now().await;
        }
    }

    /// The secret values of the calls in flight, to redact from error text.
    fn secrets(&self) -> Vec<String> {
        self.state
            .lock()
            .map(|s| s.secrets.clone())
            .unwrap_or_default()
    }
}

/// One harness process.
pub(crate) struct Worker {
    group: Arc<Group>,
    pub(crate) stamp: u64,
    /// When the stamp was last found current (the stamp walk is skipped for
    /// `source_check_interval` after).
    pub(crate) stamp_checked: Mutex<Option<Instant>>,
    lines: Input,
    shared: Arc<Shared>,
    next_id: AtomicU64,
    /// Becomes true once the reader has reaped the process.
    closed: watch::Receiver<bool>,
    /// What the harness's hello said, once it has arrived.
    greeted: watch::Receiver<Option<Capabilities>>,
    progress_interval: Duration,
    /// The jail the process runs in, if any.
    jail: Option<Arc<Running>>,
}

impl Worker {
    pub(crate) fn spawn(
        launch: &Launch,
        tool: &ToolSpec,
        config: &ExecConfig,
        jail: Option<Jail>,
    ) -> Result<Arc<Worker>, SpawnError> {
        let args: Vec<&std::ffi::OsStr> = launch.args.iter().map(|a| a.as_os_str()).collect();
        let mut spawned = process::spawn(
            &launch.program,
            &args,
            tool,
            config,
            process::Io {
                stdin: false,
                stdout: Stdout::ToStderr,
                env: &[],
            },
            jail,
        )?;
        let jail = spawned.jail.take().map(Arc::new);
        let limits = Limits::from(config);
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            stderr: Mutex::new(Capture::new(limits.log / 2, limits.log / 2)),
            stderr_fd: Mutex::new(None),
        });
        let stderr = spawned.stderr.take();
        let stderr_shared = shared.clone();
        let stderr_task = tokio::spawn(async move {
            if let Some(mut err) = stderr {
                {
                    use std::os::fd::AsRawFd;
                    *stderr_shared.stderr_fd.locked() = Some(err.as_raw_fd());
                }
                drain_into(&mut err, &stderr_shared).await;
                // Forgotten before the pipe closes: the number may be reused.
                *stderr_shared.stderr_fd.locked() = None;
                drop(err);
            }
        });
        let (read, write) = spawned.control.into_split();
        let lines = Input::new(write);
        let (closed_tx, closed) = watch::channel(false);
        let (greeted_tx, greeted) = watch::channel(None);
        let ctx = ReaderCtx {
            shared: shared.clone(),
            group: spawned.group.clone(),
            stderr_task,
            limits,
            label: launch.label,
            entry: launch.entry_name.clone(),
            closed: closed_tx,
            greeted: greeted_tx,
            jail: jail.clone(),
            tracker: spawned.tracker.take(),
            spill_dir: config.spill_dir.clone(),
            tool: tool.name.clone(),
        };
        tokio::spawn(reader(read, ctx));
        Ok(Arc::new(Worker {
            group: spawned.group,
            stamp: launch.stamp,
            stamp_checked: Mutex::new(Some(Instant::now())),
            lines,
            shared,
            next_id: AtomicU64::new(1),
            closed,
            greeted,
            progress_interval: config.progress_interval,
            jail,
        }))
    }

    /// Whether the worker runs in a jail.
    pub(crate) fn jailed(&self) -> bool {
        self.jail.is_some()
    }

    /// Whether the worker can take calls.
    pub(crate) fn is_alive(&self) -> bool {
        self.lock().dead.is_none()
    }

    /// No call in flight and unused for at least `idle`.
    pub(crate) fn idle_for(&self, idle: Duration) -> bool {
        let st = self.lock();
        st.in_flight == 0 && st.last_used.is_some_and(|t| t.elapsed() >= idle)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.shared.state.locked()
    }

    /// Kills the whole process group because one call would not stop: no new call is sent
    /// to this worker, and the others in flight on it learn why they failed.
    fn kill_for(&self, reason: String) {
        kill_group_for(&self.shared, &self.group, reason);
    }

    /// Kills the whole process group now.
    pub(crate) fn kill(&self) {
        self.group.signal(Signal::SIGKILL);
    }

    /// Waits (at most `limit`) until the process has been reaped.
    pub(crate) async fn wait_closed(&self, limit: Duration) {
        let mut closed = self.closed.clone();
        let _ = tokio::time::timeout(limit, closed.wait_for(|c| *c)).await;
    }

    /// Puts call `id` in flight, with the secrets to redact from everything it causes; `Err`
    /// when the worker is already dead (the call is not sent).
    fn enlist(&self, id: u64, call: Pending, secrets: &[String]) -> Result<(), Dead> {
        let mut st = self.lock();
        if let Some(reason) = &st.dead {
            return Err(Dead {
                reason: reason.clone(),
            });
        }
        st.pending.insert(id, call);
        st.last_log = None;
        st.in_flight += 1;
        for s in secrets {
            if !st.secrets.contains(s) {
                if st.secrets.len() >= 256 {
                    st.secrets.remove(0);
                }
                st.secrets.push(s.clone());
            }
        }
        Ok(())
    }
}

/// Why a worker's hello did not arrive.
pub(crate) enum NoHello {
    /// The process died first (its entry failed to load, a crash, a protocol error); its
    /// calls are told why.
    Died,
    /// It was still loading when the time ran out.
    TimedOut,
}

impl Worker {
    /// What the harness's hello says the entry offers, waiting for it (at most `timeout`)
    /// when it has not arrived yet: the harness sends it once the entry has loaded.
    pub(crate) async fn hello(&self, timeout: Duration) -> Result<Capabilities, NoHello> {
        let mut greeted = self.greeted.clone();
        let mut closed = self.closed.clone();
        let wait = async {
            tokio::select! {
                biased;
                caps = greeted.wait_for(Option::is_some) => caps.ok().and_then(|c| *c),
                _ = closed.wait_for(|c| *c) => None,
            }
        };
        match tokio::time::timeout(timeout, wait).await {
            Ok(Some(caps)) => Ok(caps),
            // A hello that came just before the end still counts.
            Ok(None) => match *self.greeted.borrow() {
                Some(caps) => Ok(caps),
                None => Err(NoHello::Died),
            },
            Err(_) => Err(NoHello::TimedOut),
        }
    }

    /// Runs the entry's `prepareArguments` (the Pi tool API) on a model's raw arguments: what it
    /// returns, or why it failed. Bounded by `deadline` (the end of `timeout`, which
    /// started before the hello was awaited); a worker that dies meanwhile fails the
    /// preparation, not the worker's other calls.
    pub(crate) async fn prepare(
        &self,
        args: &Value,
        deadline: tokio::time::Instant,
        timeout: Duration,
    ) -> Result<Value, PrepareError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, mut rx) = mpsc::channel(2);
        let pending = Pending {
            done: tx,
            progress: pump::Slot::new(),
            log: None,
            tool_call_id: String::new(),
        };
        self.enlist(id, pending, &[])
            .map_err(|dead| PrepareError::Died(dead.reason))?;
        let mut guard = CallGuard {
            worker: self,
            id,
            finished: false,
            grace: Duration::ZERO,
        };
        self.lines.send(protocol::prepare_line(id, args));
        let outcome = tokio::time::timeout_at(deadline, rx.recv()).await;
        guard.finished = true;
        match outcome {
            Ok(Some(Event::Prepared(args))) => Ok(args),
            Ok(Some(Event::Done(result))) => Err(PrepareError::Failed(result.text_content())),
            Ok(Some(Event::Died { reason, .. })) => Err(PrepareError::Died(reason)),
            Ok(Some(Event::Ask(_) | Event::Notify { .. } | Event::Waiting)) => Err(
                PrepareError::Failed("prepareArguments has no ctx to ask or notify with".into()),
            ),
            Ok(None) => Err(PrepareError::Dropped),
            Err(_) => Err(PrepareError::TimedOut(timeout)),
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Removes a call's bookkeeping however its future ends. A call whose future is dropped
/// before its result (a caller's `select!` or `timeout` moved on) is aborted in the
/// harness, and if it is still running after the grace period the worker is killed, as a
/// cancelled call would be: an abandoned call must not run on unseen.
struct CallGuard<'w> {
    worker: &'w Worker,
    id: u64,
    finished: bool,
    grace: Duration,
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        let mut st = self.worker.lock();
        if let Some(call) = st.pending.remove(&self.id)
            && st.pending.is_empty()
        {
            st.last_log = call.log.map(|sink| (sink, Instant::now()));
        }
        st.in_flight = st.in_flight.saturating_sub(1);
        st.last_used = Some(Instant::now());
        if self.finished || st.dead.is_some() {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            // No runtime to wait out a grace period in: the abort alone.
            self.worker.lines.send(protocol::abort_line(self.id));
            return;
        };
        st.abandoned.insert(self.id);
        let (shared, lines, group, id, grace) = (
            self.worker.shared.clone(),
            self.worker.lines.clone(),
            self.worker.group.clone(),
            self.id,
            self.grace,
        );
        // The same abort message and kill as a cancelled call. Whether the call ended in
        // the grace period is told at the end: the reader takes it out of `abandoned`.
        handle.spawn(stop::end_abandoned(
            grace,
            std::future::pending::<()>(),
            move |step| match step {
                Step::Abort(_) => {
                    lines.send(protocol::abort_line(id));
                }
                Step::Kill(_) => {
                    let still_running = shared
                        .state
                        .lock()
                        .map(|mut s| s.abandoned.remove(&id))
                        .unwrap_or(false);
                    if still_running {
                        kill_group_for(
                            &shared,
                            &group,
                            format!(
                                "the tool's worker process was restarted: a call its caller stopped waiting for ignored its abort signal for {} and had to be killed, and this call ran in the same process; calling again starts a fresh worker",
                                secs(grace)
                            ),
                        );
                    }
                }
            },
        ));
    }
}

/// Marks the worker dead with `reason` (what its other calls are told) and kills its
/// process group, unless it has been reaped already.
fn kill_group_for(shared: &Shared, group: &Group, reason: String) {
    let mut st = shared.state.locked();
    st.killed_because = Some(reason.clone());
    if st.dead.is_none() {
        st.dead = Some(reason);
    }
    group.signal(Signal::SIGKILL);
}

/// Keeps the worker's stderr for error messages, and hands each line to the log sink of
/// the call in flight, when exactly one is (or, for [`LOG_LINGER`] after it ended, when no
/// other call has started since): the process is shared, so with several calls in flight a
/// line cannot be attributed, and is not sent to any (rather than to the wrong caller). A
/// line is redacted of every secret sent to this worker first.
async fn drain_into(reader: &mut (impl tokio::io::AsyncRead + Unpin), shared: &Shared) {
    use tokio::io::AsyncReadExt;
    let mut buf = vec![0u8; 64 * 1024];
    let mut lines = process::LineSplitter::default();
    let mut emit = |line: String| {
        let (sink, secrets) = {
            let mut st = shared.state.locked();
            let sink = match st.pending.len() {
                1 => st.pending.values().next().and_then(|p| p.log.clone()),
                // The call that ran alone has just ended: what it wrote last is its own.
                0 => match &st.last_log {
                    Some((sink, ended)) if ended.elapsed() < LOG_LINGER => Some(sink.clone()),
                    _ => {
                        st.last_log = None;
                        None
                    }
                },
                _ => None,
            };
            match sink {
                Some(sink) => (sink, st.secrets.clone()),
                None => return,
            }
        };
        sink(process::redact(&line, &secrets));
    };
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                shared.stderr.locked().push(&buf[..n]);
                lines.push(&buf[..n], &mut emit);
            }
        }
    }
    lines.flush(&mut emit);
}
