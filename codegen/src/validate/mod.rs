//! The typed pass: a located YAML tree -> [`ToolSpec`], with every rule of the format
//! checked and every error of a file collected (never just the first).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::diagnostic::{Diagnostic, Severity, suggest};
use crate::ident;
use crate::model::{
    Annotations, Approval, Ask, BashOutput, DiscoveryMode, EnumValue, Execution, Input, InputType,
    Language, MAX_DEPTH, OutputField, OutputType, PLAIN_CALL_TIMEOUT_SECS, Pos, TaskSupport,
    ToolSandbox, ToolSpec, WorkerMode,
};
use crate::parse::{Document, YNode, YValue};
use crate::schema::Dialect;

mod inputs;
mod keys;
mod outputs;
mod schema_block;
mod set;
mod tool;
mod values;

pub(crate) use outputs::item_type_base;
pub use set::{check_set, folder_name_warnings};
pub use tool::tool_from_document;

use inputs::*;
use keys::*;
use outputs::*;
use schema_block::*;
use values::*;

/// Rules a caller may relax. The defaults are strict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub(crate) portable_names: bool,
    pub(crate) require_entry: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            portable_names: true,
            require_entry: true,
        }
    }
}

impl Options {
    /// Reject tool and parameter names that no model provider accepts (see
    /// [`Dialect::accepts_tool_name`] and [`Dialect::accepts_param_name`]). A name only
    /// some providers reject is a warning either way; a name that is not a single path
    /// component is an error either way. Default `true`.
    pub fn portable_names(mut self, on: bool) -> Self {
        self.portable_names = on;
        self
    }

    /// Require the entry file (`index.ts`, `index.py`, `index.sh`...) beside TOOL.md.
    /// Default `true`.
    pub fn require_entry(mut self, on: bool) -> Self {
        self.require_entry = on;
        self
    }

    /// See [`portable_names`](Self::portable_names).
    pub fn get_portable_names(&self) -> bool {
        self.portable_names
    }

    /// See [`require_entry`](Self::require_entry).
    pub fn get_require_entry(&self) -> bool {
        self.require_entry
    }
}

pub(crate) const TOOL_KEYS: &[&str] = &[
    "name",
    "label",
    "description",
    "version",
    "language",
    "inputs",
    "outputs",
    "prompt_snippet",
    "prompt_guidelines",
    "timeout",
    "env",
    "annotations",
    "worker",
    "sandbox",
    "execution",
    "discovery",
    "output",
    "task",
    "approval",
    "asks",
];

/// Keys of JSON-Schema-style tool formats: loading such a tool with no inputs would change
/// what it does, so they are errors that say how to convert.
const SCHEMA_STYLE_KEYS: &[&str] = &[
    "parameters",
    "input_schema",
    "inputSchema",
    "params",
    "arguments",
];

pub(crate) const INPUT_KEYS: &[&str] = &[
    "type",
    "description",
    "optional",
    "required",
    "sensitive",
    "values",
    "default",
    "properties",
    "items",
    "title",
    "minimum",
    "maximum",
    "min_items",
    "max_items",
];

/// The keys of an output spec (TOOL.md `outputs:`, an object's `properties:`, `items:`).
pub(crate) const OUTPUT_KEYS: &[&str] = &[
    "type",
    "description",
    "optional",
    "values",
    "items",
    "properties",
];

const SANDBOX_KEYS: &[&str] = &["network"];

const ANNOTATION_KEYS: &[&str] = &["read_only", "destructive", "idempotent", "open_world"];

const TYPE_NAMES: &[&str] = &[
    "string", "number", "integer", "boolean", "enum", "object", "array",
];

const LANGUAGE_NAMES: &[&str] = &["typescript", "python", "bash"];

/// Common spellings from other schema languages, mapped to ours.
fn type_alias(word: &str) -> Option<&'static str> {
    Some(match word.to_lowercase().as_str() {
        "str" | "text" => "string",
        "int" | "int32" | "int64" | "long" | "uint" => "integer",
        "float" | "double" | "num" | "decimal" => "number",
        "bool" => "boolean",
        "choice" | "select" | "enumeration" => "enum",
        "list" | "seq" | "sequence" | "vec" | "tuple" => "array",
        "dict" | "map" | "mapping" | "struct" | "record" | "hash" => "object",
        _ => return None,
    })
}

fn language_alias(word: &str) -> Option<&'static str> {
    Some(match word.to_lowercase().as_str() {
        "ts" | "javascript" | "js" | "node" => "typescript",
        "py" | "python3" => "python",
        "sh" | "shell" | "zsh" => "bash",
        _ => return None,
    })
}

struct Ctx<'a> {
    file: &'a Path,
    text: Arc<str>,
    diags: Vec<Diagnostic>,
}

impl Ctx<'_> {
    fn err(&mut self, node: &YNode, msg: impl Into<String>) -> &mut Diagnostic {
        self.err_at(node.pos, node.width(), msg)
    }

    fn warn(&mut self, node: &YNode, msg: impl Into<String>) -> &mut Diagnostic {
        self.warn_at(node.pos, node.width(), msg)
    }

    fn warn_at(&mut self, pos: Pos, len: usize, msg: impl Into<String>) -> &mut Diagnostic {
        let d = self.err_at(pos, len, msg);
        d.severity = Severity::Warning;
        d
    }

    /// How many errors (not warnings) have been reported so far.
    fn errors(&self) -> usize {
        self.diags.iter().filter(|d| d.is_error()).count()
    }

    fn err_at(&mut self, pos: Pos, len: usize, msg: impl Into<String>) -> &mut Diagnostic {
        self.diags.push(
            Diagnostic::new(self.file, pos, msg)
                .span(len)
                .source_text(self.text.clone()),
        );
        self.diags.last_mut().expect("just pushed")
    }

    fn string(&mut self, key: &str, node: &YNode) -> Option<String> {
        match &node.value {
            YValue::Str(s) => Some(s.clone()),
            _ => {
                let kind = node.kind();
                self.err(node, format!("`{key}` must be a string, found {kind}"))
                    .hint = Some(format!("write `{key}: \"...\"`"));
                None
            }
        }
    }

    fn nonempty_string(&mut self, key: &str, node: &YNode) -> Option<String> {
        let s = self.string(key, node)?;
        if s.trim().is_empty() {
            self.err(node, format!("`{key}` must not be empty"));
            return None;
        }
        // A `|` block keeps its final newline; nothing downstream wants it.
        Some(s.trim_end().to_owned())
    }

    fn boolean(&mut self, key: &str, node: &YNode) -> Option<bool> {
        match &node.value {
            YValue::Bool(b) => Some(*b),
            // A lossless conversion, as for defaults: `"true"` means true.
            YValue::Str(s) if matches!(s.trim(), "true" | "false") => {
                let b = s.trim() == "true";
                self.warn(node, format!("`{key}` is a quoted string; read as {b}"))
                    .hint = Some(format!("remove the quotes: `{key}: {b}`"));
                Some(b)
            }
            _ => {
                let kind = node.kind();
                self.err(
                    node,
                    format!("`{key}` must be `true` or `false`, found {kind}"),
                );
                None
            }
        }
    }

    /// An unknown key where every key changes what the tool may do (inside `sandbox:`):
    /// ignoring it could widen a policy the author meant to narrow, so it is an error.
    fn unknown_key(&mut self, what: &str, key: &YNode, name: &str, known: &[&str]) {
        let hint = match suggest(name, known) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("expected one of: {}", known.join(", ")),
        };
        self.err(key, format!("unknown {what} `{name}`")).hint = Some(hint);
    }

    /// A key toolbind does not read. A near-miss of a known key whose value has that key's
    /// shape (`optinal: true`) is an error: ignoring it would silently change the tool.
    /// Anything else is metadata the platform ignores too: a warning, and the value is
    /// kept in `metadata`.
    fn extra_key(
        &mut self,
        what: &str,
        key: &YNode,
        value: &YNode,
        name: &str,
        known: &[&str],
        metadata: &mut BTreeMap<String, Value>,
    ) {
        // Another format's word for a key toolbind reads (`secret: true` for `sensitive`,
        // `required: false` for `optional: true`): ignoring it would silently change the
        // tool, as a misspelling would.
        if let Some((target, hint)) = synonym(name)
            && known.contains(&target)
            // `required: true` says what is already so: harmless metadata.
            && !(name == "required" && matches!(value.value, YValue::Bool(true)))
            && has_shape_of(target, value)
        {
            self.err(key, format!("unknown {what} `{name}`")).hint = Some(hint.to_owned());
            return;
        }
        // A plural of a known key (`labels`, `names`) is another word, most likely metadata.
        let guess = suggest(name, known).filter(|g| name != format!("{g}s"));
        if let Some(g) = guess
            && crate::diagnostic::near_miss(name, known) == Some(g)
            && has_shape_of(g, value)
        {
            self.err(key, format!("unknown {what} `{name}`")).hint =
                Some(format!("did you mean `{g}`?"));
            return;
        }
        let hint = match guess {
            Some(g) => format!("if you meant `{g}`, rename it; otherwise it is only metadata"),
            None => "toolbind does not read it; it stays available as metadata".to_owned(),
        };
        self.warn(key, format!("unknown {what} `{name}` is ignored"))
            .hint = Some(hint);
        metadata.insert(name.to_owned(), to_json(value));
    }
}

/// Words other tool formats use for keys toolbind reads, and the fix.
fn synonym(name: &str) -> Option<(&'static str, &'static str)> {
    Some(match name {
        "secret" | "password" | "sensitive_value" => (
            "sensitive",
            "did you mean `sensitive`? (a sensitive value is never logged nor shown)",
        ),
        "required" => (
            "optional",
            "inputs are required by default: write `optional: true` for one that is not",
        ),
        "enum" | "choices" | "options" => ("values", "did you mean `values`? (with `type: enum`)"),
        _ => return None,
    })
}

/// Whether `value` has the shape the known key `key` takes, so that a misspelling of `key`
/// holding it was most likely meant as `key`.
fn has_shape_of(key: &str, value: &YNode) -> bool {
    let scalar = !matches!(value.value, YValue::Seq(_) | YValue::Map(_) | YValue::Null);
    match key {
        "inputs" | "outputs" | "annotations" | "sandbox" | "items" | "properties" => {
            matches!(value.value, YValue::Map(_))
        }
        "prompt_guidelines" | "env" | "values" => {
            matches!(value.value, YValue::Seq(_) | YValue::Str(_))
        }
        "optional" | "sensitive" | "read_only" | "destructive" | "idempotent" | "open_world"
        | "network" => matches!(value.value, YValue::Bool(_)),
        // `lang: en` is metadata; `lang: python` means `language`.
        "language" => value.as_text().is_some_and(|t| {
            Language::from_name(&t.to_lowercase()).is_some() || language_alias(&t).is_some()
        }),
        "version" => match &value.value {
            YValue::UInt(_) | YValue::Int(_) => true,
            YValue::Str(s) => crate::parse::version_from_text(s).is_some(),
            YValue::Float(f) => crate::parse::version_from_float(*f).is_some(),
            _ => false,
        },
        "timeout" => matches!(
            value.value,
            YValue::UInt(_) | YValue::Int(_) | YValue::Float(_)
        ),
        "default" => scalar,
        // `worker: warm`, `execution: sequential`, names and texts: a string.
        _ => matches!(value.value, YValue::Str(_)),
    }
}

/// A YAML value as JSON, for metadata: scalars by value, everything else recursively.
fn to_json(node: &YNode) -> Value {
    match &node.value {
        YValue::Null => Value::Null,
        YValue::Bool(b) => Value::Bool(*b),
        YValue::Int(i) => Value::from(*i),
        YValue::UInt(u) => Value::from(*u),
        YValue::Float(f) => serde_json::Number::from_f64(*f).map_or_else(
            || Value::String(node.as_text().unwrap_or_default()),
            Value::Number,
        ),
        YValue::Str(s) => Value::String(s.clone()),
        YValue::Seq(items) => Value::Array(items.iter().map(to_json).collect()),
        YValue::Map(entries) => Value::Object(
            entries
                .iter()
                .map(|(k, v)| (k.as_text().unwrap_or_default(), to_json(v)))
                .collect(),
        ),
    }
}

fn map_entries(node: &YNode) -> Option<&[(YNode, YNode)]> {
    match &node.value {
        YValue::Map(m) => Some(m),
        _ => None,
    }
}

fn key_name(k: &YNode) -> Option<String> {
    k.as_text()
}
