//! Why a tool process could not start, as types: the jail (it cannot run here, or not for
//! this process), the entry, the transpiler, the cache, the spawn. A caller tells a jail
//! failure (`JailFailed`) from the rest (`Crashed`) by the variant, never by the text.
//!
//! These errors end up as the text of a result (a model reads it) or in a start-up error,
//! not in an error chain: each message carries its cause in its own words, and `source()`
//! is `None`, so nothing prints a cause twice.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

use crate::result::StopReason;

/// Why the seccomp filter could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FilterError(pub(crate) String);

impl std::fmt::Display for FilterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot build the seccomp filter: {}", self.0)
    }
}

/// What a jail is built for, as its messages name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Subject {
    /// A tool's process.
    Tool,
    /// An MCP server's process.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    Server,
}

impl Subject {
    pub(crate) fn noun(self) -> &'static str {
        match self {
            Subject::Tool => "tool",
            Subject::Server => "server",
        }
    }
}

/// Why a tool process (or an MCP server's) could not start.
#[derive(Debug)]
pub(crate) enum StartError {
    /// The jail: it cannot run here (`required`), or not for this process.
    Jail(JailError, Subject),
    /// The tool has no entry file.
    NoEntry {
        tool: String,
        dir: PathBuf,
        expected: &'static [&'static str],
    },
    /// A TypeScript entry, in a toolbind built without the `typescript` feature.
    #[cfg_attr(feature = "typescript", allow(dead_code))]
    NoTypeScript { tool: String, entry: PathBuf },
    /// Its TypeScript could not be transpiled.
    #[cfg_attr(not(feature = "typescript"), allow(dead_code))]
    Transpile(TranspileError),
    /// A private folder it needs could not be made; `why` is `dirs`'s reason.
    Folder {
        what: &'static str,
        why: crate::dirs::FolderError,
    },
    /// A harness could not be written into the cache.
    Harness { path: PathBuf, source: io::Error },
    /// The process could not be started.
    Spawn(SpawnError),
    /// A config's `env` sets a loader variable for a server that would run unjailed.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    LoaderVariable { var: String, config: PathBuf },
}

impl StartError {
    /// How a call that could not start ends: `JailFailed` for the jail, else `Crashed`.
    pub(crate) fn stop_reason(&self) -> StopReason {
        match self {
            StartError::Jail(..) => StopReason::JailFailed,
            StartError::Spawn(e) => e.stop_reason(),
            _ => StopReason::Crashed,
        }
    }
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Every jail failure reads "the sandbox ...".
            StartError::Jail(JailError::Unavailable(e), of) => write!(
                f,
                "the sandbox is required but cannot run{}: {}",
                match of {
                    Subject::Tool => "",
                    Subject::Server => " the server",
                },
                e.message(*of)
            ),
            StartError::Jail(JailError::Interpreter(e), of) => write!(
                f,
                "the sandbox cannot run the {}'s interpreter, though bubblewrap works on this machine (it is not started unjailed instead): {}",
                of.noun(),
                e.message(*of)
            ),
            StartError::Jail(JailError::Setup(e), of) => write!(
                f,
                "the sandbox could not start the {}: {}",
                of.noun(),
                e.message(*of)
            ),
            StartError::NoEntry {
                tool,
                dir,
                expected,
            } => write!(
                f,
                "tool `{tool}` has no entry file in {} (expected one of {})",
                dir.display(),
                expected.join(", ")
            ),
            StartError::NoTypeScript { tool, entry } => write!(
                f,
                "tool `{tool}`: {} is TypeScript, but toolbind was built without the `typescript` feature",
                entry.display()
            ),
            StartError::Transpile(e) => e.fmt(f),
            StartError::Folder { what, why } => write!(f, "cannot make {what}: {why}"),
            StartError::Harness { path, source } => {
                write!(f, "cannot write the harness {}: {source}", path.display())
            }
            StartError::Spawn(e) => e.fmt(f),
            StartError::LoaderVariable { var, config } => write!(
                f,
                "{} sets `{var}` in the server's `env`, which loads code or data into the server from a path; with the sandbox off that runs on this machine as you, so it is refused. Run the server jailed (`--sandbox auto` or `required`), where the variable reaches only the jailed server, or remove it from the config",
                config.display()
            ),
        }
    }
}

impl std::error::Error for StartError {}

impl From<SpawnError> for StartError {
    fn from(e: SpawnError) -> Self {
        StartError::Spawn(e)
    }
}

impl From<TranspileError> for StartError {
    fn from(e: TranspileError) -> Self {
        StartError::Transpile(e)
    }
}

/// A step of starting a process that failed, with the system's error.
#[derive(Debug)]
pub(crate) struct SpawnError {
    pub(crate) step: SpawnStep,
    pub(crate) source: io::Error,
}

/// Which step of [`process::spawn`](super::process::spawn) failed.
#[derive(Debug)]
pub(crate) enum SpawnStep {
    /// The socket pair that becomes the tool's fd 3.
    ControlSocket,
    /// Handing our end of it to tokio.
    RegisterSocket,
    /// The pipe that carries bwrap's options.
    OptionsPipe,
    /// The pipe bwrap reports on whether the command was exec'd.
    StatusPipe,
    /// `exec` of the program (bwrap, or the interpreter unjailed), as shown.
    Exec(String),
    /// The lighter jail's child: restricting itself (Landlock, seccomp) or `exec` of the
    /// interpreter, as shown.
    LightJail(String),
}

impl SpawnError {
    /// How a call whose process could not be spawned ends: `JailFailed` when the lighter
    /// jail could not start it, else `Crashed`.
    pub(crate) fn stop_reason(&self) -> StopReason {
        match self.step {
            SpawnStep::LightJail(_) => StopReason::JailFailed,
            _ => StopReason::Crashed,
        }
    }
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = &self.source;
        match &self.step {
            SpawnStep::ControlSocket => write!(f, "cannot create the control socket: {e}"),
            SpawnStep::RegisterSocket => write!(f, "cannot register the control socket: {e}"),
            SpawnStep::OptionsPipe => write!(f, "cannot pass the sandbox options to bwrap: {e}"),
            SpawnStep::StatusPipe => write!(f, "cannot open bwrap's status pipe: {e}"),
            SpawnStep::Exec(shown) => write!(f, "cannot start `{shown}`: {e}"),
            SpawnStep::LightJail(shown) => write!(
                f,
                "the sandbox (the lighter jail: Landlock and seccomp) could not start `{shown}`: {e}"
            ),
        }
    }
}

impl std::error::Error for SpawnError {}

/// Why a process cannot be jailed.
#[derive(Debug)]
pub(crate) enum JailError {
    /// `required`, and the jail cannot run on this machine.
    Unavailable(ProbeError),
    /// The jail runs on this machine, but not the interpreter a server names: an error in
    /// every mode (a server never picks, by what it names, to run unjailed).
    Interpreter(ProbeError),
    /// The jail could not be set up for this process (a folder it needs, a grant).
    Setup(SetupError),
}

/// Why the jail cannot run an interpreter on this machine: what the trial start (or the
/// search for the interpreter) found. Cached per interpreter, hence `Clone` (the causes are
/// kept as the system worded them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProbeError {
    /// bwrap is not installed.
    NoBwrap { bwrap: PathBuf },
    /// bwrap could not be run at all (or never answered).
    BwrapFailed { bwrap: PathBuf, why: String },
    /// bwrap ran and could not start the interpreter in the jail.
    Refused {
        bwrap: PathBuf,
        program: String,
        exit: String,
        stderr: String,
    },
    /// The interpreter itself.
    Interpreter(InterpError),
    /// bwrap cannot make a user namespace here (disabled, or refused by AppArmor): the
    /// lighter jail is the opt-in.
    NoUserNamespace {
        bwrap: PathBuf,
        why: String,
        /// Why the lighter jail cannot run here either; `None`: it can.
        light: Option<String>,
    },
    /// The lighter jail cannot run here (no Landlock).
    NoLandlock { why: String },
}

/// The interpreter could not be found or located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InterpError {
    NotOnPath { program: String },
    Unresolved { path: PathBuf, why: String },
    CannotRun { program: String, why: String },
    NoLocation { program: String },
}

/// How to get a jail, or to do without one.
fn install_hint() -> &'static str {
    "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; Fedora: `dnf install bubblewrap`), or run with `--sandbox off` / `SandboxMode::Off` to accept running tools unjailed"
}

impl ProbeError {
    /// The message, naming what the interpreter was needed for.
    pub(crate) fn message(&self, of: Subject) -> String {
        match self {
            ProbeError::NoBwrap { bwrap } => format!(
                "bubblewrap (`{}`) is not installed; {}",
                bwrap.display(),
                install_hint()
            ),
            ProbeError::BwrapFailed { bwrap, why } => format!(
                "cannot run bubblewrap ({}): {why}; {}",
                bwrap.display(),
                install_hint()
            ),
            ProbeError::Refused {
                bwrap,
                program,
                exit,
                stderr,
            } => format!(
                "bubblewrap ({}) cannot start {program} in the jail on this machine ({exit}): {stderr}",
                bwrap.display(),
            ),
            ProbeError::Interpreter(e) => e.message(of),
            ProbeError::NoUserNamespace { bwrap, why, light } => format!(
                "bubblewrap ({}) cannot create a user namespace on this machine ({why}); {}, or allow user namespaces (`sysctl user.max_user_namespaces`, Ubuntu: `kernel.apparmor_restrict_unprivileged_userns=0`)",
                bwrap.display(),
                match light {
                    None => "the lighter jail without namespaces (Landlock + seccomp + limits) runs here: opt in with `--sandbox light` / `SandboxMode::Light`".to_owned(),
                    Some(no) => format!("the lighter jail (`--sandbox light`) cannot run here either: {no}"),
                }
            ),
            ProbeError::NoLandlock { why } => format!(
                "the lighter jail cannot run: {why}; use the bubblewrap jail (`--sandbox required`) where user namespaces work"
            ),
        }
    }
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message(Subject::Tool))
    }
}

impl InterpError {
    fn message(&self, of: Subject) -> String {
        match self {
            InterpError::NotOnPath { program } => {
                format!(
                    "`{program}` is not on PATH (needed to run the {})",
                    of.noun()
                )
            }
            InterpError::Unresolved { path, why } => {
                format!("cannot resolve {}: {why}", path.display())
            }
            InterpError::CannotRun { program, why } => format!("cannot run `{program}`: {why}"),
            InterpError::NoLocation { program } => {
                format!("`{program}` did not say where it is installed")
            }
        }
    }
}

impl From<InterpError> for ProbeError {
    fn from(e: InterpError) -> Self {
        ProbeError::Interpreter(e)
    }
}

/// The jail could not be set up for one process.
#[derive(Debug)]
pub(crate) enum SetupError {
    /// `state_dir` holds toolbind's own state root.
    StateHoldsOwn { root: PathBuf, own: PathBuf },
    /// The tool's state folder could not be made or is not private (`dirs`'s reason).
    StateDir {
        tool: String,
        why: crate::dirs::FolderError,
    },
    /// A granted path does not resolve.
    Grant {
        access: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// The tool's own folder does not resolve.
    ToolFolder { dir: PathBuf, source: io::Error },
    /// An MCP server's command could not be found or resolved, so the jail cannot be
    /// planned for it (it is refused, never run unjailed instead).
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    Command(ProbeError),
    /// A limit the owner set explicitly (`name`, as `SandboxLimits::is_explicit` takes it)
    /// cannot be enforced here, under `required`.
    Limit {
        name: &'static str,
        why: String,
        fix: String,
    },
    /// The seccomp filter could not be built.
    Seccomp(FilterError),
    /// The lighter jail's Landlock ruleset could not be built.
    Landlock(String),
    /// The lighter jail's private temporary folder could not be made.
    PrivateTmp(io::Error),
}

impl SetupError {
    fn message(&self, of: Subject) -> String {
        match self {
            SetupError::StateHoldsOwn { root, own } => format!(
                "the state folder root {} holds toolbind's own state folder {} (spill files, the generated HTTP token, the state of other tools folders): choose a folder of its own for `state_dir` / `--state-dir`",
                root.display(),
                own.display()
            ),
            SetupError::StateDir { tool, why } => {
                format!("cannot use the state folder of `{tool}`: {why}")
            }
            SetupError::Grant {
                access,
                path,
                source,
            } => format!(
                "cannot grant {access} access to {}: {source} (grants must exist)",
                path.display()
            ),
            SetupError::ToolFolder { dir, source } => format!(
                "cannot read the {} folder {}: {source}",
                of.noun(),
                dir.display()
            ),
            SetupError::Command(e) => e.message(of),
            SetupError::Limit { name, why, fix } => {
                let (what, flag) = match *name {
                    "call_memory" => ("memory per call", "--call-memory"),
                    _ => ("process", "--max-processes"),
                };
                format!(
                    "the {what} limit was set (`{flag}`, `SandboxLimits::{name}`) but cannot be enforced here, so the {} was not started: {why}. To get it: {fix}; or leave the limit at its default, which is then reported as not enforced rather than failing",
                    of.noun()
                )
            }
            SetupError::Seccomp(e) => e.to_string(),
            SetupError::Landlock(why) => format!("cannot build the Landlock rules: {why}"),
            SetupError::PrivateTmp(e) => format!("cannot make its private temporary folder: {e}"),
        }
    }
}

/// Why a tool's TypeScript could not be made into the modules Node runs.
#[derive(Debug)]
#[cfg_attr(not(feature = "typescript"), allow(dead_code))]
pub(crate) enum TranspileError {
    /// A file system step on the tool folder or the cache (`doing` says which).
    Io {
        doing: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// The tool's name cannot name a cache folder.
    Name { name: String, why: String },
    /// The cache's `ts` folder could not be made (`dirs`'s reason).
    Folder(crate::dirs::FolderError),
    /// A module the entry imports cannot be used.
    Module { path: PathBuf, why: ModuleProblem },
    /// The parser's or transformer's diagnostics, rendered with their source lines.
    Syntax(String),
    /// oxc refused its own options (a bug here).
    Internal(String),
    /// The transpiler panicked.
    Panicked(String),
}

/// Why one TypeScript module cannot be read.
#[derive(Debug)]
#[cfg_attr(not(feature = "typescript"), allow(dead_code))]
pub(crate) enum ModuleProblem {
    /// It does not resolve.
    Resolve(io::Error),
    /// It leads out of the tool folder through a symlink.
    Escapes,
    /// Too large, special, or unreadable (codegen's reason).
    Read(String),
    /// Not UTF-8.
    NotUtf8(std::string::FromUtf8Error),
}

impl fmt::Display for ModuleProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModuleProblem::Resolve(e) => e.fmt(f),
            ModuleProblem::Escapes => f.write_str(
                "it leads out of the tool folder through a symlink; a TypeScript module must be a file of the tool's own folder",
            ),
            ModuleProblem::Read(e) => f.write_str(e),
            ModuleProblem::NotUtf8(e) => e.fmt(f),
        }
    }
}

impl fmt::Display for TranspileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TranspileError::Io {
                doing,
                path,
                source,
            } => write!(f, "{doing} {}: {source}", path.display()),
            TranspileError::Name { name, why } => {
                write!(f, "tool name {name:?} cannot name a cache folder: {why}")
            }
            TranspileError::Folder(why) => why.fmt(f),
            TranspileError::Module { path, why } => {
                write!(f, "cannot read {}: {why}", path.display())
            }
            TranspileError::Syntax(text) => f.write_str(text),
            TranspileError::Internal(e) => write!(f, "internal: {e}"),
            TranspileError::Panicked(e) => {
                write!(f, "internal error: the transpiler panicked: {e}")
            }
        }
    }
}

impl std::error::Error for TranspileError {}

/// Why `prepareArguments` gave no arguments.
#[derive(Debug)]
pub(crate) enum PrepareError {
    /// The process that runs it could not start.
    Start(StartError),
    /// The entry did not finish loading in time.
    NotLoaded { entry: String, timeout: Duration },
    /// `prepareArguments` threw or was refused: the harness's words.
    Failed(String),
    /// The worker died (its death, described).
    Died(String),
    /// It did not return in time.
    TimedOut(Duration),
    /// The worker dropped the request (a bug here).
    Dropped,
}

impl fmt::Display for PrepareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrepareError::Start(e) => e.fmt(f),
            PrepareError::NotLoaded { entry, timeout } => write!(
                f,
                "{entry} did not finish loading within {}",
                super::stop::secs(*timeout)
            ),
            PrepareError::Failed(e) | PrepareError::Died(e) => f.write_str(e),
            PrepareError::TimedOut(t) => write!(
                f,
                "prepareArguments did not return within {}",
                super::stop::secs(*t)
            ),
            PrepareError::Dropped => f.write_str("internal error: the worker dropped the request"),
        }
    }
}

impl From<StartError> for PrepareError {
    fn from(e: StartError) -> Self {
        PrepareError::Start(e)
    }
}

impl From<SpawnError> for PrepareError {
    fn from(e: SpawnError) -> Self {
        PrepareError::Start(e.into())
    }
}

/// What is wrong with a content block a tool returned, as a phrase that completes "the
/// tool returned ..." ("a text block without a string `text`", "an image block whose
/// `data` is empty"). It is only ever shown, in the note that replaces the block (which
/// keeps the block's JSON), so it is text; it has its own type so that a block's problem
/// is never confused with a failed call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Malformed(pub(crate) String);

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Malformed {
    fn from(s: &str) -> Self {
        Malformed(s.to_owned())
    }
}

impl From<String> for Malformed {
    fn from(s: String) -> Self {
        Malformed(s)
    }
}
