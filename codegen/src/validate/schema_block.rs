//! Another format's JSON Schema block (`parameters:`, `input_schema:`, ...) read as the
//! `inputs:` it maps to, and that `inputs:` written back as TOOL.md YAML for the hint.

use super::*;

/// A JSON Schema object as other frameworks' tool folders write it: a mapping with
/// `properties` (a mapping) and, if any, `type: object`.
pub(super) fn is_object_schema(v: &YNode) -> bool {
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
pub(super) fn schema_inputs(
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
pub(super) fn yaml_pos(root: &YNode, ptr: &str) -> Pos {
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
pub(super) fn inputs_yaml(inputs: &[Input], depth: usize, out: &mut String) {
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
pub(super) fn spec_yaml(i: &Input, depth: usize, out: &mut String) {
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
