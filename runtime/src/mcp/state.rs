//! What a runtime knows of each of its MCP servers now: [`McpServerState`].

use std::fmt;

/// One MCP server's state in a [`Runtime`](crate::Runtime)
/// ([`Runtime::mcp_servers`](crate::Runtime::mcp_servers)). A server that is not
/// [`Ready`](Self::Ready) affects only its own tools: the others stay callable.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpServerState {
    /// Not started yet: a server of a runtime made with
    /// [`build`](crate::runtime::RuntimeBuilder::build) starts on its first call.
    NotStarted,
    /// Starting (a stdio server) or being reached (HTTP), initialized, its tools listed.
    Starting,
    /// Initialized, its tools listed: calls go to it.
    Ready,
    /// Its last start failed, or it died soon after starting. `reason` says why (its
    /// last stderr lines included); it is started again, after a wait that doubles up to
    /// [`McpServer::max_restart_delay`](crate::mcp::McpServer::max_restart_delay), by the
    /// next call of one of its tools — or, for a server whose tools the runtime does not
    /// know yet (no snapshot), in the background, up to ten times unless the failure would
    /// repeat (the reason then says it is not started again).
    #[non_exhaustive]
    Failed {
        /// Why, in words, with the fix when toolbind knows it.
        reason: String,
    },
    /// The server refused toolbind's request for want of credentials (HTTP 401, or 403
    /// for a scope): `reason` says what it asked for and how to give a token.
    #[non_exhaustive]
    NeedsLogin {
        /// What the server answered, and how to give it a token.
        reason: String,
    },
    /// Its tools were not added to the runtime and it will not be started again:
    /// `reason` says why (a tool name another source already has).
    #[non_exhaustive]
    Refused {
        /// Why, with the fix.
        reason: String,
    },
}

impl McpServerState {
    /// A word for the state, as `toolbind list --json` gives it: `not_started`,
    /// `starting`, `ready`, `failed`, `needs_login`, `refused`.
    pub fn kind(&self) -> &'static str {
        match self {
            McpServerState::NotStarted => "not_started",
            McpServerState::Starting => "starting",
            McpServerState::Ready => "ready",
            McpServerState::Failed { .. } => "failed",
            McpServerState::NeedsLogin { .. } => "needs_login",
            McpServerState::Refused { .. } => "refused",
        }
    }

    /// Why the server is not ready, when it failed, needs a login or was refused.
    pub fn reason(&self) -> Option<&str> {
        match self {
            McpServerState::Failed { reason }
            | McpServerState::NeedsLogin { reason }
            | McpServerState::Refused { reason } => Some(reason),
            _ => None,
        }
    }
}

impl fmt::Display for McpServerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McpServerState::NotStarted => f.write_str("not started"),
            McpServerState::Starting => f.write_str("starting"),
            McpServerState::Ready => f.write_str("ready"),
            McpServerState::Failed { reason } => write!(f, "failed: {reason}"),
            McpServerState::NeedsLogin { reason } => write!(f, "needs a login: {reason}"),
            McpServerState::Refused { reason } => write!(f, "refused: {reason}"),
        }
    }
}
