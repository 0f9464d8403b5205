//! The typed pass: a located YAML tree -> [`ToolSpec`], with every rule of the format
//! checked and every error of a file collected (never just the first).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::diagnostic::{Diagnostic, suggest};
use crate::ident;
use crate::model::{
    Annotations, EnumValue, Input, InputType, Language, Pos, ToolSandbox, ToolSpec, WorkerMode,
};
use crate::parse::{Document, YNode, YValue};

/// Rules a caller may relax. The defaults are strict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Reject tool and parameter names that a model provider would reject (OpenAI and
    /// Anthropic: tool names `^[a-zA-Z0-9_-]{1,64}$`, parameter names
    /// `^[A-Za-z_][A-Za-z0-9_]{0,63}$`). Default `true`.
    pub portable_names: bool,
    /// Require the entry file (`index.ts`, `index.py`, `index.sh`...) beside TOOL.md.
    /// Default `true`.
    pub require_entry: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            portable_names: true,
            require_entry: true,
        }
    }
}

pub(crate) const TOOL_KEYS: &[&str] = &[
    "name",
    "label",
    "description",
    "version",
    "language",
    "inputs",
    "prompt_snippet",
    "prompt_guidelines",
    "timeout",
    "env",
    "annotations",
    "worker",
    "sandbox",
];

pub(crate) const INPUT_KEYS: &[&str] = &[
    "type",
    "description",
    "optional",
    "sensitive",
    "values",
    "default",
];

const SANDBOX_KEYS: &[&str] = &["network"];
const ANNOTATION_KEYS: &[&str] = &["read_only", "destructive", "idempotent", "open_world"];
const TYPE_NAMES: &[&str] = &["string", "number", "boolean", "enum"];
const LANGUAGE_NAMES: &[&str] = &["typescript", "python", "bash"];

/// Common spellings from other schema languages, mapped to ours.
fn type_alias(word: &str) -> Option<&'static str> {
    Some(match word.to_lowercase().as_str() {
        "str" | "text" => "string",
        "int" | "integer" | "float" | "double" | "num" => "number",
        "bool" => "boolean",
        "choice" | "select" | "enumeration" => "enum",
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

    fn err_at(&mut self, pos: Pos, len: usize, msg: impl Into<String>) -> &mut Diagnostic {
        self.diags.push(
            Diagnostic::new(self.file, pos, msg)
                .len(len)
                .source(self.text.clone()),
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

    fn unknown_key(&mut self, what: &str, key: &YNode, name: &str, known: &[&str]) {
        let hint = match suggest(name, known) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("expected one of: {}", known.join(", ")),
        };
        self.err(key, format!("unknown {what} `{name}`")).hint = Some(hint);
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
    let mut prompt_snippet = None;
    let mut guidelines: Vec<(String, YNode)> = Vec::new();
    let mut timeout_secs = None;
    let mut env = Vec::new();
    let mut annotations = Annotations::default();
    let mut worker = WorkerMode::Default;
    let mut sandbox = ToolSandbox::default();

    for (k, v) in entries {
        let Some(key) = key_name(k) else {
            cx.err(k, "frontmatter keys must be strings");
            continue;
        };
        match key.as_str() {
            "name" => {
                name = cx.nonempty_string("name", v);
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
            "prompt_snippet" => prompt_snippet = cx.nonempty_string("prompt_snippet", v),
            "prompt_guidelines" => guidelines = string_list(&mut cx, "prompt_guidelines", v),
            "timeout" => timeout_secs = check_timeout(&mut cx, v),
            "env" => {
                for (var, node) in string_list(&mut cx, "env", v) {
                    if !is_env_name(&var) {
                        cx.err(&node, format!("invalid environment variable name `{var}`"))
                            .hint =
                            Some("use letters, digits and `_`, not starting with a digit".into());
                    } else {
                        env.push(var);
                    }
                }
            }
            "annotations" => annotations = check_annotations(&mut cx, v),
            "worker" => match v.as_text().as_deref() {
                Some("warm") => worker = WorkerMode::Warm,
                Some("oneshot") => worker = WorkerMode::OneShot,
                other => {
                    let found = other.unwrap_or(v.kind()).to_owned();
                    cx.err(v, format!("unknown worker mode `{found}`")).hint =
                        Some("expected `warm` or `oneshot`".into());
                }
            },
            "sandbox" => sandbox = check_sandbox(&mut cx, v),
            other => cx.unknown_key("key", k, other, TOOL_KEYS),
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

    let mut prompt_guidelines = Vec::new();
    for (g, node) in guidelines {
        if let Some(n) = &name
            && !names_tool(&g, n)
        {
            cx.err(&node, format!("guideline does not name the tool `{n}`"))
                .hint = Some(format!(
                "a model cannot tell which tool \"this tool\" means: write \"use {n} to ...\""
            ));
        }
        prompt_guidelines.push(g);
    }

    let found = language
        .entry_candidates()
        .iter()
        .find(|c| dir.join(c).is_file())
        .map(|c| (*c).to_owned());
    // An unknown language already has its error; guessing its entry file would add a
    // second, misleading one.
    if opts.require_entry && found.is_none() && !language_invalid {
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

    if !cx.diags.is_empty() {
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
        prompt_snippet,
        prompt_guidelines,
        timeout_secs,
        env,
        annotations,
        worker,
        sandbox,
        body: doc.body.clone(),
        dir: dir.to_path_buf(),
        file: file.to_path_buf(),
        entry,
        rust_module,
        rust_type,
    })
}

fn check_version(cx: &mut Ctx<'_>, v: &YNode) -> Option<u64> {
    match &v.value {
        YValue::UInt(u) => Some(*u),
        YValue::Int(i) if *i >= 0 => Some(*i as u64),
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
        _ => f64::NAN,
    };
    if secs.is_finite() && secs > 0.0 {
        Some(secs)
    } else {
        let found = v.as_text().unwrap_or_else(|| v.kind().to_owned());
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
                cx.unknown_key("annotation", k, &key, ANNOTATION_KEYS);
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

fn is_portable_tool_name(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn is_portable_param_name(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn snake_suggestion(s: &str) -> String {
    ident::field_name(s)
        .map(|n| n.trim_start_matches("r#").to_owned())
        .unwrap_or_else(|| "my_tool".into())
}

fn check_tool_name(cx: &mut Ctx<'_>, name: &str, node: &YNode, opts: &Options) -> (String, String) {
    if opts.portable_names && !is_portable_tool_name(name) {
        cx.err(node, format!("invalid tool name `{name}`: model providers accept only letters, digits, `_` and `-`, 1 to 64 characters"))
            .hint = Some(format!("use snake_case, e.g. `{}`", snake_suggestion(name)));
        return (String::new(), String::new());
    }
    // The format says snake_case (seed 000: "Use snake_case"): `Web-Search` would work with
    // providers but not match the generated module or the docs.
    let snake = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if opts.portable_names && !snake {
        cx.err(node, format!("tool name `{name}` is not snake_case"))
            .hint = Some(format!(
            "use lowercase letters, digits and `_`, starting with a letter: `{}`",
            snake_suggestion(name)
        ));
        return (String::new(), String::new());
    }
    match ident::field_name(name) {
        Some(module) => (module, ident::type_name(name)),
        None => {
            cx.err(
                node,
                format!("invalid tool name `{name}`: it has no letters or digits"),
            )
            .hint = Some("use snake_case, e.g. `web_search`".into());
            (String::new(), String::new())
        }
    }
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
    let mut inputs = Vec::new();
    // Rust field name -> wire name, to report two inputs mapping to one field.
    let mut fields: BTreeMap<String, String> = BTreeMap::new();
    let mut enum_types: BTreeMap<String, String> = BTreeMap::new();
    for (k, spec) in entries {
        let Some(name) = key_name(k) else {
            cx.err(k, "parameter names must be strings");
            continue;
        };
        if opts.portable_names && !is_portable_param_name(&name) {
            cx.err(k, format!("parameter name `{name}` is not accepted by model providers: use letters, digits and `_`, starting with a letter or `_`, at most 64 characters"))
                .hint = Some(format!("rename it to `{}`", snake_suggestion(&name)));
            continue;
        }
        let Some(rust_name) = ident::field_name(&name) else {
            cx.err(
                k,
                format!(
                    "parameter name `{name}` has no letters or digits to make a Rust field from"
                ),
            );
            continue;
        };
        if let Some(prev) = fields.insert(rust_name.clone(), name.clone()) {
            cx.err(
                k,
                format!(
                    "parameters `{prev}` and `{name}` both map to the Rust field `{rust_name}`"
                ),
            )
            .hint = Some("rename one of them".into());
            continue;
        }
        if let Some(input) = check_input(cx, &name, k, spec) {
            if input.ty == InputType::Enum {
                let ty = input.enum_type_name();
                if let Some(prev) = enum_types.insert(ty.clone(), name.clone()) {
                    cx.err(
                        k,
                        format!(
                            "enum inputs `{prev}` and `{name}` both map to the Rust type `{ty}`"
                        ),
                    )
                    .hint = Some("rename one of them".into());
                    continue;
                }
            }
            inputs.push(Input { rust_name, ..input });
        }
    }
    inputs
}

fn check_input(cx: &mut Ctx<'_>, name: &str, key: &YNode, spec: &YNode) -> Option<Input> {
    let Some(entries) = map_entries(spec) else {
        let kind = spec.kind();
        cx.err(
            spec,
            format!("input `{name}` must be a mapping with `type` and `description`, found {kind}"),
        )
        .hint = Some(format!(
            "write `{name}:` then indented `type: string` and `description: ...` lines"
        ));
        return None;
    };
    let before = cx.diags.len();
    let mut ty = None;
    let mut type_seen = false;
    let mut description = None;
    let mut description_seen = false;
    let mut optional = false;
    let mut sensitive = false;
    let mut values_node = None;
    let mut default_node = None;
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
            "optional" => optional = cx.boolean("optional", v).unwrap_or(false),
            "sensitive" => sensitive = cx.boolean("sensitive", v).unwrap_or(false),
            "values" => values_node = Some(v),
            "default" => default_node = Some(v),
            other => cx.unknown_key(&format!("key in input `{name}`:"), k, other, INPUT_KEYS),
        }
    }
    if !type_seen {
        cx.err(key, format!("input `{name}` has no `type`")).hint =
            Some("add `type:` with one of string, number, boolean, enum".into());
    }
    if !description_seen {
        cx.err(key, format!("input `{name}` has no `description`"))
            .hint =
            Some("add `description:` saying what the parameter is for; the model reads it".into());
    }
    let mut values = Vec::new();
    match (ty, values_node) {
        (Some(InputType::Enum), Some(vn)) => values = check_values(cx, name, vn),
        (Some(InputType::Enum), None) => {
            cx.err(key, format!("enum input `{name}` has no `values`"))
                .hint = Some("add `values: first,second` (comma-separated) or a YAML list".into());
        }
        (Some(t), Some(vn)) => {
            cx.err(
                vn,
                format!("`values` is only allowed on enum inputs, but `{name}` is a {t}"),
            )
            .hint = Some("change `type` to `enum` or remove `values`".into());
        }
        (Some(_), None) | (None, _) => {}
    }
    let default = match (ty, default_node) {
        (Some(t), Some(d)) => check_default(cx, name, t, &values, d),
        _ => None,
    };
    if sensitive && let Some(d) = default_node {
        cx.err(d, format!("sensitive input `{name}` cannot have a default"))
            .hint = Some("a default would appear in schemas and prompts; resolve the secret in the tool from an environment variable instead".into());
    }
    if cx.diags.len() > before {
        return None;
    }
    Some(Input {
        name: name.to_owned(),
        rust_name: String::new(),
        ty: ty?,
        description: description?,
        optional,
        sensitive,
        values,
        default,
        pos: key.pos,
    })
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
    let d = cx.err(
        v,
        format!("unknown input type `{text}`, expected one of string, number, boolean, enum"),
    );
    d.hint = guess.map(|g| format!("did you mean `{g}`?"));
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
                // Columns of each comma-separated piece, when the scalar is plain on one line.
                let plain = v.raw.as_deref() == Some(s.as_str());
                let mut col = v.pos.column as usize;
                for piece in s.split(',') {
                    let lead = piece.len() - piece.trim_start().len();
                    let pos = if plain {
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
            cx.err_at(pos, len, format!("enum `{name}` has an empty value"))
                .hint = Some("remove the extra comma".into());
            continue;
        }
        if out.iter().any(|e| e.wire == value) {
            cx.err_at(
                pos,
                len,
                format!("duplicate enum value `{value}` in `{name}`"),
            )
            .hint = Some("list each value once".into());
            continue;
        }
        let Some(rust) = ident::variant_name(&value) else {
            cx.err_at(pos, len, format!("enum value `{value}` of `{name}` has no letters or digits to make a Rust variant from"));
            continue;
        };
        if let Some(prev) = out.iter().find(|e| e.rust == rust) {
            let prev = prev.wire.clone();
            cx.err_at(pos, len, format!("enum values `{prev}` and `{value}` of `{name}` both map to the Rust variant `{rust}`"))
                .hint = Some("rename one of them so they differ in more than case or punctuation".into());
            continue;
        }
        out.push(EnumValue { wire: value, rust });
    }
    if out.is_empty() && !cx.diags.iter().any(|d| d.pos.line == v.pos.line) {
        cx.err(v, format!("enum `{name}` has no values"));
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
        (InputType::Boolean, YValue::Bool(b)) => Some(Value::Bool(*b)),
        (InputType::Enum, _) if d.as_text().is_some() => {
            let text = d.as_text().unwrap_or_default();
            if values.iter().any(|v| v.wire == text) {
                Some(Value::String(text))
            } else {
                if !values.is_empty() {
                    let list: Vec<&str> = values.iter().map(|v| v.wire.as_str()).collect();
                    let wires: Vec<&str> = list.clone();
                    let hint = match suggest(&text, &wires) {
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
                (InputType::Number, YValue::Str(s)) if s.trim().parse::<f64>().is_ok() => {
                    format!("remove the quotes: `default: {}`", s.trim())
                }
                (InputType::Boolean, _) => "use `true` or `false`".to_owned(),
                _ => format!(
                    "give a {} default or change the input's `type`",
                    ty.json_type()
                ),
            };
            cx.err(
                d,
                format!(
                    "default of {ty} input `{name}` must be a {}, found {kind} `{f}`",
                    ty.json_type()
                ),
            )
            .hint = Some(hint);
            None
        }
    }
}

/// Rules across tools: names unique, Rust module names unique. `tools` is in load order.
pub fn check_set(tools: &[ToolSpec]) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let mut names: BTreeMap<&str, &PathBuf> = BTreeMap::new();
    let mut modules: BTreeMap<&str, &ToolSpec> = BTreeMap::new();
    let mut types: BTreeMap<&str, &ToolSpec> = BTreeMap::new();
    for t in tools {
        let pos = name_pos(&t.file);
        if let Some(prev) = names.insert(&t.name, &t.file) {
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
                .hint("tool names must be unique across all tool folders; rename one of them"),
            );
            continue;
        }
        if let Some(prev) = types.insert(&t.rust_type, t) {
            diags.push(
                Diagnostic::new(
                    &t.file,
                    pos,
                    format!(
                        "tool names `{}` and `{}` both map to the Rust type `{}` (the `ToolCall` variant)",
                        prev.name, t.name, t.rust_type
                    ),
                )
                .hint("rename one of them so they differ in more than `_` placement"),
            );
            continue;
        }
        if let Some(prev) = modules.insert(&t.rust_module, t) {
            diags.push(
                Diagnostic::new(
                    &t.file,
                    pos,
                    format!(
                        "tool names `{}` and `{}` both map to the Rust module `{}`",
                        prev.name, t.name, t.rust_module
                    ),
                )
                .hint("rename one of them"),
            );
        }
    }
    diags
}

/// Where `name:` is in a TOOL.md, read again only to report a cross-file error.
fn name_pos(file: &Path) -> Pos {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .position(|l| l.starts_with("name:"))
        .map_or(Pos::new(1, 1), |i| Pos::new(i as u32 + 1, 7))
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
