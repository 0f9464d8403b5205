//! One MCP server's connection, shared by every call of its tools: started at startup or
//! on the first call, checked against the snapshot at every connect (and after
//! `notifications/tools/list_changed`), started again after it dies or hangs, with a
//! capped backoff while starting keeps failing.

use crate::lock::Locked;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientConfig, ClientNotification, ClientRequest, Implementation,
    ProgressNotificationParam, ProgressToken, RequestId, ServerResult,
};
use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::{
    NotificationContext, PeerRequestOptions, RunningService, RxJsonRpcMessage, TxJsonRpcMessage,
};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ClientHandler, Peer, RoleClient};
use serde_json::Value;

use tokio::sync::Semaphore;
use tokio::time::Instant;
use tracing::Instrument;

use super::lines::{Broken, Lines};
use super::list::{self, ListLimits};
use super::spawn::{self, ServerProcess};
use super::{McpServer, McpServerState, ServerConfig, SnapshotTool};
use crate::ToolInfo;
use crate::exec::sandbox::Sandbox;
use crate::executor::{ExecCall, ProgressSink};
use crate::host::{Question, Refusal};
use crate::result::{Content, Progress, StopReason, ToolResult};

mod call;
mod drift;
mod legacy_follow;
mod legacy_task;
mod lifecycle;
mod progress;
mod questions;
mod skills;
mod task;

use progress::*;
use questions::*;

/// The first wait before starting a server again after a failed start; it doubles up to
/// [`McpServer::max_restart_delay`].
const FIRST_RESTART_DELAY: Duration = Duration::from_millis(250);

/// A server that dies this soon after it started counts as a failed start: a server that
/// crashes on every call is not started again at the pace of the calls.
const CRASH_LOOP_WINDOW: Duration = Duration::from_secs(5);

/// A wait before the next start this short is waited out by the call that finds it.
const SHORT_WAIT: Duration = Duration::from_secs(1);

/// One server's connection and what is known of it.
pub(crate) struct Connection {
    server: McpServer,
    sandbox: Arc<Sandbox>,
    state: tokio::sync::Mutex<State>,
    slots: Arc<Semaphore>,
    shared: Arc<Shared>,
    /// The snapshot's tools by the server's names: what the live list is checked against.
    expected: HashMap<String, SnapshotTool>,
    generation: AtomicU64,
    /// The protocol of the current connection, for `Runtime::mcp_protocol_version`.
    protocol: Mutex<Option<String>>,
    /// The start task while one runs, for [`Connection::abandon`].
    starting: Mutex<Option<tokio::task::AbortHandle>>,
    /// What [`Connection::state`] shows, set at each change of `state` (which a start
    /// holds locked while it runs, so it cannot be read then).
    shown: Mutex<McpServerState>,
    /// Set when the last start failed for want of credentials (HTTP 401, 403 for scope).
    login: AtomicBool,
    /// The OAuth credential of the last start (HTTP): what it says when it stopped
    /// asking for logins makes a failed listing "needs a login" too.
    #[cfg(feature = "mcp-http")]
    credential: Mutex<Option<Arc<crate::mcp::Credential>>>,
    /// Set when the runtime refused the server's tools: it is not started again.
    refused: OnceLock<String>,
    /// The tools of a server that came up after the runtime was built (`mcp/join.rs`).
    pub(crate) late: OnceLock<Vec<ToolInfo>>,
    /// Set when the runtime is gone (or was never built): nothing starts it again, and a
    /// start that ends now is stopped.
    closed: AtomicBool,
    /// How the last failed start ended, for the background retries (`mcp/join.rs`).
    last_stop: Mutex<Option<StopReason>>,
}

enum State {
    /// Not started yet.
    Idle,
    /// Starting, in a task of its own: a call whose deadline ends while it waits leaves
    /// the start running for the next call (a slow `npx` start is not bound to the first
    /// caller's timeout). `failures`: starts that failed in a row before this one.
    Starting {
        task: tokio::task::JoinHandle<Result<Live, (StopReason, String)>>,
        failures: u32,
    },
    Up(Arc<Live>),
    /// Stopped: started again on the first call after `until`.
    Down {
        until: Instant,
        /// Starts that failed in a row.
        failures: u32,
        why: String,
    },
}

/// A live connection.
pub(crate) struct Live {
    client: RunningService<RoleClient, Handler>,
    process: Option<ServerProcess>,
    generation: u64,
    /// The protocol version negotiated.
    pub(crate) protocol: String,
    /// The live list, by the server's names.
    tools: RwLock<HashMap<String, LiveTool>>,
    /// Set when the stdout reader stopped: a message over its bound, or one the client
    /// could not read.
    over: Arc<Broken>,
    /// The `subscriptions/listen` stream's reader, on 2026-07-28.
    _listen: Option<AbortOnDrop>,
    /// When it started, and how many starts in a row had failed before it.
    started: std::time::Instant,
    failures: u32,
    /// Why toolbind stopped it, when it did.
    ended: Mutex<Option<String>>,
    /// A `ping` is out to tell whether it hangs.
    pinging: AtomicBool,
    /// The tools whose calls this server refused to run other than as a task (MCP
    /// 2025-11-25 `execution.taskSupport: "required"`): their next calls ask for one.
    needs_task: Mutex<std::collections::HashSet<String>>,
}

/// Connections whose starts in progress are stopped when this is dropped (a runtime that
/// is going away, or one that failed to build).
pub(crate) struct Abandon(pub(crate) Vec<Arc<Connection>>);

impl Drop for Abandon {
    fn drop(&mut self) {
        for c in &self.0 {
            c.abandon();
        }
    }
}

/// A task stopped when this is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

struct LiveTool {
    listed: SnapshotTool,
    input: Option<Arc<jsonschema::Validator>>,
}

/// What the transport and the client handler share with calls: progress sinks by token,
/// the list-changed flag.
#[derive(Default)]
struct Shared {
    progress: Mutex<ProgressMap>,
    list_changed: AtomicBool,
    /// Who answers the server's questions (elicitation, sampling, roots): the host of the
    /// one call in flight when there is one, else the runtime's.
    asking: Mutex<Asking>,
}

/// The hosts a server's questions may go to.
#[derive(Default)]
struct Asking {
    /// The runtime's host ([`crate::runtime::RuntimeBuilder::host`]): also what makes this client
    /// declare the elicitation, sampling and roots capabilities.
    runtime: Option<crate::host::SharedHost>,
    ask_timeout: Duration,
    /// The calls in flight with a host of their own, by a key of the call's.
    calls: Vec<(u64, crate::host::SharedHost, crate::host::Asker)>,
    next: u64,
    /// The server's questions open now: at most [`crate::host::MAX_QUESTIONS`].
    open: usize,
    /// The 2025-11-25 tasks being followed, by task id (`legacy_follow.rs`).
    tasks: HashMap<String, TaskAsks>,
}

/// Where a 2025-11-25 task's questions go, while a call follows the task.
struct TaskAsks {
    /// The call's own host, when it has one (else the runtime's answers).
    host: Option<crate::host::SharedHost>,
    asker: crate::host::Asker,
    /// How many of the task's questions are open: the call's timeout stands still
    /// meanwhile.
    open: tokio::sync::watch::Sender<usize>,
    /// Fired when the call stops following the task (its end, cancel or timeout): its
    /// questions still open are dropped, and the server is told so.
    ended: crate::CancelToken,
    /// Set while the call's `tasks/result` is outstanding: only then is a question the
    /// server ties to the task (`related-task`) taken for that call's (the server sends a
    /// task's questions in answer to that request).
    in_result: bool,
}

impl Connection {
    pub(crate) fn new(server: McpServer) -> Self {
        let expected = server
            .snapshot
            .iter()
            .flat_map(|s| &s.tools)
            .map(|t| (t.name.clone(), t.clone()))
            .collect();
        Connection {
            sandbox: Arc::new(Sandbox::untried(spawn::jail_policy(&server))),
            slots: Arc::new(Semaphore::new(server.max_in_flight)),
            state: tokio::sync::Mutex::new(State::Idle),
            shared: Arc::default(),
            expected,
            generation: AtomicU64::new(0),
            protocol: Mutex::new(None),
            starting: Mutex::new(None),
            shown: Mutex::new(McpServerState::NotStarted),
            login: AtomicBool::new(false),
            #[cfg(feature = "mcp-http")]
            credential: Mutex::new(None),
            refused: OnceLock::new(),
            late: OnceLock::new(),
            closed: AtomicBool::new(false),
            last_stop: Mutex::new(None),
            server,
        }
    }

    /// The server's state now, for [`crate::Runtime::mcp_servers`].
    pub(crate) fn state(&self) -> McpServerState {
        if let Some(reason) = self.refused.get() {
            return McpServerState::Refused {
                reason: reason.clone(),
            };
        }
        let shown = self.shown.locked().clone();
        if shown == McpServerState::Ready
            && let Ok(state) = self.state.try_lock()
            && let State::Up(live) = &*state
            && !live.is_open()
        {
            return McpServerState::Failed {
                reason: "its connection ended; the next call of one of its tools starts it again"
                    .into(),
            };
        }
        shown
    }

    fn show(&self, state: McpServerState) {
        *self.shown.locked() = state;
    }

    /// The state after a failed start: `NeedsLogin` when the server asked for
    /// credentials.
    fn failed(&self, reason: String) -> McpServerState {
        if self.login.load(Ordering::SeqCst) {
            McpServerState::NeedsLogin { reason }
        } else {
            McpServerState::Failed { reason }
        }
    }

    pub(crate) fn is_refused(&self) -> bool {
        self.refused.get().is_some()
    }

    /// How long until the next start may be tried: the backoff of a server that is
    /// down, else the first wait.
    pub(crate) async fn retry_in(&self) -> Duration {
        match &*self.state.lock().await {
            State::Down { until, .. } => until
                .saturating_duration_since(Instant::now())
                .max(FIRST_RESTART_DELAY),
            _ => FIRST_RESTART_DELAY,
        }
    }

    /// Refuses the server for good (`why` names the fix): its tools are not the
    /// runtime's, and a running process of it is stopped.
    pub(crate) fn refuse(&self, why: String) {
        let _ = self.refused.set(why);
        self.abandon();
        if let Ok(state) = self.state.try_lock()
            && let State::Up(live) = &*state
        {
            live.stop("its tools were refused");
        }
    }

    /// Stops a start in progress and closes the connection for good (the runtime is
    /// going away: the start task would otherwise keep this connection, and the server it
    /// starts, until it finished; a start that ends anyway is stopped, and none begins).
    pub(crate) fn abandon(&self) {
        self.closed.store(true, Ordering::SeqCst);
        if let Some(t) = self.starting.locked().take() {
            t.abort();
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// How the last failed start ended.
    pub(crate) fn last_stop(&self) -> Option<StopReason> {
        self.last_stop.locked().clone()
    }

    /// Marks the state of a server that is not started again in the background: `why`.
    pub(crate) fn given_up(&self, why: &str) {
        let mut shown = self.shown.locked();
        if let McpServerState::Failed { reason } | McpServerState::NeedsLogin { reason } =
            &mut *shown
        {
            reason.push_str(&format!(" ({why})"));
        }
    }

    pub(crate) fn server(&self) -> &McpServer {
        &self.server
    }

    fn name(&self) -> &str {
        &self.server.name
    }

    /// The protocol version of the current connection, while it is up.
    pub(crate) fn protocol_version(&self) -> Option<String> {
        self.protocol.locked().clone()
    }

    fn set_protocol(&self, v: Option<String>) {
        *self.protocol.locked() = v;
    }
}

impl Live {
    fn is_open(&self) -> bool {
        !self.client.is_closed()
            && !self.client.peer().is_transport_closed()
            && self.process.as_ref().is_none_or(|p| p.exit().is_none())
    }

    /// How the connection ended, in words: "exited with code 1", "closed the connection".
    async fn ended_how(&self) -> String {
        match &self.process {
            Some(p) => match p.exit_within(Duration::from_millis(500)).await {
                Some(e) => e,
                None => "closed the connection".into(),
            },
            None => "closed the connection".into(),
        }
    }

    fn kill(&self) {
        if let Some(p) = &self.process {
            p.kill();
        }
        self.client.cancellation_token().cancel();
    }

    /// Ends the connection now, keeping `why` for the message of the next start.
    fn stop(&self, why: &str) {
        self.ended.locked().get_or_insert_with(|| why.to_owned());
        self.kill();
    }
}
