//! MCP servers as a source of tools: the `mcpServers` config hosts already use
//! ([`read_config`]), and, with feature `mcp`, listing a server's tools
#![cfg_attr(feature = "mcp", doc = "([`list_server_tools`], [`list_tools`]:")]
#![cfg_attr(not(feature = "mcp"), doc = "(`list_server_tools`, `list_tools`:")]
//! a stdio server in toolbind's jail, as for calls;
//! a Streamable HTTP server needs feature `mcp-http`) for a snapshot
//! ([`toolbind_codegen::mcp::Snapshot`]) that code is generated from offline, and calling
#![cfg_attr(
    feature = "mcp",
    doc = "them: an [`McpServer`] given to \
           [`RuntimeBuilder::mcp_server`](crate::runtime::RuntimeBuilder::mcp_server) puts its"
)]
#![cfg_attr(
    not(feature = "mcp"),
    doc = "them: an `McpServer` given to `RuntimeBuilder::mcp_server` puts its"
)]
//! tools in the runtime's one tool list, next to the local ones.
#![cfg_attr(
    not(feature = "mcp"),
    doc = "\n\nThese docs were built without feature `mcp`: \
           `cargo doc -p toolbind --features mcp-http` documents the MCP types too."
)]

#[cfg(feature = "mcp")]
use crate::lock::Locked;
mod config;
#[cfg(feature = "mcp")]
pub(crate) mod connection;
#[cfg(feature = "mcp")]
pub(crate) mod exec;
#[cfg(feature = "mcp")]
mod hidden;
#[cfg(feature = "mcp")]
mod join;
#[cfg(feature = "mcp")]
mod lines;
#[cfg(feature = "mcp")]
mod list;
#[cfg(feature = "mcp-http")]
mod oauth;
#[cfg(not(feature = "mcp"))]
mod off;
#[cfg(feature = "mcp")]
mod runtime;
#[cfg(feature = "mcp")]
mod said;
#[cfg(feature = "mcp")]
mod server;
#[cfg(feature = "mcp")]
mod servers;
#[cfg(feature = "mcp-http")]
mod signin;
#[cfg(feature = "mcp")]
mod skills;
#[cfg(feature = "mcp")]
mod spawn;
#[cfg(feature = "mcp")]
mod state;

pub use config::{
    ConfigError, MAX_CONFIG_BYTES, ServerConfig, TokenSource, add_bearer_token, parse_config,
    read_config, read_token_file,
};
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub use exec::ConnectError;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub use list::{ListError, ListLimits, Listing, list_server_tools, list_tools};
#[cfg(feature = "mcp-http")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
pub use oauth::{AuthStatus, OAuth, OAuthError};
#[cfg(feature = "mcp-http")]
pub(crate) use oauth::{AuthedHttp, Credential};
#[cfg(not(feature = "mcp"))]
pub(crate) use off::{Declared, Servers};
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub use server::McpServer;
#[cfg(feature = "mcp")]
pub(crate) use servers::{Declared, Servers};
#[cfg(feature = "mcp-http")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
pub use signin::{auth_status, login, logout};
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub use skills::{
    MAX_SKILL_FILE_BYTES, MAX_SKILL_PAGES, MAX_SKILLS, McpSkill, McpSkillError, McpSkillFile,
};
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub use state::McpServerState;
pub use toolbind_codegen::mcp::{Change, ServerInfo, Snapshot, SnapshotTool, diff};

/// The most backtracking steps one `pattern` match may take (fancy-regex's default is a
/// million: ~2 ms a match, so a hostile pattern with a backreference over an array of
/// strings took seconds). A pattern without backreferences or lookaround never
/// backtracks (it runs on a linear-time engine); one that needs more than this fails its
/// check. `schema_work` counts each `pattern` match as [`PATTERN_COST`] evaluations.
///
/// [`PATTERN_COST`]: toolbind_codegen::schema_work::PATTERN_COST
#[cfg(feature = "mcp")]
const PATTERN_BACKTRACK_LIMIT: usize = 10_000;

/// A server's schema compiled for checks, with [`PATTERN_BACKTRACK_LIMIT`]; `None` for
/// one that does not compile (a remote `$ref`, which is never fetched: it checks nothing,
/// and the server checks its own input).
#[cfg(feature = "mcp")]
pub(crate) fn validator(schema: &serde_json::Value) -> Option<jsonschema::Validator> {
    jsonschema::options()
        .with_pattern_options(
            jsonschema::PatternOptions::fancy_regex().backtrack_limit(PATTERN_BACKTRACK_LIMIT),
        )
        .build(schema)
        .ok()
}

/// Why `value` does not match the JSON Schema `schema` (JSON text), or `None` when it
/// does. Compiled schemas are kept per schema text for the life of the program. A schema
/// that does not compile (a remote `$ref`, which is never fetched) checks nothing: the
/// server checks its own input.
#[cfg(feature = "mcp")]
pub(crate) fn schema_problem(schema: &'static str, value: &serde_json::Value) -> Option<String> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    type Compiled = Option<Arc<(serde_json::Value, jsonschema::Validator)>>;
    static CACHE: OnceLock<Mutex<HashMap<usize, Compiled>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let compiled = {
        let mut map = cache.locked();
        map.entry(schema.as_ptr() as usize)
            .or_insert_with(|| {
                let s: serde_json::Value = serde_json::from_str(schema).ok()?;
                let v = validator(&s)?;
                Some(Arc::new((s, v)))
            })
            .clone()?
    };
    // Bounded before it runs: the check cannot be stopped once it has begun.
    if let Err(e) = toolbind_codegen::schema_work::check_work(
        &compiled.0,
        value,
        toolbind_codegen::schema_work::MAX_CHECK_WORK,
    ) {
        return Some(format!(
            "the arguments were not checked: checking them against the server's inputSchema is refused, {e}"
        ));
    }
    problems(&compiled.1, value)
}

/// The first five ways `value` breaks `validator`'s schema, `; `-separated, each at its
/// place in the value; `None` when it holds.
#[cfg(feature = "mcp")]
pub(crate) fn problems(
    validator: &jsonschema::Validator,
    value: &serde_json::Value,
) -> Option<String> {
    let errors: Vec<String> = validator
        .iter_errors(value)
        .take(5)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{at}: {e}")
            }
        })
        .collect();
    (!errors.is_empty()).then(|| errors.join("; "))
}
