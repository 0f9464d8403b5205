toolbind::tools!("../fixtures/nested-agent");

fn main() {
    let _ = edit_file::Params {
        path: "notes.md".into(),
        edits: vec![edit_file::Edit {
            old_text: "a".into(),
            new_text: "b".into(),
            // `type: integer` is an `i64`: a float does not coerce.
            count: 1.5,
        }],
    };
}
