//! MCP logging for `serve`: `logging/setLevel`, and tool stderr lines and server events as
//! `notifications/message`, bounded and rate-limited.
//!
//! Nothing here ever blocks a call: [`Logger::log`] queues a message (at most [`QUEUE`]
//! waiting) and one task per session sends them, at most [`RATE`] a second after a burst
//! of [`BURST`]. A message that finds the queue full is dropped and counted; the count goes
//! out as one `warning` ("N log messages dropped") as soon as there is room, so a tool
//! flooding stderr costs the client a bounded number of messages, and it is told what it
//! missed.
// rmcp marks MCP logging deprecated (SEP-2577), but clients still use it: it is how they
// see a tool's stderr and the server's events.
#![allow(deprecated)]

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Messages waiting to be sent, at most.
pub const QUEUE: usize = 256;
/// Messages sent per second, sustained.
pub const RATE: f64 = 100.0;
/// Messages that may go out at once after a quiet spell.
pub const BURST: f64 = 200.0;

/// The level below which nothing is sent until the client sets one.
pub const DEFAULT_LEVEL: LoggingLevel = LoggingLevel::Info;

/// The log level a request asked for.
#[derive(Debug, Clone, Copy)]
pub struct RequestLevel {
    /// Its `_meta` `io.modelcontextprotocol/logLevel`.
    pub level: Option<LoggingLevel>,
    /// A 2026-07-28 request: no level means no messages (there is no session level).
    pub per_request: bool,
}

/// One session's log channel to its client.
pub struct Logger {
    level: AtomicU8,
    dropped: Arc<AtomicU64>,
    tx: OnceLock<mpsc::Sender<Queued>>,
}

/// What waits in a session's log queue.
enum Queued {
    Message(LoggingMessageNotificationParam),
    /// Answered once every message queued before it has been sent.
    Flush(tokio::sync::oneshot::Sender<()>),
}

impl Default for Logger {
    fn default() -> Self {
        Logger {
            level: AtomicU8::new(rank(DEFAULT_LEVEL)),
            dropped: Arc::default(),
            tx: OnceLock::new(),
        }
    }
}

/// A level's place in the order debug < info < ... < emergency.
pub fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

impl Logger {
    /// `logging/setLevel`: messages below `level` are no longer sent.
    pub fn set_level(&self, level: LoggingLevel) {
        self.level.store(rank(level), Ordering::Relaxed);
    }

    /// Whether a message at `level` about a request would be sent, against the request's
    /// own level (`_meta` `io.modelcontextprotocol/logLevel`), else the session's.
    pub fn enabled(&self, level: LoggingLevel, request: RequestLevel) -> bool {
        let min = match request.level {
            Some(l) => rank(l),
            None if request.per_request => return false,
            None => self.level.load(Ordering::Relaxed),
        };
        rank(level) >= min
    }

    /// Queues a message for the client of `peer`; never waits. Dropped (and counted) when
    /// the queue is full.
    pub fn log(&self, peer: &Peer<RoleServer>, level: LoggingLevel, logger: &str, data: Value) {
        let tx = self.tx.get_or_init(|| {
            let (tx, rx) = mpsc::channel(QUEUE);
            tokio::spawn(send(peer.clone(), rx, self.dropped.clone()));
            tx
        });
        let msg = LoggingMessageNotificationParam::new(level, data).with_logger(logger);
        if tx.try_send(Queued::Message(msg)).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Logger {
    /// Waits, at most `bound`, until the messages queued so far have been sent: a request
    /// answered now must not see its last lines come after its answer (or, over HTTP,
    /// lost with its stream).
    pub async fn flush(&self, bound: Duration) {
        let Some(tx) = self.tx.get() else {
            return;
        };
        let (done, sent) = tokio::sync::oneshot::channel();
        let _ = tokio::time::timeout(bound, async {
            if tx.send(Queued::Flush(done)).await.is_ok() {
                let _ = sent.await;
            }
        })
        .await;
    }
}

/// Sends queued messages at most [`RATE`] a second (token bucket of [`BURST`]), reporting
/// the dropped count before the next message once there is one.
async fn send(peer: Peer<RoleServer>, mut rx: mpsc::Receiver<Queued>, dropped: Arc<AtomicU64>) {
    let mut tokens = BURST;
    let mut refilled = Instant::now();
    let mut take = async || {
        loop {
            let now = Instant::now();
            tokens = (tokens + now.duration_since(refilled).as_secs_f64() * RATE).min(BURST);
            refilled = now;
            if tokens >= 1.0 {
                tokens -= 1.0;
                return;
            }
            tokio::time::sleep(Duration::from_secs_f64((1.0 - tokens) / RATE)).await;
        }
    };
    while let Some(queued) = rx.recv().await {
        let msg = match queued {
            Queued::Message(msg) => msg,
            Queued::Flush(done) => {
                let _ = done.send(());
                continue;
            }
        };
        take().await;
        if peer.notify_logging_message(msg).await.is_err() {
            return;
        }
        let n = dropped.swap(0, Ordering::Relaxed);
        if n > 0 {
            take().await;
            let note = LoggingMessageNotificationParam::new(
                LoggingLevel::Warning,
                Value::String(format!(
                    "{n} log message{} dropped: more were logged than the client reads \
                     (at most {RATE} a second, {QUEUE} waiting)",
                    if n == 1 { "" } else { "s" }
                )),
            )
            .with_logger("toolbind");
            if peer.notify_logging_message(note).await.is_err() {
                return;
            }
        }
    }
}

/// One line on stderr, in one write: `eprintln!` writes each piece of its format apart,
/// three system calls for a line that is logged for every call. A line quotes what clients
/// sent (request ids, names): it is cut at [`MAX_LOG_CHARS`] and escaped for a terminal.
pub(crate) fn log(msg: &str) {
    use std::io::Write;
    let msg = toolbind::untrusted::clip(msg, MAX_LOG_CHARS);
    let line = format!("toolbind serve: {}\n", toolbind::untrusted::terminal(&msg));
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// The longest log line, in characters (before escaping).
const MAX_LOG_CHARS: usize = 4096;
