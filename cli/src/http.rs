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
//!    `tools/list` are answered as on stdio (`wire::check_message`);
//! 6. the session limit on `initialize` (503) and the call limit on `tools/call` (429).
//!
//! Every refusal carries a JSON-RPC error body (with the request's id when known), so MCP
//! clients show its message. Requests in flight are counted until their response body
//! ends; the drain waits for that count to reach zero.

use std::convert::Infallible;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use rmcp::model::ErrorCode;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{Mutex, OwnedMutexGuard, OwnedSemaphorePermit, Semaphore, watch};

use crate::args::{HttpArgs, ServeArgs};
use crate::exit::{Code, Failure, Outcome};
use crate::serve::{self, Server, State, log};
use crate::wire::{self, Verdict};

/// The MCP endpoint's path.
pub const PATH: &str = "/mcp";
/// The health endpoint's path.
pub const HEALTH: &str = "/healthz";
/// The environment variable holding the bearer token.
pub const TOKEN_ENV: &str = "TOOLBIND_TOKEN";
/// `--drain-timeout`'s default.
const DRAIN: Duration = Duration::from_secs(20);
/// How long a client may take to send a request body.
const BODY_TIMEOUT: Duration = Duration::from_secs(30);

type HttpBody = BoxBody<Bytes, Infallible>;

pub async fn serve(dirs: Vec<PathBuf>, args: &ServeArgs, addr: &str) -> Outcome {
    let opts = &args.http;
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
    let mut sigint = signal(SignalKind::interrupt())
        .map_err(|e| Failure::failed(format!("cannot handle SIGINT: {e}")))?;
    let mut sigterm = signal(SignalKind::terminate())
        .map_err(|e| Failure::failed(format!("cannot handle SIGTERM: {e}")))?;
    let mode = if opts.stateless {
        "stateless"
    } else {
        "sessions"
    };
    let state = serve::start(
        dirs,
        args,
        &format!("MCP Streamable HTTP at http://{local}{PATH} ({mode})"),
    );
    log(&format!("bearer token: {}", token.source));
    if local.ip().is_unspecified() && opts.allowed_host.is_empty() {
        log(&format!(
            "note: listening on all interfaces, but only loopback Host names are accepted: clients that reach this machine by another name or address get 403 until it is named with --allowed-host (e.g. --allowed-host {}:{})",
            "HOSTNAME",
            local.port()
        ));
    }
    let watcher = tokio::spawn(serve::watch(state.clone()));

    let max_body = serve::max_request_bytes(args);
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
    let mcp = if opts.stateless {
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
    let (in_flight, _) = watch::channel(0usize);
    let app = Arc::new(App {
        mcp,
        state: state.clone(),
        token,
        checks,
        max_body,
        calls: Arc::new(Semaphore::new(args.max_concurrent_calls.max(1))),
        max_calls: args.max_concurrent_calls.max(1),
        max_sessions: opts.max_sessions.max(1),
        in_flight,
        opening: Arc::new(Mutex::new(())),
        draining: AtomicBool::new(false),
        refusals: std::sync::Mutex::default(),
    });

    let graceful = GracefulShutdown::new();
    let code = loop {
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
            _ = sigint.recv() => break Code::Interrupted,
            _ = sigterm.recv() => break Code::Terminated,
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
    };

    // Drain: no new connections; new requests on open ones get 503 (`App::handle`); the
    // calls in flight run until they end or the deadline passes, then are cancelled.
    drop(listener);
    app.draining.store(true, Ordering::SeqCst);
    let deadline = opts.drain_timeout.unwrap_or(DRAIN);
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
        _ = sigint.recv() => false,
        _ = sigterm.recv() => false,
    };
    if !drained {
        let left = *count.borrow();
        log(&format!(
            "drain ended: cancelling {left} request{} still in flight",
            plural(left)
        ));
    } else if open > 0 {
        log("drained: every request in flight was answered");
    }
    // The calls still running are stopped through their abort signal and answered with
    // an error result that says the server shut down; then sessions and streams end.
    if !drained {
        state.shutdown.cancel();
        let _ = tokio::time::timeout(
            state.executor.config().get_grace() + Duration::from_secs(2),
            count.wait_for(|n| *n == 0),
        )
        .await;
    }
    cancel.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(3), count.wait_for(|n| *n == 0)).await;
    let _ = tokio::time::timeout(Duration::from_secs(2), graceful.shutdown()).await;
    watcher.abort();
    state.executor.shutdown();
    Ok(code)
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

/// The request headers MCP clients send, which a preflight may ask for.
const CORS_HEADERS: &str = "authorization, content-type, accept, mcp-session-id, \
     mcp-protocol-version, last-event-id, mcp-method, mcp-name";

/// The most `Mcp-Param-*` names a preflight's answer allows (a tool call mirrors one per
/// annotated argument; the rest of a longer list is left out, and the browser refuses
/// those headers).
const CORS_PARAM_HEADERS: usize = 32;

/// `Access-Control-Allow-Headers` for a preflight: the headers MCP uses, plus the
/// `Mcp-Param-*` headers the preflight asks for (2026-07-28 clients mirror tool arguments
/// into them, one name per argument, so they cannot be listed ahead), at most
/// [`CORS_PARAM_HEADERS`]. Never `*`, and never another header the page asks for: the
/// browser then refuses to send it. The preflight needs no token: its cost stays linear
/// in the request.
fn cors_allow_headers(headers: &HeaderMap) -> HeaderValue {
    let mut allowed = CORS_HEADERS.to_owned();
    let mut params = std::collections::BTreeSet::new();
    let asked = headers
        .get_all(header::ACCESS_CONTROL_REQUEST_HEADERS)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|h| h.trim().to_ascii_lowercase());
    for h in asked {
        if params.len() == CORS_PARAM_HEADERS {
            break;
        }
        let param = h
            .strip_prefix("mcp-param-")
            .is_some_and(|rest| !rest.is_empty());
        if param && hyper::header::HeaderName::from_bytes(h.as_bytes()).is_ok() {
            params.insert(h);
        }
    }
    for h in params {
        allowed.push_str(", ");
        allowed.push_str(&h);
    }
    HeaderValue::from_str(&allowed).unwrap_or(HeaderValue::from_static(CORS_HEADERS))
}

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
        let mut r = self.refusals.lock().unwrap_or_else(|e| e.into_inner());
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
        if let Verdict::Reject(answer) = wire::check_message(&msg) {
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

/// JSON-RPC error codes of the HTTP layer, which rmcp has no constants for. JSON-RPC 2.0
/// (section 5.1, "Error object") reserves -32000 to -32099 for implementation-defined
/// server errors; these three are this server's own picks from that range, and its HTTP
/// status says the same thing to a client that does not read the body.
const BUSY: ErrorCode = ErrorCode(-32000);
const UNAUTHORIZED: ErrorCode = ErrorCode(-32001);
const FORBIDDEN: ErrorCode = ErrorCode(-32003);

fn rpc_error(status: StatusCode, id: Value, code: ErrorCode, message: &str) -> Response<HttpBody> {
    json_response(
        status,
        &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code.0, "message": message}}),
    )
}

fn json_response(status: StatusCode, body: &Value) -> Response<HttpBody> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn plain(status: StatusCode, text: &str) -> Response<HttpBody> {
    let mut r = Response::new(Full::new(Bytes::from(format!("{text}\n"))).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The request body, at most `max` bytes (413 beyond, without reading on when
/// `Content-Length` already says so).
async fn read_body(
    body: Incoming,
    headers: &HeaderMap,
    max: usize,
) -> Result<Bytes, Response<HttpBody>> {
    let too_large = || {
        let mut r = rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            Value::Null,
            ErrorCode::INVALID_REQUEST,
            &format!(
                "Invalid Request: the request body is longer than the server's limit of {max} bytes (toolbind serve --max-request-bytes)"
            ),
        );
        r.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        r
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(too_large());
    }
    match tokio::time::timeout(BODY_TIMEOUT, Limited::new(body, max).collect()).await {
        Err(_) => Err(plain(
            StatusCode::REQUEST_TIMEOUT,
            "the request body did not arrive in time",
        )),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Ok(Err(e)) => Err(plain(
            StatusCode::BAD_REQUEST,
            &format!("cannot read the request body: {e}"),
        )),
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

/// A response body that holds its request's [`InFlight`] until it is sent or dropped.
struct Tracked {
    body: HttpBody,
    _guard: InFlight,
}

impl Body for Tracked {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The bearer token, kept only as its SHA-256 (compared in constant time).
struct Token {
    digest: [u8; 32],
    /// Where it came from, for the log: never the token itself.
    source: String,
}

impl Token {
    fn load(opts: &HttpArgs) -> Result<Token, Failure> {
        let (token, source) = if let Some(path) = &opts.auth_token_file {
            let text = std::fs::read_to_string(path).map_err(|e| {
                Failure::usage(format!(
                    "cannot read --auth-token-file {}: {e}",
                    path.display()
                ))
            })?;
            if let Ok(m) = std::fs::metadata(path)
                && m.permissions().mode() & 0o077 != 0
            {
                log(&format!(
                    "warning: {} is readable by other users (chmod 600 it)",
                    path.display()
                ));
            }
            (text, format!("from {}", path.display()))
        } else if let Some(t) = std::env::var_os(TOKEN_ENV).filter(|t| !t.is_empty()) {
            (
                t.to_string_lossy().into_owned(),
                format!("from ${TOKEN_ENV}"),
            )
        } else {
            let path = default_token_file()?;
            let (token, new) = generated_token(&path)?;
            (
                token,
                format!(
                    "{} {} (mode 0600); clients send `Authorization: Bearer <its content>`",
                    if new { "generated into" } else { "reused from" },
                    path.display()
                ),
            )
        };
        let token = token.trim();
        if token.is_empty() {
            return Err(Failure::usage(format!(
                "the bearer token ({source}) is empty"
            )));
        }
        // RFC 6750's token68: what an `Authorization: Bearer` header can carry. A token
        // with a space or a second line could never be sent.
        let token68 = |c: char| c.is_ascii_alphanumeric() || "-._~+/".contains(c);
        if !token.trim_end_matches('=').chars().all(token68) {
            return Err(Failure::usage(format!(
                "the bearer token ({source}) has characters an `Authorization: Bearer` header cannot carry (whitespace, a second line, control characters, ...): use one line of letters, digits and -._~+/ (and trailing =)"
            )));
        }
        if token.len() < 16 {
            log("warning: the bearer token is shorter than 16 characters: easy to guess");
        }
        Ok(Token {
            digest: Sha256::digest(token.as_bytes()).into(),
            source,
        })
    }

    /// The 401 answer, unless the request carries `Authorization: Bearer <the token>`.
    fn refusal(&self, headers: &HeaderMap) -> Option<Response<HttpBody>> {
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, rest) = v.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
            });
        let (message, challenge) = match presented {
            Some(t) if ct_eq(&Sha256::digest(t.as_bytes()).into(), &self.digest) => return None,
            Some(_) => (
                "Unauthorized: the bearer token is not this server's",
                r#"Bearer realm="toolbind", error="invalid_token""#,
            ),
            None => (
                "Unauthorized: send `Authorization: Bearer <token>` (toolbind serve --auth-token-file, $TOOLBIND_TOKEN or the generated token file)",
                r#"Bearer realm="toolbind""#,
            ),
        };
        let mut r = rpc_error(StatusCode::UNAUTHORIZED, Value::Null, UNAUTHORIZED, message);
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static(challenge),
        );
        Some(r)
    }
}

/// Equality of two digests in time independent of where they differ.
fn ct_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let diff = a
        .iter()
        .zip(b)
        .fold(0u8, |acc, (x, y)| acc | std::hint::black_box(x ^ y));
    std::hint::black_box(diff) == 0
}

/// `$XDG_RUNTIME_DIR/toolbind/http-token`, else `http-token` in the state root
/// (`$XDG_STATE_HOME/toolbind`, `~/.local/state/toolbind`, or the per-user
/// `$TMPDIR/toolbind-<euid>/state`).
fn default_token_file() -> Result<PathBuf, Failure> {
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|v| !v.is_empty())
        .map(|d| PathBuf::from(d).join("toolbind"));
    Ok(runtime
        .unwrap_or_else(toolbind::dirs::state_root)
        .join("http-token"))
}

/// The token in `path` if it is a private file holding one; else a new random token
/// written there (0600, in a 0700 folder). Returns it and whether it is new.
fn generated_token(path: &Path) -> Result<(String, bool), Failure> {
    let fail = |what: &str, e: std::io::Error| {
        Failure::failed(format!("cannot {what} {}: {e}", path.display()))
    };
    use std::os::unix::fs::MetadataExt;
    let me = nix::unistd::geteuid().as_raw();
    let dir = path.parent().unwrap_or(Path::new("."));
    // The folder must be ours and private, reached without following a link: in a
    // folder others can write, someone else could have planted the token (or swap it).
    toolbind::dirs::private_dir(dir).map_err(|e| {
        Failure::failed(format!(
            "{e} (the folder of the generated token: pass --auth-token-file or set {TOKEN_ENV})"
        ))
    })?;
    let existing = || {
        let m = std::fs::symlink_metadata(path).ok()?;
        // Never a FIFO or a link: a FIFO named http-token would block the start.
        let text = toolbind_codegen::read_regular_file_no_follow(path)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())?;
        let token = text.trim();
        (m.is_file()
            && m.uid() == me
            && m.permissions().mode() & 0o077 == 0
            && token.len() >= 32
            && token.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| token.to_owned())
    };
    if let Some(token) = existing() {
        return Ok((token, false));
    }
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| fail("read random bytes for", e))?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let tmp = path.with_extension(format!("tmp{}-{}", std::process::id(), &token[..8]));
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(|e| fail("write", e))?;
    f.write_all(format!("{token}\n").as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| fail("write", e))?;
    // Two servers starting at once must not each write a token and leave one of them
    // answering with a token the file no longer holds: the token is put in place only
    // where there is none (a link fails if the file exists), else the other's is used.
    // A file that is there but unusable (not private, not a token) is replaced.
    let placed = match std::fs::hard_link(&tmp, path) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match existing() {
            Some(theirs) => {
                let _ = std::fs::remove_file(&tmp);
                return Ok((theirs, false));
            }
            None => std::fs::rename(&tmp, path),
        },
        linked => linked.and_then(|()| std::fs::remove_file(&tmp)),
    };
    placed.map_err(|e| fail("write", e))?;
    Ok((token, true))
}

/// The `Host` and `Origin` checks against DNS rebinding (MCP: an invalid Origin gets 403).
struct Checks {
    /// `None`: any Host (`--allowed-host '*'`).
    hosts: Option<Vec<(String, Option<u16>)>>,
    origins: Vec<OriginRule>,
    /// The server listens on a loopback address only: pages served from this machine's
    /// own loopback names (`http://localhost:6274`, the MCP Inspector) may call it. A
    /// rebinding page cannot have such an origin: its origin is the attacker's name.
    loopback_origins: bool,
}

/// `scheme://host:port`, port `None` = any (`:*`).
#[derive(Debug, PartialEq)]
struct OriginRule {
    scheme: String,
    host: String,
    port: Option<u16>,
}

/// Host names always accepted: a request with one of them reached a loopback address by
/// its own name, which a rebinding page cannot produce.
const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

impl Checks {
    fn new(opts: &HttpArgs, loopback_origins: bool) -> Result<Checks, Failure> {
        let hosts = if opts.allowed_host.iter().any(|h| h.trim() == "*") {
            None
        } else {
            let mut hosts: Vec<(String, Option<u16>)> =
                LOOPBACK.iter().map(|h| (h.to_string(), None)).collect();
            for h in &opts.allowed_host {
                hosts.push(parse_authority(h).ok_or_else(|| {
                    Failure::usage(format!("--allowed-host `{h}`: expected HOST or HOST:PORT"))
                })?);
            }
            Some(hosts)
        };
        let origins = opts
            .allowed_origin
            .iter()
            .map(|o| {
                parse_origin(o, true).ok_or_else(|| {
                    Failure::usage(format!(
                        "--allowed-origin `{o}`: expected SCHEME://HOST[:PORT] (PORT may be *), e.g. https://app.example.com"
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Checks {
            hosts,
            origins,
            loopback_origins,
        })
    }

    fn check(&self, headers: &HeaderMap) -> Result<(), String> {
        // Two Host (or Origin) headers: which one would a proxy in front have checked?
        if headers.get_all(header::HOST).iter().count() > 1
            || headers.get_all(header::ORIGIN).iter().count() > 1
        {
            return Err("Forbidden: more than one Host or Origin header".into());
        }
        if let Some(hosts) = &self.hosts {
            let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
            let Some((name, port)) = host.and_then(parse_authority) else {
                return Err("Forbidden: no valid Host header".into());
            };
            if !hosts
                .iter()
                .any(|(h, p)| *h == name && (p.is_none() || *p == port))
            {
                return Err(format!(
                    "Forbidden: Host `{}` is not allowed (toolbind serve --allowed-host)",
                    host.unwrap_or_default()
                ));
            }
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let text = origin.to_str().unwrap_or("?");
            // Loopback pages, when the request also came by a loopback name: not through
            // a proxy that serves this server under another name (`--allowed-host`).
            let loopback_host = headers
                .get(header::HOST)
                .and_then(|v| v.to_str().ok())
                .and_then(parse_authority)
                .is_some_and(|(h, _)| LOOPBACK.contains(&h.as_str()));
            let allowed = parse_origin(text, false).is_some_and(|o| {
                (self.loopback_origins
                    && loopback_host
                    && matches!(o.scheme.as_str(), "http" | "https")
                    && LOOPBACK.contains(&o.host.as_str()))
                    || self.origins.iter().any(|r| {
                        r.scheme == o.scheme
                            && r.host == o.host
                            && (r.port.is_none() || r.port == o.port)
                    })
            });
            if !allowed {
                return Err(format!(
                    "Forbidden: Origin `{text}` is not allowed (toolbind serve --allowed-origin{})",
                    if self.loopback_origins {
                        ""
                    } else {
                        "; loopback origins are accepted only by a server listening on a loopback address"
                    }
                ));
            }
        }
        Ok(())
    }
}

/// `host` or `host:port` (`[v6]:port`), the host lower-cased and without brackets.
fn parse_authority(s: &str) -> Option<(String, Option<u16>)> {
    let a: hyper::http::uri::Authority = s.trim().parse().ok()?;
    if a.as_str().contains('@') {
        return None;
    }
    let host = a.host().trim_matches(['[', ']']).to_ascii_lowercase();
    (!host.is_empty()).then_some((host, a.port_u16()))
}

/// `scheme://host[:port]`; the port defaults to the scheme's; `:*` (only when `rule`)
/// means any port.
fn parse_origin(s: &str, rule: bool) -> Option<OriginRule> {
    let s = s.trim().trim_end_matches('/');
    let (scheme, rest) = s.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let (rest, any) = match rest.strip_suffix(":*") {
        Some(r) if rule => (r, true),
        _ => (rest, false),
    };
    if rest.contains(['/', '?', '#']) {
        return None;
    }
    let (host, port) = parse_authority(rest)?;
    let port = if any {
        None
    } else {
        port.or(match scheme.as_str() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        })
    };
    Some(OriginRule { scheme, host, port })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn checks(hosts: &[&str], origins: &[&str]) -> Checks {
        checks_on(hosts, origins, false)
    }

    fn checks_on(hosts: &[&str], origins: &[&str], loopback: bool) -> Checks {
        Checks::new(
            &HttpArgs {
                addr: Some("127.0.0.1:0".into()),
                auth_token_file: None,
                allowed_host: hosts.iter().map(|s| s.to_string()).collect(),
                allowed_origin: origins.iter().map(|s| s.to_string()).collect(),
                stateless: false,
                max_sessions: 1,
                drain_timeout: None,
            },
            loopback,
        )
        .unwrap()
    }

    #[test]
    fn a_fifo_where_the_generated_token_lives_is_replaced_not_read() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("toolbind");
        std::fs::create_dir(&dir).unwrap();
        let path = dir.join("http-token");
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        // Reading a FIFO with no writer would block here forever.
        let (token, new) = generated_token(&path).unwrap();
        assert!(new && token.len() >= 32);
        assert!(std::fs::symlink_metadata(&path).unwrap().is_file());
    }

    #[test]
    fn hosts_are_loopback_or_allowed() {
        let c = checks(&["tools.example.com", "lb.internal:8080"], &[]);
        for ok in [
            "localhost:3000",
            "127.0.0.1",
            "[::1]:80",
            "Tools.Example.com",
            "tools.example.com:443",
            "lb.internal:8080",
        ] {
            assert!(c.check(&headers(&[("host", ok)])).is_ok(), "{ok}");
        }
        for bad in [
            "evil.example",
            "lb.internal:9090",
            "127.0.0.2",
            "user@localhost",
        ] {
            assert!(c.check(&headers(&[("host", bad)])).is_err(), "{bad}");
        }
        assert!(c.check(&HeaderMap::new()).is_err());
        assert!(
            checks(&["*"], &[])
                .check(&headers(&[("host", "evil.example")]))
                .is_ok()
        );
    }

    #[test]
    fn origins_must_be_allowed_when_present() {
        let c = checks(&[], &["https://app.example.com", "http://localhost:*"]);
        let with = |o: &str| headers(&[("host", "localhost"), ("origin", o)]);
        assert!(c.check(&headers(&[("host", "localhost")])).is_ok());
        for ok in [
            "https://app.example.com",
            "https://app.example.com:443",
            "http://localhost:6274",
            "http://LOCALHOST",
        ] {
            assert!(c.check(&with(ok)).is_ok(), "{ok}");
        }
        for bad in [
            "https://app.example.com:8443",
            "http://app.example.com",
            "https://evil.example",
            "null",
            "https://localhost:6274",
        ] {
            assert!(c.check(&with(bad)).is_err(), "{bad}");
        }
        assert!(checks(&[], &[]).check(&with("http://localhost")).is_err());
    }

    #[test]
    fn a_loopback_server_accepts_loopback_origins_only() {
        let c = checks_on(&[], &[], true);
        let with = |o: &str| headers(&[("host", "127.0.0.1:8080"), ("origin", o)]);
        for ok in [
            "http://localhost:6274",
            "http://127.0.0.1:8080",
            "https://localhost",
            "http://[::1]:3000",
            "http://LocalHost:1",
        ] {
            assert!(c.check(&with(ok)).is_ok(), "{ok}");
        }
        for bad in [
            "http://evil.example",
            "http://localhost.evil.example:6274",
            "http://127.0.0.2",
            "http://0.0.0.0:8080",
            "file://localhost",
            "null",
        ] {
            assert!(c.check(&with(bad)).is_err(), "{bad}");
        }
        // A foreign Host is refused whatever the Origin; an allowed non-loopback Host (a
        // proxy serving this server under a public name) does not make loopback pages
        // trusted.
        let evil = headers(&[("host", "evil.example"), ("origin", "http://localhost")]);
        assert!(c.check(&evil).is_err());
        let proxied = checks_on(&["tools.example.com"], &[], true);
        let public = headers(&[
            ("host", "tools.example.com"),
            ("origin", "http://localhost"),
        ]);
        assert!(proxied.check(&public).is_err());
        let local = headers(&[("host", "localhost:8080"), ("origin", "http://localhost")]);
        assert!(proxied.check(&local).is_ok());
        // Listening on all interfaces: loopback origins need --allowed-origin again.
        let wide = checks_on(&[], &[], false);
        let e = wide.check(&with("http://localhost:6274")).unwrap_err();
        assert!(e.contains("loopback address"), "{e}");
    }

    #[test]
    fn a_preflight_allows_a_bounded_set_of_mcp_param_headers() {
        let mut h = HeaderMap::new();
        let many: Vec<String> = (0..20_000).map(|i| format!("Mcp-Param-P{i}")).collect();
        h.insert(
            header::ACCESS_CONTROL_REQUEST_HEADERS,
            HeaderValue::from_str(&format!(
                "x-evil, *, MCP-PARAM-Region, mcp-param-, {}",
                many.join(",")
            ))
            .unwrap(),
        );
        let v = cors_allow_headers(&h);
        let allowed: Vec<&str> = v.to_str().unwrap().split(", ").collect();
        assert!(allowed.contains(&"mcp-param-region"), "{allowed:?}");
        assert!(allowed.contains(&"mcp-method") && allowed.contains(&"mcp-name"));
        for bad in ["x-evil", "*", "mcp-param-"] {
            assert!(!allowed.contains(&bad), "{bad}: {allowed:?}");
        }
        let params = allowed
            .iter()
            .filter(|a| a.starts_with("mcp-param-"))
            .count();
        assert_eq!(params, CORS_PARAM_HEADERS);
        // No preflight headers asked for: MCP's own.
        assert_eq!(cors_allow_headers(&HeaderMap::new()), CORS_HEADERS);
    }

    #[test]
    fn tokens_compare_whole() {
        let t = Token {
            digest: Sha256::digest(b"s3cret-s3cret-s3cret").into(),
            source: String::new(),
        };
        let auth = |v: &str| headers(&[("authorization", v)]);
        assert!(t.refusal(&auth("Bearer s3cret-s3cret-s3cret")).is_none());
        assert!(t.refusal(&auth("bearer  s3cret-s3cret-s3cret ")).is_none());
        for bad in [
            "Bearer s3cret",
            "Bearer s3cret-s3cret-s3cret!",
            "Basic s3cret-s3cret-s3cret",
            "",
        ] {
            let r = t.refusal(&auth(bad)).unwrap();
            assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
            assert!(
                r.headers()[header::WWW_AUTHENTICATE]
                    .to_str()
                    .unwrap()
                    .starts_with("Bearer")
            );
        }
        assert!(t.refusal(&HeaderMap::new()).is_some());
    }

    #[test]
    fn a_generated_token_is_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("toolbind/http-token");
        let (a, new) = generated_token(&path).unwrap();
        assert!(new);
        assert_eq!(a.len(), 64);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        assert_eq!(generated_token(&path).unwrap(), (a.clone(), false));
        // A file others can read is not trusted: a new token replaces it.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let (b, new) = generated_token(&path).unwrap();
        assert!(new && b != a);
    }

    #[test]
    fn servers_starting_together_share_one_generated_token() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("toolbind/http-token");
        let tokens: Vec<String> = std::thread::scope(|s| {
            let starts: Vec<_> = (0..8)
                .map(|_| s.spawn(|| generated_token(&path).unwrap().0))
                .collect();
            starts.into_iter().map(|t| t.join().unwrap()).collect()
        });
        let file = std::fs::read_to_string(&path).unwrap();
        assert!(
            tokens.iter().all(|t| *t == file.trim()),
            "{tokens:?} {file}"
        );
        // No temporary file is left behind.
        let left: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["http-token"]);
    }
}
