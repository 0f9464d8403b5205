//! The OAuth 2.1 client of MCP's authorization spec (2025-11-25 and 2026-07-28) for
//! Streamable HTTP servers: discovery from a 401's challenge, client identity
//! (pre-registered, Client ID Metadata Document, Dynamic Client Registration), the
//! authorization code with PKCE through a loopback redirect, the client-credentials grant,
//! refresh, and step-up for a scope.
//!
//! rmcp's `auth` module does the protocol (metadata discovery and its issuer check, PKCE,
//! the `iss` check of RFC 9207, registration, token requests with `resource`); toolbind
//! keeps the tokens ([`store`]: by the resource's canonical URL, 0600, one lock per
//! resource across processes), decides when to refresh or ask for a login, and keeps
//! every rmcp type out of its public API.

mod client;
mod flow;
mod store;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

pub(crate) use client::{AuthedHttp, Credential};

use crate::Secret;
use crate::host::Host;

/// How toolbind signs in to an HTTP MCP server that asks for OAuth
/// ([`McpServer::oauth`](super::McpServer::oauth)). Without one, a server that asks gets
/// the defaults: a client registered by toolbind (Dynamic Client Registration) and the
/// scopes the server's challenge or metadata name.
///
/// ```
/// use toolbind::mcp::{McpServer, OAuth};
/// let github = McpServer::http("github", "https://api.githubcopilot.com/mcp/")
///     .oauth(OAuth::new().client_id("Iv1.0123").client_secret_env("GITHUB_MCP_SECRET"));
/// let agent = McpServer::http("reports", "https://mcp.example.com/mcp")
///     .oauth(OAuth::new().client_id("svc").client_secret_file("/run/secrets/mcp").client_credentials());
/// ```
#[derive(Clone)]
pub struct OAuth {
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<ClientSecret>,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) client_name: String,
    pub(crate) scopes: Option<Vec<String>>,
    pub(crate) client_credentials: bool,
    pub(crate) callback_port: Option<u16>,
    pub(crate) token_dir: Option<PathBuf>,
    pub(crate) login_timeout: Duration,
    pub(crate) request_timeout: Duration,
}

/// Where a configured client secret comes from: read when a token request needs it.
#[derive(Clone)]
pub(crate) enum ClientSecret {
    Value(Secret<String>),
    Env(String),
    File(PathBuf),
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[set]"),
            )
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("client_credentials", &self.client_credentials)
            .field("callback_port", &self.callback_port)
            .field("token_dir", &self.token_dir)
            .finish_non_exhaustive()
    }
}

impl Default for OAuth {
    fn default() -> Self {
        OAuth {
            client_id: None,
            client_secret: None,
            client_metadata_url: None,
            client_name: "toolbind".into(),
            scopes: None,
            client_credentials: false,
            callback_port: None,
            token_dir: None,
            login_timeout: Duration::from_secs(300),
            request_timeout: Duration::from_secs(30),
        }
    }
}

impl OAuth {
    /// The defaults: the authorization code with PKCE; the client is registered with the
    /// authorization server (or is `client_metadata_url` where the server takes one).
    pub fn new() -> Self {
        Self::default()
    }

    /// A client id registered with the authorization server beforehand (the spec's first
    /// choice).
    pub fn client_id(mut self, id: impl Into<String>) -> Self {
        self.client_id = Some(id.into());
        self
    }

    /// The pre-registered client's secret.
    pub fn client_secret(mut self, secret: impl Into<Secret<String>>) -> Self {
        self.client_secret = Some(ClientSecret::Value(secret.into()));
        self
    }

    /// The pre-registered client's secret, read from an environment variable when needed.
    pub fn client_secret_env(mut self, var: impl Into<String>) -> Self {
        self.client_secret = Some(ClientSecret::Env(var.into()));
        self
    }

    /// The pre-registered client's secret, read from a file (one line; owner-checked)
    /// when needed.
    pub fn client_secret_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.client_secret = Some(ClientSecret::File(file.into()));
        self
    }

    /// An HTTPS URL where a Client ID Metadata Document for this client is published
    /// (toolbind publishes none): used as the client id by authorization servers that
    /// advertise `client_id_metadata_document_supported`.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// The `client_name` a registration sends (default `toolbind`).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// The scopes to ask for, instead of those the server's challenge or metadata name.
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The client-credentials grant, for an agent with no person at hand: needs
    /// [`client_id`](Self::client_id) and a secret; no browser, no login command.
    pub fn client_credentials(mut self) -> Self {
        self.client_credentials = true;
        self
    }

    /// The loopback port the browser is sent back to (default: any free one).
    pub fn callback_port(mut self, port: u16) -> Self {
        self.callback_port = Some(port);
        self
    }

    /// Where tokens are kept (default `<state root>/mcp-oauth`, see
    /// [`state_root`](crate::dirs::state_root)).
    pub fn token_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.token_dir = Some(crate::dirs::given(dir.into()));
        self
    }

    /// How long each OAuth request (discovery, registration, a token) may take before it
    /// is an error (default 30 s): an authorization server that hangs costs this, once.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long a login waits for the browser to come back (default 5 minutes).
    pub fn login_timeout(mut self, timeout: Duration) -> Self {
        self.login_timeout = timeout;
        self
    }

    /// An `mcpServers` entry's `"oauth"` keys; a relative secret file is of the config
    /// file's folder.
    pub(crate) fn from_keys(keys: super::config::OAuthKeys, config: &std::path::Path) -> OAuth {
        let mut o = OAuth::new();
        o.client_id = keys.client_id;
        o.callback_port = keys.callback_port;
        o.scopes = keys.scopes;
        o.client_metadata_url = keys.client_metadata_url;
        o.client_credentials = keys.client_credentials;
        if let Some(v) = keys.client_secret_env {
            o.client_secret = Some(ClientSecret::Env(v));
        }
        if let Some(f) = keys.client_secret_file {
            let base = config.parent().unwrap_or(std::path::Path::new("."));
            o.client_secret = Some(ClientSecret::File(crate::dirs::given(base.join(f))));
        }
        o
    }

    /// Whose tokens these are, beside the resource they are for: a configured client id,
    /// and whether no person is involved (the client-credentials grant). The default
    /// (a registered client, a person) is the empty string.
    pub(crate) fn identity(&self) -> String {
        match (&self.client_id, self.client_credentials) {
            (Some(id), true) => format!("client-credentials {id}"),
            (Some(id), false) => format!("client {id}"),
            (None, _) => String::new(),
        }
    }

    pub(crate) fn dir(&self) -> PathBuf {
        self.token_dir
            .clone()
            .unwrap_or_else(|| crate::dirs::state_root().join("mcp-oauth"))
    }

    /// The configured secret, read now. A secret without a client id is an error: it
    /// would go to whichever authorization server registers toolbind.
    pub(crate) fn secret(&self) -> Result<Option<String>, OAuthError> {
        let Some(source) = &self.client_secret else {
            return Ok(None);
        };
        if self.client_id.is_none() {
            return Err(OAuthError::Config(
                "a client secret is set without a client id: set the id it goes with (`oauth.clientId`, OAuth::client_id)".into(),
            ));
        }
        let value = match source {
            ClientSecret::Value(s) => s.expose().clone(),
            ClientSecret::Env(var) => std::env::var(var).map_err(|_| {
                OAuthError::Config(format!(
                    "the client secret's environment variable `{var}` is not set"
                ))
            })?,
            ClientSecret::File(f) => {
                let file = crate::secret::read_secret_file(f, "the OAuth client secret", 64 * 1024)
                    .map_err(|e| OAuthError::Config(e.to_string()))?;
                let text = String::from_utf8_lossy(file.bytes()).trim().to_owned();
                if text.contains(['\n', '\r']) {
                    return Err(OAuthError::Config(format!(
                        "the client secret file {} holds more than one line: a secret is one line",
                        f.display()
                    )));
                }
                text
            }
        };
        if value.is_empty() {
            return Err(OAuthError::Config(
                "the OAuth client secret is empty".into(),
            ));
        }
        Ok(Some(value))
    }
}

/// Why an OAuth step failed. Its text never holds a token, a code or a secret.
#[derive(Debug)]
#[non_exhaustive]
pub enum OAuthError {
    /// The configuration cannot work (a secret missing, not an HTTP server, ...).
    Config(String),
    /// The token folder or a credential file.
    Store(String),
    /// A person must sign in (`toolbind mcp login SERVER`) and no host did.
    NeedsLogin(String),
    /// Discovery, registration, the authorization or a token request failed.
    Flow(String),
}

impl std::fmt::Display for OAuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OAuthError::Config(m) => write!(f, "OAuth configuration: {m}"),
            OAuthError::Store(m) => write!(f, "OAuth credentials: {m}"),
            OAuthError::NeedsLogin(m) => write!(f, "{m}"),
            OAuthError::Flow(m) => write!(f, "OAuth: {m}"),
        }
    }
}

impl std::error::Error for OAuthError {}

/// What is stored for a server: never a token.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AuthStatus {
    /// The protected resource (the server's URL, canonical).
    pub resource: String,
    /// The authorization server's issuer.
    pub issuer: Option<String>,
    /// The client id at the authorization server.
    pub client_id: String,
    /// `pre-registered`, `metadata-document` or `registered`.
    pub client_kind: String,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// When the access token expires, when the server said.
    pub expires_at: Option<SystemTime>,
    /// Whether a refresh token is kept.
    pub refreshable: bool,
    /// Whether the token came from the client-credentials grant.
    pub client_credentials: bool,
    /// The credential file.
    pub file: PathBuf,
}

fn status_of(record: &store::Record, file: PathBuf) -> AuthStatus {
    AuthStatus {
        resource: record.resource.clone(),
        issuer: record.issuer.clone(),
        client_id: record.client.id.clone(),
        client_kind: serde_json::to_value(record.client.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        scopes: record.scopes.clone(),
        expires_at: record
            .expires_at
            .map(|s| SystemTime::UNIX_EPOCH + Duration::from_secs(s)),
        refreshable: record.refresh_token.is_some(),
        client_credentials: record.client_credentials,
        file,
    }
}

/// Signs in now (`toolbind mcp login`): discovery, then the client-credentials grant
/// when it is set, else the authorization code through `host`.
pub(crate) async fn login_to(
    server: &str,
    url: &str,
    oauth: OAuth,
    host: Arc<dyn Host>,
) -> Result<AuthStatus, OAuthError> {
    let cred = Credential::new(server, url, oauth.clone(), Some(host))?;
    cred.login_now().await?;
    status_at(url, &oauth)?.ok_or_else(|| OAuthError::Store("the login stored nothing".into()))
}

/// Removes what is kept for `url` and this client; whether there was anything.
pub(crate) fn forget(url: &str, oauth: &OAuth) -> Result<bool, OAuthError> {
    let resource = resource_of(url)?;
    store::Store::new(&oauth.dir(), &resource, &oauth.identity())?.remove()
}

/// What is kept for `url` and this client, if anything.
pub(crate) fn status_at(url: &str, oauth: &OAuth) -> Result<Option<AuthStatus>, OAuthError> {
    let resource = resource_of(url)?;
    let store = store::Store::new(&oauth.dir(), &resource, &oauth.identity())?;
    Ok(store
        .load()?
        .map(|r| status_of(&r, store.path().to_owned())))
}

pub(crate) fn resource_of(url: &str) -> Result<String, OAuthError> {
    store::canonical(url).ok_or_else(|| OAuthError::Config("not an http:// or https:// URL".into()))
}
