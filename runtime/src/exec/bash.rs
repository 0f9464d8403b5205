//! bash tools: one process per call, no harness.
//!
//! The script runs as `bash index.sh` in its own process group. Its params arrive as one
//! JSON object on stdin (never in argv or the environment); whatever it prints on stdout
//! becomes the result's text (one trailing newline removed) or, with TOOL.md `output: json`,
//! is the whole result object (`{content, details?, isError?}`, any content block); exit
//! status 0 is success and
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

use crate::lock::Locked;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::{Map, Value};
use tokio::io::{AsyncWriteExt, BufReader};

use super::blobs::Binary;
use super::group::Group;
use super::process::{self, Capture, Stdout};
use super::protocol;
use super::pump::{self, Pump};
use super::sandbox::Jail;
use super::stop::{self, Ending, Step, Stopper};
use super::{ExecConfig, Limits};
use crate::cancel::CancelToken;
use crate::executor::{ExecCall, LogSink};
use crate::result::{Content, StopReason, ToolResult};
use crate::telemetry::TraceContext;
use toolbind_codegen::model::{BashOutput, ToolSpec};

/// The script's process group and what bounds it, ended as a cancelled call is when the
/// call's future is dropped before the script was reaped (while `armed`): SIGTERM to the
/// script, so its traps run, SIGKILL once the grace period is over, then what is left of
/// its group, the jail's or the tracking cgroup's members go. A drop cannot wait, so that
/// runs in a task; with no runtime left to run the task: SIGKILL at once.
struct GroupGuard {
    group: Arc<Group>,
    armed: bool,
    grace: Duration,
    jail: Option<super::sandbox::Running>,
    tracker: Option<super::sandbox::CallCgroup>,
}

/// SIGTERM to the script: in a jail, to the process group it runs in there, not to bwrap,
/// whose death would SIGKILL everything at once and skip the traps.
fn terminate(group: &Group, jail: Option<&super::sandbox::Running>) {
    match jail.and_then(|j| j.tool_group()) {
        Some(inner) => group.signal_inner(inner, Signal::SIGTERM),
        None => group.signal(Signal::SIGTERM),
    };
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (group, grace) = (self.group.clone(), self.grace);
        let (jail, tracker) = (self.jail.take(), self.tracker.take());
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            group.signal(Signal::SIGKILL);
            return;
        };
        runtime.spawn(async move {
            // The same abort (SIGTERM, so its traps run) and kill as a cancelled call.
            stop::end_abandoned(grace, group.exited(), |step| match step {
                Step::Abort(_) => terminate(&group, jail.as_ref()),
                Step::Kill(_) => {
                    group.signal(Signal::SIGKILL);
                }
            })
            .await;
            // Background jobs the script left behind go as it is reaped.
            group.wait().await;
            drop((jail, tracker));
        });
    }
}

/// Runs `call` as one `bash` process within `timeout` (resolved by the executor).
pub(crate) async fn run(
    call: &ExecCall<'_>,
    entry: &std::path::Path,
    config: &ExecConfig,
    timeout: Duration,
    secrets: &[String],
    jail: Option<Jail>,
) -> ToolResult {
    let tool = call.tool.spec();
    let (tool_call_id, cancel) = (call.tool_call_id, &call.cancel);
    let (progress, log) = (call.progress.as_ref(), call.log.as_ref());
    let limits = Limits::from(config);
    let started = start(tool, entry, config, &call.params, call.trace.as_ref(), jail);
    let (mut spawned, mut guard) = match started {
        Ok(started) => started,
        Err(result) => return result,
    };
    let mut output = Output::capture(&mut spawned, tool, config, limits, log);
    let updates = pump::Slot::new();
    let mut pump = Pump::new(progress, config.progress_interval);
    let progress_task = read_progress(
        spawned.control,
        updates.clone(),
        config.max_progress_line_bytes.max(1024),
        limits.text,
        guard.group.clone(),
    );

    let mut stopper = Stopper::new(timeout, config.grace);
    // Background jobs the script left behind die with the call: reaping it ends its group.
    let (status, killed) = wait_or_stop(&guard, &mut stopper, cancel, &updates, &mut pump).await;
    guard.armed = false;
    let too_long = output.drained(progress_task).await;
    // The latest update goes out before the result.
    pump.take_from(&updates);
    pump.finish();

    let ended = Ended {
        status,
        killed,
        too_long,
        stopper,
        output,
    };
    ended.result(tool, config, tool_call_id, secrets, guard.jail.as_ref())
}

/// Spawns the script in its own process group, under a [`GroupGuard`], and hands it its
/// params on stdin; `Err` with the call's result when it could not be spawned.
fn start(
    tool: &ToolSpec,
    entry: &std::path::Path,
    config: &ExecConfig,
    params: &Map<String, Value>,
    trace: Option<&TraceContext>,
    jail: Option<Jail>,
) -> Result<(process::Spawned, GroupGuard), ToolResult> {
    // A one-process call's trace context is its environment's (W3C's names for it).
    let trace_env: Vec<(&str, &str)> = trace
        .map(|t| {
            std::iter::once(("TRACEPARENT", t.traceparent.as_str()))
                .chain(t.tracestate.as_deref().map(|s| ("TRACESTATE", s)))
                .collect()
        })
        .unwrap_or_default();
    let mut spawned = match process::spawn(
        &config.bash,
        &[entry.as_os_str()],
        tool,
        config,
        process::Io {
            stdin: true,
            stdout: Stdout::Piped,
            env: &trace_env,
        },
        jail,
    ) {
        Ok(s) => s,
        Err(e) => return Err(ToolResult::stopped(e.stop_reason(), e.to_string())),
    };
    let guard = GroupGuard {
        group: spawned.group.clone(),
        armed: true,
        grace: config.grace,
        jail: spawned.jail.take(),
        tracker: spawned.tracker.take(),
    };
    let input = serde_json::to_vec(&Value::Object(params.clone())).unwrap_or_default();
    if let Some(mut stdin) = spawned.stdin.take() {
        tokio::spawn(async move {
            let _ = stdin.write_all(&input).await;
        });
    }
    Ok((spawned, guard))
}

/// The script's stdout and stderr, each read into its capture by a task of its own.
struct Output {
    /// `output: json`: stdout is the whole result object.
    json: bool,
    /// How much of stdout is kept.
    out_cap: usize,
    out: Arc<Mutex<Capture>>,
    err: Arc<Mutex<Capture>>,
    tasks: [Option<tokio::task::JoinHandle<()>>; 2],
}

impl Output {
    /// Starts reading the script's stdout and stderr (each stderr line also goes to `log`).
    fn capture(
        spawned: &mut process::Spawned,
        tool: &ToolSpec,
        config: &ExecConfig,
        limits: Limits,
        log: Option<&LogSink>,
    ) -> Output {
        // `output: json`: stdout is one result object, bounded as a harness's result message
        // is (a result with an image is larger than the text limit).
        let json = tool.bash_output == BashOutput::Json;
        let out_cap = if json {
            config.max_line_bytes.max(1024)
        } else {
            limits.text
        };
        let out = Arc::new(Mutex::new(Capture::new(out_cap, 0)));
        let err = Arc::new(Mutex::new(Capture::new(limits.log / 2, limits.log / 2)));
        let out_task = spawned
            .stdout
            .take()
            .map(|s| tokio::spawn(process::drain(s, out.clone())));
        // One process per call: every stderr line is this call's.
        let err_task = spawned.stderr.take().map(|s| match log {
            Some(log) => tokio::spawn(process::drain_lines(s, err.clone(), log.clone())),
            None => tokio::spawn(process::drain(s, err.clone())),
        });
        Output {
            json,
            out_cap,
            out,
            err,
            tasks: [out_task, err_task],
        }
    }

    /// Waits (a little) for stdout and stderr to be read to their end, then for the
    /// progress reader: the limit a progress line went over, if one did.
    async fn drained(
        &mut self,
        progress_task: tokio::task::JoinHandle<Option<usize>>,
    ) -> Option<usize> {
        for task in std::mem::take(&mut self.tasks).into_iter().flatten() {
            let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
        }
        tokio::time::timeout(Duration::from_secs(2), progress_task)
            .await
            .ok()
            .and_then(|r| r.ok())
            .flatten()
    }
}

/// Reads the script's fd 3. Each line is progress, and only progress: it replaces the
/// call's latest update. A line over the limit ends the call (its group is killed) with an
/// error naming it: the task returns that limit.
fn read_progress(
    control: tokio::net::UnixStream,
    slot: Arc<pump::Slot>,
    max_line: usize,
    max_text: usize,
    group: Arc<Group>,
) -> tokio::task::JoinHandle<Option<usize>> {
    tokio::spawn(async move {
        let mut read = BufReader::new(control);
        let mut line = Vec::new();
        loop {
            match protocol::read_line(&mut read, &mut line, max_line).await {
                Ok(Some(())) => {
                    let text = String::from_utf8_lossy(&line).into_owned();
                    slot.put(protocol::progress_line(text, max_text));
                    line.clear();
                }
                Err(protocol::LineError::TooLong(max)) => {
                    group.signal(Signal::SIGKILL);
                    return Some(max);
                }
                Ok(None) | Err(protocol::LineError::Io(_)) => return None,
            }
        }
    })
}

/// Waits for the script to exit, handing its progress on meanwhile, and stops it when the
/// call is cancelled or times out: SIGTERM to the script, SIGKILL to its group once the
/// grace period is over. Its exit status (when it could be had), and whether it had to be
/// killed. Reaping it ends what is left of its group. Dropped before that, `guard` ends it
/// as a cancelled call.
async fn wait_or_stop(
    guard: &GroupGuard,
    stopper: &mut Stopper,
    cancel: &CancelToken,
    updates: &pump::Slot,
    pump: &mut Pump<'_>,
) -> (Option<std::process::ExitStatus>, bool) {
    let group = &guard.group;
    loop {
        let step = tokio::select! {
            biased;
            _ = updates.ready() => { pump.take_from(updates); None }
            _ = pump::until(pump.due()) => { pump.tick(); None }
            _ = group.exited() => return (group.wait().await, false),
            _ = cancel.cancelled(), if stopper.ending().is_none() => stopper.cancel(),
            _ = tokio::time::sleep_until(stopper.deadline()) => Some(stopper.expire()),
        };
        match step {
            // The abort signal of a bash tool: SIGTERM, so its traps run.
            Some(Step::Abort(_)) => terminate(group, guard.jail.as_ref()),
            Some(Step::Kill(_)) => {
                group.signal(Signal::SIGKILL);
                return (group.wait().await, true);
            }
            None => {}
        }
    }
}

/// How the script ended, and what it left behind.
struct Ended {
    /// Its exit status, when it could be waited for.
    status: Option<std::process::ExitStatus>,
    /// It ignored SIGTERM for the grace period, so its group was killed.
    killed: bool,
    /// The limit a progress line went over (its group was killed for it).
    too_long: Option<usize>,
    stopper: Stopper,
    output: Output,
}

impl Ended {
    /// The call's result: what the script printed, or why it failed (with the tail of its
    /// stderr).
    fn result(
        &self,
        tool: &ToolSpec,
        config: &ExecConfig,
        tool_call_id: &str,
        secrets: &[String],
        jail: Option<&super::sandbox::Running>,
    ) -> ToolResult {
        let limits = Limits::from(config);
        let stopper = &self.stopper;
        let stderr_tail = {
            let c = self.output.err.locked();
            (!c.is_empty()).then(|| c.render_tail(2000, secrets))
        };
        let with_stderr = |mut msg: String| {
            if let Some(t) = &stderr_tail {
                msg.push_str("\nstderr:\n");
                msg.push_str(t);
            }
            ToolResult::error(process::redact(&msg, secrets))
        };
        let entry_name = tool.entry.as_deref().unwrap_or("index.sh");
        let how = if self.killed {
            format!(
                "the tool ignored SIGTERM for {} and its process group was killed",
                stopper.grace()
            )
        } else {
            "SIGTERM was sent to the tool's process group".to_owned()
        };
        if let Some(max) = self.too_long {
            return with_stderr(format!(
                "a progress line written to fd 3 was longer than the {} limit for progress lines, so the tool's process group was killed (write shorter lines; the result goes to stdout)",
                human_bytes(max)
            ))
            .with_stop(StopReason::ProtocolError);
        }
        match (stopper.ending(), self.status) {
            (Some(Ending::TimedOut), _) => with_stderr(stopper.describe(Ending::TimedOut, &how))
                .with_stop(stopper.reason(Ending::TimedOut)),
            (_, Some(s)) if s.success() && self.output.json => {
                let binary = Binary {
                    dir: config.spill_dir.as_deref(),
                    tool: &tool.name,
                    tool_call_id,
                    bound: limits.binary,
                    blobs: Default::default(),
                };
                self.output
                    .json_result(entry_name, binary, limits.text, with_stderr)
            }
            (_, Some(s)) if s.success() => self.output.text_result(limits.text),
            (Some(Ending::Cancelled), _) => with_stderr(stopper.describe(Ending::Cancelled, &how))
                .with_stop(stopper.reason(Ending::Cancelled)),
            (None, Some(s)) => match jail {
                Some(j) => {
                    let what = format!("{entry_name} {}", j.describe(s));
                    match j.explain(Some(s), stderr_tail.as_deref().unwrap_or("")) {
                        Some((stop, l)) => with_stderr(format!("{l}; {what}")).with_stop(stop),
                        None => with_stderr(what).with_stop(exit_stop(s)),
                    }
                }
                None => with_stderr(format!("{entry_name} {}", process::describe_exit(s)))
                    .with_stop(exit_stop(s)),
            },
            (None, None) => with_stderr(format!("{entry_name} could not be waited for"))
                .with_stop(StopReason::Crashed),
        }
    }
}

impl Output {
    /// An `output: json` script's result: the object it printed on stdout.
    fn json_result(
        &self,
        entry_name: &str,
        mut binary: Binary,
        max_text: usize,
        with_stderr: impl Fn(String) -> ToolResult,
    ) -> ToolResult {
        let c = self.out.locked();
        if c.total() > self.out_cap as u64 {
            return with_stderr(format!(
                "{entry_name} has `output: json`, and its stdout ({} bytes) is longer than the {} limit for a result (ExecConfig::max_line_bytes)",
                c.total(),
                human_bytes(self.out_cap)
            ))
            .with_stop(StopReason::ProtocolError);
        }
        let text = c.render();
        match serde_json::from_str::<Value>(text.trim()) {
            Ok(v) => protocol::normalize_result_with(v, max_text, &mut binary),
            Err(e) => with_stderr(format!(
                "{entry_name} has `output: json`, but its stdout is not a JSON result ({e}); print one object such as {{\"content\": [{{\"type\": \"text\", \"text\": \"...\"}}]}}: {}",
                protocol::preview(text.as_bytes())
            ))
            .with_stop(StopReason::ProtocolError),
        }
    }

    /// A script's result: its stdout as text, one trailing newline removed, with a note
    /// when it was cut.
    fn text_result(&self, max_text: usize) -> ToolResult {
        let c = self.out.locked();
        let mut text = c.render();
        if text.ends_with('\n') {
            text.pop();
        }
        let mut result = ToolResult::new(vec![Content::text(text)]);
        if c.total() > max_text as u64 {
            result.push_runtime_note(protocol::note(&protocol::Cut::Output {
                kept: max_text as u64,
                total: c.total(),
            }));
        }
        result
    }
}

/// A bash tool's exit: a non-zero code is the tool's own failure (the contract); a signal
/// (bwrap reports one as 128 + N) is a crash.
fn exit_stop(status: std::process::ExitStatus) -> StopReason {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), None) if c <= 128 => StopReason::ToolError,
        _ => StopReason::Crashed,
    }
}

/// "1 MiB", "512 KiB", "100 bytes".
fn human_bytes(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}
