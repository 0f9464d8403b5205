//! Resources beyond the tools' docs: a session's `resources/subscribe` URIs, and the
//! spill files (`toolbind://spill/<name>`) a session was handed.

use crate::lock::Locked;
use std::collections::BTreeSet;
use std::path::Path;

use rmcp::ErrorData as McpError;
use rmcp::model::ReadResourceResponse;

use crate::serve::surface;

/// Resource URIs one session subscribed to, at most this many.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 1024;
/// The longest URI a subscription may name, in bytes (so a session holds at most 4 MiB of
/// them).
pub(crate) const MAX_SUBSCRIPTION_URI: usize = 4096;

/// One session's `resources/subscribe` URIs. Any URI may be subscribed to, one this
/// server does not serve included (MCP leaves that to the server; such a resource never
/// changes here, so nothing is ever sent for it), up to [`MAX_SUBSCRIPTIONS`].
#[derive(Default)]
pub(super) struct Subscriptions(std::sync::Mutex<BTreeSet<String>>);

impl Subscriptions {
    pub(super) fn add(&self, uri: String) -> Result<(), McpError> {
        if uri.len() > MAX_SUBSCRIPTION_URI {
            return Err(McpError::invalid_params(
                format!(
                    "a resource URI of {} bytes: at most {MAX_SUBSCRIPTION_URI} may be subscribed to",
                    uri.len()
                ),
                None,
            ));
        }
        let mut set = self.0.locked();
        if set.len() >= MAX_SUBSCRIPTIONS && !set.contains(&uri) {
            return Err(McpError::invalid_params(
                format!(
                    "too many resource subscriptions: a session may hold {MAX_SUBSCRIPTIONS}; \
                     unsubscribe from some first"
                ),
                Some(serde_json::json!({"uri": uri})),
            ));
        }
        set.insert(uri);
        Ok(())
    }

    pub(super) fn remove(&self, uri: &str) {
        self.0.locked().remove(uri);
    }

    /// The subscribed URIs a change may have touched (`touches`: the change's
    /// `Changed::touches`).
    pub(super) fn touched_by(&self, touches: impl Fn(&str) -> bool) -> Vec<String> {
        let set = self.0.locked();
        set.iter().filter(|u| touches(u)).cloned().collect()
    }
}

/// Where `serve` names what the runtime saved to the spill folder.
pub(super) const SPILL_URI_PREFIX: &str = "toolbind://spill/";

/// `resources/read` of `toolbind://spill/<name>`: the file, as text (a truncated block's
/// full text) or a base64 blob, off the async threads. `name` is the client's: one a spill
/// file has, or resource-not-found.
pub(super) async fn read_spill(
    dir: &Path,
    name: &str,
    uri: &str,
) -> Result<ReadResourceResponse, McpError> {
    let (dir, owned) = (dir.to_path_buf(), name.to_owned());
    let read = tokio::task::spawn_blocking(move || toolbind::spill::read_spill(&dir, &owned))
        .await
        .map_err(|e| {
            McpError::internal_error(format!("reading the spill file failed: {e}"), None)
        })?;
    match read {
        Ok((bytes, mime)) => {
            let contents = if mime == "text/plain" {
                rmcp::model::ResourceContents::text(
                    String::from_utf8_lossy(&bytes).into_owned(),
                    uri,
                )
            } else {
                rmcp::model::ResourceContents::blob(toolbind::spill::base64_encode(&bytes), uri)
            };
            Ok(rmcp::model::ReadResourceResult::new(vec![contents.with_mime_type(mime)]).into())
        }
        Err(
            e @ (toolbind::spill::ReadError::NotASpillName | toolbind::spill::ReadError::NotFound),
        ) => Err(spill_not_found(uri, e)),
        Err(e) => Err(McpError::internal_error(
            format!("cannot read `{}`: {e}", surface::shortened(uri)),
            None,
        )),
    }
}

/// A spill resource that is not found (or not this session's): the URI, shortened.
pub(super) fn spill_not_found(uri: &str, e: toolbind::spill::ReadError) -> McpError {
    let uri = surface::shortened(uri);
    McpError::resource_not_found(
        format!("no resource `{uri}`: {e}"),
        Some(serde_json::json!({ "uri": uri })),
    )
}
