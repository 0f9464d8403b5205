toolbind::tools!("../fixtures/agent");

fn main() {
    let _ = web_search::Params {
        query: "rust trybuild".into(),
        // Numbers are `f64`: an integer literal does not coerce.
        limit: Some(10),
        mode: web_search::Mode::Fast,
    };
}
