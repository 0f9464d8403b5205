//! JSON Schema → the input model: what an MCP server's `inputSchema` (and `outputSchema`)
//! become in generated code.
//!
//! Maps what real servers send: `object`/`properties`/`required`, the primitive types,
//! string `enum` and `const`, arrays, nested objects, nullable (`type: [T, "null"]`,
//! `anyOf`/`oneOf` with a `null` branch) → `Option`, local `$ref` into `$defs` or
//! `definitions`, `additionalProperties` with a schema → a map, `default`, descriptions.
//! What does not map — `oneOf` of objects, `if`/`then`, `patternProperties`, a recursive
//! or remote `$ref`, a `true`/`{}` schema — becomes an untyped value (`serde_json::Value`)
//! with a warning naming the JSON pointer: never a failed build. A `type` union of
//! primitives (`["boolean", "string"]`) is untyped too, without a warning (it is what the
//! schema says). Every untyped value is still checked against the original schema when
//! the call is validated.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::diagnostic::Diagnostic;
use crate::ident;
use crate::model::{EnumValue, Input, InputType, OutputField, OutputType, Pos};

/// Where the mapping is: the schema's root (for `$ref`), how to report, what is taken.
pub(crate) struct Mapper<'a> {
    /// The root schema `$ref`s resolve against.
    root: &'a Value,
    /// The JSON pointer of the root in the snapshot file (`/tools/3/inputSchema`).
    base: String,
    /// Turns a pointer into a warning's place.
    at: &'a dyn Fn(&str) -> (std::path::PathBuf, Pos),
    /// The `$ref`s being expanded (a cycle is one already here).
    refs: Vec<String>,
    /// The Rust type names given in the tool's module, with the path each was given to.
    pub(crate) types: Vec<(String, String)>,
    /// The warnings.
    pub(crate) warnings: Vec<Diagnostic>,
    /// What each warning's help says becomes of an untyped field.
    pub(crate) untyped_hint: &'static str,
    /// How many typed values (fields, items, variants' schemas) the schema has mapped to.
    nodes: usize,
    /// The names in `types`, for lookups.
    taken: std::collections::HashSet<String>,
}

/// How deep a schema is mapped before the rest is left untyped.
const MAX_DEPTH: usize = 10;

/// The most typed values one schema maps to. Every `$ref` is expanded where it is used, so
/// a schema of a few kilobytes whose definitions each use the next several times would
/// otherwise expand to millions of fields, and as many lines of generated Rust. The
/// largest real schema seen (the everything server's) maps to under 100; past this
/// budget, what is left is an untyped `serde_json::Value`, still checked against the
/// server's schema at call time.
const MAX_NODES: usize = 2_000;

impl<'a> Mapper<'a> {
    pub(crate) fn new(
        root: &'a Value,
        base: String,
        at: &'a dyn Fn(&str) -> (std::path::PathBuf, Pos),
        reserved: &[&str],
    ) -> Self {
        Mapper {
            root,
            base,
            at,
            refs: Vec::new(),
            types: reserved
                .iter()
                .map(|t| ((*t).to_owned(), String::new()))
                .collect(),
            warnings: Vec::new(),
            untyped_hint: "the field is a `serde_json::Value` in Rust, checked against the server's schema when a call is validated",
            nodes: 0,
            taken: std::collections::HashSet::new(),
        }
    }

    fn warn(&mut self, ptr: &str, msg: String) {
        let full = format!("{}{ptr}", self.base);
        let (file, pos) = (self.at)(&full);
        let shown = if ptr.is_empty() {
            "/".to_owned()
        } else {
            ptr.to_owned()
        };
        self.warnings.push(
            Diagnostic::new(
                file,
                pos,
                format!("{} at `{shown}`: {msg}", self.base_name()),
            )
            .warning()
            .hint(self.untyped_hint),
        );
    }

    fn base_name(&self) -> &str {
        self.base.rsplit('/').next().unwrap_or("schema")
    }

    fn type_name(&mut self, base: &str, path: &str) -> String {
        if self.taken.is_empty() {
            self.taken = self.types.iter().map(|(t, _)| t.clone()).collect();
        }
        // A set, not a scan of `types`: a schema that uses one definition in many places
        // names many types from one base (`Item`, `Item2`, ... `Item900`).
        let name = ident::unique(base, |c| self.taken.contains(c));
        self.taken.insert(name.clone());
        self.types.push((name.clone(), path.to_owned()));
        name
    }

    /// Follows a local `$ref` (`#/$defs/X`, `#/definitions/X`, any `#/...` pointer).
    fn resolve(&self, r: &str) -> Option<&'a Value> {
        let ptr = r.strip_prefix('#')?;
        if ptr.is_empty() {
            return Some(self.root);
        }
        self.root.pointer(ptr)
    }

    /// The params of a tool: the fields of its `inputSchema` object.
    pub(crate) fn params(&mut self) -> Vec<Input> {
        let root = self.root;
        match self.object_fields(root, "", "", 1) {
            Some(fields) => fields,
            None => {
                if !(root.get("type").is_none() && root.as_object().is_some_and(Map::is_empty)) {
                    self.warn(
                        "",
                        "the input schema is not an object with `properties`: the tool takes no typed params".into(),
                    );
                }
                Vec::new()
            }
        }
    }

    /// The properties of an object schema, as inputs; `None` when `schema` has none.
    fn object_fields(
        &mut self,
        schema: &'a Value,
        ptr: &str,
        path: &str,
        depth: usize,
    ) -> Option<Vec<Input>> {
        let props = schema.get("properties")?.as_object()?;
        let required = required_of(schema);
        let mut out: Vec<Input> = Vec::new();
        for (name, s) in props {
            let here = format!("{ptr}/properties/{}", crate::json::escape(name));
            let p = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            let mut input = self.input(s, &here, &p, name, &ident::type_name(name), depth + 1);
            input.name = name.clone();
            let base = ident::field_name_or_spelled(name);
            input.rust_name = ident::unique(&base, |c| out.iter().any(|i| i.rust_name == c));
            input.optional = !required.contains(&name.as_str());
            input.pos = (self.at)(&format!("{}{here}", self.base)).1;
            out.push(input);
        }
        Some(out)
    }

    /// One schema as an input (its name, rust_name and optional are the caller's).
    fn input(
        &mut self,
        schema: &'a Value,
        ptr: &str,
        path: &str,
        name: &str,
        type_base: &str,
        depth: usize,
    ) -> Input {
        let any = Input::new("", InputType::Any);
        if depth > MAX_DEPTH {
            self.warn(ptr, format!("nested deeper than {MAX_DEPTH} levels"));
            return any;
        }
        self.nodes += 1;
        if self.nodes == MAX_NODES + 1 {
            self.warn(
                ptr,
                format!("the schema expands to more than {MAX_NODES} typed values (its `$ref`s are expanded where used); this and what follows are left untyped"),
            );
        }
        if self.nodes > MAX_NODES {
            return any;
        }
        let obj = match schema {
            Value::Bool(true) => {
                self.warn(ptr, "a `true` schema allows any value".into());
                return any;
            }
            Value::Object(o) if o.is_empty() => {
                self.warn(ptr, "an empty schema allows any value".into());
                return any;
            }
            Value::Object(o) => o,
            _ => {
                self.warn(ptr, "not a schema object".into());
                return any;
            }
        };
        let mut input = self.typed(schema, obj, ptr, path, name, type_base, depth);
        if let Some(Value::String(d)) = obj.get("description") {
            input.description = d.clone();
        }
        if obj.get("writeOnly") == Some(&Value::Bool(true))
            || obj.get("format").and_then(Value::as_str) == Some("password")
        {
            input.sensitive = true;
        }
        input.minimum = obj.get("minimum").and_then(Value::as_f64);
        input.maximum = obj.get("maximum").and_then(Value::as_f64);
        if let Some(d) = obj.get("default")
            && default_fits(&input, d)
        {
            input.default = Some(d.clone());
        }
        if input.ty == InputType::Array {
            input.min_items = obj.get("minItems").and_then(Value::as_u64);
            input.max_items = obj.get("maxItems").and_then(Value::as_u64);
        }
        input
    }

    /// The input a schema object `obj` (at JSON pointer `ptr`) maps to: a dispatcher over
    /// what decides its type, first match wins (`$ref`, an unmappable keyword, a nullable
    /// union, `const`, `type`, `enum`, then the type's own shape).
    #[allow(clippy::too_many_arguments)]
    fn typed(
        &mut self,
        schema: &'a Value,
        obj: &'a Map<String, Value>,
        ptr: &str,
        path: &str,
        name: &str,
        type_base: &str,
        depth: usize,
    ) -> Input {
        let any = Input::new("", InputType::Any);
        if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
            return self.reference(obj, r, ptr, path, name, type_base, depth);
        }
        for kw in [
            "if",
            "patternProperties",
            "not",
            "allOf",
            "dependentSchemas",
        ] {
            if obj.contains_key(kw) {
                self.warn(ptr, format!("`{kw}` does not map to a Rust type"));
                return any;
            }
        }
        for kw in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = obj.get(kw) {
                return self.union(kw, branches, ptr, path, name, type_base, depth);
            }
        }
        if let Some(c) = obj.get("const") {
            let mut input = Input::new("", InputType::Const);
            input.constant = Some(c.clone());
            return input;
        }
        let (ty, nullable) = match self.type_word(obj, ptr) {
            Ok(t) => t,
            Err((nullable, types)) => {
                let mut untyped = any;
                untyped.nullable = nullable;
                untyped.json_types = types;
                return untyped;
            }
        };
        if let Some(Value::Array(values)) = obj.get("enum") {
            return self.string_enum(values, nullable, ptr, path, type_base);
        }
        let ty = ty.or(if obj.contains_key("properties") {
            Some("object")
        } else if obj.contains_key("items") {
            Some("array")
        } else {
            None
        });
        let mut input = match ty {
            Some("string") => Input::new("", InputType::String),
            Some("number") => Input::new("", InputType::Number),
            Some("integer") => Input::new("", InputType::Integer),
            Some("boolean") => Input::new("", InputType::Boolean),
            Some("null") => {
                let mut i = Input::new("", InputType::Const);
                i.constant = Some(Value::Null);
                i
            }
            Some("array") => self.array(obj, ptr, path, name, depth),
            Some("object") => self.object(schema, obj, ptr, path, name, type_base, depth),
            None => {
                self.warn(ptr, "a schema without a `type` allows any value".into());
                return any;
            }
            Some(other) => {
                self.warn(ptr, format!("unknown type {other:?}"));
                return any;
            }
        };
        input.nullable |= nullable;
        input
    }

    /// A `$ref` `r`: a local one resolved and mapped (not a recursive one); a remote one is
    /// not fetched.
    #[allow(clippy::too_many_arguments)]
    fn reference(
        &mut self,
        obj: &'a Map<String, Value>,
        r: &str,
        ptr: &str,
        path: &str,
        name: &str,
        type_base: &str,
        depth: usize,
    ) -> Input {
        let any = Input::new("", InputType::Any);
        if !r.starts_with('#') {
            self.warn(ptr, format!("the remote `$ref` {r:?} is not fetched"));
            return any;
        }
        if self.refs.iter().any(|x| x == r) {
            self.warn(ptr, format!("the `$ref` {r:?} is recursive"));
            return any;
        }
        let Some(target) = self.resolve(r) else {
            self.warn(
                ptr,
                format!("the `$ref` {r:?} points at nothing in the schema"),
            );
            return any;
        };
        self.refs.push(r.to_owned());
        // A `$defs` entry names its type better than the property does.
        let def_name = r.rsplit('/').next().map(ident::type_name);
        let base = def_name.as_deref().unwrap_or(type_base);
        let mut input = self.input(target, &r[1..], path, name, base, depth);
        self.refs.pop();
        if let Some(Value::String(d)) = obj.get("description") {
            input.description = d.clone();
        }
        input
    }

    /// `anyOf`/`oneOf` (`kw`): a nullable union of one schema and `{"type": "null"}` is
    /// that schema; a union of primitives is untyped; anything else does not map.
    #[allow(clippy::too_many_arguments)]
    fn union(
        &mut self,
        kw: &str,
        branches: &'a [Value],
        ptr: &str,
        path: &str,
        name: &str,
        type_base: &str,
        depth: usize,
    ) -> Input {
        let any = Input::new("", InputType::Any);
        let is_null = |b: &Value| b.get("type").and_then(Value::as_str) == Some("null");
        let rest: Vec<(usize, &Value)> = branches
            .iter()
            .enumerate()
            .filter(|(_, b)| !is_null(b))
            .collect();
        if rest.len() == 1 {
            let (i, b) = rest[0];
            let mut input = self.input(b, &format!("{ptr}/{kw}/{i}"), path, name, type_base, depth);
            input.nullable |= rest.len() < branches.len();
            return input;
        }
        if rest.iter().all(|(_, b)| primitive(b).is_some()) && !rest.is_empty() {
            let mut input = any;
            input.nullable = rest.len() < branches.len();
            for t in rest.iter().filter_map(|(_, b)| primitive(b)) {
                if !input.json_types.iter().any(|have| have == t) {
                    input.json_types.push(t.to_owned());
                }
            }
            return input;
        }
        self.warn(
            ptr,
            format!(
                "`{kw}` of {} schemas does not map to a Rust type",
                rest.len()
            ),
        );
        any
    }

    /// The `type` word and whether `null` is allowed too; for a union of several types,
    /// `Err` with whether `null` is one of them and, for a union of primitives, their
    /// names (the input is then untyped).
    fn type_word(
        &mut self,
        obj: &'a Map<String, Value>,
        ptr: &str,
    ) -> Result<(Option<&'a str>, bool), Untyped> {
        Ok(match obj.get("type") {
            Some(Value::String(t)) => (Some(t.as_str()), false),
            Some(Value::Array(ts)) => {
                let names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
                let rest: Vec<&str> = names.iter().copied().filter(|t| *t != "null").collect();
                let nullable = rest.len() < names.len();
                if rest.len() == 1 {
                    (Some(rest[0]), nullable)
                } else {
                    // A union of primitives (["boolean", "string"]): untyped, as it says.
                    // Only JSON Schema's primitive type names are kept: the names reach
                    // generated docs and provider schemas, and a server's text is not one.
                    if !rest
                        .iter()
                        .all(|t| matches!(*t, "string" | "number" | "integer" | "boolean"))
                    {
                        self.warn(
                            ptr,
                            format!("the type union {rest:?} does not map to a Rust type"),
                        );
                        return Err((nullable, Vec::new()));
                    }
                    return Err((nullable, rest.iter().map(|t| (*t).to_owned()).collect()));
                }
            }
            _ => (None, false),
        })
    }

    /// An `enum` of strings (and `null`): a Rust enum; of other values: untyped.
    fn string_enum(
        &mut self,
        values: &[Value],
        nullable: bool,
        ptr: &str,
        path: &str,
        type_base: &str,
    ) -> Input {
        let strings: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
        let nulls = values.iter().filter(|v| v.is_null()).count();
        if strings.len() + nulls != values.len() || strings.is_empty() {
            self.warn(
                ptr,
                "an `enum` of values other than strings does not map to a Rust enum".into(),
            );
            return Input::new("", InputType::Any);
        }
        let mut input = Input::new("", InputType::Enum);
        for v in strings {
            if input.values.iter().any(|e| e.wire == v) {
                continue;
            }
            let base = ident::variant_name_or_spelled(v);
            let rust = ident::unique(&base, |c| input.values.iter().any(|e| e.rust == c));
            input.values.push(EnumValue {
                wire: v.to_owned(),
                rust,
            });
        }
        input.rust_type = self.type_name(type_base, path);
        input.nullable = nullable || nulls > 0;
        input
    }

    /// An array and its `items` (tuple `items` and a missing one: untyped elements).
    fn array(
        &mut self,
        obj: &'a Map<String, Value>,
        ptr: &str,
        path: &str,
        name: &str,
        depth: usize,
    ) -> Input {
        let mut input = Input::new("", InputType::Array);
        let items = match obj.get("items") {
            Some(Value::Array(_)) => {
                self.warn(ptr, "tuple `items` do not map to a Rust type".into());
                Input::new("", InputType::Any)
            }
            Some(items) => {
                let base = crate::validate::item_type_base(name);
                self.input(
                    items,
                    &format!("{ptr}/items"),
                    &format!("{path}[]"),
                    name,
                    &base,
                    depth + 1,
                )
            }
            // An array of anything: its elements are untyped, as the schema says.
            None => Input::new("", InputType::Any),
        };
        input.items = Some(Box::new(items));
        input
    }

    /// An object: a struct of its `properties`, or without any a map whose values are
    /// `additionalProperties`.
    #[allow(clippy::too_many_arguments)]
    fn object(
        &mut self,
        schema: &'a Value,
        obj: &'a Map<String, Value>,
        ptr: &str,
        path: &str,
        name: &str,
        type_base: &str,
        depth: usize,
    ) -> Input {
        if obj.contains_key("patternProperties") {
            self.warn(
                ptr,
                "`patternProperties` does not map to a Rust type".into(),
            );
            return Input::new("", InputType::Any);
        }
        let has_props = obj
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty());
        let extra = obj.get("additionalProperties");
        if has_props {
            let mut input = Input::new("", InputType::Object);
            let title = obj.get("title").and_then(Value::as_str);
            input.title = title.map(str::to_owned);
            let base = title.map_or_else(|| type_base.to_owned(), ident::type_name);
            input.rust_type = self.type_name(&base, path);
            input.properties = self
                .object_fields(schema, ptr, path, depth)
                .unwrap_or_default();
            if matches!(extra, Some(Value::Object(m)) if !m.is_empty())
                || extra == Some(&Value::Bool(true))
            {
                self.warn(ptr, "the object also allows other keys (`additionalProperties`): the Rust type holds the declared ones only".into());
            }
            return input;
        }
        let mut input = Input::new("", InputType::Map);
        let items = match extra {
            Some(s @ Value::Object(m)) if !m.is_empty() => self.input(
                s,
                &format!("{ptr}/additionalProperties"),
                &format!("{path}[]"),
                name,
                &format!("{type_base}Value"),
                depth + 1,
            ),
            _ => Input::new("", InputType::Any),
        };
        input.items = Some(Box::new(items));
        input
    }
}

/// A `type` union the input cannot be typed from: whether `null` is in it, and, for a union
/// of primitives, their names.
type Untyped = (bool, Vec<String>);

/// The primitive type a schema names, when it is one.
fn primitive(s: &Value) -> Option<&str> {
    s.get("type")
        .and_then(Value::as_str)
        .filter(|t| matches!(*t, "string" | "number" | "integer" | "boolean"))
}

/// Whether `d` is a value of the input's type (a default that is not is left out: the
/// server applies its own).
fn default_fits(input: &Input, d: &Value) -> bool {
    if d.is_null() {
        return false;
    }
    // A default outside the schema's own range would be refused by the call's check.
    if let Some(f) = d.as_f64()
        && (input.minimum.is_some_and(|m| f < m) || input.maximum.is_some_and(|m| f > m))
    {
        return false;
    }
    match input.ty {
        InputType::String => d.is_string(),
        InputType::Number => d.as_f64().is_some_and(f64::is_finite),
        // A generated field is an `i64`: a larger default could not be written into it.
        InputType::Integer => d.is_i64(),
        InputType::Boolean => d.is_boolean(),
        InputType::Enum => d
            .as_str()
            .is_some_and(|s| input.values.iter().any(|v| v.wire == s)),
        // Defaults of structured values stay the server's to apply.
        _ => false,
    }
}

/// An `outputSchema` as output fields, or `None` (the whole output untyped) when it uses
/// what outputs cannot hold (unions, nullable fields, maps of typed values, `$ref`).
pub(crate) fn outputs(schema: &Value) -> Option<Vec<OutputField>> {
    let props = schema.get("properties")?.as_object()?;
    let required = required_of(schema);
    let mut types: Vec<String> = vec!["Output".into()];
    let mut out = Vec::new();
    for (name, s) in props {
        let mut f = output_field(s, name, &ident::type_name(name), &mut types, 1)?;
        f.optional = !required.contains(&name.as_str());
        let base = ident::field_name_or_spelled(name);
        f.rust_name = ident::unique(&base, |c| {
            out.iter().any(|o: &OutputField| o.rust_name == c)
        });
        out.push(f);
    }
    Some(out)
}

fn output_field(
    s: &Value,
    name: &str,
    type_base: &str,
    types: &mut Vec<String>,
    depth: usize,
) -> Option<OutputField> {
    if depth > MAX_DEPTH || s.get("$ref").is_some() {
        return None;
    }
    let ty = match s.get("type")?.as_str()? {
        "string" => match s.get("enum") {
            Some(Value::Array(vals)) => {
                let mut values: Vec<EnumValue> = Vec::new();
                for v in vals {
                    let v = v.as_str()?;
                    let base = ident::variant_name_or_spelled(v);
                    let rust = ident::unique(&base, |c| values.iter().any(|e| e.rust == c));
                    values.push(EnumValue {
                        wire: v.to_owned(),
                        rust,
                    });
                }
                let rust_type = ident::unique(type_base, |c| types.iter().any(|t| t == c));
                types.push(rust_type.clone());
                OutputType::Enum { values, rust_type }
            }
            _ => OutputType::String,
        },
        "number" => OutputType::Number,
        "integer" => OutputType::Integer,
        "boolean" => OutputType::Boolean,
        "array" => {
            let items = s.get("items")?;
            let base = crate::validate::item_type_base(name);
            let mut f = output_field(items, "", &base, types, depth + 1)?;
            f.optional = false;
            OutputType::Array { items: Box::new(f) }
        }
        "object" => {
            let props = s.get("properties").and_then(Value::as_object);
            match props {
                Some(p) if !p.is_empty() => {
                    let required = required_of(s);
                    let rust_type = ident::unique(type_base, |c| types.iter().any(|t| t == c));
                    types.push(rust_type.clone());
                    let mut properties = Vec::new();
                    for (n, ps) in p {
                        let mut f = output_field(ps, n, &ident::type_name(n), types, depth + 1)?;
                        f.optional = !required.contains(&n.as_str());
                        let base = ident::field_name_or_spelled(n);
                        f.rust_name = ident::unique(&base, |c| {
                            properties.iter().any(|o: &OutputField| o.rust_name == c)
                        });
                        properties.push(f);
                    }
                    OutputType::Object {
                        properties,
                        rust_type,
                    }
                }
                _ => OutputType::Object {
                    properties: Vec::new(),
                    rust_type: String::new(),
                },
            }
        }
        _ => return None,
    };
    Some(OutputField {
        name: name.to_owned(),
        rust_name: String::new(),
        description: s
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        ty,
        optional: false,
        pos: Pos::NONE,
        metadata: Default::default(),
    })
}

/// The names a schema's `required` lists.
pub(crate) fn required_of(s: &Value) -> BTreeSet<&str> {
    s.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}
