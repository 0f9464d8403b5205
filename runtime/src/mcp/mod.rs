//! MCP servers as a source of tools: the `mcpServers` config hosts already use
//! ([`read_config`]), and, with feature `mcp`, listing a server's tools
//! ([`list_tools`]) for a snapshot ([`toolbind_codegen::mcp::Snapshot`]) that code is
//! generated from offline.

mod config;
#[cfg(feature = "mcp")]
mod list;

pub use config::{ConfigError, MAX_CONFIG_BYTES, ServerConfig, parse_config, read_config};
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub use list::{ListError, ListLimits, Listing, list_tools};
pub use toolbind_codegen::mcp::{Change, ServerInfo, Snapshot, SnapshotTool, diff};
