//! MCP's tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) in `toolbind serve`:
//! a `tools/call` of a tool whose TOOL.md says `task: optional | required` (or whose
//! `timeout` is over 60 s) is answered at once with a task id when the client takes tasks;
//! the call runs on, and `tasks/get` reports its status, progress and, once it has ended,
//! its result.
//!
//! One store per server, shared by every session: a stateless HTTP request, or another
//! session, can poll (`tasks/get`) or cancel a task another request created (its id is
//! 128 random bits, given only to the client that created it; anyone with the server's
//! token and the id can read it). Answers are not so open: a task created in a session
//! takes `tasks/update` only from that session ([`Owner`]), so another client holding
//! the token cannot approve what this one's tool asks. Tasks live in this process's memory:
//! a restart loses them, and behind a load balancer a task is found only on the replica
//! that runs it (docs/http.md, "Tasks").
//!
//! Bounds, each with a clear answer when reached:
//! - at most `--max-tasks` tasks unfinished (running, or queued for one of the
//!   `--max-concurrent-calls`); one more is refused with a JSON-RPC error;
//! - a task is kept for its TTL (`--task-ttl`, or the tool's timeout when that is longer)
//!   from its creation; one still unfinished then is stopped through the call's one
//!   termination path (abort signal, then the kill) and `failed`; a finished one is kept
//!   one more TTL from its end, then dropped;
//! - finished results take at most `--task-memory` bytes in all (64 MiB); past that the
//!   oldest are dropped first.
//!
//! A dropped task's id answers `-32602` saying it expired (and why), not "unknown", for the
//! last [`GONE_REMEMBERED`] dropped.
//!
//! Why not rmcp's `task_manager::TaskManager` (rmcp 3.11): it has no bound on unfinished
//! tasks or on what finished results hold (`--max-tasks`, `--task-memory`), and keeps a
//! task without TTL forever; it sweeps only when a request comes (no sweeper: an idle
//! server would keep an overdue call running); its TTL stops a call by aborting the
//! future (`JoinHandle::abort`), which would drop the tool's process without the call's
//! abort signal, grace and result, where this store stops it through the runtime's one
//! termination path and keeps a `failed` result saying why; `tasks/update` takes answers
//! from whoever holds the id (no [`Owner`]); and a dropped id answers "unknown", not
//! "expired".
//!
//! Why a task does not hold the runtime's `CallHandle` (`Runtime::start`): a task exists,
//! observable by `tasks/get`, before its call starts, and waits queued for one of
//! `--max-concurrent-calls` (`Runtime::start` starts the call at once, holding no slot);
//! its result outlives the call, counted against `--task-memory`, and is stored as the
//! MCP `CallToolResult` JSON the client fetches, not as the runtime's `ToolResult`. What a
//! `CallHandle` holds of a running call (its cancel token and latest progress) is what
//! [`Started`] gives the call here, so the call's own machinery is still the runtime's
//! (`Runtime::call` with those options). One sweeper ([`super::sweeper`]) sweeps this
//! store and the rounds' once a second.

use crate::lock::Locked;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use rmcp::ErrorData as McpError;
use rmcp::model::{DetailedTask, ErrorCode, JsonObject, Task, TaskPayload, TaskStatus};
use rmcp::task_manager::current_timestamp;
use serde_json::{Value, json};
use tokio::sync::{oneshot, watch};
use toolbind::{CancelToken, Progress, StopReason, ToolResult};

use super::surface::shortened;

/// The default of `--max-tasks`.
pub(crate) const DEFAULT_MAX_TASKS: usize = 1000;
/// The default of `--task-ttl`.
pub(crate) const DEFAULT_TTL: Duration = Duration::from_secs(300);
/// The default of `--task-memory`: what finished results may take in all.
pub(crate) const DEFAULT_MEMORY: usize = 64 << 20;
/// How many dropped task ids are remembered, to answer "expired" rather than "unknown".
pub(crate) const GONE_REMEMBERED: usize = 10_000;
/// What a finished task costs besides its result's bytes (its id, times, the map entry).
const ENTRY_COST: usize = 512;
/// The longest TTL: a year (a deadline `now + ttl` cannot overflow).
const MAX_TTL: Duration = Duration::from_secs(365 * 24 * 3600);
/// The least `--task-memory`.
pub(crate) const MIN_MEMORY: usize = 1 << 20;
/// How often requests sweep the whole store at most.
const SWEEP_EVERY: Duration = Duration::from_millis(250);
/// The poll interval suggested to clients.
const POLL_INTERVAL_MS: u64 = 500;
/// The error code of a refused task: the one `serve --http` answers a refused call with.
const BUSY: ErrorCode = ErrorCode(-32000);

/// The bounds of one server's tasks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// `--max-tasks`: unfinished tasks at once.
    pub max_tasks: usize,
    /// `--task-ttl`: how long a task is kept (at least).
    pub ttl: Duration,
    /// `--task-memory`: bytes of finished results kept in all.
    pub memory: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_tasks: DEFAULT_MAX_TASKS,
            ttl: DEFAULT_TTL,
            memory: DEFAULT_MEMORY,
        }
    }
}

/// Who may answer a task's questions (`tasks/update`): the session its `tools/call` came
/// in, or, for a call made outside any session (a `--stateless` request, a 2026-07-28
/// request over HTTP), whoever holds its id: there is no session to tie it to, and the id
/// (128 random bits, given only in the creating request's answer) is the only key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// The session of this number ([`super::server::Server`]'s).
    Session(u64),
    /// No session: the id alone.
    Anyone,
}

/// Why a task id no longer answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gone {
    /// Its TTL passed.
    Expired,
    /// Dropped early: the finished results held more than `--task-memory`.
    Evicted,
}

/// The tasks of one server.
pub(crate) struct Tasks {
    limits: Limits,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    tasks: HashMap<String, Entry>,
    /// Unfinished tasks.
    running: usize,
    /// What the finished results take, [`ENTRY_COST`] each included.
    bytes: usize,
    /// What the arguments of unfinished tasks take.
    waiting_bytes: usize,
    /// Finished tasks, oldest end first: what goes when results take too much.
    finished: VecDeque<String>,
    /// The last [`GONE_REMEMBERED`] dropped ids, oldest first, and why each went.
    gone: VecDeque<String>,
    gone_why: HashMap<String, Gone>,
    /// When the last whole sweep ran.
    swept: Option<Instant>,
}

struct Entry {
    /// The wire fields: id, status, times, TTL, poll interval, status message.
    task: Task,
    tool: String,
    /// Who may answer its questions.
    owner: Owner,
    deadline: Instant,
    state: State,
}

enum State {
    Running {
        cancel: CancelToken,
        progress: watch::Receiver<Option<Progress>>,
        /// Waiting for one of `--max-concurrent-calls`.
        queued: Arc<std::sync::atomic::AtomicBool>,
        /// The TTL passed and the call was stopped: it ends `failed` (unless it returned
        /// first).
        expired: bool,
        /// Being stopped (a cancel, the TTL): the status message says so.
        stopping: Option<&'static str>,
        /// What its arguments take, counted against `--task-memory` until it ends.
        args_bytes: usize,
        /// The questions its call waits for answers to (`input_required`): each request
        /// as `tasks/get` shows it, and where its answer goes.
        inputs: std::collections::BTreeMap<String, (Value, oneshot::Sender<Value>)>,
        /// Questions asked so far, naming the next one (`input-<n>`).
        asked: u64,
    },
    Done {
        payload: Arc<TaskPayload>,
        ended: Instant,
        bytes: usize,
    },
}

/// A question waiting in a task ([`Tasks::ask`]): its answer, and its key, withdrawn
/// from the task when dropped unanswered.
pub(crate) struct Question {
    pub answer: oneshot::Receiver<Value>,
    tasks: Weak<Tasks>,
    id: String,
    key: String,
}

impl Drop for Question {
    fn drop(&mut self) {
        if let Some(tasks) = self.tasks.upgrade() {
            tasks.withdraw(&self.id, &self.key);
        }
    }
}

/// What a task's call gets from [`Tasks::create`]: where to send progress, what stops it,
/// how to say it now runs, and where its result goes ([`Started::finish`]). Dropped
/// without a result (the call's task panicked or was aborted), the task settles `failed`
/// rather than holding its slot for ever.
pub(crate) struct Started {
    pub id: String,
    pub cancel: CancelToken,
    pub progress: watch::Sender<Option<Progress>>,
    queued: Arc<std::sync::atomic::AtomicBool>,
    tasks: Weak<Tasks>,
    finished: bool,
}

impl std::fmt::Debug for Started {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Started")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl Started {
    /// The call got its slot and runs.
    pub(crate) fn running(&self) {
        self.queued
            .store(false, std::sync::atomic::Ordering::Relaxed);
    }

    /// Records the end of the task's call: `result_json` is the MCP result its
    /// `tools/call` would have answered.
    pub(crate) fn finish(mut self, result: &ToolResult, result_json: JsonObject) {
        self.finished = true;
        if let Some(tasks) = self.tasks.upgrade() {
            tasks.finish(&self.id, result, result_json);
        }
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        if let Some(tasks) = self.tasks.upgrade() {
            let lost = ToolResult::stopped(
                StopReason::Crashed,
                "the task's call ended without a result (its task in the server stopped)",
            );
            tasks.finish(&self.id, &lost, JsonObject::new());
        }
    }
}

impl Tasks {
    /// The store. Requests sweep it as they come; for a task to be stopped (and a finished
    /// one dropped) within a second of its TTL when none does, it goes to
    /// [`sweeper::start`](super::sweeper::start) (as the server does).
    pub(crate) fn new(limits: Limits) -> Arc<Tasks> {
        Arc::new(Tasks {
            limits: Limits {
                max_tasks: limits.max_tasks.max(1),
                ttl: limits.ttl.clamp(Duration::from_millis(1), MAX_TTL),
                memory: limits.memory.max(MIN_MEMORY),
            },
            inner: Mutex::default(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.locked()
    }

    /// Makes a task for a call of `tool` that may run `runs_for` (its timeout): it is
    /// observable by `tasks/get` before this returns (the spec's durable create). Refused
    /// when `--max-tasks` are unfinished.
    /// `owner`: who may answer its questions.
    pub(crate) fn create(
        self: &Arc<Self>,
        tool: &str,
        owner: Owner,
        runs_for: Duration,
        args_bytes: usize,
    ) -> Result<(Task, Started), McpError> {
        let ttl = self.limits.ttl.max(runs_for).min(MAX_TTL);
        let deadline = Instant::now()
            .checked_add(ttl)
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
        let id = super::ids::new_id()
            .map_err(|e| McpError::internal_error(format!("cannot make a task id: {e}"), None))?;
        let now = current_timestamp();
        let mut task = Task::new(id.clone(), TaskStatus::Working, now.clone(), now);
        task.ttl_ms = Some(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
        task.poll_interval_ms = Some(POLL_INTERVAL_MS);
        let cancel = CancelToken::new();
        let (progress, progress_rx) = watch::channel(None);
        let queued = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let mut inner = self.lock();
        inner.sweep();
        if inner.running >= self.limits.max_tasks {
            return Err(McpError::new(
                BUSY,
                format!(
                    "too many tasks: {} are unfinished, this server's limit (toolbind serve --max-tasks); retry when one has ended",
                    self.limits.max_tasks
                ),
                None,
            ));
        }
        if inner.waiting_bytes + args_bytes > self.limits.memory {
            return Err(McpError::new(
                BUSY,
                format!(
                    "too many tasks: the arguments of the unfinished ones hold {} bytes, and this one's {args_bytes} more would pass this server's limit of {} (toolbind serve --task-memory); retry when one has ended",
                    inner.waiting_bytes, self.limits.memory
                ),
                None,
            ));
        }
        inner.running += 1;
        inner.waiting_bytes += args_bytes;
        inner.tasks.insert(
            id.clone(),
            Entry {
                task: task.clone(),
                tool: tool.to_owned(),
                owner,
                deadline,
                state: State::Running {
                    cancel: cancel.clone(),
                    progress: progress_rx,
                    queued: queued.clone(),
                    expired: false,
                    stopping: None,
                    args_bytes,
                    inputs: Default::default(),
                    asked: 0,
                },
            },
        );
        Ok((
            task,
            Started {
                id,
                cancel,
                progress,
                queued,
                tasks: Arc::downgrade(self),
                finished: false,
            },
        ))
    }

    /// Records the end of task `id`'s call ([`Started::finish`]).
    fn finish(&self, id: &str, result: &ToolResult, result_json: JsonObject) {
        let mut inner = self.lock();
        let Some(entry) = inner.tasks.get_mut(id) else {
            return;
        };
        let State::Running {
            expired,
            args_bytes,
            ..
        } = entry.state
        else {
            return;
        };
        // A call that returned just as its TTL passed keeps its result.
        let payload = if expired && result.stop == StopReason::Cancelled {
            TaskPayload::Failed {
                error: error_object(
                    ErrorCode::INTERNAL_ERROR,
                    format!(
                        "task expired: `{}` was still running when its TTL of {} ms passed, and was stopped",
                        entry.tool,
                        entry.task.ttl_ms.unwrap_or_default()
                    ),
                    json!({"stop": "expired"}),
                ),
            }
        } else {
            payload_of(result, result_json)
        };
        let bytes = ENTRY_COST + payload_bytes(&payload);
        entry.task.status = payload.status();
        entry.task.status_message = None;
        entry.task.last_updated_at = current_timestamp();
        entry.state = State::Done {
            payload: Arc::new(payload),
            ended: Instant::now(),
            bytes,
        };
        inner.running -= 1;
        inner.waiting_bytes -= args_bytes;
        inner.bytes += bytes;
        inner.finished.push_back(id.to_owned());
        inner.evict(self.limits.memory);
    }

    /// `tasks/get`.
    pub(crate) fn get(&self, id: &str) -> Result<DetailedTask, McpError> {
        let (task, payload) = self.get_shared(id)?;
        // The (possibly large) result is copied out of the lock.
        Ok(DetailedTask::new(task, TaskPayload::clone(&payload)))
    }

    fn get_shared(&self, id: &str) -> Result<(Task, Arc<TaskPayload>), McpError> {
        let mut inner = self.lock();
        inner.sweep();
        inner.expire(id);
        let Some(entry) = inner.tasks.get_mut(id) else {
            return Err(inner.missing(id));
        };
        let payload = match &mut entry.state {
            State::Running { inputs, .. } if !inputs.is_empty() => {
                let requests: serde_json::Map<String, Value> = inputs
                    .iter()
                    .map(|(k, (request, _))| (k.clone(), request.clone()))
                    .collect();
                entry.task.status_message = None;
                match serde_json::from_value(Value::Object(requests)) {
                    Ok(input_requests) => Arc::new(TaskPayload::InputRequired { input_requests }),
                    Err(_) => Arc::new(TaskPayload::Working),
                }
            }
            State::Running {
                progress,
                queued,
                stopping,
                ..
            } => {
                let message = if progress.has_changed().unwrap_or(false) {
                    entry.task.last_updated_at = current_timestamp();
                    progress.borrow_and_update().as_ref().map(status_message)
                } else {
                    progress.borrow().as_ref().map(status_message)
                };
                entry.task.status_message = if let Some(stopping) = stopping {
                    Some((*stopping).to_owned())
                } else if queued.load(std::sync::atomic::Ordering::Relaxed) {
                    Some(
                        "queued: waiting for one of the calls running (toolbind serve --max-concurrent-calls) to end"
                            .into(),
                    )
                } else {
                    message.filter(|m| !m.is_empty())
                };
                Arc::new(TaskPayload::Working)
            }
            State::Done { payload, .. } => payload.clone(),
        };
        Ok((entry.task.clone(), payload))
    }

    /// Task `id`'s call asks the client `request` (`{method, params}`: an elicitation,
    /// a sample, the roots): `tasks/get` shows it among `inputRequests` until
    /// `tasks/update` answers it. The receiver gets the client's result; it fails when the
    /// task is cancelled or expires first.
    /// The question is taken back when the returned [`Question`] is dropped (the call
    /// gave up on it: its ask timeout, the call's end). At most
    /// [`MAX_QUESTIONS`](toolbind::host::MAX_QUESTIONS) are open; a request that is not
    /// one MCP allows in `inputRequests` is refused at once.
    /// `key`: the name the tool gave the question, else the next `input-N`.
    pub(crate) fn ask(
        self: &Arc<Self>,
        id: &str,
        request: Value,
        key: Option<String>,
    ) -> Result<Question, String> {
        let mut inner = self.lock();
        let Some(Entry {
            state:
                State::Running {
                    inputs,
                    asked,
                    stopping,
                    ..
                },
            task,
            ..
        }) = inner.tasks.get_mut(id)
        else {
            return Err("the task has ended".into());
        };
        if stopping.is_some() {
            return Err("the task is being stopped".into());
        }
        let key = super::questions::open_key(
            &request,
            key,
            inputs.len(),
            |k| inputs.contains_key(k),
            asked,
        )?;
        let (tx, rx) = oneshot::channel();
        inputs.insert(key.clone(), (request, tx));
        task.status = TaskStatus::InputRequired;
        task.last_updated_at = current_timestamp();
        Ok(Question {
            answer: rx,
            tasks: Arc::downgrade(self),
            id: id.to_owned(),
            key,
        })
    }

    /// Takes question `key` of task `id` back, unanswered.
    fn withdraw(&self, id: &str, key: &str) {
        let mut inner = self.lock();
        if let Some(Entry {
            state: State::Running { inputs, .. },
            task,
            ..
        }) = inner.tasks.get_mut(id)
            && inputs.remove(key).is_some()
        {
            if inputs.is_empty() {
                task.status = TaskStatus::Working;
            }
            task.last_updated_at = current_timestamp();
        }
    }

    /// `tasks/update` from `from`: each response goes to the question of its key; a key
    /// that names no open question is ignored (the spec). Refused, answering nothing, when
    /// the task was created in another session.
    pub(crate) fn update(
        &self,
        id: &str,
        from: Owner,
        responses: impl IntoIterator<Item = (String, Value)>,
    ) -> Result<(), McpError> {
        let mut inner = self.lock();
        inner.sweep();
        inner.expire(id);
        let Some(entry) = inner.tasks.get_mut(id) else {
            return Err(inner.missing(id));
        };
        if entry.owner != Owner::Anyone && entry.owner != from {
            return Err(McpError::invalid_params(
                format!(
                    "task `{}` was created in another session: only that session may answer its questions (tasks/update); nothing was answered",
                    shortened(id)
                ),
                Some(json!({"taskId": shortened(id)})),
            ));
        }
        if let State::Running { inputs, .. } = &mut entry.state {
            let mut answered = false;
            for (key, value) in responses {
                if let Some((_, tx)) = inputs.remove(&key) {
                    let _ = tx.send(value);
                    answered = true;
                }
            }
            if answered {
                if inputs.is_empty() {
                    entry.task.status = TaskStatus::Working;
                }
                entry.task.last_updated_at = current_timestamp();
            }
        }
        Ok(())
    }

    /// `tasks/cancel`: stops a running task's call through its abort signal (then the
    /// kill, after the grace period); the task settles `cancelled` once the call has
    /// ended. A finished task is left as it is (the same empty answer).
    pub(crate) fn cancel(&self, id: &str) -> Result<(), McpError> {
        let mut inner = self.lock();
        inner.sweep();
        inner.expire(id);
        match inner.tasks.get_mut(id) {
            Some(Entry {
                state:
                    State::Running {
                        cancel,
                        stopping,
                        inputs,
                        ..
                    },
                task,
                ..
            }) => {
                // What the call waits for fails now: the cancel reaches it at once.
                inputs.clear();
                task.status = TaskStatus::Working;
                stopping.get_or_insert("cancelling");
                task.last_updated_at = current_timestamp();
                cancel.cancel();
                Ok(())
            }
            Some(_) => Ok(()),
            None => Err(inner.missing(id)),
        }
    }

    /// How many tasks are unfinished.
    pub(crate) fn running(&self) -> usize {
        self.lock().running
    }
}

impl Entry {
    /// Its TTL has passed: since its creation while unfinished (and not yet stopped for
    /// it), since its end once finished.
    fn due(&self, now: Instant) -> bool {
        match &self.state {
            State::Running { expired, .. } => !*expired && now >= self.deadline,
            State::Done { ended, .. } => {
                now.duration_since(*ended)
                    >= Duration::from_millis(self.task.ttl_ms.unwrap_or_default())
            }
        }
    }
}

impl Inner {
    /// Stops the unfinished tasks whose TTL has passed and drops the finished ones whose
    /// TTL has passed since they ended: every [`SWEEP_EVERY`] at most (the sweeper does it
    /// each second; requests between look at their own task, [`Inner::expire`]).
    fn sweep(&mut self) {
        let now = Instant::now();
        if self
            .swept
            .is_some_and(|at| now.duration_since(at) < SWEEP_EVERY)
        {
            return;
        }
        self.swept = Some(now);
        let due: Vec<String> = self
            .tasks
            .iter()
            .filter(|(_, e)| e.due(now))
            .map(|(id, _)| id.clone())
            .collect();
        for id in due {
            self.expire(&id);
        }
        // Ids of finished tasks dropped since (here, or by a request's own `expire`).
        if self.finished.len() > self.tasks.len() - self.running {
            let tasks = &self.tasks;
            self.finished.retain(|id| tasks.contains_key(id));
        }
    }

    /// Task `id`, if its TTL has passed: stopped if unfinished, dropped if finished.
    fn expire(&mut self, id: &str) {
        let Some(entry) = self.tasks.get_mut(id) else {
            return;
        };
        if !entry.due(Instant::now()) {
            return;
        }
        match &mut entry.state {
            State::Running {
                cancel,
                expired,
                stopping,
                inputs,
                ..
            } => {
                inputs.clear();
                entry.task.status = TaskStatus::Working;
                *expired = true;
                *stopping = Some("expired: stopping");
                entry.task.last_updated_at = current_timestamp();
                cancel.cancel();
            }
            State::Done { .. } => self.drop_finished(id, Gone::Expired),
        }
    }

    /// Drops the oldest finished results while they take more than `memory`.
    fn evict(&mut self, memory: usize) {
        while self.bytes > memory {
            let Some(id) = self.finished.pop_front() else {
                return;
            };
            self.drop_finished(&id, Gone::Evicted);
        }
    }

    fn drop_finished(&mut self, id: &str, why: Gone) {
        match self.tasks.remove(id) {
            Some(Entry {
                state: State::Done { bytes, .. },
                ..
            }) => self.bytes -= bytes,
            // Not a finished task (already dropped, or running): nothing to drop.
            Some(running) => {
                self.tasks.insert(id.to_owned(), running);
                return;
            }
            None => return,
        }
        // `finished` may still name it: `evict` skips such names, `sweep` clears them.
        self.gone.push_back(id.to_owned());
        self.gone_why.insert(id.to_owned(), why);
        while self.gone.len() > GONE_REMEMBERED {
            if let Some(old) = self.gone.pop_front() {
                self.gone_why.remove(&old);
            }
        }
    }

    /// The `-32602` answer for an id this server does not hold.
    fn missing(&self, id: &str) -> McpError {
        let shown = shortened(id);
        let message = match self.gone_why.get(id) {
            Some(Gone::Expired) => format!(
                "task `{shown}` expired: its result was kept for its TTL after it ended, and is gone"
            ),
            Some(Gone::Evicted) => format!(
                "task `{shown}` expired early: finished results held more than this server keeps (toolbind serve --task-memory), and the oldest go first"
            ),
            None => format!(
                "unknown task `{shown}`: no task with this id, or it expired long ago (a task is found only on the server that made it, while it keeps it)"
            ),
        };
        McpError::invalid_params(message, Some(json!({"taskId": shown})))
    }
}

/// A task's terminal payload from its call's result: a crash, a jail that failed or a
/// broken protocol is a protocol-level `failed`; a cancelled call is `cancelled`; anything
/// else the tool returned (its own error, a timeout or limit it ran into, bad arguments)
/// is `completed`, with `isError` where the call failed, as a plain call answers it.
fn payload_of(result: &ToolResult, result_json: JsonObject) -> TaskPayload {
    match result.stop {
        StopReason::Cancelled => TaskPayload::Cancelled,
        StopReason::Crashed
        | StopReason::JailFailed
        | StopReason::ProtocolError
        | StopReason::UnknownTool
        | StopReason::ContractDrift => TaskPayload::Failed {
            error: error_object(
                ErrorCode::INTERNAL_ERROR,
                result.text_content(),
                json!({"stop": result.stop.kind()}),
            ),
        },
        _ => TaskPayload::Completed {
            result: result_json,
        },
    }
}

fn error_object(code: ErrorCode, message: String, data: Value) -> JsonObject {
    let mut error = JsonObject::new();
    error.insert("code".into(), json!(code.0));
    error.insert("message".into(), Value::String(message));
    error.insert("data".into(), data);
    error
}

fn payload_bytes(payload: &TaskPayload) -> usize {
    let object = match payload {
        TaskPayload::Completed { result } => result,
        TaskPayload::Failed { error } => error,
        _ => return 0,
    };
    serde_json::to_vec(object).map_or(0, |v| v.len())
}

/// A running task's `statusMessage`: what the tool last said, with its position.
fn status_message(p: &Progress) -> String {
    let text = p.text_content();
    match (p.progress, p.total) {
        (Some(at), Some(total)) => format!("{at}/{total} {text}").trim_end().to_owned(),
        (Some(at), None) => format!("{at} {text}").trim_end().to_owned(),
        _ => text,
    }
}

impl super::sweeper::Expire for Tasks {
    /// The whole store, whenever the last sweep was.
    fn expire(&self) {
        let mut inner = self.lock();
        inner.swept = None;
        inner.sweep();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store swept every second, as the server's is.
    fn started(limits: Limits) -> Arc<Tasks> {
        let tasks = Tasks::new(limits);
        let weak: Weak<dyn super::super::sweeper::Expire> = Arc::downgrade(&tasks) as _;
        super::super::sweeper::start(vec![weak]);
        tasks
    }

    fn limits(max_tasks: usize, ttl_ms: u64, memory: usize) -> Limits {
        Limits {
            max_tasks,
            ttl: Duration::from_millis(ttl_ms),
            memory,
        }
    }

    fn ok(text: &str) -> (ToolResult, JsonObject) {
        let r = ToolResult::text(text);
        let mut o = JsonObject::new();
        o.insert("content".into(), json!([{"type": "text", "text": text}]));
        (r, o)
    }

    #[tokio::test]
    async fn a_task_is_observable_at_once_and_ends_with_its_result() {
        let tasks = started(Limits::default());
        let (task, started) = tasks.create("t", Owner::Anyone, Duration::ZERO, 0).unwrap();
        assert_eq!(task.task_id.len(), 32);
        assert_eq!(task.ttl_ms, Some(300_000));
        let got = tasks.get(&task.task_id).unwrap();
        assert_eq!(got.status(), TaskStatus::Working);
        assert!(got.task.status_message.unwrap().starts_with("queued"));
        started.running();
        started
            .progress
            .send_replace(Some(Progress::text("half").at(1.0, Some(2.0))));
        let got = tasks.get(&task.task_id).unwrap();
        assert_eq!(got.task.status_message.as_deref(), Some("1/2 half"));
        let (r, o) = ok("done");
        started.finish(&r, o);
        let got = tasks.get(&task.task_id).unwrap();
        assert_eq!(got.status(), TaskStatus::Completed);
        assert!(matches!(got.payload, TaskPayload::Completed { .. }));
        assert_eq!(tasks.running(), 0);
    }

    #[tokio::test]
    async fn ids_are_unique_and_unknown_ones_are_invalid_params() {
        let tasks = started(Limits::default());
        let a = tasks
            .create("t", Owner::Anyone, Duration::ZERO, 0)
            .unwrap()
            .0
            .task_id;
        let b = tasks
            .create("t", Owner::Anyone, Duration::ZERO, 0)
            .unwrap()
            .0
            .task_id;
        assert_ne!(a, b);
        for e in [
            tasks.get("nope").unwrap_err(),
            tasks.cancel("nope").unwrap_err(),
            tasks.update("nope", Owner::Anyone, []).unwrap_err(),
        ] {
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
            assert!(e.message.contains("unknown task `nope`"), "{}", e.message);
        }
        // A hostile id is not echoed whole.
        let long = "x".repeat(100_000);
        assert!(tasks.get(&long).unwrap_err().message.len() < 1000);
    }

    #[tokio::test]
    async fn one_more_than_max_tasks_is_refused_until_one_ends() {
        let tasks = started(limits(2, 60_000, DEFAULT_MEMORY));
        let (_, a) = tasks.create("t", Owner::Anyone, Duration::ZERO, 0).unwrap();
        let _b = tasks.create("t", Owner::Anyone, Duration::ZERO, 0).unwrap();
        let e = tasks
            .create("t", Owner::Anyone, Duration::ZERO, 0)
            .unwrap_err();
        assert_eq!(e.code, BUSY);
        assert!(e.message.contains("--max-tasks"), "{}", e.message);
        let (r, o) = ok("x");
        a.finish(&r, o);
        let _c = tasks.create("t", Owner::Anyone, Duration::ZERO, 0).unwrap();
    }

    #[tokio::test]
    async fn cancel_stops_the_call_and_a_cancelled_result_settles_cancelled() {
        let tasks = started(Limits::default());
        let (task, started) = tasks.create("t", Owner::Anyone, Duration::ZERO, 0).unwrap();
        tasks.cancel(&task.task_id).unwrap();
        assert!(started.cancel.is_cancelled());
        let r = ToolResult::stopped(StopReason::Cancelled, "cancelled");
        started.finish(&r, JsonObject::new());
        assert_eq!(
            tasks.get(&task.task_id).unwrap().status(),
            TaskStatus::Cancelled
        );
        // Idempotent on a finished task.
        tasks.cancel(&task.task_id).unwrap();
    }

    #[tokio::test]
    async fn a_crash_is_failed_with_an_error_and_no_result() {
        let tasks = started(Limits::default());
        let (task, s) = tasks.create("t", Owner::Anyone, Duration::ZERO, 0).unwrap();
        let r = ToolResult::stopped(StopReason::Crashed, "the tool's process died");
        s.finish(&r, JsonObject::new());
        let got = tasks.get(&task.task_id).unwrap();
        let TaskPayload::Failed { error } = got.payload else {
            panic!("{got:?}")
        };
        assert_eq!(error["code"], json!(-32603));
        assert_eq!(error["message"], json!("the tool's process died"));
        assert_eq!(error["data"]["stop"], json!("crashed"));
    }

    #[tokio::test]
    async fn past_its_ttl_a_running_task_is_stopped_and_failed_then_dropped() {
        let tasks = started(limits(10, 50, DEFAULT_MEMORY));
        let (task, started) = tasks
            .create("slow", Owner::Anyone, Duration::ZERO, 0)
            .unwrap();
        assert_eq!(task.ttl_ms, Some(50));
        tokio::time::sleep(Duration::from_millis(80)).await;
        tasks.get(&task.task_id).unwrap();
        assert!(started.cancel.is_cancelled(), "the TTL stops the call");
        let r = ToolResult::stopped(StopReason::Cancelled, "cancelled");
        started.finish(&r, JsonObject::new());
        let got = tasks.get(&task.task_id).unwrap();
        let TaskPayload::Failed { error } = got.payload else {
            panic!("{got:?}")
        };
        assert!(
            error["message"].as_str().unwrap().contains("task expired"),
            "{error:?}"
        );
        tokio::time::sleep(Duration::from_millis(80)).await;
        let e = tasks.get(&task.task_id).unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert!(e.message.contains("expired"), "{}", e.message);
    }

    #[tokio::test]
    async fn a_tool_that_may_run_longer_than_the_ttl_gets_its_timeout_as_ttl() {
        let tasks = started(limits(10, 50, DEFAULT_MEMORY));
        let (task, _s) = tasks
            .create("slow", Owner::Anyone, Duration::from_secs(600), 0)
            .unwrap();
        assert_eq!(task.ttl_ms, Some(600_000));
    }

    #[tokio::test]
    async fn results_over_the_memory_bound_drop_the_oldest_first() {
        let tasks = started(limits(100, 60_000, MIN_MEMORY));
        let big = "y".repeat(MIN_MEMORY / 3);
        let mut ids = Vec::new();
        for _ in 0..5 {
            let (task, s) = tasks.create("t", Owner::Anyone, Duration::ZERO, 0).unwrap();
            let (r, o) = ok(&big);
            s.finish(&r, o);
            ids.push(task.task_id);
        }
        let e = tasks.get(&ids[0]).unwrap_err();
        assert!(e.message.contains("--task-memory"), "{}", e.message);
        assert!(tasks.get(&ids[4]).is_ok());
        assert!(tasks.lock().bytes <= MIN_MEMORY);
    }

    #[tokio::test]
    async fn a_call_lost_without_a_result_fails_its_task_and_frees_its_slot() {
        let tasks = started(limits(1, 60_000, DEFAULT_MEMORY));
        let (task, started) = tasks.create("t", Owner::Anyone, Duration::ZERO, 0).unwrap();
        drop(started);
        let got = tasks.get(&task.task_id).unwrap();
        assert_eq!(got.status(), TaskStatus::Failed, "{got:?}");
        assert_eq!(tasks.running(), 0);
        let _again = tasks.create("t", Owner::Anyone, Duration::ZERO, 0).unwrap();
    }

    #[tokio::test]
    async fn a_call_that_returned_as_its_ttl_passed_keeps_its_result() {
        let tasks = started(limits(10, 30, DEFAULT_MEMORY));
        let (task, started) = tasks.create("t", Owner::Anyone, Duration::ZERO, 0).unwrap();
        tokio::time::sleep(Duration::from_millis(60)).await;
        let got = tasks.get(&task.task_id).unwrap();
        assert_eq!(
            got.task.status_message.as_deref(),
            Some("expired: stopping")
        );
        let (r, o) = ok("made it");
        started.finish(&r, o);
        let got = tasks.get(&task.task_id).unwrap();
        assert_eq!(got.status(), TaskStatus::Completed, "{got:?}");
    }

    #[tokio::test]
    async fn a_cancelled_task_says_so_until_it_ends() {
        let tasks = started(Limits::default());
        let (task, started) = tasks.create("t", Owner::Anyone, Duration::ZERO, 0).unwrap();
        started.running();
        tasks.cancel(&task.task_id).unwrap();
        started
            .progress
            .send_replace(Some(Progress::text("still going")));
        let got = tasks.get(&task.task_id).unwrap();
        assert_eq!(got.task.status_message.as_deref(), Some("cancelling"));
    }

    #[tokio::test]
    async fn the_arguments_of_unfinished_tasks_are_bounded_by_the_memory_limit() {
        let tasks = started(limits(100, 60_000, MIN_MEMORY));
        let (_, a) = tasks
            .create("t", Owner::Anyone, Duration::ZERO, MIN_MEMORY / 2)
            .unwrap();
        let _b = tasks
            .create("t", Owner::Anyone, Duration::ZERO, MIN_MEMORY / 2)
            .unwrap();
        let e = tasks
            .create("t", Owner::Anyone, Duration::ZERO, 10)
            .unwrap_err();
        assert_eq!(e.code, BUSY);
        assert!(e.message.contains("--task-memory"), "{}", e.message);
        let (r, o) = ok("x");
        a.finish(&r, o);
        let _c = tasks
            .create("t", Owner::Anyone, Duration::ZERO, 10)
            .unwrap();
    }

    #[tokio::test]
    async fn an_absurd_timeout_or_ttl_does_not_overflow() {
        let tasks = started(limits(10, u64::MAX, DEFAULT_MEMORY));
        let (task, _s) = tasks.create("t", Owner::Anyone, Duration::MAX, 0).unwrap();
        assert_eq!(task.ttl_ms, Some(MAX_TTL.as_millis() as u64));
        assert!(tasks.get(&task.task_id).is_ok());
    }

    #[tokio::test]
    async fn only_the_creating_session_answers_a_tasks_questions() {
        let tasks = started(Limits::default());
        let (task, _s) = tasks
            .create("t", Owner::Session(1), Duration::ZERO, 0)
            .unwrap();
        let ask = |key: &str| {
            tasks
                .ask(
                    &task.task_id,
                    json!({"method": "roots/list", "params": {}}),
                    Some(key.into()),
                )
                .unwrap()
        };
        let mut q = ask("approval");
        for other in [Owner::Session(2), Owner::Anyone] {
            let e = tasks
                .update(
                    &task.task_id,
                    other,
                    [("approval".into(), json!({"roots": []}))],
                )
                .unwrap_err();
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
            assert!(e.message.contains("another session"), "{}", e.message);
        }
        assert_eq!(
            tasks.get(&task.task_id).unwrap().status(),
            TaskStatus::InputRequired,
            "still waiting for its own session"
        );
        tasks
            .update(
                &task.task_id,
                Owner::Session(1),
                [("approval".into(), json!({"roots": []}))],
            )
            .unwrap();
        assert_eq!((&mut q.answer).await.unwrap(), json!({"roots": []}));
    }

    #[tokio::test]
    async fn a_question_waits_in_the_task_until_its_answer_or_the_cancel() {
        let tasks = started(Limits::default());
        let (task, _s) = tasks.create("t", Owner::Anyone, Duration::ZERO, 0).unwrap();
        let mut answer = tasks
            .ask(
                &task.task_id,
                json!({"method": "roots/list", "params": {}}),
                None,
            )
            .unwrap();
        let got = tasks.get(&task.task_id).unwrap();
        let TaskPayload::InputRequired { input_requests } = &got.payload else {
            panic!("{got:?}")
        };
        assert_eq!(got.status(), TaskStatus::InputRequired);
        let key = input_requests.keys().next().unwrap().clone();
        tasks
            .update(&task.task_id, Owner::Anyone, [(key, json!({"roots": []}))])
            .unwrap();
        assert_eq!((&mut answer.answer).await.unwrap(), json!({"roots": []}));
        assert_eq!(
            tasks.get(&task.task_id).unwrap().status(),
            TaskStatus::Working
        );
        // A cancel fails what is still asked.
        let mut pending = tasks
            .ask(
                &task.task_id,
                json!({"method": "roots/list", "params": {}}),
                None,
            )
            .unwrap();
        // Given up on: taken back out of the task.
        let given_up = tasks
            .ask(
                &task.task_id,
                json!({"method": "roots/list", "params": {}}),
                None,
            )
            .unwrap();
        drop(given_up);
        let got = tasks.get(&task.task_id).unwrap();
        let TaskPayload::InputRequired { input_requests } = &got.payload else {
            panic!("{got:?}")
        };
        assert_eq!(input_requests.len(), 1);
        // Not a request a client can be asked: refused at once.
        assert!(
            tasks
                .ask(&task.task_id, json!({"method": "ping"}), None)
                .is_err()
        );
        tasks.cancel(&task.task_id).unwrap();
        assert!((&mut pending.answer).await.is_err());
        assert_eq!(
            tasks.get(&task.task_id).unwrap().status(),
            TaskStatus::Working
        );
        // A task being stopped takes no more questions.
        assert!(
            tasks
                .ask(
                    &task.task_id,
                    json!({"method": "roots/list", "params": {}}),
                    None
                )
                .is_err()
        );
    }
}
