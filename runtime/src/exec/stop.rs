//! The one owner of how a call ends early: its deadline, and the abort → grace → kill
//! sequence that follows a timeout or a cancellation. bash tools (SIGTERM to the group)
//! and warm workers (an `abort` message) drive the same state machine, so both report the
//! same typed reason and the same words; a call whose future was dropped is ended by
//! the same machine ([`end_abandoned`]), as a cancelled one.

use std::time::Duration;

use tokio::time::Instant;

use crate::result::StopReason;

/// The longest timeout honoured (a year: "never", without overflowing a deadline).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 3600);

/// Why a call is being stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The caller cancelled it.
    Cancelled,
    /// Its timeout passed.
    TimedOut,
}

/// What the executor must do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Ask the tool to stop (its abort signal): the grace period starts.
    Abort(Ending),
    /// The grace period is over: kill the tool's process group.
    Kill(Ending),
}

/// A call's deadline and, once it is being stopped, why and until when.
#[derive(Debug, Clone)]
pub(crate) struct Stopper {
    timeout: Duration,
    grace: Duration,
    deadline: Instant,
    ending: Option<Ending>,
    /// What was left of the timeout when the call paused (waiting for an answer), and
    /// when it paused.
    paused_left: Option<(Duration, Instant)>,
    /// How long the call may still stand still in all.
    pause_budget: Duration,
}

impl Stopper {
    /// A call starting now with `timeout`, given `grace` to stop once asked.
    pub(crate) fn new(timeout: Duration, grace: Duration) -> Self {
        Stopper {
            timeout,
            grace,
            deadline: Instant::now() + timeout,
            ending: None,
            paused_left: None,
            pause_budget: Duration::ZERO,
        }
    }

    /// Lets the timeout stand still for `budget` in all while the call waits for answers
    /// ([`pause`](Self::pause)); none by default.
    pub(crate) fn with_pause_budget(mut self, budget: Duration) -> Self {
        self.pause_budget = budget.min(MAX_TIMEOUT);
        self
    }

    /// The call waits for someone's answer: its timeout stands still until
    /// [`resume`](Self::resume), for what is left of the pause budget (then it runs on).
    /// Nothing once it is being stopped.
    pub(crate) fn pause(&mut self) {
        if self.ending.is_some() || self.paused_left.is_some() || self.pause_budget.is_zero() {
            return;
        }
        let now = Instant::now();
        let left = self.deadline.saturating_duration_since(now);
        self.paused_left = Some((left, now));
        self.deadline = now + self.pause_budget + left;
    }

    /// The answer came: the timeout runs on from where it stood, less what the pause
    /// took past the budget.
    pub(crate) fn resume(&mut self) {
        if let Some((left, since)) = self.paused_left.take() {
            let now = Instant::now();
            let used = now.saturating_duration_since(since);
            let over = used.saturating_sub(self.pause_budget);
            self.pause_budget = self.pause_budget.saturating_sub(used);
            self.deadline = now + left.saturating_sub(over);
        }
    }

    /// When [`expire`](Self::expire) is due: the timeout, then the end of the grace period.
    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Why the call is being stopped, once it is.
    pub(crate) fn ending(&self) -> Option<Ending> {
        self.ending
    }

    /// The caller cancelled: `Some(Abort)` the first time (nothing when the call is
    /// already being stopped).
    pub(crate) fn cancel(&mut self) -> Option<Step> {
        self.begin(Ending::Cancelled)
    }

    /// The deadline passed: abort on timeout, or kill when the grace period is over.
    pub(crate) fn expire(&mut self) -> Step {
        match self.ending {
            None => self
                .begin(Ending::TimedOut)
                .unwrap_or(Step::Kill(Ending::TimedOut)),
            Some(e) => Step::Kill(e),
        }
    }

    fn begin(&mut self, ending: Ending) -> Option<Step> {
        if self.ending.is_some() {
            return None;
        }
        self.ending = Some(ending);
        self.paused_left = None;
        self.deadline = Instant::now() + self.grace;
        Some(Step::Abort(ending))
    }

    /// The typed reason for `ending`.
    pub(crate) fn reason(&self, ending: Ending) -> StopReason {
        match ending {
            Ending::Cancelled => StopReason::Cancelled,
            Ending::TimedOut => StopReason::Timeout {
                after: self.timeout,
            },
        }
    }

    /// `"timed out after 2 s; {how}"` or `"cancelled; {how}"`.
    pub(crate) fn describe(&self, ending: Ending, how: &str) -> String {
        match ending {
            Ending::Cancelled => format!("cancelled; {how}"),
            Ending::TimedOut => format!("timed out after {}; {how}", secs(self.timeout)),
        }
    }

    /// The grace period, in words (`"2 s"`).
    pub(crate) fn grace(&self) -> String {
        secs(self.grace)
    }
}

/// Ends a call whose caller stopped waiting for it (its future was dropped) as a cancelled
/// call ends, through the same state machine: `act(Step::Abort)` now, then
/// `act(Step::Kill)` once the grace period passes, unless `ended` completes first (then
/// its output is returned). Runs in a task of its own: a drop cannot wait.
pub(crate) async fn end_abandoned<T>(
    grace: Duration,
    ended: impl std::future::Future<Output = T>,
    mut act: impl FnMut(Step),
) -> Option<T> {
    let mut stopper = Stopper::new(Duration::ZERO, grace);
    if let Some(step) = stopper.cancel() {
        act(step);
    }
    match tokio::time::timeout_at(stopper.deadline(), ended).await {
        Ok(out) => Some(out),
        Err(_) => {
            act(stopper.expire());
            None
        }
    }
}

/// "5 s", "0.5 s".
pub(crate) fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{} s", s as u64)
    } else {
        format!("{} s", (s * 1000.0).round() / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn timeout_then_grace_then_kill() {
        let mut s = Stopper::new(Duration::from_secs(2), Duration::from_millis(500));
        assert_eq!(s.ending(), None);
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!(s.expire(), Step::Abort(Ending::TimedOut));
        assert_eq!(s.deadline(), Instant::now() + Duration::from_millis(500));
        // A cancel during the grace period changes nothing: the call is already stopping.
        assert_eq!(s.cancel(), None);
        assert_eq!(s.expire(), Step::Kill(Ending::TimedOut));
        assert_eq!(
            s.reason(Ending::TimedOut),
            StopReason::Timeout {
                after: Duration::from_secs(2)
            }
        );
        assert_eq!(
            s.describe(Ending::TimedOut, "killed"),
            "timed out after 2 s; killed"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_abandoned_call_is_aborted_then_killed_after_the_grace_period() {
        let grace = Duration::from_secs(2);
        let mut steps = Vec::new();
        let start = Instant::now();
        let out = end_abandoned(grace, std::future::pending::<()>(), |s| {
            steps.push((s, start.elapsed()))
        })
        .await;
        assert_eq!(out, None);
        assert_eq!(
            steps,
            [
                (Step::Abort(Ending::Cancelled), Duration::ZERO),
                (Step::Kill(Ending::Cancelled), grace)
            ]
        );
        // One that ends within the grace period is not killed.
        let mut steps = Vec::new();
        let ended = tokio::time::sleep(Duration::from_millis(500));
        let out = end_abandoned(
            grace,
            async {
                ended.await;
                7
            },
            |s| steps.push(s),
        )
        .await;
        assert_eq!(out, Some(7));
        assert_eq!(steps, [Step::Abort(Ending::Cancelled)]);
    }

    #[tokio::test(start_paused = true)]
    async fn cancel_starts_the_grace_period() {
        let mut s = Stopper::new(Duration::from_secs(60), Duration::from_secs(2));
        assert_eq!(s.cancel(), Some(Step::Abort(Ending::Cancelled)));
        assert_eq!(s.deadline(), Instant::now() + Duration::from_secs(2));
        assert_eq!(s.expire(), Step::Kill(Ending::Cancelled));
        assert_eq!(s.reason(Ending::Cancelled), StopReason::Cancelled);
        assert_eq!(s.grace(), "2 s");
        assert_eq!(secs(Duration::from_millis(400)), "0.4 s");
    }

    #[tokio::test(start_paused = true)]
    async fn a_pause_stops_the_clock_for_at_most_its_budget() {
        let mut s = Stopper::new(Duration::from_secs(10), Duration::from_secs(2))
            .with_pause_budget(Duration::from_secs(5));
        tokio::time::advance(Duration::from_secs(4)).await;
        s.pause();
        // Waiting 3 s for an answer costs the timeout nothing.
        tokio::time::advance(Duration::from_secs(3)).await;
        s.resume();
        assert_eq!(s.deadline() - Instant::now(), Duration::from_secs(6));
        // The second wait outlasts what is left of the budget (2 s): the rest counts.
        s.pause();
        assert_eq!(s.deadline() - Instant::now(), Duration::from_secs(8));
        tokio::time::advance(Duration::from_secs(5)).await;
        s.resume();
        assert_eq!(s.deadline() - Instant::now(), Duration::from_secs(3));
        // Spent: no more standing still.
        s.pause();
        assert_eq!(s.deadline() - Instant::now(), Duration::from_secs(3));
        // A cancel while paused is a cancel: the grace period, not the pause.
        let mut s = Stopper::new(Duration::from_secs(10), Duration::from_secs(2))
            .with_pause_budget(Duration::from_secs(60));
        s.pause();
        assert!(s.cancel().is_some());
        s.resume();
        assert_eq!(s.deadline() - Instant::now(), Duration::from_secs(2));
    }
}
