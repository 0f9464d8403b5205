//! One call's life on a worker: sent, its questions and notices handled, its progress
//! pumped, and its end (by itself, or stopped: abort, grace, kill).

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

use super::asking::Questions;
use super::{CallEnd, CallGuard, Dead, Event, Pending, Worker};
use crate::exec::protocol;
use crate::exec::pump::{self, Pump};
use crate::exec::stop::{Ending, Step, Stopper};
use crate::executor::ExecCall;
use crate::host::Refusal;
use crate::result::{StopReason, ToolResult};

/// What a call's event handling works on besides its questions and stopper.
struct OnCall<'a, 'c> {
    id: u64,
    call: &'a ExecCall<'c>,
    pump: &'a mut Pump<'c>,
    updates: &'a pump::Slot,
}

impl Worker {
    /// Runs one call on this worker: `call` within `timeout` (resolved by the executor), an
    /// abort that is not honoured within `grace` killing the worker.
    pub(crate) async fn call(
        &self,
        call: &ExecCall<'_>,
        timeout: Duration,
        grace: Duration,
        secrets: &[String],
    ) -> CallEnd {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        // Room for the end, a few notices and every question the call may have open.
        let (tx, mut rx) = mpsc::channel(8 + crate::host::MAX_QUESTIONS);
        let updates = pump::Slot::new();
        let mut pump = Pump::new(call.progress.as_ref(), self.progress_interval);
        let pending = Pending {
            done: tx,
            progress: updates.clone(),
            log: call.log.clone(),
            tool_call_id: call.tool_call_id.to_owned(),
        };
        let mut guard = match self.send_call(id, pending, call, grace, secrets) {
            Ok(guard) => guard,
            Err(dead) => return CallEnd::NotStarted(dead.reason),
        };
        // The questions the tool asked (`ctx`), each answered by the host in a task of its
        // own; the call's timeout stands still while any is open.
        let mut questions = Questions::new(call);
        let mut stopper = questions.stopper(timeout, grace);
        loop {
            // The tool's messages can keep `rx` ready without a break (a flood of
            // notices): the biased select would then never reach the cancel or the
            // deadline below, and the tool would outrun both. They are looked at first.
            let overdue = tokio::time::Instant::now() >= stopper.deadline();
            let cancelled = stopper.ending().is_none() && call.cancel.is_cancelled();
            let step = tokio::select! {
                biased;
                () = std::future::ready(()), if overdue => Some(stopper.expire()),
                () = std::future::ready(()), if cancelled => stopper.cancel(),
                _ = updates.ready() => { pump.take_from(&updates); None }
                _ = pump::until(pump.due()) => { pump.tick(); None }
                answered = questions.answered(), if !questions.is_empty() => {
                    if let Some((ask, answer)) = answered {
                        self.answer(id, ask, answer);
                    }
                    if questions.is_empty() {
                        stopper.resume();
                    }
                    None
                }
                event = rx.recv() => {
                    let mut on = OnCall { id, call, pump: &mut pump, updates: &updates };
                    match self.on_event(event, &mut on, &mut questions, &mut stopper).await {
                        Some(end) => {
                            guard.finished = true;
                            return end;
                        }
                        None => continue,
                    }
                }
                _ = call.cancel.cancelled(), if stopper.ending().is_none() => stopper.cancel(),
                _ = tokio::time::sleep_until(stopper.deadline()) => Some(stopper.expire()),
            };
            match step {
                // A worker's abort signal: the harness fires the call's AbortSignal (and
                // rejects what its ctx waits for: the questions are not answered now).
                Some(Step::Abort(_)) => {
                    questions.abort_all();
                    self.lines.send(protocol::abort_line(id));
                }
                Some(Step::Kill(ending)) => {
                    guard.finished = true;
                    return self
                        .kill_unstopped(&stopper, ending, call.tool_call_id)
                        .await;
                }
                None => {}
            }
        }
    }

    /// Puts call `id` in flight and sends it to the harness: the guard that takes it out
    /// of flight (and aborts it when the call's future is dropped), or the worker's death
    /// when it was dead already (nothing is sent).
    fn send_call(
        &self,
        id: u64,
        pending: Pending,
        call: &ExecCall<'_>,
        grace: Duration,
        secrets: &[String],
    ) -> Result<CallGuard<'_>, Dead> {
        self.enlist(id, pending, secrets)?;
        if let Some(j) = &self.jail {
            // Each call gets the whole CPU budget, not what the worker's past calls left.
            j.rearm_cpu();
        }
        let guard = CallGuard {
            worker: self,
            id,
            finished: false,
            grace,
        };
        self.lines.send(protocol::call_line(
            id,
            call.tool_call_id,
            &call.params,
            call.trace.as_ref(),
        ));
        Ok(guard)
    }

    /// Sends the answer (or refusal) to question `ask` of call `id`.
    fn answer(&self, id: u64, ask: u64, answer: Result<Value, Refusal>) {
        let answer = answer.map_err(|why| why.to_string());
        self.lines.send(protocol::answer_line(id, ask, answer));
    }

    /// What the reader handed call `on.id`: a question, a notice or its waiting are handled
    /// here (`None`: the call goes on); anything else ends the call.
    async fn on_event(
        &self,
        event: Option<Event>,
        on: &mut OnCall<'_, '_>,
        questions: &mut Questions,
        stopper: &mut Stopper,
    ) -> Option<CallEnd> {
        match event {
            Some(Event::Ask(asked)) => match questions.ask(asked, stopper) {
                Ok(None) => None,
                Ok(Some((ask, refusal))) => {
                    self.answer(on.id, ask, Err(refusal));
                    None
                }
                Err(too_many) => {
                    let why = too_many.to_string();
                    self.kill_for(why.clone());
                    Some(CallEnd::Done(ToolResult::stopped(
                        StopReason::ProtocolError,
                        why,
                    )))
                }
            },
            Some(Event::Notify { level, text }) => {
                questions.notify(&level, text);
                None
            }
            Some(Event::Waiting) => {
                if let Some((host, asker, asked)) = questions.waiting() {
                    // What the tool reported before it waits goes first: a host may answer
                    // its request with the questions now (MCP 2026-07-28), and what comes
                    // after goes elsewhere.
                    on.pump.take_from(on.updates);
                    on.pump.finish();
                    if on.call.log.is_some() {
                        self.shared.stderr_caught_up().await;
                    }
                    questions.tell_waiting(&host, asker, asked);
                }
                None
            }
            event => {
                if let Some(Event::Done(_)) = &event {
                    // The latest update goes out before the result.
                    on.pump.take_from(on.updates);
                    on.pump.finish();
                }
                Some(call_end(event, stopper))
            }
        }
    }

    /// Ends a call that ignored its abort signal for the whole grace period: the worker's
    /// process group is killed (the other calls in flight on it learn why), and its end is
    /// waited for a little.
    async fn kill_unstopped(
        &self,
        stopper: &Stopper,
        ending: Ending,
        tool_call_id: &str,
    ) -> CallEnd {
        self.kill_for(format!(
            "the tool's worker process was restarted: another call (`{tool_call_id}`) ignored its abort signal for {} and had to be killed, and this call ran in the same process; calling again starts a fresh worker (tools that ignore abort signals are better as `worker: oneshot`)",
            stopper.grace()
        ));
        self.wait_closed(Duration::from_secs(2)).await;
        let how = format!(
            "the tool did not stop within {} of its abort signal, so its process group was killed",
            stopper.grace()
        );
        CallEnd::Done(ToolResult::stopped(
            stopper.reason(ending),
            stopper.describe(ending, &how),
        ))
    }
}

/// How a call ends on the event the reader (or its dropped channel) gave it, given how
/// `stopper` was already stopping it.
fn call_end(event: Option<Event>, stopper: &Stopper) -> CallEnd {
    match event {
        Some(Event::Done(result)) => CallEnd::Done(match stopper.ending() {
            Some(e @ Ending::TimedOut) => ToolResult::stopped(
                stopper.reason(e),
                stopper.describe(e, "the tool stopped after its abort signal"),
            ),
            // The tool gave up when its signal fired: the call was cancelled.
            Some(e @ Ending::Cancelled) if result.is_error => result.with_stop(stopper.reason(e)),
            _ => result,
        }),
        Some(Event::Died {
            reason,
            others,
            named,
            why,
        }) => {
            if others == 0 || stopper.ending().is_some() {
                return CallEnd::Done(ToolResult::stopped(why, reason));
            }
            CallEnd::NeighbourBroke(ToolResult::stopped(
                why,
                if named {
                    reason
                } else {
                    format!(
                        "a neighbouring call may have broken the worker process this call was running in ({others} other call(s) were in flight on it): {reason}"
                    )
                },
            ))
        }
        Some(Event::Prepared(_)) => CallEnd::Done(ToolResult::stopped(
            StopReason::ProtocolError,
            "protocol error: the harness answered a call with `prepared`",
        )),
        // Handled by the call's loop, never an end.
        Some(Event::Ask(_) | Event::Notify { .. } | Event::Waiting) => {
            CallEnd::Done(ToolResult::stopped(
                StopReason::ProtocolError,
                "internal error: a question was taken for the call's end",
            ))
        }
        None => CallEnd::Done(ToolResult::stopped(
            StopReason::Crashed,
            "internal error: the worker dropped the call",
        )),
    }
}
