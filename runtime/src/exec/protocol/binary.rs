//! Binary data in a result (an image's or audio's `data`, a resource's `blob`): base64
//! repaired where its meaning is clear, kept within the call's bound or spilled to a file.

use serde_json::Value;

use crate::exec::blobs::{Binary, Kept};
use crate::exec::error::Malformed;
use crate::result::{Content, ResourceLink};
use crate::spill::file_url;

/// A binary field (`data`, `blob`) as found in a block.
pub(super) enum Field {
    Missing,
    /// Standard base64, in memory; the MIME type a `data:` prefix named.
    Inline(String, Option<String>),
    Spilled {
        path: std::path::PathBuf,
        bytes: u64,
        prefix_mime: Option<String>,
    },
}

/// Reads a binary field: a base64 string, or `{"ref": n}` naming pieces the harness sent
/// ahead. Kept in memory within the call's bound (repaired as [`base64_text`] says), or
/// saved to the spill folder. An error completes "an image whose `data` …".
pub(super) fn binary_field(
    field: Option<&mut Value>,
    declared: Option<&str>,
    binary: &mut Binary<'_>,
) -> Result<Field, Malformed> {
    let Some(field) = field else {
        return Ok(Field::Missing);
    };
    // Pieces held in memory were counted against the bound as they arrived.
    let mut counted = false;
    let text = match field {
        Value::String(s) => std::mem::take(s),
        Value::Object(r) => {
            counted = true;
            let Some(n) = r
                .get("ref")
                .and_then(Value::as_u64)
                .filter(|_| r.len() == 1)
            else {
                return Ok(Field::Missing);
            };
            match binary.take(n, declared)? {
                Kept::Memory(s) => s,
                Kept::Spilled {
                    path,
                    bytes,
                    prefix_mime,
                } => {
                    return Ok(Field::Spilled {
                        path,
                        bytes,
                        prefix_mime,
                    });
                }
            }
        }
        _ => return Ok(Field::Missing),
    };
    let (fix, prefix) = match base64_text(&text) {
        Ok(found) => found,
        Err(e) => {
            // The block's JSON is kept in the note: the text goes back where it was.
            *field = Value::String(text);
            return Err(e);
        }
    };
    let mut slot = Value::String(text);
    let data = fix.apply(Some(&mut slot));
    if counted {
        return Ok(Field::Inline(data, prefix));
    }
    match binary.inline(data, declared.or(prefix.as_deref()))? {
        Kept::Memory(data) => Ok(Field::Inline(data, prefix)),
        Kept::Spilled {
            path,
            bytes,
            prefix_mime,
        } => Ok(Field::Spilled {
            path,
            bytes,
            prefix_mime: prefix_mime.or(prefix),
        }),
    }
}

/// The `resource_link` that replaces a binary block saved to the spill folder.
pub(super) fn spilled_link(
    path: &std::path::Path,
    bytes: u64,
    mime_type: String,
    what: &str,
    bound: usize,
) -> Content {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut link = ResourceLink::new(file_url(path), name);
    link.description = Some(format!(
        "{what} of {bytes} bytes, over the {bound}-byte bound for binary data a result holds: saved to the spill folder"
    ));
    link.mime_type = Some(mime_type);
    link.size = Some(bytes);
    Content::ResourceLink(link)
}

/// What [`base64_text`] found: the data as written is base64 once its `data:` prefix (of
/// this many bytes) is taken off, or it was repaired into this text.
pub(crate) enum Base64Fix {
    Keep(usize),
    Replace(String),
}

impl Base64Fix {
    /// The base64 text, taking the tool's string out of its block when it needs no repair
    /// (a 16 MiB image is moved, not copied).
    fn apply(self, field: Option<&mut Value>) -> String {
        let taken = match field {
            Some(Value::String(s)) => std::mem::take(s),
            _ => String::new(),
        };
        match self {
            Base64Fix::Keep(0) => taken,
            Base64Fix::Keep(prefix) => {
                let mut s = taken;
                s.drain(..prefix);
                s
            }
            Base64Fix::Replace(s) => s,
        }
    }
}

/// Base64 text in the standard alphabet with padding, from what a tool wrote: a `data:`
/// URL's prefix is taken off (its MIME type returned), line breaks and spaces removed, the
/// URL-safe alphabet and missing padding accepted. Anything else is not base64: the
/// error says where.
pub(crate) fn base64_text(written: &str) -> Result<(Base64Fix, Option<String>), Malformed> {
    let (data, mime) = match written.strip_prefix("data:") {
        Some(rest) => match rest.split_once(',') {
            Some((head, body)) if head.ends_with(";base64") => {
                let mime = head
                    .trim_end_matches(";base64")
                    .split(';')
                    .next()
                    .unwrap_or("");
                (body, (!mime.is_empty()).then(|| mime.to_owned()))
            }
            _ => return Err("is a data: URL that is not base64 (`;base64,` missing)".into()),
        },
        None => (written, None),
    };
    let clean = data
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
    let prefix = written.len() - data.len();
    if clean {
        // The common case, checked without a copy: canonical padding.
        let body = data.trim_end_matches('=');
        let pad = data.len() - body.len();
        if !body.is_empty()
            && !body.contains('=')
            && body.len() % 4 != 1
            && pad == (4 - body.len() % 4) % 4
        {
            return Ok((Base64Fix::Keep(prefix), mime));
        }
    }
    let mut out = if clean {
        data.to_owned()
    } else {
        let (mut url_safe, mut standard) = (false, false);
        let mut out = String::with_capacity(data.len());
        for (i, c) in data.char_indices() {
            match c {
                'A'..='Z' | 'a'..='z' | '0'..='9' | '=' => out.push(c),
                '+' | '/' => {
                    standard = true;
                    out.push(c);
                }
                '-' => {
                    url_safe = true;
                    out.push('+');
                }
                '_' => {
                    url_safe = true;
                    out.push('/');
                }
                ' ' | '\n' | '\r' | '\t' => {}
                other => {
                    return Err(bad!(
                        "is not base64: byte {i} is {:?}",
                        other.escape_debug().to_string()
                    ));
                }
            }
        }
        if url_safe && standard {
            return Err(
                "is not base64: it mixes the standard (`+`, `/`) and URL-safe (`-`, `_`) alphabets"
                    .into(),
            );
        }
        out
    };
    let body = out.trim_end_matches('=');
    if body.contains('=') || out.len() - body.len() > 2 {
        return Err("is not base64: `=` padding inside the data or more than two".into());
    }
    if body.is_empty() {
        return Err("is empty".into());
    }
    // The padding a decoder wants, whatever was written (none, too little, too much).
    let pad = match body.len() % 4 {
        1 => {
            return Err(bad!(
                "is not base64: {} characters cannot be whole bytes",
                body.len()
            ));
        }
        0 => 0,
        rest => 4 - rest,
    };
    let len = body.len();
    if out.len() != len + pad {
        out.truncate(len);
        out.push_str(&"=="[..pad]);
    }
    Ok((Base64Fix::Replace(out), mime))
}
