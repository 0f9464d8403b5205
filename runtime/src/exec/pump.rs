//! Progress from a tool to the caller's sink: bounded and rate-limited.
//!
//! A tool can report far faster than a caller (a terminal, an MCP client) consumes. Updates
//! wait in small bounded queues ([`Queue`]: at most [`QUEUE_ITEMS`] updates and
//! [`QUEUE_BYTES`] of text; past that the oldest is dropped, so the latest always stays):
//! one per call between the reader and the call ([`Slot`]), and one in the [`Pump`], which
//! forwards at most one update per interval and everything still queued before the
//! result. A tool reporting now and then loses nothing; a flood is coalesced.

use crate::lock::Locked;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::executor::ProgressSink;
use crate::result::{Content, Progress};

/// The most updates a queue holds.
pub(crate) const QUEUE_ITEMS: usize = 8;
/// The most text a queue holds (a single larger update is still kept, alone).
pub(crate) const QUEUE_BYTES: usize = 1 << 20;

/// A bounded queue of updates: pushing past its bounds drops the oldest.
#[derive(Default)]
pub(crate) struct Queue {
    items: VecDeque<(Progress, usize)>,
    bytes: usize,
}

impl Queue {
    pub(crate) fn push(&mut self, p: Progress) {
        let size: usize = p.content.iter().map(Content::size).sum();
        self.items.push_back((p, size));
        self.bytes += size;
        while self.items.len() > 1 && (self.items.len() > QUEUE_ITEMS || self.bytes > QUEUE_BYTES) {
            if let Some((_, s)) = self.items.pop_front() {
                self.bytes -= s;
            }
        }
    }

    fn pop(&mut self) -> Option<Progress> {
        let (p, s) = self.items.pop_front()?;
        self.bytes -= s;
        Some(p)
    }

    fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// A call's queue between the reader and the call: the producer pushes and never waits;
/// the consumer takes everything. Shared by both sides.
#[derive(Default)]
pub(crate) struct Slot {
    queue: Mutex<Queue>,
    ready: Notify,
}

impl Slot {
    pub(crate) fn new() -> Arc<Slot> {
        Arc::new(Slot::default())
    }

    /// Queues `p` (dropping the oldest update past the bounds).
    pub(crate) fn put(&self, p: Progress) {
        self.queue.locked().push(p);
        self.ready.notify_one();
    }

    fn take_all(&self) -> Queue {
        std::mem::take(&mut *self.queue.locked())
    }

    /// Resolves once an update may be waiting (a permit is kept if none is waiting yet).
    pub(crate) async fn ready(&self) {
        self.ready.notified().await;
    }
}

/// Forwards updates to a sink, at most one per `interval`, in order.
pub(crate) struct Pump<'a> {
    sink: Option<&'a ProgressSink>,
    interval: Duration,
    held: Queue,
    next: Instant,
}

impl<'a> Pump<'a> {
    pub(crate) fn new(sink: Option<&'a ProgressSink>, interval: Duration) -> Self {
        Pump {
            sink,
            interval,
            held: Queue::default(),
            next: Instant::now(),
        }
    }

    /// A new update: forwarded now if the interval has passed and nothing is waiting,
    /// else queued.
    pub(crate) fn offer(&mut self, p: Progress) {
        if self.sink.is_none() {
            return;
        }
        if self.held.is_empty() && Instant::now() >= self.next {
            self.deliver(p);
        } else {
            self.held.push(p);
        }
    }

    /// When the next queued update is due, if one is queued.
    pub(crate) fn due(&self) -> Option<Instant> {
        (!self.held.is_empty()).then_some(self.next)
    }

    /// Forwards the next queued update (when it is due).
    pub(crate) fn tick(&mut self) {
        if let Some(p) = self.held.pop() {
            self.deliver(p);
        }
    }

    /// Forwards every queued update, in order (before the result).
    pub(crate) fn finish(&mut self) {
        while let Some(p) = self.held.pop() {
            self.deliver(p);
        }
    }

    /// Takes the updates waiting in `slot` and offers them in order.
    pub(crate) fn take_from(&mut self, slot: &Slot) {
        let mut queued = slot.take_all();
        while let Some(p) = queued.pop() {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn p(t: &str) -> Progress {
        Progress::text(t)
    }

    #[test]
    fn a_full_queue_drops_the_oldest_and_keeps_the_latest() {
        let mut q = Queue::default();
        for i in 0..20 {
            q.push(p(&i.to_string()));
        }
        let mut got = Vec::new();
        while let Some(x) = q.pop() {
            got.push(x.content[0].as_text().unwrap().to_owned());
        }
        assert_eq!(got, (12..20).map(|i| i.to_string()).collect::<Vec<_>>());
        let mut q = Queue::default();
        q.push(p(&"a".repeat(QUEUE_BYTES)));
        q.push(p("b"));
        q.push(p(&"c".repeat(QUEUE_BYTES + 1)));
        assert_eq!(
            q.items.len(),
            1,
            "over the byte bound only the latest stays"
        );
    }
}
