//! Progress from a tool to the caller's sink: bounded and rate-limited.
//!
//! A tool can report far faster than a caller (a terminal, an MCP client) consumes. Updates
//! are never queued: each call has one slot that the latest update replaces ([`Slot`]), and the consumer side ([`Pump`]) forwards at most one update per
//! interval, always ending with the latest one before the result.

use std::time::Duration;

use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::executor::ProgressSink;
use crate::result::Progress;

/// A call's latest-update slot: the producer replaces what is there and never waits; the
/// consumer takes it. Shared by both sides.
#[derive(Default)]
pub(crate) struct Slot {
    latest: Mutex<Option<Progress>>,
    ready: Notify,
}

impl Slot {
    pub(crate) fn new() -> Arc<Slot> {
        Arc::new(Slot::default())
    }

    /// Replaces the unsent update, if any, with `p`.
    pub(crate) fn put(&self, p: Progress) {
        *self.latest.lock().unwrap_or_else(|e| e.into_inner()) = Some(p);
        self.ready.notify_one();
    }

    /// The unsent update, if any.
    pub(crate) fn take(&self) -> Option<Progress> {
        self.latest.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Resolves once an update may be waiting (a permit is kept if none is waiting yet).
    pub(crate) async fn ready(&self) {
        self.ready.notified().await;
    }
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

    /// Takes the update waiting in `slot`, if any, and offers it.
    pub(crate) fn take_from(&mut self, slot: &Slot) {
        if let Some(p) = slot.take() {
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
