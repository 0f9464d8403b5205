//! MCP 2026-07-28's multi round-trip requests (SEP-2322) in `toolbind serve`: a call whose
//! tool asks is answered with an `InputRequiredResult`, and the tool waits, alive, for the
//! client's retry.
//!
//! - The questions the tool asks before it blocks go out together as `inputRequests`
//!   (at most [`MAX_QUESTIONS`]), keyed by the names the tool gave them (`{key}`), else
//!   `input-1`, `input-2`, …: once the harness says the tool waits (`Host::waiting`) and
//!   they have all arrived, else [`GATHER`] after the last one. The runtime's approval
//!   goes out at once.
//! - `requestState` is sealed (HMAC-SHA256, rmcp's [`RequestStateCodec`], with a TTL) and
//!   names the call, this replica, the round and a digest of the tool name and arguments
//!   (RFC 8785 canonical JSON). It is good for one retry: the retry that redeems it moves
//!   the call to the next round.
//! - The retry's `inputResponses` answer the open questions by key (each checked against
//!   the result type of its request first: a bad one is -32602 and redeems nothing);
//!   responses to questions not asked yet answer them when the tool asks them in the same
//!   round (a first request may carry them too); other keys are ignored.
//! - A retry whose state was forged or changed, expired, was already used, names other
//!   arguments, or belongs to another replica is -32602, saying which.
//! - Bounds: at most `--max-pending-calls` calls that have asked and not ended (one more
//!   is stopped and answered -32000); each round waits at most `--pending-ttl` for its
//!   retry (a sweeper checks every second); a call whose client does not come back in
//!   time is stopped through its abort signal (then the kill), like any cancelled call.
//!
//! A waiting call keeps its tool process, and so its slot of `--max-concurrent-calls`.

use crate::lock::Locked;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ErrorCode, InputRequest, InputRequests, InputRequiredResult, RequestStateCodec,
    RequestStateError, SealOptions,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;
use toolbind::CancelToken;
use toolbind::host::MAX_QUESTIONS;

use super::ids::{hex, random, short};

/// `--pending-ttl`: as long as a question may wait in a tool (the runtime's ask timeout).
pub(crate) const DEFAULT_TTL: Duration = Duration::from_secs(300);
/// After a question, how long the call may take to ask the next one and have it go out
/// in the same `InputRequiredResult`, when the harness has not said the tool waits (it
/// says so once a tool awaits: this bound is for a python tool asking from a thread of
/// its own, or a question refused before it reached the host).
pub(crate) const GATHER: Duration = Duration::from_millis(20);
/// Ended calls remembered, so that a late retry is told its call ended.
const ENDED: usize = 10_000;

/// How many calls may wait for their client, and for how long.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub max_pending: usize,
    pub ttl: Duration,
}

/// The calls of this server that wait for their client's answers.
pub(crate) struct Rounds {
    codec: RequestStateCodec,
    /// This process, in every state it seals: 64 random bits.
    replica: String,
    limits: Limits,
    inner: Mutex<Inner>,
    /// MCP 2026-07-28 calls whose tool runs now ([`Running`]).
    running: Arc<std::sync::atomic::AtomicUsize>,
}

/// A 2026-07-28 call's tool running, counted while this lives.
pub(crate) struct Running(Arc<std::sync::atomic::AtomicUsize>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[derive(Default)]
struct Inner {
    /// The calls that have sent an `InputRequiredResult` and not yet ended.
    calls: HashMap<String, Arc<Call>>,
    /// Calls that ended after sending one, newest last, and how ([`Ended`]).
    ended: VecDeque<String>,
    ended_how: HashMap<String, Ended>,
}

/// One `tools/call` on MCP 2026-07-28, over all its rounds.
pub(crate) struct Call {
    id: String,
    /// `sha256:` of the canonical `{name, arguments}`.
    digest: String,
    /// Stops the tool: the client's cancel, the server's end, the TTL.
    pub(crate) cancel: CancelToken,
    /// Where its progress and log lines go: the request of its round now.
    pub(crate) listener: Arc<super::listener::Listener>,
    state: Mutex<CallState>,
    changed: Notify,
}

#[derive(Default)]
struct CallState {
    /// The round the next sealed state names; a retry must bring the latest.
    round: u64,
    /// Questions asked without a key so far.
    unnamed: u64,
    open: BTreeMap<String, Open>,
    /// The current request's responses to questions not asked (yet).
    offered: BTreeMap<String, Value>,
    /// The tool's end, until a request takes it.
    result: Option<toolbind::ToolResult>,
    last_asked: Option<Instant>,
    /// Questions the tool has asked in this call (not the runtime's approval).
    tool_asked: u64,
    /// The tool said it waits, having asked this many: once they are all here, they go
    /// out (without waiting out [`GATHER`]).
    waits_after: Option<u64>,
    /// Set while no request drives the call: it waits for its client's retry until then.
    detached: Option<Instant>,
    /// `tool_asked` when the last round went out.
    issued_after: u64,
    /// Whether its request stopped it (the client's cancel, the server's end): no more
    /// rounds.
    stopping: bool,
}

struct Open {
    /// `{method, params}`.
    request: Value,
    answer: oneshot::Sender<Value>,
}

/// What a sealed `requestState` says.
#[derive(Serialize, Deserialize)]
struct Sealed {
    call: String,
    replica: String,
    round: u64,
    args: String,
}

/// How a call that sent an `InputRequiredResult` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// A request took its result.
    Done,
    /// Its client did not come back within `--pending-ttl`.
    Expired,
}

/// How a request's part of a call ends.
pub(crate) enum Turn {
    /// The tool ended.
    Done(toolbind::ToolResult),
    /// It waits for answers.
    Input(InputRequiredResult),
}

/// A question waiting in a call ([`Call::ask`]): its answer; taken back when dropped.
pub(crate) struct Waiting {
    pub(crate) answer: oneshot::Receiver<Value>,
    call: Weak<Call>,
    key: Option<String>,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if let (Some(call), Some(key)) = (self.call.upgrade(), &self.key)
            && call.lock().open.remove(key).is_some()
        {
            call.changed.notify_one();
        }
    }
}

/// The message of a retry whose call is not here.
const ELSEWHERE: &str = "request state expired or belongs to another replica: its call is not waiting on this server (it ended, ran out of --pending-ttl, or runs on another replica: route a call's retries to the replica that answered it); call again without requestState";

impl Rounds {
    /// `key`: the sealing key (`--request-state-key-file`), at least 32 bytes; `None`
    /// draws one, good for this process only.
    pub(crate) fn new(limits: Limits, key: Option<Vec<u8>>) -> Result<Rounds, String> {
        let key = match key {
            Some(k) => k,
            None => random(32).map_err(|e| format!("cannot read /dev/urandom: {e}"))?,
        };
        let codec = RequestStateCodec::try_new(key).map_err(|e| e.to_string())?;
        let replica = random(8).map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
        Ok(Rounds {
            codec,
            replica: hex(&replica),
            limits,
            inner: Mutex::default(),
            running: Arc::default(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.locked()
    }

    /// Counts a call's tool as running while the guard lives: the server's end waits for
    /// them.
    pub(crate) fn runs(&self) -> Running {
        self.running
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Running(self.running.clone())
    }

    /// How many 2026-07-28 calls' tools run now.
    pub(crate) fn running(&self) -> usize {
        self.running.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// How long a call waits for its client's retry.
    pub(crate) fn ttl(&self) -> Duration {
        self.limits.ttl
    }

    /// A new call of `name` with `args`; `responses`: the request's `inputResponses`,
    /// answers to questions the tool has yet to ask.
    pub(crate) fn begin(
        name: &str,
        args: &Value,
        responses: BTreeMap<String, Value>,
    ) -> Result<Arc<Call>, McpError> {
        let id = super::ids::new_id().map_err(|e| {
            McpError::internal_error(format!("cannot read /dev/urandom: {e}"), None)
        })?;
        Ok(Arc::new(Call {
            id,
            digest: digest(name, args),
            cancel: CancelToken::new(),
            listener: Arc::default(),
            state: Mutex::new(CallState {
                offered: responses,
                ..CallState::default()
            }),
            changed: Notify::new(),
        }))
    }

    /// A retry: the call its `requestState` names, with `responses` delivered to its open
    /// questions. -32602 when the state does not hold (see the module's docs). `resume`
    /// runs once the state holds, before the tool gets its answers (so that the retry's
    /// request takes what the tool reports from then on).
    pub(crate) fn redeem(
        &self,
        sealed: &str,
        name: &str,
        args: &Value,
        responses: BTreeMap<String, Value>,
        resume: impl FnOnce(&Call),
    ) -> Result<Arc<Call>, McpError> {
        let bad = |why: String| McpError::invalid_params(why, None);
        let s: Sealed = self.codec.open_json(sealed).map_err(|e| match e {
            RequestStateError::Expired => bad(format!(
                "request state expired (toolbind serve --pending-ttl {} s): call again without requestState",
                self.limits.ttl.as_secs()
            )),
            _ => bad("request state is not valid: it was changed, or sealed by a server with another key (replicas read each other's states only with one --request-state-key-file); call again without requestState".into()),
        })?;
        if s.replica != self.replica {
            return Err(bad(ELSEWHERE.into()));
        }
        let call = {
            let inner = self.lock();
            match inner.calls.get(&s.call) {
                Some(call) => call.clone(),
                None => {
                    return Err(bad(match inner.ended_how.get(&s.call) {
                        Some(Ended::Done) => "request state already used: its call has ended (each state is good for one retry); call again without requestState".into(),
                        Some(Ended::Expired) => format!(
                            "request state expired: its call waited longer than --pending-ttl ({} s) for this retry and was stopped; call again without requestState",
                            self.limits.ttl.as_secs()
                        ),
                        None => ELSEWHERE.into(),
                    }));
                }
            }
        };
        if s.args != call.digest || digest(name, args) != call.digest {
            return Err(bad(
                "request state belongs to another call: a retry must repeat the tool name and arguments of the call that got it".into(),
            ));
        }
        let mut st = call.lock();
        if s.round != st.round || st.detached.is_none() {
            return Err(bad(
                "request state already used: each is good for one retry; send the latest one the server returned".into(),
            ));
        }
        for (key, open) in &st.open {
            if let Some(v) = responses.get(key) {
                check_response(&open.request, v).map_err(|e| {
                    // serde's message quotes what the client sent: shortened.
                    let e = toolbind::untrusted::clip(&e, 400);
                    bad(format!("inputResponses.{key}: {e}"))
                })?;
            }
        }
        st.round += 1;
        st.detached = None;
        st.offered.clear();
        resume(&call);
        for (key, v) in responses {
            match st.open.remove(&key) {
                Some(open) => {
                    let _ = open.answer.send(v);
                }
                None => {
                    st.offered.insert(key, v);
                }
            }
        }
        drop(st);
        call.changed.notify_one();
        Ok(call)
    }

    /// Drives `call` for one request until the tool ends or waits for answers.
    /// `stop`: the request's end (the client's cancel, the server's end), which stops the
    /// tool. -32000 when a call would wait beyond `--max-pending-calls` (the tool is
    /// stopped).
    pub(crate) async fn drive(
        self: &Arc<Self>,
        call: &Arc<Call>,
        stop: impl Future<Output = ()>,
    ) -> Result<Turn, McpError> {
        tokio::pin!(stop);
        let mut stopped = false;
        loop {
            let changed = call.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let wake = {
                let mut st = call.lock();
                if let Some(result) = st.result.take() {
                    drop(st);
                    self.end(&call.id, Ended::Done);
                    return Ok(Turn::Done(result));
                }
                // The tool said it waits, and every question it asked is here (a later
                // question means a later `waiting`).
                let all_here = st.waits_after == Some(st.tool_asked);
                match st.last_asked {
                    _ if st.open.is_empty() || st.stopping => None,
                    Some(last)
                        if !all_here
                            && st.open.len() < MAX_QUESTIONS
                            && last + GATHER > Instant::now() =>
                    {
                        Some(last + GATHER)
                    }
                    _ => {
                        drop(st);
                        if let Some(turn) = self.issue(call)? {
                            return Ok(turn);
                        }
                        continue;
                    }
                }
            };
            tokio::select! {
                () = &mut changed => {}
                () = tokio::time::sleep_until(wake.unwrap_or_else(Instant::now)), if wake.is_some() => {}
                () = &mut stop, if !stopped => {
                    stopped = true;
                    call.lock().stopping = true;
                    call.cancel.cancel();
                }
            }
        }
    }

    /// Sends `call`'s open questions: its `InputRequiredResult`, and a timer that stops
    /// it if its client does not come back. `None`: nothing to send after all (the tool
    /// took its questions back, or ended: the caller looks again).
    fn issue(self: &Arc<Self>, call: &Arc<Call>) -> Result<Option<Turn>, McpError> {
        let mut st = call.lock();
        if st.result.is_some() || st.open.is_empty() {
            return Ok(None);
        }
        let built = self.sealed(call, &st).and_then(|sealed| {
            let mut requests = InputRequests::new();
            for (key, open) in &st.open {
                let request = serde_json::from_value::<InputRequest>(open.request.clone())
                    .map_err(|e| {
                        McpError::internal_error(format!("input request {key}: {e}"), None)
                    })?;
                requests.insert(key.clone(), request);
            }
            Ok(InputRequiredResult::new(Some(requests), Some(sealed)))
        });
        let input = match built {
            Ok(input) => input,
            Err(e) => {
                st.stopping = true;
                drop(st);
                call.cancel.cancel();
                self.end(&call.id, Ended::Done);
                return Err(e);
            }
        };
        st.detached = Some(Instant::now() + self.limits.ttl);
        st.waits_after = None;
        st.issued_after = st.tool_asked;
        drop(st);
        // Registered last: a call that cannot wait is stopped, and no state of it is out.
        let mut inner = self.lock();
        if !inner.calls.contains_key(&call.id) {
            if inner.calls.len() >= self.limits.max_pending {
                drop(inner);
                let mut st = call.lock();
                st.detached = None;
                st.stopping = true;
                drop(st);
                call.cancel.cancel();
                return Err(McpError::new(
                    ErrorCode(-32000),
                    format!(
                        "too many calls wait for their clients' answers ({}, toolbind serve --max-pending-calls); the call was stopped: retry later",
                        self.limits.max_pending
                    ),
                    None,
                ));
            }
            inner.calls.insert(call.id.clone(), call.clone());
        }
        Ok(Some(Turn::Input(input)))
    }

    /// The `requestState` of `call`'s current round.
    fn sealed(&self, call: &Call, st: &CallState) -> Result<String, McpError> {
        self.codec
            .seal_json_with(
                &Sealed {
                    call: call.id.clone(),
                    replica: self.replica.clone(),
                    round: st.round,
                    args: call.digest.clone(),
                },
                &SealOptions::new().ttl(self.limits.ttl),
            )
            .map_err(|e| {
                McpError::internal_error(format!("cannot seal the request state: {e}"), None)
            })
    }

    /// Stops the calls whose client has not come back within `--pending-ttl` of their
    /// last round.
    fn expire(&self) {
        let now = Instant::now();
        let calls: Vec<_> = self.lock().calls.values().cloned().collect();
        for call in calls {
            let expired = {
                let mut st = call.lock();
                let expired = st.detached.is_some_and(|until| until <= now);
                if expired {
                    // Under the lock: a retry that comes now finds the call stopping.
                    st.detached = None;
                    st.stopping = true;
                }
                expired
            };
            if expired {
                self.end(&call.id, Ended::Expired);
                call.cancel.cancel();
                super::logging::log(&format!(
                    "call {}: its client did not come back within --pending-ttl ({} s); stopped",
                    short(&call.id),
                    self.limits.ttl.as_secs()
                ));
            }
        }
    }

    /// Forgets call `id`: a retry of it is told how it ended.
    fn end(&self, id: &str, how: Ended) {
        let mut inner = self.lock();
        if inner.calls.remove(id).is_some() {
            if inner.ended.len() >= ENDED
                && let Some(old) = inner.ended.pop_front()
            {
                inner.ended_how.remove(&old);
            }
            inner.ended.push_back(id.to_owned());
            inner.ended_how.insert(id.to_owned(), how);
        }
    }

    /// Stops every waiting call (the server is ending); returns how many.
    pub(crate) fn stop_all(&self) -> usize {
        let calls: Vec<_> = self.lock().calls.drain().map(|(_, c)| c).collect();
        for call in &calls {
            call.cancel.cancel();
        }
        calls.len()
    }
}

impl super::sweeper::Expire for Rounds {
    fn expire(&self) {
        Rounds::expire(self);
    }
}

impl Call {
    fn lock(&self) -> MutexGuard<'_, CallState> {
        self.state.locked()
    }

    /// The call's id as logs show it.
    pub(crate) fn short_id(&self) -> String {
        short(&self.id)
    }

    /// The tool ended with `result`.
    pub(crate) fn finish(&self, result: toolbind::ToolResult) {
        self.lock().result = Some(result);
        self.changed.notify_one();
    }

    /// The tool said it waits, having asked `asked` questions (`Host::waiting`).
    pub(crate) fn waiting(&self, asked: u64) {
        let mut st = self.lock();
        // Not about questions already sent.
        if asked > st.issued_after {
            st.waits_after = Some(asked);
            drop(st);
            self.changed.notify_one();
        }
    }

    /// A question of the tool's reached the host and was refused there: counted against
    /// what [`waiting`](Self::waiting) says, as [`ask`](Self::ask) counts the others.
    pub(crate) fn counted(&self) {
        self.lock().tool_asked += 1;
        self.changed.notify_one();
    }

    /// `request` (`{method, params}`) is asked, under `key` or the next `input-N`: by the
    /// tool, or (`at_once`) by the runtime for its approval, which goes out without
    /// waiting for more. Answered at once when the current request already carries the
    /// answer.
    pub(crate) fn ask(
        self: &Arc<Self>,
        request: Value,
        key: Option<String>,
        at_once: bool,
    ) -> Result<Waiting, String> {
        let mut st = self.lock();
        if !at_once {
            // Under the lock that adds it to `open`: `drive` never sees the count ahead of
            // the questions.
            st.tool_asked += 1;
        }
        if st.stopping {
            return Err("the call is being stopped".into());
        }
        // Only a question the tool named may be answered before it is asked: never the
        // runtime's approval (a client must not approve what it was never shown), nor a
        // question known only by its number.
        let named = key.is_some() && !at_once;
        let state = &mut *st;
        let key = super::questions::open_key(
            &request,
            key,
            state.open.len(),
            |k| state.open.contains_key(k),
            &mut state.unnamed,
        )?;
        let (tx, rx) = oneshot::channel();
        if let Some(v) = st.offered.remove(&key).filter(|_| named)
            && check_response(&request, &v).is_ok()
        {
            let _ = tx.send(v);
            return Ok(Waiting {
                answer: rx,
                call: Weak::new(),
                key: None,
            });
        }
        st.open.insert(
            key.clone(),
            Open {
                request,
                answer: tx,
            },
        );
        st.last_asked = Some(Instant::now());
        if at_once {
            st.waits_after = Some(0);
        }
        drop(st);
        self.changed.notify_one();
        Ok(Waiting {
            answer: rx,
            call: Arc::downgrade(self),
            key: Some(key),
        })
    }
}

/// Whether `response` reads as the result of `request` (an `ElicitResult` for
/// `elicitation/create`, a `CreateMessageResult` for `sampling/createMessage`, a
/// `ListRootsResult` for `roots/list`).
fn check_response(request: &Value, response: &Value) -> Result<(), String> {
    if !response.is_object() {
        return Err(format!(
            "must be an object (the client's result), not {}",
            toolbind_codegen::mcp::json_kind(response)
        ));
    }
    let method = request.get("method").and_then(Value::as_str).unwrap_or("");
    #[allow(deprecated)]
    let read = match method {
        "elicitation/create" => {
            serde_json::from_value::<rmcp::model::ElicitResult>(response.clone()).map(drop)
        }
        "sampling/createMessage" => {
            serde_json::from_value::<rmcp::model::CreateMessageResult>(response.clone()).map(drop)
        }
        _ => serde_json::from_value::<rmcp::model::ListRootsResult>(response.clone()).map(drop),
    };
    read.map_err(|e| format!("is not the result of {method}: {e}"))
}

/// `sha256:` of the canonical `{name, arguments}` of a call.
fn digest(name: &str, args: &Value) -> String {
    toolbind_codegen::mcp::hash(&serde_json::json!({"name": name, "arguments": args}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rounds(max_pending: usize) -> Arc<Rounds> {
        let limits = Limits {
            max_pending,
            ttl: Duration::from_secs(60),
        };
        let rounds = Arc::new(Rounds::new(limits, None).unwrap());
        // Swept every second, as the server's is.
        let weak: Weak<dyn super::super::sweeper::Expire> = Arc::downgrade(&rounds) as _;
        super::super::sweeper::start(vec![weak]);
        rounds
    }

    fn form(message: &str) -> Value {
        json!({"method": "elicitation/create", "params": {"mode": "form", "message": message,
            "requestedSchema": {"type": "object", "properties": {}}}})
    }

    fn yes() -> Value {
        json!({"action": "accept", "content": {}})
    }

    fn keys(turn: &Turn) -> (Vec<String>, String) {
        let Turn::Input(input) = turn else {
            panic!("not an InputRequiredResult")
        };
        (
            input
                .input_requests
                .as_ref()
                .unwrap()
                .keys()
                .cloned()
                .collect(),
            input.request_state.clone().unwrap(),
        )
    }

    fn code(r: Result<Arc<Call>, McpError>) -> (i32, String) {
        let e = r.err().expect("refused");
        (e.code.0, e.message.to_string())
    }

    #[tokio::test(start_paused = true)]
    async fn questions_asked_together_go_out_together_and_a_state_redeems_once() {
        let r = rounds(4);
        let args = json!({"x": 1});
        let call = Rounds::begin("t", &args, BTreeMap::new()).unwrap();
        let mut a = call.ask(form("a"), Some("a".into()), false).unwrap();
        let _b = call.ask(form("b"), None, false).unwrap();
        assert!(call.ask(form("again"), Some("a".into()), false).is_err());
        let turn = r.drive(&call, std::future::pending()).await.unwrap();
        let (asked, s1) = keys(&turn);
        assert_eq!(asked, ["a", "input-1"]);

        // Only `a` answered: `b` is asked again, with a new state.
        let responses = BTreeMap::from([("a".to_owned(), yes())]);
        let again = r
            .redeem(&s1, "t", &args, responses.clone(), |_| {})
            .unwrap();
        assert_eq!((&mut a.answer).await.unwrap(), yes());
        let (asked, s2) = keys(&r.drive(&again, std::future::pending()).await.unwrap());
        assert_eq!(asked, ["input-1"]);
        assert_ne!(s1, s2);
        let (c, m) = code(r.redeem(&s1, "t", &args, responses.clone(), |_| {}));
        assert_eq!(c, -32602);
        assert!(m.contains("already used"), "{m}");
        let (_, m) = code(r.redeem(&s2, "t", &json!({"x": 2}), responses.clone(), |_| {}));
        assert!(m.contains("another call"), "{m}");
        let (_, m) = code(r.redeem(&format!("{s2}x"), "t", &args, responses.clone(), |_| {}));
        assert!(m.contains("not valid"), "{m}");
        // The same arguments written otherwise are the same (RFC 8785: 1.0 is 1).
        let reordered = json!({"x": 1.0});
        assert!(
            r.redeem(&s2, "t", &reordered, BTreeMap::new(), |_| {})
                .is_ok()
        );

        call.finish(toolbind::ToolResult::text("done"));
        assert!(matches!(
            r.drive(&call, std::future::pending()).await.unwrap(),
            Turn::Done(_)
        ));
        let (_, m) = code(r.redeem(&s2, "t", &args, responses, |_| {}));
        assert!(m.contains("its call has ended"), "{m}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_past_the_limit_is_stopped_and_one_never_retried_expires() {
        let r = rounds(1);
        let first = Rounds::begin("t", &json!({}), BTreeMap::new()).unwrap();
        let _q1 = first.ask(form("a"), None, false).unwrap();
        let (_, state) = keys(&r.drive(&first, std::future::pending()).await.unwrap());
        let second = Rounds::begin("t", &json!({}), BTreeMap::new()).unwrap();
        let _q2 = second.ask(form("a"), None, false).unwrap();
        let refused = r
            .drive(&second, std::future::pending())
            .await
            .err()
            .unwrap();
        assert_eq!(refused.code.0, -32000);
        assert!(second.cancel.is_cancelled());
        assert!(!first.cancel.is_cancelled());

        tokio::time::sleep(Duration::from_secs(61)).await;
        assert!(
            first.cancel.is_cancelled(),
            "the TTL stops a call never retried"
        );
        let (_, m) = code(r.redeem(&state, "t", &json!({}), BTreeMap::new(), |_| {}));
        assert!(m.contains("expired") && m.contains("--pending-ttl"), "{m}");
    }

    #[tokio::test(start_paused = true)]
    async fn answers_may_come_first_and_bad_ones_are_asked_again() {
        let r = rounds(4);
        let responses = BTreeMap::from([
            ("good".to_owned(), yes()),
            ("bad".to_owned(), json!({"content": {}})),
        ]);
        let call = Rounds::begin("t", &json!({}), responses).unwrap();
        let mut good = call.ask(form("g"), Some("good".into()), false).unwrap();
        assert_eq!((&mut good.answer).await.unwrap(), yes());
        let _bad = call.ask(form("b"), Some("bad".into()), false).unwrap();
        let (asked, state) = keys(&r.drive(&call, std::future::pending()).await.unwrap());
        assert_eq!(asked, ["bad"]);
        // On a retry a bad answer is refused, and the state stays good.
        let bad = BTreeMap::from([("bad".to_owned(), json!({"action": 7}))]);
        let (c, m) = code(r.redeem(&state, "t", &json!({}), bad, |_| {}));
        assert_eq!(c, -32602);
        assert!(m.contains("inputResponses.bad"), "{m}");
        assert!(
            r.redeem(&state, "t", &json!({}), BTreeMap::new(), |_| {})
                .is_ok()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_approval_or_an_unnamed_question_is_never_answered_before_it_is_asked() {
        let r = rounds(4);
        let responses = BTreeMap::from([
            (
                "approval".to_owned(),
                json!({"action": "accept", "content": {"approve": true}}),
            ),
            ("input-1".to_owned(), yes()),
        ]);
        let call = Rounds::begin("t", &json!({}), responses).unwrap();
        let _approval = call
            .ask(form("ok?"), Some("approval".into()), true)
            .unwrap();
        let (asked, state) = keys(&r.drive(&call, std::future::pending()).await.unwrap());
        assert_eq!(
            asked,
            ["approval"],
            "an approval goes out at once, unanswered"
        );
        let responses = BTreeMap::from([("input-1".to_owned(), yes())]);
        let call = r
            .redeem(&state, "t", &json!({}), responses, |_| {})
            .unwrap();
        let _unnamed = call.ask(form("x"), None, false).unwrap();
        call.waiting(1);
        let (asked, _) = keys(&r.drive(&call, std::future::pending()).await.unwrap());
        assert_eq!(asked, ["approval", "input-1"]);
    }

    #[tokio::test(start_paused = true)]
    async fn questions_go_out_once_the_tool_waits_with_all_of_them_here() {
        let r = rounds(4);
        let call = Rounds::begin("t", &json!({}), BTreeMap::new()).unwrap();
        let _a = call.ask(form("a"), None, false).unwrap();
        // The tool says it waits after two: the first alone does not go out.
        call.waiting(2);
        let started = Instant::now();
        let ask_later = {
            let call = call.clone();
            async move {
                tokio::time::sleep(Duration::from_millis(5)).await;
                call.ask(form("b"), None, false).unwrap()
            }
        };
        let (turn, _b) = tokio::join!(r.drive(&call, std::future::pending()), ask_later);
        let (asked, state) = keys(&turn.unwrap());
        assert_eq!(asked, ["input-1", "input-2"]);
        assert!(
            started.elapsed() < GATHER,
            "it went out once both were here"
        );
        // A late `waiting` about what went out changes nothing in the next round.
        call.waiting(2);
        let call = r
            .redeem(&state, "t", &json!({}), BTreeMap::new(), |_| {})
            .unwrap();
        let _c = call.ask(form("c"), Some("c".into()), false).unwrap();
        let started = Instant::now();
        let (asked, _) = keys(&r.drive(&call, std::future::pending()).await.unwrap());
        assert_eq!(asked, ["c", "input-1", "input-2"]);
        assert!(
            started.elapsed() >= GATHER,
            "no `waiting` for it: the gather bound"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_question_taken_back_is_not_sent() {
        let r = rounds(4);
        let call = Rounds::begin("t", &json!({}), BTreeMap::new()).unwrap();
        drop(call.ask(form("a"), None, false).unwrap());
        call.finish(toolbind::ToolResult::text("done"));
        assert!(matches!(
            r.drive(&call, std::future::pending()).await.unwrap(),
            Turn::Done(_)
        ));
    }
}
