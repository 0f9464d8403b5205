//! The server's questions (elicitation, sampling, roots): parsed into a
//! [`Question`](crate::host::Question) at this edge, whether sent as requests or in an
//! MCP 2026-07-28 `InputRequiredResult`, and answered by the host.

use super::*;
use crate::lock::Locked;

/// toolbind's client side: `list_changed` noted; the server's questions (elicitation,
/// sampling, roots) put to the agent's host, and the capabilities declared only when
/// the runtime has one.
pub(super) struct Handler {
    pub(super) shared: Arc<Shared>,
    /// The server's name: who asks, when no single call is in flight.
    pub(super) server: String,
}

impl Handler {
    /// The host a question goes to and who asks: the call of the task `task` the
    /// question is tied to (MCP 2025-11-25), else the one call in flight with a host, else
    /// the runtime's host on behalf of the server.
    /// A question tied to a task also carries the token that drops it when the call
    /// stops following the task.
    pub(super) fn asker(&self, task: Option<&str>) -> Option<Asked> {
        let asking = self.shared.asking.locked();
        if let Some(t) = task
            .and_then(|id| asking.tasks.get(id))
            .filter(|t| t.in_result)
        {
            let host = t.host.clone().or_else(|| asking.runtime.clone())?;
            return Some((
                host,
                t.asker.clone(),
                asking.ask_timeout,
                Some(t.ended.clone()),
            ));
        }
        if let [(_, host, asker)] = asking.calls.as_slice() {
            return Some((host.clone(), asker.clone(), asking.ask_timeout, None));
        }
        let host = asking.runtime.clone()?;
        let spec = toolbind_codegen::ToolSpec::process(&self.server, std::path::PathBuf::new());
        Some((
            host,
            crate::host::Asker {
                tool: crate::ToolInfo::from(spec),
                tool_call_id: String::new(),
                key: None,
            },
            asking.ask_timeout,
            None,
        ))
    }

    /// A question of `kind` with `params`, answered by the host (the runtime's checks and
    /// bounds apply), as JSON; an MCP error when nobody answers.
    /// `question` is the server's, parsed at this edge (or why it cannot be asked), of
    /// `kind`.
    /// `task`: the 2025-11-25 task the question is tied to, when it names one.
    pub(super) async fn ask(
        &self,
        kind: &str,
        question: Result<Question, Refusal>,
        task: Option<&str>,
    ) -> Result<Value, rmcp::ErrorData> {
        let Some((host, asker, timeout, ended)) = self.asker(task) else {
            return Err(rmcp::ErrorData::invalid_request(
                format!(
                    "this agent answers no `{kind}` questions (toolbind::RuntimeBuilder::host)"
                ),
                None,
            ));
        };
        // A server asks at most as many questions at once as a tool may.
        {
            let mut asking = self.shared.asking.locked();
            if asking.open >= crate::host::MAX_QUESTIONS {
                return Err(rmcp::ErrorData::invalid_request(
                    format!(
                        "at most {} questions may be open at once",
                        crate::host::MAX_QUESTIONS
                    ),
                    None,
                ));
            }
            asking.open += 1;
        }
        let _open = OpenQuestion(self.shared.clone());
        let _task = task
            .filter(|_| ended.is_some())
            .and_then(|id| TaskQuestion::open(&self.shared, id));
        let answer = match question {
            Ok(q) => {
                let asked = crate::host::answer(Some(host), asker, q.clone(), timeout);
                let answered = match ended {
                    Some(ended) => tokio::select! {
                        a = asked => a,
                        () = ended.cancelled() => Err(Refusal::Stopping),
                    },
                    None => asked.await,
                };
                answered.map(|answer| mcp_answer(&q, answer))
            }
            Err(why) => Err(why),
        };
        answer.map_err(|why| rmcp::ErrorData::internal_error(why.to_string(), None))
    }

    /// A server's request (`method` with `params`), parsed at this edge and answered by
    /// the host; an MCP error when it is not a question this agent answers.
    pub(super) async fn ask_request(
        &self,
        method: &str,
        params: Value,
        meta: &rmcp::model::RequestMetaObject,
    ) -> Result<Value, rmcp::ErrorData> {
        let task = meta
            .get(super::legacy_task::RELATED_TASK)
            .and_then(|t| t.get("taskId"))
            .and_then(Value::as_str);
        let question = match question_of(method, &params) {
            Ok(q) => Ok(q),
            Err(Unasked::Bad(why)) => Err(why),
            Err(Unasked::NotAQuestion(why)) => {
                return Err(rmcp::ErrorData::invalid_request(why, None));
            }
        };
        self.ask(kind_of(method), question, task).await
    }
}

impl ClientHandler for Handler {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.shared.list_changed.store(true, Ordering::SeqCst);
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.client_info = Implementation::new("toolbind", env!("CARGO_PKG_VERSION"));
        let has_host = self.shared.asking.locked().runtime.is_some();
        // Tasks (MCP's tasks extension, 2026-07-28) are followed whether or not a host
        // answers their questions; the questions only with one.
        let mut caps = serde_json::json!({
            "extensions": {rmcp::model::TASKS_EXTENSION_ID: {}}
        });
        if has_host {
            caps["elicitation"] = serde_json::json!({"form": {}});
            caps["sampling"] = serde_json::json!({});
            caps["roots"] = serde_json::json!({});
        }
        if let Ok(caps) = serde_json::from_value(caps) {
            info.capabilities = caps;
        }
        info
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let params = serde_json::to_value(&request).unwrap_or_default();
        let answer = self
            .ask_request("elicitation/create", params, &context.meta)
            .await?;
        serde_json::from_value(answer)
            .map_err(|e| rmcp::ErrorData::internal_error(format!("the host's answer: {e}"), None))
    }

    #[allow(deprecated)] // sampling: rmcp marks it deprecated (SEP-2577)
    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        let params = serde_json::to_value(&params).unwrap_or_default();
        let answer = self
            .ask_request("sampling/createMessage", params, &context.meta)
            .await?;
        serde_json::from_value(answer)
            .map_err(|e| rmcp::ErrorData::internal_error(format!("the host's sample: {e}"), None))
    }

    #[allow(deprecated)] // roots: rmcp marks it deprecated (SEP-2577)
    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        let answer = self.ask("roots", Ok(Question::Roots), None).await?;
        serde_json::from_value(answer)
            .map_err(|e| rmcp::ErrorData::internal_error(format!("the host's roots: {e}"), None))
    }
}

/// Why a server's question is not put to the host.
#[derive(Debug)]
pub(super) enum Unasked {
    /// Not a question this agent answers (a URL-mode form, another method).
    NotAQuestion(String),
    /// A question of a kind it answers, but not one that can be asked (a nested form).
    Bad(Refusal),
}

/// A server's question (`method` with `params`), the same whether the server sent a
/// request (2025-11-25) or put it in an `InputRequiredResult` (2026-07-28).
pub(super) fn question_of(method: &str, params: &Value) -> Result<Question, Unasked> {
    let (kind, params) = match method {
        "elicitation/create" if params["mode"] == "url" => {
            return Err(Unasked::NotAQuestion(
                "this agent answers form elicitations only (not URL mode)".into(),
            ));
        }
        "elicitation/create" => (
            "elicit",
            serde_json::json!({"message": params["message"], "schema": params["requestedSchema"]}),
        ),
        "sampling/createMessage" => ("sample", crate::host::sample_params(params.clone())),
        "roots/list" => ("roots", serde_json::json!({})),
        other => {
            return Err(Unasked::NotAQuestion(format!(
                "`{other}` is not a question this agent answers"
            )));
        }
    };
    Question::parse(kind, params).map_err(Unasked::Bad)
}

/// The host's answer to this question as the MCP result: the roots as a
/// `ListRootsResult`, the rest as they are.
pub(super) fn mcp_answer(question: &Question, answer: Value) -> Value {
    match question {
        Question::Roots => serde_json::json!({ "roots": answer }),
        _ => answer,
    }
}

/// The kind of question a server's `method` asks (`elicit`, `sample`, `roots`), for the
/// words of a refusal.
pub(super) fn kind_of(method: &str) -> &'static str {
    match method {
        "sampling/createMessage" => "sample",
        "roots/list" => "roots",
        _ => "elicit",
    }
}

/// One of the server's questions, open while this lives.
pub(super) struct OpenQuestion(Arc<Shared>);

impl Drop for OpenQuestion {
    fn drop(&mut self) {
        let mut asking = self.0.asking.locked();
        asking.open = asking.open.saturating_sub(1);
    }
}

/// A question of a 2025-11-25 task's, counted open in its [`TaskAsks`] while this lives.
pub(super) struct TaskQuestion(tokio::sync::watch::Sender<usize>);

impl TaskQuestion {
    /// `None` when the task is not one a call follows.
    fn open(shared: &Shared, id: &str) -> Option<TaskQuestion> {
        let open = shared.asking.locked().tasks.get(id)?.open.clone();
        open.send_modify(|n| *n += 1);
        Some(TaskQuestion(open))
    }
}

impl Drop for TaskQuestion {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// What a server's question is put to: the host, who asks, the ask timeout, and for a
/// task's question the token that drops it.
pub(super) type Asked = (
    crate::host::SharedHost,
    crate::host::Asker,
    Duration,
    Option<crate::CancelToken>,
);

/// A 2025-11-25 task in [`Asking::tasks`] while its call follows it; dropped, its
/// questions still open are dropped too.
pub(super) struct FollowedTask {
    shared: Arc<Shared>,
    id: String,
    ended: crate::CancelToken,
}

impl FollowedTask {
    pub(super) fn id(&self) -> &str {
        &self.id
    }

    /// Marks the call's `tasks/result` as outstanding, or no longer.
    pub(super) fn in_result(&self, outstanding: bool) {
        if let Some(t) = self.shared.asking.locked().tasks.get_mut(&self.id) {
            t.in_result = outstanding;
        }
    }
}

impl Drop for FollowedTask {
    fn drop(&mut self) {
        self.ended.cancel();
        self.shared.asking.locked().tasks.remove(&self.id);
    }
}

/// A call in [`Asking::calls`] while it is in flight.
pub(super) struct InFlight {
    pub(super) shared: Arc<Shared>,
    pub(super) key: u64,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut asking = self.shared.asking.locked();
        asking.calls.retain(|(k, _, _)| *k != self.key);
    }
}

impl Connection {
    /// While `call` is in flight, a question of the server's may be its own: its host is
    /// asked (when it has one) until the guard is dropped.
    pub(super) fn asking_for(&self, call: &ExecCall<'_>) -> Option<InFlight> {
        let host = call.host.clone()?;
        let mut asking = self.shared.asking.locked();
        asking.next += 1;
        let key = asking.next;
        asking.calls.push((
            key,
            host,
            crate::host::Asker {
                tool: call.tool.clone(),
                tool_call_id: call.tool_call_id.to_owned(),
                key: None,
            },
        ));
        Some(InFlight {
            shared: self.shared.clone(),
            key,
        })
    }

    /// While the returned guard lives, the questions tied to task `id` (2025-11-25) go
    /// to `call`'s host (else the runtime's) on its behalf; the receiver counts the ones
    /// open.
    /// `None` when another call follows a task of that id already (the server gave two
    /// calls one task).
    pub(super) fn follow_asks(
        &self,
        id: &str,
        call: &ExecCall<'_>,
    ) -> Option<(FollowedTask, tokio::sync::watch::Receiver<usize>)> {
        let (open, seen) = tokio::sync::watch::channel(0);
        let ended = crate::CancelToken::new();
        let asks = TaskAsks {
            host: call.host.clone(),
            asker: crate::host::Asker {
                tool: call.tool.clone(),
                tool_call_id: call.tool_call_id.to_owned(),
                key: None,
            },
            open,
            ended: ended.clone(),
            in_result: false,
        };
        match self.shared.asking.locked().tasks.entry(id.to_owned()) {
            std::collections::hash_map::Entry::Occupied(_) => return None,
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(asks);
            }
        }
        let guard = FollowedTask {
            shared: self.shared.clone(),
            id: id.to_owned(),
            ended,
        };
        Some((guard, seen))
    }

    /// Lets the server's questions reach `host`, answering within `ask_timeout` (set
    /// before the server starts: a host is what makes the client declare the capabilities).
    pub(crate) fn set_host(&self, host: Option<crate::host::SharedHost>, ask_timeout: Duration) {
        let mut asking = self.shared.asking.locked();
        asking.runtime = host;
        asking.ask_timeout = ask_timeout;
    }

    /// Answers an MCP 2026-07-28 `InputRequiredResult` through the call's host (else the
    /// runtime's), question by question, with the runtime's checks: the `inputResponses`
    /// and the `requestState` to send back. A question nobody answers stops the call,
    /// saying why.
    pub(super) async fn fulfil(
        &self,
        name: &str,
        call: &ExecCall<'_>,
        input: rmcp::model::InputRequiredResult,
    ) -> Result<(rmcp::model::InputResponses, Option<String>), ToolResult> {
        let requests = input.input_requests.unwrap_or_default();
        let (host, ask_timeout) = {
            let asking = self.shared.asking.locked();
            (
                call.host.clone().or_else(|| asking.runtime.clone()),
                asking.ask_timeout,
            )
        };
        if requests.len() > crate::host::MAX_QUESTIONS {
            return Err(ToolResult::stopped(
                StopReason::ProtocolError,
                format!(
                    "tool `{name}`: MCP server `{}` asked {} questions at once; at most {} may be open",
                    self.name(),
                    requests.len(),
                    crate::host::MAX_QUESTIONS
                ),
            ));
        }
        // Each question is put to the host at once (a host may show them together);
        // the first one not answered stops the call, and the others are dropped.
        let mut asked = tokio::task::JoinSet::new();
        for (key, request) in requests {
            let request = serde_json::to_value(&request).unwrap_or_default();
            let method = request["method"].as_str().unwrap_or("").to_owned();
            let question = match question_of(&method, &request["params"]) {
                Ok(q) => Ok(q),
                Err(Unasked::Bad(why)) => Err(why),
                Err(Unasked::NotAQuestion(why)) => {
                    return Err(ToolResult::stopped(
                        StopReason::ToolError,
                        format!(
                            "tool `{name}`: MCP server `{}` asked for input this agent does not give: {why}",
                            self.name()
                        ),
                    ));
                }
            };
            let kind = kind_of(&method);
            let asker = crate::host::Asker {
                tool: call.tool.clone(),
                tool_call_id: call.tool_call_id.to_owned(),
                key: crate::host::question_key(kind, Some(Value::String(key.clone())))
                    .ok()
                    .flatten(),
            };
            let host = host.clone();
            asked.spawn(async move {
                let answer = match (question, host) {
                    (_, None) => Err(Refusal::NoHost {
                        question: kind.to_owned(),
                    }),
                    (Err(why), _) => Err(why),
                    (Ok(q), host) => crate::host::answer(host, asker, q.clone(), ask_timeout)
                        .await
                        .map(|a| mcp_answer(&q, a)),
                };
                (key, method, answer)
            });
        }
        let mut responses = rmcp::model::InputResponses::new();
        while let Some(done) = asked.join_next().await {
            let Ok((key, method, answer)) = done else {
                return Err(ToolResult::stopped(
                    StopReason::ToolError,
                    format!(
                        "tool `{name}`: MCP server `{}` asked for input, and the agent's host failed answering it",
                        self.name()
                    ),
                ));
            };
            match answer {
                Ok(response) => {
                    responses.insert(key, response);
                }
                Err(why) => {
                    return Err(ToolResult::stopped(
                        StopReason::ToolError,
                        format!(
                            "tool `{name}`: MCP server `{}` asked for input ({method}), and it was not given: {why}",
                            self.name()
                        ),
                    ));
                }
            }
        }
        Ok((responses, input.request_state))
    }
}
