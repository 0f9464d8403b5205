//! Subprocess executors: run TypeScript/JavaScript (Node), Python and bash tools for real.
//!
//! [`SubprocessExecutor`] implements [`Executor`]: every seed-format entry runs unchanged —
//! `execute(toolCallId, params, signal, onUpdate)` for Node,
//! `execute(tool_call_id, params, signal, on_update)` for Python, a script reading JSON on
//! stdin for bash (see the `bash` notes below).
//!
//! # How a call runs
//!
//! - Node and Python tools run inside a small harness shipped in this crate (written to
//!   [`ExecConfig::cache_dir`] at first use). The harness imports the entry once and talks
//!   to the runtime in JSON lines over fd 3 (a socket); the tool's own stdout is joined to
//!   its stderr, so `console.log` and `print` cannot corrupt the protocol. Anything the
//!   runtime cannot parse is a protocol error with a clear message.
//! - TypeScript entries are transpiled in Rust (oxc, feature `typescript`, on by default)
//!   into a content-addressed cache with inline source maps; Node runs with
//!   `--enable-source-maps`, so stack traces name `.ts` lines.
//! - Every tool process leads its own process group. Cancelling a call fires the tool's
//!   `AbortSignal` (SIGTERM to the group for bash); if the call has not returned after
//!   [`ExecConfig::grace`], the whole group — grandchildren included — gets SIGKILL. The
//!   call's timeout ([`ExecCall::timeout`](crate::exec::ExecCall::timeout), resolved once by
//!   the runtime) does the same and returns an error result saying it timed out after N s.
//!   One state machine owns both endings for bash and for warm workers alike.
//! - A tool sees a scrubbed environment: `PATH`, `HOME`, `LANG`, `LC_ALL`, `TMPDIR`, `TZ`,
//!   `USER`, the names in [`ExecConfig::env_allow`] and the tool's own `env` list (when the
//!   agent has them), the pairs of [`ExecConfig::env_set`], and `TOOL_DIR` (the tool
//!   folder). It runs in [`ExecConfig::cwd`] (the agent's working directory by default).
//! - By default a Node or Python tool's process stays warm and serves further calls, several
//!   in flight at once; module state persists between calls. A worker that dies is replaced
//!   at the next call and its calls in flight get an error result naming the cause. Idle
//!   workers are stopped after [`ExecConfig::idle_timeout`].
//! - Calls sharing a warm worker are isolated: a result with no JSON form fails only its
//!   own call; the protocol socket is close-on-exec inside the harness, so a tool's child
//!   can neither write into it nor hold it open; an exception from a timer is charged to the
//!   call whose async context threw it if that call is in flight, else logged; the
//!   harness's exit is noticed even while a daemon holds the socket. When the worker must
//!   die, the other calls on it are told a neighbouring call may have broken it; a call that
//!   never reached a dead worker, or one of a tool annotated `idempotent`, is retried once
//!   on a fresh worker (a retry would repeat other tools' side effects). One-shot mode (a fresh process
//!   per call) is available per tool (`worker: oneshot` → [`WorkerMode::OneShot`]) and for
//!   the whole runtime ([`ExecConfig::worker_mode`]). bash tools are always one-shot.
//! - Progress never grows memory: the Node harness keeps only a call's latest unsent
//!   update while its socket is congested, and the runtime queues at most 8 updates (1 MiB)
//!   per call, dropping the oldest; at most one update per
//!   [`ExecConfig::progress_interval`] is forwarded, and what is queued goes out, in order,
//!   before the result. A tool reporting now and then loses nothing; a flood is coalesced.
//! - A call's stderr lines go to its [`LogSink`], when it has
//!   one: every line of a bash tool; a warm node or python worker's lines while it serves
//!   that one call alone (and for a moment after, for what it wrote just before
//!   returning). Lines written while several calls share the worker are not forwarded: a
//!   shared process's stderr cannot be attributed, and a line must never reach the wrong
//!   caller. Lines are cut at 4 KiB, handed over as they are read (nothing queues), and
//!   redacted of every secret sent to the worker.
//! - Memory stays bounded whatever a tool prints: only a head and a tail of stderr are kept
//!   ([`ExecConfig::max_log_bytes`]), result text is capped at
//!   [`ExecConfig::max_text_bytes`] with a note, protocol lines at
//!   [`ExecConfig::max_line_bytes`].
//! - Sensitive param values travel only over the protocol socket or stdin — never argv or
//!   the environment — and are redacted from every error text the runtime builds.
//! - Dropping the executor kills every worker's process group; a harness whose runtime
//!   disappears (its fd 3 closes) kills its own group.
//! - Every process runs in a bubblewrap jail ([`ExecConfig::sandbox`], a
//!   [`SandboxPolicy`](crate::sandbox::SandboxPolicy)): its own PID namespace (nothing it starts outlives it or the
//!   agent), a read-only view of the system, the interpreter and the tool folder, a
//!   writable per-tool state folder as `HOME` and working directory, a private `/tmp`,
//!   the granted paths, the network unless turned off, and limits (memory, CPU,
//!   processes, file size, open files) that end a runaway tool with an error naming the
//!   limit. [`SandboxMode::Auto`](crate::sandbox::SandboxMode::Auto) (the default) falls back to process groups with one
//!   warning where bwrap cannot run; see `docs/sandbox.md`.
//!
//! # Example
//!
//! ```no_run
//! # async fn demo(spec: toolbind::ToolInfo) {
//! use toolbind::exec::{ExecConfig, SubprocessExecutor};
//! use toolbind::exec::{ExecCall, Executor};
//!
//! let executor = SubprocessExecutor::new(ExecConfig::default());
//! let mut params = serde_json::Map::new();
//! params.insert("query".into(), "rust".into());
//! let result = executor
//!     .execute(ExecCall::new(&spec, params).tool_call_id("call_1"))
//!     .await;
//! println!("{}", result.text_content());
//! # }
//! ```

mod bash;
mod blobs;
mod cache;
mod config;
mod error;
mod exit;
pub(crate) mod group;
mod launch;
mod pool;
mod prepare;
pub(crate) mod process;
mod protocol;
mod pump;
pub(crate) mod sandbox;
pub(crate) mod stop;
#[cfg(feature = "typescript")]
mod transpile;
mod worker;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use toolbind_codegen::model::{Language, ToolSpec};

use crate::result::{StopReason, ToolResult};
use pool::{WorkerKey, worker_stamp};
use serde_json::Value;
use worker::{CallEnd, Worker};

#[cfg(feature = "mcp")]
pub(crate) use error::{InterpError, JailError, ProbeError, SetupError};
pub(crate) use error::{StartError, Subject};

use crate::ToolInfo;
pub use crate::executor::{
    DEFAULT_TIMEOUT, ExecCall, ExecFuture, Executor, LogSink, MAX_LOG_LINE_BYTES, PrepareFuture,
    ProgressSink,
};
pub use config::ExecConfig;
use sandbox::SandboxStatus;
pub use stop::MAX_TIMEOUT;
pub use toolbind_codegen::model::WorkerMode;

/// The Node harness (ES module), embedded in the crate.
pub(crate) const NODE_HARNESS: &str = include_str!("../../harness/node.mjs");
/// The Python harness, embedded in the crate.
pub(crate) const PYTHON_HARNESS: &str = include_str!("../../harness/python.py");

/// The byte limits, sanitised.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub line: usize,
    pub text: usize,
    pub log: usize,
    pub binary: usize,
}

impl From<&ExecConfig> for Limits {
    fn from(c: &ExecConfig) -> Self {
        Limits {
            line: c.max_line_bytes.max(1024),
            text: c.max_text_bytes.max(1),
            log: c.max_log_bytes.max(64),
            binary: c.max_binary_bytes,
        }
    }
}

/// Runs tool calls in subprocesses (Node, Python, bash). See the [module docs](self).
///
/// Cheap to share (`Arc<SubprocessExecutor>`); dropping the last handle kills every warm
/// worker.
pub struct SubprocessExecutor {
    inner: Arc<Inner>,
}

struct Inner {
    config: ExecConfig,
    /// Its own `Arc`: the reaper and the spares' timers hold it weakly, so the last
    /// executor handle's drop still kills every worker.
    pool: Arc<pool::Pool>,
    harness: Mutex<HashMap<&'static str, PathBuf>>,
    sandbox: sandbox::Sandbox,
}

impl SubprocessExecutor {
    /// An executor with `config`.
    pub fn new(config: ExecConfig) -> Self {
        SubprocessExecutor {
            inner: Arc::new(Inner {
                sandbox: sandbox::Sandbox::new(config.sandbox.clone()),
                config,
                pool: Arc::default(),
                harness: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ExecConfig {
        &self.inner.config
    }

    /// Which sandbox is in force for tools of `languages`, and why. Probes bwrap with each
    /// language's interpreter (once per executor; the result is cached).
    pub fn sandbox_status(&self, languages: &[Language]) -> SandboxStatus {
        let mut interps: Vec<(sandbox::Kind, String)> = Vec::new();
        for l in languages {
            let i = self.interpreter(*l);
            if !interps.contains(&i) {
                interps.push(i);
            }
        }
        self.inner.sandbox.status(&interps)
    }

    fn interpreter(&self, language: Language) -> (sandbox::Kind, String) {
        let c = &self.inner.config;
        match language {
            Language::Python => (sandbox::Kind::Python, c.python.clone()),
            Language::Bash => (sandbox::Kind::Bash, c.bash.clone()),
            Language::TypeScript => (sandbox::Kind::Node, c.node.clone()),
        }
    }

    /// The jail of one process of `tool` (`None`: it runs unjailed).
    fn jail(
        &self,
        tool: &ToolSpec,
        binds: &[PathBuf],
    ) -> Result<Option<sandbox::Jail>, StartError> {
        let (kind, program) = self.interpreter(tool.language);
        // A bash script commonly runs python3 or node: let it find the configured ones.
        let also = match tool.language {
            Language::Bash => vec![
                self.interpreter(Language::Python),
                self.interpreter(Language::TypeScript),
            ],
            _ => Vec::new(),
        };
        self.inner
            .sandbox
            .jail(
                kind,
                &program,
                &also,
                tool,
                binds,
                self.caller_dir().as_deref(),
            )
            .map_err(|e| StartError::Jail(e, Subject::Tool))
    }

    /// The directory tools run in: the configured one, else the agent's own (a jailed
    /// tool runs there when the jail shows it, in its state folder otherwise).
    fn caller_dir(&self) -> Option<PathBuf> {
        self.inner
            .config
            .cwd
            .clone()
            .or_else(|| std::env::current_dir().ok())
    }

    /// How many warm workers are alive.
    pub fn warm_workers(&self) -> usize {
        self.inner.pool.alive()
    }

    /// Stops every warm worker (their calls in flight get an error result).
    pub fn shutdown(&self) {
        self.inner.pool.shutdown();
    }

    async fn run(&self, call: &ExecCall<'_>) -> ToolResult {
        // A call made without the runtime (`ExecCall::new` by an executor of the user's that
        // wraps this one) records on the span current where it runs, as before.
        let current;
        let span = if call.span.is_none() {
            current = tracing::Span::current();
            &current
        } else {
            &call.span
        };
        let tool = call.tool.spec();
        let config = &self.inner.config;
        // Resolved by the caller (the runtime, or `ExecCall::new`); enforced as given.
        let timeout = call.timeout.min(MAX_TIMEOUT);
        let secrets = crate::secret::secrets_of(tool, &call.params);
        let mode = match tool.worker {
            WorkerMode::Default => config.worker_mode,
            m => m,
        };
        // The entry is looked for when a process is about to start: here for a bash or
        // one-shot tool (a process per call); for a warm worker in `warm_worker`, when it
        // starts one or stamps the sources, so a worker found current in the last second
        // serves the call without a `stat`.
        let starts_process = tool.language == Language::Bash || mode == WorkerMode::OneShot;
        let Some(entry) = tool.entry_path().filter(|p| !starts_process || p.is_file()) else {
            return start_failed(no_entry(tool));
        };
        if tool.language == Language::Bash {
            let jail = match self.jail(tool, &[]) {
                Ok(j) => j,
                Err(e) => return start_failed(e),
            };
            crate::telemetry::note_process(span, "bash", jail.is_some());
            return bash::run(call, &entry, config, timeout, &secrets, jail).await;
        }
        let idempotent = tool.annotations.idempotent == Some(true);
        let mut retried = false;
        loop {
            let spare = (mode == WorkerMode::OneShot && !retried)
                .then(|| self.inner.pool.take_spare(&entry))
                .flatten();
            let worker = if let Some(w) = spare {
                crate::telemetry::note_process(span, "oneshot_spare", w.jailed());
                w
            } else if mode == WorkerMode::OneShot {
                let launch = match self.launch(tool, &entry).await {
                    Ok(l) => l,
                    Err(e) => return start_failed(e),
                };
                let jail = match self.jail(tool, &launch.binds) {
                    Ok(j) => j,
                    Err(e) => return start_failed(e),
                };
                match Worker::spawn(&launch, tool, config, jail) {
                    Ok(w) => {
                        crate::telemetry::note_process(span, "oneshot_started", w.jailed());
                        w
                    }
                    Err(e) => return start_failed(e.into()),
                }
            } else {
                match self.warm_worker(tool, &entry, span).await {
                    Ok(w) => w,
                    Err(e) => return start_failed(e),
                }
            };
            let end = worker.call(call, timeout, config.grace, &secrets).await;
            if mode == WorkerMode::OneShot {
                worker.kill();
            }
            // Once, on a fresh worker: a call that never reached the dead one, or a call of an
            // idempotent tool whose worker a neighbouring call broke.
            match end {
                CallEnd::Done(result) => return result,
                CallEnd::NotStarted(_) if !retried => {}
                CallEnd::NeighbourBroke(_) if !retried && idempotent => {}
                CallEnd::NotStarted(reason) => {
                    return ToolResult::stopped(StopReason::Crashed, reason);
                }
                CallEnd::NeighbourBroke(result) => return result,
            }
            retried = true;
        }
    }

    /// The warm worker of `tool`, started (or restarted) when needed.
    async fn warm_worker(
        &self,
        tool: &ToolSpec,
        entry: &Path,
        span: &tracing::Span,
    ) -> Result<Arc<Worker>, StartError> {
        let pool = &self.inner.pool;
        pool.ensure_reaper(self.inner.config.idle_timeout);
        let key = WorkerKey::of(tool);
        // Stamping stats the tool's source files: at most once per `source_check_interval`
        // (a second) per worker, so a busy worker's calls do not each pay for it.
        if let Some(w) = pool.checked_within(&key, self.inner.config.source_check_interval) {
            crate::telemetry::note_process(span, "warm_reused", w.jailed());
            return Ok(w);
        }
        if !entry.is_file() {
            return Err(no_entry(tool));
        }
        let stamp = worker_stamp(tool, entry);
        if let Some(w) = pool.current(&key, stamp) {
            crate::telemetry::note_process(span, "warm_reused", w.jailed());
            return Ok(w);
        }
        let launch = self.launch(tool, entry).await?;
        let mut jail = self.jail(tool, &launch.binds)?;
        if let Some(j) = &mut jail {
            j.warm = true;
        }
        let worker = pool.current_or_start(key, stamp, || {
            Worker::spawn(&launch, tool, &self.inner.config, jail).map_err(StartError::from)
        })?;
        // Started here, or by a call that got there first.
        crate::telemetry::note_process(span, "warm", worker.jailed());
        Ok(worker)
    }
}

impl Executor for SubprocessExecutor {
    fn execute<'a>(&'a self, call: ExecCall<'a>) -> ExecFuture<'a> {
        Box::pin(async move {
            let mut result = self.run(&call).await;
            if result.stop == StopReason::ToolError {
                let (kind, program) = self.interpreter(call.tool.language());
                let cwd = self.caller_dir();
                // The tool's own variables (`env:`, the owner's), not the base ones.
                let mut env = process::environment(call.tool.spec(), &self.inner.config);
                env.retain(|(n, _)| !process::BASE_ENV.contains(&n.as_str()) && n != "TOOL_DIR");
                if let Some(note) = self.inner.sandbox.hidden_paths_note(
                    (kind, &program),
                    call.tool.spec(),
                    &call.params,
                    cwd.as_deref(),
                    &env,
                    &result.text_content(),
                ) {
                    result.content.push(crate::result::Content::text(note));
                }
            }
            result
        })
    }

    fn prepare<'a>(
        &'a self,
        tool: &'a ToolInfo,
        args: Value,
        timeout: Duration,
    ) -> PrepareFuture<'a> {
        Box::pin(async move {
            self.prepare_args(tool.spec(), args, timeout)
                .await
                .map_err(|e| e.to_string())
        })
    }

    /// Whether a node or python entry exports `prepareArguments` (python:
    /// `prepare_arguments`), as its harness's hello said within the last second. Older
    /// than that, or not known yet (a first call), the answer is `true`, meaning "maybe":
    /// [`prepare`](Executor::prepare) then takes the process the call will use — the warm
    /// worker, whose sources `warm_worker` stamps once per `source_check_interval` (an edited entry gets a
    /// new worker and so a new hello), or for a one-shot tool a process that serves the call
    /// if its entry has none — reads its hello, and sends no `prepare` line to an entry
    /// without one. So this never walks the tool's folder itself. A bash tool has none.
    fn prepares(&self, tool: &ToolInfo) -> bool {
        let tool = tool.spec();
        if tool.language == Language::Bash {
            return false;
        }
        let Some(entry) = tool.entry_path() else {
            return false;
        };
        let known = self
            .inner
            .pool
            .learned(&entry, self.inner.config.source_check_interval);
        match known {
            // A hello's answer stands as long as a warm worker's stamp of its sources.
            Some(has) => has,
            // Nothing to prepare: the call reports the missing entry.
            _ => entry.is_file(),
        }
    }

    fn sandbox(&self, languages: &[Language]) -> Option<SandboxStatus> {
        Some(self.sandbox_status(languages))
    }

    /// `false`: a warm call's future is polled for every message of its tool; what it
    /// records goes to [`ExecCall::span`] (the process it had, the host's notices).
    fn polls_in_call_span(&self, _: &ToolInfo) -> bool {
        false
    }
}

impl std::fmt::Debug for SubprocessExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubprocessExecutor")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// Why a tool whose entry file is missing cannot run.
fn no_entry(tool: &ToolSpec) -> StartError {
    StartError::NoEntry {
        tool: tool.name.clone(),
        dir: tool.dir.clone(),
        expected: tool.language.entry_candidates(),
    }
}

/// A tool process that could not start: a jail failure, else a crash.
fn start_failed(e: StartError) -> ToolResult {
    ToolResult::stopped(e.stop_reason(), e.to_string())
}
