//! `toolbind serve --http ADDR`: the same MCP server ([`Server`]) over Streamable HTTP.
//!
//! rmcp's `StreamableHttpService` speaks the protocol (sessions, SSE, stateless mode);
//! hyper serves it over HTTP/1.1 at `/mcp`. In front of it, in this order, every request
//! goes through:
//!
//! 1. `GET /healthz` is answered at once, without a token (for load balancers);
//! 2. while draining (after SIGTERM or Ctrl-C), everything else gets 503;
//! 3. the `Host` and `Origin` checks (DNS rebinding): 403;
//! 4. the bearer token, compared in constant time: 401 with `WWW-Authenticate: Bearer`;
//! 5. the body limit (`--max-request-bytes`): 413; bad JSON and malformed `tools/call` /
//!    `tools/list` are answered as on stdio (`checks::check_message`);
//! 6. the session limit on `initialize` (503) and the call limit on `tools/call` (429).
//!
//! Every refusal carries a JSON-RPC error body (with the request's id when known), so MCP
//! clients show its message. Requests in flight are counted until their response body
//! ends; the drain waits for that count to reach zero.

use crate::lock::Locked;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use rmcp::model::ErrorCode;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{Mutex, OwnedMutexGuard, OwnedSemaphorePermit, Semaphore, watch};

use super::checks::{self, Verdict};
use super::config::{Config, Http};
use super::logging::log;
use super::server::{self, Server, State};
use crate::exit::{Code, Failure, Outcome};

/// The MCP endpoint's path.
pub const PATH: &str = "/mcp";
/// The health endpoint's path.
pub const HEALTH: &str = "/healthz";
/// The environment variable holding the bearer token.
pub const TOKEN_ENV: &str = "TOOLBIND_TOKEN";
/// How long a client may take to send a request body.
const BODY_TIMEOUT: Duration = Duration::from_secs(30);

type HttpBody = BoxBody<Bytes, Infallible>;

mod auth;
mod body;
mod origin;

use auth::Token;
use body::{BUSY, FORBIDDEN, Tracked, json_response, plain, read_body, rpc_error};
use origin::{Checks, cors_allow_headers};

pub(super) async fn serve(config: &Config, opts: &Http) -> Outcome {
    let addr = opts.addr.as_str();
    let token = Token::load(opts)?;
    // The flags are checked before the port is taken; loopback origins depend on where
    // the server listens.
    Checks::new(opts, false)?;
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| Failure::failed(format!("cannot listen on {addr}: {e}")))?;
    let local = listener
        .local_addr()
        .map_err(|e| Failure::failed(format!("cannot listen on {addr}: {e}")))?;
    let checks = Checks::new(opts, local.ip().is_loopback())?;
    let mut signals = Signals::new()?;
    let mode = if opts.stateless {
        "stateless"
    } else {
        "sessions"
    };
    let state = server::start(
        config,
        &format!("MCP Streamable HTTP at http://{local}{PATH} ({mode})"),
    )?;
    log(&format!("bearer token: {}", token.source));
    if local.ip().is_unspecified() && opts.allowed_host.is_empty() {
        log(&format!(
            "note: listening on all interfaces, but only loopback Host names are accepted: clients that reach this machine by another name or address get 403 until it is named with --allowed-host (e.g. --allowed-host {}:{})",
            "HOSTNAME",
            local.port()
        ));
    }
    let watcher = tokio::spawn(server::watch(state.clone()));

    let max_body = config.max_request_bytes;
    let (mcp, end_sessions) = mcp_service(&state, opts.stateless, max_body);
    let (in_flight, _) = watch::channel(0usize);
    let app = Arc::new(App {
        mcp,
        state: state.clone(),
        token,
        checks,
        max_body,
        calls: Arc::new(Semaphore::new(config.max_concurrent_calls)),
        max_calls: config.max_concurrent_calls,
        max_sessions: opts.max_sessions,
        in_flight,
        opening: Arc::new(Mutex::new(())),
        draining: AtomicBool::new(false),
        refusals: std::sync::Mutex::default(),
    });

    let graceful = GracefulShutdown::new();
    let code = accept(&listener, &app, &graceful, &mut signals).await;
    drop(listener);
    drain(&app, opts.drain_timeout, &mut signals).await;
    end_sessions();
    let mut count = app.in_flight.subscribe();
    let _ = tokio::time::timeout(Duration::from_secs(3), count.wait_for(|n| *n == 0)).await;
    let _ = tokio::time::timeout(Duration::from_secs(2), graceful.shutdown()).await;
    watcher.abort();
    state.stop_tasks().await;
    state.executor.shutdown();
    Ok(code)
}

/// SIGINT and SIGTERM, which end the accept loop and then cut a drain short.
struct Signals {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> Result<Self, Failure> {
        let int = signal(SignalKind::interrupt())
            .map_err(|e| Failure::failed(format!("cannot handle SIGINT: {e}")))?;
        let term = signal(SignalKind::terminate())
            .map_err(|e| Failure::failed(format!("cannot handle SIGTERM: {e}")))?;
        Ok(Signals { int, term })
    }

    /// The exit code of the first signal to arrive.
    async fn recv(&mut self) -> Code {
        tokio::select! {
            _ = self.int.recv() => Code::Interrupted,
            _ = self.term.recv() => Code::Terminated,
        }
    }
}

/// rmcp's Streamable HTTP service over `state`, with sessions or without, and what ends
/// its sessions and streams.
fn mcp_service(state: &Arc<State>, stateless: bool, max_body: usize) -> (Mcp, impl FnOnce()) {
    let factory = {
        let state = state.clone();
        move || Ok(Server::new(state.clone()))
    };
    // Host and Origin are checked here (`Checks`), before the token; rmcp's own checks
    // would answer a foreign Origin only after the token check.
    let config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(max_body)
        .disable_allowed_hosts()
        .disable_allowed_origins();
    let cancel = config.cancellation_token.clone();
    let mcp = if stateless {
        Mcp::Stateless(StreamableHttpService::new(
            factory,
            Arc::new(NeverSessionManager::default()),
            config
                .with_legacy_session_mode(false)
                .with_json_response(true),
        ))
    } else {
        let sessions = Arc::new(LocalSessionManager::default());
        Mcp::Sessions(
            StreamableHttpService::new(factory, sessions.clone(), config),
            sessions,
        )
    };
    (mcp, move || cancel.cancel())
}

/// Serves every connection `listener` accepts, until a signal; returns its exit code.
async fn accept(
    listener: &TcpListener,
    app: &Arc<App>,
    graceful: &GracefulShutdown,
    signals: &mut Signals,
) -> Code {
    loop {
        let (stream, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) => {
                    // Out of file descriptors, most likely: wait, do not spin.
                    log(&format!("cannot accept a connection: {e}"));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            code = signals.recv() => return code,
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let service = hyper::service::service_fn(move |req| {
            let app = app.clone();
            async move { Ok::<_, Infallible>(app.handle(req, peer).await) }
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(BODY_TIMEOUT)
            .serve_connection(TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = conn.await;
        });
    }
}

/// Drain, once the listener is closed: new requests on open connections get 503
/// (`App::handle`); the calls in flight run until they end or `deadline` passes (or a
/// second signal arrives), then are stopped through their abort signal and answered with
/// an error result that says the server shut down.
async fn drain(app: &App, deadline: Duration, signals: &mut Signals) {
    app.draining.store(true, Ordering::SeqCst);
    let mut count = app.in_flight.subscribe();
    let open = *count.borrow();
    if open > 0 {
        log(&format!(
            "draining: {open} request{} in flight, up to {:.0} s (--drain-timeout)",
            plural(open),
            deadline.as_secs_f64()
        ));
    }
    let drained = tokio::select! {
        r = count.wait_for(|n| *n == 0) => r.is_ok(),
        () = tokio::time::sleep(deadline) => false,
        _ = signals.recv() => false,
    };
    if drained {
        if open > 0 {
            log("drained: every request in flight was answered");
        }
        return;
    }
    let left = *count.borrow();
    log(&format!(
        "drain ended: cancelling {left} request{} still in flight",
        plural(left)
    ));
    app.state.shutdown.cancel();
    let _ = tokio::time::timeout(
        app.state.executor.config().get_grace() + Duration::from_secs(2),
        count.wait_for(|n| *n == 0),
    )
    .await;
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// rmcp's service, with sessions or without.
enum Mcp {
    Sessions(
        StreamableHttpService<Server, LocalSessionManager>,
        Arc<LocalSessionManager>,
    ),
    Stateless(StreamableHttpService<Server, NeverSessionManager>),
}

impl Mcp {
    async fn handle(&self, req: Request<Full<Bytes>>) -> Response<HttpBody> {
        match self {
            Mcp::Sessions(s, _) => s.handle(req).await,
            Mcp::Stateless(s) => s.handle(req).await,
        }
    }

    async fn sessions(&self) -> usize {
        match self {
            Mcp::Sessions(_, m) => m.sessions.read().await.len(),
            Mcp::Stateless(_) => 0,
        }
    }
}

struct App {
    mcp: Mcp,
    state: Arc<State>,
    token: Token,
    checks: Checks,
    max_body: usize,
    calls: Arc<Semaphore>,
    max_calls: usize,
    max_sessions: usize,
    /// Requests whose response has not ended yet.
    in_flight: watch::Sender<usize>,
    /// Held while an `initialize` opens a session.
    opening: Arc<Mutex<()>>,
    draining: AtomicBool,
    /// Refused requests logged in the current window, and how many were not.
    refusals: std::sync::Mutex<Refusals>,
}

/// A flood of refused requests (no token, a foreign Origin) must not flood the log: at
/// most [`REFUSALS_LOGGED`] lines per [`REFUSAL_WINDOW`], then one line with the count.
#[derive(Default)]
struct Refusals {
    since: Option<std::time::Instant>,
    logged: u32,
    suppressed: u64,
}

const REFUSALS_LOGGED: u32 = 20;
const REFUSAL_WINDOW: Duration = Duration::from_secs(10);

impl App {
    /// One request: CORS for browser pages of an allowed Origin around [`Self::route`]. A
    /// preflight (`OPTIONS` with an Origin) is answered here, without the token (browsers
    /// never send credentials on a preflight); every other answer to an allowed Origin
    /// carries `Access-Control-Allow-Origin` and exposes `Mcp-Session-Id`.
    async fn handle(
        self: Arc<Self>,
        req: Request<Incoming>,
        peer: SocketAddr,
    ) -> Response<HttpBody> {
        // Host and Origin, checked once: for CORS here, and by `route` before the token.
        let checked = self.checks.check(req.headers());
        let origin = req.headers().get(header::ORIGIN).cloned();
        let allowed = origin.filter(|_| checked.is_ok());
        if req.method() == Method::OPTIONS
            && let Some(origin) = &allowed
        {
            let mut r = Response::new(Full::new(Bytes::new()).map_err(|e| match e {}).boxed());
            *r.status_mut() = StatusCode::NO_CONTENT;
            let h = r.headers_mut();
            h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
            h.insert(
                header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static("GET, POST, DELETE, OPTIONS"),
            );
            h.insert(
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                cors_allow_headers(req.headers()),
            );
            h.insert(
                header::ACCESS_CONTROL_MAX_AGE,
                HeaderValue::from_static("600"),
            );
            h.insert(
                header::VARY,
                HeaderValue::from_static("Origin, Access-Control-Request-Headers"),
            );
            return r;
        }
        let mut r = self.route(req, peer, checked).await;
        if let Some(origin) = allowed {
            let h = r.headers_mut();
            h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
            h.insert(
                header::ACCESS_CONTROL_EXPOSE_HEADERS,
                HeaderValue::from_static("Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate"),
            );
            h.append(header::VARY, HeaderValue::from_static("Origin"));
        }
        r
    }

    /// Logs a refused request, at most [`REFUSALS_LOGGED`] per [`REFUSAL_WINDOW`].
    fn refused(&self, peer: SocketAddr, why: &str) {
        let mut r = self.refusals.locked();
        let now = std::time::Instant::now();
        if r.since
            .is_none_or(|s| now.duration_since(s) >= REFUSAL_WINDOW)
        {
            if r.suppressed > 0 {
                log(&format!(
                    "refused {} more request{} in the last {} s (not logged one by one)",
                    r.suppressed,
                    if r.suppressed == 1 { "" } else { "s" },
                    REFUSAL_WINDOW.as_secs()
                ));
            }
            *r = Refusals {
                since: Some(now),
                ..Refusals::default()
            };
        }
        if r.logged < REFUSALS_LOGGED {
            r.logged += 1;
            log(&format!("refused a request from {peer}: {why}"));
        } else {
            r.suppressed += 1;
        }
    }

    async fn route(
        self: Arc<Self>,
        req: Request<Incoming>,
        peer: SocketAddr,
        checked: Result<(), String>,
    ) -> Response<HttpBody> {
        let path = req.uri().path();
        if path == HEALTH {
            return self.health(req.method()).await;
        }
        if path != PATH {
            return plain(
                StatusCode::NOT_FOUND,
                &format!("not found: the MCP endpoint is {PATH}"),
            );
        }
        if self.draining.load(Ordering::SeqCst) {
            let mut r = rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                Value::Null,
                BUSY,
                "the server is shutting down; retry on another replica",
            );
            r.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return r;
        }
        // An absolute-form target (`POST http://host/mcp`) names a host the Host check
        // would not see: only origin-form targets are served.
        if req.uri().authority().is_some() {
            let why = "Bad Request: send the path (/mcp) as the request target, not a URL";
            self.refused(peer, why);
            return rpc_error(StatusCode::BAD_REQUEST, Value::Null, FORBIDDEN, why);
        }
        if let Err(why) = checked {
            self.refused(peer, &why);
            return rpc_error(StatusCode::FORBIDDEN, Value::Null, FORBIDDEN, &why);
        }
        if let Some(r) = self.token.refusal(req.headers()) {
            self.refused(peer, "no valid bearer token");
            return r;
        }
        let (parts, body) = req.into_parts();
        let mut admitted = Admitted::default();
        let bytes = if parts.method == Method::POST {
            let bytes = match read_body(body, &parts.headers, self.max_body).await {
                Ok(b) => b,
                Err(r) => {
                    log(&format!(
                        "refused a request from {peer}: {}",
                        r.status().canonical_reason().unwrap_or("bad body")
                    ));
                    return r;
                }
            };
            match self.admit(&bytes).await {
                Ok(a) => admitted = a,
                Err(r) => return r,
            }
            bytes
        } else {
            Bytes::new()
        };
        let response = self
            .mcp
            .handle(Request::from_parts(parts, Full::new(bytes)))
            .await;
        // The session exists now (or failed): the next `initialize` may count it.
        drop(admitted.opening);
        match admitted.in_flight {
            Some(guard) => response.map(|body| {
                Tracked {
                    body,
                    _guard: guard,
                }
                .boxed()
            }),
            None => response,
        }
    }

    /// The checks on a POST body that need its content; a request (not a notification)
    /// is counted in flight by the returned guard.
    async fn admit(self: &Arc<Self>, bytes: &[u8]) -> Result<Admitted, Response<HttpBody>> {
        let msg: Value = match serde_json::from_slice(bytes) {
            Ok(v) => v,
            Err(e) => {
                return Err(rpc_error(
                    StatusCode::BAD_REQUEST,
                    Value::Null,
                    ErrorCode::PARSE_ERROR,
                    &format!("Parse error: {e}"),
                ));
            }
        };
        if let Verdict::Reject(answer) = checks::check_message(&msg) {
            // A method the request's protocol revision removed (2026-07-28: 404, as rmcp
            // answers other unknown methods there); every other rejection is in-band.
            let status = if answer["error"]["code"] == ErrorCode::METHOD_NOT_FOUND.0 {
                StatusCode::NOT_FOUND
            } else {
                StatusCode::OK
            };
            return Err(json_response(status, &answer));
        }
        let (Some(id), Some(method)) = (msg.get("id"), msg.get("method").and_then(Value::as_str))
        else {
            return Ok(Admitted::default());
        };
        let mut permit = None;
        // Sessions are opened one at a time, so the limit is exact.
        let opening = match (&self.mcp, method) {
            (Mcp::Sessions(..), "initialize") => Some(self.opening.clone().lock_owned().await),
            _ => None,
        };
        match method {
            "initialize" if opening.is_some() && self.mcp.sessions().await >= self.max_sessions => {
                log(&format!(
                    "refused a new session: {} open, the limit (--max-sessions)",
                    self.max_sessions
                ));
                let mut r = rpc_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    id.clone(),
                    BUSY,
                    &format!(
                        "too many sessions: this server has {} open, its limit (toolbind serve --max-sessions); retry later",
                        self.max_sessions
                    ),
                );
                r.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                return Err(r);
            }
            "tools/call" => match self.calls.clone().try_acquire_owned() {
                Ok(p) => permit = Some(p),
                Err(_) => {
                    log(&format!(
                        "refused a call: {} in flight, the limit (--max-concurrent-calls)",
                        self.max_calls
                    ));
                    let mut r = rpc_error(
                        StatusCode::TOO_MANY_REQUESTS,
                        id.clone(),
                        BUSY,
                        &format!(
                            "too many tool calls: {} are running, this server's limit (toolbind serve --max-concurrent-calls); retry later",
                            self.max_calls
                        ),
                    );
                    r.headers_mut()
                        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                    return Err(r);
                }
            },
            _ => {}
        }
        Ok(Admitted {
            in_flight: Some(InFlight::new(self.clone(), permit)),
            opening,
        })
    }

    async fn health(&self, method: &Method) -> Response<HttpBody> {
        if method != Method::GET && method != Method::HEAD {
            return plain(StatusCode::METHOD_NOT_ALLOWED, "GET /healthz");
        }
        let draining = self.draining.load(Ordering::SeqCst);
        let body = json!({
            "status": if draining { "draining" } else { "ok" },
            "tools": self.state.tool_count(),
            "sessions": self.mcp.sessions().await,
            "in_flight": *self.in_flight.borrow(),
        });
        let status = if draining {
            StatusCode::SERVICE_UNAVAILABLE
        } else {
            StatusCode::OK
        };
        json_response(status, &body)
    }
}

/// What `App::admit` lets through: the request's [`InFlight`], and for an `initialize`
/// the right to open a session.
#[derive(Default)]
struct Admitted {
    in_flight: Option<InFlight>,
    opening: Option<OwnedMutexGuard<()>>,
}

/// One request in flight (and, for a call, its slot) until its response body ends.
struct InFlight {
    app: Arc<App>,
    _permit: Option<OwnedSemaphorePermit>,
}

impl InFlight {
    fn new(app: Arc<App>, permit: Option<OwnedSemaphorePermit>) -> Self {
        app.in_flight.send_modify(|n| *n += 1);
        InFlight {
            app,
            _permit: permit,
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.app.in_flight.send_modify(|n| *n = n.saturating_sub(1));
    }
}
