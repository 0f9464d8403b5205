//! Where a call's progress updates and log lines go: the request it reports to. A plain
//! call has one. An MCP 2026-07-28 call that asks lives over several (its rounds, see
//! [`super::rounds`]), and reports to the request of its round now: the first, then each
//! retry that resumes it, with that request's progress token and log level. Between
//! rounds no request can take it, and it is dropped, as a plain call's is after its
//! result.

// MCP logging: deprecated in rmcp, still used by clients (see `logging`).
#![allow(deprecated)]

use crate::lock::Locked;
use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::model::LoggingLevel;
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use toolbind::{CallOptions, Progress};

use super::logging::{Logger, RequestLevel};
use super::progress::{self, Position};

/// A call's reports, and the request that takes them now, if any.
#[derive(Default)]
pub(crate) struct Listener {
    now: Mutex<Option<Attached>>,
    /// Whether a message went to the request attached now.
    logged: std::sync::atomic::AtomicBool,
    /// Progress values increase over the whole call, whichever request carries them.
    position: Arc<Mutex<Position>>,
}

/// A request a call reports to.
pub(crate) struct Attached {
    peer: Peer<RoleServer>,
    /// The session of the request (over stateless HTTP, each request has its own).
    logger: Arc<Logger>,
    level: RequestLevel,
    /// Its progress, when it has a token: dropping it lets its forwarder finish.
    progress: Option<watch::Sender<Option<Progress>>>,
}

impl Listener {
    fn now(&self) -> MutexGuard<'_, Option<Attached>> {
        self.now.locked()
    }

    /// `context`'s request, ready to [`attach`](Self::attach), and the task that sends its
    /// progress notifications: it ends once the request is detached and the last update
    /// is sent (await it, bounded, before answering the request).
    pub(crate) fn request(
        &self,
        context: &RequestContext<RoleServer>,
        logger: Arc<Logger>,
        level: RequestLevel,
    ) -> (Attached, Option<JoinHandle<()>>) {
        let (progress, task) = match context.meta.get_progress_token() {
            Some(token) => {
                let (tx, task) =
                    progress::forwarder(context.peer.clone(), token, self.position.clone());
                (Some(tx), Some(task))
            }
            None => (None, None),
        };
        let attached = Attached {
            peer: context.peer.clone(),
            logger,
            level,
            progress,
        };
        (attached, task)
    }

    /// From now on the call reports to `request`.
    pub(crate) fn attach(&self, request: Attached) {
        let mut now = self.now();
        self.logged
            .store(false, std::sync::atomic::Ordering::SeqCst);
        *now = Some(request);
    }

    /// The call's request is about to be answered: nothing more goes to it. Returns
    /// whether a message went to it (to [flush](Logger::flush) before the answer).
    pub(crate) fn detach(&self) -> bool {
        let mut now = self.now();
        now.take()
            .is_some_and(|_| self.logged.swap(false, std::sync::atomic::Ordering::SeqCst))
    }

    /// Detaches the request, then lets the rest of its progress go before its answer, for
    /// at most a second (a client that stopped reading, or a session that is closing, must
    /// not hold the answer back): `forwarder` is the task [`request`](Self::request) gave.
    /// Returns whether a message went to the request.
    pub(crate) async fn let_go(&self, forwarder: Option<JoinHandle<()>>) -> bool {
        let logged = self.detach();
        if let Some(mut f) = forwarder
            && tokio::time::timeout(std::time::Duration::from_secs(1), &mut f)
                .await
                .is_err()
        {
            f.abort();
        }
        logged
    }

    /// `opts`, reporting to whichever request is attached: the tool's progress, and its
    /// stderr lines as `notifications/message` from the logger `tool` at Info.
    pub(crate) fn report(self: &Arc<Self>, opts: CallOptions, tool: &str) -> CallOptions {
        let me = self.clone();
        let opts = opts.progress(move |p| {
            if let Some(tx) = me.now().as_ref().and_then(|a| a.progress.as_ref()) {
                tx.send_replace(Some(p));
            }
        });
        let (me, tool) = (self.clone(), tool.to_owned());
        opts.log(move |line| me.log(LoggingLevel::Info, &tool, line))
    }

    /// A message from the logger `name` to the attached request, where its level lets
    /// `level` through (a tool's stderr line, its `ctx.notify`).
    pub(crate) fn log(&self, level: LoggingLevel, name: &str, text: String) {
        let to = {
            let now = self.now();
            let to = now.as_ref().and_then(|a| {
                a.logger
                    .enabled(level, a.level)
                    .then(|| (a.peer.clone(), a.logger.clone()))
            });
            if to.is_some() {
                self.logged.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            to
        };
        if let Some((peer, logger)) = to {
            logger.log(&peer, level, name, Value::String(text));
        }
    }
}
