//! A model turn's parallel tool calls run as one [`Batch`]
//! ([`Runtime::call_batch`](crate::Runtime::call_batch)).

use std::future::Future;
use std::pin::Pin;

use std::task::Poll;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Semaphore;
use toolbind_codegen::model::Execution;

use crate::cancel::CancelToken;
use crate::result::ToolResult;
use crate::runtime::{CallOptions, Runtime};

/// One tool call a model asked for, as a batch runs it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCallRequest {
    /// The id the result answers (the provider's call id; generated for a Gemini call that
    /// has none, see [`generated_id`](Self::generated_id)).
    pub id: String,
    /// The tool's name, as the model spelled it.
    pub name: String,
    /// The arguments, or why they could not be read (the model sent malformed JSON). A call
    /// whose arguments could not be read is not run: its result is an error the model can
    /// act on.
    pub args: Result<Value, String>,
    /// `id` was made up by toolbind (the provider sent none), so it is not echoed back.
    pub generated_id: bool,
}

impl ToolCallRequest {
    /// A call with JSON arguments.
    pub fn new(id: impl Into<String>, name: impl Into<String>, args: Value) -> Self {
        ToolCallRequest {
            id: id.into(),
            name: name.into(),
            args: Ok(args),
            generated_id: false,
        }
    }

    /// A call whose arguments are JSON text (OpenAI's `arguments` string). Text that is not
    /// JSON becomes an error for the model, never a panic; empty text means no arguments.
    pub fn from_json_text(id: impl Into<String>, name: impl Into<String>, text: &str) -> Self {
        let args = if text.trim().is_empty() {
            Ok(Value::Null)
        } else {
            // serde_json's message gives the position, never the text: the model may have
            // put a sensitive value in it.
            serde_json::from_str(text).map_err(|e| {
                format!(
                    "the arguments are not valid JSON ({e}); send them again as one JSON object \
                     of named arguments"
                )
            })
        };
        ToolCallRequest {
            id: id.into(),
            name: name.into(),
            args,
            generated_id: false,
        }
    }

    /// Marks `id` as made up by toolbind.
    pub fn with_generated_id(mut self) -> Self {
        self.generated_id = true;
        self
    }
}

/// How a batch runs.
#[derive(Debug, Clone)]
pub struct BatchOptions {
    pub(crate) concurrency: usize,
    pub(crate) cancel: CancelToken,
    pub(crate) timeout: Option<Duration>,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            concurrency: Self::DEFAULT_CONCURRENCY,
            cancel: CancelToken::new(),
            timeout: None,
        }
    }
}

impl BatchOptions {
    /// The default of [`BatchOptions::concurrency`]: enough for the parallel calls models
    /// emit in one turn (rarely more than a handful) without starting dozens of processes
    /// at once.
    pub const DEFAULT_CONCURRENCY: usize = 16;

    /// The defaults: [`BatchOptions::DEFAULT_CONCURRENCY`], a fresh cancel token, no timeout override.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many calls run at the same time (0 counts as 1). Default
    /// [`BatchOptions::DEFAULT_CONCURRENCY`].
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// Uses `token` to cancel every call of the batch, running or waiting.
    pub fn cancel(mut self, token: CancelToken) -> Self {
        self.cancel = token;
        self
    }

    /// Overrides every call's timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// See [`concurrency`](Self::concurrency).
    pub fn get_concurrency(&self) -> usize {
        self.concurrency
    }

    /// See [`cancel`](Self::cancel).
    pub fn get_cancel(&self) -> &CancelToken {
        &self.cancel
    }

    /// See [`timeout`](Self::timeout); `None`: each call's own.
    pub fn get_timeout(&self) -> Option<Duration> {
        self.timeout
    }
}

/// One call and its result.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Answered {
    /// The call as the model made it.
    pub call: ToolCallRequest,
    /// What the runtime returned (already truncated and redacted by the runtime).
    pub result: ToolResult,
}

/// The results of a batch, in call order.
///
/// Batches: the tool calls of one model turn, run concurrently.
///
/// A model may ask for several tool calls in one turn. [`Runtime::call_batch`] runs them at
/// once, at most [`BatchOptions::concurrency`] at a time, and returns their results in call
/// order. One [`CancelToken`] cancels the whole batch. A tool whose TOOL.md says
/// `execution: sequential` runs one call at a time, in the order the calls were made, within
/// a batch and across batches running on the same [`Runtime`] (other tools still run beside
/// it). When every result of a batch says `terminate: true` (the Pi tool API),
/// [`Batch::terminate`] tells the agent loop to stop instead of asking the model again.
///
/// Calls usually come from a provider's response ([`crate::provider::Provider::tool_calls`]),
/// and the batch goes back as the provider's messages
/// ([`crate::provider::Provider::results`]).
///
/// ```no_run
/// use serde_json::json;
/// use toolbind::batch::{BatchOptions, ToolCallRequest};
/// # async fn demo(runtime: toolbind::Runtime) {
/// let calls = vec![
///     ToolCallRequest::new("call_1", "todo", json!({"action": "list"})),
///     ToolCallRequest::from_json_text("call_2", "todo", "{\"action\": \"add\", \"text\": \"x\"}"),
/// ];
/// let batch = runtime.call_batch(calls, BatchOptions::new()).await;
/// for answered in &batch.results {
///     println!("{}: {}", answered.call.id, answered.result.text_content());
/// }
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Batch {
    /// One entry per call, in the order the calls were given.
    pub results: Vec<Answered>,
}

impl Answered {
    /// A call and its result, for a [`Batch`] built by hand (calls run some other way).
    pub fn new(call: ToolCallRequest, result: ToolResult) -> Self {
        Answered { call, result }
    }
}

impl Batch {
    /// A batch built by hand from answered calls, in call order.
    pub fn new(results: Vec<Answered>) -> Self {
        Batch { results }
    }

    /// Whether the agent loop should stop: every result of the (non-empty) batch said
    /// `terminate: true`. One result without it, an error included, keeps the loop going,
    /// so the model sees what happened.
    pub fn terminate(&self) -> bool {
        !self.results.is_empty() && self.results.iter().all(|a| a.result.terminate)
    }
}

impl Runtime {
    /// Runs a model's tool calls concurrently (see [`Batch`]):
    /// results in call order, one cancel for all, at most `opts.concurrency` at a time,
    /// `execution: sequential` tools one call at a time. Every call goes through
    /// [`Runtime::call`] (the same validation and error results); a call whose arguments
    /// were malformed JSON is answered with an error result without running.
    pub async fn call_batch(&self, calls: Vec<ToolCallRequest>, opts: BatchOptions) -> Batch {
        let limit = Semaphore::new(opts.concurrency.max(1));
        let runs: Vec<_> = calls
            .iter()
            .map(|call| self.run_in_batch(call, &limit, &opts))
            .collect();
        let results = join_all(runs).await;
        Batch {
            results: calls
                .into_iter()
                .zip(results)
                .map(|(call, result)| Answered { call, result })
                .collect(),
        }
    }

    async fn run_in_batch(
        &self,
        call: &ToolCallRequest,
        limit: &Semaphore,
        opts: &BatchOptions,
    ) -> ToolResult {
        let args = match &call.args {
            Ok(args) => args.clone(),
            Err(why) => {
                return ToolResult::stopped(
                    crate::StopReason::BadArguments,
                    format!("tool `{}` was not run: {why}", call.name),
                );
            }
        };
        // The tool's queue before a concurrency slot: a call waiting its turn must not hold
        // a slot other tools could use. tokio's mutex is fair, and the batch polls its calls
        // in order, so a sequential tool's calls start in call order.
        let sequential = self
            .tool(&call.name)
            .is_some_and(|t| t.spec().execution == Execution::Sequential);
        let queue = sequential.then(|| self.sequential.get(&call.name));
        let _turn = match &queue {
            Some(q) => Some(q.lock().await),
            None => None,
        };
        // `Semaphore::close` is never called, so acquiring cannot fail; if it did, running
        // without a slot is the harmless fallback.
        let _slot = limit.acquire().await.ok();
        let mut call_opts = CallOptions::new()
            .id(call.id.clone())
            .cancel(opts.cancel.clone());
        call_opts.timeout = opts.timeout;
        self.call(&call.name, args, call_opts).await
    }
}

/// Polls every future until all are done; outputs in input order. (A dependency on
/// `futures` for its `join_all` is not worth it for these few lines.)
async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, out) in futures.iter_mut().zip(outputs.iter_mut()) {
            if out.is_none() {
                match f.as_mut().poll(cx) {
                    Poll::Ready(v) => *out = Some(v),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}
