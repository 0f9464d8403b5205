//! The snapshot a generated MCP server module carries, read back for `McpServer::snapshot`.

use std::path::Path;

use crate::mcp::Snapshot;

/// The snapshot type a server module's `snapshot()` returns: generated code names the
/// runtime only through `__private`.
pub type McpSnapshot = Snapshot;

/// Reads the snapshot toolbind-codegen embedded in a server's bindings (`fs::snapshot()`).
///
/// # Panics
///
/// Only if `json` is not a snapshot, which the bindings' own codegen wrote from one it had
/// read, and `__bindings_version!` keeps a runtime from reading another release's.
pub fn mcp_snapshot(server: &str, json: &str) -> Snapshot {
    match Snapshot::parse(Path::new(server), json) {
        Ok((snapshot, _)) => snapshot,
        Err(d) => panic!(
            "the snapshot embedded in the bindings of the MCP server `{server}` does not read: {}",
            d.first().map(|d| d.plain()).unwrap_or_default()
        ),
    }
}
