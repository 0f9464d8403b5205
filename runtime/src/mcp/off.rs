//! The runtime's MCP seams without feature `mcp`: no servers to declare, route or check,
//! so the call pipeline needs no feature branch.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use crate::ToolInfo;
use crate::executor::Executor;
use crate::host::SharedHost;
use crate::loader::Registry;
use crate::output::OutputViolation;

/// No servers can be declared without feature `mcp`.
#[derive(Default)]
pub(crate) struct Declared;

/// A built runtime's MCP servers: none.
#[derive(Default)]
pub(crate) struct Servers;

impl Declared {
    pub(crate) fn build(
        self,
        _registry: &mut Registry,
        _host: Option<SharedHost>,
        _ask_timeout: Duration,
    ) -> Result<Servers, Infallible> {
        Ok(Servers)
    }
}

impl Servers {
    pub(crate) fn unknown_note(&self) -> Option<String> {
        None
    }

    pub(crate) fn joined(&self, _name: &str) -> Option<&ToolInfo> {
        None
    }

    pub(crate) fn joined_tools(&self) -> impl Iterator<Item = &ToolInfo> {
        std::iter::empty()
    }

    pub(crate) fn route(&self, local: Arc<dyn Executor>) -> Arc<dyn Executor> {
        local
    }

    pub(crate) fn output_violations(
        &self,
        _tool: &ToolInfo,
        _details: Option<&serde_json::Value>,
    ) -> Option<Option<Vec<OutputViolation>>> {
        None
    }
}
