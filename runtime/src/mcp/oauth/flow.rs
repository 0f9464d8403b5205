//! The network steps of a login, a grant and a refresh, on rmcp's `AuthorizationManager`:
//! each returns the [`Record`] to store. Nothing here reads or writes the store.

use std::time::Duration;

use rmcp::transport::CredentialStore;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationMetadataSource,
    ClientCredentialsConfig, InMemoryCredentialStore, OAuthClientConfig, OAuthTokenResponse,
    StoredCredentials,
};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

use super::store::{Client, ClientKind, Record, now};
use super::{OAuth, OAuthError};
use crate::host::{Host, LoginReason, LoginRequest, LoginStep};

/// rmcp's error, as a message that quotes no token or code (rmcp's never do; bodies of
/// token answers are not quoted either).
fn flow(what: &str) -> impl FnOnce(AuthError) -> OAuthError + '_ {
    // An HTTP client error quotes the URL it was given, a key in its query too.
    move |e| {
        // A server's text (a registration's error body) is kept short and printable.
        let said: String = crate::mcp::said::scrub_urls(&crate::mcp::said::chain(&e))
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(400)
            .collect();
        OAuthError::Flow(format!("{what}: {said}"))
    }
}

/// `step` within `limit`: an authorization server that does not answer is an error that
/// says which step waited.
async fn bounded<T>(
    limit: Duration,
    what: &str,
    step: impl std::future::Future<Output = Result<T, OAuthError>>,
) -> Result<T, OAuthError> {
    tokio::time::timeout(limit, step).await.map_err(|_| {
        OAuthError::Flow(format!(
            "{what}: no answer within {} s (OAuth::request_timeout)",
            limit.as_secs_f64()
        ))
    })?
}

/// rmcp's manager for `url`, with its own HTTP client: a 30 s bound per request, bodies
/// bounded, metadata hosts that resolve to link-local or (for a public server) private
/// addresses refused.
async fn manager(url: &str) -> Result<AuthorizationManager, OAuthError> {
    crate::mcp::said::tls();
    AuthorizationManager::new(url)
        .await
        .map_err(flow("cannot set up the OAuth client"))
}

/// Discovery for `url`: the protected-resource metadata (from the challenge, else the
/// well-known places), then the authorization server's (RFC 8414 or OpenID), its issuer
/// checked. A server that publishes none is refused: rmcp would make up `/authorize` and
/// `/token` on the server's own origin, and toolbind does not send a person there.
pub(super) async fn discover(
    url: &str,
    challenge: Option<&str>,
    limit: Duration,
) -> Result<(AuthorizationManager, AuthorizationMetadata), OAuthError> {
    let mut m = manager(url).await?;
    let found = bounded(limit, "discovery", async {
        m.resolve_metadata_from_challenge(challenge)
            .await
            .map_err(flow("discovery failed"))
    })
    .await?;
    if found.source == AuthorizationMetadataSource::LegacyEndpointFallback {
        return Err(OAuthError::Flow(
            "the server publishes no OAuth metadata (no protected-resource or authorization-server metadata was found): give a bearer token instead".into(),
        ));
    }
    endpoints_ok(url, &found.metadata)?;
    m.set_metadata(found.metadata.clone());
    Ok((m, found.metadata))
}

fn loopback(u: &url::Url) -> bool {
    match u.host() {
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// The authorization server's endpoints are where a person is sent (a browser, or an
/// opener given the URL) and where secrets go: `https://` only (MCP's authorization spec),
/// `http://` on the loopback interface for a server on it too (a local setup, a test).
/// Any other scheme (`file:`, an app's own) is refused before anything is opened.
fn endpoints_ok(server: &str, meta: &AuthorizationMetadata) -> Result<(), OAuthError> {
    let local = url::Url::parse(server).is_ok_and(|u| loopback(&u));
    let endpoints = [
        ("authorization_endpoint", Some(&meta.authorization_endpoint)),
        ("token_endpoint", Some(&meta.token_endpoint)),
        ("registration_endpoint", meta.registration_endpoint.as_ref()),
    ];
    for (what, e) in endpoints {
        let Some(e) = e else { continue };
        let ok = url::Url::parse(e).is_ok_and(|u| {
            u.scheme() == "https" || (u.scheme() == "http" && local && loopback(&u))
        });
        if !ok {
            let scheme: String = e
                .split(':')
                .next()
                .unwrap_or_default()
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .take(20)
                .collect();
            return Err(OAuthError::Flow(format!(
                "the authorization server's metadata gives an `{what}` that is not an https:// URL (`{scheme}:`): toolbind sends no person and no secret there"
            )));
        }
    }
    Ok(())
}

/// PKCE with S256, as the authorization server's metadata must say (MCP's authorization
/// spec: a client refuses to go on without it).
fn pkce_ok(meta: &AuthorizationMetadata) -> Result<(), OAuthError> {
    let s256 = meta
        .code_challenge_methods_supported
        .as_ref()
        .is_some_and(|m| m.iter().any(|m| m == "S256"));
    if s256 {
        Ok(())
    } else {
        Err(OAuthError::Flow(
            "the authorization server does not say it supports PKCE with S256 (`code_challenge_methods_supported`), which MCP's authorization spec requires before a login".into(),
        ))
    }
}

/// The scopes of a login: those given, else what the challenge or the resource's
/// metadata name (rmcp's choice for a first authorization); `offline_access` added when
/// the authorization server lists it, so that a refresh token comes.
async fn scopes_for(
    m: &AuthorizationManager,
    meta: &AuthorizationMetadata,
    given: Option<&[String]>,
) -> Vec<String> {
    let Some(given) = given else {
        return m.select_initial_scopes(&[]).await;
    };
    let mut scopes = given.to_vec();
    let offline = meta
        .scopes_supported
        .as_ref()
        .is_some_and(|s| s.iter().any(|s| s == "offline_access"));
    if offline && !scopes.is_empty() && !scopes.iter().any(|s| s == "offline_access") {
        scopes.push("offline_access".into());
    }
    scopes
}

/// Who the client is at this authorization server, in the spec's order: pre-registered,
/// a Client ID Metadata Document where the server takes one, a registration kept from an
/// earlier login with the same issuer, else a new registration.
async fn identity(
    m: &mut AuthorizationManager,
    meta: &AuthorizationMetadata,
    oauth: &OAuth,
    redirect_uri: &str,
    scopes: &[String],
    earlier: Option<&Client>,
) -> Result<Client, OAuthError> {
    if let Some(id) = &oauth.client_id {
        return Ok(Client {
            id: id.clone(),
            secret: None,
            redirect_uri: redirect_uri.into(),
            kind: ClientKind::PreRegistered,
        });
    }
    let takes_document = meta
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    if let (Some(url), true) = (&oauth.client_metadata_url, takes_document) {
        let ok = url::Url::parse(url)
            .is_ok_and(|u| u.scheme() == "https" && u.path() != "/" && !u.path().is_empty());
        if !ok {
            return Err(OAuthError::Config(format!(
                "the client metadata URL `{url}` is not an https:// URL with a path"
            )));
        }
        return Ok(Client {
            id: url.clone(),
            secret: None,
            redirect_uri: redirect_uri.into(),
            kind: ClientKind::MetadataDocument,
        });
    }
    if let Some(c) =
        earlier.filter(|c| c.kind == ClientKind::Registered && c.redirect_uri == redirect_uri)
    {
        return Ok(c.clone());
    }
    if meta.registration_endpoint.is_none() {
        return Err(OAuthError::Config(
            "the authorization server takes no registration and no client id is configured: register a client with it and set `oauth.clientId` (and its secret)".into(),
        ));
    }
    let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let config = bounded(oauth.request_timeout, "client registration", async {
        m.register_client(&oauth.client_name, redirect_uri, &refs)
            .await
            .map_err(flow("client registration failed"))
    })
    .await?;
    Ok(Client {
        id: config.client_id,
        secret: config.client_secret,
        redirect_uri: redirect_uri.into(),
        kind: ClientKind::Registered,
    })
}

/// rmcp's client: a configured secret goes with the configured client id only; a
/// registered client has its own (or none).
fn client_config(
    client: &Client,
    configured: Option<String>,
    scopes: &[String],
) -> OAuthClientConfig {
    let mut c = OAuthClientConfig::new(client.id.clone(), client.redirect_uri.clone())
        .with_scopes(scopes.to_vec());
    let secret = match client.kind {
        ClientKind::PreRegistered => configured,
        _ => client.secret.clone(),
    };
    if let Some(s) = secret {
        c = c.with_client_secret(s);
    }
    c
}

/// A login: the authorization code with PKCE, the browser sent back to a loopback
/// listener (or the URL a host followed itself).
pub(super) struct Login<'a> {
    pub(super) server: &'a str,
    pub(super) url: &'a str,
    pub(super) resource: &'a str,
    pub(super) oauth: &'a OAuth,
    pub(super) host: &'a dyn Host,
    pub(super) challenge: Option<&'a str>,
    pub(super) scopes: Option<Vec<String>>,
    pub(super) reason: LoginReason,
    pub(super) earlier: Option<&'a Record>,
    /// A login a person asked for (`toolbind mcp login`): a configured client may go to a
    /// new authorization server.
    pub(super) trust_new_issuer: bool,
}

/// A configured client's id and secret go only to the authorization server they were
/// first used with (its issuer kept with the tokens): one a server names later is trusted
/// by a login a person asks for, never by a connect.
fn same_issuer(
    oauth: &OAuth,
    earlier: Option<&Record>,
    meta: &AuthorizationMetadata,
    trust_new: bool,
) -> Result<(), OAuthError> {
    let Some(old) = earlier.and_then(|r| r.issuer.as_deref()) else {
        return Ok(());
    };
    if oauth.client_id.is_none() || trust_new || meta.issuer.as_deref() == Some(old) {
        return Ok(());
    }
    Err(OAuthError::NeedsLogin(format!(
        "the server now names another authorization server ({}) than the one its configured client was used with ({old}); toolbind sends that client's id and secret nowhere else unless you sign in again",
        meta.issuer.as_deref().unwrap_or("one without an issuer")
    )))
}

impl Login<'_> {
    pub(super) async fn run(self) -> Result<Record, OAuthError> {
        let (mut m, meta) = discover(self.url, self.challenge, self.oauth.request_timeout).await?;
        pkce_ok(&meta)?;
        same_issuer(self.oauth, self.earlier, &meta, self.trust_new_issuer)?;
        let earlier = self
            .earlier
            .filter(|r| r.issuer.is_some() && r.issuer == meta.issuer);
        let port = self
            .oauth
            .callback_port
            .or_else(|| earlier.and_then(|r| port_of(&r.client.redirect_uri)))
            .unwrap_or(0);
        let listener = match TcpListener::bind(("127.0.0.1", port)).await {
            Ok(l) => l,
            Err(_) if self.oauth.callback_port.is_none() => TcpListener::bind(("127.0.0.1", 0))
                .await
                .map_err(|e| OAuthError::Flow(format!("cannot listen on 127.0.0.1: {e}")))?,
            Err(e) => {
                return Err(OAuthError::Flow(format!(
                    "cannot listen on 127.0.0.1:{port} for the login's redirect: {e}"
                )));
            }
        };
        let port = listener.local_addr().map(|a| a.port()).unwrap_or(port);
        let redirect_uri = format!("http://127.0.0.1:{port}/callback");
        let scopes = scopes_for(&m, &meta, self.scopes.as_deref()).await;
        let client = identity(
            &mut m,
            &meta,
            self.oauth,
            &redirect_uri,
            &scopes,
            earlier.map(|r| &r.client),
        )
        .await?;
        m.configure_client(client_config(&client, self.oauth.secret()?, &scopes))
            .map_err(flow("the client cannot be configured"))?;
        let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let auth_url = m
            .get_authorization_url(&refs)
            .await
            .map_err(flow("cannot build the authorization URL"))?;
        let state = query(&auth_url, "state").unwrap_or_default();
        let indicator = query(&auth_url, "resource");
        let request = LoginRequest {
            server: self.server.into(),
            resource: self.resource.into(),
            issuer: meta.issuer.clone(),
            url: auth_url,
            redirect_uri: redirect_uri.clone(),
            reason: self.reason,
        };
        // The browser may come back before the host's answer does (a host that follows
        // the redirect itself): the listener answers while the host is asked.
        let waiting = callback(&listener, &state);
        tokio::pin!(waiting);
        let asked = self.host.login(request);
        let limit = self.oauth.login_timeout;
        let late = || {
            OAuthError::NeedsLogin(format!(
                "no browser came back to {redirect_uri} within {} s",
                limit.as_secs()
            ))
        };
        let back = tokio::time::timeout(limit, async {
            tokio::select! {
                back = &mut waiting => back,
                step = asked => match step {
                    Ok(LoginStep::Opened) => waiting.await,
                    Ok(LoginStep::Redirected(url)) => parse_callback(&url, &state),
                    Err(refusal) => Err(OAuthError::NeedsLogin(format!(
                        "the server needs a login and none was done ({refusal})"
                    ))),
                },
            }
        })
        .await
        .map_err(|_| late())??;
        let token = bounded(self.oauth.request_timeout, "the token request", async {
            m.exchange_code_for_token_with_issuer(&back.code, &back.state, back.iss.as_deref())
                .await
                .map_err(flow("the authorization was not accepted"))
        })
        .await?;
        let mut kept = record(self.resource, meta, client, &token, &scopes, false);
        kept.indicator = indicator;
        Ok(kept)
    }
}

fn port_of(uri: &str) -> Option<u16> {
    url::Url::parse(uri).ok()?.port()
}

fn query(url: &str, key: &str) -> Option<String> {
    let u = url::Url::parse(url).ok()?;
    u.query_pairs()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}

/// What the browser brought back.
struct Back {
    code: String,
    state: String,
    iss: Option<String>,
}

/// What a request at the redirect URI is.
enum Callback {
    /// Not this login's (another path, no or another `state`): answered, and the wait
    /// goes on. A local process or a web page cannot end a login it did not start.
    Stray,
    /// The authorization server's answer to this login.
    Done(Back),
    /// The authorization server refused this login (`error=` with our `state`).
    Refused(OAuthError),
}

/// Reads a redirect's target (`/callback?...`, or a whole URL): our `state` first, then
/// the authorization server's error or code.
fn classify(target: &str, state: &str) -> Callback {
    let parsed =
        url::Url::parse(target).or_else(|_| url::Url::parse(&format!("http://127.0.0.1{target}")));
    let Ok(u) = parsed else {
        return Callback::Stray;
    };
    if u.path() != "/callback" {
        return Callback::Stray;
    }
    let get = |k: &str| {
        u.query_pairs()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.into_owned())
    };
    let got = get("state").unwrap_or_default();
    if state.is_empty() || !constant_eq(got.as_bytes(), state.as_bytes()) {
        return Callback::Stray;
    }
    let clean =
        |t: String, n: usize| -> String { t.chars().filter(|c| !c.is_control()).take(n).collect() };
    if let Some(e) = get("error") {
        let said = clean(get("error_description").unwrap_or_default(), 300);
        return Callback::Refused(OAuthError::Flow(format!(
            "the authorization server refused the login: {} {said}",
            clean(e, 100)
        )));
    }
    match get("code").filter(|c| !c.is_empty()) {
        Some(code) => Callback::Done(Back {
            code,
            state: got,
            iss: get("iss"),
        }),
        None => Callback::Refused(OAuthError::Flow(
            "the authorization server sent the browser back with no code".into(),
        )),
    }
}

/// A redirect URL a host followed itself.
fn parse_callback(url: &str, state: &str) -> Result<Back, OAuthError> {
    match classify(url, state) {
        Callback::Done(back) => Ok(back),
        Callback::Refused(e) => Err(e),
        Callback::Stray => Err(OAuthError::Flow(
            "the redirect is not this login's (another path, or its `state` is not ours)".into(),
        )),
    }
}

fn constant_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Connections the listener reads at once: idle ones (a browser's preconnect, a local
/// process holding one open) do not hold up the one that brings the code.
const OPEN_CONNECTIONS: usize = 16;

/// Waits on the loopback listener for the browser: the first request for `/callback`
/// with our state ends the wait; every other request is answered and the wait goes on.
async fn callback(listener: &TcpListener, state: &str) -> Result<Back, OAuthError> {
    let mut open = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept(), if open.len() < OPEN_CONNECTIONS => {
                if let Ok((stream, _)) = accepted {
                    open.spawn(serve_one(stream, state.to_owned()));
                }
            }
            Some(done) = open.join_next() => match done {
                Ok(Some(Ok(back))) => return Ok(back),
                Ok(Some(Err(e))) => return Err(e),
                _ => {}
            },
        }
    }
}

/// One connection at the redirect URI: its request line read (at most 8 KiB, 3 s),
/// answered in plain text.
async fn serve_one(
    stream: tokio::net::TcpStream,
    state: String,
) -> Option<Result<Back, OAuthError>> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    let read = tokio::time::timeout(Duration::from_secs(3), async {
        let mut limited = (&mut reader).take(8192);
        limited.read_line(&mut line).await
    })
    .await;
    let mut stream = reader.into_inner();
    if !matches!(read, Ok(Ok(_))) {
        return None;
    }
    let target = line.split_whitespace().nth(1).unwrap_or("").to_owned();
    let (status, text, out) = match classify(&target, &state) {
        Callback::Stray if !target.starts_with("/callback") => {
            ("404 Not Found", "Not found.", None)
        }
        Callback::Stray => (
            "400 Bad Request",
            "This is not the login toolbind waits for.",
            None,
        ),
        Callback::Refused(e) => (
            "400 Bad Request",
            "The login failed: see toolbind's message.",
            Some(Err(e)),
        ),
        Callback::Done(back) => (
            "200 OK",
            "Signed in: you can close this tab and go back to toolbind.",
            Some(Ok(back)),
        ),
    };
    let _ = reply(&mut stream, status, text).await;
    out
}

use tokio::io::AsyncReadExt as _;

async fn reply(
    stream: &mut tokio::net::TcpStream,
    status: &str,
    text: &str,
) -> std::io::Result<()> {
    let body = format!("{text}\n");
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

/// The token answer's fields, through its JSON (no oauth2 types needed here).
fn record(
    resource: &str,
    meta: AuthorizationMetadata,
    client: Client,
    token: &OAuthTokenResponse,
    asked: &[String],
    client_credentials: bool,
) -> Record {
    let v = serde_json::to_value(token).unwrap_or_default();
    let text = |k: &str| v[k].as_str().map(str::to_owned);
    let scopes = text("scope")
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_else(|| asked.to_vec());
    Record {
        format: super::store::FORMAT,
        resource: resource.into(),
        indicator: None,
        issuer: meta.issuer.clone(),
        metadata: meta,
        client,
        access_token: text("access_token").unwrap_or_default(),
        refresh_token: text("refresh_token"),
        expires_at: v["expires_in"].as_u64().map(|s| now().saturating_add(s)),
        received_at: Some(now()),
        scopes,
        client_credentials,
    }
}

/// The client-credentials grant (no person): the configured client id and secret, the
/// resource's URL as `resource`.
pub(super) async fn client_credentials(
    url: &str,
    resource: &str,
    oauth: &OAuth,
    challenge: Option<&str>,
    scopes: Option<Vec<String>>,
    earlier: Option<&Record>,
    trust_new_issuer: bool,
) -> Result<Record, OAuthError> {
    let (Some(id), Some(secret)) = (oauth.client_id.clone(), oauth.secret()?) else {
        return Err(OAuthError::Config(
            "the client-credentials grant needs a client id and a client secret".into(),
        ));
    };
    let (mut m, meta) = discover(url, challenge, oauth.request_timeout).await?;
    same_issuer(oauth, earlier, &meta, trust_new_issuer)?;
    // No `offline_access`: the grant is simply run again; a refresh token would only be
    // one more secret kept.
    let scopes: Vec<String> = match scopes {
        Some(s) => s,
        None => m.select_initial_scopes(&[]).await,
    }
    .into_iter()
    .filter(|s| s != "offline_access")
    .collect();
    let config = ClientCredentialsConfig::ClientSecret {
        client_id: id.clone(),
        client_secret: secret,
        scopes: scopes.clone(),
        resource: Some(url.to_owned()),
    };
    m.configure_client_credentials(&config)
        .map_err(flow("the client cannot be configured"))?;
    let token = bounded(
        oauth.request_timeout,
        "the client-credentials grant",
        async {
            m.exchange_client_credentials(&config)
                .await
                .map_err(flow("the client-credentials grant failed"))
        },
    )
    .await?;
    let client = Client {
        id,
        secret: None,
        redirect_uri: String::new(),
        kind: ClientKind::PreRegistered,
    };
    Ok(record(resource, meta, client, &token, &scopes, true))
}

/// What a refresh came to.
pub(super) enum Refreshed {
    Done(Box<Record>),
    /// The refresh did not give a token (the refresh token refused, the client unknown
    /// now, the endpoint moved, ...): a login (with discovery again) is what is left; why.
    Refused(String),
}

/// Refreshes `old` at its authorization server (kept metadata: no discovery), with its
/// client; the new refresh token kept when one comes (rotation), else the old one.
pub(super) async fn refresh(
    url: &str,
    oauth: &OAuth,
    old: &Record,
) -> Result<Refreshed, OAuthError> {
    let Some(refresh) = &old.refresh_token else {
        return Ok(Refreshed::Refused("no refresh token is kept".into()));
    };
    // rmcp sends its base URL as `resource` when it has discovered none: the one the
    // token was asked for.
    let mut m = manager(old.indicator.as_deref().unwrap_or(url)).await?;
    m.set_metadata(old.metadata.clone());
    let secret = match old.client.kind {
        ClientKind::PreRegistered => oauth.secret()?,
        _ => None,
    };
    m.configure_client(client_config(&old.client, secret, &old.scopes))
        .map_err(flow("the client cannot be configured"))?;
    let kept = InMemoryCredentialStore::new();
    let token: OAuthTokenResponse = serde_json::from_value(serde_json::json!({
        "access_token": old.access_token,
        "token_type": "bearer",
        "refresh_token": refresh,
    }))
    .map_err(|e| OAuthError::Store(e.to_string()))?;
    kept.save(
        StoredCredentials::new(old.client.id.clone(), Some(token), old.scopes.clone(), None)
            .with_issuer(old.issuer.clone()),
    )
    .await
    .map_err(flow("cannot stage the refresh"))?;
    m.set_credential_store(kept);
    let refreshed = bounded(oauth.request_timeout, "the refresh", async {
        Ok(m.refresh_token().await)
    })
    .await?;
    match refreshed {
        Ok(new) => {
            let mut r = record(
                &old.resource,
                old.metadata.clone(),
                old.client.clone(),
                &new,
                &old.scopes,
                old.client_credentials,
            );
            if r.refresh_token.is_none() {
                r.refresh_token = old.refresh_token.clone();
            }
            r.indicator = old.indicator.clone();
            Ok(Refreshed::Done(Box::new(r)))
        }
        Err(AuthError::TokenRefreshRejected(_)) => Ok(Refreshed::Refused(
            "the authorization server refused the refresh token".into(),
        )),
        Err(e) => Ok(Refreshed::Refused(match flow("the refresh failed")(e) {
            OAuthError::Flow(m) => m,
            other => other.to_string(),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redirect_is_taken_only_with_this_logins_state() {
        let ok = parse_callback("/callback?code=c1&state=s1&iss=https%3A%2F%2Fas", "s1").unwrap();
        assert_eq!(
            (ok.code.as_str(), ok.iss.as_deref()),
            ("c1", Some("https://as"))
        );
        let e = parse_callback("/callback?code=c1&state=s2", "s1")
            .err()
            .unwrap();
        assert!(e.to_string().contains("state"), "{e}");
        let e = parse_callback("/callback?code=c1", "s1").err().unwrap();
        assert!(e.to_string().contains("state"), "{e}");
        let e = parse_callback(
            "/callback?error=access_denied&error_description=no%0Athanks&state=s1",
            "s1",
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("access_denied no"), "{e}");
        assert!(!e.to_string().contains('\n'));
    }

    fn meta(authorize: &str, token: &str, issuer: &str) -> AuthorizationMetadata {
        let mut m = AuthorizationMetadata::default();
        m.authorization_endpoint = authorize.into();
        m.token_endpoint = token.into();
        m.issuer = Some(issuer.into());
        m
    }

    #[test]
    fn endpoints_are_https_or_loopback_beside_a_loopback_server() {
        let ok = meta(
            "https://as.example/authorize",
            "https://as.example/token",
            "https://as.example",
        );
        assert!(endpoints_ok("https://mcp.example/mcp", &ok).is_ok());
        let local = meta(
            "http://127.0.0.1:9/a",
            "http://localhost:9/t",
            "http://127.0.0.1:9",
        );
        assert!(endpoints_ok("http://127.0.0.1:8/mcp", &local).is_ok());
        // Plain http beside a public server, or any other scheme: refused.
        assert!(endpoints_ok("https://mcp.example/mcp", &local).is_err());
        for bad in [
            "file:///etc/passwd",
            "vscode://x/y",
            "javascript:alert(1)",
            "http://as.example/a",
        ] {
            let m = meta(bad, "https://as.example/token", "https://as.example");
            let e = endpoints_ok("http://127.0.0.1:8/mcp", &m)
                .unwrap_err()
                .to_string();
            assert!(e.contains("authorization_endpoint"), "{bad}: {e}");
        }
        // PKCE: S256 must be said.
        let mut m = ok.clone();
        assert!(pkce_ok(&m).is_err());
        m.code_challenge_methods_supported = Some(vec!["plain".into()]);
        assert!(pkce_ok(&m).is_err());
        m.code_challenge_methods_supported = Some(vec!["S256".into()]);
        assert!(pkce_ok(&m).is_ok());
    }

    #[test]
    fn a_configured_client_goes_only_to_the_issuer_it_was_used_with() {
        let record = |issuer: &str| Record {
            format: super::super::store::FORMAT,
            resource: "https://mcp.example/mcp".into(),
            issuer: Some(issuer.into()),
            indicator: None,
            metadata: AuthorizationMetadata::default(),
            client: Client {
                id: "mine".into(),
                secret: None,
                redirect_uri: String::new(),
                kind: ClientKind::PreRegistered,
            },
            access_token: "a".into(),
            refresh_token: None,
            expires_at: None,
            received_at: None,
            scopes: Vec::new(),
            client_credentials: true,
        };
        let configured = OAuth::new().client_id("mine").client_credentials();
        let old = record("https://as1.example");
        let now_as2 = meta(
            "https://as2.example/a",
            "https://as2.example/t",
            "https://as2.example",
        );
        let e = same_issuer(&configured, Some(&old), &now_as2, false).unwrap_err();
        assert!(matches!(e, OAuthError::NeedsLogin(_)), "{e}");
        // A login a person asks for may move it; the same issuer, or a first use, is fine;
        // a registered client is registered anew elsewhere, so it is not pinned.
        assert!(same_issuer(&configured, Some(&old), &now_as2, true).is_ok());
        let same = meta(
            "https://as1.example/a",
            "https://as1.example/t",
            "https://as1.example",
        );
        assert!(same_issuer(&configured, Some(&old), &same, false).is_ok());
        assert!(same_issuer(&configured, None, &now_as2, false).is_ok());
        assert!(same_issuer(&OAuth::new(), Some(&old), &now_as2, false).is_ok());
    }

    #[tokio::test]
    async fn the_listener_keeps_waiting_through_stray_requests() {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let send = |path: &'static str| async move {
            let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .unwrap();
            s.write_all(format!("GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
                .await
                .unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).await.unwrap();
            out
        };
        let wait = tokio::spawn(async move { callback(&listener, "good").await });
        assert!(send("/favicon.ico").await.starts_with("HTTP/1.1 404"));
        assert!(
            send("/callback?code=x&state=evil")
                .await
                .starts_with("HTTP/1.1 400")
        );
        // An error without this login's state: anyone could send it; the wait goes on.
        let stray = send("/callback?error=access_denied&error_description=run%20evil").await;
        assert!(stray.starts_with("HTTP/1.1 400"), "{stray}");
        // An idle connection does not hold up the browser's.
        let _idle = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        assert!(
            send("/callback?code=c&state=good")
                .await
                .starts_with("HTTP/1.1 200")
        );
        let back = wait.await.unwrap().unwrap();
        assert_eq!(back.code, "c");
    }
}
