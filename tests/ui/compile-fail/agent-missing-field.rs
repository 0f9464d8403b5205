toolbind::tools!("../fixtures/agent");

fn main() {
    // `mode` has a default for the model, but Rust code must still say which it wants.
    let _ = web_search::Params {
        query: "rust trybuild".into(),
        limit: None,
    };
}
