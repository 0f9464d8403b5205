//! The agent's say in a call: approval before a tool runs.
//!
//! A tool whose TOOL.md says `approval: always` does not run when the model calls it: the
//! runtime asks its [`Host`] first, with the tool (its annotations included) and the
//! validated arguments. The host approves, denies with a reason (the model gets an error
//! result and the agent [`StopReason::Denied`](crate::StopReason::Denied)), or approves
//! edited arguments, which are validated again. A host's policy may ask for other calls
//! too ([`Host::needs_approval`]: every tool annotated `destructive`, say).
//!
//! What a wait may cost is bounded: the time spent waiting for an answer does not count
//! against the call's timeout (the tool has not started), a wait ends after
//! [`RuntimeConfig::ask_timeout`](crate::RuntimeConfig::ask_timeout) (5 minutes by default)
//! as a denial, a cancelled call stops waiting at once, and a policy that panics denies
//! the call with the panic's message. A runtime without a host denies every call that
//! needs approval, saying how to allow it: never a hang, never a call run unasked.
//!
//! ```no_run
//! use toolbind::host::{Decision, policy};
//!
//! # fn demo(registry: toolbind::Registry) {
//! let runtime = toolbind::Runtime::builder()
//!     .registry(registry)
//!     .host(policy(|request| async move {
//!         if request.tool.name() == "delete_file" && request.args["path"] == "/" {
//!             Decision::deny("not the root")
//!         } else {
//!             Decision::Approve
//!         }
//!     }))
//!     .build();
//! # drop(runtime); }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::tool::ToolInfo;

/// A future a [`Host`] answers with.
pub type Answer<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// One call waiting for approval.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// The tool: its name, its TOOL.md (`spec().approval`, `spec().annotations`: MCP's
    /// `destructive`, `read_only`, ...).
    pub tool: ToolInfo,
    /// The call's id (the model's tool-call id when it gave one).
    pub tool_call_id: String,
    /// The arguments, validated against the tool's inputs (defaults filled in).
    pub args: Value,
}

/// A host's answer to an [`ApprovalRequest`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Decision {
    /// Run the call as it is.
    Approve,
    /// Do not run it: the model gets an error result saying so, with `reason`.
    Deny {
        /// Why, for the model and the log.
        reason: String,
    },
    /// Run it with these arguments instead: the approver edited them (validated again; invalid ones are a
    /// [`StopReason::BadArguments`](crate::StopReason::BadArguments) result saying the
    /// approver's edit was invalid).
    ApproveWith {
        /// The arguments to run with: an object.
        args: Value,
    },
}

impl Decision {
    /// [`Decision::Deny`] with `reason`.
    pub fn deny(reason: impl Into<String>) -> Decision {
        Decision::Deny {
            reason: reason.into(),
        }
    }

    /// [`Decision::ApproveWith`] with `args`.
    pub fn approve_with(args: Value) -> Decision {
        Decision::ApproveWith { args }
    }
}

/// The agent's side of calls that need its say. Set on a runtime with
/// [`RuntimeBuilder::host`](crate::RuntimeBuilder::host); [`policy`] makes one from a
/// closure.
pub trait Host: Send + Sync + 'static {
    /// Whether this call needs approval. By default: when the tool's TOOL.md says
    /// `approval: always`. A policy may ask for more (never for less: a tool that says
    /// `always` is asked for whatever this returns).
    fn needs_approval(&self, tool: &ToolInfo) -> bool {
        let _ = tool;
        false
    }

    /// Decides a call that needs approval. It may take as long as a person does, up to
    /// [`RuntimeConfig::ask_timeout`](crate::RuntimeConfig::ask_timeout).
    fn approve(&self, request: ApprovalRequest) -> Answer<Decision>;
}

/// A [`Host`] whose approvals are `decide`'s answers (and which asks only for the tools
/// whose TOOL.md says `approval: always`).
pub fn policy<F, Fut>(decide: F) -> Policy<F>
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Decision> + Send + 'static,
{
    Policy(decide)
}

/// A [`Host`] made by [`policy`].
#[derive(Clone)]
pub struct Policy<F>(F);

impl<F> std::fmt::Debug for Policy<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Policy")
    }
}

impl<F, Fut> Host for Policy<F>
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Decision> + Send + 'static,
{
    fn approve(&self, request: ApprovalRequest) -> Answer<Decision> {
        Box::pin((self.0)(request))
    }
}

/// The host a runtime holds.
pub(crate) type SharedHost = Arc<dyn Host>;
