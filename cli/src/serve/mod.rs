//! `toolbind serve`: the tools of any folder as an MCP server on stdin/stdout, or over
//! Streamable HTTP with `--http`.
//!
//! stdout carries only MCP messages; every log line goes to stderr. Calls run through the
//! same [`Runtime`] as `toolbind call` (validation, executors, truncation); tool failures
//! and bad arguments come back as results with `isError: true` so the model can act on
//! them. The tools folders are polled every second: when a TOOL.md or a tool folder
//! appears, changes or goes, the registry is reloaded and clients are told
//! (`notifications/tools/list_changed`).
//!
//! Besides tools, a session gets each tool's documentation as a resource
//! (`toolbind://tools/<name>`, `text/markdown`, with `notifications/resources/list_changed`
//! when it changes), the system prompt as the prompt `system_prompt`, and MCP logging:
//! tool stderr lines and server events as `notifications/message`, rate-limited (see
//! [`surface`] and [`logging`]). Progress notifications carry the tool's own
//! `progress`/`total` when it reports them.
//!
//! Every request line gets an answer: lines over `--max-request-bytes`, bad JSON and
//! malformed `tools/call` or `tools/list` requests are answered on the wire itself, before
//! the MCP service sees them (see [`checks`] and `stdio::wire`).
//!
//! The layers: [`Config`] is what the command line asked for, built once in [`run`] (the
//! rest of `serve` never sees clap's types); [`server`] is the MCP server itself
//! (`Server`, the shared `State`, the folder watch); [`stdio`] and [`http`] are its
//! transports, and [`checks`] the message checks both apply before the MCP service sees a
//! request. The transports use the server; the server knows neither transport.

use std::time::Duration;

use crate::args::ServeArgs;
use crate::exit::{Failure, Outcome};

mod asking;
mod checks;
mod config;
mod http;
mod ids;
mod listener;
mod logging;
mod progress;
mod progressive;
mod questions;
mod rounds;
mod server;
mod skills;
mod spills;
mod stdio;
mod surface;
mod sweeper;
mod tasks;

pub(crate) use config::Config;

/// `toolbind serve`: the settings read, then the server on stdio or HTTP until its
/// client leaves or a signal stops it.
pub fn run(args: &ServeArgs) -> Outcome {
    let config = Config::new(args)?;
    // One worker thread for stdio: a stdio session is one client, and every call is I/O
    // between it and the tool processes. Hopping between two workers cost more than it
    // gave (the serve benchmark, BENCHMARKS.md: ~11k calls/s at 8 in flight on two
    // workers, 16-19k on one). HTTP serves many clients at once: two. Slow work (loading
    // tools, transpiling) runs on the blocking pool.
    let workers = if config.http.is_some() { 2 } else { 1 };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .map_err(|e| Failure::failed(format!("cannot start the async runtime: {e}")))?;
    let outcome = match &config.http {
        Some(http) => rt.block_on(http::serve(&config, http)),
        None => rt.block_on(stdio::serve(&config)),
    };
    // stdin on a terminal or a file is read on a blocking thread that cannot be
    // interrupted; do not wait for it.
    rt.shutdown_timeout(Duration::from_millis(500));
    outcome
}
