//! A server's progress notifications, handed to the sink of the call they belong to
//! (held a little when they come before the call's sink is in place).

use super::*;
use crate::lock::Locked;

/// A call's progress key: its connection (rmcp's tokens start again at 0 on each) and
/// token.
pub(super) type ProgressKey = (u64, ProgressToken);

/// Progress sinks by call, and what came before its call's sink was in place.
#[derive(Default)]
pub(super) struct ProgressMap {
    sinks: HashMap<ProgressKey, ProgressSink>,
    /// A call's first updates can arrive before its sink is registered (rmcp assigns the
    /// token while it queues the request): they wait here, at most [`EARLY_PROGRESS`] in
    /// all, the oldest dropped first.
    early: std::collections::VecDeque<(ProgressKey, Progress)>,
}

/// The most progress updates kept for calls whose sink is not registered yet.
pub(super) const EARLY_PROGRESS: usize = 1024;

pub(super) fn progress_of(params: &ProgressNotificationParam) -> Option<Progress> {
    if !params.progress.is_finite() {
        return None;
    }
    let content = params
        .message
        .clone()
        .map(Content::text)
        .into_iter()
        .collect();
    let mut p = Progress::new(content);
    p.progress = Some(params.progress.max(0.0));
    p.total = params.total.filter(|t| t.is_finite());
    Some(p)
}

/// Calls `sink`; it runs on the connection's reader, and a panic in it must not end the
/// connection of every call.
pub(super) fn hand(sink: &ProgressSink, p: Progress) {
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink(p)));
}

impl Shared {
    /// Hands a progress notification to the call it belongs to, in order (the map stays
    /// locked while the sink runs: sinks must return quickly, as `ProgressSink` says).
    pub(super) fn deliver(&self, generation: u64, params: &ProgressNotificationParam) {
        let Some(p) = progress_of(params) else {
            return;
        };
        let key = (generation, params.progress_token.clone());
        let mut map = self.progress.locked();
        match map.sinks.get(&key) {
            Some(sink) => hand(sink, p),
            None => {
                if map.early.len() == EARLY_PROGRESS {
                    map.early.pop_front();
                }
                map.early.push_back((key, p));
            }
        }
    }

    /// Registers a call's sink, first handing it what came early.
    pub(super) fn register(&self, key: ProgressKey, sink: ProgressSink) {
        let mut map = self.progress.locked();
        let early = std::mem::take(&mut map.early);
        for (k, p) in early {
            if k == key {
                hand(&sink, p);
            } else {
                map.early.push_back((k, p));
            }
        }
        map.sinks.insert(key, sink);
    }
}

/// The transport as the client sees it, progress taken out on the way in: handed to its
/// call right here, in the order the server sent it and so before the call's result
/// (rmcp runs each notification's handler as a task of its own, in no order). Log
/// messages, which toolbind does not show, go no further either: a server flooding
/// notifications costs a parse each, not a task each.
///
/// It also closes a gap in rmcp's start-up: rmcp offers 2026-07-28 with `server/discover`
/// and, after 10 s without an answer, falls back to `initialize`; a server that starts
/// slowly (an `npx` server downloading its package) then answers the discover request
/// late, and rmcp takes that answer for a wrong answer to `initialize`. After the fallback,
/// the discover request's late answer is dropped here.
pub(super) struct Observed<T> {
    inner: T,
    shared: Arc<Shared>,
    generation: u64,
    discover: Option<RequestId>,
    fell_back: bool,
}

impl<T> Observed<T> {
    pub(super) fn new(inner: T, shared: Arc<Shared>, generation: u64) -> Self {
        Observed {
            inner,
            shared,
            generation,
            discover: None,
            fell_back: false,
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Observed<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(r) = &item {
            match &r.request {
                ClientRequest::DiscoverRequest(_) => self.discover = Some(r.id.clone()),
                ClientRequest::InitializeRequest(_) => self.fell_back = self.discover.is_some(),
                _ => {}
            }
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let msg = self.inner.receive().await?;
            if self.fell_back {
                let late = match &msg {
                    JsonRpcMessage::Response(r) => self.discover.as_ref() == Some(&r.id),
                    JsonRpcMessage::Error(e) => {
                        e.id.is_some() && e.id.as_ref() == self.discover.as_ref()
                    }
                    _ => false,
                };
                if late {
                    continue;
                }
            }
            if let JsonRpcMessage::Notification(n) = &msg {
                match &n.notification {
                    ServerNotification::ProgressNotification(p) => {
                        self.shared.deliver(self.generation, &p.params);
                        continue;
                    }
                    ServerNotification::LoggingMessageNotification(_) => continue,
                    _ => {}
                }
            }
            return Some(msg);
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// Removes a call's progress sink when the call ends.
pub(super) struct ProgressGuard {
    pub(super) shared: Arc<Shared>,
    pub(super) key: ProgressKey,
}

impl Drop for ProgressGuard {
    fn drop(&mut self) {
        self.shared.progress.locked().sinks.remove(&self.key);
    }
}
