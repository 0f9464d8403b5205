toolbind::tools!("../fixtures/agent");

fn main() {
    let _ = web_search::Params {
        query: "rust trybuild".into(),
        limit: None,
        mode: web_search::Mode::Slow,
    };
}
