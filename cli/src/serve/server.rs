//! The MCP server of `toolbind serve`, whatever carries its messages: the tools of the
//! served folders (reloaded when they change), the [`ServerHandler`] that answers
//! requests, and the [`State`] every session shares.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant, SystemTime};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    CompleteRequestParams, CompleteResult, ContentBlock, CreateTaskResult, ErrorCode,
    GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult, Implementation,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    MetaObject, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler};
use serde_json::Value;
use tokio::sync::broadcast;
use toolbind::exec::{ExecConfig, SubprocessExecutor};
use toolbind::output::OutputCheck;
use toolbind::{CallOptions, CancelToken, Content, Runtime, ToolInfo, ToolResult};
use toolbind_codegen::schema::{self, Dialect};
use toolbind_codegen::{TaskSupport, ToolSpec};
use tracing::Instrument;

use crate::tools;

use super::config::{Config, Timeouts};
use super::listener::Listener;
use super::logging::log;
use super::{asking, ids, logging, rounds, spills, surface, tasks};

/// How often the tools folders are checked for changes.
const POLL: Duration = Duration::from_secs(1);

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
    let snapshot = Snapshot::load(&dirs, &executor, &spill_dir, timeout);
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
    Ok(Arc::new(State {
        // `--stateless` HTTP has no session to hold a `resources/subscribe` in.
        subscriptions: config.subscriptions(),
        dirs,
        spill_dir,
        timeout,
        executor,
        current: RwLock::new(Arc::new(snapshot)),
        changed,
        shutdown: CancelToken::new(),
        calls: Arc::new(tokio::sync::Semaphore::new(config.max_concurrent_calls)),
        tasks: tasks::Tasks::start(config.tasks),
        rounds,
        spills: spills::Spills::default(),
        queue_calls: config.http.is_none(),
    }))
}

/// How long a call's answer may wait for the log messages queued before it to go out
/// (the queue is rate-limited: see [`logging`]).
const FLUSH: Duration = Duration::from_secs(1);

/// Detaches a round's request from its call when dropped.
struct Detach(Arc<Listener>);

impl Drop for Detach {
    fn drop(&mut self) {
        self.0.detach();
    }
}

/// What every session of one server shares: the tools, reloaded by [`watch`].
pub(crate) struct State {
    /// Whether sessions may subscribe to resources (`resources/subscribe`): not under
    /// `--stateless`.
    subscriptions: bool,
    dirs: Vec<PathBuf>,
    spill_dir: PathBuf,
    timeout: Timeouts,
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
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// What a reload changed.
#[derive(Debug, Clone)]
struct Changed {
    /// The MCP tool list (`tools/list_changed`).
    tools: bool,
    /// The documentation resources (`resources/list_changed`).
    resources: bool,
    /// The URIs of the documentation pages that changed, appeared or went
    /// (`resources/updated` to their subscribers); `None`: unknown, any may have.
    pages: Option<Arc<BTreeSet<String>>>,
}

impl Changed {
    /// A receiver that fell behind missed some changes: any may have happened.
    fn missed() -> Self {
        Changed {
            tools: true,
            resources: true,
            pages: None,
        }
    }

    /// Whether the page at `uri` may have changed (never a URI this server does not
    /// serve).
    fn touches(&self, uri: &str) -> bool {
        match &self.pages {
            Some(p) => p.contains(uri),
            None => uri.starts_with(surface::TOOL_URI_PREFIX),
        }
    }
}

/// The loaded tools at one moment. A reload builds a new one; calls in flight keep theirs.
struct Snapshot {
    runtime: Arc<Runtime>,
    tools: Vec<Tool>,
    /// Their documentation: resources, the system prompt, the instructions.
    docs: surface::Docs,
    stamp: Stamp,
}

impl Snapshot {
    fn load(
        dirs: &[PathBuf],
        executor: &Arc<SubprocessExecutor>,
        spill_dir: &Path,
        timeout: Timeouts,
    ) -> Self {
        // Stamp first: a change made while loading shows up at the next poll.
        let stamp = Stamp::of(dirs);
        let loaded = tools::load(dirs);
        for w in &loaded.warnings {
            log(&format!("warning: {w}"));
        }
        let tools = loaded.registry.iter().filter_map(mcp_tool).collect();
        let specs: Vec<ToolSpec> = loaded.registry.iter().map(|t| t.spec().clone()).collect();
        let docs = surface::Docs::of(&specs);
        // The executor is shared, so warm workers survive a reload (one whose entry file
        // changed is replaced at its next call).
        // Over stdio, client and server share a machine: the note's path is useful.
        let mut runtime = Runtime::builder()
            .registry(loaded.registry)
            .executor(executor.clone())
            .spill_dir(spill_dir)
            .on_output_violation(|tool, violations| {
                let list: Vec<String> = violations.iter().map(ToString::to_string).collect();
                log(&format!(
                    "warning: tool `{}` returned details that break its declared outputs (a bug \
                     in the tool; the result is sent without structuredContent): {}",
                    tool.name(),
                    list.join("; ")
                ));
            });
        if let Some(t) = timeout.call {
            // `serve --timeout`: the default for tools whose TOOL.md sets none.
            runtime = runtime.default_timeout(t);
        }
        if let Some(t) = timeout.ask {
            runtime = runtime.ask_timeout(t);
        }
        let runtime = runtime.build();
        Snapshot {
            runtime: Arc::new(runtime),
            tools,
            docs,
            stamp,
        }
    }
}

/// The MCP `Tool` of a spec: the MCP dialect's definition (name, title, description,
/// inputSchema, outputSchema, annotations), so `serve` and `toolbind schema --dialect mcp`
/// agree.
fn mcp_tool(tool: &ToolInfo) -> Option<Tool> {
    let spec = tool.spec();
    if let Some(why) = Dialect::Mcp.rejects(spec) {
        log(&format!(
            "warning: tool `{}` left out: MCP hosts reject its {why}",
            spec.name
        ));
        return None;
    }
    match serde_json::from_value(schema::tool_definition(spec, Dialect::Mcp)) {
        Ok(t) => Some(t),
        Err(e) => {
            log(&format!(
                "warning: tool `{}` left out: its MCP definition is invalid: {e}",
                spec.name
            ));
            None
        }
    }
}

/// What a change to the tools folders touches: each folder's mtime (tool folders
/// added, removed, renamed) and each TOOL.md's mtime and size.
#[derive(Debug, PartialEq, Eq)]
struct Stamp(Vec<StampEntry>);

/// A path, its mtime, and for a tool folder its TOOL.md's mtime and size.
type StampEntry = (PathBuf, Option<SystemTime>, Option<(SystemTime, u64)>);

impl Stamp {
    fn of(dirs: &[PathBuf]) -> Self {
        let mut entries = Vec::new();
        for dir in dirs {
            entries.push((dir.clone(), mtime(dir), None));
            let Ok(read) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut subs: Vec<PathBuf> = read.filter_map(|e| e.ok().map(|e| e.path())).collect();
            subs.sort();
            for sub in subs {
                let tool_md = std::fs::metadata(sub.join(toolbind_codegen::TOOL_FILE))
                    .ok()
                    .and_then(|m| Some((m.modified().ok()?, m.len())));
                entries.push((sub.clone(), mtime(&sub), tool_md));
            }
        }
        Stamp(entries)
    }
}

fn mtime(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// Polls the tools folders; on a change reloads, and when the tool list or the tools'
/// documentation differs tells the sessions (see [`notify_changes`]).
pub(crate) async fn watch(state: Arc<State>) {
    loop {
        tokio::time::sleep(POLL).await;
        let dirs = state.dirs.clone();
        let Ok(stamp) = tokio::task::spawn_blocking(move || Stamp::of(&dirs)).await else {
            continue;
        };
        let old = state.current();
        if stamp == old.stamp {
            continue;
        }
        let (dirs, executor, spill) = (
            state.dirs.clone(),
            state.executor.clone(),
            state.spill_dir.clone(),
        );
        let timeout = state.timeout;
        let Ok(new) =
            tokio::task::spawn_blocking(move || Snapshot::load(&dirs, &executor, &spill, timeout))
                .await
        else {
            continue;
        };
        let summary = diff(&old.tools, &new.tools);
        let pages = old.docs.changed_pages(&new.docs);
        let changed = Changed {
            tools: summary.is_some(),
            resources: old.docs != new.docs,
            pages: Some(Arc::new(pages)),
        };
        *state.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(new);
        if let Some(summary) = &summary {
            log(&format!("tool list changed: {summary}"));
        }
        // A changed page is a change of the docs: `resources` covers it.
        if changed.tools || changed.resources {
            let _ = state.changed.send(changed);
        }
    }
}

/// How often a session's notifier checks that its session is still open.
const SESSION_CHECK: Duration = Duration::from_secs(10);

/// Sends `notifications/tools/list_changed` and `notifications/resources/list_changed` to
/// one session opened with `initialize` whenever [`watch`] reports such a change, until
/// the session ends. (2026-07-28 sessions get them on their `subscriptions/listen` stream
/// instead: see `listen`.)
async fn notify_changes(
    mut changes: broadcast::Receiver<Changed>,
    peer: Peer<RoleServer>,
    subscribed: Arc<Subscriptions>,
) {
    loop {
        let change = tokio::select! {
            r = changes.recv() => r,
            () = tokio::time::sleep(SESSION_CHECK) => {
                if peer.is_transport_closed() {
                    return;
                }
                continue;
            }
        };
        let changed = match change {
            Ok(c) => c,
            // Missed some: say everything may have changed.
            Err(broadcast::error::RecvError::Lagged(_)) => Changed::missed(),
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let sent = async {
            if changed.tools {
                peer.notify_tool_list_changed().await?;
            }
            if changed.resources {
                peer.notify_resource_list_changed().await?;
            }
            for uri in subscribed.touched_by(&changed) {
                peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                    .await?;
            }
            Ok::<(), rmcp::service::ServiceError>(())
        };
        if let Err(e) = sent.await {
            if !peer.is_transport_closed() {
                log(&format!("cannot send a list_changed notification: {e}"));
            }
            return;
        }
    }
}

/// `added a; removed b; changed c`, or `None` when the lists are the same.
fn diff(old: &[Tool], new: &[Tool]) -> Option<String> {
    let find = |list: &[Tool], name: &str| list.iter().position(|t| t.name == name);
    let names = |it: Vec<&Tool>| {
        it.iter()
            .map(|t| t.name.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let added: Vec<&Tool> = new
        .iter()
        .filter(|t| find(old, &t.name).is_none())
        .collect();
    let removed: Vec<&Tool> = old
        .iter()
        .filter(|t| find(new, &t.name).is_none())
        .collect();
    let changed: Vec<&Tool> = new
        .iter()
        .filter(|t| find(old, &t.name).is_some_and(|i| old[i] != **t))
        .collect();
    let reordered = added.is_empty()
        && removed.is_empty()
        && changed.is_empty()
        && old.iter().map(|t| &t.name).ne(new.iter().map(|t| &t.name));
    let mut parts = Vec::new();
    for (label, list) in [("added", added), ("removed", removed), ("changed", changed)] {
        if !list.is_empty() {
            parts.push(format!("{label} {}", names(list)));
        }
    }
    if reordered {
        parts.push("reordered".into());
    }
    (!parts.is_empty()).then(|| parts.join("; "))
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

    /// Runs the call once one of `--max-concurrent-calls` is free, stopping it when the
    /// client cancels or the server shuts down. Returns the result and whether it was
    /// stopped so.
    async fn run_call(
        &self,
        runtime: Arc<Runtime>,
        name: &str,
        args: Value,
        opts: CallOptions,
        slot: Option<tokio::sync::OwnedSemaphorePermit>,
        context: &RequestContext<RoleServer>,
    ) -> (toolbind::ToolResult, bool) {
        let cancel = opts.get_cancel().clone();
        let call = self
            .state
            .run_in_slot(runtime, name, args, opts, slot, || {});
        tokio::pin!(call);
        let (r, shut) = tokio::select! {
            r = &mut call => r,
            _ = context.ct.cancelled() => {
                log(&format!("call {} of `{name}`: cancelled by the client", context.id));
                cancel.cancel();
                return (call.await.0, true);
            }
        };
        if shut {
            log(&format!(
                "call {} of `{name}`: stopped, the server is shutting down (--drain-timeout)",
                context.id
            ));
            return (shut_down(r), true);
        }
        (r, false)
    }

    /// A `tools/call` of a tool that runs as a task for this client: the task, its call
    /// started. `None`: a plain call (the tool says `task: never`, or it says `optional`
    /// and the client does not take tasks). A `task: required` tool's call from a client
    /// that does not take tasks is refused with -32021 (missing client capability).
    ///
    /// A client takes tasks when it declared the extension `io.modelcontextprotocol/tasks`
    /// at `initialize`, or in the request's own `_meta` client capabilities (2026-07-28).
    fn as_task(
        &self,
        runtime: &Arc<Runtime>,
        name: &str,
        args: &Value,
        meta: &rmcp::model::RequestMetaObject,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<CallToolResponse>, McpError> {
        let Some(info) = runtime.registry().get(name) else {
            return Ok(None);
        };
        let takes_tasks = context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        match info.spec().task {
            TaskSupport::Required | TaskSupport::Optional if takes_tasks => {}
            TaskSupport::Required => {
                let required = ClientCapabilities::builder().enable_tasks().build();
                return Err(McpError::new(
                    ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                    format!(
                        "`{name}` runs only as a task (its TOOL.md says `task: required`): declare the client capability extensions.\"{}\" and poll tasks/get",
                        rmcp::model::TASKS_EXTENSION_ID
                    ),
                    Some(serde_json::json!({ "requiredCapabilities": required })),
                ));
            }
            _ => return Ok(None),
        }
        let runs_for = info
            .timeout()
            .unwrap_or(runtime.config().get_default_timeout())
            .saturating_add(self.state.executor.config().get_grace());
        // Counted against --task-memory while the task is unfinished.
        let args_bytes = serde_json::to_vec(args).map_or(0, |v| v.len());
        let (task, started) =
            self.state
                .tasks
                .create(name, self.owner(context), runs_for, args_bytes)?;
        let span = request_span(name, meta, context);
        log(&format!(
            "call {} of `{name}`: task {}",
            context.id,
            ids::short(&started.id)
        ));
        tokio::spawn(
            run_task(
                self.state.clone(),
                runtime.clone(),
                name.to_owned(),
                args.clone(),
                started,
                context.client_capabilities(),
                span.clone(),
                spills::owner(context),
            )
            .instrument(span),
        );
        Ok(Some(CallToolResponse::Task(CreateTaskResult::new(task))))
    }

    /// The first request of an MCP 2026-07-28 call: the tool starts, in a task of its
    /// own that outlives the request should the tool ask (see [`rounds`]).
    #[allow(clippy::too_many_arguments)]
    async fn first_round(
        &self,
        runtime: Arc<Runtime>,
        name: &str,
        args: Value,
        responses: std::collections::BTreeMap<String, Value>,
        slot: Option<tokio::sync::OwnedSemaphorePermit>,
        opts: CallOptions,
        request_level: logging::RequestLevel,
        meta: &rmcp::model::RequestMetaObject,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let call = rounds::Rounds::begin(name, &args, responses)?;
        // Progress and log lines go to the request of the round at hand: this one, then
        // each retry.
        let (attached, forwarder) =
            call.listener
                .request(context, self.logger.clone(), request_level);
        call.listener.attach(attached);
        let opts = call
            .listener
            .report(opts, name)
            .cancel(call.cancel.clone())
            .host(asking::Asking(asking::Via::Rounds {
                call: call.clone(),
                capabilities: context.client_capabilities(),
            }));
        let span = request_span(name, meta, context);
        let started = Instant::now();
        let (state, called, running) = (self.state.clone(), name.to_owned(), call.clone());
        let counted = self.state.rounds.runs();
        tokio::spawn(
            async move {
                let _counted = counted;
                let (result, shut) = state
                    .run_in_slot(runtime, &called, args, opts, slot, || {})
                    .await;
                let result = if shut { shut_down(result) } else { result };
                toolbind::telemetry::mcp_server_ended(
                    &tracing::Span::current(),
                    &called,
                    &result,
                    started,
                );
                running.finish(result);
            }
            .instrument(span),
        );
        self.round(name, &call, forwarder, context, request_level)
            .await
    }

    /// A retry of an MCP 2026-07-28 call, its answers delivered (and its request attached
    /// to the call, with `forwarder` sending its progress): on to the call's end or its
    /// next questions.
    async fn next_round(
        &self,
        name: &str,
        call: Arc<rounds::Call>,
        forwarder: Option<tokio::task::JoinHandle<()>>,
        request_level: logging::RequestLevel,
        context: &RequestContext<RoleServer>,
        meta: &rmcp::model::RequestMetaObject,
    ) -> Result<CallToolResponse, McpError> {
        self.round(name, &call, forwarder, context, request_level)
            .instrument(request_span(name, meta, context))
            .await
    }

    /// Drives `call` until it ends or asks; the client's cancel and the server's end stop
    /// it.
    async fn drive(
        &self,
        call: &Arc<rounds::Call>,
        context: &RequestContext<RoleServer>,
    ) -> Result<rounds::Turn, McpError> {
        let (ct, shutdown, id) = (
            context.ct.clone(),
            self.state.shutdown.clone(),
            context.id.clone(),
        );
        let stop = async move {
            tokio::select! {
                () = ct.cancelled() => log(&format!("call {id}: cancelled by the client")),
                () = shutdown.cancelled() => log(&format!("call {id}: stopped, the server is shutting down")),
            }
        };
        self.state.rounds.drive(call, stop).await
    }

    /// One round of `call`, for the request of `context` (attached to the call, its
    /// progress sent by `forwarder`): on until the tool ends or asks, then its result or
    /// its questions. The request is detached first, and, as a plain call's, the rest of
    /// its progress goes before the answer (for at most a second): what the tool reports
    /// after that is the retry's.
    async fn round(
        &self,
        name: &str,
        call: &Arc<rounds::Call>,
        forwarder: Option<tokio::task::JoinHandle<()>>,
        context: &RequestContext<RoleServer>,
        request_level: logging::RequestLevel,
    ) -> Result<CallToolResponse, McpError> {
        let started = Instant::now();
        // Detached however this ends (should the request's future be dropped).
        let _detach = Detach(call.listener.clone());
        let turn = self.drive(call, context).await;
        let logged = call.listener.let_go(forwarder).await;
        match turn? {
            rounds::Turn::Done(result) => {
                let stopped = context.ct.is_cancelled() || self.state.shutdown.is_cancelled();
                let reported = self.report(context, name, &result, stopped, started, request_level);
                if logged || reported {
                    self.logger.flush(FLUSH).await;
                }
                Ok(to_mcp(result, &self.state, spills::owner(context).as_deref()).into())
            }
            rounds::Turn::Input(input) => {
                log(&format!(
                    "call {} of `{name}`: waits for the client's answers to {} (call {}, --pending-ttl {} s)",
                    context.id,
                    input
                        .input_requests
                        .as_ref()
                        .map(|r| r.keys().cloned().collect::<Vec<_>>().join(", "))
                        .unwrap_or_default(),
                    call.short_id(),
                    self.state.rounds.ttl().as_secs(),
                ));
                if logged {
                    self.logger.flush(FLUSH).await;
                }
                Ok(CallToolResponse::InputRequired(input))
            }
        }
    }

    /// The host of a `tools/call`: its client, where it can be asked (see [`asking`]).
    fn asker(
        &self,
        context: &RequestContext<RoleServer>,
        level: logging::RequestLevel,
    ) -> asking::Asking {
        asking::Asking(if !self.state.subscriptions {
            asking::Via::Nobody(
                "this server is stateless (toolbind serve --stateless) and cannot receive a client's answer".into(),
            )
        } else {
            asking::Via::Client {
                peer: context.peer.clone(),
                request: context.id.clone(),
                logger: self.logger.clone(),
                level,
            }
        })
    }

    /// The call's one line on stderr, and as a `notifications/message` from `toolbind`
    /// (Warning for an error, Debug otherwise) where the request's level allows it.
    fn report(
        &self,
        context: &RequestContext<RoleServer>,
        name: &str,
        result: &toolbind::ToolResult,
        stopped: bool,
        started: Instant,
        request_level: logging::RequestLevel,
    ) -> bool {
        let event = format!(
            "call {} of `{name}`: {} in {:.1} s",
            context.id,
            if stopped {
                "stopped"
            } else if result.is_error {
                "error"
            } else {
                "ok"
            },
            started.elapsed().as_secs_f64()
        );
        log(&event);
        #[allow(deprecated)]
        {
            use rmcp::model::LoggingLevel;
            let level = if result.is_error {
                LoggingLevel::Warning
            } else {
                LoggingLevel::Debug
            };
            let enabled = self.logger.enabled(level, request_level);
            if enabled {
                self.logger
                    .log(&context.peer, level, "toolbind", Value::String(event));
            }
            enabled
        }
    }
}

/// A call the server's end stopped: its text says so first.
fn shut_down(mut r: ToolResult) -> ToolResult {
    if let Some(Content::Text { text }) = r.content.first_mut() {
        text.insert_str(
            0,
            "the server shut down before the call finished (it may have run in part; call again on another replica): ",
        );
    }
    r
}

/// Refuses, with -32021 and `requiredCapabilities`, a call of a tool whose TOOL.md says
/// `asks:` a question the client did not declare it can be asked (at `initialize`, or in
/// the request's `_meta` on MCP 2026-07-28), before the tool runs.
fn can_be_asked(
    runtime: &Runtime,
    name: &str,
    context: &RequestContext<RoleServer>,
) -> Result<(), McpError> {
    let Some(info) = runtime.registry().get(name) else {
        return Ok(());
    };
    if info.spec().asks.is_empty() {
        return Ok(());
    }
    let caps = context.client_capabilities();
    let missing: Vec<_> = info
        .spec()
        .asks
        .iter()
        .copied()
        .filter(|a| !asking::declares(caps.as_ref(), a.as_str()))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let required: serde_json::Map<String, Value> = missing
        .iter()
        .map(|a| (a.as_str().to_owned(), serde_json::json!({})))
        .collect();
    let names: Vec<_> = missing.iter().map(|a| a.as_str()).collect();
    Err(McpError::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "`{name}` asks its client questions it cannot do without (its TOOL.md says `asks:`): declare the client capabilit{} {}",
            if names.len() == 1 { "y" } else { "ies" },
            names.join(", ")
        ),
        Some(serde_json::json!({ "requiredCapabilities": required })),
    ))
}

/// A request's `inputResponses` (MCP 2026-07-28): each must be an object, the client's
/// result for the input request of its key; -32602 otherwise.
fn input_responses(
    responses: Option<rmcp::model::InputResponses>,
) -> Result<std::collections::BTreeMap<String, Value>, McpError> {
    let responses = responses.unwrap_or_default();
    for (key, value) in &responses {
        if !value.is_object() {
            return Err(McpError::invalid_params(
                format!(
                    "inputResponses.{key} must be an object (the client's result for that input request), not {}",
                    toolbind_codegen::mcp::json_kind(value)
                ),
                None,
            ));
        }
    }
    Ok(responses)
}

/// A task's call: it waits for one of `--max-concurrent-calls` (a cancel or the TTL ends
/// the wait), runs (the task's cancel, its TTL and the server's shutdown stop it through
/// the call's abort signal, then the kill), and leaves its result with the task.
#[allow(clippy::too_many_arguments)] // one spawned task's whole context, moved in
async fn run_task(
    state: Arc<State>,
    runtime: Arc<Runtime>,
    name: String,
    args: Value,
    started: tasks::Started,
    capabilities: Option<ClientCapabilities>,
    span: tracing::Span,
    owner: Option<String>,
) {
    let begun = Instant::now();
    let cancel = started.cancel.clone();
    let progress = started.progress.clone();
    let opts = CallOptions::new()
        .id(format!("task-{}", ids::short(&started.id)))
        .host(asking::Asking(asking::Via::Task {
            tasks: state.tasks.clone(),
            id: started.id.clone(),
            capabilities,
        }))
        .cancel(cancel.clone())
        .progress(move |p| {
            progress.send_replace(Some(p));
        });
    let (result, _) = state
        .run_in_slot(runtime, &name, args, opts, None, || started.running())
        .await;
    toolbind::telemetry::mcp_server_ended(&span, &name, &result, begun);
    log(&format!(
        "task {} of `{name}`: {} in {:.1} s",
        ids::short(&started.id),
        result.stop.kind(),
        begun.elapsed().as_secs_f64()
    ));
    let json = match serde_json::to_value(to_mcp(result.clone(), &state, owner.as_deref())) {
        Ok(Value::Object(o)) => o,
        _ => rmcp::model::JsonObject::new(),
    };
    started.finish(&result, json);
}

/// Resource URIs one session subscribed to, at most this many.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 1024;
/// The longest URI a subscription may name, in bytes (so a session holds at most 4 MiB of
/// them).
pub(crate) const MAX_SUBSCRIPTION_URI: usize = 4096;

/// One session's `resources/subscribe` URIs. Any URI may be subscribed to, one this
/// server does not serve included (MCP leaves that to the server; such a resource never
/// changes here, so nothing is ever sent for it), up to [`MAX_SUBSCRIPTIONS`].
#[derive(Default)]
struct Subscriptions(std::sync::Mutex<BTreeSet<String>>);

impl Subscriptions {
    fn add(&self, uri: String) -> Result<(), McpError> {
        if uri.len() > MAX_SUBSCRIPTION_URI {
            return Err(McpError::invalid_params(
                format!(
                    "a resource URI of {} bytes: at most {MAX_SUBSCRIPTION_URI} may be subscribed to",
                    uri.len()
                ),
                None,
            ));
        }
        let mut set = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if set.len() >= MAX_SUBSCRIPTIONS && !set.contains(&uri) {
            return Err(McpError::invalid_params(
                format!(
                    "too many resource subscriptions: a session may hold {MAX_SUBSCRIPTIONS}; \
                     unsubscribe from some first"
                ),
                Some(serde_json::json!({"uri": uri})),
            ));
        }
        set.insert(uri);
        Ok(())
    }

    fn remove(&self, uri: &str) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(uri);
    }

    /// The subscribed URIs `changed` may have touched.
    fn touched_by(&self, changed: &Changed) -> Vec<String> {
        let set = self.0.lock().unwrap_or_else(|e| e.into_inner());
        set.iter().filter(|u| changed.touches(u)).cloned().collect()
    }
}

impl ServerHandler for Server {
    #[allow(deprecated)] // the logging capability: rmcp marks it deprecated (SEP-2577)
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_completions()
            .enable_logging()
            .enable_prompts()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_tasks()
            .build();
        if self.state.subscriptions
            && let Some(resources) = capabilities.resources.as_mut()
        {
            resources.subscribe = Some(true);
        }
        let mut server_info = Implementation::new("toolbind", env!("CARGO_PKG_VERSION"));
        server_info.title = Some("toolbind: TOOL.md tools".into());
        ServerConfig::new(capabilities)
            .with_server_info(server_info)
            .with_instructions(self.state.current().docs.instructions().to_owned())
    }

    #[allow(deprecated)] // MCP logging: see `logging`
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.logger.set_level(request.level);
        Ok(())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if !self.state.subscriptions {
            return Err(McpError::method_not_found::<
                rmcp::model::SubscribeRequestMethod,
            >());
        }
        self.subscriptions.add(request.uri)
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if !self.state.subscriptions {
            return Err(McpError::method_not_found::<
                rmcp::model::UnsubscribeRequestMethod,
            >());
        }
        self.subscriptions.remove(&request.uri);
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        Ok(CompleteResult::new(
            self.state.current().docs.complete(&request),
        ))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(
            self.state.current().docs.resources(),
        ))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(
            surface::Docs::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if let Some(name) = request.uri.strip_prefix(SPILL_URI_PREFIX) {
            // Only a file this server wrote and handed to this session: any other name is
            // not found, whether or not a file has it.
            let owner = spills::owner(&context);
            if !self.state.spills.may_read(name, owner.as_deref()) {
                return Err(spill_not_found(
                    &request.uri,
                    toolbind::spill::ReadError::NotFound,
                ));
            }
            return read_spill(&self.state.spill_dir, name, &request.uri).await;
        }
        self.state
            .current()
            .docs
            .read(&request.uri)
            .map(ReadResourceResponse::from)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(surface::Docs::prompts()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        self.state
            .current()
            .docs
            .prompt(&request.name)
            .map(GetPromptResponse::from)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(
            self.state.current().tools.clone(),
        ))
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let runtime = self.state.current().runtime.clone();
        let name = request.name.to_string();
        if runtime.registry().get(&name).is_none() {
            // MCP: an unknown tool is a protocol error (-32602), not a tool result.
            let result = runtime.check(&name, Value::Null).err().unwrap_or_default();
            return Err(McpError::invalid_params(result.text_content(), None));
        }
        let args = request.arguments.take().map_or(Value::Null, Value::Object);
        let input_responses_sent = request.input_responses.take();
        // rmcp hands the request's `_meta` over in the context.
        let meta = match &request.meta {
            Some(m) if context.meta.get_traceparent().is_none() => m,
            _ => &context.meta,
        };
        // MCP 2026-07-28: a call's questions go out in an InputRequiredResult; a retry
        // carries the requestState it got, and resumes its waiting call.
        let in_rounds = context
            .protocol_version()
            .is_some_and(|v| !v.has_initialize());
        let responses = if in_rounds {
            input_responses(input_responses_sent)?
        } else {
            Default::default()
        };
        if in_rounds && let Some(sealed) = request.request_state.as_deref() {
            #[allow(deprecated)]
            let request_level = logging::RequestLevel {
                level: context.meta.log_level(),
                per_request: true,
            };
            let mut forwarder = None;
            let call = self
                .state
                .rounds
                .redeem(sealed, &name, &args, responses, |call| {
                    let (attached, task) =
                        call.listener
                            .request(&context, self.logger.clone(), request_level);
                    call.listener.attach(attached);
                    forwarder = task;
                })?;
            log(&format!(
                "call {} of `{name}`: resumed by the client's answers (call {})",
                context.id,
                call.short_id()
            ));
            return self
                .next_round(&name, call, forwarder, request_level, &context, meta)
                .await;
        }
        can_be_asked(&runtime, &name, &context)?;
        if let Some(response) = self.as_task(&runtime, &name, &args, meta, &context)? {
            return Ok(response);
        }
        // Over HTTP a call does not queue (the transport refuses one past the limit with
        // 429); tasks can still hold every slot, and then a call is refused here.
        let slot = if self.state.queue_calls {
            None
        } else {
            match self.state.calls.clone().try_acquire_owned() {
                Ok(p) => Some(p),
                Err(_) => {
                    log(&format!(
                        "refused call {} of `{name}`: every one of --max-concurrent-calls is taken (tasks included)",
                        context.id
                    ));
                    return Err(McpError::new(
                        ErrorCode(-32000),
                        "too many tool calls: every one this server runs at once is taken, by calls or tasks (toolbind serve --max-concurrent-calls); retry later",
                        None,
                    ));
                }
            }
        };
        let cancel = CancelToken::new();
        // The tool gets the request's id as its call id: shortened, it is the client's.
        let opts = CallOptions::new()
            .id(format!(
                "mcp-{}",
                toolbind::untrusted::echo(&context.id.to_string())
            ))
            .cancel(cancel.clone());
        // 2026-07-28: only a request that names a log level gets messages (the spec: a
        // server MUST NOT send any otherwise); earlier revisions: the session's level, or
        // the request's own.
        #[allow(deprecated)]
        let request_level = logging::RequestLevel {
            level: context.meta.log_level(),
            per_request: context
                .protocol_version()
                .is_some_and(|v| !v.has_initialize()),
        };
        if in_rounds {
            return self
                .first_round(
                    runtime,
                    &name,
                    args,
                    responses,
                    slot,
                    opts,
                    request_level,
                    meta,
                    &context,
                )
                .await;
        }
        let listener = Arc::new(Listener::default());
        let (attached, forwarder) = listener.request(&context, self.logger.clone(), request_level);
        listener.attach(attached);
        let opts = listener
            .report(opts, &name)
            .host(self.asker(&context, request_level));
        let span = request_span(&name, meta, &context);
        let started = Instant::now();
        let (result, stopped) = self
            .run_call(runtime, &name, args, opts, slot, &context)
            .instrument(span.clone())
            .await;
        toolbind::telemetry::mcp_server_ended(&span, &name, &result, started);
        // No progress follows the result.
        let logged = listener.let_go(forwarder).await;
        let reported = self.report(&context, &name, &result, stopped, started, request_level);
        if reported || logged {
            // Its last lines before its answer (over HTTP, its stream ends with it).
            self.logger.flush(FLUSH).await;
        }
        Ok(to_mcp(result, &self.state, spills::owner(&context).as_deref()).into())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        self.state
            .tasks
            .get(&request.task_id)
            .map(GetTaskResult::new)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.state.tasks.update(
            &request.task_id,
            self.owner(&context),
            request.input_responses,
        )
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.state.tasks.cancel(&request.task_id)?;
        log(&format!(
            "task {}: cancelled by the client (request {})",
            ids::short(&request.task_id),
            context.id
        ));
        Ok(())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        tokio::spawn(notify_changes(
            self.state.changed.subscribe(),
            context.peer,
            self.subscriptions.clone(),
        ));
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed.filter(|on| *on);
        accepted.resources_list_changed = requested.resources_list_changed.filter(|on| *on);
        // As `resources/subscribe`: any URI (the wire check has bounded them).
        accepted.resource_subscriptions = requested
            .resource_subscriptions
            .clone()
            .filter(|uris| self.state.subscriptions && !uris.is_empty());
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let mut changes = self.state.changed.subscribe();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                r = changes.recv() => {
                    let changed = match r {
                        Ok(changed) => changed,
                        // Missed changes: anything may have changed.
                        Err(broadcast::error::RecvError::Lagged(_)) => Changed::missed(),
                        Err(broadcast::error::RecvError::Closed) => return Ok(()),
                    };
                    let accepted = context.accepted();
                    if changed.tools && accepted.tools_list_changed == Some(true) {
                        let _ = context.sink().notify_tool_list_changed().await;
                    }
                    if changed.resources && accepted.resources_list_changed == Some(true) {
                        let _ = context.sink().notify_resource_list_changed().await;
                    }
                    // Once per URI, however often the request named it.
                    let uris: BTreeSet<&String> =
                        accepted.resource_subscriptions.iter().flatten().collect();
                    for uri in uris {
                        if changed.touches(uri) {
                            let _ = context.sink().notify_resource_updated(uri.clone()).await;
                        }
                    }
                }
            }
        }
    }
}

/// Where `serve` names what the runtime saved to the spill folder.
const SPILL_URI_PREFIX: &str = "toolbind://spill/";

/// `resources/read` of `toolbind://spill/<name>`: the file, as text (a truncated block's
/// full text) or a base64 blob, off the async threads. `name` is the client's: one a spill
/// file has, or resource-not-found.
async fn read_spill(dir: &Path, name: &str, uri: &str) -> Result<ReadResourceResponse, McpError> {
    let (dir, owned) = (dir.to_path_buf(), name.to_owned());
    let read = tokio::task::spawn_blocking(move || toolbind::spill::read_spill(&dir, &owned))
        .await
        .map_err(|e| {
            McpError::internal_error(format!("reading the spill file failed: {e}"), None)
        })?;
    match read {
        Ok((bytes, mime)) => {
            let contents = if mime == "text/plain" {
                rmcp::model::ResourceContents::text(
                    String::from_utf8_lossy(&bytes).into_owned(),
                    uri,
                )
            } else {
                rmcp::model::ResourceContents::blob(toolbind::spill::base64_encode(&bytes), uri)
            };
            Ok(rmcp::model::ReadResourceResult::new(vec![contents.with_mime_type(mime)]).into())
        }
        Err(
            e @ (toolbind::spill::ReadError::NotASpillName | toolbind::spill::ReadError::NotFound),
        ) => Err(spill_not_found(uri, e)),
        Err(e) => Err(McpError::internal_error(
            format!("cannot read `{}`: {e}", surface::shortened(uri)),
            None,
        )),
    }
}

/// A spill resource that is not found (or not this session's): the URI, shortened.
fn spill_not_found(uri: &str, e: toolbind::spill::ReadError) -> McpError {
    let uri = surface::shortened(uri);
    McpError::resource_not_found(
        format!("no resource `{uri}`: {e}"),
        Some(serde_json::json!({ "uri": uri })),
    )
}

/// A runtime result as an MCP `CallToolResult`; `details` travels in `_meta`. For a tool
/// that declares `outputs:`, a result whose details passed the runtime's check
/// ([`OutputCheck::Held`]) also carries them as `structuredContent`, as the MCP spec asks of a
/// tool with an `outputSchema`; one whose details break the contract goes without it (the
/// runtime has logged why).
///
/// What the runtime saved to the spill folder is named by a `toolbind://spill/<name>`
/// resource (readable with `resources/read`, with the same token): a binary block's
/// `file://` link and the path in a truncation note are server-side paths a remote client
/// cannot open. Each file this process wrote is handed to `owner` (the session of the
/// call), who alone can read it.
fn to_mcp(r: ToolResult, state: &State, owner: Option<&str>) -> CallToolResult {
    let spill_dir = &state.spill_dir;
    let structured = r.output_check == OutputCheck::Held;
    let note_path = format!("saved to: {}/", spill_dir.display());
    let content = r
        .content
        .into_iter()
        .map(|c| match c {
            Content::Text { text } if text.contains(&note_path) => {
                for (at, _) in text.match_indices(&note_path) {
                    let rest = &text[at + note_path.len()..];
                    let end = rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
                        .unwrap_or(rest.len());
                    state
                        .spills
                        .hand_out(rest[..end].trim_end_matches('.'), owner);
                }
                ContentBlock::text(
                    text.replace(&note_path, &format!("saved to: {SPILL_URI_PREFIX}")),
                )
            }
            Content::Text { text } => ContentBlock::text(text),
            Content::ResourceLink(mut link) => {
                if let Some(name) = toolbind::spill::spill_name(spill_dir, &link.uri) {
                    state.spills.hand_out(name, owner);
                    link.uri = format!("{SPILL_URI_PREFIX}{name}");
                }
                let json = serde_json::to_value(Content::ResourceLink(link)).unwrap_or_default();
                use serde::Deserialize;
                ContentBlock::deserialize(&json)
                    .unwrap_or_else(|_| ContentBlock::text(json.to_string()))
            }
            Content::Image { data, mime_type } => ContentBlock::image(data, mime_type),
            // Audio, embedded resources and resource links: the runtime's blocks have
            // MCP's shapes. One rmcp cannot read (or a kind newer than this server): its
            // JSON, as text.
            other => {
                use serde::Deserialize;
                let json = serde_json::to_value(&other).unwrap_or_default();
                ContentBlock::deserialize(&json)
                    .unwrap_or_else(|_| ContentBlock::text(json.to_string()))
            }
        })
        .collect();
    let mut out = if r.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    if structured {
        // No details at all passed the check only because every output is optional.
        out.structured_content = Some(
            r.details
                .clone()
                .unwrap_or_else(|| Value::Object(serde_json::Map::new())),
        );
    }
    if let Some(details) = r.details {
        let mut meta = serde_json::Map::new();
        meta.insert("details".into(), details);
        out.meta = Some(MetaObject(meta));
    }
    out
}

/// The span of a `tools/call` request, continuing the client's trace: the request's
/// `_meta.traceparent` (2026-07-28, SEP-414), else the HTTP request's `traceparent` header.
fn request_span(
    tool: &str,
    meta: &rmcp::model::RequestMetaObject,
    context: &RequestContext<RoleServer>,
) -> tracing::Span {
    let http = context
        .extensions
        .get::<hyper::http::request::Parts>()
        .map(|p| &p.headers);
    let protocol = context
        .protocol_version()
        .map(|v| v.as_str().to_owned())
        .unwrap_or_default();
    let span = toolbind::telemetry::mcp_server_span(
        tool,
        &context.id.to_string(),
        &protocol,
        if http.is_some() { "tcp" } else { "pipe" },
    );
    let header = |name: &str| {
        http.and_then(|h| h.get(name))
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let from_meta = meta
        .get_traceparent()
        .map(|t| toolbind::telemetry::TraceContext {
            traceparent: t.to_owned(),
            tracestate: meta.get_tracestate().map(str::to_owned),
        });
    let from_header = || {
        Some(toolbind::telemetry::TraceContext {
            traceparent: header("traceparent")?,
            tracestate: header("tracestate"),
        })
    };
    if let Some(tc) = from_meta.or_else(from_header) {
        toolbind::telemetry::continue_trace(&span, &tc);
    }
    span
}
