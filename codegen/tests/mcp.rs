//! Codegen from MCP snapshots through `Config`: what a build does with schemas that do not
//! map (a `$ref` cycle, `oneOf` of objects, `patternProperties`, `true`), with names two
//! sources share, with names providers reject, and with a snapshot file that is broken.
//! The reference servers' snapshots are compiled by the trybuild pass case
//! (`tests/ui/pass/mcp-servers.rs`) and laid out by `format.rs`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolbind_codegen::mcp::{ServerInfo, Snapshot, SnapshotTool, provider_name};
use toolbind_codegen::model::Pos;
use toolbind_codegen::{Config, Diagnostic, Error, Generated, Severity};

/// A scratch folder removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("toolbind-mcp-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Scratch(p)
    }

    /// Writes a snapshot named `name` of `tools` (as `tools/list` lists them) and returns
    /// its path.
    fn snapshot(&self, name: &str, tools: &[Value]) -> PathBuf {
        let tools = tools
            .iter()
            .map(|t| SnapshotTool::from_listed(t).unwrap())
            .collect();
        let snap = Snapshot::new(name, ServerInfo::new(name, "1.0.0"), "2025-11-25", tools)
            .unwrap_or_else(|e| panic!("{e}"));
        self.write(&format!("{name}.json"), &snap.to_json())
    }

    fn write(&self, file: &str, text: &str) -> PathBuf {
        let path = self.0.join(file);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tool(name: &str, input_schema: Value) -> Value {
    json!({"name": name, "description": format!("The {name} tool."), "inputSchema": input_schema})
}

fn generate(snapshots: &[&Path], prefixes: &[(&str, &str)]) -> Result<Generated, Vec<Diagnostic>> {
    let mut config = Config::new();
    config.print_warnings(false);
    for s in snapshots {
        config.mcp_snapshot(s);
    }
    for (server, prefix) in prefixes {
        config.mcp_prefix(*server, *prefix);
    }
    match config.generate() {
        Ok(g) => Ok(g),
        Err(Error::Invalid(d)) => Err(d.0),
        Err(e) => panic!("not a diagnostics error: {e:?}"),
    }
}

fn warnings(g: &Generated) -> Vec<Diagnostic> {
    toolbind_codegen::warnings(&g.tools).0
}

/// The generated bindings, which must parse as Rust.
fn rust(g: &Generated) -> &str {
    let src = g.rust().expect("Rust is emitted by default");
    syn::parse_file(src).unwrap_or_else(|e| panic!("generated code does not parse: {e}\n{src}"));
    src
}

/// The 1-based line and column where `needle`'s `n`th occurrence starts in `file`.
fn pos_of(file: &Path, needle: &str, n: usize) -> Pos {
    let text = std::fs::read_to_string(file).unwrap();
    let at = text
        .match_indices(needle)
        .nth(n)
        .unwrap_or_else(|| panic!("{needle:?} not in {}", file.display()))
        .0;
    let before = &text[..at];
    let line = before.matches('\n').count() as u32 + 1;
    let column = before.rsplit('\n').next().unwrap().chars().count() as u32 + 1;
    Pos { line, column }
}

#[test]
fn a_ref_cycle_becomes_an_untyped_field_with_a_warning_at_its_pointer() {
    let s = Scratch::new("cycle");
    let file = s.snapshot(
        "tree",
        &[tool(
            "plant",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "root": {"$ref": "#/$defs/node"}
                },
                "required": ["name", "root"],
                "$defs": {"node": {
                    "type": "object",
                    "properties": {
                        "label": {"type": "string"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
                    },
                    "required": ["label"]
                }}
            }),
        )],
    );
    let g = generate(&[&file], &[]).unwrap_or_else(|d| panic!("{d:#?}"));
    let w = warnings(&g);
    let cycle: Vec<&Diagnostic> = w
        .iter()
        .filter(|d| d.message.contains("recursive"))
        .collect();
    assert_eq!(cycle.len(), 1, "{w:#?}");
    let d = cycle[0];
    assert_eq!(d.severity, Severity::Warning);
    assert_eq!(d.file, file);
    // The pointer and position are where the cycle closes: the `$ref` inside `children`.
    assert!(
        d.message
            .contains("inputSchema at `/$defs/node/properties/children/items`: the `$ref` \"#/$defs/node\" is recursive"),
        "{}",
        d.message
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let line = text.lines().nth(d.pos.line as usize - 1).unwrap();
    let next = text.lines().nth(d.pos.line as usize).unwrap();
    assert!(
        line.ends_with("\"items\": {")
            && line.chars().count() == d.pos.column as usize
            && next.contains("\"$ref\": \"#/$defs/node\""),
        "{d:#?}\n{line}\n{next}"
    );
    let src = rust(&g);
    // The typed part stays typed: `root` is a struct with `label`, and only the cycle is a
    // value.
    assert!(src.contains("pub label: ::std::string::String"), "{src}");
    assert!(src.contains("::serde_json::Value"), "{src}");
}

#[test]
fn what_does_not_map_is_untyped_with_one_warning_each_and_never_fails_the_build() {
    let s = Scratch::new("unmapped");
    let file = s.snapshot(
        "odd",
        &[tool(
            "mixed",
            json!({
                "type": "object",
                "properties": {
                    "shape": {"oneOf": [
                        {"type": "object", "properties": {"r": {"type": "number"}}},
                        {"type": "object", "properties": {"w": {"type": "number"}}}
                    ]},
                    "labels": {"type": "object", "patternProperties": {"^x-": {"type": "string"}}},
                    "anything": true,
                    "empty": {},
                    "gated": {"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}},
                    "remote": {"$ref": "https://example.com/schema.json"},
                    "flag": {"type": ["boolean", "string"]},
                    "plain": {"type": "integer"}
                },
                "required": ["plain"]
            }),
        )],
    );
    let g = generate(&[&file], &[]).unwrap_or_else(|d| panic!("{d:#?}"));
    let w = warnings(&g);
    for field in ["shape", "labels", "anything", "empty", "gated", "remote"] {
        let here: Vec<&Diagnostic> = w
            .iter()
            .filter(|d| d.message.contains(&format!("`/properties/{field}`")))
            .collect();
        assert_eq!(here.len(), 1, "{field}: {w:#?}");
        assert_eq!(here[0].severity, Severity::Warning);
        assert!(
            here[0]
                .hint
                .as_deref()
                .is_some_and(|h| h.contains("serde_json::Value")),
            "{:#?}",
            here[0]
        );
    }
    // A type union of primitives is what the schema says: untyped without a warning.
    assert!(
        !w.iter().any(|d| d.message.contains("`/properties/flag`")),
        "{w:#?}"
    );
    assert!(w.iter().all(|d| d.severity == Severity::Warning), "{w:#?}");
    let src = rust(&g);
    assert!(src.contains("pub plain: i64"), "{src}");
}

#[test]
fn names_two_servers_share_need_a_prefix_and_the_prefix_keeps_the_called_name() {
    let s = Scratch::new("collide");
    let search = tool(
        "search",
        json!({"type": "object", "properties": {"q": {"type": "string"}}}),
    );
    let a = s.snapshot("docs", std::slice::from_ref(&search));
    let b = s.snapshot("web", &[search]);
    let d = generate(&[&a, &b], &[]).unwrap_err();
    let errors: Vec<&Diagnostic> = d.iter().filter(|d| d.severity == Severity::Error).collect();
    assert_eq!(errors.len(), 1, "{d:#?}");
    let e = errors[0];
    assert_eq!(e.file, b);
    assert!(
        e.message.contains("by the same name `search`"),
        "{}",
        e.message
    );
    assert!(e.message.contains("server `docs`") && e.message.contains("server `web`"));
    assert_eq!(e.pos, pos_of(&b, "\"search\"", 0), "{e:#?}");
    assert!(
        e.hint
            .as_deref()
            .is_some_and(|h| h.contains("Config::mcp_prefix(\"web\", \"web_\")")),
        "{e:#?}"
    );

    let g = generate(&[&a, &b], &[("web", "web_")]).unwrap_or_else(|d| panic!("{d:#?}"));
    let names: Vec<(&str, &str)> = g
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.mcp.as_ref().unwrap().name.as_str()))
        .collect();
    assert_eq!(names, [("search", "search"), ("web_search", "search")]);
    let src = rust(&g);
    assert!(
        src.contains("pub mod docs {") && src.contains("pub mod web {"),
        "{src}"
    );
    assert!(src.contains("\"web_search\""), "{src}");
}

#[test]
fn a_prefix_for_no_snapshot_is_an_error() {
    let s = Scratch::new("prefix");
    let a = s.snapshot("docs", &[tool("search", json!({"type": "object"}))]);
    let d = generate(&[&a], &[("dcos", "d_")]).unwrap_err();
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(
        d[0].message
            .contains("`Config::mcp_prefix(\"dcos\", ..)` names no snapshot"),
        "{}",
        d[0].message
    );
}

#[test]
fn two_snapshots_of_one_name_are_an_error() {
    let s = Scratch::new("samename");
    let a = s.snapshot("docs", &[tool("search", json!({"type": "object"}))]);
    let other = Scratch::new("samename-other");
    let b = other.snapshot("docs", &[tool("fetch", json!({"type": "object"}))]);
    let d = generate(&[&a, &b], &[]).unwrap_err();
    assert!(
        d.iter().any(|d| d.file == b
            && d.message
                .contains("two snapshots would be the Rust module `docs`")),
        "{d:#?}"
    );
}

#[test]
fn a_tool_listed_twice_in_a_snapshot_is_an_error_at_the_second() {
    let s = Scratch::new("dup");
    let file = s.snapshot(
        "docs",
        &[
            tool("fetch", json!({"type": "object"})),
            tool("search", json!({"type": "object"})),
        ],
    );
    // A hand edit (or a merge) that names two tools alike: `fetch` becomes `search`.
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("\"name\": \"fetch\"", "\"name\": \"search\"");
    std::fs::write(&file, text).unwrap();
    let d = generate(&[&file], &[]).unwrap_err();
    let errors: Vec<&Diagnostic> = d.iter().filter(|d| d.severity == Severity::Error).collect();
    assert_eq!(errors.len(), 1, "{d:#?}");
    assert!(
        errors[0].message.contains("a second tool named `search`"),
        "{}",
        errors[0].message
    );
    // At the second name's value.
    let key = pos_of(&file, "\"name\": \"search\"", 1);
    assert_eq!(
        errors[0].pos,
        Pos {
            column: key.column + 8,
            ..key
        }
    );
}

#[test]
fn a_malformed_snapshot_fails_the_build_at_its_line_and_column() {
    let s = Scratch::new("malformed");
    let file = s.write(
        "broken.json",
        "{\n  \"toolbindSnapshot\": 1,\n  \"name\": \"broken\"\n  \"tools\": []\n}\n",
    );
    let d = generate(&[&file], &[]).unwrap_err();
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].severity, Severity::Error);
    assert_eq!(d[0].file, file);
    assert_eq!(d[0].pos, Pos { line: 4, column: 3 }, "{:#?}", d[0]);
    // A schema that is not an object where one must be: named by its pointer.
    let file = s.write(
        "wrong.json",
        "{\n  \"toolbindSnapshot\": 1,\n  \"name\": \"wrong\",\n  \"server\": {\"name\": \"w\", \"version\": \"1\"},\n  \"protocolVersion\": \"2025-11-25\",\n  \"tools\": [{\"name\": \"t\", \"inputSchema\": 7}]\n}\n",
    );
    let d = generate(&[&file], &[]).unwrap_err();
    let errors: Vec<&Diagnostic> = d.iter().filter(|d| d.severity == Severity::Error).collect();
    assert_eq!(errors.len(), 1, "{d:#?}");
    assert_eq!(errors[0].pos.line, 6, "{:#?}", errors[0]);
    assert!(
        errors[0].message.contains("inputSchema"),
        "{}",
        errors[0].message
    );
}

#[test]
fn names_providers_reject_map_to_distinct_safe_names() {
    let s = Scratch::new("names");
    let file = s.snapshot(
        "files",
        &[
            tool("files/read.text", json!({"type": "object"})),
            tool("files_read_text", json!({"type": "object"})),
            tool(&"x".repeat(80), json!({"type": "object"})),
        ],
    );
    let g = generate(&[&file], &[]).unwrap_or_else(|d| panic!("{d:#?}"));
    let ok = |n: &str| {
        (1..=64).contains(&n.len())
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    let names: Vec<&str> = g.tools.iter().map(|t| t.name.as_str()).collect();
    assert!(names.iter().all(|n| ok(n)), "{names:?}");
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), 3, "{names:?}");
    assert!(names.contains(&"files_read_text"), "{names:?}");
    assert_eq!(
        provider_name("", "files/read.text"),
        g.tools
            .iter()
            .find(|t| t.mcp.as_ref().unwrap().name == "files/read.text")
            .unwrap()
            .name
    );
    // Every provider's definitions carry the safe names only.
    let src = rust(&g);
    assert!(
        src.contains("\"files/read.text\""),
        "the called name is kept: {src}"
    );
}

/// A warning about a server's schema is the server's: its hint says how to silence it, and
/// `Config::accept_mcp_warnings` does (neither printed nor denied), for that server only.
#[test]
fn a_servers_schema_warnings_can_be_accepted_by_name() {
    let s = Scratch::new("accept");
    let odd_tool = tool(
        "mixed",
        json!({"type": "object", "properties": {"shape": {"oneOf": [
            {"type": "object", "properties": {"r": {"type": "number"}}},
            {"type": "object", "properties": {"w": {"type": "number"}}}
        ]}}}),
    );
    let odd = s.snapshot("odd", std::slice::from_ref(&odd_tool));
    let other = s.snapshot("other", &[odd_tool]);
    let g = generate(&[&odd, &other], &[("other", "o_")]).unwrap_or_else(|d| panic!("{d:#?}"));
    let w = warnings(&g);
    assert_eq!(w.len(), 2, "{w:#?}");
    let hint = w[0].hint.as_deref().unwrap_or_default();
    assert!(
        hint.contains("`Config::accept_mcp_warnings(\"odd\")` silences it"),
        "{hint}"
    );

    let mut config = Config::new();
    config
        .print_warnings(false)
        .deny_warnings(true)
        .mcp_snapshot(&odd)
        .mcp_snapshot(&other)
        .mcp_prefix("other", "o_")
        .accept_mcp_warnings("odd");
    // `other`'s warning is still there, and denied.
    let Err(Error::Invalid(d)) = config.generate() else {
        panic!("the other server's warning is not accepted")
    };
    assert_eq!(d.0.len(), 1, "{:#?}", d.0);
    assert!(
        d.0[0]
            .hint
            .as_deref()
            .unwrap_or_default()
            .contains("(\"other\")")
    );
    config.accept_mcp_warnings("other");
    let g = config.generate().unwrap_or_else(|e| panic!("{e:?}"));
    assert!(warnings(&g).is_empty());

    // A name that is no snapshot's is a mistake, said as such.
    let mut config = Config::new();
    config
        .mcp_snapshot(&odd)
        .accept_mcp_warnings("odd")
        .accept_mcp_warnings("typo");
    let Err(Error::Invalid(d)) = config.generate() else {
        panic!("an unknown server name is accepted")
    };
    assert!(
        d.0[0]
            .message
            .contains("`Config::accept_mcp_warnings(\"typo\")` names no snapshot")
    );
}

/// A server's module carries its snapshot: `SNAPSHOT` reads back to the snapshot the
/// bindings were generated from, so the runtime needs no second path to the file.
#[test]
fn a_server_module_carries_its_snapshot() {
    let s = Scratch::new("carry");
    let file = s.snapshot(
        "notes",
        &[tool(
            "add",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        )],
    );
    let g = generate(&[&file], &[]).unwrap_or_else(|d| panic!("{d:#?}"));
    let src = rust(&g);
    assert!(
        src.contains("pub fn snapshot() -> ::toolbind::__private::McpSnapshot {"),
        "{src}"
    );
    assert!(
        src.contains("::toolbind::__private::mcp_snapshot(SERVER, SNAPSHOT)"),
        "{src}"
    );
    let line = src
        .lines()
        .find_map(|l| l.trim().strip_prefix("pub const SNAPSHOT: &str = "))
        .expect("a SNAPSHOT const");
    let literal: syn::LitStr = syn::parse_str(line.trim_end_matches(';')).unwrap();
    let (carried, _) = Snapshot::parse(Path::new("carried"), &literal.value()).unwrap();
    let (read, _) = Snapshot::read(&file).unwrap();
    assert!(
        carried == read,
        "the carried snapshot differs from the file's"
    );
    assert_eq!(carried.to_json(), read.to_json());
}

/// A union of primitive types is named as what it is in the generated docs and kept in
/// the schemas that can carry it; an integer bound is written as an integer, up to 2^53.
#[test]
fn a_union_is_named_and_an_integer_bound_stays_an_integer() {
    let s = Scratch::new("union");
    let file = s.snapshot(
        "kinds",
        &[tool(
            "pick",
            json!({
                "type": "object",
                "properties": {
                    "flag": {"type": ["boolean", "string"], "description": "On, off or a name."},
                    "either": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]},
                    "count": {"type": "integer", "minimum": 0, "maximum": 9007199254740991u64},
                    // A server's text where a type name goes: neither docs nor schemas.
                    "odd": {"type": ["string", "x\n```\ncompile_error!(\"injected\");\n```"]}
                },
                "required": ["flag", "count"]
            }),
        )],
    );
    let g = generate(&[&file], &[]).unwrap_or_else(|d| panic!("{d:#?}"));
    let src = rust(&g);
    assert!(
        src.contains("/// Takes a boolean or a string (the schema's union: a JSON value in Rust)."),
        "{src}"
    );
    assert!(
        src.contains("/// Takes an integer, a string or null (the schema's union"),
        "{src}"
    );
    assert!(
        src.contains("/// Allowed: from 0 to 9007199254740991 (checked by the runtime)."),
        "{src}"
    );
    assert!(!src.contains("9007199254740991.0"), "{src}");
    // The raw schema is carried in string constants (`SNAPSHOT`, `INPUT_SCHEMA`); no doc
    // line holds the server's text.
    assert!(
        !src.lines()
            .any(|l| l.trim_start().starts_with("//") && l.contains("injected")),
        "{src}"
    );
    let pick = g.tools.iter().find(|t| t.name == "pick").unwrap();
    let schema: Value =
        serde_json::from_str(&toolbind_codegen::schema::portable_json(pick)).unwrap();
    let props = &schema["properties"];
    assert_eq!(
        props["flag"]["type"],
        json!(["boolean", "string"]),
        "{schema}"
    );
    assert_eq!(
        props["either"]["type"],
        json!(["integer", "string", "null"]),
        "{schema}"
    );
    assert_eq!(
        props["count"]["maximum"],
        json!(9007199254740991u64),
        "{schema}"
    );
    assert!(props["odd"].get("type").is_none(), "{schema}");
    assert!(!schema.to_string().contains("injected"), "{schema}");
}

/// `new` over more than seven required inputs would trip clippy's default
/// `too_many_arguments` in the user's crate: it says why it is allowed.
#[test]
fn a_new_over_eight_required_inputs_allows_clippys_bound() {
    let s = Scratch::new("eight");
    let mut props = serde_json::Map::new();
    let mut required = Vec::new();
    for i in 0..8 {
        props.insert(format!("a{i}"), json!({"type": "string"}));
        required.push(format!("a{i}"));
    }
    let file = s.snapshot(
        "wide",
        &[tool(
            "eight",
            json!({"type": "object", "properties": props, "required": required}),
        )],
    );
    let g = generate(&[&file], &[]).unwrap_or_else(|d| panic!("{d:#?}"));
    let src = rust(&g);
    let at = src.find("pub fn new(").expect("a new");
    assert!(
        src[..at].ends_with("#[allow(clippy::too_many_arguments)]\n    ")
            || src[..at]
                .trim_end()
                .ends_with("#[allow(clippy::too_many_arguments)]"),
        "{src}"
    );
}
