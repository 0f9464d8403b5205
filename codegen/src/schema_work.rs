//! How much work checking a value against a JSON Schema can take, counted before the
//! check runs: a server's `inputSchema` (or `outputSchema`) is hostile input.
//!
//! A validator evaluates a `$ref` by evaluating its target wherever it is referenced, so a
//! chain of definitions that each reference the next twice (`d0 = allOf [d1, d1]`,
//! `d1 = allOf [d2, d2]`, ...) is a few hundred bytes whose check takes 2^n evaluations:
//! minutes of CPU on a thread nothing can stop. Two bounds, both computed in time linear in
//! what they count (each subschema is counted once, then reused):
//!
//! - [`expanded_size`]: the schema's size with every `$ref` replaced by its target (a
//!   recursive `$ref` counts once), what one value's check may evaluate at each place in
//!   the value. Over [`MAX_EXPANDED`] the schema is refused where it comes in: when a
//!   server's `tools/list` is read (connect, `toolbind mcp snapshot`, `mcp check`) and when
//!   a snapshot file is read.
//! - [`check_work`]: for one value, the evaluations its check may take (each subschema at
//!   each place of the value it applies to, `$ref`s followed). Over [`MAX_CHECK_WORK`] the
//!   value is not checked and the call is refused: the count stops at the budget, so a
//!   recursive schema and a deep value cannot make it large either.
//!
//! Both are upper bounds: a keyword is assumed to apply wherever it could (every
//! `patternProperties` schema to every property, every `anyOf` branch evaluated). A
//! `$ref` is resolved as a validator may resolve it — a JSON pointer against the root and
//! against the embedded resource (`$id`) it is in, an anchor (`$anchor`,
//! `$dynamicAnchor`) wherever it is, a URI against every embedded `$id` it may name — and
//! the costliest candidate counts. One that names nothing in the schema counts one: no
//! validator here fetches it.

use std::collections::HashMap;

use serde_json::{Map, Value};

/// The largest [`expanded_size`] a schema may have: far above real tools' schemas (the
/// largest we know expand to a few thousand subschemas), far below what pins a core.
pub const MAX_EXPANDED: u64 = 100_000;

/// The most evaluations one value's check may take ([`check_work`]): well under a second
/// of a validator's time (the costliest shapes measured, failing `anyOf` chains, take
/// about 0.5 µs an evaluation in a release build: 0.25 s at this bound).
pub const MAX_CHECK_WORK: u64 = 500_000;

/// What one `pattern` match (or one property name against one `patternProperties`
/// pattern) counts for in [`check_work`]: a match may backtrack up to the runtime's limit
/// (10,000 steps, some 20 µs for a pattern with a backreference), about 40 evaluations'
/// time.
pub const PATTERN_COST: u64 = 40;

/// How deep the counting follows subschemas and `$ref`s before refusing: a chain of
/// `$ref`s thousands long would otherwise take the counter's stack, and a validator's.
pub const MAX_NESTING: usize = 512;

/// Why a schema or a check is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TooCostly {
    /// More than the bound: the count reached it (`at_least`).
    Work { at_least: u64, limit: u64 },
    /// Subschemas and `$ref`s nest deeper than [`MAX_NESTING`].
    Nesting,
}

impl std::fmt::Display for TooCostly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TooCostly::Work { at_least, limit } => write!(
                f,
                "checking a value against it takes more than {limit} schema evaluations (at least {at_least}: its `$ref`s multiply; a validator follows each one every time it is referenced)"
            ),
            TooCostly::Nesting => write!(
                f,
                "its subschemas and `$ref`s (and the value's levels, for a check) nest more than {MAX_NESTING} levels deep"
            ),
        }
    }
}

/// The size of `schema` with its `$ref`s expanded (see the module docs); refused over
/// [`MAX_EXPANDED`] or [`MAX_NESTING`].
pub fn expanded_size(schema: &Value) -> Result<u64, TooCostly> {
    Counter::new(schema, MAX_EXPANDED).count(schema, schema, None, 0)
}

/// The evaluations checking `value` against `schema` may take (see the module docs);
/// refused over `budget` or [`MAX_NESTING`].
pub fn check_work(schema: &Value, value: &Value, budget: u64) -> Result<u64, TooCostly> {
    // The common case, at a fraction of the count's cost: without `$ref`s each subschema
    // is evaluated at most once at each place of the value.
    if let Some(nodes) = ref_free_nodes(schema, 0) {
        let bound = nodes.saturating_mul(value_nodes(value, 0));
        if bound <= budget {
            return Ok(bound);
        }
    }
    Counter::new(schema, budget).count(schema, schema, Some(value), 0)
}

/// How many objects and arrays `schema` holds (more than its subschemas), or `None` when
/// it has a `$ref` (or nests deeper than [`MAX_NESTING`]).
fn ref_free_nodes(schema: &Value, depth: usize) -> Option<u64> {
    if depth > MAX_NESTING {
        return None;
    }
    match schema {
        Value::Object(o) => {
            let mut n: u64 = 1;
            for (k, v) in o {
                match k.as_str() {
                    "$ref" | "$dynamicRef" | "$recursiveRef" => return None,
                    "enum" | "const" | "default" | "examples" => {}
                    // A match may backtrack: see `PATTERN_COST`.
                    "pattern" => n = n.saturating_add(PATTERN_COST),
                    "patternProperties" => {
                        let patterns = v.as_object().map_or(0, |p| p.len() as u64);
                        n = n
                            .saturating_add(PATTERN_COST.saturating_mul(patterns))
                            .saturating_add(ref_free_nodes(v, depth + 1)?);
                    }
                    _ => n = n.saturating_add(ref_free_nodes(v, depth + 1)?),
                }
            }
            Some(n)
        }
        Value::Array(a) => {
            let mut n: u64 = 1;
            for v in a {
                n = n.saturating_add(ref_free_nodes(v, depth + 1)?);
            }
            Some(n)
        }
        _ => Some(0),
    }
}

/// How many values `value` holds, itself included (deeper than [`MAX_NESTING`]: more
/// than any budget).
fn value_nodes(value: &Value, depth: usize) -> u64 {
    if depth > MAX_NESTING {
        return u64::MAX;
    }
    match value {
        Value::Object(o) => o
            .values()
            .fold(1, |n: u64, v| n.saturating_add(value_nodes(v, depth + 1))),
        Value::Array(a) => a
            .iter()
            .fold(1, |n: u64, v| n.saturating_add(value_nodes(v, depth + 1))),
        _ => 1,
    }
}

/// Where a subschema applies, relative to the value at hand.
enum Applies<'a> {
    /// To the value itself.
    Here(&'a Value),
    /// To the property of this name.
    Property(&'a str, &'a Value),
    /// To every property's value.
    EachProperty(&'a Value),
    /// To every property's name.
    EachName(&'a Value),
    /// To the item at this index.
    Item(usize, &'a Value),
    /// To every item.
    EachItem(&'a Value),
}

struct Counter<'a> {
    root: &'a Value,
    budget: u64,
    /// `$id` -> the subschema that has it.
    ids: Vec<(&'a str, &'a Value)>,
    /// `$anchor` / `$dynamicAnchor` -> the subschemas that have it, each with the
    /// resource it is in (what the `$ref`s inside it resolve against).
    anchors: HashMap<&'a str, Vec<(&'a Value, &'a Value)>>,
    /// (subschema, value) -> its count; the value is the address of a node of the checked
    /// value (0: no value, the schema's expanded size).
    done: HashMap<(usize, usize), u64>,
    /// Being counted: reached again, it is a recursion, counted once.
    open: std::collections::HashSet<(usize, usize)>,
}

fn addr(v: &Value) -> usize {
    v as *const Value as usize
}

impl<'a> Counter<'a> {
    fn new(root: &'a Value, budget: u64) -> Self {
        let mut c = Counter {
            root,
            budget,
            ids: Vec::new(),
            anchors: HashMap::new(),
            done: HashMap::new(),
            open: Default::default(),
        };
        c.index(root, root, 0);
        c
    }

    /// Every object of the schema that can be a subschema, for `$id`s and anchors;
    /// `resource`: the embedded resource (or the root) `v` is in.
    fn index(&mut self, v: &'a Value, resource: &'a Value, depth: usize) {
        if depth > MAX_NESTING {
            return;
        }
        match v {
            Value::Object(o) => {
                let mut resource = resource;
                // `id`: draft 4. An `$id` of only a fragment is an anchor (drafts 6 and 7).
                for key in ["$id", "id"] {
                    if let Some(Value::String(id)) = o.get(key) {
                        match id.strip_prefix('#') {
                            Some(anchor) => {
                                self.anchors.entry(anchor).or_default().push((v, resource));
                            }
                            None => {
                                self.ids.push((id.as_str(), v));
                                resource = v;
                            }
                        }
                    }
                }
                for key in ["$anchor", "$dynamicAnchor"] {
                    if let Some(Value::String(a)) = o.get(key) {
                        self.anchors
                            .entry(a.as_str())
                            .or_default()
                            .push((v, resource));
                    }
                }
                for (k, child) in o {
                    // Values, not schemas: an `enum` of objects holds no `$id`.
                    if !matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                        self.index(child, resource, depth + 1);
                    }
                }
            }
            Value::Array(items) => {
                for child in items {
                    self.index(child, resource, depth + 1);
                }
            }
            _ => {}
        }
    }

    /// What the `$ref` `r`, met inside the resource `base`, may name, each with the
    /// resource it is in.
    fn resolve(&self, r: &str, base: &'a Value) -> Vec<(&'a Value, &'a Value)> {
        let (uri, fragment) = match r.split_once('#') {
            Some((u, f)) => (u, f),
            None => (r, ""),
        };
        let resources: Vec<&'a Value> = if uri.is_empty() {
            vec![base, self.root]
        } else {
            let uri = uri.trim_end_matches('/');
            self.ids
                .iter()
                .filter(|(id, _)| {
                    let id = id.split('#').next().unwrap_or("").trim_end_matches('/');
                    !id.is_empty() && (id.ends_with(uri) || uri.ends_with(id))
                })
                .map(|(_, v)| *v)
                .collect()
        };
        if fragment.is_empty() {
            return resources.into_iter().map(|res| (res, res)).collect();
        }
        if fragment.starts_with('/') {
            let pointer = percent_decoded(fragment);
            return resources
                .iter()
                .filter_map(|res| Some((res.pointer(&pointer)?, *res)))
                .collect();
        }
        self.anchors.get(fragment).cloned().unwrap_or_default()
    }

    fn spend(&self, n: u64) -> Result<u64, TooCostly> {
        if n > self.budget {
            Err(TooCostly::Work {
                at_least: n,
                limit: self.budget,
            })
        } else {
            Ok(n)
        }
    }

    /// The count of `schema` (inside resource `base`) at `value` (`None`: its expanded
    /// size).
    fn count(
        &mut self,
        schema: &'a Value,
        base: &'a Value,
        value: Option<&'a Value>,
        depth: usize,
    ) -> Result<u64, TooCostly> {
        let Value::Object(obj) = schema else {
            return Ok(1);
        };
        if depth > MAX_NESTING {
            return Err(TooCostly::Nesting);
        }
        let key = (addr(schema), value.map_or(0, addr));
        if let Some(n) = self.done.get(&key) {
            return Ok(*n);
        }
        if !self.open.insert(key) {
            return Ok(1);
        }
        let base = if obj.get("$id").is_some_and(Value::is_string) {
            schema
        } else {
            base
        };
        let result = self.count_object(obj, base, value, depth);
        self.open.remove(&key);
        let n = result?;
        self.done.insert(key, n);
        Ok(n)
    }

    /// The count of `schema` at each of `children`, stopping at the budget as it goes
    /// (`spent`: what the enclosing object has counted so far).
    fn count_each(
        &mut self,
        schema: &'a Value,
        base: &'a Value,
        children: impl Iterator<Item = &'a Value>,
        depth: usize,
        spent: u64,
    ) -> Result<u64, TooCostly> {
        let mut n: u64 = 0;
        for child in children {
            n = n.saturating_add(self.count(schema, base, Some(child), depth + 1)?);
            self.spend(spent.saturating_add(n))?;
        }
        Ok(n)
    }

    fn count_object(
        &mut self,
        obj: &'a Map<String, Value>,
        base: &'a Value,
        value: Option<&'a Value>,
        depth: usize,
    ) -> Result<u64, TooCostly> {
        let mut total: u64 = 1 + pattern_cost(obj, value);
        for (k, v) in obj {
            for applies in applicators(k, v) {
                let n = match applies {
                    Applies::Here(s) => self.count(s, base, value, depth + 1)?,
                    Applies::Property(name, s) => match value {
                        None => self.count(s, base, None, depth + 1)?,
                        Some(Value::Object(o)) => match o.get(name) {
                            Some(child) => self.count(s, base, Some(child), depth + 1)?,
                            None => 0,
                        },
                        Some(_) => 0,
                    },
                    Applies::EachProperty(s) => match value {
                        None => self.count(s, base, None, depth + 1)?,
                        Some(Value::Object(o)) => {
                            self.count_each(s, base, o.values(), depth, total)?
                        }
                        Some(_) => 0,
                    },
                    Applies::EachName(s) => {
                        // Each name is a string the schema's `pattern` may be matched on.
                        let pattern = if s.get("pattern").is_some() {
                            PATTERN_COST
                        } else {
                            0
                        };
                        let one = self.count(s, base, None, depth + 1)? + pattern;
                        match value {
                            None => one,
                            Some(Value::Object(o)) => one.saturating_mul(o.len() as u64),
                            Some(_) => 0,
                        }
                    }
                    Applies::Item(i, s) => match value {
                        None => self.count(s, base, None, depth + 1)?,
                        Some(Value::Array(items)) => match items.get(i) {
                            Some(child) => self.count(s, base, Some(child), depth + 1)?,
                            None => 0,
                        },
                        Some(_) => 0,
                    },
                    Applies::EachItem(s) => match value {
                        None => self.count(s, base, None, depth + 1)?,
                        Some(Value::Array(items)) => {
                            self.count_each(s, base, items.iter(), depth, total)?
                        }
                        Some(_) => 0,
                    },
                };
                total = self.spend(total.saturating_add(n))?;
            }
            if matches!(k.as_str(), "$ref" | "$dynamicRef" | "$recursiveRef")
                && let Value::String(r) = v
            {
                let mut most = 0;
                for (target, resource) in self.resolve(r, base) {
                    most = most.max(self.count(target, resource, value, depth + 1)?);
                }
                total = self.spend(total.saturating_add(most))?;
            }
        }
        Ok(total)
    }
}

/// The subschemas keyword `k` (with value `v`) applies, and where.
fn applicators<'a>(k: &str, v: &'a Value) -> Vec<Applies<'a>> {
    let each = |v: &'a Value| -> Vec<&'a Value> {
        match v {
            Value::Array(a) => a.iter().collect(),
            _ => Vec::new(),
        }
    };
    let values = |v: &'a Value| -> Vec<(&'a str, &'a Value)> {
        match v {
            Value::Object(o) => o.iter().map(|(k, v)| (k.as_str(), v)).collect(),
            _ => Vec::new(),
        }
    };
    match k {
        "allOf" | "anyOf" | "oneOf" => each(v).into_iter().map(Applies::Here).collect(),
        "not" | "if" | "then" | "else" => vec![Applies::Here(v)],
        // `dependencies`' array form names properties: not schemas, counted as one.
        "dependentSchemas" | "dependencies" => values(v)
            .into_iter()
            .map(|(_, s)| Applies::Here(s))
            .collect(),
        "properties" => values(v)
            .into_iter()
            .map(|(name, s)| Applies::Property(name, s))
            .collect(),
        "patternProperties" => values(v)
            .into_iter()
            .map(|(_, s)| Applies::EachProperty(s))
            .collect(),
        "additionalProperties" | "unevaluatedProperties" => vec![Applies::EachProperty(v)],
        "propertyNames" => vec![Applies::EachName(v)],
        "prefixItems" => each(v)
            .into_iter()
            .enumerate()
            .map(|(i, s)| Applies::Item(i, s))
            .collect(),
        // Draft 2019-09 and before: `items` as an array is by position.
        "items" if v.is_array() => each(v)
            .into_iter()
            .enumerate()
            .map(|(i, s)| Applies::Item(i, s))
            .collect(),
        "items" | "additionalItems" | "unevaluatedItems" | "contains" => {
            vec![Applies::EachItem(v)]
        }
        _ => Vec::new(),
    }
}

/// A JSON pointer fragment as the pointer it names (`%25` is `%`).
fn percent_decoded(fragment: &str) -> String {
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(Ok(b)) = fragment
                .get(i + 1..i + 3)
                .map(|h| u8::from_str_radix(h, 16))
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The regular-expression matches a check of `value` against `obj` runs, in evaluations
/// ([`PATTERN_COST`] each); none for the expanded size (`value` is `None`), which bounds
/// the schema alone.
fn pattern_cost(obj: &Map<String, Value>, value: Option<&Value>) -> u64 {
    let Some(value) = value else {
        return 0;
    };
    let mut n: u64 = 0;
    if obj.contains_key("pattern") && value.is_string() {
        n = PATTERN_COST;
    }
    if let (Some(Value::Object(patterns)), Value::Object(o)) = (obj.get("patternProperties"), value)
    {
        let matches = (patterns.len() as u64).saturating_mul(o.len() as u64);
        n = n.saturating_add(PATTERN_COST.saturating_mul(matches));
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `d0 = kw [d1, d1]`, ..., `d(n-1) = kw [dn, dn]`, `dn` a string.
    pub(crate) fn chain(n: usize, kw: &str) -> Value {
        let mut defs = Map::new();
        for i in 0..n {
            let next = format!("#/$defs/d{}", i + 1);
            defs.insert(
                format!("d{i}"),
                json!({kw: [{"$ref": next}, {"$ref": next}]}),
            );
        }
        defs.insert(format!("d{n}"), json!({"type": "string"}));
        json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs})
    }

    #[test]
    fn plain_schemas_count_their_size() {
        let s = json!({"type": "object", "properties": {
            "a": {"type": "string"},
            "b": {"type": "array", "items": {"type": "number"}}}});
        assert_eq!(expanded_size(&s), Ok(4));
        let value = json!({"a": "x", "b": [1, 2, 3]});
        let counted = Counter::new(&s, 100).count(&s, &s, Some(&value), 0);
        assert_eq!(counted, Ok(6));
        // A property the value does not have costs nothing.
        let empty = json!({});
        assert_eq!(Counter::new(&s, 100).count(&s, &s, Some(&empty), 0), Ok(1));
        // Without `$ref`s, a quicker bound first: the schema's nodes times the value's.
        assert_eq!(check_work(&s, &value, 100), Ok(5 * 6));
        // Counted when that bound is over the budget.
        assert_eq!(check_work(&s, &value, 10), Ok(6));
    }

    #[test]
    fn a_ref_counts_its_target_each_time_it_is_referenced() {
        let s = chain(3, "allOf");
        // 1 root + x (1 + d0), d0 = 1 + 2 (1 + d1) ...
        let n = expanded_size(&s).unwrap();
        assert!(n > 8 && n < 100, "{n}");
        assert!(expanded_size(&chain(12, "allOf")).unwrap() > 4096);
    }

    #[test]
    fn ref_bombs_are_refused_quickly_whatever_their_shape() {
        let fan_out = {
            let mut defs = Map::new();
            for i in 0..12 {
                let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
                let props: Map<String, Value> =
                    (0..10).map(|p| (format!("p{p}"), next.clone())).collect();
                defs.insert(
                    format!("d{i}"),
                    json!({"type": "object", "properties": props}),
                );
            }
            defs.insert("d12".into(), json!({}));
            json!({"$ref": "#/$defs/d0", "$defs": defs})
        };
        let anchored = json!({"$ref": "#a0", "$defs": (0..60).map(|i| (format!("d{i}"),
            json!({"$anchor": format!("a{i}"), "anyOf": [{"$ref": format!("#a{}", i + 1)}, {"$ref": format!("#a{}", i + 1)}]})))
            .collect::<Map<String, Value>>()});
        let by_id = json!({"$ref": "urn:d0", "$defs": (0..60).map(|i| (format!("d{i}"),
            json!({"$id": format!("urn:d{i}"), "oneOf": [{"$ref": format!("urn:d{}", i + 1)}, {"$ref": format!("urn:d{}", i + 1)}]})))
            .collect::<Map<String, Value>>()});
        // Inside an embedded resource, `#/...` names that resource's parts.
        let nested = json!({"$ref": "urn:inner#/$defs/d0", "$defs": {"inner": {
            "$id": "urn:inner", "$defs": chain(60, "anyOf")["$defs"].clone()}}});
        for (what, s) in [
            ("nested resource", nested),
            ("allOf", chain(60, "allOf")),
            ("anyOf", chain(60, "anyOf")),
            ("properties", fan_out),
            ("anchors", anchored),
            ("$id", by_id),
        ] {
            let e = expanded_size(&s).unwrap_err();
            assert!(
                matches!(
                    e,
                    TooCostly::Work {
                        limit: MAX_EXPANDED,
                        ..
                    }
                ),
                "{what}: {e:?}"
            );
        }
    }

    #[test]
    fn recursion_counts_once_statically_and_by_the_value_at_a_call() {
        let tree = json!({"type": "object", "properties": {
            "left": {"$ref": "#"}, "right": {"$ref": "#"}, "v": {"type": "number"}}});
        assert!(expanded_size(&tree).unwrap() < 20);
        let mut deep = json!({"v": 1});
        for _ in 0..100 {
            deep = json!({"left": deep, "right": {"v": 2}});
        }
        let work = check_work(&tree, &deep, MAX_CHECK_WORK).unwrap();
        assert!(work < 5_000, "{work}");
        // A recursion that doubles at each level of the value is refused by the budget.
        let doubling = json!({"anyOf": [
            {"type": "object", "properties": {"a": {"$ref": "#"}}},
            {"type": "object", "properties": {"a": {"$ref": "#"}}}]});
        assert!(expanded_size(&doubling).is_ok());
        let mut deep = json!(1);
        for _ in 0..60 {
            deep = json!({"a": deep});
        }
        assert!(check_work(&doubling, &deep, MAX_CHECK_WORK).is_err());
    }

    #[test]
    fn a_long_ref_chain_is_refused_not_a_stack_overflow() {
        let defs: Map<String, Value> = (0..100_000)
            .map(|i| {
                (
                    format!("d{i}"),
                    json!({"$ref": format!("#/$defs/d{}", i + 1)}),
                )
            })
            .collect();
        let s = json!({"$ref": "#/$defs/d0", "$defs": defs});
        assert_eq!(expanded_size(&s), Err(TooCostly::Nesting));
    }

    #[test]
    fn many_items_against_a_large_schema_exhaust_the_budget_not_the_cpu() {
        // Each item costs about 2^11 evaluations: a few hundred exhaust the budget.
        let mut s = chain(10, "allOf");
        s["type"] = json!("array");
        s["items"] = json!({"$ref": "#/$defs/d0"});
        assert!(check_work(&s, &Value::Array(vec![json!("y"); 100]), MAX_CHECK_WORK).is_ok());
        let value = Value::Array(vec![json!("y"); 100_000]);
        assert!(check_work(&s, &value, MAX_CHECK_WORK).is_err());
    }

    /// A pattern match may backtrack (up to the runtime's limit): an array of strings
    /// against a pattern costs [`PATTERN_COST`] each, so a long one exhausts the budget.
    #[test]
    fn pattern_matches_count_for_their_backtracking() {
        let s = json!({"type": "array", "items": {"type": "string", "pattern": "^(a|a)*\\1$"}});
        let few = Value::Array(vec![json!("aaab"); 10]);
        let work = check_work(&s, &few, MAX_CHECK_WORK).unwrap();
        assert!(work >= 10 * PATTERN_COST, "{work}");
        let many = Value::Array(vec![json!("aaab"); 20_000]);
        assert!(check_work(&s, &many, MAX_CHECK_WORK).is_err());
        let names = json!({"type": "object", "patternProperties": {"^a": {}, "^b": {}}});
        let obj: Map<String, Value> = (0..10).map(|i| (format!("k{i}"), json!(1))).collect();
        let work = check_work(&names, &Value::Object(obj.clone()), MAX_CHECK_WORK).unwrap();
        assert!(work >= 20 * PATTERN_COST, "{work}");
        let named = json!({"type": "object", "propertyNames": {"pattern": "^(a|a)*\\1$"},
            "properties": {"x": {"$ref": "#/$defs/y"}}, "$defs": {"y": {}}});
        let work = check_work(&named, &Value::Object(obj), MAX_CHECK_WORK).unwrap();
        assert!(work >= 10 * PATTERN_COST, "{work}");
    }
}
