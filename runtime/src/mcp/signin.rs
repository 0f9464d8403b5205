//! Signing in to an HTTP MCP server by its `McpServer` (`toolbind mcp login|logout|status`
//! and agents that sign in before they connect): the server's URL and OAuth setting handed
//! to the OAuth client.

use std::sync::Arc;

use super::oauth::{self, AuthStatus, OAuth, OAuthError};
use super::{McpServer, ServerConfig};
use crate::host::Host;

/// The server's URL and its OAuth setting (the default one when none is set).
fn target(server: &McpServer) -> Result<(String, OAuth), OAuthError> {
    let ServerConfig::Http { url, .. } = &server.config else {
        return Err(OAuthError::Config(format!(
            "`{}` is a stdio server: OAuth is for HTTP servers",
            server.name.escape_debug()
        )));
    };
    Ok((url.clone(), server.oauth.clone().unwrap_or_default()))
}

/// Signs in to `server` now: discovery, then the client-credentials grant when it is set,
/// else the authorization code through `host` ([`Host::login`]: show or open the URL). The
/// token is kept for every later connect of a server with this URL and client.
pub async fn login(server: &McpServer, host: Arc<dyn Host>) -> Result<AuthStatus, OAuthError> {
    let (url, oauth) = target(server)?;
    oauth::login_to(&server.name, &url, oauth, host).await
}

/// Removes the credentials kept for `server`'s URL; whether there were any. Nothing is
/// revoked at the authorization server (rmcp has no revocation; revoke the grant in the
/// server's own settings).
pub fn logout(server: &McpServer) -> Result<bool, OAuthError> {
    let (url, oauth) = target(server)?;
    oauth::forget(&url, &oauth)
}

/// What is kept for `server`'s URL, if anything (never a token).
pub fn auth_status(server: &McpServer) -> Result<Option<AuthStatus>, OAuthError> {
    let (url, oauth) = target(server)?;
    oauth::status_at(&url, &oauth)
}
