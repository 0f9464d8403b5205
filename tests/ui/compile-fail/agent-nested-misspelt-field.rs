toolbind::tools!("../fixtures/nested-agent");

fn main() {
    let _ = edit_file::Params {
        path: "notes.md".into(),
        edits: vec![edit_file::Edit {
            old_txt: "a".into(),
            new_text: "b".into(),
            count: 1,
        }],
    };
}
