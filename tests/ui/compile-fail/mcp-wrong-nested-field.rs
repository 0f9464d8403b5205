//! A field the MCP server's schema does not have, inside a nested object, is a compile
//! error: the bindings come from the real filesystem server's snapshot.
toolbind::tools!("../fixtures/mcp/filesystem.json");

fn main() {
    let _ = filesystem::edit_file::Params {
        path: "notes.md".into(),
        edits: vec![filesystem::edit_file::Edit {
            old_txt: "a".into(),
            new_text: "b".into(),
        }],
        dry_run: false,
    };
}
