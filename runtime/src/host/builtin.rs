//! The hosts the runtime brings: [`policy`] (approvals from a closure) and the redacting
//! wrapper every call's host is seen through.

use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use super::*;
use crate::tool::ToolInfo;

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

/// A tool's notice as a DEBUG `tracing` event (target `toolbind::tool`): the host has it
/// already (a CLI would print it twice); a subscriber that wants every notice turns the
/// target on.
fn trace_notice(notice: &Notice) {
    tracing::debug!(
        target: "toolbind::tool",
        tool = notice.asker.tool.name(),
        level = notice.level.as_str(),
        "{}",
        notice.text
    );
}

/// `host`, with what the tool says to it (a question's message, a notice's text)
/// redacted of the call's sensitive values: they reach a person's screen or a log.
pub(crate) fn redacting(host: SharedHost, redactor: &crate::secret::Redactor) -> SharedHost {
    Arc::new(Redacting {
        inner: host,
        redactor: redactor.clone(),
    })
}

struct Redacting {
    inner: SharedHost,
    redactor: crate::secret::Redactor,
}

impl Redacting {
    /// Every string in `value`, redacted (a form's titles and choices, a sample's
    /// messages and system prompt).
    fn redact_strings(&self, value: &mut Value) {
        match value {
            Value::String(s) => *s = self.redactor.text(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_strings(v)),
            Value::Object(map) => map.values_mut().for_each(|v| self.redact_strings(v)),
            _ => {}
        }
    }
}

impl Host for Redacting {
    fn needs_approval(&self, tool: &ToolInfo) -> bool {
        self.inner.needs_approval(tool)
    }
    fn approve(&self, request: ApprovalRequest) -> Answer<Decision> {
        self.inner.approve(request)
    }
    fn confirm(&self, mut request: ConfirmRequest) -> Answer<Result<bool, Refusal>> {
        request.message = self.redactor.text(&request.message);
        self.inner.confirm(request)
    }
    fn elicit(&self, mut request: ElicitRequest) -> Answer<Result<Elicited, Refusal>> {
        request.message = self.redactor.text(&request.message);
        self.redact_strings(&mut request.schema);
        self.inner.elicit(request)
    }
    fn sample(&self, mut request: SampleRequest) -> Answer<Result<Value, Refusal>> {
        self.redact_strings(&mut request.params);
        self.inner.sample(request)
    }
    fn roots(&self, asker: Asker) -> Answer<Result<Vec<Root>, Refusal>> {
        self.inner.roots(asker)
    }
    fn notify(&self, mut notice: Notice) {
        notice.text = self.redactor.text(&notice.text);
        trace_notice(&notice);
        self.inner.notify(notice)
    }
    fn waiting(&self, asker: Asker, asked: u64) {
        self.inner.waiting(asker, asked)
    }
}
