//! `prepareArguments`: run in the tool's own process, and what its harness's hello said
//! about it remembered, so a tool without one costs a call nothing.

use std::time::Duration;

use serde_json::Value;
use toolbind_codegen::model::{ToolSpec, WorkerMode};

use super::error::{PrepareError, StartError};
use super::worker::{self, Worker};
use super::{MAX_TIMEOUT, SubprocessExecutor, no_entry};

impl SubprocessExecutor {
    /// Runs `prepareArguments` in the tool's own process: its warm worker, or for a
    /// one-shot tool a process started for it (the call itself then gets another). The
    /// harness's hello is read first and remembered for [`prepares`](super::Executor::prepares):
    /// an entry without `prepareArguments` gets its arguments back unchanged, with no
    /// `prepare` line sent. A process that dies before its hello (the entry fails to load)
    /// also returns them unchanged: the call itself then reports why.
    pub(super) async fn prepare_args(
        &self,
        tool: &ToolSpec,
        args: Value,
        timeout: Duration,
    ) -> Result<Value, PrepareError> {
        let timeout = timeout.min(MAX_TIMEOUT);
        let deadline = tokio::time::Instant::now() + timeout;
        let mode = match tool.worker {
            WorkerMode::Default => self.inner.config.worker_mode,
            m => m,
        };
        let oneshot = mode == WorkerMode::OneShot;
        // A process that cannot start (no entry, a jail that cannot run) is the call's to
        // report, as for a process that dies before its hello: the call fails the same way
        // and says so with its typed stop reason (`jail_failed` for the jail). Reported
        // here, it would reach the caller as a string, i.e. a `tool_error`.
        let Ok((entry, worker)) = self.start_for_prepare(tool, oneshot).await else {
            return Ok(args);
        };
        // Whether the process read its hello and nothing else: a one-shot call can use it.
        let mut untouched = false;
        let prepared = match worker.hello(timeout).await {
            Ok(caps) => {
                untouched = !caps.prepare;
                self.inner.pool.learn(&entry, caps.prepare);
                if caps.prepare {
                    worker.prepare(&args, deadline, timeout).await
                } else {
                    Ok(args)
                }
            }
            Err(worker::NoHello::Died) => Ok(args),
            Err(worker::NoHello::TimedOut) => Err(PrepareError::NotLoaded {
                entry: tool.entry.as_deref().unwrap_or("the entry").to_owned(),
                timeout,
            }),
        };
        if oneshot {
            if untouched && worker.is_alive() {
                self.inner.pool.keep_spare(entry, worker);
            } else {
                worker.kill();
            }
        }
        prepared
    }

    /// The entry and the process `prepare_args` runs it in: a one-shot one started for it,
    /// or the warm worker.
    async fn start_for_prepare(
        &self,
        tool: &ToolSpec,
        oneshot: bool,
    ) -> Result<(std::path::PathBuf, std::sync::Arc<Worker>), StartError> {
        let entry = tool
            .entry_path()
            .filter(|p| p.is_file())
            .ok_or_else(|| no_entry(tool))?;
        if oneshot {
            let launch = self.launch(tool, &entry).await?;
            let jail = self.jail(tool, &launch.binds)?;
            let worker = Worker::spawn(&launch, tool, &self.inner.config, jail)?;
            Ok((entry, worker))
        } else {
            // Polled in the call's span (the runtime instruments `prepare`).
            let worker = self
                .warm_worker(tool, &entry, &tracing::Span::current())
                .await?;
            Ok((entry, worker))
        }
    }
}
