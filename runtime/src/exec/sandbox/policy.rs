//! What a tool process may reach: the policy the runtime's owner sets, and the per-tool
//! state folder it implies.

use super::SandboxMode;
use crate::exec::error::SetupError;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toolbind_codegen::model::{Fnv, ToolSpec};

/// Resource limits of one jailed call (one-shot) or worker (warm). `None`: unlimited.
/// Start from [`SandboxLimits::default`] and change what you need:
///
/// ```
/// use std::time::Duration;
/// use toolbind::sandbox::SandboxLimits;
/// let limits = SandboxLimits::default()
///     .cpu(Duration::from_secs(30))
///     .memory(None)
///     .processes(64);
/// assert_eq!(limits.get_processes(), Some(64));
/// assert!(limits.is_explicit("processes") && !limits.is_explicit("call_memory"));
/// ```
///
/// The limits remember which of them the owner set (each setter called, even with the
/// default's value): a limit set explicitly that cannot be enforced on this machine fails
/// the call under [`SandboxMode::Required`] before the tool runs, with the fix; a default
/// that cannot be enforced is reported as not enforced ([`SandboxStatus::limits`]) and the
/// call runs.
///
/// [`SandboxStatus::limits`]: super::SandboxStatus::limits
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxLimits {
    pub(crate) memory: Option<u64>,
    pub(crate) cpu: Option<Duration>,
    pub(crate) open_files: u64,
    pub(crate) file_size: Option<u64>,
    pub(crate) processes: Option<u64>,
    pub(crate) tmp_size: u64,
    pub(crate) call_memory: Option<u64>,
    /// Which setters were called: bits of [`Self::NAMES`].
    pub(crate) explicit: u8,
}

impl SandboxLimits {
    /// Bytes of private writable memory per process (`RLIMIT_DATA`). Default 1 GiB.
    pub fn memory(mut self, bytes: impl Into<Option<u64>>) -> Self {
        self.memory = bytes.into();
        self.explicit |= Self::bit("memory");
        self
    }

    /// CPU time per call (`RLIMIT_CPU`, re-armed at each call of a warm worker).
    /// Default 300 s.
    pub fn cpu(mut self, time: impl Into<Option<Duration>>) -> Self {
        self.cpu = time.into();
        self.explicit |= Self::bit("cpu");
        self
    }

    /// Open files per process (`RLIMIT_NOFILE`); at least 256. Default 1024.
    pub fn open_files(mut self, n: u64) -> Self {
        self.open_files = n;
        self.explicit |= Self::bit("open_files");
        self
    }

    /// The largest file a tool may write (`RLIMIT_FSIZE`). Default 1 GiB.
    pub fn file_size(mut self, bytes: impl Into<Option<u64>>) -> Self {
        self.file_size = bytes.into();
        self.explicit |= Self::bit("file_size");
        self
    }

    /// Processes (and threads) in the jail at once: the call's cgroup (v1 `pids`, or a v2
    /// leaf's `pids.max`) where this uid can make one, else `RLIMIT_NPROC` for a non-root
    /// runtime. Default 256.
    pub fn processes(mut self, n: impl Into<Option<u64>>) -> Self {
        self.processes = n.into();
        self.explicit |= Self::bit("processes");
        self
    }

    /// Size of the jail's private `/tmp` and of its `/dev/shm`. Default 256 MiB.
    pub fn tmp_size(mut self, bytes: u64) -> Self {
        self.tmp_size = bytes;
        self.explicit |= Self::bit("tmp_size");
        self
    }

    /// Bytes of memory of all the jail's processes together (and what they keep in its
    /// `/tmp`): the call's cgroup (v1 `memory`, or a v2 leaf's `memory.max`) where this uid
    /// can make one, else not bounded (the per-process
    /// [`memory`](Self::memory) limit still holds). Default 2 GiB.
    pub fn call_memory(mut self, bytes: impl Into<Option<u64>>) -> Self {
        self.call_memory = bytes.into();
        self.explicit |= Self::bit("call_memory");
        self
    }

    /// The names [`is_explicit`](Self::is_explicit) takes, in bit order.
    const NAMES: [&'static str; 7] = [
        "memory",
        "cpu",
        "open_files",
        "file_size",
        "processes",
        "tmp_size",
        "call_memory",
    ];

    fn bit(name: &str) -> u8 {
        Self::NAMES
            .iter()
            .position(|n| *n == name)
            .map_or(0, |i| 1 << i)
    }

    /// Whether the limit `name` (`memory`, `cpu`, `open_files`, `file_size`, `processes`,
    /// `tmp_size`, `call_memory`: the setter's name) was set by its setter rather than left
    /// at its default.
    pub fn is_explicit(&self, name: &str) -> bool {
        self.explicit & Self::bit(name) != 0
    }

    /// See [`memory`](Self::memory).
    pub fn get_memory(&self) -> Option<u64> {
        self.memory
    }

    /// See [`cpu`](Self::cpu).
    pub fn get_cpu(&self) -> Option<Duration> {
        self.cpu
    }

    /// See [`open_files`](Self::open_files).
    pub fn get_open_files(&self) -> u64 {
        self.open_files
    }

    /// See [`file_size`](Self::file_size).
    pub fn get_file_size(&self) -> Option<u64> {
        self.file_size
    }

    /// See [`processes`](Self::processes).
    pub fn get_processes(&self) -> Option<u64> {
        self.processes
    }

    /// See [`tmp_size`](Self::tmp_size).
    pub fn get_tmp_size(&self) -> u64 {
        self.tmp_size
    }

    /// See [`call_memory`](Self::call_memory).
    pub fn get_call_memory(&self) -> Option<u64> {
        self.call_memory
    }
}

impl Default for SandboxLimits {
    fn default() -> Self {
        SandboxLimits {
            memory: Some(1 << 30),
            cpu: Some(Duration::from_secs(300)),
            open_files: 1024,
            file_size: Some(1 << 30),
            processes: Some(256),
            tmp_size: 256 << 20,
            call_memory: Some(2 << 30),
            explicit: 0,
        }
    }
}

/// How the runtime's hints name a grant: in the words the user can type where they work.
/// A hint names one vocabulary, never both: a program on the Rust API is told of
/// [`SandboxPolicy::allow_read`], a user of the `toolbind` command of `--allow-read PATH`.
///
/// ```
/// use toolbind::sandbox::{GrantHints, SandboxPolicy};
/// let p = SandboxPolicy::new().grant_hints(GrantHints::Flags);
/// assert_eq!(p.get_grant_hints().grant(), "`--allow-read PATH` or `--allow-write PATH`");
/// assert!(GrantHints::default().grant().starts_with("`SandboxPolicy::allow_read(PATH)`"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum GrantHints {
    /// [`SandboxPolicy::allow_read`] / [`SandboxPolicy::allow_write`] (the default).
    #[default]
    RustApi,
    /// The `toolbind` command's flags, `--allow-read PATH` / `--allow-write PATH`.
    Flags,
}

impl GrantHints {
    /// How to grant a path, in these words.
    pub fn grant(self) -> &'static str {
        match self {
            GrantHints::RustApi => {
                "`SandboxPolicy::allow_read(PATH)` or `SandboxPolicy::allow_write(PATH)`"
            }
            GrantHints::Flags => "`--allow-read PATH` or `--allow-write PATH`",
        }
    }
}

/// What a tool process may reach: the sandbox mode, grants, network and limits.
///
/// ```
/// use toolbind::sandbox::{SandboxMode, SandboxPolicy};
/// let policy = SandboxPolicy::new()
///     .mode(SandboxMode::Required)
///     .allow_read("/srv/mail/sample.db")
///     .allow_write("/srv/audio")
///     .network(false);
/// assert_eq!(policy.get_write().len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    pub(crate) mode: SandboxMode,
    pub(crate) network: bool,
    pub(crate) read: Vec<PathBuf>,
    pub(crate) write: Vec<PathBuf>,
    pub(crate) limits: SandboxLimits,
    pub(crate) state_dir: Option<PathBuf>,
    pub(crate) bwrap: PathBuf,
    pub(crate) hints: GrantHints,
}

impl Default for SandboxPolicy {
    fn default() -> Self {
        SandboxPolicy {
            mode: SandboxMode::Auto,
            network: true,
            read: Vec::new(),
            write: Vec::new(),
            limits: SandboxLimits::default(),
            state_dir: None,
            bwrap: PathBuf::from("bwrap"),
            hints: GrantHints::default(),
        }
    }
}

impl SandboxPolicy {
    /// The defaults: `auto`, network on, no grants, default limits.
    pub fn new() -> Self {
        Self::default()
    }

    /// No jail at all; see [`SandboxMode::Off`] for what still holds.
    pub fn off() -> Self {
        Self::default().mode(SandboxMode::Off)
    }

    /// The sandbox mode. Default [`SandboxMode::Auto`].
    pub fn mode(mut self, mode: SandboxMode) -> Self {
        self.mode = mode;
        self
    }

    /// Network access (default on; seed tools fetch the web). A tool's TOOL.md
    /// `sandbox: {network: false}` turns it off for that tool.
    pub fn network(mut self, on: bool) -> Self {
        self.network = on;
        self
    }

    /// Grants every tool read access to `path`.
    /// A relative path is made absolute against the current directory when it is given
    /// (`std::path::absolute`), so changing directory later does not change it.
    pub fn allow_read(mut self, path: impl Into<PathBuf>) -> Self {
        self.read.push(crate::dirs::given(path.into()));
        self
    }

    /// Grants every tool read and write access to `path`.
    /// A relative path is made absolute against the current directory when it is given
    /// (`std::path::absolute`), so changing directory later does not change it.
    pub fn allow_write(mut self, path: impl Into<PathBuf>) -> Self {
        self.write.push(crate::dirs::given(path.into()));
        self
    }

    /// Resource limits inside the jail. Default [`SandboxLimits::default`].
    pub fn limits(mut self, limits: SandboxLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Where the per-tool state folders live (`<state_dir>/<tool>`). Default:
    /// `$XDG_STATE_HOME/toolbind/<hash of the tools folder>/`, else
    /// `~/.local/state/toolbind/<hash>/`, else `$TMPDIR/toolbind-<euid>/state/<hash>/`.
    /// Every folder from this root down is created `0700` and checked before each jailed
    /// process starts: a symlink, or a folder owned by another user, is refused.
    /// A relative path is made absolute against the current directory when it is given
    /// (`std::path::absolute`), so changing directory later does not change it.
    pub fn state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(crate::dirs::given(dir.into()));
        self
    }

    /// The bubblewrap binary. Default `bwrap` (looked up on `PATH`).
    pub fn bwrap(mut self, program: impl Into<PathBuf>) -> Self {
        self.bwrap = program.into();
        self
    }

    /// How hints about a path the jail does not show name the grant that would show it.
    /// Default [`GrantHints::RustApi`]; the `toolbind` command sets [`GrantHints::Flags`].
    pub fn grant_hints(mut self, hints: GrantHints) -> Self {
        self.hints = hints;
        self
    }

    /// See [`grant_hints`](Self::grant_hints).
    pub fn get_grant_hints(&self) -> GrantHints {
        self.hints
    }

    /// See [`mode`](Self::mode).
    pub fn get_mode(&self) -> SandboxMode {
        self.mode
    }

    /// See [`network`](Self::network).
    pub fn get_network(&self) -> bool {
        self.network
    }

    /// The paths every tool may read ([`allow_read`](Self::allow_read)).
    pub fn get_read(&self) -> &[PathBuf] {
        &self.read
    }

    /// The paths every tool may read and write ([`allow_write`](Self::allow_write)).
    pub fn get_write(&self) -> &[PathBuf] {
        &self.write
    }

    /// See [`limits`](Self::limits).
    pub fn get_limits(&self) -> &SandboxLimits {
        &self.limits
    }

    /// See [`state_dir`](Self::state_dir); `None`: the default location.
    pub fn get_state_dir(&self) -> Option<&Path> {
        self.state_dir.as_deref()
    }

    /// See [`bwrap`](Self::bwrap).
    pub fn get_bwrap(&self) -> &Path {
        &self.bwrap
    }

    /// The state folder of `tool`: writable in the jail, its `HOME`, kept between calls.
    pub fn tool_state_dir(&self, tool: &crate::ToolInfo) -> PathBuf {
        self.state_dir_of(tool.spec())
    }

    /// [`tool_state_dir`](Self::tool_state_dir) of codegen's model of the tool.
    pub(crate) fn state_dir_of(&self, tool: &ToolSpec) -> PathBuf {
        let (root, below) = self.state_location(tool);
        below.iter().fold(root, |p, c| p.join(c))
    }

    /// The state root and the folders below it that make `tool`'s state folder.
    fn state_location(&self, tool: &ToolSpec) -> (PathBuf, Vec<String>) {
        match &self.state_dir {
            Some(root) => (root.clone(), vec![tool.name.clone()]),
            None => {
                let tools_folder = tool.dir.parent().unwrap_or(&tool.dir);
                let mut h = Fnv::new();
                h.write(tools_folder.as_os_str().as_bytes());
                (
                    crate::dirs::state_root(),
                    vec![format!("{:08x}", h.finish() as u32), tool.name.clone()],
                )
            }
        }
    }

    /// [`tool_state_dir`](Self::tool_state_dir), created if missing and checked, every
    /// time, to be a private folder of this user's reached without following a symlink;
    /// its path as the bind mount takes it.
    pub(super) fn checked_state_dir(&self, tool: &ToolSpec) -> Result<PathBuf, SetupError> {
        let (root, below) = self.state_location(tool);
        if self.state_dir.is_some() {
            // `<DIR>/<tool>`: a DIR holding toolbind's own state root would hand a tool
            // named `spill`, `http-token`'s folder or a hash folder what is not its own.
            let real = |p: &Path| {
                p.canonicalize()
                    .unwrap_or_else(|_| std::path::absolute(p).unwrap_or_else(|_| p.into()))
            };
            let own = real(&crate::dirs::state_root());
            if own.starts_with(real(&root)) {
                return Err(SetupError::StateHoldsOwn { root, own });
            }
        }
        let below: Vec<&str> = below.iter().map(String::as_str).collect();
        crate::dirs::private_subdir(&root, &below).map_err(|why| SetupError::StateDir {
            tool: tool.name.clone(),
            why,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setter_marks_its_limit_explicit_even_with_the_defaults_value() {
        let d = SandboxLimits::default();
        for name in SandboxLimits::NAMES {
            assert!(!d.is_explicit(name), "{name}");
        }
        let set = d
            .clone()
            .memory(d.memory)
            .cpu(d.cpu)
            .open_files(d.open_files)
            .file_size(d.file_size)
            .processes(d.processes)
            .tmp_size(d.tmp_size)
            .call_memory(d.call_memory);
        for name in SandboxLimits::NAMES {
            assert!(set.is_explicit(name), "{name}");
            let one = match name {
                "memory" => d.clone().memory(None),
                "cpu" => d.clone().cpu(None),
                "open_files" => d.clone().open_files(300),
                "file_size" => d.clone().file_size(None),
                "processes" => d.clone().processes(None),
                "tmp_size" => d.clone().tmp_size(1),
                _ => d.clone().call_memory(None),
            };
            let others: Vec<_> = SandboxLimits::NAMES
                .iter()
                .filter(|n| one.is_explicit(n))
                .collect();
            assert_eq!(others, [&name], "only its own bit");
        }
        assert!(!d.is_explicit("no_such_limit"));
    }
}
