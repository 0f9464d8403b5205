//! A tool's progress updates as MCP `notifications/progress` values, which must increase.

use crate::lock::Locked;
use std::sync::{Arc, Mutex};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use toolbind::Progress;

/// The position of one call's progress notifications.
#[derive(Debug, Default)]
pub struct Position {
    /// The last value sent.
    last: Option<f64>,
    /// The tool has reported a position of its own.
    positioned: bool,
}

impl Position {
    /// The `(progress, total, message)` to send for `p`, or `None` to drop it.
    ///
    /// An update with a position sends it (and its total) when it is above the last value
    /// sent; one that goes backwards or stands still is dropped. Until a tool reports a
    /// position, each text-only update counts one up (1, 2, 3, ...); once it has, text-only
    /// updates are dropped, since no increasing value is left to give them.
    pub fn next(&mut self, p: &Progress) -> Option<(f64, Option<f64>, String)> {
        let value = match p.progress {
            Some(v) if self.last.is_none_or(|l| v > l) => {
                self.positioned = true;
                v
            }
            Some(_) => return None,
            None if self.positioned => return None,
            None => self.last.unwrap_or(0.0) + 1.0,
        };
        self.last = Some(value);
        Some((value, p.total, p.text_content()))
    }
}

/// Sends a request's progress notifications (`token`, to `peer`) in order, before its
/// result, and never queues them: the returned sender replaces the latest unsent update,
/// and one task sends whatever is latest when the client is ready for it (a paused client
/// costs one update of memory, not all). The task ends once the sender is dropped and the
/// last update sent. `position` is shared by the requests of one call.
pub(crate) fn forwarder(
    peer: Peer<RoleServer>,
    token: ProgressToken,
    position: Arc<Mutex<Position>>,
) -> (watch::Sender<Option<Progress>>, JoinHandle<()>) {
    let (tx, mut rx) = watch::channel::<Option<Progress>>(None);
    let task = tokio::spawn(async move {
        // After the sender is dropped, `changed` still reports an unseen last value.
        while rx.changed().await.is_ok() {
            let Some(p) = rx.borrow_and_update().clone() else {
                continue;
            };
            let next = position.locked().next(&p);
            let Some((value, total, message)) = next else {
                continue;
            };
            let mut param =
                ProgressNotificationParam::new(token.clone(), value).with_message(message);
            param.total = total;
            if peer.notify_progress(param).await.is_err() {
                break;
            }
        }
    });
    (tx, task)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(progress: f64, total: f64) -> Progress {
        Progress::text(format!("{progress}/{total}")).at(progress, Some(total))
    }

    #[test]
    fn values_only_increase() {
        let mut pos = Position::default();
        assert_eq!(pos.next(&Progress::text("start")).unwrap().0, 1.0);
        assert_eq!(pos.next(&Progress::text("more")).unwrap().0, 2.0);
        assert_eq!(pos.next(&at(1.5, 100.0)), None, "below the counter");
        assert_eq!(
            pos.next(&at(40.0, 100.0)),
            Some((40.0, Some(100.0), "40/100".into()))
        );
        assert_eq!(pos.next(&at(40.0, 100.0)), None, "standing still");
        assert_eq!(pos.next(&at(30.0, 100.0)), None, "backwards");
        assert_eq!(pos.next(&Progress::text("no position")), None);
        assert_eq!(pos.next(&at(100.0, 100.0)).unwrap().0, 100.0);
    }
}
