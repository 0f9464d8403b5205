//! `inputs:`: each parameter's spec, nested objects and arrays included.

use super::*;

pub(super) fn check_inputs(cx: &mut Ctx<'_>, v: &YNode, opts: &Options) -> Vec<Input> {
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
pub(super) const GENERATED_TYPES: &[&str] = &["Params", "Tool"];

/// The fields of `inputs:` (`parent` empty, `depth` 2: the arguments object is the first
/// level) or of an object input's `properties:`.
pub(super) fn check_fields(
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
        let site = Site {
            path: &path,
            name: &name,
            key: k,
            depth,
            type_base: &base,
        };
        let Some(input) = check_input(cx, &site, spec, opts, types) else {
            continue;
        };
        inputs.push(Input { rust_name, ..input });
    }
    inputs
}

/// A Rust type name for the enum or object input at `path`, unique in the tool's module (a
/// numbered fallback, with a warning, when two would share one).
pub(super) fn input_type_name(
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
pub(super) fn yaml_number(node: &YNode) -> Option<f64> {
    match &node.value {
        YValue::UInt(u) => Some(*u as f64),
        YValue::Int(i) => Some(*i as f64),
        YValue::Float(f) if f.is_finite() => Some(*f),
        _ => None,
    }
}

/// Where one input spec sits: a named field (`name` non-empty; `path` is `a.b` for a nested
/// one) or the `items` of an array (`name` empty, `key` the `items` key, `path` ending in
/// `[]`). `depth` is the level of nesting of its value (2 for a parameter); `type_base` the
/// Rust type name an enum or object here would get without a `title`.
pub(super) struct Site<'s> {
    pub(super) path: &'s str,
    pub(super) name: &'s str,
    pub(super) key: &'s YNode,
    pub(super) depth: usize,
    pub(super) type_base: &'s str,
}

impl Site<'_> {
    fn is_items(&self) -> bool {
        self.name.is_empty()
    }

    /// How messages name it: "input `a.b`", "`items` of `a`".
    fn what(&self) -> String {
        if self.is_items() {
            format!("`items` of `{}`", self.path.trim_end_matches("[]"))
        } else {
            format!("input `{}`", self.path)
        }
    }
}

/// The keys of one input spec as read, each checked on its own.
#[derive(Default)]
struct SpecKeys<'y> {
    ty: Option<InputType>,
    type_seen: bool,
    description: Option<String>,
    description_seen: bool,
    optional: bool,
    /// `required:` (another format's spelling), with its value.
    required: Option<(&'y YNode, bool)>,
    sensitive: bool,
    title: Option<String>,
    values: Option<&'y YNode>,
    default: Option<&'y YNode>,
    items: Option<(&'y YNode, &'y YNode)>,
    properties: Option<(&'y YNode, &'y YNode)>,
    /// `minimum`, `maximum`.
    bounds: [Option<(f64, &'y YNode)>; 2],
    /// `min_items`, `max_items`.
    counts: [Option<(u64, &'y YNode)>; 2],
    metadata: BTreeMap<String, Value>,
}

/// What an enum, object or array spec holds below it.
#[derive(Default)]
struct Structure {
    values: Vec<EnumValue>,
    properties: Vec<Input>,
    items: Option<Box<Input>>,
    rust_type: String,
}

/// One input spec at `site` (see [`Site`]), checked: every error of it reported, `None`
/// when there was one.
pub(super) fn check_input(
    cx: &mut Ctx<'_>,
    site: &Site<'_>,
    spec: &YNode,
    opts: &Options,
    types: &mut Vec<(String, String)>,
) -> Option<Input> {
    let Some(entries) = map_entries(spec) else {
        not_a_spec(cx, site, spec);
        return None;
    };
    let before = cx.errors();
    let what = site.what();
    let mut keys = read_spec_keys(cx, &what, entries);
    let optional = presence_and_optional(cx, site, &keys, entries);
    if let Some(t) = keys.ty {
        drop_misplaced(cx, site, t, &mut keys);
    }
    bounds_in_order(cx, &what, &keys);
    let nests = matches!(keys.ty, Some(InputType::Object | InputType::Array));
    if nests && site.depth > MAX_DEPTH {
        let depth = site.depth;
        cx.err(site.key, format!("{what} is nested {depth} levels deep (the arguments object being the first): at most {MAX_DEPTH} are allowed"))
            .hint = Some("OpenAI's strict mode refuses deeper schemas; flatten the structure or pass the deep part as a JSON string".into());
    }
    let below = structure(cx, site, &keys, opts, types);
    if cx.errors() > before {
        return None;
    }
    let mut input = Input::new(site.name, keys.ty?);
    input.rust_type = below.rust_type;
    input.title = keys.title;
    input.description = keys.description.unwrap_or_default();
    input.optional = optional;
    input.sensitive = keys.sensitive;
    input.values = below.values;
    input.properties = below.properties;
    input.items = below.items;
    if keys.sensitive {
        secret_throughout(cx, site, &mut input);
    }
    input.minimum = keys.bounds[0].map(|(n, _)| n);
    input.maximum = keys.bounds[1].map(|(n, _)| n);
    input.min_items = keys.counts[0].map(|(n, _)| n);
    input.max_items = keys.counts[1].map(|(n, _)| n);
    input.pos = site.key.pos;
    input.metadata = keys.metadata;
    input.default = keys
        .default
        .and_then(|d| check_input_default(cx, site, &input, d));
    if cx.errors() > before {
        return None;
    }
    if input.holds_sensitive()
        && input.default.is_some()
        && let Some(d) = keys.default
    {
        cx.warn(d, format!("sensitive {what} has a default: it is applied at run time only"))
            .hint = Some("it is never written into schemas, prompts, docs or generated code; a secret is better read from an environment variable in the tool".into());
    }
    Some(input)
}

/// The error for a spec that is not a mapping, with the fix for what it looks like.
fn not_a_spec(cx: &mut Ctx<'_>, site: &Site<'_>, spec: &YNode) {
    let kind = spec.kind();
    let what = site.what();
    if site.is_items() {
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
            "write `{}:` then indented `type: string` and `description: ...` lines",
            site.name
        ));
    }
}

/// Reads each key of the spec `entries` of `what`.
fn read_spec_keys<'y>(cx: &mut Ctx<'_>, what: &str, entries: &'y [(YNode, YNode)]) -> SpecKeys<'y> {
    let mut keys = SpecKeys::default();
    for (k, v) in entries {
        let Some(field) = key_name(k) else {
            cx.err(k, "input keys must be strings");
            continue;
        };
        match field.as_str() {
            "type" => {
                keys.type_seen = true;
                keys.ty = check_type(cx, v);
            }
            "description" => {
                keys.description_seen = true;
                keys.description = cx.nonempty_string("description", v);
            }
            "optional" => keys.optional = cx.boolean("optional", v).unwrap_or(false),
            // Other formats' spelling of the inverse of `optional`.
            "required" => keys.required = cx.boolean("required", v).map(|r| (v, r)),
            "sensitive" => keys.sensitive = cx.boolean("sensitive", v).unwrap_or(false),
            "title" => keys.title = cx.nonempty_string("title", v),
            "values" => keys.values = Some(v),
            "default" => keys.default = Some(v),
            "items" => keys.items = Some((k, v)),
            "properties" => keys.properties = Some((k, v)),
            "minimum" | "maximum" => {
                let slot = usize::from(field == "maximum");
                match yaml_number(v) {
                    Some(n) => keys.bounds[slot] = Some((n, v)),
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
                    YValue::UInt(u) => keys.counts[slot] = Some((*u, v)),
                    YValue::Int(i) if *i >= 0 => keys.counts[slot] = Some((*i as u64, v)),
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
                &mut keys.metadata,
            ),
        }
    }
    keys
}

/// `type` and `description` are required (`description` not in `items`); whether the
/// input is optional, from `optional:` and another format's `required:`.
fn presence_and_optional(
    cx: &mut Ctx<'_>,
    site: &Site<'_>,
    keys: &SpecKeys<'_>,
    entries: &[(YNode, YNode)],
) -> bool {
    let what = site.what();
    if !keys.type_seen {
        cx.err(site.key, format!("{what} has no `type`")).hint =
            Some(format!("add `type:` with one of {}", TYPE_NAMES.join(", ")));
    }
    if !keys.description_seen && !site.is_items() {
        cx.err(site.key, format!("{what} has no `description`"))
            .hint =
            Some("add `description:` saying what the parameter is for; the model reads it".into());
    }
    let mut optional = keys.optional;
    if let Some((rn, r)) = keys.required {
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
    if site.is_items() && optional {
        cx.warn(
            site.key,
            format!("`optional` is ignored in {what}: an array's elements are always present"),
        );
        optional = false;
    }
    optional
}

/// Keys that belong to another type than `t`: ignored (dropped from `keys`), with a
/// warning saying what to do.
fn drop_misplaced(cx: &mut Ctx<'_>, site: &Site<'_>, t: InputType, keys: &mut SpecKeys<'_>) {
    let what = site.what();
    if t != InputType::Enum
        && let Some(vn) = keys.values
    {
        let any = t.json_type().unwrap_or("value");
        let msg = if site.is_items() {
            format!("`values` is ignored: {what} are of type {t}, so any {any} is accepted")
        } else {
            format!(
                "`values` is ignored: `{}` is a {t} input, so any {any} is accepted",
                site.path
            )
        };
        cx.warn(vn, msg).hint = Some("to allow only these values, change `type` to `enum`".into());
    }
    misplaced_structure(cx, &what, t.as_str(), keys.items, keys.properties);
    if !matches!(t, InputType::Number | InputType::Integer) {
        for (_, node) in keys.bounds.iter().flatten() {
            cx.warn(
                node,
                format!(
                    "`minimum`/`maximum` is ignored: {what} is of type {t}, not number or integer"
                ),
            );
        }
        keys.bounds = [None, None];
    }
    if t != InputType::Array {
        for (_, node) in keys.counts.iter().flatten() {
            cx.warn(
                node,
                format!("`min_items`/`max_items` is ignored: {what} is of type {t}, not array"),
            );
        }
        keys.counts = [None, None];
    }
}

/// `maximum` not below `minimum`, `max_items` not below `min_items`.
fn bounds_in_order(cx: &mut Ctx<'_>, what: &str, keys: &SpecKeys<'_>) {
    if let [Some((lo, _)), Some((hi, hn))] = keys.bounds
        && lo > hi
    {
        cx.err(hn, format!("`maximum` of {what} is below its `minimum`"));
    }
    if let [Some((lo, _)), Some((hi, hn))] = keys.counts
        && lo > hi
    {
        cx.err(
            hn,
            format!("`max_items` of {what} is below its `min_items`"),
        );
    }
}

/// What an enum (its values), object (its fields) or array (its items) holds, checked,
/// with the Rust type name it gets.
fn structure(
    cx: &mut Ctx<'_>,
    site: &Site<'_>,
    keys: &SpecKeys<'_>,
    opts: &Options,
    types: &mut Vec<(String, String)>,
) -> Structure {
    let what = site.what();
    let (path, key) = (site.path, site.key);
    let rust_base = keys
        .title
        .as_deref()
        .map_or_else(|| site.type_base.to_owned(), ident::type_name);
    let mut out = Structure::default();
    match keys.ty {
        Some(InputType::Enum) => match keys.values {
            Some(vn) => {
                out.values = check_values(cx, path, vn);
                out.rust_type = input_type_name(cx, key, path, &rust_base, true, types);
            }
            None => {
                cx.err(key, format!("enum {what} has no `values`")).hint =
                    Some("add `values: first,second` (comma-separated) or a YAML list".into());
            }
        },
        Some(InputType::Object) if site.depth <= MAX_DEPTH => {
            let hint = "add `properties:` then one indented `field_name:` block per field, with `type:` and `description:`; for free-form data, take a `type: string` holding JSON";
            match keys.properties.map(|(pk, pv)| (pk, pv, &pv.value)) {
                Some((_, _, YValue::Map(m))) if !m.is_empty() => {
                    out.rust_type = input_type_name(cx, key, path, &rust_base, false, types);
                    out.properties = check_fields(cx, m, path, site.depth + 1, opts, types);
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
        Some(InputType::Array) if site.depth <= MAX_DEPTH => match keys.items {
            Some((ik, iv)) => {
                let base = if site.is_items() {
                    format!("{}Item", site.type_base)
                } else {
                    item_type_base(site.name)
                };
                let item = Site {
                    path: &format!("{path}[]"),
                    name: "",
                    key: ik,
                    depth: site.depth + 1,
                    type_base: &base,
                };
                out.items = check_input(cx, &item, iv, opts, types).map(Box::new);
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
    out
}

/// Everything inside a secret is secret: its fields' defaults, values and errors.
fn secret_throughout(cx: &mut Ctx<'_>, site: &Site<'_>, input: &mut Input) {
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
        let what = site.what();
        cx.warn(site.key, format!("sensitive {what} holds fields with defaults ({}): they are applied at run time only", defaulted.join(", ")))
            .hint = Some("they are never written into schemas, prompts, docs or generated code".into());
    }
}

/// The input's `default:` `d`, checked against the input (`null`: no default).
fn check_input_default(
    cx: &mut Ctx<'_>,
    site: &Site<'_>,
    input: &Input,
    d: &YNode,
) -> Option<Value> {
    let what = site.what();
    match d {
        d if matches!(d.value, YValue::Null) => None,
        d if site.is_items() => {
            cx.warn(
                d,
                format!("`default` is ignored in {what}: an array's elements are always given"),
            );
            None
        }
        d if input.ty.is_scalar() => check_default(cx, site.path, input.ty, &input.values, d)
            .and_then(|v| match value_problem(input, &v) {
                None => Some(v),
                Some(p) => {
                    cx.err(d, format!("default of {what} {p}"));
                    None
                }
            }),
        d => {
            let v = to_json(d);
            match value_problem(input, &v) {
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
    }
}

/// `items:` on a spec that is not an array, `properties:` on one that is not an object (of
/// type `ty`): ignored, with a warning saying where they belong. Inputs and outputs alike.
pub(super) fn misplaced_structure(
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

pub(super) fn check_type(cx: &mut Ctx<'_>, v: &YNode) -> Option<InputType> {
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
