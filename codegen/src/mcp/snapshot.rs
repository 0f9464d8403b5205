//! A snapshot: its file format (read with every problem located, written canonically), its
//! tools and their contract and docs hashes.

use std::collections::BTreeSet;
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

/// Why one element of a `tools/list` result cannot go into a snapshot
/// ([`SnapshotTool::from_listed`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListedToolError {
    /// The element is not a JSON object; `kind` is what it is (`a string`, `null`, ...).
    NotObject {
        /// What it is.
        kind: &'static str,
    },
    /// It has no `name`.
    NoName,
    /// Its `name` is empty.
    EmptyName,
    /// Its `name` is not a string.
    NameNotString {
        /// What it is.
        kind: &'static str,
    },
    /// One of its fields has the wrong JSON type.
    WrongType {
        /// The tool's name.
        tool: String,
        /// The field (`title`, `description`, `inputSchema`, `outputSchema`, `annotations`).
        key: &'static str,
        /// What it is.
        kind: &'static str,
        /// What it should be (`a string`, `an object`).
        expected: &'static str,
    },
    /// It has no `inputSchema`.
    NoInputSchema {
        /// The tool's name.
        tool: String,
    },
    /// One of its schemas expands past [`MAX_EXPANDED`](crate::schema_work::MAX_EXPANDED)
    /// subschemas.
    TooCostly {
        /// The tool's name.
        tool: String,
        /// `inputSchema` or `outputSchema`.
        key: &'static str,
        /// What the count found.
        why: String,
    },
}

impl std::fmt::Display for ListedToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ListedToolError::NotObject { kind } => write!(f, "a tool is {kind}, not an object"),
            ListedToolError::NoName => f.write_str("a tool has no `name`"),
            ListedToolError::EmptyName => f.write_str("a tool has an empty `name`"),
            ListedToolError::NameNotString { kind } => {
                write!(f, "a tool's `name` is {kind}, not a string")
            }
            ListedToolError::WrongType {
                tool,
                key,
                kind,
                expected,
            } => write!(f, "tool `{tool}`: `{key}` is {kind}, not {expected}"),
            ListedToolError::NoInputSchema { tool } => {
                write!(f, "tool `{tool}` has no `inputSchema`")
            }
            ListedToolError::TooCostly { tool, key, why } => write!(
                f,
                "tool `{tool}`: its `{key}` is refused: {why}; toolbind takes schemas that expand to at most {} subschemas",
                crate::schema_work::MAX_EXPANDED
            ),
        }
    }
}

impl std::error::Error for ListedToolError {}

/// Why a snapshot cannot be made of a server's tools ([`Snapshot::new`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SnapshotError {
    /// The snapshot's name cannot name a file.
    BadName {
        /// The name.
        name: String,
        /// Why not.
        problem: String,
    },
    /// The server lists more than [`MAX_SNAPSHOT_TOOLS`] tools.
    TooManyTools {
        /// How many.
        count: usize,
    },
    /// The server lists two tools of this name.
    TwoNamed {
        /// The name.
        name: String,
    },
}

impl std::fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SnapshotError::BadName { name, problem } => {
                write!(
                    f,
                    "the snapshot name {name:?} cannot name a file: {problem}"
                )
            }
            SnapshotError::TooManyTools { count } => write!(
                f,
                "the server lists {count} tools, over the limit of {MAX_SNAPSHOT_TOOLS} for a snapshot: each becomes a module of generated Rust (about 9 KB), and this many would not compile in reasonable time; call its tools untyped through the runtime instead"
            ),
            SnapshotError::TwoNamed { name } => write!(
                f,
                "the server lists two tools named `{name}`: a call could not tell them apart"
            ),
        }
    }
}

impl std::error::Error for SnapshotError {}

impl SnapshotTool {
    /// A tool from one element of a `tools/list` result's `tools`, hashed. Fields the
    /// snapshot does not keep (`icons`, `_meta`, `execution`) are dropped.
    pub fn from_listed(tool: &Value) -> Result<Self, ListedToolError> {
        let obj = tool.as_object().ok_or(ListedToolError::NotObject {
            kind: json_kind(tool),
        })?;
        let name = match obj.get("name") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::String(_)) => return Err(ListedToolError::EmptyName),
            Some(v) => return Err(ListedToolError::NameNotString { kind: json_kind(v) }),
            None => return Err(ListedToolError::NoName),
        };
        let wrong =
            |key: &'static str, v: &Value, expected: &'static str| ListedToolError::WrongType {
                tool: name.clone(),
                key,
                kind: json_kind(v),
                expected,
            };
        let text = |key: &'static str| -> Result<Option<String>, ListedToolError> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(v) => Err(wrong(key, v, "a string")),
            }
        };
        let object = |key: &'static str| -> Result<Option<Value>, ListedToolError> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v @ Value::Object(_)) => Ok(Some(v.clone())),
                Some(v) => Err(wrong(key, v, "an object")),
            }
        };
        let (title, description) = (text("title")?, text("description")?);
        let input_schema = match obj.get("inputSchema") {
            Some(v @ Value::Object(_)) => v.clone(),
            Some(v) => return Err(wrong("inputSchema", v, "an object")),
            None => return Err(ListedToolError::NoInputSchema { tool: name.clone() }),
        };
        let output_schema = object("outputSchema")?;
        let annotations = object("annotations")?;
        // Before anything maps or checks by them: a schema whose `$ref`s multiply would
        // take minutes of CPU each time a value is checked against it.
        for (key, schema) in [
            ("inputSchema", Some(&input_schema)),
            ("outputSchema", output_schema.as_ref()),
        ] {
            if let Some(schema) = schema
                && let Err(e) = crate::schema_work::expanded_size(schema)
            {
                return Err(ListedToolError::TooCostly {
                    tool: name.clone(),
                    key,
                    why: e.to_string(),
                });
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

impl Snapshot {
    /// A snapshot of a server's listed tools (sorted here). Two tools of the same name are
    /// an error: a caller could not tell them apart.
    pub fn new(
        name: impl Into<String>,
        server: ServerInfo,
        protocol_version: impl Into<String>,
        mut tools: Vec<SnapshotTool>,
    ) -> Result<Self, SnapshotError> {
        let name = name.into();
        if let Some(problem) = crate::model::path_component_problem(&name) {
            return Err(SnapshotError::BadName { name, problem });
        }
        if tools.len() > MAX_SNAPSHOT_TOOLS {
            return Err(SnapshotError::TooManyTools { count: tools.len() });
        }
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        if let Some(w) = tools.windows(2).find(|w| w[0].name == w[1].name) {
            return Err(SnapshotError::TwoNamed {
                name: w[0].name.clone(),
            });
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

impl PartialEq for Snapshot {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.server == other.server
            && self.protocol_version == other.protocol_version
            && self.tools == other.tools
    }
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
                        errors.push(at(&ptr, e.to_string()).hint(fix));
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
