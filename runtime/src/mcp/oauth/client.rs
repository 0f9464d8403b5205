//! The token of one HTTP server's connection ([`Credential`]) and the HTTP client that
//! sends it ([`AuthedHttp`]): a 401 leads to one refresh or login and one retry, a 403
//! `insufficient_scope` to a login for the scopes asked (at most three per connection).

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_core::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::AuthError;
use rmcp::transport::streamable_http_client::SseError;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use super::flow::{self, Refreshed};
use super::store::{Record, Store};
use super::{OAuth, OAuthError};
use crate::host::{LoginReason, SharedHost};

/// A token this close to its expiry is refreshed before it is sent.
const MARGIN: Duration = Duration::from_secs(30);
/// How long a process waits for another's refresh or login of the same credential,
/// beyond the login's own bound (a person at a browser).
const LOCK_SLACK: Duration = Duration::from_secs(30);
/// Step-ups for scopes one connection makes at most (a server that keeps asking for more
/// is not followed for ever).
const MAX_STEP_UPS: u32 = 3;

/// One HTTP server's OAuth credentials as a connection uses them.
pub(crate) struct Credential {
    server: String,
    url: String,
    resource: String,
    oauth: OAuth,
    store: Store,
    host: Option<SharedHost>,
    current: Mutex<Option<Arc<Record>>>,
    /// One login or refresh at a time in this process (the file lock does it across).
    busy: tokio::sync::Mutex<()>,
    step_ups: AtomicU32,
    /// A refresh token this connection saw refused: not sent again.
    dead_refresh: Mutex<Option<String>>,
    /// Why this connection stopped asking for logins (the host refused one, or the server
    /// refused a token it had just granted): each later 401 is a "needs a login" at once,
    /// with no registration, discovery or login per request.
    gave_up: Mutex<Option<String>>,
}

impl Credential {
    pub(crate) fn new(
        server: &str,
        url: &str,
        oauth: OAuth,
        host: Option<SharedHost>,
    ) -> Result<Credential, OAuthError> {
        let resource = super::resource_of(url)?;
        let store = Store::new(&oauth.dir(), &resource, &oauth.identity())?;
        let current = store.load().ok().flatten().map(Arc::new);
        Ok(Credential {
            server: server.into(),
            url: url.into(),
            resource,
            oauth,
            store,
            host,
            current: Mutex::new(current),
            busy: tokio::sync::Mutex::new(()),
            step_ups: AtomicU32::new(0),
            dead_refresh: Mutex::new(None),
            gave_up: Mutex::new(None),
        })
    }

    fn lock_wait(&self) -> Duration {
        self.oauth.login_timeout + self.oauth.request_timeout * 3 + LOCK_SLACK
    }

    fn current(&self) -> Option<Arc<Record>> {
        self.current
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Holds `record` and stores it. Held first: a rotated refresh token the store could
    /// not write is still this process's to use (the error says the file was not written).
    fn keep(&self, record: Record) -> Result<String, OAuthError> {
        let token = record.access_token.clone();
        let record = Arc::new(record);
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = Some(record.clone());
        self.store.save(&record)?;
        Ok(token)
    }

    /// Stops asking for logins on this connection, saying why.
    pub(crate) fn give_up(&self, why: &str) {
        let mut g = self.gave_up.lock().unwrap_or_else(|p| p.into_inner());
        if g.is_none() {
            *g = Some(format!("{why}: run `toolbind mcp login {}`", self.shown()));
        }
    }

    /// Why this connection no longer asks for logins, if it stopped: what a "needs a
    /// login" state says.
    pub(crate) fn given_up(&self) -> Option<String> {
        self.gave_up
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn shown(&self) -> String {
        self.server.escape_debug().to_string()
    }

    /// The token to send: the one held while it is fresh (no I/O), else a refreshed one;
    /// none when there is none (the server's 401 then starts a login). A stale one that
    /// cannot be renewed without a person is sent anyway (the server decides); a refresh
    /// that failed otherwise (the authorization server down or hanging) is the request's
    /// error, not tried again for its 401.
    pub(crate) async fn token(&self) -> Result<Option<String>, OAuthError> {
        let Some(held) = self.current() else {
            return Ok(None);
        };
        if held.fresh(MARGIN) || (held.refresh_token.is_none() && !held.client_credentials) {
            return Ok(Some(held.access_token.clone()));
        }
        match self.renew(Some(&held.access_token), None, false).await {
            Ok(t) => Ok(Some(t)),
            Err(OAuthError::NeedsLogin(_)) => Ok(Some(held.access_token.clone())),
            Err(e) => Err(e),
        }
    }

    /// A new token after `sent` was refused (or expired): another process's, when it
    /// stored a fresh one meanwhile; else a refresh; else the client-credentials grant or
    /// a login. `login` skips the first two (a refreshed token was refused too).
    pub(crate) async fn renew(
        &self,
        sent: Option<&str>,
        challenge: Option<&str>,
        login: bool,
    ) -> Result<String, OAuthError> {
        let _busy = self.busy.lock().await;
        let _lock = self.store.lock(self.lock_wait()).await?;
        let stored = self.store.load()?;
        if let Some(r) = &stored
            && !login
            && Some(r.access_token.as_str()) != sent
            && r.fresh(MARGIN)
        {
            return self.keep(r.clone());
        }
        // A refresh, unless it cannot help: a login is asked for, the token came from the
        // client-credentials grant (run again instead), or this refresh token was refused.
        let dead = self
            .dead_refresh
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let mut refused = None;
        if let Some(r) = stored.as_ref().filter(|r| {
            !login
                && !self.oauth.client_credentials
                && r.refresh_token.is_some()
                && r.refresh_token != dead
        }) {
            match flow::refresh(&self.url, &self.oauth, r).await? {
                Refreshed::Done(new) => return self.keep(*new),
                Refreshed::Refused(why) => {
                    *self.dead_refresh.lock().unwrap_or_else(|p| p.into_inner()) =
                        r.refresh_token.clone();
                    refused = Some(why);
                }
            }
        }
        if let Some(why) = self.given_up() {
            return Err(OAuthError::NeedsLogin(why));
        }
        let reason = if stored.is_some() {
            LoginReason::Expired
        } else {
            LoginReason::First
        };
        let obtained = self
            .obtain(
                challenge,
                self.oauth.scopes.clone(),
                reason,
                stored.as_ref(),
                false,
            )
            .await;
        match obtained {
            Ok(record) => self.keep(record),
            Err(OAuthError::NeedsLogin(m)) => {
                let m = match refused {
                    Some(why) => format!("{why}; {m}"),
                    None => m,
                };
                *self.gave_up.lock().unwrap_or_else(|p| p.into_inner()) = Some(m.clone());
                Err(OAuthError::NeedsLogin(m))
            }
            Err(e) => Err(e),
        }
    }

    /// A token with the scopes granted before plus those a 403 `insufficient_scope` asks
    /// for (a new login or grant; the union, so nothing granted is lost).
    pub(crate) async fn step_up(
        &self,
        sent: Option<&str>,
        challenge: &str,
        required: Option<&str>,
    ) -> Result<String, OAuthError> {
        let _busy = self.busy.lock().await;
        let _lock = self.store.lock(self.lock_wait()).await?;
        let stored = self.store.load()?;
        let wanted: Vec<String> = required
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        if let Some(r) = &stored
            && Some(r.access_token.as_str()) != sent
            && r.fresh(MARGIN)
            && wanted.iter().all(|w| r.scopes.contains(w))
        {
            return self.keep(r.clone());
        }
        if let Some(why) = self.given_up() {
            return Err(OAuthError::NeedsLogin(why));
        }
        if let Some(r) = stored
            .as_ref()
            .filter(|r| Some(r.access_token.as_str()) == sent)
            && wanted.iter().all(|w| r.scopes.contains(w))
        {
            // A login would ask for what the token has: the server's refusal is its answer.
            return Err(OAuthError::Flow(format!(
                "the server refuses the token for lack of scopes it was granted ({}); toolbind asks for no new login",
                if wanted.is_empty() {
                    "it names none".to_owned()
                } else {
                    wanted.join(" ")
                }
            )));
        }
        if self.step_ups.fetch_add(1, Ordering::SeqCst) >= MAX_STEP_UPS {
            return Err(OAuthError::Flow(format!(
                "the server asked for more scopes {MAX_STEP_UPS} times and refuses the tokens given ({}); toolbind stops asking",
                required.unwrap_or("no scope named")
            )));
        }
        let mut scopes: Vec<String> = stored
            .as_ref()
            .map(|r| r.scopes.clone())
            .or_else(|| self.oauth.scopes.clone())
            .unwrap_or_default();
        for w in wanted {
            if !scopes.contains(&w) {
                scopes.push(w);
            }
        }
        let reason = LoginReason::StepUp {
            scopes: scopes.clone(),
        };
        match self
            .obtain(
                Some(challenge),
                Some(scopes),
                reason,
                stored.as_ref(),
                false,
            )
            .await
        {
            Ok(record) => self.keep(record),
            Err(OAuthError::NeedsLogin(m)) => {
                *self.gave_up.lock().unwrap_or_else(|p| p.into_inner()) = Some(m.clone());
                Err(OAuthError::NeedsLogin(m))
            }
            Err(e) => Err(e),
        }
    }

    /// A login now, whatever is stored (`toolbind mcp login`).
    pub(crate) async fn login_now(&self) -> Result<String, OAuthError> {
        let _busy = self.busy.lock().await;
        let _lock = self.store.lock(self.lock_wait()).await?;
        let stored = self.store.load().ok().flatten();
        let record = self
            .obtain(
                None,
                self.oauth.scopes.clone(),
                LoginReason::First,
                stored.as_ref(),
                true,
            )
            .await?;
        self.keep(record)
    }

    async fn obtain(
        &self,
        challenge: Option<&str>,
        scopes: Option<Vec<String>>,
        reason: LoginReason,
        earlier: Option<&Record>,
        trust_new_issuer: bool,
    ) -> Result<Record, OAuthError> {
        if self.oauth.client_credentials {
            return flow::client_credentials(
                &self.url,
                &self.resource,
                &self.oauth,
                challenge,
                scopes,
                earlier,
                trust_new_issuer,
            )
            .await
            .map_err(|e| self.with_login_hint(e));
        }
        let Some(host) = &self.host else {
            return Err(OAuthError::NeedsLogin(format!(
                "the server needs an OAuth login: run `toolbind mcp login {}`",
                self.shown()
            )));
        };
        let reason = match (&reason, earlier) {
            (LoginReason::Expired, Some(r))
                if challenge.is_some_and(|c| names_other_issuer(c, r)) =>
            {
                LoginReason::NewIssuer
            }
            _ => reason,
        };
        flow::Login {
            server: &self.server,
            url: &self.url,
            resource: &self.resource,
            oauth: &self.oauth,
            host: host.as_ref(),
            challenge,
            scopes,
            reason,
            earlier,
            trust_new_issuer,
        }
        .run()
        .await
        .map_err(|e| self.with_login_hint(e))
    }

    /// A "needs a login" says which command signs in.
    fn with_login_hint(&self, e: OAuthError) -> OAuthError {
        match e {
            OAuthError::NeedsLogin(m) if !m.contains("toolbind mcp login") => {
                OAuthError::NeedsLogin(format!("{m}: run `toolbind mcp login {}`", self.shown()))
            }
            other => other,
        }
    }
}

/// A guess for the reason shown only: whether a challenge's metadata URL is on another
/// host than the stored issuer's (the login's discovery decides for real).
fn names_other_issuer(challenge: &str, r: &Record) -> bool {
    let host = |u: &str| {
        url::Url::parse(u)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
    };
    let Some(issuer) = r.issuer.as_deref().and_then(host) else {
        return false;
    };
    !challenge.contains(&issuer)
}

/// rmcp's reqwest client with the credential's token: what an HTTP server's transport
/// sends through. Without a credential (a static `Authorization` header is configured) it
/// only passes through.
#[derive(Clone)]
pub(crate) struct AuthedHttp {
    pub(crate) inner: reqwest::Client,
    pub(crate) cred: Option<Arc<Credential>>,
}

type HttpError = StreamableHttpError<reqwest::Error>;

/// An OAuth step that failed, as the transport's error (its text is toolbind's).
fn failed(e: OAuthError) -> HttpError {
    StreamableHttpError::Auth(AuthError::AuthorizationFailed(e.to_string()))
}

impl AuthedHttp {
    async fn with_auth<T, F, Fut>(&self, given: Option<String>, call: F) -> Result<T, HttpError>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let Some(cred) = &self.cred else {
            return call(given).await;
        };
        let mut sent = cred.token().await.map_err(failed)?;
        for attempt in 0.. {
            let r = call(sent.clone()).await;
            let next = match &r {
                Err(StreamableHttpError::AuthRequired(a)) if attempt < 2 => {
                    cred.renew(
                        sent.as_deref(),
                        Some(&a.www_authenticate_header),
                        attempt == 1,
                    )
                    .await
                }
                Err(StreamableHttpError::AuthRequired(_)) => {
                    // A refresh and a login, and the server still refuses: not a loop.
                    cred.give_up("the server refuses the tokens its authorization server grants (issued for another audience?)");
                    return r;
                }
                // A 403 is a step-up only when the server says which scope is missing
                // (RFC 6750 `insufficient_scope`); any other 403 is the server's answer.
                Err(StreamableHttpError::InsufficientScope(s))
                    if attempt < 2 && s.www_authenticate_header.contains("insufficient_scope") =>
                {
                    cred.step_up(
                        sent.as_deref(),
                        &s.www_authenticate_header,
                        s.required_scope.as_deref(),
                    )
                    .await
                }
                _ => return r,
            };
            match next {
                Ok(t) => sent = Some(t),
                // The 401 or 403 stays what the caller sees: the server needs a login.
                Err(OAuthError::NeedsLogin(_)) => return r,
                Err(e) => return Err(failed(e)),
            }
        }
        unreachable!("the loop returns by its third attempt")
    }
}

type Headers = HashMap<HeaderName, HeaderValue>;

impl StreamableHttpClient for AuthedHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: Headers,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        if self.cred.is_none() {
            // No OAuth: nothing to retry, nothing to keep a copy of.
            return self
                .inner
                .post_message(uri, message, session_id, auth, headers)
                .await;
        }
        self.with_auth(auth, |t| {
            let (uri, m, s, h) = (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                headers.clone(),
            );
            async move { self.inner.post_message(uri, m, s, t, h).await }
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: Headers,
        max: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        if self.cred.is_none() {
            // No OAuth: nothing to retry, nothing to keep a copy of.
            return self
                .inner
                .post_message_with_max_sse_event_size(uri, message, session_id, auth, headers, max)
                .await;
        }
        self.with_auth(auth, |t| {
            let (uri, m, s, h) = (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                headers.clone(),
            );
            async move {
                self.inner
                    .post_message_with_max_sse_event_size(uri, m, s, t, h, max)
                    .await
            }
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        if self.cred.is_none() {
            // No OAuth: nothing to retry, nothing to keep a copy of.
            return self
                .inner
                .post_message_with_response_limits(uri, message, session_id, auth, headers, limits)
                .await;
        }
        self.with_auth(auth, |t| {
            let (uri, m, s, h) = (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                headers.clone(),
            );
            async move {
                self.inner
                    .post_message_with_response_limits(uri, m, s, t, h, limits)
                    .await
            }
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth: Option<String>,
        headers: Headers,
    ) -> Result<(), HttpError> {
        // A session's end is not worth a login.
        let token = match &self.cred {
            Some(c) => c.token().await.map_err(failed)?,
            None => auth,
        };
        self.inner
            .delete_session(uri, session_id, token, headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: Headers,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        if self.cred.is_none() {
            // No OAuth: nothing to retry, nothing to keep a copy of.
            return self
                .inner
                .get_stream(uri, session_id, last_event_id, auth, headers)
                .await;
        }
        self.with_auth(auth, |t| {
            let (uri, s, l, h) = (
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                headers.clone(),
            );
            async move { self.inner.get_stream(uri, s, l, t, h).await }
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: Headers,
        max: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        if self.cred.is_none() {
            // No OAuth: nothing to retry, nothing to keep a copy of.
            return self
                .inner
                .get_stream_with_max_sse_event_size(
                    uri,
                    session_id,
                    last_event_id,
                    auth,
                    headers,
                    max,
                )
                .await;
        }
        self.with_auth(auth, |t| {
            let (uri, s, l, h) = (
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                headers.clone(),
            );
            async move {
                self.inner
                    .get_stream_with_max_sse_event_size(uri, s, l, t, h, max)
                    .await
            }
        })
        .await
    }
}
