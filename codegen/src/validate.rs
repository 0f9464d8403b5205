//! The typed pass: a located YAML tree -> [`ToolSpec`], with every rule of the format
//! checked and every error of a file collected (never just the first).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::diagnostic::{Diagnostic, Severity, suggest};
use crate::ident;
use crate::model::{
    Annotations, BashOutput, EnumValue, Execution, Input, InputType, Language, MAX_DEPTH,
    OutputField, OutputType, Pos, ToolSandbox, ToolSpec, WorkerMode,
};
use crate::parse::{Document, YNode, YValue};
use crate::schema::Dialect;

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
    "output",
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

/// A JSON Schema object as other frameworks' tool folders write it: a mapping with
/// `properties` (a mapping) and, if any, `type: object`.
fn is_object_schema(v: &YNode) -> bool {
    let Some(entries) = map_entries(v) else {
        return false;
    };
    let get = |name: &str| {
        entries
            .iter()
            .find(|(k, _)| key_name(k).as_deref() == Some(name))
            .map(|(_, v)| v)
    };
    get("properties").is_some_and(|p| matches!(p.value, YValue::Map(_)))
        && get("type").is_none_or(|t| t.as_text().as_deref() == Some("object"))
}

/// The inputs of a JSON Schema `parameters:` block (or `input_schema:`, `inputSchema:`,
/// ...), mapped as an MCP server's `inputSchema` is, with a warning at the key that shows
/// the `inputs:` it was read as.
fn schema_inputs(
    cx: &mut Ctx<'_>,
    root: &YNode,
    key: &YNode,
    block: &YNode,
    name: &str,
) -> Vec<Input> {
    let json = to_json(block);
    let file = cx.file.to_path_buf();
    let at = |ptr: &str| (file.clone(), yaml_pos(root, ptr));
    let mut m = crate::from_schema::Mapper::new(&json, format!("/{name}"), &at, GENERATED_TYPES);
    m.untyped_hint = "the field takes any JSON value (a `serde_json::Value` in Rust): TOOL.md `inputs:` cannot type it";
    let inputs = m.params();
    for w in m.warnings {
        cx.warn_at(w.pos, 1, w.message).hint = w.hint;
    }
    let mut yaml = String::new();
    inputs_yaml(&inputs, 1, &mut yaml);
    cx.warn(
        key,
        format!("`{name}:` is a JSON Schema block, not TOOL.md's `inputs:`: read as the `inputs:` it maps to"),
    )
    .hint = Some(format!(
        "replace `{name}:` with the `inputs:` it was read as:\ninputs:\n{}",
        yaml.trim_end()
    ));
    inputs
}

/// Where the value at JSON pointer `ptr` of the frontmatter starts: at its key for a
/// mapping's entry, at the deepest node the pointer reaches.
fn yaml_pos(root: &YNode, ptr: &str) -> Pos {
    let mut node = root;
    let mut pos = root.pos;
    for seg in ptr.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        let next = match &node.value {
            YValue::Map(m) => m
                .iter()
                .find(|(k, _)| key_name(k).as_deref() == Some(seg.as_str()))
                .map(|(k, v)| (k.pos, v)),
            YValue::Seq(items) => seg
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get(i))
                .map(|v| (v.pos, v)),
            _ => None,
        };
        match next {
            Some((p, v)) => (pos, node) = (p, v),
            None => break,
        }
    }
    pos
}

/// `inputs` as TOOL.md spells them, `depth` levels (two spaces each) in. What TOOL.md has
/// no word for (an untyped value, a map, a constant, `null`) is a comment saying so.
fn inputs_yaml(inputs: &[Input], depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    for i in inputs {
        let key = if !i.name.is_empty()
            && i.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            i.name.clone()
        } else {
            serde_json::to_string(&i.name).expect("strings serialize")
        };
        out.push_str(&format!("{pad}{key}:\n"));
        spec_yaml(i, depth + 1, out);
    }
}

/// The keys of one input spec (its `type:`, `description:`, ...), `depth` levels in.
fn spec_yaml(i: &Input, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    let json = |v: &Value| serde_json::to_string(v).expect("JSON serializes");
    let mut line = |text: String| out.push_str(&format!("{pad}{text}\n"));
    match i.ty {
        InputType::Map | InputType::Any | InputType::Const => {
            let what = match i.ty {
                InputType::Map => "an object of any keys",
                InputType::Const => "one constant value",
                _ => "any JSON value",
            };
            line(format!("# {what}: TOOL.md has no type for it"));
        }
        ty => line(format!("type: {}", ty.as_str())),
    }
    if let Some(t) = &i.title {
        line(format!("title: {}", json(&Value::String(t.clone()))));
    }
    if !i.description.is_empty() {
        line(format!(
            "description: {}",
            json(&Value::String(i.description.clone()))
        ));
    } else if !i.name.is_empty() {
        line("# description: none in the schema, and `inputs:` needs one".into());
    }
    if i.optional {
        line("optional: true".into());
    }
    if i.nullable {
        line("# may also be null: TOOL.md has no word for it".into());
    }
    if !i.values.is_empty() {
        let values: Vec<String> = i
            .values
            .iter()
            .map(|v| json(&Value::String(v.wire.clone())))
            .collect();
        line(format!("values: [{}]", values.join(", ")));
    }
    if let Some(d) = &i.default {
        line(format!("default: {}", json(d)));
    }
    for (key, v) in [("minimum", i.minimum), ("maximum", i.maximum)] {
        if let Some(v) = v {
            line(format!("{key}: {v}"));
        }
    }
    for (key, v) in [("min_items", i.min_items), ("max_items", i.max_items)] {
        if let Some(v) = v {
            line(format!("{key}: {v}"));
        }
    }
    if i.ty == InputType::Object {
        line("properties:".into());
        inputs_yaml(&i.properties, depth + 1, out);
    } else if let (InputType::Array, Some(item)) = (i.ty, &i.items) {
        line("items:".into());
        spec_yaml(item, depth + 1, out);
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

/// Builds a [`ToolSpec`] from a parsed document, checking every rule of the format.
/// `dir` is the tool folder; the entry file is looked up there when `opts.require_entry`.
pub fn tool_from_document(
    file: &Path,
    dir: &Path,
    doc: &Document,
    opts: &Options,
) -> Result<ToolSpec, Vec<Diagnostic>> {
    let mut cx = Ctx {
        file,
        text: doc.text.clone(),
        diags: Vec::new(),
    };
    let fence = Pos::new(1, 1);
    let Some(root) = &doc.frontmatter else {
        cx.err_at(fence, 3, "frontmatter is empty").hint =
            Some("add at least `name:` and `description:` between the `---` lines".into());
        return Err(cx.diags);
    };
    let Some(entries) = map_entries(root) else {
        let kind = root.kind();
        cx.err(
            root,
            format!("frontmatter must be a mapping of keys, found {kind}"),
        )
        .hint = Some("write `key: value` lines such as `name: my_tool`".into());
        return Err(cx.diags);
    };

    let mut name = None;
    let mut name_node = None;
    let mut label = None;
    let mut description = None;
    let mut version = 0u64;
    let mut language = Language::default();
    let mut language_pos = None;
    let mut language_invalid = false;
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    let mut outputs_key = None;
    let mut prompt_snippet = None;
    let mut guidelines: Vec<(String, YNode)> = Vec::new();
    let mut timeout_secs = None;
    let mut env = Vec::new();
    let mut annotations = Annotations::default();
    let mut worker = WorkerMode::Default;
    let mut execution = Execution::Parallel;
    let mut bash_output: Option<(BashOutput, &YNode)> = None;
    let mut metadata = BTreeMap::new();
    let mut sandbox = ToolSandbox::default();

    // A JSON Schema block is read as the inputs only when it is the one place they are
    // given: beside `inputs:` or a second block, which one is meant is not guessed.
    let inputs_given = entries
        .iter()
        .filter(|(k, v)| match key_name(k).as_deref() {
            Some("inputs") => true,
            Some(key) => SCHEMA_STYLE_KEYS.contains(&key) && is_object_schema(v),
            None => false,
        })
        .count();
    for (k, v) in entries {
        let Some(key) = key_name(k) else {
            cx.err(k, "frontmatter keys must be strings");
            continue;
        };
        match key.as_str() {
            "name" => {
                name = match &v.value {
                    // `name: 123` is YAML's integer, and a name providers accept.
                    YValue::UInt(_) | YValue::Int(_) if v.raw.is_some() => {
                        let text = v.raw.clone().unwrap_or_default();
                        cx.warn(
                            v,
                            format!("`name` is written as a number; read as `{text}`"),
                        )
                        .hint = Some(format!("quote it: `name: \"{text}\"`"));
                        Some(text)
                    }
                    _ => cx.nonempty_string("name", v),
                };
                name_node = Some(v.clone());
            }
            "label" => label = cx.nonempty_string("label", v),
            "description" => description = cx.nonempty_string("description", v),
            "version" => version = check_version(&mut cx, v).unwrap_or(0),
            "language" => {
                language_pos = Some(v.pos);
                match check_language(&mut cx, v) {
                    Some(l) => language = l,
                    None => language_invalid = true,
                }
            }
            "inputs" => inputs = check_inputs(&mut cx, v, opts),
            "outputs" => {
                outputs = check_outputs(&mut cx, v);
                outputs_key = Some(k.clone());
            }
            "prompt_snippet" => prompt_snippet = cx.nonempty_string("prompt_snippet", v),
            "prompt_guidelines" => guidelines = string_list(&mut cx, "prompt_guidelines", v),
            "timeout" => timeout_secs = check_timeout(&mut cx, v),
            "env" => {
                for (var, node) in string_list(&mut cx, "env", v) {
                    if !is_env_name(&var) {
                        cx.warn(
                            &node,
                            format!("`{var}` is not an environment variable name; it is not passed to the tool"),
                        )
                            .hint =
                            Some("use letters, digits and `_`, not starting with a digit".into());
                    } else {
                        env.push(var);
                    }
                }
            }
            "annotations" => annotations = check_annotations(&mut cx, v),
            "worker" => match v.as_text().map(|t| t.to_lowercase()).as_deref() {
                Some("warm") => worker = WorkerMode::Warm,
                Some("oneshot") => worker = WorkerMode::OneShot,
                other => {
                    let found = other.unwrap_or(v.kind()).to_owned();
                    cx.err(v, format!("unknown worker mode `{found}`")).hint =
                        Some("expected `warm` or `oneshot`".into());
                }
            },
            "sandbox" => sandbox = check_sandbox(&mut cx, v),
            "output" => match v.as_text().map(|t| t.to_lowercase()).as_deref() {
                Some("text") => bash_output = Some((BashOutput::Text, v)),
                Some("json") => bash_output = Some((BashOutput::Json, v)),
                other => {
                    let found = other.unwrap_or(v.kind()).to_owned();
                    cx.err(v, format!("unknown output mode `{found}`")).hint = Some(
                        "expected `text` (stdout is the result's text, the default) or `json` (stdout is the whole result object)"
                            .into(),
                    );
                }
            },
            "execution" => match v.as_text().map(|t| t.to_lowercase()).as_deref() {
                Some("parallel") => execution = Execution::Parallel,
                Some("sequential") => execution = Execution::Sequential,
                other => {
                    let found = other.unwrap_or(v.kind()).to_owned();
                    cx.err(v, format!("unknown execution mode `{found}`")).hint = Some(
                        "expected `parallel` (the default) or `sequential` (one call at a time)"
                            .into(),
                    );
                }
            },
            other
                if SCHEMA_STYLE_KEYS.contains(&other)
                    && inputs_given == 1
                    && is_object_schema(v) =>
            {
                inputs = schema_inputs(&mut cx, root, k, v, other);
            }
            other if SCHEMA_STYLE_KEYS.contains(&other) && matches!(v.value, YValue::Map(_)) => {
                cx.err(
                    k,
                    format!(
                        "`{other}` is not a TOOL.md key: a tool's parameters go under `inputs`"
                    ),
                )
                .hint = Some(format!(
                    "rename `{other}:` to `inputs:` and convert a JSON Schema block: each entry of \
                     `properties` becomes `name:` with `type` (string, number, boolean, or enum \
                     with `values:` for a string `enum`) and `description`; a property not in \
                     `required` gets `optional: true`"
                ));
            }
            other => cx.extra_key("key", k, v, other, TOOL_KEYS, &mut metadata),
        }
    }

    if name.is_none() && name_node.is_none() {
        cx.err_at(fence, 3, "missing required key `name`").hint =
            Some("add `name: my_tool` (snake_case) to the frontmatter".into());
    }
    if description.is_none()
        && !entries
            .iter()
            .any(|(k, _)| key_name(k).as_deref() == Some("description"))
    {
        cx.err_at(fence, 3, "missing required key `description`")
            .hint = Some(
            "add `description:` saying what the tool does and when an agent should use it".into(),
        );
    }

    let (rust_module, rust_type) = match (&name, &name_node) {
        (Some(n), Some(node)) => check_tool_name(&mut cx, n, node, opts),
        _ => (String::new(), String::new()),
    };
    if let Some(n) = &name {
        let mut named: Vec<&Input> = Vec::new();
        for top in &inputs {
            top.visit(&mut |i| {
                if !i.name.is_empty() {
                    named.push(i);
                }
            });
        }
        for input in named {
            if let Some((rejecting, those)) = rejected_by(|d| d.accepts_param_name(&input.name)) {
                cx.warn_at(
                    input.pos,
                    input.name.chars().count(),
                    format!(
                        "parameter name `{}` is rejected by {rejecting}: the tool `{n}` is left out of {those}",
                        input.name,
                    ),
                )
                .hint = Some(format!(
                    "rename it to `{}` to reach every provider",
                    snake_suggestion(&input.name)
                ));
            }
        }
    }

    let mut prompt_guidelines = Vec::new();
    for (g, node) in guidelines {
        if let Some(n) = &name
            && !names_tool(&g, n)
        {
            cx.warn(&node, format!("guideline does not name the tool `{n}`"))
                .hint = Some(format!(
                "a model cannot tell which tool \"this tool\" means: write \"use {n} to ...\""
            ));
        }
        prompt_guidelines.push(g);
    }

    // Only a regular file inside the folder is an entry file (a symlink out of the folder,
    // a FIFO, a folder are not, and are never opened); one that is there as such a file is
    // reported as what it is, not as missing. Without `require_entry` the caller looks
    // (the loader asks `find_entry` itself, to say why it skips the tool).
    let (found, refused) = match crate::file::find_entry(dir, language.entry_candidates()) {
        Ok(found) => (found, None),
        Err(e) => (None, Some(e)),
    };
    if let Some(e) = &refused
        && opts.require_entry
        && !language_invalid
    {
        let pos = language_pos.unwrap_or(fence);
        let d = cx.err_at(
            pos,
            3,
            format!("the {language} tool's entry file cannot be used: {e}"),
        );
        d.hint = e.hint();
    }
    // An unknown language already has its error; guessing its entry file would add a
    // second, misleading one.
    if opts.require_entry && found.is_none() && refused.is_none() && !language_invalid {
        let files = language.entry_candidates().join(", ");
        let pos = language_pos.unwrap_or(fence);
        let how = match language {
            Language::TypeScript => "exporting `execute(toolCallId, params, signal, onUpdate)`",
            Language::Python => "defining `execute(tool_call_id, params, signal, on_update)`",
            Language::Bash => "reading the params as JSON on stdin and printing the result",
        };
        cx.err_at(
            pos,
            3,
            format!("missing entry file: a {language} tool needs one of {files} beside TOOL.md"),
        )
        .hint = Some(format!(
            "create {}/{} {how}",
            dir.display(),
            language.entry_candidates()[0]
        ));
    }
    let entry = found;

    if let Some((_, v)) = bash_output
        && language != Language::Bash
    {
        cx.warn(v, format!("`output` is ignored: it says what a bash tool's stdout is, and this is a {language} tool"))
            .hint = Some("a typescript or python tool returns its result object from `execute`; remove `output:`".into());
    }
    if let Some(key) = &outputs_key
        && language == Language::Bash
        && !outputs.is_empty()
    {
        cx.err(key, "a bash tool cannot declare `outputs`: its result is the text it prints, with no `details`")
            .hint = Some("remove `outputs:`, or write the tool in python or typescript, whose `execute` can return `details`".into());
    }
    // The generated module holds a struct `Output` when the tool declares outputs: an enum
    // or object input that would take the name gets a fallback.
    if !outputs.is_empty() {
        let mut taken: Vec<String> = Vec::new();
        for i in &inputs {
            i.visit(&mut |n| taken.push(n.rust_type.clone()));
        }
        for top in &mut inputs {
            top.visit_mut(&mut |input| {
                if input.rust_type != "Output" {
                    return;
                }
                let fallback =
                    ident::unique("Output", |c| c == "Output" || taken.iter().any(|t| t == c));
                taken.push(fallback.clone());
                let kind = if input.ty == InputType::Enum { "enum" } else { "object" };
                let label = if input.name.is_empty() { "items" } else { input.name.as_str() };
                cx.warn_at(
                    input.pos,
                    label.chars().count(),
                    format!(
                        "{kind} input `{label}` would be the Rust type `Output`, which holds the tool's outputs: it gets `{fallback}`",
                    ),
                )
                .hint = Some("the values the model sends are unchanged; rename the input for a nicer Rust name".into());
                input.rust_type = fallback;
            });
        }
    }

    if cx.errors() > 0 {
        return Err(cx.diags);
    }
    let name = name.unwrap_or_default();
    Ok(ToolSpec {
        label: label.unwrap_or_else(|| name.clone()),
        name,
        description: description.unwrap_or_default(),
        version,
        language,
        inputs,
        outputs,
        prompt_snippet,
        prompt_guidelines,
        timeout_secs,
        env,
        annotations,
        worker,
        sandbox,
        execution,
        bash_output: bash_output.map_or(BashOutput::Text, |(o, _)| o),
        body: doc.body.clone(),
        dir: dir.to_path_buf(),
        file: file.to_path_buf(),
        entry,
        rust_module,
        rust_type,
        metadata,
        mcp: None,
        warnings: cx.diags,
    })
}

fn check_version(cx: &mut Ctx<'_>, v: &YNode) -> Option<u64> {
    match &v.value {
        YValue::UInt(u) => Some(*u),
        YValue::Int(i) if *i >= 0 => Some(*i as u64),
        YValue::Str(s) if crate::parse::version_from_text(s).is_some() => {
            let n = crate::parse::version_from_text(s);
            let n = n.unwrap_or(0);
            let hint = if s.trim().parse::<u64>().is_ok() {
                format!("remove the quotes: `version: {n}`")
            } else {
                format!("write `version: {n}`")
            };
            cx.warn(v, format!("`version` is a quoted string; read as {n}"))
                .hint = Some(hint);
            Some(n)
        }
        YValue::Float(f) if crate::parse::version_from_float(*f).is_some() => {
            let n = crate::parse::version_from_float(*f).unwrap_or(0);
            cx.warn(
                v,
                format!("`version` is written with a fraction; read as {n}"),
            )
            .hint = Some(format!("versions are whole numbers: write `version: {n}`"));
            Some(n)
        }
        _ => {
            let found = v.as_text().unwrap_or_else(|| v.kind().to_owned());
            let hint = match &v.value {
                YValue::Int(_) => "versions only go up: start at 0 or 1".to_owned(),
                YValue::Float(f) => {
                    format!("use a whole number, e.g. `version: {}`", f.ceil().max(1.0))
                }
                YValue::Str(s) if s.trim().parse::<u64>().is_ok() => {
                    format!("remove the quotes: `version: {}`", s.trim())
                }
                _ => "use a whole number such as `version: 1` and bump it on every change".into(),
            };
            cx.err(
                v,
                format!("`version` must be a non-negative integer, found `{found}`"),
            )
            .hint = Some(hint);
            None
        }
    }
}

fn check_language(cx: &mut Ctx<'_>, v: &YNode) -> Option<Language> {
    let Some(text) = v.as_text() else {
        let kind = v.kind();
        cx.err(v, format!("`language` must be a string, found {kind}"));
        return None;
    };
    if let Some(l) = Language::from_name(&text) {
        return Some(l);
    }
    // JavaScript is what a typescript tool's `index.js`/`index.mjs` entry already is: the
    // same runner, so the word is read as it is meant.
    if matches!(text.to_lowercase().as_str(), "javascript" | "js") {
        return Some(Language::TypeScript);
    }
    let guess = language_alias(&text).or_else(|| suggest(&text, LANGUAGE_NAMES));
    cx.err(
        v,
        format!("unknown language `{text}`, expected one of typescript, python, bash"),
    )
    .hint = guess.map(|g| format!("did you mean `{g}`?"));
    None
}

fn check_timeout(cx: &mut Ctx<'_>, v: &YNode) -> Option<f64> {
    let secs = match &v.value {
        YValue::UInt(u) => *u as f64,
        YValue::Int(i) => *i as f64,
        YValue::Float(f) => *f,
        YValue::Str(s) => match number_from_text(s).and_then(|n| n.as_f64()) {
            Some(n) if n.is_finite() && n > 0.0 => {
                cx.warn(
                    v,
                    format!("`timeout` is a quoted string; read as {n} seconds"),
                )
                .hint = Some(format!("remove the quotes: `timeout: {}`", s.trim()));
                return Some(n);
            }
            _ => f64::NAN,
        },
        _ => f64::NAN,
    };
    if secs.is_finite() && secs > 0.0 {
        Some(secs)
    } else {
        // The source text, quotes and all: the value as written.
        let found = v
            .raw
            .clone()
            .or_else(|| v.as_text())
            .unwrap_or_else(|| v.kind().to_owned());
        cx.err(
            v,
            format!("`timeout` must be a positive number of seconds, found `{found}`"),
        )
        .hint = Some("write e.g. `timeout: 30`".into());
        None
    }
}

fn check_annotations(cx: &mut Ctx<'_>, v: &YNode) -> Annotations {
    let mut a = Annotations::default();
    let Some(entries) = map_entries(v) else {
        let kind = v.kind();
        cx.err(v, format!("`annotations` must be a mapping, found {kind}"));
        return a;
    };
    for (k, val) in entries {
        let key = key_name(k).unwrap_or_default();
        let slot = match key.as_str() {
            "read_only" => &mut a.read_only,
            "destructive" => &mut a.destructive,
            "idempotent" => &mut a.idempotent,
            "open_world" => &mut a.open_world,
            _ => {
                // Hosts define more hints than toolbind reads: a near-miss of one it reads
                // is an error, anything else a warning.
                let mut ignored = BTreeMap::new();
                cx.extra_key("annotation", k, val, &key, ANNOTATION_KEYS, &mut ignored);
                continue;
            }
        };
        *slot = cx.boolean(&key, val);
    }
    a
}

/// `sandbox: {network: false}`: a tool narrowing the runtime's sandbox policy.
fn check_sandbox(cx: &mut Ctx<'_>, v: &YNode) -> ToolSandbox {
    let mut s = ToolSandbox::default();
    let Some(entries) = map_entries(v) else {
        let kind = v.kind();
        cx.err(v, format!("`sandbox` must be a mapping, found {kind}"))
            .hint = Some("write `sandbox: {network: false}`".into());
        return s;
    };
    for (k, val) in entries {
        let key = key_name(k).unwrap_or_default();
        match key.as_str() {
            "network" => s.network = cx.boolean("network", val),
            _ => cx.unknown_key("sandbox key", k, &key, SANDBOX_KEYS),
        }
    }
    s
}

fn string_list(cx: &mut Ctx<'_>, key: &str, v: &YNode) -> Vec<(String, YNode)> {
    match &v.value {
        YValue::Seq(items) => items
            .iter()
            .filter_map(|n| match n.as_text() {
                Some(s) => Some((s, n.clone())),
                None => {
                    let kind = n.kind();
                    cx.err(n, format!("items of `{key}` must be strings, found {kind}"));
                    None
                }
            })
            .collect(),
        YValue::Str(s) => vec![(s.clone(), v.clone())],
        _ => {
            let kind = v.kind();
            cx.err(
                v,
                format!("`{key}` must be a list of strings, found {kind}"),
            );
            Vec::new()
        }
    }
}

fn is_env_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The provider dialects that reject a name (`accepts` says which accept it), listed, and
/// how a message refers to them; `None` when every one accepts it.
fn rejected_by(accepts: impl Fn(Dialect) -> bool) -> Option<(String, &'static str)> {
    let list: Vec<&str> = Dialect::PROVIDERS
        .into_iter()
        .filter(|d| !accepts(*d))
        .map(Dialect::as_str)
        .collect();
    let those = if list.len() == 1 {
        "that dialect"
    } else {
        "those dialects"
    };
    (!list.is_empty()).then(|| (list.join(", "), those))
}

/// A snake_case name every provider accepts, for hints: ASCII letters, digits and `_`,
/// starting with a letter or `_`, at most 64 characters (`café` -> `caf`, a 70-letter name cut
/// to 64).
fn snake_suggestion(s: &str) -> String {
    let snake = ident::field_name_or_spelled(s);
    let mut out: String = snake
        .trim_start_matches("r#")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.insert(0, '_');
    }
    out.truncate(64);
    let trimmed = out.trim_end_matches('_');
    if trimmed.is_empty() {
        "my_tool".to_owned()
    } else {
        trimmed.to_owned()
    }
}

fn check_tool_name(cx: &mut Ctx<'_>, name: &str, node: &YNode, opts: &Options) -> (String, String) {
    // A tool's name is a folder name (its state folder, its synced folder, its caches):
    // one that is not one plain path component is refused whatever the other rules say.
    if let Some(why) = crate::model::path_component_problem(name) {
        cx.err(
            node,
            format!(
                "tool name `{}` cannot be used: {why}; a tool name becomes a folder name (its \
                 state folder, its synced folder)",
                name.escape_debug()
            ),
        )
        .hint = Some(format!(
            "name the tool with letters, digits and `_`, e.g. `{}`",
            snake_suggestion(name)
        ));
        return (String::new(), String::new());
    }
    if opts.portable_names && !Dialect::PROVIDERS.iter().any(|d| d.accepts_tool_name(name)) {
        cx.err(node, format!("invalid tool name `{name}`: model providers accept only letters, digits, `_` and `-`, 1 to 64 characters"))
            .hint = Some(format!("use snake_case, e.g. `{}`", snake_suggestion(name)));
        return (String::new(), String::new());
    }
    if let Some((rejecting, those)) = rejected_by(|d| d.accepts_tool_name(name)) {
        cx.warn(
            node,
            format!(
                "tool name `{name}` is rejected by {rejecting}: the tool is left out of {those}"
            ),
        )
        .hint = Some(format!(
            "rename it to `{}` to reach every provider",
            snake_suggestion(name)
        ));
    }
    // The platform's TOOLS.md says "Use snake_case"; providers accept more, and so does
    // toolbind.
    let snake = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    let module = ident::module_name(name);
    if !snake {
        cx.warn(node, format!("tool name `{name}` is not snake_case"))
            .hint = Some(format!(
            "the format asks for snake_case (`{}`); the tool loads and works as it is",
            snake_suggestion(name)
        ));
    } else if ident::field_name(name).as_deref() != Some(module.as_str()) {
        cx.warn(
            node,
            format!("tool name `{name}` would shadow a crate: its Rust module is `{module}`"),
        );
    }
    (module, ident::variant_name_or_spelled(name))
}

fn check_inputs(cx: &mut Ctx<'_>, v: &YNode, opts: &Options) -> Vec<Input> {
    let entries = match &v.value {
        YValue::Map(m) => m,
        YValue::Null => return Vec::new(),
        _ => {
            let kind = v.kind();
            cx.err(v, format!("`inputs` must be a mapping of parameter names to input specs, found {kind}"))
                .hint = Some("write `inputs:` then one indented `param_name:` block per parameter with `type:` and `description:`".into());
            return Vec::new();
        }
    };
    // The Rust type names given so far in the tool's module, each with the path it was
    // given to; the generated items come first.
    let mut types: Vec<(String, String)> = GENERATED_TYPES
        .iter()
        .map(|t| ((*t).to_owned(), String::new()))
        .collect();
    check_fields(cx, entries, "", 2, opts, &mut types)
}

/// Type names the generated code gives in a tool's module.
/// (`Output`, the typed outputs, is only there when the tool declares outputs.)
const GENERATED_TYPES: &[&str] = &["Params", "Tool"];

/// The fields of `inputs:` (`parent` empty, `depth` 2: the arguments object is the first
/// level) or of an object input's `properties:`.
fn check_fields(
    cx: &mut Ctx<'_>,
    entries: &[(YNode, YNode)],
    parent: &str,
    depth: usize,
    opts: &Options,
    types: &mut Vec<(String, String)>,
) -> Vec<Input> {
    let mut inputs: Vec<Input> = Vec::new();
    for (k, spec) in entries {
        let Some(name) = key_name(k) else {
            cx.err(k, "parameter names must be strings");
            continue;
        };
        let accepted = Dialect::PROVIDERS
            .into_iter()
            .any(|d| d.accepts_param_name(&name));
        if opts.portable_names && !accepted {
            cx.err(k, format!("parameter name `{name}` is not accepted by any model provider: use letters, digits, `_`, `-` and `.`, at most 64 characters"))
                .hint = Some(format!("rename it to `{}`", snake_suggestion(&name)));
            continue;
        }
        let path = if parent.is_empty() {
            name.clone()
        } else {
            format!("{parent}.{name}")
        };
        // Rust identifiers are codegen's problem: a fallback, with a warning that shows it.
        let taken: Vec<(&str, &str)> = inputs
            .iter()
            .map(|i| (i.name.as_str(), i.rust_name.as_str()))
            .collect();
        let rust_name = rust_field(
            cx,
            k,
            &name,
            ["parameter", "parameters", "the names the model sends"],
            &taken,
        );
        let base = ident::type_name(&name);
        let Some(input) = check_input(cx, &path, &name, k, spec, depth, &base, opts, types) else {
            continue;
        };
        inputs.push(Input { rust_name, ..input });
    }
    inputs
}

/// A Rust type name for the enum or object input at `path`, unique in the tool's module (a
/// numbered fallback, with a warning, when two would share one).
fn input_type_name(
    cx: &mut Ctx<'_>,
    key: &YNode,
    path: &str,
    base: &str,
    enum_input: bool,
    types: &mut Vec<(String, String)>,
) -> String {
    let name = ident::unique(base, |c| types.iter().any(|(t, _)| t == c));
    if name != base
        && let Some((_, prev)) = types.iter().find(|(t, _)| t == base)
    {
        let prev = prev.clone();
        let width = key.width();
        let d = if prev.is_empty() {
            cx.warn_at(key.pos, width, format!("input `{path}` would be the Rust type `{base}`, which the generated code uses itself: it gets `{name}`"))
        } else if enum_input && !path.contains(['.', '[']) && !prev.contains(['.', '[']) {
            cx.warn_at(key.pos, width, format!("enum inputs `{prev}` and `{path}` both map to the Rust type `{base}`: `{path}` gets `{name}`"))
        } else {
            cx.warn_at(key.pos, width, format!("inputs `{prev}` and `{path}` both map to the Rust type `{base}`: `{path}` gets `{name}`"))
        };
        d.hint = Some(if enum_input {
            "the names the model sends are unchanged; rename one for a nicer Rust name".into()
        } else {
            "the names the model sends are unchanged; give the object a `title:` or rename it for a nicer Rust name".into()
        });
    }
    types.push((name.clone(), path.to_owned()));
    name
}

/// A number written in YAML (`minimum: 1`, `maximum: 2.5`).
fn yaml_number(node: &YNode) -> Option<f64> {
    match &node.value {
        YValue::UInt(u) => Some(*u as f64),
        YValue::Int(i) => Some(*i as f64),
        YValue::Float(f) if f.is_finite() => Some(*f),
        _ => None,
    }
}

/// One input spec: a named field (`name` non-empty; `path` is `a.b` for a nested one) or
/// the `items` of an array (`name` empty, `key` the `items` key, `path` ending in `[]`).
/// `depth` is the level of nesting of its value (2 for a parameter); `type_base` the Rust
/// type name an enum or object here would get without a `title`.
#[allow(clippy::too_many_arguments)]
fn check_input(
    cx: &mut Ctx<'_>,
    path: &str,
    name: &str,
    key: &YNode,
    spec: &YNode,
    depth: usize,
    type_base: &str,
    opts: &Options,
    types: &mut Vec<(String, String)>,
) -> Option<Input> {
    let is_items = name.is_empty();
    let owner = path.trim_end_matches("[]");
    let what = if is_items {
        format!("`items` of `{owner}`")
    } else {
        format!("input `{path}`")
    };
    let Some(entries) = map_entries(spec) else {
        let kind = spec.kind();
        if is_items {
            let shorthand = spec.as_text().filter(|t| InputType::from_name(t).is_some());
            let d = match &spec.value {
                YValue::Seq(_) => cx.err(
                    spec,
                    format!("{what} must be one input spec (a mapping with `type`), found a list"),
                ),
                _ => cx.err(
                    spec,
                    format!("{what} must be a mapping with `type`, found {kind}"),
                ),
            };
            d.hint = Some(match shorthand {
                Some(t) => format!("write `items: {{type: {t}}}`"),
                None => "every element of an array has one type: write `items:` then an indented `type:` line, e.g. `items: {type: string}`; for a list of objects, `type: object` with `properties:`".into(),
            });
        } else {
            cx.err(
                spec,
                format!("{what} must be a mapping with `type` and `description`, found {kind}"),
            )
            .hint = Some(format!(
                "write `{name}:` then indented `type: string` and `description: ...` lines"
            ));
        }
        return None;
    };
    let before = cx.errors();
    let mut ty = None;
    let mut type_seen = false;
    let mut description = None;
    let mut description_seen = false;
    let mut optional = None;
    let mut required_node: Option<(&YNode, bool)> = None;
    let mut sensitive = false;
    let mut title = None;
    let mut values_node = None;
    let mut default_node = None;
    let mut items_node: Option<(&YNode, &YNode)> = None;
    let mut properties_node: Option<(&YNode, &YNode)> = None;
    let mut bounds: [Option<(f64, &YNode)>; 2] = [None, None];
    let mut counts: [Option<(u64, &YNode)>; 2] = [None, None];
    let mut metadata = BTreeMap::new();
    for (k, v) in entries {
        let Some(field) = key_name(k) else {
            cx.err(k, "input keys must be strings");
            continue;
        };
        match field.as_str() {
            "type" => {
                type_seen = true;
                ty = check_type(cx, v);
            }
            "description" => {
                description_seen = true;
                description = cx.nonempty_string("description", v);
            }
            "optional" => optional = cx.boolean("optional", v).map(|o| (o, v)),
            // Other formats' spelling of the inverse of `optional`.
            "required" => required_node = cx.boolean("required", v).map(|r| (v, r)),
            "sensitive" => sensitive = cx.boolean("sensitive", v).unwrap_or(false),
            "title" => title = cx.nonempty_string("title", v),
            "values" => values_node = Some(v),
            "default" => default_node = Some(v),
            "items" => items_node = Some((k, v)),
            "properties" => properties_node = Some((k, v)),
            "minimum" | "maximum" => {
                let slot = usize::from(field == "maximum");
                match yaml_number(v) {
                    Some(n) => bounds[slot] = Some((n, v)),
                    None => {
                        let kind = v.kind();
                        cx.err(v, format!("`{field}` must be a number, found {kind}"))
                            .hint = Some(format!("write `{field}: 0`"));
                    }
                }
            }
            "min_items" | "max_items" => {
                let slot = usize::from(field == "max_items");
                match &v.value {
                    YValue::UInt(u) => counts[slot] = Some((*u, v)),
                    YValue::Int(i) if *i >= 0 => counts[slot] = Some((*i as u64, v)),
                    _ => {
                        let kind = v.kind();
                        cx.err(
                            v,
                            format!("`{field}` must be a non-negative integer, found {kind}"),
                        )
                        .hint = Some(format!("write `{field}: 1`"));
                    }
                }
            }
            other => cx.extra_key(
                &format!("key in {what}:"),
                k,
                v,
                other,
                INPUT_KEYS,
                &mut metadata,
            ),
        }
    }
    if !type_seen {
        cx.err(key, format!("{what} has no `type`")).hint =
            Some(format!("add `type:` with one of {}", TYPE_NAMES.join(", ")));
    }
    if !description_seen && !is_items {
        cx.err(key, format!("{what} has no `description`")).hint =
            Some("add `description:` saying what the parameter is for; the model reads it".into());
    }
    let mut optional = optional.is_some_and(|(o, _)| o);
    if let Some((rn, r)) = required_node {
        match entries
            .iter()
            .find(|(k, _)| key_name(k).as_deref() == Some("optional"))
        {
            Some((_, ov)) if matches!(ov.value, YValue::Bool(o) if o == r) => {
                cx.err(
                    rn,
                    format!("{what} says both `required: {r}` and `optional: {r}`"),
                )
                .hint = Some("keep one: `optional: true` is the TOOL.md spelling".into());
            }
            _ => optional = optional || !r,
        }
    }
    if is_items && optional {
        cx.warn(
            key,
            format!("`optional` is ignored in {what}: an array's elements are always present"),
        );
        optional = false;
    }
    let t = ty;
    // Keys that belong to another type: ignored, with a warning saying what to do.
    if let Some(t) = t {
        if t != InputType::Enum
            && let Some(vn) = values_node
        {
            let any = t.json_type().unwrap_or("value");
            let msg = if is_items {
                format!("`values` is ignored: {what} are of type {t}, so any {any} is accepted")
            } else {
                format!("`values` is ignored: `{path}` is a {t} input, so any {any} is accepted")
            };
            cx.warn(vn, msg).hint =
                Some("to allow only these values, change `type` to `enum`".into());
        }
        misplaced_structure(cx, &what, t.as_str(), items_node, properties_node);
        if !matches!(t, InputType::Number | InputType::Integer) {
            for (_, node) in bounds.iter().flatten() {
                cx.warn(node, format!("`minimum`/`maximum` is ignored: {what} is of type {t}, not number or integer"));
            }
            bounds = [None, None];
        }
        if t != InputType::Array {
            for (_, node) in counts.iter().flatten() {
                cx.warn(
                    node,
                    format!("`min_items`/`max_items` is ignored: {what} is of type {t}, not array"),
                );
            }
            counts = [None, None];
        }
    }
    if let [Some((lo, _)), Some((hi, hn))] = bounds
        && lo > hi
    {
        cx.err(hn, format!("`maximum` of {what} is below its `minimum`"));
    }
    if let [Some((lo, _)), Some((hi, hn))] = counts
        && lo > hi
    {
        cx.err(
            hn,
            format!("`max_items` of {what} is below its `min_items`"),
        );
    }
    let nests = matches!(t, Some(InputType::Object | InputType::Array));
    if nests && depth > MAX_DEPTH {
        cx.err(key, format!("{what} is nested {depth} levels deep (the arguments object being the first): at most {MAX_DEPTH} are allowed"))
            .hint = Some("OpenAI's strict mode refuses deeper schemas; flatten the structure or pass the deep part as a JSON string".into());
    }
    let rust_base = title
        .as_deref()
        .map_or_else(|| type_base.to_owned(), ident::type_name);
    let mut values = Vec::new();
    let mut properties = Vec::new();
    let mut items = None;
    let mut rust_type = String::new();
    match t {
        Some(InputType::Enum) => match values_node {
            Some(vn) => {
                values = check_values(cx, path, vn);
                rust_type = input_type_name(cx, key, path, &rust_base, true, types);
            }
            None => {
                cx.err(key, format!("enum {what} has no `values`")).hint =
                    Some("add `values: first,second` (comma-separated) or a YAML list".into());
            }
        },
        Some(InputType::Object) if depth <= MAX_DEPTH => {
            let hint = "add `properties:` then one indented `field_name:` block per field, with `type:` and `description:`; for free-form data, take a `type: string` holding JSON";
            match properties_node.map(|(pk, pv)| (pk, pv, &pv.value)) {
                Some((_, _, YValue::Map(m))) if !m.is_empty() => {
                    rust_type = input_type_name(cx, key, path, &rust_base, false, types);
                    properties = check_fields(cx, m, path, depth + 1, opts, types);
                }
                Some((pk, _, YValue::Map(_) | YValue::Null)) => {
                    cx.err(pk, format!("`properties` of {what} is empty")).hint = Some(hint.into());
                }
                Some((_, pv, _)) => {
                    let kind = pv.kind();
                    cx.err(pv, format!("`properties` of {what} must be a mapping of field names to input specs, found {kind}"))
                        .hint = Some(hint.into());
                }
                None => {
                    cx.err(key, format!("object {what} has no `properties`"))
                        .hint = Some(hint.into());
                }
            }
        }
        Some(InputType::Array) if depth <= MAX_DEPTH => match items_node {
            Some((ik, iv)) => {
                let base = if is_items {
                    format!("{type_base}Item")
                } else {
                    item_type_base(name)
                };
                items = check_input(
                    cx,
                    &format!("{path}[]"),
                    "",
                    ik,
                    iv,
                    depth + 1,
                    &base,
                    opts,
                    types,
                )
                .map(Box::new);
            }
            None => {
                cx.err(key, format!("array {what} has no `items`")).hint = Some(
                    "add `items:` with the type of every element, e.g. `items: {type: string}`"
                        .into(),
                );
            }
        },
        _ => {}
    }
    if cx.errors() > before {
        return None;
    }
    let mut input = Input::new(name, t?);
    input.rust_type = rust_type;
    input.title = title;
    input.description = description.unwrap_or_default();
    input.optional = optional;
    input.sensitive = sensitive;
    input.values = values;
    input.properties = properties;
    input.items = items;
    if sensitive {
        // Everything inside a secret is secret: its fields' defaults, values and errors.
        let mut defaulted = Vec::new();
        for p in &mut input.properties {
            p.visit_mut(&mut |i| {
                i.sensitive = true;
                if i.default.is_some() {
                    defaulted.push(i.name.clone());
                }
            });
        }
        if let Some(items) = &mut input.items {
            items.visit_mut(&mut |i| i.sensitive = true);
        }
        if !defaulted.is_empty() {
            cx.warn(key, format!("sensitive {what} holds fields with defaults ({}): they are applied at run time only", defaulted.join(", ")))
                .hint = Some("they are never written into schemas, prompts, docs or generated code".into());
        }
    }
    input.minimum = bounds[0].map(|(n, _)| n);
    input.maximum = bounds[1].map(|(n, _)| n);
    input.min_items = counts[0].map(|(n, _)| n);
    input.max_items = counts[1].map(|(n, _)| n);
    input.pos = key.pos;
    input.metadata = metadata;
    input.default = match default_node {
        Some(d) if matches!(d.value, YValue::Null) => None,
        Some(d) if is_items => {
            cx.warn(
                d,
                format!("`default` is ignored in {what}: an array's elements are always given"),
            );
            None
        }
        Some(d) if input.ty.is_scalar() => check_default(cx, path, input.ty, &input.values, d)
            .and_then(|v| match value_problem(&input, &v) {
                None => Some(v),
                Some(p) => {
                    cx.err(d, format!("default of {what} {p}"));
                    None
                }
            }),
        Some(d) => {
            let v = to_json(d);
            match value_problem(&input, &v) {
                None => Some(v),
                Some(p) => {
                    cx.err(d, format!("default of {what} {p}")).hint = Some(format!(
                        "give a default that is a valid {} or remove it",
                        input.ty
                    ));
                    None
                }
            }
        }
        None => None,
    };
    if cx.errors() > before {
        return None;
    }
    if input.holds_sensitive()
        && input.default.is_some()
        && let Some(d) = default_node
    {
        cx.warn(d, format!("sensitive {what} has a default: it is applied at run time only"))
            .hint = Some("it is never written into schemas, prompts, docs or generated code; a secret is better read from an environment variable in the tool".into());
    }
    Some(input)
}

/// Why `v` is not a valid value of `input` (`is not an integer`, `has 12 items, at most 10
/// are allowed`, ...), or `None`: the check a TOOL.md default gets, by the rules the
/// runtime's validator applies to a model's arguments (without its tolerance of
/// strings for numbers: a default is written by a person).
fn value_problem(input: &Input, v: &Value) -> Option<String> {
    let kind = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    };
    let wrong = |want: &str| Some(format!("must be {want}, found {}", kind(v)));
    match (input.ty, v) {
        (InputType::Any, _) => None,
        (_, Value::Null) if input.nullable => None,
        (InputType::String, Value::String(_)) | (InputType::Boolean, Value::Bool(_)) => None,
        (InputType::Number | InputType::Integer, Value::Number(n)) => {
            let f = n.as_f64().unwrap_or_default();
            // An integer is an `i64` in Rust: a larger one could not reach a typed caller.
            if input.ty == InputType::Integer && !n.is_i64() {
                return Some(format!(
                    "must be an integer of at most 19 digits, found {n}"
                ));
            }
            let low = input.minimum.is_some_and(|m| f < m);
            let high = input.maximum.is_some_and(|m| f > m);
            (low || high).then(|| {
                format!(
                    "is {n}, outside the allowed range ({})",
                    input.constraint_text().unwrap_or_default()
                )
            })
        }
        (InputType::Enum, Value::String(s)) => (!input.values.iter().any(|e| e.wire == *s))
            .then(|| format!("`{s}` is not one of its values")),
        (InputType::Const, _) => (input.constant.as_ref() != Some(v))
            .then(|| format!("must be {}", input.constant.clone().unwrap_or_default())),
        (InputType::Array, Value::Array(a)) => {
            let n = a.len() as u64;
            if input.min_items.is_some_and(|m| n < m) || input.max_items.is_some_and(|m| n > m) {
                return Some(format!(
                    "has {n} items, but {} are allowed",
                    input.constraint_text().unwrap_or_default()
                ));
            }
            let items = input.items.as_deref()?;
            a.iter()
                .enumerate()
                .find_map(|(i, e)| value_problem(items, e).map(|p| format!("[{i}] {p}")))
        }
        (InputType::Map, Value::Object(m)) => {
            let items = input.items.as_deref()?;
            m.iter()
                .find_map(|(k, e)| value_problem(items, e).map(|p| format!(".{k} {p}")))
        }
        (InputType::Object, Value::Object(m)) => {
            if let Some(k) = m.keys().find(|k| input.property(k).is_none()) {
                return Some(format!("has the unknown field `{k}`"));
            }
            for p in &input.properties {
                match m.get(&p.name) {
                    None | Some(Value::Null) if p.optional || p.default.is_some() => {}
                    None => return Some(format!("lacks the required field `{}`", p.name)),
                    Some(e) => {
                        if let Some(why) = value_problem(p, e) {
                            return Some(format!(".{} {why}", p.name));
                        }
                    }
                }
            }
            None
        }
        (InputType::String, _) => wrong("a string"),
        (InputType::Number, _) => wrong("a number"),
        (InputType::Integer, _) => wrong("an integer"),
        (InputType::Boolean, _) => wrong("a boolean"),
        (InputType::Enum, _) => wrong("a string"),
        (InputType::Object | InputType::Map, _) => wrong("a mapping"),
        (InputType::Array, _) => wrong("a list"),
    }
}

/// `items:` on a spec that is not an array, `properties:` on one that is not an object (of
/// type `ty`): ignored, with a warning saying where they belong. Inputs and outputs alike.
fn misplaced_structure(
    cx: &mut Ctx<'_>,
    what: &str,
    ty: &str,
    items: Option<(&YNode, &YNode)>,
    properties: Option<(&YNode, &YNode)>,
) {
    if ty != "array"
        && let Some((ik, _)) = items
    {
        cx.warn(
            ik,
            format!("`items` is ignored: {what} is of type {ty}, not array"),
        )
        .hint = Some("to declare a list, change `type` to `array`".into());
    }
    if ty != "object"
        && let Some((pk, _)) = properties
    {
        let hint = if ty == "array" {
            "for a list of objects, move `properties:` under `items:` beside `type: object`"
        } else {
            "to declare the fields of an object, change `type` to `object`"
        };
        cx.warn(
            pk,
            format!("`properties` is ignored: {what} is of type {ty}, not object"),
        )
        .hint = Some(hint.into());
    }
}

/// TOOL.md `outputs:`: the fields of the result's `details`, each with an input's keys
/// (`type`, `description`, `optional`, `values`) plus `items` (for `type: array`) and
/// `properties` (for `type: object`).
fn check_outputs(cx: &mut Ctx<'_>, v: &YNode) -> Vec<OutputField> {
    let entries = match &v.value {
        YValue::Map(m) => m,
        YValue::Null => return Vec::new(),
        _ => {
            let kind = v.kind();
            cx.err(v, format!("`outputs` must be a mapping of field names to output specs, found {kind}"))
                .hint = Some("write `outputs:` then one indented `field_name:` block per field of the result's `details`, with `type:` and `description:`".into());
            return Vec::new();
        }
    };
    let mut types = Vec::new();
    check_properties(cx, entries, "", &mut types)
}

/// The fields of `outputs:` or of an object's `properties:`. `parent` is the object's path
/// (`messages[]`), empty at the top. `types` holds the Rust type names given so far, with
/// the path each was given to, so that nested types are unique in the tool's `output`
/// module.
fn check_properties(
    cx: &mut Ctx<'_>,
    entries: &[(YNode, YNode)],
    parent: &str,
    types: &mut Vec<(String, String)>,
) -> Vec<OutputField> {
    let mut fields: Vec<OutputField> = Vec::new();
    for (k, spec) in entries {
        let Some(name) = key_name(k) else {
            cx.err(k, "output names must be strings");
            continue;
        };
        if name.is_empty() {
            cx.err(k, "output names must not be empty").hint =
                Some("name the field as the tool returns it in `details`".into());
            continue;
        }
        let path = if parent.is_empty() {
            name.clone()
        } else {
            format!("{parent}.{name}")
        };
        let type_base = ident::type_name(&name);
        let Some(field) = check_output(cx, &path, &name, k, spec, &type_base, types) else {
            continue;
        };
        let taken: Vec<(&str, &str)> = fields
            .iter()
            .map(|f| (f.name.as_str(), f.rust_name.as_str()))
            .collect();
        let rust_name = rust_field(
            cx,
            k,
            &name,
            ["output", "outputs", "the names in `details`"],
            &taken,
        );
        fields.push(OutputField { rust_name, ..field });
    }
    fields
}

/// The Rust field name of the input or output `name` (its key at `key`), unique among
/// `taken` (the wire and Rust names of its siblings so far): a fallback, with a warning
/// that shows it, where the obvious one collides or cannot be formed. `words` are how
/// messages name one and several such fields, and what stays unchanged on the wire.
fn rust_field(
    cx: &mut Ctx<'_>,
    key: &YNode,
    name: &str,
    [one, several, wire]: [&str; 3],
    taken: &[(&str, &str)],
) -> String {
    let width = name.chars().count();
    let base = ident::field_name_or_spelled(name);
    if ident::field_name(name).is_none() {
        cx.warn_at(
            key.pos,
            width,
            format!("{one} `{name}` has no letters or digits: its Rust field is `{base}`"),
        );
    }
    let rust_name = ident::unique(&base, |c| taken.iter().any(|(_, r)| *r == c));
    if rust_name != base
        && let Some((prev, _)) = taken.iter().find(|(_, r)| *r == base)
    {
        cx.warn_at(key.pos, width, format!("{several} `{prev}` and `{name}` both map to the Rust field `{base}`: `{name}` gets `{rust_name}`"))
            .hint = Some(format!("{wire} are unchanged; rename one for a nicer Rust name"));
    }
    rust_name
}

/// A Rust type name for the object or enum at `path`, unique among the tool's output types
/// (a numbered fallback, with a warning, when two would share one).
fn output_type_name(
    cx: &mut Ctx<'_>,
    key: &YNode,
    path: &str,
    base: &str,
    types: &mut Vec<(String, String)>,
) -> String {
    let name = ident::unique(base, |c| types.iter().any(|(t, _)| t == c));
    if name != base
        && let Some((_, prev)) = types.iter().find(|(t, _)| t == base)
    {
        let prev = prev.clone();
        cx.warn(
            key,
            format!("outputs `{prev}` and `{path}` both map to the Rust type `{base}`: `{path}` gets `{name}`"),
        )
        .hint = Some("the names in `details` are unchanged; rename one for a nicer Rust name".into());
    }
    types.push((name.clone(), path.to_owned()));
    name
}

/// The Rust type name for the elements of an array field: the field's name in the singular
/// when it reads as a plural (`messages` -> `Message`, `entries` -> `Entry`), else with
/// `Item` appended (`data` -> `DataItem`, `status` -> `StatusItem`).
pub(crate) fn item_type_base(name: &str) -> String {
    let singular = if let Some(stem) = name.strip_suffix("ies") {
        Some(format!("{stem}y"))
    } else if ["sses", "xes", "ches", "shes", "zes"]
        .iter()
        .any(|s| name.ends_with(s))
    {
        name.strip_suffix("es").map(str::to_owned)
    } else if name.ends_with('s') && !["ss", "us", "is"].iter().any(|s| name.ends_with(s)) {
        name.strip_suffix('s').map(str::to_owned)
    } else {
        None
    };
    match singular.filter(|s| s.chars().any(char::is_alphanumeric)) {
        Some(s) => ident::type_name(&s),
        None => format!("{}Item", ident::type_name(name)),
    }
}

/// One output spec: a named field (`name` non-empty) or an array's `items` (`name` empty;
/// `key` is then the `items` key). `type_base` is the Rust type name an object or enum
/// here would get.
fn check_output(
    cx: &mut Ctx<'_>,
    path: &str,
    name: &str,
    key: &YNode,
    spec: &YNode,
    type_base: &str,
    types: &mut Vec<(String, String)>,
) -> Option<OutputField> {
    let is_items = name.is_empty();
    let what = if is_items {
        format!("`items` of `{}`", path.trim_end_matches("[]"))
    } else {
        format!("output `{path}`")
    };
    let Some(entries) = map_entries(spec) else {
        let kind = spec.kind();
        if is_items {
            let shorthand = spec
                .as_text()
                .filter(|t| OutputType::NAMES.contains(&t.as_str()));
            cx.err(
                spec,
                format!("{what} must be a mapping with `type`, found {kind}"),
            )
            .hint = Some(match shorthand {
                Some(t) => format!("write `items: {{type: {t}}}`"),
                None => {
                    "write `items:` then an indented `type:` line, e.g. `items: {type: string}`"
                        .into()
                }
            });
        } else {
            cx.err(
                spec,
                format!("{what} must be a mapping with `type` and `description`, found {kind}"),
            )
            .hint = Some(format!(
                "write `{name}:` then indented `type: string` and `description: ...` lines"
            ));
        }
        return None;
    };
    let before = cx.errors();
    let mut ty_name: Option<(String, &YNode)> = None;
    let mut type_seen = false;
    let mut description = None;
    let mut optional = false;
    let mut values_node = None;
    let mut items_node: Option<(&YNode, &YNode)> = None;
    let mut properties_node: Option<(&YNode, &YNode)> = None;
    let mut metadata = BTreeMap::new();
    for (k, v) in entries {
        let Some(field) = key_name(k) else {
            cx.err(k, "output keys must be strings");
            continue;
        };
        match field.as_str() {
            "type" => {
                type_seen = true;
                ty_name = check_output_type(cx, v).map(|t| (t, v));
            }
            "description" => description = cx.nonempty_string("description", v),
            "optional" => {
                let o = cx.boolean("optional", v).unwrap_or(false);
                if is_items && o {
                    cx.warn(v, format!("`optional` is ignored in {what}: an array's elements are always present"))
                        .hint = Some("to allow a missing or null list, put `optional: true` on the array field itself".into());
                } else {
                    optional = o;
                }
            }
            "values" => values_node = Some(v),
            "items" => items_node = Some((k, v)),
            "properties" => properties_node = Some((k, v)),
            "default" => {
                cx.warn(
                    k,
                    format!("`default` is ignored in {what}: the tool produces its outputs"),
                )
                .hint =
                    Some("remove it; to say a field may be missing, write `optional: true`".into());
            }
            "sensitive" => {
                cx.warn(k, format!("`sensitive` is ignored in {what}: outputs cannot be marked sensitive"))
                    .hint = Some("the runtime already redacts the call's sensitive inputs from `details`; a tool must not return other secrets".into());
            }
            "required" if matches!(v.value, YValue::Bool(false)) => {
                cx.err(k, format!("unknown key in {what}: `required`")).hint = Some(
                    "outputs are required by default: write `optional: true` for one that may be missing or null".into(),
                );
            }
            other => cx.extra_key(
                &format!("key in {what}:"),
                k,
                v,
                other,
                OUTPUT_KEYS,
                &mut metadata,
            ),
        }
    }
    if !type_seen {
        cx.err(key, format!("{what} has no `type`")).hint =
            Some("add `type:` with one of string, number, boolean, enum, object, array".into());
    }
    if !is_items
        && description.is_none()
        && !entries
            .iter()
            .any(|(k, _)| key_name(k).as_deref() == Some("description"))
    {
        cx.warn(key, format!("{what} has no `description`")).hint = Some(
            "add `description:` saying what the field holds: MCP hosts and the generated docs show it".into(),
        );
    }
    let ty_word = ty_name.as_ref().map(|(t, _)| t.as_str());
    // Keys that belong to another type: ignored, as `values` is on a non-enum input.
    if let Some(t) = ty_word {
        if t != "enum"
            && let Some(vn) = values_node
        {
            cx.warn(
                vn,
                format!("`values` is ignored: {what} is of type {t}, not enum"),
            )
            .hint = Some("to allow only these values, change `type` to `enum`".into());
        }
        misplaced_structure(cx, &what, t, items_node, properties_node);
    }
    let ty = match ty_word {
        Some("string") => Some(OutputType::String),
        Some("number") => Some(OutputType::Number),
        Some("integer") => Some(OutputType::Integer),
        Some("boolean") => Some(OutputType::Boolean),
        Some("enum") => match values_node {
            Some(vn) => {
                let values = check_values(cx, path, vn);
                let rust_type = output_type_name(cx, key, path, type_base, types);
                Some(OutputType::Enum { values, rust_type })
            }
            None => {
                cx.err(key, format!("enum {what} has no `values`")).hint =
                    Some("add `values: first,second` (comma-separated) or a YAML list".into());
                None
            }
        },
        Some("array") => match items_node {
            Some((ik, iv)) => {
                let item_path = format!("{path}[]");
                let base = if is_items {
                    format!("{type_base}Item")
                } else {
                    item_type_base(name)
                };
                check_output(cx, &item_path, "", ik, iv, &base, types).map(|items| {
                    OutputType::Array {
                        items: Box::new(items),
                    }
                })
            }
            None => {
                cx.err(key, format!("array {what} has no `items`")).hint = Some(
                    "add `items:` with the type of every element, e.g. `items: {type: string}`"
                        .into(),
                );
                None
            }
        },
        Some("object") => {
            let (properties, rust_type) = match properties_node {
                None => (Vec::new(), String::new()),
                Some((_, pv)) => match &pv.value {
                    YValue::Map(m) if !m.is_empty() => {
                        let rust_type = output_type_name(cx, key, path, type_base, types);
                        (check_properties(cx, m, path, types), rust_type)
                    }
                    YValue::Map(_) | YValue::Null => (Vec::new(), String::new()),
                    _ => {
                        let kind = pv.kind();
                        cx.err(pv, format!("`properties` of {what} must be a mapping of field names to output specs, found {kind}"))
                            .hint = Some("write `properties:` then one indented `field_name:` block per field, with `type:` and `description:`".into());
                        (Vec::new(), String::new())
                    }
                },
            };
            Some(OutputType::Object {
                properties,
                rust_type,
            })
        }
        _ => None,
    };
    if cx.errors() > before {
        return None;
    }
    Some(OutputField {
        name: name.to_owned(),
        rust_name: String::new(),
        description: description.unwrap_or_default(),
        ty: ty?,
        optional,
        pos: key.pos,
        metadata,
    })
}

/// An output's `type`: one of [`OutputType::NAMES`], or an error with a suggestion.
fn check_output_type(cx: &mut Ctx<'_>, v: &YNode) -> Option<String> {
    let Some(text) = v.as_text() else {
        let kind = v.kind();
        cx.err(v, format!("output `type` must be a string, found {kind}"));
        return None;
    };
    if OutputType::NAMES.contains(&text.as_str()) {
        return Some(text);
    }
    let guess = type_alias(&text).or_else(|| suggest(&text, &OutputType::NAMES));
    cx.err(
        v,
        format!(
            "unknown output type `{text}`, expected one of {}",
            OutputType::NAMES.join(", ")
        ),
    )
    .hint = guess.map(|g| format!("did you mean `{g}`?"));
    None
}

fn check_type(cx: &mut Ctx<'_>, v: &YNode) -> Option<InputType> {
    let Some(text) = v.as_text() else {
        let kind = v.kind();
        cx.err(v, format!("input `type` must be a string, found {kind}"));
        return None;
    };
    if let Some(t) = InputType::from_name(&text) {
        return Some(t);
    }
    let guess = type_alias(&text).or_else(|| suggest(&text, TYPE_NAMES));
    cx.err(
        v,
        format!(
            "unknown input type `{text}`, expected one of {}",
            TYPE_NAMES.join(", ")
        ),
    )
    .hint = guess.map(|g| format!("did you mean `{g}`?"));
    None
}

fn check_values(cx: &mut Ctx<'_>, name: &str, v: &YNode) -> Vec<EnumValue> {
    // (value, position) pairs; comma-separated strings are split with positions per value.
    let mut raw: Vec<(String, Pos, usize)> = Vec::new();
    match &v.value {
        YValue::Seq(items) => {
            for n in items {
                match n.as_text() {
                    Some(s) => raw.push((s.trim().to_owned(), n.pos, n.width())),
                    None => {
                        let kind = n.kind();
                        cx.err(
                            n,
                            format!("enum values of `{name}` must be strings, found {kind}"),
                        );
                    }
                }
            }
        }
        _ => match v.as_text() {
            Some(s) => {
                // Columns of each comma-separated piece, when the scalar is on one line and
                // its source is the text itself, plain or inside quotes with no escapes.
                let quoted = v.raw.as_deref().is_some_and(|r| {
                    r.len() >= 2
                        && (r.starts_with('"') && r.ends_with('"')
                            || r.starts_with('\'') && r.ends_with('\''))
                        && r[1..r.len() - 1] == *s
                });
                let exact = !s.contains('\n') && (v.raw.as_deref() == Some(s.as_str()) || quoted);
                let mut col = v.pos.column as usize + usize::from(quoted);
                for piece in s.split(',') {
                    let lead = piece.len() - piece.trim_start().len();
                    let pos = if exact {
                        Pos::new(v.pos.line, (col + piece[..lead].chars().count()) as u32)
                    } else {
                        v.pos
                    };
                    raw.push((piece.trim().to_owned(), pos, piece.trim().chars().count()));
                    col += piece.chars().count() + 1;
                }
            }
            None => {
                let kind = v.kind();
                cx.err(v, format!("`values` of `{name}` must be a comma-separated string or a list, found {kind}"));
                return Vec::new();
            }
        },
    }
    let mut out: Vec<EnumValue> = Vec::new();
    for (value, pos, len) in raw {
        if value.is_empty() {
            cx.warn_at(pos, len, format!("empty enum value in `{name}` is ignored"))
                .hint = Some("remove the extra comma".into());
            continue;
        }
        if out.iter().any(|e| e.wire == value) {
            cx.warn_at(
                pos,
                len,
                format!("duplicate enum value `{value}` in `{name}` is ignored"),
            )
            .hint = Some("list each value once".into());
            continue;
        }
        // Rust identifiers are codegen's problem: a fallback, with a warning that shows it.
        let base = ident::variant_name_or_spelled(&value);
        if ident::variant_name(&value).is_none() {
            cx.warn_at(pos, len, format!("enum value `{value}` of `{name}` has no letters or digits: its Rust variant is `{base}`"));
        }
        let rust = ident::unique(&base, |c| out.iter().any(|e| e.rust == c));
        if rust != base
            && let Some(prev) = out.iter().find(|e| e.rust == base)
        {
            let prev = prev.wire.clone();
            cx.warn_at(pos, len, format!("enum values `{prev}` and `{value}` of `{name}` both map to the Rust variant `{base}`: `{value}` gets `{rust}`"))
                .hint = Some("the values the model sends are unchanged; rename one for a nicer Rust name".into());
        }
        out.push(EnumValue { wire: value, rust });
    }
    if out.is_empty() {
        cx.err(v, format!("enum `{name}` has no values")).hint =
            Some("add `values: first,second` (comma-separated) or a YAML list".into());
    }
    out
}

fn check_default(
    cx: &mut Ctx<'_>,
    name: &str,
    ty: InputType,
    values: &[EnumValue],
    d: &YNode,
) -> Option<Value> {
    let found = || d.as_text().unwrap_or_else(|| d.kind().to_owned());
    match (ty, &d.value) {
        (InputType::String, YValue::Str(s)) => Some(Value::String(s.clone())),
        (InputType::Number, YValue::UInt(u)) => Some(Value::from(*u)),
        (InputType::Number, YValue::Int(i)) => Some(Value::from(*i)),
        (InputType::Number, YValue::Float(f)) if f.is_finite() => {
            serde_json::Number::from_f64(*f).map(Value::Number)
        }
        (InputType::Integer, YValue::UInt(u)) if i64::try_from(*u).is_ok() => Some(Value::from(*u)),
        (InputType::Integer, YValue::Int(i)) => Some(Value::from(*i)),
        (InputType::Integer, YValue::Float(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
            let n = *f as i64;
            cx.warn(
                d,
                format!(
                    "default of integer input `{name}` is written with a fraction; read as {n}"
                ),
            )
            .hint = Some(format!("write `default: {n}`"));
            Some(Value::from(n))
        }
        (InputType::Integer, YValue::Str(s))
            if number_from_text(s).is_some_and(|n| n.is_i64() || n.is_u64()) =>
        {
            let n = number_from_text(s)?;
            cx.warn(
                d,
                format!("default of integer input `{name}` is a quoted string; read as {n}"),
            )
            .hint = Some(format!("remove the quotes: `default: {}`", s.trim()));
            Some(n)
        }
        (InputType::Boolean, YValue::Bool(b)) => Some(Value::Bool(*b)),
        // Lossless conversions, from the scalar's source text: `12345` -> "12345" (and
        // `007` stays "007"), "5" -> 5, "true" -> true.
        (
            InputType::String,
            YValue::Bool(_) | YValue::Int(_) | YValue::UInt(_) | YValue::Float(_),
        ) if d.raw.is_some() => {
            let text = d.raw.clone().unwrap_or_default();
            let kind = d.kind();
            cx.warn(d, format!("default of string input `{name}` is written as {kind}; read as the string \"{text}\""))
                .hint = Some(format!("quote it: `default: \"{text}\"`"));
            Some(Value::String(text))
        }
        (InputType::Number, YValue::Str(s)) if number_from_text(s).is_some() => {
            let n = number_from_text(s)?;
            cx.warn(
                d,
                format!("default of number input `{name}` is a quoted string; read as {n}"),
            )
            .hint = Some(format!("remove the quotes: `default: {}`", s.trim()));
            Some(n)
        }
        (InputType::Boolean, YValue::Str(s)) if matches!(s.trim(), "true" | "false") => {
            let b = s.trim() == "true";
            cx.warn(
                d,
                format!("default of boolean input `{name}` is a quoted string; read as {b}"),
            )
            .hint = Some(format!("remove the quotes: `default: {b}`"));
            Some(Value::Bool(b))
        }
        (InputType::Enum, _) if d.as_text().is_some() => {
            let text = d.as_text().unwrap_or_default();
            if values.iter().any(|v| v.wire == text) {
                Some(Value::String(text))
            } else {
                if !values.is_empty() {
                    let list: Vec<&str> = values.iter().map(|v| v.wire.as_str()).collect();
                    let hint = match suggest(&text, &list) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => format!("use one of: {}", list.join(", ")),
                    };
                    cx.err(
                        d,
                        format!(
                            "default `{text}` of enum `{name}` is not one of its values: {}",
                            list.join(", ")
                        ),
                    )
                    .hint = Some(hint);
                }
                None
            }
        }
        _ => {
            let f = found();
            let kind = d.kind();
            let hint = match (ty, &d.value) {
                (InputType::String, _) if d.raw.is_some() => {
                    format!("quote it: `default: \"{f}\"`")
                }
                (InputType::Boolean, _) => "use `true` or `false`".to_owned(),
                _ => format!(
                    "give a {} default or change the input's `type`",
                    ty.json_type().unwrap_or(ty.as_str())
                ),
            };
            let want = ty.json_type().unwrap_or(ty.as_str());
            let article = if want.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            cx.err(
                d,
                format!(
                    "default of {ty} input `{name}` must be {article} {want}, found {kind} `{f}`"
                ),
            )
            .hint = Some(hint);
            None
        }
    }
}

/// A number written as a string, when it converts without loss: an integer stays an
/// integer, anything else must be a finite float.
fn number_from_text(s: &str) -> Option<Value> {
    let t = s.trim();
    if let Ok(u) = t.parse::<u64>() {
        return Some(Value::from(u));
    }
    if let Ok(i) = t.parse::<i64>() {
        return Some(Value::from(i));
    }
    // Rust also parses `inf`, `NaN` and `infinity`: not numbers a model can send.
    if !t.bytes().any(|b| b.is_ascii_digit())
        || t.bytes()
            .any(|b| b.is_ascii_alphabetic() && b != b'e' && b != b'E')
    {
        return None;
    }
    let f = t.parse::<f64>().ok().filter(|f| f.is_finite())?;
    serde_json::Number::from_f64(f).map(Value::Number)
}

/// A warning for each tool whose folder is named differently from the tool, as the
/// runtime's loader reports it (`toolbind list`): when two folders claim one tool name, the
/// loader and sync keep the one named after the tool, so a renamed folder can lose to, or
/// shadow, another. Located at the `name:` value.
pub fn folder_name_warnings(tools: &[ToolSpec]) -> Vec<Diagnostic> {
    tools
        .iter()
        .filter_map(|t| {
            let folder = t.dir.file_name()?.to_string_lossy();
            if folder == t.name.as_str() {
                return None;
            }
            let (pos, source) = name_pos(&t.file);
            Some(
                Diagnostic::new(
                    &t.file,
                    pos,
                    format!(
                        "folder {} holds the tool `{}`: the folder is named differently from the tool",
                        t.dir.to_string_lossy().escape_debug(),
                        t.name
                    ),
                )
                .hint(format!(
                    "rename the folder to `{}`: when two folders claim one tool name, the \
                     runtime keeps the one named after the tool",
                    t.name
                ))
                .span(t.name.chars().count())
                .source_text(source)
                .warning(),
            )
        })
        .collect()
}

/// Rules across tools, in load order. A duplicate tool name is an error (one of the two
/// could never be called). Two tools whose Rust module or `ToolCall` variant would be the
/// same get numbered fallbacks, with a warning pushed onto the later tool's
/// [`ToolSpec::warnings`]. Returns the errors.
pub fn check_set(tools: &mut [ToolSpec]) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let mut names: BTreeMap<String, PathBuf> = BTreeMap::new();
    for i in 0..tools.len() {
        let (done, rest) = tools.split_at_mut(i);
        let t = &mut rest[0];
        let (pos, source) = name_pos(&t.file);
        let width = t.name.chars().count();
        if let Some(prev) = names.get(&t.name) {
            diags.push(
                Diagnostic::new(
                    &t.file,
                    pos,
                    format!(
                        "duplicate tool name `{}`, also defined in {}",
                        t.name,
                        prev.display()
                    ),
                )
                .hint("tool names must be unique across all tool folders; rename one of them")
                .span(width)
                .source_text(source.clone()),
            );
            continue;
        }
        names.insert(t.name.clone(), t.file.clone());
        // Each Rust name of the tool, with how to read and how to replace it.
        type Get = fn(&ToolSpec) -> &String;
        type Set = fn(&mut ToolSpec) -> &mut String;
        let names: [(&str, Get, Set); 2] = [
            ("`ToolCall` variant", |t| &t.rust_type, |t| &mut t.rust_type),
            ("module", |t| &t.rust_module, |t| &mut t.rust_module),
        ];
        for (kind, get, set) in names {
            let base = get(t).clone();
            let Some(prev) = done.iter().find(|p| *get(p) == base) else {
                continue;
            };
            let prev_name = prev.name.clone();
            let fallback = ident::unique(&base, |c| done.iter().any(|p| get(p) == c));
            t.warnings.push(
                Diagnostic::new(
                    &t.file,
                    pos,
                    format!(
                        "tool names `{prev_name}` and `{}` both map to the Rust {kind} `{base}`: `{}` gets `{fallback}`",
                        t.name, t.name
                    ),
                )
                .hint("the names the model sends are unchanged; rename one for a nicer Rust name")
                .span(width)
                .source_text(source.clone())
                .warning(),
            );
            *set(t) = fallback;
        }
    }
    diags
}

/// Where `name:`'s value is in a TOOL.md, and the text for a snippet; read again only to
/// report a cross-file diagnostic.
fn name_pos(file: &Path) -> (Pos, Arc<str>) {
    let text = file
        .parent()
        .and_then(|dir| crate::file::read_folder_file(dir, file, crate::MAX_TOOL_FILE_BYTES).ok())
        .and_then(|b| crate::parse::decode(file, &b).ok())
        .unwrap_or_else(|| Arc::from(""));
    let pos = text
        .lines()
        .enumerate()
        .find_map(|(i, l)| {
            let rest = l.strip_prefix("name:")?;
            let col = 5 + rest.len() - rest.trim_start().len();
            Some(Pos::new(i as u32 + 1, col as u32 + 1))
        })
        .unwrap_or(Pos::new(1, 1));
    (pos, text)
}

/// Whether a guideline mentions the tool by name as a word (`todo`, not `todos`).
fn names_tool(guideline: &str, name: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    guideline.match_indices(name).any(|(i, _)| {
        let before = guideline[..i].chars().next_back();
        let after = guideline[i + name.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

#[cfg(test)]
mod tests {
    use super::item_type_base;

    #[test]
    fn array_elements_are_named_in_the_singular() {
        for (field, ty) in [
            ("messages", "Message"),
            ("entries", "Entry"),
            ("addresses", "Address"),
            ("boxes", "Box"),
            ("matches", "Match"),
            ("data", "DataItem"),
            ("status", "StatusItem"),
            ("axis", "AxisItem"),
            ("class", "ClassItem"),
            ("s", "SItem"),
            ("userIds", "UserId"),
        ] {
            assert_eq!(item_type_base(field), ty, "{field}");
        }
    }
}
