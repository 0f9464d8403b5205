//! `outputs:`: the typed fields of a result's `details`.

use super::*;

/// TOOL.md `outputs:`: the fields of the result's `details`, each with an input's keys
/// (`type`, `description`, `optional`, `values`) plus `items` (for `type: array`) and
/// `properties` (for `type: object`).
pub(super) fn check_outputs(cx: &mut Ctx<'_>, v: &YNode) -> Vec<OutputField> {
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
pub(super) fn check_properties(
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
pub(super) fn rust_field(
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
pub(super) fn output_type_name(
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
pub(super) fn check_output(
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
        not_an_output_spec(cx, &what, name, spec);
        return None;
    };
    let before = cx.errors();
    let keys = read_output_keys(cx, &what, is_items, entries);
    if !keys.type_seen {
        cx.err(key, format!("{what} has no `type`")).hint =
            Some("add `type:` with one of string, number, boolean, enum, object, array".into());
    }
    if !is_items
        && keys.description.is_none()
        && !entries
            .iter()
            .any(|(k, _)| key_name(k).as_deref() == Some("description"))
    {
        cx.warn(key, format!("{what} has no `description`")).hint = Some(
            "add `description:` saying what the field holds: MCP hosts and the generated docs show it".into(),
        );
    }
    let ty_word = keys.ty_name.as_ref().map(|(t, _)| t.as_str());
    // Keys that belong to another type: ignored, as `values` is on a non-enum input.
    if let Some(t) = ty_word {
        if t != "enum"
            && let Some(vn) = keys.values
        {
            cx.warn(
                vn,
                format!("`values` is ignored: {what} is of type {t}, not enum"),
            )
            .hint = Some("to allow only these values, change `type` to `enum`".into());
        }
        misplaced_structure(cx, &what, t, keys.items, keys.properties);
    }
    let site = OutputSite {
        path,
        name,
        key,
        type_base,
        what: &what,
    };
    let ty = output_type(cx, &site, ty_word, &keys, types);
    if cx.errors() > before {
        return None;
    }
    Some(OutputField {
        name: name.to_owned(),
        rust_name: String::new(),
        description: keys.description.unwrap_or_default(),
        ty: ty?,
        optional: keys.optional,
        pos: key.pos,
        metadata: keys.metadata,
    })
}

/// Where one output spec sits (see [`check_output`]), and how messages name it.
struct OutputSite<'s> {
    path: &'s str,
    name: &'s str,
    key: &'s YNode,
    type_base: &'s str,
    what: &'s str,
}

/// The keys of one output spec as read, each checked on its own.
#[derive(Default)]
struct OutputKeys<'y> {
    ty_name: Option<(String, &'y YNode)>,
    type_seen: bool,
    description: Option<String>,
    optional: bool,
    values: Option<&'y YNode>,
    items: Option<(&'y YNode, &'y YNode)>,
    properties: Option<(&'y YNode, &'y YNode)>,
    metadata: BTreeMap<String, Value>,
}

/// The error for an output spec that is not a mapping, with the fix for what it looks
/// like.
fn not_an_output_spec(cx: &mut Ctx<'_>, what: &str, name: &str, spec: &YNode) {
    let kind = spec.kind();
    if name.is_empty() {
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
                "write `items:` then an indented `type:` line, e.g. `items: {type: string}`".into()
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
}

/// Reads each key of the output spec `entries` of `what`.
fn read_output_keys<'y>(
    cx: &mut Ctx<'_>,
    what: &str,
    is_items: bool,
    entries: &'y [(YNode, YNode)],
) -> OutputKeys<'y> {
    let mut keys = OutputKeys::default();
    for (k, v) in entries {
        let Some(field) = key_name(k) else {
            cx.err(k, "output keys must be strings");
            continue;
        };
        match field.as_str() {
            "type" => {
                keys.type_seen = true;
                keys.ty_name = check_output_type(cx, v).map(|t| (t, v));
            }
            "description" => keys.description = cx.nonempty_string("description", v),
            "optional" => {
                let o = cx.boolean("optional", v).unwrap_or(false);
                if is_items && o {
                    cx.warn(v, format!("`optional` is ignored in {what}: an array's elements are always present"))
                        .hint = Some("to allow a missing or null list, put `optional: true` on the array field itself".into());
                } else {
                    keys.optional = o;
                }
            }
            "values" => keys.values = Some(v),
            "items" => keys.items = Some((k, v)),
            "properties" => keys.properties = Some((k, v)),
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
                &mut keys.metadata,
            ),
        }
    }
    keys
}

/// The output's type from its `type:` word, with what an enum, array or object holds
/// below it checked.
fn output_type(
    cx: &mut Ctx<'_>,
    site: &OutputSite<'_>,
    ty_word: Option<&str>,
    keys: &OutputKeys<'_>,
    types: &mut Vec<(String, String)>,
) -> Option<OutputType> {
    let OutputSite {
        path,
        name,
        key,
        type_base,
        what,
    } = *site;
    match ty_word? {
        "string" => Some(OutputType::String),
        "number" => Some(OutputType::Number),
        "integer" => Some(OutputType::Integer),
        "boolean" => Some(OutputType::Boolean),
        "enum" => match keys.values {
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
        "array" => match keys.items {
            Some((ik, iv)) => {
                let item_path = format!("{path}[]");
                let base = if name.is_empty() {
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
        "object" => {
            let (properties, rust_type) = match keys.properties {
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
    }
}

/// An output's `type`: one of [`OutputType::NAMES`], or an error with a suggestion.
pub(super) fn check_output_type(cx: &mut Ctx<'_>, v: &YNode) -> Option<String> {
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
