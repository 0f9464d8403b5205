//! The agent's say in a call: approval before a tool runs, and the questions a tool asks
//! while it runs.
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
//! [`RuntimeConfig::ask_timeout`](crate::runtime::RuntimeConfig::ask_timeout) (5 minutes by default)
//! as a denial, a cancelled call stops waiting at once, and a policy that panics denies
//! the call with the panic's message. A runtime without a host denies every call that
//! needs approval, saying how to allow it: never a hang, never a call run unasked.
//!
//! A node or python tool may also ask during its call, through `execute`'s optional fifth
//! argument `ctx` (four-argument tools are unaffected): `ctx.confirm(message)`,
//! `ctx.elicit(message, schema)` (a flat object of primitive fields, as MCP elicitation
//! allows), `ctx.sample({messages, systemPrompt, maxTokens, ...})` (the host's model),
//! `ctx.roots()` and `ctx.notify(text, level)`. Each reaches the host's method of that
//! name ([`Host::confirm`], [`Host::elicit`], [`Host::sample`], [`Host::roots`],
//! [`Host::notify`]); a host that does not implement one refuses it, and the tool's promise
//! rejects with a clear message. The same bounds hold: the wait does not count against the
//! call's timeout, each question ends after `ask_timeout`, a cancelled call rejects what it
//! still waits for, and a call has at most [`MAX_QUESTIONS`] questions open at once. bash
//! tools have no `ctx`.
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

mod ask;
mod builtin;
mod form;
mod login;
mod question;
mod refusal;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::tool::ToolInfo;

pub use ask::LEVELS;
pub(crate) use ask::{Approver, answer, approval, notify};
pub(crate) use builtin::redacting;
pub use builtin::{Policy, policy};
pub use form::field_fits;
pub(crate) use form::has_uri_scheme;
pub use login::{LoginReason, LoginRequest, LoginStep};
pub use question::{MAX_SAMPLE_TOKENS, sample_params};
pub(crate) use question::{Question, question_key};
pub use refusal::Refusal;

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

impl ApprovalRequest {
    /// The arguments as a person should see them: the values of the tool's sensitive
    /// inputs replaced by `"[sensitive]"`.
    pub fn shown_args(&self) -> Value {
        let mut shown = self.args.clone();
        if let Value::Object(m) = &mut shown {
            for input in self.tool.spec().inputs.iter().filter(|i| i.sensitive) {
                if let Some(v) = m.get_mut(&input.name) {
                    *v = Value::String("[sensitive]".into());
                }
            }
        }
        shown
    }
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
/// [`RuntimeBuilder::host`](crate::runtime::RuntimeBuilder::host); [`policy`] makes one from a
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
    /// [`RuntimeConfig::ask_timeout`](crate::runtime::RuntimeConfig::ask_timeout).
    fn approve(&self, request: ApprovalRequest) -> Answer<Decision>;

    /// `ctx.confirm(message)`: `Ok(true)` to go on. By default refused.
    fn confirm(&self, request: ConfirmRequest) -> Answer<Result<bool, Refusal>> {
        let _ = request;
        Box::pin(std::future::ready(Err(Refusal::not_answered("confirm"))))
    }

    /// `ctx.elicit(message, schema)`: the user's answer to a form. By default refused.
    fn elicit(&self, request: ElicitRequest) -> Answer<Result<Elicited, Refusal>> {
        let _ = request;
        Box::pin(std::future::ready(Err(Refusal::not_answered("elicit"))))
    }

    /// `ctx.sample({...})`: the host model's answer (MCP's `CreateMessageResult` shape:
    /// `role`, `content`, `model`, `stopReason`). By default refused.
    fn sample(&self, request: SampleRequest) -> Answer<Result<Value, Refusal>> {
        let _ = request;
        Box::pin(std::future::ready(Err(Refusal::not_answered("sample"))))
    }

    /// `ctx.roots()`: the workspace roots. By default refused.
    fn roots(&self, asker: Asker) -> Answer<Result<Vec<Root>, Refusal>> {
        let _ = asker;
        Box::pin(std::future::ready(Err(Refusal::not_answered("roots"))))
    }

    /// An MCP server's authorization server wants a person to sign in: show them
    /// `request.url` (or open it) and return [`LoginStep::Opened`], or follow it yourself
    /// and return [`LoginStep::Redirected`]. By default refused: the server then "needs a
    /// login" (`McpServerState::NeedsLogin`) until `toolbind mcp login` is run. Called by
    /// the MCP executor with the `mcp-http` feature only.
    fn login(&self, request: LoginRequest) -> Answer<Result<LoginStep, Refusal>> {
        let _ = request;
        Box::pin(std::future::ready(Err(Refusal::not_answered("login"))))
    }

    /// `ctx.notify(text, level)`: a log message (the runtime also emits it as a DEBUG `tracing`
    /// event, target `toolbind::tool`). By default dropped.
    fn notify(&self, notice: Notice) {
        let _ = notice;
    }

    /// The tool has asked `asked` questions in this call so far and now waits for an
    /// answer (node: its event loop went idle after asking; python: it awaits or blocks
    /// on one). A host that gathers a call's questions may send them now: `toolbind
    /// serve` on MCP 2026-07-28 sends them in one `InputRequiredResult`. A hint, not a
    /// promise: the tool may still be working. By default ignored.
    fn waiting(&self, asker: Asker, asked: u64) {
        let _ = (asker, asked);
    }
}

/// The host a runtime holds.
pub(crate) type SharedHost = Arc<dyn Host>;

/// The most questions one call may have open at once; one more is refused in the tool.
pub const MAX_QUESTIONS: usize = 8;

/// Who asks: the tool and the call, in every question.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Asker {
    /// The tool asking.
    pub tool: ToolInfo,
    /// Its call's id.
    pub tool_call_id: String,
    /// The name the tool gave the question (`ctx.elicit(message, schema, {key})` in node,
    /// `key=` in python), when it gave one: 1 to 64 letters, digits, `_`, `-` or `.`. A
    /// host that lists questions by name (`toolbind serve`'s MCP `inputRequests`) uses
    /// it; others may ignore it.
    pub key: Option<String>,
}

/// The longest question key.
pub const MAX_KEY_LEN: usize = 64;

/// `ctx.confirm(message)`: a yes or no.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ConfirmRequest {
    /// Who asks.
    pub asker: Asker,
    /// What to confirm.
    pub message: String,
}

/// `ctx.elicit(message, schema)`: a few facts from the user, as a form.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ElicitRequest {
    /// Who asks.
    pub asker: Asker,
    /// What the form is for.
    pub message: String,
    /// The form: a JSON Schema object whose properties are strings, numbers, integers,
    /// booleans or string enums (MCP elicitation's `requestedSchema`). The runtime has
    /// checked it is flat, and checks the answer's content against it.
    pub schema: Value,
}

/// How the user answered a form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ElicitAction {
    /// Filled in and submitted: the answer has content.
    Accept,
    /// Said no.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

impl ElicitAction {
    /// `accept`, `decline`, `cancel`: MCP's words, and what the tool reads.
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitAction::Accept => "accept",
            ElicitAction::Decline => "decline",
            ElicitAction::Cancel => "cancel",
        }
    }
}

/// The answer to an [`ElicitRequest`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Elicited {
    /// What the user did.
    pub action: ElicitAction,
    /// The form's values, for [`ElicitAction::Accept`].
    pub content: Option<serde_json::Map<String, Value>>,
}

impl Elicited {
    /// Accepted with `content`.
    pub fn accept(content: serde_json::Map<String, Value>) -> Elicited {
        Elicited {
            action: ElicitAction::Accept,
            content: Some(content),
        }
    }

    /// Declined or cancelled: no content.
    pub fn without_content(action: ElicitAction) -> Elicited {
        Elicited {
            action,
            content: None,
        }
    }
}

/// `ctx.sample({...})`: a completion from the host's model.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SampleRequest {
    /// Who asks.
    pub asker: Asker,
    /// What the tool passed: MCP `sampling/createMessage` params (`messages`,
    /// `systemPrompt`, `maxTokens`, `temperature`, `stopSequences`, `modelPreferences`).
    pub params: Value,
}

/// One of the client's workspace roots.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// Its name, when it has one.
    pub name: Option<String>,
}

impl Root {
    /// A root at `uri`.
    pub fn new(uri: impl Into<String>, name: Option<String>) -> Root {
        Root {
            uri: uri.into(),
            name,
        }
    }
}

/// `ctx.notify(text, level)`: a log message from the tool.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Notice {
    /// Who says it.
    pub asker: Asker,
    /// `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert` or `emergency`.
    pub level: String,
    /// What it says (redacted of the call's sensitive values).
    pub text: String,
}

/// `text`, cut to `max` characters (with `…`).
pub(crate) fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}
