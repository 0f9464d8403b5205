//! `serve`'s settings, built from the command line in one place ([`Config::new`]): the
//! defaults applied and the request-state key read. The transports, the server, rounds,
//! tasks and checks take this (or parts of it), never the clap types of `crate::args`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use toolbind::sandbox::SandboxPolicy;

use crate::args::{HttpArgs, ServeArgs};
use crate::exit::Failure;
use crate::tools;

use super::{rounds, tasks};

/// The default of `--max-request-bytes` (the help text says it too).
pub(crate) const DEFAULT_MAX_REQUEST_BYTES: usize = 16 << 20;
/// The least `--max-request-bytes`.
const MIN_REQUEST_BYTES: usize = 1024;
/// The default of `--max-concurrent-calls`.
const DEFAULT_MAX_CONCURRENT_CALLS: usize = 32;
/// The default of `--max-sessions`.
const DEFAULT_MAX_SESSIONS: usize = 256;
/// `--drain-timeout`'s default.
const DEFAULT_DRAIN: Duration = Duration::from_secs(20);
/// The largest `--request-state-key-file` read.
const MAX_KEY_FILE: u64 = 4096;

/// Everything `toolbind serve` was asked to do.
pub(crate) struct Config {
    /// The tools folders, absolute.
    pub dirs: Vec<PathBuf>,
    /// `--max-request-bytes`, at least 1 KiB.
    pub max_request_bytes: usize,
    /// `--timeout` and `--ask-timeout`.
    pub timeouts: Timeouts,
    /// `--spill-dir`, else the runtime's default.
    pub spill_dir: PathBuf,
    /// The jail of the tools (the Sandbox flags).
    pub sandbox: SandboxPolicy,
    /// `--max-concurrent-calls`, at least 1.
    pub max_concurrent_calls: usize,
    /// `--max-tasks`, `--task-ttl`, `--task-memory`.
    pub tasks: tasks::Limits,
    /// `--max-pending-calls`, `--pending-ttl`.
    pub rounds: rounds::Limits,
    /// The key read from `--request-state-key-file` (trimmed); `None`: one drawn at start.
    pub request_state_key: Option<Vec<u8>>,
    /// `--http` and its flags; `None`: stdio.
    pub http: Option<Http>,
    /// `--progressive`, `--skills`, `--tool-skills`.
    pub offer: Offer,
}

/// What `serve` offers beside every tool in `tools/list`.
#[derive(Clone, Default)]
pub(crate) struct Offer {
    /// `--progressive`: the tools listed from the start (`--core`); `None`: every tool.
    pub progressive: Option<Vec<String>>,
    /// `--skills`, absolute.
    pub skill_dirs: Vec<PathBuf>,
    /// `--tool-skills`.
    pub tool_skills: bool,
}

impl Offer {
    /// Whether `serve` declares the skills extension: it has a source of skills.
    pub(crate) fn skills(&self) -> bool {
        self.tool_skills || !self.skill_dirs.is_empty()
    }
}

/// `serve --timeout` and `--ask-timeout`.
#[derive(Clone, Copy)]
pub(crate) struct Timeouts {
    pub call: Option<Duration>,
    pub ask: Option<Duration>,
}

/// `serve --http ADDR` and the flags that go with it.
pub(crate) struct Http {
    /// Where to listen (HOST:PORT).
    pub addr: String,
    /// `--auth-token-file`: read (through `toolbind::secret`) when the endpoint starts.
    pub auth_token_file: Option<PathBuf>,
    /// `--allowed-host`.
    pub allowed_host: Vec<String>,
    /// `--allowed-origin`.
    pub allowed_origin: Vec<String>,
    /// `--stateless`.
    pub stateless: bool,
    /// `--max-sessions`, at least 1.
    pub max_sessions: usize,
    /// `--drain-timeout`.
    pub drain_timeout: Duration,
}

impl Config {
    /// The settings of `args`: grants checked, folders made absolute, defaults applied,
    /// the request-state key read. Every error here is a usage error, before anything
    /// starts.
    pub(crate) fn new(args: &ServeArgs) -> Result<Config, Failure> {
        args.sandbox.check()?;
        let dirs = tools::absolute(tools::dirs(&args.dirs))?;
        let max_concurrent_calls = args
            .max_concurrent_calls
            .unwrap_or(DEFAULT_MAX_CONCURRENT_CALLS)
            .max(1);
        let defaults = tasks::Limits::default();
        Ok(Config {
            dirs,
            max_request_bytes: args
                .max_request_bytes
                .unwrap_or(DEFAULT_MAX_REQUEST_BYTES)
                .max(MIN_REQUEST_BYTES),
            timeouts: Timeouts {
                call: args.timeout,
                ask: args.ask_timeout,
            },
            spill_dir: args
                .spill
                .spill_dir
                .clone()
                .unwrap_or_else(toolbind::runtime::default_spill_dir),
            sandbox: args.sandbox.policy(),
            max_concurrent_calls,
            tasks: tasks::Limits {
                max_tasks: args.tasks.max_tasks.unwrap_or(defaults.max_tasks),
                ttl: args.tasks.task_ttl.unwrap_or(defaults.ttl),
                memory: args.tasks.task_memory.unwrap_or(defaults.memory),
            },
            rounds: rounds::Limits {
                // Half the slots by default: clients that never come back must not take
                // every one.
                max_pending: args
                    .rounds
                    .max_pending_calls
                    .unwrap_or(max_concurrent_calls / 2)
                    .max(1),
                ttl: args.rounds.pending_ttl.unwrap_or(rounds::DEFAULT_TTL),
            },
            request_state_key: match &args.rounds.request_state_key_file {
                None => None,
                Some(path) => Some(read_key(path)?),
            },
            http: args
                .http
                .addr
                .as_ref()
                .map(|addr| Http::new(addr, &args.http)),
            offer: Offer {
                progressive: args
                    .progressive
                    .progressive
                    .then(|| args.progressive.core.clone()),
                skill_dirs: tools::absolute(args.skills.skill_dirs.clone())?,
                tool_skills: args.skills.tool_skills,
            },
        })
    }

    /// Whether sessions may hold `resources/subscribe`: not under `--stateless` HTTP,
    /// which has no session to hold one in.
    pub(crate) fn subscriptions(&self) -> bool {
        !self.http.as_ref().is_some_and(|h| h.stateless)
    }
}

impl Http {
    fn new(addr: &str, args: &HttpArgs) -> Http {
        Http {
            addr: addr.to_owned(),
            auth_token_file: args.auth_token_file.clone(),
            allowed_host: args.allowed_host.clone(),
            allowed_origin: args.allowed_origin.clone(),
            stateless: args.stateless,
            max_sessions: args.max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS).max(1),
            drain_timeout: args.drain_timeout.unwrap_or(DEFAULT_DRAIN),
        }
    }
}

/// The key that seals `requestState`, from `--request-state-key-file` (at least 32 bytes
/// once trimmed); a file others can read is used, with a warning.
fn read_key(path: &Path) -> Result<Vec<u8>, Failure> {
    use toolbind::secret::{SecretFileError, read_secret_file};
    let flag = "--request-state-key-file";
    let file = read_secret_file(path, flag, MAX_KEY_FILE).map_err(|e| match e {
        // A key is a few bytes: a big file is not one, and is not read.
        SecretFileError::TooBig { size, .. } => Failure::usage(format!(
            "{flag} {}: {size} bytes is not a key (at most {MAX_KEY_FILE}); make one with `head -c 32 /dev/urandom | base64 > {}`",
            path.display(),
            path.display()
        )),
        e => Failure::usage(e.to_string()),
    })?;
    if file.readable_by_others() {
        super::logging::log(&format!(
            "warning: {} is readable by other users (chmod 600 it): whoever reads it can forge request states",
            path.display()
        ));
    }
    let key = file.bytes().trim_ascii().to_vec();
    if key.len() < 32 {
        return Err(Failure::usage(format!(
            "{flag} {}: the key has {} bytes, and needs at least 32 (make one with `head -c 32 /dev/urandom | base64 > {}`)",
            path.display(),
            key.len(),
            path.display()
        )));
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The help text says each default in words (clap no longer applies them): it must
    /// name the value applied here.
    #[test]
    fn the_help_states_the_defaults_applied_here() {
        use clap::CommandFactory;
        let mut cli = crate::args::Cli::command();
        let help = cli
            .find_subcommand_mut("serve")
            .unwrap()
            .render_help()
            .to_string();
        for (flag, default) in [
            ("--max-request-bytes", DEFAULT_MAX_REQUEST_BYTES),
            ("--max-concurrent-calls", DEFAULT_MAX_CONCURRENT_CALLS),
            ("--max-sessions", DEFAULT_MAX_SESSIONS),
            ("--max-tasks", tasks::DEFAULT_MAX_TASKS),
            ("--task-memory", tasks::DEFAULT_MEMORY),
        ] {
            let line = help
                .lines()
                .find(|l| l.trim_start().starts_with(flag))
                .unwrap_or_else(|| panic!("{flag} not in the help:\n{help}"));
            assert!(line.ends_with(&format!("[default: {default}]")), "{line}");
        }
    }
}
