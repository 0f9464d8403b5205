//! `toolbind serve` on stdin and stdout: the [`wire`] that checks and parses each request
//! line, over the descriptors of [`fd`].

use std::time::Duration;

use rmcp::ServiceExt;
use tokio::signal::unix::{SignalKind, signal};

use super::config::Config;
use super::logging::log;
use super::server::{Server, start, watch};
use crate::exit::{Code, Failure, Outcome};

mod fd;
pub(crate) mod wire;

pub(super) async fn serve(config: &Config) -> Outcome {
    let max_request_bytes = config.max_request_bytes;
    let state = start(config, "MCP on stdio")?;
    let executor = state.executor.clone();
    let mut sigint = signal(SignalKind::interrupt())
        .map_err(|e| Failure::failed(format!("cannot handle SIGINT: {e}")))?;
    let mut sigterm = signal(SignalKind::terminate())
        .map_err(|e| Failure::failed(format!("cannot handle SIGTERM: {e}")))?;
    let server = Server::new(state.clone());
    // Every request line is checked (and, if malformed or too long, answered) before the
    // MCP service sees it; see `wire`.
    let (transport, writer) = wire::connect(fd::stdin(), fd::stdout(), max_request_bytes, log);
    let session = async {
        let running = tokio::select! {
            r = server.serve(transport) => r
                .map_err(|e| Failure::failed(format!("MCP initialisation failed: {e}")))?,
            _ = sigint.recv() => return Ok(Code::Interrupted),
            _ = sigterm.recv() => return Ok(Code::Terminated),
        };
        let watcher = tokio::spawn(watch(state.clone()));
        let code = tokio::select! {
            r = running.waiting() => {
                match r {
                    Ok(reason) => log(&format!("session ended: {reason:?}")),
                    Err(e) => log(&format!("session failed: {e}")),
                }
                Code::Ok
            }
            _ = sigint.recv() => Code::Interrupted,
            _ = sigterm.recv() => Code::Terminated,
        };
        watcher.abort();
        Ok(code)
    };
    let outcome = session.await;
    state.stop_tasks().await;
    executor.shutdown();
    // The last answers are still on their way to stdout, however the session ended (the
    // answers to rejected lines included, when initialisation failed).
    let _ = tokio::time::timeout(Duration::from_secs(1), writer).await;
    outcome
}
