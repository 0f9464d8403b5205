//! Which spill files `serve` hands out, and to whom.
//!
//! The spill folder is one per user, shared by every process and session of that user. A
//! `toolbind://spill/<name>` resource is served only when this process wrote the file
//! ([`toolbind::spill::written_here`]) and handed its name out in a result; with HTTP
//! sessions, only to the session whose call it was (its `Mcp-Session-Id`). Without a session
//! (stdio, one client per process; `--stateless`; a 2026-07-28 request) the name alone,
//! 128 random bits, is the key, as a task id is.

use crate::lock::Locked;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use rmcp::RoleServer;
use rmcp::service::RequestContext;

/// How many handed-out names the server remembers (the oldest forgotten first), as the
/// runtime remembers the names it wrote.
const MAX_HANDED_OUT: usize = 16_384;

#[derive(Default)]
pub(crate) struct Spills {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Name -> the session it was handed to (`None`: no session).
    owners: HashMap<String, Option<String>>,
    order: VecDeque<String>,
}

impl Spills {
    /// Hands `name` out to `owner`, when this process wrote it and nobody holds it yet.
    pub(crate) fn hand_out(&self, name: &str, owner: Option<&str>) {
        if !toolbind::spill::written_here(name) {
            return;
        }
        let mut inner = self.inner.locked();
        if inner.owners.contains_key(name) {
            return;
        }
        inner
            .owners
            .insert(name.to_owned(), owner.map(str::to_owned));
        inner.order.push_back(name.to_owned());
        while inner.order.len() > MAX_HANDED_OUT {
            if let Some(old) = inner.order.pop_front() {
                inner.owners.remove(&old);
            }
        }
    }

    /// Whether `owner` may read `name`: it was handed out to that session (or with none).
    pub(crate) fn may_read(&self, name: &str, owner: Option<&str>) -> bool {
        let inner = self.inner.locked();
        match inner.owners.get(name) {
            Some(None) => true,
            Some(Some(o)) => owner == Some(o.as_str()),
            None => false,
        }
    }
}

/// The session of a request: its `Mcp-Session-Id` over HTTP with sessions (one the
/// transport issued: it refuses others before the server sees the request); `None`
/// otherwise.
pub(crate) fn owner(context: &RequestContext<RoleServer>) -> Option<String> {
    let parts = context.extensions.get::<hyper::http::request::Parts>()?;
    let id = parts.headers.get("mcp-session-id")?.to_str().ok()?;
    (!id.is_empty()).then(|| id.to_owned())
}
