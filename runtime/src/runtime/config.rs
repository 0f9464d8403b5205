//! What a runtime and a call are set up with: [`RuntimeConfig`] and [`CallOptions`].

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::DEFAULT_ASK_TIMEOUT;
use crate::cancel::CancelToken;
use crate::executor::{LogSink, ProgressSink};
use crate::result::Progress;
use crate::truncate::TruncateOptions;

/// Settings of a [`Runtime`](super::Runtime).
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeConfig {
    pub(crate) default_timeout: Duration,
    pub(crate) truncation: TruncateOptions,
    pub(crate) spill_dir: Option<PathBuf>,
    pub(crate) record_content: bool,
    pub(crate) ask_timeout: Duration,
}

impl RuntimeConfig {
    /// The timeout of a call when neither the call nor the tool's `timeout:` sets one
    /// (default [`DEFAULT_TIMEOUT`](crate::exec::DEFAULT_TIMEOUT), 120 s). The runtime
    /// resolves each call's timeout once — the call's, else the tool's, else this — and
    /// the executor enforces exactly that ([`ExecCall::timeout`](crate::exec::ExecCall::timeout)).
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// Limits applied to every text block of every result (default 50 KB / 2000 lines).
    pub fn truncation(mut self, limits: TruncateOptions) -> Self {
        self.truncation = limits;
        self
    }

    /// Where the full text of a truncated block is saved. The folder is created 0700 and
    /// must be private (a symlink, or a folder owned by another user, is refused; one of
    /// ours that is too open is tightened); files are 0600, hold at most
    /// [`MAX_SPILL_FILE_BYTES`](super::MAX_SPILL_FILE_BYTES), and are pruned by the retention rule of
    /// [`SPILL_RETENTION`](super::SPILL_RETENTION) and [`MAX_SPILL_DIR_BYTES`](super::MAX_SPILL_DIR_BYTES) each time one is written. The
    /// truncation note gives the file's path. Default none: the cut text is dropped.
    /// [`default_spill_dir`](super::default_spill_dir) is what the CLI uses.
    /// A relative path is made absolute against the current directory when it is given
    /// (`std::path::absolute`), so changing directory later does not change it.
    pub fn spill_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.spill_dir = Some(crate::dirs::given(dir.into()));
        self
    }

    /// Records each call's arguments and result on its span (`gen_ai.tool.call.arguments`,
    /// `gen_ai.tool.call.result`; see [`telemetry`](crate::telemetry)), after redaction: a
    /// sensitive input's value never appears, binary content appears as its type, MIME
    /// type and size. Default off, or on when
    /// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is `true`.
    pub fn record_content(mut self, on: bool) -> Self {
        self.record_content = on;
        self
    }

    /// See [`record_content`](Self::record_content).
    pub fn get_record_content(&self) -> bool {
        self.record_content
    }

    /// See [`default_timeout`](Self::default_timeout).
    pub fn get_default_timeout(&self) -> Duration {
        self.default_timeout
    }

    /// How long a call waits for its [host](crate::host::Host)'s approval before it is
    /// denied, and a tool's question (`ctx.confirm`, `ctx.elicit`, ...) for its answer
    /// before it fails in the tool (default [`DEFAULT_ASK_TIMEOUT`], 5 minutes). The wait
    /// does not count against the call's timeout, up to three of these per call.
    pub fn ask_timeout(mut self, timeout: Duration) -> Self {
        self.ask_timeout = timeout;
        self
    }

    /// See [`ask_timeout`](Self::ask_timeout).
    pub fn get_ask_timeout(&self) -> Duration {
        self.ask_timeout
    }

    /// See [`truncation`](Self::truncation).
    pub fn get_truncation(&self) -> TruncateOptions {
        self.truncation
    }

    /// See [`spill_dir`](Self::spill_dir); `None`: cut text is dropped.
    pub fn get_spill_dir(&self) -> Option<&Path> {
        self.spill_dir.as_deref()
    }
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            default_timeout: crate::exec::DEFAULT_TIMEOUT,
            truncation: TruncateOptions::default(),
            spill_dir: None,
            record_content: crate::telemetry::content_from_env(),
            ask_timeout: DEFAULT_ASK_TIMEOUT,
        }
    }
}

/// Per-call options for [`Runtime::call`](super::Runtime::call).
#[derive(Clone, Default)]
pub struct CallOptions {
    pub(crate) tool_call_id: String,
    pub(crate) cancel: CancelToken,
    pub(crate) progress: Option<ProgressSink>,
    pub(crate) log: Option<LogSink>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) host: Option<crate::host::SharedHost>,
}

impl CallOptions {
    /// Default options: no id, a fresh cancel token, no progress sink, no timeout override.
    pub fn new() -> Self {
        Self::default()
    }

    /// The model's tool call id, passed to the tool as `toolCallId`. Default empty: the
    /// runtime makes one up (`call_<n>`).
    pub fn id(mut self, tool_call_id: impl Into<String>) -> Self {
        self.tool_call_id = tool_call_id.into();
        self
    }

    /// Uses `token` to cancel the call (the tool's `AbortSignal`).
    pub fn cancel(mut self, token: CancelToken) -> Self {
        self.cancel = token;
        self
    }

    /// Sends the tool's `onUpdate` progress to `sink`.
    pub fn progress(mut self, sink: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(sink));
        self
    }

    /// Sends progress to a sink already shared as an `Arc` (see
    /// [`progress`](Self::progress)).
    pub fn progress_sink(mut self, sink: ProgressSink) -> Self {
        self.progress = Some(sink);
        self
    }

    /// Sends the tool's stderr lines to `sink`, one line per call of it, redacted like
    /// everything else that leaves the call; see [`LogSink`] for when a line is
    /// attributed to a call. The sink runs on the executor's I/O tasks: it must not block.
    pub fn log(mut self, sink: impl Fn(String) + Send + Sync + 'static) -> Self {
        self.log = Some(Arc::new(sink));
        self
    }

    /// Sends stderr lines to a sink already shared as an `Arc` (see [`log`](Self::log)).
    pub fn log_sink(mut self, sink: LogSink) -> Self {
        self.log = Some(sink);
        self
    }

    /// Overrides the tool's and the runtime's timeout for this call.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Asks `host` instead of the runtime's ([`RuntimeBuilder::host`](super::RuntimeBuilder::host)) about this call:
    /// for a server whose calls come from several clients, each with its own person to
    /// ask (`toolbind serve` asks the MCP client that made the call).
    pub fn host(mut self, host: impl crate::host::Host) -> Self {
        self.host = Some(Arc::new(host));
        self
    }

    /// See [`id`](Self::id).
    pub fn get_id(&self) -> &str {
        &self.tool_call_id
    }

    /// See [`cancel`](Self::cancel).
    pub fn get_cancel(&self) -> &CancelToken {
        &self.cancel
    }

    /// See [`timeout`](Self::timeout); `None`: the tool's, else the runtime's.
    pub fn get_timeout(&self) -> Option<Duration> {
        self.timeout
    }
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("tool_call_id", &self.tool_call_id)
            .field("cancelled", &self.cancel.is_cancelled())
            .field("progress", &self.progress.is_some())
            .field("log", &self.log.is_some())
            .field("timeout", &self.timeout)
            .field("host", &self.host.is_some())
            .finish()
    }
}
