//! Tools that ask, in `toolbind serve`: the per-call [`Host`] that puts a tool's approval
//! and its `ctx` questions to the MCP client that made the call (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`, log messages), where that client declared the
//! capability and the transport can carry the question.
//!
//! What cannot be asked is refused with a message the tool (or, for an approval, the
//! model) reads: a client without the capability; `--stateless`, which cannot receive an
//! answer; MCP 2026-07-28, whose questions travel as an `InputRequiredResult` this server
//! does not send yet. A task's call asks through the task instead ([`TaskQuestions`]).

// Logging, sampling and roots: rmcp marks them deprecated (SEP-2577), and 2025-11-25
// clients use them.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::model::{ClientResult, GetExtensions, LoggingLevel, RequestId, ServerRequest};
use rmcp::service::OriginatingRequestId;
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use toolbind::host::{
    Answer, ApprovalRequest, Asker, ConfirmRequest, Decision, ElicitAction, ElicitRequest,
    Elicited, Host, Notice, Refusal, Root, SampleRequest,
};

use super::logging::{Logger, RequestLevel};

/// Why the client cannot be asked, when it cannot.
#[derive(Debug, Clone)]
pub(crate) enum Reach {
    /// Ask away.
    Client,
    /// Refuse every question with this reason.
    Nobody(String),
}

/// The host of one `tools/call`: its client.
pub(crate) struct McpAsker {
    pub peer: Peer<RoleServer>,
    /// The `tools/call` the questions belong to: over HTTP they go out on its stream.
    pub request: RequestId,
    pub reach: Reach,
    pub logger: Arc<Logger>,
    pub level: RequestLevel,
}

impl McpAsker {
    fn can(&self, capability: &str) -> Result<(), Refusal> {
        if let Reach::Nobody(why) = &self.reach {
            return Err(why.clone());
        }
        let caps = self.peer.peer_info().map(|i| i.capabilities.clone());
        let declared = match capability {
            "elicitation" => caps.as_ref().is_some_and(|c| {
                c.elicitation
                    .as_ref()
                    .is_some_and(|e| e.form.is_some() || e.url.is_none())
            }),
            "sampling" => caps.as_ref().is_some_and(|c| c.sampling.is_some()),
            _ => caps.as_ref().is_some_and(|c| c.roots.is_some()),
        };
        if declared {
            Ok(())
        } else {
            Err(format!(
                "the MCP client did not declare the `{capability}` capability{}, so it cannot be asked",
                if capability == "elicitation" {
                    " (form mode)"
                } else {
                    ""
                }
            ))
        }
    }

    /// Sends `method` with `params` to the client, on the call's stream.
    fn ask(&self, method: &'static str, params: Value) -> Answer<Result<ClientResult, Refusal>> {
        let peer = self.peer.clone();
        let origin = self.request.clone();
        Box::pin(async move {
            let mut request: ServerRequest =
                serde_json::from_value(json!({"method": method, "params": params}))
                    .map_err(|e| format!("cannot ask the client ({method}): {e}"))?;
            request
                .extensions_mut()
                .insert(OriginatingRequestId(origin));
            peer.send_request(request)
                .await
                .map_err(|e| format!("the MCP client did not answer {method}: {e}"))
        })
    }

    /// A form with one yes-or-no field, `field`.
    fn yes_or_no(&self, message: String, field: &'static str) -> Answer<Result<bool, Refusal>> {
        if let Err(why) = self.can("elicitation") {
            return Box::pin(std::future::ready(Err(why)));
        }
        let asking = self.ask(
            "elicitation/create",
            json!({"mode": "form", "message": message, "requestedSchema": {
                "type": "object", "required": [field],
                "properties": {field: {"type": "boolean", "title": "Yes?", "default": false}}}}),
        );
        Box::pin(async move {
            let answer = elicited(asking.await?)?;
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

/// What a person approves: the tool and its arguments, without the values of sensitive
/// inputs.
fn approval_question(request: &ApprovalRequest) -> String {
    let mut shown = request.args.clone();
    if let Value::Object(m) = &mut shown {
        for input in request.tool.spec().inputs.iter().filter(|i| i.sensitive) {
            if let Some(v) = m.get_mut(&input.name) {
                *v = Value::String("[sensitive]".into());
            }
        }
    }
    format!(
        "Allow the tool `{}` to run with these arguments?\n{shown}",
        request.tool.name()
    )
}

fn elicited(result: ClientResult) -> Result<Elicited, Refusal> {
    let ClientResult::ElicitResult(r) = result else {
        return Err("the MCP client answered elicitation/create with something else".into());
    };
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

impl Host for McpAsker {
    fn approve(&self, request: ApprovalRequest) -> Answer<Decision> {
        let asking = self.yes_or_no(approval_question(&request), "approve");
        Box::pin(async move {
            match asking.await {
                Ok(true) => Decision::Approve,
                Ok(false) => Decision::deny("the user did not approve it"),
                Err(why) => Decision::deny(format!("it needs approval, and {why}")),
            }
        })
    }

    fn confirm(&self, request: ConfirmRequest) -> Answer<Result<bool, Refusal>> {
        self.yes_or_no(request.message, "confirm")
    }

    fn elicit(&self, request: ElicitRequest) -> Answer<Result<Elicited, Refusal>> {
        if let Err(why) = self.can("elicitation") {
            return Box::pin(std::future::ready(Err(why)));
        }
        let asking = self.ask(
            "elicitation/create",
            json!({"mode": "form", "message": request.message, "requestedSchema": request.schema}),
        );
        Box::pin(async move { elicited(asking.await?) })
    }

    fn sample(&self, request: SampleRequest) -> Answer<Result<Value, Refusal>> {
        if let Err(why) = self.can("sampling") {
            return Box::pin(std::future::ready(Err(why)));
        }
        let asking = self.ask(
            "sampling/createMessage",
            toolbind::host::sample_params(request.params),
        );
        Box::pin(async move {
            match asking.await? {
                r @ ClientResult::CreateMessageResult(_) => serde_json::to_value(r)
                    .map_err(|e| format!("the client's sample cannot be read: {e}")),
                _ => {
                    Err("the MCP client answered sampling/createMessage with something else".into())
                }
            }
        })
    }

    fn roots(&self, _asker: Asker) -> Answer<Result<Vec<Root>, Refusal>> {
        if let Err(why) = self.can("roots") {
            return Box::pin(std::future::ready(Err(why)));
        }
        let asking = self.ask("roots/list", Value::Null);
        Box::pin(async move {
            match asking.await? {
                ClientResult::ListRootsResult(r) => Ok(r
                    .roots
                    .into_iter()
                    .map(|root| Root::new(root.uri, root.name))
                    .collect()),
                _ => Err("the MCP client answered roots/list with something else".into()),
            }
        })
    }

    fn notify(&self, notice: Notice) {
        let Ok(level) = serde_json::from_value::<LoggingLevel>(Value::String(notice.level)) else {
            return;
        };
        #[allow(deprecated)]
        if self.logger.enabled(level, self.level) {
            self.logger.log(
                &self.peer,
                level,
                notice.asker.tool.name(),
                Value::String(notice.text),
            );
        }
    }
}

/// The host of a task's call: its questions wait in the task for the client, which sees
/// them as `inputRequests` in `tasks/get` (status `input_required`) and answers with
/// `tasks/update` (SEP-2663); a cancel or the TTL fails them.
pub(crate) struct TaskQuestions {
    pub tasks: Arc<super::tasks::Tasks>,
    pub id: String,
}

impl TaskQuestions {
    /// Puts `method` with `params` in the task and waits for the client's result.
    fn ask(&self, method: &str, params: Value) -> Answer<Result<Value, Refusal>> {
        let waiting = self
            .tasks
            .ask(&self.id, json!({"method": method, "params": params}));
        Box::pin(async move {
            let mut question = waiting?;
            (&mut question.answer).await.map_err(|_| {
                "the task was cancelled or expired before the client answered".to_owned()
            })
        })
    }

    fn form(&self, message: String, schema: Value) -> Answer<Result<Elicited, Refusal>> {
        let asking = self.ask(
            "elicitation/create",
            json!({"mode": "form", "message": message, "requestedSchema": schema}),
        );
        Box::pin(async move {
            let answer = asking.await?;
            let result: rmcp::model::ElicitResult = serde_json::from_value(answer)
                .map_err(|e| format!("the client's answer is not an elicitation result: {e}"))?;
            elicited(ClientResult::ElicitResult(result))
        })
    }

    fn yes_or_no(&self, message: String, field: &'static str) -> Answer<Result<bool, Refusal>> {
        let asking = self.form(
            message,
            json!({"type": "object", "required": [field],
                "properties": {field: {"type": "boolean", "title": "Yes?", "default": false}}}),
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

impl Host for TaskQuestions {
    fn approve(&self, request: ApprovalRequest) -> Answer<Decision> {
        let asking = self.yes_or_no(approval_question(&request), "approve");
        Box::pin(async move {
            match asking.await {
                Ok(true) => Decision::Approve,
                Ok(false) => Decision::deny("the user did not approve it"),
                Err(why) => Decision::deny(format!("it needs approval, and {why}")),
            }
        })
    }

    fn confirm(&self, request: ConfirmRequest) -> Answer<Result<bool, Refusal>> {
        self.yes_or_no(request.message, "confirm")
    }

    fn elicit(&self, request: ElicitRequest) -> Answer<Result<Elicited, Refusal>> {
        self.form(request.message, request.schema)
    }

    fn sample(&self, request: SampleRequest) -> Answer<Result<Value, Refusal>> {
        self.ask(
            "sampling/createMessage",
            toolbind::host::sample_params(request.params),
        )
    }

    fn roots(&self, _asker: Asker) -> Answer<Result<Vec<Root>, Refusal>> {
        let asking = self.ask("roots/list", json!({}));
        Box::pin(async move {
            let answer = asking.await?;
            let roots = answer["roots"].as_array().cloned().unwrap_or_default();
            Ok(roots
                .iter()
                .filter_map(|r| {
                    Some(Root::new(
                        r["uri"].as_str()?,
                        r["name"].as_str().map(str::to_owned),
                    ))
                })
                .collect())
        })
    }
}
