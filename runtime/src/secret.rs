//! A wrapper for sensitive inputs: Debug and Display never show the value.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use crate::sensitive::REDACTED;

/// A sensitive value (`sensitive: true` in TOOL.md). It serialises transparently — the tool
/// needs the real value — but `Debug` and `Display` print [`REDACTED`].
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Secret<T>(T);

impl<T> Secret<T> {
    /// Wraps a value.
    pub const fn new(value: T) -> Self {
        Secret(value)
    }

    /// The real value. Named so every read of a secret is easy to find.
    pub fn expose(&self) -> &T {
        &self.0
    }

    /// The value, unwrapped.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> From<T> for Secret<T> {
    fn from(value: T) -> Self {
        Secret(value)
    }
}

impl From<&str> for Secret<String> {
    fn from(value: &str) -> Self {
        Secret(value.to_owned())
    }
}

impl<T> fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl<T> fmt::Display for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl<T: Serialize> Serialize for Secret<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// A value that does not fit is refused without quoting it: serde's message would (`invalid
/// type: integer \`123456789\``), and a secret inside a list or object has no field of its
/// own to hide it.
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Secret<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        T::deserialize(d)
            .map(Secret)
            .map_err(|_| D::Error::custom("invalid value (sensitive, not shown)"))
    }
}

/// Sensitive values shorter than this many characters are not redacted from outbound
/// text: replacing every `1234` or `true` in a result would corrupt ordinary text and
/// still not hide a value that short. Keep secrets at least this long.
pub const MIN_REDACTED_CHARS: usize = 6;

/// The values of the sensitive inputs of one call, as the tool sees them.
pub(crate) fn secrets_of(
    tool: &toolbind_codegen::model::ToolSpec,
    params: &serde_json::Map<String, serde_json::Value>,
) -> Vec<String> {
    crate::sensitive::sensitive_texts(tool, params)
        .into_iter()
        .filter(|s| s.chars().count() >= MIN_REDACTED_CHARS)
        .collect()
}

/// Replaces sensitive values in everything that leaves a call. Each value is looked for as
/// is and in its JSON-escaped forms (`"` -> `\"`, escaped twice for JSON inside JSON, and
/// with non-ASCII as `\uXXXX` as Python's `json.dumps` writes it), longest first.
#[derive(Debug, Clone, Default)]
pub(crate) struct Redactor {
    needles: Vec<String>,
}

impl Redactor {
    pub(crate) fn new(values: &[String]) -> Self {
        let mut needles = Vec::new();
        for v in values {
            if v.chars().count() < MIN_REDACTED_CHARS {
                continue;
            }
            let once = json_escape(v, false);
            let twice = json_escape(&once, false);
            let ascii = json_escape(v, true);
            let ascii_twice = json_escape(&ascii, true);
            needles.extend([v.clone(), once, twice, ascii, ascii_twice]);
        }
        needles.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        needles.dedup();
        Redactor { needles }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// `text` with every needle replaced by [`REDACTED`].
    pub(crate) fn text(&self, text: &str) -> String {
        let mut out = text.to_owned();
        self.in_place(&mut out);
        out
    }

    pub(crate) fn in_place(&self, text: &mut String) {
        for n in &self.needles {
            if text.contains(n.as_str()) {
                *text = text.replace(n.as_str(), REDACTED);
            }
        }
    }

    /// Every string (and object key) in `value`; a number equal to a secret becomes the
    /// string [`REDACTED`].
    pub(crate) fn value(&self, value: &mut serde_json::Value) {
        use serde_json::Value;
        match value {
            Value::String(s) => self.in_place(s),
            Value::Number(n) => {
                if self.needles.iter().any(|x| *x == n.to_string()) {
                    *value = Value::String(REDACTED.into());
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.value(v)),
            Value::Object(map) => {
                let old = std::mem::take(map);
                for (mut k, mut v) in old {
                    self.in_place(&mut k);
                    self.value(&mut v);
                    map.insert(k, v);
                }
            }
            Value::Bool(_) | Value::Null => {}
        }
    }

    pub(crate) fn content(&self, content: &mut [crate::result::Content]) {
        use crate::result::{Content, ResourceContents};
        for block in content {
            match block {
                Content::Text { text } => self.in_place(text),
                Content::Resource { resource } => {
                    self.in_place(&mut resource.uri);
                    if let ResourceContents::Text { text } = &mut resource.contents {
                        self.in_place(text);
                    }
                }
                Content::ResourceLink(l) => {
                    self.in_place(&mut l.uri);
                    self.in_place(&mut l.name);
                    for t in [&mut l.title, &mut l.description].into_iter().flatten() {
                        self.in_place(t);
                    }
                }
                // Base64 data: a secret in it is not its text.
                Content::Image { .. } | Content::Audio { .. } => {}
            }
        }
    }

    /// The text blocks and `details` of a result.
    pub(crate) fn result(&self, result: &mut crate::result::ToolResult) {
        if self.is_empty() {
            return;
        }
        self.content(&mut result.content);
        if let Some(d) = &mut result.details {
            self.value(d);
        }
    }
}

/// The body of the JSON string literal of `s` (no quotes); `ascii` escapes everything
/// beyond ASCII as `\uXXXX` (UTF-16 units, lowercase hex, as Python writes them).
fn json_escape(s: &str, ascii: bool) -> String {
    let quoted = serde_json::to_string(s).unwrap_or_default();
    let body = &quoted[1..quoted.len().saturating_sub(1).max(1)];
    if !ascii {
        return body.to_owned();
    }
    let mut out = String::with_capacity(body.len());
    for c in body.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redactor_finds_raw_and_json_escaped_forms_and_skips_short_values() {
        let r = Redactor::new(&["pa\"ss\\wörd".into(), "12345".into()]);
        let raw = "x pa\"ss\\wörd y";
        assert_eq!(r.text(raw), "x [REDACTED] y");
        let json = serde_json::to_string(&serde_json::json!({"t": "pa\"ss\\wörd"})).unwrap();
        assert!(!r.text(&json).contains("ss"), "{}", r.text(&json));
        let twice = serde_json::to_string(&json).unwrap();
        assert!(!r.text(&twice).contains("ss"), "{}", r.text(&twice));
        assert_eq!(r.text("pa\\\"ss\\\\w\\u00f6rd"), "[REDACTED]");
        // Too short to redact without corrupting ordinary text.
        assert_eq!(r.text("id 12345"), "id 12345");
        let mut v = serde_json::json!({"pa\"ss\\wörd": [1, "a pa\"ss\\wörd"]});
        r.value(&mut v);
        assert_eq!(v, serde_json::json!({"[REDACTED]": [1, "a [REDACTED]"]}));
    }

    #[test]
    fn secrets_are_redacted_from_resources_and_links_too() {
        use crate::result::{Content, EmbeddedResource, ResourceLink};
        let r = Redactor::new(&["hunter2-very-secret".into()]);
        let mut link = ResourceLink::new("https://x/?k=hunter2-very-secret", "n");
        link.description = Some("key hunter2-very-secret".into());
        let mut content = vec![
            Content::Resource {
                resource: EmbeddedResource::text("file:///t", "the key is hunter2-very-secret"),
            },
            Content::ResourceLink(link),
        ];
        r.content(&mut content);
        let json = serde_json::to_string(&content).unwrap();
        assert!(!json.contains("hunter2"), "{json}");
        assert_eq!(json.matches("[REDACTED]").count(), 3, "{json}");
    }

    #[test]
    fn a_value_that_does_not_fit_is_refused_without_quoting_it() {
        for v in [
            serde_json::json!(123456789),
            serde_json::json!(["hunter22"]),
        ] {
            let e = serde_json::from_value::<Secret<String>>(v.clone())
                .unwrap_err()
                .to_string();
            assert!(!e.contains("123456789") && !e.contains("hunter22"), "{e}");
            assert!(e.contains("sensitive, not shown"), "{e}");
        }
        // Inside a list, where no field of its own hides it.
        let e = serde_json::from_value::<Vec<Secret<String>>>(serde_json::json!(["ok", 987654321]))
            .unwrap_err()
            .to_string();
        assert!(!e.contains("987654321"), "{e}");
    }

    #[test]
    fn debug_and_display_redact() {
        let s = Secret::new("hunter2-very-secret".to_owned());
        assert_eq!(format!("{s:?}"), REDACTED);
        assert_eq!(format!("{s}"), REDACTED);
        assert_eq!(format!("{:?}", Some(&s)), format!("Some({REDACTED})"));
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            "\"hunter2-very-secret\""
        );
    }
}
