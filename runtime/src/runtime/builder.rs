//! [`RuntimeBuilder`]: a [`Runtime`] from its tools, executor, sandbox, host and settings.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use super::{Runtime, RuntimeConfig, ViolationHook};
use crate::ToolInfo;
use crate::executor::Executor;
use crate::loader::Registry;
use crate::output::OutputViolation;
use crate::truncate::TruncateOptions;

/// Builds a [`Runtime`]; see [`Runtime::builder`].
#[derive(Default)]
pub struct RuntimeBuilder {
    pub(crate) registry: Registry,
    pub(crate) config: RuntimeConfig,
    executor: Option<Arc<dyn Executor>>,
    sandbox: Option<crate::sandbox::SandboxPolicy>,
    on_output_violation: Option<ViolationHook>,
    pub(crate) host: Option<crate::host::SharedHost>,
    pub(crate) mcp: crate::mcp::Declared,
}

impl RuntimeBuilder {
    /// The agent's side of calls that need its say: approval before a call (see
    /// [`host`](crate::host)). Without one, a call that needs approval is denied.
    pub fn host(mut self, host: impl crate::host::Host) -> Self {
        self.host = Some(Arc::new(host));
        self
    }

    /// The tools to serve (for example [`Loaded::registry`](crate::loader::Loaded)).
    pub fn registry(mut self, registry: Registry) -> Self {
        self.registry = registry;
        self
    }

    /// What runs validated calls. Required.
    pub fn executor(mut self, executor: Arc<dyn Executor>) -> Self {
        self.executor = Some(executor);
        self
    }

    /// Replaces the whole configuration.
    pub fn config(mut self, config: RuntimeConfig) -> Self {
        self.config = config;
        self
    }

    /// Sets [`RuntimeConfig::default_timeout`].
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.config = self.config.default_timeout(timeout);
        self
    }

    /// Sets [`RuntimeConfig::ask_timeout`].
    pub fn ask_timeout(mut self, timeout: Duration) -> Self {
        self.config = self.config.ask_timeout(timeout);
        self
    }

    /// Sets [`RuntimeConfig::truncation`].
    pub fn truncation(mut self, limits: TruncateOptions) -> Self {
        self.config = self.config.truncation(limits);
        self
    }

    /// Sets [`RuntimeConfig::record_content`].
    pub fn record_content(mut self, on: bool) -> Self {
        self.config = self.config.record_content(on);
        self
    }

    /// The sandbox the default executor runs tools in (mode, grants, network, limits);
    /// [`SandboxPolicy::default`](crate::sandbox::SandboxPolicy) (`auto`) when not set. With
    /// [`executor`](Self::executor), set the executor's own `ExecConfig::sandbox` instead:
    /// this setter only configures the executor `build` creates.
    ///
    /// ```
    /// use toolbind::Runtime;
    /// use toolbind::sandbox::{SandboxMode, SandboxPolicy};
    /// let runtime = Runtime::builder()
    ///     .sandbox(SandboxPolicy::new().mode(SandboxMode::Required).allow_write("/tmp/out"))
    ///     .build();
    /// # drop(runtime);
    /// ```
    pub fn sandbox(mut self, policy: crate::sandbox::SandboxPolicy) -> Self {
        self.sandbox = Some(policy);
        self
    }

    /// Called, instead of the default warning on stderr, when a result's `details` break
    /// the declared TOOL.md `outputs:` of its tool, with the tool and every violation
    /// found (the result is marked [`OutputCheck::Broken`](crate::output::OutputCheck::Broken)). The result itself
    /// is kept as the tool returned it: a broken contract is a bug in the tool, not a
    /// failed call.
    ///
    /// ```
    /// use toolbind::Runtime;
    /// let runtime = Runtime::builder()
    ///     .on_output_violation(|tool, violations| {
    ///         for v in violations {
    ///             eprintln!("tool `{}` broke its outputs: {v}", tool.name());
    ///         }
    ///     })
    ///     .build();
    /// # drop(runtime);
    /// ```
    pub fn on_output_violation(
        mut self,
        hook: impl Fn(&ToolInfo, &[OutputViolation]) + Send + Sync + 'static,
    ) -> Self {
        self.on_output_violation = Some(Arc::new(hook));
        self
    }

    /// Sets [`RuntimeConfig::spill_dir`].
    pub fn spill_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config = self.config.spill_dir(dir);
        self
    }

    /// The runtime. Without [`executor`](Self::executor), tools run in subprocesses with
    /// [`SubprocessExecutor`](crate::exec::SubprocessExecutor)'s default configuration.
    ///
    /// # Panics
    ///
    #[cfg_attr(
        feature = "mcp",
        doc = "Where [`try_build`](Self::try_build) returns an error: an [MCP \
               server](Self::mcp_server) without a snapshot, two servers of one name, or a tool \
               name two sources share."
    )]
    #[cfg_attr(
        not(feature = "mcp"),
        doc = "Never without feature `mcp` (with it, where `try_build` returns an error)."
    )]
    pub fn build(mut self) -> Runtime {
        let servers = std::mem::take(&mut self.mcp)
            .build(
                &mut self.registry,
                self.host.clone(),
                self.config.ask_timeout,
            )
            .unwrap_or_else(|e| panic!("{e}"));
        self.finish(servers)
    }

    /// The runtime, over the MCP servers `servers` (none without feature `mcp`).
    pub(crate) fn finish(self, servers: crate::mcp::Servers) -> Runtime {
        let sandbox = self.sandbox.unwrap_or_default();
        let executor = self.executor.unwrap_or_else(|| {
            let mut exec = crate::exec::ExecConfig::default().sandbox(sandbox);
            if let Some(dir) = &self.config.spill_dir {
                exec = exec.spill_dir(dir);
            }
            Arc::new(crate::exec::SubprocessExecutor::new(exec))
        });
        let executor = servers.route(executor);
        Runtime {
            registry: self.registry,
            config: self.config,
            executor,
            on_output_violation: self.on_output_violation,
            host: self.host,
            seq: AtomicU64::new(0),
            sequential: Default::default(),
            mcp: servers,
            index: Default::default(),
        }
    }
}
