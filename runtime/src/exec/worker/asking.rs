//! A call's questions on a worker (`ctx.confirm`, `ctx.elicit`, ...): each answered by the
//! host in a task of its own, within the bounds a tool may ask, the call's timeout standing
//! still while any is open.

use std::time::Duration;

use serde_json::Value;
use tokio::task::JoinSet;

use super::super::stop::Stopper;
use crate::executor::ExecCall;
use crate::host::{Asker, MAX_QUESTIONS, Question, Refusal, SharedHost};

/// How many ask timeouts' worth a call's timeout may stand still in all while it waits
/// for answers; past that, waiting counts.
const PAUSE_BUDGET: u32 = 3;
/// The most questions one call may ask in all; one more is a protocol error (each answer
/// is a line the runtime writes to the tool: a tool must not make it write without end).
const MAX_ASKS: usize = 1000;

/// A question as the reader parsed it from the harness's `ask` line.
#[derive(Debug)]
pub(super) struct Asked {
    /// Its number in the call.
    pub ask: u64,
    /// Its kind, as the tool named it.
    pub kind: String,
    /// Its name, when the tool gave one; or why that name is refused.
    pub key: Result<Option<String>, Refusal>,
    /// The question; or why it cannot be asked.
    pub question: Result<Question, Refusal>,
}

/// The tool asked past the bounds the harness holds to: it is not a harness.
#[derive(Debug)]
pub(super) struct TooMany;

impl std::fmt::Display for TooMany {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "protocol error: the tool asked more than {MAX_QUESTIONS} questions at once, or {MAX_ASKS} in one call"
        )
    }
}

/// One call's questions.
pub(super) struct Questions {
    open: JoinSet<(u64, Result<Value, Refusal>)>,
    asked: usize,
    /// `asked` when the tool last said it waits: a repeat with no new question is
    /// nothing new (and must not cost a catch-up).
    waited_after: usize,
    asker: Asker,
    host: Option<SharedHost>,
    wait: Duration,
    /// The call's span: the host's notices and waits are told in it.
    span: tracing::Span,
}

impl Questions {
    pub(super) fn new(call: &ExecCall<'_>) -> Questions {
        Questions {
            open: JoinSet::new(),
            asked: 0,
            waited_after: 0,
            asker: Asker {
                tool: call.tool.clone(),
                tool_call_id: call.tool_call_id.to_owned(),
                key: None,
            },
            host: call.host.clone(),
            wait: call.ask_timeout,
            // Made without the runtime (no span given): the current one, as before.
            span: if call.span.is_none() {
                tracing::Span::current()
            } else {
                call.span.clone()
            },
        }
    }

    /// The call's stopper: `timeout`, then `grace`, standing still while a question is
    /// open for at most [`PAUSE_BUDGET`] asks' worth in all (a tool must not outrun its
    /// timeout by asking).
    pub(super) fn stopper(&self, timeout: Duration, grace: Duration) -> Stopper {
        Stopper::new(timeout, grace).with_pause_budget(self.wait.saturating_mul(PAUSE_BUDGET))
    }

    pub(super) fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// A question's task ended: `Some` with its number and the answer (or refusal) to
    /// send back; `None` for a task that did not end by itself. Pending while none is open.
    pub(super) async fn answered(&mut self) -> Option<(u64, Result<Value, Refusal>)> {
        match self.open.join_next().await {
            Some(done) => done.ok(),
            None => std::future::pending().await,
        }
    }

    /// Puts `asked` to the host (the call's timeout stands still from the first one open);
    /// `Ok(Some)` is a refusal to send back now, `Err` a tool past the bounds.
    pub(super) fn ask(
        &mut self,
        asked: Asked,
        stopper: &mut Stopper,
    ) -> Result<Option<(u64, Refusal)>, TooMany> {
        self.asked += 1;
        if self.open.len() >= MAX_QUESTIONS || self.asked > MAX_ASKS {
            return Err(TooMany);
        }
        if stopper.ending().is_some() {
            return Ok(Some((asked.ask, Refusal::Stopping)));
        }
        if self.open.is_empty() {
            stopper.pause();
        }
        let (host, mut asker, wait) = (self.host.clone(), self.asker.clone(), self.wait);
        self.open.spawn(async move {
            let Asked {
                ask,
                kind,
                key,
                question,
            } = asked;
            let answer = match (key, host) {
                (Err(why), _) => Err(why),
                (Ok(_), None) => Err(Refusal::NoHost { question: kind }),
                (Ok(key), Some(host)) => {
                    asker.key = key;
                    match question {
                        Ok(q) => crate::host::answer(Some(host), asker, q, wait).await,
                        Err(why) => Err(why),
                    }
                }
            };
            (ask, answer)
        });
        Ok(None)
    }

    /// `ctx.notify(text, level)`.
    pub(super) fn notify(&self, level: &str, text: String) {
        self.span.in_scope(|| {
            crate::host::notify(self.host.as_ref(), self.asker.clone(), level, text);
        });
    }

    /// The tool waits for an answer: the host to tell, who asks and how many questions so
    /// far, when there is news since the last time.
    pub(super) fn waiting(&mut self) -> Option<(SharedHost, Asker, u64)> {
        let host = self
            .host
            .clone()
            .filter(|_| self.asked > self.waited_after)?;
        self.waited_after = self.asked;
        Some((host, self.asker.clone(), self.asked as u64))
    }

    /// `host.waiting(asker, asked)`, told in the call's span.
    pub(super) fn tell_waiting(&self, host: &SharedHost, asker: Asker, asked: u64) {
        self.span.in_scope(|| host.waiting(asker, asked));
    }

    /// The call is being stopped: what it waits for is not answered now.
    pub(super) fn abort_all(&mut self) {
        self.open.abort_all();
    }
}
