//! A node or python harness process serving calls over the protocol: used once (one-shot)
//! or kept warm for many calls, several in flight at a time.

use std::collections::HashMap;
use std::ffi::OsString;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde_json::{Map, Value};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::process::Child;
use tokio::sync::{mpsc, watch};

use super::blobs::{Binary, Blobs};
use super::error::{PrepareError, SpawnError};
use super::process::{self, Capture, Stdout};
use super::protocol::{self, Capabilities, FromHarness, LineError};
use super::pump::{self, Pump};
use super::sandbox::{Jail, Running};
use super::stop::{self, Ending, Step, Stopper, secs};
use super::{ExecConfig, Limits};
use crate::cancel::CancelToken;
use crate::executor::{LogSink, ProgressSink};
use crate::result::{StopReason, ToolResult};
use toolbind_codegen::model::ToolSpec;

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
    /// Changes when the entry changes; a warm worker with another key is replaced.
    pub key: u64,
}

enum Event {
    Done(ToolResult),
    /// The answer to a `prepare` request.
    Prepared(Value),
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
    /// The reader owns the end of the process; nobody else signals its group after this.
    exiting: bool,
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

/// How long after a call ended alone its stderr lines are still handed to its sink.
const LOG_LINGER: Duration = Duration::from_secs(1);

struct Shared {
    state: Mutex<State>,
    stderr: Mutex<Capture>,
}

impl Shared {
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
    pgid: i32,
    pub(crate) key: u64,
    /// When the key was last found current (the stamp walk is skipped for a second after).
    pub(crate) key_checked: Mutex<Option<Instant>>,
    lines: mpsc::UnboundedSender<Vec<u8>>,
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
            false,
            Stdout::ToStderr,
            jail,
        )?;
        let jail = spawned.jail.take().map(Arc::new);
        let limits = Limits::from(config);
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            stderr: Mutex::new(Capture::new(limits.log / 2, limits.log / 2)),
        });
        let stderr = spawned.child.stderr.take();
        let stderr_shared = shared.clone();
        let stderr_task = tokio::spawn(async move {
            if let Some(err) = stderr {
                drain_into(err, &stderr_shared).await;
            }
        });
        let (read, write) = spawned.control.into_split();
        let (lines, rx) = mpsc::unbounded_channel();
        tokio::spawn(writer(write, rx));
        let (closed_tx, closed) = watch::channel(false);
        let (greeted_tx, greeted) = watch::channel(None);
        let ctx = ReaderCtx {
            shared: shared.clone(),
            child: spawned.child,
            pgid: spawned.pgid,
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
            pgid: spawned.pgid,
            key: launch.key,
            key_checked: Mutex::new(Some(Instant::now())),
            lines,
            shared,
            next_id: AtomicU64::new(1),
            closed,
            greeted,
            progress_interval: config.progress_interval,
            jail,
        }))
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
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Kills the whole process group because one call would not stop: no new call is sent
    /// to this worker, and the others in flight on it learn why they failed.
    fn kill_for(&self, reason: String) {
        kill_group_for(&self.shared, self.pgid, reason);
    }

    /// Kills the whole process group now.
    pub(crate) fn kill(&self) {
        let st = self.lock();
        if !st.exiting {
            process::signal_group(self.pgid, Signal::SIGKILL);
        }
    }

    /// Waits (at most `limit`) until the process has been reaped.
    pub(crate) async fn wait_closed(&self, limit: Duration) {
        let mut closed = self.closed.clone();
        let _ = tokio::time::timeout(limit, closed.wait_for(|c| *c)).await;
    }

    /// Runs one call on this worker.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn call(
        &self,
        tool_call_id: &str,
        params: &Map<String, Value>,
        cancel: &CancelToken,
        timeout: Duration,
        grace: Duration,
        progress: Option<&ProgressSink>,
        log: Option<&LogSink>,
        secrets: &[String],
    ) -> CallEnd {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, mut rx) = mpsc::channel(4);
        let updates = pump::Slot::new();
        let mut pump = Pump::new(progress, self.progress_interval);
        {
            let mut st = self.lock();
            if let Some(reason) = &st.dead {
                return CallEnd::NotStarted(reason.clone());
            }
            st.pending.insert(
                id,
                Pending {
                    done: tx,
                    progress: updates.clone(),
                    log: log.cloned(),
                    tool_call_id: tool_call_id.to_owned(),
                },
            );
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
        }
        if let Some(j) = &self.jail {
            // Each call gets the whole CPU budget, not what the worker's past calls left.
            j.rearm_cpu();
        }
        let mut guard = CallGuard {
            worker: self,
            id,
            finished: false,
            grace,
        };
        let _ = self
            .lines
            .send(protocol::call_line(id, tool_call_id, params));

        let mut stopper = Stopper::new(timeout, grace);
        loop {
            let step = tokio::select! {
                biased;
                _ = updates.ready() => { pump.take_from(&updates); None }
                _ = pump::until(pump.due()) => { pump.tick(); None }
                event = rx.recv() => match event {
                    Some(Event::Done(result)) => {
                        // The latest update goes out before the result.
                        pump.take_from(&updates);
                        pump.finish();
                        guard.finished = true;
                        return CallEnd::Done(match stopper.ending() {
                            Some(e @ Ending::TimedOut) => ToolResult::stopped(
                                stopper.reason(e),
                                stopper.describe(e, "the tool stopped after its abort signal"),
                            ),
                            // The tool gave up when its signal fired: the call was cancelled.
                            Some(e @ Ending::Cancelled) if result.is_error => {
                                result.with_stop(stopper.reason(e))
                            }
                            _ => result,
                        });
                    }
                    Some(Event::Died { reason, others, named, why }) => {
                        guard.finished = true;
                        if others == 0 || stopper.ending().is_some() {
                            return CallEnd::Done(ToolResult::stopped(why, reason));
                        }
                        return CallEnd::NeighbourBroke(ToolResult::stopped(why, if named {
                            reason
                        } else {
                            format!(
                                "a neighbouring call may have broken the worker process this call was running in ({others} other call(s) were in flight on it): {reason}"
                            )
                        }));
                    }
                    Some(Event::Prepared(_)) => {
                        guard.finished = true;
                        return CallEnd::Done(ToolResult::stopped(
                            StopReason::ProtocolError,
                            "protocol error: the harness answered a call with `prepared`",
                        ));
                    }
                    None => {
                        guard.finished = true;
                        return CallEnd::Done(ToolResult::stopped(StopReason::Crashed, "internal error: the worker dropped the call"));
                    }
                },
                _ = cancel.cancelled(), if stopper.ending().is_none() => stopper.cancel(),
                _ = tokio::time::sleep_until(stopper.deadline()) => Some(stopper.expire()),
            };
            match step {
                // A worker's abort signal: the harness fires the call's AbortSignal.
                Some(Step::Abort(_)) => {
                    let _ = self.lines.send(protocol::abort_line(id));
                }
                Some(Step::Kill(ending)) => {
                    guard.finished = true;
                    self.kill_for(format!(
                        "the tool's worker process was restarted: another call (`{tool_call_id}`) ignored its abort signal for {} and had to be killed, and this call ran in the same process; calling again starts a fresh worker (tools that ignore abort signals are better as `worker: oneshot`)",
                        stopper.grace()
                    ));
                    self.wait_closed(Duration::from_secs(2)).await;
                    let how = format!(
                        "the tool did not stop within {} of its abort signal, so its process group was killed",
                        stopper.grace()
                    );
                    return CallEnd::Done(ToolResult::stopped(
                        stopper.reason(ending),
                        stopper.describe(ending, &how),
                    ));
                }
                None => {}
            }
        }
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
        {
            let mut st = self.lock();
            if let Some(reason) = &st.dead {
                return Err(PrepareError::Died(reason.clone()));
            }
            st.pending.insert(
                id,
                Pending {
                    done: tx,
                    progress: pump::Slot::new(),
                    log: None,
                    tool_call_id: String::new(),
                },
            );
            st.in_flight += 1;
        }
        let mut guard = CallGuard {
            worker: self,
            id,
            finished: false,
            grace: Duration::ZERO,
        };
        let _ = self.lines.send(protocol::prepare_line(id, args));
        let outcome = tokio::time::timeout_at(deadline, rx.recv()).await;
        guard.finished = true;
        match outcome {
            Ok(Some(Event::Prepared(args))) => Ok(args),
            Ok(Some(Event::Done(result))) => Err(PrepareError::Failed(result.text_content())),
            Ok(Some(Event::Died { reason, .. })) => Err(PrepareError::Died(reason)),
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
            let _ = self.worker.lines.send(protocol::abort_line(self.id));
            return;
        };
        st.abandoned.insert(self.id);
        let (shared, lines, pgid, id, grace) = (
            self.worker.shared.clone(),
            self.worker.lines.clone(),
            self.worker.pgid,
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
                    let _ = lines.send(protocol::abort_line(id));
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
                            pgid,
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
/// process group, unless the reader is already reaping it.
fn kill_group_for(shared: &Shared, pgid: i32, reason: String) {
    let mut st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
    st.killed_because = Some(reason.clone());
    if st.dead.is_none() {
        st.dead = Some(reason);
    }
    if !st.exiting {
        process::signal_group(pgid, Signal::SIGKILL);
    }
}

/// Keeps the worker's stderr for error messages, and hands each line to the log sink of
/// the call in flight, when exactly one is (or, for [`LOG_LINGER`] after it ended, when no
/// other call has started since): the process is shared, so with several calls in flight a
/// line cannot be attributed, and is not sent to any (rather than to the wrong caller). A
/// line is redacted of every secret sent to this worker first.
async fn drain_into(mut reader: impl tokio::io::AsyncRead + Unpin, shared: &Shared) {
    use tokio::io::AsyncReadExt;
    let mut buf = vec![0u8; 64 * 1024];
    let mut lines = process::LineSplitter::default();
    let mut emit = |line: String| {
        let (sink, secrets) = {
            let mut st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
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
                shared
                    .stderr
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(&buf[..n]);
                lines.push(&buf[..n], &mut emit);
            }
        }
    }
    lines.flush(&mut emit);
}

async fn writer(mut write: OwnedWriteHalf, mut rx: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(mut lines) = rx.recv().await {
        // Lines queued meanwhile (calls that arrived together) go out in one write.
        while lines.len() < 1 << 20
            && let Ok(more) = rx.try_recv()
        {
            lines.extend_from_slice(&more);
        }
        if write.write_all(&lines).await.is_err() {
            break;
        }
    }
    // Dropping the write half closes the harness's input: it kills its own group and exits.
}

struct ReaderCtx {
    shared: Arc<Shared>,
    child: Child,
    pgid: i32,
    stderr_task: tokio::task::JoinHandle<()>,
    limits: Limits,
    label: &'static str,
    entry: String,
    closed: watch::Sender<bool>,
    /// Where the hello's capabilities go.
    greeted: watch::Sender<Option<Capabilities>>,
    jail: Option<Arc<Running>>,
    /// An unjailed worker's tracking cgroup: dropped once the worker is dead, it kills the
    /// daemons its calls started.
    tracker: Option<super::sandbox::Cgroup>,
    /// Where binary blocks over the bound are saved.
    spill_dir: Option<std::path::PathBuf>,
    /// The tool's name, naming its spill files.
    tool: String,
}

/// The harness already cuts text at the limit and adds a note; the runtime's own cap, a
/// little higher, keeps that note while still bounding what a misbehaving harness sends.
const SLACK: usize = 4096;

async fn reader(read: OwnedReadHalf, mut ctx: ReaderCtx) {
    let mut read = BufReader::with_capacity(64 * 1024, read);
    let mut line = Vec::new();
    let mut fatal: Option<String> = None;
    let mut broken: Option<String> = None;
    // The first message must be the hello (or a fatal): nothing else is read before it.
    let mut greeted = false;
    // The harness's exit is noticed by itself, not only by end-of-stream: a process the
    // tool started may hold the socket open for as long as it lives. What the harness
    // wrote before exiting is still read, for a short while.
    let mut status: Option<Option<std::process::ExitStatus>> = None;
    let mut drain_until: Option<tokio::time::Instant> = None;
    // The binary pieces each call in flight has sent ahead of its result.
    let mut blobs: HashMap<u64, (String, Blobs)> = HashMap::new();
    loop {
        let next = tokio::select! {
            r = protocol::read_line(&mut read, &mut line, ctx.limits.line) => r,
            s = ctx.child.wait(), if status.is_none() => {
                status = Some(s.ok());
                drain_until = Some(tokio::time::Instant::now() + Duration::from_millis(500));
                continue;
            }
            _ = tokio::time::sleep_until(drain_until.unwrap_or_else(tokio::time::Instant::now)),
                if drain_until.is_some() => break,
        };
        match next {
            Ok(None) => break,
            Ok(Some(())) => {}
            Err(LineError::TooLong(max)) => {
                broken = Some(format!(
                    "protocol error: the {} harness sent a message longer than {max} bytes",
                    ctx.label
                ));
                break;
            }
            Err(LineError::Io(e)) => {
                broken = Some(format!(
                    "protocol error: reading from the {} harness failed: {e}",
                    ctx.label
                ));
                break;
            }
        }
        let msg = match serde_json::from_slice::<FromHarness>(&line) {
            Ok(m) => Some(m),
            Err(e) if !greeted => {
                broken = Some(format!(
                    "protocol error: the {} harness's first message is not a hello (protocol version {}) but a line that is not a protocol message ({e}): `{}`",
                    ctx.label,
                    protocol::PROTOCOL_VERSION,
                    protocol::preview(&line)
                ));
                break;
            }
            Err(e) => match protocol::salvage_id(&line) {
                // A message of one call that is not JSON fails that call, not the worker.
                Some(("update", _)) => None,
                Some((kind, id)) => Some(FromHarness::Error {
                    id,
                    salvaged: true,
                    message: format!(
                        "protocol error: the {} harness could not send this call's {kind} as JSON ({e}); NaN, Infinity and numbers beyond the range of a 64-bit float have no JSON form",
                        ctx.label
                    ),
                }),
                None => {
                    broken = Some(format!(
                        "protocol error: the {} harness sent a line that is not a protocol message ({e}): `{}`",
                        ctx.label,
                        protocol::preview(&line)
                    ));
                    break;
                }
            },
        };
        line.clear();
        let Some(msg) = msg else { continue };
        match (&msg, greeted) {
            (FromHarness::Hello { .. }, true) => {
                broken = Some(format!(
                    "protocol error: the {} harness sent a second hello",
                    ctx.label
                ));
                break;
            }
            (FromHarness::Hello { .. } | FromHarness::Fatal { .. }, false) | (_, true) => {}
            (other, false) => {
                broken = Some(format!(
                    "protocol error: the {} harness's first message is `{}`, not the hello protocol version {} begins with; the harness is from another toolbind version",
                    ctx.label,
                    other.kind(),
                    protocol::PROTOCOL_VERSION
                ));
                break;
            }
        }
        let (id, event) = match msg {
            FromHarness::Hello {
                protocol,
                capabilities,
            } => {
                match protocol::hello(ctx.label, &protocol, &capabilities) {
                    Ok(caps) => {
                        greeted = true;
                        let _ = ctx.greeted.send(Some(caps));
                    }
                    Err(e) => {
                        broken = Some(e.to_string());
                        break;
                    }
                }
                continue;
            }
            FromHarness::Update { id, content, cut } => {
                let mut p = protocol::normalize_progress(content, ctx.limits.text + SLACK);
                if let Some(cut) = &cut {
                    p.content
                        .push(crate::result::Content::text(protocol::note(cut)));
                }
                let st = ctx.shared.state.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(call) = st.pending.get(&id) {
                    call.progress.put(p);
                }
                continue;
            }
            FromHarness::Data {
                id,
                index,
                data,
                size,
            } => {
                let call_id = {
                    let st = ctx.shared.state.lock().unwrap_or_else(|e| e.into_inner());
                    st.pending.get(&id).map(|c| c.tool_call_id.clone())
                };
                // Pieces of a call that is no longer waiting are dropped (their file too).
                let Some(call_id) = call_id else {
                    blobs.remove(&id);
                    continue;
                };
                blobs
                    .entry(id)
                    .or_insert_with(|| (call_id, Blobs::default()));
                let Some((call_id, held)) = blobs.get_mut(&id) else {
                    continue;
                };
                let mut binary = Binary {
                    dir: ctx.spill_dir.as_deref(),
                    tool: &ctx.tool,
                    tool_call_id: call_id,
                    bound: ctx.limits.binary,
                    blobs: std::mem::take(held),
                };
                binary.piece(index, &data, size);
                *held = binary.blobs;
                continue;
            }
            FromHarness::Result { id, result, cut } => {
                let (call_id, held) = blobs.remove(&id).unwrap_or_default();
                let call_id = if call_id.is_empty() {
                    let st = ctx.shared.state.lock().unwrap_or_else(|e| e.into_inner());
                    st.pending
                        .get(&id)
                        .map(|c| c.tool_call_id.clone())
                        .unwrap_or_default()
                } else {
                    call_id
                };
                let mut binary = Binary {
                    dir: ctx.spill_dir.as_deref(),
                    tool: &ctx.tool,
                    tool_call_id: &call_id,
                    bound: ctx.limits.binary,
                    blobs: held,
                };
                let mut result =
                    protocol::normalize_result_with(result, ctx.limits.text + SLACK, &mut binary);
                if let Some(cut) = &cut {
                    result.push_runtime_note(protocol::note(cut));
                }
                (id, Event::Done(result))
            }
            FromHarness::Error {
                id,
                mut message,
                salvaged,
            } => {
                // Pieces sent ahead of a result that never came: their files go.
                blobs.remove(&id);
                // A thrown error is the tool's failure, unless a limit caused it or the
                // runtime salvaged a message that was not JSON.
                let mut why = if salvaged {
                    StopReason::ProtocolError
                } else {
                    StopReason::ToolError
                };
                if let Some(j) = &ctx.jail
                    && let Some((stop, limit)) = j.explain(None, &message)
                {
                    why = stop;
                    message = format!("{limit}\n{message}");
                }
                let secrets = ctx.shared.secrets();
                (
                    id,
                    Event::Done(ToolResult::stopped(
                        why,
                        process::redact(&message, &secrets),
                    )),
                )
            }
            FromHarness::Fatal { message } => {
                fatal = Some(message);
                continue;
            }
            FromHarness::Prepared { id, args } => (id, Event::Prepared(args)),
        };
        let call = {
            let mut st = ctx.shared.state.lock().unwrap_or_else(|e| e.into_inner());
            let call = st.pending.remove(&id);
            if call.is_none() {
                // An abandoned call that did stop: nothing to kill.
                st.abandoned.remove(&id);
            }
            call
        };
        if let Some(call) = call {
            let _ = call.done.send(event).await;
        }
    }

    ctx.shared
        .state
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .exiting = true;
    if broken.is_some() {
        process::signal_group(ctx.pgid, Signal::SIGKILL);
    }
    // Let a process that is exiting on its own report its real status before the group is
    // killed (grandchildren included: nothing of a dead worker survives it).
    let status = match status {
        Some(s) => {
            process::signal_group(ctx.pgid, Signal::SIGKILL);
            s
        }
        None => match tokio::time::timeout(Duration::from_millis(500), ctx.child.wait()).await {
            Ok(s) => {
                process::signal_group(ctx.pgid, Signal::SIGKILL);
                s.ok()
            }
            Err(_) => {
                process::signal_group(ctx.pgid, Signal::SIGKILL);
                ctx.child.wait().await.ok()
            }
        },
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), &mut ctx.stderr_task).await;
    drop(ctx.tracker.take());

    let secrets = ctx.shared.secrets();
    let stderr = {
        let c = ctx.shared.stderr.lock().unwrap_or_else(|e| e.into_inner());
        (!c.is_empty()).then(|| c.render_tail(2000, &secrets))
    };
    let killed_because = ctx
        .shared
        .state
        .lock()
        .map(|s| s.killed_because.clone())
        .unwrap_or_default();
    let named = fatal.is_none() && broken.is_none() && killed_because.is_some();
    let protocol_broken = broken.is_some();
    // A limit the jail enforced is the reason every call on the worker gets.
    let limit = ctx.jail.as_ref().and_then(|j| {
        let c = ctx.shared.stderr.lock().unwrap_or_else(|e| e.into_inner());
        j.explain(status, &c.render_tail(4000, &secrets))
    });
    let mut reason = match (fatal, broken, killed_because) {
        (Some(f), _, _) => f,
        (None, Some(b), _) => b,
        (None, None, Some(k)) => k,
        (None, None, None) => format!(
            "the {} process running {} {} before returning a result",
            ctx.label,
            ctx.entry,
            status
                .map(|s| match &ctx.jail {
                    Some(j) => j.describe(s),
                    None => process::describe_exit(s),
                })
                .unwrap_or_else(|| "ended".into())
        ),
    };
    let why = match limit {
        Some((stop, limit)) => {
            reason = format!("{limit}; {reason}");
            stop
        }
        None if protocol_broken => StopReason::ProtocolError,
        None => StopReason::Crashed,
    };
    if let Some(stderr) = stderr {
        reason.push_str("\nstderr:\n");
        reason.push_str(&stderr);
    }
    let reason = process::redact(&reason, &secrets);
    let pending: Vec<_> = {
        let mut st = ctx.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        st.dead = Some(reason.clone());
        st.pending.drain().map(|(_, call)| call.done).collect()
    };
    let others = pending.len().saturating_sub(1);
    for tx in pending {
        let _ = tx
            .send(Event::Died {
                reason: reason.clone(),
                others,
                named,
                why: why.clone(),
            })
            .await;
    }
    let _ = ctx.closed.send(true);
}
