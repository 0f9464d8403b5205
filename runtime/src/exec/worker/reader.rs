//! A worker's fd-3 reader: reads the harness's messages in the order they come, hands each
//! call in flight its progress, binary pieces and end, and once the stream is over reaps
//! the process and tells every call still waiting why the worker died.

use crate::lock::Locked;
use std::collections::HashMap;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::Value;
use tokio::io::BufReader;
use tokio::net::unix::OwnedReadHalf;
use tokio::sync::watch;

use super::{Asked, Event, Shared};
use crate::exec::Limits;
use crate::exec::blobs::{Binary, Blobs};
use crate::exec::group::Group;
use crate::exec::process;
use crate::exec::protocol::{self, Capabilities, Cut, FromHarness, LineError};
use crate::exec::sandbox::{CallCgroup, Running};
use crate::result::{StopReason, ToolResult};

pub(super) struct ReaderCtx {
    pub(super) shared: Arc<Shared>,
    pub(super) group: Arc<Group>,
    pub(super) stderr_task: tokio::task::JoinHandle<()>,
    pub(super) limits: Limits,
    pub(super) label: &'static str,
    pub(super) entry: String,
    pub(super) closed: watch::Sender<bool>,
    /// Where the hello's capabilities go.
    pub(super) greeted: watch::Sender<Option<Capabilities>>,
    pub(super) jail: Option<Arc<Running>>,
    /// An unjailed worker's tracking cgroup: dropped once the worker is dead, it kills the
    /// daemons its calls started.
    pub(super) tracker: Option<CallCgroup>,
    /// Where binary blocks over the bound are saved.
    pub(super) spill_dir: Option<std::path::PathBuf>,
    /// The tool's name, naming its spill files.
    pub(super) tool: String,
}

/// The harness already cuts text at the limit and adds a note; the runtime's own cap, a
/// little higher, keeps that note while still bounding what a misbehaving harness sends.
const SLACK: usize = 4096;

/// How the harness broke the protocol: what every call in flight on it is told (and the
/// worker is killed).
#[derive(Debug)]
enum Broken {
    /// A line past the bound.
    TooLong { label: &'static str, max: usize },
    /// Reading failed.
    Unreadable {
        label: &'static str,
        error: std::io::Error,
    },
    /// The first line is not a protocol message.
    FirstNotJson {
        label: &'static str,
        error: serde_json::Error,
        preview: String,
    },
    /// A later line is not one, nor names a call to fail.
    NotJson {
        label: &'static str,
        error: serde_json::Error,
        preview: String,
    },
    /// A second hello.
    SecondHello { label: &'static str },
    /// Something else before the hello.
    FirstNotHello {
        label: &'static str,
        kind: &'static str,
    },
    /// A hello this runtime cannot take.
    Hello(protocol::HelloError),
    /// More questions open at once than the harness may have.
    TooManyQuestions,
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let version = protocol::PROTOCOL_VERSION;
        match self {
            Broken::TooLong { label, max } => write!(
                f,
                "protocol error: the {label} harness sent a message longer than {max} bytes"
            ),
            Broken::Unreadable { label, error } => write!(
                f,
                "protocol error: reading from the {label} harness failed: {error}"
            ),
            Broken::FirstNotJson {
                label,
                error,
                preview,
            } => write!(
                f,
                "protocol error: the {label} harness's first message is not a hello (protocol version {version}) but a line that is not a protocol message ({error}): `{preview}`"
            ),
            Broken::NotJson {
                label,
                error,
                preview,
            } => write!(
                f,
                "protocol error: the {label} harness sent a line that is not a protocol message ({error}): `{preview}`"
            ),
            Broken::SecondHello { label } => {
                write!(f, "protocol error: the {label} harness sent a second hello")
            }
            Broken::FirstNotHello { label, kind } => write!(
                f,
                "protocol error: the {label} harness's first message is `{kind}`, not the hello protocol version {version} begins with; the harness is from another toolbind version"
            ),
            Broken::Hello(e) => e.fmt(f),
            Broken::TooManyQuestions => write!(
                f,
                "protocol error: the harness asked more than {} questions at once in one call",
                crate::host::MAX_QUESTIONS
            ),
        }
    }
}

impl std::error::Error for Broken {}

/// What the read loop has learned so far.
#[derive(Default)]
struct Reading {
    /// The harness's own `fatal` message.
    fatal: Option<String>,
    /// How the harness broke the protocol, when it did: reading stopped there.
    broken: Option<Broken>,
    /// The first message must be the hello (or a fatal): nothing else is read before it.
    greeted: bool,
    /// The harness has exited (its group is left unreaped until [`reap`]).
    exited: bool,
    /// The binary pieces each call in flight has sent ahead of its result.
    blobs: HashMap<u64, (String, Blobs)>,
}

pub(super) async fn reader(read: OwnedReadHalf, mut ctx: ReaderCtx) {
    // The stream, its line buffer and the binary pieces left over live until the very end,
    // as they did when all this was one function.
    let mut read = BufReader::with_capacity(64 * 1024, read);
    let mut line = Vec::new();
    let mut reading = Reading::default();
    read_messages(&mut read, &mut line, &mut ctx, &mut reading).await;
    let broken = reading.broken.take();
    let status = reap(&mut ctx, broken.is_some(), reading.exited).await;
    let (reason, why, named) = death(&ctx, reading.fatal.take(), broken, status);
    fail_pending(&ctx.shared, reason, named, why).await;
    let _ = ctx.closed.send(true);
}

/// Reads and handles messages until the stream ends, the harness breaks the protocol, or a
/// short while after the harness exited.
async fn read_messages(
    read: &mut BufReader<OwnedReadHalf>,
    line: &mut Vec<u8>,
    ctx: &mut ReaderCtx,
    reading: &mut Reading,
) {
    // The harness's exit is noticed by itself, not only by end-of-stream: a process the
    // tool started may hold the socket open for as long as it lives. What the harness
    // wrote before exiting is still read, for a short while.
    let mut drain_until: Option<tokio::time::Instant> = None;
    loop {
        let next = tokio::select! {
            r = protocol::read_line(read, line, ctx.limits.line) => r,
            _ = ctx.group.exited(), if !reading.exited => {
                reading.exited = true;
                drain_until = Some(tokio::time::Instant::now() + Duration::from_millis(500));
                continue;
            }
            _ = tokio::time::sleep_until(drain_until.unwrap_or_else(tokio::time::Instant::now)),
                if drain_until.is_some() => break,
        };
        match next {
            Ok(None) => break,
            Ok(Some(())) => {}
            Err(LineError::TooLong(max)) => {
                reading.broken = Some(Broken::TooLong {
                    label: ctx.label,
                    max,
                });
                break;
            }
            // The harness's end closed with a request of ours unread: it is gone, as at
            // end of stream, and its exit status (a jail that never started it, a crash)
            // says why. Not a protocol break, whose worker is killed before it can exit.
            Err(LineError::Io(e)) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(LineError::Io(e)) => {
                reading.broken = Some(Broken::Unreadable {
                    label: ctx.label,
                    error: e,
                });
                break;
            }
        }
        let msg = match parse(line, reading.greeted, ctx.label) {
            Ok(msg) => msg,
            Err(broken) => {
                reading.broken = Some(broken);
                break;
            }
        };
        line.clear();
        let Some(msg) = msg else { continue };
        let handled =
            in_order(&msg, reading.greeted, ctx.label).and_then(|()| reading.handle(ctx, msg));
        match handled {
            Ok(Some((id, event @ (Event::Ask(_) | Event::Notify { .. } | Event::Waiting)))) => {
                if let Err(broken) = forward(&ctx.shared, id, event) {
                    reading.broken = Some(broken);
                    break;
                }
            }
            Ok(Some((id, event))) => deliver(&ctx.shared, id, event).await,
            Ok(None) => {}
            Err(broken) => {
                reading.broken = Some(broken);
                break;
            }
        }
    }
}

/// The message on `line`: `Ok(None)` for one to drop, `Err` for how the line breaks the
/// protocol.
fn parse(line: &[u8], greeted: bool, label: &'static str) -> Result<Option<FromHarness>, Broken> {
    match serde_json::from_slice::<FromHarness>(line) {
        Ok(m) => Ok(Some(m)),
        Err(error) if !greeted => Err(Broken::FirstNotJson {
            label,
            error,
            preview: protocol::preview(line),
        }),
        Err(e) => match protocol::salvage_id(line) {
            // A message of one call that is not JSON fails that call, not the worker.
            Some(("update", _)) => Ok(None),
            Some((kind, id)) => Ok(Some(FromHarness::Error {
                id,
                salvaged: true,
                message: format!(
                    "protocol error: the {} harness could not send this call's {kind} as JSON ({e}); NaN, Infinity and numbers beyond the range of a 64-bit float have no JSON form",
                    label
                ),
            })),
            None => Err(Broken::NotJson {
                label,
                error: e,
                preview: protocol::preview(line),
            }),
        },
    }
}

/// Whether `msg` may come now: the hello (or a fatal) first, and one hello only.
fn in_order(msg: &FromHarness, greeted: bool, label: &'static str) -> Result<(), Broken> {
    match (msg, greeted) {
        (FromHarness::Hello { .. }, true) => Err(Broken::SecondHello { label }),
        (FromHarness::Hello { .. } | FromHarness::Fatal { .. }, false) | (_, true) => Ok(()),
        (other, false) => Err(Broken::FirstNotHello {
            label,
            kind: other.kind(),
        }),
    }
}

impl Reading {
    /// Handles one message: the call to hand an end to, if it ends one, or how it breaks
    /// the protocol.
    fn handle(
        &mut self,
        ctx: &ReaderCtx,
        msg: FromHarness,
    ) -> Result<Option<(u64, Event)>, Broken> {
        match msg {
            FromHarness::Hello {
                protocol,
                capabilities,
            } => {
                let caps =
                    protocol::hello(ctx.label, &protocol, &capabilities).map_err(Broken::Hello)?;
                self.greeted = true;
                let _ = ctx.greeted.send(Some(caps));
                Ok(None)
            }
            FromHarness::Update { id, content, cut } => {
                update(ctx, id, content, cut);
                Ok(None)
            }
            FromHarness::Data {
                id,
                index,
                data,
                size,
            } => {
                self.data(ctx, id, index, &data, size);
                Ok(None)
            }
            FromHarness::Result { id, result, cut } => {
                Ok(Some((id, self.result(ctx, id, result, cut))))
            }
            FromHarness::Error {
                id,
                message,
                salvaged,
            } => Ok(Some((id, self.error(ctx, id, message, salvaged)))),
            FromHarness::Fatal { message } => {
                self.fatal = Some(message);
                Ok(None)
            }
            FromHarness::Prepared { id, args } => Ok(Some((id, Event::Prepared(args)))),
            FromHarness::Ask {
                id,
                ask,
                kind,
                params,
                key,
            } => Ok(Some((
                id,
                Event::Ask(Asked {
                    ask,
                    key: crate::host::question_key(&kind, key),
                    question: crate::host::Question::parse(&kind, params),
                    kind,
                }),
            ))),
            FromHarness::Waiting { id } => Ok(Some((id, Event::Waiting))),
            FromHarness::Notify { id, level, text } => Ok(Some((
                id,
                Event::Notify {
                    level: level.as_str().unwrap_or("info").to_owned(),
                    text: match text {
                        Value::String(s) => s,
                        other => other.to_string(),
                    },
                },
            ))),
        }
    }

    /// A piece of a binary block of call `id`'s result, held until the result comes.
    fn data(&mut self, ctx: &ReaderCtx, id: u64, index: u64, data: &str, size: Option<u64>) {
        let call_id = {
            let st = ctx.shared.state.locked();
            st.pending.get(&id).map(|c| c.tool_call_id.clone())
        };
        // Pieces of a call that is no longer waiting are dropped (their file too).
        let Some(call_id) = call_id else {
            self.blobs.remove(&id);
            return;
        };
        self.blobs
            .entry(id)
            .or_insert_with(|| (call_id, Blobs::default()));
        let Some((call_id, held)) = self.blobs.get_mut(&id) else {
            return;
        };
        let mut binary = Binary {
            dir: ctx.spill_dir.as_deref(),
            tool: &ctx.tool,
            tool_call_id: call_id,
            bound: ctx.limits.binary,
            blobs: std::mem::take(held),
        };
        binary.piece(index, data, size);
        *held = binary.blobs;
    }

    /// Call `id`'s result, with the binary pieces sent ahead of it.
    fn result(&mut self, ctx: &ReaderCtx, id: u64, result: Value, cut: Option<Cut>) -> Event {
        let (call_id, held) = self.blobs.remove(&id).unwrap_or_default();
        let call_id = if call_id.is_empty() {
            let st = ctx.shared.state.locked();
            st.pending
                .get(&id)
                .map(|c| c.tool_call_id.clone())
                .unwrap_or_default()
        } else {
            call_id
        };
        let mut binary = Binary {
            dir: ctx.spill_dir.as_deref(),
            tool: &ctx.tool,
            tool_call_id: &call_id,
            bound: ctx.limits.binary,
            blobs: held,
        };
        let mut result =
            protocol::normalize_result_with(result, ctx.limits.text + SLACK, &mut binary);
        if let Some(cut) = &cut {
            result.push_runtime_note(protocol::note(cut));
        }
        Event::Done(result)
    }

    /// The error call `id` threw (or the runtime salvaged for it).
    fn error(&mut self, ctx: &ReaderCtx, id: u64, mut message: String, salvaged: bool) -> Event {
        // Pieces sent ahead of a result that never came: their files go.
        self.blobs.remove(&id);
        // A thrown error is the tool's failure, unless a limit caused it or the
        // runtime salvaged a message that was not JSON.
        let mut why = if salvaged {
            StopReason::ProtocolError
        } else {
            StopReason::ToolError
        };
        if let Some(j) = &ctx.jail
            && let Some((stop, limit)) = j.explain(None, &message)
        {
            why = stop;
            message = format!("{limit}\n{message}");
        }
        let secrets = ctx.shared.secrets();
        Event::Done(ToolResult::stopped(
            why,
            process::redact(&message, &secrets),
        ))
    }
}

/// Call `id`'s progress: it replaces the call's latest update, never blocking the reader.
fn update(ctx: &ReaderCtx, id: u64, content: Value, cut: Option<Cut>) {
    let mut p = protocol::normalize_progress(content, ctx.limits.text + SLACK);
    if let Some(cut) = &cut {
        p.content
            .push(crate::result::Content::text(protocol::note(cut)));
    }
    let st = ctx.shared.state.locked();
    if let Some(call) = st.pending.get(&id) {
        call.progress.put(p);
    }
}

/// Hands call `id` something on the way (a question, a notice, its waiting), if it is still in flight,
/// without waiting: reading never stalls on one call. A notice that finds the call's queue
/// full is dropped; a question that does is more than the harness may have open, a
/// protocol break.
fn forward(shared: &Shared, id: u64, event: Event) -> Result<(), Broken> {
    let to = {
        let st = shared.state.locked();
        st.pending.get(&id).map(|c| c.done.clone())
    };
    let Some(to) = to else { return Ok(()) };
    match to.try_send(event) {
        Err(tokio::sync::mpsc::error::TrySendError::Full(Event::Ask(_))) => {
            Err(Broken::TooManyQuestions)
        }
        _ => Ok(()),
    }
}

/// Hands call `id` its end, if it is still waiting for one.
async fn deliver(shared: &Shared, id: u64, event: Event) {
    // The call's stderr lines go to its sink only while it runs alone: then what it wrote
    // before its result is read first.
    let logs_alone = {
        let st = shared.state.locked();
        st.pending.len() == 1 && st.pending.get(&id).is_some_and(|c| c.log.is_some())
    };
    if logs_alone {
        shared.stderr_caught_up().await;
    }
    let call = {
        let mut st = shared.state.locked();
        let call = st.pending.remove(&id);
        if call.is_none() {
            // An abandoned call that did stop: nothing to kill.
            st.abandoned.remove(&id);
        }
        call
    };
    if let Some(call) = call {
        let _ = call.done.send(event).await;
    }
}

/// Ends the process once reading is over and reaps it: its exit status, when it could be
/// had. A harness that broke the protocol is killed at once; one that has not exited is
/// given a moment to exit on its own, to report its real status. Reaping kills what is left
/// of its group (grandchildren included: nothing of a dead worker survives it).
async fn reap(ctx: &mut ReaderCtx, broken: bool, exited: bool) -> Option<ExitStatus> {
    let ends_by_itself = !broken
        && (exited
            || tokio::time::timeout(Duration::from_millis(500), ctx.group.exited())
                .await
                .is_ok());
    if !ends_by_itself {
        ctx.group.signal(Signal::SIGKILL);
    }
    let status = ctx.group.wait().await;
    let _ = tokio::time::timeout(Duration::from_secs(1), &mut ctx.stderr_task).await;
    drop(ctx.tracker.take());
    if let Some(j) = &ctx.jail {
        j.end();
    }
    status
}

/// Why the worker died, as its calls are told (redacted, with the tail of its stderr), the
/// typed reason, and whether the words already name the call at fault.
fn death(
    ctx: &ReaderCtx,
    fatal: Option<String>,
    broken: Option<Broken>,
    status: Option<ExitStatus>,
) -> (String, StopReason, bool) {
    let secrets = ctx.shared.secrets();
    let stderr = {
        let c = ctx.shared.stderr.locked();
        (!c.is_empty()).then(|| c.render_tail(2000, &secrets))
    };
    let killed_because = ctx
        .shared
        .state
        .lock()
        .map(|s| s.killed_because.clone())
        .unwrap_or_default();
    let named = fatal.is_none() && broken.is_none() && killed_because.is_some();
    let protocol_broken = broken.is_some();
    // A limit the jail enforced is the reason every call on the worker gets.
    let limit = ctx.jail.as_ref().and_then(|j| {
        let c = ctx.shared.stderr.locked();
        j.explain(status, &c.render_tail(4000, &secrets))
    });
    let mut reason = match (fatal, broken, killed_because) {
        (Some(f), _, _) => f,
        (None, Some(b), _) => b.to_string(),
        (None, None, Some(k)) => k,
        (None, None, None) => format!(
            "the {} process running {} {} before returning a result",
            ctx.label,
            ctx.entry,
            status
                .map(|s| match &ctx.jail {
                    Some(j) => j.describe(s),
                    None => process::describe_exit(s),
                })
                .unwrap_or_else(|| "ended".into())
        ),
    };
    let why = match limit {
        Some((stop, limit)) => {
            reason = format!("{limit}; {reason}");
            stop
        }
        None if protocol_broken => StopReason::ProtocolError,
        None => StopReason::Crashed,
    };
    if let Some(stderr) = stderr {
        reason.push_str("\nstderr:\n");
        reason.push_str(&stderr);
    }
    let reason = process::redact(&reason, &secrets);
    (reason, why, named)
}

/// Marks the worker dead with `reason` and tells every call still in flight on it.
async fn fail_pending(shared: &Shared, reason: String, named: bool, why: StopReason) {
    let pending: Vec<_> = {
        let mut st = shared.state.locked();
        st.dead = Some(reason.clone());
        st.pending.drain().map(|(_, call)| call.done).collect()
    };
    let others = pending.len().saturating_sub(1);
    for tx in pending {
        let _ = tx
            .send(Event::Died {
                reason: reason.clone(),
                others,
                named,
                why: why.clone(),
            })
            .await;
    }
}
