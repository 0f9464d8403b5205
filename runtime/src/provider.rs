//! Model providers' wire formats: tool definitions, tool calls and results for OpenAI
//! (Chat Completions and Responses), Anthropic and Gemini ([`Provider`]).

use serde_json::{Map, Value, json};
use toolbind_codegen::schema::{self, Dialect};

use crate::batch::{Answered, Batch, ToolCallRequest};
use crate::loader::Registry;
use crate::result::{Content, ToolResult};

/// A model provider's API.
///
/// Provider round trips: tool definitions out, a model's tool calls in, results back in the
/// provider's own message format — for OpenAI Chat Completions, OpenAI Responses, Anthropic
/// Messages and Gemini `generateContent`.
///
/// Everything is plain [`serde_json::Value`], so any HTTP client works: send
/// [`Provider::definitions`] as the request's tools, read the response body as JSON, append
/// [`Provider::model_turn`] to the conversation, run [`Provider::tool_calls`] as a
/// [batch](crate::batch::Batch), append [`Provider::results`], ask again; stop when the model
/// makes no call ([`Provider::text`] is its answer) or the batch says
/// [`terminate`](crate::batch::Batch::terminate).
///
/// ```no_run
/// use serde_json::{Value, json};
/// use toolbind::batch::BatchOptions;
/// use toolbind::provider::Provider;
/// # async fn post(_: &Value) -> Value { unimplemented!() }
/// # async fn demo(runtime: toolbind::Runtime) {
/// let p = Provider::OpenAiChat;
/// let mut messages = vec![json!({"role": "user", "content": "What is on my todo list?"})];
/// loop {
///     let request = json!({
///         "model": "gpt-4.1-mini",
///         "messages": messages,
///         "tools": p.definitions(&runtime.tool_list(), false),
///     });
///     let response = post(&request).await; // POST /v1/chat/completions, body as JSON
///     messages.extend(p.model_turn(&response));
///     let calls = p.tool_calls(&response);
///     if calls.is_empty() {
///         println!("{}", p.text(&response).unwrap_or_default());
///         break;
///     }
///     let batch = runtime.call_batch(calls, BatchOptions::new()).await;
///     messages.extend(p.results(&batch));
///     if batch.terminate() {
///         break;
///     }
/// }
/// # }
/// ```
///
/// What each provider gets back (from the providers' SDK types and docs):
///
/// | provider | results | images in a result | error flag |
/// |---|---|---|---|
/// | [`OpenAiChat`](Provider::OpenAiChat) | one `{role: "tool", tool_call_id, content}` per call | described in text | text starts `Error:` |
/// | [`OpenAiResponses`](Provider::OpenAiResponses) | one `{type: "function_call_output", call_id, output}` per call | `input_image` data URLs | text starts `Error:` |
/// | [`Anthropic`](Provider::Anthropic) | one user message, a `tool_result` block per call | `image` blocks (png, jpeg, gif, webp) | `is_error` |
/// | [`Gemini`](Provider::Gemini) | one `user` content, a `functionResponse` part per call | `functionResponse.parts` `inlineData` (png, jpeg, webp) | `response.error` |
///
/// Only a result's content reaches the model — never its `details` and never the params:
/// a sensitive input's value can appear only where the tool itself put it in its output,
/// which the runtime has already redacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI Chat Completions (`POST /v1/chat/completions`) and the many servers that copy
    /// it.
    OpenAiChat,
    /// OpenAI Responses (`POST /v1/responses`).
    OpenAiResponses,
    /// Anthropic Messages (`POST /v1/messages`).
    Anthropic,
    /// Gemini `generateContent`.
    Gemini,
}

impl Provider {
    /// Every provider.
    pub const ALL: [Provider; 4] = [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Anthropic,
        Provider::Gemini,
    ];

    /// The schema dialect of the provider's tool definitions. `strict` selects OpenAI's
    /// strict mode (every property required, optional ones nullable); the other providers
    /// have one dialect.
    pub fn dialect(self, strict: bool) -> Dialect {
        match (self, strict) {
            (Provider::OpenAiChat, false) => Dialect::OpenAi,
            (Provider::OpenAiChat, true) => Dialect::OpenAiStrict,
            (Provider::OpenAiResponses, false) => Dialect::OpenAiResponses,
            (Provider::OpenAiResponses, true) => Dialect::OpenAiResponsesStrict,
            (Provider::Anthropic, _) => Dialect::Anthropic,
            (Provider::Gemini, _) => Dialect::Gemini,
        }
    }

    /// The request's tool definitions for every loaded tool the provider accepts: the
    /// value of `tools` (a JSON array; for Gemini, `[{functionDeclarations: [...]}]`).
    pub fn definitions(self, registry: &Registry, strict: bool) -> Value {
        let dialect = self.dialect(strict);
        let defs: Vec<Value> = registry
            .iter()
            .filter(|t| dialect.rejects(t.spec()).is_none())
            .map(|t| schema::tool_definition(t.spec(), dialect))
            .collect();
        match self {
            Provider::Gemini => json!([{ "functionDeclarations": defs }]),
            _ => Value::Array(defs),
        }
    }

    /// The tool calls in a provider's response body, in order. A call's arguments that are
    /// not valid JSON (OpenAI sends them as a string) become an error for the model; Gemini
    /// calls without an id get a stable one made from their position and name. Calls of
    /// other kinds than functions (OpenAI `custom` tools) are not toolbind's and are left
    /// out.
    ///
    /// Also accepts the message or item list itself instead of the whole body (Chat's
    /// `message`, Responses' `output`, Anthropic's `content`, Gemini's `content`).
    pub fn tool_calls(self, response: &Value) -> Vec<ToolCallRequest> {
        match self {
            Provider::OpenAiChat => {
                let message = chat_message(response);
                array(message.get("tool_calls"))
                    .filter(|c| c.get("type").is_none_or(|t| t == "function"))
                    .map(|c| {
                        let f = c.get("function").unwrap_or(&Value::Null);
                        openai_call(
                            str_of(c.get("id")),
                            str_of(f.get("name")),
                            f.get("arguments"),
                        )
                    })
                    .collect()
            }
            Provider::OpenAiResponses => responses_output(response)
                .filter(|i| i.get("type").is_some_and(|t| t == "function_call"))
                .map(|i| {
                    openai_call(
                        str_of(i.get("call_id")),
                        str_of(i.get("name")),
                        i.get("arguments"),
                    )
                })
                .collect(),
            Provider::Anthropic => anthropic_content(response)
                .filter(|b| b.get("type").is_some_and(|t| t == "tool_use"))
                .map(|b| {
                    ToolCallRequest::new(
                        str_of(b.get("id")),
                        str_of(b.get("name")),
                        b.get("input").cloned().unwrap_or(Value::Null),
                    )
                })
                .collect(),
            Provider::Gemini => gemini_parts(response)
                .filter_map(|p| p.get("functionCall"))
                .enumerate()
                .map(|(i, f)| {
                    let name = str_of(f.get("name"));
                    let args = f.get("args").cloned().unwrap_or(Value::Null);
                    match f.get("id").and_then(Value::as_str) {
                        Some(id) if !id.is_empty() => ToolCallRequest::new(id, name, args),
                        _ => {
                            let id = format!("call_{i}_{name}");
                            ToolCallRequest::new(id, name, args).with_generated_id()
                        }
                    }
                })
                .collect(),
        }
    }

    /// What to append to the conversation for the model's turn, unchanged: Chat's
    /// assistant `message`; every Responses `output` item (function calls, and reasoning
    /// items reasoning models need back); Anthropic's `{role: "assistant", content}`;
    /// Gemini's `content` (its `thoughtSignature`s must go back as they came).
    pub fn model_turn(self, response: &Value) -> Vec<Value> {
        match self {
            Provider::OpenAiChat => vec![chat_message(response).clone()],
            Provider::OpenAiResponses => responses_output(response).cloned().collect(),
            Provider::Anthropic => {
                let content: Vec<Value> = anthropic_content(response).cloned().collect();
                vec![json!({"role": "assistant", "content": content})]
            }
            Provider::Gemini => {
                let mut content = gemini_content(response).clone();
                if let Value::Object(m) = &mut content {
                    m.entry("role").or_insert_with(|| "model".into());
                }
                vec![content]
            }
        }
    }

    /// The text of the model's answer in a response, when it has any.
    pub fn text(self, response: &Value) -> Option<String> {
        let texts: Vec<&str> = match self {
            Provider::OpenAiChat => match chat_message(response).get("content") {
                Some(Value::String(s)) => vec![s.as_str()],
                Some(Value::Array(parts)) => parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect(),
                _ => Vec::new(),
            },
            Provider::OpenAiResponses => responses_output(response)
                .filter(|i| i.get("type").is_some_and(|t| t == "message"))
                .flat_map(|i| array(i.get("content")))
                .filter(|c| c.get("type").is_some_and(|t| t == "output_text"))
                .filter_map(|c| c.get("text").and_then(Value::as_str))
                .collect(),
            Provider::Anthropic => anthropic_content(response)
                .filter(|b| b.get("type").is_some_and(|t| t == "text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect(),
            Provider::Gemini => gemini_parts(response)
                .filter(|p| !p.get("thought").is_some_and(|t| t == true))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect(),
        };
        (!texts.is_empty()).then(|| texts.concat())
    }

    /// A batch's results as the messages (or input items) to append after
    /// [`model_turn`](Self::model_turn), in call order: see [`Provider`].
    pub fn results(self, batch: &Batch) -> Vec<Value> {
        let answered = &batch.results;
        match self {
            Provider::OpenAiChat => answered.iter().map(chat_result).collect(),
            Provider::OpenAiResponses => answered.iter().map(responses_result).collect(),
            Provider::Anthropic if answered.is_empty() => Vec::new(),
            // All results of a turn in one user message, `tool_result` blocks only: the API
            // refuses a turn whose results are split or preceded by text.
            Provider::Anthropic => vec![json!({
                "role": "user",
                "content": answered.iter().map(anthropic_result).collect::<Vec<_>>(),
            })],
            Provider::Gemini if answered.is_empty() => Vec::new(),
            Provider::Gemini => vec![json!({
                "role": "user",
                "parts": answered.iter().map(gemini_result).collect::<Vec<_>>(),
            })],
        }
    }
}

fn str_of(v: Option<&Value>) -> String {
    v.and_then(Value::as_str).unwrap_or_default().to_owned()
}

fn array(v: Option<&Value>) -> std::slice::Iter<'_, Value> {
    match v {
        Some(Value::Array(a)) => a.iter(),
        _ => [].iter(),
    }
}

/// OpenAI's `arguments` is JSON text; an OpenAI-compatible server that sends an object
/// instead is taken at its word.
fn openai_call(id: String, name: String, arguments: Option<&Value>) -> ToolCallRequest {
    match arguments {
        Some(Value::String(text)) => ToolCallRequest::from_json_text(id, name, text),
        Some(other) => ToolCallRequest::new(id, name, other.clone()),
        None => ToolCallRequest::new(id, name, Value::Null),
    }
}

fn chat_message(response: &Value) -> &Value {
    response.pointer("/choices/0/message").unwrap_or(response)
}

fn responses_output(response: &Value) -> std::slice::Iter<'_, Value> {
    match response {
        Value::Array(items) => items.iter(),
        other => array(other.get("output")),
    }
}

fn anthropic_content(response: &Value) -> std::slice::Iter<'_, Value> {
    match response {
        Value::Array(blocks) => blocks.iter(),
        other => array(other.get("content")),
    }
}

fn gemini_content(response: &Value) -> &Value {
    response
        .pointer("/candidates/0/content")
        .unwrap_or(response)
}

fn gemini_parts(response: &Value) -> std::slice::Iter<'_, Value> {
    array(gemini_content(response).get("parts"))
}

/// An image: an image block, or an embedded resource whose blob is an image (a tool
/// returning a screenshot file); its MIME type and base64 data.
fn image_of(block: &Content) -> Option<(&str, &str)> {
    use crate::result::ResourceContents;
    match block {
        Content::Image { data, mime_type } => Some((mime_type, data)),
        Content::Resource { resource } => match (&resource.mime_type, &resource.contents) {
            (Some(m), ResourceContents::Blob { blob }) if m.starts_with("image/") => {
                Some((m, blob))
            }
            _ => None,
        },
        _ => None,
    }
}

/// An embedded binary resource that is not an image (a PDF a tool returns whole): its MIME
/// type, base64 data and a file name from its URI, for the providers that take files.
fn file_of(block: &Content) -> Option<(&str, &str, &str)> {
    use crate::result::ResourceContents;
    match block {
        Content::Resource { resource } => match (&resource.mime_type, &resource.contents) {
            (Some(m), ResourceContents::Blob { blob }) if !m.starts_with("image/") => {
                let name = resource.uri.rsplit('/').next().filter(|n| !n.is_empty());
                Some((m, blob, name.unwrap_or("file")))
            }
            _ => None,
        },
        _ => None,
    }
}

/// An image block in words, for a provider (or a format) that takes no image there.
fn describe_image(mime_type: &str, data: &str, why: &str) -> String {
    format!(
        "[image: {mime_type}, about {} bytes, not shown: {why}]",
        decoded_len(data)
    )
}

/// About how many bytes base64 `data` holds: 4 characters per 3 bytes.
fn decoded_len(data: &str) -> usize {
    data.len() / 4 * 3
}

/// An audio, resource or resource-link block as text, for the providers: none of them
/// takes these in a tool result. A resource's text is given whole (it is what the tool
/// returned: a file, a page); binary data is described. `None` for text and images,
/// which each provider handles itself.
pub fn describe_block(block: &Content) -> Option<String> {
    use crate::result::ResourceContents;
    Some(match block {
        Content::Text { .. } | Content::Image { .. } => return None,
        Content::Audio { data, mime_type } => format!(
            "[audio: {mime_type}, about {} bytes, not shown: tool results take no audio]",
            decoded_len(data)
        ),
        Content::Resource { resource } => {
            let mime = resource
                .mime_type
                .as_deref()
                .map_or(String::new(), |m| format!(" ({m})"));
            match &resource.contents {
                ResourceContents::Text { text } => {
                    format!("[resource {}{mime}]\n{text}", resource.uri)
                }
                ResourceContents::Blob { blob } => format!(
                    "[resource {}{mime}: about {} bytes of binary data, not shown]",
                    resource.uri,
                    decoded_len(blob)
                ),
            }
        }
        Content::ResourceLink(l) => {
            let mut s = format!(
                "[resource link: {}]({})",
                l.title.as_deref().unwrap_or(&l.name),
                l.uri
            );
            if let Some(d) = &l.description {
                s.push_str(" — ");
                s.push_str(d);
            }
            s
        }
    })
}

/// The result's text blocks, images described, joined by newlines; `Error: ` first for an
/// error result when the provider has no error flag.
fn text_of(result: &ToolResult, image_why: Option<&str>, error_prefix: bool) -> String {
    let mut parts: Vec<String> = Vec::new();
    for block in &result.content {
        match block {
            Content::Text { text } => parts.push(text.clone()),
            Content::Image { data, mime_type } => {
                if let Some(why) = image_why {
                    parts.push(describe_image(mime_type, data, why));
                }
            }
            other => parts.extend(describe_block(other)),
        }
    }
    let mut text = parts.join("\n");
    if error_prefix && result.is_error {
        text.insert_str(0, "Error: ");
    }
    if text.is_empty() {
        text.push_str("(no output)");
    }
    text
}

fn chat_result(a: &Answered) -> Value {
    json!({
        "role": "tool",
        "tool_call_id": a.call.id,
        "content": text_of(
            &a.result,
            Some("Chat Completions tool messages take text only"),
            true,
        ),
    })
}

fn responses_result(a: &Answered) -> Value {
    // `function_call_output.output` takes `input_text`, `input_image` and `input_file`
    // parts: images (and image resources) and binary resources go as themselves.
    let has_part = a
        .result
        .content
        .iter()
        .any(|c| image_of(c).is_some() || file_of(c).is_some());
    let output = if has_part {
        let mut items = Vec::new();
        if a.result.is_error {
            items.push(json!({"type": "input_text", "text": "Error:"}));
        }
        for block in &a.result.content {
            items.push(match (block, image_of(block), file_of(block)) {
                (Content::Text { text }, _, _) => json!({"type": "input_text", "text": text}),
                (_, Some((mime_type, data)), _) => json!({
                    "type": "input_image",
                    "image_url": format!("data:{mime_type};base64,{data}"),
                }),
                (_, _, Some((mime_type, data, filename))) => json!({
                    "type": "input_file",
                    "file_data": format!("data:{mime_type};base64,{data}"),
                    "filename": filename,
                }),
                (other, None, None) => json!({
                    "type": "input_text",
                    "text": describe_block(other).unwrap_or_default(),
                }),
            });
        }
        Value::Array(items)
    } else {
        Value::String(text_of(&a.result, None, true))
    };
    json!({"type": "function_call_output", "call_id": a.call.id, "output": output})
}

const ANTHROPIC_IMAGES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];
const GEMINI_IMAGES: &[&str] = &["image/png", "image/jpeg", "image/webp"];

fn anthropic_result(a: &Answered) -> Value {
    let mut content = Vec::new();
    for block in &a.result.content {
        match block {
            // The API refuses empty text blocks.
            Content::Text { text } if text.is_empty() => {}
            Content::Text { text } => content.push(json!({"type": "text", "text": text})),
            // `tool_result` content takes text, image and search-result blocks.
            _ if image_of(block).is_some() => {
                let (mime_type, data) = image_of(block).unwrap_or_default();
                if ANTHROPIC_IMAGES.contains(&mime_type) {
                    content.push(json!({
                        "type": "image",
                        "source": {"type": "base64", "media_type": mime_type, "data": data},
                    }));
                } else {
                    content.push(json!({
                        "type": "text",
                        "text": describe_image(mime_type, data, "Anthropic takes jpeg, png, gif and webp only"),
                    }));
                }
            }
            other => content.push(json!({
                "type": "text",
                "text": describe_block(other).unwrap_or_default(),
            })),
        }
    }
    let mut block = Map::new();
    block.insert("type".into(), "tool_result".into());
    block.insert("tool_use_id".into(), a.call.id.clone().into());
    if !content.is_empty() {
        block.insert("content".into(), Value::Array(content));
    }
    block.insert("is_error".into(), a.result.is_error.into());
    Value::Object(block)
}

fn gemini_result(a: &Answered) -> Value {
    let mut images = Vec::new();
    let mut texts = Vec::new();
    for block in &a.result.content {
        match block {
            Content::Text { text } => texts.push(text.clone()),
            _ if image_of(block).is_some() => {
                let (mime_type, data) = image_of(block).unwrap_or_default();
                if GEMINI_IMAGES.contains(&mime_type) {
                    images.push(json!({"inlineData": {"mimeType": mime_type, "data": data}}));
                } else {
                    texts.push(describe_image(
                        mime_type,
                        data,
                        "Gemini takes png, jpeg and webp only",
                    ));
                }
            }
            other => texts.extend(describe_block(other)),
        }
    }
    let key = if a.result.is_error { "error" } else { "output" };
    let mut f = Map::new();
    if !a.call.generated_id {
        f.insert("id".into(), a.call.id.clone().into());
    }
    f.insert("name".into(), a.call.name.clone().into());
    f.insert("response".into(), json!({ key: texts.join("\n") }));
    if !images.is_empty() {
        f.insert("parts".into(), Value::Array(images));
    }
    json!({ "functionResponse": f })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{EmbeddedResource, ResourceLink};

    #[test]
    fn blocks_no_provider_takes_are_described_a_resources_text_given_whole() {
        let audio = Content::Audio {
            data: "A".repeat(400),
            mime_type: "audio/wav".into(),
        };
        assert_eq!(
            describe_block(&audio).unwrap(),
            "[audio: audio/wav, about 300 bytes, not shown: tool results take no audio]"
        );
        let text = Content::Resource {
            resource: EmbeddedResource::text("file:///notes.md", "# Notes\nline")
                .mime_type("text/markdown"),
        };
        assert_eq!(
            describe_block(&text).unwrap(),
            "[resource file:///notes.md (text/markdown)]\n# Notes\nline"
        );
        let blob = Content::Resource {
            resource: EmbeddedResource::blob("file:///a.bin", "AAAA"),
        };
        assert!(
            describe_block(&blob)
                .unwrap()
                .contains("about 3 bytes of binary data")
        );
        let mut link = ResourceLink::new("https://e.example/r", "r");
        link.title = Some("The report".into());
        link.description = Some("Q3".into());
        assert_eq!(
            describe_block(&Content::ResourceLink(link)).unwrap(),
            "[resource link: The report](https://e.example/r) — Q3"
        );
        assert_eq!(describe_block(&Content::text("t")), None);
        // A text-only result of these reads as their descriptions.
        let r = ToolResult {
            content: vec![Content::text("see:"), text],
            ..ToolResult::text("")
        };
        assert_eq!(
            text_of(&r, None, false),
            "see:\n[resource file:///notes.md (text/markdown)]\n# Notes\nline"
        );
    }

    /// An image resource goes as an image wherever images go; a PDF resource as a file to
    /// OpenAI Responses (`input_file`), described elsewhere.
    #[test]
    fn image_and_file_resources_go_where_each_provider_takes_them() {
        let shot = Content::Resource {
            resource: EmbeddedResource::blob("file:///tmp/shot.png", "iVBORw0K")
                .mime_type("image/png"),
        };
        let pdf = Content::Resource {
            resource: EmbeddedResource::blob("file:///tmp/report.pdf", "JVBERi0x")
                .mime_type("application/pdf"),
        };
        let answered = Answered {
            call: crate::batch::ToolCallRequest::new("c1", "t", serde_json::json!({})),
            result: ToolResult {
                content: vec![Content::text("here"), shot, pdf],
                ..ToolResult::text("")
            },
        };
        let out = &responses_result(&answered)["output"];
        assert_eq!(
            out,
            &serde_json::json!([
                {"type": "input_text", "text": "here"},
                {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0K"},
                {"type": "input_file", "file_data": "data:application/pdf;base64,JVBERi0x", "filename": "report.pdf"},
            ])
        );
        let a = anthropic_result(&answered);
        assert_eq!(a["content"][1]["source"]["media_type"], "image/png");
        assert!(
            a["content"][2]["text"]
                .as_str()
                .unwrap()
                .contains("report.pdf"),
            "{a}"
        );
        let g = gemini_result(&answered);
        assert_eq!(
            g["functionResponse"]["parts"][0]["inlineData"]["mimeType"],
            "image/png"
        );
        assert!(
            g["functionResponse"]["response"]["output"]
                .as_str()
                .unwrap()
                .contains("report.pdf")
        );
    }
}
