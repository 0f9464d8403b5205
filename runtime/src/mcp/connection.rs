//! One MCP server's connection, shared by every call of its tools: started at startup or
//! on the first call, checked against the snapshot at every connect (and after
//! `notifications/tools/list_changed`), started again after it dies or hangs, with a
//! capped backoff while starting keeps failing.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

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
use super::{McpServer, ServerConfig, SnapshotTool};
use crate::exec::sandbox::Sandbox;
use crate::executor::{ExecCall, ProgressSink};
use crate::host::{Question, Refusal};
use crate::result::{Content, Progress, StopReason, ToolResult};

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
}

/// A call's progress key: its connection (rmcp's tokens start again at 0 on each) and
/// token.
type ProgressKey = (u64, ProgressToken);

/// Progress sinks by call, and what came before its call's sink was in place.
#[derive(Default)]
struct ProgressMap {
    sinks: HashMap<ProgressKey, ProgressSink>,
    /// A call's first updates can arrive before its sink is registered (rmcp assigns the
    /// token while it queues the request): they wait here, at most [`EARLY_PROGRESS`] in
    /// all, the oldest dropped first.
    early: std::collections::VecDeque<(ProgressKey, Progress)>,
}

/// The most progress updates kept for calls whose sink is not registered yet.
const EARLY_PROGRESS: usize = 1024;

fn progress_of(params: &ProgressNotificationParam) -> Option<Progress> {
    if !params.progress.is_finite() {
        return None;
    }
    let content = params
        .message
        .clone()
        .map(Content::text)
        .into_iter()
        .collect();
    let mut p = Progress::new(content);
    p.progress = Some(params.progress.max(0.0));
    p.total = params.total.filter(|t| t.is_finite());
    Some(p)
}

/// Calls `sink`; it runs on the connection's reader, and a panic in it must not end the
/// connection of every call.
fn hand(sink: &ProgressSink, p: Progress) {
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink(p)));
}

impl Shared {
    /// Hands a progress notification to the call it belongs to, in order (the map stays
    /// locked while the sink runs: sinks must return quickly, as `ProgressSink` says).
    fn deliver(&self, generation: u64, params: &ProgressNotificationParam) {
        let Some(p) = progress_of(params) else {
            return;
        };
        let key = (generation, params.progress_token.clone());
        let mut map = self.progress.lock().unwrap_or_else(|e| e.into_inner());
        match map.sinks.get(&key) {
            Some(sink) => hand(sink, p),
            None => {
                if map.early.len() == EARLY_PROGRESS {
                    map.early.pop_front();
                }
                map.early.push_back((key, p));
            }
        }
    }

    /// Registers a call's sink, first handing it what came early.
    fn register(&self, key: ProgressKey, sink: ProgressSink) {
        let mut map = self.progress.lock().unwrap_or_else(|e| e.into_inner());
        let early = std::mem::take(&mut map.early);
        for (k, p) in early {
            if k == key {
                hand(&sink, p);
            } else {
                map.early.push_back((k, p));
            }
        }
        map.sinks.insert(key, sink);
    }
}

/// The transport as the client sees it, progress taken out on the way in: handed to its
/// call right here, in the order the server sent it and so before the call's result
/// (rmcp runs each notification's handler as a task of its own, in no order). Log
/// messages, which toolbind does not show, go no further either: a server flooding
/// notifications costs a parse each, not a task each.
///
/// It also closes a gap in rmcp's start-up: rmcp offers 2026-07-28 with `server/discover`
/// and, after 10 s without an answer, falls back to `initialize`; a server that starts
/// slowly (an `npx` server downloading its package) then answers the discover request
/// late, and rmcp takes that answer for a wrong answer to `initialize`. After the fallback,
/// the discover request's late answer is dropped here.
struct Observed<T> {
    inner: T,
    shared: Arc<Shared>,
    generation: u64,
    discover: Option<RequestId>,
    fell_back: bool,
}

impl<T> Observed<T> {
    fn new(inner: T, shared: Arc<Shared>, generation: u64) -> Self {
        Observed {
            inner,
            shared,
            generation,
            discover: None,
            fell_back: false,
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Observed<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(r) = &item {
            match &r.request {
                ClientRequest::DiscoverRequest(_) => self.discover = Some(r.id.clone()),
                ClientRequest::InitializeRequest(_) => self.fell_back = self.discover.is_some(),
                _ => {}
            }
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let msg = self.inner.receive().await?;
            if self.fell_back {
                let late = match &msg {
                    JsonRpcMessage::Response(r) => self.discover.as_ref() == Some(&r.id),
                    JsonRpcMessage::Error(e) => {
                        e.id.is_some() && e.id.as_ref() == self.discover.as_ref()
                    }
                    _ => false,
                };
                if late {
                    continue;
                }
            }
            if let JsonRpcMessage::Notification(n) = &msg {
                match &n.notification {
                    ServerNotification::ProgressNotification(p) => {
                        self.shared.deliver(self.generation, &p.params);
                        continue;
                    }
                    ServerNotification::LoggingMessageNotification(_) => continue,
                    _ => {}
                }
            }
            return Some(msg);
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// toolbind's client side: `list_changed` noted; the server's questions (elicitation,
/// sampling, roots) put to the agent's host, and the capabilities declared only when
/// the runtime has one.
struct Handler {
    shared: Arc<Shared>,
    /// The server's name: who asks, when no single call is in flight.
    server: String,
}

impl Handler {
    /// The host a question goes to and who asks: the one call in flight with a host, else
    /// the runtime's host on behalf of the server.
    fn asker(&self) -> Option<(crate::host::SharedHost, crate::host::Asker, Duration)> {
        let asking = self.shared.asking.lock().unwrap_or_else(|e| e.into_inner());
        if let [(_, host, asker)] = asking.calls.as_slice() {
            return Some((host.clone(), asker.clone(), asking.ask_timeout));
        }
        let host = asking.runtime.clone()?;
        let spec = toolbind_codegen::ToolSpec::process(&self.server, std::path::PathBuf::new());
        Some((
            host,
            crate::host::Asker {
                tool: crate::ToolInfo::from(spec),
                tool_call_id: String::new(),
                key: None,
            },
            asking.ask_timeout,
        ))
    }

    /// A question of `kind` with `params`, answered by the host (the runtime's checks and
    /// bounds apply), as JSON; an MCP error when nobody answers.
    /// `question` is the server's, parsed at this edge (or why it cannot be asked), of
    /// `kind`.
    async fn ask(
        &self,
        kind: &str,
        question: Result<Question, Refusal>,
    ) -> Result<Value, rmcp::ErrorData> {
        let Some((host, asker, timeout)) = self.asker() else {
            return Err(rmcp::ErrorData::invalid_request(
                format!(
                    "this agent answers no `{kind}` questions (toolbind::RuntimeBuilder::host)"
                ),
                None,
            ));
        };
        // A server asks at most as many questions at once as a tool may.
        {
            let mut asking = self.shared.asking.lock().unwrap_or_else(|e| e.into_inner());
            if asking.open >= crate::host::MAX_QUESTIONS {
                return Err(rmcp::ErrorData::invalid_request(
                    format!(
                        "at most {} questions may be open at once",
                        crate::host::MAX_QUESTIONS
                    ),
                    None,
                ));
            }
            asking.open += 1;
        }
        let _open = OpenQuestion(self.shared.clone());
        let answer = match question {
            Ok(q) => crate::host::answer(Some(host), asker, q.clone(), timeout)
                .await
                .map(|answer| mcp_answer(&q, answer)),
            Err(why) => Err(why),
        };
        answer.map_err(|why| rmcp::ErrorData::internal_error(why.to_string(), None))
    }

    /// A server's request (`method` with `params`), parsed at this edge and answered by
    /// the host; an MCP error when it is not a question this agent answers.
    async fn ask_request(&self, method: &str, params: Value) -> Result<Value, rmcp::ErrorData> {
        let question = match question_of(method, &params) {
            Ok(q) => Ok(q),
            Err(Unasked::Bad(why)) => Err(why),
            Err(Unasked::NotAQuestion(why)) => {
                return Err(rmcp::ErrorData::invalid_request(why, None));
            }
        };
        self.ask(kind_of(method), question).await
    }
}

impl ClientHandler for Handler {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.shared.list_changed.store(true, Ordering::SeqCst);
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.client_info = Implementation::new("toolbind", env!("CARGO_PKG_VERSION"));
        let has_host = self
            .shared
            .asking
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .runtime
            .is_some();
        if has_host
            && let Ok(caps) = serde_json::from_value(serde_json::json!({
                "elicitation": {"form": {}}, "sampling": {}, "roots": {}
            }))
        {
            info.capabilities = caps;
        }
        info
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let params = serde_json::to_value(&request).unwrap_or_default();
        let answer = self.ask_request("elicitation/create", params).await?;
        serde_json::from_value(answer)
            .map_err(|e| rmcp::ErrorData::internal_error(format!("the host's answer: {e}"), None))
    }

    #[allow(deprecated)] // sampling: rmcp marks it deprecated (SEP-2577)
    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        let params = serde_json::to_value(&params).unwrap_or_default();
        let answer = self.ask_request("sampling/createMessage", params).await?;
        serde_json::from_value(answer)
            .map_err(|e| rmcp::ErrorData::internal_error(format!("the host's sample: {e}"), None))
    }

    #[allow(deprecated)] // roots: rmcp marks it deprecated (SEP-2577)
    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        let answer = self.ask("roots", Ok(Question::Roots)).await?;
        serde_json::from_value(answer)
            .map_err(|e| rmcp::ErrorData::internal_error(format!("the host's roots: {e}"), None))
    }
}

/// Why a server's question is not put to the host.
#[derive(Debug)]
enum Unasked {
    /// Not a question this agent answers (a URL-mode form, another method).
    NotAQuestion(String),
    /// A question of a kind it answers, but not one that can be asked (a nested form).
    Bad(Refusal),
}

/// A server's question (`method` with `params`), the same whether the server sent a
/// request (2025-11-25) or put it in an `InputRequiredResult` (2026-07-28).
fn question_of(method: &str, params: &Value) -> Result<Question, Unasked> {
    let (kind, params) = match method {
        "elicitation/create" if params["mode"] == "url" => {
            return Err(Unasked::NotAQuestion(
                "this agent answers form elicitations only (not URL mode)".into(),
            ));
        }
        "elicitation/create" => (
            "elicit",
            serde_json::json!({"message": params["message"], "schema": params["requestedSchema"]}),
        ),
        "sampling/createMessage" => ("sample", crate::host::sample_params(params.clone())),
        "roots/list" => ("roots", serde_json::json!({})),
        other => {
            return Err(Unasked::NotAQuestion(format!(
                "`{other}` is not a question this agent answers"
            )));
        }
    };
    Question::parse(kind, params).map_err(Unasked::Bad)
}

/// The host's answer to this question as the MCP result: the roots as a
/// `ListRootsResult`, the rest as they are.
fn mcp_answer(question: &Question, answer: Value) -> Value {
    match question {
        Question::Roots => serde_json::json!({ "roots": answer }),
        _ => answer,
    }
}

/// The kind of question a server's `method` asks (`elicit`, `sample`, `roots`), for the
/// words of a refusal.
fn kind_of(method: &str) -> &'static str {
    match method {
        "sampling/createMessage" => "sample",
        "roots/list" => "roots",
        _ => "elicit",
    }
}

/// One of the server's questions, open while this lives.
struct OpenQuestion(Arc<Shared>);

impl Drop for OpenQuestion {
    fn drop(&mut self) {
        let mut asking = self.0.asking.lock().unwrap_or_else(|e| e.into_inner());
        asking.open = asking.open.saturating_sub(1);
    }
}

/// A call in [`Asking::calls`] while it is in flight.
struct InFlight {
    shared: Arc<Shared>,
    key: u64,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut asking = self.shared.asking.lock().unwrap_or_else(|e| e.into_inner());
        asking.calls.retain(|(k, _, _)| *k != self.key);
    }
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
            server,
        }
    }

    /// Stops a start in progress (the runtime is going away: the start task would
    /// otherwise keep this connection, and the server it starts, until it finished).
    pub(crate) fn abandon(&self) {
        if let Some(t) = self
            .starting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            t.abort();
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
        self.protocol
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn set_protocol(&self, v: Option<String>) {
        *self.protocol.lock().unwrap_or_else(|e| e.into_inner()) = v;
    }

    /// The live connection, started (or started again) when needed; the error says why
    /// there is none, as a result for the call.
    /// (One function, a little over 100 lines: it is the connection's state machine, every
    /// transition made under the one state lock; split, the lock would pass through each
    /// piece.)
    pub(crate) async fn live(self: &Arc<Self>) -> Result<Arc<Live>, ToolResult> {
        let mut state = self.state.lock().await;
        let start = match &*state {
            State::Starting { .. } => None,
            State::Up(live) if live.is_open() => {
                let live = live.clone();
                if self.shared.list_changed.swap(false, Ordering::SeqCst) {
                    self.relist(&live).await;
                }
                return Ok(live);
            }
            State::Up(live) => {
                // It died (or was stopped: hung, a broken connection). Soon after its start,
                // that counts as one more failed start, and waits its backoff; otherwise
                // it is started again now.
                let stopped = live.ended.lock().unwrap_or_else(|e| e.into_inner()).clone();
                let why = match stopped {
                    Some(w) => w,
                    None => live.ended_how().await,
                };
                self.set_protocol(None);
                if live.started.elapsed() < CRASH_LOOP_WINDOW {
                    let failures = live.failures + 1;
                    *state = State::Down {
                        until: Instant::now() + self.backoff(failures),
                        failures,
                        why: format!(
                            "it {why} within {} s of starting",
                            CRASH_LOOP_WINDOW.as_secs()
                        ),
                    };
                    drop(state);
                    return Box::pin(self.live()).await;
                }
                crate::telemetry::warn(&format!(
                    "toolbind: MCP server `{}` {why}: starting it again",
                    self.name()
                ));
                Some(0)
            }
            State::Idle => Some(0),
            State::Down {
                until,
                failures,
                why,
            } => {
                let now = Instant::now();
                // A short wait is waited out (the caller's deadline still bounds it); a
                // longer one fails the call at once, saying why.
                if now < *until && *until - now <= SHORT_WAIT {
                    tokio::time::sleep_until(*until).await;
                } else if now < *until {
                    let wait = (*until - now).as_secs_f64();
                    return Err(ToolResult::stopped(
                        StopReason::Crashed,
                        format!(
                            "MCP server `{}` is not running: {why}\n(toolbind starts it again in {wait:.1} s; {failures} start(s) in a row failed)",
                            self.name()
                        ),
                    ));
                }
                Some(*failures)
            }
        };
        if let Some(failures) = start {
            let me = self.clone();
            let task = tokio::spawn(async move { me.connect().await });
            *self.starting.lock().unwrap_or_else(|e| e.into_inner()) = Some(task.abort_handle());
            *state = State::Starting { task, failures };
        }
        let State::Starting { task, failures } = &mut *state else {
            unreachable!("set just above")
        };
        let failures = *failures;
        // Only this waiter holds the state: if its deadline ends here, the task (in the
        // state) goes on and the next call waits for the same start.
        let outcome = match task.await {
            Ok(o) => o,
            Err(e) => Err((StopReason::Crashed, format!("its start was stopped ({e})"))),
        };
        *self.starting.lock().unwrap_or_else(|e| e.into_inner()) = None;
        match outcome {
            Ok(mut live) => {
                live.failures = failures;
                let live = Arc::new(live);
                self.set_protocol(Some(live.protocol.clone()));
                *state = State::Up(live.clone());
                Ok(live)
            }
            Err((stop, why)) => {
                self.set_protocol(None);
                let failures = failures + 1;
                *state = State::Down {
                    until: Instant::now() + self.backoff(failures),
                    failures,
                    why: why.clone(),
                };
                Err(ToolResult::stopped(
                    stop,
                    format!("cannot start MCP server `{}`: {why}", self.name()),
                ))
            }
        }
    }

    /// How long to wait before the next start after `failures` failed ones in a row:
    /// 250 ms doubling, at most `max_restart_delay`.
    fn backoff(&self, failures: u32) -> Duration {
        FIRST_RESTART_DELAY
            .saturating_mul(1 << failures.saturating_sub(1).min(16))
            .min(self.server.max_restart_delay)
    }

    /// Starts a stdio server and initializes it. The jail is not tried out before the
    /// first start (that costs a whole interpreter start); when a jailed start fails, the
    /// trial runs then: a jail that cannot run here is a `JailFailed` in `required` mode,
    /// and in `auto` the server is started once more, unjailed (with the one warning).
    async fn start_stdio(
        &self,
        over: &Arc<Broken>,
        generation: u64,
    ) -> Result<(RunningService<RoleClient, Handler>, ServerProcess), (StopReason, String)> {
        let timeout = self.server.connect_timeout;
        loop {
            let started = spawn::start(&self.server, &self.sandbox)
                .map_err(|e| (e.stop_reason(), e.to_string()))?;
            let reader = Lines::new(started.stdout, self.server.max_message_bytes, over.clone());
            let process = started.process;
            // The reader above bounds a line, and says so; rmcp's own bound would drop the
            // line and leave its call waiting.
            let rw = AsyncRwTransport::new_client(reader, started.stdin)
                .with_max_line_length(usize::MAX);
            let transport = Observed::new(rw, self.shared.clone(), generation);
            let handler = Handler {
                shared: self.shared.clone(),
                server: self.server.name.clone(),
            };
            let e = match list::initialize(handler, transport, timeout, &|_| None, true).await {
                Ok(c) => return Ok((c, process)),
                Err(e) => e,
            };
            let exit = process
                .exit_within(Duration::from_millis(500))
                .await
                .map(|s| format!(" (the server {s})"))
                .unwrap_or_default();
            let e = over.message(self.server.max_message_bytes).unwrap_or(e);
            match spawn::after_failure(
                started.jailed,
                &self.sandbox,
                self.server.sandbox.get_mode(),
            )
            .await
            {
                spawn::Failed::Unjailed => {
                    return Err((
                        StopReason::Crashed,
                        format!("{e}{exit}.{}", process.stderr_note().await),
                    ));
                }
                spawn::Failed::InWorkingJail => {
                    return Err((
                        StopReason::Crashed,
                        format!(
                            "{e}{exit}. {}{}",
                            spawn::GRANT_HINT,
                            process.stderr_note().await
                        ),
                    ));
                }
                spawn::Failed::Jail(e) => return Err((e.stop_reason(), e.to_string())),
                // `auto`: the next start finds the failed trial and runs unjailed.
                spawn::Failed::StartAgain => drop(process),
            }
        }
    }

    /// Starts (stdio) or reaches (HTTP) the server, initializes and lists its tools.
    async fn connect(&self) -> Result<Live, (StopReason, String)> {
        let generation = self.generation.fetch_add(1, Ordering::Relaxed);
        self.shared.list_changed.store(false, Ordering::SeqCst);
        let over = Arc::new(Broken::default());
        let (client, process) = match &self.server.config {
            ServerConfig::Stdio { .. } => {
                let (c, p) = self.start_stdio(&over, generation).await?;
                (c, Some(p))
            }
            #[cfg(feature = "mcp-http")]
            ServerConfig::Http { url, .. } => {
                let handler = Handler {
                    shared: self.shared.clone(),
                    server: self.server.name.clone(),
                };
                let timeout = self.server.connect_timeout;
                let headers = self
                    .server
                    .http_headers()
                    .map_err(|e| (StopReason::Crashed, format!("{}: {e}", shown_url(url))))?;
                let http =
                    list::http::transport(url, &headers, timeout, self.server.max_message_bytes)
                        .map_err(|e| (StopReason::Crashed, format!("{}: {e}", shown_url(url))))?;
                let sent = http.sent_token;
                let transport = Observed::new(http.transport, self.shared.clone(), generation);
                let c = list::initialize(
                    handler,
                    transport,
                    timeout,
                    &|e| list::http::explain(e, sent),
                    true,
                )
                .await
                .map_err(|e| (StopReason::Crashed, format!("{}: {e}", shown_url(url))))?;
                (c, None)
            }
            #[cfg(not(feature = "mcp-http"))]
            ServerConfig::Http { url, .. } => {
                return Err((
                    StopReason::Crashed,
                    format!(
                        "{url}: this toolbind was built without feature `mcp-http`, which Streamable HTTP servers need"
                    ),
                ));
            }
        };
        let (_, protocol) =
            list::introduction(client.peer()).map_err(|e| (StopReason::ProtocolError, e))?;
        let limits = self.list_limits();
        let listed = match list::pages(client.peer(), &limits, "").await {
            Ok(t) => t,
            Err(e) => {
                let note = match &process {
                    Some(p) => p.stderr_note().await,
                    None => String::new(),
                };
                return Err((StopReason::ProtocolError, format!("{e}{note}")));
            }
        };
        // A `list_changed` the server sent while starting (server-everything sends one
        // before answering the list) is already in the list just read: listing again
        // before the first call would be the same work twice.
        self.shared.list_changed.store(false, Ordering::SeqCst);
        let listen = self.listen(&client, &protocol).await;
        let live = Live {
            client,
            process,
            generation,
            protocol,
            tools: RwLock::new(HashMap::new()),
            over,
            _listen: listen,
            started: std::time::Instant::now(),
            failures: 0,
            ended: Mutex::new(None),
            pinging: AtomicBool::new(false),
        };
        self.install(&live, listed);
        Ok(live)
    }

    /// On 2026-07-28 a server sends `notifications/tools/list_changed` only on a
    /// `subscriptions/listen` stream that asked for it: for a server that says its list
    /// changes, one is opened, and what it brings marks the list for listing again before
    /// the next call. `None` when there is nothing to listen to, or the server refused.
    async fn listen(
        &self,
        client: &RunningService<RoleClient, Handler>,
        protocol: &str,
    ) -> Option<AbortOnDrop> {
        let changes = client
            .peer()
            .peer_info()
            .and_then(|i| i.capabilities.tools.as_ref().and_then(|t| t.list_changed))
            == Some(true);
        if protocol != "2026-07-28" || !changes {
            return None;
        }
        let filter = rmcp::model::SubscriptionFilter::builder()
            .tools_list_changed()
            .build();
        let opened =
            tokio::time::timeout(Duration::from_secs(10), client.peer().listen(filter)).await;
        let mut subscription = match opened {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                crate::telemetry::note(&format!(
                    "toolbind: note: MCP server `{}` refused `subscriptions/listen` ({e}): a change of its tool list is noticed only at the next start",
                    self.name()
                ));
                return None;
            }
            Err(_) => return None,
        };
        let shared = self.shared.clone();
        let task = tokio::spawn(async move {
            while let Ok(Some(n)) = subscription.next().await {
                if matches!(n, ServerNotification::ToolListChangedNotification(_)) {
                    shared.list_changed.store(true, Ordering::SeqCst);
                }
            }
        });
        Some(AbortOnDrop(task))
    }

    fn list_limits(&self) -> ListLimits {
        ListLimits {
            max_bytes: self.server.max_message_bytes,
            ..ListLimits::default()
        }
    }

    /// Lists the tools again after `notifications/tools/list_changed`. A listing that
    /// fails leaves the change marked, so the next call lists again.
    async fn relist(&self, live: &Live) {
        match list::pages(live.client.peer(), &self.list_limits(), "").await {
            Ok(listed) => self.install(live, listed),
            Err(e) => {
                self.shared.list_changed.store(true, Ordering::SeqCst);
                crate::telemetry::warn(&format!(
                    "toolbind: warning: MCP server `{}` said its tools changed, but listing them again failed ({e}): this call goes by the list it gave before, the next one lists again",
                    self.name()
                ))
            }
        }
    }

    /// Makes `listed` the live list, warning about what changed since the snapshot that
    /// does not stop a call (a new tool, new wording).
    fn install(&self, live: &Live, listed: Vec<SnapshotTool>) {
        let mut tools = HashMap::new();
        for t in listed {
            if let Some(old) = self.expected.get(&t.name) {
                let (oc, od) = old.hashes();
                let (nc, nd) = t.hashes();
                if oc == nc && od != nd {
                    crate::telemetry::warn(&format!(
                        "toolbind: warning: MCP server `{}`: tool `{}` changed its description or annotations since the snapshot (calls go on; regenerate the snapshot to update what the model reads)",
                        self.name(),
                        t.name
                    ));
                }
            } else if !self.expected.is_empty() {
                crate::telemetry::note(&format!(
                    "toolbind: note: MCP server `{}` lists tool `{}`, which its snapshot does not have: it has no generated bindings",
                    self.name(),
                    t.name
                ));
            }
            let input = super::validator(&t.input_schema).map(Arc::new);
            tools.insert(t.name.clone(), LiveTool { listed: t, input });
        }
        *live.tools.write().unwrap_or_else(|e| e.into_inner()) = tools;
    }

    /// The live list, for a runtime built at connect.
    pub(crate) fn listed(live: &Live) -> Vec<SnapshotTool> {
        let tools = live.tools.read().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<SnapshotTool> = tools.values().map(|t| t.listed.clone()).collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Runs one call of tool `mcp_name`, whose contract the caller was built against is
    /// `contract`.
    pub(crate) async fn call(
        self: &Arc<Self>,
        mcp_name: &str,
        contract: &str,
        call: ExecCall<'_>,
    ) -> ToolResult {
        let transport = match self.server.config {
            ServerConfig::Stdio { .. } => "pipe",
            ServerConfig::Http { .. } => "tcp",
        };
        // The protocol is recorded once the connection is up (a span's attribute recorded
        // twice is exported twice).
        let span = crate::telemetry::mcp_client_span(mcp_name, transport);
        let started = std::time::Instant::now();
        let result = self
            .call_untraced(mcp_name, contract, call)
            .instrument(span.clone())
            .await;
        crate::telemetry::mcp_client_ended(&span, mcp_name, &result, started);
        result
    }

    /// Lets the server's questions reach `host`, answering within `ask_timeout` (set
    /// before the server starts: a host is what makes the client declare the capabilities).
    pub(crate) fn set_host(&self, host: Option<crate::host::SharedHost>, ask_timeout: Duration) {
        let mut asking = self.shared.asking.lock().unwrap_or_else(|e| e.into_inner());
        asking.runtime = host;
        asking.ask_timeout = ask_timeout;
    }

    async fn call_untraced(
        self: &Arc<Self>,
        mcp_name: &str,
        contract: &str,
        mut call: ExecCall<'_>,
    ) -> ToolResult {
        // While the call is in flight, a question of the server's may be its own.
        let _asking = call.host.clone().map(|host| {
            let mut asking = self.shared.asking.lock().unwrap_or_else(|e| e.into_inner());
            asking.next += 1;
            let key = asking.next;
            asking.calls.push((
                key,
                host,
                crate::host::Asker {
                    tool: call.tool.clone(),
                    tool_call_id: call.tool_call_id.to_owned(),
                    key: None,
                },
            ));
            InFlight {
                shared: self.shared.clone(),
                key,
            }
        });
        let mut deadline = Instant::now() + call.timeout;
        let name = call.tool.name().to_owned();
        let cancel = call.cancel.clone();
        let slots = self.slots.clone();
        let _permit = match until(&cancel, deadline, slots.acquire_owned()).await {
            Ok(Ok(p)) => p,
            Ok(Err(_)) => return ToolResult::error("the MCP connection is shutting down"),
            Err(why) => return self.stopped_waiting(&name, call.timeout, why),
        };
        // Over HTTP, a call of a read-only or idempotent tool whose connection failed is
        // sent once more, on a new connection (behind a load balancer: to a replica that
        // is up). Any other call could run twice: it is not.
        let annotations = call.tool.annotations();
        let retry = matches!(self.server.config, ServerConfig::Http { .. })
            && (annotations.read_only == Some(true) || annotations.idempotent == Some(true));
        let mut retried = false;
        let params = std::mem::take(&mut call.params);
        // MCP 2026-07-28: the answers to the server's last `InputRequiredResult`, and how
        // many it sent.
        let mut answered: Option<(rmcp::model::InputResponses, Option<String>)> = None;
        let mut rounds = 0;
        // The waits for answers stand the call's timeout still, up to three ask timeouts
        // in all, as a tool's own questions do: a server cannot stretch a call without end.
        let mut pause_left = self
            .shared
            .asking
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .ask_timeout
            .saturating_mul(3);
        loop {
            let live = match until(&cancel, deadline, self.live()).await {
                Ok(Ok(l)) => l,
                Ok(Err(r)) => return r,
                Err(why) => return self.stopped_waiting(&name, call.timeout, why),
            };
            // A retry (of a lost connection, or with answers) sends the arguments again.
            let args = match self.checked_args(&live, &name, mcp_name, contract, params.clone()) {
                Ok(a) => a,
                Err(r) => return r,
            };
            let span = tracing::Span::current();
            span.record("mcp.protocol.version", live.protocol.as_str());
            let mut request = CallToolRequestParams::new(mcp_name.to_owned()).with_arguments(args);
            if let Some((responses, state)) = &answered {
                request = request.with_input_responses(responses.clone());
                if let Some(state) = state {
                    request = request.with_request_state(state.clone());
                }
            }
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(
                crate::telemetry::with_trace_context(request),
            ));
            let peer = live.client.peer().clone();
            let sent = peer
                .send_cancellable_request(request, PeerRequestOptions::no_options())
                .await;
            let outcome = match sent {
                Ok(handle) => {
                    let _progress = call.progress.clone().map(|sink| {
                        let key = (live.generation, handle.progress_token.clone());
                        self.shared.register(key.clone(), sink);
                        ProgressGuard {
                            shared: self.shared.clone(),
                            key,
                        }
                    });
                    let id = handle.id.clone();
                    span.record("jsonrpc.request.id", id.to_string().as_str());
                    match until(&cancel, deadline, handle.await_response()).await {
                        Ok(Ok(ServerResult::InputRequiredResult(input))) => {
                            rounds += 1;
                            if rounds > rmcp::model::DEFAULT_MRTR_MAX_ROUNDS {
                                return ToolResult::stopped(
                                    StopReason::ProtocolError,
                                    format!(
                                        "tool `{name}`: MCP server `{}` asked for input {} times over; toolbind answers at most {} rounds",
                                        self.name(),
                                        rounds,
                                        rmcp::model::DEFAULT_MRTR_MAX_ROUNDS
                                    ),
                                );
                            }
                            let asking = Instant::now();
                            let answers = tokio::select! {
                                a = self.fulfil(&name, &call, input) => a,
                                () = cancel.cancelled() => {
                                    return self.stopped_waiting(&name, call.timeout, Stop::Cancelled);
                                }
                            };
                            let paused = asking.elapsed().min(pause_left);
                            pause_left -= paused;
                            deadline += paused;
                            match answers {
                                Ok(a) => {
                                    answered = Some(a);
                                    continue;
                                }
                                Err(r) => return r,
                            }
                        }
                        Ok(Ok(response)) => return self.answered(&name, response),
                        Ok(Err(rmcp::ServiceError::McpError(e))) => {
                            return self.refused(&name, &e);
                        }
                        Ok(Err(e)) => e,
                        Err(why) => {
                            cancel_request(&peer, id, &why).await;
                            if matches!(why, Stop::Timeout) {
                                self.check_alive(live);
                            }
                            return self.stopped_in_flight(&name, call.timeout, deadline, why);
                        }
                    }
                }
                Err(e) => e,
            };
            // The connection failed under the call.
            let r = self.lost(&live, &name, &outcome).await;
            if retry && !retried {
                retried = true;
                continue;
            }
            return r;
        }
    }

    /// Answers an MCP 2026-07-28 `InputRequiredResult` through the call's host (else the
    /// runtime's), question by question, with the runtime's checks: the `inputResponses`
    /// and the `requestState` to send back. A question nobody answers stops the call,
    /// saying why.
    async fn fulfil(
        &self,
        name: &str,
        call: &ExecCall<'_>,
        input: rmcp::model::InputRequiredResult,
    ) -> Result<(rmcp::model::InputResponses, Option<String>), ToolResult> {
        let requests = input.input_requests.unwrap_or_default();
        let (host, ask_timeout) = {
            let asking = self.shared.asking.lock().unwrap_or_else(|e| e.into_inner());
            (
                call.host.clone().or_else(|| asking.runtime.clone()),
                asking.ask_timeout,
            )
        };
        if requests.len() > crate::host::MAX_QUESTIONS {
            return Err(ToolResult::stopped(
                StopReason::ProtocolError,
                format!(
                    "tool `{name}`: MCP server `{}` asked {} questions at once; at most {} may be open",
                    self.name(),
                    requests.len(),
                    crate::host::MAX_QUESTIONS
                ),
            ));
        }
        // Each question is put to the host at once (a host may show them together);
        // the first one not answered stops the call, and the others are dropped.
        let mut asked = tokio::task::JoinSet::new();
        for (key, request) in requests {
            let request = serde_json::to_value(&request).unwrap_or_default();
            let method = request["method"].as_str().unwrap_or("").to_owned();
            let question = match question_of(&method, &request["params"]) {
                Ok(q) => Ok(q),
                Err(Unasked::Bad(why)) => Err(why),
                Err(Unasked::NotAQuestion(why)) => {
                    return Err(ToolResult::stopped(
                        StopReason::ToolError,
                        format!(
                            "tool `{name}`: MCP server `{}` asked for input this agent does not give: {why}",
                            self.name()
                        ),
                    ));
                }
            };
            let kind = kind_of(&method);
            let asker = crate::host::Asker {
                tool: call.tool.clone(),
                tool_call_id: call.tool_call_id.to_owned(),
                key: crate::host::question_key(kind, Some(Value::String(key.clone())))
                    .ok()
                    .flatten(),
            };
            let host = host.clone();
            asked.spawn(async move {
                let answer = match (question, host) {
                    (_, None) => Err(Refusal::NoHost {
                        question: kind.to_owned(),
                    }),
                    (Err(why), _) => Err(why),
                    (Ok(q), host) => crate::host::answer(host, asker, q.clone(), ask_timeout)
                        .await
                        .map(|a| mcp_answer(&q, a)),
                };
                (key, method, answer)
            });
        }
        let mut responses = rmcp::model::InputResponses::new();
        while let Some(done) = asked.join_next().await {
            let Ok((key, method, answer)) = done else {
                return Err(ToolResult::stopped(
                    StopReason::ToolError,
                    format!(
                        "tool `{name}`: MCP server `{}` asked for input, and the agent's host failed answering it",
                        self.name()
                    ),
                ));
            };
            match answer {
                Ok(response) => {
                    responses.insert(key, response);
                }
                Err(why) => {
                    return Err(ToolResult::stopped(
                        StopReason::ToolError,
                        format!(
                            "tool `{name}`: MCP server `{}` asked for input ({method}), and it was not given: {why}",
                            self.name()
                        ),
                    ));
                }
            }
        }
        Ok((responses, input.request_state))
    }

    /// A call stopped before its request was sent: waiting for a slot or the connection.
    fn stopped_waiting(&self, name: &str, timeout: Duration, why: Stop) -> ToolResult {
        match why {
            Stop::Cancelled => ToolResult::stopped(
                StopReason::Cancelled,
                format!("tool `{name}` was cancelled before the server got it"),
            ),
            Stop::Timeout => ToolResult::stopped(
                StopReason::Timeout { after: timeout },
                format!(
                    "tool `{name}` timed out after {} s waiting for MCP server `{}`",
                    timeout.as_secs_f64(),
                    self.name()
                ),
            ),
        }
    }

    /// A call stopped while the server had it (and was sent `notifications/cancelled`).
    fn stopped_in_flight(
        &self,
        name: &str,
        timeout: Duration,
        deadline: Instant,
        why: Stop,
    ) -> ToolResult {
        let what = match why {
            Stop::Cancelled => "was cancelled",
            Stop::Timeout => "timed out",
        };
        let mut r = self.stopped_waiting(name, timeout, why);
        if let Some(Content::Text { text }) = r.content.first_mut() {
            *text = format!(
                "tool `{name}` {what} after {:.1} s; MCP server `{}` was sent `notifications/cancelled`",
                (timeout - deadline.saturating_duration_since(Instant::now())).as_secs_f64(),
                self.name()
            );
        }
        r
    }

    /// `params` as arguments for `mcp_name`, once the live list still has the tool with the
    /// contract the caller was built against and they pass the server's `inputSchema`.
    fn checked_args(
        &self,
        live: &Live,
        name: &str,
        mcp_name: &str,
        contract: &str,
        params: serde_json::Map<String, Value>,
    ) -> Result<serde_json::Map<String, Value>, ToolResult> {
        let args = Value::Object(params);
        let validator = {
            let tools = live.tools.read().unwrap_or_else(|e| e.into_inner());
            let Some(t) = tools.get(mcp_name) else {
                return Err(ToolResult::stopped(
                    StopReason::UnknownTool,
                    format!(
                        "tool `{name}`: MCP server `{}` no longer lists a tool `{mcp_name}`; nothing was sent",
                        self.name()
                    ),
                ));
            };
            if t.listed.contract != contract {
                return Err(self.drift(name, mcp_name, contract, &t.listed));
            }
            // Bounded before it runs: the check cannot be stopped once it has begun.
            if let Err(e) = toolbind_codegen::schema_work::check_work(
                &t.listed.input_schema,
                &args,
                toolbind_codegen::schema_work::MAX_CHECK_WORK,
            ) {
                return Err(ToolResult::stopped(
                    StopReason::BadArguments,
                    format!(
                        "the arguments for tool `{name}` were neither checked nor sent: checking them against MCP server `{}`'s inputSchema is refused, {e}",
                        self.name()
                    ),
                ));
            }
            t.input.clone()
        };
        if let Some(problems) = validator.and_then(|v| super::problems(&v, &args)) {
            return Err(ToolResult::stopped(
                StopReason::BadArguments,
                format!(
                    "invalid arguments for tool `{name}` (the server's inputSchema): {problems}"
                ),
            ));
        }
        let Value::Object(args) = args else {
            unreachable!("built from an object")
        };
        Ok(args)
    }

    /// The result of a `tools/call` the server answered.
    fn answered(&self, name: &str, response: ServerResult) -> ToolResult {
        match response {
            ServerResult::CallToolResult(r) => result_of(r),
            ServerResult::CreateTaskResult(_) => ToolResult::stopped(
                StopReason::ProtocolError,
                format!(
                    "tool `{name}`: MCP server `{}` answered with a task, though toolbind did not ask for one",
                    self.name()
                ),
            ),
            _ => ToolResult::stopped(
                StopReason::ProtocolError,
                format!(
                    "tool `{name}`: MCP server `{}` answered `tools/call` with another kind of result",
                    self.name()
                ),
            ),
        }
    }

    /// A `tools/call` the server answered with a JSON-RPC error.
    fn refused(&self, name: &str, e: &rmcp::model::ErrorData) -> ToolResult {
        let stop = if e.code == rmcp::model::ErrorCode::INVALID_PARAMS {
            StopReason::BadArguments
        } else {
            StopReason::ToolError
        };
        ToolResult::stopped(
            stop,
            format!(
                "tool `{name}`: MCP server `{}` refused the call: {} (JSON-RPC error {})",
                self.name(),
                e.message,
                e.code.0
            ),
        )
    }

    fn drift(&self, name: &str, mcp_name: &str, contract: &str, live: &SnapshotTool) -> ToolResult {
        let what = match self.expected.get(mcp_name) {
            Some(old) if old.contract == contract => {
                let one = |t: &SnapshotTool| {
                    super::Snapshot::new("s", Default::default(), "", vec![t.clone()]).ok()
                };
                match (one(old), one(live)) {
                    (Some(a), Some(b)) => super::diff(&a, &b)
                        .into_iter()
                        .find_map(|c| match c {
                            super::Change::Contract { what, .. } => Some(what.join("; ")),
                            _ => None,
                        })
                        .unwrap_or_else(|| "its schemas differ".into()),
                    _ => "its schemas differ".into(),
                }
            }
            _ => "its schemas differ".into(),
        };
        ToolResult::stopped(
            StopReason::ContractDrift,
            format!(
                "tool `{name}`: MCP server `{}` changed the contract of `{mcp_name}` since the snapshot this program was built from ({what}); nothing was sent. Take a new snapshot (`toolbind mcp snapshot`) and rebuild. (contract built against {contract}, live {})",
                self.name(),
                live.contract
            ),
        )
    }

    /// A call whose connection broke: the result says how (the server's exit and last
    /// stderr lines), and the next call starts the server again.
    ///
    /// Over HTTP one request can fail while the session is fine (a 502 from a proxy, an
    /// answer over the bound): unless the transport closed, only that call fails.
    async fn lost(&self, live: &Arc<Live>, name: &str, error: &rmcp::ServiceError) -> ToolResult {
        let closed = matches!(error, rmcp::ServiceError::TransportClosed);
        if live.process.is_none() && !closed && live.is_open() {
            return ToolResult::stopped(
                StopReason::Crashed,
                format!(
                    "tool `{name}`: the request to MCP server `{}` failed: {}",
                    self.name(),
                    error_text(error)
                ),
            );
        }
        let how = match live.over.message(self.server.max_message_bytes) {
            Some(m) => m,
            None => live.ended_how().await,
        };
        let note = match &live.process {
            Some(p) => p.stderr_note().await,
            None => String::new(),
        };
        let why = format!("{how} ({})", error_text(error));
        live.stop(&why);
        ToolResult::stopped(
            StopReason::Crashed,
            format!(
                "tool `{name}`: MCP server `{}` {why} before answering; it is started again for the next call{note}",
                self.name()
            ),
        )
    }

    /// After a call timed out: a server that does not answer a `ping` in time is hung,
    /// and is stopped (the next call starts it again).
    fn check_alive(&self, live: Arc<Live>) {
        if live.pinging.swap(true, Ordering::SeqCst) {
            return;
        }
        let limit = self.server.ping_timeout;
        let peer = live.client.peer().clone();
        let name = self.name().to_owned();
        tokio::spawn(async move {
            let ping = peer.send_request(ClientRequest::PingRequest(Default::default()));
            if tokio::time::timeout(limit, ping).await.is_err() {
                crate::telemetry::warn(&format!(
                    "toolbind: MCP server `{name}` did not answer a ping within {} s after a call timed out: stopping it (the next call starts it again)",
                    limit.as_secs_f64()
                ));
                live.stop("did not answer a ping after a call timed out");
            }
            live.pinging.store(false, Ordering::SeqCst);
        });
    }
}

/// Removes a call's progress sink when the call ends.
struct ProgressGuard {
    shared: Arc<Shared>,
    key: ProgressKey,
}

impl Drop for ProgressGuard {
    fn drop(&mut self) {
        self.shared
            .progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .sinks
            .remove(&self.key);
    }
}

#[derive(Clone, Copy)]
enum Stop {
    Cancelled,
    Timeout,
}

/// `fut`, unless the call is cancelled or its deadline passes first.
async fn until<F: Future>(
    cancel: &crate::CancelToken,
    deadline: Instant,
    fut: F,
) -> Result<F::Output, Stop> {
    tokio::select! {
        biased;
        out = fut => Ok(out),
        () = cancel.cancelled() => Err(Stop::Cancelled),
        () = tokio::time::sleep_until(deadline) => Err(Stop::Timeout),
    }
}

async fn cancel_request(peer: &Peer<RoleClient>, id: RequestId, why: &Stop) {
    let reason = match why {
        Stop::Cancelled => "the caller cancelled the call",
        Stop::Timeout => "the call's timeout passed",
    };
    let n = ClientNotification::CancelledNotification(CancelledNotification::new(
        CancelledNotificationParam::new(Some(id), Some(reason.to_owned())),
    ));
    let _ = tokio::time::timeout(Duration::from_secs(2), peer.send_notification(n)).await;
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
        self.ended
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(|| why.to_owned());
        self.kill();
    }
}

/// `url` as messages show it: without user information or query, which may hold a key.
#[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
fn shown_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let rest = match rest.split_once('/') {
        Some((authority, path)) => format!(
            "{}/{path}",
            authority.rsplit_once('@').map_or(authority, |(_, h)| h)
        ),
        None => rest.rsplit_once('@').map_or(rest, |(_, h)| h).to_owned(),
    };
    if scheme.is_empty() {
        rest
    } else {
        format!("{scheme}://{rest}")
    }
}

/// A request's error in words, without rmcp's wrapper (which names Rust types).
fn error_text(e: &rmcp::ServiceError) -> String {
    match e {
        rmcp::ServiceError::TransportSend(t) => list::chain(&*t.error),
        rmcp::ServiceError::TransportClosed => "the connection closed".to_owned(),
        e => e.to_string(),
    }
}

/// A tool's answer as a [`ToolResult`]: its content blocks (one toolbind cannot represent
/// becomes a text note), `structuredContent` as `details`, `isError` as a tool error.
fn result_of(r: CallToolResult) -> ToolResult {
    let content = r
        .content
        .into_iter()
        .map(|block| {
            let v = serde_json::to_value(&block).unwrap_or_default();
            serde_json::from_value::<Content>(v.clone()).unwrap_or_else(|_| {
                let kind = v.get("type").and_then(Value::as_str).unwrap_or("unknown");
                Content::text(format!(
                    "[a `{kind}` content block toolbind cannot represent]"
                ))
            })
        })
        .collect();
    let mut result = ToolResult::new(content);
    result.details = r.structured_content;
    if r.is_error == Some(true) {
        result = result.failed(StopReason::ToolError);
    }
    result
}

#[cfg(test)]
mod tests {
    #[test]
    fn urls_are_shown_without_secrets() {
        use super::shown_url;
        assert_eq!(
            shown_url("https://user:pw@mcp.example.com/mcp?key=SECRET#x"),
            "https://mcp.example.com/mcp"
        );
        assert_eq!(
            shown_url("http://127.0.0.1:80/mcp"),
            "http://127.0.0.1:80/mcp"
        );
        assert_eq!(shown_url("https://k@h"), "https://h");
    }
}
