//! Whether the live server still offers the tool the caller was built against: the
//! contract and the arguments checked before anything is sent.

use super::*;
use crate::lock::RwLocked;

impl Connection {
    /// `params` as arguments for `mcp_name`, once the live list still has the tool with the
    /// contract the caller was built against and they pass the server's `inputSchema`.
    pub(super) fn checked_args(
        &self,
        live: &Live,
        name: &str,
        mcp_name: &str,
        contract: &str,
        params: serde_json::Map<String, Value>,
    ) -> Result<serde_json::Map<String, Value>, ToolResult> {
        let args = Value::Object(params);
        let validator = {
            let tools = live.tools.read_locked();
            let Some(t) = tools.get(mcp_name) else {
                return Err(ToolResult::stopped(
                    StopReason::UnknownTool,
                    format!(
                        "tool `{name}`: MCP server `{}` no longer lists a tool `{mcp_name}`; nothing was sent",
                        self.name()
                    ),
                ));
            };
            if t.listed.contract != contract {
                return Err(self.drift(name, mcp_name, contract, &t.listed));
            }
            // Bounded before it runs: the check cannot be stopped once it has begun.
            if let Err(e) = toolbind_codegen::schema_work::check_work(
                &t.listed.input_schema,
                &args,
                toolbind_codegen::schema_work::MAX_CHECK_WORK,
            ) {
                return Err(ToolResult::stopped(
                    StopReason::BadArguments,
                    format!(
                        "the arguments for tool `{name}` were neither checked nor sent: checking them against MCP server `{}`'s inputSchema is refused, {e}",
                        self.name()
                    ),
                ));
            }
            t.input.clone()
        };
        if let Some(problems) = validator.and_then(|v| crate::mcp::problems(&v, &args)) {
            return Err(ToolResult::stopped(
                StopReason::BadArguments,
                format!(
                    "invalid arguments for tool `{name}` (the server's inputSchema): {problems}"
                ),
            ));
        }
        let Value::Object(args) = args else {
            unreachable!("built from an object")
        };
        Ok(args)
    }

    pub(super) fn drift(
        &self,
        name: &str,
        mcp_name: &str,
        contract: &str,
        live: &SnapshotTool,
    ) -> ToolResult {
        let what = match self.expected.get(mcp_name) {
            Some(old) if old.contract == contract => {
                let one = |t: &SnapshotTool| {
                    crate::mcp::Snapshot::new("s", Default::default(), "", vec![t.clone()]).ok()
                };
                match (one(old), one(live)) {
                    (Some(a), Some(b)) => crate::mcp::diff(&a, &b)
                        .into_iter()
                        .find_map(|c| match c {
                            crate::mcp::Change::Contract { what, .. } => Some(what.join("; ")),
                            _ => None,
                        })
                        .unwrap_or_else(|| "its schemas differ".into()),
                    _ => "its schemas differ".into(),
                }
            }
            _ => "its schemas differ".into(),
        };
        ToolResult::stopped(
            StopReason::ContractDrift,
            format!(
                "tool `{name}`: MCP server `{}` changed the contract of `{mcp_name}` since the snapshot this program was built from ({what}); nothing was sent. Take a new snapshot (`toolbind mcp snapshot`) and rebuild. (contract built against {contract}, live {})",
                self.name(),
                live.contract
            ),
        )
    }
}
