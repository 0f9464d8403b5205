//! The tools of an MCP server that comes up after its runtime was built: a server without
//! a snapshot that was still starting, or had failed, when `connect` returned. Its start
//! goes on (a failed one is tried again in the background, with the backoff of calls'
//! restarts, up to [`MAX_TRIES`] times) and, once it is up, its tools join the runtime's, checked against every
//! other tool's name as they are at connect: all of a server's tools or none.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use tokio::sync::mpsc::UnboundedSender;

use super::connection::Connection;
use super::exec::ConnectError;
use crate::StopReason;
use crate::ToolInfo;
use crate::loader::Registry;
use crate::lock::Locked;

/// How many times a server that failed is started again in the background (its backoff
/// doubles from 250 ms to `max_restart_delay`: about three minutes at the default 30 s).
const MAX_TRIES: u32 = 10;

/// One start's outcome, by the server's place in the builder's list.
pub(crate) type Outcome = (usize, Result<Vec<ToolInfo>, ConnectError>);

/// The names the runtime's tools have, once it is built: what a joining server's tools
/// are checked against.
#[derive(Default)]
pub(crate) struct Book(Mutex<Names>);

#[derive(Default)]
pub(crate) struct Names {
    /// Set when the runtime is built; before, nothing joins (connect adds the tools).
    open: bool,
    taken: HashSet<String>,
}

impl Book {
    /// The names, locked: `connect` finishes under this lock, so a start that ends
    /// meanwhile joins after it.
    pub(crate) fn names(&self) -> MutexGuard<'_, Names> {
        self.0.locked()
    }

    /// Adds `tools`, all or none, to the runtime of `conn` (refused, with the same error
    /// as at connect, when a name is taken).
    fn join(&self, conn: &Connection, tools: Vec<ToolInfo>) {
        let mut names = self.names();
        if !names.open {
            return;
        }
        let server = conn.server().get_name();
        if let Some(t) = tools.iter().find(|t| names.taken.contains(t.name())) {
            let e = clash(server, t.name());
            crate::telemetry::warn(&format!("toolbind: warning: {e}"));
            conn.refuse(e.to_string());
            return;
        }
        names
            .taken
            .extend(tools.iter().map(|t| t.name().to_owned()));
        let n = tools.len();
        if conn.late.set(tools).is_ok() {
            crate::telemetry::note(&format!(
                "toolbind: note: MCP server `{server}` is up: its {n} tool(s) join the runtime"
            ));
        }
    }
}

impl Names {
    /// The runtime is built with `registry`: later servers join it.
    pub(crate) fn open(&mut self, registry: &Registry) {
        self.taken = registry.names().map(str::to_owned).collect();
        self.open = true;
    }
}

/// The error of a server whose tool has a name another tool already has.
pub(crate) fn clash(server: &str, tool: &str) -> ConnectError {
    ConnectError::new(
        server,
        format!(
            "MCP server `{server}` has a tool `{tool}`, a name another tool already has: give the server a prefix (McpServer::prefix, or `\"prefix\": \"{server}_\"` in its mcpServers entry)"
        ),
    )
}

/// Starts `conn` and sends the outcome to `connect`; when `connect` has returned (the
/// channel is closed), the outcome is this task's: the tools join, or the start is tried
/// again, for a server whose tools the runtime does not have.
pub(crate) async fn start(
    conn: Arc<Connection>,
    i: usize,
    tx: UnboundedSender<Outcome>,
    book: Arc<Book>,
) {
    let outcome = super::exec::connect(&conn).await;
    let Err(unsent) = tx.send((i, outcome)) else {
        return;
    };
    if conn.server().get_snapshot().is_some() {
        // Its snapshot's tools are the runtime's already; calls start it.
        return;
    }
    let (_, outcome) = unsent.0;
    let weak = Arc::downgrade(&conn);
    drop(conn);
    keep_trying(weak, book, Some(outcome)).await;
}

/// Until `conn`'s tools have joined (or it was refused, or the runtime is gone): its last
/// outcome acted on, then another start after its backoff.
pub(crate) async fn keep_trying(
    conn: Weak<Connection>,
    book: Arc<Book>,
    mut last: Option<Result<Vec<ToolInfo>, ConnectError>>,
) {
    let mut tries = 0;
    loop {
        if let Some(Ok(tools)) = last {
            if let Some(c) = conn.upgrade() {
                book.join(&c, tools);
            }
            return;
        }
        let wait = match conn.upgrade() {
            Some(c) if !c.is_refused() && !c.is_closed() => {
                // A failure that another start would only repeat (the jail cannot run it, a
                // server without tools or with a list toolbind refuses), and a server that
                // keeps failing, are not started again in the background.
                let stop = c.last_stop();
                if !matches!(stop, None | Some(StopReason::Crashed)) {
                    c.given_up("not started again: another start would fail the same way");
                    return;
                }
                if tries == MAX_TRIES {
                    c.given_up(&format!(
                        "not started again after {MAX_TRIES} failed starts in a row"
                    ));
                    return;
                }
                tries += 1;
                c.retry_in().await
            }
            _ => return,
        };
        tokio::time::sleep(wait).await;
        let Some(c) = conn.upgrade() else { return };
        last = Some(super::exec::connect(&c).await);
    }
}
