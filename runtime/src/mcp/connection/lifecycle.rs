//! A connection's life: started (stdio or HTTP), checked against the snapshot at every
//! connect and after `tools/list_changed`, restarted with a capped backoff, pinged when a
//! call hangs.

use super::*;
use crate::lock::{Locked, RwLocked};

impl Connection {
    /// The live connection, started (or started again) when needed; the error says why
    /// there is none, as a result for the call. Every transition is made under the one
    /// state lock, which the pieces below are handed.
    pub(crate) async fn live(self: &Arc<Self>) -> Result<Arc<Live>, ToolResult> {
        if let Some(why) = self.refused.get() {
            return Err(ToolResult::stopped(
                StopReason::UnknownTool,
                format!("MCP server `{}` was refused: {why}", self.name()),
            ));
        }
        if self.is_closed() {
            return Err(ToolResult::error("the MCP connection is shutting down"));
        }
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
                let live = live.clone();
                if self.died(&live, &mut state).await {
                    drop(state);
                    return Box::pin(self.live()).await;
                }
                Some(0)
            }
            State::Idle => Some(0),
            State::Down {
                until,
                failures,
                why,
            } => Some(self.wait_out(*until, *failures, why).await?),
        };
        if let Some(failures) = start {
            let me = self.clone();
            let task = tokio::spawn(async move { me.connect().await });
            *self.starting.locked() = Some(task.abort_handle());
            *state = State::Starting { task, failures };
            self.show(McpServerState::Starting);
        }
        self.started(&mut state).await
    }

    /// `live` died (or was stopped: hung, a broken connection). Soon after its start, that
    /// counts as one more failed start, and waits its backoff (`true`: `state` is down);
    /// otherwise it is started again now.
    async fn died(&self, live: &Live, state: &mut State) -> bool {
        let stopped = live.ended.locked().clone();
        let why = match stopped {
            Some(w) => w,
            None => live.ended_how().await,
        };
        self.set_protocol(None);
        if live.started.elapsed() < CRASH_LOOP_WINDOW {
            let failures = live.failures + 1;
            let why = format!(
                "it {why} within {} s of starting",
                CRASH_LOOP_WINDOW.as_secs()
            );
            self.show(McpServerState::Failed {
                reason: why.clone(),
            });
            *state = State::Down {
                until: Instant::now() + self.backoff(failures),
                failures,
                why,
            };
            return true;
        }
        crate::telemetry::warn(&format!(
            "toolbind: MCP server `{}` {why}: starting it again",
            self.name()
        ));
        false
    }

    /// A server down `until` after `failures` failed starts: a short wait is waited out
    /// (the caller's deadline still bounds it) and the start goes on; a longer one fails
    /// the call at once, saying why.
    async fn wait_out(&self, until: Instant, failures: u32, why: &str) -> Result<u32, ToolResult> {
        let now = Instant::now();
        if now < until && until - now <= SHORT_WAIT {
            tokio::time::sleep_until(until).await;
        } else if now < until {
            let wait = (until - now).as_secs_f64();
            return Err(ToolResult::stopped(
                StopReason::Crashed,
                format!(
                    "MCP server `{}` is not running: {why}\n(toolbind starts it again in {wait:.1} s; {failures} start(s) in a row failed)",
                    self.name()
                ),
            ));
        }
        Ok(failures)
    }

    /// Waits for the start in `state` to end: up, or down with its backoff.
    async fn started(&self, state: &mut State) -> Result<Arc<Live>, ToolResult> {
        let State::Starting { task, failures } = state else {
            unreachable!("set by the caller")
        };
        let failures = *failures;
        // Only this waiter holds the state: if its deadline ends here, the task (in the
        // state) goes on and the next call waits for the same start.
        let outcome = match task.await {
            Ok(o) => o,
            Err(e) => Err((StopReason::Crashed, format!("its start was stopped ({e})"))),
        };
        *self.starting.locked() = None;
        match outcome {
            Ok(live) if self.is_closed() || self.refused.get().is_some() => {
                // Closed or refused while it started: stopped now, not kept.
                live.stop("the runtime is gone, or refused the server");
                *state = State::Idle;
                Err(ToolResult::error("the MCP connection is shutting down"))
            }
            Ok(mut live) => {
                live.failures = failures;
                let live = Arc::new(live);
                self.set_protocol(Some(live.protocol.clone()));
                *state = State::Up(live.clone());
                self.show(McpServerState::Ready);
                Ok(live)
            }
            Err((stop, why)) => {
                self.set_protocol(None);
                self.show(self.failed(why.clone()));
                *self.last_stop.locked() = Some(stop.clone());
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
    pub(super) fn backoff(&self, failures: u32) -> Duration {
        FIRST_RESTART_DELAY
            .saturating_mul(1 << failures.saturating_sub(1).min(16))
            .min(self.server.max_restart_delay)
    }

    /// Starts a stdio server and initializes it. The jail is not tried out before the
    /// first start (that costs a whole interpreter start); when a jailed start fails, the
    /// trial runs then: a jail that cannot run here is a `JailFailed` in `required` mode,
    /// and in `auto` the server is started once more, unjailed (with the one warning).
    pub(super) async fn start_stdio(
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
                            spawn::grant_hint(&self.server.sandbox),
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

    /// Reaches an HTTP server and initializes it: 2026-07-28 first (`server/discover`),
    /// falling back to `initialize`. A server that answers `server/discover` with an empty
    /// result, as one that does not know the method may (rather than with -32601), is
    /// reached again, on a new connection, with `initialize` alone.
    #[cfg(feature = "mcp-http")]
    async fn start_http(
        &self,
        url: &str,
        generation: u64,
    ) -> Result<RunningService<RoleClient, Handler>, (StopReason, String)> {
        let timeout = self.server.connect_timeout;
        // The HTTP client's errors quote the URL given, query and user information too.
        let failed = |e: String| {
            (
                StopReason::Crashed,
                crate::mcp::said::scrub_urls(&format!("{}: {e}", crate::mcp::said::shown_url(url))),
            )
        };
        let headers = self
            .server
            .http_headers()
            .map_err(|e| failed(e.to_string()))?;
        let host = self.shared.asking.locked().runtime.clone();
        let cred = list::http::credential(&self.server, url, &headers, host).map_err(failed)?;
        *self.credential.locked() = cred.clone();
        let no_discover = AtomicBool::new(false);
        let mut last = String::new();
        for discover in [true, false] {
            let http = list::http::transport(
                url,
                &headers,
                timeout,
                self.server.max_message_bytes,
                cred.clone(),
            )
            .map_err(|e| failed(e.to_string()))?;
            let sent = http.sent_token;
            let transport = Observed::new(http.transport, self.shared.clone(), generation);
            let handler = Handler {
                shared: self.shared.clone(),
                server: self.server.name.clone(),
            };
            let login = &self.login;
            let started = list::initialize(
                handler,
                transport,
                timeout,
                &|e| {
                    if list::http::asks_login(e) {
                        login.store(true, Ordering::SeqCst);
                    }
                    no_discover.store(discover && list::knows_no_discover(e), Ordering::SeqCst);
                    let note = cred.as_ref().and_then(|c| c.given_up());
                    list::http::explain(e, sent, &self.server.name, note)
                },
                discover,
            )
            .await;
            match started {
                Ok(c) => return Ok(c),
                Err(e) if !no_discover.load(Ordering::SeqCst) => return Err(failed(e)),
                Err(e) => last = e,
            }
        }
        Err(failed(last))
    }

    /// Why the OAuth credential of the last start stopped asking for logins, if it did.
    fn gave_up_login(&self) -> Option<String> {
        #[cfg(feature = "mcp-http")]
        {
            let cred = self.credential.locked().clone();
            cred.and_then(|c| c.given_up())
        }
        #[cfg(not(feature = "mcp-http"))]
        None
    }

    /// Starts (stdio) or reaches (HTTP) the server, initializes and lists its tools.
    pub(super) async fn connect(&self) -> Result<Live, (StopReason, String)> {
        let generation = self.generation.fetch_add(1, Ordering::Relaxed);
        self.shared.list_changed.store(false, Ordering::SeqCst);
        self.login.store(false, Ordering::SeqCst);
        let over = Arc::new(Broken::default());
        let (client, process) = match &self.server.config {
            ServerConfig::Stdio { .. } => {
                let (c, p) = self.start_stdio(&over, generation).await?;
                (c, Some(p))
            }
            #[cfg(feature = "mcp-http")]
            ServerConfig::Http { url, .. } => (self.start_http(url, generation).await?, None),
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
            list::introduction(client.peer(), true).map_err(|e| (StopReason::ProtocolError, e))?;
        let limits = self.list_limits();
        let offers_tools = client
            .peer()
            .peer_info()
            .is_some_and(|i| i.capabilities.tools.is_some());
        // A skills-only server: no tools to list.
        let pages = match offers_tools {
            true => list::pages(client.peer(), &limits, "").await,
            false => Ok(Vec::new()),
        };
        let listed = match pages {
            Ok(t) => t,
            Err(e) => {
                // A server that lets `initialize` through and wants a login for the rest.
                if let Some(why) = self.gave_up_login() {
                    self.login.store(true, Ordering::SeqCst);
                    return Err((StopReason::Crashed, why));
                }
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
            needs_task: Mutex::default(),
        };
        self.install(&live, listed);
        Ok(live)
    }

    /// On 2026-07-28 a server sends `notifications/tools/list_changed` only on a
    /// `subscriptions/listen` stream that asked for it: for a server that says its list
    /// changes, one is opened, and what it brings marks the list for listing again before
    /// the next call. `None` when there is nothing to listen to, or the server refused.
    pub(super) async fn listen(
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

    pub(super) fn list_limits(&self) -> ListLimits {
        ListLimits {
            max_bytes: self.server.max_message_bytes,
            ..ListLimits::default()
        }
    }

    /// Lists the tools again after `notifications/tools/list_changed`. A listing that
    /// fails leaves the change marked, so the next call lists again.
    pub(super) async fn relist(&self, live: &Live) {
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
    pub(super) fn install(&self, live: &Live, listed: Vec<SnapshotTool>) {
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
            let input = crate::mcp::validator(&t.input_schema).map(Arc::new);
            tools.insert(t.name.clone(), LiveTool { listed: t, input });
        }
        *live.tools.write_locked() = tools;
    }

    /// The live list, for a runtime built at connect.
    pub(crate) fn listed(live: &Live) -> Vec<SnapshotTool> {
        let tools = live.tools.read_locked();
        let mut out: Vec<SnapshotTool> = tools.values().map(|t| t.listed.clone()).collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// After a call timed out: a server that does not answer a `ping` in time is hung,
    /// and is stopped (the next call starts it again).
    pub(super) fn check_alive(&self, live: Arc<Live>) {
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
