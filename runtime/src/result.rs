//! Tool results in the seed's JSON shape: `{content: [{type, text}], details?, isError?}`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One block of a tool's output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Content {
    /// `{type: "text", text}`
    Text { text: String },
    /// `{type: "image", data, mimeType}` — base64 data.
    Image {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

impl Content {
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text } => Some(text),
            Content::Image { .. } => None,
        }
    }
}

/// What a tool call returns to the model.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolResult {
    pub content: Vec<Content>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(
        rename = "isError",
        default,
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub is_error: bool,
    /// The tool asks the agent loop to stop after this batch (seed 002's `terminate:
    /// true`): a [`Batch`](crate::batch::Batch) reports it when every result in the batch
    /// says so. Never sent to the model.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub terminate: bool,
}

impl ToolResult {
    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolResult {
            content: vec![Content::text(text)],
            details: None,
            is_error: false,
            terminate: false,
        }
    }

    /// An error result with one text block the model can act on.
    pub fn error(text: impl Into<String>) -> Self {
        ToolResult {
            content: vec![Content::text(text)],
            details: None,
            is_error: true,
            terminate: false,
        }
    }

    /// All text blocks joined by newlines.
    pub fn text_content(&self) -> String {
        let texts: Vec<&str> = self.content.iter().filter_map(Content::as_text).collect();
        texts.join("\n")
    }
}

/// A progress update from `onUpdate` (seed 000: `{content: [{type, text}]}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub content: Vec<Content>,
}
