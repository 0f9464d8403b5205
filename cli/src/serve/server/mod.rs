//! The MCP server of `toolbind serve`, whatever carries its messages: the tools of the
//! served folders (reloaded when they change), the [`ServerHandler`] that answers
//! requests, and the [`State`] every session shares.
//!
//! Its rooms: [`watch`] (the folder watch), [`handler`] (the requests), [`call`],
//! [`round`] and [`task`] (a `tools/call` plain, in rounds, as a task), [`resources`]
//! (subscriptions, spill files) and [`results`] (result mapping).

use crate::lock::RwLocked;
use std::path::PathBuf;
use std::sync::{Arc, RwLock, Weak};
use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use serde_json::Value;
use tokio::sync::broadcast;
use toolbind::exec::{ExecConfig, SubprocessExecutor};
use toolbind::{CallOptions, CancelToken, Runtime, ToolResult};

use super::config::{Config, Offer, Timeouts};
use super::logging::log;
use super::sweeper::{self, Expire};
use super::{logging, rounds, spills, tasks};

mod call;
mod handler;
mod resources;
mod results;
mod round;
mod task;
mod watch;

use resources::Subscriptions;
pub(crate) use resources::{MAX_SUBSCRIPTION_URI, MAX_SUBSCRIPTIONS};
pub(crate) use watch::watch;
use watch::{Changed, Snapshot};

/// Loads the tools and logs what is served `over` what; the caller runs [`watch`].
pub(crate) fn start(config: &Config, over: &str) -> Result<Arc<State>, crate::exit::Failure> {
    let rounds = Arc::new(
        rounds::Rounds::new(config.rounds, config.request_state_key.clone())
            .map_err(crate::exit::Failure::failed)?,
    );
    let spill_dir = config.spill_dir.clone();
    let dirs = config.dirs.clone();
    let timeout = config.timeouts;
    let ask = timeout
        .ask
        .unwrap_or(toolbind::runtime::DEFAULT_ASK_TIMEOUT);
    if rounds.ttl() > ask {
        log(&format!(
            "warning: --pending-ttl ({} s) is longer than --ask-timeout ({} s): a question still fails in its tool {} s after it was asked",
            rounds.ttl().as_secs_f64(),
            ask.as_secs_f64(),
            ask.as_secs_f64()
        ));
    }
    let executor = Arc::new(SubprocessExecutor::new(
        ExecConfig::default()
            .sandbox(config.sandbox.clone())
            .spill_dir(&spill_dir),
    ));
    let offer = Arc::new(config.offer.clone());
    let snapshot = Snapshot::load(&dirs, &executor, &spill_dir, timeout, &offer);
    log(&format!(
        "serving {} tool{} from {} over {over}",
        snapshot.runtime.registry().len(),
        if snapshot.runtime.registry().len() == 1 {
            ""
        } else {
            "s"
        },
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let (changed, _) = broadcast::channel(16);
    let tasks = tasks::Tasks::new(config.tasks);
    // One sweeper for both stores: what outlived its TTL goes even when no request comes.
    let (swept_tasks, swept_rounds): (Weak<dyn Expire>, Weak<dyn Expire>) =
        (Arc::downgrade(&tasks) as _, Arc::downgrade(&rounds) as _);
    sweeper::start(vec![swept_tasks, swept_rounds]);
    Ok(Arc::new(State {
        // `--stateless` HTTP has no session to hold a `resources/subscribe` in.
        subscriptions: config.subscriptions(),
        dirs,
        spill_dir,
        timeout,
        offer,
        executor,
        current: RwLock::new(Arc::new(snapshot)),
        changed,
        shutdown: CancelToken::new(),
        calls: Arc::new(tokio::sync::Semaphore::new(config.max_concurrent_calls)),
        tasks,
        rounds,
        spills: spills::Spills::default(),
        queue_calls: config.http.is_none(),
    }))
}

/// How long a call's answer may wait for the log messages queued before it to go out
/// (the queue is rate-limited: see [`logging`]).
const FLUSH: Duration = Duration::from_secs(1);

/// What every session of one server shares: the tools, reloaded by [`watch`].
pub(crate) struct State {
    /// Whether sessions may subscribe to resources (`resources/subscribe`): not under
    /// `--stateless`.
    subscriptions: bool,
    dirs: Vec<PathBuf>,
    spill_dir: PathBuf,
    timeout: Timeouts,
    /// `--progressive`, `--skills`, `--tool-skills`.
    offer: Arc<Offer>,
    pub(crate) executor: Arc<SubprocessExecutor>,
    current: RwLock<Arc<Snapshot>>,
    /// Fires when the tool list or the tools' documentation changed: each session's
    /// `list_changed` notifier and `subscriptions/listen` stream listen to it.
    changed: broadcast::Sender<Changed>,
    /// Cancelled when a drain's deadline passes: calls still running are stopped and
    /// answered with an error result saying the server shut down, before the transport
    /// closes.
    pub(crate) shutdown: CancelToken,
    /// `--max-concurrent-calls`: over stdio a call waits here for a running one to end
    /// (HTTP refuses one more before it gets this far); a task's call waits here too.
    calls: Arc<tokio::sync::Semaphore>,
    /// The tasks of every session (MCP's tasks extension).
    tasks: Arc<tasks::Tasks>,
    /// MCP 2026-07-28 calls that wait for their client's answers.
    rounds: Arc<rounds::Rounds>,
    /// The spill files this server handed out, and to which session.
    spills: spills::Spills,
    /// Over stdio a call waits for a slot; over HTTP it is refused (429 from the
    /// transport, or a JSON-RPC error here when tasks hold the slots).
    queue_calls: bool,
}

impl State {
    /// Stops the unfinished tasks and the MCP 2026-07-28 calls, those waiting for their
    /// client's answers included (the server is ending: no client could fetch what they
    /// return), through their calls' abort signal, and waits for them, up to the grace
    /// period and 2 s: a tool stopped so can clean up, rather than being killed with the
    /// executor.
    pub(crate) async fn stop_tasks(&self) {
        // Calls waiting for their client's answers: no client can finish them now. Their
        // tools are stopped through their abort signal, like a task's.
        let waiting = self.rounds.stop_all();
        if waiting > 0 {
            log(&format!(
                "stopping {waiting} call{} waiting for their client's answers",
                if waiting == 1 { "" } else { "s" }
            ));
        }
        let left = self.tasks.running();
        if left == 0 && self.rounds.running() == 0 {
            return;
        }
        if left > 0 {
            log(&format!(
                "stopping {left} unfinished task{}",
                if left == 1 { "" } else { "s" }
            ));
        }
        self.shutdown.cancel();
        let end = Instant::now() + self.executor.config().get_grace() + Duration::from_secs(2);
        while self.tasks.running() + self.rounds.running() > 0 && Instant::now() < end {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Runs `name` once one of `--max-concurrent-calls` is free (`slot`: one held already),
    /// calling `started` then. A call cancelled (through its options' cancel token) while
    /// it waits never starts; the server's end stops it through that token. The flag says
    /// the server's end stopped it.
    async fn run_in_slot(
        &self,
        runtime: Arc<Runtime>,
        name: &str,
        args: Value,
        opts: CallOptions,
        slot: Option<tokio::sync::OwnedSemaphorePermit>,
        started: impl FnOnce(),
    ) -> (ToolResult, bool) {
        let cancel = opts.get_cancel().clone();
        let call = async {
            let permit = match slot {
                Some(p) => Some(p),
                None => tokio::select! {
                    p = self.calls.clone().acquire_owned() => p.ok(),
                    _ = cancel.cancelled() => None,
                },
            };
            match permit {
                Some(_running) => {
                    started();
                    runtime.call(name, args, opts).await
                }
                None => ToolResult::stopped(
                    toolbind::StopReason::Cancelled,
                    "cancelled before it started: it was waiting for one of the calls running (toolbind serve --max-concurrent-calls) to end",
                ),
            }
        };
        tokio::pin!(call);
        tokio::select! {
            r = &mut call => (r, false),
            _ = self.shutdown.cancelled() => {
                cancel.cancel();
                (call.await, true)
            }
        }
    }

    /// How many tools are served now.
    pub(crate) fn tool_count(&self) -> usize {
        self.current().tools.len()
    }

    fn current(&self) -> Arc<Snapshot> {
        self.current.read_locked().clone()
    }
}

/// One MCP session's handler: one per stdio server, one per HTTP session (or per request
/// when stateless); all share one [`State`]. Clones share the session (its log level and
/// queue); a new session gets [`Server::new`].
#[derive(Clone)]
pub(crate) struct Server {
    state: Arc<State>,
    logger: Arc<logging::Logger>,
    subscriptions: Arc<Subscriptions>,
    /// This session's number: a task created in it takes answers only from it.
    session: u64,
}

/// The next session's number.
static SESSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Server {
    pub(crate) fn new(state: Arc<State>) -> Self {
        Server {
            state,
            logger: Arc::default(),
            subscriptions: Arc::default(),
            session: SESSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// Who a request comes from, for a task's answers: this session, or nobody in
    /// particular for a request outside any session (`--stateless`, or a 2026-07-28
    /// request over HTTP, which rmcp serves statelessly with a handler of its own).
    fn owner(&self, context: &RequestContext<RoleServer>) -> tasks::Owner {
        let in_session = self.state.subscriptions
            && context
                .protocol_version()
                .is_none_or(|v| v.has_initialize());
        if in_session {
            tasks::Owner::Session(self.session)
        } else {
            tasks::Owner::Anyone
        }
    }
}
