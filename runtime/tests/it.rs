//! The runtime's integration tests, one module per file (a test is `FILE::NAME`), in one
//! binary: one link instead of one per file. Apart: `sandbox` (run again as another user and
//! in the cgroup-v2 VM) and `telemetry` (built again with feature `otel` by its own stage).

mod exec_common;

mod approval;
mod arg_messages;
mod ask;
mod discovery;
mod dispatch;
mod exec_binary;
mod exec_blob_memory;
mod exec_cache;
mod exec_control;
mod exec_flood;
mod exec_isolation;
mod exec_log;
mod exec_progress;
mod exec_run;
mod handle;
mod jail_hints;
mod loader;
mod nested_args;
mod notes;
mod outputs;
mod prepare;
mod provider;
mod redaction;
mod relative;
mod stop;
mod sync;
mod sync_edited;
mod truncate;
