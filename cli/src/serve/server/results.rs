//! Result mapping: a runtime `ToolResult` as MCP's `CallToolResult` (spill paths named
//! as resources, details in `_meta` and `structuredContent`).

use rmcp::model::{CallToolResult, ContentBlock, MetaObject};
use serde_json::Value;
use toolbind::output::OutputCheck;
use toolbind::{Content, ToolResult};

use super::State;
use super::resources::SPILL_URI_PREFIX;

/// A runtime result as an MCP `CallToolResult`; `details` travels in `_meta`. For a tool
/// that declares `outputs:`, a result whose details passed the runtime's check
/// ([`OutputCheck::Held`]) also carries them as `structuredContent`, as the MCP spec asks of a
/// tool with an `outputSchema`; one whose details break the contract goes without it (the
/// runtime has logged why).
///
/// What the runtime saved to the spill folder is named by a `toolbind://spill/<name>`
/// resource (readable with `resources/read`, with the same token): a binary block's
/// `file://` link and the path in a truncation note are server-side paths a remote client
/// cannot open. Each file this process wrote is handed to `owner` (the session of the
/// call), who alone can read it.
pub(super) fn to_mcp(r: ToolResult, state: &State, owner: Option<&str>) -> CallToolResult {
    let spill_dir = &state.spill_dir;
    let structured = r.output_check == OutputCheck::Held;
    let note_path = format!("saved to: {}/", spill_dir.display());
    let content = r
        .content
        .into_iter()
        .map(|c| match c {
            Content::Text { text } if text.contains(&note_path) => {
                for (at, _) in text.match_indices(&note_path) {
                    let rest = &text[at + note_path.len()..];
                    let end = rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
                        .unwrap_or(rest.len());
                    state
                        .spills
                        .hand_out(rest[..end].trim_end_matches('.'), owner);
                }
                ContentBlock::text(
                    text.replace(&note_path, &format!("saved to: {SPILL_URI_PREFIX}")),
                )
            }
            Content::Text { text } => ContentBlock::text(text),
            Content::ResourceLink(mut link) => {
                if let Some(name) = toolbind::spill::spill_name(spill_dir, &link.uri) {
                    state.spills.hand_out(name, owner);
                    link.uri = format!("{SPILL_URI_PREFIX}{name}");
                }
                let json = serde_json::to_value(Content::ResourceLink(link)).unwrap_or_default();
                use serde::Deserialize;
                ContentBlock::deserialize(&json)
                    .unwrap_or_else(|_| ContentBlock::text(json.to_string()))
            }
            Content::Image { data, mime_type } => ContentBlock::image(data, mime_type),
            // Audio, embedded resources and resource links: the runtime's blocks have
            // MCP's shapes. One rmcp cannot read (or a kind newer than this server): its
            // JSON, as text.
            other => {
                use serde::Deserialize;
                let json = serde_json::to_value(&other).unwrap_or_default();
                ContentBlock::deserialize(&json)
                    .unwrap_or_else(|_| ContentBlock::text(json.to_string()))
            }
        })
        .collect();
    let mut out = if r.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    if structured {
        // No details at all passed the check only because every output is optional.
        out.structured_content = Some(
            r.details
                .clone()
                .unwrap_or_else(|| Value::Object(serde_json::Map::new())),
        );
    }
    if let Some(details) = r.details {
        let mut meta = serde_json::Map::new();
        meta.insert("details".into(), details);
        out.meta = Some(MetaObject(meta));
    }
    out
}

/// A call the server's end stopped: its text says so first.
pub(super) fn shut_down(mut r: ToolResult) -> ToolResult {
    if let Some(Content::Text { text }) = r.content.first_mut() {
        text.insert_str(
            0,
            "the server shut down before the call finished (it may have run in part; call again on another replica): ",
        );
    }
    r
}
