//! Progress from a tool to the caller's sink: bounded and rate-limited.
//!
//! A tool can report far faster than a caller (a terminal, an MCP client) consumes. Updates
//! are never queued: the producer side keeps one slot per call that the latest update
//! replaces ([`Slot`]), and the consumer side ([`Pump`]) forwards at most one update per
//! interval, always ending with the latest one before the result.

use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::executor::ProgressSink;
use crate::result::Progress;

/// The producer's side of a call's latest-update slot.
pub(crate) type Slot = watch::Sender<Option<Progress>>;

/// A slot and its receiving end.
pub(crate) fn slot() -> (Slot, watch::Receiver<Option<Progress>>) {
    watch::channel(None)
}

/// Forwards the latest update to a sink, at most once per `interval`.
pub(crate) struct Pump<'a> {
    sink: Option<&'a ProgressSink>,
    interval: Duration,
    held: Option<Progress>,
    next: Instant,
}

impl<'a> Pump<'a> {
    pub(crate) fn new(sink: Option<&'a ProgressSink>, interval: Duration) -> Self {
        Pump {
            sink,
            interval,
            held: None,
            next: Instant::now(),
        }
    }

    /// A new update: forwarded now if the interval has passed, else held (replacing any
    /// update held before it).
    pub(crate) fn offer(&mut self, p: Progress) {
        if self.sink.is_none() {
            return;
        }
        if Instant::now() >= self.next {
            self.deliver(p);
        } else {
            self.held = Some(p);
        }
    }

    /// When a held update is due, if one is held.
    pub(crate) fn due(&self) -> Option<Instant> {
        self.held.as_ref().map(|_| self.next)
    }

    /// Forwards the held update, if any (when due, and before the result).
    pub(crate) fn flush(&mut self) {
        if let Some(p) = self.held.take() {
            self.deliver(p);
        }
    }

    /// Takes the update waiting in `rx`, if there is a new one, and offers it.
    pub(crate) fn take_from(&mut self, rx: &mut watch::Receiver<Option<Progress>>) {
        if rx.has_changed().unwrap_or(false)
            && let Some(p) = rx.borrow_and_update().clone()
        {
            self.offer(p);
        }
    }

    fn deliver(&mut self, p: Progress) {
        if let Some(sink) = self.sink {
            sink(p);
        }
        self.next = Instant::now() + self.interval;
    }
}

/// Sleeps until `at`, or forever.
pub(crate) async fn until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
