//! bash tools: one process per call, no harness.
//!
//! The script runs as `bash index.sh` in its own process group. Its params arrive as one
//! JSON object on stdin (never in argv or the environment); whatever it prints on stdout
//! becomes the result's text (one trailing newline removed); exit status 0 is success and
//! any other status an error result carrying the tail of stderr. Each line written to
//! fd 3 is a progress update:
//!
//! ```bash
//! params=$(cat)
//! echo "downloading..." >&3
//! echo "done"
//! ```
//!
//! Cancellation and timeouts send SIGTERM to the whole process group, then SIGKILL after
//! the grace period. bash tools are always one-shot: a shell script has no module state to
//! keep warm.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::{Map, Value};
use tokio::io::{AsyncWriteExt, BufReader};

use super::process::{self, Capture, Stdout};
use super::protocol;
use super::worker::secs;
use super::{ExecConfig, Limits};
use crate::cancel::CancelToken;
use crate::executor::ProgressSink;
use crate::result::{Content, ToolResult};
use toolbind_codegen::model::ToolSpec;

/// Kills the group if the call's future is dropped before the process was reaped.
struct GroupGuard(i32, bool);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.1 {
            process::signal_group(self.0, Signal::SIGKILL);
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) async fn run(
    tool: &ToolSpec,
    entry: &std::path::Path,
    config: &ExecConfig,
    params: &Map<String, Value>,
    cancel: &CancelToken,
    timeout: Duration,
    progress: Option<&ProgressSink>,
    secrets: &[String],
) -> ToolResult {
    let limits = Limits::from(config);
    let mut spawned = match process::spawn(
        &config.bash,
        &[entry.as_os_str()],
        tool,
        config,
        true,
        Stdout::Piped,
    ) {
        Ok(s) => s,
        Err(e) => return ToolResult::error(e),
    };
    let mut guard = GroupGuard(spawned.pgid, true);
    let input = serde_json::to_vec(&Value::Object(params.clone())).unwrap_or_default();
    if let Some(mut stdin) = spawned.child.stdin.take() {
        tokio::spawn(async move {
            let _ = stdin.write_all(&input).await;
        });
    }
    let out = Arc::new(Mutex::new(Capture::new(limits.text, 0)));
    let err = Arc::new(Mutex::new(Capture::new(limits.log / 2, limits.log / 2)));
    let out_task = spawned
        .child
        .stdout
        .take()
        .map(|s| tokio::spawn(process::drain(s, out.clone())));
    let err_task = spawned
        .child
        .stderr
        .take()
        .map(|s| tokio::spawn(process::drain(s, err.clone())));
    let sink = progress.cloned();
    let max_line = limits.line;
    let max_text = limits.text;
    let progress_task = tokio::spawn(async move {
        let mut read = BufReader::new(spawned.control);
        let mut line = Vec::new();
        while let Ok(Some(())) = protocol::read_line(&mut read, &mut line, max_line).await {
            if let Some(sink) = &sink {
                let text = String::from_utf8_lossy(&line).into_owned();
                sink(protocol::normalize_progress(Value::String(text), max_text));
            }
        }
    });

    let timeout_at = tokio::time::Instant::now() + timeout;
    let mut stop: Option<(bool, tokio::time::Instant)> = None;
    let mut killed = false;
    let mut child = spawned.child;
    let status = loop {
        let deadline = stop.map_or(timeout_at, |s| s.1);
        tokio::select! {
            status = child.wait() => break status.ok(),
            _ = cancel.cancelled(), if stop.is_none() => {
                process::signal_group(spawned.pgid, Signal::SIGTERM);
                stop = Some((true, tokio::time::Instant::now() + config.grace));
            }
            _ = tokio::time::sleep_until(deadline) => match stop {
                None => {
                    process::signal_group(spawned.pgid, Signal::SIGTERM);
                    stop = Some((false, tokio::time::Instant::now() + config.grace));
                }
                Some(_) => {
                    process::signal_group(spawned.pgid, Signal::SIGKILL);
                    killed = true;
                    break child.wait().await.ok();
                }
            },
        }
    };
    // Background jobs the script left behind die with the call.
    process::signal_group(spawned.pgid, Signal::SIGKILL);
    guard.1 = false;
    for task in [out_task, err_task].into_iter().flatten() {
        let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
    }
    let _ = tokio::time::timeout(Duration::from_secs(2), progress_task).await;

    let stderr_tail = {
        let c = err.lock().unwrap_or_else(|e| e.into_inner());
        (!c.is_empty()).then(|| c.render_tail(2000))
    };
    let with_stderr = |mut msg: String| {
        if let Some(t) = &stderr_tail {
            msg.push_str("\nstderr:\n");
            msg.push_str(t);
        }
        ToolResult::error(process::redact(&msg, secrets))
    };
    let entry_name = tool.entry.as_deref().unwrap_or("index.sh");
    let how = if killed {
        format!(
            "the tool ignored SIGTERM for {} and its process group was killed",
            secs(config.grace)
        )
    } else {
        "SIGTERM was sent to the tool's process group".to_owned()
    };
    match (stop, status) {
        (Some((false, _)), _) => with_stderr(format!("timed out after {}; {how}", secs(timeout))),
        (_, Some(s)) if s.success() => {
            let c = out.lock().unwrap_or_else(|e| e.into_inner());
            let mut text = c.render();
            if text.ends_with('\n') {
                text.pop();
            }
            let mut content = vec![Content::text(text)];
            if c.total() > limits.text as u64 {
                content.push(Content::text(format!(
                    "[output truncated by the runtime: kept the first {} of {} bytes]",
                    limits.text,
                    c.total()
                )));
            }
            ToolResult {
                content,
                details: None,
                is_error: false,
                terminate: false,
            }
        }
        (Some((true, _)), _) => with_stderr(format!("cancelled; {how}")),
        (None, Some(s)) => with_stderr(format!("{entry_name} {}", process::describe_exit(s))),
        (None, None) => with_stderr(format!("{entry_name} could not be waited for")),
    }
}
