//! The folder watch: the tools loaded at one moment ([`Snapshot`]), polled for changes,
//! reloaded, and the sessions told what changed.

use crate::lock::RwLocked;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rmcp::model::{ResourceUpdatedNotificationParam, Tool};
use rmcp::{Peer, RoleServer};
use tokio::sync::broadcast;
use toolbind::exec::SubprocessExecutor;
use toolbind::{Runtime, ToolInfo};
use toolbind_codegen::ToolSpec;
use toolbind_codegen::schema::{self, Dialect};

use crate::tools;

use crate::serve::config::Offer;
use crate::serve::config::Timeouts;
use crate::serve::logging::log;
use crate::serve::{progressive, skills, surface};

use super::State;
use super::resources::Subscriptions;

/// How often the tools folders are checked for changes.
const POLL: Duration = Duration::from_secs(1);

/// What a reload changed.
#[derive(Debug, Clone)]
pub(super) struct Changed {
    /// The MCP tool list (`tools/list_changed`).
    pub(super) tools: bool,
    /// The documentation resources (`resources/list_changed`).
    pub(super) resources: bool,
    /// The URIs of the documentation pages that changed, appeared or went
    /// (`resources/updated` to their subscribers); `None`: unknown, any may have.
    pages: Option<Arc<BTreeSet<String>>>,
}

impl Changed {
    /// A receiver that fell behind missed some changes: any may have happened.
    pub(super) fn missed() -> Self {
        Changed {
            tools: true,
            resources: true,
            pages: None,
        }
    }

    /// Whether the page at `uri` may have changed (never a URI this server does not
    /// serve).
    pub(super) fn touches(&self, uri: &str) -> bool {
        match &self.pages {
            Some(p) => p.contains(uri),
            None => uri.starts_with(surface::TOOL_URI_PREFIX),
        }
    }
}

/// The loaded tools at one moment. A reload builds a new one; calls in flight keep theirs.
pub(super) struct Snapshot {
    pub(super) runtime: Arc<Runtime>,
    /// What `tools/list` holds: every tool, or under `--progressive` the core ones and
    /// progressive mode's own two.
    pub(super) tools: Vec<Tool>,
    /// Every tool's MCP definition (what `search_tools` answers with).
    pub(super) all_tools: Vec<Tool>,
    /// The skills served (`--skills`, `--tool-skills`).
    pub(super) skills: skills::Skills,
    /// Their documentation: resources, the system prompt, the instructions.
    pub(super) docs: surface::Docs,
    stamp: Stamp,
}

impl Snapshot {
    pub(super) fn load(
        dirs: &[PathBuf],
        executor: &Arc<SubprocessExecutor>,
        spill_dir: &Path,
        timeout: Timeouts,
        offer: &Offer,
    ) -> Self {
        // Stamp first: a change made while loading shows up at the next poll.
        let stamp = Stamp::of(dirs, &offer.skill_dirs);
        let loaded = tools::load(dirs);
        for w in &loaded.warnings {
            log(&format!("warning: {w}"));
        }
        let all_tools: Vec<Tool> = loaded.registry.iter().filter_map(mcp_tool).collect();
        let specs: Vec<ToolSpec> = loaded.registry.iter().map(|t| t.spec().clone()).collect();
        let mut docs = surface::Docs::of(&specs);
        let (skills, warnings) = skills::Skills::load(
            &offer.skill_dirs,
            offer.tool_skills.then_some(specs.as_slice()),
        );
        for w in &warnings {
            log(&format!("warning: {w}"));
        }
        let tools = match offer.progressive.as_deref() {
            None => all_tools.clone(),
            Some(core) => {
                let listed = progressive::listed(&all_tools, &specs, core);
                let core_specs: Vec<ToolSpec> = specs
                    .iter()
                    .filter(|s| progressive::is_core(core, s))
                    .cloned()
                    .collect();
                // `listed` ends with the two tools of progressive mode.
                let hidden = all_tools.len() + 2 - listed.len();
                let core_docs = surface::Docs::of(&core_specs);
                docs = docs.progressive(&core_docs, &progressive::instructions(hidden));
                listed
            }
        };
        // The executor is shared, so warm workers survive a reload (one whose entry file
        // changed is replaced at its next call).
        // Over stdio, client and server share a machine: the note's path is useful.
        let mut runtime = Runtime::builder()
            .registry(loaded.registry)
            .executor(executor.clone())
            .spill_dir(spill_dir)
            .on_output_violation(|tool, violations| {
                let list: Vec<String> = violations.iter().map(ToString::to_string).collect();
                log(&format!(
                    "warning: tool `{}` returned details that break its declared outputs (a bug \
                     in the tool; the result is sent without structuredContent): {}",
                    tool.name(),
                    list.join("; ")
                ));
            });
        if let Some(t) = timeout.call {
            // `serve --timeout`: the default for tools whose TOOL.md sets none.
            runtime = runtime.default_timeout(t);
        }
        if let Some(t) = timeout.ask {
            runtime = runtime.ask_timeout(t);
        }
        let runtime = runtime.build();
        if offer.progressive.is_some() {
            // Built here, off the async workers: `search_tools` then finds it ready.
            runtime.tool_index();
        }
        Snapshot {
            runtime: Arc::new(runtime),
            tools,
            all_tools,
            skills,
            docs,
            stamp,
        }
    }
}

/// The MCP `Tool` of a spec: the MCP dialect's definition (name, title, description,
/// inputSchema, outputSchema, annotations), so `serve` and `toolbind schema --dialect mcp`
/// agree.
fn mcp_tool(tool: &ToolInfo) -> Option<Tool> {
    let spec = tool.spec();
    if let Some(why) = Dialect::Mcp.rejects(spec) {
        log(&format!(
            "warning: tool `{}` left out: MCP hosts reject its {why}",
            spec.name
        ));
        return None;
    }
    match serde_json::from_value(schema::tool_definition(spec, Dialect::Mcp)) {
        Ok(t) => Some(t),
        Err(e) => {
            log(&format!(
                "warning: tool `{}` left out: its MCP definition is invalid: {e}",
                spec.name
            ));
            None
        }
    }
}

/// What a change to the tools folders touches: each folder's mtime (tool folders
/// added, removed, renamed) and each TOOL.md's mtime and size.
#[derive(Debug, PartialEq, Eq)]
struct Stamp(Vec<StampEntry>);

/// A path, its mtime, and for a tool folder its TOOL.md's mtime and size.
type StampEntry = (PathBuf, Option<SystemTime>, Option<(SystemTime, u64)>);

impl Stamp {
    /// The stamp of the tools folders `dirs` and the skills folders `skills` (for those,
    /// each skill folder's `SKILL.md`; a change to another file of a skill shows when
    /// its folder's mtime does, or at the next reload).
    fn of(dirs: &[PathBuf], skills: &[PathBuf]) -> Self {
        let mut entries = Vec::new();
        for dir in dirs.iter().chain(skills) {
            entries.push((dir.clone(), mtime(dir), None));
            let Ok(read) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut subs: Vec<PathBuf> = read.filter_map(|e| e.ok().map(|e| e.path())).collect();
            subs.sort();
            for sub in subs {
                let tool_md = std::fs::metadata(sub.join(toolbind_codegen::TOOL_FILE))
                    .or_else(|_| std::fs::metadata(sub.join("SKILL.md")))
                    .ok()
                    .and_then(|m| Some((m.modified().ok()?, m.len())));
                entries.push((sub.clone(), mtime(&sub), tool_md));
            }
        }
        Stamp(entries)
    }
}

fn mtime(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// Polls the tools folders; on a change reloads, and when the tool list or the tools'
/// documentation differs tells the sessions (see [`notify_changes`]).
pub(crate) async fn watch(state: Arc<State>) {
    loop {
        tokio::time::sleep(POLL).await;
        let (dirs, offer) = (state.dirs.clone(), state.offer.clone());
        let Ok(stamp) =
            tokio::task::spawn_blocking(move || Stamp::of(&dirs, &offer.skill_dirs)).await
        else {
            continue;
        };
        let old = state.current();
        if stamp == old.stamp {
            continue;
        }
        let (dirs, executor, spill) = (
            state.dirs.clone(),
            state.executor.clone(),
            state.spill_dir.clone(),
        );
        let timeout = state.timeout;
        let offer = state.offer.clone();
        let Ok(new) = tokio::task::spawn_blocking(move || {
            Snapshot::load(&dirs, &executor, &spill, timeout, &offer)
        })
        .await
        else {
            continue;
        };
        let summary = diff(&old.tools, &new.tools);
        let mut pages = old.docs.changed_pages(&new.docs);
        pages.extend(old.skills.changed(&new.skills));
        let changed = Changed {
            tools: summary.is_some(),
            resources: old.docs != new.docs || old.skills != new.skills,
            pages: Some(Arc::new(pages)),
        };
        *state.current.write_locked() = Arc::new(new);
        if let Some(summary) = &summary {
            log(&format!("tool list changed: {summary}"));
        }
        // A changed page is a change of the docs: `resources` covers it.
        if changed.tools || changed.resources {
            let _ = state.changed.send(changed);
        }
    }
}

/// How often a session's notifier checks that its session is still open.
const SESSION_CHECK: Duration = Duration::from_secs(10);

/// Sends `notifications/tools/list_changed` and `notifications/resources/list_changed` to
/// one session opened with `initialize` whenever [`watch`] reports such a change, until
/// the session ends. (2026-07-28 sessions get them on their `subscriptions/listen` stream
/// instead: see `listen`.)
pub(super) async fn notify_changes(
    mut changes: broadcast::Receiver<Changed>,
    peer: Peer<RoleServer>,
    subscribed: Arc<Subscriptions>,
) {
    loop {
        let change = tokio::select! {
            r = changes.recv() => r,
            () = tokio::time::sleep(SESSION_CHECK) => {
                if peer.is_transport_closed() {
                    return;
                }
                continue;
            }
        };
        let changed = match change {
            Ok(c) => c,
            // Missed some: say everything may have changed.
            Err(broadcast::error::RecvError::Lagged(_)) => Changed::missed(),
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let sent = async {
            if changed.tools {
                peer.notify_tool_list_changed().await?;
            }
            if changed.resources {
                peer.notify_resource_list_changed().await?;
            }
            for uri in subscribed.touched_by(|u| changed.touches(u)) {
                peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                    .await?;
            }
            Ok::<(), rmcp::service::ServiceError>(())
        };
        if let Err(e) = sent.await {
            if !peer.is_transport_closed() {
                log(&format!("cannot send a list_changed notification: {e}"));
            }
            return;
        }
    }
}

/// `added a; removed b; changed c`, or `None` when the lists are the same.
fn diff(old: &[Tool], new: &[Tool]) -> Option<String> {
    let find = |list: &[Tool], name: &str| list.iter().position(|t| t.name == name);
    let names = |it: Vec<&Tool>| {
        it.iter()
            .map(|t| t.name.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let added: Vec<&Tool> = new
        .iter()
        .filter(|t| find(old, &t.name).is_none())
        .collect();
    let removed: Vec<&Tool> = old
        .iter()
        .filter(|t| find(new, &t.name).is_none())
        .collect();
    let changed: Vec<&Tool> = new
        .iter()
        .filter(|t| find(old, &t.name).is_some_and(|i| old[i] != **t))
        .collect();
    let reordered = added.is_empty()
        && removed.is_empty()
        && changed.is_empty()
        && old.iter().map(|t| &t.name).ne(new.iter().map(|t| &t.name));
    let mut parts = Vec::new();
    for (label, list) in [("added", added), ("removed", removed), ("changed", changed)] {
        if !list.is_empty() {
            parts.push(format!("{label} {}", names(list)));
        }
    }
    if reordered {
        parts.push("reordered".into());
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}
