//! What changed between two snapshots of a server: tools added or removed, contracts and
//! docs changed, each change named down to the schema keyword.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value};

use crate::from_schema::required_of;

use super::snapshot::{Snapshot, without_docs};

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
