//! A [rig](https://docs.rs/rig-agent/0.44.0) adapter (feature `rig`, rig 0.44).
//!
//! Every loaded tool becomes a rig `DynamicTool` whose callback is [`Runtime::call`]: rig's
//! agent loop sends the model's arguments, toolbind validates and runs them, and the
//! result comes back as a rig `ToolOutput` (text and images) — or, for an error result (an
//! unknown tool, bad arguments, a failing tool), as a rig `ToolExecutionError` whose
//! message is the model-readable text, which rig hands the model with `is_error: true`.
//!
//! ```no_run
//! # async fn demo(runtime: toolbind::Runtime, model: rig_core::DynModel<rig_core::operation::Completion>) {
//! use std::sync::Arc;
//! use rig_agent::AgentBuilder;
//!
//! let runtime = Arc::new(runtime);
//! let agent = AgentBuilder::new(model)
//!     .dynamic_tools(toolbind::rig::dynamic_tools(&runtime))
//!     .build();
//! let answer = agent.prompt("What is on my todo list?").max_turns(4).await;
//! # }
//! ```

use std::sync::Arc;

use rig_core::message::{ImageMediaType, MimeType, ToolName, ToolResultContent};
use rig_core::tool::{DynamicTool, ToolExecutionError, ToolOutput};

use crate::result::{Content, ToolResult};
use crate::runtime::{CallOptions, Runtime};

/// Every tool callable now ([`Runtime::tool_list`]) as a rig `DynamicTool` with its portable JSON
/// Schema, in load order.
pub fn dynamic_tools(runtime: &Arc<Runtime>) -> Vec<DynamicTool> {
    runtime
        .tool_list()
        .iter()
        .filter_map(|spec| {
            // Loaded tools have non-empty names; `ToolName` refuses only empty ones.
            let name = ToolName::new(spec.name().to_owned()).ok()?;
            let rt = Arc::clone(runtime);
            let tool = spec.name().to_owned();
            Some(DynamicTool::new(
                name,
                spec.description().to_owned(),
                spec.input_schema().clone(),
                move |args| {
                    let rt = Arc::clone(&rt);
                    let tool = tool.clone();
                    Box::pin(async move { to_rig(rt.call(&tool, args, CallOptions::new()).await) })
                },
            ))
        })
        .collect()
}

/// Every loaded tool in a rig `ToolSet` (for `ToolServer::add_tools`).
pub fn tool_set(runtime: &Arc<Runtime>) -> rig_agent::tool::ToolSet {
    rig_agent::tool::ToolSet::from_dynamic_tools(dynamic_tools(runtime))
}

/// A toolbind result as rig's: content blocks (text, base64 images) on success, a tool
/// error carrying the model-readable text on an error result.
pub fn to_rig(result: ToolResult) -> Result<ToolOutput, ToolExecutionError> {
    if result.is_error {
        return Err(ToolExecutionError::other(result.text_content()));
    }
    let blocks: Vec<ToolResultContent> = result
        .content
        .into_iter()
        .map(|c| match c {
            Content::Text { text } => ToolResultContent::text(text),
            Content::Image { data, mime_type } => ToolResultContent::image_base64(
                data,
                ImageMediaType::from_mime_type(&mime_type),
                None,
            ),
            // rig's tool results hold text and images only.
            other => {
                ToolResultContent::text(crate::provider::describe_block(&other).unwrap_or_default())
            }
        })
        .collect();
    if blocks.is_empty() {
        // rig refuses an empty content list.
        return Ok(ToolOutput::text(""));
    }
    ToolOutput::content(blocks)
}
