//! [`LoginRequest`]: an MCP server's authorization server wants a person to sign in (the
//! OAuth 2.1 authorization-code flow); the [`Host`](super::Host) shows them the URL.

/// Why a login is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoginReason {
    /// No credentials are stored for this server.
    First,
    /// The stored ones expired and cannot be refreshed (no refresh token, or it was
    /// refused).
    Expired,
    /// The server needs scopes the token lacks (HTTP 403 `insufficient_scope`): the
    /// login asks for all of these.
    StepUp {
        /// Every scope asked for: those granted before and the new ones.
        scopes: Vec<String>,
    },
    /// The server now names another authorization server: the client registers there
    /// and the person signs in again.
    NewIssuer,
}

/// An authorization URL for a person to open.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LoginRequest {
    /// The server's name in the configuration.
    pub server: String,
    /// The protected resource (the server's URL, canonical): what the token is for.
    pub resource: String,
    /// The authorization server's issuer.
    pub issuer: Option<String>,
    /// The URL to open in a browser. It holds no secret (PKCE keeps the verifier here).
    pub url: String,
    /// Where the authorization server sends the browser back: toolbind listens there on
    /// the loopback interface until the login is done.
    pub redirect_uri: String,
    /// Why a login is asked for.
    pub reason: LoginReason,
}

/// What a host did with a [`LoginRequest`]. Its `Debug` does not show a redirect URL
/// (it holds the authorization code).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoginStep {
    /// The URL was shown or opened: the browser will reach `redirect_uri`, where toolbind
    /// waits (at most the login timeout).
    Opened,
    /// The host followed the flow itself and has the URL the browser was sent back to
    /// (`redirect_uri?code=...&state=...`): toolbind checks and uses it, and does not wait.
    Redirected(String),
}

impl std::fmt::Debug for LoginStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoginStep::Opened => f.write_str("Opened"),
            LoginStep::Redirected(_) => f.write_str("Redirected([a redirect URL with a code])"),
        }
    }
}
