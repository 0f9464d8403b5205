//! MCP server snapshots: an MCP server's `tools/list`, written down like a lock file.
//!
//! `toolbind mcp snapshot` connects to a server, pages through `tools/list` and writes a
//! [`Snapshot`] as canonical, reviewable JSON (by default `mcp/<server>.json`). Code is
//! generated from it offline ([`crate::Config::mcp_snapshot`]), and `toolbind mcp check`
//! compares a live server with it ([`diff`]).
//!
//! Each tool carries two hashes, SHA-256 over RFC 8785 canonical JSON:
//! - `contract`: the name, `inputSchema` and `outputSchema` without their documentation
//!   (`description`, `title`, `examples`, `$comment` where they are schema keywords — a
//!   property *named* `description` stays). A changed contract can break a caller.
//! - `docs`: everything else a model reads (the tool's title, description, annotations,
//!   and the documentation left out of the contract). A changed description cannot.
//!
//! A snapshot never holds how the server was started: no command, environment, headers
//! or tokens.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::diagnostic::Diagnostic;
use crate::json::{self, Spans, escape};
use crate::model::Pos;

/// The value of a snapshot's `toolbindSnapshot` key this version reads and writes.
pub const FORMAT: u64 = 1;

/// The largest snapshot file read (a server's tool list is bounded when listed too).
pub const MAX_SNAPSHOT_BYTES: u64 = 32 * 1024 * 1024;

/// The most tools a snapshot holds. Each becomes a module of about 9 KB of Rust (a
/// params struct, its impls, schemas and prompt text as constants): 1,000 tools are
/// ~9 MB of code, which rustc takes minutes to compile. The largest hosted servers list
/// about 100 tools; a server listing more than this is refused rather than left to make
/// a crate that does not build in reasonable time.
pub const MAX_SNAPSHOT_TOOLS: usize = 1_000;

/// The schema keywords that document rather than constrain.
const DOC_KEYWORDS: [&str; 4] = ["description", "title", "examples", "$comment"];

/// The server a snapshot was taken of, as its `initialize` result named it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ServerInfo {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// `serverInfo.title`, when the server gives one.
    pub title: Option<String>,
}

impl ServerInfo {
    /// A server's name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ServerInfo {
            name: name.into(),
            version: version.into(),
            title: None,
        }
    }
}

/// One tool of a snapshot: what `tools/list` said about it, and its two hashes.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SnapshotTool {
    /// The name the server calls the tool by (may hold `.`, `/`, ...).
    pub name: String,
    /// `title`, when given.
    pub title: Option<String>,
    /// `description`, when given.
    pub description: Option<String>,
    /// `inputSchema`: a JSON Schema object.
    pub input_schema: Value,
    /// `outputSchema`, when given.
    pub output_schema: Option<Value>,
    /// `annotations`, when given.
    pub annotations: Option<Value>,
    /// `sha256:<hex>` over the contract (see the module docs).
    pub contract: String,
    /// `sha256:<hex>` over the documentation (see the module docs).
    pub docs: String,
}

impl SnapshotTool {
    /// A tool from one element of a `tools/list` result's `tools`, hashed. Fields the
    /// snapshot does not keep (`icons`, `_meta`, `execution`) are dropped.
    pub fn from_listed(tool: &Value) -> Result<Self, String> {
        let obj = tool
            .as_object()
            .ok_or_else(|| format!("a tool is {}, not an object", json_kind(tool)))?;
        let name = match obj.get("name") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::String(_)) => return Err("a tool has an empty `name`".into()),
            Some(v) => return Err(format!("a tool's `name` is {}, not a string", json_kind(v))),
            None => return Err("a tool has no `name`".into()),
        };
        let text = |key: &str| -> Result<Option<String>, String> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(v) => Err(format!(
                    "tool `{name}`: `{key}` is {}, not a string",
                    json_kind(v)
                )),
            }
        };
        let (title, description) = (text("title")?, text("description")?);
        let input_schema = match obj.get("inputSchema") {
            Some(v @ Value::Object(_)) => v.clone(),
            Some(v) => {
                return Err(format!(
                    "tool `{name}`: `inputSchema` is {}, not an object",
                    json_kind(v)
                ));
            }
            None => return Err(format!("tool `{name}` has no `inputSchema`")),
        };
        let output_schema = match obj.get("outputSchema") {
            None | Some(Value::Null) => None,
            Some(v @ Value::Object(_)) => Some(v.clone()),
            Some(v) => {
                return Err(format!(
                    "tool `{name}`: `outputSchema` is {}, not an object",
                    json_kind(v)
                ));
            }
        };
        let annotations = match obj.get("annotations") {
            None | Some(Value::Null) => None,
            Some(v @ Value::Object(_)) => Some(v.clone()),
            Some(v) => {
                return Err(format!(
                    "tool `{name}`: `annotations` is {}, not an object",
                    json_kind(v)
                ));
            }
        };
        // Before anything maps or checks by them: a schema whose `$ref`s multiply would
        // take minutes of CPU each time a value is checked against it.
        for (key, schema) in [
            ("inputSchema", Some(&input_schema)),
            ("outputSchema", output_schema.as_ref()),
        ] {
            if let Some(schema) = schema
                && let Err(e) = crate::schema_work::expanded_size(schema)
            {
                return Err(format!(
                    "tool `{name}`: its `{key}` is refused: {e}; toolbind takes schemas that expand to at most {} subschemas",
                    crate::schema_work::MAX_EXPANDED
                ));
            }
        }
        let mut t = SnapshotTool {
            name,
            title,
            description,
            input_schema,
            output_schema,
            annotations,
            contract: String::new(),
            docs: String::new(),
        };
        (t.contract, t.docs) = t.hashes();
        Ok(t)
    }

    /// The contract and docs hashes of what the tool holds now.
    pub fn hashes(&self) -> (String, String) {
        let contract = json!({
            "name": self.name,
            "inputSchema": without_docs(&self.input_schema),
            "outputSchema": self.output_schema.as_ref().map(without_docs),
        });
        let mut input_docs = Map::new();
        docs_of(&self.input_schema, String::new(), &mut input_docs);
        let mut output_docs = Map::new();
        if let Some(o) = &self.output_schema {
            docs_of(o, String::new(), &mut output_docs);
        }
        let docs = json!({
            "title": self.title,
            "description": self.description,
            "annotations": self.annotations,
            "inputSchema": input_docs,
            "outputSchema": output_docs,
        });
        (hash(&contract), hash(&docs))
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), json!(self.name));
        if let Some(t) = &self.title {
            m.insert("title".into(), json!(t));
        }
        if let Some(d) = &self.description {
            m.insert("description".into(), json!(d));
        }
        m.insert("inputSchema".into(), self.input_schema.clone());
        if let Some(o) = &self.output_schema {
            m.insert("outputSchema".into(), o.clone());
        }
        if let Some(a) = &self.annotations {
            m.insert("annotations".into(), a.clone());
        }
        m.insert(
            "hashes".into(),
            json!({"contract": self.contract, "docs": self.docs}),
        );
        Value::Object(m)
    }
}

/// An MCP server's tool list, as `toolbind mcp snapshot` writes it. Two snapshots are
/// equal when they say the same (where in a file each was read from does not count).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Snapshot {
    /// The name the snapshot goes by: the server's key in the `mcpServers` config (or
    /// `--name`). Generated code puts the server's tools in a module of this name, and
    /// `toolbind mcp check` finds the server in the config by it.
    pub name: String,
    /// The server, as it introduced itself.
    pub server: ServerInfo,
    /// The protocol version the listing was negotiated at.
    pub protocol_version: String,
    /// The tools, sorted by name.
    pub tools: Vec<SnapshotTool>,
    /// The file the snapshot was read from (empty for one built in memory).
    pub file: PathBuf,
    /// Where each value of the file starts, for diagnostics.
    spans: Spans,
    /// Each tool's JSON pointer in the file.
    pointers: Vec<(String, String)>,
}

impl PartialEq for Snapshot {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.server == other.server
            && self.protocol_version == other.protocol_version
            && self.tools == other.tools
    }
}

impl Snapshot {
    /// A snapshot of a server's listed tools (sorted here). Two tools of the same name are
    /// an error: a caller could not tell them apart.
    pub fn new(
        name: impl Into<String>,
        server: ServerInfo,
        protocol_version: impl Into<String>,
        mut tools: Vec<SnapshotTool>,
    ) -> Result<Self, String> {
        let name = name.into();
        if let Some(problem) = crate::model::path_component_problem(&name) {
            return Err(format!(
                "the snapshot name {:?} cannot name a file: {problem}",
                name
            ));
        }
        if tools.len() > MAX_SNAPSHOT_TOOLS {
            return Err(format!(
                "the server lists {} tools, over the limit of {MAX_SNAPSHOT_TOOLS} for a snapshot: each becomes a module of generated Rust (about 9 KB), and this many would not compile in reasonable time; call its tools untyped through the runtime instead",
                tools.len()
            ));
        }
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        if let Some(w) = tools.windows(2).find(|w| w[0].name == w[1].name) {
            return Err(format!(
                "the server lists two tools named `{}`: a call could not tell them apart",
                w[0].name
            ));
        }
        Ok(Snapshot {
            name,
            server,
            protocol_version: protocol_version.into(),
            tools,
            file: PathBuf::new(),
            spans: Spans::default(),
            pointers: Vec::new(),
        })
    }

    /// The tool named `name`.
    pub fn tool(&self, name: &str) -> Option<&SnapshotTool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The snapshot as its file holds it: two-space indented JSON in a fixed key order,
    /// ending in a newline, so that a re-snapshot of an unchanged server is byte-identical
    /// and a changed one reads as a small diff.
    pub fn to_json(&self) -> String {
        let mut server = Map::new();
        server.insert("name".into(), json!(self.server.name));
        server.insert("version".into(), json!(self.server.version));
        if let Some(t) = &self.server.title {
            server.insert("title".into(), json!(t));
        }
        let v = json!({
            "toolbindSnapshot": FORMAT,
            "name": self.name,
            "server": server,
            "protocolVersion": self.protocol_version,
            "tools": self.tools.iter().map(SnapshotTool::to_json).collect::<Vec<_>>(),
        });
        let mut s = serde_json::to_string_pretty(&v).expect("JSON values serialize");
        s.push('\n');
        s
    }

    /// Where the value at JSON pointer `pointer` starts in the file (1:1 when unknown).
    pub fn position(&self, pointer: &str) -> Pos {
        self.spans.at(pointer)
    }

    /// Reads a snapshot file. Every problem is a [`Diagnostic`] at its line and column;
    /// stored hashes that no longer match the tools (a hand edit) are warnings, returned
    /// beside the snapshot: the snapshot is read as it is, and its hashes recomputed.
    pub fn read(file: &Path) -> Result<(Snapshot, Vec<Diagnostic>), Vec<Diagnostic>> {
        let cannot = |e: String| {
            vec![
                Diagnostic::new(file, Pos::NONE, format!("cannot read the snapshot: {e}")).hint(
                    "take one with `toolbind mcp snapshot`; build.rs resolves a relative path \
                     against the crate root",
                ),
            ]
        };
        let len = std::fs::metadata(file)
            .map_err(|e| cannot(e.to_string()))?
            .len();
        if len > MAX_SNAPSHOT_BYTES {
            return Err(cannot(format!(
                "it is {len} bytes, over the {MAX_SNAPSHOT_BYTES}-byte limit"
            )));
        }
        let bytes = crate::file::read_regular_file(file).map_err(|e| {
            vec![
                Diagnostic::new(file, Pos::NONE, format!("cannot read the snapshot: {e}")).hint(
                    "take one with `toolbind mcp snapshot`; build.rs resolves a relative path \
                     against the crate root",
                ),
            ]
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            vec![Diagnostic::new(
                file,
                Pos::NONE,
                format!(
                    "the snapshot is not UTF-8 (byte {})",
                    e.utf8_error().valid_up_to()
                ),
            )]
        })?;
        Self::parse(file, &text)
    }

    /// [`read`](Self::read) for text already in memory; `file` names it in diagnostics.
    pub fn parse(file: &Path, text: &str) -> Result<(Snapshot, Vec<Diagnostic>), Vec<Diagnostic>> {
        let (v, spans) = json::parse(text).map_err(|(pos, msg)| {
            vec![
                Diagnostic::new(file, pos, format!("the snapshot is not valid JSON: {msg}"))
                    .hint("take the snapshot again with `toolbind mcp snapshot` rather than editing it by hand"),
            ]
        })?;
        let at = |pointer: &str, msg: String| Diagnostic::new(file, spans.at(pointer), msg);
        let fix = "take the snapshot again with `toolbind mcp snapshot`";
        let Some(root) = v.as_object() else {
            return Err(vec![at("", "a snapshot is a JSON object".into()).hint(fix)]);
        };
        check_format(root, &at)?;
        let mut errors = Vec::new();
        let mut string = |pointer: &str, v: Option<&Value>, optional: bool| -> Option<String> {
            match v {
                Some(Value::String(s)) => Some(s.clone()),
                None | Some(Value::Null) if optional => None,
                None => {
                    let (parent, key) = pointer.rsplit_once('/').unwrap_or(("", pointer));
                    errors.push(at(parent, format!("missing `{key}`")).hint(fix));
                    None
                }
                Some(v) => {
                    errors.push(at(
                        pointer,
                        format!("`{pointer}` is {}, not a string", json_kind(v)),
                    ));
                    None
                }
            }
        };
        let name = string("/name", root.get("name"), false).unwrap_or_default();
        let server = root.get("server").and_then(Value::as_object);
        let server = ServerInfo {
            name: string("/server/name", server.and_then(|s| s.get("name")), false)
                .unwrap_or_default(),
            version: string(
                "/server/version",
                server.and_then(|s| s.get("version")),
                false,
            )
            .unwrap_or_default(),
            title: string("/server/title", server.and_then(|s| s.get("title")), true),
        };
        let protocol_version =
            string("/protocolVersion", root.get("protocolVersion"), false).unwrap_or_default();
        let mut warnings = Vec::new();
        let (mut tools, pointers) = read_tools(root, &at, &mut errors, &mut warnings);
        if let Some(problem) = crate::model::path_component_problem(&name)
            && errors.is_empty()
        {
            errors.push(
                at(
                    "/name",
                    format!("the snapshot name {name:?} cannot name a module: {problem}"),
                )
                .hint(fix),
            );
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        Ok((
            Snapshot {
                name,
                server,
                protocol_version,
                tools,
                file: file.to_path_buf(),
                spans,
                pointers,
            },
            warnings,
        ))
    }

    /// The JSON pointer of tool `name` in the file it was read from (`/tools/<i>`).
    pub fn tool_pointer(&self, name: &str) -> Option<String> {
        self.pointers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| p.clone())
    }
}

/// The most characters of a provider-facing tool name (OpenAI's and Anthropic's limit).
pub const MAX_PROVIDER_NAME: usize = 64;

/// The name a model calls MCP tool `name` by, with `prefix` (from
/// [`Config::mcp_prefix`](crate::Config::mcp_prefix), usually empty) in front: unchanged
/// when every provider accepts it (`[A-Za-z0-9_-]{1,64}`), else with every other character
/// made `_`, cut to fit, and `_` plus 8 hex digits of the SHA-256 of the original
/// appended, so that two names never map to one (`files/read.text` →
/// `files_read_text_1f0c3a9b`). Generated code keeps the map both ways.
pub fn provider_name(prefix: &str, name: &str) -> String {
    let full = format!("{prefix}{name}");
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if !full.is_empty() && full.len() <= MAX_PROVIDER_NAME && full.chars().all(ok) {
        return full;
    }
    let digest = Sha256::digest(full.as_bytes());
    let tag: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    let mut stem: String = full
        .chars()
        .map(|c| if ok(c) { c } else { '_' })
        .take(MAX_PROVIDER_NAME - 9)
        .collect();
    while stem.ends_with('_') {
        stem.pop();
    }
    if stem.is_empty() {
        stem.push_str("tool");
    }
    format!("{stem}_{tag}")
}

/// The tools of a snapshot as the model every emitter reads, provider names built with
/// `prefix`, plus the warnings of mapping their schemas (each at its line and column in
/// the snapshot file).
pub fn tool_specs(snapshot: &Snapshot, prefix: &str) -> Vec<crate::ToolSpec> {
    use crate::ident;
    use crate::model::{Annotations, Body, Execution, McpOrigin, ToolSandbox, WorkerMode};
    let at = |ptr: &str| (snapshot.file.clone(), snapshot.position(ptr));
    let mut out: Vec<crate::ToolSpec> = Vec::new();
    for t in &snapshot.tools {
        let base = snapshot
            .tool_pointer(&t.name)
            .unwrap_or_else(|| "/tools/0".to_owned());
        let mut m = crate::from_schema::Mapper::new(
            &t.input_schema,
            format!("{base}/inputSchema"),
            &at,
            &["Params", "Tool", "Output"],
        );
        let inputs = m.params();
        let mut warnings = m.warnings;
        let outputs = match &t.output_schema {
            None => Vec::new(),
            Some(o) => crate::from_schema::outputs(o).unwrap_or_else(|| {
                let (file, pos) = at(&format!("{base}/outputSchema"));
                warnings.push(
                    Diagnostic::new(file, pos, format!("tool `{}`: the output schema uses what typed outputs cannot hold (unions, nullable or untyped fields, `$ref`)", t.name))
                        .warning()
                        .hint("the tool's `Output` is a `serde_json::Value`"),
                );
                Vec::new()
            }),
        };
        let name = provider_name(prefix, &t.name);
        let module_base = ident::module_name(&t.name);
        let rust_module = ident::unique(&module_base, |c| out.iter().any(|o| o.rust_module == c));
        let type_base = ident::type_name(&t.name);
        let rust_type = ident::unique(&type_base, |c| out.iter().any(|o| o.rust_type == c));
        let hint = |key: &str| {
            t.annotations
                .as_ref()
                .and_then(|a| a.get(key))
                .and_then(Value::as_bool)
        };
        let annotations = Annotations {
            read_only: hint("readOnlyHint"),
            destructive: hint("destructiveHint"),
            idempotent: hint("idempotentHint"),
            open_world: hint("openWorldHint"),
        };
        let description = t.description.clone().unwrap_or_default();
        let body = Body {
            markdown: description.trim().to_owned(),
            ..Body::default()
        };
        out.push(crate::ToolSpec {
            label: t.title.clone().unwrap_or_else(|| t.name.clone()),
            name,
            description,
            version: 0,
            language: crate::Language::default(),
            inputs,
            outputs,
            prompt_snippet: None,
            prompt_guidelines: Vec::new(),
            timeout_secs: None,
            env: Vec::new(),
            annotations,
            worker: WorkerMode::default(),
            sandbox: ToolSandbox::default(),
            execution: Execution::default(),
            task: crate::TaskSupport::default(),
            approval: crate::Approval::default(),
            asks: Vec::new(),
            bash_output: crate::model::BashOutput::Text,
            body,
            dir: snapshot
                .file
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
            file: snapshot.file.clone(),
            entry: None,
            rust_module,
            rust_type,
            metadata: Default::default(),
            mcp: Some(McpOrigin {
                server: snapshot.name.clone(),
                name: t.name.clone(),
                contract: t.contract.clone(),
                input_schema: t.input_schema.clone(),
                output_schema: t.output_schema.clone(),
            }),
            warnings,
        });
    }
    out
}

/// `sha256:` and the hex SHA-256 of `v`'s RFC 8785 canonical form: snapshots' hashes,
/// and `toolbind serve`'s digest of a call's arguments. Not public API.
#[doc(hidden)]
pub fn hash(v: &Value) -> String {
    let bytes = serde_json_canonicalizer::to_vec(v).expect("JSON values canonicalize");
    let digest = Sha256::digest(&bytes);
    let mut s = String::with_capacity(71);
    s.push_str("sha256:");
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// A JSON value's type, in words: `null`, `a boolean`, `a number`, `a string`, `an
/// array`, `an object`. Every message about a value of the wrong type says it this way
/// (toolbind's runtime and CLI use this one too). Not public API.
#[doc(hidden)]
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// What a schema keyword's value holds.
enum Holds {
    /// One schema (`items`, `not`, `additionalProperties`, ...).
    Schema,
    /// A map of names to schemas (`properties`, `$defs`, ...).
    Schemas,
    /// An array of schemas (`anyOf`, `prefixItems`, ...).
    List,
    /// Plain data (`enum`, `const`, `default`, `required`, ...).
    Data,
}

fn holds(keyword: &str, value: &Value) -> Holds {
    match keyword {
        "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
            Holds::Schemas
        }
        "allOf" | "anyOf" | "oneOf" | "prefixItems" => Holds::List,
        "items" if value.is_array() => Holds::List,
        "items"
        | "additionalItems"
        | "additionalProperties"
        | "not"
        | "if"
        | "then"
        | "else"
        | "contains"
        | "propertyNames"
        | "unevaluatedItems"
        | "unevaluatedProperties"
        | "contentSchema" => Holds::Schema,
        _ => Holds::Data,
    }
}

/// `schema` without its documentation keywords, at every schema position (a property
/// named `description` is kept; `default` and `enum` values are data and kept whole).
pub(crate) fn without_docs(schema: &Value) -> Value {
    let Value::Object(m) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (k, v) in m {
        if DOC_KEYWORDS.contains(&k.as_str()) {
            continue;
        }
        let v = match (holds(k, v), v) {
            (Holds::Schema, _) => without_docs(v),
            (Holds::Schemas, Value::Object(props)) => Value::Object(
                props
                    .iter()
                    .map(|(n, s)| (n.clone(), without_docs(s)))
                    .collect(),
            ),
            (Holds::List, Value::Array(items)) => {
                Value::Array(items.iter().map(without_docs).collect())
            }
            _ => v.clone(),
        };
        out.insert(k.clone(), v);
    }
    Value::Object(out)
}

/// The documentation keywords of `schema`, by the JSON pointer of the schema they are in.
fn docs_of(schema: &Value, ptr: String, out: &mut Map<String, Value>) {
    let Value::Object(m) = schema else {
        return;
    };
    let mine: Map<String, Value> = m
        .iter()
        .filter(|(k, _)| DOC_KEYWORDS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !mine.is_empty() {
        out.insert(ptr.clone(), Value::Object(mine));
    }
    for (k, v) in m {
        let here = format!("{ptr}/{}", escape(k));
        match (holds(k, v), v) {
            (Holds::Schema, _) => docs_of(v, here, out),
            (Holds::Schemas, Value::Object(props)) => {
                for (n, s) in props {
                    docs_of(s, format!("{here}/{}", escape(n)), out);
                }
            }
            (Holds::List, Value::Array(items)) => {
                for (i, s) in items.iter().enumerate() {
                    docs_of(s, format!("{here}/{i}"), out);
                }
            }
            _ => {}
        }
    }
}

/// One difference between a snapshot and a server's live list.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// A tool the snapshot does not have.
    Added(String),
    /// A tool of the snapshot the server no longer lists.
    Removed(String),
    /// A tool whose contract changed: what changed, one line each.
    Contract {
        /// The tool.
        tool: String,
        /// What changed (`inputSchema: property `dry_run` added`, ...).
        what: Vec<String>,
    },
    /// A tool whose documentation (title, descriptions, annotations) changed.
    Docs(String),
}

impl Change {
    /// Whether a caller built against the snapshot can break: a removed tool or a changed
    /// contract. A new tool or new wording cannot.
    pub fn breaks(&self) -> bool {
        matches!(self, Change::Removed(_) | Change::Contract { .. })
    }

    /// The tool the change is about.
    pub fn tool(&self) -> &str {
        match self {
            Change::Added(t) | Change::Removed(t) | Change::Docs(t) => t,
            Change::Contract { tool, .. } => tool,
        }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::Added(t) => write!(f, "tool `{t}` was added"),
            Change::Removed(t) => write!(f, "tool `{t}` was removed"),
            Change::Contract { tool, what } => {
                write!(f, "tool `{tool}` changed its contract: {}", what.join("; "))
            }
            Change::Docs(t) => write!(f, "tool `{t}` changed its description or annotations"),
        }
    }
}

/// What changed from `old` (a snapshot) to `new` (the live list), by tool name.
pub fn diff(old: &Snapshot, new: &Snapshot) -> Vec<Change> {
    let mut out = Vec::new();
    for t in &old.tools {
        match new.tool(&t.name) {
            None => out.push(Change::Removed(t.name.clone())),
            Some(n) => {
                let (oc, od) = t.hashes();
                let (nc, nd) = n.hashes();
                if oc != nc {
                    let mut what = Vec::new();
                    schema_diff(
                        "inputSchema",
                        &without_docs(&t.input_schema),
                        &without_docs(&n.input_schema),
                        &mut what,
                    );
                    match (&t.output_schema, &n.output_schema) {
                        (None, Some(_)) => what.push("outputSchema added".into()),
                        (Some(_), None) => what.push("outputSchema removed".into()),
                        (Some(a), Some(b)) => schema_diff(
                            "outputSchema",
                            &without_docs(a),
                            &without_docs(b),
                            &mut what,
                        ),
                        (None, None) => {}
                    }
                    if what.is_empty() {
                        what.push("the schemas differ".into());
                    }
                    out.push(Change::Contract {
                        tool: t.name.clone(),
                        what,
                    });
                } else if od != nd {
                    out.push(Change::Docs(t.name.clone()));
                }
            }
        }
    }
    for n in &new.tools {
        if old.tool(&n.name).is_none() {
            out.push(Change::Added(n.name.clone()));
        }
    }
    out
}

/// A short rendering of a schema's `type` (or what stands for it) for messages.
fn type_of(s: &Value) -> String {
    match s.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        _ if s.get("enum").is_some() => "enum".into(),
        _ if s.get("const").is_some() => "const".into(),
        _ if s.get("$ref").is_some() => "a $ref".into(),
        _ if s.get("anyOf").is_some() || s.get("oneOf").is_some() => "a union".into(),
        _ => "any".into(),
    }
}

/// The names a schema's `required` lists.
pub(crate) fn required_of(s: &Value) -> BTreeSet<&str> {
    s.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Describes how schema `a` became `b` (both without docs), one line per change.
fn schema_diff(at: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    if a == b {
        return;
    }
    let (ta, tb) = (type_of(a), type_of(b));
    if ta != tb {
        out.push(format!("{at}: retyped from {ta} to {tb}"));
        return;
    }
    let empty = Map::new();
    let props = |s: &Value| s.get("properties").and_then(Value::as_object).cloned();
    let (pa, pb) = (props(a), props(b));
    let (pa_ref, pb_ref) = (pa.as_ref().unwrap_or(&empty), pb.as_ref().unwrap_or(&empty));
    let (ra, rb) = (required_of(a), required_of(b));
    for (name, s) in pa_ref {
        let here = format!("{at}.{name}");
        match pb_ref.get(name) {
            None => out.push(format!("{here}: property removed")),
            Some(t) => schema_diff(&here, s, t, out),
        }
    }
    for name in pb_ref.keys() {
        if !pa_ref.contains_key(name) {
            let req = if rb.contains(name.as_str()) {
                "required"
            } else {
                "optional"
            };
            out.push(format!("{at}.{name}: {req} property added"));
        }
    }
    for name in rb.difference(&ra) {
        if pa_ref.contains_key(*name) {
            out.push(format!("{at}.{name}: made required"));
        }
    }
    for name in ra.difference(&rb) {
        if pb_ref.contains_key(*name) {
            out.push(format!("{at}.{name}: no longer required"));
        }
    }
    if let (Some(ia), Some(ib)) = (a.get("items"), b.get("items")) {
        schema_diff(&format!("{at}[]"), ia, ib, out);
    }
    let before = out.len();
    let keys: BTreeSet<&String> = a
        .as_object()
        .into_iter()
        .chain(b.as_object())
        .flat_map(|m| m.keys())
        .collect();
    for k in keys {
        if matches!(k.as_str(), "properties" | "required" | "items" | "type") {
            continue;
        }
        match (a.get(k), b.get(k)) {
            (Some(x), Some(y)) if x != y => {
                out.push(format!("{at}: `{k}` changed from {x} to {y}"))
            }
            (None, Some(y)) => out.push(format!("{at}: `{k}` {y} added")),
            (Some(x), None) => out.push(format!("{at}: `{k}` {x} removed")),
            _ => {}
        }
    }
    // Long values (a whole `$defs`) make unreadable lines: keep each one short.
    for line in &mut out[before..] {
        if line.chars().count() > 200 {
            *line = line.chars().take(197).collect::<String>() + "...";
        }
    }
}

/// The snapshot's `toolbindSnapshot` format number is the one this toolbind reads.
fn check_format(root: &Map<String, Value>, at: &At<'_>) -> Result<(), Vec<Diagnostic>> {
    let fix = "take the snapshot again with `toolbind mcp snapshot`";
    match root.get("toolbindSnapshot") {
        Some(n) if n.as_u64() == Some(FORMAT) => {}
        Some(n) => {
            return Err(vec![
                at(
                    "/toolbindSnapshot",
                    format!("snapshot format {n} is not the one this toolbind reads ({FORMAT})"),
                )
                .hint("use the toolbind that took it, or take it again with this one"),
            ]);
        }
        None => {
            return Err(vec![
                at(
                    "",
                    "not a toolbind snapshot: no `toolbindSnapshot` key".into(),
                )
                .hint(fix),
            ]);
        }
    }
    Ok(())
}

/// The snapshot's `tools`, each checked (a second one of a name is an error, a stored hash
/// that does not match is a warning), with the JSON pointer each was read at.
fn read_tools(
    root: &Map<String, Value>,
    at: &At<'_>,
    errors: &mut Vec<Diagnostic>,
    warnings: &mut Vec<Diagnostic>,
) -> (Vec<SnapshotTool>, Vec<(String, String)>) {
    let fix = "take the snapshot again with `toolbind mcp snapshot`";
    let mut tools = Vec::new();
    let mut pointers = Vec::new();
    match root.get("tools") {
        Some(Value::Array(items)) if items.len() > MAX_SNAPSHOT_TOOLS => errors.push(
            at(
                "/tools",
                format!(
                    "the snapshot holds {} tools, over the limit of {MAX_SNAPSHOT_TOOLS}: each is a module of generated Rust (about 9 KB), and this many would not compile in reasonable time",
                    items.len()
                ),
            )
            .hint("take snapshots of servers that list fewer tools, or call this server's tools untyped through the runtime"),
        ),
        Some(Value::Array(items)) => {
            let mut seen = BTreeSet::new();
            for (i, item) in items.iter().enumerate() {
                let ptr = format!("/tools/{i}");
                let tool = match SnapshotTool::from_listed(item) {
                    Ok(t) => t,
                    Err(e) => {
                        errors.push(at(&ptr, e).hint(fix));
                        continue;
                    }
                };
                if !seen.insert(tool.name.clone()) {
                    errors.push(
                        at(
                            &format!("{ptr}/name"),
                            format!("a second tool named `{}`", tool.name),
                        )
                        .hint("a server's tool names are unique: take the snapshot again"),
                    );
                    continue;
                }
                let stored = |key: &str| {
                    item.get("hashes")
                        .and_then(|h| h.get(key))
                        .and_then(Value::as_str)
                };
                for (key, now) in [("contract", &tool.contract), ("docs", &tool.docs)] {
                    if stored(key) != Some(now.as_str()) {
                        warnings.push(
                            at(
                                &format!("{ptr}/hashes"),
                                format!(
                                    "tool `{}`: the stored `{key}` hash does not match the tool (was the snapshot edited by hand?); read as the file holds it",
                                    tool.name
                                ),
                            )
                            .warning()
                            .hint(fix),
                        );
                    }
                }
                pointers.push((tool.name.clone(), ptr));
                tools.push(tool);
            }
        }
        Some(v) => errors.push(at(
            "/tools",
            format!("`tools` is {}, not an array", json_kind(v)),
        )),
        None => errors.push(at("", "missing `tools`".into()).hint(fix)),
    }
    (tools, pointers)
}

/// Makes a diagnostic located at a JSON pointer of the snapshot file.
type At<'a> = dyn Fn(&str, String) -> Diagnostic + 'a;

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(v: Value) -> SnapshotTool {
        SnapshotTool::from_listed(&v).unwrap()
    }

    fn edit_file() -> Value {
        json!({
            "name": "edit_file",
            "description": "Edit a file",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "the file"},
                    "edits": {"type": "array", "items": {"type": "object", "properties": {
                        "oldText": {"type": "string"}, "newText": {"type": "string"}},
                        "required": ["oldText", "newText"]}},
                    "description": {"type": "string", "title": "a property named description"},
                    "dryRun": {"type": "boolean", "default": false}
                },
                "required": ["path", "edits"]
            },
            "annotations": {"destructiveHint": true},
            "icons": [{"src": "x"}]
        })
    }

    #[test]
    fn hashes_split_contract_from_docs() {
        let a = tool(edit_file());
        let mut reworded = edit_file();
        reworded["description"] = json!("Edit a text file");
        reworded["inputSchema"]["properties"]["path"]["description"] = json!("which file");
        reworded["inputSchema"]["properties"]["description"]["title"] = json!("other");
        reworded["annotations"] = json!({"destructiveHint": false});
        let b = tool(reworded);
        assert_eq!(a.contract, b.contract);
        assert_ne!(a.docs, b.docs);
        // A property named `description` is part of the contract.
        let mut renamed = edit_file();
        let p = renamed["inputSchema"]["properties"]
            .as_object_mut()
            .unwrap()
            .remove("description")
            .unwrap();
        renamed["inputSchema"]["properties"]["summary"] = p;
        assert_ne!(tool(renamed).contract, a.contract);
        // Key order does not matter (canonical JSON).
        let mut reordered = edit_file();
        let props = reordered["inputSchema"]["properties"]
            .as_object_mut()
            .unwrap();
        let path = props.shift_remove("path").unwrap();
        props.insert("path".into(), path);
        let r = tool(reordered);
        assert_eq!(
            (r.contract.clone(), r.docs.clone()),
            (a.contract.clone(), a.docs.clone())
        );
        assert!(a.contract.starts_with("sha256:") && a.contract.len() == 71);
    }

    #[test]
    fn a_snapshot_round_trips_and_sorts() {
        let mut other = edit_file();
        other["name"] = json!("a.first/tool");
        let snap = Snapshot::new(
            "filesystem",
            ServerInfo::new("secure-filesystem-server", "0.2.0"),
            "2025-11-25",
            vec![tool(edit_file()), tool(other)],
        )
        .unwrap();
        assert_eq!(snap.tools[0].name, "a.first/tool");
        let text = snap.to_json();
        assert!(!text.contains("icons"), "{text}");
        let (back, warnings) = Snapshot::parse(Path::new("s.json"), &text).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(back.to_json(), text);
        assert_eq!(back.tools, snap.tools);
        let dup = Snapshot::new(
            "x",
            ServerInfo::default(),
            "v",
            vec![tool(edit_file()), tool(edit_file())],
        );
        assert!(dup.unwrap_err().contains("two tools named `edit_file`"));
        assert!(Snapshot::new("../x", ServerInfo::default(), "v", vec![]).is_err());
    }

    #[test]
    fn a_snapshot_holds_at_most_max_snapshot_tools() {
        let many = |n: usize| -> Vec<SnapshotTool> {
            (0..n)
                .map(|i| tool(json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}})))
                .collect()
        };
        let info = || ServerInfo::new("s", "1");
        let at_limit =
            Snapshot::new("many", info(), "2025-11-25", many(MAX_SNAPSHOT_TOOLS)).unwrap();
        let e =
            Snapshot::new("many", info(), "2025-11-25", many(MAX_SNAPSHOT_TOOLS + 1)).unwrap_err();
        assert!(
            e.contains("lists 1001 tools, over the limit of 1000"),
            "{e}"
        );
        // A file holding more (written by hand, or by another version) is refused on read.
        let text = at_limit.to_json().replacen(
            "\"tools\": [",
            "\"tools\": [{\"name\": \"extra\", \"inputSchema\": {}},",
            1,
        );
        let e = Snapshot::parse(Path::new("many.json"), &text).unwrap_err();
        assert!(
            e[0].message
                .contains("holds 1001 tools, over the limit of 1000"),
            "{e:?}"
        );
    }

    /// A schema whose definitions each use the next four times expands, `$ref` by `$ref`,
    /// to 4^7 fields (within the budget of a check, `schema_work`, but not of generated
    /// code): mapped, it stops at a budget with a warning saying so.
    #[test]
    fn a_ref_bomb_maps_within_a_budget() {
        let mut defs = serde_json::Map::new();
        for i in 0..7 {
            let next = json!({"$ref": format!("#/$defs/D{}", i + 1)});
            defs.insert(
                format!("D{i}"),
                json!({"type": "object", "properties": {"a": next, "b": next, "c": next, "d": next}}),
            );
        }
        defs.insert("D7".into(), json!({"type": "string"}));
        let schema = json!({"type": "object", "$defs": defs, "properties": {"root": {"$ref": "#/$defs/D0"}}});
        let snap = Snapshot::new(
            "bomb",
            ServerInfo::new("s", "1"),
            "2025-11-25",
            vec![tool(json!({"name": "bomb", "inputSchema": schema}))],
        )
        .unwrap();
        let specs = tool_specs(&snap, "");
        let mut fields = 0;
        for i in &specs[0].inputs {
            i.visit(&mut |_| fields += 1);
        }
        // The budget, and the untyped leaves of the last objects within it.
        assert!(fields <= 4 * 2_001, "{fields} fields");
        let w = specs[0]
            .warnings
            .iter()
            .map(|d| d.message.clone())
            .collect::<Vec<_>>();
        assert!(
            w.iter()
                .any(|m| m.contains("expands to more than 2000 typed values")),
            "{w:?}"
        );
    }

    #[test]
    fn malformed_snapshots_point_at_the_problem() {
        let file = Path::new("mcp/fs.json");
        let ok = Snapshot::new(
            "fs",
            ServerInfo::new("s", "1"),
            "2025-11-25",
            vec![tool(edit_file())],
        )
        .unwrap()
        .to_json();
        let bad_schema = ok.replacen("\"inputSchema\": {", "\"inputSchema\": 7, \"x\": {", 1);
        let e = Snapshot::parse(file, &bad_schema).unwrap_err();
        assert!(e[0].message.contains("`inputSchema` is a number"), "{e:?}");
        // The tool that holds it (line 10 of the file).
        assert_eq!(e[0].pos.line, 10, "{e:?}");
        let e =
            Snapshot::parse(file, &ok.replacen("\"tools\": [", "\"tools\": [,", 1)).unwrap_err();
        assert!(e[0].message.contains("not valid JSON"), "{e:?}");
        assert!(e[0].pos.line > 1);
        let e = Snapshot::parse(file, "{\"toolbindSnapshot\": 9}").unwrap_err();
        assert!(e[0].message.contains("format 9"), "{e:?}");
        assert_eq!(e[0].pos, Pos::new(1, 22));
        let e = Snapshot::parse(file, "[]").unwrap_err();
        assert!(e[0].message.contains("JSON object"));
        // Two tools of one name.
        let two = ok.replacen(
            "\"tools\": [",
            "\"tools\": [{\"name\": \"edit_file\", \"inputSchema\": {}},",
            1,
        );
        let e = Snapshot::parse(file, &two).unwrap_err();
        assert!(
            e[0].message.contains("second tool named `edit_file`"),
            "{e:?}"
        );
        // A hand edit: read, with a warning about the hash.
        let edited = ok.replacen("\"dryRun\"", "\"dry_run\"", 1);
        let (s, w) = Snapshot::parse(file, &edited).unwrap();
        assert!(
            s.tools[0].input_schema["properties"]
                .get("dry_run")
                .is_some()
        );
        assert!(
            w[0].message.contains("`contract` hash does not match"),
            "{w:?}"
        );
    }

    #[test]
    fn diff_names_what_changed() {
        let snap = |tools: Vec<Value>| {
            Snapshot::new(
                "fs",
                ServerInfo::new("s", "1"),
                "v",
                tools.into_iter().map(tool).collect(),
            )
            .unwrap()
        };
        let old = snap(vec![
            edit_file(),
            json!({"name": "gone", "inputSchema": {"type": "object"}}),
        ]);
        let mut changed = edit_file();
        let props = changed["inputSchema"]["properties"]
            .as_object_mut()
            .unwrap();
        props.shift_remove("dryRun");
        props.insert("mode".into(), json!({"type": "string"}));
        props["path"] = json!({"type": "integer"});
        changed["inputSchema"]["required"] = json!(["path", "edits", "mode"]);
        changed["inputSchema"]["properties"]["edits"]["items"]["required"] = json!(["oldText"]);
        let new = snap(vec![
            changed,
            json!({"name": "new", "inputSchema": {"type": "object"}}),
        ]);
        let changes = diff(&old, &new);
        let text: Vec<String> = changes.iter().map(ToString::to_string).collect();
        let all = text.join("\n");
        for want in [
            "inputSchema.path: retyped from string to integer",
            "inputSchema.dryRun: property removed",
            "inputSchema.mode: required property added",
            "inputSchema.edits[].newText: no longer required",
            "tool `gone` was removed",
            "tool `new` was added",
        ] {
            assert!(all.contains(want), "{want} not in\n{all}");
        }
        assert_eq!(changes.iter().filter(|c| c.breaks()).count(), 2);
        let mut reworded = edit_file();
        reworded["description"] = json!("new words");
        let d = diff(&snap(vec![edit_file()]), &snap(vec![reworded]));
        assert_eq!(d, vec![Change::Docs("edit_file".into())]);
        assert!(!d[0].breaks());
        assert!(diff(&old, &old).is_empty());
    }
}
