//! Tools that ask, in `toolbind serve`: the per-call [`Host`] that puts a tool's approval
//! and its `ctx` questions to the MCP client that made the call (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`, log messages), where that client declared the
//! capability and the transport can carry the question.
//!
//! What cannot be asked is refused with a message the tool (or, for an approval, the
//! model) reads: a client without the capability; `--stateless` on 2025-11-25, which
//! cannot receive an answer. On MCP 2026-07-28 the questions travel in an
//! `InputRequiredResult` ([`Via::Rounds`], see [`rounds`](super::rounds)); a task's call
//! asks through the task instead ([`Via::Task`]).
//!
//! One host, [`Asking`], whatever carries the question ([`Via`]): an approval and
//! `ctx.confirm` are a form with one boolean, `ctx.elicit` the tool's form, `ctx.sample`
//! the filtered sample, `ctx.roots` the roots; each answer is read into rmcp's type
//! before the tool sees it.

// Logging, sampling and roots: rmcp marks them deprecated (SEP-2577), and 2025-11-25
// clients use them.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::model::{GetExtensions, LoggingLevel, RequestId, ServerRequest};
use rmcp::service::OriginatingRequestId;
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use toolbind::host::{
    Answer, ApprovalRequest, Asker, ConfirmRequest, Decision, ElicitAction, ElicitRequest,
    Elicited, Host, Notice, Refusal, Root, SampleRequest,
};

use toolbind_codegen::Ask;

use super::logging::{Logger, RequestLevel};
use super::rounds::Call;
use super::tasks::Tasks;

/// What carries a call's questions.
pub(crate) enum Via {
    /// The client that made the call, on the call's own stream.
    Client {
        peer: Peer<RoleServer>,
        /// The `tools/call` the questions belong to: over HTTP they go out on its stream.
        request: RequestId,
        /// Log messages go out where the request's level allows them.
        logger: Arc<Logger>,
        level: RequestLevel,
    },
    /// The task the call runs as: its questions wait in it as `inputRequests` until
    /// `tasks/update` answers them (SEP-2663); a cancel or the TTL fails them.
    Task {
        tasks: Arc<Tasks>,
        id: String,
        /// What the request that created the task declared it can be asked: a task's
        /// questions obey the same rule as a plain call's.
        capabilities: Option<rmcp::model::ClientCapabilities>,
    },
    /// The client of an MCP 2026-07-28 call: its questions go out in the request's
    /// `InputRequiredResult` and wait in the call until the client's retry answers them.
    Rounds {
        call: Arc<Call>,
        /// What the first request declared it can be asked.
        capabilities: Option<rmcp::model::ClientCapabilities>,
    },
    /// Nobody: every question is refused with this reason.
    Nobody(String),
}

/// The host of one `tools/call`.
pub(crate) struct Asking(pub Via);

impl Asking {
    /// Whether the client declared `capability` (`elicitation` in form mode, `sampling`,
    /// `roots`). A task's client too: a client that did not declare `elicitation` is not
    /// asked for an approval through `tasks/update` either, or a tool that needs one would
    /// run as a task for the client a plain call refuses.
    fn can(&self, capability: Ask) -> Result<(), Refusal> {
        let caps = match &self.0 {
            Via::Nobody(why) => return Err(why.as_str().into()),
            Via::Client { peer, .. } => peer.peer_info().map(|i| i.capabilities.clone()),
            Via::Task { capabilities, .. } | Via::Rounds { capabilities, .. } => {
                capabilities.clone()
            }
        };
        if declares(caps.as_ref(), capability) {
            Ok(())
        } else {
            Err(format!(
                "the MCP client did not declare the `{}` capability{}, so it cannot be asked",
                capability.as_str(),
                if capability == Ask::Elicitation {
                    " (form mode)"
                } else {
                    ""
                }
            )
            .into())
        }
    }

    /// Asks the client `kind`'s request (its [`method`]) with `params`, when the client
    /// declared that capability, and returns the client's result as JSON.
    /// `key`: the name the tool gave the question; `approval`: the runtime asks, not the
    /// tool.
    fn ask(
        &self,
        kind: Ask,
        params: Value,
        key: Option<String>,
        approval: bool,
    ) -> Answer<Result<Value, Refusal>> {
        let asked = self.can(kind).map(|()| method(kind));
        let method = match asked {
            Ok(Some(method)) => method,
            Ok(None) | Err(_) => {
                if let (Via::Rounds { call, .. }, false) = (&self.0, approval) {
                    call.counted();
                }
                let why = asked.err().unwrap_or_else(|| {
                    format!("toolbind serve cannot ask a `{}` question", kind.as_str()).into()
                });
                return Box::pin(std::future::ready(Err(why)));
            }
        };
        match &self.0 {
            Via::Client { peer, request, .. } => {
                let (peer, origin) = (peer.clone(), request.clone());
                Box::pin(async move {
                    let mut request: ServerRequest =
                        serde_json::from_value(json!({"method": method, "params": params}))
                            .map_err(|e| format!("cannot ask the client ({method}): {e}"))?;
                    request
                        .extensions_mut()
                        .insert(OriginatingRequestId(origin));
                    let answer = peer
                        .send_request(request)
                        .await
                        .map_err(|e| format!("the MCP client did not answer {method}: {e}"))?;
                    serde_json::to_value(answer)
                        .map_err(|e| format!("the client's answer to {method}: {e}").into())
                })
            }
            Via::Task { tasks, id, .. } => {
                let waiting = tasks.ask(id, json!({"method": method, "params": params}), key);
                Box::pin(async move {
                    let mut question = waiting?;
                    (&mut question.answer).await.map_err(|_| {
                        "the task was cancelled or expired before the client answered".into()
                    })
                })
            }
            Via::Rounds { call, .. } => {
                let waiting = call.ask(json!({"method": method, "params": params}), key, approval);
                Box::pin(async move {
                    let mut question = waiting?;
                    (&mut question.answer)
                        .await
                        .map_err(|_| "the call was stopped before the client answered".into())
                })
            }
            Via::Nobody(why) => Box::pin(std::future::ready(Err(why.as_str().into()))),
        }
    }

    /// A form: `elicitation/create` with `schema`.
    fn form(
        &self,
        message: String,
        schema: Value,
        key: Option<String>,
        approval: bool,
    ) -> Answer<Result<Elicited, Refusal>> {
        let asking = self.ask(
            Ask::Elicitation,
            json!({"mode": "form", "message": message, "requestedSchema": schema}),
            key,
            approval,
        );
        Box::pin(async move { elicited(asking.await?) })
    }

    /// A form with one boolean, `field`: yes when accepted with it true.
    fn yes_or_no(
        &self,
        message: String,
        field: &'static str,
        key: Option<String>,
        approval: bool,
    ) -> Answer<Result<bool, Refusal>> {
        let asking = self.form(
            message,
            json!({"type": "object", "required": [field],
                "properties": {field: {"type": "boolean", "title": "Yes?", "default": false}}}),
            key,
            approval,
        );
        Box::pin(async move {
            let answer = asking.await?;
            Ok(answer.action == ElicitAction::Accept
                && answer
                    .content
                    .as_ref()
                    .and_then(|c| c.get(field))
                    .and_then(Value::as_bool)
                    == Some(true))
        })
    }
}

/// Whether `caps` declare the capability `kind` needs: `elicitation` in form mode (a
/// client that names no mode takes forms), `sampling`, `roots`.
pub(crate) fn declares(caps: Option<&rmcp::model::ClientCapabilities>, kind: Ask) -> bool {
    caps.is_some_and(|c| match kind {
        Ask::Elicitation => c
            .elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none()),
        Ask::Sampling => c.sampling.is_some(),
        Ask::Roots => c.roots.is_some(),
        // A kind of question this serve does not know how to put to a client.
        _ => false,
    })
}

/// The MCP request that asks a client a question of this kind (none for a kind this
/// serve does not know, which [`declares`] never finds declared).
fn method(kind: Ask) -> Option<&'static str> {
    match kind {
        Ask::Elicitation => Some("elicitation/create"),
        Ask::Sampling => Some("sampling/createMessage"),
        Ask::Roots => Some("roots/list"),
        _ => None,
    }
}

/// What a person approves: the tool and its arguments, without the values of sensitive
/// inputs.
fn approval_question(request: &ApprovalRequest) -> String {
    format!(
        "Allow the tool `{}` to run with these arguments?\n{}",
        request.tool.name(),
        request.shown_args()
    )
}

/// A client's answer to `elicitation/create`, read as rmcp's `ElicitResult`.
fn elicited(answer: Value) -> Result<Elicited, Refusal> {
    let r: rmcp::model::ElicitResult = serde_json::from_value(answer)
        .map_err(|e| format!("the client's answer is not an elicitation result: {e}"))?;
    let action = match r.action {
        rmcp::model::ElicitationAction::Accept => ElicitAction::Accept,
        rmcp::model::ElicitationAction::Decline => ElicitAction::Decline,
        _ => ElicitAction::Cancel,
    };
    Ok(match (action, r.content) {
        (ElicitAction::Accept, Some(Value::Object(content))) => Elicited::accept(content),
        (ElicitAction::Accept, _) => Elicited::accept(serde_json::Map::new()),
        (other, _) => Elicited::without_content(other),
    })
}

impl Host for Asking {
    fn approve(&self, request: ApprovalRequest) -> Answer<Decision> {
        let asking = self.yes_or_no(
            approval_question(&request),
            "approve",
            Some("approval".into()),
            true,
        );
        Box::pin(async move {
            match asking.await {
                Ok(true) => Decision::Approve,
                Ok(false) => Decision::deny("the user did not approve it"),
                Err(why) => Decision::deny(format!("it needs approval, and {why}")),
            }
        })
    }

    fn confirm(&self, request: ConfirmRequest) -> Answer<Result<bool, Refusal>> {
        self.yes_or_no(request.message, "confirm", request.asker.key, false)
    }

    fn elicit(&self, request: ElicitRequest) -> Answer<Result<Elicited, Refusal>> {
        self.form(request.message, request.schema, request.asker.key, false)
    }

    fn sample(&self, request: SampleRequest) -> Answer<Result<Value, Refusal>> {
        let asking = self.ask(
            Ask::Sampling,
            toolbind::host::sample_params(request.params),
            request.asker.key,
            false,
        );
        Box::pin(async move {
            let answer = asking.await?;
            let r: rmcp::model::CreateMessageResult = serde_json::from_value(answer)
                .map_err(|e| format!("the client's sample cannot be read: {e}"))?;
            serde_json::to_value(r).map_err(|e| format!("the client's sample: {e}").into())
        })
    }

    fn roots(&self, asker: Asker) -> Answer<Result<Vec<Root>, Refusal>> {
        let asking = self.ask(Ask::Roots, json!({}), asker.key, false);
        Box::pin(async move {
            let r: rmcp::model::ListRootsResult = serde_json::from_value(asking.await?)
                .map_err(|e| format!("the client's roots cannot be read: {e}"))?;
            Ok(r.roots
                .into_iter()
                .map(|root| Root::new(root.uri, root.name))
                .collect())
        })
    }

    fn waiting(&self, _asker: Asker, asked: u64) {
        if let Via::Rounds { call, .. } = &self.0 {
            call.waiting(asked);
        }
    }

    fn notify(&self, notice: Notice) {
        let Ok(level) = serde_json::from_value::<LoggingLevel>(Value::String(notice.level)) else {
            return;
        };
        match &self.0 {
            Via::Client {
                peer,
                logger,
                level: request_level,
                ..
            } => {
                if logger.enabled(level, *request_level) {
                    logger.log(
                        peer,
                        level,
                        notice.asker.tool.name(),
                        Value::String(notice.text),
                    );
                }
            }
            // To the request of the round at hand.
            Via::Rounds { call, .. } => {
                call.listener
                    .log(level, notice.asker.tool.name(), notice.text);
            }
            Via::Task { .. } | Via::Nobody(_) => {}
        }
    }
}
