//! Calls that run on while the caller goes on: [`Runtime::start`] and its [`CallHandle`].

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::watch;
use tracing::Instrument;

use crate::cancel::CancelToken;
use crate::result::{Progress, StopReason, ToolResult};
use crate::runtime::{CallOptions, Runtime};

/// A call started with [`Runtime::start`]: it runs in a task of its own while the caller
/// goes on. Poll it ([`is_done`](Self::is_done), [`try_result`](Self::try_result),
/// [`progress`](Self::progress)), wait for it ([`result`](Self::result),
/// [`next_progress`](Self::next_progress)) or [`cancel`](Self::cancel) it (the tool's
/// abort signal, then the kill after the grace period, as for any call). Dropping the
/// handle does not stop the call unless [`cancel_on_drop`](Self::cancel_on_drop) asked
/// for it: the call runs to its end (its timeout still bounds it), and its result is
/// dropped.
#[derive(Debug)]
pub struct CallHandle {
    id: String,
    tool: String,
    cancel: CancelToken,
    progress: watch::Receiver<Option<Progress>>,
    result: watch::Receiver<Option<ToolResult>>,
    cancel_on_drop: bool,
}

impl Runtime {
    /// Starts a model's call (as [`call`](Self::call) runs it: `prepareArguments`,
    /// validation, the executor, truncation, redaction) in a task of its own and returns
    /// at once with its handle. Progress goes to the handle and to `opts`' own sink; the
    /// call's span is a child of the caller's current span.
    ///
    /// Outside a tokio runtime there is no task to run it in: the handle is done at once
    /// with an error result saying so.
    ///
    /// ```no_run
    /// # async fn f(runtime: std::sync::Arc<toolbind::Runtime>) {
    /// let mut handle = runtime.start("convert", serde_json::json!({"file": "a.wav"}),
    ///     toolbind::CallOptions::new().id("call_7"));
    /// // ... the agent goes on; later:
    /// while let Some(p) = handle.next_progress().await {
    ///     println!("{}", p.text_content());
    /// }
    /// let result = handle.result().await;
    /// # }
    /// ```
    pub fn start(self: &Arc<Self>, name: &str, args: Value, opts: CallOptions) -> CallHandle {
        let mut opts = self.with_call_id(opts);
        let (progress_tx, progress) = watch::channel(None);
        let (result_tx, result) = watch::channel(None);
        let theirs = opts.progress.take();
        opts = opts.progress(move |p: Progress| {
            if let Some(sink) = &theirs {
                sink(p.clone());
            }
            progress_tx.send_replace(Some(p));
        });
        let handle = CallHandle {
            id: opts.tool_call_id.clone(),
            tool: name.to_owned(),
            cancel: opts.cancel.clone(),
            progress,
            result,
            cancel_on_drop: false,
        };
        let Ok(tokio) = tokio::runtime::Handle::try_current() else {
            result_tx.send_replace(Some(ToolResult::stopped(
                StopReason::Crashed,
                format!("tool `{name}` was not started: Runtime::start needs a tokio runtime"),
            )));
            return handle;
        };
        let (runtime, name) = (self.clone(), name.to_owned());
        tokio.spawn(
            async move {
                let r = runtime.call(&name, args, opts).await;
                result_tx.send_replace(Some(r));
            }
            .instrument(tracing::Span::current()),
        );
        handle
    }
}

impl CallHandle {
    /// The call's id (the caller's, else the one the runtime made up).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The tool's name, as it was called.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Whether the call has ended.
    pub fn is_done(&self) -> bool {
        self.result.borrow().is_some()
    }

    /// The result, once the call has ended.
    pub fn try_result(&self) -> Option<ToolResult> {
        self.result.borrow().clone()
    }

    /// Waits for the call to end and returns its result (again on every call of this).
    pub async fn result(&self) -> ToolResult {
        let mut rx = self.result.clone();
        match rx.wait_for(Option::is_some).await {
            Ok(r) => r.clone().unwrap_or_default(),
            // The task ended without a result: it panicked.
            Err(_) => ToolResult::stopped(
                StopReason::Crashed,
                format!(
                    "the task running tool `{}` ended without a result",
                    self.tool
                ),
            ),
        }
    }

    /// The latest progress update, if the tool sent one.
    pub fn progress(&self) -> Option<Progress> {
        self.progress.borrow().clone()
    }

    /// Waits for a progress update newer than the last one this handle returned; `None`
    /// once the call has ended (updates that came after the last one read and before the
    /// end are coalesced into the latest, which [`progress`](Self::progress) still has).
    pub async fn next_progress(&mut self) -> Option<Progress> {
        let mut done = self.result.clone();
        loop {
            if self.is_done() {
                return None;
            }
            tokio::select! {
                changed = self.progress.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                    if let Some(p) = self.progress.borrow_and_update().clone() {
                        return Some(p);
                    }
                }
                _ = done.wait_for(Option::is_some) => return None,
            }
        }
    }

    /// Cancels the call: the tool's abort signal, then SIGKILL to its process group after
    /// the grace period, as for any cancelled call. Its result says it was cancelled. This
    /// fires the call's cancel token: the one its `CallOptions` were given, if any, so
    /// every call sharing that token is cancelled with it.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// Whether dropping the handle cancels a call still running (default: no, the call
    /// runs on).
    pub fn cancel_on_drop(mut self, cancel: bool) -> Self {
        self.cancel_on_drop = cancel;
        self
    }
}

impl Drop for CallHandle {
    fn drop(&mut self) {
        if self.cancel_on_drop && !self.is_done() {
            self.cancel.cancel();
        }
    }
}
