//! The one bounded wait for the host ("ask, give up after the ask timeout or a cancel"),
//! and what goes through it: a call's approval, a tool's or a server's question.

use std::future::Future;
use std::time::Duration;

use serde_json::Value;

use super::{
    Answer, ApprovalRequest, Asker, ConfirmRequest, Decision, ElicitAction, ElicitRequest, Notice,
    Question, Refusal, SampleRequest, SharedHost, form, shorten,
};
use crate::ToolInfo;
use crate::cancel::CancelToken;
use crate::result::{Content, StopReason, ToolResult};

/// Why the host's answer did not come.
#[derive(Debug)]
pub(crate) enum Unanswered {
    /// Not within the wait's bound.
    TimedOut(Duration),
    /// The call was cancelled while it waited.
    Cancelled,
    /// The host panicked (its message, when it gave one).
    Panicked(Option<String>),
    /// The host's task ended otherwise.
    Failed(String),
}

/// Waits for `asking`, run in a task of its own (a host that panics fails this wait and
/// nothing else; aborted when this future is dropped, so the host's request does not
/// outlive what asked), for at most `within` or until `cancelled`.
pub(crate) async fn ask_within<T: Send + 'static>(
    asking: impl Future<Output = T> + Send + 'static,
    within: Duration,
    cancelled: impl Future<Output = ()>,
) -> Result<T, Unanswered> {
    let mut task = AbortOnDrop(tokio::spawn(asking));
    tokio::select! {
        r = &mut task.0 => r.map_err(|e| if e.is_panic() {
            let panic = e.into_panic();
            Unanswered::Panicked(
                panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned()),
            )
        } else {
            Unanswered::Failed(e.to_string())
        }),
        () = tokio::time::sleep(within) => Err(Unanswered::TimedOut(within)),
        () = cancelled => Err(Unanswered::Cancelled),
    }
}

/// Who a call's approval is asked of, for which call, and for how long.
pub(crate) struct Approver<'a> {
    /// The call's host, else the runtime's.
    pub host: Option<&'a SharedHost>,
    /// The call's id.
    pub tool_call_id: &'a str,
    /// The call's cancel token: a cancelled call stops waiting at once.
    pub cancel: &'a CancelToken,
    /// [`RuntimeConfig::ask_timeout`](crate::runtime::RuntimeConfig::ask_timeout).
    pub wait: Duration,
}

/// The call's params once approved, when it needs approval: as they are, or as the host
/// edited them (validated again by `check`). Otherwise the result to report: denied (by
/// the host, by its silence past the ask timeout, by its panic, or for want of a host),
/// cancelled while waiting, or edited into invalid arguments.
pub(crate) async fn approval(
    approver: Approver<'_>,
    tool: &ToolInfo,
    params: serde_json::Map<String, Value>,
    check: impl FnOnce(&str, Value) -> Result<serde_json::Map<String, Value>, ToolResult>,
) -> Result<serde_json::Map<String, Value>, ToolResult> {
    let Approver {
        host,
        tool_call_id,
        cancel,
        wait,
    } = approver;
    let declared = tool.spec().approval.needed(&params);
    let asked = host.is_some_and(|h| h.needs_approval(tool));
    if !declared && !asked {
        return Ok(params);
    }
    let name = tool.name();
    let denied = |why: String| {
        ToolResult::stopped(
            StopReason::Denied,
            format!("tool `{name}` did not run: {why}"),
        )
    };
    let Some(host) = host.cloned() else {
        return Err(denied(format!(
            "it needs approval before it runs (its TOOL.md says `approval: {}`), and this agent has no one to ask (toolbind::RuntimeBuilder::host; `toolbind call --yes` approves)",
            tool.spec().approval.describe()
        )));
    };
    let request = ApprovalRequest {
        tool: tool.clone(),
        tool_call_id: tool_call_id.to_owned(),
        args: Value::Object(params.clone()),
    };
    let decision = match ask_within(host.approve(request), wait, cancel.cancelled()).await {
        Ok(d) => d,
        Err(Unanswered::Panicked(message)) => {
            let message = message.unwrap_or_else(|| "a panic without a message".into());
            return Err(denied(format!("the approval policy panicked: {message}")));
        }
        Err(Unanswered::Failed(e)) => {
            return Err(denied(format!("the approval was not given: {e}")));
        }
        Err(Unanswered::TimedOut(wait)) => {
            return Err(denied(format!(
                "its approval did not come within {} s (RuntimeConfig::ask_timeout)",
                wait.as_secs_f64()
            )));
        }
        Err(Unanswered::Cancelled) => {
            return Err(ToolResult::stopped(
                StopReason::Cancelled,
                format!("tool `{name}` was cancelled while it waited for approval"),
            ));
        }
    };
    match decision {
        Decision::Approve => Ok(params),
        Decision::Deny { reason } => Err(denied(format!("the call was denied: {reason}"))),
        Decision::ApproveWith { args } => match check(name, args) {
            Ok(valid) => Ok(valid),
            Err(mut bad) => {
                if let Some(Content::Text { text }) = bad.content.first_mut() {
                    text.insert_str(0, "the arguments the approver edited are invalid: ");
                }
                Err(bad)
            }
        },
    }
}

/// Answers `question`, asked by `asker`, from `host`, within `timeout`: the value the
/// tool's promise resolves to (or the server's result), or why it got none.
pub(crate) async fn answer(
    host: Option<SharedHost>,
    asker: Asker,
    question: Question,
    timeout: Duration,
) -> Result<Value, Refusal> {
    let kind = question.kind();
    let Some(host) = host else {
        return Err(Refusal::NoHost {
            question: kind.to_owned(),
        });
    };
    let asking: Answer<Result<Value, Refusal>> = match question {
        Question::Confirm { message } => {
            let f = host.confirm(ConfirmRequest { asker, message });
            Box::pin(async move { f.await.map(Value::Bool) })
        }
        Question::Elicit { message, schema } => {
            let f = host.elicit(ElicitRequest {
                asker,
                message,
                schema: schema.clone(),
            });
            Box::pin(async move {
                let answer = f.await?;
                let mut out = serde_json::Map::new();
                out.insert(
                    "action".into(),
                    Value::String(answer.action.as_str().into()),
                );
                if answer.action == ElicitAction::Accept {
                    let content = answer.content.unwrap_or_default();
                    form::fits(&schema, &content).map_err(Refusal::Unfit)?;
                    out.insert("content".into(), Value::Object(content));
                }
                Ok(Value::Object(out))
            })
        }
        Question::Sample { params } => Box::pin(host.sample(SampleRequest { asker, params })),
        Question::Roots => {
            let f = host.roots(asker);
            Box::pin(async move {
                let roots = f.await?;
                Ok(Value::Array(
                    roots
                        .into_iter()
                        .map(|r| {
                            let mut o = serde_json::Map::new();
                            o.insert("uri".into(), Value::String(r.uri));
                            if let Some(n) = r.name {
                                o.insert("name".into(), Value::String(n));
                            }
                            Value::Object(o)
                        })
                        .collect(),
                ))
            })
        }
    };
    // A cancelled call drops this future: its question is withdrawn with it.
    let answer = match ask_within(asking, timeout, std::future::pending()).await {
        Ok(answer) => answer,
        Err(Unanswered::Panicked(_)) => Err(Refusal::HostFailed {
            question: kind,
            why: None,
        }),
        Err(Unanswered::Failed(e)) => Err(Refusal::HostFailed {
            question: kind,
            why: Some(e),
        }),
        Err(Unanswered::TimedOut(after)) => Err(Refusal::TimedOut {
            question: kind,
            after,
        }),
        Err(Unanswered::Cancelled) => Err(Refusal::Stopping),
    };
    // A refusal goes back to the tool as a line: bounded, whatever the host said.
    answer.map_err(|why| why.bounded(MAX_REFUSAL))
}

/// The longest refusal sent back to a tool, in characters.
const MAX_REFUSAL: usize = 1000;

/// A task aborted when dropped.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The log levels `ctx.notify` takes: MCP's (RFC 5424's, lower case), least severe first.
pub const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// `ctx.notify(text, level)`: to the host, which (through [`redacting`](super::redacting))
/// has it redacted and a DEBUG `tracing` event emitted. An unknown level is `info`; the
/// text is cut to 4,096 characters. Without a host, nothing: unredacted text goes nowhere.
pub(crate) fn notify(host: Option<&SharedHost>, asker: Asker, level: &str, text: String) {
    let level = if LEVELS.contains(&level) {
        level
    } else {
        "info"
    };
    if let Some(host) = host {
        host.notify(Notice {
            asker,
            level: level.to_owned(),
            text: shorten(&text, 4096),
        });
    }
}
