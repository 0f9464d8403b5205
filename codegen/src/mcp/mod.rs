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

mod diff;
mod snapshot;
mod tools;

pub use diff::{Change, diff};
pub use snapshot::{
    FORMAT, ListedToolError, MAX_SNAPSHOT_BYTES, MAX_SNAPSHOT_TOOLS, ServerInfo, Snapshot,
    SnapshotError, SnapshotTool, hash, json_kind,
};
pub use tools::{MAX_PROVIDER_NAME, provider_name, tool_specs};

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::{Value, json};

    use super::*;
    use crate::model::Pos;

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
        assert!(
            dup.unwrap_err()
                .to_string()
                .contains("two tools named `edit_file`")
        );
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
            e.to_string()
                .contains("lists 1001 tools, over the limit of 1000"),
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
