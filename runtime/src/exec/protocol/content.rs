//! What a tool returned, checked: a result or progress update normalised into content
//! blocks, each block repaired or replaced by a note, text capped with the runtime's note.

use serde_json::{Map, Value};

use super::binary::{Field, binary_field, spilled_link};
use super::wire::{Cut, CutMessage, kind, preview};
use crate::exec::blobs::Binary;
use crate::exec::error::Malformed;
use crate::result::{
    Content, EmbeddedResource, Progress, ResourceContents, StopReason, ToolResult,
};

/// [`normalize_result_with`], every binary block kept in memory (tests).
#[cfg(test)]
pub(crate) fn normalize_result(value: Value, max_text: usize) -> ToolResult {
    normalize_result_with(value, max_text, &mut Binary::unbounded())
}

/// Turns what `execute` returned into a [`ToolResult`]: `{content, details?, isError?}` as
/// the platform's TOOLS.md says, or a bare string as shorthand for one text block. Text is
/// capped at `max_text` bytes in total, with a note saying how much was cut. Binary data
/// (sent ahead in pieces, or inline) is kept within `binary`'s bound, the rest saved to
/// its spill folder as `resource_link`s.
pub(crate) fn normalize_result_with(
    value: Value,
    max_text: usize,
    binary: &mut Binary<'_>,
) -> ToolResult {
    let mut result = match value {
        Value::String(s) => ToolResult::text(s),
        Value::Object(mut obj) => match obj.remove("content") {
            Some(Value::Array(items)) => ToolResult {
                content: items
                    .into_iter()
                    .map(|b| content_block(b, binary))
                    .collect(),
                details: obj.remove("details").filter(|d| !d.is_null()),
                is_error: match obj.get("isError") {
                    None | Some(Value::Null) => false,
                    Some(Value::Bool(b)) => *b,
                    // `"true"` or `1` is not success: the tool meant something; say what.
                    Some(other) => {
                        return ToolResult::stopped(
                            StopReason::ProtocolError,
                            format!(
                                "malformed result: the tool returned `isError` as {} ({}), expected a boolean (true or false)",
                                kind(other),
                                preview(other.to_string().as_bytes())
                            ),
                        );
                    }
                },
                terminate: matches!(obj.get("terminate"), Some(Value::Bool(true))),
                stop: StopReason::Completed,
                output_check: Default::default(),
                runtime_notes: Default::default(),
            },
            Some(other) => {
                return ToolResult::stopped(
                    StopReason::ProtocolError,
                    format!(
                        "the tool returned `content` as {}, expected an array of {{type, text}} blocks",
                        kind(&other)
                    ),
                );
            }
            None => {
                return ToolResult::stopped(
                    StopReason::ProtocolError,
                    "the tool returned an object without `content`; expected {content: [{type: \"text\", text}]}",
                );
            }
        },
        other => {
            return ToolResult::stopped(
                StopReason::ProtocolError,
                format!(
                    "the tool returned {}; expected {{content: [{{type: \"text\", text}}]}} or a string",
                    kind(&other)
                ),
            );
        }
    };
    if result.is_error {
        result.stop = StopReason::ToolError;
    }
    cap_result(&mut result, max_text);
    result
}

/// Progress content from an `update` message: an array of blocks, a `{content}` object or
/// a string. An object may also carry `progress` and `total` (finite numbers, `progress
/// >= 0`, `total > 0`); anything else in those fields is ignored.
pub(crate) fn normalize_progress(value: Value, max_text: usize) -> Progress {
    let mut progress = None;
    let mut total = None;
    let content = match value {
        Value::Array(items) => items
            .into_iter()
            .map(|b| content_block(b, &mut Binary::unbounded()))
            .collect(),
        Value::Object(mut obj) => {
            progress = obj
                .remove("progress")
                .and_then(|v| v.as_f64())
                .filter(|p| p.is_finite() && *p >= 0.0);
            total = obj
                .remove("total")
                .and_then(|v| v.as_f64())
                .filter(|t| t.is_finite() && *t > 0.0);
            match obj.remove("content") {
                Some(Value::Array(items)) => items
                    .into_iter()
                    .map(|b| content_block(b, &mut Binary::unbounded()))
                    .collect(),
                Some(other) => vec![content_block(other, &mut Binary::unbounded())],
                // `{progress, total}` alone: a position without text.
                None if obj.is_empty() => Vec::new(),
                None => vec![content_block(Value::Object(obj), &mut Binary::unbounded())],
            }
        }
        Value::String(s) => vec![Content::text(s)],
        Value::Null => Vec::new(),
        other => vec![content_block(other, &mut Binary::unbounded())],
    };
    let mut p = Progress {
        content,
        progress,
        total,
    };
    cap_progress(&mut p, max_text);
    p
}

/// A bash tool's fd 3 line as progress: a JSON object with a numeric `progress` (and
/// optionally `total` and `text`) is a position; any other line is plain text.
pub(crate) fn progress_line(line: String, max_text: usize) -> Progress {
    if line.trim_start().starts_with('{')
        && let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(&line)
        && obj.get("progress").is_some_and(Value::is_number)
    {
        return normalize_progress(Value::Object(obj), max_text);
    }
    normalize_progress(Value::String(line), max_text)
}

/// One content block as a tool returned it. A well-formed block is kept as it is; a block
/// whose meaning is clear is repaired (base64 with a `data:` prefix, line breaks, the
/// URL-safe alphabet or no padding; a missing `mimeType` the `data:` prefix names); any
/// other is replaced by a text block saying what was wrong, holding the block's JSON, so
/// nothing the tool returned is dropped without a word.
fn content_block(v: Value, binary: &mut Binary<'_>) -> Content {
    match v {
        Value::String(s) => Content::text(s),
        Value::Object(mut obj) => match checked_block(&mut obj, binary) {
            Ok(c) => c,
            Err(why) => {
                let json = Value::Object(obj).to_string();
                Content::text(format!("[toolbind: {why}; kept as its JSON] {json}"))
            }
        },
        other => Content::text(other.to_string()),
    }
}

/// One block object, checked by its `type`: the block, or what is wrong with it.
fn checked_block(
    obj: &mut Map<String, Value>,
    binary: &mut Binary<'_>,
) -> Result<Content, Malformed> {
    let ty = match obj.get("type") {
        Some(Value::String(t)) => t.clone(),
        // A `{text}` object without a type: the platform's older tools write that.
        None if matches!(obj.get("text"), Some(Value::String(_))) => "text".to_owned(),
        None => return Err("a content block without `type`".into()),
        Some(other) => return Err(bad!("a content block whose `type` is {}", kind(other))),
    };
    match ty.as_str() {
        "text" => text_block(obj),
        "image" | "audio" => media_block(&ty, obj, binary),
        "resource" => resource_block(obj, binary),
        "resource_link" => link_block(obj),
        other => Err(bad!(
            "a content block of unknown type `{}`",
            other.escape_debug()
        )),
    }
}

/// A `text` block: its `text` must be a string.
fn text_block(obj: &mut Map<String, Value>) -> Result<Content, Malformed> {
    match obj.remove("text") {
        Some(Value::String(text)) => Ok(Content::Text { text }),
        other => {
            if let Some(o) = other {
                obj.insert("text".into(), o);
            }
            Err("a text block without a string `text`".into())
        }
    }
}

/// An `image` or `audio` block (`ty`): base64 `data` (inline, or sent ahead in pieces) and
/// a `mimeType`, or a `data:` prefix that names one; over the bound, a link to its spill file.
fn media_block(
    ty: &str,
    obj: &mut Map<String, Value>,
    binary: &mut Binary<'_>,
) -> Result<Content, Malformed> {
    let what = format!("an {ty} block");
    let declared = match obj.get("mimeType") {
        Some(Value::String(m)) if !m.trim().is_empty() => Some(m.clone()),
        _ => None,
    };
    let example = if ty == "image" {
        "image/png"
    } else {
        "audio/wav"
    };
    let no_mime = || format!("{what} without `mimeType` (e.g. \"{example}\")");
    match binary_field(obj.get_mut("data"), declared.as_deref(), binary)
        .map_err(|e| bad!("{what} whose `data` {e}"))?
    {
        Field::Missing => Err(bad!("{what} without base64 `data`")),
        Field::Inline(data, prefix_mime) => {
            let Some(mime_type) = declared.or(prefix_mime) else {
                // The block's JSON is kept in the note: the data goes back.
                obj.insert("data".into(), Value::String(data));
                return Err(no_mime().into());
            };
            Ok(if ty == "image" {
                Content::Image { data, mime_type }
            } else {
                Content::Audio { data, mime_type }
            })
        }
        Field::Spilled {
            path,
            bytes,
            prefix_mime,
        } => {
            let mime_type = declared
                .or(prefix_mime)
                .ok_or_else(|| format!("{}; its data is saved to {}", no_mime(), path.display()))?;
            Ok(spilled_link(&path, bytes, mime_type, &what, binary.bound))
        }
    }
}

/// An embedded `resource` block: a URI, and a string `text` or a base64 `blob` (kept or
/// spilled as a media block's data).
fn resource_block(
    obj: &mut Map<String, Value>,
    binary: &mut Binary<'_>,
) -> Result<Content, Malformed> {
    let Some(Value::Object(r)) = obj.get_mut("resource") else {
        return Err("a resource block without a `resource` object".into());
    };
    let uri =
        match r.get("uri") {
            Some(Value::String(u)) if is_uri(u) => u.clone(),
            Some(Value::String(_)) => return Err(
                "a resource whose `uri` is not a URI (it needs a scheme, e.g. file:///report.pdf)"
                    .into(),
            ),
            _ => return Err("a resource without `uri`".into()),
        };
    let mime_type = match r.get("mimeType") {
        Some(Value::String(m)) => Some(m.clone()),
        None | Some(Value::Null) => None,
        Some(_) => return Err("a resource whose `mimeType` is not a string".into()),
    };
    let contents = match (r.get("text"), r.get("blob")) {
        (Some(_), Some(_)) => {
            return Err("a resource with both `text` and `blob` (it has one or the other)".into());
        }
        (Some(Value::String(t)), None) => ResourceContents::Text { text: t.clone() },
        (None, Some(Value::String(_) | Value::Object(_))) => {
            let field = binary_field(r.get_mut("blob"), mime_type.as_deref(), binary)
                .map_err(|e| format!("a resource whose `blob` {e}"))?;
            return match field {
                Field::Missing => Err("a resource without a string `text` or base64 `blob`".into()),
                Field::Inline(blob, prefix) => Ok(Content::Resource {
                    resource: EmbeddedResource {
                        uri,
                        mime_type: mime_type.or(prefix),
                        contents: ResourceContents::Blob { blob },
                    },
                }),
                Field::Spilled {
                    path,
                    bytes,
                    prefix_mime,
                } => Ok(spilled_link(
                    &path,
                    bytes,
                    mime_type
                        .or(prefix_mime)
                        .unwrap_or_else(|| "application/octet-stream".to_owned()),
                    &format!("the resource {}", shortened(&uri)),
                    binary.bound,
                )),
            };
        }
        _ => return Err("a resource without a string `text` or base64 `blob`".into()),
    };
    Ok(Content::Resource {
        resource: EmbeddedResource {
            uri,
            mime_type,
            contents,
        },
    })
}

/// A `resource_link` block: a URI and, when given, a byte count as `size`.
fn link_block(obj: &mut Map<String, Value>) -> Result<Content, Malformed> {
    if let Some(Value::Number(n)) = obj.get("size")
        && !n.is_u64()
    {
        return Err(bad!(
            "a resource link whose `size` is {n}, not a byte count"
        ));
    }
    match obj.get("uri") {
        Some(Value::String(u)) if is_uri(u) => {}
        Some(Value::String(_)) => return Err(
            "a resource link whose `uri` is not a URI (it needs a scheme, e.g. file:///out.mp3)"
                .into(),
        ),
        _ => return Err("a resource link without `uri`".into()),
    }
    serde_json::from_value::<Content>(Value::Object(obj.clone()))
        .map_err(|e| bad!("a malformed resource link ({e})"))
}

/// A URI cut to 200 bytes for a message.
fn shortened(uri: &str) -> String {
    let mut end = uri.len().min(200);
    while !uri.is_char_boundary(end) {
        end -= 1;
    }
    if end < uri.len() {
        format!("{}...", &uri[..end])
    } else {
        uri.to_owned()
    }
}

/// Whether `s` starts with a URI scheme (`file:`, `https:`, `toolbind:` ...), as RFC 3986
/// writes it, and holds no whitespace or control character.
fn is_uri(s: &str) -> bool {
    crate::host::has_uri_scheme(s) && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// The note a model reads where the runtime cut a tool's output: the one place it is
/// written.
pub(crate) fn note(cut: &Cut) -> String {
    let what = match cut {
        Cut::Chars { cut, limit } => format!("{cut} more characters were cut; limit {limit}"),
        Cut::Message {
            message,
            bytes,
            limit,
            kept,
        } => format!(
            "the {} was {bytes} bytes as JSON, over the {limit}-byte protocol limit; its text is cut to {kept} characters and details are dropped",
            match message {
                CutMessage::Update => "update",
                CutMessage::Result => "result",
            }
        ),
        Cut::Bytes { cut, limit } => format!("{cut} more bytes were cut; limit {limit} bytes"),
        Cut::Output { kept, total } => format!("kept the first {kept} of {total} bytes"),
    };
    format!("[output truncated by the runtime: {what}]")
}

/// A result's text, capped at `max` bytes in all, with the runtime's note for what was cut.
fn cap_result(result: &mut ToolResult, max: usize) {
    if let Some(cut) = cap_text(&mut result.content, max) {
        result.push_runtime_note(note(&cut));
    }
}

/// Progress text, capped at `max` bytes in all, with a note for what was cut.
fn cap_progress(progress: &mut Progress, max: usize) {
    if let Some(cut) = cap_text(&mut progress.content, max) {
        progress.content.push(Content::text(note(&cut)));
    }
}

/// Caps the total text of `content` at `max` bytes (on a char boundary): how much was cut.
fn cap_text(content: &mut [Content], max: usize) -> Option<Cut> {
    let mut budget = max;
    let mut cut = 0usize;
    for block in content.iter_mut() {
        // Text blocks and the text of embedded resources share the budget.
        let text = match block {
            Content::Text { text } => Some(text),
            Content::Resource { resource } => match &mut resource.contents {
                crate::result::ResourceContents::Text { text } => Some(text),
                _ => None,
            },
            _ => None,
        };
        if let Some(text) = text {
            if text.len() <= budget {
                budget -= text.len();
            } else {
                let mut end = budget;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                cut += text.len() - end;
                text.truncate(end);
                budget = 0;
            }
        }
    }
    (cut > 0).then_some(Cut::Bytes {
        cut: cut as u64,
        limit: max as u64,
    })
}
