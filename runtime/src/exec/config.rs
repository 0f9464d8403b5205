//! [`ExecConfig`]: the settings of a [`SubprocessExecutor`](super::SubprocessExecutor).

use std::path::{Path, PathBuf};
use std::time::Duration;

use toolbind_codegen::model::WorkerMode;

use crate::sandbox::SandboxPolicy;

/// Settings of a [`SubprocessExecutor`](super::SubprocessExecutor): start from
/// [`ExecConfig::default`] and change what you need with the consuming setters.
///
/// ```
/// use std::time::Duration;
/// use toolbind::exec::ExecConfig;
/// use toolbind::sandbox::{SandboxMode, SandboxPolicy};
///
/// let config = ExecConfig::default()
///     .grace(Duration::from_secs(5))
///     .env_allow(["GITHUB_TOKEN"])
///     .sandbox(SandboxPolicy::default().mode(SandboxMode::Required));
/// assert_eq!(config.get_grace(), Duration::from_secs(5));
/// ```
#[derive(Debug, Clone)]
pub struct ExecConfig {
    pub(crate) grace: Duration,
    pub(crate) worker_mode: WorkerMode,
    pub(crate) idle_timeout: Duration,
    pub(crate) env_allow: Vec<String>,
    pub(crate) env_set: Vec<(String, String)>,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) cache_dir: PathBuf,
    pub(crate) max_line_bytes: usize,
    pub(crate) max_text_bytes: usize,
    pub(crate) max_binary_bytes: usize,
    pub(crate) spill_dir: Option<PathBuf>,
    pub(crate) max_log_bytes: usize,
    pub(crate) node: String,
    pub(crate) python: String,
    pub(crate) bash: String,
    pub(crate) progress_interval: Duration,
    pub(crate) max_progress_line_bytes: usize,
    pub(crate) sandbox: SandboxPolicy,
    pub(crate) source_check_interval: Duration,
}

impl Default for ExecConfig {
    fn default() -> Self {
        ExecConfig {
            grace: Duration::from_secs(2),
            worker_mode: WorkerMode::Warm,
            idle_timeout: Duration::from_secs(300),
            env_allow: Vec::new(),
            env_set: Vec::new(),
            cwd: None,
            cache_dir: crate::dirs::cache_root(),
            max_line_bytes: 16 << 20,
            max_text_bytes: 4 << 20,
            max_binary_bytes: 16 << 20,
            spill_dir: None,
            max_log_bytes: 64 << 10,
            node: "node".into(),
            python: "python3".into(),
            bash: "bash".into(),
            progress_interval: Duration::from_millis(50),
            max_progress_line_bytes: 1 << 20,
            sandbox: SandboxPolicy::default(),
            source_check_interval: Duration::from_secs(1),
        }
    }
}

impl ExecConfig {
    /// The defaults; see each setter.
    pub fn new() -> Self {
        Self::default()
    }

    /// How long a cancelled or timed-out call may take to stop after its abort signal
    /// before its process group is killed. Default 2 s.
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Whether Node and Python tools keep a warm process; [`WorkerMode::Default`] means
    /// warm. A tool's own `worker:` setting takes precedence. Default warm.
    pub fn worker_mode(mut self, mode: WorkerMode) -> Self {
        self.worker_mode = mode;
        self
    }

    /// A warm worker with no call for this long is stopped. Default 5 minutes.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Names of agent environment variables every tool may see, on top of the basics
    /// (replaces the list). Default none.
    pub fn env_allow<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.env_allow = names.into_iter().map(Into::into).collect();
        self
    }

    /// Variables set for every tool, overriding inherited ones, e.g. integration config
    /// (replaces the list). Default none.
    pub fn env_set<I, K, V>(mut self, pairs: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        self.env_set = pairs
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        self
    }

    /// The tools' working directory. Default: the agent's (a jailed tool runs there when
    /// the jail shows it, in its state folder otherwise).
    /// A relative path is made absolute against the current directory when it is given
    /// (`std::path::absolute`), so changing directory later does not change it.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(crate::dirs::given(dir.into()));
        self
    }

    /// Where harness files and transpiled TypeScript are cached. Default
    /// `$XDG_CACHE_HOME/toolbind`, else `~/.cache/toolbind`, else `$TMPDIR/toolbind-<euid>`.
    /// Code found there runs as this user, so the folder must be private: it is created
    /// 0700, and a folder that is a symlink or owned by another user is refused (one of
    /// ours that is too open is tightened to 0700).
    /// A relative path is made absolute against the current directory when it is given
    /// (`std::path::absolute`), so changing directory later does not change it.
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = crate::dirs::given(dir.into());
        self
    }

    /// The longest protocol message accepted from a harness (at least 1 KiB). Default
    /// 16 MiB.
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = bytes;
        self
    }

    /// The most result (or progress) text kept per call; more is cut with a note.
    /// Default 4 MiB. (The [`Runtime`](crate::Runtime) then applies the model-facing
    /// 50 KB / 2000 lines limit.)
    pub fn max_text_bytes(mut self, bytes: usize) -> Self {
        self.max_text_bytes = bytes;
        self
    }

    /// The most binary data a result holds in memory: the base64 text of its images,
    /// audio and resource blobs, counted in order. A block that would go past it is
    /// decoded into a file in the [spill folder](Self::spill_dir) while the tool is still
    /// sending it (memory holds one 1 MiB piece of it at a time) and replaced by a
    /// `resource_link` to that file, with its MIME type and size; without a spill folder
    /// it is replaced by a text block saying why. Binary data is bounded apart from text
    /// ([`max_text_bytes`](Self::max_text_bytes)) and from the line limit: a harness
    /// sends long base64 strings in pieces. At most 256 MiB of a call's binary data is
    /// saved; past that a block is refused. Default 16 MiB.
    pub fn max_binary_bytes(mut self, bytes: usize) -> Self {
        self.max_binary_bytes = bytes;
        self
    }

    /// Where binary blocks over [`max_binary_bytes`](Self::max_binary_bytes) are saved:
    /// the same folder, with the same rules, as
    /// [`RuntimeConfig::spill_dir`](crate::runtime::RuntimeConfig::spill_dir) (created
    /// 0700 and verified private; files 0600, named
    /// `<tool>-<call id>-<block>-<pid>-<n>.<ext>` with the extension of the block's MIME
    /// type, written as `.part` until whole; pruned after 7 days or past 256 MiB in all).
    /// Default none. A [`Runtime`](crate::Runtime) built without its own executor passes
    /// its spill folder here.
    /// A relative path is made absolute against the current directory when it is given
    /// (`std::path::absolute`), so changing directory later does not change it.
    pub fn spill_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.spill_dir = Some(crate::dirs::given(dir.into()));
        self
    }

    /// How much of a process's stderr is kept for error messages: half from the start,
    /// half from the end. Default 64 KiB.
    pub fn max_log_bytes(mut self, bytes: usize) -> Self {
        self.max_log_bytes = bytes;
        self
    }

    /// The Node binary. Default `node`.
    pub fn node(mut self, program: impl Into<String>) -> Self {
        self.node = program.into();
        self
    }

    /// The Python binary. Default `python3`.
    pub fn python(mut self, program: impl Into<String>) -> Self {
        self.python = program.into();
        self
    }

    /// The bash binary. Default `bash`.
    pub fn bash(mut self, program: impl Into<String>) -> Self {
        self.bash = program.into();
        self
    }

    /// The shortest time between two progress updates forwarded to a call's sink. Updates
    /// wait in small bounded queues (8 updates, 1 MiB of text; past that the oldest is
    /// dropped, so memory never grows and the latest always arrives), and whatever is
    /// still queued is forwarded, in order, before the result. Default 50 ms.
    pub fn progress_interval(mut self, interval: Duration) -> Self {
        self.progress_interval = interval;
        self
    }

    /// The longest progress line a bash tool may write to fd 3; a longer one ends the call
    /// with an error naming the limit. Default 1 MiB.
    pub fn max_progress_line_bytes(mut self, bytes: usize) -> Self {
        self.max_progress_line_bytes = bytes;
        self
    }

    /// The jail tools run in: mode, grants, network, limits. Default
    /// [`SandboxMode::Auto`](crate::sandbox::SandboxMode::Auto) with the default limits;
    /// see [`SandboxPolicy`].
    pub fn sandbox(mut self, policy: SandboxPolicy) -> Self {
        self.sandbox = policy;
        self
    }

    /// How often a warm worker's sources (its entry, TOOL.md and the source files beside
    /// the entry) are checked for edits: a worker checked within this interval serves the
    /// call without a `stat`; an edit found starts a fresh worker. Whether an entry exports
    /// `prepareArguments`, as its harness said, is trusted for as long. Default 1 s, so a
    /// busy worker's calls do not each pay for the check; `Duration::ZERO` checks at every
    /// call (while editing a tool).
    pub fn source_check_interval(mut self, interval: Duration) -> Self {
        self.source_check_interval = interval;
        self
    }

    /// See [`source_check_interval`](Self::source_check_interval).
    pub fn get_source_check_interval(&self) -> Duration {
        self.source_check_interval
    }

    /// See [`grace`](Self::grace).
    pub fn get_grace(&self) -> Duration {
        self.grace
    }

    /// See [`worker_mode`](Self::worker_mode).
    pub fn get_worker_mode(&self) -> WorkerMode {
        self.worker_mode
    }

    /// See [`idle_timeout`](Self::idle_timeout).
    pub fn get_idle_timeout(&self) -> Duration {
        self.idle_timeout
    }

    /// See [`env_allow`](Self::env_allow).
    pub fn get_env_allow(&self) -> &[String] {
        &self.env_allow
    }

    /// See [`env_set`](Self::env_set).
    pub fn get_env_set(&self) -> &[(String, String)] {
        &self.env_set
    }

    /// See [`cwd`](Self::cwd); `None`: the agent's working directory.
    pub fn get_cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// See [`cache_dir`](Self::cache_dir).
    pub fn get_cache_dir(&self) -> &Path {
        &self.cache_dir
    }

    /// See [`max_line_bytes`](Self::max_line_bytes).
    pub fn get_max_line_bytes(&self) -> usize {
        self.max_line_bytes
    }

    /// See [`max_text_bytes`](Self::max_text_bytes).
    pub fn get_max_text_bytes(&self) -> usize {
        self.max_text_bytes
    }

    /// See [`max_binary_bytes`](Self::max_binary_bytes).
    pub fn get_max_binary_bytes(&self) -> usize {
        self.max_binary_bytes
    }

    /// See [`spill_dir`](Self::spill_dir); `None`: binary blocks over the bound are refused.
    pub fn get_spill_dir(&self) -> Option<&Path> {
        self.spill_dir.as_deref()
    }

    /// See [`max_log_bytes`](Self::max_log_bytes).
    pub fn get_max_log_bytes(&self) -> usize {
        self.max_log_bytes
    }

    /// See [`node`](Self::node).
    pub fn get_node(&self) -> &str {
        &self.node
    }

    /// See [`python`](Self::python).
    pub fn get_python(&self) -> &str {
        &self.python
    }

    /// See [`bash`](Self::bash).
    pub fn get_bash(&self) -> &str {
        &self.bash
    }

    /// See [`progress_interval`](Self::progress_interval).
    pub fn get_progress_interval(&self) -> Duration {
        self.progress_interval
    }

    /// See [`max_progress_line_bytes`](Self::max_progress_line_bytes).
    pub fn get_max_progress_line_bytes(&self) -> usize {
        self.max_progress_line_bytes
    }

    /// See [`sandbox`](Self::sandbox).
    pub fn get_sandbox(&self) -> &SandboxPolicy {
        &self.sandbox
    }
}
