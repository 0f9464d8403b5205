//! Listing an MCP server's tools: connect, initialize, page through `tools/list` within
//! bounds, and hand back what a snapshot holds.
//!
//! A stdio server is a process of its own group, killed (the whole group) when the listing
//! ends however it ends. What it writes to stdout is bounded in bytes, its pages in number,
//! and each step in time; its last stderr lines go into every error. A Streamable HTTP
//! server (feature `mcp-http`) is bounded per answer, in pages and in time.

use crate::lock::Locked;
use std::collections::HashSet;
use std::fmt;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::model::PaginatedRequestParams;
use tokio::io::{AsyncRead, ReadBuf};

use super::spawn::Failed;
use super::{McpServer, ServerConfig};
use crate::exec::sandbox::Sandbox;
use toolbind_codegen::mcp::{ServerInfo, Snapshot, SnapshotTool};

/// Bounds on one listing.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ListLimits {
    /// How long the server may take to answer `initialize` (default 60 s: an `npx`
    /// server may download its package first).
    pub connect_timeout: Duration,
    /// How long one `tools/list` page may take (default 30 s).
    pub page_timeout: Duration,
    /// The most pages read (default 100).
    pub max_pages: usize,
    /// The most bytes a stdio server may write to stdout in all, and the longest answer
    /// (a JSON body or one event of a stream) from a Streamable HTTP server (default
    /// 32 MiB).
    pub max_bytes: u64,
}

impl Default for ListLimits {
    fn default() -> Self {
        ListLimits {
            connect_timeout: Duration::from_secs(60),
            page_timeout: Duration::from_secs(30),
            max_pages: 100,
            max_bytes: 32 * 1024 * 1024,
        }
    }
}

/// What a server listed: who it is, the protocol version negotiated, its tools (in the
/// order listed).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Listing {
    /// The server, as its `initialize` result introduced it.
    pub server: ServerInfo,
    /// The negotiated protocol version.
    pub protocol_version: String,
    /// The tools, each hashed.
    pub tools: Vec<SnapshotTool>,
}

impl Listing {
    /// The listing as a snapshot named `name` (tools sorted; two of one name an error).
    pub fn into_snapshot(self, name: &str) -> Result<Snapshot, ListError> {
        Snapshot::new(name, self.server, self.protocol_version, self.tools)
            .map_err(|e| ListError(e.to_string()))
    }
}

/// Why a listing failed, with the server's last stderr lines when it wrote any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListError(String);

impl fmt::Display for ListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ListError {}

/// Connects to the server, initializes, and lists its tools. A stdio server starts as
/// [`list_server_tools`] starts `McpServer::new("server", config)`: in toolbind's jail,
/// with [`McpServer`]'s default policy (`auto`, network on, no CPU-time limit).
pub async fn list_tools(config: &ServerConfig, limits: &ListLimits) -> Result<Listing, ListError> {
    list_server_tools(&McpServer::new("server", config.clone()), limits).await
}

/// Connects to `server`, initializes, and lists its tools. A stdio server starts the way
/// the runtime starts it for calls: in toolbind's jail under its
/// [`sandbox`](McpServer::sandbox) policy, with a clean environment plus its `env`, its
/// own state folder, and its whole process group (and cgroup) killed when the listing
/// ends, however it ends.
pub async fn list_server_tools(
    server: &McpServer,
    limits: &ListLimits,
) -> Result<Listing, ListError> {
    match &server.config {
        ServerConfig::Stdio { command, .. } => {
            let sandbox = Arc::new(Sandbox::untried(super::spawn::jail_policy(server)));
            loop {
                let started = super::spawn::start(server, &sandbox)
                    .map_err(|e| ListError(format!("cannot start `{command}`: {e}")))?;
                let over = Arc::new(Mutex::new(false));
                // Bounded as a whole, and each message checked as the executor checks it:
                // a tool list the client would skip unparsed is said, not waited for.
                let broken = Arc::new(super::lines::Broken::default());
                let stdout = super::lines::Lines::new(
                    Bounded {
                        inner: started.stdout,
                        left: limits.max_bytes,
                        over: over.clone(),
                    },
                    limits.max_bytes,
                    broken.clone(),
                );
                let process = started.process;
                let result = session((stdout, started.stdin), limits, &|_| None, "").await;
                let Err(e) = result else {
                    return result.map_err(ListError);
                };
                // A server that went away says how: its exit status, when it has one by now.
                let exited = process
                    .exit_within(Duration::from_millis(500))
                    .await
                    .map(|s| format!(" (the server {s})"))
                    .unwrap_or_default();
                let e = if *over.locked() {
                    format!(
                        "the server wrote more than {} bytes to stdout: stopped reading (a tool list that large is not one toolbind takes)",
                        limits.max_bytes
                    )
                } else {
                    broken.message(limits.max_bytes).unwrap_or(e)
                };
                // Only a server that went away may have been stopped by a jail that cannot
                // run here; one that answered and then misbehaved ran in a working one.
                let jailed = started.jailed.filter(|_| !exited.is_empty());
                let hint =
                    match super::spawn::after_failure(jailed, &sandbox, server.sandbox.get_mode())
                        .await
                    {
                        Failed::Unjailed => String::new(),
                        Failed::InWorkingJail => {
                            format!(" {}", super::spawn::grant_hint(&server.sandbox))
                        }
                        Failed::Jail(e) => return Err(ListError(format!("`{command}`: {e}"))),
                        Failed::StartAgain => continue,
                    };
                let note = process.stderr_note().await;
                return Err(ListError(format!("`{command}`: {e}{exited}.{hint}{note}")));
            }
        }
        #[cfg(feature = "mcp-http")]
        ServerConfig::Http { url, headers } => http::list(server, url, headers, limits).await,
        #[cfg(not(feature = "mcp-http"))]
        ServerConfig::Http { url, .. } => Err(ListError(format!(
            "{url}: this toolbind was built without feature `mcp-http`, which Streamable \
             HTTP servers need (the `toolbind` command has it)"
        ))),
    }
}

/// The initialize error as a user can act on it, when the transport knows better than
/// rmcp's message.
pub(super) type Explain<'a> =
    &'a (dyn Fn(&rmcp::service::ClientInitializeError) -> Option<String> + Sync);

/// Connects `handler` over `transport` and waits at most `timeout` for `initialize`.
/// `discover`: offer 2026-07-28 first (`server/discover`), falling back to `initialize`
/// (2025-11-25) for a server that does not know it.
pub(super) async fn initialize<H, T, E, A>(
    handler: H,
    transport: T,
    timeout: Duration,
    explain: Explain<'_>,
    discover: bool,
) -> Result<rmcp::service::RunningService<rmcp::RoleClient, H>, String>
where
    H: rmcp::ClientHandler,
    T: rmcp::transport::IntoTransport<rmcp::RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    use rmcp::model::ProtocolVersion;
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    let lifecycle = if discover {
        ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        }
    } else {
        ClientLifecycleMode::Initialize
    };
    match tokio::time::timeout(timeout, handler.serve_with_lifecycle(transport, lifecycle)).await {
        Err(_) => Err(format!(
            "no answer to `initialize` within {} s",
            timeout.as_secs_f64()
        )),
        Ok(Err(e)) => Err(explain(&e).unwrap_or_else(|| match &e {
            // Without rmcp's wrapper, which names Rust types.
            rmcp::service::ClientInitializeError::TransportError { error, context } => {
                format!(
                    "`initialize` failed: {} (when trying to {context})",
                    super::said::chain(&*error.error)
                )
            }
            e => format!("`initialize` failed: {e}"),
        })),
        Ok(Ok(c)) => Ok(c),
    }
}

/// Whether `e` says the server answered `server/discover` with an empty result: a
/// server that does not know the method, answering as some do instead of with -32601.
#[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
pub(super) fn knows_no_discover(e: &rmcp::service::ClientInitializeError) -> bool {
    matches!(
        e,
        rmcp::service::ClientInitializeError::ExpectedInitResult(Some(
            rmcp::model::ServerResult::EmptyResult(_)
        ))
    )
}

/// Who the server says it is, the negotiated protocol version, and an error when it
/// offers no tools (unless `skills_will_do` and it offers skills: a runtime reads a
/// skills-only server's skills, with no tools).
pub(super) fn introduction(
    peer: &rmcp::Peer<rmcp::RoleClient>,
    skills_will_do: bool,
) -> Result<(ServerInfo, String), String> {
    let info = peer
        .peer_info()
        .ok_or_else(|| "the server sent no `initialize` result".to_owned())?;
    // `serverInfo` is optional from 2026-07-28 on: an unnamed server snapshots as "".
    let mut server = ServerInfo::default();
    if let Some(i) = &info.server_info {
        server = ServerInfo::new(i.name.clone(), i.version.clone());
        server.title = i.title.clone();
    }
    if info.capabilities.tools.is_none() && !(skills_will_do && info.capabilities.supports_skills())
    {
        return Err(format!(
            "server `{}` does not offer tools (no `tools` capability in its `initialize` result)",
            server.name
        ));
    }
    Ok((server, info.protocol_version.to_string()))
}

/// `closed_note` follows the message for a connection that closed before an answer.
async fn session<T, E, A>(
    transport: T,
    limits: &ListLimits,
    explain: Explain<'_>,
    closed_note: &str,
) -> Result<Listing, String>
where
    T: rmcp::transport::IntoTransport<rmcp::RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let client = initialize((), transport, limits.connect_timeout, explain, false).await?;
    let (server, protocol_version) = match introduction(client.peer(), false) {
        Ok(i) => i,
        Err(e) => {
            let _ = client.cancel().await;
            return Err(e);
        }
    };
    let outcome = pages(client.peer(), limits, closed_note).await;
    let _ = tokio::time::timeout(Duration::from_secs(2), client.cancel()).await;
    outcome.map(|tools| Listing {
        server,
        protocol_version,
        tools,
    })
}

/// Every page of `tools/list`, within the bounds, each tool hashed.
pub(super) async fn pages(
    client: &rmcp::Peer<rmcp::RoleClient>,
    limits: &ListLimits,
    closed_note: &str,
) -> Result<Vec<SnapshotTool>, String> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    let mut pages = 0;
    loop {
        if pages == limits.max_pages {
            return Err(format!(
                "`tools/list` still had more pages after {pages}: stopped (the bound is {})",
                limits.max_pages
            ));
        }
        pages += 1;
        let params = PaginatedRequestParams::default().with_cursor(cursor.clone());
        let page = match tokio::time::timeout(limits.page_timeout, client.list_tools(Some(params)))
            .await
        {
            Err(_) => {
                return Err(format!(
                    "no answer to `tools/list` page {pages} within {} s",
                    limits.page_timeout.as_secs_f64()
                ));
            }
            Ok(Err(rmcp::ServiceError::TransportClosed)) => {
                return Err(format!(
                    "the server closed the connection before answering `tools/list` page {pages}{closed_note}"
                ));
            }
            // A transport's error reads without rmcp's wrapper, which names Rust types.
            Ok(Err(rmcp::ServiceError::TransportSend(e))) => {
                return Err(format!(
                    "`tools/list` page {pages} failed: {}",
                    super::said::chain(&*e.error)
                ));
            }
            Ok(Err(e)) => return Err(format!("`tools/list` page {pages} failed: {e}")),
            Ok(Ok(p)) => p,
        };
        for t in &page.tools {
            let listed = serde_json::to_value(t)
                .map_err(|e| e.to_string())
                .and_then(|v| SnapshotTool::from_listed(&v).map_err(|e| e.to_string()));
            match listed {
                Ok(t) => tools.push(t),
                Err(e) => return Err(format!("`tools/list` page {pages}: {e}")),
            }
        }
        match page.next_cursor {
            None => return Ok(tools),
            Some(c) if c.is_empty() => return Ok(tools),
            Some(c) => {
                if !seen.insert(c.clone()) {
                    let shown: String = c.chars().take(60).collect();
                    return Err(format!(
                        "`tools/list` returned the cursor {shown:?} a second time (page {pages}): its pagination would never end"
                    ));
                }
                cursor = Some(c);
            }
        }
    }
}

/// Streamable HTTP: rmcp's client over reqwest, HTTPS through rustls with ring.
#[cfg(feature = "mcp-http")]
pub(super) mod http {
    use std::collections::{BTreeMap, HashMap};
    use std::error::Error;
    use std::sync::Arc;

    use reqwest::header::{HeaderName, HeaderValue};
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::{
        StreamableHttpClientTransportConfig, StreamableHttpError,
    };

    use super::{ListError, ListLimits, Listing, session};

    pub(super) async fn list(
        server: &super::McpServer,
        url: &str,
        headers: &BTreeMap<String, String>,
        limits: &ListLimits,
    ) -> Result<Listing, ListError> {
        let err = |m: String| ListError(format!("{url}: {m}"));
        // Tokens a login stored are used; nobody is asked to sign in here.
        let cred = credential(server, url, headers, None).map_err(err)?;
        let note = cred.clone();
        let http =
            transport(url, headers, limits.connect_timeout, limits.max_bytes, cred).map_err(err)?;
        let sent = http.sent_token;
        let name = server.name.clone();
        session(
            http.transport,
            limits,
            &|e| explain(e, sent, &name, note.as_ref().and_then(|c| c.given_up())),
            &http.closed_note,
        )
        .await
        .map_err(err)
    }

    /// The OAuth credential of `server` at `url`, unless the configuration sends its own
    /// `Authorization` (a bearer token): the tokens a login stored for this URL, and
    /// `host` to ask for a login when none is stored or the stored one is refused.
    pub(crate) fn credential(
        server: &super::McpServer,
        url: &str,
        headers: &BTreeMap<String, String>,
        host: Option<crate::host::SharedHost>,
    ) -> Result<Option<Arc<crate::mcp::Credential>>, String> {
        if headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("authorization"))
        {
            return Ok(None);
        }
        let oauth = server.oauth.clone().unwrap_or_default();
        crate::mcp::Credential::new(&server.name, url, oauth, host)
            .map(|c| Some(Arc::new(c)))
            .map_err(|e| e.to_string())
    }

    /// A Streamable HTTP transport, ready for `initialize`.
    pub(crate) struct Http {
        pub(crate) transport: StreamableHttpClientTransport<crate::mcp::AuthedHttp>,
        /// Whether an `Authorization` header is sent.
        pub(crate) sent_token: bool,
        /// What follows the message of a connection closed before an answer.
        pub(crate) closed_note: String,
    }

    /// rmcp's Streamable HTTP client for `url`, with `headers`, connecting within
    /// `connect_timeout`, each answer (a JSON body or one event) at most `max_bytes`.
    pub(crate) fn transport(
        url: &str,
        headers: &BTreeMap<String, String>,
        connect_timeout: std::time::Duration,
        max_bytes: u64,
        cred: Option<Arc<crate::mcp::Credential>>,
    ) -> Result<Http, String> {
        let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
        if !matches!(scheme.as_deref(), Some("http" | "https")) {
            return Err(
                "not an http:// or https:// URL (a Streamable HTTP endpoint, usually ending in `/mcp`)"
                    .into(),
            );
        }
        let mut custom = HashMap::new();
        for (k, v) in headers {
            let name = HeaderName::try_from(k.as_str())
                .map_err(|_| format!("`{k}` is not a valid HTTP header name"))?;
            // The value may be a secret: the message names the header only.
            let value = HeaderValue::try_from(v.as_str()).map_err(|_| {
                format!(
                    "the value of header `{k}` is not a valid HTTP header value (a line break or control character?)"
                )
            })?;
            custom.insert(name, value);
        }
        crate::mcp::said::tls();
        let client = reqwest::Client::builder()
            .connect_timeout(connect_timeout)
            .redirect(same_origin_redirects())
            .build()
            .map_err(|e| format!("cannot set up the HTTP client: {e}"))?;
        let max = usize::try_from(max_bytes).unwrap_or(usize::MAX);
        let config = StreamableHttpClientTransportConfig::with_uri(url)
            .custom_headers(custom)
            .max_json_response_size(max)
            .max_sse_event_size(max)
            .reinit_on_expired_session(false);
        let sent_token = headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("authorization"));
        let client = crate::mcp::AuthedHttp {
            inner: client,
            cred,
        };
        Ok(Http {
            transport: StreamableHttpClientTransport::with_client(client, config),
            sent_token,
            // rmcp ends an SSE stream whose event is over the bound without saying so.
            closed_note: format!(
                " (or its answer, as an event stream, went over the {max}-byte bound)"
            ),
        })
    }

    /// Redirects are followed (at most 5) only within the endpoint's own origin (scheme,
    /// host and port): a redirect elsewhere would take the headers, the bearer token among
    /// them, to a server the configuration does not name. It is an error instead.
    fn same_origin_redirects() -> reqwest::redirect::Policy {
        reqwest::redirect::Policy::custom(|attempt| {
            let origin = |u: &reqwest::Url| {
                (
                    u.scheme().to_owned(),
                    u.host_str().map(str::to_owned),
                    u.port_or_known_default(),
                )
            };
            let first = attempt.previous().first().map(origin);
            if attempt.previous().len() > 5 {
                let e = "more than 5 redirects".to_owned();
                return attempt.error(e);
            }
            if first.is_some_and(|f| f != origin(attempt.url())) {
                // Its origin only: a path or query may hold a key.
                let u = attempt.url();
                let to = match (u.host_str(), u.port()) {
                    (Some(h), Some(p)) => format!("{}://{h}:{p}", u.scheme()),
                    (Some(h), None) => format!("{}://{h}", u.scheme()),
                    _ => u.scheme().to_owned(),
                };
                return attempt.error(format!(
                    "the server redirected to another origin ({to}): toolbind does not follow it, so that the headers and token meant for this server are not sent there; configure the URL it redirects to if you trust it"
                ));
            }
            attempt.follow()
        })
    }

    /// A message for an `initialize` that failed on HTTP grounds a user can act on: a token
    /// refused or missing, a response over the byte bound, no server at the address.
    pub(crate) fn explain(
        e: &rmcp::service::ClientInitializeError,
        sent_token: bool,
        name: &str,
        login_note: Option<String>,
    ) -> Option<String> {
        // The transport's error is a field of the variant, not its `source`.
        let mut cur: Option<&(dyn Error + 'static)> = match e {
            rmcp::service::ClientInitializeError::TransportError { error, .. } => Some(error),
            other => Some(other),
        };
        while let Some(c) = cur {
            if let Some(h) = c.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
                // What the OAuth client knows better (a refresh refused, a login nobody
                // did), for a server that asks for OAuth.
                let oauth = |challenge: &str| {
                    login_note.clone().filter(|n| {
                        challenge.contains("resource_metadata")
                            || !n.starts_with("the server needs an OAuth login")
                    })
                };
                return Some(match h {
                    StreamableHttpError::AuthRequired(a)
                        if oauth(&a.www_authenticate_header).is_some() =>
                    {
                        let note = oauth(&a.www_authenticate_header).unwrap_or_default();
                        format!("{note} (HTTP 401; a bearer token in its config works too)")
                    }
                    StreamableHttpError::InsufficientScope(a)
                        if oauth(&a.www_authenticate_header).is_some() =>
                    {
                        let note = oauth(&a.www_authenticate_header).unwrap_or_default();
                        format!("{note} (HTTP 403, insufficient scope)")
                    }
                    StreamableHttpError::AuthRequired(a) => {
                        needs_token("HTTP 401", &a.www_authenticate_header, sent_token, name)
                    }
                    StreamableHttpError::InsufficientScope(a) => needs_token(
                        "HTTP 403, insufficient scope",
                        &a.www_authenticate_header,
                        sent_token,
                        name,
                    ),
                    StreamableHttpError::UnexpectedServerResponse(m) if denied(m) => {
                        needs_token(m, "", sent_token, name)
                    }
                    StreamableHttpError::Auth(a) => format!("{a}"),
                    StreamableHttpError::ResponseBodyTooLarge { .. } => format!(
                        "`initialize` failed: {h} (a response that large is not one toolbind takes)"
                    ),
                    StreamableHttpError::TransportChannelClosed => {
                        "`initialize` failed: the connection to the server ended before \
                         `initialize` was done (did the server stop?)"
                            .to_owned()
                    }
                    other => format!("`initialize` failed: {}", crate::mcp::said::chain(other)),
                });
            }
            cur = c.source();
        }
        None
    }

    /// Whether rmcp's `HTTP {status}: {body}` message is a 401 or a 403 (the status, not
    /// a number somewhere in the body).
    fn denied(m: &str) -> bool {
        m.starts_with("HTTP 401") || m.starts_with("HTTP 403")
    }

    /// Whether `initialize` failed because the server wants credentials (HTTP 401, or
    /// 403 for a scope): the server then "needs a login", not "failed".
    pub(crate) fn asks_login(e: &rmcp::service::ClientInitializeError) -> bool {
        let mut cur: Option<&(dyn Error + 'static)> = match e {
            rmcp::service::ClientInitializeError::TransportError { error, .. } => Some(error),
            other => Some(other),
        };
        while let Some(c) = cur {
            if let Some(h) = c.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
                return match h {
                    StreamableHttpError::AuthRequired(_)
                    | StreamableHttpError::InsufficientScope(_) => true,
                    StreamableHttpError::UnexpectedServerResponse(m) => denied(m),
                    _ => false,
                };
            }
            cur = c.source();
        }
        false
    }

    /// What to do about a 401 or 403: a login when the challenge asks for OAuth (names
    /// its protected-resource metadata), else a bearer token.
    fn needs_token(status: &str, challenge: &str, sent_token: bool, name: &str) -> String {
        let shown = name.escape_debug();
        // MCP's authorization spec: a server that wants OAuth names its protected-resource
        // metadata in the challenge (RFC 9728). A bare `Bearer realm=...` asks for a token.
        if challenge.contains("resource_metadata") && !sent_token {
            return format!(
                "the server needs an OAuth login ({status}): run `toolbind mcp login {shown}` (or give a bearer token in its config)"
            );
        }
        let what = if sent_token {
            "the server refused the bearer token sent (check that it is the server's and has not expired)"
        } else {
            "the server needs a bearer token and none was sent"
        };
        format!(
            "{what} ({status}): give it with \
             `\"headers\": {{\"Authorization\": \"Bearer ${{TOKEN}}\"}}`, \
             `\"bearerTokenFile\"` or `\"bearerTokenEnvVar\"` in the mcpServers config, or \
             --bearer-token-file / --bearer-token-env with --url; or, if it takes OAuth, \
             `toolbind mcp login {shown}`"
        )
    }
}

/// A reader that fails after `left` bytes, so that a server flooding stdout cannot make
/// the listing hold more than that.
struct Bounded<R> {
    inner: R,
    left: u64,
    over: Arc<Mutex<bool>>,
}

impl<R: AsyncRead + Unpin> AsyncRead for Bounded<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.left == 0 {
            *self.over.locked() = true;
            return Poll::Ready(Err(std::io::Error::other("stdout over its byte bound")));
        }
        let room = buf
            .remaining()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let mut limited = ReadBuf::new(buf.initialize_unfilled_to(room));
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, &mut limited) {
            Poll::Ready(Ok(())) => {
                let n = limited.filled().len();
                buf.advance(n);
                this.left -= n as u64;
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}
