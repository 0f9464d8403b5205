//! The CLI's integration tests, one module per file (a test is `FILE::NAME`), in one binary:
//! one link instead of one per file. Apart: `sandbox` (run again as another user and in the
//! cgroup-v2 VM) and the `otel` ones (built with feature `otel` by their own stage).

mod common;

mod ask;
mod call;
mod commands;
mod conformance;
mod help;
mod hints;
mod hostile;
mod http;
mod http_docs;
mod mcp;
mod mcp_exec;
mod mcp_jail;
mod mcp_python;
mod mcp_skills;
mod mcp_snapshot;
mod mcp_wire;
mod oauth;
mod progressive;
mod provider_sdks;
mod rounds;
mod secret_files;
mod serve_flood;
mod serve_hostile;
mod skills;
mod special_files;
mod spill;
mod sync_failures;
mod tasks;
mod terminal;
